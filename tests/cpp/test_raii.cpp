/*
 * test_raii.cpp: the handles' reference counts. buffer and memory_resource
 * hold one reference each, a view holds its buffer's, a dlpack_tensor its
 * tensor: copies retain, moves steal, destructors release, and release
 * callbacks and deleters run exactly once, when the last holder goes.
 */
#include "test_util.hpp"

static void count_release(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    ++*static_cast<int *>(context);
}

/* A host resource of user callbacks that counts what happens to it. */
struct counting_resource {
    int allocations = 0;
    int deallocations = 0;
    int destroyed = 0;
};

static strided_status counting_allocate(void *self, size_t size, void *stream, void **out_ptr)
{
    (void)stream;
    static_cast<counting_resource *>(self)->allocations++;
    *out_ptr = std::malloc(size ? size : 1);
    return *out_ptr ? STRIDED_OK
                    : strided_set_last_error(STRIDED_ERR_OUT_OF_MEMORY, "counting", "no memory");
}

static void counting_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)size;
    (void)stream;
    static_cast<counting_resource *>(self)->deallocations++;
    std::free(ptr);
}

static void counting_destroy(void *self)
{
    static_cast<counting_resource *>(self)->destroyed++;
}

static const strided_memory_resource_ops counting_ops = {counting_allocate, counting_deallocate,
                                                         counting_destroy, nullptr};

static strided::memory_resource make_counting(counting_resource *self)
{
    strided_memory_resource_props props = {true, false, false, -1, false};
    strided::result<strided::memory_resource> mr = strided::memory_resource::create(&counting_ops,
                                                                                    self, props);
    if (!mr)
        fail_msg("create: %s", mr.message().c_str());
    return *std::move(mr);
}

static strided::buffer host_buffer(size_t size)
{
    strided::result<strided::memory_resource> mr = strided::memory_resource::host();
    if (!mr)
        fail_msg("host: %s", mr.message().c_str());
    strided::result<strided::buffer> b = strided::buffer::allocate(*mr, size);
    if (!b)
        fail_msg("allocate: %s", b.message().c_str());
    return *std::move(b);
}

static void test_buffer_copy_move_destroy(void **state)
{
    (void)state;
    strided::buffer b = host_buffer(64);
    strided_buffer *raw = b.get();
    assert_non_null(raw);
    assert_int_equal(b.use_count(), 1);
    assert_int_equal(b.size(), 64);
    assert_non_null(b.data());
    {
        strided::buffer copy = b;
        assert_ptr_equal(copy.get(), raw);
        assert_int_equal(strided_buffer_use_count(raw), 2);
    }
    assert_int_equal(strided_buffer_use_count(raw), 1);

    strided::buffer moved = std::move(b);
    assert_null(b.get());
    assert_false(static_cast<bool>(b));
    assert_int_equal(b.use_count(), 0);
    assert_ptr_equal(moved.get(), raw);
    assert_int_equal(strided_buffer_use_count(raw), 1);

    strided::buffer assigned;
    assigned = moved;
    assert_int_equal(strided_buffer_use_count(raw), 2);
    strided::buffer &alias = assigned;
    assigned = alias;
    assert_int_equal(strided_buffer_use_count(raw), 2);
    assigned = std::move(alias);
    assert_ptr_equal(assigned.get(), raw);
    assert_int_equal(strided_buffer_use_count(raw), 2);

    /* Assigning over a handle releases what it held. */
    strided::buffer other = host_buffer(8);
    strided_buffer *other_raw = other.get();
    strided::buffer keep = other;
    assert_int_equal(strided_buffer_use_count(other_raw), 2);
    other = moved;
    assert_int_equal(strided_buffer_use_count(other_raw), 1);
    assert_int_equal(strided_buffer_use_count(raw), 3);
    other = std::move(keep);
    assert_ptr_equal(other.get(), other_raw);
    assert_int_equal(strided_buffer_use_count(other_raw), 1);
    assert_int_equal(strided_buffer_use_count(raw), 2);

    assigned.reset();
    assert_null(assigned.get());
    assert_int_equal(strided_buffer_use_count(raw), 1);

    /* detach hands the reference out; adopt takes it back; share adds. */
    strided_buffer *detached = moved.detach();
    assert_ptr_equal(detached, raw);
    assert_null(moved.get());
    assert_int_equal(strided_buffer_use_count(raw), 1);
    strided::buffer adopted = strided::buffer::adopt(detached);
    assert_int_equal(strided_buffer_use_count(raw), 1);
    strided::buffer shared = strided::buffer::share(raw);
    assert_int_equal(strided_buffer_use_count(raw), 2);
    assert_int_equal(shared.use_count(), 2);
}

