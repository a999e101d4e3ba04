/*
 * test_copy_cuda.c: strided__copy_device_run (src/copy/launch.c) against
 * the fake CUDA driver (DRIVER_FAKE) or with no driver (DRIVER_NONE), in a
 * library built with its CUDA kernels (STRIDED_HAVE_KERNELS) or without.
 *
 * The fake runs no kernel: these tests check what is launched - which
 * kernel for which plan, on which device, stream and grid - and how driver
 * failures are reported and cleaned up. tests/gpu/test_gpu_copy.c checks
 * what the kernels write.
 *
 * The library keeps a device's kernels loaded for the life of the process,
 * so the tests that count loads use devices no earlier test touched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>

#include "test_copy.h"
#include "test_cuda.h"
#include "test_util.h"

#include "copy/kernels.h"
#include "copy/launch.h"
#include "copy/testing.h"
#include "cuda/cuda_api.h"

#define STREAM_A ((void *)0x1000)
#define DST ((uintptr_t)0x7f0000100000) /* fake device addresses */
#define SRC ((uintptr_t)0x7f0000900000)

/* 1000 contiguous floats. */
static strided_copy_plan contiguous_plan(void)
{
    return PLAN(STRIDED_COPY_CONTIGUOUS, 4, (1000), (1), (1), -1);
}

#if defined(DRIVER_NONE)

static void test_device_copies_need_a_driver(void **state)
{
    (void)state;
    strided_copy_plan p = contiguous_plan();
#if defined(STRIDED_HAVE_KERNELS)
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 0), STRIDED_ERR_NO_CUDA_DRIVER,
                 "copy", "no CUDA driver");
#else
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 0), STRIDED_ERR_UNSUPPORTED, "copy",
                 "this libstrided was built without its CUDA kernels (no nvcc)");
#endif
}

static void test_nothing_to_copy_needs_nothing(void **state)
{
    (void)state;
    strided_copy_plan p = PLAN(STRIDED_COPY_NOTHING, 4, (0, 5), (5, 1), (5, 1), -1);
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 0));
}

#elif !defined(STRIDED_HAVE_KERNELS)

static void test_without_kernels_nothing_is_loaded(void **state)
{
    (void)state;
    fake.reset(2, 0, 1);
    strided_copy_plan p = contiguous_plan();
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 0), STRIDED_ERR_UNSUPPORTED, "copy",
                 "this libstrided was built without its CUDA kernels (no nvcc)");
    assert_int_equal(fake.calls("cuModuleLoadData"), 0);
    assert_int_equal(fake.calls("cuCtxGetCurrent"), 0);
}

#else

/* The fake's controls beyond test_cuda.h's. */
static fake_cuda_live_modules_fn live_modules;
static fake_cuda_last_launch_fn last_launch;

static void find_launch_controls(void)
{
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        exit(1);
    }
    fake_symbol_(lib, "fake_cuda_live_modules", &live_modules);
    fake_symbol_(lib, "fake_cuda_last_launch", &last_launch);
}

/* Run p on device 0 and return what was launched. */
#define launched(p, dst, src) launched_at((p), (dst), (src), __FILE__, __LINE__)

static fake_cuda_launch launched_at(const strided_copy_plan *p, uintptr_t dst, uintptr_t src,
                                    const char *file, int line)
{
    fake_cuda_launch l;

    fake.reset(4, 0, 1);
    check_status_(strided__copy_device_run(p, dst, src, STREAM_A, 0), STRIDED_OK, file, line);
    if (!last_launch(&l))
        fail_at(file, line, "no kernel was launched\n");
    return l;
}

/* Assert which kernel ran p, with how many blocks of which shape;
 * variadic, so that ROW and TILE may stand for the block's shape. */
#define assert_kernel(...) ASSERT_KERNEL_(__VA_ARGS__)
#define ASSERT_KERNEL_(p, dst, src, name, blocks, bx, by) \
    check_kernel_((p), (dst), (src), (name), (blocks), (bx), (by), __FILE__, __LINE__)

static void check_kernel_(strided_copy_plan p, uintptr_t dst, uintptr_t src, const char *name,
                          unsigned int blocks, unsigned int bx, unsigned int by, const char *file,
                          int line)
{
    fake_cuda_launch l = launched_at(&p, dst, src, file, line);

    _assert_string_equal(l.function, name, file, line);
    if (l.grid[0] != blocks || l.grid[1] != 1 || l.grid[2] != 1 || l.block[0] != bx ||
        l.block[1] != by || l.block[2] != 1)
        fail_at(file, line,
                "%s: grid (%u,%u,%u) block (%u,%u,%u), expected grid "
                "(%u,1,1) block (%u,%u,1)\n",
                l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                blocks, bx, by);
    if (l.shared_bytes != 0 || l.stream != STREAM_A || l.device != 0)
        fail_at(file, line, "%s: shared %u, stream %p, device %d\n", l.function, l.shared_bytes,
                l.stream, l.device);
    if (l.args[0] != dst || l.args[1] != src)
        fail_at(file, line, "%s: arguments dst 0x%llx src 0x%llx\n", l.function,
                (unsigned long long)l.args[0], (unsigned long long)l.args[1]);
}

/* Blocks of 256 threads (elementwise), of 32 x 8 (tiles). */
#define ROW 256, 1
#define TILE 32, 8

/* Tests that count module loads come first, each on its own device. */

static void test_failing_module_load_is_reported_and_retried(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = contiguous_plan();
    fake.fail_next("cuModuleLoadData", CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 0), STRIDED_ERR_CUDA, "copy",
                 "cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_NO_BINARY_FOR_GPU);
    assert_int_equal(live_modules(), 0);
    assert_int_equal(fake.calls("cuModuleGetFunction"), 0);
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_null(fake.current_context());
    /* Nothing was kept: the next copy loads the kernels. */
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 0));
    assert_int_equal(fake.calls("cuModuleLoadData"), 2);
    assert_int_equal(live_modules(), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 1);
}

static void test_failing_lookup_unloads_the_module(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = contiguous_plan();
    fake.fail_next("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND);
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 1), STRIDED_ERR_CUDA, "copy",
                 "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND");
    assert_int_equal(fake.calls("cuModuleLoadData"), 1);
    assert_int_equal(fake.calls("cuModuleUnload"), 1);
    assert_int_equal(live_modules(), 1); /* device 0's */
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_null(fake.current_context());
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 1));
    assert_int_equal(live_modules(), 2);
}

