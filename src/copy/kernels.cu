/*
 * copy/kernels.cu: the CUDA kernels of strided copies.
 *
 * Compiled ahead of time by nvcc into a fatbin that the library embeds and
 * loads through the driver (copy/launch.c, which also says which plan goes
 * to which kernel). Every kernel takes one argument struct of copy/kernels.h
 * by value and has a C name, for cuModuleGetFunction:
 *
 *   contiguous_W          one run of bytes: W-byte vectors (W = 1..16),
 *                         single bytes before the first aligned vector and
 *                         after the last
 *   rows_W                rows of W-byte units (the host picks W so that
 *                         every row start, length and pitch is aligned), cut
 *                         into chunks of 256 x STRIDED_COPY_UNROLL_OF(W)
 *                         units: a chunk is unravelled once, its units cost
 *                         no division
 *   broadcast_S           the same chunks, each filled from one source
 *                         element, read once per chunk
 *   broadcast_Sx16        ... stored as 16-byte words of 16/S copies
 *   gather_W_iN_dM        anything: one unit per thread and step, its
 *                         offsets unravelled over every axis with magic-
 *                         number division (N: 32- or 64-bit indices; M: 8 or
 *                         64 axes at most - with 8 the unravel loop is
 *                         unrolled and reads its arguments at constant
 *                         offsets)
 *   transpose_S_iN        shared-memory tiles of TILE x TILE elements (128
 *                         for 1-byte, 64 for 2- and 4-byte, 32 for 8- and
 *                         16-byte elements, padded by one against bank
 *                         conflicts), read along the source's contiguous
 *                         axis a and written along the destination's b,
 *                         batched over the other axes
 *   transpose_grouped_S_iN  tiles whose sides are groups of axes: the
 *                         source's innermost axes along a, the
 *                         destination's along b, for permutations of
 *                         axes too short to fill a tile each
 *   transpose_thin_S_iN   thin transposes (one of the two axes at most
 *                         STRIDED_COPY_THIN long): rectangular tiles that
 *                         span the short axis whole (strided_copy_thin_tile),
 *                         read in the source's order and written in the
 *                         destination's, both coalesced
 *   rows_shift            rows contiguous on both sides whose addresses
 *                         share less than 16 bytes of alignment: aligned
 *                         16-byte destination vectors, each from two
 *                         aligned source vectors shifted into place
 *   subbyte               sub-byte elements (packed, or padded on one
 *                         side) by their bits: a group of destination
 *                         elements that fills whole bytes per work item,
 *                         chunks of a row per block, or for transposes
 *                         tiles of 64 x 64 elements through shared memory
 *                         (strided_copy_subbyte_args)
 *   transpose_Sp_iN       1- and 2-byte elements as 32-bit words: each
 *                         thread transposes 4x4 bytes or 2x2 halfwords in
 *                         registers with __byte_perm, and the word tile in
 *                         shared memory is XOR swizzled (no bank conflicts,
 *                         no padding); 4-byte elements as 16-byte vectors,
 *                         4x4 elements a thread; edge tiles take the
 *                         element path
 *   narrow_S_F_D_iN       1- and 2-byte elements between records of F = 2,
 *                         3 or 4 fields and F planes (D: planes from
 *                         records, records from planes): each thread moves
 *                         4 / S records as F words in and F out, regrouped
 *                         in registers; no shared memory
 *
 * Every kernel is a grid-stride loop, so any grid size is correct; the host
 * sizes grids by the device's multiprocessor count. Nothing is read or
 * written outside the elements the plan names: every access is behind a
 * bounds test, and vector accesses are used only where the host proved them
 * aligned and whole. Source strides may be negative or zero. Offsets are
 * added to typed pointers, so that they scale to bytes in 64 bits.
 */
#include <stdint.h>

#include "copy/kernels.h"

namespace {

constexpr int THREADS = STRIDED_COPY_THREADS;
constexpr int TILE_ROWS = THREADS / 32; /* threadIdx.y of tile kernels */

/* The unit of a given size: a plain integer or vector type of that size and
 * alignment, so that a unit moves in one load and one store. */
template <int N> struct unit_of;
template <> struct unit_of<1> {
    typedef uint8_t type;
};
template <> struct unit_of<2> {
    typedef uint16_t type;
};
template <> struct unit_of<4> {
    typedef uint32_t type;
};
template <> struct unit_of<8> {
    typedef uint64_t type;
};
template <> struct unit_of<16> {
    typedef uint4 type;
};

__device__ __forceinline__ uint32_t quotient(const strided_copy_div32 &d, uint32_t n)
{
    return (__umulhi(n, d.m) + n) >> d.s;
}

__device__ __forceinline__ uint64_t quotient(const strided_copy_div64 &d, uint64_t n)
{
    return (__umul64hi(n, d.m) + n) >> d.s;
}

/* The index and signed offset types of an argument struct, and how many
 * axes it holds. */
template <class Args> struct traits {
    typedef decltype(Args::count) index;
    typedef decltype(Args::dst_a) offset;
    static constexpr int dims = sizeof(Args::dst_stride) / sizeof(Args::dst_stride[0]);
};

/* One step of unravel: the remainder of i by axis k goes into the offsets,
 * the quotient is what is left of i. */
template <class Args>
__device__ __forceinline__ void unravel_axis(const Args &a, int k, typename traits<Args>::index &i,
                                             typename traits<Args>::offset &d,
                                             typename traits<Args>::offset &s)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    const I q = quotient(a.extent[k], i);
    const I r = i - q * (I)a.extent[k].d;
    d += (S)r * a.dst_stride[k];
    s += (S)r * a.src_stride[k];
    i = q;
}

/* The destination and source offsets of index i over the axes of a
 * (innermost first). Assumes: i < the volume of the axes. With few axes the
 * loop is unrolled, so that every argument is read at a constant offset;
 * with many it is not (the code would be 64 copies long): the arguments are
 * then read at computed offsets, still straight from the parameter space. */
template <class Args>
__device__ __forceinline__ void unravel(const Args &a, typename traits<Args>::index i,
                                        typename traits<Args>::offset &dst,
                                        typename traits<Args>::offset &src)
{
    typedef typename traits<Args>::offset S;
    S d = 0, s = 0;

    if (a.ndim > 0) {
        const int last = a.ndim - 1;
        if constexpr (traits<Args>::dims <= STRIDED_COPY_FEW_DIMS) {
#pragma unroll
            for (int k = 0; k < traits<Args>::dims - 1; k++)
                if (k < last)
                    unravel_axis(a, k, i, d, s);
        } else {
#pragma unroll 1
            for (int k = 0; k < last; k++)
                unravel_axis(a, k, i, d, s);
        }
        d += (S)i * a.dst_stride[last];
        s += (S)i * a.src_stride[last];
    }
    dst = d;
    src = s;
}

/* What a destination unit is made of, given the source unit. */
struct same {
    template <class U> __device__ __forceinline__ U operator()(U v) const
    {
        return v;
    }
};

/* A 16-byte vector with its E-byte elements in the reverse order: a row
 * read backwards (a source stride of -1 element) moves in vectors so, each
 * read from the mirrored place. prmt (__byte_perm) reverses the bytes or
 * the halves of a word. */
template <int E> struct reverse_elements {
    __device__ __forceinline__ uint4 operator()(uint4 v) const
    {
        static_assert(E == 1 || E == 2 || E == 4 || E == 8, "E is 1, 2, 4 or 8 bytes");
        if constexpr (E == 8)
            return make_uint4(v.z, v.w, v.x, v.y);
        if constexpr (E == 4)
            return make_uint4(v.w, v.z, v.y, v.x);
        constexpr unsigned order = E == 2 ? 0x1032 : 0x0123;
        return make_uint4(__byte_perm(v.w, 0, order), __byte_perm(v.z, 0, order),
                          __byte_perm(v.y, 0, order), __byte_perm(v.x, 0, order));
    }
};

/* A word W filled with copies of the element T. */
template <class W> struct splat {
    template <class T> __device__ __forceinline__ W operator()(T v) const
    {
        static_assert(sizeof(W) % sizeof(T) == 0, "T must divide W");
        union {
            T e[sizeof(W) / sizeof(T)];
            W w;
        } u;
#pragma unroll
        for (int j = 0; j < (int)(sizeof(W) / sizeof(T)); j++)
            u.e[j] = v;
        return u.w;
    }
};

/* dst[unit i] = make(src[unit i]) for every i < a.count: UNROLL units per
 * thread per step, all loads issued before the stores. */
template <class D, class Src, class Args, class Make>
__device__ __forceinline__ void elementwise(const Args &a, Make make)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr int UNROLL
    = STRIDED_COPY_UNROLL_OF(sizeof(D));
    D *dst = reinterpret_cast<D *>(a.dst);
    const Src *src = reinterpret_cast<const Src *>(a.src);
    const I step = (I)gridDim.x * THREADS * UNROLL;

    for (I base = (I)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < a.count; base += step) {
        Src v[UNROLL];
        S to[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            I i = base + (I)u * THREADS;
            if (i < a.count) {
                S from;
                unravel(a, i, to[u], from);
                v[u] = __ldg(&src[from]);
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            I i = base + (I)u * THREADS;
            if (i < a.count)
                dst[to[u]] = make(v[u]);
        }
    }
}

/* Rows of n_b units along axis b (strides dst_b, src_b; the batch axes
 * of a say where each row starts), cut into chunks of THREADS * UNROLL
 * units: tiles_b chunks to a row, count chunks in all. A chunk is unravelled
 * once, so a unit costs no division. With FILL (a broadcast: src_b = 0)
 * the row's one source unit is read once per chunk. */
