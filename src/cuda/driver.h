/*
 * cuda/driver.h: the CUDA driver, loaded at run time (internal).
 *
 * libstrided links no CUDA library. The first call that needs the driver
 * loads libcuda.so.1 (or the library named by the environment variable
 * STRIDED_CUDA_DRIVER, which tests use to load a fake driver), resolves
 * every entry point below through cuGetProcAddress (asking for the API
 * version the declarations in cuda_api.h follow), and calls cuInit(0) - once,
 * thread-safely. The optional entry points, which older drivers lack, are
 * asked for at the version that introduced their signature, only of a
 * driver at least that new; one the driver does not give is NULL, and the
 * calls that need it fail with STRIDED_ERR_UNSUPPORTED saying so. Without a driver, strided__cuda() fails with
 * STRIDED_ERR_NO_CUDA_DRIVER and a message that says why (dlopen's text);
 * host-only features never call it.
 *
 * Every driver failure becomes STRIDED_ERR_CUDA through strided__cuda_fail,
 * whose message names the operation, the driver call, the error's name and
 * its text: "alloc: cuMemAllocFromPoolAsync failed: CUDA_ERROR_OUT_OF_MEMORY
 * (out of memory)".
 */
#ifndef STRIDED_CUDA_DRIVER_H
#define STRIDED_CUDA_DRIVER_H

#include <stdbool.h>

#include "cuda/cuda_api.h"
#include "base/base.h"

/* The driver's entry points used by libstrided. */
typedef struct strided__driver {
    int version; /* cuDriverGetVersion, e.g. 13000 */
    CUresult (*cuGetErrorName)(CUresult, const char **);
    CUresult (*cuGetErrorString)(CUresult, const char **);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuCtxGetCurrent)(CUcontext *);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxGetDevice)(CUdevice *);
    CUresult (*cuPointerGetAttributes)(unsigned int, CUpointer_attribute *, void **, CUdeviceptr);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuEventCreate)(CUevent *, unsigned int);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned int);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
    CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned int);
    CUresult (*cuMemHostAlloc)(void **, size_t, unsigned int);
    CUresult (*cuMemAllocHost)(void **, size_t);
    CUresult (*cuMemFreeHost)(void *);
    CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned int);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuDeviceGetMemPool)(CUmemoryPool *, CUdevice);
    CUresult (*cuMemPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
    CUresult (*cuMemPoolDestroy)(CUmemoryPool);
    CUresult (*cuMemPoolGetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
    CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, CUmemPool_attribute, void *);
    CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
    CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
    CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream);
    CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
    CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
    CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                               unsigned int, unsigned int, unsigned int, CUstream, void **,
                               void **);
    CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);
    CUresult (*cuMemRangeGetAttribute)(void *, size_t, CUmem_range_attribute, CUdeviceptr, size_t);
    CUresult (*cuMemPoolSetAccess)(CUmemoryPool, const CUmemAccessDesc *, size_t);
    CUresult (*cuMemPoolGetAccess)(CUmemAccess_flags *, CUmemoryPool, CUmemLocation *);
    CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*cuMemPoolExportToShareableHandle)(void *, CUmemoryPool, CUmemAllocationHandleType,
                                                 unsigned long long);
    CUresult (*cuMemPoolImportFromShareableHandle)(CUmemoryPool *, void *,
                                                   CUmemAllocationHandleType, unsigned long long);
    CUresult (*cuMemPoolExportPointer)(CUmemPoolPtrExportData *, CUdeviceptr);
    CUresult (*cuMemPoolImportPointer)(CUdeviceptr *, CUmemoryPool, CUmemPoolPtrExportData *);
    CUresult (*cuMemGetAddressRange)(CUdeviceptr *, size_t *, CUdeviceptr);
    CUresult (*cuIpcGetMemHandle)(CUipcMemHandle *, CUdeviceptr);
    CUresult (*cuIpcOpenMemHandle)(CUdeviceptr *, CUipcMemHandle, unsigned int);
    CUresult (*cuIpcCloseMemHandle)(CUdeviceptr);
    CUresult (*cuIpcGetEventHandle)(CUipcEventHandle *, CUevent);
    CUresult (*cuIpcOpenEventHandle)(CUevent *, CUipcEventHandle);
    /* Optional: NULL when the driver lacks them. The advice and prefetch of
     * CUDA 8.0 take a device ordinal (CU_DEVICE_CPU: the host); their
     * CUDA 12.2 variants (cuMemAdvise and cuMemPrefetchAsync asked for at
     * STRIDED_CUDA_MEM_LOCATION_VERSION) a CUmemLocation. */
    CUresult (*cuMemAdvise)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
    CUresult (*cuMemAdvise_v2)(CUdeviceptr, size_t, CUmem_advise, CUmemLocation);
    CUresult (*cuMemPrefetchAsync)(CUdeviceptr, size_t, CUdevice, CUstream);
    CUresult (*cuMemPrefetchAsync_v2)(CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream);
    CUresult (*cuMemDiscardBatchAsync)(CUdeviceptr *, size_t *, size_t, unsigned long long,
                                       CUstream);
    CUresult (*cuMemDiscardAndPrefetchBatchAsync)(CUdeviceptr *, size_t *, size_t, CUmemLocation *,
                                                  size_t *, size_t, unsigned long long, CUstream);
    CUresult (*cuMemcpyWithAttributesAsync)(CUdeviceptr, CUdeviceptr, size_t, CUmemcpyAttributes *,
                                            CUstream);
} strided__driver;

