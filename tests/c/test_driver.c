/*
 * Tests of cuda/driver.h: loading the CUDA driver at run time, error
 * messages of failed driver calls, and primary-context scopes.
 *
 * The driver is loaded once per process, so this file is built into one
 * executable per situation, chosen by a macro:
 *   DRIVER_NONE       no driver at all (STRIDED_CUDA_DRIVER names no file)
 *   DRIVER_NOT_CUDA   a shared library that is not a CUDA driver
 *   DRIVER_FAKE       the fake driver (tests/c/fake_cuda.c), two devices
 *   DRIVER_FAKE_V1    the fake with only the CUDA 11 cuGetProcAddress
 *   DRIVER_OLD        the fake claiming to be a CUDA 11.8 driver
 *   DRIVER_HIDDEN     the fake without cuMemFreeAsync
 *   DRIVER_INIT_FAILS the fake whose cuInit fails
 */
#include "test_util.h"

#include <stdatomic.h>

#include "cuda/driver.h"
#include "base/base.h"
#include "strided/buffer.h"
#include "test_cuda.h"

#define THREADS 8

/* The reason part of the message, copied: the next failure overwrites it. */
static void copy_reason(char *buf, size_t size)
{
    snprintf(buf, size, "%s", strided_last_error_reason());
}

/* Load the driver, which must succeed. */
static __attribute__((unused)) const strided__driver *driver_ok(void)
{
    const strided__driver *cu = NULL;
    assert_ok(strided__cuda("test", &cu));
    assert_non_null(cu);
    return cu;
}

/* What a thread got from strided__cuda. */
typedef struct load_result {
    strided_status status;
    const strided__driver *cu;
    char reason[512];
    char message[600];
    int cuda_error;
} load_result;

static void *load_on_thread(void *arg)
{
    load_result *r = arg;
    r->cu = NULL;
    r->status = strided__cuda("thread", &r->cu);
    snprintf(r->reason, sizeof r->reason, "%s", strided_last_error_reason());
    snprintf(r->message, sizeof r->message, "%s", strided_last_error());
    r->cuda_error = strided_last_cuda_error();
    return NULL;
}

/* Load from THREADS threads at once (the first use, when this runs first);
 * every thread must get the same answer. */
static __attribute__((unused)) void load_from_threads(load_result *results)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, load_on_thread, &results[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 1; i < THREADS; i++) {
        assert_status(results[i].status, results[0].status);
        assert_ptr_equal(results[i].cu, results[0].cu);
        assert_string_equal(results[i].reason, results[0].reason);
        assert_int_equal(results[i].cuda_error, results[0].cuda_error);
    }
}

/* A failed load: the status, a message "op: <reason>" whose reason contains
 * text, out untouched, the CUDA error (0 when none), and the same answer on
 * every later call, on any thread. */
static __attribute__((unused)) void check_load_fails(strided_status code, const char *text,
                                                     int cuda_error)
{
    const strided__driver *sentinel = (const strided__driver *)&sentinel;
    const strided__driver *cu = sentinel;
    char first[512];
    load_result other;

    assert_error(strided__cuda("probe", &cu), code, "probe", text);
    assert_ptr_equal(cu, sentinel);
    assert_int_equal(strided_last_cuda_error(), cuda_error);
    assert_true(strncmp(strided_last_error(), "probe: ", 7) == 0);
    copy_reason(first, sizeof first);

    assert_error(strided__cuda("again", &cu), code, "again", text);
    assert_string_equal(strided_last_error_reason(), first);
    assert_int_equal(strided_last_cuda_error(), cuda_error);
    assert_ptr_equal(cu, sentinel);

    run_on_thread(load_on_thread, &other);
    assert_status(other.status, code);
    assert_null(other.cu);
    assert_string_equal(other.reason, first);
    assert_true(strncmp(other.message, "thread: ", 8) == 0);
    assert_int_equal(other.cuda_error, cuda_error);
    assert_false(strided__cuda_loaded());
}

