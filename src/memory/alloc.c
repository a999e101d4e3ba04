/*
 * memory/alloc.c: the library's allocator pair, with failure injection for tests.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "memory/memory.h"

/* Allocations left before the injected failure; negative: none armed. */
static atomic_long countdown = -1;

void strided__fail_allocation_after(long n)
{
    atomic_store(&countdown, n < 0 ? -1 : n);
}

/* True when this allocation is the one chosen to fail. */
static bool injected_failure(void)
{
    long n = atomic_load(&countdown);
    while (n >= 0) {
        if (atomic_compare_exchange_weak(&countdown, &n, n - 1))
            return n == 0;
    }
    return false;
}

void *strided__malloc(size_t size)
{
    if (injected_failure())
        return NULL;
    return malloc(size == 0 ? 1 : size);
}

void *strided__aligned_alloc(size_t alignment, size_t size)
{
    if (injected_failure())
        return NULL;
    /* aligned_alloc wants a size that is a multiple of the alignment. */
    size_t rounded = size == 0 ? alignment : size;
    if (rounded % alignment != 0) {
        if (rounded > SIZE_MAX - alignment)
            return NULL;
        rounded += alignment - rounded % alignment;
    }
    return aligned_alloc(alignment, rounded);
}

void strided__free(void *p)
{
    free(p);
}
