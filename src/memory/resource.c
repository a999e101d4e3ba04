/*
 * memory/resource.c: memory resources, user-defined and built in, and the
 * memory pools of the built-in CUDA resources.
 *
 * A resource is a reference-counted box around an ops table, its self
 * pointer, its properties and whether it is closed. The built-ins are
 * ordinary users of that box: each has a static ops table and keeps its
 * state in self, and a name (cuda.core's class name) for its messages.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda/driver.h"
#include "memory/ipc.h"
#include "memory/memory.h"
#include "strided/ipc.h"
#include "strided/resource.h"

struct strided_memory_resource {
    atomic_long refs;
    atomic_bool closed;
    const strided_memory_resource_ops *ops;
    void *self;
    strided_memory_resource_props props;
    bool builtin; /* self is the built-in's private state */
};

static strided_status create_resource(const char *op, const strided_memory_resource_ops *ops,
                                      void *self, const strided_memory_resource_props *props,
                                      bool builtin, strided_memory_resource **out)
{
    if (ops == NULL || ops->allocate == NULL || ops->deallocate == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the ops table and its allocate and deallocate "
                             "callbacks are required");
    if (props == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "props and out are required");
    strided_memory_resource *mr = strided__malloc(sizeof *mr);
    if (mr == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a memory resource");
    atomic_init(&mr->refs, 1);
    atomic_init(&mr->closed, false);
    mr->ops = ops;
    mr->self = self;
    mr->props = *props;
    mr->builtin = builtin;
    *out = mr;
    return STRIDED_OK;
}

strided_status strided_memory_resource_create(const strided_memory_resource_ops *ops, void *self,
                                              const strided_memory_resource_props *props,
                                              strided_memory_resource **out)
{
    return create_resource("memory_resource_create", ops, self, props, false, out);
}

strided_memory_resource *strided_memory_resource_retain(strided_memory_resource *mr)
{
    if (mr != NULL)
        atomic_fetch_add_explicit(&mr->refs, 1, memory_order_relaxed);
    return mr;
}

void strided_memory_resource_release(strided_memory_resource *mr)
{
    if (mr == NULL)
        return;
    if (atomic_fetch_sub_explicit(&mr->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (mr->ops->destroy != NULL)
        mr->ops->destroy(mr->self);
    strided__free(mr);
}

strided_memory_resource_props strided_memory_resource_properties(const strided_memory_resource *mr)
{
    return mr->props;
}

void *strided_memory_resource_self(const strided_memory_resource *mr)
{
    return mr->builtin ? NULL : mr->self;
}

static const char *resource_name(const strided_memory_resource *mr);

/* Where a pool of a resource with this device_id puts its memory: the
 * device, or the host (-1). */
static strided_memory_location device_id_location(int device_id)
{
    if (device_id < 0)
        return (strided_memory_location){STRIDED_LOCATION_HOST, -1};
    return (strided_memory_location){STRIDED_LOCATION_DEVICE, device_id};
}

strided_status strided__resource_allocate(strided_memory_resource *mr, size_t size, void *stream,
                                          void **out_ptr)
{
    const char *op = "alloc";
    if (strided_memory_resource_is_closed(mr))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "%s has been closed",
                             resource_name(mr));
    if (size > (size_t)INT64_MAX)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "cannot allocate %zu bytes: a buffer holds at most "
                             "2**63 - 1 bytes",
                             size);
    void *ptr = NULL;
    strided_status status = mr->ops->allocate(mr->self, size, stream, &ptr);
    if (status != STRIDED_OK)
        return status;
    /* Trust nothing the callback says before it is checked: a short or
     * wrapping allocation would be written past its end. */
    size_t usable = mr->ops->allocation_size != NULL ? mr->ops->allocation_size(mr->self, ptr, size)
                                                     : size;
    const char *wrong = NULL;
    if (ptr == NULL && size > 0)
        wrong = "returned NULL";
    else if (usable < size)
        wrong = "returned fewer bytes than asked for";
    else if (size > 0 && (uintptr_t)ptr > UINTPTR_MAX - (size - 1))
        wrong = "returned a range that wraps past the top of the address space";
    if (wrong == NULL) {
        *out_ptr = ptr;
        return STRIDED_OK;
    }
    mr->ops->deallocate(mr->self, ptr, size, stream);
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "the memory resource's allocate %s: %zu bytes at %p where "
                         "%zu were asked for; the allocation was given back unused",
                         wrong, usable, ptr, size);
}

bool strided__resource_is_builtin(const strided_memory_resource *mr)
{
    return mr->builtin;
}

void strided__resource_deallocate(strided_memory_resource *mr, void *ptr, size_t size, void *stream)
{
    mr->ops->deallocate(mr->self, ptr, size, stream);
}

/* Wrap a built-in's state; on failure the state is destroyed, so the
 * caller never has to clean up. */
static strided_status create_builtin(const char *op, const strided_memory_resource_ops *ops,
                                     void *self, strided_memory_resource_props props,
                                     strided_memory_resource **out)
{
    strided_status status = create_resource(op, ops, self, &props, true, out);
    if (status != STRIDED_OK && ops->destroy != NULL)
        ops->destroy(self);
    return status;
}

