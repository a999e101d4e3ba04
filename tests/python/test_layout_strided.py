"""strided's own decisions for StridedLayout and its extras.

Where strided departs from cuda.core on purpose: extent-1 axes never block
reshape and flatten; repacked requires itemsizes that divide one another and
max_compatible_itemsize returns a multiple of the itemsize; the axis mask is
overflow-checked; slicing takes any integer with __index__; layouts hash,
consistently with ==; is_unique is exact on layouts derived from dense ones.
Then the extras coalesced(), format() and format_grid(), immutability, and an
arithmetic edge table: extents, strides and itemsizes at 0, 1, 2**31 +- 1,
2**62 and the int64 limits give either the right result or the right
exception.
"""

import math
import random

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import offset_model as om
import strided
from layout_cases import (
    ITEMSIZES,
    ViewSpec,
    assert_same_elements,
    build,
    make_array,
    prime_factors,
    reshape_targets,
    shapes,
    spec_shape,
    view_specs,
)
from strided import StridedLayout

INT64_MIN, INT64_MAX = om.INT64_MIN, om.INT64_MAX


def element_offsets(layout):
    return om.offsets(layout.shape, om.layout_strides(layout), layout.slice_offset)


# ---- extent-1 axes never block reshape and flatten -------------------------


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
def test_unit_axis_with_foreign_stride_does_not_block_reshape(itemsize):
    layout = StridedLayout.dense((1, 3, 4), itemsize).permuted((1, 0, 2))
    assert (layout.shape, layout.strides) == ((3, 1, 4), (4, 12, 1))
    flat = layout.reshaped((12,))
    assert (flat.shape, flat.strides) == ((12,), (1,))
    assert layout.flattened_axis_mask() == 0b110
    assert layout.flattened() == StridedLayout((12,), (1,), itemsize)


def test_f_order_unit_axis_flattens():
    layout = StridedLayout.dense((5, 1, 7), 1, "F")
    assert layout.strides == (1, 5, 5)
    assert layout.flattened_axis_mask() == 0b010
    flat = layout.flattened()
    assert (flat.shape, flat.strides) == ((5, 7), (1, 5))


