/*
 * test_null_args.c: the pointer rule of strided.h, on the status-returning
 * functions of every header.
 *
 * Each case calls one function with one required pointer NULL and every
 * other argument valid, and checks that the call fails with
 * STRIDED_ERR_INVALID_ARGUMENT and a message whose operation part is the
 * function's and whose reason names the parameter; that the outputs, and
 * the memory a copy would write, still hold SENTINEL; that no buffer
 * reference was taken or dropped; and that callbacks ran as documented: a
 * wrapped buffer's release and a resource's destroy never, an imported
 * tensor's deleter once when out is NULL (the import deletes on every
 * failure) and never when managed is. The tests after the cases check that
 * the NULLs the headers allow keep their documented meaning.
 *
 * The process has no CUDA driver (STRIDED_CUDA_DRIVER names a path that
 * does not exist), so a CUDA resource refused for its NULL out shows that
 * the pointer is checked before the driver.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "test_util.h"

#include <stdlib.h>

#include "strided.h"

static const strided_dtype f32 = {STRIDED_DTYPE_FLOAT, 32, 1};
static const strided_device cpu = {STRIDED_DEVICE_CPU, 0};

/* Valid arguments for every case: a (2,3) float32 layout, a host resource,
 * a 24-byte buffer from it (filled with SENTINEL) and a view of it, memory
 * to wrap, and DLPack tensors to import, with counters for the callbacks. */
typedef struct fixture {
    strided_layout l;
    strided_memory_resource *mr;
    strided_buffer *b;
    strided_view v;
    float mem[6];
    int64_t tensor_shape[2];
    strided_memory_info info;
    strided_memory_resource_ops ops;
    strided_memory_resource_ops ops_without_allocate;
    strided_memory_resource_props props;
    strided_dl_managed_tensor_versioned tensor;
    strided_dl_managed_tensor legacy;
    int releases, deletes, destroys;
} fixture;

/* Every output a case may write, filled with SENTINEL before the call. */
typedef union outputs {
    strided_layout layout;
    int64_t i64[STRIDED_MAX_NDIM];
    uint64_t u64;
    int i;
    strided_memory_info info;
    strided_buffer *buffer;
    strided_memory_resource *mr;
    strided_view view;
    strided_dl_managed_tensor_versioned *tensor;
    strided_dl_managed_tensor *legacy;
    strided_typestr typestr;
    strided_copy_plan plan;
    strided_consumer_stream consumer;
    strided_dlpack_request request;
    strided_dlpack_export_request export_request;
    strided_dtype dtype;
    strided_device device;
    strided_dl_tensor dl_tensor;
    float data[6];
    struct {
        char text[64];
        size_t length;
    } grid;
    size_t size;
    strided_memory_location location;
} outputs;

static void count_release(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    ((fixture *)context)->releases++;
}

static void count_delete(strided_dl_managed_tensor_versioned *self)
{
    ((fixture *)self->manager_ctx)->deletes++;
}

static void count_delete_legacy(strided_dl_managed_tensor *self)
{
    ((fixture *)self->manager_ctx)->deletes++;
}

/* A user resource whose callbacks must never run here. */
static strided_status refuse_allocate(void *self, size_t size, void *stream, void **out_ptr)
{
    (void)self;
    (void)size;
    (void)stream;
    (void)out_ptr;
    fail_msg("allocate ran");
    return STRIDED_ERR_INTERNAL;
}

static void refuse_deallocate(void *self, void *ptr, size_t size, void *stream)
{
    (void)self;
    (void)ptr;
    (void)size;
    (void)stream;
    fail_msg("deallocate ran");
}

static void count_destroy(void *self)
{
    ((fixture *)self)->destroys++;
}

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->l = mk_c(DIMS(2, 3), 4);
    assert_ok(strided_host_resource_create(0, &f->mr));
    assert_ok(strided_buffer_alloc(f->mr, 24, NULL, &f->b));
    fill_sentinel(strided_buffer_ptr(f->b), 24);
    assert_ok(strided_view_from_buffer(f->b, &f->l, &f32, false, &f->v));
    for (int i = 0; i < 6; i++)
        f->mem[i] = (float)i;
    f->tensor_shape[0] = 2;
    f->tensor_shape[1] = 3;
    f->info = (strided_memory_info){STRIDED_MEMORY_HOST, -1, true, false, false, false, 0};
    f->ops = (strided_memory_resource_ops){refuse_allocate, refuse_deallocate, count_destroy, NULL};
    f->ops_without_allocate = f->ops;
    f->ops_without_allocate.allocate = NULL;
    f->props = (strided_memory_resource_props){true, false, false, -1, false};
    strided_dl_tensor t = {f->mem, cpu, 2, f32, f->tensor_shape, NULL, 0};
    f->tensor.version.major = STRIDED_DLPACK_MAJOR_VERSION;
    f->tensor.version.minor = 1;
    f->tensor.manager_ctx = f;
    f->tensor.deleter = count_delete;
    f->tensor.dl_tensor = t;
    f->legacy.dl_tensor = t;
    f->legacy.manager_ctx = f;
    f->legacy.deleter = count_delete_legacy;
}

static void fixture_release(fixture *f)
{
    strided_view_release(&f->v);
    strided_buffer_release(f->b);
    strided_memory_resource_release(f->mr);
}

