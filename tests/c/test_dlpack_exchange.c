/*
 * test_dlpack_exchange.c: the producer's side of the DLPack exchange beyond
 * a plain export (src/view/exchange.c): where __dlpack__'s dl_device and
 * copy send a view (strided_dlpack_export_request_make), the export that
 * copies (strided__view_export_dlpack_ex, with the copy engine handed in),
 * the borrowed DLTensor (strided_view_export_dl_tensor), the allocator of
 * the C exchange API (strided_dlpack_tensor_alloc,
 * strided_dlpack_exchange_alloc with its SetError), and the hint after
 * cuda.core's sentence for a host producer given no stream.
 *
 * Built twice: without a driver (DRIVER_NONE), where views of pinned,
 * managed and device memory are made of buffers whose kind the test states
 * (no driver call decides anything here) and only host memory is
 * allocated; and against the fake driver (DRIVER_FAKE), which backs its
 * allocations with host memory and moves the bytes of DMAs, so that device
 * allocations and copies to and from them are checked byte for byte.
 */
#include "test_util.h"

#include <stdlib.h>

#include "memory/memory.h"
#include "view/view_internal.h"
#include "strided.h"
#include "test_cuda.h"

static const strided_dtype f32 = {STRIDED_DTYPE_FLOAT, 32, 1};

enum kind { HOST, PINNED, MANAGED, DEVICE1 };

static float backing[64];

/* A view of 6 float32 of backing, through its own buffer of memory of kind
 * k (device memory of device 1 for DEVICE1), readonly as asked. */
static strided_view kind_view(enum kind k, bool readonly)
{
    static const strided_memory_info infos[] = {
        [HOST] = {STRIDED_MEMORY_HOST, -1, true, false, false, false, 0},
        [PINNED] = {STRIDED_MEMORY_PINNED, 0, true, true, false, false, 0},
        [MANAGED] = {STRIDED_MEMORY_MANAGED, 0, true, true, true, false, 0},
        [DEVICE1] = {STRIDED_MEMORY_DEVICE, 1, false, true, false, false, 0},
    };
    strided_memory_info info = infos[k];
    if (info.device_accessible)
        info.device_address = (uintptr_t)backing;
    strided_buffer *b = NULL;
    strided_layout l;
    strided_view v;
    assert_ok(strided_buffer_wrap_known(backing, sizeof backing, &info, NULL, NULL, &b));
    assert_ok(strided_layout_init(&l, DIMS(2, 3), NULL, 4));
    assert_ok(strided_view_from_buffer(b, &l, &f32, readonly, &v));
    strided_buffer_release(b);
    return v;
}

#define NO_DEVICE false, 0, 0
#define ON(type, id) true, (type), (id)
#define NONE STRIDED_DLPACK_COPY_IF_NEEDED
#define ALWAYS STRIDED_DLPACK_COPY_ALWAYS
#define NEVER STRIDED_DLPACK_COPY_NEVER
#define NO_STREAM false, 0
#define STREAM(s) true, (s)

typedef struct {
    int line;
    enum kind kind;
    bool stream_given;
    int64_t stream;
    bool device_given;
    int64_t device_type, device_id;
    strided_dlpack_copy copy;
    strided_status status;
    const char *text; /* in the message, when refused */
    /* when accepted: */
    int32_t type, id;
    bool copies, host_copy, blocking;
    uintptr_t copy_stream;
} request_case;

#define OK STRIDED_OK, NULL
#define REFUSED(status, text) (status), (text), 0, 0, false, false, false, 0
#define AS_IS(type, id) (type), (id), false, false, false, 0
#define COPY(type, id, host, blocking, stream) (type), (id), true, (host), (blocking), (stream)

