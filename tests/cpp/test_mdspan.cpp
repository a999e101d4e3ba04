/*
 * test_mdspan.cpp: views as mdspans with layout_stride. Built three ways:
 *   - with CCCL's headers on the include path: to_cuda_mdspan
 *     (cuda::std::mdspan), at the host address and at the device address;
 *   - with STRIDED_TEST_STD_MDSPAN, in C++23 mode with std_mdspan/mdspan, a
 *     stand-in <mdspan> that names cuda::std's mdspan in std (the standard
 *     libraries here have no <mdspan>): to_mdspan, the std::mdspan path;
 *   - without either: the test checks that the header saw no mdspan and
 *     skips.
 */
#include "test_util.hpp"

#if defined(STRIDED_TEST_STD_MDSPAN)
#if !STRIDED_HPP_HAS_STD_MDSPAN
#error "strided.hpp did not take the stand-in <mdspan>"
#endif
#define HAVE_MDSPAN 1
#define OP "to_mdspan"
#define TO_MDSPAN(T, Rank, v) strided::to_mdspan<T, Rank>(v)
#define TO_MDSPAN_AT(T, Rank, p, l) strided::to_mdspan<T, Rank>(p, l)
#elif STRIDED_HPP_HAS_CUDA_MDSPAN
#define HAVE_MDSPAN 1
#define OP "to_cuda_mdspan"
#define TO_MDSPAN(T, Rank, v) strided::to_cuda_mdspan<T, Rank>(v, strided::memory_space::host)
#define TO_MDSPAN_AT(T, Rank, p, l) strided::to_cuda_mdspan<T, Rank>(p, l)
#else
#define HAVE_MDSPAN 0
#endif

#if HAVE_MDSPAN

static std::vector<float> counting(size_t n)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++)
        v[i] = static_cast<float>(i);
    return v;
}

static strided::view wrap(std::vector<float> &memory, strided::span<const int64_t> shape,
                          bool readonly = false)
{
    strided::result<strided::view> v = strided::view::wrap(memory.data(),
                                                           *strided::layout::make(shape, 4),
                                                           strided::dtype_of<float>(), readonly,
                                                           strided_device{STRIDED_DEVICE_CPU, 0});
    if (!v)
        fail_msg("wrap: %s", v.message().c_str());
    return *std::move(v);
}

/* The element at (i, j) through the mapping (portable across the
 * operator() and operator[] of the mdspan implementations). */
template <class M> static auto &at(const M &m, size_t i, size_t j)
{
    return m.data_handle()[m.mapping()(i, j)];
}

/* Every element of a 2-d view through the mdspan and through host_span. */
static void assert_same_elements(const strided::view &v)
{
    auto m = TO_MDSPAN(const float, 2, v);
    assert_ok(m);
    strided::host_span<const float> s = *v.as_host_span<const float>();
    assert_int_equal(m->extent(0), s.extent(0));
    assert_int_equal(m->extent(1), s.extent(1));
    assert_true(m->is_unique());
    for (size_t i = 0; i < m->extent(0); i++)
        for (size_t j = 0; j < m->extent(1); j++)
            assert_ptr_equal(&at(*m, i, j), &s(i, j));
}

static void test_c_order_view(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    auto m = TO_MDSPAN(float, 2, v);
    assert_ok(m);
    assert_ptr_equal(m->data_handle(), memory.data());
    assert_int_equal(m->rank(), 2);
    assert_int_equal(m->extent(0), 3);
    assert_int_equal(m->extent(1), 4);
    assert_int_equal(m->stride(0), 4);
    assert_int_equal(m->stride(1), 1);
    assert_int_equal(m->size(), 12);
    assert_int_equal(m->mapping().required_span_size(), 12);
    assert_true(at(*m, 2, 1) == 9.0f);
    at(*m, 1, 3) = -7.0f;
    assert_true(memory[7] == -7.0f);
    assert_same_elements(v);
}

