/*
 * Tests of the constructors of strided/layout.h: strided_layout_init
 * (strides in elements, or none for implicit C strides),
 * strided_layout_init_byte_strides (strides in bytes) and
 * strided_layout_init_dense (C, F or a permutation order), and each
 * refused argument with its message, in the order the checks run.
 *
 * Every layout they make keeps its offsets representable: the product of
 * its non-zero extents, every element offset and every byte offset (and
 * byte stride) fit in int64, and no stride is INT64_MIN.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

typedef strided_status (*init_fn)(strided_layout *out, int ndim, const int64_t *shape,
                                  const int64_t *strides, int itemsize);

/* A constructor call and what it gives: with code STRIDED_OK, the layout
 * `want` as text, with implicit strides when strides is NULL and explicit
 * ones otherwise; with another code, that failure, with a reason
 * containing `want` (any reason when NULL), and the output untouched. */
typedef struct init_case {
    int line;
    int ndim;
    const int64_t *shape, *strides;
    int itemsize;
    strided_status code;
    const char *want;
} init_case;

/* A strided_layout_init_dense call and what it gives (explicit strides). */
typedef struct dense_case {
    int line;
    int ndim;
    const int64_t *shape;
    int itemsize;
    strided_order order;
    int nperm;
    const int *perm;
    strided_status code;
    const char *want;
} dense_case;

#define TOO_MANY_DIMS "Unsupported number of dimensions: 65. Max supported ndim is 64"
#define KEEP STRIDED_ORDER_KEEP
#define ORDER_C STRIDED_ORDER_C
#define ORDER_F STRIDED_ORDER_F
#define PERM STRIDED_ORDER_PERM
#define NOT_AN_ORDER "The stride_order must be 'C', 'F', or a permutation tuple"

static void check_inits(init_fn init, const init_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const init_case *c = &cases[i];
        strided_layout l;
        fill_sentinel(&l, sizeof l);
        strided_status got = init(&l, c->ndim, c->shape, c->strides, c->itemsize);
        if (c->code == STRIDED_OK && c->strides == NULL) {
            check_status_(got, STRIDED_OK, AT(c));
            check_layout_(&l, c->want, c->itemsize, true, AT(c));
        } else {
            check_layout_outcome_(got, &l, c->code, "init", c->want, c->itemsize, AT(c));
        }
    }
}

static void check_dense_inits(const dense_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const dense_case *c = &cases[i];
        strided_layout l;
        fill_sentinel(&l, sizeof l);
        check_layout_outcome_(strided_layout_init_dense(&l, c->ndim, c->shape, c->itemsize,
                                                        c->order, c->nperm, c->perm),
                              &l, c->code, "dense", c->want, c->itemsize, AT(c));
    }
}

static void test_init(void **state)
{
    const init_case cases[] = {
        CASE(DIMS(2, 3), NULL, 4, STRIDED_OK, "(2,3):(3,1)"),
        CASE(DIMS(2, 0, 3), NULL, 8, STRIDED_OK, "(2,0,3):(0,0,0)"),
        CASE(DIMS(2, 3, 4), I64(-1, 0, 7), 2, STRIDED_OK, "(2,3,4):(-1,0,7)"),
        /* An empty layout keeps its strides, as a CUDA Array Interface
         * array of shape (0,3) with strides (3,1) does. */
        CASE(DIMS(0, 3), I64(3, 1), 8, STRIDED_OK, "(0,3):(3,1)"),
        CASE(0, NULL, NULL, 4, STRIDED_OK, "():()"),
        CASE(0, NULL, I64(0), 4, STRIDED_OK, "():()"),
        CASE(DIMS(4), I64(1), 5, STRIDED_OK, "(4,):(1,)"),
        CASE(DIMS(INT64_MAX), NULL, 1, STRIDED_OK, "(9223372036854775807,):(1,)"),
        /* The largest offsets, and byte offsets, that fit. */
        CASE(DIMS(2), I64(INT64_MAX), 1, STRIDED_OK, "(2,):(9223372036854775807,)"),
        CASE(DIMS(2), I64(-INT64_MAX), 1, STRIDED_OK, "(2,):(-9223372036854775807,)"),
        CASE(DIMS(2, 2), I64(-INT64_MAX, INT64_MAX), 1, STRIDED_OK,
             "(2,2):(-9223372036854775807,9223372036854775807)"),
        CASE(DIMS(2, 2), I64(INT64_MAX, -1), 1, STRIDED_OK, "(2,2):(9223372036854775807,-1)"),
        CASE(DIMS(2), I64(INT64_MAX / 4), 4, STRIDED_OK, "(2,):(2305843009213693951,)"),
        CASE(DIMS(2), I64(-(INT64_MAX / 4)), 4, STRIDED_OK, "(2,):(-2305843009213693951,)"),
        /* The offsets of an empty layout are not checked. */
        CASE(DIMS(0, 3), I64(INT64_MAX, INT64_MAX), 1, STRIDED_OK,
             "(0,3):(9223372036854775807,9223372036854775807)"),
    };

    (void)state;
    check_inits(strided_layout_init, cases, ARRAY_LEN(cases));
}