static void test_export_request_rules(void **state)
{
    (void)state;
    static const request_case cases[] = {
        /* Host memory: its own device, or the CPU named; copies on the host. */
        CASE(HOST, NO_STREAM, NO_DEVICE, NONE, OK, AS_IS(1, 0)),
        CASE(HOST, STREAM(-1), ON(1, 0), NEVER, OK, AS_IS(1, 0)),
        CASE(HOST, NO_STREAM, NO_DEVICE, ALWAYS, OK, COPY(1, 0, true, true, 0)),
        CASE(HOST, STREAM(-1), ON(1, 0), ALWAYS, OK, COPY(1, 0, true, true, 0)),
        CASE(HOST, NO_STREAM, ON(2, 0), NONE,
             REFUSED(STRIDED_ERR_UNSUPPORTED,
                     "dl_device (2, 0) is not supported for a view on device (1, 0): a view "
                     "exports to its own device or to the CPU (1, 0)")),
        CASE(HOST, NO_STREAM, ON(1, 1), NONE,
             REFUSED(STRIDED_ERR_UNSUPPORTED, "dl_device (1, 1) is not supported")),
        CASE(HOST, STREAM(5), NO_DEVICE, NONE,
             REFUSED(STRIDED_ERR_INVALID_ARGUMENT,
                     "stream=5 is not valid for a view of host memory")),
        /* Pinned and managed memory reach the CPU as they are. */
        CASE(PINNED, NO_STREAM, ON(1, 0), NEVER, OK, AS_IS(1, 0)),
        CASE(PINNED, NO_STREAM, ON(3, 0), NEVER, OK, AS_IS(3, 0)),
        CASE(PINNED, NO_STREAM, NO_DEVICE, ALWAYS, OK, COPY(3, 0, true, true, 0)),
        CASE(PINNED, NO_STREAM, ON(1, 0), ALWAYS, OK, COPY(1, 0, true, true, 0)),
        CASE(PINNED, NO_STREAM, ON(3, 1), NONE,
             REFUSED(STRIDED_ERR_UNSUPPORTED, "dl_device (3, 1) is not supported for a view "
                                              "on device (3, 0)")),
        CASE(MANAGED, STREAM(7), ON(1, 0), NEVER, OK, AS_IS(1, 0)),
        CASE(MANAGED, STREAM(7), NO_DEVICE, ALWAYS, OK, COPY(13, 0, true, true, 0)),
        /* Device memory: a copy to reach the CPU, complete on return. */
        CASE(DEVICE1, NO_STREAM, NO_DEVICE, NONE, OK, AS_IS(2, 1)),
        CASE(DEVICE1, STREAM(7), ON(2, 1), NEVER, OK, AS_IS(2, 1)),
        CASE(DEVICE1, STREAM(7), ON(1, 0), NONE, OK, COPY(1, 0, false, true, 7)),
        CASE(DEVICE1, STREAM(-1), ON(1, 0), NONE, OK, COPY(1, 0, false, true, 0)),
        CASE(DEVICE1, NO_STREAM, ON(1, 0), ALWAYS, OK, COPY(1, 0, false, true, 0)),
        CASE(DEVICE1, STREAM(7), ON(1, 0), NEVER,
             REFUSED(STRIDED_ERR_UNSUPPORTED,
                     "copy=False, but exporting a view of device memory on (2, 1) to the CPU "
                     "(1, 0) needs a copy")),
        /* A copy on the device is queued on the consumer's stream. */
        CASE(DEVICE1, STREAM(7), NO_DEVICE, ALWAYS, OK, COPY(2, 1, false, false, 7)),
        CASE(DEVICE1, STREAM(2), ON(2, 1), ALWAYS, OK, COPY(2, 1, false, false, 2)),
        CASE(DEVICE1, STREAM(-1), NO_DEVICE, ALWAYS, OK, COPY(2, 1, false, true, 0)),
        CASE(DEVICE1, NO_STREAM, NO_DEVICE, ALWAYS, OK, COPY(2, 1, false, true, 0)),
        CASE(DEVICE1, NO_STREAM, ON(2, 0), NONE,
             REFUSED(STRIDED_ERR_UNSUPPORTED, "dl_device (2, 0) is not supported for a view "
                                              "on device (2, 1)")),
        CASE(DEVICE1, NO_STREAM, ON(INT64_MAX, 0), NONE,
             REFUSED(STRIDED_ERR_UNSUPPORTED, "dl_device (9223372036854775807, 0)")),
        CASE(DEVICE1, STREAM(0), NO_DEVICE, NONE,
             REFUSED(STRIDED_ERR_INVALID_ARGUMENT, "stream=0 is ambiguous")),
        /* The stream is checked before the device. */
        CASE(HOST, STREAM(5), ON(2, 0), NONE, REFUSED(STRIDED_ERR_INVALID_ARGUMENT, "stream=5")),
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const request_case *c = &cases[i];
        strided_view v = kind_view(c->kind, false);
        strided_dlpack_export_request r;
        fill_sentinel(&r, sizeof r);
        strided_status status = strided_dlpack_export_request_make(&v, c->stream_given, c->stream,
                                                                   c->device_given, c->device_type,
                                                                   c->device_id, c->copy, &r);
        strided_view_release(&v);
        if (c->status != STRIDED_OK) {
            check_error_(status, c->status, "__dlpack__", c->text, AT(c));
            check_untouched_(&r, sizeof r, "the request", AT(c));
            continue;
        }
        check_status_(status, STRIDED_OK, AT(c));
        if (r.device.device_type != c->type || r.device.device_id != c->id || r.copy != c->copies)
            fail_at(AT(c), "device (%d, %d) copy %d, expected (%d, %d) %d\n",
                    (int)r.device.device_type, (int)r.device.device_id, r.copy, (int)c->type,
                    (int)c->id, c->copies);
        if (c->copies && (r.host_copy != c->host_copy || r.blocking != c->blocking ||
                          (uintptr_t)r.stream != c->copy_stream))
            fail_at(AT(c), "host_copy %d blocking %d stream %p, expected %d %d %p\n", r.host_copy,
                    r.blocking, r.stream, c->host_copy, c->blocking, (void *)c->copy_stream);
    }
}