static void free_state(void *self)
{
    strided__free(self);
}

typedef struct host_state {
    size_t alignment;
} host_state;

static strided_status host_allocate(void *self, size_t size, void *stream, void **out_ptr)
{
    const host_state *h = self;
    (void)stream;
    void *p = strided__aligned_alloc(h->alignment, size);
    if (p == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, "alloc",
                             "cannot allocate %zu bytes of host memory "
                             "aligned to %zu",
                             size, h->alignment);
    *out_ptr = p;
    return STRIDED_OK;
}

static void host_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)self;
    (void)size;
    (void)stream;
    strided__free(ptr);
}

static const strided_memory_resource_ops host_ops = {
    .allocate = host_allocate, .deallocate = host_deallocate, .destroy = free_state};

strided_status strided_host_resource_create(size_t alignment, strided_memory_resource **out)
{
    const char *op = "host_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    if (alignment == 0)
        alignment = 64;
    if ((alignment & (alignment - 1)) != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the alignment must be a power of two, got %zu", alignment);
    host_state *h = strided__malloc(sizeof *h);
    if (h == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a memory resource");
    h->alignment = alignment;
    strided_memory_resource_props props = {true, false, false, -1, false};
    return create_builtin(op, &host_ops, h, props, out);
}

/* The CUDA resources share one ops table; their state says how they
 * allocate, the device whose primary context their driver calls run in, and
 * the pool they allocate from, if any. */
typedef enum cuda_kind {
    PINNED,        /* cuMemHostAlloc */
    LEGACY_PINNED, /* cuMemAllocHost */
    MANAGED,       /* cuMemAllocManaged */
    POOL           /* cuMemAllocFromPoolAsync from pool */
} cuda_kind;

typedef struct cuda_state {
    const strided__driver *cu;
    cuda_kind kind;
    const char *name; /* cuda.core's class for this kind of memory */
    int device;
    CUmemoryPool pool;
    bool owned; /* pool is the resource's own, not yet destroyed */
    strided_memory_location location;
    bool ipc;    /* the pool exports to other processes, or was imported */
    bool mapped; /* the pool was imported from another process */
    bool has_id; /* id is the pool's identity */
    unsigned char id[STRIDED_IPC_POOL_ID_SIZE];
} cuda_state;

static strided_status cuda_state_new(const char *op, cuda_kind kind, const char *name, int device,
                                     cuda_state **out)
{
    const strided__driver *cu;
    strided_status status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    /* Entering the device's context validates the ordinal. */
    strided__context_scope scope;
    status = strided__context_enter(op, cu, device, &scope);
    if (status != STRIDED_OK)
        return status;
    strided__context_leave(cu, &scope);
    cuda_state *s = strided__malloc(sizeof *s);
    if (s == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a memory resource");
    *s = (cuda_state){cu,    kind,  name,  device, NULL, false, {STRIDED_LOCATION_NONE, -1},
                      false, false, false, {0}};
    *out = s;
    return STRIDED_OK;
}

/* One allocation. Assumes: the device's context is current, size > 0. */
static strided_status cuda_alloc_here(const cuda_state *s, size_t size, CUstream stream,
                                      void **out_ptr)
{
    const strided__driver *cu = s->cu;
    CUdeviceptr p = 0;
    strided_status status;
    switch (s->kind) {
    case PINNED:
        return STRIDED_CUDA_CHECK("alloc", cu->cuMemHostAlloc(out_ptr, size,
                                                              CU_MEMHOSTALLOC_PORTABLE |
                                                                  CU_MEMHOSTALLOC_DEVICEMAP));
    case LEGACY_PINNED: return STRIDED_CUDA_CHECK("alloc", cu->cuMemAllocHost(out_ptr, size));
    case POOL:
        status = STRIDED_CUDA_CHECK("alloc",
                                    cu->cuMemAllocFromPoolAsync(&p, size, s->pool, stream));
        break;
    default:
        status = STRIDED_CUDA_CHECK("alloc", cu->cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL));
        break;
    }
    if (status == STRIDED_OK)
        *out_ptr = (void *)(uintptr_t)p;
    return status;
}

static strided_status cuda_allocate(void *self, size_t size, void *stream, void **out_ptr)
{
    const cuda_state *s = self;
    strided__context_scope scope;
    /* A mapped pool's memory is the exporter's to allocate. */
    if (s->mapped)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                             "Cannot allocate from a mapped IPC-enabled memory resource");
    /* Nothing to allocate: the driver would refuse a size of 0. */
    if (size == 0) {
        *out_ptr = NULL;
        return STRIDED_OK;
    }
    strided_status status = strided__context_enter("alloc", s->cu, s->device, &scope);
    if (status != STRIDED_OK)
        return status;
    void *p = NULL;
    status = cuda_alloc_here(s, size, (CUstream)stream, &p);
    strided__context_leave(s->cu, &scope);
    if (status == STRIDED_OK)
        *out_ptr = p;
    return status;
}

/* Deallocation has nobody to report to: a failing free leaves the memory
 * allocated (a leak, never a crash), which is all the driver allows. */
static void cuda_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    const cuda_state *s = self;
    const strided__driver *cu = s->cu;
    strided__context_scope scope;
    (void)size;
    if (ptr == NULL || strided__context_enter("free", cu, s->device, &scope) != STRIDED_OK)
        return;
    if (s->kind == POOL) {
        cu->cuMemFreeAsync((CUdeviceptr)(uintptr_t)ptr, (CUstream)stream);
    } else {
        /* Not stream-ordered: wait for the work that may still use it. */
        cu->cuStreamSynchronize((CUstream)stream);
        if (s->kind == MANAGED)
            cu->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
        else
            cu->cuMemFreeHost(ptr);
    }
    strided__context_leave(cu, &scope);
}

