"""NumPy views paired with StridedLayouts: builders, Hypothesis strategies and
the comparison of a layout with a NumPy view.

A ViewSpec is plain data (so failing cases can be written as @example): a
shape, element strides, an itemsize, whether the layout has implicit strides,
and an optional basic index applied to both the array and the layout. build()
turns it into a NumPy array made with as_strided over a fresh byte buffer
(with room before the first byte for negative strides), the matching layout
StridedLayout(a.shape, a.strides, a.itemsize, divide_strides=True), and the
address the layout's offsets are relative to (the unsliced array's pointer).
"""

import math
from typing import NamedTuple, Optional

import numpy as np
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import offset_model as om
from strided import StridedLayout

ITEMSIZES = (1, 2, 4, 8, 3, 5)


def dtype_of(itemsize):
    return np.dtype({1: "u1", 2: "u2", 4: "u4", 8: "u8"}.get(itemsize, f"V{itemsize}"))


class ViewSpec(NamedTuple):
    shape: tuple
    strides: tuple  # elements; for implicit specs, the C strides
    itemsize: int
    implicit: bool = False
    key: Optional[object] = None  # basic index applied to array and layout


def make_array(shape, strides, itemsize):
    """A read-only array of shape with element strides, over its own buffer."""
    lo, hi = om.offset_bounds(shape, strides)
    lo, hi = min(lo, 0), max(hi, 0)
    buf = np.zeros((hi - lo + 1) * itemsize, np.uint8)
    start = -lo * itemsize
    first = buf[start : start + itemsize].view(dtype_of(itemsize))
    return as_strided(first, shape=shape, strides=[s * itemsize for s in strides], writeable=False)


def index_view(a, key):
    """a[key] as an array view, also when key indexes every axis with an int
    (where NumPy would return a scalar)."""
    return a[(*key, ...) if isinstance(key, tuple) else (key, ...)]


def build_array(spec):
    """(array, base): the spec's NumPy view and the unsliced array's address."""
    a, _, base = build(spec, layout=False)
    return a, base


def build(spec, layout=True):
    """(array, layout, base) for a spec; layout is None when not asked for."""
    full = make_array(spec.shape, spec.strides, spec.itemsize)
    made = None
    if layout and spec.implicit:
        made = StridedLayout(spec.shape, None, spec.itemsize)
    elif layout:
        made = StridedLayout(full.shape, full.strides, full.itemsize, divide_strides=True)
    if spec.key is None:
        return full, made, om.data_ptr(full)
    sliced = None if made is None else made[spec.key]
    return index_view(full, spec.key), sliced, om.data_ptr(full)


def assert_same_elements(layout, b, base):
    """layout has b's shape, b's strides on axes of extent > 1, and the same
    byte offset for every element, layout offsets counted from base."""
    assert layout.shape == b.shape
    assert layout.volume == b.size
    if b.size:
        got = [s * layout.itemsize for s in om.layout_strides(layout)]
        assert [s for n, s in zip(b.shape, got) if n != 1] == [
            s for n, s in zip(b.shape, b.strides) if n != 1
        ]
    np.testing.assert_array_equal(om.layout_byte_offsets(layout), om.array_byte_offsets(b, base))


# ---- strategies ------------------------------------------------------------

extents = st.sampled_from((1, 2, 3, 4, 2, 3, 5, 1, 2, 0, 3, 4))


def shapes(min_ndim=0, max_ndim=6, extent=extents):
    return st.lists(extent, min_size=min_ndim, max_size=max_ndim).map(tuple)


@st.composite
def element_strides(draw, shape, unit_stride=False):
    """Random small strides, or dense strides in a random order that may be
    stepped, reversed, gapped or broadcast axis by axis (except, with
    unit_stride, the innermost axis, which keeps stride 1)."""
    n = len(shape)
    if not unit_stride and draw(st.integers(0, 3)) == 3:
        return tuple(draw(st.lists(st.integers(-9, 9), min_size=n, max_size=n)))
    order = draw(st.permutations(range(n)))
    strides, run = [0] * n, 1
    for ax in reversed(order):
        strides[ax] = run
        run *= max(shape[ax], 1) * draw(st.sampled_from((1, 1, 1, 2)))
    if draw(st.booleans()):
        factors = st.sampled_from((1, 1, 1, -1, 2, -2, 0))
        strides = [s if unit_stride and s == 1 else s * draw(factors) for s in strides]
    return tuple(strides)