static void test_export_request_refusals(void **state)
{
    (void)state;
    strided_view v = kind_view(HOST, false);
    strided_dlpack_export_request r;
    assert_error(strided_dlpack_export_request_make(NULL, false, 0, NO_DEVICE, NONE, &r),
                 STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "view and out are required");
    assert_error(strided_dlpack_export_request_make(&v, false, 0, NO_DEVICE, NONE, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "view and out are required");
    assert_error(
        strided_dlpack_export_request_make(&v, false, 0, NO_DEVICE, (strided_dlpack_copy)7, &r),
        STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "copy must be a strided_dlpack_copy, got 7");
    strided_view_release(&v);
    assert_error(strided_dlpack_export_request_make(&v, false, 0, NO_DEVICE, NONE, &r),
                 STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "the view has no buffer");
}

/* The copy engine the tests hand in: strided_view_copy with the flags the
 * request asks for, counting its calls; fail makes it fail instead (after
 * taking a reference to dst's memory, so the test can see it freed). */
typedef struct {
    int calls;
    bool fail;
    strided_buffer *seen;
} copier;

static strided_status copy_engine(void *context, const strided_view *dst, const strided_view *src,
                                  const strided_dlpack_export_request *r)
{
    copier *c = context;
    c->calls++;
    if (c->fail) {
        c->seen = strided_buffer_retain(dst->buffer);
        return strided_set_last_error(STRIDED_ERR_CUDA, "copy", "the copy engine failed");
    }
    unsigned flags = r->host_copy  ? STRIDED_COPY_NO_STREAM | STRIDED_COPY_BLOCKING
                     : r->blocking ? STRIDED_COPY_BLOCKING
                                   : STRIDED_COPY_NONBLOCKING;
    return strided_view_copy(dst, src, r->stream, flags);
}

static strided_dlpack_export_request make_request(const strided_view *v, bool stream_given,
                                                  int64_t stream, bool device_given, int64_t type,
                                                  int64_t id, strided_dlpack_copy copy)
{
    strided_dlpack_export_request r;
    assert_ok(strided_dlpack_export_request_make(v, stream_given, stream, device_given, type, id,
                                                 copy, &r));
    return r;
}

static void test_export_without_copy_is_the_plain_export(void **state)
{
    (void)state;
    for (int versioned = 0; versioned < 2; versioned++) {
        strided_view v = kind_view(HOST, true);
        strided_dlpack_export_request r = make_request(&v, NO_STREAM, ON(1, 0), NEVER);
        void *out = NULL;
        assert_ok(strided__view_export_dlpack_ex(&v, &r, versioned, NULL, NULL, &out));
        assert_int_equal(strided_buffer_use_count(v.buffer), 2);
        strided_dl_tensor *t;
        if (versioned) {
            strided_dl_managed_tensor_versioned *m = out;
            assert_true(m->flags == STRIDED_DLPACK_FLAG_READ_ONLY);
            t = &m->dl_tensor;
        } else {
            t = &((strided_dl_managed_tensor *)out)->dl_tensor;
        }
        assert_ptr_equal(t->data, backing);
        assert_int_equal(t->device.device_type, STRIDED_DEVICE_CPU);
        assert_i64(t->strides[0], 3);
        if (versioned)
            ((strided_dl_managed_tensor_versioned *)out)->deleter(out);
        else
            ((strided_dl_managed_tensor *)out)->deleter(out);
        assert_int_equal(strided_buffer_use_count(v.buffer), 1);
        strided_view_release(&v);
    }
}

static void test_export_of_pinned_memory_to_the_cpu_names_the_cpu(void **state)
{
    (void)state;
    strided_view v = kind_view(PINNED, false);
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CUDA_HOST);
    strided_dlpack_export_request r = make_request(&v, NO_STREAM, ON(1, 0), NONE);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided__view_export_dlpack_ex(&v, &r, true, NULL, NULL, (void **)&m));
    assert_ptr_equal(m->dl_tensor.data, backing);
    assert_int_equal(m->dl_tensor.device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(m->dl_tensor.device.device_id, 0);
    assert_true(m->flags == 0);
    m->deleter(m);
    strided_view_release(&v);
}

static void test_export_as_copies_with_the_copy_engine(void **state)
{
    (void)state;
    /* The public export runs the library's own copy: the host copy of a
     * reversed, strided view comes out dense. */
    for (int i = 0; i < 64; i++)
        backing[i] = (float)i;
    strided_view v = kind_view(HOST, true), s;
    strided_layout l;
    assert_ok(strided_layout_init(&l, DIMS(2, 3), I64(-6, 2), 4));
    l.slice_offset = 6;
    assert_ok(strided_view_view(&v, &l, NULL, &s));
    strided_dlpack_export_request r = make_request(&s, NO_STREAM, NO_DEVICE, ALWAYS);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_view_export_dlpack_as(&s, &r, true, (void **)&m));
    const float want[6] = {6, 8, 10, 0, 2, 4};
    assert_memory_equal(m->dl_tensor.data, want, sizeof want);
    assert_true(m->flags == STRIDED_DLPACK_FLAG_IS_COPIED);
    m->deleter(m);
    /* Without a copy it is the view's own export. */
    r = make_request(&s, NO_STREAM, NO_DEVICE, NONE);
    assert_ok(strided_view_export_dlpack_as(&s, &r, true, (void **)&m));
    assert_ptr_equal(m->dl_tensor.data, strided_view_ptr(&s));
    m->deleter(m);
    assert_error(strided_view_export_dlpack_as(&s, NULL, true, (void **)&m),
                 STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "request is required");
    strided_view_release(&s);
    strided_view_release(&v);
}

