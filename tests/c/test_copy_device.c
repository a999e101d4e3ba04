/*
 * test_copy_device.c: copies between two views in device or managed memory
 * (strided__copy_between_devices, src/copy/device.c), through
 * strided_view_copy, against the fake CUDA driver (DRIVER_FAKE), or called
 * directly with no driver (DRIVER_NONE), in a library built with its CUDA
 * kernels (STRIDED_HAVE_KERNELS) or without.
 *
 * The fake runs no kernel and copies no byte: these tests check which path
 * a copy takes - which launches on which device and stream, which
 * temporaries of which size, which events and waits, which peer-access
 * calls - and that every failure of a driver call is reported and leaves
 * no temporary (fake_cuda_live_bytes) and no event (fake_cuda_live_events)
 * behind, and the caller's context current. tests/gpu/test_gpu_multi.c
 * checks the bytes on real devices.
 *
 * The library remembers peer access per ordered pair of devices for the
 * life of the process (fake_cuda_reset does not forget it), so each test
 * that counts peer-access calls uses pairs no earlier test touched; the
 * tests run in the order of main's list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>

#include "test_copy.h"
#include "test_cuda.h"
#include "test_util.h"

#include "copy/device.h"
#include "copy/launch.h"
#include "cuda/cuda_api.h"
#include "strided/buffer.h"
#include "strided/copy.h"
#include "strided/resource.h"
#include "strided/view.h"

#define OP "copy"
#define STREAM_A ((void *)0x1000)

#if defined(DRIVER_NONE)

/* Device memory that no driver is asked about: views made with the CUDA
 * device given (strided_view_wrap takes it at its word). The address is
 * never dereferenced. */
static strided_view device_view(uintptr_t element0, strided_layout l, int device)
{
    strided_device dev = {STRIDED_DEVICE_CUDA, device};
    strided_view v;
    assert_ok(strided_view_wrap((void *)element0, &l, NULL, false, &dev, NULL, NULL, &v));
    return v;
}

static strided__copy_job job_of(const strided_copy_plan *p, const strided_view *dst,
                                const strided_view *src)
{
    strided__copy_job job = {.plan = p,
                             .dst = dst,
                             .src = src,
                             .dst_info = strided_buffer_memory_info(dst->buffer),
                             .src_info = strided_buffer_memory_info(src->buffer)};
    job.device = job.dst_info.device_id;
    return job;
}

#define BASE ((uintptr_t)0x7f0000100000)

static void test_identical_sides_need_nothing(void **state)
{
    (void)state;
    strided_layout l = mk_c(DIMS(8, 8), 4);
    strided_view a = device_view(BASE, l, 0);
    strided_copy_plan p;
    assert_ok(strided_copy_plan_make(&l, &l, &p));
    strided__copy_job job = job_of(&p, &a, &a);
    assert_ok(strided__copy_between_devices(&job));
    strided_view_release(&a);
}

static void test_copies_need_a_driver(void **state)
{
    (void)state;
    strided_layout c = mk_c(DIMS(8, 8), 4), t = permuted(c, 1, 0);
    strided_view a = device_view(BASE, c, 0), at = device_view(BASE, t, 0);
    strided_view b = device_view(BASE + 4096, c, 1);
    strided_copy_plan p;
    /* Overlapping (a transpose in place), and across two devices. */
    assert_ok(strided_copy_plan_make(&c, &t, &p));
    strided__copy_job job = job_of(&p, &a, &at);
    assert_error(strided__copy_between_devices(&job), STRIDED_ERR_NO_CUDA_DRIVER, OP,
                 "no CUDA driver");
    assert_ok(strided_copy_plan_make(&c, &c, &p));
    job = job_of(&p, &b, &a);
    assert_error(strided__copy_between_devices(&job), STRIDED_ERR_NO_CUDA_DRIVER, OP,
                 "no CUDA driver");
    strided_view_release(&a);
    strided_view_release(&at);
    strided_view_release(&b);
}

static void test_byte_offsets_beyond_int64(void **state)
{
    (void)state;
    /* A hand-made plan whose source reaches 2^62 elements of 16 bytes. */
    strided_layout l = mk_c(DIMS(2, 3), 16);
    strided_view a = device_view(BASE, l, 0), b = device_view(BASE + 4096, l, 0);
    strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, 16, (2, 3), (3, 1), ((int64_t)1 << 62, 1), -1);
    strided__copy_job job = job_of(&p, &b, &a);
    assert_error(strided__copy_between_devices(&job), STRIDED_ERR_OVERFLOW, OP,
                 "do not fit in int64");
    p = PLAN(STRIDED_COPY_GATHER, 16, (2, 3), (3, 1), (-((int64_t)1 << 62), 1), -1);
    assert_error(strided__copy_between_devices(&job), STRIDED_ERR_OVERFLOW, OP,
                 "do not fit in int64");
    strided_view_release(&a);
    strided_view_release(&b);
}

#else /* DRIVER_FAKE */

static const strided_dtype F32 = {STRIDED_DTYPE_FLOAT, 32, 1};

/* The fake's controls beyond test_cuda.h's. */
static fake_cuda_last_launch_fn last_launch;
static fake_cuda_fail_after_fn fail_after;
static fake_cuda_move_bytes_fn move_bytes;

static void find_launch_controls(void)
{
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        exit(1);
    }
    fake_symbol_(lib, "fake_cuda_last_launch", &last_launch);
    fake_symbol_(lib, "fake_cuda_fail_after", &fail_after);
    fake_symbol_(lib, "fake_cuda_move_bytes", &move_bytes);
}

enum { PLAIN = 0, POOLED = 1, MANAGED = 2 };
static int pool_marker; /* a memory-pool handle for the fake's range table */

/* Free memory made known to the fake, which forgets it first (else memory
 * allocated later at the same address would pass for this memory). */
static void release_memory(void *context, void *ptr, size_t size)
{
    (void)context;
    (void)size;
    fake.remove_range((uintptr_t)ptr);
    free(ptr);
}

/* size bytes of device memory of device (kind: PLAIN cuMemAlloc memory,
 * POOLED memory-pool memory, MANAGED managed memory of that device), in a
 * buffer that frees it. */
static strided_buffer *device_memory(size_t size, int device, int kind)
{
    size_t rounded = (size + 255) / 256 * 256;
    void *p = aligned_alloc(256, rounded);
    assert_non_null(p);
    memset(p, 0, rounded);
    fake_cuda_range r = {(uintptr_t)p,
                         size,
                         CU_MEMORYTYPE_DEVICE,
                         kind == MANAGED,
                         device,
                         (uintptr_t)p,
                         kind == POOLED ? (void *)&pool_marker : NULL};
    fake.add_range(&r);
    strided_buffer *b;
    assert_ok(strided_buffer_wrap(p, size, release_memory, NULL, &b));
    return b;
}