static void test_wrapped_memory_is_released_once_by_the_last_handle(void **state)
{
    (void)state;
    std::vector<char> memory(32);
    int released = 0;
    {
        strided::result<strided::buffer> b = strided::buffer::wrap(memory.data(), memory.size(),
                                                                   count_release, &released);
        assert_ok(b);
        assert_ptr_equal(b->data(), memory.data());
        assert_int_equal(b->memory_info().kind, STRIDED_MEMORY_HOST);
        assert_true(b->is_host_only());
        strided::buffer copy = *b;
        strided::buffer moved = std::move(*b);
        assert_int_equal(moved.use_count(), 2);
        copy.reset();
        assert_int_equal(released, 0);
    }
    assert_int_equal(released, 1);
}

static void test_failed_wrap_releases_nothing(void **state)
{
    (void)state;
    int released = 0;
    char byte = 0;
    strided::result<strided::buffer> b = strided::buffer::wrap(&byte, SIZE_MAX, count_release,
                                                               &released);
    strided_buffer *c = nullptr;
    strided_status want = strided_buffer_wrap(&byte, SIZE_MAX, count_release, &released, &c);
    assert_int_equal(want, STRIDED_ERR_INVALID_ARGUMENT);
    assert_fails(b, want, strided_last_error());
    assert_int_equal(released, 0);
}

static void test_resource_lives_until_its_last_handle_and_buffer(void **state)
{
    (void)state;
    counting_resource counts;
    {
        strided::memory_resource mr = make_counting(&counts);
        assert_ptr_equal(mr.self(), &counts);
        assert_true(mr.properties().host_accessible);
        assert_false(mr.is_closed());
        strided::memory_resource copy = mr;
        strided::memory_resource moved = std::move(mr);
        assert_null(mr.get());
        assert_ptr_equal(copy.get(), moved.get());

        strided::result<strided::buffer> b = strided::buffer::allocate(moved, 16);
        assert_ok(b);
        assert_int_equal(counts.allocations, 1);
        assert_ptr_equal(b->resource().get(), moved.get());

        copy.reset();
        moved.reset();
        assert_int_equal(counts.destroyed, 0);
        strided::buffer last = *std::move(b);
        assert_int_equal(counts.deallocations, 0);
    }
    assert_int_equal(counts.deallocations, 1);
    assert_int_equal(counts.destroyed, 1);

    /* detach, adopt and share, and assignment. */
    counting_resource other;
    {
        strided::memory_resource mr = make_counting(&other);
        strided_memory_resource *raw = mr.detach();
        strided::memory_resource adopted = strided::memory_resource::adopt(raw);
        strided::memory_resource shared = strided::memory_resource::share(raw);
        strided::memory_resource assigned;
        assigned = shared;
        strided::memory_resource &alias = assigned;
        assigned = alias;
        assigned = std::move(alias);
        shared = std::move(assigned);
        adopted.reset();
        assert_int_equal(other.destroyed, 0);
        assert_ok(shared.close());
        assert_true(shared.is_closed());
        assert_fails(strided::buffer::allocate(shared, 8), STRIDED_ERR_INVALID_ARGUMENT,
                     "alloc: the memory resource has been closed");
    }
    assert_int_equal(other.destroyed, 1);
    assert_fails(strided::memory_resource().close(), STRIDED_ERR_INVALID_ARGUMENT,
                 "close: the resource is empty");
}

