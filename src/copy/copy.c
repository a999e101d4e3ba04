/*
 * copy/copy.c: running copies (strided/copy.h). strided_copy_host plans, stages
 * overlapping copies through a temporary and hands the plan to the host
 * executor (copy/host.c); strided_view_copy picks the host or a device by
 * where the two views' memory is: host-accessible memory on both sides runs
 * here, host memory against device memory is a transfer
 * (copy/transfer.c), device or managed memory on both sides runs on
 * the devices (copy/device.c, kernel launches in copy/launch.c).
 */
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "copy/device.h"
#include "copy/host.h"
#include "copy/launch.h"
#include "copy/plan.h"
#include "copy/subbyte.h"
#include "copy/transfer.h"
#include "cuda/driver.h"
#include "memory/memory.h"

/* The bytes [lo, hi) a layout's elements occupy around element 0 at
 * address base (unsigned arithmetic: wraps instead of overflowing for
 * layouts no memory holds). Assumes: the layout's volume is positive. */
static void footprint(const strided_layout *l, uintptr_t base, uintptr_t *lo, uintptr_t *hi)
{
    int64_t mn = 0, mx = -1;
    strided_layout_offset_bounds(l, &mn, &mx);
    /* The bounds count from offset 0; base is element 0, slice_offset on. */
    mn -= l->slice_offset;
    mx -= l->slice_offset;
    uintptr_t size = (uintptr_t)l->itemsize;
    *lo = base + (uintptr_t)mn * size;
    *hi = base + ((uintptr_t)mx + 1) * size;
}

static void run_plan(const strided_copy_plan *p, void *dst, const void *src, int nthreads)
{
    char *d = (char *)dst + (intptr_t)p->dst_offset * p->itemsize;
    const char *s = (const char *)src + (intptr_t)p->src_offset * p->itemsize;
    strided__copy_host_run(p, d, s, nthreads);
}

/* strided_copy_host with the layouts' plan made already (volume > 0). An
 * overlapping copy's temporary comes from mr when given (on stream), else
 * from the heap. */
static strided_status copy_host_planned(const strided_copy_plan *plan, void *dst,
                                        const strided_layout *dst_layout, const void *src,
                                        const strided_layout *src_layout, int nthreads,
                                        strided_memory_resource *mr, void *stream)
{
    const char *op = "copy";
    if (dst == NULL || src == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dst and src are required for a copy of %lld "
                             "elements",
                             (long long)plan->volume);
    uintptr_t dlo, dhi, slo, shi;
    footprint(dst_layout, (uintptr_t)dst, &dlo, &dhi);
    footprint(src_layout, (uintptr_t)src, &slo, &shi);
    if (dlo >= shi || slo >= dhi) {
        run_plan(plan, dst, src, nthreads);
        return STRIDED_OK;
    }
    /* The source's bytes meet the destination's: read the source in full
     * into a dense temporary first, then copy from there. */
    strided_layout dense;
    strided_copy_plan in, outp;
    int64_t bytes = 0;
    strided_status status = strided_layout_init_dense(&dense, src_layout->ndim, src_layout->shape,
                                                      src_layout->itemsize, STRIDED_ORDER_C, 0,
                                                      NULL);
    if (status == STRIDED_OK)
        status = strided_layout_required_size_in_bytes(&dense, &bytes);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(&dense, src_layout, &in);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(dst_layout, &dense, &outp);
    if (status != STRIDED_OK)
        return status;
    strided_buffer *buffer = NULL;
    void *tmp;
    if (mr != NULL) {
        status = strided__buffer_alloc_temporary(mr, (size_t)bytes, stream, -1, &buffer);
        if (status != STRIDED_OK)
            return status;
        tmp = strided_buffer_ptr(buffer);
    } else {
        tmp = strided__malloc((size_t)bytes);
        if (tmp == NULL)
            return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                                 "cannot allocate %lld bytes to stage an overlapping "
                                 "copy",
                                 (long long)bytes);
    }
    run_plan(&in, tmp, src, nthreads);
    run_plan(&outp, dst, tmp, nthreads);
    if (buffer != NULL)
        strided_buffer_release(buffer);
    else
        strided__free(tmp);
    return STRIDED_OK;
}

strided_status strided_copy_host(void *dst, const strided_layout *dst_layout, const void *src,
                                 const strided_layout *src_layout, int nthreads)
{
    if (dst_layout == NULL || src_layout == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "copy",
                             "dst_layout and src_layout are required");
    if (nthreads < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "copy",
                             "nthreads must be 0 (by the copy's size) or a "
                             "positive number of threads, got %d",
                             nthreads);
    strided_copy_plan plan;
    strided_status status = strided__copy_plan_cached(dst_layout, src_layout, &plan);
    if (status != STRIDED_OK || plan.volume == 0)
        return status;
    return copy_host_planned(&plan, dst, dst_layout, src, src_layout, nthreads, NULL, NULL);
}

/* What a copy that waits for its stream is told when the stream captures
 * a graph. */
#define WAIT_HINT                                                                              \
    "pass a non-blocking copy (STRIDED_COPY_NONBLOCKING; blocking=False in Python) of device " \
    "or pinned memory, and wait for the graph's stream after launching it"

