/*
 * strided.hpp: a header-only C++17 layer over libstrided's C API.
 *
 * It adds no behaviour of its own to the library: every call goes through
 * the C functions of strided.h, whose headers remain the contract for what
 * each operation does, which statuses it returns and with which messages.
 * What this header adds is C++ ownership, C++ errors and element access:
 *
 *   strided::status, result<T>  a failure's strided_status and its message
 *   strided::layout             strided_layout as a value, its algebra as
 *                               member functions
 *   strided::index              one position of a slicing expression
 *   strided::memory_resource    owns one reference to a resource
 *   strided::buffer             owns one reference to a buffer
 *   strided::view               owns the view's reference to its buffer
 *   strided::dlpack_tensor      owns an exported DLPack tensor (its
 *   (dlpack_tensor_legacy)      deleter runs in the destructor)
 *   strided::host_span<T>       element access to host memory through a
 *                               layout: s(i, j, ...)
 *   strided::to_mdspan, to_cuda_mdspan
 *                               a view as std::mdspan or cuda::std::mdspan
 *                               with layout_stride, where they exist
 *   strided::copy, copy_host    strided_view_copy, strided_copy_host
 *   strided::dtype_of<T>()      the DLPack type of bool, the integer types,
 *                               float, double and std::complex
 *   strided::span<T>            a pointer and a count, for the arrays the C
 *                               API takes (shape, axes, indices); converts
 *                               from std::vector, std::array, C arrays and
 *                               braced lists: l.reshape({3, 8})
 *
 * Everything is in namespace strided; the C API (strided.h, which this
 * includes) stays as it is beside it, and get() gives each wrapper's C
 * object to pass to it. Macros: STRIDED_HPP_EXCEPTIONS (below),
 * STRIDED_HPP_HAS_STD_MDSPAN, STRIDED_HPP_HAS_CUDA_MDSPAN and
 * STRIDED_HPP_NO_CUDA_MDSPAN (see mdspan).
 *
 * Errors. Nothing here throws unless the caller asks for it, and the same
 * code builds with and without exceptions (-fno-exceptions). Every function
 * that can fail returns a strided::status (no value) or a
 * strided::result<T> (a T or a status), both [[nodiscard]]. A failed status
 * holds the strided_status and a copy of the calling thread's message
 * (strided_last_error()), taken right after the failing call, so it stays
 * valid however many calls follow. Test with ok() or operator bool (true on
 * success), read code(), message(), name() and reason(). (Under nvcc they
 * are not [[nodiscard]]: its front end warns when one is assigned.) A result gives its
 * value through operator* and operator-> (the caller has checked: a failed
 * result asserts) or value(). The header's own checks (element sizes,
 * alignment, memory that the host or a device cannot reach, layouts that
 * std::layout_stride cannot express) fail the same way: they record their
 * message with strided_set_last_error, "operation: reason", in the
 * library's voice, so strided_last_error() reads it too.
 *
 * Exceptions mode. When exceptions are on (__cpp_exceptions), value() on a
 * failed result and check() on a failed status throw strided::error, a
 * std::runtime_error whose what() is the message and whose code() is the
 * status: `auto l = layout::make({4, 6}, 4).value().reshape({3, 8}).value();`.
 * Without exceptions (or with STRIDED_HPP_EXCEPTIONS defined to 0 before the
 * include) they write the message to stderr and call std::abort(): calling
 * them on a failure is then a programming error, and code that must handle
 * failures tests ok() first. Nothing else throws, apart from std::bad_alloc
 * where a std::string or std::vector is made (a message, format(), shape
 * lists). Every translation unit of a program must see the same
 * STRIDED_HPP_EXCEPTIONS.
 *
 * Ownership. The handles are to the C objects what std::shared_ptr is to
 * its pointee: buffer and memory_resource hold one reference each; copying
 * one takes another (strided_buffer_retain, strided_memory_resource_retain),
 * moving steals it and leaves the source empty, destroying or reset()
 * releases it. A view holds the one reference its strided_view holds to the
 * buffer: a copy of a view retains the buffer, a move steals, the destructor
 * is strided_view_release. adopt(p) takes over a reference the caller holds
 * (from a C call); share(p) takes a new one, leaving the caller's; detach()
 * hands the reference back to the caller. dlpack_tensor owns a tensor that
 * an export made (move only): its destructor calls the tensor's deleter, and
 * detach() gives it to a consumer. view::import_dlpack takes a tensor over
 * as strided_view_import_dlpack does: its deleter runs exactly once, before
 * the call returns when the import fails. layout, index, status and result
 * are plain values. A host_span or an mdspan owns nothing: it is valid while
 * the memory it points into is (keep the view, or its buffer, alive).
 *
 * Thread-safety, as in the C headers: reference counts are atomic, so
 * handles that share one object may be copied, moved and destroyed on
 * different threads; one handle object is not to be changed by two threads
 * at once (as a std::shared_ptr). Layouts are values. The message of a
 * status is copied on the thread that made the failing call, so a status
 * may be handed to another thread.
 *
 * Element access. view::data<T>() is the address of element (0,...,0) as a
 * T* (its size and the memory's reach are checked by assert only);
 * view::as_host_span<T>() checks, as statuses, that the view is not
 * released, that its memory is host-accessible, that it is writable unless
 * T is const, that sizeof(T) is the itemsize and that element (0,...,0) is
 * aligned for T. host_span<T>(i, j, ...) is element0[sum i_k * strides_k]:
 * sliced, permuted, broadcast and negative-stride layouts all work. Only the
 * itemsize is compared with T, never the dtype: a float32 view reads as
 * uint32_t as well.
 *
 * mdspan. When the standard library has std::mdspan (C++23: <mdspan> and
 * __cpp_lib_mdspan), STRIDED_HPP_HAS_STD_MDSPAN is 1 and
 * to_mdspan<T, Rank>(view) gives a strided::mdspan<T, Rank>, that is
 * std::mdspan<T, std::dextents<std::size_t, Rank>, std::layout_stride>, of
 * the host memory. When <cuda/std/mdspan> can be included (CUDA's CCCL
 * headers on the include path; STRIDED_HPP_NO_CUDA_MDSPAN turns this off),
 * STRIDED_HPP_HAS_CUDA_MDSPAN is 1 and to_cuda_mdspan<T, Rank>(view) gives a
 * strided::cuda_mdspan<T, Rank> (the same with cuda::std), by default at the
 * view's device address, so that a CUDA kernel takes the view by value as an
 * mdspan; memory_space::host asks for the host address. Both check the rank
 * and the itemsize against the view's, the memory's reach, the read-only
 * flag and the alignment. std::layout_stride maps index (0,...,0) to offset 0
 * with strides > 0 and no two elements at one offset, so a layout with a
 * negative or zero stride on an axis of extent > 1, or with overlapping
 * elements, is refused (STRIDED_ERR_INVALID_ARGUMENT). Strides of axes of
 * extent 1 play no part and are given as 1; a layout without elements gets
 * the C-order strides of its shape.
 */
#ifndef STRIDED_HPP
#define STRIDED_HPP

/* The language version; MSVC reports its own in _MSVC_LANG. */
#if defined(_MSVC_LANG)
#define STRIDED_HPP_CPLUSPLUS _MSVC_LANG
#else
#define STRIDED_HPP_CPLUSPLUS __cplusplus
#endif
#if STRIDED_HPP_CPLUSPLUS < 201703L
#error "strided.hpp needs C++17 or later"
#endif

#include <array>
#include <cassert>
#include <climits>
#include <cstdarg>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "strided.h"

#ifndef STRIDED_HPP_EXCEPTIONS
#if defined(__cpp_exceptions)
#define STRIDED_HPP_EXCEPTIONS 1
#else
#define STRIDED_HPP_EXCEPTIONS 0
#endif
#endif

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
/* <span> and <mdspan> only in the modes that have them (C++20, C++23),
 * or where the library says so already: some warn when included in an
 * older mode. */
