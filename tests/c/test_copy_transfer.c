/*
 * test_copy_transfer.c: copies between host memory (pageable, pinned) and
 * device memory (strided__copy_transfer, src/copy/transfer.c, and its
 * staging, src/copy/staging.c), through strided_view_copy_ex, against
 * the fake CUDA driver.
 *
 * The fake's memory is ordinary host memory and its copies move bytes when
 * asked (fake_cuda_move_bytes), but it runs no kernel. So each case checks
 * which path the copy took (strided__copy_transfer_path and the driver
 * calls it made: DMAs, 2-D copies, launches and their kernels, device
 * temporaries, events), and the bytes of everything the host and the DMAs
 * do: destinations of paths without a device step are compared whole with
 * strided_copy_host's result (guard bytes and gaps included); device
 * temporaries come from a recording resource, which fills each one with a
 * known pattern when it is allocated and keeps what it holds when it is
 * freed, so that what went into a temporary (a footprint, a host gather)
 * and what came out of it (to a dense or scattered host destination) are
 * checked too. Staging runs with small chunks (strided__staging_reset) so
 * that copies of a few KiB cross in several pieces.
 *
 * Every driver failure a transfer can meet is injected at every call
 * (fake_cuda_fail_after), and must be reported with nothing left behind:
 * no device or pinned bytes, no events, the caller's context back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include "test_cuda.h"
#include "test_util.h"

#include "copy/staging.h"
#include "copy/testing.h"
#include "cuda/cuda_api.h"
#include "cuda/driver.h"
#include "strided.h"

#define STREAM ((void *)0x1000)
#define GUARD 64 /* bytes around every allocation's footprint */
#define SMALL_CHUNK 4096

/* The fake's controls beyond test_cuda.h's. */
static fake_cuda_fail_after_fn fail_after;
static fake_cuda_move_bytes_fn move_bytes;
static fake_cuda_set_max_pitch_fn set_max_pitch;
static fake_cuda_last_launch_fn last_launch;

static void find_controls(void)
{
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        exit(1);
    }
    fake_symbol_(lib, "fake_cuda_fail_after", &fail_after);
    fake_symbol_(lib, "fake_cuda_move_bytes", &move_bytes);
    fake_symbol_(lib, "fake_cuda_set_max_pitch", &set_max_pitch);
    fake_symbol_(lib, "fake_cuda_last_launch", &last_launch);
}

/* A clean start: the staging pool emptied (before the fake forgets its
 * pinned memory) with chunks of chunk bytes, the fake reset, copies that
 * move bytes. */
static void fresh(size_t chunk)
{
    strided__staging_reset(chunk);
    fake.reset(2, 0, 1);
    move_bytes(1);
}

/* Nothing left: the pool emptied, no device or pinned bytes, no events, no
 * context current on this thread. */
#define assert_nothing_left() check_nothing_left_(__FILE__, __LINE__)

static void check_nothing_left_(const char *file, int line)
{
    strided__staging_reset(SMALL_CHUNK);
    if (fake.live_bytes() != 0 || fake.live_events() != 0 || fake.current_context() != NULL)
        fail_at(file, line, "left behind: %ld bytes, %ld events, context %p\n", fake.live_bytes(),
                fake.live_events(), fake.current_context());
}

static unsigned char pattern(unsigned seed, size_t i)
{
    uint32_t h = ((uint32_t)i + seed * 7919u) * 2654435761u;
    return (unsigned char)((h >> 24) ^ (h >> 11));
}

/* Memory of one kind under one side of a copy. */
typedef enum kind { PAGEABLE, PINNED, DEVICE } kind;

typedef struct side {
    kind k;
    strided_layout layout;
    unsigned char *base; /* GUARD, the footprint, GUARD */
    size_t bytes;
    size_t origin; /* byte offset of element 0 */
    strided_view view;
} side;

/* A side of kind k over a new allocation, filled with pattern(seed) (seed
 * 0: SENTINEL); pinned and device memory are made known to the fake. */
static side side_new(kind k, int itemsize, int ndim, const int64_t *shape, const int64_t *strides)
{
    side s;
    int64_t lo = 0, hi = -1;
    memset(&s, 0, sizeof s);
    s.k = k;
    assert_ok(strided_layout_init(&s.layout, ndim, shape, strides, itemsize));
    strided_layout_offset_bounds(&s.layout, &lo, &hi);
    s.bytes = (size_t)((hi - lo + 1) * itemsize) + 2 * GUARD;
    s.origin = (size_t)(GUARD - lo * itemsize);
    s.base = aligned_alloc(256, (s.bytes + 255) / 256 * 256);
    assert_non_null(s.base);
    memset(s.base, SENTINEL, s.bytes);
    if (k != PAGEABLE) {
        fake_cuda_range r = {(uintptr_t)s.base,
                             s.bytes,
                             k == PINNED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE,
                             0,
                             0,
                             (uintptr_t)s.base,
                             NULL};
        fake.add_range(&r);
    }
    strided_device dev = {k == PAGEABLE ? STRIDED_DEVICE_CPU
                          : k == PINNED ? STRIDED_DEVICE_CUDA_HOST
                                        : STRIDED_DEVICE_CUDA,
                          0};
    assert_ok(strided_view_wrap(s.base + s.origin, &s.layout, NULL, false, &dev, NULL, NULL,
                                &s.view));
    /* The copy's path depends on the kind the driver reports: a side must
     * be of the kind the case means. */
    strided_memory_kind want = k == PAGEABLE ? STRIDED_MEMORY_HOST
                               : k == PINNED ? STRIDED_MEMORY_PINNED
                                             : STRIDED_MEMORY_DEVICE;
    assert_int_equal(strided_buffer_memory_info(s.view.buffer).kind, want);
    return s;
}

#define SIDE(k, itemsize, shape, strides) \
    side_new((k), (itemsize), N64 shape, I64 shape, I64 strides)

static void fill(side *s, unsigned seed)
{
    for (size_t i = 0; i < s->bytes; i++)
        s->base[i] = pattern(seed, i);
}

/* Free a side; the fake forgets its memory first, as the driver forgets
 * memory that is freed (else a later allocation at the same address would
 * pass for this memory). */
static void side_free(side *s)
{
    strided_view_release(&s->view);
    if (s->k != PAGEABLE)
        fake.remove_range((uintptr_t)s->base);
    free(s->base);
    s->base = NULL;
}

static unsigned char *elem0(const side *s)
{
    return s->base + s->origin;
}

static inline strided_copy_plan plan_of_sides(const side *d, const side *s)
{
    strided_copy_plan p;
    assert_ok(strided_copy_plan_make(&d->layout, &s->layout, &p));
    return p;
}

/* Compare n bytes with what was expected, naming the first difference. */
#define assert_bytes(got, want, n) check_bytes_((got), (want), (n), __FILE__, __LINE__)

static void check_bytes_(const unsigned char *got, const unsigned char *want, size_t n,
                         const char *file, int line)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_at(file, line, "byte %zu of %zu: 0x%02x, expected 0x%02x\n", i, n, got[i],
                    want[i]);
}

/* d's bytes after copying s into it on the host (its guards and gaps as
 * they are now). Freed by the caller. */
static unsigned char *expected_copy(const side *d, const side *s)
{
    unsigned char *want = malloc(d->bytes);
    assert_non_null(want);
    memcpy(want, d->base, d->bytes);
    assert_ok(strided_copy_host(want + d->origin, &d->layout, elem0(s), &s->layout, 1));
    return want;
}

/* Assert that d holds what copying s into it gives. */
#define assert_copied(d, s) check_copied_(&(d), &(s), __FILE__, __LINE__)

static void check_copied_(const side *d, const side *s, const char *file, int line)
{
    unsigned char *want = expected_copy(d, s);
    check_bytes_(d->base, want, d->bytes, file, line);
    free(want);
}

static strided_status copy(side *d, side *s, unsigned flags,
                           const strided_copy_temporaries *temporaries)
{
    return strided_view_copy_ex(&d->view, &s->view, STREAM, flags, temporaries);
}

#define assert_path(name) assert_string_equal(strided__copy_transfer_path(), (name))

/* A memory resource that records its allocations: each is filled with
 * pattern(TEMP_SEED) when made, and what it holds when freed is kept. */
#define TEMP_SEED 99
#define RECORDS 8

