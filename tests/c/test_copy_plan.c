/*
 * test_copy_plan.c: strided_copy_plan_make (strided/copy.h): the kernel
 * named for each layout pair, the normalised shapes and strides, the
 * validation errors, and, for thousands of random pairs, that the plan
 * visits exactly the (destination offset, source offset) pairs the two
 * layouts define (a brute-force oracle over the destination's indices).
 *
 * Then the plan cache that copies plan through (strided__copy_plan_cached,
 * src/copy/plan.h): the same plans as the planner for thousands of
 * random pairs, pairs whose hashes are made to collide, replacement in a
 * full set, one cache per thread, errors reported on every call, and
 * planning without memory for the cache.
 */
#include "test_util.h"

#include <pthread.h>
#include <stdlib.h>

#include "strided/copy.h"
/* The cache and its counters are internal: the target adds src/ to its
 * include path. */
#include "copy/plan.h"
#include "copy/testing.h"
#include "memory/memory.h"

#define OP "copy"

static strided_layout L(int ndim, const int64_t *shape, const int64_t *strides, int itemsize)
{
    strided_layout l;
    assert_ok(strided_layout_init(&l, ndim, shape, strides, itemsize));
    return l;
}

static strided_copy_plan plan(const strided_layout *dst, const strided_layout *src)
{
    strided_copy_plan p;
    assert_ok(strided_copy_plan_make(dst, src, &p));
    return p;
}

static void check_axes(const strided_copy_plan *p, int ndim, const int64_t *shape,
                       const int64_t *ds, const int64_t *ss)
{
    assert_int_equal(p->ndim, ndim);
    for (int i = 0; i < ndim; i++) {
        assert_i64(p->shape[i], shape[i]);
        assert_i64(p->dst_strides[i], ds[i]);
        assert_i64(p->src_strides[i], ss[i]);
    }
}

static void test_same_dense_layouts_are_one_run(void **state)
{
    (void)state;
    strided_layout c = L(DIMS(2, 3, 4), NULL, 4);
    strided_copy_plan p = plan(&c, &c);
    assert_int_equal(p.kernel, STRIDED_COPY_CONTIGUOUS);
    check_axes(&p, 1, I64(24), I64(1), I64(1));
    assert_i64(p.volume, 24);
    assert_int_equal(p.itemsize, 4);
    assert_string_equal(strided_copy_kernel_name(p.kernel), "contiguous");
    /* F to F too: ordered by the destination's strides. */
    strided_layout f = L(DIMS(2, 3, 4), I64(1, 2, 6), 4);
    p = plan(&f, &f);
    assert_int_equal(p.kernel, STRIDED_COPY_CONTIGUOUS);
    check_axes(&p, 1, I64(24), I64(1), I64(1));
}

static void test_transposed_source(void **state)
{
    (void)state;
    strided_layout dst = L(DIMS(4, 6), NULL, 4);
    strided_layout src = L(DIMS(4, 6), I64(1, 4), 4); /* a (6,4) array's .T */
    strided_copy_plan p = plan(&dst, &src);
    assert_int_equal(p.kernel, STRIDED_COPY_TRANSPOSE);
    assert_int_equal(p.src_unit_axis, 0);
    check_axes(&p, 2, I64(4, 6), I64(6, 1), I64(1, 4));
    /* F destination from C source: the same transpose, seen from the
     * destination's order. */
    strided_layout fd = L(DIMS(4, 6), I64(1, 4), 4);
    strided_layout cs = L(DIMS(4, 6), NULL, 4);
    p = plan(&fd, &cs);
    assert_int_equal(p.kernel, STRIDED_COPY_TRANSPOSE);
    check_axes(&p, 2, I64(6, 4), I64(4, 1), I64(1, 6));
    assert_int_equal(p.src_unit_axis, 0);
}