#if __has_include(<span>) && STRIDED_HPP_CPLUSPLUS >= 202002L
#include <span>
#endif
#if __has_include(<mdspan>) && (defined(__cpp_lib_mdspan) || STRIDED_HPP_CPLUSPLUS > 202002L)
#include <mdspan>
#endif
#if !defined(STRIDED_HPP_NO_CUDA_MDSPAN) && __has_include(<cuda/std/mdspan>)
#include <cuda/std/mdspan>
#define STRIDED_HPP_HAS_CUDA_MDSPAN 1
#endif
#endif

#if defined(__cpp_lib_mdspan)
#define STRIDED_HPP_HAS_STD_MDSPAN 1
#else
#define STRIDED_HPP_HAS_STD_MDSPAN 0
#endif
#ifndef STRIDED_HPP_HAS_CUDA_MDSPAN
#define STRIDED_HPP_HAS_CUDA_MDSPAN 0
#endif

/* status and result are [[nodiscard]] types. nvcc's front end warns when
 * one is assigned (it takes the reference operator= returns for a
 * discarded value), so under nvcc they are not. */
#if defined(__CUDACC__) && !defined(__clang__)
#define STRIDED_HPP_NODISCARD
#else
#define STRIDED_HPP_NODISCARD [[nodiscard]]
#endif

namespace strided {

/* The outcome of a call that gives no value: STRIDED_OK, or a failure with
 * the message the failing call recorded. */
class STRIDED_HPP_NODISCARD status {
  public:
    /* Success. */
    status() noexcept = default;

    /* A status with this code and message (a success ignores the
     * message). */
    status(strided_status code, std::string message)
        : code_(code), message_(code == STRIDED_OK ? std::string() : std::move(message))
    {
    }

    /* The status of a C call that just returned code on this thread: a
     * failure copies strided_last_error(). */
    static status from_code(strided_status code)
    {
        if (code == STRIDED_OK)
            return status();
        return status(code, strided_last_error());
    }

    bool ok() const noexcept
    {
        return code_ == STRIDED_OK;
    }

    /* True on success. */
    explicit operator bool() const noexcept
    {
        return ok();
    }

    strided_status code() const noexcept
    {
        return code_;
    }

    /* "operation: reason"; "" on success. */
    const std::string &message() const noexcept
    {
        return message_;
    }

    /* The message without its leading "operation: ", as
     * strided_last_error_reason() gives it. */
    std::string reason() const
    {
        std::string::size_type colon = message_.find(": ");
        return colon == std::string::npos ? message_ : message_.substr(colon + 2);
    }

    /* The enumerator's name, e.g. "STRIDED_ERR_OVERFLOW". */
    const char *name() const noexcept
    {
        return strided_status_name(code_);
    }

    /* Nothing on success; on failure throws strided::error (exceptions
     * mode) or writes the message to stderr and aborts. */
    void check() const;

  private:
    strided_status code_ = STRIDED_OK;
    std::string message_;
};

/* What value() and check() throw in exceptions mode. */
class error : public std::runtime_error {
  public:
    explicit error(const status &s) : std::runtime_error(s.message()), code_(s.code())
    {
    }

    strided_status code() const noexcept
    {
        return code_;
    }

  private:
    strided_status code_;
};

namespace detail {

[[noreturn]] inline void throw_or_abort(const status &s)
{
#if STRIDED_HPP_EXCEPTIONS
    throw error(s);
#else
    std::fprintf(stderr, "strided: %s\n", s.message().c_str());
    std::fflush(stderr);
    std::abort();
#endif
}

} // namespace detail

inline void status::check() const
{
    if (!ok())
        detail::throw_or_abort(*this);
}

/* A value of type T, or the status of the failure that prevented it. */
template <class T> class STRIDED_HPP_NODISCARD result {
  public:
    using value_type = T;

    result(const T &value) : value_(value)
    {
    }

    result(T &&value) : value_(std::move(value))
    {
    }

    /* A failure; s must not be a success. */
    result(status s) : status_(std::move(s))
    {
        assert(!status_.ok() && "a result without a value needs a failed status");
        if (status_.ok())
            status_ = status(STRIDED_ERR_INTERNAL, "result: made from a success without a value");
    }

    bool has_value() const noexcept
    {
        return value_.has_value();
    }

    bool ok() const noexcept
    {
        return value_.has_value();
    }

    /* True when there is a value. */
    explicit operator bool() const noexcept
    {
        return value_.has_value();
    }

    /* The status: a success when there is a value. */
    const status &error() const noexcept
    {
        return status_;
    }

    strided_status code() const noexcept
    {
        return status_.code();
    }

    const std::string &message() const noexcept
    {
        return status_.message();
    }

    /* The value; a failure throws strided::error (exceptions mode) or
     * aborts (status::check). */
    T &value() &
    {
        if (!value_)
            detail::throw_or_abort(status_);
        return *value_;
    }

    const T &value() const &
    {
        if (!value_)
            detail::throw_or_abort(status_);
        return *value_;
    }

    T &&value() &&
    {
        if (!value_)
            detail::throw_or_abort(status_);
        return std::move(*value_);
    }

    /* The value, unchecked but for an assert: the caller has tested. */
    T &operator*() &noexcept
    {
        assert(value_.has_value());
        return *value_;
    }

    const T &operator*() const &noexcept
    {
        assert(value_.has_value());
        return *value_;
    }

    T &&operator*() &&noexcept
    {
        assert(value_.has_value());
        return std::move(*value_);
    }

    T *operator->() noexcept
    {
        assert(value_.has_value());
        return &*value_;
    }

    const T *operator->() const noexcept
    {
        assert(value_.has_value());
        return &*value_;
    }

    template <class U> T value_or(U &&fallback) const &
    {
        return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }

    template <class U> T value_or(U &&fallback) &&
    {
        return value_ ? std::move(*value_) : static_cast<T>(std::forward<U>(fallback));
    }

  private:
    std::optional<T> value_;
    status status_;
};

namespace detail {

/* Record "op: text" as the calling thread's error, as the library does,
 * and return it as a status. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline status
record_failure(strided_status code, const char *op, const char *format, ...)
{
    char text[4096]; /* the library keeps messages of up to 4095 bytes */
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    strided_set_last_error(code, op, "%s", text);
    return status::from_code(code);
}

/* A count for the C API's int parameters: larger ones become INT_MAX,
 * which every function refuses (there are at most 64 axes). */
inline int count(std::size_t n) noexcept
{
    return n > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
}

template <class T, class = void> struct is_span_source : std::false_type {
};

template <class C>
struct is_span_source<C, std::void_t<decltype(std::data(std::declval<C &>())),
                                     decltype(std::size(std::declval<C &>()))>> : std::true_type {
};

} // namespace detail

/* A pointer and a count: the arrays the C API takes. It borrows what it
 * points into, as std::span does; a braced list lives until the end of the
 * full expression, which is as long as a call needs. */
template <class T> class span {
  public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using size_type = std::size_t;
    using iterator = T *;

    constexpr span() noexcept = default;

    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size)
    {
    }

    /* A braced list, for spans of const elements: f({4, 6}). */
    template <class U = T, std::enable_if_t<std::is_const_v<U>, int> = 0>
    constexpr span(std::initializer_list<value_type> list) noexcept
        : data_(std::data(list)), size_(list.size())
    {
    }

    /* Any contiguous container whose elements convert: std::vector,
     * std::array, C arrays, std::span. */
    template <
        class C,
        std::enable_if_t<
            !std::is_same_v<std::remove_cv_t<std::remove_reference_t<C>>, span> &&
                detail::is_span_source<std::remove_reference_t<C>>::value &&
                std::is_convertible_v<std::remove_pointer_t<decltype(std::data(
                                          std::declval<std::remove_reference_t<C> &>()))> (*)[],
                                      T (*)[]>,
            int> = 0>
    constexpr span(C &&c) noexcept : data_(std::data(c)), size_(std::size(c))
    {
    }

    /* span<T> to span<const T>. */
    template <
        class U,
        std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]> && !std::is_same_v<U, T>, int> = 0>
    constexpr span(const span<U> &other) noexcept : data_(other.data()), size_(other.size())
    {
    }

    constexpr T *data() const noexcept
    {
        return data_;
    }

    constexpr std::size_t size() const noexcept
    {
        return size_;
    }

    constexpr bool empty() const noexcept
    {
        return size_ == 0;
    }

    constexpr T &operator[](std::size_t i) const noexcept
    {
        assert(i < size_);
        return data_[i];
    }

    constexpr T *begin() const noexcept
    {
        return data_;
    }

    constexpr T *end() const noexcept
    {
        return data_ + size_;
    }

