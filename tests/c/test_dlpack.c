/*
 * Tests of strided/dlpack.h and of the DLPack half of strided/view.h:
 * element types, the DLPack ABI, import of managed tensors (every malformed
 * field of robustness.md B8 rows 1-16 that a C producer can emit, each with
 * its deleter counted) and export (fields, lifetime, allocation failure,
 * round trips).
 *
 * Built with no CUDA driver (DRIVER_NONE): host memory is HOST and exports
 * as (CPU, 0).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "test_util.h"

#include <limits.h>
#include <stdalign.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memory/memory.h"
#include "strided/buffer.h"
#include "strided/dlpack.h"
#include "strided/resource.h"
#include "strided/view.h"
#include "test_cuda.h"

#define OP_ITEMSIZE "dtype_itemsize"
#define OP_IMPORT "import_dlpack"
#define OP_EXPORT "export_dlpack"
#define OP_EXPORT_LEGACY "export_dlpack_legacy"

static strided_dtype DT(int code, int bits, int lanes)
{
    strided_dtype d = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
    return d;
}

#define F32 DT(STRIDED_DTYPE_FLOAT, 32, 1)
#define I16 DT(STRIDED_DTYPE_INT, 16, 1)

/* =================================================================== */
/* dtype                                                                 */
/* =================================================================== */

typedef struct dtype_case {
    int code, bits;
    int itemsize;
    const char *name;
} dtype_case;

static const dtype_case supported_dtypes[] = {
    {STRIDED_DTYPE_INT, 8, 1, "int8"},
    {STRIDED_DTYPE_INT, 16, 2, "int16"},
    {STRIDED_DTYPE_INT, 32, 4, "int32"},
    {STRIDED_DTYPE_INT, 64, 8, "int64"},
    {STRIDED_DTYPE_UINT, 8, 1, "uint8"},
    {STRIDED_DTYPE_UINT, 16, 2, "uint16"},
    {STRIDED_DTYPE_UINT, 32, 4, "uint32"},
    {STRIDED_DTYPE_UINT, 64, 8, "uint64"},
    {STRIDED_DTYPE_FLOAT, 16, 2, "float16"},
    {STRIDED_DTYPE_FLOAT, 32, 4, "float32"},
    {STRIDED_DTYPE_FLOAT, 64, 8, "float64"},
    {STRIDED_DTYPE_BFLOAT, 16, 2, "bfloat16"},
    {STRIDED_DTYPE_COMPLEX, 64, 8, "complex64"},
    {STRIDED_DTYPE_COMPLEX, 128, 16, "complex128"},
    {STRIDED_DTYPE_BOOL, 8, 1, "bool"},
    {STRIDED_DTYPE_FLOAT8_E3M4, 8, 1, "float8_e3m4"},
    {STRIDED_DTYPE_FLOAT8_E4M3, 8, 1, "float8_e4m3"},
    {STRIDED_DTYPE_FLOAT8_E4M3B11FNUZ, 8, 1, "float8_e4m3b11fnuz"},
    {STRIDED_DTYPE_FLOAT8_E4M3FN, 8, 1, "float8_e4m3fn"},
    {STRIDED_DTYPE_FLOAT8_E4M3FNUZ, 8, 1, "float8_e4m3fnuz"},
    {STRIDED_DTYPE_FLOAT8_E5M2, 8, 1, "float8_e5m2"},
    {STRIDED_DTYPE_FLOAT8_E5M2FNUZ, 8, 1, "float8_e5m2fnuz"},
    {STRIDED_DTYPE_FLOAT8_E8M0FNU, 8, 1, "float8_e8m0fnu"},
};

static void test_dtype_itemsize_of_every_supported_type(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof supported_dtypes / sizeof *supported_dtypes;
         i++) {
        const dtype_case *c = &supported_dtypes[i];
        int size = -7;
        assert_ok(strided_dtype_itemsize(DT(c->code, c->bits, 1), &size));
        if (size != c->itemsize)
            fail_msg("%s: itemsize %d, expected %d", c->name, size,
                     c->itemsize);
    }
}

static void test_dtype_format_names_every_supported_type(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof supported_dtypes / sizeof *supported_dtypes;
         i++) {
        const dtype_case *c = &supported_dtypes[i];
        char buf[64];
        size_t n = strided_dtype_format(DT(c->code, c->bits, 1), buf, sizeof buf);
        assert_string_equal(buf, c->name);
        assert_i64(n, strlen(c->name));
    }
}

/* One rejected type: STRIDED_ERR_UNSUPPORTED, a message naming it, the
 * output untouched, and a description as its formatted name. */
static void check_rejected_dtype(strided_dtype d, const char *text)
{
    int size = -7;
    char buf[64], want[64];
    assert_error(strided_dtype_itemsize(d, &size), STRIDED_ERR_UNSUPPORTED,
                 OP_ITEMSIZE, text);
    assert_int_equal(size, -7);
    snprintf(want, sizeof want, "dtype(code=%u, bits=%u, lanes=%u)",
             (unsigned)d.code, (unsigned)d.bits, (unsigned)d.lanes);
    strided_dtype_format(d, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void test_dtype_rejects_lanes_2(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT, 32, 2), "lanes=2");
}

static void test_dtype_rejects_lanes_0(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT, 32, 0), "lanes=0");
}

static void test_dtype_rejects_bits_4(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_INT, 4, 1), "bits=4");
}

static void test_dtype_rejects_bits_12(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_UINT, 12, 1), "bits=12");
}

static void test_dtype_rejects_bits_0(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT, 0, 1), "float0");
}

static void test_dtype_rejects_float6_e2m3fn(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT6_E2M3FN, 6, 1), "float6_e2m3fn");
}

static void test_dtype_rejects_float6_e3m2fn(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 1), "float6_e3m2fn");
}

static void test_dtype_rejects_float4_e2m1fn(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1), "float4_e2m1fn");
}

static void test_dtype_rejects_padded_float4_e2m1fn(void **state)
{
    /* Even a producer that pads float4 to 8 bits per element. */
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 8, 1), "float4_e2m1fn");
}

static void test_dtype_rejects_opaque_handle(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_OPAQUE_HANDLE, 64, 1), "opaque");
}

static void test_dtype_rejects_unknown_code_99(void **state)
{
    (void)state;
    check_rejected_dtype(DT(99, 32, 1), "99");
}

static void test_dtype_rejects_int128(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_INT, 128, 1), "int128");
}

static void test_dtype_rejects_float8_code_2(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT, 8, 1), "float8");
}

static void test_dtype_rejects_complex32(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_COMPLEX, 32, 1), "complex32");
}

static void test_dtype_rejects_bool16(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_BOOL, 16, 1), "bool");
}

static void test_dtype_rejects_float8_code_with_16_bits(void **state)
{
    (void)state;
    check_rejected_dtype(DT(STRIDED_DTYPE_FLOAT8_E4M3FN, 16, 1), "float8_e4m3fn");
}

