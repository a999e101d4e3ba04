/*
 * copy_cpu.c: runs a copy plan on the host.
 *
 * A plan arrives normalised (copy_plan.c): strides count elements, the
 * destination's strides are >= 0 and non-increasing, and the kernel kind
 * says what the innermost axes look like. Each kind becomes a loop nest plus
 * a body:
 *
 *   - CONTIGUOUS: one memcpy, cut into one piece per thread.
 *   - ROWS, BROADCAST, GATHER: the rows of the last axis, each copied as
 *     one run (memcpy), filled with one source element, or moved element by
 *     element. The nest runs over the other axes and, for long rows, over
 *     chunks of a row, so that one row can be shared by threads.
 *   - TRANSPOSE: tiles over the destination's last axis (stride 1 there)
 *     and the source's unit-stride axis, so that both sides of a tile are
 *     read and written a cache line at a time, through a buffer in L1 when
 *     the source's rows fill cache lines; the nest runs over the other axes,
 *     the tile rows, and groups of tiles along a tile row.
 *
 * Threads (OpenMP, when the library is built with it) split the nest's
 * flattened index range into one contiguous piece each; a piece starts with
 * one unravel and then walks the nest like an odometer. Bodies are
 * specialised on the itemsize (1, 2, 4, 8, 16 bytes), and move elements
 * with fixed-size memcpy calls, which compilers turn into plain loads and
 * stores that need no alignment (elements of a view need not be aligned to
 * their size). Other itemsizes take the same code with a run-time size.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "copy_internal.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define ALWAYS_INLINE inline
#define PREFETCH(p) ((void)(p))
#endif

/* Vectorise the loop that follows: its iterations write distinct elements
 * and read memory they do not write. GCC at -O2 vectorises only loops that
 * need no remainder, so without this the strided loops stay scalar (a
 * reversed row, [:, ::-1], runs 40% faster with it). */
#ifdef _OPENMP
#define SIMD _Pragma("omp simd")
#else
#define SIMD
#endif

/* With nthreads 0, each thread gets at least this many bytes to write, so
 * that copies under 1 MiB run on one thread: below that, waking a team
 * costs about as much as the copy. */
#define THREAD_MIN_BYTES (512 * 1024)

/* The work of one unit of the nest: the longest piece of a row that one
 * body call copies, and about the size of one group of transpose tiles. */
#define UNIT_BYTES (64 * 1024)

/* The loop axes around the innermost work: the plan's outer axes plus up to
 * two axes of the kernel's own (row chunks; tile rows and tile groups). */
#define NEST_MAX (STRIDED_MAX_NDIM + 2)

enum body_kind { BODY_ROWS, BODY_BROADCAST, BODY_GATHER, BODY_TRANSPOSE };

/* A loop nest over units of work, outermost axis first; steps in bytes. */
struct nest {
    int n;
    int64_t count[NEST_MAX];
    int64_t dstep[NEST_MAX];
    int64_t sstep[NEST_MAX];
    int64_t total; /* the product of the counts: the number of units */
};