template <class D, class Src, bool FILL, class Args, class Make>
__device__ __forceinline__ void rows(const Args &a, Make make)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr int UNROLL
    = STRIDED_COPY_UNROLL_OF(sizeof(D));

    for (I c = blockIdx.x; c < a.count; c += gridDim.x) {
        const I row = quotient(a.tiles_b, c);
        const I j0 = (c - row * (I)a.tiles_b.d) * (THREADS * UNROLL) + threadIdx.x;
        S to, from;
        unravel(a, row, to, from);
        D *dst = reinterpret_cast<D *>(a.dst) + to;
        const Src *src = reinterpret_cast<const Src *>(a.src) + from;
        if constexpr (FILL) {
            const D v = make(__ldg(src));
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const I j = j0 + (I)u * THREADS;
                if (j < a.n_b)
                    dst[(S)j * a.dst_b] = v;
            }
        } else {
            Src v[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const I j = j0 + (I)u * THREADS;
                if (j < a.n_b)
                    v[u] = __ldg(&src[(S)j * a.src_b]);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const I j = j0 + (I)u * THREADS;
                if (j < a.n_b)
                    dst[(S)j * a.dst_b] = make(v[u]);
            }
        }
    }
}

/* The aligned 32-bit word at q (an address, a multiple of 4), its bytes
 * outside [lo, hi) read as 0 and not touched: the rows of the sub-byte
 * kernels read only the bytes of their own elements. */
__device__ __forceinline__ uint32_t word_within(uintptr_t q, uintptr_t lo, uintptr_t hi)
{
    if (q >= lo && q + 4 <= hi)
        return __ldg(reinterpret_cast<const uint32_t *>(q));
    uint32_t w = 0;
    for (int k = 0; k < 4; k++)
        if (q + k >= lo && q + k < hi)
            w |= (uint32_t)__ldg(reinterpret_cast<const uint8_t *>(q + k)) << (8 * k);
    return w;
}

/* The aligned 16 bytes at q (a multiple of 16), its bytes outside [lo, hi)
 * read as 0 and not touched (word_within). */
__device__ __forceinline__ uint4 vector_within(uintptr_t q, uintptr_t lo, uintptr_t hi)
{
    if (q >= lo && q + 16 <= hi)
        return __ldg(reinterpret_cast<const uint4 *>(q));
    return make_uint4(word_within(q, lo, hi), word_within(q + 4, lo, hi),
                      word_within(q + 8, lo, hi), word_within(q + 12, lo, hi));
}

/* Bytes shift..shift + 15 of the 32 bytes lo, hi (0 <= shift < 16). */
__device__ __forceinline__ uint4 shifted(const uint4 &lo, const uint4 &hi, int shift)
{
    const int q = shift >> 2, r = (shift & 3) * 8;
    const uint32_t x0 = q == 0 ? lo.x : q == 1 ? lo.y : q == 2 ? lo.z : lo.w;
    const uint32_t x1 = q == 0 ? lo.y : q == 1 ? lo.z : q == 2 ? lo.w : hi.x;
    const uint32_t x2 = q == 0 ? lo.z : q == 1 ? lo.w : q == 2 ? hi.x : hi.y;
    const uint32_t x3 = q == 0 ? lo.w : q == 1 ? hi.x : q == 2 ? hi.y : hi.z;
    const uint32_t x4 = q == 0 ? hi.x : q == 1 ? hi.y : q == 2 ? hi.z : hi.w;
    return make_uint4(__funnelshift_r(x0, x1, r), __funnelshift_r(x1, x2, r),
                      __funnelshift_r(x2, x3, r), __funnelshift_r(x3, x4, r));
}

/* Rows of n_b bytes, contiguous on both sides, whose addresses share less
 * than 16 bytes of alignment (rows_shift): each work item is one aligned
 * 16-byte slot of a destination row, stored as one vector; its bytes come
 * from the two aligned source vectors around them, shifted into place (the
 * source's offset from the destination is the same for every slot of a
 * row). Slots cut by a row's ends, and source vectors that reach past the
 * row's bytes, go byte by byte: nothing outside the rows is read or
 * written. Chunks of THREADS * STRIDED_COPY_SHIFT_UNROLL slots as rows_W's
 * units. */
