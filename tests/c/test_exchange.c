/*
 * test_exchange.c: the consumer's side of the exchange protocols, the
 * rules a binding used to apply itself: a consumer's stream argument
 * (strided_consumer_stream_parse), the DLPack request made from what
 * __dlpack_device__ named (strided_dlpack_request_make), the import that
 * checks the tensor is where the producer said
 * (strided_view_import_dlpack_checked), the device a view reports
 * (home_device, device_accessible) and the itemsize rule for element types
 * without a DLPack type (strided_view_check_itemsize). No driver is loaded
 * (DRIVER_NONE): CPU and CUDA tensors are classified without one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>

#include "test_cuda.h"
#include "test_util.h"

#include "strided.h"

typedef struct {
    int line;
    bool negative;
    uint64_t magnitude;
    bool ok;
    bool sync;
    uintptr_t stream;
} stream_case;

static void test_consumer_stream_values(void **state)
{
    (void)state;
    static const stream_case cases[] = {
        CASE(true, 1, true, false, 0), /* -1: order nothing */
        CASE(false, 0, true, true, 0), /* 0: the legacy default stream */
        CASE(true, 0, true, true, 0),  /* -0 is 0 */
        CASE(false, 1, true, true, 1), /* the legacy default stream */
        CASE(false, 2, true, true, 2), /* the per-thread default stream */
        CASE(false, 0x7f00dead0000, true, true, 0x7f00dead0000),
        CASE(false, UINT64_MAX, true, true, (uintptr_t)UINT64_MAX),
        CASE(true, 2, false, false, 0),
        CASE(true, UINT64_MAX, false, false, 0),
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const stream_case *c = &cases[i];
        strided_consumer_stream s = {true, (void *)0x5a5a};
        strided_status status = strided_consumer_stream_parse(c->negative, c->magnitude, &s);
        if (!c->ok) {
            check_error_(status, STRIDED_ERR_INVALID_ARGUMENT, "stream_ptr",
                         "stream_ptr must be -1 (no synchronisation) or a CUDA stream "
                         "handle, got -",
                         AT(c));
            if (!s.sync || s.stream != (void *)0x5a5a)
                fail_at(AT(c), "a refused stream changed the output\n");
            continue;
        }
        check_status_(status, STRIDED_OK, AT(c));
        if (s.sync != c->sync || (c->sync && (uintptr_t)s.stream != c->stream))
            fail_at(AT(c), "sync %d stream %p, expected %d %p\n", s.sync, s.stream, c->sync,
                    (void *)c->stream);
    }
}