static void test_dtype_itemsize_without_out(void **state)
{
    (void)state;
    assert_error(strided_dtype_itemsize(F32, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_ITEMSIZE, NULL);
}

static void test_dtype_format_is_like_snprintf(void **state)
{
    char buf[8];
    (void)state;
    /* size 0: nothing written, the full length returned. */
    assert_i64(strided_dtype_format(DT(STRIDED_DTYPE_COMPLEX, 128, 1), NULL, 0),
               10);
    fill_sentinel(buf, sizeof buf);
    assert_i64(strided_dtype_format(F32, buf, 0), 7);
    assert_untouched(buf, sizeof buf);
    /* Truncated, still terminated. */
    assert_i64(strided_dtype_format(DT(STRIDED_DTYPE_COMPLEX, 128, 1), buf, 5),
               10);
    assert_string_equal(buf, "comp");
    assert_i64(strided_dtype_format(DT(STRIDED_DTYPE_FLOAT8_E4M3FN, 8, 1), buf,
                                    sizeof buf),
               13);
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

/* =================================================================== */
/* ABI                                                                   */
/* =================================================================== */

static void test_abi_matches_dlpack_on_lp64(void **state)
{
    (void)state;
    if (sizeof(void *) != 8 || sizeof(long) != 8)
        skip();
    assert_i64(sizeof(strided_device), 8);
    assert_i64(offsetof(strided_device, device_type), 0);
    assert_i64(offsetof(strided_device, device_id), 4);
    assert_i64(sizeof(strided_dtype), 4);
    assert_i64(offsetof(strided_dtype, code), 0);
    assert_i64(offsetof(strided_dtype, bits), 1);
    assert_i64(offsetof(strided_dtype, lanes), 2);
    assert_i64(sizeof(strided_dl_tensor), 48);
    assert_i64(offsetof(strided_dl_tensor, data), 0);
    assert_i64(offsetof(strided_dl_tensor, device), 8);
    assert_i64(offsetof(strided_dl_tensor, ndim), 16);
    assert_i64(offsetof(strided_dl_tensor, dtype), 20);
    assert_i64(offsetof(strided_dl_tensor, shape), 24);
    assert_i64(offsetof(strided_dl_tensor, strides), 32);
    assert_i64(offsetof(strided_dl_tensor, byte_offset), 40);
    assert_i64(sizeof(strided_dl_managed_tensor), 64);
    assert_i64(offsetof(strided_dl_managed_tensor, dl_tensor), 0);
    assert_i64(offsetof(strided_dl_managed_tensor, manager_ctx), 48);
    assert_i64(offsetof(strided_dl_managed_tensor, deleter), 56);
    assert_i64(sizeof(strided_dl_version), 8);
    assert_i64(offsetof(strided_dl_version, major), 0);
    assert_i64(offsetof(strided_dl_version, minor), 4);
    assert_i64(sizeof(strided_dl_managed_tensor_versioned), 80);
    assert_i64(offsetof(strided_dl_managed_tensor_versioned, version), 0);
    assert_i64(offsetof(strided_dl_managed_tensor_versioned, manager_ctx), 8);
    assert_i64(offsetof(strided_dl_managed_tensor_versioned, deleter), 16);
    assert_i64(offsetof(strided_dl_managed_tensor_versioned, flags), 24);
    assert_i64(offsetof(strided_dl_managed_tensor_versioned, dl_tensor), 32);
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

/* =================================================================== */
/* A test producer                                                       */
/* =================================================================== */

/* One managed tensor, versioned or legacy, over the producer's own data;
 * one heap allocation, freed by the deleter, which counts its calls in
 * *deletes (manager_ctx is the producer). ASan then catches any use of the
 * tensor or its data after the deleter ran. */
typedef struct producer {
    int *deletes;
    bool versioned;
    int64_t shape[STRIDED_MAX_NDIM + 2];
    int64_t strides[STRIDED_MAX_NDIM + 2];
    strided_dl_managed_tensor_versioned v;
    strided_dl_managed_tensor l;
    alignas(64) unsigned char data[1024];
} producer;

static void producer_free_versioned(strided_dl_managed_tensor_versioned *self)
{
    producer *p = self->manager_ctx;
    assert_ptr_equal(self, &p->v);
    (*p->deletes)++;
    free(p);
}

static void producer_free_legacy(strided_dl_managed_tensor *self)
{
    producer *p = self->manager_ctx;
    assert_ptr_equal(self, &p->l);
    (*p->deletes)++;
    free(p);
}

/* A C-contiguous float32 tensor of the given shape (version 1.3), data at
 * the start of the producer's array. */
static producer *make_producer(int *deletes, bool versioned, int ndim,
                               const int64_t *shape)
{
    producer *p = calloc(1, sizeof *p);
    assert_non_null(p);
    *deletes = 0;
    p->deletes = deletes;
    p->versioned = versioned;
    for (int i = 0; i < (int)(sizeof p->data); i++)
        p->data[i] = (unsigned char)i;
    strided_dl_tensor *t = versioned ? &p->v.dl_tensor : &p->l.dl_tensor;
    if (versioned) {
        p->v.version.major = 1;
        p->v.version.minor = 3;
        p->v.manager_ctx = p;
        p->v.deleter = producer_free_versioned;
        p->v.flags = 0;
    } else {
        p->l.manager_ctx = p;
        p->l.deleter = producer_free_legacy;
    }
    t->data = p->data;
    t->device.device_type = STRIDED_DEVICE_CPU;
    t->device.device_id = 0;
    t->ndim = ndim;
    t->dtype = F32;
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        p->shape[i] = shape[i];
        p->strides[i] = stride;
        stride *= shape[i] > 0 ? shape[i] : 1;
    }
    t->shape = ndim > 0 ? p->shape : NULL;
    t->strides = ndim > 0 ? p->strides : NULL;
    t->byte_offset = 0;
    return p;
}
#define producer_of(deletes, versioned, ...)                                   \
    make_producer((deletes), (versioned), DIMS(__VA_ARGS__))

static strided_dl_tensor *T(producer *p)
{
    return p->versioned ? &p->v.dl_tensor : &p->l.dl_tensor;
}

static void *M(producer *p) { return p->versioned ? (void *)&p->v : (void *)&p->l; }

static void set_strides(producer *p, int n, const int64_t *s)
{
    for (int i = 0; i < n; i++)
        p->strides[i] = s[i];
}
#define STRIDES(p, ...) set_strides((p), N64(__VA_ARGS__), I64(__VA_ARGS__))

static strided_status import(producer *p, strided_view *out)
{
    return strided_view_import_dlpack(M(p), p->versioned, out);
}

/* Import that must fail with code and a reason containing text: the
 * deleter ran exactly once, before the call returned, and out is
 * untouched. */
#define assert_import_fails(p, deletes, code, text)                            \
    do {                                                                       \
        strided_view out_;                                                     \
        fill_sentinel(&out_, sizeof out_);                                     \
        assert_error(import((p), &out_), (code), OP_IMPORT, (text));           \
        assert_int_equal(*(deletes), 1);                                       \
        assert_untouched(&out_, sizeof out_);                                  \
    } while (0)

/* Run one malformed case for the versioned and the legacy form. */
typedef void (*malform_fn)(producer *p);

static void check_malformed(malform_fn f, bool versioned, strided_status code,
                            const char *text, const char *file, int line)
{
    int deletes = -1;
    producer *p = producer_of(&deletes, versioned, 2, 3);
    strided_view out;
    f(p);
    fill_sentinel(&out, sizeof out);
    check_error_(import(p, &out), code, OP_IMPORT, text, file, line);
    if (deletes != 1)
        fail_at(file, line, "%s: deleter ran %d times, expected 1\n",
                versioned ? "versioned" : "legacy", deletes);
    check_untouched_(&out, sizeof out, "out", file, line);
}

#define assert_malformed(f, code, text)                                        \
    do {                                                                       \
        check_malformed((f), true, (code), (text), __FILE__, __LINE__);        \
        check_malformed((f), false, (code), (text), __FILE__, __LINE__);       \
    } while (0)

#define assert_malformed_versioned(f, code, text)                              \
    check_malformed((f), true, (code), (text), __FILE__, __LINE__)

/* =================================================================== */
/* Import: malformed tensors (robustness.md B8)                          */
/* =================================================================== */

static void m_ndim_minus_1(producer *p) { T(p)->ndim = -1; }
static void m_ndim_65(producer *p)
{
    for (int i = 0; i < 65; i++)
        p->shape[i] = p->strides[i] = 1;
    T(p)->ndim = 65;
}
static void m_ndim_int_min(producer *p) { T(p)->ndim = INT32_MIN; }
static void m_negative_extent(producer *p) { p->shape[1] = -1; }
static void m_shape_null(producer *p) { T(p)->shape = NULL; }
static void m_strides_null(producer *p) { T(p)->strides = NULL; }
static void m_lanes_2(producer *p) { T(p)->dtype = DT(STRIDED_DTYPE_FLOAT, 32, 2); }
static void m_bits_4(producer *p) { T(p)->dtype = DT(STRIDED_DTYPE_INT, 4, 1); }
static void m_bits_12(producer *p) { T(p)->dtype = DT(STRIDED_DTYPE_INT, 12, 1); }
static void m_bits_0(producer *p) { T(p)->dtype = DT(STRIDED_DTYPE_UINT, 0, 1); }
static void m_float4(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1);
}
static void m_float6(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 1);
}
static void m_opaque(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_OPAQUE_HANDLE, 64, 1);
}
static void m_code_99(producer *p) { T(p)->dtype = DT(99, 32, 1); }
static void m_rocm(producer *p) { T(p)->device.device_type = STRIDED_DEVICE_ROCM; }
static void m_device_99(producer *p) { T(p)->device.device_type = 99; }
static void m_device_0(producer *p) { T(p)->device.device_type = 0; }
static void m_cpu_id_1(producer *p) { T(p)->device.device_id = 1; }
static void m_cpu_id_minus_1(producer *p) { T(p)->device.device_id = -1; }
static void m_cuda_id_minus_1(producer *p)
{
    T(p)->device.device_type = STRIDED_DEVICE_CUDA;
    T(p)->device.device_id = -1;
}
static void m_data_null(producer *p) { T(p)->data = NULL; }
static void m_byte_offset_huge(producer *p)
{
    T(p)->byte_offset = (uint64_t)INT64_MAX + 1; /* a multiple of 4 */
}
static void m_byte_offset_max(producer *p) { T(p)->byte_offset = UINT64_MAX - 3; }
static void m_data_plus_offset_overflows(producer *p)
{
    /* Never dereferenced: the import must reject it from the numbers. */
    T(p)->data = (void *)(UINTPTR_MAX - 4095);
    T(p)->byte_offset = 8192;
}
static void m_data_plus_offset_overflows_near_int64(producer *p)
{
    T(p)->data = (void *)(uintptr_t)UINT64_C(0xFFFF000000000000);
    T(p)->byte_offset = (uint64_t)INT64_MAX - 7;
}
static void m_byte_offset_misaligned(producer *p) { T(p)->byte_offset = 2; }
static void m_byte_offset_odd(producer *p) { T(p)->byte_offset = 1; }
static void m_shape_product_overflows(producer *p)
{
    p->shape[0] = INT64_C(1) << 32;
    p->shape[1] = INT64_C(1) << 32;
    p->strides[0] = 0;
    p->strides[1] = 0;
}
static void m_shape_product_overflows_with_a_0(producer *p)
{
    /* ndim 3 over shape[0..2]: (0, 2**32, 2**32). */
    T(p)->ndim = 3;
    p->shape[0] = 0;
    p->shape[1] = INT64_C(1) << 32;
    p->shape[2] = INT64_C(1) << 32;
    p->strides[0] = p->strides[1] = p->strides[2] = 1;
}
static void m_strides_overflow(producer *p)
{
    p->strides[0] = INT64_MAX;
}
static void m_strides_overflow_negative(producer *p)
{
    p->strides[0] = INT64_MIN;
}
static void m_byte_strides_overflow(producer *p)
{
    /* Element offsets fit (2 * 2**61), byte offsets (x4) do not. */
    p->strides[0] = INT64_C(1) << 61;
}
static void m_footprint_past_the_address_space(producer *p)
{
    /* The last element lies past UINTPTR_MAX. */
    T(p)->data = (void *)(uintptr_t)UINT64_C(0xFFFF000000000000);
    p->strides[0] = INT64_C(1) << 59; /* 2**61 bytes */
}
static void m_footprint_below_address_0(producer *p)
{
    /* Element (1,0) lies 32 bytes before data = 16. */
    T(p)->data = (void *)(uintptr_t)16;
    p->strides[0] = -8;
}

