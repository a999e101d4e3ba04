/*
 * strided/stream.h: ordering work between CUDA streams, and the current
 * device.
 *
 * Streams cross the API as opaque CUstream values (void *): NULL and 1 are
 * the legacy default stream, 2 the per-thread default stream, anything else
 * a stream a caller created. Ordering is done on the device, never by
 * blocking the host: the DLPack and CUDA Array Interface rules ask a
 * consumer to make its stream wait for the producer's pending work, and
 * this is how.
 *
 * Ownership: nothing is retained; the event used is destroyed before the
 * call returns (the wait it set up stays in effect).
 */
#ifndef STRIDED_STREAM_H
#define STRIDED_STREAM_H

#include "strided/api.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make the work queued on consumer from now on wait, on the device, for the
 * work queued on producer so far: an event (timing disabled) is recorded on
 * producer and waited on by consumer. The host does not block. The same
 * stream on both sides (NULL and 1 count as the same) needs nothing and
 * makes no driver call.
 *   consumer, producer  the streams (borrowed)
 *   device              the device whose primary context the calls run in:
 *                       the device the streams belong to
 * Returns STRIDED_ERR_NO_CUDA_DRIVER without a driver,
 * STRIDED_ERR_INVALID_ARGUMENT for a device that does not exist,
 * STRIDED_ERR_CUDA for a failing driver call (the event is destroyed
 * either way). */
STRIDED_API strided_status strided_stream_wait(void *consumer, void *producer,
                                               int device);

/* The device of the calling thread's current CUDA context, or 0 (the
 * default device, as the CUDA runtime picks) when no context is current.
 * Returns STRIDED_ERR_NO_CUDA_DRIVER without a driver, STRIDED_ERR_CUDA for
 * a failing driver call, STRIDED_ERR_INVALID_ARGUMENT for a NULL out. */
STRIDED_API strided_status strided_current_device(int *out);

#ifdef __cplusplus
}
#endif

#endif
