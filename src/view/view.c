/*
 * view/view.c: strided views (a buffer seen through a layout), their range
 * validation, and DLPack import.
 *
 * Every view keeps the invariant of view.h: the bytes its elements occupy,
 * origin + [min_offset, max_offset + 1) * itemsize, lie inside [0, size) of
 * its buffer. An imported DLPack tensor becomes a buffer that covers exactly
 * its footprint and owns the managed tensor, so views derived from the
 * import are checked against the producer's memory and keep it alive.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"
#include "strided/dlpack.h"
#include "strided/view.h"

/* Re-issue the calling thread's last failure under op, so that a failure
 * of a function this module calls reads as this module's. */
static strided_status refail(strided_status status, const char *op)
{
    char reason[4096];
    snprintf(reason, sizeof reason, "%s", strided_last_error_reason());
    return strided__fail(status, op, "%s", reason);
}

strided_device strided_buffer_device(const strided_buffer *b)
{
    strided_device d = {STRIDED_DEVICE_CPU, 0};
    strided_memory_info info = strided_buffer_memory_info(b);
    switch (info.kind) {
    case STRIDED_MEMORY_DEVICE:
        d.device_type = STRIDED_DEVICE_CUDA;
        d.device_id = info.device_id < 0 ? 0 : info.device_id;
        break;
    case STRIDED_MEMORY_MANAGED:
        d.device_type = STRIDED_DEVICE_CUDA_MANAGED;
        break;
    case STRIDED_MEMORY_PINNED:
        d.device_type = STRIDED_DEVICE_CUDA_HOST;
        break;
    case STRIDED_MEMORY_HOST:
    default:
        /* Pageable memory that a device reads directly (HMM/ATS) is host
         * memory a device can reach, which DLPack calls CUDA host. */
        if (info.device_accessible)
            d.device_type = STRIDED_DEVICE_CUDA_HOST;
        break;
    }
    return d;
}

/* Reject a layout that breaks the layout invariant (only a layout filled in
 * by hand can), under this module's operation name. */
static strided_status check_layout(const char *op, const strided_layout *l)
{
    strided_status status = strided_layout_validate(l);
    if (status == STRIDED_OK)
        return STRIDED_OK;
    char reason[4096];
    snprintf(reason, sizeof reason, "%s", strided_last_error_reason());
    return strided__fail(status, op, "invalid layout: %s", reason);
}

/* Check that dtype describes elements of itemsize bytes. */
static strided_status check_dtype(const char *op, const strided_dtype *dtype,
                                  int itemsize)
{
    int size = 0;
    if (strided_dtype_itemsize(*dtype, &size) != STRIDED_OK)
        return refail(STRIDED_ERR_UNSUPPORTED, op);
    if (size != itemsize)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The dtype's itemsize (%d) does not match the "
                             "layout's itemsize (%d).",
                             size, itemsize);
    return STRIDED_OK;
}

/* Check that every byte the layout's elements occupy, counted from origin,
 * lies inside the buffer (§4.7 D5). A layout of volume 0 reaches no byte.
 * Origin 0 (views of a buffer) reports as cuda.core does; another origin
 * (views derived from a wrapped import, where offset 0 may even lie before
 * the buffer) names the byte range.
 * Assumes: the layout passed check_layout. */
