/*
 * strided/view.h: strided views, a buffer seen through a layout, and their
 * DLPack import and export: the consumer's side of the exchange, and the
 * producer's beyond a plain export (where __dlpack__'s dl_device and copy
 * send a view, exports by copy, the allocator of the C exchange API).
 *
 * A view is a buffer reference, an origin, a layout, an element type and a
 * device. The origin is the byte position inside the buffer from which the
 * layout's element offsets are measured (0 for views made from a buffer);
 * the element at index (0,...,0) lies at
 *
 *     buffer pointer + origin + layout.slice_offset * layout.itemsize
 *
 * Invariant: every byte an element of the layout occupies lies inside the
 * buffer, [0, size); a layout of volume 0 is always valid (it reaches no
 * byte). Every function that makes a view checks this, for owned and
 * wrapped buffers alike.
 *
 * Sub-byte element types (strided/dtype.h) are padded or packed. A padded
 * view (padded true) has 1-byte elements like any other. A packed view
 * whose elements are whole bytes (float4_e2m1fn_x2) is too. A packed view
 * whose elements are not (float4_e2m1fn, 4 bits; float6_e3m2fn, 6 bits;
 * strided_view_packed_bits says how many) has a layout of itemsize 1 whose
 * offsets count elements: element offset o lies at bit o * bits from the
 * layout's offset 0, little bit-endian, the layout keeps the packed-layout
 * rule of strided/layout.h, and its elements' bits lie inside the buffer.
 * Element (0,...,0) then starts on a byte boundary: the pointer of a view
 * is the byte where it starts. See docs/subbyte.md.
 *
 * Ownership: a view holds one reference to its buffer. strided_view_release
 * drops it; a view struct copied by assignment shares that one reference, so
 * release exactly one of the copies (or take another reference with
 * strided_buffer_retain). Imported DLPack tensors are owned by the view's
 * buffer: their deleter runs once, when the last reference to it goes.
 * Exported tensors are the caller's: a plain export holds a reference to
 * the view's buffer, an export by copy (and an allocated tensor) the only
 * reference to new memory; the deleter drops it.
 */
#ifndef STRIDED_VIEW_H
#define STRIDED_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "strided/api.h"
#include "strided/buffer.h"
#include "strided/ipc.h"
#include "strided/dlpack.h"
#include "strided/dtype.h"
#include "strided/layout.h"
#include "strided/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A view. Treat the fields as read-only. */
typedef struct strided_view {
    strided_buffer *buffer; /* one reference; NULL after release */
    int64_t origin;         /* bytes from the buffer's start to offset 0
                               (negative for a wrapped layout whose every
                               offset is positive: offset 0 lies before the
                               buffer, no element does) */
    strided_layout layout;
    bool has_dtype;         /* false: only the layout's itemsize is known */
    strided_dtype dtype;    /* when has_dtype; its size equals the itemsize */
    strided_device device;  /* DLPack device of the memory: what an export
                               names */
    int32_t home_device;    /* the CUDA device the memory belongs to, as
                               cuda.core's StridedMemoryView.device_id
                               reports it: the memory's device, the device a
                               DLPack producer named, or for device memory
                               of unknown device the current one; -1 for
                               host memory bound to no device */
    bool device_accessible; /* whether a CUDA device can reach the memory */
    bool readonly;
    bool padded; /* dtype is a sub-byte type stored one element
                               per byte; false: packed (DLPack's default) or
                               not a sub-byte type */
} strided_view;

/* The DLPack device a buffer's memory exports as: CUDA with the device id
 * for device memory, CUDA managed (0) for managed memory, CUDA host (0) for
 * pinned memory and for pageable memory a device can read, CPU (0)
 * otherwise. b must not be NULL. */
STRIDED_API strided_device strided_buffer_device(const strided_buffer *b);

