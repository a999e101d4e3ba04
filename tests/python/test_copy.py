"""StridedMemoryView.copy_from / copy_to and strided.copy_plan between host
memory (include/strided/copy.h, docs/copies.md).

NumPy is the oracle: every copy is repeated with np.copyto on copies of the
same bytes, and the whole buffers under both sides are compared byte for
byte, so bytes between and around the destination's elements must be left
alone and the source must not change. Elements are random bytes (NaN
payloads included): a copy moves blobs, it never converts.

Layout classes (BLIS storage schemes): c C-contiguous, f F-contiguous, t
transposed (the last two axes swapped; F for 2-D), g gapped (padding around
every axis, every other element on the last one), n negative (every axis
reversed), and for sources only b broadcast: b with fewer dimensions (the
first axis missing), b1 with extent 1 on the last axis, b0 with stride 0 on
the first axis. Itemsizes 1, 2, 4, 8, 16 (int8, int16, float32, float64,
complex128) travel by DLPack; the odd itemsizes 3 (V3) and 12 (a structured
dtype, which views report as V12) by the array interface.

Also: the kernel strided.copy_plan names for each pair of classes;
overlapping source and destination in one buffer; 0-d, empty and 64-dim
copies; Hypothesis over random layouts on both sides; every error with the
destination untouched; the stream and blocking arguments of host copies;
large copies on several threads.
"""

import ctypes
import itertools
import os
import re
import subprocess
import sys
import textwrap
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import strided
from copy_cases import (DTYPES, Spec, assert_bytes, dtype_of, klass, random_bytes,
                        spec_of)
from strided import Buffer, HostMemoryResource, StridedLayout, StridedMemoryView

ITEMSIZES = list(DTYPES)
DST_CLASSES = ["c", "f", "t", "g", "n"]
SRC_CLASSES = DST_CLASSES + ["b", "b1", "b0"]
SHAPES = [(31, 33), (65, 127), (1, 1), (3, 1000), (1000, 3), (5, 7, 9), (3, 1, 17)]