static void test_kernels_load_once_per_device(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = contiguous_plan();
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 2));
    long lookups = fake.calls("cuModuleGetFunction");
    assert_true(lookups > 20);
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 2));
    assert_ok(strided__copy_device_run(&p, DST, SRC, STREAM_A, 2));
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 0));
    assert_int_equal(fake.calls("cuModuleLoadData"), 1);
    assert_int_equal(fake.calls("cuModuleGetFunction"), lookups);
    assert_int_equal(fake.calls("cuLaunchKernel"), 4);
    assert_int_equal(live_modules(), 3);
}

static void *copy_on_device_3(void *arg)
{
    strided_copy_plan p = contiguous_plan();
    *(strided_status *)arg = strided__copy_device_run(&p, DST, SRC, NULL, 3);
    return NULL;
}

static void test_concurrent_first_copies_load_once(void **state)
{
    (void)state;
    enum { N = 8 };
    pthread_t threads[N];
    strided_status status[N];

    fake.reset(4, 0, 1);
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, copy_on_device_3, &status[i]), 0);
    for (int i = 0; i < N; i++) {
        pthread_join(threads[i], NULL);
        assert_ok(status[i]);
    }
    assert_int_equal(fake.calls("cuModuleLoadData"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), N);
    assert_int_equal(live_modules(), 4);
}

/* The entry points of the driver table (cuda/driver.h) a copy might call. */
static const char *const driver_calls[] = {
    "cuGetErrorName",          "cuGetErrorString",
    "cuDeviceGetCount",        "cuDeviceGet",
    "cuDeviceGetAttribute",    "cuDevicePrimaryCtxRetain",
    "cuCtxGetCurrent",         "cuCtxSetCurrent",
    "cuCtxGetDevice",          "cuPointerGetAttributes",
    "cuStreamSynchronize",     "cuEventCreate",
    "cuEventRecord",           "cuStreamWaitEvent",
    "cuEventDestroy",          "cuEventSynchronize",
    "cuDeviceCanAccessPeer",   "cuCtxEnablePeerAccess",
    "cuMemHostAlloc",          "cuMemFreeHost",
    "cuMemAllocManaged",       "cuMemFree",
    "cuDeviceGetMemPool",      "cuMemPoolSetAttribute",
    "cuMemAllocFromPoolAsync", "cuMemFreeAsync",
    "cuMemcpyAsync",           "cuMemcpy2DAsync",
    "cuModuleLoadData",        "cuModuleGetFunction",
    "cuModuleUnload",          "cuLaunchKernel",
};

/* Once a device's kernels are loaded, a copy asks the driver for nothing
 * but the current context and the launch (no device queries, no lookups,
 * no lock), plus the two cuCtxSetCurrent that enter and leave the
 * device's primary context when the caller has none current. */
static void test_loaded_copies_call_only_the_launch(void **state)
{
    (void)state;
    enum { COPIES = 10 };
    strided_copy_plan t = PLAN(STRIDED_COPY_TRANSPOSE, 4, (64, 64), (64, 1), (1, 64), 0);
    strided_copy_plan r = PLAN(STRIDED_COPY_ROWS, 4, (100, 1024), (1024, 1), (2048, 1), 1);
    strided_copy_plan c = contiguous_plan();
    fake.reset(4, 0, 1);
    assert_ok(strided__copy_device_run(&t, DST, SRC, STREAM_A, 0)); /* loads */
    for (int current = -1; current <= 0; current++) {
        fake.set_current_device(current); /* none, then device 0's */
        fake.reset(4, 0, 1);
        for (int i = 0; i < COPIES; i++) {
            assert_ok(strided__copy_device_run(&t, DST, SRC, STREAM_A, 0));
            assert_ok(strided__copy_device_run(&r, DST, SRC, STREAM_A, 0));
            assert_ok(strided__copy_device_run(&c, DST, SRC, STREAM_A, 0));
        }
        for (size_t k = 0; k < sizeof driver_calls / sizeof driver_calls[0]; k++) {
            const char *name = driver_calls[k];
            long want = 0;
            if (strcmp(name, "cuCtxGetCurrent") == 0 || strcmp(name, "cuLaunchKernel") == 0)
                want = 3 * COPIES;
            else if (strcmp(name, "cuCtxSetCurrent") == 0 && current < 0)
                want = 6 * COPIES; /* in and out, each copy */
            if (fake.calls(name) != want)
                fail_msg("%s: %ld calls for %d copies, expected %ld (context %s)", name,
                         fake.calls(name), 3 * COPIES, want, current < 0 ? "none" : "current");
        }
    }
    fake.set_current_device(-1);
}

/* Which kernel runs which plan. */

static void test_contiguous(void **state)
{
    (void)state;
    strided_copy_plan p = contiguous_plan();
    /* 4000 bytes in 16-byte vectors: one block. */
    assert_kernel(p, DST, SRC, "strided_copy_contiguous_16", 1, ROW);
    fake_cuda_launch l = launched(&p, DST, SRC);
    assert_int_equal(l.args[2], 4000); /* bytes */
    /* The alignment the two addresses share decides the vectors. */
    assert_kernel(p, DST + 8, SRC, "strided_copy_contiguous_8", 1, ROW);
    assert_kernel(p, DST + 4, SRC + 8, "strided_copy_contiguous_4", 1, ROW);
    assert_kernel(p, DST + 1, SRC, "strided_copy_contiguous_1", 1, ROW);
    assert_kernel(p, DST + 3, SRC + 3, "strided_copy_contiguous_16", 1, ROW);
    /* One element (ndim 0). */
    strided_copy_plan one = PLAN(STRIDED_COPY_CONTIGUOUS, 8, (1, 1), (1, 1), (1, 1), -1);
    one.ndim = 0;
    assert_kernel(one, DST, SRC, "strided_copy_contiguous_16", 1, ROW);
    /* Large (under 8 MiB): a block per 4096 16-byte vectors, 512. From
     * 8 MiB on: cuMemcpyAsync. */
    strided_copy_plan big = PLAN(STRIDED_COPY_CONTIGUOUS, 4, ((1 << 21) - 1), (1), (1), -1);
    assert_kernel(big, DST, SRC, "strided_copy_contiguous_16", 512, ROW);
    strided_copy_plan huge = PLAN(STRIDED_COPY_CONTIGUOUS, 4, (1 << 21), (1), (1), -1);
    long memcpys = fake.calls("cuMemcpyAsync");
    assert_ok(strided__copy_device_run(&huge, DST, SRC, STREAM_A, 0));
    assert_int_equal(fake.calls("cuMemcpyAsync"), memcpys + 1);
}

