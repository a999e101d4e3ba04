/*
 * Tests of strided_layout_flatten, strided_layout_flatten_mask and
 * strided_layout_flattened_axis_mask: which neighbouring axes merge into one
 * (bit j of a mask lets axis j merge into the group on its left), the
 * results of an axis range or a mask, and the refused ranges.
 *
 * Merge rule: axis j joins the group on its left when the group's stride
 * equals strides[j] * shape[j]. Unit axes never block a merge and never set
 * a group's stride; a group of unit axes only takes its innermost stride.
 */
#include "test_util.h"

#define P62 (INT64_C(1) << 62)

/* A flatten of the axes start..end and what it gives: with code
 * STRIDED_OK, the layout `want` as text (with the input's itemsize and
 * explicit strides); otherwise that failure, with a reason containing `want`
 * (any reason when NULL), and the output untouched. */
typedef struct flatten_case {
    int line;
    strided_layout in;
    int start, end;
    strided_status code;
    const char *want;
} flatten_case;

/* A flatten by a mask, and the layout it gives. */
typedef struct flatten_mask_case {
    int line;
    strided_layout in;
    uint64_t mask;
    const char *want;
} flatten_mask_case;

/* A layout and its flattened axis mask. */
typedef struct axis_mask_case {
    int line;
    strided_layout in;
    uint64_t mask;
} axis_mask_case;

static strided_layout flattened_mask_at(strided_layout l, uint64_t mask, const char *file, int line)
{
    strided_layout out;
    check_status_(strided_layout_flatten_mask(&l, mask, &out), STRIDED_OK, file, line);
    return out;
}
#define flattened_mask(l, mask) flattened_mask_at((l), (mask), __FILE__, __LINE__)

static uint64_t mask_at(strided_layout l, const char *file, int line)
{
    uint64_t m = 0;
    check_status_(strided_layout_flattened_axis_mask(&l, &m), STRIDED_OK, file, line);
    return m;
}
#define mask_of(l) mask_at((l), __FILE__, __LINE__)

#define assert_mask_eq(got, want)                                                                \
    do {                                                                                         \
        uint64_t g_ = (got), w_ = (want);                                                        \
        if (g_ != w_)                                                                            \
            fail_at(__FILE__, __LINE__, "mask 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", g_, w_); \
    } while (0)

static void check_flattens(const flatten_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const flatten_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_flatten(&c->in, c->start, c->end, &out), &out, c->code,
                              "flatten", c->want, c->in.itemsize, AT(c));
    }
}

/* (5,1,2,4,3)[:, :, :, :, ::-2], a case of cuda.core's tests with axis
 * ranges. */
static strided_layout flatten_row5(void)
{
    strided_layout d = mk_c(DIMS(5, 1, 2, 4, 3), 8);
    return sliced(d, S_ALL, S_ALL, S_ALL, S_ALL, strided_index_all(-2));
}

/* A 64-d shape with the extents 2, 3, 4, 5 on axes 0, 21, 42, 63. */
static strided_layout dense_64d(bool implicit)
{
    int64_t shape[64];

    SHAPE64(shape, 0, 2, 21, 3, 42, 4, 63, 5);
    return implicit ? mk_implicit(64, shape, 2) : mk_c(64, shape, 2);
}

