/*
 * test_util.h: shared helpers of the C layout tests.
 *
 * Layouts are checked through their text "(shape):(strides)+offset", built
 * here independently of strided_layout_format, so that a failing assert shows
 * the expected and the actual layout side by side. Errors are checked through
 * the status, the thread's message and its "operation: reason" split.
 *
 * Every helper is static inline: each test file uses a different subset, and
 * unused inline functions draw no warning.
 */
#ifndef STRIDED_TEST_UTIL_H
#define STRIDED_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "strided/layout.h"
#include "strided/status.h"

/* A compound-literal array of int64 or int values, for shapes, strides and
 * axis lists: I64(5, 3, 7). */
#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define INTS(...) ((const int[]){__VA_ARGS__})

/* The number of values in I64(...) / INTS(...) arguments. */
#define N64(...) ((int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define NINT(...) ((int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)))

/* "ndim, shape" argument pairs: DIMS(5, 3, 7) expands to 3, I64(5, 3, 7). */
#define DIMS(...) N64(__VA_ARGS__), I64(__VA_ARGS__)
#define AXES(...) NINT(__VA_ARGS__), INTS(__VA_ARGS__)

/* The number of elements of an array. */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Case tables. A test that walks a table keeps each case in a struct whose
 * first field is "int line"; CASE(...) fills that with the row's own line
 * and the other fields in order, where DIMS(...), AXES(...) and INDICES(...)
 * fill a count and a pointer. Every check of a row takes AT(row), the file
 * and the row's line, so a failure names the row that failed. */
#define CASE(...)             \
    {                         \
        __LINE__, __VA_ARGS__ \
    }
#define AT(row) __FILE__, (row)->line

/* Fill n values with value and return them: a shape or strides too long to
 * spell out, such as 65 ones. */
static inline int64_t *filled(int64_t *values, int n, int64_t value)
{
    for (int k = 0; k < n; k++)
        values[k] = value;
    return values;
}

/* Fill a 64-d shape with ones, then set the given (axis, extent) pairs:
 * SHAPE64(shape, 3, 2, 17, 3) puts extent 2 on axis 3 and 3 on axis 17. */
#define SHAPE64(shape, ...) shape64_((shape), N64(__VA_ARGS__), I64(__VA_ARGS__))
static inline void shape64_(int64_t shape[64], int n, const int64_t *pairs)
{
    for (int k = 0; k < 64; k++)
        shape[k] = 1;
    for (int i = 0; i + 1 < n; i += 2)
        shape[pairs[i]] = pairs[i + 1];
}

/* xorshift64*: a small, fixed-seed random stream for generated cases. */
static inline uint64_t xorshift_next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(0x2545F4914F6CDD1D);
}

/* A uniform integer in [lo, hi] from the stream. */
static inline int64_t xorshift_in(uint64_t *state, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(xorshift_next(state) % (uint64_t)(hi - lo + 1));
}

/* The byte every failing call must leave in its outputs. */
#define SENTINEL 0xA5

/* Fail with a printed message at the caller's file and line; variadic, so
 * that AT(row) may stand for both. */
#define fail_at(...) FAIL_AT_(__VA_ARGS__)
#define FAIL_AT_(file, line, ...) \
    do {                          \
        print_error(__VA_ARGS__); \
        _fail((file), (line));    \
    } while (0)

/* int64 equality that prints both sides in decimal (cmocka prints hex). */
#define assert_i64(actual, expected) \
    check_i64_((int64_t)(actual), (int64_t)(expected), #actual, __FILE__, __LINE__)

static inline void check_i64_(int64_t actual, int64_t expected, const char *what, const char *file,
                              int line)
{
    if (actual != expected)
        fail_at(file, line, "%s: got %" PRId64 ", expected %" PRId64 "\n", what, actual, expected);
}

/* Status equality that prints both names. */
#define assert_status(actual, expected) check_status_((actual), (expected), __FILE__, __LINE__)

static inline void check_status_(strided_status actual, strided_status expected, const char *file,
                                 int line)
{
    if (actual != expected)
        fail_at(file, line, "status %s (%d), expected %s (%d); message \"%s\"\n",
                strided_status_name(actual), (int)actual, strided_status_name(expected),
                (int)expected, actual != STRIDED_OK ? strided_last_error() : "");
}

#define assert_ok(call) assert_status((call), STRIDED_OK)

/* Write a layout as "(s0,s1):(t0,t1)" plus "+offset" (or "-offset") when the
 * slice offset is not 0; a 1-d layout reads "(5,):(1,)" and a 0-d one
 * "():()". Independent of strided_layout_format on purpose. */
static inline void layout_text(const strided_layout *l, char *buf, size_t size)
{
    size_t n = 0;
    int k;

#define PUT_(...)                                                         \
    do {                                                                  \
        int w_ = snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__); \
        if (w_ > 0)                                                       \
            n += (size_t)w_;                                              \
    } while (0)
    PUT_("(");
    for (k = 0; k < l->ndim; k++)
        PUT_(k + 1 < l->ndim ? "%" PRId64 "," : "%" PRId64, l->shape[k]);
    PUT_(l->ndim == 1 ? ",):(" : "):(");
    for (k = 0; k < l->ndim; k++)
        PUT_(k + 1 < l->ndim ? "%" PRId64 "," : "%" PRId64, l->strides[k]);
    PUT_(l->ndim == 1 ? ",)" : ")");
    if (l->slice_offset != 0)
        PUT_("%+" PRId64, l->slice_offset);
#undef PUT_
}

