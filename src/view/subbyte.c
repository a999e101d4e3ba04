/*
 * view/subbyte.c: the two spellings of packed sub-byte views
 * (strided_view_relane of strided/view.h). A sub-byte type in lanes 2
 * (PyTorch's float4_e2m1fn_x2) and the same type in lanes 1 (DLPack's
 * float4_e2m1fn) describe the same memory: element o of lanes 2 is
 * elements 2o and 2o + 1 of lanes 1, so offsets and strides double one way
 * and halve the other, and the pairs' axis becomes, or comes from, a run
 * of stride 1 along the last axis.
 */
#include <stdint.h>

#include "base/base.h"
#include "strided/view.h"
#include "view/view_internal.h"

/* The lanes-1 layout of a lanes-2 one: every stride and the offset times
 * 2, and each pair spread along the last axis when it runs with stride 1
 * (or has one pair), or along a new last axis of extent 2 otherwise. */
static strided_status split_pairs(const char *op, const strided_layout *l, strided_layout *out)
{
    int ndim = l->ndim;
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM], offset = 0;
    bool merge = ndim > 0 && (l->shape[ndim - 1] <= 1 || l->strides[ndim - 1] == 1);
    for (int k = 0; k < ndim; k++) {
        shape[k] = l->shape[k];
        if (strided__mul_overflow(l->strides[k], 2, &strides[k]))
            return strided__fail(STRIDED_ERR_OVERFLOW, op, "stride %lld times 2 overflows int64",
                                 (long long)l->strides[k]);
    }
    if (strided__mul_overflow(l->slice_offset, 2, &offset))
        return strided__fail(STRIDED_ERR_OVERFLOW, op, "offset %lld times 2 overflows int64",
                             (long long)l->slice_offset);
    if (merge) {
        if (strided__mul_overflow(shape[ndim - 1], 2, &shape[ndim - 1]))
            return strided__fail(STRIDED_ERR_OVERFLOW, op, "extent %lld times 2 overflows int64",
                                 (long long)l->shape[ndim - 1]);
        strides[ndim - 1] = 1;
    } else {
        if (ndim == STRIDED_MAX_NDIM)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "the pairs of a %d-dimensional view whose last axis does not "
                                 "have stride 1 need an axis more than a layout has",
                                 ndim);
        shape[ndim] = 2;
        strides[ndim] = 1;
        ndim++;
    }
    strided_layout r;
    strided_status status = strided_layout_init(&r, ndim, shape, strides, 1);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    r.slice_offset = offset;
    *out = r;
    return STRIDED_OK;
}

/* The lanes-2 layout of a lanes-1 one: pairs along the last axis, which
 * must have stride 1 and an even extent, with even strides elsewhere and
 * an even offset, so that every pair starts at an even element. */
static strided_status join_pairs(const char *op, const strided_layout *l, strided_layout *out)
{
    int ndim = l->ndim, last = ndim - 1;
    bool ok = ndim > 0 && l->slice_offset % 2 == 0 && l->shape[last] % 2 == 0 &&
              (l->strides[last] == 1 || l->shape[last] == 0);
    for (int k = 0; ok && k < last; k++)
        ok = l->shape[k] <= 1 || l->strides[k] % 2 == 0;
    if (!ok) {
        char text[2816];
        strided_layout_format(l, text, sizeof text);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s cannot be seen as pairs (lanes 2): pairs run along the last "
                             "axis, which needs stride 1 and an even extent, with even strides "
                             "on the other axes and an even offset",
                             text);
    }
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    for (int k = 0; k < ndim; k++) {
        shape[k] = l->shape[k];
        strides[k] = l->strides[k] / 2; /* exact where the extent is above 1 */
    }
    shape[last] /= 2;
    strides[last] = 1;
    strided_layout r;
    strided_status status = strided_layout_init(&r, ndim, shape, strides, 1);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    r.slice_offset = l->slice_offset / 2;
    *out = r;
    return STRIDED_OK;
}

strided_status strided_view_relane(const strided_view *view, int lanes, strided_view *out)
{
    const char *op = "relane";
    if (view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "view and out are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view has no buffer (it was released)");
    if (!view->has_dtype || !strided_dtype_is_subbyte(view->dtype) || view->padded) {
        char name[64] = "no dtype";
        if (view->has_dtype)
            strided_dtype_format(view->dtype, name, sizeof name);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "only a view of a packed sub-byte type changes its lanes, not one "
                             "of %s%s",
                             view->padded ? "padded " : "", name);
    }
    if (lanes != 1 && lanes != 2)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "lanes must be 1 or 2, got %d",
                             lanes);
    if (lanes == view->dtype.lanes)
        return strided_view_view(view, NULL, NULL, out);
    strided_layout l;
    strided_status status = lanes == 1 ? split_pairs(op, &view->layout, &l)
                                       : join_pairs(op, &view->layout, &l);
    if (status != STRIDED_OK)
        return status;
    strided_dtype d = view->dtype;
    d.lanes = (uint16_t)lanes;
    status = strided_view_view_ex(view, &l, &d, false, out);
    return status == STRIDED_OK ? STRIDED_OK : strided__refail(status, op, "");
}
