/*
 * GPU tests of strided/buffer.h and strided/resource.h against the real CUDA
 * driver.
 *
 * Every memory kind the driver makes (pageable, NULL, pinned, registered,
 * device, stream-ordered pools, managed) is wrapped and classified, and the
 * answer is checked against what each kind is: pageable memory and NULL
 * are host memory of device -1, device-accessible only where the device
 * reads pageable memory (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
 * pinned and registered memory is host- and device-accessible, of the
 * device current when it was allocated or registered, and reached by
 * devices at the driver's CU_POINTER_ATTRIBUTE_DEVICE_POINTER, or at the
 * host address where the driver reports 0; device and pool memory is of
 * the allocating device; managed memory is host- and device-accessible,
 * of the device current at allocation. The built-in resources allocate memory that host and
 * device then use; frees run in stream order and from threads with no
 * current context; a release callback runs exactly once, after the last
 * holder; and no library call changes the caller's current context.
 *
 * The test links no CUDA library: it loads libcuda.so.1 itself and declares
 * the few driver entry points it calls. Without a driver or a device it
 * prints "skipped: no CUDA device" and passes. Every driver call it makes
 * succeeds on a working device, so that it runs clean under
 * compute-sanitizer memcheck, which counts failing API calls as errors.
 * Device 0 is the device under test; on one GPU every "device current at
 * allocation" above is device 0.
 */

#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "gpu_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "strided.h"

/* Driver API values only this test uses (cuda.h, CUDA 12/13). */
enum {
    CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
    CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
    CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
    CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,

    CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
    CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
    CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,

    CU_MEMORYTYPE_HOST = 1,
    CU_MEMORYTYPE_DEVICE = 2,

    CU_MEMHOSTALLOC_DEVICEMAP = 0x02,
    CU_MEMHOSTREGISTER_DEVICEMAP = 0x02,
    CU_MEM_ATTACH_GLOBAL = 0x1,
    CU_MEM_ATTACH_HOST = 0x2,
    CU_EVENT_DISABLE_TIMING = 0x2,

    CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
    CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2, /* CUDA 13 */
    CU_MEM_HANDLE_TYPE_NONE = 0x0,
    CU_MEM_LOCATION_TYPE_NONE = 0x0,
    CU_MEM_LOCATION_TYPE_HOST = 0x2
};

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)
#define TEST_DEVICE 0

static CUdevice device;
static CUcontext primary;
static int driver_version;
static int pageable_access;
static int pools_supported;
static int managed_supported;
static int concurrent_managed;
static int host_register_supported;
static int host_pointer_for_registered;

static int device_attribute(int attribute)
{
    int value = 0;

    CU(cuDeviceGetAttribute(&value, attribute, device));
    return value;
}

static CUdeviceptr dptr(const void *p)
{
    return (CUdeviceptr)(uintptr_t)p;
}
static void *hptr(CUdeviceptr d)
{
    return (void *)(uintptr_t)d;
}

/* The current context around library calls. */

static CUcontext current_ctx_at(const char *file, int line)
{
    CUcontext c = NULL;

    cu_check_(cu.cuCtxGetCurrent(&c), "cuCtxGetCurrent", file, line);
    return c;
}

static void check_ctx_(CUcontext before, const char *what, const char *file, int line)
{
    CUcontext after = current_ctx_at(file, line);

    if (after != before)
        fail_at(file, line, "%s changed the current context from %p to %p\n", what, (void *)before,
                (void *)after);
}

/* Run a statement (a library call) and fail if the calling thread's current
 * context differs afterwards. */
