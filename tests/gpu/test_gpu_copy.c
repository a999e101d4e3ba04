/*
 * GPU tests of the device copy executor (strided__copy_device_run,
 * src/copy/launch.c) and its kernels (src/copy/kernels.cu) against
 * the real CUDA driver.
 *
 * Every case is a plan made by hand - every kind, element sizes 1, 2, 4,
 * 8, 16 and 12 bytes, odd sizes and tile edges, negative and zero source
 * strides, 0 to 24 axes, offsets beyond int32, misaligned bases - run on
 * device memory and checked against a reference computed on the host from
 * the same plan. The source is filled with a pattern in which neighbouring
 * bytes differ, the destination with a sentinel; afterwards the whole
 * destination allocation is read back: every element the plan names must
 * hold its source element's bytes, every other byte the sentinel. Each side
 * is allocated exactly as large as the plan's footprint on it (plus the
 * misalignment asked for), so compute-sanitizer memcheck reports any access
 * outside the plan's elements. Footprints beyond 64 MiB (the cases with
 * offsets beyond int32) are moved element by element instead, and their
 * untouched bytes are not checked. STRIDED_GPU_COPY_TESTS, a cmocka test
 * name pattern, runs only the tests it matches (test_tiles: a few small
 * transposes, for compute-sanitizer's slower tools).
 *
 * The test links no CUDA library: it loads libcuda.so.1 itself for the
 * calls it makes (memory, streams). Without a driver or a device it prints
 * "skipped: no CUDA device" and passes. Every driver call it makes succeeds
 * on a working device, so that it runs clean under compute-sanitizer
 * memcheck. Device 0 is the device under test.
 */

#include "gpu_test.h"
#include "test_copy.h"

#include <stdlib.h>

#include "base/base.h"
#include "copy/launch.h"
#include "strided.h"

#define TEST_DEVICE 0
#define MiB ((int64_t)1 << 20)
#define SPARSE_BYTES (64 * MiB)

static CUdevice device;
static CUcontext primary;

static int set_primary(void **state)
{
    (void)state;
    return cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS ? 0 : -1;
}

/* Plans. */

/* "transpose 4B (65,127):(127,1)<-(1,65)" */
static void describe(const strided_copy_plan *p, char *buf, size_t size)
{
    strided__text t = {buf, size, 0};

    strided__text_append(&t, "%s %dB ", strided_copy_kernel_name(p->kernel), p->itemsize);
    strided__text_tuple(&t, p->ndim, p->shape);
    strided__text_append(&t, ":");
    strided__text_tuple(&t, p->ndim, p->dst_strides);
    strided__text_append(&t, "<-");
    strided__text_tuple(&t, p->ndim, p->src_strides);
    if (p->src_unit_axis >= 0)
        strided__text_append(&t, " unit axis %d", p->src_unit_axis);
}

/* The lowest and highest element offset of one side of p. */
static void footprint(const strided_copy_plan *p, const int64_t *strides, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int k = 0; k < p->ndim; k++) {
        int64_t reach = (p->shape[k] - 1) * strides[k];
        if (reach < 0)
            *lo += reach;
        else
            *hi += reach;
    }
}

/* Visit the destination and source element offsets of every index of p,
 * in C order. */
typedef void (*visit_fn)(int64_t dst, int64_t src, void *context);

static void for_each_element(const strided_copy_plan *p, visit_fn visit, void *context)
{
    int64_t index[STRIDED_MAX_NDIM] = {0};
    int64_t d = 0, s = 0;

    for (int64_t n = 0; n < p->volume; n++) {
        visit(d, s, context);
        for (int k = p->ndim - 1; k >= 0; k--) {
            if (++index[k] < p->shape[k]) {
                d += p->dst_strides[k];
                s += p->src_strides[k];
                break;
            }
            d -= (p->shape[k] - 1) * p->dst_strides[k];
            s -= (p->shape[k] - 1) * p->src_strides[k];
            index[k] = 0;
        }
    }
}

/* The source pattern: the byte at offset i of the source allocation. */
static unsigned char pattern(int64_t i)
{
    uint32_t h = (uint32_t)i * 2654435761u;
    return (unsigned char)((h >> 24) ^ (h >> 13) ^ (uint32_t)(i >> 20));
}

/* One side of a copy: a device allocation of its footprint plus a shift,
 * and where element 0 is. */
typedef struct side {
    CUdeviceptr base;
    int64_t bytes;  /* allocated */
    int64_t origin; /* byte offset of element 0 in the allocation */
    bool sparse;    /* footprint > SPARSE_BYTES: moved element by element */
} side;

