"""StridedLayout against NumPy: every query and operation, on random views.

Each case is a NumPy view made with as_strided over a byte buffer (0-6 dims,
extents 0/1/small, negative and zero strides, itemsizes 1, 2, 4, 8 and,
through void dtypes, 3 and 5), paired with StridedLayout(a.shape, a.strides, a.itemsize,
divide_strides=True) or, for C-contiguous arrays, implicit strides; some cases
are first sliced by the same random index (layout_cases.py). An operation
must give NumPy's shape, NumPy's strides on axes of extent > 1, and the same
byte offset for every element, measured from the unsliced array's pointer.
Empty results of slicing, reshape and squeeze have all-zero strides (as
cuda.core makes them), where NumPy keeps its strides.
"""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import offset_model as om
from layout_cases import (
    ViewSpec,
    assert_same_elements,
    build,
    dtype_of,
    index_view,
    indices,
    reshape_cases,
    spec_shape,
    view_specs,
    view_strides,
)
from strided import StridedLayout


def element_offsets(layout):
    return om.offsets(layout.shape, om.layout_strides(layout), layout.slice_offset)


def with_args(arg_strategy):
    """Pairs (spec, arg) where arg is drawn from arg_strategy(shape of spec)."""
    return view_specs().flatmap(lambda spec: st.tuples(st.just(spec), arg_strategy(spec_shape(spec))))


# ---- construction and queries ------------------------------------------------


@given(view_specs())
@example(ViewSpec((2, 3), (-3, 1), 4))
@example(ViewSpec((0, 3), (3, 1), 8))
@example(ViewSpec((5, 3, 7), (21, 7, 1), 1, key=(slice(1, None), slice(None, None, -1))))
def test_layout_matches_array(spec):
    a, layout, base = build(spec)
    assert layout.ndim == a.ndim
    assert layout.itemsize == a.itemsize
    assert layout.slice_offset_in_bytes == layout.slice_offset * layout.itemsize
    assert layout.slice_offset_in_bytes == om.data_ptr(a) - base
    if spec.implicit and spec.key is None:
        assert layout.strides is None and layout.strides_in_bytes is None
    else:
        assert layout.strides_in_bytes == tuple(s * layout.itemsize for s in layout.strides)
        if spec.key is None:
            assert layout.strides_in_bytes == a.strides
    assert_same_elements(layout, a, base)


@given(view_specs())
def test_offset_bounds_and_required_size(spec):
    _, layout, _ = build(spec)
    offs = element_offsets(layout)
    assert layout.volume == offs.size
    bounds = (int(offs.min()), int(offs.max())) if offs.size else (0, -1)
    assert layout.offset_bounds == bounds
    assert (layout.min_offset, layout.max_offset) == bounds
    if bounds[0] < 0:
        with pytest.raises(ValueError, match="ambiguous"):
            layout.required_size_in_bytes()
    else:
        assert layout.required_size_in_bytes() == (bounds[1] + 1) * layout.itemsize


@given(view_specs())
@example(ViewSpec((5, 1, 7), (7, 7, 1), 1))
@example(ViewSpec((5, 1, 7), (1, 5, 5), 1))
def test_contiguity_flags(spec):
    a, layout, _ = build(spec)
    assert layout.is_contiguous_c == a.flags.c_contiguous
    assert layout.is_contiguous_f == a.flags.f_contiguous
    c_in_order = a.transpose(layout.stride_order).flags.c_contiguous
    assert layout.is_contiguous_any == (a.flags.c_contiguous or a.flags.f_contiguous or c_in_order)
    assert layout.is_dense == (layout.is_contiguous_any and layout.slice_offset == 0)
    if layout.is_dense:
        assert sorted(element_offsets(layout).ravel().tolist()) == list(range(layout.volume))


@given(view_specs())
def test_stride_order(spec):
    _, layout, _ = build(spec)
    order = layout.stride_order
    if layout.strides is None:
        assert order == tuple(range(layout.ndim))
    else:
        assert order == om.stride_order(layout.shape, layout.strides)


@given(view_specs())
@example(ViewSpec((3, 2), (2, 3), 1))
@example(ViewSpec((2, 3), (0, 1), 4))
def test_is_unique(spec):
    _, layout, _ = build(spec)
    strides = om.layout_strides(layout)
    if layout.is_unique:
        assert om.is_unique(layout.shape, strides)
    if layout.volume == 0:
        assert layout.is_unique
    elif any(s == 0 and n > 1 for n, s in zip(layout.shape, strides)):
        assert not layout.is_unique


