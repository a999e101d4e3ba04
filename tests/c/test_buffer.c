/*
 * Tests of strided/buffer.h: ownership (wrapped, borrowed, allocated),
 * release exactly once on any thread, failure without side effects, and
 * memory-kind discovery.
 *
 * Built twice: DRIVER_NONE (no CUDA driver: every pointer is host memory)
 * and DRIVER_FAKE (the fake driver, whose range table stands in for every
 * memory kind the real driver reports for a pointer: pageable, pinned,
 * registered, device, managed, and the pool-allocated kinds).
 */
#include "test_memory.h"

#include "cuda/driver.h"
#include "test_cuda.h"

/* A release callback that counts its calls. */
typedef struct releases {
    atomic_int count;
    void *ptr;
    size_t size;
    pthread_t thread;
    bool free_it; /* free(ptr) in the callback */
} releases;

static void count_release(void *context, void *ptr, size_t size)
{
    releases *r = context;
    r->ptr = ptr;
    r->size = size;
    r->thread = pthread_self();
    if (r->free_it)
        free(ptr);
    atomic_fetch_add(&r->count, 1);
}

static void releases_init(releases *r)
{
    atomic_init(&r->count, 0);
    r->ptr = NULL;
    r->size = 0;
    r->free_it = false;
}

static void check_host_info(strided_memory_info info)
{
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(info.device_id, -1);
    assert_true(info.host_accessible);
    assert_false(info.device_accessible);
    assert_false(info.managed);
    assert_false(info.pooled);
    assert_true(info.device_address == 0);
}

static void test_wrap_host_memory(void **state)
{
    releases r;
    strided_buffer *b = NULL;
    void *p = malloc(100);

    (void)state;
    releases_init(&r);
    r.free_it = true;
    assert_ok(strided_buffer_wrap(p, 100, count_release, &r, &b));
    assert_non_null(b);
    assert_ptr_equal(strided_buffer_ptr(b), p);
    assert_int_equal(strided_buffer_size(b), 100);
    assert_null(strided_buffer_resource(b));
    assert_int_equal(strided_buffer_use_count(b), 1);
    check_host_info(strided_buffer_memory_info(b));
    assert_int_equal(atomic_load(&r.count), 0);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&r.count), 1);
    assert_ptr_equal(r.ptr, p);
    assert_int_equal(r.size, 100);
}

static void test_wrap_releases_once_after_the_last_reference(void **state)
{
    releases r;
    strided_buffer *b = NULL;
    char memory[8] = {0};

    (void)state;
    releases_init(&r);
    assert_ok(strided_buffer_wrap(memory, sizeof memory, count_release, &r, &b));
    assert_ptr_equal(strided_buffer_retain(b), b);
    assert_ptr_equal(strided_buffer_retain(b), b);
    assert_ptr_equal(strided_buffer_retain(b), b);
    assert_int_equal(strided_buffer_use_count(b), 4);
    strided_buffer_release(b);
    strided_buffer_release(b);
    strided_buffer_release(b);
    assert_int_equal(strided_buffer_use_count(b), 1);
    assert_int_equal(atomic_load(&r.count), 0);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&r.count), 1);
}

static void *release_buffer(void *arg)
{
    strided_buffer_release(arg);
    return NULL;
}

static void test_wrap_releases_on_the_thread_that_drops_the_last(void **state)
{
    releases r;
    strided_buffer *b = NULL;
    pthread_t t;

    (void)state;
    releases_init(&r);
    r.free_it = true;
    assert_ok(strided_buffer_wrap(malloc(32), 32, count_release, &r, &b));
    strided_buffer_retain(b);
    strided_buffer_release(b); /* the main thread's own reference goes... */
    assert_int_equal(atomic_load(&r.count), 0);
    assert_int_equal(pthread_create(&t, NULL, release_buffer, b), 0);
    assert_int_equal(pthread_join(t, NULL), 0); /* ...the thread's is last */
    assert_int_equal(atomic_load(&r.count), 1);
    assert_true(pthread_equal(r.thread, t));
}

typedef struct hammer {
    strided_buffer *b;
    atomic_int *go;
} hammer;

