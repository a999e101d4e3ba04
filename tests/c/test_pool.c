/*
 * Tests of the memory pools of strided/resource.h: the pool resources and
 * their options, the pool a resource reports, its attributes, closing, and
 * the legacy pinned resource.
 *
 * Built twice: DRIVER_NONE (no CUDA driver: the option rules that come
 * before the driver still answer, everything else is refused, closing works
 * on any resource) and DRIVER_FAKE (the fake driver with two devices and
 * host NUMA nodes 0 and 1: which pools are created with which properties,
 * what they allocate, when they are destroyed, and every failure).
 */
#include "test_memory.h"

#include <limits.h>

#include "cuda/driver.h"
#include "test_cuda.h"

/* The options every valid case starts from. */
static const strided_device_pool_options device_defaults = {false, 0};
static const strided_pinned_pool_options pinned_defaults = {false, 0, false, 0};
static const strided_managed_pool_options managed_defaults = {NULL, false, 0};

/* Every create function refuses a NULL out first, with or without a
 * driver. */
static void test_pool_creates_refuse_a_null_out(void **state)
{
    (void)state;
    assert_error(strided_device_pool_resource_create(0, &device_defaults, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "device_pool_resource_create", "out");
    assert_error(strided_pinned_pool_resource_create(&pinned_defaults, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "pinned_pool_resource_create", "out");
    assert_error(strided_managed_pool_resource_create(0, &managed_defaults, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "managed_pool_resource_create", "out");
    assert_error(strided_legacy_pinned_resource_create(NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "legacy_pinned_resource_create", "out");
}

/* The rules of the pinned options, in cuda.core's order: the size, then
 * the NUMA node (ipc_enabled is valid either way). They need no driver. */
typedef struct pinned_case {
    int line;
    strided_pinned_pool_options options;
    strided_status code;
    const char *text;
} pinned_case;

static const pinned_case pinned_rules[] = {
    CASE({true, -1, true, -2}, STRIDED_ERR_OVERFLOW, "can't convert negative value"),
    CASE({true, 0, true, -2}, STRIDED_ERR_INVALID_ARGUMENT, "numa_id must be >= 0, got -2"),
    CASE({false, -1, false, 0}, STRIDED_ERR_OVERFLOW,
         "can't convert negative value to size_t: max_size is -1"),
    CASE({false, INT64_MIN, true, -2}, STRIDED_ERR_OVERFLOW, "can't convert negative value"),
    CASE({false, 0, true, -2}, STRIDED_ERR_INVALID_ARGUMENT, "numa_id must be >= 0, got -2"),
    CASE({false, 0, true, -1}, STRIDED_ERR_INVALID_ARGUMENT, "numa_id must be >= 0, got -1"),
    CASE({false, 0, true, (int64_t)INT_MAX + 1}, STRIDED_ERR_OVERFLOW,
         "numa_id 2147483648 does not fit in a C int"),
};

static void test_pinned_pool_option_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(pinned_rules); i++) {
        const pinned_case *c = &pinned_rules[i];
        strided_memory_resource *mr;
        fill_sentinel(&mr, sizeof mr);
        strided_status s = strided_pinned_pool_resource_create(&c->options, &mr);
        if (s != c->code)
            fail_at(AT(c), "status %d, expected %d\n", (int)s, (int)c->code);
        assert_error(s, c->code, "pinned_pool_resource_create", c->text);
        assert_untouched(&mr, sizeof mr);
    }
}

/* cuda.core's table of preferred locations for managed pools: the refused
 * rows. They need no driver. */
typedef struct managed_case {
    int line;
    strided_managed_pool_options options;
    strided_status code;
    const char *text;
} managed_case;

static const managed_case managed_rules[] = {
    CASE({NULL, true, -2}, STRIDED_ERR_INVALID_ARGUMENT,
         "preferred_location must be a device ordinal (>= 0), -1 for host, or None for no "
         "preference, got -2"),
    CASE({"device", false, 0}, STRIDED_ERR_INVALID_ARGUMENT,
         "preferred_location must be a device ordinal (>= 0) when preferred_location_type "
         "is 'device', got None"),
    CASE({"device", true, -1}, STRIDED_ERR_INVALID_ARGUMENT,
         "when preferred_location_type is 'device', got -1"),
    CASE({"host", true, 0}, STRIDED_ERR_INVALID_ARGUMENT,
         "preferred_location must be None when preferred_location_type is 'host', got 0"),
    CASE({"host", true, -1}, STRIDED_ERR_INVALID_ARGUMENT,
         "preferred_location_type is 'host', got -1"),
    CASE({"host_numa", true, -1}, STRIDED_ERR_INVALID_ARGUMENT,
         "preferred_location must be a NUMA node ID (>= 0) or None when "
         "preferred_location_type is 'host_numa', got -1"),
    CASE({"bogus", false, 0}, STRIDED_ERR_INVALID_ARGUMENT,
         "'bogus' is not a valid ManagedMemoryLocationType. Must be None, 'device', 'host' "
         "or 'host_numa'"),
    CASE({"bogus", true, -5}, STRIDED_ERR_INVALID_ARGUMENT, "'bogus' is not a valid"),
    CASE({"Device", true, 0}, STRIDED_ERR_INVALID_ARGUMENT, "'Device' is not a valid"),
    CASE({"", false, 0}, STRIDED_ERR_INVALID_ARGUMENT, "'' is not a valid"),
    CASE({NULL, true, (int64_t)INT_MAX + 1}, STRIDED_ERR_OVERFLOW,
         "preferred_location 2147483648 does not fit in a C int"),
    CASE({"host_numa", true, INT64_MAX}, STRIDED_ERR_OVERFLOW, "does not fit in a C int"),
};

static void test_managed_pool_option_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(managed_rules); i++) {
        const managed_case *c = &managed_rules[i];
        strided_memory_resource *mr;
        fill_sentinel(&mr, sizeof mr);
        strided_status s = strided_managed_pool_resource_create(0, &c->options, &mr);
        if (s != c->code)
            fail_at(AT(c), "status %d, expected %d\n", (int)s, (int)c->code);
        assert_error(s, c->code, "managed_pool_resource_create", c->text);
        assert_untouched(&mr, sizeof mr);
    }
}

