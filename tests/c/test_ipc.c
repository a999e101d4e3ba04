/*
 * Tests of strided/ipc.h: IPC-enabled pools, exporting and importing them,
 * buffer descriptors of pool allocations and of device memory (legacy
 * IPC), their checks and every refusal.
 *
 * Built twice: DRIVER_NONE (reading descriptors and the refusals that come
 * before the driver) and DRIVER_FAKE (the fake driver with two devices,
 * which shares memory in one process: a test plays the importing process by
 * giving this process another identity, strided__ipc_pretend_process).
 */
#include "test_memory.h"

#include <unistd.h>

#include "cuda/driver.h"
#include "memory/ipc.h"
#include "strided/ipc.h"
#include "test_cuda.h"

#define DSIZE STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE

/* Rewrite a descriptor's checksum after a test changed its fields, so that
 * the field checks, not the checksum, meet the change. */
static void reseal(unsigned char *d)
{
    strided__put_le(d + 184, strided__ipc_checksum(d, 184), 8);
}

/* A legacy descriptor written by hand: device memory of device 0, 64
 * bytes at offset 32 of a 256-byte allocation. */
static void legacy_descriptor(unsigned char *d)
{
    memset(d, 0, DSIZE);
    memcpy(d, "STRDIPCB", 8);
    strided__put_le(d + 8, 1, 2);
    d[10] = STRIDED_IPC_LEGACY;
    d[11] = STRIDED_MEMORY_DEVICE;
    strided__put_le(d + 12, 0, 4);
    strided__put_le(d + 32, 1, 8);
    strided__put_le(d + 40, 7, 8);
    strided__put_le(d + 72, 64, 8);
    strided__put_le(d + 80, 32, 8);
    strided__put_le(d + 88, 256, 8);
    reseal(d);
}

static void test_describe_reads_a_descriptor(void **state)
{
    unsigned char d[DSIZE];
    strided_buffer_ipc_info info;

    (void)state;
    legacy_descriptor(d);
    assert_ok(strided_buffer_ipc_describe(d, sizeof d, &info));
    assert_int_equal(info.version, 1);
    assert_int_equal(info.sharing, STRIDED_IPC_LEGACY);
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(info.device_id, 0);
    assert_i64(info.size, 64);
    assert_i64(info.offset, 32);
    assert_false(info.has_pool_id);
    assert_i64(info.exporter_pid, 1);
}

