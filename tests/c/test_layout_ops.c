/*
 * Tests of strided/layout.h, part 2: the manipulations (reshape, permute,
 * flatten, squeeze, unsqueeze, broadcast, repack, slice, to_dense, coalesce).
 * Section numbers refer to spec/layout.md; "upstream row" means a case of
 * cuda.core's test suite as listed in §7.2.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)
#define P61 (INT64_C(1) << 61)

/* Manipulations that must succeed, returning the result. */
static strided_layout reshaped_at(const strided_layout *l, int n,
                                  const int64_t *shape, const char *file,
                                  int line)
{
    strided_layout out;
    check_status_(strided_layout_reshape(l, n, shape, &out), STRIDED_OK, file,
                  line);
    return out;
}
#define reshaped(l, ...)                                                       \
    reshaped_at(&(l), DIMS(__VA_ARGS__), __FILE__, __LINE__)

static strided_layout flattened_at(const strided_layout *l, int start, int end,
                                   const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_flatten(l, start, end, &out), STRIDED_OK,
                  file, line);
    return out;
}
#define flattened(l, start, end)                                               \
    flattened_at(&(l), (start), (end), __FILE__, __LINE__)

static strided_layout flattened_mask_at(const strided_layout *l, uint64_t mask,
                                        const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_flatten_mask(l, mask, &out), STRIDED_OK, file,
                  line);
    return out;
}
#define flattened_mask(l, mask)                                                \
    flattened_mask_at(&(l), (mask), __FILE__, __LINE__)

static uint64_t mask_at(const strided_layout *l, const char *file, int line)
{
    uint64_t m = 0;
    check_status_(strided_layout_flattened_axis_mask(l, &m), STRIDED_OK, file,
                  line);
    return m;
}
#define mask_of(l) mask_at(&(l), __FILE__, __LINE__)

static strided_layout squeezed_at(const strided_layout *l, const char *file,
                                  int line)
{
    strided_layout out;
    check_status_(strided_layout_squeeze(l, &out), STRIDED_OK, file, line);
    return out;
}
#define squeezed(l) squeezed_at(&(l), __FILE__, __LINE__)

static strided_layout unsqueezed_at(const strided_layout *l, int n,
                                    const int *axes, const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_unsqueeze(l, n, axes, &out), STRIDED_OK, file,
                  line);
    return out;
}
#define unsqueezed(l, ...)                                                     \
    unsqueezed_at(&(l), AXES(__VA_ARGS__), __FILE__, __LINE__)

static strided_layout broadcast_at(const strided_layout *l, int n,
                                   const int64_t *shape, const char *file,
                                   int line)
{
    strided_layout out;
    check_status_(strided_layout_broadcast(l, n, shape, &out), STRIDED_OK,
                  file, line);
    return out;
}
#define broadcast_to(l, ...)                                                   \
    broadcast_at(&(l), DIMS(__VA_ARGS__), __FILE__, __LINE__)

static strided_layout repacked_at(const strided_layout *l, int itemsize,
                                  intptr_t data_ptr, int axis, bool keep_dim,
                                  const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_repack(l, itemsize, data_ptr, axis, keep_dim,
                                        &out),
                  STRIDED_OK, file, line);
    return out;
}
#define repacked(l, itemsize, data_ptr, axis, keep_dim)                        \
    repacked_at(&(l), (itemsize), (data_ptr), (axis), (keep_dim), __FILE__,    \
                __LINE__)

static strided_layout to_dense_at(const strided_layout *l, strided_order order,
                                  int n, const int *perm, const char *file,
                                  int line)
{
    strided_layout out;
    check_status_(strided_layout_to_dense(l, order, n, perm, &out), STRIDED_OK,
                  file, line);
    return out;
}
#define to_dense(l, order) to_dense_at(&(l), (order), 0, NULL, __FILE__, __LINE__)
#define to_dense_perm(l, ...)                                                  \
    to_dense_at(&(l), STRIDED_ORDER_PERM, AXES(__VA_ARGS__), __FILE__, __LINE__)

static strided_layout coalesced_at(const strided_layout *l, const char *file,
                                   int line)
{
    strided_layout out;
    check_status_(strided_layout_coalesce(l, &out), STRIDED_OK, file, line);
    return out;
}
#define coalesced(l) coalesced_at(&(l), __FILE__, __LINE__)

#define assert_mask_eq(got, want)                                              \
    do {                                                                       \
        uint64_t g_ = (got), w_ = (want);                                      \
        if (g_ != w_)                                                          \
            fail_at(__FILE__, __LINE__,                                        \
                    "mask 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", g_, w_);   \
    } while (0)

/* A 64-d shape with the extents 2..6 spread over it (upstream long_shape). */
static void long_shape(int64_t shape[64])
{
    SHAPE64(shape, 3, 2, 17, 3, 30, 4, 45, 5, 63, 6);
}

/* ---- reshape (§5.1) ----------------------------------------------------- */

static void test_reshape_docstring_examples(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 4), 1);
    strided_layout a = reshaped(d, 20, 3);
    strided_layout want = mk_c(DIMS(20, 3), 1);
    strided_layout b = reshaped(d, 4, -1);
    strided_layout p = permuted(d, 2, 0, 1);
    strided_layout c = reshaped(p, 4, 15);

    (void)state;
    assert_layout_eq(a, want);
    assert_layout(b, "(4,15):(15,1)", 1);
    assert_layout(p, "(4,5,3):(1,12,4)", 1);
    assert_layout(c, "(4,15):(1,4)", 1);
}

static void test_reshape_docstring_incompatible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 4), 1);
    strided_layout p = permuted(d, 2, 0, 1), out;

    (void)state;
    assert_error(strided_layout_reshape(&p, DIMS(20, 3), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
}

static void test_reshape_column_major_incompatible_fails(void **state)
{
    strided_layout f = mk_f(DIMS(4, 6), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&f, DIMS(3, 8), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
}

static void test_reshape_unit_axis_fix(void **state)
{
    /* strided fix (§5.1, §7.8, §9.2-3): the unit axis's foreign stride does
     * not block the reshape; upstream raises here. */
    strided_layout d = mk_c(DIMS(1, 3, 4), 2);
    strided_layout p = permuted(d, 1, 0, 2);
    strided_layout r = reshaped(p, 12);

    (void)state;
    assert_layout(p, "(3,1,4):(4,12,1)", 2);
    assert_layout(r, "(12,):(1,)", 2);
}

static void test_reshape_unit_axis_fix_column_major(void **state)
{
    strided_layout f = mk_f(DIMS(5, 1, 7), 4);
    strided_layout r = reshaped(f, 5, 7);

    (void)state;
    assert_layout(r, "(5,7):(1,5)", 4);
}

static void test_reshape_incompatible_message_shows_layouts(void **state)
{
    /* The example message of strided/status.h. */
    strided_layout f = mk_f(DIMS(4, 6), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&f, DIMS(3, 8), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape: cannot "
                 "view (4,6):(1,4) as (3,8) without a copy");
}

static void test_reshape_to_0d_volume_mismatch_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, 0, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 6 and the new volume 1 must be equal.");
}

static void test_reshape_inferred_extent(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4);
    strided_layout a = reshaped(d, 70, -1);
    strided_layout b = reshaped(d, -1, 70);

    (void)state;
    assert_layout(a, "(70,3):(3,1)", 4);
    assert_layout(b, "(3,70):(70,1)", 4);
}

static void test_reshape_upstream_split_rows(void **state)
{
    strided_layout d = mk_c(DIMS(12, 11), 2), r;

    (void)state;
    r = reshaped(d, 2, 3, 2, 11);
    assert_layout(r, "(2,3,2,11):(66,22,11,1)", 2);
    r = reshaped(d, 2, 3, 11, 2);
    assert_layout(r, "(2,3,11,2):(66,22,2,1)", 2);
    r = reshaped(d, 2, 11, 3, 2);
    assert_layout(r, "(2,11,3,2):(66,6,2,1)", 2);
    r = reshaped(d, 11, 2, 3, 2);
    assert_layout(r, "(11,2,3,2):(12,6,2,1)", 2);
    r = reshaped(d, 2, 3, 2, -1);
    assert_layout(r, "(2,3,2,11):(66,22,11,1)", 2);
    r = reshaped(d, 2, -1, 3, 2);
    assert_layout(r, "(2,11,3,2):(66,6,2,1)", 2);
    r = reshaped(d, -1, 2, 3, 2);
    assert_layout(r, "(11,2,3,2):(12,6,2,1)", 2);
    r = reshaped(d, 11, 2, -1, 2);
    assert_layout(r, "(11,2,3,2):(12,6,2,1)", 2);
}

static void test_reshape_implicit_gives_explicit(void **state)
{
    strided_layout d = mk_implicit(DIMS(2, 3), 4);
    strided_layout same = reshaped(d, 2, 3);
    strided_layout r = reshaped(d, 3, 2);

    (void)state;
    assert_layout(same, "(2,3):(3,1)", 4);
    assert_layout(r, "(3,2):(2,1)", 4);
}

static void test_reshape_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(13, 3), 2);
    strided_layout s = sliced(d, s_from(1), S_ALL);
    strided_layout r = reshaped(s, 6, 6);

    (void)state;
    assert_layout(r, "(6,6):(6,1)+3", 2);
}

static void test_reshape_negative_strides(void **state)
{
    strided_layout d = mk_c(DIMS(10, 10, 10), 1);
    strided_layout s = sliced(d, S_REV, S_REV, S_ALL);
    strided_layout all_rev = sliced(d, S_REV, S_REV, S_REV);
    strided_layout a = reshaped(s, 100, 10);
    strided_layout b = reshaped(s, 10, 10, 10);
    strided_layout c = reshaped(all_rev, 1000);

    (void)state;
    assert_layout(s, "(10,10,10):(-100,-10,1)+990", 1);
    assert_layout(a, "(100,10):(-10,1)+990", 1);
    assert_layout(b, "(10,10,10):(-100,-10,1)+990", 1);
    assert_layout(c, "(1000,):(-1,)+999", 1);
}

