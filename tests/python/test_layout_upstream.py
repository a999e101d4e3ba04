"""Port of cuda.core's upstream StridedLayout test suite, written anew.

Twelve parametrized tests compare layouts built through ``LayoutSpec`` with NumPy views
of the same data; 23 focused tests pin single behaviours and error messages.  Item sizes,
sampled permutations and long shapes are drawn from ``random.Random(42)`` at collection time, so the
collected cases are the same on every run.
"""

import itertools
import random

import numpy as np
import pytest

from layout_spec import (
    ITEMSIZES,
    UPSTREAM,
    StridedLayout,
    DenseOrder,
    LayoutSpec,
    check_envelope,
    cmp_from_dense_vs_from_np,
    cmp_layout_and_array,
    cmp_slice_offset,
    dtype_from_itemsize,
    index_array,
    inverse_permutation,
    long_shape,
    random_permutations,
)

_StridedLayout = StridedLayout

C, IMPLICIT_C, F = DenseOrder.C, DenseOrder.IMPLICIT_C, DenseOrder.F
ALL_ORDERS = (C, IMPLICIT_C, F)
C_ORDERS = (C, IMPLICIT_C)

rng = random.Random(42)


def _itemsize():
    return rng.choice(ITEMSIZES)


def _param(spec, **named):
    """A pytest.param whose id is the spec's pretty name followed by ``name.value`` for each extra value."""
    values = list(named.values())
    parts = [str(spec)]
    for name, value in named.items():
        if name == "error":
            parts.append("None" if value is None else value.name)
        else:
            parts.append(f"{name}.{value}")
    return pytest.param(spec, *values, id="-".join(parts))


class Error:
    """An expected exception: type, ``match`` regex and a short name for test ids."""

    def __init__(self, name, exc, match=None):
        self.name, self.exc, self.match = name, exc, match

    def raises(self):
        return pytest.raises(self.exc, match=self.match)


# Slicing (the regexes upstream's tests match cuda.core's messages with).
ZERO_STEP = Error("ZERO_STEP", ValueError, "slice step cannot be zer")
TOO_MANY_SLICES = Error("TOO_MANY_SLICES", ValueError, "is greater than the number of dimensions")
OUT_OF_RANGE = Error("OUT_OF_RANGE", ValueError, "out of range for axis")
TYPE_ERROR = Error("TYPE_ERROR", TypeError, "Expected slice instance or integer.")

# Reshape.
VOLUME = Error("VOLUME", ValueError, r"The original volume \d+ and the new volume \d+ must be equal.")
NEG_EXTENT = Error("NEG_EXTENT", ValueError, "Extents must be non-negative")
MULTI = Error("MULTI", ValueError, "There can be at most one -1 extent in a shape")
AMBIGUOUS = Error("AMBIGUOUS", ValueError, "The -1 extent is ambiguous when the specified sub-volume is 0")
DIVISIBILITY = Error(
    "DIVISIBILITY", ValueError, r"The original volume \d+ must be divisible by the specified sub-volume \d+"
)
STRIDE = Error("STRIDE", ValueError, "Layout strides are incompatible with the new shape")
RESHAPE_TYPE = Error("TYPE", TypeError)

# Permutation.
PERM_REPEAT = Error("REPEAT", ValueError, r"axis -?\d+ appears multiple times")
PERM_RANGE = Error("RANGE", ValueError, r"axis -?\d+ out of range for")
PERM_LEN = Error("LEN", ValueError, "the same length as the number of dimensions")


# 1. test_dense_with_permutation_as_stride_order (10 cases)

DENSE_PERM_CASES = [
    _param(LayoutSpec(shape, _itemsize(), perm))
    for shape in [(), (5,), (7, 9), (2, 3, 4)]
    for perm in itertools.permutations(range(len(shape)))
]


@pytest.mark.parametrize("spec", DENSE_PERM_CASES)
def test_dense_with_permutation_as_stride_order(spec):
    a, layout = spec.build()
    cmp_layout_and_array(layout, a, expect_none=False)
    cmp_from_dense_vs_from_np(layout, a, expect_none=False)
    check_envelope(layout, spec)
    assert layout.stride_order == spec.stride_order


# 2. test_permuted (66 cases)


def _permuted_cases():
    cases = []
    shapes = [(), (1,), (2, 3), (5, 6, 7), (5, 1, 7), (5, 2, 3, 4), long_shape(rng, 64)]
    for shape in shapes:
        itemsize = _itemsize()
        for perm in random_permutations(rng, len(shape), sample_size=3):
            for order in ALL_ORDERS:
                cases.append(_param(LayoutSpec(shape, itemsize, order), perm=perm))
    return cases


