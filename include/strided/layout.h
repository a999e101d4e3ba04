/*
 * strided/layout.h: the strided layout, a value type, and its algebra.
 *
 * A layout describes how the elements of an n-dimensional array sit in
 * memory: a shape (extents), strides in *elements*, an itemsize in bytes and
 * a slice offset (the element offset of index (0,...,0) from the base
 * pointer). The element offset of a multi-index i is
 *
 *     slice_offset + sum_k i[k] * strides[k]
 *
 * and its byte offset is that times itemsize. Strides may be negative or
 * zero. A layout has 0 to STRIDED_MAX_NDIM (64) dimensions.
 *
 * Implicit strides. A layout made without strides (strides == NULL) is
 * C-contiguous and remembers that its strides were implicit. Its strides[]
 * array still holds the C strides (all 0 when the volume is 0), so every
 * function can read strides[] directly. Implicit and explicit strides never
 * compare equal, even when the values match; only strided_layout_unsqueeze
 * with no axes, strided_layout_repack to the same itemsize and the no-op
 * cases of strided_layout_to_dense keep them. This matches cuda.core.
 *
 * Invariants. A layout made or changed only through these functions always
 * has 0 <= ndim <= 64, extents >= 0, itemsize > 0, a product of its non-zero
 * extents that fits in int64, strides and a slice offset whose byte values
 * and their negations fit in int64 (|stride| * itemsize <= INT64_MAX, so no
 * stride is INT64_MIN), and, when its volume is not 0, a span along each
 * axis (stride times extent - 1) that fits in int64, element offsets
 * (including slice_offset) that all fit in int64, and whose byte offsets
 * (element offset times itemsize) and their negations fit in int64 too
 * (|byte offset| <= INT64_MAX). A layout breaking this
 * is refused where it would be made (STRIDED_ERR_OVERFLOW): (2,3):(2**62,1)
 * with itemsize 4 is, since its byte offsets reach 2**64. The queries that cannot fail rely on the
 * invariant. Treat the fields as read-only; entries of shape[] and strides[]
 * at positions >= ndim are unspecified. A layout filled in by hand is
 * checked by strided_layout_validate, and every function that makes a view
 * or plans a copy checks the layouts it is given that way.
 *
 * Operations. Every manipulation reads its input layout(s) and writes one
 * output layout; the output may be the input (strided_layout_permute(&l, 2,
 * p, &l) works). On failure the output is untouched and the calling thread's
 * message (strided_last_error) says why. Every product and sum on extents,
 * strides and offsets is overflow-checked; an overflow is
 * STRIDED_ERR_OVERFLOW. Nothing here allocates, prints or touches memory: a
 * layout is arithmetic only.
 *
 * Ownership: strided_layout is a plain value with fixed-capacity arrays; it
 * owns nothing and copies freely. Pointer arguments are borrowed for the
 * duration of the call. Arrays of n entries (shape, axes, perm, indices,
 * out arrays) may be NULL when n is 0; every other pointer follows the
 * rule of strided.h.
 */
#ifndef STRIDED_LAYOUT_H
#define STRIDED_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest number of dimensions a layout can have. Axis sets are uint64
 * bit masks, which is where the limit comes from. */
#define STRIDED_MAX_NDIM 64

/* Every bit an axis mask may use for merging: bit 0 (axis 0) never merges,
 * because axis 0 has no left neighbour. */
#define STRIDED_AXES_MASK_ALL UINT64_C(0xFFFFFFFFFFFFFFFE)

/* A strided layout. See the header comment for the meaning and invariants of
 * each field. */
typedef struct strided_layout {
    int32_t ndim;                      /* number of dimensions, 0..64 */
    int32_t itemsize;                  /* bytes per element, > 0 */
    bool implicit_strides;             /* made without strides: C order, see above */
    int64_t slice_offset;              /* element offset of index (0,...,0) */
    int64_t shape[STRIDED_MAX_NDIM];   /* extents, >= 0 */
    int64_t strides[STRIDED_MAX_NDIM]; /* in elements; always filled in */
} strided_layout;

/* Which dense order to build, for strided_layout_init_dense and
 * strided_layout_to_dense. */
typedef enum strided_order {
    STRIDED_ORDER_C = 0,    /* last axis fastest (row-major) */
    STRIDED_ORDER_F = 1,    /* first axis fastest (column-major) */
    STRIDED_ORDER_KEEP = 2, /* the layout's own stride order (to_dense only) */
    STRIDED_ORDER_PERM = 3  /* an explicit permutation, slowest axis first */
} strided_order;

