/*
 * consumer.cpp: a C++ program built against an installed libstrided
 * (scripts/check-consumers). It uses the C API, whose headers declare it
 * extern "C", and includes strided.hpp as well where one is installed, so
 * that header is compiled by a consumer too. The same work as consumer.c:
 * a layout, host memory from a resource, two views, a copy, a check.
 */
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include <strided.h>
#if __has_include(<strided.hpp>)
#include <strided.hpp>
#define WITH_HPP ", strided.hpp included"
#else
#define WITH_HPP ""
#endif

namespace {

void check(strided_status status, const char *what)
{
    if (status != STRIDED_OK)
        throw std::runtime_error(std::string(what) + ": " + strided_last_error());
}

struct view_release {
    void operator()(strided_view *v) const
    {
        strided_view_release(v);
    }
};
using view_guard = std::unique_ptr<strided_view, view_release>;

} // namespace

int main()
try {
    const int64_t shape[] = {3, 4};
    const strided_dtype float32 = {STRIDED_DTYPE_FLOAT, 32, 1};
    strided_layout c_order, f_order;
    int64_t size;
    check(strided_layout_init_dense(&c_order, 2, shape, 4, STRIDED_ORDER_C, 0, nullptr), "layout");
    check(strided_layout_init_dense(&f_order, 2, shape, 4, STRIDED_ORDER_F, 0, nullptr), "layout");
    check(strided_layout_required_size_in_bytes(&c_order, &size), "size");

    strided_memory_resource *mr;
    check(strided_host_resource_create(0, &mr), "resource");
    std::unique_ptr<strided_memory_resource, void (*)(strided_memory_resource *)> mr_guard(
        mr, strided_memory_resource_release);
    auto make_view = [&](const strided_layout &layout, strided_view &view) {
        strided_buffer *b;
        check(strided_buffer_alloc(mr, static_cast<size_t>(size), nullptr, &b), "alloc");
        strided_status status = strided_view_from_buffer(b, &layout, &float32, false, &view);
        strided_buffer_release(b); // the view holds its own reference
        check(status, "view");
        return view_guard(&view);
    };
    strided_view src, dst;
    view_guard src_guard = make_view(c_order, src);
    view_guard dst_guard = make_view(f_order, dst);

    auto *in = static_cast<float *>(strided_view_ptr(&src));
    for (int i = 0; i < 12; i++)
        in[i] = static_cast<float>(i);
    check(strided_view_copy(&dst, &src, nullptr, STRIDED_COPY_NO_STREAM), "copy");
    const auto *out = static_cast<const float *>(strided_view_ptr(&dst));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            if (out[i + 3 * j] != static_cast<float>(4 * i + j))
                throw std::runtime_error("element (" + std::to_string(i) + ", " +
                                         std::to_string(j) + ") wrong after the copy");
    std::printf("C++: libstrided %s (headers %s), 3x4 float32 copied from C to F order%s\n",
                strided_version(), STRIDED_VERSION_STRING, WITH_HPP);
    return 0;
} catch (const std::exception &e) {
    std::fprintf(stderr, "consumer.cpp: %s\n", e.what());
    return 1;
}
