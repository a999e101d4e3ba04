/*
 * Tests of managed memory's advice and page moves (strided/buffer.h):
 * strided_buffer_advise, the queries read_mostly, preferred_location and
 * accessed_by, strided_buffer_set_accessed_by, prefetches and discards,
 * and the optional entry points of the driver table behind them.
 *
 * Built four times: DRIVER_NONE (every check made before the driver, on
 * memory a resource claims is managed), DRIVER_FAKE (the fake driver of
 * CUDA 13.0: the CUmemLocation entry points, what each call is given, in
 * which context, and what the driver then answers), DRIVER_FAKE_12000 (a
 * CUDA 12.0 driver: the entry points that take a device ordinal, host NUMA
 * locations refused, no discards) and DRIVER_FAKE_NO_DISCARD (a driver
 * without cuMemDiscardBatchAsync: it loads, and only discards are
 * refused).
 */
#include "test_memory.h"

#include "cuda/driver.h"
#include "test_cuda.h"

#define STREAM ((void *)0x5a)

static const strided_memory_location NONE = {STRIDED_LOCATION_NONE, -1};
static const strided_memory_location HOST = {STRIDED_LOCATION_HOST, -1};
static const strided_memory_location HOST_NUMA_CURRENT = {STRIDED_LOCATION_HOST_NUMA_CURRENT, -1};

static strided_memory_location device(int id)
{
    return (strided_memory_location){STRIDED_LOCATION_DEVICE, id};
}

static strided_memory_location host_numa(int id)
{
    return (strided_memory_location){STRIDED_LOCATION_HOST_NUMA, id};
}

/* Managed memory of device 0, as a resource claims it. */
static const strided_memory_resource_props managed_props = {true, true, true, 0, false};

/* Every operation on memory that is not managed: cuda.core's sentence, with
 * the operation's name. */
