/*
 * bench_layout: the cost of one layout operation in C, in nanoseconds.
 *
 * For ndim 2, 4 and 8, each operation runs on a realistic input: a C-dense
 * layout with explicit strides and mixed extents, or a layout derived from
 * it (reversed axes, a slice on every axis, a shape with unit axes). A
 * measurement times a loop of calls whose length is calibrated to take at
 * least 50 ms, repeats it 5 times and keeps the median time per call. The
 * repeats of all measurements are interleaved (round robin).
 *
 * Output, on stdout, is CSV, one line per measurement:
 *
 *     c,<op>,<ndim>,<ns>
 *
 * followed by the same lines for the fastest loop, with the prefix c_min.
 * Lines that start with '#' describe the compiler, the method and the
 * inputs; bench/bench_layout.py reads all of it and writes the JSON. The
 * operations and their inputs must stay in step with that driver, which
 * checks the "# case" lines against its own.
 *
 * This is a benchmark, not a test: the only check is that every call
 * succeeds on its input; if one does not, the program says which and exits
 * with status 1.
 *
 * Options: -t MS sets the minimum time of one timed loop (default 50),
 * -r N the number of timed loops per measurement (default 5).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strided/layout.h"

#define MAX_BENCH_NDIM 8
#define MAX_REPEATS 101
#define ITEMSIZE 4
/* The extent of the leading axis that broadcast adds. */
#define BROADCAST_EXTENT 7

/* The shapes, and the legal reshape of each (axes 0 and 1 merged, the last
 * axis split; for ndim 2, the first axis split and its inner part merged
 * with the second). Keep in step with CASES in bench_layout.py. */
struct case_spec {
    int ndim;
    int64_t shape[MAX_BENCH_NDIM];
    int reshape_ndim;
    int64_t reshape[MAX_BENCH_NDIM];
};

static const struct case_spec specs[] = {
    {2, {48, 64}, 2, {12, 256}},
    {4, {8, 12, 16, 10}, 4, {96, 16, 2, 5}},
    {8, {4, 6, 2, 8, 3, 4, 6, 8}, 8, {24, 2, 8, 3, 4, 6, 4, 2}},
};

/* Everything one ndim needs, built once before timing. */
struct bench_case {
    int ndim;
    int64_t shape[MAX_BENCH_NDIM];
    int64_t strides[MAX_BENCH_NDIM]; /* C strides of shape */
    int reshape_ndim;
    int64_t reshape[MAX_BENCH_NDIM];
    int reverse[MAX_BENCH_NDIM];           /* ndim-1, ..., 0 */
    strided_index slices[MAX_BENCH_NDIM];  /* [1:, ::2, 1:, ::2, ...] */
    int64_t broadcast[MAX_BENCH_NDIM + 1]; /* (7,) + shape */
    strided_layout dense;                  /* shape, C strides given explicitly */
    strided_layout permuted;               /* dense with its axes reversed */
    strided_layout sliced;                 /* dense[slices] */
    strided_layout squeezable;             /* shape with every odd axis 1, C strides */
};

/* Tell the compiler that *p is read and that memory may have changed, so
 * neither the call that wrote *p nor the next one can be dropped or merged. */