/* A closed user resource refuses allocations; what it allocated before is
 * freed as usual; closing again does nothing. */
static void test_close_user_resource(void **state)
{
    counting c;
    strided_memory_resource *mr;
    strided_buffer *b = NULL, *late;

    (void)state;
    mr = counting_resource(&c, host_props);
    assert_ok(strided_buffer_alloc(mr, 16, NULL, &b));
    assert_false(strided_memory_resource_is_closed(mr));
    assert_ok(strided_memory_resource_close(mr));
    assert_true(strided_memory_resource_is_closed(mr));
    fill_sentinel(&late, sizeof late);
    assert_error(strided_buffer_alloc(mr, 16, NULL, &late), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "the memory resource has been closed");
    assert_untouched(&late, sizeof late);
    assert_int_equal(atomic_load(&c.allocates), 1);
    assert_ok(strided_memory_resource_close(mr));
    assert_true(strided_memory_resource_is_closed(mr));
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.deallocates), 1);
    assert_int_equal(atomic_load(&c.destroys), 0);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_close_host_resource(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_memory_resource_close(mr));
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_alloc(mr, 0, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "HostMemoryResource has been closed");
    assert_untouched(&b, sizeof b);
    strided_memory_resource_release(mr);
}

/* Resources without a pool report none and have no attributes. */
static void test_resources_without_a_pool(void **state)
{
    counting c;
    strided_memory_resource *mrs[2] = {NULL, NULL};
    strided_memory_pool_attributes attrs;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mrs[0]));
    mrs[1] = counting_resource(&c, host_props);
    for (int i = 0; i < 2; i++) {
        strided_memory_pool_info info = strided_memory_resource_pool(mrs[i]);
        assert_null(info.handle);
        assert_false(info.owned);
        assert_int_equal(info.location.type, STRIDED_LOCATION_NONE);
        assert_int_equal(info.location.id, -1);
        fill_sentinel(&attrs, sizeof attrs);
        assert_error(strided_memory_resource_pool_attributes(mrs[i], &attrs),
                     STRIDED_ERR_UNSUPPORTED, "pool_attributes",
                     "the memory resource allocates without a memory pool");
        assert_untouched(&attrs, sizeof attrs);
        assert_ok(strided_memory_resource_close(mrs[i]));
        assert_error(strided_memory_resource_pool_attributes(mrs[i], &attrs),
                     STRIDED_ERR_INVALID_ARGUMENT, "pool_attributes", "has been closed");
        assert_untouched(&attrs, sizeof attrs);
        strided_memory_resource_release(mrs[i]);
    }
}

