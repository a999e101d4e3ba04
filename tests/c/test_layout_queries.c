/*
 * Tests of the queries of strided/layout.h: volume, equality and hash,
 * strides and slice offset in bytes, stride order, offset bounds and the
 * memory a layout needs, and the predicates (contiguous in C, F or any
 * order, dense, unique).
 *
 * Some layouts break the invariants of strided_layout_init (an INT64_MIN
 * stride, byte offsets that overflow): they are filled in by hand, as a
 * caller may, to check that the queries refuse them rather than overflow.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

/* A layout and a number a query gives for it. */
typedef struct number_case {
    int line;
    strided_layout in;
    int64_t want;
} number_case;

/* Two layouts, equal or not. */
typedef struct equal_case {
    int line;
    strided_layout a, b;
    bool equal;
} equal_case;

/* A layout and its strides in bytes. */
typedef struct bytes_case {
    int line;
    strided_layout in;
    const int64_t *want;
} bytes_case;

/* A layout and its stride order. */
typedef struct order_case {
    int line;
    strided_layout in;
    int n;
    const int *want;
} order_case;

/* A layout and its offset bounds. */
typedef struct bounds_case {
    int line;
    strided_layout in;
    int64_t lo, hi;
} bounds_case;

/* A layout whose required size fails with code and a reason containing
 * text (any reason when NULL). */
typedef struct size_error {
    int line;
    strided_layout in;
    strided_status code;
    const char *text;
} size_error;

/* A layout, a predicate and its answer. */
typedef struct predicate_case {
    int line;
    strided_layout in;
    bool (*predicate)(const strided_layout *l);
    const char *name;
    bool want;
} predicate_case;

#define IS_C strided_layout_is_contiguous_c, "is_contiguous_c"
#define IS_F strided_layout_is_contiguous_f, "is_contiguous_f"
#define IS_ANY strided_layout_is_contiguous_any, "is_contiguous_any"
#define IS_DENSE strided_layout_is_dense, "is_dense"
#define IS_UNIQUE strided_layout_is_unique, "is_unique"

static void test_volume(void **state)
{
    const number_case cases[] = {
        CASE(mk_c(DIMS(5, 3, 7), 1), 105),
        CASE(mk_c(0, NULL, 1), 1),
        CASE(mk(DIMS(2, 0, 3), I64(5, 7, 1), 1), 0),
        CASE(mk(DIMS(4, 3), I64(0, 0), 1), 12),
        CASE(mk_implicit(DIMS(INT64_MAX), 1), INT64_MAX),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const number_case *c = &cases[i];
        check_i64_(strided_layout_volume(&c->in), c->want, "volume", AT(c));
    }
}

/* Layouts are equal when every field is, whether the strides are implicit
 * included (so implicit strides never equal explicit ones), and equal
 * layouts hash equal. */
static void test_equal_and_hash(void **state)
{
    strided_layout c537 = mk_c(DIMS(5, 3, 7), 4);
    strided_layout from_1 = sliced(c537, s_from(1));
    strided_layout rev = sliced(c537, s_from(1), S_REV);
    const equal_case cases[] = {
        CASE(mk(DIMS(5, 3, 7), I64(21, 7, 1), 4), c537, true),
        CASE(c537, c537, true),
        CASE(mk_implicit(DIMS(5, 3, 7), 4), mk_implicit(DIMS(5, 3, 7), 4), true),
        CASE(rev, sliced(c537, s_from(1), S_REV), true),
        CASE(mk_implicit(DIMS(2, 3), 4), mk_c(DIMS(2, 3), 4), false),
        CASE(mk_implicit(DIMS(2, 3), 4), mk_implicit(DIMS(2, 3), 4), true),
        CASE(mk(0, NULL, NULL, 4), mk(0, NULL, I64(0), 4), false),
        /* Each field on its own. */
        CASE(c537, mk_c(DIMS(5, 3, 8), 4), false),
        CASE(c537, mk_c(DIMS(5, 3, 7), 2), false),
        CASE(c537, mk(DIMS(5, 3, 7), I64(21, 7, 2), 4), false),
        CASE(c537, mk_c(DIMS(5, 21), 4), false),
        CASE(c537, sliced(c537, s_from(0)), true),
        CASE(from_1, mk(DIMS(4, 3, 7), I64(21, 7, 1), 4), false),
        /* The stride of a unit axis counts. */
        CASE(mk(DIMS(1, 3), I64(3, 1), 4), mk(DIMS(1, 3), I64(99, 1), 4), false),
    };

    (void)state;
    assert_layout(from_1, "(4,3,7):(21,7,1)+21", 4);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const equal_case *c = &cases[i];
        check_layout_eq_(&c->a, &c->b, c->equal, AT(c));
        check_layout_eq_(&c->b, &c->a, c->equal, AT(c));
        if (c->equal && strided_layout_hash(&c->a) != strided_layout_hash(&c->b))
            fail_at(AT(c), "equal layouts hash differently\n");
    }
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

