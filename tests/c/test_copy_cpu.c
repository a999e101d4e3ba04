/*
 * Tests of the host executor of copy plans, strided__copy_host_run
 * (src/copy/host.c), on plans written by hand, independently of the planner.
 *
 * Every check gives the source random bytes and fills the destination's
 * whole footprint, plus guard bytes on both sides, with SENTINEL; runs the
 * plan; then compares each destination element with its source element
 * found by a naive loop over all indices, and the whole destination buffer
 * with what that loop would have written, so that an element written twice
 * in the wrong place, a gap or a guard byte written shows up too. The
 * source's footprint is placed, in turn, right before and right after a
 * page the process cannot read, so that a kernel reading past either end
 * of the source (a vector load too many) crashes the test. Each plan runs
 * with the kernel named and with GATHER (which must run any plan), on 1, 2,
 * 3 and 4 threads (the tests of the specialised loops on 7 too: more than
 * the machine may have, which changes nothing but the pieces); the random
 * plans take nthreads 0 to 7.
 *
 * The shapes cover tile edges (1x1, 31x33, 63..65, 65x127, 1000x3, 3x1000),
 * rows longer than one chunk, negative and zero source strides, gapped
 * destinations, itemsizes 1, 2, 3, 4, 8, 12, 16 (and 5, 64 in the random
 * plans), ndim 0, 1, 3, 6 and 64. The executor's specialised loops (square
 * blocks transposed in registers, gathers with source stride 2, 3, 4, rows
 * read backwards, batches of whole small planes) each have tests whose
 * plans take them, with extents around their vector widths, and which
 * check through the executor's path counters that they did. The random
 * plans are seeded, so a failure reproduces.
 */
/* mmap's MAP_ANONYMOUS under -std=c17 */
#define _DEFAULT_SOURCE

#include "test_util.h"

#include <stdlib.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#else
#define HAVE_MMAP 0
#endif

#include "base/base.h"
#include "copy/host.h"
#include "copy/testing.h"
#include "test_copy.h"

/* Defined in src/copy/host.c for the tests: how many pieces of work ran the
 * named specialised loop since the last reset (-1: no such name). */

/* Whether src/copy/host.c has its vector loops: the same condition as
 * there (the same compiler and target flags build both). */
#if (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__SSE2__) || defined(__ARM_NEON) || defined(__aarch64__))
#define HAVE_VECTORS 1
#else
#define HAVE_VECTORS 0
#endif

/* Guard bytes before and after every buffer. */
#define GUARD 64

static const int itemsizes[] = {1, 2, 3, 4, 8, 12, 16};
#define N_ITEMSIZES ((int)(sizeof itemsizes / sizeof itemsizes[0]))

/* The random stream, fixed seed (test_util.h). */
static uint64_t rng = UINT64_C(0x9E3779B97F4A7C15);
#define rnext() xorshift_next(&rng)
#define rint_in(lo, hi) xorshift_in(&rng, (lo), (hi))

static int64_t volume_of(int ndim, const int64_t *shape)
{
    int64_t v = 1;
    for (int k = 0; k < ndim; k++)
        v *= shape[k];
    return v;
}

/* The kernel kinds' names, for messages (the planner's are not used, so
 * that these tests stand without it). */
static const char *kind_name(strided_copy_kernel kernel)
{
    static const char *const names[] = {"nothing",   "contiguous", "rows",
                                        "transpose", "broadcast",  "gather"};
    return (unsigned)kernel < 6 ? names[kernel] : "unknown";
}

/* "transpose isz=4 u=0 (3,5):(5,1) <- (1,3)", for messages. */
static const char *plan_text(const strided_copy_plan *p)
{
    static char buf[4096];
    strided_layout d, s;
    char dt[2048], st[2048];
    int k;

    memset(&d, 0, sizeof d);
    memset(&s, 0, sizeof s);
    d.ndim = s.ndim = p->ndim;
    for (k = 0; k < p->ndim; k++) {
        d.shape[k] = s.shape[k] = p->shape[k];
        d.strides[k] = p->dst_strides[k];
        s.strides[k] = p->src_strides[k];
    }
    layout_text(&d, dt, sizeof dt);
    layout_text(&s, st, sizeof st);
    /* Only the strides of the source: its shape is the destination's. */
    snprintf(buf, sizeof buf, "%s isz=%d u=%d %s <- %s", kind_name(p->kernel), p->itemsize,
             p->src_unit_axis, dt, strchr(st, ':') + 1);
    return buf;
}

/* Where a side's memory lies: in malloc'd memory with GUARD bytes on both
 * sides, or with its footprint ending right before, or starting right
 * after, a page that cannot be read (where mmap exists; else malloc). */
enum place { PLACE_MALLOC, PLACE_PAGE_END, PLACE_PAGE_START };

/* Memory for one side of a plan: its footprint, plus guards; element 0
 * lies at base + origin. */
struct side {
    unsigned char *base;
    size_t size;
    size_t origin;
    void *map; /* the mapping, or NULL for malloc'd memory */
    size_t map_size;
};

static struct side side_alloc(const strided_copy_plan *p, const int64_t *strides, enum place place)
{
    int64_t lo = 0, hi = 0;
    struct side b;

