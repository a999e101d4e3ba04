/*
 * view/view.c: strided views (a buffer seen through a layout), their range
 * validation, and views of memory described by the address of its element
 * (0,...,0) and a layout (what the imports build on).
 *
 * Every view keeps the invariant of view.h: the bytes its elements occupy,
 * origin + [min_offset, max_offset + 1) * itemsize, lie inside [0, size) of
 * its buffer. A wrapped description becomes a buffer that covers exactly
 * its footprint, so views derived from an import are checked against the
 * producer's memory and keep it alive.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>

#include "base/base.h"
#include "strided/dtype.h"
#include "layout/layout_internal.h"
#include "strided/view.h"
#include "view/view_internal.h"

strided_status strided__refail(strided_status status, const char *op, const char *prefix)
{
    char reason[4096];
    snprintf(reason, sizeof reason, "%s", strided_last_error_reason());
    return strided__fail(status, op, "%s%s", prefix, reason);
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
    case STRIDED_MEMORY_MANAGED: d.device_type = STRIDED_DEVICE_CUDA_MANAGED; break;
    case STRIDED_MEMORY_PINNED: d.device_type = STRIDED_DEVICE_CUDA_HOST; break;
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

/* Check that elements of size bytes are the layout's, of itemsize. */
static strided_status check_itemsize(const char *op, int64_t size, int64_t itemsize)
{
    if (size != itemsize)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The dtype's itemsize (%lld) does not match the "
                             "layout's itemsize (%lld).",
                             (long long)size, (long long)itemsize);
    return STRIDED_OK;
}

/* The bits of one element of a packed view whose elements are not whole
 * bytes (dtype a packed sub-byte type), or 0 for every other view. Sets no
 * error. */
static int packed_bits(bool has_dtype, strided_dtype dtype, bool padded)
{
    int bits = 0;
    if (!has_dtype || !strided_dtype_is_subbyte(dtype) ||
        strided_dtype_element_bits(dtype, padded, &bits) != STRIDED_OK)
        return 0;
    return bits % 8 != 0 ? bits : 0;
}

int strided_view_packed_bits(const strided_view *view)
{
    return packed_bits(view->has_dtype, view->dtype, view->padded);
}

/* Check that dtype (padded or packed) describes the layout's elements: of
 * its itemsize in bytes, or, for packed elements that are not whole bytes,
 * a layout of itemsize 1 whose offsets count them. */
static strided_status check_dtype(const char *op, const strided_dtype *dtype, bool padded,
                                  int itemsize)
{
    int bits = 0;
    if (strided_dtype_element_bits(*dtype, padded, &bits) != STRIDED_OK)
        return strided__refail(STRIDED_ERR_UNSUPPORTED, op, "");
    if (bits % 8 == 0)
        return check_itemsize(op, bits / 8, itemsize);
    if (itemsize != 1) {
        char name[32];
        strided_dtype_format(*dtype, name, sizeof name);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "a layout of packed %s elements (%d bits each) has itemsize 1, "
                             "its offsets counting elements, got itemsize %d",
                             name, bits, itemsize);
    }
    return STRIDED_OK;
}

strided_status strided_view_check_itemsize(const strided_layout *layout, int64_t itemsize)
{
    if (layout == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "view", "layout is required");
    return check_itemsize("view", itemsize, layout->itemsize);
}

/* The bytes [lo, hi) that the layout's elements occupy counted from offset
 * 0 (empty for a layout of volume 0): (min_offset, max_offset + 1) times
 * the itemsize, or for packed elements of bits bits (bits > 0) the bytes
 * their bits lie in, after the packed-layout rule.
 * Assumes: the layout passed check_layout. */
