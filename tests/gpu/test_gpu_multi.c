/*
 * GPU tests of copies between views in device memory (strided_view_copy,
 * src/copy/device.c) against the real CUDA driver: overlapping
 * copies on one device, and copies between two devices.
 *
 * Every case names two views by layout (shape, strides and the offset of
 * element 0, in elements, plus a byte shift) over device allocations, fills
 * the allocations with a pattern in which neighbouring bytes differ, copies
 * on a stream, and then reads every byte of the allocations back: the
 * destination's allocation must equal what strided_copy_host (which stages
 * overlapping copies on the host) makes of the same bytes on the host, the
 * source's allocation (when it is another one) must be unchanged.
 *
 * One device (device 0): source and destination in one allocation -
 * shifted rows and columns, in-place transposes, reversals, a broadcast
 * row, interleaved rows whose elements do not meet but whose footprints
 * do, elements that overlap by part of their bytes, identical sides - over
 * every plan kind (asserted) and element sizes 1, 2, 4, 8, 16 and 12 bytes;
 * with temporaries from the device's pool and from a device memory
 * resource, on the legacy default stream and on a non-blocking stream.
 *
 * Two devices (0 and 1, both directions; "skipped: fewer than 2 CUDA
 * devices" with one): contiguous, pitched rows, transposed, reversed,
 * broadcast, sparse (a footprint three times the payload) sources, dense and
 * gapped destinations, pooled and managed memory, element sizes 1, 2, 4, 8
 * and 16 bytes, each with peer access as the devices allow and again with
 * STRIDED_COPY_NO_PEER=1 (the staged paths: the footprint DMA and packing
 * on the source's device). A large copy checks the ordering: a DMA queued on
 * the stream just before the copy writes the source (the copy must see it),
 * and a DMA queued just after reads the destination back (it must see the
 * copy), with only the stream synchronised.
 *
 * The test links no CUDA library: it loads libcuda.so.1 itself for the
 * calls it makes. Without a driver or a device it prints "skipped: no CUDA
 * device" and passes. STRIDED_GPU_MULTI_TESTS, a cmocka test name pattern,
 * runs only the tests it matches (test_one_*: the one-device part,
 * test_two_*: the two-device part).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */

#include "gpu_test.h"

#include <stdlib.h>

#include "strided.h"

#define MAX_TEST_DEVICES 2

static int device_count;
static CUdevice devices[MAX_TEST_DEVICES];
static CUcontext primaries[MAX_TEST_DEVICES];
static long cases;

static void use_device(int device)
{
    CU(cuCtxSetCurrent(primaries[device]));
}

static int set_device_zero(void **state)
{
    (void)state;
    return cu.cuCtxSetCurrent(primaries[0]) == CUDA_SUCCESS ? 0 : -1;
}

/* The two-device tests run with two devices only. */
static bool two_devices(void)
{
    if (device_count >= 2)
        return true;
    printf("skipped: fewer than 2 CUDA devices\n");
    return false;
}

typedef enum mem_kind { PLAIN, POOLED, MANAGED } mem_kind;

/* A device allocation: cuMemAlloc (PLAIN), the device's memory pool
 * (POOLED, strided's device resource) or managed memory of the device
 * (MANAGED, strided's managed resource). */
typedef struct region {
    int device;
    size_t bytes;
    CUdeviceptr base;
    strided_buffer *buffer; /* POOLED, MANAGED */
} region;

static region region_new(int device, size_t bytes, mem_kind kind)
{
    region r = {device, bytes, 0, NULL};
    use_device(device);
    if (kind == PLAIN) {
        CU(cuMemAlloc(&r.base, bytes));
    } else {
        strided_memory_resource *mr;
        assert_ok(kind == POOLED ? strided_device_resource_create(device, &mr)
                                 : strided_managed_resource_create(device, &mr));
        assert_ok(strided_buffer_alloc(mr, bytes, NULL, &r.buffer));
        strided_memory_resource_release(mr);
        strided_memory_info info = strided_buffer_memory_info(r.buffer);
        assert_true(info.device_accessible);
        assert_int_equal(info.device_id, device);
        assert_int_equal(info.pooled, kind == POOLED);
        r.base = (CUdeviceptr)info.device_address;
        CU(cuCtxSynchronize());
    }
    use_device(0);
    return r;
}

static void region_free(region *r)
{
    use_device(r->device);
    if (r->buffer != NULL) {
        CU(cuCtxSynchronize());
        strided_buffer_release(r->buffer);
        CU(cuCtxSynchronize());
    } else {
        CU(cuMemFree(r->base));
    }
    use_device(0);
    r->buffer = NULL;
    r->base = 0;
}

