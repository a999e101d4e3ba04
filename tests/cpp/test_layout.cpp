/*
 * test_layout.cpp: every member of strided::layout against the C function it
 * wraps, on fixed and generated layouts (negative, zero and gapped strides,
 * slice offsets, empty and 0-d layouts) and on arguments the C functions
 * refuse: the same status, the same message, the same layout or value.
 */
#include "test_util.hpp"

static int comparisons;

/* xorshift64*: a fixed-seed random stream for generated cases. */
static uint64_t next_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * UINT64_C(2685821657736338717);
}

static int64_t pick(uint64_t *state, int64_t lo, int64_t hi)
{
    return lo + static_cast<int64_t>(next_random(state) % static_cast<uint64_t>(hi - lo + 1));
}

/* Run a C manipulation and its member, and compare status, message and
 * output. */
static void
check_op(const char *what, const strided_layout &in,
         const std::function<strided_status(const strided_layout *, strided_layout *)> &c,
         const std::function<strided::result<strided::layout>(const strided::layout &)> &cpp)
{
    strided_layout want;
    strided_status s = c(&in, &want);
    std::string message = s == STRIDED_OK ? "" : strided_last_error();
    strided::result<strided::layout> got = cpp(strided::layout(in));
    bool same = got.code() == s && (s == STRIDED_OK ? strided_layout_equal(&got->get(), &want)
                                                    : got.message() == message);
    if (!same) {
        std::string label = std::string(what) + " of " + strided::layout(in).format();
        if (got.code() != s)
            fail_msg("%s: status %s, C gives %s (%s)", label.c_str(),
                     strided_status_name(got.code()), strided_status_name(s),
                     got.ok() ? message.c_str() : got.message().c_str());
        if (s == STRIDED_OK)
            assert_same_layout(got->get(), want, label.c_str());
        fail_msg("%s: message \"%s\", C gives \"%s\"", label.c_str(), got.message().c_str(),
                 message.c_str());
    }
    comparisons++;
}

/* The C call's message, read right after it. */
static std::string c_message(strided_status s)
{
    return s == STRIDED_OK ? "" : strided_last_error();
}

/* A value query that can fail: the C function gave s, message and want. */
template <class T>
static void check_value(const std::string &what, const strided_layout &in, strided_status s,
                        const std::string &message, const T &want, const strided::result<T> &got)
{
    std::string label = what + " of " + strided::layout(in).format();
    if (got.code() != s)
        fail_msg("%s: status %s, C gives %s", label.c_str(), strided_status_name(got.code()),
                 strided_status_name(s));
    if (s == STRIDED_OK && !(*got == want))
        fail_msg("%s: values differ", label.c_str());
    if (s != STRIDED_OK && got.message() != message)
        fail_msg("%s: message \"%s\", C gives \"%s\"", label.c_str(), got.message().c_str(),
                 message.c_str());
    comparisons++;
}

static std::vector<strided_layout> fixed_layouts()
{
    std::vector<strided_layout> out;
    auto implicit = [&](std::vector<int64_t> shape, int itemsize) {
        strided_layout l;
        assert_int_equal(strided_layout_init(&l, static_cast<int>(shape.size()), shape.data(),
                                             nullptr, itemsize),
                         STRIDED_OK);
        out.push_back(l);
    };
    auto with = [&](std::vector<int64_t> shape, std::vector<int64_t> strides, int itemsize) {
        strided_layout l;
        int64_t none = 0;
        assert_int_equal(strided_layout_init(&l, static_cast<int>(shape.size()), shape.data(),
                                             strides.empty() ? &none : strides.data(), itemsize),
                         STRIDED_OK);
        out.push_back(l);
    };
    implicit({4, 6}, 4);
    with({4, 6}, {1, 4}, 4);
    with({2, 3, 4}, {12, 1, 3}, 8);
    with({5, 2}, {4, 1}, 2);
    implicit({}, 4);
    with({}, {}, 4);
    implicit({3, 0, 2}, 4);
    with({1, 5, 1}, {7, 1, 3}, 4);
    with({4, 4}, {1, 0}, 4);
    implicit({2, 2, 2}, 2);
    implicit({8}, 1);
    with({8}, {1}, 16);
    implicit({INT64_C(1) << 31, INT64_C(1) << 31}, 1);
    /* Reversed and sliced: negative strides and slice offsets. */
    implicit({4, 3, 7}, 4);
    strided_layout base = out.back(), l;
    strided_index rev[] = {strided_index_all(1), strided_index_all(-1), strided_index_all(1)};
    assert_int_equal(strided_layout_slice(&base, 3, rev, &l), STRIDED_OK);
    out.push_back(l);
    strided_index some[] = {strided_index_slice(1, 4, 2), strided_index_at(-1)};
    assert_int_equal(strided_layout_slice(&base, 2, some, &l), STRIDED_OK);
    out.push_back(l);
    return out;
}

