/*
 * Tests of the view descriptors of strided/view.h: a view that crosses to
 * another process (its buffer's IPC descriptor, origin, layout, dtype,
 * device, read-only flag, and an interprocess event), and every refusal of
 * a broken, foreign or misdirected descriptor.
 *
 * Against the fake driver with two devices, which shares memory in one
 * process: a test plays the importing process by giving this process
 * another identity (strided__ipc_pretend_process).
 */
#include "test_memory.h"

#include <unistd.h>

#include "cuda/driver.h"
#include "memory/ipc.h"
#include "strided/ipc.h"
#include "strided/view.h"
#include "test_cuda.h"

#define VSIZE(ndim) STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(ndim)

static const strided_device_pool_options ipc_options = {true, 0};
static const strided_dtype float32 = {STRIDED_DTYPE_FLOAT, 32, 1};

/* The exporter's pool and the importer's mapping of it. */
typedef struct pools {
    strided_memory_resource *mr, *mapped;
} pools;

static pools share_pool(int device)
{
    pools p = {NULL, NULL};
    int fd = -1;
    unsigned char id[STRIDED_IPC_POOL_ID_SIZE];
    assert_ok(strided_device_pool_resource_create(device, &ipc_options, &p.mr));
    assert_ok(strided_memory_resource_export_pool(p.mr, &fd));
    assert_true(strided_memory_resource_pool_id(p.mr, id));
    assert_ok(strided_device_pool_resource_import(device, fd, id, &p.mapped));
    close(fd);
    return p;
}

static void release_pools(pools *p)
{
    strided_memory_resource_release(p->mapped);
    strided_memory_resource_release(p->mr);
}

/* A 3x4 float32 view, every other column of a 3x8 buffer, starting at
 * column 1: (3,4):(8,2)+1. */
static strided_view strided_columns(strided_buffer *b, bool readonly)
{
    strided_layout l;
    strided_view v;
    int64_t shape[] = {3, 4}, strides[] = {8, 2};
    assert_ok(strided_layout_init(&l, 2, shape, strides, 4));
    l.slice_offset = 1;
    assert_ok(strided_view_from_buffer(b, &l, &float32, readonly, &v));
    return v;
}

static void reseal(unsigned char *d, size_t size)
{
    strided__put_le(d + size - 8, strided__ipc_checksum(d, size - 8), 8);
}

static void be_another_process(bool on)
{
    strided__ipc_pretend_process(on ? 0xfeed : 0, NULL);
}

static void test_view_round_trip(void **state)
{
    pools p;
    strided_buffer *b = NULL;
    unsigned char d[VSIZE(2)];
    size_t size = 0;
    strided_view v, imported;

    (void)state;
    fake.reset(2, 0, 1);
    p = share_pool(1);
    assert_ok(strided_buffer_alloc(p.mr, 3 * 8 * 4, NULL, &b));
    v = strided_columns(b, true);
    strided_buffer_release(b);
    assert_ok(strided_view_export_ipc(&v, NULL, d, sizeof d, &size));
    assert_int_equal(size, VSIZE(2));
    assert_int_equal(size, 360);

    be_another_process(true);
    assert_ok(strided_view_import_ipc(p.mapped, d, size, STREAM_A, &imported));
    be_another_process(false);
    assert_layout(imported.layout, "(3,4):(8,2)+1", 4);
    assert_true(imported.has_dtype);
    assert_true(strided_dtype_equal(imported.dtype, float32));
    assert_true(imported.readonly);
    assert_i64(imported.origin, 0);
    assert_int_equal(imported.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(imported.device.device_id, 1);
    assert_int_equal(imported.home_device, 1);
    assert_true(imported.device_accessible);
    assert_ptr_equal(strided_view_ptr(&imported), strided_view_ptr(&v));
    assert_true(strided_buffer_is_mapped(imported.buffer));
    assert_int_equal(strided_buffer_use_count(imported.buffer), 1);
    uintptr_t address = (uintptr_t)strided_buffer_ptr(v.buffer);
    assert_int_equal(fake.mappings(address), 1);

    /* A view made from the imported one keeps the mapping alive. */
    strided_view row;
    strided_layout one;
    int64_t n = 4, stride = 2;
    assert_ok(strided_layout_init(&one, 1, &n, &stride, 4));
    assert_ok(strided_view_view(&imported, &one, NULL, &row));
    strided_view_release(&imported);
    assert_int_equal(fake.mappings(address), 1);
    strided_view_release(&row);
    assert_int_equal(fake.mappings(address), 0);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_A);

    strided_view_release(&v);
    release_pools(&p);
}