def cuda_driver_present():
    """Whether a CUDA driver library can be loaded in this process."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


# ---- arrays over byte buffers ------------------------------------------------


def array(buf, spec, dtype):
    """The array of spec over the uint8 array buf."""
    return np.ndarray(spec.shape, dtype, buffer=buf, offset=spec.offset, strides=spec.strides)


def view_of(a, how="dlpack"):
    """A view of NumPy array a by DLPack (where NumPy can export a's dtype
    and alignment) or by the array interface."""
    if how == "dlpack" and a.dtype.kind != "V" and a.flags.aligned:
        return StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    return StridedMemoryView.from_array_interface(a)


def check_copy(dst_spec, src_spec, itemsize, *, same=False, how=("dlpack", "dlpack"),
               method="copy_from", seed=0, **kwargs):
    """Copy src into dst through strided and through np.copyto (on copies of
    the same bytes; src.copy() first where the two share a buffer) and
    compare the whole buffers. Returns (dst view, src view)."""
    dtype = dtype_of(itemsize)
    dbuf = random_bytes(dst_spec.nbytes, seed)
    sbuf = dbuf if same else random_bytes(src_spec.nbytes, seed + 1)
    want_d = dbuf.copy()
    want_s = want_d if same else sbuf.copy()
    np.copyto(array(want_d, dst_spec, dtype), array(want_s, src_spec, dtype).copy())

    d, s = array(dbuf, dst_spec, dtype), array(sbuf, src_spec, dtype)
    dv, sv = view_of(d, how[0]), view_of(s, how[1])
    if method == "copy_from":
        assert dv.copy_from(sv, **kwargs) is None
    else:
        assert sv.copy_to(dv, **kwargs) is None
    assert_bytes(dbuf, want_d)
    if not same:
        assert_bytes(sbuf, want_s)
    return dv, sv


# ---- classes x classes x itemsizes --------------------------------------------

# The kernel of each (destination, source) pair, for shapes without extent-1
# axes: 2-D (where t is f) and 3-D (where t swaps the last two axes).
KERNELS_2D = {
    "c": dict(c="contiguous", f="transpose", t="transpose", g="gather", n="gather",
              b="rows", b1="broadcast", b0="rows"),
    "f": dict(c="transpose", f="contiguous", t="contiguous", g="gather", n="gather",
              b="broadcast", b1="rows", b0="broadcast"),
    "t": dict(c="transpose", f="contiguous", t="contiguous", g="gather", n="gather",
              b="broadcast", b1="rows", b0="broadcast"),
    "g": {s: "gather" for s in SRC_CLASSES},
    "n": dict(c="gather", f="gather", t="gather", g="gather", n="contiguous",
              b="gather", b1="broadcast", b0="gather"),
}
KERNELS_3D = {
    "c": dict(c="contiguous", f="transpose", t="transpose", g="gather", n="gather",
              b="rows", b1="broadcast", b0="rows"),
    "f": dict(c="transpose", f="contiguous", t="transpose", g="gather", n="gather",
              b="broadcast", b1="transpose", b0="broadcast"),
    "t": dict(c="transpose", f="transpose", t="contiguous", g="gather", n="gather",
              b="transpose", b1="rows", b0="transpose"),
    "g": {s: "gather" for s in SRC_CLASSES},
    "n": dict(c="gather", f="gather", t="gather", g="gather", n="contiguous",
              b="gather", b1="broadcast", b0="gather"),
}


def expected_kernel(dst, src, shape):
    if 1 in shape:
        return None
    return {2: KERNELS_2D, 3: KERNELS_3D}[len(shape)][dst][src]


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dst,src", list(itertools.product(DST_CLASSES, SRC_CLASSES)),
                         ids=lambda c: c)
def test_copy_classes(dst, src, shape, itemsize):
    dv, sv = check_copy(klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize,
                        seed=itemsize)
    plan = strided.copy_plan(dv, sv)
    assert plan["itemsize"] == itemsize
    assert plan["volume"] == int(np.prod(shape))
    assert int(np.prod(plan["shape"])) == plan["volume"]
    want = expected_kernel(dst, src, shape)
    if want is not None:
        assert plan["kernel"] == want, plan
    assert strided.copy_plan(dv.layout, sv.layout) == plan


@pytest.mark.parametrize("itemsize", [1, 3, 16])
@pytest.mark.parametrize("dst,src", list(itertools.product(DST_CLASSES, SRC_CLASSES)),
                         ids=lambda c: c)
def test_copy_to_is_copy_from(dst, src, itemsize):
    shape = (31, 33)
    check_copy(klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize,
               method="copy_to")


@pytest.mark.parametrize("itemsize", [5, 24, 32, 40, 64, 256])
@pytest.mark.parametrize("dst,src", [("c", "c"), ("c", "t"), ("t", "c"), ("g", "n"),
                                     ("n", "g"), ("c", "b"), ("f", "b1"), ("c", "b0")])
def test_large_itemsizes(dst, src, itemsize):
    """Itemsizes beyond 16 bytes (void dtypes): whole blobs move."""
    shape = (13, 11)
    check_copy(klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize)


@pytest.mark.parametrize("how", [("ai", "ai"), ("ai", "dlpack"), ("dlpack", "ai")])
@pytest.mark.parametrize("dst,src", [("c", "t"), ("g", "n"), ("n", "b1"), ("f", "b0")])
def test_constructors_mix(dst, src, how):
    shape = (7, 6, 5)
    check_copy(klass(dst, shape, 8), klass(src, shape, 8), 8, how=how)


# ---- kernels of representative pairs -------------------------------------------


def plan_of(dst, src):
    return strided.copy_plan(view_of(dst), view_of(src))


def test_plan_contiguous():
    a, b = np.empty((6, 7), np.float32), np.empty((6, 7), np.float32)
    plan = plan_of(a, b)
    assert plan["kernel"] == "contiguous"
    assert plan["shape"] == (42,)
    assert plan["dst_strides"] == plan["src_strides"] == (1,)
    assert plan["ndim"] == 1
    assert plan["src_unit_axis"] == -1
    assert plan["dst_offset"] == plan["src_offset"] == 0
    # The same for two F arrays and for two arrays reversed alike.
    assert plan_of(a.T, b.T)["kernel"] == "contiguous"
    assert plan_of(a[::-1, ::-1], b[::-1, ::-1])["kernel"] == "contiguous"


def test_plan_transpose():
    a, b = np.empty((6, 7), np.float32), np.empty((7, 6), np.float32)
    plan = plan_of(a, b.T)
    assert plan["kernel"] == "transpose"
    assert plan["src_unit_axis"] == 0
    assert plan["shape"] == (6, 7)
    assert plan["dst_strides"] == (7, 1)
    assert plan["src_strides"] == (1, 6)


def test_plan_gather():
    a, b = np.empty((6, 7), np.float32), np.empty((6, 16), np.float32)
    plan = plan_of(a, b[:, :14:2])
    assert plan["kernel"] == "gather"
    assert plan["shape"] == (6, 7)
    assert plan["src_strides"] == (16, 2)
    # Rows of every other element that continue one another merge into one
    # stepped axis.
    plan = plan_of(a, np.empty((6, 14), np.float32)[:, ::2])
    assert plan["kernel"] == "gather"
    assert plan["shape"] == (42,)
    assert plan["src_strides"] == (2,)


def test_plan_rows():
    a, b = np.empty((6, 7), np.float32), np.empty((6, 20), np.float32)
    plan = plan_of(a, b[:, :7])
    assert plan["kernel"] == "rows"
    assert plan["shape"] == (6, 7)
    assert plan["dst_strides"] == (7, 1) and plan["src_strides"] == (20, 1)
    assert plan_of(b[:, 3:10], a)["kernel"] == "rows"
    # A source with a missing leading axis repeats one row.
    assert plan_of(a, np.empty(7, np.float32))["kernel"] == "rows"


def test_plan_broadcast():
    a = np.empty((6, 7), np.float32)
    plan = plan_of(a, np.empty((6, 1), np.float32))
    assert plan["kernel"] == "broadcast"
    assert plan["src_strides"][-1] == 0
    # A 0-d source fills everything: one axis, source stride 0.
    plan = plan_of(a, np.empty((), np.float32))
    assert plan["kernel"] == "broadcast"
    assert plan["shape"] == (42,)
    assert plan["src_strides"] == (0,)


def test_plan_offsets_of_flipped_axes():
    a = np.empty((6, 7), np.int16)
    b = np.empty((6, 7), np.int16)
    plan = plan_of(a[::-1], b)
    # The destination's reversed axis is flipped on both sides.
    assert plan["dst_offset"] == -35
    assert plan["src_offset"] == 35
    assert plan["dst_strides"] == (7, 1)
    assert plan["src_strides"] == (-7, 1)
    assert plan["kernel"] == "rows"


def test_plan_nothing_and_single():
    assert plan_of(np.empty((0, 4)), np.empty((0, 4)))["kernel"] == "nothing"
    assert plan_of(np.empty((0, 4)), np.empty((0, 4)))["volume"] == 0
    one = plan_of(np.empty(()), np.empty(()))
    assert one["kernel"] == "contiguous" and one["volume"] == 1 and one["shape"] == (1,)
    assert plan_of(np.empty((1, 1, 1)), np.empty((1,)))["kernel"] == "contiguous"


def test_plan_errors():
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        plan_of(np.empty((2, 5)), np.empty((2, 6)))
    with pytest.raises(ValueError, match=re.escape("Got dst itemsize:8 and src itemsize:4")):
        strided.copy_plan(StridedLayout.dense((3,), 8), StridedLayout.dense((3,), 4))
    with pytest.raises(ValueError, match="non-unique"):
        strided.copy_plan(StridedLayout((3, 4), (1, 0), 4), StridedLayout.dense((3, 4), 4))
    with pytest.raises(TypeError):
        strided.copy_plan(np.empty(3))
    with pytest.raises(TypeError):
        strided.copy_plan(np.empty(3), np.empty(3))


# ---- 0-d, empty, 64 dimensions -------------------------------------------------


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("dst_shape,src_shape", [
    ((), ()),
    ((4, 5), ()),
    ((1,), ()),
    ((1, 1), (1,)),
    ((3, 1, 2), (1, 2)),
])
def test_zero_dim_and_single(dst_shape, src_shape, itemsize):
    for dst, src in [("c", "c"), ("n", "c"), ("g", "n"), ("t", "f")]:
        check_copy(klass(dst, dst_shape, itemsize), klass(src, src_shape, itemsize), itemsize)


@pytest.mark.parametrize("itemsize", [1, 3, 8])
@pytest.mark.parametrize("dst_shape,src_shape", [
    ((0,), (0,)),
    ((0, 5), (0, 5)),
    ((5, 0), (5, 0)),
    ((0, 5), (5,)),
    ((0, 5), (1, 5)),
    ((0, 5), ()),
    ((3, 0), (3, 1)),
    ((3, 0, 4), (0, 4)),
    ((2, 0, 3), (2, 1, 3)),
])
def test_empty(dst_shape, src_shape, itemsize):
    for dst, src in [("c", "c"), ("f", "c"), ("g", "n"), ("n", "t")]:
        dv, sv = check_copy(klass(dst, dst_shape, itemsize), klass(src, src_shape, itemsize),
                            itemsize)
        assert strided.copy_plan(dv, sv)["kernel"] == "nothing"


def test_empty_copy_with_null_pointers():
    """Views of empty arrays may carry any pointer; nothing is touched."""
    buf = Buffer.from_handle(0, 0)
    dv = StridedMemoryView.from_buffer(buf, (0, 3), itemsize=4)
    sv = StridedMemoryView.from_buffer(buf, (0, 3), itemsize=4)
    dv.copy_from(sv)
    sv.copy_to(dv)


def shape64():
    """64 axes (the most a layout has), six of them of extent 2."""
    shape = [1] * 64
    for axis in (0, 7, 19, 33, 47, 63):
        shape[axis] = 2
    return tuple(shape)


@pytest.mark.parametrize("itemsize", [1, 3, 16])
@pytest.mark.parametrize("dst,src", [("c", "c"), ("c", "f"), ("f", "c"), ("g", "n"),
                                     ("n", "g"), ("c", "b"), ("t", "b1"), ("g", "b0")])
def test_sixty_four_dims(dst, src, itemsize):
    shape = shape64()
    check_copy(klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize)


@pytest.mark.parametrize("seed", range(4))
def test_sixty_four_dims_permuted(seed):
    """Both sides in a random axis order, the source also reversed on some
    axes: the plan keeps the six real axes (merged where they can be)."""
    rng = np.random.default_rng(seed)
    shape = shape64()
    specs = []
    for _ in range(2):
        perm = rng.permutation(64)
        base = np.empty(tuple(shape[p] for p in perm), np.int16)
        a = base.transpose(np.argsort(perm))
        key = tuple(slice(None, None, -1) if rng.integers(2) else slice(None) for _ in shape)
        specs.append(spec_of(a[key], base))
    dv, sv = check_copy(specs[0], specs[1], 2)
    plan = strided.copy_plan(dv, sv)
    assert 1 <= plan["ndim"] <= 6
    assert plan["volume"] == 64


def permuted_spec(shape, itemsize, seed, flip_unit=False):
    """A dense layout of shape with its axes in a random order (seeded); with
    flip_unit, the axis of stride 1 reversed. Nothing merges with a C
    destination but by chance."""
    perm = np.random.default_rng(seed).permutation(len(shape))
    base = np.empty(tuple(shape[p] for p in perm), dtype_of(itemsize))
    a = base.transpose(np.argsort(perm))
    if flip_unit:
        key = [slice(None)] * len(shape)
        key[perm[-1]] = slice(None, None, -1)
        a = a[tuple(key)]
    return spec_of(a, base)


# (dimensions, seed): seeds whose permutations leave more than 8 axes.
MANY_AXES = [(9, 3), (12, 0), (20, 0)]


@pytest.mark.parametrize("itemsize", [1, 3, 8])
@pytest.mark.parametrize("dims,seed", MANY_AXES)
def test_many_axes(dims, seed, itemsize):
    """More than 8 axes of extent 2 that do not merge: transposes with many
    batch axes, rows and gathers over many axes."""
    shape = (2,) * dims
    c = klass("c", shape, itemsize)
    for dst, src in [(c, permuted_spec(shape, itemsize, seed)),
                     (c, permuted_spec(shape, itemsize, seed, True)),
                     (permuted_spec(shape, itemsize, seed + 1),
                      permuted_spec(shape, itemsize, seed, True))]:
        dv, sv = check_copy(dst, src, itemsize)
        assert strided.copy_plan(dv, sv)["ndim"] > 8


# ---- overlap in one buffer -----------------------------------------------------


def overlap_cases(n):
    """(name, dst, src) NumPy views of one array a of shape (n, n) whose
    footprints meet."""
    return [
        ("shift-down", lambda a: a[1:], lambda a: a[:-1]),
        ("shift-up", lambda a: a[:-1], lambda a: a[1:]),
        ("shift-right", lambda a: a[:, 1:], lambda a: a[:, :-1]),
        ("transpose", lambda a: a, lambda a: a.T),
        ("transpose-dst", lambda a: a.T, lambda a: a),
        ("reversed", lambda a: a, lambda a: a[::-1, ::-1]),
        ("reversed-rows", lambda a: a[:, ::-1], lambda a: a),
        ("self", lambda a: a, lambda a: a),
        ("interleaved", lambda a: a[:, ::2][:, : n // 2], lambda a: a[:, 1::2]),
        ("broadcast-row", lambda a: a[1:], lambda a: a[0]),
        ("broadcast-column", lambda a: a, lambda a: a[:, :1]),
        ("diagonal", lambda a: a[0], lambda a: np.diagonal(a)),
    ]


@pytest.mark.parametrize("itemsize", [1, 2, 3, 8, 16])
@pytest.mark.parametrize("n", [2, 9, 64])
@pytest.mark.parametrize("case", [c[0] for c in overlap_cases(2)])
def test_overlap(case, n, itemsize):
    _, dst, src = next(c for c in overlap_cases(n) if c[0] == case)
    base = np.empty((n, n), dtype_of(itemsize))
    d, s = dst(base), src(base)
    check_copy(spec_of(d, base), spec_of(s, base), itemsize, same=True)


@pytest.mark.parametrize("itemsize", [3, 8, 12])
@pytest.mark.parametrize("shift", [1, 2, 5])
def test_overlap_partial_elements(itemsize, shift):
    """Elements of source and destination overlap by part of an element
    (byte offsets that are not multiples of the itemsize)."""
    base = np.empty(50 * itemsize + shift, np.uint8)
    dst = Spec(base.nbytes, shift, (5, 10), (10 * itemsize, itemsize))
    src = Spec(base.nbytes, 0, (5, 10), (10 * itemsize, itemsize))
    check_copy(dst, src, itemsize, same=True, how=("ai", "ai"))
    check_copy(src, dst, itemsize, same=True, how=("ai", "ai"))
    rev = Spec(base.nbytes, shift + 49 * itemsize, (5, 10), (-10 * itemsize, -itemsize))
    check_copy(rev, src, itemsize, same=True, how=("ai", "ai"))


# ---- unaligned and dtype-less views ----------------------------------------------


@pytest.mark.parametrize("itemsize", [2, 4, 8, 16])
@pytest.mark.parametrize("misalign", [1, 3])
def test_unaligned(itemsize, misalign):
    n = 17 * 13 * itemsize
    dst = Spec(n + 2 * itemsize + misalign, misalign, (17, 13), (13 * itemsize, itemsize))
    src = Spec(2 * n + misalign, misalign + (13 - 1) * itemsize,
               (17, 13), (26 * itemsize, -itemsize))
    check_copy(dst, src, itemsize, how=("ai", "ai"))


def test_views_without_dtype():
    """from_buffer views with an itemsize and no dtype copy to and from
    views with a dtype of that itemsize (no dtype check without a dtype)."""
    a = random_bytes(48, 1).view(np.float32).reshape(3, 4)
    b = np.zeros((4, 3), np.float32)
    want = b.copy()
    np.copyto(want, a.T)
    buf = Buffer.from_handle(b.ctypes.data, b.nbytes, owner=b)
    bv = StridedMemoryView.from_buffer(buf, (4, 3), itemsize=4)
    assert bv.dtype is None
    bv.copy_from(view_of(a).view(view_of(a).layout.permuted((1, 0))))
    assert_bytes(b.view(np.uint8), want.view(np.uint8))

    c = np.zeros((3, 4), np.float32)
    view_of(c).copy_from(bv.view(bv.layout.permuted((1, 0))))
    assert_bytes(c.view(np.uint8), a.view(np.uint8))


def test_host_memory_resource_buffers():
    mr = HostMemoryResource()
    src_buf, dst_buf = mr.allocate(6 * 8 * 2), mr.allocate(6 * 8 * 2)
    sv = StridedMemoryView.from_buffer(src_buf, (6, 8), dtype=np.int16)
    dv = StridedMemoryView.from_buffer(dst_buf, StridedLayout.dense((8, 6), 2), np.int16)
    s = np.from_dlpack(sv)
    s[...] = np.arange(48, dtype=np.int16).reshape(6, 8)
    dv.view(dv.layout.permuted((1, 0))).copy_from(sv)
    np.testing.assert_array_equal(np.from_dlpack(dv), s.T)
    out = np.zeros((6, 8), np.int16)
    view_of(out).copy_from(dv.view(dv.layout.permuted((1, 0))))
    np.testing.assert_array_equal(out, s)


# ---- Hypothesis ------------------------------------------------------------------


class Case(NamedTuple):
    """A random copy as plain data (for @example): itemsize, the Specs of
    the destination and the source, whether the source lies in the
    destination's buffer, and how each view is made ("dlpack" or "ai")."""

    itemsize: int
    dst: Spec
    src: Spec
    same: bool = False
    how: tuple = ("dlpack", "dlpack")


