/*
 * layout/layout.c: the strided layout and its algebra.
 *
 * Every manipulation builds its result in a local layout and stores it into
 * *out last, so the output may alias the input and is untouched on failure.
 * Only the first ndim entries of shape[] and strides[] are copied. Where
 * cuda.core refuses the same input, the message is cuda.core's sentence word
 * for word, because the Python binding raises it as it is; the failures
 * cuda.core does not have (overflow, NULL pointers) speak in the library's
 * own voice (docs/style.md).
 */
#include <assert.h>
#include <string.h>

#include "base/base.h"
#include "layout/layout_internal.h"
#include "strided/layout.h"

/* Big enough for "(shape):(strides)+offset" of a 64-dimensional layout. */
#define LAYOUT_TEXT_CAPACITY 2816

typedef struct layout_text {
    char text[LAYOUT_TEXT_CAPACITY];
} layout_text;

static const char *show_layout(const strided_layout *l, layout_text *t)
{
    strided_layout_format(l, t->text, sizeof t->text);
    return t->text;
}

static const char *show_tuple(int n, const int64_t *v, layout_text *t)
{
    strided__text text = {t->text, sizeof t->text, 0};
    strided__text_tuple(&text, n, v);
    return t->text;
}

static void store(strided_layout *out, const strided_layout *t)
{
    out->ndim = t->ndim;
    out->itemsize = t->itemsize;
    out->implicit_strides = t->implicit_strides;
    out->slice_offset = t->slice_offset;
    /* A plain loop: for the few axes of a typical layout it beats a call to
     * memcpy. */
    if (out != t)
        for (int i = 0; i < t->ndim; i++) {
            out->shape[i] = t->shape[i];
            out->strides[i] = t->strides[i];
        }
}

void strided__layout_assign(strided_layout *out, const strided_layout *src)
{
    store(out, src);
}

/* Normalize axis against n (negative counts from the end). */
static bool normalize_axis(int axis, int n, int *out)
{
    if (axis < -n || axis >= n)
        return false;
    *out = axis < 0 ? axis + n : axis;
    return true;
}

/* |v| without the undefined behaviour of -INT64_MIN. */
static uint64_t magnitude(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static strided_status fail_ndim(const char *op, int ndim)
{
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "Unsupported number of dimensions: %d. Max supported "
                         "ndim is %d",
                         ndim, STRIDED_MAX_NDIM);
}

/* An array of count entries given as NULL though count > 0 (an array may
 * be NULL only when its count is 0). */
static strided_status fail_null_array(const char *op, const char *array, const char *count_name,
                                      int count)
{
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "%s is required: it is NULL with %s %d",
                         array, count_name, count);
}

/* Assumes: 0 <= ndim <= 64. */
static strided_status check_extents(const char *op, int ndim, const int64_t *shape)
{
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "Extents must be non-negative");
    return STRIDED_OK;
}

/* The product of the non-zero extents must fit in int64 (NumPy keeps
 * multiplying past zeros for the same reason): a shape whose size cannot be
 * represented is rejected even when another extent makes the volume 0.
 * Writes the volume. Assumes: extents >= 0. */
static strided_status checked_volume(const char *op, int ndim, const int64_t *shape, int64_t *out)
{
    int64_t product = 1;
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            empty = true;
            continue;
        }
        if (strided__mul_overflow(product, shape[i], &product)) {
            layout_text t;
            return strided__fail(STRIDED_ERR_OVERFLOW, op, "the volume of shape %s overflows int64",
                                 show_tuple(ndim, shape, &t));
        }
    }
    *out = empty ? 0 : product;
    return STRIDED_OK;
}

/* Whether v elements of itemsize bytes, and their negation, fit in int64
 * (|v| * itemsize <= INT64_MAX): a multiply with its overflow flag, cheaper
 * than a division on the path of every view. Assumes: itemsize > 0. */
static bool fits_in_bytes(int64_t v, int32_t itemsize)
{
    int64_t bytes;
    return v != INT64_MIN && !strided__mul_overflow(v < 0 ? -v : v, itemsize, &bytes);
}

/* The rest of the layout invariant once the volume is known to fit. Every
 * stride, negated or not, and the slice offset stay representable in bytes
 * (|v| * itemsize <= INT64_MAX, so INT64_MIN is never a stride); for a
 * non-empty layout every element offset, and its byte offset, fits in
 * int64. Whatever reads a valid layout (strides in bytes, flipping a
 * negative stride, byte offsets of elements) can then compute without
 * overflow. */
static strided_status check_offsets(const char *op, const strided_layout *l, int64_t volume)
{
    layout_text t;
    int64_t lo = l->slice_offset, hi = l->slice_offset;
    for (int i = 0; i < l->ndim && volume != 0; i++) {
        int64_t span;
        bool overflow = strided__mul_overflow(l->strides[i], l->shape[i] - 1, &span);
        if (!overflow)
            overflow = span < 0 ? strided__add_overflow(lo, span, &lo)
                                : strided__add_overflow(hi, span, &hi);
        if (overflow)
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "the element offsets of %s overflow int64", show_layout(l, &t));
    }
    for (int i = 0; i < l->ndim; i++)
        if (!fits_in_bytes(l->strides[i], l->itemsize))
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "stride %lld of axis %d times itemsize %d "
                                 "overflows int64 in %s",
                                 (long long)l->strides[i], i, l->itemsize, show_layout(l, &t));
    /* Every element offset lies in [lo, hi] (both the slice offset for an
     * empty layout), so checking both ends in bytes covers them all. */
    if (!fits_in_bytes(lo, l->itemsize) || !fits_in_bytes(hi, l->itemsize))
        return strided__fail(STRIDED_ERR_OVERFLOW, op,
                             "the byte offsets of %s with itemsize %d "
                             "overflow int64",
                             show_layout(l, &t), l->itemsize);
    return STRIDED_OK;
}