static side side_of(const strided_copy_plan *p, const int64_t *strides, int shift)
{
    side s;
    int64_t lo, hi;

    footprint(p, strides, &lo, &hi);
    s.bytes = (hi - lo + 1) * p->itemsize + shift;
    s.origin = shift - lo * p->itemsize;
    s.sparse = s.bytes > SPARSE_BYTES;
    CU(cuMemAlloc(&s.base, (size_t)s.bytes));
    return s;
}

/* What the visits below need. */
typedef struct copy_check {
    const strided_copy_plan *p;
    const side *dst, *src;
    unsigned char *expected; /* dense destination image, or NULL */
    const char *what;
    const char *file;
    int line;
} copy_check;

/* Sparse source: upload the pattern of one element. */
static void upload_element(int64_t d, int64_t s, void *context)
{
    const copy_check *c = context;
    int64_t at = c->src->origin + s * c->p->itemsize;
    unsigned char bytes[64];

    (void)d;
    for (int j = 0; j < c->p->itemsize; j++)
        bytes[j] = pattern(at + j);
    cu_check_(cu.cuMemcpyHtoD(c->src->base + (CUdeviceptr)at, bytes, (size_t)c->p->itemsize),
              "cuMemcpyHtoD", c->file, c->line);
}

/* Dense destination: write the element's expected bytes into the image. */
static void expect_element(int64_t d, int64_t s, void *context)
{
    const copy_check *c = context;
    int64_t from = c->src->origin + s * c->p->itemsize;

    for (int j = 0; j < c->p->itemsize; j++)
        c->expected[c->dst->origin + d * c->p->itemsize + j] = pattern(from + j);
}

/* Sparse destination: read one element back and compare. */
static void check_element(int64_t d, int64_t s, void *context)
{
    const copy_check *c = context;
    int64_t at = c->dst->origin + d * c->p->itemsize;
    int64_t from = c->src->origin + s * c->p->itemsize;
    unsigned char got[64];

    cu_check_(cu.cuMemcpyDtoH(got, c->dst->base + (CUdeviceptr)at, (size_t)c->p->itemsize),
              "cuMemcpyDtoH", c->file, c->line);
    for (int j = 0; j < c->p->itemsize; j++)
        if (got[j] != pattern(from + j))
            fail_at(c->file, c->line,
                    "%s: destination element at offset %lld, byte %d: "
                    "0x%02x, expected 0x%02x\n",
                    c->what, (long long)d, j, got[j], pattern(from + j));
}

static unsigned char *host_alloc(int64_t bytes, const char *file, int line)
{
    unsigned char *m = malloc((size_t)bytes);
    if (m == NULL)
        fail_at(file, line, "out of host memory (%lld bytes)\n", (long long)bytes);
    return m;
}

/* Run p on device 0 with the destination and source bases shifted by
 * dst_shift and src_shift bytes, on stream, and check the result. */
#define check_copy(p, dst_shift, src_shift, stream) \
    check_copy_at((p), (dst_shift), (src_shift), (stream), __FILE__, __LINE__)

static long cases;

static void check_copy_at(strided_copy_plan p, int dst_shift, int src_shift, CUstream stream,
                          const char *file, int line)
{
    char what[1024], full[1100];
    side dst = side_of(&p, p.dst_strides, dst_shift);
    side src = side_of(&p, p.src_strides, src_shift);
    copy_check c = {&p, &dst, &src, NULL, full, file, line};
    strided_status st;

    describe(&p, what, sizeof what);
    snprintf(full, sizeof full, "%s, dst+%d src+%d", what, dst_shift, src_shift);
    if (src.sparse) {
        for_each_element(&p, upload_element, &c);
    } else {
        unsigned char *h = host_alloc(src.bytes, file, line);
        for (int64_t i = 0; i < src.bytes; i++)
            h[i] = pattern(i);
        cu_check_(cu.cuMemcpyHtoD(src.base, h, (size_t)src.bytes), "cuMemcpyHtoD", file, line);
        free(h);
    }
    if (!dst.sparse)
        cu_check_(cu.cuMemsetD8(dst.base, SENTINEL, (size_t)dst.bytes), "cuMemsetD8", file, line);

    st = strided__copy_device_run(&p, (uintptr_t)(dst.base + dst.origin),
                                  (uintptr_t)(src.base + src.origin), stream, TEST_DEVICE);
    if (st == STRIDED_ERR_UNSUPPORTED)
        fail_at(file, line, "%s: %s (this test needs the CUDA kernels)\n", full,
                strided_last_error());
    if (st != STRIDED_OK)
        fail_at(file, line, "%s: %s\n", full, strided_last_error());
    cu_check_(cu.cuStreamSynchronize(stream), "cuStreamSynchronize", file, line);

    if (dst.sparse) {
        for_each_element(&p, check_element, &c);
    } else {
        unsigned char *got = host_alloc(dst.bytes, file, line);
        c.expected = host_alloc(dst.bytes, file, line);
        memset(c.expected, SENTINEL, (size_t)dst.bytes);
        for_each_element(&p, expect_element, &c);
        cu_check_(cu.cuMemcpyDtoH(got, dst.base, (size_t)dst.bytes), "cuMemcpyDtoH", file, line);
        for (int64_t i = 0; i < dst.bytes; i++)
            if (got[i] != c.expected[i])
                fail_at(file, line,
                        "%s: destination byte %lld (element 0 at %lld): "
                        "0x%02x, expected 0x%02x%s\n",
                        full, (long long)i, (long long)dst.origin, got[i], c.expected[i],
                        c.expected[i] == SENTINEL ? " (untouched)" : "");
        free(got);
        free(c.expected);
    }
    CU(cuMemFree(dst.base));
    CU(cuMemFree(src.base));
    cases++;
}