@st.composite
def indices(draw, shape, allow_out_of_range=False):
    """A NumPy basic index (ints and slices) for shape; sometimes not a tuple."""
    key = []
    for e in shape[: draw(st.integers(0, len(shape)))]:
        if e > 0 and draw(st.integers(0, 3)) == 0:
            key.append(draw(st.integers(-e, e - 1)))
        elif allow_out_of_range and draw(st.integers(0, 9)) == 9:
            key.append(draw(st.sampled_from((e, -e - 1, e + 3))))
        else:
            bound = st.one_of(st.none(), st.none(), st.integers(-e - 2, e + 2))
            step = st.none() | st.sampled_from((1, 2, 3, -1, -2, -3))
            key.append(slice(draw(bound), draw(bound), draw(step)))
    if len(key) == 1 and draw(st.booleans()):
        return key[0]
    return tuple(key)


@st.composite
def view_specs(draw, min_ndim=0, max_ndim=6, itemsizes=ITEMSIZES, implicit=True, sliced=True, unit_stride=False):
    itemsize = draw(st.sampled_from(itemsizes))
    shape = draw(shapes(min_ndim, max_ndim))
    if implicit and draw(st.integers(0, 6)) == 6:
        spec = ViewSpec(shape, om.c_strides(shape), itemsize, True)
    else:
        spec = ViewSpec(shape, draw(element_strides(shape, unit_stride)), itemsize)
    if sliced and draw(st.booleans()):
        key = draw(indices(shape))
        if len(index_view(np.empty(shape, np.bool_), key).shape) >= min_ndim:
            spec = spec._replace(key=key)
    return spec


def spec_shape(spec):
    """The shape of the spec's view (after its index)."""
    return build_array(spec)[0].shape


def prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def factorizations(draw, n):
    """Extents > 1 whose product is n > 0, in random order."""
    factors = draw(st.permutations(prime_factors(n)))
    k = draw(st.integers(1, max(1, len(factors))))
    cuts = sorted(draw(st.lists(st.integers(0, len(factors)), min_size=k - 1, max_size=k - 1)))
    bounds = [0, *cuts, len(factors)]
    return [math.prod(factors[i:j]) for i, j in zip(bounds, bounds[1:]) if j > i]


@st.composite
def reshape_targets(draw, vol, groups=None):
    """A new shape for volume vol: usually a valid factorization with unit
    axes, maybe with one -1; sometimes wrong (bad volume, two -1, < -1).
    With groups (the extents of the layout's fully flattened form), each
    group is split on its own, so that no copy would be needed."""
    if vol == 0:
        dims = draw(st.lists(st.sampled_from((0, 1, 2, 3)), min_size=1, max_size=4))
        if 0 not in dims:
            dims[draw(st.integers(0, len(dims) - 1))] = 0
    elif groups:
        dims = [e for g in groups for e in draw(factorizations(g))]
    else:
        dims = draw(factorizations(vol))
    for _ in range(draw(st.integers(0, 2))):
        dims.insert(draw(st.integers(0, len(dims))), 1)
    if dims and draw(st.integers(0, 2)) == 2:
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    wrong = draw(st.integers(0, 9))
    if wrong == 9:
        dims.append(2)
    elif wrong == 8:
        dims.extend((-1, -1))
    elif wrong == 7 and dims:
        dims[draw(st.integers(0, len(dims) - 1))] = -2
    return tuple(dims)


def view_strides(spec):
    """(shape, element strides) of the spec's view."""
    a, _ = build_array(spec)
    return a.shape, tuple(s // a.itemsize for s in a.strides)


@st.composite
def reshape_cases(draw, specs=None):
    """(spec, new shape): half of the non-empty cases split the view's
    mergeable groups, so that NumPy can reshape without a copy."""
    spec = draw(view_specs() if specs is None else specs)
    shape, strides = view_strides(spec)
    vol = math.prod(shape)
    groups = om.flatten(shape, strides)[0] if vol and draw(st.booleans()) else None
    return spec, draw(reshape_targets(vol, groups))