static void test_export_copy_of_host_memory(void **state)
{
    (void)state;
    /* Every other float of backing, the rows reversed: (2,3):(-6,2)+6. */
    for (int i = 0; i < 64; i++)
        backing[i] = (float)i;
    strided_view v = kind_view(HOST, true), s;
    strided_layout l;
    assert_ok(strided_layout_init(&l, DIMS(2, 3), I64(-6, 2), 4));
    l.slice_offset = 6;
    assert_ok(strided_view_view(&v, &l, NULL, &s));
    strided_dlpack_export_request r = make_request(&s, NO_STREAM, NO_DEVICE, ALWAYS);
    copier c = {0, false, NULL};
    for (int versioned = 0; versioned < 2; versioned++) {
        void *out = NULL;
        assert_ok(strided__view_export_dlpack_ex(&s, &r, versioned, copy_engine, &c, &out));
        strided_dl_tensor *t = versioned ? &((strided_dl_managed_tensor_versioned *)out)->dl_tensor
                                         : &((strided_dl_managed_tensor *)out)->dl_tensor;
        if (versioned)
            assert_true(((strided_dl_managed_tensor_versioned *)out)->flags ==
                        STRIDED_DLPACK_FLAG_IS_COPIED);
        /* New memory, dense in C order, aligned as DLPack asks. */
        assert_true(t->data != backing);
        assert_int_equal((uintptr_t)t->data % 256, 0);
        assert_int_equal(t->ndim, 2);
        assert_i64(t->shape[0], 2);
        assert_i64(t->shape[1], 3);
        assert_i64(t->strides[0], 3);
        assert_i64(t->strides[1], 1);
        assert_int_equal(t->device.device_type, STRIDED_DEVICE_CPU);
        assert_true(strided_dtype_equal(t->dtype, f32));
        const float want[6] = {6, 8, 10, 0, 2, 4};
        assert_memory_equal(t->data, want, sizeof want);
        /* The copy is the consumer's: writing it leaves the view alone. */
        ((float *)t->data)[0] = -1;
        assert_true(backing[6] == 6);
        /* It holds nothing of the view's memory. */
        assert_int_equal(strided_buffer_use_count(s.buffer), 2);
        if (versioned)
            ((strided_dl_managed_tensor_versioned *)out)->deleter(out);
        else
            ((strided_dl_managed_tensor *)out)->deleter(out);
    }
    assert_int_equal(c.calls, 2);
    strided_view_release(&s);
    strided_view_release(&v);
}

static void test_export_copy_of_an_empty_view(void **state)
{
    (void)state;
    strided_view v = kind_view(HOST, false), e;
    strided_layout l;
    assert_ok(strided_layout_init(&l, DIMS(0, 3), NULL, 4));
    assert_ok(strided_view_view(&v, &l, NULL, &e));
    strided_dlpack_export_request r = make_request(&e, NO_STREAM, NO_DEVICE, ALWAYS);
    copier c = {0, false, NULL};
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided__view_export_dlpack_ex(&e, &r, true, copy_engine, &c, (void **)&m));
    assert_null(m->dl_tensor.data);
    assert_i64(m->dl_tensor.shape[0], 0);
    m->deleter(m);
    strided_view_release(&e);
    strided_view_release(&v);
}

static void test_export_copy_failure_frees_the_new_memory(void **state)
{
    (void)state;
    strided_view v = kind_view(HOST, false);
    strided_dlpack_export_request r = make_request(&v, NO_STREAM, NO_DEVICE, ALWAYS);
    copier c = {0, true, NULL};
    void *out = (void *)0x5a5a;
    assert_error(strided__view_export_dlpack_ex(&v, &r, true, copy_engine, &c, &out),
                 STRIDED_ERR_CUDA, "copy", "the copy engine failed");
    assert_ptr_equal(out, (void *)0x5a5a);
    assert_non_null(c.seen);
    assert_int_equal(strided_buffer_use_count(c.seen), 1);
    strided_buffer_release(c.seen);
    assert_int_equal(strided_buffer_use_count(v.buffer), 1);
    strided_view_release(&v);
}