static void test_pool_attributes_null_arguments(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_memory_pool_attributes attrs;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    fill_sentinel(&attrs, sizeof attrs);
    assert_error(strided_memory_resource_pool_attributes(NULL, &attrs),
                 STRIDED_ERR_INVALID_ARGUMENT, "pool_attributes", "mr and out are required");
    assert_untouched(&attrs, sizeof attrs);
    assert_error(strided_memory_resource_pool_attributes(mr, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "pool_attributes", "mr and out are required");
    strided_memory_resource_release(mr);
}

#if defined(DRIVER_NONE)

/* Valid options, no driver: the device resource asks for the driver before
 * anything else (its device comes first), the others after their rules. */
static void test_pool_resources_need_a_driver(void **state)
{
    strided_memory_resource *mr;
    const strided_device_pool_options ipc = {true, -1};

    (void)state;
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_device_pool_resource_create(0, &device_defaults, &mr),
                 STRIDED_ERR_NO_CUDA_DRIVER, "device_pool_resource_create", "no CUDA driver");
    assert_error(strided_device_pool_resource_create(0, &ipc, &mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "device_pool_resource_create", "no CUDA driver");
    assert_error(strided_pinned_pool_resource_create(&pinned_defaults, &mr),
                 STRIDED_ERR_NO_CUDA_DRIVER, "pinned_pool_resource_create", "no CUDA driver");
    assert_error(strided_managed_pool_resource_create(0, &managed_defaults, &mr),
                 STRIDED_ERR_NO_CUDA_DRIVER, "managed_pool_resource_create", "no CUDA driver");
    assert_error(strided_legacy_pinned_resource_create(&mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "legacy_pinned_resource_create", "no CUDA driver");
    /* NULL options are the resources without a pool, by their own names. */
    assert_error(strided_pinned_pool_resource_create(NULL, &mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "pinned_resource_create", NULL);
    assert_error(strided_device_pool_resource_create(0, NULL, &mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "device_resource_create", NULL);
    assert_error(strided_managed_pool_resource_create(0, NULL, &mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "managed_resource_create", NULL);
    assert_untouched(&mr, sizeof mr);
}

#elif defined(DRIVER_FAKE)

/* The fake's controls this file needs beyond test_cuda.h's. */
typedef struct pool_controls {
    fake_cuda_fail_after_fn fail_after;
    fake_cuda_pool_info_fn info;
    fake_cuda_live_pools_fn live;
    fake_cuda_set_host_numa_id_fn set_host_numa_id;
} pool_controls;

static pool_controls pools;

static void find_pool_controls(void)
{
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        exit(1);
    }
    fake_symbol_(lib, "fake_cuda_fail_after", &pools.fail_after);
    fake_symbol_(lib, "fake_cuda_pool_info", &pools.info);
    fake_symbol_(lib, "fake_cuda_live_pools", &pools.live);
    fake_symbol_(lib, "fake_cuda_set_host_numa_id", &pools.set_host_numa_id);
}

static const strided__driver *driver(void)
{
    const strided__driver *cu = NULL;
    assert_ok(strided__cuda("test", &cu));
    return cu;
}

/* What the fake knows of mr's pool. */
static fake_cuda_pool pool_of(const strided_memory_resource *mr)
{
    fake_cuda_pool p;
    void *handle = strided_memory_resource_pool(mr).handle;
    assert_non_null(handle);
    assert_int_equal(pools.info(handle, &p), 1);
    return p;
}

static strided_memory_pool_attributes attributes_of(const strided_memory_resource *mr)
{
    strided_memory_pool_attributes a;
    assert_ok(strided_memory_resource_pool_attributes(mr, &a));
    return a;
}

static strided_memory_info query(const void *p)
{
    strided_memory_info info;
    assert_ok(strided_memory_info_query(p, &info));
    return info;
}

static void check_props(const strided_memory_resource *mr, bool host, bool device, bool managed,
                        int device_id, bool pooled)
{
    strided_memory_resource_props p = strided_memory_resource_properties(mr);
    assert_int_equal(p.host_accessible, host);
    assert_int_equal(p.device_accessible, device);
    assert_int_equal(p.managed, managed);
    assert_int_equal(p.device_id, device_id);
    assert_int_equal(p.pooled, pooled);
}

static void check_location(const strided_memory_resource *mr, strided_memory_location_type type,
                           int id)
{
    strided_memory_location loc = strided_memory_resource_pool(mr).location;
    assert_int_equal(loc.type, type);
    assert_int_equal(loc.id, id);
}

/* The pool the fake made for the last created resource. */
static void check_fake_pool(const fake_cuda_pool *p, int alloc_type, int location_type,
                            int location_id, size_t max_size)
{
    assert_int_equal(p->created, 1);
    assert_int_equal(p->destroyed, 0);
    assert_int_equal(p->alloc_type, alloc_type);
    assert_int_equal(p->handle_types, CU_MEM_HANDLE_TYPE_NONE);
    assert_int_equal(p->location_type, location_type);
    assert_int_equal(p->location_id, location_id);
    assert_int_equal(p->max_size, max_size);
    assert_int_equal(p->release_threshold, 0);
}

static strided_memory_resource *device_pool(int device, int64_t max_size)
{
    strided_memory_resource *mr = NULL;
    const strided_device_pool_options o = {false, max_size};
    assert_ok(strided_device_pool_resource_create(device, &o, &mr));
    return mr;
}

static void test_device_pool(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_pool(1, 1 << 20);
    assert_null(fake.current_context());
    assert_int_equal(fake.calls("cuMemPoolCreate"), 1);
    assert_int_equal(fake.calls("cuDeviceGetMemPool"), 0);
    assert_int_equal(fake.calls("cuMemPoolSetAttribute"), 0);
    assert_int_equal(pools.live(), 1);
    check_props(mr, false, true, false, 1, true);
    strided_memory_pool_info info = strided_memory_resource_pool(mr);
    assert_true(info.owned);
    check_location(mr, STRIDED_LOCATION_DEVICE, 1);
    fake_cuda_pool p = pool_of(mr);
    check_fake_pool(&p, CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 1, 1 << 20);

    assert_ok(strided_buffer_alloc(mr, 4096, STREAM_A, &b));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemAllocFromPoolAsync"), STREAM_A);
    assert_null(fake.current_context());
    strided_memory_info mi = query(strided_buffer_ptr(b));
    assert_int_equal(mi.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(mi.device_id, 1);
    assert_true(mi.pooled);
    assert_int_equal(strided_buffer_memory_info(b).kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(pool_of(mr).used, 4096);
    strided_memory_pool_attributes a = attributes_of(mr);
    assert_int_equal(a.used_mem_current, 4096);
    assert_int_equal(a.used_mem_high, 4096);
    assert_int_equal(a.reserved_mem_current, 4096);
    assert_int_equal(a.release_threshold, 0);
    assert_true(a.reuse_follow_event_dependencies && a.reuse_allow_opportunistic &&
                a.reuse_allow_internal_dependencies);
    assert_null(fake.current_context());

    /* Freed in stream order, into the pool. */
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_A);
    a = attributes_of(mr);
    assert_int_equal(a.used_mem_current, 0);
    assert_int_equal(a.used_mem_high, 4096);
    /* The pool goes with the resource's last reference. */
    void *handle = info.handle;
    strided_memory_resource_release(mr);
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 1);
    assert_int_equal(pools.live(), 0);
    assert_int_equal(pools.info(handle, &p), 1);
    assert_int_equal(p.destroyed, 1);
    assert_int_equal(fake.live_bytes(), 0);
    assert_null(fake.current_context());
}

/* The pool's maximum size reaches the driver, which refuses to grow past
 * it. */
static void test_device_pool_max_size(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL, *c;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_pool(0, 1000);
    assert_ok(strided_buffer_alloc(mr, 600, NULL, &b));
    fill_sentinel(&c, sizeof c);
    assert_error(strided_buffer_alloc(mr, 600, NULL, &c), STRIDED_ERR_CUDA, "alloc",
                 "cuMemAllocFromPoolAsync failed: CUDA_ERROR_OUT_OF_MEMORY");
    assert_untouched(&c, sizeof c);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    assert_int_equal(fake.live_bytes(), 0);
}

/* A pool is kept while a buffer holds its resource, whoever let go first. */
static void test_pool_outlives_the_callers_reference(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_pool(0, 0);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 1);
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 0);
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 1);
    assert_int_equal(pools.live(), 0);
    assert_int_equal(fake.live_bytes(), 0);
}

/* Closing destroys an owned pool at once and refuses new allocations;
 * memory allocated before is still freed through the resource. */
static void test_close_device_pool(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL, *late;
    strided_memory_pool_attributes attrs;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_pool(0, 0);
    assert_ok(strided_buffer_alloc(mr, 128, STREAM_B, &b));
    assert_ok(strided_memory_resource_close(mr));
    assert_true(strided_memory_resource_is_closed(mr));
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 1);
    assert_int_equal(pools.live(), 0);
    assert_null(fake.current_context());
    strided_memory_pool_info info = strided_memory_resource_pool(mr);
    assert_null(info.handle);
    assert_false(info.owned);
    check_location(mr, STRIDED_LOCATION_DEVICE, 0);
    fill_sentinel(&late, sizeof late);
    assert_error(strided_buffer_alloc(mr, 128, NULL, &late), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "DeviceMemoryResource has been closed");
    assert_untouched(&late, sizeof late);
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    fill_sentinel(&attrs, sizeof attrs);
    assert_error(strided_memory_resource_pool_attributes(mr, &attrs), STRIDED_ERR_INVALID_ARGUMENT,
                 "pool_attributes", "DeviceMemoryResource has been closed");
    assert_untouched(&attrs, sizeof attrs);
    assert_ok(strided_memory_resource_close(mr));
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 1);

    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_B);
    assert_int_equal(fake.live_bytes(), 0);
    strided_memory_resource_release(mr);
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 1);
}

