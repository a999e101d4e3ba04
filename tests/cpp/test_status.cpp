/*
 * test_status.cpp: strided::status and strided::result, the exceptions mode
 * (value() and check() throw strided::error) and its absence (they abort),
 * and the small value types: span, index, dtype_of.
 */
#include "test_util.hpp"

#if !STRIDED_HPP_EXCEPTIONS
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static void test_default_status_is_ok(void **state)
{
    (void)state;
    strided::status s;
    assert_true(s.ok());
    assert_true(static_cast<bool>(s));
    assert_int_equal(s.code(), STRIDED_OK);
    assert_string_equal(s.message().c_str(), "");
    assert_string_equal(s.name(), "STRIDED_OK");
    assert_true(strided::status::from_code(STRIDED_OK).ok());
}

static void test_failure_copies_the_threads_message(void **state)
{
    (void)state;
    strided::layout l = make_layout({4, 6}, {1, 4}, 4);
    strided::result<strided::layout> r = l.reshape({3, 8});
    assert_false(r.has_value());
    assert_false(static_cast<bool>(r));
    assert_int_equal(r.code(), STRIDED_ERR_INVALID_ARGUMENT);
    assert_string_equal(r.message().c_str(), strided_last_error());
    assert_string_equal(r.message().c_str(),
                        "reshape: Layout strides are incompatible with the new shape: cannot "
                        "view (4,6):(1,4) as (3,8) without a copy");
    assert_string_equal(r.error().name(), "STRIDED_ERR_INVALID_ARGUMENT");
    assert_string_equal(r.error().reason().c_str(), strided_last_error_reason());

    /* A later failure changes the thread's message, not the copy. */
    strided::result<strided::layout> other = l.permute({0, 0});
    assert_false(other.has_value());
    assert_string_equal(other.message().c_str(), strided_last_error());
    assert_string_not_equal(r.message().c_str(), strided_last_error());
    assert_string_equal(r.error().reason().c_str(),
                        "Layout strides are incompatible with the new shape: cannot view "
                        "(4,6):(1,4) as (3,8) without a copy");
}

static void test_own_failures_read_like_the_librarys(void **state)
{
    (void)state;
    strided::result<strided::layout> r = strided::layout::make({4, 6}, {1}, 4);
    assert_fails(r, STRIDED_ERR_INVALID_ARGUMENT, "init: strides has 1 entries for a shape of 2");
    assert_string_equal(strided_last_error(), "init: strides has 1 entries for a shape of 2");
    assert_string_equal(strided_last_error_reason(), "strides has 1 entries for a shape of 2");
}

static void test_result_gives_its_value(void **state)
{
    (void)state;
    strided::result<strided::layout> r = strided::layout::make({4, 6}, 4);
    assert_ok(r);
    assert_true(r.ok());
    assert_true(r.error().ok());
    assert_int_equal(r->volume(), 24);
    assert_int_equal((*r).ndim(), 2);
    assert_int_equal(r.value().itemsize(), 4);
    strided::layout moved = *std::move(r);
    assert_string_equal(moved.format().c_str(), "(4,6):(6,1)");

    strided::result<int64_t> size = moved.required_size_in_bytes();
    assert_int_equal(size.value_or(-1), 96);
    strided::result<int64_t> bad = strided::layout::make({2}, {-1}, 4)->required_size_in_bytes();
    assert_int_equal(bad.value_or(-1), -1);
    assert_int_equal(bad.code(), STRIDED_ERR_INVALID_ARGUMENT);
}

static void test_status_and_result_are_values(void **state)
{
    (void)state;
    strided::result<strided::layout> r = strided::layout::make({-1}, 4);
    assert_false(r.has_value());
    strided::status copy = r.error();
    strided::status moved = std::move(copy);
    assert_int_equal(moved.code(), STRIDED_ERR_INVALID_ARGUMENT);
    assert_string_equal(moved.message().c_str(), "init: Extents must be non-negative");
    strided::status made(STRIDED_ERR_UNSUPPORTED, "mine: no");
    assert_string_equal(made.message().c_str(), "mine: no");
    assert_string_equal(made.reason().c_str(), "no");
    strided::status ok(STRIDED_OK, "ignored");
    assert_string_equal(ok.message().c_str(), "");
}

#if STRIDED_HPP_EXCEPTIONS
static void test_value_of_a_failure_throws(void **state)
{
    (void)state;
    strided::layout l = make_layout({4, 6}, {1, 4}, 4);
    bool thrown = false;
    try {
        strided::layout never = l.reshape({3, 8}).value();
        (void)never;
    } catch (const strided::error &e) {
        thrown = true;
        assert_int_equal(e.code(), STRIDED_ERR_INVALID_ARGUMENT);
        assert_string_equal(e.what(),
                            "reshape: Layout strides are incompatible with the new shape: "
                            "cannot view (4,6):(1,4) as (3,8) without a copy");
    }
    assert_true(thrown);

    thrown = false;
    try {
        l.validate().check();
        strided::status failed = strided::layout::make({2}, {-1}, 4)->validate();
        assert_true(failed.ok());
        strided::result<int64_t> size =
            strided::layout::make({2}, {-1}, 4)->required_size_in_bytes();
        size.error().check();
    } catch (const std::runtime_error &e) {
        thrown = true;
        assert_non_null(std::strstr(e.what(), "required_size_in_bytes: "));
    }
    assert_true(thrown);

    /* A chain in exceptions mode. */
    strided::layout chained =
        strided::layout::make({4, 6}, 4).value().permute({1, 0}).value().flatten().value();
    assert_string_equal(chained.format().c_str(), "(6,4):(1,6)");
}
#else
/* Without exceptions, value() of a failure writes the message and aborts. */
static void test_value_of_a_failure_aborts(void **state)
{
    (void)state;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        strided::layout l = make_layout({4, 6}, {1, 4}, 4);
        strided::layout never = l.reshape({3, 8}).value();
        (void)never;
        _exit(0);
    }
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFSIGNALED(wstatus));
    assert_int_equal(WTERMSIG(wstatus), SIGABRT);
}
#endif