/* Make a view of a buffer (origin 0). Its home_device and
 * device_accessible are the buffer's memory information (device_id and
 * device_accessible of strided_buffer_memory_info).
 *   buffer    retained by the view
 *   layout    copied
 *   dtype     the element type, or NULL for none
 *   readonly  whether writes through the view are refused by consumers
 *   out       out-parameter: the view (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL buffer, layout or out; when
 * the dtype's size differs from the layout's itemsize ("view: The dtype's
 * itemsize (2) does not match the layout's itemsize (4)."); when the layout
 * reaches a negative offset (cuda.core's "Allocation size for a layout that
 * maps elements to negative memory offsets is ambiguous. ..."); when it
 * needs more bytes than the buffer has ("Buffer size is too small for the
 * layout. Expected at least 40 bytes, got 20 bytes."); STRIDED_ERR_UNSUPPORTED
 * for a dtype strided_dtype_itemsize rejects; STRIDED_ERR_OVERFLOW. */
STRIDED_API strided_status strided_view_from_buffer(strided_buffer *buffer,
                                                    const strided_layout *layout,
                                                    const strided_dtype *dtype, bool readonly,
                                                    strided_view *out);

/* strided_view_from_buffer with the form of a sub-byte dtype: padded true
 * stores it one element per byte (ml_dtypes' arrays), false packed, as
 * strided_view_from_buffer does; for other dtypes padded is not read.
 * Returns what strided_view_from_buffer returns, and
 * STRIDED_ERR_UNSUPPORTED for a padded sub-byte type of lanes 2; for a
 * packed one of elements that are not whole bytes,
 * STRIDED_ERR_INVALID_ARGUMENT for a layout of an itemsize other than 1
 * ("view: a layout of packed float4_e2m1fn elements (4 bits each) has
 * itemsize 1, ...") and for one that breaks the packed-layout rule (the
 * message of strided_layout_check_packed); the buffer must hold the bytes
 * the elements' bits lie in (strided_layout_packed_byte_bounds). */
STRIDED_API strided_status strided_view_from_buffer_ex(strided_buffer *buffer,
                                                       const strided_layout *layout,
                                                       const strided_dtype *dtype, bool padded,
                                                       bool readonly, strided_view *out);

/* Make another view of the same buffer, with the same origin, read-only flag,
 * device, home_device and device_accessible: the new layout's offsets count
 * from the same place as the old one's. layout NULL keeps the view's layout; dtype NULL keeps its dtype (if
 * the layout's itemsize changes, a dtype must be given or the view has none).
 * out may be view itself: then the view's one reference carries over to the
 * result (none is added); otherwise out gets a new reference.
 * Returns the errors of strided_view_from_buffer (with origin 0, a layout
 * that leaves the buffer gets its messages); with another origin (views
 * derived from imported tensors) "The layout addresses bytes [lo, hi) of the
 * buffer, outside its range [0, size)." (STRIDED_ERR_INVALID_ARGUMENT);
 * STRIDED_ERR_INVALID_ARGUMENT for a NULL view or out and for a released
 * view. */
STRIDED_API strided_status strided_view_view(const strided_view *view, const strided_layout *layout,
                                             const strided_dtype *dtype, strided_view *out);

/* strided_view_view with the form of a new sub-byte dtype: padded as in
 * strided_view_from_buffer_ex. With dtype NULL, padded is not read: the
 * view's dtype keeps its form (where the itemsize stays). A view of packed
 * elements that are not whole bytes is checked as
 * strided_view_from_buffer_ex says.
 * Returns what strided_view_view returns, and the refusals of
 * strided_view_from_buffer_ex for sub-byte types. */
STRIDED_API strided_status strided_view_view_ex(const strided_view *view,
                                                const strided_layout *layout,
                                                const strided_dtype *dtype, bool padded,
                                                strided_view *out);

/* The bits of one element of a packed view whose elements are not whole
 * bytes (4 for float4_e2m1fn, 6 for the float6 types, 12 for their pairs,
 * 1, 2 or 4 for the sub-byte ints), or 0 for every other view (padded,
 * whole bytes, no dtype). view must not be NULL. */
STRIDED_API int strided_view_packed_bits(const strided_view *view);

