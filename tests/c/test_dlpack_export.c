/*
 * Tests of strided_view_export_dlpack and strided_view_export_dlpack_legacy:
 * the fields of the managed tensor, its hold on the view's buffer until its
 * deleter runs, the refusals (no dtype, no buffer, no memory), round trips
 * through strided_view_import_dlpack, and the stream a consumer may hand
 * __dlpack__.
 *
 * Built with no CUDA driver (DRIVER_NONE): host memory is HOST and exports
 * as (CPU, 0).
 */
#include "test_util.h"

#include <stdlib.h>

#include "memory/memory.h"
#include "strided/buffer.h"
#include "strided/dlpack.h"
#include "strided/resource.h"
#include "strided/view.h"
#include "test_cuda.h"

#define OP_EXPORT "export_dlpack"
#define OP_EXPORT_LEGACY "export_dlpack_legacy"

static const strided_dtype f32 = {STRIDED_DTYPE_FLOAT, 32, 1};

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

/* A view of host_data (wrapped with a release counted in r) through
 * layout l, of element type dt (none when NULL). */
static strided_view wrapped_view(releases *r, strided_layout l, const strided_dtype *dt,
                                 bool readonly)
{
    strided_buffer *b;
    strided_view v;
    r->count = 0;
    for (int i = 0; i < 256; i++)
        host_data[i] = (float)i;
    assert_ok(strided_buffer_wrap(host_data, sizeof host_data, count_release, r, &b));
    assert_ok(strided_view_from_buffer(b, &l, dt, readonly, &v));
    strided_buffer_release(b); /* the view holds the only reference */
    return v;
}

/* Release the view, after which its buffer must be released once. */
static void release_view(strided_view *v, const releases *r)
{
    strided_view_release(v);
    assert_int_equal(r->count, 1);
}

/* A managed tensor of either form. */
typedef struct exported {
    bool versioned;
    strided_dl_managed_tensor_versioned *v;
    strided_dl_managed_tensor *l;
    strided_dl_tensor *tensor;
} exported;

static exported export_view(const strided_view *view, bool versioned)
{
    exported e = {versioned, NULL, NULL, NULL};
    if (versioned) {
        assert_ok(strided_view_export_dlpack(view, &e.v));
        assert_non_null(e.v);
        assert_non_null(e.v->deleter);
        e.tensor = &e.v->dl_tensor;
    } else {
        assert_ok(strided_view_export_dlpack_legacy(view, &e.l));
        assert_non_null(e.l);
        assert_non_null(e.l->deleter);
        e.tensor = &e.l->dl_tensor;
    }
    return e;
}

static void delete_exported(exported e)
{
    if (e.versioned)
        e.v->deleter(e.v);
    else
        e.l->deleter(e.l);
}

/* The tensor describes the view: its layout (strides always explicit), type
 * and device, and the address of its first element (NULL when empty). */
static void check_exported_tensor(const strided_dl_tensor *t, const strided_view *v)
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

/* Both forms: every field, implicit strides exported explicitly, and a
 * reference to the buffer until the deleter runs. */
static void test_export_fields(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        releases r;
        strided_view v = wrapped_view(&r, mk_implicit(DIMS(3, 4), 4), &f32, false);
        exported e = export_view(&v, versioned);
        if (versioned) {
            assert_int_equal(e.v->version.major, 1);
            assert_int_equal(e.v->version.minor, 3);
            assert_true(e.v->flags == 0);
        }
        check_exported_tensor(e.tensor, &v);
        assert_i64(e.tensor->strides[0], 4);
        assert_i64(e.tensor->strides[1], 1);
        assert_ptr_equal(e.tensor->data, host_data);
        assert_i64(strided_buffer_use_count(v.buffer), 2);
        delete_exported(e);
        assert_i64(strided_buffer_use_count(v.buffer), 1);
        release_view(&v, &r);
    }
}

static void test_export_readonly_flag(void **state)
{
    (void)state;
    releases r;
    strided_view v = wrapped_view(&r, mk_c(DIMS(5), 4), &f32, true);
    exported e = export_view(&v, true);
    assert_true(e.v->flags == STRIDED_DLPACK_FLAG_READ_ONLY);
    delete_exported(e);
    /* The legacy form cannot say so, and still exports. */
    e = export_view(&v, false);
    check_exported_tensor(e.tensor, &v);
    delete_exported(e);
    release_view(&v, &r);
}

static void test_export_sliced_and_f_order(void **state)
{
    (void)state;
    releases r;
    strided_layout l = mk_f(DIMS(4, 6), 4);
    strided_view v = wrapped_view(&r, l, &f32, false);
    strided_layout sl = sliced(l, S_(1, 4, 1), S_(0, 6, 2));
    strided_view d;
    assert_ok(strided_view_view(&v, &sl, NULL, &d));
    exported e = export_view(&d, true);
    check_exported_tensor(e.tensor, &d);
    assert_i64(e.tensor->shape[0], 3);
    assert_i64(e.tensor->shape[1], 3);
    assert_i64(e.tensor->strides[0], 1);
    assert_i64(e.tensor->strides[1], 8);
    assert_ptr_equal(e.tensor->data, host_data + 1);
    delete_exported(e);
    strided_view_release(&d);
    release_view(&v, &r);
}