static void test_sliced_and_transposed_views(void **state)
{
    (void)state;
    std::vector<float> memory = counting(24);
    strided::view v = wrap(memory, {4, 6});
    strided::view sliced = *v.slice({strided::index::range(1, 4, 2), strided::index::from(1, 2)});
    auto m = TO_MDSPAN(const float, 2, sliced);
    assert_ok(m);
    assert_ptr_equal(m->data_handle(), memory.data() + 7);
    assert_int_equal(m->stride(0), 12);
    assert_int_equal(m->stride(1), 2);
    assert_same_elements(sliced);

    strided::view t = *v.permute({1, 0});
    auto mt = TO_MDSPAN(float, 2, t);
    assert_ok(mt);
    assert_int_equal(mt->stride(0), 1);
    assert_int_equal(mt->stride(1), 6);
    assert_true(at(*mt, 5, 2) == 17.0f);
    assert_same_elements(t);
    assert_same_elements(*t.slice({strided::index::range(1, 5)}));
}

static void test_three_and_zero_dimensions(void **state)
{
    (void)state;
    std::vector<float> memory = counting(24);
    strided::view v = wrap(memory, {2, 3, 4});
    auto m = TO_MDSPAN(float, 3, *v.permute({2, 0, 1}));
    assert_ok(m);
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < 2; i++)
            for (size_t j = 0; j < 3; j++)
                assert_true(m->data_handle()[m->mapping()(k, i, j)] ==
                            static_cast<float>(i * 12 + j * 4 + k));

    strided::view scalar = *v.slice({1, 2, 3});
    auto s = TO_MDSPAN(float, 0, scalar);
    assert_ok(s);
    assert_int_equal(s->rank(), 0);
    assert_int_equal(s->size(), 1);
    assert_true(s->data_handle()[s->mapping()()] == 23.0f);
}

static void test_strides_that_play_no_part(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    /* Extent-1 axes with a zero and a negative stride: given as 1. */
    strided::view unit = *v.with_layout(make_layout({3, 1, 4, 1}, {4, 0, 1, -5}, 4));
    auto m = TO_MDSPAN(float, 4, unit);
    assert_ok(m);
    assert_int_equal(m->stride(0), 4);
    assert_int_equal(m->stride(1), 1);
    assert_int_equal(m->stride(2), 1);
    assert_int_equal(m->stride(3), 1);
    assert_true(m->data_handle()[m->mapping()(2, 0, 3, 0)] == 11.0f);

    /* No elements: every stride of the slice is 0; C-order strides of the
     * shape instead. */
    strided::view empty = *v.slice({strided::index::range(1, 1)});
    assert_string_equal(empty.layout().format().c_str(), "(0,4):(0,0)");
    auto e = TO_MDSPAN(float, 2, empty);
    assert_ok(e);
    assert_int_equal(e->size(), 0);
    assert_int_equal(e->extent(1), 4);
    assert_int_equal(e->stride(0), 4);
    assert_int_equal(e->stride(1), 1);
    assert_int_equal(e->mapping().required_span_size(), 0);
}

static void test_layouts_layout_stride_cannot_express(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    assert_fails(TO_MDSPAN(float, 2, *v.slice({strided::index::all(-1)})),
                 STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": std::layout_stride cannot express the negative stride -4 of axis 0 of "
                    "(3,4):(-4,1)+8");
    assert_string_equal(strided_last_error(),
                        OP ": std::layout_stride cannot express the negative stride -4 of axis 0 "
                           "of (3,4):(-4,1)+8");
    assert_fails(TO_MDSPAN(float, 2, *v.slice({strided::index::all(1), strided::index::all(-2)})),
                 STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": std::layout_stride cannot express the negative stride -2 of axis 1 of "
                    "(3,2):(4,-2)+3");
    strided::view row = *v.slice({0});
    strided::view broadcast = *row.with_layout(*row.layout().broadcast_to({2, 4}));
    assert_fails(TO_MDSPAN(const float, 2, broadcast), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": std::layout_stride cannot express the zero stride 0 of axis 0 of "
                    "(2,4):(0,1)");
    strided::view overlapping = *v.with_layout(make_layout({2, 2}, {1, 1}, 4));
    assert_fails(TO_MDSPAN(float, 2, overlapping), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": std::layout_stride cannot express (2,2):(1,1): axes 0 and 1 overlap");
    strided::view interleaved = *v.with_layout(make_layout({2, 3}, {3, 2}, 4));
    assert_fails(TO_MDSPAN(float, 2, interleaved), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": std::layout_stride cannot express (2,3):(3,2): axes 1 and 0 overlap");
    /* Gapped but unique: accepted. */
    assert_same_elements(*v.with_layout(make_layout({2, 2}, {5, 2}, 4)));
}