/* X(id, function, parameter, operation, deletes, call): the call passes
 * NULL for parameter; the message's operation part must contain
 * operation and its reason parameter; deletes is how many times an
 * imported tensor's deleter must have run. */
#define NULL_CASES(X)                                                                              \
    /* strided/layout.h */                                                                         \
    X(init_out, "strided_layout_init", "out", "init", 0,                                           \
      strided_layout_init(NULL, DIMS(2, 3), NULL, 4))                                              \
    X(init_shape, "strided_layout_init", "shape", "init", 0,                                       \
      strided_layout_init(&o->layout, 2, NULL, NULL, 4))                                           \
    X(init_byte_strides_out, "strided_layout_init_byte_strides", "out", "init", 0,                 \
      strided_layout_init_byte_strides(NULL, DIMS(2, 3), I64(12, 4), 4))                           \
    X(init_byte_strides_shape, "strided_layout_init_byte_strides", "shape", "init", 0,             \
      strided_layout_init_byte_strides(&o->layout, 2, NULL, I64(12, 4), 4))                        \
    X(init_dense_out, "strided_layout_init_dense", "out", "dense", 0,                              \
      strided_layout_init_dense(NULL, DIMS(2, 3), 4, STRIDED_ORDER_C, 0, NULL))                    \
    X(init_dense_shape, "strided_layout_init_dense", "shape", "dense", 0,                          \
      strided_layout_init_dense(&o->layout, 2, NULL, 4, STRIDED_ORDER_C, 0, NULL))                 \
    X(init_dense_perm, "strided_layout_init_dense", "perm", "dense", 0,                            \
      strided_layout_init_dense(&o->layout, DIMS(2, 3), 4, STRIDED_ORDER_PERM, 2, NULL))           \
    X(validate_layout, "strided_layout_validate", "layout", "validate", 0,                         \
      strided_layout_validate(NULL))                                                               \
    X(strides_in_bytes_layout, "strided_layout_strides_in_bytes", "layout", "strides_in_bytes", 0, \
      strided_layout_strides_in_bytes(NULL, o->i64))                                               \
    X(strides_in_bytes_out, "strided_layout_strides_in_bytes", "out", "strides_in_bytes", 0,       \
      strided_layout_strides_in_bytes(&f->l, NULL))                                                \
    X(slice_offset_in_bytes_layout, "strided_layout_slice_offset_in_bytes", "layout",              \
      "slice_offset_in_bytes", 0, strided_layout_slice_offset_in_bytes(NULL, o->i64))              \
    X(slice_offset_in_bytes_out, "strided_layout_slice_offset_in_bytes", "out",                    \
      "slice_offset_in_bytes", 0, strided_layout_slice_offset_in_bytes(&f->l, NULL))               \
    X(required_size_layout, "strided_layout_required_size_in_bytes", "layout",                     \
      "required_size_in_bytes", 0, strided_layout_required_size_in_bytes(NULL, o->i64))            \
    X(required_size_out, "strided_layout_required_size_in_bytes", "out", "required_size_in_bytes", \
      0, strided_layout_required_size_in_bytes(&f->l, NULL))                                       \
    X(check_packed_layout, "strided_layout_check_packed", "layout", "packed", 0,                   \
      strided_layout_check_packed(NULL, 4))                                                        \
    X(packed_bounds_layout, "strided_layout_packed_byte_bounds", "layout", "packed", 0,            \
      strided_layout_packed_byte_bounds(NULL, 4, o->i64, o->i64 + 1))                              \
    X(packed_bounds_lo, "strided_layout_packed_byte_bounds", "out_lo", "packed", 0,                \
      strided_layout_packed_byte_bounds(&f->l, 4, NULL, o->i64 + 1))                               \
    X(packed_bounds_hi, "strided_layout_packed_byte_bounds", "out_hi", "packed", 0,                \
      strided_layout_packed_byte_bounds(&f->l, 4, o->i64, NULL))                                   \
    X(required_size_packed_layout, "strided_layout_required_size_in_bytes_packed", "layout",       \
      "required_size_in_bytes", 0, strided_layout_required_size_in_bytes_packed(NULL, 4, o->i64))  \
    X(required_size_packed_out, "strided_layout_required_size_in_bytes_packed", "out",             \
      "required_size_in_bytes", 0, strided_layout_required_size_in_bytes_packed(&f->l, 4, NULL))   \
    X(flattened_axis_mask_layout, "strided_layout_flattened_axis_mask", "layout",                  \
      "flattened_axis_mask", 0, strided_layout_flattened_axis_mask(NULL, &o->u64))                 \
    X(flattened_axis_mask_out, "strided_layout_flattened_axis_mask", "out", "flattened_axis_mask", \
      0, strided_layout_flattened_axis_mask(&f->l, NULL))                                          \
    X(max_compatible_itemsize_layout, "strided_layout_max_compatible_itemsize", "layout",          \
      "max_compatible_itemsize", 0,                                                                \
      strided_layout_max_compatible_itemsize(NULL, 16, 0, -1, &o->i))                              \
    X(max_compatible_itemsize_out, "strided_layout_max_compatible_itemsize", "out",                \
      "max_compatible_itemsize", 0,                                                                \
      strided_layout_max_compatible_itemsize(&f->l, 16, 0, -1, NULL))                              \
    X(reshape_layout, "strided_layout_reshape", "layout", "reshape", 0,                            \
      strided_layout_reshape(NULL, DIMS(6), &o->layout))                                           \
    X(reshape_shape, "strided_layout_reshape", "shape", "reshape", 0,                              \
      strided_layout_reshape(&f->l, 1, NULL, &o->layout))                                          \
    X(reshape_out, "strided_layout_reshape", "out", "reshape", 0,                                  \
      strided_layout_reshape(&f->l, DIMS(6), NULL))                                                \
    X(permute_layout, "strided_layout_permute", "layout", "permute", 0,                            \
      strided_layout_permute(NULL, AXES(1, 0), &o->layout))                                        \
    X(permute_axes, "strided_layout_permute", "axes", "permute", 0,                                \
      strided_layout_permute(&f->l, 2, NULL, &o->layout))                                          \
    X(permute_out, "strided_layout_permute", "out", "permute", 0,                                  \
      strided_layout_permute(&f->l, AXES(1, 0), NULL))                                             \
    X(flatten_layout, "strided_layout_flatten", "layout", "flatten", 0,                            \
      strided_layout_flatten(NULL, 0, -1, &o->layout))                                             \
    X(flatten_out, "strided_layout_flatten", "out", "flatten", 0,                                  \
      strided_layout_flatten(&f->l, 0, -1, NULL))                                                  \
    X(flatten_mask_layout, "strided_layout_flatten_mask", "layout", "flatten", 0,                  \
      strided_layout_flatten_mask(NULL, STRIDED_AXES_MASK_ALL, &o->layout))                        \
    X(flatten_mask_out, "strided_layout_flatten_mask", "out", "flatten", 0,                        \
      strided_layout_flatten_mask(&f->l, STRIDED_AXES_MASK_ALL, NULL))                             \
    X(squeeze_layout, "strided_layout_squeeze", "layout", "squeeze", 0,                            \
      strided_layout_squeeze(NULL, &o->layout))                                                    \
    X(squeeze_out, "strided_layout_squeeze", "out", "squeeze", 0,                                  \
      strided_layout_squeeze(&f->l, NULL))                                                         \
    X(unsqueeze_layout, "strided_layout_unsqueeze", "layout", "unsqueeze", 0,                      \
      strided_layout_unsqueeze(NULL, AXES(0), &o->layout))                                         \
    X(unsqueeze_axes, "strided_layout_unsqueeze", "axes", "unsqueeze", 0,                          \
      strided_layout_unsqueeze(&f->l, 1, NULL, &o->layout))                                        \
    X(unsqueeze_out, "strided_layout_unsqueeze", "out", "unsqueeze", 0,                            \
      strided_layout_unsqueeze(&f->l, AXES(0), NULL))                                              \
    X(broadcast_layout, "strided_layout_broadcast", "layout", "broadcast_to", 0,                   \
      strided_layout_broadcast(NULL, DIMS(4, 2, 3), &o->layout))                                   \
    X(broadcast_shape, "strided_layout_broadcast", "shape", "broadcast_to", 0,                     \
      strided_layout_broadcast(&f->l, 3, NULL, &o->layout))                                        \
    X(broadcast_out, "strided_layout_broadcast", "out", "broadcast_to", 0,                         \
      strided_layout_broadcast(&f->l, DIMS(4, 2, 3), NULL))                                        \
    X(repack_layout, "strided_layout_repack", "layout", "repack", 0,                               \
      strided_layout_repack(NULL, 2, 0, -1, false, &o->layout))                                    \
    X(repack_out, "strided_layout_repack", "out", "repack", 0,                                     \
      strided_layout_repack(&f->l, 2, 0, -1, false, NULL))                                         \
    X(slice_layout, "strided_layout_slice", "layout", "slice", 0,                                  \
      strided_layout_slice(NULL, NIDX(S_AT(1)), IDX(S_AT(1)), &o->layout))                         \
    X(slice_indices, "strided_layout_slice", "indices", "slice", 0,                                \
      strided_layout_slice(&f->l, 1, NULL, &o->layout))                                            \
    X(slice_out, "strided_layout_slice", "out", "slice", 0,                                        \
      strided_layout_slice(&f->l, NIDX(S_AT(1)), IDX(S_AT(1)), NULL))                              \
    X(to_dense_layout, "strided_layout_to_dense", "layout", "to_dense", 0,                         \
      strided_layout_to_dense(NULL, STRIDED_ORDER_F, 0, NULL, &o->layout))                         \
    X(to_dense_perm, "strided_layout_to_dense", "perm", "to_dense", 0,                             \
      strided_layout_to_dense(&f->l, STRIDED_ORDER_PERM, 2, NULL, &o->layout))                     \
    X(to_dense_out, "strided_layout_to_dense", "out", "to_dense", 0,                               \
      strided_layout_to_dense(&f->l, STRIDED_ORDER_F, 0, NULL, NULL))                              \
    X(coalesce_layout, "strided_layout_coalesce", "layout", "coalesce", 0,                         \
      strided_layout_coalesce(NULL, &o->layout))                                                   \
    X(coalesce_out, "strided_layout_coalesce", "out", "coalesce", 0,                               \
      strided_layout_coalesce(&f->l, NULL))                                                        \
    X(format_grid_layout, "strided_layout_format_grid", "layout", "format_grid", 0,                \
      strided_layout_format_grid(NULL, o->grid.text, sizeof o->grid.text, &o->grid.length))        \
    X(format_grid_buf, "strided_layout_format_grid", "buf", "format_grid", 0,                      \
      strided_layout_format_grid(&f->l, NULL, 16, &o->grid.length))                                \
    /* strided/buffer.h */                                                                         \
    X(memory_info_query_out, "strided_memory_info_query", "out", "memory_info", 0,                 \
      strided_memory_info_query(f->mem, NULL))                                                     \
    X(buffer_alloc_mr, "strided_buffer_alloc", "mr", "alloc", 0,                                   \
      strided_buffer_alloc(NULL, 8, NULL, &o->buffer))                                             \
    X(buffer_alloc_out, "strided_buffer_alloc", "out", "alloc", 0,                                 \
      strided_buffer_alloc(f->mr, 8, NULL, NULL))                                                  \
    X(buffer_wrap_out, "strided_buffer_wrap", "out", "wrap", 0,                                    \
      strided_buffer_wrap(f->mem, sizeof f->mem, count_release, f, NULL))                          \
    X(buffer_wrap_known_info, "strided_buffer_wrap_known", "info", "wrap", 0,                      \
      strided_buffer_wrap_known(f->mem, sizeof f->mem, NULL, count_release, f, &o->buffer))        \
    X(buffer_wrap_known_out, "strided_buffer_wrap_known", "out", "wrap", 0,                        \
      strided_buffer_wrap_known(f->mem, sizeof f->mem, &f->info, count_release, f, NULL))          \
    X(buffer_wrap_resource_mr, "strided_buffer_wrap_resource", "mr", "wrap_resource", 0,           \
      strided_buffer_wrap_resource(f->mem, sizeof f->mem, NULL, NULL, &o->buffer))                 \
    X(buffer_wrap_resource_out, "strided_buffer_wrap_resource", "out", "wrap_resource", 0,         \
      strided_buffer_wrap_resource(f->mem, sizeof f->mem, f->mr, NULL, NULL))                      \
    X(set_deallocation_stream_b, "strided_buffer_set_deallocation_stream", "buffer",               \
      "set_deallocation_stream", 0, strided_buffer_set_deallocation_stream(NULL, NULL))            \
    /* strided/resource.h */                                                                       \
    X(resource_create_ops, "strided_memory_resource_create", "ops", "memory_resource_create", 0,   \
      strided_memory_resource_create(NULL, f, &f->props, &o->mr))                                  \
    X(resource_create_allocate, "strided_memory_resource_create", "allocate",                      \
      "memory_resource_create", 0,                                                                 \
      strided_memory_resource_create(&f->ops_without_allocate, f, &f->props, &o->mr))              \
    X(resource_create_props, "strided_memory_resource_create", "props", "memory_resource_create",  \
      0, strided_memory_resource_create(&f->ops, f, NULL, &o->mr))                                 \
    X(resource_create_out, "strided_memory_resource_create", "out", "memory_resource_create", 0,   \
      strided_memory_resource_create(&f->ops, f, &f->props, NULL))                                 \
    X(host_resource_create_out, "strided_host_resource_create", "out", "host_resource_create", 0,  \
      strided_host_resource_create(64, NULL))                                                      \
    X(pinned_resource_create_out, "strided_pinned_resource_create", "out",                         \
      "pinned_resource_create", 0, strided_pinned_resource_create(NULL))                           \
    X(device_resource_create_out, "strided_device_resource_create", "out",                         \
      "device_resource_create", 0, strided_device_resource_create(0, NULL))                        \
    X(managed_resource_create_out, "strided_managed_resource_create", "out",                       \
      "managed_resource_create", 0, strided_managed_resource_create(0, NULL))                      \
    X(peer_access_mr, "strided_memory_resource_peer_access", "mr", "peer_access", 0,               \
      strided_memory_resource_peer_access(NULL, &o->i, 1, &o->size))                               \
    X(peer_access_out_count, "strided_memory_resource_peer_access", "out_count", "peer_access", 0, \
      strided_memory_resource_peer_access(f->mr, &o->i, 1, NULL))                                  \
    X(update_peer_access_mr, "strided_memory_resource_update_peer_access", "mr", "peer_access", 0, \
      strided_memory_resource_update_peer_access(NULL, NULL, 0, NULL, 0))                          \
    X(grant_peer_access_mr, "strided_memory_resource_grant_peer_access", "mr", "peer_access", 0,   \
      strided_memory_resource_grant_peer_access(NULL, 1))                                          \
    X(set_peer_access_mr, "strided_memory_resource_set_peer_access", "mr", "peer_access", 0,       \
      strided_memory_resource_set_peer_access(NULL, NULL, 0))                                      \
    /* strided/buffer.h: copies with options, managed memory */                                    \
    X(buffer_copy_ex_dst, "strided_buffer_copy_ex", "dst", "copy", 0,                              \
      strided_buffer_copy_ex(NULL, f->b, NULL, 0, NULL))                                           \
    X(buffer_copy_ex_src, "strided_buffer_copy_ex", "src", "copy", 0,                              \
      strided_buffer_copy_ex(f->b, NULL, NULL, 0, NULL))                                           \
    X(copy_check_stream_dst, "strided_buffer_copy_check_stream", "dst", "copy", 0,                 \
      strided_buffer_copy_check_stream(NULL, f->b, NULL))                                          \
    X(advise_b, "strided_buffer_advise", "buffer", "advise", 0,                                    \
      strided_buffer_advise(NULL, STRIDED_ADVISE_SET_READ_MOSTLY, o->location))                    \
    X(read_mostly_out, "strided_buffer_read_mostly", "out", "read_mostly", 0,                      \
      strided_buffer_read_mostly(f->b, NULL))                                                      \
    X(preferred_location_b, "strided_buffer_preferred_location", "buffer", "preferred_location",   \
      0, strided_buffer_preferred_location(NULL, &o->location))                                    \
    X(preferred_location_out, "strided_buffer_preferred_location", "out", "preferred_location", 0, \
      strided_buffer_preferred_location(f->b, NULL))                                               \
    X(accessed_by_out_count, "strided_buffer_accessed_by", "out_count", "accessed_by", 0,          \
      strided_buffer_accessed_by(f->b, &o->location, 1, NULL))                                     \
    X(set_accessed_by_b, "strided_buffer_set_accessed_by", "buffer", "accessed_by", 0,             \
      strided_buffer_set_accessed_by(NULL, NULL, 0))                                               \
    X(prefetch_b, "strided_buffer_prefetch", "buffer", "prefetch", 0,                              \
      strided_buffer_prefetch(NULL, o->location, NULL))                                            \
    X(discard_b, "strided_buffer_discard", "buffer", "discard", 0,                                 \
      strided_buffer_discard(NULL, NULL))                                                          \
    X(discard_prefetch_b, "strided_buffer_discard_prefetch", "buffer", "discard_prefetch", 0,      \
      strided_buffer_discard_prefetch(NULL, o->location, NULL))                                    \
    /* strided/view.h */                                                                           \
    X(view_from_buffer_buffer, "strided_view_from_buffer", "buffer", "view", 0,                    \
      strided_view_from_buffer(NULL, &f->l, &f32, false, &o->view))                                \
    X(view_from_buffer_layout, "strided_view_from_buffer", "layout", "view", 0,                    \
      strided_view_from_buffer(f->b, NULL, &f32, false, &o->view))                                 \
    X(view_from_buffer_out, "strided_view_from_buffer", "out", "view", 0,                          \
      strided_view_from_buffer(f->b, &f->l, &f32, false, NULL))                                    \
    X(view_view_view, "strided_view_view", "view", "view", 0,                                      \
      strided_view_view(NULL, &f->l, &f32, &o->view))                                              \
    X(view_view_out, "strided_view_view", "out", "view", 0,                                        \
      strided_view_view(&f->v, &f->l, &f32, NULL))                                                 \
    X(view_from_buffer_ex_buffer, "strided_view_from_buffer_ex", "buffer", "view", 0,              \
      strided_view_from_buffer_ex(NULL, &f->l, &f32, true, false, &o->view))                       \
    X(view_from_buffer_ex_layout, "strided_view_from_buffer_ex", "layout", "view", 0,              \
      strided_view_from_buffer_ex(f->b, NULL, &f32, true, false, &o->view))                        \
    X(view_from_buffer_ex_out, "strided_view_from_buffer_ex", "out", "view", 0,                    \
      strided_view_from_buffer_ex(f->b, &f->l, &f32, true, false, NULL))                           \
    X(view_view_ex_view, "strided_view_view_ex", "view", "view", 0,                                \
      strided_view_view_ex(NULL, &f->l, &f32, true, &o->view))                                     \
    X(view_view_ex_out, "strided_view_view_ex", "out", "view", 0,                                  \
      strided_view_view_ex(&f->v, &f->l, &f32, true, NULL))                                        \
    X(view_relane_view, "strided_view_relane", "view", "relane", 0,                                \
      strided_view_relane(NULL, 2, &o->view))                                                      \
    X(view_relane_out, "strided_view_relane", "out", "relane", 0,                                  \
      strided_view_relane(&f->v, 2, NULL))                                                         \
    X(view_wrap_layout, "strided_view_wrap", "layout", "wrap", 0,                                  \
      strided_view_wrap(f->mem, NULL, &f32, false, &cpu, count_release, f, &o->view))              \
    X(view_wrap_out, "strided_view_wrap", "out", "wrap", 0,                                        \
      strided_view_wrap(f->mem, &f->l, &f32, false, &cpu, count_release, f, NULL))                 \
    X(import_dlpack_managed, "strided_view_import_dlpack", "managed", "import_dlpack", 0,          \
      strided_view_import_dlpack(NULL, true, &o->view))                                            \
    X(import_dlpack_out, "strided_view_import_dlpack", "out", "import_dlpack", 1,                  \
      strided_view_import_dlpack(&f->tensor, true, NULL))                                          \
    X(import_dlpack_legacy_out, "strided_view_import_dlpack (legacy)", "out", "import_dlpack", 1,  \
      strided_view_import_dlpack(&f->legacy, false, NULL))                                         \
    X(export_dlpack_view, "strided_view_export_dlpack", "view", "export_dlpack", 0,                \
      strided_view_export_dlpack(NULL, &o->tensor))                                                \
    X(export_dlpack_out, "strided_view_export_dlpack", "out", "export_dlpack", 0,                  \
      strided_view_export_dlpack(&f->v, NULL))                                                     \
    X(export_dlpack_legacy_view, "strided_view_export_dlpack_legacy", "view",                      \
      "export_dlpack_legacy", 0, strided_view_export_dlpack_legacy(NULL, &o->legacy))              \
    X(export_dlpack_legacy_out, "strided_view_export_dlpack_legacy", "out",                        \
      "export_dlpack_legacy", 0, strided_view_export_dlpack_legacy(&f->v, NULL))                   \
    X(check_dlpack_stream_view, "strided_view_check_dlpack_stream", "view", "__dlpack__", 0,       \
      strided_view_check_dlpack_stream(NULL, true, -1))                                            \
    X(check_itemsize_layout, "strided_view_check_itemsize", "layout", "view", 0,                   \
      strided_view_check_itemsize(NULL, 4))                                                        \
    X(dlpack_request_out, "strided_dlpack_request_make", "out", "from_dlpack", 0,                  \
      strided_dlpack_request_make(1, 0, true, -1, NULL))                                           \
    X(import_dlpack_checked_managed, "strided_view_import_dlpack_checked", "managed",              \
      "import_dlpack", 0, strided_view_import_dlpack_checked(NULL, true, NULL, &o->view))          \
    X(import_dlpack_checked_out, "strided_view_import_dlpack_checked", "out", "import_dlpack", 1,  \
      strided_view_import_dlpack_checked(&f->tensor, true, NULL, NULL))                            \
    X(export_request_view, "strided_dlpack_export_request_make", "view", "__dlpack__", 0,          \
      strided_dlpack_export_request_make(NULL, false, 0, false, 0, 0, 0, &o->export_request))      \
    X(export_request_out, "strided_dlpack_export_request_make", "out", "__dlpack__", 0,            \
      strided_dlpack_export_request_make(&f->v, false, 0, false, 0, 0, 0, NULL))                   \
    X(export_dl_tensor_view, "strided_view_export_dl_tensor", "view", "export_dlpack", 0,          \
      strided_view_export_dl_tensor(NULL, &o->dl_tensor))                                          \
    X(export_dl_tensor_out, "strided_view_export_dl_tensor", "out", "export_dlpack", 0,            \
      strided_view_export_dl_tensor(&f->v, NULL))                                                  \
    X(buffer_dlpack_device_out, "strided_buffer_dlpack_device", "out", "dlpack", 0,                \
      strided_buffer_dlpack_device(f->b, NULL))                                                    \
    /* strided/interface.h */                                                                      \
    X(import_interface_desc, "strided_view_import_interface", "desc", "interface", 0,              \
      strided_view_import_interface(NULL, NULL, NULL, NULL, &o->view, NULL))                       \
    X(check_interface_export_view, "strided_view_check_interface_export", "view", "interface", 0,  \
      strided_view_check_interface_export(NULL, "__array_interface__"))                            \
    X(check_interface_export_what, "strided_view_check_interface_export", "what", "interface", 0,  \
      strided_view_check_interface_export(&f->v, NULL))                                            \
    /* strided/stream.h */                                                                         \
    X(consumer_stream_out, "strided_consumer_stream_parse", "out", "stream_ptr", 0,                \
      strided_consumer_stream_parse(false, 5, NULL))                                               \
    /* strided/dlpack.h */                                                                         \
    X(dtype_itemsize_out, "strided_dtype_itemsize", "out", "dtype_itemsize", 0,                    \
      strided_dtype_itemsize(f32, NULL))                                                           \
    X(dtype_element_bits_out, "strided_dtype_element_bits", "out", "dtype_element_bits", 0,        \
      strided_dtype_element_bits(f32, false, NULL))                                                \
    X(typestr_parse_typestr, "strided_typestr_parse", "typestr", "typestr", 0,                     \
      strided_typestr_parse(NULL, 0, &o->typestr))                                                 \
    X(typestr_parse_out, "strided_typestr_parse", "out", "typestr", 0,                             \
      strided_typestr_parse("<f4", 0, NULL))                                                       \
    X(dtype_parse_name, "strided_dtype_parse", "name", "dtype_parse", 0,                           \
      strided_dtype_parse(NULL, &o->dtype))                                                        \
    X(dtype_parse_out, "strided_dtype_parse", "out", "dtype_parse", 0,                             \
      strided_dtype_parse("int8", NULL))                                                           \
    X(dtype_from_numpy_str, "strided_dtype_from_numpy", "typestr", "typestr", 0,                   \
      strided_dtype_from_numpy(NULL, "int8", 0, &o->typestr))                                      \
    X(dtype_from_numpy_out, "strided_dtype_from_numpy", "out", "typestr", 0,                       \
      strided_dtype_from_numpy("|i1", "int8", 0, NULL))                                            \
    X(check_dlpack_export_t, "strided_typestr_check_dlpack_export", "type", "__dlpack__", 0,       \
      strided_typestr_check_dlpack_export(NULL))                                                   \
    /* strided/copy.h */                                                                           \
    X(copy_plan_make_dst, "strided_copy_plan_make", "dst", "copy", 0,                              \
      strided_copy_plan_make(NULL, &f->l, &o->plan))                                               \
    X(copy_plan_make_src, "strided_copy_plan_make", "src", "copy", 0,                              \
      strided_copy_plan_make(&f->l, NULL, &o->plan))                                               \
    X(copy_plan_make_out, "strided_copy_plan_make", "out", "copy", 0,                              \
      strided_copy_plan_make(&f->l, &f->l, NULL))                                                  \
    X(copy_host_dst_layout, "strided_copy_host", "dst_layout", "copy", 0,                          \
      strided_copy_host(o->data, NULL, f->mem, &f->l, 1))                                          \
    X(copy_host_src_layout, "strided_copy_host", "src_layout", "copy", 0,                          \
      strided_copy_host(o->data, &f->l, f->mem, NULL, 1))                                          \
    X(copy_host_dst, "strided_copy_host", "dst", "copy", 0,                                        \
      strided_copy_host(NULL, &f->l, f->mem, &f->l, 1))                                            \
    X(copy_host_src, "strided_copy_host", "src", "copy", 0,                                        \
      strided_copy_host(o->data, &f->l, NULL, &f->l, 1))                                           \
    X(view_copy_dst, "strided_view_copy", "dst", "copy", 0,                                        \
      strided_view_copy(NULL, &f->v, NULL, 0))                                                     \
    X(view_copy_src, "strided_view_copy", "src", "copy", 0,                                        \
      strided_view_copy(&f->v, NULL, NULL, 0))                                                     \
    X(view_copy_ex_dst, "strided_view_copy_ex", "dst", "copy", 0,                                  \
      strided_view_copy_ex(NULL, &f->v, NULL, 0, NULL))                                            \
    X(view_copy_ex_src, "strided_view_copy_ex", "src", "copy", 0,                                  \
      strided_view_copy_ex(&f->v, NULL, NULL, 0, NULL))                                            \
    /* strided/stream.h */                                                                         \
    X(current_device_out, "strided_current_device", "out", "current_device", 0,                    \
      strided_current_device(NULL))

