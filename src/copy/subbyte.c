/*
 * copy/subbyte.c: host copies of sub-byte elements bit by bit
 * (copy/subbyte.h): packed views of any layout the packed-layout rule
 * allows (a transposed packed fp4 matrix into a row-major one), and
 * conversions between packed and padded views of one sub-byte type.
 *
 * An element of a packed view of w bits at element offset o lies at bit
 * o * w from the view's offset 0, little bit-endian; an element of a padded
 * view is the low bits of its byte. Elements are read and written through
 * the bytes their bits touch, so the bits of a destination byte that
 * belong to elements outside the view are kept.
 */
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "copy/subbyte.h"
#include "cuda/driver.h"
#include "memory/memory.h"
#include "strided/dtype.h"

bool strided__copy_is_subbyte(const strided_view *dst, const strided_view *src)
{
    return strided_view_packed_bits(dst) > 0 || strided_view_packed_bits(src) > 0 ||
           (dst->has_dtype && src->has_dtype && dst->padded != src->padded &&
            strided_dtype_is_subbyte(dst->dtype));
}

/* How one side's elements are addressed: the bit of the plan's element 0
 * (counted from base) and the bits between consecutive element offsets
 * (8 for padded and whole-byte elements, whose values sit in the low bits
 * of their bytes). */
typedef struct side {
    unsigned char *base;
    int64_t bit0;
    int64_t step;
} side;

/* The value of width bits at bit position bit of s. Touches only the
 * bytes those bits lie in. */
static uint32_t read_bits(const unsigned char *base, int64_t bit, int width)
{
    const unsigned char *p = base + (bit >> 3);
    int shift = (int)(bit & 7), need = shift + width;
    uint32_t word = 0;
    for (int k = 0; k * 8 < need; k++)
        word |= (uint32_t)p[k] << (8 * k);
    return (word >> shift) & ((UINT32_C(1) << width) - 1);
}

static void write_bits(unsigned char *base, int64_t bit, int width, uint32_t value)
{
    unsigned char *p = base + (bit >> 3);
    int shift = (int)(bit & 7), need = shift + width;
    uint32_t mask = ((UINT32_C(1) << width) - 1) << shift, bits = value << shift;
    for (int k = 0; k * 8 < need; k++) {
        unsigned char m = (unsigned char)(mask >> (8 * k));
        p[k] = (unsigned char)((p[k] & ~m) | ((bits >> (8 * k)) & m));
    }
}

/* The bytes [lo, hi) a view's elements occupy, as addresses.
 * Assumes: the view keeps the view invariant and has elements. */
static void footprint(const strided_view *v, uintptr_t *lo, uintptr_t *hi)
{
    int bits = strided_view_packed_bits(v);
    int64_t a = 0, b = 0, mn = 0, mx = -1;
    if (bits > 0) {
        /* The view was made under the rule, so this cannot fail. */
        strided_layout_packed_byte_bounds(&v->layout, bits, &a, &b);
    } else {
        strided_layout_offset_bounds(&v->layout, &mn, &mx);
        a = mn * v->layout.itemsize;
        b = (mx + 1) * v->layout.itemsize;
    }
    uintptr_t start = (uintptr_t)strided_buffer_ptr(v->buffer) + (uintptr_t)v->origin;
    *lo = start + (uintptr_t)a;
    *hi = start + (uintptr_t)b;
}

/* One side of the copy: element 0 of the view at strided_view_ptr, which
 * for packed views is the byte element (0,...,0) starts in, on a byte
 * boundary; offset is the plan's offset from it, in elements. */
static side side_of(const strided_view *v, unsigned char *ptr, int64_t offset)
{
    int bits = strided_view_packed_bits(v);
    side s = {ptr, 0, bits > 0 ? bits : 8 * v->layout.itemsize};
    s.bit0 = offset * s.step;
    return s;
}

strided_status strided__copy_subbyte_host(const char *op, const strided_copy_plan *plan,
                                          const strided_view *dst, const strided_view *src)
{
    if (!dst->has_dtype || !src->has_dtype)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a copy of packed sub-byte elements needs the dtype of both views");
    int width = src->dtype.bits * src->dtype.lanes;
    unsigned char *sptr = strided_view_ptr(src), *dptr = strided_view_ptr(dst);
    uintptr_t dlo, dhi, slo, shi;
    footprint(dst, &dlo, &dhi);
    footprint(src, &slo, &shi);
    unsigned char *tmp = NULL;
    if (dlo < shi && slo < dhi) {
        /* The source's bytes meet the destination's: read them first. */
        tmp = strided__malloc((size_t)(shi - slo));
        if (tmp == NULL)
            return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                                 "cannot allocate %zu bytes to stage an overlapping copy",
                                 (size_t)(shi - slo));
        memcpy(tmp, (const void *)slo, (size_t)(shi - slo));
        sptr = tmp + ((uintptr_t)sptr - slo);
    }
    side d = side_of(dst, dptr, plan->dst_offset), s = side_of(src, sptr, plan->src_offset);
    int64_t index[STRIDED_MAX_NDIM] = {0};
    int ndim = plan->ndim;
    /* Padded destinations get the value in the low bits and 0 above, as
     * ml_dtypes writes them: the whole byte is written. */
    int dwidth = dst->padded ? 8 : width;
    /* Bit positions fit in int64: each is within a view's bytes, which lie
     * in the address space, times 8. */
    int64_t dbit = d.bit0, sbit = s.bit0;
    /* An odometer over the plan's axes, the last fastest. */
    for (int64_t n = 0; n < plan->volume; n++) {
        write_bits(d.base, dbit, dwidth, read_bits(s.base, sbit, width));
        for (int k = ndim - 1; k >= 0; k--) {
            dbit += plan->dst_strides[k] * d.step;
            sbit += plan->src_strides[k] * s.step;
            if (++index[k] < plan->shape[k])
                break;
            dbit -= plan->dst_strides[k] * d.step * plan->shape[k];
            sbit -= plan->src_strides[k] * s.step * plan->shape[k];
            index[k] = 0;
        }
    }
    strided__free(tmp);
    return STRIDED_OK;
}

