"""Sub-byte element types on a GPU (docs/subbyte.md): packed transposes and
conversions between packed and padded views in device memory (the kernel
subbyte), bit-exact against NumPy, and PyTorch's float4_e2m1fn_x2 tensors
through DLPack: imported, seen as single float4_e2m1fn elements, copied
into padded memory and back, and exported to PyTorch again.

Device memory comes from strided.DeviceMemoryResource; packed views of it
from the DLPack producer of subbyte_producer.py (device (2, 0)), padded
ones from byte views re-typed with ml_dtypes' types (subbyte_producer.Memory).

The module skips with "skipped: no CUDA device" where no CUDA device is
usable; the PyTorch tests skip without PyTorch (with CUDA and
float4_e2m1fn_x2), everything without ml_dtypes."""

import numpy as np
import pytest

from gpu_util import cuda_device_count, optional_torch

if cuda_device_count() == 0:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

import strided  # noqa: E402
from strided import StridedMemoryView  # noqa: E402
from subbyte_producer import Memory  # noqa: E402

ml_dtypes = pytest.importorskip("ml_dtypes")
torch = optional_torch()
needs_fp4_torch = pytest.mark.skipif(
    torch is None or not hasattr(torch, "float4_e2m1fn_x2"),
    reason="needs PyTorch with CUDA and torch.float4_e2m1fn_x2")

FP4, FP6, INT2 = (17, 4, 1), (16, 6, 1), (0, 2, 1)
NAMES = {FP4: "float4_e2m1fn", FP6: "float6_e3m2fn", INT2: "int2"}
STREAM = 1  # the legacy default stream


def pack(vals, bits, nbytes):
    b = ((np.asarray(vals, np.int64)[:, None] >> np.arange(bits)) & 1).astype(np.uint8).ravel()
    out = np.zeros(nbytes * 8, np.uint8)
    out[:b.size] = b
    return np.packbits(out, bitorder="little")


@pytest.mark.parametrize("dtype", [FP4, FP6, INT2])
@pytest.mark.parametrize("m, n", [(4, 8), (64, 48), (1024, 1000)])
def test_packed_transpose_on_device(dtype, m, n):
    bits = dtype[1]
    vals = np.random.default_rng(m + n).integers(0, 2**bits, (m, n))
    nbytes = m * n * bits // 8
    src, dst = Memory(nbytes), Memory(nbytes)
    src.put(pack(vals.ravel(), bits, nbytes))
    dst.put(np.zeros(nbytes, np.uint8))
    s = src.packed(dtype, (m, n), (n, 1))
    t = s.view(s.layout.permuted((1, 0)))
    d = dst.packed(dtype, (n, m), (m, 1))
    d.copy_from(t, stream=STREAM, blocking=True)
    np.testing.assert_array_equal(dst.get(), pack(vals.T.ravel(), bits, nbytes))


