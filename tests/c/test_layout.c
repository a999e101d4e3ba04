/*
 * Tests of strided/layout.h, part 1: construction, queries and text.
 * The manipulations are in test_layout_ops.c, the int64 edges, aliasing and
 * untouched outputs in test_layout_edges.c, the brute-force oracle in
 * test_layout_random.c. Section numbers refer to spec/layout.md.
 */
#include "test_util.h"

#include <stdlib.h>

#define P62 (INT64_C(1) << 62)

/* ---- strided_layout_init (§3.1) ----------------------------------------- */

static void test_init_implicit_strides(void **state)
{
    strided_layout l = mk_implicit(DIMS(2, 3), 4);

    (void)state;
    assert_layout_implicit(l, "(2,3):(3,1)", 4);
    assert_int_equal(l.ndim, 2);
    assert_i64(l.slice_offset, 0);
}

static void test_init_implicit_strides_of_empty_layout_are_zero(void **state)
{
    strided_layout l = mk_implicit(DIMS(2, 0, 3), 8);

    (void)state;
    assert_layout_implicit(l, "(2,0,3):(0,0,0)", 8);
}

static void test_init_explicit_strides_are_kept(void **state)
{
    strided_layout l = mk(DIMS(2, 3, 4), I64(-1, 0, 7), 2);

    (void)state;
    assert_layout(l, "(2,3,4):(-1,0,7)", 2);
}

static void test_init_explicit_strides_of_empty_layout_are_kept(void **state)
{
    /* A CUDA-array-interface array (0,3) with strides (3,1) keeps them
     * (§3.1, test_utils). */
    strided_layout l = mk(DIMS(0, 3), I64(3, 1), 8);

    (void)state;
    assert_layout(l, "(0,3):(3,1)", 8);
}

static void test_init_0d_implicit(void **state)
{
    strided_layout l = mk(0, NULL, NULL, 4);

    (void)state;
    assert_layout_implicit(l, "():()", 4);
}

static void test_init_0d_explicit(void **state)
{
    strided_layout l = mk(0, NULL, I64(0), 4);

    (void)state;
    assert_layout(l, "():()", 4);
}

static void test_init_non_power_of_two_itemsize(void **state)
{
    strided_layout l = mk(DIMS(4), I64(1), 5);

    (void)state;
    assert_layout(l, "(4,):(1,)", 5);
}

static void test_init_64_dims(void **state)
{
    int64_t shape[64], strides[64];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 64; k++) {
        shape[k] = 1;
        strides[k] = 1;
    }
    shape[10] = 3;
    shape[63] = 2;
    assert_ok(strided_layout_init(&l, 64, shape, strides, 1));
    assert_int_equal(l.ndim, 64);
    assert_i64(l.shape[10], 3);
    assert_i64(l.shape[63], 2);
    assert_i64(strided_layout_volume(&l), 6);
    assert_ok(strided_layout_init(&l, 64, shape, NULL, 1));
    assert_i64(l.strides[63], 1);
    assert_i64(l.strides[62], 2);
    assert_i64(l.strides[0], 6);
}

static void test_init_65_dims_fails(void **state)
{
    int64_t shape[65];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        shape[k] = 1;
    assert_error(strided_layout_init(&l, 65, shape, NULL, 1),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "Unsupported number of dimensions: 65. Max supported ndim is "
                 "64");
}

static void test_init_negative_ndim_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, -1, I64(1), NULL, 1),
                 STRIDED_ERR_INVALID_ARGUMENT, "init", NULL);
}

static void test_init_negative_extent_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(2, -1, 3), NULL, 4),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "Extents must be non-negative");
}

static void test_init_zero_itemsize_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(2, 3), NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "itemsize must be positive");
}

static void test_init_negative_itemsize_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(2, 3), I64(3, 1), -4),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "itemsize must be positive");
}

static void test_init_checks_ndim_before_extents(void **state)
{
    int64_t shape[65];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        shape[k] = -1;
    assert_error(strided_layout_init(&l, 65, shape, NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "Unsupported number of dimensions: 65");
}

static void test_init_checks_extents_before_itemsize(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(-3), NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "Extents must be non-negative");
}

static void test_init_volume_overflow_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(INT64_C(1) << 32,
                                          INT64_C(1) << 32), NULL, 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_error(strided_layout_init(&l, DIMS(INT64_MAX, 2), NULL, 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
}

static void test_init_volume_overflow_beside_a_zero_extent_fails(void **state)
{
    /* layout.h invariant: "a product of its non-zero extents that fits in
     * int64" holds for every layout made through these functions. */
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(0, INT64_C(1) << 32,
                                          INT64_C(1) << 32), NULL, 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
}

static void test_init_largest_volume(void **state)
{
    strided_layout l = mk_implicit(DIMS(INT64_MAX), 1);

    (void)state;
    assert_i64(strided_layout_volume(&l), INT64_MAX);
    assert_layout_implicit(l, "(9223372036854775807,):(1,)", 1);
}

static void test_init_offset_overflow_positive_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(3), I64(INT64_MAX), 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
}

static void test_init_offset_overflow_negative_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(3), I64(INT64_MIN), 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
}

static void test_init_offset_overflow_of_a_sum_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init(&l, DIMS(2, 2), I64(INT64_MAX, 1), 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_error(strided_layout_init(&l, DIMS(2, 2), I64(INT64_MIN, -1), 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
}

static void test_init_offsets_at_the_int64_edges(void **state)
{
    strided_layout l;

    (void)state;
    l = mk(DIMS(2), I64(INT64_MAX), 1);
    assert_layout(l, "(2,):(9223372036854775807,)", 1);
    l = mk(DIMS(2), I64(-INT64_MAX), 1);
    assert_layout(l, "(2,):(-9223372036854775807,)", 1);
    l = mk(DIMS(2, 2), I64(-INT64_MAX, INT64_MAX), 1);
    assert_layout(l, "(2,2):(-9223372036854775807,9223372036854775807)", 1);
    l = mk(DIMS(2, 2), I64(INT64_MAX, -1), 1);
    assert_layout(l, "(2,2):(9223372036854775807,-1)", 1);
}

/* INT64_MIN cannot be negated, so no stride may be INT64_MIN: a copy that
 * flips a negative stride, or a consumer taking |stride|, would overflow. */
static void test_init_int64_min_stride_fails(void **state)
{
    strided_layout l;

    (void)state;
    fill_sentinel(&l, sizeof l);
    assert_error(strided_layout_init(&l, DIMS(2), I64(INT64_MIN), 1),
                 STRIDED_ERR_OVERFLOW, "init",
                 "stride -9223372036854775808 of axis 0 times itemsize 1 "
                 "overflows int64 in (2,):(-9223372036854775808,)");
    assert_untouched(&l, sizeof l);
    /* Also on an axis whose stride reaches no element. */
    assert_error(strided_layout_init(&l, DIMS(1, 3), I64(INT64_MIN, 1), 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_error(strided_layout_init(&l, DIMS(0, 3), I64(INT64_MIN, 1), 1),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_untouched(&l, sizeof l);
}

/* Element offsets that fit in int64 are not enough: their byte offsets
 * (times itemsize) and every byte stride must fit too. */
static void test_init_byte_offsets_must_fit(void **state)
{
    strided_layout l;

    (void)state;
    fill_sentinel(&l, sizeof l);
    assert_error(strided_layout_init(&l, DIMS(2, 3), I64(P62, 1), 4),
                 STRIDED_ERR_OVERFLOW, "init",
                 "stride 4611686018427387904 of axis 0 times itemsize 4 "
                 "overflows int64 in (2,3):(4611686018427387904,1)");
    assert_error(strided_layout_init(&l, DIMS(3), I64(P62 / 4), 4),
                 STRIDED_ERR_OVERFLOW, "init",
                 "the byte offsets of (3,):(1152921504606846976,) with "
                 "itemsize 4 overflow int64");
    assert_error(strided_layout_init(&l, DIMS(3, 2), I64(-(P62 / 4), -(P62 / 4)), 4),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_error(strided_layout_init(&l, DIMS(INT64_C(1) << 61), NULL, 8),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_error(strided_layout_init_dense(&l, DIMS(INT64_C(1) << 61), 8,
                                           STRIDED_ORDER_F, 0, NULL),
                 STRIDED_ERR_OVERFLOW, "dense", NULL);
    assert_error(strided_layout_init_byte_strides(&l, DIMS(2), I64(INT64_MIN), 8),
                 STRIDED_ERR_OVERFLOW, "init", NULL);
    assert_untouched(&l, sizeof l);
    /* The largest byte offsets that fit are fine. */
    l = mk(DIMS(2), I64(INT64_MAX / 4), 4);
    assert_layout(l, "(2,):(2305843009213693951,)", 4);
    l = mk(DIMS(2), I64(-(INT64_MAX / 4)), 4);
    assert_layout(l, "(2,):(-2305843009213693951,)", 4);
}

static void test_init_offsets_of_empty_layout_are_not_checked(void **state)
{
    strided_layout l = mk(DIMS(0, 3), I64(INT64_MAX, INT64_MAX), 1);

    (void)state;
    assert_layout(l, "(0,3):(9223372036854775807,9223372036854775807)", 1);
}

/* ---- strided_layout_init_byte_strides (§3.1 divide_strides) ------------- */

static void test_init_byte_strides_divisible(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(2, 3), I64(24, 8), 8));
    assert_layout(l, "(2,3):(3,1)", 8);
}

static void test_init_byte_strides_negative(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(2, 3), I64(-8, 4), 4));
    assert_layout(l, "(2,3):(-2,1)", 4);
}

static void test_init_byte_strides_zero(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(4, 3), I64(0, 2), 2));
    assert_layout(l, "(4,3):(0,1)", 2);
}

static void test_init_byte_strides_non_power_of_two_itemsize(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(2, 3), I64(9, 3), 3));
    assert_layout(l, "(2,3):(3,1)", 3);
}

