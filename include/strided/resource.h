/*
 * strided/resource.h: memory resources, the allocators behind buffers.
 *
 * A memory resource allocates and frees memory of one kind, possibly in
 * stream order, and says where that memory can be reached from (host,
 * device, managed, which device). Users implement one by filling a
 * strided_memory_resource_ops table; four are built in:
 *
 *   host     aligned host memory from the C library; never touches CUDA
 *   pinned   page-locked host memory (cuMemHostAlloc, portable and mapped)
 *   device   device memory from the device's current memory pool, allocated
 *            and freed in stream order (cuMemAllocFromPoolAsync /
 *            cuMemFreeAsync); the pool's release threshold is raised so
 *            freed memory stays cached in the pool
 *   managed  managed memory (cuMemAllocManaged, attached globally)
 *
 * CUDA work runs in the primary context of the resource's device, made
 * current for the call and restored afterwards, so no context needs to be
 * current in the caller, and deallocation may happen on any thread.
 *
 * Ownership: a resource is reference-counted (atomic count; retain and
 * release from any thread). Each buffer allocated from a resource holds a
 * reference to it, so a resource outlives its allocations. When the last
 * reference goes, the ops' destroy callback (if any) runs once.
 */
#ifndef STRIDED_RESOURCE_H
#define STRIDED_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "strided/api.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strided_memory_resource strided_memory_resource;

/* What a resource's memory is. */
typedef struct strided_memory_resource_props {
    bool host_accessible;   /* the host can dereference its memory */
    bool device_accessible; /* a CUDA device can dereference its memory */
    bool managed;           /* CUDA managed (unified) memory */
    int device_id;          /* the device it belongs to; -1 for none */
    bool pooled;            /* allocations come from a CUDA memory pool */
} strided_memory_resource_props;

/* The callbacks of a user-defined resource. self is the pointer given to
 * strided_memory_resource_create. stream is an opaque CUstream (NULL: the
 * legacy default stream); host-only resources may ignore it. */
typedef struct strided_memory_resource_ops {
    /* Allocate size bytes (size may be 0) and write the address to *out_ptr.
     * Return STRIDED_OK, or a failure status after recording a message in
     * the resource's own words with strided_set_last_error (the caller
     * reports it). Required. */
    strided_status (*allocate)(void *self, size_t size, void *stream,
                               void **out_ptr);
    /* Free an allocation made by allocate. Called exactly once per
     * allocation, when the last holder of its buffer lets go, on whichever
     * thread that is. Must not fail; it has nobody to report to. Required. */
    void (*deallocate)(void *self, void *ptr, size_t size, void *stream);
    /* Called once when the resource's last reference goes. May be NULL. */
    void (*destroy)(void *self);
    /* The usable size of the allocation at ptr that allocate just made for
     * size bytes, for resources that hand out memory they did not size
     * themselves (a resource written in another language returning its own
     * buffer objects). May be NULL: then allocations are exactly the size
     * asked for. */
    size_t (*allocation_size)(void *self, void *ptr, size_t size);
} strided_memory_resource_ops;

/* What libstrided checks of every allocation a resource makes, before it
 * uses a byte of it: a size above INT64_MAX is refused without calling
 * allocate; after allocate returns STRIDED_OK, a NULL address for a
 * non-zero size, an allocation_size below the size asked for, and a range
 * that wraps past the top of the address space are refused. A refused
 * allocation is handed back to deallocate at once (exactly once, as
 * always) and the caller gets STRIDED_ERR_INVALID_ARGUMENT naming what was
 * wrong; nothing was written to the memory. Copies check the memory kind
 * of their temporaries too (strided/copy.h). */

/* Make a resource from user callbacks.
 *   ops    the callbacks; borrowed, must outlive the resource (a static
 *          table is typical)
 *   self   passed to every callback; owned by the caller until destroy
 *   props  copied
 *   out    out-parameter: the new resource with one reference
 * Returns STRIDED_ERR_INVALID_ARGUMENT when ops, allocate, deallocate, props
 * or out is NULL, STRIDED_ERR_OUT_OF_MEMORY when the resource cannot be
 * allocated (destroy is not called then). */
STRIDED_API strided_status strided_memory_resource_create(
    const strided_memory_resource_ops *ops, void *self,
    const strided_memory_resource_props *props,
    strided_memory_resource **out);

/* Host memory aligned to alignment bytes (a power of two; 0 means 64).
 * Never touches CUDA.
 *   out  out-parameter: the new resource with one reference
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out or an alignment that
 * is not a power of two, STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_host_resource_create(
    size_t alignment, strided_memory_resource **out);

/* Page-locked host memory, reachable from every device (cuMemHostAlloc with
 * PORTABLE | DEVICEMAP); device_id -1. Freed after synchronizing the
 * deallocation stream. out is the new resource with one reference.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out (checked first, also
 * without a driver), STRIDED_ERR_NO_CUDA_DRIVER without a driver. */
STRIDED_API strided_status strided_pinned_resource_create(
    strided_memory_resource **out);

/* Device memory of device from its current memory pool, in stream order.
 * out is the new resource with one reference.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out (checked first, also
 * without a driver), STRIDED_ERR_NO_CUDA_DRIVER without a driver,
 * STRIDED_ERR_INVALID_ARGUMENT for a device that does not exist,
 * STRIDED_ERR_UNSUPPORTED when the device has no memory pools,
 * STRIDED_ERR_CUDA for a failing driver call. */
STRIDED_API strided_status strided_device_resource_create(
    int device, strided_memory_resource **out);

/* Managed memory (cuMemAllocManaged, CU_MEM_ATTACH_GLOBAL), allocated with
 * device's primary context current; device_id is that device. Freed after
 * synchronizing the deallocation stream. Errors as
 * strided_device_resource_create. */
STRIDED_API strided_status strided_managed_resource_create(
    int device, strided_memory_resource **out);

/* Add a reference; returns mr. NULL is allowed and returned. */
STRIDED_API strided_memory_resource *strided_memory_resource_retain(
    strided_memory_resource *mr);

/* Drop a reference; the last one runs destroy. NULL is allowed. */
STRIDED_API void strided_memory_resource_release(strided_memory_resource *mr);

/* The resource's properties. mr must not be NULL. */
STRIDED_API strided_memory_resource_props strided_memory_resource_properties(
    const strided_memory_resource *mr);

/* The self pointer given at creation; NULL for the built-ins. mr must not
 * be NULL. */
STRIDED_API void *strided_memory_resource_self(const strided_memory_resource *mr);

#ifdef __cplusplus
}
#endif

#endif
