/*
 * copy/device.c: copies between two views in device or managed memory
 * (strided__copy_between_devices, copy/device.h). The kernels run through
 * the device executor, and the temporaries come from it too
 * (copy/launch.c).
 *
 * Which memory a side is on: a view's device is its memory's device_id
 * (managed memory counts as the device it was allocated on). The caller's
 * stream belongs to the job's device, the destination's: every step queued
 * on it runs in that device's primary context.
 *
 * The paths, in the order they are tried:
 *   overlap     the two sides' bytes meet (unified addressing makes that
 *               the same memory): the source is read in full into a dense
 *               temporary first, then copied into the destination, both on
 *               the stream. Identical sides (every element onto itself)
 *               copy nothing.
 *   one device  the plan's kernel on that device.
 *   contiguous  (two devices) one cuMemcpyAsync on the stream; unified
 *               addressing finds both devices, with or without peer access.
 *   direct      (two devices) the plan's kernel on the destination's
 *               device, reading the source's memory, where that device can
 *               read it (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, asked in its
 *               context): as it is (managed memory, pools that granted
 *               access), or once peer access from the destination's context
 *               to the source's is enabled (once per ordered pair of
 *               devices, remembered for the life of the process, and left
 *               enabled, as the CUDA runtime leaves it). Peer access does
 *               not cover memory-pool and virtual-memory allocations; a
 *               driver that does not know the attribute is taken to read
 *               everything but pool memory once peer access is on.
 *   staged      (two devices, no direct reads) when the source's footprint
 *               is at most twice its payload: the footprint is copied with
 *               cuMemcpyAsync into a temporary on the destination's device
 *               and the plan runs there from it. Otherwise the source is
 *               packed on its own device into a dense temporary, which is
 *               copied over and unpacked (or, when the destination is one
 *               run in the temporary's order, copied straight into it).
 * Packing runs on the source's device, whose stream the caller did not
 * give: the work goes on that device's per-thread default stream
 * (CU_STREAM_PER_THREAD of its primary context), ordered with events after
 * the work queued on the stream before the call, and the stream waits for
 * it before the bytes move, so that work queued on the stream after the
 * call sees the finished copy. The packed temporary is freed on the
 * per-thread stream after an event that follows the move. Nothing waits on
 * the host, except after a failure that leaves the move queued but the
 * free unordered after it: then the stream is synchronised first.
 *
 * Dense temporaries (overlap, packing) hold the source's elements in the
 * plan's axis order (the destination's), C order, with extent 1 where the
 * source repeats (stride 0): a broadcast source is never expanded, and a
 * dense destination takes the temporary as one run.
 *
 * STRIDED_COPY_NO_PEER: when set to anything but "" or "0", copies between
 * two devices never read the other device's memory from a kernel; they
 * take the staged path. Read at every such copy; meant for tests and for
 * comparing the paths.
 */
#include "copy/device.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "copy/launch.h"
#include "copy/plan.h"
#include "cuda/driver.h"

#define OP "copy"

/* Driver values cuda_api.h does not name (cuda.h, CUDA 11.2 and later). */
enum {
    ERROR_PEER_ACCESS_UNSUPPORTED = 217, /* CUDA_ERROR_PEER_ACCESS_UNSUPPORTED */
    ERROR_TOO_MANY_PEERS = 711           /* CUDA_ERROR_TOO_MANY_PEERS */
};

/* The address of the element offset elements of itemsize bytes from
 * element0 (unsigned arithmetic: negative offsets wrap back). */
static uintptr_t at(uintptr_t element0, int64_t offset, int itemsize)
{
    return element0 + (uintptr_t)offset * (uintptr_t)itemsize;
}

static strided_status too_large(void)
{
    return strided__fail(STRIDED_ERR_OVERFLOW, OP, "the copy's byte offsets do not fit in int64");
}

/* Source and destination share bytes: read the source in full into a
 * dense temporary, then copy that into the destination. d and s are the
 * plan's element 0 addresses. */