#if defined(__cpp_lib_span)
    constexpr operator std::span<T>() const noexcept
    {
        return std::span<T>(data_, size_);
    }
#endif

  private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

/* The DLPack type of a C++ element type: bool, the integer types (by
 * signedness and size), float, double, std::complex<float> and
 * std::complex<double>. */
template <class T> constexpr strided_dtype dtype_of() noexcept
{
    using U = std::remove_cv_t<T>;
    constexpr auto bits = static_cast<std::uint8_t>(sizeof(U) * CHAR_BIT);
    if constexpr (std::is_same_v<U, bool>) {
        return strided_dtype{STRIDED_DTYPE_BOOL, 8, 1};
    } else if constexpr (std::is_integral_v<U>) {
        static_assert(sizeof(U) <= 8, "no DLPack type for integers wider than 64 bits");
        return strided_dtype{std::is_signed_v<U> ? STRIDED_DTYPE_INT : STRIDED_DTYPE_UINT, bits, 1};
    } else if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) {
        return strided_dtype{STRIDED_DTYPE_FLOAT, bits, 1};
    } else if constexpr (std::is_same_v<U, std::complex<float>> ||
                         std::is_same_v<U, std::complex<double>>) {
        return strided_dtype{STRIDED_DTYPE_COMPLEX, bits, 1};
    } else {
        static_assert(sizeof(U) == 0, "dtype_of: no DLPack type for this element type");
        return strided_dtype{};
    }
}

/* The dtype's name as NumPy spells it ("float32"). */
inline std::string format(strided_dtype dtype)
{
    std::size_t n = strided_dtype_format(dtype, nullptr, 0);
    std::string s(n, '\0');
    strided_dtype_format(dtype, &s[0], n + 1);
    return s;
}

/* The library's version, e.g. "0.1.0". */
inline const char *version() noexcept
{
    return strided_version();
}

/* One position of a slicing expression (strided_index): an integer, which
 * removes its axis, or a slice start:stop:step. An integer converts to
 * one: l.slice({1, index::all(-1)}) is NumPy's l[1, ::-1]. */
class index {
  public:
    /* The integer index i (negative counts from the end). */
    template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
    constexpr index(I i) noexcept
        : c_{STRIDED_INDEX_INTEGER, true, false, static_cast<std::int64_t>(i), 0, 1}
    {
    }

    constexpr explicit index(const strided_index &c) noexcept : c_(c)
    {
    }

    static constexpr index at(std::int64_t i) noexcept
    {
        return index(i);
    }

    /* start:stop:step. */
    static constexpr index range(std::int64_t start, std::int64_t stop,
                                 std::int64_t step = 1) noexcept
    {
        return index(strided_index{STRIDED_INDEX_SLICE, true, true, start, stop, step});
    }

    /* ::step, the whole axis (backwards for a negative step). */
    static constexpr index all(std::int64_t step = 1) noexcept
    {
        return index(strided_index{STRIDED_INDEX_SLICE, false, false, 0, 0, step});
    }

    /* start::step. */
    static constexpr index from(std::int64_t start, std::int64_t step = 1) noexcept
    {
        return index(strided_index{STRIDED_INDEX_SLICE, true, false, start, 0, step});
    }

    /* :stop:step. */
    static constexpr index until(std::int64_t stop, std::int64_t step = 1) noexcept
    {
        return index(strided_index{STRIDED_INDEX_SLICE, false, true, 0, stop, step});
    }

    constexpr const strided_index &get() const noexcept
    {
        return c_;
    }

  private:
    strided_index c_;
};

/* The smallest and largest element offset a layout reaches; (0, -1) when
 * it has no element. */
struct offset_range {
    std::int64_t min;
    std::int64_t max;
};

/* A strided layout (strided/layout.h) as a value. A default layout is 0-d
 * with itemsize 1. Each operation returns a new layout, or the status of
 * the C function's failure; none changes the layout it is called on. */
class layout {
  public:
    layout() noexcept : c_()
    {
        c_.ndim = 0;
        c_.itemsize = 1;
        c_.implicit_strides = true;
        c_.slice_offset = 0;
    }

    /* The C layout, taken as it is: validate() checks a layout filled in
     * by hand (or use validated()). */
    explicit layout(const strided_layout &c) noexcept : c_(c)
    {
    }

    /* C-contiguous, strides implicit (strided_layout_init). */
    static result<layout> make(span<const std::int64_t> shape, int itemsize)
    {
        strided_layout out;
        strided_status s = strided_layout_init(&out, detail::count(shape.size()), shape.data(),
                                               nullptr, itemsize);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return layout(out);
    }

    /* With explicit strides in elements, one per axis (strided_layout_init;
     * they are explicit also for 0-d). */
    static result<layout> make(span<const std::int64_t> shape, span<const std::int64_t> strides,
                               int itemsize)
    {
        if (strides.size() != shape.size())
            return detail::record_failure(STRIDED_ERR_INVALID_ARGUMENT, "init",
                                          "strides has %zu entries for a shape of %zu",
                                          strides.size(), shape.size());
        static const std::int64_t none = 0;
        strided_layout out;
        strided_status s = strided_layout_init(&out, detail::count(shape.size()), shape.data(),
                                               strides.data() ? strides.data() : &none, itemsize);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return layout(out);
    }

    /* With strides in bytes (strided_layout_init_byte_strides). */
    static result<layout> make_byte_strides(span<const std::int64_t> shape,
                                            span<const std::int64_t> byte_strides, int itemsize)
    {
        if (byte_strides.size() != shape.size())
            return detail::record_failure(STRIDED_ERR_INVALID_ARGUMENT, "init",
                                          "byte_strides has %zu entries for a shape of %zu",
                                          byte_strides.size(), shape.size());
        static const std::int64_t none = 0;
        strided_layout out;
        strided_status s = strided_layout_init_byte_strides(
            &out, detail::count(shape.size()), shape.data(),
            byte_strides.data() ? byte_strides.data() : &none, itemsize);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return layout(out);
    }

    /* Dense, explicit strides (strided_layout_init_dense): order C, F, or
     * PERM with perm, slowest axis first. */
    static result<layout> dense(span<const std::int64_t> shape, int itemsize,
                                strided_order order = STRIDED_ORDER_C, span<const int> perm = {})
    {
        strided_layout out;
        strided_status s = strided_layout_init_dense(&out, detail::count(shape.size()),
                                                     shape.data(), itemsize, order,
                                                     detail::count(perm.size()), perm.data());
        if (s != STRIDED_OK)
            return status::from_code(s);
        return layout(out);
    }

    /* A C layout, checked by strided_layout_validate. */
    static result<layout> validated(const strided_layout &c)
    {
        strided_status s = strided_layout_validate(&c);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return layout(c);
    }

    /* The C layout, to pass to the C API. */
    const strided_layout &get() const noexcept
    {
        return c_;
    }

    status validate() const
    {
        return status::from_code(strided_layout_validate(&c_));
    }

    int ndim() const noexcept
    {
        return c_.ndim;
    }

    int itemsize() const noexcept
    {
        return c_.itemsize;
    }

    std::int64_t slice_offset() const noexcept
    {
        return c_.slice_offset;
    }

    bool implicit_strides() const noexcept
    {
        return c_.implicit_strides;
    }

    span<const std::int64_t> shape() const noexcept
    {
        return span<const std::int64_t>(c_.shape, static_cast<std::size_t>(c_.ndim));
    }

