/*
 * strided.h: the umbrella header of libstrided.
 *
 * strided describes, owns, views and moves n-dimensional strided data in host
 * and CUDA memory. Each module has one header under strided/, which is the
 * authoritative documentation of its functions:
 *   strided/api.h       the version and the export macro
 *   strided/build.h     how this library was built (kernels, architectures)
 *   strided/driver.h    the CUDA driver found and the devices it sees
 *   strided/status.h    status codes and the thread-local error message
 *   strided/layout.h    the strided layout and its algebra
 *   strided/resource.h  memory resources: host, pinned, device, managed, yours
 *   strided/buffer.h    reference-counted memory of any kind, owned or wrapped
 *   strided/dlpack.h    the DLPack ABI: its structs, type and device codes
 *   strided/dtype.h     element types: DLPack types and NumPy type strings
 *   strided/view.h      views: a buffer through a layout; DLPack import/export
 *   strided/stream.h    ordering work between CUDA streams
 *   strided/interface.h views of what an array interface describes
 *   strided/tensor_map.h tensor maps of views, for the GPU's tensor memory accelerator
 *   strided/copy.h      copies between any two views
 *
 * Pointers. A function that returns a strided_status checks every pointer
 * parameter it needs before it reads or writes anything: a NULL one fails
 * with STRIDED_ERR_INVALID_ARGUMENT and a message naming the parameters
 * ("reshape: layout and out are required"), as any failure does
 * (strided/status.h). A function that returns anything else (a query, a
 * predicate, a name) does not check: its pointer parameters must not be
 * NULL, and its declaration says so. NULL is allowed only where a
 * declaration says what it means: an optional argument (strides NULL for
 * implicit C strides, dtype NULL for none, release NULL for borrowed
 * memory), an array of n entries when n is 0, a text buffer when its size
 * is 0, and the _retain and _release functions, which accept NULL.
 */
#ifndef STRIDED_H
#define STRIDED_H

#include "strided/api.h"
#include "strided/buffer.h"
#include "strided/build.h"
#include "strided/copy.h"
#include "strided/dlpack.h"
#include "strided/dtype.h"
#include "strided/driver.h"
#include "strided/interface.h"
#include "strided/ipc.h"
#include "strided/layout.h"
#include "strided/resource.h"
#include "strided/status.h"
#include "strided/stream.h"
#include "strided/tensor_map.h"
#include "strided/view.h"

#endif
