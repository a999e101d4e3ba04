/*
 * copy/transfer.c: copies between host memory (pageable or pinned) and
 * device or managed memory (strided__copy_transfer, copy/transfer.h).
 *
 * PCIe is about 70 times slower than device memory, so the bytes that
 * cross it should be as few and as long as possible, and the reordering is
 * done on the device; the host touches the elements only where the
 * crossing would otherwise carry mostly gaps. A copy takes the path of
 * the first of these rules that applies (the functions below name the
 * rules by their numbers):
 *
 * To the device (the source in host memory):
 *   1. a contiguous plan: one run, straight into the destination;
 *   2. a source whose footprint is at most twice the elements it holds,
 *      unless it is pinned rows one 2-D copy moves faster (rows_2d_wins)
 *      (permutations, reversed axes, mild gaps, and broadcast sources,
 *      whose footprint is small: they travel small and are expanded on the
 *      device): the footprint goes into a device temporary, then the plan
 *      runs on the device from there ("footprint");
 *   3. a sparser source whose plan is rows of at least ROWS_2D_MIN_BYTES (512)
 *      on two axes, from pinned memory, with pitches the DMA engine takes:
 *      one cuMemcpy2DAsync straight between the views ("2d");
 *   4. otherwise the source is gathered on the host into staging buffers,
 *      packed in the destination's axis order, and DMAed into the
 *      destination when it is dense in that order, else into a dense
 *      device temporary from which the device plan fills the destination
 *      ("pack"). Axes on which the source repeats are not gathered: the
 *      device plan expands them.
 * To the host (the destination in host memory):
 *   1. a contiguous plan: one run;
 *   2. a dense destination (a permutation of a dense array): the plan runs
 *      on the device into a dense temporary in the destination's layout,
 *      whose bytes then go to the host in one run ("dense"). A footprint
 *      with gaps is never written whole: that would overwrite bytes
 *      outside the view;
 *   3. a destination with gaps, rows as in 3 above: one cuMemcpy2DAsync;
 *   4. otherwise the device plan packs the source into a dense temporary
 *      in the destination's axis order (unless the source is packed so
 *      already), whose pieces come back through staging buffers and are
 *      scattered on the host ("pack").
 * A run between pinned memory and the device is one cuMemcpyAsync ("dma");
 * pageable memory always goes through pinned staging ("staged";
 * copy/staging.c), which also serves the host gathers and scatters.
 * Two-dimensional copies are used from pinned memory only: from pageable
 * memory they run at pageable speed, slower than packing.
 *
 * Ordering and blocking: everything is queued on the job's stream in the
 * device's primary context, device temporaries are freed in stream order,
 * and the caller (strided_view_copy_ex) waits for the stream when the copy
 * is blocking. A path that works on the host synchronises by itself: it
 * waits for the stream before reading host memory and returns after its
 * last DMA has used the staging buffers (and, to the host, with the data
 * in place). Paths between pinned memory and the device with no host work
 * (dma, footprint, dense, 2d) stay fully asynchronous when not blocking.
 */
#include "copy/transfer.h"

#include <assert.h>
#include <string.h>

#include "base/base.h"
#include "copy/launch.h"
#include "copy/plan.h"
#include "copy/staging.h"
#include "copy/testing.h"
#include "cuda/driver.h"

#define OP "copy"

/* Rows at least this long may cross as one two-dimensional copy (on an
 * H200, 512-byte rows reach 26.5 GB/s, 4 KiB rows 33.6, of pinned
 * memory's 54.9; 64-byte rows 4.5, less than packing them on the host). */
#define ROWS_2D_MIN_BYTES 512

static _Thread_local const char *last_path = "";

/* Paths with host work (staging of pageable memory, gathers and scatters
 * on the host) are refused while the stream captures a graph: the host
 * would do its part now, not when the graph runs. */
#define STAGED_WHAT \
    "a copy through host staging (pageable memory, or a gather or scatter on the host)"
