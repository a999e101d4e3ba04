/*
 * Tests of strided_layout_slice: Python's basic indexing (integers remove
 * their axis, start:stop:step slices keep it, bounds clamp like Python's)
 * with the offset of the first element kept in slice_offset, and each
 * refused index with its message.
 */
#include "test_util.h"

#define P61 (INT64_C(1) << 61)

/* A slice and what it gives: with code STRIDED_OK, the layout `want` as
 * text (with the input's itemsize and explicit strides); otherwise that
 * failure, with a reason containing `want` (any reason when NULL), and the
 * output untouched. */
typedef struct slice_case {
    int line;
    strided_layout in;
    int nidx;
    const strided_index *idx;
    strided_status code;
    const char *want;
} slice_case;

static void check_slices(const slice_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const slice_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_slice(&c->in, c->nidx, c->idx, &out), &out, c->code,
                              "slice", c->want, c->in.itemsize, AT(c));
    }
}

#define TOO_MANY_SLICES(n, ndim) \
    "The number of slices (" #n ") is greater than the number of dimensions (" #ndim ")."

static void test_slice(void **state)
{
    strided_layout c13 = mk_c(DIMS(13), 4), c5 = mk_c(DIMS(5), 4);
    strided_layout rev13 = sliced(c13, S_REV);
    strided_layout inner = sliced(rev13, S_(1, -1, 1));
    strided_layout c11_12_3 = mk_c(DIMS(11, 12, 3), 4);
    strided_layout c11_12_3_5 = mk_c(DIMS(11, 12, 3, 5), 4);
    strided_layout huge = mk_c(DIMS(INT64_MAX), 1);
    const slice_case cases[] = {
        /* The example of strided_layout_format's documentation. */
        CASE(mk_c(DIMS(5, 3, 7), 1), INDICES(s_from(1), S_REV), STRIDED_OK, "(4,3,7):(21,-7,1)+35"),
        CASE(mk_implicit(DIMS(12), 4), INDICES(S_ALL), STRIDED_OK, "(12,):(1,)"),
        /* Reversed, and reversed back. */
        CASE(c13, INDICES(S_REV), STRIDED_OK, "(13,):(-1,)+12"),
        CASE(rev13, INDICES(S_REV), STRIDED_OK, "(13,):(1,)"),
        CASE(rev13, INDICES(S_(1, -1, 1)), STRIDED_OK, "(11,):(-1,)+11"),
        CASE(inner, INDICES(S_REV), STRIDED_OK, "(11,):(1,)+1"),
        /* Steps, and a slice of a slice. */
        CASE(c13, INDICES(S_(2, -3, 1)), STRIDED_OK, "(8,):(1,)+2"),
        CASE(c13, INDICES(S_(2, -3, 2)), STRIDED_OK, "(4,):(2,)+2"),
        CASE(c13, INDICES(S_(-3, 2, -2)), STRIDED_OK, "(4,):(-2,)+10"),
        CASE(sliced(c13, S_(-3, 2, -2)), INDICES(S_(1, 3, 1)), STRIDED_OK, "(2,):(-2,)+8"),
        CASE(sliced(mk_c(DIMS(3, 5), 4), s_to(2)), INDICES(S_ALL, s_from(3)), STRIDED_OK,
             "(2,2):(5,1)+3"),
        /* Integers remove their axis and add its offset. */
        CASE(c11_12_3, INDICES(S_ALL, S_AT(0), s_to(-1)), STRIDED_OK, "(11,2):(36,1)"),
        CASE(c11_12_3, INDICES(S_AT(0), S_AT(1), s_to(-1)), STRIDED_OK, "(2,):(1,)+3"),
        CASE(c11_12_3, INDICES(S_AT(0), S_AT(1), S_AT(2)), STRIDED_OK, "():()+5"),
        CASE(c11_12_3, INDICES(S_AT(-2)), STRIDED_OK, "(12,3):(3,1)+324"),
        CASE(sliced(c11_12_3_5, S_AT(0)), INDICES(S_AT(1)), STRIDED_OK, "(3,5):(5,1)+15"),
        CASE(c11_12_3_5, INDICES(S_ALL, S_AT(1), s_to(-1)), STRIDED_OK, "(11,2,5):(180,5,1)+15"),
        /* Bounds clamp like Python's. */
        CASE(c5, INDICES(S_(-100, 100, 1)), STRIDED_OK, "(5,):(1,)"),
        CASE(c5, INDICES(S_(100, -100, -1)), STRIDED_OK, "(5,):(-1,)+4"),
        CASE(c5, INDICES(S_(INT64_MIN, INT64_MAX, 1)), STRIDED_OK, "(5,):(1,)"),
        CASE(c5, INDICES(S_(INT64_MAX, INT64_MIN, -1)), STRIDED_OK, "(5,):(-1,)+4"),
        CASE(c5, INDICES(s_any(false, 0, true, 1, -1)), STRIDED_OK, "(3,):(-1,)+4"),
        CASE(c5, INDICES(s_any(true, 3, false, 0, -2)), STRIDED_OK, "(2,):(-2,)+3"),
        CASE(c5, INDICES(strided_index_all(2)), STRIDED_OK, "(3,):(2,)"),
        /* Steps past the end leave one element, whose stride may be huge. */
        CASE(c5, INDICES(strided_index_all(7)), STRIDED_OK, "(1,):(7,)"),
        CASE(c5, INDICES(strided_index_all(INT64_MAX / 4)), STRIDED_OK,
             "(1,):(2305843009213693951,)"),
        CASE(mk_c(DIMS(5), 1), INDICES(S_(0, 5, INT64_MAX)), STRIDED_OK,
             "(1,):(9223372036854775807,)"),
        /* The largest extent. */
        CASE(huge, INDICES(S_AT(-1)), STRIDED_OK, "():()+9223372036854775806"),
        CASE(huge, INDICES(S_(0, INT64_MAX, INT64_MAX)), STRIDED_OK, "(1,):(9223372036854775807,)"),
        CASE(huge, INDICES(S_REV), STRIDED_OK, "(9223372036854775807,):(-1,)+9223372036854775806"),
        CASE(huge, INDICES(strided_index_all(2)), STRIDED_OK, "(4611686018427387904,):(2,)"),
        /* Empty results take zero strides, and still add the offsets of
         * their integers and of the starts of non-empty slices. */
        CASE(mk_c(DIMS(3, 5), 4), INDICES(S_(5, 4, 1)), STRIDED_OK, "(0,5):(0,0)"),
        CASE(mk_c(DIMS(3, 4, 5), 4), INDICES(S_(1, 1, 1), S_AT(2)), STRIDED_OK, "(0,5):(0,0)+10"),
        CASE(mk_c(DIMS(3, 4), 1), INDICES(S_AT(1), S_(2, 2, 1)), STRIDED_OK, "(0,):(0,)+4"),
        CASE(mk(DIMS(0, 3), I64(3, 1), 4), INDICES(S_ALL, s_from(1)), STRIDED_OK, "(0,2):(0,0)+1"),
    };

    (void)state;
    check_slices(cases, ARRAY_LEN(cases));
}

