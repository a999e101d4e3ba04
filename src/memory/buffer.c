/*
 * memory/buffer.c: reference-counted memory and memory-kind discovery.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cuda/driver.h"
#include "memory/ipc.h"
#include "memory/memory.h"
#include "strided/buffer.h"

struct strided_buffer {
    atomic_long refs;
    void *ptr;
    size_t size;
    strided_memory_info info;
    /* How the memory goes: through mr (which the buffer holds a reference
     * to), through release, or not at all. */
    strided_memory_resource *mr;
    _Atomic(void *) stream;
    strided_release_fn release;
    void *context;
    /* The buffer's IPC descriptor once exported (ipc.c): the same for the
     * buffer's life, and a pool allocation's export costs the driver ~0.1
     * ms. */
    _Atomic(unsigned char *) ipc_descriptor;
};

static strided_memory_info host_info(void)
{
    strided_memory_info info = {STRIDED_MEMORY_HOST, -1, true, false, false, false, 0};
    return info;
}

/* Can the device that would run work now (the current context's, else
 * device 0) read pageable memory directly (HMM / ATS)? */
static bool pageable_access(const strided__driver *cu)
{
    CUdevice dev = 0;
    CUcontext ctx = NULL;
    int value = 0;
    if (cu->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != NULL)
        cu->cuCtxGetDevice(&dev);
    else if (cu->cuDeviceGet(&dev, 0) != CUDA_SUCCESS)
        return false;
    return cu->cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev) ==
               CUDA_SUCCESS &&
           value == 1;
}

strided_status strided_memory_info_query(const void *ptr, strided_memory_info *out)
{
    const char *op = "memory_info";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    /* A process whose driver cannot be loaded or initialized has no CUDA
     * memory: everything is plain host memory. */
    const strided__driver *cu = strided__cuda_quiet();
    if (cu == NULL) {
        *out = host_info();
        return STRIDED_OK;
    }
    /* One query for everything. Integer attributes are written as 4 bytes;
     * pointer-sized ones as 8. The driver answers unknown pointers (and
     * NULL) with memory type 0 rather than an error. */
    unsigned int memory_type = 0;
    int is_managed = 0, ordinal = -2;
    CUdeviceptr device_pointer = 0;
    CUmemoryPool pool = NULL;
    CUpointer_attribute attributes[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE};
    void *data[] = {&memory_type, &is_managed, &ordinal, &device_pointer, &pool};
    strided_status status = STRIDED_CUDA_CHECK(
        op, cu->cuPointerGetAttributes(5, attributes, data, (CUdeviceptr)(uintptr_t)ptr));
    if (status != STRIDED_OK)
        return status;
    strided_memory_info info = host_info();
    uintptr_t address = (uintptr_t)ptr;
    info.pooled = pool != NULL;
    if (memory_type == 0) {
        /* Unregistered host memory: device-accessible only where the
         * device reads pageable memory. */
        info.device_accessible = pageable_access(cu);
        info.device_address = info.device_accessible ? address : 0;
    } else if (is_managed) {
        /* Managed memory reports MEMORY_TYPE DEVICE: test it first. */
        info.kind = STRIDED_MEMORY_MANAGED;
        info.device_accessible = info.managed = true;
        info.device_id = ordinal;
        info.device_address = address;
    } else if (memory_type == CU_MEMORYTYPE_HOST) {
        /* Page-locked host memory: the device may reach it at another
         * address; pinned pools report 0, meaning the host address. */
        info.kind = STRIDED_MEMORY_PINNED;
        info.device_accessible = true;
        info.device_id = ordinal;
        info.device_address = device_pointer != 0 ? (uintptr_t)device_pointer : address;
    } else if (memory_type == CU_MEMORYTYPE_DEVICE) {
        info.kind = STRIDED_MEMORY_DEVICE;
        info.host_accessible = false;
        info.device_accessible = true;
        info.device_id = ordinal;
        info.device_address = address;
    } else {
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "Unsupported memory type: %u",
                             memory_type);
    }
    *out = info;
    return STRIDED_OK;
}

/* The memory kind of a resource's allocation, from its properties. */
static strided_memory_info resource_info(const strided_memory_resource *mr, void *ptr)
{
    strided_memory_resource_props p = strided_memory_resource_properties(mr);
    strided_memory_info info = {STRIDED_MEMORY_HOST,
                                p.device_id,
                                p.host_accessible,
                                p.device_accessible,
                                p.managed,
                                p.pooled,
                                0};
    if (p.managed)
        info.kind = STRIDED_MEMORY_MANAGED;
    else if (p.host_accessible && p.device_accessible)
        info.kind = STRIDED_MEMORY_PINNED;
    else if (p.device_accessible)
        info.kind = STRIDED_MEMORY_DEVICE;
    info.device_address = p.device_accessible ? (uintptr_t)ptr : 0;
    return info;
}

