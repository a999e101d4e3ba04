/*
 * view/dlpack.c: DLPack element types (size, name, equality) and the export of
 * views as DLPack managed tensors.
 */
#include <stdint.h>

#include "memory/memory.h"
#include "strided/dlpack.h"
#include "strided/view.h"

/* The NumPy / ml_dtypes names of the float8 codes 7..14, in code order. */
static const char *const float8_names[] = {
    "float8_e3m4",    "float8_e4m3",    "float8_e4m3b11fnuz",
    "float8_e4m3fn",  "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu",
};

/* The prefix of a code's name, for the codes whose name is the prefix
 * followed by the bits ("int", "uint", ...), or NULL. */
static const char *bits_prefix(int code)
{
    switch (code) {
    case STRIDED_DTYPE_INT:
        return "int";
    case STRIDED_DTYPE_UINT:
        return "uint";
    case STRIDED_DTYPE_FLOAT:
        return "float";
    case STRIDED_DTYPE_BFLOAT:
        return "bfloat";
    case STRIDED_DTYPE_COMPLEX:
        return "complex";
    default:
        return NULL;
    }
}

/* The element size of a supported type, or 0 for any other. Sets no
 * error, so that strided_dtype_format can use it. */
static int supported_itemsize(strided_dtype d)
{
    if (d.lanes != 1)
        return 0;
    switch (d.code) {
    case STRIDED_DTYPE_INT:
    case STRIDED_DTYPE_UINT:
        return d.bits == 8 || d.bits == 16 || d.bits == 32 || d.bits == 64
                   ? d.bits / 8
                   : 0;
    case STRIDED_DTYPE_FLOAT:
        return d.bits == 16 || d.bits == 32 || d.bits == 64 ? d.bits / 8 : 0;
    case STRIDED_DTYPE_BFLOAT:
        return d.bits == 16 ? 2 : 0;
    case STRIDED_DTYPE_COMPLEX:
        return d.bits == 64 || d.bits == 128 ? d.bits / 8 : 0;
    case STRIDED_DTYPE_BOOL:
        return d.bits == 8 ? 1 : 0;
    case STRIDED_DTYPE_FLOAT8_E3M4:
    case STRIDED_DTYPE_FLOAT8_E4M3:
    case STRIDED_DTYPE_FLOAT8_E4M3B11FNUZ:
    case STRIDED_DTYPE_FLOAT8_E4M3FN:
    case STRIDED_DTYPE_FLOAT8_E4M3FNUZ:
    case STRIDED_DTYPE_FLOAT8_E5M2:
    case STRIDED_DTYPE_FLOAT8_E5M2FNUZ:
    case STRIDED_DTYPE_FLOAT8_E8M0FNU:
        return d.bits == 8 ? 1 : 0;
    default:
        return 0;
    }
}

strided_status strided_dtype_itemsize(strided_dtype dtype, int *out)
{
    const char *op = "dtype_itemsize";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    int size = supported_itemsize(dtype);
    if (size > 0) {
        *out = size;
        return STRIDED_OK;
    }
    /* Say why, most specific reason first. */
    if (dtype.lanes != 1)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "vector dtypes (lanes=%u) are not supported",
                             (unsigned)dtype.lanes);
    switch (dtype.code) {
    case STRIDED_DTYPE_FLOAT6_E2M3FN:
    case STRIDED_DTYPE_FLOAT6_E3M2FN:
    case STRIDED_DTYPE_FLOAT4_E2M1FN:
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%s (%u bits) is not byte-addressable: "
                             "sub-byte types are not supported",
                             dtype.code == STRIDED_DTYPE_FLOAT6_E2M3FN
                                 ? "float6_e2m3fn"
                             : dtype.code == STRIDED_DTYPE_FLOAT6_E3M2FN
                                 ? "float6_e3m2fn"
                                 : "float4_e2m1fn",
                             (unsigned)dtype.bits);
    case STRIDED_DTYPE_OPAQUE_HANDLE:
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "opaque handles (dtype code 3, bits=%u) are not "
                             "supported",
                             (unsigned)dtype.bits);
    default:
        break;
    }
    if (dtype.code > STRIDED_DTYPE_FLOAT4_E2M1FN)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "unknown dtype code %u (bits=%u, lanes=%u)",
                             (unsigned)dtype.code, (unsigned)dtype.bits,
                             (unsigned)dtype.lanes);
    if (dtype.bits % 8 != 0)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "dtype(code=%u, bits=%u, lanes=1) is not "
                             "byte-addressable: bits must be a multiple of 8",
                             (unsigned)dtype.code, (unsigned)dtype.bits);
    const char *prefix = bits_prefix(dtype.code);
    if (prefix != NULL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%s%u is not supported", prefix,
                             (unsigned)dtype.bits);
    if (dtype.code == STRIDED_DTYPE_BOOL)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "%u-bit bool is not supported",
                             (unsigned)dtype.bits);
    return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                         "%s with %u bits is not supported",
                         float8_names[dtype.code - STRIDED_DTYPE_FLOAT8_E3M4],
                         (unsigned)dtype.bits);
}

