/*
 * view/view_internal.h: what the view layer's files share. Not installed.
 */
#ifndef STRIDED_VIEW_INTERNAL_H
#define STRIDED_VIEW_INTERNAL_H

#include "base/base.h"
#include "strided/view.h"

/* *out = *src, copying only the axes of src's layout
 * (strided__layout_assign): the imports hand a view on by value. */
void strided__view_assign(strided_view *out, const strided_view *src);

/* Re-issue the calling thread's last failure under op, its reason after
 * prefix ("" for none), so that a failure of a function a module calls
 * reads as that module's. Returns status. */
strided_status strided__refail(strided_status status, const char *op, const char *prefix);

/* strided_view_wrap, failing under the operation name op (the import that
 * wraps a producer's memory names itself), of a layout a constructor made
 * (it keeps the layout invariant) with a dtype of the layout's itemsize
 * (itemsize 1 for packed elements that are not whole bytes), of the form
 * padded says, or none: the imports, which build both themselves, skip
 * checking them again. The packed-layout rule is checked here, with the
 * footprint.
 * Assumes: layout and out are not NULL. */
strided_status strided__view_wrap_made(const char *op, void *element0, const strided_layout *layout,
                                       const strided_dtype *dtype, bool padded, bool readonly,
                                       const strided_device *device, strided_release_fn release,
                                       void *context, strided_view *out);

/* The copy an export by copy makes: every element of src into dst (new
 * memory, dense in C order, of src's shape and dtype), as request says
 * (host_copy, blocking, stream). The view layer cannot copy: the caller of
 * strided__view_export_dlpack_ex hands it the copy engine
 * (strided_view_export_dlpack_as of strided/copy.h passes strided_view_copy_ex). Returns STRIDED_OK, or a
 * failure with the thread's message set. */
typedef strided_status (*strided__dlpack_copy_fn)(void *context, const strided_view *dst,
                                                  const strided_view *src,
                                                  const strided_dlpack_export_request *request);

/* Export a view as a request says, as a versioned tensor (versioned true:
 * out is a strided_dl_managed_tensor_versioned **) or a legacy one (a
 * strided_dl_managed_tensor **).
 * Without a copy it is strided_view_export_dlpack (or _legacy) of the view,
 * naming request->device. With one: new memory of the kind request->device
 * names (as strided_dlpack_tensor_alloc; managed memory belongs to the
 * view's home device, or device 0), allocated on request->stream, which
 * also becomes the stream it is freed on; a view of it dense in C order
 * with the view's dtype; copy(context, that view, view, request); and that
 * view's export. The tensor then holds the only reference to the new
 * memory (its deleter frees it), is writable, and a versioned one's flags
 * are STRIDED_DLPACK_FLAG_IS_COPIED (and IS_SUBBYTE_TYPE_PADDED for a
 * padded view, whose copy is padded too; a packed one's is packed, in C
 * order with its rows rounded up to whole bytes where they are not).
 *   request  from strided_dlpack_export_request_make for this view
 *   copy     the copy engine; required when request->copy
 *   context  passed to copy
 *   out      out-parameter: the tensor, owned by the caller (written on
 *            success only)
 * Returns first what strided_view_export_dlpack returns for the view (its
 * refusals), then STRIDED_ERR_INVALID_ARGUMENT for a NULL request, or a
 * NULL copy when request->copy; the errors of the allocation (as
 * strided_dlpack_tensor_alloc) and what copy returns, after which nothing
 * is left allocated. */
strided_status strided__view_export_dlpack_ex(const strided_view *view,
                                              const strided_dlpack_export_request *request,
                                              bool versioned, strided__dlpack_copy_fn copy,
                                              void *context, void **out);

#endif
