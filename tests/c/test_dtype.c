/*
 * Tests of the element types (strided_dtype, DLPack's data type): the
 * itemsize and the name of every supported type, each rejected type with
 * its message, the snprintf-like text, and equality.
 */
#include "test_util.h"

#include "strided/dlpack.h"
#include "strided/view.h"

static strided_dtype DT(int code, int bits, int lanes)
{
    strided_dtype d = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
    return d;
}

#define F32 DT(STRIDED_DTYPE_FLOAT, 32, 1)

/* A supported type: its size and its name as NumPy and ml_dtypes spell
 * it. */
typedef struct supported_case {
    int line;
    int code, bits;
    int itemsize;
    const char *name;
} supported_case;

/* A rejected type and a part of its message. */
typedef struct rejected_case {
    int line;
    strided_dtype dtype;
    const char *text;
} rejected_case;

static void test_dtype_itemsize_and_name_of_every_supported_type(void **state)
{
    const supported_case cases[] = {
        CASE(STRIDED_DTYPE_INT, 8, 1, "int8"),
        CASE(STRIDED_DTYPE_INT, 16, 2, "int16"),
        CASE(STRIDED_DTYPE_INT, 32, 4, "int32"),
        CASE(STRIDED_DTYPE_INT, 64, 8, "int64"),
        CASE(STRIDED_DTYPE_UINT, 8, 1, "uint8"),
        CASE(STRIDED_DTYPE_UINT, 16, 2, "uint16"),
        CASE(STRIDED_DTYPE_UINT, 32, 4, "uint32"),
        CASE(STRIDED_DTYPE_UINT, 64, 8, "uint64"),
        CASE(STRIDED_DTYPE_FLOAT, 16, 2, "float16"),
        CASE(STRIDED_DTYPE_FLOAT, 32, 4, "float32"),
        CASE(STRIDED_DTYPE_FLOAT, 64, 8, "float64"),
        CASE(STRIDED_DTYPE_BFLOAT, 16, 2, "bfloat16"),
        CASE(STRIDED_DTYPE_COMPLEX, 64, 8, "complex64"),
        CASE(STRIDED_DTYPE_COMPLEX, 128, 16, "complex128"),
        CASE(STRIDED_DTYPE_BOOL, 8, 1, "bool"),
        CASE(STRIDED_DTYPE_FLOAT8_E3M4, 8, 1, "float8_e3m4"),
        CASE(STRIDED_DTYPE_FLOAT8_E4M3, 8, 1, "float8_e4m3"),
        CASE(STRIDED_DTYPE_FLOAT8_E4M3B11FNUZ, 8, 1, "float8_e4m3b11fnuz"),
        CASE(STRIDED_DTYPE_FLOAT8_E4M3FN, 8, 1, "float8_e4m3fn"),
        CASE(STRIDED_DTYPE_FLOAT8_E4M3FNUZ, 8, 1, "float8_e4m3fnuz"),
        CASE(STRIDED_DTYPE_FLOAT8_E5M2, 8, 1, "float8_e5m2"),
        CASE(STRIDED_DTYPE_FLOAT8_E5M2FNUZ, 8, 1, "float8_e5m2fnuz"),
        CASE(STRIDED_DTYPE_FLOAT8_E8M0FNU, 8, 1, "float8_e8m0fnu"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const supported_case *c = &cases[i];
        int size = -7;
        char buf[64];
        check_status_(strided_dtype_itemsize(DT(c->code, c->bits, 1), &size), STRIDED_OK, AT(c));
        check_i64_(size, c->itemsize, c->name, AT(c));
        size_t n = strided_dtype_format(DT(c->code, c->bits, 1), buf, sizeof buf);
        _assert_string_equal(buf, c->name, AT(c));
        check_i64_((int64_t)n, (int64_t)strlen(c->name), "name length", AT(c));
    }
}

/* A rejected type: STRIDED_ERR_UNSUPPORTED, a message naming it, the
 * output untouched, and a description as its formatted name. */
static void test_dtype_rejects(void **state)
{
    const rejected_case cases[] = {
        CASE(DT(STRIDED_DTYPE_FLOAT, 32, 2), "lanes=2"),
        CASE(DT(STRIDED_DTYPE_FLOAT, 32, 0), "lanes=0"),
        CASE(DT(STRIDED_DTYPE_INT, 3, 1), "bits=3"),
        CASE(DT(STRIDED_DTYPE_UINT, 12, 1), "bits=12"),
        CASE(DT(STRIDED_DTYPE_INT, 4, 3), "lanes=3"),
        CASE(DT(STRIDED_DTYPE_FLOAT, 0, 1), "float0"),
        CASE(DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 8, 1), "float6_e2m3fn"),
        CASE(DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 4, 1), "float6_e3m2fn"),
        CASE(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 6, 1), "float4_e2m1fn"),
        /* Even a producer that pads float4 to 8 bits per element: padding is
         * the flag's to say, the bits stay the type's. */
        CASE(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 8, 1), "float4_e2m1fn"),
        CASE(DT(STRIDED_DTYPE_OPAQUE_HANDLE, 64, 1), "opaque"),
        CASE(DT(99, 32, 1), "99"),
        CASE(DT(STRIDED_DTYPE_INT, 128, 1), "int128"),
        CASE(DT(STRIDED_DTYPE_FLOAT, 8, 1), "float8"),
        CASE(DT(STRIDED_DTYPE_COMPLEX, 32, 1), "complex32"),
        CASE(DT(STRIDED_DTYPE_BOOL, 16, 1), "bool"),
        CASE(DT(STRIDED_DTYPE_FLOAT8_E4M3FN, 16, 1), "float8_e4m3fn"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const rejected_case *c = &cases[i];
        int size = -7;
        char buf[64], want[64];
        check_error_(strided_dtype_itemsize(c->dtype, &size), STRIDED_ERR_UNSUPPORTED,
                     "dtype_itemsize", c->text, AT(c));
        check_i64_(size, -7, "itemsize", AT(c));
        snprintf(want, sizeof want, "dtype(code=%u, bits=%u, lanes=%u)", (unsigned)c->dtype.code,
                 (unsigned)c->dtype.bits, (unsigned)c->dtype.lanes);
        strided_dtype_format(c->dtype, buf, sizeof buf);
        _assert_string_equal(buf, want, AT(c));
    }
}

