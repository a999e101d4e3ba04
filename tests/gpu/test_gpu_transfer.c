/*
 * GPU tests of copies between host memory (pageable, pinned) and device
 * memory (strided__copy_transfer, src/copy/transfer.c, and its
 * staging, src/copy/staging.c), through strided_view_copy_ex, against
 * the real CUDA driver.
 *
 * Each case copies one view into another, to the device and back, from
 * pageable and from pinned memory: layout classes on both sides (c
 * C-contiguous, f F-contiguous, t the last two axes swapped, n every axis
 * reversed, g gapped: padded axes and every other element of the last, r
 * rows padded by a few elements, s sparse rows: every third row's worth of
 * elements; sources also b stride 0 on the first axis, l stride 0 on the
 * last, z one element for all, h gapped with stride 0 on the first axis),
 * so that every kind of plan (contiguous,
 * rows, transpose, broadcast, gather) and every path of the transfer
 * (dma, staged, footprint, dense, 2d, pack) is taken, in 2-D and 3-D, with
 * rows above and below 4 KiB, element sizes 1, 2, 4, 8, 16 (and 12), and
 * staging chunks of the default size and of 5000 bytes (so that small
 * arrays cross in many pieces, cut inside rows and elements' runs). The
 * source allocation is filled with a pattern, the destination with a
 * sentinel; afterwards the whole destination allocation (a guard of 64
 * bytes around the footprint, and the gaps) must equal what
 * strided_copy_host makes of the same bytes. Source allocations have no
 * guard, so compute-sanitizer memcheck sees any read outside them.
 *
 * Also: which path each kind of case takes; large copies (several pieces
 * of the default chunk); non-blocking copies from and to pinned memory on
 * a stream of their own; temporaries from given resources; copies on
 * several threads at once.
 *
 * The test links no CUDA library: it loads libcuda.so.1 itself for the
 * calls it makes. Without a driver or a device it prints "skipped: no CUDA
 * device" and passes. Every driver call it makes succeeds on a working
 * device, so that it runs clean under compute-sanitizer memcheck.
 * STRIDED_GPU_TRANSFER_TESTS, a cmocka test name pattern, runs only the
 * tests it matches. Device 0 is the device under test.
 */
#define _POSIX_C_SOURCE 200809L /* unsetenv */

#include "gpu_test.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/base.h"
#include "copy/testing.h"
#include "strided.h"

#define TEST_DEVICE 0
#define GUARD 64
#define SMALL_CHUNK 5000
#define MiB ((int64_t)1 << 20)

static CUdevice device;
static CUcontext primary;
static atomic_long cases;

static int set_primary(void **state)
{
    (void)state;
    strided__staging_reset(0);
    return cu.cuCtxSetCurrent(primary) == CUDA_SUCCESS ? 0 : -1;
}

static unsigned char pattern(unsigned seed, size_t i)
{
    uint32_t h = ((uint32_t)i + seed * 7919u) * 2654435761u;
    return (unsigned char)((h >> 24) ^ (h >> 11) ^ (uint32_t)(i >> 20));
}

/* Layouts of a class (see the header comment) for a shape of 1 to 3 axes. */
static strided_layout class_layout(char c, int ndim, const int64_t *shape, int isz,
                                   const char *file, int line)
{
    int64_t ext[3] = {1, 1, 1}, strides[3] = {0, 0, 0}, step = 1;
    int last = ndim - 1;
    strided_layout l;

    for (int k = 0; k < ndim; k++)
        ext[k] = shape[k];
    if (c == 't' && ndim >= 2) {
        ext[last] = shape[last - 1];
        ext[last - 1] = shape[last];
    } else if (c == 'g' || c == 'h') {
        for (int k = 0; k < last; k++)
            ext[k] += 2;
        ext[last] = 2 * shape[last] + 2;
    } else if (c == 'r') {
        ext[last] += 3;
    } else if (c == 's') {
        ext[last] *= 3;
    } else if (c == 'b' || c == 'z') {
        ext[0] = 1;
        if (c == 'z')
            for (int k = 0; k < ndim; k++)
                ext[k] = 1;
    } else if (c == 'l') {
        ext[last] = 1;
    }
    if (c == 'f') {
        for (int k = 0; k < ndim; k++) {
            strides[k] = step;
            step *= ext[k];
        }
    } else {
        for (int k = last; k >= 0; k--) {
            strides[k] = step;
            step *= ext[k];
        }
    }
    if (c == 't' && ndim >= 2) {
        int64_t s = strides[last];
        strides[last] = strides[last - 1];
        strides[last - 1] = s;
    } else if (c == 'g' || c == 'h') {
        strides[last] *= 2;
        if (c == 'h')
            strides[0] = 0;
    } else if (c == 'n') {
        for (int k = 0; k < ndim; k++)
            strides[k] = -strides[k];
    } else if (c == 'b') {
        strides[0] = 0;
    } else if (c == 'z') {
        for (int k = 0; k < ndim; k++)
            strides[k] = 0;
    } else if (c == 'l') {
        strides[last] = 0;
    }
    if (strided_layout_init(&l, ndim, shape, strides, isz) != STRIDED_OK)
        fail_at(file, line, "class %c: %s\n", c, strided_last_error());
    return l;
}