/* Destroy the pool the state owns, in its device's context. A pool still
 * holding allocations goes once the last of them is freed (the driver
 * defers it). */
static strided_status destroy_pool(const char *op, cuda_state *s)
{
    strided__context_scope scope;
    if (!s->owned)
        return STRIDED_OK;
    s->owned = false;
    strided_status status = strided__context_enter(op, s->cu, s->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolDestroy(s->pool));
    strided__context_leave(s->cu, &scope);
    return status;
}

static void cuda_destroy(void *self)
{
    (void)destroy_pool("free", self);
    strided__free(self);
}

static const strided_memory_resource_ops cuda_ops = {
    .allocate = cuda_allocate, .deallocate = cuda_deallocate, .destroy = cuda_destroy};

/* IPC-enabled pools export POSIX file descriptors: the platform must be
 * Linux and the device's pools must support that handle type. */
static strided_status check_ipc_handles(const char *op, const cuda_state *s)
{
#ifndef __linux__
    (void)s;
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                         "IPC-enabled memory pools need POSIX file descriptor handles, which "
                         "strided supports on Linux only");
#else
    CUdevice dev;
    int types = 0;
    strided_status status = STRIDED_CUDA_CHECK(op, s->cu->cuDeviceGet(&dev, s->device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, s->cu->cuDeviceGetAttribute(
                    &types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev));
    if (status == STRIDED_OK && !(types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        status = strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                               "IPC-enabled memory pools need POSIX file descriptor handles, "
                               "which the memory pools of device %d do not support",
                               s->device);
    return status;
#endif
}

/* Create a pool of the given kind at loc for the state, which then owns
 * it; ipc: one that exports POSIX file descriptors, with a new identity. */
static strided_status create_pool(const char *op, cuda_state *s, CUmemAllocationType type,
                                  strided_memory_location loc, int64_t max_size, bool ipc)
{
    static const CUmemLocationType types[] = {
        [STRIDED_LOCATION_NONE] = CU_MEM_LOCATION_TYPE_NONE,
        [STRIDED_LOCATION_DEVICE] = CU_MEM_LOCATION_TYPE_DEVICE,
        [STRIDED_LOCATION_HOST] = CU_MEM_LOCATION_TYPE_HOST,
        [STRIDED_LOCATION_HOST_NUMA] = CU_MEM_LOCATION_TYPE_HOST_NUMA,
    };
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = type;
    props.handleTypes = ipc ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = types[loc.type];
    props.location.id = loc.id;
    props.maxSize = (size_t)max_size;
    strided_status status = ipc ? check_ipc_handles(op, s) : STRIDED_OK;
    if (status == STRIDED_OK && ipc)
        status = strided__ipc_random(op, s->id, sizeof s->id);
    if (status != STRIDED_OK)
        return status;
    strided__context_scope scope;
    status = strided__context_enter(op, s->cu, s->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolCreate(&s->pool, &props));
    if (status == STRIDED_OK && ipc) {
        /* Exported once now: the driver refuses to export an allocation
         * (cuMemPoolExportPointer: CUDA_ERROR_INVALID_VALUE, driver 580 on
         * an H200) of a pool that was never exported to a shareable handle.
         * The descriptor is closed; export_pool makes the caller's own. */
        int fd = -1;
        status = STRIDED_CUDA_CHECK(op,
                                    s->cu->cuMemPoolExportToShareableHandle(
                                        &fd, s->pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        if (status == STRIDED_OK) {
            close(fd);
        } else {
            (void)s->cu->cuMemPoolDestroy(s->pool);
            s->pool = NULL;
        }
    }
    strided__context_leave(s->cu, &scope);
    if (status == STRIDED_OK) {
        s->kind = POOL;
        s->owned = true;
        s->location = loc;
        s->ipc = s->has_id = ipc;
    }
    return status;
}

/* Wrap a CUDA state, destroying it (and its pool) when that fails. */
static strided_status create_cuda(const char *op, cuda_state *s,
                                  strided_memory_resource_props props,
                                  strided_memory_resource **out)
{
    props.pooled = s->kind == POOL;
    return create_builtin(op, &cuda_ops, s, props, out);
}

strided_status strided_pinned_resource_create(strided_memory_resource **out)
{
    return strided_pinned_pool_resource_create(NULL, out);
}

strided_status strided_legacy_pinned_resource_create(strided_memory_resource **out)
{
    const char *op = "legacy_pinned_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, LEGACY_PINNED, "LegacyPinnedMemoryResource", 0, &s);
    if (status != STRIDED_OK)
        return status;
    strided_memory_resource_props props = {true, true, false, -1, false};
    return create_cuda(op, s, props, out);
}

/* The rules both pool options with ipc_enabled and max_size share. */
static strided_status check_pool_size(const char *op, int64_t max_size)
{
    if (max_size < 0)
        return strided__fail(STRIDED_ERR_OVERFLOW, op,
                             "can't convert negative value to size_t: max_size is %lld",
                             (long long)max_size);
    return STRIDED_OK;
}

/* A location id must be one the driver's int holds. */
static strided_status check_location_id(const char *op, const char *what, int64_t id)
{
    if (id > INT_MAX)
        return strided__fail(STRIDED_ERR_OVERFLOW, op, "%s %lld does not fit in a C int", what,
                             (long long)id);
    return STRIDED_OK;
}

strided_status strided_pinned_pool_resource_create(const strided_pinned_pool_options *options,
                                                   strided_memory_resource **out)
{
    const char *op = options != NULL ? "pinned_pool_resource_create" : "pinned_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    strided_memory_location loc = {STRIDED_LOCATION_HOST, -1};
    if (options != NULL) {
        strided_status status = check_pool_size(op, options->max_size);
        if (status == STRIDED_OK && options->has_numa_id && options->numa_id < 0)
            status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                   "numa_id must be >= 0, got %lld", (long long)options->numa_id);
        if (status == STRIDED_OK && options->has_numa_id)
            status = check_location_id(op, "numa_id", options->numa_id);
        if (status != STRIDED_OK)
            return status;
        if (options->has_numa_id)
            loc = (strided_memory_location){STRIDED_LOCATION_HOST_NUMA, (int)options->numa_id};
    }
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, PINNED, "PinnedMemoryResource", 0, &s);
    if (status == STRIDED_OK && options != NULL)
        status = create_pool(op, s, CU_MEM_ALLOCATION_TYPE_PINNED, loc, options->max_size,
                             options->ipc_enabled);
    if (status != STRIDED_OK) {
        strided__free(s);
        return status;
    }
    strided_memory_resource_props props = {true, true, false, -1, false};
    return create_cuda(op, s, props, out);
}

strided_status strided__pool_keep_freed(const char *op, const strided__driver *cu,
                                        CUmemoryPool pool)
{
    uint64_t threshold = 0;
    strided_status status = STRIDED_CUDA_CHECK(
        op, cu->cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    if (status == STRIDED_OK && threshold == 0) {
        threshold = UINT64_MAX;
        status = STRIDED_CUDA_CHECK(
            op, cu->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
    }
    return status;
}

/* The device's current pool, its release threshold raised when it is 0
 * (strided__pool_keep_freed). */
static strided_status use_current_pool(const char *op, cuda_state *s, CUdevice dev)
{
    const strided__driver *cu = s->cu;
    strided_status status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetMemPool(&s->pool, dev));
    if (status == STRIDED_OK)
        status = strided__pool_keep_freed(op, cu, s->pool);
    if (status == STRIDED_OK) {
        s->kind = POOL;
        s->location = (strided_memory_location){STRIDED_LOCATION_DEVICE, s->device};
    }
    return status;
}

strided_status strided_device_resource_create(int device, strided_memory_resource **out)
{
    return strided_device_pool_resource_create(device, NULL, out);
}

strided_status strided_device_pool_resource_create(int device,
                                                   const strided_device_pool_options *options,
                                                   strided_memory_resource **out)
{
    const char *op = options != NULL ? "device_pool_resource_create" : "device_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, POOL, "DeviceMemoryResource", device, &s);
    if (status != STRIDED_OK)
        return status;
    const strided__driver *cu = s->cu;
    CUdevice dev;
    int pools = 0;
    if (options != NULL)
        status = check_pool_size(op, options->max_size);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGet(&dev, device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, cu->cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
    if (status == STRIDED_OK && !pools)
        status = strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                               "device %d does not support memory pools", device);
    if (status == STRIDED_OK && options == NULL)
        status = use_current_pool(op, s, dev);
    else if (status == STRIDED_OK)
        status = create_pool(op, s, CU_MEM_ALLOCATION_TYPE_PINNED,
                             (strided_memory_location){STRIDED_LOCATION_DEVICE, device},
                             options->max_size, options->ipc_enabled);
    if (status != STRIDED_OK) {
        strided__free(s);
        return status;
    }
    strided_memory_resource_props props = {false, true, false, device, true};
    return create_cuda(op, s, props, out);
}

strided_status strided_managed_resource_create(int device, strided_memory_resource **out)
{
    return strided_managed_pool_resource_create(device, NULL, out);
}

/* The preferred location that options ask for, by cuda.core's rules;
 * host_numa without a node is left as HOST_NUMA -1, for the device to say
 * (it needs the driver). */
static strided_status preferred_location(const char *op, const strided_managed_pool_options *o,
                                         strided_memory_location *out)
{
    const char *type = o->preferred_location_type;
    bool given = o->has_preferred_location;
    long long v = o->preferred_location;
    char got[32] = "None";
    if (given)
        snprintf(got, sizeof got, "%lld", v);
    strided_memory_location loc = {STRIDED_LOCATION_NONE, -1};
    if (type == NULL) {
        if (given && v < -1)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "preferred_location must be a device ordinal (>= 0), -1 "
                                 "for host, or None for no preference, got %s",
                                 got);
        if (given && v == -1)
            loc.type = STRIDED_LOCATION_HOST;
        else if (given)
            loc.type = STRIDED_LOCATION_DEVICE;
    } else if (strcmp(type, "device") == 0) {
        if (!given || v < 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "preferred_location must be a device ordinal (>= 0) when "
                                 "preferred_location_type is 'device', got %s",
                                 got);
        loc.type = STRIDED_LOCATION_DEVICE;
    } else if (strcmp(type, "host") == 0) {
        if (given)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "preferred_location must be None when "
                                 "preferred_location_type is 'host', got %s",
                                 got);
        loc.type = STRIDED_LOCATION_HOST;
    } else if (strcmp(type, "host_numa") == 0) {
        if (given && v < 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "preferred_location must be a NUMA node ID (>= 0) or None "
                                 "when preferred_location_type is 'host_numa', got %s",
                                 got);
        loc.type = STRIDED_LOCATION_HOST_NUMA;
    } else {
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "'%s' is not a valid ManagedMemoryLocationType. Must be None, "
                             "'device', 'host' or 'host_numa'",
                             type);
    }
    if (loc.type == STRIDED_LOCATION_DEVICE || (given && loc.type == STRIDED_LOCATION_HOST_NUMA)) {
        strided_status status = check_location_id(op, "preferred_location", v);
        if (status != STRIDED_OK)
            return status;
        loc.id = (int)v;
    }
    *out = loc;
    return STRIDED_OK;
}