static void test_init_byte_strides(void **state)
{
    const init_case cases[] = {
        CASE(DIMS(2, 3), I64(24, 8), 8, STRIDED_OK, "(2,3):(3,1)"),
        CASE(DIMS(2, 3), I64(-8, 4), 4, STRIDED_OK, "(2,3):(-2,1)"),
        CASE(DIMS(4, 3), I64(0, 2), 2, STRIDED_OK, "(4,3):(0,1)"),
        CASE(DIMS(2, 3), I64(9, 3), 3, STRIDED_OK, "(2,3):(3,1)"),
        CASE(DIMS(2, 3), NULL, 8, STRIDED_OK, "(2,3):(3,1)"),
        CASE(DIMS(0, 3), I64(24, 8), 8, STRIDED_OK, "(0,3):(3,1)"),
        CASE(DIMS(2), I64(INT64_MIN + 8), 8, STRIDED_OK, "(2,):(-1152921504606846975,)"),
    };

    (void)state;
    check_inits(strided_layout_init_byte_strides, cases, ARRAY_LEN(cases));
}

static void test_init_64_dims(void **state)
{
    int64_t shape[64], strides[64];
    strided_layout l;

    (void)state;
    SHAPE64(shape, 10, 3, 63, 2);
    assert_ok(strided_layout_init(&l, 64, shape, filled(strides, 64, 1), 1));
    assert_int_equal(l.ndim, 64);
    assert_i64(l.shape[10], 3);
    assert_i64(l.shape[63], 2);
    assert_i64(strided_layout_volume(&l), 6);
    assert_ok(strided_layout_init(&l, 64, shape, NULL, 1));
    assert_i64(l.strides[63], 1);
    assert_i64(l.strides[62], 2);
    assert_i64(l.strides[0], 6);
}