__device__ __forceinline__ void rows_shift(const strided_copy_args64_64 &a)
{
    constexpr int UNROLL
    = STRIDED_COPY_SHIFT_UNROLL;
    for (uint64_t c = blockIdx.x; c < a.count; c += gridDim.x) {
        const uint64_t row = quotient(a.tiles_b, c);
        const uint64_t k0 = (c - row * a.tiles_b.d) * (THREADS * UNROLL) + threadIdx.x;
        int64_t to, from;
        unravel(a, row, to, from);
        const uintptr_t d = a.dst + (uintptr_t)to, s = a.src + (uintptr_t)from;
        const uintptr_t dend = d + a.n_b, send = s + a.n_b, delta = s - d;
        const uintptr_t d0 = d & ~(uintptr_t)15;
        const int shift = (int)(delta & 15);
        uint4 lo[UNROLL], hi[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uintptr_t p = d0 + 16 * (uintptr_t)(k0 + u * THREADS);
            if (p < dend) {
                const uintptr_t q = p + delta - (uintptr_t)shift;
                lo[u] = vector_within(q, s, send);
                hi[u] = shift != 0 ? vector_within(q + 16, s, send) : make_uint4(0, 0, 0, 0);
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uintptr_t p = d0 + 16 * (uintptr_t)(k0 + u * THREADS);
            if (p >= dend)
                continue;
            const uint4 v = shifted(lo[u], hi[u], shift);
            if (p >= d && p + 16 <= dend) {
                *reinterpret_cast<uint4 *>(p) = v;
                continue;
            }
            const uint32_t w[4] = {v.x, v.y, v.z, v.w};
            for (int b = 0; b < 16; b++)
                if (p + b >= d && p + b < dend)
                    *reinterpret_cast<uint8_t *>(p + b) = (uint8_t)(w[b >> 2] >> (8 * (b & 3)));
        }
    }
}

/* One contiguous run: bytes up to the first W-aligned destination byte,
 * then W-byte vectors, then the remaining bytes. Assumes: dst and src are
 * congruent modulo W (the host picks W so). */
template <class W> __device__ __forceinline__ void contiguous(const strided_copy_span &a)
{
    constexpr int UNROLL
    = STRIDED_COPY_UNROLL_OF(sizeof(W));
    const uint64_t w = sizeof(W);
    uint8_t *d8 = reinterpret_cast<uint8_t *>(a.dst);
    const uint8_t *s8 = reinterpret_cast<const uint8_t *>(a.src);
    uint64_t head = (w - a.dst % w) % w;
    if (head > a.nbytes)
        head = a.nbytes;
    const uint64_t n = (a.nbytes - head) / w;
    const uint64_t tail = head + n * w;

    if (blockIdx.x == 0 && threadIdx.x < head)
        d8[threadIdx.x] = s8[threadIdx.x];
    if (blockIdx.x == 0 && tail + threadIdx.x < a.nbytes)
        d8[tail + threadIdx.x] = s8[tail + threadIdx.x];

    W *dst = reinterpret_cast<W *>(d8 + head);
    const W *src = reinterpret_cast<const W *>(s8 + head);
    const uint64_t step = (uint64_t)gridDim.x * THREADS * UNROLL;
    for (uint64_t base = (uint64_t)blockIdx.x * THREADS * UNROLL + threadIdx.x; base < n;
         base += step) {
        W v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (base + u * THREADS < n)
                v[u] = __ldg(&src[base + u * THREADS]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            if (base + u * THREADS < n)
                dst[base + u * THREADS] = v[u];
    }
}

/* The tile edge for elements of N bytes. */
template <int N> struct tile_of {
    static constexpr int value = N == 1 ? 128 : N <= 4 ? 64 : 32;
};

/* Where tile t lies: its first indices along a and b, and the offsets of
 * its batch. */
template <class Args> struct tile_at {
    typename traits<Args>::index a0, b0;
    typename traits<Args>::offset dst, src;
};

template <int TILE, class Args>
__device__ __forceinline__ tile_at<Args> locate(const Args &a, typename traits<Args>::index t)
{
    typedef typename traits<Args>::index I;
    tile_at<Args> at;
    I rest = quotient(a.tiles_b, t);
    I batch = quotient(a.tiles_a, rest);
    at.b0 = (t - rest * (I)a.tiles_b.d) * TILE;
    at.a0 = (rest - batch * (I)a.tiles_a.d) * TILE;
    unravel(a, batch, at.dst, at.src);
    return at;
}

/* Elements of N bytes in a destination sector, less one: the most a
 * skewed tile (kernels.h) reaches back along b. */
template <int N> struct skew_of {
    static constexpr int value = STRIDED_COPY_SECTOR / N - 1;
};

/* Copy one tile element by element through shared memory: read along a
 * (coalesced when the source is contiguous along a), write along b. The
 * tile is padded by one element per row against bank conflicts. Bounds are
 * tested per element, so edge tiles are correct. With SKEW, each
 * destination row's piece starts up to skew_of elements before the tile's
 * b0, on a sector (kernels.h): the tile reads that many more source rows. */
template <class T, int TILE, bool SKEW, class Args>
__device__ __forceinline__ void tile_elements(const Args &a, const tile_at<Args> &at, T *sm)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr int BACK = SKEW ? skew_of<sizeof(T)>::value : 0;
    constexpr int ROWS = TILE + BACK; /* source rows b0 - BACK .. b0 + TILE - 1 */
    T *dst = reinterpret_cast<T *>(a.dst) + at.dst;
    const T *src = reinterpret_cast<const T *>(a.src) + at.src;

    /* Every load of the thread in flight at once for 4- to 16-byte
     * elements (8 to 16 loads); 1- and 2-byte ones would need 32 to 64
     * registers for it. Rows before 0 wrap (unsigned) past n_b. */
#pragma unroll(sizeof(T) >= 4 ? (ROWS + TILE_ROWS - 1) / TILE_ROWS : 4)
    for (int y = 0; y < (ROWS + TILE_ROWS - 1) / TILE_ROWS; y++) {
        const int j = threadIdx.y + y * TILE_ROWS; /* along b */
        const I ib = at.b0 + j - BACK;
#pragma unroll
        for (int x = 0; x < TILE / 32; x++) {
            const int c = threadIdx.x + x * 32; /* along a */
            const I ia = at.a0 + c;
            if ((ROWS % TILE_ROWS == 0 || j < ROWS) && ia < a.n_a && ib < a.n_b)
                sm[j * (TILE + 1) + c] = __ldg(&src[(S)ia * a.src_a + (S)ib * a.src_b]);
        }
    }
    __syncthreads();
#pragma unroll 4
    for (int y = 0; y < TILE / TILE_ROWS; y++) {
        const int j = threadIdx.y + y * TILE_ROWS; /* along a */
        const I ia = at.a0 + j;
        /* The row's elements at b0 past a sector boundary (dst_b is 1), in
         * 64 bits: the byte offset may pass int32 where the element offset
         * does not, and a row past n_a may pass both. */
        int back = 0;
        if (SKEW) {
            const int64_t e = (int64_t)ia * (int64_t)a.dst_a + (int64_t)at.b0;
            const uintptr_t at_b0 = reinterpret_cast<uintptr_t>(dst) +
                                    (uintptr_t)e * (uintptr_t)sizeof(T);
            back = (int)(at_b0 % STRIDED_COPY_SECTOR / sizeof(T));
        }
#pragma unroll
        for (int x = 0; x < TILE / 32; x++) {
            const int c = threadIdx.x + x * 32; /* along b, from b0 - back */
            const I ib = at.b0 + c - back;
            if (ia < a.n_a && ib < a.n_b)
                dst[(S)ia * a.dst_a + (S)ib * a.dst_b] = sm[(c + BACK - back) * (TILE + 1) + j];
        }
    }
    __syncthreads();
}

/* Transpose P words of P elements each (P = 2: halfwords, P = 4: bytes):
 * w[k] holds elements (a + 0..P-1, b + k); p[j] gets (a + j, b + 0..P-1). */
__device__ __forceinline__ void transpose_words(const uint32_t (&w)[2], uint32_t (&p)[2])
{
    p[0] = __byte_perm(w[0], w[1], 0x5410);
    p[1] = __byte_perm(w[0], w[1], 0x7632);
}

__device__ __forceinline__ void transpose_words(const uint32_t (&w)[4], uint32_t (&p)[4])
{
    const uint32_t t0 = __byte_perm(w[0], w[1], 0x5140);
    const uint32_t t1 = __byte_perm(w[0], w[1], 0x7362);
    const uint32_t t2 = __byte_perm(w[2], w[3], 0x5140);
    const uint32_t t3 = __byte_perm(w[2], w[3], 0x7362);
    p[0] = __byte_perm(t0, t2, 0x5410);
    p[1] = __byte_perm(t0, t2, 0x7632);
    p[2] = __byte_perm(t1, t3, 0x5410);
    p[3] = __byte_perm(t1, t3, 0x7632);
}

/* Copy one full tile of 32P x 32P elements of 4/P bytes as 32-bit words.
 * Thread x reads word x of P consecutive source rows (b), transposes the
 * P x P block in registers and stores P words of destination rows (a) into
 * the word tile sm[32P][32]; word column g of row r is kept at column
 * g ^ (r / P % 32), so that both the stores here (rows P x + j, one column)
 * and the loads below (one row, columns x) fall in 32 distinct banks.
 * Assumes: the whole tile lies inside the extents; src_a = dst_b = 1; the
 * batch offsets, src_b, dst_a and both base addresses are multiples of P
 * elements (the host checks all of it), so every word is aligned. */
template <int P, class Args>
__device__ __forceinline__ void tile_words(const Args &a, const tile_at<Args> &at, uint32_t *sm)
{
    typedef typename traits<Args>::offset S;
    typedef typename unit_of<4 / P>::type T;
    /* Element pointers, so that offsets scale to bytes in 64 bits. */
    const T *src = reinterpret_cast<const T *>(a.src) + at.src + at.a0;
    T *dst = reinterpret_cast<T *>(a.dst) + at.dst + at.b0;
    const int x = threadIdx.x;

#pragma unroll
    for (int y = 0; y < 32 / TILE_ROWS; y++) {
        const int g = threadIdx.y + y * TILE_ROWS; /* rows b = P g + k */
        uint32_t w[P], p[P];
#pragma unroll
        for (int k = 0; k < P; k++) {
            const S e = (S)(P * x) + ((S)at.b0 + P * g + k) * a.src_b;
            w[k] = __ldg(reinterpret_cast<const uint32_t *>(src + e));
        }
        transpose_words(w, p);
#pragma unroll
        for (int j = 0; j < P; j++)
            sm[(P * x + j) * 32 + (g ^ x)] = p[j];
    }
    __syncthreads();
#pragma unroll
    for (int y = 0; y < 32 * P / TILE_ROWS; y++) {
        const int r = threadIdx.y + y * TILE_ROWS; /* row a0 + r */
        const S e = ((S)at.a0 + r) * a.dst_a + (S)(P * x);
        *reinterpret_cast<uint32_t *>(dst + e) = sm[r * 32 + (x ^ (r / P % 32))];
    }
    __syncthreads();
}

/* Copy one full tile of 64 x 64 4-byte elements as 16-byte vectors:
 * thread (x, y) of 16 x 16 reads the vector of elements a0 + 4x .. + 3 of
 * source rows b0 + 4y .. + 3 (four loads, every warp two runs of 256
 * bytes), whose 4 x 4 block, transposed in registers, is four vectors of
 * destination rows a0 + 4x + j, stored into the vector tile sm[64][16] at
 * column y ^ x of their row (so that every 8 threads of a warp, which
 * shared memory serves together, take 8 distinct columns, here and when
 * the rows are read back: vector column c of row r is at c ^ (r / 4)).
 * Then each thread stores four vectors of destination rows, two runs of
 * 256 bytes a warp. Assumes: the whole tile lies inside the extents;
 * src_a = dst_b = 1; the batch offsets, src_b, dst_a and both base
 * addresses are multiples of 4 elements (the host checks all of it). */
template <class Args>
__device__ __forceinline__ void tile_vectors(const Args &a, const tile_at<Args> &at, uint4 *sm)
{
    typedef typename traits<Args>::offset S;
    const int t = threadIdx.y * 32 + threadIdx.x, x = t % 16, y = t / 16;
    /* Element pointers, so that offsets scale to bytes in 64 bits. */
    const uint32_t *src = reinterpret_cast<const uint32_t *>(a.src) + at.src + at.a0 + 4 * x;
    uint32_t *dst = reinterpret_cast<uint32_t *>(a.dst) + at.dst + at.b0 + 4 * x;
    uint4 v[4];

#pragma unroll
    for (int k = 0; k < 4; k++)
        v[k] = __ldg(reinterpret_cast<const uint4 *>(src + ((S)at.b0 + 4 * y + k) * a.src_b));
    sm[(4 * x + 0) * 16 + (y ^ x)] = make_uint4(v[0].x, v[1].x, v[2].x, v[3].x);
    sm[(4 * x + 1) * 16 + (y ^ x)] = make_uint4(v[0].y, v[1].y, v[2].y, v[3].y);
    sm[(4 * x + 2) * 16 + (y ^ x)] = make_uint4(v[0].z, v[1].z, v[2].z, v[3].z);
    sm[(4 * x + 3) * 16 + (y ^ x)] = make_uint4(v[0].w, v[1].w, v[2].w, v[3].w);
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const int r = y + 16 * q; /* row a0 + r */
        *reinterpret_cast<uint4 *>(dst + ((S)at.a0 + r) * a.dst_a) = sm[r * 16 + (x ^ (r / 4))];
    }
    __syncthreads();
}

/* Every tile of the launch, TILE x TILE elements of T; with PACKED (1-, 2-
 * and 4-byte elements whose alignment the host checked), full tiles go
 * through tile_words (1 and 2 bytes) or tile_vectors (4 bytes) and edge
 * tiles through tile_elements; with SKEW (4- to 16-byte elements,
 * kernels.h), tiles are skewed to the destination's sectors. */
template <class T, bool PACKED, bool SKEW, class Args>
__device__ __forceinline__ void transpose(const Args &a)
{
    typedef typename traits<Args>::index I;
    constexpr int TILE = tile_of<sizeof(T)>::value;
    constexpr int ROWS = TILE + (SKEW ? skew_of<sizeof(T)>::value : 0);
    constexpr int ELEMENT_WORDS = (ROWS * (TILE + 1) * (int)sizeof(T) + 3) / 4;
    constexpr int PACKED_WORDS = !PACKED ? 0 : sizeof(T) == 4 ? TILE * TILE : TILE * 32;
    constexpr int WORDS = ELEMENT_WORDS > PACKED_WORDS ? ELEMENT_WORDS : PACKED_WORDS;
    static_assert(!PACKED || (sizeof(T) == 4 ? TILE == 64 : TILE == 32 * (4 / sizeof(T))),
                  "a packed tile is 32 words or 16 vectors wide");
    static_assert(!SKEW || (!PACKED && sizeof(T) >= 4), "skewed tiles are of 4 to 16 bytes");
    __shared__ uint4 smem[(WORDS + 3) / 4];

    for (I t = blockIdx.x; t < a.count; t += gridDim.x) {
        const tile_at<Args> at = locate<TILE>(a, t);
        if constexpr (PACKED) {
            if (at.a0 + TILE <= a.n_a && at.b0 + TILE <= a.n_b) {
                if constexpr (sizeof(T) == 4)
                    tile_vectors(a, at, smem);
                else
                    tile_words<4 / sizeof(T)>(a, at, reinterpret_cast<uint32_t *>(smem));
                continue;
            }
        }
        tile_elements<T, TILE, SKEW>(a, at, reinterpret_cast<T *>(smem));
    }
}