static void test_strides_in_bytes(void **state)
{
    const bytes_case cases[] = {
        CASE(mk(DIMS(2, 3, 4), I64(-12, 0, 3), 4), I64(-48, 0, 12)),
        CASE(mk_implicit(DIMS(2, 3), 8), I64(24, 8)),
        /* A 0-d layout writes nothing. */
        CASE(mk_c(0, NULL, 8), NULL),
        CASE(raw(DIMS(2), I64(INT64_MIN / 2), 2), I64(INT64_MIN)),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const bytes_case *c = &cases[i];
        int64_t out[4];
        fill_sentinel(out, sizeof out);
        check_status_(strided_layout_strides_in_bytes(&c->in, out), STRIDED_OK, AT(c));
        for (int k = 0; k < c->in.ndim; k++)
            check_i64_(out[k], c->want[k], "byte stride", AT(c));
        check_untouched_(out + c->in.ndim, sizeof out - sizeof *out * c->in.ndim, "out", AT(c));
    }
}

static void test_strides_in_bytes_overflow_fails(void **state)
{
    const size_error cases[] = {
        CASE(raw(DIMS(2, 2), I64(1, P62), 2), STRIDED_ERR_OVERFLOW, NULL),
        CASE(raw(DIMS(2), I64(INT64_MIN), 2), STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const size_error *c = &cases[i];
        int64_t out[2];
        fill_sentinel(out, sizeof out);
        check_error_(strided_layout_strides_in_bytes(&c->in, out), c->code, "strides_in_bytes",
                     c->text, AT(c));
        check_untouched_(out, sizeof out, "out", AT(c));
    }
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
    assert_error(strided_layout_slice_offset_in_bytes(&s, &out), STRIDED_ERR_OVERFLOW,
                 "slice_offset_in_bytes", NULL);
    assert_untouched(&out, sizeof out);
}

/* The axes from the largest absolute stride to the smallest; ties go to the
 * larger extent, then to the smaller axis. */
static void test_stride_order(void **state)
{
    const order_case cases[] = {
        CASE(mk_c(DIMS(5, 3, 7), 1), AXES(0, 1, 2)),
        CASE(mk_f(DIMS(5, 3, 7), 1), AXES(2, 1, 0)),
        /* A dense layout in a permutation order has that order. */
        CASE(mk_perm(DIMS(5, 3, 7), 1, AXES(2, 0, 1)), AXES(2, 0, 1)),
        CASE(mk_perm(DIMS(2, 3, 4, 5), 1, AXES(3, 0, 2, 1)), AXES(3, 0, 2, 1)),
        CASE(mk_perm(DIMS(2, 3, 4, 5), 1, AXES(1, 3, 0, 2)), AXES(1, 3, 0, 2)),
        /* Implicit strides are in C order. */
        CASE(mk_implicit(DIMS(1, 5, 1, 0), 1), AXES(0, 1, 2, 3)),
        CASE(mk(DIMS(4, 3, 7), I64(21, -7, 1), 1), AXES(0, 1, 2)),
        CASE(mk(DIMS(3, 2), I64(-1, 3), 1), AXES(1, 0)),
        /* Ties: the larger extent first. */
        CASE(mk(DIMS(5, 1, 7), I64(7, 7, 1), 1), AXES(0, 1, 2)),
        CASE(mk(DIMS(5, 1, 7), I64(1, 5, 5), 1), AXES(2, 1, 0)),
        CASE(mk(DIMS(1, 4), I64(1, 1), 1), AXES(1, 0)),
        /* Ties: then the smaller axis first. */
        CASE(mk(DIMS(3, 3, 2), I64(0, 0, 5), 1), AXES(2, 0, 1)),
        /* An empty layout: by extent. */
        CASE(mk_c(DIMS(2, 0, 3), 1), AXES(2, 0, 1)),
        CASE(raw(DIMS(2, 2), I64(INT64_MIN, 1), 1), AXES(0, 1)),
        CASE(raw(DIMS(2, 2), I64(1, INT64_MIN), 1), AXES(1, 0)),
        CASE(raw(DIMS(2, 2), I64(INT64_MAX, INT64_MIN), 1), AXES(1, 0)),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const order_case *c = &cases[i];
        int got[STRIDED_MAX_NDIM];
        check_i64_(c->in.ndim, c->n, "ndim", AT(c));
        strided_layout_stride_order(&c->in, got);
        for (int k = 0; k < c->n; k++)
            if (got[k] != c->want[k])
                fail_at(AT(c), "stride_order[%d] = %d, expected %d\n", k, got[k], c->want[k]);
    }
}

/* The smallest and the largest element offset (slice offset included); an
 * empty layout has none: (0, -1). */
static void test_offset_bounds(void **state)
{
    strided_layout worked = sliced(mk_c(DIMS(5, 3, 7), 1), s_from(1), S_REV);
    strided_layout empty_row = sliced(mk_c(DIMS(3, 4), 1), S_AT(1), S_(2, 2, 1));
    const bounds_case cases[] = {
        CASE(mk_c(DIMS(5, 4), 4), 0, 19),
        CASE(worked, 21, 104),
        CASE(mk_implicit(DIMS(2, 3), 4), 0, 5),
        CASE(mk(DIMS(5, 4), I64(-4, 1), 1), -16, 3),
        CASE(mk(DIMS(4, 3), I64(0, 1), 1), 0, 2),
        CASE(mk_c(0, NULL, 4), 0, 0),
        CASE(mk(DIMS(3, 0), I64(-5, 7), 1), 0, -1),
        CASE(mk_implicit(DIMS(0, 4), 1), 0, -1),
        CASE(empty_row, 0, -1),
        CASE(raw(DIMS(2, 2), I64(INT64_MIN, INT64_MAX), 1), INT64_MIN, INT64_MAX),
    };

    (void)state;
    assert_layout(worked, "(4,3,7):(21,-7,1)+35", 1);
    assert_layout(empty_row, "(0,):(0,)+4", 1);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const bounds_case *c = &cases[i];
        int64_t lo = 12345, hi = 12345;
        strided_layout_offset_bounds(&c->in, &lo, &hi);
        check_i64_(lo, c->lo, "min offset", AT(c));
        check_i64_(hi, c->hi, "max offset", AT(c));
    }
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

/* The bytes from the start of the memory to the end of the last element;
 * 0 for an empty layout. */
static void test_required_size(void **state)
{
    const number_case cases[] = {
        CASE(mk_c(DIMS(5, 4), 4), 80),
        CASE(sliced(mk_c(DIMS(5, 3, 7), 1), s_from(1), S_REV), 105),
        CASE(sliced(mk_c(DIMS(5, 6), 4), S_ALL, S_(1, 5, 1)), 116),
        CASE(mk(DIMS(4, 3), I64(0, 1), 2), 6),
        CASE(mk_implicit(0, NULL, 8), 8),
        CASE(mk(DIMS(3, 0), I64(-5, -1), 4), 0),
        CASE(mk_c(DIMS(0), 4), 0),
        CASE(mk(DIMS(2), I64(INT64_MAX - 1), 1), INT64_MAX),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const number_case *c = &cases[i];
        int64_t n = 7;
        check_status_(strided_layout_required_size_in_bytes(&c->in, &n), STRIDED_OK, AT(c));
        check_i64_(n, c->want, "required size", AT(c));
    }
}

static void test_required_size_refusals(void **state)
{
    const size_error cases[] = {
        CASE(mk(DIMS(5, 4), I64(-4, 1), 1), STRIDED_ERR_INVALID_ARGUMENT,
             "Allocation size for a layout that maps elements to negative "
             "memory offsets is ambiguous. The layout's min_offset is -16."),
        CASE(mk(DIMS(2), I64(INT64_MAX), 1), STRIDED_ERR_OVERFLOW, NULL),
        CASE(raw(DIMS(2), I64(P62), 2), STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const size_error *c = &cases[i];
        int64_t n;
        fill_sentinel(&n, sizeof n);
        check_error_(strided_layout_required_size_in_bytes(&c->in, &n), c->code, "required_size",
                     c->text, AT(c));
        check_untouched_(&n, sizeof n, "size", AT(c));
    }
}

static void test_predicates(void **state)
{
    strided_layout c537 = mk_c(DIMS(5, 3, 7), 4), f537 = mk_f(DIMS(5, 3, 7), 4);
    strided_layout rows = sliced(c537, s_from(1));
    strided_layout gap = sliced(c537, S_ALL, S_ALL, s_to(-1));
    strided_layout imp23 = mk_implicit(DIMS(2, 3), 4);
    strided_layout imp43 = mk_implicit(DIMS(4, 3), 4);
    strided_layout empty = mk(DIMS(0, 3), I64(5, 7), 4);
    strided_layout zero_d = mk(0, NULL, I64(0), 4);
    strided_layout bcast = mk(DIMS(4, 3), I64(0, 1), 4);
    strided_layout p = permuted(c537, 2, 0, 1);
    strided_layout empty_row = sliced(mk_c(DIMS(3, 4), 1), S_AT(1), S_(2, 2, 1));
    const predicate_case cases[] = {
        CASE(c537, IS_C, true),
        CASE(f537, IS_C, false),
        /* A unit axis's stride does not matter. */
        CASE(mk(DIMS(5, 1, 7), I64(7, 99, 1), 4), IS_C, true),
        CASE(rows, IS_C, true),
        CASE(gap, IS_C, false),
        CASE(imp23, IS_C, true),
        CASE(empty, IS_C, true),
        CASE(zero_d, IS_C, true),
        CASE(mk(DIMS(3), I64(-1), 4), IS_C, false),
        CASE(bcast, IS_C, false),
        CASE(c537, IS_F, false),
        CASE(f537, IS_F, true),
        CASE(mk(DIMS(1, 5), I64(5, 1), 4), IS_F, true),
        CASE(empty, IS_F, true),
        CASE(zero_d, IS_F, true),
        CASE(imp23, IS_F, false),
        CASE(mk_implicit(DIMS(1, 5, 1), 4), IS_F, true),
        CASE(mk_implicit(DIMS(2, 0), 4), IS_F, true),
        CASE(mk_implicit(0, NULL, 4), IS_F, true),
        /* Contiguous in some order. */
        CASE(c537, IS_ANY, true),
        CASE(mk_perm(DIMS(5, 3, 7), 4, AXES(1, 2, 0)), IS_ANY, true),
        CASE(f537, IS_ANY, true),
        CASE(mk(DIMS(3, 1, 4), I64(4, 12, 1), 4), IS_ANY, true),
        CASE(gap, IS_ANY, false),
        CASE(sliced(c537, S_ALL, S_REV), IS_ANY, false),
        CASE(bcast, IS_ANY, false),
        CASE(imp43, IS_ANY, true),
        CASE(empty, IS_ANY, true),
        CASE(rows, IS_ANY, true),
        /* Dense: contiguous from offset 0. */
        CASE(c537, IS_DENSE, true),
        CASE(mk_perm(DIMS(5, 3, 7), 4, AXES(2, 0, 1)), IS_DENSE, true),
        CASE(rows, IS_DENSE, false),
        CASE(gap, IS_DENSE, false),
        CASE(imp43, IS_DENSE, true),
        CASE(empty, IS_DENSE, true),
        CASE(empty_row, IS_ANY, true),
        CASE(empty_row, IS_DENSE, false),
        /* No two indices at one offset. */
        CASE(c537, IS_UNIQUE, true),
        CASE(p, IS_UNIQUE, true),
        CASE(sliced(p, S_REV, S_(1, 5, 2), s_any(false, 0, false, 0, -3)), IS_UNIQUE, true),
        CASE(imp43, IS_UNIQUE, true),
        CASE(mk(DIMS(1, 3), I64(0, 1), 4), IS_UNIQUE, true),
        /* Offsets {0,3,2,5,4,7} are distinct, but the cheap test may report
         * a unique layout as not unique when its axes interleave. */
        CASE(mk(DIMS(3, 2), I64(2, 3), 1), IS_UNIQUE, false),
        CASE(bcast, IS_UNIQUE, false),
        CASE(mk(DIMS(3, 1), I64(0, 5), 4), IS_UNIQUE, false),
        CASE(mk(DIMS(3, 3), I64(1, 1), 4), IS_UNIQUE, false),
        CASE(mk(DIMS(0, 3), I64(0, 0), 4), IS_UNIQUE, true),
        CASE(mk(DIMS(3, 0), I64(0, 0), 4), IS_UNIQUE, true),
        CASE(raw(DIMS(2, 2), I64(INT64_MIN, 1), 1), IS_UNIQUE, true),
        CASE(raw(DIMS(2, 2), I64(INT64_MIN, INT64_MAX), 1), IS_UNIQUE, true),
    };

    (void)state;
    assert_i64(empty_row.slice_offset, 4);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const predicate_case *c = &cases[i];
        if (c->predicate(&c->in) != c->want)
            fail_at(AT(c), "%s is %s, expected %s\n", c->name, c->want ? "false" : "true",
                    c->want ? "true" : "false");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_volume),
        cmocka_unit_test(test_equal_and_hash),
        cmocka_unit_test(test_equal_ignores_entries_past_ndim),
        cmocka_unit_test(test_hash_after_dropping_axes),
        cmocka_unit_test(test_strides_in_bytes),
        cmocka_unit_test(test_strides_in_bytes_overflow_fails),
        cmocka_unit_test(test_slice_offset_in_bytes),
        cmocka_unit_test(test_slice_offset_in_bytes_overflow_fails),
        cmocka_unit_test(test_stride_order),
        cmocka_unit_test(test_offset_bounds),
        cmocka_unit_test(test_offset_bounds_null_outputs),
        cmocka_unit_test(test_required_size),
        cmocka_unit_test(test_required_size_refusals),
        cmocka_unit_test(test_predicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
