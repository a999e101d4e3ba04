/*
 * copy/launch.c: running copy plans on a CUDA device, and the device
 * temporaries of copies (copy/launch.h).
 *
 * The kernels (copy/kernels.cu) are compiled ahead of time into a
 * fatbin that the build embeds in the library (strided__copy_fatbin). The
 * first copy on a device loads it into that device's primary context with
 * cuModuleLoadData and looks every kernel up with cuModuleGetFunction, once,
 * under a lock; a failed load leaves nothing behind and is tried again by
 * the next copy. A loaded module stays for the life of the process, like
 * the primary context that holds it.
 *
 * A copy is one launch (or one cuMemcpyAsync). describe() turns the plan
 * into the launch: the kernel, the units it moves and the axes in those
 * units, innermost first; pack_args() writes them into the kernel's argument
 * struct (copy/kernels.h), passed by value. Each kind has its kernel:
 *   CONTIGUOUS  contiguous_W: W-byte vectors (W the alignment the two
 *               addresses share, up to 16), bytes at both ends. When they
 *               share less than 4 bytes of alignment and the copy is large,
 *               cuMemcpyAsync instead (the driver copes with misalignment).
 *   ROWS        rows_W: rows cut into chunks, W-byte units where every row
 *               start, row length and row stride allows; rows shorter than
 *               a block (256 units) go to gather_W instead; rows of at
 *               least SHIFT_MIN_BYTES whose W is below 16 go to rows_shift
 *               (16-byte stores of shifted 16-byte loads).
 *   TRANSPOSE   transpose_S (shared-memory tiles), transpose_Sp for 1-,
 *               2- and 4-byte elements whose words (16-byte vectors of
 *               4-byte elements) are aligned (packed words),
 *               transpose_Ss for 4- to 16-byte elements whose destination
 *               rows start off the memory's sectors (skewed tiles);
 *               transpose_thin_S where a or b is at most STRIDED_COPY_THIN
 *               long (rectangular tiles spanning the short axis);
 *               narrow_S_F_* for 1-, 2- and 4-byte elements between dense
 *               records of F = 2, 3 or 4 fields and F planes, where every
 *               word (16-byte vector for 4 bytes) is aligned (records
 *               regrouped in registers).
 *   BROADCAST   broadcast_Sx16 (16-byte words of copies) where the runs are
 *               aligned, else broadcast_S; short runs go to gather_S.
 *   GATHER      gather_U: one unit per thread and step, unravelled with
 *               magic-number division.
 * A plan whose kind's property does not hold (a hand-made plan, say), and
 * every element size other than 1, 2, 4, 8 and 16 bytes (or elements less
 * aligned than their size), goes to gather: elements are then split into
 * words of the alignment they have, as one more axis.
 *
 * Index width: the 32-bit argument structs when every index and offset of
 * the launch fits in int32, else the 64-bit ones; few axes (at most 8) use
 * the small structs.
 *
 * Temporaries (strided__copy_temp_alloc / _free, at the end, built with
 * or without the kernels) are the device memory that the paths staging a
 * copy on a device use (copy/device.c, copy/transfer.c): from the copy's
 * device resource when it was given one, else from the device's current
 * memory pool, allocated and freed in stream order on the copy's stream.
 * A pool that would give freed memory back to the system at every
 * synchronisation (release threshold 0, the driver's default) has its
 * threshold raised when a copy outside a graph capture takes a temporary
 * from it: else every copy that stages through one maps its memory again
 * (measured on an H200: 0.2 ms of a 38 MB copy, 0.9 ms of a 256 MB one).
 */
#include "copy/launch.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "base/base.h"
#include "copy/kernels.h"
#include "copy/testing.h"
#include "cuda/driver.h"
#include "memory/memory.h"

#define OP "copy"

#ifndef STRIDED_HAVE_KERNELS

/* A device copy of plan p in a library without kernels. */
static strided_status without_kernels(const strided_copy_plan *p)
{
    assert(p != NULL);
    if (p->volume == 0)
        return STRIDED_OK;
    return strided__fail(STRIDED_ERR_UNSUPPORTED, OP,
                         "this libstrided was built without its CUDA kernels "
                         "(no nvcc)");
}

strided_status strided__copy_device_run(const strided_copy_plan *p, uintptr_t dst, uintptr_t src,
                                        void *stream, int device)
{
    (void)dst;
    (void)src;
    (void)stream;
    (void)device;
    return without_kernels(p);
}

strided_status strided__copy_device_run_subbyte(const strided_copy_plan *p,
                                                const strided__subbyte_sides *sides, void *stream,
                                                int device)
{
    (void)sides;
    (void)stream;
    (void)device;
    return without_kernels(p);
}

strided_status strided__copy_launch_describe(const strided_copy_plan *p, uintptr_t dst,
                                             uintptr_t src, const char **name, void *args,
                                             size_t size, size_t *bytes)
{
    (void)dst;
    (void)src;
    (void)args;
    (void)size;
    *name = "";
    *bytes = 0;
    return without_kernels(p);
}

#else

/* Kernels are loaded for this many device ordinals. */
#define MAX_DEVICES 128

/* Blocks per multiprocessor a grid is given at most; the grid-stride loops
 * do the rest. Two waves of the 8 blocks of 256 threads a multiprocessor
 * holds. */
#define BLOCKS_PER_SM 16

/* A contiguous copy at least this large whose addresses share less than
 * 4 bytes of alignment goes to cuMemcpyAsync, and so does every contiguous
 * copy of at least MEMCPY_LARGE_BYTES: the driver's copy reaches the
 * bandwidth ceiling (100% against the vector kernel's 91% on an H200 for
 * 1 GiB; the kernel is as fast up to a few MiB and launches cheaper). */
#define MEMCPY_MIN_BYTES ((int64_t)1 << 20)
#define MEMCPY_LARGE_BYTES ((int64_t)8 << 20)

/* The kernels, by index; see kernel_names. */
enum {
    K_CONTIGUOUS = 0,                             /* + unit */
    K_ROWS = K_CONTIGUOUS + 5,                    /* + unit */
    K_BROADCAST = K_ROWS + 5,                     /* + unit */
    K_BROADCAST16 = K_BROADCAST + 5,              /* + unit (1..8 bytes) */
    K_GATHER = K_BROADCAST16 + 4,                 /* + 4 unit + 2 wide + many */
    K_TRANSPOSE = K_GATHER + 20,                  /* + 2 unit + wide */
    K_TRANSPOSE_PACKED = K_TRANSPOSE + 10,        /* + 2 unit (1, 2, 4 bytes) + wide */
    K_TRANSPOSE_THIN = K_TRANSPOSE_PACKED + 6,    /* + 2 unit + wide */
    K_TRANSPOSE_SKEWED = K_TRANSPOSE_THIN + 10,   /* + 2 (unit - 2) (4..16 bytes) + wide */
    K_TRANSPOSE_GROUPED = K_TRANSPOSE_SKEWED + 6, /* + 2 unit + wide */
    K_NARROW = K_TRANSPOSE_GROUPED +
               10,             /* + 12 unit (1, 2, 4 bytes) + 4 (fields - 2) + 2 records + wide */
    K_SUBBYTE = K_NARROW + 36, /* + STRIDED_COPY_SUBBYTE_* mode */
    K_ROWS_SHIFT = K_SUBBYTE + 4,
    K_ROWS_REVERSED = K_ROWS_SHIFT + 1, /* + unit (1..8 bytes) */
    K_COUNT = K_ROWS_REVERSED + 4,
    K_MEMCPY = -1 /* not a kernel: cuMemcpyAsync */
};

