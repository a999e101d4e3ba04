/*
 * Tests of what is done to a buffer's bytes (strided/buffer.h): filling
 * with a 1-, 2- or 4-byte pattern (strided_buffer_fill), copying between
 * buffers (strided_buffer_copy), which memory is host-only
 * (strided_buffer_is_host_only), and the DLPack export of a buffer as
 * cuda.core's Buffer exports one (strided_buffer_dlpack_device,
 * strided_buffer_export_dlpack and _legacy, strided/view.h).
 *
 * Built twice: DRIVER_NONE (no CUDA driver: all memory is host-only and
 * worked on by the host; memory a resource says a device reaches fails
 * for want of a driver) and DRIVER_FAKE (the fake driver: which
 * cuMemsetD*Async, cuMemcpyAsync or cuMemcpyPeerAsync is made, with which
 * address, value, count and stream, in which device's context, and the
 * bytes they write).
 */
#include "test_memory.h"

#include "cuda/driver.h"
#include "strided/dlpack.h"
#include "strided/view.h"
#include "test_cuda.h"

#define STREAM ((void *)0x5a)

static const unsigned char pattern1[1] = {0x7e};
static const unsigned char pattern2[2] = {0x01, 0x02};
static const unsigned char pattern4[4] = {0x01, 0x02, 0x03, 0x04};

/* A borrowed buffer over size bytes at p. */
static strided_buffer *borrow(void *p, size_t size)
{
    strided_buffer *b = NULL;
    assert_ok(strided_buffer_wrap(p, size, NULL, NULL, &b));
    return b;
}

/* Device memory of device 0, as a resource claims it. */
static const strided_memory_resource_props device_props = {false, true, false, 0, false};

/* Whether the n bytes at p repeat the pattern of size bytes. */
static void assert_pattern(const unsigned char *p, size_t n, const unsigned char *pattern,
                           size_t size)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern[i % size])
            fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, p[i], pattern[i % size]);
}

static void test_fill_host_memory_repeats_the_pattern(void **state)
{
    const unsigned char *patterns[] = {pattern1, pattern2, pattern4};
    const size_t sizes[] = {1, 2, 4};

    (void)state;
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
        for (size_t n = 0; n <= 40; n += sizes[k]) {
            unsigned char memory[48];
            fill_sentinel(memory, sizeof memory);
            strided_buffer *b = borrow(memory, n);
            assert_ok(strided_buffer_fill(b, patterns[k], sizes[k], NULL, STRIDED_BUFFER_DEFAULT));
            assert_pattern(memory, n, patterns[k], sizes[k]);
            assert_untouched(memory + n, sizeof memory - n);
            strided_buffer_release(b);
        }
    }
}

/* No stream: the host fills host-only memory without waiting. */
static void test_fill_host_memory_without_a_stream(void **state)
{
    unsigned char memory[12];
    strided_buffer *b = borrow(memory, sizeof memory);

    (void)state;
    assert_true(strided_buffer_is_host_only(b));
    assert_ok(strided_buffer_fill(b, pattern4, 4, STREAM, STRIDED_BUFFER_NO_STREAM));
    assert_pattern(memory, sizeof memory, pattern4, 4);
    strided_buffer_release(b);
}

/* A resource's host memory, allocated and filled. */
static void test_fill_allocated_host_memory(void **state)
{
    counting c;
    strided_buffer *b = claimed(&c, host_props, 64);

    (void)state;
    assert_true(strided_buffer_is_host_only(b));
    assert_ok(strided_buffer_fill(b, pattern2, 2, NULL, STRIDED_BUFFER_NO_STREAM));
    assert_pattern(strided_buffer_ptr(b), 64, pattern2, 2);
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.deallocates), 1);
}

