/*
 * cuda/driver.c: the CUDA driver, loaded at run time (see cuda/driver.h).
 *
 * The load runs once per process under pthread_once. Its outcome - the
 * resolved entry points, or a status with the reason it failed - is kept
 * for the life of the process, and every later strided__cuda call answers
 * from it, recording the reason again as the calling thread's message.
 * The library is never unloaded: the driver keeps process-wide state
 * (contexts, allocations) that outlives any one caller.
 */
#include "cuda/driver.h"

#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DRIVER "libcuda.so.1"

/* Primary contexts are cached for this many device ordinals; a device
 * beyond them retains its primary context on every entry (still correct,
 * the driver counts the retains). */
#define MAX_CACHED_DEVICES 128

/* Room for the reason of a failed load. */
#define REASON_CAPACITY 512

/* Room for "<call> failed: <name> (<text>)". */
#define CALL_TEXT_CAPACITY 384

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static strided__driver driver;
static strided_status load_status;
static int load_cuda_error;
static char load_reason[REASON_CAPACITY];
static atomic_bool loaded;

/* Retained primary contexts by device ordinal; NULL: not retained yet. */
static _Atomic(CUcontext) primary[MAX_CACHED_DEVICES];
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;

/* Function pointers and data pointers have the same size and
 * representation on every platform that has dlopen; POSIX requires it. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers must be pointer-sized");

/* The entry points of strided__driver and where each one goes: the symbol
 * cuGetProcAddress is asked for, at which version (the one whose signature
 * strided__driver declares), and whether the driver may lack it. cuInit and
 * cuDriverGetVersion are used only during the load. */
typedef struct entry {
    const char *name;
    size_t offset;
    int version;
    bool optional;
} entry;

/* clang-format off */
#define ENTRY(name) {#name, offsetof(strided__driver, name), STRIDED_CUDA_API_VERSION, false}
#define OPTIONAL_ENTRY(field, symbol, version) \
    {symbol, offsetof(strided__driver, field), version, true}
/* clang-format on */
static const entry entries[] = {
    ENTRY(cuGetErrorName),
    ENTRY(cuGetErrorString),
    ENTRY(cuDeviceGetCount),
    ENTRY(cuDeviceGet),
    ENTRY(cuDeviceGetName),
    ENTRY(cuDeviceGetUuid),
    ENTRY(cuDeviceGetAttribute),
    ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuCtxGetCurrent),
    ENTRY(cuCtxSetCurrent),
    ENTRY(cuCtxGetDevice),
    ENTRY(cuPointerGetAttributes),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuEventCreate),
    ENTRY(cuEventRecord),
    ENTRY(cuStreamWaitEvent),
    ENTRY(cuEventDestroy),
    ENTRY(cuEventSynchronize),
    ENTRY(cuDeviceCanAccessPeer),
    ENTRY(cuCtxEnablePeerAccess),
    ENTRY(cuMemHostAlloc),
    ENTRY(cuMemAllocHost),
    ENTRY(cuMemFreeHost),
    ENTRY(cuMemAllocManaged),
    ENTRY(cuMemFree),
    ENTRY(cuDeviceGetMemPool),
    ENTRY(cuMemPoolCreate),
    ENTRY(cuMemPoolDestroy),
    ENTRY(cuMemPoolGetAttribute),
    ENTRY(cuMemPoolSetAttribute),
    ENTRY(cuMemAllocFromPoolAsync),
    ENTRY(cuMemFreeAsync),
    ENTRY(cuMemcpyAsync),
    ENTRY(cuMemcpy2DAsync),
    ENTRY(cuMemcpyPeerAsync),
    ENTRY(cuMemsetD8Async),
    ENTRY(cuMemsetD16Async),
    ENTRY(cuMemsetD32Async),
    ENTRY(cuModuleLoadData),
    ENTRY(cuModuleGetFunction),
    ENTRY(cuModuleUnload),
    ENTRY(cuLaunchKernel),
    ENTRY(cuTensorMapEncodeTiled),
    ENTRY(cuMemRangeGetAttribute),
    ENTRY(cuMemPoolSetAccess),
    ENTRY(cuMemPoolGetAccess),
    ENTRY(cuStreamIsCapturing),
    ENTRY(cuMemPoolExportToShareableHandle),
    ENTRY(cuMemPoolImportFromShareableHandle),
    ENTRY(cuMemPoolExportPointer),
    ENTRY(cuMemPoolImportPointer),
    ENTRY(cuMemGetAddressRange),
    ENTRY(cuIpcGetMemHandle),
    ENTRY(cuIpcOpenMemHandle),
    ENTRY(cuIpcCloseMemHandle),
    ENTRY(cuIpcGetEventHandle),
    ENTRY(cuIpcOpenEventHandle),
    OPTIONAL_ENTRY(cuMemAdvise, "cuMemAdvise", STRIDED_CUDA_API_VERSION),
    OPTIONAL_ENTRY(cuMemAdvise_v2, "cuMemAdvise", STRIDED_CUDA_MEM_LOCATION_VERSION),
    OPTIONAL_ENTRY(cuMemPrefetchAsync, "cuMemPrefetchAsync", STRIDED_CUDA_API_VERSION),
    OPTIONAL_ENTRY(cuMemPrefetchAsync_v2, "cuMemPrefetchAsync", STRIDED_CUDA_MEM_LOCATION_VERSION),
    OPTIONAL_ENTRY(cuMemDiscardBatchAsync, "cuMemDiscardBatchAsync", STRIDED_CUDA_DISCARD_VERSION),
    OPTIONAL_ENTRY(cuMemDiscardAndPrefetchBatchAsync, "cuMemDiscardAndPrefetchBatchAsync",
                   STRIDED_CUDA_DISCARD_VERSION),
    OPTIONAL_ENTRY(cuMemcpyWithAttributesAsync, "cuMemcpyWithAttributesAsync",
                   STRIDED_CUDA_COPY_ATTRIBUTES_VERSION),
};
#undef ENTRY
#undef OPTIONAL_ENTRY