#define STAGED_HINT                                                                           \
    "use pinned memory and a layout whose host side crosses in one piece (dense, or rows of " \
    "a 2-D copy), or copy outside the capture"

const char *strided__copy_transfer_path(void)
{
    return last_path;
}

/* One transfer, as the paths see it. */
typedef struct transfer {
    const strided__copy_job *job;
    const strided__driver *cu;
    strided_copy_plan plan; /* the job's, with ndim >= 1 */
    int64_t isz;
    int64_t bytes;    /* volume * itemsize */
    bool pinned;      /* the host side is pinned memory */
    char *host;       /* host address of the plan's element 0, host side */
    uintptr_t device; /* device address of the plan's element 0, device side */
} transfer;

/* Whether strides are the C-contiguous strides of p's shape: the side is
 * the packed image of the plan's elements in the plan's axis order. (For
 * the destination, whose strides the plan sorted, this is exactly "dense":
 * its footprint holds no gaps.) */
static bool is_packed(const strided_copy_plan *p, const int64_t *strides)
{
    int64_t step = 1;
    for (int k = p->ndim - 1; k >= 0; k--) {
        if (strides[k] != step)
            return false;
        step *= p->shape[k]; /* <= volume */
    }
    return true;
}

/* Whether the source's footprint [lo, hi] holds at most twice the
 * distinct elements the source has (those on axes it does not repeat). */
static bool source_dense_enough(const strided_copy_plan *p, int64_t lo, int64_t hi)
{
    int64_t held = 1, footprint = 0, twice = 0;
    for (int k = 0; k < p->ndim; k++)
        if (p->src_strides[k] != 0)
            held *= p->shape[k]; /* <= volume */
    if (__builtin_sub_overflow(hi, lo, &footprint) ||
        strided__add_overflow(footprint, 1, &footprint))
        return false; /* beyond int64: far from dense */
    if (strided__mul_overflow(held, 2, &twice))
        return true; /* twice is beyond int64, footprint is not */
    return footprint <= twice;
}

/* Whether one 2-D copy of a pinned source's rows beats DMAing its whole
 * footprint (which carries the gaps too): by the rates measured on an
 * H200 over PCIe Gen5 (2-D copies of 512-byte, 4 KiB and 32 KiB rows at
 * 26.5, 33.7 and 54.6 GB/s; a contiguous run at 54.8 GB/s, of which
 * held / footprint is payload).
 * [:, :8192] of 16384 x 16384 floats: 54.6 against 27.4 GB/s. */
static bool rows_2d_wins(const strided_copy_plan *p, int64_t isz, int64_t lo, int64_t hi)
{
    if (p->kernel != STRIDED_COPY_ROWS || p->ndim != 2 || p->src_strides[0] <= 0)
        return false;
    double width = (double)p->shape[1] * (double)isz;
    double rate = width >= 32768 ? 54.6 : width >= 4096 ? 33.7 : width >= 512 ? 26.5 : 0.0;
    double held = (double)p->shape[0] * (double)p->shape[1], span = (double)hi - (double)lo + 1;
    return rate > 54.8 * held / span;
}

/* The plan that copies p's elements from a side with src_strides to a side
 * with dst_strides (NULL: packed, C-contiguous over p's shape). */
static strided_status plan_between(const strided_copy_plan *p, const int64_t *dst_strides,
                                   const int64_t *src_strides, strided_copy_plan *out)
{
    strided_layout d, s;
    strided_status status = strided_layout_init(&d, p->ndim, p->shape, dst_strides, p->itemsize);
    if (status == STRIDED_OK)
        status = strided_layout_init(&s, p->ndim, p->shape, src_strides, p->itemsize);
    if (status == STRIDED_OK)
        status = strided_copy_plan_make(&d, &s, out);
    return status;
}

static strided_status dma(const transfer *t, uintptr_t dst, uintptr_t src, int64_t bytes)
{
    return STRIDED_CUDA_CHECK(OP, t->cu->cuMemcpyAsync((CUdeviceptr)dst, (CUdeviceptr)src,
                                                       (size_t)bytes, (CUstream)t->job->stream));
}

