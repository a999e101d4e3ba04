/*
 * test_stream.c: strided_stream_wait and strided_current_device, against the fake CUDA driver
 * (DRIVER_FAKE) or with no driver (DRIVER_NONE).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include "test_cuda.h"
#include "test_util.h"

#include "strided/stream.h"

#define STREAM_A ((void *)0x1000)
#define STREAM_B ((void *)0x2000)
#define LEGACY ((void *)0x1)
#define PER_THREAD ((void *)0x2)

#if defined(DRIVER_NONE)

static void test_wait_needs_a_driver(void **state)
{
    (void)state;
    assert_error(strided_stream_wait(STREAM_A, STREAM_B, 0), STRIDED_ERR_NO_CUDA_DRIVER,
                 "stream_wait", "no CUDA driver");
}

static void test_current_device_needs_a_driver(void **state)
{
    (void)state;
    int device = 42;
    assert_error(strided_current_device(&device), STRIDED_ERR_NO_CUDA_DRIVER, "current_device",
                 "no CUDA driver");
    assert_int_equal(device, 42);
}

#else

static void test_same_stream_makes_no_driver_call(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_stream_wait(STREAM_A, STREAM_A, 0));
    /* NULL and 1 both name the legacy default stream. */
    assert_ok(strided_stream_wait(NULL, LEGACY, 0));
    assert_ok(strided_stream_wait(LEGACY, NULL, 0));
    assert_int_equal(fake.calls("cuEventCreate"), 0);
    assert_int_equal(fake.calls("cuStreamWaitEvent"), 0);
}

static void test_consumer_waits_on_an_event_of_the_producer(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_stream_wait(STREAM_A, STREAM_B, 1));
    assert_int_equal(fake.calls("cuEventCreate"), 1);
    assert_int_equal(fake.calls("cuEventRecord"), 1);
    assert_int_equal(fake.calls("cuStreamWaitEvent"), 1);
    assert_int_equal(fake.calls("cuEventDestroy"), 1);
    assert_ptr_equal(fake.last_stream("cuEventRecord"), STREAM_B);
    assert_ptr_equal(fake.last_stream("cuStreamWaitEvent"), STREAM_A);
    assert_int_equal(fake.live_events(), 0);
    /* The host never waited. */
    assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
    /* The caller's (absent) context is back. */
    assert_null(fake.current_context());
}

static void test_default_streams_are_ordered_too(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_stream_wait(PER_THREAD, NULL, 0));
    assert_ptr_equal(fake.last_stream("cuEventRecord"), NULL);
    assert_ptr_equal(fake.last_stream("cuStreamWaitEvent"), PER_THREAD);
    assert_int_equal(fake.live_events(), 0);
}

static void test_failing_record_destroys_the_event(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    fake.fail_next("cuEventRecord", 400); /* CUDA_ERROR_INVALID_HANDLE */
    assert_error(strided_stream_wait(STREAM_A, STREAM_B, 0), STRIDED_ERR_CUDA, "stream_wait",
                 "cuEventRecord failed");
    assert_int_equal(strided_last_cuda_error(), 400);
    assert_int_equal(fake.calls("cuStreamWaitEvent"), 0);
    assert_int_equal(fake.live_events(), 0);
    assert_null(fake.current_context());
}

static void test_failing_wait_destroys_the_event(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    fake.fail_next("cuStreamWaitEvent", 400);
    assert_error(strided_stream_wait(STREAM_A, STREAM_B, 0), STRIDED_ERR_CUDA, "stream_wait",
                 "cuStreamWaitEvent failed");
    assert_int_equal(fake.live_events(), 0);
}

static void test_failing_create_leaves_nothing(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    fake.fail_next("cuEventCreate", 2); /* CUDA_ERROR_OUT_OF_MEMORY */
    assert_error(strided_stream_wait(STREAM_A, STREAM_B, 0), STRIDED_ERR_CUDA, "stream_wait",
                 "cuEventCreate failed");
    assert_int_equal(fake.calls("cuEventDestroy"), 0);
    assert_int_equal(fake.live_events(), 0);
}

static void test_unknown_device(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    assert_error(strided_stream_wait(STREAM_A, STREAM_B, 7), STRIDED_ERR_INVALID_ARGUMENT,
                 "stream_wait", "device 7 does not exist");
    assert_int_equal(fake.calls("cuEventCreate"), 0);
}

static void test_current_device_is_the_current_contexts(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    int device = -5;
    fake.set_current_device(1);
    assert_ok(strided_current_device(&device));
    assert_int_equal(device, 1);
    fake.set_current_device(0);
    assert_ok(strided_current_device(&device));
    assert_int_equal(device, 0);
    fake.set_current_device(-1);
}

static void test_current_device_without_a_context_is_0(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    fake.set_current_device(-1);
    int device = -5;
    assert_ok(strided_current_device(&device));
    assert_int_equal(device, 0);
    /* Asking creates no context. */
    assert_null(fake.current_context());
}

static void test_current_device_failures(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    int device = -5;
    fake.fail_next("cuCtxGetCurrent", 201); /* CUDA_ERROR_INVALID_CONTEXT */
    assert_error(strided_current_device(&device), STRIDED_ERR_CUDA, "current_device",
                 "cuCtxGetCurrent failed");
    assert_int_equal(device, -5);
    fake.set_current_device(1);
    fake.fail_next("cuCtxGetDevice", 201);
    assert_error(strided_current_device(&device), STRIDED_ERR_CUDA, "current_device",
                 "cuCtxGetDevice failed");
    assert_int_equal(device, -5);
    assert_error(strided_current_device(NULL), STRIDED_ERR_INVALID_ARGUMENT, "current_device",
                 "out is required");
    fake.set_current_device(-1);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_wait_needs_a_driver),
        cmocka_unit_test(test_current_device_needs_a_driver),
#else
        cmocka_unit_test(test_same_stream_makes_no_driver_call),
        cmocka_unit_test(test_consumer_waits_on_an_event_of_the_producer),
        cmocka_unit_test(test_default_streams_are_ordered_too),
        cmocka_unit_test(test_failing_record_destroys_the_event),
        cmocka_unit_test(test_failing_wait_destroys_the_event),
        cmocka_unit_test(test_failing_create_leaves_nothing),
        cmocka_unit_test(test_unknown_device),
        cmocka_unit_test(test_current_device_is_the_current_contexts),
        cmocka_unit_test(test_current_device_without_a_context_is_0),
        cmocka_unit_test(test_current_device_failures),
#endif
    };
#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