static void test_flatten_axis_ranges(void **state)
{
    strided_layout z = mk_c(0, NULL, 4), zi = mk_implicit(0, NULL, 4);
    strided_layout d12345 = mk_c(DIMS(1, 2, 3, 4, 5), 2);
    strided_layout e12305 = mk_c(DIMS(1, 2, 3, 0, 5), 2);
    strided_layout row5 = flatten_row5();
    strided_layout c5437 = mk_c(DIMS(5, 4, 3, 7), 4);
    strided_layout i234 = mk_implicit(DIMS(2, 3, 4), 4);
    const flatten_case cases[] = {
        /* (0, -1) flattens a 0-d layout to one element. */
        CASE(z, 0, -1, STRIDED_OK, "(1,):(1,)"),
        CASE(zi, 0, -1, STRIDED_OK, "(1,):(1,)"),
        CASE(sliced(mk_c(DIMS(12), 4), S_ALL), 0, -1, STRIDED_OK, "(12,):(1,)"),
        CASE(d12345, 0, -1, STRIDED_OK, "(120,):(1,)"),
        CASE(mk_implicit(DIMS(1, 2, 3, 4, 5), 2), 0, -1, STRIDED_OK, "(120,):(1,)"),
        CASE(e12305, 0, -1, STRIDED_OK, "(0,):(0,)"),
        CASE(mk_implicit(DIMS(1, 2, 3, 0, 5), 2), 0, -1, STRIDED_OK, "(0,):(0,)"),
        CASE(dense_64d(false), 0, -1, STRIDED_OK, "(120,):(1,)"),
        CASE(dense_64d(true), 0, -1, STRIDED_OK, "(120,):(1,)"),
        /* Negative steps merge where the strides chain. */
        CASE(row5, 0, -1, STRIDED_OK, "(40,2):(3,-2)+2"),
        CASE(row5, 0, 2, STRIDED_OK, "(10,4,2):(12,3,-2)+2"),
        CASE(row5, 1, 2, STRIDED_OK, "(5,2,4,2):(24,12,3,-2)+2"),
        CASE(row5, 1, 3, STRIDED_OK, "(5,8,2):(24,3,-2)+2"),
        CASE(row5, 1, 4, STRIDED_OK, "(5,8,2):(24,3,-2)+2"),
        CASE(row5, -4, -2, STRIDED_OK, "(5,8,2):(24,3,-2)+2"),
        CASE(sliced(mk_c(DIMS(5, 2, 4, 3), 1), S_ALL, S_REV, S_ALL, S_ALL), 0, -1, STRIDED_OK,
             "(5,2,12):(24,-12,1)+12"),
        CASE(sliced(mk_c(DIMS(5, 7, 4, 3), 1), S_ALL, S_REV, S_REV), 0, -1, STRIDED_OK,
             "(5,28,3):(84,-3,1)+81"),
        CASE(permuted(c5437, 2, 3, 0, 1), 0, -1, STRIDED_OK, "(21,20):(1,21)"),
        CASE(permuted(c5437, 3, 2, 0, 1), 0, -1, STRIDED_OK, "(7,3,20):(1,7,21)"),
        /* Unit axes with foreign strides merge. */
        CASE(permuted(mk_c(DIMS(1, 3, 4), 4), 1, 0, 2), 0, -1, STRIDED_OK, "(12,):(1,)"),
        CASE(mk_f(DIMS(5, 1, 7), 4), 0, -1, STRIDED_OK, "(5,7):(1,5)"),
        CASE(mk(DIMS(1, 1, 3), I64(7, 5, 2), 4), 0, -1, STRIDED_OK, "(3,):(2,)"),
        CASE(mk(DIMS(1, 1), I64(7, 5), 4), 0, -1, STRIDED_OK, "(1,):(5,)"),
        /* As NumPy and PyTorch: start == end merges nothing, also after
         * negative axes count from the end. */
        CASE(i234, 1, 1, STRIDED_OK, "(2,3,4):(12,4,1)"),
        CASE(i234, -1, 2, STRIDED_OK, "(2,3,4):(12,4,1)"),
        CASE(sliced(mk_c(DIMS(5, 6), 16), s_from(2)), 0, -1, STRIDED_OK, "(18,):(1,)+12"),
    };

    (void)state;
    assert_layout(row5, "(5,1,2,4,2):(24,24,12,3,-2)+2", 8);
    check_flattens(cases, ARRAY_LEN(cases));
}