static strided_view view_of(strided_buffer *b, strided_layout l)
{
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, &F32, false, &v));
    return v;
}

/* An n x m float32 view (C order, or the transpose of an m x n C array)
 * of new device memory. */
static strided_view matrix(int64_t n, int64_t m, int device, bool transposed, int kind)
{
    strided_buffer *b = device_memory((size_t)(n * m * 4), device, kind);
    strided_layout mn = mk_c(DIMS(m, n), 4);
    strided_layout l = transposed ? permuted(mn, 1, 0) : mk_c(DIMS(n, m), 4);
    strided_view v = view_of(b, l);
    strided_buffer_release(b);
    return v;
}

/* n x n floats of every third column of an n x 3n C array: a footprint
 * three times its payload. */
static strided_view sparse(int64_t n, int device, int kind)
{
    strided_buffer *b = device_memory((size_t)(3 * n * n * 4), device, kind);
    strided_view v = view_of(b, mk(DIMS(n, n), I64(3 * n, 3), 4));
    strided_buffer_release(b);
    return v;
}

static void release2(strided_view *a, strided_view *b)
{
    strided_view_release(a);
    strided_view_release(b);
}

/* Nothing allocated through the fake or created is left, and the caller's
 * context is current again. */
#define assert_clean(context)                                \
    do {                                                     \
        assert_int_equal(fake.live_bytes(), 0);              \
        assert_int_equal(fake.live_events(), 0);             \
        assert_ptr_equal(fake.current_context(), (context)); \
    } while (0)

#define copy(dst, src) strided_view_copy(&(dst), &(src), STREAM_A, 0)

#if defined(STRIDED_HAVE_KERNELS)

static uintptr_t addr(const strided_view *v)
{
    return strided_view_device_ptr(v);
}

static fake_cuda_launch launched(void)
{
    fake_cuda_launch l;
    assert_true(last_launch(&l));
    return l;
}

static void test_one_device_runs_the_plan(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    for (int dev = 0; dev < 2; dev++) {
        strided_view dst = matrix(64, 64, dev, false, PLAIN);
        strided_view src = matrix(64, 64, dev, true, PLAIN);
        long before = fake.calls("cuLaunchKernel");
        assert_ok(copy(dst, src));
        fake_cuda_launch l = launched();
        assert_int_equal(fake.calls("cuLaunchKernel"), before + 1);
        assert_int_equal(l.device, dev);
        assert_ptr_equal(l.stream, STREAM_A);
        assert_int_equal(l.args[0], addr(&dst));
        assert_int_equal(l.args[1], addr(&src));
        release2(&dst, &src);
    }
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 0);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 0);
    assert_int_equal(fake.calls("cuEventCreate"), 0);
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 0);
    assert_clean(NULL);
}

/* A packed float4_e2m1fn view (itemsize-1 layout of shape and strides,
 * element offset offset) of new device memory of size bytes on device. */
static strided_view packed_fp4(size_t size, int device, int n, int m, int64_t rs, int64_t cs,
                               int64_t offset)
{
    static const strided_dtype fp4 = {STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1};
    strided_buffer *b = device_memory(size, device, PLAIN);
    strided_layout l = mk(DIMS(n, m), I64(rs, cs), 1);
    l.slice_offset = offset;
    strided_view v;
    assert_ok(strided_view_from_buffer(b, &l, &fp4, false, &v));
    strided_buffer_release(b);
    return v;
}

static void test_packed_subbyte_copies_run_the_subbyte_kernel(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    /* A transposed (46,30) fp4 matrix into a row-major one: one tile of
     * 64 x 64 elements, one block. */
    strided_view dst = packed_fp4(1024, 1, 46, 30, 30, 1, 0);
    strided_view src = packed_fp4(1024, 1, 46, 30, 1, 46, 0);
    assert_ok(copy(dst, src));
    fake_cuda_launch l = launched();
    assert_string_equal(l.function, "strided_copy_subbyte_tiles");
    assert_int_equal(l.device, 1);
    assert_ptr_equal(l.stream, STREAM_A);
    assert_int_equal(l.grid[0], 1);
    assert_int_equal(l.block[0], 256);
    assert_int_equal(l.args[0], addr(&dst));
    assert_int_equal(l.args[1], addr(&src));
    assert_int_equal(l.args[2], 0); /* the plan's element 0 is the views' */
    /* Into padded memory (one element a byte) the same. */
    static const strided_dtype fp4 = {STRIDED_DTYPE_FLOAT4_E2M1FN, 4, 1};
    strided_buffer *pb = device_memory(46 * 30, 1, PLAIN);
    strided_layout pl = mk_c(DIMS(46, 30), 1);
    strided_view padded;
    assert_ok(strided_view_from_buffer_ex(pb, &pl, &fp4, true, false, &padded));
    strided_buffer_release(pb);
    assert_ok(copy(padded, src));
    l = launched();
    assert_string_equal(l.function, "strided_copy_subbyte_tiles");
    assert_int_equal(l.grid[0], 1);
    /* Rows of stride 1 on both sides: destination words, a block for each
     * of the 46 rows (9 words a row at most). */
    strided_view gapped = packed_fp4(2048, 1, 46, 30, 32, 1, 0);
    assert_ok(copy(padded, gapped));
    assert_string_equal(launched().function, "strided_copy_subbyte_runs");
    assert_int_equal(launched().grid[0], 46);
    strided_view_release(&gapped);
    /* Host memory: its bytes through a device temporary, in, the kernel,
     * and back out for a host destination. */
    static unsigned char host[1024];
    strided_view onhost;
    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    assert_ok(strided_view_wrap(host, &dst.layout, &fp4, false, &cpu, NULL, NULL, &onhost));
    long copies = fake.calls("cuMemcpyAsync"), launches = fake.calls("cuLaunchKernel");
    assert_ok(copy(onhost, src));
    assert_int_equal(fake.calls("cuMemcpyAsync"), copies + 2);
    assert_int_equal(fake.calls("cuLaunchKernel"), launches + 1);
    assert_string_equal(launched().function, "strided_copy_subbyte_tiles");
    assert_int_equal(launched().args[1], addr(&src));
    assert_ok(copy(src, onhost));
    assert_int_equal(fake.calls("cuMemcpyAsync"), copies + 3);
    assert_int_equal(launched().args[0], addr(&src));
    assert_clean(NULL);
    /* Overlapping packed memory, another device: refused, nothing
     * launched. */
    long before = fake.calls("cuLaunchKernel");
    strided_view shifted;
    strided_layout sl = dst.layout;
    sl.slice_offset = 2;
    sl.shape[0] = 45;
    assert_ok(strided_view_view(&dst, &sl, NULL, &shifted));
    strided_layout dl = dst.layout;
    dl.shape[0] = 45;
    strided_view head;
    assert_ok(strided_view_view(&dst, &dl, NULL, &head));
    assert_error(copy(shifted, head), STRIDED_ERR_UNSUPPORTED, OP, "overlapping");
    strided_view other = packed_fp4(1024, 0, 46, 30, 30, 1, 0);
    assert_error(copy(other, src), STRIDED_ERR_UNSUPPORTED, OP,
                 "the destination is on device 0, the source on device 1");
    assert_int_equal(fake.calls("cuLaunchKernel"), before);
    release2(&shifted, &head);
    release2(&other, &onhost);
    release2(&dst, &src);
    strided_view_release(&padded);
    assert_clean(NULL);
}