static void test_host_memory_is_refused(void **state)
{
    unsigned char memory[64];
    strided_buffer *b = NULL;
    bool flag = true;
    strided_memory_location loc = device(7);
    strided_memory_location list[2];
    size_t n = 99;

    (void)state;
    assert_ok(strided_buffer_wrap(memory, sizeof memory, NULL, NULL, &b));
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_READ_MOSTLY, NONE),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise",
                 "advise requires a managed-memory allocation");
    assert_error(strided_buffer_prefetch(b, device(0), NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "prefetch", "prefetch requires a managed-memory allocation");
    assert_error(strided_buffer_discard(b, NULL), STRIDED_ERR_INVALID_ARGUMENT, "discard",
                 "discard requires a managed-memory allocation");
    assert_error(strided_buffer_discard_prefetch(b, HOST, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "discard_prefetch", "discard_prefetch requires a managed-memory allocation");
    assert_error(strided_buffer_read_mostly(b, &flag), STRIDED_ERR_INVALID_ARGUMENT, "read_mostly",
                 "read_mostly requires a managed-memory allocation");
    assert_error(strided_buffer_preferred_location(b, &loc), STRIDED_ERR_INVALID_ARGUMENT,
                 "preferred_location", "preferred_location requires a managed-memory allocation");
    assert_error(strided_buffer_accessed_by(b, list, 2, &n), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "accessed_by requires a managed-memory allocation");
    assert_error(strided_buffer_set_accessed_by(b, &loc, 1), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "advise requires a managed-memory allocation");
    /* The outputs are untouched. */
    assert_true(flag);
    assert_int_equal(loc.id, 7);
    assert_int_equal(n, 99);
    strided_buffer_release(b);
}

static void test_null_and_unknown_arguments(void **state)
{
    counting c;
    strided_buffer *b = claimed(&c, managed_props, 64);
    strided_memory_location loc;
    size_t n;

    (void)state;
    assert_error(strided_buffer_advise(NULL, STRIDED_ADVISE_SET_READ_MOSTLY, NONE),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise", "the buffer is required");
    assert_error(strided_buffer_advise(b, (strided_memory_advice)0, NONE),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise",
                 "unknown advice 0 (the advice is a strided_memory_advice)");
    assert_error(strided_buffer_advise(b, (strided_memory_advice)7, NONE),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise",
                 "unknown advice 7 (the advice is a strided_memory_advice)");
    assert_error(strided_buffer_read_mostly(b, NULL), STRIDED_ERR_INVALID_ARGUMENT, "read_mostly",
                 "the buffer and out are required");
    assert_error(strided_buffer_preferred_location(NULL, &loc), STRIDED_ERR_INVALID_ARGUMENT,
                 "preferred_location", "the buffer and out are required");
    assert_error(strided_buffer_accessed_by(b, NULL, 2, &n), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "out is required for a capacity of 2");
    assert_error(strided_buffer_accessed_by(b, &loc, 1, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "the buffer and out_count are required");
    assert_error(strided_buffer_set_accessed_by(b, NULL, 1), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "the buffer and, for 1 locations, the locations are required");
    assert_error(strided_buffer_prefetch(NULL, HOST, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "prefetch", "the buffer is required");
    assert_error(strided_buffer_discard(NULL, NULL), STRIDED_ERR_INVALID_ARGUMENT, "discard",
                 "the buffer is required");
    assert_error(strided_buffer_discard_prefetch(NULL, HOST, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "discard_prefetch", "the buffer is required");
    strided_buffer_release(b);
}

/* The location rules come before the driver, so they hold without one. */
static void test_location_rules(void **state)
{
    counting c;
    strided_buffer *b = claimed(&c, managed_props, 64);

    (void)state;
    assert_error(strided_buffer_prefetch(b, NONE, NULL), STRIDED_ERR_INVALID_ARGUMENT, "prefetch",
                 "location is required");
    assert_error(strided_buffer_discard_prefetch(b, NONE, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "discard_prefetch", "location is required");
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, NONE),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise", "location is required");
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_ACCESSED_BY, NONE),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise", "location is required");
    strided_memory_location unknown = {(strided_memory_location_type)9, 0};
    assert_error(strided_buffer_prefetch(b, unknown, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "prefetch", "unknown location type 9");
    assert_error(strided_buffer_prefetch(b, device(-1), NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "prefetch", "a device location needs a device ordinal (>= 0), got -1");
    assert_error(strided_buffer_prefetch(b, host_numa(-2), NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "prefetch", "a host_numa location needs a NUMA node (>= 0), got -2");
    /* Mappings are kept for devices and the host only. */
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_ACCESSED_BY, host_numa(0)),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise",
                 "advise CU_MEM_ADVISE_SET_ACCESSED_BY does not support "
                 "location_type='host_numa'");
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_ACCESSED_BY, HOST_NUMA_CURRENT),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise",
                 "advise CU_MEM_ADVISE_UNSET_ACCESSED_BY does not support "
                 "location_type='host_numa_current'");
    /* The whole list is checked before any advice: the second is refused. */
    strided_memory_location list[] = {device(0), host_numa(1)};
    assert_error(strided_buffer_set_accessed_by(b, list, 2), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by",
                 "advise CU_MEM_ADVISE_SET_ACCESSED_BY does not support "
                 "location_type='host_numa'");
    strided_buffer_release(b);
}

#if defined(DRIVER_NONE)

/* Past the rules that need no driver, a claimed managed buffer needs one,
 * even when it is empty (a device location could not be checked). */
static void test_no_driver(void **state)
{
    counting c;
    strided_buffer *b = claimed(&c, managed_props, 64);
    strided_buffer *empty = claimed(&c, managed_props, 0);
    bool flag = false;

    (void)state;
    assert_status(strided_buffer_advise(b, STRIDED_ADVISE_SET_READ_MOSTLY, HOST),
                  STRIDED_ERR_NO_CUDA_DRIVER);
    assert_status(strided_buffer_prefetch(empty, device(0), NULL), STRIDED_ERR_NO_CUDA_DRIVER);
    assert_status(strided_buffer_read_mostly(b, &flag), STRIDED_ERR_NO_CUDA_DRIVER);
    assert_status(strided_buffer_discard(b, NULL), STRIDED_ERR_NO_CUDA_DRIVER);
    assert_status(strided_buffer_set_accessed_by(b, NULL, 0), STRIDED_ERR_NO_CUDA_DRIVER);
    strided_buffer_release(b);
    strided_buffer_release(empty);
}

#else

/* A managed resource of device (cuMemAllocManaged) and a buffer of size
 * bytes from it; the resource is released (the buffer holds it). */
static strided_buffer *managed(int on_device, size_t size)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    assert_ok(strided_managed_resource_create(on_device, &mr));
    assert_ok(strided_buffer_alloc(mr, size, NULL, &b));
    strided_memory_resource_release(mr);
    return b;
}

static fake_cuda_managed info_of(const strided_buffer *b)
{
    fake_cuda_managed m;
    assert_true(fake.managed_info((uintptr_t)strided_buffer_ptr(b), &m));
    return m;
}

static fake_cuda_managed_op last_op(void)
{
    fake_cuda_managed_op op;
    assert_true(fake.last_managed_op(&op));
    return op;
}

static void assert_location(strided_memory_location got, strided_memory_location_type type, int id)
{
    assert_int_equal(got.type, type);
    if (type == STRIDED_LOCATION_DEVICE || type == STRIDED_LOCATION_HOST_NUMA)
        assert_int_equal(got.id, id);
}

static long driver_calls(void)
{
    return fake.calls("cuMemAdvise") + fake.calls("cuMemAdvise_v2") +
           fake.calls("cuMemPrefetchAsync") + fake.calls("cuMemPrefetchAsync_v2") +
           fake.calls("cuMemRangeGetAttribute") + fake.calls("cuMemDiscardBatchAsync") +
           fake.calls("cuMemDiscardAndPrefetchBatchAsync");
}

/* Which entry points the table holds, by the driver's version. */
static void test_optional_entry_points(void **state)
{
    const strided__driver *cu = NULL;

    (void)state;
    assert_ok(strided__cuda("test", &cu));
    assert_non_null(cu->cuMemRangeGetAttribute);
    assert_non_null(cu->cuMemPoolSetAccess);
    assert_non_null(cu->cuMemPoolGetAccess);
    assert_non_null(cu->cuStreamIsCapturing);
    assert_non_null(cu->cuMemAdvise);
    assert_non_null(cu->cuMemPrefetchAsync);
    /* No driver here is of CUDA 13.2. */
    assert_null(cu->cuMemcpyWithAttributesAsync);
#if defined(DRIVER_FAKE_12000)
    assert_int_equal(cu->version, 12000);
    assert_null(cu->cuMemAdvise_v2);
    assert_null(cu->cuMemPrefetchAsync_v2);
    assert_null(cu->cuMemDiscardBatchAsync);
    assert_null(cu->cuMemDiscardAndPrefetchBatchAsync);
#else
    /* Asked at 12.2, the driver gives the other variant. */
    assert_non_null(cu->cuMemAdvise_v2);
    assert_true((void (*)(void))cu->cuMemAdvise_v2 != (void (*)(void))cu->cuMemAdvise);
    assert_non_null(cu->cuMemPrefetchAsync_v2);
    assert_true((void (*)(void))cu->cuMemPrefetchAsync_v2 !=
                (void (*)(void))cu->cuMemPrefetchAsync);
    assert_non_null(cu->cuMemDiscardAndPrefetchBatchAsync);
#if defined(DRIVER_FAKE_NO_DISCARD)
    assert_null(cu->cuMemDiscardBatchAsync);
#else
    assert_non_null(cu->cuMemDiscardBatchAsync);
#endif
#endif
}

#if defined(DRIVER_FAKE) || defined(DRIVER_FAKE_NO_DISCARD)
#define ADVISE "cuMemAdvise_v2"
#define PREFETCH "cuMemPrefetchAsync_v2"
#else
#define ADVISE "cuMemAdvise"
#define PREFETCH "cuMemPrefetchAsync"
#endif

static void test_read_mostly(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_buffer *b = managed(1, 4096);
    bool flag = true;
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_false(flag);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_READ_MOSTLY, device(5)));
    fake_cuda_managed_op op = last_op();
    assert_string_equal(op.function, ADVISE);
    assert_int_equal(op.address, (uintptr_t)strided_buffer_ptr(b));
    assert_int_equal(op.size, 4096);
    assert_int_equal(op.advice, CU_MEM_ADVISE_SET_READ_MOSTLY);
    /* In the memory's device's context, which is left as it was. */
    assert_int_equal(op.device, 1);
    assert_null(fake.current_context());
    assert_int_equal(info_of(b).read_mostly, 1);
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_true(flag);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_READ_MOSTLY, NONE));
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_false(flag);
    strided_buffer_release(b);
}

