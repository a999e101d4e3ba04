/*
 * test_host_span.cpp: element access to host memory through views:
 * host_span over C-order, sliced, transposed, broadcast and negative-stride
 * views, writes, for_each's order, view::data<T>(), and the checks that are
 * statuses (element size, alignment, read-only, released views, memory the
 * host cannot reach).
 */
#include "test_util.hpp"

/* 0, 1, 2, ... as floats: element (i, j) of a 3x4 C-order array is
 * i * 4 + j. */
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

template <class T> static strided::host_span<T> span_of(const strided::view &v)
{
    strided::result<strided::host_span<T>> s = v.as_host_span<T>();
    if (!s)
        fail_msg("as_host_span: %s", s.message().c_str());
    return *s;
}

static void test_c_order_view(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    strided::host_span<float> s = span_of<float>(v);
    assert_ptr_equal(s.data(), memory.data());
    assert_ptr_equal(v.data<float>(), memory.data());
    assert_int_equal(s.rank(), 2);
    assert_int_equal(s.extent(0), 3);
    assert_int_equal(s.extent(1), 4);
    assert_int_equal(s.stride(0), 4);
    assert_int_equal(s.stride(1), 1);
    assert_int_equal(s.size(), 12);
    assert_false(s.empty());
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            assert_true(s(i, j) == static_cast<float>(i * 4 + j));
            assert_true(s.at({i, j}) == static_cast<float>(i * 4 + j));
        }
    s(1, 2) = 100.0f;
    assert_true(memory[6] == 100.0f);
    s.at({2, 3}) = 200.0f;
    assert_true(memory[11] == 200.0f);
    /* Indices of any integer type. */
    assert_true(s(size_t{2}, static_cast<unsigned char>(3)) == 200.0f);
}

static void test_sliced_view(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    strided::view sliced = *v.slice({strided::index::range(1, 3), strided::index::all(2)});
    assert_string_equal(sliced.layout().format().c_str(), "(2,2):(4,2)+4");
    strided::host_span<const float> s = span_of<const float>(sliced);
    assert_ptr_equal(s.data(), memory.data() + 4);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            assert_true(s(i, j) == static_cast<float>((1 + i) * 4 + 2 * j));
    strided::view row = *v.slice({2});
    strided::host_span<const float> r = span_of<const float>(row);
    assert_int_equal(r.rank(), 1);
    for (int j = 0; j < 4; j++)
        assert_true(r(j) == static_cast<float>(8 + j));
}

static void test_transposed_view(void **state)
{
    (void)state;
    std::vector<float> memory = counting(24);
    strided::view v = wrap(memory, {2, 3, 4});
    strided::view t = *v.permute({2, 0, 1});
    strided::host_span<float> s = span_of<float>(t);
    assert_int_equal(s.extent(0), 4);
    assert_int_equal(s.stride(0), 1);
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                assert_true(s(k, i, j) == static_cast<float>(i * 12 + j * 4 + k));
}

static void test_negative_stride_views(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    strided::view reversed = *v.slice({strided::index::all(-1), strided::index::all(-1)});
    assert_string_equal(reversed.layout().format().c_str(), "(3,4):(-4,-1)+11");
    strided::host_span<float> s = span_of<float>(reversed);
    assert_ptr_equal(s.data(), memory.data() + 11);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            assert_true(s(i, j) == static_cast<float>((2 - i) * 4 + (3 - j)));
    strided::view stepped = *v.slice({strided::index::all(1), strided::index::range(3, 0, -2)});
    strided::host_span<const float> t = span_of<const float>(stepped);
    assert_int_equal(t.extent(1), 2);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            assert_true(t(i, j) == static_cast<float>(i * 4 + 3 - 2 * j));
    s(0, 0) = -1.0f;
    assert_true(memory[11] == -1.0f);

    /* A wrapped layout with a negative stride: element (0,...,0) is not
     * the lowest address. */
    strided::layout down = make_layout({4}, {-3}, 4);
    strided::result<strided::view> w = strided::view::wrap(memory.data() + 9, down, std::nullopt,
                                                           false,
                                                           strided_device{STRIDED_DEVICE_CPU, 0});
    assert_ok(w);
    strided::host_span<float> d = span_of<float>(*w);
    assert_ptr_equal(d.data(), memory.data() + 9);
    assert_true(d(3) == memory[0]);
    assert_true(d(1) == memory[6]);
}

