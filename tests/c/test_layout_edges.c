/*
 * Tests of strided/layout.h, part 3: the contract every manipulation shares.
 *  - An output may alias the input: each call with out == input gives the
 *    same layout as the out-of-place call (layout.h "Operations").
 *  - A failing call leaves its output untouched, byte for byte, also when
 *    the output is the input.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

/* Run CALL twice, with IN/OUT naming the input and output: once out of place
 * and once with OUT == IN, and check that both results are the same layout
 * (equal, and with the same text). */
#define CHECK_ALIAS(layout, CALL)                                          \
    do {                                                                   \
        strided_layout src_ = (layout), apart_, same_ = src_;              \
        char ta_[2048], tb_[2048];                                         \
        {                                                                  \
            const strided_layout *IN = &src_;                              \
            strided_layout *OUT = &apart_;                                 \
            assert_ok(CALL);                                               \
        }                                                                  \
        {                                                                  \
            const strided_layout *IN = &same_;                             \
            strided_layout *OUT = &same_;                                  \
            assert_ok(CALL);                                               \
        }                                                                  \
        layout_text(&apart_, ta_, sizeof ta_);                             \
        layout_text(&same_, tb_, sizeof tb_);                              \
        assert_string_equal(tb_, ta_);                                     \
        assert_layout_eq(same_, apart_);                                   \
        assert_int_equal(same_.itemsize, apart_.itemsize);                 \
        assert_int_equal(same_.implicit_strides, apart_.implicit_strides); \
    } while (0)

/* A few inputs whose in-place updates go wrong if an implementation writes
 * *out before it has read everything from the input. */
static strided_layout sliced_3d(void)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 2);
    return sliced(d, s_from(1), S_REV); /* (4,3,7):(21,-7,1)+35 */
}

static strided_layout reversed_10(void)
{
    strided_layout d = mk_c(DIMS(10, 10, 10), 1);
    return sliced(d, S_REV, S_REV, S_ALL);
}

static void long_shape(int64_t shape[64])
{
    SHAPE64(shape, 3, 2, 17, 3, 30, 4, 45, 5, 63, 6);
}

static void test_alias_reshape(void **state)
{
    strided_layout d = mk_c(DIMS(1, 3, 4), 2);
    strided_layout p = permuted(d, 1, 0, 2);
    strided_layout t = mk_c(DIMS(12), 4);
    int64_t shape[64];
    strided_layout l;

    (void)state;
    long_shape(shape);
    l = mk_c(64, shape, 2);
    CHECK_ALIAS(reversed_10(), strided_layout_reshape(IN, DIMS(100, 10), OUT));
    CHECK_ALIAS(reversed_10(), strided_layout_reshape(IN, DIMS(10, 10, 10), OUT));
    CHECK_ALIAS(p, strided_layout_reshape(IN, DIMS(12), OUT));
    CHECK_ALIAS(t, strided_layout_reshape(IN, DIMS(2, 3, 2), OUT));
    CHECK_ALIAS(t, strided_layout_reshape(IN, DIMS(1, 12, 1), OUT));
    CHECK_ALIAS(l, strided_layout_reshape(IN, DIMS(60, -1), OUT));
    t = mk_c(DIMS(720), 4);
    CHECK_ALIAS(t, strided_layout_reshape(IN, 64, shape, OUT));
}

static void test_alias_permute(void **state)
{
    int64_t shape[64];
    int axes[64];
    strided_layout l;
    int k;

    (void)state;
    long_shape(shape);
    for (k = 0; k < 64; k++)
        axes[k] = (k * 5 + 3) % 64;
    l = mk_c(64, shape, 2);
    CHECK_ALIAS(sliced_3d(), strided_layout_permute(IN, AXES(2, 0, 1), OUT));
    CHECK_ALIAS(sliced_3d(), strided_layout_permute(IN, AXES(1, 2, 0), OUT));
    CHECK_ALIAS(l, strided_layout_permute(IN, 64, axes, OUT));
}