static strided_status check_range(const char *op, const strided_buffer *b,
                                  int64_t origin, const strided_layout *l)
{
    int64_t mn = 0, mx = -1;
    strided_layout_offset_bounds(l, &mn, &mx);
    if (mx < mn)
        return STRIDED_OK;
    size_t buffer_size = strided_buffer_size(b);
    int64_t lo = 0, hi = 0, lo_bytes = 0, hi_bytes = 0;
    if (strided__mul_overflow(mn, l->itemsize, &lo_bytes) ||
        strided__add_overflow(origin, lo_bytes, &lo) ||
        strided__add_overflow(mx, 1, &hi_bytes) ||
        strided__mul_overflow(hi_bytes, l->itemsize, &hi_bytes) ||
        strided__add_overflow(origin, hi_bytes, &hi))
        return strided__fail(STRIDED_ERR_OVERFLOW, op,
                             "the byte range of element offsets [%lld, %lld] "
                             "with itemsize %d from origin %lld overflows "
                             "int64",
                             (long long)mn, (long long)mx, (int)l->itemsize,
                             (long long)origin);
    if (origin == 0 && mn < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Allocation size for a layout that maps elements "
                             "to negative memory offsets is ambiguous. The "
                             "layout's min_offset is %lld.",
                             (long long)mn);
    if (origin == 0 && (uint64_t)hi > (uint64_t)buffer_size)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Buffer size is too small for the layout. "
                             "Expected at least %lld bytes, got %zu bytes.",
                             (long long)hi, buffer_size);
    if (lo < 0 || (uint64_t)hi > (uint64_t)buffer_size)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The layout addresses bytes [%lld, %lld) of the "
                             "buffer, outside its range [0, %zu).",
                             (long long)lo, (long long)hi, buffer_size);
    return STRIDED_OK;
}

strided_status strided_view_from_buffer(strided_buffer *buffer,
                                        const strided_layout *layout,
                                        const strided_dtype *dtype,
                                        bool readonly, strided_view *out)
{
    const char *op = "view";
    if (buffer == NULL || layout == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "buffer, layout and out are required");
    strided_status status = check_layout(op, layout);
    if (status == STRIDED_OK && dtype != NULL)
        status = check_dtype(op, dtype, layout->itemsize);
    if (status == STRIDED_OK)
        status = check_range(op, buffer, 0, layout);
    if (status != STRIDED_OK)
        return status;
    strided_view v = {0};
    v.buffer = strided_buffer_retain(buffer);
    v.origin = 0;
    v.layout = *layout;
    v.has_dtype = dtype != NULL;
    if (dtype != NULL)
        v.dtype = *dtype;
    v.device = strided_buffer_device(buffer);
    v.readonly = readonly;
    *out = v;
    return STRIDED_OK;
}

strided_status strided_view_view(const strided_view *view,
                                 const strided_layout *layout,
                                 const strided_dtype *dtype, strided_view *out)
{
    const char *op = "view";
    if (view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "view and out are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view has no buffer (it was released)");
    const strided_layout *l = layout != NULL ? layout : &view->layout;
    strided_status status = check_layout(op, l);
    if (status == STRIDED_OK && dtype != NULL)
        status = check_dtype(op, dtype, l->itemsize);
    if (status == STRIDED_OK)
        status = check_range(op, view->buffer, view->origin, l);
    if (status != STRIDED_OK)
        return status;
    /* Build the new view in a local: out may be view, and layout may point
     * into either. In place, the view's one reference carries over to the
     * new view (the struct holds exactly one); otherwise the new view takes
     * its own. */
    strided_view v = {0};
    v.buffer = out == view ? view->buffer : strided_buffer_retain(view->buffer);
    v.origin = view->origin;
    v.layout = *l;
    if (dtype != NULL) {
        v.has_dtype = true;
        v.dtype = *dtype;
    } else if (view->has_dtype && l->itemsize == view->layout.itemsize) {
        v.has_dtype = true;
        v.dtype = view->dtype;
    }
    v.device = view->device;
    v.readonly = view->readonly;
    *out = v;
    return STRIDED_OK;
}

void strided_view_release(strided_view *view)
{
    if (view == NULL)
        return;
    strided_buffer_release(view->buffer);
    view->buffer = NULL;
}

/* The byte distance from the buffer's start to element (0,...,0). Unsigned
 * arithmetic: the invariant keeps it in range, and a view changed by hand
 * cannot make it undefined. */
static uintptr_t element0_offset(const strided_view *v)
{
    return (uintptr_t)v->origin +
           (uintptr_t)((uint64_t)v->layout.slice_offset *
                       (uint64_t)v->layout.itemsize);
}

void *strided_view_ptr(const strided_view *view)
{
    if (view->buffer == NULL)
        return NULL;
    uintptr_t base = (uintptr_t)strided_buffer_ptr(view->buffer);
    return (void *)(base + element0_offset(view));
}

