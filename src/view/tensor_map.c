/*
 * view/tensor_map.c: tiled tensor maps of views (strided/tensor_map.h):
 * every rule of cuTensorMapEncodeTiled checked against the view and the
 * options, then the encoding by the driver in a device's primary context.
 */
#include <inttypes.h>
#include <string.h>

#include "cuda/driver.h"
#include "strided/stream.h"
#include "strided/tensor_map.h"
#include "view/view_internal.h"

/* The public enumerations are the driver's, value for value: a map's
 * options go to the driver as they are. */
_Static_assert(
    (int)STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ == (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ &&
        (int)STRIDED_TENSOR_MAP_DATA_TYPE_BFLOAT16 == (int)CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    "tensor map data types must be the driver's");
_Static_assert((int)STRIDED_TENSOR_MAP_INTERLEAVE_32B == (int)CU_TENSOR_MAP_INTERLEAVE_32B &&
                   (int)STRIDED_TENSOR_MAP_SWIZZLE_128B == (int)CU_TENSOR_MAP_SWIZZLE_128B &&
                   (int)STRIDED_TENSOR_MAP_L2_PROMOTION_L2_256B ==
                       (int)CU_TENSOR_MAP_L2_PROMOTION_L2_256B &&
                   (int)STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA ==
                       (int)CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
               "tensor map options must be the driver's");
_Static_assert(sizeof(((strided_tensor_map *)0)->descriptor) == sizeof(CUtensorMap),
               "a tensor map's descriptor holds one CUtensorMap");

/* The limits of the tiled encoding. */
#define MAX_BOX 256
#define MAX_ELEMENT_STRIDE 8
#define MAX_EXTENT (INT64_C(1) << 32)
#define STRIDE_LIMIT (INT64_C(1) << 40)

typedef struct data_type_info {
    const char *name; /* TensorMapDataType's member name */
    int size;
    bool floating;
} data_type_info;

static const data_type_info data_types[] = {
    [STRIDED_TENSOR_MAP_DATA_TYPE_UINT8] = {"UINT8", 1, false},
    [STRIDED_TENSOR_MAP_DATA_TYPE_UINT16] = {"UINT16", 2, false},
    [STRIDED_TENSOR_MAP_DATA_TYPE_UINT32] = {"UINT32", 4, false},
    [STRIDED_TENSOR_MAP_DATA_TYPE_INT32] = {"INT32", 4, false},
    [STRIDED_TENSOR_MAP_DATA_TYPE_UINT64] = {"UINT64", 8, false},
    [STRIDED_TENSOR_MAP_DATA_TYPE_INT64] = {"INT64", 8, false},
    [STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16] = {"FLOAT16", 2, true},
    [STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32] = {"FLOAT32", 4, true},
    [STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT64] = {"FLOAT64", 8, true},
    [STRIDED_TENSOR_MAP_DATA_TYPE_BFLOAT16] = {"BFLOAT16", 2, true},
    [STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ] = {"FLOAT32_FTZ", 4, true},
    [STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32] = {"TFLOAT32", 4, true},
    [STRIDED_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ] = {"TFLOAT32_FTZ", 4, true},
};
#define NUM_DATA_TYPES ((int)(sizeof data_types / sizeof data_types[0]))

static const char *const interleave_names[] = {"NONE", "INTERLEAVE_16B", "INTERLEAVE_32B"};
static const char *const swizzle_names[] = {"NONE", "SWIZZLE_32B", "SWIZZLE_64B", "SWIZZLE_128B"};
/* The span a swizzle shuffles 16-byte chunks within, in bytes. */
static const int swizzle_span[] = {0, 32, 64, 128};

/* The element types with a tensor-map type, in cuda.core's order (its
 * messages list them so). */
typedef struct dtype_entry {
    strided_dtype dtype;
    const char *repr; /* NumPy's repr of the dtype */
    strided_tensor_map_data_type type;
} dtype_entry;

static const dtype_entry dtype_table[] = {
    {{STRIDED_DTYPE_UINT, 8, 1}, "dtype('uint8')", STRIDED_TENSOR_MAP_DATA_TYPE_UINT8},
    {{STRIDED_DTYPE_UINT, 16, 1}, "dtype('uint16')", STRIDED_TENSOR_MAP_DATA_TYPE_UINT16},
    {{STRIDED_DTYPE_UINT, 32, 1}, "dtype('uint32')", STRIDED_TENSOR_MAP_DATA_TYPE_UINT32},
    {{STRIDED_DTYPE_INT, 32, 1}, "dtype('int32')", STRIDED_TENSOR_MAP_DATA_TYPE_INT32},
    {{STRIDED_DTYPE_UINT, 64, 1}, "dtype('uint64')", STRIDED_TENSOR_MAP_DATA_TYPE_UINT64},
    {{STRIDED_DTYPE_INT, 64, 1}, "dtype('int64')", STRIDED_TENSOR_MAP_DATA_TYPE_INT64},
    {{STRIDED_DTYPE_FLOAT, 16, 1}, "dtype('float16')", STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT16},
    {{STRIDED_DTYPE_FLOAT, 32, 1}, "dtype('float32')", STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT32},
    {{STRIDED_DTYPE_FLOAT, 64, 1}, "dtype('float64')", STRIDED_TENSOR_MAP_DATA_TYPE_FLOAT64},
    {{STRIDED_DTYPE_BFLOAT, 16, 1}, "dtype(bfloat16)", STRIDED_TENSOR_MAP_DATA_TYPE_BFLOAT16},
};
#define NUM_DTYPES ((int)(sizeof dtype_table / sizeof dtype_table[0]))

int strided_tensor_map_data_type_size(strided_tensor_map_data_type type)
{
    if ((int)type < 0 || (int)type >= NUM_DATA_TYPES)
        return 0;
    return data_types[type].size;
}

strided_status strided_tensor_map_data_type_from_dtype(const strided_dtype *dtype, const char *name,
                                                       bool inferred,
                                                       strided_tensor_map_data_type *out)
{
    const char *op = "as_tensor_map";
    if (out == NULL || (dtype == NULL && name == NULL))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "out and a dtype or its name are required");
    for (int i = 0; dtype != NULL && i < NUM_DTYPES; i++)
        if (strided_dtype_equal(*dtype, dtype_table[i].dtype)) {
            *out = dtype_table[i].type;
            return STRIDED_OK;
        }
    char formatted[64];
    if (name == NULL) {
        strided_dtype_format(*dtype, formatted, sizeof formatted);
        name = formatted;
    }
    char list[512];
    strided__text text = {list, sizeof list, 0};
    for (int i = 0; i < NUM_DTYPES; i++)
        strided__text_append(&text, "%s%s", i == 0 ? "[" : ", ", dtype_table[i].repr);
    strided__text_append(&text, "]");
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "Unsupported dtype %s for TMA; supported dtypes: %s.%s", name, list,
                         inferred ? " You may also specify data_type explicitly." : "");
}