/* No indices: the layout itself, with explicit strides. */
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

static void test_slice_64_dims_reversed(void **state)
{
    int64_t shape[64];
    strided_index idx[64];
    strided_layout d, s;
    int64_t lo, hi;
    int k;

    (void)state;
    SHAPE64(shape, 3, 2, 17, 3, 30, 4, 45, 5, 63, 6);
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

static void test_slice_refusals(void **state)
{
    strided_layout c35 = mk_c(DIMS(3, 5), 4), c11 = mk_c(DIMS(11), 4);
    strided_layout c11_12_3 = mk_c(DIMS(11, 12, 3), 4);
    strided_index unknown = S_AT(0);
    /* Filled in by hand: no function makes an INT64_MIN stride. */
    strided_layout min_stride = raw(DIMS(1), I64(INT64_MIN), 4);

    unknown.kind = (strided_index_kind)7;
    min_stride.slice_offset = INT64_MIN;
    const slice_case cases[] = {
        CASE(c35, INDICES(S_ALL, s_to(-1), s_to(2)), STRIDED_ERR_INVALID_ARGUMENT,
             TOO_MANY_SLICES(3, 2)),
        CASE(mk_c(0, NULL, 4), INDICES(S_AT(0)), STRIDED_ERR_INVALID_ARGUMENT,
             TOO_MANY_SLICES(1, 0)),
        CASE(c35, INDICES(S_ALL, strided_index_all(0)), STRIDED_ERR_INVALID_ARGUMENT,
             "slice step cannot be zero"),
        CASE(c35, INDICES(S_(0, 2, 0)), STRIDED_ERR_INVALID_ARGUMENT, "slice step cannot be zero"),
        CASE(c11_12_3, INDICES(S_AT(0), S_AT(1), S_AT(5)), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid index: 5 out of range for axis 2 with extent 3"),
        CASE(c11_12_3, INDICES(S_AT(-42)), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid index: -42 out of range for axis 0 with extent 11"),
        CASE(mk_c(DIMS(0, 3), 4), INDICES(S_AT(0)), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid index: 0 out of range for axis 0 with extent 0"),
        CASE(c11, INDICES(S_AT(INT64_MIN)), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid index: -9223372036854775808 out of range for axis 0 "
             "with extent 11"),
        CASE(c11, INDICES(S_AT(INT64_MAX)), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid index: 9223372036854775807 out of range for axis 0 "
             "with extent 11"),
        CASE(c11, INDICES(unknown), STRIDED_ERR_INVALID_ARGUMENT, NULL),
        /* A stride whose byte value overflows is refused, even on an axis
         * of one element (strides in bytes must stay representable). */
        CASE(mk_c(DIMS(5), 4), INDICES(strided_index_all(INT64_MAX)), STRIDED_ERR_OVERFLOW, NULL),
        CASE(mk(DIMS(5), I64(2), 4), INDICES(strided_index_all(INT64_MAX)), STRIDED_ERR_OVERFLOW,
             NULL),
        CASE(raw(DIMS(3), I64(P61), 4), INDICES(strided_index_all(4)), STRIDED_ERR_OVERFLOW, NULL),
        CASE(min_stride, INDICES(S_REV), STRIDED_ERR_OVERFLOW, NULL),
        /* An empty layout's offsets are unchecked; an integer index still
         * adds 2 * INT64_MAX to the offset. */
        CASE(mk(DIMS(0, 3), I64(0, INT64_MAX), 1), INDICES(S_ALL, S_AT(2)), STRIDED_ERR_OVERFLOW,
             NULL),
    };

    (void)state;
    check_slices(cases, ARRAY_LEN(cases));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_slice_no_indices_gives_explicit),
        cmocka_unit_test(test_slice_int64_min_step),
        cmocka_unit_test(test_slice_64_dims_reversed),
        cmocka_unit_test(test_slice_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