/* One position of a slicing expression: an integer index, which removes the
 * axis, or a slice start:stop:step with Python's semantics. */
typedef enum strided_index_kind {
    STRIDED_INDEX_INTEGER = 0,
    STRIDED_INDEX_SLICE = 1
} strided_index_kind;

typedef struct strided_index {
    strided_index_kind kind;
    bool has_start; /* false: start omitted (":" or "::-1" form) */
    bool has_stop;  /* false: stop omitted */
    int64_t start;  /* the index itself for STRIDED_INDEX_INTEGER */
    int64_t stop;
    int64_t step; /* slices only; must not be 0 */
} strided_index;

/* The integer index i (negative counts from the end). */
static inline strided_index strided_index_at(int64_t i)
{
    strided_index x = {STRIDED_INDEX_INTEGER, true, false, i, 0, 1};
    return x;
}

/* The slice start:stop:step with both ends given. */
static inline strided_index strided_index_slice(int64_t start, int64_t stop, int64_t step)
{
    strided_index x = {STRIDED_INDEX_SLICE, true, true, start, stop, step};
    return x;
}

/* The slice ::step, covering the whole axis (forwards for step > 0,
 * backwards for step < 0). */
static inline strided_index strided_index_all(int64_t step)
{
    strided_index x = {STRIDED_INDEX_SLICE, false, false, 0, 0, step};
    return x;
}

/* Make a layout from a shape, optional strides (in elements) and itemsize.
 * The _init functions take the storage they fill first, as
 * pthread_mutex_init does; every other function takes its output last.
 *   out       out-parameter, written on success only
 *   ndim      number of dimensions, 0..64
 *   shape     ndim extents, each >= 0 (may be NULL when ndim is 0)
 *   strides   ndim strides in elements, or NULL for implicit C strides
 *   itemsize  bytes per element, > 0
 * The slice offset is 0. Strides are kept as given: zero, negative and
 * overlapping strides are allowed.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out or a NULL shape with
 * ndim > 0, ndim outside 0..64, a negative extent or itemsize <= 0 (checked
 * in that order), and STRIDED_ERR_OVERFLOW when the product of the non-zero
 * extents (even if another extent is 0, as NumPy) or, for a non-empty
 * layout, an element offset does not fit in int64. */
STRIDED_API strided_status strided_layout_init(strided_layout *out, int ndim, const int64_t *shape,
                                               const int64_t *strides, int itemsize);

/* Like strided_layout_init, but the strides are given in bytes and are
 * divided by itemsize (cuda.core's divide_strides=True; the form NumPy, the
 * CUDA Array Interface and the array interface use).
 * Returns what strided_layout_init returns, and STRIDED_ERR_INVALID_ARGUMENT
 * when a stride is not a multiple of itemsize. With byte_strides NULL it is
 * strided_layout_init. */
STRIDED_API strided_status strided_layout_init_byte_strides(
    strided_layout *out, int ndim, const int64_t *shape, const int64_t *byte_strides, int itemsize);

/* Make a dense layout with explicit strides.
 *   order  STRIDED_ORDER_C, STRIDED_ORDER_F or STRIDED_ORDER_PERM
 *   perm   with STRIDED_ORDER_PERM: nperm axes, slowest first (the result's
 *          stride_order); negative axes count from the end. Ignored otherwise.
 * The last axis of perm gets stride 1. When the volume is 0 every stride is 0.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out, a NULL shape with
 * ndim > 0 or a NULL perm with STRIDED_ORDER_PERM and nperm > 0, then for
 * STRIDED_ORDER_KEEP or an unknown order, then (as strided_layout_init) a
 * bad ndim, extent or itemsize, then nperm != ndim, an axis out of range or
 * a repeated axis; STRIDED_ERR_OVERFLOW when the volume does not fit in
 * int64. */
STRIDED_API strided_status strided_layout_init_dense(strided_layout *out, int ndim,
                                                     const int64_t *shape, int itemsize,
                                                     strided_order order, int nperm,
                                                     const int *perm);