static void test_export_0d(void **state)
{
    (void)state;
    releases r;
    strided_dtype c64 = {STRIDED_DTYPE_COMPLEX, 64, 1};
    strided_view v = wrapped_view(&r, mk_c(0, NULL, 8), &c64, false);
    for (int versioned = 0; versioned < 2; versioned++) {
        exported e = export_view(&v, versioned);
        check_exported_tensor(e.tensor, &v);
        assert_ptr_equal(e.tensor->data, host_data);
        delete_exported(e);
    }
    release_view(&v, &r);
}

static void test_export_empty(void **state)
{
    (void)state;
    releases r;
    strided_view v = wrapped_view(&r, mk_c(DIMS(0, 4), 4), &f32, false);
    exported e = export_view(&v, true);
    check_exported_tensor(e.tensor, &v);
    assert_null(e.tensor->data);
    assert_i64(e.tensor->shape[0], 0);
    assert_i64(e.tensor->shape[1], 4);
    delete_exported(e);
    release_view(&v, &r);
}

static void test_export_keeps_the_buffer_alive(void **state)
{
    (void)state;
    releases r;
    strided_view v = wrapped_view(&r, mk_c(DIMS(8), 4), &f32, false);
    exported e = export_view(&v, true), el = export_view(&v, false);
    strided_view_release(&v);
    assert_int_equal(r.count, 0);
    assert_true(((float *)e.tensor->data)[7] == 7.0f);
    delete_exported(e);
    assert_int_equal(r.count, 0);
    assert_true(((float *)el.tensor->data)[3] == 3.0f);
    delete_exported(el);
    assert_int_equal(r.count, 1);
}

static void test_export_allocated_buffer_use_count(void **state)
{
    (void)state;
    strided_memory_resource *mr;
    strided_buffer *b;
    strided_view v;
    strided_layout l = mk_c(DIMS(2, 3), 2);
    strided_dtype dt = {STRIDED_DTYPE_INT, 16, 1};
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
    strided_view v = wrapped_view(&r, mk_c(DIMS(16), 1), NULL, false);
    assert_false(v.has_dtype);
    strided_dl_managed_tensor_versioned *m;
    strided_dl_managed_tensor *ml;
    fill_sentinel(&m, sizeof m);
    fill_sentinel(&ml, sizeof ml);
    assert_error(strided_view_export_dlpack(&v, &m), STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT,
                 "Cannot export StridedMemoryView via DLPack without dtype "
                 "information; create the view with dtype specified.");
    assert_untouched(&m, sizeof m);
    assert_error(strided_view_export_dlpack_legacy(&v, &ml), STRIDED_ERR_INVALID_ARGUMENT,
                 OP_EXPORT_LEGACY,
                 "Cannot export StridedMemoryView via DLPack without dtype "
                 "information; create the view with dtype specified.");
    assert_untouched(&ml, sizeof ml);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    release_view(&v, &r);
}

static void test_export_without_buffer(void **state)
{
    (void)state;
    releases r;
    strided_view v = wrapped_view(&r, mk_c(DIMS(4), 4), &f32, false);
    strided_view_release(&v);
    strided_dl_managed_tensor_versioned *m;
    strided_dl_managed_tensor *ml;
    fill_sentinel(&m, sizeof m);
    fill_sentinel(&ml, sizeof ml);
    assert_error(strided_view_export_dlpack(&v, &m), STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT, NULL);
    assert_error(strided_view_export_dlpack(NULL, &m), STRIDED_ERR_INVALID_ARGUMENT, OP_EXPORT,
                 NULL);
    assert_error(strided_view_export_dlpack_legacy(&v, &ml), STRIDED_ERR_INVALID_ARGUMENT,
                 OP_EXPORT_LEGACY, NULL);
    assert_error(strided_view_export_dlpack_legacy(NULL, &ml), STRIDED_ERR_INVALID_ARGUMENT,
                 OP_EXPORT_LEGACY, NULL);
    assert_untouched(&m, sizeof m);
    assert_untouched(&ml, sizeof ml);
    assert_int_equal(r.count, 1);
}

static void test_export_allocation_failure(void **state)
{
    (void)state;
    releases r;
    strided_view v = wrapped_view(&r, mk_c(DIMS(3, 4), 4), &f32, false);
    strided_dl_managed_tensor_versioned *m;
    strided_dl_managed_tensor *ml;
    fill_sentinel(&m, sizeof m);
    fill_sentinel(&ml, sizeof ml);
    strided__fail_allocation_after(0);
    assert_error(strided_view_export_dlpack(&v, &m), STRIDED_ERR_OUT_OF_MEMORY, OP_EXPORT, NULL);
    strided__fail_allocation_after(0);
    assert_error(strided_view_export_dlpack_legacy(&v, &ml), STRIDED_ERR_OUT_OF_MEMORY,
                 OP_EXPORT_LEGACY, NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&m, sizeof m);
    assert_untouched(&ml, sizeof ml);
    assert_i64(strided_buffer_use_count(v.buffer), 1);
    release_view(&v, &r);
}

