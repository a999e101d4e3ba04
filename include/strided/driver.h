/*
 * strided/driver.h: the CUDA driver libstrided found, and the GPUs it sees,
 * for bug reports (python -m strided prints them).
 *
 * libstrided loads the CUDA driver at run time, once per process, the first
 * time something needs it (libcuda.so.1, or the library the environment
 * variable STRIDED_CUDA_DRIVER names). These calls load it too when it is
 * not loaded yet, then describe it and its devices with plain values; no CUDA
 * type appears here. Without a usable driver they fail with the reason the
 * load failed, which is the answer a report wants ("no CUDA driver:
 * libcuda.so.1: cannot open shared object file: No such file or directory").
 *
 * Ownership: the values are filled into caller storage; nothing is
 * allocated or retained.
 */
#ifndef STRIDED_DRIVER_H
#define STRIDED_DRIVER_H

#include "strided/api.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a driver's path, its terminating NUL included. */
#define STRIDED_DRIVER_PATH_CAPACITY 4096
/* Room for a device's name, its terminating NUL included. */
#define STRIDED_DEVICE_NAME_CAPACITY 256

typedef struct strided_driver_info {
    /* cuDriverGetVersion: the newest CUDA version the driver supports, as
     * 1000 * major + 10 * minor (13000 for CUDA 13.0). */
    int version;
    /* cuDeviceGetCount: the CUDA devices the process may use (0 is
     * possible: a driver without visible GPUs). */
    int device_count;
    /* The file the driver's entry points were loaded from, as the dynamic
     * loader names it ("/usr/lib/x86_64-linux-gnu/libcuda.so.1"); "" when
     * the loader cannot tell. Truncated to fit. */
    char path[STRIDED_DRIVER_PATH_CAPACITY];
} strided_driver_info;

/* Load the CUDA driver if it is not loaded yet, and describe it into *info.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for info NULL ("driver_info: info is
 * required"); STRIDED_ERR_NO_CUDA_DRIVER without a driver, or with one older
 * than CUDA 12.0 ("driver_info: no CUDA driver: <why>"); STRIDED_ERR_CUDA
 * when cuInit, resolving an entry point or cuDeviceGetCount failed
 * (strided_last_cuda_error() has the CUresult). On failure *info is
 * untouched. */
STRIDED_API strided_status strided_driver_info_init(strided_driver_info *info);

typedef struct strided_device_info {
    /* The device ordinal, as in strided_device.device_id. */
    int ordinal;
    /* cuDeviceGetName ("NVIDIA H200"). */
    char name[STRIDED_DEVICE_NAME_CAPACITY];
    /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR (9 and 0 for
     * an H200): which machine code of the fatbin it runs (strided/build.h). */
    int compute_capability_major;
    int compute_capability_minor;
    /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT. */
    int multiprocessor_count;
} strided_device_info;

/* Describe device (an ordinal, 0 to the driver's device_count - 1) into
 * *info, loading the driver if it is not loaded yet. Needs no context and
 * creates none. Returns STRIDED_ERR_INVALID_ARGUMENT for info NULL
 * ("device_info: info is required") or a device that does not exist
 * ("device_info: device 3 does not exist; there are 1 CUDA devices");
 * STRIDED_ERR_NO_CUDA_DRIVER and STRIDED_ERR_CUDA as
 * strided_driver_info_init, and STRIDED_ERR_CUDA when a query of the device
 * fails. On failure *info is untouched. */
STRIDED_API strided_status strided_device_info_init(strided_device_info *info, int device);

#ifdef __cplusplus
}
#endif

#endif