static void test_init_refusals(void **state)
{
    int64_t ones[65], minus_ones[65];
    const init_case cases[] = {
        CASE(65, filled(ones, 65, 1), NULL, 1, STRIDED_ERR_INVALID_ARGUMENT, TOO_MANY_DIMS),
        CASE(-1, I64(1), NULL, 1, STRIDED_ERR_INVALID_ARGUMENT, NULL),
        CASE(DIMS(2, -1, 3), NULL, 4, STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        CASE(DIMS(2, 3), NULL, 0, STRIDED_ERR_INVALID_ARGUMENT, "itemsize must be positive"),
        CASE(DIMS(2, 3), I64(3, 1), -4, STRIDED_ERR_INVALID_ARGUMENT, "itemsize must be positive"),
        /* The number of dimensions, then the extents, then the itemsize. */
        CASE(65, filled(minus_ones, 65, -1), NULL, 0, STRIDED_ERR_INVALID_ARGUMENT,
             "Unsupported number of dimensions: 65"),
        CASE(DIMS(-3), NULL, 0, STRIDED_ERR_INVALID_ARGUMENT, "Extents must be non-negative"),
        /* The volume overflows, also beside a zero extent. */
        CASE(DIMS(INT64_C(1) << 32, INT64_C(1) << 32), NULL, 1, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(INT64_MAX, 2), NULL, 1, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(0, INT64_C(1) << 32, INT64_C(1) << 32), NULL, 1, STRIDED_ERR_OVERFLOW, NULL),
        /* An element offset overflows, alone or in a sum. */
        CASE(DIMS(3), I64(INT64_MAX), 1, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(3), I64(INT64_MIN), 1, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(2, 2), I64(INT64_MAX, 1), 1, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(2, 2), I64(INT64_MIN, -1), 1, STRIDED_ERR_OVERFLOW, NULL),
        /* INT64_MIN cannot be negated, so no stride may be INT64_MIN (a
         * copy that flips a negative stride, or a consumer taking |stride|,
         * would overflow), even on an axis whose stride reaches no
         * element. */
        CASE(DIMS(2), I64(INT64_MIN), 1, STRIDED_ERR_OVERFLOW,
             "stride -9223372036854775808 of axis 0 times itemsize 1 "
             "overflows int64 in (2,):(-9223372036854775808,)"),
        CASE(DIMS(1, 3), I64(INT64_MIN, 1), 1, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(0, 3), I64(INT64_MIN, 1), 1, STRIDED_ERR_OVERFLOW, NULL),
        /* Element offsets that fit are not enough: their byte offsets
         * (times itemsize) and every byte stride must fit too. */
        CASE(DIMS(2, 3), I64(P62, 1), 4, STRIDED_ERR_OVERFLOW,
             "stride 4611686018427387904 of axis 0 times itemsize 4 "
             "overflows int64 in (2,3):(4611686018427387904,1)"),
        CASE(DIMS(3), I64(P62 / 4), 4, STRIDED_ERR_OVERFLOW,
             "the byte offsets of (3,):(1152921504606846976,) with "
             "itemsize 4 overflow int64"),
        CASE(DIMS(3, 2), I64(-(P62 / 4), -(P62 / 4)), 4, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(INT64_C(1) << 61), NULL, 8, STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    check_inits(strided_layout_init, cases, ARRAY_LEN(cases));
}

static void test_init_byte_strides_refusals(void **state)
{
    int64_t ones[65], fours[65];
    const init_case cases[] = {
        CASE(DIMS(2, 3), I64(24, 6), 8, STRIDED_ERR_INVALID_ARGUMENT,
             "strides must be divisible by itemsize"),
        CASE(DIMS(2, 3), I64(-6, 4), 4, STRIDED_ERR_INVALID_ARGUMENT,
             "strides must be divisible by itemsize"),
        CASE(DIMS(2, 3), I64(24, 8), 0, STRIDED_ERR_INVALID_ARGUMENT, "itemsize must be positive"),
        /* The extents are checked first. */
        CASE(DIMS(-1, 3), I64(7, 1), 4, STRIDED_ERR_INVALID_ARGUMENT,
             "Extents must be non-negative"),
        CASE(65, filled(ones, 65, 1), filled(fours, 65, 4), 4, STRIDED_ERR_INVALID_ARGUMENT,
             TOO_MANY_DIMS),
        CASE(DIMS(2), I64(INT64_MIN), 8, STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    check_inits(strided_layout_init_byte_strides, cases, ARRAY_LEN(cases));
}

static void test_init_dense(void **state)
{
    const dense_case cases[] = {
        CASE(DIMS(5, 3, 7), 1, ORDER_C, 0, NULL, STRIDED_OK, "(5,3,7):(21,7,1)"),
        CASE(DIMS(5, 3, 7), 1, ORDER_F, 0, NULL, STRIDED_OK, "(5,3,7):(1,5,15)"),
        /* A permutation lists the axes from the largest stride to the
         * smallest, counting from the end where negative. */
        CASE(DIMS(5, 3, 7), 1, PERM, AXES(2, 0, 1), STRIDED_OK, "(5,3,7):(3,1,15)"),
        CASE(DIMS(5, 3, 7), 1, PERM, AXES(-1, 0, -2), STRIDED_OK, "(5,3,7):(3,1,15)"),
        CASE(DIMS(4, 5, 6), 2, PERM, AXES(0, 1, 2), STRIDED_OK, "(4,5,6):(30,6,1)"),
        CASE(DIMS(4, 5, 6), 2, ORDER_C, 0, NULL, STRIDED_OK, "(4,5,6):(30,6,1)"),
        CASE(DIMS(4, 5, 6), 2, PERM, AXES(2, 1, 0), STRIDED_OK, "(4,5,6):(1,4,20)"),
        CASE(DIMS(4, 5, 6), 2, ORDER_F, 0, NULL, STRIDED_OK, "(4,5,6):(1,4,20)"),
        /* Empty layouts have zero strides. */
        CASE(DIMS(5, 0, 3), 4, ORDER_C, 0, NULL, STRIDED_OK, "(5,0,3):(0,0,0)"),
        CASE(DIMS(5, 0, 3), 4, ORDER_F, 0, NULL, STRIDED_OK, "(5,0,3):(0,0,0)"),
        CASE(DIMS(5, 0, 3), 4, PERM, AXES(1, 2, 0), STRIDED_OK, "(5,0,3):(0,0,0)"),
        CASE(0, NULL, 8, ORDER_C, 0, NULL, STRIDED_OK, "():()"),
        CASE(0, NULL, 8, ORDER_F, 0, NULL, STRIDED_OK, "():()"),
        CASE(0, NULL, 8, PERM, 0, NULL, STRIDED_OK, "():()"),
        CASE(DIMS(INT64_MAX, 1), 1, ORDER_C, 0, NULL, STRIDED_OK, "(9223372036854775807,1):(1,1)"),
        CASE(DIMS(1, INT64_MAX), 1, ORDER_F, 0, NULL, STRIDED_OK, "(1,9223372036854775807):(1,1)"),
    };

    (void)state;
    check_dense_inits(cases, ARRAY_LEN(cases));
}

static void test_init_dense_64_dims(void **state)
{
    int64_t shape[64];
    strided_layout l;

    (void)state;
    SHAPE64(shape, 0, 2, 20, 3, 63, 5);
    assert_ok(strided_layout_init_dense(&l, 64, shape, 4, STRIDED_ORDER_C, 0, NULL));
    assert_i64(l.strides[63], 1);
    assert_i64(l.strides[21], 5);
    assert_i64(l.strides[20], 5);
    assert_i64(l.strides[19], 15);
    assert_i64(l.strides[0], 15);
    assert_ok(strided_layout_init_dense(&l, 64, shape, 4, STRIDED_ORDER_F, 0, NULL));
    assert_i64(l.strides[0], 1);
    assert_i64(l.strides[20], 2);
    assert_i64(l.strides[63], 6);
}

static void test_init_dense_refusals(void **state)
{
    int64_t ones[65];
    const dense_case cases[] = {
        CASE(DIMS(2, 3), 4, KEEP, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT, NOT_AN_ORDER),
        CASE(DIMS(2, 3), 4, (strided_order)9, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT, NOT_AN_ORDER),
        CASE(65, filled(ones, 65, 1), 4, ORDER_C, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             TOO_MANY_DIMS),
        CASE(DIMS(2, -3), 4, ORDER_F, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             "Extents must be non-negative"),
        CASE(DIMS(2, 3), 0, ORDER_C, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             "itemsize must be positive"),
        CASE(DIMS(5, 3, 7), 4, PERM, AXES(1, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "stride_order must have the same length as shape. Shape has 3 "
             "dimensions, but stride_order has 2 elements."),
        CASE(DIMS(5, 3, 7), 4, PERM, AXES(0, 1, 3), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid stride order: axis 3 out of range for 3D tensor"),
        CASE(DIMS(5, 3, 7), 4, PERM, AXES(-4, 0, 1), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid stride order: axis -4 out of range for 3D tensor"),
        CASE(DIMS(5, 3, 7), 4, PERM, AXES(1, 1, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "The stride order must be a permutation. Axis 1 appears "
             "multiple times."),
        /* The order, then the extents, then the itemsize, then the
         * permutation. */
        CASE(DIMS(-2, 3), 0, KEEP, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT, NOT_AN_ORDER),
        CASE(DIMS(-2, 3), 0, ORDER_C, 0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             "Extents must be non-negative"),
        CASE(DIMS(5, 3, 7), 0, PERM, AXES(1, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "itemsize must be positive"),
        /* The volume, or a byte offset, overflows. */
        CASE(DIMS(INT64_C(1) << 32, INT64_C(1) << 32), 1, ORDER_C, 0, NULL, STRIDED_ERR_OVERFLOW,
             NULL),
        CASE(DIMS(3, INT64_MAX / 2), 1, ORDER_F, 0, NULL, STRIDED_ERR_OVERFLOW, NULL),
        CASE(DIMS(INT64_C(1) << 61), 8, ORDER_F, 0, NULL, STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    check_dense_inits(cases, ARRAY_LEN(cases));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_init_byte_strides),
        cmocka_unit_test(test_init_64_dims),
        cmocka_unit_test(test_init_refusals),
        cmocka_unit_test(test_init_byte_strides_refusals),
        cmocka_unit_test(test_init_dense),
        cmocka_unit_test(test_init_dense_64_dims),
        cmocka_unit_test(test_init_dense_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