/* Everything a body needs; built once per call, read by every thread. */
struct job {
    struct nest nest;
    enum body_kind kind;
    char *dst;
    const char *src;
    size_t isz;
    /* Rows: the row's length, its steps in bytes, the chunk length in
     * elements, and whether the innermost nest axis runs over chunks of one
     * row (otherwise it runs over whole rows). */
    int64_t n;
    int64_t dn;
    int64_t sn;
    int64_t chunk;
    bool chunked;
    /* Transpose: the extents along the source's unit axis (u) and the
     * destination's last axis (a), the destination step along u and the
     * source step along a in bytes, the tile's extents, and the tiles per
     * group. */
    int64_t mu;
    int64_t ma;
    int64_t du;
    int64_t sa;
    int64_t tu;
    int64_t ta;
    int64_t group;
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The itemsizes with their own code; any other size takes the generic path
 * (the same code with a run-time size). F is called with the itemsize as its
 * last argument. */
#define BY_ITEMSIZE(isz, F, ...)                                               \
    do {                                                                       \
        switch (isz) {                                                         \
        case 1: F(__VA_ARGS__, 1); break;                                      \
        case 2: F(__VA_ARGS__, 2); break;                                      \
        case 4: F(__VA_ARGS__, 4); break;                                      \
        case 8: F(__VA_ARGS__, 8); break;                                      \
        case 16: F(__VA_ARGS__, 16); break;                                    \
        default: F(__VA_ARGS__, (isz)); break;                                 \
        }                                                                      \
    } while (0)

/* Whether isz is one of the itemsizes with their own code (BY_ITEMSIZE):
 * there, memcpy of isz bytes is one load and one store; for other sizes it
 * is a call. */
static ALWAYS_INLINE bool fixed_size(size_t isz)
{
    return isz == 1 || isz == 2 || isz == 4 || isz == 8 || isz == 16;
}

/* One contiguous run of len elements. Short runs of fixed-size elements
 * move element by element: for a handful of bytes that beats a call to
 * memcpy. */
static ALWAYS_INLINE void row_copy(char *d, const char *s, int64_t len, size_t isz)
{
    if (len * (int64_t)isz < 64 && fixed_size(isz))
        for (int64_t k = 0; k < len; k++)
            memcpy(d + k * (int64_t)isz, s + k * (int64_t)isz, isz);
    else
        memcpy(d, s, (size_t)len * isz);
}

/* Fill a contiguous run of len elements with the element at s. */
static ALWAYS_INLINE void row_fill(char *d, const char *s, int64_t len, size_t isz)
{
    if (isz == 1) {
        memset(d, *(const unsigned char *)s, (size_t)len);
    } else if (fixed_size(isz)) {
        unsigned char v[16];
        memcpy(v, s, isz);
        SIMD
        for (int64_t k = 0; k < len; k++)
            memcpy(d + k * (int64_t)isz, v, isz);
    } else {
        /* Copy the first element, then double what is written. */
        int64_t done = 1;
        memcpy(d, s, isz);
        while (done < len) {
            int64_t c = min64(done, len - done);
            memcpy(d + done * (int64_t)isz, d, (size_t)c * isz);
            done += c;
        }
    }
}

/* Move len elements, dn and sn bytes apart. */
static ALWAYS_INLINE void row_gather(char *d, const char *s, int64_t len, int64_t dn,
                                     int64_t sn, size_t isz)
{
    const int64_t e = (int64_t)isz;
    if (dn == e) {
        if (sn == e)
            row_copy(d, s, len, isz);
        else if (sn == 0)
            row_fill(d, s, len, isz);
        else if (sn == -e)
            SIMD
            for (int64_t k = 0; k < len; k++)
                memcpy(d + k * e, s - k * e, isz);
        else
            SIMD
            for (int64_t k = 0; k < len; k++)
                memcpy(d + k * e, s + k * sn, isz);
    } else {
        for (int64_t k = 0; k < len; k++)
            memcpy(d + k * dn, s + k * sn, isz);
    }
}

/* The body of the row kernels: batch consecutive units of the innermost
 * nest axis, starting at index idx[last] there. A unit is a chunk of one
 * row (consecutive chunks form one piece of the row) or a whole row. */
static ALWAYS_INLINE void rows_batch(const struct job *j, char *d, const char *s,
                                     const int64_t *idx, int64_t batch,
                                     enum body_kind kind, size_t isz)
{
    const int last = j->nest.n - 1;
    int64_t len = j->n, count = batch;
    int64_t ds = j->nest.dstep[last], ss = j->nest.sstep[last];

