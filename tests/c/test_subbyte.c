/*
 * Tests of sub-byte element types (docs/subbyte.md): the dtype table
 * (names, element bits, packed and padded), the packed-layout rule and the
 * bytes a packed layout needs (strided/layout.h), views of packed and
 * padded elements (strided/view.h), their DLPack import and export from a
 * producer of every sub-byte form, the two spellings of pairs
 * (strided_view_relane), and host copies between packed layouts and
 * between packed and padded views, against a reference that reads bits
 * one at a time.
 *
 * Built with no CUDA driver (DRIVER_NONE): host memory is HOST, (CPU, 0).
 */
#include "test_util.h"

#include <stdlib.h>

#include "strided/buffer.h"
#include "strided/copy.h"
#include "strided/dlpack.h"
#include "strided/dtype.h"
#include "strided/interface.h"
#include "strided/layout.h"
#include "strided/view.h"
#include "test_cuda.h"

static strided_dtype DT(int code, int bits, int lanes)
{
    strided_dtype d = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
    return d;
}

#define FP4 DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1)
#define FP4X2 DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 2)
#define FP6 DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 1)
#define INT2 DT(STRIDED_DTYPE_INT, 2, 1)

/* A layout of shape, strides and slice offset, itemsize 1. */
static strided_layout make(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    strided_layout l;
    assert_ok(strided_layout_init(&l, ndim, shape, strides, 1));
    l.slice_offset = offset;
    assert_ok(strided_layout_validate(&l));
    return l;
}

/* n bytes of a xorshift sequence from seed. */
static void fill_random(unsigned char *mem, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        mem[i] = (unsigned char)xorshift_next(&s);
}

typedef struct subbyte_case {
    int line;
    strided_dtype dtype;
    const char *name;
    int packed_bits;
} subbyte_case;

static void test_subbyte_dtypes_names_and_bits(void **state)
{
    const subbyte_case cases[] = {
        CASE(DT(STRIDED_DTYPE_INT, 1, 1), "int1", 1),
        CASE(DT(STRIDED_DTYPE_INT, 2, 1), "int2", 2),
        CASE(DT(STRIDED_DTYPE_INT, 4, 1), "int4", 4),
        CASE(DT(STRIDED_DTYPE_UINT, 1, 1), "uint1", 1),
        CASE(DT(STRIDED_DTYPE_UINT, 2, 1), "uint2", 2),
        CASE(DT(STRIDED_DTYPE_UINT, 4, 1), "uint4", 4),
        CASE(FP4, "float4_e2m1fn", 4),
        CASE(DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 1), "float6_e2m3fn", 6),
        CASE(FP6, "float6_e3m2fn", 6),
        CASE(FP4X2, "float4_e2m1fn_x2", 8),
        CASE(DT(STRIDED_DTYPE_UINT, 4, 2), "uint4_x2", 8),
        CASE(DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 2), "float6_e2m3fn_x2", 12),
        CASE(DT(STRIDED_DTYPE_INT, 2, 2), "int2_x2", 4),
    };
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const subbyte_case *c = &cases[i];
        char buf[64];
        int bits = -1, size = -7;
        strided_dtype parsed = {0, 0, 0};
        if (!strided_dtype_is_subbyte(c->dtype))
            fail_at(AT(c), "%s is not a sub-byte type\n", c->name);
        strided_dtype_format(c->dtype, buf, sizeof buf);
        _assert_string_equal(buf, c->name, AT(c));
        check_status_(strided_dtype_parse(c->name, &parsed), STRIDED_OK, AT(c));
        if (!strided_dtype_equal(parsed, c->dtype))
            fail_at(AT(c), "%s parses as (%d, %d, %d)\n", c->name, parsed.code, parsed.bits,
                    parsed.lanes);
        check_status_(strided_dtype_element_bits(c->dtype, false, &bits), STRIDED_OK, AT(c));
        check_i64_(bits, c->packed_bits, "packed bits", AT(c));
        if (c->packed_bits % 8 == 0) {
            check_status_(strided_dtype_itemsize(c->dtype, &size), STRIDED_OK, AT(c));
            check_i64_(size, c->packed_bits / 8, "itemsize", AT(c));
        } else {
            check_error_(strided_dtype_itemsize(c->dtype, &size), STRIDED_ERR_UNSUPPORTED,
                         "dtype_itemsize", "packed sub-byte type", AT(c));
            check_i64_(size, -7, "itemsize untouched", AT(c));
        }
        if (c->dtype.lanes == 1) {
            check_status_(strided_dtype_element_bits(c->dtype, true, &bits), STRIDED_OK, AT(c));
            check_i64_(bits, 8, "padded bits", AT(c));
        } else {
            bits = -1;
            check_error_(strided_dtype_element_bits(c->dtype, true, &bits), STRIDED_ERR_UNSUPPORTED,
                         "dtype_element_bits", "cannot be padded", AT(c));
            check_i64_(bits, -1, "bits untouched", AT(c));
        }
    }
}

static void test_subbyte_dtypes_that_are_not(void **state)
{
    (void)state;
    int bits = -1;
    assert_false(strided_dtype_is_subbyte(DT(STRIDED_DTYPE_INT, 8, 1)));
    assert_false(strided_dtype_is_subbyte(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 8, 1)));
    assert_false(strided_dtype_is_subbyte(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 3)));
    assert_false(strided_dtype_is_subbyte(DT(STRIDED_DTYPE_INT, 3, 1)));
    assert_false(strided_dtype_is_subbyte(DT(STRIDED_DTYPE_FLOAT, 4, 1)));
    /* Whole-byte types have their bits whether padded or not. */
    assert_ok(strided_dtype_element_bits(DT(STRIDED_DTYPE_FLOAT, 32, 1), true, &bits));
    assert_i64(bits, 32);
    assert_error(strided_dtype_element_bits(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 3), false, &bits),
                 STRIDED_ERR_UNSUPPORTED, "dtype_element_bits", "lanes=3");
    assert_error(strided_dtype_element_bits(FP4, false, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "dtype_element_bits", "out is required");
    strided_dtype d = FP4;
    assert_error(strided_dtype_parse("float4_e2m1fn_x3", &d), STRIDED_ERR_INVALID_ARGUMENT,
                 "dtype_parse", "names no element type");
    assert_error(strided_dtype_parse("int4_x2x", &d), STRIDED_ERR_INVALID_ARGUMENT, "dtype_parse",
                 "names no element type");
    assert_error(strided_dtype_parse("int3", &d), STRIDED_ERR_INVALID_ARGUMENT, "dtype_parse",
                 "names no element type");
}

