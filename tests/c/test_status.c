/*
 * Tests of strided/status.h: status names and texts, and the calling thread's
 * error message.
 */
#include "test_util.h"

#include <pthread.h>

static void test_status_values_are_the_abi(void **state)
{
    (void)state;
    assert_int_equal(STRIDED_OK, 0);
    assert_int_equal(STRIDED_ERR_INVALID_ARGUMENT, 1);
    assert_int_equal(STRIDED_ERR_OVERFLOW, 2);
    assert_int_equal(STRIDED_ERR_OUT_OF_MEMORY, 3);
    assert_int_equal(STRIDED_ERR_UNSUPPORTED, 4);
    assert_int_equal(STRIDED_ERR_INTERNAL, 5);
    assert_int_equal(STRIDED_ERR_NO_CUDA_DRIVER, 6);
    assert_int_equal(STRIDED_ERR_CUDA, 7);
    assert_int_equal(STRIDED_ERR_PROTOCOL, 8);
}

static void test_status_name_of_each_code(void **state)
{
    (void)state;
    assert_string_equal(strided_status_name(STRIDED_OK), "STRIDED_OK");
    assert_string_equal(strided_status_name(STRIDED_ERR_INVALID_ARGUMENT),
                        "STRIDED_ERR_INVALID_ARGUMENT");
    assert_string_equal(strided_status_name(STRIDED_ERR_OVERFLOW), "STRIDED_ERR_OVERFLOW");
    assert_string_equal(strided_status_name(STRIDED_ERR_OUT_OF_MEMORY),
                        "STRIDED_ERR_OUT_OF_MEMORY");
    assert_string_equal(strided_status_name(STRIDED_ERR_UNSUPPORTED), "STRIDED_ERR_UNSUPPORTED");
    assert_string_equal(strided_status_name(STRIDED_ERR_INTERNAL), "STRIDED_ERR_INTERNAL");
    assert_string_equal(strided_status_name(STRIDED_ERR_NO_CUDA_DRIVER),
                        "STRIDED_ERR_NO_CUDA_DRIVER");
    assert_string_equal(strided_status_name(STRIDED_ERR_CUDA), "STRIDED_ERR_CUDA");
    assert_string_equal(strided_status_name(STRIDED_ERR_PROTOCOL), "STRIDED_ERR_PROTOCOL");
}

static void test_status_name_of_unknown_value(void **state)
{
    (void)state;
    assert_string_equal(strided_status_name((strided_status)9), "STRIDED_UNKNOWN");
    assert_string_equal(strided_status_name((strided_status)-1), "STRIDED_UNKNOWN");
    assert_string_equal(strided_status_name((strided_status)1000000), "STRIDED_UNKNOWN");
}

static void test_status_text_of_each_code(void **state)
{
    (void)state;
    assert_string_equal(strided_status_text(STRIDED_OK), "success");
    assert_string_equal(strided_status_text(STRIDED_ERR_INVALID_ARGUMENT), "invalid argument");
    assert_string_equal(strided_status_text(STRIDED_ERR_OVERFLOW), "integer overflow");
    assert_string_equal(strided_status_text(STRIDED_ERR_OUT_OF_MEMORY), "out of memory");
    assert_string_equal(strided_status_text(STRIDED_ERR_UNSUPPORTED), "unsupported");
    assert_string_equal(strided_status_text(STRIDED_ERR_INTERNAL), "internal error");
    assert_string_equal(strided_status_text(STRIDED_ERR_NO_CUDA_DRIVER), "no CUDA driver");
    assert_string_equal(strided_status_text(STRIDED_ERR_CUDA), "CUDA driver error");
    assert_string_equal(strided_status_text(STRIDED_ERR_PROTOCOL), "exchange protocol violated");
}

static void test_status_text_of_unknown_value_is_not_null(void **state)
{
    (void)state;
    assert_non_null(strided_status_text((strided_status)9));
    assert_non_null(strided_status_text((strided_status)-1));
    assert_non_null(strided_status_text((strided_status)1000000));
}

/* The message of a fresh thread, before any failure, is "" in both forms,
 * never NULL. */
struct fresh {
    bool null_error, null_reason;
    size_t len_error, len_reason;
};

static void *read_fresh_messages(void *arg)
{
    struct fresh *f = arg;
    const char *e = strided_last_error(), *r = strided_last_error_reason();

    f->null_error = e == NULL;
    f->null_reason = r == NULL;
    f->len_error = e ? strlen(e) : 0;
    f->len_reason = r ? strlen(r) : 0;
    return NULL;
}

static void test_last_error_is_empty_before_any_failure(void **state)
{
    pthread_t t;
    struct fresh f = {true, true, 99, 99};

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, read_fresh_messages, &f), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_false(f.null_error);
    assert_false(f.null_reason);
    assert_int_equal(f.len_error, 0);
    assert_int_equal(f.len_reason, 0);
}

static void test_last_error_names_the_operation(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4), out;

    (void)state;
    assert_status(strided_layout_reshape(&l, DIMS(5, 5), &out), STRIDED_ERR_INVALID_ARGUMENT);
    assert_true(strncmp(strided_last_error(), "reshape: ", 9) == 0);
    assert_non_null(strstr(strided_last_error(),
                           "The original volume 24 and the new volume 25 must "
                           "be equal."));
}

static void test_last_error_reason_is_the_text_after_the_operation(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4), out;

    (void)state;
    assert_status(strided_layout_reshape(&l, DIMS(5, 5), &out), STRIDED_ERR_INVALID_ARGUMENT);
    assert_string_equal(strided_last_error() + strlen("reshape: "), strided_last_error_reason());
    assert_non_null(strstr(strided_last_error_reason(),
                           "The original volume 24 and the new volume 25 must "
                           "be equal."));
}