/* The same memory as a view of the same packed sub-byte type in other
 * lanes: PyTorch's float4_e2m1fn_x2 (lanes 2, one byte a pair, shape and
 * strides counting pairs) and DLPack's float4_e2m1fn (lanes 1, 4 bits an
 * element) spell one tensor two ways, and this converts exactly:
 *   lanes 2 -> 1  every stride and the offset double; when the last axis
 *                 has stride 1 (or extent 1) its extent doubles, (4,3):(3,1)
 *                 becoming (4,6):(6,1); otherwise the pairs spread along a
 *                 new last axis of extent 2 and stride 1, (3,4):(1,3)
 *                 becoming (3,4,2):(2,6,1)
 *   lanes 1 -> 2  the reverse of the first form: the last axis needs
 *                 stride 1 and an even extent, the other axes of extent
 *                 above 1 even strides, and the offset must be even
 * The same lanes give another view of the same layout.
 *   view   borrowed
 *   lanes  1 or 2
 *   out    out-parameter: a new view with its own buffer reference
 *          (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for NULL arguments, a released view,
 * a view that is not of a packed sub-byte type ("relane: only a view of a
 * packed sub-byte type changes its lanes, ..."), lanes other than 1 or 2, a
 * layout whose elements do not pair up ("relane: (3,5):(6,1) cannot be seen
 * as pairs (lanes 2): ..."), and a lanes-1 view that would need a 65th
 * axis; STRIDED_ERR_OVERFLOW; and for a lanes-1 result the refusals of
 * strided_view_view_ex (the packed-layout rule: pairs of 6-bit elements
 * whose odd strides would start elements inside a byte). */
STRIDED_API strided_status strided_view_relane(const strided_view *view, int lanes,
                                               strided_view *out);

/* Check that elements of itemsize bytes fit a layout: the rule every view
 * maker applies to a dtype, for callers whose element type has no DLPack
 * type (a NumPy string or structured type) and so cannot pass one.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or an itemsize
 * other than the layout's ("view: The dtype's itemsize (2) does not match
 * the layout's itemsize (4)."). */
STRIDED_API strided_status strided_view_check_itemsize(const strided_layout *layout,
                                                       int64_t itemsize);

/* Drop the view's buffer reference and set buffer to NULL. A view whose
 * buffer is NULL, and NULL itself, are allowed. */
STRIDED_API void strided_view_release(strided_view *view);

/* The host address of the element at index (0,...,0); NULL for a released
 * view. view must not be NULL. */
STRIDED_API void *strided_view_ptr(const strided_view *view);

/* The address at which a device reaches that element (the buffer's device
 * address plus the same offset), or 0 when the memory is not
 * device-accessible or the view was released. view must not be NULL. */
STRIDED_API uintptr_t strided_view_device_ptr(const strided_view *view);

/* Make a view of memory described by the address of its element
 * (0,...,0) and a layout, as the array interfaces describe it. The view's
 * buffer covers exactly the bytes the layout's elements occupy (the
 * footprint, from the lowest to the highest element), and its origin puts
 * element (0,...,0) at element0, so views derived from it stay inside that
 * memory.
 *   element0  host address of element (0,...,0); may be NULL when the
 *             layout's volume is 0
 *   layout    copied
 *   dtype     the element type, or NULL for none
 *   readonly  whether writes through the view are refused by consumers
 *   device    the DLPack device of the memory, or NULL to classify it
 *             through the CUDA driver (strided_buffer_device). CPU and
 *             CUDA devices are taken at their word, with no driver call:
 *             the buffer is host memory no device reaches, or device
 *             memory of that device at its own address; for CUDA host and
 *             CUDA managed memory the driver is asked. The view's
 *             home_device and device_accessible are its buffer's memory
 *             information.
 *   release   called exactly once with (context, footprint start,
 *             footprint size) when the last reference to the view's buffer
 *             goes; never when this fails. NULL: the memory is borrowed.
 *   out       out-parameter: the view (written on success only)
 * The layout may have any slice offset: element0 is the address of
 * element (0,...,0), which sits slice_offset elements from the layout's
 * offset 0.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL layout or out, a dtype
 * whose size is not the layout's itemsize, or NULL element0 with
 * volume > 0; for a layout strided_layout_validate refuses, its status
 * ("invalid layout: ...", STRIDED_ERR_OVERFLOW for offsets beyond int64);
 * STRIDED_ERR_UNSUPPORTED for a dtype strided_dtype_itemsize rejects;
 * STRIDED_ERR_OVERFLOW when the footprint leaves the address space or
 * starts at address 0; the errors of strided_buffer_wrap. */