/* Retain and release many times, then drop the reference given to us. */
static void *hammer_buffer(void *arg)
{
    hammer *h = arg;
    while (!atomic_load(h->go))
        ;
    for (int i = 0; i < 2000; i++) {
        strided_buffer_retain(h->b);
        strided_buffer_release(h->b);
    }
    strided_buffer_release(h->b);
    return NULL;
}

static void test_wrap_releases_once_under_racing_threads(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        releases r;
        strided_buffer *b = NULL;
        pthread_t t[THREADS];
        hammer h[THREADS];
        atomic_int go;

        releases_init(&r);
        r.free_it = true;
        atomic_init(&go, 0);
        assert_ok(strided_buffer_wrap(malloc(64), 64, count_release, &r, &b));
        for (int i = 0; i < THREADS; i++) {
            h[i].b = strided_buffer_retain(b);
            h[i].go = &go;
            assert_int_equal(pthread_create(&t[i], NULL, hammer_buffer, &h[i]), 0);
        }
        atomic_store(&go, 1);
        strided_buffer_release(b); /* races with the threads to be last */
        for (int i = 0; i < THREADS; i++)
            assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(atomic_load(&r.count), 1);
    }
}

static void test_borrowed_memory_is_never_released(void **state)
{
    strided_buffer *b = NULL;
    char *p = malloc(16);

    (void)state;
    assert_ok(strided_buffer_wrap(p, 16, NULL, NULL, &b));
    strided_buffer_retain(b);
    strided_buffer_release(b);
    strided_buffer_release(b);
    /* Still ours: ASan or valgrind would report a use after free. */
    p[15] = 1;
    free(p);
}

static void test_wrap_null_pointer_and_size_0(void **state)
{
    releases r;
    strided_buffer *b = NULL;

    (void)state;
    releases_init(&r);
    assert_ok(strided_buffer_wrap(NULL, 0, count_release, &r, &b));
    assert_null(strided_buffer_ptr(b));
    assert_int_equal(strided_buffer_size(b), 0);
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(info.device_id, -1);
    assert_true(info.host_accessible);
    assert_false(info.managed);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&r.count), 1);
    assert_null(r.ptr);
    assert_int_equal(r.size, 0);
}

static void test_wrap_size_0_of_a_real_pointer(void **state)
{
    releases r;
    strided_buffer *b = NULL;
    char c = 0;

    (void)state;
    releases_init(&r);
    assert_ok(strided_buffer_wrap(&c, 0, count_release, &r, &b));
    assert_ptr_equal(strided_buffer_ptr(b), &c);
    assert_int_equal(strided_buffer_size(b), 0);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&r.count), 1);
}

static void test_wrap_without_out(void **state)
{
    releases r;
    char c = 0;

    (void)state;
    releases_init(&r);
    assert_error(strided_buffer_wrap(&c, 1, count_release, &r, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "wrap", NULL);
    assert_int_equal(atomic_load(&r.count), 0);
}

/* Make the n-th allocation fail for n = 0, 1, ... until the call succeeds:
 * each failure must be OUT_OF_MEMORY, leave out untouched and never call the
 * release callback; valgrind and ASan check that nothing leaks. */
static void test_wrap_allocation_failure_never_releases(void **state)
{
    char memory[4] = {0};
    long n;

    (void)state;
    for (n = 0; n < 100; n++) {
        releases r;
        strided_buffer *b;
        releases_init(&r);
        fill_sentinel(&b, sizeof b);
        strided__fail_allocation_after(n);
        strided_status s = strided_buffer_wrap(memory, 4, count_release, &r, &b);
        strided__fail_allocation_after(-1);
        if (s == STRIDED_OK) {
            strided_buffer_release(b);
            assert_int_equal(atomic_load(&r.count), 1);
            break;
        }
        assert_error(s, STRIDED_ERR_OUT_OF_MEMORY, "wrap", NULL);
        assert_untouched(&b, sizeof b);
        assert_int_equal(atomic_load(&r.count), 0);
    }
    assert_true(n > 0 && n < 100);
}

static void test_retain_and_release_accept_null(void **state)
{
    (void)state;
    assert_null(strided_buffer_retain(NULL));
    strided_buffer_release(NULL);
}

static void test_alloc_from_the_host_resource(void **state)
{
    strided_memory_resource *mr = NULL;
    static const size_t sizes[] = {1, 63, 64, 100, 4096, 1000003};

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        strided_buffer *b = NULL;
        assert_ok(strided_buffer_alloc(mr, sizes[i], NULL, &b));
        unsigned char *p = strided_buffer_ptr(b);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        assert_int_equal(strided_buffer_size(b), sizes[i]);
        assert_ptr_equal(strided_buffer_resource(b), mr);
        check_host_info(strided_buffer_memory_info(b));
        memset(p, 0xab, sizes[i]); /* all of it is ours */
        strided_buffer_release(b);
    }
    strided_memory_resource_release(mr);
}

