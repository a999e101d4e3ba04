/*
 * copy/host.c: runs a copy plan on the host.
 *
 * A plan arrives normalised (copy/plan.c): strides count elements, the
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
 *     the tile rows, and groups of tiles along a tile row. A batch of small
 *     planes (a (0,2,1) permutation) is one tile per plane, or a few.
 *
 * Threads (OpenMP, when the library is built with it) split the nest's
 * flattened index range into one contiguous piece each, outermost axes
 * first; a piece starts with one unravel and then walks the nest like an
 * odometer. Bodies are specialised on the itemsize (1, 2, 4, 8, 16 bytes),
 * and move elements with fixed-size memcpy calls, which compilers turn into
 * plain loads and stores that need no alignment (elements of a view need
 * not be aligned to their size). Other itemsizes take the same code with a
 * run-time size.
 *
 * Where the compiler has vector extensions (GCC, Clang) and the target has
 * 16-byte vector registers (x86-64, AArch64), the inner loops that matter
 * most move 16 bytes at a time for elements of 1, 2, 4 and 8 bytes:
 * transposes in square blocks of 16 / itemsize rows held in registers,
 * gathers with a source stride of 2, 3 or 4 elements, and reversed rows.
 * Elsewhere the same loops run element by element.
 *
 * Streaming copies (strided__copy_host_stream) fill memory that a DMA
 * engine reads next, the pinned staging buffers of host <-> device copies:
 * with plain stores the lines stay dirty in the CPU's caches and the DMA
 * that reads them runs at half speed (measured on an H200 machine with a
 * 300 MB last-level cache: staging pieces of 1-4 MiB crossed at 23-25
 * GB/s against 53 for the DMA alone). Non-temporal stores (SSE2's movntdq,
 * on x86-64) write the lines to memory past the caches; elsewhere it is a
 * plain copy.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "copy/host.h"
#include "copy/testing.h"

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define PREFETCH(p) __builtin_prefetch(p)
#define PREFETCH_WRITE(p) __builtin_prefetch((p), 1)
#else
#define ALWAYS_INLINE inline
#define PREFETCH(p) ((void)(p))
#define PREFETCH_WRITE(p) ((void)(p))
#endif

/* How far ahead a transpose tile prefetches, in rows of the tile (source
 * rows as they are staged, destination rows as they are written). A whole
 * tile ahead (64 rows) is too far: when the rows' stride is a multiple of
 * 4 KiB, the prefetched lines share a few cache sets and are evicted
 * before they are used. On one thread, 8 rows ahead took the 8192^2 and
 * 400^3 fp32 transposes of bench_copy_cpu (C1, C2) 5-13% above
 * prefetching the next tile. */
#define PREFETCH_ROWS 8

/* Vectorise the loop that follows: its iterations write distinct elements
 * and read memory they do not write. GCC at -O2 vectorises only loops that
 * need no remainder, so without this the strided loops stay scalar. It is
 * a hint: Clang warns where it cannot follow it (elements of a run-time
 * size), which is expected here. */
#ifdef _OPENMP
#define SIMD _Pragma("omp simd")
#if defined(__clang__) && defined(__has_warning)
#if __has_warning("-Wpass-failed")
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
#endif
#else
#define SIMD
#endif

/* 16-byte vectors of GCC's vector extensions (Clang has them too). Loads
 * and stores go through memcpy, so they need no alignment; lanes move with
 * fixed shuffles (__builtin_shuffle in GCC, __builtin_shufflevector in
 * Clang) chosen to be one or two instructions on SSE2 and NEON. */
#if (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__SSE2__) || defined(__ARM_NEON) || defined(__aarch64__))
#define HAVE_VECTORS 1
typedef uint8_t vec_u8 __attribute__((vector_size(16)));
typedef uint16_t vec_u16 __attribute__((vector_size(16)));
typedef uint32_t vec_u32 __attribute__((vector_size(16)));
typedef uint64_t vec_u64 __attribute__((vector_size(16)));
#if defined(__clang__)
#define SHUFFLE(T, a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#define UNROLL _Pragma("unroll")
#else
#define SHUFFLE(T, a, b, ...) __builtin_shuffle((a), (b), (T){__VA_ARGS__})
#define UNROLL _Pragma("GCC unroll 16")
#endif
#else
#define HAVE_VECTORS 0
#endif

