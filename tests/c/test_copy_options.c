/*
 * Tests of copies with options (strided/buffer.h: strided_buffer_copy_ex,
 * strided_buffer_copy_check_stream, strided_buffer_copy_options_default),
 * cuda.core's CopyOptions for Buffer.copy_to and copy_from.
 *
 * Built three times: DRIVER_NONE (host copies honour every option; the
 * values and the stream rules are checked before the driver), DRIVER_FAKE
 * (a CUDA 13.0 driver, without cuMemcpyWithAttributesAsync: the copy is
 * cuMemcpyAsync, and DURING_API_CALL is refused) and DRIVER_FAKE_13020 (a
 * CUDA 13.2 driver: the copy is cuMemcpyWithAttributesAsync with the
 * options, except between two devices).
 */
#include "test_memory.h"

#include "cuda/driver.h"
#include "test_cuda.h"

#define STREAM ((void *)0x5a)
#define LEGACY ((void *)0x1)
#define PER_THREAD ((void *)0x2)

static const char legacy_refusal[] =
    "does not accept LEGACY_DEFAULT_STREAM with options (matches copy_batch); "
    "cuMemcpyWithAttributesAsync rejects it outright, unlike PER_THREAD_DEFAULT_STREAM, which "
    "is a real stream to the driver and is accepted. Pass an explicit stream, "
    "PER_THREAD_DEFAULT_STREAM, or options=None.";

/* cuda.core's refusal of DURING_API_CALL where a copy cannot honour it,
 * after what it requires. */
#define DURING_API_CALL_REFUSAL(requirement)                                                     \
    "src_access_order=DURING_API_CALL requires " requirement ". A plain cuMemcpyAsync fallback " \
    "reads the source in stream order only, which would silently violate the guarantee that "    \
    "all source reads complete before the call returns, letting the caller reuse the source "    \
    "buffer before the real (stream-ordered) read happens. Use src_access_order=STREAM or ANY, " \
    "or omit options, if that works for your use case."

static strided_buffer_copy_options with_order(strided_copy_src_access_order order)
{
    strided_buffer_copy_options o = strided_buffer_copy_options_default();
    o.src_access_order = order;
    return o;
}

static strided_buffer *borrow(void *p, size_t size)
{
    strided_buffer *b = NULL;
    assert_ok(strided_buffer_wrap(p, size, NULL, NULL, &b));
    return b;
}

static void test_default_options(void **state)
{
    (void)state;
    strided_buffer_copy_options o = strided_buffer_copy_options_default();
    assert_int_equal(o.src_access_order, STRIDED_COPY_SRC_ACCESS_STREAM);
    assert_int_equal(o.src_location_hint.type, STRIDED_LOCATION_NONE);
    assert_int_equal(o.dst_location_hint.type, STRIDED_LOCATION_NONE);
    assert_int_equal(o.overlap_mode, STRIDED_COPY_OVERLAP_DEFAULT);
}

/* The host copies host-only memory whatever the options say: it is done
 * when the call returns, which honours every one of them. */
static void test_host_copy_honours_every_option(void **state)
{
    unsigned char a[16], b[16];
    strided_buffer *src = borrow(a, sizeof a), *dst = borrow(b, sizeof b);
    const strided_copy_src_access_order orders[] = {STRIDED_COPY_SRC_ACCESS_STREAM,
                                                    STRIDED_COPY_SRC_ACCESS_DURING_API_CALL,
                                                    STRIDED_COPY_SRC_ACCESS_ANY};

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(orders); i++) {
        memset(a, (int)i + 1, sizeof a);
        strided_buffer_copy_options o = with_order(orders[i]);
        o.dst_location_hint = (strided_memory_location){STRIDED_LOCATION_HOST_NUMA, 1};
        o.overlap_mode = STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE;
        assert_ok(strided_buffer_copy_ex(dst, src, NULL, STRIDED_BUFFER_NO_STREAM, &o));
        assert_memory_equal(a, b, sizeof a);
    }
    assert_ok(strided_buffer_copy_check_stream(dst, src, NULL));
    assert_ok(strided_buffer_copy_check_stream(dst, src, LEGACY));
    strided_buffer_release(src);
    strided_buffer_release(dst);
}

/* Values that are none of their kind are refused for every copy, before
 * anything is written. */
