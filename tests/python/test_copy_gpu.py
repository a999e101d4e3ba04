"""StridedMemoryView.copy_from / copy_to with device memory on one GPU
(include/strided/copy.h, docs/copies.md), with CuPy
for memory and as the oracle, and PyTorch and cuda.core where present.

What is checked:

- Device to device over the layout classes of test_copy.py (c, f, t, g, n;
  sources also b, b1, b0) x itemsizes 1, 2, 3, 4, 8, 12, 16 x 2-D and 3-D
  shapes, 0-d, empty and 64-dim: the whole buffers under both sides equal,
  byte for byte, what cupy.copyto makes of copies of the same bytes (each
  element seen as a trailing axis of itemsize bytes, so that any itemsize
  copies as raw bytes), and what np.copyto makes of them on the host. Views
  come through the CUDA Array Interface (any layout: CuPy 14.2's DLPack
  export mangles negative strides) and, for the layouts CuPy exports
  faithfully, through DLPack; PyTorch tensors through DLPack.
- Host and device: pageable NumPy memory and strided.PinnedMemoryResource
  buffers, both directions, contiguous and not (test_copy_transfer_gpu.py
  goes through every transfer path); managed memory against device memory.
  Overlapping device copies and copies between two GPUs are in
  test_copy_multi_gpu.py.
- Streams: stream=None for a copy that needs the device is a ValueError
  ("needs a stream"); blocking=True (and the default for host<->device)
  returns with the stream idle and the data in place; blocking=False (the
  default device to device) returns once queued, and synchronising the
  stream shows the data; work queued before the copy on the same stream is
  seen by it, also by a host copy given that stream.
- The validation errors of a copy (docs/copies.md) on device views,
  destination untouched.

The module skips with "skipped: no CUDA device" where no CUDA device is
usable; tests that need CuPy, PyTorch or cuda.core skip by themselves.
"""

import ctypes
import itertools
import re

import numpy as np
import pytest

from copy_cases import DTYPES, Spec, assert_bytes, klass, random_bytes, spec_of
from gpu_util import cuda_device_count, optional, optional_torch


if cuda_device_count() == 0:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

import strided  # noqa: E402
from strided import Buffer, StridedLayout, StridedMemoryView  # noqa: E402


cupy = optional("cupy")
torch = optional_torch()
core = None
for _package in ("cuda.core", "cuda.core.experimental"):
    _core = optional(_package)
    if _core is not None and hasattr(_core, "Device"):
        core = _core
        break

needs_cupy = pytest.mark.skipif(cupy is None, reason="needs CuPy")
needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch with CUDA")
needs_core = pytest.mark.skipif(core is None, reason="needs cuda.core")

# Everything here allocates, fills and reads device memory through CuPy.
pytestmark = needs_cupy

ITEMSIZES = list(DTYPES)
DST_CLASSES = ["c", "f", "t", "g", "n"]
SRC_CLASSES = DST_CLASSES + ["b", "b1", "b0"]
SHAPES = [(31, 33), (5, 7, 9), (1000, 3)]


# ---- fixtures ------------------------------------------------------------------


@pytest.fixture(autouse=True)
def device_zero():
    """Device 0 is CuPy's current device, and the device is idle when a test
    ends."""
    if cupy is not None:
        cupy.cuda.Device(0).use()
    yield
    if cupy is not None:
        cupy.cuda.runtime.deviceSynchronize()


@pytest.fixture
def stream():
    """A new non-blocking CuPy stream (pass stream.ptr to the copies)."""
    s = cupy.cuda.Stream(non_blocking=True)
    yield s
    s.synchronize()


def idle():
    cupy.cuda.runtime.deviceSynchronize()


_SPIN = None


def spin(stream, cycles=200_000_000):
    """Queue a kernel that keeps stream busy for about 0.1 s, so that work
    queued after it is still pending when the host looks."""
    global _SPIN
    if _SPIN is None:
        _SPIN = cupy.RawKernel(
            r"""
            extern "C" __global__ void spin(long long cycles) {
                long long start = clock64();
                while (clock64() - start < cycles) { }
            }
            """,
            "spin",
        )
    with stream:
        _SPIN((1,), (1,), (np.int64(cycles),))


# ---- layouts as plain data -------------------------------------------------------


def is_dense(spec, itemsize):
    """Whether spec's elements fill its bytes from offset 0 with no gaps or
    negative strides (so from_buffer can describe it)."""
    if spec.offset != 0 or any(s < 0 for s in spec.strides):
        return False
    return int(np.prod(spec.shape)) * itemsize == spec.nbytes


class RawCAI:
    """An object whose CUDA Array Interface is desc; keep holds the memory."""

    def __init__(self, desc, keep=None):
        self.keep = keep
        self.__cuda_array_interface__ = desc


class StreamProtocol:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


# ---- memory of each kind -------------------------------------------------------------


