/*
 * strided/resource.h: memory resources, the allocators behind buffers.
 *
 * A memory resource allocates and frees memory of one kind, possibly in
 * stream order, and says where that memory can be reached from (host,
 * device, managed, which device). Users implement one by filling a
 * strided_memory_resource_ops table; these are built in:
 *
 *   host     aligned host memory from the C library; never touches CUDA
 *   pinned   page-locked host memory (cuMemHostAlloc, portable and mapped),
 *            or from a pinned memory pool the resource creates
 *   legacy pinned
 *            page-locked host memory from cuMemAllocHost
 *   device   device memory from the device's current memory pool or from a
 *            pool the resource creates
 *   managed  managed memory (cuMemAllocManaged, attached globally), or from
 *            a managed memory pool the resource creates
 *
 * Memory pools. Memory from a pool is allocated and freed in stream order
 * (cuMemAllocFromPoolAsync / cuMemFreeAsync). The device resource without
 * options uses the device's current pool, which it does not own: it raises
 * the pool's release threshold (when it is 0) so that freed memory stays
 * cached, and never destroys it. The *_pool_resource_create functions given
 * options create a pool (cuMemPoolCreate) that the resource owns, with the
 * release threshold left at 0, and destroy it when the resource is closed
 * or its last reference goes; the driver gives a destroyed pool's memory
 * back once the last allocation made from it is freed. The options follow
 * cuda.core's DeviceMemoryResourceOptions, PinnedMemoryResourceOptions and
 * ManagedMemoryResourceOptions, and the create functions check them by
 * cuda.core's rules, with its messages. Device and pinned pools created
 * with ipc_enabled export their memory to other processes (IPC; Linux
 * only): strided/ipc.h.
 *
 * CUDA work runs in the primary context of the resource's device, made
 * current for the call and restored afterwards, so no context needs to be
 * current in the caller, and deallocation may happen on any thread.
 *
 * Ownership: a resource is reference-counted (atomic count; retain and
 * release from any thread). Each buffer allocated from a resource holds a
 * reference to it, so a resource outlives its allocations. When the last
 * reference goes, the ops' destroy callback (if any) runs once, and a
 * built-in resource destroys the pool it owns. Closing a resource
 * (strided_memory_resource_close) ends its allocations, not its life:
 * memory allocated before stays valid until its buffers let go.
 */
#ifndef STRIDED_RESOURCE_H
#define STRIDED_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    strided_status (*allocate)(void *self, size_t size, void *stream, void **out_ptr);
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
    const strided_memory_resource_ops *ops, void *self, const strided_memory_resource_props *props,
    strided_memory_resource **out);

/* Host memory aligned to alignment bytes (a power of two; 0 means 64).
 * Never touches CUDA.
 *   out  out-parameter: the new resource with one reference
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out or an alignment that
 * is not a power of two, STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_host_resource_create(size_t alignment,
                                                        strided_memory_resource **out);

/* Page-locked host memory, reachable from every device (cuMemHostAlloc with
 * PORTABLE | DEVICEMAP); device_id -1. Freed after synchronizing the
 * deallocation stream. out is the new resource with one reference.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out (checked first, also
 * without a driver), STRIDED_ERR_NO_CUDA_DRIVER without a driver. */
STRIDED_API strided_status strided_pinned_resource_create(strided_memory_resource **out);

/* Page-locked host memory from cuMemAllocHost, freed with cuMemFreeHost
 * after synchronizing the deallocation stream (cuda.core's
 * LegacyPinnedMemoryResource); host and device accessible, device_id -1.
 * out is the new resource with one reference. Errors as
 * strided_pinned_resource_create. */
STRIDED_API strided_status strided_legacy_pinned_resource_create(strided_memory_resource **out);

/* Device memory of device from its current memory pool, in stream order:
 * strided_device_pool_resource_create(device, NULL, out). */
STRIDED_API strided_status strided_device_resource_create(int device,
                                                          strided_memory_resource **out);

/* Managed memory (cuMemAllocManaged, CU_MEM_ATTACH_GLOBAL), allocated with
 * device's primary context current; device_id is that device. Freed after
 * synchronizing the deallocation stream. Errors as
 * strided_device_resource_create, without the memory pool ones. */
STRIDED_API strided_status strided_managed_resource_create(int device,
                                                           strided_memory_resource **out);

/* Where memory lives: where a pool puts its memory, where a managed pool
 * or managed memory prefers it to be, where managed memory is prefetched
 * to (strided/buffer.h). */
