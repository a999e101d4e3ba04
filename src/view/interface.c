/*
 * view/interface.c: views of what NumPy's array interface and the CUDA
 * Array Interface describe (strided/interface.h).
 *
 * The rules are cuda.core's, with its messages where it has them: version 3
 * or later, no mask, a consumer stream for CUDA data (None is ambiguous), a
 * positive producer stream, plain-data element types in the machine's byte
 * order, strides in whole elements. The memory is wrapped as the footprint
 * of the described layout (strided_view_wrap), so views derived from the
 * import stay inside the producer's memory.
 */
#include <stdint.h>

#include "base/base.h"
#include "strided/interface.h"
#include "view/view_internal.h"

static const char *interface_name(strided_interface_kind kind)
{
    return kind == STRIDED_INTERFACE_CUDA ? "CUDA Array Interface" : "NumPy Array Interface";
}

strided_status strided_interface_check_header(strided_interface_kind kind, int64_t version,
                                              bool has_mask)
{
    const char *op = "interface";
    if (kind != STRIDED_INTERFACE_ARRAY && kind != STRIDED_INTERFACE_CUDA)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "kind %d is not an interface (0: array, 1: CUDA)", (int)kind);
    if (version < 3)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "only %s v3 or above is supported",
                             interface_name(kind));
    if (has_mask)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op, "mask is not supported");
    return STRIDED_OK;
}

/* The key of the interface's dict, for messages: "__cuda_array_interface__". */
static const char *dict_name(strided_interface_kind kind)
{
    return kind == STRIDED_INTERFACE_CUDA ? "__cuda_array_interface__" : "__array_interface__";
}

/* Rules 1 to 5 of strided_view_import_interface: everything the dict says
 * by itself. Writes the layout and element type; the producer stream to
 * wait for (NULL: none). */
static strided_status check_desc(const char *op, const strided_interface_desc *d,
                                 const strided_consumer_stream *consumer,
                                 strided_layout *out_layout, strided_typestr *out_type,
                                 void **out_producer)
{
    strided_status status = strided_interface_check_header(d->kind, d->version, d->has_mask);
    if (status != STRIDED_OK)
        return status;
    *out_producer = NULL;
    if (d->kind == STRIDED_INTERFACE_CUDA) {
        if (consumer == NULL)
            return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                                 "stream=None is ambiguous with view()");
        if (consumer->sync && d->has_stream) {
            /* Version 3: 0 is disallowed (the legacy or the per-thread
             * default stream?); 1 and 2 name those two. */
            if (d->stream <= 0)
                return strided__fail(STRIDED_ERR_PROTOCOL, op,
                                     "__cuda_array_interface__['stream'] must be a "
                                     "positive stream handle, got %lld",
                                     (long long)d->stream);
            *out_producer = (void *)(uintptr_t)d->stream;
        }
    }
    if (d->ndim < 0 || d->ndim > STRIDED_MAX_NDIM || (d->ndim > 0 && d->shape == NULL))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s['shape'] has %d entries (0 to %d, and an array of them)",
                             dict_name(d->kind), d->ndim, STRIDED_MAX_NDIM);
    bool has_strides = d->nstrides >= 0;
    if (has_strides && (d->nstrides != d->ndim || (d->ndim > 0 && d->strides == NULL)))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "%s has %d strides for %d dimensions", dict_name(d->kind), d->nstrides,
                             d->ndim);
    if (d->typestr == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "%s['typestr'] is required",
                             dict_name(d->kind));
    strided_typestr t;
    unsigned flags = d->typestr_flags | STRIDED_TYPESTR_NATIVE_ONLY;
    if ((d->type_name != NULL ? strided_dtype_from_numpy(d->typestr, d->type_name, flags, &t)
                              : strided_typestr_parse(d->typestr, flags, &t)) != STRIDED_OK)
        return strided__refail(STRIDED_ERR_UNSUPPORTED, op, "unsupported typestr: ");
    if (d->descr_itemsize != 0 && d->descr_itemsize != t.itemsize)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "descr describes elements of %lld bytes, typestr %.32s of %d",
                             (long long)d->descr_itemsize, d->typestr, (int)t.itemsize);
    /* Byte strides to element strides, with the layout's checks ("strides
     * must be divisible by itemsize"). */
    status = strided_layout_init_byte_strides(out_layout, d->ndim, d->shape,
                                              has_strides ? d->strides : NULL, (int)t.itemsize);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    *out_type = t;
    return STRIDED_OK;
}

