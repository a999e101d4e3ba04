/*
 * test_tensor_map.c: strided/tensor_map.h, with no driver (DRIVER_NONE) or
 * against the fake CUDA driver (DRIVER_FAKE).
 *
 * Every rule is checked before the driver is asked anything, so the table
 * of refusals runs in both executables: each row is one broken rule, with
 * the reason it must be refused with, the output left untouched and (with
 * the fake) no encoding. With the fake, valid views of several layouts
 * reach cuTensorMapEncodeTiled with exactly the arguments the driver's
 * order asks for (the fake records them, and refuses whatever breaks the
 * driver's rules), the descriptor is the bytes the fake wrote, the map is
 * made in the current device's context and the caller's context is back
 * afterwards. The views are of fake addresses that nothing reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include "test_cuda.h"
#include "test_util.h"

#include "strided/tensor_map.h"
#include "strided/view.h"

/* Element (0,...,0) of most views: a fake device address, 256-aligned. */
#define ADDR ((uintptr_t)0x7f0000000000)

enum { NO_DTYPE, F32, F16, BF16, U8, U16, U32, U64, I8, I32, I64_, C64, F64 };

static const strided_dtype dtypes[] = {
    [F32] = {STRIDED_DTYPE_FLOAT, 32, 1},   [F16] = {STRIDED_DTYPE_FLOAT, 16, 1},
    [BF16] = {STRIDED_DTYPE_BFLOAT, 16, 1}, [U8] = {STRIDED_DTYPE_UINT, 8, 1},
    [U16] = {STRIDED_DTYPE_UINT, 16, 1},    [U32] = {STRIDED_DTYPE_UINT, 32, 1},
    [U64] = {STRIDED_DTYPE_UINT, 64, 1},    [I8] = {STRIDED_DTYPE_INT, 8, 1},
    [I32] = {STRIDED_DTYPE_INT, 32, 1},     [I64_] = {STRIDED_DTYPE_INT, 64, 1},
    [C64] = {STRIDED_DTYPE_COMPLEX, 64, 1}, [F64] = {STRIDED_DTYPE_FLOAT, 64, 1},
};

/* A view of the memory at element0 (never read), as a producer would
 * describe it: shape, strides in elements (NULL: C order), the dtype's
 * size (or itemsize for NO_DTYPE) on a device taken at its word. */
static strided_view view_at(uintptr_t element0, int device_type, int device_id, int ndim,
                            const int64_t *shape, const int64_t *strides, int dtype, int itemsize)
{
    strided_layout l;
    strided_view v;
    strided_device device = {device_type, device_id};
    if (dtype != NO_DTYPE)
        itemsize = (int)dtypes[dtype].bits / 8;
    assert_ok(strided_layout_init(&l, ndim, shape, strides, itemsize));
    assert_ok(strided_view_wrap((void *)element0, &l, dtype == NO_DTYPE ? NULL : &dtypes[dtype],
                                false, &device, NULL, NULL, &v));
    return v;
}

/* A view of device memory of device 0 at ADDR. */
static strided_view device_view(int ndim, const int64_t *shape, const int64_t *strides, int dtype)
{
    return view_at(ADDR, STRIDED_DEVICE_CUDA, 0, ndim, shape, strides, dtype, 1);
}

#define BOX(...) .box_ndim = N64(__VA_ARGS__), .box_dim = I64(__VA_ARGS__)
#define STEPS(...) .element_strides_ndim = N64(__VA_ARGS__), .element_strides = I64(__VA_ARGS__)

/* Make a map, which must fail with reason (exactly) and leave out as it
 * was; with the fake, without an encoding. */
static void check_refused_at(const strided_view *v, const strided_tensor_map_options *o,
                             strided_status code, const char *reason, const char *file, int line)
{
    strided_tensor_map out;
    fill_sentinel(&out, sizeof out);
#if defined(DRIVER_FAKE)
    long before = fake.calls("cuTensorMapEncodeTiled");
#endif
    check_error_(strided_tensor_map_make(v, o, &out), code, "as_tensor_map", NULL, file, line);
    if (strcmp(strided_last_error_reason(), reason) != 0)
        fail_at(file, line, "reason \"%s\", expected \"%s\"\n", strided_last_error_reason(),
                reason);
    check_untouched_(&out, sizeof out, "out", file, line);
#if defined(DRIVER_FAKE)
    if (fake.calls("cuTensorMapEncodeTiled") != before)
        fail_at(file, line, "the driver was asked to encode\n");
#endif
}
#define check_refused(v, o, code, reason) \
    check_refused_at((v), (o), (code), (reason), __FILE__, __LINE__)

/* One broken rule: a view, options and the reason. */
typedef struct refusal {
    int line;
    int ndim;
    const int64_t *shape;
    const int64_t *strides; /* NULL: C order */
    int dtype;
    uintptr_t address; /* element (0,...,0) */
    int device_type;   /* of device 0 */
    strided_tensor_map_options options;
    const char *reason;
} refusal;

#define CUDA STRIDED_DEVICE_CUDA
#define CPU STRIDED_DEVICE_CPU
#define SUPPORTED                                                                             \
    "supported dtypes: [dtype('uint8'), dtype('uint16'), dtype('uint32'), dtype('int32'), "   \
    "dtype('uint64'), dtype('int64'), dtype('float16'), dtype('float32'), dtype('float64'), " \
    "dtype(bfloat16)]."
