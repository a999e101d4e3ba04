/*
 * Tests of strided_layout_repack: the same bytes seen as elements of another
 * itemsize along one axis of stride 1, packing (a larger itemsize) or
 * unpacking (a smaller one), and each refused repack with its message, in
 * the order the checks run; and of strided_layout_max_compatible_itemsize,
 * the largest itemsize a repack along an axis can take.
 */
#include "test_util.h"

#define P61 (INT64_C(1) << 61)

/* A repack to itemsize along axis and what it gives: with code STRIDED_OK,
 * the layout `want` as text (with the new itemsize and explicit strides);
 * otherwise that failure, with a reason containing `want` (any reason when
 * NULL), and the output untouched. */
typedef struct repack_case {
    int line;
    strided_layout in;
    int itemsize;
    intptr_t data_ptr;
    int axis;
    bool keep_dim;
    strided_status code;
    const char *want;
} repack_case;

/* A max_compatible_itemsize query that succeeds, and its answer. */
typedef struct max_itemsize_case {
    int line;
    strided_layout in;
    int max_itemsize;
    intptr_t data_ptr;
    int axis;
    int want;
} max_itemsize_case;

/* A max_compatible_itemsize query that fails with
 * STRIDED_ERR_INVALID_ARGUMENT and a reason containing text, leaving its
 * output untouched. */
typedef struct max_itemsize_error {
    int line;
    strided_layout in;
    int max_itemsize;
    intptr_t data_ptr;
    int axis;
    const char *text;
} max_itemsize_error;

static strided_layout repacked_at(strided_layout l, int itemsize, intptr_t data_ptr, int axis,
                                  bool keep_dim, const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_repack(&l, itemsize, data_ptr, axis, keep_dim, &out), STRIDED_OK,
                  file, line);
    return out;
}
#define repacked(l, itemsize, data_ptr, axis, keep_dim) \
    repacked_at((l), (itemsize), (data_ptr), (axis), (keep_dim), __FILE__, __LINE__)

static void check_repacks(const repack_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const repack_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_repack(&c->in, c->itemsize, c->data_ptr, c->axis,
                                                    c->keep_dim, &out),
                              &out, c->code, "repack", c->want, c->itemsize, AT(c));
    }
}

