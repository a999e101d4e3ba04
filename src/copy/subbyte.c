/*
 * copy/subbyte.c: copies of sub-byte elements bit by bit (copy/subbyte.h):
 * packed views of any layout the packed-layout rule allows (a transposed
 * packed fp4 matrix into a row-major one), and conversions between packed
 * and padded views of one sub-byte type; on the host, on a device (the
 * kernel subbyte, copy/launch.c), and between the two through a device
 * temporary.
 *
 * An element of a packed view of w bits at element offset o lies at bit
 * o * w from the view's offset 0, little bit-endian; an element of a padded
 * view is the low bits of its byte. Elements are read and written through
 * the bytes their bits touch, so the bits of a destination byte that
 * belong to elements outside the view are kept.
 */
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

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

/* The byte a bit position lies in (floor division: positions before the
 * base are negative) and the bit in that byte. */
static const unsigned char *byte_of(const unsigned char *base, int64_t bit, int *shift)
{
    int64_t byte = bit >= 0 ? bit / 8 : -((-bit + 7) / 8);
    *shift = (int)(bit - byte * 8);
    return base + byte;
}

/* The value of width bits (at most 32) at bit position bit of base, little
 * bit-endian. Touches only the bytes those bits lie in. */
static uint32_t read_bits(const unsigned char *base, int64_t bit, int width)
{
    int shift;
    const unsigned char *p = byte_of(base, bit, &shift);
    uint64_t word = 0;
    for (int k = 0; k * 8 < shift + width; k++)
        word |= (uint64_t)p[k] << (8 * k);
    return (uint32_t)((word >> shift) & ((UINT64_C(1) << width) - 1));
}

/* Write value into width bits (at most 32) at bit position bit of base,
 * keeping the other bits of the bytes it touches. */
static void write_bits(unsigned char *base, int64_t bit, int width, uint32_t value)
{
    int shift;
    unsigned char *p = (unsigned char *)byte_of(base, bit, &shift);
    uint64_t mask = ((UINT64_C(1) << width) - 1) << shift, bits = (uint64_t)value << shift;
    for (int k = 0; k * 8 < shift + width; k++) {
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

/* The bits between consecutive element offsets of a view: its packed
 * elements' bits, or 8 times the itemsize. */
static int step_of(const strided_view *v)
{
    int bits = strided_view_packed_bits(v);
    return bits > 0 ? bits : 8 * v->layout.itemsize;
}

/* The work items (groups of destination elements) of row r of a, as the
 * kernel runs them: the value of each element read from its bits, and a
 * group written whole bytes at once. */
static void run_row(const strided_copy_subbyte_args *a, int64_t r)
{
    const unsigned char *src = (const unsigned char *)(uintptr_t)a->src;
    unsigned char *dst = (unsigned char *)(uintptr_t)a->dst;
    int64_t d = 0, s = 0, rest = r;
    for (int k = 1; k < a->ndim; k++) {
        int64_t j = rest % a->extent[k];
        rest /= a->extent[k];
        d += j * a->dst_stride[k];
        s += j * a->src_stride[k];
    }
    for (int64_t gi = 0; gi < a->extent[0]; gi++) {
        int64_t j0 = gi * a->group;
        int64_t dj = d + j0 * a->dst_stride[0], sj = s + j0 * a->src_stride[0];
        if (a->group == 1) {
            write_bits(dst, a->dst_bit + dj * a->dst_step, a->dst_width,
                       read_bits(src, a->src_bit + sj * a->src_step, a->width));
            continue;
        }
        int n = a->n0 - j0 < a->group ? (int)(a->n0 - j0) : a->group;
        uint32_t acc = 0;
        for (int t = 0; t < n; t++)
            acc |= read_bits(src, a->src_bit + (sj + t * a->src_stride[0]) * a->src_step, a->width)
                   << (t * a->width);
        write_bits(dst, a->dst_bit + dj * a->dst_step, n * a->width, acc);
    }
}

/* Elements a thread is given at least, for copies on several threads. */
#define THREAD_MIN_ELEMENTS ((int64_t)1 << 18)

strided_status strided__copy_subbyte_host(const char *op, const strided_copy_plan *plan,
                                          const strided_view *dst, const strided_view *src)
{
    if (!dst->has_dtype || !src->has_dtype)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a copy of packed sub-byte elements needs the dtype of both views");
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
    strided__subbyte_sides sides = {(uintptr_t)dptr,
                                    (uintptr_t)sptr,
                                    step_of(dst),
                                    step_of(src),
                                    src->dtype.bits * src->dtype.lanes,
                                    dst->padded};
    strided_copy_subbyte_args a;
    int64_t work = 0;
    strided_status status = strided__copy_subbyte_args(plan, &sides, &a, &work);
    if (status == STRIDED_OK) {
        /* Rows own their bytes (the packed-layout rule), so they may run
         * on several threads; bit positions fit in int64: each is within
         * a view's bytes, which lie in the address space, times 8. */
        (void)work; /* the device's; the host goes by rows */
        int64_t rows = 1;
        for (int k = 1; k < a.ndim; k++)
            rows *= a.extent[k];
#ifdef _OPENMP
        int64_t t = plan->volume / THREAD_MIN_ELEMENTS;
        int threads = t < 1 ? 1 : t > omp_get_max_threads() ? omp_get_max_threads() : (int)t;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
        for (int64_t r = 0; r < rows; r++)
            run_row(&a, r);
    }
    strided__free(tmp);
    return status;
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
