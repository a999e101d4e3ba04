/*
 * view/exchange.c: the producer's side of the DLPack exchange beyond a plain
 * export: where __dlpack__'s dl_device and copy arguments send a view and
 * when they need a copy, the export that copies (through a copy engine the
 * caller hands in, the copy layer being above this one), the borrowed
 * DLTensor of the C exchange API, and its allocator: managed tensors of new
 * memory for a prototype.
 */
#include <assert.h>
#include <stdint.h>

#include "strided/dtype.h"
#include "strided/view.h"
#include "view/view_internal.h"

/* A device as an export names it: DLPack's device ids mean something for
 * CUDA only. */
static strided_device exported_device(strided_device d)
{
    if (d.device_type != STRIDED_DEVICE_CUDA)
        d.device_id = 0;
    return d;
}

static bool same_device(strided_device a, int64_t type, int64_t id)
{
    return a.device_type == type && a.device_id == id;
}

strided_status strided_dlpack_export_request_make(const strided_view *view, bool stream_given,
                                                  int64_t stream, bool device_given,
                                                  int64_t device_type, int64_t device_id,
                                                  strided_dlpack_copy copy,
                                                  strided_dlpack_export_request *out)
{
    const char *op = "__dlpack__";
    if (view == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "view and out are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "the view has no buffer");
    if (copy != STRIDED_DLPACK_COPY_IF_NEEDED && copy != STRIDED_DLPACK_COPY_ALWAYS &&
        copy != STRIDED_DLPACK_COPY_NEVER)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "copy must be a strided_dlpack_copy, got %d", (int)copy);
    strided_status status = strided_view_check_dlpack_stream(view, stream_given, stream);
    if (status != STRIDED_OK)
        return status;

    strided_device own = exported_device(view->device);
    bool host_memory = strided_buffer_memory_info(view->buffer).host_accessible;
    strided_device target = own;
    bool needed = false;
    if (device_given && !same_device(own, device_type, device_id)) {
        if (!same_device((strided_device){STRIDED_DEVICE_CPU, 0}, device_type, device_id))
            return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                                 "dl_device (%lld, %lld) is not supported for a view on "
                                 "device (%d, %d): a view exports to its own device or to "
                                 "the CPU (1, 0)",
                                 (long long)device_type, (long long)device_id, (int)own.device_type,
                                 (int)own.device_id);
        target = (strided_device){STRIDED_DEVICE_CPU, 0};
        needed = !host_memory;
    }
    if (needed && copy == STRIDED_DLPACK_COPY_NEVER)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "copy=False, but exporting a view of device memory on (%d, %d) "
                             "to the CPU (1, 0) needs a copy",
                             (int)own.device_type, (int)own.device_id);

    strided_dlpack_export_request r = {target, false, false, false, NULL};
    r.copy = needed || copy == STRIDED_DLPACK_COPY_ALWAYS;
    if (r.copy) {
        /* New memory of the target's kind is host-accessible unless it is
         * device memory. */
        r.host_copy = host_memory && target.device_type != STRIDED_DEVICE_CUDA;
        bool ordered = stream_given && stream != -1 && !r.host_copy;
        r.blocking = !ordered || target.device_type == STRIDED_DEVICE_CPU;
        r.stream = ordered ? (void *)(intptr_t)stream : NULL;
    }
    *out = r;
    return STRIDED_OK;
}

/* New memory of size bytes of the kind device names, allocated on stream
 * (for managed memory, with device home's context current) into *out.
 * Failures are re-issued under op. */
static strided_status alloc_memory(const char *op, strided_device device, int home, size_t size,
                                   void *stream, strided_buffer **out)
{
    strided_memory_resource *mr = NULL;
    strided_status status;
    switch (device.device_type) {
    case STRIDED_DEVICE_CPU:
        /* DLPack asks for data aligned to 256 bytes. */
        status = strided_host_resource_create(256, &mr);
        break;
    case STRIDED_DEVICE_CUDA: status = strided_device_resource_create(device.device_id, &mr); break;
    case STRIDED_DEVICE_CUDA_HOST: status = strided_pinned_resource_create(&mr); break;
    case STRIDED_DEVICE_CUDA_MANAGED: status = strided_managed_resource_create(home, &mr); break;
    default:
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "device type %d is not supported (only CPU, CUDA, CUDA host "
                             "and CUDA managed)",
                             (int)device.device_type);
    }
    if (status == STRIDED_OK)
        status = strided_buffer_alloc(mr, size, stream, out);
    strided_memory_resource_release(mr);
    return status == STRIDED_OK ? STRIDED_OK : strided__refail(status, op, "");
}

/* C order for packed elements of bits bits: rows (the last axis) rounded
 * up to whole bytes, the packed-layout rule's densest layout; plain C order
 * where the rows are whole bytes already. */