uintptr_t strided_view_device_ptr(const strided_view *view)
{
    if (view->buffer == NULL)
        return 0;
    strided_memory_info info = strided_buffer_memory_info(view->buffer);
    if (!info.device_accessible || info.device_address == 0)
        return 0;
    return info.device_address + element0_offset(view);
}

/* What memory on a device a producer names is, when the device alone
 * says: CPU memory is host memory no device is said to reach (cuda.core's
 * DLPack CPU views), CUDA memory is device memory at its own address.
 * Returns false for CUDA host and managed memory, whose device address
 * and accessibility only the driver knows. */
static bool info_of_device(const strided_device *device, uintptr_t ptr,
                           strided_memory_info *out)
{
    strided_memory_info info = {STRIDED_MEMORY_HOST, -1, true, false, false,
                                false, 0};
    if (device == NULL)
        return false;
    if (device->device_type == STRIDED_DEVICE_CUDA) {
        info.kind = STRIDED_MEMORY_DEVICE;
        info.device_id = (int)device->device_id;
        info.host_accessible = false;
        info.device_accessible = true;
        info.device_address = ptr;
    } else if (device->device_type != STRIDED_DEVICE_CPU) {
        return false;
    }
    *out = info;
    return true;
}

/* Wrap the footprint of a layout whose element (0,...,0) is at element0:
 * the buffer spans the bytes of the lowest to the highest element, and
 * *origin puts element 0 at element0, whatever the layout's slice offset. The memory is classified
 * from device when that says enough (info_of_device), else by the driver.
 * The release callback is the buffer's; it is not called when this fails.
 * Assumes: the layout passed check_layout; element0 is not NULL when the
 * volume is positive. */
static strided_status wrap_footprint(const char *op, void *element0,
                                     const strided_layout *layout,
                                     const strided_device *device,
                                     strided_release_fn release, void *context,
                                     strided_buffer **out, int64_t *origin)
{
    uintptr_t e0 = (uintptr_t)element0;
    uintptr_t base = e0;
    int64_t bytes = 0, offset = 0, first = 0;
    int64_t mn = 0, mx = -1;
    int itemsize = (int)layout->itemsize;
    strided_layout_offset_bounds(layout, &mn, &mx);
    if (mx >= mn) {
        /* The bounds count from offset 0, element0 is at slice_offset:
         * count from element0. The layout invariant keeps mn * itemsize in
         * range; the span between the bounds may not be. */
        int64_t count = 0, low = 0, rel = 0;
        if (__builtin_sub_overflow(mx, mn, &count) ||
            strided__add_overflow(count, 1, &count) ||
            strided__mul_overflow(count, itemsize, &bytes) ||
            __builtin_sub_overflow(mn, layout->slice_offset, &rel) ||
            strided__mul_overflow(rel, itemsize, &low) || low == INT64_MIN ||
            strided__mul_overflow(mn, itemsize, &first))
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "the element offsets [%lld, %lld] times "
                                 "itemsize %d overflow int64",
                                 (long long)mn, (long long)mx, itemsize);
        /* Element 0 is one of the elements, so low <= 0. */
        offset = -low;
        if ((uint64_t)offset > (uint64_t)e0 ||
            (uint64_t)bytes > (uint64_t)(UINTPTR_MAX - (e0 - (uintptr_t)offset)))
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "the elements, bytes [%lld, %lld) from "
                                 "element (0,...,0) at %p, leave the address "
                                 "space",
                                 (long long)low, (long long)(low + bytes),
                                 element0);
        base = e0 - (uintptr_t)offset;
    }
    strided_memory_info info;
    strided_status status =
        info_of_device(device, base, &info)
            ? strided_buffer_wrap_known((void *)base, (size_t)bytes, &info,
                                        release, context, out)
            : strided_buffer_wrap((void *)base, (size_t)bytes, release, context,
                                  out);
    if (status != STRIDED_OK)
        return status;
    /* Offset 0 of the layout sits slice_offset elements before element0,
     * at buffer start - mn * itemsize: before the buffer when every offset
     * is positive (a negative origin). An empty layout's buffer is empty at
     * element0 itself. The layout invariant keeps both products in range. */
    if (mx < mn)
        first = layout->slice_offset * itemsize;
    *origin = -first;
    return STRIDED_OK;
}

