"""NumPy-oracle harness for the port of upstream's StridedLayout test suite.

A ``LayoutSpec`` describes a layout as a dense base (shape, itemsize and a dense order: C, implicit C,
F, or an explicit stride-order permutation), followed by an optional permutation and a list of
successive index expressions.  ``build()`` produces the same thing twice: as a NumPy view over an
``arange`` buffer (the oracle) and as a ``StridedLayout``.  The ``cmp_*`` and ``check_*`` helpers then
assert that the layout agrees with the NumPy view, as upstream's own harness does.
"""

import enum
import itertools
import math
import os
from dataclasses import dataclass

import numpy as np

# STRIDED_LAYOUT_IMPL=cuda.core runs the same suite against cuda.core's own
# _StridedLayout (scripts/gpu-check does, where cuda.core is installed): the
# port is checked against the implementation it describes.
UPSTREAM = os.environ.get("STRIDED_LAYOUT_IMPL") == "cuda.core"
if UPSTREAM:
    from cuda.core._layout import _StridedLayout as StridedLayout
else:
    from strided import StridedLayout


class DenseOrder(enum.Enum):
    """How the dense base layout of a spec is built."""

    C = "C"  # StridedLayout.dense(shape, itemsize, "C"): explicit C strides
    IMPLICIT_C = "IMPLICIT_C"  # StridedLayout(shape, None, itemsize): absent strides
    F = "F"  # StridedLayout.dense(shape, itemsize, "F")

    def __str__(self):
        return self.name


_DTYPES = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64, 16: np.complex128}
ITEMSIZES = tuple(_DTYPES)


def dtype_from_itemsize(itemsize):
    """The NumPy dtype used to model elements of ``itemsize`` bytes."""
    return np.dtype(_DTYPES[itemsize])