/* The destination and source offsets of index i of the group of count
 * axes from axis first of a (innermost first). A block computes these once,
 * so plain division serves. */
template <class Args>
__device__ __forceinline__ void group_offsets(const Args &a, int first, int count, int i,
                                              typename traits<Args>::offset &dst,
                                              typename traits<Args>::offset &src)
{
    typedef typename traits<Args>::offset S;
    dst = 0;
    src = 0;
    for (int k = first; k < first + count; k++) {
        const int n = (int)a.extent[k].d;
        const int q = i / n;
        dst += (S)(i - q * n) * a.dst_stride[k];
        src += (S)(i - q * n) * a.src_stride[k];
        i = q;
    }
}

/* Grouped tiles: a tile of n_a x n_b elements whose side a is the group of
 * group_a axes after the batch axes of a (the source's innermost ones) and
 * whose side b is the group of group_b axes after those (the
 * destination's), both at most TILE long, so that permutations of short
 * axes (a 6-D permutation of 32s, axes of 2 reversed) fill their tiles.
 * Every tile is whole: t is the batch index. The offsets of the tile's rows
 * stay in shared memory and those of the thread's columns in registers;
 * row j of the loads (b) and of the stores (a) is one offset for the warp
 * (a broadcast), its columns the thread's own. */
template <class T, class Args> __device__ __forceinline__ void transpose_grouped(const Args &a)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr int TILE = STRIDED_COPY_GROUP_TILE((int)sizeof(T));
    constexpr int COLS = TILE / 32;
    /* Loads in flight: up to 64 bytes a thread. */
    constexpr int STEPS = TILE / TILE_ROWS, PER_STEP = (int)sizeof(T) * COLS;
    constexpr int UNROLL
    = STEPS < 64 / PER_STEP ? STEPS : 64 / PER_STEP;
    __shared__ T sm[TILE * (TILE + 1)];
    __shared__ S row_src[TILE], row_dst[TILE]; /* of index j along b, along a */
    const int ta = (int)a.n_a, tb = (int)a.n_b;
    const int first_a = a.ndim, first_b = a.ndim + a.group_a;
    const int x = threadIdx.x;
    const T *src0 = reinterpret_cast<const T *>(a.src);
    T *dst0 = reinterpret_cast<T *>(a.dst);
    S d, s;

    for (int i = threadIdx.y * 32 + x; i < TILE; i += THREADS) {
        if (i < tb) {
            group_offsets(a, first_b, a.group_b, i, d, s);
            row_src[i] = s;
        }
        if (i < ta) {
            group_offsets(a, first_a, a.group_a, i, d, s);
            row_dst[i] = d;
        }
    }
    S col_src[COLS], col_dst[COLS]; /* of column x + 32 m along a, along b */
#pragma unroll
    for (int m = 0; m < COLS; m++) {
        col_src[m] = col_dst[m] = 0;
        if (x + 32 * m < ta)
            group_offsets(a, first_a, a.group_a, x + 32 * m, d, col_src[m]);
        if (x + 32 * m < tb)
            group_offsets(a, first_b, a.group_b, x + 32 * m, col_dst[m], s);
    }
    __syncthreads();

    for (I t = blockIdx.x; t < a.count; t += gridDim.x) {
        S dofs, sofs;
        unravel(a, t, dofs, sofs);
        const T *src = src0 + sofs;
        T *dst = dst0 + dofs;
#pragma unroll UNROLL
        for (int y = 0; y < STEPS; y++) {
            const int j = threadIdx.y + y * TILE_ROWS; /* along b */
            if (j < tb) {
                const S r = row_src[j];
#pragma unroll
                for (int m = 0; m < COLS; m++)
                    if (x + 32 * m < ta)
                        sm[j * (TILE + 1) + x + 32 * m] = __ldg(&src[r + col_src[m]]);
            }
        }
        __syncthreads();
#pragma unroll 4
        for (int y = 0; y < STEPS; y++) {
            const int j = threadIdx.y + y * TILE_ROWS; /* along a */
            if (j < ta) {
                const S r = row_dst[j];
#pragma unroll
                for (int m = 0; m < COLS; m++)
                    if (x + 32 * m < tb)
                        dst[r + col_dst[m]] = sm[(x + 32 * m) * (TILE + 1) + j];
            }
        }
        __syncthreads();
    }
}

/* n / d for n * d < 2^32, d >= 1: umulhi by m = ceil(2^32 / d) (m = 0
 * stands for d = 1). */
__device__ __forceinline__ uint32_t small_quotient(uint32_t n, uint32_t m)
{
    return m == 0 ? n : __umulhi(n, m);
}

__host__ __device__ __forceinline__ uint32_t small_magic(uint32_t d)
{
    return d == 1 ? 0 : 0xFFFFFFFFu / d + 1;
}

/* Thin transposes: tiles of ta x tb elements (strided_copy_thin_tile), one
 * of them the whole short axis. The tile is read with a running fastest
 * along a (the source's contiguous axis) and written with b fastest (the
 * destination's), both as flat loops over the tile, so every warp touches
 * consecutive elements on the side it walks even when the short axis has
 * an extent of 2 or 3. In shared memory element (ia, ib) sits at
 * ib * lda + ia with lda = ta | 1: odd, so the column walk of the write
 * phase hits distinct banks. count tiles: tile t is (t % tiles_b,
 * t / tiles_b % tiles_a, batch t / tiles_b / tiles_a). */
template <class T, class Args> __device__ __forceinline__ void transpose_thin(const Args &a)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr int ELEMENTS = STRIDED_COPY_THIN_BYTES / sizeof(T);
    constexpr int UNROLL
    = STRIDED_COPY_UNROLL_OF(sizeof(T));
    /* ta * tb <= ELEMENTS; padding adds at most one element per b row, and
     * there are at most ELEMENTS / 2 of those (ta >= 2). */
    constexpr int WORDS = (ELEMENTS + ELEMENTS / 2) * (int)sizeof(T) / 16 + 1;
    __shared__ uint4 smem[WORDS];
    T *sm = reinterpret_cast<T *>(smem);
    uint32_t ta, tb;
    strided_copy_thin_tile(a.n_a, a.n_b, sizeof(T), &ta, &tb);
    const uint32_t lda = ta | 1, n = ta * tb;
    const uint32_t ma = small_magic(ta), mb = small_magic(tb);
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const T *src0 = reinterpret_cast<const T *>(a.src);
    T *dst0 = reinterpret_cast<T *>(a.dst);

    for (I t = blockIdx.x; t < a.count; t += gridDim.x) {
        I rest = quotient(a.tiles_b, t);
        I batch = quotient(a.tiles_a, rest);
        const I b0 = (t - rest * (I)a.tiles_b.d) * tb;
        const I a0 = (rest - batch * (I)a.tiles_a.d) * ta;
        S dofs, sofs;
        unravel(a, batch, dofs, sofs);
        const T *src = src0 + sofs;
        T *dst = dst0 + dofs;
        /* Read: a fastest. */
        for (uint32_t e0 = tid; e0 < n; e0 += THREADS * UNROLL) {
            T v[UNROLL];
            uint32_t at[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const uint32_t e = e0 + u * THREADS;
                const uint32_t ib = small_quotient(e, ma), ia = e - ib * ta;
                at[u] = ib * lda + ia;
                if (e < n && a0 + ia < a.n_a && b0 + ib < a.n_b)
                    v[u] = __ldg(&src[(S)(a0 + ia) * a.src_a + (S)(b0 + ib) * a.src_b]);
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                if (e0 + u * THREADS < n)
                    sm[at[u]] = v[u];
        }
        __syncthreads();
        /* Write: b fastest. */
        for (uint32_t e0 = tid; e0 < n; e0 += THREADS * UNROLL) {
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                const uint32_t e = e0 + u * THREADS;
                const uint32_t ia = small_quotient(e, mb), ib = e - ia * tb;
                if (e < n && a0 + ia < a.n_a && b0 + ib < a.n_b)
                    dst[(S)(a0 + ia) * a.dst_a + (S)(b0 + ib) * a.dst_b] = sm[ib * lda + ia];
            }
        }
        __syncthreads();
    }
}

/* The value of width bits (at most 32) at bit position bit of base,
 * little bit-endian; reads only the bytes those bits lie in. Negative
 * positions count back from base (an arithmetic shift is a floor). */
__device__ __forceinline__ uint32_t get_bits(const uint8_t *base, int64_t bit, int width)
{
    const uint8_t *p = base + (bit >> 3);
    const int shift = (int)(bit & 7), bytes = (shift + width + 7) >> 3;
    uint64_t word = 0;
    for (int k = 0; k < bytes; k++)
        word |= (uint64_t)__ldg(p + k) << (8 * k);
    return (uint32_t)((word >> shift) & ((UINT64_C(1) << width) - 1));
}

/* Write value into width bits (at most 32) at bit position bit of base,
 * keeping the other bits of the bytes it touches. The caller owns those
 * bytes: no other thread writes them. */
__device__ __forceinline__ void put_bits(uint8_t *base, int64_t bit, int width, uint32_t value)
{
    uint8_t *p = base + (bit >> 3);
    const int shift = (int)(bit & 7), bytes = (shift + width + 7) >> 3;
    const uint64_t mask = ((UINT64_C(1) << width) - 1) << shift, bits = (uint64_t)value << shift;
    for (int k = 0; k < bytes; k++) {
        const uint8_t m = (uint8_t)(mask >> (8 * k));
        p[k] = m == 0xff ? (uint8_t)(bits >> (8 * k))
                         : (uint8_t)((p[k] & ~m) | ((bits >> (8 * k)) & m));
    }
}

