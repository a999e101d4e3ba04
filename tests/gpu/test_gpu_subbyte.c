/*
 * GPU tests of copies of sub-byte elements on a device (the kernel subbyte
 * of src/copy/kernels.cu, through strided_view_copy): packed transposes of
 * 4-bit floats into row-major matrices, 6-bit floats, 2- and 1-bit ints,
 * pairs of 6-bit floats, conversions between packed and padded views both
 * ways, rows of stride 1 that start anywhere in a 32-bit word (the
 * kernel's word rows), packed 4-bit transposes whose rows start on words
 * (its word tiles, with edge tiles), destinations whose bytes hold bits of
 * no element (rows of odd length at an even stride), and copies between host and device memory
 * (through a device temporary). docs/subbyte.md states the rule.
 *
 * Each case fills device memory with random bytes (the destination too),
 * copies, reads back the whole destination allocation and compares it with
 * a reference computed on the host one bit at a time: every element the
 * destination names holds the source element's value (padded: in the low
 * bits of its byte, the high bits 0), every other bit is as it was. The
 * allocations are exactly the views' byte footprints, so compute-sanitizer
 * memcheck reports any access outside them. STRIDED_GPU_SUBBYTE_TESTS, a
 * cmocka test name pattern, runs only the tests it matches
 * (test_packed_transposes: the tiled transposes, for racecheck).
 *
 * The test links no CUDA library: it loads libcuda.so.1 itself for the
 * calls it makes. Without a driver or a device it prints "skipped: no CUDA
 * device" and passes. Device 0 is the device under test.
 */

#include "gpu_test.h"

#include <stdlib.h>

#include "strided.h"

static CUdevice device;
static CUcontext primary;
static long cases;

static int set_primary(void **state)
{
    (void)state;
    return cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS ? 0 : -1;
}

static strided_dtype DT(int code, int bits, int lanes)
{
    strided_dtype d = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
    return d;
}

#define FP4 DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1)
#define FP6 DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 1)
#define FP6X2 DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 2)
#define INT2 DT(STRIDED_DTYPE_INT, 2, 1)
#define UINT1 DT(STRIDED_DTYPE_UINT, 1, 1)

/* One side: a 2-D layout (shape, strides in elements, slice offset), its
 * form, and its bytes on the device (or in host memory, on_host). */
typedef struct side {
    int64_t shape[2], strides[2], offset;
    bool padded, on_host;
    CUdeviceptr base;
    int64_t bytes;
    unsigned char *host; /* the bytes as filled, then as read back */
} side;

/* The bits of an element offset's value on a side. */
static int64_t bit_of(const side *s, int width, int64_t o)
{
    return s->padded ? o * 8 : o * width;
}

/* Allocate and fill a side: its offsets are non-negative, and the
 * allocation ends with the last byte its elements touch (the highest
 * offset: a negative stride reaches it at index 0). */
static void make_side(side *s, int width, uint64_t *seed)
{
    int64_t hi = s->offset;
    for (int k = 0; k < 2; k++)
        if (s->strides[k] > 0)
            hi += (s->shape[k] - 1) * s->strides[k];
    s->bytes = s->padded ? hi + 1 : ((hi + 1) * width + 7) / 8;
    s->host = malloc((size_t)s->bytes);
    assert_non_null(s->host);
    for (int64_t i = 0; i < s->bytes; i++)
        s->host[i] = (unsigned char)xorshift_next(seed);
    if (s->on_host) {
        void *mem = malloc((size_t)s->bytes);
        assert_non_null(mem);
        memcpy(mem, s->host, (size_t)s->bytes);
        s->base = (CUdeviceptr)(uintptr_t)mem;
        return;
    }
    assert_int_equal(cu.cuMemAlloc(&s->base, (size_t)s->bytes), CUDA_SUCCESS);
    CU(cuMemcpyHtoD(s->base, s->host, (size_t)s->bytes));
}

/* Read a side's bytes back into s->host, and free them. */
static void take_side(side *s)
{
    if (s->on_host) {
        memcpy(s->host, (void *)(uintptr_t)s->base, (size_t)s->bytes);
        free((void *)(uintptr_t)s->base);
        return;
    }
    CU(cuMemcpyDtoH(s->host, s->base, (size_t)s->bytes));
    CU(cuMemFree(s->base));
}