static void test_rows_gather_and_broadcast(void **state)
{
    (void)state;
    strided_layout dst = L(DIMS(4, 6), NULL, 2);
    strided_layout rows = L(DIMS(4, 6), I64(8, 1), 2); /* [:, :6] of (4, 8) */
    strided_copy_plan p = plan(&dst, &rows);
    assert_int_equal(p.kernel, STRIDED_COPY_ROWS);
    check_axes(&p, 2, I64(4, 6), I64(6, 1), I64(8, 1));

    strided_layout gapped = L(DIMS(4, 6), I64(12, 2), 2); /* [:, ::2] of (4, 12) */
    p = plan(&dst, &gapped);
    assert_int_equal(p.kernel, STRIDED_COPY_GATHER);
    assert_int_equal(p.src_unit_axis, -1);

    strided_layout row = L(DIMS(6), NULL, 2); /* broadcast over rows */
    p = plan(&dst, &row);
    assert_int_equal(p.kernel, STRIDED_COPY_ROWS);
    check_axes(&p, 2, I64(4, 6), I64(6, 1), I64(0, 1));

    strided_layout col = L(DIMS(4, 1), NULL, 2); /* broadcast along rows */
    p = plan(&dst, &col);
    assert_int_equal(p.kernel, STRIDED_COPY_BROADCAST);
    check_axes(&p, 2, I64(4, 6), I64(6, 1), I64(1, 0));

    strided_layout scalar = L(0, NULL, NULL, 2);
    p = plan(&dst, &scalar);
    assert_int_equal(p.kernel, STRIDED_COPY_BROADCAST);
    check_axes(&p, 1, I64(24), I64(1), I64(0));
}

static void test_backward_destination_is_flipped(void **state)
{
    (void)state;
    /* dst = a[::-1] of 5 elements (element 0 at the end), src dense. */
    strided_layout dst = L(DIMS(5), I64(-1), 8);
    strided_layout src = L(DIMS(5), NULL, 8);
    strided_copy_plan p = plan(&dst, &src);
    assert_int_equal(p.kernel, STRIDED_COPY_GATHER);
    check_axes(&p, 1, I64(5), I64(1), I64(-1));
    assert_i64(p.dst_offset, -4);
    assert_i64(p.src_offset, 4);
    /* Both reversed: the same run, forwards. */
    strided_layout both = L(DIMS(5), I64(-1), 8);
    p = plan(&both, &both);
    assert_int_equal(p.kernel, STRIDED_COPY_CONTIGUOUS);
    assert_i64(p.dst_offset, -4);
    assert_i64(p.src_offset, -4);
}

static void test_extent_one_axes_and_scalars(void **state)
{
    (void)state;
    strided_layout dst = L(DIMS(1, 5, 1), I64(100, 1, 7), 4);
    strided_layout src = L(DIMS(1, 5, 1), I64(3, 2, 9), 4);
    strided_copy_plan p = plan(&dst, &src);
    check_axes(&p, 1, I64(5), I64(1), I64(2));
    assert_int_equal(p.kernel, STRIDED_COPY_GATHER);
    strided_layout zero_d = L(0, NULL, NULL, 16);
    p = plan(&zero_d, &zero_d);
    assert_int_equal(p.kernel, STRIDED_COPY_CONTIGUOUS);
    check_axes(&p, 1, I64(1), I64(1), I64(1));
    assert_i64(p.volume, 1);
}

static void test_nothing_to_copy(void **state)
{
    (void)state;
    strided_layout dst = L(DIMS(3, 0), NULL, 4);
    strided_layout src = L(DIMS(0), NULL, 4);
    strided_copy_plan p = plan(&dst, &src);
    assert_int_equal(p.kernel, STRIDED_COPY_NOTHING);
    assert_int_equal(p.ndim, 0);
    assert_i64(p.volume, 0);
    assert_string_equal(strided_copy_kernel_name(p.kernel), "nothing");
}