static void test_large_misaligned_contiguous_copies_use_memcpy(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = PLAN(STRIDED_COPY_CONTIGUOUS, 1, (1 << 21), (1), (1), -1);
    assert_ok(strided__copy_device_run(&p, DST + 1, SRC, STREAM_A, 0));
    assert_int_equal(fake.calls("cuMemcpyAsync"), 1);
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
    assert_ptr_equal(fake.last_stream("cuMemcpyAsync"), STREAM_A);
    /* Aligned alike, the same copy is a kernel's. */
    assert_kernel(p, DST + 1, SRC + 1, "strided_copy_contiguous_16", 128, ROW);
}

static void test_rows(void **state)
{
    (void)state;
    /* 100 rows of 1024 floats; the source rows 2048 apart: 16-byte units,
     * one chunk of 1024 units a row. */
    strided_copy_plan p = PLAN(STRIDED_COPY_ROWS, 4, (100, 1024), (1024, 1), (2048, 1), 1);
    assert_kernel(p, DST, SRC, "strided_copy_rows_16", 100, ROW);
    /* An odd row pitch on one side, rows of 1200 bytes: 4-byte units. */
    strided_copy_plan odd = PLAN(STRIDED_COPY_ROWS, 4, (100, 300), (300, 1), (301, 1), 1);
    assert_kernel(odd, DST, SRC, "strided_copy_rows_4", 100, ROW);
    /* The same with rows of 4096 bytes: 16-byte slots of shifted loads,
     * 258 slots, one chunk a row. */
    strided_copy_plan odd_long = PLAN(STRIDED_COPY_ROWS, 4, (100, 1024), (1024, 1), (1025, 1), 1);
    assert_kernel(odd_long, DST, SRC, "strided_copy_rows_shift", 100, ROW);
    /* Misaligned rows of bytes: 314 slots, one chunk a row. */
    strided_copy_plan bytes = PLAN(STRIDED_COPY_ROWS, 1, (3, 5000), (5000, 1), (6000, 1), 1);
    assert_kernel(bytes, DST, SRC + 1, "strided_copy_rows_shift", 3, ROW);
    /* Rows of 40000 bytes: 2502 slots, three chunks of 1024 a row. */
    strided_copy_plan long_bytes = PLAN(STRIDED_COPY_ROWS, 1, (3, 40000), (40000, 1), (40001, 1),
                                        1);
    assert_kernel(long_bytes, DST, SRC, "strided_copy_rows_shift", 3 * 3, ROW);
    /* Rows shorter than a block are gathered: 3 floats, a 12-byte unit
     * split into 4-byte words. */
    strided_copy_plan short_rows = PLAN(STRIDED_COPY_ROWS, 4, (1000, 3), (3, 1), (4, 1), 1);
    assert_kernel(short_rows, DST, SRC, "strided_copy_gather_4_i32_d8", 1, ROW);
}