/* With nthreads 0, each thread gets at least this many bytes to write, so
 * that copies under 1 MiB run on one thread: below that, waking a team
 * costs about as much as the copy. */
#define THREAD_MIN_BYTES (512 * 1024)

/* Each thread of a streaming copy gets at least this many bytes: pieces
 * of a staging pipeline are a few MiB, and spreading 2 MiB over 16 threads
 * crossed faster than over 4 (measured as above). */
#define STREAM_THREAD_MIN_BYTES (128 * 1024)

/* The work of one unit of the nest: the longest piece of a row that one
 * body call copies, and about the size of one group of transpose tiles. */
#define UNIT_BYTES (64 * 1024)

/* The loop axes around the innermost work: the plan's outer axes plus up to
 * two axes of the kernel's own (row chunks; tile rows and tile groups). */
#define NEST_MAX (STRIDED_MAX_NDIM + 2)

enum body_kind { BODY_ROWS, BODY_BROADCAST, BODY_GATHER, BODY_TRANSPOSE, BODY_PLANES };

/* The specialised loops, counted so that tests can see which ran: a bit
 * each in the masks the bodies return, added up once per piece of work. */
enum path {
    PATH_TRANSPOSE_VECTOR, /* square blocks transposed in registers */
    PATH_REVERSE_VECTOR,   /* a row read backwards (source stride -1) */
    PATH_STRIDE2_VECTOR,   /* a row gathered with source stride 2 */
    PATH_STRIDE3_VECTOR,   /* ... 3 */
    PATH_STRIDE4_VECTOR,   /* ... 4 */
    PATH_PLANES,           /* whole planes of a transpose, in batches */
    PATH_COUNT
};
#define PATH_BIT(p) (1u << (p))

static const char *const path_names[PATH_COUNT] = {"transpose_vector", "reverse_vector",
                                                   "stride2_vector",   "stride3_vector",
                                                   "stride4_vector",   "planes"};

/* How many pieces of work (one thread's share of one copy) used each path
 * since the last reset. */
static _Atomic int64_t path_runs[PATH_COUNT];

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

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}
static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The itemsizes with their own code; any other size takes the generic path
 * (the same code with a run-time size). F is called with the itemsize as its
 * last argument. */
#define BY_ITEMSIZE(isz, F, ...)               \
    do {                                       \
        switch (isz) {                         \
        case 1: F(__VA_ARGS__, 1); break;      \
        case 2: F(__VA_ARGS__, 2); break;      \
        case 4: F(__VA_ARGS__, 4); break;      \
        case 8: F(__VA_ARGS__, 8); break;      \
        case 16: F(__VA_ARGS__, 16); break;    \
        default: F(__VA_ARGS__, (isz)); break; \
        }                                      \
    } while (0)

/* Whether isz is one of the itemsizes with their own code (BY_ITEMSIZE):
 * there, memcpy of isz bytes is one load and one store; for other sizes it
 * is a call. */
static ALWAYS_INLINE bool fixed_size(size_t isz)
{
    return isz == 1 || isz == 2 || isz == 4 || isz == 8 || isz == 16;
}

/* Whether elements of isz bytes take the vector loops: several to a vector
 * (16 / isz lanes). */
static ALWAYS_INLINE bool vector_size_ok(size_t isz)
{
    return HAVE_VECTORS && (isz == 1 || isz == 2 || isz == 4 || isz == 8);
}

#if HAVE_VECTORS

/* A square block of K = 16 / itemsize rows of K elements, transposed in
 * registers: row i of the block (K elements at s + i * sstep) becomes
 * column i of the result (element i of the K rows at d, dstep apart).
 * log2(K) rounds of interleaves: each round pairs row i with row i + K/2
 * and puts their interleaved low halves at 2i and high halves at 2i + 1;
 * after the last round row r holds element r of every input row. */