typedef struct recorder {
    int allocs, frees;
    size_t sizes[RECORDS];
    void *streams[RECORDS];
    unsigned char *ptrs[RECORDS];
    unsigned char *kept[RECORDS]; /* contents when freed */
    bool device;                  /* hands out device memory, made known to the fake */
} recorder;

static strided_status record_allocate(void *self, size_t size, void *stream, void **out)
{
    recorder *r = self;
    if (r->allocs == RECORDS)
        return strided_set_last_error(STRIDED_ERR_OUT_OF_MEMORY, "recorder", "full");
    unsigned char *m = aligned_alloc(256, (size + 255) / 256 * 256);
    if (m == NULL)
        return strided_set_last_error(STRIDED_ERR_OUT_OF_MEMORY, "recorder", "no memory");
    for (size_t i = 0; i < size; i++)
        m[i] = pattern(TEMP_SEED, i);
    /* Copies classify a user resource's memory through the driver: the
     * fake must know device memory as such. */
    if (r->device) {
        fake_cuda_range range = {(uintptr_t)m, size, CU_MEMORYTYPE_DEVICE, 0, 0,
                                 (uintptr_t)m, NULL};
        fake.add_range(&range);
    }
    r->sizes[r->allocs] = size;
    r->streams[r->allocs] = stream;
    r->ptrs[r->allocs] = m;
    r->allocs++;
    *out = m;
    return STRIDED_OK;
}

static void record_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    recorder *r = self;
    (void)stream;
    for (int i = 0; i < r->allocs; i++)
        if (r->ptrs[i] == ptr) {
            r->kept[i] = malloc(size);
            memcpy(r->kept[i], ptr, size);
        }
    r->frees++;
    /* The driver forgets freed memory: so must the fake, or the next
     * allocation at this address (a pinned side, say) would pass for
     * device memory. */
    if (r->device)
        fake.remove_range((uintptr_t)ptr);
    free(ptr);
}

static const strided_memory_resource_ops record_ops = {
    .allocate = record_allocate, .deallocate = record_deallocate, .destroy = NULL};

/* A recording resource of device memory (device) or host memory. */
static strided_memory_resource *recording(recorder *r, bool device)
{
    strided_memory_resource *mr = NULL;
    strided_memory_resource_props props = {!device, device, false, device ? 0 : -1, false};
    memset(r, 0, sizeof *r);
    r->device = device;
    assert_ok(strided_memory_resource_create(&record_ops, r, &props, &mr));
    return mr;
}

static void recorder_free(recorder *r, strided_memory_resource *mr)
{
    strided_memory_resource_release(mr);
    for (int i = 0; i < RECORDS; i++)
        free(r->kept[i]);
    memset(r, 0, sizeof *r);
}

/* Calls of one entry point. */
#define calls(name) fake.calls(name)

/* Contiguous runs. */

static void test_pinned_contiguous_is_one_dma(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        fresh(SMALL_CHUNK);
        side h = SIDE(PINNED, 4, (37, 51), (51, 1));
        side d = SIDE(DEVICE, 4, (37, 51), (51, 1));
        side *dst = dir == 0 ? &d : &h, *src = dir == 0 ? &h : &d;
        fill(src, 1);
        assert_ok(copy(dst, src, STRIDED_COPY_NONBLOCKING, NULL));
        assert_path("dma");
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuMemcpyAsync"), 1);
        assert_ptr_equal(fake.last_stream("cuMemcpyAsync"), STREAM);
        assert_int_equal(calls("cuLaunchKernel") + calls("cuMemHostAlloc") +
                             calls("cuMemAllocFromPoolAsync") + calls("cuStreamSynchronize") +
                             calls("cuEventCreate"),
                         0);
        /* Blocking (the default): the stream is waited for once. */
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_int_equal(calls("cuStreamSynchronize"), 1);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

static void test_pageable_contiguous_is_staged(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        fresh(0); /* the default chunk */
        side h = SIDE(PAGEABLE, 8, (100, 3), (3, 1));
        side d = SIDE(DEVICE, 8, (100, 3), (3, 1));
        side *dst = dir == 0 ? &d : &h, *src = dir == 0 ? &h : &d;
        fill(src, 2);
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_path("staged");
        assert_copied(*dst, *src);
        /* One pool set, one piece, one event. */
        assert_int_equal(calls("cuMemHostAlloc"), 1);
        assert_int_equal(calls("cuMemcpyAsync"), 1);
        assert_int_equal(calls("cuEventCreate"), 1);
        assert_int_equal(calls("cuEventRecord"), 1);
        assert_int_equal(calls("cuEventSynchronize"), 1);
        assert_int_equal(fake.live_events(), 0);
        assert_int_equal(calls("cuLaunchKernel") + calls("cuMemAllocFromPoolAsync"), 0);
        /* The set is reused. */
        fill(src, 3);
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuMemHostAlloc"), 1);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

static void test_staging_pipeline_in_pieces(void **state)
{
    (void)state;
    /* 17384 bytes in chunks of 4096: five pieces, two buffers. */
    fresh(SMALL_CHUNK);
    side h = SIDE(PAGEABLE, 1, (17384), (1));
    side d = SIDE(DEVICE, 1, (17384), (1));
    fill(&h, 4);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL));
    assert_path("staged");
    assert_copied(d, h);
    assert_int_equal(calls("cuMemcpyAsync"), 5);
    assert_int_equal(calls("cuEventCreate"), 2);
    assert_int_equal(calls("cuEventRecord"), 5);
    /* Before refilling a buffer (pieces 2, 3, 4), and the last DMA. */
    assert_int_equal(calls("cuEventSynchronize"), 4);
    /* Before the host reads, and the blocking wait. */
    assert_int_equal(calls("cuStreamSynchronize"), 2);
    assert_int_equal(fake.live_events(), 0);

    fresh(SMALL_CHUNK);
    fill(&d, 5);
    memset(h.base, SENTINEL, h.bytes);
    assert_ok(copy(&h, &d, STRIDED_COPY_NONBLOCKING, NULL));
    assert_path("staged");
    assert_copied(h, d);
    assert_int_equal(calls("cuMemcpyAsync"), 5);
    assert_int_equal(calls("cuEventRecord"), 5);
    /* Each piece is waited for before its scatter. */
    assert_int_equal(calls("cuEventSynchronize"), 5);
    assert_int_equal(calls("cuStreamSynchronize"), 0);
    side_free(&h);
    side_free(&d);
    assert_nothing_left();
}

/* Sparse sources and destinations: two-dimensional copies and packing. */