    if (p->volume > 0)
        for (int k = 0; k < p->ndim; k++) {
            int64_t span = (p->shape[k] - 1) * strides[k];
            if (span < 0)
                lo += span;
            else
                hi += span;
        }
    b.map = NULL;
    b.map_size = 0;
#if HAVE_MMAP
    if (place != PLACE_MALLOC) {
        /* One page that cannot be read on each side of the footprint's
         * pages; the footprint touches one of them. */
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        const size_t bytes = (size_t)((hi - lo + 1) * p->itemsize);
        const size_t pages = (bytes + page - 1) / page * page;
        unsigned char *m;
        b.map_size = pages + 2 * page;
        b.map = mmap(NULL, b.map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(b.map != MAP_FAILED);
        m = b.map;
        assert_int_equal(mprotect(m, page, PROT_NONE), 0);
        assert_int_equal(mprotect(m + page + pages, page, PROT_NONE), 0);
        b.size = bytes;
        b.base = m + page + (place == PLACE_PAGE_END ? pages - bytes : 0);
        b.origin = (size_t)(-lo * p->itemsize);
        return b;
    }
#else
    (void)place;
#endif
    b.size = (size_t)((hi - lo + 1) * p->itemsize) + 2 * GUARD;
    b.origin = (size_t)(-lo * p->itemsize) + GUARD;
    b.base = malloc(b.size);
    assert_non_null(b.base);
    return b;
}

static void side_free(struct side *b)
{
#if HAVE_MMAP
    if (b->map != NULL) {
        munmap(b->map, b->map_size);
        return;
    }
#endif
    free(b->base);
}

/* Advance the multi-index idx of plan p in C order (the last axis
 * fastest), and the element offsets d and s with it; false once it wraps
 * around. */
static bool next_index(const strided_copy_plan *p, int64_t *idx, int64_t *d, int64_t *s)
{
    for (int k = p->ndim - 1; k >= 0; k--) {
        if (++idx[k] < p->shape[k]) {
            *d += p->dst_strides[k];
            *s += p->src_strides[k];
            return true;
        }
        *d -= (p->shape[k] - 1) * p->dst_strides[k];
        *s -= (p->shape[k] - 1) * p->src_strides[k];
        idx[k] = 0;
    }
    return false;
}

static const char *index_text(int ndim, const int64_t *idx)
{
    static char buf[2048];
    strided__text t = {buf, sizeof buf, 0};
    strided__text_tuple(&t, ndim, idx);
    return buf;
}

/* Run plan p with nthreads, the source placed as place says, and compare
 * with the naive loop. */
static void check_run_at(const strided_copy_plan *p, int nthreads, enum place place,
                         const char *file, int line)
{
    struct side src = side_alloc(p, p->src_strides, place);
    struct side dst = side_alloc(p, p->dst_strides, PLACE_MALLOC);
    unsigned char *want = malloc(dst.size);
    int64_t idx[STRIDED_MAX_NDIM] = {0}, doff = 0, soff = 0;
    const size_t isz = (size_t)p->itemsize;

    assert_non_null(want);
    for (size_t i = 0; i < src.size; i += 8) {
        uint64_t r = rnext();
        memcpy(src.base + i, &r, src.size - i < 8 ? src.size - i : 8);
    }
    fill_sentinel(dst.base, dst.size);
    fill_sentinel(want, dst.size);

    strided__copy_host_run(p, (char *)dst.base + dst.origin, (const char *)src.base + src.origin,
                           nthreads);

    if (p->volume > 0)
        do {
            size_t d = dst.origin + (size_t)(doff * p->itemsize);
            size_t s = src.origin + (size_t)(soff * p->itemsize);
            memcpy(want + d, src.base + s, isz);
            if (memcmp(dst.base + d, src.base + s, isz) != 0)
                fail_at(file, line, "%s, nthreads %d: element %s is wrong\n", plan_text(p),
                        nthreads, index_text(p->ndim, idx));
        } while (next_index(p, idx, &doff, &soff));
    if (memcmp(dst.base, want, dst.size) != 0)
        for (size_t i = 0; i < dst.size; i++)
            if (dst.base[i] != want[i])
                fail_at(file, line,
                        "%s, nthreads %d: byte %lld from element 0 was written "
                        "(0x%02x, expected 0x%02x)\n",
                        plan_text(p), nthreads, (long long)i - (long long)dst.origin, dst.base[i],
                        want[i]);
    free(want);
    side_free(&src);
    side_free(&dst);
}

/* Run p on 1, 2, 3 and 4 threads, the source against an unreadable page
 * at its end and at its start in turn. */
static void check_threads_at(const strided_copy_plan *p, const char *file, int line)
{
    static const int threads[] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++)
        check_run_at(p, threads[i], i % 2 == 0 ? PLACE_PAGE_END : PLACE_PAGE_START, file, line);
}

/* Whether kernel (with src_unit_axis u for TRANSPOSE) can run strides like
 * these: the conditions of strided/copy.h's kernel kinds. */
static bool kernel_fits(strided_copy_kernel kernel, int ndim, const int64_t *ds, const int64_t *ss,
                        int u)
{
    int last = ndim - 1;
    switch (kernel) {
    case STRIDED_COPY_CONTIGUOUS: return ndim == 1 && ds[0] == 1 && ss[0] == 1;
    case STRIDED_COPY_ROWS: return ndim >= 1 && ds[last] == 1 && ss[last] == 1;
    case STRIDED_COPY_TRANSPOSE:
        return ndim >= 2 && ds[last] == 1 && u >= 0 && u < last && ss[u] == 1;
    case STRIDED_COPY_BROADCAST: return ndim >= 1 && ds[last] == 1 && ss[last] == 0;
    case STRIDED_COPY_GATHER: return true;
    default: return false;
    }
}

