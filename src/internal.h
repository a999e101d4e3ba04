/*
 * internal.h: helpers shared by the library's modules; not installed.
 */
#ifndef STRIDED_INTERNAL_H
#define STRIDED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/layout.h"
#include "strided/resource.h"
#include "strided/status.h"

#if defined(__GNUC__)
#define STRIDED_PRINTF(fmt_index, first_arg) \
    __attribute__((format(printf, fmt_index, first_arg)))
#else
#define STRIDED_PRINTF(fmt_index, first_arg)
#endif

/* Record "op: <formatted reason>" as the calling thread's last error and
 * return code. The one way a failing site reports. */
strided_status strided__fail(strided_status code, const char *op,
                             const char *fmt, ...) STRIDED_PRINTF(3, 4);

/* Checked int64 arithmetic: true on overflow (then *out is unspecified). */
static inline bool strided__mul_overflow(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

static inline bool strided__add_overflow(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* The library's one allocator pair: every allocation libstrided makes for
 * its own objects, and the host resource's memory, go through these, so
 * tests can make an allocation fail (strided__fail_allocation_after). */
void *strided__malloc(size_t size);
void *strided__aligned_alloc(size_t alignment, size_t size);
void strided__free(void *p);

/* Let the next n allocations succeed and make the one after them fail,
 * once (n = 0: the next one fails); n < 0 disarms. For tests; thread-safe. */
void strided__fail_allocation_after(long n);

/* Record a CUDA failure code for strided_last_cuda_error (0 clears it); the
 * next strided__fail without a CUDA code clears it. */
void strided__set_last_cuda_error(int code);

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

/* A text being written into caller storage the way snprintf writes: it
 * never writes past size bytes, always NUL-terminates when size > 0, and
 * counts in len the length the full text needs. */
typedef struct strided__text {
    char *buf;
    size_t size;
    size_t len;
} strided__text;

/* Append formatted text. */
void strided__text_append(strided__text *t, const char *fmt, ...)
    STRIDED_PRINTF(2, 3);

/* Append n int64 values as a Python tuple: "(a,b)", "(a,)" or "()". */
void strided__text_tuple(strided__text *t, int n, const int64_t *v);

#endif