static void test_preferred_location(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_buffer *b = managed(0, 4096);
    strided_memory_location loc = device(9);
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_location(loc, STRIDED_LOCATION_NONE, -1);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, device(1)));
    assert_int_equal(last_op().location_type, CU_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(last_op().location_id, 1);
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_location(loc, STRIDED_LOCATION_DEVICE, 1);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, HOST));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_location(loc, STRIDED_LOCATION_HOST, -1);
#if defined(DRIVER_FAKE_12000)
    /* A CUDA 12.0 driver takes a device ordinal: no NUMA node. */
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, host_numa(1)),
                 STRIDED_ERR_UNSUPPORTED, "advise",
                 "a host_numa location needs a driver for CUDA 12.2 or later (cuMemAdvise with "
                 "a CUmemLocation); this driver supports CUDA 12.0");
    assert_int_equal(info_of(b).preferred_type, CU_MEM_LOCATION_TYPE_HOST);
#else
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, host_numa(1)));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_location(loc, STRIDED_LOCATION_HOST_NUMA, 1);
    /* The calling thread's node: the fake resolves it to node 0. */
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, HOST_NUMA_CURRENT));
    assert_int_equal(last_op().location_type, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT);
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_location(loc, STRIDED_LOCATION_HOST_NUMA, 0);
#endif
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_PREFERRED_LOCATION, device(-4)));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_location(loc, STRIDED_LOCATION_NONE, -1);
    strided_buffer_release(b);
}