/* Run the layouts with kernel (which must fit them) and with GATHER, on
 * every thread setting. */
static void check_kernel_at(strided_copy_kernel kernel, int isz, int ndim, const int64_t *shape,
                            const int64_t *ds, const int64_t *ss, int u, const char *file, int line)
{
    strided_copy_plan p = plan_of(kernel, isz, ndim, shape, ds, ss,
                                  kernel == STRIDED_COPY_TRANSPOSE ? u : -1);
    if (!kernel_fits(kernel, ndim, ds, ss, u))
        fail_at(file, line, "test error: %s does not fit its kernel\n", plan_text(&p));
    check_threads_at(&p, file, line);
    if (kernel != STRIDED_COPY_GATHER) {
        p.kernel = STRIDED_COPY_GATHER;
        p.src_unit_axis = -1;
        check_threads_at(&p, file, line);
    }
}
#define check_kernel(kernel, isz, ndim, shape, ds, ss, u) \
    check_kernel_at((kernel), (isz), (ndim), (shape), (ds), (ss), (u), __FILE__, __LINE__)

/* The 2-d shapes around tile edges. */
static const int64_t shapes2[][2] = {
    {1, 1},   {1, 7},    {7, 1},    {31, 33},  {33, 31},  {63, 63},  {64, 64},
    {65, 65}, {65, 127}, {127, 65}, {128, 64}, {1000, 3}, {3, 1000},
};
#define N_SHAPES2 ((int)(sizeof shapes2 / sizeof shapes2[0]))

static void test_volume_zero_writes_nothing(void **state)
{
    (void)state;
    static const strided_copy_kernel kinds[] = {STRIDED_COPY_NOTHING, STRIDED_COPY_ROWS,
                                                STRIDED_COPY_TRANSPOSE, STRIDED_COPY_BROADCAST,
                                                STRIDED_COPY_GATHER};
    for (int i = 0; i < (int)(sizeof kinds / sizeof kinds[0]); i++) {
        strided_copy_plan p = plan_of(kinds[i], 4, 2, I64(0, 5), I64(5, 1), I64(1, 0),
                                      kinds[i] == STRIDED_COPY_TRANSPOSE ? 0 : -1);
        check_threads_at(&p, __FILE__, __LINE__);
        p = plan_of(kinds[i], 4, 0, NULL, NULL, NULL, -1);
        p.volume = 0;
        check_threads_at(&p, __FILE__, __LINE__);
    }
}

static void test_ndim0_copies_one_element(void **state)
{
    (void)state;
    for (int i = 0; i < N_ITEMSIZES; i++) {
        strided_copy_plan p = plan_of(STRIDED_COPY_CONTIGUOUS, itemsizes[i], 0, NULL, NULL, NULL,
                                      -1);
        check_threads_at(&p, __FILE__, __LINE__);
        p.kernel = STRIDED_COPY_GATHER;
        check_threads_at(&p, __FILE__, __LINE__);
    }
}

static void test_contiguous(void **state)
{
    (void)state;
    /* 100003 elements of 3+ bytes span several pieces of the parallel
     * memcpy, and end inside a cache line. */
    static const int64_t volumes[] = {1, 2, 7, 1000, 100003};
    for (int i = 0; i < N_ITEMSIZES; i++)
        for (int v = 0; v < 5; v++)
            check_kernel(STRIDED_COPY_CONTIGUOUS, itemsizes[i], 1, I64(volumes[v]), I64(1), I64(1),
                         -1);
}

static void test_rows_2d(void **state)
{
    (void)state;
    for (int i = 0; i < N_ITEMSIZES; i++)
        for (int s = 0; s < N_SHAPES2; s++) {
            int64_t n = shapes2[s][1];
            const int isz = itemsizes[i];
            /* dense; gapped rows on both sides; the source's rows backwards;
             * one source row repeated */
            check_kernel(STRIDED_COPY_ROWS, isz, 2, shapes2[s], I64(n, 1), I64(n, 1), -1);
            check_kernel(STRIDED_COPY_ROWS, isz, 2, shapes2[s], I64(n + 3, 1), I64(n + 5, 1), -1);
            check_kernel(STRIDED_COPY_ROWS, isz, 2, shapes2[s], I64(n, 1), I64(-n - 1, 1), -1);
            check_kernel(STRIDED_COPY_ROWS, isz, 2, shapes2[s], I64(n, 1), I64(0, 1), -1);
        }
}

static void test_rows_longer_than_a_chunk(void **state)
{
    (void)state;
    /* 70001 bytes and more per row: several chunks per row, shared by
     * threads, with a short last chunk. */
    for (int i = 0; i < N_ITEMSIZES; i++) {
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 1, I64(70001), I64(1), I64(1), -1);
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 2, I64(3, 70001), I64(70001, 1),
                     I64(-70003, 1), -1);
    }
}

static void test_rows_3d(void **state)
{
    (void)state;
    /* The permutation (1,0,2) of a dense 5x7x9 source, and of 65x3x70. */
    for (int i = 0; i < N_ITEMSIZES; i++) {
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 3, I64(5, 7, 9), I64(63, 9, 1), I64(9, 45, 1),
                     -1);
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 3, I64(65, 3, 70), I64(210, 70, 1),
                     I64(70, -4550, 1), -1);
    }
}