static void test_alloc_honours_the_alignment(void **state)
{
    static const size_t alignments[] = {1, 2, 8, 16, 128, 256, 4096, 65536};

    (void)state;
    for (size_t i = 0; i < sizeof alignments / sizeof alignments[0]; i++) {
        strided_memory_resource *mr = NULL;
        strided_buffer *b = NULL;
        assert_ok(strided_host_resource_create(alignments[i], &mr));
        assert_ok(strided_buffer_alloc(mr, 24, NULL, &b));
        assert_int_equal((uintptr_t)strided_buffer_ptr(b) % alignments[i], 0);
        strided_buffer_release(b);
        strided_memory_resource_release(mr);
    }
}

static void test_alloc_of_size_0(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, 0, NULL, &b));
    assert_int_equal(strided_buffer_size(b), 0);
    assert_int_equal(strided_buffer_use_count(b), 1);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
}

static void test_alloc_without_resource(void **state)
{
    strided_buffer *b;

    (void)state;
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_alloc(NULL, 8, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 NULL);
    assert_untouched(&b, sizeof b);
}

static void test_alloc_without_out(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);

    (void)state;
    assert_error(strided_buffer_alloc(mr, 8, NULL, NULL), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 NULL);
    assert_int_equal(atomic_load(&c.allocates), 0);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

/* The n-th allocation fails: the memory (host resource) or the buffer
 * object; either way nothing leaks and nothing is visible. */
static void test_alloc_allocation_failure_leaks_nothing(void **state)
{
    strided_memory_resource *mr = NULL;
    long n;

    (void)state;
    assert_ok(strided_host_resource_create(0, &mr));
    for (n = 0; n < 100; n++) {
        strided_buffer *b;
        fill_sentinel(&b, sizeof b);
        strided__fail_allocation_after(n);
        strided_status s = strided_buffer_alloc(mr, 256, NULL, &b);
        strided__fail_allocation_after(-1);
        if (s == STRIDED_OK) {
            strided_buffer_release(b);
            break;
        }
        assert_status(s, STRIDED_ERR_OUT_OF_MEMORY);
        assert_untouched(&b, sizeof b);
    }
    assert_true(n > 1 && n < 100); /* the memory, then the buffer */
    strided_memory_resource_release(mr);
}

/* When the buffer object cannot be made, the memory goes back to the
 * resource at once, exactly once. */