static void test_accessed_by(void **state)
{
    (void)state;
    fake.reset(3, 0, 1);
    strided_buffer *b = managed(0, 4096);
    strided_memory_location list[4];
    size_t n = 9;
    assert_ok(strided_buffer_accessed_by(b, list, 4, &n));
    assert_int_equal(n, 0);
    /* Advised in this order; listed devices first, ascending, then the
     * host. */
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_ACCESSED_BY, device(2)));
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_ACCESSED_BY, HOST));
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_ACCESSED_BY, device(0)));
    fake_cuda_managed m = info_of(b);
    assert_int_equal(m.n_accessed, 3);
    assert_int_equal(m.accessed[1], -1);
    assert_ok(strided_buffer_accessed_by(b, list, 4, &n));
    assert_int_equal(n, 3);
    assert_location(list[0], STRIDED_LOCATION_DEVICE, 0);
    assert_location(list[1], STRIDED_LOCATION_DEVICE, 2);
    assert_location(list[2], STRIDED_LOCATION_HOST, -1);
    /* Too little room: refused, nothing written. */
    strided_memory_location small[2] = {device(7), device(7)};
    n = 9;
    assert_error(strided_buffer_accessed_by(b, small, 2, &n), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "3 locations are advised, room for 2");
    assert_int_equal(n, 9);
    assert_int_equal(small[0].id, 7);
    /* A device that does not exist is refused before the driver. */
    long before = driver_calls();
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_ACCESSED_BY, device(3)),
                 STRIDED_ERR_INVALID_ARGUMENT, "advise",
                 "device 3 does not exist; there are 3 CUDA devices");
    assert_int_equal(driver_calls(), before);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_UNSET_ACCESSED_BY, HOST));
    assert_ok(strided_buffer_accessed_by(b, list, 4, &n));
    assert_int_equal(n, 2);
    /* Each list the driver's answer is read into fails to be allocated in
     * turn: nothing is written, nothing advised. */
    long advice = fake.calls(ADVISE);
    for (long k = 0; k < 2; k++) {
        strided__fail_allocation_after(k);
        n = 9;
        assert_status(strided_buffer_accessed_by(b, list, 4, &n), STRIDED_ERR_OUT_OF_MEMORY);
        strided__fail_allocation_after(k);
        assert_status(strided_buffer_set_accessed_by(b, &HOST, 1), STRIDED_ERR_OUT_OF_MEMORY);
        strided__fail_allocation_after(-1);
        assert_int_equal(n, 9);
    }
    assert_int_equal(fake.calls(ADVISE), advice);
    strided_buffer_release(b);
}

