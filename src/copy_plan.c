/*
 * copy_plan.c: validating a copy and normalising its two layouts into a
 * plan (strided/copy.h).
 *
 * The steps, on the destination's shape: broadcast the source; drop
 * extent-1 axes; flip every axis on which the destination steps backwards
 * (on both sides: which element goes where does not change); order the axes
 * by destination stride, the smallest last; merge neighbours that are
 * contiguous on both sides; then name the kernel by the last axis (and, for
 * transposes, the axis where the source is contiguous). Every product of
 * extents and strides here is bounded by a layout's offset range, which the
 * layouts' construction keeps inside int64; the merges check anyway.
 */
#include <stdio.h>
#include <string.h>

#include "copy_internal.h"

const char *strided_copy_kernel_name(strided_copy_kernel kernel)
{
    switch (kernel) {
    case STRIDED_COPY_NOTHING: return "nothing";
    case STRIDED_COPY_CONTIGUOUS: return "contiguous";
    case STRIDED_COPY_ROWS: return "rows";
    case STRIDED_COPY_TRANSPOSE: return "transpose";
    case STRIDED_COPY_BROADCAST: return "broadcast";
    case STRIDED_COPY_GATHER: return "gather";
    }
    return "unknown";
}

/* The source broadcast to the destination's shape (NumPy's rules, aligned
 * on the right): its strides per destination axis, 0 where it repeats. */
static strided_status broadcast_source(const char *op, const strided_layout *dst,
                                       const strided_layout *src, int64_t *strides)
{
    int n = dst->ndim, m = src->ndim;
    bool ok = m <= n;
    for (int i = 0; ok && i < n; i++) {
        int j = i - (n - m); /* the source axis aligned with axis i */
        if (j < 0)
            strides[i] = 0;
        else if (src->shape[j] == dst->shape[i])
            strides[i] = src->shape[j] == 1 ? 0 : src->strides[j];
        else if (src->shape[j] == 1)
            strides[i] = 0;
        else
            ok = false;
    }
    if (ok)
        return STRIDED_OK;
    char a[STRIDED_MAX_NDIM * 22 + 8], b[STRIDED_MAX_NDIM * 22 + 8];
    strided__text ta = {a, sizeof a, 0}, tb = {b, sizeof b, 0};
    strided__text_tuple(&ta, n, dst->shape);
    strided__text_tuple(&tb, m, src->shape);
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "Layouts of shapes %s and %s cannot be broadcast "
                         "together: the source's shape must broadcast to the "
                         "destination's",
                         a, b);
}

strided_status strided_copy_plan_make(const strided_layout *dst,
                                      const strided_layout *src,
                                      strided_copy_plan *out)
{
    const char *op = "copy";
    if (dst == NULL || src == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dst, src and out are required");
    if (dst->itemsize != src->itemsize)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The itemsize of the destination and source "
                             "layouts must match. Got dst itemsize:%d and src "
                             "itemsize:%d",
                             (int)dst->itemsize, (int)src->itemsize);
    int64_t bstrides[STRIDED_MAX_NDIM];
    strided_status status = broadcast_source(op, dst, src, bstrides);
    if (status != STRIDED_OK)
        return status;
    if (!strided_layout_is_unique(dst)) {
        char text[2048];
        strided_layout_format(dst, text, sizeof text);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The destination layout is non-unique, i.e. some "
                             "elements may overlap in memory: %s",
                             text);
    }

    strided_copy_plan p;
    p.itemsize = (int)dst->itemsize;
    p.src_unit_axis = -1;
    p.dst_offset = 0;
    p.src_offset = 0;
    p.volume = strided_layout_volume(dst);
    p.ndim = 0;
    if (p.volume == 0) {
        p.kernel = STRIDED_COPY_NOTHING;
        *out = p;
        return STRIDED_OK;
    }
    /* Extent-1 axes go; backward destination axes are flipped. */
    for (int i = 0; i < dst->ndim; i++) {
        int64_t n = dst->shape[i], ds = dst->strides[i], ss = bstrides[i];
        if (n == 1)
            continue;
        if (ds < 0) {
            p.dst_offset += ds * (n - 1);
            p.src_offset += ss * (n - 1);
            ds = -ds;
            ss = -ss;
        }
        p.shape[p.ndim] = n;
        p.dst_strides[p.ndim] = ds;
        p.src_strides[p.ndim] = ss;
        p.ndim++;
    }
    /* Order by destination stride, the largest first (insertion sort: few
     * axes; the destination is unique, so no two strides tie). */
    for (int i = 1; i < p.ndim; i++) {
        int64_t n = p.shape[i], ds = p.dst_strides[i], ss = p.src_strides[i];
        int j = i - 1;
        for (; j >= 0 && p.dst_strides[j] < ds; j--) {
            p.shape[j + 1] = p.shape[j];
            p.dst_strides[j + 1] = p.dst_strides[j];
            p.src_strides[j + 1] = p.src_strides[j];
        }
        p.shape[j + 1] = n;
        p.dst_strides[j + 1] = ds;
        p.src_strides[j + 1] = ss;
    }
    /* Merge an axis into the one after it when both sides step over it as
     * one longer axis. */
    int m = 0;
    for (int i = 1; i < p.ndim; i++) {
        int64_t span_d = 0, span_s = 0;
        bool merge = !strided__mul_overflow(p.dst_strides[i], p.shape[i], &span_d) &&
                     !strided__mul_overflow(p.src_strides[i], p.shape[i], &span_s) &&
                     span_d == p.dst_strides[m] && span_s == p.src_strides[m];
        if (merge) {
            p.shape[m] *= p.shape[i];
            p.dst_strides[m] = p.dst_strides[i];
            p.src_strides[m] = p.src_strides[i];
        } else {
            m++;
            p.shape[m] = p.shape[i];
            p.dst_strides[m] = p.dst_strides[i];
            p.src_strides[m] = p.src_strides[i];
        }
    }
    if (p.ndim == 0) {
        /* One element: a contiguous run of one. */
        p.ndim = 1;
        p.shape[0] = 1;
        p.dst_strides[0] = 1;
        p.src_strides[0] = 1;
    } else {
        p.ndim = m + 1;
    }

    int last = p.ndim - 1;
    int64_t dl = p.dst_strides[last], sl = p.src_strides[last];
    if (dl == 1 && sl == 1)
        p.kernel = p.ndim == 1 ? STRIDED_COPY_CONTIGUOUS : STRIDED_COPY_ROWS;
    else if (dl == 1 && sl == 0)
        p.kernel = STRIDED_COPY_BROADCAST;
    else
        p.kernel = STRIDED_COPY_GATHER;
    if (dl == 1 && p.kernel == STRIDED_COPY_GATHER)
        for (int k = last - 1; k >= 0; k--)
            if (p.src_strides[k] == 1) {
                p.kernel = STRIDED_COPY_TRANSPOSE;
                p.src_unit_axis = k;
                break;
            }
    *out = p;
    return STRIDED_OK;
}
