/*
 * memory/memory.h: the memory layer's internals shared with the layers
 * above it: the library's allocator and the calls into a memory resource.
 * Not installed.
 */
#ifndef STRIDED_MEMORY_H
#define STRIDED_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/base.h"
#include "cuda/driver.h"
#include "strided/buffer.h"
#include "strided/resource.h"

/* The library's one allocator pair: every allocation libstrided makes for
 * its own objects, and the host resource's memory, go through these, so
 * tests can make an allocation fail (strided__fail_allocation_after). */
void *strided__malloc(size_t size);
void *strided__aligned_alloc(size_t alignment, size_t size);
void strided__free(void *p);

/* Let the next n allocations succeed and make the one after them fail,
 * once (n = 0: the next one fails); n < 0 disarms. For tests; thread-safe. */
void strided__fail_allocation_after(long n);

/* Call a resource's allocate / deallocate (resource.c; used by buffer.c).
 * allocate checks what the callback returns (strided/resource.h) and hands
 * a refused allocation back to deallocate. */
strided_status strided__resource_allocate(strided_memory_resource *mr, size_t size, void *stream,
                                          void **out_ptr);
void strided__resource_deallocate(strided_memory_resource *mr, void *ptr, size_t size,
                                  void *stream);

/* Whether mr is one of the built-in resources, whose memory is of the kind
 * its properties say; a user's resource only claims so. */
bool strided__resource_is_builtin(const strided_memory_resource *mr);

/* The device whose primary context runs work on memory of info: its own,
 * else device 0. */
int strided__memory_device(const strided_memory_info *info);

/* The driver in *cu, with device's primary context made current in *scope
 * (strided__context_leave ends it). */
strided_status strided__enter_device(const char *op, int device, const strided__driver **cu,
                                     strided__context_scope *scope);

/* Fail with STRIDED_ERR_INVALID_ARGUMENT unless device is the ordinal of a
 * device that exists ("device 5 does not exist; there are 2 CUDA
 * devices"); *out_count (may be NULL) is the device count. */
strided_status strided__check_device(const char *op, const strided__driver *cu, int device,
                                     int *out_count);

/* The location types an operation takes, as a mask of
 * 1 << strided_memory_location_type. */
#define STRIDED__ANY_LOCATION                                          \
    ((1u << STRIDED_LOCATION_DEVICE) | (1u << STRIDED_LOCATION_HOST) | \
     (1u << STRIDED_LOCATION_HOST_NUMA) | (1u << STRIDED_LOCATION_HOST_NUMA_CURRENT))

/* The checks of a location that need no driver (strided/buffer.h): a
 * known type, NONE only where allowed has it, a type of allowed (else
 * "<what> does not support location_type='host_numa'"), a device id or
 * NUMA node >= 0. STRIDED_ERR_INVALID_ARGUMENT. */
strided_status strided__check_location(const char *op, const char *what,
                                       strided_memory_location loc, unsigned allowed);

/* The driver's CUmemLocation for loc (NONE: type INVALID, id 0). */
CUmemLocation strided__cu_location(strided_memory_location loc);

/* Raise pool's release threshold from 0 (the driver's default) to
 * UINT64_MAX, so that memory freed to the pool stays cached instead of
 * going back to the system at every synchronisation, which makes the next
 * allocation map it again (cuda.core does the same to the pools it uses).
 * Any other threshold is left as it is. STRIDED_ERR_CUDA. */
strided_status strided__pool_keep_freed(const char *op, const strided__driver *cu,
                                        CUmemoryPool pool);

/* One temporary of a copy: a buffer of size bytes from resource mr on
 * stream, for the host (device < 0) or for work on device (buffer.c).
 * Beyond the checks of every allocation (strided/resource.h), the memory
 * must be reachable from where the copy uses it: memory of a user's
 * resource is classified by the driver, not taken at the resource's word.
 * Otherwise STRIDED_ERR_INVALID_ARGUMENT, reported as a failure of the copy
 * ("the host allocator gave memory the host cannot reach (...)", "the
 * device allocator gave memory of another device (...)"), the buffer given
 * back unused; and the errors of strided_buffer_alloc and
 * strided_memory_info_query. *out holds one reference on success and is
 * NULL on failure. */
strided_status strided__buffer_alloc_temporary(strided_memory_resource *mr, size_t size,
                                               void *stream, int device, strided_buffer **out);

#endif
