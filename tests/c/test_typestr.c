/*
 * test_typestr.c: array-interface type strings (strided_typestr_parse), the
 * one table of element types strided accepts, and the mappings between
 * DLPack types, their names and NumPy's spellings (strided_dtype_parse,
 * strided_dtype_typestr, strided_typestr_from_format, strided_dtype_from_numpy,
 * strided_typestr_check_dlpack_export).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "strided.h"
#include "test_util.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NATIVE ">"
#define FOREIGN "<"
#else
#define NATIVE "<"
#define FOREIGN ">"
#endif

static strided_typestr parsed(const char *s)
{
    strided_typestr t;
    memset(&t, 0, sizeof t);
    if (strided_typestr_parse(s, 0, &t) != STRIDED_OK)
        fail_msg("%s: %s", s, strided_last_error());
    return t;
}

static void assert_plain(const char *s, char kind, int itemsize)
{
    strided_typestr t = parsed(s);
    assert_int_equal(t.kind, kind);
    assert_int_equal(t.itemsize, itemsize);
}

static void assert_dl(const char *s, int code, int bits)
{
    strided_typestr t = parsed(s);
    assert_true(t.has_dtype);
    assert_int_equal(t.dtype.code, code);
    assert_int_equal(t.dtype.bits, bits);
    assert_int_equal(t.dtype.lanes, 1);
    int size = 0;
    assert_ok(strided_dtype_itemsize(t.dtype, &size));
    assert_int_equal(size, t.itemsize);
}

static void test_numeric_types_have_dlpack_equivalents(void **state)
{
    (void)state;
    assert_dl("|b1", STRIDED_DTYPE_BOOL, 8);
    assert_dl("|i1", STRIDED_DTYPE_INT, 8);
    assert_dl("|u1", STRIDED_DTYPE_UINT, 8);
    assert_dl(NATIVE "i2", STRIDED_DTYPE_INT, 16);
    assert_dl(NATIVE "i8", STRIDED_DTYPE_INT, 64);
    assert_dl(NATIVE "u4", STRIDED_DTYPE_UINT, 32);
    assert_dl(NATIVE "f2", STRIDED_DTYPE_FLOAT, 16);
    assert_dl(NATIVE "f4", STRIDED_DTYPE_FLOAT, 32);
    assert_dl("=f8", STRIDED_DTYPE_FLOAT, 64);
    assert_dl(NATIVE "c8", STRIDED_DTYPE_COMPLEX, 64);
    assert_dl(NATIVE "c16", STRIDED_DTYPE_COMPLEX, 128);
}

/* Plain data without a DLPack type: views of it work, DLPack export does
 * not. */
static void test_plain_types_without_dlpack_equivalents(void **state)
{
    (void)state;
    const char *names[] = {NATIVE "f16", NATIVE "c32", "|V16",          "|V1",
                           "|S7",        NATIVE "U3",  NATIVE "M8[ns]", NATIVE "m8[25s]",
                           NATIVE "M8",  NATIVE "f1"};
    const char kinds[] = {'f', 'c', 'V', 'V', 'S', 'U', 'M', 'm', 'M', 'f'};
    const int sizes[] = {16, 32, 16, 1, 7, 12, 8, 8, 8, 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        assert_plain(names[i], kinds[i], sizes[i]);
        assert_false(parsed(names[i]).has_dtype);
    }
}