#define INTERLEAVE_16B .interleave = STRIDED_TENSOR_MAP_INTERLEAVE_16B
#define INTERLEAVE_32B .interleave = STRIDED_TENSOR_MAP_INTERLEAVE_32B
#define TYPE(t) .has_data_type = true, .data_type = STRIDED_TENSOR_MAP_DATA_TYPE_##t

static void test_every_rule_is_checked_before_the_driver(void **state)
{
    (void)state;
#if defined(DRIVER_FAKE)
    fake.reset(2, 0, 1);
#endif
    const refusal rows[] = {
        /* The memory. */
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {BOX(16)}, "The tensor must be device-accessible"),
        CASE(DIMS(64), NULL, F32, ADDR + 8, CUDA, {BOX(16)},
             "Global memory address must be 16-byte aligned, got address 0x7f0000000008"),
        CASE(DIMS(4, 4, 64), NULL, F32, ADDR + 16, CUDA, {BOX(1, 1, 16), INTERLEAVE_32B},
             "the global address must be 32-byte aligned with interleave INTERLEAVE_32B, got "
             "address 0x7f0000000010"),
        /* The data type. */
        CASE(DIMS(64), NULL, NO_DTYPE, ADDR, CUDA, {BOX(16)},
             "Cannot infer TMA data type from the tensor; please specify data_type explicitly"),
        CASE(DIMS(64), NULL, I8, ADDR, CUDA, {BOX(16)},
             "Unsupported dtype int8 for TMA; " SUPPORTED
             " You may also specify data_type explicitly."),
        CASE(DIMS(64), NULL, C64, ADDR, CUDA, {BOX(16)},
             "Unsupported dtype complex64 for TMA; " SUPPORTED
             " You may also specify data_type explicitly."),
        /* A NumPy type without a DLPack type, by the name the caller gives. */
        CASE(DIMS(64), NULL, NO_DTYPE, ADDR, CUDA, {BOX(16), .dtype_name = "|S4"},
             "Unsupported dtype |S4 for TMA; " SUPPORTED
             " You may also specify data_type explicitly."),
        CASE(DIMS(64), NULL, F16, ADDR, CUDA, {BOX(16), TYPE(FLOAT32)},
             "data_type FLOAT32 has 4-byte elements, but the view's itemsize is 2"),
        CASE(DIMS(64), NULL, I8, ADDR, CUDA, {BOX(16), TYPE(UINT64)},
             "data_type UINT64 has 8-byte elements, but the view's itemsize is 1"),
        /* The rank. */
        CASE(0, NULL, NULL, F32, ADDR, CUDA, {.box_ndim = 0},
             "Tensor rank must be between 1 and 5, got 0"),
        CASE(DIMS(1, 1, 1, 1, 1, 4), NULL, F32, ADDR, CUDA, {BOX(1, 1, 1, 1, 1, 4)},
             "Tensor rank must be between 1 and 5, got 6"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 16), INTERLEAVE_16B},
             "interleave INTERLEAVE_16B needs a tensor of rank 3 or more, got rank 2"),
        /* The box and the element strides, in the view's axis order. */
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 1, 16)},
             "box_dim must have 2 elements (same as tensor rank), got 3"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(16)},
             "box_dim must have 2 elements (same as tensor rank), got 1"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(300, 16)},
             "box_dim[0] must be in [1, 256], got 300"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 0)},
             "box_dim[1] must be in [1, 256], got 0"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(-1, 16)},
             "box_dim[0] must be in [1, 256], got -1"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(4, 257)},
             "box_dim[1] must be in [1, 256], got 257"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 16), STEPS(1)},
             "element_strides must have 2 elements, got 1"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 16), STEPS(0, 1)},
             "element_strides[0] must be positive, got 0"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 16), STEPS(1, 9)},
             "element_strides[1] must be at most 8, got 9"),
        /* The layout: extents, then strides, innermost axis first. */
        CASE(DIMS(0, 64), NULL, F32, ADDR, CUDA, {BOX(1, 16)},
             "axis 0 has extent 0; a tensor map needs 1 to 2^32 elements along each axis"),
        CASE(DIMS(4294967297), NULL, U8, ADDR, CUDA, {BOX(16)},
             "axis 0 has extent 4294967297; a tensor map needs 1 to 2^32 elements along each "
             "axis"),
        CASE(DIMS(4, 64), I64(128, 2), F32, ADDR, CUDA, {BOX(1, 16)},
             "the last axis must have stride 1 (its elements next to each other), got 2"),
        CASE(DIMS(4, 64), I64(64, -1), F32, ADDR, CUDA, {BOX(1, 16)},
             "the last axis must have stride 1 (its elements next to each other), got -1"),
        CASE(DIMS(4, 16), I64(-16, 1), F32, ADDR, CUDA, {BOX(1, 16)},
             "axis 0 has a negative stride (-16); a tensor map steps forwards along every axis"),
        CASE(DIMS(4, 16), I64(0, 1), F32, ADDR, CUDA, {BOX(1, 16)},
             "axis 0 is broadcast (stride 0, extent 4); a tensor map cannot repeat elements"),
        CASE(DIMS(4, 3), I64(3, 1), F32, ADDR, CUDA, {BOX(1, 4)},
             "axis 0 has a stride of 12 bytes (3 elements of 4 bytes); a tensor map needs a "
             "multiple of 16 bytes"),
        CASE(DIMS(2, 4, 16), I64(66, 16, 1), F32, ADDR, CUDA, {BOX(1, 1, 16)},
             "axis 0 has a stride of 264 bytes (66 elements of 4 bytes); a tensor map needs "
             "a multiple of 16 bytes"),
        CASE(DIMS(2, 4, 12), I64(48, 12, 1), F32, ADDR, CUDA,
             {BOX(1, 1, 8), INTERLEAVE_32B, .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_32B},
             "axis 1 has a stride of 48 bytes (12 elements of 4 bytes); a tensor map needs a "
             "multiple of 32 bytes"),
        CASE(DIMS(2, 16), I64(INT64_C(1) << 38, 1), F32, ADDR, CUDA, {BOX(1, 16)},
             "axis 0 has a stride of 274877906944 elements of 4 bytes; a tensor map needs less "
             "than 2^40 bytes"),
        /* The box against the encoding. */
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA, {BOX(2, 3)},
             "box_dim[1] * itemsize must be a multiple of 16 bytes, got 3 * "
             "4 = 12 bytes"),
        CASE(DIMS(4, 64), NULL, F32, ADDR, CUDA,
             {BOX(2, 32), .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_64B},
             "box_dim[1] * itemsize must be at most 64 bytes with SWIZZLE_64B, got 32 * 4 = 128 "
             "bytes"),
        CASE(DIMS(4, 64), NULL, F16, ADDR, CUDA,
             {BOX(2, 24), .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_32B},
             "box_dim[1] * itemsize must be at most 32 bytes with SWIZZLE_32B, got 24 * 2 = 48 "
             "bytes"),
        CASE(DIMS(2, 2, 256), NULL, U8, ADDR, CUDA,
             {BOX(1, 1, 256), .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_128B},
             "box_dim[2] * itemsize must be at most 128 bytes with SWIZZLE_128B, got 256 * 1 = "
             "256 bytes"),
        CASE(DIMS(2, 4, 64), NULL, F32, ADDR, CUDA, {BOX(1, 1, 8), INTERLEAVE_32B},
             "interleave INTERLEAVE_32B needs swizzle SWIZZLE_32B, got NONE"),
        CASE(DIMS(4, 64), NULL, I32, ADDR, CUDA,
             {BOX(1, 16), .oob_fill = STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA},
             "oob_fill NAN_REQUEST_ZERO_FMA needs a floating-point data_type, got INT32"),
        CASE(DIMS(4, 64), NULL, U16, ADDR, CUDA,
             {BOX(1, 16), .oob_fill = STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA},
             "oob_fill NAN_REQUEST_ZERO_FMA needs a floating-point data_type, got UINT16"),
        /* Options outside their enumerations, and their arrays; checked
         * first of all. */
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {BOX(16), .swizzle = 7},
             "swizzle must be a TensorMapSwizzle value (0 to 3), got 7"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {BOX(16), .has_data_type = true, .data_type = 13},
             "data_type must be a TensorMapDataType value (0 to 12), got 13"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {BOX(16), .interleave = -1},
             "interleave must be a TensorMapInterleave value (0 to 2), got -1"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {BOX(16), .l2_promotion = 4},
             "l2_promotion must be a TensorMapL2Promotion value (0 to 3), got 4"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {BOX(16), .oob_fill = 2},
             "oob_fill must be a TensorMapOOBFill value (0 to 1), got 2"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {.box_ndim = -1},
             "box_ndim must not be negative, got -1"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU, {.box_ndim = 2},
             "box_dim is required (NULL with 2 entries)"),
        CASE(DIMS(64), NULL, F32, ADDR, CPU,
             {BOX(16), .element_strides_ndim = -1, .element_strides = I64(1)},
             "element_strides_ndim must not be negative, got -1"),
        /* The first broken rule decides: the memory before the box. */
        CASE(DIMS(64), NULL, F32, ADDR + 4, CPU, {BOX(300)},
             "The tensor must be device-accessible"),
        CASE(DIMS(0), NULL, NO_DTYPE, ADDR + 4, CUDA, {BOX(300)},
             "Global memory address must be 16-byte aligned, got address 0x7f0000000004"),
    };
    for (size_t r = 0; r < ARRAY_LEN(rows); r++) {
        const refusal *row = &rows[r];
        strided_view v = view_at(row->address, row->device_type, 0, row->ndim, row->shape,
                                 row->strides, row->dtype, 4);
        check_refused_at(&v, &row->options, STRIDED_ERR_INVALID_ARGUMENT, row->reason, AT(row));
        strided_view_release(&v);
    }
}