static void test_init_byte_strides_not_divisible_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_byte_strides(&l, DIMS(2, 3), I64(24, 6), 8),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "strides must be divisible by itemsize");
}

static void test_init_byte_strides_negative_not_divisible_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_byte_strides(&l, DIMS(2, 3), I64(-6, 4), 4),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "strides must be divisible by itemsize");
}

static void test_init_byte_strides_null_is_implicit(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(2, 3), NULL, 8));
    assert_layout_implicit(l, "(2,3):(3,1)", 8);
}

static void test_init_byte_strides_of_empty_layout_are_kept(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(0, 3), I64(24, 8), 8));
    assert_layout(l, "(0,3):(3,1)", 8);
}

static void test_init_byte_strides_int64_min(void **state)
{
    strided_layout l;

    (void)state;
    assert_ok(strided_layout_init_byte_strides(&l, DIMS(2), I64(INT64_MIN + 8), 8));
    assert_layout(l, "(2,):(-1152921504606846975,)", 8);
}

static void test_init_byte_strides_zero_itemsize_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_byte_strides(&l, DIMS(2, 3), I64(24, 8), 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "itemsize must be positive");
}

static void test_init_byte_strides_checks_extents_first(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_byte_strides(&l, DIMS(-1, 3), I64(7, 1), 4),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "Extents must be non-negative");
}

static void test_init_byte_strides_65_dims_fails(void **state)
{
    int64_t shape[65], strides[65];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 65; k++) {
        shape[k] = 1;
        strides[k] = 4;
    }
    assert_error(strided_layout_init_byte_strides(&l, 65, shape, strides, 4),
                 STRIDED_ERR_INVALID_ARGUMENT, "init",
                 "Unsupported number of dimensions: 65. Max supported ndim is "
                 "64");
}

/* ---- strided_layout_init_dense (§3.2) ----------------------------------- */

static void test_init_dense_c(void **state)
{
    strided_layout l = mk_c(DIMS(5, 3, 7), 1);

    (void)state;
    assert_layout(l, "(5,3,7):(21,7,1)", 1);
}

static void test_init_dense_f(void **state)
{
    strided_layout l = mk_f(DIMS(5, 3, 7), 1);

    (void)state;
    assert_layout(l, "(5,3,7):(1,5,15)", 1);
}

static void test_init_dense_perm(void **state)
{
    strided_layout l = mk_perm(DIMS(5, 3, 7), 1, AXES(2, 0, 1));
    int order[3];

    (void)state;
    assert_layout(l, "(5,3,7):(3,1,15)", 1);
    strided_layout_stride_order(&l, order);
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 0);
    assert_int_equal(order[2], 1);
}

static void test_init_dense_perm_negative_axes(void **state)
{
    strided_layout l = mk_perm(DIMS(5, 3, 7), 1, AXES(-1, 0, -2));

    (void)state;
    assert_layout(l, "(5,3,7):(3,1,15)", 1);
}

static void test_init_dense_perm_identity_is_c(void **state)
{
    strided_layout a = mk_perm(DIMS(4, 5, 6), 2, AXES(0, 1, 2));
    strided_layout b = mk_c(DIMS(4, 5, 6), 2);

    (void)state;
    assert_layout_eq(a, b);
}

static void test_init_dense_perm_reversed_is_f(void **state)
{
    strided_layout a = mk_perm(DIMS(4, 5, 6), 2, AXES(2, 1, 0));
    strided_layout b = mk_f(DIMS(4, 5, 6), 2);

    (void)state;
    assert_layout_eq(a, b);
}

static void test_init_dense_empty_has_zero_strides(void **state)
{
    strided_layout c = mk_c(DIMS(5, 0, 3), 4);
    strided_layout f = mk_f(DIMS(5, 0, 3), 4);
    strided_layout p = mk_perm(DIMS(5, 0, 3), 4, AXES(1, 2, 0));

    (void)state;
    assert_layout(c, "(5,0,3):(0,0,0)", 4);
    assert_layout(f, "(5,0,3):(0,0,0)", 4);
    assert_layout(p, "(5,0,3):(0,0,0)", 4);
}

static void test_init_dense_0d(void **state)
{
    strided_layout c = mk_c(0, NULL, 8);
    strided_layout f = mk_f(0, NULL, 8);
    strided_layout p = mk_perm(0, NULL, 8, 0, NULL);

    (void)state;
    assert_layout(c, "():()", 8);
    assert_layout(f, "():()", 8);
    assert_layout(p, "():()", 8);
}

static void test_init_dense_largest_extent(void **state)
{
    strided_layout c = mk_c(DIMS(INT64_MAX, 1), 1);
    strided_layout f = mk_f(DIMS(1, INT64_MAX), 1);

    (void)state;
    assert_layout(c, "(9223372036854775807,1):(1,1)", 1);
    assert_layout(f, "(1,9223372036854775807):(1,1)", 1);
}

static void test_init_dense_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    shape[0] = 2;
    shape[20] = 3;
    shape[63] = 5;
    assert_ok(strided_layout_init_dense(&l, 64, shape, 4, STRIDED_ORDER_C, 0,
                                        NULL));
    assert_i64(l.strides[63], 1);
    assert_i64(l.strides[21], 5);
    assert_i64(l.strides[20], 5);
    assert_i64(l.strides[19], 15);
    assert_i64(l.strides[0], 15);
    assert_ok(strided_layout_init_dense(&l, 64, shape, 4, STRIDED_ORDER_F, 0,
                                        NULL));
    assert_i64(l.strides[0], 1);
    assert_i64(l.strides[20], 2);
    assert_i64(l.strides[63], 6);
}

static void test_init_dense_keep_order_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(2, 3), 4,
                                           STRIDED_ORDER_KEEP, 0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "The stride_order must be 'C', 'F', or a permutation tuple");
}

static void test_init_dense_unknown_order_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(2, 3), 4,
                                           (strided_order)9, 0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "The stride_order must be 'C', 'F', or a permutation tuple");
}

static void test_init_dense_checks_order_before_shape(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(-2, 3), 0,
                                           STRIDED_ORDER_KEEP, 0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "The stride_order must be 'C', 'F', or a permutation tuple");
}

static void test_init_dense_65_dims_fails(void **state)
{
    int64_t shape[65];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        shape[k] = 1;
    assert_error(strided_layout_init_dense(&l, 65, shape, 4, STRIDED_ORDER_C,
                                           0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "Unsupported number of dimensions: 65. Max supported ndim is "
                 "64");
}

static void test_init_dense_negative_extent_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(2, -3), 4, STRIDED_ORDER_F,
                                           0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "Extents must be non-negative");
}

static void test_init_dense_zero_itemsize_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(2, 3), 0, STRIDED_ORDER_C,
                                           0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "itemsize must be positive");
}

static void test_init_dense_checks_extents_before_itemsize(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(-2, 3), 0, STRIDED_ORDER_C,
                                           0, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "Extents must be non-negative");
}

static void test_init_dense_perm_length_mismatch_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(5, 3, 7), 4,
                                           STRIDED_ORDER_PERM, AXES(1, 0)),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "stride_order must have the same length as shape. Shape has 3 "
                 "dimensions, but stride_order has 2 elements.");
}

static void test_init_dense_checks_itemsize_before_perm(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(5, 3, 7), 0,
                                           STRIDED_ORDER_PERM, AXES(1, 0)),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "itemsize must be positive");
}

static void test_init_dense_perm_axis_out_of_range_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(5, 3, 7), 4,
                                           STRIDED_ORDER_PERM, AXES(0, 1, 3)),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "Invalid stride order: axis 3 out of range for 3D tensor");
}

static void test_init_dense_perm_negative_axis_out_of_range_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(5, 3, 7), 4,
                                           STRIDED_ORDER_PERM, AXES(-4, 0, 1)),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "Invalid stride order: axis -4 out of range for 3D tensor");
}

static void test_init_dense_perm_repeated_axis_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(5, 3, 7), 4,
                                           STRIDED_ORDER_PERM, AXES(1, 1, 0)),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "The stride order must be a permutation. Axis 1 appears "
                 "multiple times.");
}

static void test_init_dense_volume_overflow_fails(void **state)
{
    strided_layout l;

    (void)state;
    assert_error(strided_layout_init_dense(&l, DIMS(INT64_C(1) << 32,
                                                INT64_C(1) << 32), 1,
                                           STRIDED_ORDER_C, 0, NULL),
                 STRIDED_ERR_OVERFLOW, "dense", NULL);
    assert_error(strided_layout_init_dense(&l, DIMS(3, INT64_MAX / 2), 1,
                                           STRIDED_ORDER_F, 0, NULL),
                 STRIDED_ERR_OVERFLOW, "dense", NULL);
}

/* ---- volume, equal, hash (§2.5, §2.6, §4.1) ----------------------------- */

static void test_volume(void **state)
{
    strided_layout l;

    (void)state;
    l = mk_c(DIMS(5, 3, 7), 1);
    assert_i64(strided_layout_volume(&l), 105);
    l = mk_c(0, NULL, 1);
    assert_i64(strided_layout_volume(&l), 1);
    l = mk(DIMS(2, 0, 3), I64(5, 7, 1), 1);
    assert_i64(strided_layout_volume(&l), 0);
    l = mk(DIMS(4, 3), I64(0, 0), 1);
    assert_i64(strided_layout_volume(&l), 12);
}