/* Fill C strides (all 0 for an empty layout). Assumes: the volume fits. */
static void fill_c_strides(strided_layout *l, int64_t volume)
{
    int64_t running = 1;
    for (int i = l->ndim - 1; i >= 0; i--) {
        l->strides[i] = volume == 0 ? 0 : running;
        running *= volume == 0 ? 1 : l->shape[i];
    }
}

static strided_status init_layout(const char *op, strided_layout *out, int ndim,
                                  const int64_t *shape, const int64_t *strides, int itemsize,
                                  bool divide)
{
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    if (shape == NULL && ndim > 0)
        return fail_null_array(op, "shape", "ndim", ndim);
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return fail_ndim(op, ndim);
    strided_status status = check_extents(op, ndim, shape);
    if (status != STRIDED_OK)
        return status;
    if (itemsize <= 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "itemsize must be positive");
    strided_layout t;
    t.ndim = ndim;
    t.itemsize = itemsize;
    t.slice_offset = 0;
    t.implicit_strides = strides == NULL;
    for (int i = 0; i < ndim; i++)
        t.shape[i] = shape[i];
    int64_t volume = 0;
    status = checked_volume(op, ndim, t.shape, &volume);
    if (status != STRIDED_OK)
        return status;
    if (strides == NULL) {
        fill_c_strides(&t, volume);
    } else {
        for (int i = 0; i < ndim; i++) {
            if (divide && strides[i] % itemsize != 0)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "strides must be divisible by itemsize");
            t.strides[i] = divide ? strides[i] / itemsize : strides[i];
        }
    }
    status = check_offsets(op, &t, volume);
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_init(strided_layout *out, int ndim, const int64_t *shape,
                                   const int64_t *strides, int itemsize)
{
    return init_layout("init", out, ndim, shape, strides, itemsize, false);
}

strided_status strided_layout_init_byte_strides(strided_layout *out, int ndim, const int64_t *shape,
                                                const int64_t *byte_strides, int itemsize)
{
    return init_layout("init", out, ndim, shape, byte_strides, itemsize, true);
}

/* Dense strides for shape in the given order. Assumes: ndim, extents and
 * itemsize are valid. */
static strided_status dense_into(const char *op, strided_layout *out, int ndim,
                                 const int64_t *shape, int itemsize, strided_order order, int nperm,
                                 const int *perm)
{
    strided_layout t;
    t.ndim = ndim;
    t.itemsize = itemsize;
    t.slice_offset = 0;
    t.implicit_strides = false;
    for (int i = 0; i < ndim; i++)
        t.shape[i] = shape[i];
    int64_t volume = 0;
    strided_status status = checked_volume(op, ndim, t.shape, &volume);
    if (status != STRIDED_OK)
        return status;
    /* Once an extent of 0 is passed the running product would be 0; the
     * strides of an empty layout are all 0 anyway, so multiply by 1 then. */
    int64_t running = 1;
    if (order == STRIDED_ORDER_C) {
        for (int i = ndim - 1; i >= 0; i--) {
            t.strides[i] = running;
            running *= volume == 0 ? 1 : shape[i];
        }
    } else if (order == STRIDED_ORDER_F) {
        for (int i = 0; i < ndim; i++) {
            t.strides[i] = running;
            running *= volume == 0 ? 1 : shape[i];
        }
    } else {
        if (nperm != ndim)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "stride_order must have the same length as "
                                 "shape. Shape has %d dimensions, but "
                                 "stride_order has %d elements.",
                                 ndim, nperm);
        uint64_t seen = 0;
        for (int j = nperm - 1; j >= 0; j--) {
            int axis;
            if (!normalize_axis(perm[j], ndim, &axis))
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "Invalid stride order: axis %d out of "
                                     "range for %dD tensor",
                                     perm[j], ndim);
            if (seen & (UINT64_C(1) << axis))
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "The stride order must be a permutation. "
                                     "Axis %d appears multiple times.",
                                     perm[j]);
            seen |= UINT64_C(1) << axis;
            t.strides[axis] = running;
            running *= volume == 0 ? 1 : shape[axis];
        }
    }
    if (volume == 0)
        for (int i = 0; i < ndim; i++)
            t.strides[i] = 0;
    status = check_offsets(op, &t, volume);
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

static const char *order_name(strided_order order)
{
    switch (order) {
    case STRIDED_ORDER_C: return "C";
    case STRIDED_ORDER_F: return "F";
    case STRIDED_ORDER_KEEP: return "K";
    case STRIDED_ORDER_PERM: return "a permutation";
    }
    return "an unknown order";
}

strided_status strided_layout_init_dense(strided_layout *out, int ndim, const int64_t *shape,
                                         int itemsize, strided_order order, int nperm,
                                         const int *perm)
{
    const char *op = "dense";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    if (shape == NULL && ndim > 0)
        return fail_null_array(op, "shape", "ndim", ndim);
    if (order == STRIDED_ORDER_PERM && perm == NULL && nperm > 0)
        return fail_null_array(op, "perm", "nperm", nperm);
    if (order != STRIDED_ORDER_C && order != STRIDED_ORDER_F && order != STRIDED_ORDER_PERM)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The stride_order must be 'C', 'F', or a "
                             "permutation tuple. Got: %s",
                             order_name(order));
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return fail_ndim(op, ndim);
    strided_status status = check_extents(op, ndim, shape);
    if (status != STRIDED_OK)
        return status;
    if (itemsize <= 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "itemsize must be positive");
    return dense_into(op, out, ndim, shape, itemsize, order, nperm, perm);
}

