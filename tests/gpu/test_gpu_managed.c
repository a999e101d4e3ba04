/*
 * GPU tests of managed memory's advice and page moves, peer access to device
 * pools and copies with options (strided/buffer.h, strided/resource.h)
 * against the real CUDA driver.
 *
 * The advice strided gives is read back from the driver by strided's own
 * queries (cuMemRangeGetAttribute) for memory of cuMemAllocManaged and of a
 * managed pool; prefetches and discards run on a stream and the bytes are
 * checked after them (discards need a CUDA 13.0 driver); a device pool's
 * peer access holds no device but those that exist and reach it; a copy
 * with options is cuMemcpyWithAttributesAsync on a CUDA 13.2 driver (every
 * access order honoured) and the plain copy before (DURING_API_CALL
 * refused). Without a driver or a device the test prints "skipped: no CUDA
 * device" and passes.
 */
#include "gpu_test.h"

#include <stdlib.h>

#include "strided.h"

#define TEST_DEVICE 0
#define MiB ((size_t)1 << 20)

enum { CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115 };
enum { CUDA_ERROR_NOT_SUPPORTED = 801 };

static CUdevice device;
static CUcontext primary;
static int device_count, driver_version, managed_supported, pools_supported;

static int set_primary(void **state)
{
    (void)state;
    return cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS ? 0 : -1;
}

static CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}

static strided_memory_location at_device(int id)
{
    return (strided_memory_location){STRIDED_LOCATION_DEVICE, id};
}

static const strided_memory_location HOST = {STRIDED_LOCATION_HOST, -1};

/* A managed buffer of size bytes: from cuMemAllocManaged (pool false) or
 * from a managed pool preferring the test device. */
static strided_buffer *managed(bool pool, size_t size)
{
    strided_managed_pool_options o = {"device", true, TEST_DEVICE};
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    assert_ok(strided_managed_pool_resource_create(TEST_DEVICE, pool ? &o : NULL, &mr));
    assert_ok(strided_buffer_alloc(mr, size, NULL, &b));
    strided_memory_resource_release(mr);
    return b;
}

/* Every byte of the n at device address p is value. */
static void assert_device_bytes(CUdeviceptr p, size_t n, unsigned char value)
{
    unsigned char *host = malloc(n);
    assert_non_null(host);
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(host, p, n));
    for (size_t i = 0; i < n; i++)
        if (host[i] != value)
            fail_msg("byte %zu is %u, expected %u", i, host[i], value);
    free(host);
}

static void skip_without_managed(void)
{
    if (!managed_supported) {
        print_message("MANAGED_MEMORY is 0\n");
        skip();
    }
}

static void check_advice(bool pool)
{
    skip_without_managed();
    strided_buffer *b = managed(pool, MiB);
    bool flag = true;
    strided_memory_location loc;
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_false(flag);
    strided_status first = strided_buffer_advise(b, STRIDED_ADVISE_SET_READ_MOSTLY, HOST);
    if (pool && first == STRIDED_ERR_CUDA &&
        strided_last_cuda_error() == CUDA_ERROR_NOT_SUPPORTED) {
        /* CUDA 13.0 drivers (580) give no advice on memory of a managed
         * pool; the error is the driver's, reported as it is. */
        print_message("the driver gives no advice on managed pool memory: %s\n",
                      strided_last_error());
        strided_buffer_release(b);
        skip();
    }
    assert_status(first, STRIDED_OK);
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_true(flag);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_READ_MOSTLY, HOST));
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_false(flag);

    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION,
                                    at_device(TEST_DEVICE)));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_int_equal(loc.type, STRIDED_LOCATION_DEVICE);
    assert_int_equal(loc.id, TEST_DEVICE);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, HOST));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_int_equal(loc.type, STRIDED_LOCATION_HOST);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_PREFERRED_LOCATION, HOST));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_int_equal(loc.type, STRIDED_LOCATION_NONE);

    size_t capacity = (size_t)device_count + 1, n = 99;
    strided_memory_location *list = calloc(capacity, sizeof *list);
    assert_non_null(list);
    assert_ok(strided_buffer_accessed_by(b, list, capacity, &n));
    assert_int_equal(n, 0);
    const strided_memory_location both[] = {HOST, at_device(TEST_DEVICE)};
    assert_ok(strided_buffer_set_accessed_by(b, both, 2));
    assert_ok(strided_buffer_accessed_by(b, list, capacity, &n));
    assert_int_equal(n, 2);
    assert_int_equal(list[0].type, STRIDED_LOCATION_DEVICE);
    assert_int_equal(list[0].id, TEST_DEVICE);
    assert_int_equal(list[1].type, STRIDED_LOCATION_HOST);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_ACCESSED_BY, HOST));
    assert_ok(strided_buffer_accessed_by(b, list, capacity, &n));
    assert_int_equal(n, 1);
    assert_ok(strided_buffer_set_accessed_by(b, NULL, 0));
    assert_ok(strided_buffer_accessed_by(b, list, capacity, &n));
    assert_int_equal(n, 0);
    free(list);
    strided_buffer_release(b);
}