static void test_long_sparse_rows_from_pinned_memory_are_one_2d_copy(void **state)
{
    (void)state;
    /* 7 rows of 1100 floats (4400 bytes), every third row. */
    for (int dir = 0; dir < 2; dir++) {
        fresh(SMALL_CHUNK);
        side h = SIDE(PINNED, 4, (7, 1100), (3300, 1));
        side d = SIDE(DEVICE, 4, (7, 1100), (1100, 1));
        side *dst = dir == 0 ? &d : &h, *src = dir == 0 ? &h : &d;
        fill(src, 6);
        assert_ok(copy(dst, src, STRIDED_COPY_NONBLOCKING, NULL));
        assert_path("2d");
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuMemcpy2DAsync"), 1);
        assert_ptr_equal(fake.last_stream("cuMemcpy2DAsync"), STREAM);
        assert_int_equal(calls("cuMemcpyAsync") + calls("cuLaunchKernel") +
                             calls("cuMemAllocFromPoolAsync") + calls("cuMemHostAlloc"),
                         0);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

/* Copies whose device step runs a kernel cannot run in a libstrided built
 * without its kernels (no nvcc): their tests skip there. */
static void skip_without_kernels(void)
{
#if !defined(STRIDED_HAVE_KERNELS)
    print_message("this libstrided was built without its CUDA kernels\n");
    skip();
#endif
}

/* To the device, pinned rows at twice their length (a footprint twice the
 * payload): one 2-D copy of 4 KiB or longer rows beats DMAing the
 * footprint; 512-byte rows do not (26.5 against 27.4 GB/s), nor does a
 * pageable source. */
static void test_rows_2d_beat_the_footprint_when_long(void **state)
{
    (void)state;
    skip_without_kernels();
    static const struct {
        kind host;
        int64_t row;
        const char *path;
    } cases[] = {{PINNED, 8192, "2d"},
                 {PINNED, 1024, "2d"},
                 {PINNED, 128, "footprint"},
                 {PAGEABLE, 8192, "footprint"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fresh(SMALL_CHUNK);
        int64_t r = cases[i].row;
        side h = side_new(cases[i].host, 4, 2, I64(5, r), I64(2 * r, 1));
        side d = side_new(DEVICE, 4, 2, I64(5, r), I64(r, 1));
        fill(&h, 11);
        assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL));
        assert_path(cases[i].path);
        if (strcmp(cases[i].path, "2d") == 0) /* no kernel to run in the fake */
            assert_copied(d, h);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

static void test_sparse_rows_are_packed_otherwise(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        /* From pageable memory: packed through staging. */
        fresh(SMALL_CHUNK);
        side h = SIDE(PAGEABLE, 4, (7, 1100), (3300, 1));
        side d = SIDE(DEVICE, 4, (7, 1100), (1100, 1));
        side *dst = dir == 0 ? &d : &h, *src = dir == 0 ? &h : &d;
        fill(src, 7);
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuMemcpy2DAsync") + calls("cuLaunchKernel") +
                             calls("cuMemAllocFromPoolAsync"),
                         0);
        /* 4400-byte rows: each row a piece (the chunk holds less than a
         * row, so pieces cut rows: 2 pieces a row). */
        assert_int_equal(calls("cuMemcpyAsync"), 14);
        side_free(&h);
        side_free(&d);
        /* Pinned, rows shorter than 512 bytes: packed. */
        fresh(SMALL_CHUNK);
        h = SIDE(PINNED, 4, (9, 100), (3100, 1));
        d = SIDE(DEVICE, 4, (9, 100), (100, 1));
        dst = dir == 0 ? &d : &h;
        src = dir == 0 ? &h : &d;
        fill(src, 8);
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_copied(*dst, *src);
        /* 400-byte rows: ten to a 4096-byte chunk, all nine in one piece. */
        assert_int_equal(calls("cuMemcpyAsync"), 1);
        assert_int_equal(calls("cuMemcpy2DAsync"), 0);
        side_free(&h);
        side_free(&d);
        /* Pinned, long rows, but a pitch beyond the device's maximum. */
        fresh(SMALL_CHUNK);
        set_max_pitch(8192);
        h = SIDE(PINNED, 4, (7, 1100), (3300, 1));
        d = SIDE(DEVICE, 4, (7, 1100), (1100, 1));
        dst = dir == 0 ? &d : &h;
        src = dir == 0 ? &h : &d;
        fill(src, 9);
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuMemcpy2DAsync"), 0);
        side_free(&h);
        side_free(&d);
        /* A negative pitch: packed. (The plan flips the destination's
         * reversed axes, so back to the host the source pitch is the
         * negative one: packed on the device first, by a kernel this fake
         * does not run.) */
        fresh(SMALL_CHUNK);
        h = SIDE(PINNED, 4, (7, 1100), (-3300, 1));
        d = SIDE(DEVICE, 4, (7, 1100), (1100, 1));
        dst = dir == 0 ? &d : &h;
        src = dir == 0 ? &h : &d;
        fill(src, 10);
#if defined(STRIDED_HAVE_KERNELS)
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_int_equal(calls("cuMemcpy2DAsync"), 0);
        if (dir == 0)
            assert_copied(*dst, *src);
        else
            assert_int_equal(calls("cuLaunchKernel"), 1);
#endif
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

static void test_gathers_into_a_dense_destination_need_no_device_step(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 4, 8, 12, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int isz = sizes[i];
        for (int pinned = 0; pinned < 2; pinned++) {
            /* Every other element of every third row, reversed columns. */
            fresh(SMALL_CHUNK);
            side h = SIDE(pinned ? PINNED : PAGEABLE, isz, (19, 45), (270, -2));
            side d = SIDE(DEVICE, isz, (19, 45), (45, 1));
            fill(&h, 11 + (unsigned)isz);
            assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL));
            assert_path("pack");
            assert_copied(d, h);
            assert_int_equal(calls("cuLaunchKernel") + calls("cuMemAllocFromPoolAsync"), 0);
            side_free(&h);
            side_free(&d);
            /* The other way: a source packed in the plan's order (which
             * flips the reversed columns) scattered into the gaps. */
            fresh(SMALL_CHUNK);
            d = SIDE(DEVICE, isz, (19, 45), (45, -1));
            h = SIDE(pinned ? PINNED : PAGEABLE, isz, (19, 45), (270, -2));
            fill(&d, 12 + (unsigned)isz);
            assert_ok(copy(&h, &d, STRIDED_COPY_DEFAULT, NULL));
            assert_path("pack");
            assert_copied(h, d);
            assert_int_equal(calls("cuLaunchKernel") + calls("cuMemAllocFromPoolAsync"), 0);
            side_free(&h);
            side_free(&d);
            assert_nothing_left();
        }
    }
}