static void test_view_owns_its_buffers_reference(void **state)
{
    (void)state;
    strided::buffer b = host_buffer(96);
    strided_buffer *raw = b.get();
    strided::layout l = *strided::layout::make({4, 6}, 4);
    {
        strided::result<strided::view> v = strided::view::from_buffer(b, l,
                                                                      strided::dtype_of<float>());
        assert_ok(v);
        assert_int_equal(b.use_count(), 2);
        assert_ptr_equal(v->get().buffer, raw);
        assert_ptr_equal(v->ptr(), b.data());
        assert_true(v->layout() == l);
        assert_true(v->dtype().has_value());
        assert_string_equal(strided::format(*v->dtype()).c_str(), "float32");
        assert_int_equal(v->device().device_type, STRIDED_DEVICE_CPU);
        assert_int_equal(v->home_device(), -1);
        assert_false(v->device_accessible());
        assert_false(v->readonly());
        assert_int_equal(v->origin(), 0);
        assert_int_equal(v->device_ptr(), 0);
        {
            strided::view copy = *v;
            assert_int_equal(b.use_count(), 3);
            strided::view moved = std::move(copy);
            assert_false(static_cast<bool>(copy));
            assert_int_equal(b.use_count(), 3);
            assert_int_equal(v->buffer().use_count(), 4);
        }
        assert_int_equal(b.use_count(), 2);

        /* Assignment releases what the target held. */
        strided::buffer other = host_buffer(96);
        strided::view w = *strided::view::from_buffer(other, l);
        assert_int_equal(other.use_count(), 2);
        w = *v;
        assert_int_equal(other.use_count(), 1);
        assert_int_equal(b.use_count(), 3);
        strided::view &alias = w;
        w = alias;
        assert_int_equal(b.use_count(), 3);
        w = std::move(alias);
        assert_int_equal(b.use_count(), 3);
        strided::view x = *strided::view::from_buffer(other, l);
        w = std::move(x);
        assert_int_equal(b.use_count(), 2);
        assert_int_equal(other.use_count(), 2);
        w.reset();
        assert_false(static_cast<bool>(w));
        assert_int_equal(other.use_count(), 1);

        /* Derived views hold references of their own. */
        strided::result<strided::view> t = v->permute({1, 0});
        assert_ok(t);
        assert_int_equal(b.use_count(), 3);
        assert_string_equal(t->layout().format().c_str(), "(6,4):(1,6)");
        strided::result<strided::view> s = v->slice({1});
        assert_ok(s);
        assert_int_equal(b.use_count(), 4);
        assert_string_equal(s->layout().format().c_str(), "(6,):(1,)+6");
        assert_fails(v->slice({4}), STRIDED_ERR_INVALID_ARGUMENT,
                     "slice: Invalid index: 4 out of range for axis 0 with extent 4");
        assert_int_equal(b.use_count(), 4);

        /* detach gives the C view its reference; adopt takes it back. */
        strided_view c = t->detach();
        assert_false(static_cast<bool>(*t));
        assert_int_equal(b.use_count(), 4);
        strided::view shared = strided::view::share(c);
        assert_int_equal(b.use_count(), 5);
        strided::view adopted = strided::view::adopt(c);
        assert_int_equal(b.use_count(), 5);
    }
    assert_int_equal(b.use_count(), 1);
}

static void test_failed_view_factories_keep_nothing(void **state)
{
    (void)state;
    strided::buffer b = host_buffer(20);
    strided::layout l = *strided::layout::make({10}, 4);
    strided_view c;
    strided_status want = strided_view_from_buffer(b.get(), &l.get(), nullptr, false, &c);
    assert_int_equal(want, STRIDED_ERR_INVALID_ARGUMENT);
    assert_fails(strided::view::from_buffer(b, l), want, strided_last_error());
    assert_string_equal(strided_last_error(), "view: Buffer size is too small for the layout. "
                                              "Expected at least 40 bytes, got 20 bytes.");
    assert_int_equal(b.use_count(), 1);
    assert_fails(strided::view::from_buffer(strided::buffer(), l), STRIDED_ERR_INVALID_ARGUMENT,
                 "view: buffer, layout and out are required");
}

static void test_wrapped_view_releases_once_after_every_derived_view(void **state)
{
    (void)state;
    std::vector<int32_t> memory(12);
    int released = 0;
    {
        strided::layout l = *strided::layout::make({3, 4}, 4);
        strided::result<strided::view> v =
            strided::view::wrap(memory.data(), l, strided::dtype_of<int32_t>(), true,
                                strided_device{STRIDED_DEVICE_CPU, 0}, count_release, &released);
        assert_ok(v);
        assert_true(v->readonly());
        strided::view derived = *v->slice({strided::index::all(-1)});
        v->reset();
        assert_int_equal(released, 0);
        assert_ptr_equal(derived.data<const int32_t>(), memory.data() + 8);
    }
    assert_int_equal(released, 1);
}