static strided_status byte_bounds(const char *op, const strided_layout *l, int bits, int64_t *lo,
                                  int64_t *hi)
{
    if (bits > 0) {
        strided_status status = strided_layout_packed_byte_bounds(l, bits, lo, hi);
        return status == STRIDED_OK ? status : strided__refail(status, op, "");
    }
    int64_t mn = 0, mx = -1;
    strided_layout_offset_bounds(l, &mn, &mx);
    if (mx < mn) {
        *lo = *hi = 0;
        return STRIDED_OK;
    }
    if (strided__mul_overflow(mn, l->itemsize, lo) || strided__add_overflow(mx, 1, hi) ||
        strided__mul_overflow(*hi, l->itemsize, hi))
        return strided__fail(STRIDED_ERR_OVERFLOW, op,
                             "the byte range of element offsets [%lld, %lld] "
                             "with itemsize %d overflows int64",
                             (long long)mn, (long long)mx, (int)l->itemsize);
    return STRIDED_OK;
}

/* Check that every byte the layout's elements occupy, counted from origin,
 * lies inside the buffer, for owned and wrapped buffers alike; bits > 0:
 * packed elements of that many bits, whose layout must keep the
 * packed-layout rule. A layout of volume 0 reaches no byte.
 * Origin 0 (views of a buffer) reports as cuda.core does; another origin
 * (views derived from a wrapped import, where offset 0 may even lie before
 * the buffer) names the byte range.
 * Assumes: the layout passed check_layout. */
