/*
 * Tests of strided/view.h, views of buffers: from_buffer and view (the
 * cases of cuda.core's own test_from_buffer* tests, and the rule that every
 * byte of every element lies inside the buffer), ownership of the buffer reference, and failure without side
 * effects; wrap (views of memory given by element 0 and a layout). DLPack
 * import and export are in test_dlpack_import.c and test_dlpack_export.c.
 *
 * Built with no CUDA driver (DRIVER_NONE): host memory is HOST, (CPU, 0),
 * not device accessible.
 */
#include "test_util.h"

#include <stdlib.h>

#include "base/base.h"
#include "layout/layout_internal.h"
#include "strided/buffer.h"
#include "strided/dlpack.h"
#include "strided/resource.h"
#include "strided/view.h"
#include "test_cuda.h"
#include "view/view_internal.h"

/* The operation part of every view.h message. */
#define OP "view"

static strided_dtype DT(int code, int bits)
{
    strided_dtype d = {(uint8_t)code, (uint8_t)bits, 1};
    return d;
}

#define INT8 DT(STRIDED_DTYPE_INT, 8)
#define INT16 DT(STRIDED_DTYPE_INT, 16)
#define UINT32 DT(STRIDED_DTYPE_UINT, 32)
#define F32 DT(STRIDED_DTYPE_FLOAT, 32)

/* A host-resource buffer of exactly size bytes (the memory resource is
 * released at once: the buffer keeps it). */
static strided_buffer *host_buffer(size_t size)
{
    strided_memory_resource *mr;
    strided_buffer *b;
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, size, NULL, &b));
    strided_memory_resource_release(mr);
    return b;
}

/* A release callback that counts. */
static void count_release(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    (*(int *)context)++;
}

static void check_from_buffer(int ndim, const int64_t *shape, strided_dtype dt, strided_order order,
                              bool readonly)
{
    int itemsize = 0;
    strided_layout l;
    int64_t required = -1;
    strided_view v;

    assert_ok(strided_dtype_itemsize(dt, &itemsize));
    assert_ok(strided_layout_init_dense(&l, ndim, shape, itemsize, order, 0, NULL));
    assert_ok(strided_layout_required_size_in_bytes(&l, &required));
    assert_i64(required, strided_layout_volume(&l) * itemsize);
    strided_buffer *b = host_buffer((size_t)required);

    assert_ok(strided_view_from_buffer(b, &l, &dt, readonly, &v));
    assert_ptr_equal(v.buffer, b);
    assert_i64(v.origin, 0);
    assert_layout_eq(v.layout, l);
    assert_true(v.has_dtype);
    assert_true(strided_dtype_equal(v.dtype, dt));
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(v.device.device_id, 0);
    assert_int_equal(v.readonly, readonly);
    assert_ptr_equal(strided_view_ptr(&v), strided_buffer_ptr(b));
    assert_true(strided_view_device_ptr(&v) == 0);
    assert_i64(strided_buffer_use_count(b), 2);
    strided_view_release(&v);
    assert_null(v.buffer);
    assert_i64(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
}

static void test_from_buffer(void **state)
{
    (void)state;
    static const int64_t s0[1] = {0}, s2[] = {2, 3}, s10[] = {10, 10}, s3[] = {10, 13, 11};
    const struct {
        int ndim;
        const int64_t *shape;
    } shapes[] = {{0, s0}, {2, s2}, {2, s10}, {3, s3}};
    const strided_dtype dtypes[] = {INT8, UINT32};
    const strided_order orders[] = {STRIDED_ORDER_C, STRIDED_ORDER_F};
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 2; d++)
            for (int o = 0; o < 2; o++)
                for (int r = 0; r < 2; r++)
                    check_from_buffer(shapes[s].ndim, shapes[s].shape, dtypes[d], orders[o],
                                      r == 1);
}

