/*
 * strided/build.h: how the running libstrided was built, for bug reports
 * (python -m strided prints it).
 *
 * strided_build_info_init fills a plain value with what the build decided:
 * the version, whether the CUDA copy kernels are compiled in and for which
 * GPU architectures, whether host copies use OpenMP, the compiler and the
 * build type. It describes the library, not the machine: which CUDA driver
 * and GPUs the library finds at run time is strided/driver.h's.
 *
 * Ownership: every string is a constant of the library, valid for the life
 * of the process; nothing is allocated.
 */
#ifndef STRIDED_BUILD_H
#define STRIDED_BUILD_H

#include <stdbool.h>

#include "strided/api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct strided_build_info {
    /* strided_version(): the library's "MAJOR.MINOR.PATCH". */
    const char *version;
    /* The CUDA copy kernels are compiled in (nvcc was found at build time);
     * without them, device copies fail with STRIDED_ERR_UNSUPPORTED. */
    bool kernels;
    /* The GPU architectures the embedded fatbin has machine code for, as
     * compute capabilities without the dot, separated by spaces
     * ("75 80 86 89 90 100 120"); "" without kernels. */
    const char *cuda_architectures;
    /* The architecture of the fatbin's PTX, which the driver compiles for
     * newer GPUs at load time ("120"); "" without kernels. */
    const char *ptx_architecture;
    /* The nvcc release that compiled the kernels ("13.0"); "" without. */
    const char *nvcc_version;
    /* The fatbin is compressed (the driver inflates it at load time). */
    bool kernels_compressed;
    /* Large host copies run on several threads (the library was compiled
     * with OpenMP). */
    bool openmp;
    /* The C compiler that compiled the library ("GCC 12.2.0",
     * "clang 14.0.6"). */
    const char *compiler;
    /* The CMake build type ("Release", "RelWithDebInfo", "Debug"); "" when
     * there was none. */
    const char *build_type;
} strided_build_info;

/* Fill *info with how the library was built. Cannot fail; info must not be
 * NULL. */
STRIDED_API void strided_build_info_init(strided_build_info *info);

#ifdef __cplusplus
}
#endif

#endif