/* The bits between consecutive element offsets of a view: its packed
 * elements' bits, or 8 times the itemsize. */
static int step_of(const strided_view *v)
{
    int bits = strided_view_packed_bits(v);
    return bits > 0 ? bits : 8 * v->layout.itemsize;
}

/* Host memory against device memory: the host view's bytes (its
 * footprint) are moved into a device temporary, the kernel runs between the
 * temporary and the device view, and for a host destination the bytes go
 * back, the bits of them outside the view as they were. */
static strided_status through_device(const char *op, const strided__copy_job *job, bool dst_host)
{
    const strided_view *host = dst_host ? job->dst : job->src;
    const strided_view *dev = dst_host ? job->src : job->dst;
    uintptr_t lo, hi;
    footprint(host, &lo, &hi);
    const strided__driver *cu;
    strided__context_scope scope;
    strided__copy_temp t = {0};
    strided_status status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    status = strided__context_enter(op, cu, job->device, &scope);
    if (status != STRIDED_OK)
        return status;
    CUstream stream = (CUstream)job->stream;
    status = strided__copy_temp_alloc(job, (size_t)(hi - lo), &t);
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyAsync((CUdeviceptr)t.ptr, (CUdeviceptr)lo,
                                                          (size_t)(hi - lo), stream));
    uintptr_t staged = t.ptr + ((uintptr_t)strided_view_ptr(host) - lo);
    strided__subbyte_sides sides = {dst_host ? staged : strided_view_device_ptr(dev),
                                    dst_host ? strided_view_device_ptr(dev) : staged,
                                    step_of(job->dst),
                                    step_of(job->src),
                                    job->src->dtype.bits * job->src->dtype.lanes,
                                    job->dst->padded};
    if (status == STRIDED_OK)
        status = strided__copy_device_run_subbyte(job->plan, &sides, job->stream, job->device);
    if (status == STRIDED_OK && dst_host)
        status = STRIDED_CUDA_CHECK(op, cu->cuMemcpyAsync((CUdeviceptr)lo, (CUdeviceptr)t.ptr,
                                                          (size_t)(hi - lo), stream));
    strided__copy_temp_free(&t);
    strided__context_leave(cu, &scope);
    return status;
}

strided_status strided__copy_subbyte_transfer(const char *op, const strided__copy_job *job,
                                              bool dst_host)
{
    if (!job->dst->has_dtype || !job->src->has_dtype)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a copy of packed sub-byte elements needs the dtype of both views");
    return through_device(op, job, dst_host);
}

strided_status strided__copy_subbyte_device(const char *op, const strided__copy_job *job)
{
    const strided_view *dst = job->dst, *src = job->src;
    if (!dst->has_dtype || !src->has_dtype)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a copy of packed sub-byte elements needs the dtype of both views");
    int dst_dev = job->dst_info.device_id >= 0 ? job->dst_info.device_id : job->device;
    int src_dev = job->src_info.device_id >= 0 ? job->src_info.device_id : job->device;
    if (dst_dev != src_dev)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "copies of packed sub-byte elements run on one device: the "
                             "destination is on device %d, the source on device %d",
                             dst_dev, src_dev);
    /* Both footprints as device addresses: each view's device address of
     * element 0 is its host one moved by the same amount. */
    uintptr_t dd = strided_view_device_ptr(dst), sd = strided_view_device_ptr(src);
    uintptr_t dlo, dhi, slo, shi;
    footprint(dst, &dlo, &dhi);
    footprint(src, &slo, &shi);
    uintptr_t dshift = dd - (uintptr_t)strided_view_ptr(dst),
              sshift = sd - (uintptr_t)strided_view_ptr(src);
    if (dlo + dshift < shi + sshift && slo + sshift < dhi + dshift)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "a device copy of packed sub-byte elements between overlapping "
                             "memory is not supported: copy through a temporary view");
    strided__subbyte_sides sides = {
        dd, sd, step_of(dst), step_of(src), src->dtype.bits * src->dtype.lanes, dst->padded};
    return strided__copy_device_run_subbyte(job->plan, &sides, job->stream, job->device);
}