static unsigned char *host_alloc(size_t bytes)
{
    unsigned char *m = malloc(bytes > 0 ? bytes : 1);
    assert_non_null(m);
    return m;
}

/* The pattern: neighbouring bytes differ; seed tells fills apart. */
static void fill(unsigned char *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t h = ((uint32_t)i + seed * 0x9E3779B9u) * 2654435761u;
        p[i] = (unsigned char)((h >> 24) ^ (h >> 13) ^ seed);
    }
}

/* Complete on return: cuMemcpyHtoD from pageable memory may return before
 * its DMA lands, and copies on a non-blocking stream do not wait for it. */
static void upload(const region *r, const unsigned char *host)
{
    use_device(r->device);
    CU(cuMemcpyHtoD(r->base, host, r->bytes));
    CU(cuCtxSynchronize());
    use_device(0);
}

static void download(const region *r, unsigned char *host)
{
    use_device(r->device);
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(host, r->base, r->bytes));
    use_device(0);
}

/* One side of a copy: a layout in elements over a region, element 0 at
 * offset elements plus shift bytes from the region's start. */
typedef struct side {
    int ndim;
    int64_t shape[4], strides[4];
    int64_t offset;
    int shift;
} side;

#define SIDE(shape, strides, offset) side_of(N64 shape, I64 shape, I64 strides, (offset), 0)

static side side_of(int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                    int shift)
{
    side s = {ndim, {0}, {0}, offset, shift};
    for (int k = 0; k < ndim; k++) {
        s.shape[k] = shape[k];
        s.strides[k] = strides[k];
    }
    return s;
}

static strided_layout layout_of(const side *s, int itemsize)
{
    strided_layout l;
    assert_ok(strided_layout_init(&l, s->ndim, s->shape, s->strides, itemsize));
    return l;
}

static size_t at_bytes(const side *s, int itemsize)
{
    return (size_t)(s->offset * itemsize + s->shift);
}

static bool kinds_seen[6];

/* How a case runs. */
typedef struct how {
    CUstream stream;                     /* on the destination's device */
    const strided_copy_temporaries *tmp; /* NULL: the defaults */
    unsigned flags;
} how;

#define check(dst_region, dst_side, src_region, src_side, itemsize, how, what)                \
    check_at(&(dst_region), (dst_side), &(src_region), (src_side), (itemsize), (how), (what), \
             __FILE__, __LINE__)

static void check_at(const region *dr, side ds, const region *sr, side ss, int itemsize, how h,
                     const char *what, const char *file, int line)
{
    bool same = dr == sr;
    strided_layout dl = layout_of(&ds, itemsize), sl = layout_of(&ss, itemsize);
    strided_copy_plan plan;
    check_status_(strided_copy_plan_make(&dl, &sl, &plan), STRIDED_OK, file, line);
    kinds_seen[plan.kernel] = true;

    /* The starting bytes, and what the copy must make of them. */
    unsigned char *hd = host_alloc(dr->bytes), *hs = same ? hd : host_alloc(sr->bytes);
    fill(hd, dr->bytes, (uint32_t)cases * 2 + 1);
    if (!same)
        fill(hs, sr->bytes, (uint32_t)cases * 2 + 2);
    upload(dr, hd);
    if (!same)
        upload(sr, hs);
    unsigned char *want = host_alloc(dr->bytes);
    memcpy(want, hd, dr->bytes);
    const unsigned char *from = same ? want : hs;
    check_status_(strided_copy_host(want + at_bytes(&ds, itemsize), &dl,
                                    from + at_bytes(&ss, itemsize), &sl, 1),
                  STRIDED_OK, file, line);

    strided_view dv, sv;
    check_status_(strided_view_wrap((void *)(uintptr_t)(dr->base + at_bytes(&ds, itemsize)), &dl,
                                    NULL, false, NULL, NULL, NULL, &dv),
                  STRIDED_OK, file, line);
    check_status_(strided_view_wrap((void *)(uintptr_t)(sr->base + at_bytes(&ss, itemsize)), &sl,
                                    NULL, false, NULL, NULL, NULL, &sv),
                  STRIDED_OK, file, line);
    strided_status st = strided_view_copy_ex(&dv, &sv, h.stream, h.flags, h.tmp);
    if (st != STRIDED_OK)
        fail_at(file, line, "%s (%s, %dB): %s\n", what, strided_copy_kernel_name(plan.kernel),
                itemsize, strided_last_error());
    /* Only the stream is waited for (unless the copy was blocking). */
    if (!(h.flags & STRIDED_COPY_BLOCKING)) {
        use_device(dr->device);
        cu_check_(cu.cuStreamSynchronize(h.stream), "cuStreamSynchronize", file, line);
        use_device(0);
    }
    strided_view_release(&dv);
    strided_view_release(&sv);

    unsigned char *got = host_alloc(dr->bytes);
    download(dr, got);
    for (size_t i = 0; i < dr->bytes; i++)
        if (got[i] != want[i])
            fail_at(file, line, "%s (%s, %dB): destination byte %zu: 0x%02x, expected 0x%02x%s\n",
                    what, strided_copy_kernel_name(plan.kernel), itemsize, i, got[i], want[i],
                    want[i] == hd[i] ? " (untouched)" : "");
    if (!same) {
        unsigned char *src_now = host_alloc(sr->bytes);
        download(sr, src_now);
        if (memcmp(src_now, hs, sr->bytes) != 0)
            fail_at(file, line, "%s: the source changed\n", what);
        free(src_now);
        free(hs);
    }
    free(got);
    free(want);
    free(hd);
    cases++;
}