/* The name of the function in a call's text: "cu->cuMemFree(p)" and
 * "cuMemFree" both give "cuMemFree". STRIDED_CUDA_CHECK passes the whole
 * expression; messages name only the driver function. */
static void call_name(const char *call, char *name, size_t size)
{
    const char *end = strchr(call, '(');
    const char *begin;

    assert(size > 0);
    if (end == NULL)
        end = call + strlen(call);
    while (end > call && end[-1] == ' ')
        end--;
    begin = end;
    while (begin > call &&
           (begin[-1] == '_' || (begin[-1] >= '0' && begin[-1] <= '9') ||
            (begin[-1] >= 'a' && begin[-1] <= 'z') || (begin[-1] >= 'A' && begin[-1] <= 'Z')))
        begin--;
    if (begin == end) {
        begin = call;
        end = call + strlen(call);
    }
    size_t n = (size_t)(end - begin);
    if (n >= size)
        n = size - 1;
    memcpy(name, begin, n);
    name[n] = '\0';
}

/* Write "<call> failed: <NAME> (<text>)" into buf, asking the driver (when
 * it is loaded this far) for the error's name and text, else
 * "<call> failed: CUDA error <n>". */
static void describe_failure(const char *call, CUresult result, char *buf, size_t size)
{
    const char *name = NULL, *text = NULL;
    char fn[128];

    call_name(call, fn, sizeof fn);
    if (driver.cuGetErrorName != NULL && driver.cuGetErrorName(result, &name) != CUDA_SUCCESS)
        name = NULL;
    if (name != NULL && driver.cuGetErrorString != NULL &&
        driver.cuGetErrorString(result, &text) != CUDA_SUCCESS)
        text = NULL;
    if (name == NULL)
        snprintf(buf, size, "%s failed: CUDA error %d", fn, (int)result);
    else if (text == NULL)
        snprintf(buf, size, "%s failed: %s", fn, name);
    else
        snprintf(buf, size, "%s failed: %s (%s)", fn, name, text);
}

/* Record the outcome of a failed load. */
static void load_failed(strided_status status, int cuda_error, const char *fmt, ...)
    STRIDED_PRINTF(3, 4);

static void load_failed(strided_status status, int cuda_error, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    vsnprintf(load_reason, sizeof load_reason, fmt, args);
    va_end(args);
    load_status = status;
    load_cuda_error = cuda_error;
}

/* Look one symbol up through whichever cuGetProcAddress the driver has. */
typedef struct resolver {
    strided__cuGetProcAddress_v2_fn v2;
    strided__cuGetProcAddress_v1_fn v1;
} resolver;