/* Layouts of 0 to 4 axes with extents 0 to 5, strides -6 to 6, itemsizes
 * 1 to 8, then a random slice for slice offsets. */
static std::vector<strided_layout> generated_layouts(int n)
{
    std::vector<strided_layout> out;
    uint64_t state = UINT64_C(0x5eed5eed12345678);
    while (static_cast<int>(out.size()) < n) {
        int ndim = static_cast<int>(pick(&state, 0, 4));
        int64_t shape[4], strides[4];
        for (int k = 0; k < ndim; k++) {
            shape[k] = pick(&state, 0, 5) == 0 ? 0 : pick(&state, 1, 5);
            strides[k] = pick(&state, -6, 6);
        }
        int itemsize = 1 << pick(&state, 0, 3);
        strided_layout l;
        bool implicit = pick(&state, 0, 3) == 0;
        if (strided_layout_init(&l, ndim, shape, implicit ? nullptr : strides, itemsize) !=
            STRIDED_OK)
            continue;
        if (ndim > 0 && pick(&state, 0, 1)) {
            strided_index index[4];
            for (int k = 0; k < ndim; k++)
                index[k] = strided_index_slice(pick(&state, -6, 6), pick(&state, -6, 6),
                                               pick(&state, 0, 1) ? 1 : -pick(&state, 1, 2));
            strided_layout sliced;
            if (strided_layout_slice(&l, ndim, index, &sliced) == STRIDED_OK)
                l = sliced;
        }
        out.push_back(l);
    }
    return out;
}

static std::vector<strided_layout> all_layouts()
{
    std::vector<strided_layout> out = fixed_layouts();
    std::vector<strided_layout> more = generated_layouts(400);
    out.insert(out.end(), more.begin(), more.end());
    return out;
}

/* An integer query and the C function's answer, naming the layout. */
#define SAME(got, want)                                                          \
    do {                                                                         \
        if (static_cast<long long>(got) != static_cast<long long>(want))         \
            fail_msg("%s: %s is %lld, C gives %lld", label.c_str(), #got,        \
                     static_cast<long long>(got), static_cast<long long>(want)); \
    } while (0)