/* One run of bytes between the host side and the device: one DMA from
 * pinned memory, else through staging. */
static strided_status run_across(const transfer *t, char *host, uintptr_t device, int64_t bytes,
                                 bool to_device)
{
    if (t->pinned)
        return to_device ? dma(t, device, (uintptr_t)host, bytes)
                         : dma(t, (uintptr_t)host, device, bytes);
    int64_t shape[1] = {bytes}, stride[1] = {1};
    strided__staged_array a = {1, 1, shape, stride, host, device};
    return to_device ? strided__staged_to_device(t->job, &a) : strided__staged_to_host(t->job, &a);
}

static strided_status max_pitch(const transfer *t, int64_t *out)
{
    CUdevice dev = 0;
    int value = 0;
    strided_status status = STRIDED_CUDA_CHECK(OP, t->cu->cuDeviceGet(&dev, t->job->device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            OP, t->cu->cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX_PITCH, dev));
    if (status == STRIDED_OK)
        *out = value;
    return status;
}

/* Rule 3: rows of two axes as one cuMemcpy2DAsync, when the host side is
 * pinned, the rows are long and both pitches fit; *done says whether it
 * was (then the status is the copy's). */
static strided_status try_rows_2d(transfer *t, bool to_device, bool *done)
{
    const strided_copy_plan *p = &t->plan;
    int64_t width = 0, dpitch = 0, spitch = 0, limit = 0;
    *done = false;
    if (!t->pinned || p->kernel != STRIDED_COPY_ROWS || p->ndim != 2 ||
        strided__mul_overflow(p->shape[1], t->isz, &width) || width < ROWS_2D_MIN_BYTES ||
        strided__mul_overflow(p->dst_strides[0], t->isz, &dpitch) ||
        strided__mul_overflow(p->src_strides[0], t->isz, &spitch) || dpitch < width ||
        spitch < width)
        return STRIDED_OK;
    strided_status status = max_pitch(t, &limit);
    if (status != STRIDED_OK)
        return status;
    if (dpitch > limit || spitch > limit)
        return STRIDED_OK;
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    if (to_device) {
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = t->host;
        c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
        c.dstDevice = (CUdeviceptr)t->device;
    } else {
        c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
        c.srcDevice = (CUdeviceptr)t->device;
        c.dstMemoryType = CU_MEMORYTYPE_HOST;
        c.dstHost = t->host;
    }
    c.srcPitch = (size_t)spitch;
    c.dstPitch = (size_t)dpitch;
    c.WidthInBytes = (size_t)width;
    c.Height = (size_t)p->shape[0];
    *done = true;
    last_path = "2d";
    return STRIDED_CUDA_CHECK(OP, t->cu->cuMemcpy2DAsync(&c, (CUstream)t->job->stream));
}

/* To the device, rule 2: the source's footprint [lo, hi] into a device
 * temporary, then the plan on the device. */
static strided_status footprint_to_device(transfer *t, int64_t lo, int64_t hi)
{
    strided__copy_temp temp;
    int64_t isz = t->isz, bytes = 0;
    last_path = "footprint";
    /* hi - lo + 1 fits: source_dense_enough said so. */
    if (strided__mul_overflow(hi - lo + 1, isz, &bytes))
        return strided__copy_plan_overflow(&t->plan, t->plan.src_strides);
    strided_status status = strided__copy_temp_alloc(t->job, (size_t)bytes, &temp);
    if (status != STRIDED_OK)
        return status;
    status = run_across(t, t->host + (intptr_t)(lo * isz), temp.ptr, bytes, true);
    if (status == STRIDED_OK)
        status = strided__copy_device_run(&t->plan, t->device, temp.ptr - (uintptr_t)(lo * isz),
                                          t->job->stream, t->job->device);
    strided__copy_temp_free(&temp);
    return status;
}

/* To the device, rule 4: gather on the host, packed in the plan's order.
 * Only the source's distinct elements travel: axes on which it repeats
 * (stride 0) are left out of the packed image and expanded by the device
 * plan. */