static CUresult lookup(const resolver *r, const char *symbol, int version, void **pfn,
                       CUdriverProcAddressQueryResult *found)
{
    *pfn = NULL;
    *found = CU_GET_PROC_ADDRESS_SUCCESS;
    if (r->v2 != NULL)
        return r->v2(symbol, pfn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, found);
    return r->v1(symbol, pfn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
}

/* Resolve symbol into the function pointer at slot; false after recording
 * why not. */
static bool resolve(const resolver *r, const char *symbol, int version, void *slot)
{
    void *pfn;
    CUdriverProcAddressQueryResult found;
    CUresult result = lookup(r, symbol, version, &pfn, &found);

    if (result != CUDA_SUCCESS) {
        char call[CALL_TEXT_CAPACITY];
        describe_failure("cuGetProcAddress", result, call, sizeof call);
        load_failed(STRIDED_ERR_CUDA, (int)result, "cannot resolve %s: %s", symbol, call);
        return false;
    }
    if (pfn == NULL || found != CU_GET_PROC_ADDRESS_SUCCESS) {
        load_failed(STRIDED_ERR_CUDA, CUDA_ERROR_NOT_FOUND,
                    "cannot resolve %s: the driver has no such entry point "
                    "for CUDA %d.%d%s",
                    symbol, version / 1000, version % 1000 / 10,
                    found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                        ? " (version not sufficient)"
                        : "");
        return false;
    }
    memcpy(slot, &pfn, sizeof pfn);
    return true;
}

/* Resolve an optional entry point into slot, or leave it NULL: for a
 * driver older than the entry's version (which cuGetProcAddress would
 * refuse to be asked about) and for one that does not have it. Records
 * nothing: a missing optional entry point is an answer, not a failure. */
static void resolve_optional(const resolver *r, const entry *e, int driver_version, void *slot)
{
    void *pfn;
    CUdriverProcAddressQueryResult found;

    if (driver_version < e->version)
        return;
    if (lookup(r, e->name, e->version, &pfn, &found) != CUDA_SUCCESS || pfn == NULL ||
        found != CU_GET_PROC_ADDRESS_SUCCESS)
        return;
    memcpy(slot, &pfn, sizeof pfn);
}

/* Find the lookup function; false when the library has neither. */
static bool find_resolver(void *lib, resolver *r)
{
    void *sym;

    r->v2 = NULL;
    r->v1 = NULL;
    sym = dlsym(lib, "cuGetProcAddress_v2");
    if (sym != NULL) {
        memcpy(&r->v2, &sym, sizeof sym);
        return true;
    }
    sym = dlsym(lib, "cuGetProcAddress");
    if (sym != NULL) {
        memcpy(&r->v1, &sym, sizeof sym);
        return true;
    }
    return false;
}

static void load(void)
{
    const char *path = getenv("STRIDED_CUDA_DRIVER");
    CUresult (*init)(unsigned int) = NULL;
    CUresult (*get_version)(int *) = NULL;
    strided__driver d;
    resolver r;
    void *lib;
    size_t i;
    int version = 0;

    if (path == NULL || path[0] == '\0')
        path = DEFAULT_DRIVER;
    memset(&d, 0, sizeof d);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        load_failed(STRIDED_ERR_NO_CUDA_DRIVER, 0, "no CUDA driver: %s", why != NULL ? why : path);
        return;
    }
    if (!find_resolver(lib, &r)) {
        load_failed(STRIDED_ERR_NO_CUDA_DRIVER, 0,
                    "no CUDA driver: %s has no cuGetProcAddress (a CUDA "
                    "driver for CUDA 12.0 or later is needed)",
                    path);
        return;
    }
    /* Ask for the version first, at the version that introduced the call,
     * so that an old driver is refused with a clear reason rather than with
     * cuGetProcAddress's INVALID_VALUE for a version it does not know. */
    if (!resolve(&r, "cuDriverGetVersion", 2020, &get_version))
        return;
    if (get_version(&version) != CUDA_SUCCESS)
        version = 0;
    if (version < STRIDED_CUDA_API_VERSION) {
        load_failed(STRIDED_ERR_NO_CUDA_DRIVER, 0,
                    "no CUDA driver: %s supports CUDA %d.%d; strided needs "
                    "%d.%d or later",
                    path, version / 1000, version % 1000 / 10, STRIDED_CUDA_API_VERSION / 1000,
                    STRIDED_CUDA_API_VERSION % 1000 / 10);
        return;
    }
    /* The error names first, so that every later failure can be told in
     * the driver's words. */
    for (i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *slot = (char *)&d + entries[i].offset;
        if (entries[i].optional) {
            resolve_optional(&r, &entries[i], version, slot);
            continue;
        }
        if (!resolve(&r, entries[i].name, entries[i].version, slot))
            return;
        if (entries[i].offset == offsetof(strided__driver, cuGetErrorString)) {
            driver.cuGetErrorName = d.cuGetErrorName;
            driver.cuGetErrorString = d.cuGetErrorString;
        }
    }
    if (!resolve(&r, "cuInit", STRIDED_CUDA_API_VERSION, &init))
        return;
    CUresult result = init(0);
    if (result != CUDA_SUCCESS) {
        char call[CALL_TEXT_CAPACITY];
        describe_failure("cuInit", result, call, sizeof call);
        load_failed(STRIDED_ERR_CUDA, (int)result, "%s", call);
        return;
    }
    d.version = version;
    driver = d;
    load_status = STRIDED_OK;
    atomic_store_explicit(&loaded, true, memory_order_release);
}

