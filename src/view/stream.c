/*
 * view/stream.c: ordering work between CUDA streams with events, the
 * current device, and a consumer's stream argument.
 */
#include <stdint.h>

#include "cuda/driver.h"
#include "base/base.h"
#include "strided/stream.h"

/* The legacy default stream has two names. */
static CUstream canonical(void *stream)
{
    return stream == NULL ? CU_STREAM_LEGACY : (CUstream)stream;
}

strided_status strided_stream_wait(void *consumer, void *producer, int device)
{
    const char *op = "stream_wait";
    if (canonical(consumer) == canonical(producer))
        return STRIDED_OK;
    const strided__driver *cu;
    strided_status status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    strided__context_scope scope;
    status = strided__context_enter(op, cu, device, &scope);
    if (status != STRIDED_OK)
        return status;
    CUevent event = NULL;
    status = STRIDED_CUDA_CHECK(op, cu->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuEventRecord(event, (CUstream)producer));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuStreamWaitEvent((CUstream)consumer, event, 0));
    /* Destroying an event whose wait is pending is allowed: the driver
     * releases it once the wait is done. */
    if (event != NULL)
        cu->cuEventDestroy(event);
    strided__context_leave(cu, &scope);
    return status;
}

strided_status strided_current_device(int *out)
{
    const char *op = "current_device";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    const strided__driver *cu;
    strided_status status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    CUcontext ctx = NULL;
    status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetCurrent(&ctx));
    if (status != STRIDED_OK)
        return status;
    CUdevice dev = 0;
    if (ctx != NULL) {
        status = STRIDED_CUDA_CHECK(op, cu->cuCtxGetDevice(&dev));
        if (status != STRIDED_OK)
            return status;
    }
    *out = (int)dev;
    return STRIDED_OK;
}

strided_status strided_consumer_stream_parse(bool negative, uint64_t magnitude,
                                             strided_consumer_stream *out)
{
    const char *op = "stream_ptr";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    if (negative && magnitude > 1)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "stream_ptr must be -1 (no synchronisation) or a CUDA stream "
                             "handle, got -%llu",
                             (unsigned long long)magnitude);
    out->sync = !negative || magnitude == 0;
    out->stream = out->sync ? (void *)(uintptr_t)magnitude : NULL;
    return STRIDED_OK;
}