static void test_alias_flatten(void **state)
{
    strided_layout d = mk_c(DIMS(5, 1, 2, 4, 3), 8);
    strided_layout s = sliced(d, S_ALL, S_ALL, S_ALL, S_ALL, strided_index_all(-2));
    strided_layout z = mk_implicit(0, NULL, 4);

    (void)state;
    CHECK_ALIAS(s, strided_layout_flatten(IN, 0, -1, OUT));
    CHECK_ALIAS(s, strided_layout_flatten(IN, 1, 3, OUT));
    CHECK_ALIAS(z, strided_layout_flatten(IN, 0, -1, OUT));
    CHECK_ALIAS(sliced_3d(), strided_layout_flatten(IN, 0, -1, OUT));
}

static void test_alias_flatten_mask(void **state)
{
    strided_layout d = mk_c(DIMS(5, 1, 2, 4, 3), 8);
    strided_layout s = sliced(d, S_ALL, S_ALL, S_ALL, S_ALL, strided_index_all(-2));

    (void)state;
    CHECK_ALIAS(s, strided_layout_flatten_mask(IN, STRIDED_AXES_MASK_ALL, OUT));
    CHECK_ALIAS(s, strided_layout_flatten_mask(IN, 0x8, OUT));
}

static void test_alias_squeeze(void **state)
{
    strided_layout a = mk(DIMS(1, 5, 1, 4), I64(7, 4, 3, 1), 4);
    strided_layout e = mk(DIMS(2, 0, 1), I64(3, 5, 7), 4);

    (void)state;
    CHECK_ALIAS(a, strided_layout_squeeze(IN, OUT));
    CHECK_ALIAS(e, strided_layout_squeeze(IN, OUT));
}

static void test_alias_unsqueeze(void **state)
{
    strided_layout d = mk_c(DIMS(3, 4), 4);
    strided_layout i = mk_implicit(DIMS(3, 4), 4);

    (void)state;
    CHECK_ALIAS(d, strided_layout_unsqueeze(IN, AXES(0, 3), OUT));
    CHECK_ALIAS(d, strided_layout_unsqueeze(IN, AXES(0, 1, 2, 3, 4), OUT));
    CHECK_ALIAS(sliced_3d(), strided_layout_unsqueeze(IN, AXES(1), OUT));
    CHECK_ALIAS(i, strided_layout_unsqueeze(IN, 0, NULL, OUT));
}

static void test_alias_broadcast(void **state)
{
    strided_layout s = mk_c(DIMS(7), 4);
    strided_layout d = mk_c(DIMS(2, 3, 3), 4);
    strided_layout t = sliced(d, S_ALL, S_(1, 2, 1));
    int64_t shape[64];

    (void)state;
    SHAPE64(shape, 0, 401, 61, 2, 62, 4, 63, 3);
    CHECK_ALIAS(s, strided_layout_broadcast(IN, DIMS(2, 7), OUT));
    CHECK_ALIAS(t, strided_layout_broadcast(IN, 64, shape, OUT));
}

static void test_alias_repack(void **state)
{
    strided_layout d = mk_c(DIMS(5, 8), 4);
    strided_layout s = sliced(d, S_ALL, S_(2, 6, 1));
    strided_layout i = mk_implicit(DIMS(5, 4), 4);

    (void)state;
    CHECK_ALIAS(s, strided_layout_repack(IN, 8, 0, -1, true, OUT));
    CHECK_ALIAS(d, strided_layout_repack(IN, 16, 0, -1, false, OUT));
    CHECK_ALIAS(s, strided_layout_repack(IN, 2, 0, -1, true, OUT));
    CHECK_ALIAS(i, strided_layout_repack(IN, 4, 0, -1, true, OUT));
}

