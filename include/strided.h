/*
 * strided.h: the umbrella header of libstrided.
 *
 * strided describes, owns, views and moves n-dimensional strided data in host
 * and CUDA memory. Each module has one header under strided/, which is the
 * authoritative documentation of its functions:
 *   strided/status.h    status codes and the thread-local error message
 *   strided/layout.h    the strided layout and its algebra
 *   strided/resource.h  memory resources: host, pinned, device, managed, yours
 *   strided/buffer.h    reference-counted memory of any kind, owned or wrapped
 *   strided/dlpack.h    the DLPack ABI, element types and devices
 *   strided/view.h      views: a buffer through a layout; DLPack import/export
 *   strided/stream.h    ordering work between CUDA streams
 */
#ifndef STRIDED_H
#define STRIDED_H

#include "strided/api.h"
#include "strided/buffer.h"
#include "strided/copy.h"
#include "strided/dlpack.h"
#include "strided/layout.h"
#include "strided/resource.h"
#include "strided/status.h"
#include "strided/stream.h"
#include "strided/view.h"

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