#if defined(DRIVER_NONE) || defined(DRIVER_NOT_CUDA) || defined(DRIVER_OLD) || \
    defined(DRIVER_HIDDEN) || defined(DRIVER_INIT_FAILS)

static void test_not_loaded_before_first_use(void **state)
{
    (void)state;
    assert_false(strided__cuda_loaded());
}

static void test_first_use_from_many_threads_agrees(void **state)
{
    load_result results[THREADS];
    (void)state;
    load_from_threads(results);
    assert_int_not_equal(results[0].status, STRIDED_OK);
    assert_null(results[0].cu);
    assert_false(strided__cuda_loaded());
}

/* Host memory is still classified, as plain host memory, whatever went
 * wrong with the driver; and the classification does not fail. */
static void test_host_memory_is_host_without_a_usable_driver(void **state)
{
    int local = 0;
    void *heap = calloc(1, 16);
    strided_memory_info info;

    (void)state;
    assert_non_null(heap);
    assert_ok(strided_memory_info_query(heap, &info));
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(info.device_id, -1);
    assert_true(info.host_accessible);
    assert_false(info.device_accessible);
    assert_false(info.managed);
    assert_ok(strided_memory_info_query(&local, &info));
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_ok(strided_memory_info_query(NULL, &info));
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(info.device_id, -1);
    free(heap);
}
#endif

#if defined(DRIVER_NONE)

static void test_no_driver_is_reported_with_dlopen_reason(void **state)
{
    (void)state;
    check_load_fails(STRIDED_ERR_NO_CUDA_DRIVER, "no CUDA driver: " NO_DRIVER_PATH, 0);
    /* dlopen's own words follow. */
    assert_non_null(strstr(strided_last_error_reason(), "No such file or directory"));
}

/* Without a driver no call can name a CUDA error: the number stands in. */
static void test_cuda_fail_without_driver_names_the_number(void **state)
{
    (void)state;
    assert_status(strided__cuda_fail("free", "cuMemFree", CUDA_ERROR_OUT_OF_MEMORY),
                  STRIDED_ERR_CUDA);
    assert_string_equal(strided_last_error(), "free: cuMemFree failed: CUDA error 2");
    assert_int_equal(strided_last_cuda_error(), 2);
}

static void test_cuda_check_success_is_ok(void **state)
{
    (void)state;
    assert_ok(strided__cuda_check("op", "cuMemFree(p)", CUDA_SUCCESS));
}

#elif defined(DRIVER_NOT_CUDA)

static void test_a_library_without_cuGetProcAddress_is_no_driver(void **state)
{
    (void)state;
    check_load_fails(STRIDED_ERR_NO_CUDA_DRIVER, "no cuGetProcAddress", 0);
    assert_true(strncmp(strided_last_error_reason(), "no CUDA driver: ", 16) == 0);
}

#elif defined(DRIVER_OLD)

static void test_an_old_driver_is_no_driver(void **state)
{
    (void)state;
    check_load_fails(STRIDED_ERR_NO_CUDA_DRIVER, "supports CUDA 11.8; strided needs 12.0 or later",
                     0);
    assert_true(strncmp(strided_last_error_reason(), "no CUDA driver: ", 16) == 0);
    assert_int_equal(fake.calls("cuInit"), 0);
}

#elif defined(DRIVER_HIDDEN)

static void test_a_missing_entry_point_is_a_cuda_error(void **state)
{
    (void)state;
    check_load_fails(STRIDED_ERR_CUDA, "cuMemFreeAsync", CUDA_ERROR_NOT_FOUND);
    assert_int_equal(fake.calls("cuInit"), 0);
}

#elif defined(DRIVER_INIT_FAILS)