/* A failing cuMemPoolDestroy is reported by close; the resource is closed
 * all the same and never tries again. */
static void test_close_reports_a_failing_destroy(void **state)
{
    strided_memory_resource *mr;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_pool(0, 0);
    fake.fail_next("cuMemPoolDestroy", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_memory_resource_close(mr), STRIDED_ERR_CUDA, "close",
                 "cuMemPoolDestroy failed: CUDA_ERROR_INVALID_VALUE");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_INVALID_VALUE);
    assert_true(strided_memory_resource_is_closed(mr));
    assert_null(fake.current_context());
    assert_ok(strided_memory_resource_close(mr));
    strided_memory_resource_release(mr);
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 1);
    assert_int_equal(pools.live(), 1); /* left to the driver */
}

/* Without options: the device's current pool, not owned, its release
 * threshold raised only when it is 0; closing destroys nothing. */
static void test_device_current_pool(void **state)
{
    strided_memory_resource *mr = NULL;
    CUmemoryPool current = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    assert_int_equal(driver()->cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
    assert_ok(strided_device_pool_resource_create(0, NULL, &mr));
    assert_int_equal(fake.calls("cuMemPoolCreate"), 0);
    assert_int_equal(fake.calls("cuMemPoolGetAttribute"), 1);
    assert_int_equal(fake.calls("cuMemPoolSetAttribute"), 1);
    strided_memory_pool_info info = strided_memory_resource_pool(mr);
    assert_ptr_equal(info.handle, current);
    assert_false(info.owned);
    check_location(mr, STRIDED_LOCATION_DEVICE, 0);
    check_props(mr, false, true, false, 0, true);
    fake_cuda_pool p = pool_of(mr);
    assert_int_equal(p.created, 0);
    assert_true(p.release_threshold == UINT64_MAX);
    assert_true(attributes_of(mr).release_threshold == UINT64_MAX);
    assert_ok(strided_memory_resource_close(mr));
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 0);
    assert_null(strided_memory_resource_pool(mr).handle);
    strided_memory_resource_release(mr);
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 0);

    /* A threshold someone set is left alone. */
    cuuint64_t mine = 1 << 20;
    assert_int_equal(driver()->cuMemPoolSetAttribute(current, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                                     &mine),
                     CUDA_SUCCESS);
    long sets = fake.calls("cuMemPoolSetAttribute");
    assert_ok(strided_device_resource_create(0, &mr));
    assert_int_equal(fake.calls("cuMemPoolSetAttribute"), sets);
    assert_int_equal(attributes_of(mr).release_threshold, 1 << 20);
    strided_memory_resource_release(mr);
}