typedef enum kind { PAGEABLE, PINNED, DEVICE } kind;
static const char *const kind_names[] = {"pageable", "pinned", "device"};

/* Failures inside a case are written here and reported by the caller, so
 * that cases can run on threads other than cmocka's. */
typedef struct report {
    char text[1600];
    bool failed;
} report;

static bool failed(report *r, const char *fmt, ...) STRIDED_PRINTF(2, 3);

static bool failed(report *r, const char *fmt, ...)
{
    va_list ap;
    if (r->failed)
        return false;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof r->text, fmt, ap);
    va_end(ap);
    r->failed = true;
    return false;
}

/* A driver call inside a case. */
static bool cu_ok(report *r, CUresult rc, const char *what)
{
    const char *name = "?";
    if (rc == CUDA_SUCCESS)
        return true;
    if (cu.cuGetErrorName(rc, &name) != CUDA_SUCCESS)
        name = "?";
    return failed(r, "%s failed: %s (%d)", what, name, rc);
}

/* One side of a copy: an allocation of the footprint plus guard bytes on
 * either side, and its view. */
typedef struct side {
    kind k;
    strided_layout layout;
    unsigned char *host; /* pageable and pinned */
    CUdeviceptr dev;     /* device */
    size_t bytes, origin;
    strided_view view;
} side;