static void test_alias_slice(void **state)
{
    strided_layout d = mk_c(DIMS(11, 12, 3), 4);

    (void)state;
    CHECK_ALIAS(d, strided_layout_slice(IN, 3, IDX(S_AT(0), S_AT(1), s_to(-1)), OUT));
    CHECK_ALIAS(d, strided_layout_slice(IN, 2, IDX(S_REV, S_AT(-1)), OUT));
    CHECK_ALIAS(d, strided_layout_slice(IN, 2, IDX(S_(5, 4, 1), S_AT(3)), OUT));
    CHECK_ALIAS(sliced_3d(), strided_layout_slice(IN, 1, IDX(S_AT(2)), OUT));
}

static void test_alias_to_dense(void **state)
{
    strided_layout d = mk_c(DIMS(5, 3, 7), 1);
    strided_layout p = permuted(d, 2, 0, 1);
    strided_layout i = mk_implicit(DIMS(2, 3), 4);

    (void)state;
    CHECK_ALIAS(sliced_3d(), strided_layout_to_dense(IN, STRIDED_ORDER_KEEP, 0, NULL, OUT));
    CHECK_ALIAS(p, strided_layout_to_dense(IN, STRIDED_ORDER_C, 0, NULL, OUT));
    CHECK_ALIAS(p, strided_layout_to_dense(IN, STRIDED_ORDER_F, 0, NULL, OUT));
    CHECK_ALIAS(p, strided_layout_to_dense(IN, STRIDED_ORDER_PERM, AXES(1, 2, 0), OUT));
    CHECK_ALIAS(i, strided_layout_to_dense(IN, STRIDED_ORDER_C, 0, NULL, OUT));
}

static void test_alias_coalesce(void **state)
{
    strided_layout a = mk(DIMS(3, 1, 4), I64(4, 12, 1), 4);
    strided_layout b = mk(DIMS(2, 3), I64(-3, -1), 4);
    strided_layout o = mk(DIMS(1, 1), I64(5, 7), 4);

    (void)state;
    CHECK_ALIAS(a, strided_layout_coalesce(IN, OUT));
    CHECK_ALIAS(b, strided_layout_coalesce(IN, OUT));
    CHECK_ALIAS(o, strided_layout_coalesce(IN, OUT));
    CHECK_ALIAS(sliced_3d(), strided_layout_coalesce(IN, OUT));
}

/* Every field of two layouts is the same (ndim, itemsize, implicitness,
 * slice offset and the first ndim extents and strides). Bytes past ndim and
 * padding are left out: the library need not initialise them. */
#define assert_same_fields(a, b) check_same_fields_(&(a), &(b), __FILE__, __LINE__)

static void check_same_fields_(const strided_layout *a, const strided_layout *b, const char *file,
                               int line)
{
    bool same = a->ndim == b->ndim && a->itemsize == b->itemsize &&
                a->implicit_strides == b->implicit_strides && a->slice_offset == b->slice_offset;
    int k;

    for (k = 0; same && k < a->ndim; k++)
        same = a->shape[k] == b->shape[k] && a->strides[k] == b->strides[k];
    if (!same) {
        char ta[2048], tb[2048];
        layout_text(a, ta, sizeof ta);
        layout_text(b, tb, sizeof tb);
        fail_at(file, line,
                "layout changed: %s (itemsize %d, %s) != %s "
                "(itemsize %d, %s)\n",
                ta, (int)a->itemsize, a->implicit_strides ? "implicit" : "explicit", tb,
                (int)b->itemsize, b->implicit_strides ? "implicit" : "explicit");
    }
}

/* Run a failing CALL with OUT pointing at a SENTINEL-filled layout, then
 * again with OUT == IN (a copy of layout): the first output must keep every
 * SENTINEL byte, the second must still equal the input in every field. */
