/*
 * layout/layout_internal.h: what the layout layer shares with the layers
 * above it. Not installed.
 */
#ifndef STRIDED_LAYOUT_INTERNAL_H
#define STRIDED_LAYOUT_INTERNAL_H

#include "strided/layout.h"

/* *out = *src, copying only the axes src has: a whole strided_layout is
 * over 1 KiB, most of it unused, and the imports copy one per call. The
 * entries of out past src->ndim are left as they were. */
void strided__layout_assign(strided_layout *out, const strided_layout *src);

#endif