/* Chunk c of the sub-byte kernel's rows (chunks work items each): its
 * first work item along axis 0 and its row's element offsets. */
__device__ __forceinline__ void subbyte_chunk_at(const strided_copy_subbyte_args &a, int64_t c,
                                                 int64_t chunk, int64_t &first, int64_t &d,
                                                 int64_t &s)
{
    int64_t rest = c / a.chunks;
    first = (c - rest * a.chunks) * chunk;
    d = 0;
    s = 0;
    for (int k = 1; k < a.ndim; k++) {
        const int64_t q = rest / a.extent[k], j = rest - q * a.extent[k];
        d += j * a.dst_stride[k];
        s += j * a.src_stride[k];
        rest = q;
    }
}

/* Tile t of the sub-byte kernel's transposes (ta elements along tile_axis,
 * tb along axis 0; tiles_b fastest, then tiles_a, then the other axes): its
 * first indices along both and the element offsets of its batch. */
__device__ __forceinline__ void subbyte_tile_at(const strided_copy_subbyte_args &a, int64_t t,
                                                int64_t ta, int64_t tb, int64_t &a0, int64_t &b0,
                                                int64_t &d, int64_t &s)
{
    int64_t rest = t / a.tiles_b;
    b0 = (t - rest * a.tiles_b) * tb;
    int64_t q = rest / a.tiles_a;
    a0 = (rest - q * a.tiles_a) * ta;
    rest = q;
    d = 0;
    s = 0;
    for (int k = 1; k < a.ndim; k++) {
        if (k == a.tile_axis)
            continue;
        q = rest / a.extent[k];
        const int64_t j = rest - q * a.extent[k];
        d += j * a.dst_stride[k];
        s += j * a.src_stride[k];
        rest = q;
    }
}

/* Sub-byte elements, a group of destination elements per work item (see
 * strided_copy_subbyte_args): the group's values are read one by one and
 * written together, whole bytes at once, where the destination is packed
 * along axis 0; element by element otherwise. A block takes a chunk of a
 * row, whose offsets it unravels once; neighbouring threads take
 * neighbouring items, so that their accesses coalesce. */
__device__ void subbyte(const strided_copy_subbyte_args &a)
{
    const uint8_t *src = reinterpret_cast<const uint8_t *>(a.src);
    uint8_t *dst = reinterpret_cast<uint8_t *>(a.dst);
    constexpr int64_t CHUNK = (int64_t)THREADS * STRIDED_COPY_SUBBYTE_UNROLL;
    for (int64_t c = blockIdx.x; c < a.count; c += gridDim.x) {
        int64_t first, d, s;
        subbyte_chunk_at(a, c, CHUNK, first, d, s);
#pragma unroll
        for (int u = 0; u < STRIDED_COPY_SUBBYTE_UNROLL; u++) {
            const int64_t g = first + u * THREADS + threadIdx.x;
            if (g >= a.extent[0])
                break;
            const int64_t j0 = g * a.group;
            const int64_t dj = d + j0 * a.dst_stride[0], sj = s + j0 * a.src_stride[0];
            if (a.group == 1) {
                put_bits(dst, a.dst_bit + dj * a.dst_step, a.dst_width,
                         get_bits(src, a.src_bit + sj * a.src_step, a.width));
                continue;
            }
            const int n = a.n0 - j0 < a.group ? (int)(a.n0 - j0) : a.group;
            uint32_t acc = 0;
            for (int t = 0; t < n; t++)
                acc |= get_bits(src, a.src_bit + (sj + t * a.src_stride[0]) * a.src_step, a.width)
                       << (t * a.width);
            put_bits(dst, a.dst_bit + dj * a.dst_step, n * a.width, acc);
        }
    }
}

/* Sub-byte transposes (tile_axis >= 1): a tile of TILE x TILE elements at
 * a time, its values read along the source's run (axis tile_axis, stride
 * 1: neighbouring threads read neighbouring elements) into shared memory,
 * then written in groups along the destination's (axis 0), neighbouring
 * threads writing neighbouring groups. Tiles start at multiples of TILE,
 * a multiple of every group, so a group never spans two tiles. */
__device__ void subbyte_tiles(const strided_copy_subbyte_args &a)
{
    constexpr int TILE = STRIDED_COPY_SUBBYTE_TILE;
    __shared__ uint16_t sm[TILE][TILE + 1]; /* [along b][along a] */
    const uint8_t *src = reinterpret_cast<const uint8_t *>(a.src);
    uint8_t *dst = reinterpret_cast<uint8_t *>(a.dst);
    const int ka = a.tile_axis;
    const int64_t na = a.extent[ka], nb = a.n0;
    const int per_row = TILE / a.group;
    for (int64_t t = blockIdx.x; t < a.count; t += gridDim.x) {
        int64_t a0, b0, d, s;
        subbyte_tile_at(a, t, TILE, TILE, a0, b0, d, s);
        for (int e = threadIdx.x; e < TILE * TILE; e += THREADS) {
            const int ia = e % TILE, ib = e / TILE;
            if (a0 + ia < na && b0 + ib < nb)
                sm[ib][ia] = (uint16_t)get_bits(src,
                                                a.src_bit + (s + (a0 + ia) * a.src_stride[ka] +
                                                             (b0 + ib) * a.src_stride[0]) *
                                                                a.src_step,
                                                a.width);
        }
        __syncthreads();
        for (int e = threadIdx.x; e < TILE * per_row; e += THREADS) {
            const int gb = e % per_row, ia = e / per_row;
            const int64_t jb = b0 + (int64_t)gb * a.group;
            if (a0 + ia >= na || jb >= nb)
                continue;
            const int64_t dj = d + (a0 + ia) * a.dst_stride[ka] + jb;
            if (a.group == 1) {
                put_bits(dst, a.dst_bit + dj * a.dst_step, a.dst_width, sm[gb][ia]);
                continue;
            }
            const int n = nb - jb < a.group ? (int)(nb - jb) : a.group;
            uint32_t acc = 0;
            for (int u = 0; u < n; u++)
                acc |= (uint32_t)sm[gb * a.group + u][ia] << (u * a.width);
            put_bits(dst, a.dst_bit + dj * a.dst_step, n * a.width, acc);
        }
        __syncthreads();
    }
}

/* n aligned words from q into x, their bytes outside [lo, hi) read as 0:
 * plain loads when all of them lie inside (the interior of a row), else
 * word_within each. */
template <int N>
__device__ __forceinline__ void words_within(uintptr_t q, uintptr_t lo, uintptr_t hi,
                                             uint32_t (&x)[N])
{
    if (q >= lo && q + 4 * N <= hi) {
#pragma unroll
        for (int k = 0; k < N; k++)
            x[k] = __ldg(reinterpret_cast<const uint32_t *>(q + 4 * k));
    } else {
#pragma unroll
        for (int k = 0; k < N; k++)
            x[k] = word_within(q + 4 * k, lo, hi);
    }
}

/* The N words at bit position bit of base (N + 1 aligned words read within
 * [lo, hi), shifted into place; with VECTOR, when the N words start on a
 * boundary of their own size, or of 16 bytes, inside [lo, hi), plain vector
 * loads instead: fewer instructions, at the cost of registers where the
 * caller inlines it many times). */
template <int N, bool VECTOR = true>
__device__ __forceinline__ void shifted_words(const uint8_t *base, int64_t bit, uintptr_t lo,
                                              uintptr_t hi, uint32_t (&out)[N])
{
    static_assert(!VECTOR || N == 2 || N % 4 == 0, "vector loads of 8 bytes or 16-byte groups");
    const uintptr_t p = reinterpret_cast<uintptr_t>(base) + (uintptr_t)(bit >> 3);
    constexpr uintptr_t V = N == 2 ? 8 : 16;
    if (VECTOR && (bit & 7) == 0 && p % V == 0 && p >= lo && p + 4 * N <= hi) {
        if (N == 2) {
            const uint2 y = __ldg(reinterpret_cast<const uint2 *>(p));
            out[0] = y.x;
            out[N - 1] = y.y;
        } else {
#pragma unroll
            for (int k = 0; k < N / 4; k++) {
                const uint4 y = __ldg(reinterpret_cast<const uint4 *>(p) + k);
                out[4 * k] = y.x;
                out[4 * k + 1] = y.y;
                out[4 * k + 2] = y.z;
                out[4 * k + 3] = y.w;
            }
        }
        return;
    }
    const uintptr_t q = p & ~(uintptr_t)3;
    const int shift = (int)(p - q) * 8 + (int)(bit & 7);
    uint32_t x[N + 1];
    words_within<N + 1>(q, lo, hi, x);
#pragma unroll
    for (int k = 0; k < N; k++)
        out[k] = __funnelshift_r(x[k], x[k + 1], shift);
}

/* The value of the destination word whose first bit is r0 bits from a
 * row's element 0 (subbyte_runs), from the row's source bits at sbit, read
 * within [slo, shi), for steps run_slot has no whole-word form for: when the
 * word holds whole destination values whose sources fit 64 bits, those from
 * one shifted window; else value by value, the first and last possibly in
 * part. */