/* Wait on the host for the work queued on stream, in device's context. */
static strided_status wait_stream(const char *op, const strided__driver *cu, void *stream,
                                  int device)
{
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, cu, device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(op, cu->cuStreamSynchronize((CUstream)stream));
    strided__context_leave(cu, &scope);
    return status;
}

/* The checks of strided_view_copy that the layouts alone cannot make. */
static strided_status check_views(const char *op, const strided_view *dst, const strided_view *src,
                                  unsigned flags)
{
    if (dst == NULL || src == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "dst and src are required");
    if (dst->buffer == NULL || src->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dst and src must be views with a buffer (not released)");
    if ((flags & STRIDED_COPY_BLOCKING) && (flags & STRIDED_COPY_NONBLOCKING))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "flags cannot ask for a blocking and a non-blocking copy "
                             "at once");
    if (dst->readonly)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The destination view is read-only.");
    if ((strided_view_packed_bits(dst) > 0 || strided_view_packed_bits(src) > 0) &&
        (!dst->has_dtype || !src->has_dtype))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a copy of packed sub-byte elements needs the dtype of both views "
                             "(the other view's elements would be read as bytes)");
    if (dst->has_dtype && src->has_dtype && !strided_dtype_equal(dst->dtype, src->dtype)) {
        char a[64], b[64];
        strided_dtype_format(dst->dtype, a, sizeof a);
        strided_dtype_format(src->dtype, b, sizeof b);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The destination and source dtypes must match. Got dst "
                             "dtype:%s and src dtype:%s",
                             a, b);
    }
    return STRIDED_OK;
}

strided_status strided_view_copy(const strided_view *dst, const strided_view *src, void *stream,
                                 unsigned flags)
{
    return strided_view_copy_ex(dst, src, stream, flags, NULL);
}

strided_status strided_view_copy_ex(const strided_view *dst, const strided_view *src, void *stream,
                                    unsigned flags, const strided_copy_temporaries *temporaries)
{
    const char *op = "copy";
    strided_status status = check_views(op, dst, src, flags);
    strided_copy_plan plan;
    if (status == STRIDED_OK)
        status = strided__copy_plan_cached(&dst->layout, &src->layout, &plan);
    if (status != STRIDED_OK || plan.volume == 0)
        return status;
    strided_memory_info di = strided_buffer_memory_info(dst->buffer);
    strided_memory_info si = strided_buffer_memory_info(src->buffer);
    bool no_stream = (flags & STRIDED_COPY_NO_STREAM) != 0;

    bool subbyte = strided__copy_is_subbyte(dst, src);
    if (di.host_accessible && si.host_accessible) {
        /* On the host, after what the stream holds. A process without a
         * driver has queued nothing. */
        const strided__driver *cu = no_stream ? NULL : strided__cuda_quiet();
        if (cu != NULL) {
            int device = di.device_id >= 0 ? di.device_id : si.device_id >= 0 ? si.device_id : 0;
            status = strided__refuse_in_capture(op, cu, stream, device,
                                                "a copy between host-accessible memory", WAIT_HINT);
            if (status == STRIDED_OK)
                status = wait_stream(op, cu, stream, device);
            if (status != STRIDED_OK)
                return status;
        }
        if (subbyte)
            return strided__copy_subbyte_host(op, &plan, dst, src);
        return copy_host_planned(&plan, strided_view_ptr(dst), &dst->layout, strided_view_ptr(src),
                                 &src->layout, 0, temporaries ? temporaries->host : NULL, stream);
    }

    if (no_stream)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "this copy runs on a device and needs a stream");
    const strided__driver *cu;
    status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    /* Host memory (pageable or pinned) against device or managed memory is
     * a transfer; device and managed memory on both sides run on devices,
     * the destination's unless it is host memory. */
    bool dst_host = di.kind == STRIDED_MEMORY_HOST || di.kind == STRIDED_MEMORY_PINNED;
    bool src_host = si.kind == STRIDED_MEMORY_HOST || si.kind == STRIDED_MEMORY_PINNED;
    int device = !dst_host && di.device_id >= 0   ? di.device_id
                 : !src_host && si.device_id >= 0 ? si.device_id
                                                  : 0;
    bool blocking = (flags & STRIDED_COPY_BLOCKING) ||
                    (!(flags & STRIDED_COPY_NONBLOCKING) && (dst_host || src_host));
    strided__copy_job job = {&plan,
                             dst,
                             src,
                             di,
                             si,
                             stream,
                             device,
                             blocking,
                             temporaries ? temporaries->host : NULL,
                             temporaries ? temporaries->device : NULL};
    if (blocking && (status = strided__refuse_in_capture(op, cu, stream, device, "a blocking copy",
                                                         WAIT_HINT)) != STRIDED_OK)
        return status;
    if (subbyte && (dst_host || src_host) &&
        (status = strided__refuse_in_capture(op, cu, stream, device,
                                             "a copy of sub-byte elements between host and "
                                             "device memory",
                                             "copy outside the capture")) != STRIDED_OK)
        return status;
    if (subbyte && (dst_host || src_host))
        status = strided__copy_subbyte_transfer(op, &job, dst_host);
    else if (subbyte)
        status = strided__copy_subbyte_device(op, &job);
    else
        status = dst_host || src_host ? strided__copy_transfer(&job)
                                      : strided__copy_between_devices(&job);
    if (status == STRIDED_OK && blocking)
        status = wait_stream(op, cu, stream, device);
    return status;
}