/* The sizes and element sizes every kind is run with: (outer, inner). */
static const int64_t sizes[][2] = {
    {1, 1},       {31, 33},   {65, 127}, {1000, 3}, {3, 1000},
    {1023, 1025}, {128, 128}, {256, 64}, {2, 4096},
};
static const int itemsizes[] = {1, 2, 4, 8, 16, 12};

#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NITEMSIZES (sizeof itemsizes / sizeof itemsizes[0])

static void test_contiguous(void **state)
{
    (void)state;
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < NSIZES; j++) {
            int64_t n = sizes[j][0] * sizes[j][1];
            check_copy(PLAN(STRIDED_COPY_CONTIGUOUS, s, (n), (1), (1), -1), 0, 0, NULL);
        }
        /* One element, as a plan of no axes. */
        strided_copy_plan one = PLAN(STRIDED_COPY_CONTIGUOUS, s, (1), (1), (1), -1);
        one.ndim = 0;
        check_copy(one, 0, 0, NULL);
        /* Bases that share less alignment than 16 bytes. */
        strided_copy_plan p = PLAN(STRIDED_COPY_CONTIGUOUS, s, (4099), (1), (1), -1);
        check_copy(p, 1, 0, NULL);
        check_copy(p, 0, 3, NULL);
        check_copy(p, 2, 6, NULL);
        check_copy(p, 4, 8, NULL);
        check_copy(p, 8, 0, NULL);
        check_copy(p, 5, 5, NULL);
        /* Shorter than the alignment gap. */
        check_copy(PLAN(STRIDED_COPY_CONTIGUOUS, s, (1), (1), (1), -1), 3, 3, NULL);
    }
    /* Large and misaligned: cuMemcpyAsync; aligned alike: the kernel. */
    strided_copy_plan big = PLAN(STRIDED_COPY_CONTIGUOUS, 1, (3 * MiB + 5), (1), (1), -1);
    check_copy(big, 1, 0, NULL);
    check_copy(big, 7, 7, NULL);
}

static void test_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < NSIZES; j++) {
            int64_t r = sizes[j][0], c = sizes[j][1];
            /* Pitched source, negative pitch, every row from one. */
            check_copy(PLAN(STRIDED_COPY_ROWS, s, (r, c), (c, 1), (c + 3, 1), 1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_ROWS, s, (r, c), (c, 1), (-(c + 3), 1), 1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_ROWS, s, (r, c), (c, 1), (0, 1), 1), 0, 0, NULL);
            /* Pitched destination; 16-byte aligned pitches. */
            check_copy(PLAN(STRIDED_COPY_ROWS, s, (r, c), (c + 5, 1), (c, 1), 1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_ROWS, s, (r, c), (c + 16, 1), (c + 32, 1), 1), 0, 0, NULL);
        }
    }
}