/* A device resource that counts and remembers the sizes asked for. */
typedef struct counting {
    int allocs, frees;
    size_t last_size;
    void *last_stream;
    bool device_accessible;
    int device; /* whose memory it hands out, when device_accessible */
} counting;

static strided_status counting_allocate(void *self, size_t size, void *stream, void **out)
{
    counting *c = self;
    c->allocs++;
    c->last_size = size;
    c->last_stream = stream;
    *out = malloc(size);
    if (*out == NULL)
        return STRIDED_ERR_OUT_OF_MEMORY;
    /* Copies classify a user resource's memory through the driver: the
     * fake must know device memory as such. */
    if (c->device_accessible) {
        fake_cuda_range r = {(uintptr_t)*out, size, CU_MEMORYTYPE_DEVICE, 0, c->device,
                             (uintptr_t)*out, NULL};
        fake.add_range(&r);
    }
    return STRIDED_OK;
}

static void counting_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)size;
    counting *c = self;
    c->frees++;
    c->last_stream = stream;
    if (c->device_accessible)
        fake.remove_range((uintptr_t)ptr);
    free(ptr);
}

static const strided_memory_resource_ops counting_ops = {
    .allocate = counting_allocate, .deallocate = counting_deallocate, .destroy = NULL};

static strided_memory_resource *counting_resource(counting *c, bool device_accessible)
{
    strided_memory_resource_props props = {!device_accessible, device_accessible, false,
                                           device_accessible ? 0 : -1, false};
    strided_memory_resource *mr;
    c->device_accessible = device_accessible;
    assert_ok(strided_memory_resource_create(&counting_ops, c, &props, &mr));
    return mr;
}

/* Two views of one n x m C buffer: dst = dst_layout, src = src_layout
 * (offsets in the layouts' slice offsets). */
static void overlapping(int64_t n, int64_t m, int device, strided_layout dst_layout,
                        strided_layout src_layout, strided_view *dst, strided_view *src)
{
    strided_buffer *b = device_memory((size_t)(n * m * 4), device, PLAIN);
    *dst = view_of(b, dst_layout);
    *src = view_of(b, src_layout);
    strided_buffer_release(b);
}

/* Copy src into dst (overlapping) and check the staging: one temporary of
 * bytes bytes (from a counting device resource) on the stream, given back
 * on it, and two launches on device, the last one writing the destination
 * from its lowest element (first) out of the temporary. */
#define check_staged(dst, src, bytes, first) \
    check_staged_(&(dst), &(src), (bytes), (first), __FILE__, __LINE__)

static void check_staged_(const strided_view *dst, const strided_view *src, size_t bytes,
                          uintptr_t first, const char *file, int line)
{
    counting c = {0};
    strided_memory_resource *mr = counting_resource(&c, true);
    strided_copy_temporaries temps = {NULL, mr};
    c.device = strided_buffer_memory_info(dst->buffer).device_id;
    fake.reset(2, 0, 1);
    check_status_(strided_view_copy_ex(dst, src, STREAM_A, 0, &temps), STRIDED_OK, file, line);
    strided_memory_resource_release(mr);
    fake_cuda_launch l = launched();
    if (c.allocs != 1 || c.frees != 1 || c.last_size != bytes)
        fail_at(file, line, "temporaries: %d allocated, %d freed, last %zu bytes (want %zu)\n",
                c.allocs, c.frees, c.last_size, bytes);
    if (fake.calls("cuLaunchKernel") != 2 || fake.calls("cuMemAllocFromPoolAsync") != 0)
        fail_at(file, line, "%ld launches, %ld pool allocations\n", fake.calls("cuLaunchKernel"),
                fake.calls("cuMemAllocFromPoolAsync"));
    if (c.last_stream != STREAM_A || l.stream != STREAM_A)
        fail_at(file, line, "not on the stream\n");
    if (l.device != strided_buffer_memory_info(dst->buffer).device_id)
        fail_at(file, line, "the last launch ran on device %d\n", l.device);
    if (l.args[0] != first || l.args[1] == addr(src))
        fail_at(file, line, "the last launch writes 0x%llx from 0x%llx\n",
                (unsigned long long)l.args[0], (unsigned long long)l.args[1]);
    assert_clean(NULL);
}

static void test_overlap_shifted(void **state)
{
    (void)state;
    const int64_t n = 40;
    strided_view dst, src;
    /* a[1:] <- a[:-1] (rows: one contiguous run each). */
    strided_layout rows = mk_c(DIMS(n - 1, n), 4), moved = rows;
    moved.slice_offset = n;
    overlapping(n, n, 0, moved, rows, &dst, &src);
    check_staged(dst, src, (size_t)((n - 1) * n * 4), addr(&dst));
    strided_view_release(&dst);
    strided_view_release(&src);
    /* a[:, 1:] <- a[:, :-1]. */
    strided_layout cols = mk(DIMS(n, n - 1), I64(n, 1), 4), right = cols;
    right.slice_offset = 1;
    overlapping(n, n, 1, right, cols, &dst, &src);
    check_staged(dst, src, (size_t)(n * (n - 1) * 4), addr(&dst));
    release2(&dst, &src);
}

static void test_overlap_transposed_and_reversed(void **state)
{
    (void)state;
    const int64_t n = 33;
    strided_view dst, src;
    strided_layout c = mk_c(DIMS(n, n), 4);
    /* a <- a.T */
    overlapping(n, n, 0, c, permuted(c, 1, 0), &dst, &src);
    check_staged(dst, src, (size_t)(n * n * 4), addr(&dst));
    release2(&dst, &src);
    /* a <- a[::-1, ::-1] */
    overlapping(n, n, 0, c, sliced(c, S_REV, S_REV), &dst, &src);
    check_staged(dst, src, (size_t)(n * n * 4), addr(&dst));
    release2(&dst, &src);
    /* a[::-1] <- a */
    overlapping(n, n, 0, sliced(c, S_REV), c, &dst, &src);
    check_staged(dst, src, (size_t)(n * n * 4), addr(&dst) - (uintptr_t)((n - 1) * n * 4));
    release2(&dst, &src);
}

