/*
 * strided/copy.h: copying one view into another.
 *
 * A copy moves every element of the source into the element of the
 * destination at the same index. Elements are opaque itemsize-byte blobs:
 * no type conversion. The source is broadcast to the destination's shape
 * (NumPy's rules: stride 0 for new or extent-1 axes); the destination never
 * is. Everything is validated before the first byte is written.
 *
 * Planning. Both layouts are normalised together into a plan: the source
 * is broadcast, extent-1 axes are dropped, axes on which the destination
 * steps backwards are flipped on both sides (the copy is the same), the axes
 * are ordered by the destination's strides (the fastest last), and
 * neighbours contiguous in both are merged. The plan names the kernel that
 * fits (strided_copy_kernel); plans are plain values and can be inspected.
 *
 * Ownership: nothing is retained; views are borrowed.
 */
#ifndef STRIDED_COPY_H
#define STRIDED_COPY_H

#include <stdbool.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/layout.h"
#include "strided/resource.h"
#include "strided/status.h"
#include "strided/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kind of loop a plan needs. */
typedef enum strided_copy_kernel {
    STRIDED_COPY_NOTHING = 0,    /* volume 0: nothing to move */
    STRIDED_COPY_CONTIGUOUS = 1, /* one run of volume * itemsize bytes on
                                    both sides (ndim 1, both strides 1) */
    STRIDED_COPY_ROWS = 2,       /* the innermost axis has stride 1 on both
                                    sides: rows of contiguous bytes */
    STRIDED_COPY_TRANSPOSE = 3,  /* the destination's innermost axis has
                                    stride 1, the source's stride 1 is on
                                    another axis (src_unit_axis): tiles */
    STRIDED_COPY_BROADCAST = 4,  /* the source has stride 0 on the
                                    destination's innermost axis: each
                                    source element fills a run */
    STRIDED_COPY_GATHER = 5      /* anything else: element by element */
} strided_copy_kernel;

/* A copy, normalised. Offsets and strides count elements of itemsize
 * bytes. The destination element at plan index i lies at
 *     dst element 0 + (dst_offset + sum_k i[k] * dst_strides[k]) * itemsize
 * and the source element likewise; destination strides are >= 0 after the
 * flips, in non-increasing order (the last axis is the fastest). */
typedef struct strided_copy_plan {
    strided_copy_kernel kernel;
    int ndim;           /* 1..64; 0 only when volume is 0 */
    int itemsize;       /* bytes per element */
    int src_unit_axis;  /* TRANSPOSE: the axis where the source
                                     stride is 1; -1 otherwise */
    int64_t volume;     /* elements to copy */
    int64_t dst_offset; /* from the destination view's element 0 */
    int64_t src_offset; /* from the source view's element 0 */
    int64_t shape[STRIDED_MAX_NDIM];
    int64_t dst_strides[STRIDED_MAX_NDIM];
    int64_t src_strides[STRIDED_MAX_NDIM];
} strided_copy_plan;

/* Plan a copy of src into dst (layouts only; no memory is looked at).
 *   out  out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for NULL arguments; for a layout
 * strided_layout_validate refuses ("invalid source layout: ..."); when the
 * itemsizes differ ("The itemsize of the destination and source layouts
 * must match. Got dst itemsize:8 and src itemsize:4"); when the source
 * cannot be broadcast to the destination ("Layouts of shapes (3,4) and
 * (5,) cannot be broadcast together"); when two destination elements may
 * share an address ("The destination layout is non-unique, i.e. some
 * elements may overlap in memory: (4,4):(1,0)"; the test is
 * strided_layout_is_unique's). */
STRIDED_API strided_status strided_copy_plan_make(const strided_layout *dst,
                                                  const strided_layout *src,
                                                  strided_copy_plan *out);

/* The kernel's name: "nothing", "contiguous", "rows", "transpose",
 * "broadcast", "gather"; "unknown" for another value. */
STRIDED_API const char *strided_copy_kernel_name(strided_copy_kernel kernel);

/* Copy between host memory: dst and src are the addresses of each layout's
 * element (0,...,0). nthreads 0 picks the number of threads by the size of
 * the copy (one for small copies); 1 runs on the calling thread only.
 * Source and destination may overlap: the result is as if the source had
 * been read in full first.
 *   dst_layout, src_layout  required; dst and src may be NULL when the
 *                           volume is 0
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL dst_layout or src_layout,
 * a negative nthreads, or a NULL dst or src with a positive volume; the
 * errors of strided_copy_plan_make; STRIDED_ERR_OUT_OF_MEMORY when an
 * overlapping copy cannot get its temporary. */
STRIDED_API strided_status strided_copy_host(void *dst, const strided_layout *dst_layout,
                                             const void *src, const strided_layout *src_layout,
                                             int nthreads);

