/*
 * Tests of strided/resource.h: user-defined resources, the host resource,
 * and the pinned, device and managed resources.
 *
 * Built twice: DRIVER_NONE (no CUDA driver: the CUDA resources cannot be
 * made, everything host still works) and DRIVER_FAKE (the fake driver with
 * two devices: the CUDA resources allocate real memory through it, which the
 * fake counts, classifies and frees).
 */
#include "test_memory.h"

#include "cuda/driver.h"
#include "test_cuda.h"

static const strided_memory_resource_ops no_destroy_ops = {
    .allocate = counting_allocate, .deallocate = counting_deallocate, .destroy = NULL};

static void check_props(strided_memory_resource_props p, bool host, bool device, bool managed,
                        int device_id)
{
    assert_int_equal(p.host_accessible, host);
    assert_int_equal(p.device_accessible, device);
    assert_int_equal(p.managed, managed);
    assert_int_equal(p.device_id, device_id);
}

/* First on purpose: nothing host touches the driver (host-only memory must
 * work in a process that never initialised CUDA), so nothing has loaded it
 * yet. */
static void test_host_resource_never_loads_the_driver(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, 100, STREAM_A, &b));
    assert_ok(strided_buffer_set_deallocation_stream(b, STREAM_B));
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    assert_false(strided__cuda_loaded());
}

static void test_host_resource_properties(void **state)
{
    strided_memory_resource *mr = NULL;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    strided_memory_resource_props props = strided_memory_resource_properties(mr);
    void *self = strided_memory_resource_self(mr);
    strided_memory_resource_release(mr);
    check_props(props, true, false, false, -1);
    assert_null(self); /* NULL for the built-ins */
}

static void test_host_resource_default_alignment_is_64(void **state)
{
    strided_memory_resource *mr = NULL;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    for (int i = 0; i < 16; i++) {
        strided_buffer *b = NULL;
        assert_ok(strided_buffer_alloc(mr, (size_t)i * 7 + 1, NULL, &b));
        assert_int_equal((uintptr_t)strided_buffer_ptr(b) % 64, 0);
        strided_buffer_release(b);
    }
    strided_memory_resource_release(mr);
}

static void test_host_resource_large_alignment(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    assert_ok(strided_host_resource_create((size_t)1 << 20, &mr));
    assert_ok(strided_buffer_alloc(mr, 10, NULL, &b));
    assert_int_equal((uintptr_t)strided_buffer_ptr(b) % ((size_t)1 << 20), 0);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
}

static void check_bad_alignment(size_t alignment, const char *text)
{
    strided_memory_resource *mr;

    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_host_resource_create(alignment, &mr), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_resource_create", text);
    assert_untouched(&mr, sizeof mr);
}

static void test_host_resource_alignment_3(void **state)
{
    (void)state;
    check_bad_alignment(3, "power of two, got 3");
}

static void test_host_resource_alignment_96(void **state)
{
    (void)state;
    check_bad_alignment(96, "96");
}

static void test_host_resource_alignment_all_ones(void **state)
{
    (void)state;
    check_bad_alignment(SIZE_MAX, NULL);
}