extents = st.sampled_from((0, 1, 1, 2, 2, 3, 3, 4, 5, 7))


@st.composite
def unique_spec(draw, shape, itemsize):
    """A destination-worthy (unique) layout of shape: dense in a random axis
    order, stepped, padded, reversed axis by axis, element 0 at a random
    byte offset."""
    nd = len(shape)
    perm = draw(st.permutations(range(nd)))
    steps = [draw(st.sampled_from((1, 1, 2, 3))) for _ in shape]
    before = [draw(st.integers(0, 2)) for _ in shape]
    after = [draw(st.integers(0, 1)) for _ in shape]
    flips = [draw(st.booleans()) for _ in shape]
    phys = [before[i] + max(shape[i] - 1, 0) * steps[i] + 1 + after[i] for i in range(nd)]
    if int(np.prod(phys)) > 1 << 16:  # keep buffers small: dense, no padding
        steps, before, after = [1] * nd, [0] * nd, [0] * nd
        phys = [max(n, 1) for n in shape]
    strides, run = [0] * nd, itemsize
    for ax in reversed(perm):
        strides[ax] = run
        run *= phys[ax]
    lead = draw(st.integers(0, 2 * itemsize))
    offset = lead + sum(b * s for b, s in zip(before, strides))
    strides = [s * k for s, k in zip(strides, steps)]
    for i in range(nd):
        if flips[i]:
            offset += max(shape[i] - 1, 0) * strides[i]
            strides[i] = -strides[i]
    return Spec(lead + run + draw(st.integers(0, itemsize)), offset, tuple(shape), tuple(strides))