__device__ __forceinline__ uint32_t run_value(const strided_copy_subbyte_args &a,
                                              const uint8_t *src, int64_t sbit, int64_t r0,
                                              uintptr_t slo, uintptr_t shi)
{
    const int ss = a.src_step, ds = a.dst_step;
    const uint32_t mask = (uint32_t)((UINT64_C(1) << a.width) - 1);
    uint32_t v = 0;
    if (32 % ds == 0 && (32 / ds) * ss <= 64) {
        const int n = 32 / ds;
        uint32_t x[2];
        shifted_words<2, false>(src, sbit + r0 / ds * ss, slo, shi, x); /* r0 / ds exact */
        const uint64_t window = (uint64_t)x[1] << 32 | x[0];
        for (int i = 0; i < n; i++)
            v |= ((uint32_t)(window >> (i * ss)) & mask) << (i * ds);
        return v;
    }
    int64_t e = r0 >= 0 ? r0 / ds : -((-r0 + ds - 1) / ds);
    for (e = e < 0 ? 0 : e; e < a.n0 && e * ds - r0 < 32; e++) {
        const int64_t pos = e * ds - r0;
        const uint32_t x = get_bits(src, sbit + e * ss, a.width);
        v |= pos >= 0 ? x << pos : x >> -pos;
    }
    return v;
}

/* 4-bit values in the low 16 bits of x, one to a byte. */
__device__ __forceinline__ uint32_t spread_nibbles(uint32_t x)
{
    x &= 0xFFFFu;
    x = (x | (x << 8)) & 0x00FF00FFu;
    return (x | (x << 4)) & 0x0F0F0F0Fu;
}

/* The low 4 bits of the 4 bytes of x, packed into 16 bits. */
__device__ __forceinline__ uint32_t gather_nibbles(uint32_t x)
{
    x &= 0x0F0F0F0Fu;
    x = (x | (x >> 4)) & 0x00FF00FFu;
    return (x | (x >> 8)) & 0xFFFFu;
}

/* How run_slot computes a slot: the same packed bits as one shifted window;
 * packed 4-bit values to padded ones (8 source bytes) and back (32 source
 * bytes) by whole words; other steps word by word (run_value). */
enum slot_form { SLOT_SAME, SLOT_SPREAD4, SLOT_GATHER4, SLOT_VALUES };

/* What run_slot reads for a slot of FORM (the source bits a slot spreads,
 * which take half its registers, or the slot itself), and the slot it
 * makes (slot_value). */
template <int FORM> struct slot_read {
    typedef uint4 type;
};
template <> struct slot_read<SLOT_SPREAD4> {
    typedef uint2 type;
};

/* What subbyte_runs reads for the 16 destination bytes whose first bit is r0
 * bits from a row's element 0, from the row's source bits at sbit, read
 * within [slo, shi), as FORM says. */
template <int FORM>
__device__ __forceinline__ typename slot_read<FORM>::type
run_slot(const strided_copy_subbyte_args &a, const uint8_t *src, int64_t sbit, int64_t r0,
         uintptr_t slo, uintptr_t shi)
{
    uint32_t w[4];
    if (FORM == SLOT_SPREAD4) {
        uint32_t x[2];
        shifted_words<2>(src, sbit + r0 / 8 * 4, slo, shi, x);
        w[0] = x[0];
        w[1] = x[1];
        w[2] = w[3] = 0;
    } else if (FORM == SLOT_SAME) {
        shifted_words<4>(src, sbit + r0, slo, shi, w);
    } else if (FORM == SLOT_GATHER4) {
        uint32_t x[8];
        shifted_words<8>(src, sbit + r0 / 4 * 8, slo, shi, x);
#pragma unroll
        for (int k = 0; k < 4; k++)
            w[k] = gather_nibbles(x[2 * k]) | gather_nibbles(x[2 * k + 1]) << 16;
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++)
            w[k] = run_value(a, src, sbit, r0 + 32 * k, slo, shi);
    }
    typename slot_read<FORM>::type r;
    memcpy(&r, w, sizeof r);
    return r;
}

/* The 16 destination bytes of a slot from what run_slot read for it. */
__device__ __forceinline__ uint4 slot_value(uint4 v)
{
    return v;
}
__device__ __forceinline__ uint4 slot_value(uint2 x)
{
    return make_uint4(spread_nibbles(x.x), spread_nibbles(x.x >> 16), spread_nibbles(x.y),
                      spread_nibbles(x.y >> 16));
}

/* Sub-byte rows of stride 1 on both sides (mode STRIDED_COPY_SUBBYTE_RUNS:
 * the same packed bits, packed <-> padded): each work item is one aligned
 * 16-byte slot of a destination row, the elements whose bits it holds
 * computed from the source (run_slot) and stored as one vector, or, at a
 * row's two ends, word by word and byte by byte keeping the bits outside
 * the row. Slots of one row belong to one work item each, and rows share
 * no byte (the packed-layout rule), so no two work items write one byte.
 * Every slot's value is computed before any is stored: the stores could
 * alias the loads, so the other order would wait for each load in turn. */
template <int FORM> __device__ void subbyte_runs(const strided_copy_subbyte_args &a)
{
    const uint8_t *src = reinterpret_cast<const uint8_t *>(a.src);
    const int ss = a.src_step, ds = a.dst_step;
    constexpr int U = FORM == SLOT_SPREAD4 ? STRIDED_COPY_SUBBYTE_SPREAD_UNROLL
                                           : STRIDED_COPY_SUBBYTE_RUN_UNROLL;
    constexpr int64_t CHUNK = (int64_t)THREADS * U;
    for (int64_t c = blockIdx.x; c < a.count; c += gridDim.x) {
        int64_t first, d, s;
        subbyte_chunk_at(a, c, CHUNK, first, d, s);
        const int64_t dbit = a.dst_bit + d * ds, sbit = a.src_bit + s * ss;
        const int64_t rowbits = a.n0 * ds;
        /* The source row's bytes, the only ones read. */
        const uintptr_t slo = a.src + (uintptr_t)(sbit >> 3);
        const uintptr_t shi = a.src + (uintptr_t)((sbit + a.n0 * ss + 7) >> 3);
        /* The thread's first slot, and its first bit counted from the row's
         * first bit (negative when the row starts inside it); slot u is
         * u * THREADS slots further on. */
        const uintptr_t w0 = (a.dst + (uintptr_t)(dbit >> 3)) & ~(uintptr_t)15;
        const int64_t g = first + threadIdx.x;
        uint8_t *const w = reinterpret_cast<uint8_t *>(w0 + 16 * (uintptr_t)g);
        const int64_t r = (int64_t)(w0 - a.dst) * 8 - dbit + 128 * g;
        constexpr int64_t STEP = 128 * (int64_t)THREADS;
        typename slot_read<FORM>::type v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (r + u * STEP < rowbits)
                v[u] = run_slot<FORM>(a, src, sbit, r + u * STEP, slo, shi);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t ru = r + u * STEP;
            if (ru >= rowbits)
                break;
            const uint4 value = slot_value(v[u]);
            uint8_t *const p = w + u * 16 * THREADS;
            if (ru >= 0 && ru + 128 <= rowbits) {
                *reinterpret_cast<uint4 *>(p) = value;
                continue;
            }
            const uint32_t word[4] = {value.x, value.y, value.z, value.w};
            for (int k = 0; k < 4; k++) {
                const int64_t kb = ru + 32 * k;
                const int64_t lo = kb > 0 ? kb : 0, hi = kb + 32 < rowbits ? kb + 32 : rowbits;
                if (lo < hi)
                    put_bits(p, lo - ru, (int)(hi - lo), word[k] >> (lo - kb));
            }
        }
    }
}

/* Transpose an 8 x 8 matrix of 4-bit values held as eight words (row u in
 * w[u], column c in bits 4c..4c+3), in place: three rounds of swapping
 * blocks (4 x 4 halves, 2 x 2 bytes, single values). */
__device__ __forceinline__ void transpose_nibbles(uint32_t (&w)[8])
{
#pragma unroll
    for (int u = 0; u < 4; u++) {
        const uint32_t x = w[u], y = w[u + 4];
        w[u] = (x & 0x0000FFFFu) | (y << 16);
        w[u + 4] = (x >> 16) | (y & 0xFFFF0000u);
    }
#pragma unroll
    for (int h = 0; h < 4; h++) {
        const int u = (h & 1) + 4 * (h >> 1); /* rows 0, 1, 4, 5 with 2, 3, 6, 7 */
        const uint32_t x = w[u], y = w[u + 2];
        w[u] = (x & 0x00FF00FFu) | ((y << 8) & 0xFF00FF00u);
        w[u + 2] = ((x >> 8) & 0x00FF00FFu) | (y & 0xFF00FF00u);
    }
#pragma unroll
    for (int u = 0; u < 8; u += 2) {
        const uint32_t x = w[u], y = w[u + 1];
        w[u] = (x & 0x0F0F0F0Fu) | ((y << 4) & 0xF0F0F0F0u);
        w[u + 1] = ((x >> 4) & 0x0F0F0F0Fu) | (y & 0xF0F0F0F0u);
    }
}

/* Packed 4-bit transposes whose rows all start on 32-bit words (mode
 * STRIDED_COPY_SUBBYTE_FP4_TILES; the host proved it): tiles of
 * STRIDED_COPY_FP4_TILE_A elements along the source's run (a, tile_axis) by
 * STRIDED_COPY_FP4_TILE_B along the destination's (b, axis 0). Thread
 * (j, i) reads word j of source rows 8i..8i+7 and of the 8 rows 64 further
 * (a warp reads runs of 128 bytes), transposes each 8 x 8 block of values
 * in registers and leaves its eight words for destination rows 8j..8j+7 in
 * shared memory (pitch 17 words, the word index XOR swizzled: no bank
 * conflicts), from where each warp stores
 * whole 32-byte row pieces. Tiles cut by the matrix's edges go value by
 * value. */
