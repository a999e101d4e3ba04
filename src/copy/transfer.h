/*
 * copy/transfer.h: copies between host memory and device memory
 * (copy/transfer.c). Not installed.
 */
#ifndef STRIDED_COPY_TRANSFER_H
#define STRIDED_COPY_TRANSFER_H

#include "copy/launch.h"

/* One view in host memory (pageable or pinned), the other in device or
 * managed memory (copy/transfer.c says which path each pair of layouts
 * takes). Everything is queued on job->stream in job->device's primary
 * context; a path that works on the host waits for the stream before it
 * reads host memory and returns once its last DMA has used the staging
 * buffers (to the host: with the data in place). Returns
 * STRIDED_ERR_OVERFLOW when the host side's byte offsets leave int64, and
 * the errors of the driver, strided__copy_device_run,
 * strided__copy_temp_alloc and the staged transfers (copy/staging.h); on
 * failure every temporary is released. */
strided_status strided__copy_transfer(const strided__copy_job *job);

#endif