/* Settle what needs the driver: a preferred device must exist, and
 * host_numa without a node takes the one closest to the state's device. */
static strided_status resolve_location(const char *op, const cuda_state *s,
                                       strided_memory_location *loc)
{
    const strided__driver *cu = s->cu;
    strided__context_scope scope;
    strided_status status = STRIDED_OK;
    if (loc->type == STRIDED_LOCATION_DEVICE) {
        /* Entering the preferred device's context validates it. */
        status = strided__context_enter(op, cu, loc->id, &scope);
        if (status == STRIDED_OK)
            strided__context_leave(cu, &scope);
    } else if (loc->type == STRIDED_LOCATION_HOST_NUMA && loc->id < 0) {
        CUdevice dev;
        int node = -1;
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGet(&dev, s->device));
        if (status == STRIDED_OK)
            status = STRIDED_CUDA_CHECK(
                op, cu->cuDeviceGetAttribute(&node, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev));
        if (status == STRIDED_OK && node < 0)
            status = strided__fail(
                STRIDED_ERR_UNSUPPORTED, op,
                "Cannot determine host NUMA ID for the current CUDA device. The system may "
                "not support NUMA, or no CUDA context is active. Set preferred_location to "
                "an explicit NUMA node ID or call Device.set_current() first.: device %d "
                "has no host NUMA node",
                s->device);
        if (status == STRIDED_OK)
            loc->id = node;
    }
    return status;
}