static void test_transpose_2d(void **state)
{
    (void)state;
    for (int i = 0; i < N_ITEMSIZES; i++)
        for (int s = 0; s < N_SHAPES2; s++) {
            int64_t m = shapes2[s][0], n = shapes2[s][1];
            const int isz = itemsizes[i];
            /* .T of a dense source; gapped on both sides; the source's
             * columns backwards */
            check_kernel(STRIDED_COPY_TRANSPOSE, isz, 2, shapes2[s], I64(n, 1), I64(1, m), 0);
            check_kernel(STRIDED_COPY_TRANSPOSE, isz, 2, shapes2[s], I64(n + 2, 1), I64(1, m + 7),
                         0);
            check_kernel(STRIDED_COPY_TRANSPOSE, isz, 2, shapes2[s], I64(n, 1), I64(1, -m), 0);
        }
}

static void test_transpose_3d(void **state)
{
    (void)state;
    for (int i = 0; i < N_ITEMSIZES; i++) {
        const int isz = itemsizes[i];
        /* (2,1,0) and (0,2,1) of dense sources */
        check_kernel(STRIDED_COPY_TRANSPOSE, isz, 3, I64(5, 7, 9), I64(63, 9, 1), I64(1, 5, 35), 0);
        check_kernel(STRIDED_COPY_TRANSPOSE, isz, 3, I64(5, 7, 9), I64(63, 9, 1), I64(63, 1, 7), 1);
        check_kernel(STRIDED_COPY_TRANSPOSE, isz, 3, I64(70, 3, 65), I64(195, 65, 1),
                     I64(1, 70, 210), 0);
        check_kernel(STRIDED_COPY_TRANSPOSE, isz, 3, I64(3, 70, 65), I64(4550, 65, 1),
                     I64(4550, 1, 70), 1);
        /* the outer axis backwards, and repeated */
        check_kernel(STRIDED_COPY_TRANSPOSE, isz, 3, I64(4, 65, 33), I64(2145, 33, 1),
                     I64(-2145, 1, 65), 1);
        check_kernel(STRIDED_COPY_TRANSPOSE, isz, 3, I64(4, 65, 33), I64(2145, 33, 1),
                     I64(0, 1, 65), 1);
    }
}

static void test_transpose_thin(void **state)
{
    (void)state;
    /* AoS to SoA and back: one side of every tile has 3 elements. */
    for (int i = 0; i < N_ITEMSIZES; i++) {
        check_kernel(STRIDED_COPY_TRANSPOSE, itemsizes[i], 2, I64(3, 20000), I64(20000, 1),
                     I64(1, 3), 0);
        check_kernel(STRIDED_COPY_TRANSPOSE, itemsizes[i], 2, I64(20000, 3), I64(3, 1),
                     I64(1, 20000), 0);
    }
}

static void test_broadcast(void **state)
{
    (void)state;
    static const int64_t lens[] = {1, 33, 127};
    for (int i = 0; i < N_ITEMSIZES; i++) {
        /* rows of several chunks */
        check_kernel(STRIDED_COPY_BROADCAST, itemsizes[i], 1, I64(70001), I64(1), I64(0), -1);
        check_kernel(STRIDED_COPY_BROADCAST, itemsizes[i], 2, I64(2, 70001), I64(70001, 1),
                     I64(-1, 0), -1);
        for (int l = 0; l < 3; l++) {
            const int isz = itemsizes[i];
            int64_t n = lens[l];
            check_kernel(STRIDED_COPY_BROADCAST, isz, 1, I64(n), I64(1), I64(0), -1);
            check_kernel(STRIDED_COPY_BROADCAST, isz, 2, I64(5, n), I64(n, 1), I64(1, 0), -1);
            check_kernel(STRIDED_COPY_BROADCAST, isz, 2, I64(5, n), I64(n + 1, 1), I64(-3, 0), -1);
            check_kernel(STRIDED_COPY_BROADCAST, isz, 2, I64(5, n), I64(n, 1), I64(0, 0), -1);
        }
    }
    /* 64-byte elements: the fill that doubles what it wrote */
    check_kernel(STRIDED_COPY_BROADCAST, 64, 2, I64(3, 1000), I64(1000, 1), I64(1, 0), -1);
}

static void test_gather_2d(void **state)
{
    (void)state;
    /* source inner strides 2, -1, -3, 0 and 5; destination inner 1 and 2 */
    static const int64_t inner[] = {2, -1, -3, 0, 5};
    for (int i = 0; i < N_ITEMSIZES; i++)
        for (int s = 0; s < N_SHAPES2; s++)
            for (int k = 0; k < 5; k++) {
                int64_t n = shapes2[s][1], si = inner[k];
                int64_t row = (si < 0 ? -si : si) * n + 1;
                check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 2, shapes2[s], I64(n, 1),
                             I64(row, si), -1);
                check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 2, shapes2[s], I64(2 * n, 2),
                             I64(-row, si), -1);
            }
}

static void test_gather_long_rows(void **state)
{
    (void)state;
    for (int i = 0; i < N_ITEMSIZES; i++) {
        check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 1, I64(70001), I64(1), I64(-1), -1);
        check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 2, I64(2, 70001), I64(70001, 1),
                     I64(140002, 2), -1);
    }
}

static void test_ndim1(void **state)
{
    (void)state;
    for (int i = 0; i < N_ITEMSIZES; i++) {
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 1, I64(1000), I64(1), I64(1), -1);
        check_kernel(STRIDED_COPY_BROADCAST, itemsizes[i], 1, I64(1000), I64(1), I64(0), -1);
        check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 1, I64(1000), I64(3), I64(-2), -1);
    }
}

