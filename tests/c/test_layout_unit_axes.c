/*
 * Tests of the manipulations of unit (extent 1) axes:
 * strided_layout_squeeze removes them, strided_layout_unsqueeze inserts
 * them, and strided_layout_broadcast stretches them (and adds leading axes)
 * with stride 0.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

/* A squeeze and the layout it gives, as text (with the input's itemsize and
 * explicit strides). */
typedef struct squeeze_case {
    int line;
    strided_layout in;
    const char *want;
} squeeze_case;

#define TOO_MANY_DIMS "Unsupported number of dimensions: 65. Max supported ndim is 64"

/* A C-dense layout of ndim axes (itemsize 4): axis `at` of the given extent,
 * every other axis of extent 1. */
static strided_layout unit_axes(int ndim, int at, int64_t extent)
{
    int64_t shape[STRIDED_MAX_NDIM];

    filled(shape, ndim, 1)[at] = extent;
    return mk_c(ndim, shape, 4);
}

static void test_squeeze(void **state)
{
    const squeeze_case cases[] = {
        CASE(mk_c(DIMS(1, 5, 4, 3), 4), "(5,4,3):(12,3,1)"),
        CASE(sliced(mk_c(DIMS(1, 5, 1, 4, 3), 4), S_ALL, s_from(-1), S_ALL), "(4,3):(3,1)+48"),
        /* Nothing left: 0-d, with explicit strides. */
        CASE(mk_implicit(0, NULL, 4), "():()"),
        CASE(mk_c(DIMS(1, 1, 1), 4), "():()"),
        /* An empty layout becomes (0,):(0,), keeping its slice offset. */
        CASE(mk(DIMS(2, 0, 1), I64(3, 5, 7), 4), "(0,):(0,)"),
        CASE(sliced(mk_c(DIMS(3, 4), 1), S_AT(1), S_(2, 2, 1)), "(0,):(0,)+4"),
        CASE(mk_implicit(DIMS(2, 3), 4), "(2,3):(3,1)"),
        CASE(unit_axes(64, 40, 2), "(2,):(1,)"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const squeeze_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_squeeze(&c->in, &out), &out, STRIDED_OK, "squeeze",
                              c->want, c->in.itemsize, AT(c));
    }
}

static void test_unsqueeze(void **state)
{
    strided_layout c34 = mk_c(DIMS(3, 4), 4), f34 = mk_f(DIMS(3, 4), 4);
    strided_layout c0d = mk_implicit(0, NULL, 4);
    const axes_case cases[] = {
        /* cuda.core's documented examples. */
        CASE(c34, AXES(1), STRIDED_OK, "(3,1,4):(4,4,1)"),
        CASE(c34, AXES(-1), STRIDED_OK, "(3,4,1):(4,1,1)"),
        CASE(c34, AXES(0, 3), STRIDED_OK, "(1,3,4,1):(12,4,1,1)"),
        /* Axes in any order. */
        CASE(c34, AXES(3, 0), STRIDED_OK, "(1,3,4,1):(12,4,1,1)"),
        CASE(c34, AXES(-1, -4), STRIDED_OK, "(1,3,4,1):(12,4,1,1)"),
        /* A trailing new axis takes the last stride, a leading one the
         * extent times the stride of the axis after it. */
        CASE(f34, AXES(2), STRIDED_OK, "(3,4,1):(1,3,3)"),
        CASE(f34, AXES(2, 3), STRIDED_OK, "(3,4,1,1):(1,3,3,3)"),
        CASE(f34, AXES(0, 3), STRIDED_OK, "(1,3,4,1):(3,1,3,3)"),
        CASE(c0d, AXES(0), STRIDED_OK, "(1,):(1,)"),
        CASE(c0d, AXES(0, 1), STRIDED_OK, "(1,1):(1,1)"),
        CASE(c0d, AXES(-1), STRIDED_OK, "(1,):(1,)"),
        CASE(mk_implicit(DIMS(2, 3), 4), AXES(2), STRIDED_OK, "(2,3,1):(3,1,1)"),
        CASE(mk_c(DIMS(2, 3), 4), 0, NULL, STRIDED_OK, "(2,3):(3,1)"),
        CASE(sliced(mk_c(DIMS(5, 3, 7), 1), s_from(1), S_REV), AXES(1), STRIDED_OK,
             "(4,1,3,7):(21,-21,-7,1)+35"),
    };

    (void)state;
    check_axes_cases(strided_layout_unsqueeze, "unsqueeze", cases, ARRAY_LEN(cases));
}