static const int itemsizes[] = {1, 2, 4, 8, 16, 12};
#define NITEMSIZES (sizeof itemsizes / sizeof itemsizes[0])

/* Every overlapping case over an n x n array a of itemsize bytes in r. */
static void overlaps(const region *r, int64_t n, int itemsize, how h)
{
    const int64_t h2 = n / 2;
    side c = SIDE((n, n), (n, 1), 0);
    /* a[1:] <- a[:-1]: one contiguous run each. */
    check(*r, SIDE((n - 1, n), (n, 1), n), *r, SIDE((n - 1, n), (n, 1), 0), itemsize, h,
          "a[1:] <- a[:-1]");
    /* a[:-1] <- a[1:] */
    check(*r, SIDE((n - 1, n), (n, 1), 0), *r, SIDE((n - 1, n), (n, 1), n), itemsize, h,
          "a[:-1] <- a[1:]");
    /* a[:, 1:] <- a[:, :-1]: rows. */
    check(*r, SIDE((n, n - 1), (n, 1), 1), *r, SIDE((n, n - 1), (n, 1), 0), itemsize, h,
          "a[:, 1:] <- a[:, :-1]");
    /* a[1:, 1:] <- a[:-1, :-1] */
    check(*r, SIDE((n - 1, n - 1), (n, 1), n + 1), *r, SIDE((n - 1, n - 1), (n, 1), 0), itemsize, h,
          "a[1:, 1:] <- a[:-1, :-1]");
    /* a <- a.T (in place): a transpose. */
    check(*r, c, *r, SIDE((n, n), (1, n), 0), itemsize, h, "a <- a.T");
    /* a.T <- a */
    check(*r, SIDE((n, n), (1, n), 0), *r, c, itemsize, h, "a.T <- a");
    /* a <- a[::-1, ::-1] */
    check(*r, c, *r, SIDE((n, n), (-n, -1), n * n - 1), itemsize, h, "a <- a[::-1, ::-1]");
    /* a[::-1] <- a */
    check(*r, SIDE((n, n), (-n, 1), (n - 1) * n), *r, c, itemsize, h, "a[::-1] <- a");
    /* a <- a[3] (one row, broadcast). */
    check(*r, c, *r, SIDE((n), (1), 3 * n), itemsize, h, "a <- a[3]");
    /* a <- a[:, 2:3] (one column, broadcast along rows). */
    check(*r, c, *r, SIDE((n, 1), (n, 1), 2), itemsize, h, "a <- a[:, 2:3]");
    /* a[:, ::2] <- a.T[:, ::2]: a gather. */
    check(*r, SIDE((n, (n + 1) / 2), (n, 2), 0), *r, SIDE((n, (n + 1) / 2), (1, 2 * n), 0),
          itemsize, h, "a[:, ::2] <- a.T[:, ::2]");
    /* a[::2] <- a[1::2]: the elements never meet, the footprints do. */
    check(*r, SIDE((h2, n), (2 * n, 1), 0), *r, SIDE((h2, n), (2 * n, 1), n), itemsize, h,
          "a[::2] <- a[1::2]");
    /* The flat array shifted by 5 elements, both ways. */
    check(*r, SIDE((n * n - 5), (1), 5), *r, SIDE((n * n - 5), (1), 0), itemsize, h,
          "a.flat[5:] <- a.flat[:-5]");
    check(*r, SIDE((n * n - 5), (1), 0), *r, SIDE((n * n - 5), (1), 5), itemsize, h,
          "a.flat[:-5] <- a.flat[5:]");
    /* a <- a: nothing to do, nothing changes. */
    check(*r, c, *r, c, itemsize, h, "a <- a");
    /* Elements that overlap by part of their bytes: the destination one
     * byte on. */
    if (itemsize > 1) {
        side d = side_of(1, I64(n * n - 1), I64(1), 0, 1);
        side s = side_of(1, I64(n * n - 1), I64(1), 0, 0);
        check(*r, d, *r, s, itemsize, h, "a.bytes[1:] <- a");
        side dt = side_of(2, I64(n - 1, n - 1), I64(1, n), 0, 1);
        check(*r, dt, *r, SIDE((n - 1, n - 1), (n, 1), 0), itemsize, h, "a.bytes[1:].T <- a");
    }
}