/* Dense strides for a shape whose axes lie in memory in the order perm
 * (outermost first), with axis flip[k] stepping backwards. */
static void dense_in_order(int ndim, const int64_t *shape, const int *perm, const bool *flip,
                           int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int k = perm[i];
        strides[k] = flip != NULL && flip[k] ? -s : s;
        s *= shape[k];
    }
}

static void test_ndim6(void **state)
{
    (void)state;
    /* The source of the permutation (5,0,4,1,3,2) of bench_copy.py's row
     * P7, small. */
    const int64_t shape[6] = {3, 2, 4, 5, 3, 4};
    int64_t ds[6], ss[6], ss_flip[6];
    const bool flip[6] = {true, false, false, true, false, true};
    dense_in_order(6, shape, INTS(0, 1, 2, 3, 4, 5), NULL, ds);
    dense_in_order(6, shape, INTS(1, 3, 5, 4, 2, 0), NULL, ss);
    dense_in_order(6, shape, INTS(1, 3, 5, 4, 2, 0), flip, ss_flip);
    for (int i = 0; i < N_ITEMSIZES; i++) {
        check_kernel(STRIDED_COPY_TRANSPOSE, itemsizes[i], 6, shape, ds, ss, 0);
        check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 6, shape, ds, ss_flip, -1);
    }
    /* the same with the last axis kept in place (rows) */
    dense_in_order(6, shape, INTS(1, 3, 0, 4, 2, 5), NULL, ss);
    for (int i = 0; i < N_ITEMSIZES; i++)
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 6, shape, ds, ss, -1);
}

static void test_ndim64(void **state)
{
    (void)state;
    /* 64 axes, of extent 2 on twelve of them (volume 4096), in C order in
     * the destination and reversed or shuffled in the source. */
    int64_t shape[64], ds[64], ss[64];
    int order[64], perm[64];
    bool flip[64];
    SHAPE64(shape, 0, 2, 5, 2, 9, 2, 17, 2, 22, 2, 30, 2, 31, 2, 40, 2, 47, 2, 55, 2, 62, 2, 63, 2);
    for (int k = 0; k < 64; k++) {
        order[k] = k;
        perm[k] = 63 - k;
        flip[k] = k % 3 == 0;
    }
    dense_in_order(64, shape, order, NULL, ds);
    dense_in_order(64, shape, perm, NULL, ss);
    for (int i = 0; i < N_ITEMSIZES; i++)
        check_kernel(STRIDED_COPY_TRANSPOSE, itemsizes[i], 64, shape, ds, ss, 0);
    dense_in_order(64, shape, perm, flip, ss);
    for (int i = 0; i < N_ITEMSIZES; i++)
        check_kernel(STRIDED_COPY_GATHER, itemsizes[i], 64, shape, ds, ss, -1);
    /* the last axis kept innermost in the source: rows of 2 */
    perm[0] = 0;
    perm[63] = 63;
    flip[63] = false;
    dense_in_order(64, shape, perm, flip, ss);
    for (int i = 0; i < N_ITEMSIZES; i++)
        check_kernel(STRIDED_COPY_ROWS, itemsizes[i], 64, shape, ds, ss, -1);
}

static const char *const path_names[] = {"transpose_vector", "reverse_vector", "stride2_vector",
                                         "stride3_vector",   "stride4_vector", "planes"};
#define N_PATHS ((int)(sizeof path_names / sizeof path_names[0]))

/* Whether the space-separated list names path. */
static bool lists(const char *list, const char *path)
{
    size_t n = strlen(path);
    for (const char *at = strstr(list, path); at != NULL; at = strstr(at + 1, path))
        if ((at == list || at[-1] == ' ') && (at[n] == ' ' || at[n] == '\0'))
            return true;
    return false;
}

/* Run p on 2, 3, 4 and 7 threads, then on one thread with the path
 * counters reset, and check that exactly the specialised loops in the
 * space-separated list ran ("" for none; the vector loops are dropped from
 * the list in a build without them). */
static void check_paths_at(const strided_copy_plan *p, const char *expected, const char *file,
                           int line)
{
    static const int threads[] = {2, 3, 4, 7};
    for (int i = 0; i < 4; i++)
        check_run_at(p, threads[i], i % 2 == 0 ? PLACE_PAGE_START : PLACE_PAGE_END, file, line);
    strided__copy_cpu_path_reset();
    check_run_at(p, 1, PLACE_PAGE_END, file, line);
    for (int i = 0; i < N_PATHS; i++) {
        const char *path = path_names[i];
        int64_t runs = strided__copy_cpu_path_runs(path);
        bool want = lists(expected, path) && (HAVE_VECTORS || strstr(path, "_vector") == NULL);
        if (runs < 0)
            fail_at(file, line, "test error: the executor has no path %s\n", path);
        if ((runs > 0) != want)
            fail_at(file, line, "%s: path %s ran %lld times, expected %s\n", plan_text(p), path,
                    (long long)runs, want ? "at least once" : "never");
    }
    if (strided__copy_cpu_path_runs("no such path") != -1)
        fail_at(file, line, "an unknown path name has a count\n");
}
#define check_paths(p, expected) check_paths_at((p), (expected), __FILE__, __LINE__)

static const int vector_sizes[] = {1, 2, 4, 8};

