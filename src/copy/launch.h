/*
 * copy/launch.h: the device executor (copy/launch.c): a plan run on a
 * device as one kernel launch (or one cuMemcpyAsync), and the device
 * temporaries of a copy; and the job that strided_view_copy (copy/copy.c)
 * hands the paths that run on devices (copy/device.c, copy/transfer.c,
 * copy/staging.c), whose temporaries are allocated for it. Not installed.
 */
#ifndef STRIDED_COPY_LAUNCH_H
#define STRIDED_COPY_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "copy/kernels.h"
#include "strided/buffer.h"
#include "strided/copy.h"
#include "strided/resource.h"
#include "strided/view.h"

/* Run plan p on device (its primary context made current), queued on
 * stream. dst and src are device addresses of the plan's element 0; both
 * must be reachable from that device. Returns STRIDED_ERR_NO_CUDA_DRIVER,
 * STRIDED_ERR_UNSUPPORTED when the library was built without its kernels
 * (no nvcc), STRIDED_ERR_CUDA for a failing driver call. */
strided_status strided__copy_device_run(const strided_copy_plan *p, uintptr_t dst, uintptr_t src,
                                        void *stream, int device);

/* The two sides of a sub-byte copy on a device (copy/subbyte.c): the
 * device addresses of the bytes where each view's element 0 starts, the
 * bits between consecutive element offsets of each (the element's bits
 * when packed, 8 when padded or whole bytes), the bits of a value, and
 * whether the destination is padded (its high bits written 0). */
typedef struct strided__subbyte_sides {
    uintptr_t dst, src;
    int dst_step, src_step, width;
    bool dst_padded;
} strided__subbyte_sides;

/* The arguments of the sub-byte kernel for plan p (volume > 0), which the
 * host runs too (copy/subbyte.c): the plan's axes innermost first, extent-1
 * axes dropped, axis 0 counted in groups of destination elements (those
 * that fill whole bytes along a packed destination's run of stride 1, else
 * one), in chunks of a block's items; *work is the number of chunks (the
 * rows times the chunks of a row). Returns
 * STRIDED_ERR_OVERFLOW when a bit position of the plan's element 0 does not
 * fit in int64. */
strided_status strided__copy_subbyte_args(const strided_copy_plan *p,
                                          const strided__subbyte_sides *sides,
                                          strided_copy_subbyte_args *out, int64_t *work);

/* Run plan p (element strides and offsets, any itemsize) as a sub-byte
 * copy on device (the kernel subbyte of copy/kernels.cu), queued on
 * stream. The destination must keep the packed-layout rule, and the two
 * sides' bytes must not overlap. Returns as strided__copy_device_run, and
 * STRIDED_ERR_OVERFLOW for bit positions beyond int64. */
strided_status strided__copy_device_run_subbyte(const strided_copy_plan *p,
                                                const strided__subbyte_sides *sides, void *stream,
                                                int device);

/* Run plan q on device, queued on stream; dst0 and src0 are the device
 * addresses of the element 0 of the layouts q was made from (q's offsets
 * are added here). Returns as strided__copy_device_run. */
strided_status strided__copy_device_run_from(const strided_copy_plan *q, uintptr_t dst0,
                                             uintptr_t src0, void *stream, int device);

/* What strided_view_copy hands a device-side path: the checked views,
 * their plan (volume > 0), what their memory is, the stream and the device
 * whose primary context runs the copy (dst's device, else src's). */
typedef struct strided__copy_job {
    const strided_copy_plan *plan;
    const strided_view *dst, *src;
    strided_memory_info dst_info, src_info;
    void *stream;
    int device;
    bool blocking; /* the caller waits for the stream after the call */
    /* Where temporaries come from (strided_copy_temporaries; NULL: the
     * defaults: the device's current memory pool, pinned staging buffers
     * kept by the library). Borrowed. */
    strided_memory_resource *host_mr, *device_mr;
} strided__copy_job;

/* A device temporary of a copy: from job->device_mr when given (a
 * strided_buffer, released in stream order on the job's stream), else from
 * the device's current memory pool on the job's stream (cuMemAllocFrom-
 * PoolAsync / cuMemFreeAsync). The caller has entered the device's context. */
typedef struct strided__copy_temp {
    uintptr_t ptr; /* the device address; 0 when none */
    size_t size;
    strided_buffer *buffer; /* from device_mr, else NULL */
    void *stream;
} strided__copy_temp;

/* Allocate size (> 0) bytes on the job's stream; on failure *out is empty
 * and the status says why (STRIDED_ERR_OUT_OF_MEMORY names the size). */
strided_status strided__copy_temp_alloc(const strided__copy_job *job, size_t size,
                                        strided__copy_temp *out);
/* Give t back in stream order (after the work queued so far on its stream);
 * an empty t is fine. Failures are not reported (nothing can be done). */
void strided__copy_temp_free(strided__copy_temp *t);

#endif