static void test_reshape_negative_strides_incompatible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(10, 10, 10), 1), out;
    strided_layout a = sliced(d, S_REV, S_REV, S_ALL);
    strided_layout b = sliced(d, S_ALL, S_ALL, S_REV);
    strided_layout c = sliced(d, S_REV, S_ALL, S_REV);

    (void)state;
    assert_error(strided_layout_reshape(&a, DIMS(10, 100), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
    assert_error(strided_layout_reshape(&b, DIMS(10, 100), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
    assert_error(strided_layout_reshape(&c, DIMS(1000), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
}

static void test_reshape_permuted_rows(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 2), 4);
    strided_layout p = permuted(d, 1, 2, 0);
    strided_layout q = permuted(d, 1, 0, 2);
    strided_layout a = reshaped(p, 6, 2);
    strided_layout b = reshaped(q, 3, 2, 2);

    (void)state;
    assert_layout(a, "(6,2):(1,6)", 4);
    assert_layout(b, "(3,2,2):(2,6,1)", 4);
}

static void test_reshape_permuted_incompatible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 2), 4), out;
    strided_layout p = permuted(d, 1, 2, 0);
    strided_layout q = permuted(d, 1, 0, 2);

    (void)state;
    assert_error(strided_layout_reshape(&p, DIMS(2, 6), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
    assert_error(strided_layout_reshape(&p, DIMS(12), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
    assert_error(strided_layout_reshape(&q, DIMS(3, 4), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
}

static void test_reshape_sliced_rows(void **state)
{
    strided_layout d = mk_c(DIMS(12, 4), 1);
    strided_layout s = sliced(d, S_ALL, s_to(-1));
    strided_layout r = reshaped(s, 6, 2, 3);
    strided_layout out;

    (void)state;
    assert_layout(r, "(6,2,3):(8,4,1)", 1);
    assert_error(strided_layout_reshape(&s, DIMS(6, 6), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Layout strides are incompatible with the new shape");
}

static void test_reshape_unit_axes_of_the_new_shape(void **state)
{
    strided_layout d = mk_c(DIMS(12), 2), r;

    (void)state;
    r = reshaped(d, 1, 12);
    assert_layout(r, "(1,12):(12,1)", 2);
    r = reshaped(d, 12, 1);
    assert_layout(r, "(12,1):(1,1)", 2);
    r = reshaped(d, 1, 12, 1);
    assert_layout(r, "(1,12,1):(12,1,1)", 2);
}

static void test_reshape_0d(void **state)
{
    strided_layout z = mk_implicit(0, NULL, 4), r;
    strided_layout one = mk_c(DIMS(1), 4);

    (void)state;
    assert_ok(strided_layout_reshape(&z, 0, NULL, &r));
    assert_layout(r, "():()", 4);
    r = reshaped(z, 1);
    assert_layout(r, "(1,):(1,)", 4);
    r = reshaped(z, -1);
    assert_layout(r, "(1,):(1,)", 4);
    r = reshaped(z, 1, -1, 1);
    assert_layout(r, "(1,1,1):(1,1,1)", 4);
    assert_ok(strided_layout_reshape(&one, 0, NULL, &r));
    assert_layout(r, "():()", 4);
    r = reshaped(one, -1);
    assert_layout(r, "(1,):(1,)", 4);
}

static void test_reshape_empty_has_zero_strides(void **state)
{
    strided_layout e = mk_c(DIMS(3, 0, 3), 4), r;
    strided_layout z = mk_c(DIMS(0), 4);
    strided_layout t = mk_c(DIMS(3), 4);
    strided_layout t3 = sliced(t, s_from(3));
    strided_layout t21 = sliced(t, S_(2, -1, 1));

    (void)state;
    r = reshaped(e, 2, 3, 4, 5, 6, 7, 0, 12);
    assert_layout(r, "(2,3,4,5,6,7,0,12):(0,0,0,0,0,0,0,0)", 4);
    r = reshaped(e, 0);
    assert_layout(r, "(0,):(0,)", 4);
    r = reshaped(z, 0);
    assert_layout(r, "(0,):(0,)", 4);
    r = reshaped(z, 1, -1);
    assert_layout(r, "(1,0):(0,0)", 4);
    r = reshaped(t3, -1);
    assert_layout(r, "(0,):(0,)", 4);
    r = reshaped(t21, 0);
    assert_layout(r, "(0,):(0,)", 4);
}

static void test_reshape_empty_with_odd_strides(void **state)
{
    strided_layout e = mk(DIMS(0, 3), I64(3, 1), 4);
    strided_layout r = reshaped(e, 3, 0);

    (void)state;
    assert_layout(r, "(3,0):(0,0)", 4);
}

static void test_reshape_empty_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 1);
    strided_layout e = sliced(d, S_AT(1), S_(2, 2, 1));
    strided_layout r = reshaped(e, 0, 5);

    (void)state;
    assert_layout(e, "(0,):(0,)+4", 1);
    assert_layout(r, "(0,5):(0,0)+4", 1);
}

static void test_reshape_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d, flat, back, want, r;

    (void)state;
    long_shape(shape);
    d = mk_c(64, shape, 4);
    r = reshaped(d, 60, 12);
    assert_layout(r, "(60,12):(12,1)", 4);
    flat = mk_c(DIMS(720), 4);
    assert_ok(strided_layout_reshape(&flat, 64, shape, &back));
    want = mk_c(64, shape, 4);
    assert_layout_eq(back, want);
}

static void test_reshape_65_dims_fails(void **state)
{
    int64_t shape[65];
    strided_layout d = mk_c(DIMS(1), 4), out;
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        shape[k] = 1;
    assert_error(strided_layout_reshape(&d, 65, shape, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Unsupported number of dimensions: 65. Max supported ndim is "
                 "64");
}

static void test_reshape_negative_extent_fails(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(71, -2), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Extents must be non-negative");
}

static void test_reshape_negative_extent_first_fails(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(-2, 71), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Extents must be non-negative");
}

static void test_reshape_negative_extent_before_second_minus_one(void **state)
{
    /* One left-to-right pass: (-2,-1,-1) reports the negative extent. */
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(-2, -1, -1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Extents must be non-negative");
}

static void test_reshape_negative_extent_after_minus_one(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(-2, -1, -2), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Extents must be non-negative");
}

static void test_reshape_two_negative_extents(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(-7, 6, -5), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Extents must be non-negative");
}

static void test_reshape_second_minus_one_fails(void **state)
{
    /* (-1,6,-1) reports the repeated -1. */
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(-1, 6, -1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "There can be at most one -1 extent in a shape");
}

static void test_reshape_minus_one_then_negative_extent(void **state)
{
    /* (-1,-2) passes the -1, then meets -2. */
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(-1, -2), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "Extents must be non-negative");
}

static void test_reshape_volume_mismatch_fails(void **state)
{
    strided_layout d = mk_c(DIMS(12), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(11), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 12 and the new volume 11 must be equal.");
}

static void test_reshape_volume_mismatch_from_empty_fails(void **state)
{
    strided_layout d = mk_c(DIMS(0), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(1, 3), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 0 and the new volume 3 must be equal.");
}

static void test_reshape_volume_mismatch_to_empty_fails(void **state)
{
    strided_layout d = mk_c(DIMS(18), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 18 and the new volume 0 must be equal.");
}

static void test_reshape_volume_mismatch_of_sliced_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3), 4), out;
    strided_layout s = sliced(d, s_from(3));

    (void)state;
    assert_error(strided_layout_reshape(&s, DIMS(3), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 0 and the new volume 3 must be equal.");
}

static void test_reshape_ambiguous_minus_one_fails(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(5, 0, -1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The -1 extent is ambiguous when the specified sub-volume is 0");
}

static void test_reshape_ambiguous_minus_one_of_empty_fails(void **state)
{
    strided_layout z = mk_c(DIMS(0), 4), e = mk_c(DIMS(7, 0, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&z, DIMS(0, -1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The -1 extent is ambiguous when the specified sub-volume is 0");
    assert_error(strided_layout_reshape(&e, DIMS(5, 0, -1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The -1 extent is ambiguous when the specified sub-volume is 0");
}

static void test_reshape_indivisible_minus_one_fails(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(71, -1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 210 must be divisible by the specified "
                 "sub-volume 71.");
    assert_error(strided_layout_reshape(&d, DIMS(-1, 71), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "reshape",
                 "The original volume 210 must be divisible by the specified "
                 "sub-volume 71.");
}

static void test_reshape_new_volume_overflow_fails(void **state)
{
    strided_layout d = mk_c(DIMS(4), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(INT64_C(1) << 32,
                                             INT64_C(1) << 32), &out),
                 STRIDED_ERR_OVERFLOW, "reshape", NULL);
}

static void test_reshape_new_volume_overflow_with_minus_one_fails(void **state)
{
    strided_layout d = mk_c(DIMS(4), 4), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(INT64_C(1) << 32, -1,
                                             INT64_C(1) << 32), &out),
                 STRIDED_ERR_OVERFLOW, "reshape", NULL);
}

static void test_reshape_unit_axis_stride_overflow_fails(void **state)
{
    /* The leading unit axis would take the stride 2 * 2^62 (§5.1, §2.3). */
    strided_layout d = mk(DIMS(2), I64(P62), 1), out;

    (void)state;
    assert_error(strided_layout_reshape(&d, DIMS(1, 2), &out),
                 STRIDED_ERR_OVERFLOW, "reshape", NULL);
}

static void test_reshape_largest_volume(void **state)
{
    strided_layout d = mk_c(DIMS(INT64_MAX), 1);
    strided_layout r = reshaped(d, 7, -1);

    (void)state;
    assert_layout(r, "(7,1317624576693539401):(1317624576693539401,1)", 1);
}

/* ---- permute (§5.2) ----------------------------------------------------- */

static void test_permute(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 4), 4);
    strided_layout p = permuted(d, 2, 0, 1);

    (void)state;
    assert_layout(p, "(4,2,3):(1,12,4)", 4);
}

static void test_permute_negative_axes(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 4), 4);
    strided_layout p = permuted(d, -1, 0, -2);

    (void)state;
    assert_layout(p, "(4,2,3):(1,12,4)", 4);
}

static void test_permute_identity_gives_explicit(void **state)
{
    strided_layout d = mk_implicit(DIMS(2, 3), 4);
    strided_layout p = permuted(d, 0, 1);

    (void)state;
    assert_layout(p, "(2,3):(3,1)", 4);
}

static void test_permute_0d(void **state)
{
    strided_layout d = mk_implicit(0, NULL, 4), p;

    (void)state;
    assert_ok(strided_layout_permute(&d, 0, NULL, &p));
    assert_layout(p, "():()", 4);
}

static void test_permute_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 2);
    strided_layout s = sliced(d, s_from(1), S_REV);
    strided_layout p = permuted(s, 2, 1, 0);

    (void)state;
    assert_layout(p, "(7,3,4):(1,-7,21)+35", 2);
}

static void test_permute_64_dims(void **state)
{
    int64_t shape[64];
    int axes[64];
    strided_layout d, p;
    int k;

    (void)state;
    long_shape(shape);
    for (k = 0; k < 64; k++)
        axes[k] = 63 - k;
    d = mk_c(64, shape, 1);
    assert_ok(strided_layout_permute(&d, 64, axes, &p));
    for (k = 0; k < 64; k++) {
        assert_i64(p.shape[k], d.shape[63 - k]);
        assert_i64(p.strides[k], d.strides[63 - k]);
    }
    assert_true(strided_layout_is_contiguous_f(&p));
}

static void test_permute_too_many_axes_for_0d_fails(void **state)
{
    strided_layout d = mk_c(0, NULL, 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(5), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Permutation must have the same length as the number of "
                 "dimensions, got 1 for 0D tensor.");
}

static void test_permute_too_many_axes_fails(void **state)
{
    strided_layout d = mk_c(DIMS(1), 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(0, 0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Permutation must have the same length as the number of "
                 "dimensions, got 2 for 1D tensor.");
}

static void test_permute_too_few_axes_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(1, 0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Permutation must have the same length as the number of "
                 "dimensions, got 2 for 3D tensor.");
}

static void test_permute_negative_count_fails(void **state)
{
    strided_layout d = mk_c(0, NULL, 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, -1, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "the same length as the number of dimensions");
}

static void test_permute_repeated_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 5, 3), 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(1, 0, 1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Invalid permutation: axis 1 appears multiple times.");
}

static void test_permute_repeated_axis_prints_original_value(void **state)
{
    strided_layout d = mk_c(DIMS(2, 5, 3), 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(1, 0, -2), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Invalid permutation: axis -2 appears multiple times.");
}

static void test_permute_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6, 7), 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(1, 3, 0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Invalid permutation: axis 3 out of range for 3D tensor");
}

static void test_permute_negative_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6, 7), 4), out;

    (void)state;
    assert_error(strided_layout_permute(&d, AXES(1, -2000, 0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "permute",
                 "Invalid permutation: axis -2000 out of range for 3D tensor");
}

/* ---- flatten and flattened_axis_mask (§5.3, §7.2 items 6-7) ------------- */

static void test_flatten_0d(void **state)
{
    strided_layout d = mk_c(0, NULL, 4), i = mk_implicit(0, NULL, 4);
    strided_layout a = flattened(d, 0, -1), b = flattened(i, 0, -1);
    strided_layout c = flattened_mask(d, 0), e = flattened_mask(i, ~UINT64_C(0));

    (void)state;
    assert_layout(a, "(1,):(1,)", 4);
    assert_layout(b, "(1,):(1,)", 4);
    assert_layout(c, "(1,):(1,)", 4);
    assert_layout(e, "(1,):(1,)", 4);
    assert_mask_eq(mask_of(d), 0);
}

static void test_flatten_1d(void **state)
{
    strided_layout d = mk_c(DIMS(12), 4);
    strided_layout s = sliced(d, S_ALL);
    strided_layout f = flattened(s, 0, -1);

    (void)state;
    assert_layout(f, "(12,):(1,)", 4);
    assert_mask_eq(mask_of(s), 0);
}

static void test_flatten_dense_with_unit_axis(void **state)
{
    strided_layout c = mk_c(DIMS(1, 2, 3, 4, 5), 2);
    strided_layout i = mk_implicit(DIMS(1, 2, 3, 4, 5), 2);
    strided_layout a = flattened(c, 0, -1), b = flattened(i, 0, -1);

    (void)state;
    assert_layout(a, "(120,):(1,)", 2);
    assert_layout(b, "(120,):(1,)", 2);
    assert_mask_eq(mask_of(c), 0x1E);
    assert_mask_eq(mask_of(i), 0x1E);
}

static void test_flatten_empty(void **state)
{
    strided_layout c = mk_c(DIMS(1, 2, 3, 0, 5), 2);
    strided_layout i = mk_implicit(DIMS(1, 2, 3, 0, 5), 2);
    strided_layout a = flattened(c, 0, -1), b = flattened(i, 0, -1);

    (void)state;
    assert_layout(a, "(0,):(0,)", 2);
    assert_layout(b, "(0,):(0,)", 2);
    assert_mask_eq(mask_of(c), 0x1E);
    assert_mask_eq(mask_of(i), 0x1E);
}

/* (5,1,2,4,3)[:, :, :, :, ::-2], the upstream row with axis ranges. */
static strided_layout flatten_row5(void)
{
    strided_layout d = mk_c(DIMS(5, 1, 2, 4, 3), 8);
    return sliced(d, S_ALL, S_ALL, S_ALL, S_ALL, strided_index_all(-2));
}

static void test_flatten_negative_step_row(void **state)
{
    strided_layout s = flatten_row5();
    strided_layout f = flattened(s, 0, -1);

    (void)state;
    assert_layout(s, "(5,1,2,4,2):(24,24,12,3,-2)+2", 8);
    assert_layout(f, "(40,2):(3,-2)+2", 8);
    assert_mask_eq(mask_of(s), 0xE);
}

static void test_flatten_axis_ranges(void **state)
{
    strided_layout s = flatten_row5(), f;

    (void)state;
    f = flattened(s, 0, 2);
    assert_layout(f, "(10,4,2):(12,3,-2)+2", 8);
    f = flattened(s, 1, 2);
    assert_layout(f, "(5,2,4,2):(24,12,3,-2)+2", 8);
    f = flattened(s, 1, 3);
    assert_layout(f, "(5,8,2):(24,3,-2)+2", 8);
    f = flattened(s, 1, 4);
    assert_layout(f, "(5,8,2):(24,3,-2)+2", 8);
    f = flattened(s, -4, -2);
    assert_layout(f, "(5,8,2):(24,3,-2)+2", 8);
}

static void test_flatten_reversed_middle_axis(void **state)
{
    strided_layout d = mk_c(DIMS(5, 2, 4, 3), 1);
    strided_layout s = sliced(d, S_ALL, S_REV, S_ALL, S_ALL);
    strided_layout f = flattened(s, 0, -1);

    (void)state;
    assert_layout(f, "(5,2,12):(24,-12,1)+12", 1);
    assert_mask_eq(mask_of(s), 0x8);
}

static void test_flatten_two_reversed_axes(void **state)
{
    strided_layout d = mk_c(DIMS(5, 7, 4, 3), 1);
    strided_layout s = sliced(d, S_ALL, S_REV, S_REV);
    strided_layout f = flattened(s, 0, -1);

    (void)state;
    assert_layout(f, "(5,28,3):(84,-3,1)+81", 1);
    assert_mask_eq(mask_of(s), 0x4);
}

static void test_flatten_permuted_rows(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4, 3, 7), 4);
    strided_layout p = permuted(d, 2, 3, 0, 1);
    strided_layout q = permuted(d, 3, 2, 0, 1);
    strided_layout fp = flattened(p, 0, -1), fq = flattened(q, 0, -1);

    (void)state;
    assert_layout(fp, "(21,20):(1,21)", 4);
    assert_mask_eq(mask_of(p), 0xA);
    assert_layout(fq, "(7,3,20):(1,7,21)", 4);
    assert_mask_eq(mask_of(q), 0x8);
}

static void test_flatten_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d, i, f;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    shape[0] = 2;
    shape[21] = 3;
    shape[42] = 4;
    shape[63] = 5;
    d = mk_c(64, shape, 2);
    i = mk_implicit(64, shape, 2);
    f = flattened(d, 0, -1);
    assert_layout(f, "(120,):(1,)", 2);
    f = flattened(i, 0, -1);
    assert_layout(f, "(120,):(1,)", 2);
    assert_mask_eq(mask_of(d), STRIDED_AXES_MASK_ALL);
}

static void test_flatten_unit_axis_rule(void **state)
{
    strided_layout d = mk_c(DIMS(1, 3, 4), 4);
    strided_layout p = permuted(d, 1, 0, 2);
    strided_layout f = mk_f(DIMS(5, 1, 7), 4);
    strided_layout a = flattened(p, 0, -1), b = flattened(f, 0, -1);

    (void)state;
    assert_layout(a, "(12,):(1,)", 4);
    assert_layout(b, "(5,7):(1,5)", 4);
}

static void test_flatten_all_unit_group_takes_innermost_stride(void **state)
{
    strided_layout l = mk(DIMS(1, 1, 3), I64(7, 5, 2), 4);
    strided_layout u = mk(DIMS(1, 1), I64(7, 5), 4);
    strided_layout a = flattened(l, 0, -1), b = flattened(u, 0, -1);

    (void)state;
    assert_layout(a, "(3,):(2,)", 4);
    assert_layout(b, "(1,):(5,)", 4);
}

static void test_flatten_invariants(void **state)
{
    strided_layout s = flatten_row5();
    strided_layout full = flattened(s, 0, -1);
    strided_layout by_mask = flattened_mask(s, mask_of(s));

    (void)state;
    assert_layout_eq(full, by_mask);
    assert_mask_eq(mask_of(full), 0);
}

static void test_flatten_mask_ignores_bit_zero_and_high_bits(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4);
    strided_layout a = flattened_mask(d, ~UINT64_C(0));
    strided_layout b = flattened_mask(d, UINT64_C(1) | (UINT64_C(1) << 5));

    (void)state;
    assert_layout(a, "(6,):(1,)", 4);
    assert_layout(b, "(2,3):(3,1)", 4);
}

static void test_flatten_together(void **state)
{
    /* §5.3: masks of equal-ndim layouts combined with & flatten them alike. */
    strided_layout a = mk_c(DIMS(4, 5, 3), 4);
    strided_layout b = mk(DIMS(4, 5, 3), I64(1, 12, 4), 4);
    uint64_t m = mask_of(a) & mask_of(b);
    strided_layout fa = flattened_mask(a, m), fb = flattened_mask(b, m);

    (void)state;
    assert_mask_eq(m, 0x4);
    assert_layout(fa, "(4,15):(15,1)", 4);
    assert_layout(fb, "(4,15):(1,4)", 4);
}

static void test_flatten_together_upstream_row(void **state)
{
    /* (4,5,11,2,3,7) order (5,3,4,0,1,2) and (3,8,5,6,7,9) order
     * (0,1,3,4,5,2) give (20,11,6,7) order (3,2,0,1) and (24,5,42,9) order
     * (0,2,3,1) (§7.2 item 7). */
    strided_layout a = mk_perm(DIMS(4, 5, 11, 2, 3, 7), 4, AXES(5, 3, 4, 0, 1, 2));
    strided_layout b = mk_perm(DIMS(3, 8, 5, 6, 7, 9), 4, AXES(0, 1, 3, 4, 5, 2));
    uint64_t m = mask_of(a) & mask_of(b);
    strided_layout fa = flattened_mask(a, m), fb = flattened_mask(b, m);
    strided_layout wa = mk_perm(DIMS(20, 11, 6, 7), 4, AXES(3, 2, 0, 1));
    strided_layout wb = mk_perm(DIMS(24, 5, 42, 9), 4, AXES(0, 2, 3, 1));

    (void)state;
    assert_layout_eq(fa, wa);
    assert_layout_eq(fb, wb);
}

/* As NumPy and PyTorch: start == end merges nothing, a start after the end
 * (after negative axes count from the end) is an error. */
static void test_flatten_start_after_end_fails(void **state)
{
    strided_layout d = mk_implicit(DIMS(2, 3, 4), 4), out;
    strided_layout b = flattened(d, 1, 1), c = flattened(d, -1, 2);

    (void)state;
    assert_layout(b, "(2,3,4):(12,4,1)", 4);
    assert_layout(c, "(2,3,4):(12,4,1)", 4);
    fill_sentinel(&out, sizeof out);
    assert_error(strided_layout_flatten(&d, 2, 1, &out), STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                 "Invalid axes: start axis 2 comes after end axis 1 for 3D tensor");
    assert_error(strided_layout_flatten(&d, -1, 0, &out), STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                 "Invalid axes: start axis -1 comes after end axis 0 for 3D tensor");
    assert_error(strided_layout_flatten(&d, 2, -2, &out), STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                 "start axis 2 comes after end axis -2");
    assert_untouched(&out, sizeof out);
}

static void test_flatten_keeps_itemsize_and_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6), 16);
    strided_layout s = sliced(d, s_from(2));
    strided_layout f = flattened(s, 0, -1);

    (void)state;
    assert_layout(f, "(18,):(1,)+12", 16);
}