@given(view_specs())
def test_hash_consistent_with_eq(spec):
    _, first, _ = build(spec)
    _, second, _ = build(spec)
    assert first == second and not first != second
    assert hash(first) == hash(second)
    same_axes = first.permuted(tuple(range(first.ndim)))
    if first.strides is None:
        assert same_axes != first
    else:
        assert same_axes == first and hash(same_axes) == hash(first)


# ---- operations ----------------------------------------------------------------


@given(with_args(lambda shape: indices(shape, allow_out_of_range=True)))
@example((ViewSpec((3, 5), (5, 1), 2), (slice(5, 4),)))
@example((ViewSpec((7,), (1,), 4), slice(-3, 2, -2)))
@example((ViewSpec((11, 12, 3), (36, 3, 1), 1), (0, 1, 5)))
@example((ViewSpec((0,), (1,), 1), ()))
@example((ViewSpec((2, 0, 3), (3, 3, 1), 2), (1,)))
@example((ViewSpec((1, 2, 0), (2, 1, 1), 1, key=(0,)), (1,)))
@example((ViewSpec((1,), (1,), 1, key=(slice(None, 0, None),)), ()))
@example((ViewSpec((2, 1, 1, 1), (1, 1, 1, 1), 1, key=(slice(None), slice(None, 0), 0, 0)), (1,)))
def test_sliced(case):
    spec, key = case
    a, layout, base = build(spec)
    try:
        b = index_view(a, key)
    except IndexError:
        with pytest.raises(ValueError, match="out of range for axis"):
            layout[key]
        with pytest.raises(ValueError, match="out of range for axis"):
            layout.sliced(key)
        return
    result = layout[key]
    assert layout.sliced(key) == result
    assert result.itemsize == layout.itemsize
    # After an empty slice has zeroed the strides (as cuda.core does, where
    # NumPy keeps them), further indexing cannot move the offset as NumPy's
    # pointer moves; an empty layout addresses nothing, so only the layouts
    # whose strides still agree with NumPy's are compared.
    if layout.volume > 0 or layout.strides_in_bytes == a.strides:
        assert result.slice_offset_in_bytes == om.data_ptr(b) - base
    items = key if isinstance(key, tuple) else (key,)
    empty_slice = any(
        isinstance(k, slice) and len(range(*k.indices(n))) == 0 for k, n in zip(items, layout.shape)
    )
    if empty_slice:
        assert result.strides == (0,) * b.ndim
    elif layout.volume == 0:
        # An input that is already empty may carry zeroed strides (from an
        # earlier empty slice) where NumPy keeps others: every axis keeps the
        # layout's own stride, times the step where it is sliced.
        # (Implicit strides of an empty layout are all 0.)
        strides = layout.strides if layout.strides is not None else (0,) * layout.ndim
        expected = [
            s * k.indices(n)[2] for k, s, n in zip(items, strides, layout.shape) if isinstance(k, slice)
        ] + list(strides[len(items):])
        assert result.strides == tuple(expected)
    else:
        assert result.strides_in_bytes == b.strides
    assert_same_elements(result, b, base)


def permutations_of(shape):
    n = len(shape)
    signs = st.lists(st.booleans(), min_size=n, max_size=n)
    return st.tuples(st.permutations(range(n)), signs).map(
        lambda ps: tuple(p - n if neg else p for p, neg in zip(*ps))
    )


@given(with_args(permutations_of))
def test_permuted(case):
    spec, perm = case
    a, layout, base = build(spec)
    axes = [p % layout.ndim for p in perm]
    result = layout.permuted(perm)
    strides = om.layout_strides(layout)
    assert result.strides == tuple(strides[p] for p in axes)
    assert result.slice_offset == layout.slice_offset
    assert_same_elements(result, a.transpose(axes), base)