size_t strided_dtype_format(strided_dtype dtype, char *buf, size_t size)
{
    strided__text t = {buf, size, 0};
    if (size > 0)
        buf[0] = '\0';
    if (supported_itemsize(dtype) == 0) {
        strided__text_append(&t, "dtype(code=%u, bits=%u, lanes=%u)",
                             (unsigned)dtype.code, (unsigned)dtype.bits,
                             (unsigned)dtype.lanes);
        return t.len;
    }
    const char *prefix = bits_prefix(dtype.code);
    if (prefix != NULL)
        strided__text_append(&t, "%s%u", prefix, (unsigned)dtype.bits);
    else if (dtype.code == STRIDED_DTYPE_BOOL)
        strided__text_append(&t, "bool");
    else
        strided__text_append(&t, "%s",
                             float8_names[dtype.code - STRIDED_DTYPE_FLOAT8_E3M4]);
    return t.len;
}

bool strided_dtype_equal(strided_dtype a, strided_dtype b)
{
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/* The exported tensors: each is one allocation holding the managed struct
 * and then shape and strides (2 * ndim int64). manager_ctx is the view's
 * buffer, one reference held by the tensor. */
typedef struct exported_versioned {
    strided_dl_managed_tensor_versioned managed;
    int64_t dims[];
} exported_versioned;

typedef struct exported_legacy {
    strided_dl_managed_tensor managed;
    int64_t dims[];
} exported_legacy;

static void delete_versioned(strided_dl_managed_tensor_versioned *self)
{
    if (self == NULL)
        return;
    strided_buffer_release(self->manager_ctx);
    /* managed is the first member, so self is the allocation. */
    strided__free(self);
}

static void delete_legacy(strided_dl_managed_tensor *self)
{
    if (self == NULL)
        return;
    strided_buffer_release(self->manager_ctx);
    strided__free(self);
}

/* Check that a view can be exported into out. */
static strided_status check_exportable(const char *op, const strided_view *view,
                                       const void *out)
{
    if (view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "view and out are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view has no buffer");
    if (!view->has_dtype)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Cannot export StridedMemoryView via DLPack "
                             "without dtype information; create the view "
                             "with dtype specified.");
    if (view->layout.ndim < 0 || view->layout.ndim > STRIDED_MAX_NDIM)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view's layout has ndim %d, outside 0..%d",
                             (int)view->layout.ndim, STRIDED_MAX_NDIM);
    return STRIDED_OK;
}

/* Fill a DLTensor from a view, with shape and strides stored in dims
 * (2 * ndim entries).
 * Assumes: the view passed check_exportable and its layout keeps the
 * invariants of layout.h. */
static void fill_tensor(const strided_view *view, int64_t *dims,
                        strided_dl_tensor *t)
{
    const strided_layout *l = &view->layout;
    int ndim = l->ndim;
    /* strides[] always holds the strides, implicit C strides included, so
     * the export is explicit for every ndim > 0. */
    for (int i = 0; i < ndim; i++) {
        dims[i] = l->shape[i];
        dims[ndim + i] = l->strides[i];
    }
    t->data = strided_layout_volume(l) == 0 ? NULL : strided_view_ptr(view);
    /* DLPack's convention: the device id is meaningful for CUDA only. */
    t->device = view->device;
    if (t->device.device_type != STRIDED_DEVICE_CUDA)
        t->device.device_id = 0;
    t->ndim = ndim;
    t->dtype = view->dtype;
    t->shape = ndim > 0 ? dims : NULL;
    t->strides = ndim > 0 ? dims + ndim : NULL;
    t->byte_offset = 0;
}

strided_status strided_view_export_dlpack(
    const strided_view *view, strided_dl_managed_tensor_versioned **out)
{
    const char *op = "export_dlpack";
    strided_status status = check_exportable(op, view, out);
    if (status != STRIDED_OK)
        return status;
    size_t ndim = (size_t)view->layout.ndim;
    exported_versioned *e =
        strided__malloc(sizeof *e + 2 * ndim * sizeof(int64_t));
    if (e == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                             "cannot allocate a DLPack tensor");
    strided_dl_managed_tensor_versioned *m = &e->managed;
    m->version.major = STRIDED_DLPACK_MAJOR_VERSION;
    m->version.minor = STRIDED_DLPACK_MINOR_VERSION;
    m->manager_ctx = strided_buffer_retain(view->buffer);
    m->deleter = delete_versioned;
    m->flags = view->readonly ? STRIDED_DLPACK_FLAG_READ_ONLY : 0;
    fill_tensor(view, e->dims, &m->dl_tensor);
    *out = m;
    return STRIDED_OK;
}

strided_status strided_view_export_dlpack_legacy(const strided_view *view,
                                                 strided_dl_managed_tensor **out)
{
    const char *op = "export_dlpack_legacy";
    strided_status status = check_exportable(op, view, out);
    if (status != STRIDED_OK)
        return status;
    size_t ndim = (size_t)view->layout.ndim;
    exported_legacy *e = strided__malloc(sizeof *e + 2 * ndim * sizeof(int64_t));
    if (e == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op,
                             "cannot allocate a DLPack tensor");
    strided_dl_managed_tensor *m = &e->managed;
    m->manager_ctx = strided_buffer_retain(view->buffer);
    m->deleter = delete_legacy;
    fill_tensor(view, e->dims, &m->dl_tensor);
    *out = m;
    return STRIDED_OK;
}