/* The grid of kernel for chunks blocks' worth of work (at least 1): a
 * block per chunk for the row kernels and per tile for the tile kernels,
 * whose chunks and tiles are all alike (the hardware's block scheduler then
 * balances them; on an H200 rows of 16-byte units ran at 94.7% of memcpy
 * so, at 90.4% with the loop), at most BLOCKS_PER_SM blocks a
 * multiprocessor looping over the chunks for the others (the grouped tiles
 * among them: a block works out its groups' offsets once). */
static unsigned int grid_of(int kernel, int64_t chunks, int sm_count)
{
    bool per_chunk = (kernel >= K_CONTIGUOUS && kernel < K_GATHER) || kernel == K_ROWS_SHIFT ||
                     (kernel >= K_ROWS_REVERSED && kernel < K_ROWS_REVERSED + 4) ||
                     kernel == K_SUBBYTE + STRIDED_COPY_SUBBYTE_RUNS ||
                     (kernel >= K_TRANSPOSE && kernel < K_TRANSPOSE_GROUPED);
    int64_t most = per_chunk ? (int64_t)INT32_MAX : (int64_t)sm_count * BLOCKS_PER_SM;
    return (unsigned int)(chunks > most ? most : chunks < 1 ? 1 : chunks);
}

/* "unit" above is log2 of the unit's bytes: 1, 2, 4, 8, 16 -> 0..4. */
#define UNITS(prefix, suffix) \
    prefix "1" suffix, prefix "2" suffix, prefix "4" suffix, prefix "8" suffix, prefix "16" suffix
#define GATHER_VARIANTS(w)                                                   \
    "strided_copy_gather_" w "_i32_d8", "strided_copy_gather_" w "_i32_d64", \
        "strided_copy_gather_" w "_i64_d8", "strided_copy_gather_" w "_i64_d64"
#define WIDTHS(name) name "_i32", name "_i64"
#define NARROWS(s)                                                                               \
    WIDTHS("strided_copy_narrow_" s "_2_planes"), WIDTHS("strided_copy_narrow_" s "_2_records"), \
        WIDTHS("strided_copy_narrow_" s "_3_planes"),                                            \
        WIDTHS("strided_copy_narrow_" s "_3_records"),                                           \
        WIDTHS("strided_copy_narrow_" s "_4_planes"),                                            \
        WIDTHS("strided_copy_narrow_" s "_4_records")

/* The names copy/kernels.cu gives its kernels. */
static const char *const kernel_names[] = {
    UNITS("strided_copy_contiguous_", ""),
    UNITS("strided_copy_rows_", ""),
    UNITS("strided_copy_broadcast_", ""),
    "strided_copy_broadcast_1x16",
    "strided_copy_broadcast_2x16",
    "strided_copy_broadcast_4x16",
    "strided_copy_broadcast_8x16",
    GATHER_VARIANTS("1"),
    GATHER_VARIANTS("2"),
    GATHER_VARIANTS("4"),
    GATHER_VARIANTS("8"),
    GATHER_VARIANTS("16"),
    WIDTHS("strided_copy_transpose_1"),
    WIDTHS("strided_copy_transpose_2"),
    WIDTHS("strided_copy_transpose_4"),
    WIDTHS("strided_copy_transpose_8"),
    WIDTHS("strided_copy_transpose_16"),
    WIDTHS("strided_copy_transpose_1p"),
    WIDTHS("strided_copy_transpose_2p"),
    WIDTHS("strided_copy_transpose_4p"),
    WIDTHS("strided_copy_transpose_thin_1"),
    WIDTHS("strided_copy_transpose_thin_2"),
    WIDTHS("strided_copy_transpose_thin_4"),
    WIDTHS("strided_copy_transpose_thin_8"),
    WIDTHS("strided_copy_transpose_thin_16"),
    WIDTHS("strided_copy_transpose_4s"),
    WIDTHS("strided_copy_transpose_8s"),
    WIDTHS("strided_copy_transpose_16s"),
    WIDTHS("strided_copy_transpose_grouped_1"),
    WIDTHS("strided_copy_transpose_grouped_2"),
    WIDTHS("strided_copy_transpose_grouped_4"),
    WIDTHS("strided_copy_transpose_grouped_8"),
    WIDTHS("strided_copy_transpose_grouped_16"),
    NARROWS("1"),
    NARROWS("2"),
    NARROWS("4"),
    "strided_copy_subbyte",
    "strided_copy_subbyte_tiles",
    "strided_copy_subbyte_runs",
    "strided_copy_subbyte_fp4_tiles",
    "strided_copy_rows_shift",
    "strided_copy_rows_reversed_1",
    "strided_copy_rows_reversed_2",
    "strided_copy_rows_reversed_4",
    "strided_copy_rows_reversed_8",
};
_Static_assert(sizeof kernel_names / sizeof kernel_names[0] == K_COUNT, "one name per kernel");

#undef UNITS
#undef GATHER_VARIANTS
#undef WIDTHS
#undef NARROWS

/* The argument struct a kernel takes. */
typedef enum args_kind { ARGS_SPAN, ARGS32_8, ARGS32_64, ARGS64_8, ARGS64_64 } args_kind;

typedef union args {
    strided_copy_span span;
    strided_copy_args32_8 a32_8;
    strided_copy_args32_64 a32_64;
    strided_copy_args64_8 a64_8;
    strided_copy_args64_64 a64_64;
} args;

/* One axis of a launch: extent and strides, in units of each side. */
typedef struct axis {
    int64_t n, d, s;
} axis;

/* A launch, before its arguments are packed. The fields follow the
 * argument structs (copy/kernels.h); work is what the grid is sized
 * by: units (elementwise), vectors (contiguous), chunks or tiles, of which
 * a block handles per_block at a time. */
typedef struct launch {
    int kernel;
    args_kind kind;
    bool tiles; /* blocks of (32, 8) threads, else (256) */
    int64_t work, per_block;
    uint64_t dst, src;
    int64_t count, n_a, n_b, dst_a, dst_b, src_a, src_b, tiles_a, tiles_b;
    int ndim, group_a, group_b; /* batch axes; grouped tiles' axes after them */
    axis ax[STRIDED_COPY_MANY_DIMS];
} launch;

/* The loaded kernels of one device. */
typedef struct device_kernels {
    CUmodule module;
    CUfunction fn[K_COUNT];
    int sm_count;
} device_kernels;

static device_kernels devices[MAX_DEVICES];
static atomic_bool ready[MAX_DEVICES];
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int log2_of(int64_t pow2)
{
    int k = 0;
    assert(pow2 > 0 && (pow2 & (pow2 - 1)) == 0);
    while (((int64_t)1 << k) < pow2)
        k++;
    return k;
}

/* The largest power of two, at most 16, that divides x (16 for 0). */
static int64_t alignment_of(uint64_t x)
{
    int64_t a = 1;
    while (a < 16 && x % (uint64_t)(2 * a) == 0)
        a *= 2;
    return a;
}