static void test_flatten_start_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_flatten(&d, 3, -1, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                 "Invalid start axis: 3 out of range for 3D tensor");
}

static void test_flatten_end_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_flatten(&d, 0, -4, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                 "Invalid end axis: -4 out of range for 3D tensor");
}

static void test_flatten_0d_axis_range_fails(void **state)
{
    strided_layout d = mk_c(0, NULL, 4), out;

    (void)state;
    assert_error(strided_layout_flatten(&d, 0, 0, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                 "Invalid start axis: 0 out of range for 0D tensor");
}

static void test_flatten_overflow_fails(void **state)
{
    strided_layout l = mk(DIMS(2, 2), I64(1, P62), 1), out;

    (void)state;
    fill_sentinel(&out, sizeof out);
    assert_error(strided_layout_flatten(&l, 0, -1, &out), STRIDED_ERR_OVERFLOW,
                 "flatten", NULL);
    assert_untouched(&out, sizeof out);
}

/* ---- squeeze (§5.4) ----------------------------------------------------- */

static void test_squeeze(void **state)
{
    strided_layout d = mk_c(DIMS(1, 5, 4, 3), 4);
    strided_layout s = squeezed(d);

    (void)state;
    assert_layout(s, "(5,4,3):(12,3,1)", 4);
}

static void test_squeeze_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(1, 5, 1, 4, 3), 4);
    strided_layout s = sliced(d, S_ALL, s_from(-1), S_ALL);
    strided_layout q = squeezed(s);

    (void)state;
    assert_layout(q, "(4,3):(3,1)+48", 4);
}

static void test_squeeze_0d_and_all_ones(void **state)
{
    strided_layout z = mk_implicit(0, NULL, 4), o = mk_c(DIMS(1, 1, 1), 4);
    strided_layout a = squeezed(z), b = squeezed(o);

    (void)state;
    assert_layout(a, "():()", 4);
    assert_layout(b, "():()", 4);
}

static void test_squeeze_empty(void **state)
{
    strided_layout e = mk(DIMS(2, 0, 1), I64(3, 5, 7), 4);
    strided_layout d = mk_c(DIMS(3, 4), 1);
    strided_layout s = sliced(d, S_AT(1), S_(2, 2, 1));
    strided_layout a = squeezed(e), b = squeezed(s);

    (void)state;
    assert_layout(a, "(0,):(0,)", 4);
    assert_layout(b, "(0,):(0,)+4", 1);
}

static void test_squeeze_without_unit_axes_gives_explicit(void **state)
{
    strided_layout d = mk_implicit(DIMS(2, 3), 4);
    strided_layout s = squeezed(d);

    (void)state;
    assert_layout(s, "(2,3):(3,1)", 4);
}

