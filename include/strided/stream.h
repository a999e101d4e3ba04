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

#include <stdbool.h>
#include <stdint.h>

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
STRIDED_API strided_status strided_stream_wait(void *consumer, void *producer, int device);

/* Where a consumer will use imported data: the stream argument of the
 * DLPack and CUDA Array Interface imports (their stream_ptr). */
typedef struct strided_consumer_stream {
    bool sync;    /* false for -1: order nothing */
    void *stream; /* the CUstream, when sync (0: the legacy default stream) */
} strided_consumer_stream;

/* Read a consumer's stream argument, an integer given as its sign and
 * magnitude so that every handle from 0 to 2**64 - 1 can be given: -1 asks
 * for no ordering; 0 and above are stream handles.
 *   negative, magnitude  the integer: -magnitude when negative
 *   out                  out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out and for an integer
 * below -1 ("stream_ptr must be -1 (no synchronisation) or a CUDA stream
 * handle, got -5"). */
STRIDED_API strided_status strided_consumer_stream_parse(bool negative, uint64_t magnitude,
                                                         strided_consumer_stream *out);

/* The device of the calling thread's current CUDA context, or 0 (the
 * default device, as the CUDA runtime picks) when no context is current.
 * Returns STRIDED_ERR_NO_CUDA_DRIVER without a driver, STRIDED_ERR_CUDA for
 * a failing driver call, STRIDED_ERR_INVALID_ARGUMENT for a NULL out. */
STRIDED_API strided_status strided_current_device(int *out);

#ifdef __cplusplus
}
#endif

#endif