/* Setting the list advises only the changes. */
static void test_set_accessed_by(void **state)
{
    (void)state;
    fake.reset(3, 0, 1);
    strided_buffer *b = managed(0, 4096);
    strided_memory_location list[4];
    size_t n = 0;
    const strided_memory_location first[] = {device(1), HOST, device(1)};
    assert_ok(strided_buffer_set_accessed_by(b, first, 3));
    assert_ok(strided_buffer_accessed_by(b, list, 4, &n));
    assert_int_equal(n, 2);
    assert_location(list[0], STRIDED_LOCATION_DEVICE, 1);
    assert_location(list[1], STRIDED_LOCATION_HOST, -1);
    long advice = fake.calls(ADVISE);
    const strided_memory_location second[] = {device(2), device(1)};
    assert_ok(strided_buffer_set_accessed_by(b, second, 2));
    /* One unset (the host), one set (device 2). */
    assert_int_equal(fake.calls(ADVISE) - advice, 2);
    assert_ok(strided_buffer_accessed_by(b, list, 4, &n));
    assert_int_equal(n, 2);
    assert_location(list[0], STRIDED_LOCATION_DEVICE, 1);
    assert_location(list[1], STRIDED_LOCATION_DEVICE, 2);
    /* Nothing to change: no advice. */
    advice = fake.calls(ADVISE);
    assert_ok(strided_buffer_set_accessed_by(b, second, 2));
    assert_int_equal(fake.calls(ADVISE), advice);
    /* A device that does not exist: nothing changes. */
    const strided_memory_location bad[] = {HOST, device(5)};
    assert_error(strided_buffer_set_accessed_by(b, bad, 2), STRIDED_ERR_INVALID_ARGUMENT,
                 "accessed_by", "device 5 does not exist; there are 3 CUDA devices");
    assert_int_equal(fake.calls(ADVISE), advice);
    assert_ok(strided_buffer_set_accessed_by(b, NULL, 0));
    assert_ok(strided_buffer_accessed_by(b, list, 4, &n));
    assert_int_equal(n, 0);
    strided_buffer_release(b);
}