STRIDED_API strided_status strided_view_wrap(
    void *element0, const strided_layout *layout, const strided_dtype *dtype, bool readonly,
    const strided_device *device, strided_release_fn release, void *context, strided_view *out);

/* Import a DLPack managed tensor; the view takes it over.
 *   managed    a strided_dl_managed_tensor_versioned (versioned true) or a
 *              strided_dl_managed_tensor (versioned false); its deleter
 *              runs exactly once: on failure before this returns, otherwise
 *              when the last reference to the view's buffer goes
 *   out        out-parameter: the view, whose layout has the tensor's shape
 *              and strides (implicit when strides is NULL), data +
 *              byte_offset as its element (0,...,0), readonly from the
 *              versioned flags; its buffer's memory is classified as
 *              strided_view_wrap does for the tensor's device (CPU and
 *              CUDA without a driver call); home_device and
 *              device_accessible follow the device: -1 and false for CPU,
 *              the device id and true for CUDA, CUDA host and managed
 * Rejected, with a message naming the field (STRIDED_ERR_INVALID_ARGUMENT
 * unless noted): NULL managed (nothing is deleted); NULL out (the deleter
 * runs, as on every other failure); a versioned major version other than 1
 * (STRIDED_ERR_UNSUPPORTED; no other field is read);
 * ndim outside 0..64; NULL shape with ndim > 0; NULL strides with ndim > 0
 * in a versioned tensor of version 1.2 or later; a negative extent; a dtype
 * strided_dtype_itemsize rejects (STRIDED_ERR_UNSUPPORTED); a device type
 * other than CPU, CUDA, CUDA host and CUDA managed
 * (STRIDED_ERR_UNSUPPORTED), a negative device id, or a CPU device id other
 * than 0; NULL data with volume > 0; a byte_offset above INT64_MAX, one that
 * makes data + byte_offset overflow, or one that is not a multiple of the
 * itemsize; an extent product or element offset beyond int64
 * (STRIDED_ERR_OVERFLOW). */
STRIDED_API strided_status strided_view_import_dlpack(void *managed, bool versioned,
                                                      strided_view *out);

/* What a DLPack consumer does before it calls a producer's __dlpack__,
 * decided from what the producer's __dlpack_device__ named and the stream
 * the consumer was given. */
typedef struct strided_dlpack_request {
    strided_device device; /* the device the producer named: the tensor must
                              be there (strided_view_import_dlpack_checked) */
    bool pass_stream;      /* hand the consumer's stream to __dlpack__ as
                              stream=<value>; false: stream=None */
} strided_dlpack_request;

/* Decide a DLPack request by the DLPack rules as cuda.core applies them.
 *   device_type, device_id  what __dlpack_device__ returned
 *   stream_given            whether the consumer was given a stream (its
 *                           stream_ptr is not None)
 *   stream                  the consumer's stream when given: -1 (order
 *                           nothing) or a stream handle; a value beyond
 *                           int64 is passed clamped to the int64 range
 *   out                     out-parameter (written on success only)
 * CPU and CUDA tensors need a stream: none given is refused. The stream is
 * passed on unless it is 0 (no stream: stream=None) or -1 for a CPU device
 * (nothing to order). CUDA host and managed memory take stream=None too.
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out; STRIDED_ERR_PROTOCOL
 * for a CPU device id other than 0 or a CUDA device id outside
 * 0..INT32_MAX ("__dlpack_device__() returned device id 1 for device type
 * 1; ..."); STRIDED_ERR_UNSUPPORTED for a device type other than CPU, CUDA,
 * CUDA host and CUDA managed ("device not supported") and for a CPU or CUDA
 * device without a stream ("stream=None is ambiguous with view()", followed
 * for CPU by "; for host memory pass stream_ptr=-1"). */
STRIDED_API strided_status strided_dlpack_request_make(int64_t device_type, int64_t device_id,
                                                       bool stream_given, int64_t stream,
                                                       strided_dlpack_request *out);