static bool side_new(side *s, kind k, const strided_layout *l, size_t guard, report *r)
{
    int64_t lo = 0, hi = -1;
    memset(s, 0, sizeof *s);
    s->k = k;
    s->layout = *l;
    strided_layout_offset_bounds(l, &lo, &hi);
    s->bytes = (size_t)((hi - lo + 1) * l->itemsize) + 2 * guard;
    s->origin = guard - (size_t)(lo * l->itemsize);
    strided_device dev = {STRIDED_DEVICE_CPU, 0};
    void *element0 = NULL;
    if (k == DEVICE) {
        if (!cu_ok(r, cu.cuMemAlloc(&s->dev, s->bytes), "cuMemAlloc"))
            return false;
        dev = (strided_device){STRIDED_DEVICE_CUDA, TEST_DEVICE};
        element0 = (void *)(uintptr_t)(s->dev + s->origin);
    } else if (k == PINNED) {
        void *p = NULL;
        if (!cu_ok(r, cu.cuMemHostAlloc(&p, s->bytes, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc"))
            return false;
        s->host = p;
        dev = (strided_device){STRIDED_DEVICE_CUDA_HOST, 0};
        element0 = s->host + s->origin;
    } else {
        s->host = malloc(s->bytes);
        if (s->host == NULL)
            return failed(r, "out of host memory (%zu bytes)", s->bytes);
        element0 = s->host + s->origin;
    }
    if (strided_view_wrap(element0, l, NULL, false, &dev, NULL, NULL, &s->view) != STRIDED_OK)
        return failed(r, "strided_view_wrap: %s", strided_last_error());
    strided_memory_kind want = k == DEVICE   ? STRIDED_MEMORY_DEVICE
                               : k == PINNED ? STRIDED_MEMORY_PINNED
                                             : STRIDED_MEMORY_HOST;
    if (strided_buffer_memory_info(s->view.buffer).kind != want)
        return failed(r, "a %s view is not classified as %s memory", kind_names[k], kind_names[k]);
    return true;
}

static bool side_write(side *s, const unsigned char *bytes, report *r)
{
    if (s->k == DEVICE)
        return cu_ok(r, cu.cuMemcpyHtoD(s->dev, bytes, s->bytes), "cuMemcpyHtoD");
    memcpy(s->host, bytes, s->bytes);
    return true;
}

static bool side_read(const side *s, unsigned char *bytes, report *r)
{
    if (s->k == DEVICE)
        return cu_ok(r, cu.cuMemcpyDtoH(bytes, s->dev, s->bytes), "cuMemcpyDtoH");
    memcpy(bytes, s->host, s->bytes);
    return true;
}

static void side_free(side *s, report *r)
{
    strided_view_release(&s->view);
    if (s->k == DEVICE && s->dev != 0)
        (void)cu_ok(r, cu.cuMemFree(s->dev), "cuMemFree");
    else if (s->k == PINNED && s->host != NULL)
        (void)cu_ok(r, cu.cuMemFreeHost(s->host), "cuMemFreeHost");
    else
        free(s->host);
}

/* "device (37,61):(61,1) <- pinned (37,61):(1,37), itemsize 4" */
static void describe(char *buf, size_t size, kind dk, const strided_layout *d, kind sk,
                     const strided_layout *s)
{
    char a[512], b[512];
    strided_layout_format(d, a, sizeof a);
    strided_layout_format(s, b, sizeof b);
    snprintf(buf, size, "%s %s <- %s %s, itemsize %d", kind_names[dk], a, kind_names[sk], b,
             (int)d->itemsize);
}

/* Copy a view of layout sl in memory sk into one of layout dl in memory dk
 * on stream with flags, and compare every byte of the destination
 * allocation with strided_copy_host's result; path, when not NULL, is the
 * transfer path expected. False (with why in r) on any failure. */
static bool run_case(kind dk, const strided_layout *dl, kind sk, const strided_layout *sl,
                     CUstream stream, unsigned flags, const char *path,
                     const strided_copy_temporaries *temporaries, report *r)
{
    char what[1200];
    side d, s;
    unsigned seed = (unsigned)atomic_fetch_add(&cases, 1);
    unsigned char *src = NULL, *want = NULL, *got = NULL;
    describe(what, sizeof what, dk, dl, sk, sl);
    memset(&d, 0, sizeof d);
    memset(&s, 0, sizeof s);
    bool ok = side_new(&d, dk, dl, GUARD, r) && side_new(&s, sk, sl, 0, r);
    if (ok) {
        src = malloc(s.bytes);
        want = malloc(d.bytes);
        got = malloc(d.bytes);
        ok = src != NULL && want != NULL && got != NULL;
        if (!ok)
            failed(r, "out of host memory");
    }
    if (ok) {
        for (size_t i = 0; i < s.bytes; i++)
            src[i] = pattern(seed, i);
        memset(want, SENTINEL, d.bytes);
        ok = side_write(&s, src, r) && side_write(&d, want, r);
    }
    if (ok && strided_copy_host(want + d.origin, dl, src + s.origin, sl, 1) != STRIDED_OK)
        ok = failed(r, "%s: reference: %s", what, strided_last_error());
    if (ok && strided_view_copy_ex(&d.view, &s.view, stream, flags, temporaries) != STRIDED_OK)
        ok = failed(r, "%s: %s", what, strided_last_error());
    const char *taken = strided__copy_transfer_path();
    if (ok && path != NULL && strcmp(taken, path) != 0)
        ok = failed(r, "%s: path %s, expected %s", what, taken, path);
    if (ok && (flags & STRIDED_COPY_NONBLOCKING))
        ok = cu_ok(r, cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    if (ok)
        ok = side_read(&d, got, r);
    for (size_t i = 0; ok && i < d.bytes; i++)
        if (got[i] != want[i])
            ok = failed(r,
                        "%s (path %s): destination byte %zu (element 0 at %zu): 0x%02x, "
                        "expected 0x%02x%s",
                        what, taken, i, d.origin, got[i], want[i],
                        want[i] == SENTINEL ? " (untouched)" : "");
    /* The source is never written. */
    if (ok)
        ok = side_read(&s, src, r);
    for (size_t i = 0; ok && i < s.bytes; i++)
        if (src[i] != pattern(seed, i))
            ok = failed(r, "%s: source byte %zu changed", what, i);
    free(src);
    free(want);
    free(got);
    side_free(&d, r);
    side_free(&s, r);
    return ok && !r->failed;
}

static void check_copy_at(kind dk, const strided_layout *dl, kind sk, const strided_layout *sl,
                          CUstream stream, unsigned flags, const char *path,
                          const strided_copy_temporaries *temporaries, const char *file, int line)
{
    report r = {"", false};
    if (!run_case(dk, dl, sk, sl, stream, flags, path, temporaries, &r))
        fail_at(file, line, "%s\n", r.text);
}

#define check_copy(dk, dst, sk, src, stream, flags, path) \
    check_copy_at((dk), &(dst), (sk), &(src), (stream), (flags), (path), NULL, __FILE__, __LINE__)

#define LAYOUT(c, shape, isz) class_layout((c), N64 shape, I64 shape, (isz), __FILE__, __LINE__)

/* Class pairs (destination, source): every kind of plan. */
static const char *const pairs[] = {
    "cc", "ff", "nn",             /* contiguous */
    "cr", "rc", "cs", "sc", "ss", /* rows */
    "ct", "tc", "cf", "fc", "tn", /* transposes */
    "cl", "gl", "cb", "nb", "cz", /* broadcasts */
    "ch", "gh",                   /* sparse broadcasts */
    "cg", "gc", "gn", "ng", "tg", /* gathers */
    "rg", "gs",                   /* both sides gapped */
};
/* (6, 1031): rows above 4 KiB from 4-byte elements; (3, 5, 700): pieces
 * of 5000 bytes cut the middle axis. */
static const int64_t shapes[][3] = {{37, 61, 0}, {5, 9, 23}, {6, 1031, 0}, {3, 5, 700}, {1, 1, 0}};
static const int shape_dims[] = {2, 3, 2, 3, 2};
static const int itemsizes[] = {1, 2, 4, 8, 16, 12};

#define NPAIRS (sizeof pairs / sizeof pairs[0])
#define NSHAPES (sizeof shapes / sizeof shapes[0])
#define NITEMSIZES (sizeof itemsizes / sizeof itemsizes[0])

/* Every pair x shape x itemsize x pageable/pinned x to/from the device. */
static void sweep(void)
{
    for (size_t p = 0; p < NPAIRS; p++)
        for (size_t j = 0; j < NSHAPES; j++)
            for (size_t i = 0; i < NITEMSIZES; i++)
                for (int host = PAGEABLE; host <= PINNED; host++) {
                    int isz = itemsizes[i], nd = shape_dims[j];
                    char dc = pairs[p][0], sc = pairs[p][1];
                    strided_layout dst = class_layout(dc, nd, shapes[j], isz, __FILE__, __LINE__);
                    strided_layout src = class_layout(sc, nd, shapes[j], isz, __FILE__, __LINE__);
                    check_copy((kind)DEVICE, dst, (kind)host, src, NULL, STRIDED_COPY_DEFAULT,
                               NULL);
                    check_copy((kind)host, dst, (kind)DEVICE, src, NULL, STRIDED_COPY_DEFAULT,
                               NULL);
                }
}

static void test_classes(void **state)
{
    (void)state;
    strided__staging_reset(0);
    sweep();
}

static void test_classes_in_small_pieces(void **state)
{
    (void)state;
    strided__staging_reset(SMALL_CHUNK);
    sweep();
    strided__staging_reset(0);
}

/* Which path each kind of case takes. */
static void test_paths(void **state)
{
    (void)state;
    strided_layout c = LAYOUT('c', (40, 1100), 4), t = LAYOUT('t', (40, 1100), 4);
    strided_layout s = LAYOUT('s', (40, 1100), 4), g = LAYOUT('g', (40, 1100), 4);
    strided_layout r = LAYOUT('r', (40, 1100), 4), b = LAYOUT('b', (40, 1100), 4);
    strided_layout s_short = LAYOUT('s', (40, 100), 4), c_short = LAYOUT('c', (40, 100), 4);
    strided_layout c3 = LAYOUT('c', (5, 40, 1100), 4), g3 = LAYOUT('g', (5, 40, 1100), 4);
    strided_layout repeated = LAYOUT('h', (5, 40, 1100), 4);
    strided__staging_reset(SMALL_CHUNK);
    for (int host = PAGEABLE; host <= PINNED; host++) {
        bool pinned = host == PINNED;
        kind h = (kind)host;
        check_copy(DEVICE, c, h, c, NULL, 0, pinned ? "dma" : "staged");
        check_copy(h, c, DEVICE, c, NULL, 0, pinned ? "dma" : "staged");
        /* Dense sources cross as their footprint; broadcasts, small. */
        check_copy(DEVICE, c, h, t, NULL, 0, "footprint");
        check_copy(DEVICE, c, h, r, NULL, 0, "footprint");
        check_copy(DEVICE, g, h, b, NULL, 0, "footprint");
        /* Dense destinations take a dense temporary. */
        check_copy(h, t, DEVICE, c, NULL, 0, "dense");
        check_copy(h, c, DEVICE, g, NULL, 0, "dense");
        /* Sparse long rows: one 2-D copy from pinned memory. */
        check_copy(DEVICE, c, h, s, NULL, 0, pinned ? "2d" : "pack");
        check_copy(h, s, DEVICE, c, NULL, 0, pinned ? "2d" : "pack");
        check_copy(h, r, DEVICE, c, NULL, 0, pinned ? "2d" : "pack");
        /* Rows under 512 bytes (400 here) and gathers: packed. */
        check_copy(DEVICE, c_short, h, s_short, NULL, 0, "pack");
        check_copy(h, s_short, DEVICE, c_short, NULL, 0, "pack");
        check_copy(DEVICE, c, h, g, NULL, 0, "pack");
        check_copy(DEVICE, t, h, g, NULL, 0, "pack");
        check_copy(h, g, DEVICE, c, NULL, 0, "pack");
        check_copy(h, g, DEVICE, t, NULL, 0, "pack");
        /* Gapped on both sides: a device temporary and a device plan. */
        check_copy(DEVICE, r, h, g, NULL, 0, "pack");
        check_copy(h, r, DEVICE, g, NULL, 0, "pack");
        /* A sparse source repeated along its first axis: its distinct
         * elements are packed, the device plan repeats them. */
        check_copy(DEVICE, c3, h, repeated, NULL, 0, "pack");
        check_copy(DEVICE, g3, h, repeated, NULL, 0, "pack");
    }
    strided__staging_reset(0);
}

/* Large copies: several pieces of the default 32 MiB chunk. */
static void test_large(void **state)
{
    (void)state;
    strided__staging_reset(0);
    strided_layout c = LAYOUT('c', (4096, 4096), 4), t = LAYOUT('t', (4096, 4096), 4);
    strided_layout big = LAYOUT('c', (96 * MiB + 7), 1);
    strided_layout g = LAYOUT('g', (2048, 1024), 8), cg = LAYOUT('c', (2048, 1024), 8);
    for (int host = PAGEABLE; host <= PINNED; host++) {
        kind h = (kind)host;
        check_copy(DEVICE, big, h, big, NULL, 0, host == PINNED ? "dma" : "staged");
        check_copy(h, big, DEVICE, big, NULL, 0, host == PINNED ? "dma" : "staged");
        check_copy(DEVICE, c, h, t, NULL, 0, "footprint");
        check_copy(h, t, DEVICE, c, NULL, 0, "dense");
        check_copy(DEVICE, cg, h, g, NULL, 0, "pack");
        check_copy(h, g, DEVICE, cg, NULL, 0, "pack");
    }
}

/* Copies between pinned memory and the device that do not block: queued
 * on a stream of their own (and the per-thread default stream), complete
 * once the stream is. */
static void test_non_blocking_pinned(void **state)
{
    (void)state;
    CUstream stream;
    strided_layout c = LAYOUT('c', (300, 257), 8), t = LAYOUT('t', (300, 257), 8);
    strided_layout s = LAYOUT('s', (300, 600), 8), c6 = LAYOUT('c', (300, 600), 8);
    strided_layout b = LAYOUT('b', (300, 257), 8);
    CU(cuStreamCreate(&stream, 0));
    CUstream streams[2] = {stream, CU_STREAM_PER_THREAD};
    for (int i = 0; i < 2; i++) {
        check_copy(DEVICE, c, PINNED, c, streams[i], STRIDED_COPY_NONBLOCKING, "dma");
        check_copy(DEVICE, c, PINNED, t, streams[i], STRIDED_COPY_NONBLOCKING, "footprint");
        check_copy(DEVICE, c, PINNED, b, streams[i], STRIDED_COPY_NONBLOCKING, "footprint");
        check_copy(PINNED, t, DEVICE, c, streams[i], STRIDED_COPY_NONBLOCKING, "dense");
        check_copy(DEVICE, c6, PINNED, s, streams[i], STRIDED_COPY_NONBLOCKING, "2d");
        check_copy(PINNED, s, DEVICE, c6, streams[i], STRIDED_COPY_NONBLOCKING, "2d");
        /* Pageable and packing paths work on the host: right either way. */
        check_copy(DEVICE, c, PAGEABLE, t, streams[i], STRIDED_COPY_NONBLOCKING, "footprint");
        check_copy(PAGEABLE, c, DEVICE, t, streams[i], STRIDED_COPY_NONBLOCKING, "dense");
    }
    CU(cuStreamDestroy(stream));
}

/* Temporaries from given resources: pinned staging and device memory. */
static void test_given_resources(void **state)
{
    (void)state;
    strided_memory_resource *pinned = NULL, *devmem = NULL;
    assert_ok(strided_pinned_resource_create(&pinned));
    assert_ok(strided_device_resource_create(TEST_DEVICE, &devmem));
    strided_copy_temporaries both = {pinned, devmem};
    strided_layout c = LAYOUT('c', (123, 77), 4), t = LAYOUT('t', (123, 77), 4);
    strided_layout g = LAYOUT('g', (123, 77), 4);
    strided__staging_reset(SMALL_CHUNK);
    check_copy_at(DEVICE, &c, PAGEABLE, &t, NULL, 0, "footprint", &both, __FILE__, __LINE__);
    check_copy_at(PAGEABLE, &t, DEVICE, &c, NULL, 0, "dense", &both, __FILE__, __LINE__);
    check_copy_at(DEVICE, &t, PAGEABLE, &g, NULL, 0, "pack", &both, __FILE__, __LINE__);
    check_copy_at(PAGEABLE, &g, DEVICE, &t, NULL, 0, "pack", &both, __FILE__, __LINE__);
    check_copy_at(PINNED, &g, DEVICE, &t, NULL, 0, "pack", &both, __FILE__, __LINE__);
    strided__staging_reset(0);
    strided_memory_resource_release(pinned);
    strided_memory_resource_release(devmem);
}

/* Many copies at once: more than the pool keeps. */
typedef struct worker {
    int index;
    long done;
    report r;
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    char dc = "cgtr"[w->index % 4], sc = "tcgs"[w->index % 4];
    int64_t shape[2] = {97 + w->index, 131};
    strided_layout dst = class_layout(dc, 2, shape, 4, __FILE__, __LINE__);
    strided_layout src = class_layout(sc, 2, shape, 4, __FILE__, __LINE__);
    if (!cu_ok(&w->r, cu.cuCtxSetCurrent(primary), "cuCtxSetCurrent"))
        return NULL;
    for (int i = 0; i < 10; i++) {
        if (!run_case(DEVICE, &dst, PAGEABLE, &src, CU_STREAM_PER_THREAD, 0, NULL, NULL, &w->r) ||
            !run_case(PAGEABLE, &dst, DEVICE, &src, CU_STREAM_PER_THREAD, 0, NULL, NULL, &w->r))
            return NULL;
        w->done += 2;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    enum { N = 8 };
    pthread_t threads[N];
    worker w[N];
    strided__staging_reset(SMALL_CHUNK);
    for (int i = 0; i < N; i++) {
        w[i] = (worker){i, 0, {"", false}};
        assert_int_equal(pthread_create(&threads[i], NULL, run_worker, &w[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < N; i++) {
        if (w[i].r.failed)
            fail_msg("thread %d: %s", i, w[i].r.text);
        assert_int_equal(w[i].done, 20);
    }
    strided__staging_reset(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_paths, set_primary),
        cmocka_unit_test_setup(test_classes, set_primary),
        cmocka_unit_test_setup(test_classes_in_small_pieces, set_primary),
        cmocka_unit_test_setup(test_large, set_primary),
        cmocka_unit_test_setup(test_non_blocking_pinned, set_primary),
        cmocka_unit_test_setup(test_given_resources, set_primary),
        cmocka_unit_test_setup(test_threads, set_primary),
    };
    int count = 0, rc;

    unsetenv("STRIDED_STAGING_CHUNK_BYTES");
    rc = gpu_test_start(&count);
    if (rc >= 0)
        return rc;
    if (!gpu_retain_devices(1, &device, &primary))
        return 1;
    gpu_test_filter("STRIDED_GPU_TRANSFER_TESTS");
    rc = cmocka_run_group_tests_name("gpu transfer", tests, NULL, NULL);
    printf("%ld copies checked\n", (long)atomic_load(&cases));
    strided__staging_reset(0);
    gpu_release_devices(1, &device);
    return rc;
}