/* A buffer with one reference, or NULL when it cannot be allocated. */
static strided_buffer *new_buffer(void *ptr, size_t size, strided_memory_info info)
{
    strided_buffer *b = strided__malloc(sizeof *b);
    if (b == NULL)
        return NULL;
    atomic_init(&b->refs, 1);
    b->ptr = ptr;
    b->size = size;
    b->info = info;
    b->mr = NULL;
    atomic_init(&b->stream, NULL);
    b->release = NULL;
    b->context = NULL;
    atomic_init(&b->ipc_descriptor, NULL);
    return b;
}

/* The memory a buffer stands for must be a range of the address space that
 * int64 offsets reach: at most INT64_MAX bytes, not wrapping past the top
 * (else every pointer derived from it would wrap to a small number). */
static strided_status check_span(const char *op, const void *ptr, size_t size)
{
    if (size > (size_t)INT64_MAX)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a buffer of %zu bytes is too large: a buffer holds at "
                             "most 2**63 - 1 bytes",
                             size);
    if (size > 0 && (uintptr_t)ptr > UINTPTR_MAX - (size - 1))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the %zu bytes at %p wrap past the top of the address "
                             "space",
                             size, ptr);
    return STRIDED_OK;
}

strided_status strided_buffer_alloc(strided_memory_resource *mr, size_t size, void *stream,
                                    strided_buffer **out)
{
    const char *op = "alloc";
    if (mr == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "mr and out are required");
    void *ptr = NULL;
    strided_status status = strided__resource_allocate(mr, size, stream, &ptr);
    if (status != STRIDED_OK)
        return status;
    strided_buffer *b = new_buffer(ptr, size, resource_info(mr, ptr));
    if (b == NULL) {
        strided__resource_deallocate(mr, ptr, size, stream);
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a buffer");
    }
    b->mr = strided_memory_resource_retain(mr);
    atomic_store(&b->stream, stream);
    *out = b;
    return STRIDED_OK;
}

/* Whether memory of this kind serves as a temporary of a copy on the host
 * (device < 0) or on device; names what is wrong in *why otherwise. */
static bool reachable_for_copy(const strided_memory_info *info, int device, const char **why)
{
    if (device < 0) {
        *why = "memory the host cannot reach";
        return info->host_accessible;
    }
    *why = "memory the device cannot reach";
    if (!info->device_accessible)
        return false;
    /* Another device's memory is not reachable without peer access, which
     * copies enable only for their own two views. */
    *why = "memory of another device";
    return info->kind != STRIDED_MEMORY_DEVICE || info->device_id == device;
}

strided_status strided__buffer_alloc_temporary(strided_memory_resource *mr, size_t size,
                                               void *stream, int device, strided_buffer **out)
{
    const char *role = device < 0 ? "host" : "device";
    strided_status status = strided_buffer_alloc(mr, size, stream, out);
    if (status != STRIDED_OK) {
        *out = NULL;
        return status;
    }
    /* A built-in resource's memory is what its properties say; a user's
     * resource only claims so, and a copy that believed a wrong claim would
     * run a kernel on host memory or write device memory from the host. So
     * its memory is asked about. */
    strided_memory_info info = strided_buffer_memory_info(*out);
    if (!strided__resource_is_builtin(mr) && size > 0) {
        status = strided_memory_info_query(strided_buffer_ptr(*out), &info);
        if (status != STRIDED_OK) {
            strided_buffer_release(*out);
            *out = NULL;
            return status;
        }
    }
    const char *why = NULL;
    if (size == 0 || reachable_for_copy(&info, device, &why))
        return STRIDED_OK;
    static const char *const kinds[] = {"host", "pinned", "device", "managed"};
    const char *kind = (unsigned)info.kind < 4 ? kinds[info.kind] : "unknown";
    void *ptr = strided_buffer_ptr(*out);
    strided_buffer_release(*out);
    *out = NULL;
    if (device < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "copy",
                             "the %s allocator gave %s (%s memory at %p, for a %zu-byte "
                             "temporary on the host); nothing was written",
                             role, why, kind, ptr, size);
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "copy",
                         "the %s allocator gave %s (%s memory of device %d at %p, for a "
                         "%zu-byte temporary on device %d); nothing was written",
                         role, why, kind, info.device_id, ptr, size, device);
}

