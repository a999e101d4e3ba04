/*
 * view/ipc.c: view descriptors for other processes, and the interprocess
 * events that travel with them.
 *
 * The descriptor's bytes (docs/ipc.md has the table), integers
 * little-endian:
 *
 *     0   8  magic "STRDIPCV"
 *     8   2  version (1)
 *    10   1  flags: 1 read-only, 2 has a dtype, 4 carries an event
 *    11   1  zero
 *    12   4  ndim (0..64)
 *    16   4  itemsize
 *    20   4  zero
 *    24   8  origin: bytes from the buffer's start to offset 0
 *    32   8  the layout's slice offset, in elements
 *    40   4  dtype: code, bits, lanes (16 bits); zero without one
 *    44   4  DLPack device type
 *    48   4  DLPack device id
 *    52   4  the exporter's home device (-1: none); informative, the
 *            importer takes its own from the buffer
 *    56 192  the buffer's IPC descriptor (strided/ipc.h)
 *   248  64  the event's handle (CUipcEventHandle); zero without one
 *   312   8  zero
 *   320      shape[ndim], then strides[ndim] (in elements), 8 bytes each
 *   end   8  checksum: FNV-1a 64 of every byte before it
 */
#include <string.h>

#include "cuda/driver.h"
#include "memory/ipc.h"
#include "memory/memory.h"
#include "strided/view.h"
#include "view/view_internal.h"

enum {
    MAGIC = 0,
    VERSION = 8,
    FLAGS = 10,
    NDIM = 12,
    ITEMSIZE = 16,
    ORIGIN = 24,
    SLICE_OFFSET = 32,
    DTYPE = 40,
    DEVICE_TYPE = 44,
    DEVICE_ID = 48,
    HOME_DEVICE = 52,
    BUFFER = 56,
    EVENT = 248,
    DIMS = 320
};

enum { READONLY = 1, HAS_DTYPE = 2, HAS_EVENT = 4 };

static const char view_magic[] = "STRDIPCV";

_Static_assert(BUFFER + STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE == EVENT, "the fields follow");
_Static_assert(STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(0) == DIMS + 8, "the size of a 0-d view");

struct strided_ipc_event {
    const strided__driver *cu;
    int device;
    CUevent event;
    CUipcEventHandle handle;
};

strided_status strided_ipc_event_record(int device, void *stream, strided_ipc_event **out)
{
    const char *op = "ipc_event_record";
    if (out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "out is required");
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status = strided__enter_device(op, device, &cu, &scope);
    if (status != STRIDED_OK)
        return status;
    strided_ipc_event *e = strided__malloc(sizeof *e);
    if (e == NULL) {
        strided__context_leave(cu, &scope);
        return strided__fail(STRIDED_ERR_OUT_OF_MEMORY, op, "cannot allocate an event");
    }
    e->cu = cu;
    e->device = device;
    e->event = NULL;
    status = STRIDED_CUDA_CHECK(op, cu->cuEventCreate(&e->event, CU_EVENT_INTERPROCESS |
                                                                     CU_EVENT_DISABLE_TIMING));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuEventRecord(e->event, (CUstream)stream));
    if (status == STRIDED_OK)
        status = STRIDED_CUDA_CHECK(op, cu->cuIpcGetEventHandle(&e->handle, e->event));
    if (status != STRIDED_OK && e->event != NULL)
        cu->cuEventDestroy(e->event);
    strided__context_leave(cu, &scope);
    if (status != STRIDED_OK) {
        strided__free(e);
        return status;
    }
    *out = e;
    return STRIDED_OK;
}

void strided_ipc_event_release(strided_ipc_event *event)
{
    strided__context_scope scope;
    if (event == NULL)
        return;
    if (strided__context_enter("free", event->cu, event->device, &scope) == STRIDED_OK) {
        event->cu->cuEventDestroy(event->event);
        strided__context_leave(event->cu, &scope);
    }
    strided__free(event);
}