static void test_transposes(void **state)
{
    (void)state;
    /* One 64 x 64 tile of floats. */
    strided_copy_plan f = PLAN(STRIDED_COPY_TRANSPOSE, 4, (64, 64), (64, 1), (1, 64), 0);
    assert_kernel(f, DST, SRC, "strided_copy_transpose_4p_i32", 1, TILE);
    /* ... as 16-byte vectors (above) where every row starts on one, else
     * element by element (a source 4 bytes off). */
    assert_kernel(f, DST, SRC + 4, "strided_copy_transpose_4_i32", 1, TILE);
    /* Edge tiles count: 65 x 128 floats are 2 x 2 tiles. */
    strided_copy_plan edges = PLAN(STRIDED_COPY_TRANSPOSE, 4, (65, 128), (128, 1), (1, 65), 0);
    assert_kernel(edges, DST, SRC, "strided_copy_transpose_4_i32", 4, TILE);
    /* Destination rows off the 32-byte sectors: tiles skewed back to them
     * take up to 7 more floats a row (65 x 127 at pitch 127: 2 x 3 tiles;
     * one 64 x 64 tile whose base is 4 bytes off: 1 x 2). */
    strided_copy_plan skewed = PLAN(STRIDED_COPY_TRANSPOSE, 4, (65, 127), (127, 1), (1, 65), 0);
    assert_kernel(skewed, DST, SRC, "strided_copy_transpose_4s_i32", 6, TILE);
    assert_kernel(f, DST + 4, SRC, "strided_copy_transpose_4s_i32", 2, TILE);
    /* Rows shorter than a tile are not skewed (64 x 63 at pitch 63). */
    strided_copy_plan short_rows = PLAN(STRIDED_COPY_TRANSPOSE, 4, (64, 63), (63, 1), (1, 64), 0);
    assert_kernel(short_rows, DST, SRC, "strided_copy_transpose_4_i32", 1, TILE);
    /* 8 and 16 bytes: 32 x 32 tiles. */
    strided_copy_plan d = PLAN(STRIDED_COPY_TRANSPOSE, 8, (64, 64), (64, 1), (1, 64), 0);
    assert_kernel(d, DST, SRC, "strided_copy_transpose_8_i32", 4, TILE);
    strided_copy_plan z = PLAN(STRIDED_COPY_TRANSPOSE, 16, (64, 64), (64, 1), (1, 64), 0);
    assert_kernel(z, DST, SRC, "strided_copy_transpose_16_i32", 4, TILE);
    /* Skewed too, rows of 8 bytes off their sectors at up to 3 more a row
     * (64 x 65 at pitch 65: 2 x 3 tiles), of 16 bytes at up to 1 (2 x 3). */
    strided_copy_plan d_skewed = PLAN(STRIDED_COPY_TRANSPOSE, 8, (64, 65), (65, 1), (1, 64), 0);
    assert_kernel(d_skewed, DST, SRC, "strided_copy_transpose_8s_i32", 6, TILE);
    strided_copy_plan z_skewed = PLAN(STRIDED_COPY_TRANSPOSE, 16, (64, 64), (64, 1), (1, 64), 0);
    assert_kernel(z_skewed, DST + 16, SRC, "strided_copy_transpose_16s_i32", 6, TILE);
    /* Halves and bytes as packed words, 16 x 16 and 8 x 8 tiles. */
    strided_copy_plan h = PLAN(STRIDED_COPY_TRANSPOSE, 2, (1024, 1024), (1024, 1), (1, 1024), 0);
    assert_kernel(h, DST, SRC, "strided_copy_transpose_2p_i32", 256, TILE);
    strided_copy_plan b = PLAN(STRIDED_COPY_TRANSPOSE, 1, (1024, 1024), (1024, 1), (1, 1024), 0);
    assert_kernel(b, DST, SRC, "strided_copy_transpose_1p_i32", 64, TILE);
    /* An odd source stride breaks the words: element tiles. */
    strided_copy_plan odd = PLAN(STRIDED_COPY_TRANSPOSE, 2, (64, 64), (64, 1), (1, 65), 0);
    assert_kernel(odd, DST, SRC, "strided_copy_transpose_2_i32", 1, TILE);
    /* So does a misaligned base. */
    assert_kernel(h, DST + 2, SRC, "strided_copy_transpose_2_i32", 256, TILE);
    /* Batched over an outer axis: 8 x 2 x 2 tiles (skewed: rows of 100
     * floats end off their sectors; of 128, not). */
    strided_copy_plan batched = PLAN(STRIDED_COPY_TRANSPOSE, 4, (8, 100, 100), (10000, 100, 1),
                                     (10000, 1, 100), 1);
    assert_kernel(batched, DST, SRC, "strided_copy_transpose_4s_i32", 32, TILE);
    strided_copy_plan batched_aligned = PLAN(STRIDED_COPY_TRANSPOSE, 4, (8, 128, 128),
                                             (16384, 128, 1), (16384, 1, 128), 1);
    assert_kernel(batched_aligned, DST, SRC, "strided_copy_transpose_4p_i32", 32, TILE);
    /* Offsets beyond int32: 64-bit indices. */
    strided_copy_plan far = PLAN(STRIDED_COPY_TRANSPOSE, 4, (2, 64, 64), (4096, 64, 1),
                                 ((int64_t)1 << 31, 1, 64), 1);
    assert_kernel(far, DST, SRC, "strided_copy_transpose_4p_i64", 2, TILE);
    /* A short axis against a long one: rectangular tiles spanning the short
     * one (3 x 1344 floats: 100000 / 1344 -> 75 tiles), both ways round
     * (planes 100001 floats apart, off the 16-byte vectors of the narrow
     * kernels). */
    strided_copy_plan thin = PLAN(STRIDED_COPY_TRANSPOSE, 4, (3, 100000), (100001, 1), (1, 3), 0);
    assert_kernel(thin, DST, SRC, "strided_copy_transpose_thin_4_i32", 75, TILE);
    strided_copy_plan thin_b = PLAN(STRIDED_COPY_TRANSPOSE, 4, (100000, 3), (3, 1), (1, 100001), 0);
    assert_kernel(thin_b, DST, SRC, "strided_copy_transpose_thin_4_i32", 75, TILE);
    /* Float records of 3 fields to planes 16-byte aligned and back: 4
     * records a thread as 3 vectors (25000 groups: 98 blocks); a base off
     * its 16 bytes: thin tiles. */
    strided_copy_plan soa = PLAN(STRIDED_COPY_TRANSPOSE, 4, (3, 100000), (100000, 1), (1, 3), 0);
    assert_kernel(soa, DST, SRC, "strided_copy_narrow_4_3_planes_i32", 98, ROW);
    strided_copy_plan aos = PLAN(STRIDED_COPY_TRANSPOSE, 4, (100000, 3), (3, 1), (1, 100000), 0);
    assert_kernel(aos, DST, SRC, "strided_copy_narrow_4_3_records_i32", 98, ROW);
    assert_kernel(soa, DST, SRC + 4, "strided_copy_transpose_thin_4_i32", 75, TILE);
    /* Planes 2 GiB apart (2^29 floats: 32-bit element offsets still), and
     * skewed tiles with batches as far apart (2 x (2 x 3) tiles); planes
     * 2^31 floats apart take 64-bit indices. */
    strided_copy_plan far_aos = PLAN(STRIDED_COPY_TRANSPOSE, 4, (100000, 3), (3, 1),
                                     (1, (int64_t)1 << 29), 0);
    assert_kernel(far_aos, DST, SRC, "strided_copy_narrow_4_3_records_i32", 98, ROW);
    strided_copy_plan far_skewed = PLAN(STRIDED_COPY_TRANSPOSE, 4, (2, 70, 67), (70 * 69, 69, 1),
                                        ((int64_t)1 << 29, 1, 70), 1);
    assert_kernel(far_skewed, DST, SRC, "strided_copy_transpose_4s_i32", 8, TILE);
    /* Destination rows over 2 GiB in, at element offsets within int32:
     * skewed, 32-bit indices (2 x 2 tiles). */
    strided_copy_plan deep = PLAN(STRIDED_COPY_TRANSPOSE, 4, (70, 67), (((int64_t)1 << 23) + 1, 1),
                                  (1, 70), 0);
    assert_kernel(deep, DST, SRC, "strided_copy_transpose_4s_i32", 4, TILE);
    strided_copy_plan farther_aos = PLAN(STRIDED_COPY_TRANSPOSE, 4, (100000, 3), (3, 1),
                                         (1, (int64_t)1 << 31), 0);
    assert_kernel(farther_aos, DST, SRC, "strided_copy_narrow_4_3_records_i64", 98, ROW);
    strided_copy_plan farther_skewed = PLAN(STRIDED_COPY_TRANSPOSE, 4, (2, 70, 67),
                                            (70 * 69, 69, 1), ((int64_t)1 << 31, 1, 70), 1);
    assert_kernel(farther_skewed, DST, SRC, "strided_copy_transpose_4s_i64", 8, TILE);
    /* Permutations of short axes: tiles whose sides are groups of axes.
     * A 6-D permutation of 4s and 8s (the source's axes 5 and 4 along a,
     * its 2 and 3 along b: 64 x 64 floats, 16 tiles). */
    strided_copy_plan six = PLAN(STRIDED_COPY_TRANSPOSE, 4, (8, 4, 8, 4, 8, 8),
                                 (8192, 2048, 256, 64, 8, 1), (1, 16384, 8, 4096, 64, 512), 0);
    assert_kernel(six, DST, SRC, "strided_copy_transpose_grouped_4_i32", 16, TILE);
    /* 12 axes of 2 reversed, 8 bytes: 64 x 64 tiles (6 axes a side), 1. */
    strided_copy_plan twos = PLAN(STRIDED_COPY_TRANSPOSE, 8, (2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2),
                                  (2048, 1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1),
                                  (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048), 0);
    assert_kernel(twos, DST, SRC, "strided_copy_transpose_grouped_8_i32", 1, TILE);
    /* Side b takes 12, then 4 of the next axis's 48 (12 x 5 would not
     * fit), its other 12 join the batch: 32 x 48 tiles, 12 of them. */
    strided_copy_plan split = PLAN(STRIDED_COPY_TRANSPOSE, 4, (32, 48, 12), (576, 12, 1),
                                   (1, 384, 32), 0);
    assert_kernel(split, DST, SRC, "strided_copy_transpose_grouped_4_i32", 12, TILE);
    /* (32, 5, 12) floats: b takes 12 and the 5: 32 x 60 tiles. */
    strided_copy_plan wide_b = PLAN(STRIDED_COPY_TRANSPOSE, 4, (32, 5, 12), (60, 12, 1),
                                    (1, 384, 32), 0);
    assert_kernel(wide_b, DST, SRC, "strided_copy_transpose_grouped_4_i32", 1, TILE);
    /* Groups that fill no more than a quarter of a tile: 16 x 60 floats
     * (a gather, as 16 x 12 plain tiles would be). */
    strided_copy_plan sparse = PLAN(STRIDED_COPY_TRANSPOSE, 4, (16, 5, 12), (60, 12, 1),
                                    (1, 192, 16), 0);
    assert_kernel(sparse, DST, SRC, "strided_copy_gather_4_i32_d8", 1, ROW);
    /* 1- and 2-byte records of 2 to 4 fields to planes and back, every
     * word aligned: 4 / itemsize records per thread (100000 / 4 = 25000
     * groups of 256 threads' blocks: 98). */
    strided_copy_plan rgb = PLAN(STRIDED_COPY_TRANSPOSE, 1, (3, 100000), (100000, 1), (1, 3), 0);
    assert_kernel(rgb, DST, SRC, "strided_copy_narrow_1_3_planes_i32", 98, ROW);
    strided_copy_plan rgba = PLAN(STRIDED_COPY_TRANSPOSE, 1, (100000, 4), (4, 1), (1, 100000), 0);
    assert_kernel(rgba, DST, SRC, "strided_copy_narrow_1_4_records_i32", 98, ROW);
    strided_copy_plan pairs = PLAN(STRIDED_COPY_TRANSPOSE, 2, (2, 100000), (100000, 1), (1, 2), 0);
    assert_kernel(pairs, DST, SRC, "strided_copy_narrow_2_2_planes_i32", 196, ROW);
    /* Batched, a short last group in each row: 2 x 251 groups. */
    strided_copy_plan images = PLAN(STRIDED_COPY_TRANSPOSE, 1, (2, 3, 1001), (3012, 1004, 1),
                                    (3012, 1, 3), 1);
    assert_kernel(images, DST, SRC, "strided_copy_narrow_1_3_planes_i32", 2, ROW);
    /* Planes beyond int32 bytes: 64-bit indices. */
    strided_copy_plan far_planes = PLAN(STRIDED_COPY_TRANSPOSE, 1, (3, 100000),
                                        ((int64_t)1 << 31, 1), (1, 3), 0);
    assert_kernel(far_planes, DST, SRC, "strided_copy_narrow_1_3_planes_i64", 98, ROW);
    /* Words that would not be aligned, records that are not dense: thin
     * tiles (3 x 5440 bytes: 19 of them). */
    assert_kernel(rgb, DST + 1, SRC, "strided_copy_transpose_thin_1_i32", 19, TILE);
    assert_kernel(rgb, DST, SRC + 2, "strided_copy_transpose_thin_1_i32", 19, TILE);
    strided_copy_plan ragged = PLAN(STRIDED_COPY_TRANSPOSE, 1, (3, 100000), (100001, 1), (1, 3), 0);
    assert_kernel(ragged, DST, SRC, "strided_copy_transpose_thin_1_i32", 19, TILE);
    strided_copy_plan rgbx = PLAN(STRIDED_COPY_TRANSPOSE, 1, (3, 100000), (100000, 1), (1, 4), 0);
    assert_kernel(rgbx, DST, SRC, "strided_copy_transpose_thin_1_i32", 19, TILE);
    /* Five fields are not narrow. */
    strided_copy_plan five = PLAN(STRIDED_COPY_TRANSPOSE, 1, (5, 100000), (100000, 1), (1, 5), 0);
    assert_kernel(five, DST, SRC, "strided_copy_transpose_thin_1_i32", 31, TILE);
    /* Both short (tiles less than 1/16 full): gathered. */
    strided_copy_plan small = PLAN(STRIDED_COPY_TRANSPOSE, 4, (3, 100), (100, 1), (1, 3), 0);
    assert_kernel(small, DST, SRC, "strided_copy_gather_4_i32_d8", 1, ROW);
    /* 12-byte elements have no tile kernel: gathered as 4-byte words. */
    strided_copy_plan odd_size = PLAN(STRIDED_COPY_TRANSPOSE, 12, (64, 64), (64, 1), (1, 64), 0);
    assert_kernel(odd_size, DST, SRC, "strided_copy_gather_4_i32_d8", 3, ROW);
}