static void test_squeeze_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d, s;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    shape[40] = 2;
    d = mk_c(64, shape, 4);
    s = squeezed(d);
    assert_layout(s, "(2,):(1,)", 4);
}

/* ---- unsqueeze (§5.5) --------------------------------------------------- */

static void test_unsqueeze_docstring_examples(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4);
    strided_layout a = unsqueezed(d, 1), b = unsqueezed(d, -1);
    strided_layout c = unsqueezed(d, 0, 3);

    (void)state;
    assert_layout(a, "(3,1,4):(4,4,1)", 4);
    assert_layout(b, "(3,4,1):(4,1,1)", 4);
    assert_layout(c, "(1,3,4,1):(12,4,1,1)", 4);
}

static void test_unsqueeze_axes_in_any_order(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4);
    strided_layout a = unsqueezed(d, 3, 0), b = unsqueezed(d, -1, -4);

    (void)state;
    assert_layout(a, "(1,3,4,1):(12,4,1,1)", 4);
    assert_layout(b, "(1,3,4,1):(12,4,1,1)", 4);
}

static void test_unsqueeze_trailing_axis_takes_last_stride(void **state)
{
    strided_layout f = mk_f(DIMS(3, 4), 4);
    strided_layout a = unsqueezed(f, 2), b = unsqueezed(f, 2, 3);
    strided_layout c = unsqueezed(f, 0, 3);

    (void)state;
    assert_layout(a, "(3,4,1):(1,3,3)", 4);
    assert_layout(b, "(3,4,1,1):(1,3,3,3)", 4);
    assert_layout(c, "(1,3,4,1):(3,1,3,3)", 4);
}

static void test_unsqueeze_0d(void **state)
{
    strided_layout z = mk_implicit(0, NULL, 4);
    strided_layout a = unsqueezed(z, 0), b = unsqueezed(z, 0, 1);
    strided_layout c = unsqueezed(z, -1);

    (void)state;
    assert_layout(a, "(1,):(1,)", 4);
    assert_layout(b, "(1,1):(1,1)", 4);
    assert_layout(c, "(1,):(1,)", 4);
}

static void test_unsqueeze_no_axes_keeps_implicit_strides(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4), e = mk_c(DIMS(2, 3), 4);
    strided_layout a, b;

    (void)state;
    assert_ok(strided_layout_unsqueeze(&i, 0, NULL, &a));
    assert_ok(strided_layout_unsqueeze(&e, 0, NULL, &b));
    assert_layout_implicit(a, "(2,3):(3,1)", 4);
    assert_layout_eq(a, i);
    assert_layout(b, "(2,3):(3,1)", 4);
}

static void test_unsqueeze_implicit_gives_explicit(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4);
    strided_layout a = unsqueezed(i, 2);

    (void)state;
    assert_layout(a, "(2,3,1):(3,1,1)", 4);
}

static void test_unsqueeze_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(d, s_from(1), S_REV);
    strided_layout a = unsqueezed(s, 1);

    (void)state;
    assert_layout(a, "(4,1,3,7):(21,-21,-7,1)+35", 1);
}

static void test_unsqueeze_to_64_dims(void **state)
{
    int64_t shape[63];
    int axes[1] = {63};
    strided_layout d, u;
    int k;

    (void)state;
    for (k = 0; k < 63; k++)
        shape[k] = 1;
    shape[0] = 3;
    d = mk_c(63, shape, 4);
    assert_ok(strided_layout_unsqueeze(&d, 1, axes, &u));
    assert_int_equal(u.ndim, 64);
    assert_i64(u.shape[63], 1);
    assert_i64(u.strides[63], 1);
}

static void test_unsqueeze_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_unsqueeze(&d, AXES(9), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "unsqueeze",
                 "Invalid axis: 9 out of range for 3D tensor");
}

static void test_unsqueeze_negative_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_unsqueeze(&d, AXES(-4), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "unsqueeze",
                 "Invalid axis: -4 out of range for 3D tensor");
}

static void test_unsqueeze_repeated_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_unsqueeze(&d, AXES(0, 0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "unsqueeze",
                 "Axis 0 appears multiple times.");
}

static void test_unsqueeze_repeated_normalized_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4), out;

    (void)state;
    assert_error(strided_layout_unsqueeze(&d, AXES(1, -3), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "unsqueeze",
                 "Axis 1 appears multiple times.");
}

static void test_unsqueeze_65_dims_fails(void **state)
{
    int64_t shape[64];
    strided_layout d, out;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    d = mk_c(64, shape, 4);
    assert_error(strided_layout_unsqueeze(&d, AXES(0), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "unsqueeze",
                 "Unsupported number of dimensions: 65. Max supported ndim is "
                 "64");
}

static void test_unsqueeze_checks_ndim_before_axes(void **state)
{
    int64_t shape[63];
    strided_layout d, out;
    int k;

    (void)state;
    for (k = 0; k < 63; k++)
        shape[k] = 1;
    d = mk_c(63, shape, 4);
    assert_error(strided_layout_unsqueeze(&d, AXES(99, 99), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "unsqueeze",
                 "Unsupported number of dimensions: 65");
}

static void test_unsqueeze_stride_overflow_fails(void **state)
{
    /* The new axis before axis 0 needs stride 3 * (2^62 - 1). */
    strided_layout l = mk(DIMS(3), I64(P62 - 1), 1), out;

    (void)state;
    assert_error(strided_layout_unsqueeze(&l, AXES(0), &out),
                 STRIDED_ERR_OVERFLOW, "unsqueeze", NULL);
}

/* ---- broadcast (§5.6) --------------------------------------------------- */

static void test_broadcast_0d(void **state)
{
    strided_layout z = mk_c(0, NULL, 4), a, b, c;

    (void)state;
    assert_ok(strided_layout_broadcast(&z, 0, NULL, &a));
    assert_layout(a, "():()", 4);
    b = broadcast_to(z, 1);
    assert_layout(b, "(1,):(0,)", 4);
    c = broadcast_to(z, 17, 1, 5);
    assert_layout(c, "(17,1,5):(0,0,0)", 4);
}

static void test_broadcast_unit_axis(void **state)
{
    strided_layout o = mk_c(DIMS(1), 4);
    strided_layout a = broadcast_to(o, 5), b = broadcast_to(o, 3, 5, 2);

    (void)state;
    assert_layout(a, "(5,):(0,)", 4);
    assert_layout(b, "(3,5,2):(0,0,0)", 4);
}

static void test_broadcast_new_leading_axes(void **state)
{
    strided_layout s = mk_c(DIMS(7), 4);
    strided_layout a = broadcast_to(s, 7), b = broadcast_to(s, 2, 7);

    (void)state;
    assert_layout(a, "(7,):(1,)", 4);
    assert_layout(b, "(2,7):(0,1)", 4);
}

static void test_broadcast_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(5, 11), 4);
    strided_layout s = sliced(d, S_(1, -1, 1), S_REV);
    strided_layout a = broadcast_to(s, 3, 11), b = broadcast_to(s, 7, 3, 11);

    (void)state;
    assert_layout(a, "(3,11):(11,-1)+21", 4);
    assert_layout(b, "(7,3,11):(0,11,-1)+21", 4);
}

static void test_broadcast_unit_axis_to_zero(void **state)
{
    strided_layout d = mk_c(DIMS(1, 3), 4);
    strided_layout a = broadcast_to(d, 0, 3);

    (void)state;
    assert_layout(a, "(0,3):(0,1)", 4);
    assert_true(strided_layout_is_unique(&a));
}

static void test_broadcast_implicit_gives_explicit(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4);
    strided_layout a = broadcast_to(i, 2, 3);

    (void)state;
    assert_layout(a, "(2,3):(3,1)", 4);
}

static void test_broadcast_uniqueness(void **state)
{
    strided_layout s = mk_c(DIMS(7), 4);
    strided_layout a = broadcast_to(s, 1, 1, 7), b = broadcast_to(s, 2, 7);
    strided_layout d = mk_c(DIMS(5, 11), 4);
    strided_layout c = sliced(d, S_REV, S_(3, 4, 1));
    strided_layout e = broadcast_to(c, 5, 7);

    (void)state;
    assert_true(strided_layout_is_unique(&a));
    assert_false(strided_layout_is_unique(&b));
    assert_false(strided_layout_is_unique(&e));
}

static void test_broadcast_to_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d = mk_c(DIMS(2, 3, 3), 4);
    strided_layout s = sliced(d, S_ALL, S_(1, 2, 1)), b;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    shape[0] = 401;
    shape[1] = 3;
    shape[61] = 2;
    shape[62] = 4;
    shape[63] = 3;
    assert_ok(strided_layout_broadcast(&s, 64, shape, &b));
    assert_int_equal(b.ndim, 64);
    for (k = 0; k < 61; k++)
        assert_i64(b.strides[k], 0);
    assert_i64(b.strides[61], 9);
    assert_i64(b.strides[62], 0);
    assert_i64(b.strides[63], 1);
    assert_i64(b.slice_offset, 3);
}

static void test_broadcast_fewer_dims_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_broadcast(&d, DIMS(3), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "broadcast",
                 "The broadcast shape ndim (1) must be greater than or equal to "
                 "the input shape ndim (2).");
}

static void test_broadcast_incompatible_extent_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_broadcast(&d, DIMS(2, 5), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "broadcast",
                 "Shapes cannot be broadcast together: the original extent must "
                 "be 1 or be equal to broadcast extent, got 3 and 5 for axis 1.");
}

static void test_broadcast_negative_extent_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_broadcast(&d, DIMS(2, -3), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "broadcast",
                 "Extents must be non-negative");
}

static void test_broadcast_checks_extents_before_ndim(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_broadcast(&d, DIMS(-1), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "broadcast",
                 "Extents must be non-negative");
}

static void test_broadcast_65_dims_fails(void **state)
{
    int64_t shape[65];
    strided_layout d = mk_c(DIMS(1), 4), out;
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        shape[k] = 1;
    assert_error(strided_layout_broadcast(&d, 65, shape, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "broadcast",
                 "Unsupported number of dimensions: 65. Max supported ndim is "
                 "64");
}

static void test_broadcast_volume_overflow_fails(void **state)
{
    strided_layout d = mk_c(DIMS(1, 1), 4), out;

    (void)state;
    assert_error(strided_layout_broadcast(&d, DIMS(INT64_C(1) << 32,
                                               INT64_C(1) << 32), &out),
                 STRIDED_ERR_OVERFLOW, "broadcast", NULL);
}

/* ---- repack (§5.7) ------------------------------------------------------ */

static void test_repack_docstring_examples(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4), r, w;

    (void)state;
    r = repacked(d, 2, 0, -1, true);
    w = mk_c(DIMS(5, 8), 2);
    assert_layout_eq(r, w);
    r = repacked(d, 8, 0, -1, true);
    w = mk_c(DIMS(5, 2), 8);
    assert_layout_eq(r, w);
    r = repacked(d, 16, 0, -1, true);
    w = mk_c(DIMS(5, 1), 16);
    assert_layout_eq(r, w);
    r = repacked(d, 16, 0, -1, false);
    w = mk_c(DIMS(5), 16);
    assert_layout_eq(r, w);
}

static void test_repack_keep_dim_false_keeps_non_unit_axis(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4);
    strided_layout r = repacked(d, 8, 0, -1, false);

    (void)state;
    assert_layout(r, "(5,2):(2,1)", 8);
}

static void test_repack_same_itemsize_is_a_copy(void **state)
{
    strided_layout i = mk_implicit(DIMS(5, 4), 4);
    strided_layout z = mk_c(0, NULL, 4);
    strided_layout g = mk(DIMS(4, 5), I64(5, 2), 4);
    strided_layout a = repacked(i, 4, 3, 7, false);
    strided_layout b = repacked(z, 4, 0, -1, true);
    strided_layout c = repacked(g, 4, 1, 0, true);

    (void)state;
    assert_layout_implicit(a, "(5,4):(4,1)", 4);
    assert_layout_eq(a, i);
    assert_layout(b, "():()", 4);
    assert_layout_eq(c, g);
}