@pytest.mark.parametrize("spec,perm", _permuted_cases())
def test_permuted(spec, perm):
    a, layout = spec.build()
    permuted = layout.permuted(perm)
    expected = a.transpose(perm)
    assert permuted is not layout
    cmp_layout_and_array(permuted, expected, expect_none=False)
    cmp_from_dense_vs_from_np(permuted, expected, expect_none=False)
    cmp_slice_offset(layout, a, permuted, expected)
    check_envelope(permuted, spec)
    assert permuted.slice_offset == layout.slice_offset
    # With several unit extents the stride order among equal strides is not the permutation history.
    if sum(extent == 1 for extent in permuted.shape) <= 1:
        expected_order = inverse_permutation(perm)
        if spec.stride_order is F:
            expected_order = expected_order[::-1]
        assert permuted.stride_order == expected_order


# 3. test_permuted_validation (15 cases)

PERMUTED_VALIDATION_ROWS = [
    ((), (5,), PERM_LEN),
    ((1,), (0, 0), PERM_LEN),
    ((2, 5, 3), (1, 0, 1), PERM_REPEAT),
    ((5, 6, 7), (1, 3, 0), PERM_RANGE),
    ((5, 6, 7), (1, -2000, 0), PERM_RANGE),
]


def _permuted_validation_cases():
    cases = []
    for shape, perm, error in PERMUTED_VALIDATION_ROWS:
        itemsize = _itemsize()
        for order in ALL_ORDERS:
            cases.append(_param(LayoutSpec(shape, itemsize, order), perm=perm, error=error))
    return cases


@pytest.mark.parametrize("spec,perm,error", _permuted_validation_cases())
def test_permuted_validation(spec, perm, error):
    _, layout = spec.build()
    with error.raises():
        layout.permuted(perm)


# 4. test_slice (69 cases)

SLICE_ROWS = [
    # (shape, successive index expressions, expected error of the last expression)
    ((), [np.s_[()]], None),
    ((12,), [np.s_[:]], None),
    ((13,), [np.s_[::-1]], None),
    ((13,), [np.s_[::-1], np.s_[::-1]], None),
    ((13,), [np.s_[::-1], np.s_[1:-1], np.s_[::-1]], None),
    ((13,), [np.s_[2:-3]], None),
    ((13,), [np.s_[2:-3:2]], None),
    ((13,), [np.s_[-3:2:-2]], None),
    ((13,), [np.s_[-3:2:-2], np.s_[1:3]], None),
    ((3, 5), [np.s_[:2], np.s_[:, 3:]], None),
    ((3, 5), [np.s_[5:4]], None),
    ((3, 5), [np.s_[:, ::0]], ZERO_STEP),
    ((3, 5), [np.s_[:, :-1, :2]], TOO_MANY_SLICES),
    ((11, 12, 3), [np.s_[:, 0, :-1]], None),
    ((11, 12, 3), [np.s_[0, 1, :-1]], None),
    ((11, 12, 3), [np.s_[0, 1, 2]], None),
    ((11, 12, 3), [np.s_[-2]], None),
    ((11, 12, 3, 5), [np.s_[0], np.s_[1]], None),
    ((11, 12, 3, 5), [np.s_[:, 1, :-1]], None),
    ((11, 12, 3), [np.s_[0, 1, 5]], OUT_OF_RANGE),
    ((11, 12, 3), [np.s_[-42]], OUT_OF_RANGE),
    ((11, 12, 3), [np.s_["abc"]], TYPE_ERROR),
    (long_shape(rng, 64), [(slice(None, None, -1),) * 64], None),
]


def _slice_cases():
    cases = []
    for shape, slices, error in SLICE_ROWS:
        itemsize = _itemsize()
        for order in ALL_ORDERS:
            cases.append(_param(LayoutSpec(shape, itemsize, order, slices=slices), error=error))
    return cases


@pytest.mark.parametrize("spec,error", _slice_cases())
def test_slice(spec, error):
    a, layout = spec.base()
    for i, index in enumerate(spec.slices):
        if error is not None and i == len(spec.slices) - 1:
            with error.raises():
                layout.sliced(index)
            with error.raises():
                layout[index]
            return
        sliced = layout.sliced(index)
        assert sliced is not layout
        assert layout[index] == sliced
        sliced_a = index_array(a, index)
        cmp_layout_and_array(sliced, sliced_a, expect_none=False)
        cmp_from_dense_vs_from_np(sliced, sliced_a, expect_none=False)
        cmp_slice_offset(layout, a, sliced, sliced_a)
        check_envelope(sliced, spec)
        a, layout = sliced_a, sliced


# 5. test_reshape (148 cases)