static void test_overlap_temporary_sizes(void **state)
{
    (void)state;
    const int64_t n = 20, m = 30;
    strided_view dst, src;
    strided_layout c = mk_c(DIMS(n, m), 4);
    /* a <- a[2] (one row, broadcast): the temporary is one row. */
    overlapping(n, m, 0, c, sliced(c, S_AT(2)), &dst, &src);
    fake.reset(2, 0, 1);
    assert_ok(copy(dst, src));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 2);
    release2(&dst, &src);
    /* Sizes, through a device resource that counts. */
    fake.reset(2, 0, 1);
    strided_memory_resource *mr;
    assert_ok(strided_device_resource_create(0, &mr));
    strided_copy_temporaries temps = {NULL, mr};
    overlapping(n, m, 0, c, sliced(c, S_AT(2)), &dst, &src);
    assert_ok(strided_view_copy_ex(&dst, &src, STREAM_A, 0, &temps));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_int_equal(fake.live_bytes(), 0);
    release2(&dst, &src);
    strided_memory_resource_release(mr);
}

static void test_overlap_temporaries_from_the_resource(void **state)
{
    (void)state;
    const int64_t n = 20, m = 30;
    strided_view dst, src;
    strided_layout c = mk_c(DIMS(n, m), 4);
    counting count = {0};
    strided_memory_resource *mr = counting_resource(&count, true);
    strided_copy_temporaries temps = {NULL, mr};
    fake.reset(2, 0, 1);
    /* a <- a[2]: one row; a <- a.T-like (a[:, ::-1]): the whole source. */
    overlapping(n, m, 0, c, sliced(c, S_AT(2)), &dst, &src);
    assert_ok(strided_view_copy_ex(&dst, &src, STREAM_A, 0, &temps));
    assert_int_equal(count.allocs, 1);
    assert_int_equal(count.frees, 1);
    assert_int_equal(count.last_size, (size_t)(m * 4));
    assert_ptr_equal(count.last_stream, STREAM_A);
    release2(&dst, &src);
    overlapping(n, m, 0, c, sliced(c, S_ALL, S_REV), &dst, &src);
    assert_ok(strided_view_copy_ex(&dst, &src, STREAM_A, 0, &temps));
    assert_int_equal(count.allocs, 2);
    assert_int_equal(count.frees, 2);
    assert_int_equal(count.last_size, (size_t)(n * m * 4));
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 0);
    assert_int_equal(fake.calls("cuLaunchKernel"), 4);
    release2(&dst, &src);
    /* Memory no device reaches is refused, and given back. */
    counting host_count = {0};
    strided_memory_resource *host_mr = counting_resource(&host_count, false);
    temps.device = host_mr;
    overlapping(n, m, 0, c, sliced(c, S_AT(2)), &dst, &src);
    assert_error(strided_view_copy_ex(&dst, &src, STREAM_A, 0, &temps),
                 STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "the device allocator gave memory the device cannot reach (host memory");
    assert_int_equal(host_count.allocs, 1);
    assert_int_equal(host_count.frees, 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 4);
    /* So is another device's memory (the resource claims only "device
     * memory"; the driver says whose). */
    counting other = {0};
    strided_memory_resource *other_mr = counting_resource(&other, true);
    other.device = 1;
    temps.device = other_mr;
    assert_error(strided_view_copy_ex(&dst, &src, STREAM_A, 0, &temps),
                 STRIDED_ERR_INVALID_ARGUMENT, OP,
                 "the device allocator gave memory of another device (device memory of "
                 "device 1");
    assert_int_equal(other.allocs, 1);
    assert_int_equal(other.frees, 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 4);
    strided_memory_resource_release(other_mr);
    release2(&dst, &src);
    strided_memory_resource_release(mr);
    strided_memory_resource_release(host_mr);
}

static void test_identical_sides_copy_nothing(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view a = matrix(16, 16, 0, false, PLAIN);
    assert_ok(copy(a, a));
    /* The same elements through another layout: an extent-1 axis with its
     * own stride, and a view of every other column twice. */
    strided_view a1, b1;
    strided_layout with_one = mk(DIMS(16, 1, 16), I64(16, 999, 1), 4);
    assert_ok(strided_view_view(&a, &with_one, NULL, &a1));
    strided_layout plain = mk(DIMS(16, 1, 16), I64(16, 1, 1), 4);
    assert_ok(strided_view_view(&a, &plain, NULL, &b1));
    assert_ok(copy(a1, b1));
    strided_layout every_other = mk(DIMS(16, 8), I64(16, 2), 4);
    strided_view e1, e2;
    assert_ok(strided_view_view(&a, &every_other, NULL, &e1));
    assert_ok(strided_view_view(&a, &every_other, NULL, &e2));
    assert_ok(copy(e1, e2));
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 0);
    assert_int_equal(fake.calls("cuCtxGetCurrent"), 0);
    /* Shifted by one element, the same layouts overlap: staged. */
    strided_layout shifted = every_other;
    shifted.slice_offset = 1;
    strided_view e3;
    assert_ok(strided_view_view(&a, &shifted, NULL, &e3));
    assert_ok(copy(e3, e2));
    assert_int_equal(fake.calls("cuLaunchKernel"), 2);
    strided_view_release(&a);
    release2(&a1, &b1);
    release2(&e1, &e2);
    strided_view_release(&e3);
}

static void test_overlap_failures_leave_nothing(void **state)
{
    (void)state;
    const int64_t n = 24;
    strided_view dst, src;
    strided_layout c = mk_c(DIMS(n, n), 4);
    overlapping(n, n, 0, c, permuted(c, 1, 0), &dst, &src);
    fake.reset(2, 0, 1);
    fake.set_current_device(1);
    void *caller = fake.current_context();
    fake.fail_next("cuMemAllocFromPoolAsync", CUDA_ERROR_OUT_OF_MEMORY);
    assert_error(copy(dst, src), STRIDED_ERR_OUT_OF_MEMORY, OP,
                 "cannot allocate a temporary of 2304 bytes on device 0");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_clean(caller);
    fake.fail_next("cuMemAllocFromPoolAsync", CUDA_ERROR_INVALID_VALUE);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP,
                 "cuMemAllocFromPoolAsync failed: CUDA_ERROR_INVALID_VALUE");
    assert_clean(caller);
    fake.fail_next("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP,
                 "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
    assert_clean(caller);
    fake.fail_next("cuDeviceGetMemPool", CUDA_ERROR_NOT_SUPPORTED);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP, "cuDeviceGetMemPool failed");
    assert_clean(caller);
    fake.fail_next("cuCtxSetCurrent", CUDA_ERROR_INVALID_CONTEXT);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP, "cuCtxSetCurrent failed");
    assert_clean(caller);
    /* It works once the driver does. */
    assert_ok(copy(dst, src));
    assert_clean(caller);
    fake.set_current_device(-1);
    release2(&dst, &src);
}

