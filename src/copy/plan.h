/*
 * copy/plan.h: what the planner (copy/plan.c) gives the other copy files
 * beyond strided/copy.h: plans through the calling thread's plan cache,
 * the offsets one side of a plan reaches, and the two plans of a copy
 * through a dense temporary. Not installed.
 */
#ifndef STRIDED_COPY_PLAN_H
#define STRIDED_COPY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "strided/copy.h"

/* strided_copy_plan_make through the calling thread's plan cache: the same
 * plan in every field it defines (the header and the first ndim axes; the
 * axes beyond ndim are not written) and the same errors, with their
 * messages, every time. A pair is looked up by both layouts' ndim,
 * itemsize, implicit_strides, shape and strides (a hash, then an exact
 * comparison); only pairs that plan successfully are kept. The cache is
 * per thread (no locks), holds 64 plans, and is freed when the thread
 * exits. When it cannot get memory it plans without keeping the plan. */
strided_status strided__copy_plan_cached(const strided_layout *dst, const strided_layout *src,
                                         strided_copy_plan *out);

/* The lowest and highest element offsets one side of plan p reaches from
 * the plan's element 0 (strides: p->dst_strides or p->src_strides),
 * checked to fit in int64 also as bytes (and so every offset between
 * them); STRIDED_ERR_OVERFLOW ("the bytes of a copy of (shape):(strides)
 * (itemsize n) do not fit in int64") otherwise. */
strided_status strided__copy_plan_reach(const strided_copy_plan *p, const int64_t *strides,
                                        int64_t *lo, int64_t *hi);
/* That failure, for byte counts of one side of p found not to fit. */
strided_status strided__copy_plan_overflow(const strided_copy_plan *p, const int64_t *strides);

/* A copy through a dense temporary: pack moves the source's distinct
 * elements into it, unpack moves them from there into the destination
 * (broadcast again where the source repeats). The temporary has the plan's
 * axes, extent 1 where the source's stride is 0, in C order, and bytes
 * bytes (the source's payload). Used by overlapping and cross-device copies
 * and by host gathers into the device. */
typedef struct strided__copy_packing {
    strided_copy_plan pack, unpack;
    size_t bytes;
} strided__copy_packing;

strided_status strided__copy_packing_make(const strided_copy_plan *p, strided__copy_packing *out);

#endif
