/*
 * test_util.hpp: shared helpers of the C++ tests of include/strided.hpp.
 *
 * The tests are cmocka programs, one ctest test each. A failed cmocka
 * assert leaves the test by longjmp, past the destructors of the handles
 * alive at that point: a failing test may leak, a passing one never does.
 *
 * cmocka defines macros with common names (fail, skip), so every C++
 * header a test uses is included here, before cmocka.h.
 */
#ifndef STRIDED_TEST_UTIL_HPP
#define STRIDED_TEST_UTIL_HPP

#include <array>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "strided.hpp"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
/* cmocka 1.1's header declares its functions without C linkage for C++. */
extern "C" {
#include <cmocka.h>
}

/* A status or result that must have succeeded; the failure's message is
 * printed. */
#define assert_ok(...)                                                      \
    do {                                                                    \
        const auto &ok_ = (__VA_ARGS__);                                    \
        if (!ok_)                                                           \
            fail_msg("%s failed: %s", #__VA_ARGS__, ok_.message().c_str()); \
    } while (0)

/* A status or result that must have failed with this code and message. */
#define assert_fails(expr, code_, text_)                                                      \
    do {                                                                                      \
        const auto &failed_ = (expr);                                                         \
        if (failed_)                                                                          \
            fail_msg("%s succeeded; expected %s", #expr, strided_status_name(code_));         \
        assert_string_equal(strided_status_name(failed_.code()), strided_status_name(code_)); \
        assert_string_equal(failed_.message().c_str(), (text_));                              \
    } while (0)

/* Two layouts that must be equal (strided_layout_equal), shown as text. */
static inline void assert_same_layout(const strided_layout &got, const strided_layout &want,
                                      const char *what)
{
    if (!strided_layout_equal(&got, &want))
        fail_msg("%s: got %s (implicit %d, itemsize %d), want %s (implicit %d, itemsize %d)", what,
                 strided::layout(got).format().c_str(), got.implicit_strides, got.itemsize,
                 strided::layout(want).format().c_str(), want.implicit_strides, want.itemsize);
}

/* A layout that must be made: the tests build their inputs with it. */
static inline strided::layout make_layout(strided::span<const int64_t> shape,
                                          strided::span<const int64_t> strides, int itemsize)
{
    strided::result<strided::layout> l = strided::layout::make(shape, strides, itemsize);
    if (!l)
        fail_msg("layout::make: %s", l.message().c_str());
    return *l;
}

#endif