/* Each refusal, in the order the header gives; the memory is untouched. */
static void test_fill_refusals_in_order(void **state)
{
    unsigned char memory[8];
    counting c;
    strided_buffer *b3 = borrow(memory, 3), *b6 = borrow(memory, 6);
    strided_buffer *at_null = borrow(NULL, 16);
    strided_buffer *device = claimed(&c, device_props, 8);

    (void)state;
    fill_sentinel(memory, sizeof memory);
    assert_error(strided_buffer_fill(NULL, pattern1, 1, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill", "the buffer is required");
    assert_error(strided_buffer_fill(b3, pattern1, 1, NULL, 8), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill", "unknown flags 0x8");
    /* No stream for memory a device reaches comes before the pattern. */
    assert_false(strided_buffer_is_host_only(device));
    assert_error(strided_buffer_fill(device, pattern1, 3, NULL, STRIDED_BUFFER_NO_STREAM),
                 STRIDED_ERR_INVALID_ARGUMENT, "fill",
                 "the buffer's memory is reachable from a device: the fill runs on a stream "
                 "and needs one");
    const size_t bad_sizes[] = {0, 3, 5, 8};
    for (size_t i = 0; i < ARRAY_LEN(bad_sizes); i++) {
        char text[64];
        snprintf(text, sizeof text, "value must be 1, 2, or 4 bytes, got %zu", bad_sizes[i]);
        /* Before the size rule: 3 bytes are no multiple of 8 either. */
        assert_error(strided_buffer_fill(b3, pattern4, bad_sizes[i], NULL, 0),
                     STRIDED_ERR_INVALID_ARGUMENT, "fill", text);
        assert_string_equal(strided_last_error_reason(), text);
    }
    assert_error(strided_buffer_fill(b3, NULL, 2, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "fill",
                 "the pattern is required");
    assert_error(strided_buffer_fill(b3, pattern2, 2, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill", NULL);
    assert_string_equal(strided_last_error_reason(), "buffer size (3) must be divisible by 2");
    assert_error(strided_buffer_fill(b6, pattern4, 4, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill", NULL);
    assert_string_equal(strided_last_error_reason(), "buffer size (6) must be divisible by 4");
    assert_error(strided_buffer_fill(at_null, pattern1, 1, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill", "the buffer has no memory: its 16 bytes are at NULL");
    assert_untouched(memory, sizeof memory);
    strided_buffer_release(b3);
    strided_buffer_release(b6);
    strided_buffer_release(at_null);
    strided_buffer_release(device);
}

/* An empty buffer, at NULL or not, is filled by doing nothing. */
static void test_fill_size_0(void **state)
{
    strided_buffer *b = borrow(NULL, 0);

    (void)state;
    assert_ok(strided_buffer_fill(b, pattern4, 4, NULL, 0));
    assert_ok(strided_buffer_fill(b, pattern1, 1, NULL, STRIDED_BUFFER_NO_STREAM));
    strided_buffer_release(b);
}

static void test_copy_host_memory(void **state)
{
    unsigned char a[32], b[32];
    strided_buffer *src = borrow(a, sizeof a), *dst = borrow(b, sizeof b);

    (void)state;
    for (int i = 0; i < 32; i++)
        a[i] = (unsigned char)(i * 7 + 1);
    fill_sentinel(b, sizeof b);
    assert_ok(strided_buffer_copy(dst, src, NULL, STRIDED_BUFFER_DEFAULT));
    assert_memory_equal(a, b, sizeof a);
    fill_sentinel(b, sizeof b);
    assert_ok(strided_buffer_copy(dst, src, STREAM, STRIDED_BUFFER_NO_STREAM));
    assert_memory_equal(a, b, sizeof a);
    strided_buffer_release(src);
    strided_buffer_release(dst);
}

/* Overlapping host memory is copied as if the source were read first; a
 * buffer copied onto itself stays as it is. */
static void test_copy_overlapping_host_memory(void **state)
{
    unsigned char m[16];
    strided_buffer *low = borrow(m, 12), *high = borrow(m + 4, 12);

    (void)state;
    for (int i = 0; i < 16; i++)
        m[i] = (unsigned char)i;
    assert_ok(strided_buffer_copy(high, low, NULL, 0));
    for (int i = 0; i < 16; i++)
        assert_int_equal(m[i], i < 4 ? i : i - 4);
    assert_ok(strided_buffer_copy(low, low, NULL, 0));
    for (int i = 0; i < 16; i++)
        assert_int_equal(m[i], i < 4 ? i : i - 4);
    strided_buffer_release(low);
    strided_buffer_release(high);
}

static void test_copy_refusals_in_order(void **state)
{
    unsigned char a[8], b[8];
    counting c;
    strided_buffer *src = borrow(a, 8), *dst = borrow(b, 4), *dst8 = borrow(b, 8);
    strided_buffer *at_null = borrow(NULL, 8);
    strided_buffer *device = claimed(&c, device_props, 8);

    (void)state;
    fill_sentinel(b, sizeof b);
    assert_error(strided_buffer_copy(NULL, src, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "dst and src are required");
    assert_error(strided_buffer_copy(dst, NULL, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "dst and src are required");
    assert_error(strided_buffer_copy(dst, src, NULL, 2), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "unknown flags 0x2");
    /* The sizes before the stream. */
    assert_error(strided_buffer_copy(dst, device, NULL, STRIDED_BUFFER_NO_STREAM),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy", NULL);
    assert_string_equal(strided_last_error_reason(),
                        "buffer sizes mismatch between src and dst (sizes are: src=8, dst=4)");
    assert_error(strided_buffer_copy(dst8, device, NULL, STRIDED_BUFFER_NO_STREAM),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "the memory of dst or src is reachable from a device: the copy runs on a "
                 "stream and needs one");
    assert_error(strided_buffer_copy(device, dst8, NULL, STRIDED_BUFFER_NO_STREAM),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy", "reachable from a device");
    assert_error(strided_buffer_copy(dst8, at_null, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "src has no memory: its 8 bytes are at NULL");
    assert_error(strided_buffer_copy(at_null, src, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "dst has no memory: its 8 bytes are at NULL");
    assert_untouched(b, sizeof b);
    strided_buffer_release(src);
    strided_buffer_release(dst);
    strided_buffer_release(dst8);
    strided_buffer_release(at_null);
    strided_buffer_release(device);
}

static void test_copy_size_0(void **state)
{
    strided_buffer *a = borrow(NULL, 0), *b = borrow(&a, 0);

    (void)state;
    assert_ok(strided_buffer_copy(a, b, NULL, 0));
    assert_ok(strided_buffer_copy(b, a, NULL, STRIDED_BUFFER_NO_STREAM));
    strided_buffer_release(a);
    strided_buffer_release(b);
}

/* The DLPack device of memory each combination of claims gives, as
 * cuda.core classifies a Buffer. */
static void test_dlpack_device_by_what_reaches_the_memory(void **state)
{
    const struct device_case {
        int line;
        strided_memory_resource_props props;
        strided_device_type type;
        int id;
    } cases[] = {
        CASE({true, false, false, -1, false}, STRIDED_DEVICE_CPU, 0),
        CASE({false, true, false, 1, false}, STRIDED_DEVICE_CUDA, 1),
        CASE({false, true, false, -1, false}, STRIDED_DEVICE_CUDA, 0),
        CASE({true, true, false, 1, true}, STRIDED_DEVICE_CUDA_HOST, 0),
        CASE({true, true, true, 1, false}, STRIDED_DEVICE_CUDA_MANAGED, 0),
        CASE({false, true, true, 1, false}, STRIDED_DEVICE_CUDA_MANAGED, 0),
        /* Managed memory that no device reaches is host memory. */
        CASE({true, false, true, -1, false}, STRIDED_DEVICE_CPU, 0),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        counting c;
        strided_buffer *b = claimed(&c, cases[i].props, 8);
        strided_device d = {-7, -7};
        assert_ok(strided_buffer_dlpack_device(b, &d));
        check_i64_(d.device_type, cases[i].type, "device_type", AT(&cases[i]));
        check_i64_(d.device_id, cases[i].id, "device_id", AT(&cases[i]));
        strided_buffer_release(b);
    }
}

static void test_dlpack_device_refusals(void **state)
{
    counting c;
    strided_buffer *neither = claimed(&c, (strided_memory_resource_props){0, 0, 0, -1, 0}, 8);
    strided_device d;

    (void)state;
    fill_sentinel(&d, sizeof d);
    assert_error(strided_buffer_dlpack_device(neither, &d), STRIDED_ERR_UNSUPPORTED,
                 "dlpack_device", NULL);
    assert_string_equal(strided_last_error_reason(),
                        "buffer is neither device-accessible nor host-accessible");
    assert_error(strided_buffer_dlpack_device(NULL, &d), STRIDED_ERR_INVALID_ARGUMENT,
                 "dlpack_device", "required");
    assert_error(strided_buffer_dlpack_device(neither, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "dlpack_device", "required");
    assert_untouched(&d, sizeof d);
    strided_buffer_release(neither);
}

/* The fields of an exported buffer, and its hold on the buffer. */
static void check_export(strided_buffer *b, const strided_dl_tensor *t, strided_device device)
{
    assert_ptr_equal(t->data, strided_buffer_ptr(b));
    assert_int_equal(t->device.device_type, device.device_type);
    assert_int_equal(t->device.device_id, device.device_id);
    assert_int_equal(t->ndim, 1);
    assert_int_equal(t->dtype.code, STRIDED_DTYPE_INT);
    assert_int_equal(t->dtype.bits, 8);
    assert_int_equal(t->dtype.lanes, 1);
    assert_non_null(t->shape);
    assert_non_null(t->strides);
    assert_i64(t->shape[0], (int64_t)strided_buffer_size(b));
    assert_i64(t->strides[0], 1);
    assert_i64(t->byte_offset, 0);
}

static void test_export_buffer_versioned_and_legacy(void **state)
{
    unsigned char memory[40];
    const size_t sizes[] = {40, 0};

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++) {
        strided_buffer *b = borrow(memory, sizes[i]);
        strided_device cpu = {STRIDED_DEVICE_CPU, 0};
        strided_dl_managed_tensor_versioned *v = NULL;
        assert_ok(strided_buffer_export_dlpack(b, &v));
        assert_int_equal(v->version.major, 1);
        assert_int_equal(v->version.minor, 3);
        assert_true(v->flags == 0);
        assert_ptr_equal(v->manager_ctx, b);
        check_export(b, &v->dl_tensor, cpu);
        assert_int_equal(strided_buffer_use_count(b), 2);

        strided_dl_managed_tensor *l = NULL;
        assert_ok(strided_buffer_export_dlpack_legacy(b, &l));
        assert_ptr_equal(l->manager_ctx, b);
        check_export(b, &l->dl_tensor, cpu);
        assert_int_equal(strided_buffer_use_count(b), 3);
        /* The tensors outlive the buffer's own reference. */
        strided_buffer_release(b);
        v->deleter(v);
        assert_int_equal(strided_buffer_use_count(b), 1);
        l->deleter(l);
    }
}

static void test_export_buffer_on_its_device(void **state)
{
    counting c;
    strided_buffer *b = claimed(&c, (strided_memory_resource_props){0, 1, 0, 3, 0}, 64);
    strided_dl_managed_tensor_versioned *v = NULL;

    (void)state;
    assert_ok(strided_buffer_export_dlpack(b, &v));
    check_export(b, &v->dl_tensor, (strided_device){STRIDED_DEVICE_CUDA, 3});
    strided_buffer_release(b);
    assert_int_equal(atomic_load(&c.deallocates), 0);
    v->deleter(v);
    assert_int_equal(atomic_load(&c.deallocates), 1);
}

static void test_export_buffer_refusals(void **state)
{
    counting c;
    strided_buffer *neither = claimed(&c, (strided_memory_resource_props){0, 0, 0, -1, 0}, 8);
    unsigned char memory[8];
    strided_buffer *b = borrow(memory, sizeof memory);
    strided_dl_managed_tensor_versioned *v;
    strided_dl_managed_tensor *l;

    (void)state;
    fill_sentinel(&v, sizeof v);
    fill_sentinel(&l, sizeof l);
    assert_error(strided_buffer_export_dlpack(neither, &v), STRIDED_ERR_UNSUPPORTED,
                 "export_dlpack", "buffer is neither device-accessible nor host-accessible");
    assert_error(strided_buffer_export_dlpack_legacy(neither, &l), STRIDED_ERR_UNSUPPORTED,
                 "export_dlpack_legacy", "neither");
    assert_error(strided_buffer_export_dlpack(NULL, &v), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack", "required");
    assert_error(strided_buffer_export_dlpack(b, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack", "out is required");
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_export_dlpack(b, &v), STRIDED_ERR_OUT_OF_MEMORY, "export_dlpack",
                 NULL);
    strided__fail_allocation_after(0);
    assert_error(strided_buffer_export_dlpack_legacy(b, &l), STRIDED_ERR_OUT_OF_MEMORY,
                 "export_dlpack_legacy", NULL);
    strided__fail_allocation_after(-1);
    assert_untouched(&v, sizeof v);
    assert_untouched(&l, sizeof l);
    assert_int_equal(strided_buffer_use_count(b), 1);
    assert_int_equal(strided_buffer_use_count(neither), 1);
    strided_buffer_release(b);
    strided_buffer_release(neither);
}

#if defined(DRIVER_NONE)

/* Memory a resource says a device reaches needs the driver. */
static void test_no_driver_device_memory_needs_the_driver(void **state)
{
    counting c;
    strided_buffer *device = claimed(&c, device_props, 8);
    unsigned char memory[8];
    strided_buffer *host = borrow(memory, sizeof memory);

    (void)state;
    assert_error(strided_buffer_fill(device, pattern1, 1, NULL, 0), STRIDED_ERR_NO_CUDA_DRIVER,
                 "fill", "no CUDA driver");
    assert_error(strided_buffer_copy(host, device, NULL, 0), STRIDED_ERR_NO_CUDA_DRIVER, "copy",
                 "no CUDA driver");
    strided_buffer_release(device);
    strided_buffer_release(host);
}

#endif

#if defined(DRIVER_FAKE)

/* The fake's control functions that test_cuda.h does not reach, from the
 * handle use_fake_driver opened (dlopen gives it again). */
static fake_cuda_move_bytes_fn move_bytes;
static fake_cuda_last_memop_fn last_memop;

static void open_more_controls(void)
{
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    fake_symbol_(lib, "fake_cuda_move_bytes", &move_bytes);
    fake_symbol_(lib, "fake_cuda_last_memop", &last_memop);
}

/* Real memory that the fake's range table calls memory of a kind. */
typedef struct fake_memory {
    unsigned char *bytes;
    size_t size;
} fake_memory;

enum { PAGEABLE, PINNED, DEVICE, MANAGED };

/* Where the device reaches the pinned memory of some tests (nothing is
 * there: those tests move no bytes). */
static const uintptr_t mapped = (uintptr_t)0x7f0000000000u;

/* size bytes of memory of kind on device, which the driver reaches at
 * device_pointer (0: the address itself). */
static fake_memory fake_alloc(int kind, int device, size_t size, uintptr_t device_pointer)
{
    /* aligned_alloc takes a size that is a multiple of the alignment. */
    fake_memory m = {aligned_alloc(256, (size + 255) / 256 * 256), size};
    assert_non_null(m.bytes);
    if (kind != PAGEABLE) {
        static const unsigned int types[] = {0, 1, 2, 2};
        uintptr_t dptr = device_pointer ? device_pointer : (uintptr_t)m.bytes;
        fake_cuda_range r = {
            (uintptr_t)m.bytes, size, types[kind], kind == MANAGED, device, dptr, NULL};
        fake.add_range(&r);
    }
    return m;
}

static void fake_free(fake_memory *m)
{
    fake.remove_range((uintptr_t)m->bytes);
    free(m->bytes);
}

/* The last memset or copy, which must have been made. */
static fake_cuda_memop last(void)
{
    fake_cuda_memop m;
    assert_true(last_memop(&m));
    return m;
}

static void reset(int devices)
{
    fake.reset(devices, 0, 1);
    move_bytes(1);
}

/* One memset per pattern size, of size / pattern_size elements, at the
 * memory's address, with the pattern's native-endian value, on the stream
 * in the device's context (which is not left current). */
static void test_fake_fill_device_memory(void **state)
{
    const struct fill_case {
        int line;
        const unsigned char *pattern;
        size_t size;
        const char *call;
        unsigned int value;
    } cases[] = {
        CASE(pattern1, 1, "cuMemsetD8Async", 0x7e),
        CASE(pattern2, 2, "cuMemsetD16Async", 0x0201),
        CASE(pattern4, 4, "cuMemsetD32Async", 0x04030201),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct fill_case *row = &cases[i];
        reset(2);
        fake_memory m = fake_alloc(DEVICE, 1, 256, 0);
        strided_buffer *b = borrow(m.bytes, 64);
        assert_false(strided_buffer_is_host_only(b));
        fill_sentinel(m.bytes, m.size);
        assert_ok(strided_buffer_fill(b, row->pattern, row->size, STREAM, 0));
        fake_cuda_memop op = last();
        assert_string_equal(op.function, row->call);
        assert_true(op.dst == (uintptr_t)m.bytes);
        check_i64_(op.value, row->value, "value", AT(row));
        check_i64_((int64_t)op.count, (int64_t)(64 / row->size), "count", AT(row));
        assert_ptr_equal(op.stream, STREAM);
        check_i64_(op.device, 1, "device", AT(row));
        assert_int_equal(fake.calls(row->call), 1);
        assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
        assert_null(fake.current_context());
        assert_pattern(m.bytes, 64, row->pattern, row->size);
        assert_untouched(m.bytes + 64, m.size - 64);
        strided_buffer_release(b);
        fake_free(&m);
    }
}

/* Pinned memory is set at its device address, managed memory in its
 * device's context. */
static void test_fake_fill_pinned_and_managed_memory(void **state)
{
    (void)state;
    reset(2);
    move_bytes(0); /* nothing is mapped at the device address */
    fake_memory pinned = fake_alloc(PINNED, 0, 256, mapped);
    strided_buffer *b = borrow(pinned.bytes, 16);
    assert_ok(strided_buffer_fill(b, pattern4, 4, NULL, 0));
    fake_cuda_memop op = last();
    assert_string_equal(op.function, "cuMemsetD32Async");
    assert_true(op.dst == mapped);
    assert_int_equal(op.count, 4);
    assert_null(op.stream);
    assert_int_equal(op.device, 0);
    strided_buffer_release(b);
    fake_free(&pinned);

    reset(2);
    fake_memory managed = fake_alloc(MANAGED, 1, 256, 0);
    b = borrow(managed.bytes, 32);
    assert_ok(strided_buffer_fill(b, pattern2, 2, STREAM, 0));
    op = last();
    assert_string_equal(op.function, "cuMemsetD16Async");
    assert_int_equal(op.device, 1);
    assert_pattern(managed.bytes, 32, pattern2, 2);
    strided_buffer_release(b);
    fake_free(&managed);
}

/* Host-only memory is filled by the host, after the stream's work; with no
 * stream, after nothing. */
static void test_fake_fill_host_memory_waits_for_the_stream(void **state)
{
    unsigned char memory[16];
    strided_buffer *b = borrow(memory, sizeof memory);

    (void)state;
    reset(1);
    assert_true(strided_buffer_is_host_only(b));
    assert_ok(strided_buffer_fill(b, pattern2, 2, STREAM, 0));
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), STREAM);
    assert_pattern(memory, sizeof memory, pattern2, 2);
    fill_sentinel(memory, sizeof memory);
    assert_ok(strided_buffer_fill(b, pattern1, 1, STREAM, STRIDED_BUFFER_NO_STREAM));
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_pattern(memory, sizeof memory, pattern1, 1);
    fake_cuda_memop op;
    assert_false(last_memop(&op));
    assert_null(fake.current_context());
    strided_buffer_release(b);
}

/* Refusals on a device come before any driver call. */
static void test_fake_fill_device_refusals(void **state)
{
    (void)state;
    reset(1);
    fake_memory m = fake_alloc(DEVICE, 0, 256, 0);
    strided_buffer *odd = borrow(m.bytes + 1, 8), *b = borrow(m.bytes, 8);
    fill_sentinel(m.bytes, m.size);
    assert_error(strided_buffer_fill(odd, pattern2, 2, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill", "a 2-byte pattern needs memory aligned to 2 bytes on a device");
    assert_error(strided_buffer_fill(b, pattern1, 1, NULL, STRIDED_BUFFER_NO_STREAM),
                 STRIDED_ERR_INVALID_ARGUMENT, "fill", "needs one");
    fake_cuda_memop op;
    assert_false(last_memop(&op));
    assert_untouched(m.bytes, m.size);
    strided_buffer_release(odd);
    strided_buffer_release(b);
    fake_free(&m);
}

/* A failing memset is a CUDA error, and the context is restored. */
static void test_fake_fill_driver_failure(void **state)
{
    (void)state;
    reset(1);
    fake_memory m = fake_alloc(DEVICE, 0, 256, 0);
    strided_buffer *b = borrow(m.bytes, 8);
    fake.fail_next("cuMemsetD8Async", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_buffer_fill(b, pattern1, 1, NULL, 0), STRIDED_ERR_CUDA, "fill",
                 "cuMemsetD8Async failed: CUDA_ERROR_INVALID_VALUE");
    assert_int_equal(strided_last_cuda_error(), CUDA_ERROR_INVALID_VALUE);
    assert_null(fake.current_context());
    strided_buffer_release(b);
    fake_free(&m);
}

/* Host memory against device or managed memory: one cuMemcpyAsync at the
 * device addresses, on the stream, in the context of the device side. */
static void test_fake_copy_between_host_and_device(void **state)
{
    unsigned char host[64];

    (void)state;
    reset(2);
    fake_memory dev = fake_alloc(DEVICE, 1, 64, 0);
    strided_buffer *h = borrow(host, sizeof host), *d = borrow(dev.bytes, 64);
    for (int i = 0; i < 64; i++)
        host[i] = (unsigned char)(3 * i);
    assert_ok(strided_buffer_copy(d, h, STREAM, 0));
    fake_cuda_memop op = last();
    assert_string_equal(op.function, "cuMemcpyAsync");
    assert_true(op.dst == (uintptr_t)dev.bytes);
    assert_true(op.src == (uintptr_t)host);
    assert_int_equal(op.count, 64);
    assert_ptr_equal(op.stream, STREAM);
    assert_int_equal(op.device, 1);
    assert_memory_equal(dev.bytes, host, 64);
    memset(host, 0, sizeof host);
    assert_ok(strided_buffer_copy(h, d, NULL, 0));
    op = last();
    assert_true(op.dst == (uintptr_t)host);
    assert_int_equal(op.device, 1);
    assert_int_equal(host[5], 15);
    assert_int_equal(fake.calls("cuMemcpyAsync"), 2);
    assert_int_equal(fake.calls("cuStreamSynchronize"), 0);
    assert_null(fake.current_context());
    strided_buffer_release(h);
    strided_buffer_release(d);
    fake_free(&dev);
}

/* Pinned memory is read at its device address; managed memory of device 1
 * copies in device 1's context. */
static void test_fake_copy_pinned_and_managed(void **state)
{
    (void)state;
    reset(2);
    move_bytes(0);
    fake_memory pinned = fake_alloc(PINNED, 0, 64, mapped);
    fake_memory managed = fake_alloc(MANAGED, 1, 64, 0);
    strided_buffer *p = borrow(pinned.bytes, 64), *m = borrow(managed.bytes, 64);
    assert_ok(strided_buffer_copy(m, p, STREAM, 0));
    fake_cuda_memop op = last();
    assert_string_equal(op.function, "cuMemcpyAsync");
    assert_true(op.dst == (uintptr_t)managed.bytes);
    assert_true(op.src == mapped);
    assert_int_equal(op.device, 1);
    assert_ok(strided_buffer_copy(p, m, STREAM, 0));
    op = last();
    assert_true(op.dst == mapped);
    assert_int_equal(op.device, 1);
    strided_buffer_release(p);
    strided_buffer_release(m);
    fake_free(&pinned);
    fake_free(&managed);
}

/* Device memory of two devices: cuMemcpyPeerAsync in the destination's
 * context, on the stream; the same device: cuMemcpyAsync. */
static void test_fake_copy_between_devices(void **state)
{
    (void)state;
    reset(2);
    fake_memory d0 = fake_alloc(DEVICE, 0, 64, 0), d1 = fake_alloc(DEVICE, 1, 64, 0);
    fake_memory other0 = fake_alloc(DEVICE, 0, 64, 0);
    strided_buffer *a = borrow(d0.bytes, 64), *b = borrow(d1.bytes, 64);
    strided_buffer *c = borrow(other0.bytes, 64);
    for (int i = 0; i < 64; i++)
        d0.bytes[i] = (unsigned char)(i + 9);
    assert_ok(strided_buffer_copy(b, a, STREAM, 0));
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    assert_int_equal(fake.calls("cuMemcpyAsync"), 0);
    assert_ptr_equal(fake.last_stream("cuMemcpyPeerAsync"), STREAM);
    assert_memory_equal(d1.bytes, d0.bytes, 64);
    assert_null(fake.current_context());
    assert_ok(strided_buffer_copy(c, a, STREAM, 0));
    fake_cuda_memop op = last();
    assert_string_equal(op.function, "cuMemcpyAsync");
    assert_int_equal(op.device, 0);
    assert_memory_equal(other0.bytes, d0.bytes, 64);
    assert_int_equal(fake.calls("cuMemcpyPeerAsync"), 1);
    strided_buffer_release(a);
    strided_buffer_release(b);
    strided_buffer_release(c);
    fake_free(&d0);
    fake_free(&d1);
    fake_free(&other0);
}

/* Between host-only memory the host copies, after the stream's work. */
static void test_fake_copy_host_memory_waits_for_the_stream(void **state)
{
    unsigned char a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {0};
    strided_buffer *src = borrow(a, 8), *dst = borrow(b, 8);

    (void)state;
    reset(1);
    assert_ok(strided_buffer_copy(dst, src, STREAM, 0));
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), STREAM);
    assert_memory_equal(a, b, 8);
    assert_ok(strided_buffer_copy(dst, src, STREAM, STRIDED_BUFFER_NO_STREAM));
    assert_int_equal(fake.calls("cuStreamSynchronize"), 1);
    assert_int_equal(fake.calls("cuMemcpyAsync"), 0);
    strided_buffer_release(src);
    strided_buffer_release(dst);
}

static void test_fake_copy_device_refusals_and_failures(void **state)
{
    unsigned char host[16];

    (void)state;
    reset(1);
    fake_memory dev = fake_alloc(DEVICE, 0, 64, 0);
    strided_buffer *low = borrow(dev.bytes, 16), *high = borrow(dev.bytes + 8, 16);
    strided_buffer *h = borrow(host, 16);
    assert_error(strided_buffer_copy(high, low, NULL, 0), STRIDED_ERR_INVALID_ARGUMENT, "copy",
                 "dst and src overlap (16 bytes at");
    assert_error(strided_buffer_copy(h, low, NULL, STRIDED_BUFFER_NO_STREAM),
                 STRIDED_ERR_INVALID_ARGUMENT, "copy", "needs one");
    fake_cuda_memop op;
    assert_false(last_memop(&op));
    /* The same memory on both sides copies nothing. */
    assert_ok(strided_buffer_copy(low, low, STREAM, 0));
    assert_false(last_memop(&op));
    fake.fail_next("cuMemcpyAsync", CUDA_ERROR_INVALID_VALUE);
    assert_error(strided_buffer_copy(h, low, NULL, 0), STRIDED_ERR_CUDA, "copy",
                 "cuMemcpyAsync failed");
    assert_null(fake.current_context());
    strided_buffer_release(low);
    strided_buffer_release(high);
    strided_buffer_release(h);
    fake_free(&dev);
}

/* The driver's kinds of memory, exported. */
static void test_fake_export_by_kind(void **state)
{
    const struct kind_case {
        int line;
        int kind, device;
        strided_device_type type;
        int id;
    } cases[] = {
        CASE(PAGEABLE, -1, STRIDED_DEVICE_CPU, 0),
        CASE(PINNED, 1, STRIDED_DEVICE_CUDA_HOST, 0),
        CASE(DEVICE, 1, STRIDED_DEVICE_CUDA, 1),
        CASE(MANAGED, 1, STRIDED_DEVICE_CUDA_MANAGED, 0),
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        reset(2);
        fake_memory m = fake_alloc(cases[i].kind, cases[i].device, 64, 0);
        strided_buffer *b = borrow(m.bytes, 64);
        strided_dl_managed_tensor_versioned *v = NULL;
        assert_ok(strided_buffer_export_dlpack(b, &v));
        check_i64_(v->dl_tensor.device.device_type, cases[i].type, "type", AT(&cases[i]));
        check_i64_(v->dl_tensor.device.device_id, cases[i].id, "id", AT(&cases[i]));
        assert_ptr_equal(v->dl_tensor.data, m.bytes);
        v->deleter(v);
        strided_buffer_release(b);
        fake_free(&m);
    }
    /* Pageable memory a device reads is reached by both. */
    fake.reset(1, 1, 1);
    unsigned char memory[8];
    strided_buffer *b = borrow(memory, sizeof memory);
    strided_device d;
    assert_ok(strided_buffer_dlpack_device(b, &d));
    assert_int_equal(d.device_type, STRIDED_DEVICE_CUDA_HOST);
    assert_false(strided_buffer_is_host_only(b));
    strided_buffer_release(b);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_host_memory_repeats_the_pattern),
        cmocka_unit_test(test_fill_host_memory_without_a_stream),
        cmocka_unit_test(test_fill_allocated_host_memory),
        cmocka_unit_test(test_fill_refusals_in_order),
        cmocka_unit_test(test_fill_size_0),
        cmocka_unit_test(test_copy_host_memory),
        cmocka_unit_test(test_copy_overlapping_host_memory),
        cmocka_unit_test(test_copy_refusals_in_order),
        cmocka_unit_test(test_copy_size_0),
        cmocka_unit_test(test_dlpack_device_by_what_reaches_the_memory),
        cmocka_unit_test(test_dlpack_device_refusals),
        cmocka_unit_test(test_export_buffer_versioned_and_legacy),
        cmocka_unit_test(test_export_buffer_on_its_device),
        cmocka_unit_test(test_export_buffer_refusals),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_no_driver_device_memory_needs_the_driver),
#endif
#if defined(DRIVER_FAKE)
        cmocka_unit_test(test_fake_fill_device_memory),
        cmocka_unit_test(test_fake_fill_pinned_and_managed_memory),
        cmocka_unit_test(test_fake_fill_host_memory_waits_for_the_stream),
        cmocka_unit_test(test_fake_fill_device_refusals),
        cmocka_unit_test(test_fake_fill_driver_failure),
        cmocka_unit_test(test_fake_copy_between_host_and_device),
        cmocka_unit_test(test_fake_copy_pinned_and_managed),
        cmocka_unit_test(test_fake_copy_between_devices),
        cmocka_unit_test(test_fake_copy_host_memory_waits_for_the_stream),
        cmocka_unit_test(test_fake_copy_device_refusals_and_failures),
        cmocka_unit_test(test_fake_export_by_kind),
#endif
    };

#if defined(DRIVER_FAKE)
    use_fake_driver(FAKE_CUDA_PATH, 2);
    open_more_controls();
#else
    use_no_driver();
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
