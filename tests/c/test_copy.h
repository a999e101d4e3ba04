/*
 * test_copy.h: copy plans made by hand, for the tests of the copy
 * executors (strided_copy_plan, include/strided/copy.h).
 *
 * A test states the plan it means instead of asking the planner for it, so
 * that it stands without the planner and can reach plans the planner never
 * makes (a kind whose property does not hold, axes of extent 1, 24 axes).
 */
#ifndef STRIDED_TEST_COPY_H
#define STRIDED_TEST_COPY_H

#include <stdint.h>
#include <string.h>

#include "strided/copy.h"
#include "test_util.h"

/* A plan of kind, itemsize and ndim axes (outermost first) of the given
 * extents and destination and source strides (elements); unit_axis is the
 * source's unit-stride axis of a transpose (-1 otherwise). */
static inline strided_copy_plan plan_of(strided_copy_kernel kind, int itemsize, int ndim,
                                        const int64_t *shape, const int64_t *dst_strides,
                                        const int64_t *src_strides, int unit_axis)
{
    strided_copy_plan p;

    memset(&p, 0, sizeof p);
    p.kernel = kind;
    p.ndim = ndim;
    p.itemsize = itemsize;
    p.src_unit_axis = unit_axis;
    p.volume = 1;
    for (int k = 0; k < ndim; k++) {
        p.shape[k] = shape[k];
        p.dst_strides[k] = dst_strides[k];
        p.src_strides[k] = src_strides[k];
        p.volume *= shape[k];
    }
    return p;
}

/* PLAN(STRIDED_COPY_TRANSPOSE, 4, (65, 127), (127, 1), (1, 65), 0): the
 * parenthesised lists are the shape and the two sides' strides. */
#define PLAN(kind, itemsize, shape, dst, src, unit_axis) \
    plan_of((kind), (itemsize), N64 shape, I64 shape, I64 dst, I64 src, (unit_axis))

#endif
