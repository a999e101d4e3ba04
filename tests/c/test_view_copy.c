/*
 * Tests of strided_view_copy / strided_view_copy_ex between host memory
 * (strided/copy.h): the checks a view adds to the layouts' (released view,
 * flags, read-only destination, dtypes), results, and the temporaries of
 * overlapping copies, from the heap or from the resource given in
 * strided_copy_temporaries (one allocation of the source's dense size,
 * given back once; its failures reported, the destination untouched).
 *
 * Built with no CUDA driver (DRIVER_NONE): a stream given to a host copy
 * has nothing queued, and copies that need a device are refused.
 */
#include "test_util.h"

#include <stdlib.h>

#include "strided/buffer.h"
#include "strided/copy.h"
#include "strided/resource.h"
#include "strided/view.h"
#include "test_cuda.h"

#define OP "copy"

static const strided_dtype F32 = {STRIDED_DTYPE_FLOAT, 32, 1};
static const strided_dtype I32 = {STRIDED_DTYPE_INT, 32, 1};

/* A view of n x n float32 elements of a new host buffer, in C order,
 * transposed when transposed; elements hold base + their C index. */
static strided_view square(int64_t n, bool transposed, float base, bool readonly)
{
    strided_memory_resource *mr;
    strided_buffer *b;
    strided_layout l;
    strided_view v;
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, (size_t)(n * n) * 4, NULL, &b));
    strided_memory_resource_release(mr);
    float *p = strided_buffer_ptr(b);
    for (int64_t i = 0; i < n * n; i++)
        p[i] = base + (float)i;
    assert_ok(strided_layout_init_dense(&l, 2, I64(n, n), 4, STRIDED_ORDER_C, 0, NULL));
    if (transposed)
        assert_ok(strided_layout_permute(&l, 2, INTS(1, 0), &l));
    assert_ok(strided_view_from_buffer(b, &l, &F32, readonly, &v));
    strided_buffer_release(b);
    return v;
}

static float at(const strided_view *v, int64_t i)
{
    return ((const float *)strided_buffer_ptr(v->buffer))[i];
}

static void test_transpose_result(void **state)
{
    (void)state;
    strided_view dst = square(37, false, 0, false), src = square(37, true, 1000, false);
    assert_ok(strided_view_copy(&dst, &src, NULL, STRIDED_COPY_NO_STREAM));
    for (int64_t i = 0; i < 37; i++)
        for (int64_t j = 0; j < 37; j++)
            assert_true(at(&dst, i * 37 + j) == 1000.0f + (float)(j * 37 + i));
    /* A stream given: no driver, nothing queued, the same copy. */
    strided_view again = square(37, false, 0, false);
    assert_ok(strided_view_copy(&again, &src, (void *)1, STRIDED_COPY_BLOCKING));
    assert_memory_equal(strided_buffer_ptr(again.buffer), strided_buffer_ptr(dst.buffer),
                        37 * 37 * 4);
    strided_view_release(&again);
    strided_view_release(&dst);
    strided_view_release(&src);
}

static void untouched(const strided_view *v, float base, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        assert_true(at(v, i) == base + (float)i);
}