static void test_from_buffer_without_dtype(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(16);
    strided_layout l = mk_c(DIMS(16), 1);
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    assert_false(v.has_dtype);
    assert_layout_eq(v.layout, l);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_from_buffer_with_a_5_byte_itemsize(void **state)
{
    /* test_from_buffer_with_non_power_of_two_itemsize, without a dtype. */
    (void)state;
    strided_buffer *b = host_buffer(15);
    strided_layout l = mk_c(DIMS(3), 5);
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    assert_int_equal(v.layout.itemsize, 5);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_from_buffer_larger_buffer(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(100);
    strided_layout l = mk_c(DIMS(2, 3), 4);
    strided_view v;
    strided_dtype dt = F32;
    assert_ok(strided_view_from_buffer(b, &l, &dt, false, &v));
    strided_view_release(&v);
    strided_buffer_release(b);
}

/* A failing from_buffer: the error, out untouched, no reference taken. */
static void check_from_buffer_fails(strided_buffer *b, const strided_layout *l,
                                    const strided_dtype *dt, strided_status code, const char *text,
                                    const char *file, int line)
{
    strided_view out;
    long count = b != NULL ? strided_buffer_use_count(b) : 0;
    fill_sentinel(&out, sizeof out);
    check_error_(strided_view_from_buffer(b, l, dt, false, &out), code, OP, text, file, line);
    check_untouched_(&out, sizeof out, "out", file, line);
    if (b != NULL && strided_buffer_use_count(b) != count)
        fail_at(file, line, "use count %ld, expected %ld\n", strided_buffer_use_count(b), count);
}
#define assert_from_buffer_fails(b, l, dt, code, text) \
    check_from_buffer_fails((b), (l), (dt), (code), (text), __FILE__, __LINE__)

static void test_from_buffer_too_small(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(20);
    strided_layout l = mk_c(DIMS(5, 4), 2);
    assert_from_buffer_fails(b, &l, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                             "Buffer size is too small for the layout. "
                             "Expected at least 40 bytes, got 20 bytes.");
    strided_dtype dt = INT16;
    assert_from_buffer_fails(b, &l, &dt, STRIDED_ERR_INVALID_ARGUMENT,
                             "Buffer size is too small for the layout. "
                             "Expected at least 40 bytes, got 20 bytes.");
    strided_buffer_release(b);
}

static void test_from_buffer_too_small_by_one_byte(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(39);
    strided_layout l = mk_c(DIMS(5, 4), 2);
    assert_from_buffer_fails(b, &l, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                             "Expected at least 40 bytes, got 39 bytes.");
    strided_buffer_release(b);
}

static void test_from_buffer_too_small_wrapped(void **state)
{
    /* Wrapped (borrowed) buffers are checked too. */
    (void)state;
    static unsigned char mem[20];
    strided_buffer *b;
    assert_ok(strided_buffer_wrap(mem, sizeof mem, NULL, NULL, &b));
    strided_layout l = mk_c(DIMS(5, 4), 2);
    assert_from_buffer_fails(b, &l, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                             "Buffer size is too small for the layout. "
                             "Expected at least 40 bytes, got 20 bytes.");
    strided_buffer_release(b);
}

static void test_from_buffer_size_0_wrapped_null(void **state)
{
    /* from_handle(0, 0): only empty layouts. */
    (void)state;
    strided_buffer *b;
    assert_ok(strided_buffer_wrap(NULL, 0, NULL, NULL, &b));
    strided_layout one = mk_c(DIMS(1), 4);
    assert_from_buffer_fails(b, &one, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                             "Expected at least 4 bytes, got 0 bytes.");
    strided_layout l0 = mk_c(0, NULL, 4);
    assert_from_buffer_fails(b, &l0, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                             "Expected at least 4 bytes, got 0 bytes.");
    strided_layout empty = mk_c(DIMS(0, 5), 4);
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &empty, NULL, false, &v));
    assert_null(strided_view_ptr(&v));
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_from_buffer_disallowed_negative_offset(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(100);
    strided_layout l = mk(DIMS(5, 4), I64(-4, 1), 1);
    assert_from_buffer_fails(b, &l, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                             "Allocation size for a layout that maps elements "
                             "to negative memory offsets is ambiguous. The "
                             "layout's min_offset is -16.");
    strided_buffer_release(b);
}

static void test_from_buffer_negative_slice_offset(void **state)
{
    /* A layout sliced backwards from a dense one reaches offsets >= 0. */
    (void)state;
    strided_buffer *b = host_buffer(20);
    strided_layout l = mk_c(DIMS(5), 4);
    strided_layout rev = sliced(l, S_REV);
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &rev, NULL, false, &v));
    assert_ptr_equal(strided_view_ptr(&v), (char *)strided_buffer_ptr(b) + 16);
    strided_view_release(&v);
    /* A negative stride without the slice offset reaches below 0. */
    strided_layout neg = mk(DIMS(5), I64(-1), 4);
    assert_from_buffer_fails(b, &neg, NULL, STRIDED_ERR_INVALID_ARGUMENT, "min_offset is -4.");
    strided_buffer_release(b);
}

static void test_from_buffer_incompatible_dtype_and_itemsize(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(16);
    strided_layout l = mk_c(DIMS(4), 1);
    strided_dtype dt = INT16;
    assert_from_buffer_fails(b, &l, &dt, STRIDED_ERR_INVALID_ARGUMENT,
                             "The dtype's itemsize (2) does not match the "
                             "layout's itemsize (1).");
    strided_layout l4 = mk_c(DIMS(4), 4);
    assert_from_buffer_fails(b, &l4, &dt, STRIDED_ERR_INVALID_ARGUMENT,
                             "The dtype's itemsize (2) does not match the "
                             "layout's itemsize (4).");
    strided_buffer_release(b);
}

static void test_from_buffer_unsupported_dtype(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(16);
    strided_layout l = mk_c(DIMS(4), 4);
    strided_dtype vec = {STRIDED_DTYPE_FLOAT, 32, 2};
    assert_from_buffer_fails(b, &l, &vec, STRIDED_ERR_UNSUPPORTED, "lanes=2");
    strided_dtype opaque = {STRIDED_DTYPE_OPAQUE_HANDLE, 32, 1};
    assert_from_buffer_fails(b, &l, &opaque, STRIDED_ERR_UNSUPPORTED, "opaque");
    strided_buffer_release(b);
}

