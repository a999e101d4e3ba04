/*
 * fake_cuda.c: a fake CUDA driver for the C tests (see fake_cuda.h).
 *
 * It is a shared library that libstrided loads in place of libcuda.so.1
 * (STRIDED_CUDA_DRIVER). Only the lookup functions and the control functions
 * are exported; every entry point is reached through cuGetProcAddress, as
 * libstrided reaches the real driver's.
 *
 * It behaves like the real driver where libstrided depends on it:
 *   - nothing but cuDriverGetVersion, cuGetErrorName/String and the lookup
 *     works before cuInit (CUDA_ERROR_NOT_INITIALIZED);
 *   - cuGetProcAddress refuses a version newer than the driver's
 *     (CUDA_ERROR_INVALID_VALUE) and one older than the entry point's
 *     (CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
 *   - allocation and free calls need a current context
 *     (CUDA_ERROR_INVALID_CONTEXT), and pinned and managed memory belong to
 *     the current context's device;
 *   - cuPointerGetAttributes answers from the range table the way the real
 *     driver does (each attribute written at the size the driver writes
 *     it), with the driver's defaults for unknown pointers and NULL
 *     (memory type 0, device ordinal -2, no device pointer), and success;
 *   - the current context is per thread; each device has one primary
 *     context object for the life of the process;
 *   - cuMemPoolCreate makes the pools the driver makes (device memory of a
 *     device; pinned host memory placed by the OS or on NUMA node 0 or 1;
 *     managed memory with a preferred location or none) and refuses any
 *     other description; a pool's memory is of its kind, counted in its
 *     used-memory attributes, and refused (CUDA_ERROR_OUT_OF_MEMORY) past
 *     the pool's maximum size;
 *   - cuModuleLoadData takes only a fatbin (by its magic number) and loads
 *     it for the current context's device; a kernel launches only in a
 *     context of that device, with a grid and block that exist (it runs
 *     nothing: the launch is recorded, fake_cuda_last_launch);
 *   - cuMemcpyAsync, cuMemcpy2DAsync and the cuMemsetD*Async calls move
 *     nothing, unless a test asks (fake_cuda_move_bytes): then they copy or
 *     set the bytes at once, refusing (CUDA_ERROR_INVALID_VALUE) a copy
 *     that runs past the end of a known range; addresses in no known range
 *     are taken for the test's own host memory. A memset needs an address
 *     aligned to its element size;
 *   - memory pools created with the POSIX file-descriptor handle type, their
 *     allocations, device memory, and events made with
 *     CU_EVENT_INTERPROCESS are shared as the driver shares them between
 *     processes (see "Inter-process sharing" below and fake_cuda.h).
 * Memory "on the device" is ordinary host memory, so tests may touch it.
 *
 * Two environment variables, read at lookup time, make a broken driver:
 * FAKE_CUDA_DRIVER_VERSION (what cuDriverGetVersion says, default 13000) and
 * FAKE_CUDA_HIDE (an entry point that cuGetProcAddress does not find).
 * Built with FAKE_CUDA_V1_ONLY, the library exports only the CUDA 11
 * cuGetProcAddress, like a driver older than 12.0.
 */
#define _GNU_SOURCE /* memfd_create */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda/cuda_api.h"
#include "fake_cuda.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

FAKE_EXPORT void fake_cuda_reset(int device_count, int pageable_memory_access,
                                 int memory_pools_supported);
FAKE_EXPORT void fake_cuda_add_range(const fake_cuda_range *range);
FAKE_EXPORT void fake_cuda_remove_range(uintptr_t begin);
FAKE_EXPORT void fake_cuda_fail_next(const char *name, int result);
FAKE_EXPORT void fake_cuda_fail_after(const char *name, long calls, int result);
FAKE_EXPORT void fake_cuda_move_bytes(int on);
FAKE_EXPORT void fake_cuda_set_max_pitch(int bytes);
FAKE_EXPORT long fake_cuda_calls(const char *name);
FAKE_EXPORT void *fake_cuda_current_context(void);
FAKE_EXPORT void fake_cuda_set_current_device(int device);
FAKE_EXPORT long fake_cuda_live_bytes(void);
FAKE_EXPORT void *fake_cuda_last_stream(const char *name);
FAKE_EXPORT long fake_cuda_live_events(void);
FAKE_EXPORT long fake_cuda_live_modules(void);
FAKE_EXPORT int fake_cuda_last_launch(fake_cuda_launch *out);
FAKE_EXPORT int fake_cuda_pool_info(void *pool, fake_cuda_pool *out);
FAKE_EXPORT long fake_cuda_live_pools(void);
FAKE_EXPORT void fake_cuda_set_host_numa_id(int id);
FAKE_EXPORT int fake_cuda_last_memop(fake_cuda_memop *out);
FAKE_EXPORT int fake_cuda_last_tensor_map(fake_cuda_tensor_map *out);
FAKE_EXPORT int fake_cuda_pool_access(void *pool, int device);
FAKE_EXPORT void fake_cuda_set_capturing(void *stream, int on);
FAKE_EXPORT void fake_cuda_set_device_uuid(int device, const unsigned char *uuid);
FAKE_EXPORT int fake_cuda_managed_info(uintptr_t address, fake_cuda_managed *out);
FAKE_EXPORT int fake_cuda_last_managed_op(fake_cuda_managed_op *out);
FAKE_EXPORT int fake_cuda_last_copy_attributes(fake_cuda_copy_attributes *out);
FAKE_EXPORT long fake_cuda_mappings(uintptr_t address);
FAKE_EXPORT void fake_cuda_set_ipc_handle_types(int types);
#ifndef FAKE_CUDA_V1_ONLY
FAKE_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult *status);
#endif
FAKE_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                      cuuint64_t flags);

#define MAX_DEVICES 64
#define MAX_DEVICES_ACCESS MAX_DEVICES
#define ALIGNMENT 256
#define FAKE_MULTIPROCESSORS 132 /* as an H200 */
#define FAKE_DEVICE_NAME "Fake CUDA Device"
#define FAKE_CC_MAJOR 9 /* compute capability 9.0, as an H200 */
#define FAKE_CC_MINOR 0

/* The opaque driver objects. */
struct CUctx_st {
    int device;
};
struct CUmemPoolHandle_st {
    int device;
    cuuint64_t release_threshold;
    CUmemPoolProps props;       /* cuMemPoolCreate's, or a default pool's */
    cuuint64_t used, used_high; /* bytes allocated from it and not freed */
    int reuse[3];               /* the REUSE_* attributes */
    bool created, destroyed;
    CUmemAccess_flags access[MAX_DEVICES_ACCESS]; /* cuMemPoolSetAccess's, by device */
    struct CUmemPoolHandle_st *imported_from;     /* cuMemPoolImportFromShareableHandle's */
    /* Exported to a shareable handle at least once: as the real driver
     * (580, H200), cuMemPoolExportPointer refuses allocations of a pool
     * never exported (CUDA_ERROR_INVALID_VALUE). */
    bool exported;
};

static struct CUctx_st contexts[MAX_DEVICES];
static struct CUmemPoolHandle_st pools[MAX_DEVICES];
/* The devices' UUIDs (cuDeviceGetUuid): by default bytes 9e 1d 5a 11 ... and
 * the ordinal last; fake_cuda_set_device_uuid changes one (another
 * process's numbering of the same GPUs). */
static unsigned char device_uuids[MAX_DEVICES][16];
static _Thread_local CUcontext current;

/* Each device's primary context and default pool know their device. */
__attribute__((constructor)) static void number_devices(void)
{
    for (int i = 0; i < MAX_DEVICES; i++) {
        contexts[i].device = i;
        pools[i].device = i;
        pools[i].props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pools[i].props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pools[i].props.location.id = i;
        pools[i].reuse[0] = pools[i].reuse[1] = pools[i].reuse[2] = 1;
    }
}

/* The entry points, for call counts and injected failures. */
#define ENTRY_POINTS(X)                   \
    X(cuGetProcAddress)                   \
    X(cuInit)                             \
    X(cuDriverGetVersion)                 \
    X(cuGetErrorName)                     \
    X(cuGetErrorString)                   \
    X(cuDeviceGetCount)                   \
    X(cuDeviceGet)                        \
    X(cuDeviceGetName)                    \
    X(cuDeviceGetUuid)                    \
    X(cuDeviceGetAttribute)               \
    X(cuDevicePrimaryCtxRetain)           \
    X(cuCtxGetCurrent)                    \
    X(cuCtxSetCurrent)                    \
    X(cuCtxGetDevice)                     \
    X(cuPointerGetAttributes)             \
    X(cuStreamSynchronize)                \
    X(cuEventCreate)                      \
    X(cuEventRecord)                      \
    X(cuStreamWaitEvent)                  \
    X(cuEventDestroy)                     \
    X(cuEventSynchronize)                 \
    X(cuDeviceCanAccessPeer)              \
    X(cuCtxEnablePeerAccess)              \
    X(cuMemHostAlloc)                     \
    X(cuMemAllocHost)                     \
    X(cuMemFreeHost)                      \
    X(cuMemAllocManaged)                  \
    X(cuMemFree)                          \
    X(cuDeviceGetMemPool)                 \
    X(cuMemPoolCreate)                    \
    X(cuMemPoolDestroy)                   \
    X(cuMemPoolGetAttribute)              \
    X(cuMemPoolSetAttribute)              \
    X(cuMemAllocFromPoolAsync)            \
    X(cuMemFreeAsync)                     \
    X(cuMemcpyAsync)                      \
    X(cuMemcpy2DAsync)                    \
    X(cuMemcpyPeerAsync)                  \
    X(cuMemsetD8Async)                    \
    X(cuMemsetD16Async)                   \
    X(cuMemsetD32Async)                   \
    X(cuModuleLoadData)                   \
    X(cuModuleGetFunction)                \
    X(cuModuleUnload)                     \
    X(cuLaunchKernel)                     \
    X(cuTensorMapEncodeTiled)             \
    X(cuMemRangeGetAttribute)             \
    X(cuMemPoolSetAccess)                 \
    X(cuMemPoolGetAccess)                 \
    X(cuStreamIsCapturing)                \
    X(cuMemAdvise)                        \
    X(cuMemAdvise_v2)                     \
    X(cuMemPrefetchAsync)                 \
    X(cuMemPrefetchAsync_v2)              \
    X(cuMemDiscardBatchAsync)             \
    X(cuMemDiscardAndPrefetchBatchAsync)  \
    X(cuMemcpyWithAttributesAsync)        \
    X(cuMemPoolExportToShareableHandle)   \
    X(cuMemPoolImportFromShareableHandle) \
    X(cuMemPoolExportPointer)             \
    X(cuMemPoolImportPointer)             \
    X(cuMemGetAddressRange)               \
    X(cuIpcGetMemHandle)                  \
    X(cuIpcOpenMemHandle)                 \
    X(cuIpcCloseMemHandle)                \
    X(cuIpcGetEventHandle)                \
    X(cuIpcOpenEventHandle)