static bool is_unit_size(int64_t bytes)
{
    return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* Multiply every stride of n axes by k; false on overflow. */
static bool scale_strides(axis *ax, int n, int64_t k)
{
    for (int i = 0; i < n; i++)
        if (strided__mul_overflow(ax[i].d, k, &ax[i].d) ||
            strided__mul_overflow(ax[i].s, k, &ax[i].s))
            return false;
    return true;
}

/* The product of the extents of n axes and the farthest offset each side
 * reaches (sum of |stride| * (extent - 1)); false on overflow. */
static bool measure(const axis *ax, int n, int64_t *volume, int64_t *dst_reach, int64_t *src_reach)
{
    int64_t v = 1, rd = 0, rs = 0, t;

    for (int i = 0; i < n; i++) {
        int64_t d = ax[i].d < 0 ? -ax[i].d : ax[i].d;
        int64_t s = ax[i].s < 0 ? -ax[i].s : ax[i].s;
        if (ax[i].d == INT64_MIN || ax[i].s == INT64_MIN || strided__mul_overflow(v, ax[i].n, &v) ||
            strided__mul_overflow(d, ax[i].n - 1, &t) || strided__add_overflow(rd, t, &rd) ||
            strided__mul_overflow(s, ax[i].n - 1, &t) || strided__add_overflow(rs, t, &rs))
            return false;
    }
    *volume = v;
    *dst_reach = rd;
    *src_reach = rs;
    return true;
}

static strided_status too_large(void)
{
    return strided__fail(STRIDED_ERR_OVERFLOW, OP, "the copy's offsets do not fit in int64 bytes");
}

/* Does everything the kernel computes fit in int32? */
static bool fits32(int64_t count, int64_t dst_reach, int64_t src_reach)
{
    return count <= INT32_MAX && dst_reach <= INT32_MAX && src_reach <= INT32_MAX;
}

/* Copy the batch axes into the launch. */
static void set_axes(launch *l, const axis *ax, int n)
{
    assert(n <= STRIDED_COPY_MANY_DIMS);
    l->ndim = n;
    for (int i = 0; i < n; i++)
        l->ax[i] = ax[i];
}

static strided_status contiguous(int64_t nbytes, uint64_t dst, uint64_t src, launch *l)
{
    int64_t w = alignment_of(dst ^ src);

    if ((w < 4 && nbytes >= MEMCPY_MIN_BYTES) || nbytes >= MEMCPY_LARGE_BYTES) {
        l->kernel = K_MEMCPY;
        l->count = nbytes;
        return STRIDED_OK;
    }
    l->kernel = K_CONTIGUOUS + log2_of(w);
    l->kind = ARGS_SPAN;
    l->count = nbytes;
    l->work = ceil_div(nbytes, w);
    l->per_block = STRIDED_COPY_THREADS * STRIDED_COPY_UNROLL_OF(w);
    return STRIDED_OK;
}

/* Element by element over n axes of unit-byte units (innermost first).
 * Units less aligned than their size, or of another size than 1, 2, 4, 8
 * or 16 bytes, are split into words of the alignment they have: one more
 * axis, innermost, merged with the next where the elements are
 * contiguous. Assumes: the axes are in units; n < STRIDED_COPY_MANY_DIMS. */
static strided_status gather(axis *ax, int n, int64_t unit, uint64_t dst, uint64_t src, launch *l)
{
    int64_t w = alignment_of((uint64_t)unit | dst | src);
    int64_t k = unit / w, count, dst_reach, src_reach;

    assert(n < STRIDED_COPY_MANY_DIMS && unit % w == 0);
    if (k > 1) {
        if (!scale_strides(ax, n, k))
            return too_large();
        if (n > 0 && ax[0].d == k && ax[0].s == k) {
            if (strided__mul_overflow(ax[0].n, k, &ax[0].n))
                return too_large();
            ax[0].d = ax[0].s = 1;
        } else {
            memmove(ax + 1, ax, (size_t)n * sizeof *ax);
            ax[0] = (axis){k, 1, 1};
            n++;
        }
    }
    if (n == 0)
        ax[n++] = (axis){1, 0, 0};
    if (!measure(ax, n, &count, &dst_reach, &src_reach))
        return too_large();
    bool wide = !fits32(count, dst_reach, src_reach);
    bool many = n > STRIDED_COPY_FEW_DIMS;
    l->kernel = K_GATHER + 4 * log2_of(w) + 2 * wide + many;
    l->kind = wide ? (many ? ARGS64_64 : ARGS64_8) : (many ? ARGS32_64 : ARGS32_8);
    l->count = count;
    l->work = count;
    l->per_block = STRIDED_COPY_THREADS * STRIDED_COPY_UNROLL_OF(w);
    set_axes(l, ax, n);
    return STRIDED_OK;
}

/* Rows of n_b units of unit bytes (the destination's) along b (strides
 * dst_b, src_b) at the offsets of the batch axes, in chunks of a block's
 * units. */
static strided_status row_chunks(const axis *batch, int nbatch, int64_t n_b, int64_t dst_b,
                                 int64_t src_b, int64_t unit, int kernel, launch *l)
{
    int64_t rows, dst_reach, src_reach;
    int64_t chunk = STRIDED_COPY_THREADS * STRIDED_COPY_UNROLL_OF(unit);
    int64_t chunks = ceil_div(n_b, chunk);

    if (!measure(batch, nbatch, &rows, &dst_reach, &src_reach) ||
        strided__mul_overflow(rows, chunks, &l->count))
        return too_large();
    l->kernel = kernel;
    l->kind = ARGS64_64;
    l->n_b = n_b;
    l->dst_b = dst_b;
    l->src_b = src_b;
    l->tiles_b = chunks;
    l->work = l->count;
    l->per_block = 1;
    set_axes(l, batch, nbatch);
    return STRIDED_OK;
}

/* Rows contiguous on both sides whose addresses, lengths and pitches share
 * less than 16 bytes of alignment go to rows_shift from this many bytes a
 * row: a row of 4-byte units ran at 55% of memcpy on an H200, where
 * 16-byte stores fed by shifted 16-byte loads move 4 times the bytes per
 * access; shorter rows would leave most of a block's slots empty. */
#define SHIFT_MIN_BYTES 2048

/* Rows contiguous on both sides. Assumes: n >= 1, ax[0] has strides 1. */
static strided_status rows(axis *ax, int n, int64_t itemsize, uint64_t dst, uint64_t src, launch *l)
{
    uint64_t bits = dst | src;
    int64_t row_bytes, w;

    assert(n >= 1 && ax[0].d == 1 && ax[0].s == 1);
    if (strided__mul_overflow(ax[0].n, itemsize, &row_bytes) ||
        !scale_strides(ax + 1, n - 1, itemsize))
        return too_large();
    bits |= (uint64_t)row_bytes;
    for (int i = 1; i < n; i++)
        bits |= (uint64_t)ax[i].d | (uint64_t)ax[i].s;
    w = alignment_of(bits);
    if (w < 16 && row_bytes >= SHIFT_MIN_BYTES) {
        /* Aligned 16-byte slots of each destination row (at most
         * row_bytes / 16 + 2 of them), in chunks as 16-byte units. */
        strided_status status = row_chunks(ax + 1, n - 1, row_bytes / 16 + 2, 1, 1, 16,
                                           K_ROWS_SHIFT, l);
        l->n_b = row_bytes;
        return status;
    }
    ax[0].n = row_bytes / w;
    for (int i = 1; i < n; i++) {
        ax[i].d /= w;
        ax[i].s /= w;
    }
    if (ax[0].n < STRIDED_COPY_THREADS)
        return gather(ax, n, w, dst, src, l);
    return row_chunks(ax + 1, n - 1, ax[0].n, 1, 1, w, K_ROWS + log2_of(w), l);
}

/* Runs filled with one source element each. Assumes: n >= 1, ax[0] has
 * source stride 0. */
static strided_status broadcast(axis *ax, int n, int64_t itemsize, uint64_t dst, uint64_t src,
                                launch *l)
{
    int64_t row_bytes;

    assert(n >= 1 && ax[0].s == 0);
    if (!is_unit_size(itemsize) || dst % (uint64_t)itemsize != 0 || src % (uint64_t)itemsize != 0)
        return gather(ax, n, itemsize, dst, src, l);
    /* 16-byte words of 16 / itemsize copies, where every run starts on a
     * 16-byte boundary and is a whole number of words. */
    bool words = itemsize < 16 && ax[0].d == 1 && dst % 16 == 0 &&
                 !strided__mul_overflow(ax[0].n, itemsize, &row_bytes) && row_bytes % 16 == 0 &&
                 row_bytes / 16 >= STRIDED_COPY_THREADS;
    for (int i = 1; words && i < n; i++) {
        int64_t b;
        words = !strided__mul_overflow(ax[i].d, itemsize, &b) && b % 16 == 0;
    }
    if (words) {
        for (int i = 1; i < n; i++)
            ax[i].d = ax[i].d * itemsize / 16;
        return row_chunks(ax + 1, n - 1, row_bytes / 16, 1, 0, 16,
                          K_BROADCAST16 + log2_of(itemsize), l);
    }
    if (ax[0].n < STRIDED_COPY_THREADS)
        return gather(ax, n, itemsize, dst, src, l);
    return row_chunks(ax + 1, n - 1, ax[0].n, ax[0].d, 0, itemsize, K_BROADCAST + log2_of(itemsize),
                      l);
}

/* The two axes a launch of tiles or records walks, and how many tiles (or
 * groups) each is cut into. */
static void set_pair(launch *l, axis a, axis b, int64_t tiles_a, int64_t tiles_b)
{
    l->n_a = a.n;
    l->n_b = b.n;
    l->dst_a = a.d;
    l->dst_b = b.d;
    l->src_a = a.s;
    l->src_b = b.s;
    l->tiles_a = tiles_a;
    l->tiles_b = tiles_b;
}

/* Records of F = 2, 3 or 4 fields of 1, 2 or 4 bytes to F planes or back
 * (interleaved pixels to channel planes, arrays of structures to
 * structures of arrays): short is the axis of extent F, long the other,
 * batch the rest. The interleaved side holds dense records (fields at
 * stride 1, records at stride F), the plane side's long axis is
 * contiguous, and every vector (STRIDED_COPY_NARROW_VECTOR) either side
 * touches is aligned: addresses, plane strides and batch strides. Then
 * each thread moves a vector's worth of records (narrow_S_F_*) and *done
 * is set. */
static strided_status narrow(axis shortx, axis longx, const axis *batch, int nbatch,
                             int64_t itemsize, uint64_t dst, uint64_t src, launch *l, bool *done)
{
    const int64_t f = shortx.n, vector = STRIDED_COPY_NARROW_VECTOR(itemsize);
    const int64_t per_word = vector / itemsize; /* records a thread moves */
    *done = false;
    if ((itemsize != 1 && itemsize != 2 && itemsize != 4) || f < 2 || f > 4 ||
        nbatch > STRIDED_COPY_FEW_DIMS || dst % (uint64_t)vector != 0 ||
        src % (uint64_t)vector != 0)
        return STRIDED_OK;
    /* to_planes: the source is interleaved. */
    const bool to_planes = shortx.s == 1 && longx.s == f && longx.d == 1 &&
                           shortx.d % per_word == 0;
    const bool to_records = shortx.d == 1 && longx.d == f && longx.s == 1 &&
                            shortx.s % per_word == 0;
    if (!to_planes && !to_records)
        return STRIDED_OK;
    for (int i = 0; i < nbatch; i++)
        if (batch[i].d % per_word != 0 || batch[i].s % per_word != 0)
            return STRIDED_OK;
    int64_t groups = ceil_div(longx.n, per_word), count, dst_reach, src_reach, unused1, unused2,
            rows;
    axis all[STRIDED_COPY_FEW_DIMS + 2] = {shortx, longx};
    memcpy(all + 2, batch, (size_t)nbatch * sizeof *batch);
    if (!measure(all, nbatch + 2, &unused1, &dst_reach, &src_reach) ||
        !measure(batch, nbatch, &rows, &unused1, &unused2) ||
        strided__mul_overflow(rows, groups, &count))
        return too_large();
    const bool wide = !fits32(count, dst_reach, src_reach);
    l->kernel = K_NARROW + 12 * (int)log2_of(itemsize) + 4 * (int)(f - 2) + 2 * !to_planes + wide;
    l->kind = wide ? ARGS64_8 : ARGS32_8;
    l->tiles = false;
    l->count = count;
    set_pair(l, shortx, longx, 1, groups);
    l->work = count;
    l->per_block = STRIDED_COPY_THREADS;
    set_axes(l, batch, nbatch);
    *done = true;
    return STRIDED_OK;
}

static int64_t magnitude(int64_t v)
{
    return v < 0 ? -v : v;
}

/* The axis after side g's in its order: of the axes not on side g, the one
 * of least |stride| (source strides for side 0, destination strides for
 * side 1), zero strides left out; -1 when there is none. */
static int next_axis(const axis *ax, int n, const int *owner, int g)
{
    int best = -1;
    int64_t least = 0;
    for (int i = 0; i < n; i++) {
        const int64_t v = magnitude(g == 0 ? ax[i].s : ax[i].d);
        if (owner[i] != g && v != 0 && (best < 0 || v < least)) {
            best = i;
            least = v;
        }
    }
    return best;
}

/* Grouped tiles (transpose_grouped_S): where a or b is shorter than a
 * tile, side a of the tile (side 0) takes after a the axes next in the
 * source's order, and side b (side 1) after b those next in the
 * destination's, while the side's length (the product of its extents)
 * stays within a tile; the first axis that does not fit whole is split
 * where a factor of its extent does (the inner part joins the side, the
 * outer part the batch). A side stops at an axis the other side holds.
 * Taken when the tiles hold at least a quarter of a tile and twice what
 * tiles over a and b alone would; *done says whether it was. Assumes:
 * 1 <= ia < n. */
static strided_status grouped(const axis *ax, int n, int ia, int64_t itemsize, int64_t tile,
                              launch *l, bool *done)
{
    axis side[2][STRIDED_COPY_GROUP_MAX], all[STRIDED_COPY_MANY_DIMS];
    int count[2] = {0, 0}, nbatch = 0, owner[STRIDED_COPY_MANY_DIMS];
    int64_t len[2] = {1, 1};
    bool split[2] = {false, false};
    axis outer[2];

    *done = false;
    for (int i = 0; i < n; i++)
        owner[i] = i == ia ? 0 : i == 0 ? 1 : -1;
    /* Whole axes first, both sides; then each side's split, so that a
     * split on one side takes no axis the other would have taken whole. */
    int next[2] = {ia, 0};
    bool open[2] = {true, true};
    for (int pass = 0; pass < 2; pass++) {
        for (int g = 0; g < 2; g++) {
            while (open[g] && count[g] < STRIDED_COPY_GROUP_MAX) {
                const int k = next[g];
                const axis x = ax[k];
                if (owner[k] != -1 && owner[k] != g) {
                    open[g] = false;
                } else if (x.n <= tile / len[g]) {
                    owner[k] = g;
                    side[g][count[g]++] = x;
                    len[g] *= x.n;
                    next[g] = next_axis(ax, n, owner, g);
                    open[g] = next[g] >= 0;
                    continue;
                } else if (pass == 1) {
                    /* The largest factor of the extent that fits. */
                    int64_t f = tile / len[g];
                    while (f >= 2 && x.n % f != 0)
                        f--;
                    if (f >= 2) {
                        owner[k] = g;
                        side[g][count[g]++] = (axis){f, x.d, x.s};
                        len[g] *= f;
                        /* Within the axis's own reach: no overflow. */
                        outer[g] = (axis){x.n / f, x.d * f, x.s * f};
                        split[g] = true;
                    }
                    open[g] = false;
                }
                break;
            }
        }
    }
    /* A side is empty where a or b is longer than a tile and has no
     * factor that fits (a long axis of prime extent). */
    const int64_t plain = (ax[ia].n < tile ? ax[ia].n : tile) * (ax[0].n < tile ? ax[0].n : tile);
    if (count[0] == 0 || count[1] == 0 || len[0] * len[1] < tile * tile / 4 ||
        len[0] * len[1] < 2 * plain)
        return STRIDED_OK;
    for (int i = 0; i < n; i++)
        if (owner[i] < 0)
            all[nbatch++] = ax[i];
    for (int g = 0; g < 2; g++)
        if (split[g])
            all[nbatch++] = outer[g];
    memcpy(all + nbatch, side[0], (size_t)count[0] * sizeof(axis));
    memcpy(all + nbatch + count[0], side[1], (size_t)count[1] * sizeof(axis));
    const int axes = nbatch + count[0] + count[1];
    int64_t tiles, dst_reach, src_reach, unused1, unused2;
    if (!measure(all, axes, &unused1, &dst_reach, &src_reach) ||
        !measure(all, nbatch, &tiles, &unused1, &unused2))
        return too_large();
    const bool wide = !fits32(tiles, dst_reach, src_reach);
    l->kernel = K_TRANSPOSE_GROUPED + 2 * log2_of(itemsize) + wide;
    l->kind = wide ? ARGS64_64 : ARGS32_64;
    l->tiles = true;
    l->count = tiles;
    l->n_a = len[0];
    l->n_b = len[1];
    l->work = tiles;
    l->per_block = 1;
    set_axes(l, all, axes);
    l->ndim = nbatch;
    l->group_a = count[0];
    l->group_b = count[1];
    *done = true;
    return STRIDED_OK;
}

/* Tiles over axis a (ax[ia], along which the source is contiguous) and
 * b (ax[0]), batched over the others. Assumes: 1 <= ia < n. */
static strided_status transpose(axis *ax, int n, int ia, int64_t itemsize, uint64_t dst,
                                uint64_t src, launch *l)
{
    axis batch[STRIDED_COPY_MANY_DIMS];
    int nbatch = 0;
    int64_t volume, dst_reach, src_reach, tiles;

    assert(ia >= 1 && ia < n);
    if (!is_unit_size(itemsize) || dst % (uint64_t)itemsize != 0 || src % (uint64_t)itemsize != 0)
        return gather(ax, n, itemsize, dst, src, l);
    const int64_t tile = itemsize == 1 ? 128 : itemsize <= 4 ? 64 : 32;
    const axis a = ax[ia], b = ax[0];
    /* A short a or b (at most STRIDED_COPY_THIN) against a long other
     * would leave square tiles mostly empty: rectangular tiles that span it
     * whole instead. Both short (tiles less than 1/16 full either way):
     * gather. */
    const bool thin = (a.n <= STRIDED_COPY_THIN && b.n >= 256) ||
                      (b.n <= STRIDED_COPY_THIN && a.n >= 256);
    if (!thin && (a.n < tile || b.n < tile)) {
        bool done = false;
        strided_status status = grouped(ax, n, ia, itemsize, STRIDED_COPY_GROUP_TILE(itemsize), l,
                                        &done);
        if (status != STRIDED_OK || done)
            return status;
    }
    if (!thin && (a.n < tile ? a.n : tile) * (b.n < tile ? b.n : tile) < tile * tile / 16)
        return gather(ax, n, itemsize, dst, src, l);
    for (int i = 1; i < n; i++)
        if (i != ia)
            batch[nbatch++] = ax[i];
    if (thin) {
        bool done = false;
        strided_status status = a.n <= STRIDED_COPY_THIN
                                    ? narrow(a, b, batch, nbatch, itemsize, dst, src, l, &done)
                                    : narrow(b, a, batch, nbatch, itemsize, dst, src, l, &done);
        if (status != STRIDED_OK || done)
            return status;
    }
    /* Destination rows that start off the memory's sectors: tiles skewed
     * to them (kernels.h), when a row holds at least a tile. */
    const int64_t per_sector = STRIDED_COPY_SECTOR / itemsize;
    bool off_sectors = dst % STRIDED_COPY_SECTOR != 0 || a.d % per_sector != 0;
    for (int i = 0; i < nbatch; i++)
        off_sectors = off_sectors || batch[i].d % per_sector != 0;
    /* Packed: every row of every tile starts on an aligned word of the
     * packed kernel (kernels.h), 32 bits of 1- and 2-byte elements, 16
     * bytes of 4-byte ones (whose destination rows also start on sectors:
     * else skewed tiles, which write no sector in part, win). */
    const int64_t word = itemsize < 4 ? 4 : 16, per_word = word / itemsize;
    bool packed = !thin && itemsize <= 4 && !(itemsize == 4 && off_sectors) && a.s == 1 &&
                  b.d == 1 && dst % (uint64_t)word == 0 && src % (uint64_t)word == 0 &&
                  b.s % per_word == 0 && a.d % per_word == 0;
    for (int i = 0; packed && i < nbatch; i++)
        packed = batch[i].d % per_word == 0 && batch[i].s % per_word == 0;
    const bool skew = !thin && !packed && itemsize >= 4 && b.d == 1 && b.n >= tile && off_sectors;
    int64_t tiles_a = ceil_div(a.n, tile),
            tiles_b = ceil_div(b.n + (skew ? per_sector - 1 : 0), tile);
    if (thin) {
        uint32_t ta, tb;
        strided_copy_thin_tile((uint64_t)a.n, (uint64_t)b.n, (uint32_t)itemsize, &ta, &tb);
        tiles_a = ceil_div(a.n, ta);
        tiles_b = ceil_div(b.n, tb);
    }
    int64_t unused1, unused2;
    if (!measure(ax, n, &volume, &dst_reach, &src_reach) ||
        !measure(batch, nbatch, &tiles, &unused1, &unused2) ||
        strided__mul_overflow(tiles, tiles_a, &tiles) ||
        strided__mul_overflow(tiles, tiles_b, &tiles))
        return too_large();
    bool wide = !fits32(tiles, dst_reach, src_reach);
    l->kernel = thin     ? K_TRANSPOSE_THIN + 2 * log2_of(itemsize) + wide
                : packed ? K_TRANSPOSE_PACKED + 2 * log2_of(itemsize) + wide
                : skew   ? K_TRANSPOSE_SKEWED + 2 * (log2_of(itemsize) - 2) + wide
                         : K_TRANSPOSE + 2 * log2_of(itemsize) + wide;
    l->kind = wide ? ARGS64_64 : ARGS32_64;
    l->tiles = true;
    l->count = tiles;
    set_pair(l, a, b, tiles_a, tiles_b);
    l->work = tiles;
    l->per_block = 1;
    set_axes(l, batch, nbatch);
    return STRIDED_OK;
}

/* The largest |source stride| along which a warp's reads still share their
 * sectors enough for a row or tile kernel to beat the general gather:
 * reversed rows (-1) and every-other-element slices (2) among them. */
#define NEAR_UNIT 4

/* Rows read backwards ([:, ::-1]) of E < 16-byte elements, whole 16-byte
 * vectors on both sides: each destination vector is the source vector at
 * the mirrored place with its elements reversed (rows_reversed_E). The
 * kernel is given the lowest byte of row 0's first source vector, E - 16
 * bytes from element 0, and a source step of -1 vector. Whether it applied;
 * *status then says how the launch was made. Assumes: ax[0] has strides
 * (1, -1); the elements are aligned. */
static bool reversed_rows(axis *ax, int n, int64_t itemsize, uint64_t dst, uint64_t src, launch *l,
                          strided_status *status)
{
    int64_t row_bytes, d, s;
    if (itemsize >= 16 || strided__mul_overflow(ax[0].n, itemsize, &row_bytes) ||
        row_bytes % 16 != 0 || row_bytes / 16 < STRIDED_COPY_THREADS || dst % 16 != 0 ||
        (src + (uint64_t)itemsize) % 16 != 0)
        return false;
    for (int i = 1; i < n; i++)
        if (strided__mul_overflow(ax[i].d, itemsize, &d) ||
            strided__mul_overflow(ax[i].s, itemsize, &s) || d % 16 != 0 || s % 16 != 0)
            return false;
    for (int i = 1; i < n; i++) {
        ax[i].d = ax[i].d * itemsize / 16;
        ax[i].s = ax[i].s * itemsize / 16;
    }
    *status = row_chunks(ax + 1, n - 1, row_bytes / 16, 1, -1, 16,
                         K_ROWS_REVERSED + log2_of(itemsize), l);
    l->src = src + (uint64_t)itemsize - 16;
    return true;
}

/* A gather whose destination is contiguous along its innermost axis and
 * whose source steps by at most NEAR_UNIT elements along that axis (rows:
 * [:, ::-1], [:, ::2]) or along another (tiles: [::-1, ::-1].T,
 * [::2, ::2].T): the row or tile kernel with element units, or reversed
 * rows of 16-byte vectors where the alignment allows. *done says whether it
 * applied. */
static strided_status near_unit(axis *ax, int n, int64_t itemsize, uint64_t dst, uint64_t src,
                                launch *l, bool *done)
{
    *done = false;
    if (n < 1 || ax[0].d != 1 || !is_unit_size(itemsize) || dst % (uint64_t)itemsize != 0 ||
        src % (uint64_t)itemsize != 0)
        return STRIDED_OK;
    strided_status status = STRIDED_OK;
    if (ax[0].s == -1 && reversed_rows(ax, n, itemsize, dst, src, l, &status)) {
        *done = true;
        return status;
    }
    if (ax[0].s != 0 && magnitude(ax[0].s) <= NEAR_UNIT && ax[0].n >= STRIDED_COPY_THREADS) {
        *done = true;
        return row_chunks(ax + 1, n - 1, ax[0].n, 1, ax[0].s, itemsize, K_ROWS + log2_of(itemsize),
                          l);
    }
    int ia = -1;
    for (int i = 1; i < n; i++)
        if (ax[i].s != 0 && magnitude(ax[i].s) <= NEAR_UNIT &&
            (ia < 0 || magnitude(ax[i].s) < magnitude(ax[ia].s)))
            ia = i;
    if (ia < 0)
        return STRIDED_OK;
    *done = true;
    return transpose(ax, n, ia, itemsize, dst, src, l);
}

/* The launch that runs plan p. The plan's axes of extent 1 are dropped; a
 * plan whose kind's property does not hold on what is left runs as a
 * gather (or, with a source close to contiguous, near_unit's rows or
 * tiles). */
static strided_status describe(const strided_copy_plan *p, uint64_t dst, uint64_t src, launch *l)
{
    axis ax[STRIDED_COPY_MANY_DIMS];
    int n = 0, ia = -1;

    memset(l, 0, offsetof(launch, ax));
    l->dst = dst;
    l->src = src;
    assert(p->ndim >= 0 && p->ndim <= STRIDED_MAX_NDIM && p->itemsize > 0);
    for (int k = p->ndim - 1; k >= 0; k--) {
        if (p->shape[k] == 1)
            continue;
        /* A plan of positive volume has at most 62 axes of extent >= 2. */
        assert(p->shape[k] > 1 && n < STRIDED_COPY_MANY_DIMS - 1);
        if (k == p->src_unit_axis)
            ia = n;
        ax[n++] = (axis){p->shape[k], p->dst_strides[k], p->src_strides[k]};
    }
    switch (p->kernel) {
    case STRIDED_COPY_CONTIGUOUS:
        if (n == 0)
            return contiguous(p->itemsize, dst, src, l);
        if (n == 1 && ax[0].d == 1 && ax[0].s == 1) {
            int64_t nbytes;
            if (strided__mul_overflow(ax[0].n, p->itemsize, &nbytes))
                return too_large();
            return contiguous(nbytes, dst, src, l);
        }
        break;
    case STRIDED_COPY_ROWS:
        if (n >= 1 && ax[0].d == 1 && ax[0].s == 1)
            return rows(ax, n, p->itemsize, dst, src, l);
        break;
    case STRIDED_COPY_TRANSPOSE:
        if (ia >= 1)
            return transpose(ax, n, ia, p->itemsize, dst, src, l);
        break;
    case STRIDED_COPY_BROADCAST:
        if (n >= 1 && ax[0].s == 0)
            return broadcast(ax, n, p->itemsize, dst, src, l);
        break;
    default: break;
    }
    bool done = false;
    strided_status status = near_unit(ax, n, p->itemsize, dst, src, l, &done);
    if (status != STRIDED_OK || done)
        return status;
    return gather(ax, n, p->itemsize, dst, src, l);
}

/* The least s with 2^s >= d. Assumes: d >= 1. */
static uint32_t ceil_log2(uint64_t d)
{
    assert(d >= 1);
    return d == 1 ? 0 : (uint32_t)(64 - __builtin_clzll(d - 1));
}

/* n / d by multiply-high (copy/kernels.h); d = 0: unused. */
static strided_copy_div32 div32(int64_t d)
{
    strided_copy_div32 v = {0, 0, 0};

    assert(d >= 0 && d <= INT32_MAX);
    if (d == 0)
        return v;
    const uint32_t s = ceil_log2((uint64_t)d);
    v.d = (uint32_t)d;
    v.s = s;
    v.m = (uint32_t)(((UINT64_C(1) << 32) * ((UINT64_C(1) << s) - (uint64_t)d)) / (uint64_t)d + 1);
    return v;
}

__extension__ typedef unsigned __int128 u128;

static strided_copy_div64 div64(int64_t d)
{
    strided_copy_div64 v = {0, 0, 0, 0};

    assert(d >= 0);
    if (d == 0)
        return v;
    const uint32_t s = ceil_log2((uint64_t)d);
    v.d = (uint64_t)d;
    v.s = s;
    v.m = (uint64_t)((((u128)1 << 64) * ((UINT64_C(1) << s) - (uint64_t)d)) / (u128)d + 1);
    return v;
}

/* Fill an argument struct from a launch. */
#define DEFINE_PACK(name, Args, divide, I, S, capacity)     \
    static void name(const launch *l, Args *a)              \
    {                                                       \
        const int axes = l->ndim + l->group_a + l->group_b; \
        assert(axes <= (capacity));                         \
        a->dst = l->dst;                                    \
        a->src = l->src;                                    \
        a->count = (I)l->count;                             \
        a->n_a = (I)l->n_a;                                 \
        a->n_b = (I)l->n_b;                                 \
        a->dst_a = (S)l->dst_a;                             \
        a->dst_b = (S)l->dst_b;                             \
        a->src_a = (S)l->src_a;                             \
        a->src_b = (S)l->src_b;                             \
        a->tiles_a = divide(l->tiles_a);                    \
        a->tiles_b = divide(l->tiles_b);                    \
        a->ndim = l->ndim;                                  \
        a->group_a = l->group_a;                            \
        a->group_b = l->group_b;                            \
        for (int k = 0; k < axes; k++) {                    \
            a->extent[k] = divide(l->ax[k].n);              \
            a->dst_stride[k] = (S)l->ax[k].d;               \
            a->src_stride[k] = (S)l->ax[k].s;               \
        }                                                   \
    }

DEFINE_PACK(pack32_8, strided_copy_args32_8, div32, uint32_t, int32_t, STRIDED_COPY_FEW_DIMS)
DEFINE_PACK(pack32_64, strided_copy_args32_64, div32, uint32_t, int32_t, STRIDED_COPY_MANY_DIMS)
DEFINE_PACK(pack64_8, strided_copy_args64_8, div64, uint64_t, int64_t, STRIDED_COPY_FEW_DIMS)
DEFINE_PACK(pack64_64, strided_copy_args64_64, div64, uint64_t, int64_t, STRIDED_COPY_MANY_DIMS)

#undef DEFINE_PACK

static void pack_args(const launch *l, args *a)
{
    switch (l->kind) {
    case ARGS_SPAN:
        a->span.dst = l->dst;
        a->span.src = l->src;
        a->span.nbytes = (uint64_t)l->count;
        break;
    case ARGS32_8: pack32_8(l, &a->a32_8); break;
    case ARGS32_64: pack32_64(l, &a->a32_64); break;
    case ARGS64_8: pack64_8(l, &a->a64_8); break;
    case ARGS64_64: pack64_64(l, &a->a64_64); break;
    }
}

/* Load the fatbin into the current context (device's primary context) and
 * look every kernel up. On failure nothing stays loaded. */
static strided_status load(const strided__driver *cu, int device, device_kernels *k)
{
    CUdevice dev;
    CUmodule module = NULL;
    int sms = 0;
    strided_status status;

    status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGet(&dev, device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(
            OP, cu->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuModuleLoadData(&module, strided__copy_fatbin));
    if (status != STRIDED_OK)
        return status;
    for (int i = 0; i < K_COUNT; i++) {
        status = STRIDED_CUDA_CHECK(OP,
                                    cu->cuModuleGetFunction(&k->fn[i], module, kernel_names[i]));
        if (status != STRIDED_OK) {
            (void)cu->cuModuleUnload(module);
            return status;
        }
    }
    k->module = module;
    k->sm_count = sms > 0 ? sms : 1;
    return STRIDED_OK;
}

/* The kernels of device, loaded on first use. Assumes: device's primary
 * context is current. */
static strided_status kernels_of(const strided__driver *cu, int device, const device_kernels **out)
{
    strided_status status = STRIDED_OK;

    assert(device >= 0);
    if (device >= MAX_DEVICES)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, OP,
                             "device %d: the CUDA kernels load on devices 0 "
                             "to %d only",
                             device, MAX_DEVICES - 1);
    if (!atomic_load_explicit(&ready[device], memory_order_acquire)) {
        pthread_mutex_lock(&load_lock);
        if (!atomic_load_explicit(&ready[device], memory_order_relaxed)) {
            status = load(cu, device, &devices[device]);
            if (status == STRIDED_OK)
                atomic_store_explicit(&ready[device], true, memory_order_release);
        }
        pthread_mutex_unlock(&load_lock);
    }
    if (status == STRIDED_OK)
        *out = &devices[device];
    return status;
}

static strided_status run(const strided__driver *cu, const device_kernels *k, const launch *l,
                          void *stream)
{
    args a;
    void *params[1] = {&a};

    if (l->kernel == K_MEMCPY)
        return STRIDED_CUDA_CHECK(OP, cu->cuMemcpyAsync((CUdeviceptr)l->dst, (CUdeviceptr)l->src,
                                                        (size_t)l->count, (CUstream)stream));
    assert(l->kernel >= 0 && l->kernel < K_COUNT && l->per_block > 0);
    pack_args(l, &a);
    unsigned int blocks = grid_of(l->kernel, ceil_div(l->work, l->per_block), k->sm_count);
    return STRIDED_CUDA_CHECK(OP, cu->cuLaunchKernel(k->fn[l->kernel], blocks, 1, 1,
                                                     l->tiles ? 32 : STRIDED_COPY_THREADS,
                                                     l->tiles ? STRIDED_COPY_THREADS / 32 : 1, 1, 0,
                                                     (CUstream)stream, params, NULL));
}

/* Whether the bit position bit from address base lies on a 32-bit word. */
static bool on_word(uint64_t base, int64_t bit)
{
    return ((int64_t)(base & 3) * 8 + (bit % 32 + 32) % 32) % 32 == 0;
}

/* The bit of its 16-byte slot at which every destination row of a starts,
 * when all start at the same one (every row stride a whole number of
 * slots); else 127, the most any row can be out, so that a row of bits
 * bits touches at most (row_phase + bits + 127) / 128 slots. */
static int64_t row_phase(const strided_copy_subbyte_args *a)
{
    int64_t bits;
    for (int k = 1; k < a->ndim; k++)
        if (a->extent[k] > 1 &&
            (strided__mul_overflow(a->dst_stride[k], a->dst_step, &bits) || bits % 128 != 0))
            return 127;
    const int64_t phase = (int64_t)(a->dst & 15) * 8 + (a->dst_bit % 128 + 128) % 128;
    return phase % 128;
}

/* Choose the device's faster forms of a sub-byte copy (kernels.h), set
 * their fields, and return the work items (a block's worth each): rows of
 * stride 1 on both sides by 16-byte destination slots (RUNS); packed 4-bit
 * transposes of at least a tile each way whose rows all start on 32-bit
 * words by word tiles (FP4_TILES); else the host's form as it is. */
static int64_t device_mode(strided_copy_subbyte_args *a)
{
    int64_t rows = 1, bits;
    for (int k = 1; k < a->ndim; k++)
        rows *= a->extent[k]; /* at most the plan's volume */
    if (a->dst_stride[0] == 1 && a->src_stride[0] == 1 &&
        !strided__mul_overflow(a->n0, a->dst_step, &bits) && bits <= INT64_MAX - 254) {
        const int64_t chunk = (int64_t)STRIDED_COPY_THREADS * STRIDED_COPY_SUBBYTE_RUN_UNROLL_OF(a);
        a->mode = STRIDED_COPY_SUBBYTE_RUNS;
        a->extent[0] = (row_phase(a) + bits + 127) / 128;
        a->chunks = a->extent[0] / chunk + (a->extent[0] % chunk != 0);
        a->count = rows * a->chunks; /* at most 2 * the volume */
        return a->count;
    }
    const int ka = a->tile_axis;
    bool fp4 = ka > 0 && a->width == 4 && a->dst_step == 4 && a->src_step == 4 &&
               a->extent[ka] >= STRIDED_COPY_FP4_TILE_A && a->n0 >= STRIDED_COPY_FP4_TILE_B &&
               on_word(a->dst, a->dst_bit) && on_word(a->src, a->src_bit) &&
               a->src_stride[0] % 8 == 0 && a->dst_stride[ka] % 8 == 0;
    for (int k = 1; fp4 && k < a->ndim; k++)
        fp4 = k == ka || (a->dst_stride[k] % 8 == 0 && a->src_stride[k] % 8 == 0);
    if (fp4) {
        const int64_t na = a->extent[ka];
        a->mode = STRIDED_COPY_SUBBYTE_FP4_TILES;
        a->tiles_a = na / STRIDED_COPY_FP4_TILE_A + (na % STRIDED_COPY_FP4_TILE_A != 0);
        a->tiles_b = a->n0 / STRIDED_COPY_FP4_TILE_B + (a->n0 % STRIDED_COPY_FP4_TILE_B != 0);
        a->count = rows / na * a->tiles_a * a->tiles_b; /* fewer than the volume */
    }
    return a->count;
}

/* Launch on device, in its primary context with its kernels loaded: the
 * launch l, or the sub-byte kernel with arguments sub and work chunks when
 * sub is not NULL. */
static strided_status launch_on(int device, const launch *l, strided_copy_subbyte_args *sub,
                                int64_t work, void *stream)
{
    const strided__driver *cu;
    const device_kernels *k = NULL;
    strided__context_scope scope;
    strided_status status = strided__cuda(OP, &cu);
    if (status != STRIDED_OK)
        return status;
    status = strided__context_enter(OP, cu, device, &scope);
    if (status != STRIDED_OK)
        return status;
    status = kernels_of(cu, device, &k);
    if (status == STRIDED_OK && sub == NULL)
        status = run(cu, k, l, stream);
    if (status == STRIDED_OK && sub != NULL) {
        /* A block a chunk (or tile). */
        void *params[1] = {sub};
        int kernel = K_SUBBYTE + sub->mode;
        status = STRIDED_CUDA_CHECK(
            OP, cu->cuLaunchKernel(k->fn[kernel], grid_of(kernel, work, k->sm_count), 1, 1,
                                   STRIDED_COPY_THREADS, 1, 1, 0, (CUstream)stream, params, NULL));
    }
    strided__context_leave(cu, &scope);
    return status;
}

strided_status strided__copy_device_run(const strided_copy_plan *p, uintptr_t dst, uintptr_t src,
                                        void *stream, int device)
{
    launch l;

    assert(p != NULL);
    if (p->volume == 0)
        return STRIDED_OK;
    strided_status status = describe(p, (uint64_t)dst, (uint64_t)src, &l);
    if (status != STRIDED_OK)
        return status;
    return launch_on(device, &l, NULL, 0, stream);
}

strided_status strided__copy_launch_describe(const strided_copy_plan *p, uintptr_t dst,
                                             uintptr_t src, const char **name, void *out,
                                             size_t size, size_t *bytes)
{
    static const size_t sizes[] = {
        [ARGS_SPAN] = sizeof(strided_copy_span),      [ARGS32_8] = sizeof(strided_copy_args32_8),
        [ARGS32_64] = sizeof(strided_copy_args32_64), [ARGS64_8] = sizeof(strided_copy_args64_8),
        [ARGS64_64] = sizeof(strided_copy_args64_64),
    };
    launch l;
    args a;

    assert(p != NULL && p->volume > 0);
    strided_status status = describe(p, (uint64_t)dst, (uint64_t)src, &l);
    if (status != STRIDED_OK)
        return status;
    *name = l.kernel == K_MEMCPY ? "" : kernel_names[l.kernel];
    pack_args(&l, &a);
    *bytes = sizes[l.kind];
    memcpy(out, &a, size < *bytes ? size : *bytes);
    return STRIDED_OK;
}

strided_status strided__copy_device_run_subbyte(const strided_copy_plan *p,
                                                const strided__subbyte_sides *sides, void *stream,
                                                int device)
{
    strided_copy_subbyte_args a;
    int64_t work = 0;

    assert(p != NULL && sides != NULL);
    if (p->volume == 0)
        return STRIDED_OK;
    strided_status status = strided__copy_subbyte_args(p, sides, &a, &work);
    if (status != STRIDED_OK)
        return status;
    work = device_mode(&a);
    return launch_on(device, NULL, &a, work, stream);
}

#endif

strided_status strided__copy_device_run_from(const strided_copy_plan *q, uintptr_t dst0,
                                             uintptr_t src0, void *stream, int device)
{
    /* Unsigned arithmetic: negative offsets wrap back. */
    uintptr_t isz = (uintptr_t)q->itemsize;
    return strided__copy_device_run(q, dst0 + (uintptr_t)q->dst_offset * isz,
                                    src0 + (uintptr_t)q->src_offset * isz, stream, device);
}

strided_status strided__copy_temp_alloc(const strided__copy_job *job, size_t size,
                                        strided__copy_temp *out)
{
    *out = (strided__copy_temp){0, size, NULL, job->stream};
    if (job->device_mr != NULL) {
        strided_status status = strided__buffer_alloc_temporary(job->device_mr, size, job->stream,
                                                                job->device, &out->buffer);
        if (status == STRIDED_OK)
            out->ptr = strided_buffer_memory_info(out->buffer).device_address;
        return status;
    }
    const strided__driver *cu;
    strided_status status = strided__cuda(OP, &cu);
    CUdevice dev = 0;
    CUmemoryPool pool = NULL;
    CUdeviceptr p = 0;
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGet(&dev, job->device));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuDeviceGetMemPool(&pool, dev));
    /* The driver refuses pool queries while the stream captures a graph
     * (and the capture fails): the threshold waits for a copy outside one.
     * It only saves time, so a copy does not fail for it. */
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(OP, cu->cuStreamIsCapturing((CUstream)job->stream, &capture));
    if (status == STRIDED_OK && capture == CU_STREAM_CAPTURE_STATUS_NONE)
        (void)strided__pool_keep_freed(OP, cu, pool);
    if (status == STRIDED_OK) {
        CUresult r = cu->cuMemAllocFromPoolAsync(&p, size, pool, (CUstream)job->stream);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            status = strided__fail(STRIDED_ERR_OUT_OF_MEMORY, OP,
                                   "cannot allocate a temporary of %zu bytes on device %d: "
                                   "cuMemAllocFromPoolAsync failed: CUDA_ERROR_OUT_OF_MEMORY",
                                   size, job->device);
            strided__set_last_cuda_error(r);
        } else {
            status = strided__cuda_check(OP, "cuMemAllocFromPoolAsync", r);
        }
    }
    if (status == STRIDED_OK)
        out->ptr = (uintptr_t)p;
    return status;
}