static void test_host_resource_without_out(void **state)
{
    (void)state;
    assert_error(strided_host_resource_create(0, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_resource_create", NULL);
}

static void test_host_resource_allocation_failure_leaks_nothing(void **state)
{
    long n;

    (void)state;
    for (n = 0; n < 100; n++) {
        strided_memory_resource *mr;
        fill_sentinel(&mr, sizeof mr);
        strided__fail_allocation_after(n);
        strided_status s = strided_host_resource_create(0, &mr);
        strided__fail_allocation_after(-1);
        if (s == STRIDED_OK) {
            strided_memory_resource_release(mr);
            break;
        }
        assert_error(s, STRIDED_ERR_OUT_OF_MEMORY, "host_resource_create", NULL);
        assert_untouched(&mr, sizeof mr);
    }
    assert_true(n > 0 && n < 100);
}

static void test_host_resource_out_of_memory(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    fill_sentinel(&b, sizeof b);
    /* The host resource's allocation fails (the buffer's own would come
     * after it). */
    strided__fail_allocation_after(0);
    assert_status(strided_buffer_alloc(mr, 64, NULL, &b), STRIDED_ERR_OUT_OF_MEMORY);
    strided__fail_allocation_after(-1);
    assert_untouched(&b, sizeof b);
    /* Above INT64_MAX no resource is asked. */
    assert_error(strided_buffer_alloc(mr, SIZE_MAX - 8, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT,
                 "alloc", "a buffer holds at most 2**63 - 1 bytes");
    assert_untouched(&b, sizeof b);
    strided_memory_resource_release(mr);
}

/* Hands out what it is told to, whatever the size asked for: address,
 * usable size (via allocation_size), and counts the calls. */
typedef struct lying {
    void *ptr;
    size_t usable;
    int allocates, deallocates;
    void *freed;
} lying;

static strided_status lying_allocate(void *self, size_t size, void *stream, void **out_ptr)
{
    lying *l = self;
    (void)size;
    (void)stream;
    l->allocates++;
    *out_ptr = l->ptr;
    return STRIDED_OK;
}

static void lying_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    lying *l = self;
    (void)size;
    (void)stream;
    l->deallocates++;
    l->freed = ptr;
}

static size_t lying_size(void *self, void *ptr, size_t size)
{
    lying *l = self;
    (void)ptr;
    (void)size;
    return l->usable;
}

static const strided_memory_resource_ops lying_ops = {
    .allocate = lying_allocate, .deallocate = lying_deallocate, .allocation_size = lying_size};

/* Every refused allocation is given back exactly once, nothing is written
 * to it, and the caller's out-parameter is untouched. */
static void check_refused(lying *l, size_t size, const char *text)
{
    strided_memory_resource_props props = {true, false, false, -1, false};
    strided_memory_resource *mr = NULL;
    strided_buffer *b;
    int before = l->allocates;
    assert_ok(strided_memory_resource_create(&lying_ops, l, &props, &mr));
    fill_sentinel(&b, sizeof b);
    l->deallocates = 0;
    assert_error(strided_buffer_alloc(mr, size, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 text);
    assert_untouched(&b, sizeof b);
    assert_int_equal(l->allocates, before + 1);
    assert_int_equal(l->deallocates, 1);
    assert_ptr_equal(l->freed, l->ptr);
    strided_memory_resource_release(mr);
}

static void test_allocations_are_checked(void **state)
{
    (void)state;
    unsigned char memory[64];
    memset(memory, 0x5c, sizeof memory);
    lying l = {memory, 16, 0, 0, NULL};
    check_refused(&l, 64, "returned fewer bytes than asked for: 16 bytes");
    l = (lying){NULL, 64, 0, 0, NULL};
    check_refused(&l, 64, "returned NULL");
    l = (lying){(void *)(UINTPTR_MAX - 15), 64, 0, 0, NULL};
    check_refused(&l, 64, "wraps past the top of the address space");
    for (size_t i = 0; i < sizeof memory; i++)
        assert_int_equal(memory[i], 0x5c);

    /* Enough (or more), and NULL for 0 bytes, are fine. */
    strided_memory_resource_props props = {true, false, false, -1, false};
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    l = (lying){memory, 100, 0, 0, NULL};
    assert_ok(strided_memory_resource_create(&lying_ops, &l, &props, &mr));
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_int_equal(strided_buffer_size(b), 64);
    strided_buffer_release(b);
    assert_int_equal(l.deallocates, 1);
    l.ptr = NULL;
    assert_ok(strided_buffer_alloc(mr, 0, NULL, &b));
    strided_buffer_release(b);
    assert_int_equal(l.deallocates, 2);
    strided_memory_resource_release(mr);
}

/* Wrapped ranges must be a range of the address space int64 offsets reach. */
static void test_wrap_refuses_impossible_ranges(void **state)
{
    (void)state;
    strided_buffer *b;
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_wrap(NULL, (size_t)INT64_MAX + 1, NULL, NULL, &b),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "a buffer holds at most 2**63 - 1 bytes");
    assert_error(strided_buffer_wrap((void *)(UINTPTR_MAX - 99), 101, NULL, NULL, &b),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "wrap past the top of the address space");
    strided_memory_info info = {0};
    assert_error(strided_buffer_wrap_known((void *)(UINTPTR_MAX - 9), 11, &info, NULL, NULL, &b),
                 STRIDED_ERR_INVALID_ARGUMENT, "wrap", "wrap past the top");
    assert_untouched(&b, sizeof b);
    /* Up to the last byte is fine, and so is NULL with any size. */
    assert_ok(strided_buffer_wrap_known((void *)(UINTPTR_MAX - 9), 10, &info, NULL, NULL, &b));
    strided_buffer_release(b);
    assert_ok(strided_buffer_wrap(NULL, 4096, NULL, NULL, &b));
    strided_buffer_release(b);
}

static void test_resource_retain_release_null(void **state)
{
    (void)state;
    assert_null(strided_memory_resource_retain(NULL));
    strided_memory_resource_release(NULL);
}

static void test_user_resource_properties_and_self(void **state)
{
    counting c;
    strided_memory_resource_props props = {false, true, true, 5, false};
    strided_memory_resource *mr = NULL;

    (void)state;
    counting_init(&c);
    assert_ok(strided_memory_resource_create(&counting_ops, &c, &props, &mr));
    props.device_id = 6; /* copied, not borrowed */
    check_props(strided_memory_resource_properties(mr), false, true, true, 5);
    assert_ptr_equal(strided_memory_resource_self(mr), &c);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_user_resource_destroyed_once_after_the_last_buffer(void **state)
{
    counting c;
    strided_memory_resource *mr = NULL;
    strided_buffer *b[3];

    (void)state;
    mr = counting_resource(&c, host_props);
    for (int i = 0; i < 3; i++)
        assert_ok(strided_buffer_alloc(mr, 8, NULL, &b[i]));
    assert_ptr_equal(strided_memory_resource_retain(mr), mr);
    strided_memory_resource_release(mr);
    strided_memory_resource_release(mr);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(atomic_load(&c.destroys), 0);
        strided_buffer_release(b[i]);
        assert_int_equal(atomic_load(&c.deallocates), i + 1);
    }
    assert_int_equal(atomic_load(&c.destroys), 1);
    assert_int_equal(atomic_load(&c.allocates), 3);
}

static void test_user_resource_without_destroy(void **state)
{
    counting c;
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    counting_init(&c);
    assert_ok(strided_memory_resource_create(&no_destroy_ops, &c, &host_props, &mr));
    assert_ok(strided_buffer_alloc(mr, 8, NULL, &b));
    strided_memory_resource_release(mr);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.deallocates), 1);
    assert_int_equal(atomic_load(&c.destroys), 0);
}