static void test_prefetch(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_buffer *b = managed(0, 8192);
    assert_ok(strided_buffer_prefetch(b, device(1), STREAM));
    fake_cuda_managed_op op = last_op();
    assert_string_equal(op.function, PREFETCH);
    assert_int_equal(op.location_type, CU_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(op.location_id, 1);
    assert_ptr_equal(op.stream, STREAM);
    assert_int_equal(op.size, 8192);
    assert_int_equal(op.device, 0);
    assert_ok(strided_buffer_prefetch(b, HOST, NULL));
    assert_int_equal(info_of(b).prefetch_type, CU_MEM_LOCATION_TYPE_HOST);
    assert_null(last_op().stream);
#if defined(DRIVER_FAKE_12000)
    assert_error(strided_buffer_prefetch(b, HOST_NUMA_CURRENT, NULL), STRIDED_ERR_UNSUPPORTED,
                 "prefetch",
                 "a host_numa_current location needs a driver for CUDA 12.2 or later "
                 "(cuMemPrefetchAsync with a CUmemLocation); this driver supports CUDA 12.0");
#else
    assert_ok(strided_buffer_prefetch(b, host_numa(1), NULL));
    assert_int_equal(info_of(b).prefetch_type, CU_MEM_LOCATION_TYPE_HOST_NUMA);
    assert_int_equal(info_of(b).prefetch_id, 1);
#endif
    strided_buffer_release(b);
}

static void test_discard(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    fake.move_bytes(1);
    strided_buffer *b = managed(1, 512);
    unsigned char *bytes = strided_buffer_ptr(b);
    memset(bytes, 7, 512);
#if defined(DRIVER_FAKE)
    assert_ok(strided_buffer_discard(b, STREAM));
    fake_cuda_managed_op op = last_op();
    assert_string_equal(op.function, "cuMemDiscardBatchAsync");
    assert_ptr_equal(op.stream, STREAM);
    assert_int_equal(op.size, 512);
    assert_int_equal(op.device, 1);
    assert_int_equal(info_of(b).discards, 1);
    /* The fake marks discarded bytes. */
    assert_int_equal(bytes[0], 0xdd);
    assert_int_equal(bytes[511], 0xdd);
    memset(bytes, 7, 512);
#elif defined(DRIVER_FAKE_12000)
    assert_error(strided_buffer_discard(b, STREAM), STRIDED_ERR_UNSUPPORTED, "discard",
                 "discard needs a driver for CUDA 13.0 or later (cuMemDiscardBatchAsync); this "
                 "driver supports CUDA 12.0");
    assert_error(strided_buffer_discard_prefetch(b, device(0), STREAM), STRIDED_ERR_UNSUPPORTED,
                 "discard_prefetch",
                 "discard_prefetch needs a driver for CUDA 13.0 or later "
                 "(cuMemDiscardAndPrefetchBatchAsync); this driver supports CUDA 12.0");
    assert_int_equal(bytes[0], 7);
#else
    assert_error(strided_buffer_discard(b, STREAM), STRIDED_ERR_UNSUPPORTED, "discard",
                 "discard needs a driver for CUDA 13.0 or later (cuMemDiscardBatchAsync); this "
                 "driver supports CUDA 13.0");
    assert_int_equal(bytes[0], 7);
#endif
#if !defined(DRIVER_FAKE_12000)
    assert_ok(strided_buffer_discard_prefetch(b, device(0), STREAM));
    fake_cuda_managed_op dp = last_op();
    assert_string_equal(dp.function, "cuMemDiscardAndPrefetchBatchAsync");
    assert_int_equal(dp.location_type, CU_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(dp.location_id, 0);
    assert_ptr_equal(dp.stream, STREAM);
    assert_int_equal(info_of(b).prefetch_type, CU_MEM_LOCATION_TYPE_DEVICE);
    assert_int_equal(info_of(b).prefetch_id, 0);
    assert_int_equal(bytes[100], 0xdd);
#endif
    strided_buffer_release(b);
}

/* An empty buffer is checked, then nothing is asked of the driver. */
static void test_empty_buffer(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_buffer *b = managed(0, 0);
    bool flag = true;
    strided_memory_location loc = device(1);
    strided_memory_location list[1];
    size_t n = 5;
    long before = driver_calls();
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_PREFERRED_LOCATION, device(1)));
    assert_ok(strided_buffer_prefetch(b, HOST, NULL));
    assert_ok(strided_buffer_set_accessed_by(b, &loc, 1));
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_ok(strided_buffer_preferred_location(b, &loc));
    assert_ok(strided_buffer_accessed_by(b, list, 1, &n));
#if !defined(DRIVER_FAKE_12000)
    assert_ok(strided_buffer_discard_prefetch(b, HOST, NULL));
#endif
    assert_false(flag);
    assert_location(loc, STRIDED_LOCATION_NONE, -1);
    assert_int_equal(n, 0);
    assert_int_equal(driver_calls(), before);
    /* The location is still checked. */
    assert_error(strided_buffer_prefetch(b, device(2), NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "prefetch", "device 2 does not exist; there are 2 CUDA devices");
    strided_buffer_release(b);
}

/* Memory of a managed pool, and managed memory the driver describes. */
static void test_pool_and_wrapped_managed_memory(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_managed_pool_options o = {"device", true, 1};
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    assert_ok(strided_managed_pool_resource_create(0, &o, &mr));
    assert_ok(strided_buffer_alloc(mr, 1024, NULL, &b));
    assert_ok(strided_buffer_prefetch(b, device(1), NULL));
    assert_int_equal(info_of(b).prefetch_id, 1);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);

    void *memory = aligned_alloc(256, 256);
    assert_non_null(memory);
    fake_cuda_range r = {(uintptr_t)memory, 256, CU_MEMORYTYPE_DEVICE, 1, 1,
                         (uintptr_t)memory, NULL};
    fake.add_range(&r);
    assert_ok(strided_buffer_wrap(memory, 256, NULL, NULL, &b));
    assert_true(strided_buffer_memory_info(b).managed);
    assert_ok(strided_buffer_advise(b, STRIDED_ADVISE_SET_READ_MOSTLY, NONE));
    assert_int_equal(last_op().device, 1);
    strided_buffer_release(b);
    /* Part of the range: the fake advises the whole allocation. */
    assert_ok(strided_buffer_wrap((char *)memory + 128, 64, NULL, NULL, &b));
    bool flag = false;
    assert_ok(strided_buffer_read_mostly(b, &flag));
    assert_true(flag);
    strided_buffer_release(b);
    fake.remove_range((uintptr_t)memory);
    free(memory);
}