static void test_queries_match_c(void **state)
{
    (void)state;
    comparisons = 0;
    for (const strided_layout &c : all_layouts()) {
        strided::layout l(c);
        std::string label = l.format();
        SAME(l.ndim(), c.ndim);
        SAME(l.itemsize(), c.itemsize);
        SAME(l.slice_offset(), c.slice_offset);
        SAME(l.implicit_strides(), c.implicit_strides);
        SAME(l.shape().size(), c.ndim);
        SAME(l.strides().size(), c.ndim);
        for (int k = 0; k < c.ndim; k++) {
            SAME(l.shape()[k], c.shape[k]);
            SAME(l.strides()[k], c.strides[k]);
            SAME(l.extent(k), c.shape[k]);
            SAME(l.stride(k), c.strides[k]);
        }
        SAME(l.volume(), strided_layout_volume(&c));
        SAME(l.is_contiguous_c(), strided_layout_is_contiguous_c(&c));
        SAME(l.is_contiguous_f(), strided_layout_is_contiguous_f(&c));
        SAME(l.is_contiguous_any(), strided_layout_is_contiguous_any(&c));
        SAME(l.is_dense(), strided_layout_is_dense(&c));
        SAME(l.is_unique(), strided_layout_is_unique(&c));
        SAME(l.hash(), strided_layout_hash(&c));
        SAME(std::hash<strided::layout>()(l), static_cast<size_t>(l.hash()));
        assert_true(l == strided::layout(c));
        assert_false(l != strided::layout(c));
        assert_ok(l.validate());

        int64_t lo = 0, hi = 0;
        strided_layout_offset_bounds(&c, &lo, &hi);
        SAME(l.offset_bounds().min, lo);
        SAME(l.offset_bounds().max, hi);

        char text[4096];
        strided_layout_format(&c, text, sizeof text);
        assert_string_equal(l.format().c_str(), text);

        int64_t v = 0;
        strided_status s = strided_layout_required_size_in_bytes(&c, &v);
        std::string m = c_message(s);
        check_value<int64_t>("required_size_in_bytes", c, s, m, v, l.required_size_in_bytes());
        s = strided_layout_slice_offset_in_bytes(&c, &v);
        m = c_message(s);
        check_value<int64_t>("slice_offset_in_bytes", c, s, m, v, l.slice_offset_in_bytes());
        int64_t bytes[STRIDED_MAX_NDIM];
        s = strided_layout_strides_in_bytes(&c, bytes);
        m = c_message(s);
        check_value("strides_in_bytes", c, s, m, std::vector<int64_t>(bytes, bytes + c.ndim),
                    l.strides_in_bytes());
        uint64_t mask = 0;
        s = strided_layout_flattened_axis_mask(&c, &mask);
        m = c_message(s);
        check_value<uint64_t>("flattened_axis_mask", c, s, m, mask, l.flattened_axis_mask());
        int order[STRIDED_MAX_NDIM];
        strided_layout_stride_order(&c, order);
        assert_true(l.stride_order() == std::vector<int>(order, order + c.ndim));

        for (int max : {1, 4, 16, 0})
            for (intptr_t ptr : {0, 8, 6})
                for (int axis : {-1, 0, 3}) {
                    int want = 0;
                    s = strided_layout_max_compatible_itemsize(&c, max, ptr, axis, &want);
                    m = c_message(s);
                    check_value<int>("max_compatible_itemsize", c, s, m, want,
                                     l.max_compatible_itemsize(max, ptr, axis));
                }

        size_t length = 0;
        s = strided_layout_format_grid(&c, nullptr, 0, &length);
        m = c_message(s);
        std::string grid(length, '\0');
        if (s == STRIDED_OK)
            SAME(strided_layout_format_grid(&c, &grid[0], length + 1, nullptr), STRIDED_OK);
        check_value<std::string>("format_grid", c, s, m, grid, l.format_grid());
    }
    print_message("%d comparisons\n", comparisons);
}

