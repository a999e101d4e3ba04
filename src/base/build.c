/*
 * base/build.c: how the library was built (strided/build.h).
 *
 * Everything here is decided at compile time. The compiler and OpenMP are
 * read from the compiler's own macros (the library's objects are compiled
 * with -fopenmp when CMake found OpenMP, which defines _OPENMP); the build
 * type and the kernels' description come as definitions on this file alone
 * (CMakeLists.txt and cmake/strided_kernels.cmake), so the base layer
 * learns of the copy kernels without depending on the copy layer.
 */
#include <assert.h>
#include <stddef.h>

#include "strided/build.h"

#ifndef STRIDED_BUILD_TYPE
#define STRIDED_BUILD_TYPE ""
#endif

#ifdef STRIDED_HAVE_KERNELS
#define KERNELS true
#else
#define KERNELS false
#endif
#ifndef STRIDED_KERNEL_ARCHITECTURES
#define STRIDED_KERNEL_ARCHITECTURES ""
#endif
#ifndef STRIDED_KERNEL_PTX
#define STRIDED_KERNEL_PTX ""
#endif
#ifndef STRIDED_KERNEL_NVCC
#define STRIDED_KERNEL_NVCC ""
#endif
#ifdef STRIDED_KERNEL_COMPRESSED
#define COMPRESSED true
#else
#define COMPRESSED false
#endif

#ifdef _OPENMP
#define OPENMP true
#else
#define OPENMP false
#endif

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define DOTTED(a, b, c) STRINGIFY(a) "." STRINGIFY(b) "." STRINGIFY(c)

/* clang defines __GNUC__ too, so it is asked first. */
#if defined(__clang__)
#define COMPILER "clang " DOTTED(__clang_major__, __clang_minor__, __clang_patchlevel__)
#elif defined(__GNUC__)
#define COMPILER "GCC " DOTTED(__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__)
#else
#define COMPILER "unknown"
#endif

void strided_build_info_init(strided_build_info *info)
{
    assert(info != NULL);
    info->version = STRIDED_VERSION_STRING;
    info->kernels = KERNELS;
    info->cuda_architectures = KERNELS ? STRIDED_KERNEL_ARCHITECTURES : "";
    info->ptx_architecture = KERNELS ? STRIDED_KERNEL_PTX : "";
    info->nvcc_version = KERNELS ? STRIDED_KERNEL_NVCC : "";
    info->kernels_compressed = KERNELS && COMPRESSED;
    info->openmp = OPENMP;
    info->compiler = COMPILER;
    info->build_type = STRIDED_BUILD_TYPE;
}