static void test_transposes(void **state)
{
    (void)state;
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < NSIZES; j++) {
            int64_t r = sizes[j][0], c = sizes[j][1];
            /* (r, c) from a (c, r) source: axis 0 is the source's unit
             * axis, axis 1 the destination's. */
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (c, 1), (1, r), 0), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (c, 1), (1, r + 2), 0), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (c + 1, 1), (1, -(r + 4)), 0), 0, 0,
                       NULL);
            /* Source axis a reversed (unit stride -1): element tiles. */
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (c, 1), (-1, r), 0), 0, 0, NULL);
            /* Every column from one: source stride 0 along b. */
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (c, 1), (1, 0), 0), 0, 0, NULL);
            /* Batched: 3 x (r, c), batch strides with a gap and reversed. */
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (3, r, c), (r * c + 7, c, 1),
                            (-(r * c + 9), 1, r), 1),
                       0, 0, NULL);
            /* Destination rows in reverse order at an odd pitch. */
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (-(c + 1), 1), (1, r), 0), 0, 0,
                       NULL);
        }
        /* Destination rows off the memory's sectors (odd pitches, an odd
         * batch stride, a base off its sector), whose tiles are skewed to
         * them: rows a little longer than a tile, so that most of a row's
         * last tile lies past its end, and rows within a sector of a tile. */
        static const int64_t rows[][3] = {
            {100, 67, 69}, {70, 64, 65}, {64, 71, 71}, {20, 200, 203}};
        for (size_t j = 0; j < sizeof rows / sizeof rows[0]; j++) {
            int64_t r = rows[j][0], c = rows[j][1], pitch = rows[j][2];
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (pitch, 1), (1, r), 0), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (pitch, 1), (1, r), 0), s, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (2, r, c), (r * pitch + 1, pitch, 1),
                            (r * c, 1, r), 1),
                       0, 0, NULL);
        }
    }
}

/* Transposes small enough for compute-sanitizer racecheck and synccheck
 * (STRIDED_GPU_COPY_TESTS=test_tiles): whole tiles, edge tiles and both
 * at once, packed words (even strides) and elements (odd ones). */
static void test_tiles(void **state)
{
    (void)state;
    /* Square tiles (whole, edge), and thin ones: a short axis (at most
     * STRIDED_COPY_THIN) against a long one, both ways round, with partial
     * last tiles; 17 is just too long to be thin. */
    static const int64_t tile_sizes[][2] = {{64, 64},  {128, 128}, {129, 130}, {32, 200},
                                            {3, 5000}, {5000, 3},  {2, 20001}, {16, 300},
                                            {300, 16}, {7, 1345},  {17, 300}};
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < sizeof tile_sizes / sizeof tile_sizes[0]; j++) {
            int64_t r = tile_sizes[j][0], c = tile_sizes[j][1];
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (2, r, c), (r * c, c, 1), (r * c, 1, r), 1),
                       0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (r, c), (c, 1), (1, r + 1), 0), 0, 0, NULL);
        }
        /* Rows on 16-byte vectors and 32-byte sectors both sides, whole
         * tiles and edge tiles both ways (200 x 136 at pitches 136 and
         * 200; the packed words and vectors), batched with a reversed
         * batch axis, and a source one element off (element tiles). */
        check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (200, 136), (136, 1), (1, 200), 0), 0, 0, NULL);
        check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (3, 200, 136), (27200, 136, 1), (-27200, 1, 200),
                        1),
                   0, 0, NULL);
        check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (200, 136), (136, 1), (1, 200), 0), 0, s, NULL);
    }
    /* Records of 2, 3 and 4 fields to planes and back (the narrow kernels
     * for 1-, 2- and 4-byte elements, every vector aligned): whole groups of
     * records and a short last one, planes padded to whole words, batched;
     * and shifted by one element, which no longer aligns (thin tiles). */
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (int64_t f = 2; f <= 4; f++) {
            for (int64_t n = 1001; n <= 4096; n += 3095) {
                const int64_t pitch = (n + 3) / 4 * 4;
                check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (f, n), (pitch, 1), (1, f), 0), 0, 0,
                           NULL);
                check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (n, f), (f, 1), (1, pitch), 0), 0, 0,
                           NULL);
                check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (3, f, n), (f * pitch, pitch, 1),
                                (-f * pitch, 1, f), 1),
                           0, 0, NULL);
                check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (3, n, f), (f * pitch, f, 1),
                                (f * pitch, 1, pitch), 1),
                           0, 0, NULL);
                check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (f, n), (pitch, 1), (1, f), 0), s, 0,
                           NULL);
            }
        }
    }
}

static void test_broadcasts(void **state)
{
    (void)state;
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < NSIZES; j++) {
            int64_t r = sizes[j][0], c = sizes[j][1];
            check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (r, c), (c, 1), (1, 0), -1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (r, c), (c, 1), (0, 0), -1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (r, c), (c, 1), (-1, 0), -1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (r, c), (c + 4, 1), (2, 0), -1), 0, 0, NULL);
            /* A strided run: destination stride 2 along it. */
            check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (r, c), (2 * c, 2), (1, 0), -1), 0, 0, NULL);
        }
    }
}