static strided_status init_packed_rows(strided_layout *out, int ndim, const int64_t *shape,
                                       int bits)
{
    int64_t strides[STRIDED_MAX_NDIM], g = strided_layout_packed_group(bits);
    if (ndim < 2 || ndim > STRIDED_MAX_NDIM || shape == NULL)
        return strided_layout_init_dense(out, ndim, shape, 1, STRIDED_ORDER_C, 0, NULL);
    for (int k = 0; k < ndim; k++)
        if (shape[k] < 0)
            return strided_layout_init_dense(out, ndim, shape, 1, STRIDED_ORDER_C, 0, NULL);
    int64_t last = shape[ndim - 1], running = last / g * g + (last % g != 0 ? g : 0);
    strides[ndim - 1] = 1;
    for (int k = ndim - 2; k >= 0; k--) {
        strides[k] = running;
        if (strided__mul_overflow(running, shape[k], &running))
            return strided__fail(STRIDED_ERR_OVERFLOW, "dense",
                                 "the rows of packed %d-bit elements of this shape overflow "
                                 "int64",
                                 bits);
    }
    return strided_layout_init(out, ndim, shape, strides, 1);
}

/* A writable view of new memory on device (home for managed memory),
 * dense in C order, of shape and dtype (padded or packed, for a sub-byte
 * type), allocated on stream. Packed elements that are not whole bytes
 * have their rows rounded up to whole bytes (init_packed_rows). */
static strided_status alloc_view(const char *op, int ndim, const int64_t *shape,
                                 strided_dtype dtype, bool padded, strided_device device, int home,
                                 void *stream, strided_view *out)
{
    int bits = 0;
    if (strided_dtype_element_bits(dtype, padded, &bits) != STRIDED_OK)
        return strided__refail(STRIDED_ERR_UNSUPPORTED, op, "");
    strided_layout layout;
    int64_t size = 0;
    strided_status status = bits % 8 == 0
                                ? strided_layout_init_dense(&layout, ndim, shape, bits / 8,
                                                            STRIDED_ORDER_C, 0, NULL)
                                : init_packed_rows(&layout, ndim, shape, bits);
    if (status == STRIDED_OK)
        status = bits % 8 == 0 ? strided_layout_required_size_in_bytes(&layout, &size)
                               : strided_layout_required_size_in_bytes_packed(&layout, bits, &size);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    strided_buffer *b = NULL;
    status = alloc_memory(op, device, home, (size_t)size, stream, &b);
    if (status != STRIDED_OK)
        return status;
    status = strided_view_from_buffer_ex(b, &layout, &dtype, padded, false, out);
    strided_buffer_release(b); /* the view holds it now, or nothing does */
    return status == STRIDED_OK ? STRIDED_OK : strided__refail(status, op, "");
}

/* The DLTensor of a managed tensor of either form. */
static strided_dl_tensor *tensor_of(void *managed, bool versioned)
{
    return versioned ? &((strided_dl_managed_tensor_versioned *)managed)->dl_tensor
                     : &((strided_dl_managed_tensor *)managed)->dl_tensor;
}

static void delete_tensor(void *managed, bool versioned)
{
    if (versioned) {
        strided_dl_managed_tensor_versioned *m = managed;
        m->deleter(m);
    } else {
        strided_dl_managed_tensor *m = managed;
        m->deleter(m);
    }
}

/* The export (versioned or legacy) of view into *out, naming device; out
 * may be NULL, which the export refuses. */
static strided_status export_as(const strided_view *view, bool versioned, strided_device device,
                                void **out)
{
    strided_dl_managed_tensor_versioned *mv = NULL;
    strided_dl_managed_tensor *ml = NULL;
    strided_status status = versioned
                                ? strided_view_export_dlpack(view, out != NULL ? &mv : NULL)
                                : strided_view_export_dlpack_legacy(view, out != NULL ? &ml : NULL);
    if (status != STRIDED_OK)
        return status;
    void *m = versioned ? (void *)mv : (void *)ml;
    tensor_of(m, versioned)->device = exported_device(device);
    *out = m;
    return STRIDED_OK;
}

