/*
 * test_interface.c: views of what NumPy's array interface and the CUDA
 * Array Interface describe (strided/interface.h): every rule, in its order,
 * and the release callback run exactly once whatever happens. Built twice:
 * without a driver (DRIVER_NONE: host memory, and CUDA data a device cannot
 * reach) and against the fake driver (DRIVER_FAKE: device memory, the
 * current device, the producer-consumer stream wait).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include "test_cuda.h"
#include "test_util.h"

#include "strided.h"

/* The release callback's calls, counted per context. */
typedef struct {
    int calls;
    void *ptr;
    size_t size;
} released;

static void count_release(void *context, void *ptr, size_t size)
{
    released *r = context;
    r->calls++;
    r->ptr = ptr;
    r->size = size;
}

static double host[64];

/* A 2 x 3 float64 array interface over host, C order with explicit byte
 * strides. */
static strided_interface_desc array_desc(void)
{
    static const int64_t shape[2] = {2, 3}, strides[2] = {24, 8};
    return (strided_interface_desc){.kind = STRIDED_INTERFACE_ARRAY,
                                    .version = 3,
                                    .data = host,
                                    .ndim = 2,
                                    .shape = shape,
                                    .nstrides = 2,
                                    .strides = strides,
                                    .typestr = "<f8"};
}

/* Import d (consumer may be NULL) and expect code with text in the
 * message; the release callback must have run exactly once and out must be
 * untouched. */
static void check_refused_(const strided_interface_desc *d, const strided_consumer_stream *c,
                           strided_status code, const char *op, const char *text, const char *file,
                           int line)
{
    released r = {0, NULL, 0};
    strided_view v;
    fill_sentinel(&v, sizeof v);
    strided_status status = strided_view_import_interface(d, c, count_release, &r, &v, NULL);
    check_error_(status, code, op, text, file, line);
    if (r.calls != 1)
        fail_at(file, line, "release ran %d times, expected 1\n", r.calls);
    check_untouched_(&v, sizeof v, "out", file, line);
}
#define check_refused(d, c, code, text) \
    check_refused_((d), (c), (code), "interface", (text), __FILE__, __LINE__)

static void test_header_rules(void **state)
{
    (void)state;
    assert_ok(strided_interface_check_header(STRIDED_INTERFACE_ARRAY, 3, false));
    assert_ok(strided_interface_check_header(STRIDED_INTERFACE_CUDA, 7, false));
    assert_error(strided_interface_check_header(STRIDED_INTERFACE_ARRAY, 2, false),
                 STRIDED_ERR_UNSUPPORTED, "interface",
                 "only NumPy Array Interface v3 or above is supported");
    assert_error(strided_interface_check_header(STRIDED_INTERFACE_CUDA, INT64_MIN, false),
                 STRIDED_ERR_UNSUPPORTED, "interface",
                 "only CUDA Array Interface v3 or above is supported");
    /* The version before the mask, as cuda.core checks them. */
    assert_error(strided_interface_check_header(STRIDED_INTERFACE_CUDA, 2, true),
                 STRIDED_ERR_UNSUPPORTED, "interface", "v3 or above");
    assert_error(strided_interface_check_header(STRIDED_INTERFACE_ARRAY, 3, true),
                 STRIDED_ERR_UNSUPPORTED, "interface", "mask is not supported");
    assert_error(strided_interface_check_header((strided_interface_kind)2, 3, false),
                 STRIDED_ERR_INVALID_ARGUMENT, "interface", "is not an interface");
}

static void test_array_interface_view(void **state)
{
    (void)state;
    strided_interface_desc d = array_desc();
    released r = {0, NULL, 0};
    strided_view v;
    strided_typestr t;
    assert_ok(strided_view_import_interface(&d, NULL, count_release, &r, &v, &t));
    assert_layout(v.layout, "(2,3):(3,1)", 8);
    assert_true(v.has_dtype);
    assert_true(strided_dtype_equal(v.dtype, (strided_dtype){STRIDED_DTYPE_FLOAT, 64, 1}));
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(v.home_device, -1);
    assert_false(v.device_accessible);
    assert_false(v.readonly);
    assert_ptr_equal(strided_view_ptr(&v), host);
    assert_int_equal(t.kind, 'f');
    assert_int_equal(t.itemsize, 8);
    assert_int_equal(r.calls, 0);
    strided_view_release(&v);
    assert_int_equal(r.calls, 1);
    assert_ptr_equal(r.ptr, host);
    assert_int_equal(r.size, 48);
}