strided_status strided_layout_validate(const strided_layout *l)
{
    const char *op = "validate";
    if (l == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the layout is required");
    if (l->ndim < 0 || l->ndim > STRIDED_MAX_NDIM)
        return fail_ndim(op, l->ndim);
    strided_status status = check_extents(op, l->ndim, l->shape);
    if (status != STRIDED_OK)
        return status;
    if (l->itemsize <= 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "itemsize must be positive");
    int64_t volume = 0;
    status = checked_volume(op, l->ndim, l->shape, &volume);
    if (status != STRIDED_OK)
        return status;
    return check_offsets(op, l, volume);
}

int64_t strided_layout_volume(const strided_layout *l)
{
    /* Unsigned arithmetic: the invariant says the product fits; if a caller
     * broke it by writing fields, the result is wrong but defined. */
    uint64_t v = 1;
    for (int i = 0; i < l->ndim; i++)
        v *= (uint64_t)l->shape[i];
    return (int64_t)v;
}

bool strided_layout_equal(const strided_layout *a, const strided_layout *b)
{
    if (a->ndim != b->ndim || a->itemsize != b->itemsize || a->slice_offset != b->slice_offset ||
        a->implicit_strides != b->implicit_strides)
        return false;
    size_t n = (size_t)a->ndim * sizeof a->shape[0];
    return memcmp(a->shape, b->shape, n) == 0 &&
           (a->implicit_strides || memcmp(a->strides, b->strides, n) == 0);
}

/* splitmix64's finalizer: a cheap, well-mixed step. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    uint64_t z = h ^ (v + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t strided_layout_hash(const strided_layout *l)
{
    uint64_t h = mix((uint64_t)l->ndim, (uint64_t)l->itemsize);
    h = mix(h, (uint64_t)l->slice_offset);
    h = mix(h, l->implicit_strides);
    for (int i = 0; i < l->ndim; i++)
        h = mix(h, (uint64_t)l->shape[i]);
    /* Implicit strides follow from the shape, so they add nothing. */
    if (!l->implicit_strides)
        for (int i = 0; i < l->ndim; i++)
            h = mix(h, (uint64_t)l->strides[i]);
    return h;
}

strided_status strided_layout_strides_in_bytes(const strided_layout *l, int64_t *out)
{
    if (l == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "strides_in_bytes",
                             "layout is required");
    if (out == NULL && l->ndim > 0)
        return fail_null_array("strides_in_bytes", "out", "ndim", l->ndim);
    int64_t bytes[STRIDED_MAX_NDIM];
    for (int i = 0; i < l->ndim; i++)
        if (strided__mul_overflow(l->strides[i], l->itemsize, &bytes[i]))
            return strided__fail(STRIDED_ERR_OVERFLOW, "strides_in_bytes",
                                 "stride %lld of axis %d times itemsize %d "
                                 "overflows int64",
                                 (long long)l->strides[i], i, l->itemsize);
    if (l->ndim > 0)
        memcpy(out, bytes, (size_t)l->ndim * sizeof bytes[0]);
    return STRIDED_OK;
}

strided_status strided_layout_slice_offset_in_bytes(const strided_layout *l, int64_t *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "slice_offset_in_bytes",
                             "layout and out are required");
    int64_t bytes;
    if (strided__mul_overflow(l->slice_offset, l->itemsize, &bytes))
        return strided__fail(STRIDED_ERR_OVERFLOW, "slice_offset_in_bytes",
                             "slice offset %lld times itemsize %d overflows "
                             "int64",
                             (long long)l->slice_offset, l->itemsize);
    *out = bytes;
    return STRIDED_OK;
}

/* Does axis a come before axis b in stride order? Larger |stride| first,
 * then larger extent; equal keys keep index order (the sort is stable). */
static bool comes_before(const strided_layout *l, int a, int b)
{
    uint64_t ma = magnitude(l->strides[a]), mb = magnitude(l->strides[b]);
    if (ma != mb)
        return ma > mb;
    return l->shape[a] > l->shape[b];
}

void strided_layout_stride_order(const strided_layout *l, int *out)
{
    for (int i = 0; i < l->ndim; i++)
        out[i] = i;
    if (l->implicit_strides)
        return;
    /* Insertion sort: stable, allocation-free, and fastest for the few axes
     * layouts usually have. */
    for (int i = 1; i < l->ndim; i++) {
        int axis = out[i], j = i;
        while (j > 0 && comes_before(l, axis, out[j - 1])) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = axis;
    }
}

void strided_layout_offset_bounds(const strided_layout *l, int64_t *out_min, int64_t *out_max)
{
    /* Unsigned wrapping arithmetic keeps a caller-corrupted layout defined;
     * under the invariant nothing wraps. */
    uint64_t lo = (uint64_t)l->slice_offset, hi = lo;
    bool empty = false;
    for (int i = 0; i < l->ndim; i++) {
        if (l->shape[i] == 0) {
            empty = true;
            break;
        }
        uint64_t span = (uint64_t)l->strides[i] * (uint64_t)(l->shape[i] - 1);
        if (l->strides[i] < 0)
            lo += span;
        else
            hi += span;
    }
    if (out_min)
        *out_min = empty ? 0 : (int64_t)lo;
    if (out_max)
        *out_max = empty ? -1 : (int64_t)hi;
}