RESHAPE_ROWS = [
    # (shape, perm, slices, new_shape, error)
    ((), None, [], (), None),
    ((), None, [], (1,), None),
    ((), None, [], (-1,), None),
    ((), None, [], (1, -1, 1), None),
    ((1,), None, [], (-1,), None),
    ((1,), None, [], (), None),
    ((12,), None, [np.s_[:]], (12,), None),
    ((12,), None, [], (11,), VOLUME),
    ((12,), None, [np.s_[1:]], (11,), None),
    ((0,), None, [], (0,), None),
    ((0,), None, [], (1, 3), VOLUME),
    ((3,), None, [np.s_[3:]], (3,), VOLUME),
    ((18,), None, [], (0,), VOLUME),
    ((3,), None, [np.s_[2:-1]], (0,), None),
    ((3,), None, [np.s_[3:]], (-1,), None),
    ((0,), None, [], (1, -1), None),
    ((0,), None, [], (0, -1), AMBIGUOUS),
    ((3, 0, 3), None, [], (2, 3, 4, 5, 6, 7, 0, 12), None),
    ((3, 0, 3), None, [], (0,), None),
    ((12,), None, [], (2, 3, 2), None),
    ((12,), None, [], (2, 6), None),
    ((12,), None, [], (4, 3), None),
    ((12,), None, [], (3, 4), None),
    ((7, 12), None, [], (7, 12), None),
    ((7, 12), None, [], (12, 7), None),
    ((12, 11), None, [], (2, 3, 2, 11), None),
    ((12, 11), None, [], (2, 3, 11, 2), None),
    ((12, 11), None, [], (2, 11, 3, 2), None),
    ((12, 11), None, [], (11, 2, 3, 2), None),
    ((12, 11), None, [], (2, 3, 2, -1), None),
    ((12, 11), None, [], (2, 3, -1, 2), None),
    ((12, 11), None, [], (2, -1, 3, 2), None),
    ((12, 11), None, [], (-1, 2, 3, 2), None),
    ((12, 11), None, [], (2, 3, -1, 11), None),
    ((12, 11), None, [], (2, 3, 11, -1), None),
    ((12, 11), None, [], (-1, 11, 3, 2), None),
    ((12, 11), None, [], (11, 2, -1, 2), None),
    ((5, 12), None, [], (2, 5, 6), None),
    ((2, 3, 2), None, [], (12,), None),
    ((2, 3, 2), None, [], (6, 2), None),
    ((2, 3, 2), None, [], (2, 3, 2), None),
    ((2, 3, 2), (1, 2, 0), [], (6, 2), None),
    ((2, 3, 2), (1, 2, 0), [], (2, 6), STRIDE),
    ((2, 3, 2), (1, 2, 0), [], (12,), STRIDE),
    ((2, 3, 2), (1, 0, 2), [], (3, 2, 2), None),
    ((2, 3, 2), (1, 0, 2), [], (3, 4), STRIDE),
    ((2, 3, 2), (1, 0, 2), [], (6, 2), STRIDE),
    ((2, 3, 2), (1, 0, 2), [], (12,), STRIDE),
    ((10, 10, 10), None, [np.s_[::-1, ::-1, :]], (10, 10, 10), None),
    ((10, 10, 10), None, [np.s_[::-1, ::-1, :]], (100, 10), None),
    ((10, 10, 10), None, [np.s_[::-1, ::-1, :]], (10, 100), STRIDE),
    ((10, 10, 10), None, [np.s_[::-1, ::-1, ::-1]], (1000,), None),
    ((10, 10, 10), None, [np.s_[:, :, ::-1]], (100, 10), None),
    ((10, 10, 10), None, [np.s_[:, :, ::-1]], (10, 100), STRIDE),
    ((10, 10, 10), None, [np.s_[::-1, :, ::-1]], (1000,), STRIDE),
    ((10, 10, 10), (1, 0, 2), [np.s_[::-1, ::-1]], (100, 10), STRIDE),
    ((5, 3), None, [np.s_[:-1, :]], (12,), None),
    ((13, 3), None, [np.s_[1:, :]], (6, 6), None),
    ((12, 4), None, [np.s_[:, :-1]], (6, 6), STRIDE),
    ((12, 4), None, [np.s_[:, :-1]], (6, 2, 3), None),
    ((7, 6, 5), None, [], (70, -1), None),
    ((7, 6, 5), None, [], (-1, 70), None),
    ((7, 6, 5), None, [], (71, -1), DIVISIBILITY),
    ((7, 6, 5), None, [], (-1, 71), DIVISIBILITY),
    ((7, 6, 5), None, [], (71, -2), NEG_EXTENT),
    ((7, 6, 5), None, [], (-2, 71), NEG_EXTENT),
    ((7, 6, 5), None, [], (-2, -1, -1), NEG_EXTENT),
    ((7, 6, 5), None, [], (-2, -1, -2), NEG_EXTENT),
    ((7, 6, 5), None, [], (-7, 6, -5), NEG_EXTENT),
    ((7, 6, 5), None, [], (-1, 6, -1), MULTI),
    ((7, 6, 5), None, [], (5, 0, -1), AMBIGUOUS),
    ((7, 0, 5), None, [], (5, 0, -1), AMBIGUOUS),
    ((7, 6, 5), None, [], map, RESHAPE_TYPE),
    (long_shape(rng, 64, 5, 6), None, [], (60, 12), None),
]


def _reshape_cases():
    cases = []
    for shape, perm, slices, new_shape, error in RESHAPE_ROWS:
        itemsize = _itemsize()
        for order in C_ORDERS:
            spec = LayoutSpec(shape, itemsize, order, perm=perm, slices=slices)
            new_id = new_shape.__name__ if new_shape is map else new_shape
            cases.append(
                pytest.param(
                    spec,
                    new_shape,
                    error,
                    id=f"{spec}-new_shape.{new_id}-{'None' if error is None else error.name}",
                )
            )
    return cases