void strided__copy_temp_free(strided__copy_temp *t)
{
    if (t->buffer != NULL) {
        strided_buffer_set_deallocation_stream(t->buffer, t->stream);
        strided_buffer_release(t->buffer);
    } else if (t->ptr != 0) {
        const strided__driver *cu = strided__cuda_quiet();
        if (cu != NULL)
            (void)cu->cuMemFreeAsync((CUdeviceptr)t->ptr, (CUstream)t->stream);
    }
    t->ptr = 0;
    t->buffer = NULL;
}

strided_status strided__copy_subbyte_args(const strided_copy_plan *p,
                                          const strided__subbyte_sides *sd,
                                          strided_copy_subbyte_args *a, int64_t *work)
{
    memset(a, 0, sizeof *a);
    a->dst = (uint64_t)sd->dst;
    a->src = (uint64_t)sd->src;
    a->width = sd->width;
    a->dst_width = sd->dst_padded ? 8 : sd->width;
    a->dst_step = sd->dst_step;
    a->src_step = sd->src_step;
    if (strided__mul_overflow(p->dst_offset, sd->dst_step, &a->dst_bit) ||
        strided__mul_overflow(p->src_offset, sd->src_step, &a->src_bit))
        return strided__fail(STRIDED_ERR_OVERFLOW, OP,
                             "the bit positions of the copy's elements overflow int64");
    int n = 0;
    for (int k = p->ndim - 1; k >= 0; k--) {
        if (p->shape[k] == 1)
            continue;
        a->extent[n] = p->shape[k];
        a->dst_stride[n] = p->dst_strides[k];
        a->src_stride[n] = p->src_strides[k];
        n++;
    }
    if (n == 0) {
        a->extent[0] = 1;
        n = 1;
    }
    a->ndim = n;
    a->n0 = a->extent[0];
    /* A packed destination run along axis 0: groups that fill whole
     * bytes, so that no two work items share a byte. */
    a->group = 1;
    if (!sd->dst_padded && sd->dst_step % 8 != 0 && a->dst_stride[0] == 1)
        a->group = strided_layout_packed_group(sd->dst_step);
    a->extent[0] = a->n0 / a->group + (a->n0 % a->group != 0);
    const int64_t chunk = (int64_t)STRIDED_COPY_THREADS * STRIDED_COPY_SUBBYTE_UNROLL;
    a->chunks = a->extent[0] / chunk + (a->extent[0] % chunk != 0);
    int64_t rows = 1;
    for (int k = 1; k < n; k++)
        rows *= a->extent[k];    /* at most the plan's volume */
    a->count = rows * a->chunks; /* at most the work items */
    /* A transpose: the destination runs along axis 0, the source along
     * another axis. Tiles of both, through shared memory. */
    a->tile_axis = -1;
    for (int k = 1; k < n && a->dst_stride[0] == 1 && a->n0 > 1; k++)
        if (a->src_stride[k] == 1 && a->tile_axis < 0)
            a->tile_axis = k;
    a->mode = a->tile_axis > 0 ? STRIDED_COPY_SUBBYTE_TILES : STRIDED_COPY_SUBBYTE_ITEMS;
    if (a->tile_axis > 0) {
        const int64_t tile = STRIDED_COPY_SUBBYTE_TILE, na = a->extent[a->tile_axis];
        a->tiles_a = na / tile + (na % tile != 0);
        a->tiles_b = a->n0 / tile + (a->n0 % tile != 0);
        /* tiles_a * tiles_b * the other rows: at most 2 * the volume. */
        a->count = rows / na * a->tiles_a * a->tiles_b;
    }
    *work = a->count;
    return STRIDED_OK;
}
