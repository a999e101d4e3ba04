/*
 * Tests of strided_layout_to_dense, a dense layout of the same shape in an
 * order kept from the input ('K'), C, F or a permutation, and of
 * strided_layout_coalesce, the same elements in as few axes as merge.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

/* A to_dense and what it gives: with code STRIDED_OK, the layout `want` as
 * text (with the input's itemsize and explicit strides), dense; otherwise
 * that failure, with a reason containing `want`, and the output
 * untouched. */
typedef struct dense_case {
    int line;
    strided_layout in;
    strided_order order;
    int nperm;
    const int *perm;
    strided_status code;
    const char *want;
} dense_case;

/* A coalesce and the layout it gives. */
typedef struct coalesce_case {
    int line;
    strided_layout in;
    const char *want;
} coalesce_case;

#define KEEP STRIDED_ORDER_KEEP
#define ORDER_C STRIDED_ORDER_C
#define ORDER_F STRIDED_ORDER_F
#define PERM STRIDED_ORDER_PERM

/* A dense result: its offsets cover [0, volume) and it needs volume
 * elements of memory. */
static void check_dense_result(const strided_layout *l, const char *file, int line)
{
    int64_t lo, hi, size = -1;
    int64_t vol = strided_layout_volume(l);

    if (!strided_layout_is_dense(l))
        fail_at(file, line, "the result is not dense\n");
    check_status_(strided_layout_required_size_in_bytes(l, &size), STRIDED_OK, file, line);
    check_i64_(size, vol * l->itemsize, "required size", file, line);
    strided_layout_offset_bounds(l, &lo, &hi);
    check_i64_(lo, 0, "min offset", file, line);
    check_i64_(hi, vol - 1, "max offset", file, line);
}

static void check_to_denses(const dense_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const dense_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_to_dense(&c->in, c->order, c->nperm, c->perm, &out),
                              &out, c->code, "dense", c->want, c->in.itemsize, AT(c));
        if (c->code == STRIDED_OK)
            check_dense_result(&out, AT(c));
    }
}