/* An enumeration value of the options outside its range. */
static strided_status bad_enum(const char *op, const char *what, const char *type, int last,
                               int value)
{
    return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                         "%s must be a %s value (0 to %d), got %d", what, type, last, value);
}

static strided_status check_options(const char *op, const strided_tensor_map_options *o)
{
    if (o->box_ndim < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "box_ndim must not be negative, got %d", (int)o->box_ndim);
    if (o->box_dim == NULL && o->box_ndim > 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "box_dim is required (NULL with %d entries)", (int)o->box_ndim);
    if (o->element_strides != NULL && o->element_strides_ndim < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "element_strides_ndim must not be negative, got %d",
                             (int)o->element_strides_ndim);
    if (o->has_data_type && ((int)o->data_type < 0 || (int)o->data_type >= NUM_DATA_TYPES))
        return bad_enum(op, "data_type", "TensorMapDataType", NUM_DATA_TYPES - 1,
                        (int)o->data_type);
    if ((int)o->interleave < 0 || (int)o->interleave > STRIDED_TENSOR_MAP_INTERLEAVE_32B)
        return bad_enum(op, "interleave", "TensorMapInterleave", 2, (int)o->interleave);
    if ((int)o->swizzle < 0 || (int)o->swizzle > STRIDED_TENSOR_MAP_SWIZZLE_128B)
        return bad_enum(op, "swizzle", "TensorMapSwizzle", 3, (int)o->swizzle);
    if ((int)o->l2_promotion < 0 || (int)o->l2_promotion > STRIDED_TENSOR_MAP_L2_PROMOTION_L2_256B)
        return bad_enum(op, "l2_promotion", "TensorMapL2Promotion", 3, (int)o->l2_promotion);
    if ((int)o->oob_fill < 0 || (int)o->oob_fill > STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        return bad_enum(op, "oob_fill", "TensorMapOOBFill", 1, (int)o->oob_fill);
    return STRIDED_OK;
}

/* The bytes every global address and stride must be a multiple of. */
static int64_t alignment_of(strided_tensor_map_interleave interleave)
{
    return interleave == STRIDED_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
}

/* The device address of a view's element (0,...,0), once the view is known
 * to be one a device reaches, at an address aligned for interleave. */
static strided_status check_address(const char *op, const strided_view *view,
                                    strided_tensor_map_interleave interleave, uint64_t *out)
{
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view has no buffer (it was released)");
    if (!view->device_accessible)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "The tensor must be device-accessible");
    uintptr_t address = strided_view_device_ptr(view);
    /* Memory a device reads at its host address (the driver reports no
     * device pointer for it). */
    if (address == 0)
        address = (uintptr_t)strided_view_ptr(view);
    int64_t align = alignment_of(interleave);
    if (address % (uintptr_t)align != 0) {
        if (align == 16)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Global memory address must be 16-byte aligned, got address "
                                 "0x%" PRIxPTR,
                                 address);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the global address must be 32-byte aligned with interleave "
                             "INTERLEAVE_32B, got address 0x%" PRIxPTR,
                             address);
    }
    *out = address;
    return STRIDED_OK;
}