static void test_manipulations_match_c(void **state)
{
    (void)state;
    comparisons = 0;
    uint64_t random = UINT64_C(0xfeedface);
    for (const strided_layout &c : all_layouts()) {
        int n = c.ndim;
        int64_t volume = strided_layout_volume(&c);

        std::vector<std::vector<int64_t>> shapes = {{volume}, {-1}, {volume + 1}, {}};
        if (volume % 2 == 0)
            shapes.push_back({2, -1});
        if (n >= 2)
            shapes.push_back({c.shape[1], c.shape[0]});
        if (n > 0) {
            std::vector<int64_t> same(c.shape, c.shape + n);
            shapes.push_back(same);
            same.insert(same.begin(), 1);
            shapes.push_back(same);
        }
        for (const std::vector<int64_t> &shape : shapes) {
            check_op(
                "reshape", c,
                [&](const strided_layout *in, strided_layout *out) {
                    return strided_layout_reshape(in, static_cast<int>(shape.size()), shape.data(),
                                                  out);
                },
                [&](const strided::layout &l) { return l.reshape(shape); });
            check_op(
                "broadcast_to", c,
                [&](const strided_layout *in, strided_layout *out) {
                    return strided_layout_broadcast(in, static_cast<int>(shape.size()),
                                                    shape.data(), out);
                },
                [&](const strided::layout &l) { return l.broadcast_to(shape); });
        }
        std::vector<int64_t> wider(c.shape, c.shape + n);
        wider.insert(wider.begin(), 3);
        for (int64_t &e : wider)
            if (e == 1)
                e = 4;
        check_op(
            "broadcast_to", c,
            [&](const strided_layout *in, strided_layout *out) {
                return strided_layout_broadcast(in, static_cast<int>(wider.size()), wider.data(),
                                                out);
            },
            [&](const strided::layout &l) { return l.broadcast_to(wider); });

        std::vector<std::vector<int>> perms = {{}, {0, 0}};
        std::vector<int> identity;
        for (int k = 0; k < n; k++)
            identity.push_back(k);
        perms.push_back(identity);
        std::vector<int> reversed(identity.rbegin(), identity.rend());
        perms.push_back(reversed);
        std::vector<int> shuffled = identity;
        for (int k = n - 1; k > 0; k--)
            std::swap(shuffled[k], shuffled[pick(&random, 0, k)]);
        perms.push_back(shuffled);
        for (const std::vector<int> &axes : perms) {
            check_op(
                "permute", c,
                [&](const strided_layout *in, strided_layout *out) {
                    return strided_layout_permute(in, static_cast<int>(axes.size()), axes.data(),
                                                  out);
                },
                [&](const strided::layout &l) { return l.permute(axes); });
            for (strided_order order :
                 {STRIDED_ORDER_C, STRIDED_ORDER_F, STRIDED_ORDER_KEEP, STRIDED_ORDER_PERM}) {
                check_op(
                    "to_dense", c,
                    [&](const strided_layout *in, strided_layout *out) {
                        return strided_layout_to_dense(in, order, static_cast<int>(axes.size()),
                                                       axes.data(), out);
                    },
                    [&](const strided::layout &l) { return l.to_dense(order, axes); });
            }
            std::vector<int> some(axes.begin(), axes.begin() + (axes.size() > 2 ? 2 : 0));
            some.push_back(-1);
            check_op(
                "unsqueeze", c,
                [&](const strided_layout *in, strided_layout *out) {
                    return strided_layout_unsqueeze(in, static_cast<int>(some.size()), some.data(),
                                                    out);
                },
                [&](const strided::layout &l) { return l.unsqueeze(some); });
        }
        check_op(
            "unsqueeze", c,
            [&](const strided_layout *in, strided_layout *out) {
                return strided_layout_unsqueeze(in, 0, nullptr, out);
            },
            [&](const strided::layout &l) { return l.unsqueeze({}); });
        check_op(
            "unsqueeze", c,
            [&](const strided_layout *in, strided_layout *out) {
                const int axes[] = {0, n + 1};
                return strided_layout_unsqueeze(in, 2, axes, out);
            },
            [&](const strided::layout &l) {
                return l.unsqueeze({0, n + 1});
            });

        check_op(
            "flatten", c,
            [&](const strided_layout *in, strided_layout *out) {
                return strided_layout_flatten(in, 0, -1, out);
            },
            [&](const strided::layout &l) { return l.flatten(); });
        for (int start = -n - 1; start <= n; start++)
            for (int end = -n - 1; end <= n; end++)
                check_op(
                    "flatten", c,
                    [&](const strided_layout *in, strided_layout *out) {
                        return strided_layout_flatten(in, start, end, out);
                    },
                    [&](const strided::layout &l) { return l.flatten(start, end); });
        for (uint64_t mask :
             {UINT64_C(0), STRIDED_AXES_MASK_ALL, UINT64_C(2), UINT64_C(4), next_random(&random)})
            check_op(
                "flatten_mask", c,
                [&](const strided_layout *in, strided_layout *out) {
                    return strided_layout_flatten_mask(in, mask, out);
                },
                [&](const strided::layout &l) { return l.flatten_mask(mask); });

        check_op(
            "squeeze", c,
            [&](const strided_layout *in, strided_layout *out) {
                return strided_layout_squeeze(in, out);
            },
            [&](const strided::layout &l) { return l.squeeze(); });
        check_op(
            "coalesce", c,
            [&](const strided_layout *in, strided_layout *out) {
                return strided_layout_coalesce(in, out);
            },
            [&](const strided::layout &l) { return l.coalesce(); });

        for (int itemsize : {1, 2, 4, 8, 16, 3, 0})
            for (intptr_t ptr : {0, 4, 16})
                for (int axis : {-1, 0, 5})
                    for (bool keep : {true, false})
                        check_op(
                            "repack", c,
                            [&](const strided_layout *in, strided_layout *out) {
                                return strided_layout_repack(in, itemsize, ptr, axis, keep, out);
                            },
                            [&](const strided::layout &l) {
                                return l.repack(itemsize, ptr, axis, keep);
                            });

        for (int round = 0; round < 6; round++) {
            int count = static_cast<int>(pick(&random, 0, n + (round == 5 ? 1 : 0)));
            std::vector<strided::index> indices;
            std::vector<strided_index> raw;
            for (int k = 0; k < count; k++) {
                int64_t a = pick(&random, -6, 6), b = pick(&random, -6, 6);
                int64_t step = pick(&random, 0, 1) ? pick(&random, 1, 3) : -pick(&random, 0, 2);
                strided::index x = strided::index::at(a);
                switch (pick(&random, 0, 4)) {
                case 0: x = strided::index::at(a); break;
                case 1: x = strided::index::range(a, b, step); break;
                case 2: x = strided::index::all(step); break;
                case 3: x = strided::index::from(a, step); break;
                default: x = strided::index::until(b, step); break;
                }
                indices.push_back(x);
                raw.push_back(x.get());
            }
            check_op(
                "slice", c,
                [&](const strided_layout *in, strided_layout *out) {
                    return strided_layout_slice(in, count, raw.data(), out);
                },
                [&](const strided::layout &l) { return l.slice(indices); });
        }
    }
    print_message("%d comparisons\n", comparisons);
}