strided_status strided_managed_pool_resource_create(int device,
                                                    const strided_managed_pool_options *options,
                                                    strided_memory_resource **out)
{
    const char *op = options != NULL ? "managed_pool_resource_create" : "managed_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    strided_memory_location loc = {STRIDED_LOCATION_NONE, -1};
    strided_status status = STRIDED_OK;
    if (options != NULL && (status = preferred_location(op, options, &loc)) != STRIDED_OK)
        return status;
    cuda_state *s = NULL;
    status = cuda_state_new(op, MANAGED, "ManagedMemoryResource", device, &s);
    if (status != STRIDED_OK)
        return status;
    if (options != NULL)
        status = resolve_location(op, s, &loc);
    if (status == STRIDED_OK && options != NULL)
        status = create_pool(op, s, CU_MEM_ALLOCATION_TYPE_MANAGED, loc, 0, false);
    if (status != STRIDED_OK) {
        strided__free(s);
        return status;
    }
    int device_id = options == NULL ? device : loc.type == STRIDED_LOCATION_DEVICE ? loc.id : -1;
    strided_memory_resource_props props = {true, true, true, device_id, false};
    return create_cuda(op, s, props, out);
}

static const char *resource_name(const strided_memory_resource *mr)
{
    if (mr->ops == &cuda_ops)
        return ((const cuda_state *)mr->self)->name;
    return mr->ops == &host_ops ? "HostMemoryResource" : "the memory resource";
}

/* The CUDA state of a built-in CUDA resource; NULL for the others. */
static cuda_state *cuda_state_of(const strided_memory_resource *mr)
{
    return mr->ops == &cuda_ops ? mr->self : NULL;
}