enum {
#define X(name) E_##name,
    ENTRY_POINTS(X)
#undef X
        E_COUNT
};

static const char *const entry_names[E_COUNT] = {
#define X(name) #name,
    ENTRY_POINTS(X)
#undef X
};

/* How a range came to be, so that each free call accepts only its own. */
typedef enum origin { ADDED, HOST_ALLOC, MANAGED_ALLOC, POOL_ALLOC } origin;

/* At most this many locations (every device and the host) keep a mapping
 * to a range of managed memory. */
#define MAX_ACCESSED (MAX_DEVICES + 1)

typedef struct range {
    fake_cuda_range r;
    origin how;
    void *memory; /* what to free; NULL for added ranges */
    /* Managed memory's advice and what was done to it, for the whole
     * range: advising part of a range advises all of it. */
    int read_mostly;
    CUmemLocation preferred;    /* type INVALID: none */
    int accessed[MAX_ACCESSED]; /* in the order advised; -1: the host */
    int n_accessed;
    CUmemLocation last_prefetch; /* type INVALID: none */
    int discards;
    /* Inter-process sharing: the range's serial number (unique since the
     * process began: a freed range's never comes back), and the mappings
     * of it opened and not yet closed (cuMemPoolImportPointer,
     * cuIpcOpenMemHandle). */
    uint64_t serial;
    long mappings;
} range;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static range *ranges;
static size_t nranges, capacity;
static int device_count = 1;
/* peer_enabled[a][b]: the context of device a may reach device b's memory. */
#define FAKE_PEER_DEVICES 8
static bool peer_enabled[FAKE_PEER_DEVICES][FAKE_PEER_DEVICES];
static int pageable_access;
static int pools_supported = 1;
static bool initialized;
static long live;
static long calls[E_COUNT];
static bool fail_pending[E_COUNT];
static long fail_skip[E_COUNT]; /* calls that succeed before the failure */
static bool moving;             /* fake_cuda_move_bytes */
static int max_pitch = 2147483647;
static CUresult fail_result[E_COUNT];
static void *last_stream[E_COUNT];
static bool launched;
static fake_cuda_launch last_launch;
/* Pools made by cuMemPoolCreate since the last reset, destroyed or not
 * (a destroyed pool is kept, so that memory allocated from it can still be
 * freed and described). */
static CUmemoryPool *created_pools;
static size_t ncreated_pools;
static int host_numa_id;
static bool memop_done;
static fake_cuda_memop last_memop;
static bool tensor_map_done;
static fake_cuda_tensor_map last_tensor_map;
/* Streams capturing a graph (fake_cuda_set_capturing). */
#define MAX_CAPTURING 8
static void *capturing[MAX_CAPTURING];
static bool managed_op_done;
static fake_cuda_managed_op last_managed_op;
static bool copy_attributes_done;
static fake_cuda_copy_attributes last_copy_attributes;
static uint64_t next_serial = 1;
static int ipc_handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

static int entry_index(const char *name)
{
    for (int i = 0; i < E_COUNT; i++)
        if (strcmp(entry_names[i], name) == 0)
            return i;
    fprintf(stderr, "fake_cuda: unknown entry point \"%s\"\n", name);
    abort();
}

/* Count a call; true (with the result to return) when it is to fail. */
static bool begin_call(int e, CUresult *result)
{
    bool fail;

    pthread_mutex_lock(&lock);
    calls[e]++;
    fail = fail_pending[e] && fail_skip[e] == 0;
    if (fail_pending[e] && fail_skip[e] > 0)
        fail_skip[e]--;
    else
        fail_pending[e] = false;
    *result = fail_result[e];
    pthread_mutex_unlock(&lock);
    return fail;
}

/* The opening of every entry point: count, injected failure, cuInit. */
#define BEGIN(name)                           \
    do {                                      \
        CUresult injected_;                   \
        if (begin_call(E_##name, &injected_)) \
            return injected_;                 \
    } while (0)
#define BEGIN_INITIALIZED(name)                \
    do {                                       \
        BEGIN(name);                           \
        if (!initialized)                      \
            return CUDA_ERROR_NOT_INITIALIZED; \
    } while (0)

static bool valid_device(int dev)
{
    return dev >= 0 && dev < device_count;
}

/* The range that contains address p, or NULL. Assumes: lock held. */
static range *find(uintptr_t p)
{
    for (size_t i = 0; i < nranges; i++) {
        const fake_cuda_range *r = &ranges[i].r;
        if (p == r->begin || (p > r->begin && p - r->begin < r->size))
            return &ranges[i];
    }
    return NULL;
}

/* Assumes: lock held. */
static void add(const fake_cuda_range *r, origin how, void *memory)
{
    if (nranges == capacity) {
        size_t n = capacity == 0 ? 16 : 2 * capacity;
        range *grown = realloc(ranges, n * sizeof *grown);
        if (grown == NULL) {
            fprintf(stderr, "fake_cuda: out of memory\n");
            abort();
        }
        ranges = grown;
        capacity = n;
    }
    memset(&ranges[nranges], 0, sizeof ranges[nranges]);
    ranges[nranges].r = *r;
    ranges[nranges].how = how;
    ranges[nranges].memory = memory;
    ranges[nranges].serial = next_serial++;
    nranges++;
    if (memory != NULL)
        live += (long)r->size;
}

/* Free an allocation that starts at p and was made one of the two ways
 * given; false if there is none. Assumes: lock held. */
static bool remove_allocation(uintptr_t p, origin how1, origin how2)
{
    for (size_t i = 0; i < nranges; i++) {
        range *x = &ranges[i];
        if (x->r.begin == p && x->memory != NULL && (x->how == how1 || x->how == how2)) {
            if (x->how == POOL_ALLOC)
                ((CUmemoryPool)x->r.mempool)->used -= x->r.size;
            free(x->memory);
            live -= (long)x->r.size;
            ranges[i] = ranges[nranges - 1];
            nranges--;
            return true;
        }
    }
    return false;
}

/* Real memory for an allocation of size bytes, 256-byte aligned. */
static void *backing(size_t size)
{
    size_t rounded = (size + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    return aligned_alloc(ALIGNMENT, rounded);
}

void fake_cuda_reset(int count, int pageable_memory_access, int memory_pools_supported)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nranges; i++)
        free(ranges[i].memory);
    free(ranges);
    ranges = NULL;
    nranges = capacity = 0;
    live = 0;
    device_count = count < 0 ? 0 : count > MAX_DEVICES ? MAX_DEVICES : count;
    pageable_access = pageable_memory_access;
    pools_supported = memory_pools_supported;
    for (int i = 0; i < E_COUNT; i++) {
        calls[i] = 0;
        fail_pending[i] = false;
        fail_skip[i] = 0;
        last_stream[i] = NULL;
    }
    moving = false;
    max_pitch = 2147483647;
    for (int i = 0; i < MAX_DEVICES; i++) {
        pools[i].release_threshold = 0;
        pools[i].used = pools[i].used_high = 0;
        pools[i].reuse[0] = pools[i].reuse[1] = pools[i].reuse[2] = 1;
        memset(pools[i].access, 0, sizeof pools[i].access);
    }
    memset(capturing, 0, sizeof capturing);
    for (int i = 0; i < MAX_DEVICES; i++) {
        static const unsigned char base[15] = {0x9e, 0x1d, 0x5a, 0x11, 0x0f, 0xa4, 0x4e, 0xc0,
                                               0xb7, 0x2d, 0x61, 0x3a, 0x85, 0x5c, 0x00};
        memcpy(device_uuids[i], base, sizeof base);
        device_uuids[i][15] = (unsigned char)i;
    }
    managed_op_done = false;
    copy_attributes_done = false;
    for (size_t i = 0; i < ncreated_pools; i++)
        free(created_pools[i]);
    free(created_pools);
    created_pools = NULL;
    ncreated_pools = 0;
    host_numa_id = 0;
    ipc_handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    launched = false;
    memop_done = false;
    tensor_map_done = false;
    memset(peer_enabled, 0, sizeof peer_enabled);
    pthread_mutex_unlock(&lock);
}

void fake_cuda_add_range(const fake_cuda_range *r)
{
    pthread_mutex_lock(&lock);
    add(r, ADDED, NULL);
    pthread_mutex_unlock(&lock);
}

void fake_cuda_remove_range(uintptr_t begin)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i].r.begin == begin && ranges[i].how == ADDED) {
            /* Keep the order: the oldest range that holds an address
             * answers for it. */
            memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof *ranges);
            nranges--;
            break;
        }
    pthread_mutex_unlock(&lock);
}

void fake_cuda_fail_next(const char *name, int result)
{
    fake_cuda_fail_after(name, 0, result);
}

void fake_cuda_fail_after(const char *name, long n, int result)
{
    int e = entry_index(name);
    pthread_mutex_lock(&lock);
    fail_pending[e] = true;
    fail_skip[e] = n < 0 ? 0 : n;
    fail_result[e] = (CUresult)result;
    pthread_mutex_unlock(&lock);
}

void fake_cuda_move_bytes(int on)
{
    pthread_mutex_lock(&lock);
    moving = on != 0;
    pthread_mutex_unlock(&lock);
}

void fake_cuda_set_max_pitch(int bytes)
{
    pthread_mutex_lock(&lock);
    max_pitch = bytes;
    pthread_mutex_unlock(&lock);
}

long fake_cuda_calls(const char *name)
{
    int e = entry_index(name);
    pthread_mutex_lock(&lock);
    long n = calls[e];
    pthread_mutex_unlock(&lock);
    return n;
}

void *fake_cuda_current_context(void)
{
    return current;
}

void fake_cuda_set_current_device(int device)
{
    current = device >= 0 && device < MAX_DEVICES ? &contexts[device] : NULL;
}

long fake_cuda_live_bytes(void)
{
    pthread_mutex_lock(&lock);
    long n = live;
    pthread_mutex_unlock(&lock);
    return n;
}

void *fake_cuda_last_stream(const char *name)
{
    int e = entry_index(name);
    pthread_mutex_lock(&lock);
    void *s = last_stream[e];
    pthread_mutex_unlock(&lock);
    return s;
}

static int driver_version(void)
{
    const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");
    return v != NULL && v[0] != '\0' ? atoi(v) : 13000;
}