/* Rule 6 for CUDA data, once wrapped: the memory must be device-accessible;
 * its device is the memory's, or the current one. */
static strided_status place_cuda(const char *op, const strided_interface_desc *d, strided_view *v)
{
    if (!v->device_accessible)
        return strided__fail(STRIDED_ERR_UNSUPPORTED, op,
                             "__cuda_array_interface__['data'] %p is not memory a CUDA "
                             "device can access",
                             d->data);
    int current = 0;
    if (v->home_device < 0) {
        strided_status status = strided_current_device(&current);
        if (status != STRIDED_OK)
            return status;
        v->home_device = current;
    }
    return STRIDED_OK;
}

strided_status strided_view_import_interface(const strided_interface_desc *desc,
                                             const strided_consumer_stream *consumer,
                                             strided_release_fn release, void *context,
                                             strided_view *out, strided_typestr *out_type)
{
    const char *op = "interface";
    strided_layout layout;
    strided_typestr t;
    void *producer = NULL;
    strided_status status;
    if (desc == NULL || out == NULL)
        status = strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "desc and out are required");
    else
        status = check_desc(op, desc, consumer, &layout, &t, &producer);
    /* Where the memory is: host memory for the array interface, with no
     * driver call; for CUDA data the driver classifies it, but NULL data
     * (an empty array) has no memory to ask about: the current device
     * (cuda.core's rule). */
    strided_device device = {STRIDED_DEVICE_CPU, 0};
    const strided_device *known = &device;
    if (status == STRIDED_OK && desc->kind == STRIDED_INTERFACE_CUDA) {
        known = NULL;
        if (desc->data == NULL) {
            int current = 0;
            status = strided_current_device(&current);
            device = (strided_device){STRIDED_DEVICE_CUDA, current};
            known = &device;
        }
    }
    strided_view v;
    if (status == STRIDED_OK)
        status = strided__view_wrap_made(op, desc->data, &layout, t.has_dtype ? &t.dtype : NULL,
                                         t.padded, desc->readonly, known, release, context, &v);
    if (status != STRIDED_OK) {
        /* Nothing holds the context: release it here, once. */
        if (release != NULL)
            release(context, NULL, 0);
        return status;
    }
    /* From here on the view's buffer holds the context: releasing the view
     * releases it. */
    if (desc->kind == STRIDED_INTERFACE_CUDA)
        status = place_cuda(op, desc, &v);
    if (status == STRIDED_OK && producer != NULL)
        status = strided_stream_wait(consumer->stream, producer, v.home_device);
    if (status != STRIDED_OK) {
        strided_view_release(&v);
        return status;
    }
    strided__view_assign(out, &v);
    if (out_type != NULL)
        *out_type = t;
    return STRIDED_OK;
}

strided_status strided_view_check_interface_export(const strided_view *view, const char *what)
{
    if (view == NULL || what == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, "interface",
                             "view and what are required");
    int bits = strided_view_packed_bits(view);
    if (bits > 0) {
        char name[32];
        strided_dtype_format(view->dtype, name, sizeof name);
        return strided__fail(STRIDED_ERR_UNSUPPORTED, what,
                             "a view of packed %s elements (%d bits each) has no array interface: "
                             "its elements are not whole bytes (copy it into a padded view, as "
                             "NumPy with ml_dtypes stores them)",
                             name, bits);
    }
    return STRIDED_OK;
}