/* Check that a layout (typically one filled in by hand) obeys the invariant
 * in the header comment.
 *   layout  the layout; borrowed
 * Returns STRIDED_OK; STRIDED_ERR_INVALID_ARGUMENT for a NULL layout, ndim
 * outside 0..64, a negative extent or itemsize <= 0; STRIDED_ERR_OVERFLOW
 * for an extent product, element offsets or byte offsets beyond int64. */
STRIDED_API strided_status strided_layout_validate(const strided_layout *layout);

/* The number of elements: the product of the extents (1 for 0-d). layout
 * must not be NULL. */
STRIDED_API int64_t strided_layout_volume(const strided_layout *layout);

/* True when both layouts have the same ndim, shape, itemsize, slice offset,
 * and strides that are both implicit or both explicit and equal. a and b
 * must not be NULL. */
STRIDED_API bool strided_layout_equal(const strided_layout *a, const strided_layout *b);

/* A hash of exactly the fields strided_layout_equal compares, so equal
 * layouts hash equal. layout must not be NULL. */
STRIDED_API uint64_t strided_layout_hash(const strided_layout *layout);

/* The strides in bytes (stride * itemsize), into out[0..ndim) (out may be
 * NULL when ndim is 0).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout, or a NULL out with
 * ndim > 0; STRIDED_ERR_OVERFLOW when a product does not fit in int64; out
 * is then untouched. */
STRIDED_API strided_status strided_layout_strides_in_bytes(const strided_layout *layout,
                                                           int64_t *out);

/* slice_offset * itemsize into *out.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out,
 * STRIDED_ERR_OVERFLOW if the product overflows. */
STRIDED_API strided_status strided_layout_slice_offset_in_bytes(const strided_layout *layout,
                                                                int64_t *out);

/* The axes from the largest |stride| to the smallest, into out[0..ndim).
 * Ties go to the larger extent first, then to the smaller axis index. For
 * implicit strides it is the identity. layout must not be NULL, nor out
 * unless ndim is 0. */
STRIDED_API void strided_layout_stride_order(const strided_layout *layout, int *out);

/* The smallest and largest element offset the layout reaches, slice offset
 * included; (0, -1) when the volume is 0. layout must not be NULL; either
 * out pointer may be NULL. */
STRIDED_API void strided_layout_offset_bounds(const strided_layout *layout, int64_t *out_min,
                                              int64_t *out_max);

/* The bytes a buffer must have, from the unsliced base pointer, to hold
 * every element: (max_offset + 1) * itemsize, or 0 for an empty layout.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out and when the
 * layout reaches a negative offset (the size would be ambiguous),
 * STRIDED_ERR_OVERFLOW when the size does not fit in int64. */
STRIDED_API strided_status strided_layout_required_size_in_bytes(const strided_layout *layout,
                                                                 int64_t *out);

/* Packed elements. A layout of elements bits wide, bits not a multiple of
 * 8 (DLPack's packed sub-byte types: 4-bit floats and ints, 6-bit floats,
 * their pairs), puts element offset o at bit o * bits, little bit-endian:
 * element o is (D >> (o * bits)) & mask of the memory D read as one
 * little-endian integer. Its strides and slice offset count elements and
 * its itemsize counts nothing (views give such layouts itemsize 1).
 * g = 8 / gcd(bits, 8) consecutive elements fill whole bytes (2 of 4
 * bits, 4 of 6 bits), so an element starts on a byte boundary when its
 * offset is a multiple of g.
 *
 * The packed-layout rule: every element starts on a byte boundary except
 * those after the first along one axis of stride 1 (the first axis of
 * stride 1 and extent above 1), whose runs of elements start on one. So
 * the slice offset and every other stride of an axis of extent above 1 are
 * multiples of g, and an axis of stride -1, or a second axis of stride 1,
 * is refused: such views would split a byte at their starts. Runs may end
 * inside a byte: (3,5):(6,1) of 4-bit elements is valid and needs 9 bytes.
 * An empty layout is always valid. See docs/subbyte.md. */

/* g, the number of consecutive elements of bits bits that fill whole
 * bytes: 8 / gcd(bits, 8) (2 for 4 bits, 4 for 6, 1 for a multiple of 8);
 * 0 for bits <= 0. */
STRIDED_API int strided_layout_packed_group(int bits);