#define KEEPS_CTX_AT(file, line, ...)                       \
    do {                                                    \
        CUcontext before_ = current_ctx_at((file), (line)); \
        __VA_ARGS__;                                        \
        check_ctx_(before_, #__VA_ARGS__, (file), (line));  \
    } while (0)
#define KEEPS_CTX(...) KEEPS_CTX_AT(__FILE__, __LINE__, __VA_ARGS__)

/* Library calls that must succeed and keep the context. */
static strided_buffer *buf_wrap_at(void *ptr, size_t size, strided_release_fn fn, void *context,
                                   const char *file, int line)
{
    strided_buffer *b = NULL;
    strided_status st;

    KEEPS_CTX_AT(file, line, st = strided_buffer_wrap(ptr, size, fn, context, &b));
    check_status_(st, STRIDED_OK, file, line);
    if (b == NULL)
        fail_at(file, line, "strided_buffer_wrap gave no buffer\n");
    return b;
}
#define buf_wrap(ptr, size, fn, context) \
    buf_wrap_at((ptr), (size), (fn), (context), __FILE__, __LINE__)

static strided_buffer *buf_alloc_at(strided_memory_resource *mr, size_t size, void *stream,
                                    const char *file, int line)
{
    strided_buffer *b = NULL;
    strided_status st;

    KEEPS_CTX_AT(file, line, st = strided_buffer_alloc(mr, size, stream, &b));
    check_status_(st, STRIDED_OK, file, line);
    if (b == NULL)
        fail_at(file, line, "strided_buffer_alloc gave no buffer\n");
    return b;
}
#define buf_alloc(mr, size, stream) buf_alloc_at((mr), (size), (stream), __FILE__, __LINE__)

static void buf_release_at(strided_buffer *b, const char *file, int line)
{
    KEEPS_CTX_AT(file, line, strided_buffer_release(b));
}
#define buf_release(b) buf_release_at((b), __FILE__, __LINE__)

static strided_memory_info info_of_at(const strided_buffer *b, const char *file, int line)
{
    strided_memory_info info;

    KEEPS_CTX_AT(file, line, info = strided_buffer_memory_info(b));
    return info;
}
#define info_of(b) info_of_at((b), __FILE__, __LINE__)

/* The built-in resources; which: 'h' host, 'p' pinned, 'd' device,
 * 'm' managed. */
static strided_memory_resource *resource_at(char which, const char *file, int line)
{
    strided_memory_resource *mr = NULL;
    strided_status st = STRIDED_ERR_INTERNAL;

    switch (which) {
    case 'h': KEEPS_CTX_AT(file, line, st = strided_host_resource_create(0, &mr)); break;
    case 'p': KEEPS_CTX_AT(file, line, st = strided_pinned_resource_create(&mr)); break;
    case 'd':
        KEEPS_CTX_AT(file, line, st = strided_device_resource_create(TEST_DEVICE, &mr));
        break;
    case 'm':
        KEEPS_CTX_AT(file, line, st = strided_managed_resource_create(TEST_DEVICE, &mr));
        break;
    default: fail_at(file, line, "no resource '%c'\n", which);
    }
    check_status_(st, STRIDED_OK, file, line);
    if (mr == NULL)
        fail_at(file, line, "resource '%c': no resource\n", which);
    return mr;
}
#define resource(which) resource_at((which), __FILE__, __LINE__)

static void resource_release_at(strided_memory_resource *mr, const char *file, int line)
{
    KEEPS_CTX_AT(file, line, strided_memory_resource_release(mr));
}
#define resource_release(mr) resource_release_at((mr), __FILE__, __LINE__)

/* What the driver says, and what strided should say. */

/* The raw answers of one plural query (cuPointerGetAttributes), as the
 * driver writes them (integers as 4 bytes). */
typedef struct raw_attrs {
    unsigned int memory_type;
    int is_managed;
    int device_ordinal;
    void *mempool;
    CUdeviceptr device_pointer;
} raw_attrs;

static raw_attrs raw_query_at(const void *ptr, const char *file, int line)
{
    raw_attrs r = {0, 0, 0, NULL, 0};
    int attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                   CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
    void *data[] = {&r.memory_type, &r.is_managed, &r.device_ordinal, &r.mempool,
                    &r.device_pointer};

    cu_check_(cu.cuPointerGetAttributes(5, attrs, data, dptr(ptr)), "cuPointerGetAttributes", file,
              line);
    return r;
}
#define raw_query(ptr) raw_query_at((ptr), __FILE__, __LINE__)

/* The expected classification of each kind (see the file's comment). */
static strided_memory_info expect_host(const void *p)
{
    strided_memory_info e;

    memset(&e, 0, sizeof e);
    e.kind = STRIDED_MEMORY_HOST;
    e.device_id = -1;
    e.host_accessible = true;
    e.device_accessible = pageable_access != 0; /* where HMM or ATS reads it */
    e.device_address = pageable_access ? (uintptr_t)p : 0;
    return e;
}

static strided_memory_info expect_pinned(const void *p, bool pooled)
{
    strided_memory_info e;
    raw_attrs r = raw_query(p);

    memset(&e, 0, sizeof e);
    e.kind = STRIDED_MEMORY_PINNED;
    e.device_id = TEST_DEVICE;
    e.host_accessible = true;
    e.device_accessible = true;
    e.pooled = pooled;
    /* The driver's device pointer; the host one where it reports 0 (pinned
     * pools do). */
    e.device_address = r.device_pointer != 0 ? (uintptr_t)r.device_pointer : (uintptr_t)p;
    return e;
}

static strided_memory_info expect_device(const void *p, bool pooled)
{
    strided_memory_info e;

    memset(&e, 0, sizeof e);
    e.kind = STRIDED_MEMORY_DEVICE;
    e.device_id = TEST_DEVICE;
    e.device_accessible = true;
    e.pooled = pooled;
    e.device_address = (uintptr_t)p;
    return e;
}

static strided_memory_info expect_managed(const void *p, bool pooled)
{
    strided_memory_info e;

    memset(&e, 0, sizeof e);
    e.kind = STRIDED_MEMORY_MANAGED;
    e.device_id = TEST_DEVICE;
    e.host_accessible = true;
    e.device_accessible = true;
    e.managed = true;
    e.pooled = pooled;
    e.device_address = (uintptr_t)p;
    return e;
}

static const char *kind_name(strided_memory_kind kind)
{
    switch (kind) {
    case STRIDED_MEMORY_HOST: return "HOST";
    case STRIDED_MEMORY_PINNED: return "PINNED";
    case STRIDED_MEMORY_DEVICE: return "DEVICE";
    case STRIDED_MEMORY_MANAGED: return "MANAGED";
    }
    return "?";
}

/* An address relative to the pointer it describes: "ptr", "0" or hex. */
static const char *address_text(uintptr_t a, const void *p, char *buf, size_t size)
{
    if (a == (uintptr_t)p)
        return "ptr";
    if (a == 0)
        return "0";
    snprintf(buf, size, "%#" PRIxPTR, a);
    return buf;
}

/* Fail, listing every field, when got differs from want. */
static void check_info_at(const char *name, const char *source, const void *ptr,
                          const strided_memory_info *got, const strided_memory_info *want,
                          const char *file, int line)
{
    char ga[32], wa[32];

    if (got->kind == want->kind && got->device_id == want->device_id &&
        got->host_accessible == want->host_accessible &&
        got->device_accessible == want->device_accessible && got->managed == want->managed &&
        got->pooled == want->pooled && got->device_address == want->device_address)
        return;
    fail_at(file, line,
            "%s (%p), %s:\n"
            "  got      kind=%s device_id=%d host=%d device=%d managed=%d "
            "pooled=%d device_address=%s\n"
            "  expected kind=%s device_id=%d host=%d device=%d managed=%d "
            "pooled=%d device_address=%s\n",
            name, ptr, source, kind_name(got->kind), got->device_id, got->host_accessible,
            got->device_accessible, got->managed, got->pooled,
            address_text(got->device_address, ptr, ga, sizeof ga), kind_name(want->kind),
            want->device_id, want->host_accessible, want->device_accessible, want->managed,
            want->pooled, address_text(want->device_address, ptr, wa, sizeof wa));
}

/* Classify ptr with strided_memory_info_query and through a borrowed
 * buffer, first with the primary context current and then with none, check
 * both against want, and print one row of the classification table. */
static void classify_at(const char *name, void *ptr, size_t size, strided_memory_info want,
                        const char *file, int line)
{
    CUcontext saved = current_ctx_at(file, line);
    strided_memory_info q, info = expect_host(NULL);
    strided_buffer *b;
    strided_status st;
    raw_attrs r = raw_query_at(ptr, file, line);
    char a[32], d[32];
    int pass;

    for (pass = 0; pass < 2; pass++) {
        const char *how = pass == 0 ? "context current" : "no context";
        char source[96];

        if (pass == 1)
            cu_check_(cu.cuCtxSetCurrent(NULL), "cuCtxSetCurrent(NULL)", file, line);
        KEEPS_CTX_AT(file, line, st = strided_memory_info_query(ptr, &q));
        check_status_(st, STRIDED_OK, file, line);
        snprintf(source, sizeof source, "strided_memory_info_query, %s", how);
        check_info_at(name, source, ptr, &q, &want, file, line);

        b = buf_wrap_at(ptr, size, NULL, NULL, file, line);
        if (strided_buffer_ptr(b) != ptr || strided_buffer_size(b) != size ||
            strided_buffer_resource(b) != NULL || strided_buffer_use_count(b) != 1)
            fail_at(file, line,
                    "%s: wrapped buffer ptr %p size %zu resource %p uses %ld, "
                    "expected %p %zu NULL 1\n",
                    name, strided_buffer_ptr(b), strided_buffer_size(b),
                    (void *)strided_buffer_resource(b), strided_buffer_use_count(b), ptr, size);
        info = info_of_at(b, file, line);
        snprintf(source, sizeof source, "strided_buffer_memory_info, %s", how);
        check_info_at(name, source, ptr, &info, &want, file, line);
        buf_release_at(b, file, line);
    }
    cu_check_(cu.cuCtxSetCurrent(saved), "cuCtxSetCurrent", file, line);
    printf("  %-36s %-7s device_id=%2d host=%d device=%d managed=%d "
           "pooled=%d device_address=%-3s | driver: type=%u managed=%d "
           "ordinal=%d pool=%s DEVICE_POINTER=%s\n",
           name, kind_name(info.kind), info.device_id, info.host_accessible, info.device_accessible,
           info.managed, info.pooled, address_text(info.device_address, ptr, a, sizeof a),
           r.memory_type, r.is_managed, r.device_ordinal, r.mempool != NULL ? "yes" : "no",
           address_text((uintptr_t)r.device_pointer, ptr, d, sizeof d));
}
#define classify(name, ptr, size, want) \
    classify_at((name), (ptr), (size), (want), __FILE__, __LINE__)

/* Every test starts with the primary context of the test device current. */
static int set_primary(void **state)
{
    (void)state;
    return cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS ? 0 : -1;
}

static CUstream new_stream(void)
{
    CUstream s = NULL;

    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
}

/* Classification of each memory kind. */

static void test_classify_pageable(void **state)
{
    static unsigned char in_data[256];
    unsigned char on_stack[256];
    unsigned char *p = malloc(64 * KiB);

    (void)state;
    assert_non_null(p);
    memset(on_stack, 0, sizeof on_stack);
    classify("pageable malloc", p, 64 * KiB, expect_host(p));
    classify("pageable malloc +100", p + 100, 64 * KiB - 100, expect_host(p + 100));
    classify("pageable static", in_data, sizeof in_data, expect_host(in_data));
    classify("pageable stack", on_stack, sizeof on_stack, expect_host(on_stack));
    free(p);
}

static void test_classify_null(void **state)
{
    (void)state;
    classify("NULL, size 0", NULL, 0, expect_host(NULL));
}

static void test_classify_pinned_mem_host_alloc(void **state)
{
    static const struct {
        unsigned int flags;
        const char *name;
    } cases[] = {
        {0, "cuMemHostAlloc(0)"},
        {CU_MEMHOSTALLOC_DEVICEMAP, "cuMemHostAlloc(DEVICEMAP)"},
        {CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP,
         "cuMemHostAlloc(PORTABLE|DEVICEMAP)"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *p = NULL;
        char name[64];

        CU(cuMemHostAlloc((void **)&p, MiB, cases[i].flags));
        classify(cases[i].name, p, MiB, expect_pinned(p, false));
        snprintf(name, sizeof name, "%s +100", cases[i].name);
        classify(name, p + 100, MiB - 100, expect_pinned(p + 100, false));
        CU(cuMemFreeHost(p));
    }
}

static void test_classify_pinned_mem_alloc_host(void **state)
{
    unsigned char *p = NULL;

    (void)state;
    CU(cuMemAllocHost((void **)&p, MiB));
    classify("cuMemAllocHost", p, MiB, expect_pinned(p, false));
    classify("cuMemAllocHost +4096", p + 4096, MiB - 4096, expect_pinned(p + 4096, false));
    CU(cuMemFreeHost(p));
}

/* Registered memory is pinned while registered and pageable before and
 * after. */
static void check_registered(unsigned int flags, const char *name)
{
    size_t n = 64 * KiB;
    unsigned char *p = aligned_alloc(4096, n);
    char label[64];

    assert_non_null(p);
    snprintf(label, sizeof label, "%s, before", name);
    classify(label, p, n, expect_host(p));
    CU(cuMemHostRegister(p, n, flags));
    classify(name, p, n, expect_pinned(p, false));
    snprintf(label, sizeof label, "%s +100", name);
    classify(label, p + 100, n - 100, expect_pinned(p + 100, false));
    CU(cuMemHostUnregister(p));
    snprintf(label, sizeof label, "%s, after unregister", name);
    classify(label, p, n, expect_host(p));
    free(p);
}

static void test_classify_registered_flags_0(void **state)
{
    (void)state;
    if (!host_register_supported) {
        print_message("HOST_REGISTER_SUPPORTED is 0\n");
        skip();
    }
    check_registered(0, "cuMemHostRegister(0)");
}

static void test_classify_registered_devicemap(void **state)
{
    (void)state;
    if (!host_register_supported) {
        print_message("HOST_REGISTER_SUPPORTED is 0\n");
        skip();
    }
    check_registered(CU_MEMHOSTREGISTER_DEVICEMAP, "cuMemHostRegister(DEVICEMAP)");
}

static void test_classify_device(void **state)
{
    CUdeviceptr d = 0;

    (void)state;
    CU(cuMemAlloc(&d, MiB));
    classify("cuMemAlloc", hptr(d), MiB, expect_device(hptr(d), false));
    classify("cuMemAlloc +4096", hptr(d + 4096), MiB - 4096, expect_device(hptr(d + 4096), false));
    CU(cuMemFree(d));
}

static void test_classify_device_pool(void **state)
{
    CUstream s;
    CUdeviceptr d = 0;

    (void)state;
    if (!pools_supported) {
        print_message("MEMORY_POOLS_SUPPORTED is 0\n");
        skip();
    }
    s = new_stream();
    CU(cuMemAllocAsync(&d, MiB, s));
    CU(cuStreamSynchronize(s));
    classify("cuMemAllocAsync (device pool)", hptr(d), MiB, expect_device(hptr(d), true));
    classify("cuMemAllocAsync +4096", hptr(d + 4096), MiB - 4096,
             expect_device(hptr(d + 4096), true));
    CU(cuMemFreeAsync(d, s));
    CU(cuStreamSynchronize(s));
    CU(cuStreamDestroy(s));
}

static void check_managed(unsigned int flags, const char *name)
{
    CUdeviceptr d = 0;
    char label[64];

    CU(cuMemAllocManaged(&d, MiB, flags));
    classify(name, hptr(d), MiB, expect_managed(hptr(d), false));
    snprintf(label, sizeof label, "%s +4096", name);
    classify(label, hptr(d + 4096), MiB - 4096, expect_managed(hptr(d + 4096), false));
    CU(cuMemFree(d));
}

static void test_classify_managed_global(void **state)
{
    (void)state;
    if (!managed_supported) {
        print_message("MANAGED_MEMORY is 0\n");
        skip();
    }
    check_managed(CU_MEM_ATTACH_GLOBAL, "cuMemAllocManaged(GLOBAL)");
}

static void test_classify_managed_host(void **state)
{
    (void)state;
    if (!managed_supported) {
        print_message("MANAGED_MEMORY is 0\n");
        skip();
    }
    check_managed(CU_MEM_ATTACH_HOST, "cuMemAllocManaged(HOST)");
}

/* Allocate from a pool made with props and classify the memory; skips when
 * the driver cannot make such a pool. */
static void check_pool(const CUmemPoolProps *props, const char *name, bool managed)
{
    CUmemoryPool pool = NULL;
    CUdeviceptr d = 0;
    CUstream s;
    CUresult rc;

    rc = cu.cuMemPoolCreate(&pool, props);
    if (rc != CUDA_SUCCESS) {
        print_message("%s: cuMemPoolCreate failed with %d\n", name, rc);
        skip();
    }
    s = new_stream();
    CU(cuMemAllocFromPoolAsync(&d, MiB, pool, s));
    CU(cuStreamSynchronize(s));
    classify(name, hptr(d), MiB,
             managed ? expect_managed(hptr(d), true) : expect_pinned(hptr(d), true));
    CU(cuMemFreeAsync(d, s));
    CU(cuStreamSynchronize(s));
    CU(cuStreamDestroy(s));
    CU(cuMemPoolDestroy(pool));
}

static void test_classify_pinned_pool(void **state)
{
    CUmemPoolProps props;

    (void)state;
    /* Pools located on the host came with CUDA 12.6; asking an older driver
     * would be a failing call, which compute-sanitizer reports. */
    if (!pools_supported || driver_version < 12060) {
        print_message("no host memory pools (driver %d, pools %d)\n", driver_version,
                      pools_supported);
        skip();
    }
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_HOST;
    props.location.id = -1; /* as cuda.core's PinnedMemoryResource */
    check_pool(&props, "pinned pool (location HOST)", false);
}

static void test_classify_managed_pool(void **state)
{
    CUmemPoolProps props;

    (void)state;
    /* Managed pools need CUDA 13 and concurrent managed access. */
    if (!pools_supported || driver_version < 13000 || !concurrent_managed) {
        print_message("no managed memory pools (driver %d, pools %d, "
                      "concurrent managed access %d)\n",
                      driver_version, pools_supported, concurrent_managed);
        skip();
    }
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_NONE;
    props.location.id = 0;
    check_pool(&props, "managed pool", true);
}

/* The built-in resources. */

static void check_props_at(strided_memory_resource *mr, const char *name, bool host, bool dev,
                           bool managed, int device_id, const char *file, int line)
{
    strided_memory_resource_props p;

    KEEPS_CTX_AT(file, line, p = strided_memory_resource_properties(mr));
    if (p.host_accessible != host || p.device_accessible != dev || p.managed != managed ||
        p.device_id != device_id)
        fail_at(file, line,
                "%s resource: host=%d device=%d managed=%d device_id=%d, "
                "expected %d %d %d %d\n",
                name, p.host_accessible, p.device_accessible, p.managed, p.device_id, host, dev,
                managed, device_id);
}
#define check_props(mr, name, host, dev, managed, device_id) \
    check_props_at((mr), (name), (host), (dev), (managed), (device_id), __FILE__, __LINE__)

static void test_resource_properties(void **state)
{
    strided_memory_resource *h = resource('h');
    strided_memory_resource *p = resource('p');
    strided_memory_resource *d = resource('d');
    strided_memory_resource *m = resource('m');
    strided_memory_resource *again;

    (void)state;
    check_props(h, "host", true, false, false, -1);
    check_props(p, "pinned", true, true, false, -1);
    check_props(d, "device", false, true, false, TEST_DEVICE);
    check_props(m, "managed", true, true, true, TEST_DEVICE);
    KEEPS_CTX(again = strided_memory_resource_retain(d));
    assert_ptr_equal(again, d);
    resource_release(again);
    resource_release(h);
    resource_release(p);
    resource_release(d);
    resource_release(m);
}

/* Allocate size bytes from mr on stream, check the buffer against mr's
 * properties and the driver, write and read its first and last bytes from
 * the host and the device where it is reachable from them, and release it
 * (in stream order for stream-ordered resources). */
static void alloc_and_use_at(strided_memory_resource *mr, const char *name,
                             strided_memory_kind kind, size_t size, CUstream stream,
                             const char *file, int line)
{
    strided_memory_resource_props props = strided_memory_resource_properties(mr);
    strided_buffer *b = buf_alloc_at(mr, size, stream, file, line);
    strided_memory_info info = info_of_at(b, file, line);
    unsigned char *p = strided_buffer_ptr(b);
    unsigned int first;
    raw_attrs r;

    if (strided_buffer_size(b) != size || strided_buffer_resource(b) != mr ||
        strided_buffer_use_count(b) != 1)
        fail_at(file, line,
                "%s, %zu bytes: size %zu resource %p uses %ld, expected %zu "
                "%p 1\n",
                name, size, strided_buffer_size(b), (void *)strided_buffer_resource(b),
                strided_buffer_use_count(b), size, (void *)mr);
    if (info.kind != kind || info.device_id != props.device_id ||
        info.host_accessible != props.host_accessible ||
        info.device_accessible != props.device_accessible || info.managed != props.managed)
        fail_at(file, line,
                "%s, %zu bytes: kind=%s device_id=%d host=%d device=%d "
                "managed=%d, expected %s and the resource's %d %d %d %d\n",
                name, size, kind_name(info.kind), info.device_id, info.host_accessible,
                info.device_accessible, info.managed, kind_name(kind), props.device_id,
                props.host_accessible, props.device_accessible, props.managed);
    if (size == 0) {
        buf_release_at(b, file, line);
        return;
    }
    if (p == NULL)
        fail_at(file, line, "%s, %zu bytes: NULL pointer\n", name, size);
    if (info.device_accessible ? info.device_address != (uintptr_t)p : info.device_address != 0)
        fail_at(file, line, "%s, %zu bytes: device_address %#" PRIxPTR ", pointer %p\n", name, size,
                info.device_address, (void *)p);

    /* The memory is what the resource says it is. */
    r = raw_query_at(p, file, line);
    if ((kind == STRIDED_MEMORY_HOST && r.memory_type != 0) ||
        (kind == STRIDED_MEMORY_PINNED && r.memory_type != CU_MEMORYTYPE_HOST) ||
        (kind == STRIDED_MEMORY_DEVICE &&
         (r.memory_type != CU_MEMORYTYPE_DEVICE || r.is_managed || r.mempool == NULL)) ||
        (kind == STRIDED_MEMORY_MANAGED && !r.is_managed))
        fail_at(file, line, "%s, %zu bytes: the driver says type=%u managed=%d pool=%p\n", name,
                size, r.memory_type, r.is_managed, r.mempool);
    if (kind == STRIDED_MEMORY_HOST && (uintptr_t)p % 64 != 0)
        fail_at(file, line, "%s: %p is not 64-byte aligned\n", name, (void *)p);

    /* A stream-ordered allocation is usable on other streams once its stream
     * has passed it. */
    if (stream != NULL)
        cu_check_(cu.cuStreamSynchronize(stream), "cuStreamSynchronize", file, line);
    /* The first byte, then the last one (the same byte for size 1). */
    first = size == 1 ? 0xA5 : 0x5A;
    if (info.host_accessible) {
        p[0] = 0x11;
        p[size - 1] = 0x22;
        if (p[0] != (size == 1 ? 0x22 : 0x11) || p[size - 1] != 0x22)
            fail_at(file, line, "%s, %zu bytes: host writes did not stick\n", name, size);
    }
    if (info.device_accessible) {
        CUdeviceptr d = (CUdeviceptr)info.device_address;
        unsigned char got[2] = {0, 0};

        cu_check_(cu.cuMemsetD8(d, 0x5A, 1), "cuMemsetD8", file, line);
        cu_check_(cu.cuMemsetD8(d + size - 1, 0xA5, 1), "cuMemsetD8", file, line);
        cu_check_(cu.cuCtxSynchronize(), "cuCtxSynchronize", file, line);
        cu_check_(cu.cuMemcpy(dptr(&got[0]), d, 1), "cuMemcpy", file, line);
        cu_check_(cu.cuMemcpy(dptr(&got[1]), d + size - 1, 1), "cuMemcpy", file, line);
        if (got[0] != first || got[1] != 0xA5)
            fail_at(file, line,
                    "%s, %zu bytes: read back %#x %#x, expected "
                    "%#x 0xa5\n",
                    name, size, got[0], got[1], first);
        if (info.host_accessible && (p[0] != first || p[size - 1] != 0xA5))
            fail_at(file, line,
                    "%s, %zu bytes: the host reads %#x %#x where "
                    "the device wrote %#x 0xa5\n",
                    name, size, p[0], p[size - 1], first);
    }
    buf_release_at(b, file, line);
}
#define alloc_and_use(mr, name, kind, size, stream) \
    alloc_and_use_at((mr), (name), (kind), (size), (stream), __FILE__, __LINE__)

static void test_alloc_host_resource(void **state)
{
    static const size_t sizes[] = {0, 1, MiB};
    strided_memory_resource *mr = resource('h');
    size_t i;

    (void)state;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        alloc_and_use(mr, "host", STRIDED_MEMORY_HOST, sizes[i], NULL);
    resource_release(mr);
}

static void test_alloc_pinned_resource(void **state)
{
    static const size_t sizes[] = {0, 1, MiB, 64 * MiB};
    strided_memory_resource *mr = resource('p');
    size_t i;

    (void)state;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        alloc_and_use(mr, "pinned", STRIDED_MEMORY_PINNED, sizes[i], NULL);
    resource_release(mr);
}

static void test_alloc_device_resource(void **state)
{
    static const size_t sizes[] = {0, 1, MiB, GiB + 1};
    strided_memory_resource *mr = resource('d');
    CUstream s = new_stream();
    size_t i;

    (void)state;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        alloc_and_use(mr, "device", STRIDED_MEMORY_DEVICE, sizes[i], NULL);
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        alloc_and_use(mr, "device, on a stream", STRIDED_MEMORY_DEVICE, sizes[i], s);
    CU(cuStreamSynchronize(s));
    CU(cuStreamDestroy(s));
    resource_release(mr);
}

static void test_alloc_managed_resource(void **state)
{
    static const size_t sizes[] = {0, 1, MiB};
    strided_memory_resource *mr;
    size_t i;

    (void)state;
    if (!managed_supported) {
        print_message("MANAGED_MEMORY is 0\n");
        skip();
    }
    mr = resource('m');
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        alloc_and_use(mr, "managed", STRIDED_MEMORY_MANAGED, sizes[i], NULL);
    resource_release(mr);
}

/* Stream-ordered frees. */

/* Allocate on one stream, work on it, hand the free to a second stream that
 * waits for the first, release, and only then synchronize: the work's
 * result arrives intact and the free is ordered after it. */
static void test_stream_ordered_free(void **state)
{
    strided_memory_resource *mr = resource('d');
    CUstream s1 = new_stream(), s2 = new_stream();
    CUevent done = NULL;
    unsigned char *host = NULL;
    strided_buffer *b;
    strided_status st;
    CUdeviceptr d;
    size_t i, n = 4 * MiB;

    (void)state;
    CU(cuMemAllocHost((void **)&host, n));
    memset(host, 0, n);
    CU(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));

    b = buf_alloc(mr, n, s1);
    d = dptr(strided_buffer_ptr(b));
    CU(cuMemsetD8Async(d, 0x3C, n, s1));
    CU(cuMemcpyAsync(dptr(host), d, n, s1));
    CU(cuEventRecord(done, s1));
    CU(cuStreamWaitEvent(s2, done, 0));
    KEEPS_CTX(st = strided_buffer_set_deallocation_stream(b, s2));
    assert_ok(st);
    buf_release(b);
    CU(cuStreamSynchronize(s2));
    CU(cuStreamSynchronize(s1));
    for (i = 0; i < n; i++)
        if (host[i] != 0x3C)
            fail_msg("byte %zu is %#x, expected 0x3c", i, host[i]);

    /* The legacy default stream (NULL) as deallocation stream. */
    b = buf_alloc(mr, n, s1);
    CU(cuStreamSynchronize(s1));
    KEEPS_CTX(st = strided_buffer_set_deallocation_stream(b, NULL));
    assert_ok(st);
    buf_release(b);
    CU(cuCtxSynchronize());

    CU(cuEventDestroy(done));
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
    CU(cuMemFreeHost(host));
    resource_release(mr);
}

static void test_set_deallocation_stream_needs_a_resource(void **state)
{
    unsigned char host[16] = {0};
    strided_buffer *b = buf_wrap(host, sizeof host, NULL, NULL);
    CUstream s = new_stream();
    strided_status st;

    (void)state;
    KEEPS_CTX(st = strided_buffer_set_deallocation_stream(b, s));
    assert_status(st, STRIDED_ERR_INVALID_ARGUMENT);
    buf_release(b);
    CU(cuStreamDestroy(s));
}

/* Release callbacks. */

/* What a release callback saw. */
typedef struct release_log {
    atomic_int calls;
    void *context;
    void *ptr;
    size_t size;
    pthread_t thread;
} release_log;

static void record_release(void *context, void *ptr, size_t size)
{
    release_log *log = context;

    log->context = context;
    log->ptr = ptr;
    log->size = size;
    log->thread = pthread_self();
    atomic_fetch_add(&log->calls, 1);
}

static void init_log(release_log *log)
{
    memset(log, 0, sizeof *log);
    atomic_init(&log->calls, 0);
}

/* Wrap ptr with a callback, take a second reference, drop the first: the
 * callback has not run and the buffer still answers; drop the second: it
 * ran once, with the wrapped pointer, size and context. */
static void check_callback_once(const char *name, void *ptr, size_t size, strided_memory_info want)
{
    release_log log;
    strided_buffer *b, *second;
    strided_memory_info info;

    init_log(&log);
    b = buf_wrap(ptr, size, record_release, &log);
    KEEPS_CTX(second = strided_buffer_retain(b));
    assert_ptr_equal(second, b);
    assert_int_equal(strided_buffer_use_count(b), 2);
    buf_release(b);
    assert_int_equal(atomic_load(&log.calls), 0);
    assert_int_equal(strided_buffer_use_count(second), 1);
    assert_ptr_equal(strided_buffer_ptr(second), ptr);
    info = info_of(second);
    check_info_at(name, "after the first release", ptr, &info, &want, __FILE__, __LINE__);
    buf_release(second);
    assert_int_equal(atomic_load(&log.calls), 1);
    assert_ptr_equal(log.context, &log);
    assert_ptr_equal(log.ptr, ptr);
    assert_int_equal(log.size, size);
}

static void test_callback_once_after_second_holder(void **state)
{
    unsigned char *pageable = malloc(4096);
    unsigned char *pinned = NULL;
    CUdeviceptr d = 0, m = 0;
    release_log log;

    (void)state;
    assert_non_null(pageable);
    CU(cuMemAllocHost((void **)&pinned, 4096));
    CU(cuMemAlloc(&d, 4096));
    check_callback_once("pageable", pageable, 4096, expect_host(pageable));
    check_callback_once("pinned", pinned, 4096, expect_pinned(pinned, false));
    check_callback_once("device", hptr(d), 4096, expect_device(hptr(d), false));
    if (managed_supported) {
        CU(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
        check_callback_once("managed", hptr(m), 4096, expect_managed(hptr(m), false));
        CU(cuMemFree(m));
    }

    /* A failed wrap never calls back. */
    init_log(&log);
    assert_status(strided_buffer_wrap(pageable, 4096, record_release, &log, NULL),
                  STRIDED_ERR_INVALID_ARGUMENT);
    assert_int_equal(atomic_load(&log.calls), 0);

    CU(cuMemFree(d));
    CU(cuMemFreeHost(pinned));
    free(pageable);
}

/* Releases on another thread. */

typedef struct thread_job {
    strided_buffer *buffers[8];
    int count;
    CUresult rc_before, rc_after;
    CUcontext before, after;
} thread_job;

/* Runs on a new thread, which has no current context: release every buffer
 * and note the context before and after. No cmocka asserts here; the main
 * thread checks. */
static void *release_on_thread(void *arg)
{
    thread_job *job = arg;
    int i;

    job->rc_before = cu.cuCtxGetCurrent(&job->before);
    for (i = 0; i < job->count; i++)
        strided_buffer_release(job->buffers[i]);
    job->rc_after = cu.cuCtxGetCurrent(&job->after);
    return NULL;
}

static void test_release_on_thread_without_context(void **state)
{
    strided_memory_resource *h = resource('h');
    strided_memory_resource *p = resource('p');
    strided_memory_resource *dr = resource('d');
    strided_memory_resource *m = managed_supported ? resource('m') : NULL;
    CUstream s = new_stream();
    CUdeviceptr d = 0;
    release_log log;
    thread_job job;
    pthread_t thread;
    strided_buffer *device_buf, *wrapped, *second;

    (void)state;
    memset(&job, 0, sizeof job);
    init_log(&log);

    /* Memory from every resource; the device buffer has work pending on its
     * stream when the other thread frees it there. */
    device_buf = buf_alloc(dr, 8 * MiB, s);
    CU(cuMemsetD8Async(dptr(strided_buffer_ptr(device_buf)), 1, 8 * MiB, s));
    job.buffers[job.count++] = device_buf;
    job.buffers[job.count++] = buf_alloc(p, MiB, NULL);
    job.buffers[job.count++] = buf_alloc(h, MiB, NULL);
    if (m != NULL)
        job.buffers[job.count++] = buf_alloc(m, MiB, NULL);

    /* A wrapped buffer whose second holder is released over there. */
    CU(cuMemAlloc(&d, MiB));
    wrapped = buf_wrap(hptr(d), MiB, record_release, &log);
    KEEPS_CTX(second = strided_buffer_retain(wrapped));
    buf_release(wrapped);
    job.buffers[job.count++] = second;

    assert_int_equal(pthread_create(&thread, NULL, release_on_thread, &job), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);

    assert_int_equal(job.rc_before, CUDA_SUCCESS);
    assert_int_equal(job.rc_after, CUDA_SUCCESS);
    assert_null(job.before);
    if (job.after != NULL)
        fail_msg("the releases left context %p current on the thread", (void *)job.after);
    assert_int_equal(atomic_load(&log.calls), 1);
    assert_ptr_equal(log.ptr, hptr(d));
    assert_int_equal(log.size, MiB);
    assert_true(pthread_equal(log.thread, thread));

    CU(cuStreamSynchronize(s));
    CU(cuCtxSynchronize());
    CU(cuMemFree(d));
    CU(cuStreamDestroy(s));
    resource_release(h);
    resource_release(p);
    resource_release(dr);
    resource_release(m);
}

/* The caller's current context. */

/* Every kind of library call, each checked by KEEPS_CTX, for whatever
 * context is current now. dev and pinned are memory to classify. */
static void library_calls(CUdeviceptr dev, void *pinned)
{
    static const char kinds[] = {'h', 'p', 'd', 'm'};
    unsigned char pageable[64];
    strided_memory_info info;
    strided_status st;
    strided_buffer *b, *b2;
    size_t i;

    memset(pageable, 0, sizeof pageable);
    KEEPS_CTX(st = strided_memory_info_query(pageable, &info));
    assert_ok(st);
    KEEPS_CTX(st = strided_memory_info_query(NULL, &info));
    assert_ok(st);
    KEEPS_CTX(st = strided_memory_info_query(hptr(dev), &info));
    assert_ok(st);
    assert_int_equal(info.kind, STRIDED_MEMORY_DEVICE);
    KEEPS_CTX(st = strided_memory_info_query(pinned, &info));
    assert_ok(st);
    assert_int_equal(info.kind, STRIDED_MEMORY_PINNED);

    b = buf_wrap(hptr(dev), 4096, NULL, NULL);
    KEEPS_CTX(b2 = strided_buffer_retain(b));
    buf_release(b2);
    (void)info_of(b);
    buf_release(b);

    for (i = 0; i < sizeof kinds; i++) {
        strided_memory_resource *mr;

        if (kinds[i] == 'm' && !managed_supported)
            continue;
        mr = resource(kinds[i]);
        b = buf_alloc(mr, 4096, NULL);
        (void)info_of(b);
        KEEPS_CTX(st = strided_buffer_set_deallocation_stream(b, NULL));
        assert_ok(st);
        buf_release(b);
        b = buf_alloc(mr, 0, NULL);
        buf_release(b);
        resource_release(mr);
    }
}

static void test_context_unchanged(void **state)
{
    CUdeviceptr dev = 0;
    void *pinned = NULL;
    CUcontext other = NULL;

    (void)state;
    CU(cuMemAlloc(&dev, 4096));
    CU(cuMemAllocHost(&pinned, 4096));

    /* The primary context current. */
    library_calls(dev, pinned);

    /* No context current. */
    CU(cuCtxSetCurrent(NULL));
    library_calls(dev, pinned);

    /* Another context of the same device current. */
    if (cu.cuCtxCreate_v2 != NULL)
        CU(cuCtxCreate_v2(&other, 0, device));
    else if (cu.cuCtxCreate_v4 != NULL)
        CU(cuCtxCreate_v4(&other, NULL, 0, device));
    if (other != NULL && cu.cuCtxDestroy != NULL) {
        CU(cuCtxSetCurrent(other));
        library_calls(dev, pinned);
        CU(cuCtxSetCurrent(primary));
        CU(cuCtxDestroy(other));
    } else {
        print_message("no cuCtxCreate: the non-primary case was not run\n");
    }

    CU(cuCtxSetCurrent(primary));
    CU(cuMemFreeHost(pinned));
    CU(cuMemFree(dev));
}

/* Read a flag the device writes, waiting at most about 5 s for want;
 * returns what it last read. */
static unsigned int poll_flag(volatile unsigned int *flag, unsigned int want)
{
    const struct timespec ms = {0, 1000000};
    for (int i = 0; i < 5000 && *flag != want; i++)
        nanosleep(&ms, NULL);
    return *flag;
}

/* The producer stream is held on the device by a wait on a host-written
 * gate (cuStreamWaitValue32); the consumer writes a marker when it gets past
 * the point of interest (cuStreamWriteValue32). No host callbacks, no
 * stream queries: the host only reads the marker. The gate is always opened
 * before any synchronization, so a failure cannot hang the test. */
static void test_stream_wait_orders_on_the_device(void **state)
{
    const struct timespec settle = {0, 50000000};
    CUstream producer, consumer;
    CUcontext before = NULL, after = NULL;
    volatile unsigned int *flags = NULL;
    unsigned int seen;

    (void)state;
    CU(cuMemHostAlloc((void **)&flags, 2 * sizeof *flags, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr gate = (CUdeviceptr)(uintptr_t)&flags[0];
    CUdeviceptr marker = (CUdeviceptr)(uintptr_t)&flags[1];
    CU(cuStreamCreate(&producer, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING));

    /* With the wait: the consumer is held behind the producer. */
    flags[0] = 0;
    flags[1] = 0;
    CU(cuStreamWaitValue32(producer, gate, 1, 0 /* GEQ */));
    CU(cuCtxGetCurrent(&before));
    assert_ok(strided_stream_wait(consumer, producer, TEST_DEVICE));
    CU(cuCtxGetCurrent(&after));
    assert_ptr_equal(before, after);
    CU(cuStreamWriteValue32(consumer, marker, 1, 0));
    nanosleep(&settle, NULL);
    seen = flags[1];
    flags[0] = 1; /* open the gate before anything can fail */
    assert_int_equal(seen, 0);
    assert_int_equal(poll_flag(&flags[1], 1), 1);
    CU(cuStreamSynchronize(consumer));
    CU(cuStreamSynchronize(producer));

    /* Without the wait the consumer runs while the producer is held, so
     * the check above can fail. */
    flags[0] = 0;
    flags[1] = 0;
    CU(cuStreamWaitValue32(producer, gate, 1, 0));
    CU(cuStreamWriteValue32(consumer, marker, 1, 0));
    seen = poll_flag(&flags[1], 1);
    flags[0] = 1;
    assert_int_equal(seen, 1);
    CU(cuStreamSynchronize(consumer));
    CU(cuStreamSynchronize(producer));

    CU(cuStreamDestroy(producer));
    CU(cuStreamDestroy(consumer));
    CU(cuMemFreeHost((void *)flags));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_classify_pageable, set_primary),
        cmocka_unit_test_setup(test_classify_null, set_primary),
        cmocka_unit_test_setup(test_classify_pinned_mem_host_alloc, set_primary),
        cmocka_unit_test_setup(test_classify_pinned_mem_alloc_host, set_primary),
        cmocka_unit_test_setup(test_classify_registered_flags_0, set_primary),
        cmocka_unit_test_setup(test_classify_registered_devicemap, set_primary),
        cmocka_unit_test_setup(test_classify_device, set_primary),
        cmocka_unit_test_setup(test_classify_device_pool, set_primary),
        cmocka_unit_test_setup(test_classify_managed_global, set_primary),
        cmocka_unit_test_setup(test_classify_managed_host, set_primary),
        cmocka_unit_test_setup(test_classify_pinned_pool, set_primary),
        cmocka_unit_test_setup(test_classify_managed_pool, set_primary),
        cmocka_unit_test_setup(test_resource_properties, set_primary),
        cmocka_unit_test_setup(test_alloc_host_resource, set_primary),
        cmocka_unit_test_setup(test_alloc_pinned_resource, set_primary),
        cmocka_unit_test_setup(test_alloc_device_resource, set_primary),
        cmocka_unit_test_setup(test_alloc_managed_resource, set_primary),
        cmocka_unit_test_setup(test_stream_ordered_free, set_primary),
        cmocka_unit_test_setup(test_set_deallocation_stream_needs_a_resource, set_primary),
        cmocka_unit_test_setup(test_callback_once_after_second_holder, set_primary),
        cmocka_unit_test_setup(test_release_on_thread_without_context, set_primary),
        cmocka_unit_test_setup(test_context_unchanged, set_primary),
        cmocka_unit_test_setup(test_stream_wait_orders_on_the_device, set_primary),
    };
    int count = 0, major = 0, minor = 0, rc;

    rc = gpu_test_start(&count);
    if (rc >= 0)
        return rc;
    if (cu.cuDriverGetVersion(&driver_version) != CUDA_SUCCESS) {
        printf("cannot set up device %d\n", TEST_DEVICE);
        return 1;
    }
    if (!gpu_retain_devices(1, &device, &primary))
        return 1;
    pageable_access = device_attribute(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
    pools_supported = device_attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
    managed_supported = device_attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
    concurrent_managed = device_attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
    host_register_supported = device_attribute(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
    host_pointer_for_registered =
        device_attribute(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
    major = driver_version / 1000;
    minor = driver_version % 1000 / 10;
    printf("CUDA driver API %d.%d, %d device(s); device %d: "
           "PAGEABLE_MEMORY_ACCESS=%d MEMORY_POOLS_SUPPORTED=%d "
           "MANAGED_MEMORY=%d CONCURRENT_MANAGED_ACCESS=%d "
           "HOST_REGISTER_SUPPORTED=%d "
           "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM=%d\n",
           major, minor, count, TEST_DEVICE, pageable_access, pools_supported, managed_supported,
           concurrent_managed, host_register_supported, host_pointer_for_registered);
    printf("Classification (strided, then the driver's raw answers):\n");
    rc = cmocka_run_group_tests_name("gpu memory", tests, NULL, NULL);
    gpu_release_devices(1, &device);
    return rc;
}