static void test_equal_same_fields(void **state)
{
    strided_layout a = mk(DIMS(5, 3, 7), I64(21, 7, 1), 4);
    strided_layout b = mk_c(DIMS(5, 3, 7), 4);

    (void)state;
    assert_layout_eq(a, b);
    assert_layout_eq(a, a);
}

static void test_equal_implicit_never_equals_explicit(void **state)
{
    strided_layout a = mk_implicit(DIMS(2, 3), 4);
    strided_layout b = mk_c(DIMS(2, 3), 4);
    strided_layout c = mk_implicit(DIMS(2, 3), 4);
    strided_layout z0 = mk(0, NULL, NULL, 4), z1 = mk(0, NULL, I64(0), 4);

    (void)state;
    assert_layout_ne(a, b);
    assert_layout_ne(b, a);
    assert_layout_eq(a, c);
    assert_layout_ne(z0, z1);
}

static void test_equal_differs_by_each_field(void **state)
{
    strided_layout a = mk_c(DIMS(5, 3, 7), 4), b;

    (void)state;
    b = mk_c(DIMS(5, 3, 8), 4);
    assert_layout_ne(a, b);
    b = mk_c(DIMS(5, 3, 7), 2);
    assert_layout_ne(a, b);
    b = mk(DIMS(5, 3, 7), I64(21, 7, 2), 4);
    assert_layout_ne(a, b);
    b = mk_c(DIMS(5, 21), 4);
    assert_layout_ne(a, b);
    b = sliced(a, s_from(0));
    assert_layout_eq(a, b);
    b = mk(DIMS(4, 3, 7), I64(21, 7, 1), 4);
    a = sliced(a, s_from(1));
    assert_layout(a, "(4,3,7):(21,7,1)+21", 4);
    assert_layout_ne(a, b);
}

static void test_equal_compares_strides_of_unit_axes(void **state)
{
    strided_layout a = mk(DIMS(1, 3), I64(3, 1), 4);
    strided_layout b = mk(DIMS(1, 3), I64(99, 1), 4);

    (void)state;
    assert_layout_ne(a, b);
}

static void test_equal_ignores_entries_past_ndim(void **state)
{
    strided_layout a, b;

    (void)state;
    memset(&a, 0x11, sizeof a);
    memset(&b, 0x77, sizeof b);
    assert_ok(strided_layout_init(&a, DIMS(2, 3), I64(3, 1), 4));
    assert_ok(strided_layout_init(&b, DIMS(2, 3), I64(3, 1), 4));
    assert_layout_eq(a, b);
    assert_int_equal(strided_layout_hash(&a), strided_layout_hash(&b));
}

static void test_hash_equal_layouts_hash_equal(void **state)
{
    strided_layout a = mk(DIMS(5, 3, 7), I64(21, 7, 1), 4);
    strided_layout b = mk_c(DIMS(5, 3, 7), 4);
    strided_layout c = mk_implicit(DIMS(5, 3, 7), 4);
    strided_layout d = mk_implicit(DIMS(5, 3, 7), 4);
    strided_layout e = mk_c(DIMS(5, 3, 7), 4);
    strided_layout s1 = sliced(e, s_from(1), S_REV);
    strided_layout s2 = sliced(e, s_from(1), S_REV);

    (void)state;
    assert_int_equal(strided_layout_hash(&a), strided_layout_hash(&b));
    assert_int_equal(strided_layout_hash(&c), strided_layout_hash(&d));
    assert_int_equal(strided_layout_hash(&s1), strided_layout_hash(&s2));
}

static void test_hash_after_dropping_axes(void **state)
{
    /* A squeeze leaves stale entries past the new ndim; they must not reach
     * the hash. */
    strided_layout a = mk_c(DIMS(1, 5, 1), 4), s;
    strided_layout b = mk(DIMS(5), I64(1), 4);

    (void)state;
    assert_ok(strided_layout_squeeze(&a, &s));
    assert_layout_eq(s, b);
    assert_int_equal(strided_layout_hash(&s), strided_layout_hash(&b));
}

/* ---- strides_in_bytes, slice_offset_in_bytes (§4.3, §4.4) --------------- */

static void test_strides_in_bytes(void **state)
{
    strided_layout l = mk(DIMS(2, 3, 4), I64(-12, 0, 3), 4);
    int64_t out[3];

    (void)state;
    assert_ok(strided_layout_strides_in_bytes(&l, out));
    assert_i64(out[0], -48);
    assert_i64(out[1], 0);
    assert_i64(out[2], 12);
}

static void test_strides_in_bytes_of_implicit_strides(void **state)
{
    strided_layout l = mk_implicit(DIMS(2, 3), 8);
    int64_t out[2];

    (void)state;
    assert_ok(strided_layout_strides_in_bytes(&l, out));
    assert_i64(out[0], 24);
    assert_i64(out[1], 8);
}

static void test_strides_in_bytes_of_0d(void **state)
{
    strided_layout l = mk_c(0, NULL, 8);
    int64_t out[1] = {42};

    (void)state;
    assert_ok(strided_layout_strides_in_bytes(&l, out));
    assert_i64(out[0], 42);
}

/* Layouts breaking the invariant, filled in by hand: the query still
 * refuses rather than overflow. */
static void test_strides_in_bytes_overflow_fails(void **state)
{
    strided_layout l = raw(DIMS(2, 2), I64(1, P62), 2);
    int64_t out[2];

    (void)state;
    fill_sentinel(out, sizeof out);
    assert_error(strided_layout_strides_in_bytes(&l, out), STRIDED_ERR_OVERFLOW,
                 "strides_in_bytes", NULL);
    assert_untouched(out, sizeof out);
}

static void test_strides_in_bytes_negative_overflow_fails(void **state)
{
    strided_layout l = raw(DIMS(2), I64(INT64_MIN), 2);
    int64_t out[1];

    (void)state;
    fill_sentinel(out, sizeof out);
    assert_error(strided_layout_strides_in_bytes(&l, out), STRIDED_ERR_OVERFLOW,
                 "strides_in_bytes", NULL);
    assert_untouched(out, sizeof out);
}

static void test_strides_in_bytes_at_the_edge(void **state)
{
    strided_layout l = raw(DIMS(2), I64(INT64_MIN / 2), 2);
    int64_t out[1];

    (void)state;
    assert_ok(strided_layout_strides_in_bytes(&l, out));
    assert_i64(out[0], INT64_MIN);
}

static void test_slice_offset_in_bytes(void **state)
{
    strided_layout l = mk_c(DIMS(5, 3, 7), 4);
    strided_layout s = sliced(l, s_from(1), S_REV);
    int64_t out = 0;

    (void)state;
    assert_ok(strided_layout_slice_offset_in_bytes(&s, &out));
    assert_i64(out, 140);
    assert_ok(strided_layout_slice_offset_in_bytes(&l, &out));
    assert_i64(out, 0);
}

static void test_slice_offset_in_bytes_overflow_fails(void **state)
{
    /* Slicing can no longer make such a layout (its byte offset would not
     * fit), so it is filled in by hand. */
    strided_layout s = raw(DIMS(1), I64(1), 2);
    int64_t out;

    (void)state;
    s.slice_offset = P62;
    fill_sentinel(&out, sizeof out);
    assert_error(strided_layout_slice_offset_in_bytes(&s, &out),
                 STRIDED_ERR_OVERFLOW, "slice_offset_in_bytes", NULL);
    assert_untouched(&out, sizeof out);
}

/* ---- stride_order (§4.5) ----------------------------------------------- */

#define assert_order(l, ...)                                                   \
    do {                                                                       \
        const int want_[] = {__VA_ARGS__};                                     \
        int got_[STRIDED_MAX_NDIM];                                            \
        int n_ = (int)(sizeof want_ / sizeof want_[0]), k_;                    \
        assert_int_equal((l).ndim, n_);                                        \
        strided_layout_stride_order(&(l), got_);                               \
        for (k_ = 0; k_ < n_; k_++)                                            \
            if (got_[k_] != want_[k_])                                         \
                fail_at(__FILE__, __LINE__,                                    \
                        "stride_order[%d] = %d, expected %d\n", k_, got_[k_],  \
                        want_[k_]);                                            \
    } while (0)

static void test_stride_order_c_and_f(void **state)
{
    strided_layout c = mk_c(DIMS(5, 3, 7), 1);
    strided_layout f = mk_f(DIMS(5, 3, 7), 1);

    (void)state;
    assert_order(c, 0, 1, 2);
    assert_order(f, 2, 1, 0);
}

static void test_stride_order_of_perm_dense_is_the_perm(void **state)
{
    strided_layout a = mk_perm(DIMS(2, 3, 4, 5), 1, AXES(3, 0, 2, 1));
    strided_layout b = mk_perm(DIMS(2, 3, 4, 5), 1, AXES(1, 3, 0, 2));

    (void)state;
    assert_order(a, 3, 0, 2, 1);
    assert_order(b, 1, 3, 0, 2);
}

static void test_stride_order_implicit_is_identity(void **state)
{
    strided_layout l = mk_implicit(DIMS(1, 5, 1, 0), 1);

    (void)state;
    assert_order(l, 0, 1, 2, 3);
}