#define MALFORMED_TEST(name, fn, code, text)                                   \
    static void test_import_rejects_##name(void **state)                      \
    {                                                                          \
        (void)state;                                                           \
        assert_malformed(fn, code, text);                                      \
    }

MALFORMED_TEST(ndim_minus_1, m_ndim_minus_1, STRIDED_ERR_INVALID_ARGUMENT, "ndim")
MALFORMED_TEST(ndim_65, m_ndim_65, STRIDED_ERR_INVALID_ARGUMENT, "ndim")
MALFORMED_TEST(ndim_int_min, m_ndim_int_min, STRIDED_ERR_INVALID_ARGUMENT, "ndim")
MALFORMED_TEST(negative_extent, m_negative_extent, STRIDED_ERR_INVALID_ARGUMENT,
               "negative")
MALFORMED_TEST(shape_null, m_shape_null, STRIDED_ERR_INVALID_ARGUMENT, "shape")
MALFORMED_TEST(lanes_2, m_lanes_2, STRIDED_ERR_UNSUPPORTED, "lanes=2")
MALFORMED_TEST(bits_4, m_bits_4, STRIDED_ERR_UNSUPPORTED, "bits=4")
MALFORMED_TEST(bits_12, m_bits_12, STRIDED_ERR_UNSUPPORTED, "bits=12")
MALFORMED_TEST(bits_0, m_bits_0, STRIDED_ERR_UNSUPPORTED, "uint0")
MALFORMED_TEST(float4, m_float4, STRIDED_ERR_UNSUPPORTED, "float4_e2m1fn")
MALFORMED_TEST(float6, m_float6, STRIDED_ERR_UNSUPPORTED, "float6_e3m2fn")
MALFORMED_TEST(opaque_handle, m_opaque, STRIDED_ERR_UNSUPPORTED, "opaque")
MALFORMED_TEST(unknown_dtype_code, m_code_99, STRIDED_ERR_UNSUPPORTED, "99")
MALFORMED_TEST(rocm_device, m_rocm, STRIDED_ERR_UNSUPPORTED, "device")
MALFORMED_TEST(device_type_99, m_device_99, STRIDED_ERR_UNSUPPORTED, "device")
MALFORMED_TEST(device_type_0, m_device_0, STRIDED_ERR_UNSUPPORTED, "device")
MALFORMED_TEST(cpu_device_id_1, m_cpu_id_1, STRIDED_ERR_INVALID_ARGUMENT, "device")
MALFORMED_TEST(cpu_device_id_minus_1, m_cpu_id_minus_1,
               STRIDED_ERR_INVALID_ARGUMENT, "device")
MALFORMED_TEST(cuda_device_id_minus_1, m_cuda_id_minus_1,
               STRIDED_ERR_INVALID_ARGUMENT, "device")
MALFORMED_TEST(null_data_with_elements, m_data_null,
               STRIDED_ERR_INVALID_ARGUMENT, "data")
MALFORMED_TEST(byte_offset_above_int64_max, m_byte_offset_huge,
               STRIDED_ERR_INVALID_ARGUMENT, "byte_offset")
MALFORMED_TEST(byte_offset_uint64_max, m_byte_offset_max,
               STRIDED_ERR_INVALID_ARGUMENT, "byte_offset")
MALFORMED_TEST(data_plus_byte_offset_overflowing, m_data_plus_offset_overflows,
               STRIDED_ERR_INVALID_ARGUMENT, "byte_offset")
MALFORMED_TEST(data_plus_large_byte_offset_overflowing,
               m_data_plus_offset_overflows_near_int64,
               STRIDED_ERR_INVALID_ARGUMENT, "byte_offset")
MALFORMED_TEST(byte_offset_not_a_multiple_of_the_itemsize,
               m_byte_offset_misaligned, STRIDED_ERR_INVALID_ARGUMENT,
               "byte_offset")
MALFORMED_TEST(odd_byte_offset, m_byte_offset_odd, STRIDED_ERR_INVALID_ARGUMENT,
               "byte_offset")
MALFORMED_TEST(shape_product_overflow, m_shape_product_overflows,
               STRIDED_ERR_OVERFLOW, NULL)
MALFORMED_TEST(shape_product_overflow_with_a_zero_extent,
               m_shape_product_overflows_with_a_0, STRIDED_ERR_OVERFLOW, NULL)
MALFORMED_TEST(strides_overflowing_offsets, m_strides_overflow,
               STRIDED_ERR_OVERFLOW, NULL)
MALFORMED_TEST(negative_strides_overflowing_offsets, m_strides_overflow_negative,
               STRIDED_ERR_OVERFLOW, NULL)
MALFORMED_TEST(strides_overflowing_byte_offsets, m_byte_strides_overflow,
               STRIDED_ERR_OVERFLOW, NULL)

/* A footprint outside the address space: an overflow or an invalid
 * argument, never a view. */
static void check_never_a_view(malform_fn f)
{
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 2, 3);
        strided_view out;
        f(p);
        fill_sentinel(&out, sizeof out);
        strided_status s = import(p, &out);
        if (s != STRIDED_ERR_OVERFLOW && s != STRIDED_ERR_INVALID_ARGUMENT)
            fail_msg("%s: status %s (%s)", versioned ? "versioned" : "legacy",
                     strided_status_name(s),
                     s == STRIDED_OK ? "" : strided_last_error());
        assert_int_equal(deletes, 1);
        assert_untouched(&out, sizeof out);
    }
}

static void test_import_rejects_a_footprint_past_the_address_space(void **state)
{
    (void)state;
    check_never_a_view(m_footprint_past_the_address_space);
}

