/*
 * copy/kernels.h: the arguments of the CUDA copy kernels (internal).
 *
 * copy/kernels.cu (compiled by nvcc into the embedded fatbin) and
 * copy/launch.c (which launches it through the driver) both include this
 * header, so the two sides agree on every byte a launch passes. It is plain
 * C; nvcc reads it as C++.
 *
 * Every kernel takes one struct by value. Kernel parameters of up to 4 KiB
 * work with every driver and GPU, so a launch needs no upload to device
 * memory and no __constant__ symbol: the arguments travel in the launch
 * itself. The largest struct (64-bit indices, 64 axes) is about 2.6 KiB;
 * plans with at most STRIDED_COPY_FEW_DIMS axes use a struct of a few hundred
 * bytes, which keeps the launch itself small.
 *
 * Units. A kernel moves units of 1, 2, 4, 8 or 16 bytes: elements, or words
 * of several elements (vectorised rows and fills). Offsets and strides in
 * the structs count units of the side they belong to, so a kernel never
 * multiplies by an itemsize. Axes are listed innermost first.
 *
 * Indices. When every index and offset of a launch fits in int32 the 32-bit
 * structs are used (strided_copy_args32_*): cheaper arithmetic, and division
 * by a multiply-high with a magic number (strided_copy_div32). Otherwise the
 * 64-bit ones, with 64-bit magic numbers.
 *
 * Ownership: plain values; nothing is allocated.
 */
#ifndef STRIDED_COPY_KERNELS_H
#define STRIDED_COPY_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most axes a struct of the small kind holds, and of the large kind.
 * A plan has at most 63 axes of extent > 1 (its volume is below 2^63), plus
 * possibly one axis that splits an element into words: 64. */
#define STRIDED_COPY_FEW_DIMS 8
#define STRIDED_COPY_MANY_DIMS 64

/* Threads per block of every kernel: elementwise kernels use
 * (STRIDED_COPY_THREADS, 1, 1), tile kernels (32, STRIDED_COPY_THREADS/32,
 * 1). */
#define STRIDED_COPY_THREADS 256

/* Consecutive units each thread of an elementwise kernel (contiguous, rows,
 * broadcast, gather, thin tiles) handles per step of its grid-stride loop,
 * all loads first, then all stores: 64 bytes of units 4 bytes or wider in
 * flight per thread (4 of 16 bytes, 8 of 8, 16 of 4), 16 of smaller ones.
 * Few bytes in flight leave a memory-bound kernel waiting on latency (rows
 * of 4-byte units moved 4 per step ran at 39% of memcpy). The host sizes
 * row chunks with the same macro. */
#define STRIDED_COPY_UNROLL_OF(unit) ((unit) >= 16 ? 4 : (unit) == 8 ? 8 : 16)

/* The bytes each thread of a narrow transpose (records of 2 to 4 fields to
 * planes and back) moves per field: a 32-bit word of 1- and 2-byte
 * elements, a 16-byte vector of 4-byte ones. */
#define STRIDED_COPY_NARROW_VECTOR(size) ((size) == 4 ? 16 : 4)

/* rows_shift's 16-byte destination slots per thread and chunk step (two
 * source vectors each, the second mostly its neighbour's first). */
#define STRIDED_COPY_SHIFT_UNROLL 4

/* n / d as (umulhi(n, m) + n) >> s (Granlund and Montgomery; PyTorch's
 * IntDivider does the same). s = ceil(log2 d) and
 * m = floor(2^32 (2^s - d) / d) + 1 (2^64 for the 64-bit kind). Exact for
 * n < 2^31 and 1 <= d <= 2^31 (n < 2^63, d <= 2^63): the sum then never
 * overflows. */
typedef struct strided_copy_div32 {
    uint32_t d, m, s;
} strided_copy_div32;

typedef struct strided_copy_div64 {
    uint64_t d, m;
    uint32_t s, unused;
} strided_copy_div64;

/* A contiguous copy of nbytes bytes (dst and src are byte addresses). */
typedef struct strided_copy_span {
    uint64_t dst, src, nbytes;
} strided_copy_span;