@st.composite
def unit_axis_reshapes(draw):
    """A dense layout in a random order, sliced with random steps, with
    extent-1 axes of random strides inserted; and a reshape target."""
    shape = draw(shapes(0, 4, st.integers(2, 4)))
    itemsize = draw(st.sampled_from(ITEMSIZES))
    order = draw(st.permutations(range(len(shape))))
    strides, run = [0] * len(shape), 1
    for ax in reversed(order):
        strides[ax] = run
        run *= shape[ax]
    key = tuple(
        slice(draw(st.sampled_from((None, 1))), None, draw(st.sampled_from((1, 1, -1, 2, -2))))
        for _ in shape
    )
    a = make_array(shape, strides, itemsize)[key]
    dims = [(n, s // itemsize) for n, s in zip(a.shape, a.strides)]
    for _ in range(draw(st.integers(1, 3))):
        dims.insert(draw(st.integers(0, len(dims))), (1, draw(st.integers(-50, 50))))
    spec = ViewSpec(tuple(n for n, _ in dims), tuple(s for _, s in dims), itemsize)
    groups = om.flatten(spec.shape, spec.strides)[0] if draw(st.booleans()) else None
    return spec, draw(reshape_targets(om.volume(spec.shape), groups))


@given(unit_axis_reshapes())
@example((ViewSpec((3, 1, 4), (4, 12, 1), 4), (12,)))
@example((ViewSpec((1, 2, 1, 3), (-7, 3, 40, 1), 2), (6, 1)))
def test_reshape_with_unit_axes_matches_numpy(case):
    spec, new_shape = case
    a, layout, base = build(spec)
    if any(e < -1 for e in new_shape) or new_shape.count(-1) > 1:
        with pytest.raises(ValueError):
            layout.reshaped(new_shape)
        return
    try:
        b = a.reshape(new_shape, copy=False)
    except ValueError:
        with pytest.raises(ValueError):
            layout.reshaped(new_shape)
        return
    assert_same_elements(layout.reshaped(new_shape), b, base)
    flat = layout.flattened()
    assert 1 not in flat.shape or flat.shape == (1,)
    np.testing.assert_array_equal(element_offsets(flat).ravel(), element_offsets(layout).ravel())


# ---- repack and max_compatible_itemsize: itemsizes that divide ------------


def test_repack_to_a_non_multiple_itemsize_raises():
    with pytest.raises(ValueError, match=r"The new itemsize \(6\) must be divisible by the itemsize \(4\)\."):
        StridedLayout.dense((5, 4), 4).repacked(6)


def test_repack_to_a_non_divisor_itemsize_raises():
    with pytest.raises(ValueError, match=r"The itemsize \(8\) must be divisible by the new itemsize \(3\)\."):
        StridedLayout.dense((5, 4), 8).repacked(3)


def test_repack_succeeds_exactly_for_dividing_itemsizes():
    extent = 27720  # divisible by 1..12, so only the itemsizes decide
    for old in range(1, 13):
        layout = StridedLayout.dense((3, extent), old)
        for new in range(1, 13):
            if new % old and old % new:
                with pytest.raises(ValueError, match="must be divisible by"):
                    layout.repacked(new)
                continue
            result = layout.repacked(new)
            assert result.itemsize == new
            assert result.volume * new == layout.volume * old, (old, new)
            assert result.repacked(old) == layout


def test_max_compatible_itemsize_of_itemsize_3():
    layout = StridedLayout.dense((4,), 3)
    assert layout.max_compatible_itemsize() == 3
    assert layout.max_compatible_itemsize(max_itemsize=12) == 12


@st.composite
def max_itemsize_cases(draw):
    spec = draw(view_specs(min_ndim=1, itemsizes=(1, 2, 4, 8, 3, 5, 6)))
    ndim = len(spec_shape(spec))
    max_itemsize = spec.itemsize * draw(st.integers(1, 8)) + draw(st.sampled_from((0, 0, 1, 2)))
    data_ptr = draw(st.sampled_from((0, 0, 8, 12, 48, 96, 7, -24)))
    axis = draw(st.integers(-ndim, ndim - 1))
    return spec, max_itemsize, data_ptr, axis


def repack_succeeds(layout, itemsize, data_ptr, axis):
    try:
        layout.repacked(itemsize, data_ptr=data_ptr, axis=axis)
    except ValueError:
        return False
    return True


@given(max_itemsize_cases())
@example((ViewSpec((4,), (1,), 3), 16, 0, -1))
@example((ViewSpec((4,), (1,), 3), 12, 0, -1))
@example((ViewSpec((16, 5, 4, 6), (120, 24, 6, 1), 2), 16, 0, -1))
def test_max_compatible_itemsize(case):
    spec, max_itemsize, data_ptr, axis = case
    _, layout, _ = build(spec)
    itemsize = layout.itemsize
    result = layout.max_compatible_itemsize(max_itemsize=max_itemsize, data_ptr=data_ptr, axis=axis)
    assert result % itemsize == 0 and itemsize <= result <= max_itemsize
    assert repack_succeeds(layout, result, data_ptr, axis)
    bound = math.gcd(max_itemsize, abs(data_ptr))
    accepted = [
        m
        for m in range(2 * itemsize, max_itemsize + 1, itemsize)
        if bound % m == 0 and repack_succeeds(layout, m, data_ptr, axis)
    ]
    assert result == max([itemsize] + accepted)


# ---- overflow of the axis mask, checked as in flattened() -----------------


@pytest.mark.parametrize(
    "shape,strides",
    [((2, 2), (1, 2**63 - 2)), ((2, 3), (1, 2**62 - 1)), ((3, 1, 2), (1, 5, 2**62))],
)
def test_flattened_axis_mask_overflow_raises(shape, strides):
    layout = StridedLayout(shape, strides, 1)
    with pytest.raises(OverflowError):
        layout.flattened_axis_mask()
    with pytest.raises(OverflowError):
        layout.flattened()


@pytest.mark.parametrize("mask", [-1, 2**64, -(2**63)])
def test_flatten_mask_out_of_range_raises(mask):
    with pytest.raises(OverflowError):
        StridedLayout.dense((2, 3), 1).flattened(mask=mask)


def test_flatten_mask_ignores_bit_0_and_high_bits():
    layout = StridedLayout.dense((2, 3), 1)
    assert layout.flattened(mask=2**64 - 1) == layout.flattened()
    assert layout.flattened(mask=0b1) == layout.flattened(mask=0)


# ---- slicing with any integer that has __index__ ---------------------------


class Two:
    def __index__(self):
        return 2


def test_slicing_accepts_index_integers():
    layout = StridedLayout.dense((5, 6, 7), 4)
    assert layout[np.int64(1), np.int32(2) :] == layout[1, 2:]
    assert layout[np.int64(-1)] == layout[-1]
    assert layout[np.uint8(1) : np.int16(5) : np.int64(2)] == layout[1:5:2]
    assert layout.sliced((np.intp(3),)) == layout[3]
    assert layout[Two(), :: Two()] == layout[2, ::2]
    # A bool is not an index (NumPy would read it as a mask).
    for flag in (True, False):
        with pytest.raises(TypeError, match="^index must be an int, not bool$"):
            layout[flag]


@pytest.mark.parametrize("index", [1.0, np.float64(1.0), "1", None, Ellipsis, [1], (0, 1.5)])
def test_slicing_rejects_non_integers(index):
    with pytest.raises(TypeError):
        StridedLayout.dense((5, 6, 7), 4)[index]


def test_slicing_rejects_non_integer_slice_bounds():
    with pytest.raises(TypeError):
        StridedLayout.dense((5,), 4)[1.5:]


# ---- hashing (consistent with ==) and equality -----------------------------


def test_equal_layouts_hash_equal():
    first, second = StridedLayout((5, 3, 7), (21, 7, 1), 4), StridedLayout.dense((5, 3, 7), 4)
    assert first == second and hash(first) == hash(second)
    first, second = first[1:, ::-1], second[1:, ::-1]
    assert first == second and hash(first) == hash(second)
    assert StridedLayout((2, 3), None, 4) == StridedLayout((2, 3), None, 4)
    assert hash(StridedLayout((2, 3), None, 4)) == hash(StridedLayout((2, 3), None, 4))


def test_implicit_and_explicit_strides_are_unequal():
    implicit, explicit = StridedLayout((2, 3), None, 4), StridedLayout.dense((2, 3), 4)
    assert implicit != explicit and not implicit == explicit
    assert len({implicit, explicit}) == 2


def test_layouts_as_dict_keys_and_set_members():
    names = {StridedLayout.dense((4, 5), 2): "C", StridedLayout.dense((4, 5), 2, "F"): "F"}
    assert names[StridedLayout((4, 5), (5, 1), 2)] == "C"
    assert names[StridedLayout((4, 5), (1, 4), 2)] == "F"
    assert StridedLayout((4, 5), None, 2) not in names
    assert len({StridedLayout.dense((3,), 1) for _ in range(3)}) == 1
    assert len({StridedLayout.dense((3,), 1), StridedLayout.dense((3,), 2)}) == 2


# ---- is_unique: exact on layouts made from dense ones ----------------------
# by permute, slice (either step sign), squeeze, unsqueeze, reshape and flatten;
# False for a non-empty layout with a stride-0 axis of extent > 1.

CHAIN_OPS = ("slice", "permute", "reshape", "unsqueeze", "slice", "reshape", "squeeze", "flatten")


def random_factorization(rng, n):
    """Extents > 1 with product n > 0, in random order."""
    dims = []
    for p in prime_factors(n):
        if dims and rng.random() < 0.5:
            dims[rng.randrange(len(dims))] *= p
        else:
            dims.append(p)
    rng.shuffle(dims)
    return dims


def random_reshape(rng, layout):
    """A new shape for layout: a factorization of its volume or, half of the
    time, of each group of its flattened form (which needs no copy)."""
    if layout.volume == 0:
        dims = [rng.choice((0, 1, 2, 3)) for _ in range(rng.randint(0, 2))]
        dims.insert(rng.randint(0, len(dims)), 0)
        return tuple(dims)
    if rng.random() < 0.5:
        groups = om.flatten(layout.shape, om.layout_strides(layout))[0]
        dims = [e for g in groups for e in random_factorization(rng, g)]
    else:
        dims = random_factorization(rng, layout.volume)
    for _ in range(rng.randint(0, 2)):
        dims.insert(rng.randint(0, len(dims)), 1)
    return tuple(dims)


def random_index(rng, shape):
    """Integers, whole-axis slices with steps of either sign, and slices of
    a random range (forwards or backwards) for the leading axes."""
    key = []
    for e in shape[: rng.randint(0, len(shape))]:
        kind = rng.random()
        if e and kind < 0.25:
            key.append(rng.randrange(-e, e))
        elif kind < 0.6:
            key.append(slice(None, None, rng.choice((1, 2, 3, -1, -2, -3))))
        else:
            lo, hi = sorted(rng.randint(0, e) for _ in range(2))
            step = rng.choice((1, 2, -1, -2))
            key.append(slice(lo, hi, step) if step > 0 else slice(hi - 1, lo - 1 if lo else None, step))
    return tuple(key)


def apply_op(layout, name, seed):
    """One operation of the kind name, its arguments drawn from seed."""
    rng = random.Random(f"{name}:{seed}")
    n = layout.ndim
    if name == "permute":
        return layout.permuted(tuple(rng.sample(range(n), n)))
    if name == "slice":
        return layout[random_index(rng, layout.shape)]
    if name == "squeeze":
        return layout.squeezed()
    if name == "unsqueeze":
        k = rng.randint(0, 2) if n < 8 else 0
        return layout.unsqueezed(tuple(rng.sample(range(n + k), k)))
    if name == "reshape":
        try:
            return layout.reshaped(random_reshape(rng, layout))
        except ValueError:  # needs a copy: test_layout_properties checks when
            return layout
    if n and rng.random() < 0.5:
        start, end = sorted((rng.randrange(n), rng.randrange(n)))
        return layout.flattened(start, end)
    return layout.flattened()


@st.composite
def dense_chains(draw):
    """A dense layout (shape, itemsize, order) and 1-8 operations on it."""
    shape = draw(shapes(1, 4, st.sampled_from((3, 2, 4, 1, 5))))
    order = draw(st.sampled_from(("C", "F")) | st.permutations(range(len(shape))).map(tuple))
    ops = st.tuples(st.sampled_from(CHAIN_OPS), st.integers(0, 2**16))
    return shape, draw(st.sampled_from(ITEMSIZES)), order, draw(st.lists(ops, min_size=1, max_size=8))


@given(dense_chains())
@example(((3, 1, 4), 4, (1, 0, 2), [("reshape", 0)]))
@example(((5, 3, 7), 2, "C", [("slice", 1), ("permute", 2), ("flatten", 3), ("reshape", 4)]))
def test_layouts_derived_from_dense_are_unique(chain):
    shape, itemsize, order, ops = chain
    layout = StridedLayout.dense(shape, itemsize, order)
    for step, (name, seed) in enumerate(ops):
        layout = apply_op(layout, name, seed + step)
        assert layout.is_unique, (name, seed, layout)
        assert om.is_unique(layout.shape, om.layout_strides(layout)), (name, seed, layout)


@st.composite
def broadcast_like(draw):
    spec = draw(view_specs(min_ndim=1, implicit=False, sliced=False))
    axes = [k for k, n in enumerate(spec.shape) if n > 1]
    if not axes or om.volume(spec.shape) == 0:
        return spec
    k = draw(st.sampled_from(axes))
    return spec._replace(strides=spec.strides[:k] + (0,) + spec.strides[k + 1 :])


@given(broadcast_like())
def test_stride_0_axis_is_never_unique(spec):
    _, layout, _ = build(spec)
    if layout.volume and any(s == 0 and n > 1 for n, s in zip(layout.shape, layout.strides)):
        assert not layout.is_unique


# ---- coalesced() ---------------------------------------------------------------


@pytest.mark.parametrize(
    "layout,shape,strides",
    [
        (StridedLayout.dense((4, 6), 1), (24,), (1,)),
        (StridedLayout((4, 6), None, 1), (24,), (1,)),
        (StridedLayout.dense((4, 6), 1)[:, ::2], (12,), (2,)),
        (StridedLayout((4, 1, 6), (6, 99, 1), 2), (24,), (1,)),
        (StridedLayout((2, 3), (1, 2), 1), (2, 3), (1, 2)),
        (StridedLayout.dense((4, 6), 1, "F"), (4, 6), (1, 4)),
        (StridedLayout((0, 3), (5, 1), 2), (0,), (0,)),
        (StridedLayout.dense((1, 1), 4), (), ()),
        (StridedLayout.dense((), 4), (), ()),
        (StridedLayout((3, 2), (0, 0), 1), (6,), (0,)),
    ],
)
def test_coalesced_examples(layout, shape, strides):
    result = layout.coalesced()
    assert (result.shape, result.strides) == (shape, strides)
    assert result.itemsize == layout.itemsize and result.slice_offset == layout.slice_offset


def test_coalesced_single_element_keeps_offset():
    result = StridedLayout.dense((3, 4), 1)[1:2, 2:3].coalesced()
    assert (result.shape, result.strides, result.slice_offset) == ((), (), 6)


@given(view_specs())
@example(ViewSpec((2, 2), (2, 1), 1))
@example(ViewSpec((3, 1, 4), (4, 12, 1), 8, key=(slice(None, None, -1),)))
def test_coalesced(spec):
    _, layout, _ = build(spec)
    result = layout.coalesced()
    assert (result.shape, result.strides) == om.coalesce(layout.shape, om.layout_strides(layout))
    assert result.itemsize == layout.itemsize
    assert result.slice_offset == layout.slice_offset
    np.testing.assert_array_equal(element_offsets(result).ravel(), element_offsets(layout).ravel())


# ---- format() and format_grid() ----------------------------------------------------


def tuple_text(values):
    return "(" + ",".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def expected_format(layout):
    text = tuple_text(layout.shape) + ":" + tuple_text(om.layout_strides(layout))
    return text + (f"{layout.slice_offset:+d}" if layout.slice_offset else "")


@pytest.mark.parametrize(
    "layout,text",
    [
        (StridedLayout.dense((4, 6), 1), "(4,6):(6,1)"),
        (StridedLayout.dense((5,), 2), "(5,):(1,)"),
        (StridedLayout.dense((), 2), "():()"),
        (StridedLayout.dense((5, 3, 7), 1)[1:, ::-1], "(4,3,7):(21,-7,1)+35"),
        (StridedLayout((4, 6), None, 1), "(4,6):(6,1)"),
        (StridedLayout((3,), (-1,), 1)[1:], "(2,):(-1,)-1"),
        (StridedLayout((2,), (-INT64_MAX,), 1), f"(2,):({-INT64_MAX},)"),
    ],
)
def test_format_examples(layout, text):
    assert layout.format() == text


@given(view_specs())
def test_format(spec):
    _, layout, _ = build(spec)
    assert layout.format() == expected_format(layout)


def grid_rows(text):
    """The boxed rows of a format_grid() drawing: [(label, [cells])]."""
    rows = []
    for line in text.splitlines()[1:]:
        if "|" in line:
            label, *cells, rest = line.split("|")
            assert rest.strip() == "", line
            rows.append((label.strip(), [int(c) for c in cells]))
    return rows


def check_grid(layout):
    text = layout.format_grid()
    lines = text.splitlines()
    assert lines[0] == layout.format()
    offsets = element_offsets(layout)
    if layout.ndim < 2:
        offsets = offsets.reshape(1, -1)
    assert lines[1].split() == [str(j) for j in range(offsets.shape[1])]
    rows = grid_rows(text)
    assert [label for label, _ in rows] == [str(i) for i in range(offsets.shape[0])]
    assert [cells for _, cells in rows] == offsets.tolist()


@pytest.mark.parametrize(
    "layout",
    [
        StridedLayout.dense((4, 6), 1),
        StridedLayout.dense((5, 3), 4)[1:, ::-1],
        StridedLayout.dense((5,), 1),
        StridedLayout.dense((), 1),
        StridedLayout((0, 3), None, 1),
        StridedLayout((2, 0), None, 1),
        StridedLayout((3, 2), (0, 1000000), 2),
    ],
    ids=lambda layout: layout.format(),
)
def test_format_grid_examples(layout):
    check_grid(layout)


@given(view_specs(max_ndim=2))
def test_format_grid(spec):
    _, layout, _ = build(spec)
    check_grid(layout)


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 1, 1), (0, 2, 2), (1,) * 64])
def test_format_grid_rejects_more_than_2_dims(shape):
    with pytest.raises(ValueError):
        StridedLayout.dense(shape, 1).format_grid()