/* How strided_view_copy runs. */
typedef enum strided_copy_flags {
    STRIDED_COPY_DEFAULT = 0,     /* blocking for copies between host and
                                     device memory, not for device to device
                                     (cuda.core's defaults) */
    STRIDED_COPY_BLOCKING = 1,    /* the copy is complete on return */
    STRIDED_COPY_NONBLOCKING = 2, /* return once the copy is queued */
    STRIDED_COPY_NO_STREAM = 4    /* the caller named no stream: a copy
                                     between host memory waits for nothing;
                                     one that needs a device is refused */
} strided_copy_flags;

/* Copy view src into view dst. Where the copy runs follows the memory:
 * between host-accessible memory (pageable, pinned, managed) it runs on
 * the host, after the work queued on stream (unless NO_STREAM), and is
 * complete on return; with device memory on either side it is queued on
 * stream in the device's primary context (the device of dst's memory,
 * else src's), using the views' device addresses. Views of a sub-byte type
 * (strided/dtype.h) where either is packed with elements that are not
 * whole bytes, or one is padded and the other packed, copy value by value
 * (docs/subbyte.md): on the host, one element at a time; on one device, by
 * the kernel subbyte; host memory against device memory through a device
 * temporary of the host view's bytes. The bits of the destination's bytes
 * that belong to no element of it are kept.
 *   stream  a CUstream (NULL: the legacy default stream)
 *   flags   strided_copy_flags, or-ed
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL dst or src (checked
 * first); the errors of strided_copy_plan_make; STRIDED_ERR_INVALID_ARGUMENT
 * for a released view, a read-only destination ("The destination view is
 * read-only."), a packed sub-byte view against a view without a dtype
 * ("copy: a copy of packed sub-byte elements needs the dtype of both
 * views ..."), different dtypes ("The destination and source dtypes must
 * match. Got dst dtype:float32 and src dtype:int32"), both BLOCKING and
 * NONBLOCKING, or NO_STREAM for a copy that needs a device ("this copy runs
 * on a device and needs a stream"); STRIDED_ERR_UNSUPPORTED for device
 * copies this build cannot do yet (named in the message), and for sub-byte
 * copies between overlapping device memory or between two devices;
 * STRIDED_ERR_NO_CUDA_DRIVER, STRIDED_ERR_CUDA, STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_view_copy(const strided_view *dst, const strided_view *src,
                                             void *stream, unsigned flags);

/* Where the temporaries of a copy come from. A copy may need a device
 * temporary (overlapping device copies, permutes after a DMA, copies
 * between devices) and host staging buffers (pageable memory, host-side
 * gathers). NULL members take the defaults: device temporaries from the
 * device's current memory pool in stream order; pinned staging buffers the
 * library keeps and reuses. host must give host-accessible memory that the
 * device can reach (pinned) for staging to be asynchronous; device must
 * give device memory of the device the copy runs on. */
typedef struct strided_copy_temporaries {
    strided_memory_resource *host;
    strided_memory_resource *device;
} strided_copy_temporaries;

/* strided_view_copy with the temporaries' resources given (temporaries may
 * be NULL: the defaults). Each temporary is one allocation from the
 * resource, of the size the copy needs, given back in stream order.
 * Returns the errors of strided_view_copy and those of the resources'
 * allocate callbacks. */
STRIDED_API strided_status strided_view_copy_ex(const strided_view *dst, const strided_view *src,
                                                void *stream, unsigned flags,
                                                const strided_copy_temporaries *temporaries);

/* Export a view through DLPack as request says (from
 * strided_dlpack_export_request_make for this view): as
 * strided_view_export_dlpack (or _legacy) naming request->device when no
 * copy is asked for, else a copy of the view, dense in C order, in new
 * memory of the kind request->device names, made by this module's copy
 * engine (strided_view_copy_ex): on the host when request->host_copy, on
 * request->stream otherwise, blocking when request->blocking. The tensor
 * then holds the only reference to the new memory, is writable, and a
 * versioned one is flagged STRIDED_DLPACK_FLAG_IS_COPIED (and, for a
 * padded sub-byte view, whose copy is padded too,
 * STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED; a packed view's copy is in C
 * order with its rows rounded up to whole bytes, where they are not, as
 * the packed-layout rule asks).
 *   versioned  out is a strided_dl_managed_tensor_versioned ** (true) or a
 *              strided_dl_managed_tensor ** (false)
 *   out        out-parameter: the tensor, owned by the caller (call its
 *              deleter); written on success only
 * Returns the refusals of strided_view_export_dlpack for the view,
 * STRIDED_ERR_INVALID_ARGUMENT for a NULL request, the errors of the
 * allocation (as strided_dlpack_tensor_alloc's) and of strided_view_copy_ex,
 * after which nothing is left allocated. */
STRIDED_API strided_status strided_view_export_dlpack_as(
    const strided_view *view, const strided_dlpack_export_request *request, bool versioned,
    void **out);

#ifdef __cplusplus
}
#endif

#endif