static void test_repack_implicit_gives_explicit(void **state)
{
    strided_layout i = mk_implicit(DIMS(5, 4), 4);
    strided_layout r = repacked(i, 8, 0, -1, true);

    (void)state;
    assert_layout(r, "(5,2):(2,1)", 8);
}

static void test_repack_pack_then_unpack_restores(void **state)
{
    strided_layout d = mk_c(DIMS(5, 8), 4);
    strided_layout s = sliced(d, S_ALL, S_(2, 6, 1));
    strided_layout p = repacked(s, 8, 0, -1, true);
    strided_layout u = repacked(p, 4, 0, -1, true);

    (void)state;
    assert_layout(p, "(5,2):(4,1)+1", 8);
    assert_layout(u, "(5,4):(8,1)+2", 4);
    assert_layout_eq(u, s);
}

static void test_repack_upstream_row(void **state)
{
    strided_layout d = mk_c(DIMS(12, 3, 24), 2);
    strided_layout p = permuted(d, 1, 2, 0);
    strided_layout s = sliced(p, S_REV, s_from(20), s_from(1));
    strided_layout r = repacked(s, 8, 0, 1, true);
    strided_layout u = repacked(r, 2, 0, 1, true);

    (void)state;
    assert_layout(r, "(3,1,11):(-6,1,18)+35", 8);
    assert_layout_eq(u, s);
}

static void test_repack_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout c, r;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    shape[1] = 3;
    shape[63] = 4;
    c = mk_c(64, shape, 2);
    r = repacked(c, 8, 0, -1, true);
    assert_int_equal(r.ndim, 64);
    assert_int_equal(r.itemsize, 8);
    assert_i64(r.shape[63], 1);
    assert_i64(r.strides[63], 1);
    assert_i64(r.strides[1], 1);
    assert_i64(r.strides[0], 3);
    r = repacked(c, 8, 0, -1, false);
    assert_int_equal(r.ndim, 63);
}

static void test_repack_unpack(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 8);
    strided_layout a = repacked(d, 4, 0, -1, true);
    strided_layout b = repacked(d, 1, 0, -1, false);
    strided_layout f = mk_f(DIMS(4, 5), 8);
    strided_layout c = repacked(f, 4, 0, 0, true);

    (void)state;
    assert_layout(a, "(5,8):(8,1)", 4);
    assert_layout(b, "(5,32):(32,1)", 1);
    assert_layout(c, "(8,5):(1,8)", 4);
}

static void test_repack_non_power_of_two_itemsizes(void **state)
{
    strided_layout d = mk_c(DIMS(4, 6), 3);
    strided_layout a = repacked(d, 6, 0, -1, true);
    strided_layout b = repacked(a, 3, 0, -1, true);
    strided_layout t = mk_c(DIMS(2, 5), 12);
    strided_layout c = repacked(t, 4, 0, -1, true);
    strided_layout e = repacked(c, 12, 0, -1, true);

    (void)state;
    assert_layout(a, "(4,3):(3,1)", 6);
    assert_layout_eq(b, d);
    assert_layout(c, "(2,15):(15,1)", 4);
    assert_layout_eq(e, t);
}

static void test_repack_aligned_data_ptr(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4);
    strided_layout a = repacked(d, 8, 4096, -1, true);
    strided_layout b = repacked(d, 8, -16, -1, true);
    strided_layout c = repacked(d, 8, INTPTR_MIN, -1, true);

    (void)state;
    assert_layout(a, "(5,2):(2,1)", 8);
    assert_layout(b, "(5,2):(2,1)", 8);
    assert_layout(c, "(5,2):(2,1)", 8);
}

static void test_repack_pack_invalid_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, 5, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "Invalid axis: 5 out of range for 2D tensor");
}

static void test_repack_pack_0d_fails(void **state)
{
    strided_layout d = mk_implicit(0, NULL, 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "Invalid axis: -1 out of range for 0D tensor");
}

static void test_repack_pack_unaligned_data_ptr_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 4, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The data pointer (4) must be aligned to the packed itemsize "
                 "(8).");
}

static void test_repack_pack_axis_stride_not_one_fails(void **state)
{
    strided_layout d = mk(DIMS(4, 5), I64(5, 1), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, 0, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 0 stride must be 1, got 5.");
}

static void test_repack_pack_prints_normalized_axis(void **state)
{
    strided_layout d = mk(DIMS(4, 5), I64(5, 1), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, -2, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 0 stride must be 1, got 5.");
}

static void test_repack_pack_zero_extent_fails(void **state)
{
    strided_layout d = mk(DIMS(5, 0), I64(0, 1), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 1 extent must be non-zero, got 0.");
}

static void test_repack_pack_extent_not_divisible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 1 extent (3) must be divisible by 2.");
}

static void test_repack_pack_slice_offset_not_divisible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6), 4), out;
    strided_layout s = sliced(d, S_ALL, S_(1, 5, 1));

    (void)state;
    assert_i64(s.slice_offset, 1);
    assert_error(strided_layout_repack(&s, 8, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The slice offset (1) must be divisible by 2.");
}

static void test_repack_pack_other_stride_not_divisible_fails(void **state)
{
    strided_layout d = mk(DIMS(3, 4), I64(5, 1), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The 0 axis stride (5) must be divisible by 2.");
}

static void test_repack_pack_itemsizes_not_divisible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 6, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The new itemsize (6) must be divisible by the itemsize (4).");
}

static void test_repack_pack_checks_divisibility_before_axis(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 6, 0, 5, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The new itemsize (6) must be divisible by the itemsize (4).");
}

static void test_repack_pack_checks_axis_before_data_ptr(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 4, 5, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "Invalid axis: 5 out of range for 2D tensor");
}

static void test_repack_pack_checks_data_ptr_before_stride(void **state)
{
    strided_layout d = mk(DIMS(4, 5), I64(5, 1), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 4, 0, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The data pointer (4) must be aligned to the packed itemsize "
                 "(8).");
}

static void test_repack_pack_checks_stride_before_extent(void **state)
{
    strided_layout d = mk(DIMS(5, 0), I64(0, 3), 4), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 8, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 1 stride must be 1, got 3.");
}

static void test_repack_pack_checks_extent_before_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(5, 6), 4), out;
    strided_layout s = sliced(d, S_ALL, S_(1, 4, 1));

    (void)state;
    assert_error(strided_layout_repack(&s, 8, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 1 extent (3) must be divisible by 2.");
}

static void test_repack_pack_checks_slice_offset_before_strides(void **state)
{
    strided_layout d = mk(DIMS(3, 4), I64(5, 1), 4), out;
    strided_layout s = sliced(d, S_ALL, S_(1, 3, 1));

    (void)state;
    assert_error(strided_layout_repack(&s, 8, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The slice offset (1) must be divisible by 2.");
}

static void test_repack_unpack_invalid_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 4, 0, 9, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "Invalid axis: 9 out of range for 2D tensor");
}

static void test_repack_unpack_0d_fails(void **state)
{
    strided_layout d = mk_c(0, NULL, 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 4, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "Invalid axis: -1 out of range for 0D tensor");
}

static void test_repack_unpack_zero_itemsize_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 0, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "new itemsize must be greater than zero, got 0.");
}

static void test_repack_unpack_negative_itemsize_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, -4, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "new itemsize must be greater than zero, got -4.");
}

static void test_repack_unpack_itemsizes_not_divisible_fails(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 3, 0, -1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The itemsize (8) must be divisible by the new itemsize (3).");
}

