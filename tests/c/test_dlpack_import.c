/*
 * Tests of strided_view_import_dlpack: views of the managed tensors of a
 * DLPack producer, versioned or legacy. Every malformed field a C producer
 * can emit is refused, and whatever happens the producer's deleter runs
 * exactly once (at once on failure, after the last view on success).
 *
 * Built with no CUDA driver (DRIVER_NONE): host memory is HOST and exports
 * as (CPU, 0).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "test_util.h"

#include <stdalign.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memory/memory.h"
#include "strided/buffer.h"
#include "strided/dlpack.h"
#include "strided/view.h"
#include "test_cuda.h"

#define OP_IMPORT "import_dlpack"

static strided_dtype DT(int code, int bits, int lanes)
{
    strided_dtype d = {(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
    return d;
}

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
static producer *make_producer(int *deletes, bool versioned, int ndim, const int64_t *shape)
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
    t->dtype = DT(STRIDED_DTYPE_FLOAT, 32, 1);
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
#define producer_of(deletes, versioned, ...) \
    make_producer((deletes), (versioned), DIMS(__VA_ARGS__))

static strided_dl_tensor *T(producer *p)
{
    return p->versioned ? &p->v.dl_tensor : &p->l.dl_tensor;
}

static void *M(producer *p)
{
    return p->versioned ? (void *)&p->v : (void *)&p->l;
}

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
static void check_import_fails(producer *p, const int *deletes, strided_status code,
                               const char *text, const char *file, int line)
{
    bool versioned = p->versioned;
    strided_view out;

    fill_sentinel(&out, sizeof out);
    check_error_(import(p, &out), code, OP_IMPORT, text, file, line);
    if (*deletes != 1)
        fail_at(file, line, "%s: deleter ran %d times, expected 1\n",
                versioned ? "versioned" : "legacy", *deletes);
    check_untouched_(&out, sizeof out, "out", file, line);
}

/* A release callback that counts its calls in *context. */
static void count_release(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    (*(int *)context)++;
}

/* A change that makes the producer's 2x3 tensor malformed. */
typedef void (*malform_fn)(producer *p);

/* A malformed tensor, refused with code and a reason containing text (any
 * reason when NULL), in the versioned and the legacy form. */
typedef struct malformed_case {
    int line;
    malform_fn malform;
    strided_status code;
    const char *text;
} malformed_case;

static void m_ndim_minus_1(producer *p)
{
    T(p)->ndim = -1;
}
static void m_ndim_65(producer *p)
{
    for (int i = 0; i < 65; i++)
        p->shape[i] = p->strides[i] = 1;
    T(p)->ndim = 65;
}
static void m_ndim_int_min(producer *p)
{
    T(p)->ndim = INT32_MIN;
}
static void m_negative_extent(producer *p)
{
    p->shape[1] = -1;
}
static void m_shape_null(producer *p)
{
    T(p)->shape = NULL;
}
static void m_strides_null(producer *p)
{
    T(p)->strides = NULL;
}
static void m_lanes_2(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_FLOAT, 32, 2);
}
static void m_bits_4(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_INT, 4, 1);
}
static void m_bits_12(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_INT, 12, 1);
}
static void m_bits_0(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_UINT, 0, 1);
}
static void m_float4(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1);
}
static void m_float6(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_FLOAT6_E3M2FN, 6, 1);
}
static void m_float4_8_bits(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_FLOAT4_E2M1FN, 8, 1);
}
static void m_opaque(producer *p)
{
    T(p)->dtype = DT(STRIDED_DTYPE_OPAQUE_HANDLE, 64, 1);
}
static void m_code_99(producer *p)
{
    T(p)->dtype = DT(99, 32, 1);
}
static void m_rocm(producer *p)
{
    T(p)->device.device_type = STRIDED_DEVICE_ROCM;
}
static void m_device_99(producer *p)
{
    T(p)->device.device_type = 99;
}
static void m_device_0(producer *p)
{
    T(p)->device.device_type = 0;
}
static void m_cpu_id_1(producer *p)
{
    T(p)->device.device_id = 1;
}
static void m_cpu_id_minus_1(producer *p)
{
    T(p)->device.device_id = -1;
}
static void m_cuda_id_minus_1(producer *p)
{
    T(p)->device.device_type = STRIDED_DEVICE_CUDA;
    T(p)->device.device_id = -1;
}
static void m_data_null(producer *p)
{
    T(p)->data = NULL;
}
static void m_byte_offset_huge(producer *p)
{
    T(p)->byte_offset = (uint64_t)INT64_MAX + 1; /* a multiple of 4 */
}
static void m_byte_offset_max(producer *p)
{
    T(p)->byte_offset = UINT64_MAX - 3;
}
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
static void m_byte_offset_misaligned(producer *p)
{
    T(p)->byte_offset = 2;
}
static void m_byte_offset_odd(producer *p)
{
    T(p)->byte_offset = 1;
}
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