strided_status strided_view_export_ipc(const strided_view *view, const strided_ipc_event *event,
                                       void *out, size_t capacity, size_t *out_size)
{
    const char *op = "view_export_ipc";
    if (view == NULL || out_size == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "view and out_size are required");
    if (view->buffer == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the view has been released: it has no buffer to share");
    const strided_layout *l = &view->layout;
    size_t size = STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(l->ndim);
    if (out == NULL || capacity < size) {
        *out_size = size;
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor needs %zu bytes, room for %zu", size,
                             out == NULL ? (size_t)0 : capacity);
    }
    unsigned char buffer[STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE];
    strided_status status = strided_buffer_export_ipc(view->buffer, buffer);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    unsigned char *d = out;
    memset(d, 0, size);
    memcpy(d + MAGIC, view_magic, 8);
    strided__put_le(d + VERSION, STRIDED_VIEW_IPC_DESCRIPTOR_VERSION, 2);
    d[FLAGS] = (unsigned char)((view->readonly ? READONLY : 0) | (view->has_dtype ? HAS_DTYPE : 0) |
                               (event != NULL ? HAS_EVENT : 0));
    strided__put_le(d + NDIM, (uint64_t)l->ndim, 4);
    strided__put_le(d + ITEMSIZE, (uint64_t)l->itemsize, 4);
    strided__put_le(d + ORIGIN, (uint64_t)view->origin, 8);
    strided__put_le(d + SLICE_OFFSET, (uint64_t)l->slice_offset, 8);
    if (view->has_dtype) {
        d[DTYPE] = view->dtype.code;
        d[DTYPE + 1] = view->dtype.bits;
        strided__put_le(d + DTYPE + 2, view->dtype.lanes, 2);
    }
    strided__put_le(d + DEVICE_TYPE, (uint64_t)(uint32_t)view->device.device_type, 4);
    strided__put_le(d + DEVICE_ID, (uint64_t)(uint32_t)view->device.device_id, 4);
    strided__put_le(d + HOME_DEVICE, (uint64_t)(uint32_t)view->home_device, 4);
    memcpy(d + BUFFER, buffer, sizeof buffer);
    if (event != NULL)
        memcpy(d + EVENT, event->handle.reserved, sizeof event->handle.reserved);
    for (int k = 0; k < l->ndim; k++) {
        strided__put_le(d + DIMS + 8 * (size_t)k, (uint64_t)l->shape[k], 8);
        strided__put_le(d + DIMS + 8 * (size_t)(l->ndim + k), (uint64_t)l->strides[k], 8);
    }
    strided__put_le(d + size - 8, strided__ipc_checksum(d, size - 8), 8);
    *out_size = size;
    return STRIDED_OK;
}

/* What a view descriptor says, before its buffer is imported. */
typedef struct parsed {
    unsigned flags;
    strided_layout layout;
    int64_t origin;
    strided_dtype dtype;
    strided_device device;
} parsed;

static strided_status parse(const char *op, const unsigned char *d, size_t size, parsed *out)
{
    if (size < STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(0))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "truncated: a view descriptor is at least %zu bytes, got %zu",
                             STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(0), size);
    strided_status status = strided__ipc_check_header(op, d, view_magic,
                                                      STRIDED_VIEW_IPC_DESCRIPTOR_VERSION, "view");
    if (status != STRIDED_OK)
        return status;
    uint32_t ndim = (uint32_t)strided__get_le(d + NDIM, 4);
    if (ndim > STRIDED_MAX_NDIM)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor's fields are not valid: ndim %u is above %d", ndim,
                             STRIDED_MAX_NDIM);
    if (size != STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(ndim))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "truncated or too long: a view descriptor of %u dimensions is %zu "
                             "bytes, got %zu",
                             ndim, STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(ndim), size);
    if (strided__get_le(d + size - 8, 8) != strided__ipc_checksum(d, size - 8))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "corrupted: its checksum does not match");
    parsed p;
    memset(&p, 0, sizeof p);
    p.flags = d[FLAGS];
    bool has_dtype = p.flags & HAS_DTYPE;
    if ((p.flags & ~(unsigned)(READONLY | HAS_DTYPE | HAS_EVENT)) != 0 || d[FLAGS + 1] != 0 ||
        !strided__all_zero(d + ITEMSIZE + 4, 4) || !strided__all_zero(d + EVENT + 64, 8) ||
        (!has_dtype && !strided__all_zero(d + DTYPE, 4)) ||
        (!(p.flags & HAS_EVENT) && !strided__all_zero(d + EVENT, 64)))
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor's fields are not valid: its reserved bytes or flags "
                             "are not zero");
    int64_t shape[STRIDED_MAX_NDIM], strides[STRIDED_MAX_NDIM];
    for (uint32_t k = 0; k < ndim; k++) {
        shape[k] = (int64_t)strided__get_le(d + DIMS + 8 * (size_t)k, 8);
        strides[k] = (int64_t)strided__get_le(d + DIMS + 8 * (size_t)(ndim + k), 8);
    }
    int64_t itemsize = (int64_t)(int32_t)(uint32_t)strided__get_le(d + ITEMSIZE, 4);
    status = strided_layout_init(&p.layout, (int)ndim, shape, strides, itemsize);
    if (status == STRIDED_OK) {
        p.layout.slice_offset = (int64_t)strided__get_le(d + SLICE_OFFSET, 8);
        status = strided_layout_validate(&p.layout);
    }
    if (status != STRIDED_OK)
        return strided__refail(STRIDED_ERR_INVALID_ARGUMENT, op,
                               "the descriptor's layout is not valid: ");
    if (has_dtype) {
        p.dtype = (strided_dtype){d[DTYPE], d[DTYPE + 1],
                                  (uint16_t)strided__get_le(d + DTYPE + 2, 2)};
        int dtype_size = 0;
        if (strided_dtype_itemsize(p.dtype, &dtype_size) != STRIDED_OK || dtype_size != itemsize)
            return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                                 "the descriptor's fields are not valid: its dtype is not one of "
                                 "%lld-byte elements",
                                 (long long)itemsize);
    }
    p.origin = (int64_t)strided__get_le(d + ORIGIN, 8);
    p.device.device_type = (int32_t)(uint32_t)strided__get_le(d + DEVICE_TYPE, 4);
    p.device.device_id = (int32_t)(uint32_t)strided__get_le(d + DEVICE_ID, 4);
    *out = p;
    return STRIDED_OK;
}