/* The data type the map reads, of the view's itemsize. */
static strided_status resolve_data_type(const char *op, const strided_view *view,
                                        const strided_tensor_map_options *o,
                                        strided_tensor_map_data_type *out)
{
    strided_tensor_map_data_type type = o->data_type;
    /* Packed sub-byte elements have no byte of their own: a map of bytes
     * over them would read two (or a part of two) at once. */
    int bits = strided_view_packed_bits(view);
    if (bits > 0)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "a view of packed %d-bit elements has no tensor map: every element "
                             "must be whole bytes (see them as pairs, or copy them padded)",
                             bits);
    if (!o->has_data_type) {
        if (!view->has_dtype && o->dtype_name == NULL)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "Cannot infer TMA data type from the tensor; please specify "
                                 "data_type explicitly");
        /* Its failure is this operation's already. */
        strided_status status = strided_tensor_map_data_type_from_dtype(
            view->has_dtype ? &view->dtype : NULL, o->dtype_name, true, &type);
        if (status != STRIDED_OK)
            return status;
    }
    if (data_types[type].size != view->layout.itemsize)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "data_type %s has %d-byte elements, but the view's itemsize is %d",
                             data_types[type].name, data_types[type].size,
                             (int)view->layout.itemsize);
    *out = type;
    return STRIDED_OK;
}