static void test_cuInit_failure_is_a_cuda_error(void **state)
{
    (void)state;
    check_load_fails(STRIDED_ERR_CUDA,
                     "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable "
                     "device is detected)",
                     CUDA_ERROR_NO_DEVICE);
    assert_string_equal(strided_last_error_reason(),
                        "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable "
                        "device is detected)");
    /* Tried once, never again. */
    assert_int_equal(fake.calls("cuInit"), 1);
}

#elif defined(DRIVER_FAKE_V1)

static void test_v1_lookup_resolves_every_entry_point(void **state)
{
    const strided__driver *cu;
    int n = 0;

    (void)state;
    cu = driver_ok();
    assert_true(strided__cuda_loaded());
    assert_true(fake.calls("cuGetProcAddress") > 0);
    assert_int_equal(fake.calls("cuInit"), 1);
    assert_int_equal(cu->version, 13000);
    assert_non_null(cu->cuMemFreeAsync);
    assert_int_equal(cu->cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 1);
}

#elif defined(DRIVER_FAKE)

static void test_loads_once_from_many_threads(void **state)
{
    load_result results[THREADS];

    (void)state;
    assert_false(strided__cuda_loaded());
    load_from_threads(results);
    assert_ok(results[0].status);
    assert_non_null(results[0].cu);
    assert_true(strided__cuda_loaded());
    assert_int_equal(fake.calls("cuInit"), 1);
    assert_ptr_equal(driver_ok(), results[0].cu);
    assert_int_equal(fake.calls("cuInit"), 1);
}