static void test_pieces_cut_a_middle_axis(void **state)
{
    (void)state;
    /* 3 x 5 x 700 floats from sparse host layouts into device layouts
     * packed in the plan's order (so that no kernel is needed either way).
     * In the plan's order (3, 5, 700) a row of 700 floats (2800 bytes) is
     * a piece (two do not fit in 4096): 15 pieces cutting the middle axis;
     * in the order (700, 3, 5) 64 x 15 floats are: 11 pieces. */
    static const struct {
        int64_t host[3], device[3];
        long pieces;
    } cases[] = {
        {{7500, 1500, 2}, {3500, 700, 1}, 15},
        {{7500, -1500, 2}, {3500, -700, 1}, 15},
        /* Rows that merge into planes of 3500: 4 pieces a plane. */
        {{7100, 1400, 2}, {3500, 700, 1}, 12},
        {{10, 2, 32}, {5, 1, 15}, 11},
    };
    int64_t shape[3] = {3, 5, 700};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fresh(SMALL_CHUNK);
        side h = side_new(PAGEABLE, 4, 3, shape, cases[i].host);
        side d = side_new(DEVICE, 4, 3, shape, cases[i].device);
        fill(&h, 50 + (unsigned)i);
        assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_copied(d, h);
        assert_int_equal(calls("cuMemcpyAsync"), cases[i].pieces);
        assert_int_equal(calls("cuLaunchKernel"), 0);
        fresh(SMALL_CHUNK);
        fill(&d, 60 + (unsigned)i);
        memset(h.base, SENTINEL, h.bytes);
        assert_ok(copy(&h, &d, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_copied(h, d);
        assert_int_equal(calls("cuMemcpyAsync"), cases[i].pieces);
        assert_int_equal(calls("cuLaunchKernel"), 0);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

/* The pieces of a staged transfer ramp: a sixteenth of a chunk (at least
 * 1 MiB) first, each next piece as much as all before it, up to a chunk,
 * and halving at the end. */
static void test_staging_pieces_ramp(void **state)
{
    (void)state;
    enum { MAX = 64 };
    int64_t first[MAX], count[MAX], row = 0, slab = 0;
    /* A (256, 224, 224, 3) uint8 batch, 38535168 bytes, chunks of 32 MiB. */
    int64_t batch[1] = {38535168};
    static const int64_t batch_pieces[] = {2097152,  2097152, 4194304, 8388608,
                                           10878976, 5439488, 2719744, 2719744};
    int64_t n = strided__staging_pieces(1, batch, 1, (size_t)32 << 20, first, count, MAX, &row,
                                        &slab);
    assert_int_equal(n, 8);
    assert_int_equal(row, batch[0]);
    assert_int_equal(slab, 1);
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(count[i], batch_pieces[i]);
    /* 64 Mi floats: 2, 2, 4, 8, 16 MiB, six full chunks, 16, 8, 4, 2, 2. */
    int64_t floats[1] = {(int64_t)64 << 20};
    static const int64_t float_pieces[] = {1, 1, 2, 4, 8, 16, 16, 16, 16, 16, 16, 8, 4, 2, 1, 1};
    n = strided__staging_pieces(1, floats, 4, (size_t)32 << 20, first, count, MAX, &row, &slab);
    assert_int_equal(n, 16);
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(count[i], float_pieces[i] << 19);
    /* Less than the least piece (1 MiB, as chunks of 4 MiB have): one. */
    int64_t small[2] = {1000, 1000};
    n = strided__staging_pieces(2, small, 1, (size_t)4 << 20, first, count, MAX, &row, &slab);
    assert_int_equal(n, 1);
    assert_int_equal(count[0], 1000000);

    /* Random arrays and chunks: the pieces follow each other over the
     * packed image without a gap, hold at most a chunk, never cross a row,
     * start at the least piece, grow at most to what went before (a piece
     * that ends its row may take a rest below the least piece) and end
     * small. */
    srand(11);
    static const int itemsizes[] = {1, 2, 4, 8, 16};
    for (int trial = 0; trial < 2000; trial++) {
        int ndim = 1 + rand() % 4, isz = itemsizes[rand() % 5];
        int64_t shape[4], volume = 1;
        for (int i = 0; i < ndim; i++) {
            shape[i] = 1 + rand() % (i == 0 ? 3000 : 300);
            volume *= shape[i];
        }
        size_t chunk = (size_t)isz << (12 + rand() % 14);
        n = strided__staging_pieces(ndim, shape, isz, chunk, first, count, MAX, &row, &slab);
        assert_true(n >= 1);
        int64_t limit = (int64_t)(chunk / (size_t)isz), least = limit / 16;
        if (least < (1 << 20) / isz)
            least = (1 << 20) / isz;
        int64_t at = 0;
        for (int64_t i = 0; i < n && i < MAX; i++) {
            assert_int_equal(first[i], at);
            assert_true(count[i] >= 1);
            assert_true(count[i] <= limit);
            assert_int_equal(first[i] / row, (first[i] + count[i] - 1) / row);
            bool ends_row = (first[i] + count[i]) % row == 0;
            assert_int_equal(count[i] % slab, 0);
            if (!ends_row)
                assert_true(count[i] <= (at > least ? at : least) || count[i] == slab);
            at += count[i];
        }
        if (n <= MAX) {
            assert_int_equal(at, volume);
            if (ndim == 1 && n > 1)
                assert_true(count[n - 1] < 2 * least);
        }
    }
}

/* A staged transfer in ramped pieces, both ways: every piece one DMA, the
 * bytes where they belong. */
static void test_staging_ramps_both_ways(void **state)
{
    (void)state;
    enum { BYTES = (20 << 20) + 13, MAX = 64 };
    int64_t shape[1] = {BYTES}, first[MAX], count[MAX], row, slab;
    int64_t n = strided__staging_pieces(1, shape, 1, (size_t)8 << 20, first, count, MAX, &row,
                                        &slab);
    assert_true(n > 3);
    fresh((size_t)8 << 20);
    side h = SIDE(PAGEABLE, 1, (BYTES), (1));
    side d = SIDE(DEVICE, 1, (BYTES), (1));
    fill(&h, 21);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL));
    assert_path("staged");
    assert_copied(d, h);
    assert_int_equal(calls("cuMemcpyAsync"), n);
    fresh((size_t)8 << 20);
    fill(&d, 22);
    memset(h.base, SENTINEL, h.bytes);
    assert_ok(copy(&h, &d, STRIDED_COPY_DEFAULT, NULL));
    assert_path("staged");
    assert_copied(h, d);
    assert_int_equal(calls("cuMemcpyAsync"), n);
    side_free(&h);
    side_free(&d);
    assert_nothing_left();
}

/* A gapped host source (rows of 4 KiB, 12 KiB apart) is gathered with
 * plain stores: its pieces do not ramp, each as much of a chunk as fits
 * (3000 rows in two of 1500). The way back, scattered from staging, ramps
 * (pieces of 256, 256, 512, 988, 494, 494 rows). */
static void test_gapped_gathers_do_not_ramp(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        fresh((size_t)8 << 20);
        side h = SIDE(PAGEABLE, 4, (3000, 1024), (3072, 1));
        side d = SIDE(DEVICE, 4, (3000, 1024), (1024, 1));
        side *dst = dir == 0 ? &d : &h, *src = dir == 0 ? &h : &d;
        fill(src, 23);
        assert_ok(copy(dst, src, STRIDED_COPY_DEFAULT, NULL));
        assert_path("pack");
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuMemcpyAsync"), dir == 0 ? 2 : 6);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
    }
}

static void test_staging_from_a_host_resource(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, false);
    strided_copy_temporaries t = {mr, NULL};
    side h = SIDE(PAGEABLE, 4, (7, 1100), (3300, 1));
    side d = SIDE(DEVICE, 4, (7, 1100), (1100, 1));
    fill(&h, 13);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, &t));
    assert_path("pack");
    assert_copied(d, h);
    /* One allocation of two buffers of the largest piece (half a row), on
     * the copy's stream, given back; no pool set. */
    assert_int_equal(r.allocs, 1);
    assert_int_equal(r.frees, 1);
    assert_int_equal(r.sizes[0], 2 * 550 * 4);
    assert_ptr_equal(r.streams[0], STREAM);
    assert_int_equal(calls("cuMemHostAlloc"), 0);
    /* One piece: one buffer. */
    side h1 = SIDE(PAGEABLE, 2, (10), (1));
    side d1 = SIDE(DEVICE, 2, (10), (1));
    fill(&h1, 14);
    assert_ok(copy(&d1, &h1, STRIDED_COPY_DEFAULT, &t));
    assert_copied(d1, h1);
    assert_int_equal(r.sizes[1], 20);
    side_free(&h);
    side_free(&d);
    side_free(&h1);
    side_free(&d1);
    recorder_free(&r, mr);
    assert_nothing_left();
}

static void test_host_resource_must_give_host_memory(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, true);
    strided_copy_temporaries t = {mr, NULL};
    side h = SIDE(PAGEABLE, 4, (64), (1));
    side d = SIDE(DEVICE, 4, (64), (1));
    assert_error(copy(&d, &h, STRIDED_COPY_DEFAULT, &t), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "the host allocator gave memory the host cannot reach");
    assert_int_equal(r.frees, 1);
    assert_int_equal(calls("cuMemcpyAsync"), 0);
    side_free(&h);
    side_free(&d);
    recorder_free(&r, mr);
    assert_nothing_left();
}

static void test_staging_chunk_size_from_the_environment(void **state)
{
    (void)state;
    size_t chunk = 0;
    fresh(0);
    setenv("STRIDED_STAGING_CHUNK_BYTES", "8192", 1);
    assert_ok(strided__staging_chunk_bytes(&chunk));
    assert_int_equal(chunk, 8192);
    side h = SIDE(PAGEABLE, 1, (20000), (1));
    side d = SIDE(DEVICE, 1, (20000), (1));
    fill(&h, 15);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL));
    assert_copied(d, h);
    assert_int_equal(calls("cuMemcpyAsync"), 3);
    static const char *const bad[] = {"4095",  "abc",   "",           " 8192",
                                      "8192x", "-8192", "1073741825", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strided__staging_reset(0);
        setenv("STRIDED_STAGING_CHUNK_BYTES", bad[i], 1);
        if (bad[i][0] == '\0') {
            /* Empty: the default. */
            assert_ok(strided__staging_chunk_bytes(&chunk));
            assert_int_equal(chunk, STRIDED__STAGING_CHUNK_BYTES);
            continue;
        }
        assert_error(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                     "STRIDED_STAGING_CHUNK_BYTES=");
        assert_non_null(strstr(strided_last_error(), "is not a decimal byte count from 4096 "
                                                     "to 1073741824"));
    }
    unsetenv("STRIDED_STAGING_CHUNK_BYTES");
    strided__staging_reset(0);
    assert_ok(strided__staging_chunk_bytes(&chunk));
    assert_int_equal(chunk, STRIDED__STAGING_CHUNK_BYTES);
    side_free(&h);
    side_free(&d);
    assert_nothing_left();
}

/* Many copies at once on several threads: each gets staging (kept sets
 * while there are, its own beyond), and every result is right. */
typedef struct worker {
    side h, d;
    int dir;
    strided_status status;
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 20 && w->status == STRIDED_OK; i++)
        w->status = w->dir == 0 ? copy(&w->d, &w->h, STRIDED_COPY_DEFAULT, NULL)
                                : copy(&w->h, &w->d, STRIDED_COPY_DEFAULT, NULL);
    return NULL;
}