static void test_consumer_stream_message_names_the_value(void **state)
{
    (void)state;
    strided_consumer_stream s;
    assert_error(strided_consumer_stream_parse(true, 5, &s), STRIDED_ERR_INVALID_ARGUMENT,
                 "stream_ptr", "got -5");
    assert_error(strided_consumer_stream_parse(false, 5, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "stream_ptr", "out is required");
}

typedef struct {
    int line;
    int64_t type, id;
    bool given;
    int64_t stream;
    strided_status status;
    const char *text; /* in the message, when refused */
    bool pass;        /* pass_stream, when accepted */
} request_case;

static void test_dlpack_request_rules(void **state)
{
    (void)state;
    static const request_case cases[] = {
        /* CPU: a stream is required; -1 and 0 are not passed on. */
        CASE(1, 0, true, -1, STRIDED_OK, NULL, false),
        CASE(1, 0, true, 0, STRIDED_OK, NULL, false),
        CASE(1, 0, true, 5, STRIDED_OK, NULL, true),
        CASE(1, 0, false, 0, STRIDED_ERR_UNSUPPORTED, "stream=None is ambiguous with view()",
             false),
        CASE(1, 1, true, -1, STRIDED_ERR_PROTOCOL,
             "__dlpack_device__() returned device id 1 for device type 1", false),
        /* CUDA: a stream is required; 0 is not passed on, -1 is. */
        CASE(2, 0, true, -1, STRIDED_OK, NULL, true),
        CASE(2, 3, true, 0, STRIDED_OK, NULL, false),
        CASE(2, 3, true, 7, STRIDED_OK, NULL, true),
        CASE(2, 3, true, INT64_MAX, STRIDED_OK, NULL, true),
        CASE(2, 0, false, 0, STRIDED_ERR_UNSUPPORTED, "stream=None is ambiguous", false),
        CASE(2, -1, true, 1, STRIDED_ERR_PROTOCOL, "a CUDA device a non-negative id", false),
        CASE(2, (int64_t)INT32_MAX + 1, true, 1, STRIDED_ERR_PROTOCOL, "device id 2147483648",
             false),
        /* CUDA host and managed memory: no stream needed. */
        CASE(3, 0, false, 0, STRIDED_OK, NULL, false),
        CASE(3, 0, true, 9, STRIDED_OK, NULL, true),
        CASE(13, 0, false, 0, STRIDED_OK, NULL, false),
        CASE(13, 0, true, -1, STRIDED_OK, NULL, true),
        /* Other devices. */
        CASE(4, 0, true, -1, STRIDED_ERR_UNSUPPORTED, "device not supported", false),
        CASE(10, 0, true, 1, STRIDED_ERR_UNSUPPORTED, "device not supported", false),
        CASE(INT64_MAX, 0, true, 1, STRIDED_ERR_UNSUPPORTED, "device not supported", false),
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const request_case *c = &cases[i];
        strided_dlpack_request r;
        memset(&r, SENTINEL, sizeof r);
        strided_status status = strided_dlpack_request_make(c->type, c->id, c->given, c->stream,
                                                            &r);
        if (c->status != STRIDED_OK) {
            check_error_(status, c->status, "from_dlpack", c->text, AT(c));
            check_untouched_(&r, sizeof r, "the request", AT(c));
            continue;
        }
        check_status_(status, STRIDED_OK, AT(c));
        if (r.pass_stream != c->pass || r.device.device_type != c->type ||
            r.device.device_id != c->id)
            fail_at(AT(c), "pass_stream %d device (%d, %d), expected %d (%lld, %lld)\n",
                    r.pass_stream, (int)r.device.device_type, (int)r.device.device_id, c->pass,
                    (long long)c->type, (long long)c->id);
    }
    assert_error(strided_dlpack_request_make(1, 0, true, -1, NULL), STRIDED_ERR_INVALID_ARGUMENT,
                 "from_dlpack", "out is required");
}

/* A legacy managed tensor of 6 float32 on device, whose deleter counts. */
typedef struct {
    strided_dl_managed_tensor m;
    int64_t shape[1];
    float data[6];
    int deleted;
} tensor;

static void count_delete(strided_dl_managed_tensor *self)
{
    ((tensor *)self->manager_ctx)->deleted++;
}

static tensor *tensor_on(int32_t type, int32_t id)
{
    tensor *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->shape[0] = 6;
    t->m.dl_tensor.data = t->data;
    t->m.dl_tensor.device = (strided_device){type, id};
    t->m.dl_tensor.ndim = 1;
    t->m.dl_tensor.dtype = (strided_dtype){STRIDED_DTYPE_FLOAT, 32, 1};
    t->m.dl_tensor.shape = t->shape;
    t->m.manager_ctx = t;
    t->m.deleter = count_delete;
    return t;
}

static void test_checked_import_refuses_a_tensor_elsewhere(void **state)
{
    (void)state;
    strided_dlpack_request cuda1 = {{STRIDED_DEVICE_CUDA, 1}, true};
    strided_dlpack_request cpu = {{STRIDED_DEVICE_CPU, 0}, false};
    tensor *t = tensor_on(STRIDED_DEVICE_CPU, 0);
    strided_view v;
    fill_sentinel(&v, sizeof v);
    assert_error(strided_view_import_dlpack_checked(&t->m, false, &cuda1, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_dlpack",
                 "__dlpack_device__() returned (2, 1) but the tensor's dl_tensor.device is "
                 "(1, 0)");
    assert_int_equal(t->deleted, 1);
    assert_untouched(&v, sizeof v);
    free(t);

    /* CUDA: the ids must agree too. */
    t = tensor_on(STRIDED_DEVICE_CUDA, 0);
    assert_error(strided_view_import_dlpack_checked(&t->m, false, &cuda1, &v),
                 STRIDED_ERR_INVALID_ARGUMENT, "import_dlpack", "is (2, 0)");
    assert_int_equal(t->deleted, 1);
    free(t);

    /* Where the producer said: taken, deleted when the view goes. */
    t = tensor_on(STRIDED_DEVICE_CPU, 0);
    assert_ok(strided_view_import_dlpack_checked(&t->m, false, &cpu, &v));
    assert_int_equal(t->deleted, 0);
    strided_view_release(&v);
    assert_int_equal(t->deleted, 1);
    free(t);

    /* No request: nothing to check. */
    t = tensor_on(STRIDED_DEVICE_CUDA, 5);
    assert_ok(strided_view_import_dlpack_checked(&t->m, false, NULL, &v));
    strided_view_release(&v);
    assert_int_equal(t->deleted, 1);
    free(t);
}

static void test_imports_report_the_tensor_device(void **state)
{
    (void)state;
    tensor *t = tensor_on(STRIDED_DEVICE_CPU, 0);
    strided_view v, d;
    assert_ok(strided_view_import_dlpack(&t->m, false, &v));
    assert_int_equal(v.home_device, -1);
    assert_false(v.device_accessible);
    strided_view_release(&v);
    free(t);

    t = tensor_on(STRIDED_DEVICE_CUDA, 3);
    assert_ok(strided_view_import_dlpack(&t->m, false, &v));
    assert_int_equal(v.home_device, 3);
    assert_true(v.device_accessible);
    /* A view of the same memory reports the same. */
    assert_ok(strided_view_view(&v, NULL, NULL, &d));
    assert_int_equal(d.home_device, 3);
    assert_true(d.device_accessible);
    strided_view_release(&d);
    strided_view_release(&v);
    free(t);
}

static void test_views_of_host_buffers_report_no_device(void **state)
{
    (void)state;
    strided_buffer *b = NULL;
    static float host[8];
    strided_layout l;
    strided_view v;
    assert_ok(strided_buffer_wrap(host, sizeof host, NULL, NULL, &b));
    assert_ok(strided_layout_init(&l, DIMS(8), NULL, 4));
    assert_ok(strided_view_from_buffer(b, &l, NULL, false, &v));
    assert_int_equal(v.home_device, -1);
    assert_false(v.device_accessible);
    strided_view_release(&v);

    strided_device cpu = {STRIDED_DEVICE_CPU, 0};
    assert_ok(strided_view_wrap(host, &l, NULL, false, &cpu, NULL, NULL, &v));
    assert_int_equal(v.home_device, -1);
    assert_false(v.device_accessible);
    strided_view_release(&v);
    strided_buffer_release(b);
}

static void test_check_itemsize(void **state)
{
    (void)state;
    strided_layout l;
    assert_ok(strided_layout_init(&l, DIMS(4, 2), NULL, 4));
    assert_ok(strided_view_check_itemsize(&l, 4));
    assert_error(strided_view_check_itemsize(&l, 3), STRIDED_ERR_INVALID_ARGUMENT, "view",
                 "The dtype's itemsize (3) does not match the layout's itemsize (4).");
    assert_error(strided_view_check_itemsize(NULL, 4), STRIDED_ERR_INVALID_ARGUMENT, "view",
                 "layout is required");
}

int main(void)
{
    use_no_driver();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_consumer_stream_values),
        cmocka_unit_test(test_consumer_stream_message_names_the_value),
        cmocka_unit_test(test_dlpack_request_rules),
        cmocka_unit_test(test_checked_import_refuses_a_tensor_elsewhere),
        cmocka_unit_test(test_imports_report_the_tensor_device),
        cmocka_unit_test(test_views_of_host_buffers_report_no_device),
        cmocka_unit_test(test_check_itemsize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