    if (j->chunked) {
        int64_t e0 = idx[last] * j->chunk;
        len = min64(j->n, (idx[last] + batch) * j->chunk) - e0;
        count = 1;
    }
    for (int64_t r = 0; r < count; r++) {
        char *dr = d + r * ds;
        const char *sr = s + r * ss;
        if (kind == BODY_ROWS)
            row_copy(dr, sr, len, isz);
        else if (kind == BODY_BROADCAST)
            row_fill(dr, sr, len, isz);
        else
            row_gather(dr, sr, len, j->dn, j->sn, isz);
    }
}

/* One tile, moved directly: eu elements along the source's unit axis by ea
 * along the destination's. The inner loop runs along the longer side, so
 * that a thin tile (AoS to SoA: eu = 3) still has a long inner loop. */
static ALWAYS_INLINE void tile_direct(char *d, const char *s, int64_t eu, int64_t ea,
                                      int64_t du, int64_t sa, size_t isz)
{
    const int64_t e = (int64_t)isz;
    if (ea >= eu) {
        for (int64_t i = 0; i < eu; i++) {
            char *dr = d + i * du;
            const char *sr = s + i * e;
            SIMD
            for (int64_t k = 0; k < ea; k++)
                memcpy(dr + k * e, sr + k * sa, isz);
        }
    } else {
        for (int64_t k = 0; k < ea; k++) {
            char *dc = d + k * e;
            const char *sc = s + k * sa;
            for (int64_t i = 0; i < eu; i++)
                memcpy(dc + i * du, sc + i * e, isz);
        }
    }
}

/* One tile through a buffer: the ea source rows of eu elements are copied
 * whole into buf, then each destination row is written from buf. Moved
 * directly, a tile touches ea source lines and eu destination lines at
 * once; when a stride is a multiple of 4 KiB (an 8192^2 fp32 transpose)
 * those lines all fall into one cache set and evict each other before
 * their other elements are used. Through the buffer every source and
 * destination line is read or written in one pass, and the transposition
 * happens within buf, which is contiguous. The lines of the next tile along
 * the destination's axis are prefetched meanwhile, on both sides: the
 * hardware prefetchers do not follow 64 short runs far apart (on an 8192^2
 * fp32 transpose this took one thread from 3 to 4.5 GB/s). Prefetches never
 * fault, so they need no bounds. */
static ALWAYS_INLINE void tile_staged(char *d, const char *s, int64_t eu, int64_t ea,
                                      int64_t du, int64_t sa, size_t isz, unsigned char *buf)
{
    const int64_t e = (int64_t)isz, row = eu * e;
    for (int64_t k = 0; k < ea; k++) {
        uintptr_t next = (uintptr_t)s + (uintptr_t)((k + ea) * sa);
        for (int64_t b = 0; b < row; b += 64)
            PREFETCH((const void *)(next + (uintptr_t)b));
        memcpy(buf + k * row, s + k * sa, (size_t)row);
    }
    for (int64_t i = 0; i < eu; i++) {
        char *dr = d + i * du;
        uintptr_t next = (uintptr_t)dr + (uintptr_t)(ea * e);
        for (int64_t b = 0; b < ea * e; b += 64)
            PREFETCH((const void *)(next + (uintptr_t)b));
        SIMD
        for (int64_t k = 0; k < ea; k++)
            memcpy(dr + k * e, buf + k * row + i * e, isz);
    }
}

/* The most bytes one tile holds: edge^2 * itemsize (see tile_edge) for
 * itemsizes up to STAGE_MAX_ITEMSIZE; larger elements are moved directly. */
#define STAGE_BYTES (16 * 1024)
#define STAGE_MAX_ITEMSIZE 64

/* The body of the transpose kernel: batch consecutive tile groups of one
 * tile row, starting at group idx[last]; the tile row is idx[last - 1].
 * Tiles whose source rows are shorter than a cache line gain nothing from
 * the buffer (their lines are shared by many rows anyway) and are moved
 * directly. */
static ALWAYS_INLINE void transpose_batch(const struct job *j, char *d, const char *s,
                                          const int64_t *idx, int64_t batch, size_t isz)
{
    const int last = j->nest.n - 1;
    const int64_t span = j->group * j->ta, e = (int64_t)isz;
    const int64_t eu = min64(j->tu, j->mu - idx[last - 1] * j->tu);
    const bool staged = isz <= STAGE_MAX_ITEMSIZE && eu * e >= 64;
    _Alignas(64) unsigned char buf[STAGE_BYTES];

    assert(!staged || j->tu * j->ta * e <= STAGE_BYTES);
    for (int64_t g = 0; g < batch; g++) {
        int64_t a0 = (idx[last] + g) * span;
        int64_t a1 = min64(j->ma, a0 + span);
        char *dg = d + g * j->nest.dstep[last];
        const char *sg = s + g * j->nest.sstep[last];
        for (int64_t a = a0; a < a1; a += j->ta) {
            int64_t ea = min64(j->ta, a1 - a);
            if (staged)
                tile_staged(dg + (a - a0) * e, sg + (a - a0) * j->sa, eu, ea, j->du, j->sa,
                            isz, buf);
            else
                tile_direct(dg + (a - a0) * e, sg + (a - a0) * j->sa, eu, ea, j->du, j->sa,
                            isz);
        }
    }
}

static void body(const struct job *j, char *d, const char *s, const int64_t *idx,
                 int64_t batch)
{
    switch (j->kind) {
    case BODY_ROWS:
        BY_ITEMSIZE(j->isz, rows_batch, j, d, s, idx, batch, BODY_ROWS);
        break;
    case BODY_BROADCAST:
        BY_ITEMSIZE(j->isz, rows_batch, j, d, s, idx, batch, BODY_BROADCAST);
        break;
    case BODY_GATHER:
        BY_ITEMSIZE(j->isz, rows_batch, j, d, s, idx, batch, BODY_GATHER);
        break;
    case BODY_TRANSPOSE:
        BY_ITEMSIZE(j->isz, transpose_batch, j, d, s, idx, batch);
        break;
    }
}

/* Run units [l0, l1) of the nest: unravel l0 once, then hand the body
 * whole runs of the innermost axis and carry into the outer axes. Offsets
 * are kept as integers, so that no pointer is formed outside the
 * elements. */
static void run_range(const struct job *j, int64_t l0, int64_t l1)
{
    const struct nest *nt = &j->nest;
    const int last = nt->n - 1;
    int64_t idx[NEST_MAX];
    int64_t doff = 0, soff = 0, rem = l0;

    for (int k = last; k >= 0; k--) {
        idx[k] = rem % nt->count[k];
        rem /= nt->count[k];
        doff += idx[k] * nt->dstep[k];
        soff += idx[k] * nt->sstep[k];
    }
    for (int64_t l = l0; l < l1;) {
        int64_t batch = min64(nt->count[last] - idx[last], l1 - l);
        body(j, j->dst + doff, j->src + soff, idx, batch);
        l += batch;
        if (l >= l1)
            break;
        /* The innermost axis is done: back to its start, carry outward. */
        doff -= idx[last] * nt->dstep[last];
        soff -= idx[last] * nt->sstep[last];
        idx[last] = 0;
        for (int k = last - 1; k >= 0; k--) {
            if (++idx[k] < nt->count[k]) {
                doff += nt->dstep[k];
                soff += nt->sstep[k];
                break;
            }
            doff -= (nt->count[k] - 1) * nt->dstep[k];
            soff -= (nt->count[k] - 1) * nt->sstep[k];
            idx[k] = 0;
        }
    }
}

/* How many threads a copy that writes bytes bytes in units pieces gets:
 * nthreads 0 takes up to omp_get_max_threads(), one per THREAD_MIN_BYTES
 * (so one below 1 MiB); nthreads n takes n. Never more than the pieces. */
static int thread_count(int64_t bytes, int64_t units, int nthreads)
{
#ifdef _OPENMP
    int64_t t = nthreads;
    if (nthreads == 0)
        t = min64(omp_get_max_threads(), bytes / THREAD_MIN_BYTES);
    return (int)max64(1, min64(t, units));
#else
    (void)bytes;
    (void)units;
    (void)nthreads;
    return 1;
#endif
}

/* The first unit of piece i of n, for total units split as evenly as they
 * go. */
static int64_t piece_start(int64_t total, int n, int i)
{
    int64_t q = total / n, r = total % n;
    return i * q + min64(i, r);
}

static void run_nest(const struct job *j, int64_t bytes, int nthreads)
{
    int t = thread_count(bytes, j->nest.total, nthreads);
    if (t == 1) {
        run_range(j, 0, j->nest.total);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(t) schedule(static, 1)
#endif
    for (int i = 0; i < t; i++)
        run_range(j, piece_start(j->nest.total, t, i), piece_start(j->nest.total, t, i + 1));
}

static void nest_push(struct nest *nt, int64_t count, int64_t dstep, int64_t sstep)
{
    assert(nt->n < NEST_MAX);
    nt->count[nt->n] = count;
    nt->dstep[nt->n] = dstep;
    nt->sstep[nt->n] = sstep;
    nt->total *= count;
    nt->n++;
}

/* Push the plan's axes other than skip1 and skip2 (-1: none) that have
 * more than one element. */
static void nest_push_outer(struct nest *nt, const strided_copy_plan *p, int skip1,
                            int skip2)
{
    const int64_t e = p->itemsize;
    for (int k = 0; k < p->ndim; k++)
        if (k != skip1 && k != skip2 && p->shape[k] != 1)
            nest_push(nt, p->shape[k], p->dst_strides[k] * e, p->src_strides[k] * e);
}

/* Assumes: ndim >= 1, volume > 0. */
static void run_rows(const strided_copy_plan *p, struct job *j, int nthreads)
{
    const int last = p->ndim - 1;
    const int64_t e = p->itemsize;

    j->n = p->shape[last];
    j->dn = p->dst_strides[last] * e;
    j->sn = p->src_strides[last] * e;
    j->chunk = min64(j->n, max64(1, UNIT_BYTES / e));
    nest_push_outer(&j->nest, p, last, -1);
    /* Long rows are cut into chunks (so that threads can share a row); a
     * nest without axes gets the chunk axis too, for the body's sake. */
    j->chunked = j->chunk < j->n || j->nest.n == 0;
    if (j->chunked)
        nest_push(&j->nest, ceil_div(j->n, j->chunk), j->chunk * j->dn, j->chunk * j->sn);
    run_nest(j, p->volume * e, nthreads);
}

/* The tile edge in elements for an itemsize: rows of at least 256 bytes
 * where possible, 64 elements at most, 8 at least. */
static int64_t tile_edge(int64_t isz) { return max64(8, min64(64, 256 / isz)); }

/* Assumes: ndim >= 2, volume > 0, the last axis has destination stride 1
 * and the source unit axis u is another axis with source stride 1. */
static void run_transpose(const strided_copy_plan *p, struct job *j, int nthreads)
{
    const int a = p->ndim - 1, u = p->src_unit_axis;
    const int64_t e = p->itemsize, edge = tile_edge(e);

    j->mu = p->shape[u];
    j->ma = p->shape[a];
    j->du = p->dst_strides[u] * e;
    j->sa = p->src_strides[a] * e;
    /* A side shorter than a tile edge is taken whole, and the other side
     * grows so that a tile keeps about edge^2 elements. */
    j->tu = j->ma < edge ? min64(j->mu, edge * edge / j->ma) : min64(j->mu, edge);
    j->ta = j->mu < edge ? min64(j->ma, edge * edge / j->mu) : min64(j->ma, edge);
    j->group = max64(1, UNIT_BYTES / (j->tu * j->ta * e));
    int64_t groups = ceil_div(ceil_div(j->ma, j->ta), j->group);

    nest_push_outer(&j->nest, p, u, a);
    nest_push(&j->nest, ceil_div(j->mu, j->tu), j->tu * j->du, j->tu * e);
    nest_push(&j->nest, groups, j->group * j->ta * e, j->group * j->ta * j->sa);
    run_nest(j, p->volume * e, nthreads);
}

static void run_contiguous(char *dst, const char *src, int64_t bytes, int nthreads)
{
    /* Pieces of whole cache lines, at least one UNIT_BYTES each. */
    int t = thread_count(bytes, ceil_div(bytes, UNIT_BYTES), nthreads);
    if (t == 1) {
        memcpy(dst, src, (size_t)bytes);
        return;
    }
    int64_t lines = ceil_div(bytes, 64);
#ifdef _OPENMP
#pragma omp parallel for num_threads(t) schedule(static, 1)
#endif
    for (int i = 0; i < t; i++) {
        int64_t b0 = piece_start(lines, t, i) * 64;
        int64_t b1 = min64(bytes, piece_start(lines, t, i + 1) * 64);
        memcpy(dst + b0, src + b0, (size_t)(b1 - b0));
    }
}

#ifndef NDEBUG
/* Whether the plan's shape holds volume elements, and its kind's
 * conditions hold; for asserts. */
static int plan_is_sound(const strided_copy_plan *p)
{
    int64_t v = 1;
    const int last = p->ndim - 1;
    if (p->ndim < 0 || p->ndim > STRIDED_MAX_NDIM || p->itemsize <= 0)
        return 0;
    for (int k = 0; k < p->ndim; k++)
        v *= p->shape[k];
    /* ndim 0 stands for one element or none. */
    if (p->ndim == 0 ? p->volume != 0 && p->volume != 1 : v != p->volume)
        return 0;
    if (p->ndim == 0 || p->volume == 0)
        return 1;
    switch (p->kernel) {
    case STRIDED_COPY_CONTIGUOUS:
        return p->ndim == 1 && p->dst_strides[0] == 1 && p->src_strides[0] == 1;
    case STRIDED_COPY_ROWS:
        return p->dst_strides[last] == 1 && p->src_strides[last] == 1;
    case STRIDED_COPY_TRANSPOSE:
        return p->dst_strides[last] == 1 && p->src_unit_axis >= 0 &&
               p->src_unit_axis < last && p->src_strides[p->src_unit_axis] == 1;
    case STRIDED_COPY_BROADCAST:
        return p->dst_strides[last] == 1 && p->src_strides[last] == 0;
    case STRIDED_COPY_GATHER:
        return 1;
    default:
        return 0;
    }
}
#endif

void strided__copy_host_run(const strided_copy_plan *p, char *dst, const char *src,
                            int nthreads)
{
    struct job j;

    assert(p != NULL && nthreads >= 0);
    assert(plan_is_sound(p));
    if (p->kernel == STRIDED_COPY_NOTHING || p->volume == 0)
        return;
    if (p->ndim == 0) {
        memcpy(dst, src, (size_t)p->itemsize);
        return;
    }
    if (p->kernel == STRIDED_COPY_CONTIGUOUS) {
        run_contiguous(dst, src, p->volume * p->itemsize, nthreads);
        return;
    }
    j.nest.n = 0;
    j.nest.total = 1;
    j.dst = dst;
    j.src = src;
    j.isz = (size_t)p->itemsize;
    switch (p->kernel) {
    case STRIDED_COPY_ROWS:
        j.kind = BODY_ROWS;
        run_rows(p, &j, nthreads);
        break;
    case STRIDED_COPY_BROADCAST:
        j.kind = BODY_BROADCAST;
        run_rows(p, &j, nthreads);
        break;
    case STRIDED_COPY_TRANSPOSE:
        j.kind = BODY_TRANSPOSE;
        run_transpose(p, &j, nthreads);
        break;
    default:
        j.kind = BODY_GATHER;
        run_rows(p, &j, nthreads);
        break;
    }
}