/* A view of a side: raw bytes wrapped as device memory of device 0 (or
 * host memory), then seen through the side's layout, type and form. */
static strided_view view_of(const side *s, strided_dtype dtype)
{
    strided_device dev = {s->on_host ? STRIDED_DEVICE_CPU : STRIDED_DEVICE_CUDA, 0};
    strided_layout raw, l;
    strided_view bytes, v;
    assert_ok(strided_layout_init(&raw, 1, I64(s->bytes), NULL, 1));
    assert_ok(strided_view_wrap((void *)(uintptr_t)s->base, &raw, NULL, false, &dev, NULL, NULL,
                                &bytes));
    assert_ok(strided_layout_init(&l, 2, s->shape, s->strides, 1));
    l.slice_offset = s->offset;
    assert_ok(strided_view_view_ex(&bytes, &l, &dtype, s->padded, &v));
    strided_view_release(&bytes);
    return v;
}

/* Copy src into dst on the device and compare the whole destination with
 * the reference. */
static void check_copy(const char *what, strided_dtype dtype, side src, side dst, uint64_t seed)
{
    int width = dtype.bits * dtype.lanes;
    make_side(&src, width, &seed);
    make_side(&dst, width, &seed);
    unsigned char *want = malloc((size_t)dst.bytes);
    assert_non_null(want);
    memcpy(want, dst.host, (size_t)dst.bytes);
    for (int64_t i = 0; i < dst.shape[0]; i++)
        for (int64_t j = 0; j < dst.shape[1]; j++) {
            int64_t so = src.offset + i * src.strides[0] + j * src.strides[1];
            int64_t d = dst.offset + i * dst.strides[0] + j * dst.strides[1];
            unsigned v = bits_get(src.host, bit_of(&src, width, so), width);
            bits_set(want, bit_of(&dst, width, d), dst.padded ? 8 : width, v);
        }
    strided_view sv = view_of(&src, dtype), dv = view_of(&dst, dtype);
    assert_ok(strided_view_copy(&dv, &sv, NULL, STRIDED_COPY_BLOCKING));
    CU(cuCtxSynchronize());
    strided_view_release(&sv);
    strided_view_release(&dv);
    take_side(&src);
    take_side(&dst);
    for (int64_t i = 0; i < dst.bytes; i++)
        if (dst.host[i] != want[i])
            fail_msg("%s: destination byte %lld is 0x%02x, expected 0x%02x", what, (long long)i,
                     dst.host[i], want[i]);
    cases++;
    free(src.host);
    free(dst.host);
    free(want);
}

#define SIDE(r, c, rs, cs, off, pad)                              \
    {                                                             \
        {(r), (c)}, {(rs), (cs)}, (off), (pad), false, 0, 0, NULL \
    }

static void test_packed_transposes(void **state)
{
    (void)state;
    /* An (R, C) row-major fp4 matrix read transposed into a row-major
     * (C, R) one. */
    const int64_t sizes[][2] = {{46, 30}, {256, 130}, {1002, 514}, {2, 2}, {64, 4096}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t r = sizes[i][0], c = sizes[i][1];
        side src = SIDE(c, r, 1, c, 0, false), dst = SIDE(c, r, r, 1, 0, false);
        check_copy("fp4 transpose", FP4, src, dst, 1 + i);
    }
    /* Rows that all start on 32-bit words (row pitches a multiple of 8
     * values, element 0 on a word): the word tiles, edge tiles where the
     * extents are not whole tiles; a destination that starts a byte into a
     * word takes the general tiles. */
    check_copy("fp4 word tiles with edges", FP4, (side)SIDE(264, 520, 1, 264, 0, false),
               (side)SIDE(264, 520, 520, 1, 0, false), 6);
    check_copy("fp4 word tiles, offset rows", FP4, (side)SIDE(300, 136, 1, 304, 8, false),
               (side)SIDE(300, 136, 144, 1, 16, false), 7);
    check_copy("fp4 tiles, destination off its words", FP4, (side)SIDE(300, 136, 1, 304, 8, false),
               (side)SIDE(300, 136, 144, 1, 2, false), 8);
    /* 6-bit floats (groups of 4), 2- and 1-bit ints, 12-bit pairs. */
    check_copy("fp6 transpose", FP6, (side)SIDE(12, 8, 1, 12, 0, false),
               (side)SIDE(12, 8, 8, 1, 4, false), 11);
    check_copy("fp6 transpose large", FP6, (side)SIDE(600, 404, 1, 600, 0, false),
               (side)SIDE(600, 404, 404, 1, 0, false), 12);
    check_copy("int2 transpose", INT2, (side)SIDE(9, 7, 1, 12, 4, false),
               (side)SIDE(9, 7, 8, 1, 0, false), 13);
    check_copy("uint1 transpose", UINT1, (side)SIDE(33, 17, 1, 40, 0, false),
               (side)SIDE(33, 17, 24, 1, 8, false), 14);
    check_copy("fp6 pairs transpose", FP6X2, (side)SIDE(5, 4, 1, 6, 0, false),
               (side)SIDE(5, 4, 4, 1, 0, false), 15);
}

