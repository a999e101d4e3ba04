/*
 * fuzz_check.h: what the harnesses check with, shared so that each rule is
 * written once: reporting a finding, exact (128-bit) offset arithmetic, the
 * brute-force enumeration of a layout's elements, the layout invariant of
 * strided/layout.h, the statuses the constructors must answer, and the
 * contract of a failed call (output untouched, a message of its own).
 *
 * A finding prints what broke, with the layouts involved, and aborts; the
 * fuzzer then keeps the input as a crash artifact.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strided/layout.h"
#include "strided/status.h"

/* Layouts with at most this many elements are enumerated element by
 * element. */
#define FUZZ_ENUM_LIMIT 4096

typedef __int128 fuzz_i128;

/* Far outside int64 but far from the int128 limits: sums of a few of
 * these cannot overflow. */
#define FUZZ_I128_CLAMP ((fuzz_i128)1 << 120)

static inline fuzz_i128 fuzz_clamp(fuzz_i128 v)
{
    return v > FUZZ_I128_CLAMP ? FUZZ_I128_CLAMP : v < -FUZZ_I128_CLAMP ? -FUZZ_I128_CLAMP : v;
}

/* v * x, saturated at FUZZ_I128_CLAMP. Assumes: |v| <= FUZZ_I128_CLAMP. */
static inline fuzz_i128 fuzz_clamp_mul(fuzz_i128 v, int64_t x)
{
    if (v == 0 || x == 0)
        return 0;
    fuzz_i128 m = x < 0 ? -(fuzz_i128)x : x;
    if ((v < 0 ? -v : v) > FUZZ_I128_CLAMP / m)
        return (v < 0) != (x < 0) ? -FUZZ_I128_CLAMP : FUZZ_I128_CLAMP;
    return v * x;
}

static inline bool fuzz_fits64(fuzz_i128 v)
{
    return v >= INT64_MIN && v <= INT64_MAX;
}

/* The product of two int64 values, exact. */
static inline fuzz_i128 fuzz_mul(int64_t a, int64_t b)
{
    return (fuzz_i128)a * (fuzz_i128)b;
}

static inline void fuzz_i128_text(fuzz_i128 v, char *buf, size_t size)
{
    if (fuzz_fits64(v)) {
        snprintf(buf, size, "%" PRId64, (int64_t)v);
        return;
    }
    char digits[64];
    int n = 0;
    unsigned __int128 m = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v
                                : (unsigned __int128)v;
    do {
        digits[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m != 0);
    size_t k = 0;
    if (v < 0 && k + 1 < size)
        buf[k++] = '-';
    while (n > 0 && k + 1 < size)
        buf[k++] = digits[--n];
    buf[k] = '\0';
}

/* A layout as "(shape):(strides)+offset isz=N implicit", written here and
 * not by strided_layout_format, which is under test. */
typedef struct fuzz_text {
    char s[3200];
} fuzz_text;

static inline const char *fuzz_show(const strided_layout *l, fuzz_text *t)
{
    size_t k = 0, cap = sizeof t->s;
    int n = l->ndim < 0 ? 0 : l->ndim > STRIDED_MAX_NDIM ? STRIDED_MAX_NDIM : l->ndim;
    const int64_t *rows[2] = {l->shape, l->strides};
    for (int r = 0; r < 2; r++) {
        k += (size_t)snprintf(t->s + k, cap - k, r ? ":(" : "(");
        for (int i = 0; i < n && k < cap - 64; i++)
            k += (size_t)snprintf(t->s + k, cap - k, "%s%" PRId64, i ? "," : "", rows[r][i]);
        k += (size_t)snprintf(t->s + k, cap - k, n == 1 ? ",)" : ")");
    }
    snprintf(t->s + k, cap - k, "%+" PRId64 " ndim=%d itemsize=%d%s", l->slice_offset, (int)l->ndim,
             (int)l->itemsize, l->implicit_strides ? " implicit" : "");
    return t->s;
}

static void fuzz_finding(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

static void fuzz_finding(const char *file, int line, const char *cond, const char *fmt, ...)
{
    fprintf(stderr, "\n==FINDING== %s:%d: check failed: %s\n  ", file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  strided_last_error: \"%s\"\n", strided_last_error());
    fflush(stderr);
    abort();
}

/* With FUZZ_VERBOSE set in the environment, harnesses describe each call
 * before making it, so that a crash inside the library (which aborts
 * before any check) can be read against its arguments. */
static inline void fuzz_trace(const char *what)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "fuzz: %s\n", what);
}