/* Check a layout of elements of bits bits against the packed-layout rule.
 *   layout  borrowed
 *   bits    1 to 524280; for a multiple of 8 every layout passes
 * Returns STRIDED_OK; STRIDED_ERR_INVALID_ARGUMENT for a NULL layout, bits
 * out of range, and the first element (by axis) that breaks the rule
 * ("packed: element (1,0) of (3,5):(5,1), at element offset 5, starts
 * inside a byte: by the packed-layout rule ..."); what
 * strided_layout_validate returns for a layout that breaks the
 * invariant. */
STRIDED_API strided_status strided_layout_check_packed(const strided_layout *layout, int bits);

/* The bytes the elements of a layout of elements of bits bits occupy,
 * [*out_lo, *out_hi) counted from offset 0: from the byte of the lowest
 * element's first bit to the byte of the highest element's last bit,
 * included; (0, 0) for an empty layout. lo is floor(min_offset * bits / 8),
 * which the rule makes exact, and hi ceil((max_offset + 1) * bits / 8).
 * Returns what strided_layout_check_packed returns (checked first);
 * STRIDED_ERR_INVALID_ARGUMENT for NULL outputs; STRIDED_ERR_OVERFLOW when
 * a bit position does not fit in int64. */
STRIDED_API strided_status strided_layout_packed_byte_bounds(const strided_layout *layout, int bits,
                                                             int64_t *out_lo, int64_t *out_hi);

/* strided_layout_required_size_in_bytes for elements of bits bits: the
 * bytes from the unsliced base pointer that hold every element, the hi of
 * strided_layout_packed_byte_bounds, or 0 for an empty layout; (3,5):(6,1)
 * of 4-bit elements needs 9 bytes (its last element, offset 16, ends at
 * bit 68).
 * Returns what strided_layout_packed_byte_bounds returns, and
 * STRIDED_ERR_INVALID_ARGUMENT for a layout that reaches a negative offset
 * (cuda.core's "Allocation size for a layout that maps elements to
 * negative memory offsets is ambiguous. ..."). */
STRIDED_API strided_status strided_layout_required_size_in_bytes_packed(
    const strided_layout *layout, int bits, int64_t *out);

/* C-contiguous in NumPy's relaxed sense: extent-1 axes are ignored; an empty
 * layout and implicit strides are C-contiguous. layout must not be NULL. */
STRIDED_API bool strided_layout_is_contiguous_c(const strided_layout *layout);

/* F-contiguous in NumPy's relaxed sense (empty layouts are). layout must
 * not be NULL. */
STRIDED_API bool strided_layout_is_contiguous_f(const strided_layout *layout);

/* Contiguous in some axis order: permuted by its stride order the layout is
 * C-contiguous. No gaps, no negative or zero strides on non-unit axes.
 * layout must not be NULL. */
STRIDED_API bool strided_layout_is_contiguous_any(const strided_layout *layout);

/* Contiguous in some order and slice offset 0: the elements map one-to-one
 * onto offsets 0..volume-1. layout must not be NULL. */
STRIDED_API bool strided_layout_is_dense(const strided_layout *layout);

/* True when no two elements share an offset. The test is cheap and may say
 * false for some unique interleaved layouts, but it is exact for every
 * layout obtained from a dense one by permute, slice, squeeze, unsqueeze,
 * reshape and flatten; it is false for any non-empty layout with a stride-0
 * axis of extent > 1 and true for an empty layout. layout must not be
 * NULL. */
STRIDED_API bool strided_layout_is_unique(const strided_layout *layout);

/* The axes that strided_layout_flatten would merge into their left
 * neighbour: bit j set means axis j joins the group of axis j-1. Extent-1
 * axes never block a merge (NumPy's no-copy rule). Implicit strides give
 * every bit 1..ndim-1.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out,
 * STRIDED_ERR_OVERFLOW when a stride * extent product needed for the
 * decision overflows (as strided_layout_flatten does). */
STRIDED_API strided_status strided_layout_flattened_axis_mask(const strided_layout *layout,
                                                              uint64_t *out);

/* The largest itemsize that strided_layout_repack would accept along axis:
 * a multiple of the itemsize that divides gcd(max_itemsize, |data_ptr|), the
 * slice offset, the axis extent and every other stride (in bytes). The
 * itemsize itself when the axis stride is not 1 or its extent is 0.
 *   max_itemsize  upper bound, > 0 and >= itemsize
 *   data_ptr      address the layout will be applied to (0: no constraint)
 *   axis          the axis whose stride must be 1; negative counts from end
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out,
 * max_itemsize <= 0, an axis out of range (always for 0-d), or max_itemsize
 * < itemsize (checked in that order). */