static void test_resolves_every_entry_point(void **state)
{
    const strided__driver *cu;
    int n = 0;

    (void)state;
    cu = driver_ok();
    assert_int_equal(cu->version, 13000);
#define RESOLVED(name) assert_non_null(cu->name)
    RESOLVED(cuGetErrorName);
    RESOLVED(cuGetErrorString);
    RESOLVED(cuDeviceGetCount);
    RESOLVED(cuDeviceGet);
    RESOLVED(cuDeviceGetAttribute);
    RESOLVED(cuDevicePrimaryCtxRetain);
    RESOLVED(cuCtxGetCurrent);
    RESOLVED(cuCtxSetCurrent);
    RESOLVED(cuCtxGetDevice);
    RESOLVED(cuPointerGetAttributes);
    RESOLVED(cuStreamSynchronize);
    RESOLVED(cuMemHostAlloc);
    RESOLVED(cuMemFreeHost);
    RESOLVED(cuMemAllocManaged);
    RESOLVED(cuMemFree);
    RESOLVED(cuDeviceGetMemPool);
    RESOLVED(cuMemPoolSetAttribute);
    RESOLVED(cuMemAllocFromPoolAsync);
    RESOLVED(cuMemFreeAsync);
#undef RESOLVED
    /* They are the fake's: it counts the call and knows the device count. */
    fake.reset(2, 0, 1);
    assert_int_equal(cu->cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(fake.calls("cuDeviceGetCount"), 1);
}

static void test_failed_call_names_call_error_and_text(void **state)
{
    const strided__driver *cu = driver_ok();
    int n = -7;

    (void)state;
    fake.reset(2, 0, 1);
    fake.fail_next("cuDeviceGetCount", CUDA_ERROR_OUT_OF_MEMORY);
    assert_status(STRIDED_CUDA_CHECK("count", cu->cuDeviceGetCount(&n)), STRIDED_ERR_CUDA);
    assert_string_equal(strided_last_error(),
                        "count: cuDeviceGetCount failed: CUDA_ERROR_OUT_OF_MEMORY "
                        "(out of memory)");
    assert_string_equal(strided_last_error_reason(),
                        "cuDeviceGetCount failed: CUDA_ERROR_OUT_OF_MEMORY "
                        "(out of memory)");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(n, -7);
}

static void test_cuda_fail_with_a_bare_name(void **state)
{
    (void)state;
    driver_ok();
    assert_status(strided__cuda_fail("alloc", "cuMemAllocFromPoolAsync", CUDA_ERROR_OUT_OF_MEMORY),
                  STRIDED_ERR_CUDA);
    assert_string_equal(strided_last_error(), "alloc: cuMemAllocFromPoolAsync failed: "
                                              "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    assert_int_equal(strided_last_cuda_error(), 2);
}

static void test_cuda_fail_of_an_unknown_code(void **state)
{
    (void)state;
    driver_ok();
    assert_status(strided__cuda_fail("op", "cuMemFree", (CUresult)12345), STRIDED_ERR_CUDA);
    assert_string_equal(strided_last_error(), "op: cuMemFree failed: CUDA error 12345");
    assert_int_equal(strided_last_cuda_error(), 12345);
}

static void test_cuda_check_success_leaves_the_message(void **state)
{
    const strided__driver *cu = driver_ok();
    int n = 0;

    (void)state;
    fake.reset(2, 0, 1);
    assert_status(strided__cuda_fail("before", "cuMemFree", CUDA_ERROR_INVALID_VALUE),
                  STRIDED_ERR_CUDA);
    assert_ok(STRIDED_CUDA_CHECK("count", cu->cuDeviceGetCount(&n)));
    assert_int_equal(n, 2);
    assert_string_equal(strided_last_error(), "before: cuMemFree failed: CUDA_ERROR_INVALID_VALUE "
                                              "(invalid argument)");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_INVALID_VALUE);
}

static void test_later_failure_clears_the_cuda_error(void **state)
{
    strided_memory_resource *mr = NULL;

    (void)state;
    driver_ok();
    strided__cuda_fail("op", "cuMemFree", CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(strided_last_cuda_error(), 1);
    assert_status(strided_host_resource_create(3, &mr), STRIDED_ERR_INVALID_ARGUMENT);
    assert_int_equal(strided_last_cuda_error(), 0);
}

static void *cuda_error_on_thread(void *arg)
{
    int *seen = arg;
    seen[0] = strided_last_cuda_error();
    strided__cuda_fail("thread", "cuMemFree", CUDA_ERROR_UNKNOWN);
    seen[1] = strided_last_cuda_error();
    return NULL;
}

static void test_cuda_error_is_per_thread(void **state)
{
    int seen[2] = {-1, -1};

    (void)state;
    driver_ok();
    strided__cuda_fail("main", "cuMemFree", CUDA_ERROR_OUT_OF_MEMORY);
    run_on_thread(cuda_error_on_thread, seen);
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], CUDA_ERROR_UNKNOWN);
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_OUT_OF_MEMORY);
    assert_true(strncmp(strided_last_error(), "main: ", 6) == 0);
}

static CUcontext primary_of(const strided__driver *cu, int device)
{
    CUcontext ctx = NULL;
    assert_int_equal(cu->cuDevicePrimaryCtxRetain(&ctx, device), CUDA_SUCCESS);
    return ctx;
}

static void set_current(const strided__driver *cu, CUcontext ctx)
{
    assert_int_equal(cu->cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

typedef struct race {
    const strided__driver *cu;
    atomic_int go;
    atomic_int failures;
} race;

static void *enter_device_1(void *arg)
{
    race *r = arg;
    while (!atomic_load(&r->go))
        ;
    for (int i = 0; i < 100; i++) {
        strided__context_scope scope;
        if (strided__context_enter("race", r->cu, 1, &scope) != STRIDED_OK) {
            atomic_fetch_add(&r->failures, 1);
            continue;
        }
        if (fake.current_context() == NULL)
            atomic_fetch_add(&r->failures, 1);
        strided__context_leave(r->cu, &scope);
        if (fake.current_context() != NULL)
            atomic_fetch_add(&r->failures, 1);
    }
    return NULL;
}

/* The first test to touch device 1: threads race to enter it first, and its
 * primary context is retained exactly once. */
static void test_scope_retains_a_primary_context_once(void **state)
{
    race r;
    pthread_t t[THREADS];

    (void)state;
    r.cu = driver_ok();
    atomic_init(&r.go, 0);
    atomic_init(&r.failures, 0);
    fake.reset(2, 0, 1);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, enter_device_1, &r), 0);
    atomic_store(&r.go, 1);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(atomic_load(&r.failures), 0);
    assert_int_equal(fake.calls("cuDevicePrimaryCtxRetain"), 1);
    /* A cached context needs no device count either. */
    long counts = fake.calls("cuDeviceGetCount");
    strided__context_scope scope;
    assert_ok(strided__context_enter("again", r.cu, 1, &scope));
    strided__context_leave(r.cu, &scope);
    assert_int_equal(fake.calls("cuDevicePrimaryCtxRetain"), 1);
    assert_int_equal(fake.calls("cuDeviceGetCount"), counts);
}