typedef enum strided_memory_location_type {
    STRIDED_LOCATION_NONE = 0,             /* no pool, or a managed pool without a
                                               preferred location, no preference,
                                               no hint; id -1 */
    STRIDED_LOCATION_DEVICE = 1,           /* a device; id is its ordinal */
    STRIDED_LOCATION_HOST = 2,             /* host memory the OS places; id -1 */
    STRIDED_LOCATION_HOST_NUMA = 3,        /* host memory of NUMA node id */
    STRIDED_LOCATION_HOST_NUMA_CURRENT = 4 /* host memory of the NUMA node of the
                                               calling thread, for managed memory
                                               (never a pool's); id -1 */
} strided_memory_location_type;

typedef struct strided_memory_location {
    strided_memory_location_type type;
    int id;
} strided_memory_location;

/* Options of a device memory pool (cuda.core's
 * DeviceMemoryResourceOptions). */
typedef struct strided_device_pool_options {
    bool ipc_enabled; /* the pool exports its memory to other processes
                         (POSIX file-descriptor handles; strided/ipc.h) */
    int64_t max_size; /* the most bytes the pool reserves; 0: the driver's
                         default; never negative */
} strided_device_pool_options;

/* Options of a pinned host memory pool (cuda.core's
 * PinnedMemoryResourceOptions). */
typedef struct strided_pinned_pool_options {
    bool ipc_enabled; /* as for a device pool */
    int64_t max_size; /* as for a device pool */
    bool has_numa_id; /* false: the OS places the memory (location HOST) */
    int64_t numa_id;  /* with has_numa_id: the host NUMA node to place it
                          on (location HOST_NUMA), >= 0 */
} strided_pinned_pool_options;

/* Options of a managed memory pool (cuda.core's
 * ManagedMemoryResourceOptions): where its memory prefers to live.
 * preferred_location_type says how to read preferred_location:
 *   NULL         preferred_location alone says it: not given, no
 *                preference; -1, the host; a device ordinal (>= 0)
 *   "device"     the device preferred_location, which must be given
 *                and >= 0
 *   "host"       the host; preferred_location must not be given
 *   "host_numa"  the host NUMA node preferred_location (>= 0), or when
 *                it is not given the node closest to the resource's
 *                device (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) */
typedef struct strided_managed_pool_options {
    const char *preferred_location_type; /* borrowed for the call */
    bool has_preferred_location;         /* false: None */
    int64_t preferred_location;
} strided_managed_pool_options;