/* The loop a 2-d transpose of m x n (m along the source's unit axis) with
 * 1-, 2-, 4- or 8-byte elements takes: blocks when both extents hold one
 * (16 / isz elements); else, for m of 2 (or 3 and 4, with 4- and 8-byte
 * elements) under a block's width, the rows of its thin tiles are gathers
 * of source stride m, with vectors when a row is longer than one. */
static const char *transpose_2d_path(int isz, int64_t m, int64_t n)
{
    static const char *const names[] = {"", "", "stride2_vector", "stride3_vector",
                                        "stride4_vector"};
    const int64_t lanes = 16 / isz;
    if (m >= lanes && n >= lanes)
        return "transpose_vector";
    if (m >= 2 && m <= 4 && m < lanes && (m == 2 || isz >= 4) && n > lanes)
        return names[m];
    return "";
}

static void test_transpose_blocks_2d(void **state)
{
    (void)state;
    /* .T of every pair of extents around the block's width (16 / isz
     * elements). The tiles of narrow extents are moved directly, the others
     * through the buffer; 67 and 129 leave partial tiles and partial
     * blocks. */
    for (int i = 0; i < 4; i++) {
        const int isz = vector_sizes[i];
        const int64_t lanes = 16 / isz;
        const int64_t extents[] = {1, 2, lanes - 1, lanes, lanes + 1, 2 * lanes + 3, 67, 129};
        for (int a = 0; a < 8; a++)
            for (int b = 0; b < 8; b++) {
                int64_t m = extents[a], n = extents[b];
                strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (m, n), (n, 1), (1, m), 0);
                check_paths(&p, transpose_2d_path(isz, m, n));
            }
        /* gapped on both sides, the source's columns backwards */
        strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (67, 45), (48, 1), (1, -72), 0);
        check_paths(&p, "transpose_vector");
        /* large enough for 7 threads to split tile rows and tile groups */
        p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (300, 1001), (1001, 1), (1, 300), 0);
        check_paths(&p, "transpose_vector");
    }
    /* other itemsizes move element by element */
    strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, 3, (67, 45), (45, 1), (1, 67), 0);
    check_paths(&p, "");
    p = PLAN(STRIDED_COPY_TRANSPOSE, 16, (67, 45), (45, 1), (1, 67), 0);
    check_paths(&p, "");
}

static void test_transpose_blocks_3d(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        const int isz = vector_sizes[i];
        /* (0,2,1) of a dense 3x67x45 source: with tile edges of 64 (32 for
         * 8-byte elements) and 45 < 64, a 67x45 plane is one tile, or
         * three tile rows of 32 */
        strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (3, 67, 45), (3015, 45, 1),
                                   (3015, 1, 67), 1);
        check_paths(&p, isz == 8 ? "transpose_vector" : "planes transpose_vector");
        /* (2,1,0): 45x3 planes, one tile each; blocks only for 8-byte
         * elements (3 rows hold a block of 2) */
        p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (45, 67, 3), (201, 3, 1), (1, 45, 3015), 0);
        check_paths(&p, isz == 8 ? "planes transpose_vector" : "planes");
        /* 200x300 planes of several tiles */
        p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (2, 200, 300), (60000, 300, 1), (60000, 1, 200), 1);
        check_paths(&p, "transpose_vector");
    }
}

static void test_planes(void **state)
{
    (void)state;
    /* (N, P, Q) from a dense (N, Q, P) source, (0,2,1): with P, Q <= 8 a
     * plane is one tile, and planes go in batches (not for N = 1: no axis
     * to batch over). Blocks where P and Q hold the block's width; a
     * stride-3 gather for the rows of a P = 3 plane. */
    static const int sizes[] = {1, 2, 3, 4, 8, 12, 16, 64};
    static const int64_t pq[][2] = {{2, 2}, {3, 5}, {5, 3}, {8, 8}, {4, 7}, {1, 6}};
    static const int64_t batches[] = {1, 7, 300};
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 6; k++)
            for (int b = 0; b < 3; b++) {
                const int isz = sizes[i];
                const int64_t lanes = 16 / isz, n = batches[b];
                const int64_t P = pq[k][0], Q = pq[k][1];
                strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, isz, (n, P, Q), (P * Q, Q, 1),
                                           (P * Q, 1, P), 1);
                char expected[64];
                bool vectors = isz == 1 || isz == 2 || isz == 4 || isz == 8;
                snprintf(expected, sizeof expected, "%s %s %s", n > 1 ? "planes" : "",
                         vectors && P >= lanes && Q >= lanes ? "transpose_vector" : "",
                         vectors && isz >= 4 && P == 3 && P < lanes && Q > lanes ? "stride3_vector"
                                                                                 : "");
                check_paths(&p, expected);
            }
    /* a plane of two tile rows is not one unit */
    strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, 4, (5, 65, 65), (4225, 65, 1), (4225, 1, 65),
                               1);
    check_paths(&p, "transpose_vector");
    /* outer axes backwards and repeated, planes of 3x5 and 8x8 */
    p = PLAN(STRIDED_COPY_TRANSPOSE, 4, (4, 9, 3, 5), (135, 15, 5, 1), (-15, 60, 1, 3), 2);
    check_paths(&p, "planes stride3_vector");
    p = PLAN(STRIDED_COPY_TRANSPOSE, 2, (4, 9, 8, 8), (576, 64, 8, 1), (0, -64, 1, 8), 2);
    check_paths(&p, "planes transpose_vector");
}