/* Assert that layout l reads as text, has the given itemsize and explicit
 * (or, for assert_layout_implicit, implicit) strides. */
#define assert_layout(l, text, itemsize) \
    check_layout_(&(l), (text), (itemsize), false, __FILE__, __LINE__)
#define assert_layout_implicit(l, text, itemsize) \
    check_layout_(&(l), (text), (itemsize), true, __FILE__, __LINE__)

static inline void check_layout_(const strided_layout *l, const char *text, int itemsize,
                                 bool implicit, const char *file, int line)
{
    char got[4096];

    if (l->ndim < 0 || l->ndim > STRIDED_MAX_NDIM)
        fail_at(file, line, "layout ndim %d out of range\n", (int)l->ndim);
    layout_text(l, got, sizeof got);
    _assert_string_equal(got, text, file, line);
    if (l->itemsize != itemsize)
        fail_at(file, line, "%s: itemsize %d, expected %d\n", got, (int)l->itemsize, itemsize);
    if (l->implicit_strides != implicit)
        fail_at(file, line, "%s: strides are %s, expected %s\n", got,
                l->implicit_strides ? "implicit" : "explicit", implicit ? "implicit" : "explicit");
}

/* Assert that two layouts are (or are not) strided_layout_equal, printing
 * both when the assert fails. */
#define assert_layout_eq(a, b) check_layout_eq_(&(a), &(b), true, __FILE__, __LINE__)
#define assert_layout_ne(a, b) check_layout_eq_(&(a), &(b), false, __FILE__, __LINE__)

static inline void check_layout_eq_(const strided_layout *a, const strided_layout *b, bool want,
                                    const char *file, int line)
{
    if (strided_layout_equal(a, b) != want) {
        char ta[4096], tb[4096];
        layout_text(a, ta, sizeof ta);
        layout_text(b, tb, sizeof tb);
        fail_at(file, line, "%s (itemsize %d, %s) %s %s (itemsize %d, %s)\n", ta, (int)a->itemsize,
                a->implicit_strides ? "implicit" : "explicit", want ? "!=" : "==", tb,
                (int)b->itemsize, b->implicit_strides ? "implicit" : "explicit");
    }
}

/* Assert that a call failed with code, that the thread's message is
 * "<op>: <reason>" with an operation part naming op, and that the reason
 * contains text (the message of cuda.core, or a part of it). */
#define assert_error(call, code, op, text) \
    check_error_((call), (code), (op), (text), __FILE__, __LINE__)

static inline void check_error_(strided_status got, strided_status code, const char *op,
                                const char *text, const char *file, int line)
{
    const char *full, *reason;
    size_t nfull, nreason, nop;
    char oppart[256];

    check_status_(got, code, file, line);
    full = strided_last_error();
    reason = strided_last_error_reason();
    if (full == NULL || reason == NULL)
        fail_at(file, line, "strided_last_error/_reason returned NULL\n");
    nfull = strlen(full);
    nreason = strlen(reason);
    if (nfull < nreason + 3 || strcmp(full + nfull - nreason, reason) != 0 ||
        memcmp(full + nfull - nreason - 2, ": ", 2) != 0)
        fail_at(file, line, "message \"%s\" is not \"<operation>: \" + reason \"%s\"\n", full,
                reason);
    nop = nfull - nreason - 2;
    if (nop >= sizeof oppart)
        nop = sizeof oppart - 1;
    memcpy(oppart, full, nop);
    oppart[nop] = '\0';
    if (strstr(oppart, ": ") != NULL)
        fail_at(file, line,
                "message \"%s\": reason \"%s\" is not the text "
                "after the first \": \"\n",
                full, reason);
    if (op != NULL && strstr(oppart, op) == NULL)
        fail_at(file, line, "message \"%s\": operation \"%s\" does not name \"%s\"\n", full, oppart,
                op);
    if (text != NULL && strstr(reason, text) == NULL)
        fail_at(file, line, "reason \"%s\" does not contain \"%s\"\n", reason, text);
}