static void test_stride_order_uses_absolute_strides(void **state)
{
    strided_layout a = mk(DIMS(4, 3, 7), I64(21, -7, 1), 1);
    strided_layout b = mk(DIMS(3, 2), I64(-1, 3), 1);

    (void)state;
    assert_order(a, 0, 1, 2);
    assert_order(b, 1, 0);
}

static void test_stride_order_tie_larger_extent_first(void **state)
{
    strided_layout c = mk(DIMS(5, 1, 7), I64(7, 7, 1), 1);
    strided_layout f = mk(DIMS(5, 1, 7), I64(1, 5, 5), 1);
    strided_layout u = mk(DIMS(1, 4), I64(1, 1), 1);

    (void)state;
    assert_order(c, 0, 1, 2);
    assert_order(f, 2, 1, 0);
    assert_order(u, 1, 0);
}

static void test_stride_order_tie_smaller_axis_first(void **state)
{
    strided_layout l = mk(DIMS(3, 3, 2), I64(0, 0, 5), 1);

    (void)state;
    assert_order(l, 2, 0, 1);
}

static void test_stride_order_of_empty_is_by_extent(void **state)
{
    strided_layout l = mk_c(DIMS(2, 0, 3), 1);

    (void)state;
    assert_order(l, 2, 0, 1);
}

static void test_stride_order_int64_min_stride(void **state)
{
    strided_layout a = raw(DIMS(2, 2), I64(INT64_MIN, 1), 1);
    strided_layout b = raw(DIMS(2, 2), I64(1, INT64_MIN), 1);
    strided_layout c = raw(DIMS(2, 2), I64(INT64_MAX, INT64_MIN), 1);

    (void)state;
    assert_order(a, 0, 1);
    assert_order(b, 1, 0);
    assert_order(c, 1, 0);
}

/* ---- offset_bounds, required_size_in_bytes (§4.11-§4.13) ---------------- */

#define assert_bounds(l, lo, hi)                                               \
    do {                                                                       \
        int64_t lo_ = 12345, hi_ = 12345;                                      \
        strided_layout_offset_bounds(&(l), &lo_, &hi_);                        \
        assert_i64(lo_, (lo));                                                 \
        assert_i64(hi_, (hi));                                                 \
    } while (0)

static void test_offset_bounds_dense(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 4);

    (void)state;
    assert_bounds(l, 0, 19);
}

static void test_offset_bounds_worked_example(void **state)
{
    strided_layout l = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(l, s_from(1), S_REV);

    (void)state;
    assert_layout(s, "(4,3,7):(21,-7,1)+35", 1);
    assert_bounds(s, 21, 104);
}

static void test_offset_bounds_implicit(void **state)
{
    strided_layout l = mk_implicit(DIMS(2, 3), 4);

    (void)state;
    assert_bounds(l, 0, 5);
}

static void test_offset_bounds_negative_and_zero_strides(void **state)
{
    strided_layout n = mk(DIMS(5, 4), I64(-4, 1), 1);
    strided_layout z = mk(DIMS(4, 3), I64(0, 1), 1);

    (void)state;
    assert_bounds(n, -16, 3);
    assert_bounds(z, 0, 2);
}

static void test_offset_bounds_0d(void **state)
{
    strided_layout l = mk_c(0, NULL, 4);

    (void)state;
    assert_bounds(l, 0, 0);
}

static void test_offset_bounds_empty(void **state)
{
    strided_layout a = mk(DIMS(3, 0), I64(-5, 7), 1);
    strided_layout b = mk_implicit(DIMS(0, 4), 1);
    strided_layout c = mk_c(DIMS(3, 4), 1);
    strided_layout e = sliced(c, S_AT(1), S_(2, 2, 1));

    (void)state;
    assert_bounds(a, 0, -1);
    assert_bounds(b, 0, -1);
    assert_layout(e, "(0,):(0,)+4", 1);
    assert_bounds(e, 0, -1);
}

static void test_offset_bounds_null_outputs(void **state)
{
    strided_layout l = mk(DIMS(5, 4), I64(-4, 1), 1);
    int64_t lo = 0, hi = 0;

    (void)state;
    strided_layout_offset_bounds(&l, &lo, NULL);
    assert_i64(lo, -16);
    strided_layout_offset_bounds(&l, NULL, &hi);
    assert_i64(hi, 3);
    strided_layout_offset_bounds(&l, NULL, NULL);
}

static void test_offset_bounds_int64_edges(void **state)
{
    strided_layout l = raw(DIMS(2, 2), I64(INT64_MIN, INT64_MAX), 1);

    (void)state;
    assert_bounds(l, INT64_MIN, INT64_MAX);
}

static void test_required_size_dense(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 4);
    int64_t n = 0;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&l, &n));
    assert_i64(n, 80);
}

static void test_required_size_worked_example(void **state)
{
    strided_layout l = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(l, s_from(1), S_REV);
    int64_t n = 0;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&s, &n));
    assert_i64(n, 105);
}

static void test_required_size_includes_slice_offset(void **state)
{
    strided_layout l = mk_c(DIMS(5, 6), 4);
    strided_layout s = sliced(l, S_ALL, S_(1, 5, 1));
    int64_t n = 0;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&s, &n));
    assert_i64(n, 116);
}

static void test_required_size_broadcast(void **state)
{
    strided_layout l = mk(DIMS(4, 3), I64(0, 1), 2);
    int64_t n = 0;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&l, &n));
    assert_i64(n, 6);
}

static void test_required_size_0d(void **state)
{
    strided_layout l = mk_implicit(0, NULL, 8);
    int64_t n = 0;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&l, &n));
    assert_i64(n, 8);
}

static void test_required_size_empty_is_zero(void **state)
{
    strided_layout a = mk(DIMS(3, 0), I64(-5, -1), 4);
    strided_layout b = mk_c(DIMS(0), 4);
    int64_t n = 7;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&a, &n));
    assert_i64(n, 0);
    n = 7;
    assert_ok(strided_layout_required_size_in_bytes(&b, &n));
    assert_i64(n, 0);
}

static void test_required_size_negative_min_offset_fails(void **state)
{
    strided_layout l = mk(DIMS(5, 4), I64(-4, 1), 1);
    int64_t n;

    (void)state;
    fill_sentinel(&n, sizeof n);
    assert_error(strided_layout_required_size_in_bytes(&l, &n),
                 STRIDED_ERR_INVALID_ARGUMENT, "required_size",
                 "Allocation size for a layout that maps elements to negative "
                 "memory offsets is ambiguous. The layout's min_offset is -16.");
    assert_untouched(&n, sizeof n);
}

static void test_required_size_overflow_fails(void **state)
{
    strided_layout a = mk(DIMS(2), I64(INT64_MAX), 1);
    strided_layout b = raw(DIMS(2), I64(P62), 2);
    int64_t n;

    (void)state;
    fill_sentinel(&n, sizeof n);
    assert_error(strided_layout_required_size_in_bytes(&a, &n),
                 STRIDED_ERR_OVERFLOW, "required_size", NULL);
    assert_untouched(&n, sizeof n);
    assert_error(strided_layout_required_size_in_bytes(&b, &n),
                 STRIDED_ERR_OVERFLOW, "required_size", NULL);
    assert_untouched(&n, sizeof n);
}

static void test_required_size_at_the_edge(void **state)
{
    strided_layout l = mk(DIMS(2), I64(INT64_MAX - 1), 1);
    int64_t n = 0;

    (void)state;
    assert_ok(strided_layout_required_size_in_bytes(&l, &n));
    assert_i64(n, INT64_MAX);
}

/* ---- contiguity, density, uniqueness (§4.6-§4.10) ----------------------- */

static void test_is_contiguous_c(void **state)
{
    strided_layout c = mk_c(DIMS(5, 3, 7), 4);
    strided_layout f = mk_f(DIMS(5, 3, 7), 4);
    strided_layout unit = mk(DIMS(5, 1, 7), I64(7, 99, 1), 4);
    strided_layout rows = sliced(c, s_from(1));
    strided_layout gap = sliced(c, S_ALL, S_ALL, s_to(-1));

    (void)state;
    assert_true(strided_layout_is_contiguous_c(&c));
    assert_false(strided_layout_is_contiguous_c(&f));
    assert_true(strided_layout_is_contiguous_c(&unit));
    assert_true(strided_layout_is_contiguous_c(&rows));
    assert_false(strided_layout_is_contiguous_c(&gap));
}

static void test_is_contiguous_c_special_cases(void **state)
{
    strided_layout imp = mk_implicit(DIMS(2, 3), 4);
    strided_layout empty = mk(DIMS(0, 3), I64(5, 7), 4);
    strided_layout zero_d = mk(0, NULL, I64(0), 4);
    strided_layout neg = mk(DIMS(3), I64(-1), 4);
    strided_layout bcast = mk(DIMS(4, 3), I64(0, 1), 4);

    (void)state;
    assert_true(strided_layout_is_contiguous_c(&imp));
    assert_true(strided_layout_is_contiguous_c(&empty));
    assert_true(strided_layout_is_contiguous_c(&zero_d));
    assert_false(strided_layout_is_contiguous_c(&neg));
    assert_false(strided_layout_is_contiguous_c(&bcast));
}