static void test_one_device_overlaps(void **state)
{
    (void)state;
    const int64_t n = 67;
    for (size_t i = 0; i < NITEMSIZES; i++) {
        int s = itemsizes[i];
        region r = region_new(0, (size_t)(n * n * s), PLAIN);
        overlaps(&r, n, s, (how){NULL, NULL, 0});
        region_free(&r);
    }
    /* Every plan kind was among them. */
    for (int k = STRIDED_COPY_CONTIGUOUS; k <= STRIDED_COPY_GATHER; k++)
        if (!kinds_seen[k])
            fail_msg("no overlapping case planned as %s",
                     strided_copy_kernel_name((strided_copy_kernel)k));
}

static void test_one_device_overlaps_streams_and_temporaries(void **state)
{
    (void)state;
    const int64_t n = 45;
    CUstream stream;
    strided_memory_resource *mr;
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    assert_ok(strided_device_resource_create(0, &mr));
    strided_copy_temporaries temps = {NULL, mr};
    static const int sizes[] = {1, 4, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int s = sizes[i];
        region r = region_new(0, (size_t)(n * n * s), PLAIN);
        overlaps(&r, n, s, (how){stream, NULL, 0});
        overlaps(&r, n, s, (how){stream, &temps, 0});
        overlaps(&r, n, s, (how){stream, NULL, STRIDED_COPY_BLOCKING});
        region_free(&r);
        /* In pooled and managed memory. */
        r = region_new(0, (size_t)(n * n * s), POOLED);
        overlaps(&r, n, s, (how){stream, NULL, 0});
        region_free(&r);
        r = region_new(0, (size_t)(n * n * s), MANAGED);
        overlaps(&r, n, s, (how){stream, NULL, 0});
        region_free(&r);
    }
    strided_memory_resource_release(mr);
    CU(cuStreamDestroy(stream));
}

static void test_one_device_large_overlaps(void **state)
{
    (void)state;
    /* 2048 x 2048 floats: many blocks of each kernel over a temporary of
     * 16 MiB. */
    const int64_t n = 2048;
    CUstream stream;
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    region r = region_new(0, (size_t)(n * n * 4), PLAIN);
    how h = {stream, NULL, 0};
    check(r, SIDE((n, n), (n, 1), 0), r, SIDE((n, n), (1, n), 0), 4, h, "a <- a.T (2048)");
    check(r, SIDE((n, n - 1), (n, 1), 1), r, SIDE((n, n - 1), (n, 1), 0), 4, h,
          "a[:, 1:] <- a[:, :-1] (2048)");
    check(r, SIDE((n, n), (-n, -1), n * n - 1), r, SIDE((n, n), (n, 1), 0), 4, h,
          "a[::-1, ::-1] <- a (2048)");
    region_free(&r);
    CU(cuStreamDestroy(stream));
}

