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

/* The copy of a C-contiguous source of ndim axes (shape) into its
 * permutation: destination axis k is source axis perm[k], the destination
 * C-contiguous with its innermost axis padded by pad elements, the source
 * axes in flip[] reversed. A transpose where the source's innermost axis
 * (unreversed) is not the destination's, else a gather. */
static inline strided_copy_plan permuted_plan(int itemsize, int ndim, const int64_t *shape,
                                              const int *perm, const int *flip, int nflip, int pad)
{
    int64_t dshape[STRIDED_MAX_NDIM], sstrides[STRIDED_MAX_NDIM];
    int64_t dst[STRIDED_MAX_NDIM], src[STRIDED_MAX_NDIM];
    int unit = -1;
    int64_t stride = 1;

    for (int k = ndim - 1; k >= 0; k--) {
        sstrides[k] = stride;
        stride *= shape[k];
    }
    for (int i = 0; i < nflip; i++)
        sstrides[flip[i]] = -sstrides[flip[i]];
    stride = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        dshape[k] = shape[perm[k]];
        dst[k] = stride;
        stride *= dshape[k] + (k == ndim - 1 ? pad : 0);
        src[k] = sstrides[perm[k]];
        if (src[k] == 1 && dshape[k] > 1)
            unit = k;
    }
    strided_copy_kernel kind = unit >= 0 && unit != ndim - 1 ? STRIDED_COPY_TRANSPOSE
                                                             : STRIDED_COPY_GATHER;
    return plan_of(kind, itemsize, ndim, dshape, dst, src,
                   kind == STRIDED_COPY_TRANSPOSE ? unit : -1);
}

#endif