static void test_is_contiguous_f(void **state)
{
    strided_layout c = mk_c(DIMS(5, 3, 7), 4);
    strided_layout f = mk_f(DIMS(5, 3, 7), 4);
    strided_layout unit = mk(DIMS(1, 5), I64(5, 1), 4);
    strided_layout empty = mk(DIMS(0, 3), I64(5, 7), 4);
    strided_layout zero_d = mk(0, NULL, I64(0), 4);

    (void)state;
    assert_false(strided_layout_is_contiguous_f(&c));
    assert_true(strided_layout_is_contiguous_f(&f));
    assert_true(strided_layout_is_contiguous_f(&unit));
    assert_true(strided_layout_is_contiguous_f(&empty));
    assert_true(strided_layout_is_contiguous_f(&zero_d));
}

static void test_is_contiguous_f_of_implicit_strides(void **state)
{
    strided_layout a = mk_implicit(DIMS(2, 3), 4);
    strided_layout b = mk_implicit(DIMS(1, 5, 1), 4);
    strided_layout c = mk_implicit(DIMS(2, 0), 4);
    strided_layout d = mk_implicit(0, NULL, 4);

    (void)state;
    assert_false(strided_layout_is_contiguous_f(&a));
    assert_true(strided_layout_is_contiguous_f(&b));
    assert_true(strided_layout_is_contiguous_f(&c));
    assert_true(strided_layout_is_contiguous_f(&d));
}

static void test_is_contiguous_any(void **state)
{
    strided_layout c = mk_c(DIMS(5, 3, 7), 4);
    strided_layout p = mk_perm(DIMS(5, 3, 7), 4, AXES(1, 2, 0));
    strided_layout f = mk_f(DIMS(5, 3, 7), 4);
    strided_layout unit = mk(DIMS(3, 1, 4), I64(4, 12, 1), 4);
    strided_layout gap = sliced(c, S_ALL, S_ALL, s_to(-1));
    strided_layout neg = sliced(c, S_ALL, S_REV);
    strided_layout bcast = mk(DIMS(4, 3), I64(0, 1), 4);
    strided_layout imp = mk_implicit(DIMS(4, 3), 4);
    strided_layout empty = mk(DIMS(0, 3), I64(5, 7), 4);

    (void)state;
    assert_true(strided_layout_is_contiguous_any(&c));
    assert_true(strided_layout_is_contiguous_any(&p));
    assert_true(strided_layout_is_contiguous_any(&f));
    assert_true(strided_layout_is_contiguous_any(&unit));
    assert_false(strided_layout_is_contiguous_any(&gap));
    assert_false(strided_layout_is_contiguous_any(&neg));
    assert_false(strided_layout_is_contiguous_any(&bcast));
    assert_true(strided_layout_is_contiguous_any(&imp));
    assert_true(strided_layout_is_contiguous_any(&empty));
}

static void test_is_dense(void **state)
{
    strided_layout c = mk_c(DIMS(5, 3, 7), 4);
    strided_layout p = mk_perm(DIMS(5, 3, 7), 4, AXES(2, 0, 1));
    strided_layout rows = sliced(c, s_from(1));
    strided_layout gap = sliced(c, S_ALL, S_ALL, s_to(-1));
    strided_layout imp = mk_implicit(DIMS(4, 3), 4);
    strided_layout empty = mk(DIMS(0, 3), I64(5, 7), 4);

    (void)state;
    assert_true(strided_layout_is_dense(&c));
    assert_true(strided_layout_is_dense(&p));
    assert_true(strided_layout_is_contiguous_any(&rows));
    assert_false(strided_layout_is_dense(&rows));
    assert_false(strided_layout_is_dense(&gap));
    assert_true(strided_layout_is_dense(&imp));
    assert_true(strided_layout_is_dense(&empty));
}

static void test_is_dense_false_for_empty_with_slice_offset(void **state)
{
    strided_layout c = mk_c(DIMS(3, 4), 1);
    strided_layout e = sliced(c, S_AT(1), S_(2, 2, 1));

    (void)state;
    assert_i64(e.slice_offset, 4);
    assert_true(strided_layout_is_contiguous_any(&e));
    assert_false(strided_layout_is_dense(&e));
}

static void test_is_unique(void **state)
{
    strided_layout c = mk_c(DIMS(5, 3, 7), 4);
    strided_layout p = permuted(c, 2, 0, 1);
    strided_layout s = sliced(p, S_REV, S_(1, 5, 2), s_any(false, 0, false, 0, -3));
    strided_layout imp = mk_implicit(DIMS(4, 3), 4);
    strided_layout unit0 = mk(DIMS(1, 3), I64(0, 1), 4);

    (void)state;
    assert_true(strided_layout_is_unique(&c));
    assert_true(strided_layout_is_unique(&p));
    assert_true(strided_layout_is_unique(&s));
    assert_true(strided_layout_is_unique(&imp));
    assert_true(strided_layout_is_unique(&unit0));
}

static void test_is_unique_false_negative_interleaved(void **state)
{
    /* Offsets {0,3,2,5,4,7} are distinct, but the cheap test cannot tell
     * (§4.10). */
    strided_layout l = mk(DIMS(3, 2), I64(2, 3), 1);

    (void)state;
    assert_false(strided_layout_is_unique(&l));
}

static void test_is_unique_false_for_broadcast(void **state)
{
    strided_layout a = mk(DIMS(4, 3), I64(0, 1), 4);
    strided_layout b = mk(DIMS(3, 1), I64(0, 5), 4);

    (void)state;
    assert_false(strided_layout_is_unique(&a));
    assert_false(strided_layout_is_unique(&b));
}

static void test_is_unique_false_for_overlap(void **state)
{
    strided_layout l = mk(DIMS(3, 3), I64(1, 1), 4);

    (void)state;
    assert_false(strided_layout_is_unique(&l));
}

static void test_is_unique_true_for_empty(void **state)
{
    strided_layout a = mk(DIMS(0, 3), I64(0, 0), 4);
    strided_layout b = mk(DIMS(3, 0), I64(0, 0), 4);

    (void)state;
    assert_true(strided_layout_is_unique(&a));
    assert_true(strided_layout_is_unique(&b));
}

static void test_is_unique_int64_min_stride(void **state)
{
    strided_layout l = raw(DIMS(2, 2), I64(INT64_MIN, 1), 1);
    strided_layout m = raw(DIMS(2, 2), I64(INT64_MIN, INT64_MAX), 1);

    (void)state;
    assert_true(strided_layout_is_unique(&l));
    assert_true(strided_layout_is_unique(&m));
}

/* ---- flattened_axis_mask (§5.3, §7.8) ----------------------------------- */

#define assert_mask(l, want)                                                   \
    do {                                                                       \
        uint64_t m_ = 0xDEAD;                                                  \
        assert_ok(strided_layout_flattened_axis_mask(&(l), &m_));              \
        if (m_ != (uint64_t)(want))                                            \
            fail_at(__FILE__, __LINE__, "mask 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", \
                    m_, (uint64_t)(want));                                     \
    } while (0)

static void test_flattened_axis_mask_dense(void **state)
{
    strided_layout a = mk_c(DIMS(4, 5, 3), 4);
    strided_layout b = mk(DIMS(4, 5, 3), I64(1, 12, 4), 4);

    (void)state;
    assert_mask(a, 0x6);
    assert_mask(b, 0x4);
}

static void test_flattened_axis_mask_implicit(void **state)
{
    strided_layout z = mk_implicit(0, NULL, 1);
    strided_layout one = mk_implicit(DIMS(5), 1);
    strided_layout three = mk_implicit(DIMS(2, 0, 3), 1);
    int64_t shape[64];
    strided_layout big;
    int k;

    (void)state;
    assert_mask(z, 0);
    assert_mask(one, 0);
    assert_mask(three, 0x6);
    for (k = 0; k < 64; k++)
        shape[k] = k % 7 == 0 ? 2 : 1;
    big = mk_implicit(64, shape, 1);
    assert_mask(big, STRIDED_AXES_MASK_ALL);
}

static void test_flattened_axis_mask_unit_axis_rule(void **state)
{
    strided_layout d = mk_c(DIMS(1, 3, 4), 4);
    strided_layout p = permuted(d, 1, 0, 2);
    strided_layout f = mk_f(DIMS(5, 1, 7), 4);

    (void)state;
    assert_layout(p, "(3,1,4):(4,12,1)", 4);
    assert_mask(p, 0x6);
    assert_layout(f, "(5,1,7):(1,5,5)", 4);
    assert_mask(f, 0x2);
}

static void test_flattened_axis_mask_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout l;

    (void)state;
    SHAPE64(shape, 5, 2, 17, 3, 40, 4, 63, 5);
    l = mk_c(64, shape, 2);
    assert_mask(l, STRIDED_AXES_MASK_ALL);
}

static void test_flattened_axis_mask_overflow_fails(void **state)
{
    /* Merging axis 1 needs strides[1] * shape[1] = 2^63 (§7.8). */
    strided_layout l = mk(DIMS(2, 2), I64(1, P62), 1);
    uint64_t m;

    (void)state;
    fill_sentinel(&m, sizeof m);
    assert_error(strided_layout_flattened_axis_mask(&l, &m),
                 STRIDED_ERR_OVERFLOW, "flatten", NULL);
    assert_untouched(&m, sizeof m);
}

/* ---- max_compatible_itemsize (§5.8, §7.2 item 10, §7.3) ----------------- */

static int max_itemsize_of(const strided_layout *l, int max_itemsize,
                           intptr_t data_ptr, int axis)
{
    int out = -1;
    assert_ok(strided_layout_max_compatible_itemsize(l, max_itemsize, data_ptr,
                                                     axis, &out));
    return out;
}