static void test_dlpack_exports_hold_a_reference(void **state)
{
    (void)state;
    strided::buffer b = host_buffer(96);
    strided::view v = *strided::view::from_buffer(b, *strided::layout::make({4, 6}, 4),
                                                  strided::dtype_of<float>());
    assert_int_equal(b.use_count(), 2);
    {
        strided::result<strided::dlpack_tensor> t = v.export_dlpack();
        assert_ok(t);
        assert_int_equal(b.use_count(), 3);
        assert_int_equal((*t)->dl_tensor.ndim, 2);
        assert_ptr_equal((*t)->dl_tensor.data, b.data());
        strided::dlpack_tensor moved = std::move(*t);
        assert_false(static_cast<bool>(*t));
        assert_int_equal(b.use_count(), 3);
        strided::result<strided::dlpack_tensor_legacy> legacy = v.export_dlpack_legacy();
        assert_ok(legacy);
        assert_int_equal(b.use_count(), 4);
        strided::result<strided::dlpack_tensor> bytes = b.export_dlpack();
        assert_ok(bytes);
        assert_int_equal((*bytes)->dl_tensor.shape[0], 96);
        assert_int_equal(b.use_count(), 5);
        bytes->reset();
        assert_int_equal(b.use_count(), 4);
        strided::result<strided::dlpack_tensor_legacy> bytes_legacy = b.export_dlpack_legacy();
        assert_ok(bytes_legacy);
        assert_int_equal(b.use_count(), 5);

        /* detach: the caller calls the deleter. */
        strided_dl_managed_tensor_versioned *raw = moved.detach();
        assert_int_equal(b.use_count(), 5);
        raw->deleter(raw);
        assert_int_equal(b.use_count(), 4);
        strided::dlpack_tensor assigned = std::move(*v.export_dlpack());
        assert_int_equal(b.use_count(), 5);
        assigned = std::move(*v.export_dlpack());
        assert_int_equal(b.use_count(), 5);
    }
    assert_int_equal(b.use_count(), 2);
    strided::view none = *strided::view::from_buffer(b, *strided::layout::make({4, 6}, 4));
    assert_fails(none.export_dlpack(), STRIDED_ERR_INVALID_ARGUMENT,
                 "export_dlpack: Cannot export StridedMemoryView via DLPack without dtype "
                 "information; create the view with dtype specified.");
    assert_int_equal(b.use_count(), 3);
}

static void test_dlpack_round_trip(void **state)
{
    (void)state;
    strided::buffer b = host_buffer(96);
    strided::view v = *strided::view::from_buffer(b, *strided::layout::make({4, 6}, 4),
                                                  strided::dtype_of<float>());
    {
        strided::dlpack_tensor t = std::move(*v.export_dlpack());
        assert_int_equal(b.use_count(), 3);
        strided::result<strided::view> imported = strided::view::import_dlpack(std::move(t));
        assert_ok(imported);
        assert_false(static_cast<bool>(t));
        assert_ptr_equal(imported->ptr(), v.ptr());
        assert_true(imported->layout().shape()[1] == 6);
        assert_string_equal(imported->layout().format().c_str(), "(4,6):(6,1)");
        assert_int_equal(b.use_count(), 3);
        strided::view copy = *imported;
        imported->reset();
        assert_int_equal(b.use_count(), 3);

        strided::result<strided::view> legacy =
            strided::view::import_dlpack(std::move(*v.export_dlpack_legacy()));
        assert_ok(legacy);
        assert_int_equal(b.use_count(), 4);
        strided_dl_managed_tensor_versioned *raw = nullptr;
        assert_int_equal(strided_view_export_dlpack(&v.get(), &raw), STRIDED_OK);
        strided::result<strided::view> from_raw = strided::view::import_dlpack(raw);
        assert_ok(from_raw);
        assert_int_equal(b.use_count(), 5);
    }
    assert_int_equal(b.use_count(), 2);
}

static void test_failed_import_runs_the_deleter(void **state)
{
    (void)state;
    strided::buffer b = host_buffer(96);
    strided::view v = *strided::view::from_buffer(b, *strided::layout::make({4, 6}, 4),
                                                  strided::dtype_of<float>());
    strided::dlpack_tensor t = std::move(*v.export_dlpack());
    assert_int_equal(b.use_count(), 3);
    t->version.major = 2;
    strided::result<strided::view> imported = strided::view::import_dlpack(std::move(t));
    assert_int_equal(imported.code(), STRIDED_ERR_UNSUPPORTED);
    assert_string_equal(imported.message().c_str(), strided_last_error());
    assert_false(static_cast<bool>(t));
    assert_int_equal(b.use_count(), 2);
    assert_fails(strided::view::import_dlpack(strided::dlpack_tensor()),
                 STRIDED_ERR_INVALID_ARGUMENT, strided_last_error());
}