@given(reshape_cases())
@example((ViewSpec((3, 1, 4), (4, 12, 1), 4), (12,)))
@example((ViewSpec((10, 10, 10), (100, 10, 1), 2, key=(slice(None, None, -1), slice(None, None, -1))), (10, 100)))
@example((ViewSpec((7, 6, 5), (30, 5, 1), 1), (-1, 6, -1)))
@example((ViewSpec((0,), (1,), 1), (1, -1)))
@example((ViewSpec((), (), 1, True), (-2,)))
@example((ViewSpec((6,), (1,), 1), (-1, 2, -1, -2)))
def test_reshaped(case):
    spec, new_shape = case
    a, layout, base = build(spec)
    # NumPy takes any negative extent for "unknown"; cuda.core and strided take only -1.
    unknown = [e for e in new_shape if e < 0]
    if unknown and min(unknown) < -1:
        first = next(i for i, e in enumerate(new_shape) if e < -1)
        message = "at most one -1" if new_shape[:first].count(-1) > 1 else "Extents must be non-negative"
        with pytest.raises(ValueError, match=message):
            layout.reshaped(new_shape)
        return
    try:
        b = a.reshape(new_shape, copy=False)
    except ValueError:
        with pytest.raises(ValueError):
            layout.reshaped(new_shape)
        return
    result = layout.reshaped(new_shape)
    assert result.shape == b.shape
    assert result.itemsize == layout.itemsize
    assert result.slice_offset == layout.slice_offset
    if b.size == 0:
        assert result.strides == (0,) * b.ndim
    else:
        assert_same_elements(result, b, base)


@given(view_specs())
def test_squeezed(spec):
    a, layout, base = build(spec)
    result = layout.squeezed()
    assert result.slice_offset == layout.slice_offset
    if a.size == 0:
        assert (result.shape, result.strides) == ((0,), (0,))
        return
    strides = om.layout_strides(layout)
    assert result.strides == tuple(s for n, s in zip(layout.shape, strides) if n != 1)
    assert_same_elements(result, np.squeeze(a), base)


@st.composite
def unsqueeze_axes(draw, shape):
    k = draw(st.integers(0, 3))
    if k == 0:
        return ()
    out_ndim = len(shape) + k
    positions = draw(st.lists(st.integers(0, out_ndim - 1), min_size=k, max_size=k, unique=True))
    axes = tuple(p - out_ndim if draw(st.booleans()) else p for p in positions)
    return axes[0] if k == 1 and draw(st.booleans()) else axes


@given(with_args(unsqueeze_axes))
@example((ViewSpec((3, 4), (4, 1), 4), (0, 3)))
def test_unsqueezed(case):
    spec, axes = case
    a, layout, base = build(spec)
    result = layout.unsqueezed(axes)
    if axes == ():
        assert result is layout
        return
    axes = axes if isinstance(axes, tuple) else (axes,)
    out_ndim = layout.ndim + len(axes)
    new = {p % out_ndim for p in axes}
    strides = om.layout_strides(layout)
    want_shape, want_strides, q = [], [], 0
    for pos in range(out_ndim):
        if pos in new:
            want_shape.append(1)
            if q < layout.ndim:
                want_strides.append(layout.shape[q] * strides[q])
            else:
                want_strides.append(strides[-1] if layout.ndim else 1)
        else:
            want_shape.append(layout.shape[q])
            want_strides.append(strides[q])
            q += 1
    assert (result.shape, result.strides) == (tuple(want_shape), tuple(want_strides))
    assert result.slice_offset == layout.slice_offset
    assert_same_elements(result, np.expand_dims(a, tuple(sorted(new))), base)


@st.composite
def flatten_args(draw, shape):
    n = len(shape)
    how = draw(st.sampled_from(("all", "range", "mask") if n else ("all", "mask")))
    if how == "all":
        return ()
    if how == "mask":
        return (draw(st.integers(0, 2 ** (n + 2) - 1)),)
    axes = st.integers(-n, n - 1)
    if draw(st.integers(0, 9)) == 9:
        axes |= st.sampled_from((n, -n - 1))  # out of range
    return (draw(axes), draw(axes))