typedef struct null_case {
    const char *op, *param;
    int deletes;
    strided_status (*call)(fixture *f, outputs *o);
} null_case;

#define DEFINE_CALL(id, function, param, op, deletes, call) \
    static strided_status call_##id(fixture *f, outputs *o) \
    {                                                       \
        (void)f;                                            \
        (void)o;                                            \
        return call;                                        \
    }                                                       \
    static null_case case_##id = {op, param, deletes, call_##id};
NULL_CASES(DEFINE_CALL)
#undef DEFINE_CALL

static void test_null_argument(void **state)
{
    const null_case *c = *state;
    fixture f;
    outputs o;

    fixture_init(&f);
    strided_layout before = f.l;
    fill_sentinel(&o, sizeof o);
    assert_error(c->call(&f, &o), STRIDED_ERR_INVALID_ARGUMENT, c->op, c->param);
    assert_untouched(&o, sizeof o);
    assert_untouched(strided_buffer_ptr(f.b), 24);
    assert_layout_eq(f.l, before);
    assert_i64(strided_buffer_use_count(f.b), 2);
    assert_int_equal(f.releases, 0);
    assert_int_equal(f.destroys, 0);
    assert_int_equal(f.deletes, c->deletes);
    fixture_release(&f);
}

/* Arrays of n entries may be NULL when n is 0. */
static void test_null_arrays_with_count_zero(void **state)
{
    strided_layout zero = mk(0, NULL, NULL, 4), one = mk_c(DIMS(1, 1), 4), out;

    (void)state;
    assert_layout_implicit(zero, "():()", 4);
    assert_ok(strided_layout_init_byte_strides(&out, 0, NULL, NULL, 4));
    assert_layout_eq(out, zero);
    assert_ok(strided_layout_init_dense(&out, 0, NULL, 4, STRIDED_ORDER_PERM, 0, NULL));
    assert_layout(out, "():()", 4);
    assert_ok(strided_layout_reshape(&one, 0, NULL, &out));
    assert_layout(out, "():()", 4);
    assert_ok(strided_layout_permute(&zero, 0, NULL, &out));
    assert_layout(out, "():()", 4);
    assert_ok(strided_layout_unsqueeze(&one, 0, NULL, &out));
    assert_layout_eq(out, one);
    assert_ok(strided_layout_slice(&one, 0, NULL, &out));
    assert_layout(out, "(1,1):(1,1)", 4);
    assert_ok(strided_layout_broadcast(&zero, 0, NULL, &out));
    assert_layout(out, "():()", 4);
    assert_ok(strided_layout_to_dense(&zero, STRIDED_ORDER_PERM, 0, NULL, &out));
    assert_layout(out, "():()", 4);
    assert_ok(strided_layout_strides_in_bytes(&zero, NULL));
}