static void test_subbyte_ml_dtypes_are_padded(void **state)
{
    (void)state;
    const char *names[] = {"int1",  "int2",          "int4",          "uint1",        "uint2",
                           "uint4", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        strided_typestr t;
        strided_dtype want;
        assert_ok(strided_dtype_from_numpy("<V1", names[i], 0, &t));
        assert_ok(strided_dtype_parse(names[i], &want));
        assert_true(t.has_dtype);
        assert_true(t.padded);
        assert_true(strided_dtype_equal(t.dtype, want));
        assert_i64(t.itemsize, 1);
    }
    strided_typestr t;
    /* Not one byte, not raw bytes, or not one lane: no sub-byte type. */
    assert_ok(strided_dtype_from_numpy("<V2", "int4", 0, &t));
    assert_false(t.has_dtype);
    assert_ok(strided_dtype_from_numpy("|u1", "int4", 0, &t));
    assert_true(t.has_dtype);
    assert_false(t.padded);
    assert_i64(t.dtype.bits, 8);
    assert_ok(strided_dtype_from_numpy("<V1", "float4_e2m1fn_x2", 0, &t));
    assert_false(t.has_dtype);
    assert_false(t.padded);
    /* bfloat16 and float8 are no sub-byte types. */
    assert_ok(strided_dtype_from_numpy("<V1", "float8_e4m3fn", 0, &t));
    assert_true(t.has_dtype);
    assert_false(t.padded);
}

/* An accepted packed layout and the bytes it occupies. */
typedef struct packed_ok_case {
    int line;
    int ndim;
    int64_t shape[4], strides[4], offset;
    int bits;
    int64_t lo, hi;
} packed_ok_case;

static void test_packed_rule_accepts(void **state)
{
    const packed_ok_case cases[] = {
        /* Rows of 5 fp4 at a row stride of 6: 9 bytes, not 15. */
        CASE(2, {3, 5}, {6, 1}, 0, 4, 0, 9),
        CASE(1, {15}, {1}, 0, 4, 0, 8),
        CASE(1, {15}, {1}, 2, 4, 1, 9),
        /* The same matrix transposed: the packed axis is axis 0. */
        CASE(2, {5, 3}, {1, 6}, 0, 4, 0, 9),
        /* Every other element: each one starts a byte. */
        CASE(1, {4}, {2}, 0, 4, 0, 4),
        CASE(2, {3, 4}, {-4, 1}, 8, 4, 0, 6),
        CASE(2, {3, 4}, {0, 1}, 0, 4, 0, 2),
        CASE(3, {2, 2, 2}, {8, 2, 1}, 0, 4, 0, 6),
        /* A second stride 1 of extent 1 does not count. */
        CASE(3, {2, 1, 3}, {4, 1, 1}, 0, 4, 0, 4),
        /* 6 bits: groups of 4 elements, 3 bytes. */
        CASE(2, {2, 4}, {4, 1}, 0, 6, 0, 6),
        CASE(2, {2, 3}, {4, 1}, 0, 6, 0, 6),
        CASE(2, {2, 3}, {8, 1}, 4, 6, 3, 12),
        /* 12-bit pairs of 6-bit elements: groups of 2. */
        CASE(2, {2, 3}, {4, 1}, 0, 12, 0, 11),
        /* 2 bits: groups of 4. */
        CASE(2, {3, 3}, {4, 1}, 0, 2, 0, 3),
        /* Whole bytes: anything. */
        CASE(2, {3, 5}, {5, 1}, 1, 8, 1, 16),
        /* Empty layouts reach nothing, wherever they start. */
        CASE(2, {0, 5}, {5, 1}, 1, 4, 0, 0),
        CASE(0, {0}, {0}, 0, 4, 0, 1),
    };
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const packed_ok_case *c = &cases[i];
        strided_layout l = make(c->ndim, c->shape, c->strides, c->offset);
        int64_t lo = -99, hi = -99, size = -99;
        check_status_(strided_layout_check_packed(&l, c->bits), STRIDED_OK, AT(c));
        check_status_(strided_layout_packed_byte_bounds(&l, c->bits, &lo, &hi), STRIDED_OK, AT(c));
        check_i64_(lo, c->lo, "lo", AT(c));
        check_i64_(hi, c->hi, "hi", AT(c));
        check_status_(strided_layout_required_size_in_bytes_packed(&l, c->bits, &size), STRIDED_OK,
                      AT(c));
        check_i64_(size, c->hi, "required size", AT(c));
    }
}

/* A refused packed layout and the element the message names. */
typedef struct packed_bad_case {
    int line;
    int ndim;
    int64_t shape[4], strides[4], offset;
    int bits;
    const char *text;
} packed_bad_case;

static void test_packed_rule_refuses_split_bytes(void **state)
{
    const packed_bad_case cases[] = {
        /* A dense (3,5) fp4 matrix: row 1 starts in the middle of byte 2. */
        CASE(2, {3, 5}, {5, 1}, 0, 4, "element (1,0) of (3,5):(5,1), at element offset 5"),
        /* Sliced or indexed off a byte boundary. */
        CASE(1, {4}, {1}, 1, 4, "element (0,) of (4,):(1,)+1, at element offset 1"),
        CASE(1, {3}, {3}, 0, 4, "element (1,) of (3,):(3,), at element offset 3"),
        /* The packed axis read backwards, or moved off stride 1. */
        CASE(1, {4}, {-1}, 3, 4, "element (0,) of (4,):(-1,)+3"),
        CASE(1, {4}, {-1}, 4, 4, "element (1,) of (4,):(-1,)+4, at element offset 3"),
        CASE(2, {2, 2}, {1, 1}, 0, 4, "element (0,1) of (2,2):(1,1)"),
        CASE(2, {4, 3}, {3, 12}, 0, 4, "element (1,0) of (4,3):(3,12), at element offset 3"),
        /* 6 bits: starts every 4 elements only. */
        CASE(2, {2, 3}, {3, 1}, 0, 6, "a multiple of 4"),
        CASE(2, {2, 3}, {6, 1}, 0, 6, "element (1,0)"),
        CASE(1, {4}, {1}, 2, 6, "element (0,)"),
        CASE(2, {3, 3}, {5, 1}, 0, 2, "element (1,0)"),
    };
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const packed_bad_case *c = &cases[i];
        strided_layout l = make(c->ndim, c->shape, c->strides, c->offset);
        int64_t lo = -99, hi = -99, size = -99;
        check_error_(strided_layout_check_packed(&l, c->bits), STRIDED_ERR_INVALID_ARGUMENT,
                     "packed", c->text, AT(c));
        check_error_(strided_layout_check_packed(&l, c->bits), STRIDED_ERR_INVALID_ARGUMENT,
                     "packed", "packed-layout rule", AT(c));
        check_error_(strided_layout_packed_byte_bounds(&l, c->bits, &lo, &hi),
                     STRIDED_ERR_INVALID_ARGUMENT, "packed", c->text, AT(c));
        check_error_(strided_layout_required_size_in_bytes_packed(&l, c->bits, &size),
                     STRIDED_ERR_INVALID_ARGUMENT, "packed", c->text, AT(c));
        check_i64_(lo, -99, "lo untouched", AT(c));
        check_i64_(hi, -99, "hi untouched", AT(c));
        check_i64_(size, -99, "size untouched", AT(c));
    }
}