static void test_option_values(void **state)
{
    unsigned char a[8], b[8];
    strided_buffer *src = borrow(a, sizeof a), *dst = borrow(b, sizeof b);

    (void)state;
    fill_sentinel(b, sizeof b);
    strided_buffer_copy_options o = with_order((strided_copy_src_access_order)0);
    assert_error(strided_buffer_copy_ex(dst, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "unknown src_access_order 0 (a strided_copy_src_access_order)");
    o = with_order((strided_copy_src_access_order)4);
    assert_error(strided_buffer_copy_ex(dst, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "unknown src_access_order 4 (a strided_copy_src_access_order)");
    o = strided_buffer_copy_options_default();
    o.overlap_mode = (strided_copy_overlap_mode)2;
    assert_error(strided_buffer_copy_ex(dst, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "unknown overlap_mode 2 (a strided_copy_overlap_mode)");
    o = strided_buffer_copy_options_default();
    o.src_location_hint = (strided_memory_location){(strided_memory_location_type)7, 0};
    assert_error(strided_buffer_copy_ex(dst, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "unknown location type 7");
    o = strided_buffer_copy_options_default();
    o.dst_location_hint = (strided_memory_location){STRIDED_LOCATION_DEVICE, -3};
    assert_error(strided_buffer_copy_ex(dst, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "a device location needs a device ordinal (>= 0), got -3");
    assert_untouched(b, sizeof b);
    /* The checks of every copy come first. */
    strided_buffer *small = borrow(b, 4);
    assert_error(strided_buffer_copy_ex(small, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "buffer sizes mismatch between src and dst (sizes are: src=8, dst=4)");
    assert_error(strided_buffer_copy_ex(NULL, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "dst and src are required");
    assert_error(strided_buffer_copy_check_stream(dst, NULL, STREAM), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "dst and src are required");
    strided_buffer_release(small);
    strided_buffer_release(src);
    strided_buffer_release(dst);
}

/* Device memory, as a resource claims it: the legacy default stream is
 * refused before the driver is asked anything. */
static void test_legacy_stream_is_refused(void **state)
{
    static const strided_memory_resource_props device_props = {false, true, false, 0, false};
    counting c, d;
    strided_buffer *src = claimed(&c, device_props, 64), *dst = claimed(&d, device_props, 64);
    strided_buffer *empty_src = claimed(&c, device_props, 0);
    strided_buffer *empty_dst = claimed(&d, device_props, 0);
    strided_buffer_copy_options o = strided_buffer_copy_options_default();

    (void)state;
    assert_error(strided_buffer_copy_ex(dst, src, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", legacy_refusal);
    assert_error(strided_buffer_copy_ex(dst, src, LEGACY, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", legacy_refusal);
    /* Whatever the size. */
    assert_error(strided_buffer_copy_ex(empty_dst, empty_src, LEGACY, 0, &o),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy", legacy_refusal);
    assert_error(strided_buffer_copy_check_stream(dst, src, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", legacy_refusal);
    /* Without options the legacy default stream is any other. */
#if defined(DRIVER_NONE)
    assert_status(strided_buffer_copy_ex(dst, src, NULL, 0, NULL), STRIDED_ERR_NO_CUDA_DRIVER);
    assert_status(strided_buffer_copy_ex(dst, src, STREAM, 0, &o), STRIDED_ERR_NO_CUDA_DRIVER);
    assert_status(strided_buffer_copy_check_stream(dst, src, PER_THREAD),
                  STRIDED_ERR_NO_CUDA_DRIVER);
#endif
    strided_buffer_release(src);
    strided_buffer_release(dst);
    strided_buffer_release(empty_src);
    strided_buffer_release(empty_dst);
}

#if !defined(DRIVER_NONE)

/* Two buffers of size bytes of device memory of the given devices, from
 * their current pools, the source filled with value. */
typedef struct pair {
    strided_buffer *src, *dst;
} pair;

static pair device_pair(int src_device, int dst_device, size_t size, unsigned char value)
{
    strided_memory_resource *a = NULL, *b = NULL;
    pair p = {NULL, NULL};
    assert_ok(strided_device_resource_create(src_device, &a));
    assert_ok(strided_device_resource_create(dst_device, &b));
    assert_ok(strided_buffer_alloc(a, size, NULL, &p.src));
    assert_ok(strided_buffer_alloc(b, size, NULL, &p.dst));
    strided_memory_resource_release(a);
    strided_memory_resource_release(b);
    memset(strided_buffer_ptr(p.src), value, size);
    memset(strided_buffer_ptr(p.dst), 0, size);
    return p;
}

static void release_pair(pair p)
{
    strided_buffer_release(p.src);
    strided_buffer_release(p.dst);
}

static fake_cuda_memop last(void)
{
    fake_cuda_memop m;
    assert_true(fake.last_memop(&m));
    return m;
}

static void reset(void)
{
    fake.reset(2, 0, 1);
    fake.move_bytes(1);
}

/* The stream rules: a capturing stream is refused, the per-thread default
 * stream taken; nothing is copied when refused. */
static void test_stream_rules(void **state)
{
    (void)state;
    reset();
    pair p = device_pair(0, 0, 64, 3);
    strided_buffer_copy_options o = with_order(STRIDED_COPY_SRC_ACCESS_ANY);
    fake.set_capturing(STREAM, 1);
    assert_error(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy",
                 "does not support graph capture with options (matches copy_batch); the driver "
                 "has no graph-node form of cuMemcpyWithAttributesAsync, so options cannot be "
                 "honored in a graph. Use GraphNode.memcpy for a plain (non-attributed) copy "
                 "node, or pass options=None.");
    assert_status(strided_buffer_copy_check_stream(p.dst, p.src, STREAM),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_ptr_equal(fake.last_stream("cuStreamIsCapturing"), STREAM);
    assert_int_equal(((unsigned char *)strided_buffer_ptr(p.dst))[0], 0);
    assert_null(fake.current_context());
    /* Without options, capturing is the caller's business. */
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, NULL));
    fake.set_capturing(STREAM, 0);
    assert_ok(strided_buffer_copy_check_stream(p.dst, p.src, STREAM));
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, PER_THREAD, 0, &o));
    assert_ptr_equal(last().stream, PER_THREAD);
    assert_int_equal(((unsigned char *)strided_buffer_ptr(p.dst))[63], 3);
    /* A hint's device must exist. */
    o.src_location_hint = (strided_memory_location){STRIDED_LOCATION_DEVICE, 2};
    assert_error(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "device 2 does not exist; there are 2 CUDA devices");
    fake.fail_next("cuStreamIsCapturing", CUDA_ERROR_INVALID_HANDLE);
    o = strided_buffer_copy_options_default();
    assert_error(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o), STRIDED_ERR_CUDA, "copy",
                 "cuStreamIsCapturing failed: CUDA_ERROR_INVALID_HANDLE (invalid resource "
                 "handle)");
    release_pair(p);
}

#if defined(DRIVER_FAKE)

/* A CUDA 13.0 driver: the options are checked and the copy is the plain
 * one; DURING_API_CALL cannot be honoured. */
static void test_fallback(void **state)
{
    (void)state;
    reset();
    pair p = device_pair(0, 0, 128, 9);
    strided_buffer_copy_options o = with_order(STRIDED_COPY_SRC_ACCESS_ANY);
    o.dst_location_hint = (strided_memory_location){STRIDED_LOCATION_DEVICE, 1};
    o.overlap_mode = STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE;
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o));
    assert_string_equal(last().function, "cuMemcpyAsync");
    assert_int_equal(((unsigned char *)strided_buffer_ptr(p.dst))[127], 9);
    o = with_order(STRIDED_COPY_SRC_ACCESS_DURING_API_CALL);
    long copies = fake.calls("cuMemcpyAsync");
    assert_error(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o), STRIDED_ERR_UNSUPPORTED,
                 "copy",
                 DURING_API_CALL_REFUSAL("a driver that reports CUDA 13.2 or newer "
                                         "(cuMemcpyWithAttributesAsync is unavailable here)"));
    assert_int_equal(fake.calls("cuMemcpyAsync"), copies);
    release_pair(p);
    /* Between devices too. */
    p = device_pair(1, 0, 64, 4);
    o = with_order(STRIDED_COPY_SRC_ACCESS_STREAM);
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o));
    assert_int_equal(((unsigned char *)strided_buffer_ptr(p.dst))[0], 4);
    release_pair(p);
}

#else

/* A CUDA 13.2 driver: the copy carries the options. */
static void test_copy_with_attributes(void **state)
{
    (void)state;
    reset();
    pair p = device_pair(1, 1, 256, 5);
    strided_buffer_copy_options o = with_order(STRIDED_COPY_SRC_ACCESS_DURING_API_CALL);
    o.src_location_hint = (strided_memory_location){STRIDED_LOCATION_DEVICE, 0};
    o.dst_location_hint = (strided_memory_location){STRIDED_LOCATION_HOST_NUMA_CURRENT, -1};
    o.overlap_mode = STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE;
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o));
    fake_cuda_memop m = last();
    assert_string_equal(m.function, "cuMemcpyWithAttributesAsync");
    assert_int_equal(m.count, 256);
    assert_int_equal(m.device, 1);
    assert_ptr_equal(m.stream, STREAM);
    fake_cuda_copy_attributes a;
    assert_true(fake.last_copy_attributes(&a));
    assert_int_equal(a.src_access_order, CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL);
    assert_int_equal(a.src_hint_type, CU_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(a.src_hint_id, 0);
    assert_int_equal(a.dst_hint_type, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
    assert_int_equal(a.flags, CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE);
    assert_int_equal(((unsigned char *)strided_buffer_ptr(p.dst))[255], 5);
    /* No hint: a location of type INVALID. */
    o = with_order(STRIDED_COPY_SRC_ACCESS_STREAM);
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o));
    assert_true(fake.last_copy_attributes(&a));
    assert_int_equal(a.src_access_order, CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    assert_int_equal(a.src_hint_type, CU_MEM_LOCATION_TYPE_INVALID);
    assert_int_equal(a.flags, CU_MEMCPY_FLAG_DEFAULT);
    /* Without options: the plain copy. */
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, NULL));
    assert_string_equal(last().function, "cuMemcpyAsync");
    fake.fail_next("cuMemcpyWithAttributesAsync", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o), STRIDED_ERR_CUDA, "copy",
                 "cuMemcpyWithAttributesAsync failed: CUDA_ERROR_INVALID_VALUE (invalid "
                 "argument)");
    assert_null(fake.current_context());
    release_pair(p);
}

/* Between two devices the copy is cuMemcpyPeerAsync, which takes no
 * options. */
static void test_between_devices(void **state)
{
    (void)state;
    reset();
    pair p = device_pair(0, 1, 64, 6);
    strided_buffer_copy_options o = with_order(STRIDED_COPY_SRC_ACCESS_ANY);
    long peer = fake.calls("cuMemcpyPeerAsync");
    assert_ok(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o));
    assert_int_equal(fake.calls("cuMemcpyPeerAsync") - peer, 1);
    assert_int_equal(((unsigned char *)strided_buffer_ptr(p.dst))[0], 6);
    o = with_order(STRIDED_COPY_SRC_ACCESS_DURING_API_CALL);
    assert_error(strided_buffer_copy_ex(p.dst, p.src, STREAM, 0, &o), STRIDED_ERR_UNSUPPORTED,
                 "copy",
                 DURING_API_CALL_REFUSAL("a copy cuMemcpyWithAttributesAsync makes (between "
                                         "the memory of two devices strided copies with "
                                         "cuMemcpyPeerAsync, which takes no options)"));
    assert_int_equal(fake.calls("cuMemcpyPeerAsync") - peer, 1);
    release_pair(p);
}

#endif
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_options),
        cmocka_unit_test(test_host_copy_honours_every_option),
        cmocka_unit_test(test_option_values),
        cmocka_unit_test(test_legacy_stream_is_refused),
#if !defined(DRIVER_NONE)
        cmocka_unit_test(test_stream_rules),
#endif
#if defined(DRIVER_FAKE)
        cmocka_unit_test(test_fallback),
#elif defined(DRIVER_FAKE_13020)
        cmocka_unit_test(test_copy_with_attributes),
        cmocka_unit_test(test_between_devices),
#endif
    };

#if defined(DRIVER_NONE)
    use_no_driver();
#else
#if defined(DRIVER_FAKE_13020)
    setenv("FAKE_CUDA_DRIVER_VERSION", "13020", 1);
#elif !defined(DRIVER_FAKE)
#error "define one DRIVER_ scenario"
#endif
    use_fake_driver(FAKE_CUDA_PATH, 2);
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