strided_status strided__cuda(const char *op, const strided__driver **out)
{
    assert(out != NULL);
    pthread_once(&load_once, load);
    if (load_status != STRIDED_OK) {
        strided_status status = strided__fail(load_status, op, "%s", load_reason);
        if (load_cuda_error != 0)
            strided__set_last_cuda_error(load_cuda_error);
        return status;
    }
    *out = &driver;
    return STRIDED_OK;
}

const strided__driver *strided__cuda_quiet(void)
{
    pthread_once(&load_once, load);
    return load_status == STRIDED_OK ? &driver : NULL;
}

bool strided__cuda_loaded(void)
{
    return atomic_load_explicit(&loaded, memory_order_acquire);
}

strided_status strided__cuda_fail(const char *op, const char *call, CUresult result)
{
    char text[CALL_TEXT_CAPACITY];

    describe_failure(call, result, text, sizeof text);
    strided__fail(STRIDED_ERR_CUDA, op, "%s", text);
    strided__set_last_cuda_error((int)result);
    return STRIDED_ERR_CUDA;
}

strided_status strided__cuda_check(const char *op, const char *call, CUresult result)
{
    if (result == CUDA_SUCCESS)
        return STRIDED_OK;
    return strided__cuda_fail(op, call, result);
}

/* The primary context of device, retained on first use. Assumes: device is
 * a valid ordinal (checked by the caller). */
static strided_status retain_primary(const char *op, const strided__driver *cu, int device,
                                     CUcontext *out)
{
    CUdevice dev;
    CUcontext ctx = NULL;
    strided_status status;

    assert(device >= 0);
    status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGet(&dev, device));
    if (status != STRIDED_OK)
        return status;
    if (device >= MAX_CACHED_DEVICES)
        return STRIDED_CUDA_CHECK(op, cu->cuDevicePrimaryCtxRetain(out, dev));
    /* One retain per device for the life of the process: the lock keeps
     * two threads from both retaining it. */
    pthread_mutex_lock(&primary_lock);
    ctx = atomic_load_explicit(&primary[device], memory_order_acquire);
    if (ctx == NULL) {
        status = STRIDED_CUDA_CHECK(op, cu->cuDevicePrimaryCtxRetain(&ctx, dev));
        if (status == STRIDED_OK)
            atomic_store_explicit(&primary[device], ctx, memory_order_release);
    }
    pthread_mutex_unlock(&primary_lock);
    if (status == STRIDED_OK)
        *out = ctx;
    return status;
}

strided_status strided__context_enter(const char *op, const strided__driver *cu, int device,
                                      strided__context_scope *scope)
{
    CUcontext ctx = NULL, current = NULL;
    strided_status status;

    assert(cu != NULL && scope != NULL);
    if (device >= 0 && device < MAX_CACHED_DEVICES)
        ctx = atomic_load_explicit(&primary[device], memory_order_acquire);
    /* A device whose context is cached exists: device ordinals are fixed
     * for the life of the driver. Otherwise check the ordinal first. */
    if (ctx == NULL) {
        int count = 0;
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetCount(&count));
        if (status != STRIDED_OK)
            return status;
        if (device < 0 || device >= count)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "device %d does not exist; there are %d "
                                 "CUDA devices",
                                 device, count);
        status = retain_primary(op, cu, device, &ctx);
        if (status != STRIDED_OK)
            return status;
    }
    status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetCurrent(&current));
    if (status != STRIDED_OK)
        return status;
    if (current == ctx) {
        scope->previous = current;
        scope->switched = false;
        return STRIDED_OK;
    }
    status = STRIDED_CUDA_CHECK(op, cu->cuCtxSetCurrent(ctx));
    if (status != STRIDED_OK)
        return status;
    scope->previous = current;
    scope->switched = true;
    return STRIDED_OK;
}

void strided__context_leave(const strided__driver *cu, strided__context_scope *scope)
{
    assert(cu != NULL && scope != NULL);
    /* Nothing to report to: if restoring fails the thread keeps the
     * device's primary context current, which is harmless. */
    if (scope->switched)
        (void)cu->cuCtxSetCurrent(scope->previous);
    scope->switched = false;
}

strided_status strided__refuse_in_capture(const char *op, const strided__driver *cu, void *stream,
                                          int device, const char *what, const char *hint)
{
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, cu, device, &scope);
    if (status != STRIDED_OK)
        return status;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    status = STRIDED_CUDA_CHECK(op, cu->cuStreamIsCapturing((CUstream)stream, &capture));
    strided__context_leave(cu, &scope);
    if (status == STRIDED_OK && capture != CU_STREAM_CAPTURE_STATUS_NONE)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                               "%s cannot be captured into a CUDA graph: the stream is "
                               "capturing, and the work would run on the host now instead of "
                               "when the graph is launched; %s",
                               what, hint);
    return status;
}
