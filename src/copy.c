/*
 * copy.c: running copies (strided/copy.h). strided_copy_host plans, stages
 * overlapping copies through a temporary and hands the plan to the host
 * executor (copy_cpu.c); strided_view_copy picks the host or a device by
 * where the two views' memory is, and hands device copies to the device
 * executor (cuda/copy_cuda.c) or, for one contiguous run between pageable
 * host memory and a device, to one cuMemcpyAsync.
 */
#include <stdint.h>
#include <string.h>

#include "copy_internal.h"
#include "cuda/driver.h"

/* The bytes [lo, hi) a layout's elements occupy around element 0 at p.
 * Assumes: the layout's volume is positive. */
static void footprint(const strided_layout *l, const void *p, uintptr_t *lo, uintptr_t *hi)
{
    int64_t mn = 0, mx = -1;
    strided_layout_offset_bounds(l, &mn, &mx);
    /* Unsigned: wraps instead of overflowing for layouts no memory holds. */
    uintptr_t base = (uintptr_t)p, size = (uintptr_t)l->itemsize;
    *lo = base + (uintptr_t)mn * size;
    *hi = base + ((uintptr_t)mx + 1) * size;
}

static void run_plan(const strided_copy_plan *p, void *dst, const void *src, int nthreads)
{
    char *d = (char *)dst + (intptr_t)p->dst_offset * p->itemsize;
    const char *s = (const char *)src + (intptr_t)p->src_offset * p->itemsize;
    strided__copy_host_run(p, d, s, nthreads);
}

/* strided_copy_host with the layouts' plan made already (volume > 0). */
static strided_status copy_host_planned(const strided_copy_plan *plan, void *dst,
                                        const strided_layout *dst_layout, const void *src,
                                        const strided_layout *src_layout, int nthreads)
{
    const char *op = "copy";
    if (dst == NULL || src == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dst and src are required for a copy of %lld "
                             "elements",
                             (long long)plan->volume);
    uintptr_t dlo, dhi, slo, shi;
    footprint(dst_layout, dst, &dlo, &dhi);
    footprint(src_layout, src, &slo, &shi);
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
                                       src_layout->itemsize, STRIDED_ORDER_C, 0, NULL);
    if (status == STRIDED_OK)
        status = strided_layout_required_size_in_bytes(&dense, &bytes);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(&dense, src_layout, &in);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(dst_layout, &dense, &outp);
    if (status != STRIDED_OK)
        return status;
    void *tmp = strided__malloc((size_t)bytes);
    if (tmp == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                             "cannot allocate %lld bytes to stage an overlapping "
                             "copy",
                             (long long)bytes);
    run_plan(&in, tmp, src, nthreads);
    run_plan(&outp, dst, tmp, nthreads);
    strided__free(tmp);
    return STRIDED_OK;
}

strided_status strided_copy_host(void *dst, const strided_layout *dst_layout,
                                 const void *src, const strided_layout *src_layout,
                                 int nthreads)
{
    strided_copy_plan plan;
    strided_status status = strided_copy_plan_make(dst_layout, src_layout, &plan);
    if (status != STRIDED_OK || plan.volume == 0)
        return status;
    return copy_host_planned(&plan, dst, dst_layout, src, src_layout, nthreads);
}

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
static strided_status check_views(const char *op, const strided_view *dst,
                                  const strided_view *src, unsigned flags)
{
    if (dst == NULL || src == NULL || dst->buffer == NULL || src->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dst and src must be views with a buffer (not released)");
    if ((flags & STRIDED_COPY_BLOCKING) && (flags & STRIDED_COPY_NONBLOCKING))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "flags cannot ask for a blocking and a non-blocking copy "
                             "at once");
    if (dst->readonly)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The destination view is read-only.");
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

strided_status strided_view_copy(const strided_view *dst, const strided_view *src,
                                 void *stream, unsigned flags)
{
    const char *op = "copy";
    strided_status status = check_views(op, dst, src, flags);
    strided_copy_plan plan;
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(&dst->layout, &src->layout, &plan);
    if (status != STRIDED_OK || plan.volume == 0)
        return status;
    strided_memory_info di = strided_buffer_memory_info(dst->buffer);
    strided_memory_info si = strided_buffer_memory_info(src->buffer);
    bool no_stream = (flags & STRIDED_COPY_NO_STREAM) != 0;

    if (di.host_accessible && si.host_accessible) {
        /* On the host, after what the stream holds. A process without a
         * driver has queued nothing. */
        const strided__driver *cu = no_stream ? NULL : strided__cuda_quiet();
        if (cu != NULL) {
            int device = di.device_id >= 0 ? di.device_id : si.device_id >= 0 ? si.device_id : 0;
            status = wait_stream(op, cu, stream, device);
            if (status != STRIDED_OK)
                return status;
        }
        return copy_host_planned(&plan, strided_view_ptr(dst), &dst->layout,
                                 strided_view_ptr(src), &src->layout, 0);
    }

    if (no_stream)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "this copy runs on a device and needs a stream");
    const strided__driver *cu;
    status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    int device = di.device_accessible && di.device_id >= 0 ? di.device_id
                 : si.device_id >= 0                        ? si.device_id
                                                            : 0;
    bool both_on_device = di.device_accessible && si.device_accessible;
    bool blocking = (flags & STRIDED_COPY_BLOCKING) ||
                    (!(flags & STRIDED_COPY_NONBLOCKING) && !both_on_device);
    size_t isz = (size_t)plan.itemsize;
    if (both_on_device) {
        uintptr_t dlo, dhi, slo, shi;
        footprint(&dst->layout, (void *)strided_view_device_ptr(dst), &dlo, &dhi);
        footprint(&src->layout, (void *)strided_view_device_ptr(src), &slo, &shi);
        if (dlo < shi && slo < dhi)
            return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                                 "the source and destination share device memory; "
                                 "overlapping device copies are not implemented yet");
        uintptr_t d = strided_view_device_ptr(dst) + (uintptr_t)(plan.dst_offset * (int64_t)isz);
        uintptr_t s = strided_view_device_ptr(src) + (uintptr_t)(plan.src_offset * (int64_t)isz);
        status = strided__copy_device_run(&plan, d, s, stream, device);
    } else if (plan.kernel == STRIDED_COPY_CONTIGUOUS) {
        /* One run between host memory no device reaches and device memory:
         * one DMA (unified addressing takes host pointers). */
        uintptr_t d = (di.device_accessible ? strided_view_device_ptr(dst)
                                            : (uintptr_t)strided_view_ptr(dst)) +
                      (uintptr_t)(plan.dst_offset * (int64_t)isz);
        uintptr_t s = (si.device_accessible ? strided_view_device_ptr(src)
                                            : (uintptr_t)strided_view_ptr(src)) +
                      (uintptr_t)(plan.src_offset * (int64_t)isz);
        strided__context_scope scope;
        status = strided__context_enter(op, cu, device, &scope);
        if (status == STRIDED_OK) {
            status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyAsync((CUdeviceptr)d, (CUdeviceptr)s,
                                                              (size_t)plan.volume * isz,
                                                              (CUstream)stream));
            strided__context_leave(cu, &scope);
        }
    } else {
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "copies between pageable host memory and device memory "
                             "whose layouts are not one contiguous run (plan: %s) are "
                             "not implemented yet; copy through a pinned buffer",
                             strided_copy_kernel_name(plan.kernel));
    }
    if (status == STRIDED_OK && blocking)
        status = wait_stream(op, cu, stream, device);
    return status;
}