strided_status strided_view_wrap(void *element0, const strided_layout *layout,
                                 const strided_dtype *dtype, bool readonly,
                                 const strided_device *device,
                                 strided_release_fn release, void *context,
                                 strided_view *out)
{
    const char *op = "wrap";
    if (layout == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "layout and out are required");
    strided_status status = check_layout(op, layout);
    if (status == STRIDED_OK && dtype != NULL)
        status = check_dtype(op, dtype, layout->itemsize);
    if (status != STRIDED_OK)
        return status;
    if (element0 == NULL && strided_layout_volume(layout) > 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "element (0,...,0) is at NULL in a layout with "
                             "%lld elements",
                             (long long)strided_layout_volume(layout));
    strided_buffer *buffer = NULL;
    int64_t origin = 0;
    status = wrap_footprint(op, element0, layout, device, release, context,
                            &buffer, &origin);
    if (status != STRIDED_OK)
        return status;
    out->buffer = buffer;
    out->origin = origin;
    out->layout = *layout;
    out->has_dtype = dtype != NULL;
    out->dtype = dtype != NULL ? *dtype : (strided_dtype){0, 0, 0};
    out->device = device != NULL ? *device : strided_buffer_device(buffer);
    out->readonly = readonly;
    return STRIDED_OK;
}

/* The release callbacks of imported tensors' buffers: the context is the
 * managed tensor, whose deleter (if any) runs once, here. */
static void release_versioned(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    strided_dl_managed_tensor_versioned *m = context;
    if (m->deleter != NULL)
        m->deleter(m);
}

static void release_legacy(void *context, void *ptr, size_t size)
{
    (void)ptr;
    (void)size;
    strided_dl_managed_tensor *m = context;
    if (m->deleter != NULL)
        m->deleter(m);
}

/* Validate a managed tensor and make its view in *out (written on success
 * only). On failure nothing is owned: the caller calls the deleter. On
 * success the view's buffer owns the tensor.
 * Assumes: managed is not NULL. */