static void test_to_dense(void **state)
{
    strided_layout p = permuted(mk_c(DIMS(5, 3, 7), 1), 2, 0, 1);
    strided_layout i23 = mk_implicit(DIMS(2, 3), 4);
    strided_layout rows = sliced(mk_c(DIMS(5, 3), 4), s_from(1));
    strided_layout e03 = mk(DIMS(0, 3), I64(3, 1), 4);
    strided_layout c7 = mk_c(DIMS(7), 2), c5_11 = mk_c(DIMS(5, 11), 2);
    strided_layout mid = sliced(c5_11, S_REV, S_(3, 10, 1));
    strided_layout q = permuted(mk_c(DIMS(3, 5, 7), 2), 1, 0, 2);
    const dense_case cases[] = {
        /* The example of cuda.core's documentation: 'K' keeps the order of the
         * strides, so a permuted dense layout is its own result. */
        CASE(p, KEEP, 0, NULL, STRIDED_OK, "(7,5,3):(1,21,7)"),
        CASE(p, ORDER_C, 0, NULL, STRIDED_OK, "(7,5,3):(15,3,1)"),
        CASE(p, ORDER_F, 0, NULL, STRIDED_OK, "(7,5,3):(1,7,35)"),
        CASE(sliced(mk_c(DIMS(5, 3, 7), 1), s_from(1), S_REV), KEEP, 0, NULL, STRIDED_OK,
             "(4,3,7):(21,7,1)"),
        CASE(mk(DIMS(4, 3), I64(0, 1), 2), KEEP, 0, NULL, STRIDED_OK, "(4,3):(1,4)"),
        CASE(i23, ORDER_F, 0, NULL, STRIDED_OK, "(2,3):(1,2)"),
        CASE(rows, ORDER_C, 0, NULL, STRIDED_OK, "(4,3):(3,1)"),
        CASE(rows, KEEP, 0, NULL, STRIDED_OK, "(4,3):(3,1)"),
        /* A permutation is always built, even when it is C order. */
        CASE(i23, PERM, AXES(0, 1), STRIDED_OK, "(2,3):(3,1)"),
        CASE(i23, PERM, AXES(1, 0), STRIDED_OK, "(2,3):(1,2)"),
        CASE(i23, PERM, AXES(-1, -2), STRIDED_OK, "(2,3):(1,2)"),
        /* An empty layout keeps its strides, but for a permutation. */
        CASE(e03, KEEP, 0, NULL, STRIDED_OK, "(0,3):(3,1)"),
        CASE(e03, ORDER_C, 0, NULL, STRIDED_OK, "(0,3):(3,1)"),
        CASE(e03, ORDER_F, 0, NULL, STRIDED_OK, "(0,3):(3,1)"),
        CASE(e03, PERM, AXES(1, 0), STRIDED_OK, "(0,3):(0,0)"),
        /* cuda.core's cases. */
        CASE(sliced(c7, S_(3, 6, 1)), KEEP, 0, NULL, STRIDED_OK, "(3,):(1,)"),
        CASE(sliced(c7, S_REV), KEEP, 0, NULL, STRIDED_OK, "(7,):(1,)"),
        CASE(sliced(c5_11, S_(1, -1, 1)), ORDER_C, 0, NULL, STRIDED_OK, "(3,11):(11,1)"),
        CASE(mid, KEEP, 0, NULL, STRIDED_OK, "(5,7):(7,1)"),
        CASE(mid, ORDER_F, 0, NULL, STRIDED_OK, "(5,7):(1,5)"),
        CASE(sliced(c5_11, s_from(-1)), KEEP, 0, NULL, STRIDED_OK, "(1,11):(11,1)"),
        CASE(q, KEEP, 0, NULL, STRIDED_OK, "(5,3,7):(7,35,1)"),
        CASE(q, ORDER_C, 0, NULL, STRIDED_OK, "(5,3,7):(21,7,1)"),
        CASE(q, ORDER_F, 0, NULL, STRIDED_OK, "(5,3,7):(1,5,15)"),
        CASE(q, PERM, AXES(2, 0, 1), STRIDED_OK, "(5,3,7):(3,1,15)"),
        /* Filled in by hand: no function makes an INT64_MIN stride. */
        CASE(raw(DIMS(2, 2), I64(INT64_MIN, 1), 8), KEEP, 0, NULL, STRIDED_OK, "(2,2):(2,1)"),
    };

    (void)state;
    assert_layout(p, "(7,5,3):(1,21,7)", 1);
    assert_layout(q, "(5,3,7):(7,35,1)", 2);
    check_to_denses(cases, ARRAY_LEN(cases));
}

/* When the layout already is what was asked for, its implicit strides
 * stay. */
static void test_to_dense_keeps_implicit_strides_when_a_no_op(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4);
    strided_layout u = mk_implicit(DIMS(1, 5), 4);
    strided_layout z = mk_implicit(0, NULL, 4);
    strided_layout k, c, f, k0;

    (void)state;
    assert_ok(strided_layout_to_dense(&i, STRIDED_ORDER_KEEP, 0, NULL, &k));
    assert_ok(strided_layout_to_dense(&i, STRIDED_ORDER_C, 0, NULL, &c));
    assert_ok(strided_layout_to_dense(&u, STRIDED_ORDER_F, 0, NULL, &f));
    assert_ok(strided_layout_to_dense(&z, STRIDED_ORDER_KEEP, 0, NULL, &k0));
    assert_layout_implicit(k, "(2,3):(3,1)", 4);
    assert_layout_implicit(c, "(2,3):(3,1)", 4);
    assert_layout_implicit(f, "(1,5):(5,1)", 4);
    assert_layout_implicit(k0, "():()", 4);
}