static void test_broadcasts(void **state)
{
    (void)state;
    /* Rows of 4096 floats from one float each: 16-byte words of 4 copies. */
    strided_copy_plan words = PLAN(STRIDED_COPY_BROADCAST, 4, (100, 4096), (4096, 1), (1, 0), -1);
    assert_kernel(words, DST, SRC, "strided_copy_broadcast_4x16", 100, ROW);
    /* 300 floats a row are not whole words: elements. */
    strided_copy_plan elements = PLAN(STRIDED_COPY_BROADCAST, 4, (100, 300), (300, 1), (1, 0), -1);
    assert_kernel(elements, DST, SRC, "strided_copy_broadcast_4", 100, ROW);
    /* Nor are 16-byte elements. */
    strided_copy_plan wide = PLAN(STRIDED_COPY_BROADCAST, 16, (10, 1000), (1000, 1), (1, 0), -1);
    assert_kernel(wide, DST, SRC, "strided_copy_broadcast_16", 10, ROW);
    /* Short runs are gathered. */
    strided_copy_plan short_runs = PLAN(STRIDED_COPY_BROADCAST, 4, (1000, 3), (3, 1), (1, 0), -1);
    assert_kernel(short_runs, DST, SRC, "strided_copy_gather_4_i32_d8", 1, ROW);
}

