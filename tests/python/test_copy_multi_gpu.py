"""StridedMemoryView.copy_from / copy_to between views in device memory that
overlap (the result is as if the source had been read in full first), and
between two GPUs (docs/copies.md; src/copy/device.c), with CuPy and PyTorch
arrays, NumPy and CuPy as the oracles.

What is checked:

- Overlapping source and destination in one CuPy allocation (shifted rows
  and columns, in-place transposes, reversals, a broadcast row,
  interleaved rows, elements overlapping by part of their bytes, identical
  sides) for element sizes 1, 2, 4, 8, 16 and 12: the whole allocation
  afterwards equals, byte for byte, what np.copyto makes of the same bytes
  with the source read in full first, and what cupy.copyto makes of them
  from a copy of the source. The same with PyTorch tensors (by DLPack).
- Two GPUs (CuPy arrays on devices 0 and 1, both directions): contiguous,
  pitched, transposed, reversed, broadcast and sparse sources into dense and
  gapped destinations, with peer access as the devices allow and with
  STRIDED_COPY_NO_PEER=1 (the staged paths), on a stream of the
  destination's device: the destination's allocation equals np.copyto's
  result, the source is unchanged.

The module skips with "skipped: no CUDA device" where no CUDA device is
usable; the two-GPU tests skip with "skipped: fewer than 2 CUDA devices";
tests that need CuPy or PyTorch skip by themselves.
"""

import numpy as np
import pytest

from copy_cases import assert_bytes, random_bytes
from gpu_util import cuda_device_count, optional, optional_torch


DEVICES = cuda_device_count()
if DEVICES == 0:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

from strided import StridedMemoryView  # noqa: E402


cupy = optional("cupy")
torch = optional_torch()

needs_cupy = pytest.mark.skipif(cupy is None, reason="needs CuPy")
needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch with CUDA")
needs_two = pytest.mark.skipif(DEVICES < 2, reason="skipped: fewer than 2 CUDA devices")

STRUCT12 = np.dtype([("a", "<i4"), ("b", "<f4"), ("c", "<i4")])
DTYPES = {
    1: np.dtype(np.int8),
    2: np.dtype(np.int16),
    4: np.dtype(np.float32),
    8: np.dtype(np.float64),
    12: STRUCT12,
    16: np.dtype(np.complex128),
}


@pytest.fixture(autouse=True)
def idle_devices():
    """Every device is idle when a test ends."""
    yield
    if cupy is not None:
        for d in range(min(DEVICES, 2)):
            with cupy.cuda.Device(d):
                cupy.cuda.runtime.deviceSynchronize()


def settle(*devices):
    """Wait for everything queued on the devices (uploads included)."""
    for d in devices:
        with cupy.cuda.Device(d):
            cupy.cuda.runtime.deviceSynchronize()


def strided_array(raw, itemsize, shape, strides, offset, xp):
    """The array of shape and strides (in elements) over the uint8 array raw
    (NumPy or CuPy), element 0 at byte offset, as raw bytes with a trailing
    axis of itemsize bytes (so any itemsize copies as bytes)."""
    shape = tuple(shape) + (itemsize,)
    strides = tuple(s * itemsize for s in strides) + (1,)
    if xp is np:
        return np.ndarray(shape, np.uint8, buffer=raw, offset=offset, strides=strides)
    return cupy.ndarray(shape, cupy.uint8, memptr=raw.data + offset, strides=strides)


def view_of(raw, itemsize, shape, strides, offset, stream_ptr=-1, shift=0):
    """A StridedMemoryView of that layout over CuPy memory raw, with the
    dtype of itemsize, through the CUDA Array Interface (any strides);
    element 0 at offset elements plus shift bytes."""
    dtype = DTYPES[itemsize]

    class CAI:
        __cuda_array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "typestr": dtype.str,
            "descr": dtype.descr,
            "data": (raw.data.ptr + offset * itemsize + shift, False),
            "strides": tuple(s * itemsize for s in strides) if shape else None,
            "stream": None,
        }

    holder = CAI()
    holder.keep = raw
    return StridedMemoryView.from_cuda_array_interface(holder, stream_ptr=stream_ptr)