static void test_scope_makes_primary_current_and_restores_none(void **state)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope scope;

    (void)state;
    fake.reset(2, 0, 1);
    assert_null(fake.current_context());
    assert_ok(strided__context_enter("scope", cu, 0, &scope));
    assert_ptr_equal(fake.current_context(), primary_of(cu, 0));
    assert_true(scope.switched);
    assert_null(scope.previous);
    strided__context_leave(cu, &scope);
    assert_null(fake.current_context());
}

static void test_scope_restores_the_previous_context(void **state)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope scope;
    CUcontext c0 = primary_of(cu, 0), c1 = primary_of(cu, 1);

    (void)state;
    set_current(cu, c1);
    assert_ok(strided__context_enter("scope", cu, 0, &scope));
    assert_ptr_equal(fake.current_context(), c0);
    strided__context_leave(cu, &scope);
    assert_ptr_equal(fake.current_context(), c1);
    set_current(cu, NULL);
}

static void test_scope_keeps_the_current_context_when_it_is_right(void **state)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope scope;
    CUcontext c1 = primary_of(cu, 1);

    (void)state;
    set_current(cu, c1);
    fake.reset(2, 0, 1);
    assert_ok(strided__context_enter("scope", cu, 1, &scope));
    assert_false(scope.switched);
    assert_ptr_equal(fake.current_context(), c1);
    strided__context_leave(cu, &scope);
    assert_ptr_equal(fake.current_context(), c1);
    assert_int_equal(fake.calls("cuCtxSetCurrent"), 0);
    set_current(cu, NULL);
}

static void test_scopes_nest(void **state)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope outer, inner;

    (void)state;
    assert_ok(strided__context_enter("outer", cu, 0, &outer));
    assert_ok(strided__context_enter("inner", cu, 1, &inner));
    assert_ptr_equal(fake.current_context(), primary_of(cu, 1));
    strided__context_leave(cu, &inner);
    assert_ptr_equal(fake.current_context(), primary_of(cu, 0));
    strided__context_leave(cu, &outer);
    assert_null(fake.current_context());
}

static void *scope_on_thread(void *arg)
{
    const strided__driver *cu = arg;
    strided__context_scope scope;
    if (strided__context_enter("thread", cu, 1, &scope) == STRIDED_OK) {
        if (fake.current_context() == NULL)
            return (void *)"no context inside the scope";
        strided__context_leave(cu, &scope);
    } else {
        return (void *)"enter failed";
    }
    return fake.current_context() == NULL ? NULL : (void *)"not restored";
}

static void test_scope_is_per_thread(void **state)
{
    const strided__driver *cu = driver_ok();
    CUcontext c0 = primary_of(cu, 0);
    pthread_t t;
    void *problem = (void *)"not run";

    (void)state;
    set_current(cu, c0);
    assert_int_equal(pthread_create(&t, NULL, scope_on_thread, (void *)cu), 0);
    assert_int_equal(pthread_join(t, &problem), 0);
    if (problem != NULL)
        fail_msg("%s", (const char *)problem);
    assert_ptr_equal(fake.current_context(), c0);
    set_current(cu, NULL);
}