static void test_export_ex_refusals(void **state)
{
    (void)state;
    strided_view v = kind_view(HOST, false);
    strided_dlpack_export_request copy = make_request(&v, NO_STREAM, NO_DEVICE, ALWAYS);
    void *out = (void *)0x5a5a;
    assert_error(strided__view_export_dlpack_ex(&v, NULL, true, NULL, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__", "request is required");
    assert_error(strided__view_export_dlpack_ex(&v, &copy, true, NULL, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "__dlpack__",
                 "a copy engine is required for a copy");
    assert_error(strided__view_export_dlpack_ex(&v, &copy, true, copy_engine, NULL, NULL),
                 STRIDED_ERR_INVALID_ARGUMENT, "export_dlpack", "view and out are required");
    assert_error(strided__view_export_dlpack_ex(NULL, &copy, false, copy_engine, NULL, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "export_dlpack_legacy", "view and out are required");
    assert_ptr_equal(out, (void *)0x5a5a);
    assert_int_equal(strided_buffer_use_count(v.buffer), 1);

    /* The view's own refusals come first, with their messages. */
    strided_view bare;
    assert_ok(strided_view_from_buffer(v.buffer, &v.layout, NULL, false, &bare));
    copier c = {0, false, NULL};
    assert_error(strided__view_export_dlpack_ex(&bare, &copy, true, copy_engine, &c, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "export_dlpack",
                 "Cannot export StridedMemoryView via DLPack without dtype information; "
                 "create the view with dtype specified.");
    assert_int_equal(c.calls, 0);
    strided_view_release(&bare);
    strided_view_release(&v);
    assert_error(strided__view_export_dlpack_ex(&v, &copy, true, copy_engine, &c, &out),
                 STRIDED_ERR_INVALID_ARGUMENT, "export_dlpack", "the view has no buffer");
    assert_ptr_equal(out, (void *)0x5a5a);
}

static void test_export_copy_allocation_failures_leave_nothing(void **state)
{
    (void)state;
    strided_view v = kind_view(HOST, false);
    strided_dlpack_export_request r = make_request(&v, NO_STREAM, NO_DEVICE, ALWAYS);
    copier c = {0, false, NULL};
    int failures = 0;
    for (long n = 0;; n++) {
        void *out = (void *)0x5a5a;
        strided__fail_allocation_after(n);
        strided_status status = strided__view_export_dlpack_ex(&v, &r, true, copy_engine, &c, &out);
        strided__fail_allocation_after(-1);
        /* A copy holds nothing of the view's memory. */
        assert_int_equal(strided_buffer_use_count(v.buffer), 1);
        if (status == STRIDED_OK) {
            ((strided_dl_managed_tensor_versioned *)out)->deleter(out);
            break;
        }
        assert_status(status, STRIDED_ERR_OUT_OF_MEMORY);
        assert_ptr_equal(out, (void *)0x5a5a);
        failures++;
    }
    assert_true(failures >= 3); /* the check's export, the memory, the tensor */
    strided_view_release(&v);
}

static void test_export_dl_tensor_borrows_the_view(void **state)
{
    (void)state;
    strided_view v = kind_view(DEVICE1, false);
    strided_dl_tensor t;
    assert_ok(strided_view_export_dl_tensor(&v, &t));
    assert_ptr_equal(t.data, backing);
    assert_int_equal(t.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(t.device.device_id, 1);
    assert_int_equal(t.ndim, 2);
    assert_true(strided_dtype_equal(t.dtype, f32));
    assert_ptr_equal(t.shape, v.layout.shape);
    assert_ptr_equal(t.strides, v.layout.strides);
    assert_i64(t.strides[0], 3);
    assert_true(t.byte_offset == 0);
    assert_int_equal(strided_buffer_use_count(v.buffer), 1);

    /* Pinned memory names no device id; an empty view no data; a 0-d one
     * no shape. */
    strided_view p = kind_view(PINNED, false), e;
    strided_layout l;
    assert_ok(strided_view_export_dl_tensor(&p, &t));
    assert_int_equal(t.device.device_type, STRIDED_DEVICE_CUDA_HOST);
    assert_int_equal(t.device.device_id, 0);
    assert_ok(strided_layout_init(&l, DIMS(3, 0), NULL, 4));
    assert_ok(strided_view_view(&p, &l, NULL, &e));
    assert_ok(strided_view_export_dl_tensor(&e, &t));
    assert_null(t.data);
    strided_view_release(&e);
    assert_ok(strided_layout_init(&l, 0, NULL, NULL, 4));
    assert_ok(strided_view_view(&p, &l, NULL, &e));
    assert_ok(strided_view_export_dl_tensor(&e, &t));
    assert_int_equal(t.ndim, 0);
    assert_null(t.shape);
    assert_null(t.strides);
    assert_ptr_equal(t.data, backing);
    strided_view_release(&e);
    strided_view_release(&p);

    /* The refusals of an export, the output untouched. */
    strided_view bare;
    assert_ok(strided_view_from_buffer(v.buffer, &v.layout, NULL, false, &bare));
    fill_sentinel(&t, sizeof t);
    assert_error(strided_view_export_dl_tensor(&bare, &t), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack", "without dtype information");
    assert_error(strided_view_export_dl_tensor(NULL, &t), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack", "view and out are required");
    assert_error(strided_view_export_dl_tensor(&v, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack", "view and out are required");
    strided_view_release(&bare);
    strided_view_release(&v);
    assert_error(strided_view_export_dl_tensor(&v, &t), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack", "the view has no buffer");
    assert_untouched(&t, sizeof t);
}

static strided_dl_tensor prototype(int32_t type, int32_t id, int ndim, int64_t *shape)
{
    strided_dl_tensor p;
    memset(&p, 0, sizeof p);
    p.device = (strided_device){type, id};
    p.ndim = ndim;
    p.dtype = f32;
    p.shape = shape;
    /* Not read: garbage where it may be. */
    p.data = (void *)0x5a5a;
    p.strides = (int64_t *)0x5a5a;
    p.byte_offset = 12345;
    return p;
}

static void test_tensor_alloc_on_the_host(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 4};
    strided_dl_tensor p = prototype(STRIDED_DEVICE_CPU, 0, 3, shape);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_dlpack_tensor_alloc(&p, &m));
    assert_int_equal(m->version.major, 1);
    assert_int_equal(m->version.minor, 3);
    assert_true(m->flags == 0);
    assert_non_null(m->deleter);
    strided_dl_tensor *t = &m->dl_tensor;
    assert_int_equal(t->device.device_type, STRIDED_DEVICE_CPU);
    assert_int_equal(t->ndim, 3);
    assert_true(strided_dtype_equal(t->dtype, f32));
    assert_true(t->shape != shape);
    assert_i64(t->shape[2], 4);
    assert_i64(t->strides[0], 12);
    assert_i64(t->strides[1], 4);
    assert_i64(t->strides[2], 1);
    assert_true(t->byte_offset == 0);
    assert_int_equal((uintptr_t)t->data % 256, 0);
    memset(t->data, 1, 24 * sizeof(float)); /* all of it is ours */
    m->deleter(m);

    /* A 0-d tensor has one element; an empty one no data. */
    p = prototype(STRIDED_DEVICE_CPU, 0, 0, NULL);
    assert_ok(strided_dlpack_tensor_alloc(&p, &m));
    assert_null(m->dl_tensor.shape);
    assert_non_null(m->dl_tensor.data);
    *(float *)m->dl_tensor.data = 1;
    m->deleter(m);
    shape[1] = 0;
    p = prototype(STRIDED_DEVICE_CPU, 0, 3, shape);
    assert_ok(strided_dlpack_tensor_alloc(&p, &m));
    assert_null(m->dl_tensor.data);
    m->deleter(m);
}

typedef struct {
    int line;
    int32_t type, id;
    int ndim;
    const int64_t *shape;
    strided_dtype dtype;
    strided_status status;
    const char *text;
} alloc_case;

static void test_tensor_alloc_refusals(void **state)
{
    (void)state;
    const alloc_case cases[] = {
        CASE(1, 0, -1, NULL, {2, 32, 1}, STRIDED_ERR_INVALID_ARGUMENT, "ndim"),
        CASE(1, 0, 65, I64(1), {2, 32, 1}, STRIDED_ERR_INVALID_ARGUMENT, "ndim"),
        CASE(1, 0, 1, NULL, {2, 32, 1}, STRIDED_ERR_INVALID_ARGUMENT, "shape"),
        CASE(1, 0, 2, I64(3, -1), {2, 32, 1}, STRIDED_ERR_INVALID_ARGUMENT, "xtent"),
        CASE(1, 0, 1, I64(3), {2, 32, 2}, STRIDED_ERR_UNSUPPORTED, "lanes"),
        CASE(1, 0, 1, I64(3), {17, 8, 1}, STRIDED_ERR_UNSUPPORTED, NULL),
        CASE(1, 0, 2, I64(INT64_C(1) << 62, 8), {2, 32, 1}, STRIDED_ERR_OVERFLOW, NULL),
        CASE(4, 0, 1, I64(3), {2, 32, 1}, STRIDED_ERR_UNSUPPORTED,
             "device type 4 is not supported (only CPU, CUDA, CUDA host and CUDA managed)"),
        CASE(2, -1, 1, I64(3), {2, 32, 1}, STRIDED_ERR_INVALID_ARGUMENT,
             "prototype->device.device_id is -1; it must not be negative"),
        CASE(1, 1, 1, I64(3), {2, 32, 1}, STRIDED_ERR_INVALID_ARGUMENT,
             "prototype->device.device_id is 1; a CPU device must have id 0"),
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const alloc_case *c = &cases[i];
        strided_dl_tensor p = prototype(c->type, c->id, c->ndim, (int64_t *)c->shape);
        p.dtype = c->dtype;
        strided_dl_managed_tensor_versioned *m = (void *)0x5a5a;
        check_error_(strided_dlpack_tensor_alloc(&p, &m), c->status, "tensor_alloc", c->text,
                     AT(c));
        if (m != (void *)0x5a5a)
            fail_at(AT(c), "a refused allocation wrote out\n");
    }
    strided_dl_tensor p = prototype(1, 0, 0, NULL);
    strided_dl_managed_tensor_versioned *m;
    assert_error(strided_dlpack_tensor_alloc(NULL, &m), STRIDED_ERR_INVALID_ARGUMENT,
                 "tensor_alloc", "prototype and out are required");
    assert_error(strided_dlpack_tensor_alloc(&p, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "tensor_alloc", "prototype and out are required");
}

/* What SetError was told. */
typedef struct {
    int calls;
    char kind[32];
    char message[256];
} set_error_log;

static void record_error(void *error_ctx, const char *kind, const char *message)
{
    set_error_log *log = error_ctx;
    log->calls++;
    snprintf(log->kind, sizeof log->kind, "%s", kind);
    snprintf(log->message, sizeof log->message, "%s", message);
}

static void test_exchange_alloc_reports_through_set_error(void **state)
{
    (void)state;
    int64_t shape[1] = {5};
    strided_dl_tensor p = prototype(STRIDED_DEVICE_CPU, 0, 1, shape);
    strided_dl_managed_tensor_versioned *m = NULL;
    set_error_log log = {0, "", ""};
    assert_int_equal(strided_dlpack_exchange_alloc(&p, &m, &log, record_error), 0);
    assert_int_equal(log.calls, 0);
    m->deleter(m);

    /* Each failure: -1, out untouched, one call with the kind and reason. */
    p.dtype.lanes = 4;
    m = (void *)0x5a5a;
    assert_int_equal(strided_dlpack_exchange_alloc(&p, &m, &log, record_error), -1);
    assert_ptr_equal(m, (void *)0x5a5a);
    assert_int_equal(log.calls, 1);
    assert_string_equal(log.kind, "BufferError");
    assert_string_equal(log.message, strided_last_error_reason());
    assert_non_null(strstr(log.message, "lanes"));

    p.dtype.lanes = 1;
    strided__fail_allocation_after(0);
    assert_int_equal(strided_dlpack_exchange_alloc(&p, &m, &log, record_error), -1);
    strided__fail_allocation_after(-1);
    assert_int_equal(log.calls, 2);
    assert_string_equal(log.kind, "MemoryError");

    assert_int_equal(strided_dlpack_exchange_alloc(NULL, &m, &log, record_error), -1);
    assert_int_equal(log.calls, 3);
    assert_string_equal(log.kind, "BufferError");
    assert_string_equal(log.message, "prototype and out are required");

    /* Without set_error the failure is only the -1. */
    assert_int_equal(strided_dlpack_exchange_alloc(NULL, &m, NULL, NULL), -1);
    assert_ptr_equal(m, (void *)0x5a5a);
}

static void test_host_producer_without_a_stream_gets_a_hint(void **state)
{
    (void)state;
    strided_dlpack_request r;
    assert_error(strided_dlpack_request_make(STRIDED_DEVICE_CPU, 0, false, 0, &r),
                 STRIDED_ERR_UNSUPPORTED, "from_dlpack", NULL);
    assert_string_equal(strided_last_error_reason(),
                        "stream=None is ambiguous with view(); for host memory pass "
                        "stream_ptr=-1");
    /* cuda.core's sentence stays as it is for CUDA. */
    assert_error(strided_dlpack_request_make(STRIDED_DEVICE_CUDA, 0, false, 0, &r),
                 STRIDED_ERR_UNSUPPORTED, "from_dlpack", NULL);
    assert_string_equal(strided_last_error_reason(), "stream=None is ambiguous with view()");
}

#if defined(DRIVER_NONE)

static void test_device_memory_needs_a_driver(void **state)
{
    (void)state;
    int64_t shape[1] = {5};
    static const int32_t types[] = {STRIDED_DEVICE_CUDA, STRIDED_DEVICE_CUDA_HOST,
                                    STRIDED_DEVICE_CUDA_MANAGED};
    for (size_t i = 0; i < ARRAY_LEN(types); i++) {
        strided_dl_tensor p = prototype(types[i], 0, 1, shape);
        strided_dl_managed_tensor_versioned *m = (void *)0x5a5a;
        set_error_log log = {0, "", ""};
        assert_int_equal(strided_dlpack_exchange_alloc(&p, &m, &log, record_error), -1);
        assert_status(strided_dlpack_tensor_alloc(&p, &m), STRIDED_ERR_NO_CUDA_DRIVER);
        assert_ptr_equal(m, (void *)0x5a5a);
        assert_string_equal(log.kind, "RuntimeError");
    }
    /* A copy of device memory to the host cannot run either; nothing is
     * left of it. */
    strided_view v = kind_view(DEVICE1, false);
    strided_dlpack_export_request r = make_request(&v, NO_STREAM, ON(1, 0), NONE);
    copier c = {0, false, NULL};
    void *out = (void *)0x5a5a;
    assert_status(strided__view_export_dlpack_ex(&v, &r, true, copy_engine, &c, &out),
                  STRIDED_ERR_NO_CUDA_DRIVER);
    assert_int_equal(c.calls, 1);
    assert_ptr_equal(out, (void *)0x5a5a);
    assert_int_equal(strided_buffer_use_count(v.buffer), 1);
    strided_view_release(&v);
}

#else

static fake_cuda_move_bytes_fn move_bytes;

static void fresh(void)
{
    fake.reset(2, 0, 1);
    move_bytes(1);
}

typedef struct {
    int line;
    int32_t type, id;
    const char *entry; /* the allocation's driver call */
    const char *free_entry;
    int32_t tensor_id; /* the tensor's device id */
} kind_case;

static void test_tensor_alloc_of_each_memory_kind(void **state)
{
    (void)state;
    static const kind_case cases[] = {
        CASE(STRIDED_DEVICE_CUDA, 1, "cuMemAllocFromPoolAsync", "cuMemFreeAsync", 1),
        CASE(STRIDED_DEVICE_CUDA_HOST, 0, "cuMemHostAlloc", "cuMemFreeHost", 0),
        CASE(STRIDED_DEVICE_CUDA_HOST, 1, "cuMemHostAlloc", "cuMemFreeHost", 0),
        CASE(STRIDED_DEVICE_CUDA_MANAGED, 1, "cuMemAllocManaged", "cuMemFree", 0),
    };
    int64_t shape[2] = {4, 8};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const kind_case *c = &cases[i];
        fresh();
        strided_dl_tensor p = prototype(c->type, c->id, 2, shape);
        strided_dl_managed_tensor_versioned *m = NULL;
        check_status_(strided_dlpack_tensor_alloc(&p, &m), STRIDED_OK, AT(c));
        if (fake.calls(c->entry) != 1 || fake.live_bytes() < 128)
            fail_at(AT(c), "%s called %ld times, %ld bytes live\n", c->entry, fake.calls(c->entry),
                    fake.live_bytes());
        if (m->dl_tensor.device.device_type != c->type ||
            m->dl_tensor.device.device_id != c->tensor_id)
            fail_at(AT(c), "device (%d, %d)\n", (int)m->dl_tensor.device.device_type,
                    (int)m->dl_tensor.device.device_id);
        if (strcmp(c->entry, "cuMemAllocFromPoolAsync") == 0 &&
            fake.last_stream("cuMemAllocFromPoolAsync") != NULL)
            fail_at(AT(c), "allocated on a stream other than the legacy default one\n");
        m->deleter(m);
        if (fake.calls(c->free_entry) != 1 || fake.live_bytes() != 0)
            fail_at(AT(c), "%s called %ld times, %ld bytes live\n", c->free_entry,
                    fake.calls(c->free_entry), fake.live_bytes());
    }

    /* A device that does not exist is the prototype's fault. */
    fresh();
    strided_dl_tensor p = prototype(STRIDED_DEVICE_CUDA, 5, 2, shape);
    strided_dl_managed_tensor_versioned *m = (void *)0x5a5a;
    set_error_log log = {0, "", ""};
    assert_int_equal(strided_dlpack_exchange_alloc(&p, &m, &log, record_error), -1);
    assert_string_equal(log.kind, "BufferError");
    assert_ptr_equal(m, (void *)0x5a5a);
    /* A failing driver call is a RuntimeError. */
    p.device.device_id = 0;
    fake.fail_next("cuMemAllocFromPoolAsync", 2);
    assert_int_equal(strided_dlpack_exchange_alloc(&p, &m, &log, record_error), -1);
    assert_string_equal(log.kind, "RuntimeError");
    assert_non_null(strstr(log.message, "cuMemAllocFromPoolAsync"));
    assert_int_equal(fake.live_bytes(), 0);
}

/* A view of new device memory of device 0, float32 of shape (rows, 4),
 * holding 0, 1, 2, ... */
static strided_view device_view(int64_t rows)
{
    int64_t shape[2] = {rows, 4};
    strided_dl_tensor p = prototype(STRIDED_DEVICE_CUDA, 0, 2, shape);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided_dlpack_tensor_alloc(&p, &m));
    for (int64_t i = 0; i < rows * 4; i++)
        ((float *)m->dl_tensor.data)[i] = (float)i;
    strided_view v;
    assert_ok(strided_view_import_dlpack(m, true, &v));
    return v;
}

static void test_device_memory_copied_to_the_host(void **state)
{
    (void)state;
    fresh();
    strided_view v = device_view(3);
    assert_int_equal(v.device.device_type, STRIDED_DEVICE_CUDA);
    copier c = {0, false, NULL};
    strided_dlpack_export_request r = make_request(&v, STREAM(0x5678), ON(1, 0), NONE);
    strided_dl_managed_tensor_versioned *m = NULL;
    assert_ok(strided__view_export_dlpack_ex(&v, &r, true, copy_engine, &c, (void **)&m));
    assert_int_equal(m->dl_tensor.device.device_type, STRIDED_DEVICE_CPU);
    assert_true(m->flags == STRIDED_DLPACK_FLAG_IS_COPIED);
    assert_true(m->dl_tensor.data != strided_view_ptr(&v));
    for (int i = 0; i < 12; i++)
        assert_true(((float *)m->dl_tensor.data)[i] == (float)i);
    /* Queued on the consumer's stream, and waited for. */
    assert_ptr_equal(fake.last_stream("cuMemcpyAsync"), (void *)0x5678);
    assert_ptr_equal(fake.last_stream("cuStreamSynchronize"), (void *)0x5678);
    m->deleter(m);
    strided_view_release(&v);
    assert_int_equal(fake.calls("cuMemFreeAsync"), 1);
}

/* 8 MiB: a contiguous copy that large is one cuMemcpyAsync, whose bytes the
 * fake moves (it runs no kernel). */
#define LARGE_ROWS (INT64_C(1) << 19)

static void test_device_memory_copied_on_the_device(void **state)
{
    (void)state;
    fresh();
    strided_view v = device_view(LARGE_ROWS);
    copier c = {0, false, NULL};
    strided_dlpack_export_request r = make_request(&v, STREAM(0x5678), NO_DEVICE, ALWAYS);
    long syncs = fake.calls("cuStreamSynchronize");
    strided_dl_managed_tensor_versioned *m = NULL;
    strided_status status = strided__view_export_dlpack_ex(&v, &r, true, copy_engine, &c,
                                                           (void **)&m);
#if defined(STRIDED_HAVE_KERNELS)
    assert_ok(status);
    assert_int_equal(m->dl_tensor.device.device_type, STRIDED_DEVICE_CUDA);
    assert_int_equal(m->dl_tensor.device.device_id, 0);
    assert_true(m->flags == STRIDED_DLPACK_FLAG_IS_COPIED);
    /* New memory from the pool on the consumer's stream, copied there,
     * not waited for. */
    assert_int_equal(fake.calls("cuMemAllocFromPoolAsync"), 2);
    assert_ptr_equal(fake.last_stream("cuMemAllocFromPoolAsync"), (void *)0x5678);
    assert_ptr_equal(fake.last_stream("cuMemcpyAsync"), (void *)0x5678);
    assert_int_equal(fake.calls("cuStreamSynchronize"), syncs);
    const float *copied = m->dl_tensor.data;
    assert_true(copied != strided_view_ptr(&v));
    assert_true(copied[0] == 0 && copied[5] == 5 &&
                copied[LARGE_ROWS * 4 - 1] == (float)(LARGE_ROWS * 4 - 1));
    /* Freed on that stream too. */
    m->deleter(m);
    assert_ptr_equal(fake.last_stream("cuMemFreeAsync"), (void *)0x5678);
#else
    assert_status(status, STRIDED_ERR_UNSUPPORTED);
    (void)syncs;
#endif
    strided_view_release(&v);
    assert_int_equal(fake.live_bytes(), 0);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_request_rules),
        cmocka_unit_test(test_export_request_refusals),
        cmocka_unit_test(test_export_without_copy_is_the_plain_export),
        cmocka_unit_test(test_export_of_pinned_memory_to_the_cpu_names_the_cpu),
        cmocka_unit_test(test_export_copy_of_host_memory),
        cmocka_unit_test(test_export_as_copies_with_the_copy_engine),
        cmocka_unit_test(test_export_copy_of_an_empty_view),
        cmocka_unit_test(test_export_copy_failure_frees_the_new_memory),
        cmocka_unit_test(test_export_ex_refusals),
        cmocka_unit_test(test_export_copy_allocation_failures_leave_nothing),
        cmocka_unit_test(test_export_dl_tensor_borrows_the_view),
        cmocka_unit_test(test_tensor_alloc_on_the_host),
        cmocka_unit_test(test_tensor_alloc_refusals),
        cmocka_unit_test(test_exchange_alloc_reports_through_set_error),
        cmocka_unit_test(test_host_producer_without_a_stream_gets_a_hint),
#if defined(DRIVER_NONE)
        cmocka_unit_test(test_device_memory_needs_a_driver),
#else
        cmocka_unit_test(test_tensor_alloc_of_each_memory_kind),
        cmocka_unit_test(test_device_memory_copied_to_the_host),
        cmocka_unit_test(test_device_memory_copied_on_the_device),
#endif
    };
#if defined(DRIVER_NONE)
    use_no_driver();
#else
    use_fake_driver(FAKE_CUDA_PATH, 2);
    void *lib = dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cannot open the fake CUDA driver: %s\n", dlerror());
        return 1;
    }
    fake_symbol_(lib, "fake_cuda_move_bytes", &move_bytes);
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