# ---- overlapping copies on one device --------------------------------------------------

N = 37


def overlap_cases(n):
    """(name, dst, src): (shape, strides, offset) in elements over an n x n
    C array."""
    c = ((n, n), (n, 1), 0)
    h = n // 2
    return [
        ("a[1:]<-a[:-1]", ((n - 1, n), (n, 1), n), ((n - 1, n), (n, 1), 0)),
        ("a[:-1]<-a[1:]", ((n - 1, n), (n, 1), 0), ((n - 1, n), (n, 1), n)),
        ("a[:,1:]<-a[:,:-1]", ((n, n - 1), (n, 1), 1), ((n, n - 1), (n, 1), 0)),
        ("a[1:,1:]<-a[:-1,:-1]", ((n - 1, n - 1), (n, 1), n + 1), ((n - 1, n - 1), (n, 1), 0)),
        ("a<-a.T", c, ((n, n), (1, n), 0)),
        ("a.T<-a", ((n, n), (1, n), 0), c),
        ("a<-a[::-1,::-1]", c, ((n, n), (-n, -1), n * n - 1)),
        ("a[::-1]<-a", ((n, n), (-n, 1), (n - 1) * n), c),
        ("a<-a[3]", c, ((n,), (1,), 3 * n)),
        ("a[::2]<-a[1::2]", ((h, n), (2 * n, 1), 0), ((h, n), (2 * n, 1), n)),
        ("a[:,::2]<-a.T[:,::2]", ((n, (n + 1) // 2), (n, 2), 0),
         ((n, (n + 1) // 2), (1, 2 * n), 0)),
        ("flat[5:]<-flat[:-5]", ((n * n - 5,), (1,), 5), ((n * n - 5,), (1,), 0)),
        ("a<-a", c, c),
    ]


def expected_overlap(initial, itemsize, dst, src, dst_shift=0):
    """np.copyto's result on a copy of the bytes, the source read first."""
    want = initial.copy()
    d = strided_array(want, itemsize, *dst[:2], dst[2] * itemsize + dst_shift, np)
    s = strided_array(want, itemsize, *src[:2], src[2] * itemsize, np).copy()
    np.copyto(d, s)
    return want


@needs_cupy
@pytest.mark.parametrize("itemsize", list(DTYPES))
@pytest.mark.parametrize("case", [c[0] for c in overlap_cases(N)])
@pytest.mark.parametrize("method", ["copy_from", "copy_to"])
def test_overlapping_device_copy(case, itemsize, method):
    _, dst, src = next(c for c in overlap_cases(N) if c[0] == case)
    nbytes = N * N * itemsize
    initial = random_bytes(nbytes, itemsize)
    with cupy.cuda.Device(0):
        stream = cupy.cuda.Stream(non_blocking=True)
        raw = cupy.asarray(initial)
        settle(0)
        dv = view_of(raw, itemsize, *dst)
        sv = view_of(raw, itemsize, *src)
        if method == "copy_from":
            dv.copy_from(sv, stream=stream.ptr)
        else:
            sv.copy_to(dv, stream=stream.ptr)
        stream.synchronize()
        got = raw.get()
        # CuPy's answer from a copy of the source.
        theirs = cupy.asarray(initial)
        cupy.copyto(strided_array(theirs, itemsize, *dst[:2], dst[2] * itemsize, cupy),
                    strided_array(theirs, itemsize, *src[:2], src[2] * itemsize, cupy).copy())
    want = expected_overlap(initial, itemsize, dst, src)
    assert_bytes(got, want, "vs np.copyto")
    assert_bytes(got, theirs.get(), "vs cupy.copyto")


@needs_cupy
@pytest.mark.parametrize("itemsize", [2, 4, 8, 16, 12])
def test_overlap_by_part_of_an_element(itemsize):
    """The destination one byte past the source: every element overlaps two
    source elements."""
    n = N * N - 1
    initial = random_bytes(N * N * itemsize, 3)
    with cupy.cuda.Device(0):
        stream = cupy.cuda.Stream(non_blocking=True)
        raw = cupy.asarray(initial)
        settle(0)
        dv = view_of(raw, itemsize, (n,), (1,), 0, shift=1)
        sv = view_of(raw, itemsize, (n,), (1,), 0)
        dv.copy_from(sv, stream=stream.ptr)
        stream.synchronize()
        got = raw.get()
    want = expected_overlap(initial, itemsize, ((n,), (1,), 0), ((n,), (1,), 0), dst_shift=1)
    assert_bytes(got, want)


@needs_cupy
@pytest.mark.parametrize("blocking", [None, True])
def test_large_overlapping_transpose(blocking):
    """2048 x 2048 float32 transposed in place, the result read after the
    stream (or the blocking copy) only."""
    n = 2048
    with cupy.cuda.Device(0):
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            a = cupy.random.random((n, n), dtype=cupy.float32)
            want = a.T.copy()
        dv = StridedMemoryView.from_cuda_array_interface(a, stream_ptr=stream.ptr)
        sv = StridedMemoryView.from_cuda_array_interface(a.T, stream_ptr=stream.ptr)
        dv.copy_from(sv, stream=stream.ptr, blocking=blocking)
        if not blocking:
            stream.synchronize()
        assert bool(cupy.array_equal(a.view(cupy.uint32), want.view(cupy.uint32)))


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("case", ["shift-down", "shift-right", "transpose", "row", "self"])
def test_overlapping_torch_tensors(case, dtype):
    g = torch.Generator(device="cuda").manual_seed(5)
    base = torch.randint(0, 256, (N * N * 16,), dtype=torch.uint8, device="cuda", generator=g)
    a = base.view(getattr(torch, dtype))[: N * N].view(N, N)
    d, s = {
        "shift-down": (a[1:], a[:-1]),
        "shift-right": (a[:, 1:], a[:, :-1]),
        "transpose": (a, a.T),
        "row": (a, a[3]),
        "self": (a, a),
    }[case]
    whole = a.clone()
    want_d = {
        "shift-down": whole[1:], "shift-right": whole[:, 1:], "transpose": whole,
        "row": whole, "self": whole,
    }[case]
    want_s = {
        "shift-down": whole[:-1], "shift-right": whole[:, :-1], "transpose": whole.T,
        "row": whole[3], "self": whole,
    }[case].clone()
    want_d.copy_(want_s.expand_as(want_d))
    ts = torch.cuda.current_stream()
    dv = StridedMemoryView.from_dlpack(d, stream_ptr=ts.cuda_stream or 1)
    sv = StridedMemoryView.from_dlpack(s, stream_ptr=ts.cuda_stream or 1)
    dv.copy_from(sv, stream=ts.cuda_stream, blocking=True)
    assert torch.equal(a.contiguous().view(torch.uint8), whole.contiguous().view(torch.uint8))


# ---- two GPUs ----------------------------------------------------------------------------


def across_cases(r, c):
    """(name, dst, src): (shape, strides, offset) in elements; the
    destination over r x 2c elements, the source over r x 3c."""
    dc = ((r, c), (c, 1), 0)
    sparse = ((r, c), (3 * c, 3), 1)
    return [
        ("c<-c", dc, ((r, c), (c, 1), 0)),
        ("c<-pitched", dc, ((r, c), (c + 3, 1), 2)),
        ("c<-transposed", dc, ((r, c), (1, r), 0)),
        ("transposed<-c", ((r, c), (1, r), 0), ((r, c), (c, 1), 0)),
        ("c<-reversed", dc, ((r, c), (-c, -1), r * c - 1)),
        ("c<-row", dc, ((c,), (1,), 5)),
        ("c<-sparse", dc, sparse),
        ("transposed<-sparse", ((r, c), (1, r), 0), sparse),
        ("gapped<-sparse", ((r, c), (2 * c, 2), 1), sparse),
        ("gapped<-sparse-transposed", ((r, c), (2 * c, 2), 0), ((r, c), (1, 3 * r), 0)),
    ]


R, C = 41, 53


@needs_cupy
@needs_two
@pytest.mark.parametrize("peer", ["peer", "no-peer"])
@pytest.mark.parametrize("devices", [(1, 0), (0, 1)], ids=lambda d: f"{d[1]}to{d[0]}")
@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("case", [c[0] for c in across_cases(R, C)])
def test_two_gpus(case, itemsize, devices, peer, monkeypatch):
    if peer == "no-peer":
        monkeypatch.setenv("STRIDED_COPY_NO_PEER", "1")
    else:
        monkeypatch.delenv("STRIDED_COPY_NO_PEER", raising=False)
    _, dst, src = next(c for c in across_cases(R, C) if c[0] == case)
    dd, sd = devices
    dst_initial = random_bytes(R * 2 * C * itemsize, 1)
    src_initial = random_bytes(R * 3 * C * itemsize, 2)
    with cupy.cuda.Device(sd):
        src_raw = cupy.asarray(src_initial)
    with cupy.cuda.Device(dd):
        dst_raw = cupy.asarray(dst_initial)
        settle(sd, dd)
        stream = cupy.cuda.Stream(non_blocking=True)
        dv = view_of(dst_raw, itemsize, *dst)
        sv = view_of(src_raw, itemsize, *src)
        assert dv.device_id == dd and sv.device_id == sd
        dv.copy_from(sv, stream=stream.ptr)
        stream.synchronize()
        got = dst_raw.get()
    with cupy.cuda.Device(sd):
        src_now = src_raw.get()
    want = dst_initial.copy()
    np.copyto(strided_array(want, itemsize, *dst[:2], dst[2] * itemsize, np),
              strided_array(src_initial, itemsize, *src[:2], src[2] * itemsize, np))
    assert_bytes(got, want, "vs np.copyto")
    assert_bytes(src_now, src_initial, "source changed")


@needs_cupy
@needs_two
@pytest.mark.parametrize("peer", ["peer", "no-peer"])
@pytest.mark.parametrize("case", ["transpose", "sparse", "contiguous"])
def test_two_gpus_large(case, peer, monkeypatch):
    """4096 x 4096 float32 from device 0 to device 1 on a stream of device 1,
    compared there with cupy's own copy."""
    if peer == "no-peer":
        monkeypatch.setenv("STRIDED_COPY_NO_PEER", "1")
    else:
        monkeypatch.delenv("STRIDED_COPY_NO_PEER", raising=False)
    n = 4096
    with cupy.cuda.Device(0):
        a = cupy.random.random((n, 3 * n), dtype=cupy.float32)
        src = {"transpose": a[:, :n].T, "sparse": a[:, ::3],
               "contiguous": cupy.ascontiguousarray(a[:, :n])}[case]
        host = cupy.ascontiguousarray(src).get()
    with cupy.cuda.Device(1):
        stream = cupy.cuda.Stream(non_blocking=True)
        dst = cupy.zeros((n, n), cupy.float32)
        settle(0, 1)
        dv = StridedMemoryView.from_cuda_array_interface(dst, stream_ptr=stream.ptr)
        sv = StridedMemoryView.from_cuda_array_interface(src, stream_ptr=-1)
        dv.copy_from(sv, stream=stream.ptr)
        stream.synchronize()
        assert np.array_equal(dst.get().view(np.uint32), host.view(np.uint32))