static void test_object_types_are_refused(void **state)
{
    (void)state;
    strided_typestr t;
    fill_sentinel(&t, sizeof t);
    /* NumPy writes object types without a size. */
    assert_error(strided_typestr_parse("|O", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "|O holds Python object references, which are not plain data");
    assert_error(strided_typestr_parse("|O8", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "|O8 holds Python object references, which are not plain data");
    /* A structured type with an object field reads as raw bytes. */
    assert_error(strided_typestr_parse("|V16", STRIDED_TYPESTR_HOLDS_REFERENCES, &t),
                 STRIDED_ERR_UNSUPPORTED, "typestr", "holds Python object references");
    assert_error(strided_typestr_parse(NATIVE "f8", STRIDED_TYPESTR_HOLDS_REFERENCES, &t),
                 STRIDED_ERR_UNSUPPORTED, "typestr", "holds Python object references");
    assert_untouched(&t, sizeof t);
}

/* Other-order elements are plain data, marked swapped and without a DLPack
 * type; imports refuse them with STRIDED_TYPESTR_NATIVE_ONLY. */
static void test_foreign_byte_order(void **state)
{
    (void)state;
    strided_typestr t = parsed(FOREIGN "i4");
    assert_true(t.swapped);
    assert_false(t.has_dtype);
    assert_int_equal(t.itemsize, 4);
    assert_false(parsed(NATIVE "i4").swapped);
    assert_false(parsed(FOREIGN "i1").swapped);
    assert_false(parsed(FOREIGN "V8").swapped);
    assert_true(parsed(FOREIGN "U2").swapped);
    fill_sentinel(&t, sizeof t);
    const unsigned native = STRIDED_TYPESTR_NATIVE_ONLY;
    assert_error(strided_typestr_parse(FOREIGN "i4", native, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", FOREIGN "i4 is not in the machine's byte order");
    assert_error(strided_typestr_parse(FOREIGN "f8", native, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "byte order");
    assert_error(strided_typestr_parse(FOREIGN "U2", native, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "byte order");
    assert_error(strided_typestr_parse(FOREIGN "M8[s]", native, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "byte order");
    assert_untouched(&t, sizeof t);
    assert_ok(strided_typestr_parse(FOREIGN "i1", native, &t));
    assert_ok(strided_typestr_parse(NATIVE "f8", native, &t));
    assert_ok(strided_typestr_parse("=f8", native, &t));
}

static void test_kinds_and_sizes_outside_the_table(void **state)
{
    (void)state;
    strided_typestr t;
    fill_sentinel(&t, sizeof t);
    assert_error(strided_typestr_parse("|t8", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "element kind 't' is not supported");
    assert_error(strided_typestr_parse(NATIVE "i3", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "signed integer has no 3-byte type");
    assert_error(strided_typestr_parse(NATIVE "f3", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "floating point has no 3-byte type");
    assert_error(strided_typestr_parse("|b2", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "bool has no 2-byte type");
    assert_error(strided_typestr_parse(NATIVE "u64", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "no 64-byte type");
    assert_error(strided_typestr_parse("|V0", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "an element of 0 bytes");
    /* 'U' counts characters of 4 bytes: the byte size must fit too. */
    assert_error(strided_typestr_parse(NATIVE "U1000000000", 0, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "an element of 4000000000 bytes");
    assert_untouched(&t, sizeof t);
    assert_plain("|V2147483647", 'V', INT32_MAX);
}

static void test_malformed_strings(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "<",
                         "f4",
                         "<f",
                         "<f-4",
                         "<f4x",
                         "<f4 ",
                         "|V99999999999",
                         "<i4[ns]",
                         "<M8[",
                         "<M8[]",
                         "<M8[ns",
                         "<M8[n s]",
                         "<M8[ns]x",
                         "<M8[12345678901234567]",
                         " <f4",
                         "<<f4"};
    strided_typestr t;
    fill_sentinel(&t, sizeof t);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strided_status s = strided_typestr_parse(bad[i], 0, &t);
        if (s != STRIDED_ERR_INVALID_ARGUMENT && s != STRIDED_ERR_UNSUPPORTED)
            fail_msg("\"%s\" gave status %d", bad[i], (int)s);
        assert_true(strlen(strided_last_error()) > 0);
    }
    assert_untouched(&t, sizeof t);
    assert_error(strided_typestr_parse(NULL, 0, &t), STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                 "typestr and out are required");
    assert_error(strided_typestr_parse("<f4", 0, NULL), STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                 "typestr and out are required");
    /* A long string is quoted shortened. */
    assert_error(strided_typestr_parse("<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                       0, &t),
                 STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                 "<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxx... is not an array-interface type string");
}

/* Every DLPack type strided takes, with NumPy's name and type string (as
 * numpy and ml_dtypes give them). */
typedef struct {
    int line;
    int code, bits;
    const char *name;
    const char *typestr;
} named_type;

static const named_type named_types[] = {
    CASE(STRIDED_DTYPE_INT, 8, "int8", "|i1"),
    CASE(STRIDED_DTYPE_INT, 16, "int16", NATIVE "i2"),
    CASE(STRIDED_DTYPE_INT, 32, "int32", NATIVE "i4"),
    CASE(STRIDED_DTYPE_INT, 64, "int64", NATIVE "i8"),
    CASE(STRIDED_DTYPE_UINT, 8, "uint8", "|u1"),
    CASE(STRIDED_DTYPE_UINT, 16, "uint16", NATIVE "u2"),
    CASE(STRIDED_DTYPE_UINT, 32, "uint32", NATIVE "u4"),
    CASE(STRIDED_DTYPE_UINT, 64, "uint64", NATIVE "u8"),
    CASE(STRIDED_DTYPE_FLOAT, 16, "float16", NATIVE "f2"),
    CASE(STRIDED_DTYPE_FLOAT, 32, "float32", NATIVE "f4"),
    CASE(STRIDED_DTYPE_FLOAT, 64, "float64", NATIVE "f8"),
    CASE(STRIDED_DTYPE_COMPLEX, 64, "complex64", NATIVE "c8"),
    CASE(STRIDED_DTYPE_COMPLEX, 128, "complex128", NATIVE "c16"),
    CASE(STRIDED_DTYPE_BOOL, 8, "bool", "|b1"),
    CASE(STRIDED_DTYPE_BFLOAT, 16, "bfloat16", NATIVE "V2"),
    CASE(STRIDED_DTYPE_FLOAT8_E3M4, 8, "float8_e3m4", NATIVE "V1"),
    CASE(STRIDED_DTYPE_FLOAT8_E4M3, 8, "float8_e4m3", NATIVE "V1"),
    CASE(STRIDED_DTYPE_FLOAT8_E4M3B11FNUZ, 8, "float8_e4m3b11fnuz", NATIVE "V1"),
    CASE(STRIDED_DTYPE_FLOAT8_E4M3FN, 8, "float8_e4m3fn", NATIVE "V1"),
    CASE(STRIDED_DTYPE_FLOAT8_E4M3FNUZ, 8, "float8_e4m3fnuz", NATIVE "V1"),
    CASE(STRIDED_DTYPE_FLOAT8_E5M2, 8, "float8_e5m2", NATIVE "f1"),
    CASE(STRIDED_DTYPE_FLOAT8_E5M2FNUZ, 8, "float8_e5m2fnuz", NATIVE "V1"),
    CASE(STRIDED_DTYPE_FLOAT8_E8M0FNU, 8, "float8_e8m0fnu", NATIVE "V1"),
};

static void test_names_and_typestrs_of_every_type(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(named_types); i++) {
        const named_type *c = &named_types[i];
        strided_dtype want = {(uint8_t)c->code, (uint8_t)c->bits, 1}, got = {0, 0, 0};
        check_status_(strided_dtype_parse(c->name, &got), STRIDED_OK, AT(c));
        if (!strided_dtype_equal(got, want))
            fail_at(AT(c), "%s parsed as (%d, %d, %d)\n", c->name, got.code, got.bits, got.lanes);
        char text[16];
        size_t n = strided_dtype_typestr(want, text, sizeof text);
        if (n != strlen(c->typestr) || strcmp(text, c->typestr) != 0)
            fail_at(AT(c), "typestr of %s is \"%s\" (%zu), expected \"%s\"\n", c->name, text, n,
                    c->typestr);
        /* NumPy's two strings name the type again. */
        strided_typestr t;
        check_status_(strided_dtype_from_numpy(c->typestr, c->name, 0, &t), STRIDED_OK, AT(c));
        if (!t.has_dtype || !strided_dtype_equal(t.dtype, want))
            fail_at(AT(c), "from_numpy(%s, %s) lost the type\n", c->typestr, c->name);
        check_status_(strided_typestr_check_dlpack_export(&t), STRIDED_OK, AT(c));
    }
}

/* Buffer-protocol formats: the plain ones as NumPy's typestr of the same
 * array, everything else "" (read by the array interface instead). */
static void test_typestrs_of_buffer_formats(void **state)
{
    (void)state;
    static const struct {
        const char *format;
        int64_t itemsize;
        const char *typestr;
    } cases[] = {
        {"?", 1, "|b1"},
        {"b", 1, "|i1"},
        {"B", 1, "|u1"},
        {"h", 2, NATIVE "i2"},
        {"H", 2, NATIVE "u2"},
        {"i", 4, NATIVE "i4"},
        {"I", 4, NATIVE "u4"},
        {"l", 8, NATIVE "i8"},
        {"L", 8, NATIVE "u8"},
        {"q", 8, NATIVE "i8"},
        {"Q", 8, NATIVE "u8"},
        {"l", 4, NATIVE "i4"},
        {"e", 2, NATIVE "f2"},
        {"f", 4, NATIVE "f4"},
        {"d", 8, NATIVE "f8"},
        {"Zf", 8, NATIVE "c8"},
        {"Zd", 16, NATIVE "c16"},
        {"@f", 4, NATIVE "f4"},
        {"=d", 8, NATIVE "f8"},
        {NATIVE "H", 2, NATIVE "u2"},
        /* Not plain, or sizes the kind does not have. */
        {FOREIGN "f", 4, ""},
        {"!f", 4, ""},
        {"g", 16, ""},
        {"Zg", 32, ""},
        {"4x", 4, ""},
        {"3s", 3, ""},
        {"T{f:a:}", 4, ""},
        {"P", 8, ""},
        {"O", 8, ""},
        {"", 1, ""},
        {"ff", 8, ""},
        {"Z", 8, ""},
        {"Zf", 4, ""},
        {"?", 2, ""},
        {"f", 3, ""},
        {"e", 1, ""},
        {"i", 16, ""},
        {"i", 0, ""},
        {"i", -4, ""},
        {"@", 4, ""},
        {"2f", 8, ""},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char text[8] = "junk";
        size_t n = strided_typestr_from_format(cases[i].format, cases[i].itemsize, text,
                                               sizeof text);
        if (n != strlen(cases[i].typestr) || strcmp(text, cases[i].typestr) != 0)
            fail_msg("format \"%s\" of %lld bytes gave \"%s\" (%zu), expected \"%s\"",
                     cases[i].format, (long long)cases[i].itemsize, text, n, cases[i].typestr);
    }
    assert_int_equal(strided_typestr_from_format(NULL, 4, NULL, 0), 0);
    assert_int_equal(strided_typestr_from_format("Zd", 16, NULL, 0), 4);
    char small[3] = "xx";
    assert_int_equal(strided_typestr_from_format("Zd", 16, small, sizeof small), 4);
    assert_string_equal(small, NATIVE "c");
}

static void test_parse_refuses_other_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "",         "int",       "int7",           "int128", "int0008", "float128", "uint8x",
        "bfloat32", "complex32", "float8_e4m3fnx", "bool8",  "Float32", "void16",   "str"};
    strided_dtype d = {7, 7, 7};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        assert_error(strided_dtype_parse(names[i], &d), STRIDED_ERR_INVALID_ARGUMENT, "dtype_parse",
                     "names no element type strided knows");
        assert_int_equal(d.code, 7);
    }
    assert_error(strided_dtype_parse(NULL, &d), STRIDED_ERR_INVALID_ARGUMENT, "dtype_parse",
                 "name and out are required");
}

static void test_typestr_of_types_outside_the_table(void **state)
{
    (void)state;
    char text[8] = "x";
    assert_int_equal(
        strided_dtype_typestr((strided_dtype){STRIDED_DTYPE_FLOAT, 32, 2}, text, sizeof text), 0);
    assert_string_equal(text, "");
    assert_int_equal(
        strided_dtype_typestr((strided_dtype){STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1}, NULL, 0), 0);
    /* Like snprintf: the length it needs, a truncated text. */
    assert_int_equal(strided_dtype_typestr((strided_dtype){STRIDED_DTYPE_COMPLEX, 128, 1}, text, 3),
                     4);
    assert_string_equal(text, NATIVE "c");
}

/* strided_dtype_name_matters says where a dtype's name can change
 * strided_dtype_from_numpy's answer: wherever it says no, no name does. */
static void test_where_a_dtype_name_matters(void **state)
{
    (void)state;
    static const char *const strs[] = {
        NATIVE "V1", NATIVE "V2", "|V1",        "|V2",        NATIVE "f1", NATIVE "f2", NATIVE "f4",
        NATIVE "f8", NATIVE "i1", NATIVE "u1",  NATIVE "i4",  NATIVE "c8", "|b1",       "|V3",
        "|V16",      "|S3",       NATIVE "f16", FOREIGN "f2", FOREIGN "V2"};
    static const char *const names[] = {"bfloat16",      "float8_e4m3fn", "float8_e5m2", "int4",
                                        "float4_e2m1fn", "float6_e3m2fn", "uint2",       "float16",
                                        "int8",          "void16",        "float32"};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        strided_typestr plain, named;
        if (strided_typestr_parse(strs[i], 0, &plain) != STRIDED_OK)
            fail_msg("%s does not parse", strs[i]);
        assert_ok(strided_dtype_from_numpy(strs[i], NULL, 0, &plain));
        bool changed = false;
        for (size_t j = 0; j < sizeof names / sizeof names[0]; j++) {
            assert_ok(strided_dtype_from_numpy(strs[i], names[j], 0, &named));
            changed = changed || named.has_dtype != plain.has_dtype ||
                      (named.has_dtype && !strided_dtype_equal(named.dtype, plain.dtype));
        }
        if (changed && !strided_dtype_name_matters(strs[i]))
            fail_msg("a name changes %s, which says names do not matter", strs[i]);
    }
    /* The raw bytes and small floats of ml_dtypes do; the rest do not. */
    assert_true(strided_dtype_name_matters(NATIVE "V2"));
    assert_true(strided_dtype_name_matters("|V1"));
    assert_true(strided_dtype_name_matters(NATIVE "f1"));
    assert_false(strided_dtype_name_matters(NATIVE "f2")); /* float16 */
    assert_false(strided_dtype_name_matters(NATIVE "f4"));
    assert_false(strided_dtype_name_matters("|V16"));
    assert_false(strided_dtype_name_matters(FOREIGN "f2"));
    assert_false(strided_dtype_name_matters(NULL));
    assert_false(strided_dtype_name_matters("not a type"));
    assert_false(strided_dtype_name_matters(""));
    assert_false(strided_dtype_name_matters(NATIVE "i1"));
    /* Leading zeros parse: still one byte. */
    assert_true(strided_dtype_name_matters("|V01"));
}

static void test_numpy_types_without_a_dlpack_type(void **state)
{
    (void)state;
    strided_typestr t;
    /* Raw bytes whose name is no ml_dtypes type; a name that does not fit
     * the size; a name on a type string that already decides. */
    assert_ok(strided_dtype_from_numpy("|V2", "void16", 0, &t));
    assert_false(t.has_dtype);
    assert_ok(strided_dtype_from_numpy(NATIVE "V1", "bfloat16", 0, &t));
    assert_false(t.has_dtype);
    assert_ok(strided_dtype_from_numpy(NATIVE "V2", NULL, 0, &t));
    assert_false(t.has_dtype);
    assert_ok(strided_dtype_from_numpy(NATIVE "f4", "bfloat16", 0, &t));
    assert_true(strided_dtype_equal(t.dtype, (strided_dtype){STRIDED_DTYPE_FLOAT, 32, 1}));
    /* Structured types have none, whatever their string. */
    assert_ok(strided_dtype_from_numpy("|V8", "void64", STRIDED_TYPESTR_STRUCTURED, &t));
    assert_true(t.structured);
    assert_false(t.has_dtype);
    assert_error(strided_typestr_check_dlpack_export(&t), STRIDED_ERR_UNSUPPORTED, "__dlpack__",
                 "Structured dtypes are not supported for DLPack export");
    /* Swapped bytes: accepted unless asked otherwise, never exported. */
    assert_ok(strided_dtype_from_numpy(FOREIGN "i4", ">int32", 0, &t));
    assert_true(t.swapped);
    assert_false(t.has_dtype);
    assert_error(strided_typestr_check_dlpack_export(&t), STRIDED_ERR_UNSUPPORTED, "__dlpack__",
                 "Non-native-endian dtypes are not supported for DLPack export");
    assert_error(strided_dtype_from_numpy(FOREIGN "i4", "int32", STRIDED_TYPESTR_NATIVE_ONLY, &t),
                 STRIDED_ERR_UNSUPPORTED, "typestr", "is not in the machine's byte order");
    /* Strings and long double. */
    assert_ok(strided_dtype_from_numpy("|S3", "bytes24", 0, &t));
    assert_error(strided_typestr_check_dlpack_export(&t), STRIDED_ERR_UNSUPPORTED, "__dlpack__",
                 "Unsupported dtype for DLPack export: |S3");
    assert_ok(strided_dtype_from_numpy(NATIVE "U2", "str64", 0, &t));
    assert_error(strided_typestr_check_dlpack_export(&t), STRIDED_ERR_UNSUPPORTED, "__dlpack__",
                 "Unsupported dtype for DLPack export: |U2");
    assert_ok(strided_dtype_from_numpy(NATIVE "f16", "float128", 0, &t));
    assert_false(t.has_dtype);
    /* Objects, said by the string or by the flag. */
    assert_error(strided_dtype_from_numpy("|O", "object", 0, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "holds Python object references");
    assert_error(
        strided_dtype_from_numpy("|V16", "void128",
                                 STRIDED_TYPESTR_HOLDS_REFERENCES | STRIDED_TYPESTR_STRUCTURED, &t),
        STRIDED_ERR_UNSUPPORTED, "typestr", "holds Python object references");
    assert_error(strided_dtype_from_numpy(NULL, "int8", 0, &t), STRIDED_ERR_INVALID_ARGUMENT,
                 "typestr", "typestr and out are required");
    assert_error(strided_typestr_check_dlpack_export(NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "__dlpack__", "the type is required");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_types_have_dlpack_equivalents),
        cmocka_unit_test(test_plain_types_without_dlpack_equivalents),
        cmocka_unit_test(test_object_types_are_refused),
        cmocka_unit_test(test_foreign_byte_order),
        cmocka_unit_test(test_kinds_and_sizes_outside_the_table),
        cmocka_unit_test(test_malformed_strings),
        cmocka_unit_test(test_names_and_typestrs_of_every_type),
        cmocka_unit_test(test_typestrs_of_buffer_formats),
        cmocka_unit_test(test_parse_refuses_other_names),
        cmocka_unit_test(test_typestr_of_types_outside_the_table),
        cmocka_unit_test(test_where_a_dtype_name_matters),
        cmocka_unit_test(test_numpy_types_without_a_dlpack_type),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