/* strided_view_import_dlpack, then the check that the tensor lies where the
 * producer said: the same device type, and for CUDA the same device id (the
 * ids of CUDA host and managed memory name no device). A tensor elsewhere
 * is released (its deleter runs) and refused with
 * STRIDED_ERR_INVALID_ARGUMENT ("__dlpack_device__() returned (2, 0) but
 * the tensor's dl_tensor.device is (2, 1)").
 *   request  the request made before the call; NULL checks nothing
 * Returns what strided_view_import_dlpack returns, and the above. */
STRIDED_API strided_status strided_view_import_dlpack_checked(void *managed, bool versioned,
                                                              const strided_dlpack_request *request,
                                                              strided_view *out);

/* Import a DLTensor that stays its producer's (the DLPack C exchange API's
 * dltensor_from_py_object_no_sync): the rules of strided_view_import_dlpack
 * for its fields, and of strided_view_import_dlpack_checked for request.
 * Its shape and strides are read during the call only; NULL strides with
 * ndim > 0 mean C order. The memory stays the producer's: the view's buffer
 * calls release(context, ...) exactly once, when its last reference goes,
 * and on failure before this returns (with NULL, 0), so that the caller
 * hands over what keeps the memory alive either way.
 *   tensor    the tensor; borrowed
 *   readonly  whether the memory may not be written (a DLTensor has no
 *             flags: the producer says it some other way)
 *   request   the request made for the import, or NULL to check nothing
 *   release   called as above; NULL: nothing to release
 *   out       out-parameter: the view (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL tensor or out, and what
 * strided_view_import_dlpack_checked returns for the tensor's fields. */
STRIDED_API strided_status strided_view_import_dl_tensor(
    const strided_dl_tensor *tensor, bool readonly, const strided_dlpack_request *request,
    strided_release_fn release, void *context, strided_view *out);

/* Export a view as a versioned DLPack tensor (version 1.3) made in one
 * allocation: the struct, shape and strides (always explicit when ndim > 0;
 * both NULL for ndim 0), data = strided_view_ptr (NULL when the volume is
 * 0), byte_offset 0, flags READ_ONLY when the view is read-only, and the
 * view's device with device_id 0 for every type but CUDA. The tensor
 * holds a reference to the view's buffer; its deleter frees the allocation
 * and drops that reference.
 *   out  out-parameter: the tensor, owned by the caller (call its deleter)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL view or out, a view
 * without a buffer (released) or without a dtype ("Cannot export
 * StridedMemoryView via DLPack without dtype information; create the view
 * with dtype specified."), STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_view_export_dlpack(const strided_view *view,
                                                      strided_dl_managed_tensor_versioned **out);

/* Check the stream a DLPack consumer hands the producer (the stream
 * argument of __dlpack__) for an export of this view. No stream (given
 * false) is always valid. For views of host memory (DLPack CPU and CUDA
 * host devices), which have nothing to order, only -1 ("no
 * synchronisation") is; for CUDA device and managed memory, -1, 1 (the
 * legacy default stream), 2 (the per-thread default stream) and any other
 * positive stream handle are; 0 is refused everywhere, being ambiguous
 * between the legacy and the per-thread default stream.
 * Returns STRIDED_OK; STRIDED_ERR_INVALID_ARGUMENT for a NULL view or a
 * stream the rules refuse ("stream=5 is not valid for a view of host
 * memory: a host producer takes stream=None or -1"). */
STRIDED_API strided_status strided_view_check_dlpack_stream(const strided_view *view, bool given,
                                                            int64_t stream);

/* The same as a legacy (unversioned) managed tensor, for consumers that ask
 * for no version; read-only views cannot say so in this form.
 * Returns what strided_view_export_dlpack returns. */
STRIDED_API strided_status strided_view_export_dlpack_legacy(const strided_view *view,
                                                             strided_dl_managed_tensor **out);

/* The DLPack device of a buffer's memory as cuda.core's Buffer reports it,
 * by what can reach the memory: managed memory a device reaches is CUDA
 * managed (13, 0); memory only a device reaches is CUDA (2, the memory's
 * device, 0 when it names none); memory both reach is CUDA host (3, 0);
 * host-only memory is CPU (1, 0).
 *   out  out-parameter (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL b or out;
 * STRIDED_ERR_UNSUPPORTED for memory neither reaches ("buffer is neither
 * device-accessible nor host-accessible"). */