static void test_packed_rule_arguments_and_overflow(void **state)
{
    (void)state;
    strided_layout l = make(1, I64(4), I64(1), 0);
    int64_t lo = -99, hi = -99, size = -99;
    assert_error(strided_layout_check_packed(NULL, 4), STRIDED_ERR_INVALID_ARGUMENT, "packed",
                 "the layout is required");
    assert_error(strided_layout_check_packed(&l, 0), STRIDED_ERR_INVALID_ARGUMENT, "packed",
                 "got 0");
    assert_error(strided_layout_check_packed(&l, -4), STRIDED_ERR_INVALID_ARGUMENT, "packed",
                 "got -4");
    assert_error(strided_layout_check_packed(&l, 524281), STRIDED_ERR_INVALID_ARGUMENT, "packed",
                 "got 524281");
    assert_error(strided_layout_packed_byte_bounds(&l, 4, NULL, &hi), STRIDED_ERR_INVALID_ARGUMENT,
                 "packed", "required");
    assert_error(strided_layout_packed_byte_bounds(&l, 4, &lo, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "packed", "required");
    assert_error(strided_layout_required_size_in_bytes_packed(&l, 4, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "required_size_in_bytes", "required");
    /* Element offsets fit int64, their bits do not. */
    strided_layout far = make(1, I64(2), I64(INT64_C(1) << 61), 0);
    assert_error(strided_layout_packed_byte_bounds(&far, 4, &lo, &hi), STRIDED_ERR_OVERFLOW,
                 "packed", "overflow int64");
    /* A layout reaching below offset 0 has no required size. */
    strided_layout neg = make(1, I64(4), I64(-2), 0);
    assert_ok(strided_layout_packed_byte_bounds(&neg, 4, &lo, &hi));
    assert_i64(lo, -3);
    assert_i64(hi, 1);
    assert_error(strided_layout_required_size_in_bytes_packed(&neg, 4, &size),
                 STRIDED_ERR_INVALID_ARGUMENT, "required_size_in_bytes",
                 "Allocation size for a layout that maps elements to negative memory offsets is "
                 "ambiguous. The layout's min_offset is -6.");
    assert_i64(size, -99);
    /* A layout breaking the invariant is refused as validate refuses it. */
    strided_layout broken = l;
    broken.itemsize = 0;
    assert_error(strided_layout_check_packed(&broken, 4), STRIDED_ERR_INVALID_ARGUMENT, "validate",
                 "itemsize");
}

static strided_buffer *borrow(void *mem, size_t size)
{
    strided_buffer *b = NULL;
    assert_ok(strided_buffer_wrap(mem, size, NULL, NULL, &b));
    return b;
}

static void test_view_of_packed_elements(void **state)
{
    (void)state;
    static unsigned char mem[16];
    strided_buffer *b9 = borrow(mem, 9), *b8 = borrow(mem, 8);
    strided_dtype fp4 = FP4;
    strided_layout l = make(2, I64(3, 5), I64(6, 1), 0);
    strided_view v = {0}, w = {0};
    assert_ok(strided_view_from_buffer(b9, &l, &fp4, false, &v));
    assert_i64(strided_view_packed_bits(&v), 4);
    assert_false(v.padded);
    assert_ptr_equal(strided_view_ptr(&v), mem);
    /* One byte short. */
    assert_error(strided_view_from_buffer(b8, &l, &fp4, false, &w), STRIDED_ERR_INVALID_ARGUMENT,
                 "view",
                 "Buffer size is too small for the layout. Expected at least 9 bytes, got 8");
    /* A layout that splits a byte. */
    strided_layout dense = make(2, I64(3, 5), I64(5, 1), 0);
    assert_error(strided_view_from_buffer(b9, &dense, &fp4, false, &w),
                 STRIDED_ERR_INVALID_ARGUMENT, "view", "packed-layout rule");
    /* Packed offsets count elements in a layout of itemsize 1. */
    strided_layout wide;
    assert_ok(strided_layout_init(&wide, 1, I64(4), NULL, 2));
    assert_error(strided_view_from_buffer(b9, &wide, &fp4, false, &w), STRIDED_ERR_INVALID_ARGUMENT,
                 "view", "a layout of packed float4_e2m1fn elements (4 bits each) has itemsize 1");
    /* Row 1 of the matrix starts at element 6, byte 3; element 7 is the
     * high half of that byte and starts nothing. */
    strided_layout row1 = make(1, I64(5), I64(1), 6);
    assert_ok(strided_view_view(&v, &row1, NULL, &w));
    assert_ptr_equal(strided_view_ptr(&w), mem + 3);
    assert_true(strided_dtype_equal(w.dtype, fp4));
    assert_i64(strided_view_packed_bits(&w), 4);
    strided_view_release(&w);
    strided_layout mid = make(1, I64(4), I64(1), 7);
    assert_error(strided_view_view(&v, &mid, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, "view",
                 "element (0,) of (4,):(1,)+7, at element offset 7");
    /* Past the buffer, by half a byte. */
    strided_layout past = make(1, I64(3), I64(1), 16);
    assert_error(strided_view_view(&v, &past, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, "view",
                 "Expected at least 10 bytes, got 9");
    /* 6-bit elements: element 4 starts at byte 3. */
    strided_dtype fp6 = FP6;
    strided_layout six = make(1, I64(4), I64(1), 4);
    assert_ok(strided_view_from_buffer(b9, &six, &fp6, false, &w));
    assert_ptr_equal(strided_view_ptr(&w), mem + 3);
    assert_i64(strided_view_packed_bits(&w), 6);
    strided_view_release(&w);
    /* Pairs of 4-bit floats are whole bytes: a view like any other. */
    strided_dtype x2 = FP4X2;
    strided_buffer *b16 = borrow(mem, 16);
    assert_ok(strided_view_from_buffer(b16, &dense, &x2, false, &w));
    assert_i64(strided_view_packed_bits(&w), 0);
    strided_view_release(&w);
    strided_buffer_release(b16);
    strided_view_release(&v);
    strided_buffer_release(b9);
    strided_buffer_release(b8);
}

static void test_view_of_padded_elements(void **state)
{
    (void)state;
    static unsigned char mem[15];
    strided_buffer *b = borrow(mem, 15);
    strided_dtype fp4 = FP4, x2 = FP4X2, f32 = DT(STRIDED_DTYPE_FLOAT, 32, 1);
    strided_layout dense = make(2, I64(3, 5), I64(5, 1), 0);
    strided_view v = {0}, w = {0};
    assert_ok(strided_view_from_buffer_ex(b, &dense, &fp4, true, false, &v));
    assert_true(v.padded);
    assert_i64(strided_view_packed_bits(&v), 0);
    /* A derived view keeps the form; a new dtype takes the one given. */
    strided_layout row = make(1, I64(5), I64(1), 5), row4 = make(1, I64(5), I64(1), 4);
    assert_ok(strided_view_view(&v, &row, NULL, &w));
    assert_true(w.padded);
    assert_ptr_equal(strided_view_ptr(&w), mem + 5);
    strided_view_release(&w);
    assert_error(strided_view_view_ex(&v, &row, &fp4, false, &w), STRIDED_ERR_INVALID_ARGUMENT,
                 "view", "packed-layout rule");
    assert_ok(strided_view_view_ex(&v, &row4, &fp4, false, &w));
    assert_false(w.padded);
    assert_i64(strided_view_packed_bits(&w), 4);
    assert_ptr_equal(strided_view_ptr(&w), mem + 2);
    strided_view_release(&w);
    /* Padding means one lane a byte. */
    assert_error(strided_view_from_buffer_ex(b, &dense, &x2, true, false, &w),
                 STRIDED_ERR_UNSUPPORTED, "view", "cannot be padded");
    /* padded says nothing of whole-byte types. */
    strided_layout four;
    assert_ok(strided_layout_init(&four, 1, I64(3), NULL, 4));
    assert_ok(strided_view_from_buffer_ex(b, &four, &f32, true, false, &w));
    assert_false(w.padded);
    strided_view_release(&w);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_wrap_of_packed_elements_covers_their_bytes(void **state)
{
    (void)state;
    static unsigned char mem[16];
    strided_dtype fp4 = FP4;
    /* Offsets 4..11 of 4 bits: bytes 2..5 from offset 0, element 0 at
     * byte 2. */
    strided_layout l = make(2, I64(2, 4), I64(4, 1), 4);
    strided_view v = {0};
    assert_ok(strided_view_wrap(mem + 2, &l, &fp4, false, NULL, NULL, NULL, &v));
    assert_ptr_equal(strided_buffer_ptr(v.buffer), mem + 2);
    assert_i64((int64_t)strided_buffer_size(v.buffer), 4);
    assert_i64(v.origin, -2);
    assert_ptr_equal(strided_view_ptr(&v), mem + 2);
    strided_view_release(&v);
    /* Rows read backwards: the lowest byte is row 2's. */
    strided_layout back = make(2, I64(3, 3), I64(-4, 1), 8);
    assert_ok(strided_view_wrap(mem + 4, &back, &fp4, false, NULL, NULL, NULL, &v));
    assert_ptr_equal(strided_buffer_ptr(v.buffer), mem);
    assert_i64((int64_t)strided_buffer_size(v.buffer), 6);
    assert_ptr_equal(strided_view_ptr(&v), mem + 4);
    strided_view_release(&v);
    strided_layout split = make(2, I64(3, 3), I64(3, 1), 0);
    assert_error(strided_view_wrap(mem, &split, &fp4, false, NULL, NULL, NULL, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "packed-layout rule");
}

/* A DLPack producer of every sub-byte form: a versioned or legacy managed
 * tensor over mem, whose deleter counts. */
typedef struct producer {
    strided_dl_managed_tensor_versioned v;
    strided_dl_managed_tensor legacy;
    int64_t shape[4], strides[4];
    int deleted;
} producer;

static void delete_v(strided_dl_managed_tensor_versioned *self)
{
    ((producer *)self->manager_ctx)->deleted++;
}

static void delete_legacy(strided_dl_managed_tensor *self)
{
    ((producer *)self->manager_ctx)->deleted++;
}

static void *produce(producer *p, bool versioned, void *data, strided_dtype dtype, uint64_t flags,
                     int ndim, const int64_t *shape, const int64_t *strides, uint64_t byte_offset)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < ndim; i++) {
        p->shape[i] = shape[i];
        p->strides[i] = strides[i];
    }
    strided_dl_tensor t = {data,       {STRIDED_DEVICE_CPU, 0}, ndim, dtype, p->shape, p->strides,
                           byte_offset};
    if (versioned) {
        p->v.version = (strided_dl_version){1, 3};
        p->v.manager_ctx = p;
        p->v.deleter = delete_v;
        p->v.flags = flags;
        p->v.dl_tensor = t;
        return &p->v;
    }
    p->legacy.dl_tensor = t;
    p->legacy.manager_ctx = p;
    p->legacy.deleter = delete_legacy;
    return &p->legacy;
}

/* An import form and what it becomes. */
typedef struct import_case {
    int line;
    bool versioned;
    strided_dtype dtype;
    uint64_t flags;
    int ndim;
    int64_t shape[3], strides[3];
    uint64_t byte_offset;
    bool padded;
    int packed_bits;
    const char *layout;
    size_t buffer_size;
} import_case;

#define PADDED STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED

static void test_dlpack_import_and_export_every_subbyte_form(void **state)
{
    const import_case cases[] = {
        /* DLPack's packed fp4, versioned and legacy. */
        CASE(true, FP4, 0, 2, {3, 5}, {6, 1}, 0, false, 4, "(3,5):(6,1)", 9),
        CASE(false, FP4, 0, 2, {3, 5}, {6, 1}, 0, false, 4, "(3,5):(6,1)", 9),
        CASE(true, FP4, 0, 2, {4, 4}, {1, 4}, 2, false, 4, "(4,4):(1,4)", 8),
        CASE(true, FP6, 0, 2, {2, 4}, {4, 1}, 0, false, 6, "(2,4):(4,1)", 6),
        CASE(true, INT2, 0, 1, {5}, {1}, 1, false, 2, "(5,):(1,)", 2),
        /* Padded: one element a byte, with the flag. */
        CASE(true, FP4, PADDED, 2, {3, 5}, {5, 1}, 0, true, 0, "(3,5):(5,1)", 15),
        CASE(true, DT(STRIDED_DTYPE_INT, 4, 1), PADDED, 1, {3}, {-1}, 2, true, 0, "(3,):(-1,)", 3),
        /* PyTorch's pairs, versioned and legacy. */
        CASE(true, FP4X2, 0, 2, {3, 3}, {3, 1}, 0, false, 0, "(3,3):(3,1)", 9),
        CASE(false, FP4X2, 0, 2, {3, 3}, {1, 3}, 0, false, 0, "(3,3):(1,3)", 9),
        /* The flag says nothing of whole-byte types. */
        CASE(true, DT(STRIDED_DTYPE_UINT, 8, 1), PADDED, 1, {4}, {1}, 0, false, 0, "(4,):(1,)", 4),
    };
    static unsigned char mem[32];
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const import_case *c = &cases[i];
        producer p;
        strided_view v = {0};
        void *m = produce(&p, c->versioned, mem, c->dtype, c->flags, c->ndim, c->shape, c->strides,
                          c->byte_offset);
        check_status_(strided_view_import_dlpack(m, c->versioned, &v), STRIDED_OK, AT(c));
        char text[128];
        strided_layout_format(&v.layout, text, sizeof text);
        _assert_string_equal(text, c->layout, AT(c));
        check_i64_(v.padded, c->padded, "padded", AT(c));
        check_i64_(strided_view_packed_bits(&v), c->packed_bits, "packed bits", AT(c));
        check_i64_((int64_t)strided_buffer_size(v.buffer), (int64_t)c->buffer_size, "bytes", AT(c));
        if ((unsigned char *)strided_view_ptr(&v) != mem + c->byte_offset)
            fail_at(AT(c), "the view starts at byte %td\n",
                    (unsigned char *)strided_view_ptr(&v) - mem);
        /* Exported back: the same type, form, memory and layout. */
        strided_dl_managed_tensor_versioned *out = NULL;
        check_status_(strided_view_export_dlpack(&v, &out), STRIDED_OK, AT(c));
        const strided_dl_tensor *t = &out->dl_tensor;
        if (!strided_dtype_equal(t->dtype, c->dtype))
            fail_at(AT(c), "exported dtype (%d, %d, %d)\n", t->dtype.code, t->dtype.bits,
                    t->dtype.lanes);
        check_i64_((out->flags & PADDED) != 0, c->padded, "PADDED flag", AT(c));
        check_i64_((unsigned char *)t->data + t->byte_offset - mem, (int64_t)c->byte_offset,
                   "exported data", AT(c));
        check_i64_(t->ndim, c->ndim, "ndim", AT(c));
        for (int k = 0; k < c->ndim; k++) {
            check_i64_(t->shape[k], c->shape[k], "shape", AT(c));
            check_i64_(t->strides[k], c->strides[k], "strides", AT(c));
        }
        /* Imported again, the same view. */
        strided_view again = {0};
        check_status_(strided_view_import_dlpack(out, true, &again), STRIDED_OK, AT(c));
        check_i64_(again.padded, c->padded, "padded again", AT(c));
        if (!strided_layout_equal(&again.layout, &v.layout) ||
            strided_view_ptr(&again) != strided_view_ptr(&v))
            fail_at(AT(c), "the round trip changed the view\n");
        strided_view_release(&again);
        /* A legacy tensor and a bare DLTensor have no flags: padded
         * elements cannot go there. */
        strided_dl_managed_tensor *legacy = NULL;
        strided_dl_tensor bare;
        if (c->padded) {
            check_error_(strided_view_export_dlpack_legacy(&v, &legacy), STRIDED_ERR_UNSUPPORTED,
                         "export_dlpack_legacy", "needs a versioned DLPack tensor", AT(c));
            check_error_(strided_view_export_dl_tensor(&v, &bare), STRIDED_ERR_UNSUPPORTED,
                         "export_dl_tensor", "needs a versioned DLPack tensor", AT(c));
        } else {
            check_status_(strided_view_export_dlpack_legacy(&v, &legacy), STRIDED_OK, AT(c));
            legacy->deleter(legacy);
            check_status_(strided_view_export_dl_tensor(&v, &bare), STRIDED_OK, AT(c));
        }
        strided_view_release(&v);
        check_i64_(p.deleted, 1, "deleter calls", AT(c));
    }
}

static void test_dlpack_import_refuses_split_bytes(void **state)
{
    (void)state;
    static unsigned char mem[32];
    producer p;
    strided_view v = {0};
    /* A dense (3,5) packed fp4 tensor: row 1 starts inside a byte. */
    void *m = produce(&p, true, mem, FP4, 0, 2, I64(3, 5), I64(5, 1), 0);
    assert_error(strided_view_import_dlpack(m, true, &v), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_dlpack", "element (1,0) of (3,5):(5,1)");
    assert_i64(p.deleted, 1);
    /* Legacy tensors are packed: the same. */
    m = produce(&p, false, mem, FP4, 0, 2, I64(3, 5), I64(5, 1), 0);
    assert_error(strided_view_import_dlpack(m, false, &v), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_dlpack", "packed-layout rule");
    assert_i64(p.deleted, 1);
    /* Padded pairs do not exist. */
    m = produce(&p, true, mem, FP4X2, PADDED, 1, I64(3), I64(1), 0);
    assert_error(strided_view_import_dlpack(m, true, &v), STRIDED_ERR_UNSUPPORTED, "import_dlpack",
                 "cannot be padded");
    assert_i64(p.deleted, 1);
    /* A byte offset is any number of bytes for packed elements. */
    m = produce(&p, true, mem, FP6, 0, 1, I64(4), I64(1), 3);
    assert_ok(strided_view_import_dlpack(m, true, &v));
    assert_ptr_equal(strided_view_ptr(&v), mem + 3);
    assert_i64((int64_t)strided_buffer_size(v.buffer), 3);
    strided_view_release(&v);
    assert_i64(p.deleted, 1);
}

static void test_new_packed_tensors_round_rows_up_to_bytes(void **state)
{
    (void)state;
    const struct {
        strided_dtype dtype;
        int64_t shape[3];
        int ndim;
        int64_t strides[3];
    } cases[] = {
        {FP4, {3, 5}, 2, {6, 1}}, {FP6, {2, 5}, 2, {8, 1}},   {FP4, {2, 3, 4}, 3, {12, 4, 1}},
        {INT2, {7}, 1, {1}},      {FP4X2, {3, 5}, 2, {5, 1}}, {FP4, {0, 5}, 2, {6, 1}},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        strided_dl_tensor proto = {NULL,
                                   {STRIDED_DEVICE_CPU, 0},
                                   cases[i].ndim,
                                   cases[i].dtype,
                                   (int64_t *)cases[i].shape,
                                   NULL,
                                   0};
        strided_dl_managed_tensor_versioned *m = NULL;
        assert_ok(strided_dlpack_tensor_alloc(&proto, &m));
        for (int k = 0; k < cases[i].ndim; k++) {
            assert_i64(m->dl_tensor.shape[k], cases[i].shape[k]);
            assert_i64(m->dl_tensor.strides[k], cases[i].strides[k]);
        }
        assert_true(strided_dtype_equal(m->dl_tensor.dtype, cases[i].dtype));
        /* It imports: its layout keeps the rule and its memory holds it. */
        strided_view v;
        assert_ok(strided_view_import_dlpack(m, true, &v));
        strided_view_release(&v);
    }
}

static void test_relane_converts_the_two_spellings(void **state)
{
    (void)state;
    static unsigned char mem[32];
    strided_buffer *b = borrow(mem, 32);
    strided_dtype x2 = FP4X2, fp4 = FP4, fp6x2 = DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 2);
    strided_layout pairs = make(2, I64(4, 3), I64(4, 1), 1);
    strided_view v = {0}, one = {0}, two = {0};
    assert_ok(strided_view_from_buffer(b, &pairs, &x2, false, &v));
    assert_ok(strided_view_relane(&v, 1, &one));
    assert_layout(one.layout, "(4,6):(8,1)+2", 1);
    assert_int_equal(one.dtype.lanes, 1);
    assert_i64(strided_view_packed_bits(&one), 4);
    assert_ptr_equal(strided_view_ptr(&one), strided_view_ptr(&v));
    assert_ok(strided_view_relane(&one, 2, &two));
    assert_layout(two.layout, "(4,3):(4,1)+1", 1);
    assert_true(strided_dtype_equal(two.dtype, x2));
    strided_view_release(&one);
    strided_view_release(&two);
    strided_view_release(&v);
    /* Pairs whose last axis is not their run: a new axis of 2. */
    strided_layout t = make(2, I64(3, 4), I64(1, 3), 0);
    assert_ok(strided_view_from_buffer(b, &t, &x2, false, &v));
    assert_ok(strided_view_relane(&v, 1, &one));
    assert_layout(one.layout, "(3,4,2):(2,6,1)", 1);
    assert_ok(strided_view_relane(&one, 2, &two));
    assert_layout(two.layout, "(3,4,1):(1,3,1)", 1);
    strided_view_release(&two);
    strided_view_release(&one);
    /* The same lanes: another view of the same layout. */
    assert_ok(strided_view_relane(&v, 2, &two));
    assert_true(strided_layout_equal(&two.layout, &v.layout));
    strided_view_release(&two);
    strided_view_release(&v);
    /* Rows of an odd length do not pair up. */
    strided_layout odd = make(2, I64(3, 5), I64(6, 1), 0);
    assert_ok(strided_view_from_buffer(b, &odd, &fp4, false, &v));
    assert_error(strided_view_relane(&v, 2, &two), STRIDED_ERR_INVALID_ARGUMENT, "relane",
                 "(3,5):(6,1) cannot be seen as pairs (lanes 2)");
    assert_error(strided_view_relane(&v, 3, &two), STRIDED_ERR_INVALID_ARGUMENT, "relane",
                 "lanes must be 1 or 2, got 3");
    strided_view_release(&v);
    /* 6-bit floats pair up too: 12-bit elements. */
    strided_dtype fp6 = FP6;
    strided_layout six = make(2, I64(2, 4), I64(4, 1), 0);
    assert_ok(strided_view_from_buffer(b, &six, &fp6, false, &v));
    assert_ok(strided_view_relane(&v, 2, &two));
    assert_layout(two.layout, "(2,2):(2,1)", 1);
    assert_true(strided_dtype_equal(two.dtype, fp6x2));
    assert_i64(strided_view_packed_bits(&two), 12);
    strided_view_release(&two);
    strided_view_release(&v);
    /* Padded and whole-byte views have no lanes to change. */
    strided_layout flat = make(1, I64(4), I64(1), 0);
    assert_ok(strided_view_from_buffer_ex(b, &flat, &fp4, true, false, &v));
    assert_error(strided_view_relane(&v, 2, &two), STRIDED_ERR_INVALID_ARGUMENT, "relane",
                 "not one of padded float4_e2m1fn");
    strided_view_release(&v);
    assert_error(strided_view_relane(NULL, 2, &two), STRIDED_ERR_INVALID_ARGUMENT, "relane",
                 "required");
    strided_buffer_release(b);
}

/* The value of the element at element offset o of a view over mem, by the
 * reference: packed at bit (o * bits) from mem's offset 0, or padded in
 * the low bits of byte o. */
static unsigned ref_element(const unsigned char *mem, int64_t o, int width, bool packed)
{
    return packed ? bits_get(mem, o * width, width) : bits_get(mem, o * 8, width);
}

/* Copy a view of one form into another (layouts of up to 3 axes over
 * buffers of size bytes) and compare every element with the reference;
 * the destination's other bits must stay. */
static void check_copy_in(size_t size, strided_dtype dtype, bool src_padded,
                          const strided_layout *src_l, bool dst_padded, const strided_layout *dst_l,
                          uint64_t seed)
{
    unsigned char *src_mem = malloc(size), *dst_mem = malloc(size), *before = malloc(size);
    assert_non_null(src_mem);
    assert_non_null(dst_mem);
    assert_non_null(before);
    int width = dtype.bits * dtype.lanes;
    fill_random(src_mem, size, seed);
    fill_random(dst_mem, size, seed * 7 + 1);
    memcpy(before, dst_mem, size);
    strided_buffer *sb = borrow(src_mem, size), *db = borrow(dst_mem, size);
    strided_view s = {0}, d = {0};
    assert_ok(strided_view_from_buffer_ex(sb, src_l, &dtype, src_padded, false, &s));
    assert_ok(strided_view_from_buffer_ex(db, dst_l, &dtype, dst_padded, false, &d));
    assert_ok(strided_view_copy(&d, &s, NULL, STRIDED_COPY_DEFAULT));
    /* What the reference writes into the copy of the old bytes. */
    int64_t idx[3] = {0, 0, 0}, volume = strided_layout_volume(dst_l);
    for (int64_t e = 0; e < volume; e++) {
        int64_t rest = e, so = src_l->slice_offset, o = dst_l->slice_offset;
        for (int k = dst_l->ndim - 1; k >= 0; k--) {
            idx[k] = rest % dst_l->shape[k];
            rest /= dst_l->shape[k];
            so += idx[k] * src_l->strides[k];
            o += idx[k] * dst_l->strides[k];
        }
        unsigned v = ref_element(src_mem, so, width, !src_padded);
        if (dst_padded)
            bits_set(before, o * 8, 8, v);
        else
            bits_set(before, o * width, width, v);
    }
    if (memcmp(before, dst_mem, size) != 0) {
        size_t k = 0;
        while (before[k] == dst_mem[k])
            k++;
        fail_msg("copy differs from the reference at byte %zu: 0x%02x, expected 0x%02x", k,
                 dst_mem[k], before[k]);
    }
    strided_view_release(&s);
    strided_view_release(&d);
    strided_buffer_release(sb);
    strided_buffer_release(db);
    free(src_mem);
    free(dst_mem);
    free(before);
}

static void check_copy_2d(strided_dtype dtype, bool src_padded, const strided_layout *src_l,
                          bool dst_padded, const strided_layout *dst_l, uint64_t seed)
{
    check_copy_in(4096, dtype, src_padded, src_l, dst_padded, dst_l, seed);
}

static void test_copy_packed_transpose_to_row_major(void **state)
{
    (void)state;
    /* A (30,46) row-major packed fp4 matrix read transposed, (46,30):(1,46),
     * into a row-major (46,30). */
    strided_layout src = make(2, I64(46, 30), I64(1, 46), 0);
    strided_layout dst = make(2, I64(46, 30), I64(30, 1), 0);
    check_copy_2d(FP4, false, &src, false, &dst, 1);
    /* Odd extents: rows of 5 at stride 6, the gaps' nibbles kept. */
    strided_layout src5 = make(2, I64(5, 3), I64(1, 6), 0);
    strided_layout dst5 = make(2, I64(5, 3), I64(4, 1), 2);
    check_copy_2d(FP4, false, &src5, false, &dst5, 2);
    /* 6-bit floats, elements across bytes; 2-bit ints; 12-bit pairs. */
    strided_layout s6 = make(2, I64(12, 8), I64(1, 12), 0);
    strided_layout d6 = make(2, I64(12, 8), I64(8, 1), 4);
    check_copy_2d(FP6, false, &s6, false, &d6, 3);
    strided_layout d6g = make(2, I64(12, 8), I64(12, 1), 0);
    check_copy_2d(FP6, false, &s6, false, &d6g, 4);
    strided_layout s2 = make(2, I64(9, 7), I64(1, 12), 4);
    strided_layout d2 = make(2, I64(9, 7), I64(-8, 1), 64);
    check_copy_2d(INT2, false, &s2, false, &d2, 5);
    strided_layout s12 = make(2, I64(5, 4), I64(1, 6), 0);
    strided_layout d12 = make(2, I64(5, 4), I64(4, 1), 0);
    check_copy_2d(DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 2), false, &s12, false, &d12, 6);
}

static void test_copy_packed_to_padded_and_back(void **state)
{
    (void)state;
    strided_layout packed = make(2, I64(7, 9), I64(10, 1), 0);
    strided_layout padded = make(2, I64(7, 9), I64(9, 1), 0);
    strided_layout padded_t = make(2, I64(7, 9), I64(1, 7), 0);
    const strided_dtype types[] = {FP4, FP6, INT2, DT(STRIDED_DTYPE_UINT, 1, 1),
                                   DT(STRIDED_DTYPE_INT, 4, 1)};
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        strided_layout p = packed;
        if (types[i].bits == 6 || types[i].bits == 2)
            p = make(2, I64(7, 9), I64(12, 1), 0);
        if (types[i].bits == 1)
            p = make(2, I64(7, 9), I64(16, 1), 0);
        check_copy_2d(types[i], false, &p, true, &padded, 10 + i);
        check_copy_2d(types[i], false, &p, true, &padded_t, 20 + i);
        check_copy_2d(types[i], true, &padded, false, &p, 30 + i);
        check_copy_2d(types[i], true, &padded_t, false, &p, 40 + i);
    }
}

/* Every packed sub-byte width: 1, 2, 4 and 6 bits (lanes 1, which can be
 * padded too), then 12 and 4 bits of pairs. */
static strided_dtype width_type(size_t i)
{
    const strided_dtype types[] = {
        DT(STRIDED_DTYPE_UINT, 1, 1), INT2, FP4, FP6, DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 2),
        DT(STRIDED_DTYPE_INT, 2, 2),
    };
    return types[i];
}
#define WIDTHS 6
#define PADDABLE 4 /* the first four of width_type */

/* n rounded up to a multiple of the group of width bits. */
static int64_t whole_groups(int64_t n, int width)
{
    int64_t g = strided_layout_packed_group(width);
    return (n + g - 1) / g * g;
}

static void test_copy_packed_rows_by_bytes(void **state)
{
    (void)state;
    /* Rows of the same packed bits on both sides: whole bytes and a masked
     * last byte, the gaps' bits kept; rows backwards on one side. */
    const int64_t extents[] = {1, 3, 7, 8, 9, 37, 40};
    uint64_t seed = 100;
    for (size_t t = 0; t < WIDTHS; t++) {
        int w = width_type(t).bits * width_type(t).lanes;
        for (size_t e = 0; e < ARRAY_LEN(extents); e++) {
            int64_t n = extents[e], r = whole_groups(n + 1, w);
            strided_layout s = make(2, I64(5, n), I64(r, 1), 0);
            strided_layout d = make(2, I64(5, n), I64(-r, 1), 4 * r);
            strided_layout dg = make(2, I64(5, n), I64(r, 1), r);
            check_copy_2d(width_type(t), false, &s, false, &d, seed++);
            check_copy_2d(width_type(t), false, &d, false, &dg, seed++);
        }
    }
    /* Rows longer than a span of a thread, and enough elements for two
     * threads: the spans' ends fall mid-row. */
    for (size_t t = 0; t < WIDTHS; t++) {
        int w = width_type(t).bits * width_type(t).lanes;
        int64_t r = whole_groups(70001, w);
        strided_layout s = make(2, I64(8, 70001), I64(r, 1), 0);
        strided_layout d = make(2, I64(8, 70001), I64(-r, 1), 7 * r);
        check_copy_in((size_t)1 << 20, width_type(t), false, &s, false, &d, seed++);
    }
}

static void test_copy_packed_padded_by_bytes(void **state)
{
    (void)state;
    /* Packed runs unpacked into padded rows and packed back: whole groups
     * a byte (or 3 bytes of fp6) at a time, the last short group element
     * by element; rows backwards on either side. */
    const int64_t extents[] = {1, 2, 3, 5, 8, 9, 17, 37};
    uint64_t seed = 200;
    for (size_t t = 0; t < PADDABLE; t++) {
        int w = width_type(t).bits;
        for (size_t e = 0; e < ARRAY_LEN(extents); e++) {
            int64_t n = extents[e], r = whole_groups(n, w);
            strided_layout p = make(2, I64(6, n), I64(r, 1), 0);
            strided_layout pb = make(2, I64(6, n), I64(-r, 1), 5 * r);
            strided_layout q = make(2, I64(6, n), I64(n + 3, 1), 1);
            strided_layout qb = make(2, I64(6, n), I64(-n, 1), 5 * n + 2);
            check_copy_2d(width_type(t), false, &p, true, &q, seed++);
            check_copy_2d(width_type(t), false, &pb, true, &qb, seed++);
            check_copy_2d(width_type(t), true, &q, false, &pb, seed++);
            check_copy_2d(width_type(t), true, &qb, false, &p, seed++);
        }
    }
    for (size_t t = 0; t < PADDABLE; t++) {
        int64_t r = whole_groups(70001, width_type(t).bits);
        strided_layout p = make(2, I64(8, 70001), I64(r, 1), 0);
        strided_layout q = make(2, I64(8, 70001), I64(-70001, 1), 7 * 70001);
        check_copy_in((size_t)1 << 20, width_type(t), false, &p, true, &q, seed++);
        check_copy_in((size_t)1 << 20, width_type(t), true, &q, false, &p, seed++);
    }
}

static void test_copy_packed_transposes_by_tiles(void **state)
{
    (void)state;
    /* (m, n) read transposed from a row-major (n, m) into a row-major
     * (m, n): tiles, some cut by the extents, written a group at a time
     * along the destination's rows; rows backwards on the destination. */
    const int64_t sizes[][2] = {{5, 3}, {130, 67}, {129, 257}, {1, 200}};
    uint64_t seed = 300;
    for (size_t t = 0; t < WIDTHS; t++) {
        int w = width_type(t).bits * width_type(t).lanes;
        for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
            int64_t m = sizes[k][0], n = sizes[k][1];
            int64_t rs = whole_groups(m, w), rd = whole_groups(n + 1, w);
            strided_layout s = make(2, I64(m, n), I64(1, rs), 0);
            strided_layout d = make(2, I64(m, n), I64(rd, 1), 0);
            strided_layout db = make(2, I64(m, n), I64(-rd, 1), (m - 1) * rd);
            check_copy_in((size_t)1 << 17, width_type(t), false, &s, false, &d, seed++);
            check_copy_in((size_t)1 << 17, width_type(t), false, &s, false, &db, seed++);
            if (t >= PADDABLE)
                continue;
            /* Padded on one side, transposed. */
            strided_layout q = make(2, I64(m, n), I64(1, m + 1), 0);
            strided_layout qd = make(2, I64(m, n), I64(n, 1), 0);
            check_copy_in((size_t)1 << 17, width_type(t), true, &q, false, &db, seed++);
            check_copy_in((size_t)1 << 17, width_type(t), false, &s, true, &qd, seed++);
        }
        /* A batch of transposes: (3, 70, 50) from (3, 50, 70), the batch
         * backwards on the destination. */
        int64_t rs = whole_groups(70, w), rd = whole_groups(51, w);
        strided_layout s = make(3, I64(3, 70, 50), I64(50 * rs, 1, rs), 0);
        strided_layout d = make(3, I64(3, 70, 50), I64(-70 * rd, rd, 1), 140 * rd);
        check_copy_in((size_t)1 << 17, width_type(t), false, &s, false, &d, seed++);
    }
}