static void test_errors(void **state)
{
    (void)state;
    strided_view dst = square(4, false, 0, false), src = square(4, true, 100, false);
    strided_view ro = square(4, false, 0, true);
    assert_error(strided_view_copy(NULL, &src, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "dst and src are required");
    assert_error(strided_view_copy(&dst, &src, NULL,
                                   STRIDED_COPY_BLOCKING | STRIDED_COPY_NONBLOCKING),
                 STRIDED_ERR_INVALID_ARGUMENT, OP, "blocking and a non-blocking");
    assert_error(strided_view_copy(&ro, &src, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "The destination view is read-only.");
    strided_view other = src;
    other.dtype = I32;
    assert_error(strided_view_copy(&dst, &other, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "The destination and source dtypes must match. Got dst dtype:float32 "
                 "and src dtype:int32");
    strided_view wide = src;
    strided_layout_init_dense(&wide.layout, 2, I64(4, 2), 8, STRIDED_ORDER_C, 0, NULL);
    wide.has_dtype = false;
    assert_error(strided_view_copy(&dst, &wide, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "The itemsize of the destination and source layouts must match. Got dst "
                 "itemsize:4 and src itemsize:8");
    strided_view gone = square(4, false, 0, false);
    strided_view_release(&gone);
    assert_error(strided_view_copy(&dst, &gone, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "not released");
    untouched(&dst, 0, 16);
    strided_view_release(&dst);
    strided_view_release(&src);
    strided_view_release(&ro);
}

/* A host resource that counts, and can fail or hand out memory it says the
 * host cannot reach. */
typedef struct counting {
    int allocs, frees;
    size_t last_size;
    bool fail;
} counting;

static strided_status counting_allocate(void *self, size_t size, void *stream, void **out)
{
    (void)stream;
    counting *c = self;
    c->allocs++;
    c->last_size = size;
    if (c->fail)
        return strided_set_last_error(STRIDED_ERR_OUT_OF_MEMORY, "counting", "pool dry");
    *out = malloc(size);
    return *out ? STRIDED_OK : STRIDED_ERR_OUT_OF_MEMORY;
}

static void counting_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)size;
    (void)stream;
    ((counting *)self)->frees++;
    free(ptr);
}

static const strided_memory_resource_ops counting_ops = {
    .allocate = counting_allocate, .deallocate = counting_deallocate, .destroy = NULL};

static strided_memory_resource *counting_resource(counting *c, bool host_accessible)
{
    strided_memory_resource_props props = {host_accessible, !host_accessible, false,
                                           host_accessible ? -1 : 0, false};
    strided_memory_resource *mr;
    assert_ok(strided_memory_resource_create(&counting_ops, c, &props, &mr));
    return mr;
}

/* dst = the buffer's rows 1.., src = rows ..n-1 of the same buffer. */
static void shifted_rows(int64_t n, strided_view *dst, strided_view *src)
{
    strided_view whole = square(n, false, 0, false);
    strided_layout rows;
    assert_ok(strided_layout_init_dense(&rows, 2, I64(n - 1, n), 4, STRIDED_ORDER_C, 0, NULL));
    strided_layout moved = rows;
    moved.slice_offset = n; /* one row on */
    assert_ok(strided_view_view(&whole, &moved, NULL, dst));
    assert_ok(strided_view_view(&whole, &rows, NULL, src));
    strided_view_release(&whole);
}

static void check_shifted(const strided_view *dst, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        assert_true(at(dst, j) == (float)j);
    for (int64_t i = 1; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            assert_true(at(dst, i * n + j) == (float)((i - 1) * n + j));
}

static void test_overlap_temporaries(void **state)
{
    (void)state;
    const int64_t n = 9;
    strided_view dst, src;
    /* From the heap. */
    shifted_rows(n, &dst, &src);
    assert_ok(strided_view_copy_ex(&dst, &src, NULL, STRIDED_COPY_NO_STREAM, NULL));
    check_shifted(&dst, n);
    strided_view_release(&dst);
    strided_view_release(&src);
    /* From the resource given: one allocation of the source's size. */
    counting c = {0};
    strided_memory_resource *mr = counting_resource(&c, true);
    strided_copy_temporaries temps = {mr, NULL};
    shifted_rows(n, &dst, &src);
    assert_ok(strided_view_copy_ex(&dst, &src, NULL, STRIDED_COPY_NO_STREAM, &temps));
    check_shifted(&dst, n);
    assert_int_equal(c.allocs, 1);
    assert_int_equal(c.frees, 1);
    assert_int_equal(c.last_size, (size_t)((n - 1) * n * 4));
    /* A copy without overlap takes nothing from it. */
    strided_view a = square(5, false, 0, false), b = square(5, true, 7, false);
    assert_ok(strided_view_copy_ex(&a, &b, NULL, STRIDED_COPY_NO_STREAM, &temps));
    assert_int_equal(c.allocs, 1);
    strided_view_release(&a);
    strided_view_release(&b);
    strided_view_release(&dst);
    strided_view_release(&src);
    /* Its failure is reported; the destination is untouched. */
    c.fail = true;
    shifted_rows(n, &dst, &src);
    assert_error(strided_view_copy_ex(&dst, &src, NULL, STRIDED_COPY_NO_STREAM, &temps),
                 STRIDED_ERR_OUT_OF_MEMORY, "counting", "pool dry");
    untouched(&dst, 0, n * n);
    assert_int_equal(c.frees, 1);
    strided_view_release(&dst);
    strided_view_release(&src);
    strided_memory_resource_release(mr);
    /* A resource's claims about its memory are not taken at its word: this
     * one says device memory, but in a process without a CUDA driver its
     * memory is host memory (malloc's), so the copy uses it. The fake-driver
     * tests of transfers refuse memory the host really cannot reach. */
    counting d = {0};
    strided_memory_resource *dev = counting_resource(&d, false);
    temps.host = dev;
    shifted_rows(n, &dst, &src);
    assert_ok(strided_view_copy_ex(&dst, &src, NULL, STRIDED_COPY_NO_STREAM, &temps));
    assert_int_equal(d.allocs, 1);
    assert_int_equal(d.frees, 1);
    strided_view_release(&dst);
    strided_view_release(&src);
    strided_memory_resource_release(dev);
}

/* Views with slice offsets: footprints count from element 0. Rows of a
 * source at elements [0, 19) (strides (5, 1)) go to a destination at
 * [12, 28): they overlap, and row 2 reads elements row 0 has written. (A
 * test that shifted each footprint by its slice offset saw [24, 40) for the
 * destination, missed the overlap and copied without staging.) */
static void test_overlap_sliced(void **state)
{
    (void)state;
    strided_view whole = square(8, false, 0, false), dst, src;
    strided_layout r, c;
    assert_ok(strided_layout_init(&r, 2, I64(4, 4), I64(5, 1), 4));
    assert_ok(strided_layout_init_dense(&c, 2, I64(4, 4), 4, STRIDED_ORDER_C, 0, NULL));
    c.slice_offset = 12;
    assert_ok(strided_view_view(&whole, &r, NULL, &src));
    assert_ok(strided_view_view(&whole, &c, NULL, &dst));
    assert_ok(strided_view_copy(&dst, &src, NULL, STRIDED_COPY_NO_STREAM));
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 4; j++)
            assert_true(at(&whole, 12 + i * 4 + j) == (float)(5 * i + j));
    strided_view_release(&dst);
    strided_view_release(&src);
    strided_view_release(&whole);
}

static void test_empty(void **state)
{
    (void)state;
    strided_view dst = square(3, false, 0, false), src = square(3, false, 5, false);
    strided_view empty_dst = dst, empty_src = src;
    strided_layout_init_dense(&empty_dst.layout, 2, I64(0, 3), 4, STRIDED_ORDER_C, 0, NULL);
    strided_layout_init_dense(&empty_src.layout, 2, I64(0, 3), 4, STRIDED_ORDER_C, 0, NULL);
    assert_ok(strided_view_copy_ex(&empty_dst, &empty_src, NULL, 0, NULL));
    untouched(&dst, 0, 9);
    strided_view_release(&dst);
    strided_view_release(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose_result),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_overlap_temporaries),
        cmocka_unit_test(test_overlap_sliced),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