strided_memory_pool_info strided_memory_resource_pool(const strided_memory_resource *mr)
{
    const cuda_state *s = cuda_state_of(mr);
    strided_memory_pool_info info = {NULL, false, {STRIDED_LOCATION_NONE, -1}};
    if (s == NULL || s->kind != POOL)
        return info;
    info.location = s->location;
    if (!strided_memory_resource_is_closed(mr)) {
        info.handle = s->pool;
        info.owned = s->owned;
    }
    return info;
}

strided_status strided_memory_resource_pool_attributes(const strided_memory_resource *mr,
                                                       strided_memory_pool_attributes *out)
{
    const char *op = "pool_attributes";
    if (mr == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "mr and out are required");
    if (strided_memory_resource_is_closed(mr))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "%s has been closed",
                             resource_name(mr));
    const cuda_state *s = cuda_state_of(mr);
    if (s == NULL || s->kind != POOL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "the memory resource allocates without a memory pool");
    static const CUmemPool_attribute flags[] = {
        CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
    };
    static const CUmemPool_attribute sizes[] = {
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        CU_MEMPOOL_ATTR_USED_MEM_HIGH,
    };
    int flag[3] = {0, 0, 0};
    cuuint64_t size[5] = {0, 0, 0, 0, 0};
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, s->cu, s->device, &scope);
    if (status != STRIDED_OK)
        return status;
    for (size_t i = 0; i < 3 && status == STRIDED_OK; i++)
        status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolGetAttribute(s->pool, flags[i], &flag[i]));
    for (size_t i = 0; i < 5 && status == STRIDED_OK; i++)
        status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolGetAttribute(s->pool, sizes[i], &size[i]));
    strided__context_leave(s->cu, &scope);
    if (status != STRIDED_OK)
        return status;
    *out = (strided_memory_pool_attributes){flag[0] != 0, flag[1] != 0, flag[2] != 0, size[0],
                                            size[1],      size[2],      size[3],      size[4]};
    return STRIDED_OK;
}

strided_status strided_memory_resource_close(strided_memory_resource *mr)
{
    if (atomic_exchange(&mr->closed, true))
        return STRIDED_OK;
    cuda_state *s = cuda_state_of(mr);
    return s != NULL ? destroy_pool("close", s) : STRIDED_OK;
}

bool strided_memory_resource_is_closed(const strided_memory_resource *mr)
{
    return atomic_load(&mr->closed);
}

/* The state of mr when it is a device memory pool's resource, the only
 * kind whose pool grants peer access. */
static strided_status device_pool_of(const char *op, const strided_memory_resource *mr,
                                     const cuda_state **out)
{
    if (strided_memory_resource_is_closed(mr))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "%s has been closed",
                             resource_name(mr));
    const cuda_state *s = cuda_state_of(mr);
    if (s == NULL || s->kind != POOL || mr->props.managed ||
        s->location.type != STRIDED_LOCATION_DEVICE)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "peer access is granted by device memory pools only");
    *out = s;
    return STRIDED_OK;
}

/* mr's device pool state, with the pool's device's context made current
 * in *scope (strided__context_leave ends it). */
static strided_status enter_device_pool(const char *op, const strided_memory_resource *mr,
                                        const cuda_state **out, strided__context_scope *scope)
{
    strided_status status = device_pool_of(op, mr, out);
    if (status == STRIDED_OK)
        status = strided__context_enter(op, (*out)->cu, (*out)->device, scope);
    return status;
}

/* Which of the count devices may read and write s's pool: has[d] (false
 * for the pool's own device, which is not asked about). Assumes: the
 * pool's device's context is current. */
static strided_status read_peer_access(const char *op, const cuda_state *s, int count, bool *has)
{
    for (int d = 0; d < count; d++) {
        CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
        CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, d};
        has[d] = false;
        if (d == s->device)
            continue;
        strided_status status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolGetAccess(&flags, s->pool,
                                                                                 &loc));
        if (status != STRIDED_OK)
            return status;
        has[d] = flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    return STRIDED_OK;
}

/* The device count, and room for a flag per device. */
static strided_status device_flags(const char *op, const cuda_state *s, int *count, bool **out)
{
    strided_status status = STRIDED_CUDA_CHECK(op, s->cu->cuDeviceGetCount(count));
    if (status != STRIDED_OK)
        return status;
    /* Room for at least one, so that no device yields no allocation. */
    *out = strided__malloc((size_t)*count + 1);
    if (*out == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate %d flags", *count);
    return STRIDED_OK;
}

typedef struct peer_list {
    int *devices;
    size_t capacity;
    size_t count;
} peer_list;

/* List the devices with access into list. Assumes: the pool's device's
 * context is current. */
static strided_status list_peer_access(const char *op, const cuda_state *s, peer_list *list)
{
    int count = 0;
    bool *has = NULL;
    strided_status status = device_flags(op, s, &count, &has);
    if (status == STRIDED_OK)
        status = read_peer_access(op, s, count, has);
    size_t found = 0;
    for (int d = 0; status == STRIDED_OK && d < count; d++)
        found += has[d];
    if (status == STRIDED_OK && found > list->capacity)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                               "%zu devices have access, room for %zu", found, list->capacity);
    for (int d = 0, i = 0; status == STRIDED_OK && d < count; d++)
        if (has[d])
            list->devices[i++] = d;
    if (status == STRIDED_OK)
        list->count = found;
    strided__free(has);
    return status;
}