/* The arguments of the gather, rows, broadcast and transpose kernels. The
 * ndim axes (extent, dst_stride, src_stride; innermost first) are all the
 * axes for gather, and the batch axes - where each row or tile starts - for
 * the others.
 *
 * gather copies count units: unit index i is unravelled over the axes into
 * a destination and a source offset.
 *
 * rows and broadcast copy rows of n_b units along axis b (strides dst_b,
 * src_b), one row per index of the batch axes, in chunks of
 * STRIDED_COPY_THREADS * STRIDED_COPY_UNROLL_OF(unit) units: tiles_b chunks to a
 * row, count chunks in all; chunk c is (c % tiles_b, row c / tiles_b).
 *
 * transpose copies tiles of the two axes a and b (extents n_a, n_b; strides
 * dst_a, dst_b, src_a, src_b), where the source is contiguous along a and
 * the destination along b. count is the number of tiles, tiles_b * tiles_a
 * * the volume of the batch axes, and tile t is
 * (t % tiles_b, t / tiles_b % tiles_a, batch t / tiles_b / tiles_a).
 * The skewed kernels (transpose_Ss: dst_b is 1, elements of 4 to 16
 * bytes, a row at least a tile long) differ: tile B along b holds, of
 * each destination row, the TILE elements from B * TILE - s back, s being
 * the row's elements at B * TILE past a STRIDED_COPY_SECTOR boundary:
 * every row's piece then starts on a sector, so no sector of the
 * destination is written in part by two blocks (a partly written sector
 * costs the memory a read to fill it); tiles_b then counts tiles over
 * n_b + STRIDED_COPY_SECTOR / size - 1 elements.
 *
 * transpose_grouped copies tiles of n_a x n_b elements whose sides are
 * groups of axes: after the ndim batch axes come group_a axes (side a,
 * innermost first: index i along a is i's digits over their extents) and
 * group_b axes (side b); count is the volume of the batch axes, one whole
 * tile per batch index; a group holds at most STRIDED_COPY_GROUP_MAX
 * axes. Every other kernel has group_a = group_b = 0. */
#define STRIDED_COPY_GROUP_MAX 8

/* The most elements a side of a grouped tile holds: 64 x 64 of 8-byte
 * elements (a tile of 32 x 32 left 4 elements a thread against the cost
 * of finding where the tile lies, which for axes of 2 is a division per
 * axis), 128 of 1-byte and 32 of 16-byte ones. */
#define STRIDED_COPY_GROUP_TILE(size) ((size) == 1 ? 128 : (size) <= 8 ? 64 : 32)

/* The bytes of a memory sector, the unit DRAM reads and writes (skewed
 * tiles above). */
#define STRIDED_COPY_SECTOR 32

#define STRIDED_COPY_ARGS(name, div, uindex, sindex, dims) \
    typedef struct name {                                  \
        uint64_t dst, src;                                 \
        uindex count;                                      \
        uindex n_a, n_b;                                   \
        sindex dst_a, dst_b, src_a, src_b;                 \
        div tiles_a, tiles_b;                              \
        int32_t ndim, group_a, group_b;                    \
        div extent[dims];                                  \
        sindex dst_stride[dims];                           \
        sindex src_stride[dims];                           \
    } name

STRIDED_COPY_ARGS(strided_copy_args32_8, strided_copy_div32, uint32_t, int32_t,
                  STRIDED_COPY_FEW_DIMS);
STRIDED_COPY_ARGS(strided_copy_args32_64, strided_copy_div32, uint32_t, int32_t,
                  STRIDED_COPY_MANY_DIMS);
STRIDED_COPY_ARGS(strided_copy_args64_8, strided_copy_div64, uint64_t, int64_t,
                  STRIDED_COPY_FEW_DIMS);
STRIDED_COPY_ARGS(strided_copy_args64_64, strided_copy_div64, uint64_t, int64_t,
                  STRIDED_COPY_MANY_DIMS);

#undef STRIDED_COPY_ARGS

#ifdef __cplusplus
static_assert(sizeof(strided_copy_args64_64) <= 4096,
              "kernel arguments must fit the 4 KiB every driver accepts");
#else
_Static_assert(sizeof(strided_copy_args64_64) <= 4096,
               "kernel arguments must fit the 4 KiB every driver accepts");
#endif

/* The arguments of the sub-byte kernel (subbyte): copies of packed
 * sub-byte elements, and conversions between packed and padded ones, one
 * value of width bits at a time. Bit b of a side is bit b % 8 of byte
 * b / 8 from its address (little bit-endian); element offset o of the plan
 * lies at bit *_bit + o * *_step (step: the element's bits when packed, 8
 * when padded, whose values sit in the low bits of their bytes). The ndim
 * axes (extent, dst_stride, src_stride in elements) are innermost first.
 * A work item takes group consecutive elements along axis 0 (of n0), so
 * extent[0] counts groups: a packed destination whose axis 0 has stride 1
 * gets groups that fill whole bytes, every other destination one element a
 * work item. No two work items write bits of one byte (the packed-layout
 * rule), so each writes its bytes as read-modify-write without atomics.
 * Destination elements are written dst_width bits wide: width, or 8 for a
 * padded destination (its high bits 0). A row (an index of axes 1..) is cut
 * into chunks of STRIDED_COPY_THREADS * STRIDED_COPY_SUBBYTE_UNROLL work
 * items, chunks to a row, count chunks in all; a block takes a chunk,
 * unravels its row once, and thread t its items t, t + THREADS, ...
 *
 * Transposes (tile_axis >= 1: the source runs with stride 1 along that
 * axis, the destination along axis 0) go by tiles of
 * STRIDED_COPY_SUBBYTE_TILE x STRIDED_COPY_SUBBYTE_TILE elements instead:
 * the values are read along the source's run into shared memory, and
 * written as groups along the destination's; tiles_a tiles along
 * tile_axis, tiles_b along axis 0 (n0 elements), count tiles in all with
 * the other axes.
 *
 * mode says which of the kernel's forms runs: ITEMS and TILES as above
 * (the host's own runs of these arguments know only these two); on a
 * device the host may instead choose RUNS, for rows of stride 1 on both
 * sides, where extent[0] counts the aligned 16-byte destination slots a
 * row can touch (when every row starts at the same bit of a 16-byte slot,
 * those it touches from there; else (n0 * dst_step + 254) / 128) and each
 * slot is a work item, in chunks of STRIDED_COPY_THREADS *
 * STRIDED_COPY_SUBBYTE_RUN_UNROLL_OF(args);
 * or FP4_TILES, for packed 4-bit transposes whose rows
 * all start on 32-bit words on both sides, by tiles of
 * STRIDED_COPY_FP4_TILE_A elements along tile_axis and
 * STRIDED_COPY_FP4_TILE_B along axis 0 (tiles_a and tiles_b count them). */