/* Optional pointers keep their documented meaning. */
static void test_null_optional_layout_arguments(void **state)
{
    strided_layout l = mk(DIMS(2, 3), NULL, 4);
    int64_t hi = 0;
    size_t length = 0;

    (void)state;
    assert_layout_implicit(l, "(2,3):(3,1)", 4);
    strided_layout_offset_bounds(&l, NULL, &hi);
    assert_i64(hi, 5);
    strided_layout_offset_bounds(&l, NULL, NULL);
    assert_int_equal(strided_layout_format(&l, NULL, 0), strlen("(2,3):(3,1)"));
    assert_ok(strided_layout_format_grid(&l, NULL, 0, &length));
    assert_true(length > strlen("(2,3):(3,1)"));
    assert_ok(strided_layout_format_grid(&l, NULL, 0, NULL));
    char text[8];
    assert_int_equal(strided_dtype_format(f32, NULL, 0), strlen("float32"));
    assert_int_equal(strided_dtype_format(f32, text, sizeof text), strlen("float32"));
    assert_string_equal(text, "float32");
}

static void test_null_optional_view_arguments(void **state)
{
    fixture f;
    strided_view v, w;

    (void)state;
    fixture_init(&f);
    /* dtype NULL: no dtype; layout and dtype NULL: the view's own. */
    assert_ok(strided_view_from_buffer(f.b, &f.l, NULL, true, &v));
    assert_false(v.has_dtype);
    assert_ok(strided_view_view(&f.v, NULL, NULL, &w));
    assert_layout_eq(w.layout, f.l);
    assert_true(w.has_dtype && strided_dtype_equal(w.dtype, f32));
    strided_view_release(&w);
    strided_view_release(&v);
    /* release NULL: borrowed memory; device NULL: classified (no driver:
     * host memory, CPU). */
    assert_ok(strided_view_wrap(f.mem, &f.l, &f32, false, NULL, NULL, NULL, &w));
    assert_int_equal(w.device.device_type, STRIDED_DEVICE_CPU);
    strided_view_release(&w);
    /* An empty layout reaches no memory: element0 may be NULL. */
    strided_layout empty = mk_c(DIMS(0, 3), 4);
    assert_ok(strided_view_wrap(NULL, &empty, NULL, false, &cpu, count_release, &f, &w));
    strided_view_release(&w);
    assert_int_equal(f.releases, 1);
    /* temporaries NULL: the defaults. */
    strided_view dst;
    assert_ok(strided_view_from_buffer(f.b, &f.l, &f32, false, &dst));
    strided_view src;
    assert_ok(strided_view_wrap(f.mem, &f.l, &f32, true, &cpu, NULL, NULL, &src));
    assert_ok(strided_view_copy_ex(&dst, &src, NULL, 0, NULL));
    assert_memory_equal(strided_view_ptr(&dst), f.mem, sizeof f.mem);
    strided_view_release(&src);
    strided_view_release(&dst);
    fixture_release(&f);
}