    /* In elements; for implicit strides, the C strides they stand for. */
    span<const std::int64_t> strides() const noexcept
    {
        return span<const std::int64_t>(c_.strides, static_cast<std::size_t>(c_.ndim));
    }

    std::int64_t extent(int axis) const noexcept
    {
        assert(axis >= 0 && axis < c_.ndim);
        return c_.shape[axis];
    }

    std::int64_t stride(int axis) const noexcept
    {
        assert(axis >= 0 && axis < c_.ndim);
        return c_.strides[axis];
    }

    std::int64_t volume() const noexcept
    {
        return strided_layout_volume(&c_);
    }

    bool is_contiguous_c() const noexcept
    {
        return strided_layout_is_contiguous_c(&c_);
    }

    bool is_contiguous_f() const noexcept
    {
        return strided_layout_is_contiguous_f(&c_);
    }

    bool is_contiguous_any() const noexcept
    {
        return strided_layout_is_contiguous_any(&c_);
    }

    bool is_dense() const noexcept
    {
        return strided_layout_is_dense(&c_);
    }

    bool is_unique() const noexcept
    {
        return strided_layout_is_unique(&c_);
    }

    std::uint64_t hash() const noexcept
    {
        return strided_layout_hash(&c_);
    }

    offset_range offset_bounds() const noexcept
    {
        offset_range r{0, -1};
        strided_layout_offset_bounds(&c_, &r.min, &r.max);
        return r;
    }

    result<std::int64_t> required_size_in_bytes() const
    {
        std::int64_t out = 0;
        strided_status s = strided_layout_required_size_in_bytes(&c_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return out;
    }

    result<std::int64_t> slice_offset_in_bytes() const
    {
        std::int64_t out = 0;
        strided_status s = strided_layout_slice_offset_in_bytes(&c_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return out;
    }

    result<std::vector<std::int64_t>> strides_in_bytes() const
    {
        std::int64_t out[STRIDED_MAX_NDIM];
        strided_status s = strided_layout_strides_in_bytes(&c_, out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return std::vector<std::int64_t>(out, out + c_.ndim);
    }

    /* The axes from the largest |stride| to the smallest. */
    std::vector<int> stride_order() const
    {
        int out[STRIDED_MAX_NDIM];
        strided_layout_stride_order(&c_, out);
        return std::vector<int>(out, out + c_.ndim);
    }

    result<std::uint64_t> flattened_axis_mask() const
    {
        std::uint64_t out = 0;
        strided_status s = strided_layout_flattened_axis_mask(&c_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return out;
    }

    result<int> max_compatible_itemsize(int max_itemsize, std::intptr_t data_ptr = 0,
                                        int axis = -1) const
    {
        int out = 0;
        strided_status s = strided_layout_max_compatible_itemsize(&c_, max_itemsize, data_ptr, axis,
                                                                  &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return out;
    }

    result<layout> reshape(span<const std::int64_t> shape) const
    {
        strided_layout out;
        return done(strided_layout_reshape(&c_, detail::count(shape.size()), shape.data(), &out),
                    out);
    }

    /* Out axis i is axis axes[i] (numpy.transpose). */
    result<layout> permute(span<const int> axes) const
    {
        strided_layout out;
        return done(strided_layout_permute(&c_, detail::count(axes.size()), axes.data(), &out),
                    out);
    }

    /* Merge the contiguous axes of [start_axis, end_axis]. */
    result<layout> flatten(int start_axis = 0, int end_axis = -1) const
    {
        strided_layout out;
        return done(strided_layout_flatten(&c_, start_axis, end_axis, &out), out);
    }

    result<layout> flatten_mask(std::uint64_t mask) const
    {
        strided_layout out;
        return done(strided_layout_flatten_mask(&c_, mask, &out), out);
    }

    result<layout> squeeze() const
    {
        strided_layout out;
        return done(strided_layout_squeeze(&c_, &out), out);
    }

    /* Extent-1 axes at these positions of the result. */
    result<layout> unsqueeze(span<const int> axes) const
    {
        strided_layout out;
        return done(strided_layout_unsqueeze(&c_, detail::count(axes.size()), axes.data(), &out),
                    out);
    }

    result<layout> broadcast_to(span<const std::int64_t> shape) const
    {
        strided_layout out;
        return done(strided_layout_broadcast(&c_, detail::count(shape.size()), shape.data(), &out),
                    out);
    }

    result<layout> repack(int new_itemsize, std::intptr_t data_ptr = 0, int axis = -1,
                          bool keep_dim = true) const
    {
        strided_layout out;
        return done(strided_layout_repack(&c_, new_itemsize, data_ptr, axis, keep_dim, &out), out);
    }

    /* NumPy's basic indexing, without Ellipsis and None. */
    result<layout> slice(span<const index> indices) const
    {
        /* More than STRIDED_MAX_NDIM indices are refused by the count,
         * before any is read. */
        strided_index c[STRIDED_MAX_NDIM];
        std::size_t n = indices.size() < STRIDED_MAX_NDIM ? indices.size() : STRIDED_MAX_NDIM;
        for (std::size_t i = 0; i < n; i++)
            c[i] = indices[i].get();
        strided_layout out;
        return done(strided_layout_slice(&c_, detail::count(indices.size()), c, &out), out);
    }

    result<layout> to_dense(strided_order order = STRIDED_ORDER_KEEP,
                            span<const int> perm = {}) const
    {
        strided_layout out;
        return done(strided_layout_to_dense(&c_, order, detail::count(perm.size()), perm.data(),
                                            &out),
                    out);
    }

    result<layout> coalesce() const
    {
        strided_layout out;
        return done(strided_layout_coalesce(&c_, &out), out);
    }

    /* "(4,6):(6,1)", with the slice offset when it is not 0. */
    std::string format() const
    {
        std::size_t n = strided_layout_format(&c_, nullptr, 0);
        std::string s(n, '\0');
        strided_layout_format(&c_, &s[0], n + 1);
        return s;
    }

    /* The grid of offsets of a layout of at most 2 dimensions. */
    result<std::string> format_grid() const
    {
        std::size_t n = 0;
        strided_status s = strided_layout_format_grid(&c_, nullptr, 0, &n);
        if (s != STRIDED_OK)
            return status::from_code(s);
        std::string text(n, '\0');
        s = strided_layout_format_grid(&c_, &text[0], n + 1, nullptr);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return text;
    }

    /* strided_layout_equal: implicit and explicit strides differ. */
    friend bool operator==(const layout &a, const layout &b) noexcept
    {
        return strided_layout_equal(&a.c_, &b.c_);
    }

    friend bool operator!=(const layout &a, const layout &b) noexcept
    {
        return !strided_layout_equal(&a.c_, &b.c_);
    }

  private:
    /* out by reference: it is read after the call that fills it (the
     * order in which arguments are evaluated is unspecified). */
    static result<layout> done(strided_status s, const strided_layout &out)
    {
        if (s != STRIDED_OK)
            return status::from_code(s);
        return layout(out);
    }

    strided_layout c_;
};

/* Owns one reference to a memory resource (strided/resource.h). */
class memory_resource {
  public:
    memory_resource() noexcept = default;

    memory_resource(const memory_resource &other) noexcept
        : mr_(strided_memory_resource_retain(other.mr_))
    {
    }

    memory_resource(memory_resource &&other) noexcept : mr_(other.mr_)
    {
        other.mr_ = nullptr;
    }

    memory_resource &operator=(const memory_resource &other) noexcept
    {
        strided_memory_resource *old = mr_;
        mr_ = strided_memory_resource_retain(other.mr_);
        strided_memory_resource_release(old);
        return *this;
    }

    memory_resource &operator=(memory_resource &&other) noexcept
    {
        if (this != &other) {
            strided_memory_resource_release(mr_);
            mr_ = other.mr_;
            other.mr_ = nullptr;
        }
        return *this;
    }

    ~memory_resource()
    {
        strided_memory_resource_release(mr_);
    }

    /* Takes over the caller's reference. */
    static memory_resource adopt(strided_memory_resource *mr) noexcept
    {
        memory_resource r;
        r.mr_ = mr;
        return r;
    }

    /* Takes a reference of its own. */
    static memory_resource share(strided_memory_resource *mr) noexcept
    {
        return adopt(strided_memory_resource_retain(mr));
    }

    /* Aligned host memory (strided_host_resource_create; 0: 64 bytes). */
    static result<memory_resource> host(std::size_t alignment = 0)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_host_resource_create(alignment, &out), out);
    }

    static result<memory_resource> pinned()
    {
        strided_memory_resource *out = nullptr;
        return made(strided_pinned_resource_create(&out), out);
    }

    static result<memory_resource> legacy_pinned()
    {
        strided_memory_resource *out = nullptr;
        return made(strided_legacy_pinned_resource_create(&out), out);
    }

    static result<memory_resource> device(int device_id)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_device_resource_create(device_id, &out), out);
    }

    static result<memory_resource> managed(int device_id)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_managed_resource_create(device_id, &out), out);
    }

    static result<memory_resource> device_pool(int device_id,
                                               const strided_device_pool_options *options)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_device_pool_resource_create(device_id, options, &out), out);
    }

    static result<memory_resource> pinned_pool(const strided_pinned_pool_options *options)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_pinned_pool_resource_create(options, &out), out);
    }

    static result<memory_resource> managed_pool(int device_id,
                                                const strided_managed_pool_options *options)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_managed_pool_resource_create(device_id, options, &out), out);
    }

    /* A resource of user callbacks (strided_memory_resource_create). */
    static result<memory_resource> create(const strided_memory_resource_ops *ops, void *self,
                                          const strided_memory_resource_props &props)
    {
        strided_memory_resource *out = nullptr;
        return made(strided_memory_resource_create(ops, self, &props, &out), out);
    }

    strided_memory_resource *get() const noexcept
    {
        return mr_;
    }

    /* Gives the reference back to the caller and leaves this empty. */
    strided_memory_resource *detach() noexcept
    {
        strided_memory_resource *mr = mr_;
        mr_ = nullptr;
        return mr;
    }

    void reset() noexcept
    {
        strided_memory_resource_release(mr_);
        mr_ = nullptr;
    }

    explicit operator bool() const noexcept
    {
        return mr_ != nullptr;
    }

    /* The queries below need a resource (not empty). */
    strided_memory_resource_props properties() const noexcept
    {
        assert(mr_);
        return strided_memory_resource_properties(mr_);
    }

    strided_memory_pool_info pool() const noexcept
    {
        assert(mr_);
        return strided_memory_resource_pool(mr_);
    }

    result<strided_memory_pool_attributes> pool_attributes() const
    {
        strided_memory_pool_attributes out;
        strided_status s = strided_memory_resource_pool_attributes(mr_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return out;
    }

    status close() const
    {
        if (mr_ == nullptr)
            return detail::record_failure(STRIDED_ERR_INVALID_ARGUMENT, "close",
                                          "the resource is empty");
        return status::from_code(strided_memory_resource_close(mr_));
    }

    bool is_closed() const noexcept
    {
        assert(mr_);
        return strided_memory_resource_is_closed(mr_);
    }

    void *self() const noexcept
    {
        assert(mr_);
        return strided_memory_resource_self(mr_);
    }

  private:
    /* out by reference: it is read after the call that fills it (the
     * order in which arguments are evaluated is unspecified). */
    static result<memory_resource> made(strided_status s, strided_memory_resource *const &out)
    {
        if (s != STRIDED_OK)
            return status::from_code(s);
        return adopt(out);
    }

    strided_memory_resource *mr_ = nullptr;
};