static strided_status pack_to_device(transfer *t)
{
    const strided_copy_plan *p = &t->plan;
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    int n = 0;
    for (int k = 0; k < p->ndim; k++)
        if (p->src_strides[k] != 0) {
            shape[n] = p->shape[k];
            strides[n] = p->src_strides[k];
            n++;
        }
    /* n >= 1: a source of one distinct element is dense enough (rule 2). */
    assert(n >= 1);
    bool direct = n == p->ndim && is_packed(p, p->dst_strides);
    strided__copy_temp temp = {0, 0, NULL, NULL};
    strided__copy_packing q;
    last_path = "pack";
    strided_status status = strided__refuse_in_capture(OP, t->cu, t->job->stream, t->job->device,
                                                       STAGED_WHAT, STAGED_HINT);
    if (status != STRIDED_OK)
        return status;
    if (!direct) {
        /* The host gathers the source's distinct elements packed in the
         * plan's order (q's temporary); q.unpack spreads them on the device. */
        status = strided__copy_packing_make(p, &q);
        if (status == STRIDED_OK)
            status = strided__copy_temp_alloc(t->job, q.bytes, &temp);
        if (status != STRIDED_OK)
            return status;
    }
    strided__staged_array a = {n,       p->itemsize, shape,
                               strides, t->host,     direct ? t->device : temp.ptr};
    status = strided__staged_to_device(t->job, &a);
    if (status == STRIDED_OK && !direct)
        status = strided__copy_device_run_from(&q.unpack, t->device, temp.ptr, t->job->stream,
                                               t->job->device);
    strided__copy_temp_free(&temp);
    return status;
}

static strided_status to_device(transfer *t)
{
    const strided_copy_plan *p = &t->plan;
    if (p->kernel == STRIDED_COPY_CONTIGUOUS) {
        last_path = t->pinned ? "dma" : "staged";
        return run_across(t, t->host, t->device, t->bytes, true);
    }
    int64_t lo = 0, hi = 0;
    strided_status status = strided__copy_plan_reach(p, p->src_strides, &lo, &hi);
    if (status != STRIDED_OK)
        return status;
    bool dense = source_dense_enough(p, lo, hi);
    if (dense && !(t->pinned && rows_2d_wins(p, t->isz, lo, hi)))
        return footprint_to_device(t, lo, hi);
    bool done = false;
    status = try_rows_2d(t, true, &done);
    if (status != STRIDED_OK || done)
        return status;
    return dense ? footprint_to_device(t, lo, hi) : pack_to_device(t);
}

/* To the host, rule 2: the plan on the device into a dense temporary laid
 * out as the destination, then one run. */
static strided_status dense_to_host(transfer *t)
{
    strided__copy_temp temp;
    last_path = "dense";
    strided_status status = strided__copy_temp_alloc(t->job, (size_t)t->bytes, &temp);
    if (status != STRIDED_OK)
        return status;
    status = strided__copy_device_run(&t->plan, temp.ptr, t->device, t->job->stream,
                                      t->job->device);
    if (status == STRIDED_OK)
        status = run_across(t, t->host, temp.ptr, t->bytes, false);
    strided__copy_temp_free(&temp);
    return status;
}

/* To the host, rule 4: packed on the device in the plan's order, scattered
 * on the host. */
static strided_status pack_to_host(transfer *t)
{
    const strided_copy_plan *p = &t->plan;
    bool packed = is_packed(p, p->src_strides);
    strided__copy_temp temp = {0, 0, NULL, NULL};
    strided_copy_plan q;
    last_path = "pack";
    strided_status status = strided__refuse_in_capture(OP, t->cu, t->job->stream, t->job->device,
                                                       STAGED_WHAT, STAGED_HINT);
    if (status != STRIDED_OK)
        return status;
    if (!packed) {
        status = plan_between(p, NULL, p->src_strides, &q);
        if (status == STRIDED_OK)
            status = strided__copy_temp_alloc(t->job, (size_t)t->bytes, &temp);
        if (status == STRIDED_OK)
            status = strided__copy_device_run_from(&q, temp.ptr, t->device, t->job->stream,
                                                   t->job->device);
    }
    if (status == STRIDED_OK) {
        strided__staged_array a = {p->ndim,        p->itemsize, p->shape,
                                   p->dst_strides, t->host,     packed ? t->device : temp.ptr};
        status = strided__staged_to_host(t->job, &a);
    }
    strided__copy_temp_free(&temp);
    return status;
}

