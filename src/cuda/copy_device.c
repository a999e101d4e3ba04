/*
 * copy_device.c: copies between two views in device or managed memory
 * (strided__copy_between_devices, copy_internal.h), and the device
 * temporaries copies use (strided__copy_temp_alloc / _free).
 */
#include "copy_internal.h"

#include "cuda/driver.h"

#define OP "copy"

strided_status strided__copy_temp_alloc(const strided__copy_job *job, size_t size,
                                        strided__copy_temp *out)
{
    *out = (strided__copy_temp){0, size, NULL, job->stream};
    if (job->device_mr != NULL) {
        strided_status status = strided_buffer_alloc(job->device_mr, size, job->stream,
                                                     &out->buffer);
        if (status != STRIDED_OK)
            return status;
        strided_memory_info info = strided_buffer_memory_info(out->buffer);
        if (!info.device_accessible) {
            strided_buffer_release(out->buffer);
            out->buffer = NULL;
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, OP,
                                 "the device allocator gave memory no device can reach");
        }
        out->ptr = info.device_address;
        return STRIDED_OK;
    }
    const strided__driver *cu;
    strided_status status = strided__cuda(OP, &cu);
    CUdevice dev = 0;
    CUmemoryPool pool = NULL;
    CUdeviceptr p = 0;
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGet(&dev, job->device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGetMemPool(&pool, dev));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            OP, cu->cuMemAllocFromPoolAsync(&p, size, pool, (CUstream)job->stream));
    if (status == STRIDED_OK)
        out->ptr = (uintptr_t)p;
    return status;
}

void strided__copy_temp_free(strided__copy_temp *t)
{
    if (t->buffer != NULL) {
        strided_buffer_set_deallocation_stream(t->buffer, t->stream);
        strided_buffer_release(t->buffer);
    } else if (t->ptr != 0) {
        const strided__driver *cu = strided__cuda_quiet();
        if (cu != NULL)
            (void)cu->cuMemFreeAsync((CUdeviceptr)t->ptr, (CUstream)t->stream);
    }
    t->ptr = 0;
    t->buffer = NULL;
}

strided_status strided__copy_between_devices(const strided__copy_job *job)
{
    const strided_copy_plan *plan = job->plan;
    uintptr_t dst = strided_view_device_ptr(job->dst), src = strided_view_device_ptr(job->src);
    uintptr_t dlo, dhi, slo, shi;
    strided__copy_footprint(&job->dst->layout, dst, &dlo, &dhi);
    strided__copy_footprint(&job->src->layout, src, &slo, &shi);
    if (dlo < shi && slo < dhi)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, OP,
                             "the source and destination share device memory; "
                             "overlapping device copies are not implemented yet");
    int64_t isz = plan->itemsize;
    return strided__copy_device_run(plan, dst + (uintptr_t)(plan->dst_offset * isz),
                                    src + (uintptr_t)(plan->src_offset * isz), job->stream,
                                    job->device);
}