@pytest.mark.parametrize("spec,new_shape,error", _reshape_cases())
def test_reshape(spec, new_shape, error):
    a, layout = spec.build()
    if error is not None:
        if error is STRIDE:
            # The case is only a valid expectation if NumPy also needs a copy.
            with pytest.raises(ValueError):
                a.reshape(new_shape, copy=False)
        with error.raises():
            layout.reshaped(new_shape)
        return
    expected = a.reshape(new_shape, copy=False)
    reshaped = layout.reshaped(new_shape)
    assert reshaped is not layout
    cmp_layout_and_array(reshaped, expected, expect_none=False)
    cmp_from_dense_vs_from_np(reshaped, expected, expect_none=False)
    cmp_slice_offset(layout, a, reshaped, expected)
    check_envelope(reshaped, spec)
    assert reshaped.slice_offset == layout.slice_offset


# 6. test_flatten (28 cases)


def flatten_mask2str(mask, ndim):
    """Bit ``i`` of ``mask`` written as character ``i``, left to right."""
    return "".join("1" if mask & (1 << i) else "0" for i in range(ndim))


_SLICED_5D = np.s_[:, :, :, :, ::-2]

FLATTEN_ROWS = [
    # (shape, perm, slices, expected shape, expected strides, mask string, (start_axis, end_axis) or None)
    ((), None, [], (1,), (1,), "", None),
    ((12,), None, [np.s_[:]], (12,), (1,), "0", None),
    ((1, 2, 3, 4, 5), None, [], (120,), (1,), "01111", None),
    ((1, 2, 3, 0, 5), None, [], (0,), (0,), "01111", None),
    ((5, 1, 2, 4, 3), None, [_SLICED_5D], (40, 2), (3, -2), "01110", None),
    ((5, 1, 2, 4, 3), None, [_SLICED_5D], (10, 4, 2), (12, 3, -2), "01110", (0, 2)),
    ((5, 1, 2, 4, 3), None, [_SLICED_5D], (5, 2, 4, 2), (24, 12, 3, -2), "01110", (1, 2)),
    ((5, 1, 2, 4, 3), None, [_SLICED_5D], (5, 8, 2), (24, 3, -2), "01110", (1, 3)),
    ((5, 1, 2, 4, 3), None, [_SLICED_5D], (5, 8, 2), (24, 3, -2), "01110", (1, 4)),
    ((5, 2, 4, 3), None, [np.s_[:, ::-1, :, :]], (5, 2, 12), (24, -12, 1), "0001", None),
    ((5, 7, 4, 3), None, [np.s_[:, ::-1, ::-1]], (5, 28, 3), (84, -3, 1), "0010", None),
    ((5, 4, 3, 7), (2, 3, 0, 1), [np.s_[:]], (21, 20), (1, 21), "0101", None),
    ((5, 4, 3, 7), (3, 2, 0, 1), [], (7, 3, 20), (1, 7, 21), "0001", None),
    (long_shape(rng, 64, 4, 5), None, [], (120,), (1,), "0" + "1" * 63, None),
]


def _flatten_cases():
    cases = []
    for shape, perm, slices, exp_shape, exp_strides, mask, axis_range in FLATTEN_ROWS:
        itemsize = _itemsize()
        for order in C_ORDERS:
            spec = LayoutSpec(shape, itemsize, order, perm=perm, slices=slices)
            cases.append(
                _param(
                    spec,
                    expected_shape=exp_shape,
                    expected_strides=exp_strides,
                    mask=mask,
                    axis_range=axis_range,
                )
            )
    return cases


@pytest.mark.parametrize("spec,expected_shape,expected_strides,mask_str,axis_range", _flatten_cases())
def test_flatten(spec, expected_shape, expected_strides, mask_str, axis_range):
    _, layout = spec.build()
    mask = layout.flattened_axis_mask()
    assert flatten_mask2str(mask, layout.ndim) == mask_str
    if axis_range is None:
        flattened = layout.flattened()
        assert layout.flattened(mask=mask) == flattened
        assert flattened.flattened_axis_mask() == 0
    else:
        start_axis, end_axis = axis_range
        flattened = layout.flattened(start_axis=start_axis, end_axis=end_axis)
    assert flattened.shape == expected_shape
    assert flattened.strides == expected_strides
    assert flattened.itemsize == layout.itemsize
    assert flattened.slice_offset == layout.slice_offset


# 7. test_flatten_together (7 cases)