static void test_transpose_thin_vectors(void **state)
{
    (void)state;
    /* AoS to SoA, (k, N) from (N, k): tiles of k rows, moved directly,
     * through blocks when k rows hold one, else as k gathers of source
     * stride k. */
    static const struct {
        int isz, k;
        const char *paths;
    } cases[] = {
        {1, 2, "stride2_vector"},
        {1, 3, ""},
        {1, 4, ""},
        {2, 2, "stride2_vector"},
        {2, 3, ""},
        {2, 4, ""},
        {4, 2, "stride2_vector"},
        {4, 3, "stride3_vector"},
        {4, 4, "transpose_vector"},
        {8, 2, "transpose_vector"},
        {8, 3, "transpose_vector"},
        {8, 4, "transpose_vector"},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const int64_t k = cases[i].k;
        for (int64_t n = 5000; n <= 5003; n++) {
            strided_copy_plan p = PLAN(STRIDED_COPY_TRANSPOSE, cases[i].isz, (k, n), (n, 1), (1, k),
                                       0);
            check_paths(&p, cases[i].paths);
        }
    }
}

static void test_gather_small_strides(void **state)
{
    (void)state;
    static const char *const names[] = {"", "", "stride2_vector", "stride3_vector",
                                        "stride4_vector"};
    for (int i = 0; i < 4; i++)
        for (int64_t S = 2; S <= 4; S++) {
            const int isz = vector_sizes[i];
            const int64_t lanes = 16 / isz;
            /* Strides 3 and 4 have vectors for 4- and 8-byte elements. A
             * row of len takes vectors once len > lanes (a vector reads
             * S * lanes elements, and never past the row's last). */
            const bool fits = S == 2 || isz >= 4;
            for (int64_t len = 1; len <= 3 * lanes + 2; len++) {
                strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, isz, (len), (1), (S), -1);
                check_paths(&p, fits && len > lanes ? names[S] : "");
            }
            int64_t n = 2 * lanes + 1;
            strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, isz, (5, n), (n, 1), (-(S * n + 1), S),
                                       -1);
            check_paths(&p, fits ? names[S] : "");
            p = PLAN(STRIDED_COPY_GATHER, isz, (3, 70001), (70001, 1), (70001 * S, S), -1);
            check_paths(&p, fits ? names[S] : "");
        }
    /* other itemsizes, and negative strides, move element by element */
    strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, 3, (100), (1), (2), -1);
    check_paths(&p, "");
    p = PLAN(STRIDED_COPY_GATHER, 16, (100), (1), (2), -1);
    check_paths(&p, "");
    p = PLAN(STRIDED_COPY_GATHER, 4, (100), (1), (-2), -1);
    check_paths(&p, "");
}

/* Streaming copies (for staging buffers): every length around the
 * 16-byte and 64-byte steps, at every alignment of either side, and long
 * ones split over threads, equal to memcpy and nothing written around. */
static void test_stream_copy(void **state)
{
    (void)state;
    enum { PAD = 64, LONG = (3 << 20) + 77 };
    unsigned char *src = malloc(LONG + 2 * PAD), *dst = malloc(LONG + 2 * PAD);
    assert_non_null(src);
    assert_non_null(dst);
    for (size_t i = 0; i < LONG + 2 * PAD; i++)
        src[i] = (unsigned char)(i * 131u + (i >> 9));
    static const int64_t lengths[] = {0,  1,   15,  16,  17,   63,   64,
                                      65, 127, 128, 129, 1000, 4096, 4097};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
        for (int da = 0; da < 16; da++)
            for (int sa = 0; sa < 16; sa += 5) {
                int64_t n = lengths[l];
                memset(dst, 0xA5, (size_t)n + 2 * PAD);
                strided__copy_host_stream((char *)dst + PAD + da, (const char *)src + PAD + sa, n);
                for (int64_t i = 0; i < n + 2 * PAD; i++) {
                    bool inside = i >= PAD + da && i < PAD + da + n;
                    unsigned char want = inside ? src[i - da + sa] : 0xA5;
                    if (dst[i] != want)
                        fail_msg("length %lld, offsets %d/%d: byte %lld is %u, not %u",
                                 (long long)n, da, sa, (long long)i, dst[i], want);
                }
            }
    /* Long enough for many threads (a piece each of at least 128 KiB). */
    for (int da = 0; da < 2; da++) {
        memset(dst, 0xA5, LONG + 2 * PAD);
        strided__copy_host_stream((char *)dst + PAD + da * 3, (const char *)src + PAD, LONG);
        assert_memory_equal(dst + PAD + da * 3, src + PAD, LONG);
        for (int i = 0; i < PAD + da * 3; i++)
            assert_int_equal(dst[i], 0xA5);
        for (int i = PAD + da * 3 + LONG; i < LONG + 2 * PAD; i++)
            assert_int_equal(dst[i], 0xA5);
    }
    free(src);
    free(dst);
}

static void test_gather_reverse(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        const int isz = vector_sizes[i];
        const int64_t lanes = 16 / isz;
        /* a vector reads lanes elements ending at element k: from len =
         * lanes on; never before the row's last element */
        for (int64_t len = 1; len <= 3 * lanes + 1; len++) {
            strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, isz, (len), (1), (-1), -1);
            check_paths(&p, len >= lanes ? "reverse_vector" : "");
        }
        int64_t n = 2 * lanes + 3;
        strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, isz, (5, n), (n, 1), (n + 2, -1), -1);
        check_paths(&p, "reverse_vector");
        p = PLAN(STRIDED_COPY_GATHER, isz, (3, 70001), (70001, 1), (-70001, -1), -1);
        check_paths(&p, "reverse_vector");
    }
    strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, 12, (100), (1), (-1), -1);
    check_paths(&p, "");
    p = PLAN(STRIDED_COPY_GATHER, 16, (100), (1), (-1), -1);
    check_paths(&p, "");
}