static strided_status import_tensor(const char *op, void *managed,
                                    bool versioned, strided_view *out)
{
    assert(managed != NULL);
    const strided_dl_tensor *t = NULL;
    bool strides_required = false;
    bool readonly = false;
    if (versioned) {
        strided_dl_managed_tensor_versioned *m = managed;
        /* DLPack: with another major version no other field may be read. */
        if (m->version.major != STRIDED_DLPACK_MAJOR_VERSION)
            return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                                 "Unsupported DLPack major version: %lu "
                                 "(only 1 is supported)",
                                 (unsigned long)m->version.major);
        t = &m->dl_tensor;
        strides_required = m->version.minor >= 2;
        readonly = (m->flags & STRIDED_DLPACK_FLAG_READ_ONLY) != 0;
    } else {
        strided_dl_managed_tensor *m = managed;
        t = &m->dl_tensor;
    }

    int ndim = t->ndim;
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.ndim is %d, outside 0..%d", ndim,
                             STRIDED_MAX_NDIM);
    if (ndim > 0 && t->shape == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.shape is NULL with ndim %d", ndim);
    if (ndim > 0 && t->strides == NULL && strides_required)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.strides is NULL with ndim %d; DLPack "
                             "1.2 and later require explicit strides",
                             ndim);
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (t->shape[i] < 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "dl_tensor.shape[%d] is %lld; extents must "
                                 "be non-negative",
                                 i, (long long)t->shape[i]);
        if (t->shape[i] == 0)
            empty = true;
    }
    int itemsize = 0;
    if (strided_dtype_itemsize(t->dtype, &itemsize) != STRIDED_OK)
        return refail(STRIDED_ERR_UNSUPPORTED, op);

    strided_device device = t->device;
    if (device.device_type != STRIDED_DEVICE_CPU &&
        device.device_type != STRIDED_DEVICE_CUDA &&
        device.device_type != STRIDED_DEVICE_CUDA_HOST &&
        device.device_type != STRIDED_DEVICE_CUDA_MANAGED)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "dl_tensor.device.device_type %d is not "
                             "supported (only CPU, CUDA, CUDA host and CUDA "
                             "managed)",
                             (int)device.device_type);
    if (device.device_id < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.device.device_id is %d; it must not "
                             "be negative",
                             (int)device.device_id);
    if (device.device_type == STRIDED_DEVICE_CPU && device.device_id != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.device.device_id is %d; a CPU "
                             "device must have id 0",
                             (int)device.device_id);

    if (t->data == NULL && !empty) {
        char shape[STRIDED_MAX_NDIM * 22 + 8];
        strided__text text = {shape, sizeof shape, 0};
        strided__text_tuple(&text, ndim, t->shape);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.data is NULL for a tensor of shape "
                             "%s, which has elements",
                             shape);
    }
    /* byte_offset: overflow first, then alignment (robustness.md B8 16). */
    uint64_t byte_offset = t->byte_offset;
    uintptr_t data = (uintptr_t)t->data;
    if (byte_offset > (uint64_t)INT64_MAX)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.byte_offset %llu exceeds INT64_MAX",
                             (unsigned long long)byte_offset);
    if (byte_offset > (uint64_t)(UINTPTR_MAX - data))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.data %p + byte_offset %llu overflows "
                             "the address space",
                             t->data, (unsigned long long)byte_offset);
    if (byte_offset % (uint64_t)itemsize != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.byte_offset %llu is not a multiple "
                             "of the itemsize %d",
                             (unsigned long long)byte_offset, itemsize);

    strided_layout layout;
    strided_status status =
        strided_layout_init(&layout, ndim, t->shape, t->strides, itemsize);
    if (status != STRIDED_OK)
        return refail(status, op);

    strided_buffer *buffer = NULL;
    int64_t origin = 0;
    status = wrap_footprint(op, (void *)(data + (uintptr_t)byte_offset), &layout,
                            &device, versioned ? release_versioned : release_legacy,
                            managed, &buffer, &origin);
    if (status != STRIDED_OK)
        return status;
    /* Field by field: a view is over 1 KB, and this is the hot path of
     * every import. */
    out->buffer = buffer;
    out->origin = origin;
    out->layout = layout;
    out->has_dtype = true;
    out->dtype = t->dtype;
    out->device = device;
    out->readonly = readonly;
    return STRIDED_OK;
}

strided_status strided_view_import_dlpack(void *managed, bool versioned,
                                          strided_view *out)
{
    const char *op = "import_dlpack";
    if (managed == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "managed is NULL: there is no tensor to import");
    strided_status status = STRIDED_OK;
    if (out == NULL)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                               "out is required");
    else
        status = import_tensor(op, managed, versioned, out);
    if (status != STRIDED_OK) {
        /* Nothing took the tensor: it is still ours to delete, once. */
        if (versioned)
            release_versioned(managed, NULL, 0);
        else
            release_legacy(managed, NULL, 0);
        return status;
    }
    return STRIDED_OK;
}

strided_status strided_view_check_dlpack_stream(const strided_view *view, bool given,
                                                int64_t stream)
{
    const char *op = "__dlpack__";
    if (view == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the view is required");
    if (!given || stream == -1)
        return STRIDED_OK;
    int32_t type = view->device.device_type;
    if (type != STRIDED_DEVICE_CUDA && type != STRIDED_DEVICE_CUDA_MANAGED)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "stream=%lld is not valid for a view of host memory: a "
                             "host producer takes stream=None or -1",
                             (long long)stream);
    if (stream == 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "stream=0 is ambiguous (the legacy or the per-thread "
                             "default stream): pass 1, 2 or a stream handle");
    if (stream < -1)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "stream=%lld is not a stream: pass -1, 1, 2 or a stream "
                             "handle",
                             (long long)stream);
    return STRIDED_OK;
}