/* Every cross-device case from device sd to device dd, r x c elements. */
static void across(int dd, int sd, int64_t r, int64_t c, int itemsize, how h)
{
    size_t s = (size_t)itemsize;
    region dst = region_new(dd, (size_t)(r * c) * s, PLAIN);
    region gapped = region_new(dd, (size_t)(r * 2 * c) * s, PLAIN);
    region src = region_new(sd, (size_t)(r * 3 * c) * s, PLAIN);
    side dc = SIDE((r, c), (c, 1), 0);
    check(dst, dc, src, SIDE((r, c), (c, 1), 0), itemsize, h, "c <- c");
    check(dst, dc, src, SIDE((r, c), (c + 3, 1), 2), itemsize, h, "c <- pitched rows");
    check(dst, dc, src, SIDE((r, c), (1, r), 0), itemsize, h, "c <- transposed");
    check(dst, SIDE((r, c), (1, r), 0), src, SIDE((r, c), (c, 1), 0), itemsize, h,
          "transposed <- c");
    check(dst, dc, src, SIDE((r, c), (-c, -1), r * c - 1), itemsize, h, "c <- reversed");
    check(dst, dc, src, SIDE((c), (1), 5), itemsize, h, "c <- broadcast row");
    check(dst, dc, src, SIDE((r, 1), (1, 1), 0), itemsize, h, "c <- broadcast column");
    check(dst, dc, src, SIDE((r, c), (3 * c, 3), 1), itemsize, h, "c <- sparse");
    check(dst, SIDE((r, c), (1, r), 0), src, SIDE((r, c), (3 * c, 3), 0), itemsize, h,
          "transposed <- sparse");
    check(gapped, SIDE((r, c), (2 * c, 2), 1), src, SIDE((r, c), (3 * c, 3), 0), itemsize, h,
          "gapped <- sparse");
    check(gapped, SIDE((r, c), (2 * c, 2), 0), src, SIDE((r, c), (1, 3 * r), 0), itemsize, h,
          "gapped <- sparse transposed");
    region_free(&src);
    /* Pool memory on the source's side (peer access does not cover it),
     * managed memory on the destination's. */
    region pooled = region_new(sd, (size_t)(r * 3 * c) * s, POOLED);
    check(dst, dc, pooled, SIDE((r, c), (1, r), 0), itemsize, h, "c <- pooled transposed");
    check(dst, dc, pooled, SIDE((r, c), (3 * c, 3), 2), itemsize, h, "c <- pooled sparse");
    check(dst, dc, pooled, SIDE((r, c), (c, 1), 0), itemsize, h, "c <- pooled c");
    region managed = region_new(dd, (size_t)(r * c) * s, MANAGED);
    check(managed, dc, pooled, SIDE((r, c), (1, r), 0), itemsize, h, "managed <- pooled");
    region_free(&pooled);
    region msrc = region_new(sd, (size_t)(r * c) * s, MANAGED);
    check(dst, dc, msrc, SIDE((r, c), (1, r), 0), itemsize, h, "c <- managed transposed");
    region_free(&msrc);
    region_free(&managed);
    region_free(&gapped);
    region_free(&dst);
}

/* Run fn's cases in both directions, with peer access and without. */
static void both_ways(void (*fn)(int dd, int sd))
{
    for (int no_peer = 0; no_peer < 2; no_peer++) {
        if (no_peer)
            setenv("STRIDED_COPY_NO_PEER", "1", 1);
        fn(1, 0);
        fn(0, 1);
        unsetenv("STRIDED_COPY_NO_PEER");
    }
}

static void across_sizes(int dd, int sd)
{
    static const int sizes[] = {1, 2, 4, 8, 16};
    CUstream stream;
    use_device(dd);
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    use_device(0);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        across(dd, sd, 37, 45, sizes[i], (how){stream, NULL, 0});
        across(dd, sd, 300, 257, sizes[i], (how){stream, NULL, 0});
    }
    /* The legacy default stream, and a blocking copy. */
    across(dd, sd, 64, 33, 4, (how){NULL, NULL, 0});
    across(dd, sd, 64, 33, 8, (how){stream, NULL, STRIDED_COPY_BLOCKING});
    use_device(dd);
    CU(cuStreamDestroy(stream));
    use_device(0);
}

static void test_two_devices(void **state)
{
    (void)state;
    if (!two_devices()) {
        skip();
        return;
    }
    int can01 = 0, can10 = 0;
    CU(cuDeviceCanAccessPeer(&can01, devices[0], devices[1]));
    CU(cuDeviceCanAccessPeer(&can10, devices[1], devices[0]));
    printf("peer access: 0 -> 1 %s, 1 -> 0 %s\n", can01 ? "yes" : "no", can10 ? "yes" : "no");
    both_ways(across_sizes);
}

static void across_temporaries(int dd, int sd)
{
    /* Temporaries on the destination's device from a device resource. */
    strided_memory_resource *mr;
    assert_ok(strided_device_resource_create(dd, &mr));
    strided_copy_temporaries temps = {NULL, mr};
    CUstream stream;
    use_device(dd);
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    use_device(0);
    across(dd, sd, 37, 45, 4, (how){stream, &temps, 0});
    use_device(dd);
    CU(cuStreamDestroy(stream));
    use_device(0);
    strided_memory_resource_release(mr);
}