/* The attributes as the driver reports them, and a failing read. */
static void test_pool_attributes(void **state)
{
    strided_memory_resource *mr;
    strided_memory_pool_attributes a;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_pool(0, 0);
    void *pool = strided_memory_resource_pool(mr).handle;
    int off = 0;
    cuuint64_t threshold = 12345;
    assert_int_equal(
        driver()->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &off),
        CUDA_SUCCESS);
    assert_int_equal(driver()->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                                     &threshold),
                     CUDA_SUCCESS);
    long before = fake.calls("cuMemPoolGetAttribute");
    a = attributes_of(mr);
    assert_int_equal(fake.calls("cuMemPoolGetAttribute"), before + 8);
    assert_true(a.reuse_follow_event_dependencies);
    assert_false(a.reuse_allow_opportunistic);
    assert_true(a.reuse_allow_internal_dependencies);
    assert_int_equal(a.release_threshold, 12345);
    assert_int_equal(a.used_mem_current, 0);
    assert_null(fake.current_context());

    for (long n = 0; n < 8; n++) {
        fill_sentinel(&a, sizeof a);
        pools.fail_after("cuMemPoolGetAttribute", n, CUDA_ERROR_INVALID_HANDLE);
        assert_error(strided_memory_resource_pool_attributes(mr, &a), STRIDED_ERR_CUDA,
                     "pool_attributes", "cuMemPoolGetAttribute failed");
        assert_untouched(&a, sizeof a);
        assert_null(fake.current_context());
    }
    strided_memory_resource_release(mr);
}

/* Device options checked after the device, in cuda.core's order; nothing
 * is created when a check fails. */
static void test_device_pool_option_rules(void **state)
{
    strided_memory_resource *mr;
    const strided_device_pool_options ipc = {true, -1}, negative = {false, -1};

    (void)state;
    fake.reset(2, 0, 1);
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_device_pool_resource_create(5, &ipc, &mr), STRIDED_ERR_INVALID_ARGUMENT,
                 "device_pool_resource_create",
                 "device 5 does not exist; there are 2 CUDA devices");
    assert_error(strided_device_pool_resource_create(0, &ipc, &mr), STRIDED_ERR_OVERFLOW,
                 "device_pool_resource_create", "can't convert negative value to size_t");
    assert_error(strided_device_pool_resource_create(0, &negative, &mr), STRIDED_ERR_OVERFLOW,
                 "device_pool_resource_create",
                 "can't convert negative value to size_t: max_size is -1");
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(fake.calls("cuMemPoolCreate"), 0);
    assert_null(fake.current_context());

    fake.reset(2, 0, 0);
    assert_error(strided_device_pool_resource_create(0, &device_defaults, &mr),
                 STRIDED_ERR_UNSUPPORTED, "device_pool_resource_create",
                 "device 0 does not support memory pools");
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(fake.calls("cuMemPoolCreate"), 0);
    fake.reset(2, 0, 1);
}

/* A driver call fails while creating: STRIDED_ERR_CUDA naming it, nothing
 * made, no pool left, no context left current. */
static void check_pool_call_fails(const char *entry, long after, strided_status (*create)(void))
{
    char text[128];
    fake.reset(2, 0, 1);
    pools.fail_after(entry, after, CUDA_ERROR_NOT_SUPPORTED);
    snprintf(text, sizeof text, "%s failed: CUDA_ERROR_NOT_SUPPORTED", entry);
    assert_error(create(), STRIDED_ERR_CUDA, NULL, text);
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_NOT_SUPPORTED);
    assert_int_equal(pools.live(), 0);
    assert_null(fake.current_context());
}

static strided_memory_resource *made;

static strided_status make_device_pool(void)
{
    return strided_device_pool_resource_create(0, &device_defaults, &made);
}

static strided_status make_current_pool(void)
{
    return strided_device_resource_create(0, &made);
}

static strided_status make_pinned_pool(void)
{
    return strided_pinned_pool_resource_create(&pinned_defaults, &made);
}

static strided_status make_managed_pool(void)
{
    return strided_managed_pool_resource_create(0, &managed_defaults, &made);
}

static strided_status make_host_numa_pool(void)
{
    const strided_managed_pool_options o = {"host_numa", false, 0};
    return strided_managed_pool_resource_create(1, &o, &made);
}

static strided_status make_legacy_pinned(void)
{
    return strided_legacy_pinned_resource_create(&made);
}

static void test_pool_create_failures(void **state)
{
    (void)state;
    made = NULL;
    check_pool_call_fails("cuMemPoolCreate", 0, make_device_pool);
    check_pool_call_fails("cuMemPoolCreate", 0, make_pinned_pool);
    check_pool_call_fails("cuMemPoolCreate", 0, make_managed_pool);
    check_pool_call_fails("cuMemPoolGetAttribute", 0, make_current_pool);
    check_pool_call_fails("cuDeviceGetAttribute", 0, make_device_pool);
    check_pool_call_fails("cuDeviceGetAttribute", 0, make_host_numa_pool);
    check_pool_call_fails("cuCtxSetCurrent", 0, make_legacy_pinned);
    assert_null(made);
}