static void test_repack_unpack_zero_extent_fails(void **state)
{
    strided_layout d = mk(DIMS(5, 0), I64(0, 1), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 4, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 1 extent must be non-zero, got 0.");
}

static void test_repack_unpack_axis_stride_not_one_fails(void **state)
{
    strided_layout d = mk(DIMS(4, 5), I64(5, 1), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 4, 0, 0, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 0 stride must be 1, got 5.");
}

static void test_repack_unpack_checks_axis_before_itemsize(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 0, 0, 9, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "Invalid axis: 9 out of range for 2D tensor");
}

static void test_repack_unpack_checks_divisibility_before_extent(void **state)
{
    strided_layout d = mk(DIMS(5, 0), I64(0, 1), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 3, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The itemsize (8) must be divisible by the new itemsize (3).");
}

static void test_repack_unpack_checks_extent_before_stride(void **state)
{
    strided_layout d = mk(DIMS(5, 0), I64(0, 7), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 4, 0, 1, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "repack",
                 "The axis 1 extent must be non-zero, got 0.");
}

/* Unpacking keeps byte values, so a valid layout never overflows; the
 * checks stay for layouts filled in by hand. */
static void test_repack_unpack_stride_overflow_fails(void **state)
{
    strided_layout d = raw(DIMS(2, 4), I64(P61, 1), 8), out;

    (void)state;
    assert_error(strided_layout_repack(&d, 1, 0, -1, true, &out),
                 STRIDED_ERR_OVERFLOW, "repack", NULL);
}

static void test_repack_unpack_extent_overflow_fails(void **state)
{
    strided_layout d = raw(DIMS(2, INT64_C(1) << 60), I64(INT64_C(1) << 60, 1), 8);
    strided_layout out;

    (void)state;
    assert_error(strided_layout_repack(&d, 1, 0, -1, true, &out),
                 STRIDED_ERR_OVERFLOW, "repack", NULL);
}

static void test_repack_unpack_slice_offset_overflow_fails(void **state)
{
    strided_layout s = raw(DIMS(1), I64(1), 8), out;

    (void)state;
    s.slice_offset = P61;
    assert_error(strided_layout_repack(&s, 1, 0, -1, true, &out),
                 STRIDED_ERR_OVERFLOW, "repack", NULL);
}

/* ---- slice (§5.9, §7.2 item 4) ------------------------------------------ */

static void test_slice_worked_example(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(d, s_from(1), S_REV);

    (void)state;
    assert_layout(s, "(4,3,7):(21,-7,1)+35", 1);
}

static void test_slice_no_indices_gives_explicit(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4), z = mk_implicit(0, NULL, 4);
    strided_layout a, b;

    (void)state;
    assert_ok(strided_layout_slice(&i, 0, NULL, &a));
    assert_ok(strided_layout_slice(&z, 0, NULL, &b));
    assert_layout(a, "(2,3):(3,1)", 4);
    assert_layout(b, "():()", 4);
}

static void test_slice_whole_axis(void **state)
{
    strided_layout d = mk_implicit(DIMS(12), 4);
    strided_layout s = sliced(d, S_ALL);

    (void)state;
    assert_layout(s, "(12,):(1,)", 4);
}

static void test_slice_reversed(void **state)
{
    strided_layout d = mk_c(DIMS(13), 4);
    strided_layout a = sliced(d, S_REV);
    strided_layout b = sliced(a, S_REV);
    strided_layout c = sliced(a, S_(1, -1, 1));
    strided_layout e = sliced(c, S_REV);

    (void)state;
    assert_layout(a, "(13,):(-1,)+12", 4);
    assert_layout(b, "(13,):(1,)", 4);
    assert_layout(c, "(11,):(-1,)+11", 4);
    assert_layout(e, "(11,):(1,)+1", 4);
}

static void test_slice_steps(void **state)
{
    strided_layout d = mk_c(DIMS(13), 4), s, t;

    (void)state;
    s = sliced(d, S_(2, -3, 1));
    assert_layout(s, "(8,):(1,)+2", 4);
    s = sliced(d, S_(2, -3, 2));
    assert_layout(s, "(4,):(2,)+2", 4);
    s = sliced(d, S_(-3, 2, -2));
    assert_layout(s, "(4,):(-2,)+10", 4);
    t = sliced(s, S_(1, 3, 1));
    assert_layout(t, "(2,):(-2,)+8", 4);
}

static void test_slice_2d_rows(void **state)
{
    strided_layout d = mk_c(DIMS(3, 5), 4);
    strided_layout a = sliced(d, s_to(2));
    strided_layout b = sliced(a, S_ALL, s_from(3));

    (void)state;
    assert_layout(b, "(2,2):(5,1)+3", 4);
}

static void test_slice_integers_remove_axes(void **state)
{
    strided_layout d = mk_c(DIMS(11, 12, 3), 4), s;

    (void)state;
    s = sliced(d, S_ALL, S_AT(0), s_to(-1));
    assert_layout(s, "(11,2):(36,1)", 4);
    s = sliced(d, S_AT(0), S_AT(1), s_to(-1));
    assert_layout(s, "(2,):(1,)+3", 4);
    s = sliced(d, S_AT(0), S_AT(1), S_AT(2));
    assert_layout(s, "():()+5", 4);
    s = sliced(d, S_AT(-2));
    assert_layout(s, "(12,3):(3,1)+324", 4);
}

static void test_slice_4d_rows(void **state)
{
    strided_layout d = mk_c(DIMS(11, 12, 3, 5), 4);
    strided_layout a = sliced(d, S_AT(0));
    strided_layout b = sliced(a, S_AT(1));
    strided_layout c = sliced(d, S_ALL, S_AT(1), s_to(-1));

    (void)state;
    assert_layout(b, "(3,5):(5,1)+15", 4);
    assert_layout(c, "(11,2,5):(180,5,1)+15", 4);
}

static void test_slice_clamps_like_python(void **state)
{
    strided_layout d = mk_c(DIMS(5), 4), s;

    (void)state;
    s = sliced(d, S_(-100, 100, 1));
    assert_layout(s, "(5,):(1,)", 4);
    s = sliced(d, S_(100, -100, -1));
    assert_layout(s, "(5,):(-1,)+4", 4);
    s = sliced(d, S_(INT64_MIN, INT64_MAX, 1));
    assert_layout(s, "(5,):(1,)", 4);
    s = sliced(d, S_(INT64_MAX, INT64_MIN, -1));
    assert_layout(s, "(5,):(-1,)+4", 4);
    s = sliced(d, s_any(false, 0, true, 1, -1));
    assert_layout(s, "(3,):(-1,)+4", 4);
    s = sliced(d, s_any(true, 3, false, 0, -2));
    assert_layout(s, "(2,):(-2,)+3", 4);
    s = sliced(d, strided_index_all(2));
    assert_layout(s, "(3,):(2,)", 4);
}

static void test_slice_huge_steps(void **state)
{
    strided_layout d = mk_c(DIMS(5), 4), s;

    (void)state;
    s = sliced(d, strided_index_all(7));
    assert_layout(s, "(1,):(7,)", 4);
    s = sliced(d, strided_index_all(INT64_MAX / 4));
    assert_layout(s, "(1,):(2305843009213693951,)", 4);
    strided_layout bytes = mk_c(DIMS(5), 1);
    s = sliced(bytes, S_(0, 5, INT64_MAX));
    assert_layout(s, "(1,):(9223372036854775807,)", 1);
    /* A stride whose byte value overflows is refused, even on an axis of
     * one element (strides in bytes must stay representable). */
    fill_sentinel(&s, sizeof s);
    assert_error(strided_layout_slice(&d, 1, IDX(strided_index_all(INT64_MAX)), &s),
                 STRIDED_ERR_OVERFLOW, "slice", NULL);
    assert_untouched(&s, sizeof s);
}

static void test_slice_int64_min_step(void **state)
{
    /* Python clamps a step below -PY_SSIZE_T_MAX; either stride is fine,
     * what matters is one element at the end and no undefined behaviour. */
    strided_layout d = mk_c(DIMS(5), 1);
    strided_layout s = sliced(d, strided_index_all(INT64_MIN));

    (void)state;
    assert_int_equal(s.ndim, 1);
    assert_i64(s.shape[0], 1);
    assert_i64(s.slice_offset, 4);
    assert_true(s.strides[0] == INT64_MIN || s.strides[0] == -INT64_MAX);
}

static void test_slice_largest_extent(void **state)
{
    strided_layout d = mk_c(DIMS(INT64_MAX), 1), s;

    (void)state;
    s = sliced(d, S_AT(-1));
    assert_layout(s, "():()+9223372036854775806", 1);
    s = sliced(d, S_(0, INT64_MAX, INT64_MAX));
    assert_layout(s, "(1,):(9223372036854775807,)", 1);
    s = sliced(d, S_REV);
    assert_layout(s, "(9223372036854775807,):(-1,)+9223372036854775806", 1);
    s = sliced(d, strided_index_all(2));
    assert_layout(s, "(4611686018427387904,):(2,)", 1);
}

static void test_slice_empty_has_zero_strides(void **state)
{
    strided_layout d = mk_c(DIMS(3, 5), 4);
    strided_layout s = sliced(d, S_(5, 4, 1));

    (void)state;
    assert_layout(s, "(0,5):(0,0)", 4);
}

static void test_slice_empty_still_adds_integer_offsets(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4, 5), 4);
    strided_layout s = sliced(d, S_(1, 1, 1), S_AT(2));
    strided_layout t = mk_c(DIMS(3, 4), 1);
    strided_layout u = sliced(t, S_AT(1), S_(2, 2, 1));

    (void)state;
    assert_layout(s, "(0,5):(0,0)+10", 4);
    assert_layout(u, "(0,):(0,)+4", 1);
}

static void test_slice_empty_input(void **state)
{
    strided_layout e = mk(DIMS(0, 3), I64(3, 1), 4);
    strided_layout s = sliced(e, S_ALL, s_from(1));

    (void)state;
    /* The non-empty slice of axis 1 still adds its start offset (§5.9). */
    assert_layout(s, "(0,2):(0,0)+1", 4);
}

static void test_slice_64_dims_reversed(void **state)
{
    int64_t shape[64];
    strided_index idx[64];
    strided_layout d, s;
    int64_t lo, hi;
    int k;

    (void)state;
    long_shape(shape);
    for (k = 0; k < 64; k++)
        idx[k] = S_REV;
    d = mk_c(64, shape, 2);
    assert_ok(strided_layout_slice(&d, 64, idx, &s));
    assert_i64(s.slice_offset, 719);
    for (k = 0; k < 64; k++)
        assert_i64(s.strides[k], -d.strides[k]);
    strided_layout_offset_bounds(&s, &lo, &hi);
    assert_i64(lo, 0);
    assert_i64(hi, 719);
}

static void test_slice_too_many_indices_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 5), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, NIDX(S_ALL, s_to(-1), s_to(2)),
                                      IDX(S_ALL, s_to(-1), s_to(2)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "The number of slices (3) is greater than the number of "
                 "dimensions (2).");
}

static void test_slice_index_into_0d_fails(void **state)
{
    strided_layout d = mk_c(0, NULL, 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(S_AT(0)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "The number of slices (1) is greater than the number of "
                 "dimensions (0).");
}

static void test_slice_zero_step_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 5), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 2, IDX(S_ALL, strided_index_all(0)),
                                      &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "slice step cannot be zero");
}

static void test_slice_zero_step_with_bounds_fails(void **state)
{
    strided_layout d = mk_c(DIMS(3, 5), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(S_(0, 2, 0)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "slice step cannot be zero");
}

static void test_slice_index_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(11, 12, 3), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 3, IDX(S_AT(0), S_AT(1), S_AT(5)),
                                      &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "Invalid index: 5 out of range for axis 2 with extent 3");
}

static void test_slice_negative_index_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(11, 12, 3), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(S_AT(-42)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "Invalid index: -42 out of range for axis 0 with extent 11");
}

static void test_slice_index_into_empty_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(0, 3), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(S_AT(0)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "Invalid index: 0 out of range for axis 0 with extent 0");
}

static void test_slice_int64_min_index_fails(void **state)
{
    strided_layout d = mk_c(DIMS(11), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(S_AT(INT64_MIN)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "Invalid index: -9223372036854775808 out of range for axis 0 "
                 "with extent 11");
}

static void test_slice_int64_max_index_fails(void **state)
{
    strided_layout d = mk_c(DIMS(11), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(S_AT(INT64_MAX)), &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice",
                 "Invalid index: 9223372036854775807 out of range for axis 0 "
                 "with extent 11");
}

static void test_slice_unknown_index_kind_fails(void **state)
{
    strided_layout d = mk_c(DIMS(11), 4), out;
    strided_index x = S_AT(0);

    (void)state;
    x.kind = (strided_index_kind)7;
    assert_error(strided_layout_slice(&d, 1, &x, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "slice", NULL);
}

static void test_slice_stride_times_step_overflow_fails(void **state)
{
    strided_layout d = mk(DIMS(5), I64(2), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(strided_index_all(INT64_MAX)),
                                      &out),
                 STRIDED_ERR_OVERFLOW, "slice", NULL);
}

static void test_slice_big_stride_times_step_overflow_fails(void **state)
{
    strided_layout d = raw(DIMS(3), I64(P61), 4), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 1, IDX(strided_index_all(4)), &out),
                 STRIDED_ERR_OVERFLOW, "slice", NULL);
}

static void test_slice_reversing_int64_min_stride_fails(void **state)
{
    /* Filled in by hand: no function makes an INT64_MIN stride. */
    strided_layout s = raw(DIMS(1), I64(INT64_MIN), 4), out;

    (void)state;
    s.slice_offset = INT64_MIN;
    assert_error(strided_layout_slice(&s, 1, IDX(S_REV), &out),
                 STRIDED_ERR_OVERFLOW, "slice", NULL);
}

static void test_slice_offset_overflow_fails(void **state)
{
    /* An empty layout's offsets are unchecked; an integer index still adds
     * 2 * INT64_MAX to the offset. */
    strided_layout d = mk(DIMS(0, 3), I64(0, INT64_MAX), 1), out;

    (void)state;
    assert_error(strided_layout_slice(&d, 2, IDX(S_ALL, S_AT(2)), &out),
                 STRIDED_ERR_OVERFLOW, "slice", NULL);
}

/* ---- to_dense (§3.3, §7.2 item 12) -------------------------------------- */

static void assert_dense_result(const strided_layout *l)
{
    int64_t lo, hi, size = -1;
    int64_t vol = strided_layout_volume(l);

    assert_true(strided_layout_is_dense(l));
    assert_ok(strided_layout_required_size_in_bytes(l, &size));
    assert_i64(size, vol * l->itemsize);
    strided_layout_offset_bounds(l, &lo, &hi);
    assert_i64(lo, 0);
    assert_i64(hi, vol - 1);
}

static void test_to_dense_docstring_example(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 1);
    strided_layout p = permuted(d, 2, 0, 1);
    strided_layout k = to_dense(p, STRIDED_ORDER_KEEP);
    strided_layout c = to_dense(p, STRIDED_ORDER_C);
    strided_layout f = to_dense(p, STRIDED_ORDER_F);

    (void)state;
    assert_layout(p, "(7,5,3):(1,21,7)", 1);
    assert_layout_eq(k, p);
    assert_layout(c, "(7,5,3):(15,3,1)", 1);
    assert_layout(f, "(7,5,3):(1,7,35)", 1);
    assert_dense_result(&k);
    assert_dense_result(&c);
    assert_dense_result(&f);
}

static void test_to_dense_keep_of_sliced(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(d, s_from(1), S_REV);
    strided_layout k = to_dense(s, STRIDED_ORDER_KEEP);

    (void)state;
    assert_layout(k, "(4,3,7):(21,7,1)", 1);
    assert_dense_result(&k);
}

static void test_to_dense_keep_of_broadcast(void **state)
{
    strided_layout b = mk(DIMS(4, 3), I64(0, 1), 2);
    strided_layout k = to_dense(b, STRIDED_ORDER_KEEP);

    (void)state;
    assert_layout(k, "(4,3):(1,4)", 2);
    assert_dense_result(&k);
}