static void test_max_compatible_itemsize_upstream_rows(void **state)
{
    strided_layout l;

    (void)state;
    l = mk_c(DIMS(12), 1);
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 4);
    l = mk_implicit(DIMS(12), 1);
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 4);
    l = mk_f(DIMS(12), 1);
    assert_int_equal(max_itemsize_of(&l, 16, 0, 0), 4);
    l = mk_c(DIMS(12), 4);
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 16);
    l = mk_c(DIMS(16, 5, 4, 6), 2);
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 4);
    l = mk_f(DIMS(16, 5, 4, 6), 2);
    assert_int_equal(max_itemsize_of(&l, 16, 0, 0), 16);
    l = mk_c(DIMS(11, 5, 9), 2);
    l = sliced(l, S_ALL, S_ALL, s_from(-1));
    assert_int_equal(max_itemsize_of(&l, 16, 0, 2), 2);
    l = mk_c(DIMS(12, 3, 24), 2);
    l = permuted(l, 1, 2, 0);
    l = sliced(l, S_REV, s_from(20), s_from(1));
    assert_layout(l, "(3,4,11):(-24,1,72)+140", 2);
    assert_int_equal(max_itemsize_of(&l, 16, 0, 1), 8);
    l = mk(DIMS(4, 5), I64(5, 1), 8);
    assert_int_equal(max_itemsize_of(&l, 16, 0, 0), 8);
}

static void test_max_compatible_itemsize_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout c, imp;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    shape[1] = 3;
    shape[63] = 4;
    c = mk_c(64, shape, 2);
    imp = mk_implicit(64, shape, 2);
    assert_int_equal(max_itemsize_of(&c, 16, 0, -1), 8);
    assert_int_equal(max_itemsize_of(&imp, 16, 0, -1), 8);
}

static void test_max_compatible_itemsize_non_power_of_two(void **state)
{
    strided_layout l = mk_c(DIMS(4), 3);

    (void)state;
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 3);
    assert_int_equal(max_itemsize_of(&l, 12, 0, -1), 12);
    assert_int_equal(max_itemsize_of(&l, 12, 6, -1), 6);
    assert_int_equal(max_itemsize_of(&l, 12, 4, -1), 3);
}

static void test_max_compatible_itemsize_bound_not_a_multiple(void **state)
{
    /* 16 is not a multiple of 3, so no larger multiple of 3 divides it
     * (§5.8 step 3), although 15 would fit under the bound. */
    strided_layout l = mk_c(DIMS(5), 3);

    (void)state;
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 3);
    assert_int_equal(max_itemsize_of(&l, 15, 0, -1), 15);
    assert_int_equal(max_itemsize_of(&l, 30, 20, -1), 3);
}

static void test_max_compatible_itemsize_data_ptr(void **state)
{
    strided_layout l = mk_c(DIMS(12), 1);

    (void)state;
    assert_int_equal(max_itemsize_of(&l, 16, 2, -1), 2);
    assert_int_equal(max_itemsize_of(&l, 16, 4096, -1), 4);
    assert_int_equal(max_itemsize_of(&l, 16, -8, -1), 4);
    assert_int_equal(max_itemsize_of(&l, 16, 3, -1), 1);
    assert_int_equal(max_itemsize_of(&l, 16, INTPTR_MIN, -1), 4);
}

static void test_max_compatible_itemsize_stride_not_one(void **state)
{
    strided_layout l = mk(DIMS(4, 6), I64(12, 2), 4);
    strided_layout e = mk(DIMS(4, 0), I64(1, 1), 4);

    (void)state;
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 4);
    assert_int_equal(max_itemsize_of(&e, 16, 0, -1), 4);
}

static void test_max_compatible_itemsize_int64_min_stride(void **state)
{
    strided_layout l = raw(DIMS(2, 4), I64(INT64_MIN, 1), 1);

    (void)state;
    assert_int_equal(max_itemsize_of(&l, 16, 0, -1), 4);
}

static void test_max_compatible_itemsize_zero_max_fails(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 4);
    int out = -7;

    (void)state;
    assert_error(strided_layout_max_compatible_itemsize(&l, 0, 0, -1, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "max_itemsize must be greater than zero, got 0.");
    assert_int_equal(out, -7);
}

static void test_max_compatible_itemsize_negative_max_fails(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 4);
    int out = -7;

    (void)state;
    assert_error(strided_layout_max_compatible_itemsize(&l, -16, 0, -1, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "max_itemsize must be greater than zero, got -16.");
    assert_int_equal(out, -7);
}

static void test_max_compatible_itemsize_axis_out_of_range_fails(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 4);
    int out = -7;

    (void)state;
    assert_error(strided_layout_max_compatible_itemsize(&l, 16, 0, 9, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "Invalid axis: 9 out of range for 2D tensor");
    assert_int_equal(out, -7);
}