static void test_advice_of_cuMemAllocManaged(void **state)
{
    (void)state;
    check_advice(false);
}

static void test_advice_of_a_managed_pool(void **state)
{
    (void)state;
    if (!pools_supported) {
        print_message("MEMORY_POOLS_SUPPORTED is 0\n");
        skip();
    }
    check_advice(true);
}

/* Prefetches keep the bytes; discards drop them (a CUDA 13.0 driver), and
 * memory written again after one reads back. */
static void test_prefetch_and_discard(void **state)
{
    (void)state;
    skip_without_managed();
    CUstream s = NULL;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    strided_buffer *b = managed(false, MiB);
    CUdeviceptr p = dptr(strided_buffer_ptr(b));
    CU(cuMemsetD8Async(p, 0x5A, MiB, s));
    assert_ok(strided_buffer_prefetch(b, at_device(TEST_DEVICE), s));
    assert_ok(strided_buffer_prefetch(b, HOST, s));
    CU(cuStreamSynchronize(s));
    for (size_t i = 0; i < MiB; i += 4096)
        assert_int_equal(((unsigned char *)strided_buffer_ptr(b))[i], 0x5A);
    assert_ok(strided_buffer_prefetch(b, at_device(TEST_DEVICE), s));
    assert_device_bytes(p, MiB, 0x5A);
    if (driver_version >= 13000) {
        assert_ok(strided_buffer_discard(b, s));
        CU(cuMemsetD8Async(p, 0x11, MiB, s));
        assert_ok(strided_buffer_discard_prefetch(b, HOST, s));
        CU(cuMemsetD8Async(p, 0x22, MiB, s));
        CU(cuStreamSynchronize(s));
        assert_device_bytes(p, MiB, 0x22);
    } else {
        assert_status(strided_buffer_discard(b, s), STRIDED_ERR_UNSUPPORTED);
    }
    strided_buffer_release(b);
    CU(cuStreamDestroy(s));
}

/* A device pool's peer access: empty at first, its own device left out, a
 * device that does not exist refused; every other device granted and
 * revoked where it reaches the test device. */
static void test_peer_access(void **state)
{
    (void)state;
    if (!pools_supported) {
        print_message("MEMORY_POOLS_SUPPORTED is 0\n");
        skip();
    }
    strided_device_pool_options o = {false, 0};
    strided_memory_resource *mr = NULL;
    assert_ok(strided_device_pool_resource_create(TEST_DEVICE, &o, &mr));
    int *devices = calloc((size_t)device_count, sizeof *devices);
    size_t n = 99;
    assert_non_null(devices);
    assert_ok(strided_memory_resource_peer_access(mr, devices, (size_t)device_count, &n));
    assert_int_equal(n, 0);
    int own = TEST_DEVICE;
    assert_ok(strided_memory_resource_set_peer_access(mr, &own, 1));
    assert_ok(strided_memory_resource_peer_access(mr, devices, (size_t)device_count, &n));
    assert_int_equal(n, 0);
    assert_status(strided_memory_resource_grant_peer_access(mr, device_count),
                  STRIDED_ERR_INVALID_ARGUMENT);
    for (int d = 0; d < device_count; d++) {
        if (d == TEST_DEVICE)
            continue;
        int can = 0;
        CUdevice peer;
        CU(cuDeviceGet(&peer, d));
        CU(cuDeviceCanAccessPeer(&can, peer, device));
        strided_status st = strided_memory_resource_grant_peer_access(mr, d);
        if (!can) {
            assert_status(st, STRIDED_ERR_INVALID_ARGUMENT);
            continue;
        }
        assert_ok(st);
        assert_ok(strided_memory_resource_peer_access(mr, devices, (size_t)device_count, &n));
        assert_int_equal(n, 1);
        assert_int_equal(devices[0], d);
        assert_ok(strided_memory_resource_update_peer_access(mr, NULL, 0, &d, 1));
    }
    assert_ok(strided_memory_resource_peer_access(mr, devices, (size_t)device_count, &n));
    assert_int_equal(n, 0);
    free(devices);
    strided_memory_resource_release(mr);
}