/* Owns a DLPack managed tensor (strided_dl_managed_tensor_versioned or
 * strided_dl_managed_tensor): the destructor calls its deleter. */
template <class Managed> class basic_dlpack_tensor {
  public:
    basic_dlpack_tensor() noexcept = default;

    /* Takes the tensor over. */
    explicit basic_dlpack_tensor(Managed *tensor) noexcept : t_(tensor)
    {
    }

    basic_dlpack_tensor(const basic_dlpack_tensor &) = delete;
    basic_dlpack_tensor &operator=(const basic_dlpack_tensor &) = delete;

    basic_dlpack_tensor(basic_dlpack_tensor &&other) noexcept : t_(other.t_)
    {
        other.t_ = nullptr;
    }

    basic_dlpack_tensor &operator=(basic_dlpack_tensor &&other) noexcept
    {
        if (this != &other) {
            reset();
            t_ = other.t_;
            other.t_ = nullptr;
        }
        return *this;
    }

    ~basic_dlpack_tensor()
    {
        reset();
    }

    Managed *get() const noexcept
    {
        return t_;
    }

    Managed *operator->() const noexcept
    {
        assert(t_);
        return t_;
    }

    /* Hands the tensor to the caller, who calls its deleter. */
    Managed *detach() noexcept
    {
        Managed *t = t_;
        t_ = nullptr;
        return t;
    }

    /* Calls the deleter now, and owns tensor instead. */
    void reset(Managed *tensor = nullptr) noexcept
    {
        Managed *old = t_;
        t_ = tensor;
        if (old && old->deleter)
            old->deleter(old);
    }

    explicit operator bool() const noexcept
    {
        return t_ != nullptr;
    }

  private:
    Managed *t_ = nullptr;
};

using dlpack_tensor = basic_dlpack_tensor<strided_dl_managed_tensor_versioned>;
using dlpack_tensor_legacy = basic_dlpack_tensor<strided_dl_managed_tensor>;

/* New memory for a DLPack prototype (strided_dlpack_tensor_alloc). */
inline result<dlpack_tensor> dlpack_tensor_alloc(const strided_dl_tensor &prototype)
{
    strided_dl_managed_tensor_versioned *out = nullptr;
    strided_status s = strided_dlpack_tensor_alloc(&prototype, &out);
    if (s != STRIDED_OK)
        return status::from_code(s);
    return dlpack_tensor(out);
}

/* Owns one reference to a buffer (strided/buffer.h). */
class buffer {
  public:
    buffer() noexcept = default;

    buffer(const buffer &other) noexcept : b_(strided_buffer_retain(other.b_))
    {
    }

    buffer(buffer &&other) noexcept : b_(other.b_)
    {
        other.b_ = nullptr;
    }

    buffer &operator=(const buffer &other) noexcept
    {
        strided_buffer *old = b_;
        b_ = strided_buffer_retain(other.b_);
        strided_buffer_release(old);
        return *this;
    }

    buffer &operator=(buffer &&other) noexcept
    {
        if (this != &other) {
            strided_buffer_release(b_);
            b_ = other.b_;
            other.b_ = nullptr;
        }
        return *this;
    }

    ~buffer()
    {
        strided_buffer_release(b_);
    }

    /* Takes over the caller's reference. */
    static buffer adopt(strided_buffer *b) noexcept
    {
        buffer r;
        r.b_ = b;
        return r;
    }

    /* Takes a reference of its own. */
    static buffer share(strided_buffer *b) noexcept
    {
        return adopt(strided_buffer_retain(b));
    }

    /* size bytes from mr on stream (strided_buffer_alloc). */
    static result<buffer> allocate(const memory_resource &mr, std::size_t size,
                                   void *stream = nullptr)
    {
        strided_buffer *out = nullptr;
        return made(strided_buffer_alloc(mr.get(), size, stream, &out), out);
    }

    /* Memory someone else owns (strided_buffer_wrap): release runs once
     * when the last reference goes, never when this fails; NULL borrows. */
    static result<buffer> wrap(void *ptr, std::size_t size, strided_release_fn release = nullptr,
                               void *context = nullptr)
    {
        strided_buffer *out = nullptr;
        return made(strided_buffer_wrap(ptr, size, release, context, &out), out);
    }