static void test_user_resource_allocates_size_0(void **state)
{
    counting c;
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    mr = counting_resource(&c, host_props);
    assert_ok(strided_buffer_alloc(mr, 0, NULL, &b));
    assert_int_equal(atomic_load(&c.allocated_size), 0);
    assert_int_equal(strided_buffer_size(b), 0);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.deallocates), 1);
}

typedef struct shared_resource {
    strided_memory_resource *mr;
    atomic_int *go;
    int failures;
} shared_resource;

static void *alloc_and_release_many(void *arg)
{
    shared_resource *s = arg;
    while (!atomic_load(s->go))
        ;
    for (int i = 0; i < 500; i++) {
        strided_buffer *b = NULL;
        if (strided_buffer_alloc(s->mr, 16, NULL, &b) != STRIDED_OK) {
            s->failures++;
            continue;
        }
        strided_memory_resource_release(strided_memory_resource_retain(s->mr));
        strided_buffer_release(b);
    }
    strided_memory_resource_release(s->mr);
    return NULL;
}

static void test_user_resource_shared_by_threads(void **state)
{
    counting c;
    strided_memory_resource *mr = NULL;
    pthread_t t[THREADS];
    shared_resource s[THREADS];
    atomic_int go;

    (void)state;
    counting_init(&c);
    atomic_init(&go, 0);
    assert_ok(strided_memory_resource_create(&counting_ops, &c, &host_props, &mr));
    for (int i = 0; i < THREADS; i++) {
        s[i].mr = strided_memory_resource_retain(mr);
        s[i].go = &go;
        s[i].failures = 0;
        assert_int_equal(pthread_create(&t[i], NULL, alloc_and_release_many, &s[i]), 0);
    }
    strided_memory_resource_release(mr);
    atomic_store(&go, 1);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(s[i].failures, 0);
    }
    assert_int_equal(atomic_load(&c.allocates), THREADS * 500);
    assert_int_equal(atomic_load(&c.deallocates), THREADS * 500);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void check_create_rejected(const strided_memory_resource_ops *ops,
                                  const strided_memory_resource_props *props, bool with_out)
{
    counting c;
    strided_memory_resource *mr;

    counting_init(&c);
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_memory_resource_create(ops, &c, props, with_out ? &mr : NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "memory_resource_create", NULL);
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(atomic_load(&c.destroys), 0);
}

static void test_user_resource_without_ops(void **state)
{
    (void)state;
    check_create_rejected(NULL, &host_props, true);
}

static void test_user_resource_without_allocate(void **state)
{
    static const strided_memory_resource_ops ops = {
        .allocate = NULL, .deallocate = counting_deallocate, .destroy = counting_destroy};
    (void)state;
    check_create_rejected(&ops, &host_props, true);
}