strided_status strided_memory_resource_peer_access(const strided_memory_resource *mr,
                                                   int *out_devices, size_t capacity,
                                                   size_t *out_count)
{
    const char *op = "peer_access";
    if (mr == NULL || out_count == NULL || (out_devices == NULL && capacity > 0))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "mr, out_count and, for a capacity, out_devices are required");
    const cuda_state *s = NULL;
    strided__context_scope scope;
    strided_status status = enter_device_pool(op, mr, &s, &scope);
    if (status != STRIDED_OK)
        return status;
    peer_list list = {out_devices, capacity, 0};
    status = list_peer_access(op, s, &list);
    strided__context_leave(s->cu, &scope);
    if (status == STRIDED_OK)
        *out_count = list.count;
    return status;
}

/* A change of peer access: the devices to grant, those to revoke, and
 * whether every other device is revoked (replace); one says a single
 * device is granted, whose refusal reads in cuda.core's words for one. */
typedef struct peer_change {
    const int *grant;
    size_t n_grant;
    const int *revoke;
    size_t n_revoke;
    bool replace;
    bool one;
} peer_change;

/* Fail unless every device of grant exists and can reach the pool's
 * device; the refused ones are named together. */
static strided_status check_grants(const char *op, const cuda_state *s, const peer_change *c,
                                   int count)
{
    for (size_t i = 0; i < c->n_grant; i++)
        if (c->grant[i] < 0 || c->grant[i] >= count)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "device %d does not exist; there are %d CUDA devices", c->grant[i],
                                 count);
    CUdevice owner;
    strided_status status = STRIDED_CUDA_CHECK(op, s->cu->cuDeviceGet(&owner, s->device));
    if (status != STRIDED_OK)
        return status;
    char refused[256] = "";
    size_t used = 0, n_refused = 0;
    bool full = false;
    for (size_t i = 0; i < c->n_grant; i++) {
        int d = c->grant[i], can = 0;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = c->grant[j] == d;
        if (d == s->device || seen)
            continue;
        CUdevice peer;
        status = STRIDED_CUDA_CHECK(op, s->cu->cuDeviceGet(&peer, d));
        if (status == STRIDED_OK)
            status = STRIDED_CUDA_CHECK(op, s->cu->cuDeviceCanAccessPeer(&can, peer, owner));
        if (status != STRIDED_OK)
            return status;
        if (can)
            continue;
        n_refused++;
        if (full)
            continue;
        /* The list as cuda.core writes it, cut short (", ...") past the
         * room for it. */
        int n = snprintf(refused + used, sizeof refused - used, "%s%d", used ? ", " : "", d);
        full = n < 0 || (size_t)n >= sizeof refused - used - 8;
        if (full)
            strcpy(refused + used, ", ...");
        else
            used += (size_t)n;
    }
    if (n_refused == 0)
        return STRIDED_OK;
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "Device %d cannot access peer%s: %s",
                         s->device, c->one ? "" : "(s)", refused);
}

/* Apply c to s's pool: read the access, work out the changes, make them
 * in one cuMemPoolSetAccess. Assumes: the pool's device's context is
 * current, the lists are checked. */
static strided_status apply_peer_change(const char *op, const cuda_state *s, const peer_change *c,
                                        int count, bool *has)
{
    strided_status status = read_peer_access(op, s, count, has);
    if (status != STRIDED_OK)
        return status;
    CUmemAccessDesc *descs = strided__malloc(((size_t)count + 1) * sizeof *descs);
    if (descs == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate %d access descriptors",
                             count);
    size_t n = 0;
    for (int d = 0; d < count; d++) {
        bool want = has[d] && !c->replace;
        for (size_t i = 0; i < c->n_revoke; i++)
            want = want && c->revoke[i] != d;
        for (size_t i = 0; i < c->n_grant; i++)
            want = want || c->grant[i] == d;
        if (d == s->device || want == has[d])
            continue;
        descs[n].location = (CUmemLocation){CU_MEM_LOCATION_TYPE_DEVICE, d};
        descs[n].flags = want ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
        n++;
    }
    if (n > 0)
        status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolSetAccess(s->pool, descs, n));
    strided__free(descs);
    return status;
}

static strided_status change_peer_access(const char *op, strided_memory_resource *mr,
                                         const peer_change *c)
{
    if (mr == NULL || (c->grant == NULL && c->n_grant > 0) ||
        (c->revoke == NULL && c->n_revoke > 0))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "mr and, for a count, its list of devices are required");
    const cuda_state *s = NULL;
    strided__context_scope scope;
    strided_status status = enter_device_pool(op, mr, &s, &scope);
    if (status != STRIDED_OK)
        return status;
    int count = 0;
    bool *has = NULL;
    status = device_flags(op, s, &count, &has);
    if (status == STRIDED_OK)
        status = check_grants(op, s, c, count);
    if (status == STRIDED_OK)
        status = apply_peer_change(op, s, c, count, has);
    strided__free(has);
    strided__context_leave(s->cu, &scope);
    return status;
}