FLATTEN_TOGETHER_CASES = [
    # (spec a, spec b, expected a, expected b)
    (
        LayoutSpec((), 2, C),
        LayoutSpec((), 4, C),
        LayoutSpec((1,), 2, C),
        LayoutSpec((1,), 4, C),
    ),
    (
        LayoutSpec((), 2, IMPLICIT_C),
        LayoutSpec((), 4, IMPLICIT_C),
        LayoutSpec((1,), 2, C),
        LayoutSpec((1,), 4, C),
    ),
    (
        LayoutSpec((2, 7, 13, 5), 8, C),
        LayoutSpec((3, 5, 11, 1), 4, C),
        LayoutSpec((910,), 8, C),
        LayoutSpec((165,), 4, C),
    ),
    (
        LayoutSpec((2, 7, 13, 5), 8, IMPLICIT_C),
        LayoutSpec((3, 5, 11, 1), 4, IMPLICIT_C),
        LayoutSpec((910,), 8, C),
        LayoutSpec((165,), 4, C),
    ),
    (
        LayoutSpec((5, 7, 13, 2), 4, (3, 1, 2, 0)),
        LayoutSpec((3, 5, 11, 1), 2, IMPLICIT_C),
        LayoutSpec((5, 91, 2), 4, (2, 1, 0)),
        LayoutSpec((3, 55, 1), 2, C),
    ),
    (
        LayoutSpec((2, 7, 13, 5), 16, C),
        LayoutSpec((11, 1, 3, 5), 1, (2, 3, 0, 1)),
        LayoutSpec((14, 65), 16, C),
        LayoutSpec((11, 15), 1, (1, 0)),
    ),
    (
        LayoutSpec((4, 5, 11, 2, 3, 7), 4, (5, 3, 4, 0, 1, 2)),
        LayoutSpec((3, 8, 5, 6, 7, 9), 4, (0, 1, 3, 4, 5, 2)),
        LayoutSpec((20, 11, 6, 7), 4, (3, 2, 0, 1)),
        LayoutSpec((24, 5, 42, 9), 4, (0, 2, 3, 1)),
    ),
]


@pytest.mark.parametrize(
    "spec_a,spec_b,expected_a,expected_b",
    [pytest.param(*case, id=f"{case[0]}-{case[1]}") for case in FLATTEN_TOGETHER_CASES],
)
def test_flatten_together(spec_a, spec_b, expected_a, expected_b):
    _, layout_a = spec_a.build()
    _, layout_b = spec_b.build()
    mask = layout_a.flattened_axis_mask() & layout_b.flattened_axis_mask()
    for layout, expected_spec in ((layout_a, expected_a), (layout_b, expected_b)):
        flattened = layout.flattened(mask=mask)
        _, expected = expected_spec.build()
        assert flattened == expected
        assert flattened.shape == expected.shape
        assert flattened.strides == expected.strides
        assert flattened.itemsize == expected.itemsize
        assert flattened.slice_offset == expected.slice_offset
        assert flattened.is_contiguous_c == expected.is_contiguous_c
        assert flattened.is_contiguous_f == expected.is_contiguous_f
        assert flattened.is_contiguous_any == expected.is_contiguous_any
        assert flattened.is_unique == expected.is_unique


# 8. test_squeezed (27 cases)

SQUEEZED_ROWS = [
    # (shape, perm, slices)
    ((), None, []),
    ((12,), None, []),
    ((1, 5, 4, 3), None, []),
    ((1, 5, 1, 4, 3), None, [np.s_[:, -1:, :]]),
    ((1, 5, 4, 3), None, [np.s_[:, -1:, :1, 1:2]]),
    ((7, 5, 3), (2, 0, 1), [np.s_[::-1, 3:2:-1, :]]),
    ((7, 5, 3), (2, 0, 1), [np.s_[:, 3:2, :]]),
    (long_shape(rng, 64, 1), None, []),
    (long_shape(rng, 33, 3), None, []),
]


def _squeezed_cases():
    cases = []
    for shape, perm, slices in SQUEEZED_ROWS:
        itemsize = _itemsize()
        for order in ALL_ORDERS:
            cases.append(_param(LayoutSpec(shape, itemsize, order, perm=perm, slices=slices)))
    return cases


@pytest.mark.parametrize("spec", _squeezed_cases())
def test_squeezed(spec):
    a, layout = spec.build()
    squeezed = layout.squeezed()
    assert squeezed is not layout
    assert squeezed.slice_offset == layout.slice_offset
    assert squeezed.itemsize == layout.itemsize
    if layout.volume == 0:
        assert squeezed.shape == (0,)
        assert squeezed.strides == (0,)
        return
    expected = np.squeeze(a)
    cmp_layout_and_array(squeezed, expected, expect_none=False)
    cmp_from_dense_vs_from_np(squeezed, expected, expect_none=False)
    cmp_slice_offset(layout, a, squeezed, expected)
    check_envelope(squeezed, spec)


# 9. test_unsqueezed_layout (90 cases)

UNSQUEEZED_ROWS = [
    # (shape, slices)
    ((), []),
    ((7,), []),
    ((4, 5, 7, 11), [np.s_[1:-1, ::-1, 2:-1, ::3]]),
]