static void test_to_dense_keeps_implicit_strides_when_a_no_op(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4);
    strided_layout u = mk_implicit(DIMS(1, 5), 4);
    strided_layout z = mk_implicit(0, NULL, 4);
    strided_layout k = to_dense(i, STRIDED_ORDER_KEEP);
    strided_layout c = to_dense(i, STRIDED_ORDER_C);
    strided_layout f = to_dense(u, STRIDED_ORDER_F);
    strided_layout k0 = to_dense(z, STRIDED_ORDER_KEEP);

    (void)state;
    assert_layout_implicit(k, "(2,3):(3,1)", 4);
    assert_layout_implicit(c, "(2,3):(3,1)", 4);
    assert_layout_implicit(f, "(1,5):(5,1)", 4);
    assert_layout_implicit(k0, "():()", 4);
}

static void test_to_dense_rebuilds_when_not_a_no_op(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4);
    strided_layout f = to_dense(i, STRIDED_ORDER_F);
    strided_layout d = mk_c(DIMS(5, 3), 4);
    strided_layout rows = sliced(d, s_from(1));
    strided_layout c = to_dense(rows, STRIDED_ORDER_C);
    strided_layout k = to_dense(rows, STRIDED_ORDER_KEEP);

    (void)state;
    assert_layout(f, "(2,3):(1,2)", 4);
    assert_layout(c, "(4,3):(3,1)", 4);
    assert_layout(k, "(4,3):(3,1)", 4);
}

static void test_to_dense_perm_always_builds(void **state)
{
    strided_layout i = mk_implicit(DIMS(2, 3), 4);
    strided_layout a = to_dense_perm(i, 0, 1);
    strided_layout b = to_dense_perm(i, 1, 0);
    strided_layout c = to_dense_perm(i, -1, -2);

    (void)state;
    assert_layout(a, "(2,3):(3,1)", 4);
    assert_layout(b, "(2,3):(1,2)", 4);
    assert_layout(c, "(2,3):(1,2)", 4);
}

static void test_to_dense_of_empty_is_unchanged(void **state)
{
    strided_layout e = mk(DIMS(0, 3), I64(3, 1), 4);
    strided_layout k = to_dense(e, STRIDED_ORDER_KEEP);
    strided_layout c = to_dense(e, STRIDED_ORDER_C);
    strided_layout f = to_dense(e, STRIDED_ORDER_F);
    strided_layout p = to_dense_perm(e, 1, 0);

    (void)state;
    assert_layout(k, "(0,3):(3,1)", 4);
    assert_layout(c, "(0,3):(3,1)", 4);
    assert_layout(f, "(0,3):(3,1)", 4);
    assert_layout(p, "(0,3):(0,0)", 4);
}

static void test_to_dense_upstream_specs(void **state)
{
    strided_layout d7 = mk_c(DIMS(7), 2), d = mk_c(DIMS(5, 11), 2), s, r;
    strided_layout q = mk_c(DIMS(3, 5, 7), 2), p;

    (void)state;
    s = sliced(d7, S_(3, 6, 1));
    r = to_dense(s, STRIDED_ORDER_KEEP);
    assert_layout(r, "(3,):(1,)", 2);
    s = sliced(d7, S_REV);
    r = to_dense(s, STRIDED_ORDER_KEEP);
    assert_layout(r, "(7,):(1,)", 2);
    s = sliced(d, S_(1, -1, 1));
    r = to_dense(s, STRIDED_ORDER_C);
    assert_layout(r, "(3,11):(11,1)", 2);
    s = sliced(d, S_REV, S_(3, 10, 1));
    r = to_dense(s, STRIDED_ORDER_KEEP);
    assert_layout(r, "(5,7):(7,1)", 2);
    r = to_dense(s, STRIDED_ORDER_F);
    assert_layout(r, "(5,7):(1,5)", 2);
    s = sliced(d, s_from(-1));
    r = to_dense(s, STRIDED_ORDER_KEEP);
    assert_layout(r, "(1,11):(11,1)", 2);
    p = permuted(q, 1, 0, 2);
    r = to_dense(p, STRIDED_ORDER_KEEP);
    assert_layout_eq(r, p);
    r = to_dense(p, STRIDED_ORDER_C);
    assert_layout(r, "(5,3,7):(21,7,1)", 2);
    r = to_dense(p, STRIDED_ORDER_F);
    assert_layout(r, "(5,3,7):(1,5,15)", 2);
    r = to_dense_perm(p, 2, 0, 1);
    assert_layout(r, "(5,3,7):(3,1,15)", 2);
}

static void test_to_dense_int64_min_stride(void **state)
{
    /* Filled in by hand: no function makes an INT64_MIN stride. */
    strided_layout l = raw(DIMS(2, 2), I64(INT64_MIN, 1), 8);
    strided_layout k = to_dense(l, STRIDED_ORDER_KEEP);

    (void)state;
    assert_layout(k, "(2,2):(2,1)", 8);
}

static void test_to_dense_unknown_order_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_to_dense(&d, (strided_order)9, 0, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "must be 'K', 'C', 'F', or a permutation");
}

static void test_to_dense_perm_length_mismatch_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_to_dense(&d, STRIDED_ORDER_PERM, AXES(0, 1, 2),
                                         &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "stride_order must have the same length as shape. Shape has 2 "
                 "dimensions, but stride_order has 3 elements.");
}

static void test_to_dense_perm_axis_out_of_range_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_to_dense(&d, STRIDED_ORDER_PERM, AXES(0, 2),
                                         &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "Invalid stride order: axis 2 out of range for 2D tensor");
}

static void test_to_dense_perm_repeated_axis_fails(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4), out;

    (void)state;
    assert_error(strided_layout_to_dense(&d, STRIDED_ORDER_PERM, AXES(1, 1),
                                         &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "dense",
                 "The stride order must be a permutation. Axis 1 appears "
                 "multiple times.");
}

/* ---- coalesce (layout.h) ------------------------------------------------ */

static void test_coalesce_dense(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3, 4), 4), i = mk_implicit(DIMS(2, 3, 4), 4);
    strided_layout a = coalesced(d), b = coalesced(i);

    (void)state;
    assert_layout(a, "(24,):(1,)", 4);
    assert_layout(b, "(24,):(1,)", 4);
}

static void test_coalesce_drops_unit_axes(void **state)
{
    strided_layout l = mk(DIMS(3, 1, 4), I64(4, 12, 1), 4);
    strided_layout m = mk(DIMS(1, 3, 1, 5, 1), I64(99, 2, -7, 9, 0), 4);
    strided_layout a = coalesced(l), b = coalesced(m);

    (void)state;
    assert_layout(a, "(12,):(1,)", 4);
    assert_layout(b, "(3,5):(2,9)", 4);
}

static void test_coalesce_negative_strides(void **state)
{
    strided_layout l = mk(DIMS(2, 3), I64(-3, -1), 4);
    strided_layout a = coalesced(l);

    (void)state;
    assert_layout(a, "(6,):(-1,)", 4);
}

static void test_coalesce_without_merges(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 1);
    strided_layout s = sliced(d, s_from(1), S_REV);
    strided_layout t = mk(DIMS(3, 2), I64(1, 3), 1);
    strided_layout f = mk_f(DIMS(2, 3), 1);
    strided_layout b = mk(DIMS(4, 3), I64(0, 1), 1);
    strided_layout a;

    (void)state;
    a = coalesced(s);
    assert_layout(a, "(4,3,7):(21,-7,1)+35", 1);
    a = coalesced(t);
    assert_layout(a, "(3,2):(1,3)", 1);
    a = coalesced(f);
    assert_layout(a, "(2,3):(1,2)", 1);
    a = coalesced(b);
    assert_layout(a, "(4,3):(0,1)", 1);
}

static void test_coalesce_zero_strides_merge(void **state)
{
    strided_layout b = mk(DIMS(4, 3), I64(0, 0), 1);
    strided_layout a = coalesced(b);

    (void)state;
    assert_layout(a, "(12,):(0,)", 1);
}

static void test_coalesce_empty(void **state)
{
    strided_layout d = mk_c(DIMS(2, 0, 3), 1);
    strided_layout e = mk(DIMS(0, 3), I64(3, 1), 1);
    strided_layout a = coalesced(d), b = coalesced(e);

    (void)state;
    assert_true(strided_layout_is_contiguous_c(&a));
    assert_int_equal(a.ndim, 1);
    assert_i64(a.shape[0], 0);
    assert_i64(a.strides[0], 0);
    assert_false(a.implicit_strides);
    assert_int_equal(b.ndim, 1);
    assert_i64(b.shape[0], 0);
    assert_i64(b.strides[0], 0);
}

static void test_coalesce_one_element_is_0d(void **state)
{
    strided_layout o = mk(DIMS(1, 1), I64(5, 7), 2);
    strided_layout z = mk_implicit(0, NULL, 2);
    strided_layout a = coalesced(o), b = coalesced(z);

    (void)state;
    assert_layout(a, "():()", 2);
    assert_layout(b, "():()", 2);
}

static void test_coalesce_keeps_slice_offset(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3), 8);
    strided_layout s = sliced(d, s_from(1));
    strided_layout a = coalesced(s);
    strided_layout e = sliced(d, S_AT(1), S_AT(2));
    strided_layout b = coalesced(e);

    (void)state;
    assert_layout(a, "(12,):(1,)+3", 8);
    assert_layout(b, "():()+5", 8);
}

static void test_coalesce_does_not_overflow(void **state)
{
    /* Merging would need 2 * 2^62; coalesce cannot fail, so it keeps both
     * axes. */
    strided_layout l = mk(DIMS(2, 2), I64(1, P62), 1);
    strided_layout a = coalesced(l);

    (void)state;
    assert_layout(a, "(2,2):(1,4611686018427387904)", 1);
}