static void test_flatten_refusals(void **state)
{
    strided_layout i234 = mk_implicit(DIMS(2, 3, 4), 4);
    strided_layout c234 = mk_c(DIMS(2, 3, 4), 4);
    const flatten_case cases[] = {
        /* As NumPy and PyTorch, a start after the end (after negative axes
         * count from the end) is an error. */
        CASE(i234, 2, 1, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axes: start axis 2 comes after end axis 1 for 3D tensor"),
        CASE(i234, -1, 0, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid axes: start axis -1 comes after end axis 0 for 3D tensor"),
        CASE(i234, 2, -2, STRIDED_ERR_INVALID_ARGUMENT, "start axis 2 comes after end axis -2"),
        CASE(c234, 3, -1, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid start axis: 3 out of range for 3D tensor"),
        CASE(c234, 0, -4, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid end axis: -4 out of range for 3D tensor"),
        CASE(mk_c(0, NULL, 4), 0, 0, STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid start axis: 0 out of range for 0D tensor"),
        CASE(mk(DIMS(2, 2), I64(1, P62), 1), 0, -1, STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    check_flattens(cases, ARRAY_LEN(cases));
}

static void test_flatten_by_mask(void **state)
{
    strided_layout c23 = mk_c(DIMS(2, 3), 4);
    const flatten_mask_case cases[] = {
        CASE(mk_c(0, NULL, 4), 0, "(1,):(1,)"),
        CASE(mk_implicit(0, NULL, 4), ~UINT64_C(0), "(1,):(1,)"),
        /* Bit 0 and the bits past the last axis are ignored. */
        CASE(c23, ~UINT64_C(0), "(6,):(1,)"),
        CASE(c23, UINT64_C(1) | (UINT64_C(1) << 5), "(2,3):(3,1)"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const flatten_mask_case *c = &cases[i];
        strided_layout out;
        fill_sentinel(&out, sizeof out);
        check_layout_outcome_(strided_layout_flatten_mask(&c->in, c->mask, &out), &out, STRIDED_OK,
                              "flatten", c->want, c->in.itemsize, AT(c));
    }
}

/* flatten_mask(l, flattened_axis_mask(l)) is flatten(l, 0, -1), whose mask
 * is 0. */
static void test_flatten_invariants(void **state)
{
    strided_layout s = flatten_row5();
    strided_layout full, by_mask;

    (void)state;
    assert_ok(strided_layout_flatten(&s, 0, -1, &full));
    by_mask = flattened_mask(s, mask_of(s));
    assert_layout_eq(full, by_mask);
    assert_mask_eq(mask_of(full), 0);
}

static void test_flattened_axis_masks(void **state)
{
    int64_t every_7th[64];
    strided_layout foreign = permuted(mk_c(DIMS(1, 3, 4), 4), 1, 0, 2);
    strided_layout f517 = mk_f(DIMS(5, 1, 7), 4);
    strided_layout c5437 = mk_c(DIMS(5, 4, 3, 7), 4);
    int64_t spread[64];

    for (int k = 0; k < 64; k++)
        every_7th[k] = k % 7 == 0 ? 2 : 1;
    SHAPE64(spread, 5, 2, 17, 3, 40, 4, 63, 5);
    const axis_mask_case cases[] = {
        CASE(mk_c(0, NULL, 4), 0),
        CASE(sliced(mk_c(DIMS(12), 4), S_ALL), 0),
        CASE(mk_c(DIMS(1, 2, 3, 4, 5), 2), 0x1E),
        CASE(mk_implicit(DIMS(1, 2, 3, 4, 5), 2), 0x1E),
        CASE(mk_c(DIMS(1, 2, 3, 0, 5), 2), 0x1E),
        CASE(mk_implicit(DIMS(1, 2, 3, 0, 5), 2), 0x1E),
        CASE(mk_c(DIMS(4, 5, 3), 4), 0x6),
        CASE(mk(DIMS(4, 5, 3), I64(1, 12, 4), 4), 0x4),
        /* Implicit strides merge every axis: bits 1 to ndim - 1. */
        CASE(mk_implicit(0, NULL, 1), 0),
        CASE(mk_implicit(DIMS(5), 1), 0),
        CASE(mk_implicit(DIMS(2, 0, 3), 1), 0x6),
        CASE(mk_implicit(64, every_7th, 1), STRIDED_AXES_MASK_ALL),
        CASE(dense_64d(false), STRIDED_AXES_MASK_ALL),
        CASE(mk_c(64, spread, 2), STRIDED_AXES_MASK_ALL),
        /* Sliced and permuted layouts. */
        CASE(flatten_row5(), 0xE),
        CASE(sliced(mk_c(DIMS(5, 2, 4, 3), 1), S_ALL, S_REV, S_ALL, S_ALL), 0x8),
        CASE(sliced(mk_c(DIMS(5, 7, 4, 3), 1), S_ALL, S_REV, S_REV), 0x4),
        CASE(permuted(c5437, 2, 3, 0, 1), 0xA),
        CASE(permuted(c5437, 3, 2, 0, 1), 0x8),
        /* Unit axes with foreign strides merge. */
        CASE(foreign, 0x6),
        CASE(f517, 0x2),
    };

    (void)state;
    assert_layout(foreign, "(3,1,4):(4,12,1)", 4);
    assert_layout(f517, "(5,1,7):(1,5,5)", 4);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const axis_mask_case *c = &cases[i];
        uint64_t m = 0xDEAD;
        check_status_(strided_layout_flattened_axis_mask(&c->in, &m), STRIDED_OK, AT(c));
        if (m != c->mask)
            fail_at(AT(c), "mask 0x%" PRIx64 ", expected 0x%" PRIx64 "\n", m, c->mask);
    }
}

static void test_flattened_axis_mask_overflow_fails(void **state)
{
    /* Merging axis 1 needs strides[1] * shape[1] = 2^63. */
    strided_layout l = mk(DIMS(2, 2), I64(1, P62), 1);
    uint64_t m;

    (void)state;
    fill_sentinel(&m, sizeof m);
    assert_error(strided_layout_flattened_axis_mask(&l, &m), STRIDED_ERR_OVERFLOW, "flatten", NULL);
    assert_untouched(&m, sizeof m);
}

/* Masks of layouts with the same ndim, combined with &, flatten them
 * alike. */
static void test_flatten_together(void **state)
{
    strided_layout a = mk_c(DIMS(4, 5, 3), 4);
    strided_layout b = mk(DIMS(4, 5, 3), I64(1, 12, 4), 4);
    uint64_t m = mask_of(a) & mask_of(b);
    strided_layout fa = flattened_mask(a, m), fb = flattened_mask(b, m);

    (void)state;
    assert_mask_eq(m, 0x4);
    assert_layout(fa, "(4,15):(15,1)", 4);
    assert_layout(fb, "(4,15):(1,4)", 4);
}

static void test_flatten_together_dense_permutations(void **state)
{
    /* A case of cuda.core's tests: (4,5,11,2,3,7) in order (5,3,4,0,1,2)
     * and (3,8,5,6,7,9) in order (0,1,3,4,5,2) give (20,11,6,7) in order
     * (3,2,0,1) and (24,5,42,9) in order (0,2,3,1). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flatten_axis_ranges),
        cmocka_unit_test(test_flatten_refusals),
        cmocka_unit_test(test_flatten_by_mask),
        cmocka_unit_test(test_flatten_invariants),
        cmocka_unit_test(test_flattened_axis_masks),
        cmocka_unit_test(test_flattened_axis_mask_overflow_fails),
        cmocka_unit_test(test_flatten_together),
        cmocka_unit_test(test_flatten_together_dense_permutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
