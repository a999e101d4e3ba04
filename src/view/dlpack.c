/*
 * view/dlpack.c: DLPack at the boundary: importing a producer's managed
 * tensor as a view, the consumer's side of the exchange (which stream to
 * hand the producer, and where the tensor must be), and exporting views as
 * managed tensors.
 */
#include <assert.h>
#include <stdint.h>

#include "memory/memory.h"
#include "strided/dtype.h"
#include "strided/view.h"
#include "view/view_internal.h"

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

/* Validate a DLTensor (on the device request names, when not NULL) and
 * make its view in *out (written on success only), whose buffer calls
 * release(context, ...) when its last reference goes. On failure nothing is
 * owned and release is not called: the caller releases. strides_required:
 * NULL strides with ndim > 0 are refused (DLPack 1.2 and later); otherwise
 * they mean C order. padded: the versioned flag
 * STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (a sub-byte type one element
 * per byte); without it sub-byte types are packed, and a packed type whose
 * elements are not whole bytes gets a layout of itemsize 1 whose offsets
 * count elements, checked by the packed-layout rule. */
static strided_status import_dl_tensor(const char *op, const strided_dl_tensor *t,
                                       bool strides_required, bool readonly, bool padded,
                                       const strided_dlpack_request *request,
                                       strided_release_fn release, void *context, strided_view *out)
{
    int ndim = t->ndim;
    if (ndim < 0 || ndim > STRIDED_MAX_NDIM)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "dl_tensor.ndim is %d, outside 0..%d", ndim, STRIDED_MAX_NDIM);
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
    int bits = 0;
    padded = padded && strided_dtype_is_subbyte(t->dtype);
    if (strided_dtype_element_bits(t->dtype, padded, &bits) != STRIDED_OK)
        return strided__refail(STRIDED_ERR_UNSUPPORTED, op, "");
    int itemsize = bits % 8 == 0 ? bits / 8 : 1;

    strided_device device = t->device;
    if (device.device_type != STRIDED_DEVICE_CPU && device.device_type != STRIDED_DEVICE_CUDA &&
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
    /* byte_offset: overflow first, then alignment, so that a huge offset
     * reads as what it is. */
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

    /* Where the producer said it would be: the same device type, and for
     * CUDA the same device (the ids of CUDA host and managed memory name no
     * device). */
    if (request != NULL && (device.device_type != request->device.device_type ||
                            (device.device_type == STRIDED_DEVICE_CUDA &&
                             device.device_id != request->device.device_id)))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "__dlpack_device__() returned (%d, %d) but the tensor's "
                             "dl_tensor.device is (%d, %d)",
                             (int)request->device.device_type, (int)request->device.device_id,
                             (int)device.device_type, (int)device.device_id);

    strided_layout layout;
    strided_status status = strided_layout_init(&layout, ndim, t->shape, t->strides, itemsize);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");

    /* Into out directly (written on success only): a view is over 1 KB,
     * and this is the hot path of every import. */
    status = strided__view_wrap_made(op, (void *)(data + (uintptr_t)byte_offset), &layout,
                                     &t->dtype, padded, readonly, &device, release, context, out);
    if (status != STRIDED_OK)
        return status;
    /* The driver classified CUDA host and managed memory; the device the
     * tensor names is still the one a consumer is told it belongs to. */
    if (device.device_type == STRIDED_DEVICE_CUDA_HOST ||
        device.device_type == STRIDED_DEVICE_CUDA_MANAGED) {
        out->home_device = device.device_id;
        out->device_accessible = true;
    }
    return STRIDED_OK;
}

/* A managed tensor's DLTensor, version and flags, then import_dl_tensor with
 * its deleter as the release. On failure the caller calls the deleter.
 * Assumes: managed is not NULL. */
static strided_status import_tensor(const char *op, void *managed, bool versioned,
                                    const strided_dlpack_request *request, strided_view *out)
{
    if (!versioned)
        return import_dl_tensor(op, &((strided_dl_managed_tensor *)managed)->dl_tensor, false,
                                false, false, request, release_legacy, managed, out);
    strided_dl_managed_tensor_versioned *m = managed;
    /* DLPack: with another major version no other field may be read. */
    if (m->version.major != STRIDED_DLPACK_MAJOR_VERSION)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "Unsupported DLPack major version: %lu "
                             "(only 1 is supported)",
                             (unsigned long)m->version.major);
    return import_dl_tensor(op, &m->dl_tensor, m->version.minor >= 2,
                            (m->flags & STRIDED_DLPACK_FLAG_READ_ONLY) != 0,
                            (m->flags & STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED) != 0, request,
                            release_versioned, managed, out);
}