static void test_user_resource_without_deallocate(void **state)
{
    static const strided_memory_resource_ops ops = {
        .allocate = counting_allocate, .deallocate = NULL, .destroy = counting_destroy};
    (void)state;
    check_create_rejected(&ops, &host_props, true);
}

static void test_user_resource_without_props(void **state)
{
    (void)state;
    check_create_rejected(&counting_ops, NULL, true);
}

static void test_user_resource_without_out(void **state)
{
    (void)state;
    check_create_rejected(&counting_ops, &host_props, false);
}

static void test_user_resource_out_of_memory_never_destroys(void **state)
{
    counting c;
    strided_memory_resource *mr;

    (void)state;
    counting_init(&c);
    fill_sentinel(&mr, sizeof mr);
    strided__fail_allocation_after(0);
    assert_error(strided_memory_resource_create(&counting_ops, &c, &host_props, &mr),
                 STRIDED_ERR_OUT_OF_MEMORY, "memory_resource_create", NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(atomic_load(&c.destroys), 0);
}

/* The create functions of the CUDA resources in one form (the pinned one
 * takes no device). */
typedef strided_status (*create_fn)(int device, strided_memory_resource **out);

static strided_status pinned_create(int device, strided_memory_resource **out)
{
    (void)device;
    return strided_pinned_resource_create(out);
}

#if defined(DRIVER_NONE)

/* Without a driver, no CUDA resource can be made. */

static void check_no_driver(create_fn create, const char *op)
{
    strided_memory_resource *mr;

    fill_sentinel(&mr, sizeof mr);
    assert_error(create(0, &mr), STRIDED_ERR_NO_CUDA_DRIVER, op, "no CUDA driver: " NO_DRIVER_PATH);
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(strided_last_cuda_error(), 0);
}

static void test_pinned_resource_needs_a_driver(void **state)
{
    (void)state;
    check_no_driver(pinned_create, "pinned_resource_create");
}

static void test_device_resource_needs_a_driver(void **state)
{
    (void)state;
    check_no_driver(strided_device_resource_create, "device_resource_create");
}

static void test_managed_resource_needs_a_driver(void **state)
{
    (void)state;
    check_no_driver(strided_managed_resource_create, "managed_resource_create");
}

static void test_host_features_work_after_a_missing_driver(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL, *w = NULL;
    strided_memory_info info;

    (void)state;
    assert_status(strided_device_resource_create(0, &mr), STRIDED_ERR_NO_CUDA_DRIVER);
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, 32, NULL, &b));
    assert_ok(strided_buffer_wrap(strided_buffer_ptr(b), 32, NULL, NULL, &w));
    info = strided_buffer_memory_info(w);
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(info.device_id, -1);
    assert_false(info.device_accessible);
    strided_buffer_release(w);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
}

#elif defined(DRIVER_FAKE)

/* The CUDA resources, through the fake driver. */

static const strided__driver *driver(void)
{
    const strided__driver *cu = NULL;
    assert_ok(strided__cuda("test", &cu));
    return cu;
}

static CUcontext primary_of(int device)
{
    CUcontext ctx = NULL;
    assert_int_equal(driver()->cuDevicePrimaryCtxRetain(&ctx, device), CUDA_SUCCESS);
    return ctx;
}