static void test_concurrent_staged_copies(void **state)
{
    (void)state;
    enum { N = 8 };
    worker w[N];
    pthread_t threads[N];
    fresh(SMALL_CHUNK);
    for (int i = 0; i < N; i++) {
        w[i].dir = i % 2;
        w[i].status = STRIDED_OK;
        if (i % 4 < 2) {
            w[i].h = SIDE(PAGEABLE, 4, (50, 77), (77, 1));
            w[i].d = SIDE(DEVICE, 4, (50, 77), (77, 1));
        } else {
            w[i].h = SIDE(PAGEABLE, 4, (50, 77), (231, 3));
            w[i].d = SIDE(DEVICE, 4, (50, 77), (77, 1));
        }
        fill(w[i].dir == 0 ? &w[i].h : &w[i].d, 20 + (unsigned)i);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, run_worker, &w[i]), 0);
    for (int i = 0; i < N; i++) {
        pthread_join(threads[i], NULL);
        assert_ok(w[i].status);
        if (w[i].dir == 0)
            assert_copied(w[i].d, w[i].h);
        else
            assert_copied(w[i].h, w[i].d);
    }
    /* The pool kept at most four sets of two chunks; copies beyond them
     * freed their own. */
    assert_true(fake.live_bytes() > 0);
    assert_true(fake.live_bytes() <= 4 * 2 * SMALL_CHUNK);
    assert_int_equal(calls("cuMemHostAlloc") - calls("cuMemFreeHost"),
                     fake.live_bytes() / (2 * SMALL_CHUNK));
    for (int i = 0; i < N; i++) {
        side_free(&w[i].h);
        side_free(&w[i].d);
    }
    assert_nothing_left();
}

#if defined(STRIDED_HAVE_KERNELS)

/* Paths with a device step: the kernels do not run here, so the bytes are
 * checked up to and from the device temporaries. */

static void test_dense_sources_cross_as_their_footprint(void **state)
{
    (void)state;
    for (int pinned = 0; pinned < 2; pinned++) {
        recorder r;
        fresh(SMALL_CHUNK);
        strided_memory_resource *mr = recording(&r, true);
        strided_copy_temporaries t = {NULL, mr};
        /* A transposed host view of 40 x 60 floats into a C destination. */
        side h = SIDE(pinned ? PINNED : PAGEABLE, 4, (40, 60), (1, 40));
        side d = SIDE(DEVICE, 4, (40, 60), (60, 1));
        fill(&h, 30);
        assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, &t));
        assert_path("footprint");
        /* The temporary held the footprint, byte for byte. */
        assert_int_equal(r.allocs, 1);
        assert_int_equal(r.frees, 1);
        assert_int_equal(r.sizes[0], 40 * 60 * 4);
        assert_ptr_equal(r.streams[0], STREAM);
        assert_bytes(r.kept[0], h.base + GUARD, 40 * 60 * 4);
        /* Pinned: one DMA; pageable: 9600 bytes in three pieces. */
        assert_int_equal(calls("cuMemcpyAsync"), pinned ? 1 : 3);
        assert_int_equal(calls("cuMemHostAlloc"), pinned ? 0 : 1);
        fake_cuda_launch l;
        assert_true(last_launch(&l));
        assert_string_equal(l.function, "strided_copy_transpose_4_i32");
        assert_int_equal(l.args[0], (uintptr_t)elem0(&d));
        assert_int_equal(l.args[1], (uintptr_t)r.ptrs[0]);
        side_free(&h);
        side_free(&d);
        recorder_free(&r, mr);
        assert_nothing_left();
    }
}

static void test_reversed_and_mildly_gapped_sources_cross_as_their_footprint(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, true);
    strided_copy_temporaries t = {NULL, mr};
    /* Reversed axes, rows padded by a third: footprint 1.33 x the data. */
    side h = SIDE(PAGEABLE, 8, (30, 21), (-28, -1));
    side d = SIDE(DEVICE, 8, (30, 21), (21, 1));
    fill(&h, 31);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, &t));
    assert_path("footprint");
    int64_t footprint = (29 * 28 + 20 + 1) * 8;
    assert_int_equal(r.sizes[0], footprint);
    assert_bytes(r.kept[0], h.base + GUARD, (size_t)footprint);
    /* The plan's source element 0 is the view's last: at the end of the
     * temporary. */
    strided_copy_plan p = plan_of_sides(&d, &h);
    fake_cuda_launch l;
    assert_true(last_launch(&l));
    assert_int_equal(l.args[0], (uintptr_t)elem0(&d) + (uintptr_t)(p.dst_offset * 8));
    assert_int_equal(l.args[1], (uintptr_t)r.ptrs[0] + (uintptr_t)(elem0(&h) - (h.base + GUARD)) +
                                    (uintptr_t)(p.src_offset * 8));
    side_free(&h);
    side_free(&d);
    recorder_free(&r, mr);
    assert_nothing_left();
}

static void test_broadcast_sources_travel_small(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, true);
    strided_copy_temporaries t = {NULL, mr};
    /* One row of 300 floats repeated 500 times; one value 500 x 300. */
    side h = SIDE(PAGEABLE, 4, (500, 300), (0, 1));
    side d = SIDE(DEVICE, 4, (500, 300), (300, 1));
    fill(&h, 32);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, &t));
    assert_path("footprint");
    assert_int_equal(r.sizes[0], 300 * 4);
    assert_bytes(r.kept[0], h.base + GUARD, 300 * 4);
    assert_int_equal(calls("cuMemcpyAsync"), 1);
    assert_int_equal(calls("cuLaunchKernel"), 1);
    side one = SIDE(PINNED, 16, (500, 300), (0, 0));
    side d16 = SIDE(DEVICE, 16, (500, 300), (300, 1));
    fill(&one, 33);
    assert_ok(copy(&d16, &one, STRIDED_COPY_DEFAULT, &t));
    assert_path("footprint");
    assert_int_equal(r.sizes[1], 16);
    assert_bytes(r.kept[1], one.base + GUARD, 16);
    fake_cuda_launch l;
    assert_true(last_launch(&l));
    assert_string_equal(l.function, "strided_copy_broadcast_16");
    side_free(&h);
    side_free(&d);
    side_free(&one);
    side_free(&d16);
    recorder_free(&r, mr);
    assert_nothing_left();
}

static void test_sparse_broadcast_sources_are_packed_small(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, true);
    strided_copy_temporaries t = {NULL, mr};
    /* Every third float of 30 rows 400 apart, repeated 20 times: only the
     * 30 x 64 distinct elements are gathered and sent. */
    side h = SIDE(PINNED, 4, (20, 30, 64), (0, 400, 3));
    side d = SIDE(DEVICE, 4, (20, 30, 64), (1920, 64, 1));
    fill(&h, 35);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, &t));
    assert_path("pack");
    assert_int_equal(r.allocs, 1);
    assert_int_equal(r.sizes[0], 30 * 64 * 4);
    side distinct = SIDE(PAGEABLE, 4, (30, 64), (400, 3));
    side packed = SIDE(PAGEABLE, 4, (30, 64), (64, 1));
    memcpy(distinct.base, h.base, h.bytes < distinct.bytes ? h.bytes : distinct.bytes);
    unsigned char *want = expected_copy(&packed, &distinct);
    assert_bytes(r.kept[0], want + GUARD, 30 * 64 * 4);
    free(want);
    /* 7680 bytes: two pieces. */
    assert_int_equal(calls("cuMemcpyAsync"), 2);
    fake_cuda_launch l;
    assert_true(last_launch(&l));
    assert_int_equal(l.args[0], (uintptr_t)elem0(&d));
    assert_int_equal(l.args[1], (uintptr_t)r.ptrs[0]);
    side_free(&distinct);
    side_free(&packed);
    side_free(&h);
    side_free(&d);
    recorder_free(&r, mr);
    assert_nothing_left();
}