strided_status strided_buffer_wrap_known(void *ptr, size_t size, const strided_memory_info *info,
                                         strided_release_fn release, void *context,
                                         strided_buffer **out)
{
    const char *op = "wrap";
    if (info == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "info and out are required");
    strided_status status = check_span(op, ptr, size);
    if (status != STRIDED_OK)
        return status;
    strided_buffer *b = new_buffer(ptr, size, *info);
    if (b == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a buffer");
    b->release = release;
    b->context = context;
    *out = b;
    return STRIDED_OK;
}

strided_status strided_buffer_wrap(void *ptr, size_t size, strided_release_fn release,
                                   void *context, strided_buffer **out)
{
    const char *op = "wrap";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    strided_status status = check_span(op, ptr, size);
    if (status != STRIDED_OK)
        return status;
    strided_memory_info info;
    status = strided_memory_info_query(ptr, &info);
    if (status != STRIDED_OK)
        return status;
    return strided_buffer_wrap_known(ptr, size, &info, release, context, out);
}

strided_status strided_buffer_wrap_resource(void *ptr, size_t size, strided_memory_resource *mr,
                                            void *stream, strided_buffer **out)
{
    const char *op = "wrap_resource";
    if (mr == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "mr and out are required");
    strided_status status = check_span(op, ptr, size);
    if (status != STRIDED_OK)
        return status;
    strided_buffer *b = new_buffer(ptr, size, resource_info(mr, ptr));
    if (b == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a buffer");
    b->mr = strided_memory_resource_retain(mr);
    atomic_store(&b->stream, stream);
    *out = b;
    return STRIDED_OK;
}

strided_buffer *strided_buffer_retain(strided_buffer *b)
{
    if (b != NULL)
        atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void strided_buffer_release(strided_buffer *b)
{
    if (b == NULL)
        return;
    /* acq_rel: every holder's uses of the memory happen before the free. */
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (b->mr != NULL) {
        strided__resource_deallocate(b->mr, b->ptr, b->size, atomic_load(&b->stream));
        strided_memory_resource_release(b->mr);
    } else if (b->release != NULL) {
        b->release(b->context, b->ptr, b->size);
    }
    strided__free(atomic_load(&b->ipc_descriptor));
    strided__free(b);
}

void *strided_buffer_ptr(const strided_buffer *b)
{
    return b->ptr;
}

size_t strided_buffer_size(const strided_buffer *b)
{
    return b->size;
}

strided_memory_resource *strided_buffer_resource(const strided_buffer *b)
{
    return b->mr;
}

strided_memory_info strided_buffer_memory_info(const strided_buffer *b)
{
    return b->info;
}

long strided_buffer_use_count(const strided_buffer *b)
{
    return atomic_load(&((strided_buffer *)b)->refs);
}

strided_status strided_buffer_set_deallocation_stream(strided_buffer *b, void *stream)
{
    if (b == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "set_deallocation_stream",
                             "the buffer is required");
    if (b->mr == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "set_deallocation_stream",
                             "the buffer is not owned by a memory resource, so "
                             "it has no deallocation stream");
    atomic_store(&b->stream, stream);
    return STRIDED_OK;
}

void *strided__buffer_release_context(const strided_buffer *b, strided_release_fn release)
{
    return b->mr == NULL && b->release == release ? b->context : NULL;
}

bool strided__buffer_ipc_cached(const strided_buffer *b,
                                unsigned char out[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE])
{
    /* acquire: the bytes were written before the pointer was published. */
    const unsigned char *d = atomic_load_explicit(&((strided_buffer *)b)->ipc_descriptor,
                                                  memory_order_acquire);
    if (d == NULL)
        return false;
    memcpy(out, d, STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE);
    return true;
}

void strided__buffer_ipc_cache(const strided_buffer *b,
                               const unsigned char d[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE])
{
    unsigned char *copy = strided__malloc(STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE), *none = NULL;
    if (copy == NULL)
        return; /* no cache: the next export asks the driver again */
    memcpy(copy, d, STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE);
    /* Two threads exporting at once: the first to publish wins. */
    if (!atomic_compare_exchange_strong_explicit(&((strided_buffer *)b)->ipc_descriptor, &none,
                                                 copy, memory_order_release, memory_order_relaxed))
        strided__free(copy);
}