/* A random plan's layouts: destination C order with gaps (inner stride 1
 * mostly), source dense in a random order with gaps, flips and repeats. */
static void random_layouts(int *out_ndim, int64_t *shape, int64_t *ds, int64_t *ss)
{
    int ndim;
    int perm[STRIDED_MAX_NDIM];
    bool flip[STRIDED_MAX_NDIM];
    int64_t s;

    if (rint_in(0, 19) == 0) {
        /* high rank, few elements */
        ndim = (int)rint_in(7, 64);
        for (int k = 0; k < ndim; k++)
            shape[k] = rint_in(0, 5) == 0 ? rint_in(2, 3) : 1;
    } else {
        ndim = (int)rint_in(0, 6);
        for (int k = 0; k < ndim; k++) {
            switch (rint_in(0, 9)) {
            case 0: shape[k] = 1; break;
            case 1: shape[k] = rint_in(60, 70); break;
            default: shape[k] = rint_in(2, 12); break;
            }
        }
    }
    /* at most 6000 elements; now and then none */
    while (volume_of(ndim, shape) > 6000)
        for (int k = 0; k < ndim; k++)
            shape[k] = (shape[k] + 1) / 2;
    if (ndim > 0 && rint_in(0, 49) == 0)
        shape[rint_in(0, ndim - 1)] = 0;

    s = rint_in(0, 4) == 0 ? rint_in(2, 3) : 1;
    for (int k = ndim - 1; k >= 0; k--) {
        ds[k] = s;
        s = s * (shape[k] > 0 ? shape[k] : 1) + (rint_in(0, 3) == 0 ? rint_in(1, 3) : 0);
    }
    for (int k = 0; k < ndim; k++) {
        int j = (int)rint_in(0, k);
        perm[k] = perm[j];
        perm[j] = k;
        flip[k] = rint_in(0, 3) == 0;
    }
    dense_in_order(ndim, shape, perm, flip, ss);
    for (int k = 0; k < ndim; k++) {
        if (rint_in(0, 7) == 0)
            ss[k] = 0;
        else if (rint_in(0, 5) == 0 && ss[k] != 1 && ss[k] != -1)
            ss[k] += ss[k] > 0 ? 1 : -1; /* a gap */
    }
    *out_ndim = ndim;
}

static void test_random_plans(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 4, 5, 8, 12, 16, 64};
    int64_t shape[STRIDED_MAX_NDIM], ds[STRIDED_MAX_NDIM], ss[STRIDED_MAX_NDIM];
    int counts[6] = {0};

    for (int t = 0; t < 3000; t++) {
        int ndim, isz = sizes[rint_in(0, 8)], u = -1;
        random_layouts(&ndim, shape, ds, ss);
        /* a source unit axis other than the last, if any */
        for (int k = 0; k + 1 < ndim; k++)
            if (ss[k] == 1 && (u < 0 || rint_in(0, 1) == 0))
                u = k;
        for (int kind = STRIDED_COPY_CONTIGUOUS; kind <= STRIDED_COPY_GATHER; kind++) {
            if (!kernel_fits((strided_copy_kernel)kind, ndim, ds, ss, u))
                continue;
            strided_copy_plan p = plan_of((strided_copy_kernel)kind, isz, ndim, shape, ds, ss,
                                          kind == STRIDED_COPY_TRANSPOSE ? u : -1);
            if (p.volume == 0)
                p.kernel = STRIDED_COPY_NOTHING;
            check_run_at(&p, (int)rint_in(0, 7), (enum place)rint_in(0, 2), __FILE__, __LINE__);
            counts[p.kernel]++;
        }
    }
    /* Every kind came up often enough to matter. */
    for (int kind = STRIDED_COPY_NOTHING; kind <= STRIDED_COPY_GATHER; kind++)
        if (counts[kind] < 20)
            fail_msg("only %d random plans of kind %s", counts[kind],
                     kind_name((strided_copy_kernel)kind));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_volume_zero_writes_nothing),
        cmocka_unit_test(test_ndim0_copies_one_element),
        cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_rows_2d),
        cmocka_unit_test(test_rows_longer_than_a_chunk),
        cmocka_unit_test(test_rows_3d),
        cmocka_unit_test(test_transpose_2d),
        cmocka_unit_test(test_transpose_3d),
        cmocka_unit_test(test_transpose_thin),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_gather_2d),
        cmocka_unit_test(test_gather_long_rows),
        cmocka_unit_test(test_ndim1),
        cmocka_unit_test(test_ndim6),
        cmocka_unit_test(test_ndim64),
        cmocka_unit_test(test_transpose_blocks_2d),
        cmocka_unit_test(test_transpose_blocks_3d),
        cmocka_unit_test(test_planes),
        cmocka_unit_test(test_transpose_thin_vectors),
        cmocka_unit_test(test_gather_small_strides),
        cmocka_unit_test(test_gather_reverse),
        cmocka_unit_test(test_stream_copy),
        cmocka_unit_test(test_random_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