static void test_broadcast_view(void **state)
{
    (void)state;
    std::vector<float> memory = counting(4);
    strided::view v = wrap(memory, {4});
    strided::view b = *v.with_layout(*v.layout().broadcast_to({3, 4}));
    strided::host_span<const float> s = span_of<const float>(b);
    assert_int_equal(s.stride(0), 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            assert_true(s(i, j) == static_cast<float>(j));
}

static void test_for_each_visits_in_c_order(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    strided::view t = *v.slice({strided::index::all(-1)})->permute({1, 0});
    std::vector<float> seen;
    span_of<const float>(t).for_each([&](const float &x) { seen.push_back(x); });
    std::vector<float> want = {8, 4, 0, 9, 5, 1, 10, 6, 2, 11, 7, 3};
    assert_true(seen == want);

    int calls = 0;
    span_of<float>(*v.slice({strided::index::range(1, 1)})).for_each([&](float &) { calls++; });
    assert_int_equal(calls, 0);
    span_of<float>(*v.slice({1, 2})).for_each([&](float &x) {
        calls++;
        x = 7.0f;
    });
    assert_int_equal(calls, 1);
    assert_true(memory[6] == 7.0f);
    assert_true(span_of<float>(*v.slice({1, 2}))() == 7.0f);
}

static void test_views_of_other_element_types(void **state)
{
    (void)state;
    std::vector<float> memory = counting(4);
    strided::view v = wrap(memory, {4});
    strided::host_span<const uint32_t> bits = span_of<const uint32_t>(v);
    uint32_t one;
    std::memcpy(&one, &memory[1], 4);
    assert_int_equal(bits(1), one);
    using four_bytes = std::array<unsigned char, 4>;
    assert_int_equal(span_of<four_bytes>(v).size(), 4);
    strided::host_span<float> writable = span_of<float>(v);
    strided::host_span<const float> readonly = writable;
    assert_ptr_equal(readonly.data(), writable.data());
    assert_true(readonly.layout() == writable.layout());
}

static void test_host_span_checks(void **state)
{
    (void)state;
    std::vector<float> memory = counting(12);
    strided::view v = wrap(memory, {3, 4});
    assert_fails(v.as_host_span<double>(), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_span: the element type has 8 bytes, the layout's itemsize is 4");
    assert_string_equal(strided_last_error(),
                        "host_span: the element type has 8 bytes, the layout's itemsize is 4");

    strided::view readonly = wrap(memory, {3, 4}, true);
    assert_fails(readonly.as_host_span<float>(), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_span: the view is read-only: ask for const elements");
    assert_ok(readonly.as_host_span<const float>());

    strided::view released = v;
    released.reset();
    assert_fails(released.as_host_span<const float>(), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_span: the view has no buffer (released)");
    assert_fails(strided::view().as_host_span<float>(), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_span: the view has no buffer (released)");

    /* Element (0,...,0) one byte past a float's alignment. */
    alignas(8) unsigned char bytes[20] = {};
    strided::result<strided::view> odd = strided::view::wrap(bytes + 1,
                                                             *strided::layout::make({4}, 4),
                                                             std::nullopt, false,
                                                             strided_device{STRIDED_DEVICE_CPU, 0});
    assert_ok(odd);
    strided::result<strided::host_span<float>> misaligned = odd->as_host_span<float>();
    assert_int_equal(misaligned.code(), STRIDED_ERR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(misaligned.message().c_str(),
                                "host_span: element (0,...,0) at 0x"));
    assert_non_null(std::strstr(misaligned.message().c_str(),
                                "is not aligned to 4 bytes, the element "
                                "type's alignment"));
    assert_ok(odd->as_host_span<std::array<unsigned char, 4>>());

    /* Memory only a device reaches (the kind is vouched for: no driver). */
    strided_memory_info info = {STRIDED_MEMORY_DEVICE,
                                0,
                                false,
                                true,
                                false,
                                false,
                                reinterpret_cast<uintptr_t>(memory.data())};
    strided::result<strided::buffer> device = strided::buffer::wrap_known(memory.data(), 48, info);
    assert_ok(device);
    strided::result<strided::view> dv =
        strided::view::from_buffer(*device, *strided::layout::make({3, 4}, 4));
    assert_ok(dv);
    assert_fails(dv->as_host_span<const float>(), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_span: the view's memory is not host-accessible (device memory of device "
                 "0)");

    /* host_span::make: no view, the same element checks. */
    strided::layout l = *strided::layout::make({3, 4}, 4);
    assert_ok(strided::host_span<float>::make(memory.data(), l));
    assert_fails(strided::host_span<int16_t>::make(nullptr, l), STRIDED_ERR_INVALID_ARGUMENT,
                 "host_span: the element type has 2 bytes, the layout's itemsize is 4");
    strided::host_span<float> empty;
    assert_int_equal(empty.rank(), 0);
    assert_null(empty.data());
}

static void test_copies_between_views(void **state)
{
    (void)state;
    std::vector<float> from = counting(12);
    std::vector<float> to(12);
    strided::view src = wrap(from, {3, 4});
    strided::view dst = *wrap(to, {4, 3}).permute({1, 0});
    assert_ok(strided::copy(dst, src, nullptr, STRIDED_COPY_NO_STREAM));
    strided::host_span<const float> d = span_of<const float>(dst);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            assert_true(d(i, j) == static_cast<float>(i * 4 + j));
    assert_true(to[1] == 4.0f);

    strided::view readonly = wrap(from, {3, 4}, true);
    assert_fails(strided::copy(readonly, src), STRIDED_ERR_INVALID_ARGUMENT,
                 "copy: The destination view is read-only.");

    std::vector<float> back(12);
    assert_ok(strided::copy_host(back.data(), *strided::layout::make({3, 4}, 4), to.data(),
                                 dst.layout(), 1));
    assert_true(back == from);
    assert_fails(strided::copy_host(back.data(), *strided::layout::make({3, 4}, 8), to.data(),
                                    dst.layout()),
                 STRIDED_ERR_INVALID_ARGUMENT,
                 "copy: The itemsize of the destination and source layouts must match. Got dst "
                 "itemsize:8 and src itemsize:4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_order_view),
        cmocka_unit_test(test_sliced_view),
        cmocka_unit_test(test_transposed_view),
        cmocka_unit_test(test_negative_stride_views),
        cmocka_unit_test(test_broadcast_view),
        cmocka_unit_test(test_for_each_visits_in_c_order),
        cmocka_unit_test(test_views_of_other_element_types),
        cmocka_unit_test(test_host_span_checks),
        cmocka_unit_test(test_copies_between_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