STRIDED_API strided_status strided_layout_max_compatible_itemsize(
    const strided_layout *layout, int max_itemsize, intptr_t data_ptr, int axis, int *out);

/* The manipulations, strided_layout_reshape to strided_layout_coalesce:
 * each writes a layout with explicit strides and the input's itemsize and
 * slice offset, unless it says otherwise. */

/* The same elements in a new shape without moving data, by NumPy's no-copy
 * reshape rule. At most one extent may be -1; it is inferred.
 * Extent-1 axes of the result take the running stride at their position.
 * An empty input gives all-zero strides.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, a NULL
 * shape with ndim > 0, ndim > 64, an extent < -1, a second -1, a volume
 * mismatch, an ambiguous or indivisible -1, or strides that cannot express
 * the new shape ("Layout strides are incompatible with the new shape");
 * STRIDED_ERR_OVERFLOW when the new volume or a stride overflows. */
STRIDED_API strided_status strided_layout_reshape(const strided_layout *layout, int ndim,
                                                  const int64_t *shape, strided_layout *out);

/* Reorder the axes: out axis i is input axis axes[i] (numpy.transpose).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, a NULL axes
 * with naxes > 0, naxes != ndim, an axis out of range or one that appears
 * twice. */
STRIDED_API strided_status strided_layout_permute(const strided_layout *layout, int naxes,
                                                  const int *axes, strided_layout *out);

/* Merge the axes in the inclusive range [start_axis, end_axis] that are
 * contiguous with their left neighbour (C index order). (0, -1) means every
 * axis and is valid for 0-d input, which becomes shape (1,) strides (1,).
 * start_axis == end_axis (after negative axes count from the end) merges
 * nothing; a start after the end is an error, as in NumPy and PyTorch.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, an axis
 * out of range or a start axis after the end axis ("Invalid axes: start
 * axis 1 comes after end axis 0 for 3D tensor"), STRIDED_ERR_OVERFLOW when
 * a stride product overflows. */
STRIDED_API strided_status strided_layout_flatten(const strided_layout *layout, int start_axis,
                                                  int end_axis, strided_layout *out);

/* Like strided_layout_flatten, with the axes allowed to merge given as a
 * mask: bit j lets axis j join its left neighbour's group. Bit 0 and bits
 * >= ndim are ignored. Masks of layouts of equal ndim can be combined with &
 * to flatten them alike.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out,
 * STRIDED_ERR_OVERFLOW as strided_layout_flatten. */
STRIDED_API strided_status strided_layout_flatten_mask(const strided_layout *layout, uint64_t mask,
                                                       strided_layout *out);

/* Remove every extent-1 axis (numpy.squeeze). An empty layout becomes shape
 * (0,) strides (0,).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, else
 * STRIDED_OK. */
STRIDED_API strided_status strided_layout_squeeze(const strided_layout *layout,
                                                  strided_layout *out);

/* Insert extent-1 axes at the given positions of the result
 * (numpy.expand_dims). A new axis before input axis q gets stride
 * shape[q] * strides[q]; trailing new axes get the last stride (1 for 0-d).
 * With naxes 0 the output is a copy of the input (strides stay implicit).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, a NULL axes
 * with naxes > 0, a result that would exceed 64 dimensions, an axis out of
 * range or one repeated; STRIDED_ERR_OVERFLOW when a new stride
 * overflows. */
STRIDED_API strided_status strided_layout_unsqueeze(const strided_layout *layout, int naxes,
                                                    const int *axes, strided_layout *out);

/* Broadcast to a shape aligned on the right (numpy.broadcast_to): an
 * extent-1 axis may take any extent (stride 0), new leading axes get stride
 * 0.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, a NULL shape
 * with ndim > 0, ndim > 64, a negative extent, fewer dimensions than the
 * input, or an incompatible extent;
 * STRIDED_ERR_OVERFLOW when the new volume overflows. */
STRIDED_API strided_status strided_layout_broadcast(const strided_layout *layout, int ndim,
                                                    const int64_t *shape, strided_layout *out);

