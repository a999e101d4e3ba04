/*
 * view/view_internal.h: what the view layer's files share. Not installed.
 */
#ifndef STRIDED_VIEW_INTERNAL_H
#define STRIDED_VIEW_INTERNAL_H

#include "base/base.h"
#include "strided/view.h"

/* Re-issue the calling thread's last failure under op, its reason after
 * prefix ("" for none), so that a failure of a function a module calls
 * reads as that module's. Returns status. */
strided_status strided__refail(strided_status status, const char *op, const char *prefix);

/* strided_view_wrap, failing under the operation name op (the import that
 * wraps a producer's memory names itself), of a layout a constructor made
 * (it keeps the layout invariant) with a dtype of the layout's itemsize or
 * none: the imports, which build both themselves, skip checking them
 * again.
 * Assumes: layout and out are not NULL. */
strided_status strided__view_wrap_made(const char *op, void *element0,
                                       const strided_layout *layout, const strided_dtype *dtype,
                                       bool readonly, const strided_device *device,
                                       strided_release_fn release, void *context,
                                       strided_view *out);

#endif