/* The box and the element strides, turned into the driver's order. */
static strided_status check_box(const char *op, const strided_tensor_map_options *o, int rank,
                                strided_tensor_map *m)
{
    if (o->box_ndim != rank)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "box_dim must have %d elements (same as tensor rank), got %d", rank,
                             (int)o->box_ndim);
    for (int k = 0; k < rank; k++) {
        int64_t b = o->box_dim[k];
        if (b < 1 || b > MAX_BOX)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "box_dim[%d] must be in [1, %d], got %" PRId64, k, MAX_BOX, b);
        m->box_dim[rank - 1 - k] = (uint32_t)b;
    }
    if (o->element_strides == NULL) {
        for (int i = 0; i < rank; i++)
            m->element_strides[i] = 1;
        return STRIDED_OK;
    }
    if (o->element_strides_ndim != rank)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "element_strides must have %d elements, got %d", rank,
                             (int)o->element_strides_ndim);
    for (int k = 0; k < rank; k++) {
        int64_t e = o->element_strides[k];
        if (e < 1)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "element_strides[%d] must be positive, got %" PRId64, k, e);
        if (e > MAX_ELEMENT_STRIDE)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "element_strides[%d] must be at most %d, got %" PRId64, k,
                                 MAX_ELEMENT_STRIDE, e);
        m->element_strides[rank - 1 - k] = (uint32_t)e;
    }
    return STRIDED_OK;
}

/* The round-up of x (>= 0) to a multiple of align, or -1 when that
 * overflows. */
static int64_t round_up(int64_t x, int64_t align)
{
    int64_t r;
    if (strided__add_overflow(x, align - 1, &r))
        return -1;
    return r / align * align;
}

/* The view's extents and strides in the driver's order. Assumes: the rank
 * is 1..5 and the view's itemsize is the data type's size. */
static strided_status check_layout(const char *op, const strided_layout *l,
                                   strided_tensor_map_interleave interleave, strided_tensor_map *m)
{
    int rank = l->ndim;
    int64_t itemsize = l->itemsize, align = alignment_of(interleave);
    for (int k = 0; k < rank; k++) {
        int64_t extent = l->shape[k];
        if (extent < 1 || extent > MAX_EXTENT)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "axis %d has extent %" PRId64 "; a tensor map needs 1 to "
                                 "2^32 elements along each axis",
                                 k, extent);
        m->global_dim[rank - 1 - k] = (uint64_t)extent;
    }
    int last = rank - 1;
    if (l->shape[last] > 1 && l->strides[last] != 1)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the last axis must have stride 1 (its elements next to each "
                             "other), got %" PRId64,
                             l->strides[last]);
    /* span: the bytes the dimensions inside the current one cover, from
     * which an axis of extent 1 gets its stride. */
    int64_t span = itemsize * l->shape[last];
    for (int k = last - 1; k >= 0; k--) {
        int64_t stride = l->strides[k], bytes;
        if (l->shape[k] == 1) {
            /* Never stepped along: the dense stride, or where that is out
             * of reach, the smallest valid one. */
            bytes = round_up(span, align);
            if (bytes < 0 || bytes >= STRIDE_LIMIT)
                bytes = align;
        } else {
            if (stride < 0)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "axis %d has a negative stride (%" PRId64 "); a tensor "
                                     "map steps forwards along every axis",
                                     k, stride);
            if (stride == 0)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "axis %d is broadcast (stride 0, extent %" PRId64 "); a "
                                     "tensor map cannot repeat elements",
                                     k, l->shape[k]);
            if (strided__mul_overflow(stride, itemsize, &bytes) || bytes >= STRIDE_LIMIT)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "axis %d has a stride of %" PRId64 " elements of %" PRId64
                                     " bytes; a tensor map needs less than 2^40 bytes",
                                     k, stride, itemsize);
            if (bytes % align != 0)
                return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                     "axis %d has a stride of %" PRId64 " bytes (%" PRId64
                                     " elements of %" PRId64 " bytes); a tensor map needs a "
                                     "multiple of %" PRId64 " bytes",
                                     k, bytes, stride, itemsize, align);
        }
        m->global_strides[rank - 2 - k] = (uint64_t)bytes;
        if (strided__mul_overflow(bytes, l->shape[k], &span))
            span = INT64_MAX;
    }
    return STRIDED_OK;
}

