/*
 * copy/device.h: copies between two views in device or managed memory
 * (copy/device.c). Not installed.
 */
#ifndef STRIDED_COPY_DEVICE_H
#define STRIDED_COPY_DEVICE_H

#include "copy/launch.h"

/* Both views in device or managed memory, on one device or two; queued on
 * job->stream, which belongs to job->device (the destination's device:
 * managed memory counts as its device_id's).
 *   Overlap: when the two sides' bytes meet, the result is as if the
 *   source had been read in full first (staged through a dense device
 *   temporary); sides that map every element onto itself copy nothing.
 *   Two devices: a contiguous plan is one cuMemcpyAsync; otherwise the
 *   plan's kernel runs on the destination's device, reading the source's
 *   memory directly where that device can (peer access is enabled once per
 *   ordered pair of devices), or from a temporary on the destination's
 *   device that the source's footprint (when at most twice its payload)
 *   or the source packed on its own device was copied into. Work on the
 *   source's device goes on its per-thread default stream, ordered with
 *   events after the work queued on job->stream before the call and before
 *   the work queued after it. STRIDED_COPY_NO_PEER (not "" or "0") makes
 *   copies between devices ignore peer access.
 * Returns STRIDED_ERR_OVERFLOW when a side's byte offsets leave int64, the
 * errors of strided__copy_device_run and strided__copy_temp_alloc,
 * STRIDED_ERR_CUDA for a failing driver call. On failure every temporary
 * and event is released (in stream order where work was queued). */
strided_status strided__copy_between_devices(const strided__copy_job *job);

#endif