# ---- immutability ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,value",
    [
        ("itemsize", 8),
        ("slice_offset", 1),
        ("shape", (6,)),
        ("strides", (1, 1)),
        ("ndim", 1),
        ("volume", 1),
        ("stride_order", (1, 0)),
        ("is_unique", False),
        ("offset_bounds", (0, 0)),
        ("new_attribute", 1),
    ],
)
def test_attributes_cannot_be_set(name, value):
    layout = StridedLayout.dense((2, 3), 4)
    with pytest.raises(AttributeError):
        setattr(layout, name, value)
    assert layout == StridedLayout.dense((2, 3), 4)


def test_attributes_cannot_be_deleted():
    layout = StridedLayout.dense((2, 3), 4)
    with pytest.raises(AttributeError):
        del layout.itemsize
    assert layout.itemsize == 4


def test_no_instance_dict():
    assert not hasattr(StridedLayout.dense((2, 3), 4), "__dict__")


def test_cannot_be_subclassed():
    with pytest.raises(TypeError):
        type("Sub", (StridedLayout,), {})


def test_private_alias_is_the_same_class():
    assert strided._StridedLayout is StridedLayout
    assert repr(StridedLayout.dense((2,), 1)).startswith("StridedLayout(")


# ---- arithmetic edge table: values at the int32 and int64 limits -----------------------