static void test_packed_subbyte_views_have_no_map(void **state)
{
    (void)state;
#if defined(DRIVER_FAKE)
    fake.reset(2, 0, 1);
#endif
    strided_layout l;
    strided_view v;
    strided_device device = {STRIDED_DEVICE_CUDA, 0};
    strided_dtype fp4 = {STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1};
    assert_ok(strided_layout_init(&l, 1, I64(64), NULL, 1));
    assert_ok(strided_view_wrap((void *)ADDR, &l, &fp4, false, &device, NULL, NULL, &v));
    /* Not even as bytes: a byte holds two elements. */
    const strided_tensor_map_options o = {BOX(16), TYPE(UINT8)};
    check_refused(&v, &o, STRIDED_ERR_UNSUPPORTED,
                  "a view of packed 4-bit elements has no tensor map: every element must be "
                  "whole bytes (see them as pairs, or copy them padded)");
    strided_view_release(&v);
}

static void test_arguments_are_required(void **state)
{
    (void)state;
    strided_view v = device_view(DIMS(64), NULL, F32);
    strided_tensor_map_options o = {BOX(16)};
    strided_tensor_map out;
    assert_error(strided_tensor_map_make(NULL, &o, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "as_tensor_map", "view, options and out are required");
    assert_error(strided_tensor_map_make(&v, NULL, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "as_tensor_map", "view, options and out are required");
    assert_error(strided_tensor_map_make(&v, &o, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "as_tensor_map", "view, options and out are required");
    /* The descriptor must sit where the driver can write a CUtensorMap. */
    unsigned char storage[sizeof out + 2 * STRIDED_TENSOR_MAP_ALIGNMENT];
    uintptr_t aligned = ((uintptr_t)storage + STRIDED_TENSOR_MAP_ALIGNMENT - 1) /
                        STRIDED_TENSOR_MAP_ALIGNMENT * STRIDED_TENSOR_MAP_ALIGNMENT;
    strided_tensor_map *misaligned = (strided_tensor_map *)(void *)(aligned + 16);
    fill_sentinel(storage, sizeof storage);
    assert_error(strided_tensor_map_make(&v, &o, misaligned), STRIDED_ERR_INVALID_ARGUMENT,
                 "as_tensor_map", "out must be 128-byte aligned");
    assert_untouched(storage, sizeof storage);
    strided_view released = v;
    strided_view_release(&released);
    check_refused(&released, &o, STRIDED_ERR_INVALID_ARGUMENT,
                  "the view has no buffer (it was released)");
}

static void test_data_types_of_element_types(void **state)
{
    (void)state;
    const struct {
        int dtype;
        strided_tensor_map_data_type type;
        int size;
    } known[] = {
        {U8, STRIDED_TENSOR_MAP_DATA_TYPE_UINT8, 1},
        {U16, STRIDED_TENSOR_MAP_DATA_TYPE_UINT16, 2},
        {U32, STRIDED_TENSOR_MAP_DATA_TYPE_UINT32, 4},
        {I32, STRIDED_TENSOR_MAP_DATA_TYPE_INT32, 4},
        {U64, STRIDED_TENSOR_MAP_DATA_TYPE_UINT64, 8},
        {I64_, STRIDED_TENSOR_MAP_DATA_TYPE_INT64, 8},
        {F16, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16, 2},
        {F32, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32, 4},
        {F64, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT64, 8},
        {BF16, STRIDED_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2},
    };
    for (size_t i = 0; i < ARRAY_LEN(known); i++) {
        strided_tensor_map_data_type t = (strided_tensor_map_data_type)99;
        assert_ok(strided_tensor_map_data_type_from_dtype(&dtypes[known[i].dtype], NULL, false,
                                                          &t));
        assert_int_equal(t, known[i].type);
        assert_int_equal(strided_tensor_map_data_type_size(t), known[i].size);
    }
    assert_int_equal(strided_tensor_map_data_type_size(STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ),
                     4);
    assert_int_equal(strided_tensor_map_data_type_size((strided_tensor_map_data_type)13), 0);
    assert_int_equal(strided_tensor_map_data_type_size((strided_tensor_map_data_type)-1), 0);

    strided_tensor_map_data_type t = (strided_tensor_map_data_type)99;
    assert_error(strided_tensor_map_data_type_from_dtype(&dtypes[I8], NULL, false, &t),
                 STRIDED_ERR_INVALID_ARGUMENT, "as_tensor_map", NULL);
    assert_string_equal(strided_last_error_reason(), "Unsupported dtype int8 for TMA; " SUPPORTED);
    /* A type without a DLPack type is named as the caller names it. */
    assert_error(strided_tensor_map_data_type_from_dtype(NULL, ">f4", false, &t),
                 STRIDED_ERR_INVALID_ARGUMENT, "as_tensor_map", NULL);
    assert_string_equal(strided_last_error_reason(), "Unsupported dtype >f4 for TMA; " SUPPORTED);
    assert_error(strided_tensor_map_data_type_from_dtype(&dtypes[C64], "|S3", true, &t),
                 STRIDED_ERR_INVALID_ARGUMENT, "as_tensor_map", NULL);
    assert_string_equal(strided_last_error_reason(), "Unsupported dtype |S3 for TMA; " SUPPORTED
                                                     " You may also specify data_type explicitly.");
    assert_error(strided_tensor_map_data_type_from_dtype(NULL, NULL, false, &t),
                 STRIDED_ERR_INVALID_ARGUMENT, "as_tensor_map", "a dtype or its name");
    assert_error(strided_tensor_map_data_type_from_dtype(&dtypes[F32], NULL, false, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "as_tensor_map", "out and a dtype");
    assert_int_equal(t, 99);
}

static void test_replace_address_arguments(void **state)
{
    (void)state;
    strided_view v = device_view(DIMS(64), NULL, F32);
    strided_tensor_map map, out;
    memset(&map, 0, sizeof map);
    assert_error(strided_tensor_map_replace_address(NULL, &v, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address", "map, view and out are required");
    assert_error(strided_tensor_map_replace_address(&map, NULL, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address", "map, view and out are required");
    assert_error(strided_tensor_map_replace_address(&map, &v, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address", "map, view and out are required");
    fill_sentinel(&out, sizeof out);
    assert_error(strided_tensor_map_replace_address(&map, &v, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address", "map has rank 0: it is not a map strided_tensor_map_make made");
    assert_untouched(&out, sizeof out);
    /* The view's rules are those of a new map, for the map's interleave. */
    map.rank = 3;
    map.interleave = STRIDED_TENSOR_MAP_INTERLEAVE_32B;
    strided_view host = view_at(ADDR, CPU, 0, DIMS(64), NULL, F32, 4);
    assert_error(strided_tensor_map_replace_address(&map, &host, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "replace_address",
                 "The tensor must be device-accessible");
    strided_view odd = view_at(ADDR + 16, CUDA, 0, DIMS(64), NULL, F32, 4);
    assert_error(strided_tensor_map_replace_address(&map, &odd, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address",
                 "the global address must be 32-byte aligned with interleave INTERLEAVE_32B, got "
                 "address 0x7f0000000010");
    map.interleave = STRIDED_TENSOR_MAP_INTERLEAVE_NONE;
    strided_view_release(&odd);
    odd = view_at(ADDR + 8, CUDA, 0, DIMS(64), NULL, F32, 4);
    assert_error(strided_tensor_map_replace_address(&map, &odd, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address",
                 "Global memory address must be 16-byte aligned, got address 0x7f0000000008");
    strided_view released = v;
    strided_view_release(&released);
    assert_error(strided_tensor_map_replace_address(&map, &released, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "replace_address",
                 "the view has no buffer (it was released)");
    assert_untouched(&out, sizeof out);
    strided_view_release(&odd);
    strided_view_release(&host);
}

#if defined(DRIVER_NONE)

static void test_a_valid_view_needs_the_driver(void **state)
{
    (void)state;
    strided_view v = device_view(DIMS(64, 64), NULL, F32);
    strided_tensor_map_options o = {BOX(32, 32)};
    strided_tensor_map out;
    fill_sentinel(&out, sizeof out);
    assert_error(strided_tensor_map_make(&v, &o, &out), STRIDED_ERR_NO_CUDA_DRIVER, "as_tensor_map",
                 "no CUDA driver");
    assert_untouched(&out, sizeof out);
    strided_tensor_map map = {.rank = 2};
    assert_error(strided_tensor_map_replace_address(&map, &v, &out), STRIDED_ERR_NO_CUDA_DRIVER,
                 "replace_address", "no CUDA driver");
    assert_untouched(&out, sizeof out);
    strided_view_release(&v);
}

#else

static fake_cuda_last_tensor_map_fn last_tensor_map;

/* What the fake was last asked to encode. */
static fake_cuda_tensor_map last_encoding(void)
{
    fake_cuda_tensor_map t;
    memset(&t, 0, sizeof t);
    assert_true(last_tensor_map(&t));
    return t;
}

/* One valid map: the view, the options, and what the driver must be
 * given, in its order (innermost dimension first). */
typedef struct encoding {
    int line;
    int ndim;
    const int64_t *shape;
    const int64_t *strides;
    int dtype;
    uintptr_t address;
    strided_tensor_map_options options;
    int data_type;
    const int64_t *global_dim;
    const int64_t *global_strides; /* rank - 1 entries */
    const int64_t *box_dim;
    const int64_t *element_strides;
} encoding;

#define DRIVER(...) I64(__VA_ARGS__)

static void test_valid_views_reach_the_driver_in_its_order(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    const encoding rows[] = {
        /* 1-d, the data type inferred. */
        CASE(DIMS(1024), NULL, F32, ADDR, {BOX(64)}, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32,
             DRIVER(1024), NULL, DRIVER(64), DRIVER(1)),
        /* C order: rows of 48 floats, 192 bytes apart. */
        CASE(DIMS(64, 48), NULL, F32, ADDR, {BOX(32, 16)}, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32,
             DRIVER(48, 64), DRIVER(192), DRIVER(16, 32), DRIVER(1, 1)),
        /* Gapped rows: 16 halves of every 32. */
        CASE(DIMS(8, 16), I64(32, 1), F16, ADDR, {BOX(4, 8)}, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16,
             DRIVER(16, 8), DRIVER(64), DRIVER(8, 4), DRIVER(1, 1)),
        /* 3-d with outer axes swapped: the strides follow the view. */
        CASE(DIMS(5, 6, 16), I64(16, 80, 1), U8, ADDR, {BOX(1, 2, 16)},
             STRIDED_TENSOR_MAP_DATA_TYPE_UINT8, DRIVER(16, 6, 5), DRIVER(80, 16), DRIVER(16, 2, 1),
             DRIVER(1, 1, 1)),
        /* 5-d, C order, with an axis of extent 1: its stride is the dense
         * one it already has. */
        CASE(DIMS(2, 1, 3, 4, 8), NULL, F32, ADDR, {BOX(1, 1, 2, 2, 8)},
             STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32, DRIVER(8, 4, 3, 1, 2), DRIVER(32, 128, 384, 384),
             DRIVER(8, 2, 2, 1, 1), DRIVER(1, 1, 1, 1, 1)),
        /* An axis of extent 1 whose stride no tensor map could take: it is
         * never stepped along, so it gets the dense stride rounded up. */
        CASE(DIMS(1, 3), I64(3, 1), F32, ADDR, {BOX(1, 4)}, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32,
             DRIVER(3, 1), DRIVER(16), DRIVER(4, 1), DRIVER(1, 1)),
        CASE(DIMS(1, 4, 8), I64(-7, 8, 1), F32, ADDR, {BOX(1, 2, 8)},
             STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32, DRIVER(8, 4, 1), DRIVER(32, 128),
             DRIVER(8, 2, 1), DRIVER(1, 1, 1)),
        /* The last axis of extent 1 may have any stride. */
        CASE(DIMS(4, 1), I64(4, 3), F32, ADDR, {BOX(2, 4)}, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32,
             DRIVER(1, 4), DRIVER(16), DRIVER(4, 2), DRIVER(1, 1)),
        /* A slice: element (0,...,0) further in. */
        CASE(DIMS(4, 64), I64(128, 1), I32, ADDR + 4096 + 64, {BOX(2, 16)},
             STRIDED_TENSOR_MAP_DATA_TYPE_INT32, DRIVER(64, 4), DRIVER(512), DRIVER(16, 2),
             DRIVER(1, 1)),
        /* Every option given, the data type of the same size. */
        CASE(DIMS(16, 64), NULL, U16, ADDR,
             {BOX(8, 64), STEPS(2, 1), TYPE(FLOAT16), .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_128B,
              .l2_promotion = STRIDED_TENSOR_MAP_L2_PROMOTION_L2_256B,
              .oob_fill = STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA},
             STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16, DRIVER(64, 16), DRIVER(128), DRIVER(64, 8),
             DRIVER(1, 2)),
        CASE(DIMS(3, 4, 64), NULL, F32, ADDR, {BOX(1, 2, 8), TYPE(TFLOAT32), INTERLEAVE_16B},
             STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32, DRIVER(64, 4, 3), DRIVER(256, 1024),
             DRIVER(8, 2, 1), DRIVER(1, 1, 1)),
        CASE(DIMS(3, 4, 64), NULL, I64_, ADDR + 32,
             {BOX(1, 2, 4), INTERLEAVE_32B, .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_32B},
             STRIDED_TENSOR_MAP_DATA_TYPE_INT64, DRIVER(64, 4, 3), DRIVER(512, 2048),
             DRIVER(4, 2, 1), DRIVER(1, 1, 1)),
        CASE(DIMS(8, 32), NULL, BF16, ADDR, {BOX(8, 32), .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_64B},
             STRIDED_TENSOR_MAP_DATA_TYPE_BFLOAT16, DRIVER(32, 8), DRIVER(64), DRIVER(32, 8),
             DRIVER(1, 1)),
        CASE(DIMS(2, 2), NULL, F64, ADDR, {BOX(2, 2)}, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT64,
             DRIVER(2, 2), DRIVER(16), DRIVER(2, 2), DRIVER(1, 1)),
    };
    for (size_t r = 0; r < ARRAY_LEN(rows); r++) {
        const encoding *row = &rows[r];
        strided_view v = view_at(row->address, CUDA, 0, row->ndim, row->shape, row->strides,
                                 row->dtype, 1);
        strided_tensor_map map;
        fill_sentinel(&map, sizeof map);
        strided_status status = strided_tensor_map_make(&v, &row->options, &map);
        if (status != STRIDED_OK)
            fail_at(AT(row), "as_tensor_map failed: %s\n", strided_last_error());
        fake_cuda_tensor_map t = last_encoding();
        int rank = row->ndim;
        if (t.rank != rank || map.rank != rank || t.data_type != row->data_type ||
            (int)map.data_type != row->data_type || t.address != row->address ||
            map.global_address != row->address || t.device != 0 || map.device != 0 ||
            t.interleave != (int)row->options.interleave ||
            t.swizzle != (int)row->options.swizzle ||
            t.l2_promotion != (int)row->options.l2_promotion ||
            t.oob_fill != (int)row->options.oob_fill)
            fail_at(AT(row), "rank %d type %d address 0x%llx device %d\n", t.rank, t.data_type,
                    (unsigned long long)t.address, t.device);
        for (int i = 0; i < rank; i++) {
            if (t.global_dim[i] != (uint64_t)row->global_dim[i] ||
                map.global_dim[i] != t.global_dim[i])
                fail_at(AT(row), "globalDim[%d] %llu\n", i, (unsigned long long)t.global_dim[i]);
            if (t.box_dim[i] != (uint32_t)row->box_dim[i] || map.box_dim[i] != t.box_dim[i])
                fail_at(AT(row), "boxDim[%d] %u\n", i, t.box_dim[i]);
            if (t.element_strides[i] != (uint32_t)row->element_strides[i] ||
                map.element_strides[i] != t.element_strides[i])
                fail_at(AT(row), "elementStrides[%d] %u\n", i, t.element_strides[i]);
            if (i > 0 && (t.global_strides[i - 1] != (uint64_t)row->global_strides[i - 1] ||
                          map.global_strides[i - 1] != t.global_strides[i - 1]))
                fail_at(AT(row), "globalStrides[%d] %llu\n", i - 1,
                        (unsigned long long)t.global_strides[i - 1]);
        }
        /* The descriptor is the driver's, byte for byte. */
        if (memcmp(map.descriptor, t.bytes, sizeof map.descriptor) != 0)
            fail_at(AT(row), "the descriptor is not the bytes the driver wrote\n");
        strided_view_release(&v);
    }
    assert_int_equal(fake.calls("cuTensorMapEncodeTiled"), (long)ARRAY_LEN(rows));
}

static void test_descriptor_holds_the_encoding_of_its_call(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view v = device_view(DIMS(64, 64), NULL, F32);
    strided_tensor_map_options o = {BOX(32, 16)};
    strided_tensor_map first, second;
    assert_ok(strided_tensor_map_make(&v, &o, &first));
    assert_ok(strided_tensor_map_make(&v, &o, &second));
    uint64_t words[16];
    memcpy(words, first.descriptor, sizeof words);
    assert_int_equal(words[0], ADDR);
    assert_int_equal(words[1], 64);
    assert_int_equal(words[2], 64);
    assert_int_equal(words[6], 256);
    assert_int_equal(words[10], 16 | 32 << 12);
    assert_int_equal(words[12], STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32 | 2 << 8);
    assert_int_equal(words[14], 1);
    memcpy(words, second.descriptor, sizeof words);
    assert_int_equal(words[14], 2);
    strided_view_release(&v);
}

static void test_made_in_the_current_devices_context(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_tensor_map_options o = {BOX(16)};
    strided_tensor_map map;
    /* No context current: device 0, and still none afterwards. */
    fake.set_current_device(-1);
    strided_view v0 = device_view(DIMS(64), NULL, F32);
    assert_ok(strided_tensor_map_make(&v0, &o, &map));
    assert_int_equal(map.device, 0);
    assert_int_equal(last_encoding().device, 0);
    assert_null(fake.current_context());
    /* Device memory of another device than the current one is refused
     * before any encoding. */
    strided_view v1 = view_at(ADDR, CUDA, 1, DIMS(64), NULL, F32, 4);
    check_refused(&v1, &o, STRIDED_ERR_INVALID_ARGUMENT,
                  "TensorMapDescriptor._from_tiled expects tensor on device 0, got 1");
    fake.set_current_device(1);
    void *ctx1 = fake.current_context();
    assert_ok(strided_tensor_map_make(&v1, &o, &map));
    assert_int_equal(map.device, 1);
    assert_int_equal(last_encoding().device, 1);
    assert_ptr_equal(fake.current_context(), ctx1);
    check_refused(&v0, &o, STRIDED_ERR_INVALID_ARGUMENT,
                  "TensorMapDescriptor._from_tiled expects tensor on device 1, got 0");
    fake.set_current_device(-1);
    strided_view_release(&v0);
    strided_view_release(&v1);
}

static void test_pinned_and_managed_memory_of_any_device(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    static _Alignas(64) float pinned[256], managed[256];
    fake_cuda_range ranges[] = {
        {(uintptr_t)pinned, sizeof pinned, 1, 0, 0, (uintptr_t)pinned, NULL},
        {(uintptr_t)managed, sizeof managed, 2, 1, 0, (uintptr_t)managed, NULL},
    };
    fake.add_range(&ranges[0]);
    fake.add_range(&ranges[1]);
    strided_tensor_map_options o = {BOX(2, 16)};
    strided_tensor_map map;
    fake.set_current_device(1);
    strided_view p = view_at((uintptr_t)pinned, STRIDED_DEVICE_CUDA_HOST, 0, DIMS(16, 16), NULL,
                             F32, 4);
    assert_true(p.device_accessible);
    assert_ok(strided_tensor_map_make(&p, &o, &map));
    assert_int_equal(map.device, 1);
    assert_int_equal(map.global_address, (uintptr_t)pinned);
    strided_view m = view_at((uintptr_t)managed, STRIDED_DEVICE_CUDA_MANAGED, 0, DIMS(16, 16), NULL,
                             F32, 4);
    assert_ok(strided_tensor_map_make(&m, &o, &map));
    assert_int_equal(map.device, 1);
    assert_int_equal(last_encoding().address, (uintptr_t)managed);
    fake.set_current_device(-1);
    strided_view_release(&p);
    strided_view_release(&m);
    fake.remove_range((uintptr_t)pinned);
    fake.remove_range((uintptr_t)managed);
}

static void test_driver_failures_leave_the_map_untouched(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view v = device_view(DIMS(64), NULL, F32);
    strided_tensor_map_options o = {BOX(16)};
    fake.set_current_device(1);
    void *ctx1 = fake.current_context();
    strided_view v1 = view_at(ADDR, CUDA, 1, DIMS(64), NULL, F32, 4);
    fake.fail_next("cuTensorMapEncodeTiled", 1); /* CUDA_ERROR_INVALID_VALUE */
    strided_tensor_map map;
    fill_sentinel(&map, sizeof map);
    assert_error(strided_tensor_map_make(&v1, &o, &map), STRIDED_ERR_CUDA, "as_tensor_map",
                 "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE");
    assert_int_equal(strided_last_cuda_error(), 1);
    assert_untouched(&map, sizeof map);
    assert_ptr_equal(fake.current_context(), ctx1);
    fake.fail_next("cuCtxGetCurrent", 201); /* CUDA_ERROR_INVALID_CONTEXT */
    assert_error(strided_tensor_map_make(&v1, &o, &map), STRIDED_ERR_CUDA, "as_tensor_map",
                 "cuCtxGetCurrent failed");
    assert_int_equal(strided_last_cuda_error(), 201);
    assert_untouched(&map, sizeof map);
    fake.set_current_device(-1);
    /* Nothing is left behind: the next map is made. */
    assert_ok(strided_tensor_map_make(&v, &o, &map));
    assert_null(fake.current_context());
    strided_view_release(&v);
    strided_view_release(&v1);
}

static void test_replace_address_keeps_everything_else(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view v = device_view(DIMS(8, 16), I64(32, 1), F16);
    strided_tensor_map_options o = {BOX(4, 8), .swizzle = STRIDED_TENSOR_MAP_SWIZZLE_32B,
                                    .l2_promotion = STRIDED_TENSOR_MAP_L2_PROMOTION_L2_64B};
    strided_tensor_map map, out;
    assert_ok(strided_tensor_map_make(&v, &o, &map));
    /* Another view, of another shape: only its address counts. */
    strided_view w = view_at(ADDR + 0x10000, CUDA, 0, DIMS(100), NULL, U8, 1);
    fill_sentinel(&out, sizeof out);
    assert_ok(strided_tensor_map_replace_address(&map, &w, &out));
    fake_cuda_tensor_map t = last_encoding();
    assert_int_equal(t.address, ADDR + 0x10000);
    assert_int_equal(out.global_address, ADDR + 0x10000);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.global_dim[0], 16);
    assert_int_equal(t.global_dim[1], 8);
    assert_int_equal(t.global_strides[0], 64);
    assert_int_equal(t.box_dim[0], 8);
    assert_int_equal(t.box_dim[1], 4);
    assert_int_equal(t.data_type, STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16);
    assert_int_equal(t.swizzle, STRIDED_TENSOR_MAP_SWIZZLE_32B);
    assert_int_equal(t.l2_promotion, STRIDED_TENSOR_MAP_L2_PROMOTION_L2_64B);
    assert_memory_equal(out.descriptor, t.bytes, sizeof out.descriptor);
    /* In place. */
    assert_ok(strided_tensor_map_replace_address(&map, &v, &map));
    assert_int_equal(map.global_address, ADDR);
    assert_memory_equal(map.descriptor, last_encoding().bytes, sizeof map.descriptor);
    strided_view_release(&w);
    strided_view_release(&v);
}

static void test_replace_address_in_the_maps_device(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_tensor_map_options o = {BOX(16)};
    strided_tensor_map map, out;
    fake.set_current_device(1);
    strided_view v1 = view_at(ADDR, CUDA, 1, DIMS(64), NULL, F32, 4);
    assert_ok(strided_tensor_map_make(&v1, &o, &map));
    /* No context current now: the map's device still encodes it. */
    fake.set_current_device(-1);
    strided_view w1 = view_at(ADDR + 256, CUDA, 1, DIMS(64), NULL, F32, 4);
    assert_ok(strided_tensor_map_replace_address(&map, &w1, &out));
    assert_int_equal(last_encoding().device, 1);
    assert_int_equal(out.device, 1);
    assert_null(fake.current_context());
    /* Device memory of another device is refused, before any encoding. */
    strided_view w0 = device_view(DIMS(64), NULL, F32);
    long before = fake.calls("cuTensorMapEncodeTiled");
    fill_sentinel(&out, sizeof out);
    assert_error(strided_tensor_map_replace_address(&map, &w0, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "replace_address", "replace_address expects tensor on device 1, got 0");
    assert_int_equal(fake.calls("cuTensorMapEncodeTiled"), before);
    assert_untouched(&out, sizeof out);
    fake.fail_next("cuTensorMapEncodeTiled", 999);
    assert_error(strided_tensor_map_replace_address(&map, &w1, &out), STRIDED_ERR_CUDA,
                 "replace_address", "cuTensorMapEncodeTiled failed");
    assert_untouched(&out, sizeof out);
    strided_view_release(&v1);
    strided_view_release(&w1);
    strided_view_release(&w0);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_rule_is_checked_before_the_driver),
        cmocka_unit_test(test_packed_subbyte_views_have_no_map),
        cmocka_unit_test(test_arguments_are_required),
        cmocka_unit_test(test_data_types_of_element_types),
        cmocka_unit_test(test_replace_address_arguments),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_a_valid_view_needs_the_driver),
#else
        cmocka_unit_test(test_valid_views_reach_the_driver_in_its_order),
        cmocka_unit_test(test_descriptor_holds_the_encoding_of_its_call),
        cmocka_unit_test(test_made_in_the_current_devices_context),
        cmocka_unit_test(test_pinned_and_managed_memory_of_any_device),
        cmocka_unit_test(test_driver_failures_leave_the_map_untouched),
        cmocka_unit_test(test_replace_address_keeps_everything_else),
        cmocka_unit_test(test_replace_address_in_the_maps_device),
#endif
    };
#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        return 1;
    fake_symbol_(lib, "fake_cuda_last_tensor_map", &last_tensor_map);
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
