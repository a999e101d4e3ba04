/*
 * Tests of strided_layout_reshape: which new shapes view a layout without a
 * copy and with what strides, and each refused shape with its message.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

#define INCOMPATIBLE "Layout strides are incompatible with the new shape"

static void test_reshape_docstring_examples(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 4), 1);
    strided_layout a, b, c, p = permuted(d, 2, 0, 1);
    strided_layout want = mk_c(DIMS(20, 3), 1);

    (void)state;
    assert_ok(strided_layout_reshape(&d, DIMS(20, 3), &a));
    assert_layout_eq(a, want);
    assert_ok(strided_layout_reshape(&d, DIMS(4, -1), &b));
    assert_layout(b, "(4,15):(15,1)", 1);
    assert_layout(p, "(4,5,3):(1,12,4)", 1);
    assert_ok(strided_layout_reshape(&p, DIMS(4, 15), &c));
    assert_layout(c, "(4,15):(1,4)", 1);
}

static void test_reshape_views(void **state)
{
    strided_layout c10 = mk_c(DIMS(10, 10, 10), 1);
    strided_layout rev01 = sliced(c10, S_REV, S_REV, S_ALL);
    strided_layout c232 = mk_c(DIMS(2, 3, 2), 4);
    strided_layout c12 = mk_c(DIMS(12, 11), 2), c765 = mk_c(DIMS(7, 6, 5), 4);
    strided_layout c0d = mk_implicit(0, NULL, 4), c1 = mk_c(DIMS(1), 4);
    strided_layout e303 = mk_c(DIMS(3, 0, 3), 4), e0 = mk_c(DIMS(0), 4);
    strided_layout c3 = mk_c(DIMS(3), 4), c34 = mk_c(DIMS(3, 4), 1);
    strided_layout foreign = permuted(mk_c(DIMS(1, 3, 4), 2), 1, 0, 2);
    strided_layout empty_row = sliced(c34, S_AT(1), S_(2, 2, 1));
    const shape_case cases[] = {
        /* A unit axis with a foreign stride does not block the reshape, as
         * in NumPy, which drops unit axes first; cuda.core raises here. */
        CASE(foreign, DIMS(12), STRIDED_OK, "(12,):(1,)"),
        CASE(mk_f(DIMS(5, 1, 7), 4), DIMS(5, 7), STRIDED_OK, "(5,7):(1,5)"),
        /* A -1 extent takes what the volume leaves. */
        CASE(c765, DIMS(70, -1), STRIDED_OK, "(70,3):(3,1)"),
        CASE(c765, DIMS(-1, 70), STRIDED_OK, "(3,70):(70,1)"),
        CASE(mk_c(DIMS(INT64_MAX), 1), DIMS(7, -1), STRIDED_OK,
             "(7,1317624576693539401):(1317624576693539401,1)"),
        /* Splits of C-dense rows, cuda.core's cases. */
        CASE(c12, DIMS(2, 3, 2, 11), STRIDED_OK, "(2,3,2,11):(66,22,11,1)"),
        CASE(c12, DIMS(2, 3, 11, 2), STRIDED_OK, "(2,3,11,2):(66,22,2,1)"),
        CASE(c12, DIMS(2, 11, 3, 2), STRIDED_OK, "(2,11,3,2):(66,6,2,1)"),
        CASE(c12, DIMS(11, 2, 3, 2), STRIDED_OK, "(11,2,3,2):(12,6,2,1)"),
        CASE(c12, DIMS(2, 3, 2, -1), STRIDED_OK, "(2,3,2,11):(66,22,11,1)"),
        CASE(c12, DIMS(2, -1, 3, 2), STRIDED_OK, "(2,11,3,2):(66,6,2,1)"),
        CASE(c12, DIMS(-1, 2, 3, 2), STRIDED_OK, "(11,2,3,2):(12,6,2,1)"),
        CASE(c12, DIMS(11, 2, -1, 2), STRIDED_OK, "(11,2,3,2):(12,6,2,1)"),
        /* Unit axes of the new shape take the running stride. */
        CASE(mk_c(DIMS(12), 2), DIMS(1, 12), STRIDED_OK, "(1,12):(12,1)"),
        CASE(mk_c(DIMS(12), 2), DIMS(12, 1), STRIDED_OK, "(12,1):(1,1)"),
        CASE(mk_c(DIMS(12), 2), DIMS(1, 12, 1), STRIDED_OK, "(1,12,1):(12,1,1)"),
        /* Implicit strides give explicit ones, even for the same shape. */
        CASE(mk_implicit(DIMS(2, 3), 4), DIMS(2, 3), STRIDED_OK, "(2,3):(3,1)"),
        CASE(mk_implicit(DIMS(2, 3), 4), DIMS(3, 2), STRIDED_OK, "(3,2):(2,1)"),
        /* Sliced, reversed and permuted inputs; the slice offset stays. */
        CASE(sliced(mk_c(DIMS(13, 3), 2), s_from(1), S_ALL), DIMS(6, 6), STRIDED_OK,
             "(6,6):(6,1)+3"),
        CASE(rev01, DIMS(100, 10), STRIDED_OK, "(100,10):(-10,1)+990"),
        CASE(rev01, DIMS(10, 10, 10), STRIDED_OK, "(10,10,10):(-100,-10,1)+990"),
        CASE(sliced(c10, S_REV, S_REV, S_REV), DIMS(1000), STRIDED_OK, "(1000,):(-1,)+999"),
        CASE(permuted(c232, 1, 2, 0), DIMS(6, 2), STRIDED_OK, "(6,2):(1,6)"),
        CASE(permuted(c232, 1, 0, 2), DIMS(3, 2, 2), STRIDED_OK, "(3,2,2):(2,6,1)"),
        CASE(sliced(mk_c(DIMS(12, 4), 1), S_ALL, s_to(-1)), DIMS(6, 2, 3), STRIDED_OK,
             "(6,2,3):(8,4,1)"),
        /* 0-d layouts have volume 1. */
        CASE(c0d, 0, NULL, STRIDED_OK, "():()"),
        CASE(c0d, DIMS(1), STRIDED_OK, "(1,):(1,)"),
        CASE(c0d, DIMS(-1), STRIDED_OK, "(1,):(1,)"),
        CASE(c0d, DIMS(1, -1, 1), STRIDED_OK, "(1,1,1):(1,1,1)"),
        CASE(c1, 0, NULL, STRIDED_OK, "():()"),
        CASE(c1, DIMS(-1), STRIDED_OK, "(1,):(1,)"),
        /* Empty layouts take zero strides, whatever their strides were. */
        CASE(e303, DIMS(2, 3, 4, 5, 6, 7, 0, 12), STRIDED_OK,
             "(2,3,4,5,6,7,0,12):(0,0,0,0,0,0,0,0)"),
        CASE(e303, DIMS(0), STRIDED_OK, "(0,):(0,)"),
        CASE(e0, DIMS(0), STRIDED_OK, "(0,):(0,)"),
        CASE(e0, DIMS(1, -1), STRIDED_OK, "(1,0):(0,0)"),
        CASE(sliced(c3, s_from(3)), DIMS(-1), STRIDED_OK, "(0,):(0,)"),
        CASE(sliced(c3, S_(2, -1, 1)), DIMS(0), STRIDED_OK, "(0,):(0,)"),
        CASE(mk(DIMS(0, 3), I64(3, 1), 4), DIMS(3, 0), STRIDED_OK, "(3,0):(0,0)"),
        CASE(empty_row, DIMS(0, 5), STRIDED_OK, "(0,5):(0,0)+4"),
    };

    (void)state;
    assert_layout(foreign, "(3,1,4):(4,12,1)", 2);
    assert_layout(rev01, "(10,10,10):(-100,-10,1)+990", 1);
    assert_layout(empty_row, "(0,):(0,)+4", 1);
    check_shape_cases(strided_layout_reshape, "reshape", cases, ARRAY_LEN(cases));
}