static void test_contiguous_across_devices_is_one_memcpy(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(50, 60, 1, false, PLAIN), src = matrix(50, 60, 0, false, PLAIN);
    assert_ok(copy(dst, src));
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_ptr_equal(fake.last_stream("cuMemcpyPeerAsync"), STREAM_A);
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 0);
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 0);
    /* The same with peer access ignored, from pool memory, and into
     * managed memory. */
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    strided_view pooled = matrix(50, 60, 0, false, POOLED);
    strided_view managed = matrix(50, 60, 1, false, MANAGED);
    assert_ok(copy(dst, pooled));
    assert_ok(copy(managed, src));
    unsetenv("STRIDED_COPY_NO_PEER");
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 3);
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    /* A failing memcpy is reported; the caller's context comes back. */
    fake.set_current_device(0);
    void *caller = fake.current_context();
    fake.fail_next("cuMemcpyPeerAsync", CUDA_ERROR_INVALID_VALUE);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP,
                 "cuMemcpyPeerAsync failed: CUDA_ERROR_INVALID_VALUE");
    assert_clean(caller);
    fake.set_current_device(-1);
    release2(&dst, &src);
    release2(&pooled, &managed);
}

/* Pairs (1 <- 0) and (0 <- 1). */
static void test_peer_access_is_enabled_once_per_pair(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(64, 64, 1, false, PLAIN), src = matrix(64, 64, 0, true, PLAIN);
    for (int i = 0; i < 3; i++) {
        assert_ok(copy(dst, src));
        fake_cuda_launch l = launched();
        /* The plan's kernel on the destination's device, reading the source
         * where it is. */
        assert_int_equal(l.device, 1);
        assert_ptr_equal(l.stream, STREAM_A);
        assert_int_equal(l.args[0], addr(&dst));
        assert_int_equal(l.args[1], addr(&src));
    }
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 1);
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 3);
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 0);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 0);
    /* The other direction is another pair. */
    assert_ok(copy(src, dst));
    assert_int_equal(launched().device, 0);
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 2);
    assert_ok(copy(src, dst));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 2);
    assert_clean(NULL);
    release2(&dst, &src);
}

/* Pair (2 <- 0). */
static void test_peer_access_already_enabled_is_success(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_view dst = matrix(64, 64, 2, false, PLAIN), src = matrix(64, 64, 0, true, PLAIN);
    fake.fail_next("cuCtxEnablePeerAccess", CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    assert_ok(copy(dst, src));
    assert_int_equal(launched().device, 2);
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 1);
    assert_ok(copy(dst, src));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 1);
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 0);
    release2(&dst, &src);
}

/* Pair (3 <- 0): memory-pool memory is not covered by peer access; its
 * dense footprint is copied over. */
static void test_pooled_source_is_staged(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_view dst = matrix(64, 48, 3, false, PLAIN), src = matrix(64, 48, 0, true, POOLED);
    assert_ok(copy(dst, src));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 0);
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 1);
    assert_int_equal(fake.calls("cuEventCreate"), 0);
    fake_cuda_launch l = launched();
    assert_int_equal(l.device, 3);
    assert_int_equal(l.args[0], addr(&dst));
    assert_true(l.args[1] != addr(&src));
    assert_ptr_equal(fake.last_stream("cuMemcpyPeerAsync"), STREAM_A);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), STREAM_A);
    assert_clean(NULL);
    release2(&dst, &src);
}

static void test_no_peer_environment_stages(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(64, 48, 1, false, PLAIN), src = matrix(64, 48, 0, true, PLAIN);
    long queries = fake.calls("cuPointerGetAttributes");
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    assert_ok(copy(dst, src));
    /* "0" and "" do not count. */
    setenv("STRIDED_COPY_NO_PEER", "0", 1);
    assert_ok(copy(dst, src));
    setenv("STRIDED_COPY_NO_PEER", "", 1);
    assert_ok(copy(dst, src));
    unsetenv("STRIDED_COPY_NO_PEER");
    /* Staged once (footprint: one temporary, one memcpy), then direct. */
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 3);
    assert_int_equal(fake.calls("cuPointerGetAttributes") - queries, 0);
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 0);
    assert_clean(NULL);
    release2(&dst, &src);
}

static void test_broadcast_source_is_sent_small(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    /* One row of 100 floats on device 0, broadcast to 50 rows on device 1:
     * only the row travels (400 bytes). */
    strided_view dst = matrix(50, 100, 1, false, PLAIN);
    strided_buffer *b = device_memory(400, 0, PLAIN);
    strided_view row = view_of(b, mk(DIMS(50, 100), I64(0, 1), 4));
    strided_buffer_release(b);
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    assert_ok(copy(dst, row));
    unsetenv("STRIDED_COPY_NO_PEER");
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 1);
    assert_int_equal(launched().device, 1);
    assert_clean(NULL);
    release2(&dst, &row);
}

/* The events and waits of a packed copy. */
static void check_packed_events(void)
{
    assert_int_equal(fake.calls("cuEventCreate"), 3);
    assert_int_equal(fake.calls("cuEventRecord"), 3);
    assert_int_equal(fake.calls("cuStreamWaitEvent"), 3);
    assert_int_equal(fake.calls("cuEventDestroy"), 3);
    assert_ptr_equal(fake.last_stream("cuEventRecord"), STREAM_A);
    /* The last wait: the source's device, before freeing the packed
     * temporary there. */
    assert_ptr_equal(fake.last_stream("cuStreamWaitEvent"), CU_STREAM_PER_THREAD);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), CU_STREAM_PER_THREAD);
    assert_ptr_equal(fake.last_stream("cuMemcpyPeerAsync"), STREAM_A);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
}