static void test_alloc_gives_memory_back_when_the_buffer_fails(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b;

    (void)state;
    fill_sentinel(&b, sizeof b);
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_alloc(mr, 40, STREAM_A, &b), STRIDED_ERR_OUT_OF_MEMORY, "alloc",
                 NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&b, sizeof b);
    assert_int_equal(atomic_load(&c.allocates), 1);
    assert_int_equal(atomic_load(&c.deallocates), 1);
    assert_int_equal(atomic_load(&c.freed_size), 40);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_user_resource_deallocates_once_with_its_arguments(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b = NULL;

    (void)state;
    assert_ok(strided_buffer_alloc(mr, 48, STREAM_A, &b));
    assert_int_equal(atomic_load(&c.allocates), 1);
    assert_ptr_equal(atomic_load(&c.last_stream), STREAM_A);
    void *p = strided_buffer_ptr(b);
    strided_buffer_retain(b);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.deallocates), 0);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.deallocates), 1);
    assert_ptr_equal(atomic_load(&c.freed_ptr), p);
    assert_int_equal(atomic_load(&c.freed_size), 48);
    /* The deallocation stream. */
    assert_ptr_equal(atomic_load(&c.last_stream), STREAM_A);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_user_resource_allocate_failure_propagates(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b;

    (void)state;
    c.fail_with = STRIDED_ERR_UNSUPPORTED;
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_alloc(mr, 8, NULL, &b), STRIDED_ERR_UNSUPPORTED, "counting",
                 "refused 8 bytes");
    assert_untouched(&b, sizeof b);
    assert_int_equal(atomic_load(&c.deallocates), 0);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_buffer_keeps_its_resource_alive(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b1 = NULL, *b2 = NULL;

    (void)state;
    assert_ok(strided_buffer_alloc(mr, 8, NULL, &b1));
    assert_ok(strided_buffer_alloc(mr, 8, NULL, &b2));
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 0);
    strided_buffer_release(b1);
    assert_int_equal(atomic_load(&c.destroys), 0);
    /* The resource is still usable through the buffer. */
    assert_ptr_equal(strided_memory_resource_self(strided_buffer_resource(b2)), &c);
    strided_buffer_release(b2);
    assert_int_equal(atomic_load(&c.deallocates), 2);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_resource_buffer_released_on_another_thread(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b = NULL;

    (void)state;
    assert_ok(strided_buffer_alloc(mr, 8, NULL, &b));
    strided_memory_resource_release(mr);
    run_on_thread(release_buffer, b);
    assert_int_equal(atomic_load(&c.deallocates), 1);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_set_deallocation_stream(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b = NULL;

    (void)state;
    assert_ok(strided_buffer_alloc(mr, 8, STREAM_A, &b));
    assert_ok(strided_buffer_set_deallocation_stream(b, STREAM_B));
    strided_buffer_release(b);
    assert_ptr_equal(atomic_load(&c.last_stream), STREAM_B);
    assert_ok(strided_buffer_alloc(mr, 8, STREAM_A, &b));
    assert_ok(strided_buffer_set_deallocation_stream(b, NULL));
    strided_buffer_release(b);
    assert_null(atomic_load(&c.last_stream));
    strided_memory_resource_release(mr);
}

static void test_set_deallocation_stream_needs_a_resource(void **state)
{
    strided_buffer *b = NULL;
    char c = 0;

    (void)state;
    assert_ok(strided_buffer_wrap(&c, 1, NULL, NULL, &b));
    assert_error(strided_buffer_set_deallocation_stream(b, STREAM_A), STRIDED_ERR_INVALID_ARGUMENT,
                 "set_deallocation_stream", NULL);
    strided_buffer_release(b);
}

static void test_wrap_resource(void **state)
{
    counting c;
    strided_memory_resource_props props = {true, true, false, 3, false};
    strided_memory_resource *mr = counting_resource(&c, props);
    strided_buffer *b = NULL;
    void *p = malloc(72);

    (void)state;
    assert_ok(strided_buffer_wrap_resource(p, 72, mr, STREAM_B, &b));
    assert_ptr_equal(strided_buffer_ptr(b), p);
    assert_ptr_equal(strided_buffer_resource(b), mr);
    strided_memory_info info = strided_buffer_memory_info(b);
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(info.device_id, 3);
    assert_true(info.host_accessible);
    assert_true(info.device_accessible);
    assert_false(info.managed);
    assert_true(info.device_address == (uintptr_t)p);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 0);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.allocates), 0);
    assert_int_equal(atomic_load(&c.deallocates), 1);
    assert_ptr_equal(atomic_load(&c.freed_ptr), p);
    assert_int_equal(atomic_load(&c.freed_size), 72);
    assert_ptr_equal(atomic_load(&c.last_stream), STREAM_B);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_wrap_resource_invalid_arguments(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b;
    char m = 0;

    (void)state;
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_wrap_resource(&m, 1, NULL, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT,
                 "wrap_resource", NULL);
    assert_untouched(&b, sizeof b);
    assert_error(strided_buffer_wrap_resource(&m, 1, mr, NULL, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "wrap_resource", NULL);
    assert_int_equal(atomic_load(&c.deallocates), 0);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

static void test_wrap_resource_allocation_failure(void **state)
{
    counting c;
    strided_memory_resource *mr = counting_resource(&c, host_props);
    strided_buffer *b;
    char m = 0;

    (void)state;
    fill_sentinel(&b, sizeof b);
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_wrap_resource(&m, 1, mr, NULL, &b), STRIDED_ERR_OUT_OF_MEMORY,
                 "wrap_resource", NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&b, sizeof b);
    assert_int_equal(atomic_load(&c.deallocates), 0);
    strided_memory_resource_release(mr);
    assert_int_equal(atomic_load(&c.destroys), 1);
}

/* Allocated buffers answer the memory kind from their resource. */
static void test_alloc_takes_the_kind_from_the_resource(void **state)
{
    static const struct {
        strided_memory_resource_props props;
        strided_memory_kind kind;
    } cases[] = {
        {{true, false, false, -1, false}, STRIDED_MEMORY_HOST},
        {{true, true, false, -1, false}, STRIDED_MEMORY_PINNED},
        {{false, true, false, 1, false}, STRIDED_MEMORY_DEVICE},
        {{true, true, true, 0, false}, STRIDED_MEMORY_MANAGED},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        counting c;
        strided_memory_resource *mr = counting_resource(&c, cases[i].props);
        strided_buffer *b = NULL;
        assert_ok(strided_buffer_alloc(mr, 16, NULL, &b));
        strided_memory_info info = strided_buffer_memory_info(b);
        assert_int_equal(info.kind, cases[i].kind);
        assert_int_equal(info.device_id, cases[i].props.device_id);
        assert_int_equal(info.host_accessible, cases[i].props.host_accessible);
        assert_int_equal(info.device_accessible, cases[i].props.device_accessible);
        assert_int_equal(info.managed, cases[i].props.managed);
        assert_true(info.device_address ==
                    (cases[i].props.device_accessible ? (uintptr_t)strided_buffer_ptr(b) : 0));
        strided_buffer_release(b);
        strided_memory_resource_release(mr);
    }
}

static void test_memory_info_query_without_out(void **state)
{
    char c = 0;
    (void)state;
    assert_error(strided_memory_info_query(&c, NULL), STRIDED_ERR_INVALID_ARGUMENT, "memory_info",
                 NULL);
}

static void test_memory_info_of_heap_stack_and_null(void **state)
{
    strided_memory_info info;
    int local = 0;
    void *heap = calloc(1, 8);

    (void)state;
    assert_ok(strided_memory_info_query(heap, &info));
    check_host_info(info);
    assert_ok(strided_memory_info_query(&local, &info));
    check_host_info(info);
    assert_ok(strided_memory_info_query(NULL, &info));
    check_host_info(info);
    free(heap);
}

/* A successful call leaves the thread's last error as it was
 * (strided/status.h: the message is recorded by failures). */
static void test_success_keeps_the_last_error(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    strided_memory_info info;
    char before[512];
    char c = 0;

    (void)state;
    assert_status(strided_host_resource_create(3, &mr), STRIDED_ERR_INVALID_ARGUMENT);
    snprintf(before, sizeof before, "%s", strided_last_error());
    assert_ok(strided_memory_info_query(&c, &info));
    assert_string_equal(strided_last_error(), before);
    assert_ok(strided_buffer_wrap(&c, 1, NULL, NULL, &b));
    assert_string_equal(strided_last_error(), before);
    assert_int_equal(strided_last_cuda_error(), 0);
    strided_buffer_release(b);
}

#if defined(DRIVER_FAKE)

/* The kind of memory a pointer is, through the fake driver's range table. */

/* A range over real memory (so the addresses are unique) with the given
 * attributes. */
typedef struct fake_memory {
    char bytes[4096];
} fake_memory;

static fake_cuda_range range_of(void *p, unsigned int type, int managed, int ordinal,
                                uintptr_t device_pointer, void *pool)
{
    fake_cuda_range r = {(uintptr_t)p, 4096, type, managed, ordinal, device_pointer, pool};
    return r;
}

static strided_memory_info query(const void *p)
{
    strided_memory_info info;
    memset(&info, 0x5a, sizeof info);
    assert_ok(strided_memory_info_query(p, &info));
    return info;
}

static void check_info_at(strided_memory_info info, strided_memory_kind kind, int device_id,
                          bool host, bool device, bool managed, bool pooled,
                          uintptr_t device_address, const char *file, int line)
{
    check_i64_(info.kind, kind, "kind", file, line);
    check_i64_(info.device_id, device_id, "device_id", file, line);
    check_i64_(info.host_accessible, host, "host_accessible", file, line);
    check_i64_(info.device_accessible, device, "device_accessible", file, line);
    check_i64_(info.managed, managed, "managed", file, line);
    check_i64_(info.pooled, pooled, "pooled", file, line);
    if (info.device_address != device_address)
        fail_at(file, line, "device_address %#jx, expected %#jx\n", (uintmax_t)info.device_address,
                (uintmax_t)device_address);
}
#define check_info(...) check_info_at(__VA_ARGS__, __FILE__, __LINE__)

static void test_fake_pageable_memory_is_host_only(void **state)
{
    fake_memory *m = malloc(sizeof *m);

    (void)state;
    fake.reset(1, 0, 1);
    check_info(query(m), STRIDED_MEMORY_HOST, -1, true, false, false, false, 0);
    check_info(query(NULL), STRIDED_MEMORY_HOST, -1, true, false, false, false, 0);
    assert_null(fake.current_context()); /* no context needed, none left */
    free(m);
}

/* With pageable memory access (HMM/ATS) host memory, and NULL, can be read
 * by the device at the same address; it stays HOST with device -1. */
static void test_fake_pageable_memory_with_pageable_access(void **state)
{
    fake_memory *m = malloc(sizeof *m);

    (void)state;
    fake.reset(1, 1, 1);
    check_info(query(m), STRIDED_MEMORY_HOST, -1, true, true, false, false, (uintptr_t)m);
    check_info(query(m->bytes + 100), STRIDED_MEMORY_HOST, -1, true, true, false, false,
               (uintptr_t)(m->bytes + 100));
    strided_memory_info null_info = query(NULL);
    assert_int_equal(null_info.kind, STRIDED_MEMORY_HOST);
    assert_int_equal(null_info.device_id, -1);
    assert_true(null_info.host_accessible);
    assert_true(null_info.device_accessible);
    assert_false(null_info.managed);
    assert_null(fake.current_context());
    free(m);
    fake.reset(1, 0, 1);
}

/* Registered memory mapped at another device address keeps both
 * addresses. */
static void test_fake_registered_memory_at_another_device_address(void **state)
{
    fake_memory *m = malloc(sizeof *m);
    uintptr_t mapped = (uintptr_t)0x7f0000000000u;
    fake_cuda_range r = range_of(m, 1, 0, 0, mapped, NULL);
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(1, 0, 1);
    fake.add_range(&r);
    check_info(query(m), STRIDED_MEMORY_PINNED, 0, true, true, false, false, mapped);
    check_info(query(m->bytes + 8), STRIDED_MEMORY_PINNED, 0, true, true, false, false, mapped + 8);
    /* The buffer keeps the host address as its pointer and both in info. */
    assert_ok(strided_buffer_wrap(m->bytes + 8, 16, NULL, NULL, &b));
    assert_ptr_equal(strided_buffer_ptr(b), m->bytes + 8);
    check_info(strided_buffer_memory_info(b), STRIDED_MEMORY_PINNED, 0, true, true, false, false,
               mapped + 8);
    strided_buffer_release(b);
    free(m);
}

/* The kind of the memory of a range, by the attributes the driver reports
 * for it, and its device address (an interior pointer behaves like its
 * allocation). */
static void test_fake_memory_kinds(void **state)
{
    const struct kind_case {
        int line;
        int devices;         /* of the fake driver */
        unsigned int type;   /* MEMORY_TYPE: 1 host, 2 device */
        int managed;         /* IS_MANAGED */
        int ordinal;         /* DEVICE_ORDINAL */
        bool device_pointer; /* DEVICE_POINTER is the address, not 0 */
        void *pool;          /* MEMPOOL_HANDLE */
        strided_memory_kind kind;
        bool host, device; /* accessible from */
        size_t interior;   /* an offset to query too, or 0 */
    } cases[] = {
        CASE(2, 1, 0, 1, true, NULL, STRIDED_MEMORY_PINNED, true, true, 100),
        /* Pinned-pool memory: the driver reports DEVICE_POINTER 0, meaning
         * the host address. */
        CASE(1, 1, 0, 0, false, (void *)0x9001, STRIDED_MEMORY_PINNED, true, true, 0),
        CASE(2, 2, 0, 1, true, NULL, STRIDED_MEMORY_DEVICE, false, true, 4095),
        CASE(1, 2, 0, 0, true, (void *)0x9002, STRIDED_MEMORY_DEVICE, false, true, 0),
        /* Managed memory reports MEMORY_TYPE DEVICE and IS_MANAGED 1. */
        CASE(2, 2, 1, 1, true, NULL, STRIDED_MEMORY_MANAGED, true, true, 0),
        CASE(1, 2, 1, 0, true, (void *)0x9003, STRIDED_MEMORY_MANAGED, true, true, 0),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct kind_case *c = &cases[i];
        fake_memory *m = malloc(sizeof *m);
        fake_cuda_range r = range_of(m, c->type, c->managed, c->ordinal,
                                     c->device_pointer ? (uintptr_t)m : 0, c->pool);
        fake.reset(c->devices, 0, 1);
        fake.add_range(&r);
        check_info_at(query(m), c->kind, c->ordinal, c->host, c->device, c->managed != 0,
                      c->pool != NULL, (uintptr_t)m, AT(c));
        if (c->interior != 0)
            check_info_at(query(m->bytes + c->interior), c->kind, c->ordinal, c->host, c->device,
                          c->managed != 0, c->pool != NULL, (uintptr_t)(m->bytes + c->interior),
                          AT(c));
        free(m);
    }
}

static void check_unsupported_type(unsigned int type)
{
    fake_memory *m = malloc(sizeof *m);
    fake_cuda_range r = range_of(m, type, 0, 0, 0, NULL);
    strided_memory_info info;
    strided_buffer *b;
    releases rel;
    char text[64];

    fake.reset(1, 0, 1);
    fake.add_range(&r);
    snprintf(text, sizeof text, "Unsupported memory type: %u", type);
    fill_sentinel(&info, sizeof info);
    assert_error(strided_memory_info_query(m, &info), STRIDED_ERR_UNSUPPORTED, "memory_info", text);
    assert_untouched(&info, sizeof info);
    /* Wrapping it fails the same way and never calls release. */
    releases_init(&rel);
    fill_sentinel(&b, sizeof b);
    assert_status(strided_buffer_wrap(m, 4096, count_release, &rel, &b), STRIDED_ERR_UNSUPPORTED);
    assert_non_null(strstr(strided_last_error_reason(), text));
    assert_untouched(&b, sizeof b);
    assert_int_equal(atomic_load(&rel.count), 0);
    free(m);
}

static void test_fake_array_memory_is_unsupported(void **state)
{
    (void)state;
    check_unsupported_type(3);
}

static void test_fake_unified_memory_type_is_unsupported(void **state)
{
    (void)state;
    check_unsupported_type(4);
}

static void test_fake_query_failure_is_a_cuda_error(void **state)
{
    char m[8] = {0};
    strided_memory_info info;
    strided_buffer *b;
    releases rel;

    (void)state;
    fake.reset(1, 0, 1);
    fake.fail_next("cuPointerGetAttributes", CUDA_ERROR_UNKNOWN);
    fill_sentinel(&info, sizeof info);
    assert_error(strided_memory_info_query(m, &info), STRIDED_ERR_CUDA, "memory_info",
                 "cuPointerGetAttributes failed: CUDA_ERROR_UNKNOWN (unknown error)");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_UNKNOWN);
    assert_untouched(&info, sizeof info);

    releases_init(&rel);
    fake.fail_next("cuPointerGetAttributes", CUDA_ERROR_INVALID_VALUE);
    fill_sentinel(&b, sizeof b);
    assert_status(strided_buffer_wrap(m, 8, count_release, &rel, &b), STRIDED_ERR_CUDA);
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_INVALID_VALUE);
    assert_untouched(&b, sizeof b);
    assert_int_equal(atomic_load(&rel.count), 0);
}