static void test_max_compatible_itemsize_0d_fails(void **state)
{
    strided_layout l = mk_c(0, NULL, 4);
    int out = -7;

    (void)state;
    assert_error(strided_layout_max_compatible_itemsize(&l, 16, 0, -1, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "Invalid axis: -1 out of range for 0D tensor");
    assert_int_equal(out, -7);
}

static void test_max_compatible_itemsize_max_below_itemsize_fails(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 8);
    int out = -7;

    (void)state;
    assert_error(strided_layout_max_compatible_itemsize(&l, 4, 0, -1, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "max_itemsize (4) cannot be less than itemsize (8).");
    assert_int_equal(out, -7);
}

static void test_max_compatible_itemsize_check_order(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 8);
    int out = -7;

    (void)state;
    assert_error(strided_layout_max_compatible_itemsize(&l, 0, 0, 9, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "max_itemsize must be greater than zero");
    assert_error(strided_layout_max_compatible_itemsize(&l, 4, 0, 9, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize",
                 "Invalid axis: 9 out of range for 2D tensor");
    assert_int_equal(out, -7);
}

/* ---- format (layout.h Text) --------------------------------------------- */

static void assert_format(const strided_layout *l, const char *want)
{
    char buf[512];
    size_t n = strided_layout_format(l, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_format_2d(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);

    (void)state;
    assert_format(&l, "(4,6):(6,1)");
}

static void test_format_1d(void **state)
{
    strided_layout l = mk_c(DIMS(5), 4);

    (void)state;
    assert_format(&l, "(5,):(1,)");
}

static void test_format_0d(void **state)
{
    strided_layout a = mk_c(0, NULL, 4);
    strided_layout b = mk_implicit(0, NULL, 4);

    (void)state;
    assert_format(&a, "():()");
    assert_format(&b, "():()");
}

static void test_format_implicit_strides(void **state)
{
    strided_layout l = mk_implicit(DIMS(2, 3), 4);

    (void)state;
    assert_format(&l, "(2,3):(3,1)");
}

static void test_format_slice_offset(void **state)
{
    strided_layout l = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(l, s_from(1), S_REV);

    (void)state;
    assert_format(&s, "(4,3,7):(21,-7,1)+35");
}

static void test_format_int64_edges(void **state)
{
    strided_layout l = raw(DIMS(2, 2), I64(INT64_MIN, INT64_MAX), 1);

    (void)state;
    assert_format(&l, "(2,2):(-9223372036854775808,9223372036854775807)");
}

static void test_format_returns_length_when_truncated(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char buf[16];

    (void)state;
    fill_sentinel(buf, sizeof buf);
    assert_int_equal(strided_layout_format(&l, buf, 5), 11);
    assert_string_equal(buf, "(4,6");
    assert_untouched(buf + 5, sizeof buf - 5);
}

static void test_format_size_one_writes_only_nul(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char buf[4];

    (void)state;
    fill_sentinel(buf, sizeof buf);
    assert_int_equal(strided_layout_format(&l, buf, 1), 11);
    assert_int_equal(buf[0], '\0');
    assert_untouched(buf + 1, sizeof buf - 1);
}

static void test_format_size_zero_with_null_buffer(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);

    (void)state;
    assert_int_equal(strided_layout_format(&l, NULL, 0), 11);
}

static void test_format_exact_fit(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char buf[12];

    (void)state;
    assert_int_equal(strided_layout_format(&l, buf, sizeof buf), 11);
    assert_string_equal(buf, "(4,6):(6,1)");
    assert_int_equal(strided_layout_format(&l, buf, 11), 11);
    assert_string_equal(buf, "(4,6):(6,1");
}

static void test_format_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout l;
    char buf[1024];
    size_t n, need;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    l = mk_c(64, shape, 1);
    /* "(" + 64 "1" joined by "," + "):(" + the same + ")" */
    need = 1 + 127 + 3 + 127 + 1;
    n = strided_layout_format(&l, buf, sizeof buf);
    assert_int_equal(n, need);
    assert_int_equal(strlen(buf), need);
}

/* ---- format_grid -------------------------------------------------------- */

/* Parse the cells of a grid: every line with at least two '|' is a row, its
 * cells the integers between consecutive '|'. Returns the row count, or -1
 * when a cell is not one integer. */
static int grid_rows(const char *text, int64_t cells[][16], int *ncells,
                     int max_rows)
{
    int rows = 0;
    const char *line = text;

    while (*line != '\0') {
        const char *end = strchr(line, '\n');
        const char *p, *bar;
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        int n = 0;

        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        bar = strchr(buf, '|');
        if (bar != NULL && strchr(bar + 1, '|') != NULL) {
            if (rows >= max_rows)
                return -1;
            p = bar + 1;
            while ((bar = strchr(p, '|')) != NULL) {
                char *stop;
                long long v = strtoll(p, &stop, 10);
                if (stop == p || stop > bar)
                    return -1;
                while (*stop == ' ')
                    stop++;
                if (stop != bar)
                    return -1;
                if (n < 16)
                    cells[rows][n] = v;
                n++;
                p = bar + 1;
            }
            ncells[rows++] = n;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return rows;
}

/* Format the grid of l into buf (checking *out_length against the text),
 * check its first line is strided_layout_format's text, and check its cells
 * against want (rows x cols, row-major). */
static void check_grid(const strided_layout *l, int rows, int cols,
                       const int64_t *want)
{
    char buf[8192], head[512];
    int64_t cells[16][16];
    int ncells[16], got_rows, r, c;
    size_t len = 0;

    assert_ok(strided_layout_format_grid(l, buf, sizeof buf, &len));
    assert_int_equal(len, strlen(buf));
    strided_layout_format(l, head, sizeof head);
    if (strncmp(buf, head, strlen(head)) != 0 || buf[strlen(head)] != '\n')
        fail_msg("grid does not start with the line \"%s\":\n%s", head, buf);
    got_rows = grid_rows(buf, cells, ncells, 16);
    if (got_rows != rows)
        fail_msg("grid has %d rows, expected %d:\n%s", got_rows, rows, buf);
    for (r = 0; r < rows; r++) {
        if (ncells[r] != cols)
            fail_msg("grid row %d has %d cells, expected %d:\n%s", r,
                     ncells[r], cols, buf);
        for (c = 0; c < cols; c++)
            if (cells[r][c] != want[r * cols + c])
                fail_msg("grid cell (%d,%d) is %lld, expected %lld:\n%s", r, c,
                         (long long)cells[r][c], (long long)want[r * cols + c],
                         buf);
    }
}

static void test_format_grid_2d(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    int64_t want[24];
    int k;

    (void)state;
    for (k = 0; k < 24; k++)
        want[k] = k;
    check_grid(&l, 4, 6, want);
}

static void test_format_grid_2d_column_major(void **state)
{
    strided_layout l = mk_f(DIMS(3, 4), 4);
    const int64_t want[] = {0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11};

    (void)state;
    check_grid(&l, 3, 4, want);
}

static void test_format_grid_negative_and_zero_strides(void **state)
{
    strided_layout l = mk(DIMS(2, 3), I64(0, -2), 4);
    const int64_t want[] = {0, -2, -4, 0, -2, -4};

    (void)state;
    check_grid(&l, 2, 3, want);
}

static void test_format_grid_includes_slice_offset(void **state)
{
    /* layout.h: the element offset of index i includes slice_offset. */
    strided_layout c = mk_c(DIMS(3, 4), 4);
    strided_layout s = sliced(c, s_from(1), S_REV);
    const int64_t want[] = {7, 6, 5, 4, 11, 10, 9, 8};

    (void)state;
    assert_layout(s, "(2,4):(4,-1)+7", 4);
    check_grid(&s, 2, 4, want);
}

static void test_format_grid_1d(void **state)
{
    strided_layout l = mk(DIMS(5), I64(2), 4);
    const int64_t want[] = {0, 2, 4, 6, 8};

    (void)state;
    check_grid(&l, 1, 5, want);
}

static void test_format_grid_0d(void **state)
{
    strided_layout l = mk_c(0, NULL, 4);
    const int64_t want[] = {0};

    (void)state;
    check_grid(&l, 1, 1, want);
}

static void test_format_grid_3d_fails(void **state)
{
    strided_layout l = mk_c(DIMS(2, 3, 4), 4);
    char buf[256];
    size_t len;

    (void)state;
    fill_sentinel(buf, sizeof buf);
    fill_sentinel(&len, sizeof len);
    assert_error(strided_layout_format_grid(&l, buf, sizeof buf, &len),
                 STRIDED_ERR_INVALID_ARGUMENT, "format_grid", NULL);
    assert_untouched(buf, sizeof buf);
    assert_untouched(&len, sizeof len);
}

static void test_format_grid_too_many_cells_fails(void **state)
{
    /* One more row than the limit allows; (2^40, 1) would otherwise take
     * minutes just to measure. */
    strided_layout big = mk_c(DIMS(STRIDED_GRID_MAX_CELLS + 1, 1), 4);
    strided_layout huge = mk_c(DIMS(INT64_C(1) << 40), 1);
    strided_layout at_limit = mk_c(DIMS(1023, 1023), 1);
    size_t len;

    (void)state;
    assert_error(strided_layout_format_grid(&big, NULL, 0, &len),
                 STRIDED_ERR_INVALID_ARGUMENT, "format_grid", "too large to draw");
    assert_error(strided_layout_format_grid(&huge, NULL, 0, &len),
                 STRIDED_ERR_INVALID_ARGUMENT, "format_grid", "too large to draw");
    assert_ok(strided_layout_format_grid(&at_limit, NULL, 0, &len));
    assert_true(len > (size_t)STRIDED_GRID_MAX_CELLS);
}

/* An empty layout has no cells but still draws a line per row and a
 * header per column: the bound counts those, so (2^40, 0) is refused at
 * once instead of looping 2^40 times, and (10^7, 0) instead of writing
 * 200 MB. */
static void test_format_grid_empty_but_huge_fails(void **state)
{
    const int64_t shapes[][2] = {{INT64_C(1) << 40, 0}, {10000000, 0}, {0, INT64_C(1) << 40},
                                 {STRIDED_GRID_MAX_CELLS, 0}, {INT64_MAX, 0}};
    size_t len;
    char buf[64];

    (void)state;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        strided_layout l = mk_c(2, shapes[i], 4);
        fill_sentinel(buf, sizeof buf);
        fill_sentinel(&len, sizeof len);
        assert_error(strided_layout_format_grid(&l, buf, sizeof buf, &len),
                     STRIDED_ERR_INVALID_ARGUMENT, "format_grid", "too large to draw");
        assert_untouched(buf, sizeof buf);
        assert_untouched(&len, sizeof len);
    }
    strided_layout one_d = mk_c(DIMS(INT64_C(1) << 40), 4);
    strided_layout sliced_empty = sliced(one_d, S_(5, 5, 1));
    assert_ok(strided_layout_format_grid(&sliced_empty, NULL, 0, &len));
    /* A small empty grid is drawn: its rows, no cells. */
    strided_layout small = mk_c(DIMS(3, 0), 4);
    char text[256];
    assert_ok(strided_layout_format_grid(&small, text, sizeof text, &len));
    assert_int_equal(len, strlen(text));
    assert_non_null(strstr(text, "\n0 |"));
    assert_non_null(strstr(text, "\n2 |"));
    assert_null(strstr(text, "\n3 |"));
}

static void test_format_negative_slice_offset(void **state)
{
    strided_layout l = mk_c(DIMS(4), 1);
    const strided_index rev[] = {strided_index_all(-1)};
    char buf[64];

    (void)state;
    assert_ok(strided_layout_slice(&l, 1, rev, &l));
    l.slice_offset = -3;
    strided_layout_format(&l, buf, sizeof buf);
    assert_string_equal(buf, "(4,):(-1,)-3");
}

static void test_format_grid_truncates_like_snprintf(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char full[8192], part[32];
    size_t n_full = 0, n_part = 0;

    (void)state;
    assert_ok(strided_layout_format_grid(&l, full, sizeof full, &n_full));
    assert_true(n_full > sizeof part);
    fill_sentinel(part, sizeof part);
    assert_ok(strided_layout_format_grid(&l, part, 20, &n_part));
    assert_int_equal(n_part, n_full);
    assert_int_equal(strlen(part), 19);
    assert_memory_equal(part, full, 19);
    assert_untouched(part + 20, sizeof part - 20);
}

static void test_format_grid_size_zero_with_null_buffer(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4);
    char full[8192];
    size_t n_full = 0, n = 0;

    (void)state;
    assert_ok(strided_layout_format_grid(&l, full, sizeof full, &n_full));
    assert_ok(strided_layout_format_grid(&l, NULL, 0, &n));
    assert_int_equal(n, n_full);
    assert_int_equal(n, strlen(full));
}

static void test_format_grid_null_length(void **state)
{
    strided_layout l = mk_c(DIMS(2, 2), 4);
    char buf[1024];

    (void)state;
    assert_ok(strided_layout_format_grid(&l, buf, sizeof buf, NULL));
    assert_true(strncmp(buf, "(2,2):(2,1)\n", 12) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_implicit_strides),
        cmocka_unit_test(test_init_implicit_strides_of_empty_layout_are_zero),
        cmocka_unit_test(test_init_explicit_strides_are_kept),
        cmocka_unit_test(test_init_explicit_strides_of_empty_layout_are_kept),
        cmocka_unit_test(test_init_0d_implicit),
        cmocka_unit_test(test_init_0d_explicit),
        cmocka_unit_test(test_init_non_power_of_two_itemsize),
        cmocka_unit_test(test_init_64_dims),
        cmocka_unit_test(test_init_65_dims_fails),
        cmocka_unit_test(test_init_negative_ndim_fails),
        cmocka_unit_test(test_init_negative_extent_fails),
        cmocka_unit_test(test_init_zero_itemsize_fails),
        cmocka_unit_test(test_init_negative_itemsize_fails),
        cmocka_unit_test(test_init_checks_ndim_before_extents),
        cmocka_unit_test(test_init_checks_extents_before_itemsize),
        cmocka_unit_test(test_init_volume_overflow_fails),
        cmocka_unit_test(test_init_volume_overflow_beside_a_zero_extent_fails),
        cmocka_unit_test(test_init_largest_volume),
        cmocka_unit_test(test_init_offset_overflow_positive_fails),
        cmocka_unit_test(test_init_offset_overflow_negative_fails),
        cmocka_unit_test(test_init_offset_overflow_of_a_sum_fails),
        cmocka_unit_test(test_init_offsets_at_the_int64_edges),
        cmocka_unit_test(test_init_int64_min_stride_fails),
        cmocka_unit_test(test_init_byte_offsets_must_fit),
        cmocka_unit_test(test_init_offsets_of_empty_layout_are_not_checked),
        cmocka_unit_test(test_init_byte_strides_divisible),
        cmocka_unit_test(test_init_byte_strides_negative),
        cmocka_unit_test(test_init_byte_strides_zero),
        cmocka_unit_test(test_init_byte_strides_non_power_of_two_itemsize),
        cmocka_unit_test(test_init_byte_strides_not_divisible_fails),
        cmocka_unit_test(test_init_byte_strides_negative_not_divisible_fails),
        cmocka_unit_test(test_init_byte_strides_null_is_implicit),
        cmocka_unit_test(test_init_byte_strides_of_empty_layout_are_kept),
        cmocka_unit_test(test_init_byte_strides_int64_min),
        cmocka_unit_test(test_init_byte_strides_zero_itemsize_fails),
        cmocka_unit_test(test_init_byte_strides_checks_extents_first),
        cmocka_unit_test(test_init_byte_strides_65_dims_fails),
        cmocka_unit_test(test_init_dense_c),
        cmocka_unit_test(test_init_dense_f),
        cmocka_unit_test(test_init_dense_perm),
        cmocka_unit_test(test_init_dense_perm_negative_axes),
        cmocka_unit_test(test_init_dense_perm_identity_is_c),
        cmocka_unit_test(test_init_dense_perm_reversed_is_f),
        cmocka_unit_test(test_init_dense_empty_has_zero_strides),
        cmocka_unit_test(test_init_dense_0d),
        cmocka_unit_test(test_init_dense_largest_extent),
        cmocka_unit_test(test_init_dense_64_dims),
        cmocka_unit_test(test_init_dense_keep_order_fails),
        cmocka_unit_test(test_init_dense_unknown_order_fails),
        cmocka_unit_test(test_init_dense_checks_order_before_shape),
        cmocka_unit_test(test_init_dense_65_dims_fails),
        cmocka_unit_test(test_init_dense_negative_extent_fails),
        cmocka_unit_test(test_init_dense_zero_itemsize_fails),
        cmocka_unit_test(test_init_dense_checks_extents_before_itemsize),
        cmocka_unit_test(test_init_dense_perm_length_mismatch_fails),
        cmocka_unit_test(test_init_dense_checks_itemsize_before_perm),
        cmocka_unit_test(test_init_dense_perm_axis_out_of_range_fails),
        cmocka_unit_test(test_init_dense_perm_negative_axis_out_of_range_fails),
        cmocka_unit_test(test_init_dense_perm_repeated_axis_fails),
        cmocka_unit_test(test_init_dense_volume_overflow_fails),
        cmocka_unit_test(test_volume),
        cmocka_unit_test(test_equal_same_fields),
        cmocka_unit_test(test_equal_implicit_never_equals_explicit),
        cmocka_unit_test(test_equal_differs_by_each_field),
        cmocka_unit_test(test_equal_compares_strides_of_unit_axes),
        cmocka_unit_test(test_equal_ignores_entries_past_ndim),
        cmocka_unit_test(test_hash_equal_layouts_hash_equal),
        cmocka_unit_test(test_hash_after_dropping_axes),
        cmocka_unit_test(test_strides_in_bytes),
        cmocka_unit_test(test_strides_in_bytes_of_implicit_strides),
        cmocka_unit_test(test_strides_in_bytes_of_0d),
        cmocka_unit_test(test_strides_in_bytes_overflow_fails),
        cmocka_unit_test(test_strides_in_bytes_negative_overflow_fails),
        cmocka_unit_test(test_strides_in_bytes_at_the_edge),
        cmocka_unit_test(test_slice_offset_in_bytes),
        cmocka_unit_test(test_slice_offset_in_bytes_overflow_fails),
        cmocka_unit_test(test_stride_order_c_and_f),
        cmocka_unit_test(test_stride_order_of_perm_dense_is_the_perm),
        cmocka_unit_test(test_stride_order_implicit_is_identity),
        cmocka_unit_test(test_stride_order_uses_absolute_strides),
        cmocka_unit_test(test_stride_order_tie_larger_extent_first),
        cmocka_unit_test(test_stride_order_tie_smaller_axis_first),
        cmocka_unit_test(test_stride_order_of_empty_is_by_extent),
        cmocka_unit_test(test_stride_order_int64_min_stride),
        cmocka_unit_test(test_offset_bounds_dense),
        cmocka_unit_test(test_offset_bounds_worked_example),
        cmocka_unit_test(test_offset_bounds_implicit),
        cmocka_unit_test(test_offset_bounds_negative_and_zero_strides),
        cmocka_unit_test(test_offset_bounds_0d),
        cmocka_unit_test(test_offset_bounds_empty),
        cmocka_unit_test(test_offset_bounds_null_outputs),
        cmocka_unit_test(test_offset_bounds_int64_edges),
        cmocka_unit_test(test_required_size_dense),
        cmocka_unit_test(test_required_size_worked_example),
        cmocka_unit_test(test_required_size_includes_slice_offset),
        cmocka_unit_test(test_required_size_broadcast),
        cmocka_unit_test(test_required_size_0d),
        cmocka_unit_test(test_required_size_empty_is_zero),
        cmocka_unit_test(test_required_size_negative_min_offset_fails),
        cmocka_unit_test(test_required_size_overflow_fails),
        cmocka_unit_test(test_required_size_at_the_edge),
        cmocka_unit_test(test_is_contiguous_c),
        cmocka_unit_test(test_is_contiguous_c_special_cases),
        cmocka_unit_test(test_is_contiguous_f),
        cmocka_unit_test(test_is_contiguous_f_of_implicit_strides),
        cmocka_unit_test(test_is_contiguous_any),
        cmocka_unit_test(test_is_dense),
        cmocka_unit_test(test_is_dense_false_for_empty_with_slice_offset),
        cmocka_unit_test(test_is_unique),
        cmocka_unit_test(test_is_unique_false_negative_interleaved),
        cmocka_unit_test(test_is_unique_false_for_broadcast),
        cmocka_unit_test(test_is_unique_false_for_overlap),
        cmocka_unit_test(test_is_unique_true_for_empty),
        cmocka_unit_test(test_is_unique_int64_min_stride),
        cmocka_unit_test(test_flattened_axis_mask_dense),
        cmocka_unit_test(test_flattened_axis_mask_implicit),
        cmocka_unit_test(test_flattened_axis_mask_unit_axis_rule),
        cmocka_unit_test(test_flattened_axis_mask_64_dims),
        cmocka_unit_test(test_flattened_axis_mask_overflow_fails),
        cmocka_unit_test(test_max_compatible_itemsize_upstream_rows),
        cmocka_unit_test(test_max_compatible_itemsize_64_dims),
        cmocka_unit_test(test_max_compatible_itemsize_non_power_of_two),
        cmocka_unit_test(test_max_compatible_itemsize_bound_not_a_multiple),
        cmocka_unit_test(test_max_compatible_itemsize_data_ptr),
        cmocka_unit_test(test_max_compatible_itemsize_stride_not_one),
        cmocka_unit_test(test_max_compatible_itemsize_int64_min_stride),
        cmocka_unit_test(test_max_compatible_itemsize_zero_max_fails),
        cmocka_unit_test(test_max_compatible_itemsize_negative_max_fails),
        cmocka_unit_test(test_max_compatible_itemsize_axis_out_of_range_fails),
        cmocka_unit_test(test_max_compatible_itemsize_0d_fails),
        cmocka_unit_test(test_max_compatible_itemsize_max_below_itemsize_fails),
        cmocka_unit_test(test_max_compatible_itemsize_check_order),
        cmocka_unit_test(test_format_2d),
        cmocka_unit_test(test_format_1d),
        cmocka_unit_test(test_format_0d),
        cmocka_unit_test(test_format_implicit_strides),
        cmocka_unit_test(test_format_slice_offset),
        cmocka_unit_test(test_format_int64_edges),
        cmocka_unit_test(test_format_returns_length_when_truncated),
        cmocka_unit_test(test_format_size_one_writes_only_nul),
        cmocka_unit_test(test_format_size_zero_with_null_buffer),
        cmocka_unit_test(test_format_exact_fit),
        cmocka_unit_test(test_format_64_dims),
        cmocka_unit_test(test_format_grid_2d),
        cmocka_unit_test(test_format_grid_2d_column_major),
        cmocka_unit_test(test_format_grid_negative_and_zero_strides),
        cmocka_unit_test(test_format_grid_includes_slice_offset),
        cmocka_unit_test(test_format_grid_1d),
        cmocka_unit_test(test_format_grid_0d),
        cmocka_unit_test(test_format_grid_3d_fails),
        cmocka_unit_test(test_format_grid_too_many_cells_fails),
        cmocka_unit_test(test_format_grid_empty_but_huge_fails),
        cmocka_unit_test(test_format_negative_slice_offset),
        cmocka_unit_test(test_format_grid_truncates_like_snprintf),
        cmocka_unit_test(test_format_grid_size_zero_with_null_buffer),
        cmocka_unit_test(test_format_grid_null_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