static void check_invalid_device(int device, const char *text)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope scope;

    fake.reset(2, 0, 1);
    fill_sentinel(&scope, sizeof scope);
    assert_error(strided__context_enter("scope", cu, device, &scope), STRIDED_ERR_INVALID_ARGUMENT,
                 "scope", text);
    assert_untouched(&scope, sizeof scope);
    assert_null(fake.current_context());
    assert_int_equal(strided_last_cuda_error(), 0);
    assert_int_equal(fake.calls("cuDevicePrimaryCtxRetain"), 0);
}

static void test_scope_rejects_a_device_that_does_not_exist(void **state)
{
    (void)state;
    check_invalid_device(5, "device 5 does not exist; there are 2 CUDA devices");
    assert_string_equal(strided_last_error(),
                        "scope: device 5 does not exist; there are 2 CUDA devices");
}

static void test_scope_rejects_the_first_missing_ordinal(void **state)
{
    (void)state;
    check_invalid_device(2, "device 2 does not exist; there are 2 CUDA devices");
}

static void test_scope_rejects_a_negative_device(void **state)
{
    (void)state;
    check_invalid_device(-1, "device -1 does not exist");
}

static void test_scope_rejects_a_huge_device(void **state)
{
    (void)state;
    check_invalid_device(1 << 30, "does not exist");
}

/* A failing driver call leaves the thread's context alone. */
static void check_scope_call_fails(const char *entry, CUresult result, int device, const char *text)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope scope;

    fake.reset(3, 0, 1);
    fake.fail_next(entry, result);
    fill_sentinel(&scope, sizeof scope);
    assert_error(strided__context_enter("scope", cu, device, &scope), STRIDED_ERR_CUDA, "scope",
                 text);
    assert_int_equal(strided_last_cuda_error(), result);
    assert_untouched(&scope, sizeof scope);
    assert_null(fake.current_context());
}

static void test_scope_fails_when_cuCtxSetCurrent_fails(void **state)
{
    (void)state;
    check_scope_call_fails("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT, 0,
                           "cuCtxSetCurrent failed: CUDA_ERROR_INVALID_CONTEXT "
                           "(invalid device context)");
}

static void test_scope_fails_when_cuCtxGetCurrent_fails(void **state)
{
    (void)state;
    check_scope_call_fails("cuCtxGetCurrent", CUDA_ERROR_UNKNOWN, 0,
                           "cuCtxGetCurrent failed: CUDA_ERROR_UNKNOWN "
                           "(unknown error)");
}

static void test_scope_fails_when_cuDeviceGetCount_fails(void **state)
{
    (void)state;
    /* Device 7 never has a cached context, so its ordinal is checked. */
    check_scope_call_fails("cuDeviceGetCount", CUDA_ERROR_NOT_INITIALIZED, 7,
                           "cuDeviceGetCount failed: CUDA_ERROR_NOT_INITIALIZED "
                           "(initialization error)");
}

/* The first test to touch device 2: a failed retain is not cached, the
 * next entry retries and succeeds. */