static void test_copy_packed_overlapping_and_refusals(void **state)
{
    (void)state;
    static unsigned char mem[16], want[16];
    fill_random(mem, sizeof mem, 99);
    memcpy(want, mem, sizeof want);
    strided_buffer *b = borrow(mem, sizeof mem);
    strided_dtype fp4 = FP4;
    /* Elements 0..19 onto 2..21, in one buffer: as if read first. */
    strided_layout from = make(1, I64(20), I64(1), 0), to = make(1, I64(20), I64(1), 2);
    strided_view s = {0}, d = {0}, raw = {0};
    assert_ok(strided_view_from_buffer(b, &from, &fp4, false, &s));
    assert_ok(strided_view_from_buffer(b, &to, &fp4, false, &d));
    for (int i = 0; i < 20; i++)
        bits_set(want, (2 + i) * 4, 4, bits_get(mem, i * 4, 4));
    assert_ok(strided_view_copy(&d, &s, NULL, STRIDED_COPY_DEFAULT));
    assert_memory_equal(mem, want, sizeof mem);
    /* Packed elements against a view without a dtype: refused. */
    strided_layout bytes = make(1, I64(16), I64(1), 0);
    assert_ok(strided_view_from_buffer(b, &bytes, NULL, false, &raw));
    assert_error(strided_view_copy(&raw, &s, NULL, STRIDED_COPY_DEFAULT),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy", "needs the dtype of both views");
    /* Lanes are part of the type: pairs copy into pairs only. */
    strided_view pairs = {0};
    strided_dtype x2 = FP4X2;
    strided_layout ten = make(1, I64(10), I64(1), 0);
    assert_ok(strided_view_from_buffer(b, &ten, &x2, false, &pairs));
    assert_error(strided_view_copy(&pairs, &s, NULL, STRIDED_COPY_DEFAULT),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy", "dtype:float4_e2m1fn_x2");
    strided_view_release(&pairs);
    strided_view_release(&raw);
    strided_view_release(&s);
    strided_view_release(&d);
    strided_buffer_release(b);
}

static void test_interface_import_names_padded_types(void **state)
{
    (void)state;
    static unsigned char mem[12];
    strided_interface_desc d = {0};
    d.kind = STRIDED_INTERFACE_ARRAY;
    d.version = 3;
    d.data = mem;
    d.ndim = 2;
    d.shape = I64(3, 4);
    d.nstrides = -1;
    d.typestr = "<V1";
    d.type_name = "float4_e2m1fn";
    strided_view v = {0};
    strided_typestr t;
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, &t));
    assert_true(v.has_dtype);
    assert_true(v.padded);
    assert_true(strided_dtype_equal(v.dtype, FP4));
    assert_true(t.padded);
    assert_i64(strided_view_packed_bits(&v), 0);
    /* A padded view has an array interface; the same bytes packed not. */
    assert_ok(strided_view_check_interface_export(&v, "__array_interface__"));
    strided_view packed = {0};
    strided_dtype fp4 = FP4;
    strided_layout flat = make(1, I64(24), I64(1), 0);
    assert_ok(strided_view_view_ex(&v, &flat, &fp4, false, &packed));
    assert_error(strided_view_check_interface_export(&packed, "__array_interface__"),
                 STRIDED_ERR_UNSUPPORTED, "__array_interface__",
                 "a view of packed float4_e2m1fn elements (4 bits each) has no array interface");
    assert_error(strided_view_check_interface_export(NULL, "x"), STRIDED_ERR_INVALID_ARGUMENT,
                 "interface", "view and what are required");
    strided_view_release(&packed);
    strided_view_release(&v);
    /* Without a name, raw bytes; with another name, what it names. */
    d.type_name = NULL;
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, &t));
    assert_false(v.has_dtype);
    assert_false(v.padded);
    strided_view_release(&v);
    d.type_name = "float8_e4m3fn";
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, &t));
    assert_true(v.has_dtype);
    assert_false(v.padded);
    assert_i64(v.dtype.code, STRIDED_DTYPE_FLOAT8_E4M3FN);
    strided_view_release(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subbyte_dtypes_names_and_bits),
        cmocka_unit_test(test_subbyte_dtypes_that_are_not),
        cmocka_unit_test(test_subbyte_ml_dtypes_are_padded),
        cmocka_unit_test(test_packed_rule_accepts),
        cmocka_unit_test(test_packed_rule_refuses_split_bytes),
        cmocka_unit_test(test_packed_rule_arguments_and_overflow),
        cmocka_unit_test(test_view_of_packed_elements),
        cmocka_unit_test(test_view_of_padded_elements),
        cmocka_unit_test(test_wrap_of_packed_elements_covers_their_bytes),
        cmocka_unit_test(test_dlpack_import_and_export_every_subbyte_form),
        cmocka_unit_test(test_dlpack_import_refuses_split_bytes),
        cmocka_unit_test(test_new_packed_tensors_round_rows_up_to_bytes),
        cmocka_unit_test(test_relane_converts_the_two_spellings),
        cmocka_unit_test(test_copy_packed_transpose_to_row_major),
        cmocka_unit_test(test_copy_packed_to_padded_and_back),
        cmocka_unit_test(test_copy_packed_rows_by_bytes),
        cmocka_unit_test(test_copy_packed_padded_by_bytes),
        cmocka_unit_test(test_copy_packed_transposes_by_tiles),
        cmocka_unit_test(test_copy_packed_overlapping_and_refusals),
        cmocka_unit_test(test_interface_import_names_padded_types),
    };
    use_no_driver();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