static void test_dlpack_tensor_alloc_is_owned(void **state)
{
    (void)state;
    int64_t shape[2] = {3, 5};
    strided_dl_tensor prototype = {};
    prototype.device = strided_device{STRIDED_DEVICE_CPU, 0};
    prototype.ndim = 2;
    prototype.dtype = strided::dtype_of<double>();
    prototype.shape = shape;
    strided::result<strided::dlpack_tensor> t = strided::dlpack_tensor_alloc(prototype);
    assert_ok(t);
    assert_non_null((*t)->dl_tensor.data);
    assert_int_equal((*t)->dl_tensor.strides[0], 5);
    strided::result<strided::view> v = strided::view::import_dlpack(std::move(*t));
    assert_ok(v);
    strided::result<strided::host_span<double>> s = v->as_host_span<double>();
    assert_ok(s);
    (*s)(2, 4) = 1.5;
    assert_true(static_cast<double *>(v->ptr())[14] == 1.5);
    prototype.ndim = -1;
    assert_int_equal(strided::dlpack_tensor_alloc(prototype).code(), STRIDED_ERR_INVALID_ARGUMENT);
}

static void test_buffer_fill_and_copy(void **state)
{
    (void)state;
    strided::buffer a = host_buffer(8);
    strided::buffer b = host_buffer(8);
    uint16_t pattern = 0x0102;
    assert_ok(a.fill(&pattern, 2, nullptr, STRIDED_BUFFER_NO_STREAM));
    assert_int_equal(static_cast<uint16_t *>(a.data())[3], 0x0102);
    assert_ok(b.copy_from(a, nullptr, STRIDED_BUFFER_NO_STREAM));
    assert_memory_equal(a.data(), b.data(), 8);
    strided::buffer small = host_buffer(4);
    strided_status want = strided_buffer_copy(small.get(), a.get(), nullptr, 0);
    assert_int_equal(want, STRIDED_ERR_INVALID_ARGUMENT);
    std::string message = strided_last_error();
    assert_fails(small.copy_from(a), want, message.c_str());
    assert_fails(a.fill(&pattern, 3), STRIDED_ERR_INVALID_ARGUMENT,
                 "fill: value must be 1, 2, or 4 bytes, got 3");
    assert_ok(a.set_deallocation_stream(nullptr));
    char byte = 0;
    strided::buffer wrapped = *strided::buffer::wrap(&byte, 1);
    want = strided_buffer_set_deallocation_stream(wrapped.get(), nullptr);
    message = strided_last_error();
    assert_fails(wrapped.set_deallocation_stream(nullptr), want, message.c_str());
    assert_int_equal(wrapped.device().device_type, STRIDED_DEVICE_CPU);
    assert_false(static_cast<bool>(wrapped.resource()));
}

/* The resources that need the CUDA driver report what the C calls report
 * (STRIDED_ERR_NO_CUDA_DRIVER where there is none). */
static void test_driver_resources_report_what_c_reports(void **state)
{
    (void)state;
    strided_memory_resource *raw = nullptr;
    strided_status want = strided_device_resource_create(0, &raw);
    std::string message = want == STRIDED_OK ? "" : strided_last_error();
    strided_memory_resource_release(raw);
    strided::result<strided::memory_resource> device = strided::memory_resource::device(0);
    assert_int_equal(device.code(), want);
    assert_string_equal(device.message().c_str(), message.c_str());

    raw = nullptr;
    want = strided_pinned_resource_create(&raw);
    message = want == STRIDED_OK ? "" : strided_last_error();
    strided_memory_resource_release(raw);
    strided::result<strided::memory_resource> pinned = strided::memory_resource::pinned();
    assert_int_equal(pinned.code(), want);
    assert_string_equal(pinned.message().c_str(), message.c_str());

    strided::result<strided::memory_resource> host = strided::memory_resource::host(3);
    assert_int_equal(host.code(), STRIDED_ERR_INVALID_ARGUMENT);
    strided::result<strided::memory_resource> aligned = strided::memory_resource::host(256);
    assert_ok(aligned);
    assert_null(aligned->pool().handle);
    assert_int_equal(aligned->pool_attributes().code(), STRIDED_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffer_copy_move_destroy),
        cmocka_unit_test(test_wrapped_memory_is_released_once_by_the_last_handle),
        cmocka_unit_test(test_failed_wrap_releases_nothing),
        cmocka_unit_test(test_resource_lives_until_its_last_handle_and_buffer),
        cmocka_unit_test(test_view_owns_its_buffers_reference),
        cmocka_unit_test(test_failed_view_factories_keep_nothing),
        cmocka_unit_test(test_wrapped_view_releases_once_after_every_derived_view),
        cmocka_unit_test(test_dlpack_exports_hold_a_reference),
        cmocka_unit_test(test_dlpack_round_trip),
        cmocka_unit_test(test_failed_import_runs_the_deleter),
        cmocka_unit_test(test_dlpack_tensor_alloc_is_owned),
        cmocka_unit_test(test_buffer_fill_and_copy),
        cmocka_unit_test(test_driver_resources_report_what_c_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