static void test_rows_that_end_inside_a_byte_keep_its_other_bits(void **state)
{
    (void)state;
    check_copy("fp4 rows of 5 at stride 6", FP4, (side)SIDE(3, 5, 6, 1, 0, false),
               (side)SIDE(3, 5, 6, 1, 0, false), 21);
    check_copy("fp4 rows of 5, source transposed", FP4, (side)SIDE(5, 3, 1, 6, 0, false),
               (side)SIDE(5, 3, 4, 1, 2, false), 22);
    check_copy("fp6 rows of 3 at stride 4", FP6, (side)SIDE(7, 3, 4, 1, 0, false),
               (side)SIDE(7, 3, 8, 1, 4, false), 23);
    /* Every other element: each starts a byte and shares it with none. */
    check_copy("fp4 every other element", FP4, (side)SIDE(8, 8, 8, 1, 0, false),
               (side)SIDE(8, 8, 16, 2, 0, false), 24);
    /* Rows read backwards. */
    check_copy("fp4 rows backwards", FP4, (side)SIDE(6, 10, -10, 1, 50, false),
               (side)SIDE(6, 10, 10, 1, 0, false), 25);
}

/* Rows of stride 1 on both sides go by destination words: rows that start
 * anywhere in a word, the same or different places on the two sides,
 * words cut by the rows' ends, every width, both forms. */
static void test_rows_by_words(void **state)
{
    (void)state;
    check_copy("fp4 rows, different word offsets", FP4, (side)SIDE(7, 37, 38, 1, 0, false),
               (side)SIDE(7, 37, 38, 1, 2, false), 101);
    check_copy("fp4 rows on words", FP4, (side)SIDE(9, 64, 64, 1, 8, false),
               (side)SIDE(9, 64, 64, 1, 8, false), 102);
    check_copy("fp4 rows to padded", FP4, (side)SIDE(5, 37, 40, 1, 6, false),
               (side)SIDE(5, 37, 41, 1, 3, true), 103);
    check_copy("fp4 padded rows to packed", FP4, (side)SIDE(5, 37, 41, 1, 3, true),
               (side)SIDE(5, 37, 40, 1, 6, false), 104);
    check_copy("fp6 rows to padded", FP6, (side)SIDE(6, 13, 16, 1, 4, false),
               (side)SIDE(6, 13, 13, 1, 1, true), 105);
    check_copy("fp6 padded rows to packed", FP6, (side)SIDE(6, 13, 13, 1, 1, true),
               (side)SIDE(6, 13, 20, 1, 8, false), 106);
    check_copy("fp6 rows", FP6, (side)SIDE(6, 13, 16, 1, 0, false),
               (side)SIDE(6, 13, 20, 1, 8, false), 107);
    check_copy("int2 rows to padded", INT2, (side)SIDE(5, 29, 32, 1, 0, false),
               (side)SIDE(5, 29, 29, 1, 0, true), 108);
    check_copy("int2 padded rows to packed", INT2, (side)SIDE(5, 29, 30, 1, 1, true),
               (side)SIDE(5, 29, 36, 1, 4, false), 109);
    check_copy("uint1 rows to padded", UINT1, (side)SIDE(3, 45, 48, 1, 8, false),
               (side)SIDE(3, 45, 45, 1, 0, true), 110);
    check_copy("uint1 padded rows to packed", UINT1, (side)SIDE(3, 45, 45, 1, 0, true),
               (side)SIDE(3, 45, 48, 1, 8, false), 111);
    check_copy("fp6 pair rows", FP6X2, (side)SIDE(4, 7, 8, 1, 0, false),
               (side)SIDE(4, 7, 10, 1, 2, false), 112);
    check_copy("fp4 one long row", FP4, (side)SIDE(1, 10001, 10002, 1, 2, false),
               (side)SIDE(1, 10001, 10002, 1, 0, false), 113);
}

