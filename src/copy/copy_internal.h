/*
 * copy/copy_internal.h: what the copy modules share. copy_plan.c makes plans;
 * copy_cpu.c runs them on the host; copy/launch.c runs them on a device.
 */
#ifndef STRIDED_COPY_INTERNAL_H
#define STRIDED_COPY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "memory/memory.h"
#include "strided/copy.h"

/* Run plan p on the host. dst and src point at the plan's element 0 (the
 * views' element 0 plus dst_offset / src_offset elements). Source and
 * destination do not overlap (the caller stages overlapping copies).
 * nthreads: 0 = choose by size, 1 = the calling thread only, n = at most n.
 * Never fails. */
void strided__copy_host_run(const strided_copy_plan *p, char *dst, const char *src,
                            int nthreads);

/* Run plan p on device (its primary context made current), queued on
 * stream. dst and src are device addresses of the plan's element 0; both
 * must be reachable from that device. Returns STRIDED_ERR_NO_CUDA_DRIVER,
 * STRIDED_ERR_UNSUPPORTED when the library was built without its kernels
 * (no nvcc), STRIDED_ERR_CUDA for a failing driver call. */
strided_status strided__copy_device_run(const strided_copy_plan *p, uintptr_t dst,
                                        uintptr_t src, void *stream, int device);

/* For the tests: how many pieces of work of the host executor ran the
 * named specialised path ("transpose_vector", "reverse_vector",
 * "stride2_vector", "stride3_vector", "stride4_vector", "planes") since
 * the last reset, -1 for another name; and the reset. */
int64_t strided__copy_cpu_path_runs(const char *name);
void strided__copy_cpu_path_reset(void);

/* strided_copy_plan_make through the calling thread's plan cache
 * (copy_plan.c): the same plan in every field it defines (the header and
 * the first ndim axes; the axes beyond ndim are not written) and the same
 * errors, with their messages, every time. A pair is looked up by both
 * layouts' ndim, itemsize, implicit_strides, shape and strides (a hash,
 * then an exact comparison); only pairs that plan successfully are kept.
 * The cache is per thread (no locks), holds 64 plans, and is
 * freed when the thread exits. When it cannot get memory it plans without
 * keeping the plan. */
strided_status strided__copy_plan_cached(const strided_layout *dst,
                                         const strided_layout *src, strided_copy_plan *out);

/* What the calling thread's plan cache has done since it was made (or
 * cleared), for tests and benchmarks. */
typedef struct strided__plan_cache_stats {
    uint64_t hits, misses; /* misses: lookups of pairs that planned */
    uint64_t evictions;    /* kept plans replaced by another pair's */
    int entries, capacity; /* plans kept now; the most it keeps */
} strided__plan_cache_stats;

void strided__copy_plan_cache_stats(strided__plan_cache_stats *out);
/* Drop the calling thread's kept plans, free the cache's memory and zero
 * its counters (the hash mask goes back to all ones). */
void strided__copy_plan_cache_clear(void);
/* For tests: and every hash of this thread's cache with mask (0: every
 * pair has the same hash and lands in the same set). */
void strided__copy_plan_cache_set_hash_mask(uint64_t mask);

/* The bytes [lo, hi) a layout's elements occupy around element 0 at
 * address base (unsigned arithmetic: wraps instead of overflowing for
 * layouts no memory holds). Assumes: the layout's volume is positive. */
void strided__copy_footprint(const strided_layout *l, uintptr_t base, uintptr_t *lo,
                             uintptr_t *hi);

/* The lowest and highest element offsets one side of plan p reaches from
 * the plan's element 0 (strides: p->dst_strides or p->src_strides),
 * checked to fit in int64 also as bytes (and so every offset between
 * them); STRIDED_ERR_OVERFLOW ("the bytes of a copy of (shape):(strides)
 * (itemsize n) do not fit in int64") otherwise. */
strided_status strided__copy_plan_reach(const strided_copy_plan *p, const int64_t *strides,
                                        int64_t *lo, int64_t *hi);
/* That failure, for byte counts of one side of p found not to fit. */
strided_status strided__copy_plan_overflow(const strided_copy_plan *p, const int64_t *strides);

/* A copy through a dense temporary: pack moves the source's distinct
 * elements into it, unpack moves them from there into the destination
 * (broadcast again where the source repeats). The temporary has the plan's
 * axes, extent 1 where the source's stride is 0, in C order, and bytes
 * bytes (the source's payload). Used by overlapping and cross-device copies
 * and by host gathers into the device. */
typedef struct strided__copy_packing {
    strided_copy_plan pack, unpack;
    size_t bytes;
} strided__copy_packing;

strided_status strided__copy_packing_make(const strided_copy_plan *p, strided__copy_packing *out);

/* One temporary of size bytes from resource mr on stream (a copy's
 * allocator), for the host (device < 0) or for work on device. Beyond the
 * checks of every allocation (strided/resource.h), the memory must be
 * reachable from where the copy uses it: memory of a user's resource is
 * classified by the driver, not taken at the resource's word. Otherwise
 * STRIDED_ERR_INVALID_ARGUMENT ("the host allocator gave memory the host
 * cannot reach (...)", "the device allocator gave memory of another device
 * (...)"), the buffer given back unused. *out holds one reference on
 * success and is NULL on failure. */