static void test_gathers(void **state)
{
    (void)state;
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < NSIZES; j++) {
            int64_t r = sizes[j][0], c = sizes[j][1];
            check_copy(PLAN(STRIDED_COPY_GATHER, s, (r, c), (c, 1), (2, 2 * r + 1), -1), 0, 0,
                       NULL);
            check_copy(PLAN(STRIDED_COPY_GATHER, s, (r, c), (c, 1), (-3, 5), -1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_GATHER, s, (r, c), (c, 1), (0, -2), -1), 0, 0, NULL);
            /* Close to contiguous (near_unit in copy/launch.c): reversed rows
             * and reversed transposes. */
            check_copy(PLAN(STRIDED_COPY_GATHER, s, (r, c), (c, 1), (c, -1), -1), 0, 0, NULL);
            check_copy(PLAN(STRIDED_COPY_GATHER, s, (r, c), (c, 1), (-1, -r), -1), 0, 0, NULL);
        }
    }
}

/* Strides of a C-contiguous array of shape (elements). */
static void c_strides(int ndim, const int64_t *shape, int64_t *out)
{
    int64_t s = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        out[k] = s;
        s *= shape[k];
    }
}

/* A plan of ndim axes whose source is the reversed (transposed) array:
 * source axis k is axis ndim-1-k of a C-contiguous array, with the axes in
 * flip[] reversed (negative strides). */
static strided_copy_plan reversed_plan(strided_copy_kernel kind, int itemsize, int ndim,
                                       const int64_t *shape, const int *flip, int nflip)
{
    int64_t rshape[STRIDED_MAX_NDIM], rstrides[STRIDED_MAX_NDIM];
    int64_t dst[STRIDED_MAX_NDIM], src[STRIDED_MAX_NDIM];
    int unit = -1;

    for (int k = 0; k < ndim; k++)
        rshape[k] = shape[ndim - 1 - k];
    c_strides(ndim, rshape, rstrides);
    c_strides(ndim, shape, dst);
    for (int k = 0; k < ndim; k++) {
        src[k] = rstrides[ndim - 1 - k];
        if (src[k] == 1 && shape[k] > 1 && unit < 0)
            unit = k;
    }
    for (int i = 0; i < nflip; i++)
        src[flip[i]] = -src[flip[i]];
    if (kind != STRIDED_COPY_TRANSPOSE)
        unit = -1;
    return plan_of(kind, itemsize, ndim, shape, dst, src, unit);
}

static void test_high_rank(void **state)
{
    (void)state;
    const int64_t shape6[6] = {2, 3, 4, 5, 6, 7};
    int64_t shape24[24];
    for (int k = 0; k < 24; k++)
        shape24[k] = k % 3 == 2 ? 1 : 2; /* 16 axes of 2, 8 of 1 */
    const int flips[] = {2, 3, 9, 20};

    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        /* 6 axes reversed: a transpose batched over 4 axes, or a gather. */
        check_copy(reversed_plan(STRIDED_COPY_TRANSPOSE, s, 6, shape6, NULL, 0), 0, 0, NULL);
        check_copy(reversed_plan(STRIDED_COPY_GATHER, s, 6, shape6, NULL, 0), 0, 0, NULL);
        check_copy(reversed_plan(STRIDED_COPY_GATHER, s, 6, shape6, flips, 2), 0, 0, NULL);
        /* 24 axes (16 of extent 2): more than 8 axes in the kernels. */
        check_copy(reversed_plan(STRIDED_COPY_TRANSPOSE, s, 24, shape24, NULL, 0), 0, 0, NULL);
        check_copy(reversed_plan(STRIDED_COPY_GATHER, s, 24, shape24, flips, 4), 0, 0, NULL);
        /* Rows under 5 permuted axes (every row 300 elements). */
        check_copy(PLAN(STRIDED_COPY_ROWS, s, (2, 3, 4, 5, 2, 300),
                        (36000, 12000, 3000, 600, 300, 1), (300, 2400, 600, 7200, 36000, 1), 5),
                   0, 0, NULL);
        /* Broadcast of 3 axes; batched transpose of 3. */
        check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (4, 5, 300), (1500, 300, 1), (0, 1, 0), -1), 0,
                   0, NULL);
        check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (5, 33, 65), (2145, 65, 1), (1, 5, 165), 0), 0,
                   0, NULL);
        /* 1 axis, and none. */
        check_copy(PLAN(STRIDED_COPY_GATHER, s, (1000), (1), (-2), -1), 0, 0, NULL);
        strided_copy_plan one = PLAN(STRIDED_COPY_GATHER, s, (1), (1), (1), -1);
        one.ndim = 0;
        check_copy(one, 0, 0, NULL);
    }
}