static void test_import_rejects_malformed_tensors(void **state)
{
    const malformed_case cases[] = {
        CASE(m_ndim_minus_1, STRIDED_ERR_INVALID_ARGUMENT, "ndim"),
        CASE(m_ndim_65, STRIDED_ERR_INVALID_ARGUMENT, "ndim"),
        CASE(m_ndim_int_min, STRIDED_ERR_INVALID_ARGUMENT, "ndim"),
        CASE(m_negative_extent, STRIDED_ERR_INVALID_ARGUMENT, "negative"),
        CASE(m_shape_null, STRIDED_ERR_INVALID_ARGUMENT, "shape"),
        /* Element types: not one lane, not whole bytes, not data. */
        CASE(m_lanes_2, STRIDED_ERR_UNSUPPORTED, "lanes=2"),
        /* Packed sub-byte types: (2,3):(3,1) starts row 1 inside a byte. */
        CASE(m_bits_4, STRIDED_ERR_INVALID_ARGUMENT, "packed-layout rule"),
        CASE(m_bits_12, STRIDED_ERR_UNSUPPORTED, "bits=12"),
        CASE(m_bits_0, STRIDED_ERR_UNSUPPORTED, "uint0"),
        CASE(m_float4, STRIDED_ERR_INVALID_ARGUMENT, "packed-layout rule"),
        CASE(m_float6, STRIDED_ERR_INVALID_ARGUMENT, "packed-layout rule"),
        CASE(m_float4_8_bits, STRIDED_ERR_UNSUPPORTED, "float4_e2m1fn"),
        CASE(m_opaque, STRIDED_ERR_UNSUPPORTED, "opaque"),
        CASE(m_code_99, STRIDED_ERR_UNSUPPORTED, "99"),
        /* Devices strided does not serve, and device ids no device has. */
        CASE(m_rocm, STRIDED_ERR_UNSUPPORTED, "device"),
        CASE(m_device_99, STRIDED_ERR_UNSUPPORTED, "device"),
        CASE(m_device_0, STRIDED_ERR_UNSUPPORTED, "device"),
        CASE(m_cpu_id_1, STRIDED_ERR_INVALID_ARGUMENT, "device"),
        CASE(m_cpu_id_minus_1, STRIDED_ERR_INVALID_ARGUMENT, "device"),
        CASE(m_cuda_id_minus_1, STRIDED_ERR_INVALID_ARGUMENT, "device"),
        /* No data for elements that exist. */
        CASE(m_data_null, STRIDED_ERR_INVALID_ARGUMENT, "data"),
        /* A byte offset past PTRDIFF_MAX, one that carries data past the
         * address space, or one that is not a multiple of the itemsize. */
        CASE(m_byte_offset_huge, STRIDED_ERR_INVALID_ARGUMENT, "byte_offset"),
        CASE(m_byte_offset_max, STRIDED_ERR_INVALID_ARGUMENT, "byte_offset"),
        CASE(m_data_plus_offset_overflows, STRIDED_ERR_INVALID_ARGUMENT, "byte_offset"),
        CASE(m_data_plus_offset_overflows_near_int64, STRIDED_ERR_INVALID_ARGUMENT, "byte_offset"),
        CASE(m_byte_offset_misaligned, STRIDED_ERR_INVALID_ARGUMENT, "byte_offset"),
        CASE(m_byte_offset_odd, STRIDED_ERR_INVALID_ARGUMENT, "byte_offset"),
        /* The volume overflows, even beside a zero extent; an element or
         * byte offset overflows. */
        CASE(m_shape_product_overflows, STRIDED_ERR_OVERFLOW, NULL),
        CASE(m_shape_product_overflows_with_a_0, STRIDED_ERR_OVERFLOW, NULL),
        CASE(m_strides_overflow, STRIDED_ERR_OVERFLOW, NULL),
        CASE(m_strides_overflow_negative, STRIDED_ERR_OVERFLOW, NULL),
        CASE(m_byte_strides_overflow, STRIDED_ERR_OVERFLOW, NULL),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const malformed_case *c = &cases[i];
        for (int versioned = 0; versioned < 2; versioned++) {
            int deletes = -1;
            producer *p = producer_of(&deletes, versioned, 2, 3);
            c->malform(p);
            check_import_fails(p, &deletes, c->code, c->text, AT(c));
        }
        /* The same tensor borrowed as a DLTensor: the same refusal, the
         * release called once, before the call returns. */
        int deletes = -1, releases = 0;
        producer *p = producer_of(&deletes, true, 2, 3);
        c->malform(p);
        strided_view out;
        fill_sentinel(&out, sizeof out);
        check_error_(strided_view_import_dl_tensor(T(p), false, NULL, count_release, &releases,
                                                   &out),
                     c->code, OP_IMPORT, c->text, AT(c));
        if (releases != 1)
            fail_at(AT(c), "DLTensor: release ran %d times, expected 1\n", releases);
        check_untouched_(&out, sizeof out, "out", AT(c));
        p->v.deleter(&p->v);
    }
}