static void test_sparse_sources_into_gapped_destinations_pack_then_scatter(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, true);
    strided_copy_temporaries t = {NULL, mr};
    /* Every third float of every second row, into every other float. */
    side h = SIDE(PINNED, 4, (33, 70), (420, 3));
    side d = SIDE(DEVICE, 4, (33, 70), (141, 2));
    fill(&h, 34);
    assert_ok(copy(&d, &h, STRIDED_COPY_DEFAULT, &t));
    assert_path("pack");
    /* The temporary holds the source packed in the plan's order. */
    strided_copy_plan p = plan_of_sides(&d, &h);
    strided_layout packed, hosts;
    assert_ok(strided_layout_init(&packed, p.ndim, p.shape, NULL, 4));
    assert_ok(strided_layout_init(&hosts, p.ndim, p.shape, p.src_strides, 4));
    unsigned char *want = malloc(33 * 70 * 4);
    assert_ok(strided_copy_host(want, &packed, elem0(&h) + p.src_offset * 4, &hosts, 1));
    assert_int_equal(r.sizes[0], 33 * 70 * 4);
    assert_bytes(r.kept[0], want, 33 * 70 * 4);
    free(want);
    fake_cuda_launch l;
    assert_true(last_launch(&l));
    assert_int_equal(l.args[0], (uintptr_t)elem0(&d));
    assert_int_equal(l.args[1], (uintptr_t)r.ptrs[0]);
    /* The gaps between the device destination's elements are untouched
     * (the kernel would write the elements only). */
    for (size_t i = 0; i < d.bytes; i++)
        assert_int_equal(d.base[i], SENTINEL);
    side_free(&h);
    side_free(&d);
    recorder_free(&r, mr);
    assert_nothing_left();
}

static void test_dense_host_destinations_take_a_dense_temporary(void **state)
{
    (void)state;
    for (int pinned = 0; pinned < 2; pinned++) {
        recorder r;
        fresh(SMALL_CHUNK);
        strided_memory_resource *mr = recording(&r, true);
        strided_copy_temporaries t = {NULL, mr};
        /* A gapped, transposed device source into an F-ordered host array. */
        side d = SIDE(DEVICE, 2, (45, 38), (1, 100));
        side h = SIDE(pinned ? PINNED : PAGEABLE, 2, (45, 38), (1, 45));
        assert_ok(copy(&h, &d, STRIDED_COPY_DEFAULT, &t));
        assert_path("dense");
        assert_int_equal(r.sizes[0], 45 * 38 * 2);
        fake_cuda_launch l;
        assert_true(last_launch(&l));
        assert_int_equal(l.args[0], (uintptr_t)r.ptrs[0]);
        /* The host got the temporary's bytes, and nothing around them. */
        unsigned char want[45 * 38 * 2];
        for (size_t i = 0; i < sizeof want; i++)
            want[i] = pattern(TEMP_SEED, i);
        assert_bytes(h.base + GUARD, want, sizeof want);
        for (size_t i = 0; i < GUARD; i++) {
            assert_int_equal(h.base[i], SENTINEL);
            assert_int_equal(h.base[h.bytes - 1 - i], SENTINEL);
        }
        /* 3420 bytes: one piece either way. */
        assert_int_equal(calls("cuMemcpyAsync"), 1);
        side_free(&h);
        side_free(&d);
        recorder_free(&r, mr);
        assert_nothing_left();
    }
}

static void test_gapped_host_destinations_are_scattered(void **state)
{
    (void)state;
    recorder r;
    fresh(SMALL_CHUNK);
    strided_memory_resource *mr = recording(&r, true);
    strided_copy_temporaries t = {NULL, mr};
    /* A transposed device source into every other element of padded host
     * rows: packed on the device (into the temporary), scattered on the
     * host. */
    side d = SIDE(DEVICE, 8, (25, 31), (1, 25));
    side h = SIDE(PAGEABLE, 8, (25, 31), (70, 2));
    assert_ok(copy(&h, &d, STRIDED_COPY_DEFAULT, &t));
    assert_path("pack");
    assert_int_equal(r.sizes[0], 25 * 31 * 8);
    fake_cuda_launch l;
    assert_true(last_launch(&l));
    assert_int_equal(l.args[0], (uintptr_t)r.ptrs[0]);
    assert_int_equal(l.args[1], (uintptr_t)elem0(&d));
    /* The host holds the temporary's pattern scattered, and its gaps and
     * guards are untouched. */
    side packed = SIDE(PAGEABLE, 8, (25, 31), (31, 1));
    for (size_t i = 0; i < 25 * 31 * 8; i++)
        packed.base[GUARD + i] = pattern(TEMP_SEED, i);
    unsigned char *want = malloc(h.bytes);
    memset(want, SENTINEL, h.bytes);
    assert_ok(strided_copy_host(want + h.origin, &h.layout, elem0(&packed), &packed.layout, 1));
    assert_bytes(h.base, want, h.bytes);
    free(want);
    side_free(&packed);
    side_free(&h);
    side_free(&d);
    recorder_free(&r, mr);
    assert_nothing_left();
}