/* A 0-d view, a view without a dtype, and negative strides. */
static void test_view_shapes(void **state)
{
    pools p;
    strided_buffer *b = NULL;
    unsigned char d[VSIZE(STRIDED_MAX_NDIM)];
    size_t size = 0;
    strided_view v, imported;
    strided_layout l;

    (void)state;
    fake.reset(2, 0, 1);
    p = share_pool(0);
    assert_ok(strided_buffer_alloc(p.mr, 64, NULL, &b));
    assert_ok(strided_layout_init(&l, 0, NULL, NULL, 8));
    l.slice_offset = 3;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    assert_ok(strided_view_export_ipc(&v, NULL, d, sizeof d, &size));
    assert_int_equal(size, 328);
    be_another_process(true);
    assert_ok(strided_view_import_ipc(p.mapped, d, size, NULL, &imported));
    be_another_process(false);
    assert_layout(imported.layout, "():()+3", 8);
    assert_false(imported.has_dtype);
    assert_false(imported.readonly);
    strided_view_release(&imported);
    strided_view_release(&v);

    int64_t shape[] = {2, 3}, strides[] = {-3, -1};
    assert_ok(strided_layout_init(&l, 2, shape, strides, 2));
    l.slice_offset = 5;
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    assert_ok(strided_view_export_ipc(&v, NULL, d, sizeof d, &size));
    be_another_process(true);
    assert_ok(strided_view_import_ipc(p.mapped, d, size, NULL, &imported));
    be_another_process(false);
    assert_layout(imported.layout, "(2,3):(-3,-1)+5", 2);
    strided_view_release(&imported);
    strided_view_release(&v);
    strided_buffer_release(b);
    release_pools(&p);
}

/* A view of device memory allocated elsewhere travels through legacy
 * IPC, with no resource on either side. */
static unsigned char device_memory[1024] __attribute__((aligned(256)));

static void test_legacy_view(void **state)
{
    strided_buffer *b = NULL;
    unsigned char d[VSIZE(2)];
    size_t size;
    strided_view v, imported;

    (void)state;
    fake.reset(2, 0, 1);
    fake_device_range(device_memory, sizeof device_memory, 0);
    assert_ok(strided_buffer_wrap(device_memory + 512, 3 * 8 * 4, NULL, NULL, &b));
    v = strided_columns(b, false);
    strided_buffer_release(b);
    assert_ok(strided_view_export_ipc(&v, NULL, d, sizeof d, &size));
    be_another_process(true);
    assert_ok(strided_view_import_ipc(NULL, d, size, NULL, &imported));
    be_another_process(false);
    assert_ptr_equal(strided_view_ptr(&imported), strided_view_ptr(&v));
    assert_layout(imported.layout, "(3,4):(8,2)+1", 4);
    assert_int_equal(fake.mappings((uintptr_t)device_memory), 1);
    strided_view_release(&imported);
    assert_int_equal(fake.mappings((uintptr_t)device_memory), 0);
    strided_view_release(&v);
    fake.remove_range((uintptr_t)device_memory);
}

/* An event recorded on the producer's stream travels with the view; the
 * consumer's stream waits on it. */