static void test_null_optional_buffer_arguments(void **state)
{
    strided_memory_info info;
    strided_buffer *b;

    (void)state;
    /* NULL is HOST memory; release NULL makes a borrowed buffer. */
    assert_ok(strided_memory_info_query(NULL, &info));
    assert_int_equal(info.kind, STRIDED_MEMORY_HOST);
    assert_ok(strided_buffer_wrap(NULL, 0, NULL, NULL, &b));
    assert_null(strided_buffer_ptr(b));
    assert_null(strided_buffer_resource(b));
    strided_buffer_release(b);
}

/* A copy of nothing needs no memory: dst and src may be NULL. */
static void test_null_memory_for_an_empty_copy(void **state)
{
    strided_layout empty = mk_c(DIMS(0, 3), 4);

    (void)state;
    assert_ok(strided_copy_host(NULL, &empty, NULL, &empty, 1));
}

/* Retain and release take NULL; release takes a released view. */
static void test_release_functions_accept_null(void **state)
{
    strided_buffer *b = NULL;
    strided_view v;

    (void)state;
    assert_null(strided_buffer_retain(NULL));
    strided_buffer_release(NULL);
    assert_null(strided_memory_resource_retain(NULL));
    strided_memory_resource_release(NULL);
    strided_view_release(NULL);
    assert_ok(strided_buffer_wrap(NULL, 0, NULL, NULL, &b));
    strided_layout empty = mk_c(DIMS(0), 4);
    assert_ok(strided_view_from_buffer(b, &empty, NULL, false, &v));
    strided_buffer_release(b);
    strided_view_release(&v);
    assert_null(v.buffer);
    strided_view_release(&v);
    assert_null(strided_view_ptr(&v));
    assert_true(strided_view_device_ptr(&v) == 0);
}

