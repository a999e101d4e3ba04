/*
 * copy/export.c: DLPack exports that copy (strided_view_export_dlpack_as).
 * The view layer decides where an export goes and makes the new memory;
 * the copy itself needs this layer's engine, which is handed down to it.
 */
#include "strided/copy.h"
#include "view/view_internal.h"

/* The copy of an export by copy, as the request says: on the host when
 * both memories are host-accessible, else on the request's stream,
 * blocking when asked. */
static strided_status export_copy(void *context, const strided_view *dst, const strided_view *src,
                                  const strided_dlpack_export_request *request)
{
    (void)context;
    unsigned flags = request->host_copy  ? STRIDED_COPY_NO_STREAM | STRIDED_COPY_BLOCKING
                     : request->blocking ? STRIDED_COPY_BLOCKING
                                         : STRIDED_COPY_NONBLOCKING;
    return strided_view_copy_ex(dst, src, request->stream, flags, NULL);
}

strided_status strided_view_export_dlpack_as(const strided_view *view,
                                             const strided_dlpack_export_request *request,
                                             bool versioned, void **out)
{
    return strided__view_export_dlpack_ex(view, request, versioned, export_copy, NULL, out);
}