/* Make stream wait on the event whose handle is at handle, opened in
 * device's context. */
static strided_status wait_event(const char *op, const unsigned char *handle, int device,
                                 void *stream)
{
    const strided__driver *cu;
    strided__context_scope scope;
    strided_status status = strided__enter_device(op, device, &cu, &scope);
    if (status != STRIDED_OK)
        return status;
    CUipcEventHandle h;
    memcpy(h.reserved, handle, sizeof h.reserved);
    CUevent event = NULL;
    status = STRIDED_CUDA_CHECK(op, cu->cuIpcOpenEventHandle(&event, h));
    if (status == STRIDED_OK) {
        status = STRIDED_CUDA_CHECK(op, cu->cuStreamWaitEvent((CUstream)stream, event, 0));
        cu->cuEventDestroy(event);
    }
    strided__context_leave(cu, &scope);
    return status;
}

strided_status strided_view_import_ipc(strided_memory_resource *mr, const void *descriptor,
                                       size_t size, void *stream, strided_view *out)
{
    const char *op = "view_import_ipc";
    if (descriptor == NULL || out == NULL)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op, "descriptor and out are required");
    const unsigned char *d = descriptor;
    parsed p;
    strided_status status = parse(op, d, size, &p);
    if (status != STRIDED_OK)
        return status;
    strided_buffer_ipc_info info;
    status = strided_buffer_ipc_describe(d + BUFFER, STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE, &info);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    /* The view's device must be what its buffer's memory exports as, so
     * that a descriptor cannot send a view of device memory as host
     * memory. */
    strided_device device = info.kind == STRIDED_MEMORY_PINNED
                                ? (strided_device){STRIDED_DEVICE_CUDA_HOST, 0}
                                : (strided_device){STRIDED_DEVICE_CUDA, info.device_id};
    if (p.device.device_type != device.device_type || p.device.device_id != device.device_id)
        return strided__fail(STRIDED_ERR_INVALID_ARGUMENT, op,
                             "the descriptor's fields are not valid: its device (%d, %d) is not "
                             "its buffer's (%d, %d)",
                             (int)p.device.device_type, (int)p.device.device_id,
                             (int)device.device_type, (int)device.device_id);
    strided_buffer *b = NULL;
    status = strided_buffer_import_ipc(mr, d + BUFFER, STRIDED_IPC_BUFFER_DESCRIPTOR_SIZE, stream,
                                       &b);
    if (status != STRIDED_OK)
        return strided__refail(status, op, "");
    /* The event is opened on the device the memory was mapped on: this
     * process's ordinal of the exporter's GPU. */
    int local = strided_buffer_memory_info(b).device_id;
    if (p.flags & HAS_EVENT)
        status = wait_event(op, d + EVENT, local < 0 ? 0 : local, stream);
    /* A view of the buffer's bytes, moved to the descriptor's origin and
     * then given its layout, which must stay inside the buffer. */
    strided_layout bytes;
    int64_t n = (int64_t)info.size;
    strided_view v;
    if (status == STRIDED_OK)
        status = strided_layout_init_dense(&bytes, 1, &n, 1, STRIDED_ORDER_C, 0, NULL);
    if (status == STRIDED_OK)
        status = strided_view_from_buffer(b, &bytes, NULL, (p.flags & READONLY) != 0, &v);
    strided_buffer_release(b);
    if (status != STRIDED_OK)
        return status;
    v.origin = p.origin;
    status = strided_view_view(&v, &p.layout, (p.flags & HAS_DTYPE) ? &p.dtype : NULL, &v);
    if (status != STRIDED_OK) {
        strided_view_release(&v);
        return strided__refail(status, op, "");
    }
    *out = v;
    return STRIDED_OK;
}