def _unsqueezed_cases():
    cases = []
    for shape, slices in UNSQUEEZED_ROWS:
        itemsize = _itemsize()
        spec = LayoutSpec(shape, itemsize, slices=slices)
        ndim = spec.array().ndim
        for order in ALL_ORDERS:
            for k in range(3):
                for axes in itertools.combinations(range(ndim + k), k):
                    cases.append(_param(LayoutSpec(shape, itemsize, order, slices=slices), axes=axes))
    return cases


@pytest.mark.parametrize("spec,axes", _unsqueezed_cases())
def test_unsqueezed_layout(spec, axes):
    a, layout = spec.build()
    unsqueezed = layout.unsqueezed(axes)
    expected = np.expand_dims(a, axes)
    expect_none = spec.implicit and not spec.transformed and axes == ()
    cmp_layout_and_array(unsqueezed, expected, expect_none=expect_none)
    cmp_from_dense_vs_from_np(unsqueezed, expected, expect_none=expect_none)
    cmp_slice_offset(layout, a, unsqueezed, expected)
    check_envelope(unsqueezed, spec)
    assert unsqueezed.slice_offset == layout.slice_offset
    if axes == ():
        assert unsqueezed is layout


# 10. test_packed_unpacked (17 cases)

_LONG_C = (1, 3) + (1,) * 61 + (4,)
_LONG_F = (4, 3) + (1,) * 61 + (3,)

PACKED_ROWS = [
    # (shape, perm, slices, order, itemsize, axis, expected max_compatible_itemsize, new itemsize)
    ((12,), None, [], C, 1, -1, 4, 1),
    ((12,), None, [], IMPLICIT_C, 1, -1, 4, 1),
    ((12,), None, [], F, 1, 0, 4, 1),
    ((12,), None, [], C, 4, -1, 16, 8),
    ((12,), None, [], IMPLICIT_C, 4, -1, 16, 8),
    ((12,), None, [], F, 4, 0, 16, 8),
    ((16, 5, 4, 6), None, [], C, 2, -1, 4, 4),
    ((16, 5, 4, 6), None, [], IMPLICIT_C, 2, -1, 4, 4),
    ((16, 5, 4, 6), None, [], F, 2, 0, 16, 4),
    ((11, 5, 9), None, [np.s_[:, :, -1:]], C, 2, 2, 2, 2),
    ((11, 5, 9), None, [np.s_[:, :, -1:]], IMPLICIT_C, 2, 2, 2, 2),
    ((11, 5, 9), None, [np.s_[:, :, -1:]], F, 2, 0, 2, 2),
    ((12, 3, 24), (1, 2, 0), [np.s_[::-1, 20:, 1:]], C, 2, 1, 8, 8),
    ((12, 3, 24), (1, 2, 0), [np.s_[1:, ::-1, 10:]], F, 2, 2, 4, 4),
    (_LONG_C, None, [], C, 2, -1, 8, 8),
    (_LONG_C, None, [], IMPLICIT_C, 2, -1, 8, 4),
    (_LONG_F, None, [], F, 2, 0, 8, 4),
]


def _packed_cases():
    cases = []
    for shape, perm, slices, order, itemsize, axis, max_itemsize, new_itemsize in PACKED_ROWS:
        spec = LayoutSpec(shape, itemsize, order, perm=perm, slices=slices)
        cases.append(_param(spec, axis=axis, max_itemsize=max_itemsize, new_itemsize=new_itemsize))
    return cases