static void test_import_rejects_a_footprint_below_address_0(void **state)
{
    (void)state;
    check_never_a_view(m_footprint_below_address_0);
}

static void test_import_rejects_null_strides_in_version_1_2(void **state)
{
    int deletes = -1;
    (void)state;
    producer *p = producer_of(&deletes, true, 2, 3);
    p->v.version.minor = 2;
    m_strides_null(p);
    assert_import_fails(p, &deletes, STRIDED_ERR_INVALID_ARGUMENT, "strides");
}

static void test_import_rejects_null_strides_in_version_1_3(void **state)
{
    (void)state;
    assert_malformed_versioned(m_strides_null, STRIDED_ERR_INVALID_ARGUMENT,
                               "strides");
}

static void test_import_rejects_null_strides_in_a_later_minor_version(void **state)
{
    int deletes = -1;
    (void)state;
    producer *p = producer_of(&deletes, true, 2, 3);
    p->v.version.minor = 9;
    m_strides_null(p);
    assert_import_fails(p, &deletes, STRIDED_ERR_INVALID_ARGUMENT, "strides");
}

static void test_import_rejects_major_version_2(void **state)
{
    int deletes = -1;
    (void)state;
    producer *p = producer_of(&deletes, true, 2, 3);
    p->v.version.major = 2;
    assert_import_fails(p, &deletes, STRIDED_ERR_UNSUPPORTED,
                        "Unsupported DLPack major version: 2 (only 1 is "
                        "supported)");
}

static void test_import_rejects_major_version_0(void **state)
{
    int deletes = -1;
    (void)state;
    producer *p = producer_of(&deletes, true, 2, 3);
    p->v.version.major = 0;
    p->v.version.minor = 9;
    assert_import_fails(p, &deletes, STRIDED_ERR_UNSUPPORTED, "major version");
}

static void test_import_of_major_version_2_reads_no_other_field_poisoned(
    void **state)
{
    /* Garbage everywhere past the deleter: any use of it would crash or
     * give another error. */
    int deletes = -1;
    (void)state;
    producer *p = producer_of(&deletes, true, 2, 3);
    p->v.version.major = 2;
    p->v.version.minor = 0xDEAD;
    memset(&p->v.flags, 0xFF, sizeof p->v.flags);
    memset(&p->v.dl_tensor, 0xA7, sizeof p->v.dl_tensor);
    p->v.dl_tensor.ndim = -77;
    p->v.dl_tensor.shape = (int64_t *)(uintptr_t)8;
    p->v.dl_tensor.strides = (int64_t *)(uintptr_t)16;
    assert_import_fails(p, &deletes, STRIDED_ERR_UNSUPPORTED, "major version");
}

/* The deleter of a tensor placed so that every field after deleter lies in
 * an inaccessible page. */
static int guarded_deletes;
static void guarded_deleter(strided_dl_managed_tensor_versioned *self)
{
    assert_ptr_equal(self->manager_ctx, &guarded_deletes);
    guarded_deletes++;
}

static void test_import_of_major_version_2_reads_no_other_field_guarded(
    void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    assert_true(page > 0);
    unsigned char *mem = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    assert_int_equal(mprotect(mem + page, (size_t)page, PROT_NONE), 0);
    /* version, manager_ctx and deleter end exactly at the guard page. */
    size_t head = offsetof(strided_dl_managed_tensor_versioned, flags);
    strided_dl_managed_tensor_versioned *m =
        (strided_dl_managed_tensor_versioned *)(void *)(mem + page - head);
    m->version.major = 2;
    m->version.minor = 0;
    m->manager_ctx = &guarded_deletes;
    m->deleter = guarded_deleter;
    guarded_deletes = 0;

    strided_view out;
    fill_sentinel(&out, sizeof out);
    assert_error(strided_view_import_dlpack(m, true, &out),
                 STRIDED_ERR_UNSUPPORTED, OP_IMPORT, "major version");
    assert_int_equal(guarded_deletes, 1);
    assert_untouched(&out, sizeof out);
    assert_int_equal(munmap(mem, (size_t)page * 2), 0);
}

static void test_import_of_null_managed(void **state)
{
    strided_view out;
    (void)state;
    fill_sentinel(&out, sizeof out);
    assert_error(strided_view_import_dlpack(NULL, true, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_IMPORT, NULL);
    assert_untouched(&out, sizeof out);
    assert_error(strided_view_import_dlpack(NULL, false, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_IMPORT, NULL);
    assert_untouched(&out, sizeof out);
}

static void test_import_without_out_still_deletes(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 2, 3);
        assert_error(strided_view_import_dlpack(M(p), versioned, NULL),
                     STRIDED_ERR_INVALID_ARGUMENT, OP_IMPORT, NULL);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_with_a_null_deleter(void **state)
{
    /* A NULL deleter means nothing to free, on success and failure. */
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 2, 3);
        if (versioned)
            p->v.deleter = NULL;
        else
            p->l.deleter = NULL;
        strided_view v;
        assert_ok(import(p, &v));
        assert_ptr_equal(strided_view_ptr(&v), p->data);
        strided_view_release(&v);
        T(p)->ndim = -1;
        assert_error(import(p, &v), STRIDED_ERR_INVALID_ARGUMENT, OP_IMPORT,
                     "ndim");
        assert_int_equal(deletes, 0);
        free(p);
    }
}

static void test_import_allocation_failure_deletes_once(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        long n;
        for (n = 0; n < 32; n++) {
            int deletes = -1;
            producer *p = producer_of(&deletes, versioned, 2, 3);
            strided_view v;
            fill_sentinel(&v, sizeof v);
            strided__fail_allocation_after(n);
            strided_status s = import(p, &v);
            strided__fail_allocation_after(-1);
            if (s == STRIDED_OK) {
                assert_int_equal(deletes, 0);
                strided_view_release(&v);
                assert_int_equal(deletes, 1);
                break;
            }
            assert_status(s, STRIDED_ERR_OUT_OF_MEMORY);
            assert_int_equal(deletes, 1);
            assert_untouched(&v, sizeof v);
        }
        assert_true(n > 0); /* at least one allocation was failed */
        assert_true(n < 32);
    }
}

/* =================================================================== */
/* Import: valid tensors                                                 */
/* =================================================================== */

static void check_import_c_contiguous(bool versioned)
{
    int deletes = -1;
    producer *p = producer_of(&deletes, versioned, 2, 3);
    strided_view v;
    assert_ok(import(p, &v));
    assert_int_equal(deletes, 0);
    assert_non_null(v.buffer);
    assert_layout(v.layout, "(2,3):(3,1)", 4);
    assert_true(v.has_dtype);
    assert_true(strided_dtype_equal(v.dtype, F32));
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(v.device.device_id, 0);
    assert_false(v.readonly);
    assert_ptr_equal(strided_view_ptr(&v), p->data);
    assert_true(strided_view_device_ptr(&v) == 0);
    assert_i64(v.origin, 0);
    assert_ptr_equal(strided_buffer_ptr(v.buffer), p->data);
    assert_i64(strided_buffer_size(v.buffer), 24);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    assert_int_equal(strided_buffer_memory_info(v.buffer).kind,
                     STRIDED_MEMORY_HOST);
    strided_view_release(&v);
    assert_null(v.buffer);
    assert_int_equal(deletes, 1);
    strided_view_release(&v); /* twice: nothing more */
    assert_int_equal(deletes, 1);
}

static void test_import_versioned(void **state)
{
    (void)state;
    check_import_c_contiguous(true);
}

static void test_import_legacy(void **state)
{
    (void)state;
    check_import_c_contiguous(false);
}