def inverse_permutation(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def permute(seq, perm):
    return tuple(seq[p] for p in perm)


def random_permutations(rng, n, cutoff_len=3, sample_size=6):
    """All permutations of ``range(n)`` for small ``n``, otherwise ``sample_size`` random shuffles."""
    if n <= cutoff_len:
        return list(itertools.permutations(range(n)))
    perms = []
    for _ in range(sample_size):
        p = list(range(n))
        rng.shuffle(p)
        perms.append(tuple(p))
    return perms


def long_shape(rng, ndim, k=5, max_extent=6):
    """An ``ndim``-d shape with ``k`` non-unit extents ``min(i + 2, max_extent)``, the rest 1, shuffled."""
    extents = [min(i + 2, max_extent) for i in range(k)] + [1] * (ndim - k)
    rng.shuffle(extents)
    return tuple(extents)


def index_array(a, index):
    """``a[index]`` as an ndarray view, also when every axis is indexed by an integer.

    Plain NumPy indexing returns a scalar in that case, which has no data pointer; appending an
    Ellipsis keeps the result a 0-d view, so offsets can be compared for 0-d results too.
    """
    if not isinstance(index, tuple):
        index = (index,)
    return a[index + (Ellipsis,)]


@dataclass(eq=False)
class LayoutSpec:
    """A dense base layout, then ``perm`` (if any), then each index expression of ``slices`` in turn."""

    shape: tuple
    itemsize: int
    stride_order: object = DenseOrder.C  # a DenseOrder or a permutation tuple
    perm: tuple = None
    slices: tuple = ()

    def __post_init__(self):
        self.shape = tuple(self.shape)
        self.slices = tuple(self.slices)

    def __str__(self):
        parts = [
            f"ndim.{len(self.shape)}",
            f"shape.{self.shape}",
            f"itemsize.{self.itemsize}",
            f"stride_order.{self.stride_order}",
        ]
        if self.perm is not None:
            parts.append(f"perm.{self.perm}")
        if self.slices:
            parts.append(f"slices.{list(self.slices)}")
        return "-".join(parts)

    @property
    def volume(self):
        """Elements in the dense base, i.e. the size of the buffer every derived view lives in."""
        return math.prod(self.shape)

    @property
    def dtype(self):
        return dtype_from_itemsize(self.itemsize)

    @property
    def implicit(self):
        return self.stride_order is DenseOrder.IMPLICIT_C

    @property
    def transformed(self):
        return self.perm is not None or bool(self.slices)

    def dense_array(self):
        """The dense base as a NumPy array over ``arange(volume)``."""
        flat = np.arange(self.volume, dtype=self.dtype)
        order = self.stride_order
        if order in (DenseOrder.C, DenseOrder.IMPLICIT_C):
            return flat.reshape(self.shape, order="C")
        if order is DenseOrder.F:
            return flat.reshape(self.shape, order="F")
        return flat.reshape(permute(self.shape, order)).transpose(inverse_permutation(order))

    def dense_layout(self):
        """The dense base as a StridedLayout (built with keyword arguments, as upstream's tests do)."""
        order = self.stride_order
        if order is DenseOrder.IMPLICIT_C:
            return StridedLayout(shape=self.shape, strides=None, itemsize=self.itemsize)
        if order is DenseOrder.C:
            return StridedLayout.dense(shape=self.shape, itemsize=self.itemsize, stride_order="C")
        if order is DenseOrder.F:
            return StridedLayout.dense(shape=self.shape, itemsize=self.itemsize, stride_order="F")
        return StridedLayout.dense(shape=self.shape, itemsize=self.itemsize, stride_order=order)

    def base(self):
        """(array, layout) after the permutation, before any slicing."""
        a, layout = self.dense_array(), self.dense_layout()
        if self.perm is not None:
            a, layout = a.transpose(self.perm), layout.permuted(self.perm)
        return a, layout

    def array(self):
        """The NumPy view alone, after the permutation and every index expression."""
        a = self.dense_array()
        if self.perm is not None:
            a = a.transpose(self.perm)
        for index in self.slices:
            a = index_array(a, index)
        return a

    def build(self):
        """(array, layout) after the permutation and every index expression."""
        a, layout = self.base()
        for index in self.slices:
            a, layout = index_array(a, index), layout.sliced(index)
        return a, layout


def cmp_layout_and_array(layout, a, expect_none):
    """Assert that ``layout`` describes the NumPy view ``a``.

    ``expect_none``: the layout must have absent (implicit C) strides.
    """
    assert isinstance(a, np.ndarray)
    assert layout.ndim == a.ndim
    assert layout.shape == a.shape
    assert layout.volume == a.size
    assert layout.itemsize == a.itemsize
    assert layout.slice_offset * layout.itemsize == layout.slice_offset_in_bytes
    assert layout.is_contiguous_c == a.flags.c_contiguous
    assert layout.is_contiguous_f == a.flags.f_contiguous
    is_any = (
        a.flags.c_contiguous
        or a.flags.f_contiguous
        or a.transpose(layout.stride_order).flags.c_contiguous
    )
    assert layout.is_contiguous_any == is_any
    assert layout.is_dense == (is_any and layout.slice_offset == 0)
    if expect_none:
        assert layout.strides is None
        assert layout.strides_in_bytes is None
        assert a.flags.c_contiguous
    elif layout.volume == 0:
        # Upstream zeroes the strides of empty results; NumPy keeps non-zero ones.
        assert layout.strides_in_bytes == (0,) * layout.ndim
        assert layout.strides == (0,) * layout.ndim
    else:
        assert layout.strides_in_bytes == a.strides
        assert layout.strides == tuple(s // a.itemsize for s in a.strides)


def cmp_from_dense_vs_from_np(layout, a, expect_none):
    """Assert that ``layout`` agrees with the layout built directly from NumPy's shape and byte strides."""
    from_np = StridedLayout(a.shape, a.strides, a.itemsize, divide_strides=True)
    assert from_np.shape == layout.shape
    assert from_np.itemsize == layout.itemsize
    assert from_np.is_contiguous_c == layout.is_contiguous_c
    assert from_np.is_contiguous_f == layout.is_contiguous_f
    assert from_np.is_contiguous_any == layout.is_contiguous_any
    assert from_np.is_unique == layout.is_unique
    assert from_np.volume == layout.volume
    if layout.volume > 0:
        assert from_np.stride_order == layout.stride_order
        if expect_none:
            assert from_np.is_contiguous_c
            assert from_np.is_contiguous_any
            assert from_np.strides == StridedLayout.dense(a.shape, a.itemsize).strides
        else:
            assert from_np.strides == layout.strides
            assert from_np.strides_in_bytes == layout.strides_in_bytes


def _expected_offset_bounds(layout):
    if layout.volume == 0:
        return 0, -1
    offset = layout.slice_offset
    if layout.strides is None:
        return offset, offset + layout.volume - 1
    lo = hi = offset
    for extent, stride in zip(layout.shape, layout.strides):
        if stride <= 0:
            lo += stride * (extent - 1)
        else:
            hi += stride * (extent - 1)
    return lo, hi


def check_envelope(layout, spec):
    """Assert ``offset_bounds`` and ``required_size_in_bytes()`` of a layout derived from ``spec``'s base.

    Every such layout stays inside the base buffer of ``spec.volume * spec.itemsize`` bytes.  The byte
    form of the bound also covers layouts repacked to another itemsize.
    """
    buffer_bytes = spec.volume * spec.itemsize
    bounds = layout.offset_bounds
    assert bounds == (layout.min_offset, layout.max_offset)
    if layout.volume == 0:
        assert bounds == (0, -1)
    else:
        lo, hi = bounds
        assert 0 <= lo <= hi
        assert (hi + 1) * layout.itemsize <= buffer_bytes
        if layout.is_dense:
            assert bounds == (0, layout.volume - 1)
        assert bounds == _expected_offset_bounds(layout)
    required = layout.required_size_in_bytes()
    assert 0 <= required <= buffer_bytes
    assert required == (bounds[1] + 1) * layout.itemsize


def cmp_slice_offset(prev_layout, prev_a, layout, a):
    """Assert that the change of ``slice_offset_in_bytes`` equals the change of NumPy's data pointer.

    Upstream does this only for results with ndim > 0 (NumPy returns scalars for full integer
    indexing); ``index_array`` keeps such results 0-d views, so it applies to every result here.
    """
    assert isinstance(a, np.ndarray) and isinstance(prev_a, np.ndarray)
    moved = a.ctypes.data - prev_a.ctypes.data
    assert moved == layout.slice_offset_in_bytes - prev_layout.slice_offset_in_bytes
