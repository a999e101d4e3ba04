/*
 * base/base.h: what every layer of the library uses, and nothing else: the
 * failure report, checked int64 arithmetic and text written into caller
 * storage. Not installed.
 */
#ifndef STRIDED_BASE_H
#define STRIDED_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/status.h"

#if defined(__GNUC__)
#define STRIDED_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define STRIDED_PRINTF(fmt_index, first_arg)
#endif

/* Record "op: <formatted reason>" as the calling thread's last error and
 * return code. The one way a failing site reports. */
strided_status strided__fail(strided_status code, const char *op, const char *fmt, ...)
    STRIDED_PRINTF(3, 4);

/* Checked int64 arithmetic: true on overflow (then *out is unspecified). */
static inline bool strided__mul_overflow(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

static inline bool strided__add_overflow(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* Record a CUDA failure code for strided_last_cuda_error (0 clears it); the
 * next strided__fail without a CUDA code clears it. */
void strided__set_last_cuda_error(int code);

/* A text being written into caller storage the way snprintf writes: it
 * never writes past size bytes, always NUL-terminates when size > 0, and
 * counts in len the length the full text needs. */
typedef struct strided__text {
    char *buf;
    size_t size;
    size_t len;
} strided__text;

/* Append formatted text. */
void strided__text_append(strided__text *t, const char *fmt, ...) STRIDED_PRINTF(2, 3);

/* Append the n characters at s, with no formatting (no printf: for text
 * made on every call of a fast path). */
void strided__text_put(strided__text *t, const char *s, size_t n);

/* Append n int64 values as a Python tuple: "(a,b)", "(a,)" or "()". */
void strided__text_tuple(strided__text *t, int n, const int64_t *v);

#endif