static void test_manipulation_fails_like_c_past_64_axes(void **state)
{
    (void)state;
    strided::layout l = *strided::layout::make({2, 3}, 4);
    std::vector<strided::index> many(65, strided::index::all());
    assert_fails(l.slice(many), STRIDED_ERR_INVALID_ARGUMENT,
                 "slice: The number of slices (65) is greater than the number of dimensions "
                 "(2).");
    std::vector<int64_t> ones(65, 1);
    strided::result<strided::layout> r = l.reshape(ones);
    assert_int_equal(r.code(), STRIDED_ERR_INVALID_ARGUMENT);
    strided_layout out;
    assert_int_equal(strided_layout_reshape(&l.get(), 65, ones.data(), &out),
                     STRIDED_ERR_INVALID_ARGUMENT);
    assert_string_equal(r.message().c_str(), strided_last_error());
}

static void test_makers_match_c(void **state)
{
    (void)state;
    std::vector<std::vector<int64_t>> shapes = {{}, {4, 6}, {3, 0, 2}, {-1, 2}, {1, 1, 1, 1}};
    for (const std::vector<int64_t> &shape : shapes)
        for (int itemsize : {4, 0, 3}) {
            int n = static_cast<int>(shape.size());
            strided_layout want;
            strided_status s = strided_layout_init(&want, n, shape.data(), nullptr, itemsize);
            std::string message = s == STRIDED_OK ? "" : strided_last_error();
            strided::result<strided::layout> got = strided::layout::make(shape, itemsize);
            assert_int_equal(got.code(), s);
            if (s == STRIDED_OK)
                assert_same_layout(got->get(), want, "make");
            else
                assert_string_equal(got.message().c_str(), message.c_str());

            std::vector<int64_t> strides(shape.size(), 2 * itemsize);
            int64_t none = 0;
            s = strided_layout_init(&want, n, shape.data(), n ? strides.data() : &none, itemsize);
            message = s == STRIDED_OK ? "" : strided_last_error();
            got = strided::layout::make(shape, strides, itemsize);
            assert_int_equal(got.code(), s);
            if (s == STRIDED_OK) {
                assert_same_layout(got->get(), want, "make with strides");
                assert_false(got->implicit_strides());
            } else {
                assert_string_equal(got.message().c_str(), message.c_str());
            }

            s = strided_layout_init_byte_strides(&want, n, shape.data(), n ? strides.data() : &none,
                                                 itemsize);
            message = s == STRIDED_OK ? "" : strided_last_error();
            got = strided::layout::make_byte_strides(shape, strides, itemsize);
            assert_int_equal(got.code(), s);
            if (s == STRIDED_OK)
                assert_same_layout(got->get(), want, "make_byte_strides");
            else
                assert_string_equal(got.message().c_str(), message.c_str());

            for (strided_order order :
                 {STRIDED_ORDER_C, STRIDED_ORDER_F, STRIDED_ORDER_PERM, STRIDED_ORDER_KEEP}) {
                std::vector<int> perm;
                for (int k = n - 1; k >= 0; k--)
                    perm.push_back(k);
                s = strided_layout_init_dense(&want, n, shape.data(), itemsize, order, n,
                                              perm.data());
                message = s == STRIDED_OK ? "" : strided_last_error();
                got = strided::layout::dense(shape, itemsize, order, perm);
                assert_int_equal(got.code(), s);
                if (s == STRIDED_OK)
                    assert_same_layout(got->get(), want, "dense");
                else
                    assert_string_equal(got.message().c_str(), message.c_str());
            }
        }
    assert_fails(strided::layout::make_byte_strides({4}, {}, 4), STRIDED_ERR_INVALID_ARGUMENT,
                 "init: byte_strides has 0 entries for a shape of 1");
    assert_fails(strided::layout::make_byte_strides({4}, {6}, 4), STRIDED_ERR_INVALID_ARGUMENT,
                 strided_last_error());
    assert_string_equal(strided::layout::dense({4, 6}, 4)->format().c_str(), "(4,6):(6,1)");
    assert_string_equal(strided::layout::dense({4, 6}, 4, STRIDED_ORDER_F)->format().c_str(),
                        "(4,6):(1,4)");
}