EDGE_VALUES = [0, 1, 2, 2**31 - 1, 2**31, 2**31 + 1, 2**62, 2**63 - 1]
EDGE_EXTENTS = EDGE_VALUES + [-1, INT64_MIN, 2**63]
EDGE_STRIDES = EDGE_VALUES + [-1, -(2**31), -(2**62), INT64_MIN, 2**63, INT64_MIN - 1]
EDGE_ITEMSIZES = (1, 2, 3, 5, 16, 32)
EDGE_EXTENTS_2D = [0, 1, 2, 3, 2**31 + 1, 2**62, 2**63 - 1]
EDGE_STRIDES_2D = [0, 1, -1, 2**31 - 1, -(2**31), 2**62, 2**63 - 1, INT64_MIN]

OK = "ok"


def edge_id(value):
    for base, name in ((2**63, "2**63"), (2**62, "2**62"), (2**31, "2**31")):
        for delta in (0, 1, -1):
            for sign in (1, -1):
                if value == sign * base + delta:
                    text = ("-" if sign < 0 else "") + name
                    return text + (f"{delta:+d}" if delta else "")
    return str(value)


def construction_outcomes(shape, strides, itemsize):
    """What StridedLayout(shape, strides, itemsize) may do: a set of OK and
    exception types (the invariants of strided/layout.h)."""
    errors = set()
    if any(not om.fits_int64(e) for e in shape) or any(not om.fits_int64(s) for s in strides):
        errors.add(OverflowError)
    if any(e < 0 for e in shape if om.fits_int64(e)):
        errors.add(ValueError)
    if errors:
        return errors
    nonzero = math.prod(e for e in shape if e)
    if nonzero > INT64_MAX:
        return {OverflowError}
    if not all(om.fits_bytes(s, itemsize) for s in strides):
        return {OverflowError}
    if om.volume(shape) == 0:
        return {OK}
    lo, hi = om.offset_bounds(shape, strides)
    return {OK} if om.fits_bytes(lo, itemsize) and om.fits_bytes(hi, itemsize) else {OverflowError}