__device__ void subbyte_fp4_tiles(const strided_copy_subbyte_args &a)
{
    constexpr int TA = STRIDED_COPY_FP4_TILE_A, TB = STRIDED_COPY_FP4_TILE_B;
    constexpr int WA = TA / 8, WB = TB / 8, PITCH = WB + 1;
    static_assert(WA == 32 && WA * WB == 2 * THREADS,
                  "a warp per source row, a thread per two words of it");
    __shared__ uint32_t sm[TA * PITCH];
    const uint8_t *src = reinterpret_cast<const uint8_t *>(a.src);
    uint8_t *dst = reinterpret_cast<uint8_t *>(a.dst);
    const int ka = a.tile_axis;
    const int64_t na = a.extent[ka], nb = a.n0;
    for (int64_t t = blockIdx.x; t < a.count; t += gridDim.x) {
        int64_t a0, b0, d, s;
        subbyte_tile_at(a, t, TA, TB, a0, b0, d, s);
        if (a0 + TA > na || b0 + TB > nb) {
            /* An edge tile: a destination byte (two values) a work item. */
            for (int e = threadIdx.x; e < TA * (TB / 2); e += THREADS) {
                const int ia = e / (TB / 2), jb = 2 * (e % (TB / 2));
                if (a0 + ia >= na || b0 + jb >= nb)
                    continue;
                const int n = nb - (b0 + jb) < 2 ? 1 : 2;
                uint32_t acc = 0;
                for (int u = 0; u < n; u++)
                    acc |= get_bits(src,
                                    a.src_bit + (s + a0 + ia + (b0 + jb + u) * a.src_stride[0]) * 4,
                                    4)
                           << (4 * u);
                put_bits(dst, a.dst_bit + (d + (a0 + ia) * a.dst_stride[ka] + b0 + jb) * 4, 4 * n,
                         acc);
            }
            continue; /* uniform in the block: no barrier skipped by some */
        }
        /* Two groups of 8 source rows a thread (i and i + HALF): 16 loads in
         * flight. */
        constexpr int HALF = THREADS / WA;
        const int j = threadIdx.x % WA, i0 = threadIdx.x / WA;
        uint32_t w[2][8];
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const int64_t o = s + a0 + 8 * j + (b0 + 8 * (i0 + h * HALF) + u) * a.src_stride[0];
                w[h][u] = __ldg(reinterpret_cast<const uint32_t *>(src +
                                                                   ((a.src_bit + o * 4) >> 3)));
            }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            transpose_nibbles(w[h]);
            const int i = i0 + h * HALF;
#pragma unroll
            for (int v = 0; v < 8; v++)
                sm[(8 * j + v) * PITCH + (i ^ ((j >> 2) & 7))] = w[h][v];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TA * WB / THREADS; k++) {
            const int e = threadIdx.x + k * THREADS, r = e / WB, ib = e % WB;
            const uint32_t x = sm[r * PITCH + (ib ^ ((r / 8 >> 2) & 7))];
            const int64_t o = d + (a0 + r) * a.dst_stride[ka] + b0 + 8 * ib;
            *reinterpret_cast<uint32_t *>(dst + ((a.dst_bit + o * 4) >> 3)) = x;
        }
        __syncthreads();
    }
}

/* Narrow transposes of 1-, 2- and 4-byte elements, between interleaved
 * records of F fields (F = 2, 3 or 4: AoS, NHWC pixels) and F planes (SoA,
 * NCHW): each thread moves E consecutive records whole, as F aligned
 * vectors read and F written, rearranged in registers, so that every load
 * and store of a warp is a run of consecutive vectors: 32-bit words of
 * E = 4 / sizeof(T) records for 1- and 2-byte elements, 16-byte vectors of
 * E = 4 records for 4-byte ones (STRIDED_COPY_NARROW_VECTOR). n_b is
 * the long axis (records), n_a = F the short one; the host proved the
 * packed side's records dense (stride F, fields at stride 1), the plane
 * side's long axis contiguous, and every vector aligned. TO_PLANES: the
 * source is the interleaved side. A row's last group, short of E records,
 * moves element by element. count groups: group t is (t % tiles_b, batch
 * t / tiles_b). */
template <int F, class Args> __device__ __forceinline__ void narrow_records_4(const Args &a);

/* A narrow transpose's records i0 to the row's end, short of a group,
 * element by element. */
template <int F, class T, class Args, class I>
__device__ __forceinline__ void narrow_tail(const Args &a, T *dst, const T *src, I i0)
{
    typedef typename traits<Args>::offset S;
    for (I i = i0; i < a.n_b; i++)
#pragma unroll
        for (int f = 0; f < F; f++)
            dst[(S)f * a.dst_a + (S)i * a.dst_b] = src[(S)f * a.src_a + (S)i * a.src_b];
}

template <class T, int F, bool TO_PLANES, class Args>
__device__ __forceinline__ void transpose_narrow(const Args &a)
{
    if constexpr (sizeof(T) == 4 && !TO_PLANES) {
        narrow_records_4<F>(a);
        return;
    }
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr int E = STRIDED_COPY_NARROW_VECTOR((int)sizeof(T)) / (int)sizeof(T);
    constexpr int BITS = 8 * (int)sizeof(T);
    constexpr uint32_t MASK = sizeof(T) == 1 ? 0xFFu : 0xFFFFu;
    const T *src0 = reinterpret_cast<const T *>(a.src);
    T *dst0 = reinterpret_cast<T *>(a.dst);

    for (I t = (I)blockIdx.x * THREADS + threadIdx.x; t < a.count; t += (I)gridDim.x * THREADS) {
        const I batch = quotient(a.tiles_b, t);
        const I i0 = (t - batch * (I)a.tiles_b.d) * E;
        S dofs, sofs;
        unravel(a, batch, dofs, sofs);
        const T *src = src0 + sofs;
        T *dst = dst0 + dofs;
        if (i0 + E > a.n_b) {
            narrow_tail<F>(a, dst, src, i0);
            continue;
        }
        if constexpr (sizeof(T) == 4) {
            /* 4 records of F words as F vectors: word k of them is field
             * k % F of record k / F; plane f's vector holds its 4 records.
             * (Towards records: narrow_records_4.) */
            uint32_t in[4 * F];
#pragma unroll
            for (int v = 0; v < F; v++) {
                const uint4 x = __ldg(reinterpret_cast<const uint4 *>(src + (S)i0 * a.src_b +
                                                                      4 * v));
                in[4 * v] = x.x;
                in[4 * v + 1] = x.y;
                in[4 * v + 2] = x.z;
                in[4 * v + 3] = x.w;
            }
#pragma unroll
            for (int f = 0; f < F; f++)
                *reinterpret_cast<uint4 *>(dst + (S)f * a.dst_a + (S)i0) =
                    make_uint4(in[f], in[F + f], in[2 * F + f], in[3 * F + f]);
            continue;
        }
        uint32_t in[F], out[F];
        if (TO_PLANES) {
            /* E records of F fields: F consecutive words. Unit k of them is
             * field k % F of record k / F. */
            const uint32_t *p = reinterpret_cast<const uint32_t *>(src + (S)i0 * a.src_b);
#pragma unroll
            for (int w = 0; w < F; w++)
                in[w] = __ldg(p + w);
#pragma unroll
            for (int f = 0; f < F; f++) {
                out[f] = 0;
#pragma unroll
                for (int e = 0; e < E; e++) {
                    const int k = e * F + f;
                    out[f] |= ((in[k / E] >> (BITS * (k % E))) & MASK) << (BITS * e);
                }
            }
#pragma unroll
            for (int f = 0; f < F; f++)
                *reinterpret_cast<uint32_t *>(dst + (S)f * a.dst_a + (S)i0) = out[f];
        } else {
            /* One word of E records from each of the F planes; packed
             * unit k is field k % F of record k / F. */
#pragma unroll
            for (int f = 0; f < F; f++)
                in[f] = __ldg(reinterpret_cast<const uint32_t *>(src + (S)f * a.src_a + (S)i0));
#pragma unroll
            for (int w = 0; w < F; w++) {
                out[w] = 0;
#pragma unroll
                for (int j = 0; j < E; j++) {
                    const int k = w * E + j;
                    out[w] |= ((in[k % F] >> (BITS * (k / F))) & MASK) << (BITS * j);
                }
            }
            uint32_t *p = reinterpret_cast<uint32_t *>(dst + (S)i0 * a.dst_b);
#pragma unroll
            for (int w = 0; w < F; w++)
                p[w] = out[w];
        }
    }
}

/* transpose_narrow's 4-byte elements from F planes to records: each
 * thread reads one vector of 4 records from each plane, as there, but a
 * thread's 4 records are F vectors 16 F bytes apart from its neighbour's,
 * so a warp storing them straight would write every sector in part in F
 * instructions. Where the warp's 32 groups are whole and consecutive in
 * one row (all of a row but its ends), the words go through the warp's
 * part of shared memory instead and leave as F runs of 512 consecutive
 * bytes. The blocks walk the groups in whole blocks (every lane of a warp
 * takes every turn, for the warp's collective steps). */