static void test_sparse_source_is_packed_on_its_device(void **state)
{
    (void)state;
    const int64_t n = 40;
    fake.reset(2, 0, 1);
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    /* Into a C destination: packed in its order, copied straight in. */
    strided_view dst = matrix(n, n, 1, false, PLAIN), src = sparse(n, 0, PLAIN);
    assert_ok(copy(dst, src));
    check_packed_events();
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 1);
    fake_cuda_launch l = launched();
    assert_int_equal(l.device, 0);
    assert_ptr_equal(l.stream, CU_STREAM_PER_THREAD);
    assert_int_equal(l.args[1], addr(&src));
    assert_clean(NULL);
    /* Into a transposed destination: packed in its order, copied straight
     * in too. */
    fake.reset(2, 0, 1);
    strided_view dst_t = matrix(n, n, 1, true, PLAIN);
    assert_ok(copy(dst_t, src));
    check_packed_events();
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 1);
    assert_clean(NULL);
    strided_view_release(&dst_t);
    /* Into a gapped destination: unpacked on the destination's device from
     * a second temporary. */
    fake.reset(2, 0, 1);
    dst_t = sparse(n, 1, PLAIN);
    assert_ok(copy(dst_t, src));
    check_packed_events();
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 2);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 2);
    assert_int_equal(fake.calls("cuLaunchKernel"), 2);
    l = launched();
    assert_int_equal(l.device, 1);
    assert_ptr_equal(l.stream, STREAM_A);
    assert_int_equal(l.args[0], addr(&dst_t));
    assert_clean(NULL);
    unsetenv("STRIDED_COPY_NO_PEER");
    /* A pooled sparse source is packed with peer access too. */
    fake.reset(2, 0, 1);
    strided_view pooled = sparse(n, 0, POOLED);
    assert_ok(copy(dst, pooled));
    check_packed_events();
    assert_clean(NULL);
    release2(&dst, &src);
    release2(&dst_t, &pooled);
}

/* The driver calls a copy may fail in. The context calls also run where a
 * failure is swallowed (leaving a context, cleaning up), so a failure of
 * theirs may leave the copy done. */
static const char *const fallible[] = {
    "cuEventCreate",          "cuEventRecord",     "cuStreamWaitEvent",  "cuMemAllocFromPoolAsync",
    "cuLaunchKernel",         "cuMemcpyPeerAsync", "cuDeviceGetMemPool", "cuDeviceGet",
    "cuPointerGetAttributes", "cuCtxGetCurrent",   "cuCtxSetCurrent",
};

static bool swallowed(const char *name)
{
    return strcmp(name, "cuCtxGetCurrent") == 0 || strcmp(name, "cuCtxSetCurrent") == 0;
}

/* Copy dst <- src once to count the calls, then again failing each call of
 * each fallible entry point in turn: the copy reports the failure (naming
 * the call) and leaves no temporary and no event behind, and the caller's
 * context (device 1's) current. Returns how many failures were made. */
#define check_every_failure(dst, src) check_every_failure_(&(dst), &(src), __FILE__, __LINE__)

static int check_every_failure_(const strided_view *dst, const strided_view *src, const char *file,
                                int line)
{
    int made = 0;
    for (size_t i = 0; i < sizeof fallible / sizeof fallible[0]; i++) {
        const char *name = fallible[i];
        fake.reset(2, 0, 1);
        fake.set_current_device(1);
        check_status_(strided_view_copy(dst, src, STREAM_A, 0), STRIDED_OK, file, line);
        long n = fake.calls(name);
        for (long k = 0; k < n; k++) {
            char text[128];
            fake.reset(2, 0, 1);
            fake.set_current_device(1);
            void *caller = fake.current_context();
            fail_after(name, k, CUDA_ERROR_UNKNOWN);
            strided_status st = strided_view_copy(dst, src, STREAM_A, 0);
            snprintf(text, sizeof text, "%s failed", name);
            if (!swallowed(name) && st == STRIDED_OK)
                fail_at(file, line, "call %ld of %s failed, and the copy succeeded\n", k + 1, name);
            if (st != STRIDED_OK)
                check_error_(st, STRIDED_ERR_CUDA, OP, text, file, line);
            if (fake.live_bytes() != 0 || fake.live_events() != 0)
                fail_at(file, line, "after call %ld of %s failed: %ld bytes, %ld events live\n",
                        k + 1, name, fake.live_bytes(), fake.live_events());
            long events = fake.calls("cuEventCreate") - (strcmp(name, "cuEventCreate") == 0);
            if (events != fake.calls("cuEventDestroy"))
                fail_at(file, line,
                        "after call %ld of %s failed: %ld events made, %ld "
                        "destroyed\n",
                        k + 1, name, events, fake.calls("cuEventDestroy"));
            if (!swallowed(name) && fake.current_context() != caller)
                fail_at(file, line, "after call %ld of %s failed: another context is current\n",
                        k + 1, name);
            made++;
        }
    }
    fake.set_current_device(-1);
    return made;
}

static void test_every_failure_leaves_nothing(void **state)
{
    (void)state;
    const int64_t n = 40;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(n, n, 1, false, PLAIN), gapped = sparse(n, 1, PLAIN);
    strided_view src = sparse(n, 0, PLAIN), t = matrix(n, n, 0, true, PLAIN);
    strided_view same_t = matrix(n, n, 1, true, PLAIN), overlap;
    strided_layout tl = permuted(dst.layout, 1, 0);
    assert_ok(strided_view_view(&dst, &tl, NULL, &overlap));
    /* One device; overlapping; two devices: one memcpy, a direct read. */
    assert_true(check_every_failure(dst, same_t) > 0);
    assert_true(check_every_failure(dst, overlap) > 0);
    strided_view contiguous = matrix(n, n, 0, false, PLAIN);
    assert_true(check_every_failure(dst, contiguous) > 0);
    assert_true(check_every_failure(dst, t) > 0);
    /* Staged: the footprint; packed (copied straight in, and unpacked). */
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    assert_true(check_every_failure(dst, t) > 0);
    int packed = check_every_failure(dst, src);
    int unpacked = check_every_failure(gapped, src);
    unsetenv("STRIDED_COPY_NO_PEER");
    /* 3 events, 3 records, 3 waits, 1 or 2 temporaries, 1 or 2 launches. */
    assert_true(packed >= 11);
    assert_true(unpacked > packed);
    release2(&dst, &gapped);
    release2(&src, &t);
    release2(&same_t, &overlap);
    strided_view_release(&contiguous);
}