static void set_current(CUcontext ctx)
{
    assert_int_equal(driver()->cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

static strided_memory_resource *pinned(void)
{
    strided_memory_resource *mr = NULL;
    assert_ok(strided_pinned_resource_create(&mr));
    return mr;
}

static strided_memory_resource *device_mr(int device)
{
    strided_memory_resource *mr = NULL;
    assert_ok(strided_device_resource_create(device, &mr));
    return mr;
}

static strided_memory_resource *managed(int device)
{
    strided_memory_resource *mr = NULL;
    assert_ok(strided_managed_resource_create(device, &mr));
    return mr;
}

static strided_memory_info query(const void *p)
{
    strided_memory_info info;
    assert_ok(strided_memory_info_query(p, &info));
    return info;
}

static void test_pinned_resource(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = pinned();
    assert_null(fake.current_context());
    check_props(strided_memory_resource_properties(mr), true, true, false, -1);
    void *self = strided_memory_resource_self(mr);

    assert_ok(strided_buffer_alloc(mr, 1000, STREAM_A, &b));
    assert_int_equal(fake.calls("cuMemHostAlloc"), 1);
    assert_int_equal(fake.live_bytes(), 1000);
    assert_null(fake.current_context());
    unsigned char *p = strided_buffer_ptr(b);
    memset(p, 1, 1000);
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(info.device_id, -1);
    assert_true(info.host_accessible);
    assert_true(info.device_accessible);
    assert_false(info.managed);
    assert_true(info.device_address == (uintptr_t)p);
    /* The driver says it is pinned memory of the device that was current. */
    info = query(p + 10);
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(info.device_id, 0);

    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeHost"), 1);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), STREAM_A);
    assert_int_equal(fake.live_bytes(), 0);
    assert_null(fake.current_context());
    strided_memory_resource_release(mr);
    assert_null(self); /* NULL for the built-ins */
}

static void test_device_resource(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_mr(0);
    assert_null(fake.current_context());
    check_props(strided_memory_resource_properties(mr), false, true, false, 0);
    assert_int_equal(fake.calls("cuDeviceGetMemPool"), 1);
    assert_int_equal(fake.calls("cuMemPoolSetAttribute"), 1);

    assert_ok(strided_buffer_alloc(mr, 4096, STREAM_A, &b));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemAllocFromPoolAsync"), STREAM_A);
    assert_int_equal(fake.live_bytes(), 4096);
    assert_null(fake.current_context());
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(info.device_id, 0);
    assert_false(info.host_accessible);
    assert_true(info.device_accessible);
    assert_true(info.device_address == (uintptr_t)strided_buffer_ptr(b));
    info = query(strided_buffer_ptr(b));
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(info.device_id, 0);
    assert_true(info.pooled);

    /* Freed in stream order on the allocation stream. */
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_A);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
    assert_int_equal(fake.live_bytes(), 0);
    assert_null(fake.current_context());
    strided_memory_resource_release(mr);
}

static void test_device_resource_frees_on_the_deallocation_stream(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_mr(0);
    assert_ok(strided_buffer_alloc(mr, 256, STREAM_A, &b));
    assert_ok(strided_buffer_set_deallocation_stream(b, STREAM_B));
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_B);
    assert_int_equal(fake.live_bytes(), 0);

    assert_ok(strided_buffer_alloc(mr, 256, STREAM_A, &b));
    assert_ok(strided_buffer_set_deallocation_stream(b, NULL));
    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 2);
    assert_null(fake.last_stream("cuMemFreeAsync"));
    assert_int_equal(fake.live_bytes(), 0);
    strided_memory_resource_release(mr);
}

static void test_device_resource_of_device_1(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_mr(1);
    check_props(strided_memory_resource_properties(mr), false, true, false, 1);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_int_equal(strided_buffer_memory_info(b).device_id, 1);
    assert_int_equal(query(strided_buffer_ptr(b)).device_id, 1);
    strided_buffer_release(b);
    assert_int_equal(fake.live_bytes(), 0);
    strided_memory_resource_release(mr);
}

static void test_managed_resource(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = managed(1);
    assert_null(fake.current_context());
    check_props(strided_memory_resource_properties(mr), true, true, true, 1);
    assert_ok(strided_buffer_alloc(mr, 333, STREAM_B, &b));
    assert_int_equal(fake.calls("cuMemAllocManaged"), 1);
    assert_int_equal(fake.live_bytes(), 333);
    assert_null(fake.current_context());
    memset(strided_buffer_ptr(b), 7, 333);
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_MANAGED);
    assert_int_equal(info.device_id, 1);
    assert_true(info.managed);
    /* Allocated with device 1's context current. */
    info = query(strided_buffer_ptr(b));
    assert_int_equal(info.kind, STRIDED_MEMORY_MANAGED);
    assert_int_equal(info.device_id, 1);

    strided_buffer_release(b);
    assert_int_equal(fake.calls("cuMemFree"), 1);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), STREAM_B);
    assert_int_equal(fake.live_bytes(), 0);
    assert_null(fake.current_context());
    strided_memory_resource_release(mr);
}

/* Another device's context is current in the caller: every call switches
 * to the resource's device and puts the caller's context back. */
static void test_resources_restore_the_callers_context(void **state)
{
    strided_memory_resource *mrs[3];
    CUcontext c1;

    (void)state;
    fake.reset(2, 0, 1);
    c1 = primary_of(1);
    set_current(c1);
    mrs[0] = pinned();
    assert_ptr_equal(fake.current_context(), c1);
    mrs[1] = device_mr(0);
    assert_ptr_equal(fake.current_context(), c1);
    mrs[2] = managed(0);
    assert_ptr_equal(fake.current_context(), c1);
    for (int i = 0; i < 3; i++) {
        strided_buffer *b = NULL;
        assert_ok(strided_buffer_alloc(mrs[i], 128, NULL, &b));
        assert_ptr_equal(fake.current_context(), c1);
        /* Made on device 0, although device 1 was current. */
        assert_int_equal(query(strided_buffer_ptr(b)).device_id, 0);
        strided_buffer_release(b);
        assert_ptr_equal(fake.current_context(), c1);
        strided_memory_resource_release(mrs[i]);
    }
    assert_int_equal(fake.live_bytes(), 0);
    set_current(NULL);
}