/* Device memory of device, in stream order, from a memory pool: with
 * options NULL the device's current pool, not owned (its release threshold
 * is raised to UINT64_MAX when it is 0); with options a new pool of device
 * memory on device (cuMemPoolCreate: location the device, the driver's
 * PINNED allocation type of every non-managed pool, POSIX file-descriptor
 * export handles when options->ipc_enabled and none otherwise,
 * options->max_size), owned by the resource. device_id is device.
 *   device   the device's ordinal
 *   options  borrowed for the call; NULL for the device's current pool
 *   out      out-parameter: the new resource with one reference
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL out (also without a driver); STRIDED_ERR_NO_CUDA_DRIVER;
 * STRIDED_ERR_INVALID_ARGUMENT for a device that does not exist;
 * STRIDED_ERR_OVERFLOW for a negative max_size ("can't convert negative
 * value to size_t", as cuda.core); STRIDED_ERR_UNSUPPORTED when the device
 * has no memory pools, and for ipc_enabled when its pools cannot export
 * POSIX file descriptors ("IPC-enabled memory pools need POSIX file
 * descriptor handles, which the memory pools of device 0 do not support")
 * or the platform is not Linux;
 * STRIDED_ERR_CUDA for a failing driver call (cuMemPoolCreate refuses a
 * pool the device cannot make); STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_device_pool_resource_create(
    int device, const strided_device_pool_options *options, strided_memory_resource **out);

/* Page-locked host memory: with options NULL as
 * strided_pinned_resource_create (no pool); with options from a new pinned
 * memory pool on the host (cuMemPoolCreate: location HOST, or HOST_NUMA on
 * options->numa_id; PINNED allocation type; export handles as for a
 * device pool;
 * options->max_size), owned by the resource, in stream order. Host and
 * device accessible, device_id -1; the driver calls run in device 0's
 * primary context.
 *   options  borrowed for the call; NULL for cuMemHostAlloc
 *   out      out-parameter: the new resource with one reference
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL out; STRIDED_ERR_OVERFLOW for a negative max_size (as
 * strided_device_pool_resource_create); STRIDED_ERR_INVALID_ARGUMENT for a
 * negative numa_id ("numa_id must be >= 0, got -2", as cuda.core) and
 * STRIDED_ERR_OVERFLOW for one beyond a C int; STRIDED_ERR_NO_CUDA_DRIVER;
 * STRIDED_ERR_INVALID_ARGUMENT when there is no device 0;
 * STRIDED_ERR_UNSUPPORTED for ipc_enabled where device 0's pools cannot
 * export POSIX file descriptors; STRIDED_ERR_CUDA for a failing driver
 * call (cuMemPoolCreate refuses a pool the system cannot make);
 * STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_pinned_pool_resource_create(
    const strided_pinned_pool_options *options, strided_memory_resource **out);

/* Managed memory: with options NULL as strided_managed_resource_create
 * (cuMemAllocManaged, device_id device); with options from a new managed
 * memory pool (cuMemPoolCreate: managed allocation type, which needs a
 * CUDA 13 driver; location the preferred location, see
 * strided_managed_pool_options), owned by the resource, in stream order.
 * Host and device accessible and managed; device_id is the preferred
 * device, -1 when the preferred location is not a device. The driver calls
 * run in device's primary context.
 *   device   the device whose context the resource uses
 *   options  borrowed for the call; NULL for cuMemAllocManaged
 *   out      out-parameter: the new resource with one reference
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL out; STRIDED_ERR_INVALID_ARGUMENT for a preferred_location_type
 * that is none of the three ("'bogus' is not a valid
 * ManagedMemoryLocationType. Must be None, 'device', 'host' or
 * 'host_numa'") and for a preferred_location the type does not allow, with
 * cuda.core's sentences: "preferred_location must be a device ordinal
 * (>= 0), -1 for host, or None for no preference, got -2", "... (>= 0)
 * when preferred_location_type is 'device', got None", "preferred_location
 * must be None when preferred_location_type is 'host', got 0",
 * "preferred_location must be a NUMA node ID (>= 0) or None when
 * preferred_location_type is 'host_numa', got -1";
 * STRIDED_ERR_OVERFLOW for a preferred_location beyond a C int;
 * STRIDED_ERR_NO_CUDA_DRIVER; STRIDED_ERR_INVALID_ARGUMENT for a device,
 * or a preferred device, that does not exist; STRIDED_ERR_UNSUPPORTED when
 * "host_numa" without a node finds that device has no host NUMA node
 * ("Cannot determine host NUMA ID for the current CUDA device. ...");
 * STRIDED_ERR_CUDA for a failing driver call; STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_managed_pool_resource_create(
    int device, const strided_managed_pool_options *options, strided_memory_resource **out);

/* The memory pool behind a resource. */
typedef struct strided_memory_pool_info {
    void *handle;                     /* the CUmemoryPool; NULL when the resource allocates
                     without a pool, and once it is closed */
    bool owned;                       /* the resource created the pool and destroys it (false
                     once closed) */
    strided_memory_location location; /* where the pool puts its memory (a
                     managed pool: where it prefers it); NONE without a
                     pool. Kept after closing. */
} strided_memory_pool_info;

/* mr's memory pool; user resources and resources that allocate without a
 * pool have none (handle NULL, location NONE). mr must not be NULL. */
STRIDED_API strided_memory_pool_info strided_memory_resource_pool(
    const strided_memory_resource *mr);

/* The attributes of a memory pool (cuMemPoolGetAttribute). */
typedef struct strided_memory_pool_attributes {
    bool reuse_follow_event_dependencies;
    bool reuse_allow_opportunistic;
    bool reuse_allow_internal_dependencies;
    uint64_t release_threshold;    /* reserved bytes kept at a
                                      synchronization */
    uint64_t reserved_mem_current; /* bytes of backing memory */
    uint64_t reserved_mem_high;    /* its high-water mark */
    uint64_t used_mem_current;     /* bytes allocated and not freed */
    uint64_t used_mem_high;        /* its high-water mark */
} strided_memory_pool_attributes;

/* Read the attributes of mr's pool, now, with the pool's device's primary
 * context current.
 *   mr   borrowed
 *   out  out-parameter, untouched on failure
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL mr or out, and for a
 * closed mr (the sentence of strided_memory_resource_close);
 * STRIDED_ERR_UNSUPPORTED when mr has no pool ("the memory resource
 * allocates without a memory pool"); STRIDED_ERR_CUDA for a failing driver
 * call. */
STRIDED_API strided_status strided_memory_resource_pool_attributes(
    const strided_memory_resource *mr, strided_memory_pool_attributes *out);

/* Peer access to a device memory pool. A device pool's memory is reached
 * by its own device; other devices reach it once the pool grants them
 * access (cuMemPoolSetAccess, read and write), which covers every
 * allocation of the pool, past and future. These functions take the pools
 * of device resources (strided_device_pool_resource_create, with or without
 * options) and refuse every other resource with STRIDED_ERR_UNSUPPORTED
 * ("peer access is granted by device memory pools only"). The pool's own
 * device is never listed, and is left out wherever it is named. The driver
 * calls run in the pool's device's primary context. */