/* The value of width bits (at most 32) from bit position bit of mem, read
 * one bit at a time, little bit-endian: the reference of the sub-byte
 * tests. */
static inline unsigned bits_get(const unsigned char *mem, int64_t bit, int width)
{
    unsigned v = 0;
    for (int i = 0; i < width; i++)
        v |= (unsigned)((mem[(bit + i) / 8] >> ((bit + i) % 8)) & 1) << i;
    return v;
}

/* Write v into width bits from bit position bit of mem, one bit at a time,
 * the other bits kept. */
static inline void bits_set(unsigned char *mem, int64_t bit, int width, unsigned v)
{
    for (int i = 0; i < width; i++) {
        unsigned char m = (unsigned char)(1u << ((bit + i) % 8));
        mem[(bit + i) / 8] = (unsigned char)((mem[(bit + i) / 8] & ~m) | (((v >> i) & 1) ? m : 0));
    }
}

/* Fill memory with SENTINEL, and check that it still holds only SENTINEL. */
static inline void fill_sentinel(void *p, size_t n)
{
    memset(p, SENTINEL, n);
}

#define assert_untouched(p, n) check_untouched_((p), (n), #p, __FILE__, __LINE__)

static inline void check_untouched_(const void *p, size_t n, const char *what, const char *file,
                                    int line)
{
    const unsigned char *b = p;
    size_t i;

    for (i = 0; i < n; i++)
        if (b[i] != SENTINEL)
            fail_at(file, line, "%s was written: byte %zu is 0x%02x\n", what, i, b[i]);
}

/* Check what a call that fills a layout did, against a table row: for code
 * STRIDED_OK, success and the layout `want` as text (with itemsize and
 * explicit strides); for another code, that failure with a reason
 * containing `want` (any reason when NULL) and the output untouched (the
 * caller fills it with SENTINEL before the call). */
static inline void check_layout_outcome_(strided_status got, const strided_layout *out,
                                         strided_status code, const char *op, const char *want,
                                         int itemsize, const char *file, int line)
{
    if (code == STRIDED_OK) {
        check_status_(got, STRIDED_OK, file, line);
        check_layout_(out, want, itemsize, false, file, line);
    } else {
        check_error_(got, code, op, want, file, line);
        check_untouched_(out, sizeof *out, "out", file, line);
    }
}

/* A case of an operation that takes a shape (reshape, broadcast) or an axis
 * list (permute, unsqueeze): the input, the list, and what the call gives,
 * as check_layout_outcome_ checks it with the input's itemsize. */
typedef struct shape_case {
    int line;
    strided_layout in;
    int ndim;
    const int64_t *shape;
    strided_status code;
    const char *want;
} shape_case;

typedef struct axes_case {
    int line;
    strided_layout in;
    int naxes;
    const int *axes;
    strided_status code;
    const char *want;
} axes_case;

typedef strided_status (*shape_op)(const strided_layout *in, int ndim, const int64_t *shape,
                                   strided_layout *out);
typedef strided_status (*axes_op)(const strided_layout *in, int naxes, const int *axes,
                                  strided_layout *out);

/* Run op (named name in its messages) on each case of a table. */
static inline void check_shape_cases(shape_op op, const char *name, const shape_case *cases,
                                     size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const shape_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(op(&c->in, c->ndim, c->shape, &out), &out, c->code, name, c->want,
                              c->in.itemsize, AT(c));
    }
}

static inline void check_axes_cases(axes_op op, const char *name, const axes_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const axes_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(op(&c->in, c->naxes, c->axes, &out), &out, c->code, name, c->want,
                              c->in.itemsize, AT(c));
    }
}

/* Layout constructors that must succeed. */
static inline strided_layout mk_at(int ndim, const int64_t *shape, const int64_t *strides,
                                   int itemsize, const char *file, int line)
{
    strided_layout l;
    check_status_(strided_layout_init(&l, ndim, shape, strides, itemsize), STRIDED_OK, file, line);
    return l;
}
/* A layout filled in by hand, without the checks of strided_layout_init:
 * for tests of what functions do with layouts that break the invariant (a
 * caller may write the fields). Variadic like mk. */