typedef struct release_job {
    strided_buffer *b;
    void *context_after;
} release_job;

static void *release_without_context(void *arg)
{
    release_job *j = arg;
    strided_buffer_release(j->b);
    j->context_after = fake.current_context();
    return NULL;
}

/* The last reference goes on a thread with no current context: the free
 * still runs (in the resource's device context) and leaves none current. */
static void test_cuda_buffers_released_on_a_thread_without_context(void **state)
{
    strided_memory_resource *mrs[3];

    (void)state;
    fake.reset(2, 0, 1);
    mrs[0] = pinned();
    mrs[1] = device_mr(1);
    mrs[2] = managed(0);
    for (int i = 0; i < 3; i++) {
        release_job j = {NULL, (void *)&j};
        assert_ok(strided_buffer_alloc(mrs[i], 512, NULL, &j.b));
        strided_memory_resource_release(mrs[i]);
        assert_int_equal(fake.live_bytes(), 512);
        run_on_thread(release_without_context, &j);
        assert_int_equal(fake.live_bytes(), 0);
        assert_null(j.context_after);
    }
    assert_int_equal(fake.calls("cuMemFreeHost"), 1);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_int_equal(fake.calls("cuMemFree"), 1);
}

static void *alloc_release_device(void *arg)
{
    strided_memory_resource *mr = arg;
    for (int i = 0; i < 200; i++) {
        strided_buffer *b = NULL;
        if (strided_buffer_alloc(mr, 64 + (size_t)i, (void *)(uintptr_t)(i + 16), &b) != STRIDED_OK)
            return (void *)"alloc failed";
        strided_buffer_release(b);
        if (fake.current_context() != NULL)
            return (void *)"context left current";
    }
    return NULL;
}

static void test_device_resource_shared_by_threads(void **state)
{
    strided_memory_resource *mr;
    pthread_t t[THREADS];

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_mr(0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, alloc_release_device, mr), 0);
    for (int i = 0; i < THREADS; i++) {
        void *problem = NULL;
        assert_int_equal(pthread_join(t[i], &problem), 0);
        if (problem != NULL)
            fail_msg("%s", (const char *)problem);
    }
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), THREADS * 200);
    assert_int_equal(fake.calls("cuMemFreeAsync"), THREADS * 200);
    assert_int_equal(fake.live_bytes(), 0);
    strided_memory_resource_release(mr);
}

static void test_cuda_resources_allocate_size_0(void **state)
{
    strided_memory_resource *mrs[3];

    (void)state;
    fake.reset(2, 0, 1);
    mrs[0] = pinned();
    mrs[1] = device_mr(0);
    mrs[2] = managed(0);
    for (int i = 0; i < 3; i++) {
        strided_buffer *b = NULL;
        assert_ok(strided_buffer_alloc(mrs[i], 0, NULL, &b));
        assert_int_equal(strided_buffer_size(b), 0);
        strided_buffer_release(b);
        strided_memory_resource_release(mrs[i]);
    }
    assert_int_equal(fake.live_bytes(), 0);
    assert_null(fake.current_context());
}

/* Failures of the CUDA resources. */

static void check_invalid_device(create_fn create, const char *op, int device, const char *text)
{
    strided_memory_resource *mr;

    fake.reset(2, 0, 1);
    fill_sentinel(&mr, sizeof mr);
    assert_error(create(device, &mr), STRIDED_ERR_INVALID_ARGUMENT, op, text);
    assert_untouched(&mr, sizeof mr);
    assert_null(fake.current_context());
}

static void test_device_resource_of_a_missing_device(void **state)
{
    (void)state;
    check_invalid_device(strided_device_resource_create, "device_resource_create", 5,
                         "device 5 does not exist; there are 2 CUDA devices");
    check_invalid_device(strided_device_resource_create, "device_resource_create", -1,
                         "device -1 does not exist");
}