/* The n-th library allocation fails while creating: STRIDED_ERR_OUT_OF_MEMORY,
 * nothing leaks, no pool is left, until a call succeeds. */
static void check_pool_out_of_memory(strided_status (*create)(void), const char *op)
{
    long n;
    fake.reset(2, 0, 1);
    for (n = 0; n < 100; n++) {
        made = NULL;
        strided__fail_allocation_after(n);
        strided_status s = create();
        strided__fail_allocation_after(-1);
        if (s == STRIDED_OK) {
            strided_memory_resource_release(made);
            break;
        }
        assert_error(s, STRIDED_ERR_OUT_OF_MEMORY, op, NULL);
        assert_null(made);
        assert_int_equal(pools.live(), 0);
        assert_null(fake.current_context());
    }
    assert_true(n > 0 && n < 100);
    assert_int_equal(pools.live(), 0);
}

static void test_pool_create_out_of_memory(void **state)
{
    (void)state;
    check_pool_out_of_memory(make_device_pool, "device_pool_resource_create");
    check_pool_out_of_memory(make_pinned_pool, "pinned_pool_resource_create");
    check_pool_out_of_memory(make_managed_pool, "managed_pool_resource_create");
    check_pool_out_of_memory(make_legacy_pinned, "legacy_pinned_resource_create");
}

static strided_memory_resource *pinned_pool(bool has_numa_id, int64_t numa_id, int64_t max_size)
{
    strided_memory_resource *mr = NULL;
    const strided_pinned_pool_options o = {false, max_size, has_numa_id, numa_id};
    assert_ok(strided_pinned_pool_resource_create(&o, &mr));
    return mr;
}

static void test_pinned_pool(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = pinned_pool(false, 0, 4096);
    check_props(mr, true, true, false, -1, true);
    assert_true(strided_memory_resource_pool(mr).owned);
    check_location(mr, STRIDED_LOCATION_HOST, -1);
    fake_cuda_pool p = pool_of(mr);
    check_fake_pool(&p, CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, -1, 4096);
    assert_null(fake.current_context());

    assert_ok(strided_buffer_alloc(mr, 100, STREAM_A, &b));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemHostAlloc"), 0);
    memset(strided_buffer_ptr(b), 3, 100);
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(info.device_id, -1);
    assert_true(info.pooled);
    info = query(strided_buffer_ptr(b));
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(info.device_id, 0);
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_A);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
    assert_ok(strided_memory_resource_close(mr));
    assert_int_equal(pools.live(), 0);
    assert_error(strided_buffer_alloc(mr, 1, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "PinnedMemoryResource has been closed");
    strided_memory_resource_release(mr);
    assert_int_equal(fake.live_bytes(), 0);

    /* On a NUMA node; the fake's host has nodes 0 and 1 only. */
    mr = pinned_pool(true, 1, 0);
    check_location(mr, STRIDED_LOCATION_HOST_NUMA, 1);
    p = pool_of(mr);
    check_fake_pool(&p, CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA, 1, 0);
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 0);
    fill_sentinel(&mr, sizeof mr);
    const strided_pinned_pool_options far = {false, 0, true, 7};
    assert_error(strided_pinned_pool_resource_create(&far, &mr), STRIDED_ERR_CUDA,
                 "pinned_pool_resource_create", "cuMemPoolCreate failed: CUDA_ERROR_INVALID_VALUE");
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(pools.live(), 0);
}

/* Without options: cuMemHostAlloc, no pool; closing refuses allocations. */
static void test_pinned_without_options(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b;

    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_pinned_pool_resource_create(NULL, &mr));
    check_props(mr, true, true, false, -1, false);
    strided_memory_pool_info info = strided_memory_resource_pool(mr);
    assert_null(info.handle);
    assert_int_equal(info.location.type, STRIDED_LOCATION_NONE);
    assert_ok(strided_buffer_alloc(mr, 10, NULL, &b));
    assert_int_equal(fake.calls("cuMemHostAlloc"), 1);
    strided_buffer_release(b);
    assert_ok(strided_memory_resource_close(mr));
    assert_int_equal(fake.calls("cuMemPoolDestroy"), 0);
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_alloc(mr, 10, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "PinnedMemoryResource has been closed");
    assert_untouched(&b, sizeof b);
    strided_memory_resource_release(mr);
    assert_int_equal(fake.live_bytes(), 0);
}

static void test_legacy_pinned(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_legacy_pinned_resource_create(&mr));
    check_props(mr, true, true, false, -1, false);
    assert_null(strided_memory_resource_pool(mr).handle);
    assert_ok(strided_buffer_alloc(mr, 300, STREAM_A, &b));
    assert_int_equal(fake.calls("cuMemAllocHost"), 1);
    assert_int_equal(fake.calls("cuMemHostAlloc"), 0);
    assert_null(fake.current_context());
    memset(strided_buffer_ptr(b), 1, 300);
    assert_int_equal(strided_buffer_memory_info(b).kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(query(strided_buffer_ptr(b)).kind, STRIDED_MEMORY_PINNED);
    assert_ok(strided_buffer_set_deallocation_stream(b, STREAM_B));
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), STREAM_B);
    assert_int_equal(fake.calls("cuMemFreeHost"), 1);
    assert_int_equal(fake.live_bytes(), 0);
    /* Nothing to allocate for 0 bytes. */
    assert_ok(strided_buffer_alloc(mr, 0, NULL, &b));
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemAllocHost"), 1);
    fake.fail_next("cuMemAllocHost", CUDA_ERROR_OUT_OF_MEMORY);
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_alloc(mr, 8, NULL, &b), STRIDED_ERR_CUDA, "alloc",
                 "cuMemAllocHost failed: CUDA_ERROR_OUT_OF_MEMORY");
    assert_untouched(&b, sizeof b);
    assert_ok(strided_memory_resource_close(mr));
    assert_error(strided_buffer_alloc(mr, 8, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "LegacyPinnedMemoryResource has been closed");
    strided_memory_resource_release(mr);
    assert_null(fake.current_context());
}

