/*
 * cuda/info.c: the loaded CUDA driver and its devices, described for bug
 * reports (strided/driver.h).
 */
/* dladdr, which names the file an address belongs to. */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda/driver.h"
#include "strided/driver.h"

/* The file that holds the driver's entry points. The driver is opened by
 * name (cuda/driver.c) and its handle is not kept; the dynamic loader knows
 * which file it found, and dladdr of an entry point the driver handed out
 * asks it. "" when it cannot tell. */
static void driver_path(const strided__driver *cu, char *out, size_t size)
{
    Dl_info where;
    void *address;

    memcpy(&address, &cu->cuDeviceGetCount, sizeof address);
    out[0] = '\0';
    if (dladdr(address, &where) != 0 && where.dli_fname != NULL)
        snprintf(out, size, "%s", where.dli_fname);
}

strided_status strided_driver_info_init(strided_driver_info *info)
{
    static const char op[] = "driver_info";
    const strided__driver *cu;
    strided_driver_info d;
    strided_status status;

    if (info == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "info is required");
    status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    memset(&d, 0, sizeof d);
    status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetCount(&d.device_count));
    if (status != STRIDED_OK)
        return status;
    d.version = cu->version;
    driver_path(cu, d.path, sizeof d.path);
    *info = d;
    return STRIDED_OK;
}

strided_status strided_device_info_init(strided_device_info *info, int device)
{
    static const char op[] = "device_info";
    const strided__driver *cu;
    strided_device_info d;
    strided_status status;
    CUdevice dev;
    int count = 0;

    if (info == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "info is required");
    status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetCount(&count));
    if (status != STRIDED_OK)
        return status;
    if (device < 0 || device >= count)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "device %d does not exist; there are %d CUDA devices", device, count);
    memset(&d, 0, sizeof d);
    d.ordinal = device;
    status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGet(&dev, device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuDeviceGetName(d.name, (int)sizeof d.name, dev));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, cu->cuDeviceGetAttribute(&d.compute_capability_major,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, cu->cuDeviceGetAttribute(&d.compute_capability_minor,
                                         CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            op, cu->cuDeviceGetAttribute(&d.multiprocessor_count,
                                         CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    if (status != STRIDED_OK)
        return status;
    d.name[sizeof d.name - 1] = '\0';
    *info = d;
    return STRIDED_OK;
}