static void test_gathers(void **state)
{
    (void)state;
    strided_copy_plan g = PLAN(STRIDED_COPY_GATHER, 4, (100, 100), (100, 1), (7, 700), -1);
    assert_kernel(g, DST, SRC, "strided_copy_gather_4_i32_d8", 3, ROW);
    fake_cuda_launch l = launched(&g, DST, SRC);
    assert_int_equal(l.args[2] & 0xffffffff, 10000); /* units */
    /* Negative and zero source strides. */
    strided_copy_plan n = PLAN(STRIDED_COPY_GATHER, 8, (10, 7, 5), (35, 5, 1), (0, -3, -100), -1);
    assert_kernel(n, DST, SRC, "strided_copy_gather_8_i32_d8", 1, ROW);
    /* More than 8 axes (a source of stride 7, which no tile reads whole). */
    strided_copy_plan many = PLAN(STRIDED_COPY_GATHER, 4, (2, 2, 2, 2, 2, 2, 2, 2, 2, 2),
                                  (512, 256, 128, 64, 32, 16, 8, 4, 2, 1),
                                  (7, 14, 28, 56, 112, 224, 448, 896, 1792, 3584), -1);
    assert_kernel(many, DST, SRC, "strided_copy_gather_4_i32_d64", 1, ROW);
    /* Offsets beyond int32. */
    strided_copy_plan far = PLAN(STRIDED_COPY_GATHER, 4, (2, 3), (3, 1), ((int64_t)1 << 40, 5), -1);
    assert_kernel(far, DST, SRC, "strided_copy_gather_4_i64_d8", 1, ROW);
    /* Elements less aligned than their size move as smaller words. */
    assert_kernel(g, DST + 2, SRC, "strided_copy_gather_2_i32_d8", 5, ROW);
    /* One element (ndim 0). */
    strided_copy_plan one = PLAN(STRIDED_COPY_GATHER, 16, (1), (1), (1), -1);
    one.ndim = 0;
    assert_kernel(one, DST, SRC, "strided_copy_gather_16_i32_d8", 1, ROW);
}

static void test_plans_whose_kind_does_not_hold_are_gathered(void **state)
{
    (void)state;
    /* "Rows" whose source is not contiguous along the row (nor close to it
     * on any axis). */
    strided_copy_plan rows = PLAN(STRIDED_COPY_ROWS, 4, (100, 1024), (1024, 1), (7, 700), -1);
    assert_kernel(rows, DST, SRC, "strided_copy_gather_4_i32_d8", 25, ROW);
    /* A "transpose" whose source unit axis is the innermost: rows of
     * elements. */
    strided_copy_plan t = PLAN(STRIDED_COPY_TRANSPOSE, 4, (100, 1024), (1024, 1), (1024, 1), 1);
    assert_kernel(t, DST, SRC, "strided_copy_rows_4", 100, ROW);
    /* A "contiguous" copy of two axes. */
    strided_copy_plan c = PLAN(STRIDED_COPY_CONTIGUOUS, 4, (10, 10), (10, 1), (10, 1), -1);
    assert_kernel(c, DST, SRC, "strided_copy_gather_4_i32_d8", 1, ROW);
}

/* Gathers whose source is close to contiguous (|stride| <= 4) on the
 * destination's innermost axis run as rows of elements; on another axis,
 * as tiles. */
static void test_near_unit_gathers(void **state)
{
    (void)state;
    /* [:, ::-1]: reversed rows; [:, ::2]: every other element. */
    strided_copy_plan reversed = PLAN(STRIDED_COPY_GATHER, 4, (100, 1024), (1024, 1), (1024, -1),
                                      -1);
    assert_kernel(reversed, DST, SRC, "strided_copy_rows_4", 100, ROW);
    strided_copy_plan halves = PLAN(STRIDED_COPY_GATHER, 2, (100, 1024), (1024, 1), (4096, 2), -1);
    assert_kernel(halves, DST, SRC, "strided_copy_rows_2", 100, ROW);
    /* Reversed rows of whole 16-byte vectors, element 0 of each source row
     * the last of a vector, the destination's rows aligned: vectors with
     * their elements reversed, the kernel given the source vector under
     * element 0 (E - 16 bytes from it). Rows of 4096 bytes: 256 vectors, a
     * chunk. Any of those conditions missing: rows of elements. */
    for (int e = 1; e <= 8; e *= 2) {
        const int64_t n = 4096 / e;
        const uintptr_t src0 = SRC + 4096 - (uintptr_t)e;
        char name[64];
        snprintf(name, sizeof name, "strided_copy_rows_reversed_%d", e);
        strided_copy_plan r = PLAN(STRIDED_COPY_GATHER, e, (100, n), (n, 1), (n, -1), -1);
        fake_cuda_launch l = launched(&r, DST, src0);
        assert_string_equal(l.function, name);
        assert_int_equal(l.grid[0], 100);
        assert_int_equal(l.args[0], DST);
        assert_int_equal(l.args[1], src0 + (uintptr_t)e - 16);
        snprintf(name, sizeof name, "strided_copy_rows_%d", e);
        assert_string_equal(launched(&r, DST, src0 + (uintptr_t)e).function, name);
        assert_string_equal(launched(&r, DST + (uintptr_t)e, src0).function, name);
        strided_copy_plan odd = PLAN(STRIDED_COPY_GATHER, e, (100, n + 1), (n + 1, 1), (n, -1), -1);
        assert_string_equal(launched(&odd, DST, src0).function, name);
        strided_copy_plan pitch = PLAN(STRIDED_COPY_GATHER, e, (100, n), (n, 1), (n + 1, -1), -1);
        assert_string_equal(launched(&pitch, DST, src0).function, name);
        /* 255 vectors a row: fewer than a block's threads. */
        strided_copy_plan short_vectors = PLAN(STRIDED_COPY_GATHER, e, (100, 4080 / e),
                                               (4080 / e, 1), (4080 / e, -1), -1);
        assert_string_equal(launched(&short_vectors, DST, SRC + 4080 - (uintptr_t)e).function,
                            name);
    }
    /* Rows shorter than a block stay gathered. */
    strided_copy_plan short_rows = PLAN(STRIDED_COPY_GATHER, 4, (100, 100), (100, 1), (100, -1),
                                        -1);
    assert_kernel(short_rows, DST, SRC, "strided_copy_gather_4_i32_d8", 3, ROW);
    /* [::-1, ::-1].T and [::2, ::2].T: tiles (16 x 16 of 64 x 64). */
    strided_copy_plan flipped = PLAN(STRIDED_COPY_GATHER, 4, (1024, 1024), (1024, 1), (-1, -1024),
                                     -1);
    assert_kernel(flipped, DST, SRC, "strided_copy_transpose_4_i32", 256, TILE);
    strided_copy_plan every_other = PLAN(STRIDED_COPY_GATHER, 4, (1024, 1024), (1024, 1), (2, 4096),
                                         -1);
    assert_kernel(every_other, DST, SRC, "strided_copy_transpose_4_i32", 256, TILE);
}