static void test_span_converts_from_containers(void **state)
{
    (void)state;
    std::vector<int64_t> v = {3, 8};
    std::array<int64_t, 2> a = {{3, 8}};
    const int64_t c[] = {3, 8};
    strided::layout l = strided::layout::make({24}, 4).value_or(strided::layout());
    assert_string_equal(l.reshape(v)->format().c_str(), "(3,8):(8,1)");
    assert_string_equal(l.reshape(a)->format().c_str(), "(3,8):(8,1)");
    assert_string_equal(l.reshape(c)->format().c_str(), "(3,8):(8,1)");
    assert_string_equal(l.reshape({3, 8})->format().c_str(), "(3,8):(8,1)");
    assert_string_equal(l.reshape(strided::span<const int64_t>(c, 2))->format().c_str(),
                        "(3,8):(8,1)");
    strided::span<int64_t> writable(v.data(), v.size());
    strided::span<const int64_t> readonly = writable;
    assert_int_equal(readonly.size(), 2);
    assert_int_equal(readonly[1], 8);
    int64_t sum = 0;
    for (int64_t x : readonly)
        sum += x;
    assert_int_equal(sum, 11);
    assert_true(strided::span<const int>().empty());
#if defined(__cpp_lib_span)
    std::span<const int64_t> s = readonly;
    assert_int_equal(s.size(), 2);
    assert_string_equal(l.reshape(s)->format().c_str(), "(3,8):(8,1)");
#endif
}

static void test_index_matches_the_c_helpers(void **state)
{
    (void)state;
    strided_index want[] = {strided_index_at(-2), strided_index_slice(1, 5, 2),
                            strided_index_all(-1)};
    strided::index got[] = {-2, strided::index::range(1, 5, 2), strided::index::all(-1)};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(got[i].get().kind, want[i].kind);
        assert_int_equal(got[i].get().has_start, want[i].has_start);
        assert_int_equal(got[i].get().has_stop, want[i].has_stop);
        assert_int_equal(got[i].get().start, want[i].start);
        assert_int_equal(got[i].get().step, want[i].step);
        if (want[i].has_stop)
            assert_int_equal(got[i].get().stop, want[i].stop);
    }
    strided::index from = strided::index::from(3, 2);
    assert_true(from.get().has_start && !from.get().has_stop);
    assert_int_equal(from.get().start, 3);
    strided::index until = strided::index::until(3);
    assert_true(!until.get().has_start && until.get().has_stop);
    assert_int_equal(until.get().stop, 3);
    assert_int_equal(strided::index::at(7).get().start, 7);
}

template <class T> static void check_dtype(const char *name)
{
    strided_dtype d = strided::dtype_of<T>();
    assert_string_equal(strided::format(d).c_str(), name);
    int itemsize = 0;
    assert_int_equal(strided_dtype_itemsize(d, &itemsize), STRIDED_OK);
    assert_int_equal(itemsize, sizeof(T));
}

static void test_dtype_of_cxx_types(void **state)
{
    (void)state;
    check_dtype<bool>("bool");
    check_dtype<int8_t>("int8");
    check_dtype<uint8_t>("uint8");
    check_dtype<int16_t>("int16");
    check_dtype<uint16_t>("uint16");
    check_dtype<const int32_t>("int32");
    check_dtype<uint32_t>("uint32");
    check_dtype<long long>("int64");
    check_dtype<unsigned long long>("uint64");
    check_dtype<float>("float32");
    check_dtype<double>("float64");
    check_dtype<std::complex<float>>("complex64");
    check_dtype<std::complex<double>>("complex128");
    static_assert(strided::dtype_of<float>().bits == 32, "dtype_of is constexpr");
}

static void test_version_is_the_librarys(void **state)
{
    (void)state;
    assert_string_equal(strided::version(), strided_version());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_status_is_ok),
        cmocka_unit_test(test_failure_copies_the_threads_message),
        cmocka_unit_test(test_own_failures_read_like_the_librarys),
        cmocka_unit_test(test_result_gives_its_value),
        cmocka_unit_test(test_status_and_result_are_values),
#if STRIDED_HPP_EXCEPTIONS
        cmocka_unit_test(test_value_of_a_failure_throws),
#else
        cmocka_unit_test(test_value_of_a_failure_aborts),
#endif
        cmocka_unit_test(test_span_converts_from_containers),
        cmocka_unit_test(test_index_matches_the_c_helpers),
        cmocka_unit_test(test_dtype_of_cxx_types),
        cmocka_unit_test(test_version_is_the_librarys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