STRIDED_API strided_status strided_buffer_dlpack_device(const strided_buffer *b,
                                                        strided_device *out);

/* Export a buffer's bytes as cuda.core exports a Buffer: a versioned
 * DLPack tensor (version 1.3, flags 0: writable) of ndim 1, shape (size,),
 * strides (1,), dtype int8, data the buffer's address (also when the size
 * is 0), byte_offset 0, on strided_buffer_dlpack_device's device, made in
 * one allocation. The tensor holds a reference to b; its deleter frees the
 * allocation and drops that reference.
 *   out  out-parameter: the tensor, owned by the caller (call its deleter)
 * Returns the errors of strided_buffer_dlpack_device (checked first),
 * STRIDED_ERR_INVALID_ARGUMENT for a NULL out, STRIDED_ERR_OUT_OF_MEMORY. */
STRIDED_API strided_status strided_buffer_export_dlpack(strided_buffer *b,
                                                        strided_dl_managed_tensor_versioned **out);

/* The same as a legacy (unversioned) managed tensor, for consumers that ask
 * for no version. Returns what strided_buffer_export_dlpack returns. */
STRIDED_API strided_status strided_buffer_export_dlpack_legacy(strided_buffer *b,
                                                               strided_dl_managed_tensor **out);

/* Whether a DLPack export may, must or must not copy: the copy argument of
 * __dlpack__ (None, True, False). */
typedef enum strided_dlpack_copy {
    STRIDED_DLPACK_COPY_IF_NEEDED = 0, /* None: only when the device asked
                                          for cannot be reached otherwise */
    STRIDED_DLPACK_COPY_ALWAYS = 1,    /* True */
    STRIDED_DLPACK_COPY_NEVER = 2      /* False: refuse when a copy is
                                          needed */
} strided_dlpack_copy;

/* How a view is exported through DLPack, decided from the arguments of
 * __dlpack__ (strided_dlpack_export_request_make). */
typedef struct strided_dlpack_export_request {
    strided_device device; /* the device the tensor names (device_id 0 for
                              every type but CUDA) */
    bool copy;             /* the tensor holds a copy of the view, dense in C
                              order, in new memory of the kind device names */
    bool host_copy;        /* copy: both memories are host-accessible; the
                              copy runs on the host and orders nothing */
    bool blocking;         /* copy: complete when the export returns */
    void *stream;          /* copy: the CUstream on which the new memory is
                              allocated and the copy queued (NULL: the legacy
                              default stream) */
} strided_dlpack_export_request;

/* Decide how to export a view through DLPack, from the arguments of
 * __dlpack__ (the array API's rules).
 *   view                    the view; borrowed
 *   stream_given, stream    the stream argument, when not None
 *   device_given            whether dl_device was given (not None)
 *   device_type, device_id  dl_device, when given
 *   copy                    the copy argument
 *   out                     out-parameter (written on success only)
 * A view exports to its own device, which __dlpack_device__ reports (the
 * view's device, with device_id 0 for every type but CUDA), or, when
 * dl_device asks for it, to the CPU (1, 0): memory the host reaches
 * (pageable, pinned, managed) goes there as it is, device memory by a
 * copy into host memory. That is the one export that needs a copy: copy
 * False refuses it, and never refuses an export to the view's own device.
 * copy True always copies, into new memory of the kind the device names
 * (strided_dlpack_tensor_alloc's). A copy that involves device memory is
 * queued on the consumer's stream when it named one other than -1, and is
 * blocking when it named none (None or -1) and whenever it goes to the
 * CPU; a copy between host-accessible memory runs on the host, blocking.
 * Checked in this order: STRIDED_ERR_INVALID_ARGUMENT for a NULL view or
 * out, a released view and a copy value outside the enum; the streams
 * strided_view_check_dlpack_stream refuses (its statuses and messages);
 * STRIDED_ERR_UNSUPPORTED for any other dl_device ("dl_device (2, 1) is not
 * supported for a view on device (2, 0): a view exports to its own device
 * or to the CPU (1, 0)") and for copy False when a copy is needed
 * ("copy=False, but exporting a view of device memory on (2, 0) to the CPU
 * (1, 0) needs a copy"). */