/* The release threshold of device 0's current pool. */
static uint64_t release_threshold(void)
{
    const strided__driver *cu = NULL;
    CUdevice dev = 0;
    CUmemoryPool pool = NULL;
    uint64_t threshold = 0;
    assert_ok(strided__cuda("test", &cu));
    assert_int_equal(cu->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(cu->cuDeviceGetMemPool(&pool, dev), CUDA_SUCCESS);
    assert_int_equal(cu->cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
                     CUDA_SUCCESS);
    return threshold;
}

static void set_release_threshold(uint64_t threshold)
{
    const strided__driver *cu = NULL;
    CUdevice dev = 0;
    CUmemoryPool pool = NULL;
    assert_ok(strided__cuda("test", &cu));
    assert_int_equal(cu->cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    assert_int_equal(cu->cuDeviceGetMemPool(&pool, dev), CUDA_SUCCESS);
    assert_int_equal(cu->cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
                     CUDA_SUCCESS);
}

static void test_default_temporaries_come_from_the_pool_in_stream_order(void **state)
{
    (void)state;
    fresh(SMALL_CHUNK);
    /* The driver's default: freed memory goes back at every
     * synchronisation. */
    assert_int_equal(release_threshold(), 0);
    side h = SIDE(PINNED, 4, (64, 64), (1, 64));
    side d = SIDE(DEVICE, 4, (64, 64), (64, 1));
    /* Non-blocking, pinned: nothing waits. */
    assert_ok(copy(&d, &h, STRIDED_COPY_NONBLOCKING, NULL));
    assert_path("footprint");
    assert_int_equal(calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(calls("cuMemFreeAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemAllocFromPoolAsync"), STREAM);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM);
    assert_ptr_equal(fake.last_stream("cuLaunchKernel"), STREAM);
    assert_int_equal(
        calls("cuStreamSynchronize") + calls("cuEventSynchronize") + calls("cuEventCreate"), 0);
    assert_int_equal(fake.live_bytes(), 0);
    /* The copy made the pool keep what it frees. */
    assert_true(release_threshold() == UINT64_MAX);
    /* Back: dense destination, still nothing waits. */
    assert_ok(copy(&h, &d, STRIDED_COPY_NONBLOCKING, NULL));
    assert_path("dense");
    assert_int_equal(calls("cuMemAllocFromPoolAsync"), 2);
    assert_int_equal(calls("cuStreamSynchronize") + calls("cuEventSynchronize"), 0);
    /* The threshold only saves time: a copy whose pool refuses to say it
     * goes on. */
    set_release_threshold(0);
    fake.fail_next("cuMemPoolGetAttribute", CUDA_ERROR_UNKNOWN);
    assert_ok(copy(&d, &h, STRIDED_COPY_NONBLOCKING, NULL));
    assert_path("footprint");
    assert_int_equal(release_threshold(), 0);
    /* A threshold the application set is its own. */
    set_release_threshold(12345);
    assert_ok(copy(&d, &h, STRIDED_COPY_NONBLOCKING, NULL));
    assert_path("footprint");
    assert_true(release_threshold() == 12345);
    side_free(&h);
    side_free(&d);
    assert_nothing_left();
}

#else

static void test_without_kernels_device_steps_fail_cleanly(void **state)
{
    (void)state;
    fresh(SMALL_CHUNK);
    side h = SIDE(PAGEABLE, 4, (64, 64), (1, 64));
    side d = SIDE(DEVICE, 4, (64, 64), (64, 1));
    assert_error(copy(&d, &h, STRIDED_COPY_DEFAULT, NULL), STRIDED_ERR_UNSUPPORTED, "copy",
                 "built without its CUDA kernels");
    assert_error(copy(&h, &d, STRIDED_COPY_DEFAULT, NULL), STRIDED_ERR_UNSUPPORTED, "copy",
                 "built without its CUDA kernels");
    side_free(&h);
    side_free(&d);
    assert_nothing_left();
}

#endif

/* Every driver call a transfer makes, failing in turn. */

typedef struct failure_case {
    const char *what;
    kind host;
    int itemsize;
    int ndim;
    int64_t shape[2], host_strides[2], device_strides[2];
    bool to_device;
    bool kernels; /* has a device step */
} failure_case;

static const failure_case failure_cases[] = {
    {"pinned contiguous", PINNED, 4, 2, {40, 50}, {50, 1}, {50, 1}, true, false},
    {"staged contiguous", PAGEABLE, 4, 2, {40, 50}, {50, 1}, {50, 1}, true, false},
    {"staged contiguous back", PAGEABLE, 4, 2, {40, 50}, {50, 1}, {50, 1}, false, false},
    {"2d", PINNED, 4, 2, {7, 1100}, {3300, 1}, {1100, 1}, true, false},
    {"2d back", PINNED, 4, 2, {7, 1100}, {3300, 1}, {1100, 1}, false, false},
    {"pack", PAGEABLE, 4, 2, {40, 50}, {150, 3}, {50, 1}, true, false},
    {"pack back", PINNED, 4, 2, {40, 50}, {150, 3}, {50, 1}, false, false},
    {"footprint", PAGEABLE, 4, 2, {40, 50}, {1, 40}, {50, 1}, true, true},
    {"dense", PAGEABLE, 4, 2, {40, 50}, {50, 1}, {1, 40}, false, true},
    {"pack with temporary", PAGEABLE, 4, 2, {40, 50}, {150, 3}, {1, 41}, true, true},
    {"scatter with temporary", PAGEABLE, 4, 2, {40, 50}, {150, 3}, {1, 41}, false, true},
};

static const char *const failing_calls[] = {
    "cuMemcpyAsync",      "cuMemcpy2DAsync",      "cuEventCreate",  "cuEventRecord",
    "cuEventSynchronize", "cuStreamSynchronize",  "cuMemHostAlloc", "cuMemAllocFromPoolAsync",
    "cuDeviceGetMemPool", "cuDeviceGetAttribute", "cuLaunchKernel", "cuStreamIsCapturing",
};

static strided_status run_failure_case(const failure_case *c, side *h, side *d)
{
    fresh(SMALL_CHUNK);
    *h = side_new(c->host, c->itemsize, c->ndim, c->shape, c->host_strides);
    *d = side_new(DEVICE, c->itemsize, c->ndim, c->shape, c->device_strides);
    fill(c->to_device ? h : d, 40);
    return c->to_device ? copy(d, h, STRIDED_COPY_DEFAULT, NULL)
                        : copy(h, d, STRIDED_COPY_DEFAULT, NULL);
}

/* While the stream captures a CUDA graph, a copy takes only paths a graph
 * holds (no host work, no wait for the stream) and refuses the others
 * before doing anything: nothing queued, nothing allocated, nothing
 * waited for, the destination as it was. */
#define CAPTURE_REFUSED(what)                                                            \
    what " cannot be captured into a CUDA graph: the stream is capturing, and the work " \
         "would run on the host now instead of when the graph is launched; "
#define WAIT_HINT                                                                              \
    "pass a non-blocking copy (STRIDED_COPY_NONBLOCKING; blocking=False in Python) of device " \
    "or pinned memory, and wait for the graph's stream after launching it"
#define STAGED_HINT                                                                           \
    "use pinned memory and a layout whose host side crosses in one piece (dense, or rows of " \
    "a 2-D copy), or copy outside the capture"

/* The copy refused with text, having done nothing: d unchanged, no driver
 * call that queues, allocates or waits. */
#define assert_refused_in_capture(d, s, flags, text) \
    check_refused_in_capture_(&(d), &(s), (flags), (text), __FILE__, __LINE__)

static void check_refused_in_capture_(side *d, side *s, unsigned flags, const char *text,
                                      const char *file, int line)
{
    static const char *const none[] = {
        "cuMemcpyAsync",           "cuMemcpy2DAsync",     "cuLaunchKernel",    "cuMemHostAlloc",
        "cuMemAllocFromPoolAsync", "cuStreamSynchronize", "cuEventSynchronize"};
    enum { NONE = sizeof none / sizeof none[0] };
    long before_calls[NONE];
    for (size_t i = 0; i < NONE; i++)
        before_calls[i] = (long)calls(none[i]);
    unsigned char *before = malloc(d->bytes);
    assert_non_null(before);
    memcpy(before, d->base, d->bytes);
    strided_status status = copy(d, s, flags, NULL);
    if (status != STRIDED_ERR_INVALID_ARGUMENT || strcmp(strided_last_error_reason(), text) != 0)
        fail_at(file, line, "status %d, reason \"%s\"\nexpected \"%s\"\n", (int)status,
                strided_last_error_reason(), text);
    check_bytes_(d->base, before, d->bytes, file, line);
    free(before);
    for (size_t i = 0; i < NONE; i++)
        if ((long)calls(none[i]) != before_calls[i])
            fail_at(file, line, "%s was called by the refused copy\n", none[i]);
    if (fake.current_context() != NULL)
        fail_at(file, line, "a context was left current\n");
}

/* fresh(), with STREAM capturing (a reset forgets it). */
static void fresh_capturing(void)
{
    fresh(SMALL_CHUNK);
    fake.set_capturing(STREAM, 1);
}

static void test_graph_capture_takes_only_what_a_graph_holds(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        fresh_capturing();
        side pinned = SIDE(PINNED, 4, (37, 51), (51, 1));
        side pageable = SIDE(PAGEABLE, 4, (37, 51), (51, 1));
        side dev = SIDE(DEVICE, 4, (37, 51), (51, 1));
        side *dst = dir == 0 ? &dev : &pinned, *src = dir == 0 ? &pinned : &dev;
        fill(src, 40);
        /* A blocking copy would wait for the capturing stream. */
        assert_refused_in_capture(*dst, *src, STRIDED_COPY_DEFAULT,
                                  CAPTURE_REFUSED("a blocking copy") WAIT_HINT);
        assert_refused_in_capture(*dst, *src, STRIDED_COPY_BLOCKING,
                                  CAPTURE_REFUSED("a blocking copy") WAIT_HINT);
        /* Pageable memory goes through staging, worked on the host. */
        side *pdst = dir == 0 ? &dev : &pageable, *psrc = dir == 0 ? &pageable : &dev;
        fill(psrc, 41);
        assert_refused_in_capture(*pdst, *psrc, STRIDED_COPY_NONBLOCKING,
                                  CAPTURE_REFUSED("a copy through host staging (pageable memory, "
                                                  "or a gather or scatter on the host)")
                                      STAGED_HINT);
        /* Pinned memory in one piece is one DMA, which a graph holds. */
        fill(src, 42);
        assert_ok(copy(dst, src, STRIDED_COPY_NONBLOCKING, NULL));
        assert_path("dma");
        assert_copied(*dst, *src);
        assert_int_equal(calls("cuStreamSynchronize"), 0);
        side_free(&pinned);
        side_free(&pageable);
        side_free(&dev);
        /* Pinned rows too short for a 2-D copy are gathered on the host. */
        fresh_capturing();
        side h = SIDE(PINNED, 4, (9, 100), (3100, 1));
        side d = SIDE(DEVICE, 4, (9, 100), (100, 1));
        dst = dir == 0 ? &d : &h;
        src = dir == 0 ? &h : &d;
        fill(src, 43);
        assert_refused_in_capture(*dst, *src, STRIDED_COPY_NONBLOCKING,
                                  CAPTURE_REFUSED("a copy through host staging (pageable memory, "
                                                  "or a gather or scatter on the host)")
                                      STAGED_HINT);
        side_free(&h);
        side_free(&d);
        /* Between host memory: done on the host, now. */
        fresh_capturing();
        side a = SIDE(PAGEABLE, 4, (37, 51), (51, 1));
        side b = SIDE(PINNED, 4, (37, 51), (1, 37));
        fill(&b, 44);
        assert_refused_in_capture(a, b, STRIDED_COPY_NONBLOCKING,
                                  CAPTURE_REFUSED("a copy between host-accessible memory")
                                      WAIT_HINT);
        side_free(&a);
        side_free(&b);
#if defined(STRIDED_HAVE_KERNELS)
        /* Device to device, and a transposed pinned source crossing as its
         * footprint: kernels, DMA and stream-ordered temporaries, all of
         * which a graph holds. */
        fresh_capturing();
        side t = SIDE(PINNED, 4, (40, 60), (1, 40));
        side c = SIDE(DEVICE, 4, (40, 60), (60, 1));
        side e = SIDE(DEVICE, 4, (40, 60), (1, 40));
        fill(&t, 45);
        assert_ok(copy(&c, &t, STRIDED_COPY_NONBLOCKING, NULL));
        assert_path("footprint");
        /* The temporary's pool is not asked about (the driver refuses pool
         * queries in a capture, and the capture fails). */
        assert_int_equal(calls("cuMemPoolGetAttribute") + calls("cuMemPoolSetAttribute"), 0);
        assert_ok(copy(&c, &e, STRIDED_COPY_NONBLOCKING, NULL));
        assert_ok(copy(&c, &e, STRIDED_COPY_DEFAULT, NULL));
        assert_int_equal(calls("cuStreamSynchronize"), 0);
        assert_refused_in_capture(c, e, STRIDED_COPY_BLOCKING,
                                  CAPTURE_REFUSED("a blocking copy") WAIT_HINT);
        side_free(&t);
        side_free(&c);
        side_free(&e);
#endif
        fake.set_capturing(STREAM, 0);
        assert_nothing_left();
    }
}

static void test_every_driver_failure_is_reported_and_cleaned_up(void **state)
{
    (void)state;
    long injected = 0;
    for (size_t i = 0; i < sizeof failure_cases / sizeof failure_cases[0]; i++) {
        const failure_case *c = &failure_cases[i];
#if !defined(STRIDED_HAVE_KERNELS)
        if (c->kernels)
            continue;
#endif
        side h, d;
        long counts[sizeof failing_calls / sizeof failing_calls[0]];
        assert_ok(run_failure_case(c, &h, &d));
        for (size_t f = 0; f < sizeof failing_calls / sizeof failing_calls[0]; f++)
            counts[f] = calls(failing_calls[f]);
        side_free(&h);
        side_free(&d);
        assert_nothing_left();
        for (size_t f = 0; f < sizeof failing_calls / sizeof failing_calls[0]; f++) {
            for (long n = 0; n < counts[f]; n++) {
                char text[128];
                fresh(SMALL_CHUNK);
                h = side_new(c->host, c->itemsize, c->ndim, c->shape, c->host_strides);
                d = side_new(DEVICE, c->itemsize, c->ndim, c->shape, c->device_strides);
                fail_after(failing_calls[f], n, CUDA_ERROR_UNKNOWN);
                strided_status st = c->to_device ? copy(&d, &h, STRIDED_COPY_DEFAULT, NULL)
                                                 : copy(&h, &d, STRIDED_COPY_DEFAULT, NULL);
                if (st != STRIDED_ERR_CUDA)
                    fail_msg("%s: %s call %ld failing: status %s (%s)", c->what, failing_calls[f],
                             n, strided_status_name(st),
                             st == STRIDED_OK ? "" : strided_last_error());
                snprintf(text, sizeof text, "%s failed: CUDA_ERROR_UNKNOWN", failing_calls[f]);
                if (strstr(strided_last_error(), text) == NULL)
                    fail_msg("%s: %s call %ld failing: message \"%s\"", c->what, failing_calls[f],
                             n, strided_last_error());
                side_free(&h);
                side_free(&d);
                strided__staging_reset(SMALL_CHUNK);
                if (fake.live_bytes() != 0 || fake.live_events() != 0 ||
                    fake.current_context() != NULL)
                    fail_msg("%s: %s call %ld failing left %ld bytes, %ld events, "
                             "context %p",
                             c->what, failing_calls[f], n, fake.live_bytes(), fake.live_events(),
                             fake.current_context());
                injected++;
            }
        }
    }
    /* Every case made some calls that can fail. */
    assert_true(injected > 40);
}

/* A device-temporary resource that fails: reported, nothing left. */
static strided_status refuse_allocate(void *self, size_t size, void *stream, void **out)
{
    (void)self;
    (void)stream;
    (void)out;
    return strided_set_last_error(STRIDED_ERR_OUT_OF_MEMORY, "refuse", "refused %zu bytes", size);
}

static void refuse_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)self;
    (void)ptr;
    (void)size;
    (void)stream;
}