static void test_array_interface_layouts(void **state)
{
    (void)state;
    /* No strides: C order; a read-only transposed view; a typestr without
     * a DLPack type keeps only its size. */
    static const int64_t shape[2] = {3, 2}, tstrides[2] = {8, 24};
    strided_interface_desc d = array_desc();
    d.nstrides = -1;
    strided_view v;
    strided_typestr t;
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, NULL));
    assert_layout_implicit(v.layout, "(2,3):(3,1)", 8);
    strided_view_release(&v);

    d = array_desc();
    d.shape = shape;
    d.strides = tstrides;
    d.readonly = true;
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, NULL));
    assert_layout(v.layout, "(3,2):(1,3)", 8);
    assert_true(v.readonly);
    strided_view_release(&v);

    d = array_desc();
    d.typestr = "|S8";
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, &t));
    assert_false(v.has_dtype);
    assert_int_equal(t.kind, 'S');
    assert_int_equal(t.itemsize, 8);
    strided_view_release(&v);

    /* An empty array may have no data. */
    static const int64_t empty[2] = {0, 3};
    d = array_desc();
    d.data = NULL;
    d.shape = empty;
    assert_ok(strided_view_import_interface(&d, NULL, NULL, NULL, &v, NULL));
    assert_int_equal(strided_layout_volume(&v.layout), 0);
    strided_view_release(&v);
}

static void test_array_interface_refusals(void **state)
{
    (void)state;
    static const int64_t odd[2] = {24, 6}, big[2] = {INT64_MAX / 4, 3}, one[1] = {8};
    strided_interface_desc d = array_desc();
    d.version = 2;
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED, "only NumPy Array Interface v3");
    d = array_desc();
    d.has_mask = true;
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED, "mask is not supported");
    d = array_desc();
    d.strides = one;
    d.nstrides = 1;
    check_refused(&d, NULL, STRIDED_ERR_INVALID_ARGUMENT,
                  "__array_interface__ has 1 strides for 2 dimensions");
    d = array_desc();
    d.ndim = 65;
    check_refused(&d, NULL, STRIDED_ERR_INVALID_ARGUMENT, "['shape'] has 65 entries");
    d = array_desc();
    d.typestr = "|O";
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED,
                  "unsupported typestr: |O holds Python object references");
    d = array_desc();
    d.typestr = "<f8";
    d.typestr_flags = STRIDED_TYPESTR_HOLDS_REFERENCES;
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED, "holds Python object references");
    d = array_desc();
    d.typestr = ">i8";
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED, "is not in the machine's byte order");
    d = array_desc();
    d.typestr = "f8";
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED,
                  "unsupported typestr: f8 is not an array-interface type string");
    d = array_desc();
    d.typestr = NULL;
    check_refused(&d, NULL, STRIDED_ERR_INVALID_ARGUMENT, "['typestr'] is required");
    d = array_desc();
    d.typestr = "|V8";
    d.descr_itemsize = 16;
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED,
                  "descr describes elements of 16 bytes, typestr |V8 of 8");
    d = array_desc();
    d.strides = odd;
    check_refused(&d, NULL, STRIDED_ERR_INVALID_ARGUMENT, "strides must be divisible by itemsize");
    d = array_desc();
    d.shape = big;
    check_refused(&d, NULL, STRIDED_ERR_OVERFLOW, NULL);
    d = array_desc();
    d.data = NULL;
    check_refused(&d, NULL, STRIDED_ERR_INVALID_ARGUMENT, "is at NULL in a layout with 6");
    /* With nothing to release, a refusal calls nothing. */
    d = array_desc();
    d.version = 1;
    strided_view v;
    assert_status(strided_view_import_interface(&d, NULL, NULL, NULL, &v, NULL),
                  STRIDED_ERR_UNSUPPORTED);
    assert_error(strided_view_import_interface(NULL, NULL, NULL, NULL, &v, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "interface", "desc and out are required");
}

/* A CUDA Array Interface of 2 x 3 float32 at data. */
static strided_interface_desc cuda_desc(void *data)
{
    static const int64_t shape[2] = {2, 3};
    return (strided_interface_desc){.kind = STRIDED_INTERFACE_CUDA,
                                    .version = 3,
                                    .data = data,
                                    .ndim = 2,
                                    .shape = shape,
                                    .nstrides = -1,
                                    .typestr = "<f4"};
}

