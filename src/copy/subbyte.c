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
 * belong to elements outside the view are kept. On the host, runs of
 * stride 1 on both sides and transposes go by bytes and tiles instead of
 * element by element (strided__copy_subbyte_host).
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

/* The work items (groups of destination elements) of elements [j0, j1) of
 * the row at element offsets d and s, as the kernel runs them: the value of
 * each element read from its bits, and a group written whole bytes at
 * once. j0 is a multiple of a->group. */
static void run_items(const strided_copy_subbyte_args *a, int64_t d, int64_t s, int64_t j0,
                      int64_t j1)
{
    const unsigned char *src = (const unsigned char *)(uintptr_t)a->src;
    unsigned char *dst = (unsigned char *)(uintptr_t)a->dst;
    for (; j0 < j1; j0 += a->group) {
        int64_t dj = d + j0 * a->dst_stride[0], sj = s + j0 * a->src_stride[0];
        if (a->group == 1) {
            write_bits(dst, a->dst_bit + dj * a->dst_step, a->dst_width,
                       read_bits(src, a->src_bit + sj * a->src_step, a->width));
            continue;
        }
        int n = j1 - j0 < a->group ? (int)(j1 - j0) : a->group;
        uint32_t acc = 0;
        for (int t = 0; t < n; t++)
            acc |= read_bits(src, a->src_bit + (sj + t * a->src_stride[0]) * a->src_step, a->width)
                   << (t * a->width);
        write_bits(dst, a->dst_bit + dj * a->dst_step, n * a->width, acc);
    }
}

/* Host fast paths of a run along axis 0 of stride 1 on both sides, each
 * starting on a byte boundary: the same packed bits (whole bytes and a
 * masked last byte), packed to padded (unpack) and padded to packed
 * (pack). */
enum run_kind { RUN_ITEMS, RUN_BYTES, RUN_UNPACK, RUN_PACK };

static enum run_kind run_kind_of(const strided_copy_subbyte_args *a)
{
    if (a->dst_stride[0] != 1 || a->src_stride[0] != 1)
        return RUN_ITEMS;
    bool dst_packed = a->dst_step == a->width, src_packed = a->src_step == a->width;
    if (dst_packed && src_packed)
        return RUN_BYTES;
    /* Padded types are 1, 2, 4 or 6 bits. */
    if (src_packed && a->dst_step == 8 && a->dst_width == 8)
        return RUN_UNPACK;
    if (dst_packed && a->src_step == 8)
        return RUN_PACK;
    return RUN_ITEMS;
}

/* n packed values of w bits (1, 2, 4 or 6) from whole bytes at s, one to a
 * byte of d (high bits 0). n is a multiple of the values of a group. A
 * constant w lets the compiler unroll each byte. */
static inline void unpack(unsigned char *restrict d, const unsigned char *restrict s, int64_t n,
                          int w)
{
    const unsigned mask = (1u << w) - 1;
    if (w == 6) {
        /* Two groups at once: 6 bytes into 8, which compilers merge into
         * one load and one store. */
        int64_t i = 0;
        for (; i + 8 <= n; i += 8, s += 6, d += 8) {
            uint64_t v = 0, out = 0;
            for (int k = 0; k < 6; k++)
                v |= (uint64_t)s[k] << (8 * k);
            for (int k = 0; k < 8; k++)
                out |= ((v >> (6 * k)) & mask) << (8 * k);
            for (int k = 0; k < 8; k++)
                d[k] = (unsigned char)(out >> (8 * k));
        }
        for (; i < n; i += 4, s += 3, d += 4) {
            uint32_t v = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16;
            for (int k = 0; k < 4; k++)
                d[k] = (unsigned char)((v >> (6 * k)) & mask);
        }
        return;
    }
    const int per = 8 / w;
    for (int64_t i = 0; i < n; i += per, s++, d += per)
        for (int k = 0; k < per; k++)
            d[k] = (unsigned char)((*s >> (w * k)) & mask);
}

/* The reverse: n values in the low bits of the bytes of s packed into whole
 * bytes at d. */