static void test_packed_and_padded_conversions(void **state)
{
    (void)state;
    const strided_dtype types[] = {FP4, FP6, INT2, UINT1, DT(STRIDED_DTYPE_INT, 4, 1)};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        int64_t row = 16; /* a multiple of every group */
        side packed = SIDE(7, 9, row, 1, 0, false), packed_t = SIDE(7, 9, 1, 8, 0, false);
        side padded = SIDE(7, 9, 9, 1, 0, true), padded_t = SIDE(7, 9, 1, 7, 0, true);
        check_copy("packed to padded", types[i], packed, padded, 31 + i);
        check_copy("packed to padded, transposed", types[i], packed, padded_t, 41 + i);
        check_copy("padded to packed", types[i], padded, packed, 51 + i);
        check_copy("padded, transposed, to packed", types[i], padded_t, packed, 61 + i);
        if (types[i].bits == 4)
            check_copy("packed, transposed, to padded", types[i], packed_t, padded, 71 + i);
    }
    /* A larger conversion, as torch's fp4 weights into an ml_dtypes array. */
    check_copy("fp4 2048x1024 to padded", FP4, (side)SIDE(2048, 1024, 1024, 1, 0, false),
               (side)SIDE(2048, 1024, 1024, 1, 0, true), 81);
}

static void test_between_host_and_device_memory(void **state)
{
    (void)state;
    side host_t = SIDE(30, 46, 1, 30, 0, false), dev_c = SIDE(30, 46, 46, 1, 0, false);
    host_t.on_host = true;
    check_copy("fp4 host transposed to device", FP4, host_t, dev_c, 91);
    side dev_t = SIDE(30, 46, 1, 30, 0, false), host_rows = SIDE(30, 46, 48, 1, 2, false);
    host_rows.on_host = true;
    check_copy("fp4 device transposed to host rows", FP4, dev_t, host_rows, 92);
    side host_padded = SIDE(12, 8, 8, 1, 0, true), dev_fp6 = SIDE(12, 8, 1, 12, 0, false);
    host_padded.on_host = true;
    check_copy("fp6 device packed to host padded", FP6, dev_fp6, host_padded, 93);
    check_copy("fp6 host padded to device packed", FP6, host_padded,
               (side)SIDE(12, 8, 8, 1, 4, false), 94);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_packed_transposes, set_primary),
        cmocka_unit_test_setup(test_rows_that_end_inside_a_byte_keep_its_other_bits, set_primary),
        cmocka_unit_test_setup(test_rows_by_words, set_primary),
        cmocka_unit_test_setup(test_packed_and_padded_conversions, set_primary),
        cmocka_unit_test_setup(test_between_host_and_device_memory, set_primary),
    };
    int count = 0;
    int rc = gpu_test_start(&count);

    if (rc >= 0)
        return rc;
    if (!gpu_retain_devices(1, &device, &primary))
        return 1;
    /* A cmocka pattern ("test_packed_transposes") runs only those tests. */
    gpu_test_filter("STRIDED_GPU_SUBBYTE_TESTS");
    rc = cmocka_run_group_tests_name("gpu subbyte", tests, NULL, NULL);
    printf("%ld sub-byte copies checked\n", cases);
    gpu_release_devices(1, &device);
    return rc;
}