static void test_misaligned_bases(void **state)
{
    (void)state;
    /* Long rows whose two sides are misaligned against each other by every
     * kind of shift (rows_shift): odd pitches, negative pitches, rows
     * longer than one chunk. */
    static const int row_shifts[] = {0, 1, 3, 5, 8, 15};
    for (size_t i = 0; i < sizeof row_shifts / sizeof row_shifts[0]; i++)
        for (size_t j = 0; j < sizeof row_shifts / sizeof row_shifts[0]; j++) {
            int ds = row_shifts[i], ss = row_shifts[j];
            check_copy(PLAN(STRIDED_COPY_ROWS, 1, (5, 4099), (4099, 1), (4103, 1), 1), ds, ss,
                       NULL);
            check_copy(PLAN(STRIDED_COPY_ROWS, 2, (3, 9001), (9001, 1), (-9002, 1), 1), ds, ss,
                       NULL);
            check_copy(PLAN(STRIDED_COPY_ROWS, 4, (2, 20000), (20001, 1), (20000, 1), 1), ds, ss,
                       NULL);
        }
    static const int shifts[][2] = {{1, 0},  {0, 1}, {2, 2}, {2, 0},
                                    {4, 12}, {8, 0}, {0, 8}, {6, 10}};
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        for (size_t j = 0; j < sizeof shifts / sizeof shifts[0]; j++) {
            int ds = shifts[j][0], ss = shifts[j][1];
            check_copy(PLAN(STRIDED_COPY_ROWS, s, (65, 300), (300, 1), (301, 1), 1), ds, ss, NULL);
            check_copy(PLAN(STRIDED_COPY_TRANSPOSE, s, (130, 129), (129, 1), (1, 130), 0), ds, ss,
                       NULL);
            check_copy(PLAN(STRIDED_COPY_BROADCAST, s, (65, 512), (512, 1), (1, 0), -1), ds, ss,
                       NULL);
            check_copy(PLAN(STRIDED_COPY_GATHER, s, (65, 127), (127, 1), (1, -65), -1), ds, ss,
                       NULL);
        }
    }
}

static void test_offsets_beyond_int32(void **state)
{
    (void)state;
    const int64_t big = (int64_t)1 << 31;
    /* Source offsets beyond int32 (elements of 1 byte: 2 GiB apart). */
    check_copy(PLAN(STRIDED_COPY_GATHER, 1, (2, 50), (50, 1), (big + 3, 1), -1), 0, 0, NULL);
    check_copy(PLAN(STRIDED_COPY_GATHER, 1, (2, 50), (50, 1), (-big - 5, 2), -1), 0, 0, NULL);
    check_copy(PLAN(STRIDED_COPY_TRANSPOSE, 1, (2, 128, 132), (16896, 132, 1), (big, 1, 128), 1), 0,
               0, NULL);
    check_copy(PLAN(STRIDED_COPY_TRANSPOSE, 2, (2, 64, 64), (4096, 64, 1), (-big / 2 - 64, 1, 64),
                    1),
               0, 0, NULL);
    check_copy(PLAN(STRIDED_COPY_ROWS, 1, (2, 1000), (1000, 1), (big + 16, 1), 1), 0, 0, NULL);
    check_copy(PLAN(STRIDED_COPY_BROADCAST, 1, (2, 1000), (1000, 1), (big, 0), -1), 0, 0, NULL);
    /* Float planes 2 GiB apart to records (the narrow kernel's staged
     * stores), and tiles skewed to an odd destination pitch with batches 2
     * GiB apart in the source (byte offsets beyond int32, element offsets
     * within it). */
    check_copy(PLAN(STRIDED_COPY_TRANSPOSE, 4, (1001, 3), (3, 1), (1, big / 4), 0), 0, 0, NULL);
    check_copy(PLAN(STRIDED_COPY_TRANSPOSE, 4, (2, 70, 67), (70 * 69, 69, 1), (big / 4, 1, 70), 1),
               0, 0, NULL);
    /* Skewed tiles whose destination rows lie over 2 GiB into the
     * destination (an odd pitch of 2^23 + 1 floats). */
    check_copy(PLAN(STRIDED_COPY_TRANSPOSE, 4, (70, 67), (big / 256 + 1, 1), (1, 70), 0), 0, 0,
               NULL);
    /* Grouped tiles (128 x 128 bytes over axes of 16 and 8) with batches
     * 2 GiB apart in the source: 64-bit indices. */
    check_copy(PLAN(STRIDED_COPY_TRANSPOSE, 1, (2, 16, 8, 8, 16), (16384, 1024, 128, 16, 1),
                    (big, 1, 16, 128, 1024), 1),
               0, 0, NULL);
    /* Byte offsets beyond int32 with element offsets within it. */
    check_copy(PLAN(STRIDED_COPY_GATHER, 4, (2, 50), (50, 1), (big / 4 + 1, -1), -1), 0, 0, NULL);
    /* Destination offsets beyond int32. */
    check_copy(PLAN(STRIDED_COPY_GATHER, 1, (2, 100), (big + 1, 1), (1, 2), -1), 0, 0, NULL);
}

