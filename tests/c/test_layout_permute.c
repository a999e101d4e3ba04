/*
 * Tests of strided_layout_permute: the axes in a new order, given as a
 * permutation whose entries may count from the end, and each malformed
 * permutation with its message.
 */
#include "test_util.h"

static void test_permute_views(void **state)
{
    strided_layout c234 = mk_c(DIMS(2, 3, 4), 4);
    const axes_case cases[] = {
        CASE(c234, AXES(2, 0, 1), STRIDED_OK, "(4,2,3):(1,12,4)"),
        CASE(c234, AXES(-1, 0, -2), STRIDED_OK, "(4,2,3):(1,12,4)"),
        /* Implicit strides give explicit ones, even for the identity. */
        CASE(mk_implicit(DIMS(2, 3), 4), AXES(0, 1), STRIDED_OK, "(2,3):(3,1)"),
        CASE(mk_implicit(0, NULL, 4), 0, NULL, STRIDED_OK, "():()"),
        CASE(sliced(mk_c(DIMS(5, 3, 7), 2), s_from(1), S_REV), AXES(2, 1, 0), STRIDED_OK,
             "(7,3,4):(1,-7,21)+35"),
    };

    (void)state;
    check_axes_cases(strided_layout_permute, "permute", cases, ARRAY_LEN(cases));
}

static void test_permute_64_dims(void **state)
{
    int64_t shape[64];
    int axes[64];
    strided_layout d, p;
    int k;

    (void)state;
    SHAPE64(shape, 3, 2, 17, 3, 30, 4, 45, 5, 63, 6);
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

static void test_permute_refusals(void **state)
{
    strided_layout c0d = mk_c(0, NULL, 4), c253 = mk_c(DIMS(2, 5, 3), 4);
    strided_layout c567 = mk_c(DIMS(5, 6, 7), 4);
    const axes_case cases[] = {
        CASE(c0d, AXES(5), STRIDED_ERR_INVALID_ARGUMENT,
             "Permutation must have the same length as the number of "
             "dimensions, got 1 for 0D tensor."),
        CASE(mk_c(DIMS(1), 4), AXES(0, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "Permutation must have the same length as the number of "
             "dimensions, got 2 for 1D tensor."),
        CASE(mk_c(DIMS(2, 3, 4), 4), AXES(1, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "Permutation must have the same length as the number of "
             "dimensions, got 2 for 3D tensor."),
        CASE(c0d, -1, NULL, STRIDED_ERR_INVALID_ARGUMENT,
             "the same length as the number of dimensions"),
        /* A repeated axis is named as it was given. */
        CASE(c253, AXES(1, 0, 1), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid permutation: axis 1 appears multiple times."),
        CASE(c253, AXES(1, 0, -2), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid permutation: axis -2 appears multiple times."),
        CASE(c567, AXES(1, 3, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid permutation: axis 3 out of range for 3D tensor"),
        CASE(c567, AXES(1, -2000, 0), STRIDED_ERR_INVALID_ARGUMENT,
             "Invalid permutation: axis -2000 out of range for 3D tensor"),
    };

    (void)state;
    check_axes_cases(strided_layout_permute, "permute", cases, ARRAY_LEN(cases));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permute_views),
        cmocka_unit_test(test_permute_64_dims),
        cmocka_unit_test(test_permute_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