static void test_default_and_validated_layouts(void **state)
{
    (void)state;
    strided::layout scalar;
    assert_int_equal(scalar.ndim(), 0);
    assert_int_equal(scalar.itemsize(), 1);
    assert_true(scalar.implicit_strides());
    assert_ok(scalar.validate());
    assert_string_equal(scalar.format().c_str(), "():()");
    assert_true(scalar == *strided::layout::make({}, 1));

    strided_layout bad = scalar.get();
    bad.itemsize = 0;
    strided_status s = strided_layout_validate(&bad);
    assert_int_equal(s, STRIDED_ERR_INVALID_ARGUMENT);
    assert_fails(strided::layout::validated(bad), s, strided_last_error());
    assert_fails(strided::layout(bad).validate(), s, strided_last_error());
    assert_ok(strided::layout::validated(scalar.get()));

    /* Implicit and explicit strides differ, as in C. */
    strided::layout implicit = *strided::layout::make({4, 6}, 4);
    strided::layout explicit_ = *strided::layout::make({4, 6}, {6, 1}, 4);
    assert_true(implicit != explicit_);
    assert_string_equal(implicit.format().c_str(), explicit_.format().c_str());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_match_c),
        cmocka_unit_test(test_manipulations_match_c),
        cmocka_unit_test(test_manipulation_fails_like_c_past_64_axes),
        cmocka_unit_test(test_makers_match_c),
        cmocka_unit_test(test_default_and_validated_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