static void test_from_buffer_null_arguments(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(16);
    strided_layout l = mk_c(DIMS(4), 4);
    strided_view v;
    assert_from_buffer_fails(NULL, &l, NULL, STRIDED_ERR_INVALID_ARGUMENT, NULL);
    assert_from_buffer_fails(b, NULL, NULL, STRIDED_ERR_INVALID_ARGUMENT, NULL);
    assert_error(strided_view_from_buffer(b, &l, NULL, false, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 OP, NULL);
    assert_i64(strided_buffer_use_count(b), 1);
    (void)v;
    strided_buffer_release(b);
}

static void test_from_buffer_zero_volume_on_a_size_0_buffer(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(0);
    const strided_layout layouts[] = {
        mk_c(DIMS(0), 4),
        mk_c(DIMS(3, 0, 5), 8),
        mk(DIMS(0, 3), I64(-4, 1), 1), /* negative strides, no element */
        mk(DIMS(2, 0), I64(1000, 1), 2),
    };
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        strided_view v;
        assert_ok(strided_view_from_buffer(b, &layouts[i], NULL, false, &v));
        assert_i64(strided_buffer_use_count(b), 2);
        strided_view_release(&v);
    }
    strided_buffer_release(b);
}

static void test_from_buffer_zero_volume_sliced_out_of_range(void **state)
{
    /* A zero-volume layout is valid whatever its slice offset. */
    (void)state;
    strided_buffer *b = host_buffer(8);
    strided_layout l = mk_c(DIMS(100), 4);
    strided_layout s = sliced(l, S_(90, 90, 1));
    strided_view v;
    assert_i64(strided_layout_volume(&s), 0);
    assert_ok(strided_view_from_buffer(b, &s, NULL, false, &v));
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_from_buffer_overflowing_range(void **state)
{
    /* Element offsets that fit, byte offsets that do not: a layout filled in
     * by hand, since strided_layout_init refuses it. */
    (void)state;
    strided_buffer *b = host_buffer(64);
    strided_layout l = raw(DIMS(2), I64(INT64_C(1) << 61), 8);
    assert_from_buffer_fails(b, &l, NULL, STRIDED_ERR_OVERFLOW, NULL);
    /* INT64_MIN as a stride, on an axis that reaches no element. */
    l = raw(DIMS(1, 2), I64(INT64_MIN, 1), 1);
    assert_from_buffer_fails(b, &l, NULL, STRIDED_ERR_OVERFLOW, NULL);
    strided_buffer_release(b);
}

static void check_from_buffer_sliced(strided_order order, int64_t offset)
{
    strided_buffer *b = host_buffer(70);
    strided_layout l;
    strided_view v, w;
    strided_dtype dt = INT16;
    assert_ok(strided_layout_init_dense(&l, DIMS(5, 7), 2, order, 0, NULL));
    assert_ok(strided_view_from_buffer(b, &l, &dt, false, &v));
    strided_layout sl = sliced(l, s_to(-2), s_from(3));
    assert_ok(strided_view_view(&v, &sl, NULL, &w));
    assert_i64(w.layout.ndim, 2);
    assert_i64(w.layout.shape[0], 3);
    assert_i64(w.layout.shape[1], 4);
    assert_i64(w.layout.slice_offset, offset);
    int64_t bytes = -1;
    assert_ok(strided_layout_slice_offset_in_bytes(&w.layout, &bytes));
    assert_i64(bytes, offset * 2);
    assert_ptr_equal(strided_view_ptr(&w), (char *)strided_buffer_ptr(b) + offset * 2);
    assert_ptr_equal(strided_view_ptr(&v), strided_buffer_ptr(b));
    assert_ptr_equal(w.buffer, b);
    assert_i64(w.origin, 0);
    assert_true(w.has_dtype);
    assert_true(strided_dtype_equal(w.dtype, dt));
    assert_i64(strided_buffer_use_count(b), 3);
    strided_view_release(&v);
    strided_view_release(&w);
    assert_i64(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
}

static void test_from_buffer_sliced_c(void **state)
{
    (void)state;
    check_from_buffer_sliced(STRIDED_ORDER_C, 3);
}

static void test_from_buffer_sliced_f(void **state)
{
    (void)state;
    check_from_buffer_sliced(STRIDED_ORDER_F, 15);
}

static void test_view_of_a_view_measures_from_the_buffer(void **state)
{
    /* The new layout's slice offset applies to the buffer's start, not to
     * the sliced view's pointer. */
    (void)state;
    strided_buffer *b = host_buffer(70);
    strided_layout l = mk_c(DIMS(5, 7), 2);
    strided_view v, w, x;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    strided_layout sl = sliced(l, s_from(2), S_ALL);
    assert_ok(strided_view_view(&v, &sl, NULL, &w));
    assert_ptr_equal(strided_view_ptr(&w), (char *)strided_buffer_ptr(b) + 28);
    assert_ok(strided_view_view(&w, &l, NULL, &x));
    assert_ptr_equal(strided_view_ptr(&x), strided_buffer_ptr(b));
    strided_view_release(&v);
    strided_view_release(&w);
    strided_view_release(&x);
    strided_buffer_release(b);
}

static void test_view_keeps_everything_with_null_arguments(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(24);
    strided_layout l = mk_f(DIMS(2, 3), 4);
    strided_dtype dt = F32;
    strided_view v, w;
    assert_ok(strided_view_from_buffer(b, &l, &dt, true, &v));
    assert_ok(strided_view_view(&v, NULL, NULL, &w));
    assert_ptr_equal(w.buffer, v.buffer);
    assert_i64(w.origin, v.origin);
    assert_layout_eq(w.layout, v.layout);
    assert_true(w.has_dtype);
    assert_true(strided_dtype_equal(w.dtype, dt));
    assert_int_equal(w.device.device_type, v.device.device_type);
    assert_int_equal(w.device.device_id, v.device.device_id);
    assert_true(w.readonly);
    assert_ptr_equal(strided_view_ptr(&w), strided_view_ptr(&v));
    assert_i64(strided_buffer_use_count(b), 3);
    strided_view_release(&v);
    /* w alone keeps the buffer. */
    assert_i64(strided_buffer_use_count(b), 2);
    strided_view_release(&w);
    assert_i64(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
}

static void test_view_in_place(void **state)
{
    /* out == view: the view is replaced, and still holds exactly one
     * reference (the struct cannot hold two). */
    (void)state;
    strided_buffer *b = host_buffer(70);
    strided_layout l = mk_c(DIMS(5, 7), 2);
    strided_dtype dt = INT16;
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, &dt, false, &v));
    assert_i64(strided_buffer_use_count(b), 2);
    strided_layout sl = sliced(l, s_to(-2), s_from(3));
    assert_ok(strided_view_view(&v, &sl, NULL, &v));
    assert_layout_eq(v.layout, sl);
    assert_ptr_equal(strided_view_ptr(&v), (char *)strided_buffer_ptr(b) + 6);
    assert_true(strided_dtype_equal(v.dtype, dt));
    assert_i64(strided_buffer_use_count(b), 2);
    /* layout pointing into the view itself. */
    assert_ok(strided_view_view(&v, &v.layout, NULL, &v));
    assert_layout_eq(v.layout, sl);
    assert_i64(strided_buffer_use_count(b), 2);
    strided_view_release(&v);
    assert_i64(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
}

static void test_view_in_place_failure_leaves_the_view(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(70);
    strided_layout l = mk_c(DIMS(5, 7), 2);
    strided_view v, before;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    before = v;
    strided_layout big = mk_c(DIMS(6, 7), 2);
    assert_error(strided_view_view(&v, &big, NULL, &v), STRIDED_ERR_INVALID_ARGUMENT, OP, NULL);
    assert_ptr_equal(v.buffer, before.buffer);
    assert_i64(v.origin, before.origin);
    assert_layout_eq(v.layout, before.layout);
    assert_int_equal(v.has_dtype, before.has_dtype);
    assert_int_equal(v.readonly, before.readonly);
    assert_i64(strided_buffer_use_count(b), 2);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_view_outside_the_buffer(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(70);
    strided_layout l = mk_c(DIMS(5, 7), 2);
    strided_view v, w;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    /* Origin 0: cuda.core's messages. */
    strided_layout big = mk_c(DIMS(6, 7), 2);
    fill_sentinel(&w, sizeof w);
    assert_error(strided_view_view(&v, &big, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "Buffer size is too small for the layout. Expected at least "
                 "84 bytes, got 70 bytes.");
    assert_untouched(&w, sizeof w);
    strided_layout neg = mk(DIMS(5), I64(-1), 2);
    assert_error(strided_view_view(&v, &neg, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "maps elements to negative memory offsets is ambiguous");
    assert_untouched(&w, sizeof w);
    /* A slice past the end. */
    strided_layout past = mk_c(DIMS(36), 2);
    assert_error(strided_view_view(&v, &past, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "Expected at least 72 bytes, got 70 bytes.");
    assert_untouched(&w, sizeof w);
    assert_i64(strided_buffer_use_count(b), 2);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_view_changes_the_dtype(void **state)
{
    /* view(layout.repacked(8), complex64) of float32 pairs. */
    (void)state;
    strided_buffer *b = host_buffer(48);
    strided_layout l = mk_c(DIMS(3, 4), 4);
    strided_dtype f32 = F32, c64 = {STRIDED_DTYPE_COMPLEX, 64, 1};
    strided_view v, w;
    assert_ok(strided_view_from_buffer(b, &l, &f32, false, &v));
    strided_layout packed;
    assert_ok(strided_layout_repack(&l, 8, 0, -1, true, &packed));
    assert_ok(strided_view_view(&v, &packed, &c64, &w));
    assert_true(strided_dtype_equal(w.dtype, c64));
    assert_int_equal(w.layout.itemsize, 8);
    strided_view_release(&w);
    /* A new itemsize without a dtype: no dtype. */
    assert_ok(strided_view_view(&v, &packed, NULL, &w));
    assert_false(w.has_dtype);
    strided_view_release(&w);
    /* A dtype that does not fit the layout. */
    fill_sentinel(&w, sizeof w);
    assert_error(strided_view_view(&v, &packed, &f32, &w), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "The dtype's itemsize (4) does not match the layout's "
                 "itemsize (8).");
    assert_untouched(&w, sizeof w);
    /* The same itemsize, a new dtype. */
    strided_dtype i32 = {STRIDED_DTYPE_INT, 32, 1};
    assert_ok(strided_view_view(&v, NULL, &i32, &w));
    assert_true(strided_dtype_equal(w.dtype, i32));
    strided_view_release(&w);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_view_of_a_released_view(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(16);
    strided_layout l = mk_c(DIMS(4), 4);
    strided_view v, w;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    strided_view_release(&v);
    fill_sentinel(&w, sizeof w);
    assert_error(strided_view_view(&v, NULL, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, OP, NULL);
    assert_untouched(&w, sizeof w);
    assert_error(strided_view_view(NULL, NULL, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, OP, NULL);
    assert_untouched(&w, sizeof w);
    assert_i64(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
}

static void test_release_twice_and_null(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(16);
    strided_layout l = mk_c(DIMS(4), 4);
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    strided_view_release(&v);
    assert_null(v.buffer);
    strided_view_release(&v);
    assert_null(v.buffer);
    strided_view_release(NULL);
    assert_i64(strided_buffer_use_count(b), 1);
    assert_null(strided_view_ptr(&v));
    assert_true(strided_view_device_ptr(&v) == 0);
    strided_buffer_release(b);
}

static void test_views_keep_the_memory_alive(void **state)
{
    (void)state;
    static float mem[12];
    int releases = 0;
    strided_buffer *b;
    strided_view v[4];
    strided_layout l = mk_c(DIMS(3, 4), 4);
    assert_ok(strided_buffer_wrap(mem, sizeof mem, count_release, &releases, &b));
    for (int i = 0; i < 4; i++) {
        assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v[i]));
        assert_i64(strided_buffer_use_count(b), 2 + i);
    }
    strided_buffer_release(b);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(releases, 0);
        assert_ptr_equal(strided_view_ptr(&v[i]), mem);
        strided_view_release(&v[i]);
    }
    assert_int_equal(releases, 1);
}

static void test_buffer_device_and_view_device(void **state)
{
    (void)state;
    strided_buffer *b = host_buffer(8);
    strided_device d = strided_buffer_device(b);
    assert_int_equal(d.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(d.device_id, 0);
    strided_buffer_release(b);
}

/* A release callback that records what it was given. */
typedef struct released {
    int count;
    void *ptr;
    size_t size;
} released;

static void record_release(void *context, void *ptr, size_t size)
{
    released *r = context;
    r->count++;
    r->ptr = ptr;
    r->size = size;
}

static void test_wrap_covers_the_footprint(void **state)
{
    (void)state;
    static int32_t mem[6][8];
    released r = {0};
    strided_dtype dt = DT(STRIDED_DTYPE_INT, 32);
    int64_t shape[] = {6, 4}, strides[] = {8, 2};
    strided_layout l;
    strided_view v;
    assert_ok(strided_layout_init(&l, 2, shape, strides, 4));
    assert_ok(strided_view_wrap(mem, &l, &dt, true, NULL, record_release, &r, &v));
    assert_ptr_equal(strided_view_ptr(&v), mem);
    assert_i64(v.origin, 0);
    /* Up to and including the last element, (5, 3) at offset 46. */
    assert_int_equal(strided_buffer_size(v.buffer), 47 * 4);
    assert_true(v.readonly);
    assert_true(v.has_dtype);
    assert_true(strided_dtype_equal(v.dtype, dt));
    /* No driver: host memory, classified as CPU. */
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CPU);
    /* A derived view may reach every element but not beyond. */
    strided_layout whole;
    strided_view w;
    assert_ok(strided_layout_init(&whole, 1, (int64_t[]){47}, NULL, 4));
    assert_ok(strided_view_view(&v, &whole, NULL, &w));
    strided_view_release(&w);
    assert_ok(strided_layout_init(&whole, 1, (int64_t[]){48}, NULL, 4));
    assert_error(strided_view_view(&v, &whole, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "Buffer size is too small");
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
    assert_ptr_equal(r.ptr, mem);
    assert_int_equal(r.size, 47 * 4);
}

static void test_wrap_negative_strides(void **state)
{
    (void)state;
    static double mem[4][6];
    released r = {0};
    int64_t shape[] = {4, 3}, strides[] = {-6, -2};
    strided_layout l;
    strided_view v;
    /* Element (0, 0) is the last one, mem[3][4]; the lowest is mem[0][0]. */
    assert_ok(strided_layout_init(&l, 2, shape, strides, 8));
    assert_ok(strided_view_wrap(&mem[3][4], &l, NULL, false, NULL, record_release, &r, &v));
    assert_ptr_equal(strided_view_ptr(&v), &mem[3][4]);
    assert_ptr_equal(strided_buffer_ptr(v.buffer), &mem[0][0]);
    assert_i64(v.origin, 22 * 8);
    assert_int_equal(strided_buffer_size(v.buffer), 23 * 8);
    assert_false(v.has_dtype);
    /* Reversing the view again lands on mem[0][0]. */
    strided_layout rev;
    strided_view w;
    strided_index all_back[] = {strided_index_all(-1), strided_index_all(-1)};
    assert_ok(strided_layout_slice(&l, 2, all_back, &rev));
    assert_ok(strided_view_view(&v, &rev, NULL, &w));
    assert_ptr_equal(strided_view_ptr(&w), &mem[0][0]);
    strided_view_release(&v);
    assert_int_equal(r.count, 0);
    strided_view_release(&w);
    assert_int_equal(r.count, 1);
    assert_ptr_equal(r.ptr, &mem[0][0]);
}

/* element0 is element (0,...,0) whatever the slice offset: the buffer is
 * the footprint around it, and offset 0 may lie outside (negative origin). */
static void test_wrap_sliced_layouts(void **state)
{
    (void)state;
    static unsigned char mem[16];
    released r = {0};
    strided_layout l, rev;
    strided_view v, w;
    /* (2,):(-1,)+1, element 0 at mem + 1: the elements are mem[1], mem[0]. */
    assert_ok(strided_layout_init(&l, 1, (int64_t[]){2}, NULL, 1));
    assert_ok(strided_layout_slice(&l, 1, (strided_index[]){strided_index_all(-1)}, &rev));
    assert_i64(rev.slice_offset, 1);
    assert_ok(strided_view_wrap(mem + 1, &rev, NULL, false, NULL, record_release, &r, &v));
    assert_ptr_equal(strided_view_ptr(&v), mem + 1);
    assert_ptr_equal(strided_buffer_ptr(v.buffer), mem);
    assert_int_equal(strided_buffer_size(v.buffer), 2);
    assert_i64(v.origin, 0);
    strided_view_release(&v);
    assert_int_equal(r.count, 1);
    assert_ptr_equal(r.ptr, mem);
    /* (3,):(2,)+5, element 0 at mem + 4: the elements are mem[4], mem[6],
     * mem[8], and offset 0 would be mem - 1, before the buffer. */
    strided_layout gapped = l;
    gapped.shape[0] = 3;
    gapped.strides[0] = 2;
    gapped.slice_offset = 5;
    gapped.implicit_strides = false;
    assert_ok(strided_layout_validate(&gapped));
    assert_ok(strided_view_wrap(mem + 4, &gapped, NULL, false, NULL, NULL, NULL, &v));
    assert_ptr_equal(strided_view_ptr(&v), mem + 4);
    assert_ptr_equal(strided_buffer_ptr(v.buffer), mem + 4);
    assert_int_equal(strided_buffer_size(v.buffer), 5);
    assert_i64(v.origin, -5);
    /* Views derived from it count from the same offset 0 and stay inside. */
    strided_layout last = gapped;
    last.shape[0] = 1;
    last.slice_offset = 9;
    assert_ok(strided_view_view(&v, &last, NULL, &w));
    assert_ptr_equal(strided_view_ptr(&w), mem + 8);
    strided_view_release(&w);
    strided_layout past = gapped;
    past.slice_offset = 7; /* elements mem[6], mem[8], mem[10]: past the end */
    assert_error(strided_view_view(&v, &past, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, "view",
                 "outside its range [0, 5)");
    past.slice_offset = 3; /* mem[2], before the start */
    assert_error(strided_view_view(&v, &past, NULL, &w), STRIDED_ERR_INVALID_ARGUMENT, "view",
                 "outside its range [0, 5)");
    strided_view_release(&v);
    /* An empty layout: element 0 still is element0. */
    strided_layout empty = gapped;
    empty.shape[0] = 0;
    empty.slice_offset = -20;
    assert_ok(strided_view_wrap(mem + 8, &empty, NULL, false, NULL, NULL, NULL, &v));
    assert_ptr_equal(strided_view_ptr(&v), mem + 8);
    assert_int_equal(strided_buffer_size(v.buffer), 0);
    strided_view_release(&v);
}

static void test_wrap_empty_and_borrowed(void **state)
{
    (void)state;
    int64_t shape[] = {0, 5};
    strided_layout l;
    strided_view v;
    strided_device gpu = {STRIDED_DEVICE_CUDA, 3};
    assert_ok(strided_layout_init(&l, 2, shape, NULL, 2));
    /* No element, so NULL is fine, and the given device is kept. */
    assert_ok(strided_view_wrap(NULL, &l, NULL, false, &gpu, NULL, NULL, &v));
    assert_int_equal(strided_buffer_size(v.buffer), 0);
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(v.device.device_id, 3);
    strided_view_release(&v);
}

static void test_wrap_takes_cpu_and_cuda_devices_at_their_word(void **state)
{
    (void)state;
    static int16_t mem[8];
    strided_layout l;
    strided_view v;
    assert_ok(strided_layout_init(&l, 1, (int64_t[]){8}, NULL, 2));
    /* No driver here, yet the buffer is device memory of device 2: the
     * producer said so, and nobody asked the driver. */
    strided_device gpu = {STRIDED_DEVICE_CUDA, 2};
    assert_ok(strided_view_wrap(mem, &l, NULL, false, &gpu, NULL, NULL, &v));
    strided_memory_info info = strided_buffer_memory_info(v.buffer);
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(info.device_id, 2);
    assert_true(info.device_accessible);
    assert_false(info.host_accessible);
    assert_int_equal(strided_view_device_ptr(&v), (uintptr_t)mem);
    strided_view_release(&v);
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    assert_ok(strided_view_wrap(mem, &l, NULL, false, &cpu, NULL, NULL, &v));
    info = strided_buffer_memory_info(v.buffer);
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(info.device_id, -1);
    assert_false(info.device_accessible);
    assert_int_equal(strided_view_device_ptr(&v), 0);
    strided_view_release(&v);
}

static void test_buffer_wrap_known(void **state)
{
    (void)state;
    static char mem[64];
    int releases = 0;
    strided_buffer *b = NULL;
    strided_memory_info managed = {STRIDED_MEMORY_MANAGED, 1, true, true, true, false,
                                   (uintptr_t)mem};
    assert_ok(strided_buffer_wrap_known(mem, sizeof mem, &managed, count_release, &releases, &b));
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_MANAGED);
    assert_int_equal(info.device_id, 1);
    assert_true(info.managed);
    strided_device d = strided_buffer_device(b);
    assert_int_equal(d.device_type, STRIDED_DEVICE_CUDA_MANAGED);
    strided_buffer_release(b);
    assert_int_equal(releases, 1);
    assert_error(strided_buffer_wrap_known(mem, 1, NULL, count_release, &releases, &b),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "info and out are required");
    assert_error(strided_buffer_wrap_known(mem, 1, &managed, count_release, &releases, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "info and out are required");
    assert_int_equal(releases, 1);
}

static void test_wrap_errors_leave_the_memory_alone(void **state)
{
    (void)state;
    static int16_t mem[8];
    released r = {0};
    strided_layout l, bad;
    strided_view v = {0};
    strided_dtype f32 = F32;
    assert_ok(strided_layout_init(&l, 1, (int64_t[]){8}, NULL, 2));
    assert_error(strided_view_wrap(NULL, &l, NULL, false, NULL, record_release, &r, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "element (0,...,0) is at NULL");
    assert_error(strided_view_wrap(mem, &l, &f32, false, NULL, record_release, &r, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap",
                 "The dtype's itemsize (4) does not match the layout's itemsize (2).");
    strided_dtype bits12 = DT(STRIDED_DTYPE_INT, 12);
    assert_error(strided_view_wrap(mem, &l, &bits12, false, NULL, record_release, &r, &v),
                 STRIDED_ERR_UNSUPPORTED, "wrap", "");
    /* Packed 4-bit elements count in a layout of itemsize 1. */
    strided_dtype bits4 = DT(STRIDED_DTYPE_INT, 4);
    assert_error(strided_view_wrap(mem, &l, &bits4, false, NULL, record_release, &r, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "has itemsize 1");
    assert_error(strided_view_wrap(mem, NULL, NULL, false, NULL, record_release, &r, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "layout and out are required");
    assert_error(strided_view_wrap(mem, &l, NULL, false, NULL, record_release, &r, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "layout and out are required");
    bad = l;
    bad.itemsize = 0;
    assert_error(strided_view_wrap(mem, &bad, NULL, false, NULL, record_release, &r, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "invalid layout");
    /* Elements below address 0. */
    assert_ok(strided_layout_init(&bad, 1, (int64_t[]){3}, (int64_t[]){-100}, 8));
    assert_error(strided_view_wrap((void *)(uintptr_t)64, &bad, NULL, false, NULL, record_release,
                                   &r, &v),
                 STRIDED_ERR_OVERFLOW, "wrap", "leave the address space");
    /* Elements from address 0 exactly: no memory starts at the null page
     * (a device view there would report no device address). */
    assert_ok(strided_layout_init(&bad, 1, (int64_t[]){3}, (int64_t[]){-8}, 8));
    assert_error(strided_view_wrap((void *)(uintptr_t)128, &bad, NULL, false, NULL, record_release,
                                   &r, &v),
                 STRIDED_ERR_OVERFLOW, "wrap", "leave the address space");
    const strided_device cuda0 = {STRIDED_DEVICE_CUDA, 0};
    assert_error(strided_view_wrap((void *)(uintptr_t)128, &bad, NULL, false, &cuda0,
                                   record_release, &r, &v),
                 STRIDED_ERR_OVERFLOW, "wrap", "leave the address space");
    /* One element further up is fine. */
    assert_ok(strided_view_wrap((void *)(uintptr_t)136, &bad, NULL, false, &cuda0, NULL, NULL, &v));
    assert_int_equal(strided_view_device_ptr(&v), 136);
    strided_view_release(&v);
    /* Elements above the top of the address space. */
    assert_ok(strided_layout_init(&bad, 1, (int64_t[]){3}, (int64_t[]){100}, 8));
    assert_error(strided_view_wrap((void *)(UINTPTR_MAX - 64), &bad, NULL, false, NULL,
                                   record_release, &r, &v),
                 STRIDED_ERR_OVERFLOW, "wrap", "leave the address space");
    assert_int_equal(r.count, 0);
    assert_null(v.buffer);
}

/* strided__layout_assign and strided__view_assign copy the header and
 * the axes the source has, and leave the entries past them as they were. */
static void test_assign_copies_the_used_axes(void **state)
{
    (void)state;
    int64_t shape[3] = {4, 5, 6}, strides[3] = {-30, 6, 1}, untouched;
    memset(&untouched, 0x5A, sizeof untouched);
    strided_view src;
    memset(&src, 0, sizeof src);
    assert_ok(strided_layout_init(&src.layout, 3, shape, strides, 8));
    src.layout.slice_offset = 90;
    src.buffer = (strided_buffer *)&src; /* any address: never used */
    src.origin = -24;
    src.has_dtype = true;
    src.dtype = (strided_dtype){STRIDED_DTYPE_FLOAT, 64, 1};
    src.device = (strided_device){STRIDED_DEVICE_CUDA, 1};
    src.home_device = 1;
    src.device_accessible = true;
    src.readonly = true;
    strided_view out;
    memset(&out, 0x5A, sizeof out);
    strided__view_assign(&out, &src);
    assert_ptr_equal(out.buffer, src.buffer);
    assert_int_equal(out.origin, -24);
    assert_true(strided_layout_equal(&out.layout, &src.layout));
    assert_int_equal(out.layout.slice_offset, 90);
    assert_int_equal(out.layout.implicit_strides, src.layout.implicit_strides);
    for (int i = 3; i < STRIDED_MAX_NDIM; i++) {
        assert_int_equal(out.layout.shape[i], untouched);
        assert_int_equal(out.layout.strides[i], untouched);
    }
    assert_true(out.has_dtype && out.readonly && out.device_accessible && !out.padded);
    assert_int_equal(out.dtype.code, STRIDED_DTYPE_FLOAT);
    assert_int_equal(out.dtype.bits, 64);
    assert_int_equal(out.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(out.device.device_id, 1);
    assert_int_equal(out.home_device, 1);
    strided_layout l;
    memset(&l, 0x5A, sizeof l);
    strided__layout_assign(&l, &src.layout);
    assert_true(strided_layout_equal(&l, &src.layout));
    assert_int_equal(l.shape[3], untouched);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_buffer),
        cmocka_unit_test(test_from_buffer_without_dtype),
        cmocka_unit_test(test_from_buffer_with_a_5_byte_itemsize),
        cmocka_unit_test(test_from_buffer_larger_buffer),
        cmocka_unit_test(test_from_buffer_too_small),
        cmocka_unit_test(test_from_buffer_too_small_by_one_byte),
        cmocka_unit_test(test_from_buffer_too_small_wrapped),
        cmocka_unit_test(test_from_buffer_size_0_wrapped_null),
        cmocka_unit_test(test_from_buffer_disallowed_negative_offset),
        cmocka_unit_test(test_from_buffer_negative_slice_offset),
        cmocka_unit_test(test_from_buffer_incompatible_dtype_and_itemsize),
        cmocka_unit_test(test_from_buffer_unsupported_dtype),
        cmocka_unit_test(test_from_buffer_null_arguments),
        cmocka_unit_test(test_from_buffer_zero_volume_on_a_size_0_buffer),
        cmocka_unit_test(test_from_buffer_zero_volume_sliced_out_of_range),
        cmocka_unit_test(test_from_buffer_overflowing_range),
        cmocka_unit_test(test_from_buffer_sliced_c),
        cmocka_unit_test(test_from_buffer_sliced_f),
        cmocka_unit_test(test_view_of_a_view_measures_from_the_buffer),
        cmocka_unit_test(test_view_keeps_everything_with_null_arguments),
        cmocka_unit_test(test_view_in_place),
        cmocka_unit_test(test_view_in_place_failure_leaves_the_view),
        cmocka_unit_test(test_view_outside_the_buffer),
        cmocka_unit_test(test_view_changes_the_dtype),
        cmocka_unit_test(test_view_of_a_released_view),
        cmocka_unit_test(test_release_twice_and_null),
        cmocka_unit_test(test_views_keep_the_memory_alive),
        cmocka_unit_test(test_buffer_device_and_view_device),
        cmocka_unit_test(test_wrap_covers_the_footprint),
        cmocka_unit_test(test_wrap_negative_strides),
        cmocka_unit_test(test_wrap_sliced_layouts),
        cmocka_unit_test(test_wrap_empty_and_borrowed),
        cmocka_unit_test(test_wrap_takes_cpu_and_cuda_devices_at_their_word),
        cmocka_unit_test(test_buffer_wrap_known),
        cmocka_unit_test(test_wrap_errors_leave_the_memory_alone),
        cmocka_unit_test(test_assign_copies_the_used_axes),
    };

    use_no_driver();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