static void test_view_with_event(void **state)
{
    pools p;
    strided_buffer *b = NULL;
    unsigned char d[VSIZE(2)];
    size_t size;
    strided_view v, imported;
    strided_ipc_event *event = NULL;

    (void)state;
    fake.reset(2, 0, 1);
    long events = fake.live_events();
    p = share_pool(1);
    assert_ok(strided_buffer_alloc(p.mr, 3 * 8 * 4, NULL, &b));
    v = strided_columns(b, false);
    strided_buffer_release(b);
    assert_ok(strided_ipc_event_record(1, STREAM_A, &event));
    assert_ptr_equal(fake.last_stream("cuEventRecord"), STREAM_A);
    assert_int_equal(fake.live_events(), events + 1);
    assert_ok(strided_view_export_ipc(&v, event, d, sizeof d, &size));
    be_another_process(true);
    assert_ok(strided_view_import_ipc(p.mapped, d, size, STREAM_B, &imported));
    be_another_process(false);
    assert_int_equal(fake.calls("cuIpcOpenEventHandle"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamWaitEvent"), STREAM_B);
    /* The opened event is gone; the producer's stays until released. */
    assert_int_equal(fake.live_events(), events + 1);
    strided_view_release(&imported);

    /* The producer destroyed its event too early: the consumer gets the
     * driver's refusal and nothing stays mapped. */
    strided_ipc_event_release(event);
    assert_int_equal(fake.live_events(), events);
    be_another_process(true);
    fill_sentinel(&imported, sizeof imported);
    assert_error(strided_view_import_ipc(p.mapped, d, size, STREAM_B, &imported), STRIDED_ERR_CUDA,
                 "view_import_ipc", "cuIpcOpenEventHandle failed: CUDA_ERROR_INVALID_VALUE");
    be_another_process(false);
    assert_untouched(&imported, sizeof imported);
    assert_int_equal(fake.mappings((uintptr_t)strided_buffer_ptr(v.buffer)), 0);
    assert_int_equal(fake.live_events(), events);
    strided_ipc_event_release(NULL);
    strided_view_release(&v);
    release_pools(&p);
}

static void test_event_failures(void **state)
{
    strided_ipc_event *event;

    (void)state;
    fake.reset(2, 0, 1);
    long events = fake.live_events();
    fill_sentinel(&event, sizeof event);
    assert_error(strided_ipc_event_record(0, NULL, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_event_record", "out is required");
    assert_error(strided_ipc_event_record(5, NULL, &event), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_event_record", "device 5 does not exist; there are 2 CUDA devices");
    fake.fail_next("cuEventCreate", CUDA_ERROR_OUT_OF_MEMORY);
    assert_error(strided_ipc_event_record(0, NULL, &event), STRIDED_ERR_CUDA, "ipc_event_record",
                 "cuEventCreate");
    fake.fail_next("cuIpcGetEventHandle", CUDA_ERROR_NOT_SUPPORTED);
    assert_error(strided_ipc_event_record(0, NULL, &event), STRIDED_ERR_CUDA, "ipc_event_record",
                 "cuIpcGetEventHandle");
    strided__fail_allocation_after(0);
    assert_error(strided_ipc_event_record(0, NULL, &event), STRIDED_ERR_OUT_OF_MEMORY,
                 "ipc_event_record", "cannot allocate an event");
    assert_untouched(&event, sizeof event);
    assert_int_equal(fake.live_events(), events);
    assert_null(fake.current_context());
}

static void test_export_failures(void **state)
{
    pools p;
    strided_buffer *b = NULL;
    unsigned char d[VSIZE(2)];
    size_t size = 0;
    strided_view v;
    static char host[96];

    (void)state;
    fake.reset(2, 0, 1);
    p = share_pool(0);
    assert_ok(strided_buffer_alloc(p.mr, 96, NULL, &b));
    v = strided_columns(b, false);
    strided_buffer_release(b);
    assert_error(strided_view_export_ipc(NULL, NULL, d, sizeof d, &size),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_export_ipc", "view and out_size are required");
    assert_error(strided_view_export_ipc(&v, NULL, d, sizeof d, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "view_export_ipc", "view and out_size are required");
    assert_error(strided_view_export_ipc(&v, NULL, d, 100, &size), STRIDED_ERR_INVALID_ARGUMENT,
                 "view_export_ipc", "the descriptor needs 360 bytes, room for 100");
    assert_int_equal(size, 360);
    size = 0;
    assert_error(strided_view_export_ipc(&v, NULL, NULL, 0, &size), STRIDED_ERR_INVALID_ARGUMENT,
                 "view_export_ipc", "the descriptor needs 360 bytes, room for 0");
    assert_int_equal(size, 360);
    strided_view_release(&v);
    assert_error(strided_view_export_ipc(&v, NULL, d, sizeof d, &size),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_export_ipc", "the view has been released");

    assert_ok(strided_buffer_wrap(host, sizeof host, NULL, NULL, &b));
    v = strided_columns(b, false);
    strided_buffer_release(b);
    assert_error(strided_view_export_ipc(&v, NULL, d, sizeof d, &size), STRIDED_ERR_UNSUPPORTED,
                 "view_export_ipc",
                 "only device memory and the memory of IPC-enabled pools can be shared");
    strided_view_release(&v);
    release_pools(&p);
}

/* A good descriptor of a 3x4 view, and the pools it needs. */
static size_t good_descriptor(pools *p, strided_view *v, unsigned char *d)
{
    strided_buffer *b = NULL;
    size_t size = 0;
    fake.reset(2, 0, 1);
    strided__ipc_pretend_process(0, NULL);
    *p = share_pool(1);
    assert_ok(strided_buffer_alloc(p->mr, 96, NULL, &b));
    *v = strided_columns(b, false);
    strided_buffer_release(b);
    assert_ok(strided_view_export_ipc(v, NULL, d, VSIZE(2), &size));
    return size;
}

/* Every broken descriptor is refused with its reason; nothing is mapped
 * and out is untouched. */
static void test_import_refusals(void **state)
{
    pools p;
    strided_view v, out;
    unsigned char good[VSIZE(2)], d[VSIZE(3)];
    size_t size;

    (void)state;
    size = good_descriptor(&p, &v, good);
    uintptr_t address = (uintptr_t)strided_buffer_ptr(v.buffer);
    fill_sentinel(&out, sizeof out);
    be_another_process(true);
    assert_error(strided_view_import_ipc(p.mapped, NULL, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "descriptor and out are required");
    assert_error(strided_view_import_ipc(p.mapped, good, size, NULL, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "descriptor and out are required");
    assert_error(strided_view_import_ipc(p.mapped, good, 100, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "truncated: a view descriptor is at least 328 bytes, got 100");
    assert_error(strided_view_import_ipc(p.mapped, good, size - 1, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "truncated or too long: a view descriptor of 2 dimensions is 360 bytes, got 359");
    memcpy(d, good, size);
    d[size] = 0;
    assert_error(strided_view_import_ipc(p.mapped, d, size + 1, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc", "got 361");
    memcpy(d, good, size);
    d[7] = 'B';
    assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "not a strided view IPC descriptor");
    memcpy(d, good, size);
    d[8] = 9;
    reseal(d, size);
    assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "view descriptor version 9 is not supported; this library reads version 1");
    for (size_t i = 10; i < size; i++) {
        if (i >= 12 && i < 16)
            continue; /* ndim: a size mismatch, not a checksum one */
        memcpy(d, good, size);
        d[i] ^= 0x40;
        assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out),
                     STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc", "corrupted");
    }

    /* Fields that are wrong though sealed. */
    static const struct {
        int line;
        size_t at, n;
        uint64_t value;
        const char *text;
    } cases[] = {
        {__LINE__, 10, 1, 8, "its reserved bytes or flags are not zero"},
        {__LINE__, 11, 1, 1, "its reserved bytes or flags are not zero"},
        {__LINE__, 20, 1, 1, "its reserved bytes or flags are not zero"},
        {__LINE__, 312, 1, 1, "its reserved bytes or flags are not zero"},
        {__LINE__, 250, 1, 1, "its reserved bytes or flags are not zero"},
        {__LINE__, 16, 4, 0, "the descriptor's layout is not valid"},
        {__LINE__, 320, 8, (uint64_t)-1, "the descriptor's layout is not valid"},
        {__LINE__, 32, 8, (uint64_t)INT64_MAX, "the descriptor's layout is not valid"},
        {__LINE__, 41, 1, 64, "its dtype is not one of 4-byte elements"},
        {__LINE__, 40, 1, 99, "its dtype is not one of 4-byte elements"},
        {__LINE__, 48, 4, 0, "its device (2, 0) is not its buffer's (2, 1)"},
        {__LINE__, 44, 4, STRIDED_DEVICE_CUDA_HOST, "its device (3, 1) is not its buffer's"},
        {__LINE__, 320, 8, 100, "Buffer size is too small for the layout"},
        {__LINE__, 24, 8, 64, "The layout addresses bytes"},
    };
    long imports = fake.calls("cuMemPoolImportPointer");
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        memcpy(d, good, size);
        strided__put_le(d + cases[i].at, cases[i].value, cases[i].n);
        reseal(d, size);
        strided_status s = strided_view_import_ipc(p.mapped, d, size, NULL, &out);
        if (s != STRIDED_ERR_INVALID_ARGUMENT)
            fail_at(__FILE__, cases[i].line, "status %d: %s\n", (int)s, strided_last_error());
        assert_error(s, STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc", cases[i].text);
        assert_int_equal(fake.mappings(address), 0);
    }
    /* Only the layouts that leave the buffer got as far as mapping it. */
    assert_int_equal(fake.calls("cuMemPoolImportPointer"), imports + 2);
    /* ndim above 64, and a size that fits another ndim. */
    memcpy(d, good, size);
    strided__put_le(d + 12, 65, 4);
    reseal(d, size);
    assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc", "ndim 65 is above 64");
    memcpy(d, good, size);
    strided__put_le(d + 12, 3, 4);
    reseal(d, size);
    assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "a view descriptor of 3 dimensions is 376 bytes, got 360");
    /* The buffer's refusals read as the view import's. */
    memcpy(d, good, size);
    d[56 + 100] ^= 1;
    reseal(d, size);
    assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "corrupted: its checksum does not match");
    assert_error(strided_view_import_ipc(NULL, good, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "a pool allocation is imported through its pool's resource");
    be_another_process(false);
    assert_error(strided_view_import_ipc(p.mapped, good, size, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "view_import_ipc",
                 "the descriptor was written by this process");
    assert_untouched(&out, sizeof out);
    assert_int_equal(fake.mappings(address), 0);
    strided_view_release(&v);
    release_pools(&p);
}

/* Out of memory while importing leaves nothing mapped. */
static void test_import_out_of_memory(void **state)
{
    pools p;
    strided_view v, out;
    unsigned char d[VSIZE(2)];
    size_t size;

    (void)state;
    size = good_descriptor(&p, &v, d);
    fill_sentinel(&out, sizeof out);
    be_another_process(true);
    strided__fail_allocation_after(0);
    assert_error(strided_view_import_ipc(p.mapped, d, size, NULL, &out), STRIDED_ERR_OUT_OF_MEMORY,
                 "view_import_ipc", "cannot allocate a buffer");
    be_another_process(false);
    assert_untouched(&out, sizeof out);
    assert_int_equal(fake.mappings((uintptr_t)strided_buffer_ptr(v.buffer)), 0);
    strided_view_release(&v);
    release_pools(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_round_trip), cmocka_unit_test(test_view_shapes),
        cmocka_unit_test(test_legacy_view),     cmocka_unit_test(test_view_with_event),
        cmocka_unit_test(test_event_failures),  cmocka_unit_test(test_export_failures),
        cmocka_unit_test(test_import_refusals), cmocka_unit_test(test_import_out_of_memory),
    };

    use_fake_driver(FAKE_CUDA_PATH, 2);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