static void test_cuda_stream_rules(void **state)
{
    (void)state;
    strided_consumer_stream sync = {true, (void *)0x1000}, none = {false, NULL};
    strided_interface_desc d = cuda_desc((void *)0x10000);
    /* The consumer must say where it uses the data. */
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED, "stream=None is ambiguous with view()");
    /* The header first. */
    d.version = 2;
    check_refused(&d, NULL, STRIDED_ERR_UNSUPPORTED, "only CUDA Array Interface v3");
    /* A producer stream of 0 (or below) breaks the protocol, when the
     * consumer orders. */
    d = cuda_desc((void *)0x10000);
    d.has_stream = true;
    d.stream = 0;
    check_refused(&d, &sync, STRIDED_ERR_PROTOCOL,
                  "__cuda_array_interface__['stream'] must be a positive stream handle, got 0");
    d.stream = -3;
    check_refused(&d, &sync, STRIDED_ERR_PROTOCOL, "got -3");
    /* A consumer that orders nothing never looks at it; the memory rules
     * come next: without a driver, or with one that does not know the
     * address, it is host memory. */
#if defined(DRIVER_FAKE)
    fake.reset(2, 0, 1);
#endif
    check_refused(&d, &none, STRIDED_ERR_UNSUPPORTED,
                  "__cuda_array_interface__['data'] 0x10000 is not memory a CUDA device can "
                  "access");
}

#if defined(DRIVER_FAKE)

static float device_memory[64];

static void add_device_range(int device)
{
    fake_cuda_range range = {(uintptr_t)device_memory,
                             sizeof device_memory,
                             2,
                             0,
                             device,
                             (uintptr_t)device_memory,
                             NULL};
    fake.add_range(&range);
}

static void test_cuda_view_of_device_memory(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    add_device_range(1);
    strided_consumer_stream consumer = {true, (void *)0x1000};
    strided_interface_desc d = cuda_desc(device_memory);
    d.has_stream = true;
    d.stream = 0x2000;
    released r = {0, NULL, 0};
    strided_view v;
    assert_ok(strided_view_import_interface(&d, &consumer, count_release, &r, &v, NULL));
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(v.home_device, 1);
    assert_true(v.device_accessible);
    assert_layout_implicit(v.layout, "(2,3):(3,1)", 4);
    /* The consumer stream waits for the producer's, on the device. */
    assert_int_equal(fake.calls("cuEventRecord"), 1);
    assert_int_equal(fake.calls("cuStreamWaitEvent"), 1);
    strided_view_release(&v);
    assert_int_equal(r.calls, 1);

    /* No ordering asked: no wait. */
    fake.reset(2, 0, 1);
    add_device_range(0);
    consumer.sync = false;
    assert_ok(strided_view_import_interface(&d, &consumer, NULL, NULL, &v, NULL));
    assert_int_equal(v.home_device, 0);
    assert_int_equal(fake.calls("cuStreamWaitEvent"), 0);
    strided_view_release(&v);
}

static void test_cuda_empty_array_is_on_the_current_device(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    fake.set_current_device(1);
    static const int64_t empty[1] = {0};
    strided_consumer_stream consumer = {false, NULL};
    strided_interface_desc d = cuda_desc(NULL);
    d.ndim = 1;
    d.shape = empty;
    strided_view v;
    assert_ok(strided_view_import_interface(&d, &consumer, NULL, NULL, &v, NULL));
    assert_int_equal(v.home_device, 1);
    assert_true(v.device_accessible);
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(v.device.device_id, 1);
    strided_view_release(&v);
}

static void test_cuda_failures_after_wrapping_release_once(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    add_device_range(0);
    strided_consumer_stream consumer = {true, (void *)0x1000};
    strided_interface_desc d = cuda_desc(device_memory);
    d.has_stream = true;
    d.stream = 0x2000;
    /* The wait fails after the memory was wrapped: the view goes, and with
     * it the one release. */
    fake.fail_next("cuStreamWaitEvent", 1);
    check_refused_(&d, &consumer, STRIDED_ERR_CUDA, "stream_wait", "cuStreamWaitEvent", __FILE__,
                   __LINE__);
}

#endif

int main(void)
{
#if defined(DRIVER_NONE)
    use_no_driver();
#else
    use_fake_driver(FAKE_CUDA_PATH, 2);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_rules),
        cmocka_unit_test(test_array_interface_view),
        cmocka_unit_test(test_array_interface_layouts),
        cmocka_unit_test(test_array_interface_refusals),
        cmocka_unit_test(test_cuda_stream_rules),
#if defined(DRIVER_FAKE)
        cmocka_unit_test(test_cuda_view_of_device_memory),
        cmocka_unit_test(test_cuda_empty_array_is_on_the_current_device),
        cmocka_unit_test(test_cuda_failures_after_wrapping_release_once),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
