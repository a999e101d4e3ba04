/*
 * test_typestr.c: array-interface type strings (strided_typestr_parse), the
 * one table of element types strided accepts.
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
    const char *names[] = {NATIVE "f16", NATIVE "c32", "|V16", "|V1", "|S7",
                           NATIVE "U3", NATIVE "M8[ns]", NATIVE "m8[25s]", NATIVE "M8",
                           NATIVE "f1"};
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
    assert_error(strided_typestr_parse("|V16", STRIDED_TYPESTR_HOLDS_REFERENCES, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "holds Python object references");
    assert_error(strided_typestr_parse(NATIVE "f8", STRIDED_TYPESTR_HOLDS_REFERENCES, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "holds Python object references");
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
    assert_error(strided_typestr_parse(NATIVE "i3", 0, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "signed integer has no 3-byte type");
    assert_error(strided_typestr_parse(NATIVE "f3", 0, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "floating point has no 3-byte type");
    assert_error(strided_typestr_parse("|b2", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "bool has no 2-byte type");
    assert_error(strided_typestr_parse(NATIVE "u64", 0, &t), STRIDED_ERR_UNSUPPORTED,
                 "typestr", "no 64-byte type");
    assert_error(strided_typestr_parse("|V0", 0, &t), STRIDED_ERR_UNSUPPORTED, "typestr",
                 "an element of 0 bytes");
    /* 'U' counts characters of 4 bytes: the byte size must fit too. */
    assert_error(strided_typestr_parse(NATIVE "U1000000000", 0, &t),
                 STRIDED_ERR_UNSUPPORTED, "typestr", "an element of 4000000000 bytes");
    assert_untouched(&t, sizeof t);
    assert_plain("|V2147483647", 'V', INT32_MAX);
}

static void test_malformed_strings(void **state)
{
    (void)state;
    const char *bad[] = {"", "<", "f4", "<f", "<f-4", "<f4x", "<f4 ", "|V99999999999",
                         "<i4[ns]", "<M8[", "<M8[]", "<M8[ns", "<M8[n s]", "<M8[ns]x",
                         "<M8[12345678901234567]", " <f4", "<<f4"};
    strided_typestr t;
    fill_sentinel(&t, sizeof t);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strided_status s = strided_typestr_parse(bad[i], 0, &t);
        if (s != STRIDED_ERR_INVALID_ARGUMENT && s != STRIDED_ERR_UNSUPPORTED)
            fail_msg("\"%s\" gave status %d", bad[i], (int)s);
        assert_true(strlen(strided_last_error()) > 0);
    }
    assert_untouched(&t, sizeof t);
    assert_error(strided_typestr_parse(NULL, 0, &t), STRIDED_ERR_INVALID_ARGUMENT,
                 "typestr", "typestr and out are required");
    assert_error(strided_typestr_parse("<f4", 0, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "typestr", "typestr and out are required");
    /* A long string is quoted shortened. */
    assert_error(strided_typestr_parse("<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                       0, &t),
                 STRIDED_ERR_INVALID_ARGUMENT, "typestr",
                 "<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxx... is not an array-interface type string");
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