@pytest.mark.parametrize("dtype", [FP4, FP6, INT2])
def test_packed_padded_conversions_on_device(dtype):
    bits = dtype[1]
    m, n = 96, 64
    vals = np.random.default_rng(bits).integers(0, 2**bits, (m, n))
    packed, padded = Memory(m * n * bits // 8), Memory(m * n)
    packed.put(pack(vals.ravel(), bits, m * n * bits // 8))
    padded.put(np.full(m * n, 0xFF, np.uint8))
    p = packed.packed(dtype, (m, n), (n, 1))
    q = padded.padded(NAMES[dtype], (m, n))
    assert q.padded and not p.padded
    q.copy_from(p, stream=STREAM, blocking=True)
    np.testing.assert_array_equal(padded.get().reshape(m, n), vals)
    # And back, transposed on the way.
    packed.put(np.zeros(m * n * bits // 8, np.uint8))
    pt = packed.packed(dtype, (n, m), (m, 1))
    pt.copy_from(q.view(q.layout.permuted((1, 0))), stream=STREAM, blocking=True)
    np.testing.assert_array_equal(packed.get(), pack(vals.T.ravel(), bits, m * n * bits // 8))


@needs_fp4_torch
def test_torch_float4_x2_round_trip_and_conversion():
    weights = torch.randint(0, 256, (64, 32), dtype=torch.uint8, device="cuda")
    x2 = weights.view(torch.float4_e2m1fn_x2)
    v = StridedMemoryView.from_dlpack(x2, stream_ptr=torch.cuda.current_stream().cuda_stream)
    assert v.shape == (64, 32) and v.element_bits == 8 and not v.padded
    single = v.relaned(1)
    assert single.shape == (64, 64) and single.element_bits == 4
    # Into padded device memory (an ml_dtypes float4_e2m1fn array's form).
    padded = Memory(64 * 64)
    q = padded.padded(NAMES[FP4], (64, 64))
    q.copy_from(single, stream=STREAM, blocking=True)
    host = weights.cpu().numpy()
    nibbles = np.stack([host & 15, host >> 4], -1).reshape(64, 64)
    np.testing.assert_array_equal(padded.get().reshape(64, 64), nibbles)
    # Back into new float4_e2m1fn_x2 memory, and out to PyTorch by DLPack.
    back = torch.zeros((64, 32), dtype=torch.uint8, device="cuda")
    b = StridedMemoryView.from_dlpack(back.view(torch.float4_e2m1fn_x2), stream_ptr=STREAM)
    b.relaned(1).copy_from(q, stream=STREAM, blocking=True)
    assert torch.equal(back, weights)
    out = torch.from_dlpack(v)
    assert out.dtype == torch.float4_e2m1fn_x2
    assert torch.equal(out.view(torch.uint8), weights)


@needs_fp4_torch
def test_torch_transposed_float4_x2():
    weights = torch.randint(0, 256, (32, 48), dtype=torch.uint8, device="cuda")
    t = weights.view(torch.float4_e2m1fn_x2).t()
    v = StridedMemoryView.from_dlpack(t, stream_ptr=torch.cuda.current_stream().cuda_stream)
    assert v.shape == (48, 32) and v.strides == (1, 48)
    single = v.relaned(1)
    assert single.shape == (48, 32, 2) and single.strides == (2, 96, 1)
    dense = torch.zeros((48, 32), dtype=torch.uint8, device="cuda")
    d = StridedMemoryView.from_dlpack(dense.view(torch.float4_e2m1fn_x2), stream_ptr=STREAM)
    # The destination's single elements, (48, 64), seen with the source's
    # pairs axis: (48, 32, 2):(64, 2, 1), a packed transpose by the kernel.
    ds = d.relaned(1)
    ds.view(ds.layout.reshaped((48, 32, 2))).copy_from(single, stream=STREAM, blocking=True)
    assert torch.equal(dense, weights.t().contiguous())


@pytest.mark.parametrize("dtype", [FP4, FP6])
def test_packed_copies_between_host_and_device(dtype):
    bits = dtype[1]
    m, n = 32, 48
    vals = np.random.default_rng(9).integers(0, 2**bits, (m, n))
    nbytes = m * n * bits // 8
    host, dev = Memory(nbytes, host=True), Memory(nbytes)
    host.put(pack(vals.ravel(), bits, nbytes))
    dev.put(np.zeros(nbytes, np.uint8))
    h = host.packed(dtype, (m, n), (n, 1))
    d = dev.packed(dtype, (n, m), (m, 1))
    d.copy_from(h.view(h.layout.permuted((1, 0))), stream=STREAM)
    np.testing.assert_array_equal(dev.get(), pack(vals.T.ravel(), bits, nbytes))
    # Back into host memory, as padded elements.
    padded = Memory(m * n, host=True)
    q = padded.padded(NAMES[dtype], (n, m))
    q.copy_from(d, stream=STREAM)
    np.testing.assert_array_equal(padded.get().reshape(n, m), vals.T)


# Differential: random copies between packed and padded layouts of every
# sub-byte width, run by the device kernel and by the host's own code (which
# test_subbyte.py checks against NumPy bit by bit) over the same bytes; the
# whole destination memory must come out the same, the bits outside the view
# too. Layouts are dense orders of the shape with padded rows (pitches of
# whole bytes, as the packed-layout rule wants), some axes reversed, element
# 0 at any byte: rows of stride 1 on both sides start anywhere in a word,
# transposes have edge tiles, and word-aligned 4-bit ones take the tiles of
# whole words.

from math import gcd  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from subbyte_producer import Producer  # noqa: E402

PADDED = 1 << 2
UINT1, INT4, FP6X2 = (1, 1, 1), (0, 4, 1), (16, 6, 2)
EXTENTS = [1, 2, 3, 5, 8, 17, 40, 64, 70, 130, 264, 300]


@st.composite
def side_layouts(draw, shape, width, padded):
    """Strides (elements), element 0's offset from the first element in
    memory, and the elements the layout spans."""
    nd = len(shape)
    order = draw(st.permutations(range(nd)))
    g = 1 if padded else 8 // gcd(width, 8)
    strides, n = [0] * nd, 1
    for i, k in enumerate(reversed(order)):
        strides[k] = n
        n *= shape[k]
        if i == 0:
            n = -(-(n + draw(st.sampled_from([0, 0, 1, 3, 8, 16]))) // g) * g
    first = 0
    for k in range(nd):
        if strides[k] != 1 and shape[k] > 1 and draw(st.booleans()):
            first += (shape[k] - 1) * strides[k]
            strides[k] = -strides[k]
    span = 1 + sum((shape[k] - 1) * abs(strides[k]) for k in range(nd))
    return strides, first, span


@st.composite
def copies(draw):
    dtype = draw(st.sampled_from([FP4, FP6, INT2, UINT1, INT4, FP6X2]))
    width = dtype[1] * dtype[2]
    shape = draw(st.lists(st.sampled_from(EXTENTS), min_size=1, max_size=3))
    while int(np.prod(shape)) > 200_000:
        shape[shape.index(max(shape))] = 40
    forms = [(False, False)]
    if dtype[2] == 1 and dtype != UINT1:
        forms += [(True, False), (False, True)]
    src_padded, dst_padded = draw(st.sampled_from(forms))
    src = draw(side_layouts(shape, width, src_padded))
    dst = draw(side_layouts(shape, width, dst_padded))
    skew = draw(st.tuples(st.integers(0, 7), st.integers(0, 7)))
    return dtype, tuple(shape), (src, src_padded, skew[0]), (dst, dst_padded, skew[1])


def _side_bytes(layout, width, padded, skew):
    strides, first, span = layout
    step = 8 if padded else width
    return skew + first * step // 8, skew + (span * step + 7) // 8 + 1


@settings(max_examples=150, deadline=None)
@given(case=copies(), seed=st.integers(0, 2**32 - 1))
def test_device_copies_match_the_host_bit_for_bit(case, seed):
    dtype, shape, (src_l, src_padded, src_skew), (dst_l, dst_padded, dst_skew) = case
    width = dtype[1] * dtype[2]
    rng = np.random.default_rng(seed)
    s_at, s_n = _side_bytes(src_l, width, src_padded, src_skew)
    d_at, d_n = _side_bytes(dst_l, width, dst_padded, dst_skew)
    s_bytes = rng.integers(0, 256, s_n, dtype=np.uint8)
    d_bytes = rng.integers(0, 256, d_n, dtype=np.uint8)

    def view(mem, layout, padded, at, device):
        return StridedMemoryView.from_dlpack(
            Producer(mem, dtype, shape, layout[0], at, flags=PADDED if padded else 0,
                     device=device),
            stream_ptr=-1 if device[0] == 1 else STREAM)

    host_dst = d_bytes.copy()
    view(host_dst, dst_l, dst_padded, d_at, (1, 0)).copy_from(
        view(s_bytes, src_l, src_padded, s_at, (1, 0)))
    sm, dm = Memory(s_n), Memory(d_n)
    sm.put(s_bytes)
    dm.put(d_bytes)
    view(dm.address, dst_l, dst_padded, d_at, (2, 0)).copy_from(
        view(sm.address, src_l, src_padded, s_at, (2, 0)), stream=STREAM, blocking=True)
    got = dm.get()
    if not np.array_equal(got, host_dst):
        bad = np.flatnonzero(got != host_dst)
        raise AssertionError("%s %s: %d bytes differ from the host's, first at %d: device "
                             "0x%02x, host 0x%02x (source %s, destination %s)"
                             % (dtype, shape, bad.size, bad[0], got[bad[0]], host_dst[bad[0]],
                                (src_l, src_padded, s_at), (dst_l, dst_padded, d_at)))