/* A borrowed DLTensor (the exchange API's dltensor_from_py_object_no_sync):
 * the view of the managed tensor's import, the memory released through the
 * caller's callback exactly once, when the view goes; NULL strides are C
 * order; the read-only flag is the caller's; the request is checked. */
static void test_import_of_a_borrowed_dl_tensor(void **state)
{
    (void)state;
    int deletes = -1, releases = 0;
    producer *p = producer_of(&deletes, true, 2, 3);
    STRIDES(p, 1, 2); /* a transposed 2x3 */
    strided_view v;
    assert_status(strided_view_import_dl_tensor(T(p), false, NULL, count_release, &releases, &v),
                  STRIDED_OK);
    assert_ptr_equal(strided_view_ptr(&v), p->data);
    assert_layout(v.layout, "(2,3):(1,2)", 4);
    assert_false(v.readonly);
    assert_int_equal(releases, 0);
    strided_view_release(&v);
    assert_int_equal(releases, 1);
    assert_int_equal(deletes, 0); /* the tensor stays the producer's */

    T(p)->strides = NULL;
    T(p)->byte_offset = 8;
    assert_status(strided_view_import_dl_tensor(T(p), true, NULL, count_release, &releases, &v),
                  STRIDED_OK);
    assert_ptr_equal(strided_view_ptr(&v), p->data + 8);
    assert_layout_implicit(v.layout, "(2,3):(3,1)", 4);
    assert_true(v.readonly);
    strided_view_release(&v);
    assert_int_equal(releases, 2);

    /* Not on the device the request named: refused, released once. */
    strided_dlpack_request request;
    assert_status(strided_dlpack_request_make(STRIDED_DEVICE_CUDA, 0, true, 0, &request),
                  STRIDED_OK);
    assert_status(strided_view_import_dl_tensor(T(p), false, &request, count_release, &releases,
                                                &v),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_int_equal(releases, 3);
    /* NULL arguments: refused, released once (NULL release: nothing). */
    assert_status(strided_view_import_dl_tensor(NULL, false, NULL, count_release, &releases, &v),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_view_import_dl_tensor(T(p), false, NULL, count_release, &releases, NULL),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_int_equal(releases, 5);
    assert_status(strided_view_import_dl_tensor(T(p), false, NULL, NULL, NULL, &v), STRIDED_OK);
    strided_view_release(&v);
    assert_int_equal(releases, 5);
    assert_int_equal(deletes, 0);
    p->v.deleter(&p->v);
    assert_int_equal(deletes, 1);
}

/* A footprint outside the address space: an overflow or an invalid
 * argument, never a view. */
static void test_import_rejects_a_footprint_outside_the_address_space(void **state)
{
    const struct footprint_case {
        int line;
        malform_fn malform;
    } cases[] = {
        CASE(m_footprint_past_the_address_space),
        CASE(m_footprint_below_address_0),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct footprint_case *c = &cases[i];
        for (int versioned = 0; versioned < 2; versioned++) {
            int deletes = -1;
            producer *p = producer_of(&deletes, versioned, 2, 3);
            strided_view out;
            c->malform(p);
            fill_sentinel(&out, sizeof out);
            strided_status s = import(p, &out);
            if (s != STRIDED_ERR_OVERFLOW && s != STRIDED_ERR_INVALID_ARGUMENT)
                fail_at(AT(c), "%s: status %s (%s)\n", versioned ? "versioned" : "legacy",
                        strided_status_name(s), s == STRIDED_OK ? "" : strided_last_error());
            check_i64_(deletes, 1, "deletes", AT(c));
            check_untouched_(&out, sizeof out, "out", AT(c));
        }
    }
}

/* NULL strides mean C order only before DLPack 1.2 (and in the legacy
 * form); from 1.2 on they are refused. */
static void test_import_null_strides_by_version(void **state)
{
    const struct null_strides_case {
        int line;
        bool versioned;
        uint32_t minor;
        bool accepted;
    } cases[] = {
        CASE(true, 0, true),  CASE(true, 1, true),  CASE(false, 0, true),
        CASE(true, 2, false), CASE(true, 3, false), CASE(true, 9, false),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct null_strides_case *c = &cases[i];
        int deletes = -1;
        producer *p = producer_of(&deletes, c->versioned, 2, 3);
        strided_view v;
        if (c->versioned)
            p->v.version.minor = c->minor;
        m_strides_null(p);
        if (!c->accepted) {
            check_import_fails(p, &deletes, STRIDED_ERR_INVALID_ARGUMENT, "strides", AT(c));
            continue;
        }
        check_status_(import(p, &v), STRIDED_OK, AT(c));
        check_layout_(&v.layout, "(2,3):(3,1)", 4, true, AT(c));
        if (strided_view_ptr(&v) != (void *)p->data)
            fail_at(AT(c), "the view does not point at the data\n");
        strided_view_release(&v);
        check_i64_(deletes, 1, "deletes", AT(c));
    }
}

/* An unknown major version is refused with nothing read but the version
 * and the deleter. */
static void test_import_rejects_other_major_versions(void **state)
{
    const struct version_case {
        int line;
        uint32_t major, minor;
        const char *text;
    } cases[] = {
        CASE(2, 3, "Unsupported DLPack major version: 2 (only 1 is supported)"),
        CASE(0, 9, "major version"),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct version_case *c = &cases[i];
        int deletes = -1;
        producer *p = producer_of(&deletes, true, 2, 3);
        p->v.version.major = c->major;
        p->v.version.minor = c->minor;
        check_import_fails(p, &deletes, STRIDED_ERR_UNSUPPORTED, c->text, AT(c));
    }
}

static void test_import_of_major_version_2_reads_no_other_field_poisoned(void **state)
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
    check_import_fails(p, &deletes, STRIDED_ERR_UNSUPPORTED, "major version", __FILE__, __LINE__);
}

/* The deleter of a tensor placed so that every field after deleter lies in
 * an inaccessible page. */
static int guarded_deletes;
static void guarded_deleter(strided_dl_managed_tensor_versioned *self)
{
    assert_ptr_equal(self->manager_ctx, &guarded_deletes);
    guarded_deletes++;
}

static void test_import_of_major_version_2_reads_no_other_field_guarded(void **state)
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
    assert_error(strided_view_import_dlpack(m, true, &out), STRIDED_ERR_UNSUPPORTED, OP_IMPORT,
                 "major version");
    assert_int_equal(guarded_deletes, 1);
    assert_untouched(&out, sizeof out);
    assert_int_equal(munmap(mem, (size_t)page * 2), 0);
}