/* A failing driver call is reported in its words; the context is left as
 * it was. */
static void test_driver_failures(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_buffer *b = managed(0, 4096);
    bool flag;
    fake.fail_next(ADVISE, CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_buffer_advise(b, STRIDED_ADVISE_SET_READ_MOSTLY, NONE), STRIDED_ERR_CUDA,
                 "advise", ADVISE " failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_INVALID_VALUE);
    assert_null(fake.current_context());
    fake.fail_next("cuMemRangeGetAttribute", CUDA_ERROR_UNKNOWN);
    assert_error(strided_buffer_read_mostly(b, &flag), STRIDED_ERR_CUDA, "read_mostly",
                 "cuMemRangeGetAttribute failed: CUDA_ERROR_UNKNOWN (unknown error)");
    fake.fail_next(PREFETCH, CUDA_ERROR_OUT_OF_MEMORY);
    assert_status(strided_buffer_prefetch(b, HOST, NULL), STRIDED_ERR_CUDA);
    /* Setting the list fails at its second advice: the first stays. */
    const strided_memory_location list[] = {device(0), device(1)};
    fake.fail_after(ADVISE, 1, CUDA_ERROR_UNKNOWN);
    assert_status(strided_buffer_set_accessed_by(b, list, 2), STRIDED_ERR_CUDA);
    assert_int_equal(info_of(b).n_accessed, 1);
    assert_null(fake.current_context());
    strided_buffer_release(b);
}

/* What the driver refuses that strided does not check: a NUMA node the
 * system lacks. */
static void test_driver_refusal(void **state)
{
    (void)state;
    fake.reset(1, 0, 1);
    strided_buffer *b = managed(0, 4096);
#if defined(DRIVER_FAKE_12000)
    assert_status(strided_buffer_prefetch(b, host_numa(5), NULL), STRIDED_ERR_UNSUPPORTED);
#else
    assert_error(strided_buffer_prefetch(b, host_numa(5), NULL), STRIDED_ERR_CUDA, "prefetch",
                 PREFETCH " failed: CUDA_ERROR_INVALID_VALUE (invalid argument)");
#endif
    strided_buffer_release(b);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_memory_is_refused),
        cmocka_unit_test(test_null_and_unknown_arguments),
        cmocka_unit_test(test_location_rules),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_no_driver),
#else
        cmocka_unit_test(test_optional_entry_points),
        cmocka_unit_test(test_read_mostly),
        cmocka_unit_test(test_preferred_location),
        cmocka_unit_test(test_accessed_by),
        cmocka_unit_test(test_set_accessed_by),
        cmocka_unit_test(test_prefetch),
        cmocka_unit_test(test_discard),
        cmocka_unit_test(test_empty_buffer),
        cmocka_unit_test(test_pool_and_wrapped_managed_memory),
        cmocka_unit_test(test_driver_failures),
        cmocka_unit_test(test_driver_refusal),
#endif
    };

#if defined(DRIVER_NONE)
    use_no_driver();
#else
#if defined(DRIVER_FAKE_12000)
    setenv("FAKE_CUDA_DRIVER_VERSION", "12000", 1);
#elif defined(DRIVER_FAKE_NO_DISCARD)
    setenv("FAKE_CUDA_HIDE", "cuMemDiscardBatchAsync", 1);
#elif !defined(DRIVER_FAKE)
#error "define one DRIVER_ scenario"
#endif
    use_fake_driver(FAKE_CUDA_PATH, 2);
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