    /* As wrap, with the memory's kind given (strided_buffer_wrap_known). */
    static result<buffer> wrap_known(void *ptr, std::size_t size, const strided_memory_info &info,
                                     strided_release_fn release = nullptr, void *context = nullptr)
    {
        strided_buffer *out = nullptr;
        return made(strided_buffer_wrap_known(ptr, size, &info, release, context, &out), out);
    }

    /* Memory mr allocated, released through it (strided_buffer_wrap_resource). */
    static result<buffer> wrap_resource(void *ptr, std::size_t size, const memory_resource &mr,
                                        void *stream = nullptr)
    {
        strided_buffer *out = nullptr;
        return made(strided_buffer_wrap_resource(ptr, size, mr.get(), stream, &out), out);
    }

    strided_buffer *get() const noexcept
    {
        return b_;
    }

    /* Gives the reference back to the caller and leaves this empty. */
    strided_buffer *detach() noexcept
    {
        strided_buffer *b = b_;
        b_ = nullptr;
        return b;
    }

    void reset() noexcept
    {
        strided_buffer_release(b_);
        b_ = nullptr;
    }

    explicit operator bool() const noexcept
    {
        return b_ != nullptr;
    }

    /* The references held now (0 for an empty handle). */
    long use_count() const noexcept
    {
        return b_ ? strided_buffer_use_count(b_) : 0;
    }

    /* The queries below need a buffer (not empty). */
    void *data() const noexcept
    {
        assert(b_);
        return strided_buffer_ptr(b_);
    }

    std::size_t size() const noexcept
    {
        assert(b_);
        return strided_buffer_size(b_);
    }

    /* The resource that releases the memory; empty when there is none. */
    memory_resource resource() const noexcept
    {
        assert(b_);
        return memory_resource::share(strided_buffer_resource(b_));
    }

    strided_memory_info memory_info() const noexcept
    {
        assert(b_);
        return strided_buffer_memory_info(b_);
    }

    bool is_host_only() const noexcept
    {
        assert(b_);
        return strided_buffer_is_host_only(b_);
    }

    /* The DLPack device its memory exports as (strided_buffer_device). */
    strided_device device() const noexcept
    {
        assert(b_);
        return strided_buffer_device(b_);
    }

    status set_deallocation_stream(void *stream) const
    {
        return status::from_code(strided_buffer_set_deallocation_stream(b_, stream));
    }

    status fill(const void *pattern, std::size_t pattern_size, void *stream = nullptr,
                unsigned flags = STRIDED_BUFFER_DEFAULT) const
    {
        return status::from_code(strided_buffer_fill(b_, pattern, pattern_size, stream, flags));
    }

    /* Copy src's bytes into this buffer (strided_buffer_copy). */
    status copy_from(const buffer &src, void *stream = nullptr,
                     unsigned flags = STRIDED_BUFFER_DEFAULT) const
    {
        return status::from_code(strided_buffer_copy(b_, src.b_, stream, flags));
    }