static void test_sixty_two_dimensions_merge(void **state)
{
    (void)state;
    int64_t shape[62];
    for (int i = 0; i < 62; i++)
        shape[i] = 2;
    strided_layout c = L(62, shape, NULL, 1);
    strided_copy_plan p = plan(&c, &c);
    assert_int_equal(p.kernel, STRIDED_COPY_CONTIGUOUS);
    check_axes(&p, 1, I64(INT64_C(1) << 62), I64(1), I64(1));
    /* Reversed axis order on the source: 62 axes stay, one transposes. */
    int perm[62];
    for (int i = 0; i < 62; i++)
        perm[i] = 61 - i;
    strided_layout rev;
    assert_ok(strided_layout_permute(&c, 62, perm, &rev));
    strided_layout dense;
    assert_ok(strided_layout_init_dense(&dense, 62, rev.shape, 1, STRIDED_ORDER_C, 0, NULL));
    p = plan(&dense, &rev);
    assert_int_equal(p.kernel, STRIDED_COPY_TRANSPOSE);
    assert_int_equal(p.ndim, 62);
    assert_int_equal(p.src_unit_axis, 0);
}

static void test_errors(void **state)
{
    (void)state;
    strided_copy_plan p;
    memset(&p, SENTINEL, sizeof p);
    strided_copy_plan before = p;
    strided_layout d8 = L(DIMS(3, 4), NULL, 8), s4 = L(DIMS(3, 4), NULL, 4);
    assert_error(strided_copy_plan_make(&d8, &s4, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "The itemsize of the destination and source layouts must match. Got "
                 "dst itemsize:8 and src itemsize:4");
    strided_layout d = L(DIMS(3, 4), NULL, 4), s5 = L(DIMS(5), NULL, 4);
    assert_error(strided_copy_plan_make(&d, &s5, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "Layouts of shapes (3,4) and (5,) cannot be broadcast together: the "
                 "source's shape must broadcast to the destination's");
    /* The destination is never broadcast. */
    strided_layout d1 = L(DIMS(1, 4), NULL, 4), s34 = L(DIMS(3, 4), NULL, 4);
    assert_error(strided_copy_plan_make(&d1, &s34, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "Layouts of shapes (1,4) and (3,4) cannot be broadcast together: the "
                 "source's shape must broadcast to the destination's");
    strided_layout s234 = L(DIMS(2, 3, 4), NULL, 4);
    assert_error(strided_copy_plan_make(&d, &s234, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "Layouts of shapes (3,4) and (2,3,4) cannot be broadcast together: the "
                 "source's shape must broadcast to the destination's");
    strided_layout repeat = L(DIMS(4, 4), I64(1, 0), 4), s44 = L(DIMS(4, 4), NULL, 4);
    assert_error(strided_copy_plan_make(&repeat, &s44, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "The destination layout is non-unique, i.e. some elements may overlap "
                 "in memory: (4,4):(1,0)");
    assert_error(strided_copy_plan_make(NULL, &d, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "dst, src and out are required");
    assert_error(strided_copy_plan_make(&d, NULL, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "dst, src and out are required");
    assert_error(strided_copy_plan_make(&d, &d, NULL), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "dst, src and out are required");
    assert_memory_equal(&p, &before, sizeof p);
}

typedef struct pair {
    int64_t d, s;
} pair;

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Every (dst offset, src offset) the layouts define, by brute force. */
static int64_t layout_pairs(const strided_layout *dst, const strided_layout *src, pair *out)
{
    int64_t n = strided_layout_volume(dst), idx[STRIDED_MAX_NDIM] = {0};
    int nd = dst->ndim, ns = src->ndim;
    for (int64_t k = 0; k < n; k++) {
        int64_t d = 0, s = 0;
        for (int i = 0; i < nd; i++) {
            d += idx[i] * dst->strides[i];
            int j = i - (nd - ns);
            if (j >= 0 && src->shape[j] != 1)
                s += idx[i] * src->strides[j];
        }
        out[k].d = d;
        out[k].s = s;
        for (int i = nd - 1; i >= 0 && ++idx[i] == dst->shape[i]; i--)
            idx[i] = 0;
    }
    return n;
}

/* The same pairs as the plan visits them. */
static int64_t plan_pairs(const strided_copy_plan *p, pair *out)
{
    int64_t idx[STRIDED_MAX_NDIM] = {0};
    for (int64_t k = 0; k < p->volume; k++) {
        int64_t d = p->dst_offset, s = p->src_offset;
        for (int i = 0; i < p->ndim; i++) {
            d += idx[i] * p->dst_strides[i];
            s += idx[i] * p->src_strides[i];
        }
        out[k].d = d;
        out[k].s = s;
        for (int i = p->ndim - 1; i >= 0 && ++idx[i] == p->shape[i]; i--)
            idx[i] = 0;
    }
    return p->volume;
}

/* A random pair of at most 5 axes and 1024 elements: the destination a
 * permuted dense layout with some axes reversed, the source a suffix of
 * its shape (extents possibly 1) with strides in -7..7 (zero allowed: the
 * source may repeat). Uses rand(). */
static void random_pair(strided_layout *dst, strided_layout *src)
{
    int nd = 1 + rand() % 5;
    int64_t shape[5];
    for (int i = 0; i < nd; i++)
        shape[i] = 1 + rand() % 4;
    int perm[5];
    for (int i = 0; i < nd; i++)
        perm[i] = i;
    for (int i = nd - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int64_t ds[5], step = 1;
    for (int k = nd - 1; k >= 0; k--) {
        ds[perm[k]] = step * ((rand() % 4 == 0) ? -1 : 1);
        step *= shape[perm[k]];
    }
    *dst = L(nd, shape, ds, 4);
    int ns = rand() % (nd + 1);
    int64_t sshape[5], ss[5];
    for (int j = 0; j < ns; j++) {
        sshape[j] = rand() % 3 == 0 ? 1 : shape[nd - ns + j];
        ss[j] = rand() % 15 - 7;
    }
    *src = L(ns, sshape, ss, 4);
}

static void test_random_plans_visit_the_same_pairs(void **state)
{
    (void)state;
    srand(12345);
    enum { CASES = 4000, MAXV = 1024 };
    static pair want[MAXV], got[MAXV];
    int kinds[6] = {0};
    for (int c = 0; c < CASES; c++) {
        strided_layout dst, src;
        random_pair(&dst, &src);
        strided_copy_plan p = plan(&dst, &src);
        kinds[p.kernel]++;
        assert_true(strided_layout_volume(&dst) <= MAXV);
        int64_t n = layout_pairs(&dst, &src, want);
        assert_i64(plan_pairs(&p, got), n);
        qsort(want, (size_t)n, sizeof *want, cmp_pair);
        qsort(got, (size_t)n, sizeof *got, cmp_pair);
        assert_memory_equal(want, got, (size_t)n * sizeof *want);
        /* The plan's promises. */
        for (int i = 0; i < p.ndim; i++) {
            assert_true(p.shape[i] > 1 || p.ndim == 1);
            assert_true(p.dst_strides[i] >= 0);
            if (i > 0)
                assert_true(p.dst_strides[i - 1] > p.dst_strides[i]);
        }
        if (p.kernel == STRIDED_COPY_TRANSPOSE)
            assert_i64(p.src_strides[p.src_unit_axis], 1);
    }
    /* The generator reaches every kernel but "nothing". */
    for (int k = STRIDED_COPY_CONTIGUOUS; k <= STRIDED_COPY_GATHER; k++)
        assert_true(kinds[k] > 0);
}

/* Two plans agree in every field a plan defines: the header and the first
 * ndim axes. */
#define assert_same_plan(a, b) check_same_plan_((a), (b), __FILE__, __LINE__)

static void check_same_plan_(const strided_copy_plan *a, const strided_copy_plan *b,
                             const char *file, int line)
{
    bool same = a->kernel == b->kernel && a->ndim == b->ndim && a->itemsize == b->itemsize &&
                a->src_unit_axis == b->src_unit_axis && a->volume == b->volume &&
                a->dst_offset == b->dst_offset && a->src_offset == b->src_offset;
    for (int i = 0; same && i < a->ndim; i++)
        same = a->shape[i] == b->shape[i] && a->dst_strides[i] == b->dst_strides[i] &&
               a->src_strides[i] == b->src_strides[i];
    if (!same)
        fail_at(file, line,
                "plans differ: %s ndim %d volume %lld offsets %lld/%lld, against %s ndim %d "
                "volume %lld offsets %lld/%lld\n",
                strided_copy_kernel_name(a->kernel), a->ndim, (long long)a->volume,
                (long long)a->dst_offset, (long long)a->src_offset,
                strided_copy_kernel_name(b->kernel), b->ndim, (long long)b->volume,
                (long long)b->dst_offset, (long long)b->src_offset);
}

/* Look the pair up and check the plan against the planner's. */
#define assert_cached(dst, src) check_cached_((dst), (src), __FILE__, __LINE__)

static void check_cached_(const strided_layout *dst, const strided_layout *src, const char *file,
                          int line)
{
    strided_copy_plan want, got;
    check_status_(strided_copy_plan_make(dst, src, &want), STRIDED_OK, file, line);
    memset(&got, SENTINEL, sizeof got);
    check_status_(strided__copy_plan_cached(dst, src, &got), STRIDED_OK, file, line);
    check_same_plan_(&got, &want, file, line);
}

static strided__plan_cache_stats cache_stats(void)
{
    strided__plan_cache_stats s;
    strided__copy_plan_cache_stats(&s);
    return s;
}

#define assert_stats(hits, misses, evictions, entries) \
    check_stats_((hits), (misses), (evictions), (entries), __FILE__, __LINE__)

static void check_stats_(uint64_t hits, uint64_t misses, uint64_t evictions, int entries,
                         const char *file, int line)
{
    strided__plan_cache_stats s = cache_stats();
    if (s.hits != hits || s.misses != misses || s.evictions != evictions || s.entries != entries)
        fail_at(file, line,
                "cache: %llu hits, %llu misses, %llu evictions, %d entries; expected %llu, "
                "%llu, %llu, %d\n",
                (unsigned long long)s.hits, (unsigned long long)s.misses,
                (unsigned long long)s.evictions, s.entries, (unsigned long long)hits,
                (unsigned long long)misses, (unsigned long long)evictions, entries);
}

static void test_cache_gives_the_planners_plans(void **state)
{
    (void)state;
    enum { PAIRS = 300, ROUNDS = 10 };
    static strided_layout dst[PAIRS], src[PAIRS];
    srand(777);
    strided__copy_plan_cache_clear();
    assert_stats(0, 0, 0, 0);
    /* Thousands of random pairs, each looked up twice: planned, then
     * found. */
    for (int c = 0; c < 4000; c++) {
        strided_layout d, s;
        random_pair(&d, &s);
        assert_cached(&d, &s);
        assert_cached(&d, &s);
    }
    strided__plan_cache_stats st = cache_stats();
    assert_int_equal(st.hits + st.misses, 8000);
    assert_true(st.hits >= 4000);
    assert_int_equal(st.capacity, 64);
    /* More pairs than the cache holds, in random order: every lookup, hit
     * or miss, gives the planner's plan. Every miss fills an empty entry
     * or replaces one. */
    strided__copy_plan_cache_clear();
    for (int i = 0; i < PAIRS; i++)
        random_pair(&dst[i], &src[i]);
    for (int r = 0; r < ROUNDS * PAIRS; r++) {
        int i = rand() % PAIRS;
        assert_cached(&dst[i], &src[i]);
    }
    st = cache_stats();
    assert_int_equal(st.hits + st.misses, ROUNDS * PAIRS);
    assert_true(st.hits > 0);
    assert_true(st.evictions > 0);
    assert_true(st.entries > 0 && st.entries <= st.capacity);
    assert_int_equal(st.misses, (uint64_t)st.entries + st.evictions);
}

/* Pairs that differ in one keyed field each. */
static void test_cache_keeps_pairs_with_the_same_hash_apart(void **state)
{
    (void)state;
    /* Every hash 0: every pair lands in one set of two entries, and only
     * the comparison of every key word tells them apart. */
    strided__copy_plan_cache_set_hash_mask(0);
    strided_layout c46 = L(DIMS(4, 6), NULL, 4);
    strided_layout t46 = L(DIMS(4, 6), I64(1, 4), 4);  /* .T of (6,4) */
    strided_layout r46 = L(DIMS(4, 6), I64(8, 1), 4);  /* rows */
    strided_layout t46b = L(DIMS(4, 6), I64(1, 5), 4); /* one stride */
    strided_layout c64 = L(DIMS(6, 4), I64(4, 1), 4);  /* the shape */
    strided_layout c46x8 = L(DIMS(4, 6), NULL, 8);     /* the itemsize */
    strided_layout t46x8 = L(DIMS(4, 6), I64(1, 4), 8);
    strided_layout row6 = L(DIMS(6), NULL, 4);     /* src ndim 1 */
    strided_layout row16 = L(DIMS(1, 6), NULL, 4); /* src ndim 2 */
    strided_layout col41 = L(DIMS(4, 1), NULL, 4);
    const strided_layout *pairs[][2] = {
        {&c46, &t46},  {&c46, &r46},   {&c46, &t46b},  {&c64, &c64}, {&c46x8, &t46x8},
        {&c46, &row6}, {&c46, &row16}, {&c46, &col41}, {&c46, &c46},
    };
    const int n = (int)(sizeof pairs / sizeof pairs[0]);
    /* Each pair after each other: a's plan is never b's. */
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            assert_cached(pairs[a][0], pairs[a][1]);
            assert_cached(pairs[b][0], pairs[b][1]);
            assert_cached(pairs[a][0], pairs[a][1]);
        }
    assert_true(cache_stats().hits > 0);
    assert_int_equal(cache_stats().entries, 2);

    /* implicit_strides is keyed too: a hand-made layout that claims
     * implicit strides skips the uniqueness test (the planner trusts it),
     * the same strides stated explicitly fail it, every time. */
    strided_layout repeat = L(DIMS(4, 4), I64(1, 0), 4);
    strided_layout claims = repeat;
    claims.implicit_strides = true;
    strided_layout s44 = L(DIMS(4, 4), NULL, 4);
    assert_cached(&claims, &s44);
    strided_copy_plan p;
    for (int i = 0; i < 2; i++)
        assert_error(strided__copy_plan_cached(&repeat, &s44, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "The destination layout is non-unique, i.e. some elements may "
                     "overlap in memory: (4,4):(1,0)");
    strided__copy_plan_cache_set_hash_mask(UINT64_MAX);
    strided__copy_plan_cache_clear();
}

/* In a full set the entry used less recently is replaced. */
static void test_cache_replaces_the_older_entry(void **state)
{
    (void)state;
    strided__copy_plan_cache_set_hash_mask(0);
    strided_layout c = L(DIMS(8, 8), NULL, 2);
    strided_layout a = L(DIMS(8, 8), I64(1, 8), 2);
    strided_layout b = L(DIMS(8, 8), I64(16, 1), 2);
    strided_layout d = L(DIMS(8, 8), I64(16, 2), 2);
    assert_cached(&c, &a); /* miss */
    assert_cached(&c, &b); /* miss */
    assert_stats(0, 2, 0, 2);
    assert_cached(&c, &a); /* hit: b is now the older */
    assert_cached(&c, &d); /* miss: replaces b */
    assert_stats(1, 3, 1, 2);
    assert_cached(&c, &a); /* hit */
    assert_cached(&c, &b); /* miss: replaces d */
    assert_stats(2, 4, 2, 2);
    assert_cached(&c, &b); /* hit */
    assert_cached(&c, &a); /* hit */
    assert_stats(4, 4, 2, 2);
    /* Clearing forgets everything and starts the counters again. */
    strided__copy_plan_cache_clear();
    assert_stats(0, 0, 0, 0);
    assert_cached(&c, &a);
    assert_stats(0, 1, 0, 1);
    strided__copy_plan_cache_clear();
}

/* Each thread its own cache: four threads, each looking up its own two
 * pairs a thousand times, see exactly two misses each; the main thread's
 * cache is untouched. */
typedef struct worker {
    strided_layout dst[2], src[2];
    strided_copy_plan want[2];
    strided__plan_cache_stats stats;
    int wrong;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (int r = 0; r < 1000; r++)
        for (int k = 0; k < 2; k++) {
            strided_copy_plan got;
            if (strided__copy_plan_cached(&w->dst[k], &w->src[k], &got) != STRIDED_OK ||
                got.kernel != w->want[k].kernel || got.ndim != w->want[k].ndim ||
                got.volume != w->want[k].volume ||
                memcmp(got.src_strides, w->want[k].src_strides,
                       (size_t)got.ndim * sizeof(int64_t)) != 0)
                w->wrong++;
        }
    strided__copy_plan_cache_stats(&w->stats);
    return NULL;
}

static void test_cache_is_per_thread(void **state)
{
    (void)state;
    enum { THREADS = 4 };
    static worker w[THREADS];
    pthread_t t[THREADS];
    strided__copy_plan_cache_clear();
    strided_layout c = L(DIMS(16, 16), NULL, 4);
    assert_cached(&c, &c);
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        int64_t n = 3 + i;
        w[i].dst[0] = L(DIMS(n, 5), NULL, 4);
        w[i].src[0] = L(DIMS(n, 5), I64(1, n), 4); /* transpose */
        w[i].dst[1] = L(DIMS(n, 5), NULL, 4);
        w[i].src[1] = L(DIMS(n, 5), I64(5 * i + 7, 1), 4); /* rows */
        for (int k = 0; k < 2; k++)
            w[i].want[k] = plan(&w[i].dst[k], &w[i].src[k]);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(w[i].wrong, 0);
        assert_int_equal(w[i].stats.misses, 2);
        assert_int_equal(w[i].stats.hits, 1998);
        assert_int_equal(w[i].stats.entries, 2);
    }
    assert_stats(0, 1, 0, 1);
    strided__copy_plan_cache_clear();
}

/* A pair that fails to plan is never kept: it fails, with its message,
 * on every call, and the output stays untouched. */
static void test_cache_reports_errors_every_time(void **state)
{
    (void)state;
    strided__copy_plan_cache_clear();
    strided_layout d8 = L(DIMS(3, 4), NULL, 8), s4 = L(DIMS(3, 4), NULL, 4);
    strided_layout d = L(DIMS(3, 4), NULL, 4), s5 = L(DIMS(5), NULL, 4);
    strided_layout repeat = L(DIMS(4, 4), I64(1, 0), 4), s44 = L(DIMS(4, 4), NULL, 4);
    strided_copy_plan p;
    memset(&p, SENTINEL, sizeof p);
    for (int i = 0; i < 2; i++) {
        assert_error(strided__copy_plan_cached(&d8, &s4, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "The itemsize of the destination and source layouts must match. Got "
                     "dst itemsize:8 and src itemsize:4");
        assert_error(strided__copy_plan_cached(&d, &s5, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "Layouts of shapes (3,4) and (5,) cannot be broadcast together");
        assert_error(strided__copy_plan_cached(&repeat, &s44, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "The destination layout is non-unique, i.e. some elements may overlap "
                     "in memory: (4,4):(1,0)");
        assert_error(strided__copy_plan_cached(NULL, &d, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "dst, src and out are required");
        assert_error(strided__copy_plan_cached(&d, NULL, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "dst, src and out are required");
        assert_error(strided__copy_plan_cached(&d, &d, NULL), STRIDED_ERR_INVALID_ARGUMENT, OP,
                     "dst, src and out are required");
        assert_untouched(&p, sizeof p);
    }
    assert_stats(0, 0, 0, 0);
    /* A valid pair next to them is kept as usual. */
    assert_cached(&d, &d);
    assert_cached(&d, &d);
    assert_stats(1, 1, 0, 1);
    strided__copy_plan_cache_clear();
}

/* Without memory for the cache (or for an entry), plans are still made,
 * just not kept. */
static void test_cache_without_memory_still_plans(void **state)
{
    (void)state;
    strided_layout c = L(DIMS(5, 7), NULL, 4), t = L(DIMS(5, 7), I64(1, 5), 4);
    strided_layout r = L(DIMS(5, 7), I64(9, 1), 4);
    strided__copy_plan_cache_clear();
    strided__fail_allocation_after(0); /* the cache itself */
    assert_cached(&c, &t);
    strided__fail_allocation_after(-1);
    assert_stats(0, 0, 0, 0);
    assert_cached(&c, &t); /* the cache and the entry's words */
    assert_stats(0, 1, 0, 1);
    strided__fail_allocation_after(0); /* the next entry's words */
    assert_cached(&c, &r);
    strided__fail_allocation_after(-1);
    assert_stats(0, 2, 0, 1);
    assert_cached(&c, &r); /* planned again, kept this time */
    assert_cached(&c, &r);
    assert_cached(&c, &t);
    assert_stats(2, 3, 0, 2);
    strided__copy_plan_cache_clear();
}

/* Layouts filled in by hand past the layout invariant are refused before
 * planning: normalising would negate INT64_MIN or add offsets that
 * overflow. Neither the plain call nor the cached one plans them. */
static void test_hand_made_invalid_layouts(void **state)
{
    (void)state;
    strided_copy_plan p;
    memset(&p, SENTINEL, sizeof p);
    strided_copy_plan before = p;
    strided_layout d = L(DIMS(2, 3), NULL, 4);
    strided_layout bad = raw(DIMS(2, 3), I64(INT64_MIN, 1), 4);
    assert_error(strided_copy_plan_make(&d, &bad, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "invalid source layout: stride -9223372036854775808 of axis 0 times "
                 "itemsize 4 overflows int64");
    assert_error(strided_copy_plan_make(&bad, &d, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "invalid destination layout");
    strided_layout wide = raw(DIMS(2, 3), I64(INT64_C(1) << 62, 1), 4);
    assert_error(strided_copy_plan_make(&wide, &d, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "invalid destination layout");
    strided_layout badndim = d;
    badndim.ndim = 65;
    assert_error(strided_copy_plan_make(&badndim, &d, &p), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "invalid destination layout");
    assert_memory_equal(&p, &before, sizeof p);
    char dst[24], src[24] = {0};
    assert_error(strided_copy_host(dst, &d, src, &bad, 1), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "invalid source layout");
    /* Twice: a failure is never cached. */
    assert_error(strided_copy_host(dst, &d, src, &bad, 1), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "invalid source layout");
}

/* A negative thread count is an argument error, not an assertion. */
static void test_negative_nthreads(void **state)
{
    (void)state;
    strided_layout d = L(DIMS(2, 3), NULL, 4);
    char dst[24], src[24] = {1};
    memset(dst, 7, sizeof dst);
    assert_error(strided_copy_host(dst, &d, src, &d, -1), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "nthreads must be 0 (by the copy's size) or a positive number of threads, "
                 "got -1");
    for (size_t i = 0; i < sizeof dst; i++)
        assert_int_equal(dst[i], 7);
    assert_ok(strided_copy_host(dst, &d, src, &d, 1));
    assert_int_equal(dst[0], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_made_invalid_layouts),
        cmocka_unit_test(test_negative_nthreads),
        cmocka_unit_test(test_same_dense_layouts_are_one_run),
        cmocka_unit_test(test_transposed_source),
        cmocka_unit_test(test_rows_gather_and_broadcast),
        cmocka_unit_test(test_backward_destination_is_flipped),
        cmocka_unit_test(test_extent_one_axes_and_scalars),
        cmocka_unit_test(test_nothing_to_copy),
        cmocka_unit_test(test_sixty_two_dimensions_merge),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random_plans_visit_the_same_pairs),
        cmocka_unit_test(test_cache_gives_the_planners_plans),
        cmocka_unit_test(test_cache_keeps_pairs_with_the_same_hash_apart),
        cmocka_unit_test(test_cache_replaces_the_older_entry),
        cmocka_unit_test(test_cache_is_per_thread),
        cmocka_unit_test(test_cache_reports_errors_every_time),
        cmocka_unit_test(test_cache_without_memory_still_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