static strided_status copy_overlapping(const strided__copy_job *job, uintptr_t d, uintptr_t s)
{
    strided__copy_packing sg;
    const strided__driver *cu;
    strided__context_scope scope;
    strided__copy_temp t;
    strided_status status = strided__copy_packing_make(job->plan, &sg);
    if (status == STRIDED_OK)
        status = strided__cuda(OP, &cu);
    if (status == STRIDED_OK)
        status = strided__context_enter(OP, cu, job->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = strided__copy_temp_alloc(job, sg.bytes, &t);
    if (status == STRIDED_OK)
        status = strided__copy_device_run_from(&sg.pack, t.ptr, s, job->stream, job->device);
    if (status == STRIDED_OK)
        status = strided__copy_device_run_from(&sg.unpack, d, t.ptr, job->stream, job->device);
    strided__copy_temp_free(&t);
    strided__context_leave(cu, &scope);
    return status;
}

/* Every element of plan p onto itself: both sides start at the same
 * address and step alike. */
static bool copies_onto_itself(const strided_copy_plan *p, uintptr_t d, uintptr_t s)
{
    if (d != s)
        return false;
    for (int k = 0; k < p->ndim; k++)
        if (p->shape[k] > 1 && p->dst_strides[k] != p->src_strides[k])
            return false;
    return true;
}

static bool peer_ignored(void)
{
    const char *v = getenv("STRIDED_COPY_NO_PEER");
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Peer access from device a's primary context to device b's memory, for
 * ordinals below PEER_DEVICES (others ask the driver every time). */
#define PEER_DEVICES 64
enum { PEER_UNKNOWN = 0, PEER_ENABLED = 1, PEER_IMPOSSIBLE = 2 };
static _Atomic unsigned char peer_state[PEER_DEVICES][PEER_DEVICES];

/* The primary context of device (retained by strided__context_enter). */
static strided_status primary_context(const strided__driver *cu, int device, CUcontext *out)
{
    strided__context_scope scope;
    CUcontext ctx = NULL;
    strided_status status = strided__context_enter(OP, cu, device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(OP, cu->cuCtxGetCurrent(&ctx));
    strided__context_leave(cu, &scope);
    if (status == STRIDED_OK)
        *out = ctx;
    return status;
}

/* Enable peer access from device dev's primary context (current) to device
 * peer's; *out says whether it is enabled. Devices that cannot reach each
 * other, and a device that has reached its limit of peers, are answers, not
 * failures. Several threads may enable the same pair at once: the driver's
 * "already enabled" is success. */
static strided_status enable_peer(const strided__driver *cu, int dev, int peer, bool *out)
{
    _Atomic unsigned char *cache = dev < PEER_DEVICES && peer < PEER_DEVICES
                                       ? &peer_state[dev][peer]
                                       : NULL;
    unsigned char state = cache != NULL ? atomic_load_explicit(cache, memory_order_acquire)
                                        : PEER_UNKNOWN;
    if (state != PEER_UNKNOWN) {
        *out = state == PEER_ENABLED;
        return STRIDED_OK;
    }
    CUdevice a = 0, b = 0;
    int can = 0;
    strided_status status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGet(&a, dev));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGet(&b, peer));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceCanAccessPeer(&can, a, b));
    if (status != STRIDED_OK)
        return status;
    state = PEER_IMPOSSIBLE;
    if (can) {
        CUcontext ctx = NULL;
        status = primary_context(cu, peer, &ctx);
        if (status != STRIDED_OK)
            return status;
        CUresult r = cu->cuCtxEnablePeerAccess(ctx, 0);
        if (r == (CUresult)ERROR_TOO_MANY_PEERS) {
            /* Not remembered: another user may disable a peer. */
            *out = false;
            return STRIDED_OK;
        }
        if (r == CUDA_SUCCESS || r == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            state = PEER_ENABLED;
        else if (r != (CUresult)ERROR_PEER_ACCESS_UNSUPPORTED)
            return strided__cuda_fail(OP, "cuCtxEnablePeerAccess", r);
    }
    if (cache != NULL)
        atomic_store_explicit(cache, state, memory_order_release);
    *out = state == PEER_ENABLED;
    return STRIDED_OK;
}

/* Whether a kernel on device dev (its context current) may read the source
 * at s, of device peer. Managed memory: yes (every device of the H100/H200
 * class reaches it). Memory from cuMemAlloc and the like: once peer access
 * from dev to peer is enabled. Memory-pool allocations: no (their pool
 * must grant the access, which peer access does not; the staged paths copy
 * them with cuMemcpyPeerAsync). CU_POINTER_ATTRIBUTE_ACCESS_FLAGS is not
 * asked: on an H200 pair it reports cuMemAlloc memory of the other device
 * readable before peer access is enabled, and a kernel trusting it faults. */
static strided_status reads_directly(const strided__driver *cu, int dev, int peer,
                                     const strided_memory_info *src, bool *out)
{
    bool enabled = false;
    *out = false;
    if (peer_ignored() || src->pooled)
        return STRIDED_OK;
    if (src->managed) {
        *out = true;
        return STRIDED_OK;
    }
    strided_status status = enable_peer(cu, dev, peer, &enabled);
    *out = status == STRIDED_OK && enabled;
    return status;
}

/* An event recorded on stream (in the current context); on failure *out is
 * NULL and nothing is left. */
static strided_status record_event(const strided__driver *cu, void *stream, CUevent *out)
{
    CUevent e = NULL;
    strided_status status = STRIDED_CUDA_CHECK(OP, cu->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    if (status != STRIDED_OK)
        return status;
    status = STRIDED_CUDA_CHECK(OP, cu->cuEventRecord(e, (CUstream)stream));
    if (status != STRIDED_OK) {
        (void)cu->cuEventDestroy(e);
        e = NULL;
    }
    *out = e;
    return status;
}

/* Destroy the events in device's context (a pending wait on one is fine:
 * the driver keeps it until the wait is done). */
static void destroy_events(const strided__driver *cu, int device, CUevent *a, CUevent *b)
{
    strided__context_scope scope;
    if (*a == NULL && (b == NULL || *b == NULL))
        return;
    bool entered = strided__context_enter(OP, cu, device, &scope) == STRIDED_OK;
    if (*a != NULL)
        (void)cu->cuEventDestroy(*a);
    if (b != NULL && *b != NULL)
        (void)cu->cuEventDestroy(*b);
    *a = NULL;
    if (b != NULL)
        *b = NULL;
    if (entered)
        strided__context_leave(cu, &scope);
}

/* Move bytes from the source's device to job->device's memory on the
 * job's stream: cuMemcpyPeerAsync, which, unlike cuMemcpyAsync, also copies
 * between memory-pool allocations of two devices (pools grant no peer
 * access by cuCtxEnablePeerAccess). */
static strided_status move_across(const strided__driver *cu, const strided__copy_job *job,
                                  uintptr_t to, uintptr_t from, size_t bytes)
{
    CUcontext to_ctx = NULL, from_ctx = NULL;
    strided_status status = primary_context(cu, job->device, &to_ctx);
    if (status == STRIDED_OK)
        status = primary_context(cu, job->src_info.device_id, &from_ctx);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuMemcpyPeerAsync((CUdeviceptr)to, to_ctx,
                                                              (CUdeviceptr)from, from_ctx, bytes,
                                                              (CUstream)job->stream));
    return status;
}

/* Staged, dense footprint: DMA the source's bytes [lo, lo + bytes) into a
 * temporary on the destination's device and run the plan there from it. */
static strided_status copy_footprint(const strided__driver *cu, const strided__copy_job *job,
                                     uintptr_t d, uintptr_t s, uintptr_t lo, size_t bytes)
{
    strided__context_scope scope;
    strided__copy_temp t;
    strided_status status = strided__context_enter(OP, cu, job->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = strided__copy_temp_alloc(job, bytes, &t);
    if (status == STRIDED_OK)
        status = move_across(cu, job, t.ptr, lo, bytes);
    if (status == STRIDED_OK)
        status = strided__copy_device_run(job->plan, d, t.ptr + (s - lo), job->stream, job->device);
    strided__copy_temp_free(&t);
    strided__context_leave(cu, &scope);
    return status;
}

/* Staged, sparse source: pack on the source's device (its per-thread
 * stream, after the caller's stream), move the packed bytes over on the
 * caller's stream, unpack there. See the file's comment. */
static strided_status copy_packed(const strided__driver *cu, const strided__copy_job *job,
                                  const strided__copy_packing *sg, uintptr_t d, uintptr_t s,
                                  int src_dev)
{
    void *side = (void *)CU_STREAM_PER_THREAD;
    strided__copy_job src_job = *job;
    src_job.device = src_dev;
    src_job.stream = side;
    src_job.device_mr = NULL; /* it gives memory of the destination's device */
    strided__copy_temp packed = {0, 0, NULL, side}, landed = {0, 0, NULL, job->stream};
    CUevent ready = NULL, done_packing = NULL, done_moving = NULL;
    bool moving = false; /* a read of packed is queued on job->stream */
    bool direct = sg->unpack.kernel == STRIDED_COPY_CONTIGUOUS;
    strided__context_scope scope;

    /* 1. What the caller's stream holds so far. */
    strided_status status = strided__context_enter(OP, cu, job->device, &scope);
    if (status == STRIDED_OK) {
        status = record_event(cu, job->stream, &ready);
        strided__context_leave(cu, &scope);
    }
    /* 2. After it, pack on the source's device. */
    if (status == STRIDED_OK)
        status = strided__context_enter(OP, cu, src_dev, &scope);
    if (status == STRIDED_OK) {
        status = STRIDED_CUDA_CHECK(OP, cu->cuStreamWaitEvent((CUstream)side, ready, 0));
        if (status == STRIDED_OK)
            status = strided__copy_temp_alloc(&src_job, sg->bytes, &packed);
        if (status == STRIDED_OK)
            status = strided__copy_device_run_from(&sg->pack, packed.ptr, s, side, src_dev);
        if (status == STRIDED_OK)
            status = record_event(cu, side, &done_packing);
        strided__context_leave(cu, &scope);
    }
    /* 3. After the packing, move the bytes over and unpack them. */
    if (status == STRIDED_OK)
        status = strided__context_enter(OP, cu, job->device, &scope);
    if (status == STRIDED_OK) {
        status = STRIDED_CUDA_CHECK(OP,
                                    cu->cuStreamWaitEvent((CUstream)job->stream, done_packing, 0));
        if (status == STRIDED_OK && !direct)
            status = strided__copy_temp_alloc(job, sg->bytes, &landed);
        if (status == STRIDED_OK) {
            uintptr_t to = direct ? at(d, sg->unpack.dst_offset, sg->unpack.itemsize) : landed.ptr;
            uintptr_t from = direct ? at(packed.ptr, sg->unpack.src_offset, sg->unpack.itemsize)
                                    : packed.ptr;
            status = move_across(cu, job, to, from, sg->bytes);
            moving = status == STRIDED_OK;
        }
        if (status == STRIDED_OK)
            status = record_event(cu, job->stream, &done_moving);
        if (status == STRIDED_OK && !direct)
            status = strided__copy_device_run_from(&sg->unpack, d, landed.ptr, job->stream,
                                                   job->device);
        strided__copy_temp_free(&landed);
        strided__context_leave(cu, &scope);
    }
    /* 4. Free packed on the source's device once the move is done; if
     * that cannot be ordered on the device, wait for the move here. */
    if (packed.ptr != 0 || packed.buffer != NULL) {
        bool entered = strided__context_enter(OP, cu, src_dev, &scope) == STRIDED_OK;
        bool ordered = !moving;
        if (!ordered && entered && done_moving != NULL) {
            strided_status waited = STRIDED_CUDA_CHECK(OP, cu->cuStreamWaitEvent((CUstream)side,
                                                                                 done_moving, 0));
            ordered = waited == STRIDED_OK;
            if (status == STRIDED_OK)
                status = waited;
        }
        if (!ordered) {
            strided__context_scope dst_scope;
            if (strided__context_enter(OP, cu, job->device, &dst_scope) == STRIDED_OK) {
                (void)cu->cuStreamSynchronize((CUstream)job->stream);
                strided__context_leave(cu, &dst_scope);
            }
        }
        strided__copy_temp_free(&packed);
        if (entered)
            strided__context_leave(cu, &scope);
    }
    destroy_events(cu, job->device, &ready, &done_moving);
    destroy_events(cu, src_dev, &done_packing, NULL);
    return status;
}

/* Source on device src_dev, destination on the job's device (which owns
 * the stream). d and s are the plan's element 0 addresses; the source's
 * bytes are [lo, hi). */
static strided_status copy_across(const strided__copy_job *job, uintptr_t d, uintptr_t s,
                                  uintptr_t lo, uintptr_t hi, int src_dev)
{
    const strided_copy_plan *p = job->plan;
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status = strided__cuda(OP, &cu);
    if (status != STRIDED_OK)
        return status;
    if (p->kernel == STRIDED_COPY_CONTIGUOUS) {
        int64_t bytes = 0;
        if (strided__mul_overflow(p->volume, p->itemsize, &bytes))
            return too_large();
        status = strided__context_enter(OP, cu, job->device, &scope);
        if (status != STRIDED_OK)
            return status;
        status = move_across(cu, job, d, s, (size_t)bytes);
        strided__context_leave(cu, &scope);
        return status;
    }
    bool direct = false;
    status = strided__context_enter(OP, cu, job->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = reads_directly(cu, job->device, src_dev, &job->src_info, &direct);
    strided__context_leave(cu, &scope);
    if (status != STRIDED_OK)
        return status;
    if (direct)
        return strided__copy_device_run(p, d, s, job->stream, job->device);
    strided__copy_packing sg;
    status = strided__copy_packing_make(p, &sg);
    if (status != STRIDED_OK)
        return status;
    /* The footprint when it is at most twice the payload (2 * bytes fits:
     * bytes <= INT64_MAX). */
    if ((uint64_t)(hi - lo) <= 2 * (uint64_t)sg.bytes)
        return copy_footprint(cu, job, d, s, lo, (size_t)(hi - lo));
    return copy_packed(cu, job, &sg, d, s, src_dev);
}

strided_status strided__copy_between_devices(const strided__copy_job *job)
{
    const strided_copy_plan *p = job->plan;
    uintptr_t d = at(strided_view_device_ptr(job->dst), p->dst_offset, p->itemsize);
    uintptr_t s = at(strided_view_device_ptr(job->src), p->src_offset, p->itemsize);
    int64_t dl = 0, dh = 0, sl = 0, sh = 0;
    strided_status status = strided__copy_plan_reach(p, p->dst_strides, &dl, &dh);
    if (status == STRIDED_OK)
        status = strided__copy_plan_reach(p, p->src_strides, &sl, &sh);
    if (status != STRIDED_OK)
        return status;
    /* Each side's bytes, [element lo, element hi + 1) (they fit in int64). */
    uintptr_t dlo = at(d, dl, p->itemsize), dhi = at(d, dh + 1, p->itemsize);
    uintptr_t slo = at(s, sl, p->itemsize), shi = at(s, sh + 1, p->itemsize);
    if (dlo < shi && slo < dhi) {
        if (copies_onto_itself(p, d, s))
            return STRIDED_OK;
        return copy_overlapping(job, d, s);
    }
    int dst_dev = job->dst_info.device_id >= 0 ? job->dst_info.device_id : job->device;
    int src_dev = job->src_info.device_id >= 0 ? job->src_info.device_id : job->device;
    assert(dst_dev == job->device);
    if (src_dev == dst_dev)
        return strided__copy_device_run(p, d, s, job->stream, job->device);
    return copy_across(job, d, s, slo, shi, src_dev);
}