/* A small deterministic generator (splitmix64), for the random plans. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t random_below(uint64_t *state, int64_t n)
{
    return (int64_t)(next_random(state) % (uint64_t)n);
}

/* A plan as the planner could make one: a C-ordered destination (with
 * gaps), the source a permutation of a C-ordered array with some axes
 * reversed and maybe one broadcast, and the kind its layout says. */
static strided_copy_plan random_plan(uint64_t *state)
{
    int ndim = 1 + (int)random_below(state, 6);
    int itemsize = itemsizes[random_below(state, (int64_t)NITEMSIZES)];
    int64_t shape[8], dst[8], src[8], perm_strides[8];
    int perm[8];

    int64_t volume = 1;
    for (int k = 0; k < ndim; k++) {
        shape[k] = random_below(state, 5) == 0 ? 1 : 2 + random_below(state, 300);
        perm[k] = k;
        volume *= shape[k];
    }
    /* At most 2^17 elements: halve the largest extents. */
    while (volume > (1 << 17)) {
        int big = 0;
        for (int k = 1; k < ndim; k++)
            if (shape[k] > shape[big])
                big = k;
        volume = volume / shape[big] * (shape[big] / 2);
        shape[big] /= 2;
    }
    /* Destination: C order, each axis padded by 0..2 elements. */
    int64_t stride = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        dst[k] = stride;
        stride *= shape[k] + random_below(state, 3);
    }
    /* Source: the axes in a random order, C-contiguous in that order. */
    for (int k = ndim - 1; k > 0; k--) {
        int j = (int)random_below(state, k + 1), t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
    stride = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        perm_strides[perm[k]] = stride;
        stride *= shape[perm[k]];
    }
    for (int k = 0; k < ndim; k++) {
        src[k] = perm_strides[k];
        if (random_below(state, 4) == 0)
            src[k] = -src[k];
    }
    if (random_below(state, 4) == 0)
        src[random_below(state, ndim)] = 0;
    /* The kind, from the layouts (as copy/plan.c picks it). */
    strided_copy_kernel kind = STRIDED_COPY_GATHER;
    int unit = -1, last = ndim - 1;
    if (src[last] == 1 && dst[last] == 1) {
        kind = STRIDED_COPY_ROWS;
    } else if (src[last] == 0 && dst[last] == 1) {
        kind = STRIDED_COPY_BROADCAST;
    } else if (dst[last] == 1) {
        for (int k = 0; k < last; k++)
            if (src[k] == 1 && shape[k] > 1)
                unit = k;
        if (unit >= 0)
            kind = STRIDED_COPY_TRANSPOSE;
    }
    return plan_of(kind, itemsize, ndim, shape, dst, src, unit);
}

/* Permutations of axes too short to fill a tile each (grouped tiles): a
 * 6-D permutation of 4s and 8s, axes of 2 reversed, extents a tile side
 * takes only a factor of (12, 48, 96), odd extents no factor of which fits
 * whole, a padded destination, reversed source axes; every element size;
 * then random permutations of short axes. */