static void test_reshape_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d, flat, back, want, r;

    (void)state;
    SHAPE64(shape, 3, 2, 17, 3, 30, 4, 45, 5, 63, 6);
    d = mk_c(64, shape, 4);
    assert_ok(strided_layout_reshape(&d, DIMS(60, 12), &r));
    assert_layout(r, "(60,12):(12,1)", 4);
    flat = mk_c(DIMS(720), 4);
    assert_ok(strided_layout_reshape(&flat, 64, shape, &back));
    want = mk_c(64, shape, 4);
    assert_layout_eq(back, want);
}

static void test_reshape_refusals(void **state)
{
    strided_layout c765 = mk_c(DIMS(7, 6, 5), 4), f46 = mk_f(DIMS(4, 6), 4);
    strided_layout c10 = mk_c(DIMS(10, 10, 10), 1);
    strided_layout c232 = mk_c(DIMS(2, 3, 2), 4);
    strided_layout p120 = permuted(c232, 1, 2, 0);
    strided_layout c4 = mk_c(DIMS(4), 4), e0 = mk_c(DIMS(0), 4);
    int64_t ones[65];
    const shape_case cases[] = {
        /* Strides that no view of the new shape has. */
        CASE(permuted(mk_c(DIMS(5, 3, 4), 1), 2, 0, 1), DIMS(20, 3), STRIDED_ERR_INVALID_ARGUMENT,
             INCOMPATIBLE),
        CASE(f46, DIMS(3, 8), STRIDED_ERR_INVALID_ARGUMENT, INCOMPATIBLE),
        /* The message shows the layout and the shape (the example message
         * of strided/status.h). */
        CASE(f46, DIMS(3, 8), STRIDED_ERR_INVALID_ARGUMENT,
             INCOMPATIBLE ": cannot view (4,6):(1,4) as (3,8) without a copy"),
        CASE(sliced(c10, S_REV, S_REV, S_ALL), DIMS(10, 100), STRIDED_ERR_INVALID_ARGUMENT,
             INCOMPATIBLE),
        CASE(sliced(c10, S_ALL, S_ALL, S_REV), DIMS(10, 100), STRIDED_ERR_INVALID_ARGUMENT,
             INCOMPATIBLE),
        CASE(sliced(c10, S_REV, S_ALL, S_REV), DIMS(1000), STRIDED_ERR_INVALID_ARGUMENT,
             INCOMPATIBLE),
        CASE(p120, DIMS(2, 6), STRIDED_ERR_INVALID_ARGUMENT, INCOMPATIBLE),
        CASE(p120, DIMS(12), STRIDED_ERR_INVALID_ARGUMENT, INCOMPATIBLE),
        CASE(permuted(c232, 1, 0, 2), DIMS(3, 4), STRIDED_ERR_INVALID_ARGUMENT, INCOMPATIBLE),
        CASE(sliced(mk_c(DIMS(12, 4), 1), S_ALL, s_to(-1)), DIMS(6, 6),
             STRIDED_ERR_INVALID_ARGUMENT, INCOMPATIBLE),
        CASE(mk_c(DIMS(1), 4), 65, filled(ones, 65, 1), STRIDED_ERR_INVALID_ARGUMENT,
             "Unsupported number of dimensions: 65. Max supported ndim is 64"),
        /* One left-to-right pass: the first bad extent is reported, so
         * (-2,-1,-1) reports the negative extent, (-1,6,-1) the repeated -1
         * and (-1,-2) passes the -1, then meets -2. */
        CASE(c765, DIMS(71, -2), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(c765, DIMS(-2, 71), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(c765, DIMS(-2, -1, -1), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(c765, DIMS(-2, -1, -2), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(c765, DIMS(-7, 6, -5), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(c765, DIMS(-1, 6, -1), STRIDED_ERR_INVALID_ARGUMENT,
             "There can be at most one -1 extent in a shape"),
        CASE(c765, DIMS(-1, -2), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        /* The volumes differ. */
        CASE(mk_c(DIMS(2, 3), 4), 0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 6 and the new volume 1 must be equal."),
        CASE(mk_c(DIMS(12), 4), DIMS(11), STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 12 and the new volume 11 must be equal."),
        CASE(e0, DIMS(1, 3), STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 0 and the new volume 3 must be equal."),
        CASE(mk_c(DIMS(18), 4), DIMS(0), STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 18 and the new volume 0 must be equal."),
        CASE(sliced(mk_c(DIMS(3), 4), s_from(3)), DIMS(3), STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 0 and the new volume 3 must be equal."),
        /* A -1 beside a zero extent could stand for anything. */
        CASE(c765, DIMS(5, 0, -1), STRIDED_ERR_INVALID_ARGUMENT,
             "The -1 extent is ambiguous when the specified sub-volume is 0"),
        CASE(e0, DIMS(0, -1), STRIDED_ERR_INVALID_ARGUMENT,
             "The -1 extent is ambiguous when the specified sub-volume is 0"),
        CASE(mk_c(DIMS(7, 0, 5), 4), DIMS(5, 0, -1), STRIDED_ERR_INVALID_ARGUMENT,
             "The -1 extent is ambiguous when the specified sub-volume is 0"),
        CASE(c765, DIMS(71, -1), STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 210 must be divisible by the specified "
             "sub-volume 71."),
        CASE(c765, DIMS(-1, 71), STRIDED_ERR_INVALID_ARGUMENT,
             "The original volume 210 must be divisible by the specified "
             "sub-volume 71."),
        /* The new volume overflows int64, also beside a -1. */
        CASE(c4, DIMS(INT64_C(1) << 32, INT64_C(1) << 32), STRIDED_ERR_OVERFLOW, NULL),
        CASE(c4, DIMS(INT64_C(1) << 32, -1, INT64_C(1) << 32), STRIDED_ERR_OVERFLOW, NULL),
        /* A leading unit axis takes the stride of the group it joins times
         * that group's extent: 2 * 2^62 overflows. */
        CASE(mk(DIMS(2), I64(P62), 1), DIMS(1, 2), STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    check_shape_cases(strided_layout_reshape, "reshape", cases, ARRAY_LEN(cases));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape_docstring_examples),
        cmocka_unit_test(test_reshape_views),
        cmocka_unit_test(test_reshape_64_dims),
        cmocka_unit_test(test_reshape_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