static strided_status to_host(transfer *t)
{
    const strided_copy_plan *p = &t->plan;
    if (p->kernel == STRIDED_COPY_CONTIGUOUS) {
        last_path = t->pinned ? "dma" : "staged";
        return run_across(t, t->host, t->device, t->bytes, false);
    }
    if (is_packed(p, p->dst_strides))
        return dense_to_host(t);
    bool done = false;
    strided_status status = try_rows_2d(t, false, &done);
    if (status != STRIDED_OK || done)
        return status;
    return pack_to_host(t);
}

strided_status strided__copy_transfer(const strided__copy_job *job)
{
    bool h2d = job->src_info.kind == STRIDED_MEMORY_HOST ||
               job->src_info.kind == STRIDED_MEMORY_PINNED;
    const strided_view *hv = h2d ? job->src : job->dst, *dv = h2d ? job->dst : job->src;
    const strided_memory_info *hinfo = h2d ? &job->src_info : &job->dst_info;
    transfer t;
    memset(&t, 0, sizeof t);
    t.job = job;
    t.plan = *job->plan;
    if (t.plan.ndim == 0) {
        /* One element, as a run of one. */
        t.plan.kernel = STRIDED_COPY_CONTIGUOUS;
        t.plan.ndim = 1;
        t.plan.shape[0] = 1;
        t.plan.dst_strides[0] = 1;
        t.plan.src_strides[0] = 1;
    }
    const strided_copy_plan *p = &t.plan;
    t.isz = p->itemsize;
    t.pinned = hinfo->kind == STRIDED_MEMORY_PINNED;
    strided_status status = STRIDED_OK;
    int64_t hoff = 0, doff = 0, lo = 0, hi = 0;
    const int64_t *hstrides = h2d ? p->src_strides : p->dst_strides;
    status = strided__copy_plan_reach(p, hstrides, &lo, &hi);
    if (status != STRIDED_OK)
        return status;
    if (strided__mul_overflow(p->volume, t.isz, &t.bytes) ||
        strided__mul_overflow(h2d ? p->src_offset : p->dst_offset, t.isz, &hoff) ||
        strided__mul_overflow(h2d ? p->dst_offset : p->src_offset, t.isz, &doff))
        return strided__copy_plan_overflow(p, hstrides);
    t.host = (char *)strided_view_ptr(hv) + (intptr_t)hoff;
    t.device = strided_view_device_ptr(dv) + (uintptr_t)doff;

    status = strided__cuda(OP, &t.cu);
    if (status == STRIDED_OK && !t.pinned) {
        /* Host memory classified without the driver (a DLPack CPU tensor,
         * such as PyTorch's pin_memory() tensors) may be pinned all the
         * same: one query (a microsecond) saves staging. */
        CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        unsigned int type = 0;
        void *data[] = {&type};
        status = STRIDED_CUDA_CHECK(
            OP, t.cu->cuPointerGetAttributes(1, &attr, data, (CUdeviceptr)(uintptr_t)t.host));
        t.pinned = type == CU_MEMORYTYPE_HOST;
    }
    strided__context_scope scope;
    if (status != STRIDED_OK)
        return status;
    if (status == STRIDED_OK && !t.pinned)
        status = strided__refuse_in_capture(OP, t.cu, job->stream, job->device, STAGED_WHAT,
                                            STAGED_HINT);
    if (status == STRIDED_OK)
        status = strided__context_enter(OP, t.cu, job->device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = h2d ? to_device(&t) : to_host(&t);
    strided__context_leave(t.cu, &scope);
    return status;
}