static inline void pack(unsigned char *restrict d, const unsigned char *restrict s, int64_t n,
                        int w)
{
    const unsigned mask = (1u << w) - 1;
    if (w == 6) {
        for (int64_t i = 0; i < n; i += 4, s += 4, d += 3) {
            uint32_t v = 0;
            for (int k = 0; k < 4; k++)
                v |= (uint32_t)(s[k] & mask) << (6 * k);
            d[0] = (unsigned char)v;
            d[1] = (unsigned char)(v >> 8);
            d[2] = (unsigned char)(v >> 16);
        }
        return;
    }
    const int per = 8 / w;
    for (int64_t i = 0; i < n; i += per, s += per, d++) {
        unsigned v = 0;
        for (int k = 0; k < per; k++)
            v |= (s[k] & mask) << (w * k);
        *d = (unsigned char)v;
    }
}

/* unpack or pack with w a constant in each call. */
static void convert(bool to_padded, unsigned char *d, const unsigned char *s, int64_t n, int w)
{
    switch (w * (to_padded ? 1 : -1)) {
    case 1: unpack(d, s, n, 1); break;
    case 2: unpack(d, s, n, 2); break;
    case 4: unpack(d, s, n, 4); break;
    case 6: unpack(d, s, n, 6); break;
    case -1: pack(d, s, n, 1); break;
    case -2: pack(d, s, n, 2); break;
    case -4: pack(d, s, n, 4); break;
    default: pack(d, s, n, 6); break;
    }
}

/* Elements [j0, j1) of the row at element offsets d and s, by kind: whole
 * groups by bytes, the short last group (or a run that does not start on a
 * byte boundary) as work items. j0 is a multiple of the packed side's
 * group. */
static void run_span(const strided_copy_subbyte_args *a, enum run_kind kind, int64_t d, int64_t s,
                     int64_t j0, int64_t j1)
{
    if (kind == RUN_ITEMS) {
        run_items(a, d, s, j0, j1);
        return;
    }
    int dshift, sshift;
    unsigned char *dp = (unsigned char *)byte_of((const unsigned char *)(uintptr_t)a->dst,
                                                 a->dst_bit + (d + j0) * a->dst_step, &dshift);
    const unsigned char *sp = byte_of((const unsigned char *)(uintptr_t)a->src,
                                      a->src_bit + (s + j0) * a->src_step, &sshift);
    if (dshift != 0 || sshift != 0) {
        run_items(a, d, s, j0, j1);
        return;
    }
    int g = strided_layout_packed_group(a->width);
    int64_t whole = (j1 - j0) / g * g;
    if (kind == RUN_BYTES) {
        /* Whole bytes, then the last bits into a partial byte. */
        int64_t bits = (j1 - j0) * a->width;
        memcpy(dp, sp, (size_t)(bits / 8));
        if (bits % 8 != 0) {
            unsigned char m = (unsigned char)((1u << (bits % 8)) - 1);
            dp[bits / 8] = (unsigned char)((dp[bits / 8] & ~m) | (sp[bits / 8] & m));
        }
        return;
    }
    convert(kind == RUN_UNPACK, dp, sp, whole, a->width);
    if (whole < j1 - j0)
        run_items(a, d, s, j0 + whole, j1);
}

/* The offsets of row r (an index of axes 1..ndim-1) of a, skipping axis
 * skip (-1: none). */
static void unravel(const strided_copy_subbyte_args *a, int64_t r, int skip, int64_t *d, int64_t *s)
{
    *d = 0;
    *s = 0;
    for (int k = 1; k < a->ndim; k++) {
        if (k == skip)
            continue;
        int64_t j = r % a->extent[k];
        r /= a->extent[k];
        *d += j * a->dst_stride[k];
        *s += j * a->src_stride[k];
    }
}

/* Tiles of transposes on the host: TILE x TILE elements, a multiple of
 * every group (8 at most); larger than the kernel's, so that a tile's
 * source and destination rows are whole cache lines. */
#define TILE 128

/* The value of width bits (at most 12) at bit shift of p and on. */
static inline uint32_t get_near(const unsigned char *p, int shift, int width)
{
    uint32_t v = p[0];
    if (shift + width > 8)
        v |= (uint32_t)p[1] << 8;
    if (shift + width > 16)
        v |= (uint32_t)p[2] << 16;
    return (v >> shift) & ((1u << width) - 1);
}

