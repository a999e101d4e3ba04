/*
 * test_copy_plan.c: strided_copy_plan_make (strided/copy.h): the kernel
 * named for each layout pair, the normalised shapes and strides, the
 * validation errors, and, for thousands of random pairs, that the plan
 * visits exactly the (destination offset, source offset) pairs the two
 * layouts define (a brute-force oracle over the destination's indices).
 */
#include "test_util.h"

#include <stdlib.h>

#include "strided/copy.h"

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

/* ---- the oracle ---- */

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

static void test_random_plans_visit_the_same_pairs(void **state)
{
    (void)state;
    srand(12345);
    enum { CASES = 4000, MAXV = 1024 };
    static pair want[MAXV], got[MAXV];
    int kinds[6] = {0};
    for (int c = 0; c < CASES; c++) {
        int nd = 1 + rand() % 5;
        int64_t shape[5], vol = 1;
        for (int i = 0; i < nd; i++) {
            shape[i] = 1 + rand() % 4;
            vol *= shape[i];
        }
        /* The destination: a permuted dense layout, some axes reversed. */
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
        strided_layout dst = L(nd, shape, ds, 4);
        /* The source: a suffix of the shape, extents possibly 1, strides
         * random in -7..7 (zero allowed: the source may repeat). */
        int ns = rand() % (nd + 1);
        int64_t sshape[5], ss[5];
        for (int j = 0; j < ns; j++) {
            sshape[j] = rand() % 3 == 0 ? 1 : shape[nd - ns + j];
            ss[j] = rand() % 15 - 7;
        }
        strided_layout src = L(ns, sshape, ss, 4);
        strided_copy_plan p = plan(&dst, &src);
        kinds[p.kernel]++;
        assert_true(vol <= MAXV);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_dense_layouts_are_one_run),
        cmocka_unit_test(test_transposed_source),
        cmocka_unit_test(test_rows_gather_and_broadcast),
        cmocka_unit_test(test_backward_destination_is_flipped),
        cmocka_unit_test(test_extent_one_axes_and_scalars),
        cmocka_unit_test(test_nothing_to_copy),
        cmocka_unit_test(test_sixty_two_dimensions_merge),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_random_plans_visit_the_same_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