static void test_grouped(void **state)
{
    (void)state;
    const int64_t six[6] = {4, 4, 8, 8, 8, 8}, split[4] = {12, 48, 5, 96}, odd[4] = {7, 9, 11, 13};
    const int p6[6] = {5, 0, 4, 1, 3, 2}, p4[4] = {3, 1, 2, 0}, p4b[4] = {2, 3, 0, 1};
    int64_t twos[14];
    int reverse[14];
    for (int k = 0; k < 14; k++) {
        twos[k] = 2;
        reverse[k] = 13 - k;
    }
    const int flips[] = {1, 3};
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        check_copy(permuted_plan(s, 6, six, p6, NULL, 0, 0), 0, 0, NULL);
        check_copy(permuted_plan(s, 6, six, p6, flips, 2, 0), 0, 0, NULL);
        check_copy(permuted_plan(s, 14, twos, reverse, NULL, 0, 0), 0, 0, NULL);
        check_copy(permuted_plan(s, 14, twos, reverse, NULL, 0, 3), 0, 0, NULL);
        check_copy(permuted_plan(s, 4, split, p4, NULL, 0, 0), 0, 0, NULL);
        check_copy(permuted_plan(s, 4, split, p4b, flips, 1, 1), 0, 0, NULL);
        check_copy(permuted_plan(s, 4, odd, p4, NULL, 0, 0), 0, 0, NULL);
        check_copy(permuted_plan(s, 4, odd, p4b, NULL, 0, 2), 0, 0, NULL);
    }
    uint64_t seed = 20261202;
    for (int c = 0; c < 300; c++) {
        int ndim = 3 + (int)random_below(&seed, 6), perm[8], flip[8], nflip = 0;
        int64_t shape[8], volume = 1;
        for (int k = 0; k < ndim; k++) {
            shape[k] = 2 + random_below(&seed, 11);
            perm[k] = k;
        }
        for (int k = 0; k < ndim; k++) {
            while (volume * shape[k] > ((int64_t)1 << 15))
                shape[k] = shape[k] / 2 > 1 ? shape[k] / 2 : 1;
            volume *= shape[k];
        }
        for (int k = ndim - 1; k > 0; k--) {
            int j = (int)random_below(&seed, k + 1), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        for (int k = 0; k < ndim; k++)
            if (random_below(&seed, 5) == 0)
                flip[nflip++] = k;
        int s = itemsizes[random_below(&seed, (int64_t)NITEMSIZES)];
        check_copy(permuted_plan(s, ndim, shape, perm, flip, nflip, (int)random_below(&seed, 3)), 0,
                   0, NULL);
    }
}

static void test_random_plans(void **state)
{
    (void)state;
    uint64_t seed = 20261129;
    for (int i = 0; i < 400; i++) {
        strided_copy_plan p = random_plan(&seed);
        int shift = random_below(&seed, 4) == 0 ? 1 << random_below(&seed, 4) : 0;
        check_copy(p, shift, random_below(&seed, 4) == 0 ? shift : 0, NULL);
    }
}

static void test_streams(void **state)
{
    (void)state;
    CUstream stream;
    strided_copy_plan t = PLAN(STRIDED_COPY_TRANSPOSE, 4, (1023, 1025), (1025, 1), (1, 1023), 0);
    strided_copy_plan g = PLAN(STRIDED_COPY_GATHER, 8, (300, 301), (301, 1), (3, -900), -1);

    CU(cuStreamCreate(&stream, 0));
    check_copy(t, 0, 0, stream);
    check_copy(g, 0, 0, stream);
    CU(cuStreamDestroy(stream));
    check_copy(t, 0, 0, CU_STREAM_PER_THREAD);
    check_copy(g, 0, 0, CU_STREAM_PER_THREAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_contiguous, set_primary),
        cmocka_unit_test_setup(test_rows, set_primary),
        cmocka_unit_test_setup(test_transposes, set_primary),
        cmocka_unit_test_setup(test_tiles, set_primary),
        cmocka_unit_test_setup(test_broadcasts, set_primary),
        cmocka_unit_test_setup(test_gathers, set_primary),
        cmocka_unit_test_setup(test_high_rank, set_primary),
        cmocka_unit_test_setup(test_grouped, set_primary),
        cmocka_unit_test_setup(test_misaligned_bases, set_primary),
        cmocka_unit_test_setup(test_offsets_beyond_int32, set_primary),
        cmocka_unit_test_setup(test_random_plans, set_primary),
        cmocka_unit_test_setup(test_streams, set_primary),
    };
    int count = 0;
    int rc = gpu_test_start(&count);

    if (rc >= 0)
        return rc;
    if (!gpu_retain_devices(1, &device, &primary))
        return 1;
    /* A cmocka pattern ("test_tiles", "test_*s") runs only those tests. */
    gpu_test_filter("STRIDED_GPU_COPY_TESTS");
    rc = cmocka_run_group_tests_name("gpu copy", tests, NULL, NULL);
    printf("%ld copies checked\n", cases);
    gpu_release_devices(1, &device);
    return rc;
}