/* Copies with options between device buffers and into managed memory. */
static void test_copy_with_options(void **state)
{
    (void)state;
    CUstream s = NULL;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    strided_memory_resource *mr = NULL;
    strided_buffer *a = NULL, *b = NULL;
    assert_ok(strided_device_resource_create(TEST_DEVICE, &mr));
    assert_ok(strided_buffer_alloc(mr, MiB, s, &a));
    assert_ok(strided_buffer_alloc(mr, MiB, s, &b));
    strided_memory_resource_release(mr);
    CU(cuMemsetD8Async(dptr(strided_buffer_ptr(a)), 0x33, MiB, s));
    const strided_copy_src_access_order orders[] = {STRIDED_COPY_SRC_ACCESS_STREAM,
                                                    STRIDED_COPY_SRC_ACCESS_ANY,
                                                    STRIDED_COPY_SRC_ACCESS_DURING_API_CALL};
    for (size_t i = 0; i < 3; i++) {
        strided_buffer_copy_options o = strided_buffer_copy_options_default();
        o.src_access_order = orders[i];
        o.src_location_hint = at_device(TEST_DEVICE);
        o.overlap_mode = STRIDED_COPY_PREFER_OVERLAP_WITH_COMPUTE;
        CU(cuMemsetD8Async(dptr(strided_buffer_ptr(b)), 0, MiB, s));
        if (orders[i] == STRIDED_COPY_SRC_ACCESS_DURING_API_CALL) {
            /* DURING_API_CALL: the source must be idle when the call is made. */
            CU(cuStreamSynchronize(s));
            if (driver_version < 13020) {
                assert_status(strided_buffer_copy_ex(b, a, s, 0, &o), STRIDED_ERR_UNSUPPORTED);
                continue;
            }
        }
        assert_ok(strided_buffer_copy_ex(b, a, s, 0, &o));
        CU(cuStreamSynchronize(s));
        assert_device_bytes(dptr(strided_buffer_ptr(b)), MiB, 0x33);
    }
    /* The legacy default stream is refused with options. */
    strided_buffer_copy_options o = strided_buffer_copy_options_default();
    assert_status(strided_buffer_copy_ex(b, a, NULL, 0, &o), STRIDED_ERR_INVALID_ARGUMENT);
    if (managed_supported) {
        strided_buffer *m = managed(false, MiB);
        o.dst_location_hint = HOST;
        assert_ok(strided_buffer_copy_ex(m, a, s, 0, &o));
        CU(cuStreamSynchronize(s));
        assert_int_equal(((unsigned char *)strided_buffer_ptr(m))[MiB - 1], 0x33);
        strided_buffer_release(m);
    }
    strided_buffer_release(a);
    strided_buffer_release(b);
    CU(cuStreamDestroy(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_advice_of_cuMemAllocManaged, set_primary),
        cmocka_unit_test_setup(test_advice_of_a_managed_pool, set_primary),
        cmocka_unit_test_setup(test_prefetch_and_discard, set_primary),
        cmocka_unit_test_setup(test_peer_access, set_primary),
        cmocka_unit_test_setup(test_copy_with_options, set_primary),
    };
    int rc = gpu_test_start(&device_count);
    if (rc >= 0)
        return rc;
    if (cu.cuDriverGetVersion(&driver_version) != CUDA_SUCCESS ||
        !gpu_retain_devices(1, &device, &primary))
        return 1;
    if (cu.cuDeviceGetAttribute(&managed_supported, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, device) !=
            CUDA_SUCCESS ||
        cu.cuDeviceGetAttribute(&pools_supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                                device) != CUDA_SUCCESS) {
        printf("cannot set up device %d\n", TEST_DEVICE);
        return 1;
    }
    printf("CUDA driver API %d.%d, %d device(s); device %d: MANAGED_MEMORY=%d "
           "MEMORY_POOLS_SUPPORTED=%d\n",
           driver_version / 1000, driver_version % 1000 / 10, device_count, TEST_DEVICE,
           managed_supported, pools_supported);
    gpu_test_filter("STRIDED_GPU_MANAGED_TESTS");
    rc = cmocka_run_group_tests_name("gpu managed", tests, NULL, NULL);
    gpu_release_devices(1, &device);
    return rc;
}