static void test_import_of_null_managed(void **state)
{
    strided_view out;
    (void)state;
    fill_sentinel(&out, sizeof out);
    assert_error(strided_view_import_dlpack(NULL, true, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 OP_IMPORT, NULL);
    assert_untouched(&out, sizeof out);
    assert_error(strided_view_import_dlpack(NULL, false, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 OP_IMPORT, NULL);
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
        assert_error(import(p, &v), STRIDED_ERR_INVALID_ARGUMENT, OP_IMPORT, "ndim");
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

/* A C-contiguous 2x3 float32 tensor, versioned and legacy: every field of
 * the view, and one delete when the view goes. */
static void test_import_c_contiguous(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        int deletes = -1;
        producer *p = producer_of(&deletes, versioned, 2, 3);
        strided_view v;
        assert_ok(import(p, &v));
        assert_int_equal(deletes, 0);
        assert_non_null(v.buffer);
        assert_layout(v.layout, "(2,3):(3,1)", 4);
        assert_true(v.has_dtype);
        assert_true(strided_dtype_equal(v.dtype, DT(STRIDED_DTYPE_FLOAT, 32, 1)));
        assert_int_equal(v.device.device_type, STRIDED_DEVICE_CPU);
        assert_int_equal(v.device.device_id, 0);
        assert_false(v.readonly);
        assert_ptr_equal(strided_view_ptr(&v), p->data);
        assert_true(strided_view_device_ptr(&v) == 0);
        assert_i64(v.origin, 0);
        assert_ptr_equal(strided_buffer_ptr(v.buffer), p->data);
        assert_i64(strided_buffer_size(v.buffer), 24);
        assert_i64(strided_buffer_use_count(v.buffer), 1);
        assert_int_equal(strided_buffer_memory_info(v.buffer).kind, STRIDED_MEMORY_HOST);
        strided_view_release(&v);
        assert_null(v.buffer);
        assert_int_equal(deletes, 1);
        strided_view_release(&v); /* twice: nothing more */
        assert_int_equal(deletes, 1);
    }
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
    /* NULL data is accepted for a tensor without elements (with byte
     * offset 0), as DLPack allows. */
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
        assert_error(strided_view_view(&v, &one, NULL, &d), STRIDED_ERR_INVALID_ARGUMENT, NULL,
                     NULL);
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
            unsigned char *e = (unsigned char *)strided_view_ptr(&v) + i * v.layout.strides[0] * 4;
            assert_true(e >= lo && e + 4 <= hi);
        }
        /* layout[3:] moves the pointer back by 3 elements, as a sliced
         * view of an external array with a negative offset does. */
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

/* Negative strides: the buffer starts at the lowest element, and the view's
 * origin is the byte offset. */
static void test_import_negative_strides_footprint(void **state)
{
    const struct strides_case {
        int line;
        bool versioned;
        const int64_t *strides;
        uint64_t byte_offset;
        const char *layout; /* NULL: not checked */
        int64_t size;
    } cases[] = {
        /* (3,4) with strides (-4,-1) from the last element. */
        CASE(true, I64(-4, -1), 11 * 4, "(3,4):(-4,-1)", 48),
        /* (3,4) with strides (-8,2): offsets -16..6, from data + 64. */
        CASE(false, I64(-8, 2), 64, NULL, (6 + 16 + 1) * 4),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct strides_case *c = &cases[i];
        int deletes = -1;
        producer *p = producer_of(&deletes, c->versioned, 3, 4);
        strided_view v;
        set_strides(p, 2, c->strides);
        T(p)->byte_offset = c->byte_offset;
        check_status_(import(p, &v), STRIDED_OK, AT(c));
        if (c->layout != NULL)
            check_layout_(&v.layout, c->layout, 4, false, AT(c));
        if (strided_view_ptr(&v) != (void *)(p->data + c->byte_offset) ||
            strided_buffer_ptr(v.buffer) != (void *)p->data)
            fail_at(AT(c), "the view or its buffer points elsewhere\n");
        check_i64_((int64_t)strided_buffer_size(v.buffer), c->size, "size", AT(c));
        check_i64_(v.origin, (int64_t)c->byte_offset, "origin", AT(c));
        strided_view_release(&v);
        check_i64_(deletes, 1, "deletes", AT(c));
    }
}

static void test_import_view_outside_the_footprint(void **state)
{
    /* A view derived from an imported view must stay inside the producer's
     * footprint, as a view of any buffer must stay inside the buffer. */
    (void)state;
    int deletes = -1;
    producer *p = producer_of(&deletes, true, 5);
    strided_view v, d;
    STRIDES(p, -1);
    T(p)->byte_offset = 16;
    assert_ok(import(p, &v));
    strided_layout six = mk(DIMS(6), I64(-1), 4);
    fill_sentinel(&d, sizeof d);
    assert_error(strided_view_view(&v, &six, NULL, &d), STRIDED_ERR_INVALID_ARGUMENT, NULL,
                 "The layout addresses bytes [-4, 20) of the buffer, outside "
                 "its range [0, 20).");
    assert_untouched(&d, sizeof d);
    strided_layout fwd = mk(DIMS(2), I64(1), 4);
    assert_error(strided_view_view(&v, &fwd, NULL, &d), STRIDED_ERR_INVALID_ARGUMENT, NULL,
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

/* Every type strided_dtype_itemsize takes (the 23 of test_dtype.c) imports
 * with its itemsize, in the versioned and the legacy form by turns. */
static void test_import_dtypes(void **state)
{
    static const int bits[] = {8, 16, 32, 64, 128};
    int imported = 0;

    (void)state;
    for (int code = 0; code < 256; code++) {
        for (size_t k = 0; k < ARRAY_LEN(bits); k++) {
            strided_dtype dt = DT(code, bits[k], 1);
            int itemsize;
            if (strided_dtype_itemsize(dt, &itemsize) != STRIDED_OK)
                continue;
            int deletes = -1;
            producer *p = producer_of(&deletes, imported % 2 == 0, 2, 3);
            strided_view v;
            T(p)->dtype = dt;
            assert_ok(import(p, &v));
            assert_int_equal(v.layout.itemsize, itemsize);
            assert_true(strided_dtype_equal(v.dtype, dt));
            assert_true(v.has_dtype);
            strided_view_release(&v);
            assert_int_equal(deletes, 1);
            imported++;
        }
    }
    assert_int_equal(imported, 23);
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
    static const int32_t types[] = {STRIDED_DEVICE_CUDA_HOST, STRIDED_DEVICE_CUDA_MANAGED};
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_rejects_malformed_tensors),
        cmocka_unit_test(test_import_rejects_a_footprint_outside_the_address_space),
        cmocka_unit_test(test_import_null_strides_by_version),
        cmocka_unit_test(test_import_rejects_other_major_versions),
        cmocka_unit_test(test_import_of_major_version_2_reads_no_other_field_poisoned),
        cmocka_unit_test(test_import_of_major_version_2_reads_no_other_field_guarded),
        cmocka_unit_test(test_import_of_null_managed),
        cmocka_unit_test(test_import_without_out_still_deletes),
        cmocka_unit_test(test_import_with_a_null_deleter),
        cmocka_unit_test(test_import_allocation_failure_deletes_once),
        cmocka_unit_test(test_import_c_contiguous),
        cmocka_unit_test(test_import_older_minor_versions),
        cmocka_unit_test(test_import_deletes_after_the_last_derived_view),
        cmocka_unit_test(test_import_buffer_reference_outlives_the_view),
        cmocka_unit_test(test_import_honours_byte_offset),
        cmocka_unit_test(test_import_null_data_empty_tensor),
        cmocka_unit_test(test_import_empty_tensor_with_data),
        cmocka_unit_test(test_import_0d_tensor),
        cmocka_unit_test(test_import_reversed_array),
        cmocka_unit_test(test_import_negative_strides_footprint),
        cmocka_unit_test(test_import_view_outside_the_footprint),
        cmocka_unit_test(test_import_readonly_flag),
        cmocka_unit_test(test_import_of_a_borrowed_dl_tensor),
        cmocka_unit_test(test_import_dtypes),
        cmocka_unit_test(test_import_64_dimensions),
        cmocka_unit_test(test_import_zero_strides),
        cmocka_unit_test(test_import_cuda_host_and_managed_device_types),
    };

    use_no_driver();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