STRIDED_API strided_status strided_dlpack_export_request_make(
    const strided_view *view, bool stream_given, int64_t stream, bool device_given,
    int64_t device_type, int64_t device_id, strided_dlpack_copy copy,
    strided_dlpack_export_request *out);

/* Describe a view in a DLTensor the caller provides, without allocating or
 * retaining anything (the exchange API's dltensor_from_py_object_no_sync):
 * the fields strided_view_export_dlpack gives, with shape and strides
 * pointing into view->layout. Valid only while the view is alive and
 * unchanged.
 *   out  out-parameter (written on success only)
 * Returns the refusals of strided_view_export_dlpack (a NULL view or out,
 * a released view, a view without a dtype). */
STRIDED_API strided_status strided_view_export_dl_tensor(const strided_view *view,
                                                         strided_dl_tensor *out);

/* Make a managed tensor of new memory for a DLPack prototype: the tensor
 * is dense in C order (strides explicit when ndim > 0; for a packed
 * sub-byte dtype whose elements are not whole bytes, rows rounded up to
 * whole bytes, as the packed-layout rule asks), of the prototype's
 * dtype, ndim and shape, version 1.3, flags 0, and its memory is of the
 * kind the prototype's device names: host memory aligned to 256 bytes for
 * CPU, device memory from the device's current memory pool for CUDA
 * (allocated on the legacy default stream, and freed there), pinned memory
 * for CUDA host, managed memory (with that device's context current) for
 * CUDA managed. Its device is the prototype's, with device_id 0 for every
 * type but CUDA. The prototype's other fields are not read. The memory is
 * not initialised.
 *   prototype  borrowed
 *   out        out-parameter: the tensor, owned by the caller; its deleter
 *              frees the memory (written on success only)
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL prototype or out, the
 * refusals of strided_layout_init_dense for ndim and shape (a negative
 * extent, ...), a negative device id or a CPU device id other than 0;
 * STRIDED_ERR_UNSUPPORTED for a dtype strided_dtype_itemsize refuses and a
 * device type other than CPU, CUDA, CUDA host and CUDA managed;
 * STRIDED_ERR_OVERFLOW for a size beyond int64; the errors of the memory
 * resources and of strided_buffer_alloc (STRIDED_ERR_NO_CUDA_DRIVER for a
 * CUDA device without a driver, STRIDED_ERR_INVALID_ARGUMENT for a device
 * that does not exist, STRIDED_ERR_OUT_OF_MEMORY, STRIDED_ERR_CUDA). */
STRIDED_API strided_status strided_dlpack_tensor_alloc(const strided_dl_tensor *prototype,
                                                       strided_dl_managed_tensor_versioned **out);

/* strided_dlpack_tensor_alloc as the exchange API's
 * managed_tensor_allocator (strided_dlpack_allocator_fn): 0 on success;
 * on failure -1, *out untouched, and set_error(error_ctx, kind, reason)
 * called once (when not NULL) with the reason of the message and, for
 * kind, the exception the Python binding raises at the DLPack boundary:
 * "BufferError" for an invalid or unsupported prototype and for overflow,
 * "MemoryError" when memory runs out, "RuntimeError" for driver errors.
 * Needs no Python and never touches Python state itself. */
STRIDED_API int strided_dlpack_exchange_alloc(strided_dl_tensor *prototype,
                                              strided_dl_managed_tensor_versioned **out,
                                              void *error_ctx,
                                              strided_dlpack_set_error_fn set_error);

/* Views across processes. A view descriptor carries what a process on the
 * same machine needs to use the same view: its buffer's IPC descriptor
 * (strided/ipc.h, with the buffer's identity checks), the view's origin,
 * layout, dtype, device and read-only flag, and optionally the handle of
 * an interprocess CUDA event for the consumer's stream to wait on, so that
 * it orders its work after the producer's without a host synchronization.
 * The format is versioned and documented byte by byte in docs/ipc.md, so a
 * process in any language can read it; its size is
 * STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(ndim). A view of a buffer of size 0
 * cannot be shared (it has no memory to map).
 *
 * Ownership and lifetimes: those of strided/ipc.h. The exporter keeps the
 * view's buffer (and an event it sends) alive while the consumer uses them;
 * the imported view holds the one reference to its imported buffer, whose
 * mapping goes when the view and every view made from it are released. */

