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
strided_status strided__resource_allocate(strided_memory_resource *mr,
                                          size_t size, void *stream,
                                          void **out_ptr);
void strided__resource_deallocate(strided_memory_resource *mr, void *ptr,
                                  size_t size, void *stream);

/* Whether mr is one of the built-in resources, whose memory is of the kind
 * its properties say; a user's resource only claims so. */
bool strided__resource_is_builtin(const strided_memory_resource *mr);

#endif