/* cuda.core's table of preferred locations for managed pools, the rows
 * that make a pool: where the pool is placed and what device_id says. */
typedef struct managed_row {
    int line;
    strided_managed_pool_options options;
    strided_memory_location_type type;
    int id;
    int location_type; /* what cuMemPoolCreate is given */
    int device_id;
} managed_row;

static const managed_row managed_rows[] = {
    CASE({NULL, false, 0}, STRIDED_LOCATION_NONE, -1, CU_MEM_LOCATION_TYPE_NONE, -1),
    CASE({NULL, true, 0}, STRIDED_LOCATION_DEVICE, 0, CU_MEM_LOCATION_TYPE_DEVICE, 0),
    CASE({NULL, true, 1}, STRIDED_LOCATION_DEVICE, 1, CU_MEM_LOCATION_TYPE_DEVICE, 1),
    CASE({NULL, true, -1}, STRIDED_LOCATION_HOST, -1, CU_MEM_LOCATION_TYPE_HOST, -1),
    CASE({"device", true, 0}, STRIDED_LOCATION_DEVICE, 0, CU_MEM_LOCATION_TYPE_DEVICE, 0),
    CASE({"device", true, 1}, STRIDED_LOCATION_DEVICE, 1, CU_MEM_LOCATION_TYPE_DEVICE, 1),
    CASE({"host", false, 0}, STRIDED_LOCATION_HOST, -1, CU_MEM_LOCATION_TYPE_HOST, -1),
    CASE({"host_numa", true, 1}, STRIDED_LOCATION_HOST_NUMA, 1, CU_MEM_LOCATION_TYPE_HOST_NUMA, -1),
    CASE({"host_numa", false, 0}, STRIDED_LOCATION_HOST_NUMA, 0, CU_MEM_LOCATION_TYPE_HOST_NUMA,
         -1),
};

static void test_managed_pool_locations(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(managed_rows); i++) {
        const managed_row *r = &managed_rows[i];
        strided_memory_resource *mr = NULL;
        fake.reset(2, 0, 1);
        strided_status s = strided_managed_pool_resource_create(0, &r->options, &mr);
        if (s != STRIDED_OK)
            fail_at(AT(r), "%s\n", strided_last_error());
        check_props(mr, true, true, true, r->device_id, true);
        strided_memory_pool_info info = strided_memory_resource_pool(mr);
        if (info.location.type != r->type || info.location.id != r->id || !info.owned)
            fail_at(AT(r), "location (%d, %d), owned %d\n", (int)info.location.type,
                    info.location.id, (int)info.owned);
        fake_cuda_pool p = pool_of(mr);
        if (p.alloc_type != CU_MEM_ALLOCATION_TYPE_MANAGED || p.location_type != r->location_type ||
            p.location_id != r->id || p.max_size != 0 || p.handle_types != CU_MEM_HANDLE_TYPE_NONE)
            fail_at(AT(r), "cuMemPoolCreate got type %d, location (%d, %d), max %zu\n",
                    p.alloc_type, p.location_type, p.location_id, p.max_size);
        strided_memory_resource_release(mr);
        assert_int_equal(pools.live(), 0);
        assert_null(fake.current_context());
    }
}

/* Managed pool memory: managed, stream-ordered, of the resource's device
 * when the pool prefers none. */
static void test_managed_pool_memory(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_managed_pool_resource_create(1, &managed_defaults, &mr));
    assert_ok(strided_buffer_alloc(mr, 256, STREAM_B, &b));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemAllocManaged"), 0);
    memset(strided_buffer_ptr(b), 2, 256);
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_MANAGED);
    assert_true(info.managed && info.pooled);
    info = query(strided_buffer_ptr(b));
    assert_int_equal(info.kind, STRIDED_MEMORY_MANAGED);
    assert_int_equal(info.device_id, 1);
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_int_equal(fake.calls("cuMemFree"), 0);
    assert_ok(strided_memory_resource_close(mr));
    assert_error(strided_buffer_alloc(mr, 1, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "ManagedMemoryResource has been closed");
    strided_memory_resource_release(mr);
    assert_int_equal(fake.live_bytes(), 0);

    /* Without options: cuMemAllocManaged on the device, as before. */
    assert_ok(strided_managed_pool_resource_create(1, NULL, &mr));
    check_props(mr, true, true, true, 1, false);
    assert_null(strided_memory_resource_pool(mr).handle);
    assert_ok(strided_buffer_alloc(mr, 8, NULL, &b));
    assert_int_equal(fake.calls("cuMemAllocManaged"), 1);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    assert_int_equal(fake.live_bytes(), 0);
}