/* The m values of w bits at bit shift of p and on, step bits apart, into
 * col[0], col[TILE], ...: whole groups of packed values from their bytes
 * at once, padded values from their bytes, the rest one by one. A constant
 * w and step let the compiler unroll a group. */
static inline void gather_as(uint16_t *col, const unsigned char *p, int shift, int m, int w,
                             int step)
{
    const uint32_t mask = (1u << w) - 1;
    int ia = 0;
    if (shift == 0 && step == 8) {
        for (; ia < m; ia++)
            col[ia * TILE] = (uint16_t)(p[ia] & mask);
    } else if (shift == 0 && step == w) {
        const int g = 8 / (w & -w), gbytes = g * w / 8;
        for (; ia + g <= m; ia += g, p += gbytes) {
            uint32_t v = p[0];
            for (int k = 1; k < gbytes; k++)
                v |= (uint32_t)p[k] << (8 * k);
            for (int k = 0; k < g; k++)
                col[(ia + k) * TILE] = (uint16_t)((v >> (k * w)) & mask);
        }
        shift = 0;
    }
    for (int bit = shift; ia < m; ia++, bit += step)
        col[ia * TILE] = (uint16_t)get_near(p + (bit >> 3), bit & 7, w);
}

/* gather_as with w and step constants in each call: packed 1, 2, 4, 6
 * and 12 bits, padded 1, 2, 4 and 6. */
static void gather(uint16_t *col, const unsigned char *p, int shift, int m, int w, int step)
{
    switch (step * 16 + w) {
    case 1 * 16 + 1: gather_as(col, p, shift, m, 1, 1); break;
    case 2 * 16 + 2: gather_as(col, p, shift, m, 2, 2); break;
    case 4 * 16 + 4: gather_as(col, p, shift, m, 4, 4); break;
    case 6 * 16 + 6: gather_as(col, p, shift, m, 6, 6); break;
    case 12 * 16 + 12: gather_as(col, p, shift, m, 12, 12); break;
    case 8 * 16 + 1: gather_as(col, p, shift, m, 1, 8); break;
    case 8 * 16 + 2: gather_as(col, p, shift, m, 2, 8); break;
    case 8 * 16 + 4: gather_as(col, p, shift, m, 4, 8); break;
    case 8 * 16 + 6: gather_as(col, p, shift, m, 6, 8); break;
    default: gather_as(col, p, shift, m, w, step); break;
    }
}

/* The reverse of gather_as for a destination run starting on a byte at p:
 * the values v[0..m) written as whole groups of packed values of w bits
 * (w < 8), or as bytes (w == 8: padded, high bits 0). Returns the values
 * written: all but those of a short last group. */
static inline int scatter_as(unsigned char *p, const uint16_t *v, int m, int w)
{
    if (w == 8) {
        for (int i = 0; i < m; i++)
            p[i] = (unsigned char)v[i];
        return m;
    }
    const int g = 8 / (w & -w), gbytes = g * w / 8;
    int i = 0;
    for (; i + g <= m; i += g, p += gbytes) {
        uint32_t acc = 0;
        for (int k = 0; k < g; k++)
            acc |= (uint32_t)v[i + k] << (k * w);
        for (int k = 0; k < gbytes; k++)
            p[k] = (unsigned char)(acc >> (8 * k));
    }
    return i;
}

/* scatter_as with w a constant in each call. */
static int scatter(unsigned char *p, const uint16_t *v, int m, int w)
{
    switch (w) {
    case 1: return scatter_as(p, v, m, 1);
    case 2: return scatter_as(p, v, m, 2);
    case 4: return scatter_as(p, v, m, 4);
    case 6: return scatter_as(p, v, m, 6);
    case 8: return scatter_as(p, v, m, 8);
    default: return scatter_as(p, v, m, w);
    }
}

/* Tile t of a transpose (a->tile_axis >= 1): its values read along the
 * source's run into buf (TILE x TILE, [along a][along b]), then written
 * along the destination's run, a group of whole bytes at a time where the
 * destination is packed. A tile's first element along axis 0 is a multiple
 * of TILE, so of the group: tiles own their destination bytes. */