static void test_failing_resources_are_reported(void **state)
{
    (void)state;
    skip_without_kernels();
    static const strided_memory_resource_ops ops = {
        .allocate = refuse_allocate, .deallocate = refuse_deallocate, .destroy = NULL};
    strided_memory_resource_props dprops = {false, true, false, 0, false};
    strided_memory_resource_props hprops = {true, false, false, -1, false};
    strided_memory_resource *dev = NULL, *host = NULL;
    assert_ok(strided_memory_resource_create(&ops, NULL, &dprops, &dev));
    assert_ok(strided_memory_resource_create(&ops, NULL, &hprops, &host));
    strided_copy_temporaries only_device = {NULL, dev}, only_host = {host, NULL};
    fresh(SMALL_CHUNK);
    side h = SIDE(PAGEABLE, 4, (40, 50), (150, 3));
    side d = SIDE(DEVICE, 4, (40, 50), (1, 41));
    assert_error(copy(&d, &h, STRIDED_COPY_DEFAULT, &only_device), STRIDED_ERR_OUT_OF_MEMORY,
                 "refuse", "refused 8000 bytes");
    assert_error(copy(&d, &h, STRIDED_COPY_DEFAULT, &only_host), STRIDED_ERR_OUT_OF_MEMORY,
                 "refuse", "refused");
    assert_error(copy(&h, &d, STRIDED_COPY_DEFAULT, &only_host), STRIDED_ERR_OUT_OF_MEMORY,
                 "refuse", "refused");
    side_free(&h);
    side_free(&d);
    strided_memory_resource_release(dev);
    strided_memory_resource_release(host);
    assert_nothing_left();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pinned_contiguous_is_one_dma),
        cmocka_unit_test(test_pageable_contiguous_is_staged),
        cmocka_unit_test(test_staging_pipeline_in_pieces),
        cmocka_unit_test(test_long_sparse_rows_from_pinned_memory_are_one_2d_copy),
        cmocka_unit_test(test_rows_2d_beat_the_footprint_when_long),
        cmocka_unit_test(test_sparse_rows_are_packed_otherwise),
        cmocka_unit_test(test_gathers_into_a_dense_destination_need_no_device_step),
        cmocka_unit_test(test_pieces_cut_a_middle_axis),
        cmocka_unit_test(test_staging_pieces_ramp),
        cmocka_unit_test(test_staging_ramps_both_ways),
        cmocka_unit_test(test_gapped_gathers_do_not_ramp),
        cmocka_unit_test(test_staging_from_a_host_resource),
        cmocka_unit_test(test_host_resource_must_give_host_memory),
        cmocka_unit_test(test_staging_chunk_size_from_the_environment),
        cmocka_unit_test(test_concurrent_staged_copies),
#if defined(STRIDED_HAVE_KERNELS)
        cmocka_unit_test(test_dense_sources_cross_as_their_footprint),
        cmocka_unit_test(test_reversed_and_mildly_gapped_sources_cross_as_their_footprint),
        cmocka_unit_test(test_broadcast_sources_travel_small),
        cmocka_unit_test(test_sparse_broadcast_sources_are_packed_small),
        cmocka_unit_test(test_sparse_sources_into_gapped_destinations_pack_then_scatter),
        cmocka_unit_test(test_dense_host_destinations_take_a_dense_temporary),
        cmocka_unit_test(test_gapped_host_destinations_are_scattered),
        cmocka_unit_test(test_default_temporaries_come_from_the_pool_in_stream_order),
#else
        cmocka_unit_test(test_without_kernels_device_steps_fail_cleanly),
#endif
        cmocka_unit_test(test_graph_capture_takes_only_what_a_graph_holds),
        cmocka_unit_test(test_every_driver_failure_is_reported_and_cleaned_up),
        cmocka_unit_test(test_failing_resources_are_reported),
    };
    use_fake_driver(FAKE_CUDA_PATH, 2);
    find_controls();
    unsetenv("STRIDED_STAGING_CHUNK_BYTES");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