static void test_failing_launch_is_reported(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = contiguous_plan();
    fake.fail_next("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    assert_error(strided__copy_device_run(&p, DST, SRC, STREAM_A, 0), STRIDED_ERR_CUDA, "copy",
                 "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    assert_null(fake.current_context());
    /* The kernels stay loaded. */
    assert_ok(strided__copy_device_run(&p, DST, SRC, STREAM_A, 0));
    assert_int_equal(fake.calls("cuModuleLoadData"), 0);
}

static void test_failing_memcpy_is_reported(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = PLAN(STRIDED_COPY_CONTIGUOUS, 1, (1 << 21), (1), (1), -1);
    fake.fail_next("cuMemcpyAsync", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided__copy_device_run(&p, DST + 1, SRC, NULL, 0), STRIDED_ERR_CUDA, "copy",
                 "cuMemcpyAsync failed: CUDA_ERROR_INVALID_VALUE");
    assert_null(fake.current_context());
}

static void test_copies_run_in_the_devices_context(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = contiguous_plan();
    fake_cuda_launch l;
    /* The caller's context is device 1's; the copy runs on device 2 (the
     * fake refuses a kernel of another device's module) and gives the
     * caller its context back. */
    fake.set_current_device(1);
    void *before = fake.current_context();
    assert_ok(strided__copy_device_run(&p, DST, SRC, STREAM_A, 2));
    assert_ptr_equal(fake.current_context(), before);
    assert_true(last_launch(&l));
    assert_int_equal(l.device, 2);
    assert_ptr_equal(fake.last_stream("cuLaunchKernel"), STREAM_A);
    fake.set_current_device(-1);
}

static void test_unknown_device(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = contiguous_plan();
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 7), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "device 7 does not exist");
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, -1), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy", "device -1 does not exist");
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
}

static void test_nothing_to_copy_calls_nothing(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = PLAN(STRIDED_COPY_NOTHING, 4, (0, 5), (5, 1), (5, 1), -1);
    assert_ok(strided__copy_device_run(&p, DST, SRC, NULL, 0));
    assert_int_equal(fake.calls("cuCtxGetCurrent"), 0);
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
}

static void test_offsets_beyond_int64_bytes(void **state)
{
    (void)state;
    fake.reset(4, 0, 1);
    strided_copy_plan p = PLAN(STRIDED_COPY_GATHER, 12, (2, 3), (3, 1), (INT64_MAX / 2, 1), -1);
    assert_error(strided__copy_device_run(&p, DST, SRC, NULL, 0), STRIDED_ERR_OVERFLOW, "copy",
                 "do not fit");
    assert_int_equal(fake.calls("cuLaunchKernel"), 0);
}

/* The arguments of a grouped tile launch, widened. */
typedef struct grouped_args {
    int64_t count, n_a, n_b;
    int ndim, group_a, group_b;
    int64_t extent[STRIDED_COPY_MANY_DIMS], dst[STRIDED_COPY_MANY_DIMS],
        src[STRIDED_COPY_MANY_DIMS];
} grouped_args;

#define WIDEN(g, a)                                                      \
    do {                                                                 \
        (g).count = (int64_t)(a).count;                                  \
        (g).n_a = (int64_t)(a).n_a;                                      \
        (g).n_b = (int64_t)(a).n_b;                                      \
        (g).ndim = (a).ndim;                                             \
        (g).group_a = (a).group_a;                                       \
        (g).group_b = (a).group_b;                                       \
        for (int k = 0; k < (a).ndim + (a).group_a + (a).group_b; k++) { \
            (g).extent[k] = (int64_t)(a).extent[k].d;                    \
            (g).dst[k] = (int64_t)(a).dst_stride[k];                     \
            (g).src[k] = (int64_t)(a).src_stride[k];                     \
        }                                                                \
    } while (0)

/* A small deterministic generator (splitmix64). */
static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Index i's offsets over axes first .. first + count - 1 of g. */
static void grouped_offsets(const grouped_args *g, int first, int count, int64_t i, int64_t *d,
                            int64_t *s)
{
    *d = *s = 0;
    for (int k = first; k < first + count; k++) {
        *d += i % g->extent[k] * g->dst[k];
        *s += i % g->extent[k] * g->src[k];
        i /= g->extent[k];
    }
}

/* Whether plan p runs as grouped tiles, and if so that their tiles, as the
 * kernel walks them from the launch's arguments, give every destination
 * element of p its source element exactly once (dst strides >= 0). */