static void test_rank_element_and_access_checks(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    assert_fails(TO_MDSPAN(float, 3, v), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": the layout has 2 dimensions, the mdspan's rank is 3");
    assert_fails(TO_MDSPAN(double, 2, v), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": the element type has 8 bytes, the layout's itemsize is 4");
    strided::view readonly = wrap(memory, {3, 4}, true);
    assert_fails(TO_MDSPAN(float, 2, readonly), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": the view is read-only: ask for const elements");
    assert_ok(TO_MDSPAN(const float, 2, readonly));
    assert_fails(TO_MDSPAN(float, 2, strided::view()), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": the view has no buffer (released)");
    auto bits = TO_MDSPAN(const uint32_t, 2, v);
    assert_ok(bits);

    /* Memory and a layout, without a view. */
    strided::layout l = make_layout({4, 3}, {1, 4}, 4);
    auto m = TO_MDSPAN_AT(float, 2, memory.data() + 1, l);
    assert_ok(m);
    assert_true(at(*m, 1, 2) == 10.0f);
    assert_fails(TO_MDSPAN_AT(float, 1, memory.data(), l), STRIDED_ERR_INVALID_ARGUMENT,
                 OP ": the layout has 2 dimensions, the mdspan's rank is 1");
    unsigned char *bytes = reinterpret_cast<unsigned char *>(memory.data());
    auto odd = TO_MDSPAN_AT(float, 2, reinterpret_cast<float *>(bytes + 2), l);
    assert_int_equal(odd.code(), STRIDED_ERR_INVALID_ARGUMENT);
}

#if !defined(STRIDED_TEST_STD_MDSPAN)
/* to_cuda_mdspan's default: the device address, for a kernel. Device
 * memory is vouched for with wrap_known (no driver): it is never read. */
static void test_cuda_mdspan_at_the_device_address(void **state)
{
    (void)state;
    std::vector<float> memory(24);
    uintptr_t device_address = 0x7f0000000000;
    strided_memory_info info = {STRIDED_MEMORY_DEVICE, 0, false, true, false, false,
                                device_address};
    strided::buffer b = *strided::buffer::wrap_known(memory.data(), 96, info);
    strided::view v = *strided::view::from_buffer(b, *strided::layout::make({4, 6}, 4),
                                                  strided::dtype_of<float>());
    strided::view t = *v.slice({strided::index::from(1)})->permute({1, 0});
    assert_int_equal(t.device_ptr(), device_address + 24);
    strided::result<strided::cuda_mdspan<float, 2>> m = strided::to_cuda_mdspan<float, 2>(t);
    assert_ok(m);
    assert_ptr_equal(m->data_handle(), reinterpret_cast<float *>(device_address + 24));
    assert_int_equal(m->stride(0), 1);
    assert_int_equal(m->stride(1), 6);
    auto on_host = strided::to_cuda_mdspan<float, 2>(t, strided::memory_space::host);
    assert_fails(on_host, STRIDED_ERR_INVALID_ARGUMENT,
                 "to_cuda_mdspan: the view's memory is not host-accessible (device memory of "
                 "device 0)");

    std::vector<float> host = counting(4);
    strided::view h = wrap(host, {4});
    auto on_device = strided::to_cuda_mdspan<float, 1>(h);
    assert_fails(on_device, STRIDED_ERR_INVALID_ARGUMENT,
                 "to_cuda_mdspan: the view's memory is not device-accessible");
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_order_view),
        cmocka_unit_test(test_sliced_and_transposed_views),
        cmocka_unit_test(test_three_and_zero_dimensions),
        cmocka_unit_test(test_strides_that_play_no_part),
        cmocka_unit_test(test_layouts_layout_stride_cannot_express),
        cmocka_unit_test(test_rank_element_and_access_checks),
#if !defined(STRIDED_TEST_STD_MDSPAN)
        cmocka_unit_test(test_cuda_mdspan_at_the_device_address),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_no_mdspan_here(void **state)
{
    (void)state;
    static_assert(!STRIDED_HPP_HAS_STD_MDSPAN && !STRIDED_HPP_HAS_CUDA_MDSPAN,
                  "no mdspan was found");
    print_message("no <mdspan> and no <cuda/std/mdspan>: to_mdspan and to_cuda_mdspan are "
                  "not declared\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_mdspan_here),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