static void test_two_devices_temporaries(void **state)
{
    (void)state;
    if (!two_devices()) {
        skip();
        return;
    }
    both_ways(across_temporaries);
}

/* A large sparse copy between a DMA that writes its source and one that
 * reads its destination, all on the stream; only the stream is waited for. */
static void ordering(int dd, int sd)
{
    const int64_t n = 2048, isz = 4;
    const size_t src_bytes = (size_t)(n * 3 * n * isz), dst_bytes = (size_t)(n * n * isz);
    region src = region_new(sd, src_bytes, PLAIN), dst = region_new(dd, dst_bytes, PLAIN);
    unsigned char *old_src = host_alloc(src_bytes), *before = host_alloc(dst_bytes);
    fill(old_src, src_bytes, 7);
    fill(before, dst_bytes, 8);
    upload(&src, old_src);
    upload(&dst, before);
    void *new_src = NULL, *after = NULL;
    use_device(dd);
    CU(cuMemHostAlloc(&new_src, src_bytes, 0));
    CU(cuMemHostAlloc(&after, dst_bytes, 0));
    fill(new_src, src_bytes, 9);
    memset(after, 0, dst_bytes);
    CUstream stream;
    CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

    side ss = SIDE((n, n), (3 * n, 3), 1), ds = SIDE((n, n), (1, n), 0);
    strided_layout sl = layout_of(&ss, isz), dl = layout_of(&ds, isz);
    strided_view sv, dv;
    assert_ok(strided_view_wrap((void *)(uintptr_t)(src.base + at_bytes(&ss, isz)), &sl, NULL,
                                false, NULL, NULL, NULL, &sv));
    assert_ok(strided_view_wrap((void *)(uintptr_t)(dst.base + at_bytes(&ds, isz)), &dl, NULL,
                                false, NULL, NULL, NULL, &dv));
    CU(cuMemcpyHtoDAsync(src.base, new_src, src_bytes, stream));
    assert_ok(strided_view_copy(&dv, &sv, stream, 0));
    CU(cuMemcpyDtoHAsync(after, dst.base, dst_bytes, stream));
    CU(cuStreamSynchronize(stream));

    unsigned char *want = host_alloc(dst_bytes);
    memcpy(want, before, dst_bytes);
    assert_ok(strided_copy_host(want + at_bytes(&ds, isz), &dl,
                                (unsigned char *)new_src + at_bytes(&ss, isz), &sl, 1));
    if (memcmp(after, want, dst_bytes) != 0)
        fail_msg("device %d <- %d: the copy did not see the DMA before it, or the DMA after "
                 "it did not see the copy",
                 dd, sd);
    cases++;
    strided_view_release(&sv);
    strided_view_release(&dv);
    CU(cuStreamDestroy(stream));
    CU(cuMemFreeHost(new_src));
    CU(cuMemFreeHost(after));
    use_device(0);
    free(want);
    free(old_src);
    free(before);
    region_free(&src);
    region_free(&dst);
}

static void test_two_devices_ordering(void **state)
{
    (void)state;
    if (!two_devices()) {
        skip();
        return;
    }
    both_ways(ordering);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_one_device_overlaps, set_device_zero),
        cmocka_unit_test_setup(test_one_device_overlaps_streams_and_temporaries, set_device_zero),
        cmocka_unit_test_setup(test_one_device_large_overlaps, set_device_zero),
        cmocka_unit_test_setup(test_two_devices, set_device_zero),
        cmocka_unit_test_setup(test_two_devices_temporaries, set_device_zero),
        cmocka_unit_test_setup(test_two_devices_ordering, set_device_zero),
    };
    int rc;

    /* Peer access as the devices allow unless a test says otherwise. */
    unsetenv("STRIDED_COPY_NO_PEER");
    rc = gpu_test_start(&device_count);
    if (rc >= 0)
        return rc;
    if (device_count > MAX_TEST_DEVICES)
        device_count = MAX_TEST_DEVICES;
    if (!gpu_retain_devices(device_count, devices, primaries))
        return 1;
    gpu_test_filter("STRIDED_GPU_MULTI_TESTS");
    rc = cmocka_run_group_tests_name("gpu multi", tests, NULL, NULL);
    printf("%ld copies checked\n", cases);
    gpu_release_devices(device_count, devices);
    return rc;
}
