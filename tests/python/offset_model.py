"""A reference model of strided layouts, independent of the library.

A layout (shape, strides, slice_offset, itemsize) addresses, for every
multi-index i, the element offset ``slice_offset + sum(i[k] * strides[k])``;
times itemsize that is a byte offset. The functions here compute those offsets
and the properties defined from them (bounds, uniqueness, contiguity, merges,
coalescing) by brute force or by the plain rules stated with each function
(the rules docs/layout.md and include/strided/layout.h document). Scalars
are Python ints, so the model is exact at any magnitude; offset arrays use
NumPy int64 when every value fits comfortably and Python ints otherwise.
"""

import math

import numpy as np

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def fits_int64(x):
    return INT64_MIN <= x <= INT64_MAX


def fits_bytes(x, itemsize):
    """Whether x elements, as bytes, and their negation fit in int64: the
    layout invariant asks it of every stride, the slice offset and every
    element offset."""
    return abs(x) * itemsize <= INT64_MAX


def volume(shape):
    return math.prod(shape)


def c_strides(shape):
    """Dense C strides in elements; all 0 when the volume is 0, as cuda.core
    materializes implicit strides."""
    if volume(shape) == 0:
        return (0,) * len(shape)
    strides, run = [], 1
    for n in reversed(shape):
        strides.append(run)
        run *= n
    return tuple(reversed(strides))


def offset_bounds(shape, strides, start=0):
    """(min, max) offset reached, start included; (0, -1) when empty."""
    if volume(shape) == 0:
        return (0, -1)
    lo = start + sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = start + sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return (lo, hi)


def offsets(shape, strides, start=0):
    """The offset of every element, as an array of the layout's shape."""
    lo, hi = offset_bounds(shape, strides, start)
    small = -(2**62) < lo and hi < 2**62 and all(abs(s) < 2**62 for s in strides)
    dtype = np.int64 if small else object
    out = np.full(tuple(shape), start, dtype=dtype)
    ndim = len(shape)
    for k, (n, s) in enumerate(zip(shape, strides)):
        step = np.arange(n, dtype=np.int64).astype(dtype) * s
        out = out + step.reshape((1,) * k + (n,) + (1,) * (ndim - k - 1))
    return out


def is_unique(shape, strides):
    """True when no two elements share an offset (brute force)."""
    offs = offsets(shape, strides).ravel()
    return len(set(offs.tolist())) == offs.size


def stride_order(shape, strides):
    """Axes by descending |stride|, then descending extent, then axis: a
    total order, so the result is deterministic (cuda.core's stride_order)."""
    return tuple(sorted(range(len(shape)), key=lambda a: (-abs(strides[a]), -shape[a], a)))


def is_contiguous_c(shape, strides):
    """NumPy's relaxed C_CONTIGUOUS, in element strides: extent-1 axes are
    skipped, and every other stride is the product of the extents after it."""
    if volume(shape) == 0:
        return True
    run = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if s != run:
            return False
        run *= n
    return True


def is_contiguous_f(shape, strides):
    return is_contiguous_c(shape[::-1], strides[::-1])


def flatten(shape, strides, allowed=2**64 - 2):
    """strided's merge rule for flatten: returns (shape, strides, mask, needed).

    Bit j of allowed lets axis j join the group on its left. An extent-1 axis
    always joins; a non-unit axis joins when the group has no non-unit member
    yet, or when the group's stride equals strides[j] * shape[j]. A group's
    stride is that of its innermost non-unit member (of its innermost member
    when all are unit). mask has bit j set for every axis that joined.
    needed lists the products strides[j] * shape[j] the rule had to compute.
    A 0-d layout becomes shape (1,) strides (1,).
    """
    if not shape:
        return (1,), (1,), 0, []
    groups = []  # [extent, stride, has_non_unit]
    mask, needed = 0, []
    for j, (n, s) in enumerate(zip(shape, strides)):
        if j > 0 and allowed >> j & 1:
            g = groups[-1]
            if n == 1:
                if not g[2]:
                    g[1] = s
                mask |= 1 << j
                continue
            if not g[2]:
                g[0], g[1], g[2] = g[0] * n, s, True
                mask |= 1 << j
                continue
            needed.append(s * n)
            if g[1] == s * n:
                g[0], g[1] = g[0] * n, s
                mask |= 1 << j
                continue
        groups.append([n, s, n != 1])
    return tuple(g[0] for g in groups), tuple(g[1] for g in groups), mask, needed


def coalesce(shape, strides):
    """CuTe-style coalesce: drop extent-1 axes, then merge neighbours with
    strides[i] == strides[i+1] * shape[i+1]. Empty -> (0,):(0,)."""
    if volume(shape) == 0:
        return (0,), (0,)
    out = []
    for n, s in zip(shape, strides):
        if n == 1:
            continue
        if out and out[-1][1] == s * n:
            out[-1] = [out[-1][0] * n, s]
        else:
            out.append([n, s])
    return tuple(n for n, _ in out), tuple(s for _, s in out)


def layout_strides(layout):
    """The layout's element strides, C strides when they are implicit."""
    strides = layout.strides
    return c_strides(layout.shape) if strides is None else strides


def layout_byte_offsets(layout):
    """The byte offset of every element of a StridedLayout."""
    strides = [s * layout.itemsize for s in layout_strides(layout)]
    return offsets(layout.shape, strides, layout.slice_offset * layout.itemsize)


def data_ptr(a):
    return a.__array_interface__["data"][0]


def array_byte_offsets(a, base):
    """The byte offset of every element of NumPy array a, from address base."""
    return offsets(a.shape, a.strides, data_ptr(a) - base)
