/*
 * layout/packed.c: the packed-layout rule, for layouts whose elements are
 * narrower than a byte or not whole bytes (DLPack's packed sub-byte types),
 * and the bytes such a layout's elements occupy (strided/layout.h).
 *
 * Element offset o lies at bit o * bits. A group of g = 8 / gcd(bits, 8)
 * consecutive elements fills whole bytes, so an element starts on a byte
 * boundary exactly when its offset is a multiple of g. The rule asks that
 * of every element but those after the first along one axis of stride 1,
 * whose run of elements then starts on a byte boundary and covers
 * consecutive bits: no view splits a byte between what it addresses and
 * what it does not at its starts, and a copy can move such runs a group
 * at a time.
 */
#include <stdint.h>

#include "base/base.h"
#include "strided/layout.h"

int strided_layout_packed_group(int bits)
{
    if (bits <= 0)
        return 0;
    int a = bits, b = 8;
    while (b != 0) {
        int r = a % b;
        a = b;
        b = r;
    }
    return 8 / a;
}

static strided_status check_bits(const char *op, int bits)
{
    if (bits < 1 || bits > 65535 * 8)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "bits must be 1 to 524280 (255 bits times 65535 lanes), got %d", bits);
    return STRIDED_OK;
}

/* The axis whose run of elements may start anywhere in a group: the first
 * of stride 1 and extent above 1, or -1 when there is none. */
static int packed_axis(const strided_layout *l)
{
    for (int k = 0; k < l->ndim; k++)
        if (l->shape[k] > 1 && l->strides[k] == 1)
            return k;
    return -1;
}

/* Fail for the element of index 1 along axis (or (0,...,0) for axis -1),
 * which starts at offset inside a byte. */
static strided_status split_byte(const strided_layout *l, int bits, int64_t g, int axis,
                                 int64_t offset)
{
    int64_t index[STRIDED_MAX_NDIM] = {0};
    if (axis >= 0)
        index[axis] = 1;
    char where[STRIDED_MAX_NDIM * 3 + 8], text[2816];
    strided__text t = {where, sizeof where, 0};
    strided__text_tuple(&t, l->ndim, index);
    strided_layout_format(l, text, sizeof text);
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "packed",
                         "element %s of %s, at element offset %lld, starts inside a byte: by "
                         "the packed-layout rule every element of %d bits starts on a byte "
                         "boundary (an offset that is a multiple of %lld), except after the "
                         "first along one axis of stride 1",
                         where, text, (long long)offset, bits, (long long)g);
}

strided_status strided_layout_check_packed(const strided_layout *l, int bits)
{
    const char *op = "packed";
    if (l == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the layout is required");
    strided_status status = check_bits(op, bits);
    if (status == STRIDED_OK)
        status = strided_layout_validate(l);
    if (status != STRIDED_OK || strided_layout_volume(l) == 0)
        return status;
    int64_t g = strided_layout_packed_group(bits);
    if (l->slice_offset % g != 0)
        return split_byte(l, bits, g, -1, l->slice_offset);
    int axis = packed_axis(l);
    for (int k = 0; k < l->ndim; k++)
        if (l->shape[k] > 1 && k != axis && l->strides[k] % g != 0)
            /* The invariant keeps the offset of this element in int64. */
            return split_byte(l, bits, g, k, l->slice_offset + l->strides[k]);
    return STRIDED_OK;
}

/* x / 8 rounded up, for any int64 x. */
static int64_t ceil_div8(int64_t x)
{
    return x / 8 + (x % 8 > 0);
}

strided_status strided_layout_packed_byte_bounds(const strided_layout *l, int bits, int64_t *out_lo,
                                                 int64_t *out_hi)
{
    const char *op = "packed";
    if (l == NULL || out_lo == NULL || out_hi == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "layout, out_lo and out_hi are required");
    strided_status status = strided_layout_check_packed(l, bits);
    if (status != STRIDED_OK)
        return status;
    int64_t mn = 0, mx = -1, lo = 0, hi = 0;
    strided_layout_offset_bounds(l, &mn, &mx);
    if (mx >= mn) {
        /* The lowest element starts a run (negative strides are never the
         * run's), so its first bit is a whole byte. */
        if (strided__mul_overflow(mn, bits, &lo) || strided__add_overflow(mx, 1, &hi) ||
            strided__mul_overflow(hi, bits, &hi))
            return strided__fail(STRIDED_ERR_OVERFLOW, op,
                                 "the bits of element offsets [%lld, %lld] at %d bits an "
                                 "element overflow int64",
                                 (long long)mn, (long long)mx, bits);
        lo /= 8;
        hi = ceil_div8(hi);
    }
    *out_lo = lo;
    *out_hi = hi;
    return STRIDED_OK;
}

strided_status strided_layout_required_size_in_bytes_packed(const strided_layout *l, int bits,
                                                            int64_t *out)
{
    if (l == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "required_size_in_bytes",
                             "layout and out are required");
    int64_t lo = 0, hi = 0, mn = 0;
    strided_status status = strided_layout_packed_byte_bounds(l, bits, &lo, &hi);
    if (status != STRIDED_OK)
        return status;
    strided_layout_offset_bounds(l, &mn, NULL);
    if (mn < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "required_size_in_bytes",
                             "Allocation size for a layout that maps elements "
                             "to negative memory offsets is ambiguous. The "
                             "layout's min_offset is %lld.",
                             (long long)mn);
    *out = hi;
    return STRIDED_OK;
}