/* Wrapping classifies once, when the buffer is made. */
static void test_fake_wrap_classifies_once(void **state)
{
    fake_memory *m = malloc(sizeof *m);
    fake_cuda_range r = range_of(m, 2, 1, 0, (uintptr_t)m, NULL);
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(1, 0, 1);
    fake.add_range(&r);
    assert_ok(strided_buffer_wrap(m, sizeof *m, NULL, NULL, &b));
    long queries = fake.calls("cuPointerGetAttributes");
    assert_int_equal(queries, 1);
    for (int i = 0; i < 5; i++)
        check_info(strided_buffer_memory_info(b), STRIDED_MEMORY_MANAGED, 0, true, true, true,
                   false, (uintptr_t)m);
    assert_int_equal(fake.calls("cuPointerGetAttributes"), queries);
    strided_buffer_release(b);
    free(m);
}

/* Allocated buffers never query the driver. */
static void test_fake_allocated_buffers_do_not_query(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;

    (void)state;
    fake.reset(1, 0, 1);
    assert_ok(strided_host_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    assert_int_equal(fake.calls("cuPointerGetAttributes"), 0);
}

static void test_fake_wrap_allocation_failure_never_releases(void **state)
{
    fake_memory *m = malloc(sizeof *m);
    fake_cuda_range r = range_of(m, 2, 0, 0, (uintptr_t)m, NULL);
    releases rel;
    strided_buffer *b;

    (void)state;
    fake.reset(1, 0, 1);
    fake.add_range(&r);
    releases_init(&rel);
    fill_sentinel(&b, sizeof b);
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_wrap(m, sizeof *m, count_release, &rel, &b),
                 STRIDED_ERR_OUT_OF_MEMORY, "wrap", NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&b, sizeof b);
    assert_int_equal(atomic_load(&rel.count), 0);
    free(m);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrap_host_memory),
        cmocka_unit_test(test_wrap_releases_once_after_the_last_reference),
        cmocka_unit_test(test_wrap_releases_on_the_thread_that_drops_the_last),
        cmocka_unit_test(test_wrap_releases_once_under_racing_threads),
        cmocka_unit_test(test_borrowed_memory_is_never_released),
        cmocka_unit_test(test_wrap_null_pointer_and_size_0),
        cmocka_unit_test(test_wrap_size_0_of_a_real_pointer),
        cmocka_unit_test(test_wrap_without_out),
        cmocka_unit_test(test_wrap_allocation_failure_never_releases),
        cmocka_unit_test(test_retain_and_release_accept_null),
        cmocka_unit_test(test_alloc_from_the_host_resource),
        cmocka_unit_test(test_alloc_honours_the_alignment),
        cmocka_unit_test(test_alloc_of_size_0),
        cmocka_unit_test(test_alloc_without_resource),
        cmocka_unit_test(test_alloc_without_out),
        cmocka_unit_test(test_alloc_allocation_failure_leaks_nothing),
        cmocka_unit_test(test_alloc_gives_memory_back_when_the_buffer_fails),
        cmocka_unit_test(test_user_resource_deallocates_once_with_its_arguments),
        cmocka_unit_test(test_user_resource_allocate_failure_propagates),
        cmocka_unit_test(test_buffer_keeps_its_resource_alive),
        cmocka_unit_test(test_resource_buffer_released_on_another_thread),
        cmocka_unit_test(test_set_deallocation_stream),
        cmocka_unit_test(test_set_deallocation_stream_needs_a_resource),
        cmocka_unit_test(test_wrap_resource),
        cmocka_unit_test(test_wrap_resource_invalid_arguments),
        cmocka_unit_test(test_wrap_resource_allocation_failure),
        cmocka_unit_test(test_alloc_takes_the_kind_from_the_resource),
        cmocka_unit_test(test_memory_info_query_without_out),
        cmocka_unit_test(test_memory_info_of_heap_stack_and_null),
        cmocka_unit_test(test_success_keeps_the_last_error),
#if defined(DRIVER_FAKE)
        cmocka_unit_test(test_fake_pageable_memory_is_host_only),
        cmocka_unit_test(test_fake_pageable_memory_with_pageable_access),
        cmocka_unit_test(test_fake_registered_memory_at_another_device_address),
        cmocka_unit_test(test_fake_memory_kinds),
        cmocka_unit_test(test_fake_array_memory_is_unsupported),
        cmocka_unit_test(test_fake_unified_memory_type_is_unsupported),
        cmocka_unit_test(test_fake_query_failure_is_a_cuda_error),
        cmocka_unit_test(test_fake_wrap_classifies_once),
        cmocka_unit_test(test_fake_allocated_buffers_do_not_query),
        cmocka_unit_test(test_fake_wrap_allocation_failure_never_releases),
#endif
    };

#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 1);
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