/* host_numa without a node takes the node closest to the resource's
 * device; a system without NUMA cannot say. */
static void test_managed_pool_host_numa_of_the_device(void **state)
{
    strided_memory_resource *mr = NULL;
    const strided_managed_pool_options o = {"host_numa", false, 0};

    (void)state;
    fake.reset(2, 0, 1);
    pools.set_host_numa_id(1);
    assert_ok(strided_managed_pool_resource_create(1, &o, &mr));
    check_location(mr, STRIDED_LOCATION_HOST_NUMA, 1);
    assert_int_equal(pool_of(mr).location_id, 1);
    strided_memory_resource_release(mr);

    pools.set_host_numa_id(-1);
    long creates = fake.calls("cuMemPoolCreate");
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_managed_pool_resource_create(1, &o, &mr), STRIDED_ERR_UNSUPPORTED,
                 "managed_pool_resource_create",
                 "Cannot determine host NUMA ID for the current CUDA device. The system may "
                 "not support NUMA, or no CUDA context is active. Set preferred_location to "
                 "an explicit NUMA node ID or call Device.set_current() first.: device 1 has "
                 "no host NUMA node");
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(fake.calls("cuMemPoolCreate"), creates);
    assert_null(fake.current_context());
    /* An explicit node needs no device to say. */
    const strided_managed_pool_options explicit_node = {"host_numa", true, 0};
    assert_ok(strided_managed_pool_resource_create(1, &explicit_node, &mr));
    strided_memory_resource_release(mr);
    fake.reset(2, 0, 1);
}

/* A preferred device, or the resource's device, that does not exist. */
static void test_managed_pool_missing_devices(void **state)
{
    strided_memory_resource *mr;
    const strided_managed_pool_options far = {"device", true, 2};

    (void)state;
    fake.reset(2, 0, 1);
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_managed_pool_resource_create(0, &far, &mr), STRIDED_ERR_INVALID_ARGUMENT,
                 "managed_pool_resource_create",
                 "device 2 does not exist; there are 2 CUDA devices");
    assert_error(strided_managed_pool_resource_create(3, &managed_defaults, &mr),
                 STRIDED_ERR_INVALID_ARGUMENT, "managed_pool_resource_create",
                 "device 3 does not exist");
    /* The rules come before the driver's answers. */
    const strided_managed_pool_options bad = {"bogus", false, 0};
    assert_error(strided_managed_pool_resource_create(3, &bad, &mr), STRIDED_ERR_INVALID_ARGUMENT,
                 "managed_pool_resource_create", "'bogus' is not a valid");
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(fake.calls("cuMemPoolCreate"), 0);
    assert_null(fake.current_context());
}

/* Another device's context is current in the caller: every pool call
 * leaves it current. */
static void test_pool_calls_restore_the_callers_context(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;
    CUcontext c1 = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    assert_int_equal(driver()->cuDevicePrimaryCtxRetain(&c1, 1), CUDA_SUCCESS);
    assert_int_equal(driver()->cuCtxSetCurrent(c1), CUDA_SUCCESS);
    mr = device_pool(0, 0);
    assert_ptr_equal(fake.current_context(), c1);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_int_equal(query(strided_buffer_ptr(b)).device_id, 0);
    (void)attributes_of(mr);
    assert_ptr_equal(fake.current_context(), c1);
    strided_buffer_release(b);
    assert_ok(strided_memory_resource_close(mr));
    assert_ptr_equal(fake.current_context(), c1);
    strided_memory_resource_release(mr);
    assert_ptr_equal(fake.current_context(), c1);
    assert_int_equal(driver()->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_creates_refuse_a_null_out),
        cmocka_unit_test(test_pinned_pool_option_rules),
        cmocka_unit_test(test_managed_pool_option_rules),
        cmocka_unit_test(test_close_user_resource),
        cmocka_unit_test(test_close_host_resource),
        cmocka_unit_test(test_resources_without_a_pool),
        cmocka_unit_test(test_pool_attributes_null_arguments),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_pool_resources_need_a_driver),
#elif defined(DRIVER_FAKE)
        cmocka_unit_test(test_device_pool),
        cmocka_unit_test(test_device_pool_max_size),
        cmocka_unit_test(test_pool_outlives_the_callers_reference),
        cmocka_unit_test(test_close_device_pool),
        cmocka_unit_test(test_close_reports_a_failing_destroy),
        cmocka_unit_test(test_device_current_pool),
        cmocka_unit_test(test_pool_attributes),
        cmocka_unit_test(test_device_pool_option_rules),
        cmocka_unit_test(test_pool_create_failures),
        cmocka_unit_test(test_pool_create_out_of_memory),
        cmocka_unit_test(test_pinned_pool),
        cmocka_unit_test(test_pinned_without_options),
        cmocka_unit_test(test_legacy_pinned),
        cmocka_unit_test(test_managed_pool_locations),
        cmocka_unit_test(test_managed_pool_memory),
        cmocka_unit_test(test_managed_pool_host_numa_of_the_device),
        cmocka_unit_test(test_managed_pool_missing_devices),
        cmocka_unit_test(test_pool_calls_restore_the_callers_context),
#endif
    };

#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
    find_pool_controls();
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