static void test_managed_resource_of_a_missing_device(void **state)
{
    (void)state;
    check_invalid_device(strided_managed_resource_create, "managed_resource_create", 2,
                         "device 2 does not exist; there are 2 CUDA devices");
    check_invalid_device(strided_managed_resource_create, "managed_resource_create", -3,
                         "device -3 does not exist");
}

static void test_device_resource_without_memory_pools(void **state)
{
    strided_memory_resource *mr;

    (void)state;
    fake.reset(2, 0, 0);
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_device_resource_create(0, &mr), STRIDED_ERR_UNSUPPORTED,
                 "device_resource_create", "memory pools");
    assert_untouched(&mr, sizeof mr);
    assert_null(fake.current_context());
    fake.reset(2, 0, 1);
}

/* A driver call of a constructor fails: STRIDED_ERR_CUDA with the call in
 * the message, nothing made, nothing leaked, no context left current. */
static void check_create_call_fails(create_fn create, const char *op, const char *entry,
                                    CUresult result)
{
    strided_memory_resource *mr;
    char text[128];

    fake.reset(2, 0, 1);
    fake.fail_next(entry, result);
    fill_sentinel(&mr, sizeof mr);
    snprintf(text, sizeof text, "%s failed: ", entry);
    assert_error(create(0, &mr), STRIDED_ERR_CUDA, op, text);
    assert_int_equal(strided_last_cuda_error(), result);
    assert_untouched(&mr, sizeof mr);
    assert_null(fake.current_context());
    assert_int_equal(fake.calls(entry), 1);
}

static void test_device_resource_create_failures(void **state)
{
    (void)state;
    check_create_call_fails(strided_device_resource_create, "device_resource_create",
                            "cuDeviceGetMemPool", CUDA_ERROR_NOT_SUPPORTED);
    check_create_call_fails(strided_device_resource_create, "device_resource_create",
                            "cuMemPoolSetAttribute", CUDA_ERROR_INVALID_VALUE);
    check_create_call_fails(strided_device_resource_create, "device_resource_create",
                            "cuDeviceGetAttribute", CUDA_ERROR_UNKNOWN);
}

/* Make the n-th library allocation fail while creating: OUT_OF_MEMORY,
 * nothing leaks (ASan/valgrind), until a call succeeds. */
static void check_create_out_of_memory(create_fn create, const char *op)
{
    long n;

    fake.reset(2, 0, 1);
    for (n = 0; n < 100; n++) {
        strided_memory_resource *mr;
        fill_sentinel(&mr, sizeof mr);
        strided__fail_allocation_after(n);
        strided_status s = create(0, &mr);
        strided__fail_allocation_after(-1);
        if (s == STRIDED_OK) {
            strided_memory_resource_release(mr);
            break;
        }
        assert_error(s, STRIDED_ERR_OUT_OF_MEMORY, op, NULL);
        assert_untouched(&mr, sizeof mr);
        assert_null(fake.current_context());
    }
    assert_true(n > 0 && n < 100);
}

static void test_cuda_resource_create_out_of_memory(void **state)
{
    (void)state;
    check_create_out_of_memory(pinned_create, "pinned_resource_create");
    check_create_out_of_memory(strided_device_resource_create, "device_resource_create");
    check_create_out_of_memory(strided_managed_resource_create, "managed_resource_create");
}

/* The driver refuses an allocation: STRIDED_ERR_CUDA, no buffer, nothing
 * leaked, context restored. */
static void check_alloc_call_fails(strided_memory_resource *mr, const char *entry)
{
    strided_buffer *b;
    char text[160];

    fake.fail_next(entry, CUDA_ERROR_OUT_OF_MEMORY);
    fill_sentinel(&b, sizeof b);
    snprintf(text, sizeof text, "%s failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", entry);
    assert_error(strided_buffer_alloc(mr, 100, NULL, &b), STRIDED_ERR_CUDA, "alloc", text);
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_OUT_OF_MEMORY);
    assert_untouched(&b, sizeof b);
    assert_int_equal(fake.live_bytes(), 0);
    assert_null(fake.current_context());
    strided_memory_resource_release(mr);
}

static void test_cuda_allocation_failures_leak_nothing(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    check_alloc_call_fails(pinned(), "cuMemHostAlloc");
    check_alloc_call_fails(device_mr(0), "cuMemAllocFromPoolAsync");
    check_alloc_call_fails(managed(0), "cuMemAllocManaged");
    check_alloc_call_fails(device_mr(1), "cuCtxSetCurrent");
}

/* The buffer object cannot be made after the driver allocated: the memory
 * goes back through the resource. */