/* The devices other than its own that may read and write mr's pool's
 * memory (cuMemPoolGetAccess of each device), in ascending order.
 *   mr            borrowed
 *   out_devices   out-parameter: room for capacity device ordinals (may be
 *                 NULL when capacity is 0)
 *   out_count     out-parameter: how many were written
 * The device count (strided_driver_info_init) is always room enough.
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL mr or out_count, or a NULL out_devices with a capacity; for a
 * closed mr (its sentence: "DeviceMemoryResource has been closed");
 * STRIDED_ERR_UNSUPPORTED for a resource that is not a device pool's;
 * STRIDED_ERR_CUDA for a failing driver call; STRIDED_ERR_INVALID_ARGUMENT
 * when more devices have access than capacity holds ("peer_access: 3
 * devices have access, room for 2"). The outputs are untouched on
 * failure. */
STRIDED_API strided_status strided_memory_resource_peer_access(const strided_memory_resource *mr,
                                                               int *out_devices, size_t capacity,
                                                               size_t *out_count);

/* Grant the devices of grant access to mr's pool and revoke the access of
 * the devices of revoke, in one cuMemPoolSetAccess: only the changes are
 * made (a device granted already, or revoked without access, changes
 * nothing), and no call is made when there is none. The pool's own device
 * is left out of both; a device in both lists is granted. A device of
 * revoke that does not exist is ignored (it has no access to revoke).
 *   mr      borrowed
 *   grant   n_grant device ordinals (may be NULL when n_grant is 0)
 *   revoke  n_revoke device ordinals (may be NULL when n_revoke is 0)
 * Returns, in the order of the checks: STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL mr, a NULL list with a count, and a closed mr; STRIDED_ERR_UNSUPPORTED
 * for a resource that is not a device pool's; STRIDED_ERR_INVALID_ARGUMENT
 * for a device of grant that does not exist ("device 5 does not exist;
 * there are 2 CUDA devices") and for devices of grant that cannot reach
 * the pool's device (cuDeviceCanAccessPeer), all named, with cuda.core's
 * sentence ("Device 0 cannot access peer(s): 1, 2"); STRIDED_ERR_CUDA for
 * a failing driver call; STRIDED_ERR_OUT_OF_MEMORY. Nothing is changed on
 * failure. */
STRIDED_API strided_status strided_memory_resource_update_peer_access(
    strided_memory_resource *mr, const int *grant, size_t n_grant, const int *revoke,
    size_t n_revoke);

/* Grant one device access to mr's pool: strided_memory_resource_update_peer_access
 * with grant {device}, whose refusal of a device that cannot reach the
 * pool's device reads in cuda.core's words for one device ("Device 0 cannot
 * access peer: 1"). Nothing happens for the pool's own device or one
 * granted already. */
STRIDED_API strided_status strided_memory_resource_grant_peer_access(strided_memory_resource *mr,
                                                                     int device);

/* Make exactly the devices of devices (besides the pool's own) the ones
 * with access to mr's pool: the devices with access that are not listed
 * are revoked, the listed ones without access granted, in one
 * cuMemPoolSetAccess (none when nothing changes). Duplicates and the
 * pool's own device are allowed.
 *   mr       borrowed
 *   devices  count device ordinals (may be NULL when count is 0)
 * Returns what strided_memory_resource_update_peer_access returns, the
 * listed devices standing for grant. Nothing is changed on failure. */
STRIDED_API strided_status strided_memory_resource_set_peer_access(strided_memory_resource *mr,
                                                                   const int *devices,
                                                                   size_t count);

/* Close mr: every allocation from it from now on fails with
 * STRIDED_ERR_INVALID_ARGUMENT and cuda.core's sentence for its kind
 * ("DeviceMemoryResource has been closed"; PinnedMemoryResource,
 * LegacyPinnedMemoryResource, ManagedMemoryResource, HostMemoryResource;
 * "the memory resource has been closed" for user resources), and a pool mr
 * owns is destroyed now (cuMemPoolDestroy; the driver frees its memory once
 * the last allocation made from it is freed). Memory allocated before
 * stays valid and is freed as usual, when its buffers let go; mr stays
 * alive until its last reference goes. Closing a closed resource does
 * nothing. Closing must not race with allocations from mr on other
 * threads: one that began before may fail with the driver's error.
 *   mr  borrowed; must not be NULL
 * Returns STRIDED_OK, or STRIDED_ERR_CUDA when destroying the pool fails
 * (mr is closed all the same, and the pool is left to the driver). */
STRIDED_API strided_status strided_memory_resource_close(strided_memory_resource *mr);

/* Whether mr was closed. mr must not be NULL. */
STRIDED_API bool strided_memory_resource_is_closed(const strided_memory_resource *mr);

/* Add a reference; returns mr. NULL is allowed and returned. */
STRIDED_API strided_memory_resource *strided_memory_resource_retain(strided_memory_resource *mr);

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
