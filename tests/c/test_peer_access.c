/*
 * Tests of peer access to device memory pools (strided/resource.h):
 * strided_memory_resource_peer_access, _update_peer_access,
 * _grant_peer_access and _set_peer_access.
 *
 * Built twice: DRIVER_NONE (the argument checks, and the resources that
 * have no device pool) and DRIVER_FAKE (the fake driver with ten devices,
 * of which the first eight reach each other: which devices are granted and
 * revoked, in how many cuMemPoolSetAccess calls, and what is refused before
 * anything changes).
 */
#include "test_memory.h"

#include "cuda/driver.h"
#include "test_cuda.h"

/* A user resource has no pool whose access could be set. */
static void test_arguments_and_user_resources(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    int devices[4];
    size_t n = 7;

    (void)state;
    assert_error(strided_memory_resource_peer_access(NULL, devices, 4, &n),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access",
                 "mr, out_count and, for a capacity, out_devices are required");
    assert_error(strided_memory_resource_peer_access(mr, NULL, 4, &n), STRIDED_ERR_INVALID_ARGUMENT,
                 "peer_access", NULL);
    assert_error(strided_memory_resource_peer_access(mr, devices, 4, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access", NULL);
    assert_error(strided_memory_resource_update_peer_access(NULL, NULL, 0, NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access",
                 "mr and, for a count, its list of devices are required");
    assert_error(strided_memory_resource_update_peer_access(mr, NULL, 1, NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access", NULL);
    assert_error(strided_memory_resource_update_peer_access(mr, NULL, 0, NULL, 2),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access", NULL);
    assert_error(strided_memory_resource_set_peer_access(mr, NULL, 3), STRIDED_ERR_INVALID_ARGUMENT,
                 "peer_access", NULL);
    assert_error(strided_memory_resource_grant_peer_access(NULL, 1), STRIDED_ERR_INVALID_ARGUMENT,
                 "peer_access", NULL);
    assert_error(strided_memory_resource_peer_access(mr, devices, 4, &n), STRIDED_ERR_UNSUPPORTED,
                 "peer_access", "peer access is granted by device memory pools only");
    assert_error(strided_memory_resource_set_peer_access(mr, NULL, 0), STRIDED_ERR_UNSUPPORTED,
                 "peer_access", "peer access is granted by device memory pools only");
    assert_int_equal(n, 7);
    strided_memory_resource_release(mr);

    assert_ok(strided_host_resource_create(0, &mr));
    assert_error(strided_memory_resource_grant_peer_access(mr, 1), STRIDED_ERR_UNSUPPORTED,
                 "peer_access", "peer access is granted by device memory pools only");
    /* A closed resource says so first. */
    assert_ok(strided_memory_resource_close(mr));
    assert_error(strided_memory_resource_grant_peer_access(mr, 1), STRIDED_ERR_INVALID_ARGUMENT,
                 "peer_access", "HostMemoryResource has been closed");
    strided_memory_resource_release(mr);
}

#if defined(DRIVER_FAKE)

/* The device pool resource of device 0 on its current pool, after a reset
 * to count devices. */
static strided_memory_resource *device_pool(int count)
{
    strided_memory_resource *mr = NULL;
    fake.reset(count, 0, 1);
    assert_ok(strided_device_resource_create(0, &mr));
    return mr;
}

/* The devices with access, as text: "1,2". */
static const char *listed(const strided_memory_resource *mr)
{
    static char text[128];
    int devices[16];
    size_t n = 0, used = 0;
    assert_ok(strided_memory_resource_peer_access(mr, devices, 16, &n));
    text[0] = '\0';
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", i ? "," : "", devices[i]);
    return text;
}

static long set_calls(void)
{
    return fake.calls("cuMemPoolSetAccess");
}

static void test_grant_and_revoke(void **state)
{
    (void)state;
    strided_memory_resource *mr = device_pool(10);
    void *pool = strided_memory_resource_pool(mr).handle;
    assert_string_equal(listed(mr), "");
    long calls = set_calls();
    assert_ok(strided_memory_resource_update_peer_access(mr, INTS(2, 1, 2), 3, NULL, 0));
    assert_int_equal(set_calls() - calls, 1);
    assert_string_equal(listed(mr), "1,2");
    assert_int_equal(fake.pool_access(pool, 1), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    assert_int_equal(fake.pool_access(pool, 3), CU_MEM_ACCESS_FLAGS_PROT_NONE);
    /* Nothing to change, and the pool's own device: no call. */
    calls = set_calls();
    assert_ok(strided_memory_resource_update_peer_access(mr, INTS(1, 0), 2, NULL, 0));
    assert_ok(strided_memory_resource_grant_peer_access(mr, 0));
    assert_ok(strided_memory_resource_grant_peer_access(mr, 2));
    assert_int_equal(set_calls(), calls);
    /* Revoking ignores devices without access and devices that do not
     * exist. */
    assert_ok(strided_memory_resource_update_peer_access(mr, NULL, 0, INTS(2, 7, 99, -1, 0), 5));
    assert_int_equal(set_calls() - calls, 1);
    assert_string_equal(listed(mr), "1");
    /* Both at once, in one call: a device in both lists is granted. */
    calls = set_calls();
    assert_ok(strided_memory_resource_update_peer_access(mr, INTS(3, 4), 2, INTS(1, 4), 2));
    assert_int_equal(set_calls() - calls, 1);
    assert_string_equal(listed(mr), "3,4");
    strided_memory_resource_release(mr);
}

static void test_set(void **state)
{
    (void)state;
    strided_memory_resource *mr = device_pool(4);
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(1, 2), 2));
    assert_string_equal(listed(mr), "1,2");
    long calls = set_calls();
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(3, 3, 0, 2), 4));
    assert_int_equal(set_calls() - calls, 1);
    assert_string_equal(listed(mr), "2,3");
    calls = set_calls();
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(2, 3), 2));
    assert_int_equal(set_calls(), calls);
    assert_ok(strided_memory_resource_set_peer_access(mr, NULL, 0));
    assert_string_equal(listed(mr), "");
    strided_memory_resource_release(mr);
}

/* Every refusal comes before anything changes. */
static void test_refusals(void **state)
{
    (void)state;
    strided_memory_resource *mr = device_pool(10);
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(5), 1));
    long calls = set_calls();
    assert_error(strided_memory_resource_update_peer_access(mr, INTS(1, 12), 2, NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access",
                 "device 12 does not exist; there are 10 CUDA devices");
    assert_error(strided_memory_resource_set_peer_access(mr, INTS(-1), 1),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access",
                 "device -1 does not exist; there are 10 CUDA devices");
    /* Devices 8 and 9 do not reach device 0: named together. */
    assert_error(strided_memory_resource_update_peer_access(mr, INTS(9, 1, 8, 9), 4, NULL, 0),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access",
                 "Device 0 cannot access peer(s): 9, 8");
    assert_error(strided_memory_resource_set_peer_access(mr, INTS(8), 1),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access", "Device 0 cannot access peer(s): 8");
    assert_error(strided_memory_resource_grant_peer_access(mr, 9), STRIDED_ERR_INVALID_ARGUMENT,
                 "peer_access", "Device 0 cannot access peer: 9");
    assert_int_equal(set_calls(), calls);
    assert_string_equal(listed(mr), "5");
    /* Too little room. */
    int devices[1] = {-7};
    size_t n = 3;
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(5, 6), 2));
    assert_error(strided_memory_resource_peer_access(mr, devices, 1, &n),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access", "2 devices have access, room for 1");
    assert_int_equal(devices[0], -7);
    assert_int_equal(n, 3);
    strided_memory_resource_release(mr);
}