#define DEFINE_BLOCK(name, T, K, LO, HI)                                                 \
    static ALWAYS_INLINE void name(char *d, int64_t dstep, const char *s, int64_t sstep) \
    {                                                                                    \
        T r[K], t[K];                                                                    \
        UNROLL                                                                           \
        for (int i = 0; i < K; i++)                                                      \
            memcpy(&r[i], s + i * sstep, 16);                                            \
        UNROLL                                                                           \
        for (int round = 1; round < K; round *= 2) {                                     \
            UNROLL                                                                       \
            for (int i = 0; i < K / 2; i++) {                                            \
                t[2 * i] = LO(r[i], r[i + K / 2]);                                       \
                t[2 * i + 1] = HI(r[i], r[i + K / 2]);                                   \
            }                                                                            \
            UNROLL                                                                       \
            for (int i = 0; i < K; i++)                                                  \
                r[i] = t[i];                                                             \
        }                                                                                \
        UNROLL                                                                           \
        for (int i = 0; i < K; i++)                                                      \
            memcpy(d + i * dstep, &r[i], 16);                                            \
    }

#define LO8(a, b) SHUFFLE(vec_u8, a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23)
#define HI8(a, b) \
    SHUFFLE(vec_u8, a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
#define LO16(a, b) SHUFFLE(vec_u16, a, b, 0, 8, 1, 9, 2, 10, 3, 11)
#define HI16(a, b) SHUFFLE(vec_u16, a, b, 4, 12, 5, 13, 6, 14, 7, 15)
#define LO32(a, b) SHUFFLE(vec_u32, a, b, 0, 4, 1, 5)
#define HI32(a, b) SHUFFLE(vec_u32, a, b, 2, 6, 3, 7)
#define LO64(a, b) SHUFFLE(vec_u64, a, b, 0, 2)
#define HI64(a, b) SHUFFLE(vec_u64, a, b, 1, 3)

DEFINE_BLOCK(block_1, vec_u8, 16, LO8, HI8)
DEFINE_BLOCK(block_2, vec_u16, 8, LO16, HI16)
DEFINE_BLOCK(block_4, vec_u32, 4, LO32, HI32)
DEFINE_BLOCK(block_8, vec_u64, 2, LO64, HI64)

/* Assumes: vector_size_ok(isz). */
static ALWAYS_INLINE void block(char *d, int64_t dstep, const char *s, int64_t sstep, size_t isz)
{
    switch (isz) {
    case 1: block_1(d, dstep, s, sstep); break;
    case 2: block_2(d, dstep, s, sstep); break;
    case 4: block_4(d, dstep, s, sstep); break;
    default: block_8(d, dstep, s, sstep); break;
    }
}

static ALWAYS_INLINE vec_u32 load_u32(const char *p)
{
    vec_u32 v;
    memcpy(&v, p, 16);
    return v;
}

static ALWAYS_INLINE vec_u64 load_u64(const char *p)
{
    vec_u64 v;
    memcpy(&v, p, 16);
    return v;
}

/* The 16 bytes at s with their elements of isz bytes in reverse order.
 * The lanes of 4 bytes are reversed by a shuffle, then the 2-byte halves
 * of each lane swapped, then the bytes of each half: shifts rather than a
 * shuffle of 8 or 16 lanes, which SSE2 has no instruction for. Swapping
 * the halves and bytes of a lane reverses them in memory on either byte
 * order. Assumes: vector_size_ok(isz). */
static ALWAYS_INLINE void reverse_16(char *d, const char *s, size_t isz)
{
    if (isz == 8) {
        vec_u64 v = load_u64(s);
        v = SHUFFLE(vec_u64, v, v, 1, 0);
        memcpy(d, &v, 16);
    } else {
        vec_u32 v = load_u32(s);
        v = SHUFFLE(vec_u32, v, v, 3, 2, 1, 0);
        if (isz <= 2)
            v = (v << 16) | (v >> 16);
        if (isz == 1)
            v = ((v & 0x00ff00ffu) << 8) | ((v >> 8) & 0x00ff00ffu);
        memcpy(d, &v, 16);
    }
}

/* One vector of the elements s[0], s[S], s[2S], ... (16 / isz of them),
 * from the S * 16 bytes at s (those of them that hold the elements: no
 * more than that is read). Assumes: vector_size_ok(isz); S is 2, or isz is
 * 4 or 8 and S is 3 or 4. */
static ALWAYS_INLINE void stride_16(char *d, const char *s, int S, size_t isz)
{
    if (isz == 8) {
        vec_u64 a = load_u64(s), b = load_u64(s + (S == 4 ? 32 : 16)), v;
        if (S == 3)
            v = SHUFFLE(vec_u64, a, b, 0, 3);
        else
            v = SHUFFLE(vec_u64, a, b, 0, 2);
        memcpy(d, &v, 16);
    } else if (isz == 4) {
        vec_u32 a = load_u32(s), b = load_u32(s + 16), v;
        if (S == 2) {
            v = SHUFFLE(vec_u32, a, b, 0, 2, 4, 6);
        } else if (S == 3) {
            /* elements 0, 3 of a; 6 of b, 9 = c[1] */
            vec_u32 c = load_u32(s + 32);
            vec_u32 bc = SHUFFLE(vec_u32, b, c, 2, 3, 4, 5);
            v = SHUFFLE(vec_u32, a, bc, 0, 3, 4, 7);
        } else {
            vec_u32 c = load_u32(s + 32), e = load_u32(s + 48);
            vec_u32 ab = SHUFFLE(vec_u32, a, b, 0, 4, 1, 5);
            vec_u32 ce = SHUFFLE(vec_u32, c, e, 0, 4, 1, 5);
            v = SHUFFLE(vec_u32, ab, ce, 0, 1, 4, 5);
        }
        memcpy(d, &v, 16);
    } else if (isz == 2) {
        vec_u16 a, b, v;
        memcpy(&a, s, 16);
        memcpy(&b, s + 16, 16);
        v = SHUFFLE(vec_u16, a, b, 0, 2, 4, 6, 8, 10, 12, 14);
        memcpy(d, &v, 16);
    } else {
        vec_u8 a, b, v;
        memcpy(&a, s, 16);
        memcpy(&b, s + 16, 16);
        v = SHUFFLE(vec_u8, a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        memcpy(d, &v, 16);
    }
}

#endif /* HAVE_VECTORS */

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
        SIMD for (int64_t k = 0; k < len; k++) memcpy(d + k * (int64_t)isz, v, isz);
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

/* Move len elements into a contiguous run at d from s, sn bytes apart.
 * Returns the path bits of the vector loops that ran. */
static ALWAYS_INLINE unsigned run_gather(char *d, const char *s, int64_t len, int64_t sn,
                                         size_t isz)
{
    const int64_t e = (int64_t)isz;
    int64_t k = 0;
    unsigned used = 0;

    if (sn == e) {
        row_copy(d, s, len, isz);
        return 0;
    }
    if (sn == 0) {
        row_fill(d, s, len, isz);
        return 0;
    }
#if HAVE_VECTORS
    if (vector_size_ok(isz)) {
        const int64_t lanes = 16 / e;
        if (sn == -e) {
            /* Vector k holds elements k..k+lanes-1, the lowest address
             * last: it starts lanes - 1 elements below element k. */
            for (; k + lanes <= len; k += lanes)
                reverse_16(d + k * e, s - (k + lanes - 1) * e, isz);
            used = PATH_BIT(PATH_REVERSE_VECTOR);
        } else if (sn == 2 * e || ((sn == 3 * e || sn == 4 * e) && isz >= 4)) {
            /* A vector of outputs reads up to S * lanes elements from the
             * first, which lie before the row's last element while
             * k + lanes < len (the row's end is never read past). */
            const int S = (int)(sn / e);
            if (S == 2)
                for (; k + lanes < len; k += lanes)
                    stride_16(d + k * e, s + k * sn, 2, isz);
            else if (S == 3)
                for (; k + lanes < len; k += lanes)
                    stride_16(d + k * e, s + k * sn, 3, isz);
            else
                for (; k + lanes < len; k += lanes)
                    stride_16(d + k * e, s + k * sn, 4, isz);
            used = PATH_BIT(S == 2   ? PATH_STRIDE2_VECTOR
                            : S == 3 ? PATH_STRIDE3_VECTOR
                                     : PATH_STRIDE4_VECTOR);
        }
    }
#endif
    if (k == 0)
        used = 0;
    if (sn == -e) {
        SIMD for (int64_t i = k; i < len; i++) memcpy(d + i * e, s - i * e, isz);
    } else {
        SIMD for (int64_t i = k; i < len; i++) memcpy(d + i * e, s + i * sn, isz);
    }
    return used;
}

/* Move len elements, dn and sn bytes apart. Returns the path bits of the
 * vector loops that ran. */
static ALWAYS_INLINE unsigned row_gather(char *d, const char *s, int64_t len, int64_t dn,
                                         int64_t sn, size_t isz)
{
    if (dn == (int64_t)isz)
        return run_gather(d, s, len, sn, isz);
    for (int64_t k = 0; k < len; k++)
        memcpy(d + k * dn, s + k * sn, isz);
    return 0;
}

/* The body of the row kernels: batch consecutive units of the innermost
 * nest axis, starting at index idx[last] there. A unit is a chunk of one
 * row (consecutive chunks form one piece of the row) or a whole row.
 * Returns the path bits of the vector loops that ran. */
static ALWAYS_INLINE unsigned rows_batch(const struct job *j, char *d, const char *s,
                                         const int64_t *idx, int64_t batch, enum body_kind kind,
                                         size_t isz)
{
    const int last = j->nest.n - 1;
    int64_t len = j->n, count = batch;
    int64_t ds = j->nest.dstep[last], ss = j->nest.sstep[last];
    unsigned used = 0;

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
            used |= row_gather(dr, sr, len, j->dn, j->sn, isz);
    }
    return used;
}

/* Move an eu x ea tile: element k of destination row i (rows du bytes
 * apart) is the element at s + k * ss + i * isz. Square blocks of
 * 16 / isz elements go through registers (when the tile holds one); the
 * rows and columns they leave move element by element. With prefetch, the
 * destination row PREFETCH_ROWS below is prefetched as a row is started
 * (prefetches never fault, so they need no bounds). Returns the path bits
 * of the vector loops that ran. */
static ALWAYS_INLINE unsigned tile_move(char *d, const char *s, int64_t eu, int64_t ea, int64_t du,
                                        int64_t ss, size_t isz, bool prefetch)
{
    const int64_t e = (int64_t)isz;
    int64_t iv = 0, kv = 0;
    unsigned used = 0;

#if HAVE_VECTORS
    const int64_t lanes = 16 / e;
    if (vector_size_ok(isz) && eu >= lanes && ea >= lanes) {
        iv = eu - eu % lanes;
        kv = ea - ea % lanes;
        for (int64_t i = 0; i < iv; i += lanes) {
            char *dr = d + i * du;
            const char *sr = s + i * e;
            if (prefetch)
                for (int64_t r = PREFETCH_ROWS; r < PREFETCH_ROWS + lanes; r++)
                    for (int64_t b = 0; b < ea * e; b += 64)
                        PREFETCH_WRITE(dr + r * du + b);
            for (int64_t k = 0; k < kv; k += lanes)
                block(dr + k * e, du, sr + k * ss, ss, isz);
        }
        used = PATH_BIT(PATH_TRANSPOSE_VECTOR);
    }
#endif
    /* The last eu % lanes rows whole, the last ea % lanes elements of the
     * others. */
    for (int64_t i = 0; i < eu; i++) {
        char *dr = d + i * du;
        const char *sr = s + i * e;
        if (prefetch && i >= iv)
            for (int64_t b = 0; b < ea * e; b += 64)
                PREFETCH_WRITE(dr + PREFETCH_ROWS * du + b);
        SIMD for (int64_t k = i < iv ? kv : 0; k < ea; k++) memcpy(dr + k * e, sr + k * ss, isz);
    }
    return used;
}

/* One tile, moved directly: eu elements along the source's unit axis by ea
 * along the destination's. Without square blocks, the inner loop runs
 * along the longer side, so that a thin tile (AoS to SoA: eu = 3) still
 * has a long inner loop. Returns the path bits of the vector loops that
 * ran. */
static ALWAYS_INLINE unsigned tile_direct(char *d, const char *s, int64_t eu, int64_t ea,
                                          int64_t du, int64_t sa, size_t isz)
{
    const int64_t e = (int64_t)isz;
    unsigned used = 0;
    if (vector_size_ok(isz) && eu >= 16 / e && ea >= 16 / e)
        return tile_move(d, s, eu, ea, du, sa, isz, false);
    if (ea >= eu) {
        for (int64_t i = 0; i < eu; i++)
            used |= run_gather(d + i * du, s + i * e, ea, sa, isz);
    } else {
        for (int64_t k = 0; k < ea; k++) {
            char *dc = d + k * e;
            const char *sc = s + k * sa;
            for (int64_t i = 0; i < eu; i++)
                memcpy(dc + i * du, sc + i * e, isz);
        }
    }
    return used;
}

/* One tile through a buffer: the ea source rows of eu elements are copied
 * whole into buf, then each destination row is written from buf. Moved
 * directly, a tile touches ea source lines and eu destination lines at
 * once; when a stride is a multiple of 4 KiB (an 8192^2 fp32 transpose)
 * those lines all fall into one cache set and evict each other before
 * their other elements are used. Through the buffer every source and
 * destination line is read or written in one pass, and the transposition
 * happens within buf, which is contiguous. Rows PREFETCH_ROWS ahead are
 * prefetched meanwhile, on both sides (past the tile's last row, the
 * source rows are those of the next tile along the destination's axis):
 * the hardware prefetchers do not follow 64 short runs far apart.
 * Prefetches never fault, so they need no bounds. Returns the path bits of
 * the vector loops that ran. */
static ALWAYS_INLINE unsigned tile_staged(char *d, const char *s, int64_t eu, int64_t ea,
                                          int64_t du, int64_t sa, size_t isz, unsigned char *buf)
{
    const int64_t e = (int64_t)isz, row = eu * e;
    for (int64_t k = 0; k < ea; k++) {
        uintptr_t next = (uintptr_t)s + (uintptr_t)((k + PREFETCH_ROWS) * sa);
        for (int64_t b = 0; b < row; b += 64)
            PREFETCH((const void *)(next + (uintptr_t)b));
        memcpy(buf + k * row, s + k * sa, (size_t)row);
    }
    return tile_move(d, (const char *)buf, eu, ea, du, row, isz, true);
}

/* The most bytes one tile holds: edge^2 * itemsize (see tile_edge) for
 * itemsizes up to STAGE_MAX_ITEMSIZE; larger elements are moved directly. */
#define STAGE_BYTES (16 * 1024)
#define STAGE_MAX_ITEMSIZE 64

/* The tiles of one tile row from a0 to a1 along the destination's last
 * axis (d and s point at a0), eu elements along the source's unit axis.
 * Tiles whose source rows are shorter than a cache line gain nothing from
 * the buffer (their lines are shared by many rows anyway) and are moved
 * directly. Returns the path bits of the vector loops that ran. */
static ALWAYS_INLINE unsigned tile_row(const struct job *j, char *d, const char *s, int64_t eu,
                                       int64_t a0, int64_t a1, size_t isz, unsigned char *buf)
{
    const int64_t e = (int64_t)isz;
    const bool staged = isz <= STAGE_MAX_ITEMSIZE && eu * e >= 64;
    unsigned used = 0;

    assert(!staged || eu * min64(j->ta, a1 - a0) * e <= STAGE_BYTES);
    for (int64_t a = a0; a < a1; a += j->ta) {
        int64_t ea = min64(j->ta, a1 - a);
        if (staged)
            used |= tile_staged(d + (a - a0) * e, s + (a - a0) * j->sa, eu, ea, j->du, j->sa, isz,
                                buf);
        else
            used |= tile_direct(d + (a - a0) * e, s + (a - a0) * j->sa, eu, ea, j->du, j->sa, isz);
    }
    return used;
}

/* The body of the transpose kernel: batch consecutive tile groups of one
 * tile row, starting at group idx[last]; the tile row is idx[last - 1].
 * Returns the path bits of the vector loops that ran. */
static ALWAYS_INLINE unsigned transpose_batch(const struct job *j, char *d, const char *s,
                                              const int64_t *idx, int64_t batch, size_t isz)
{
    const int last = j->nest.n - 1;
    const int64_t span = j->group * j->ta;
    const int64_t eu = min64(j->tu, j->mu - idx[last - 1] * j->tu);
    _Alignas(64) unsigned char buf[STAGE_BYTES];
    unsigned used = 0;

    for (int64_t g = 0; g < batch; g++) {
        int64_t a0 = (idx[last] + g) * span;
        used |= tile_row(j, d + g * j->nest.dstep[last], s + g * j->nest.sstep[last], eu, a0,
                         min64(j->ma, a0 + span), isz, buf);
    }
    return used;
}

/* The body of the transpose kernel when one unit is a whole plane (the
 * plane is one tile row and one group: a batch of small planes): batch
 * consecutive planes along the innermost nest axis, so that small planes
 * cost one body call per batch rather than per plane. Returns the path
 * bits of the vector loops that ran. */
static ALWAYS_INLINE unsigned planes_batch(const struct job *j, char *d, const char *s,
                                           int64_t batch, size_t isz)
{
    const int last = j->nest.n - 1;
    _Alignas(64) unsigned char buf[STAGE_BYTES];
    unsigned used = 0;

    for (int64_t g = 0; g < batch; g++)
        used |= tile_row(j, d + g * j->nest.dstep[last], s + g * j->nest.sstep[last], j->mu, 0,
                         j->ma, isz, buf);
    return used | PATH_BIT(PATH_PLANES);
}

/* BY_ITEMSIZE calls these with the itemsize last, and keeps their path
 * bits. */
#define ROWS_BATCH(out, j, d, s, idx, batch, kind, isz) \
    ((out) = rows_batch((j), (d), (s), (idx), (batch), (kind), (isz)))
#define TRANSPOSE_BATCH(out, j, d, s, idx, batch, isz) \
    ((out) = transpose_batch((j), (d), (s), (idx), (batch), (isz)))
#define PLANES_BATCH(out, j, d, s, batch, isz) ((out) = planes_batch((j), (d), (s), (batch), (isz)))

static unsigned body(const struct job *j, char *d, const char *s, const int64_t *idx, int64_t batch)
{
    unsigned used = 0;
    switch (j->kind) {
    case BODY_ROWS: BY_ITEMSIZE(j->isz, ROWS_BATCH, used, j, d, s, idx, batch, BODY_ROWS); break;
    case BODY_BROADCAST:
        BY_ITEMSIZE(j->isz, ROWS_BATCH, used, j, d, s, idx, batch, BODY_BROADCAST);
        break;
    case BODY_GATHER:
        BY_ITEMSIZE(j->isz, ROWS_BATCH, used, j, d, s, idx, batch, BODY_GATHER);
        break;
    case BODY_TRANSPOSE: BY_ITEMSIZE(j->isz, TRANSPOSE_BATCH, used, j, d, s, idx, batch); break;
    case BODY_PLANES: BY_ITEMSIZE(j->isz, PLANES_BATCH, used, j, d, s, batch); break;
    }
    return used;
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
    unsigned used = 0;

    for (int k = last; k >= 0; k--) {
        idx[k] = rem % nt->count[k];
        rem /= nt->count[k];
        doff += idx[k] * nt->dstep[k];
        soff += idx[k] * nt->sstep[k];
    }
    for (int64_t l = l0; l < l1;) {
        int64_t batch = min64(nt->count[last] - idx[last], l1 - l);
        used |= body(j, j->dst + doff, j->src + soff, idx, batch);
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
    for (int p = 0; p < PATH_COUNT; p++)
        if (used & PATH_BIT(p))
            atomic_fetch_add_explicit(&path_runs[p], 1, memory_order_relaxed);
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
static void nest_push_outer(struct nest *nt, const strided_copy_plan *p, int skip1, int skip2)
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
static int64_t tile_edge(int64_t isz)
{
    return max64(8, min64(64, 256 / isz));
}

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
    int64_t rows = ceil_div(j->mu, j->tu);
    int64_t groups = ceil_div(ceil_div(j->ma, j->ta), j->group);

    nest_push_outer(&j->nest, p, u, a);
    if (rows == 1 && groups == 1 && j->nest.n > 0) {
        /* A plane is one unit: whole planes, in batches. */
        j->kind = BODY_PLANES;
    } else {
        nest_push(&j->nest, rows, j->tu * j->du, j->tu * e);
        nest_push(&j->nest, groups, j->group * j->ta * e, j->group * j->ta * j->sa);
    }
    run_nest(j, p->volume * e, nthreads);
}

/* A streaming copy of n bytes on this thread: stores past the caches
 * (x86-64), then a store fence, so that the bytes are in memory when the
 * threads join. */
static void stream_run(char *dst, const char *src, size_t n)
{
#if defined(__SSE2__)
    size_t head = (size_t)(-(uintptr_t)dst & 15);
    if (head > n)
        head = n;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    size_t body = n & ~(size_t)63;
    for (size_t i = 0; i < body; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + i + 48));
        _mm_stream_si128((__m128i *)(void *)(dst + i), a);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(dst + i + 48), d);
    }
    memcpy(dst + body, src + body, n - body);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