strided_status strided_layout_required_size_in_bytes(const strided_layout *l, int64_t *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "required_size_in_bytes",
                             "layout and out are required");
    int64_t lo, hi, size;
    strided_layout_offset_bounds(l, &lo, &hi);
    if (lo < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "required_size_in_bytes",
                             "Allocation size for a layout that maps elements "
                             "to negative memory offsets is ambiguous. The "
                             "layout's min_offset is %lld.",
                             (long long)lo);
    if (hi < lo) {
        *out = 0;
        return STRIDED_OK;
    }
    if (hi == INT64_MAX || strided__mul_overflow(hi + 1, l->itemsize, &size))
        return strided__fail(STRIDED_ERR_OVERFLOW, "required_size_in_bytes",
                             "(max_offset %lld + 1) times itemsize %d "
                             "overflows int64",
                             (long long)hi, l->itemsize);
    *out = size;
    return STRIDED_OK;
}

/* Are the axes, taken in the given order (slowest first), C-contiguous once
 * extent-1 axes are skipped? Assumes: volume > 0, so the running product of
 * extents fits. */
static bool contiguous_in_order(const strided_layout *l, const int *order)
{
    int64_t running = 1;
    for (int k = l->ndim - 1; k >= 0; k--) {
        int i = order ? order[k] : k;
        if (l->shape[i] == 1)
            continue;
        if (l->strides[i] != running)
            return false;
        running *= l->shape[i];
    }
    return true;
}

bool strided_layout_is_contiguous_c(const strided_layout *l)
{
    if (l->implicit_strides || strided_layout_volume(l) == 0)
        return true;
    return contiguous_in_order(l, NULL);
}

bool strided_layout_is_contiguous_f(const strided_layout *l)
{
    if (strided_layout_volume(l) == 0)
        return true;
    int order[STRIDED_MAX_NDIM];
    for (int i = 0; i < l->ndim; i++)
        order[i] = l->ndim - 1 - i;
    /* Implicit strides are the C strides; F then holds exactly when at most
     * one extent differs from 1, which the generic check also finds. */
    return contiguous_in_order(l, order);
}

bool strided_layout_is_contiguous_any(const strided_layout *l)
{
    if (l->implicit_strides || strided_layout_volume(l) == 0)
        return true;
    int order[STRIDED_MAX_NDIM];
    strided_layout_stride_order(l, order);
    return contiguous_in_order(l, order);
}

bool strided_layout_is_dense(const strided_layout *l)
{
    return l->slice_offset == 0 && strided_layout_is_contiguous_any(l);
}

bool strided_layout_is_unique(const strided_layout *l)
{
    if (l->implicit_strides || strided_layout_volume(l) == 0)
        return true;
    int order[STRIDED_MAX_NDIM];
    strided_layout_stride_order(l, order);
    /* From the smallest |stride| up, each axis must step past everything the
     * faster axes can reach. reach fits: it is at most max - min offset. */
    uint64_t reach = 0;
    for (int k = l->ndim - 1; k >= 0; k--) {
        int i = order[k];
        if (l->shape[i] == 1)
            continue;
        uint64_t s = magnitude(l->strides[i]);
        if (reach >= s)
            return false;
        reach += s * (uint64_t)(l->shape[i] - 1);
    }
    return true;
}

/* Group the axes allowed by mask with their left neighbours (C index
 * order). An axis of extent > 1 joins the group on its left when the group
 * has no axis of extent > 1 yet, or when its stride times its extent is the
 * stride of the group's innermost axis of extent > 1 (cuda.core's rule,
 * which also applies it to extent-1 axes); extent-1 axes always join, so
 * they never block a merge, and never set a group's stride unless the whole
 * group has extent 1. Writes the groups (the 0-d layout gives none) and the
 * mask of axes that merged. */
static strided_status merge_axes(const char *op, const strided_layout *l, uint64_t mask,
                                 int *out_ngroups, int64_t *gshape, int64_t *gstride,
                                 uint64_t *out_merged)
{
    uint64_t merged = 0;
    int g = -1;
    bool has_nonunit = false;
    for (int j = 0; j < l->ndim; j++) {
        int64_t e = l->shape[j], s = l->strides[j];
        bool join = false;
        if (g >= 0 && (mask >> j & 1)) {
            if (e == 1 || !has_nonunit) {
                join = true;
            } else {
                int64_t step;
                if (strided__mul_overflow(s, e, &step))
                    return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                         "stride %lld times extent %lld of "
                                         "axis %d overflows int64",
                                         (long long)s, (long long)e, j);
                join = step == gstride[g];
            }
        }
        if (join) {
            merged |= UINT64_C(1) << j;
            gshape[g] *= e;
            if (e != 1 || !has_nonunit)
                gstride[g] = s;
            has_nonunit = has_nonunit || e != 1;
        } else {
            g++;
            gshape[g] = e;
            gstride[g] = s;
            has_nonunit = e != 1;
        }
    }
    *out_ngroups = g + 1;
    if (out_merged)
        *out_merged = merged;
    return STRIDED_OK;
}

strided_status strided_layout_flattened_axis_mask(const strided_layout *l, uint64_t *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "flattened_axis_mask",
                             "layout and out are required");
    int64_t gshape[STRIDED_MAX_NDIM], gstride[STRIDED_MAX_NDIM];
    int ngroups;
    uint64_t merged;
    strided_status status = merge_axes("flattened_axis_mask", l, STRIDED_AXES_MASK_ALL, &ngroups,
                                       gshape, gstride, &merged);
    if (status == STRIDED_OK)
        *out = merged;
    return status;
}

