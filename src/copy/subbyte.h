/*
 * copy/subbyte.h: copies of sub-byte elements that are not plain bytes
 * (copy/subbyte.c): between packed views of any layouts the packed-layout
 * rule allows, and conversions between packed and padded views of one
 * sub-byte type. Not installed.
 */
#ifndef STRIDED_COPY_SUBBYTE_H
#define STRIDED_COPY_SUBBYTE_H

#include <stdbool.h>

#include "copy/launch.h"
#include "strided/copy.h"
#include "strided/view.h"

/* Whether a copy from src into dst moves sub-byte elements bit by bit: a
 * view of packed elements that are not whole bytes on either side, or a
 * sub-byte type padded on one side and packed on the other.
 * Assumes: dst and src are not NULL. */
bool strided__copy_is_subbyte(const strided_view *dst, const strided_view *src);

/* Copy src into dst element by element, each element's value (bits *
 * lanes of the dtype) read from its bits (packed) or from the low bits of
 * its byte (padded) and written the same way, the other bits of the
 * destination's bytes kept; padded destinations get their high bits 0, as
 * ml_dtypes writes them. plan is the layouts' plan (strides in elements).
 * Both views' memory is host-accessible; they may overlap (the source's
 * bytes are then read first into a temporary). Goes by the device
 * kernel's arguments (strided__copy_subbyte_args): runs along axis 0 of
 * stride 1 on both sides by bytes (the same packed bits: whole bytes and a
 * masked last byte; packed to padded and back: a group's bytes unpacked
 * or packed at once), transposes by tiles, the rest by the kernel's work
 * items; spans of rows and tiles on OpenMP threads for large copies: they
 * never share a destination byte.
 * Returns STRIDED_ERR_INVALID_ARGUMENT under op when either view has no
 * dtype; STRIDED_ERR_OUT_OF_MEMORY for the temporary; STRIDED_ERR_OVERFLOW
 * from strided__copy_subbyte_args.
 * Assumes: check_views passed (the dtypes are equal), plan->volume > 0. */
strided_status strided__copy_subbyte_host(const char *op, const strided_copy_plan *plan,
                                          const strided_view *dst, const strided_view *src);

/* The same on a device, for views of device or managed memory: the
 * kernel subbyte (copy/launch.c) on job->device, queued on job->stream.
 * Returns STRIDED_ERR_UNSUPPORTED under op when the two views are on
 * different devices or their bytes overlap; what
 * strided__copy_device_run_subbyte returns.
 * Assumes: what strided__copy_subbyte_host assumes; both views'
 * memory is device-accessible. */
strided_status strided__copy_subbyte_device(const char *op, const strided__copy_job *job);

/* The same between host memory (pageable or pinned; the destination when
 * dst_host, else the source) and device or managed memory: the host
 * view's bytes go to a device temporary on the job's stream (for a host
 * destination first in, so that the bits of its bytes outside the view are
 * kept, and back after the kernel), and the kernel runs on job->device.
 * Returns STRIDED_ERR_INVALID_ARGUMENT under op when either view has no
 * dtype; the errors of the temporary, the driver's copies and
 * strided__copy_device_run_subbyte. */
strided_status strided__copy_subbyte_transfer(const char *op, const strided__copy_job *job,
                                              bool dst_host);

#endif