strided_status strided_view_import_dl_tensor(const strided_dl_tensor *tensor, bool readonly,
                                             const strided_dlpack_request *request,
                                             strided_release_fn release, void *context,
                                             strided_view *out)
{
    const char *op = "import_dlpack";
    strided_status status;
    if (tensor == NULL || out == NULL)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "tensor and out are required");
    else
        status = import_dl_tensor(op, tensor, false, readonly, false, request, release, context,
                                  out);
    if (status != STRIDED_OK && release != NULL)
        release(context, NULL, 0);
    return status;
}

strided_status strided_view_import_dlpack(void *managed, bool versioned, strided_view *out)
{
    return strided_view_import_dlpack_checked(managed, versioned, NULL, out);
}

strided_status strided_view_import_dlpack_checked(void *managed, bool versioned,
                                                  const strided_dlpack_request *request,
                                                  strided_view *out)
{
    const char *op = "import_dlpack";
    if (managed == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "managed is NULL: there is no tensor to import");
    strided_status status = STRIDED_OK;
    if (out == NULL)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    else
        status = import_tensor(op, managed, versioned, request, out);
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

strided_status strided_dlpack_request_make(int64_t device_type, int64_t device_id,
                                           bool stream_given, int64_t stream,
                                           strided_dlpack_request *out)
{
    const char *op = "from_dlpack";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    /* cuda.core asserts these of the producer. */
    if ((device_type == STRIDED_DEVICE_CPU && device_id != 0) ||
        (device_type == STRIDED_DEVICE_CUDA && (device_id < 0 || device_id > INT32_MAX)))
        return strided__fail(STRIDED_ERR_PROTOCOL, op,
                             "__dlpack_device__() returned device id %lld for device type "
                             "%lld; a CPU device must have id 0 and a CUDA device a "
                             "non-negative id",
                             (long long)device_id, (long long)device_type);
    bool needs_stream;
    switch (device_type) {
    case STRIDED_DEVICE_CPU:
    case STRIDED_DEVICE_CUDA: needs_stream = true; break;
    case STRIDED_DEVICE_CUDA_HOST:
    case STRIDED_DEVICE_CUDA_MANAGED: needs_stream = false; break;
    default: return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "device not supported");
    }
    /* cuda.core's sentence, and for host memory, where -1 is the only
     * stream that means anything, what to pass instead. */
    if (!stream_given && needs_stream)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "stream=None is ambiguous with view()%s",
                             device_type == STRIDED_DEVICE_CPU
                                 ? "; for host memory pass stream_ptr=-1"
                                 : "");
    /* The ids of CUDA host and managed memory name no device; keep what
     * the producer said, clamped to the field. */
    out->device.device_type = (int32_t)device_type;
    out->device.device_id = device_id < 0           ? -1
                            : device_id > INT32_MAX ? INT32_MAX
                                                    : (int32_t)device_id;
    /* 0 passes no stream; for CPU, -1 ("no synchronisation") neither. */
    out->pass_stream = stream_given && stream != 0 &&
                       !(device_type == STRIDED_DEVICE_CPU && stream == -1);
    return STRIDED_OK;
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
static strided_status check_exportable(const char *op, const strided_view *view, const void *out)
{
    if (view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "view and out are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the view has no buffer");
    if (!view->has_dtype)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "Cannot export StridedMemoryView via DLPack "
                             "without dtype information; create the view "
                             "with dtype specified.");
    if (view->layout.ndim < 0 || view->layout.ndim > STRIDED_MAX_NDIM)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view's layout has ndim %d, outside 0..%d", (int)view->layout.ndim,
                             STRIDED_MAX_NDIM);
    return STRIDED_OK;
}

/* Check that a legacy tensor, which has no flags, can say what the view
 * holds: sub-byte elements read as packed there, so padded ones cannot. */
static strided_status check_legacy(const char *op, const strided_view *view)
{
    if (view->padded) {
        char name[32];
        strided_dtype_format(view->dtype, name, sizeof name);
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "a view of padded %s elements needs a versioned DLPack tensor "
                             "(the flag IS_SUBBYTE_TYPE_PADDED): an unversioned one has no flags, "
                             "and its sub-byte elements read as packed",
                             name);
    }
    return STRIDED_OK;
}

/* Fill a DLTensor from a view, with shape and strides stored in dims
 * (2 * ndim entries).
 * Assumes: the view passed check_exportable and its layout keeps the
 * invariants of layout.h. */
static void fill_tensor(const strided_view *view, int64_t *dims, strided_dl_tensor *t)
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