#define STRIDED_VIEW_IPC_DESCRIPTOR_VERSION 1
#define STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(ndim) (328 + 16 * (size_t)(ndim))

/* An interprocess CUDA event recorded on a producer's stream
 * (CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING), to travel with a view
 * descriptor. */
typedef struct strided_ipc_event strided_ipc_event;

/* Create an interprocess event in device's primary context and record it
 * on stream (NULL: the legacy default stream).
 *   out  out-parameter: the event, which the caller releases with
 *        strided_ipc_event_release once every consumer has imported the
 *        descriptors that carry it
 * Returns STRIDED_ERR_INVALID_ARGUMENT for a NULL out (first) and a device
 * that does not exist; STRIDED_ERR_NO_CUDA_DRIVER; STRIDED_ERR_CUDA for a
 * failing driver call; STRIDED_ERR_OUT_OF_MEMORY. Nothing is left on
 * failure. */
STRIDED_API strided_status strided_ipc_event_record(int device, void *stream,
                                                    strided_ipc_event **out);

/* Destroy an event of strided_ipc_event_record. NULL is allowed. */
STRIDED_API void strided_ipc_event_release(strided_ipc_event *event);

/* Write view's descriptor for another process.
 *   view      borrowed
 *   event     NULL, or an event (borrowed) whose handle travels with the
 *             descriptor: the importer's stream waits on it
 *   out       out-parameter: room for capacity bytes (may be NULL when
 *             capacity is 0)
 *   out_size  out-parameter: the descriptor's size,
 *             STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(view->layout.ndim), written
 *             also when capacity is too small (then nothing else is)
 * Returns, in the order of the checks, STRIDED_ERR_INVALID_ARGUMENT for a
 * NULL view or out_size, a released view, and a capacity below the size
 * ("view_export_ipc: the descriptor needs 360 bytes, room for 100"); the
 * errors of strided_buffer_export_ipc under this operation's name. */
STRIDED_API strided_status strided_view_export_ipc(const strided_view *view,
                                                   const strided_ipc_event *event, void *out,
                                                   size_t capacity, size_t *out_size);

/* Import a view descriptor another process wrote: the buffer it names
 * (strided_buffer_import_ipc) and the view over it. When the descriptor
 * carries an event, stream waits on it (cuIpcOpenEventHandle,
 * cuStreamWaitEvent) before this returns: work queued on stream afterwards
 * runs after the producer's.
 *   mr          as strided_buffer_import_ipc (the pool's mapped resource;
 *               may be NULL for legacy sharing)
 *   descriptor  size bytes, borrowed for the call
 *   stream      the consumer's stream (NULL: the legacy default stream):
 *               waits on the event, and is the buffer's deallocation
 *               stream for pool sharing
 *   out         out-parameter: the view, holding the only reference to its
 *               new buffer
 * Returns STRIDED_ERR_INVALID_ARGUMENT, in this order, for a NULL
 * descriptor or out; a size below STRIDED_VIEW_IPC_DESCRIPTOR_SIZE(0) or
 * one that is not the size of its ndim ("truncated or too long: a view
 * descriptor of 2 dimensions is 360 bytes, got 300"); a descriptor that is
 * not one, of another version, corrupted (its checksum), or whose fields
 * are invalid (flags, ndim above 64, a layout strided_layout_validate
 * refuses, a device that is not the buffer's); then the errors of
 * strided_buffer_import_ipc, of the event (STRIDED_ERR_CUDA) and of
 * strided_view_view (a layout that leaves the buffer). Nothing is mapped
 * and out is untouched on failure. */
STRIDED_API strided_status strided_view_import_ipc(strided_memory_resource *mr,
                                                   const void *descriptor, size_t size,
                                                   void *stream, strided_view *out);

#ifdef __cplusplus
}
#endif

#endif