/* Reinterpret the elements at a new itemsize along axis, whose stride must
 * be 1: packing (larger itemsize) divides that extent, the other strides and
 * the slice offset by new/old; unpacking multiplies them by old/new. The
 * itemsizes must divide one another, so volume * itemsize is preserved.
 *   itemsize  the new itemsize; equal to the old one gives a plain copy
 *   data_ptr  packing only: the address must be aligned to the new itemsize
 *   axis      the stride-1 axis; negative counts from the end
 *   keep_dim  packing only: false drops the axis when its extent becomes 1
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, for each
 * rule of cuda.core's repacked (see docs/layout.md) and the divisibility of
 * the itemsizes; STRIDED_ERR_OVERFLOW when unpacking overflows. */
STRIDED_API strided_status strided_layout_repack(const strided_layout *layout, int itemsize,
                                                 intptr_t data_ptr, int axis, bool keep_dim,
                                                 strided_layout *out);

/* Apply a basic-indexing expression (NumPy's, without Ellipsis and None):
 * index k applies to axis k; integers remove their axis, slices keep it.
 * Axes past nindices are kept whole. The slice offset grows by the offset of
 * the first selected element. When a slice selects nothing, every stride of
 * the result is 0; axes left whole otherwise keep their strides.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, a NULL
 * indices with nindices > 0, nindices > ndim, an integer out of range or a
 * step of 0; STRIDED_ERR_OVERFLOW when stride * step or the offset
 * overflows. */
STRIDED_API strided_status strided_layout_slice(const strided_layout *layout, int nindices,
                                                const strided_index *indices, strided_layout *out);

/* A dense layout (slice offset 0, explicit strides) with the same shape and
 * itemsize. STRIDED_ORDER_KEEP follows the layout's stride order; C, F and
 * KEEP return a copy of the input when it is already dense in that order
 * (implicit strides stay implicit); STRIDED_ORDER_PERM always builds anew
 * from perm (see strided_layout_init_dense).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, then the
 * errors of strided_layout_init_dense for a bad order or permutation (a
 * NULL perm with STRIDED_ORDER_PERM and nperm > 0 among them). */
STRIDED_API strided_status strided_layout_to_dense(const strided_layout *layout,
                                                   strided_order order, int nperm, const int *perm,
                                                   strided_layout *out);

/* The layout with the fewest axes that maps each C-order linear index to the
 * same offset (CuTe's coalesce): extent-1 axes are dropped and neighbours
 * with strides[i] == strides[i+1] * shape[i+1] merge. An empty layout becomes
 * (0,):(0,), a one-element layout becomes 0-d.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, else
 * STRIDED_OK. */
STRIDED_API strided_status strided_layout_coalesce(const strided_layout *layout,
                                                   strided_layout *out);

/* Write the layout as "(shape):(strides)", e.g. "(4,6):(6,1)", "(5,):(1,)"
 * or "():()", with the signed slice offset appended when it is not 0:
 * "(4,3,7):(21,-7,1)+35", "(2,):(1,)-3". Like snprintf: writes at most size bytes including
 * the terminating NUL (buf may be NULL when size is 0) and returns the length
 * the full text needs, excluding the NUL. layout must not be NULL. */
STRIDED_API size_t strided_layout_format(const strided_layout *layout, char *buf, size_t size);

/* The most cells strided_layout_format_grid draws, counting each row and
 * each column as one more: (rows + 1) * (columns + 1) must not exceed it. */
#define STRIDED_GRID_MAX_CELLS INT64_C(1048576)

/* Draw a layout of at most 2 dimensions as a grid of element offsets, in the
 * manner of CuTe's print_layout: a header line with the formatted layout,
 * then column indices and one boxed row per index of axis 0, for example
 *
 *     (2,3):(3,1)
 *         0   1   2
 *       +---+---+---+
 *     0 | 0 | 1 | 2 |
 *       +---+---+---+
 *     1 | 3 | 4 | 5 |
 *       +---+---+---+
 *
 * Lines are separated by '\n' (no newline after the last). A 1-d layout is
 * one row, a 0-d layout one cell. Writes like strided_layout_format; the
 * length the full text needs goes to *out_length (may be NULL).
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout, a NULL buf with
 * size > 0, more than 2 dimensions or a grid larger than
 * STRIDED_GRID_MAX_CELLS (the text grows with every row and column drawn,
 * also when the layout is empty: (2**40, 0) is refused). The work done is
 * bounded by that, whatever the layout. */
STRIDED_API strided_status strided_layout_format_grid(const strided_layout *layout, char *buf,
                                                      size_t size, size_t *out_length);

#ifdef __cplusplus
}
#endif

#endif