strided_status strided__view_export_dlpack_ex(const strided_view *view,
                                              const strided_dlpack_export_request *request,
                                              bool versioned, strided__dlpack_copy_fn copy,
                                              void *context, void **out)
{
    const char *op = "__dlpack__";
    /* The view's own export makes every check an export makes, with its
     * messages; a copy then exports the new memory instead. */
    void *plain = NULL;
    strided_device own = view != NULL ? view->device : (strided_device){STRIDED_DEVICE_CPU, 0};
    strided_status status = export_as(view, versioned, own, out != NULL ? &plain : NULL);
    if (status != STRIDED_OK)
        return status;
    if (request == NULL || (request->copy && copy == NULL)) {
        delete_tensor(plain, versioned);
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             request == NULL ? "request is required"
                                             : "a copy engine is required for a copy");
    }
    if (!request->copy) {
        tensor_of(plain, versioned)->device = exported_device(request->device);
        *out = plain;
        return STRIDED_OK;
    }
    delete_tensor(plain, versioned);

    strided_view dst;
    int home = view->home_device < 0 ? 0 : view->home_device;
    status = alloc_view(op, view->layout.ndim, view->layout.shape, view->dtype, view->padded,
                        request->device, home, request->stream, &dst);
    if (status != STRIDED_OK)
        return status;
    status = copy(context, &dst, view, request);
    void *tensor = NULL;
    if (status == STRIDED_OK)
        status = export_as(&dst, versioned, request->device, &tensor);
    /* The tensor holds its own reference to the new memory, or the memory
     * goes here. */
    strided_view_release(&dst);
    if (status != STRIDED_OK)
        return status;
    if (versioned)
        ((strided_dl_managed_tensor_versioned *)tensor)->flags |= STRIDED_DLPACK_FLAG_IS_COPIED;
    *out = tensor;
    return STRIDED_OK;
}

strided_status strided_view_export_dl_tensor(const strided_view *view, strided_dl_tensor *out)
{
    /* What an export refuses, with its messages, before anything is
     * written. */
    if (view == NULL || out == NULL || view->buffer == NULL || !view->has_dtype) {
        strided_dl_managed_tensor_versioned *unused = NULL;
        strided_status status = strided_view_export_dlpack(view, out != NULL ? &unused : NULL);
        assert(status != STRIDED_OK);
        return status;
    }
    /* A DLTensor has no flags: padded sub-byte elements would read as
     * packed, as in a legacy tensor, which refuses them with its message. */
    if (view->padded) {
        strided_dl_managed_tensor *unused = NULL;
        strided_status status = strided_view_export_dlpack_legacy(view, &unused);
        assert(status != STRIDED_OK);
        return strided__refail(status, "export_dl_tensor", "");
    }
    const strided_layout *l = &view->layout;
    strided_dl_tensor t;
    t.data = strided_layout_volume(l) == 0 ? NULL : strided_view_ptr(view);
    t.device = exported_device(view->device);
    t.ndim = l->ndim;
    t.dtype = view->dtype;
    /* Borrowed from the view, which DLPack's non-const fields cannot say. */
    t.shape = l->ndim > 0 ? (int64_t *)(uintptr_t)l->shape : NULL;
    t.strides = l->ndim > 0 ? (int64_t *)(uintptr_t)l->strides : NULL;
    t.byte_offset = 0;
    *out = t;
    return STRIDED_OK;
}

strided_status strided_dlpack_tensor_alloc(const strided_dl_tensor *prototype,
                                           strided_dl_managed_tensor_versioned **out)
{
    const char *op = "tensor_alloc";
    if (prototype == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "prototype and out are required");
    strided_device device = prototype->device;
    if (device.device_id < 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "prototype->device.device_id is %d; it must not be negative",
                             (int)device.device_id);
    if (device.device_type == STRIDED_DEVICE_CPU && device.device_id != 0)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "prototype->device.device_id is %d; a CPU device must have id 0",
                             (int)device.device_id);
    strided_view v;
    strided_status status = alloc_view(op, prototype->ndim, prototype->shape, prototype->dtype,
                                       false, device, device.device_id, NULL, &v);
    if (status != STRIDED_OK)
        return status;
    strided_dl_managed_tensor_versioned *m = NULL;
    status = export_as(&v, true, device, (void **)&m);
    strided_view_release(&v);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    *out = m;
    return STRIDED_OK;
}

/* The exception the Python binding raises for status at the DLPack
 * boundary (python/errors.c), by name. */
static const char *error_kind(strided_status status)
{
    switch (status) {
    case STRIDED_ERR_INVALID_ARGUMENT:
    case STRIDED_ERR_OVERFLOW:
    case STRIDED_ERR_UNSUPPORTED: return "BufferError";
    case STRIDED_ERR_OUT_OF_MEMORY: return "MemoryError";
    case STRIDED_ERR_PROTOCOL: return "AssertionError";
    default: return "RuntimeError";
    }
}

int strided_dlpack_exchange_alloc(strided_dl_tensor *prototype,
                                  strided_dl_managed_tensor_versioned **out, void *error_ctx,
                                  strided_dlpack_set_error_fn set_error)
{
    strided_status status = strided_dlpack_tensor_alloc(prototype, out);
    if (status == STRIDED_OK)
        return 0;
    if (set_error != NULL)
        set_error(error_ctx, error_kind(status), strided_last_error_reason());
    return -1;
}