/* Export view as a versioned (versioned true) or legacy tensor in *out. */
static strided_status export_tensor(const char *op, const strided_view *view, bool versioned,
                                    void **out)
{
    strided_status status = check_exportable(op, view, out);
    if (status == STRIDED_OK && !versioned)
        status = check_legacy(op, view);
    if (status != STRIDED_OK)
        return status;
    size_t ndim = (size_t)view->layout.ndim;
    size_t head = versioned ? sizeof(exported_versioned) : sizeof(exported_legacy);
    void *e = strided__malloc(head + 2 * ndim * sizeof(int64_t));
    if (e == NULL)
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate a DLPack tensor");
    strided_buffer *held = strided_buffer_retain(view->buffer);
    if (versioned) {
        exported_versioned *v = e;
        strided_dl_managed_tensor_versioned *m = &v->managed;
        m->version.major = STRIDED_DLPACK_MAJOR_VERSION;
        m->version.minor = STRIDED_DLPACK_MINOR_VERSION;
        m->manager_ctx = held;
        m->deleter = delete_versioned;
        m->flags = (view->readonly ? STRIDED_DLPACK_FLAG_READ_ONLY : 0) |
                   (view->padded ? STRIDED_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED : 0);
        fill_tensor(view, v->dims, &m->dl_tensor);
    } else {
        exported_legacy *l = e;
        strided_dl_managed_tensor *m = &l->managed;
        m->manager_ctx = held;
        m->deleter = delete_legacy;
        fill_tensor(view, l->dims, &m->dl_tensor);
    }
    *out = e;
    return STRIDED_OK;
}

strided_status strided_view_export_dlpack(const strided_view *view,
                                          strided_dl_managed_tensor_versioned **out)
{
    return export_tensor("export_dlpack", view, true, (void **)out);
}

strided_status strided_view_export_dlpack_legacy(const strided_view *view,
                                                 strided_dl_managed_tensor **out)
{
    return export_tensor("export_dlpack_legacy", view, false, (void **)out);
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

/* The DLPack device of a buffer by what can reach its memory, as
 * cuda.core's Buffer classifies it. */
static strided_status buffer_dlpack_device(const char *op, const strided_buffer *b,
                                           strided_device *out)
{
    if (b == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the buffer and out are required");
    strided_memory_info info = strided_buffer_memory_info(b);
    strided_device d = {STRIDED_DEVICE_CPU, 0};
    if (info.managed && info.device_accessible)
        d.device_type = STRIDED_DEVICE_CUDA_MANAGED;
    else if (info.device_accessible && !info.host_accessible)
        d = (strided_device){STRIDED_DEVICE_CUDA, info.device_id < 0 ? 0 : info.device_id};
    else if (info.device_accessible)
        d.device_type = STRIDED_DEVICE_CUDA_HOST;
    else if (!info.host_accessible)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "buffer is neither device-accessible nor host-accessible");
    *out = d;
    return STRIDED_OK;
}

strided_status strided_buffer_dlpack_device(const strided_buffer *b, strided_device *out)
{
    return buffer_dlpack_device("dlpack_device", b, out);
}

/* Export the bytes of b as a 1-D int8 tensor: the export of a view of the
 * whole buffer, on the buffer's DLPack device, whose data is the buffer's
 * address even when it is empty. */
static strided_status export_buffer(const char *op, strided_buffer *b, bool versioned, void **out)
{
    strided_device device;
    strided_status status = buffer_dlpack_device(op, b, &device);
    if (status != STRIDED_OK)
        return status;
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    const int64_t extent = (int64_t)strided_buffer_size(b), stride = 1;
    const strided_dtype int8 = {STRIDED_DTYPE_INT, 8, 1};
    strided_layout layout;
    strided_view view;
    status = strided_layout_init(&layout, 1, &extent, &stride, 1);
    if (status == STRIDED_OK)
        status = strided_view_from_buffer(b, &layout, &int8, false, &view);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    view.device = device;
    void *e = NULL;
    status = export_tensor(op, &view, versioned, &e);
    strided_view_release(&view);
    if (status != STRIDED_OK)
        return status;
    strided_dl_tensor *t = versioned ? &((strided_dl_managed_tensor_versioned *)e)->dl_tensor
                                     : &((strided_dl_managed_tensor *)e)->dl_tensor;
    t->data = strided_buffer_ptr(b);
    *out = e;
    return STRIDED_OK;
}

strided_status strided_buffer_export_dlpack(strided_buffer *b,
                                            strided_dl_managed_tensor_versioned **out)
{
    return export_buffer("export_dlpack", b, true, (void **)out);
}

strided_status strided_buffer_export_dlpack_legacy(strided_buffer *b,
                                                   strided_dl_managed_tensor **out)
{
    return export_buffer("export_dlpack_legacy", b, false, (void **)out);
}