@given(with_args(flatten_args))
@example((ViewSpec((5, 1, 2, 4, 3), (24, 24, 12, 3, 1), 2, key=(slice(None),) * 4 + (slice(None, None, -2),)), (1, 2)))
@example((ViewSpec((5, 1, 7), (1, 5, 5), 1), ()))
@example((ViewSpec((), (), 8), ()))
@example((ViewSpec((1, 1), (0, 1), 1), ()))
def test_flattened(case):
    spec, args = case
    _, layout, _ = build(spec)
    n = layout.ndim
    strides = om.layout_strides(layout)
    if len(args) == 2:
        start, end = args
        if not -n <= start < n:
            with pytest.raises(ValueError, match="Invalid start axis"):
                layout.flattened(start, end)
            return
        if not -n <= end < n:
            with pytest.raises(ValueError, match="Invalid end axis"):
                layout.flattened(start, end)
            return
        if start % n > end % n:
            with pytest.raises(ValueError, match="comes after end axis"):
                layout.flattened(start, end)
            return
        result = layout.flattened(start, end)
        allowed = sum(1 << j for j in range(start % n + 1, end % n + 1))
    elif args:
        result = layout.flattened(mask=args[0])
        allowed = args[0]
    else:
        result = layout.flattened()
        allowed = 2**64 - 2
    want_shape, want_strides, _, _ = om.flatten(layout.shape, strides, allowed)
    assert (result.shape, result.strides) == (want_shape, want_strides)
    assert result.itemsize == layout.itemsize
    assert result.slice_offset == layout.slice_offset
    np.testing.assert_array_equal(
        om.layout_byte_offsets(result).ravel(), om.layout_byte_offsets(layout).ravel()
    )


@given(view_specs())
@example(ViewSpec((3, 1, 4), (4, 12, 1), 2))
@example(ViewSpec((4, 5, 3), (1, 12, 4), 4))
def test_flattened_axis_mask(spec):
    _, layout, _ = build(spec)
    mask = layout.flattened_axis_mask()
    if layout.strides is None:
        assert mask == max((1 << layout.ndim) - 2, 0)
    else:
        assert mask == om.flatten(layout.shape, layout.strides)[2]
    full = layout.flattened()
    assert layout.flattened(mask=mask) == full
    assert full.flattened_axis_mask() == 0


@st.composite
def broadcast_targets(draw, shape):
    lead = draw(st.lists(st.sampled_from((1, 2, 3, 0)), max_size=2))
    out = [draw(st.sampled_from((1, 0, 2, 3))) if n == 1 else n for n in shape]
    if shape and draw(st.integers(0, 9)) == 9:
        k = draw(st.integers(0, len(shape) - 1))
        out[k] += 1
    if shape and draw(st.integers(0, 19)) == 19:
        return tuple(out[1:])
    return tuple(lead + out)


@given(with_args(broadcast_targets))
@example((ViewSpec((5, 11), (11, 1), 4, key=(slice(None, None, -1), slice(3, 4))), (4, 5, 12)))
def test_broadcast_to(case):
    spec, target = case
    a, layout, base = build(spec)
    try:
        b = np.broadcast_to(a, target)
    except ValueError:
        with pytest.raises(ValueError):
            layout.broadcast_to(target)
        return
    result = layout.broadcast_to(target)
    lead = len(target) - layout.ndim
    strides = om.layout_strides(layout)
    kept = [s if n == t else 0 for n, s, t in zip(layout.shape, strides, target[lead:])]
    assert result.shape == tuple(target)
    assert result.strides == (0,) * lead + tuple(kept)
    assert result.slice_offset == layout.slice_offset
    assert_same_elements(result, b, base)
    if result.volume and any(s == 0 and n > 1 for n, s in zip(result.shape, result.strides)):
        assert not result.is_unique
    elif all(t == 1 for t in target[:lead]) and target[lead:] == layout.shape:
        assert result.is_unique == layout.is_unique


def dense_orders(shape):
    return st.sampled_from(("K", "C", "F")) | permutations_of(shape)


@given(with_args(dense_orders))
@example((ViewSpec((5, 3, 7), (21, 7, 1), 1, key=(slice(1, None), slice(None, None, -1))), "K"))
@example((ViewSpec((4, 3), (0, 1), 2), "K"))
def test_to_dense(case):
    spec, order = case
    a, layout, _ = build(spec)
    result = layout.to_dense(order)
    assert result == StridedLayout.dense_like(layout, order)
    assert result.shape == layout.shape and result.itemsize == layout.itemsize
    assert result.is_dense and result.slice_offset == 0
    assert result.required_size_in_bytes() == layout.volume * layout.itemsize
    assert result.offset_bounds == (0, layout.volume - 1)
    assert sorted(element_offsets(result).ravel().tolist()) == list(range(layout.volume))
    if isinstance(order, tuple):
        assert result is not layout
        assert result == StridedLayout.dense(layout.shape, layout.itemsize, order)
        return
    keep = {
        "K": layout.is_dense,
        "C": layout.is_dense and layout.is_contiguous_c,
        "F": layout.is_dense and layout.is_contiguous_f,
    }[order]
    if keep:
        assert result is layout
    else:
        dense_order = layout.stride_order if order == "K" else order
        assert result == StridedLayout.dense(layout.shape, layout.itemsize, dense_order)
    if order != "K" and layout.volume:
        want = a.copy(order=order)
        assert_same_elements(result, want, om.data_ptr(want))