/* The rules that tie the box to the encoding. */
static strided_status check_encoding(const char *op, const strided_tensor_map *m, int itemsize)
{
    int rank = m->rank;
    int64_t inner = (int64_t)m->box_dim[0] * itemsize;
    /* The driver's documentation asks for this without interleave only; the
     * driver refuses it with interleave too. */
    if (inner % 16 != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "box_dim[%d] * itemsize must be a multiple of 16 bytes, got %u * %d "
                             "= %" PRId64 " bytes",
                             rank - 1, m->box_dim[0], itemsize, inner);
    if (m->interleave == STRIDED_TENSOR_MAP_INTERLEAVE_NONE &&
        m->swizzle != STRIDED_TENSOR_MAP_SWIZZLE_NONE && inner > swizzle_span[m->swizzle])
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "box_dim[%d] * itemsize must be at most %d bytes with %s, got "
                             "%u * %d = %" PRId64 " bytes",
                             rank - 1, swizzle_span[m->swizzle], swizzle_names[m->swizzle],
                             m->box_dim[0], itemsize, inner);
    /* Documented as required; the driver does not check it, so strided does
     * (what the TMA unit does without it is not specified). */
    if (m->interleave == STRIDED_TENSOR_MAP_INTERLEAVE_32B &&
        m->swizzle != STRIDED_TENSOR_MAP_SWIZZLE_32B)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "interleave INTERLEAVE_32B needs swizzle SWIZZLE_32B, got %s",
                             swizzle_names[m->swizzle]);
    if (m->oob_fill == STRIDED_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA &&
        !data_types[m->data_type].floating)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "oob_fill NAN_REQUEST_ZERO_FMA needs a floating-point data_type, "
                             "got %s",
                             data_types[m->data_type].name);
    return STRIDED_OK;
}

/* A view of device memory must be on device. */
static strided_status check_device(const char *op, const char *who, const strided_view *view,
                                   int device)
{
    if (view->device.device_type == STRIDED_DEVICE_CUDA && view->device.device_id != device)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s expects tensor on device %d, got %d", who, device,
                             (int)view->device.device_id);
    return STRIDED_OK;
}

/* Have the driver encode m (all but its descriptor filled in) in the
 * primary context of m->device, into m->descriptor. */
static strided_status encode(const char *op, const strided__driver *cu, strided_tensor_map *m)
{
    strided__context_scope scope;
    strided_status status = strided__context_enter(op, cu, m->device, &scope);
    if (status != STRIDED_OK)
        return status;
    /* The driver writes a CUtensorMap of its own alignment; the map is
     * written only once everything has succeeded. */
    CUtensorMap encoded;
    cuuint64_t dims[STRIDED_TENSOR_MAP_MAX_RANK], strides[STRIDED_TENSOR_MAP_MAX_RANK - 1];
    cuuint32_t box[STRIDED_TENSOR_MAP_MAX_RANK], steps[STRIDED_TENSOR_MAP_MAX_RANK];
    for (int i = 0; i < m->rank; i++) {
        dims[i] = m->global_dim[i];
        box[i] = m->box_dim[i];
        steps[i] = m->element_strides[i];
        if (i > 0)
            strides[i - 1] = m->global_strides[i - 1];
    }
    status = STRIDED_CUDA_CHECK(
        op, cu->cuTensorMapEncodeTiled(
                &encoded, (CUtensorMapDataType)m->data_type, (cuuint32_t)m->rank,
                (void *)(uintptr_t)m->global_address, dims, strides, box, steps,
                (CUtensorMapInterleave)m->interleave, (CUtensorMapSwizzle)m->swizzle,
                (CUtensorMapL2promotion)m->l2_promotion, (CUtensorMapFloatOOBfill)m->oob_fill));
    strided__context_leave(cu, &scope);
    if (status == STRIDED_OK)
        memcpy(m->descriptor, &encoded, sizeof encoded);
    return status;
}

