/*
 * memory/resource.c: memory resources, user-defined and built in.
 *
 * A resource is a reference-counted box around an ops table, its self
 * pointer and its properties. The built-ins are ordinary users of that box:
 * each has a static ops table and keeps its state in self.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "cuda/driver.h"
#include "memory/memory.h"
#include "strided/resource.h"

struct strided_memory_resource {
    atomic_long refs;
    const strided_memory_resource_ops *ops;
    void *self;
    strided_memory_resource_props props;
    bool builtin; /* self is the built-in's private state */
};

static strided_status create_resource(const char *op,
                                      const strided_memory_resource_ops *ops,
                                      void *self,
                                      const strided_memory_resource_props *props,
                                      bool builtin, strided_memory_resource **out)
{
    if (ops == NULL || ops->allocate == NULL || ops->deallocate == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the ops table and its allocate and deallocate "
                             "callbacks are required");
    if (props == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "props and out are required");
    strided_memory_resource *mr = strided__malloc(sizeof *mr);
    if (mr == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                             "cannot allocate a memory resource");
    atomic_init(&mr->refs, 1);
    mr->ops = ops;
    mr->self = self;
    mr->props = *props;
    mr->builtin = builtin;
    *out = mr;
    return STRIDED_OK;
}

strided_status strided_memory_resource_create(
    const strided_memory_resource_ops *ops, void *self,
    const strided_memory_resource_props *props, strided_memory_resource **out)
{
    return create_resource("memory_resource_create", ops, self, props, false, out);
}

strided_memory_resource *strided_memory_resource_retain(
    strided_memory_resource *mr)
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

strided_memory_resource_props strided_memory_resource_properties(
    const strided_memory_resource *mr)
{
    return mr->props;
}

void *strided_memory_resource_self(const strided_memory_resource *mr)
{
    return mr->builtin ? NULL : mr->self;
}

strided_status strided__resource_allocate(strided_memory_resource *mr,
                                          size_t size, void *stream,
                                          void **out_ptr)
{
    const char *op = "alloc";
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
    size_t usable = mr->ops->allocation_size != NULL
                        ? mr->ops->allocation_size(mr->self, ptr, size)
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

void strided__resource_deallocate(strided_memory_resource *mr, void *ptr,
                                  size_t size, void *stream)
{
    mr->ops->deallocate(mr->self, ptr, size, stream);
}

/* Wrap a built-in's state; on failure the state is destroyed, so the
 * caller never has to clean up. */
static strided_status create_builtin(const char *op,
                                     const strided_memory_resource_ops *ops,
                                     void *self,
                                     strided_memory_resource_props props,
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

static strided_status host_allocate(void *self, size_t size, void *stream,
                                    void **out_ptr)
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

strided_status strided_host_resource_create(size_t alignment,
                                            strided_memory_resource **out)
{
    const char *op = "host_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    if (alignment == 0)
        alignment = 64;
    if ((alignment & (alignment - 1)) != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the alignment must be a power of two, got %zu",
                             alignment);
    host_state *h = strided__malloc(sizeof *h);
    if (h == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                             "cannot allocate a memory resource");
    h->alignment = alignment;
    strided_memory_resource_props props = {true, false, false, -1, false};
    return create_builtin(op, &host_ops, h, props, out);
}

/* The pinned, device and managed resources share one ops table; their state
 * says which they are, the device whose primary context their driver calls
 * run in, and the pool (device only). */
typedef enum cuda_kind { PINNED, DEVICE, MANAGED } cuda_kind;

typedef struct cuda_state {
    const strided__driver *cu;
    cuda_kind kind;
    int device;
    CUmemoryPool pool;
} cuda_state;

static strided_status cuda_state_new(const char *op, cuda_kind kind, int device,
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
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                             "cannot allocate a memory resource");
    s->cu = cu;
    s->kind = kind;
    s->device = device;
    s->pool = NULL;
    *out = s;
    return STRIDED_OK;
}

/* One allocation. Assumes: the device's context is current, size > 0. */
static strided_status cuda_alloc_here(const cuda_state *s, size_t size,
                                      CUstream stream, void **out_ptr)
{
    const strided__driver *cu = s->cu;
    CUdeviceptr p = 0;
    strided_status status;
    switch (s->kind) {
    case PINNED:
        return STRIDED_CUDA_CHECK(
            "alloc", cu->cuMemHostAlloc(out_ptr, size, CU_MEMHOSTALLOC_PORTABLE |
                                                           CU_MEMHOSTALLOC_DEVICEMAP));
    case DEVICE:
        status = STRIDED_CUDA_CHECK(
            "alloc", cu->cuMemAllocFromPoolAsync(&p, size, s->pool, stream));
        break;
    default:
        status = STRIDED_CUDA_CHECK(
            "alloc", cu->cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL));
        break;
    }
    if (status == STRIDED_OK)
        *out_ptr = (void *)(uintptr_t)p;
    return status;
}

static strided_status cuda_allocate(void *self, size_t size, void *stream,
                                    void **out_ptr)
{
    const cuda_state *s = self;
    strided__context_scope scope;
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
    if (ptr == NULL ||
        strided__context_enter("free", cu, s->device, &scope) != STRIDED_OK)
        return;
    if (s->kind == DEVICE) {
        cu->cuMemFreeAsync((CUdeviceptr)(uintptr_t)ptr, (CUstream)stream);
    } else {
        /* Not stream-ordered: wait for the work that may still use it. */
        cu->cuStreamSynchronize((CUstream)stream);
        if (s->kind == PINNED)
            cu->cuMemFreeHost(ptr);
        else
            cu->cuMemFree((CUdeviceptr)(uintptr_t)ptr);
    }
    strided__context_leave(cu, &scope);
}

static const strided_memory_resource_ops cuda_ops = {
    .allocate = cuda_allocate, .deallocate = cuda_deallocate, .destroy = free_state};

strided_status strided_pinned_resource_create(strided_memory_resource **out)
{
    const char *op = "pinned_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, PINNED, 0, &s);
    if (status != STRIDED_OK)
        return status;
    strided_memory_resource_props props = {true, true, false, -1, false};
    return create_builtin(op, &cuda_ops, s, props, out);
}

strided_status strided_device_resource_create(int device,
                                              strided_memory_resource **out)
{
    const char *op = "device_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, DEVICE, device, &s);
    if (status != STRIDED_OK)
        return status;
    const strided__driver *cu = s->cu;
    CUdevice dev;
    int pools = 0;
    status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGet(&dev, device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, cu->cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                         dev));
    if (status == STRIDED_OK && !pools)
        status = strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                               "device %d does not support memory pools",
                               device);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetMemPool(&s->pool, dev));
    /* Keep freed memory cached in the pool instead of returning it to the
     * system at every synchronization (cuda.core does the same). */
    uint64_t threshold = UINT64_MAX;
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, cu->cuMemPoolSetAttribute(s->pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                          &threshold));
    if (status != STRIDED_OK) {
        free_state(s);
        return status;
    }
    strided_memory_resource_props props = {false, true, false, device, true};
    return create_builtin(op, &cuda_ops, s, props, out);
}

strided_status strided_managed_resource_create(int device,
                                               strided_memory_resource **out)
{
    const char *op = "managed_resource_create";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    cuda_state *s = NULL;
    strided_status status = cuda_state_new(op, MANAGED, device, &s);
    if (status != STRIDED_OK)
        return status;
    strided_memory_resource_props props = {true, true, true, device, false};
    return create_builtin(op, &cuda_ops, s, props, out);
}