template <int F, class Args> __device__ __forceinline__ void narrow_records_4(const Args &a)
{
    typedef typename traits<Args>::index I;
    typedef typename traits<Args>::offset S;
    constexpr unsigned ALL = 0xFFFFFFFFu;
    __shared__ uint4 stage[THREADS / 32][32 * F]; /* a warp's 32 threads' F vectors */
    uint32_t *w = reinterpret_cast<uint32_t *>(stage[threadIdx.x / 32]);
    const int lane = threadIdx.x % 32;
    const uint32_t *src0 = reinterpret_cast<const uint32_t *>(a.src);
    uint32_t *dst0 = reinterpret_cast<uint32_t *>(a.dst);

    for (I c = blockIdx.x; c * (I)THREADS < a.count; c += gridDim.x) {
        const I t = c * (I)THREADS + threadIdx.x;
        bool whole = false;
        I i0 = 0;
        uint32_t *row = nullptr; /* the destination's records of t's row */
        uint32_t out[4 * F];
        if (t < a.count) {
            const I batch = quotient(a.tiles_b, t);
            i0 = (t - batch * (I)a.tiles_b.d) * 4;
            S dofs, sofs;
            unravel(a, batch, dofs, sofs);
            const uint32_t *src = src0 + sofs;
            row = dst0 + dofs;
            if (i0 + 4 > a.n_b) {
                narrow_tail<F>(a, row, src, i0);
            } else {
                whole = true;
#pragma unroll
                for (int f = 0; f < F; f++) {
                    const uint4 x = __ldg(reinterpret_cast<const uint4 *>(src + (S)f * a.src_a +
                                                                          (S)i0));
                    out[0 * F + f] = x.x;
                    out[1 * F + f] = x.y;
                    out[2 * F + f] = x.z;
                    out[3 * F + f] = x.w;
                }
            }
        }
        /* Lane 0's first record and row; the run is the warp's if every
         * lane's group follows it (a lane of another row cannot: its
         * groups start again from 0). */
        const I first = __shfl_sync(ALL, i0, 0);
        const uintptr_t base =
            (uintptr_t)__shfl_sync(ALL, (unsigned long long)reinterpret_cast<uintptr_t>(row), 0);
        if (__all_sync(ALL, whole && i0 == first + 4 * (I)lane)) {
#pragma unroll
            for (int v = 0; v < F; v++)
                reinterpret_cast<uint4 *>(w)[lane * F + v] =
                    make_uint4(out[4 * v], out[4 * v + 1], out[4 * v + 2], out[4 * v + 3]);
            __syncwarp();
            uint32_t *p = reinterpret_cast<uint32_t *>(base) + (S)first * F;
#pragma unroll
            for (int v = 0; v < F; v++)
                reinterpret_cast<uint4 *>(p)[32 * v + lane] =
                    reinterpret_cast<const uint4 *>(w)[32 * v + lane];
            __syncwarp();
        } else if (whole) {
            uint32_t *p = row + (S)i0 * F;
#pragma unroll
            for (int v = 0; v < F; v++)
                reinterpret_cast<uint4 *>(p)[v] = make_uint4(out[4 * v], out[4 * v + 1],
                                                             out[4 * v + 2], out[4 * v + 3]);
        }
    }
}

} // namespace

#define KERNEL(name, Args) \
    extern "C" __global__ void __launch_bounds__(THREADS) strided_copy_##name(const Args a)

#define CONTIGUOUS(w)                         \
    KERNEL(contiguous_##w, strided_copy_span) \
    {                                         \
        contiguous<unit_of<w>::type>(a);      \
    }

#define ROWS(w)                              \
    KERNEL(rows_##w, strided_copy_args64_64) \
    {                                        \
        typedef unit_of<w>::type U;          \
        rows<U, U, false>(a, same());        \
    }

/* Rows of E-byte elements read backwards, in 16-byte vectors: the source
 * address is the lowest byte of each row's first vector and src_b is -1. */
#define ROWS_REVERSED(e)                                     \
    KERNEL(rows_reversed_##e, strided_copy_args64_64)        \
    {                                                        \
        rows<uint4, uint4, false>(a, reverse_elements<e>()); \
    }

#define BROADCAST(s)                              \
    KERNEL(broadcast_##s, strided_copy_args64_64) \
    {                                             \
        typedef unit_of<s>::type U;               \
        rows<U, U, true>(a, same());              \
    }

#define BROADCAST16(s)                                          \
    KERNEL(broadcast_##s##x16, strided_copy_args64_64)          \
    {                                                           \
        rows<uint4, unit_of<s>::type, true>(a, splat<uint4>()); \
    }

#define GATHER(w, variant, Args)         \
    KERNEL(gather_##w##_##variant, Args) \
    {                                    \
        typedef unit_of<w>::type U;      \
        elementwise<U, U>(a, same());    \
    }

/* Skewed tiles (transpose_Ss) keep to 32 registers a thread (blocks 8:
 * every thread a multiprocessor holds stays resident): their extra rows
 * would otherwise take the 4-byte kernel to 40. The others keep what ptxas
 * gives them (30 to 64 registers): bounded to 32, the 1- and 2-byte
 * kernels spill, or, the 2-byte word tiles, keep fewer loads in flight
 * (16384^2 float16 ran at 74 % of memcpy so, 82 % unbounded); kernels of
 * their own keep the bound off the unskewed tiles. A minimum of 1 block is
 * not the same as none: ptxas then gives some kernels twice the
 * registers. */
#define TRANSPOSE_BOUNDS_ __launch_bounds__(THREADS)
#define TRANSPOSE_BOUNDS_8 __launch_bounds__(THREADS, 8)
#define TRANSPOSE(s, packed, skew, name, blocks)                                    \
    extern "C" __global__ void TRANSPOSE_BOUNDS_##blocks strided_copy_##name##_i32( \
        const strided_copy_args32_64 a)                                             \
    {                                                                               \
        transpose<unit_of<s>::type, packed, skew>(a);                               \
    }                                                                               \
    extern "C" __global__ void TRANSPOSE_BOUNDS_##blocks strided_copy_##name##_i64( \
        const strided_copy_args64_64 a)                                             \
    {                                                                               \
        transpose<unit_of<s>::type, packed, skew>(a);                               \
    }

/* fn_S_i32 and fn_S_i64: the tile function fn for S-byte units, with 32-
 * and 64-bit indices. */
#define TILES_BY_WIDTH(fn, s)                      \
    KERNEL(fn##_##s##_i32, strided_copy_args32_64) \
    {                                              \
        fn<unit_of<s>::type>(a);                   \
    }                                              \
    KERNEL(fn##_##s##_i64, strided_copy_args64_64) \
    {                                              \
        fn<unit_of<s>::type>(a);                   \
    }
#define TRANSPOSE_GROUPED(s) TILES_BY_WIDTH(transpose_grouped, s)
#define TRANSPOSE_THIN(s) TILES_BY_WIDTH(transpose_thin, s)

#define NARROW(s, f, dir, to_planes)                              \
    KERNEL(narrow_##s##_##f##_##dir##_i32, strided_copy_args32_8) \
    {                                                             \
        transpose_narrow<unit_of<s>::type, f, to_planes>(a);      \
    }                                                             \
    KERNEL(narrow_##s##_##f##_##dir##_i64, strided_copy_args64_8) \
    {                                                             \
        transpose_narrow<unit_of<s>::type, f, to_planes>(a);      \
    }
/* narrow_S_F_planes and narrow_S_F_records for F = 2, 3, 4. */
#define NARROW_BOTH(s, f) NARROW(s, f, planes, true) NARROW(s, f, records, false)
#define NARROWS(s) NARROW_BOTH(s, 2) NARROW_BOTH(s, 3) NARROW_BOTH(s, 4)

#define FOR_UNITS(M) M(1) M(2) M(4) M(8) M(16)

/* gather_W_<index>_<axes> for every unit and argument struct. */
#define GATHERS(w)                             \
    GATHER(w, i32_d8, strided_copy_args32_8)   \
    GATHER(w, i32_d64, strided_copy_args32_64) \
    GATHER(w, i64_d8, strided_copy_args64_8)   \
    GATHER(w, i64_d64, strided_copy_args64_64)

FOR_UNITS(CONTIGUOUS)
FOR_UNITS(ROWS)
FOR_UNITS(BROADCAST)
BROADCAST16(1)
BROADCAST16(2)
BROADCAST16(4)
BROADCAST16(8)
FOR_UNITS(GATHERS)
TRANSPOSE(1, false, false, transpose_1, )
TRANSPOSE(2, false, false, transpose_2, )
TRANSPOSE(4, false, false, transpose_4, )
TRANSPOSE(8, false, false, transpose_8, )
TRANSPOSE(16, false, false, transpose_16, )
TRANSPOSE(4, false, true, transpose_4s, 8)
TRANSPOSE(8, false, true, transpose_8s, 8)
TRANSPOSE(16, false, true, transpose_16s, 8)
FOR_UNITS(TRANSPOSE_THIN)
FOR_UNITS(TRANSPOSE_GROUPED)
TRANSPOSE(1, true, false, transpose_1p, )
TRANSPOSE(2, true, false, transpose_2p, )
TRANSPOSE(4, true, false, transpose_4p, )
NARROWS(1)
NARROWS(2)
NARROWS(4)

KERNEL(rows_shift, strided_copy_args64_64)
{
    rows_shift(a);
}

ROWS_REVERSED(1)
ROWS_REVERSED(2)
ROWS_REVERSED(4)
ROWS_REVERSED(8)

/* The sub-byte kernel's forms, a kernel each (by mode), so that each has
 * the registers and shared memory of its own form only. */
KERNEL(subbyte, strided_copy_subbyte_args)
{
    subbyte(a);
}

KERNEL(subbyte_tiles, strided_copy_subbyte_args)
{
    subbyte_tiles(a);
}

KERNEL(subbyte_runs, strided_copy_subbyte_args)
{
    const int ss = a.src_step, ds = a.dst_step;
    if (STRIDED_COPY_SUBBYTE_SPREADS(&a))
        subbyte_runs<SLOT_SPREAD4>(a);
    else if (ss == ds)
        subbyte_runs<SLOT_SAME>(a);
    else if (ss == 8 && ds == 4 && a.width == 4)
        subbyte_runs<SLOT_GATHER4>(a);
    else
        subbyte_runs<SLOT_VALUES>(a);
}

/* At 3 blocks a multiprocessor at least (85 registers a thread; ptxas for
 * sm_90 fits it in 80 with 12 bytes spilled, against 100 registers and 2
 * blocks unbounded): memory-bound, it needs threads in flight. */
extern "C" __global__ void __launch_bounds__(THREADS, 3)
    strided_copy_subbyte_fp4_tiles(const strided_copy_subbyte_args a)
{
    subbyte_fp4_tiles(a);
}