static void test_unsqueeze_no_axes_keeps_implicit_strides(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4), a;

    (void)state;
    assert_ok(strided_layout_unsqueeze(&i, 0, NULL, &a));
    assert_layout_implicit(a, "(2,3):(3,1)", 4);
    assert_layout_eq(a, i);
}

static void test_unsqueeze_to_64_dims(void **state)
{
    strided_layout d = unit_axes(63, 0, 3), u;

    (void)state;
    assert_ok(strided_layout_unsqueeze(&d, AXES(63), &u));
    assert_int_equal(u.ndim, 64);
    assert_i64(u.shape[63], 1);
    assert_i64(u.strides[63], 1);
}

static void test_unsqueeze_refusals(void **state)
{
    strided_layout c34 = mk_c(DIMS(3, 4), 4);
    const axes_case cases[] = {
        CASE(c34, AXES(9), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: 9 out of range for 3D tensor"),
        CASE(c34, AXES(-4), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: -4 out of range for 3D tensor"),
        /* Repeated after negative axes count from the end. */
        CASE(c34, AXES(0, 0), STRIDED_ERR_INVALID_ARGUMENT, "Axis 0 appears multiple times."),
        CASE(c34, AXES(1, -3), STRIDED_ERR_INVALID_ARGUMENT, "Axis 1 appears multiple times."),
        CASE(unit_axes(64, 0, 1), AXES(0), STRIDED_ERR_INVALID_ARGUMENT, TOO_MANY_DIMS),
        /* The number of dimensions is checked before the axes. */
        CASE(unit_axes(63, 0, 1), AXES(99, 99), STRIDED_ERR_INVALID_ARGUMENT,
             "Unsupported number of dimensions: 65"),
        /* The new axis before axis 0 needs stride 3 * (2^62 - 1). */
        CASE(mk(DIMS(3), I64(P62 - 1), 1), AXES(0), STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    check_axes_cases(strided_layout_unsqueeze, "unsqueeze", cases, ARRAY_LEN(cases));
}

static void test_broadcast(void **state)
{
    strided_layout c0d = mk_c(0, NULL, 4), c1 = mk_c(DIMS(1), 4);
    strided_layout c7 = mk_c(DIMS(7), 4);
    strided_layout inner = sliced(mk_c(DIMS(5, 11), 4), S_(1, -1, 1), S_REV);
    const shape_case cases[] = {
        CASE(c0d, 0, NULL, STRIDED_OK, "():()"),
        CASE(c0d, DIMS(1), STRIDED_OK, "(1,):(0,)"),
        CASE(c0d, DIMS(17, 1, 5), STRIDED_OK, "(17,1,5):(0,0,0)"),
        /* A unit axis takes any extent, 0 too, with stride 0. */
        CASE(c1, DIMS(5), STRIDED_OK, "(5,):(0,)"),
        CASE(c1, DIMS(3, 5, 2), STRIDED_OK, "(3,5,2):(0,0,0)"),
        CASE(mk_c(DIMS(1, 3), 4), DIMS(0, 3), STRIDED_OK, "(0,3):(0,1)"),
        /* New leading axes take stride 0; the slice offset stays. */
        CASE(c7, DIMS(7), STRIDED_OK, "(7,):(1,)"),
        CASE(c7, DIMS(2, 7), STRIDED_OK, "(2,7):(0,1)"),
        CASE(inner, DIMS(3, 11), STRIDED_OK, "(3,11):(11,-1)+21"),
        CASE(inner, DIMS(7, 3, 11), STRIDED_OK, "(7,3,11):(0,11,-1)+21"),
        CASE(mk_implicit(DIMS(2, 3), 4), DIMS(2, 3), STRIDED_OK, "(2,3):(3,1)"),
    };

    (void)state;
    check_shape_cases(strided_layout_broadcast, "broadcast", cases, ARRAY_LEN(cases));
}

/* A broadcast is unique when it adds only unit axes, or has no elements. */
static void test_broadcast_uniqueness(void **state)
{
    strided_layout s = mk_c(DIMS(7), 4), u = mk_c(DIMS(1, 3), 4);
    strided_layout c = sliced(mk_c(DIMS(5, 11), 4), S_REV, S_(3, 4, 1));
    strided_layout a, b, e, z;

    (void)state;
    assert_ok(strided_layout_broadcast(&s, DIMS(1, 1, 7), &a));
    assert_true(strided_layout_is_unique(&a));
    assert_ok(strided_layout_broadcast(&s, DIMS(2, 7), &b));
    assert_false(strided_layout_is_unique(&b));
    assert_ok(strided_layout_broadcast(&c, DIMS(5, 7), &e));
    assert_false(strided_layout_is_unique(&e));
    assert_ok(strided_layout_broadcast(&u, DIMS(0, 3), &z));
    assert_true(strided_layout_is_unique(&z));
}

static void test_broadcast_to_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d = mk_c(DIMS(2, 3, 3), 4);
    strided_layout s = sliced(d, S_ALL, S_(1, 2, 1)), b;
    int k;

    (void)state;
    SHAPE64(shape, 0, 401, 1, 3, 61, 2, 62, 4, 63, 3);
    assert_ok(strided_layout_broadcast(&s, 64, shape, &b));
    assert_int_equal(b.ndim, 64);
    for (k = 0; k < 61; k++)
        assert_i64(b.strides[k], 0);
    assert_i64(b.strides[61], 9);
    assert_i64(b.strides[62], 0);
    assert_i64(b.strides[63], 1);
    assert_i64(b.slice_offset, 3);
}

static void test_broadcast_refusals(void **state)
{
    strided_layout c23 = mk_c(DIMS(2, 3), 4);
    int64_t ones[65];
    const shape_case cases[] = {
        CASE(c23, DIMS(3), STRIDED_ERR_INVALID_ARGUMENT,
             "The broadcast shape ndim (1) must be greater than or equal to "
             "the input shape ndim (2)."),
        CASE(c23, DIMS(2, 5), STRIDED_ERR_INVALID_ARGUMENT,
             "Shapes cannot be broadcast together: the original extent must "
             "be 1 or be equal to broadcast extent, got 3 and 5 for axis 1."),
        CASE(c23, DIMS(2, -3), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        /* The extents are checked before the number of dimensions. */
        CASE(c23, DIMS(-1), STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(mk_c(DIMS(1), 4), 65, filled(ones, 65, 1), STRIDED_ERR_INVALID_ARGUMENT,
             TOO_MANY_DIMS),
        CASE(mk_c(DIMS(1, 1), 4), DIMS(INT64_C(1) << 32, INT64_C(1) << 32), STRIDED_ERR_OVERFLOW,
             NULL),
    };

    (void)state;
    check_shape_cases(strided_layout_broadcast, "broadcast", cases, ARRAY_LEN(cases));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_squeeze),
        cmocka_unit_test(test_unsqueeze),
        cmocka_unit_test(test_unsqueeze_no_axes_keeps_implicit_strides),
        cmocka_unit_test(test_unsqueeze_to_64_dims),
        cmocka_unit_test(test_unsqueeze_refusals),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_broadcast_uniqueness),
        cmocka_unit_test(test_broadcast_to_64_dims),
        cmocka_unit_test(test_broadcast_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
