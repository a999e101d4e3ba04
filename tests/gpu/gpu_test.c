/*
 * gpu_test.c: the driver table and the start of the GPU tests (gpu_test.h).
 */
#define _POSIX_C_SOURCE 200809L /* unsetenv */

#include "gpu_test.h"

#include <dlfcn.h>
#include <stdlib.h>

gpu_driver cu;

/* Look symbol up into the function pointer at fn (memcpy: ISO C has no cast
 * from void * to a function pointer; POSIX makes the two the same size). */
static bool load_symbol(void *lib, const char *symbol, void *fn)
{
    void *sym = dlsym(lib, symbol);

    memcpy(fn, &sym, sizeof sym);
    return sym != NULL;
}

/* Load libcuda.so.1 and initialize it: 0 when a device is usable, 1 (with
 * why) when there is no driver or no device, 2 (with why) when the driver
 * lacks an entry point the tests need. */
static int load_driver(int *count, char *why, size_t why_size)
{
    void *lib;
    CUresult rc;

    *count = 0;
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(why, why_size, "%s", e != NULL ? e : "dlopen failed");
        return 1;
    }
    if (!load_symbol(lib, "cuInit", &cu.cuInit) ||
        !load_symbol(lib, "cuDeviceGetCount", &cu.cuDeviceGetCount)) {
        snprintf(why, why_size, "libcuda.so.1 is not a CUDA driver");
        return 1;
    }
    rc = cu.cuInit(0);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, why_size, "cuInit failed with %d", rc);
        return 1;
    }
    rc = cu.cuDeviceGetCount(count);
    if (rc != CUDA_SUCCESS || *count == 0) {
        snprintf(why, why_size, "cuDeviceGetCount: %d device(s), result %d", *count, rc);
        return 1;
    }
#define CU_LOAD(field, symbol, params)                             \
    if (!load_symbol(lib, symbol, &cu.field)) {                    \
        snprintf(why, why_size, "libcuda.so.1 has no %s", symbol); \
        return 2;                                                  \
    }
    CU_FUNCS(CU_LOAD)
#undef CU_LOAD
#define CU_LOAD_OPTIONAL(field, symbol, params) (void)load_symbol(lib, symbol, &cu.field);
    CU_OPTIONAL_FUNCS(CU_LOAD_OPTIONAL)
#undef CU_LOAD_OPTIONAL
    return 0;
}

void cu_check_(CUresult rc, const char *what, const char *file, int line)
{
    const char *name = "?";

    if (rc == CUDA_SUCCESS)
        return;
    if (cu.cuGetErrorName(rc, &name) != CUDA_SUCCESS)
        name = "?";
    fail_at(file, line, "%s failed: %s (%d)\n", what, name, rc);
}

int gpu_test_start(int *device_count)
{
    char why[512];
    int rc;

    /* The real driver, never a fake one named for the unit tests. */
    unsetenv("STRIDED_CUDA_DRIVER");
    rc = load_driver(device_count, why, sizeof why);
    if (rc == 1) {
        printf("skipped: no CUDA device (%s)\n", why);
        return 0;
    }
    if (rc != 0) {
        printf("cannot test: %s\n", why);
        return 1;
    }
    return -1;
}

bool gpu_retain_devices(int n, CUdevice *devices, CUcontext *primaries)
{
    for (int d = 0; d < n; d++)
        if (cu.cuDeviceGet(&devices[d], d) != CUDA_SUCCESS ||
            cu.cuDevicePrimaryCtxRetain(&primaries[d], devices[d]) != CUDA_SUCCESS) {
            printf("cannot set up device %d\n", d);
            return false;
        }
    return true;
}

void gpu_release_devices(int n, const CUdevice *devices)
{
    (void)cu.cuCtxSetCurrent(NULL);
    for (int d = 0; d < n; d++)
        (void)cu.cuDevicePrimaryCtxRelease(devices[d]);
}

void gpu_test_filter(const char *variable)
{
    const char *only = getenv(variable);

    if (only != NULL && only[0] != '\0')
        cmocka_set_test_filter(only);
}