#define STRIDED_COPY_SUBBYTE_UNROLL 8
#define STRIDED_COPY_SUBBYTE_RUN_UNROLL 4
/* RUNS that spread packed 4-bit values one to a byte read 8 bytes a slot,
 * so they take twice the slots per thread (64 bytes of loads in flight, as
 * STRIDED_COPY_UNROLL_OF says): chunks of STRIDED_COPY_THREADS *
 * STRIDED_COPY_SUBBYTE_RUN_UNROLL_OF(args) slots. */
#define STRIDED_COPY_SUBBYTE_SPREADS(a) \
    ((a)->src_step == 4 && (a)->dst_step == 8 && (a)->width == 4)
#define STRIDED_COPY_SUBBYTE_SPREAD_UNROLL (2 * STRIDED_COPY_SUBBYTE_RUN_UNROLL)
#define STRIDED_COPY_SUBBYTE_RUN_UNROLL_OF(a)                             \
    (STRIDED_COPY_SUBBYTE_SPREADS(a) ? STRIDED_COPY_SUBBYTE_SPREAD_UNROLL \
                                     : STRIDED_COPY_SUBBYTE_RUN_UNROLL)
#define STRIDED_COPY_SUBBYTE_TILE 64
#define STRIDED_COPY_FP4_TILE_A 256
#define STRIDED_COPY_FP4_TILE_B 128
#define STRIDED_COPY_SUBBYTE_ITEMS 0
#define STRIDED_COPY_SUBBYTE_TILES 1
#define STRIDED_COPY_SUBBYTE_RUNS 2
#define STRIDED_COPY_SUBBYTE_FP4_TILES 3

typedef struct strided_copy_subbyte_args {
    uint64_t dst, src;
    int64_t dst_bit, src_bit;
    int64_t count, chunks, n0, tiles_a, tiles_b;
    int32_t width, dst_width, dst_step, src_step, group, ndim, tile_axis, mode;
    int64_t extent[STRIDED_COPY_MANY_DIMS];
    int64_t dst_stride[STRIDED_COPY_MANY_DIMS];
    int64_t src_stride[STRIDED_COPY_MANY_DIMS];
} strided_copy_subbyte_args;

/* Thin transposes: tiles that span the whole of a short axis (extent at
 * most STRIDED_COPY_THIN) and as much of the other as fills
 * STRIDED_COPY_THIN_BYTES of shared memory, such as (n, 3) <-> (3, n)
 * (arrays of structures to structures of arrays). The host and the kernel
 * size tiles with this one function: *ta elements along a (the source's
 * contiguous axis) by *tb along b (the destination's). Assumes: n_a or n_b
 * is at most STRIDED_COPY_THIN; size is 1, 2, 4, 8 or 16. */
#define STRIDED_COPY_THIN 16
#define STRIDED_COPY_THIN_BYTES 16384

#ifdef __CUDACC__
__host__ __device__
#endif
    static inline void
    strided_copy_thin_tile(uint64_t n_a, uint64_t n_b, uint32_t size, uint32_t *ta, uint32_t *tb)
{
    const uint32_t elements = STRIDED_COPY_THIN_BYTES / size;
    if (n_a <= STRIDED_COPY_THIN) {
        *ta = (uint32_t)n_a;
        *tb = elements / *ta / 32 * 32;
    } else {
        *tb = (uint32_t)n_b;
        *ta = elements / *tb / 32 * 32;
    }
}

/* The embedded fatbin (generated from copy/kernels.cu at build time). */
extern const unsigned char strided__copy_fatbin[];
extern const size_t strided__copy_fatbin_size;

#ifdef __cplusplus
}
#endif

#endif