class Mem:
    """nbytes random bytes of one kind of memory: "device" (CuPy), "pinned"
    (strided.PinnedMemoryResource), "managed" (strided.ManagedMemoryResource)
    or "pageable" (NumPy), with views of Specs over it."""

    def __init__(self, kind, nbytes, seed=0):
        self.kind = kind
        self.nbytes = nbytes
        self.initial = random_bytes(nbytes, seed)
        n = max(nbytes, 1)
        if kind == "device":
            self.raw = cupy.zeros(n, cupy.uint8)
            if nbytes:
                self.raw[:nbytes].set(self.initial)
            self.ptr = self.raw.data.ptr
        elif kind in ("pinned", "managed"):
            mr = strided.PinnedMemoryResource() if kind == "pinned" else strided.ManagedMemoryResource(0)
            self.buf = mr.allocate(n)
            self.host = np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(self.buf.handle))
            self.host[:nbytes] = self.initial
            self.ptr = self.buf.handle
        else:
            assert kind == "pageable"
            self.host = np.zeros(n, np.uint8)
            self.host[:nbytes] = self.initial
            self.ptr = self.host.ctypes.data
        idle()

    def bytes(self):
        """The current bytes (after the device is idle)."""
        idle()
        if self.kind == "device":
            return self.raw[: self.nbytes].get()
        return self.host[: self.nbytes].copy()

    def numpy(self, spec, itemsize, data=None):
        """NumPy's array of spec over data (default: this memory's initial
        bytes, copied)."""
        data = self.initial.copy() if data is None else data
        return np.ndarray(spec.shape, DTYPES[itemsize], buffer=data, offset=spec.offset,
                          strides=spec.strides)

    def cupy_bytes(self, spec, itemsize, raw=None):
        """spec over raw (default: this device memory) as a CuPy uint8 array
        with a trailing axis of itemsize bytes."""
        raw = self.raw if raw is None else raw
        return cupy.ndarray(spec.shape + (itemsize,), cupy.uint8, memptr=raw.data + spec.offset,
                            strides=spec.strides + (1,))

    def view(self, spec, itemsize, how="cai", readonly=False, stream_ptr=-1):
        """A StridedMemoryView of spec over this memory, through the CUDA
        Array Interface ("cai"), DLPack from CuPy or NumPy ("dlpack"), the
        array interface ("ai", pageable) or from_buffer ("buffer", pinned and
        managed dense specs)."""
        dtype = DTYPES[itemsize]
        if self.kind == "pageable":
            a = np.ndarray(spec.shape, dtype, buffer=self.host, offset=spec.offset,
                           strides=spec.strides)
            if readonly:
                a.flags.writeable = False
            if how == "dlpack" and dtype.kind != "V" and a.flags.aligned:
                return StridedMemoryView.from_dlpack(a, stream_ptr=-1)
            return StridedMemoryView.from_array_interface(a)
        if how == "buffer" and self.kind != "device" and is_dense(spec, itemsize):
            layout = StridedLayout(spec.shape, tuple(s // itemsize for s in spec.strides), itemsize)
            return StridedMemoryView.from_buffer(self.buf, layout, is_readonly=readonly)
        if (how == "dlpack" and self.kind == "device" and dtype.kind != "V" and not readonly
                and all(s >= 0 for s in spec.strides)):
            a = cupy.ndarray(spec.shape, dtype, memptr=self.raw.data + spec.offset,
                             strides=spec.strides)
            return StridedMemoryView.from_dlpack(a, stream_ptr=stream_ptr)
        desc = {
            "version": 3,
            "shape": spec.shape,
            "typestr": dtype.str,
            "descr": dtype.descr,
            "data": (self.ptr + spec.offset, readonly),
            "strides": spec.strides if spec.shape else None,
            "stream": None,
        }
        return StridedMemoryView.from_cuda_array_interface(RawCAI(desc, self), stream_ptr=-1)


def expected_bytes(dst_mem, dst_spec, src_mem, src_spec, itemsize):
    """The destination's bytes after the copy, by np.copyto on copies of the
    initial bytes."""
    want = dst_mem.initial.copy()
    np.copyto(dst_mem.numpy(dst_spec, itemsize, want), src_mem.numpy(src_spec, itemsize))
    return want


def copy(dv, sv, method, **kwargs):
    if method == "copy_from":
        assert dv.copy_from(sv, **kwargs) is None
    else:
        assert sv.copy_to(dv, **kwargs) is None


def check(kinds, dst_spec, src_spec, itemsize, stream, *, how=("cai", "cai"),
          method="copy_from", blocking=None, seed=0):
    """Copy src into dst between memory of kinds (dst kind, src kind) on
    stream and compare the bytes with NumPy's (and, device to device and
    below 64 axes, with CuPy's). Returns (dst Mem, src Mem, dst view, src
    view)."""
    dst = Mem(kinds[0], dst_spec.nbytes, seed)
    src = Mem(kinds[1], src_spec.nbytes, seed + 1)
    dv = dst.view(dst_spec, itemsize, how[0], stream_ptr=stream.ptr)
    sv = src.view(src_spec, itemsize, how[1], stream_ptr=stream.ptr)
    copy(dv, sv, method, stream=stream.ptr, blocking=blocking)
    stream.synchronize()
    got = dst.bytes()
    assert_bytes(got, expected_bytes(dst, dst_spec, src, src_spec, itemsize), "vs np.copyto")
    assert_bytes(src.bytes(), src.initial, "source changed")
    # CuPy's answer too, where its arrays (at most 64 axes) hold the views
    # with the trailing byte axis added.
    if kinds == ("device", "device") and max(len(dst_spec.shape), len(src_spec.shape)) < 64:
        want = cupy.asarray(dst.initial if dst.nbytes else np.zeros(1, np.uint8))
        if dst.nbytes:
            src_copy = cupy.asarray(src.initial) if src.nbytes else cupy.zeros(1, cupy.uint8)
            cupy.copyto(dst.cupy_bytes(dst_spec, itemsize, want),
                        src.cupy_bytes(src_spec, itemsize, src_copy))
            assert_bytes(got, want.get(), "vs cupy.copyto")
    return dst, src, dv, sv


# ---- device to device ------------------------------------------------------------------


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dst,src", list(itertools.product(DST_CLASSES, SRC_CLASSES)),
                         ids=lambda c: c)
def test_d2d_classes(dst, src, shape, itemsize, stream):
    *_, dv, sv = check(("device", "device"), klass(dst, shape, itemsize),
                       klass(src, shape, itemsize), itemsize, stream, seed=itemsize)
    assert dv.is_device_accessible and sv.is_device_accessible
    assert dv.device_id == sv.device_id == 0
    # The planner looks at layouts only: the same plan as on the host.
    assert strided.copy_plan(dv, sv) == strided.copy_plan(dv.layout, sv.layout)


@pytest.mark.parametrize("itemsize", [1, 3, 16])
@pytest.mark.parametrize("dst,src", [("c", "t"), ("g", "n"), ("n", "b1"), ("f", "b0"),
                                     ("t", "g")])
@pytest.mark.parametrize("blocking", [None, False, True])
def test_d2d_copy_to(dst, src, itemsize, blocking, stream):
    shape = (17, 6, 5)
    check(("device", "device"), klass(dst, shape, itemsize), klass(src, shape, itemsize),
          itemsize, stream, method="copy_to", blocking=blocking)


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("dst,src", [("c", "c"), ("c", "t"), ("t", "c"), ("c", "g"),
                                     ("g", "c"), ("f", "g"), ("c", "b"), ("g", "b1")])
def test_d2d_dlpack_views(dst, src, itemsize, stream):
    """Views that come from CuPy by DLPack (on layouts without negative
    strides) copy alike."""
    shape = (23, 19)
    check(("device", "device"), klass(dst, shape, itemsize), klass(src, shape, itemsize),
          itemsize, stream, how=("dlpack", "dlpack"))


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("dst_shape,src_shape", [
    ((), ()), ((4, 5), ()), ((1,), ()), ((1, 1, 1), (1,)), ((3, 1, 2), (1, 2)),
])
def test_d2d_zero_dim_and_single(dst_shape, src_shape, itemsize, stream):
    for dst, src in [("c", "c"), ("n", "c"), ("g", "n")]:
        check(("device", "device"), klass(dst, dst_shape, itemsize),
              klass(src, src_shape, itemsize), itemsize, stream)


@pytest.mark.parametrize("dst_shape,src_shape", [
    ((0,), (0,)), ((0, 5), (0, 5)), ((5, 0), (5, 0)), ((0, 5), (5,)), ((3, 0), (3, 1)),
])
@pytest.mark.parametrize("stream_arg", ["stream", None])
def test_d2d_empty(dst_shape, src_shape, stream_arg, stream):
    """Zero-volume copies return at once; they need no stream."""
    for dst, src in [("c", "c"), ("f", "c"), ("g", "n")]:
        d = Mem("device", klass(dst, dst_shape, 8).nbytes)
        s = Mem("device", klass(src, src_shape, 8).nbytes, 1)
        dv = d.view(klass(dst, dst_shape, 8), 8)
        sv = s.view(klass(src, src_shape, 8), 8)
        assert strided.copy_plan(dv, sv)["kernel"] == "nothing"
        dv.copy_from(sv, stream=stream.ptr if stream_arg else None)
        assert_bytes(d.bytes(), d.initial)


def shape64():
    """64 axes (the most a layout has), six of them of extent 2."""
    shape = [1] * 64
    for axis in (0, 7, 19, 33, 47, 63):
        shape[axis] = 2
    return tuple(shape)


@pytest.mark.parametrize("itemsize", [1, 3, 16])
@pytest.mark.parametrize("dst,src", [("c", "c"), ("c", "f"), ("g", "n"), ("n", "g"),
                                     ("c", "b"), ("t", "b1"), ("g", "b0")])
def test_d2d_sixty_four_dims(dst, src, itemsize, stream):
    shape = shape64()
    check(("device", "device"), klass(dst, shape, itemsize), klass(src, shape, itemsize),
          itemsize, stream)


@pytest.mark.parametrize("kinds", [("device", "pageable"), ("pageable", "device"),
                                   ("device", "pinned"), ("pinned", "device")], ids="-".join)
@pytest.mark.parametrize("dst,src", [("c", "n"), ("c", "g"), ("g", "c"), ("c", "b")])
def test_host_device_sixty_four_dims(kinds, dst, src, stream):
    """64-axis views between host and device memory, every transfer path
    (pinned and pageable, dense and gapped, broadcast sources)."""
    shape = shape64()
    how = tuple("ai" if k == "pageable" else "cai" for k in kinds)
    check(kinds, klass(dst, shape, 8), klass(src, shape, 8), 8, stream, how=how)


@pytest.mark.parametrize("case", ["transpose", "gather", "broadcast", "rows", "reversed"])
def test_d2d_large(case, stream):
    n = 4096
    with stream:
        a = cupy.random.random((n, n), dtype=cupy.float32)
        if case == "transpose":
            dst, src = cupy.empty((n, n), cupy.float32), a.T
        elif case == "gather":
            dst, src = cupy.empty((n, n // 2), cupy.float32), a[:, ::2]
        elif case == "broadcast":
            dst, src = cupy.empty((n, n), cupy.float32), a[:, :1]
        elif case == "rows":
            dst, src = cupy.empty((n, n - 3), cupy.float32), a[:, 3:]
        else:
            dst, src = cupy.empty((n, n), cupy.float32), a[::-1, ::-1]
        want = cupy.empty_like(dst)
        cupy.copyto(want, src)
    # CAI for src: CuPy's DLPack export of negative strides is wrong (14.2).
    dv = StridedMemoryView.from_dlpack(dst, stream_ptr=stream.ptr)
    sv = StridedMemoryView.from_cuda_array_interface(src, stream_ptr=stream.ptr)
    dv.copy_from(sv, stream=stream.ptr)
    stream.synchronize()
    assert bool(cupy.array_equal(dst.view(cupy.uint32), want.view(cupy.uint32)))


def aligned_case(kind, itemsize, shift):
    """A (dst Spec, src Spec) pair of one kind of plan, element 0 of each at
    byte `shift` past a well-aligned start: the device kernels pick their
    word width by the alignment the two sides share, and fall back to
    element-by-element (or to cuMemcpyAsync) without it."""
    ds, ss = shift
    s = itemsize
    if kind == "contiguous":
        n = 4099
        return Spec(n * s + ds, ds, (n,), (s,)), Spec(n * s + ss, ss, (n,), (s,))
    if kind == "contiguous-large":
        n = (1 << 20) + 3
        return Spec(n * s + ds, ds, (n,), (s,)), Spec(n * s + ss, ss, (n,), (s,))
    if kind == "rows":
        return (Spec(37 * 301 * s + ds, ds, (37, 300), (301 * s, s)),
                Spec(37 * 310 * s + ss, ss, (37, 300), (310 * s, s)))
    if kind == "short-rows":
        return (Spec(37 * 53 * s + ds, ds, (37, 50), (53 * s, s)),
                Spec(37 * 60 * s + ss, ss, (37, 50), (60 * s, s)))
    if kind == "transpose":
        return (Spec(130 * 67 * s + ds, ds, (130, 67), (67 * s, s)),
                Spec(130 * 67 * s + ss, ss, (130, 67), (s, 130 * s)))
    if kind == "broadcast":
        return (Spec(64 * 300 * s + ds, ds, (64, 300), (300 * s, s)),
                Spec(64 * s + ss, ss, (64, 1), (s, s)))
    if kind == "reversed-rows":
        # [:, ::-1] of rows of 4112 elements (257 16-byte vectors of 1-byte
        # elements, 2056 of 8-byte ones): aligned, the rows move as 16-byte
        # vectors with their elements reversed, a partial chunk at each end.
        n = 4112
        return (Spec(37 * n * s + ds, ds, (37, n), (n * s, s)),
                Spec(37 * n * s + ss, ss + (n - 1) * s, (37, n), (n * s, -s)))
    if kind == "gather":
        return (Spec(50 * 40 * s + ds, ds, (50, 40), (40 * s, s)),
                Spec(50 * 40 * 3 * s + ss, ss, (50, 40), (3 * 40 * s, 3 * s)))
    raise AssertionError(kind)


ALIGN_KINDS = ["contiguous", "contiguous-large", "rows", "short-rows", "transpose",
               "broadcast", "gather", "reversed-rows"]
SHIFTS = [(0, 0), (1, 0), (0, 1), (2, 6), (4, 8), (8, 4), (3, 5), (16, 32)]


@pytest.mark.parametrize("shift", SHIFTS, ids=lambda s: f"{s[0]}-{s[1]}")
@pytest.mark.parametrize("itemsize", [1, 2, 3, 4, 8, 16])
@pytest.mark.parametrize("kind", ALIGN_KINDS)
def test_d2d_alignment(kind, itemsize, shift, stream):
    if kind == "contiguous-large" and itemsize > 4:
        pytest.skip("one large contiguous copy per small itemsize is enough")
    dst, src = aligned_case(kind, itemsize, shift)
    *_, dv, sv = check(("device", "device"), dst, src, itemsize, stream)
    want = "gather" if kind == "reversed-rows" else kind.replace("-large", "").replace("short-", "")
    assert strided.copy_plan(dv, sv)["kernel"] == want


def permuted_spec(shape, itemsize, seed, flip_unit=False):
    """A dense layout of shape with its axes in a random order (seeded); with
    flip_unit, the axis of stride 1 reversed. Nothing merges with a C
    destination but by chance."""
    perm = np.random.default_rng(seed).permutation(len(shape))
    base = np.empty(tuple(shape[p] for p in perm), DTYPES[itemsize])
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
def test_d2d_many_axes(dims, seed, itemsize, stream):
    """More axes of extent 2 than the small argument structs hold (8), none
    of them mergeable: transposes with many batch axes, rows and gathers
    over many axes."""
    shape = (2,) * dims
    c = klass("c", shape, itemsize)
    for dst, src in [(c, permuted_spec(shape, itemsize, seed)),
                     (c, permuted_spec(shape, itemsize, seed, True)),
                     (permuted_spec(shape, itemsize, seed + 1),
                      permuted_spec(shape, itemsize, seed, True))]:
        *_, dv, sv = check(("device", "device"), dst, src, itemsize, stream)
        assert strided.copy_plan(dv, sv)["ndim"] > 8


def free_device_memory():
    return cupy.cuda.runtime.memGetInfo()[0]


@pytest.mark.parametrize("case", ["gather", "rows", "transpose", "broadcast", "contiguous"])
def test_d2d_wide_indices(case, stream):
    """Copies whose offsets pass 2**31 bytes: the 64-bit index kernels.
    Compared on the device with cupy.copyto."""
    n = 46400  # n * n int8 elements pass 2**31
    if free_device_memory() < 4 * n * n + (1 << 30):
        pytest.skip("needs about 9 GB of free device memory")
    with stream:
        if case in ("gather", "rows"):
            raw = cupy.random.randint(0, 256, size=(1 << 31) + (1 << 21), dtype=cupy.uint8)
            if case == "gather":
                src, dst = raw[:: 1 << 20], cupy.zeros(raw[:: 1 << 20].size, cupy.uint8)
            else:
                src = cupy.lib.stride_tricks.as_strided(raw, (3, 1 << 20), (1 << 30, 1))
                dst = cupy.zeros((3, 1 << 20), cupy.uint8)
        else:
            a = cupy.random.randint(0, 256, size=(n, n), dtype=cupy.uint8)
            dst = cupy.zeros((n, n), cupy.uint8)
            src = {"transpose": a.T, "broadcast": a[:, :1], "contiguous": a}[case]
        want = cupy.zeros_like(dst)
        cupy.copyto(want, src)
    dv = StridedMemoryView.from_dlpack(dst, stream_ptr=stream.ptr)
    sv = StridedMemoryView.from_cuda_array_interface(src, stream_ptr=stream.ptr)
    assert strided.copy_plan(dv, sv)["kernel"] == case
    dv.copy_from(sv, stream=stream.ptr)
    stream.synchronize()
    assert bool(cupy.array_equal(dst, want))
    del dst, src, want
    cupy.get_default_memory_pool().free_all_blocks()


def test_d2d_same_buffer_disjoint(stream):
    """Source and destination in one allocation, disjoint: copied."""
    mem = Mem("device", 64 * 8)
    dst = Spec(64 * 8, 0, (4, 5), (40, 8))
    src = Spec(64 * 8, 32 * 8, (4, 5), (8, 32))
    mem.view(dst, 8).copy_from(mem.view(src, 8), stream=stream.ptr)
    stream.synchronize()
    want = mem.initial.copy()
    np.copyto(mem.numpy(dst, 8, want), mem.numpy(src, 8, want).copy())
    assert_bytes(mem.bytes(), want)


OVERLAPS = [
    ("shift-down", lambda a: a[1:], lambda a: a[:-1]),
    ("shift-right", lambda a: a[:, 1:], lambda a: a[:, :-1]),
    ("transpose", lambda a: a, lambda a: a.T),
    ("reversed", lambda a: a, lambda a: a[::-1, ::-1]),
    ("self", lambda a: a, lambda a: a),
    ("broadcast-row", lambda a: a[:-1], lambda a: a[-2]),
]


@pytest.mark.parametrize("itemsize", [1, 8, 12])
@pytest.mark.parametrize("case", [c[0] for c in OVERLAPS])
@pytest.mark.parametrize("method", ["copy_from", "copy_to"])
def test_d2d_overlap(case, itemsize, method, stream):
    """Overlapping device copies give what the source held before the copy
    (staged through a device temporary; test_copy_multi_gpu.py has more)."""
    _, dst, src = next(c for c in OVERLAPS if c[0] == case)
    base = np.empty((9, 9), DTYPES[itemsize])
    mem = Mem("device", base.nbytes)
    dst_spec, src_spec = spec_of(dst(base), base), spec_of(src(base), base)
    copy(mem.view(dst_spec, itemsize), mem.view(src_spec, itemsize), method,
         stream=stream.ptr)
    stream.synchronize()
    want = mem.initial.copy()
    np.copyto(mem.numpy(dst_spec, itemsize, want), mem.numpy(src_spec, itemsize, want).copy())
    assert_bytes(mem.bytes(), want)


# ---- host and device ----------------------------------------------------------------------

# (dst class, src class, shape) pairs whose plan is one contiguous run.
CONTIGUOUS = [("c", "c", (31, 33)), ("f", "f", (31, 33)), ("t", "t", (5, 7, 9)),
              ("n", "n", (31, 33)), ("c", "c", ()), ("c", "c", (1, 1, 1)), ("c", "c", (4096,))]
# Pairs that are not.
NON_CONTIGUOUS = [("c", "t", (31, 33)), ("t", "c", (31, 33)), ("c", "g", (31, 33)),
                  ("g", "c", (31, 33)), ("c", "n", (31, 33)), ("n", "c", (31, 33)),
                  ("c", "b", (31, 33)), ("c", "b1", (31, 33)), ("f", "b0", (5, 7, 9))]
DIRECTIONS = {"h2d": ("device", "pageable"), "d2h": ("pageable", "device")}


def pair_id(p):
    return f"{p[0]}-{p[1]}-" + "x".join(map(str, p[2]))


@pytest.mark.parametrize("itemsize", [1, 3, 8, 16])
@pytest.mark.parametrize("pair", CONTIGUOUS, ids=pair_id)
@pytest.mark.parametrize("host", ["pageable", "pinned"])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_host_device_contiguous(direction, host, pair, itemsize, stream):
    dst, src, shape = pair
    kinds = ("device", host) if direction == "h2d" else (host, "device")
    how = tuple("ai" if k == "pageable" else "cai" for k in kinds)
    *_, dv, sv = check(kinds, klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize,
                       stream, how=how)
    assert strided.copy_plan(dv, sv)["kernel"] == "contiguous"


@pytest.mark.parametrize("direction", ["h2d", "d2h"])
@pytest.mark.parametrize("host_how", ["dlpack", "buffer"])
def test_host_device_contiguous_other_views(direction, host_how, stream):
    """NumPy views by DLPack and pinned views made with from_buffer (the
    buffer's own memory resource) copy alike."""
    spec = klass("c", (64, 48), 4)
    for host in ("pageable", "pinned"):
        kinds = ("device", host) if direction == "h2d" else (host, "device")
        how = ("dlpack", host_how) if direction == "h2d" else (host_how, "dlpack")
        check(kinds, spec, spec, 4, stream, how=how)


@pytest.mark.parametrize("itemsize", [1, 3, 8])
@pytest.mark.parametrize("pair", NON_CONTIGUOUS, ids=pair_id)
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_pageable_device_non_contiguous(direction, pair, itemsize, stream):
    """Between pageable host memory and the device any layout copies (the
    transfer paths: footprint DMA and a device permute, staging, host
    gather or scatter; test_copy_transfer_gpu.py checks each path)."""
    dst, src, shape = pair
    dst_spec, src_spec = klass(dst, shape, itemsize), klass(src, shape, itemsize)
    kinds = DIRECTIONS[direction]
    d, s = Mem(kinds[0], dst_spec.nbytes), Mem(kinds[1], src_spec.nbytes, 1)
    dv, sv = d.view(dst_spec, itemsize), s.view(src_spec, itemsize)
    assert strided.copy_plan(dv, sv)["kernel"] != "contiguous"
    for method in ("copy_from", "copy_to"):
        copy(dv, sv, method, stream=stream.ptr)
        assert_bytes(d.bytes(), expected_bytes(d, dst_spec, s, src_spec, itemsize))
    assert_bytes(s.bytes(), s.initial)


@pytest.mark.parametrize("itemsize", [1, 3, 8, 16])
@pytest.mark.parametrize("pair", NON_CONTIGUOUS, ids=pair_id)
@pytest.mark.parametrize("host", ["pinned", "managed"])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_pinned_managed_device_any_layout(direction, host, pair, itemsize, stream):
    """Copies between pinned or managed memory and device memory, in any
    layout (pinned: the transfer paths; managed: the device's kernels)."""
    dst, src, shape = pair
    kinds = ("device", host) if direction == "h2d" else (host, "device")
    check(kinds, klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize, stream)


@pytest.mark.parametrize("pair", CONTIGUOUS[:2] + NON_CONTIGUOUS, ids=pair_id)
@pytest.mark.parametrize("kinds", [("pinned", "pageable"), ("pageable", "pinned"),
                                   ("managed", "pageable"), ("pinned", "managed"),
                                   ("pinned", "pinned")], ids="-".join)
def test_host_accessible_pairs_copy_on_the_host(kinds, pair, stream):
    """Between host-accessible memory (pageable, pinned, managed) the copy
    runs on the host, in any layout, complete on return."""
    dst, src, shape = pair
    how = tuple("ai" if k == "pageable" else "cai" for k in kinds)
    check(kinds, klass(dst, shape, 12), klass(src, shape, 12), 12, stream, how=how)


# ---- streams and blocking ------------------------------------------------------------------

ALL_DIRECTIONS = {"d2d": ("device", "device"), "h2d": ("device", "pageable"),
                  "d2h": ("pageable", "device"), "pinned2d": ("device", "pinned")}


@pytest.mark.parametrize("direction", list(ALL_DIRECTIONS))
def test_device_copy_needs_a_stream(direction):
    kinds = ALL_DIRECTIONS[direction]
    spec = klass("c", (8, 8), 4)
    d, s = Mem(kinds[0], spec.nbytes), Mem(kinds[1], spec.nbytes, 1)
    dv, sv = d.view(spec, 4), s.view(spec, 4)
    for kwargs in ({}, {"stream": None}, {"stream": None, "blocking": True}):
        with pytest.raises(ValueError, match="needs a stream"):
            dv.copy_from(sv, **kwargs)
        with pytest.raises(ValueError, match="needs a stream"):
            sv.copy_to(dv, **kwargs)
    assert_bytes(d.bytes(), d.initial)


@pytest.mark.parametrize("direction", list(ALL_DIRECTIONS))
@pytest.mark.parametrize("blocking", [True, None])
def test_blocking_returns_with_the_data_in_place(direction, blocking, stream):
    """blocking=True, and the default between pageable memory and the
    device, return with the stream idle: work queued before the copy (a
    busy kernel) and the copy itself are done."""
    if blocking is None and direction in ("d2d", "pinned2d"):
        pytest.skip("device to device is non-blocking by default")
    kinds = ALL_DIRECTIONS[direction]
    spec = klass("c", (256, 256), 8)
    d, s = Mem(kinds[0], spec.nbytes), Mem(kinds[1], spec.nbytes, 1)
    dv, sv = d.view(spec, 8), s.view(spec, 8)
    spin(stream)
    dv.copy_from(sv, stream=stream.ptr, blocking=blocking)
    assert stream.done
    got = d.raw.get() if d.kind == "device" else d.host.copy()
    assert_bytes(got[: d.nbytes], s.initial)


@pytest.mark.parametrize("direction", ["d2d", "pinned2d"])
@pytest.mark.parametrize("blocking", [False, None])
def test_non_blocking_then_synchronise(direction, blocking, stream):
    kinds = ALL_DIRECTIONS[direction]
    spec = klass("c", (256, 256), 8)
    t = klass("t", (256, 256), 8)
    d, s = Mem(kinds[0], spec.nbytes), Mem(kinds[1], t.nbytes, 1)
    dv, sv = d.view(spec, 8), s.view(t, 8)
    spin(stream)
    dv.copy_from(sv, stream=stream.ptr, blocking=blocking)
    stream.synchronize()
    assert_bytes(d.bytes(), expected_bytes(d, spec, s, t, 8))


def test_copy_is_ordered_after_earlier_work_on_its_stream(stream):
    """The copy runs after what the stream already holds: a source written by
    a kernel queued behind a busy kernel is copied with its new values."""
    spec = klass("c", (128, 64), 4)
    d, s = Mem("device", spec.nbytes), Mem("device", spec.nbytes, 1)
    src = cupy.ndarray((128, 64), cupy.float32, memptr=s.raw.data)
    spin(stream)
    with stream:
        src.fill(3.5)
    d.view(spec, 4).copy_from(s.view(spec, 4), stream=stream.ptr, blocking=False)
    stream.synchronize()
    assert np.all(d.bytes().view(np.float32) == 3.5)


def test_host_copy_waits_for_its_stream(stream):
    """A copy between host memory given a stream waits for the work queued
    on it first: pinned memory written by a kernel behind a busy kernel is
    copied with its new values."""
    spec = klass("c", (128, 64), 4)
    p = Mem("pinned", spec.nbytes)
    out = np.zeros((128, 64), np.float32)
    mem = cupy.cuda.UnownedMemory(p.ptr, spec.nbytes, p, 0)
    on_device = cupy.ndarray((128, 64), cupy.float32, memptr=cupy.cuda.MemoryPointer(mem, 0))
    spin(stream)
    with stream:
        on_device.fill(7.25)
    StridedMemoryView.from_dlpack(out, stream_ptr=-1).copy_from(p.view(spec, 4), stream=stream.ptr)
    assert np.all(out == 7.25)


def stream_arguments(stream):
    values = {"int": stream.ptr, "__cuda_stream__": StreamProtocol(stream.ptr)}
    if hasattr(stream, "__cuda_stream__"):
        values["cupy Stream"] = stream
    return values


@pytest.mark.parametrize("which", ["int", "__cuda_stream__", "cupy Stream"])
def test_stream_argument_forms(which, stream):
    values = stream_arguments(stream)
    if which not in values:
        pytest.skip(f"CuPy {cupy.__version__}'s Stream has no __cuda_stream__")
    spec, t = klass("c", (40, 30), 2), klass("t", (40, 30), 2)
    d, s = Mem("device", spec.nbytes), Mem("device", t.nbytes, 1)
    d.view(spec, 2).copy_from(s.view(t, 2), stream=values[which])
    stream.synchronize()
    assert_bytes(d.bytes(), expected_bytes(d, spec, s, t, 2))


@needs_core
def test_cuda_core_stream(stream):
    device = core.Device(0)
    device.set_current()
    s = device.create_stream()
    spec = klass("c", (40, 30), 4)
    d, src = Mem("device", spec.nbytes), Mem("pageable", spec.nbytes, 1)
    d.view(spec, 4).copy_from(src.view(spec, 4, "ai"), stream=s)
    s.sync()
    assert_bytes(d.bytes(), src.initial)
    s.close()


# ---- errors on device views ------------------------------------------------------------------


def both_ways(dv, sv, exc, message, **kwargs):
    with pytest.raises(exc, match=message):
        dv.copy_from(sv, **kwargs)
    with pytest.raises(exc, match=message):
        sv.copy_to(dv, **kwargs)


def test_errors_on_device_views(stream):
    ptr = stream.ptr
    spec4, spec8 = klass("c", (2, 5), 4), klass("c", (2, 5), 8)
    d = Mem("device", spec8.nbytes)
    s = Mem("device", spec4.nbytes, 1)
    # itemsize: a destination without a dtype (upstream's test_wrong_itemsize).
    dbuf = Buffer.from_handle(d.ptr, d.nbytes, owner=d)
    dv8 = StridedMemoryView.from_buffer(dbuf, StridedLayout.dense((2, 5), 8))
    sv4 = s.view(spec4, 4)
    both_ways(dv8, sv4, ValueError, re.escape(
        "The itemsize of the destination and source layouts must match. "
        "Got dst itemsize:8 and src itemsize:4"), stream=ptr)
    # dtype
    sv_int = StridedMemoryView.from_dlpack(
        cupy.ndarray((2, 5), cupy.int32, memptr=s.raw.data), stream_ptr=ptr)
    dv_f32 = StridedMemoryView.from_dlpack(
        cupy.ndarray((2, 5), cupy.float32, memptr=d.raw.data), stream_ptr=ptr)
    both_ways(dv_f32, sv_int, ValueError, re.escape(
        "The destination and source dtypes must match. Got dst dtype:float32 and src "
        "dtype:int32"), stream=ptr)
    # shapes
    wide = StridedMemoryView.from_dlpack(
        cupy.ndarray((2, 6), cupy.int8, memptr=d.raw.data), stream_ptr=ptr)
    narrow = StridedMemoryView.from_dlpack(
        cupy.ndarray((2, 5), cupy.int8, memptr=s.raw.data), stream_ptr=ptr)
    both_ways(wide, narrow, ValueError, "cannot be broadcast together", stream=ptr)
    both_ways(narrow, wide, ValueError, "cannot be broadcast together", stream=ptr)
    # non-unique destination
    overlapping = d.view(Spec(d.nbytes, 0, (8, 3), (4, 4)), 4)
    assert not overlapping.readonly
    both_ways(overlapping, s.view(Spec(s.nbytes, 0, (3,), (4,)), 4), ValueError,
              re.escape("The destination layout is non-unique, i.e. some elements may "
                        "overlap in memory: "), stream=ptr)
    # read-only destination
    ro = d.view(Spec(40, 0, (2, 5), (20, 4)), 4, readonly=True)
    assert ro.readonly
    both_ways(ro, sv4, ValueError, re.escape("The destination view is read-only."), stream=ptr)
    # allocator: unknown keys
    both_ways(d.view(spec4, 4), sv4, ValueError, "unknown key 'gpu'", stream=ptr,
              allocator={"gpu": None})
    stream.synchronize()
    assert_bytes(d.bytes(), d.initial)
    assert_bytes(s.bytes(), s.initial)


# ---- PyTorch ----------------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("dst,src", [("c", "c"), ("c", "t"), ("t", "c"), ("c", "g"),
                                     ("g", "b")])
def test_torch_tensors(dst, src, dtype):
    def make(name, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        base = torch.randint(0, 256, (64 * 74 * 16,), dtype=torch.uint8, device="cuda",
                             generator=g)
        t = base.view(getattr(torch, dtype))
        if name == "c":
            return t[: 64 * 37].view(64, 37)
        if name == "t":
            return t[: 64 * 37].view(37, 64).T
        if name == "g":
            return t[: 64 * 74].view(64, 74)[:, ::2]
        if name == "b":
            return t[:37]
        raise AssertionError(name)

    d, s = make(dst, 1), make(src, 2)
    want = d.clone()
    want.copy_(s.expand(64, 37))
    ts = torch.cuda.current_stream()
    dv = StridedMemoryView.from_dlpack(d, stream_ptr=ts.cuda_stream or 1)
    sv = StridedMemoryView.from_dlpack(s, stream_ptr=ts.cuda_stream or 1)
    dv.copy_from(sv, stream=ts.cuda_stream, blocking=True)
    assert torch.equal(d.contiguous().view(torch.uint8), want.contiguous().view(torch.uint8))