strided_status strided_memory_resource_update_peer_access(strided_memory_resource *mr,
                                                          const int *grant, size_t n_grant,
                                                          const int *revoke, size_t n_revoke)
{
    peer_change c = {grant, n_grant, revoke, n_revoke, false, false};
    return change_peer_access("peer_access", mr, &c);
}

strided_status strided_memory_resource_grant_peer_access(strided_memory_resource *mr, int device)
{
    peer_change c = {&device, 1, NULL, 0, false, true};
    return change_peer_access("peer_access", mr, &c);
}

strided_status strided_memory_resource_set_peer_access(strided_memory_resource *mr,
                                                       const int *devices, size_t count)
{
    peer_change c = {devices, count, NULL, 0, true, false};
    return change_peer_access("peer_access", mr, &c);
}

bool strided_memory_resource_is_ipc_enabled(const strided_memory_resource *mr)
{
    const cuda_state *s = cuda_state_of(mr);
    return s != NULL && s->ipc;
}

bool strided_memory_resource_is_mapped(const strided_memory_resource *mr)
{
    const cuda_state *s = cuda_state_of(mr);
    return s != NULL && s->mapped;
}

bool strided_memory_resource_pool_id(const strided_memory_resource *mr,
                                     unsigned char out[STRIDED_IPC_POOL_ID_SIZE])
{
    const cuda_state *s = cuda_state_of(mr);
    if (s == NULL || !s->ipc || !s->has_id)
        return false;
    memcpy(out, s->id, sizeof s->id);
    return true;
}

strided_status strided_memory_resource_export_pool(const strided_memory_resource *mr, int *out_fd)
{
    const char *op = "export_pool";
    if (mr == NULL || out_fd == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "mr and out_fd are required");
    if (strided_memory_resource_is_closed(mr))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "%s has been closed",
                             resource_name(mr));
    const cuda_state *s = cuda_state_of(mr);
    if (s == NULL || !s->ipc)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "Memory resource is not IPC-enabled");
    if (s->mapped)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "Imported memory resource cannot be exported");
    /* The driver writes an int for a POSIX file descriptor. */
    int fd = -1;
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, s->cu, s->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolExportToShareableHandle(
                                        &fd, s->pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    strided__context_leave(s->cu, &scope);
    if (status == STRIDED_OK)
        *out_fd = fd;
    return status;
}

/* Import a pool from fd into a new resource of kind name on device. */
static strided_status import_pool(const char *op, const char *name, int device, int fd,
                                  const unsigned char *pool_id, strided_memory_resource_props props,
                                  strided_memory_resource **out)
{
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    if (fd < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the pool's file descriptor must be >= 0, got %d", fd);
#ifndef __linux__
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                         "IPC-enabled memory pools need POSIX file descriptor handles, which "
                         "strided supports on Linux only");
#endif
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, POOL, name, device, &s);
    if (status != STRIDED_OK)
        return status;
    strided__context_scope scope;
    status = strided__context_enter(op, s->cu, s->device, &scope);
    if (status == STRIDED_OK) {
        status = STRIDED_CUDA_CHECK(op, s->cu->cuMemPoolImportFromShareableHandle(
                                            &s->pool, (void *)(intptr_t)fd,
                                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        strided__context_leave(s->cu, &scope);
    }
    if (status != STRIDED_OK) {
        strided__free(s);
        return status;
    }
    s->owned = s->ipc = s->mapped = true;
    s->location = device_id_location(props.device_id);
    s->has_id = pool_id != NULL;
    if (pool_id != NULL)
        memcpy(s->id, pool_id, sizeof s->id);
    return create_cuda(op, s, props, out);
}

strided_status strided_device_pool_resource_import(int device, int fd, const unsigned char *pool_id,
                                                   strided_memory_resource **out)
{
    strided_memory_resource_props props = {false, true, false, device, true};
    return import_pool("device_pool_resource_import", "DeviceMemoryResource", device, fd, pool_id,
                       props, out);
}

strided_status strided_pinned_pool_resource_import(int fd, const unsigned char *pool_id,
                                                   strided_memory_resource **out)
{
    strided_memory_resource_props props = {true, true, false, -1, true};
    return import_pool("pinned_pool_resource_import", "PinnedMemoryResource", 0, fd, pool_id, props,
                       out);
}

bool strided__resource_pool_ipc(const strided_memory_resource *mr, strided__pool_ipc *out)
{
    const cuda_state *s = cuda_state_of(mr);
    if (s == NULL || s->kind != POOL)
        return false;
    *out = (strided__pool_ipc){s->cu, s->pool, s->device, s->ipc, s->mapped, s->has_id, {0}};
    memcpy(out->id, s->id, sizeof s->id);
    return true;
}