strided_status strided__copy_temp_buffer(strided_memory_resource *mr, size_t size, void *stream,
                                         int device, strided_buffer **out);

/* What strided_view_copy hands a device-side executor: the checked views,
 * their plan (volume > 0), what their memory is, the stream and the device
 * whose primary context runs the copy (dst's device, else src's). */
typedef struct strided__copy_job {
    const strided_copy_plan *plan;
    const strided_view *dst, *src;
    strided_memory_info dst_info, src_info;
    void *stream;
    int device;
    bool blocking; /* the caller waits for the stream after the call */
    /* Where temporaries come from (strided_copy_temporaries; NULL: the
     * defaults: the device's current memory pool, pinned staging buffers
     * kept by the library). Borrowed. */
    strided_memory_resource *host_mr, *device_mr;
} strided__copy_job;

/* A device temporary of a copy: from job->device_mr when given (a
 * strided_buffer, released in stream order on the job's stream), else from
 * the device's current memory pool on the job's stream (cuMemAllocFrom-
 * PoolAsync / cuMemFreeAsync). The caller has entered the device's context. */
typedef struct strided__copy_temp {
    uintptr_t ptr;           /* the device address; 0 when none */
    size_t size;
    strided_buffer *buffer;  /* from device_mr, else NULL */
    void *stream;
} strided__copy_temp;

/* Run plan q on device, queued on stream; dst0 and src0 are the device
 * addresses of the element 0 of the layouts q was made from (q's offsets
 * are added here). */
strided_status strided__copy_device_run_from(const strided_copy_plan *q, uintptr_t dst0,
                                             uintptr_t src0, void *stream, int device);

/* Allocate size (> 0) bytes on the job's stream; on failure *out is empty
 * and the status says why (STRIDED_ERR_OUT_OF_MEMORY names the size). */
strided_status strided__copy_temp_alloc(const strided__copy_job *job, size_t size,
                                        strided__copy_temp *out);
/* Give t back in stream order (after the work queued so far on its stream);
 * an empty t is fine. Failures are not reported (nothing can be done). */
void strided__copy_temp_free(strided__copy_temp *t);

/* Both views in device or managed memory (copy/device.c), on one
 * device or two; queued on job->stream, which belongs to job->device (the
 * destination's device: managed memory counts as its device_id's).
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

/* One view in host memory (pageable or pinned), the other in device or
 * managed memory (copy/transfer.c). */
strided_status strided__copy_transfer(const strided__copy_job *job);

/* Transfers through pinned staging (copy/staging.c).
 *
 * Host memory that is not pinned (and host-side gathers and scatters of
 * any host memory) reaches a device through pinned staging buffers: two
 * buffers of one chunk each, filled on the host while the DMA of the other
 * one runs (double buffering). By default the buffers come from a
 * process-wide pool of pinned chunks made on first use (cuMemHostAlloc,
 * PORTABLE) and kept for the life of the process; a copy given a host
 * resource (job->host_mr) takes one allocation from it instead. */

/* The default bytes of one staging chunk. The environment variable
 * STRIDED_STAGING_CHUNK_BYTES (a decimal byte count, MIN to MAX below),
 * read when the pool is first used, overrides it. */
#define STRIDED__STAGING_CHUNK_BYTES ((size_t)32 << 20)
#define STRIDED__STAGING_MIN_CHUNK_BYTES ((size_t)4096)
#define STRIDED__STAGING_MAX_CHUNK_BYTES ((size_t)1 << 30)

/* An array in host memory that travels packed: its elements in C order
 * over shape, without gaps, at a device address. */
typedef struct strided__staged_array {
    int ndim;               /* 1..64 */
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

/* The staging chunk size in bytes that copies use now (the pool's, else
 * what STRIDED_STAGING_CHUNK_BYTES or the default will make it);
 * STRIDED_ERR_INVALID_ARGUMENT for a bad STRIDED_STAGING_CHUNK_BYTES. */
strided_status strided__staging_chunk_bytes(size_t *out);

/* For tests: free the pool's pinned chunks that no copy is using and make
 * later copies use chunks of chunk_bytes (0: decide again, from
 * STRIDED_STAGING_CHUNK_BYTES or the default). Chunks in use when this is
 * called are freed when their copy gives them back, if their size no
 * longer applies. Needs the driver loaded (does nothing otherwise). */
void strided__staging_reset(size_t chunk_bytes);

/* For tests: the way the calling thread's last strided__copy_transfer
 * moved its data: "dma" (one cuMemcpyAsync between pinned memory and the
 * device), "staged" (one contiguous run through staging), "footprint" (to
 * the device: the source's footprint DMAed into a device temporary, then
 * the plan on the device), "dense" (to the host: the plan on the device
 * into a dense temporary, then its DMA), "2d" (one cuMemcpy2DAsync),
 * "pack" (a host gather or scatter through staging, the device plan
 * between the packed image and the device view where needed); "" before
 * the first. */
const char *strided__copy_transfer_path(void);

#endif