def is_error(want):
    return isinstance(want, type) and issubclass(want, Exception)


def check_outcome(call, want, label):
    """call() must raise want (an exception type), return want (a value), or
    succeed (OK); want may be a set of such outcomes. Returns the result, or
    None when call raised."""
    allowed = want if isinstance(want, set) else {want}
    try:
        got = call()
    except Exception as exc:  # noqa: BLE001 - the type is what is checked
        assert type(exc) in allowed, f"{label}: raised {exc!r}, expected {allowed}"
        return None
    values = [w for w in allowed if not is_error(w)]
    assert values, f"{label}: returned {got!r}, expected {allowed}"
    assert OK in values or got in values, f"{label}: returned {got!r}, expected {allowed}"
    return got


def shape_strides(layout):
    return layout.shape, layout.strides


def check_edge_layout(shape, strides, itemsize):
    """Construct the layout and run every query and a few operations on it;
    each must give the model's value or the exception its rules call for."""
    label = f"StridedLayout({shape}, {strides}, {itemsize})"
    layout = check_outcome(
        lambda: StridedLayout(shape, strides, itemsize), construction_outcomes(shape, strides, itemsize), label
    )
    if layout is None:
        return
    ndim, vol = len(shape), om.volume(shape)
    fits = om.fits_int64
    lo, hi = om.offset_bounds(shape, strides)
    assert (layout.shape, layout.strides, layout.itemsize) == (shape, strides, itemsize), label
    assert layout.volume == vol, label
    assert layout.offset_bounds == (lo, hi), label
    assert layout.slice_offset_in_bytes == 0, label

    in_bytes = tuple(s * itemsize for s in strides)
    want = in_bytes if all(map(fits, in_bytes)) else OverflowError
    check_outcome(lambda: layout.strides_in_bytes, want, f"{label}.strides_in_bytes")
    if lo < 0:
        want = ValueError
    elif vol == 0:
        want = 0
    else:
        want = (hi + 1) * itemsize if fits((hi + 1) * itemsize) else OverflowError
    check_outcome(layout.required_size_in_bytes, want, f"{label}.required_size_in_bytes()")

    order = om.stride_order(shape, strides)
    assert layout.stride_order == order, label
    assert layout.is_contiguous_c == om.is_contiguous_c(shape, strides), label
    assert layout.is_contiguous_f == om.is_contiguous_f(shape, strides), label
    in_order = ([shape[a] for a in order], [strides[a] for a in order])
    assert layout.is_contiguous_any == om.is_contiguous_c(*in_order), label
    if vol == 0:
        assert layout.is_unique, label
    elif any(s == 0 and n > 1 for n, s in zip(shape, strides)):
        assert not layout.is_unique, label
    elif ndim == 1:
        assert layout.is_unique, label

    flat_shape, flat_strides, mask, needed = om.flatten(shape, strides)
    overflow = not all(map(fits, needed))
    check_outcome(layout.flattened_axis_mask, OverflowError if overflow else mask, f"{label}.flattened_axis_mask()")
    want = OverflowError if overflow else (flat_shape, flat_strides)
    check_outcome(lambda: shape_strides(layout.flattened()), want, f"{label}.flattened()")
    if vol == 0:
        want = ((0,), (0,))
    elif overflow:
        want = OverflowError
    else:
        want = ((vol,), flat_strides) if len(flat_shape) == 1 else ValueError
    check_outcome(lambda: shape_strides(layout.reshaped((-1,))), want, f"{label}.reshaped((-1,))")

    assert shape_strides(layout.coalesced()) == om.coalesce(shape, strides), label
    kept = [(n, s) for n, s in zip(shape, strides) if n != 1]
    want = ((0,), (0,)) if vol == 0 else (tuple(n for n, _ in kept), tuple(s for _, s in kept))
    assert shape_strides(layout.squeezed()) == want, label
    assert shape_strides(layout.permuted(tuple(reversed(range(ndim))))) == (shape[::-1], strides[::-1]), label
    assert layout.format() == tuple_text(shape) + ":" + tuple_text(strides), label
    if not ndim:
        return

    new_stride = shape[0] * strides[0]
    want = ((1, *shape), (new_stride, *strides)) if om.fits_bytes(new_stride, itemsize) else OverflowError
    check_outcome(lambda: shape_strides(layout.unsqueezed(0)), want, f"{label}.unsqueezed(0)")

    nonzero = math.prod(n for n in shape if n)
    want = ((2, *shape), (0, *strides))
    if not fits(2 * nonzero):
        want = OverflowError if vol else {want, OverflowError}
    check_outcome(lambda: shape_strides(layout.broadcast_to((2, *shape))), want, f"{label}.broadcast_to((2, ...))")

    # Empty results of slicing are checked in test_layout_properties: OK here.
    last = (shape[0] - 1) * strides[0]
    if not shape[0]:
        want = ValueError
    elif not om.fits_bytes(last, itemsize):
        # Also for an empty result: its slice offset must fit in bytes.
        want = OverflowError
    else:
        want = (shape[1:], strides[1:], last) if vol else OK
    check_outcome(lambda: (*shape_strides(layout[-1]), layout[-1].slice_offset), want, f"{label}[-1]")
    if not om.fits_bytes(last, itemsize):
        want = OverflowError
    else:
        want = (shape, (-strides[0], *strides[1:]), last) if vol else OK
    check_outcome(lambda: (*shape_strides(layout[::-1]), layout[::-1].slice_offset), want, f"{label}[::-1]")

    if strides != (1,):
        return
    n = shape[0]
    want = ValueError if n == 0 or n % 2 else ((n // 2,), (1,))
    check_outcome(lambda: shape_strides(layout.repacked(2 * itemsize)), want, f"{label}.repacked({2 * itemsize})")
    if itemsize % 2 == 0:
        want = ValueError if n == 0 else ((2 * n,), (1,)) if fits(2 * n) else OverflowError
        check_outcome(lambda: shape_strides(layout.repacked(itemsize // 2)), want, f"{label}.repacked({itemsize // 2})")
    want = itemsize * math.gcd(64 // itemsize, n) if n and 64 % itemsize == 0 else itemsize
    assert layout.max_compatible_itemsize(max_itemsize=64) == want, label


@pytest.mark.parametrize("stride", EDGE_STRIDES, ids=edge_id)
@pytest.mark.parametrize("extent", EDGE_EXTENTS, ids=edge_id)
def test_edge_table_1d(extent, stride):
    for itemsize in EDGE_ITEMSIZES:
        check_edge_layout((extent,), (stride,), itemsize)


@pytest.mark.parametrize("second", EDGE_EXTENTS_2D, ids=edge_id)
@pytest.mark.parametrize("first", EDGE_EXTENTS_2D, ids=edge_id)
def test_edge_table_2d(first, second):
    for k, (s0, s1) in enumerate((a, b) for a in EDGE_STRIDES_2D for b in EDGE_STRIDES_2D):
        check_edge_layout((first, second), (s0, s1), EDGE_ITEMSIZES[k % len(EDGE_ITEMSIZES)])


@pytest.mark.parametrize(
    "shape,strides,itemsize,want",
    [
        # A byte stride of INT64_MIN cannot be negated: refused at any itemsize.
        ((2,), (INT64_MIN,), 1, OverflowError),
        ((2,), (INT64_MIN,), 2, OverflowError),
        ((2,), (INT64_MIN + 2,), 2, ((INT64_MIN + 2) // 2,)),
        ((2,), (INT64_MAX,), 2, ValueError),
        ((2,), (INT64_MIN,), 3, ValueError),
        ((2,), (-(2**62),), 4, (-(2**60),)),
        # The element at -2**61 would sit at byte -2**63.
        ((3,), (-(2**62),), 4, OverflowError),
    ],
    ids=str,
)
def test_edge_divide_strides(shape, strides, itemsize, want):
    check_outcome(
        lambda: StridedLayout(shape, strides, itemsize, divide_strides=True).strides,
        want,
        f"StridedLayout({shape}, {strides}, {itemsize}, divide_strides=True)",
    )


DENSE = StridedLayout.dense((2, 3), 4)


def calls(table):
    """pytest params from {id: zero-argument callable}."""
    return [pytest.param(call, id=name) for name, call in table.items()]


NON_INTEGERS = {
    "shape 1.5": lambda: StridedLayout((1.5,), None, 1),
    "shape '3'": lambda: StridedLayout(("3",), None, 1),
    "strides 1.5": lambda: StridedLayout((3,), (1.5,), 1),
    "strides '1'": lambda: StridedLayout((3,), ("1",), 1),
    "itemsize 1.5": lambda: StridedLayout((3,), None, 1.5),
    "itemsize '3'": lambda: StridedLayout((3,), None, "3"),
    "dense shape 2.0": lambda: StridedLayout.dense((2.0, 3), 1),
    "dense itemsize '4'": lambda: StridedLayout.dense((2, 3), "4"),
    "reshaped 1.5": lambda: DENSE.reshaped((1.5, 4)),
    "reshaped '6'": lambda: DENSE.reshaped(("6",)),
    "permuted 0.0": lambda: DENSE.permuted((0.0, 1)),
    "broadcast_to 3.0": lambda: DENSE.broadcast_to((2, 3.0)),
    "unsqueezed 1.5": lambda: DENSE.unsqueezed(1.5),
    "repacked 1.5": lambda: DENSE.repacked(1.5),
    "flattened start 0.0": lambda: DENSE.flattened(0.0, 1),
    "flattened mask 1.0": lambda: DENSE.flattened(mask=1.0),
    "max_compatible_itemsize 16.0": lambda: DENSE.max_compatible_itemsize(16.0),
    "index 1.5": lambda: DENSE[1.5],
    "index '1'": lambda: DENSE["1"],
}


@pytest.mark.parametrize("call", calls(NON_INTEGERS))
def test_non_integers_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


NEGATIVE_EXTENTS = {
    "shape -1": lambda: StridedLayout((-1,), None, 1),
    "shape INT64_MIN": lambda: StridedLayout((2, INT64_MIN), (1, 1), 1),
    "dense -1": lambda: StridedLayout.dense((3, -1), 1),
    "broadcast_to -1": lambda: DENSE.broadcast_to((-1, 3)),
    "reshaped -2": lambda: DENSE.reshaped((-2, -3)),
}


@pytest.mark.parametrize("call", calls(NEGATIVE_EXTENTS))
def test_negative_extents_raise_value_error(call):
    with pytest.raises(ValueError, match="Extents must be non-negative"):
        call()


OVERFLOWS = {
    "extent 2**63": lambda: StridedLayout((2**63,), None, 1),
    "stride 2**63": lambda: StridedLayout((1,), (2**63,), 1),
    "stride -2**63-1": lambda: StridedLayout((1,), (INT64_MIN - 1,), 1),
    "itemsize 2**31": lambda: StridedLayout((1,), None, 2**31),
    "volume 2**64": lambda: StridedLayout((2**32, 2**32), None, 1),
    "volume 2**64 explicit": lambda: StridedLayout((2**62, 4), (1, 1), 1),
    "max offset 2**63": lambda: StridedLayout((3,), (2**62,), 1),
    "max offset 2**63 in 2-d": lambda: StridedLayout((2, 2), (2**62, 2**62), 1),
    "min offset -2**63-1": lambda: StridedLayout((2, 2), (-(2**62), -(2**62) - 1), 1),
    "dense volume 2**64": lambda: StridedLayout.dense((2**32, 2**32), 1),
    "dense extent 2**64": lambda: StridedLayout.dense((2**64,), 1),
    "required size 2**63": lambda: StridedLayout((2**62,), None, 2).required_size_in_bytes(),
    "required size max_offset+1": lambda: StridedLayout((2,), (INT64_MAX,), 1).required_size_in_bytes(),
    "strides_in_bytes 2**64": lambda: StridedLayout((2,), (2**62,), 4).strides_in_bytes,
    "unsqueezed stride 2**63": lambda: StridedLayout((2,), (2**62,), 1).unsqueezed(0),
    "broadcast_to volume 2**64": lambda: StridedLayout.dense((1,), 1).broadcast_to((2**32, 2**32)),
    "reshaped volume 2**64": lambda: StridedLayout.dense((6,), 1).reshaped((2**32, 2**32)),
    "reshaped extent 2**63": lambda: StridedLayout.dense((6,), 1).reshaped((2**63,)),
    "index 2**63": lambda: StridedLayout.dense((5,), 8)[2**63],
    "unpacked extent 2**67": lambda: StridedLayout.dense((2**62,), 32).repacked(1),
}


@pytest.mark.parametrize("call", calls(OVERFLOWS))
def test_out_of_range_values_raise_overflow_error(call):
    with pytest.raises(OverflowError):
        call()