/* The loaded driver, or STRIDED_ERR_NO_CUDA_DRIVER (message: op, then why:
 * "no CUDA driver: libcuda.so.1: cannot open shared object file ..."), or
 * STRIDED_ERR_CUDA when cuInit or resolving an entry point fails. The
 * outcome of the first call is kept: later calls give the same answer. */
strided_status strided__cuda(const char *op, const strided__driver **out);

/* The loaded driver, loading it if needed, or NULL when there is none;
 * records no message, for callers to whom "no driver" is an answer, not a
 * failure (memory classification: no driver, no CUDA memory). */
const strided__driver *strided__cuda_quiet(void);

/* True when a driver has been loaded successfully (never loads one). */
bool strided__cuda_loaded(void);

/* Record a failed driver call as the calling thread's last error and return
 * STRIDED_ERR_CUDA; strided_last_cuda_error() then returns result. */
strided_status strided__cuda_fail(const char *op, const char *call, CUresult result);

/* Check one driver call: STRIDED_OK for CUDA_SUCCESS, else
 * strided__cuda_fail(op, #call, result). */
#define STRIDED_CUDA_CHECK(op, call) strided__cuda_check((op), #call, (call))
strided_status strided__cuda_check(const char *op, const char *call, CUresult result);

/* A device's primary context made current for a scope: enter retains the
 * primary context of device (once per device for the life of the process)
 * and makes it current if it is not; leave restores the context that was
 * current before. Fails with STRIDED_ERR_INVALID_ARGUMENT for a device
 * ordinal that does not exist. */
typedef struct strided__context_scope {
    CUcontext previous;
    bool switched;
} strided__context_scope;

strided_status strided__context_enter(const char *op, const strided__driver *cu, int device,
                                      strided__context_scope *scope);
void strided__context_leave(const strided__driver *cu, strided__context_scope *scope);

/* Refuse, with STRIDED_ERR_INVALID_ARGUMENT, work that a CUDA graph cannot
 * hold when stream is capturing one (or its capture was invalidated), asked
 * in device's primary context: what runs on the host now (host copies,
 * waits for the stream, staging) would not run again when the graph is
 * launched, and a wait for a capturing stream ends the capture. what names
 * the work ("a blocking copy") and hint how to do without it. A stream
 * that is not capturing costs one cuStreamIsCapturing. */
strided_status strided__refuse_in_capture(const char *op, const strided__driver *cu, void *stream,
                                          int device, const char *what, const char *hint);

#endif