#define CHECK_UNTOUCHED(layout, code, CALL)                 \
    do {                                                    \
        strided_layout src_ = (layout), out_, same_ = src_; \
        fill_sentinel(&out_, sizeof out_);                  \
        {                                                   \
            const strided_layout *IN = &src_;               \
            strided_layout *OUT = &out_;                    \
            assert_status(CALL, (code));                    \
        }                                                   \
        assert_untouched(&out_, sizeof out_);               \
        {                                                   \
            const strided_layout *IN = &same_;              \
            strided_layout *OUT = &same_;                   \
            assert_status(CALL, (code));                    \
        }                                                   \
        assert_same_fields(same_, src_);                    \
    } while (0)

static void test_untouched_init(void **state)
{
    strided_layout out;
    int64_t big[65];
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        big[k] = 1;
    fill_sentinel(&out, sizeof out);
    assert_status(strided_layout_init(&out, 65, big, NULL, 1), STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init(&out, DIMS(2, -1), NULL, 1), STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init(&out, DIMS(2, 3), NULL, 0), STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init(&out, DIMS(INT64_C(1) << 32, INT64_C(1) << 32), NULL, 1),
                  STRIDED_ERR_OVERFLOW);
    assert_status(strided_layout_init(&out, DIMS(3), I64(INT64_MAX), 1), STRIDED_ERR_OVERFLOW);
    assert_untouched(&out, sizeof out);
}