/* Each broken descriptor is refused with its reason; out is untouched. */
static void test_describe_refuses_broken_descriptors(void **state)
{
    unsigned char d[DSIZE + 1];
    strided_buffer_ipc_info info;

    (void)state;
    fill_sentinel(&info, sizeof info);
    legacy_descriptor(d);
    assert_error(strided_buffer_ipc_describe(NULL, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "descriptor and out are required");
    assert_error(strided_buffer_ipc_describe(d, DSIZE, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "descriptor and out are required");
    assert_error(strided_buffer_ipc_describe(d, 100, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "a buffer IPC descriptor is 192 bytes, got 100");
    assert_error(strided_buffer_ipc_describe(d, DSIZE - 1, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "is 192 bytes, got 191");
    assert_error(strided_buffer_ipc_describe(d, DSIZE + 1, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "is 192 bytes, got 193");
    assert_error(strided_buffer_ipc_describe(d, 0, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "got 0");

    d[0] = 'X';
    assert_error(strided_buffer_ipc_describe(d, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "not a strided buffer IPC descriptor");
    legacy_descriptor(d);
    strided__put_le(d + 8, 2, 2);
    reseal(d);
    assert_error(strided_buffer_ipc_describe(d, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe",
                 "buffer descriptor version 2 is not supported; this library reads version 1");
    /* Every single flipped bit of the body is caught by the checksum. */
    for (size_t i = 10; i < DSIZE; i++) {
        legacy_descriptor(d);
        d[i] ^= 0x10;
        assert_error(strided_buffer_ipc_describe(d, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                     "ipc_describe", "corrupted: its checksum does not match");
    }
    assert_untouched(&info, sizeof info);
}

/* A writer that is wrong but seals its descriptor is refused field by
 * field. */
static void test_describe_refuses_invalid_fields(void **state)
{
    static const struct {
        int line;
        size_t at, n;
        uint64_t value;
        const char *text;
    } cases[] = {
        {__LINE__, 10, 1, 3, "its sharing is neither a pool's nor legacy"},
        {__LINE__, 11, 1, STRIDED_MEMORY_HOST, "its memory kind cannot be shared that way"},
        {__LINE__, 11, 1, STRIDED_MEMORY_PINNED, "its memory kind cannot be shared that way"},
        {__LINE__, 11, 1, STRIDED_MEMORY_MANAGED, "its memory kind cannot be shared that way"},
        {__LINE__, 12, 4, 0xffffffffu, "its device does not fit its memory kind"},
        {__LINE__, 12, 4, 0xfffffffeu, "its device does not fit its memory kind"},
        {__LINE__, 72, 8, 0, "its size is 0 or above 2**63 - 1"},
        {__LINE__, 72, 8, (uint64_t)INT64_MAX + 1, "its size is 0"},
        {__LINE__, 64, 1, 2, "its reserved bytes are not zero"},
        {__LINE__, 66, 1, 1, "its reserved bytes are not zero"},
        {__LINE__, 170, 1, 1, "its reserved bytes are not zero"},
        {__LINE__, 48, 1, 9, "its reserved bytes are not zero"},
        {__LINE__, 64, 1, 1, "the buffer does not fit in its allocation"},
        {__LINE__, 80, 8, 193, "the buffer does not fit in its allocation"},
        {__LINE__, 80, 8, UINT64_MAX, "the buffer does not fit in its allocation"},
        {__LINE__, 88, 8, 95, "the buffer does not fit in its allocation"},
    };
    unsigned char d[DSIZE];
    strided_buffer_ipc_info info;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        legacy_descriptor(d);
        strided__put_le(d + cases[i].at, cases[i].value, cases[i].n);
        reseal(d);
        strided_status s = strided_buffer_ipc_describe(d, DSIZE, &info);
        if (s != STRIDED_ERR_INVALID_ARGUMENT)
            fail_at(__FILE__, cases[i].line, "status %d\n", (int)s);
        assert_error(s, STRIDED_ERR_INVALID_ARGUMENT, "ipc_describe", cases[i].text);
    }
    /* A pool allocation has no offset. */
    legacy_descriptor(d);
    d[10] = STRIDED_IPC_POOL;
    reseal(d);
    assert_error(strided_buffer_ipc_describe(d, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "a pool allocation's descriptor has an offset");
}

/* Import checks the format first and reports it as its own failure. */
static void test_import_refuses_what_describe_refuses(void **state)
{
    unsigned char d[DSIZE];
    strided_buffer *b;

    (void)state;
    fill_sentinel(&b, sizeof b);
    legacy_descriptor(d);
    assert_error(strided_buffer_import_ipc(NULL, NULL, DSIZE, NULL, &b),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc", "descriptor and out are required");
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc", "descriptor and out are required");
    assert_error(strided_buffer_import_ipc(NULL, d, 64, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_ipc", "a buffer IPC descriptor is 192 bytes, got 64");
    d[100] ^= 1;
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_ipc", "corrupted");
    assert_untouched(&b, sizeof b);
}

/* A descriptor of another boot (or machine) is refused before the
 * driver; so is one that this process wrote. */
static void test_import_refuses_another_boot_and_this_process(void **state)
{
    unsigned char d[DSIZE], other_boot[16];
    strided__ipc_process me;
    strided_buffer *b;

    (void)state;
    fill_sentinel(&b, sizeof b);
    strided__ipc_process_identity(&me);
    memset(other_boot, 0x42, sizeof other_boot);
    legacy_descriptor(d);
    memcpy(d + 16, other_boot, 16);
    reseal(d);
    /* This process's boot, whether or not the system tells it. */
    unsigned char this_boot[16];
    memset(this_boot, 0x17, sizeof this_boot);
    strided__ipc_pretend_process(0, this_boot);
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_ipc",
                 "the descriptor was written on another machine or before this machine last "
                 "booted");
    strided__ipc_pretend_process(0, NULL);

    legacy_descriptor(d);
    memcpy(d + 16, me.boot_id, 16);
    strided__put_le(d + 32, (uint64_t)me.pid, 8);
    strided__put_le(d + 40, me.nonce, 8);
    reseal(d);
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_ipc", "the descriptor was written by this process");
    assert_untouched(&b, sizeof b);
}

#if defined(DRIVER_NONE)

static void test_ipc_without_a_driver(void **state)
{
    strided_memory_resource *mr;
    strided_buffer *b = NULL;
    unsigned char d[DSIZE];
    const strided_device_pool_options ipc = {true, 0};

    (void)state;
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_device_pool_resource_import(0, 0, NULL, &mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "device_pool_resource_import", "no CUDA driver");
    assert_error(strided_device_pool_resource_create(0, &ipc, &mr), STRIDED_ERR_NO_CUDA_DRIVER,
                 "device_pool_resource_create", "no CUDA driver");
    assert_untouched(&mr, sizeof mr);
    /* Host memory is never shared. */
    static char bytes[64];
    assert_ok(strided_buffer_wrap(bytes, sizeof bytes, NULL, NULL, &b));
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_UNSUPPORTED, "export_ipc",
                 "only device memory and the memory of IPC-enabled pools can be shared with "
                 "another process, not host memory");
    assert_false(strided_buffer_is_mapped(b));
    strided_buffer_release(b);
    /* A legacy descriptor of another process needs the driver. */
    legacy_descriptor(d);
    strided__ipc_pretend_process(99, NULL);
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &b), STRIDED_ERR_NO_CUDA_DRIVER,
                 "import_ipc", "no CUDA driver");
    strided__ipc_pretend_process(0, NULL);
}

#elif defined(DRIVER_FAKE)

/* The fake's pool controls. */
static struct {
    fake_cuda_pool_info_fn info;
    fake_cuda_live_pools_fn live;
} pools;

static void find_pool_controls(void)
{
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        exit(1);
    }
    fake_symbol_(lib, "fake_cuda_pool_info", &pools.info);
    fake_symbol_(lib, "fake_cuda_live_pools", &pools.live);
}

static const strided_device_pool_options ipc_options = {true, 0};

static strided_memory_resource *ipc_pool(int device)
{
    strided_memory_resource *mr = NULL;
    assert_ok(strided_device_pool_resource_create(device, &ipc_options, &mr));
    return mr;
}

/* Export mr's pool and import it as another process's resource. */
static strided_memory_resource *mapped_pool(const strided_memory_resource *mr, int device)
{
    int fd = -1;
    unsigned char id[STRIDED_IPC_POOL_ID_SIZE];
    strided_memory_resource *mapped = NULL;
    assert_ok(strided_memory_resource_export_pool(mr, &fd));
    assert_true(fd >= 0);
    assert_true(strided_memory_resource_pool_id(mr, id));
    assert_ok(strided_device_pool_resource_import(device, fd, id, &mapped));
    close(fd);
    return mapped;
}

/* Play the importing process until the next call with 0. */
static void be_another_process(bool on)
{
    strided__ipc_pretend_process(on ? 0x5eed : 0, NULL);
}

static void test_ipc_enabled_pool(void **state)
{
    strided_memory_resource *mr, *plain = NULL;
    unsigned char id[16], none[16];
    fake_cuda_pool p;

    (void)state;
    fake.reset(2, 0, 1);
    mr = ipc_pool(1);
    assert_true(strided_memory_resource_is_ipc_enabled(mr));
    assert_false(strided_memory_resource_is_mapped(mr));
    assert_true(strided_memory_resource_pool_id(mr, id));
    memset(none, 0, sizeof none);
    assert_memory_not_equal(id, none, 16);
    strided_memory_pool_info info = strided_memory_resource_pool(mr);
    assert_true(pools.info(info.handle, &p));
    assert_int_equal(p.handle_types, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    assert_int_equal(p.location_id, 1);

    /* Two pools have two identities. */
    strided_memory_resource *other = ipc_pool(1);
    unsigned char id2[16];
    assert_true(strided_memory_resource_pool_id(other, id2));
    assert_memory_not_equal(id, id2, 16);
    strided_memory_resource_release(other);

    /* A pool that is not IPC-enabled has no identity and no handle. */
    assert_ok(strided_device_pool_resource_create(0, &(strided_device_pool_options){false, 0},
                                                  &plain));
    assert_false(strided_memory_resource_is_ipc_enabled(plain));
    memcpy(id2, none, 16);
    assert_false(strided_memory_resource_pool_id(plain, id2));
    assert_memory_equal(id2, none, 16);
    int fd = 1234;
    assert_error(strided_memory_resource_export_pool(plain, &fd), STRIDED_ERR_UNSUPPORTED,
                 "export_pool", "Memory resource is not IPC-enabled");
    assert_int_equal(fd, 1234);
    assert_error(strided_memory_resource_export_pool(NULL, &fd), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_pool", "mr and out_fd are required");
    assert_error(strided_memory_resource_export_pool(mr, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_pool", "mr and out_fd are required");
    strided_memory_resource_release(plain);
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 0);
}

/* A pinned pool is IPC-enabled the same way. */
static void test_ipc_enabled_pinned_pool(void **state)
{
    strided_memory_resource *mr = NULL, *mapped = NULL;
    const strided_pinned_pool_options o = {true, 0, false, 0};
    int fd = -1;
    strided_buffer *b = NULL, *imported = NULL;
    unsigned char d[DSIZE];
    strided_buffer_ipc_info info;

    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_pinned_pool_resource_create(&o, &mr));
    assert_true(strided_memory_resource_is_ipc_enabled(mr));
    assert_ok(strided_memory_resource_export_pool(mr, &fd));
    assert_ok(strided_pinned_pool_resource_import(fd, NULL, &mapped));
    close(fd);
    assert_true(strided_memory_resource_is_mapped(mapped));
    unsigned char id[16];
    assert_false(strided_memory_resource_pool_id(mapped, id)); /* imported without one */
    assert_true(strided_memory_resource_properties(mapped).host_accessible);

    assert_ok(strided_buffer_alloc(mr, 512, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    assert_ok(strided_buffer_ipc_describe(d, DSIZE, &info));
    assert_int_equal(info.sharing, STRIDED_IPC_POOL);
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);
    assert_int_equal(info.device_id, -1);
    assert_true(info.has_pool_id);
    be_another_process(true);
    assert_ok(strided_buffer_import_ipc(mapped, d, DSIZE, NULL, &imported));
    be_another_process(false);
    assert_ptr_equal(strided_buffer_ptr(imported), strided_buffer_ptr(b));
    assert_int_equal(strided_buffer_memory_info(imported).kind, STRIDED_MEMORY_PINNED);
    strided_buffer_release(imported);
    strided_buffer_release(b);
    strided_memory_resource_release(mapped);
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 0);
}

/* Without POSIX file-descriptor handles, no pool is IPC-enabled. */
static void test_ipc_pool_needs_fd_handles(void **state)
{
    strided_memory_resource *mr;
    const strided_pinned_pool_options pinned = {true, 0, false, 0};

    (void)state;
    fake.reset(2, 0, 1);
    fake.set_ipc_handle_types(0);
    fill_sentinel(&mr, sizeof mr);
    assert_error(strided_device_pool_resource_create(1, &ipc_options, &mr), STRIDED_ERR_UNSUPPORTED,
                 "device_pool_resource_create",
                 "IPC-enabled memory pools need POSIX file descriptor handles, which the memory "
                 "pools of device 1 do not support");
    assert_error(strided_pinned_pool_resource_create(&pinned, &mr), STRIDED_ERR_UNSUPPORTED,
                 "pinned_pool_resource_create", "device 0 do not support");
    assert_untouched(&mr, sizeof mr);
    assert_int_equal(fake.calls("cuMemPoolCreate"), 0);
    fake.set_ipc_handle_types(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
}

/* A mapped resource: IPC-enabled, allocates nothing, exports nothing, and
 * destroys its handle of the pool. */
static void test_mapped_pool(void **state)
{
    strided_memory_resource *mr, *mapped;
    unsigned char a[16], b16[16];
    strided_buffer *b;
    int fd = 77;

    (void)state;
    fake.reset(2, 0, 1);
    mr = ipc_pool(0);
    mapped = mapped_pool(mr, 0);
    assert_int_equal(pools.live(), 2);
    assert_true(strided_memory_resource_is_ipc_enabled(mapped));
    assert_true(strided_memory_resource_is_mapped(mapped));
    assert_true(strided_memory_resource_pool_id(mr, a));
    assert_true(strided_memory_resource_pool_id(mapped, b16));
    assert_memory_equal(a, b16, 16);
    assert_error(strided_memory_resource_export_pool(mapped, &fd), STRIDED_ERR_UNSUPPORTED,
                 "export_pool", "Imported memory resource cannot be exported");
    assert_int_equal(fd, 77);
    fill_sentinel(&b, sizeof b);
    assert_error(strided_buffer_alloc(mapped, 16, NULL, &b), STRIDED_ERR_INVALID_ARGUMENT, "alloc",
                 "Cannot allocate from a mapped IPC-enabled memory resource");
    assert_untouched(&b, sizeof b);
    assert_ok(strided_memory_resource_close(mapped));
    assert_error(strided_memory_resource_export_pool(mapped, &fd), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_pool", "DeviceMemoryResource has been closed");
    assert_int_equal(pools.live(), 1);
    strided_memory_resource_release(mapped);
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 0);
}

static void test_pool_import_failures(void **state)
{
    strided_memory_resource *mr, *mapped;
    int fd = -1;

    (void)state;
    fake.reset(2, 0, 1);
    fill_sentinel(&mapped, sizeof mapped);
    assert_error(strided_device_pool_resource_import(0, 3, NULL, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "device_pool_resource_import", "out is required");
    assert_error(strided_device_pool_resource_import(0, -1, NULL, &mapped),
                 STRIDED_ERR_INVALID_ARGUMENT, "device_pool_resource_import",
                 "the pool's file descriptor must be >= 0, got -1");
    mr = ipc_pool(0);
    assert_ok(strided_memory_resource_export_pool(mr, &fd));
    assert_error(strided_device_pool_resource_import(4, fd, NULL, &mapped),
                 STRIDED_ERR_INVALID_ARGUMENT, "device_pool_resource_import",
                 "device 4 does not exist; there are 2 CUDA devices");
    /* A file descriptor that is not a pool's. */
    int devnull = dup(0);
    assert_error(strided_device_pool_resource_import(0, devnull, NULL, &mapped), STRIDED_ERR_CUDA,
                 "device_pool_resource_import", "cuMemPoolImportFromShareableHandle");
    close(devnull);
    /* The exporter closed its pool: the driver refuses. */
    assert_ok(strided_memory_resource_close(mr));
    assert_error(strided_device_pool_resource_import(0, fd, NULL, &mapped), STRIDED_ERR_CUDA,
                 "device_pool_resource_import",
                 "cuMemPoolImportFromShareableHandle failed: CUDA_ERROR_INVALID_VALUE");
    close(fd);
    assert_untouched(&mapped, sizeof mapped);
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 0);
}

/* The whole trip of a pool allocation: export, import in "another
 * process", the same memory, exported again, unmapped when released. */
/* An allocation exports before its pool ever has: the driver refuses
 * cuMemPoolExportPointer for a pool never exported to a shareable handle
 * (as the fake does), so creating an IPC-enabled pool exports it once. */
static void test_pool_allocation_exports_before_the_pool(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_memory_resource *mr = ipc_pool(0);
    strided_buffer *b = NULL;
    unsigned char d[DSIZE];
    assert_ok(strided_buffer_alloc(mr, 256, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
}

static void test_pool_buffer_round_trip(void **state)
{
    strided_memory_resource *mr, *mapped;
    strided_buffer *b = NULL, *imported = NULL, *again = NULL;
    unsigned char d[DSIZE], d2[DSIZE];
    strided_buffer_ipc_info info;

    (void)state;
    fake.reset(2, 0, 1);
    mr = ipc_pool(1);
    mapped = mapped_pool(mr, 1);
    assert_ok(strided_buffer_alloc(mr, 1000, NULL, &b));
    memset(strided_buffer_ptr(b), 0xab, 1000);
    assert_false(strided_buffer_is_mapped(b));
    long exports = fake.calls("cuMemPoolExportPointer");
    assert_ok(strided_buffer_export_ipc(b, d));
    assert_int_equal(fake.calls("cuMemPoolExportPointer"), exports + 1);
    /* A second export gives the same bytes without asking the driver. */
    assert_ok(strided_buffer_export_ipc(b, d2));
    assert_memory_equal(d2, d, DSIZE);
    assert_int_equal(fake.calls("cuMemPoolExportPointer"), exports + 1);
    assert_ok(strided_buffer_ipc_describe(d, DSIZE, &info));
    assert_int_equal(info.sharing, STRIDED_IPC_POOL);
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(info.device_id, 1);
    assert_i64(info.size, 1000);
    assert_i64(info.exporter_pid, getpid());
    assert_true(info.has_pool_id);
    unsigned char id[16];
    assert_true(strided_memory_resource_pool_id(mr, id));
    assert_memory_equal(info.pool_id, id, 16);

    be_another_process(true);
    assert_ok(strided_buffer_import_ipc(mapped, d, DSIZE, STREAM_A, &imported));
    uintptr_t address = (uintptr_t)strided_buffer_ptr(b);
    assert_int_equal(fake.mappings(address), 1);
    assert_ptr_equal(strided_buffer_ptr(imported), strided_buffer_ptr(b));
    assert_int_equal(strided_buffer_size(imported), 1000);
    assert_true(strided_buffer_is_mapped(imported));
    assert_ptr_equal(strided_buffer_resource(imported), mapped);
    strided_memory_info mem = strided_buffer_memory_info(imported);
    assert_int_equal(mem.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(mem.device_id, 1);
    assert_int_equal(((unsigned char *)strided_buffer_ptr(imported))[999], 0xab);

    /* The importer exports it again, for a third process. */
    assert_ok(strided_buffer_export_ipc(imported, d2));
    be_another_process(false);
    strided__ipc_pretend_process(0x7777, NULL);
    assert_ok(strided_buffer_import_ipc(mapped, d2, DSIZE, NULL, &again));
    assert_int_equal(fake.mappings(address), 2);
    strided_buffer_release(again);
    strided__ipc_pretend_process(0, NULL);

    /* Released: unmapped in stream order on its deallocation stream. */
    strided_buffer_release(imported);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_A);
    assert_int_equal(fake.mappings(address), 0);
    assert_i64(fake.live_bytes(), 1000);
    strided_buffer_release(b);
    assert_i64(fake.live_bytes(), 0);
    strided_memory_resource_release(mapped);
    strided_memory_resource_release(mr);
    assert_int_equal(pools.live(), 0);
}

/* Every refusal of a pool import, before the driver is asked. */
static void test_pool_import_refusals(void **state)
{
    strided_memory_resource *mr, *mapped, *foreign, *foreign_mapped, *mapped_dev0, *plain = NULL;
    strided_buffer *b = NULL, *out;
    unsigned char d[DSIZE];

    (void)state;
    fake.reset(2, 0, 1);
    mr = ipc_pool(1);
    mapped = mapped_pool(mr, 1);
    foreign = ipc_pool(1);
    foreign_mapped = mapped_pool(foreign, 1);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    fill_sentinel(&out, sizeof out);

    /* In the exporting process. */
    assert_error(strided_buffer_import_ipc(mapped, d, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "the descriptor was written by this process (pid ");
    be_another_process(true);
    long before = fake.calls("cuMemPoolImportPointer");
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "a pool allocation is imported through its pool's resource");
    assert_error(strided_buffer_import_ipc(mr, d, DSIZE, NULL, &out), STRIDED_ERR_INVALID_ARGUMENT,
                 "import_ipc", "the memory resource is not a mapped resource");
    assert_ok(strided_device_pool_resource_create(1, &(strided_device_pool_options){false, 0},
                                                  &plain));
    assert_error(strided_buffer_import_ipc(plain, d, DSIZE, NULL, &out), STRIDED_ERR_UNSUPPORTED,
                 "import_ipc", "Memory resource is not IPC-enabled");
    strided_memory_resource *host = NULL;
    assert_ok(strided_host_resource_create(0, &host));
    assert_error(strided_buffer_import_ipc(host, d, DSIZE, NULL, &out), STRIDED_ERR_UNSUPPORTED,
                 "import_ipc", "Memory resource is not IPC-enabled");
    strided_memory_resource_release(host);
    assert_error(strided_buffer_import_ipc(foreign_mapped, d, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "the descriptor is of another pool: its pool identity differs from the memory "
                 "resource's");
    /* The pool's resource imported for another device. */
    int fd;
    assert_ok(strided_memory_resource_export_pool(mr, &fd));
    assert_ok(strided_device_pool_resource_import(0, fd, NULL, &mapped_dev0));
    close(fd);
    assert_error(strided_buffer_import_ipc(mapped_dev0, d, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "the descriptor is of device 1, the memory resource of device 0");
    strided_memory_resource *pinned = NULL, *pinned_mapped = NULL;
    assert_ok(strided_pinned_pool_resource_create(&(strided_pinned_pool_options){true, 0, false, 0},
                                                  &pinned));
    assert_ok(strided_memory_resource_export_pool(pinned, &fd));
    assert_ok(strided_pinned_pool_resource_import(fd, NULL, &pinned_mapped));
    close(fd);
    assert_error(strided_buffer_import_ipc(pinned_mapped, d, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "the descriptor is of device memory, the memory resource's is pinned memory");
    assert_ok(strided_memory_resource_close(mapped));
    assert_error(strided_buffer_import_ipc(mapped, d, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc", "has been closed");
    assert_int_equal(fake.calls("cuMemPoolImportPointer"), before);
    be_another_process(false);
    assert_untouched(&out, sizeof out);
    strided_buffer_release(b);
    strided_memory_resource *all[] = {mr,          mapped, foreign, foreign_mapped,
                                      mapped_dev0, plain,  pinned,  pinned_mapped};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        strided_memory_resource_release(all[i]);
    assert_int_equal(pools.live(), 0);
}

/* A stale descriptor (the exporter freed the allocation), and a foreign
 * one through a resource imported without an identity: the driver
 * refuses, and the message says what it most likely means. */
static void test_pool_import_stale_and_foreign(void **state)
{
    strided_memory_resource *mr, *mapped, *foreign, *anonymous;
    strided_buffer *b = NULL, *out;
    unsigned char d[DSIZE];
    int fd;

    (void)state;
    fake.reset(2, 0, 1);
    mr = ipc_pool(0);
    mapped = mapped_pool(mr, 0);
    foreign = ipc_pool(0);
    assert_ok(strided_memory_resource_export_pool(foreign, &fd));
    assert_ok(strided_device_pool_resource_import(0, fd, NULL, &anonymous));
    close(fd);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    fill_sentinel(&out, sizeof out);
    be_another_process(true);
    assert_error(strided_buffer_import_ipc(anonymous, d, DSIZE, NULL, &out), STRIDED_ERR_CUDA,
                 "import_ipc",
                 "cuMemPoolImportPointer failed: CUDA_ERROR_INVALID_VALUE (invalid argument): "
                 "the exported allocation no longer exists (the exporter freed it or exited) or "
                 "is not of this pool");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_INVALID_VALUE);
    strided_buffer_release(b);
    assert_error(strided_buffer_import_ipc(mapped, d, DSIZE, NULL, &out), STRIDED_ERR_CUDA,
                 "import_ipc", "the exported allocation no longer exists");
    be_another_process(false);
    assert_untouched(&out, sizeof out);
    strided_memory_resource *all[] = {mr, mapped, foreign, anonymous};
    for (size_t i = 0; i < ARRAY_LEN(all); i++)
        strided_memory_resource_release(all[i]);
    assert_int_equal(pools.live(), 0);
}

/* A failure after the mapping (the buffer cannot be allocated) undoes
 * it. */
static void test_pool_import_out_of_memory(void **state)
{
    strided_memory_resource *mr, *mapped;
    strided_buffer *b = NULL, *out;
    unsigned char d[DSIZE];

    (void)state;
    fake.reset(2, 0, 1);
    mr = ipc_pool(0);
    mapped = mapped_pool(mr, 0);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    fill_sentinel(&out, sizeof out);
    be_another_process(true);
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_import_ipc(mapped, d, DSIZE, NULL, &out), STRIDED_ERR_OUT_OF_MEMORY,
                 "wrap_resource", "cannot allocate a buffer");
    be_another_process(false);
    assert_untouched(&out, sizeof out);
    assert_int_equal(fake.mappings((uintptr_t)strided_buffer_ptr(b)), 0);
    strided_buffer_release(b);
    strided_memory_resource_release(mapped);
    strided_memory_resource_release(mr);
}

/* Export refusals: memory that no way shares, a pool that is not
 * IPC-enabled, a closed resource, a failing driver. */
static void test_export_refusals(void **state)
{
    strided_memory_resource *plain = NULL, *pinned = NULL, *mr;
    strided_buffer *b = NULL;
    unsigned char d[DSIZE], before[DSIZE];

    (void)state;
    fake.reset(2, 0, 1);
    memset(d, 0x3c, sizeof d);
    memcpy(before, d, sizeof d);
    assert_error(strided_buffer_export_ipc(NULL, d), STRIDED_ERR_INVALID_ARGUMENT, "export_ipc",
                 "b and out are required");
    assert_ok(strided_device_resource_create(0, &plain));
    assert_ok(strided_buffer_alloc(plain, 64, NULL, &b));
    assert_error(strided_buffer_export_ipc(b, NULL), STRIDED_ERR_INVALID_ARGUMENT, "export_ipc",
                 "b and out are required");
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_UNSUPPORTED, "export_ipc",
                 "Memory resource is not IPC-enabled");
    strided_buffer *wrapped = NULL;
    assert_ok(strided_buffer_wrap(strided_buffer_ptr(b), 64, NULL, NULL, &wrapped));
    assert_error(strided_buffer_export_ipc(wrapped, d), STRIDED_ERR_UNSUPPORTED, "export_ipc",
                 "Memory resource is not IPC-enabled");
    strided_buffer_release(wrapped);
    strided_buffer_release(b);
    assert_ok(strided_pinned_resource_create(&pinned));
    assert_ok(strided_buffer_alloc(pinned, 64, NULL, &b));
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_UNSUPPORTED, "export_ipc",
                 "not pinned memory");
    strided_buffer_release(b);

    mr = ipc_pool(0);
    assert_ok(strided_buffer_alloc(mr, 0, NULL, &b));
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_INVALID_ARGUMENT, "export_ipc",
                 "a buffer of 0 bytes at (nil) has no memory to share");
    strided_buffer_release(b);
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    fake.fail_next("cuMemPoolExportPointer", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_CUDA, "export_ipc",
                 "cuMemPoolExportPointer");
    assert_ok(strided_memory_resource_close(mr));
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_INVALID_ARGUMENT, "export_ipc",
                 "the buffer's memory resource has been closed");
    assert_memory_equal(d, before, sizeof d);
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
    strided_memory_resource_release(pinned);
    strided_memory_resource_release(plain);
}

/* Device memory of cuMemAlloc (the fake's added range: 4 KiB of device 1)
 * shares its allocation and the buffer's offset through legacy IPC. */
static unsigned char device_memory[4096] __attribute__((aligned(256)));

static void add_device_memory(void)
{
    fake_device_range(device_memory, sizeof device_memory, 1);
}

static void test_legacy_round_trip(void **state)
{
    strided_buffer *b = NULL, *imported = NULL, *again = NULL;
    unsigned char d[DSIZE], d2[DSIZE];
    strided_buffer_ipc_info info;

    (void)state;
    fake.reset(2, 0, 1);
    add_device_memory();
    assert_ok(strided_buffer_wrap(device_memory + 256, 1000, NULL, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    assert_ok(strided_buffer_ipc_describe(d, DSIZE, &info));
    assert_int_equal(info.sharing, STRIDED_IPC_LEGACY);
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(info.device_id, 1);
    assert_i64(info.size, 1000);
    assert_i64(info.offset, 256);
    assert_false(info.has_pool_id);

    be_another_process(true);
    assert_ok(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &imported));
    assert_int_equal(fake.mappings((uintptr_t)device_memory), 1);
    assert_ptr_equal(strided_buffer_ptr(imported), device_memory + 256);
    assert_int_equal(strided_buffer_size(imported), 1000);
    assert_true(strided_buffer_is_mapped(imported));
    assert_null(strided_buffer_resource(imported));
    strided_memory_info mem = strided_buffer_memory_info(imported);
    assert_int_equal(mem.kind, STRIDED_MEMORY_DEVICE);
    assert_int_equal(mem.device_id, 1);
    assert_false(mem.host_accessible);
    assert_int_equal(mem.device_address, (uintptr_t)(device_memory + 256));
    /* Exported again: the same handle, for a third process. */
    assert_ok(strided_buffer_export_ipc(imported, d2));
    assert_memory_equal(d, d2, DSIZE);
    assert_int_equal(fake.calls("cuIpcGetMemHandle"), 1);
    strided__ipc_pretend_process(0x999, NULL);
    assert_ok(strided_buffer_import_ipc(NULL, d2, DSIZE, NULL, &again));
    assert_int_equal(fake.mappings((uintptr_t)device_memory), 2);
    strided_buffer_release(again);
    be_another_process(false);

    strided_buffer_release(imported);
    assert_int_equal(fake.mappings((uintptr_t)device_memory), 0);
    assert_int_equal(fake.calls("cuIpcCloseMemHandle"), 2);
    assert_false(strided_buffer_is_mapped(b));
    strided_buffer_release(b);
    fake.remove_range((uintptr_t)device_memory);
}

/* The importer maps device memory on the GPU the descriptor names by
 * UUID, whatever ordinal it has there: here the exporter's device 1 is
 * the importer's device 0 (as CUDA_VISIBLE_DEVICES=1,0 would number it). */
static void test_devices_are_named_by_uuid(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    add_device_memory();
    strided_buffer *b = NULL, *out = NULL;
    unsigned char d[DSIZE];
    assert_ok(strided_buffer_wrap(device_memory, 64, NULL, NULL, &b));
    assert_ok(strided_buffer_export_ipc(b, d));
    strided_buffer_ipc_info info;
    assert_ok(strided_buffer_ipc_describe(d, DSIZE, &info));
    assert_true(info.has_device_uuid);
    assert_int_equal(info.device_id, 1);
    unsigned char uuid0[16], uuid1[16];
    memcpy(uuid0, info.device_uuid, 16);
    memcpy(uuid1, uuid0, 16);
    uuid1[15] ^= 0x40;
    be_another_process(true);
    fake.set_device_uuid(1, uuid1);
    fake.set_device_uuid(0, uuid0);
    assert_ok(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &out));
    assert_int_equal(strided_buffer_memory_info(out).device_id, 0);
    strided_buffer_release(out);
    be_another_process(false);
    strided_buffer_release(b);
    /* A UUID on pinned memory, or one flagged absent but written, is not
     * a valid descriptor. */
    unsigned char bad[DSIZE];
    memcpy(bad, d, DSIZE);
    bad[176] = 0;
    reseal(bad);
    assert_error(strided_buffer_ipc_describe(bad, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "its reserved bytes are not zero");
    memcpy(bad, d, DSIZE);
    bad[176] = 2;
    reseal(bad);
    assert_error(strided_buffer_ipc_describe(bad, DSIZE, &info), STRIDED_ERR_INVALID_ARGUMENT,
                 "ipc_describe", "its reserved bytes are not zero");
    fake.remove_range((uintptr_t)device_memory);
}

static void test_legacy_failures(void **state)
{
    strided_buffer *b = NULL, *out;
    unsigned char d[DSIZE];

    (void)state;
    fake.reset(2, 0, 1);
    add_device_memory();
    assert_ok(strided_buffer_wrap(device_memory, 64, NULL, NULL, &b));
    fake.fail_next("cuIpcGetMemHandle", CUDA_ERROR_NOT_SUPPORTED);
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_CUDA, "export_ipc",
                 "cuIpcGetMemHandle");
    fake.fail_next("cuMemGetAddressRange", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_CUDA, "export_ipc",
                 "cuMemGetAddressRange");
    assert_ok(strided_buffer_export_ipc(b, d));
    fill_sentinel(&out, sizeof out);
    be_another_process(true);
    /* A device this process does not see (its UUID is none of this
     * process's devices'). */
    unsigned char moved[DSIZE];
    memcpy(moved, d, DSIZE);
    assert_int_equal(moved[176], 1);
    memset(moved + 160, 0x33, 16);
    reseal(moved);
    assert_error(strided_buffer_import_ipc(NULL, moved, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "the descriptor's device (GPU-33333333-3333-3333-3333-333333333333, device 1 "
                 "in the exporter) is not one of this process's 2 CUDA devices "
                 "(CUDA_VISIBLE_DEVICES may hide it)");
    /* Without a UUID, the ordinal: a device this process does not have. */
    memcpy(moved, d, DSIZE);
    memset(moved + 160, 0, 17);
    strided__put_le(moved + 12, 7, 4);
    reseal(moved);
    assert_error(strided_buffer_import_ipc(NULL, moved, DSIZE, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_ipc",
                 "device 7 does not exist; there are 2 CUDA devices");
    /* Out of memory: nothing is opened. */
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &out), STRIDED_ERR_OUT_OF_MEMORY,
                 "import_ipc", "cannot allocate a mapping");
    strided__fail_allocation_after(1);
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &out), STRIDED_ERR_OUT_OF_MEMORY,
                 "wrap", "cannot allocate a buffer");
    assert_int_equal(fake.mappings((uintptr_t)device_memory), 0);
    /* Stale: the exporter freed the memory (the driver forgets it). */
    fake.remove_range((uintptr_t)device_memory);
    add_device_memory();
    assert_error(strided_buffer_import_ipc(NULL, d, DSIZE, NULL, &out), STRIDED_ERR_CUDA,
                 "import_ipc",
                 "cuIpcOpenMemHandle failed: CUDA_ERROR_INVALID_VALUE (invalid argument): the "
                 "exported allocation no longer exists");
    be_another_process(false);
    assert_untouched(&out, sizeof out);
    strided_buffer_release(b);
    fake.remove_range((uintptr_t)device_memory);
}

/* Managed memory is never shared. */
static void test_managed_memory_is_not_shared(void **state)
{
    strided_memory_resource *mr = NULL;
    strided_buffer *b = NULL;
    unsigned char d[DSIZE];

    (void)state;
    fake.reset(2, 0, 1);
    assert_ok(strided_managed_resource_create(0, &mr));
    assert_ok(strided_buffer_alloc(mr, 64, NULL, &b));
    assert_error(strided_buffer_export_ipc(b, d), STRIDED_ERR_UNSUPPORTED, "export_ipc",
                 "not managed memory");
    strided_buffer_release(b);
    strided_memory_resource_release(mr);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe_reads_a_descriptor),
        cmocka_unit_test(test_describe_refuses_broken_descriptors),
        cmocka_unit_test(test_describe_refuses_invalid_fields),
        cmocka_unit_test(test_import_refuses_what_describe_refuses),
        cmocka_unit_test(test_import_refuses_another_boot_and_this_process),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_ipc_without_a_driver),
#elif defined(DRIVER_FAKE)
        cmocka_unit_test(test_ipc_enabled_pool),
        cmocka_unit_test(test_ipc_enabled_pinned_pool),
        cmocka_unit_test(test_ipc_pool_needs_fd_handles),
        cmocka_unit_test(test_mapped_pool),
        cmocka_unit_test(test_pool_import_failures),
        cmocka_unit_test(test_pool_allocation_exports_before_the_pool),
        cmocka_unit_test(test_devices_are_named_by_uuid),
        cmocka_unit_test(test_pool_buffer_round_trip),
        cmocka_unit_test(test_pool_import_refusals),
        cmocka_unit_test(test_pool_import_stale_and_foreign),
        cmocka_unit_test(test_pool_import_out_of_memory),
        cmocka_unit_test(test_export_refusals),
        cmocka_unit_test(test_legacy_round_trip),
        cmocka_unit_test(test_legacy_failures),
        cmocka_unit_test(test_managed_memory_is_not_shared),
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