strided_status strided_layout_flatten_mask(const strided_layout *l, uint64_t mask,
                                           strided_layout *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                             "layout and out are required");
    strided_layout t;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    if (l->ndim == 0) {
        t.ndim = 1;
        t.shape[0] = 1;
        t.strides[0] = 1;
    } else {
        strided_status status = merge_axes("flatten", l, mask, &t.ndim, t.shape, t.strides, NULL);
        if (status != STRIDED_OK)
            return status;
    }
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_flatten(const strided_layout *l, int start_axis, int end_axis,
                                      strided_layout *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                             "layout and out are required");
    uint64_t mask = STRIDED_AXES_MASK_ALL;
    if (start_axis != 0 || end_axis != -1) {
        int start, end;
        if (!normalize_axis(start_axis, l->ndim, &start))
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                                 "Invalid start axis: %d out of range for %dD "
                                 "tensor",
                                 start_axis, l->ndim);
        if (!normalize_axis(end_axis, l->ndim, &end))
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                                 "Invalid end axis: %d out of range for %dD "
                                 "tensor",
                                 end_axis, l->ndim);
        /* As NumPy and PyTorch: an empty range is an error, not a no-op
         * (start == end flattens nothing, which is fine). */
        if (start > end)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "flatten",
                                 "Invalid axes: start axis %d comes after end axis %d "
                                 "for %dD tensor",
                                 start_axis, end_axis, l->ndim);
        /* Bits start+1 .. end: those axes may join their left neighbour.
         * start < end <= 63 keeps both shifts in range. */
        mask = 0;
        if (start < end) {
            uint64_t upto_end = end == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (end + 1)) - 1;
            mask = upto_end & ~((UINT64_C(1) << (start + 1)) - 1);
        }
    }
    return strided_layout_flatten_mask(l, mask, out);
}

strided_status strided_layout_reshape(const strided_layout *l, int ndim, const int64_t *shape,
                                      strided_layout *out)
{
    const char *op = "reshape";
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (shape == NULL && ndim > 0)
        return fail_null_array(op, "shape", "ndim", ndim);
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return fail_ndim(op, ndim);
    int inferred = -1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < -1)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "Extents must be non-negative");
        if (shape[i] == -1) {
            if (inferred >= 0)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "There can be at most one -1 extent in a "
                                     "shape");
            inferred = i;
        }
    }
    strided_layout t;
    t.ndim = ndim;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    for (int i = 0; i < ndim; i++)
        t.shape[i] = i == inferred ? 1 : shape[i];
    int64_t sub = 0;
    strided_status status = checked_volume(op, ndim, t.shape, &sub);
    if (status != STRIDED_OK)
        return status;
    int64_t old = strided_layout_volume(l);
    if (inferred < 0) {
        if (sub != old)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "The original volume %lld and the new volume "
                                 "%lld must be equal.",
                                 (long long)old, (long long)sub);
    } else {
        if (sub == 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "The -1 extent is ambiguous when the "
                                 "specified sub-volume is 0");
        if (old % sub != 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "The original volume %lld must be divisible "
                                 "by the specified sub-volume %lld.",
                                 (long long)old, (long long)sub);
        t.shape[inferred] = old / sub;
    }
    if (old == 0) {
        for (int i = 0; i < ndim; i++)
            t.strides[i] = 0;
        store(out, &t);
        return STRIDED_OK;
    }
    int64_t gshape[STRIDED_MAX_NDIM], gstride[STRIDED_MAX_NDIM];
    int ngroups;
    status = merge_axes(op, l, STRIDED_AXES_MASK_ALL, &ngroups, gshape, gstride, NULL);
    if (status != STRIDED_OK)
        return status;
    if (ngroups == 0) {
        ngroups = 1;
        gshape[0] = 1;
        gstride[0] = 1;
    }
    /* Split each group, from the innermost, into consecutive new axes whose
     * extents multiply to the group's extent. New extent-1 axes join the
     * group they meet and take the running stride there. */
    int next = ndim - 1;
    bool compatible = true;
    for (int g = ngroups - 1; g >= 0 && compatible; g--) {
        int64_t acc = 1, stride = gstride[g];
        bool stride_fits = true;
        while (next >= 0) {
            int64_t e = t.shape[next];
            if (e != 1 && acc >= gshape[g])
                break;
            if (!stride_fits)
                return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                     "a stride of the new shape overflows "
                                     "int64");
            if (strided__mul_overflow(acc, e, &acc)) {
                compatible = false;
                break;
            }
            t.strides[next] = stride;
            stride_fits = !strided__mul_overflow(stride, e, &stride);
            next--;
        }
        compatible = compatible && acc == gshape[g];
    }
    if (!compatible || next >= 0) {
        layout_text a, b;
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Layout strides are incompatible with the new "
                             "shape: cannot view %s as %s without a copy",
                             show_layout(l, &a), show_tuple(ndim, t.shape, &b));
    }
    /* Strides made for new extent-1 axes can exceed any the input had. */
    status = check_offsets(op, &t, old);
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_permute(const strided_layout *l, int naxes, const int *axes,
                                      strided_layout *out)
{
    const char *op = "permute";
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (axes == NULL && naxes > 0)
        return fail_null_array(op, "axes", "naxes", naxes);
    if (naxes != l->ndim)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Permutation must have the same length as the "
                             "number of dimensions, got %d for %dD tensor.",
                             naxes, l->ndim);
    strided_layout t;
    uint64_t seen = 0;
    for (int i = 0; i < naxes; i++) {
        int axis;
        if (!normalize_axis(axes[i], l->ndim, &axis))
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Invalid permutation: axis %d out of range "
                                 "for %dD tensor",
                                 axes[i], l->ndim);
        if (seen & (UINT64_C(1) << axis))
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Invalid permutation: axis %d appears "
                                 "multiple times.",
                                 axes[i]);
        seen |= UINT64_C(1) << axis;
        t.shape[i] = l->shape[axis];
        t.strides[i] = l->strides[axis];
    }
    t.ndim = l->ndim;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_squeeze(const strided_layout *l, strided_layout *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "squeeze",
                             "layout and out are required");
    strided_layout t;
    t.ndim = 0;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    for (int i = 0; i < l->ndim; i++) {
        if (l->shape[i] == 0) {
            t.ndim = 1;
            t.shape[0] = 0;
            t.strides[0] = 0;
            break;
        }
        if (l->shape[i] != 1) {
            t.shape[t.ndim] = l->shape[i];
            t.strides[t.ndim] = l->strides[i];
            t.ndim++;
        }
    }
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_unsqueeze(const strided_layout *l, int naxes, const int *axes,
                                        strided_layout *out)
{
    const char *op = "unsqueeze";
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (axes == NULL && naxes > 0)
        return fail_null_array(op, "axes", "naxes", naxes);
    if (naxes == 0) {
        store(out, l);
        return STRIDED_OK;
    }
    if (naxes < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the number of axes must be non-negative, got %d", naxes);
    if (naxes > STRIDED_MAX_NDIM - l->ndim)
        return fail_ndim(op, l->ndim + naxes);
    int out_ndim = l->ndim + naxes;
    uint64_t inserted = 0;
    for (int k = 0; k < naxes; k++) {
        int axis;
        if (!normalize_axis(axes[k], out_ndim, &axis))
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Invalid axis: %d out of range for %dD tensor", axes[k], out_ndim);
        if (inserted & (UINT64_C(1) << axis))
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Axis %d appears multiple times.", axis);
        inserted |= UINT64_C(1) << axis;
    }
    strided_layout t;
    t.ndim = out_ndim;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    int q = 0;
    for (int i = 0; i < out_ndim; i++) {
        if (!(inserted >> i & 1)) {
            t.shape[i] = l->shape[q];
            t.strides[i] = l->strides[q];
            q++;
            continue;
        }
        t.shape[i] = 1;
        if (q < l->ndim) {
            if (strided__mul_overflow(l->shape[q], l->strides[q], &t.strides[i]))
                return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                     "extent %lld times stride %lld of axis %d "
                                     "overflows int64",
                                     (long long)l->shape[q], (long long)l->strides[q], q);
        } else {
            t.strides[i] = l->ndim > 0 ? l->strides[l->ndim - 1] : 1;
        }
    }
    strided_status status = check_offsets(op, &t, strided_layout_volume(l));
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_broadcast(const strided_layout *l, int ndim, const int64_t *shape,
                                        strided_layout *out)
{
    const char *op = "broadcast_to";
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (shape == NULL && ndim > 0)
        return fail_null_array(op, "shape", "ndim", ndim);
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return fail_ndim(op, ndim);
    strided_status status = check_extents(op, ndim, shape);
    if (status != STRIDED_OK)
        return status;
    if (ndim < l->ndim)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The broadcast shape ndim (%d) must be greater "
                             "than or equal to the input shape ndim (%d).",
                             ndim, l->ndim);
    strided_layout t;
    t.ndim = ndim;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    int lead = ndim - l->ndim;
    for (int i = 0; i < ndim; i++) {
        t.shape[i] = shape[i];
        t.strides[i] = 0;
    }
    for (int i = 0; i < l->ndim; i++) {
        int64_t from = l->shape[i], to = shape[lead + i];
        if (from == to)
            t.strides[lead + i] = l->strides[i];
        else if (from != 1)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Shapes cannot be broadcast together: the "
                                 "original extent must be 1 or be equal to "
                                 "broadcast extent, got %lld and %lld for "
                                 "axis %d.",
                                 (long long)from, (long long)to, i);
    }
    int64_t volume = 0;
    status = checked_volume(op, ndim, t.shape, &volume);
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