static void test_import_older_minor_versions(void **state)
{
    (void)state;
    for (uint32_t minor = 0; minor <= 3; minor++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, true, 4);
        strided_view v;
        p->v.version.minor = minor;
        assert_ok(import(p, &v));
        assert_layout(v.layout, "(4,):(1,)", 4);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_deletes_after_the_last_derived_view(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 4, 5);
        strided_view v, d, dd;
        unsigned char *data = p->data;
        assert_ok(import(p, &v));
        strided_layout sl = sliced(v.layout, S_(1, 3, 1), S_(0, 5, 2));
        assert_ok(strided_view_view(&v, &sl, NULL, &d));
        assert_ptr_equal(strided_view_ptr(&d), data + 5 * 4);
        assert_ok(strided_view_view(&d, NULL, NULL, &dd));
        assert_i64(strided_buffer_use_count(v.buffer), 3);
        strided_view_release(&v);
        assert_int_equal(deletes, 0);
        /* The data is still there (ASan would catch a freed producer). */
        assert_int_equal(*(unsigned char *)strided_view_ptr(&d), 20);
        strided_view_release(&d);
        assert_int_equal(deletes, 0);
        assert_int_equal(*(unsigned char *)strided_view_ptr(&dd), 20);
        strided_view_release(&dd);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_buffer_reference_outlives_the_view(void **state)
{
    int deletes = -1;
    (void)state;
    producer *p = producer_of(&deletes, true, 8);
    strided_view v;
    assert_ok(import(p, &v));
    strided_buffer *b = strided_buffer_retain(v.buffer);
    strided_view_release(&v);
    assert_int_equal(deletes, 0);
    strided_buffer_release(b);
    assert_int_equal(deletes, 1);
}

static void check_import_null_strides_accepted(bool versioned, uint32_t minor)
{
    int deletes = -1;
    producer *p = producer_of(&deletes, versioned, 2, 3);
    strided_view v;
    if (versioned)
        p->v.version.minor = minor;
    m_strides_null(p);
    assert_ok(import(p, &v));
    assert_layout_implicit(v.layout, "(2,3):(3,1)", 4);
    assert_ptr_equal(strided_view_ptr(&v), p->data);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_null_strides_in_version_1_1(void **state)
{
    (void)state;
    check_import_null_strides_accepted(true, 1);
}

static void test_import_null_strides_in_version_1_0(void **state)
{
    (void)state;
    check_import_null_strides_accepted(true, 0);
}

static void test_import_null_strides_legacy(void **state)
{
    (void)state;
    check_import_null_strides_accepted(false, 0);
}

static void test_import_honours_byte_offset(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 2, 3);
        strided_view v;
        T(p)->byte_offset = 40;
        assert_ok(import(p, &v));
        assert_ptr_equal(strided_view_ptr(&v), p->data + 40);
        assert_layout(v.layout, "(2,3):(3,1)", 4);
        /* The buffer covers the footprint. */
        assert_ptr_equal(strided_buffer_ptr(v.buffer), p->data + 40);
        assert_i64(strided_buffer_size(v.buffer), 24);
        assert_i64(v.origin, 0);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_null_data_empty_tensor(void **state)
{
    /* data NULL, volume 0, byte_offset 0: accepted (B8 row 15). */
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 0, 3);
        strided_view v;
        T(p)->data = NULL;
        assert_ok(import(p, &v));
        assert_i64(strided_layout_volume(&v.layout), 0);
        assert_int_equal(v.layout.ndim, 2);
        assert_i64(v.layout.shape[0], 0);
        assert_i64(v.layout.shape[1], 3);
        assert_null(strided_view_ptr(&v));
        assert_i64(strided_buffer_size(v.buffer), 0);
        /* A derived view may only be empty. */
        strided_layout empty = mk_c(DIMS(3, 0), 4);
        strided_view d;
        assert_ok(strided_view_view(&v, &empty, NULL, &d));
        strided_view_release(&d);
        strided_layout one = mk_c(DIMS(1), 4);
        fill_sentinel(&d, sizeof d);
        assert_error(strided_view_view(&v, &one, NULL, &d),
                     STRIDED_ERR_INVALID_ARGUMENT, NULL, NULL);
        assert_untouched(&d, sizeof d);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_empty_tensor_with_data(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 2, 0, 5);
        strided_view v;
        assert_ok(import(p, &v));
        assert_i64(strided_layout_volume(&v.layout), 0);
        assert_int_equal(v.layout.ndim, 3);
        assert_ptr_equal(strided_view_ptr(&v), p->data);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_0d_tensor(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = make_producer(&deletes, versioned, 0, NULL);
        strided_view v;
        T(p)->byte_offset = 8;
        assert_null(T(p)->shape);
        assert_null(T(p)->strides);
        assert_ok(import(p, &v));
        assert_int_equal(v.layout.ndim, 0);
        assert_i64(strided_layout_volume(&v.layout), 1);
        assert_ptr_equal(strided_view_ptr(&v), p->data + 8);
        assert_i64(strided_buffer_size(v.buffer), 4);
        assert_int_equal(*(unsigned char *)strided_view_ptr(&v), 8);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_reversed_array(void **state)
{
    /* float32 arr[5] reversed: data = arr, byte_offset 16, strides (-1,).
     * The buffer covers arr[0..5), the origin is 16 bytes. */
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 5);
        strided_view v, d;
        STRIDES(p, -1);
        T(p)->byte_offset = 16;
        assert_ok(import(p, &v));
        assert_layout(v.layout, "(5,):(-1,)", 4);
        assert_ptr_equal(strided_view_ptr(&v), p->data + 16);
        assert_ptr_equal(strided_buffer_ptr(v.buffer), p->data);
        assert_i64(strided_buffer_size(v.buffer), 20);
        assert_i64(v.origin, 16);
        /* Every element inside the buffer. */
        unsigned char *lo = strided_buffer_ptr(v.buffer);
        unsigned char *hi = lo + strided_buffer_size(v.buffer);
        for (int64_t i = 0; i < 5; i++) {
            unsigned char *e = (unsigned char *)strided_view_ptr(&v) +
                               i * v.layout.strides[0] * 4;
            assert_true(e >= lo && e + 4 <= hi);
        }
        /* test_view_sliced_external_negative_offset: layout[3:] moves the
         * pointer back by 3 elements. */
        strided_layout sl = sliced(v.layout, s_from(3));
        assert_layout(sl, "(2,):(-1,)-3", 4);
        assert_ok(strided_view_view(&v, &sl, NULL, &d));
        assert_ptr_equal(strided_view_ptr(&d), p->data + 4);
        assert_i64(d.origin, 16);
        assert_ptr_equal(d.buffer, v.buffer);
        strided_view_release(&d);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_2d_negative_strides(void **state)
{
    /* (3,4) with strides (-4,-1) from the last element. */
    (void)state;
    int deletes = -1;
    producer *p = producer_of(&deletes, true, 3, 4);
    strided_view v;
    STRIDES(p, -4, -1);
    T(p)->byte_offset = 11 * 4;
    assert_ok(import(p, &v));
    assert_layout(v.layout, "(3,4):(-4,-1)", 4);
    assert_ptr_equal(strided_view_ptr(&v), p->data + 44);
    assert_ptr_equal(strided_buffer_ptr(v.buffer), p->data);
    assert_i64(strided_buffer_size(v.buffer), 48);
    assert_i64(v.origin, 44);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_mixed_strides_footprint(void **state)
{
    /* (3,4) with strides (-8, 2): offsets -16..6, from data + 64. */
    (void)state;
    int deletes = -1;
    producer *p = producer_of(&deletes, false, 3, 4);
    strided_view v;
    STRIDES(p, -8, 2);
    T(p)->byte_offset = 64;
    assert_ok(import(p, &v));
    assert_ptr_equal(strided_view_ptr(&v), p->data + 64);
    assert_ptr_equal(strided_buffer_ptr(v.buffer), p->data);
    assert_i64(strided_buffer_size(v.buffer), (6 + 16 + 1) * 4);
    assert_i64(v.origin, 64);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_view_outside_the_footprint(void **state)
{
    /* D5: a derived view of an imported view must stay inside the
     * producer's footprint. */
    (void)state;
    int deletes = -1;
    producer *p = producer_of(&deletes, true, 5);
    strided_view v, d;
    STRIDES(p, -1);
    T(p)->byte_offset = 16;
    assert_ok(import(p, &v));
    strided_layout six = mk(DIMS(6), I64(-1), 4);
    fill_sentinel(&d, sizeof d);
    assert_error(strided_view_view(&v, &six, NULL, &d),
                 STRIDED_ERR_INVALID_ARGUMENT, NULL,
                 "The layout addresses bytes [-4, 20) of the buffer, outside "
                 "its range [0, 20).");
    assert_untouched(&d, sizeof d);
    strided_layout fwd = mk(DIMS(2), I64(1), 4);
    assert_error(strided_view_view(&v, &fwd, NULL, &d),
                 STRIDED_ERR_INVALID_ARGUMENT, NULL,
                 "The layout addresses bytes [16, 24) of the buffer, outside "
                 "its range [0, 20).");
    assert_untouched(&d, sizeof d);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    /* Inside: the first element alone, forwards. */
    strided_layout first = mk(DIMS(1), I64(1), 4);
    assert_ok(strided_view_view(&v, &first, NULL, &d));
    assert_ptr_equal(strided_view_ptr(&d), p->data + 16);
    strided_view_release(&d);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_readonly_flag(void **state)
{
    (void)state;
    int deletes = -1;
    producer *p = producer_of(&deletes, true, 3);
    strided_view v, d;
    p->v.flags = STRIDED_DLPACK_FLAG_READ_ONLY;
    assert_ok(import(p, &v));
    assert_true(v.readonly);
    assert_ok(strided_view_view(&v, NULL, NULL, &d));
    assert_true(d.readonly);
    strided_view_release(&d);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);

    p = producer_of(&deletes, true, 3);
    p->v.flags = STRIDED_DLPACK_FLAG_IS_COPIED;
    assert_ok(import(p, &v));
    assert_false(v.readonly);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_dtypes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof supported_dtypes / sizeof *supported_dtypes;
         i++) {
        const dtype_case *c = &supported_dtypes[i];
        int deletes = -1;
        producer *p = producer_of(&deletes, i % 2 == 0, 2, 3);
        strided_view v;
        T(p)->dtype = DT(c->code, c->bits, 1);
        assert_ok(import(p, &v));
        assert_int_equal(v.layout.itemsize, c->itemsize);
        assert_true(strided_dtype_equal(v.dtype, T(p)->dtype));
        assert_true(v.has_dtype);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

static void test_import_64_dimensions(void **state)
{
    (void)state;
    int deletes = -1;
    int64_t shape[64];
    SHAPE64(shape, 0, 2, 63, 3);
    producer *p = make_producer(&deletes, true, 64, shape);
    strided_view v;
    assert_ok(import(p, &v));
    assert_int_equal(v.layout.ndim, 64);
    assert_i64(strided_layout_volume(&v.layout), 6);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_zero_strides(void **state)
{
    /* A broadcast tensor: footprint one element. */
    (void)state;
    int deletes = -1;
    producer *p = producer_of(&deletes, true, 4, 5);
    strided_view v;
    STRIDES(p, 0, 0);
    assert_ok(import(p, &v));
    assert_layout(v.layout, "(4,5):(0,0)", 4);
    assert_ptr_equal(strided_view_ptr(&v), p->data);
    assert_i64(strided_buffer_size(v.buffer), 4);
    strided_view_release(&v);
    assert_int_equal(deletes, 1);
}

static void test_import_cuda_host_and_managed_device_types(void **state)
{
    /* Accepted device types keep the producer's device. */
    (void)state;
    static const int32_t types[] = {STRIDED_DEVICE_CUDA_HOST,
                                    STRIDED_DEVICE_CUDA_MANAGED};
    for (size_t i = 0; i < 2; i++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, true, 3);
        strided_view v;
        T(p)->device.device_type = types[i];
        assert_ok(import(p, &v));
        assert_int_equal(v.device.device_type, types[i]);
        assert_ptr_equal(strided_view_ptr(&v), p->data);
        strided_view_release(&v);
        assert_int_equal(deletes, 1);
    }
}

/* =================================================================== */
/* Export                                                                */
/* =================================================================== */

typedef struct releases {
    int count;
} releases;

static void count_release(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    ((releases *)context)->count++;
}

static float host_data[256];

/* A view of host_data (wrapped with a counting release) through layout. */
static strided_view wrapped_view(releases *r, const strided_layout *l,
                                 const strided_dtype *dt, bool readonly)
{
    strided_buffer *b;
    strided_view v;
    r->count = 0;
    for (int i = 0; i < 256; i++)
        host_data[i] = (float)i;
    assert_ok(strided_buffer_wrap(host_data, sizeof host_data, count_release,
                                  r, &b));
    assert_ok(strided_view_from_buffer(b, l, dt, readonly, &v));
    strided_buffer_release(b); /* the view holds the only reference */
    return v;
}

static void check_exported_tensor(const strided_dl_tensor *t,
                                  const strided_view *v)
{
    const strided_layout *l = &v->layout;
    assert_int_equal(t->ndim, l->ndim);
    if (l->ndim == 0) {
        assert_null(t->shape);
        assert_null(t->strides);
    } else {
        assert_non_null(t->shape);
        assert_non_null(t->strides);
        for (int i = 0; i < l->ndim; i++) {
            assert_i64(t->shape[i], l->shape[i]);
            assert_i64(t->strides[i], l->strides[i]);
        }
    }
    assert_true(strided_dtype_equal(t->dtype, v->dtype));
    assert_int_equal(t->device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(t->device.device_id, 0);
    if (strided_layout_volume(l) == 0)
        assert_null(t->data);
    else
        assert_ptr_equal(t->data, strided_view_ptr(v));
    assert_true(t->byte_offset == 0);
}

static void test_export_versioned_fields(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_implicit(DIMS(3, 4), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_view_export_dlpack(&v, &m));
    assert_non_null(m);
    assert_int_equal(m->version.major, 1);
    assert_int_equal(m->version.minor, 3);
    assert_true(m->flags == 0);
    assert_non_null(m->deleter);
    check_exported_tensor(&m->dl_tensor, &v);
    /* Implicit strides are exported explicitly. */
    assert_i64(m->dl_tensor.strides[0], 4);
    assert_i64(m->dl_tensor.strides[1], 1);
    assert_ptr_equal(m->dl_tensor.data, host_data);
    assert_i64(strided_buffer_use_count(v.buffer), 2);
    m->deleter(m);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_legacy_fields(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_implicit(DIMS(3, 4), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor *m = NULL;
    assert_ok(strided_view_export_dlpack_legacy(&v, &m));
    assert_non_null(m);
    assert_non_null(m->deleter);
    check_exported_tensor(&m->dl_tensor, &v);
    assert_i64(m->dl_tensor.strides[0], 4);
    assert_i64(m->dl_tensor.strides[1], 1);
    assert_i64(strided_buffer_use_count(v.buffer), 2);
    m->deleter(m);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_readonly_flag(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(5), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, true);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_view_export_dlpack(&v, &m));
    assert_true(m->flags == STRIDED_DLPACK_FLAG_READ_ONLY);
    m->deleter(m);
    /* The legacy form cannot say so, and still exports. */
    strided_dl_managed_tensor *ml = NULL;
    assert_ok(strided_view_export_dlpack_legacy(&v, &ml));
    check_exported_tensor(&ml->dl_tensor, &v);
    ml->deleter(ml);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_sliced_and_f_order(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_f(DIMS(4, 6), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_layout sl = sliced(l, S_(1, 4, 1), S_(0, 6, 2));
    strided_view d;
    assert_ok(strided_view_view(&v, &sl, NULL, &d));
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_view_export_dlpack(&d, &m));
    check_exported_tensor(&m->dl_tensor, &d);
    assert_i64(m->dl_tensor.shape[0], 3);
    assert_i64(m->dl_tensor.shape[1], 3);
    assert_i64(m->dl_tensor.strides[0], 1);
    assert_i64(m->dl_tensor.strides[1], 8);
    assert_ptr_equal(m->dl_tensor.data, host_data + 1);
    m->deleter(m);
    strided_view_release(&d);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_0d(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(0, NULL, 8);
    strided_dtype dt = DT(STRIDED_DTYPE_COMPLEX, 64, 1);
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_view_export_dlpack(&v, &m));
    check_exported_tensor(&m->dl_tensor, &v);
    assert_ptr_equal(m->dl_tensor.data, host_data);
    m->deleter(m);
    strided_dl_managed_tensor *ml = NULL;
    assert_ok(strided_view_export_dlpack_legacy(&v, &ml));
    check_exported_tensor(&ml->dl_tensor, &v);
    ml->deleter(ml);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_empty(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(0, 4), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_view_export_dlpack(&v, &m));
    check_exported_tensor(&m->dl_tensor, &v);
    assert_null(m->dl_tensor.data);
    assert_i64(m->dl_tensor.shape[0], 0);
    assert_i64(m->dl_tensor.shape[1], 4);
    m->deleter(m);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_keeps_the_buffer_alive(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(8), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor_versioned *m = NULL;
    strided_dl_managed_tensor *ml = NULL;
    assert_ok(strided_view_export_dlpack(&v, &m));
    assert_ok(strided_view_export_dlpack_legacy(&v, &ml));
    strided_view_release(&v);
    assert_int_equal(r.count, 0);
    assert_true(((float *)m->dl_tensor.data)[7] == 7.0f);
    m->deleter(m);
    assert_int_equal(r.count, 0);
    assert_true(((float *)ml->dl_tensor.data)[3] == 3.0f);
    ml->deleter(ml);
    assert_int_equal(r.count, 1);
}

static void test_export_allocated_buffer_use_count(void **state)
{
    (void)state;
    strided_memory_resource *mr;
    strided_buffer *b;
    strided_view v;
    strided_layout l = mk_c(DIMS(2, 3), 2);
    strided_dtype dt = I16;
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, 12, NULL, &b));
    assert_ok(strided_view_from_buffer(b, &l, &dt, false, &v));
    assert_i64(strided_buffer_use_count(b), 2);
    strided_dl_managed_tensor_versioned *m[3];
    for (int i = 0; i < 3; i++) {
        assert_ok(strided_view_export_dlpack(&v, &m[i]));
        assert_i64(strided_buffer_use_count(b), 3 + i);
        assert_ptr_equal(m[i]->dl_tensor.data, strided_buffer_ptr(b));
    }
    for (int i = 0; i < 3; i++)
        m[i]->deleter(m[i]);
    assert_i64(strided_buffer_use_count(b), 2);
    strided_view_release(&v);
    assert_i64(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
}

static void test_export_without_dtype(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(16), 1);
    strided_view v = wrapped_view(&r, &l, NULL, false);
    assert_false(v.has_dtype);
    strided_dl_managed_tensor_versioned *m;
    strided_dl_managed_tensor *ml;
    fill_sentinel(&m, sizeof m);
    fill_sentinel(&ml, sizeof ml);
    assert_error(strided_view_export_dlpack(&v, &m),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT,
                 "Cannot export StridedMemoryView via DLPack without dtype "
                 "information; create the view with dtype specified.");
    assert_untouched(&m, sizeof m);
    assert_error(strided_view_export_dlpack_legacy(&v, &ml),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT_LEGACY,
                 "Cannot export StridedMemoryView via DLPack without dtype "
                 "information; create the view with dtype specified.");
    assert_untouched(&ml, sizeof ml);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_export_without_buffer(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(4), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_view_release(&v);
    strided_dl_managed_tensor_versioned *m;
    strided_dl_managed_tensor *ml;
    fill_sentinel(&m, sizeof m);
    fill_sentinel(&ml, sizeof ml);
    assert_error(strided_view_export_dlpack(&v, &m),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT, NULL);
    assert_error(strided_view_export_dlpack(NULL, &m),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT, NULL);
    assert_error(strided_view_export_dlpack_legacy(&v, &ml),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT_LEGACY, NULL);
    assert_error(strided_view_export_dlpack_legacy(NULL, &ml),
                 STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT_LEGACY, NULL);
    assert_untouched(&m, sizeof m);
    assert_untouched(&ml, sizeof ml);
    assert_int_equal(r.count, 1);
}

static void test_export_allocation_failure(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(3, 4), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor_versioned *m;
    strided_dl_managed_tensor *ml;
    fill_sentinel(&m, sizeof m);
    fill_sentinel(&ml, sizeof ml);
    strided__fail_allocation_after(0);
    assert_error(strided_view_export_dlpack(&v, &m), STRIDED_ERR_OUT_OF_MEMORY,
                 OP_EXPORT, NULL);
    strided__fail_allocation_after(0);
    assert_error(strided_view_export_dlpack_legacy(&v, &ml),
                 STRIDED_ERR_OUT_OF_MEMORY, OP_EXPORT_LEGACY, NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&m, sizeof m);
    assert_untouched(&ml, sizeof ml);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

/* Export, import, and check the imported view against the original. */
static void check_round_trip(const strided_layout *l, bool readonly,
                             bool versioned)
{
    releases r;
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, l, &dt, readonly);
    strided_view w;
    if (versioned) {
        strided_dl_managed_tensor_versioned *m = NULL;
        assert_ok(strided_view_export_dlpack(&v, &m));
        assert_ok(strided_view_import_dlpack(m, true, &w));
    } else {
        strided_dl_managed_tensor *m = NULL;
        assert_ok(strided_view_export_dlpack_legacy(&v, &m));
        assert_ok(strided_view_import_dlpack(m, false, &w));
    }
    /* Equal layouts apart from the slice offset, which the import folds
     * into the pointer. */
    assert_int_equal(w.layout.ndim, v.layout.ndim);
    assert_int_equal(w.layout.itemsize, v.layout.itemsize);
    for (int i = 0; i < v.layout.ndim; i++) {
        assert_i64(w.layout.shape[i], v.layout.shape[i]);
        assert_i64(w.layout.strides[i], v.layout.strides[i]);
    }
    assert_i64(w.layout.slice_offset, 0);
    if (strided_layout_volume(&v.layout) > 0)
        assert_ptr_equal(strided_view_ptr(&w), strided_view_ptr(&v));
    assert_true(strided_dtype_equal(w.dtype, v.dtype));
    assert_int_equal(w.device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(w.readonly, versioned && readonly);
    /* The chain: view, exported tensor, imported view. */
    strided_view_release(&v);
    assert_int_equal(r.count, 0);
    strided_view_release(&w);
    assert_int_equal(r.count, 1);
}

static void test_round_trip_dense(void **state)
{
    (void)state;
    strided_layout l = mk_c(DIMS(4, 6), 4);
    check_round_trip(&l, false, true);
    check_round_trip(&l, false, false);
    check_round_trip(&l, true, true);
    check_round_trip(&l, true, false);
}

static void test_round_trip_equal_layout(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_c(DIMS(4, 6), 4);
    strided_dtype dt = F32;
    strided_view v = wrapped_view(&r, &l, &dt, false);
    strided_dl_managed_tensor_versioned *m = NULL;
    strided_view w;
    assert_ok(strided_view_export_dlpack(&v, &m));
    assert_ok(strided_view_import_dlpack(m, true, &w));
    assert_layout_eq(w.layout, v.layout);
    assert_ptr_equal(strided_view_ptr(&w), strided_view_ptr(&v));
    strided_view_release(&w);
    assert_int_equal(r.count, 0);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
}

static void test_round_trip_sliced(void **state)
{
    /* numpy: arange(24).reshape(4,6)[:, ::2]. */
    (void)state;
    strided_layout l = mk_c(DIMS(4, 6), 4);
    strided_layout sl = sliced(l, S_ALL, S_(0, 6, 2));
    check_round_trip(&sl, false, true);
    check_round_trip(&sl, false, false);
}

static void test_round_trip_negative_strides(void **state)
{
    (void)state;
    strided_layout l = mk_c(DIMS(4, 6), 4);
    strided_layout sl = sliced(l, S_REV, S_(5, 0, -2));
    check_round_trip(&sl, false, true);
    check_round_trip(&sl, true, false);
}

static void test_round_trip_0d_and_empty(void **state)
{
    (void)state;
    strided_layout l0 = mk_c(0, NULL, 4);
    check_round_trip(&l0, false, true);
    check_round_trip(&l0, false, false);
    strided_layout le = mk_c(DIMS(3, 0), 4);
    check_round_trip(&le, false, true);
    check_round_trip(&le, false, false);
}

static void test_buffer_device_of_host_memory(void **state)
{
    (void)state;
    strided_buffer *b;
    float x[4];
    assert_ok(strided_buffer_wrap(x, sizeof x, NULL, NULL, &b));
    strided_device d = strided_buffer_device(b);
    assert_int_equal(d.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(d.device_id, 0);
    strided_buffer_release(b);
}

/* The stream a consumer hands __dlpack__, by the producer's device. */
static void test_export_stream_rules(void **state)
{
    (void)state;
    strided_view v;
    memset(&v, 0, sizeof v);
    const int32_t host_types[] = {STRIDED_DEVICE_CPU, STRIDED_DEVICE_CUDA_HOST};
    for (int k = 0; k < 2; k++) {
        v.device.device_type = host_types[k];
        assert_ok(strided_view_check_dlpack_stream(&v, false, 0));
        assert_ok(strided_view_check_dlpack_stream(&v, true, -1));
        const int64_t bad[] = {0, 1, 2, 5, -2, INT64_MAX, INT64_MIN};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            assert_error(strided_view_check_dlpack_stream(&v, true, bad[i]),
                         STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__",
                         "is not valid for a view of host memory: a host producer takes "
                         "stream=None or -1");
    }
    const int32_t device_types[] = {STRIDED_DEVICE_CUDA, STRIDED_DEVICE_CUDA_MANAGED};
    for (int k = 0; k < 2; k++) {
        v.device.device_type = device_types[k];
        const int64_t good[] = {-1, 1, 2, 3, 0x7f0012345678, INT64_MAX};
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
            assert_ok(strided_view_check_dlpack_stream(&v, true, good[i]));
        assert_ok(strided_view_check_dlpack_stream(&v, false, 0));
        assert_error(strided_view_check_dlpack_stream(&v, true, 0), STRIDED_ERR_INVALID_ARGUMENT,
                     "__dlpack__", "stream=0 is ambiguous");
        assert_error(strided_view_check_dlpack_stream(&v, true, -2), STRIDED_ERR_INVALID_ARGUMENT,
                     "__dlpack__", "stream=-2 is not a stream");
        assert_error(strided_view_check_dlpack_stream(&v, true, INT64_MIN),
                     STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "is not a stream");
    }
    assert_error(strided_view_check_dlpack_stream(NULL, false, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "__dlpack__", "the view is required");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_stream_rules),
        cmocka_unit_test(test_dtype_itemsize_of_every_supported_type),
        cmocka_unit_test(test_dtype_format_names_every_supported_type),
        cmocka_unit_test(test_dtype_rejects_lanes_2),
        cmocka_unit_test(test_dtype_rejects_lanes_0),
        cmocka_unit_test(test_dtype_rejects_bits_4),
        cmocka_unit_test(test_dtype_rejects_bits_12),
        cmocka_unit_test(test_dtype_rejects_bits_0),
        cmocka_unit_test(test_dtype_rejects_float6_e2m3fn),
        cmocka_unit_test(test_dtype_rejects_float6_e3m2fn),
        cmocka_unit_test(test_dtype_rejects_float4_e2m1fn),
        cmocka_unit_test(test_dtype_rejects_padded_float4_e2m1fn),
        cmocka_unit_test(test_dtype_rejects_opaque_handle),
        cmocka_unit_test(test_dtype_rejects_unknown_code_99),
        cmocka_unit_test(test_dtype_rejects_int128),
        cmocka_unit_test(test_dtype_rejects_float8_code_2),
        cmocka_unit_test(test_dtype_rejects_complex32),
        cmocka_unit_test(test_dtype_rejects_bool16),
        cmocka_unit_test(test_dtype_rejects_float8_code_with_16_bits),
        cmocka_unit_test(test_dtype_itemsize_without_out),
        cmocka_unit_test(test_dtype_format_is_like_snprintf),
        cmocka_unit_test(test_dtype_equal),
        cmocka_unit_test(test_abi_matches_dlpack_on_lp64),
        cmocka_unit_test(test_abi_constants),
        cmocka_unit_test(test_import_rejects_ndim_minus_1),
        cmocka_unit_test(test_import_rejects_ndim_65),
        cmocka_unit_test(test_import_rejects_ndim_int_min),
        cmocka_unit_test(test_import_rejects_negative_extent),
        cmocka_unit_test(test_import_rejects_shape_null),
        cmocka_unit_test(test_import_rejects_lanes_2),
        cmocka_unit_test(test_import_rejects_bits_4),
        cmocka_unit_test(test_import_rejects_bits_12),
        cmocka_unit_test(test_import_rejects_bits_0),
        cmocka_unit_test(test_import_rejects_float4),
        cmocka_unit_test(test_import_rejects_float6),
        cmocka_unit_test(test_import_rejects_opaque_handle),
        cmocka_unit_test(test_import_rejects_unknown_dtype_code),
        cmocka_unit_test(test_import_rejects_rocm_device),
        cmocka_unit_test(test_import_rejects_device_type_99),
        cmocka_unit_test(test_import_rejects_device_type_0),
        cmocka_unit_test(test_import_rejects_cpu_device_id_1),
        cmocka_unit_test(test_import_rejects_cpu_device_id_minus_1),
        cmocka_unit_test(test_import_rejects_cuda_device_id_minus_1),
        cmocka_unit_test(test_import_rejects_null_data_with_elements),
        cmocka_unit_test(test_import_rejects_byte_offset_above_int64_max),
        cmocka_unit_test(test_import_rejects_byte_offset_uint64_max),
        cmocka_unit_test(test_import_rejects_data_plus_byte_offset_overflowing),
        cmocka_unit_test(test_import_rejects_data_plus_large_byte_offset_overflowing),
        cmocka_unit_test(test_import_rejects_byte_offset_not_a_multiple_of_the_itemsize),
        cmocka_unit_test(test_import_rejects_odd_byte_offset),
        cmocka_unit_test(test_import_rejects_shape_product_overflow),
        cmocka_unit_test(test_import_rejects_shape_product_overflow_with_a_zero_extent),
        cmocka_unit_test(test_import_rejects_strides_overflowing_offsets),
        cmocka_unit_test(test_import_rejects_negative_strides_overflowing_offsets),
        cmocka_unit_test(test_import_rejects_strides_overflowing_byte_offsets),
        cmocka_unit_test(test_import_rejects_a_footprint_past_the_address_space),
        cmocka_unit_test(test_import_rejects_a_footprint_below_address_0),
        cmocka_unit_test(test_import_rejects_null_strides_in_version_1_2),
        cmocka_unit_test(test_import_rejects_null_strides_in_version_1_3),
        cmocka_unit_test(test_import_rejects_null_strides_in_a_later_minor_version),
        cmocka_unit_test(test_import_rejects_major_version_2),
        cmocka_unit_test(test_import_rejects_major_version_0),
        cmocka_unit_test(test_import_of_major_version_2_reads_no_other_field_poisoned),
        cmocka_unit_test(test_import_of_major_version_2_reads_no_other_field_guarded),
        cmocka_unit_test(test_import_of_null_managed),
        cmocka_unit_test(test_import_without_out_still_deletes),
        cmocka_unit_test(test_import_with_a_null_deleter),
        cmocka_unit_test(test_import_allocation_failure_deletes_once),
        cmocka_unit_test(test_import_versioned),
        cmocka_unit_test(test_import_legacy),
        cmocka_unit_test(test_import_older_minor_versions),
        cmocka_unit_test(test_import_deletes_after_the_last_derived_view),
        cmocka_unit_test(test_import_buffer_reference_outlives_the_view),
        cmocka_unit_test(test_import_null_strides_in_version_1_1),
        cmocka_unit_test(test_import_null_strides_in_version_1_0),
        cmocka_unit_test(test_import_null_strides_legacy),
        cmocka_unit_test(test_import_honours_byte_offset),
        cmocka_unit_test(test_import_null_data_empty_tensor),
        cmocka_unit_test(test_import_empty_tensor_with_data),
        cmocka_unit_test(test_import_0d_tensor),
        cmocka_unit_test(test_import_reversed_array),
        cmocka_unit_test(test_import_2d_negative_strides),
        cmocka_unit_test(test_import_mixed_strides_footprint),
        cmocka_unit_test(test_import_view_outside_the_footprint),
        cmocka_unit_test(test_import_readonly_flag),
        cmocka_unit_test(test_import_dtypes),
        cmocka_unit_test(test_import_64_dimensions),
        cmocka_unit_test(test_import_zero_strides),
        cmocka_unit_test(test_import_cuda_host_and_managed_device_types),
        cmocka_unit_test(test_export_versioned_fields),
        cmocka_unit_test(test_export_legacy_fields),
        cmocka_unit_test(test_export_readonly_flag),
        cmocka_unit_test(test_export_sliced_and_f_order),
        cmocka_unit_test(test_export_0d),
        cmocka_unit_test(test_export_empty),
        cmocka_unit_test(test_export_keeps_the_buffer_alive),
        cmocka_unit_test(test_export_allocated_buffer_use_count),
        cmocka_unit_test(test_export_without_dtype),
        cmocka_unit_test(test_export_without_buffer),
        cmocka_unit_test(test_export_allocation_failure),
        cmocka_unit_test(test_round_trip_dense),
        cmocka_unit_test(test_round_trip_equal_layout),
        cmocka_unit_test(test_round_trip_sliced),
        cmocka_unit_test(test_round_trip_negative_strides),
        cmocka_unit_test(test_round_trip_0d_and_empty),
        cmocka_unit_test(test_buffer_device_of_host_memory),
    };

    use_no_driver();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