static void test_scope_retries_a_failed_retain(void **state)
{
    const strided__driver *cu = driver_ok();
    strided__context_scope scope;

    (void)state;
    check_scope_call_fails("cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY, 2,
                           "cuDevicePrimaryCtxRetain failed: "
                           "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    assert_ok(strided__context_enter("scope", cu, 2, &scope));
    assert_ptr_equal(fake.current_context(), primary_of(cu, 2));
    strided__context_leave(cu, &scope);
    assert_null(fake.current_context());
    assert_int_equal(fake.calls("cuDevicePrimaryCtxRetain"), 3);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(DRIVER_NONE) || defined(DRIVER_NOT_CUDA) || defined(DRIVER_OLD) || \
    defined(DRIVER_HIDDEN) || defined(DRIVER_INIT_FAILS)
        cmocka_unit_test(test_not_loaded_before_first_use),
        cmocka_unit_test(test_first_use_from_many_threads_agrees),
        cmocka_unit_test(test_host_memory_is_host_without_a_usable_driver),
#endif
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_no_driver_is_reported_with_dlopen_reason),
        cmocka_unit_test(test_cuda_fail_without_driver_names_the_number),
        cmocka_unit_test(test_cuda_check_success_is_ok),
#elif defined(DRIVER_NOT_CUDA)
        cmocka_unit_test(test_a_library_without_cuGetProcAddress_is_no_driver),
#elif defined(DRIVER_OLD)
        cmocka_unit_test(test_an_old_driver_is_no_driver),
#elif defined(DRIVER_HIDDEN)
        cmocka_unit_test(test_a_missing_entry_point_is_a_cuda_error),
#elif defined(DRIVER_INIT_FAILS)
        cmocka_unit_test(test_cuInit_failure_is_a_cuda_error),
#elif defined(DRIVER_FAKE_V1)
        cmocka_unit_test(test_v1_lookup_resolves_every_entry_point),
#elif defined(DRIVER_FAKE)
        cmocka_unit_test(test_loads_once_from_many_threads),
        cmocka_unit_test(test_resolves_every_entry_point),
        cmocka_unit_test(test_failed_call_names_call_error_and_text),
        cmocka_unit_test(test_cuda_fail_with_a_bare_name),
        cmocka_unit_test(test_cuda_fail_of_an_unknown_code),
        cmocka_unit_test(test_cuda_check_success_leaves_the_message),
        cmocka_unit_test(test_later_failure_clears_the_cuda_error),
        cmocka_unit_test(test_cuda_error_is_per_thread),
        cmocka_unit_test(test_scope_retains_a_primary_context_once),
        cmocka_unit_test(test_scope_makes_primary_current_and_restores_none),
        cmocka_unit_test(test_scope_restores_the_previous_context),
        cmocka_unit_test(test_scope_keeps_the_current_context_when_it_is_right),
        cmocka_unit_test(test_scopes_nest),
        cmocka_unit_test(test_scope_is_per_thread),
        cmocka_unit_test(test_scope_rejects_a_device_that_does_not_exist),
        cmocka_unit_test(test_scope_rejects_the_first_missing_ordinal),
        cmocka_unit_test(test_scope_rejects_a_negative_device),
        cmocka_unit_test(test_scope_rejects_a_huge_device),
        cmocka_unit_test(test_scope_fails_when_cuCtxSetCurrent_fails),
        cmocka_unit_test(test_scope_fails_when_cuCtxGetCurrent_fails),
        cmocka_unit_test(test_scope_fails_when_cuDeviceGetCount_fails),
        cmocka_unit_test(test_scope_retries_a_failed_retain),
#endif
    };

#if defined(DRIVER_NONE)
    use_no_driver();
#elif defined(DRIVER_NOT_CUDA)
    setenv("STRIDED_CUDA_DRIVER", "libm.so.6", 1);
#elif defined(DRIVER_FAKE_V1)
    use_fake_driver(FAKE_CUDA_V1_PATH, 1);
#elif defined(DRIVER_OLD)
    setenv("FAKE_CUDA_DRIVER_VERSION", "11080", 1);
    use_fake_driver(FAKE_CUDA_PATH, 1);
#elif defined(DRIVER_HIDDEN)
    setenv("FAKE_CUDA_HIDE", "cuMemFreeAsync", 1);
    use_fake_driver(FAKE_CUDA_PATH, 1);
#elif defined(DRIVER_INIT_FAILS)
    use_fake_driver(FAKE_CUDA_PATH, 1);
    fake.fail_next("cuInit", CUDA_ERROR_NO_DEVICE);
#elif defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
#else
#error "define one DRIVER_ scenario"
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