static void test_packed_failure_messages(void **state)
{
    (void)state;
    const int64_t n = 40;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(n, n, 1, false, PLAIN), src = sparse(n, 0, PLAIN);
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    /* Out of memory names the size (the packed source: 40 x 40 floats). */
    fake.fail_next("cuMemAllocFromPoolAsync", CUDA_ERROR_OUT_OF_MEMORY);
    assert_error(copy(dst, src), STRIDED_ERR_OUT_OF_MEMORY, OP,
                 "cannot allocate a temporary of 6400 bytes on device 0");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_OUT_OF_MEMORY);
    assert_clean(NULL);
    /* A failed move: the packed temporary is freed after the pack, with no
     * host wait (the move never ran). */
    fake.reset(2, 0, 1);
    fake.fail_next("cuMemcpyPeerAsync", CUDA_ERROR_INVALID_VALUE);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP, "cuMemcpyPeerAsync failed");
    assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
    assert_clean(NULL);
    /* When the free cannot be ordered after the move on the device (the
     * third wait fails), the host waits for the stream first. */
    fake.reset(2, 0, 1);
    fail_after("cuStreamWaitEvent", 2, CUDA_ERROR_INVALID_VALUE);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP, "cuStreamWaitEvent failed");
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), STREAM_A);
    assert_clean(NULL);
    /* So it does when the event that marks the move cannot be recorded. */
    fake.reset(2, 0, 1);
    fail_after("cuEventRecord", 2, CUDA_ERROR_INVALID_VALUE);
    assert_error(copy(dst, src), STRIDED_ERR_CUDA, OP, "cuEventRecord failed");
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_clean(NULL);
    unsetenv("STRIDED_COPY_NO_PEER");
    release2(&dst, &src);
}

/* A float32 view of layout l over device memory of device that holds
 * exactly its footprint (so that the fake refuses any copy reaching past
 * it), filled with bytes from seed. */
static strided_view tight(strided_layout l, int device, unsigned seed)
{
    int64_t lo = 0, hi = -1;
    strided_layout_offset_bounds(&l, &lo, &hi);
    size_t size = (size_t)(hi - lo + 1) * 4;
    unsigned char *p = malloc(size);
    assert_non_null(p);
    for (size_t i = 0; i < size; i++)
        p[i] = (unsigned char)(i * 131 + seed);
    fake_cuda_range r = {(uintptr_t)p, size, CU_MEMORYTYPE_DEVICE, 0, device, (uintptr_t)p, NULL};
    fake.add_range(&r);
    strided_view v;
    /* Element (0,...,0) is slice_offset - lo elements into the memory. */
    assert_ok(strided_view_wrap(p + (l.slice_offset - lo) * 4, &l, &F32, false, NULL,
                                release_memory, NULL, &v));
    assert_int_equal(strided_buffer_memory_info(v.buffer).kind, STRIDED_MEMORY_DEVICE);
    return v;
}

/* Every byte a staged copy moves between devices stays inside the two
 * sides' footprints and its temporaries (the fake moves the bytes and
 * refuses a copy that runs past a known range). */
static void test_moves_stay_in_bounds(void **state)
{
    (void)state;
    const int64_t r = 30, c = 50;
    fake.reset(2, 0, 1);
    move_bytes(1);
    strided_view dst = tight(mk_c(DIMS(r, c), 4), 1, 1);
    /* One run: the bytes arrive. */
    strided_view src = tight(mk_c(DIMS(r, c), 4), 0, 2);
    assert_ok(copy(dst, src));
    assert_memory_equal(strided_buffer_ptr(dst.buffer), strided_buffer_ptr(src.buffer),
                        (size_t)(r * c * 4));
    /* Footprints: transposed, reversed, pitched, broadcast. */
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    strided_layout cr = mk_c(DIMS(c, r), 4), rc = mk_c(DIMS(r, c), 4);
    strided_view sources[] = {
        tight(permuted(cr, 1, 0), 0, 3),
        tight(sliced(rc, S_REV, S_REV), 0, 4),
        tight(mk(DIMS(r, c), I64(c + 7, 1), 4), 0, 5),
        tight(mk(DIMS(c), I64(1), 4), 0, 6),
        tight(mk(DIMS(r, c), I64(-(c + 7), 1), 4), 0, 7),
        /* Sparse (packed, copied straight into dst). */
        tight(mk(DIMS(r, c), I64(3 * c, 3), 4), 0, 8),
        tight(mk(DIMS(r, c), I64(-3, -3 * r), 4), 0, 9),
    };
    /* The sources stay alive until every copy is done: the fake keeps their
     * ranges, and a temporary malloc placed in a freed source's bytes
     * would be taken for that (smaller) range. */
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        long moves = fake.calls("cuMemcpyPeerAsync");
        strided_status st = copy(dst, sources[i]);
        long moved = fake.calls("cuMemcpyPeerAsync") - moves, live = fake.live_bytes();
        if (st != STRIDED_OK || moved != 1 || live != 0) {
            unsetenv("STRIDED_COPY_NO_PEER");
            fail_msg("source %zu: %s, %ld moves, %ld bytes live", i,
                     st == STRIDED_OK ? "ok" : strided_last_error(), moved, live);
        }
    }
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        strided_view_release(&sources[i]);
    unsetenv("STRIDED_COPY_NO_PEER");
    move_bytes(0);
    assert_clean(NULL);
    release2(&dst, &src);
}

/* Pairs (3 <- 1), (1 <- 2), (2 <- 1), (1 <- 3), on 4 devices. */
static void test_peer_access_failures(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_view d3 = matrix(64, 64, 3, false, PLAIN), s1 = matrix(64, 64, 1, true, PLAIN);
    strided_view d1 = matrix(64, 64, 1, false, PLAIN), s2 = matrix(64, 64, 2, true, PLAIN);
    strided_view d2 = matrix(64, 64, 2, false, PLAIN), s3 = matrix(64, 64, 3, true, PLAIN);
    /* Too many peers: staged, and asked again next time. */
    fake.fail_next("cuCtxEnablePeerAccess", 711 /* CUDA_ERROR_TOO_MANY_PEERS */);
    assert_ok(copy(d3, s1));
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_ok(copy(d3, s1));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 2);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_int_equal(launched().args[1], addr(&s1));
    /* Peer access unsupported: staged, and remembered. */
    fake.reset(4, 0, 1);
    fake.fail_next("cuCtxEnablePeerAccess", 217 /* CUDA_ERROR_PEER_ACCESS_UNSUPPORTED */);
    assert_ok(copy(d1, s2));
    assert_ok(copy(d1, s2));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 1);
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 1);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 2);
    assert_clean(NULL);
    /* Other failures are errors, remembered by nothing. */
    fake.reset(4, 0, 1);
    fake.fail_next("cuCtxEnablePeerAccess", CUDA_ERROR_INVALID_VALUE);
    assert_error(copy(d2, s1), STRIDED_ERR_CUDA, OP,
                 "cuCtxEnablePeerAccess failed: CUDA_ERROR_INVALID_VALUE");
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_ok(copy(d2, s1));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 2);
    assert_int_equal(launched().device, 2);
    fake.fail_next("cuDeviceCanAccessPeer", CUDA_ERROR_INVALID_DEVICE);
    assert_error(copy(d1, s3), STRIDED_ERR_CUDA, OP, "cuDeviceCanAccessPeer failed");
    fake.fail_next("cuDeviceGet", CUDA_ERROR_INVALID_DEVICE);
    assert_error(copy(d1, s3), STRIDED_ERR_CUDA, OP, "cuDeviceGet failed");
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 2);
    assert_ok(copy(d1, s3));
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 3);
    assert_int_equal(launched().args[1], addr(&s3));
    assert_clean(NULL);
    release2(&d3, &s1);
    release2(&d1, &s2);
    release2(&d2, &s3);
}