static void test_repack(void **state)
{
    strided_layout c54 = mk_c(DIMS(5, 4), 4), c54_8 = mk_c(DIMS(5, 4), 8);
    const repack_case cases[] = {
        /* cuda.core's documented examples: (5,4) of 4 bytes as 2, 8 and
         * 16 bytes; keep_dim false drops the axis when it becomes a unit
         * axis, and only then. */
        CASE(c54, 2, 0, -1, true, STRIDED_OK, "(5,8):(8,1)"),
        CASE(c54, 8, 0, -1, true, STRIDED_OK, "(5,2):(2,1)"),
        CASE(c54, 16, 0, -1, true, STRIDED_OK, "(5,1):(1,1)"),
        CASE(c54, 16, 0, -1, false, STRIDED_OK, "(5,):(1,)"),
        CASE(c54, 8, 0, -1, false, STRIDED_OK, "(5,2):(2,1)"),
        /* Implicit strides give explicit ones. */
        CASE(mk_implicit(DIMS(5, 4), 4), 8, 0, -1, true, STRIDED_OK, "(5,2):(2,1)"),
        /* Unpacking, along the last axis or the first. */
        CASE(c54_8, 4, 0, -1, true, STRIDED_OK, "(5,8):(8,1)"),
        CASE(c54_8, 1, 0, -1, false, STRIDED_OK, "(5,32):(32,1)"),
        CASE(mk_f(DIMS(4, 5), 8), 4, 0, 0, true, STRIDED_OK, "(8,5):(1,8)"),
        /* A data pointer aligned to the packed itemsize, negative too. */
        CASE(c54, 8, 4096, -1, true, STRIDED_OK, "(5,2):(2,1)"),
        CASE(c54, 8, -16, -1, true, STRIDED_OK, "(5,2):(2,1)"),
        CASE(c54, 8, INTPTR_MIN, -1, true, STRIDED_OK, "(5,2):(2,1)"),
    };

    (void)state;
    check_repacks(cases, ARRAY_LEN(cases));
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

/* A repack to itemsize along axis gives `want`, and repacking that back to
 * the input's itemsize gives the input. */
static void test_repack_round_trips(void **state)
{
    const struct round_trip_case {
        int line;
        strided_layout in;
        int itemsize, axis;
        const char *want;
    } cases[] = {
        CASE(sliced(mk_c(DIMS(5, 8), 4), S_ALL, S_(2, 6, 1)), 8, -1, "(5,2):(4,1)+1"),
        /* A case of cuda.core's tests. */
        CASE(sliced(permuted(mk_c(DIMS(12, 3, 24), 2), 1, 2, 0), S_REV, s_from(20), s_from(1)), 8,
             1, "(3,1,11):(-6,1,18)+35"),
        /* Itemsizes that are not powers of two. */
        CASE(mk_c(DIMS(4, 6), 3), 6, -1, "(4,3):(3,1)"),
        CASE(mk_c(DIMS(2, 5), 12), 4, -1, "(2,15):(15,1)"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct round_trip_case *c = &cases[i];
        strided_layout there, back;
        check_status_(strided_layout_repack(&c->in, c->itemsize, 0, c->axis, true, &there),
                      STRIDED_OK, AT(c));
        check_layout_(&there, c->want, c->itemsize, false, AT(c));
        check_status_(strided_layout_repack(&there, c->in.itemsize, 0, c->axis, true, &back),
                      STRIDED_OK, AT(c));
        check_layout_eq_(&back, &c->in, true, AT(c));
    }
}

static void test_repack_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout c, r;

    (void)state;
    SHAPE64(shape, 1, 3, 63, 4);
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

static void test_repack_refusals(void **state)
{
    strided_layout c54 = mk_c(DIMS(5, 4), 4), c56 = mk_c(DIMS(5, 6), 4);
    strided_layout t45 = mk(DIMS(4, 5), I64(5, 1), 4);
    strided_layout c54_8 = mk_c(DIMS(5, 4), 8);
    strided_layout gap1 = sliced(c56, S_ALL, S_(1, 5, 1));
    strided_layout empty_8 = mk(DIMS(5, 0), I64(0, 1), 8);
    /* Unpacking keeps byte values, so a valid layout never overflows; the
     * checks stay for layouts filled in by hand. */
    strided_layout far = raw(DIMS(1), I64(1), 8);
    far.slice_offset = P61;
    const repack_case cases[] = {
        /* Packing, each rule broken alone. */
        CASE(c54, 8, 0, 5, true, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: 5 out of range for 2D tensor"),
        CASE(mk_implicit(0, NULL, 4), 8, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: -1 out of range for 0D tensor"),
        CASE(c54, 8, 4, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The data pointer (4) must be aligned to the packed itemsize (8)."),
        CASE(t45, 8, 0, 0, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 0 stride must be 1, got 5."),
        /* The message names the axis counted from the start. */
        CASE(t45, 8, 0, -2, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 0 stride must be 1, got 5."),
        CASE(mk(DIMS(5, 0), I64(0, 1), 4), 8, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 1 extent must be non-zero, got 0."),
        CASE(mk_c(DIMS(5, 3), 4), 8, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 1 extent (3) must be divisible by 2."),
        CASE(gap1, 8, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The slice offset (1) must be divisible by 2."),
        CASE(mk(DIMS(3, 4), I64(5, 1), 4), 8, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The 0 axis stride (5) must be divisible by 2."),
        CASE(c56, 6, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The new itemsize (6) must be divisible by the itemsize (4)."),
        /* Packing, two rules broken: the first check wins. */
        CASE(c56, 6, 0, 5, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The new itemsize (6) must be divisible by the itemsize (4)."),
        CASE(c54, 8, 4, 5, true, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: 5 out of range for 2D tensor"),
        CASE(t45, 8, 4, 0, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The data pointer (4) must be aligned to the packed itemsize (8)."),
        CASE(mk(DIMS(5, 0), I64(0, 3), 4), 8, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 1 stride must be 1, got 3."),
        CASE(sliced(c56, S_ALL, S_(1, 4, 1)), 8, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 1 extent (3) must be divisible by 2."),
        CASE(sliced(mk(DIMS(3, 4), I64(5, 1), 4), S_ALL, S_(1, 3, 1)), 8, 0, 1, true,
             STRIDED_ERR_INVALID_ARGUMENT, "The slice offset (1) must be divisible by 2."),
        /* Unpacking, each rule broken alone. */
        CASE(c54_8, 4, 0, 9, true, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: 9 out of range for 2D tensor"),
        CASE(mk_c(0, NULL, 8), 4, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: -1 out of range for 0D tensor"),
        CASE(c54_8, 0, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "new itemsize must be greater than zero, got 0."),
        CASE(c54_8, -4, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "new itemsize must be greater than zero, got -4."),
        CASE(c54_8, 3, 0, -1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The itemsize (8) must be divisible by the new itemsize (3)."),
        CASE(empty_8, 4, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 1 extent must be non-zero, got 0."),
        CASE(mk(DIMS(4, 5), I64(5, 1), 8), 4, 0, 0, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 0 stride must be 1, got 5."),
        /* Unpacking, two rules broken: the first check wins. */
        CASE(c54_8, 0, 0, 9, true, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axis: 9 out of range for 2D tensor"),
        CASE(empty_8, 3, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The itemsize (8) must be divisible by the new itemsize (3)."),
        CASE(mk(DIMS(5, 0), I64(0, 7), 8), 4, 0, 1, true, STRIDED_ERR_INVALID_ARGUMENT,
             "The axis 1 extent must be non-zero, got 0."),
        /* Unpacking overflows: a stride, an extent, the slice offset. */
        CASE(raw(DIMS(2, 4), I64(P61, 1), 8), 1, 0, -1, true, STRIDED_ERR_OVERFLOW, NULL),
        CASE(raw(DIMS(2, INT64_C(1) << 60), I64(INT64_C(1) << 60, 1), 8), 1, 0, -1, true,
             STRIDED_ERR_OVERFLOW, NULL),
        CASE(far, 1, 0, -1, true, STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    assert_i64(gap1.slice_offset, 1);
    check_repacks(cases, ARRAY_LEN(cases));
}

/* The largest multiple of the itemsize, up to max_itemsize and dividing
 * it, that the axis's extent (times the itemsize), the other strides, the
 * slice offset and the data pointer all allow. */
static void test_max_compatible_itemsize(void **state)
{
    strided_layout c12 = mk_c(DIMS(12), 1);
    strided_layout c4_3 = mk_c(DIMS(4), 3), c5_3 = mk_c(DIMS(5), 3);
    strided_layout permuted_slice = sliced(permuted(mk_c(DIMS(12, 3, 24), 2), 1, 2, 0), S_REV,
                                           s_from(20), s_from(1));
    int64_t shape64[64];

    SHAPE64(shape64, 1, 3, 63, 4);
    const max_itemsize_case cases[] = {
        /* cuda.core's cases. */
        CASE(c12, 16, 0, -1, 4),
        CASE(mk_implicit(DIMS(12), 1), 16, 0, -1, 4),
        CASE(mk_f(DIMS(12), 1), 16, 0, 0, 4),
        CASE(mk_c(DIMS(12), 4), 16, 0, -1, 16),
        CASE(mk_c(DIMS(16, 5, 4, 6), 2), 16, 0, -1, 4),
        CASE(mk_f(DIMS(16, 5, 4, 6), 2), 16, 0, 0, 16),
        CASE(sliced(mk_c(DIMS(11, 5, 9), 2), S_ALL, S_ALL, s_from(-1)), 16, 0, 2, 2),
        CASE(permuted_slice, 16, 0, 1, 8),
        CASE(mk(DIMS(4, 5), I64(5, 1), 8), 16, 0, 0, 8),
        CASE(mk_c(64, shape64, 2), 16, 0, -1, 8),
        CASE(mk_implicit(64, shape64, 2), 16, 0, -1, 8),
        /* Itemsizes that are not powers of two. */
        CASE(c4_3, 16, 0, -1, 3),
        CASE(c4_3, 12, 0, -1, 12),
        CASE(c4_3, 12, 6, -1, 6),
        CASE(c4_3, 12, 4, -1, 3),
        /* 16 is not a multiple of 3, so no larger multiple of 3 divides it,
         * although 15 would fit under the bound. */
        CASE(c5_3, 16, 0, -1, 3),
        CASE(c5_3, 15, 0, -1, 15),
        CASE(c5_3, 30, 20, -1, 3),
        /* The data pointer's alignment bounds it, negative pointers too. */
        CASE(c12, 16, 2, -1, 2),
        CASE(c12, 16, 4096, -1, 4),
        CASE(c12, 16, -8, -1, 4),
        CASE(c12, 16, 3, -1, 1),
        CASE(c12, 16, INTPTR_MIN, -1, 4),
        /* Nothing larger: the last axis's stride is 2; an empty layout; a
         * layout filled in by hand with an INT64_MIN stride. */
        CASE(mk(DIMS(4, 6), I64(12, 2), 4), 16, 0, -1, 4),
        CASE(mk(DIMS(4, 0), I64(1, 1), 4), 16, 0, -1, 4),
        CASE(raw(DIMS(2, 4), I64(INT64_MIN, 1), 1), 16, 0, -1, 4),
    };

    (void)state;
    assert_layout(permuted_slice, "(3,4,11):(-24,1,72)+140", 2);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const max_itemsize_case *c = &cases[i];
        int out = -1;
        check_status_(strided_layout_max_compatible_itemsize(&c->in, c->max_itemsize, c->data_ptr,
                                                             c->axis, &out),
                      STRIDED_OK, AT(c));
        check_i64_(out, c->want, "max compatible itemsize", AT(c));
    }
}

static void test_max_compatible_itemsize_refusals(void **state)
{
    strided_layout c54 = mk_c(DIMS(5, 4), 4), c54_8 = mk_c(DIMS(5, 4), 8);
    const max_itemsize_error cases[] = {
        CASE(c54, 0, 0, -1, "max_itemsize must be greater than zero, got 0."),
        CASE(c54, -16, 0, -1, "max_itemsize must be greater than zero, got -16."),
        CASE(c54, 16, 0, 9, "Invalid axis: 9 out of range for 2D tensor"),
        CASE(mk_c(0, NULL, 4), 16, 0, -1, "Invalid axis: -1 out of range for 0D tensor"),
        CASE(c54_8, 4, 0, -1, "max_itemsize (4) cannot be less than itemsize (8)."),
        /* max_itemsize is checked first, then the axis, then max_itemsize
         * against the itemsize. */
        CASE(c54_8, 0, 0, 9, "max_itemsize must be greater than zero"),
        CASE(c54_8, 4, 0, 9, "Invalid axis: 9 out of range for 2D tensor"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const max_itemsize_error *c = &cases[i];
        int out = -7;
        check_error_(strided_layout_max_compatible_itemsize(&c->in, c->max_itemsize, c->data_ptr,
                                                            c->axis, &out),
                     STRIDED_ERR_INVALID_ARGUMENT, "max_compatible_itemsize", c->text, AT(c));
        check_i64_(out, -7, "out", AT(c));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repack),
        cmocka_unit_test(test_repack_same_itemsize_is_a_copy),
        cmocka_unit_test(test_repack_round_trips),
        cmocka_unit_test(test_repack_64_dims),
        cmocka_unit_test(test_repack_refusals),
        cmocka_unit_test(test_max_compatible_itemsize),
        cmocka_unit_test(test_max_compatible_itemsize_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