/* The end of both makers: a view of device memory must be on m's device
 * (who names the operation in cuda.core's sentence); then the encoding,
 * and out written. */
static strided_status finish(const char *op, const char *who, const strided__driver *cu,
                             const strided_view *view, strided_tensor_map *m,
                             strided_tensor_map *out)
{
    strided_status status = check_device(op, who, view, m->device);
    if (status == STRIDED_OK)
        status = encode(op, cu, m);
    if (status == STRIDED_OK)
        *out = *m;
    return status;
}

static strided_status check_out(const char *op, const void *out)
{
    if ((uintptr_t)out % STRIDED_TENSOR_MAP_ALIGNMENT != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "out must be %d-byte aligned (the driver's CUtensorMap), got "
                             "address %p",
                             STRIDED_TENSOR_MAP_ALIGNMENT, out);
    return STRIDED_OK;
}

strided_status strided_tensor_map_make(const strided_view *view,
                                       const strided_tensor_map_options *options,
                                       strided_tensor_map *out)
{
    const char *op = "as_tensor_map";
    if (view == NULL || options == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "view, options and out are required");
    strided_status status = check_out(op, out);
    if (status == STRIDED_OK)
        status = check_options(op, options);
    if (status != STRIDED_OK)
        return status;

    strided_tensor_map m;
    memset(&m, 0, sizeof m);
    m.interleave = options->interleave;
    m.swizzle = options->swizzle;
    m.l2_promotion = options->l2_promotion;
    m.oob_fill = options->oob_fill;
    status = check_address(op, view, m.interleave, &m.global_address);
    if (status == STRIDED_OK)
        status = resolve_data_type(op, view, options, &m.data_type);
    if (status != STRIDED_OK)
        return status;
    int rank = view->layout.ndim;
    if (rank < 1 || rank > STRIDED_TENSOR_MAP_MAX_RANK)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Tensor rank must be between 1 and 5, got %d", rank);
    if (m.interleave != STRIDED_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "interleave %s needs a tensor of rank 3 or more, got rank %d",
                             interleave_names[m.interleave], rank);
    m.rank = rank;
    status = check_box(op, options, rank, &m);
    if (status == STRIDED_OK)
        status = check_layout(op, &view->layout, m.interleave, &m);
    if (status == STRIDED_OK)
        status = check_encoding(op, &m, view->layout.itemsize);
    if (status != STRIDED_OK)
        return status;

    const strided__driver *cu;
    status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    int device = 0;
    status = strided_current_device(&device);
    if (status != STRIDED_OK) {
        /* Told as this operation's, with the driver's error kept. */
        int cuda_error = strided_last_cuda_error();
        strided__refail(status, op, "");
        strided__set_last_cuda_error(cuda_error);
        return status;
    }
    m.device = device;
    return finish(op, "TensorMapDescriptor._from_tiled", cu, view, &m, out);
}

strided_status strided_tensor_map_replace_address(const strided_tensor_map *map,
                                                  const strided_view *view, strided_tensor_map *out)
{
    const char *op = "replace_address";
    if (map == NULL || view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "map, view and out are required");
    strided_status status = check_out(op, out);
    if (status != STRIDED_OK)
        return status;
    if (map->rank < 1 || map->rank > STRIDED_TENSOR_MAP_MAX_RANK)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "map has rank %d: it is not a map strided_tensor_map_make made",
                             (int)map->rank);
    strided_tensor_map m = *map;
    status = check_address(op, view, m.interleave, &m.global_address);
    if (status != STRIDED_OK)
        return status;
    const strided__driver *cu;
    status = strided__cuda(op, &cu);
    if (status != STRIDED_OK)
        return status;
    return finish(op, op, cu, view, &m, out);
}