/* Devices 8 and 9: the fake says they cannot reach each other. */
static void test_devices_without_peer_access_are_staged(void **state)
{
    (void)state;
    fake.reset(10, 0, 1);
    strided_view dst = matrix(64, 64, 9, false, PLAIN), src = matrix(64, 64, 8, true, PLAIN);
    assert_ok(copy(dst, src));
    assert_ok(copy(dst, src));
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 1);
    assert_int_equal(fake.calls("cuCtxEnablePeerAccess"), 0);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 2);
    assert_int_equal(fake.calls("cuLaunchKernel"), 2);
    assert_int_equal(launched().device, 9);
    assert_clean(NULL);
    release2(&dst, &src);
}

static void test_managed_memory_counts_as_its_device(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(64, 64, 1, false, MANAGED), src = matrix(64, 64, 1, true, PLAIN);
    assert_ok(copy(dst, src));
    assert_int_equal(launched().device, 1);
    assert_int_equal(fake.calls("cuDeviceCanAccessPeer"), 0);
    /* Managed memory of device 0 into device 1's memory: two devices (pair
     * 1 <- 0 is enabled already). */
    strided_view msrc = matrix(64, 64, 0, true, MANAGED), ddst = matrix(64, 64, 1, false, PLAIN);
    long queries = fake.calls("cuPointerGetAttributes");
    assert_ok(copy(ddst, msrc));
    assert_int_equal(launched().device, 1);
    assert_int_equal(launched().args[1], addr(&msrc));
    assert_int_equal(fake.calls("cuPointerGetAttributes") - queries, 0);
    release2(&dst, &src);
    release2(&msrc, &ddst);
}

typedef struct peer_thread {
    const strided_view *dst, *src;
    strided_status status;
} peer_thread;

static void *copy_on_thread(void *arg)
{
    peer_thread *t = arg;
    t->status = strided_view_copy(t->dst, t->src, STREAM_A, 0);
    return NULL;
}

/* Pair (5 <- 4), first used by 8 threads at once. */
static void test_concurrent_first_peer_copies(void **state)
{
    (void)state;
    enum { N = 8 };
    pthread_t threads[N];
    peer_thread t[N];
    fake.reset(8, 0, 1);
    strided_view dst = matrix(64, 64, 5, false, PLAIN), src = matrix(64, 64, 4, true, PLAIN);
    for (int i = 0; i < N; i++) {
        t[i] = (peer_thread){&dst, &src, STRIDED_ERR_INVALID_ARGUMENT};
        assert_int_equal(pthread_create(&threads[i], NULL, copy_on_thread, &t[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(threads[i], NULL);
        assert_ok(t[i].status);
    }
    assert_true(fake.calls("cuCtxEnablePeerAccess") >= 1);
    assert_true(fake.calls("cuCtxEnablePeerAccess") <= N);
    assert_int_equal(fake.calls("cuLaunchKernel"), N);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 0);
    release2(&dst, &src);
}

#else /* the fake driver, no kernels */

static void test_without_kernels_only_memcpy_copies(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_view dst = matrix(32, 32, 1, false, PLAIN), src = matrix(32, 32, 0, false, PLAIN);
    strided_view t = matrix(32, 32, 0, true, PLAIN), sp = sparse(32, 0, PLAIN);
    /* Contiguous across devices: one memcpy, no kernel needed. */
    assert_ok(copy(dst, src));
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    /* Everything else needs a kernel, and leaves nothing behind. */
    const char *why = "this libstrided was built without its CUDA kernels (no nvcc)";
    assert_error(copy(dst, t), STRIDED_ERR_UNSUPPORTED, OP, why);
    assert_clean(NULL);
    setenv("STRIDED_COPY_NO_PEER", "1", 1);
    assert_error(copy(dst, t), STRIDED_ERR_UNSUPPORTED, OP, why);
    assert_clean(NULL);
    assert_error(copy(dst, sp), STRIDED_ERR_UNSUPPORTED, OP, why);
    assert_clean(NULL);
    unsetenv("STRIDED_COPY_NO_PEER");
    strided_view a = matrix(32, 32, 0, false, PLAIN), at;
    strided_layout tl = permuted(a.layout, 1, 0);
    assert_ok(strided_view_view(&a, &tl, NULL, &at));
    assert_error(copy(a, at), STRIDED_ERR_UNSUPPORTED, OP, why);
    assert_clean(NULL);
    release2(&dst, &src);
    release2(&t, &sp);
    release2(&a, &at);
}

#endif
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_identical_sides_need_nothing),
        cmocka_unit_test(test_copies_need_a_driver),
        cmocka_unit_test(test_byte_offsets_beyond_int64),
#elif defined(STRIDED_HAVE_KERNELS)
        cmocka_unit_test(test_one_device_runs_the_plan),
        cmocka_unit_test(test_packed_subbyte_copies_run_the_subbyte_kernel),
        cmocka_unit_test(test_overlap_shifted),
        cmocka_unit_test(test_overlap_transposed_and_reversed),
        cmocka_unit_test(test_overlap_temporary_sizes),
        cmocka_unit_test(test_overlap_temporaries_from_the_resource),
        cmocka_unit_test(test_identical_sides_copy_nothing),
        cmocka_unit_test(test_overlap_failures_leave_nothing),
        cmocka_unit_test(test_contiguous_across_devices_is_one_memcpy),
        cmocka_unit_test(test_peer_access_is_enabled_once_per_pair),
        cmocka_unit_test(test_peer_access_already_enabled_is_success),
        cmocka_unit_test(test_pooled_source_is_staged),
        cmocka_unit_test(test_no_peer_environment_stages),
        cmocka_unit_test(test_broadcast_source_is_sent_small),
        cmocka_unit_test(test_sparse_source_is_packed_on_its_device),
        cmocka_unit_test(test_every_failure_leaves_nothing),
        cmocka_unit_test(test_packed_failure_messages),
        cmocka_unit_test(test_moves_stay_in_bounds),
        cmocka_unit_test(test_peer_access_failures),
        cmocka_unit_test(test_devices_without_peer_access_are_staged),
        cmocka_unit_test(test_managed_memory_counts_as_its_device),
        cmocka_unit_test(test_concurrent_first_peer_copies),
#else
        cmocka_unit_test(test_without_kernels_only_memcpy_copies),
#endif
    };
#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
    find_launch_controls();
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