static inline void consume(const void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Each op runs its call iters times and returns how many calls failed. */
typedef long (*op_fn)(const struct bench_case *c, long iters);

static long op_construct(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_init(&out, c->ndim, c->shape, c->strides, ITEMSIZE) != STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_dense(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_init_dense(&out, c->ndim, c->shape, ITEMSIZE, STRIDED_ORDER_C, 0,
                                            NULL) != STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_permute(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_permute(&c->dense, c->ndim, c->reverse, &out) != STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_reshape(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_reshape(&c->dense, c->reshape_ndim, c->reshape, &out) !=
                  STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_slice(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_slice(&c->dense, c->ndim, c->slices, &out) != STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_squeeze(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_squeeze(&c->squeezable, &out) != STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_flatten(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_flatten(&c->dense, 0, -1, &out) != STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_broadcast(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_broadcast(&c->dense, c->ndim + 1, c->broadcast, &out) !=
                  STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_to_dense(const struct bench_case *c, long iters)
{
    strided_layout out;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_to_dense(&c->permuted, STRIDED_ORDER_C, 0, NULL, &out) !=
                  STRIDED_OK;
        consume(&out);
    }
    return failed;
}

static long op_required_size(const struct bench_case *c, long iters)
{
    int64_t size;
    long failed = 0;
    for (long i = 0; i < iters; i++) {
        failed += strided_layout_required_size_in_bytes(&c->sliced, &size) != STRIDED_OK;
        consume(&size);
    }
    return failed;
}

static const struct op {
    const char *name;
    op_fn fn;
} ops[] = {
    {"construct", op_construct}, {"dense", op_dense},
    {"permute", op_permute},     {"reshape", op_reshape},
    {"slice", op_slice},         {"squeeze", op_squeeze},
    {"flatten", op_flatten},     {"broadcast", op_broadcast},
    {"to_dense", op_to_dense},   {"required_size", op_required_size},
};

/* Report the calling thread's last library error and exit. */
static void fail(const char *what, int ndim)
{
    fprintf(stderr, "bench_layout: %s at ndim %d failed: %s\n", what, ndim, strided_last_error());
    exit(1);
}

/* Build the inputs for one spec. Exits if the library rejects one, since
 * then no timing of it would mean anything. */
static void case_init(struct bench_case *c, const struct case_spec *spec)
{
    int n = spec->ndim;
    int64_t squeeze_shape[MAX_BENCH_NDIM];
    int64_t squeeze_strides[MAX_BENCH_NDIM];

    memset(c, 0, sizeof *c);
    c->ndim = n;
    c->reshape_ndim = spec->reshape_ndim;
    memcpy(c->shape, spec->shape, sizeof c->shape);
    memcpy(c->reshape, spec->reshape, sizeof c->reshape);
    c->broadcast[0] = BROADCAST_EXTENT;
    for (int64_t k = n - 1, s = 1; k >= 0; k--) {
        c->strides[k] = s;
        s *= c->shape[k];
    }
    for (int k = 0; k < n; k++) {
        c->reverse[k] = n - 1 - k;
        c->broadcast[k + 1] = c->shape[k];
        if (k % 2 == 0) {
            /* 1: (start given, stop omitted) has no helper. */
            strided_index from_one = {STRIDED_INDEX_SLICE, true, false, 1, 0, 1};
            c->slices[k] = from_one;
        } else {
            c->slices[k] = strided_index_all(2);
        }
        squeeze_shape[k] = k % 2 == 1 ? 1 : c->shape[k];
    }
    for (int64_t k = n - 1, s = 1; k >= 0; k--) {
        squeeze_strides[k] = s;
        s *= squeeze_shape[k];
    }

    if (strided_layout_init(&c->dense, n, c->shape, c->strides, ITEMSIZE) != STRIDED_OK)
        fail("construct", n);
    if (strided_layout_permute(&c->dense, n, c->reverse, &c->permuted) != STRIDED_OK)
        fail("permute", n);
    if (strided_layout_slice(&c->dense, n, c->slices, &c->sliced) != STRIDED_OK)
        fail("slice", n);
    if (strided_layout_init(&c->squeezable, n, squeeze_shape, squeeze_strides, ITEMSIZE) !=
        STRIDED_OK)
        fail("construct", n);
}

static void print_case(const struct bench_case *c)
{
    char text[4][512];
    strided_layout reshaped;

    if (strided_layout_reshape(&c->dense, c->reshape_ndim, c->reshape, &reshaped) != STRIDED_OK)
        fail("reshape", c->ndim);
    strided_layout_format(&c->dense, text[0], sizeof text[0]);
    strided_layout_format(&c->squeezable, text[1], sizeof text[1]);
    strided_layout_format(&c->sliced, text[2], sizeof text[2]);
    strided_layout_format(&reshaped, text[3], sizeof text[3]);
    printf("# case: ndim=%d dense=%s squeezable=%s sliced=%s reshaped=%s\n", c->ndim, text[0],
           text[1], text[2], text[3]);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define NOPS (sizeof ops / sizeof ops[0])
#define NCASES (sizeof specs / sizeof specs[0])

/* One (operation, input) pair: its calibrated loop length and the ns per
 * call of each timed loop. */
struct measurement {
    const struct op *op;
    const struct bench_case *c;
    long iters;
    double per_call[MAX_REPEATS];
};

/* The number of calls that makes one loop of m last at least min_ns. The
 * calibration loops double as warm-up. */
static long calibrate(const struct measurement *m, int64_t min_ns)
{
    long iters = 1000;
    for (;;) {
        int64_t t0 = now_ns();
        long failed = m->op->fn(m->c, iters);
        int64_t t = now_ns() - t0;
        if (failed)
            fail(m->op->name, m->c->ndim);
        if (t >= min_ns)
            return iters;
        /* Aim 20% past the minimum, but grow at most 100x per step so that
         * one disturbed short loop cannot make the next one very long. */
        double grow = t > 0 ? 1.2 * (double)min_ns / (double)t : 100.0;
        if (grow > 100.0)
            grow = 100.0;
        if (grow < 2.0)
            grow = 2.0;
        iters = (long)((double)iters * grow);
    }
}

static void time_loop(struct measurement *m, int r)
{
    int64_t t0 = now_ns();
    m->op->fn(m->c, m->iters);
    int64_t t = now_ns() - t0;
    m->per_call[r] = (double)t / (double)m->iters;
}

int main(int argc, char **argv)
{
    static struct bench_case cases[NCASES];
    static struct measurement runs[NOPS * NCASES];
    long min_ms = 50;
    int repeats = 5;
    int opt;

    while ((opt = getopt(argc, argv, "t:r:")) != -1) {
        switch (opt) {
        case 't': min_ms = strtol(optarg, NULL, 10); break;
        case 'r': repeats = (int)strtol(optarg, NULL, 10); break;
        default: fprintf(stderr, "usage: %s [-t min_ms] [-r repeats]\n", argv[0]); return 2;
        }
    }
    if (min_ms < 1 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench_layout: need -t >= 1 and 1 <= -r <= %d\n", MAX_REPEATS);
        return 2;
    }

#if defined(__clang__)
    printf("# compiler: clang %s\n", __clang_version__);
#elif defined(__GNUC__)
    printf("# compiler: gcc %s\n", __VERSION__);
#endif
    printf("# method: median of %d loops of >= %ld ms each, ns per call; "
           "the loops of all measurements alternate\n",
           repeats, min_ms);
    printf("# itemsize: %d\n", ITEMSIZE);
    for (size_t i = 0; i < NCASES; i++) {
        case_init(&cases[i], &specs[i]);
        print_case(&cases[i]);
    }
    fflush(stdout);

    size_t nruns = 0;
    for (size_t o = 0; o < NOPS; o++) {
        for (size_t i = 0; i < NCASES; i++) {
            struct measurement *m = &runs[nruns++];
            m->op = &ops[o];
            m->c = &cases[i];
            m->iters = calibrate(m, min_ms * 1000000);
        }
    }
    /* Each round times every measurement once, so that a slow spell of a
     * shared machine lands on one sample of many measurements rather than
     * on every sample of one. */
    for (int r = 0; r < repeats; r++)
        for (size_t k = 0; k < nruns; k++)
            time_loop(&runs[k], r);

    for (size_t k = 0; k < nruns; k++) {
        struct measurement *m = &runs[k];
        qsort(m->per_call, (size_t)repeats, sizeof m->per_call[0], compare_double);
        printf("c,%s,%d,%.2f\n", m->op->name, m->c->ndim, m->per_call[repeats / 2]);
    }
    /* The best loop too, for readers who prefer it on a noisy machine. */
    for (size_t k = 0; k < nruns; k++)
        printf("c_min,%s,%d,%.2f\n", runs[k].op->name, runs[k].c->ndim, runs[k].per_call[0]);
    return 0;
}