static strided_status fail_axis(const char *op, int axis, int ndim)
{
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "Invalid axis: %d out of range for %dD tensor", axis, ndim);
}

static strided_status pack(const strided_layout *l, int itemsize, intptr_t data_ptr, int axis_arg,
                           bool keep_dim, strided_layout *out)
{
    const char *op = "repack";
    int old = l->itemsize, axis;
    assert(itemsize > old && old > 0);
    if (itemsize % old != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The new itemsize (%d) must be divisible by the "
                             "itemsize (%d).",
                             itemsize, old);
    if (!normalize_axis(axis_arg, l->ndim, &axis))
        return fail_axis(op, axis_arg, l->ndim);
    if (data_ptr % itemsize != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The data pointer (%lld) must be aligned to the "
                             "packed itemsize (%d).",
                             (long long)data_ptr, itemsize);
    if (l->strides[axis] != 1)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The axis %d stride must be 1, got %lld.", axis,
                             (long long)l->strides[axis]);
    int64_t v = itemsize / old, e = l->shape[axis];
    if (e == 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The axis %d extent must be non-zero, got 0.", axis);
    if (e % v != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The axis %d extent (%lld) must be divisible by "
                             "%lld.",
                             axis, (long long)e, (long long)v);
    if (l->slice_offset % v != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The slice offset (%lld) must be divisible by "
                             "%lld.",
                             (long long)l->slice_offset, (long long)v);
    for (int i = 0; i < l->ndim; i++)
        if (i != axis && l->strides[i] % v != 0)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "The %d axis stride (%lld) must be divisible "
                                 "by %lld.",
                                 i, (long long)l->strides[i], (long long)v);
    strided_layout t;
    t.ndim = 0;
    t.itemsize = itemsize;
    t.slice_offset = l->slice_offset / v;
    t.implicit_strides = false;
    for (int i = 0; i < l->ndim; i++) {
        if (i == axis) {
            if (!keep_dim && e / v == 1)
                continue;
            t.shape[t.ndim] = e / v;
            t.strides[t.ndim] = 1;
        } else {
            t.shape[t.ndim] = l->shape[i];
            t.strides[t.ndim] = l->strides[i] / v;
        }
        t.ndim++;
    }
    store(out, &t);
    return STRIDED_OK;
}