/* Copy bytes on t threads, a piece of whole cache lines each, with
 * streaming or plain stores. */
static void copy_split(char *dst, const char *src, int64_t bytes, int t, bool streaming)
{
    if (t == 1) {
        if (streaming)
            stream_run(dst, src, (size_t)bytes);
        else
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
        if (streaming)
            stream_run(dst + b0, src + b0, (size_t)(b1 - b0));
        else
            memcpy(dst + b0, src + b0, (size_t)(b1 - b0));
    }
}

static void run_contiguous(char *dst, const char *src, int64_t bytes, int nthreads)
{
    /* Pieces of whole cache lines, at least one UNIT_BYTES each. */
    copy_split(dst, src, bytes, thread_count(bytes, ceil_div(bytes, UNIT_BYTES), nthreads), false);
}

void strided__copy_host_stream(char *dst, const char *src, int64_t bytes)
{
    assert(bytes >= 0);
#ifdef _OPENMP
    int t = (int)max64(1, min64(omp_get_max_threads(), bytes / STREAM_THREAD_MIN_BYTES));
#else
    int t = 1;
#endif
    copy_split(dst, src, bytes, t, true);
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
    case STRIDED_COPY_ROWS: return p->dst_strides[last] == 1 && p->src_strides[last] == 1;
    case STRIDED_COPY_TRANSPOSE:
        return p->dst_strides[last] == 1 && p->src_unit_axis >= 0 && p->src_unit_axis < last &&
               p->src_strides[p->src_unit_axis] == 1;
    case STRIDED_COPY_BROADCAST: return p->dst_strides[last] == 1 && p->src_strides[last] == 0;
    case STRIDED_COPY_GATHER: return 1;
    default: return 0;
    }
}
#endif

void strided__copy_host_run(const strided_copy_plan *p, char *dst, const char *src, int nthreads)
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

int64_t strided__copy_cpu_path_runs(const char *name)
{
    for (int p = 0; p < PATH_COUNT; p++)
        if (strcmp(name, path_names[p]) == 0)
            return atomic_load_explicit(&path_runs[p], memory_order_relaxed);
    return -1;
}

void strided__copy_cpu_path_reset(void)
{
    for (int p = 0; p < PATH_COUNT; p++)
        atomic_store_explicit(&path_runs[p], 0, memory_order_relaxed);
}