/* Only device pools: not the pinned, managed or legacy resources. */
static void test_only_device_pools(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_memory_resource *mrs[4] = {NULL, NULL, NULL, NULL};
    strided_pinned_pool_options pinned = {false, 0, false, 0};
    strided_managed_pool_options managed = {"device", true, 0};
    assert_ok(strided_pinned_pool_resource_create(&pinned, &mrs[0]));
    assert_ok(strided_managed_pool_resource_create(0, &managed, &mrs[1]));
    assert_ok(strided_managed_resource_create(0, &mrs[2]));
    assert_ok(strided_legacy_pinned_resource_create(&mrs[3]));
    for (int i = 0; i < 4; i++) {
        assert_error(strided_memory_resource_grant_peer_access(mrs[i], 1), STRIDED_ERR_UNSUPPORTED,
                     "peer_access", "peer access is granted by device memory pools only");
        strided_memory_resource_release(mrs[i]);
    }
}

/* A pool the resource owns, on device 1; closing ends its peer access
 * calls. */
static void test_owned_pool(void **state)
{
    (void)state;
    fake.reset(3, 0, 1);
    strided_device_pool_options o = {false, 0};
    strided_memory_resource *mr = NULL;
    assert_ok(strided_device_pool_resource_create(1, &o, &mr));
    void *pool = strided_memory_resource_pool(mr).handle;
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(0, 1, 2), 3));
    assert_string_equal(listed(mr), "0,2");
    assert_int_equal(fake.pool_access(pool, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    assert_ok(strided_memory_resource_close(mr));
    int devices[4];
    size_t n = 0;
    assert_error(strided_memory_resource_peer_access(mr, devices, 4, &n),
                 STRIDED_ERR_INVALID_ARGUMENT, "peer_access",
                 "DeviceMemoryResource has been closed");
    assert_error(strided_memory_resource_set_peer_access(mr, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "peer_access", "DeviceMemoryResource has been closed");
    strided_memory_resource_release(mr);
}

static void test_driver_failures_and_memory(void **state)
{
    (void)state;
    strided_memory_resource *mr = device_pool(3);
    fake.fail_next("cuMemPoolSetAccess", CUDA_ERROR_INVALID_DEVICE);
    assert_error(strided_memory_resource_set_peer_access(mr, INTS(1), 1), STRIDED_ERR_CUDA,
                 "peer_access",
                 "cuMemPoolSetAccess failed: CUDA_ERROR_INVALID_DEVICE (invalid device ordinal)");
    assert_null(fake.current_context());
    assert_string_equal(listed(mr), "");
    fake.fail_next("cuMemPoolGetAccess", CUDA_ERROR_UNKNOWN);
    int devices[4];
    size_t n = 0;
    assert_error(strided_memory_resource_peer_access(mr, devices, 4, &n), STRIDED_ERR_CUDA,
                 "peer_access", "cuMemPoolGetAccess failed: CUDA_ERROR_UNKNOWN (unknown error)");
    fake.fail_next("cuDeviceCanAccessPeer", CUDA_ERROR_UNKNOWN);
    assert_status(strided_memory_resource_grant_peer_access(mr, 1), STRIDED_ERR_CUDA);
    /* Each allocation made for a change fails in turn, and nothing
     * changes. */
    for (long k = 0; k < 2; k++) {
        strided__fail_allocation_after(k);
        assert_status(strided_memory_resource_set_peer_access(mr, INTS(2), 1),
                      STRIDED_ERR_OUT_OF_MEMORY);
        strided__fail_allocation_after(-1);
        assert_string_equal(listed(mr), "");
    }
    strided__fail_allocation_after(0);
    assert_status(strided_memory_resource_peer_access(mr, devices, 4, &n),
                  STRIDED_ERR_OUT_OF_MEMORY);
    strided__fail_allocation_after(-1);
    assert_ok(strided_memory_resource_set_peer_access(mr, INTS(2), 1));
    assert_string_equal(listed(mr), "2");
    strided_memory_resource_release(mr);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arguments_and_user_resources),
#if defined(DRIVER_FAKE)
        cmocka_unit_test(test_grant_and_revoke),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_only_device_pools),
        cmocka_unit_test(test_owned_pool),
        cmocka_unit_test(test_driver_failures_and_memory),
#endif
    };

#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
#elif defined(DRIVER_NONE)
    use_no_driver();
#else
#error "define one DRIVER_ scenario"
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