/* Check a rule; on a break, report it (printf-style details) and abort. */
#define FUZZ_REQUIRE(cond, ...)                                   \
    do {                                                          \
        if (!(cond))                                              \
            fuzz_finding(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

/* A set of statuses, one bit each. The expected outcome of a call is the
 * set of statuses of the rules its arguments break: empty means it must
 * succeed; otherwise it must fail with one of them (the order in which a
 * function checks its rules is its own business). */
typedef unsigned fuzz_statuses;
#define FUZZ_BIT(status) (1u << (unsigned)(status))
#define FUZZ_INVALID FUZZ_BIT(STRIDED_ERR_INVALID_ARGUMENT)
#define FUZZ_OVERFLOW FUZZ_BIT(STRIDED_ERR_OVERFLOW)
#define FUZZ_UNSUPPORTED FUZZ_BIT(STRIDED_ERR_UNSUPPORTED)
/* What asking the CUDA driver about memory may answer where one is
 * installed but cannot serve (no device): possible, never required. */
#define FUZZ_DRIVER (FUZZ_BIT(STRIDED_ERR_CUDA) | FUZZ_BIT(STRIDED_ERR_NO_CUDA_DRIVER))

/* The message strided_last_error holds before each checked call, so that a
 * failure that sets no message of its own is seen. */
#define FUZZ_MARK_TEXT "fuzz: no message was set"

static inline void fuzz_mark_error(void)
{
    strided_set_last_error(STRIDED_ERR_INTERNAL, "fuzz", "no message was set");
}

/* The contract of a call that answered status where the rules allowed the
 * set expected: a success must be expected (empty set), a failure must be
 * one of the statuses expected, must have left the output bytes equal to
 * their copy before the call, and must have set a message of its own. */
static inline void fuzz_check_outcome(const char *op, strided_status status, fuzz_statuses expected,
                                      const void *out, const void *before, size_t size,
                                      const char *context)
{
    if (status == STRIDED_OK) {
        FUZZ_REQUIRE(expected == 0,
                     "%s succeeded, but its arguments break a rule "
                     "(expected statuses 0x%x): %s",
                     op, expected, context);
        return;
    }
    FUZZ_REQUIRE(expected != 0, "%s failed with %s, but its arguments are valid: %s", op,
                 strided_status_name(status), context);
    FUZZ_REQUIRE(expected & FUZZ_BIT(status),
                 "%s failed with %s, not with a status its arguments call for "
                 "(0x%x): %s",
                 op, strided_status_name(status), expected, context);
    if (out != NULL)
        FUZZ_REQUIRE(memcmp(out, before, size) == 0, "%s failed (%s) but wrote its output: %s", op,
                     strided_status_name(status), context);
    const char *msg = strided_last_error();
    FUZZ_REQUIRE(msg[0] != '\0' && strcmp(msg, FUZZ_MARK_TEXT) != 0,
                 "%s failed (%s) without a message of its own: %s", op, strided_status_name(status),
                 context);
}

/* Advance a multi-index in C order (the last axis fastest); false once it
 * wraps around to all zeros. */
static inline bool fuzz_next_index(int ndim, const int64_t *shape, int64_t *idx)
{
    for (int k = ndim - 1; k >= 0; k--) {
        if (++idx[k] < shape[k])
            return true;
        idx[k] = 0;
    }
    return false;
}

/* The element offset of a multi-index, exact. */
static inline fuzz_i128 fuzz_offset(const strided_layout *l, const int64_t *idx)
{
    fuzz_i128 o = l->slice_offset;
    for (int k = 0; k < l->ndim; k++)
        o += fuzz_mul(idx[k], l->strides[k]);
    return o;
}

/* The product of the extents, saturated at FUZZ_I128_CLAMP; *nonzero gets
 * the product of the non-zero extents (saturated likewise). */
static inline fuzz_i128 fuzz_volume(int ndim, const int64_t *shape, fuzz_i128 *nonzero)
{
    fuzz_i128 v = 1, nz = 1;
    for (int i = 0; i < ndim; i++) {
        v = fuzz_clamp_mul(v, shape[i]);
        if (shape[i] != 0)
            nz = fuzz_clamp_mul(nz, shape[i]);
    }
    if (nonzero != NULL)
        *nonzero = nz;
    return v;
}

/* The lowest and highest element offsets of a non-empty layout, exact
 * (saturated far outside int64 for strides no layout may have). */
static inline void fuzz_bounds(int ndim, const int64_t *shape, const int64_t *strides,
                               int64_t slice_offset, fuzz_i128 *lo, fuzz_i128 *hi)
{
    fuzz_i128 a = slice_offset, b = slice_offset;
    for (int i = 0; i < ndim; i++) {
        fuzz_i128 span = fuzz_mul(strides[i], shape[i] - 1);
        if (span < 0)
            a = fuzz_clamp(a + span);
        else
            b = fuzz_clamp(b + span);
    }
    *lo = a;
    *hi = b;
}

/* |v| * itemsize <= INT64_MAX: the value and its negation fit in bytes. */
static inline bool fuzz_fits_bytes(fuzz_i128 v, int itemsize)
{
    fuzz_i128 m = v < 0 ? -v : v;
    return m <= INT64_MAX && m * itemsize <= INT64_MAX;
}

/* The statuses strided_layout_validate must answer for a layout with these
 * fields, by the invariant of strided/layout.h: 0 <= ndim <= 64, extents
 * >= 0 and itemsize > 0 (else INVALID); the product of the non-zero
 * extents in int64, every stride and the slice offset representable in
 * bytes with their negations, and for a non-empty layout each axis's span
 * (stride times extent - 1) and every element offset and byte offset
 * (negated too) in int64 (else OVERFLOW). */
static inline fuzz_statuses fuzz_invariant_expect(int ndim, const int64_t *shape,
                                                  const int64_t *strides, int64_t slice_offset,
                                                  int itemsize)
{
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return FUZZ_INVALID;
    fuzz_statuses bad = 0;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            bad |= FUZZ_INVALID;
    if (itemsize <= 0)
        bad |= FUZZ_INVALID;
    if (bad)
        return bad;
    fuzz_i128 nonzero;
    fuzz_i128 volume = fuzz_volume(ndim, shape, &nonzero);
    if (nonzero > INT64_MAX)
        return FUZZ_OVERFLOW;
    for (int i = 0; i < ndim; i++)
        if (!fuzz_fits_bytes(strides[i], itemsize))
            return FUZZ_OVERFLOW;
    if (!fuzz_fits_bytes(slice_offset, itemsize))
        return FUZZ_OVERFLOW;
    if (volume > 0) {
        /* Each axis's span, stride * (extent - 1), fits in int64 too. */
        for (int i = 0; i < ndim; i++)
            if (!fuzz_fits64((fuzz_i128)strides[i] * (shape[i] - 1)))
                return FUZZ_OVERFLOW;
        fuzz_i128 lo, hi;
        fuzz_bounds(ndim, shape, strides, slice_offset, &lo, &hi);
        if (!fuzz_fits_bytes(lo, itemsize) || !fuzz_fits_bytes(hi, itemsize))
            return FUZZ_OVERFLOW;
    }
    return 0;
}

static inline fuzz_statuses fuzz_layout_expect(const strided_layout *l)
{
    return fuzz_invariant_expect(l->ndim, l->shape, l->strides, l->slice_offset, l->itemsize);
}

/* The statuses strided_layout_init (divide false) or
 * strided_layout_init_byte_strides (divide true) must answer, by the rules
 * of their declarations and the invariant the layout must keep. */
static inline fuzz_statuses fuzz_init_expect(int ndim, const int64_t *shape, const int64_t *strides,
                                             int itemsize, bool divide)
{
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return FUZZ_INVALID;
    fuzz_statuses bad = 0;
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            bad |= FUZZ_INVALID;
    if (itemsize <= 0)
        bad |= FUZZ_INVALID;
    if (bad)
        return bad;
    fuzz_i128 nonzero;
    fuzz_i128 volume = fuzz_volume(ndim, shape, &nonzero);
    if (nonzero > INT64_MAX)
        bad |= FUZZ_OVERFLOW;
    int64_t el[STRIDED_MAX_NDIM];
    for (int i = 0; strides != NULL && i < ndim; i++) {
        if (divide && strides[i] % itemsize != 0)
            bad |= FUZZ_INVALID;
        el[i] = divide ? strides[i] / itemsize : strides[i];
    }
    if (bad)
        return bad;
    if (strides == NULL) {
        /* The C strides. */
        int64_t running = 1;
        for (int i = ndim - 1; i >= 0; i--) {
            el[i] = volume == 0 ? 0 : running;
            if (volume != 0)
                running *= shape[i];
        }
    }
    return fuzz_invariant_expect(ndim, shape, el, 0, itemsize);
}

/* Check the invariant on a layout a function made, and that implicit
 * strides hold the C strides (all 0 for an empty layout). what names the
 * function. */
static inline void fuzz_check_invariant(const strided_layout *l, const char *what)
{
    fuzz_text t;
    fuzz_statuses bad = fuzz_layout_expect(l);
    FUZZ_REQUIRE(bad == 0, "%s made a layout that breaks the invariant (%s): %s", what,
                 bad & FUZZ_INVALID ? "ndim, an extent or the itemsize"
                                    : "a volume, stride, offset or byte offset beyond int64",
                 fuzz_show(l, &t));
    if (l->implicit_strides) {
        fuzz_i128 volume = fuzz_volume(l->ndim, l->shape, NULL);
        int64_t running = 1;
        for (int i = l->ndim - 1; i >= 0; i--) {
            int64_t want = volume == 0 ? 0 : running;
            FUZZ_REQUIRE(l->strides[i] == want,
                         "%s made implicit strides that are not the C "
                         "strides (axis %d: %" PRId64 ", want %" PRId64 "): %s",
                         what, i, l->strides[i], want, fuzz_show(l, &t));
            if (volume != 0)
                running *= l->shape[i];
        }
    }
}

/* The element offsets of a layout of volume <= FUZZ_ENUM_LIMIT in C order
 * of the multi-indices, into out; returns the volume. Assumes: the
 * invariant holds (checked before), so every offset fits in int64. */
static inline int64_t fuzz_enumerate(const strided_layout *l, int64_t *out)
{
    fuzz_i128 volume = fuzz_volume(l->ndim, l->shape, NULL);
    if (volume == 0)
        return 0;
    int64_t idx[STRIDED_MAX_NDIM] = {0};
    int64_t n = 0;
    do {
        out[n++] = (int64_t)fuzz_offset(l, idx);
    } while (fuzz_next_index(l->ndim, l->shape, idx));
    return n;
}

/* The source index a copy reads for destination index j: the source is
 * aligned with the destination's last axes and repeats along its extent-1
 * axes. Assumes: src broadcasts to a shape of dst_ndim axes. */
static inline void fuzz_broadcast_index(int dst_ndim, const int64_t *j, const strided_layout *src,
                                        int64_t *out)
{
    int lead = dst_ndim - src->ndim;
    for (int q = 0; q < src->ndim; q++)
        out[q] = src->shape[q] == 1 ? 0 : j[lead + q];
}

/* Does src broadcast to dst's shape (NumPy's rules)? */
static inline bool fuzz_broadcasts(const strided_layout *dst, const strided_layout *src)
{
    if (src->ndim > dst->ndim)
        return false;
    int lead = dst->ndim - src->ndim;
    for (int q = 0; q < src->ndim; q++)
        if (src->shape[q] != 1 && src->shape[q] != dst->shape[lead + q])
            return false;
    return true;
}

/* The statuses strided_copy_plan_make must answer for dst and src. The
 * uniqueness rule is the library's own cheap test (strided_layout_is_unique
 * is checked against brute force by the layout harness). */
static inline fuzz_statuses fuzz_plan_expect(const strided_layout *dst, const strided_layout *src)
{
    if (dst->itemsize != src->itemsize || !fuzz_broadcasts(dst, src) ||
        !strided_layout_is_unique(dst))
        return FUZZ_INVALID;
    return 0;
}

/* Are a layout's element offsets distinct? By sorting, for volumes up to
 * FUZZ_ENUM_LIMIT; scratch holds that many. */
static inline int fuzz_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static inline bool fuzz_distinct(const strided_layout *l, int64_t *scratch)
{
    int64_t n = fuzz_enumerate(l, scratch);
    qsort(scratch, (size_t)n, sizeof scratch[0], fuzz_cmp_i64);
    for (int64_t k = 1; k < n; k++)
        if (scratch[k] == scratch[k - 1])
            return false;
    return true;
}

#endif