static strided_status unpack(const strided_layout *l, int itemsize, int axis_arg,
                             strided_layout *out)
{
    const char *op = "repack";
    int old = l->itemsize, axis;
    if (!normalize_axis(axis_arg, l->ndim, &axis))
        return fail_axis(op, axis_arg, l->ndim);
    if (itemsize <= 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "new itemsize must be greater than zero, got %d.", itemsize);
    if (old % itemsize != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The itemsize (%d) must be divisible by the new "
                             "itemsize (%d).",
                             old, itemsize);
    if (l->shape[axis] == 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The axis %d extent must be non-zero, got 0.", axis);
    if (l->strides[axis] != 1)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The axis %d stride must be 1, got %lld.", axis,
                             (long long)l->strides[axis]);
    int64_t v = old / itemsize;
    strided_layout t = {.ndim = l->ndim, .itemsize = itemsize, .implicit_strides = false};
    bool overflow = strided__mul_overflow(l->slice_offset, v, &t.slice_offset);
    for (int i = 0; i < l->ndim && !overflow; i++) {
        t.shape[i] = l->shape[i];
        t.strides[i] = l->strides[i];
        overflow = i == axis ? strided__mul_overflow(l->shape[i], v, &t.shape[i])
                             : strided__mul_overflow(l->strides[i], v, &t.strides[i]);
    }
    if (overflow) {
        layout_text text;
        return strided__fail(STRIDED_ERR_OVERFLOW, op,
                             "unpacking %s from itemsize %d to %d overflows "
                             "int64",
                             show_layout(l, &text), old, itemsize);
    }
    /* The volume grew by v; the product of the non-zero extents must still
     * fit, and so must the offsets. */
    int64_t volume = 0;
    strided_status status = checked_volume(op, t.ndim, t.shape, &volume);
    if (status == STRIDED_OK)
        status = check_offsets(op, &t, volume);
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_repack(const strided_layout *l, int itemsize, intptr_t data_ptr,
                                     int axis, bool keep_dim, strided_layout *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "repack", "layout and out are required");
    if (itemsize == l->itemsize) {
        store(out, l);
        return STRIDED_OK;
    }
    if (itemsize > l->itemsize)
        return pack(l, itemsize, data_ptr, axis, keep_dim, out);
    return unpack(l, itemsize, axis, out);
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

strided_status strided_layout_max_compatible_itemsize(const strided_layout *l, int max_itemsize,
                                                      intptr_t data_ptr, int axis_arg, int *out)
{
    const char *op = "max_compatible_itemsize";
    int axis;
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (max_itemsize <= 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "max_itemsize must be greater than zero, got %d.", max_itemsize);
    if (!normalize_axis(axis_arg, l->ndim, &axis))
        return fail_axis(op, axis_arg, l->ndim);
    if (max_itemsize < l->itemsize)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "max_itemsize (%d) cannot be less than itemsize "
                             "(%d).",
                             max_itemsize, l->itemsize);
    uint64_t itemsize = (uint64_t)l->itemsize;
    uint64_t m = gcd((uint64_t)max_itemsize, magnitude((int64_t)data_ptr));
    if (l->strides[axis] != 1 || l->shape[axis] == 0 || m % itemsize != 0) {
        *out = l->itemsize;
        return STRIDED_OK;
    }
    /* In element units: the factor v by which the axis is packed must divide
     * the room left by the bound and the pointer, the slice offset, the axis
     * extent and every other stride. */
    uint64_t g = gcd(m / itemsize, magnitude(l->slice_offset));
    g = gcd(g, (uint64_t)l->shape[axis]);
    for (int i = 0; i < l->ndim; i++)
        if (i != axis)
            g = gcd(g, magnitude(l->strides[i]));
    *out = (int)(itemsize * g);
    return STRIDED_OK;
}

/* Resolve a slice against an axis of extent n as Python's slice.indices
 * does; writes the first index and the number of selected elements. Assumes:
 * step != 0, n >= 0. */
static void resolve_slice(const strided_index *x, int64_t n, int64_t step, int64_t *out_start,
                          int64_t *out_count)
{
    int64_t start, stop;
    if (!x->has_start) {
        start = step < 0 ? n - 1 : 0;
    } else {
        start = x->start;
        if (start < 0) {
            start += n;
            if (start < 0)
                start = step < 0 ? -1 : 0;
        } else if (start >= n) {
            start = step < 0 ? n - 1 : n;
        }
    }
    if (!x->has_stop) {
        stop = step < 0 ? -1 : n;
    } else {
        stop = x->stop;
        if (stop < 0) {
            stop += n;
            if (stop < 0)
                stop = step < 0 ? -1 : 0;
        } else if (stop >= n) {
            stop = step < 0 ? n - 1 : n;
        }
    }
    int64_t count = 0;
    if (step < 0 && stop < start)
        count = (start - stop - 1) / -step + 1;
    else if (step > 0 && start < stop)
        count = (stop - start - 1) / step + 1;
    *out_start = start;
    *out_count = count;
}