static bool grouped_tiles_cover(const strided_copy_plan *p)
{
    const char *name;
    union {
        strided_copy_args32_64 i32;
        strided_copy_args64_64 i64;
    } a;
    size_t bytes;
    assert_int_equal(strided__copy_launch_describe(p, DST, SRC, &name, &a, sizeof a, &bytes),
                     STRIDED_OK);
    if (strncmp(name, "strided_copy_transpose_grouped_", 31) != 0)
        return false;
    static grouped_args g;
    if (strstr(name, "_i32") != NULL) {
        assert_int_equal(bytes, sizeof a.i32);
        WIDEN(g, a.i32);
    } else {
        assert_int_equal(bytes, sizeof a.i64);
        WIDEN(g, a.i64);
    }
    /* The source offset of every destination element, and its visits. */
    int64_t span = 1, volume = 1;
    for (int k = 0; k < p->ndim; k++) {
        span += (p->shape[k] - 1) * p->dst_strides[k];
        volume *= p->shape[k];
    }
    int64_t *want = malloc((size_t)span * sizeof *want);
    unsigned char *seen = calloc((size_t)span, 1);
    assert_non_null(want);
    assert_non_null(seen);
    for (int64_t e = 0; e < volume; e++) {
        int64_t d = 0, s = 0, r = e;
        for (int k = p->ndim - 1; k >= 0; k--) {
            d += r % p->shape[k] * p->dst_strides[k];
            s += r % p->shape[k] * p->src_strides[k];
            r /= p->shape[k];
        }
        want[d] = s;
    }
    assert_true(g.n_a >= 1 && g.n_b >= 1 && g.count * g.n_a * g.n_b == volume);
    assert_true(g.group_a >= 1 && g.group_a <= STRIDED_COPY_GROUP_MAX);
    assert_true(g.group_b >= 1 && g.group_b <= STRIDED_COPY_GROUP_MAX);
    for (int64_t t = 0; t < g.count; t++) {
        int64_t td, ts, ad, as, bd, bs;
        grouped_offsets(&g, 0, g.ndim, t, &td, &ts);
        for (int64_t i = 0; i < g.n_a; i++) {
            grouped_offsets(&g, g.ndim, g.group_a, i, &ad, &as);
            for (int64_t j = 0; j < g.n_b; j++) {
                grouped_offsets(&g, g.ndim + g.group_a, g.group_b, j, &bd, &bs);
                const int64_t d = td + ad + bd;
                assert_true(d >= 0 && d < span);
                assert_int_equal(seen[d]++, 0);
                assert_int_equal(ts + as + bs, want[d]);
            }
        }
    }
    free(want);
    free(seen);
    return true;
}

/* Grouped tiles cover their plans: the fixed shapes of the GPU tests and
 * random permutations of 4 to 8 short axes (extents 2 to 8, reversed source
 * axes, padded destinations, every element size). */
static void test_grouped_tiles_cover_their_plans(void **state)
{
    (void)state;
    const int64_t six[6] = {4, 4, 8, 8, 8, 8}, split[4] = {12, 48, 5, 96};
    const int p6[6] = {5, 0, 4, 1, 3, 2}, p4[4] = {3, 1, 2, 0}, flips[] = {1, 3};
    int64_t twos[14];
    int reverse[14];
    for (int k = 0; k < 14; k++) {
        twos[k] = 2;
        reverse[k] = 13 - k;
    }
    strided_copy_plan fixed[] = {
        permuted_plan(4, 6, six, p6, NULL, 0, 0),
        permuted_plan(1, 6, six, p6, flips, 2, 3),
        permuted_plan(8, 14, twos, reverse, NULL, 0, 0),
        permuted_plan(2, 14, twos, reverse, flips, 2, 1),
        permuted_plan(4, 4, split, p4, NULL, 0, 0),
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        assert_true(grouped_tiles_cover(&fixed[i]));
    uint64_t seed = 20261202;
    int grouped = 0;
    for (int c = 0; c < 1000; c++) {
        int ndim = 4 + (int)(splitmix(&seed) % 5), perm[8], flip[8], nflip = 0;
        int64_t shape[8], volume = 1;
        for (int k = 0; k < ndim; k++) {
            shape[k] = 2 + (int64_t)(splitmix(&seed) % 7);
            while (volume * shape[k] > ((int64_t)1 << 15))
                shape[k] = shape[k] / 2 > 1 ? shape[k] / 2 : 1;
            volume *= shape[k];
            perm[k] = k;
        }
        for (int k = ndim - 1; k > 0; k--) {
            int j = (int)(splitmix(&seed) % (uint64_t)(k + 1)), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        for (int k = 0; k < ndim; k++)
            if (splitmix(&seed) % 5 == 0)
                flip[nflip++] = k;
        const int sizes[] = {1, 2, 4, 8, 16};
        strided_copy_plan p = permuted_plan(sizes[splitmix(&seed) % 5], ndim, shape, perm, flip,
                                            nflip, (int)(splitmix(&seed) % 3));
        if (p.kernel == STRIDED_COPY_TRANSPOSE)
            grouped += grouped_tiles_cover(&p);
    }
    /* Enough of them took grouped tiles to mean something. */
    assert_true(grouped >= 100);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_device_copies_need_a_driver),
        cmocka_unit_test(test_nothing_to_copy_needs_nothing),
#elif !defined(STRIDED_HAVE_KERNELS)
        cmocka_unit_test(test_without_kernels_nothing_is_loaded),
#else
        cmocka_unit_test(test_failing_module_load_is_reported_and_retried),
        cmocka_unit_test(test_failing_lookup_unloads_the_module),
        cmocka_unit_test(test_kernels_load_once_per_device),
        cmocka_unit_test(test_concurrent_first_copies_load_once),
        cmocka_unit_test(test_loaded_copies_call_only_the_launch),
        cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_large_misaligned_contiguous_copies_use_memcpy),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_transposes),
        cmocka_unit_test(test_grouped_tiles_cover_their_plans),
        cmocka_unit_test(test_broadcasts),
        cmocka_unit_test(test_gathers),
        cmocka_unit_test(test_plans_whose_kind_does_not_hold_are_gathered),
        cmocka_unit_test(test_near_unit_gathers),
        cmocka_unit_test(test_failing_launch_is_reported),
        cmocka_unit_test(test_failing_memcpy_is_reported),
        cmocka_unit_test(test_copies_run_in_the_devices_context),
        cmocka_unit_test(test_unknown_device),
        cmocka_unit_test(test_nothing_to_copy_calls_nothing),
        cmocka_unit_test(test_offsets_beyond_int64_bytes),
#endif
    };
#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 4);
#if defined(STRIDED_HAVE_KERNELS)
    find_launch_controls();
#endif
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