def repack_error(shape, strides, slice_offset, old, new, data_ptr, axis):
    """The message fragment repacked must raise with, or None."""
    ndim = len(shape)
    if new > old:
        if new % old:
            return "must be divisible by the itemsize"
        if not -ndim <= axis < ndim:
            return "Invalid axis"
        ax = axis % ndim
        if data_ptr % new:
            return "must be aligned to the packed itemsize"
        if strides[ax] != 1:
            return f"axis {ax} stride must be 1"
        v = new // old
        if shape[ax] == 0:
            return "extent must be non-zero"
        if shape[ax] % v:
            return "extent .* must be divisible by"
        if slice_offset % v:
            return "slice offset .* must be divisible by"
        if any(s % v for i, s in enumerate(strides) if i != ax):
            return "stride .* must be divisible by"
        return None
    if not -ndim <= axis < ndim:
        return "Invalid axis"
    ax = axis % ndim
    if new <= 0:
        return "new itemsize must be greater than zero"
    if old % new:
        return "must be divisible by the new itemsize"
    if shape[ax] == 0:
        return "extent must be non-zero"
    if strides[ax] != 1:
        return f"axis {ax} stride must be 1"
    return None


@st.composite
def repack_cases(draw):
    """(spec, (new itemsize, axis, data_ptr, keep_dim)); the axis is most
    often one of stride 1, as repacking needs."""
    min_ndim = 0 if draw(st.integers(0, 9)) == 9 else 1
    spec = draw(view_specs(min_ndim, itemsizes=(1, 2, 4, 8, 3, 5, 6), unit_stride=draw(st.booleans())))
    shape, strides = view_strides(spec)
    old, n = spec.itemsize, len(shape)
    bigger = [old * k for k in (2, 3, 4)]
    smaller = [old // d for d in (2, 3, 4, 5, 8) if old % d == 0]
    new = draw(st.sampled_from(bigger + smaller + [old]) | st.integers(1, 20))
    unit = [k for k, s in enumerate(strides) if s == 1]
    if unit and draw(st.integers(0, 3)):
        axis = draw(st.sampled_from(unit))
        axis -= draw(st.sampled_from((0, n)))
    elif draw(st.integers(0, 9)) == 9:
        axis = draw(st.integers(-n - 1, n))
    else:
        axis = draw(st.integers(-n, n - 1)) if n else -1
    data_ptr = draw(st.sampled_from((0, 0, 0, new, 3 * new, 64 * new, new + 1, -new)))
    return spec, (new, axis, data_ptr, draw(st.booleans()))


@given(repack_cases())
@example((ViewSpec((5, 4), (4, 1), 4), (6, -1, 0, True)))
@example((ViewSpec((6,), (1,), 8), (3, -1, 0, True)))
@example((ViewSpec((5, 4), (4, 1), 4), (16, -1, 0, False)))
def test_repacked(case):
    spec, (new, axis, data_ptr, keep_dim) = case
    a, layout, base = build(spec)
    old = layout.itemsize
    if new == old:
        assert layout.repacked(new, data_ptr=data_ptr, axis=axis, keep_dim=keep_dim) is layout
        return
    strides = om.layout_strides(layout)
    error = repack_error(layout.shape, strides, layout.slice_offset, old, new, data_ptr, axis)
    if error:
        with pytest.raises(ValueError, match=error):
            layout.repacked(new, data_ptr=data_ptr, axis=axis, keep_dim=keep_dim)
        return
    result = layout.repacked(new, data_ptr=data_ptr, axis=axis, keep_dim=keep_dim)
    ax = axis % layout.ndim
    assert result.itemsize == new
    assert result.volume * new == layout.volume * old
    assert result.slice_offset * new == layout.slice_offset * old
    b = np.moveaxis(np.moveaxis(a, ax, -1).view(dtype_of(new)), -1, ax)
    if not keep_dim and new > old and b.shape[ax] == 1:
        b = b.squeeze(ax)
    assert_same_elements(result, b, base)
    if result.ndim == layout.ndim:
        back = result.repacked(old, axis=ax)
        assert (back.shape, back.strides, back.slice_offset) == (
            layout.shape,
            strides,
            layout.slice_offset,
        )