static strided_status check_range(const char *op, const strided_buffer *b, int64_t origin,
                                  const strided_layout *l, int bits)
{
    int64_t mn = 0, mx = -1, lo_bytes = 0, hi_bytes = 0;
    strided_status status = byte_bounds(op, l, bits, &lo_bytes, &hi_bytes);
    if (status != STRIDED_OK)
        return status;
    strided_layout_offset_bounds(l, &mn, &mx);
    if (mx < mn)
        return STRIDED_OK;
    size_t buffer_size = strided_buffer_size(b);
    int64_t lo = 0, hi = 0;
    if (strided__add_overflow(origin, lo_bytes, &lo) ||
        strided__add_overflow(origin, hi_bytes, &hi))
        return strided__fail(STRIDED_ERR_OVERFLOW, op,
                             "the byte range [%lld, %lld) of the elements from origin %lld "
                             "overflows int64",
                             (long long)lo_bytes, (long long)hi_bytes, (long long)origin);
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

strided_status strided_view_from_buffer_ex(strided_buffer *buffer, const strided_layout *layout,
                                           const strided_dtype *dtype, bool padded, bool readonly,
                                           strided_view *out)
{
    const char *op = "view";
    if (buffer == NULL || layout == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "buffer, layout and out are required");
    padded = padded && dtype != NULL && strided_dtype_is_subbyte(*dtype);
    strided_status status = check_layout(op, layout);
    if (status == STRIDED_OK && dtype != NULL)
        status = check_dtype(op, dtype, padded, layout->itemsize);
    if (status == STRIDED_OK)
        status = check_range(op, buffer, 0, layout,
                             dtype != NULL ? packed_bits(true, *dtype, padded) : 0);
    if (status != STRIDED_OK)
        return status;
    strided_view v = {0};
    v.buffer = strided_buffer_retain(buffer);
    v.origin = 0;
    v.layout = *layout;
    v.has_dtype = dtype != NULL;
    if (dtype != NULL)
        v.dtype = *dtype;
    v.padded = padded;
    v.device = strided_buffer_device(buffer);
    strided_memory_info info = strided_buffer_memory_info(buffer);
    v.home_device = info.device_id;
    v.device_accessible = info.device_accessible;
    v.readonly = readonly;
    *out = v;
    return STRIDED_OK;
}

strided_status strided_view_from_buffer(strided_buffer *buffer, const strided_layout *layout,
                                        const strided_dtype *dtype, bool readonly,
                                        strided_view *out)
{
    return strided_view_from_buffer_ex(buffer, layout, dtype, false, readonly, out);
}

/* strided_view_view_ex; keep: dtype is NULL, so the view's dtype and form
 * carry over where the itemsize stays. */
static strided_status view_view(const strided_view *view, const strided_layout *layout,
                                const strided_dtype *dtype, bool padded, strided_view *out)
{
    const char *op = "view";
    if (view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "view and out are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view has no buffer (it was released)");
    const strided_layout *l = layout != NULL ? layout : &view->layout;
    strided_status status = check_layout(op, l);
    /* The new view's element type: the one given, or the view's own where
     * the itemsize stays. */
    bool has_dtype = false;
    strided_dtype d = {0, 0, 0};
    if (dtype != NULL) {
        has_dtype = true;
        d = *dtype;
        padded = padded && strided_dtype_is_subbyte(d);
    } else if (view->has_dtype && l->itemsize == view->layout.itemsize) {
        has_dtype = true;
        d = view->dtype;
        padded = view->padded;
    } else {
        padded = false;
    }
    if (status == STRIDED_OK && dtype != NULL)
        status = check_dtype(op, dtype, padded, l->itemsize);
    if (status == STRIDED_OK)
        status = check_range(op, view->buffer, view->origin, l, packed_bits(has_dtype, d, padded));
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
    v.has_dtype = has_dtype;
    v.dtype = d;
    v.padded = padded;
    v.device = view->device;
    v.home_device = view->home_device;
    v.device_accessible = view->device_accessible;
    v.readonly = view->readonly;
    *out = v;
    return STRIDED_OK;
}

strided_status strided_view_view(const strided_view *view, const strided_layout *layout,
                                 const strided_dtype *dtype, strided_view *out)
{
    return view_view(view, layout, dtype, false, out);
}

strided_status strided_view_view_ex(const strided_view *view, const strided_layout *layout,
                                    const strided_dtype *dtype, bool padded, strided_view *out)
{
    return view_view(view, layout, dtype, padded, out);
}

void strided_view_release(strided_view *view)
{
    if (view == NULL)
        return;
    strided_buffer_release(view->buffer);
    view->buffer = NULL;
}

/* The byte offset from offset 0 of the byte where element (0,...,0)
 * starts: slice_offset times the itemsize, or for packed elements of bits
 * bits (bits > 0), floor(slice_offset * bits / 8), exact where the layout
 * has elements (the packed-layout rule puts the element on a byte
 * boundary). Unsigned arithmetic where whole bytes: the invariant keeps it
 * in range, and a view changed by hand cannot make it undefined. */
static int64_t slice_bytes(const strided_layout *l, int bits)
{
    if (bits <= 0)
        return (int64_t)((uint64_t)l->slice_offset * (uint64_t)l->itemsize);
    /* In groups of elements that fill whole bytes, whose count and size
     * keep the product within the byte offsets the bounds checked. */
    int64_t group = 8, group_bytes = bits;
    while (group % 2 == 0 && group_bytes % 2 == 0) {
        group /= 2;
        group_bytes /= 2;
    }
    int64_t q = l->slice_offset / group, r = l->slice_offset % group;
    if (r < 0) {
        q -= 1;
        r += group;
    }
    return q * group_bytes + r * bits / 8;
}

/* The byte distance from the buffer's start to element (0,...,0). */
static uintptr_t element0_offset(const strided_view *v)
{
    return (uintptr_t)v->origin + (uintptr_t)slice_bytes(&v->layout, strided_view_packed_bits(v));
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
static bool info_of_device(const strided_device *device, uintptr_t ptr, strided_memory_info *out)
{
    strided_memory_info info = {STRIDED_MEMORY_HOST, -1, true, false, false, false, 0};
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
static strided_status wrap_footprint(const char *op, void *element0, const strided_layout *layout,
                                     int bits, const strided_device *device,
                                     strided_release_fn release, void *context,
                                     strided_buffer **out, int64_t *origin)
{
    uintptr_t e0 = (uintptr_t)element0;
    uintptr_t base = e0;
    int64_t bytes = 0, offset = 0, first = 0;
    int64_t mn = 0, mx = -1;
    int itemsize = (int)layout->itemsize;
    strided_layout_offset_bounds(layout, &mn, &mx);
    if (mx >= mn && bits > 0) {
        /* Packed elements: the bytes their bits lie in, and element0 at the
         * byte of element (0,...,0), which starts on a byte boundary. */
        int64_t lo = 0, hi = 0;
        strided_status status = byte_bounds(op, layout, bits, &lo, &hi);
        if (status != STRIDED_OK)
            return status;
        bytes = hi - lo;
        first = lo;
        offset = slice_bytes(layout, bits) - lo;
    } else if (mx >= mn) {
        /* The bounds count from offset 0, element0 is at slice_offset:
         * count from element0. The layout invariant keeps mn * itemsize in
         * range; the span between the bounds may not be. */
        int64_t count = 0, low = 0, rel = 0;
        if (__builtin_sub_overflow(mx, mn, &count) || strided__add_overflow(count, 1, &count) ||
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
    }
    /* No memory starts at address 0 (the null page), and a footprint from
     * there would read as no address at all. */
    if (mx >= mn) {
        if ((uint64_t)offset >= (uint64_t)e0 ||
            (uint64_t)bytes > (uint64_t)(UINTPTR_MAX - (e0 - (uintptr_t)offset)))
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "the elements, bytes [%lld, %lld) from "
                                 "element (0,...,0) at %p, leave the address "
                                 "space",
                                 (long long)-offset, (long long)(bytes - offset), element0);
        base = e0 - (uintptr_t)offset;
    }
    strided_memory_info info;
    strided_status status =
        info_of_device(device, base, &info)
            ? strided_buffer_wrap_known((void *)base, (size_t)bytes, &info, release, context, out)
            : strided_buffer_wrap((void *)base, (size_t)bytes, release, context, out);
    if (status != STRIDED_OK)
        return status;
    /* Offset 0 of the layout sits slice_offset elements before element0,
     * at buffer start - mn * itemsize (for packed elements, minus the byte
     * of the lowest one): before the buffer when every offset is positive
     * (a negative origin). An empty layout's buffer is empty at element0
     * itself. The layout invariant keeps both products in range. */
    if (mx < mn)
        first = slice_bytes(layout, bits);
    *origin = -first;
    return STRIDED_OK;
}

strided_status strided_view_wrap(void *element0, const strided_layout *layout,
                                 const strided_dtype *dtype, bool readonly,
                                 const strided_device *device, strided_release_fn release,
                                 void *context, strided_view *out)
{
    const char *op = "wrap";
    if (layout == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    strided_status status = check_layout(op, layout);
    if (status == STRIDED_OK && dtype != NULL)
        status = check_dtype(op, dtype, false, layout->itemsize);
    if (status != STRIDED_OK)
        return status;
    return strided__view_wrap_made(op, element0, layout, dtype, false, readonly, device, release,
                                   context, out);
}

void strided__view_assign(strided_view *out, const strided_view *src)
{
    out->buffer = src->buffer;
    out->origin = src->origin;
    strided__layout_assign(&out->layout, &src->layout);
    out->has_dtype = src->has_dtype;
    out->dtype = src->dtype;
    out->device = src->device;
    out->home_device = src->home_device;
    out->device_accessible = src->device_accessible;
    out->readonly = src->readonly;
    out->padded = src->padded;
}

strided_status strided__view_wrap_made(const char *op, void *element0, const strided_layout *layout,
                                       const strided_dtype *dtype, bool padded, bool readonly,
                                       const strided_device *device, strided_release_fn release,
                                       void *context, strided_view *out)
{
    assert(layout != NULL && out != NULL);
    if (element0 == NULL && strided_layout_volume(layout) > 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "element (0,...,0) is at NULL in a layout with "
                             "%lld elements",
                             (long long)strided_layout_volume(layout));
    padded = padded && dtype != NULL && strided_dtype_is_subbyte(*dtype);
    int bits = dtype != NULL ? packed_bits(true, *dtype, padded) : 0;
    strided_buffer *buffer = NULL;
    int64_t origin = 0;
    strided_status status = wrap_footprint(op, element0, layout, bits, device, release, context,
                                           &buffer, &origin);
    if (status != STRIDED_OK)
        return status;
    out->buffer = buffer;
    out->origin = origin;
    strided__layout_assign(&out->layout, layout);
    out->has_dtype = dtype != NULL;
    out->dtype = dtype != NULL ? *dtype : (strided_dtype){0, 0, 0};
    out->padded = padded;
    out->device = device != NULL ? *device : strided_buffer_device(buffer);
    strided_memory_info info = strided_buffer_memory_info(buffer);
    out->home_device = info.device_id;
    out->device_accessible = info.device_accessible;
    out->readonly = readonly;
    return STRIDED_OK;
}