static void test_to_dense_refusals(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4);
    const dense_case cases[] = {
        CASE(d, (strided_order)9, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             "must be 'K', 'C', 'F', or a permutation"),
        CASE(d, PERM, AXES(0, 1, 2), STRIDED_ERR_INVALID_ARGUMENT,
             "stride_order must have the same length as shape. Shape has 2 "
             "dimensions, but stride_order has 3 elements."),
        CASE(d, PERM, AXES(0, 2), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid stride order: axis 2 out of range for 2D tensor"),
        CASE(d, PERM, AXES(1, 1), STRIDED_ERR_INVALID_ARGUMENT,
             "The stride order must be a permutation. Axis 1 appears "
             "multiple times."),
    };

    (void)state;
    check_to_denses(cases, ARRAY_LEN(cases));
}

static void test_coalesce(void **state)
{
    int64_t shape[64];
    strided_layout c53 = mk_c(DIMS(5, 3), 8);

    SHAPE64(shape, 3, 2, 17, 3, 30, 4, 45, 5, 63, 6);
    const coalesce_case cases[] = {
        CASE(mk_c(DIMS(2, 3, 4), 4), "(24,):(1,)"),
        CASE(mk_implicit(DIMS(2, 3, 4), 4), "(24,):(1,)"),
        CASE(mk_c(64, shape, 2), "(720,):(1,)"),
        /* Unit axes drop out, whatever their strides. */
        CASE(mk(DIMS(3, 1, 4), I64(4, 12, 1), 4), "(12,):(1,)"),
        CASE(mk(DIMS(1, 3, 1, 5, 1), I64(99, 2, -7, 9, 0), 4), "(3,5):(2,9)"),
        /* Negative and zero strides merge when they chain. */
        CASE(mk(DIMS(2, 3), I64(-3, -1), 4), "(6,):(-1,)"),
        CASE(mk(DIMS(4, 3), I64(0, 0), 1), "(12,):(0,)"),
        /* Nothing merges. */
        CASE(sliced(mk_c(DIMS(5, 3, 7), 1), s_from(1), S_REV), "(4,3,7):(21,-7,1)+35"),
        CASE(mk(DIMS(3, 2), I64(1, 3), 1), "(3,2):(1,3)"),
        CASE(mk_f(DIMS(2, 3), 1), "(2,3):(1,2)"),
        CASE(mk(DIMS(4, 3), I64(0, 1), 1), "(4,3):(0,1)"),
        /* One element is 0-d. */
        CASE(mk(DIMS(1, 1), I64(5, 7), 2), "():()"),
        CASE(mk_implicit(0, NULL, 2), "():()"),
        /* The slice offset stays. */
        CASE(sliced(c53, s_from(1)), "(12,):(1,)+3"),
        CASE(sliced(c53, S_AT(1), S_AT(2)), "():()+5"),
        /* Merging would need 2 * 2^62; coalesce cannot fail, so it keeps
         * both axes. */
        CASE(mk(DIMS(2, 2), I64(1, P62), 1), "(2,2):(1,4611686018427387904)"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const coalesce_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_coalesce(&c->in, &out), &out, STRIDED_OK, "coalesce",
                              c->want, c->in.itemsize, AT(c));
    }
}

static void test_coalesce_empty(void **state)
{
    strided_layout d = mk_c(DIMS(2, 0, 3), 1);
    strided_layout e = mk(DIMS(0, 3), I64(3, 1), 1);
    strided_layout a, b;

    (void)state;
    assert_ok(strided_layout_coalesce(&d, &a));
    assert_ok(strided_layout_coalesce(&e, &b));
    assert_true(strided_layout_is_contiguous_c(&a));
    assert_layout(a, "(0,):(0,)", 1);
    assert_int_equal(b.ndim, 1);
    assert_i64(b.shape[0], 0);
    assert_i64(b.strides[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_dense),
        cmocka_unit_test(test_to_dense_keeps_implicit_strides_when_a_no_op),
        cmocka_unit_test(test_to_dense_refusals),
        cmocka_unit_test(test_coalesce),
        cmocka_unit_test(test_coalesce_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