def bounds(spec, itemsize):
    """The byte range [lo, hi) of spec's elements relative to element 0
    (empty for zero volume)."""
    if 0 in spec.shape:
        return 0, 0
    lo = sum(min(0, (n - 1) * s) for n, s in zip(spec.shape, spec.strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(spec.shape, spec.strides))
    return lo, hi + itemsize


@st.composite
def any_spec(draw, shape, itemsize, nbytes=None):
    """Any layout of shape (repeats, overlaps and broadcasts included): small
    random element strides. Inside a buffer of nbytes bytes when given
    (then at any byte offset that fits, else None), or over a buffer of its
    own."""
    strides = tuple(draw(st.integers(-5, 5)) * itemsize for _ in shape)
    spec = Spec(0, 0, tuple(shape), strides)
    lo, hi = bounds(spec, itemsize)
    if nbytes is None:
        lead = draw(st.integers(0, itemsize))
        return Spec(lead + hi - lo + draw(st.integers(0, itemsize)), lead - lo, spec.shape, strides)
    if hi - lo > nbytes:
        return None
    return Spec(nbytes, draw(st.integers(-lo, nbytes - hi)), spec.shape, strides)


@st.composite
def copy_cases(draw):
    itemsize = draw(st.sampled_from(ITEMSIZES))
    shape = tuple(draw(st.lists(extents, min_size=0, max_size=6)))
    dst = draw(unique_spec(shape, itemsize))
    # The source's shape broadcasts to the destination's.
    drop = draw(st.integers(0, len(shape)))
    src_shape = tuple(1 if draw(st.integers(0, 4)) == 0 else n for n in shape[drop:])
    mode = draw(st.sampled_from(("unique", "any", "same")))
    src = None
    if mode == "same":
        src = draw(any_spec(src_shape, itemsize, dst.nbytes))
    if src is None:
        mode = "unique" if mode == "same" else mode
        make = unique_spec if mode == "unique" else any_spec
        src = draw(make(src_shape, itemsize))
    how = tuple(draw(st.sampled_from(("dlpack", "ai"))) for _ in range(2))
    return Case(itemsize, dst, src, mode == "same", how)


@given(copy_cases(), st.sampled_from(("copy_from", "copy_to")))
@example(Case(4, Spec(24, 0, (2, 3), (12, 4)), Spec(24, 20, (2, 3), (-12, -4))), "copy_from")
@example(Case(3, Spec(30, 1, (3, 3), (9, 3)), Spec(30, 0, (3, 3), (3, 9)), True), "copy_to")
@example(Case(16, Spec(96, 80, (2, 3), (-48, -16)), Spec(16, 0, (1,), (16,))), "copy_from")
@example(Case(8, Spec(64, 0, (8,), (8,)), Spec(64, 8, (1,), (8,)), True), "copy_from")
def test_copy_random(case, method):
    dv, sv = check_copy(case.dst, case.src, case.itemsize, same=case.same, how=case.how,
                        method=method, seed=len(case.dst.shape))
    plan = strided.copy_plan(dv, sv)
    assert plan["volume"] == int(np.prod(case.dst.shape))
    if plan["volume"]:
        assert int(np.prod(plan["shape"])) == plan["volume"]
        assert all(s >= 0 for s in plan["dst_strides"])
        assert list(plan["dst_strides"]) == sorted(plan["dst_strides"], reverse=True)


# ---- errors ------------------------------------------------------------------------


class Guarded:
    """A destination array whose bytes are checked to be untouched."""

    def __init__(self, a):
        self.a = a
        self.before = a.copy()

    def untouched(self):
        assert_bytes(np.ascontiguousarray(self.a).view(np.uint8).reshape(-1),
                     np.ascontiguousarray(self.before).view(np.uint8).reshape(-1))


def both_ways(dv, sv, exc, message, **kwargs):
    """dv.copy_from(sv) and sv.copy_to(dv) both raise exc matching message."""
    with pytest.raises(exc, match=message) as e1:
        dv.copy_from(sv, **kwargs)
    with pytest.raises(exc, match=message) as e2:
        sv.copy_to(dv, **kwargs)
    return e1.value, e2.value


def test_error_itemsize():
    a = np.arange(10, dtype=np.int32).reshape(2, 5)
    b = np.full(10, 7, np.int64)
    g = Guarded(b)
    buf = Buffer.from_handle(b.ctypes.data, b.nbytes, owner=b)
    bv = StridedMemoryView.from_buffer(buf, StridedLayout.dense((2, 5), 8))
    message = ("The itemsize of the destination and source layouts must match. "
               "Got dst itemsize:8 and src itemsize:4")
    e, _ = both_ways(bv, view_of(a), ValueError, re.escape(message))
    assert str(e).endswith(message)
    g.untouched()


@pytest.mark.parametrize("dst_shape,src_shape", [((2, 5), (2, 6)), ((2, 6), (2, 5)),
                                                 ((3,), (2, 3)), ((4, 1), (4, 3)),
                                                 ((0, 3), (2, 3)), ((3,), (0,)),
                                                 ((), (1,)), ((3,), (1, 3))])
def test_error_broadcast(dst_shape, src_shape):
    """The source broadcasts to the destination by NumPy's broadcasting
    rules (np.broadcast_to); the destination never broadcasts. (np.copyto
    is more lenient: it drops leading extent-1 axes of the source, so it
    copies (1,) into () and (1, 3) into (3,); strided does not.)"""
    d = np.full(dst_shape, 3, np.float32)
    s = np.ones(src_shape, np.float32)
    g = Guarded(d)
    e, _ = both_ways(view_of(d), view_of(s), ValueError, "cannot be broadcast together")
    g.untouched()
    with pytest.raises(ValueError):
        np.broadcast_to(s, dst_shape)


@pytest.mark.parametrize("make", ["sliding_window", "stride0", "overlapping_rows"])
def test_error_non_unique(make):
    base = np.arange(10, dtype=np.int64)
    if make == "sliding_window":
        d = np.lib.stride_tricks.sliding_window_view(base, 3, writeable=True)
    elif make == "stride0":
        d = np.lib.stride_tricks.as_strided(base, (4, 4), (8, 0))
    else:
        d = np.lib.stride_tricks.as_strided(base, (3, 4), (16, 8))
    g = Guarded(base)
    s = np.zeros(d.shape, np.int64)
    message = "The destination layout is non-unique, i.e. some elements may overlap in memory: "
    for dv in (view_of(d, "dlpack"), view_of(d, "ai"),
               StridedMemoryView.from_buffer(
                   Buffer.from_handle(base.ctypes.data, base.nbytes, owner=base),
                   StridedLayout(d.shape, d.strides, 8, divide_strides=True))):
        assert not dv.readonly
        both_ways(dv, view_of(s), ValueError, re.escape(message))
        g.untouched()


def test_error_readonly():
    d = np.zeros((3, 4), np.float32)
    d.flags.writeable = False
    g = Guarded(d)
    s = np.ones((3, 4), np.float32)
    for dv in (view_of(d, "dlpack"), view_of(d, "ai")):
        assert dv.readonly
        e, _ = both_ways(dv, view_of(s), ValueError, re.escape("The destination view is read-only."))
        assert str(e).endswith("The destination view is read-only.")
        g.untouched()
    # A read-only source is fine.
    out = np.zeros((3, 4), np.float32)
    view_of(out).copy_from(view_of(d))
    buf = Buffer.from_handle(out.ctypes.data, out.nbytes, owner=out)
    ro = StridedMemoryView.from_buffer(buf, (3, 4), dtype=np.float32, is_readonly=True)
    with pytest.raises(ValueError, match="read-only"):
        ro.copy_from(view_of(s))


def test_error_dtype():
    a = np.arange(10, dtype=np.int32).reshape(2, 5)
    b = np.full((2, 5), 2.5, np.float32)
    g = Guarded(b)
    message = ("The destination and source dtypes must match. Got dst dtype:float32 "
               "and src dtype:int32")
    e, _ = both_ways(view_of(b), view_of(a), ValueError, re.escape(message))
    assert str(e).endswith(message)
    assert "destination and source dtypes" in str(e)
    g.untouched()


@pytest.mark.parametrize("dst,src", [("<i4", "<u4"), ("V4", "<f4"), ("<f4", "V4"),
                                     ("<c8", "V8"), ("S4", "V4")])
def test_error_dtype_without_dlpack_code(dst, src):
    """Both views have a dtype (view.dtype), and they differ: ValueError,
    also where a dtype has no DLPack code."""
    d = np.zeros(4, dst)
    s = np.frombuffer(np.arange(16, dtype=np.uint8).tobytes(), src).copy()
    g = Guarded(d)
    dv, sv = view_of(d, "ai"), view_of(s, "ai")
    assert dv.dtype != sv.dtype
    both_ways(dv, sv, ValueError, "destination and source dtypes")
    g.untouched()


@pytest.mark.parametrize("dtype", ["<f16", "V4", "V7", "S3", "<U2", "<M8[ns]"])
def test_same_dtype_without_dlpack_code(dtype):
    d = np.zeros((3, 5), dtype)
    s = np.frombuffer(random_bytes(15 * d.itemsize, 2).tobytes(), dtype).reshape(5, 3).T
    want = d.copy()
    np.copyto(want, s)
    view_of(d, "ai").copy_from(view_of(s, "ai"))
    assert_bytes(d.view(np.uint8).reshape(-1), want.view(np.uint8).reshape(-1))


@pytest.mark.parametrize("other", [np.zeros((2, 5), np.int32), None, 3, "view",
                                   memoryview(bytearray(40))])
def test_error_other_not_a_view(other):
    d = np.zeros((2, 5), np.int32)
    g = Guarded(d)
    dv = view_of(d)
    with pytest.raises(TypeError):
        dv.copy_from(other)
    with pytest.raises(TypeError):
        dv.copy_to(other)
    g.untouched()


class CountingHostResource:
    """A memory resource written in Python (cuda.core's interface) that
    records every allocate and close, handing out numpy-backed Buffers."""

    is_host_accessible = True
    is_device_accessible = False
    device_id = -1

    def __init__(self, fail=None):
        self.calls, self.closed, self.fail = [], [], fail

    def allocate(self, size, stream=None):
        self.calls.append((size, stream))
        if self.fail is not None:
            raise self.fail
        backing = np.full(size, 0xAB, np.uint8)
        res = self

        class Held:
            handle = backing.ctypes.data
            size = backing.nbytes

            def close(self, stream=None):
                res.closed.append((backing.nbytes, stream))

        return Held()


def overlapping_pair(n=6):
    """dst = a[1:], src = a[:-1] of one array: an overlapping copy, which
    needs one host temporary of the source's bytes."""
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    want = a.copy()
    want[1:] = a[:-1]
    return a, view_of(a[1:]), view_of(a[:-1]), want


@pytest.mark.parametrize("form", ["options", "dict"])
def test_allocator_host_temporary(form):
    """An overlapping host copy takes its one temporary from allocator's
    host resource: one allocate(nbytes, stream=...) call with the copy's
    stream object, closed once afterwards, the result right."""
    mr = CountingHostResource()
    allocator = (strided.CopyAllocatorOptions(host=mr) if form == "options"
                 else {"host": mr, "device": None})
    a, dv, sv, want = overlapping_pair()
    dv.copy_from(sv, allocator=allocator)
    np.testing.assert_array_equal(a, want)
    assert mr.calls == [(5 * 6 * 4, None)]
    assert mr.closed == [(5 * 6 * 4, None)]


def test_allocator_not_used_without_temporary():
    """A copy that needs no temporary never calls the allocator."""
    mr = CountingHostResource()
    d, s = np.zeros((3, 4), np.int16), np.arange(12, dtype=np.int16).reshape(4, 3).T
    view_of(d).copy_from(view_of(s), allocator=strided.CopyAllocatorOptions(host=mr,
                                                                            device=mr))
    np.testing.assert_array_equal(d, s)
    assert mr.calls == []


def test_allocator_builtin_resource():
    """strided's own resources serve temporaries directly."""
    a, dv, sv, want = overlapping_pair(9)
    sv.copy_to(dv, allocator={"host": HostMemoryResource()})
    np.testing.assert_array_equal(a, want)


def test_allocator_failure_raises_its_exception():
    """allocate() raising: the copy raises that exception, the destination is
    untouched, nothing is closed."""
    mr = CountingHostResource(fail=MemoryError("pool exhausted"))
    a, dv, sv, _ = overlapping_pair()
    g = Guarded(a)
    with pytest.raises(MemoryError, match="pool exhausted"):
        dv.copy_from(sv, allocator={"host": mr})
    g.untouched()
    assert len(mr.calls) == 1 and mr.closed == []


def test_allocator_claims_are_not_trusted():
    """A resource's claim about its memory is not taken at its word: this
    one says device memory but hands out numpy's (host) memory, which is
    what the copy finds and uses. (Memory the host really cannot reach is
    refused: tests/python/test_robustness.py, on a GPU.)"""

    class DeviceOnly(CountingHostResource):
        is_host_accessible = False
        is_device_accessible = True
        device_id = 0

    mr = DeviceOnly()
    a, dv, sv, want = overlapping_pair()
    dv.copy_from(sv, allocator={"host": mr})
    np.testing.assert_array_equal(a, want)
    assert len(mr.calls) == 1 and len(mr.closed) == 1


@pytest.mark.parametrize("allocator,exc,message", [
    ({"hots": None}, ValueError, "unknown key 'hots'"),
    ({1: None}, ValueError, "unknown key 1"),
    (object(), TypeError, "allocator must be None, a dict or a CopyAllocatorOptions"),
    (3, TypeError, "allocator must be"),
    ({"host": object()}, TypeError, r"allocator\['host'\] must be a memory resource"),
])
def test_error_allocator(allocator, exc, message):
    d = np.zeros((2, 5), np.int32)
    s = np.ones((2, 5), np.int32)
    g = Guarded(d)
    both_ways(view_of(d), view_of(s), exc, message, allocator=allocator)
    g.untouched()


@pytest.mark.parametrize("stream", ["stream", 1.5, object()])
def test_error_stream_type(stream):
    d = np.zeros((2, 5), np.int32)
    s = np.ones((2, 5), np.int32)
    g = Guarded(d)
    both_ways(view_of(d), view_of(s), TypeError, "stream", stream=stream)
    g.untouched()


def test_error_arguments():
    d = np.zeros(3, np.int32)
    dv, sv = view_of(d), view_of(np.ones(3, np.int32))
    with pytest.raises(TypeError):
        dv.copy_from()
    with pytest.raises(TypeError):
        dv.copy_from(sv, 0, None, None, None)
    with pytest.raises(TypeError):
        dv.copy_from(sv, bogus=1)
    with pytest.raises(TypeError):
        dv.copy_from(sv, other=sv)
    assert not d.any()


def test_validation_before_any_write():
    """An error found late (non-unique after a good dtype and broadcast) or
    early leaves even a large destination untouched."""
    base = np.zeros(1 << 16, np.int32)
    d = np.lib.stride_tricks.as_strided(base, (1 << 15, 4), (4, 4))
    g = Guarded(base)
    with pytest.raises(ValueError, match="non-unique"):
        view_of(d).copy_from(view_of(np.ones((1 << 15, 4), np.int32)))
    g.untouched()


# ---- stream and blocking on host copies -------------------------------------------


class CudaStreamObject:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def stream_arguments():
    values = [None, 0, CudaStreamObject(0)]
    if not cuda_driver_present():
        # Without a driver no work can be queued anywhere: any handle is
        # accepted and nothing is waited for.
        values += [12345, CudaStreamObject(0xDEAD)]
    return values


@pytest.mark.parametrize("blocking", [None, True, False])
@pytest.mark.parametrize("stream", stream_arguments(),
                         ids=lambda s: type(s).__name__ + ("" if not isinstance(s, int) else str(s)))
def test_host_copy_stream_and_blocking(stream, blocking):
    """Host copies accept stream (None, a handle, an object with
    __cuda_stream__) and blocking, positionally or by keyword, and are
    complete on return."""
    shape = (31, 33)
    check_copy(klass("c", shape, 4), klass("t", shape, 4), 4, stream=stream, blocking=blocking)
    check_copy(klass("g", shape, 4), klass("b1", shape, 4), 4, method="copy_to",
               stream=stream, blocking=blocking)
    d = np.zeros(shape, np.float32)
    s = np.arange(31 * 33, dtype=np.float32).reshape(shape)
    view_of(d).copy_from(view_of(s), stream, None, blocking)
    np.testing.assert_array_equal(d, s)


def test_host_copy_stream_zero_without_driver():
    """stream=0 on a machine without a CUDA driver: a host copy needs none."""
    if cuda_driver_present():
        pytest.skip("a CUDA driver is present")
    d = np.zeros(8, np.int64)
    s = np.arange(8, dtype=np.int64)
    view_of(d).copy_from(view_of(s), stream=0, blocking=True)
    np.testing.assert_array_equal(d, s)


# ---- large copies (several threads) -------------------------------------------------

N = 4096


@pytest.fixture(scope="module")
def big():
    return np.random.default_rng(5).random((N, N), dtype=np.float32)


@pytest.mark.parametrize("case,kernel", [
    ("transpose", "transpose"),
    ("contiguous", "contiguous"),
    ("rows", "rows"),
    ("gather", "gather"),
    ("broadcast", "broadcast"),
    ("fill", "broadcast"),
    ("reversed", "gather"),
])
def test_large_copy(big, case, kernel):
    if case == "transpose":
        dst, src = np.empty((N, N), np.float32), big.T
    elif case == "contiguous":
        dst, src = np.empty((N, N), np.float32), big
    elif case == "rows":
        dst, src = np.empty((N, N - 3), np.float32), big[:, 3:]
    elif case == "gather":
        dst, src = np.empty((N, N // 2), np.float32), big[:, ::2]
    elif case == "broadcast":
        dst, src = np.empty((N, N), np.float32), big[:, :1]
    elif case == "fill":
        dst, src = np.empty((N, N), np.float32), big[7, 9, ...]
    else:
        dst, src = np.empty((N, N), np.float32), big[::-1, ::-1]
    dst[...] = -1.0
    dv, sv = view_of(dst), view_of(src)
    assert strided.copy_plan(dv, sv)["kernel"] == kernel
    dv.copy_from(sv)
    want = np.empty_like(dst)
    np.copyto(want, src)
    assert np.array_equal(dst, want)


# Shapes whose copies write at least 1 MiB (so that they run on several
# threads), with extents that no tile or chunk divides, and rows longer than
# a chunk (3 x 350001).
LARGE = [((1031, 1029), 1), ((300, 293), 12), ((67, 129, 131), 1), ((3, 350001), 1),
         ((350001, 3), 1), ((211, 317), 16)]


@pytest.mark.parametrize("shape,itemsize", LARGE, ids=lambda x: "x".join(map(str, x))
                         if isinstance(x, tuple) else str(x))
@pytest.mark.parametrize("dst,src", list(itertools.product(DST_CLASSES, SRC_CLASSES)),
                         ids=lambda c: c)
def test_copy_classes_threaded(dst, src, shape, itemsize):
    dv, sv = check_copy(klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize)
    want = expected_kernel(dst, src, shape)
    if want is not None:
        assert strided.copy_plan(dv, sv)["kernel"] == want


def test_concurrent_copies():
    """Copies from several Python threads at once (the GIL is released
    during a copy, and large ones start OpenMP teams of their own) give
    NumPy's bytes, and each failing copy reports its own error."""
    from concurrent.futures import ThreadPoolExecutor

    def work(i):
        rng = np.random.default_rng(i)
        src = rng.random((1024 + i, 1024 - i), dtype=np.float32)
        dst = np.zeros((1024 - i, 1024 + i), np.float32)
        for _ in range(3):
            view_of(dst).copy_from(view_of(src.T))
            if not np.array_equal(dst, src.T):
                return f"thread {i}: wrong bytes"
            try:
                view_of(dst).copy_from(view_of(np.zeros((3, i + 2), np.float32)))
            except ValueError as e:
                if f"(3,{i + 2})" not in str(e).replace(" ", ""):
                    return f"thread {i}: someone else's error: {e}"
            else:
                return f"thread {i}: no error"
        return None

    with ThreadPoolExecutor(8) as pool:
        problems = [p for p in pool.map(work, range(8)) if p]
    assert not problems


def test_large_overlapping_copy():
    a = np.random.default_rng(6).random((N, N // 4), dtype=np.float32)
    want = a.copy()
    np.copyto(want[1:], want[:-1].copy())
    view_of(a[1:]).copy_from(view_of(a[:-1]))
    assert np.array_equal(a, want)
    sq = np.random.default_rng(7).random((2048, 2048), dtype=np.float32)
    want = sq.T.copy()
    view_of(sq).copy_from(view_of(sq.T))
    assert np.array_equal(sq, want)


def test_large_copy_odd_itemsize():
    n = 1500
    buf = random_bytes(n * n * 3, 8)
    src = np.ndarray((n, n), "V3", buffer=buf).T
    dst = np.zeros((n, n), "V3")
    want = np.empty_like(dst)
    np.copyto(want, src)
    view_of(dst, "ai").copy_from(view_of(src, "ai"))
    assert_bytes(dst.view(np.uint8).reshape(-1), want.view(np.uint8).reshape(-1))


THREADS_SNIPPET = """
import numpy as np
from strided import StridedMemoryView as V

rng = np.random.default_rng(9)
a = rng.integers(0, 256, size=(1031, 2 * 1029 + 1), dtype=np.uint8)
cases = [
    (np.zeros((1029, 1031), np.uint8), a[:, :1029].T),     # transpose
    (np.zeros((1031, 1029), np.uint8), a[:, 1::2]),        # gather
    (np.zeros((1031, 1029), np.uint8), a[:, 5:1034]),      # rows
    (np.zeros((3, 1031 * 1029), np.uint8), a.reshape(-1)[: 1031 * 1029]),  # long rows
    (np.zeros((1031, 1029), np.uint8), a[:, :1]),          # broadcast
    (np.zeros(1031 * 2059, np.uint8), a.reshape(-1)),      # contiguous
]
for dst, src in cases:
    want = np.zeros_like(dst)
    np.copyto(want, src)
    V.from_dlpack(dst, stream_ptr=-1).copy_from(V.from_dlpack(src, stream_ptr=-1))
    assert np.array_equal(dst, want)
b = rng.integers(0, 256, size=(1031, 1029), dtype=np.uint8)
want = b.copy()
want[1:] = want[:-1].copy()
V.from_dlpack(b[1:], stream_ptr=-1).copy_from(V.from_dlpack(b[:-1], stream_ptr=-1))
assert np.array_equal(b, want)
print("ok")
"""


@pytest.mark.parametrize("threads", [1, 3, 7, 16])
def test_thread_counts(threads):
    """Large copies split over 1, 3, 7 and 16 OpenMP threads (more than this
    machine may have cores) give NumPy's bytes. A fresh interpreter per
    count: OpenMP reads OMP_NUM_THREADS once."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(strided.__file__)))
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(THREADS_SNIPPET)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
