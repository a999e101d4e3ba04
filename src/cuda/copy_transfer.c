/*
 * copy_transfer.c: copies between host memory (pageable or pinned) and
 * device or managed memory (strided__copy_transfer, copy_internal.h).
 */
#include "copy_internal.h"

#include "cuda/driver.h"

#define OP "copy"

/* The address a device uses for a view's element 0. */
static uintptr_t device_address(const strided_view *v, const strided_memory_info *info)
{
    return info->device_accessible ? strided_view_device_ptr(v) : (uintptr_t)strided_view_ptr(v);
}

strided_status strided__copy_transfer(const strided__copy_job *job)
{
    const strided_copy_plan *plan = job->plan;
    int64_t isz = plan->itemsize;
    uintptr_t d = device_address(job->dst, &job->dst_info) + (uintptr_t)(plan->dst_offset * isz);
    uintptr_t s = device_address(job->src, &job->src_info) + (uintptr_t)(plan->src_offset * isz);
    if (job->dst_info.device_accessible && job->src_info.device_accessible)
        return strided__copy_device_run(plan, d, s, job->stream, job->device);
    if (plan->kernel != STRIDED_COPY_CONTIGUOUS)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, OP,
                             "copies between pageable host memory and device memory "
                             "whose layouts are not one contiguous run (plan: %s) are "
                             "not implemented yet; copy through a pinned buffer",
                             strided_copy_kernel_name(plan->kernel));
    /* One run: one DMA (unified addressing takes host pointers). */
    const strided__driver *cu;
    strided_status status = strided__cuda(OP, &cu);
    strided__context_scope scope;
    if (status == STRIDED_OK)
        status = strided__context_enter(OP, cu, job->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(OP, cu->cuMemcpyAsync((CUdeviceptr)d, (CUdeviceptr)s,
                                                      (size_t)(plan->volume * isz),
                                                      (CUstream)job->stream));
    strided__context_leave(cu, &scope);
    return status;
}