static void test_cuda_memory_given_back_when_the_buffer_fails(void **state)
{
    strided_memory_resource *mrs[3];

    (void)state;
    fake.reset(2, 0, 1);
    mrs[0] = pinned();
    mrs[1] = device_mr(0);
    mrs[2] = managed(1);
    for (int i = 0; i < 3; i++) {
        strided_buffer *b;
        fill_sentinel(&b, sizeof b);
        strided__fail_allocation_after(0);
        assert_status(strided_buffer_alloc(mrs[i], 100, STREAM_A, &b), STRIDED_ERR_OUT_OF_MEMORY);
        strided__fail_allocation_after(-1);
        assert_untouched(&b, sizeof b);
        assert_int_equal(fake.live_bytes(), 0);
        assert_null(fake.current_context());
        strided_memory_resource_release(mrs[i]);
    }
}

/* A failing free has nobody to report to; it must not crash, and the
 * resource stays usable. */
static void test_cuda_free_failure_is_survived(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    mr = device_mr(0);
    assert_ok(strided_buffer_alloc(mr, 100, NULL, &b));
    fake.fail_next("cuMemFreeAsync", CUDA_ERROR_ILLEGAL_ADDRESS);
    strided_buffer_release(b);
    assert_null(fake.current_context());
    assert_ok(strided_buffer_alloc(mr, 100, NULL, &b));
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    /* The refused free leaked (as with the real driver); reset frees it. */
    assert_int_equal(fake.live_bytes(), 100);
    fake.reset(2, 0, 1);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_resource_never_loads_the_driver),
        cmocka_unit_test(test_host_resource_properties),
        cmocka_unit_test(test_host_resource_default_alignment_is_64),
        cmocka_unit_test(test_host_resource_large_alignment),
        cmocka_unit_test(test_host_resource_alignment_3),
        cmocka_unit_test(test_host_resource_alignment_96),
        cmocka_unit_test(test_host_resource_alignment_all_ones),
        cmocka_unit_test(test_host_resource_without_out),
        cmocka_unit_test(test_host_resource_allocation_failure_leaks_nothing),
        cmocka_unit_test(test_host_resource_out_of_memory),
        cmocka_unit_test(test_allocations_are_checked),
        cmocka_unit_test(test_wrap_refuses_impossible_ranges),
        cmocka_unit_test(test_resource_retain_release_null),
        cmocka_unit_test(test_user_resource_properties_and_self),
        cmocka_unit_test(test_user_resource_destroyed_once_after_the_last_buffer),
        cmocka_unit_test(test_user_resource_without_destroy),
        cmocka_unit_test(test_user_resource_allocates_size_0),
        cmocka_unit_test(test_user_resource_shared_by_threads),
        cmocka_unit_test(test_user_resource_without_ops),
        cmocka_unit_test(test_user_resource_without_allocate),
        cmocka_unit_test(test_user_resource_without_deallocate),
        cmocka_unit_test(test_user_resource_without_props),
        cmocka_unit_test(test_user_resource_without_out),
        cmocka_unit_test(test_user_resource_out_of_memory_never_destroys),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_pinned_resource_needs_a_driver),
        cmocka_unit_test(test_device_resource_needs_a_driver),
        cmocka_unit_test(test_managed_resource_needs_a_driver),
        cmocka_unit_test(test_host_features_work_after_a_missing_driver),
#elif defined(DRIVER_FAKE)
        cmocka_unit_test(test_pinned_resource),
        cmocka_unit_test(test_device_resource),
        cmocka_unit_test(test_device_resource_frees_on_the_deallocation_stream),
        cmocka_unit_test(test_device_resource_of_device_1),
        cmocka_unit_test(test_managed_resource),
        cmocka_unit_test(test_resources_restore_the_callers_context),
        cmocka_unit_test(test_cuda_buffers_released_on_a_thread_without_context),
        cmocka_unit_test(test_device_resource_shared_by_threads),
        cmocka_unit_test(test_cuda_resources_allocate_size_0),
        cmocka_unit_test(test_device_resource_of_a_missing_device),
        cmocka_unit_test(test_managed_resource_of_a_missing_device),
        cmocka_unit_test(test_device_resource_without_memory_pools),
        cmocka_unit_test(test_device_resource_create_failures),
        cmocka_unit_test(test_cuda_resource_create_out_of_memory),
        cmocka_unit_test(test_cuda_allocation_failures_leak_nothing),
        cmocka_unit_test(test_cuda_memory_given_back_when_the_buffer_fails),
        cmocka_unit_test(test_cuda_free_failure_is_survived),
#endif
    };

#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