static void test_dtype_itemsize_without_out(void **state)
{
    (void)state;
    assert_error(strided_dtype_itemsize(F32, NULL), STRIDED_ERR_INVALID_ARGUMENT, "dtype_itemsize",
                 NULL);
}

static void test_dtype_format_is_like_snprintf(void **state)
{
    char buf[8];
    (void)state;
    /* size 0: nothing written, the full length returned. */
    assert_i64(strided_dtype_format(DT(STRIDED_DTYPE_COMPLEX, 128, 1), NULL, 0), 10);
    fill_sentinel(buf, sizeof buf);
    assert_i64(strided_dtype_format(F32, buf, 0), 7);
    assert_untouched(buf, sizeof buf);
    /* Truncated, still terminated. */
    assert_i64(strided_dtype_format(DT(STRIDED_DTYPE_COMPLEX, 128, 1), buf, 5), 10);
    assert_string_equal(buf, "comp");
    assert_i64(strided_dtype_format(DT(STRIDED_DTYPE_FLOAT8_E4M3FN, 8, 1), buf, sizeof buf), 13);
    assert_string_equal(buf, "float8_");
    /* Exactly fitting. */
    assert_i64(strided_dtype_format(F32, buf, sizeof buf), 7);
    assert_string_equal(buf, "float32");
    /* A long description truncated. */
    assert_i64(strided_dtype_format(DT(99, 255, 65535), NULL, 0),
               strlen("dtype(code=99, bits=255, lanes=65535)"));
}

static void test_dtype_equal(void **state)
{
    (void)state;
    assert_true(strided_dtype_equal(F32, DT(STRIDED_DTYPE_FLOAT, 32, 1)));
    assert_false(strided_dtype_equal(F32, DT(STRIDED_DTYPE_INT, 32, 1)));
    assert_false(strided_dtype_equal(F32, DT(STRIDED_DTYPE_FLOAT, 64, 1)));
    assert_false(strided_dtype_equal(F32, DT(STRIDED_DTYPE_FLOAT, 32, 2)));
    assert_false(strided_dtype_equal(DT(STRIDED_DTYPE_FLOAT, 16, 1),
                                     DT(STRIDED_DTYPE_BFLOAT, 16, 1)));
    /* Unsupported types compare too. */
    assert_true(strided_dtype_equal(DT(99, 3, 7), DT(99, 3, 7)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_itemsize_and_name_of_every_supported_type),
        cmocka_unit_test(test_dtype_rejects),
        cmocka_unit_test(test_dtype_itemsize_without_out),
        cmocka_unit_test(test_dtype_format_is_like_snprintf),
        cmocka_unit_test(test_dtype_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