static CUresult fake_cuInit(unsigned int flags)
{
    BEGIN(cuInit);
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    initialized = true;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult fake_cuDriverGetVersion(int *version)
{
    BEGIN(cuDriverGetVersion);
    if (version == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *version = driver_version();
    return CUDA_SUCCESS;
}

typedef struct error_text {
    CUresult code;
    const char *name;
    const char *text;
} error_text;

static const error_text errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const error_text *find_error(CUresult code)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == code)
            return &errors[i];
    return NULL;
}

static CUresult fake_cuGetErrorName(CUresult error, const char **out)
{
    BEGIN(cuGetErrorName);
    const error_text *e = find_error(error);
    *out = e != NULL ? e->name : NULL;
    return e != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuGetErrorString(CUresult error, const char **out)
{
    BEGIN(cuGetErrorString);
    const error_text *e = find_error(error);
    *out = e != NULL ? e->text : NULL;
    return e != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuDeviceGetCount(int *count)
{
    BEGIN_INITIALIZED(cuDeviceGetCount);
    if (count == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    *count = device_count;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGet(CUdevice *dev, int ordinal)
{
    BEGIN_INITIALIZED(cuDeviceGet);
    if (dev == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(ordinal);
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}

/* Every device has the same name, truncated to len - 1 characters as the
 * driver truncates it. */
static CUresult fake_cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    BEGIN_INITIALIZED(cuDeviceGetUuid);
    if (uuid == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(dev);
    if (ok)
        memcpy(uuid->bytes, device_uuids[dev], 16);
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

void fake_cuda_set_device_uuid(int device, const unsigned char *uuid)
{
    pthread_mutex_lock(&lock);
    if (device >= 0 && device < MAX_DEVICES && uuid != NULL)
        memcpy(device_uuids[device], uuid, 16);
    pthread_mutex_unlock(&lock);
}

static CUresult fake_cuDeviceGetName(char *name, int len, CUdevice dev)
{
    BEGIN_INITIALIZED(cuDeviceGetName);
    if (name == NULL || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(dev);
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", FAKE_DEVICE_NAME);
    return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice dev)
{
    BEGIN_INITIALIZED(cuDeviceGetAttribute);
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(dev);
    int pageable = pageable_access, pools_ok = pools_supported, pitch = max_pitch;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: *value = pageable; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *value = pools_ok; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = FAKE_MULTIPROCESSORS; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = FAKE_CC_MAJOR; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = FAKE_CC_MINOR; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: *value = pitch; break;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
        pthread_mutex_lock(&lock);
        *value = host_numa_id;
        pthread_mutex_unlock(&lock);
        break;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
        pthread_mutex_lock(&lock);
        *value = ipc_handle_types;
        pthread_mutex_unlock(&lock);
        break;
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *value = 1; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    BEGIN_INITIALIZED(cuDevicePrimaryCtxRetain);
    if (ctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(dev);
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_DEVICE;
    *ctx = &contexts[dev];
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetCurrent(CUcontext *ctx)
{
    BEGIN_INITIALIZED(cuCtxGetCurrent);
    if (ctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = current;
    return CUDA_SUCCESS;
}

static bool is_context(CUcontext ctx)
{
    uintptr_t p = (uintptr_t)ctx, first = (uintptr_t)&contexts[0];
    return p >= first && p < first + sizeof contexts && (p - first) % sizeof contexts[0] == 0;
}

static CUresult fake_cuCtxSetCurrent(CUcontext ctx)
{
    BEGIN_INITIALIZED(cuCtxSetCurrent);
    if (ctx != NULL && !is_context(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    current = ctx;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxGetDevice(CUdevice *dev)
{
    BEGIN_INITIALIZED(cuCtxGetDevice);
    if (dev == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = current->device;
    return CUDA_SUCCESS;
}

static CUresult fake_cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attributes,
                                            void **data, CUdeviceptr ptr)
{
    BEGIN_INITIALIZED(cuPointerGetAttributes);
    if (n > 0 && (attributes == NULL || data == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t p = (uintptr_t)ptr;
    pthread_mutex_lock(&lock);
    const range *x = find(p);
    fake_cuda_range r = {0, 0, 0, 0, CU_DEVICE_INVALID, 0, NULL};
    if (x != NULL)
        r = x->r;
    pthread_mutex_unlock(&lock);
    bool known = x != NULL;
    bool host_visible = !known || r.memory_type == CU_MEMORYTYPE_HOST || r.is_managed;
    for (unsigned int i = 0; i < n; i++) {
        void *out = data[i];
        if (out == NULL)
            return CUDA_ERROR_INVALID_VALUE;
        switch (attributes[i]) {
        case CU_POINTER_ATTRIBUTE_CONTEXT: {
            CUcontext ctx = NULL;
            if (known && r.mempool == NULL && r.device_ordinal >= 0 &&
                r.device_ordinal < MAX_DEVICES)
                ctx = &contexts[r.device_ordinal];
            memcpy(out, &ctx, sizeof ctx);
            break;
        }
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: {
            unsigned int t = known ? r.memory_type : 0;
            memcpy(out, &t, sizeof t);
            break;
        }
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: {
            CUdeviceptr d = 0;
            if (known && r.device_pointer != 0)
                d = (CUdeviceptr)(r.device_pointer + (p - r.begin));
            memcpy(out, &d, sizeof d);
            break;
        }
        case CU_POINTER_ATTRIBUTE_HOST_POINTER: {
            void *h = host_visible ? (void *)p : NULL;
            memcpy(out, &h, sizeof h);
            break;
        }
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: {
            int m = known ? r.is_managed : 0;
            memcpy(out, &m, sizeof m);
            break;
        }
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: {
            int o = known ? r.device_ordinal : CU_DEVICE_INVALID;
            memcpy(out, &o, sizeof o);
            break;
        }
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            if (known) {
                CUdeviceptr b = (CUdeviceptr)r.begin;
                memcpy(out, &b, sizeof b);
            }
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            if (known)
                memcpy(out, &r.size, sizeof r.size);
            break;
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: {
            void *pool = known ? r.mempool : NULL;
            memcpy(out, &pool, sizeof pool);
            break;
        }
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

static void note_stream(int e, CUstream stream)
{
    pthread_mutex_lock(&lock);
    last_stream[e] = stream;
    pthread_mutex_unlock(&lock);
}

static CUresult fake_cuStreamSynchronize(CUstream stream)
{
    BEGIN_INITIALIZED(cuStreamSynchronize);
    note_stream(E_cuStreamSynchronize, stream);
    /* The legacy and per-thread default streams belong to the current
     * context; any other value is a stream of its own. */
    if ((stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) &&
        current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
}

/* Events: a live count, so tests can see every event destroyed. Waiting
 * needs the event to have been recorded. */
static long live_events;

typedef struct fake_event {
    int recorded;
    unsigned int flags;
    uint64_t serial; /* unique since the process began */
} fake_event;

/* The events made with CU_EVENT_INTERPROCESS and not yet destroyed, which
 * cuIpcOpenEventHandle may open. */
#define MAX_IPC_EVENTS 64
static fake_event *ipc_events[MAX_IPC_EVENTS];
static uint64_t next_event_serial = 1;

static CUresult fake_cuEventCreate(CUevent *event, unsigned int flags)
{
    BEGIN_INITIALIZED(cuEventCreate);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* The driver's rule: an interprocess event records no timing. */
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    fake_event *e = calloc(1, sizeof *e);
    if (e == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = flags;
    pthread_mutex_lock(&lock);
    e->serial = next_event_serial++;
    for (int i = 0; i < MAX_IPC_EVENTS && (flags & CU_EVENT_INTERPROCESS); i++)
        if (ipc_events[i] == NULL) {
            ipc_events[i] = e;
            break;
        }
    live_events++;
    pthread_mutex_unlock(&lock);
    *event = (CUevent)(void *)e;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventRecord(CUevent event, CUstream stream)
{
    BEGIN_INITIALIZED(cuEventRecord);
    note_stream(E_cuEventRecord, stream);
    if (event == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    ((fake_event *)(void *)event)->recorded = 1;
    return CUDA_SUCCESS;
}

static CUresult fake_cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags)
{
    BEGIN_INITIALIZED(cuStreamWaitEvent);
    note_stream(E_cuStreamWaitEvent, stream);
    if (event == NULL || flags != 0 || !((fake_event *)(void *)event)->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventDestroy(CUevent event)
{
    BEGIN_INITIALIZED(cuEventDestroy);
    if (event == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_IPC_EVENTS; i++)
        if (ipc_events[i] == (fake_event *)(void *)event)
            ipc_events[i] = NULL;
    free((void *)event);
    live_events--;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult fake_cuEventSynchronize(CUevent event)
{
    BEGIN_INITIALIZED(cuEventSynchronize);
    if (event == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

/* Every two distinct devices (of the first FAKE_PEER_DEVICES) can reach
 * each other's memory. */
static CUresult fake_cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    BEGIN_INITIALIZED(cuDeviceCanAccessPeer);
    if (can == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(dev) && valid_device(peer);
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_DEVICE;
    *can = dev != peer && dev < FAKE_PEER_DEVICES && peer < FAKE_PEER_DEVICES;
    return CUDA_SUCCESS;
}

static CUresult fake_cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    BEGIN_INITIALIZED(cuCtxEnablePeerAccess);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags != 0 || peer == NULL || !is_context(peer))
        return CUDA_ERROR_INVALID_VALUE;
    int a = current->device, b = peer->device;
    if (a == b || a >= FAKE_PEER_DEVICES || b >= FAKE_PEER_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&lock);
    bool already = peer_enabled[a][b];
    peer_enabled[a][b] = true;
    pthread_mutex_unlock(&lock);
    return already ? CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED : CUDA_SUCCESS;
}

long fake_cuda_live_events(void)
{
    pthread_mutex_lock(&lock);
    long n = live_events;
    pthread_mutex_unlock(&lock);
    return n;
}

static CUresult fake_cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    BEGIN_INITIALIZED(cuMemHostAlloc);
    if (pp == NULL || size == 0 ||
        (flags & ~(unsigned int)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | 0x04)) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    void *m = backing(size);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_cuda_range r = {(uintptr_t)m, size, CU_MEMORYTYPE_HOST, 0, current->device,
                         (uintptr_t)m, NULL};
    pthread_mutex_lock(&lock);
    add(&r, HOST_ALLOC, m);
    pthread_mutex_unlock(&lock);
    *pp = m;
    return CUDA_SUCCESS;
}

/* cuMemAllocHost is cuMemHostAlloc without flags. */
static CUresult fake_cuMemAllocHost(void **pp, size_t size)
{
    BEGIN_INITIALIZED(cuMemAllocHost);
    if (pp == NULL || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    void *m = backing(size);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_cuda_range r = {(uintptr_t)m, size, CU_MEMORYTYPE_HOST, 0, current->device,
                         (uintptr_t)m, NULL};
    pthread_mutex_lock(&lock);
    add(&r, HOST_ALLOC, m);
    pthread_mutex_unlock(&lock);
    *pp = m;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemFreeHost(void *p)
{
    BEGIN_INITIALIZED(cuMemFreeHost);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    bool ok = remove_allocation((uintptr_t)p, HOST_ALLOC, HOST_ALLOC);
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned int flags)
{
    BEGIN_INITIALIZED(cuMemAllocManaged);
    if (dptr == NULL || size == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    void *m = backing(size);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_cuda_range r = {(uintptr_t)m, size, CU_MEMORYTYPE_DEVICE, 1, current->device,
                         (uintptr_t)m, NULL};
    pthread_mutex_lock(&lock);
    add(&r, MANAGED_ALLOC, m);
    pthread_mutex_unlock(&lock);
    *dptr = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemFree(CUdeviceptr dptr)
{
    BEGIN_INITIALIZED(cuMemFree);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    bool ok = remove_allocation((uintptr_t)dptr, MANAGED_ALLOC, POOL_ALLOC);
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Whether pool is a device's default pool or a created pool that is not
 * destroyed. Assumes: lock held. */
static bool is_pool_locked(CUmemoryPool pool)
{
    uintptr_t p = (uintptr_t)pool, first = (uintptr_t)&pools[0];
    if (p >= first && p < first + sizeof pools && (p - first) % sizeof pools[0] == 0)
        return true;
    for (size_t i = 0; i < ncreated_pools; i++)
        if (created_pools[i] == pool)
            return !pool->destroyed;
    return false;
}

static bool is_pool(CUmemoryPool pool)
{
    pthread_mutex_lock(&lock);
    bool ok = is_pool_locked(pool);
    pthread_mutex_unlock(&lock);
    return ok;
}

/* The NUMA nodes of the fake's host. */
#define FAKE_NUMA_NODES 2

/* Whether props describe a pool the driver makes: a device pool, a pinned
 * host pool (the OS's placement or a NUMA node), or a managed pool (with a
 * preferred location or none); every field not named is zero. */
static bool valid_pool_props(const CUmemPoolProps *props)
{
    static const unsigned char zeros[sizeof props->reserved];
    const CUmemLocation *loc = &props->location;
    if (props->win32SecurityAttributes != NULL || props->usage != 0 ||
        memcmp(props->reserved, zeros, sizeof zeros) != 0 ||
        (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE &&
         props->handleTypes != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return false;
    if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED &&
        props->allocType != CU_MEM_ALLOCATION_TYPE_MANAGED)
        return false;
    switch (loc->type) {
    case CU_MEM_LOCATION_TYPE_NONE: return props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
    case CU_MEM_LOCATION_TYPE_DEVICE: return valid_device(loc->id);
    case CU_MEM_LOCATION_TYPE_HOST: return true;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return loc->id >= 0 && loc->id < FAKE_NUMA_NODES;
    default: return false;
    }
}

/* Keep a new pool among the created ones, or free it. Assumes: lock
 * held. */
static CUresult keep_pool(CUmemoryPool p)
{
    CUmemoryPool *grown = realloc(created_pools, (ncreated_pools + 1) * sizeof *grown);
    if (grown == NULL) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    created_pools = grown;
    created_pools[ncreated_pools++] = p;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    BEGIN_INITIALIZED(cuMemPoolCreate);
    if (pool == NULL || props == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool supported = pools_supported != 0, valid = valid_pool_props(props);
    pthread_mutex_unlock(&lock);
    if (!supported)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (!valid)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemoryPool p = calloc(1, sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->device = props->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? props->location.id : -1;
    p->props = *props;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    p->created = true;
    pthread_mutex_lock(&lock);
    CUresult result = keep_pool(p);
    pthread_mutex_unlock(&lock);
    if (result == CUDA_SUCCESS)
        *pool = p;
    return result;
}

/* The real driver gives a destroyed pool's memory back once its last
 * allocation is freed; the fake keeps the pool until the next reset. */
static CUresult fake_cuMemPoolDestroy(CUmemoryPool pool)
{
    BEGIN_INITIALIZED(cuMemPoolDestroy);
    pthread_mutex_lock(&lock);
    bool ok = is_pool_locked(pool) && pool->created;
    if (ok)
        pool->destroyed = true;
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static bool any_capturing(void);

static CUresult fake_cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    BEGIN_INITIALIZED(cuMemPoolGetAttribute);
    /* As the driver: not while a stream of this thread captures (every
     * capture here is taken as one of this thread, in the global mode). */
    if (any_capturing())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = is_pool_locked(pool);
    cuuint64_t v = 0;
    int flag = 0;
    if (ok) {
        switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
            flag = pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
            break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: v = pool->release_threshold; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: v = pool->used; break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH: v = pool->used_high; break;
        default: ok = false; break;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    if (attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)
        memcpy(value, &flag, sizeof flag);
    else
        memcpy(value, &v, sizeof v);
    return CUDA_SUCCESS;
}

int fake_cuda_pool_info(void *pool, fake_cuda_pool *out)
{
    pthread_mutex_lock(&lock);
    CUmemoryPool p = pool;
    bool known = is_pool_locked(p);
    for (size_t i = 0; i < ncreated_pools && !known; i++)
        known = created_pools[i] == p;
    if (known) {
        out->alloc_type = (int)p->props.allocType;
        out->handle_types = (int)p->props.handleTypes;
        out->location_type = (int)p->props.location.type;
        out->location_id = p->props.location.id;
        out->max_size = p->props.maxSize;
        out->release_threshold = p->release_threshold;
        out->used = p->used;
        out->created = p->created;
        out->destroyed = p->destroyed;
    }
    pthread_mutex_unlock(&lock);
    return known;
}

long fake_cuda_live_pools(void)
{
    pthread_mutex_lock(&lock);
    long n = 0;
    for (size_t i = 0; i < ncreated_pools; i++)
        n += !created_pools[i]->destroyed;
    pthread_mutex_unlock(&lock);
    return n;
}

void fake_cuda_set_host_numa_id(int id)
{
    pthread_mutex_lock(&lock);
    host_numa_id = id;
    pthread_mutex_unlock(&lock);
}

static CUresult fake_cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    BEGIN_INITIALIZED(cuDeviceGetMemPool);
    if (pool == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = valid_device(dev), supported = pools_supported != 0;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!supported)
        return CUDA_ERROR_NOT_SUPPORTED;
    *pool = &pools[dev];
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    BEGIN_INITIALIZED(cuMemPoolSetAttribute);
    if (any_capturing())
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (!is_pool(pool) || value == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        memcpy(&pool->release_threshold, value, sizeof(cuuint64_t));
    else if (attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)
        memcpy(&pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES], value,
               sizeof(int));
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                                             CUstream stream)
{
    BEGIN_INITIALIZED(cuMemAllocFromPoolAsync);
    note_stream(E_cuMemAllocFromPoolAsync, stream);
    if (dptr == NULL || size == 0 || !is_pool(pool))
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* The memory a pool of each kind gives: device memory of its device,
     * pinned host memory, or managed memory, as cuPointerGetAttributes
     * reports them; the host and managed kinds belong to the current
     * context's device. A pool with a maximum size refuses to grow past
     * it. */
    pthread_mutex_lock(&lock);
    bool managed = pool->props.allocType == CU_MEM_ALLOCATION_TYPE_MANAGED;
    bool host = !managed && pool->props.location.type != CU_MEM_LOCATION_TYPE_DEVICE;
    bool full = pool->props.maxSize != 0 && pool->used + size > pool->props.maxSize;
    pthread_mutex_unlock(&lock);
    void *m = full ? NULL : backing(size);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_cuda_range r = {(uintptr_t)m,
                         size,
                         host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
                         managed,
                         managed || host ? current->device : pool->device,
                         (uintptr_t)m,
                         pool};
    pthread_mutex_lock(&lock);
    add(&r, POOL_ALLOC, m);
    pool->used += size;
    if (pool->used > pool->used_high)
        pool->used_high = pool->used;
    pthread_mutex_unlock(&lock);
    *dptr = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemFreeAsync);
    note_stream(E_cuMemFreeAsync, stream);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    /* While a pool allocation is mapped by an importer, a free of its
     * address is the importer's (the exporter must outlive its importers,
     * as the driver requires). */
    range *x = find((uintptr_t)dptr);
    bool ok;
    if (x != NULL && x->r.begin == (uintptr_t)dptr && x->how == POOL_ALLOC && x->mappings > 0) {
        x->mappings--;
        ok = true;
    } else {
        ok = remove_allocation((uintptr_t)dptr, POOL_ALLOC, MANAGED_ALLOC);
    }
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Whether a copy may touch the bytes [p, p + n): inside one known range,
 * or in none (the test's own host memory) without reaching into one.
 * Assumes: lock held. */
static bool touchable(uintptr_t p, size_t n)
{
    const range *x = find(p);
    if (x != NULL)
        return n <= x->r.size - (p - x->r.begin);
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i].r.begin > p && ranges[i].r.begin - p < n)
            return false;
    return true;
}

/* A DMA of size bytes: moved when fake_cuda_move_bytes asked for it (both
 * ranges must then be memory the fake may touch). */
static CUresult dma(CUdeviceptr dst, CUdeviceptr src, size_t size)
{
    pthread_mutex_lock(&lock);
    bool move = moving && size > 0;
    bool ok = !move || (dst != 0 && src != 0 && touchable((uintptr_t)dst, size) &&
                        touchable((uintptr_t)src, size));
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    if (move)
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, size);
    return CUDA_SUCCESS;
}

/* Record a cuMemcpyAsync or memset call as the last one. */
static void note_memop(int e, CUdeviceptr dst, CUdeviceptr src, unsigned int value, size_t count,
                       CUstream stream)
{
    int device = current != NULL ? current->device : -1;
    fake_cuda_memop m = {{0}, (uintptr_t)dst, (uintptr_t)src, value, count, stream, device};
    snprintf(m.function, sizeof m.function, "%s", entry_names[e]);
    pthread_mutex_lock(&lock);
    last_memop = m;
    memop_done = true;
    pthread_mutex_unlock(&lock);
}

int fake_cuda_last_memop(fake_cuda_memop *out)
{
    pthread_mutex_lock(&lock);
    int any = memop_done;
    if (any)
        *out = last_memop;
    pthread_mutex_unlock(&lock);
    return any;
}

static CUresult fake_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemcpyAsync);
    note_stream(E_cuMemcpyAsync, stream);
    note_memop(E_cuMemcpyAsync, dst, src, 0, size, stream);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    return dma(dst, src, size);
}

/* A memset of count elements of size bytes each, all value: written when
 * fake_cuda_move_bytes asked for it; the address must be aligned to the
 * element size, as the driver requires. */
static CUresult memset_elements(int e, CUdeviceptr dst, unsigned int value, size_t size,
                                size_t count, CUstream stream)
{
    note_stream(e, stream);
    note_memop(e, dst, 0, value, count, stream);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (dst % size != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool move = moving && count > 0;
    bool ok = !move || (dst != 0 && touchable((uintptr_t)dst, count * size));
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned char element[4];
    unsigned short half = (unsigned short)value;
    unsigned char byte = (unsigned char)value;
    memcpy(element, size == 1 ? (void *)&byte : size == 2 ? (void *)&half : (void *)&value, size);
    for (size_t i = 0; move && i < count; i++)
        memcpy((unsigned char *)(uintptr_t)dst + i * size, element, size);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count,
                                     CUstream stream)
{
    BEGIN_INITIALIZED(cuMemsetD8Async);
    return memset_elements(E_cuMemsetD8Async, dst, value, 1, count, stream);
}

static CUresult fake_cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                                      CUstream stream)
{
    BEGIN_INITIALIZED(cuMemsetD16Async);
    return memset_elements(E_cuMemsetD16Async, dst, value, 2, count, stream);
}

static CUresult fake_cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count,
                                      CUstream stream)
{
    BEGIN_INITIALIZED(cuMemsetD32Async);
    return memset_elements(E_cuMemsetD32Async, dst, value, 4, count, stream);
}

static CUresult fake_cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                       CUcontext src_ctx, size_t size, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemcpyPeerAsync);
    note_stream(E_cuMemcpyPeerAsync, stream);
    if (dst_ctx == NULL || src_ctx == NULL || !is_context(dst_ctx) || !is_context(src_ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return dma(dst, src, size);
}

/* The first byte of one side of a two-dimensional copy. */
static uintptr_t side_start(CUmemorytype type, const void *host, CUdeviceptr device, size_t x,
                            size_t y, size_t pitch)
{
    uintptr_t base = type == CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)device;
    return base + x + y * pitch;
}

static CUresult fake_cuMemcpy2DAsync(const CUDA_MEMCPY2D *c, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemcpy2DAsync);
    note_stream(E_cuMemcpy2DAsync, stream);
    if (c == NULL || c->WidthInBytes > c->srcPitch || c->WidthInBytes > c->dstPitch)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    bool too_wide = c->srcPitch > (size_t)max_pitch || c->dstPitch > (size_t)max_pitch;
    bool move = moving && c->WidthInBytes > 0 && c->Height > 0;
    uintptr_t s = side_start(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY,
                             c->srcPitch);
    uintptr_t d = side_start(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY,
                             c->dstPitch);
    bool ok = !move ||
              (s != 0 && d != 0 && touchable(s, (c->Height - 1) * c->srcPitch + c->WidthInBytes) &&
               touchable(d, (c->Height - 1) * c->dstPitch + c->WidthInBytes));
    pthread_mutex_unlock(&lock);
    if (too_wide || !ok)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t r = 0; move && r < c->Height; r++)
        memmove((void *)(d + r * c->dstPitch), (const void *)(s + r * c->srcPitch),
                c->WidthInBytes);
    return CUDA_SUCCESS;
}

/* Modules and their functions. A module belongs to the device of the
 * context it was loaded in; its functions are freed with it. */
typedef struct fake_function fake_function;

struct CUmod_st {
    int device;
    fake_function *functions;
};

struct fake_function {
    CUmodule module;
    fake_function *next;
    char name[128];
};

static long live_modules;

#define FATBIN_MAGIC 0xBA55ED50u

static CUresult fake_cuModuleLoadData(CUmodule *module, const void *image)
{
    BEGIN_INITIALIZED(cuModuleLoadData);
    uint32_t magic = 0;
    if (module == NULL || image == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    memcpy(&magic, image, sizeof magic);
    if (magic != FATBIN_MAGIC)
        return CUDA_ERROR_INVALID_IMAGE;
    CUmodule m = calloc(1, sizeof *m);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->device = current->device;
    pthread_mutex_lock(&lock);
    live_modules++;
    pthread_mutex_unlock(&lock);
    *module = m;
    return CUDA_SUCCESS;
}

static CUresult fake_cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name)
{
    BEGIN_INITIALIZED(cuModuleGetFunction);
    if (fn == NULL || module == NULL || name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (strncmp(name, "strided_copy_", 13) != 0 ||
        strlen(name) >= sizeof((fake_function *)NULL)->name)
        return CUDA_ERROR_NOT_FOUND;
    fake_function *f = calloc(1, sizeof *f);
    if (f == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    f->module = module;
    strcpy(f->name, name);
    pthread_mutex_lock(&lock);
    f->next = module->functions;
    module->functions = f;
    pthread_mutex_unlock(&lock);
    *fn = (CUfunction)(void *)f;
    return CUDA_SUCCESS;
}

static CUresult fake_cuModuleUnload(CUmodule module)
{
    BEGIN_INITIALIZED(cuModuleUnload);
    if (module == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    while (module->functions != NULL) {
        fake_function *f = module->functions;
        module->functions = f->next;
        free(f);
    }
    free(module);
    pthread_mutex_lock(&lock);
    live_modules--;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

long fake_cuda_live_modules(void)
{
    pthread_mutex_lock(&lock);
    long n = live_modules;
    pthread_mutex_unlock(&lock);
    return n;
}

/* A launch is checked the way the driver checks it: a function of a module
 * of the current context's device, a grid and a block that exist, and
 * parameters. It runs nothing. */
static CUresult fake_cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy,
                                    unsigned int gz, unsigned int bx, unsigned int by,
                                    unsigned int bz, unsigned int shared, CUstream stream,
                                    void **params, void **extra)
{
    BEGIN_INITIALIZED(cuLaunchKernel);
    note_stream(E_cuLaunchKernel, stream);
    const fake_function *f = (const fake_function *)(void *)fn;
    if (f == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (f->module->device != current->device)
        return CUDA_ERROR_INVALID_HANDLE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 ||
        (unsigned long)bx * by * bz > 1024 || gy > 65535 || gz > 65535 ||
        (params == NULL && extra == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    fake_cuda_launch l;
    memset(&l, 0, sizeof l);
    strcpy(l.function, f->name);
    l.grid[0] = gx;
    l.grid[1] = gy;
    l.grid[2] = gz;
    l.block[0] = bx;
    l.block[1] = by;
    l.block[2] = bz;
    l.shared_bytes = shared;
    l.stream = stream;
    l.device = f->module->device;
    if (params != NULL && params[0] != NULL)
        memcpy(l.args, params[0], sizeof l.args);
    pthread_mutex_lock(&lock);
    last_launch = l;
    launched = true;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

int fake_cuda_last_launch(fake_cuda_launch *out)
{
    pthread_mutex_lock(&lock);
    int any = launched;
    if (any)
        *out = last_launch;
    pthread_mutex_unlock(&lock);
    return any;
}

/* The driver's rules for a tiled tensor map (cuda.h's documentation of
 * cuTensorMapEncodeTiled). */
static bool valid_tensor_map(const CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                             const void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                             const cuuint32_t *box, const cuuint32_t *steps,
                             CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                             CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    static const int sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
    if (map == NULL || (uintptr_t)map % 64 != 0 || (unsigned)type > 12 || rank < 1 || rank > 5 ||
        (unsigned)interleave > 2 || (unsigned)swizzle > 3 || (unsigned)l2 > 3 ||
        (unsigned)oob > 1 || dims == NULL || box == NULL || steps == NULL ||
        (rank > 1 && strides == NULL))
        return false;
    uint64_t align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    if ((uintptr_t)address % align != 0)
        return false;
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
        return false;
    for (cuuint32_t i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > (UINT64_C(1) << 32) || box[i] < 1 || box[i] > 256 ||
            steps[i] < 1 || steps[i] > 8)
            return false;
        if (i > 0 && (strides[i - 1] % align != 0 || strides[i - 1] >= (UINT64_C(1) << 40)))
            return false;
    }
    uint64_t inner = (uint64_t)box[0] * (uint64_t)sizes[type];
    if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE &&
        (inner % 16 != 0 || (swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner > (16u << swizzle))))
        return false;
    if (interleave == CU_TENSOR_MAP_INTERLEAVE_32B && swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
        return false;
    bool floating = type >= CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE || floating;
}

static CUresult fake_cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *steps, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    BEGIN_INITIALIZED(cuTensorMapEncodeTiled);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!valid_tensor_map(map, type, rank, address, dims, strides, box, steps, interleave, swizzle,
                          l2, oob))
        return CUDA_ERROR_INVALID_VALUE;
    fake_cuda_tensor_map t;
    memset(&t, 0, sizeof t);
    t.address = (uintptr_t)address;
    uint64_t words[16] = {t.address};
    for (cuuint32_t i = 0; i < rank; i++) {
        t.global_dim[i] = dims[i];
        t.box_dim[i] = box[i];
        t.element_strides[i] = steps[i];
        if (i > 0)
            t.global_strides[i - 1] = strides[i - 1];
        words[1 + i] = dims[i];
        if (i > 0)
            words[5 + i] = strides[i - 1];
        words[10] |= (uint64_t)box[i] << (12 * i);
        words[11] |= (uint64_t)steps[i] << (4 * i);
    }
    t.data_type = (int)type;
    t.rank = (int)rank;
    t.interleave = (int)interleave;
    t.swizzle = (int)swizzle;
    t.l2_promotion = (int)l2;
    t.oob_fill = (int)oob;
    t.device = current->device;
    words[12] = (uint64_t)type | (uint64_t)rank << 8 | (uint64_t)interleave << 16 |
                (uint64_t)swizzle << 24 | (uint64_t)l2 << 32 | (uint64_t)oob << 40;
    words[13] = (uint64_t)t.device;
    pthread_mutex_lock(&lock);
    words[14] = (uint64_t)calls[E_cuTensorMapEncodeTiled];
    memcpy(t.bytes, words, sizeof t.bytes);
    memcpy(map, words, sizeof words);
    last_tensor_map = t;
    tensor_map_done = true;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* Copy size bytes of a record into out under the lock, when *done says
 * there is one; returns *done. */
static int copy_record(const bool *done, const void *record, void *out, size_t size)
{
    pthread_mutex_lock(&lock);
    bool any = *done;
    if (any)
        memcpy(out, record, size);
    pthread_mutex_unlock(&lock);
    return any;
}

int fake_cuda_last_tensor_map(fake_cuda_tensor_map *out)
{
    return copy_record(&tensor_map_done, &last_tensor_map, out, sizeof *out);
}

/* Whether a managed-memory entry point may be called now: a current
 * context. */
static CUresult need_context(void)
{
    return current == NULL ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

/* The managed range that holds [p, p + n), n > 0; NULL when there is none
 * (memory that is not managed, or a range past the allocation's end).
 * Assumes: lock held. */
static range *managed_range(uintptr_t p, size_t n)
{
    range *x = find(p);
    if (x == NULL || !x->r.is_managed || n == 0 || n > x->r.size - (p - x->r.begin))
        return NULL;
    return x;
}

/* Whether loc is a location the driver takes: any of the four kinds
 * (all true), or a device or the host. CUDA_ERROR_INVALID_DEVICE for a
 * device that does not exist. */
static CUresult check_location(CUmemLocation loc, bool all)
{
    switch (loc.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: {
        pthread_mutex_lock(&lock);
        bool ok = valid_device(loc.id);
        pthread_mutex_unlock(&lock);
        return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
    }
    case CU_MEM_LOCATION_TYPE_HOST: return CUDA_SUCCESS;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        return all && loc.id >= 0 && loc.id < FAKE_NUMA_NODES ? CUDA_SUCCESS
                                                              : CUDA_ERROR_INVALID_VALUE;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
        return all ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

/* The location an ordinal of the older entry points names. */
static CUmemLocation ordinal_location(CUdevice device)
{
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, device};
    if (device == CU_DEVICE_CPU)
        loc = (CUmemLocation){CU_MEM_LOCATION_TYPE_HOST, 0};
    return loc;
}

static void note_managed_op(int e, CUdeviceptr p, size_t n, int advice, CUmemLocation loc,
                            CUstream stream)
{
    fake_cuda_managed_op m;
    memset(&m, 0, sizeof m);
    snprintf(m.function, sizeof m.function, "%s", entry_names[e]);
    m.address = (uintptr_t)p;
    m.size = n;
    m.advice = advice;
    m.location_type = (int)loc.type;
    m.location_id = loc.id;
    m.stream = stream;
    m.device = current != NULL ? current->device : -1;
    pthread_mutex_lock(&lock);
    last_managed_op = m;
    managed_op_done = true;
    pthread_mutex_unlock(&lock);
}

/* The calling thread's NUMA node stands for the fake's node 0. */
static CUmemLocation resolved(CUmemLocation loc)
{
    if (loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
        loc = (CUmemLocation){CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    if (loc.type == CU_MEM_LOCATION_TYPE_HOST)
        loc.id = 0;
    return loc;
}

/* Apply advice with its location (checked) to the range. Assumes: lock
 * held. */
static void apply_advice(range *x, CUmem_advise advice, CUmemLocation loc)
{
    int who = loc.type == CU_MEM_LOCATION_TYPE_HOST ? -1 : loc.id;
    switch (advice) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY: x->read_mostly = 1; break;
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY: x->read_mostly = 0; break;
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: x->preferred = resolved(loc); break;
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
        x->preferred = (CUmemLocation){CU_MEM_LOCATION_TYPE_INVALID, 0};
        break;
    case CU_MEM_ADVISE_SET_ACCESSED_BY: {
        bool there = false;
        for (int i = 0; i < x->n_accessed; i++)
            there = there || x->accessed[i] == who;
        if (!there && x->n_accessed < MAX_ACCESSED)
            x->accessed[x->n_accessed++] = who;
        break;
    }
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
        for (int i = 0; i < x->n_accessed; i++)
            if (x->accessed[i] == who) {
                memmove(&x->accessed[i], &x->accessed[i + 1],
                        (size_t)(x->n_accessed - i - 1) * sizeof x->accessed[0]);
                x->n_accessed--;
                break;
            }
        break;
    }
}

/* Both generations of cuMemAdvise: the location is checked by the advice
 * that uses it, ignored by the others. */
static CUresult advise(int e, CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
    CUresult result = need_context();
    if (result != CUDA_SUCCESS)
        return result;
    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    if (advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION)
        result = check_location(loc, true);
    else if (advice == CU_MEM_ADVISE_SET_ACCESSED_BY || advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        result = check_location(loc, false);
    if (result != CUDA_SUCCESS)
        return result;
    pthread_mutex_lock(&lock);
    range *x = managed_range((uintptr_t)p, n);
    if (x != NULL)
        apply_advice(x, advice, loc);
    pthread_mutex_unlock(&lock);
    if (x == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    note_managed_op(e, p, n, (int)advice, loc, NULL);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice device)
{
    BEGIN_INITIALIZED(cuMemAdvise);
    return advise(E_cuMemAdvise, p, n, advice, ordinal_location(device));
}

static CUresult fake_cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc)
{
    BEGIN_INITIALIZED(cuMemAdvise_v2);
    return advise(E_cuMemAdvise_v2, p, n, advice, loc);
}

/* A prefetch of a range to a location (checked here). */
static CUresult prefetch(int e, CUdeviceptr p, size_t n, CUmemLocation loc, CUstream stream)
{
    note_stream(e, stream);
    CUresult result = need_context();
    if (result == CUDA_SUCCESS)
        result = check_location(loc, true);
    if (result != CUDA_SUCCESS)
        return result;
    pthread_mutex_lock(&lock);
    range *x = managed_range((uintptr_t)p, n);
    if (x != NULL)
        x->last_prefetch = resolved(loc);
    pthread_mutex_unlock(&lock);
    if (x == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    note_managed_op(e, p, n, 0, loc, stream);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice device, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemPrefetchAsync);
    return prefetch(E_cuMemPrefetchAsync, p, n, ordinal_location(device), stream);
}

static CUresult fake_cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc,
                                           unsigned int flags, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemPrefetchAsync_v2);
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return prefetch(E_cuMemPrefetchAsync_v2, p, n, loc, stream);
}

/* Discard count ranges and, with locations, prefetch them there: every
 * range and location is checked before any is touched. */
static CUresult discard(int e, CUdeviceptr *ptrs, size_t *sizes, size_t count, CUmemLocation *locs,
                        size_t *loc_indices, size_t n_locs, unsigned long long flags,
                        CUstream stream)
{
    note_stream(e, stream);
    CUresult result = need_context();
    if (result != CUDA_SUCCESS)
        return result;
    if (ptrs == NULL || sizes == NULL || count == 0 || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (e == E_cuMemDiscardAndPrefetchBatchAsync) {
        /* Location k applies from copy loc_indices[k] on: the indices
         * start at 0 and ascend. */
        if (locs == NULL || loc_indices == NULL || n_locs == 0 || n_locs > count ||
            loc_indices[0] != 0)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t k = 0; k < n_locs; k++) {
            if (k > 0 && loc_indices[k] <= loc_indices[k - 1])
                return CUDA_ERROR_INVALID_VALUE;
            if ((result = check_location(locs[k], true)) != CUDA_SUCCESS)
                return result;
        }
    }
    pthread_mutex_lock(&lock);
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++)
        ok = managed_range((uintptr_t)ptrs[i], sizes[i]) != NULL;
    size_t k = 0;
    for (size_t i = 0; i < count && ok; i++) {
        range *x = managed_range((uintptr_t)ptrs[i], sizes[i]);
        x->discards++;
        if (moving)
            memset((void *)(uintptr_t)ptrs[i], 0xdd, sizes[i]);
        if (locs != NULL) {
            while (k + 1 < n_locs && loc_indices[k + 1] <= i)
                k++;
            x->last_prefetch = resolved(locs[k]);
        }
    }
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemLocation none = {CU_MEM_LOCATION_TYPE_INVALID, 0};
    note_managed_op(e, ptrs[count - 1], sizes[count - 1], 0, locs != NULL ? locs[k] : none, stream);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemDiscardBatchAsync(CUdeviceptr *ptrs, size_t *sizes, size_t count,
                                            unsigned long long flags, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemDiscardBatchAsync);
    return discard(E_cuMemDiscardBatchAsync, ptrs, sizes, count, NULL, NULL, 0, flags, stream);
}

static CUresult fake_cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *ptrs, size_t *sizes,
                                                       size_t count, CUmemLocation *locs,
                                                       size_t *loc_indices, size_t n_locs,
                                                       unsigned long long flags, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemDiscardAndPrefetchBatchAsync);
    return discard(E_cuMemDiscardAndPrefetchBatchAsync, ptrs, sizes, count, locs, loc_indices,
                   n_locs, flags, stream);
}

/* One 4-byte value of a range attribute. */
static CUresult range_value(const range *x, CUmem_range_attribute attribute, int *out)
{
    switch (attribute) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: *out = x->read_mostly; return CUDA_SUCCESS;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION: {
        /* The older attributes name devices by ordinal and every host
         * location CU_DEVICE_CPU. */
        CUmemLocation loc = attribute == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION
                                ? x->preferred
                                : x->last_prefetch;
        *out = loc.type == CU_MEM_LOCATION_TYPE_DEVICE    ? loc.id
               : loc.type == CU_MEM_LOCATION_TYPE_INVALID ? CU_DEVICE_INVALID
                                                          : CU_DEVICE_CPU;
        return CUDA_SUCCESS;
    }
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
        if (driver_version() < 12020)
            return CUDA_ERROR_INVALID_VALUE;
        bool preferred = attribute == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
                         attribute == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID;
        CUmemLocation loc = preferred ? x->preferred : x->last_prefetch;
        bool type = attribute == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE ||
                    attribute == CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE;
        *out = type ? (int)loc.type : loc.id;
        return CUDA_SUCCESS;
    }
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult fake_cuMemRangeGetAttribute(void *data, size_t size,
                                            CUmem_range_attribute attribute, CUdeviceptr p,
                                            size_t n)
{
    BEGIN_INITIALIZED(cuMemRangeGetAttribute);
    if (data == NULL || size == 0 || size % 4 != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (attribute != CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY && size != 4)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    const range *x = managed_range((uintptr_t)p, n);
    range copy;
    if (x != NULL)
        copy = *x;
    pthread_mutex_unlock(&lock);
    if (x == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (attribute == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) {
        /* As many as fit, in the order advised, the rest padded. */
        int *out = data;
        for (size_t i = 0; i < size / 4; i++)
            out[i] = i < (size_t)copy.n_accessed ? copy.accessed[i] : CU_DEVICE_INVALID;
        return CUDA_SUCCESS;
    }
    int v = 0;
    CUresult result = range_value(&copy, attribute, &v);
    if (result == CUDA_SUCCESS)
        memcpy(data, &v, sizeof v);
    return result;
}

int fake_cuda_managed_info(uintptr_t address, fake_cuda_managed *out)
{
    pthread_mutex_lock(&lock);
    const range *x = find(address);
    if (x != NULL) {
        memset(out, 0, sizeof *out);
        out->read_mostly = x->read_mostly;
        out->preferred_type = (int)x->preferred.type;
        out->preferred_id = x->preferred.id;
        out->n_accessed = x->n_accessed;
        memcpy(out->accessed, x->accessed, sizeof x->accessed);
        out->prefetch_type = (int)x->last_prefetch.type;
        out->prefetch_id = x->last_prefetch.id;
        out->discards = x->discards;
    }
    pthread_mutex_unlock(&lock);
    return x != NULL;
}

int fake_cuda_last_managed_op(fake_cuda_managed_op *out)
{
    return copy_record(&managed_op_done, &last_managed_op, out, sizeof *out);
}

/* The pool's own device: a device pool's, or -1 for a host pool. */
static int pool_device(CUmemoryPool pool)
{
    return pool->props.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? pool->props.location.id : -1;
}

static CUresult fake_cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    BEGIN_INITIALIZED(cuMemPoolSetAccess);
    if (map == NULL && count > 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult result = is_pool_locked(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count && result == CUDA_SUCCESS; i++) {
        int d = map[i].location.id, owner = pool_device(pool);
        if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            (map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
             map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
             map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) ||
            d == owner)
            result = CUDA_ERROR_INVALID_VALUE;
        else if (!valid_device(d) || (owner >= 0 && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                                      (d >= FAKE_PEER_DEVICES || owner >= FAKE_PEER_DEVICES)))
            result = CUDA_ERROR_INVALID_DEVICE;
    }
    for (size_t i = 0; i < count && result == CUDA_SUCCESS; i++)
        pool->access[map[i].location.id] = map[i].flags;
    pthread_mutex_unlock(&lock);
    return result;
}

static CUresult fake_cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool,
                                        CUmemLocation *location)
{
    BEGIN_INITIALIZED(cuMemPoolGetAccess);
    if (flags == NULL || location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    CUresult result = CUDA_SUCCESS;
    if (!is_pool_locked(pool) || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
        result = CUDA_ERROR_INVALID_VALUE;
    else if (!valid_device(location->id))
        result = CUDA_ERROR_INVALID_DEVICE;
    else if (location->id == pool_device(pool))
        *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    else
        *flags = pool->access[location->id];
    pthread_mutex_unlock(&lock);
    return result;
}

int fake_cuda_pool_access(void *pool, int device)
{
    pthread_mutex_lock(&lock);
    CUmemoryPool p = pool;
    bool known = is_pool_locked(p);
    for (size_t i = 0; i < ncreated_pools && !known; i++)
        known = created_pools[i] == p;
    int flags = -1;
    if (known && device >= 0 && device < MAX_DEVICES)
        flags = device == pool_device(p) ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : p->access[device];
    pthread_mutex_unlock(&lock);
    return flags;
}

void fake_cuda_set_capturing(void *stream, int on)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_CAPTURING; i++)
        if (capturing[i] == stream)
            capturing[i] = NULL;
    for (int i = 0; i < MAX_CAPTURING && on && stream != NULL; i++)
        if (capturing[i] == NULL) {
            capturing[i] = stream;
            break;
        }
    pthread_mutex_unlock(&lock);
}

static bool any_capturing(void)
{
    pthread_mutex_lock(&lock);
    bool yes = false;
    for (int i = 0; i < MAX_CAPTURING; i++)
        yes = yes || capturing[i] != NULL;
    pthread_mutex_unlock(&lock);
    return yes;
}

static bool is_capturing(CUstream stream)
{
    pthread_mutex_lock(&lock);
    bool yes = false;
    for (int i = 0; i < MAX_CAPTURING && stream != NULL; i++)
        yes = yes || capturing[i] == (void *)stream;
    pthread_mutex_unlock(&lock);
    return yes;
}

static CUresult fake_cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status)
{
    BEGIN_INITIALIZED(cuStreamIsCapturing);
    note_stream(E_cuStreamIsCapturing, stream);
    if (status == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if ((stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) &&
        current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    *status = is_capturing(stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                   : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

/* A location hint: none (INVALID), or a location the driver takes. */
static bool valid_hint(CUmemLocation loc)
{
    return loc.type == CU_MEM_LOCATION_TYPE_INVALID || check_location(loc, true) == CUDA_SUCCESS;
}

static CUresult fake_cuMemcpyWithAttributesAsync(CUdeviceptr dst, CUdeviceptr src, size_t size,
                                                 CUmemcpyAttributes *attr, CUstream stream)
{
    BEGIN_INITIALIZED(cuMemcpyWithAttributesAsync);
    note_stream(E_cuMemcpyWithAttributesAsync, stream);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (attr == NULL || attr->srcAccessOrder < CU_MEMCPY_SRC_ACCESS_ORDER_STREAM ||
        attr->srcAccessOrder > CU_MEMCPY_SRC_ACCESS_ORDER_ANY ||
        (attr->flags & ~(unsigned int)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE) != 0 ||
        !valid_hint(attr->srcLocHint) || !valid_hint(attr->dstLocHint))
        return CUDA_ERROR_INVALID_VALUE;
    /* The legacy default stream synchronizes with every other: the driver
     * refuses it here. */
    if (stream == NULL || stream == CU_STREAM_LEGACY)
        return CUDA_ERROR_INVALID_VALUE;
    if (is_capturing(stream))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    note_memop(E_cuMemcpyWithAttributesAsync, dst, src, 0, size, stream);
    CUresult result = dma(dst, src, size);
    if (result != CUDA_SUCCESS)
        return result;
    fake_cuda_copy_attributes a = {(int)attr->srcAccessOrder, (int)attr->srcLocHint.type,
                                   attr->srcLocHint.id,       (int)attr->dstLocHint.type,
                                   attr->dstLocHint.id,       attr->flags};
    pthread_mutex_lock(&lock);
    last_copy_attributes = a;
    copy_attributes_done = true;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

int fake_cuda_last_copy_attributes(fake_cuda_copy_attributes *out)
{
    return copy_record(&copy_attributes_done, &last_copy_attributes, out, sizeof *out);
}

/* Inter-process sharing. The fake has one process, so an importer is the
 * same process under another name: what it maps is the exporter's own
 * memory, at the same address. A pool exported to a file descriptor is a
 * memfd holding the pool's identity; export data and legacy handles name
 * an allocation by its serial number, so one freed since (or never made)
 * is refused (CUDA_ERROR_INVALID_VALUE), as the driver refuses a stale
 * handle. Only pools created with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
 * export; only device memory from cuMemAlloc-like ranges (not a pool's,
 * not managed) has a legacy handle. */
#define FAKE_POOL_MAGIC 0x4c4f4f50454b4146ull    /* "FAKEPOOL" */
#define FAKE_IPC_MEM_MAGIC 0x4d4350494b4146ull   /* "FAKIPCM" */
#define FAKE_IPC_EVENT_MAGIC 0x454350494b4146ull /* "FAKIPCE" */

typedef struct fake_payload {
    uint64_t magic;
    uint64_t serial;
    uint64_t begin;
    uint64_t pool; /* the exporting pool, for pool export data */
} fake_payload;

static CUresult fake_cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                                      CUmemAllocationHandleType type,
                                                      unsigned long long flags)
{
    BEGIN_INITIALIZED(cuMemPoolExportToShareableHandle);
    if (handle_out == NULL || flags != 0 || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    bool ok = is_pool_locked(pool) && pool->created && pool->imported_from == NULL &&
              pool->props.handleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if (ok)
        pool->exported = true;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = memfd_create("fake_cuda_pool", MFD_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t identity[2] = {FAKE_POOL_MAGIC, (uint64_t)(uintptr_t)pool};
    if (pwrite(fd, identity, sizeof identity, 0) != (ssize_t)sizeof identity) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(handle_out, &fd, sizeof fd);
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                                        CUmemAllocationHandleType type,
                                                        unsigned long long flags)
{
    BEGIN_INITIALIZED(cuMemPoolImportFromShareableHandle);
    if (pool_out == NULL || flags != 0 || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = (int)(intptr_t)handle;
    uint64_t identity[2] = {0, 0};
    if (fd < 0 || pread(fd, identity, sizeof identity, 0) != (ssize_t)sizeof identity ||
        identity[0] != FAKE_POOL_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemoryPool from = (CUmemoryPool)(uintptr_t)identity[1];
    pthread_mutex_lock(&lock);
    bool ok = is_pool_locked(from) && from->created && from->imported_from == NULL;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    CUmemoryPool p = calloc(1, sizeof *p);
    if (p == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    *p = *from;
    memset(p->access, 0, sizeof p->access);
    p->used = p->used_high = 0;
    p->destroyed = false;
    p->imported_from = from;
    CUresult result = keep_pool(p);
    pthread_mutex_unlock(&lock);
    if (result == CUDA_SUCCESS)
        *pool_out = p;
    return result;
}

static CUresult fake_cuMemPoolExportPointer(CUmemPoolPtrExportData *data, CUdeviceptr ptr)
{
    BEGIN_INITIALIZED(cuMemPoolExportPointer);
    if (data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    range *x = find((uintptr_t)ptr);
    CUmemoryPool pool = x != NULL ? x->r.mempool : NULL;
    bool ok = x != NULL && x->r.begin == (uintptr_t)ptr && x->how == POOL_ALLOC &&
              pool->props.handleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
              (pool->exported || pool->imported_from != NULL);
    fake_payload p = {FAKE_POOL_MAGIC, ok ? x->serial : 0, (uint64_t)ptr,
                      (uint64_t)(uintptr_t)pool};
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    memset(data, 0, sizeof *data);
    memcpy(data->reserved, &p, sizeof p);
    return CUDA_SUCCESS;
}

/* The live range of serial number serial made the way how says, or NULL.
 * Assumes: lock held. */
static range *find_serial(uint64_t serial, bool pool)
{
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i].serial == serial && (ranges[i].how == POOL_ALLOC) == pool)
            return &ranges[i];
    return NULL;
}

static CUresult fake_cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                            CUmemPoolPtrExportData *data)
{
    BEGIN_INITIALIZED(cuMemPoolImportPointer);
    if (ptr_out == NULL || data == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_payload p;
    memcpy(&p, data->reserved, sizeof p);
    pthread_mutex_lock(&lock);
    range *x = p.magic == FAKE_POOL_MAGIC ? find_serial(p.serial, true) : NULL;
    bool ok = is_pool_locked(pool) && pool->imported_from != NULL &&
              (uint64_t)(uintptr_t)pool->imported_from == p.pool && x != NULL &&
              x->r.begin == p.begin;
    if (ok)
        x->mappings++;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    *ptr_out = (CUdeviceptr)p.begin;
    return CUDA_SUCCESS;
}

static CUresult fake_cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr ptr)
{
    BEGIN_INITIALIZED(cuMemGetAddressRange);
    pthread_mutex_lock(&lock);
    range *x = find((uintptr_t)ptr);
    uintptr_t b = x != NULL ? x->r.begin : 0;
    size_t n = x != NULL ? x->r.size : 0;
    pthread_mutex_unlock(&lock);
    if (x == NULL)
        return CUDA_ERROR_NOT_FOUND;
    if (base != NULL)
        *base = (CUdeviceptr)b;
    if (size != NULL)
        *size = n;
    return CUDA_SUCCESS;
}

static CUresult fake_cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr ptr)
{
    BEGIN_INITIALIZED(cuIpcGetMemHandle);
    if (handle == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    range *x = find((uintptr_t)ptr);
    bool ok = x != NULL && x->r.begin == (uintptr_t)ptr && x->how != POOL_ALLOC &&
              x->r.mempool == NULL && x->r.memory_type == CU_MEMORYTYPE_DEVICE && !x->r.is_managed;
    fake_payload p = {FAKE_IPC_MEM_MAGIC, ok ? x->serial : 0, (uint64_t)ptr, 0};
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    memset(handle, 0, sizeof *handle);
    memcpy(handle->reserved, &p, sizeof p);
    return CUDA_SUCCESS;
}

static CUresult fake_cuIpcOpenMemHandle(CUdeviceptr *ptr, CUipcMemHandle handle, unsigned int flags)
{
    BEGIN_INITIALIZED(cuIpcOpenMemHandle);
    if (ptr == NULL || flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_payload p;
    memcpy(&p, handle.reserved, sizeof p);
    pthread_mutex_lock(&lock);
    range *x = p.magic == FAKE_IPC_MEM_MAGIC ? find_serial(p.serial, false) : NULL;
    bool ok = x != NULL && x->r.begin == p.begin;
    if (ok)
        x->mappings++;
    pthread_mutex_unlock(&lock);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    *ptr = (CUdeviceptr)p.begin;
    return CUDA_SUCCESS;
}

static CUresult fake_cuIpcCloseMemHandle(CUdeviceptr ptr)
{
    BEGIN_INITIALIZED(cuIpcCloseMemHandle);
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    range *x = find((uintptr_t)ptr);
    bool ok = x != NULL && x->r.begin == (uintptr_t)ptr && x->how != POOL_ALLOC && x->mappings > 0;
    if (ok)
        x->mappings--;
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuIpcGetEventHandle(CUipcEventHandle *handle, CUevent event)
{
    BEGIN_INITIALIZED(cuIpcGetEventHandle);
    const fake_event *e = (const fake_event *)(void *)event;
    if (handle == NULL || e == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!(e->flags & CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE;
    fake_payload p = {FAKE_IPC_EVENT_MAGIC, e->serial, 0, 0};
    memset(handle, 0, sizeof *handle);
    memcpy(handle->reserved, &p, sizeof p);
    return CUDA_SUCCESS;
}

static CUresult fake_cuIpcOpenEventHandle(CUevent *event, CUipcEventHandle handle)
{
    BEGIN_INITIALIZED(cuIpcOpenEventHandle);
    if (event == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (current == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_payload p;
    memcpy(&p, handle.reserved, sizeof p);
    fake_event *e = calloc(1, sizeof *e);
    if (e == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    const fake_event *from = NULL;
    for (int i = 0; i < MAX_IPC_EVENTS && p.magic == FAKE_IPC_EVENT_MAGIC; i++)
        if (ipc_events[i] != NULL && ipc_events[i]->serial == p.serial)
            from = ipc_events[i];
    if (from != NULL) {
        e->recorded = from->recorded;
        e->flags = CU_EVENT_DISABLE_TIMING;
        e->serial = next_event_serial++;
        live_events++;
    }
    pthread_mutex_unlock(&lock);
    if (from == NULL) {
        free(e);
        return CUDA_ERROR_INVALID_VALUE;
    }
    *event = (CUevent)(void *)e;
    return CUDA_SUCCESS;
}

long fake_cuda_mappings(uintptr_t address)
{
    pthread_mutex_lock(&lock);
    range *x = find(address);
    long n = x != NULL && x->r.begin == address ? x->mappings : -1;
    pthread_mutex_unlock(&lock);
    return n;
}

void fake_cuda_set_ipc_handle_types(int types)
{
    pthread_mutex_lock(&lock);
    ipc_handle_types = types;
    pthread_mutex_unlock(&lock);
}

typedef struct symbol {
    const char *name;
    void (*fn)(void);
    int since; /* the CUDA version that introduced this variant */
} symbol;

#define SYMBOL(name, since)                       \
    {                                             \
#name, (void (*)(void))fake_##name, since \
    }
/* A later variant of an entry point: cuGetProcAddress gives the newest
 * variant the version asked for reaches. */
#define SYMBOL_AS(name, fn, since)       \
    {                                    \
#name, (void (*)(void))fn, since \
    }
static const symbol symbols[] = {
    SYMBOL(cuInit, 2000),
    SYMBOL(cuDriverGetVersion, 2020),
    SYMBOL(cuGetErrorName, 6000),
    SYMBOL(cuGetErrorString, 6000),
    SYMBOL(cuDeviceGetCount, 2000),
    SYMBOL(cuDeviceGet, 2000),
    SYMBOL(cuDeviceGetName, 2000),
    SYMBOL(cuDeviceGetUuid, 9020),
    SYMBOL(cuDeviceGetAttribute, 2000),
    SYMBOL(cuDevicePrimaryCtxRetain, 7000),
    SYMBOL(cuCtxGetCurrent, 4000),
    SYMBOL(cuCtxSetCurrent, 4000),
    SYMBOL(cuCtxGetDevice, 2000),
    SYMBOL(cuPointerGetAttributes, 7000),
    SYMBOL(cuStreamSynchronize, 2000),
    SYMBOL(cuEventCreate, 2000),
    SYMBOL(cuEventRecord, 2000),
    SYMBOL(cuStreamWaitEvent, 3020),
    SYMBOL(cuEventDestroy, 4000), /* cuEventDestroy_v2 */
    SYMBOL(cuEventSynchronize, 2000),
    SYMBOL(cuDeviceCanAccessPeer, 4000),
    SYMBOL(cuCtxEnablePeerAccess, 4000),
    SYMBOL(cuMemHostAlloc, 2020),
    SYMBOL(cuMemAllocHost, 3020), /* cuMemAllocHost_v2 */
    SYMBOL(cuMemFreeHost, 2000),
    SYMBOL(cuMemAllocManaged, 6000),
    SYMBOL(cuMemFree, 3020), /* cuMemFree_v2 */
    SYMBOL(cuDeviceGetMemPool, 11020),
    SYMBOL(cuMemPoolCreate, 11020),
    SYMBOL(cuMemPoolDestroy, 11020),
    SYMBOL(cuMemPoolGetAttribute, 11020),
    SYMBOL(cuMemPoolSetAttribute, 11020),
    SYMBOL(cuMemAllocFromPoolAsync, 11020),
    SYMBOL(cuMemFreeAsync, 11020),
    SYMBOL(cuMemcpyAsync, 4000),
    SYMBOL(cuMemcpy2DAsync, 3020), /* cuMemcpy2DAsync_v2 */
    SYMBOL(cuMemcpyPeerAsync, 4000),
    SYMBOL(cuMemsetD8Async, 3020),
    SYMBOL(cuMemsetD16Async, 3020),
    SYMBOL(cuMemsetD32Async, 3020),
    SYMBOL(cuModuleLoadData, 2000),
    SYMBOL(cuModuleGetFunction, 2000),
    SYMBOL(cuModuleUnload, 2000),
    SYMBOL(cuLaunchKernel, 4000),
    SYMBOL(cuTensorMapEncodeTiled, 12000),
    SYMBOL(cuMemRangeGetAttribute, 8000),
    SYMBOL(cuMemPoolSetAccess, 11020),
    SYMBOL(cuMemPoolGetAccess, 11020),
    SYMBOL(cuStreamIsCapturing, 10000),
    SYMBOL(cuMemAdvise, 8000),
    SYMBOL_AS(cuMemAdvise, fake_cuMemAdvise_v2, 12020),
    SYMBOL(cuMemPrefetchAsync, 8000),
    SYMBOL_AS(cuMemPrefetchAsync, fake_cuMemPrefetchAsync_v2, 12020),
    SYMBOL(cuMemDiscardBatchAsync, 13000),
    SYMBOL(cuMemDiscardAndPrefetchBatchAsync, 13000),
    SYMBOL(cuMemcpyWithAttributesAsync, 13020),
    SYMBOL(cuMemPoolExportToShareableHandle, 11020),
    SYMBOL(cuMemPoolImportFromShareableHandle, 11020),
    SYMBOL(cuMemPoolExportPointer, 11020),
    SYMBOL(cuMemPoolImportPointer, 11020),
    SYMBOL(cuMemGetAddressRange, 3020), /* cuMemGetAddressRange_v2 */
    SYMBOL(cuIpcGetMemHandle, 4010),
    SYMBOL(cuIpcOpenMemHandle, 11000), /* cuIpcOpenMemHandle_v2 */
    SYMBOL(cuIpcCloseMemHandle, 4010),
    SYMBOL(cuIpcGetEventHandle, 4010),
    SYMBOL(cuIpcOpenEventHandle, 4010),
};
#undef SYMBOL
#undef SYMBOL_AS

static CUresult lookup(const char *name, void **pfn, int version,
                       CUdriverProcAddressQueryResult *status)
{
    const char *hidden = getenv("FAKE_CUDA_HIDE");

    BEGIN(cuGetProcAddress);
    if (name == NULL || pfn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (version > driver_version())
        return CUDA_ERROR_INVALID_VALUE;
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (hidden != NULL && strcmp(hidden, name) == 0)
        return CUDA_SUCCESS;
    const symbol *best = NULL;
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        if (strcmp(symbols[i].name, name) != 0)
            continue;
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        if (version >= symbols[i].since && (best == NULL || symbols[i].since > best->since))
            best = &symbols[i];
    }
    if (best != NULL) {
        memcpy(pfn, &best->fn, sizeof *pfn);
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    }
    return CUDA_SUCCESS;
}

#ifndef FAKE_CUDA_V1_ONLY
CUresult cuGetProcAddress_v2(const char *symbol_name, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    (void)flags;
    CUresult result = lookup(symbol_name, pfn, cudaVersion, &found);
    if (status != NULL)
        *status = found;
    return result;
}
#endif

/* The CUDA 11 lookup: no status; a missing symbol is an error. */
CUresult cuGetProcAddress(const char *symbol_name, void **pfn, int cudaVersion, cuuint64_t flags)
{
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    (void)flags;
    CUresult result = lookup(symbol_name, pfn, cudaVersion, &found);
    if (result == CUDA_SUCCESS && found != CU_GET_PROC_ADDRESS_SUCCESS)
        return CUDA_ERROR_NOT_FOUND;
    return result;
}
