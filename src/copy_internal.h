/*
 * copy_internal.h: what the copy modules share. copy_plan.c makes plans;
 * copy_cpu.c runs them on the host; cuda/copy_cuda.c runs them on a device.
 */
#ifndef STRIDED_COPY_INTERNAL_H
#define STRIDED_COPY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "strided/copy.h"

/* Run plan p on the host. dst and src point at the plan's element 0 (the
 * views' element 0 plus dst_offset / src_offset elements). Source and
 * destination do not overlap (the caller stages overlapping copies).
 * nthreads: 0 = choose by size, 1 = the calling thread only, n = at most n.
 * Never fails. */
void strided__copy_host_run(const strided_copy_plan *p, char *dst, const char *src,
                            int nthreads);

/* Run plan p on device (its primary context made current), queued on
 * stream. dst and src are device addresses of the plan's element 0; both
 * must be reachable from that device. Returns STRIDED_ERR_NO_CUDA_DRIVER,
 * STRIDED_ERR_UNSUPPORTED when the library was built without its kernels
 * (no nvcc), STRIDED_ERR_CUDA for a failing driver call. */
strided_status strided__copy_device_run(const strided_copy_plan *p, uintptr_t dst,
                                        uintptr_t src, void *stream, int device);

/* The bytes [lo, hi) a layout's elements occupy around element 0 at
 * address base (unsigned arithmetic: wraps instead of overflowing for
 * layouts no memory holds). Assumes: the layout's volume is positive. */
void strided__copy_footprint(const strided_layout *l, uintptr_t base, uintptr_t *lo,
                             uintptr_t *hi);

/* What strided_view_copy hands a device-side executor: the checked views,
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
    uintptr_t ptr;           /* the device address; 0 when none */
    size_t size;
    strided_buffer *buffer;  /* from device_mr, else NULL */
    void *stream;
} strided__copy_temp;

/* Allocate size (> 0) bytes on the job's stream; on failure *out is empty
 * and the status says why (STRIDED_ERR_OUT_OF_MEMORY names the size). */
strided_status strided__copy_temp_alloc(const strided__copy_job *job, size_t size,
                                        strided__copy_temp *out);
/* Give t back in stream order (after the work queued so far on its stream);
 * an empty t is fine. Failures are not reported (nothing can be done). */
void strided__copy_temp_free(strided__copy_temp *t);

/* Both views in device or managed memory (cuda/copy_device.c), on one
 * device or two. */
strided_status strided__copy_between_devices(const strided__copy_job *job);

/* One view in host memory (pageable or pinned), the other in device or
 * managed memory (cuda/copy_transfer.c). */
strided_status strided__copy_transfer(const strided__copy_job *job);

#endif
