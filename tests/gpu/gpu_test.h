/*
 * gpu_test.h: what the GPU tests share (gpu_test.c is compiled into each).
 *
 * The tests link no CUDA library: gpu_test_start loads libcuda.so.1 (never
 * a fake driver named for the unit tests) into one table, cu, of the driver
 * entry points the GPU tests call. Without a driver or a device it prints
 * "skipped: no CUDA device" and the test passes. CU(call) runs a driver
 * call that must succeed.
 */
#ifndef STRIDED_GPU_TEST_H
#define STRIDED_GPU_TEST_H

#include "test_util.h"

/* The CUDA driver API, as much as the GPU tests use (cuda.h, CUDA 12/13). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef unsigned long long CUdeviceptr;

typedef struct CUmemLocation {
    int type; /* CUmemLocationType */
    int id;
} CUmemLocation;

typedef struct CUmemPoolProps {
    int allocType;   /* CUmemAllocationType */
    int handleTypes; /* CUmemAllocationHandleType */
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;

enum { CUDA_SUCCESS = 0, CU_MEMHOSTALLOC_PORTABLE = 0x01, CU_STREAM_NON_BLOCKING = 0x1 };
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

/* X(field, exported symbol, parameters): the entry points the tests need;
 * the symbol is the versioned one cuda.h maps the name to. */
#define CU_FUNCS(X)                                                                             \
    X(cuInit, "cuInit", (unsigned int))                                                         \
    X(cuGetErrorName, "cuGetErrorName", (CUresult, const char **))                              \
    X(cuDriverGetVersion, "cuDriverGetVersion", (int *))                                        \
    X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                                            \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                                            \
    X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *, int, CUdevice))                     \
    X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", (int *, CUdevice, CUdevice))              \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))            \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))                    \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext *))                                        \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                          \
    X(cuCtxSynchronize, "cuCtxSynchronize", (void))                                             \
    X(cuPointerGetAttributes, "cuPointerGetAttributes",                                         \
      (unsigned int, int *, void **, CUdeviceptr))                                              \
    X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                                     \
    X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                                 \
    X(cuMemAllocHost, "cuMemAllocHost_v2", (void **, size_t))                                   \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void **, size_t, unsigned int))                        \
    X(cuMemFreeHost, "cuMemFreeHost", (void *))                                                 \
    X(cuMemHostRegister, "cuMemHostRegister_v2", (void *, size_t, unsigned int))                \
    X(cuMemHostUnregister, "cuMemHostUnregister", (void *))                                     \
    X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr *, size_t, unsigned int))            \
    X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr *, size_t, CUstream))                    \
    X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr, CUstream))                                \
    X(cuMemPoolCreate, "cuMemPoolCreate", (CUmemoryPool *, const CUmemPoolProps *))             \
    X(cuMemPoolDestroy, "cuMemPoolDestroy", (CUmemoryPool))                                     \
    X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync",                                       \
      (CUdeviceptr *, size_t, CUmemoryPool, CUstream))                                          \
    X(cuMemsetD8, "cuMemsetD8_v2", (CUdeviceptr, unsigned char, size_t))                        \
    X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))       \
    X(cuMemcpy, "cuMemcpy", (CUdeviceptr, CUdeviceptr, size_t))                                 \
    X(cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr, CUdeviceptr, size_t, CUstream))             \
    X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))                     \
    X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))                           \
    X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr, const void *, size_t, CUstream)) \
    X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CUdeviceptr, size_t, CUstream))       \
    X(cuStreamCreate, "cuStreamCreate", (CUstream *, unsigned int))                             \
    X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                                        \
    X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                                   \
    X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream, CUevent, unsigned int))                \
    X(cuEventCreate, "cuEventCreate", (CUevent *, unsigned int))                                \
    X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                                      \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                                           \
    X(cuStreamWaitValue32, "cuStreamWaitValue32_v2",                                            \
      (CUstream, CUdeviceptr, unsigned int, unsigned int))                                      \
    X(cuStreamWriteValue32, "cuStreamWriteValue32_v2",                                          \
      (CUstream, CUdeviceptr, unsigned int, unsigned int))

/* Entry points that may be missing (NULL then); without them
 * test_gpu_memory leaves its non-primary context case out. */
#define CU_OPTIONAL_FUNCS(X)                                                           \
    X(cuCtxCreate_v2, "cuCtxCreate_v2", (CUcontext *, unsigned int, CUdevice))         \
    X(cuCtxCreate_v4, "cuCtxCreate_v4", (CUcontext *, void *, unsigned int, CUdevice)) \
    X(cuCtxDestroy, "cuCtxDestroy_v2", (CUcontext))

#define CU_DECLARE(field, symbol, params) CUresult(*field) params;
typedef struct gpu_driver {
    CU_FUNCS(CU_DECLARE)
    CU_OPTIONAL_FUNCS(CU_DECLARE)
} gpu_driver;
#undef CU_DECLARE

/* The driver, filled by gpu_test_start. */
extern gpu_driver cu;

/* A driver call that must succeed. */
#define CU(call) cu_check_((cu.call), #call, __FILE__, __LINE__)

/* Fail the test at file:line, naming what and the driver's error, unless
 * rc is CUDA_SUCCESS. */
void cu_check_(CUresult rc, const char *what, const char *file, int line);

/* The start of a GPU test's main: load the real driver (unsetting
 * STRIDED_CUDA_DRIVER) and count the devices into *device_count. Returns -1
 * when a device is usable; otherwise the status main returns: 0 after
 * "skipped: no CUDA device (why)" without a driver or a device, 1 after
 * "cannot test: why" when the driver lacks an entry point. */
int gpu_test_start(int *device_count);

/* Get devices 0 to n - 1 and retain their primary contexts; false after
 * "cannot set up device d" when one fails. */
bool gpu_retain_devices(int n, CUdevice *devices, CUcontext *primaries);

/* Make no context current and release the primary contexts of devices. */
void gpu_release_devices(int n, const CUdevice *devices);

/* Run only the tests that the cmocka test name pattern in the environment
 * variable (e.g. "test_tiles", "test_*s") matches, where it is set and not
 * empty. */
void gpu_test_filter(const char *variable);

#endif