static void run_tile(const strided_copy_subbyte_args *a, int64_t tiles_a, int64_t tiles_b,
                     int64_t t, uint16_t *buf)
{
    const int ka = a->tile_axis;
    const int64_t na = a->extent[ka], nb = a->n0;
    int64_t rest = t / tiles_a;
    const int64_t a0 = (t - rest * tiles_a) * TILE;
    const int64_t b0 = rest % tiles_b * TILE;
    int64_t d, s;
    unravel(a, rest / tiles_b, ka, &d, &s);
    const int ma = na - a0 < TILE ? (int)(na - a0) : TILE;
    const int mb = nb - b0 < TILE ? (int)(nb - b0) : TILE;
    const int w = a->width, sstep = a->src_step;
    for (int ib = 0; ib < mb; ib++) {
        int shift;
        const unsigned char *p = byte_of(
            (const unsigned char *)(uintptr_t)a->src,
            a->src_bit + (s + a0 * a->src_stride[ka] + (b0 + ib) * a->src_stride[0]) * sstep,
            &shift);
        gather(buf + ib, p, shift, ma, w, sstep);
    }
    const int g = a->group;
    for (int ia = 0; ia < ma; ia++) {
        const uint16_t *v = buf + ia * TILE;
        int64_t dj = d + (a0 + ia) * a->dst_stride[ka] + b0;
        int shift;
        unsigned char *p = (unsigned char *)byte_of((const unsigned char *)(uintptr_t)a->dst,
                                                    a->dst_bit + dj * a->dst_step, &shift);
        int ib = shift == 0 ? scatter(p, v, mb, a->dst_width) : 0;
        for (; ib < mb; ib += g) {
            int n = mb - ib < g ? mb - ib : g;
            uint32_t acc = 0;
            for (int u = 0; u < n; u++)
                acc |= (uint32_t)v[ib + u] << (u * w);
            write_bits((unsigned char *)(uintptr_t)a->dst, a->dst_bit + (dj + ib) * a->dst_step,
                       g == 1 ? a->dst_width : n * w, acc);
        }
    }
}

/* Elements a thread is given at least, for copies on several threads. */
#define THREAD_MIN_ELEMENTS ((int64_t)1 << 18)
/* Elements of a span of a row: a multiple of every group (8 at most). */
#define SPAN_ELEMENTS ((int64_t)1 << 16)

/* Run a on the host, on threads threads: transposes by tiles, the rest by
 * spans of rows. Rows and spans own their destination bytes (the
 * packed-layout rule), as tiles do. */
static void run_host(const strided_copy_subbyte_args *a, int threads)
{
    (void)threads;
    int64_t rows = 1;
    for (int k = 1; k < a->ndim; k++)
        rows *= a->extent[k]; /* at most the volume */
    if (a->tile_axis > 0) {
        /* tiles_a * tiles_b * the other rows: at most 2 * the volume. */
        const int64_t na = a->extent[a->tile_axis];
        const int64_t tiles_a = na / TILE + (na % TILE != 0);
        const int64_t tiles_b = a->n0 / TILE + (a->n0 % TILE != 0);
        const int64_t tiles = rows / na * tiles_a * tiles_b;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#endif
        {
            uint16_t buf[TILE * TILE];
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
            for (int64_t t = 0; t < tiles; t++)
                run_tile(a, tiles_a, tiles_b, t, buf);
        }
        return;
    }
    /* rows * spans: at most the volume plus the rows, 2 * the volume. */
    const int64_t spans = a->n0 / SPAN_ELEMENTS + (a->n0 % SPAN_ELEMENTS != 0);
    const enum run_kind kind = run_kind_of(a);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
    for (int64_t i = 0; i < rows * spans; i++) {
        int64_t d, s, j0 = i % spans * SPAN_ELEMENTS;
        unravel(a, i / spans, -1, &d, &s);
        run_span(a, kind, d, s, j0, a->n0 - j0 < SPAN_ELEMENTS ? a->n0 : j0 + SPAN_ELEMENTS);
    }
}

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
        /* Bit positions fit in int64: each is within a view's bytes,
         * which lie in the address space, times 8. */
        (void)work; /* the device's; the host goes by rows and tiles */
        int threads = 1;
#ifdef _OPENMP
        int64_t t = plan->volume / THREAD_MIN_ELEMENTS;
        threads = t < 1 ? 1 : t > omp_get_max_threads() ? omp_get_max_threads() : (int)t;
#endif
        run_host(&a, threads);
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