static void test_coalesce_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout d, a;

    (void)state;
    long_shape(shape);
    d = mk_c(64, shape, 2);
    a = coalesced(d);
    assert_layout(a, "(720,):(1,)", 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reshape_docstring_examples),
        cmocka_unit_test(test_reshape_docstring_incompatible_fails),
        cmocka_unit_test(test_reshape_column_major_incompatible_fails),
        cmocka_unit_test(test_reshape_unit_axis_fix),
        cmocka_unit_test(test_reshape_unit_axis_fix_column_major),
        cmocka_unit_test(test_reshape_incompatible_message_shows_layouts),
        cmocka_unit_test(test_reshape_to_0d_volume_mismatch_fails),
        cmocka_unit_test(test_reshape_inferred_extent),
        cmocka_unit_test(test_reshape_upstream_split_rows),
        cmocka_unit_test(test_reshape_implicit_gives_explicit),
        cmocka_unit_test(test_reshape_keeps_slice_offset),
        cmocka_unit_test(test_reshape_negative_strides),
        cmocka_unit_test(test_reshape_negative_strides_incompatible_fails),
        cmocka_unit_test(test_reshape_permuted_rows),
        cmocka_unit_test(test_reshape_permuted_incompatible_fails),
        cmocka_unit_test(test_reshape_sliced_rows),
        cmocka_unit_test(test_reshape_unit_axes_of_the_new_shape),
        cmocka_unit_test(test_reshape_0d),
        cmocka_unit_test(test_reshape_empty_has_zero_strides),
        cmocka_unit_test(test_reshape_empty_with_odd_strides),
        cmocka_unit_test(test_reshape_empty_keeps_slice_offset),
        cmocka_unit_test(test_reshape_64_dims),
        cmocka_unit_test(test_reshape_65_dims_fails),
        cmocka_unit_test(test_reshape_negative_extent_fails),
        cmocka_unit_test(test_reshape_negative_extent_first_fails),
        cmocka_unit_test(test_reshape_negative_extent_before_second_minus_one),
        cmocka_unit_test(test_reshape_negative_extent_after_minus_one),
        cmocka_unit_test(test_reshape_two_negative_extents),
        cmocka_unit_test(test_reshape_second_minus_one_fails),
        cmocka_unit_test(test_reshape_minus_one_then_negative_extent),
        cmocka_unit_test(test_reshape_volume_mismatch_fails),
        cmocka_unit_test(test_reshape_volume_mismatch_from_empty_fails),
        cmocka_unit_test(test_reshape_volume_mismatch_to_empty_fails),
        cmocka_unit_test(test_reshape_volume_mismatch_of_sliced_fails),
        cmocka_unit_test(test_reshape_ambiguous_minus_one_fails),
        cmocka_unit_test(test_reshape_ambiguous_minus_one_of_empty_fails),
        cmocka_unit_test(test_reshape_indivisible_minus_one_fails),
        cmocka_unit_test(test_reshape_new_volume_overflow_fails),
        cmocka_unit_test(test_reshape_new_volume_overflow_with_minus_one_fails),
        cmocka_unit_test(test_reshape_unit_axis_stride_overflow_fails),
        cmocka_unit_test(test_reshape_largest_volume),
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_permute_negative_axes),
        cmocka_unit_test(test_permute_identity_gives_explicit),
        cmocka_unit_test(test_permute_0d),
        cmocka_unit_test(test_permute_keeps_slice_offset),
        cmocka_unit_test(test_permute_64_dims),
        cmocka_unit_test(test_permute_too_many_axes_for_0d_fails),
        cmocka_unit_test(test_permute_too_many_axes_fails),
        cmocka_unit_test(test_permute_too_few_axes_fails),
        cmocka_unit_test(test_permute_negative_count_fails),
        cmocka_unit_test(test_permute_repeated_axis_fails),
        cmocka_unit_test(test_permute_repeated_axis_prints_original_value),
        cmocka_unit_test(test_permute_axis_out_of_range_fails),
        cmocka_unit_test(test_permute_negative_axis_out_of_range_fails),
        cmocka_unit_test(test_flatten_0d),
        cmocka_unit_test(test_flatten_1d),
        cmocka_unit_test(test_flatten_dense_with_unit_axis),
        cmocka_unit_test(test_flatten_empty),
        cmocka_unit_test(test_flatten_negative_step_row),
        cmocka_unit_test(test_flatten_axis_ranges),
        cmocka_unit_test(test_flatten_reversed_middle_axis),
        cmocka_unit_test(test_flatten_two_reversed_axes),
        cmocka_unit_test(test_flatten_permuted_rows),
        cmocka_unit_test(test_flatten_64_dims),
        cmocka_unit_test(test_flatten_unit_axis_rule),
        cmocka_unit_test(test_flatten_all_unit_group_takes_innermost_stride),
        cmocka_unit_test(test_flatten_invariants),
        cmocka_unit_test(test_flatten_mask_ignores_bit_zero_and_high_bits),
        cmocka_unit_test(test_flatten_together),
        cmocka_unit_test(test_flatten_together_upstream_row),
        cmocka_unit_test(test_flatten_start_after_end_fails),
        cmocka_unit_test(test_flatten_keeps_itemsize_and_slice_offset),
        cmocka_unit_test(test_flatten_start_axis_out_of_range_fails),
        cmocka_unit_test(test_flatten_end_axis_out_of_range_fails),
        cmocka_unit_test(test_flatten_0d_axis_range_fails),
        cmocka_unit_test(test_flatten_overflow_fails),
        cmocka_unit_test(test_squeeze),
        cmocka_unit_test(test_squeeze_keeps_slice_offset),
        cmocka_unit_test(test_squeeze_0d_and_all_ones),
        cmocka_unit_test(test_squeeze_empty),
        cmocka_unit_test(test_squeeze_without_unit_axes_gives_explicit),
        cmocka_unit_test(test_squeeze_64_dims),
        cmocka_unit_test(test_unsqueeze_docstring_examples),
        cmocka_unit_test(test_unsqueeze_axes_in_any_order),
        cmocka_unit_test(test_unsqueeze_trailing_axis_takes_last_stride),
        cmocka_unit_test(test_unsqueeze_0d),
        cmocka_unit_test(test_unsqueeze_no_axes_keeps_implicit_strides),
        cmocka_unit_test(test_unsqueeze_implicit_gives_explicit),
        cmocka_unit_test(test_unsqueeze_keeps_slice_offset),
        cmocka_unit_test(test_unsqueeze_to_64_dims),
        cmocka_unit_test(test_unsqueeze_axis_out_of_range_fails),
        cmocka_unit_test(test_unsqueeze_negative_axis_out_of_range_fails),
        cmocka_unit_test(test_unsqueeze_repeated_axis_fails),
        cmocka_unit_test(test_unsqueeze_repeated_normalized_axis_fails),
        cmocka_unit_test(test_unsqueeze_65_dims_fails),
        cmocka_unit_test(test_unsqueeze_checks_ndim_before_axes),
        cmocka_unit_test(test_unsqueeze_stride_overflow_fails),
        cmocka_unit_test(test_broadcast_0d),
        cmocka_unit_test(test_broadcast_unit_axis),
        cmocka_unit_test(test_broadcast_new_leading_axes),
        cmocka_unit_test(test_broadcast_keeps_slice_offset),
        cmocka_unit_test(test_broadcast_unit_axis_to_zero),
        cmocka_unit_test(test_broadcast_implicit_gives_explicit),
        cmocka_unit_test(test_broadcast_uniqueness),
        cmocka_unit_test(test_broadcast_to_64_dims),
        cmocka_unit_test(test_broadcast_fewer_dims_fails),
        cmocka_unit_test(test_broadcast_incompatible_extent_fails),
        cmocka_unit_test(test_broadcast_negative_extent_fails),
        cmocka_unit_test(test_broadcast_checks_extents_before_ndim),
        cmocka_unit_test(test_broadcast_65_dims_fails),
        cmocka_unit_test(test_broadcast_volume_overflow_fails),
        cmocka_unit_test(test_repack_docstring_examples),
        cmocka_unit_test(test_repack_keep_dim_false_keeps_non_unit_axis),
        cmocka_unit_test(test_repack_same_itemsize_is_a_copy),
        cmocka_unit_test(test_repack_implicit_gives_explicit),
        cmocka_unit_test(test_repack_pack_then_unpack_restores),
        cmocka_unit_test(test_repack_upstream_row),
        cmocka_unit_test(test_repack_64_dims),
        cmocka_unit_test(test_repack_unpack),
        cmocka_unit_test(test_repack_non_power_of_two_itemsizes),
        cmocka_unit_test(test_repack_aligned_data_ptr),
        cmocka_unit_test(test_repack_pack_invalid_axis_fails),
        cmocka_unit_test(test_repack_pack_0d_fails),
        cmocka_unit_test(test_repack_pack_unaligned_data_ptr_fails),
        cmocka_unit_test(test_repack_pack_axis_stride_not_one_fails),
        cmocka_unit_test(test_repack_pack_prints_normalized_axis),
        cmocka_unit_test(test_repack_pack_zero_extent_fails),
        cmocka_unit_test(test_repack_pack_extent_not_divisible_fails),
        cmocka_unit_test(test_repack_pack_slice_offset_not_divisible_fails),
        cmocka_unit_test(test_repack_pack_other_stride_not_divisible_fails),
        cmocka_unit_test(test_repack_pack_itemsizes_not_divisible_fails),
        cmocka_unit_test(test_repack_pack_checks_divisibility_before_axis),
        cmocka_unit_test(test_repack_pack_checks_axis_before_data_ptr),
        cmocka_unit_test(test_repack_pack_checks_data_ptr_before_stride),
        cmocka_unit_test(test_repack_pack_checks_stride_before_extent),
        cmocka_unit_test(test_repack_pack_checks_extent_before_slice_offset),
        cmocka_unit_test(test_repack_pack_checks_slice_offset_before_strides),
        cmocka_unit_test(test_repack_unpack_invalid_axis_fails),
        cmocka_unit_test(test_repack_unpack_0d_fails),
        cmocka_unit_test(test_repack_unpack_zero_itemsize_fails),
        cmocka_unit_test(test_repack_unpack_negative_itemsize_fails),
        cmocka_unit_test(test_repack_unpack_itemsizes_not_divisible_fails),
        cmocka_unit_test(test_repack_unpack_zero_extent_fails),
        cmocka_unit_test(test_repack_unpack_axis_stride_not_one_fails),
        cmocka_unit_test(test_repack_unpack_checks_axis_before_itemsize),
        cmocka_unit_test(test_repack_unpack_checks_divisibility_before_extent),
        cmocka_unit_test(test_repack_unpack_checks_extent_before_stride),
        cmocka_unit_test(test_repack_unpack_stride_overflow_fails),
        cmocka_unit_test(test_repack_unpack_extent_overflow_fails),
        cmocka_unit_test(test_repack_unpack_slice_offset_overflow_fails),
        cmocka_unit_test(test_slice_worked_example),
        cmocka_unit_test(test_slice_no_indices_gives_explicit),
        cmocka_unit_test(test_slice_whole_axis),
        cmocka_unit_test(test_slice_reversed),
        cmocka_unit_test(test_slice_steps),
        cmocka_unit_test(test_slice_2d_rows),
        cmocka_unit_test(test_slice_integers_remove_axes),
        cmocka_unit_test(test_slice_4d_rows),
        cmocka_unit_test(test_slice_clamps_like_python),
        cmocka_unit_test(test_slice_huge_steps),
        cmocka_unit_test(test_slice_int64_min_step),
        cmocka_unit_test(test_slice_largest_extent),
        cmocka_unit_test(test_slice_empty_has_zero_strides),
        cmocka_unit_test(test_slice_empty_still_adds_integer_offsets),
        cmocka_unit_test(test_slice_empty_input),
        cmocka_unit_test(test_slice_64_dims_reversed),
        cmocka_unit_test(test_slice_too_many_indices_fails),
        cmocka_unit_test(test_slice_index_into_0d_fails),
        cmocka_unit_test(test_slice_zero_step_fails),
        cmocka_unit_test(test_slice_zero_step_with_bounds_fails),
        cmocka_unit_test(test_slice_index_out_of_range_fails),
        cmocka_unit_test(test_slice_negative_index_out_of_range_fails),
        cmocka_unit_test(test_slice_index_into_empty_axis_fails),
        cmocka_unit_test(test_slice_int64_min_index_fails),
        cmocka_unit_test(test_slice_int64_max_index_fails),
        cmocka_unit_test(test_slice_unknown_index_kind_fails),
        cmocka_unit_test(test_slice_stride_times_step_overflow_fails),
        cmocka_unit_test(test_slice_big_stride_times_step_overflow_fails),
        cmocka_unit_test(test_slice_reversing_int64_min_stride_fails),
        cmocka_unit_test(test_slice_offset_overflow_fails),
        cmocka_unit_test(test_to_dense_docstring_example),
        cmocka_unit_test(test_to_dense_keep_of_sliced),
        cmocka_unit_test(test_to_dense_keep_of_broadcast),
        cmocka_unit_test(test_to_dense_keeps_implicit_strides_when_a_no_op),
        cmocka_unit_test(test_to_dense_rebuilds_when_not_a_no_op),
        cmocka_unit_test(test_to_dense_perm_always_builds),
        cmocka_unit_test(test_to_dense_of_empty_is_unchanged),
        cmocka_unit_test(test_to_dense_upstream_specs),
        cmocka_unit_test(test_to_dense_int64_min_stride),
        cmocka_unit_test(test_to_dense_unknown_order_fails),
        cmocka_unit_test(test_to_dense_perm_length_mismatch_fails),
        cmocka_unit_test(test_to_dense_perm_axis_out_of_range_fails),
        cmocka_unit_test(test_to_dense_perm_repeated_axis_fails),
        cmocka_unit_test(test_coalesce_dense),
        cmocka_unit_test(test_coalesce_drops_unit_axes),
        cmocka_unit_test(test_coalesce_negative_strides),
        cmocka_unit_test(test_coalesce_without_merges),
        cmocka_unit_test(test_coalesce_zero_strides_merge),
        cmocka_unit_test(test_coalesce_empty),
        cmocka_unit_test(test_coalesce_one_element_is_0d),
        cmocka_unit_test(test_coalesce_keeps_slice_offset),
        cmocka_unit_test(test_coalesce_does_not_overflow),
        cmocka_unit_test(test_coalesce_64_dims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