static void test_untouched_init_byte_strides(void **state)
{
    strided_layout out;

    (void)state;
    fill_sentinel(&out, sizeof out);
    assert_status(strided_layout_init_byte_strides(&out, DIMS(2, 3), I64(24, 6), 8),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init_byte_strides(&out, DIMS(2, 3), I64(24, 8), 0),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init_byte_strides(&out, DIMS(3), I64(INT64_MAX), 8),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_untouched(&out, sizeof out);
}

static void test_untouched_init_dense(void **state)
{
    strided_layout out;

    (void)state;
    fill_sentinel(&out, sizeof out);
    assert_status(strided_layout_init_dense(&out, DIMS(2, 3), 4, STRIDED_ORDER_KEEP, 0, NULL),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init_dense(&out, DIMS(2, 3), 4, STRIDED_ORDER_PERM, AXES(1, 1)),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init_dense(&out, DIMS(2, 3), 4, STRIDED_ORDER_PERM, AXES(0, 2)),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init_dense(&out, DIMS(2, 3), 4, STRIDED_ORDER_PERM, AXES(0)),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_init_dense(&out, DIMS(INT64_C(1) << 32, INT64_C(1) << 32), 1,
                                            STRIDED_ORDER_F, 0, NULL),
                  STRIDED_ERR_OVERFLOW);
    assert_untouched(&out, sizeof out);
}

static void test_untouched_max_compatible_itemsize(void **state)
{
    strided_layout l = mk_c(DIMS(5, 4), 8);
    int out;

    (void)state;
    fill_sentinel(&out, sizeof out);
    assert_status(strided_layout_max_compatible_itemsize(&l, 0, 0, -1, &out),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_max_compatible_itemsize(&l, 16, 0, 2, &out),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_max_compatible_itemsize(&l, 4, 0, -1, &out),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_untouched(&out, sizeof out);
}

static void test_untouched_queries_on_overflow(void **state)
{
    /* Layouts filled in by hand beyond the invariant: the queries that
     * can fail still refuse them. */
    strided_layout l = raw(DIMS(2, 2), I64(1, P62), 2);
    strided_layout n = mk(DIMS(5, 4), I64(-4, 1), 1);
    int64_t strides[2], size, off;
    uint64_t mask;
    strided_layout big = raw(DIMS(2), I64(P62), 2);
    strided_layout s = raw(DIMS(1), I64(1), 2);
    s.slice_offset = P62;

    (void)state;
    fill_sentinel(strides, sizeof strides);
    fill_sentinel(&size, sizeof size);
    fill_sentinel(&mask, sizeof mask);
    fill_sentinel(&off, sizeof off);
    assert_status(strided_layout_strides_in_bytes(&l, strides), STRIDED_ERR_OVERFLOW);
    assert_status(strided_layout_required_size_in_bytes(&n, &size), STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_required_size_in_bytes(&big, &size), STRIDED_ERR_OVERFLOW);
    assert_status(strided_layout_flattened_axis_mask(&l, &mask), STRIDED_ERR_OVERFLOW);
    assert_status(strided_layout_slice_offset_in_bytes(&s, &off), STRIDED_ERR_OVERFLOW);
    assert_untouched(strides, sizeof strides);
    assert_untouched(&size, sizeof size);
    assert_untouched(&mask, sizeof mask);
    assert_untouched(&off, sizeof off);
}

static void test_untouched_reshape(void **state)
{
    strided_layout d = mk_c(DIMS(7, 6, 5), 4);
    strided_layout f = mk_f(DIMS(4, 6), 4);
    int64_t big[65];
    int k;

    (void)state;
    for (k = 0; k < 65; k++)
        big[k] = 1;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_reshape(IN, 65, big, OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_reshape(IN, DIMS(71, -2), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_reshape(IN, DIMS(-1, 6, -1), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_reshape(IN, DIMS(5, 5), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_reshape(IN, DIMS(5, 0, -1), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_reshape(IN, DIMS(71, -1), OUT));
    CHECK_UNTOUCHED(f, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_reshape(IN, DIMS(3, 8), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_OVERFLOW,
                    strided_layout_reshape(IN, DIMS(INT64_C(1) << 32, INT64_C(1) << 32), OUT));
}

static void test_untouched_permute(void **state)
{
    strided_layout d = sliced_3d();

    (void)state;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_permute(IN, AXES(1, 0), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_permute(IN, AXES(2, 0, 2), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_permute(IN, AXES(2, 0, 3), OUT));
}

static void test_untouched_flatten(void **state)
{
    strided_layout d = sliced_3d();
    strided_layout o = mk(DIMS(2, 2), I64(1, P62), 1);

    (void)state;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_flatten(IN, 3, -1, OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_flatten(IN, 0, -4, OUT));
    CHECK_UNTOUCHED(o, STRIDED_ERR_OVERFLOW, strided_layout_flatten(IN, 0, -1, OUT));
    CHECK_UNTOUCHED(o, STRIDED_ERR_OVERFLOW,
                    strided_layout_flatten_mask(IN, STRIDED_AXES_MASK_ALL, OUT));
}

static void test_untouched_unsqueeze(void **state)
{
    strided_layout d = sliced_3d();
    strided_layout o = mk(DIMS(3), I64(P62 - 1), 1);
    int64_t shape[64];
    strided_layout l;
    int k;

    (void)state;
    for (k = 0; k < 64; k++)
        shape[k] = 1;
    l = mk_c(64, shape, 1);
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_unsqueeze(IN, AXES(9), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_unsqueeze(IN, AXES(0, 0), OUT));
    CHECK_UNTOUCHED(l, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_unsqueeze(IN, AXES(0), OUT));
    CHECK_UNTOUCHED(o, STRIDED_ERR_OVERFLOW, strided_layout_unsqueeze(IN, AXES(0), OUT));
}

static void test_untouched_broadcast(void **state)
{
    strided_layout d = mk_c(DIMS(2, 3), 4);
    strided_layout o = mk_c(DIMS(1, 1), 4);

    (void)state;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_broadcast(IN, DIMS(3), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_broadcast(IN, DIMS(2, 5), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_broadcast(IN, DIMS(2, -3), OUT));
    CHECK_UNTOUCHED(o, STRIDED_ERR_OVERFLOW,
                    strided_layout_broadcast(IN, DIMS(INT64_C(1) << 32, INT64_C(1) << 32), OUT));
}

static void test_untouched_repack(void **state)
{
    strided_layout d = mk_c(DIMS(5, 4), 4);
    strided_layout g = mk(DIMS(3, 4), I64(5, 1), 4);
    strided_layout u = mk_c(DIMS(5, 4), 8);
    strided_layout o = raw(DIMS(2, 4), I64(INT64_C(1) << 61, 1), 8);

    (void)state;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT, strided_layout_repack(IN, 8, 0, 5, true, OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_repack(IN, 8, 4, -1, true, OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_repack(IN, 6, 0, -1, true, OUT));
    CHECK_UNTOUCHED(g, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_repack(IN, 8, 0, -1, true, OUT));
    CHECK_UNTOUCHED(u, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_repack(IN, 0, 0, -1, true, OUT));
    CHECK_UNTOUCHED(u, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_repack(IN, 3, 0, -1, true, OUT));
    CHECK_UNTOUCHED(o, STRIDED_ERR_OVERFLOW, strided_layout_repack(IN, 1, 0, -1, true, OUT));
}

static void test_untouched_slice(void **state)
{
    strided_layout d = mk_c(DIMS(11, 12, 3), 4);
    strided_layout o = mk(DIMS(5), I64(2), 4);
    strided_layout e = raw(DIMS(0, 3), I64(0, INT64_MAX), 4);

    (void)state;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_slice(IN, 4, IDX(S_ALL, S_ALL, S_ALL, S_ALL), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_slice(IN, 3, IDX(S_AT(0), S_AT(1), S_AT(5)), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_slice(IN, 2, IDX(S_AT(0), strided_index_all(0)), OUT));
    CHECK_UNTOUCHED(o, STRIDED_ERR_OVERFLOW,
                    strided_layout_slice(IN, 1, IDX(strided_index_all(INT64_MAX)), OUT));
    CHECK_UNTOUCHED(e, STRIDED_ERR_OVERFLOW, strided_layout_slice(IN, 2, IDX(S_ALL, S_AT(2)), OUT));
}

static void test_untouched_to_dense(void **state)
{
    strided_layout d = sliced_3d();

    (void)state;
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_to_dense(IN, (strided_order)9, 0, NULL, OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_to_dense(IN, STRIDED_ORDER_PERM, AXES(0, 1), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_to_dense(IN, STRIDED_ORDER_PERM, AXES(0, 1, 1), OUT));
    CHECK_UNTOUCHED(d, STRIDED_ERR_INVALID_ARGUMENT,
                    strided_layout_to_dense(IN, STRIDED_ORDER_PERM, AXES(0, 1, 3), OUT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alias_reshape),
        cmocka_unit_test(test_alias_permute),
        cmocka_unit_test(test_alias_flatten),
        cmocka_unit_test(test_alias_flatten_mask),
        cmocka_unit_test(test_alias_squeeze),
        cmocka_unit_test(test_alias_unsqueeze),
        cmocka_unit_test(test_alias_broadcast),
        cmocka_unit_test(test_alias_repack),
        cmocka_unit_test(test_alias_slice),
        cmocka_unit_test(test_alias_to_dense),
        cmocka_unit_test(test_alias_coalesce),
        cmocka_unit_test(test_untouched_init),
        cmocka_unit_test(test_untouched_init_byte_strides),
        cmocka_unit_test(test_untouched_init_dense),
        cmocka_unit_test(test_untouched_max_compatible_itemsize),
        cmocka_unit_test(test_untouched_queries_on_overflow),
        cmocka_unit_test(test_untouched_reshape),
        cmocka_unit_test(test_untouched_permute),
        cmocka_unit_test(test_untouched_flatten),
        cmocka_unit_test(test_untouched_unsqueeze),
        cmocka_unit_test(test_untouched_broadcast),
        cmocka_unit_test(test_untouched_repack),
        cmocka_unit_test(test_untouched_slice),
        cmocka_unit_test(test_untouched_to_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