@pytest.mark.parametrize("spec,axis,expected_max_itemsize,new_itemsize", _packed_cases())
def test_packed_unpacked(spec, axis, expected_max_itemsize, new_itemsize):
    a, layout = spec.build()
    old_itemsize = layout.itemsize
    assert layout.max_compatible_itemsize(axis=axis) == expected_max_itemsize

    packed = layout.repacked(new_itemsize, axis=axis)
    order = layout.stride_order
    # NumPy can change the dtype only along a contiguous last axis: move the packed axis there and back.
    new_dtype = dtype_from_itemsize(new_itemsize)
    expected = a.transpose(order).view(new_dtype).transpose(inverse_permutation(order))
    no_op = new_itemsize == old_itemsize
    if no_op:
        assert packed is layout
    expect_none = no_op and spec.implicit and not spec.transformed
    cmp_layout_and_array(packed, expected, expect_none=expect_none)
    cmp_from_dense_vs_from_np(packed, expected, expect_none=expect_none)
    cmp_slice_offset(layout, a, packed, expected)
    check_envelope(packed, spec)
    if new_itemsize >= old_itemsize:
        assert packed.slice_offset * (new_itemsize // old_itemsize) == layout.slice_offset
    else:
        assert packed.slice_offset == layout.slice_offset * (old_itemsize // new_itemsize)

    unpacked = packed.repacked(old_itemsize, axis=axis)
    cmp_layout_and_array(unpacked, a, expect_none=expect_none)
    cmp_from_dense_vs_from_np(unpacked, a, expect_none=expect_none)
    cmp_slice_offset(layout, a, unpacked, a)
    if layout.strides is not None:
        assert unpacked == layout


# 11. test_broadcast_layout (42 cases)

BROADCAST_ROWS = [
    # (shape, slices, broadcast shape)
    ((), [], ()),
    ((), [], (1,)),
    ((), [], (17, 1, 5)),
    ((1,), [], (5,)),
    ((1,), [], (3, 5, 2)),
    ((7,), [], (7,)),
    ((7,), [], (2, 7)),
    ((5, 11), [np.s_[1:-1, ::-1]], (3, 11)),
    ((5, 11), [np.s_[1:-1, ::-1]], (7, 3, 11)),
    ((5, 11), [np.s_[::-1, 3:4]], (5, 7)),
    ((5, 11), [np.s_[::-1, 3:4]], (5, 30)),
    ((5, 11), [np.s_[::-1, 3:4]], (4, 5, 12)),
    ((5, 11), [np.s_[-1:,]], (4, 13, 11)),
    ((2, 3, 3), [np.s_[:, 1:2]], (401, 3) + (1,) * 59 + (2, 4, 3)),
]


def _broadcast_cases():
    cases = []
    for shape, slices, new_shape in BROADCAST_ROWS:
        itemsize = _itemsize()
        for order in ALL_ORDERS:
            cases.append(_param(LayoutSpec(shape, itemsize, order, slices=slices), new_shape=new_shape))
    return cases


@pytest.mark.parametrize("spec,new_shape", _broadcast_cases())
def test_broadcast_layout(spec, new_shape):
    a, layout = spec.build()
    broadcast = layout.broadcast_to(new_shape)
    expected = np.broadcast_to(a, new_shape)
    assert broadcast is not layout
    cmp_layout_and_array(broadcast, expected, expect_none=False)
    cmp_from_dense_vs_from_np(broadcast, expected, expect_none=False)
    cmp_slice_offset(layout, a, broadcast, expected)
    check_envelope(broadcast, spec)
    assert broadcast.slice_offset == layout.slice_offset
    added = len(new_shape) - layout.ndim
    stays_unique = all(e == 1 for e in new_shape[:added]) and new_shape[added:] == layout.shape
    assert broadcast.is_unique == (broadcast.volume == 0 or stays_unique)


# 12. test_to_dense (162 cases)

TO_DENSE_ROWS = [
    # (shape, perm, slices)
    ((), None, []),
    ((1,), None, []),
    ((7,), None, []),
    ((7,), None, [np.s_[3:6]]),
    ((7,), None, [np.s_[::-1]]),
    ((5, 11), None, []),
    ((5, 11), None, [np.s_[1:-1]]),
    ((5, 11), None, [np.s_[::-1, 3:10]]),
    ((5, 11), None, [np.s_[1:4, ::-1]]),
    ((5, 11), None, [np.s_[-1:,]]),
    ((3, 5, 7), (1, 0, 2), []),
]


def _to_dense_cases():
    cases = []
    for shape, perm, slices in TO_DENSE_ROWS:
        itemsize = _itemsize()
        for order in ALL_ORDERS:
            spec = LayoutSpec(shape, itemsize, order, perm=perm, slices=slices)
            ndim = spec.array().ndim
            stride_orders = ["C", "F", "K"] + list(itertools.permutations(range(ndim)))
            for stride_order in stride_orders:
                cases.append(_param(spec, dense_order=stride_order))
    return cases


@pytest.mark.parametrize("spec,stride_order", _to_dense_cases())
def test_to_dense(spec, stride_order):
    a, layout = spec.build()
    dense = layout.to_dense(stride_order)
    assert StridedLayout.dense_like(layout, stride_order) == dense
    if isinstance(stride_order, str):
        expected = a.copy(order=stride_order)
        no_op = stride_order in ("C", "K") or (stride_order == "F" and a.flags.f_contiguous)
    else:
        expected = a.transpose(stride_order).copy(order="C").transpose(inverse_permutation(stride_order))
        no_op = False
    # Only a no-op on an implicit, untransformed layout returns it as is, with absent strides.
    expect_none = spec.implicit and not spec.transformed and no_op
    if expect_none:
        assert dense is layout
    cmp_layout_and_array(dense, expected, expect_none=expect_none)
    cmp_from_dense_vs_from_np(dense, expected, expect_none=expect_none)
    assert dense.is_dense
    assert dense.required_size_in_bytes() == layout.volume * layout.itemsize
    assert dense.offset_bounds == (0, layout.volume - 1)


# Focused tests


@pytest.mark.parametrize("other", [None, "string", 42, 3.14, (3, 4), [1, 2, 3], object()])
def test_eq_returns_not_implemented_for_other_types(other):
    layout = StridedLayout.dense((3, 4), 4)
    assert layout != other
    assert not (layout == other)
    assert other != layout
    assert layout.__eq__(other) is NotImplemented


def test_eq_reflexive_and_value_equality():
    layout = StridedLayout.dense((5, 3, 7), 4)
    assert layout == layout
    assert layout == StridedLayout.dense((5, 3, 7), 4)
    assert not (layout != StridedLayout.dense((5, 3, 7), 4))
    assert layout != StridedLayout.dense((5, 3, 8), 4)
    assert not (layout == StridedLayout.dense((5, 3, 8), 4))


def test_dense_like_invalid_stride_order_raises():
    layout = StridedLayout.dense((5, 3), 4)
    with pytest.raises(ValueError, match="must be 'K', 'C', 'F', or a permutation"):
        StridedLayout.dense_like(layout, "X")


def test_repr_includes_slice_offset_when_nonzero():
    # Naming: the alias _StridedLayout is the same class, and repr uses the
    # public name StridedLayout (cuda.core's class is named _StridedLayout).
    name = "_StridedLayout(" if UPSTREAM else "StridedLayout("
    if not UPSTREAM:
        import strided

        assert strided._StridedLayout is StridedLayout
    layout = StridedLayout.dense((5, 6), 4)
    assert "_slice_offset" not in repr(layout)
    assert repr(layout).startswith(name)
    sliced = layout[:, 1:5]
    assert sliced.slice_offset != 0
    assert "_slice_offset" in repr(sliced)
    assert repr(sliced).startswith(name)


def test_min_offset_max_offset_properties():
    layout = StridedLayout.dense((5, 4), 4)
    assert layout.min_offset == 0
    assert layout.max_offset == 19
    assert layout.offset_bounds == (0, 19)


def test_broadcast_to_fewer_dims_raises():
    with pytest.raises(ValueError, match="must be greater than or equal to"):
        StridedLayout.dense((2, 3), 4).broadcast_to((3,))


def test_broadcast_to_incompatible_extent_raises():
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        StridedLayout.dense((2, 3), 4).broadcast_to((2, 5))


def test_unsqueezed_invalid_axis_raises():
    with pytest.raises(ValueError, match="Invalid axis"):
        StridedLayout.dense((2, 3), 4).unsqueezed(9)


def test_unsqueezed_repeated_axis_raises():
    with pytest.raises(ValueError, match="appears multiple times"):
        StridedLayout.dense((2, 3), 4).unsqueezed((0, 0))


def test_pack_invalid_axis_raises():
    with pytest.raises(ValueError, match="Invalid axis"):
        StridedLayout.dense((5, 4), 4).repacked(8, axis=5)


def test_pack_unaligned_data_ptr_raises():
    with pytest.raises(ValueError, match="must be aligned to the packed itemsize"):
        StridedLayout.dense((5, 4), 4).repacked(8, data_ptr=4)


def test_pack_axis_stride_not_one_raises():
    with pytest.raises(ValueError, match="axis 0 stride must be 1"):
        _StridedLayout((4, 5), (5, 1), 4).repacked(8, axis=0)


def test_pack_extent_not_divisible_raises():
    with pytest.raises(ValueError, match="extent .* must be divisible by 2"):
        StridedLayout.dense((5, 3), 4).repacked(8, axis=1)


def test_pack_slice_offset_not_divisible_raises():
    layout = StridedLayout.dense((5, 6), 4)[:, 1:5]
    assert layout.slice_offset == 1
    with pytest.raises(ValueError, match="slice offset .* must be divisible by 2"):
        layout.repacked(8, axis=1)


def test_pack_other_stride_not_divisible_raises():
    with pytest.raises(ValueError, match="stride .* must be divisible by 2"):
        _StridedLayout((3, 4), (5, 1), 4).repacked(8)


def test_unpack_invalid_axis_raises():
    with pytest.raises(ValueError, match="Invalid axis"):
        StridedLayout.dense((5, 4), 8).repacked(4, axis=9)


def test_unpack_nonpositive_itemsize_raises():
    with pytest.raises(ValueError, match="new itemsize must be greater than zero"):
        StridedLayout.dense((5, 4), 8).repacked(0)


def test_unpack_zero_extent_raises():
    with pytest.raises(ValueError, match="extent must be non-zero"):
        _StridedLayout((5, 0), (0, 1), 8).repacked(4, axis=1)


def test_unpack_axis_stride_not_one_raises():
    with pytest.raises(ValueError, match="axis 0 stride must be 1"):
        _StridedLayout((4, 5), (5, 1), 8).repacked(4, axis=0)


def test_max_compatible_itemsize_nonpositive_max_raises():
    with pytest.raises(ValueError, match="max_itemsize must be greater than zero"):
        StridedLayout.dense((5, 4), 4).max_compatible_itemsize(max_itemsize=0)


def test_max_compatible_itemsize_invalid_axis_raises():
    with pytest.raises(ValueError, match="Invalid axis"):
        StridedLayout.dense((5, 4), 4).max_compatible_itemsize(axis=9)


def test_max_compatible_itemsize_less_than_itemsize_raises():
    with pytest.raises(ValueError, match="cannot be less than itemsize"):
        StridedLayout.dense((5, 4), 8).max_compatible_itemsize(max_itemsize=4)


def test_max_compatible_itemsize_stride_not_one_returns_itemsize():
    layout = _StridedLayout((4, 5), (5, 1), 8)
    assert layout.max_compatible_itemsize(axis=0, max_itemsize=16) == 8
