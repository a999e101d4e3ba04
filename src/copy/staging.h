/*
 * copy/staging.h: transfers through pinned staging (copy/staging.c).
 * Not installed.
 *
 * Host memory that is not pinned (and host-side gathers and scatters of
 * any host memory) reaches a device through pinned staging buffers: two
 * buffers of one chunk each, filled on the host while the DMA of the other
 * one runs (double buffering). By default the buffers come from a
 * process-wide pool of pinned chunks made on first use (cuMemHostAlloc,
 * PORTABLE) and kept for the life of the process; a copy given a host
 * resource (job->host_mr) takes one allocation from it instead.
 */
#ifndef STRIDED_COPY_STAGING_H
#define STRIDED_COPY_STAGING_H

#include <stddef.h>
#include <stdint.h>

#include "copy/launch.h"

/* The default bytes of one staging chunk. The environment variable
 * STRIDED_STAGING_CHUNK_BYTES (a decimal byte count, MIN to MAX below),
 * read when the pool is first used, overrides it. */
#define STRIDED__STAGING_CHUNK_BYTES ((size_t)32 << 20)
#define STRIDED__STAGING_MIN_CHUNK_BYTES ((size_t)4096)
#define STRIDED__STAGING_MAX_CHUNK_BYTES ((size_t)1 << 30)

/* The staging chunk size in bytes that copies use now (the pool's, else
 * what STRIDED_STAGING_CHUNK_BYTES or the default will make it);
 * STRIDED_ERR_INVALID_ARGUMENT for a bad STRIDED_STAGING_CHUNK_BYTES. */
strided_status strided__staging_chunk_bytes(size_t *out);

/* An array in host memory that travels packed: its elements in C order
 * over shape, without gaps, at a device address. */
typedef struct strided__staged_array {
    int ndim; /* 1..64 */
    int itemsize;
    const int64_t *shape;   /* ndim extents, each > 0 */
    const int64_t *strides; /* ndim host strides, in elements */
    char *host;             /* host address of element (0,...,0) */
    uintptr_t device;       /* device address of the packed array */
} strided__staged_array;

/* Copy host array a into its packed device image, on the job's stream,
 * through staging: pieces of a (ranges of its outermost axes) are gathered
 * on the host into a staging buffer (strided__copy_host_run), each piece's
 * DMA overlapping the gathering of the next. Waits first for the work
 * queued on the stream (the host reads memory that work may write), and
 * returns once every DMA has read its staging buffer (the buffers are
 * reused), so the host array may change on return.
 * Assumes: the caller has entered the job's device context; every offset
 * of a's elements and their byte counts fit in int64 (the caller checked).
 * Returns STRIDED_ERR_CUDA, STRIDED_ERR_OUT_OF_MEMORY, the errors of the
 * host resource, STRIDED_ERR_INVALID_ARGUMENT for a bad
 * STRIDED_STAGING_CHUNK_BYTES; on failure everything taken is given back
 * (after the DMAs already queued have finished). */
strided_status strided__staged_to_device(const strided__copy_job *job,
                                         const strided__staged_array *a);

/* Copy the packed device image of host array a into a, on the job's
 * stream, through staging: each piece's DMA into a staging buffer
 * overlaps the host scatter of the one before. Returns when a holds every
 * element (after the work queued on the stream before the call).
 * Assumes and returns as strided__staged_to_device. */
strided_status strided__staged_to_host(const strided__copy_job *job,
                                       const strided__staged_array *a);

#endif