/* strided_set_last_error: a NULL operation reads "error", a NULL format
 * leaves the reason empty; the status comes back as given. */
static void test_set_last_error_optional_arguments(void **state)
{
    const char *none = NULL;

    (void)state;
    assert_int_equal(strided_set_last_error(STRIDED_ERR_INTERNAL, NULL, "%d", 7),
                     STRIDED_ERR_INTERNAL);
    assert_string_equal(strided_last_error(), "error: 7");
    /* Through a pointer to the function: a NULL format is the point, and
     * the compiler's format check (a literal expected) would refuse it. */
    strided_status (*set)(strided_status, const char *, const char *, ...) = strided_set_last_error;
    assert_int_equal(set(STRIDED_ERR_UNSUPPORTED, "mine", none), STRIDED_ERR_UNSUPPORTED);
    assert_string_equal(strided_last_error(), "mine: ");
    assert_string_equal(strided_last_error_reason(), "");
}

#define CASE_TEST(id, function, param, op, deletes, call) \
    {function ": " param " NULL", test_null_argument, NULL, NULL, &case_##id},

int main(void)
{
    /* No CUDA driver, on every machine. */
    setenv("STRIDED_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    const struct CMUnitTest tests[] = {
        NULL_CASES(CASE_TEST) cmocka_unit_test(test_null_arrays_with_count_zero),
        cmocka_unit_test(test_null_optional_layout_arguments),
        cmocka_unit_test(test_null_optional_view_arguments),
        cmocka_unit_test(test_null_optional_buffer_arguments),
        cmocka_unit_test(test_null_memory_for_an_empty_copy),
        cmocka_unit_test(test_release_functions_accept_null),
        cmocka_unit_test(test_set_last_error_optional_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
