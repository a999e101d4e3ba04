/*
 * strided/api.h: symbol visibility and version of libstrided.
 *
 * The library is built with hidden symbol visibility; only declarations
 * marked STRIDED_API are exported from the shared library. Code that links the
 * static library defines STRIDED_STATIC (CMake does this through the
 * strided::static target), which makes STRIDED_API expand to nothing.
 *
 * The version these headers belong to, STRIDED_VERSION_MAJOR, _MINOR, _PATCH
 * and STRIDED_VERSION_STRING ("MAJOR.MINOR.PATCH"), comes from
 * strided/version.h, which the build generates from the file VERSION and
 * installs beside this header.
 */
#ifndef STRIDED_API_H
#define STRIDED_API_H

#include "strided/version.h"

#if defined(STRIDED_STATIC)
#define STRIDED_API
#elif defined(_WIN32)
#if defined(STRIDED_BUILDING)
#define STRIDED_API __declspec(dllexport)
#else
#define STRIDED_API __declspec(dllimport)
#endif
#else
#define STRIDED_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library that is running, "MAJOR.MINOR.PATCH"; compare
 * with STRIDED_VERSION_STRING, the version compiled against. */
STRIDED_API const char *strided_version(void);

#ifdef __cplusplus
}
#endif

#endif
