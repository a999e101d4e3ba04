/*
 * Tests of the DLPack ABI of strided/dlpack.h: the structs have DLPack's
 * sizes and field offsets on LP64 platforms, and the constants DLPack's
 * values.
 */
#include "test_util.h"

#include "strided/dlpack.h"

/* A size or a field offset, and DLPack's. */
typedef struct abi_case {
    int line;
    const char *what;
    size_t got, want;
} abi_case;

#define SIZE(type, want) CASE("sizeof(" #type ")", sizeof(type), (want))
#define OFFSET(type, field, want) CASE(#type "." #field, offsetof(type, field), (want))

static void test_abi_matches_dlpack_on_lp64(void **state)
{
    const abi_case cases[] = {
        SIZE(strided_device, 8),
        OFFSET(strided_device, device_type, 0),
        OFFSET(strided_device, device_id, 4),
        SIZE(strided_dtype, 4),
        OFFSET(strided_dtype, code, 0),
        OFFSET(strided_dtype, bits, 1),
        OFFSET(strided_dtype, lanes, 2),
        SIZE(strided_dl_tensor, 48),
        OFFSET(strided_dl_tensor, data, 0),
        OFFSET(strided_dl_tensor, device, 8),
        OFFSET(strided_dl_tensor, ndim, 16),
        OFFSET(strided_dl_tensor, dtype, 20),
        OFFSET(strided_dl_tensor, shape, 24),
        OFFSET(strided_dl_tensor, strides, 32),
        OFFSET(strided_dl_tensor, byte_offset, 40),
        SIZE(strided_dl_managed_tensor, 64),
        OFFSET(strided_dl_managed_tensor, dl_tensor, 0),
        OFFSET(strided_dl_managed_tensor, manager_ctx, 48),
        OFFSET(strided_dl_managed_tensor, deleter, 56),
        SIZE(strided_dl_version, 8),
        OFFSET(strided_dl_version, major, 0),
        OFFSET(strided_dl_version, minor, 4),
        SIZE(strided_dl_managed_tensor_versioned, 80),
        OFFSET(strided_dl_managed_tensor_versioned, version, 0),
        OFFSET(strided_dl_managed_tensor_versioned, manager_ctx, 8),
        OFFSET(strided_dl_managed_tensor_versioned, deleter, 16),
        OFFSET(strided_dl_managed_tensor_versioned, flags, 24),
        OFFSET(strided_dl_managed_tensor_versioned, dl_tensor, 32),
    };

    (void)state;
    if (sizeof(void *) != 8 || sizeof(long) != 8)
        skip();
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const abi_case *c = &cases[i];
        check_i64_((int64_t)c->got, (int64_t)c->want, c->what, AT(c));
    }
}

static void test_abi_constants(void **state)
{
    (void)state;
    assert_int_equal(STRIDED_DLPACK_MAJOR_VERSION, 1);
    assert_int_equal(STRIDED_DLPACK_MINOR_VERSION, 3);
    assert_true(STRIDED_DLPACK_FLAG_READ_ONLY == 1);
    assert_true(STRIDED_DLPACK_FLAG_IS_COPIED == 2);
    assert_true(STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED == 4);
    assert_int_equal(STRIDED_DEVICE_CPU, 1);
    assert_int_equal(STRIDED_DEVICE_CUDA, 2);
    assert_int_equal(STRIDED_DEVICE_CUDA_HOST, 3);
    assert_int_equal(STRIDED_DEVICE_ROCM, 10);
    assert_int_equal(STRIDED_DEVICE_CUDA_MANAGED, 13);
    assert_int_equal(STRIDED_DTYPE_BOOL, 6);
    assert_int_equal(STRIDED_DTYPE_FLOAT4_E2M1FN, 17);
    assert_string_equal(STRIDED_DLPACK_CAPSULE, "dltensor");
    assert_string_equal(STRIDED_DLPACK_CAPSULE_VERSIONED, "dltensor_versioned");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abi_matches_dlpack_on_lp64),
        cmocka_unit_test(test_abi_constants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