    /* The bytes as an int8 DLPack tensor (strided_buffer_export_dlpack). */
    result<dlpack_tensor> export_dlpack() const
    {
        strided_dl_managed_tensor_versioned *out = nullptr;
        strided_status s = strided_buffer_export_dlpack(b_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return dlpack_tensor(out);
    }

    result<dlpack_tensor_legacy> export_dlpack_legacy() const
    {
        strided_dl_managed_tensor *out = nullptr;
        strided_status s = strided_buffer_export_dlpack_legacy(b_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return dlpack_tensor_legacy(out);
    }

  private:
    /* out by reference, as memory_resource::made. */
    static result<buffer> made(strided_status s, strided_buffer *const &out)
    {
        if (s != STRIDED_OK)
            return status::from_code(s);
        return adopt(out);
    }

    strided_buffer *b_ = nullptr;
};

template <class T> class host_span;

namespace detail {

/* Whether element (0,...,0) at p may be read as a T of layout l. */
inline status check_element(const char *op, const void *p, const strided_layout &l,
                            std::size_t size, std::size_t align)
{
    if (size != static_cast<std::size_t>(l.itemsize))
        return record_failure(STRIDED_ERR_INVALID_ARGUMENT, op,
                              "the element type has %zu bytes, the layout's itemsize is %d", size,
                              static_cast<int>(l.itemsize));
    std::uintptr_t address = reinterpret_cast<std::uintptr_t>(p);
    if (address % align != 0)
        return record_failure(
            STRIDED_ERR_INVALID_ARGUMENT, op,
            "element (0,...,0) at 0x%llx is not aligned to %zu bytes, the element "
            "type's alignment",
            static_cast<unsigned long long>(address), align);
    return status();
}

/* Whether a view's memory may be reached from the host (or a device) for
 * elements that are written (writable) or only read. */
inline status check_view(const char *op, const strided_view &v, bool host, bool writable)
{
    if (v.buffer == nullptr)
        return record_failure(STRIDED_ERR_INVALID_ARGUMENT, op,
                              "the view has no buffer (released)");
    strided_memory_info info = strided_buffer_memory_info(v.buffer);
    if (host && !info.host_accessible)
        return record_failure(
            STRIDED_ERR_INVALID_ARGUMENT, op,
            "the view's memory is not host-accessible (device memory of device %d)",
            info.device_id);
    if (!host && !v.device_accessible)
        return record_failure(STRIDED_ERR_INVALID_ARGUMENT, op,
                              "the view's memory is not device-accessible");
    if (writable && v.readonly)
        return record_failure(STRIDED_ERR_INVALID_ARGUMENT, op,
                              "the view is read-only: ask for const elements");
    return status();
}

} // namespace detail

/* Where to_cuda_mdspan points: the view's device address (the one a kernel
 * uses) or its host address. */
enum class memory_space { device, host };

/* A strided view (strided/view.h) that owns its buffer reference. */
class view {
  public:
    view() noexcept : v_()
    {
    }

    view(const view &other) noexcept : v_(other.v_)
    {
        strided_buffer_retain(v_.buffer);
    }

    view(view &&other) noexcept : v_(other.v_)
    {
        other.v_.buffer = nullptr;
    }

    view &operator=(const view &other) noexcept
    {
        strided_buffer *old = v_.buffer;
        v_ = other.v_;
        strided_buffer_retain(v_.buffer);
        strided_buffer_release(old);
        return *this;
    }

    view &operator=(view &&other) noexcept
    {
        if (this != &other) {
            strided_view_release(&v_);
            v_ = other.v_;
            other.v_.buffer = nullptr;
        }
        return *this;
    }

    ~view()
    {
        strided_view_release(&v_);
    }

    /* Takes over the reference v holds (a view a C call made). */
    static view adopt(const strided_view &v) noexcept
    {
        view r;
        r.v_ = v;
        return r;
    }

    /* Takes a reference of its own to v's buffer. */
    static view share(const strided_view &v) noexcept
    {
        view r;
        r.v_ = v;
        strided_buffer_retain(r.v_.buffer);
        return r;
    }

    /* A view of a buffer (strided_view_from_buffer); dtype: the element
     * type, or none. */
    static result<view> from_buffer(const strided::buffer &b, const strided::layout &l,
                                    std::optional<strided_dtype> dtype = std::nullopt,
                                    bool readonly = false)
    {
        strided_view out;
        return made(strided_view_from_buffer(b.get(), &l.get(), dtype ? &*dtype : nullptr, readonly,
                                             &out),
                    out);
    }

    /* Memory described by the address of element (0,...,0) and a layout
     * (strided_view_wrap); device none: the driver classifies it; release
     * runs once when the last reference goes, never when this fails. */
    static result<view> wrap(void *element0, const strided::layout &l,
                             std::optional<strided_dtype> dtype = std::nullopt,
                             bool readonly = false,
                             std::optional<strided_device> device = std::nullopt,
                             strided_release_fn release = nullptr, void *context = nullptr)
    {
        strided_view out;
        return made(strided_view_wrap(element0, &l.get(), dtype ? &*dtype : nullptr, readonly,
                                      device ? &*device : nullptr, release, context, &out),
                    out);
    }

    /* Takes the tensor over (strided_view_import_dlpack): its deleter runs
     * once, before this returns when the import fails. */
    static result<view> import_dlpack(dlpack_tensor &&tensor)
    {
        strided_view out;
        return made(strided_view_import_dlpack(tensor.detach(), true, &out), out);
    }

    static result<view> import_dlpack(dlpack_tensor_legacy &&tensor)
    {
        strided_view out;
        return made(strided_view_import_dlpack(tensor.detach(), false, &out), out);
    }

    /* As above, for a tensor held as a C pointer: taken over likewise. */
    static result<view> import_dlpack(strided_dl_managed_tensor_versioned *tensor)
    {
        strided_view out;
        return made(strided_view_import_dlpack(tensor, true, &out), out);
    }

    static result<view> import_dlpack(strided_dl_managed_tensor *tensor)
    {
        strided_view out;
        return made(strided_view_import_dlpack(tensor, false, &out), out);
    }

    /* The C view, to pass to the C API (its buffer reference stays
     * here). */
    const strided_view &get() const noexcept
    {
        return v_;
    }

    /* Gives the buffer reference back to the caller in a C view (release
     * it with strided_view_release) and leaves this empty. */
    strided_view detach() noexcept
    {
        strided_view v = v_;
        v_.buffer = nullptr;
        return v;
    }

    void reset() noexcept
    {
        strided_view_release(&v_);
    }

    /* False for an empty (default, moved-from or reset) view. */
    explicit operator bool() const noexcept
    {
        return v_.buffer != nullptr;
    }

    strided::buffer buffer() const noexcept
    {
        return strided::buffer::share(v_.buffer);
    }

    strided::layout layout() const noexcept
    {
        return strided::layout(v_.layout);
    }

    std::int64_t origin() const noexcept
    {
        return v_.origin;
    }

    std::optional<strided_dtype> dtype() const noexcept
    {
        if (!v_.has_dtype)
            return std::nullopt;
        return v_.dtype;
    }

    strided_device device() const noexcept
    {
        return v_.device;
    }

    int home_device() const noexcept
    {
        return v_.home_device;
    }

    bool device_accessible() const noexcept
    {
        return v_.device_accessible;
    }

    bool readonly() const noexcept
    {
        return v_.readonly;
    }

    /* The host address of element (0,...,0); NULL for an empty view. */
    void *ptr() const noexcept
    {
        return strided_view_ptr(&v_);
    }

    /* The address a device reaches element (0,...,0) at; 0 when none. */
    std::uintptr_t device_ptr() const noexcept
    {
        return strided_view_device_ptr(&v_);
    }

    /* The host address of element (0,...,0) as a T*. Checked by assert
     * only: sizeof(T) is the itemsize, the memory is host-accessible. Use
     * as_host_span for checks that are statuses. */
    template <class T> T *data() const noexcept
    {
        assert(sizeof(T) == static_cast<std::size_t>(v_.layout.itemsize));
        assert(v_.buffer == nullptr || strided_buffer_memory_info(v_.buffer).host_accessible);
        return static_cast<T *>(strided_view_ptr(&v_));
    }

    /* The elements for the host (see the header comment for the checks;
     * T const for a read-only view). */
    template <class T> result<host_span<T>> as_host_span() const;

    /* Another view of the same buffer (strided_view_view): dtype none
     * keeps the view's. */
    result<view> with_layout(const strided::layout &l,
                             std::optional<strided_dtype> dtype = std::nullopt) const
    {
        strided_view out;
        return made(strided_view_view(&v_, &l.get(), dtype ? &*dtype : nullptr, &out), out);
    }

    /* with_layout(layout().slice(indices)). */
    result<view> slice(span<const index> indices) const
    {
        result<strided::layout> l = strided::layout(v_.layout).slice(indices);
        if (!l)
            return l.error();
        return with_layout(*l);
    }

    /* with_layout(layout().permute(axes)). */
    result<view> permute(span<const int> axes) const
    {
        result<strided::layout> l = strided::layout(v_.layout).permute(axes);
        if (!l)
            return l.error();
        return with_layout(*l);
    }

    /* A versioned DLPack tensor holding a reference to the buffer
     * (strided_view_export_dlpack). */
    result<dlpack_tensor> export_dlpack() const
    {
        strided_dl_managed_tensor_versioned *out = nullptr;
        strided_status s = strided_view_export_dlpack(&v_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return dlpack_tensor(out);
    }

    result<dlpack_tensor_legacy> export_dlpack_legacy() const
    {
        strided_dl_managed_tensor *out = nullptr;
        strided_status s = strided_view_export_dlpack_legacy(&v_, &out);
        if (s != STRIDED_OK)
            return status::from_code(s);
        return dlpack_tensor_legacy(out);
    }

  private:
    /* out by reference, as memory_resource::made. */
    static result<view> made(strided_status s, const strided_view &out)
    {
        if (s != STRIDED_OK)
            return status::from_code(s);
        return adopt(out);
    }

    strided_view v_;
};

/* Copy view src into view dst (strided_view_copy). */
inline status copy(const view &dst, const view &src, void *stream = nullptr,
                   unsigned flags = STRIDED_COPY_DEFAULT)
{
    return status::from_code(strided_view_copy(&dst.get(), &src.get(), stream, flags));
}

/* Copy between host memory given by element (0,...,0) and a layout each
 * (strided_copy_host; nthreads 0: by the copy's size). */
inline status copy_host(void *dst, const layout &dst_layout, const void *src,
                        const layout &src_layout, int nthreads = 0)
{
    return status::from_code(strided_copy_host(dst, &dst_layout.get(), src, &src_layout.get(),
                                               nthreads));
}

/* Elements of type T in host memory, reached through a layout: a pointer
 * to element (0,...,0) and a copy of the layout. It owns nothing. */
template <class T> class host_span {
    static_assert(std::is_object_v<T> && !std::is_array_v<T>, "host_span<T>: T is an element type");

  public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;
    using index_type = std::int64_t;

    host_span() noexcept = default;

    /* Checks that sizeof(T) is the layout's itemsize and that element0 is
     * aligned for T; the memory is the caller's to vouch for. */
    static result<host_span> make(T *element0, const strided::layout &l)
    {
        status s = detail::check_element("host_span", element0, l.get(), sizeof(T), alignof(T));
        if (!s)
            return s;
        return host_span(element0, l);
    }

    /* host_span<T> to host_span<const T>. */
    template <class U = T, std::enable_if_t<std::is_const_v<U>, int> = 0>
    host_span(const host_span<std::remove_const_t<U>> &other) noexcept
        : data_(other.data()), layout_(other.layout())
    {
    }

    /* The address of element (0,...,0). */
    T *data() const noexcept
    {
        return data_;
    }

    const strided::layout &layout() const noexcept
    {
        return layout_;
    }

    int rank() const noexcept
    {
        return layout_.ndim();
    }

    std::int64_t extent(int axis) const noexcept
    {
        return layout_.extent(axis);
    }

    /* In elements. */
    std::int64_t stride(int axis) const noexcept
    {
        return layout_.stride(axis);
    }

    /* The number of elements. */
    std::int64_t size() const noexcept
    {
        return layout_.volume();
    }

    bool empty() const noexcept
    {
        return size() == 0;
    }

    /* The element at (i, j, ...): one index per axis, each in
     * [0, extent) (checked by assert). */
    template <class... I> T &operator()(I... i) const noexcept
    {
        static_assert((std::is_integral_v<I> && ...), "host_span: indices are integers");
        assert(sizeof...(I) == static_cast<std::size_t>(layout_.ndim()));
        [[maybe_unused]] const strided_layout &c = layout_.get();
        std::int64_t offset = 0;
        [[maybe_unused]] int k = 0;
        ((offset += step(c, k++, static_cast<std::int64_t>(i))), ...);
        return data_[offset];
    }

    /* The element at a multi-index given as an array. */
    T &at(span<const std::int64_t> index) const noexcept
    {
        assert(index.size() == static_cast<std::size_t>(layout_.ndim()));
        const strided_layout &c = layout_.get();
        std::int64_t offset = 0;
        for (int k = 0; k < c.ndim; k++)
            offset += step(c, k, index[static_cast<std::size_t>(k)]);
        return data_[offset];
    }

    /* Calls f(element) for every element, in C index order. */
    template <class F> void for_each(F &&f) const
    {
        const strided_layout &c = layout_.get();
        if (layout_.volume() == 0)
            return;
        std::int64_t i[STRIDED_MAX_NDIM] = {0};
        std::int64_t offset = 0;
        for (;;) {
            f(data_[offset]);
            int k = c.ndim - 1;
            for (; k >= 0; k--) {
                if (++i[k] < c.shape[k]) {
                    offset += c.strides[k];
                    break;
                }
                offset -= (c.shape[k] - 1) * c.strides[k];
                i[k] = 0;
            }
            if (k < 0)
                return;
        }
    }

  private:
    host_span(T *element0, const strided::layout &l) noexcept : data_(element0), layout_(l)
    {
    }

    static std::int64_t step(const strided_layout &c, int k, std::int64_t i) noexcept
    {
        assert(i >= 0 && i < c.shape[k] && "host_span: index out of range");
        return i * c.strides[k];
    }

    T *data_ = nullptr;
    strided::layout layout_;
};

template <class T> result<host_span<T>> view::as_host_span() const
{
    status s = detail::check_view("host_span", v_, true, !std::is_const_v<T>);
    if (!s)
        return s;
    return host_span<T>::make(static_cast<T *>(strided_view_ptr(&v_)), strided::layout(v_.layout));
}

namespace detail {

/* The extents and strides std::layout_stride takes for a layout, or the
 * reason it cannot: see "mdspan" in the header comment. */
inline status layout_stride_of(const char *op, const strided_layout &l, std::size_t rank,
                               std::size_t *extents, std::size_t *strides)
{
    if (static_cast<std::size_t>(l.ndim) != rank)
        return record_failure(STRIDED_ERR_INVALID_ARGUMENT, op,
                              "the layout has %d dimensions, the mdspan's rank is %zu",
                              static_cast<int>(l.ndim), rank);
    int n = l.ndim;
    std::int64_t volume = strided_layout_volume(&l);
    for (int k = 0; k < n; k++)
        extents[k] = static_cast<std::size_t>(l.shape[k]);
    if (volume == 0) {
        std::size_t s = 1;
        for (int k = n - 1; k >= 0; k--) {
            strides[k] = s;
            s *= extents[k] > 1 ? extents[k] : 1;
        }
        return status();
    }
    int order[STRIDED_MAX_NDIM];
    int m = 0;
    for (int k = 0; k < n; k++) {
        strides[k] = 1;
        if (l.shape[k] == 1)
            continue;
        if (l.strides[k] <= 0) {
            std::size_t length = strided_layout_format(&l, nullptr, 0);
            std::string text(length, '\0');
            strided_layout_format(&l, &text[0], length + 1);
            return record_failure(
                STRIDED_ERR_INVALID_ARGUMENT, op,
                "std::layout_stride cannot express the %s stride %lld of axis %d of %s",
                l.strides[k] < 0 ? "negative" : "zero", static_cast<long long>(l.strides[k]), k,
                text.c_str());
        }
        strides[k] = static_cast<std::size_t>(l.strides[k]);
        /* Insertion sort by stride: there are at most 64 axes. */
        int j = m++;
        for (; j > 0 && l.strides[order[j - 1]] > l.strides[k]; j--)
            order[j] = order[j - 1];
        order[j] = k;
    }
    /* layout_stride's rule for unique layouts: each stride, in increasing
     * order, reaches past the span of the axis before it. */
    for (int j = 1; j < m; j++) {
        int a = order[j - 1], b = order[j];
        if (l.strides[b] / l.shape[a] < l.strides[a]) {
            std::size_t length = strided_layout_format(&l, nullptr, 0);
            std::string text(length, '\0');
            strided_layout_format(&l, &text[0], length + 1);
            return record_failure(STRIDED_ERR_INVALID_ARGUMENT, op,
                                  "std::layout_stride cannot express %s: axes %d and %d overlap",
                                  text.c_str(), a, b);
        }
    }
    return status();
}

template <class MdSpan, class T, std::size_t... K>
MdSpan make_mdspan(T *p, [[maybe_unused]] const std::size_t *extents,
                   [[maybe_unused]] const std::size_t *strides, std::index_sequence<K...>)
{
    using mapping = typename MdSpan::mapping_type;
    using extents_type = typename MdSpan::extents_type;
    using stride_array = std::remove_cv_t<
        std::remove_reference_t<decltype(std::declval<const mapping &>().strides())>>;
    return MdSpan(p, mapping(extents_type(extents[K]...), stride_array{{strides[K]...}}));
}

template <class MdSpan, class T, std::size_t Rank>
result<MdSpan> to_mdspan(const char *op, T *element0, const strided_layout &l)
{
    status s = check_element(op, element0, l, sizeof(T), alignof(T));
    if (!s)
        return s;
    // Written by layout_stride_of; initialized for g++ 13, which cannot see it.
    std::size_t extents[Rank + 1] = {};
    std::size_t strides[Rank + 1] = {};
    s = layout_stride_of(op, l, Rank, extents, strides);
    if (!s)
        return s;
    return make_mdspan<MdSpan>(element0, extents, strides, std::make_index_sequence<Rank>());
}

} // namespace detail

#if STRIDED_HPP_HAS_STD_MDSPAN
template <class T, std::size_t Rank>
using mdspan = std::mdspan<T, std::dextents<std::size_t, Rank>, std::layout_stride>;

/* The host memory of a view as a std::mdspan (see "mdspan" in the header
 * comment). */
template <class T, std::size_t Rank> result<mdspan<T, Rank>> to_mdspan(const view &v)
{
    status s = detail::check_view("to_mdspan", v.get(), true, !std::is_const_v<T>);
    if (!s)
        return s;
    return detail::to_mdspan<mdspan<T, Rank>, T, Rank>("to_mdspan", static_cast<T *>(v.ptr()),
                                                       v.get().layout);
}

/* Memory given by element (0,...,0) and a layout, as a std::mdspan. */
template <class T, std::size_t Rank> result<mdspan<T, Rank>> to_mdspan(T *element0, const layout &l)
{
    return detail::to_mdspan<mdspan<T, Rank>, T, Rank>("to_mdspan", element0, l.get());
}
#endif

#if STRIDED_HPP_HAS_CUDA_MDSPAN
template <class T, std::size_t Rank>
using cuda_mdspan =
    ::cuda::std::mdspan<T, ::cuda::std::dextents<std::size_t, Rank>, ::cuda::std::layout_stride>;

/* A view as a cuda::std::mdspan, at its device address (memory_space::device,
 * for a kernel) or its host address (see "mdspan" in the header comment). */
template <class T, std::size_t Rank>
result<cuda_mdspan<T, Rank>> to_cuda_mdspan(const view &v,
                                            memory_space where = memory_space::device)
{
    bool host = where == memory_space::host;
    status s = detail::check_view("to_cuda_mdspan", v.get(), host, !std::is_const_v<T>);
    if (!s)
        return s;
    T *element0 = host ? static_cast<T *>(v.ptr()) : reinterpret_cast<T *>(v.device_ptr());
    return detail::to_mdspan<cuda_mdspan<T, Rank>, T, Rank>("to_cuda_mdspan", element0,
                                                            v.get().layout);
}

/* Memory given by element (0,...,0) and a layout, as a cuda::std::mdspan. */
template <class T, std::size_t Rank>
result<cuda_mdspan<T, Rank>> to_cuda_mdspan(T *element0, const layout &l)
{
    return detail::to_mdspan<cuda_mdspan<T, Rank>, T, Rank>("to_cuda_mdspan", element0, l.get());
}
#endif

} // namespace strided

namespace std {
template <> struct hash<strided::layout> {
    std::size_t operator()(const strided::layout &l) const noexcept
    {
        return static_cast<std::size_t>(l.hash());
    }
};
} // namespace std

#endif