/* A view exported in one form and imported back. */
typedef struct round_trip_case {
    int line;
    strided_layout layout;
    bool readonly, versioned;
} round_trip_case;

/* Export, import, and check the imported view against the original: the
 * same layout but for the slice offset, which the import folds into the
 * pointer; read-only only through the versioned form. */
static void check_round_trip(const round_trip_case *c)
{
    releases r;
    strided_view v = wrapped_view(&r, c->layout, &f32, c->readonly);
    strided_view w;
    exported e = export_view(&v, c->versioned);
    check_status_(strided_view_import_dlpack(e.versioned ? (void *)e.v : (void *)e.l, c->versioned,
                                             &w),
                  STRIDED_OK, AT(c));
    check_i64_(w.layout.ndim, v.layout.ndim, "ndim", AT(c));
    check_i64_(w.layout.itemsize, v.layout.itemsize, "itemsize", AT(c));
    for (int i = 0; i < v.layout.ndim; i++) {
        check_i64_(w.layout.shape[i], v.layout.shape[i], "extent", AT(c));
        check_i64_(w.layout.strides[i], v.layout.strides[i], "stride", AT(c));
    }
    check_i64_(w.layout.slice_offset, 0, "slice offset", AT(c));
    if (strided_layout_volume(&v.layout) > 0 && strided_view_ptr(&w) != strided_view_ptr(&v))
        fail_at(AT(c), "the imported view points elsewhere\n");
    if (!strided_dtype_equal(w.dtype, v.dtype))
        fail_at(AT(c), "the imported view has another dtype\n");
    check_i64_(w.device.device_type, STRIDED_DEVICE_CPU, "device type", AT(c));
    check_i64_(w.readonly, c->versioned && c->readonly, "readonly", AT(c));
    /* The chain: view, exported tensor, imported view. */
    strided_view_release(&v);
    check_i64_(r.count, 0, "releases", AT(c));
    strided_view_release(&w);
    check_i64_(r.count, 1, "releases", AT(c));
}

static void test_round_trips(void **state)
{
    strided_layout c46 = mk_c(DIMS(4, 6), 4);
    /* numpy: arange(24).reshape(4,6)[:, ::2]. */
    strided_layout every_2nd = sliced(c46, S_ALL, S_(0, 6, 2));
    strided_layout reversed = sliced(c46, S_REV, S_(5, 0, -2));
    strided_layout c0d = mk_c(0, NULL, 4), empty = mk_c(DIMS(3, 0), 4);
    const round_trip_case cases[] = {
        CASE(c46, false, true),      CASE(c46, false, false),      CASE(c46, true, true),
        CASE(c46, true, false),      CASE(every_2nd, false, true), CASE(every_2nd, false, false),
        CASE(reversed, false, true), CASE(reversed, true, false),  CASE(c0d, false, true),
        CASE(c0d, false, false),     CASE(empty, false, true),     CASE(empty, false, false),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_round_trip(&cases[i]);
}

static void test_round_trip_equal_layout(void **state)
{
    (void)state;
    releases r;
    strided_view v = wrapped_view(&r, mk_c(DIMS(4, 6), 4), &f32, false);
    strided_dl_managed_tensor_versioned *m = NULL;
    strided_view w;
    assert_ok(strided_view_export_dlpack(&v, &m));
    assert_ok(strided_view_import_dlpack(m, true, &w));
    assert_layout_eq(w.layout, v.layout);
    assert_ptr_equal(strided_view_ptr(&w), strided_view_ptr(&v));
    strided_view_release(&w);
    assert_int_equal(r.count, 0);
    release_view(&v, &r);
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
        for (size_t i = 0; i < ARRAY_LEN(bad); i++)
            assert_error(strided_view_check_dlpack_stream(&v, true, bad[i]),
                         STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__",
                         "is not valid for a view of host memory: a host producer takes "
                         "stream=None or -1");
    }
    const int32_t device_types[] = {STRIDED_DEVICE_CUDA, STRIDED_DEVICE_CUDA_MANAGED};
    for (int k = 0; k < 2; k++) {
        v.device.device_type = device_types[k];
        const int64_t good[] = {-1, 1, 2, 3, 0x7f0012345678, INT64_MAX};
        for (size_t i = 0; i < ARRAY_LEN(good); i++)
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
        cmocka_unit_test(test_export_fields),
        cmocka_unit_test(test_export_readonly_flag),
        cmocka_unit_test(test_export_sliced_and_f_order),
        cmocka_unit_test(test_export_0d),
        cmocka_unit_test(test_export_empty),
        cmocka_unit_test(test_export_keeps_the_buffer_alive),
        cmocka_unit_test(test_export_allocated_buffer_use_count),
        cmocka_unit_test(test_export_without_dtype),
        cmocka_unit_test(test_export_without_buffer),
        cmocka_unit_test(test_export_allocation_failure),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_round_trip_equal_layout),
        cmocka_unit_test(test_buffer_device_of_host_memory),
    };

    use_no_driver();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