strided_status strided_layout_slice(const strided_layout *l, int nindices,
                                    const strided_index *indices, strided_layout *out)
{
    const char *op = "slice";
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (indices == NULL && nindices > 0)
        return fail_null_array(op, "indices", "nindices", nindices);
    if (nindices > l->ndim)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The number of slices (%d) is greater than the "
                             "number of dimensions (%d).",
                             nindices, l->ndim);
    if (nindices < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the number of slices must be non-negative, got "
                             "%d",
                             nindices);
    strided_layout t;
    t.ndim = 0;
    t.itemsize = l->itemsize;
    t.implicit_strides = false;
    int64_t offset = l->slice_offset;
    bool empty = false, overflow = false;
    for (int i = 0; i < nindices; i++) {
        const strided_index *x = &indices[i];
        int64_t n = l->shape[i], s = l->strides[i];
        if (x->kind == STRIDED_INDEX_INTEGER) {
            int64_t k = x->start < 0 ? x->start + n : x->start;
            if (k < 0 || k >= n)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "Invalid index: %lld out of range for "
                                     "axis %d with extent %lld",
                                     (long long)x->start, i, (long long)n);
            int64_t delta;
            overflow = strided__mul_overflow(k, s, &delta) ||
                       strided__add_overflow(offset, delta, &offset);
        } else if (x->kind == STRIDED_INDEX_SLICE) {
            if (x->step == 0)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "slice step cannot be zero");
            /* Python clamps a step of -2**63 to -(2**63 - 1) too. */
            int64_t step = x->step < -INT64_MAX ? -INT64_MAX : x->step;
            int64_t start, count, delta;
            resolve_slice(x, n, step, &start, &count);
            if (count > 0)
                overflow = strided__mul_overflow(start, s, &delta) ||
                           strided__add_overflow(offset, delta, &offset);
            else
                empty = true;
            if (!overflow && strided__mul_overflow(s, step, &t.strides[t.ndim]))
                return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                     "stride %lld times step %lld of axis %d "
                                     "overflows int64",
                                     (long long)s, (long long)step, i);
            t.shape[t.ndim++] = count;
        } else {
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "index %d has an unknown kind %d", i, (int)x->kind);
        }
        if (overflow)
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "the offset of the first element selected "
                                 "along axis %d overflows int64",
                                 i);
    }
    for (int i = nindices; i < l->ndim; i++) {
        t.shape[t.ndim] = l->shape[i];
        t.strides[t.ndim] = l->strides[i];
        t.ndim++;
    }
    /* Only a slice that selects nothing zeroes the strides (as cuda.core);
     * an axis left whole keeps its stride even when its extent is 0. */
    if (empty)
        for (int i = 0; i < t.ndim; i++)
            t.strides[i] = 0;
    t.slice_offset = offset;
    /* Stepped strides and the new slice offset must stay representable in
     * bytes; the selected elements are a subset, so their volume fits. */
    strided_status status = check_offsets(op, &t, strided_layout_volume(&t));
    if (status != STRIDED_OK)
        return status;
    store(out, &t);
    return STRIDED_OK;
}

strided_status strided_layout_to_dense(const strided_layout *l, strided_order order, int nperm,
                                       const int *perm, strided_layout *out)
{
    const char *op = "to_dense";
    int keep[STRIDED_MAX_NDIM];
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "layout and out are required");
    if (order == STRIDED_ORDER_PERM && perm == NULL && nperm > 0)
        return fail_null_array(op, "perm", "nperm", nperm);
    switch (order) {
    case STRIDED_ORDER_KEEP:
        if (strided_layout_is_dense(l))
            break;
        strided_layout_stride_order(l, keep);
        return dense_into(op, out, l->ndim, l->shape, l->itemsize, STRIDED_ORDER_PERM, l->ndim,
                          keep);
    case STRIDED_ORDER_C:
        /* C-contiguous implies contiguous in some order, so this is
         * is_dense && is_contiguous_c without sorting the axes. */
        if (l->slice_offset == 0 && strided_layout_is_contiguous_c(l))
            break;
        return dense_into(op, out, l->ndim, l->shape, l->itemsize, order, 0, NULL);
    case STRIDED_ORDER_F:
        if (l->slice_offset == 0 && strided_layout_is_contiguous_f(l))
            break;
        return dense_into(op, out, l->ndim, l->shape, l->itemsize, order, 0, NULL);
    case STRIDED_ORDER_PERM:
        return dense_into(op, out, l->ndim, l->shape, l->itemsize, order, nperm, perm);
    default:
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The stride_order must be 'K', 'C', 'F', or a "
                             "permutation tuple. Got: %s",
                             order_name(order));
    }
    store(out, l);
    return STRIDED_OK;
}

strided_status strided_layout_coalesce(const strided_layout *l, strided_layout *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "coalesce",
                             "layout and out are required");
    strided_layout t;
    t.ndim = 0;
    t.itemsize = l->itemsize;
    t.slice_offset = l->slice_offset;
    t.implicit_strides = false;
    if (strided_layout_volume(l) == 0) {
        t.ndim = 1;
        t.shape[0] = 0;
        t.strides[0] = 0;
        store(out, &t);
        return STRIDED_OK;
    }
    for (int i = 0; i < l->ndim; i++) {
        int64_t e = l->shape[i], s = l->strides[i], step;
        if (e == 1)
            continue;
        /* A product that overflows cannot equal a representable stride, so
         * it simply does not merge. */
        if (t.ndim > 0 && !strided__mul_overflow(s, e, &step) && step == t.strides[t.ndim - 1]) {
            t.shape[t.ndim - 1] *= e;
            t.strides[t.ndim - 1] = s;
        } else {
            t.shape[t.ndim] = e;
            t.strides[t.ndim] = s;
            t.ndim++;
        }
    }
    store(out, &t);
    return STRIDED_OK;
}