static void test_last_error_of_permute(void **state)
{
    strided_layout l = mk_c(DIMS(2, 5, 3), 4), out;

    (void)state;
    assert_status(strided_layout_permute(&l, AXES(1, 0, 1), &out), STRIDED_ERR_INVALID_ARGUMENT);
    assert_true(strncmp(strided_last_error(), "permute: ", 9) == 0);
    assert_string_equal(strided_last_error() + strlen("permute: "), strided_last_error_reason());
    assert_non_null(strstr(strided_last_error_reason(),
                           "Invalid permutation: axis 1 appears multiple "
                           "times."));
}

static void test_last_error_is_replaced_by_the_next_failure(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4), out;

    (void)state;
    assert_status(strided_layout_reshape(&l, DIMS(5, 5), &out), STRIDED_ERR_INVALID_ARGUMENT);
    assert_status(strided_layout_permute(&l, AXES(0), &out), STRIDED_ERR_INVALID_ARGUMENT);
    assert_true(strncmp(strided_last_error(), "permute: ", 9) == 0);
    assert_null(strstr(strided_last_error(), "volume"));
}

static void test_last_error_survives_a_success(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4), out;
    char before[512];

    (void)state;
    assert_status(strided_layout_reshape(&l, DIMS(5, 5), &out), STRIDED_ERR_INVALID_ARGUMENT);
    snprintf(before, sizeof before, "%s", strided_last_error());
    assert_ok(strided_layout_reshape(&l, DIMS(6, 4), &out));
    assert_ok(strided_layout_permute(&l, AXES(1, 0), &out));
    assert_string_equal(strided_last_error(), before);
}

static void test_last_error_overflow_message(void **state)
{
    strided_layout l;

    (void)state;
    assert_status(strided_layout_init(&l, DIMS(INT64_C(1) << 32, INT64_C(1) << 32), NULL, 1),
                  STRIDED_ERR_OVERFLOW);
    assert_true(strlen(strided_last_error_reason()) > 0);
}

/* A failure on another thread does not change this thread's message. */
static void *fail_in_thread(void *arg)
{
    char *msg = arg;
    strided_layout l, out;

    /* No cmocka asserts here: they must run on the test's own thread. */
    if (strided_layout_init(&l, DIMS(2, 3), NULL, 1) != STRIDED_OK)
        snprintf(msg, 512, "init failed");
    else if (strided_layout_permute(&l, AXES(0, 0), &out) != STRIDED_ERR_INVALID_ARGUMENT)
        snprintf(msg, 512, "permute did not fail");
    else
        snprintf(msg, 512, "%s", strided_last_error());
    return NULL;
}

static void test_last_error_is_thread_local(void **state)
{
    strided_layout l = mk_c(DIMS(4, 6), 4), out;
    char before[512], before_reason[512], other[512] = "";
    pthread_t t;

    (void)state;
    assert_status(strided_layout_reshape(&l, DIMS(5, 5), &out), STRIDED_ERR_INVALID_ARGUMENT);
    snprintf(before, sizeof before, "%s", strided_last_error());
    snprintf(before_reason, sizeof before_reason, "%s", strided_last_error_reason());

    assert_int_equal(pthread_create(&t, NULL, fail_in_thread, other), 0);
    assert_int_equal(pthread_join(t, NULL), 0);

    assert_true(strncmp(other, "permute: ", 9) == 0);
    assert_non_null(strstr(other, "appears multiple times"));
    assert_string_equal(strided_last_error(), before);
    assert_string_equal(strided_last_error_reason(), before_reason);
}

/* Two threads failing at the same time each read back their own message. */
struct racer {
    int id;
    int mismatches;
};

static void *race_messages(void *arg)
{
    struct racer *r = arg;
    strided_layout l, out;
    char want[128];
    int i;

    if (strided_layout_init(&l, DIMS(2, 3), NULL, 1) != STRIDED_OK) {
        r->mismatches = -1;
        return NULL;
    }
    for (i = 0; i < 2000; i++) {
        int64_t bad = 7 + r->id;
        (void)strided_layout_reshape(&l, 1, &bad, &out);
        snprintf(want, sizeof want, "The original volume 6 and the new volume %d must be equal.",
                 7 + r->id);
        if (strstr(strided_last_error_reason(), want) == NULL)
            r->mismatches++;
    }
    return NULL;
}

static void test_last_error_concurrent_threads_keep_their_own(void **state)
{
    pthread_t t[4];
    struct racer r[4];
    int i;

    (void)state;
    for (i = 0; i < 4; i++) {
        r[i].id = i;
        r[i].mismatches = 0;
        assert_int_equal(pthread_create(&t[i], NULL, race_messages, &r[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(r[i].mismatches, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_values_are_the_abi),
        cmocka_unit_test(test_status_name_of_each_code),
        cmocka_unit_test(test_status_name_of_unknown_value),
        cmocka_unit_test(test_status_text_of_each_code),
        cmocka_unit_test(test_status_text_of_unknown_value_is_not_null),
        cmocka_unit_test(test_last_error_is_empty_before_any_failure),
        cmocka_unit_test(test_last_error_names_the_operation),
        cmocka_unit_test(test_last_error_reason_is_the_text_after_the_operation),
        cmocka_unit_test(test_last_error_of_permute),
        cmocka_unit_test(test_last_error_is_replaced_by_the_next_failure),
        cmocka_unit_test(test_last_error_survives_a_success),
        cmocka_unit_test(test_last_error_overflow_message),
        cmocka_unit_test(test_last_error_is_thread_local),
        cmocka_unit_test(test_last_error_concurrent_threads_keep_their_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