static inline strided_layout raw_at(int ndim, const int64_t *shape, const int64_t *strides,
                                    int itemsize)
{
    strided_layout l;
    memset(&l, 0, sizeof l);
    l.ndim = ndim;
    l.itemsize = itemsize;
    for (int i = 0; i < ndim; i++) {
        l.shape[i] = shape[i];
        l.strides[i] = strides[i];
    }
    return l;
}
#define raw(...) RAW_(__VA_ARGS__)
#define RAW_(ndim, shape, strides, itemsize) raw_at((ndim), (shape), (strides), (itemsize))

/* Variadic, so that DIMS(...) may stand for the ndim and shape arguments. */
#define mk(...) MK_(__VA_ARGS__)
#define MK_(ndim, shape, strides, itemsize) \
    mk_at((ndim), (shape), (strides), (itemsize), __FILE__, __LINE__)

static inline strided_layout mk_dense_at(int ndim, const int64_t *shape, int itemsize,
                                         strided_order order, int nperm, const int *perm,
                                         const char *file, int line)
{
    strided_layout l;
    check_status_(strided_layout_init_dense(&l, ndim, shape, itemsize, order, nperm, perm),
                  STRIDED_OK, file, line);
    return l;
}
/* C-dense (explicit strides), F-dense and dense in a permutation order;
 * variadic like mk. */
#define mk_c(...) MK_C_(__VA_ARGS__)
#define MK_C_(ndim, shape, itemsize) \
    mk_dense_at((ndim), (shape), (itemsize), STRIDED_ORDER_C, 0, NULL, __FILE__, __LINE__)
#define mk_f(...) MK_F_(__VA_ARGS__)
#define MK_F_(ndim, shape, itemsize) \
    mk_dense_at((ndim), (shape), (itemsize), STRIDED_ORDER_F, 0, NULL, __FILE__, __LINE__)
#define mk_perm(...) MK_PERM_(__VA_ARGS__)
#define MK_PERM_(ndim, shape, itemsize, nperm, perm)                                        \
    mk_dense_at((ndim), (shape), (itemsize), STRIDED_ORDER_PERM, (nperm), (perm), __FILE__, \
                __LINE__)
/* Implicit C strides. */
#define mk_implicit(...) MK_IMPLICIT_(__VA_ARGS__)
#define MK_IMPLICIT_(ndim, shape, itemsize) mk((ndim), (shape), NULL, (itemsize))

/* Manipulations that must succeed, returning the result. They take the
 * layout by value, so that it may be a call: sliced(mk_c(...), S_REV). */
static inline strided_layout sliced_at(strided_layout l, int n, const strided_index *idx,
                                       const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_slice(&l, n, idx, &out), STRIDED_OK, file, line);
    return out;
}
#define IDX(...) ((const strided_index[]){__VA_ARGS__})
#define NIDX(...) ((int)(sizeof((const strided_index[]){__VA_ARGS__}) / sizeof(strided_index)))
/* "count, indices" argument pairs, as DIMS: INDICES(S_AT(1), S_REV). */
#define INDICES(...) NIDX(__VA_ARGS__), IDX(__VA_ARGS__)
/* sliced(l, strided_index_at(1), strided_index_all(-1)) */
#define sliced(l, ...) sliced_at((l), NIDX(__VA_ARGS__), IDX(__VA_ARGS__), __FILE__, __LINE__)

static inline strided_layout permuted_at(strided_layout l, int n, const int *axes, const char *file,
                                         int line)
{
    strided_layout out;
    check_status_(strided_layout_permute(&l, n, axes, &out), STRIDED_OK, file, line);
    return out;
}
#define permuted(l, ...) permuted_at((l), NINT(__VA_ARGS__), INTS(__VA_ARGS__), __FILE__, __LINE__)

/* Python-style slice shorthands. */
#define S_ALL strided_index_all(1)
#define S_REV strided_index_all(-1)
#define S_AT(i) strided_index_at(i)
#define S_(a, b, c) strided_index_slice((a), (b), (c))
/* start: (to the end, step 1) and :stop (from the start, step 1). */
static inline strided_index s_from(int64_t start)
{
    strided_index x = strided_index_all(1);
    x.has_start = true;
    x.start = start;
    return x;
}
static inline strided_index s_to(int64_t stop)
{
    strided_index x = strided_index_all(1);
    x.has_stop = true;
    x.stop = stop;
    return x;
}
static inline strided_index s_any(bool has_start, int64_t start, bool has_stop, int64_t stop,
                                  int64_t step)
{
    strided_index x = strided_index_all(step);
    x.has_start = has_start;
    x.start = start;
    x.has_stop = has_stop;
    x.stop = stop;
    return x;
}

#endif
