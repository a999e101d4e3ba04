"""StridedMemoryView.copy_from / copy_to between host memory and device
memory in any layout (docs/copies.md; the paths of src/copy/transfer.c), on
one GPU.

What is checked, byte for byte against np.copyto on copies of the same
bytes (the whole buffers under both sides: gaps and bytes around the
destination's elements must be left alone, the source must not change):

- every pair of layout classes of test_copy.py (destinations c, f, t, g, n;
  sources also b, b1, b0) x itemsizes 1, 2, 4, 8, 16 x shapes whose rows are
  shorter and longer than 4 KiB, to the device and back, with the host side
  in pageable NumPy memory (from_dlpack) and in pinned memory
  (strided.PinnedMemoryResource, through the CUDA Array Interface, which
  strided classifies as pinned); device memory from CuPy (from_dlpack where
  CuPy exports the layout faithfully);
- pinned PyTorch tensors, through from_dlpack (DLPack calls them CPU
  memory: the pageable paths) and as pinned memory (their NumPy views);
- copy_to as well as copy_from, the odd itemsizes 3 and 12;
- sparse slices: long rows (one 2-D copy from pinned memory), short rows
  and strided gathers (packed on the host), gapped on both sides;
- broadcast sources of one row and of one element;
- staging in pieces: a process with STRIDED_STAGING_CHUNK_BYTES=4096;
- large copies (several 32 MiB pieces);
- non-blocking copies from and to pinned memory return with the copy still
  queued behind earlier work, and are right once the stream is done;
- temporaries from allocator= resources, each called once per temporary
  with the copy's stream.

The module skips with "skipped: no CUDA device" where no CUDA device is
usable (test_copy_gpu's check); it needs CuPy, and PyTorch where named.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

# Skips this module too when there is no CUDA device.
from test_copy_gpu import (  # noqa: F401  (device_zero, stream: fixtures)
    DTYPES,
    Mem,
    Spec,
    assert_bytes,
    check,
    copy,
    cupy,
    device_zero,
    expected_bytes,
    klass,
    needs_cupy,
    needs_torch,
    spin,
    stream,
    torch,
)

import strided  # noqa: E402
from strided import StridedMemoryView  # noqa: E402

pytestmark = needs_cupy

DST_CLASSES = ["c", "f", "t", "g", "n"]
SRC_CLASSES = DST_CLASSES + ["b", "b1", "b0"]
ITEMSIZES = [1, 2, 4, 8, 16]
# Rows of 33, 9 and 1031 elements: 1031 x 4 bytes and more pass 4 KiB.
SHAPES = [(31, 33), (5, 7, 9), (6, 1031)]
HOW = {"pageable": "dlpack", "pinned": "cai", "device": "dlpack"}


def kinds_of(direction, host):
    return ("device", host) if direction == "h2d" else (host, "device")


def run(direction, host, dst_spec, src_spec, itemsize, stream, method="copy_from",
        blocking=None, seed=0):
    kinds = kinds_of(direction, host)
    return check(kinds, dst_spec, src_spec, itemsize, stream,
                 how=(HOW[kinds[0]], HOW[kinds[1]]), method=method, blocking=blocking,
                 seed=seed)


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("dst,src", [(d, s) for d in DST_CLASSES for s in SRC_CLASSES],
                         ids=lambda c: c)
@pytest.mark.parametrize("host", ["pageable", "pinned"])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_classes(direction, host, dst, src, itemsize, stream):
    for i, shape in enumerate(SHAPES):
        *_, dv, sv = run(direction, host, klass(dst, shape, itemsize), klass(src, shape, itemsize),
                         itemsize, stream, seed=i)
        host_view = sv if direction == "h2d" else dv
        if host == "pinned":
            assert host_view.is_device_accessible


@pytest.mark.parametrize("itemsize", [3, 12])
@pytest.mark.parametrize("dst,src", [("c", "t"), ("t", "c"), ("c", "g"), ("g", "c"), ("n", "g"),
                                     ("g", "b"), ("c", "b0"), ("f", "b1")], ids=lambda c: c)
@pytest.mark.parametrize("host", ["pageable", "pinned"])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
@pytest.mark.parametrize("method", ["copy_from", "copy_to"])
def test_copy_to_and_odd_itemsizes(method, direction, host, dst, src, itemsize, stream):
    for i, shape in enumerate(SHAPES):
        run(direction, host, klass(dst, shape, itemsize), klass(src, shape, itemsize), itemsize,
            stream, method=method, seed=i)


class TorchPinned(Mem):
    """Mem of pinned PyTorch memory: view(how="dlpack") gives the tensor
    (CPU memory to DLPack), how="cai" its pinned memory by address."""

    def __init__(self, nbytes, seed=0):
        self.kind = "pinned"
        self.nbytes = nbytes
        self.initial = np.random.default_rng(seed).integers(0, 256, size=nbytes, dtype=np.uint8)
        n = (max(nbytes, 1) + 15) // 16 * 16
        self.tensor = torch.zeros(n, dtype=torch.uint8, pin_memory=True)
        assert self.tensor.is_pinned()
        self.host = self.tensor.numpy()
        self.host[:nbytes] = self.initial
        self.ptr = self.tensor.data_ptr()

    def view(self, spec, itemsize, how="cai", readonly=False, stream_ptr=-1):
        dtype = getattr(torch, {1: "int8", 2: "int16", 4: "float32", 8: "float64",
                                16: "complex128"}[itemsize])
        if how == "dlpack" and all(s >= 0 for s in spec.strides) and spec.offset % itemsize == 0:
            typed = self.tensor.view(dtype)
            t = torch.as_strided(typed, spec.shape, [s // itemsize for s in spec.strides],
                                 spec.offset // itemsize)
            return StridedMemoryView.from_dlpack(t, stream_ptr=-1)
        return super().view(spec, itemsize, "cai", readonly, stream_ptr)


@needs_torch
@pytest.mark.parametrize("itemsize", [1, 4, 8, 16])
@pytest.mark.parametrize("dst,src", [("c", "c"), ("c", "t"), ("t", "c"), ("c", "g"), ("g", "c"),
                                     ("g", "n"), ("n", "g"), ("c", "b"), ("f", "b1")],
                         ids=lambda c: c)
@pytest.mark.parametrize("how", ["dlpack", "cai"])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_torch_pinned(direction, how, dst, src, itemsize, stream):
    for i, shape in enumerate(SHAPES):
        dst_spec, src_spec = klass(dst, shape, itemsize), klass(src, shape, itemsize)
        host_spec = src_spec if direction == "h2d" else dst_spec
        dev_spec = dst_spec if direction == "h2d" else src_spec
        host = TorchPinned(host_spec.nbytes, seed=i)
        dev = Mem("device", dev_spec.nbytes, seed=i + 1)
        hv = host.view(host_spec, itemsize, how)
        dv = dev.view(dev_spec, itemsize, "dlpack", stream_ptr=stream.ptr)
        # DLPack calls pinned tensors CPU memory: the pageable paths.
        dlpack = how == "dlpack" and all(s >= 0 for s in host_spec.strides)
        assert hv.is_device_accessible == (not dlpack)
        if direction == "h2d":
            dv.copy_from(hv, stream=stream.ptr)
            want = expected_bytes(dev, dst_spec, host, src_spec, itemsize)
            assert_bytes(dev.bytes(), want)
            assert_bytes(host.bytes(), host.initial, "source changed")
        else:
            dv.copy_to(hv, stream=stream.ptr)
            want = expected_bytes(host, dst_spec, dev, src_spec, itemsize)
            assert_bytes(host.bytes(), want)
            assert_bytes(dev.bytes(), dev.initial, "source changed")


def slice_spec(rows, cols, itemsize, row_pitch, col_step=1, offset_rows=0, reverse_rows=False):
    """rows x cols elements, every col_step-th of a row, rows row_pitch
    elements apart (reversed: from the last row up), in a buffer of just
    enough bytes."""
    s = itemsize
    nbytes = ((rows - 1 + offset_rows) * row_pitch + (cols - 1) * col_step + 1) * s
    if reverse_rows:
        return Spec(nbytes, (rows - 1 + offset_rows) * row_pitch * s, (rows, cols),
                    (-row_pitch * s, col_step * s))
    return Spec(nbytes, offset_rows * row_pitch * s, (rows, cols), (row_pitch * s, col_step * s))


def dense_spec(shape, itemsize):
    return klass("c", shape, itemsize)


SPARSE = {
    # 4400-byte rows, every third: one 2-D copy from pinned memory.
    "long-rows": lambda s: slice_spec(23, 4400 // s, s, 3 * 4400 // s, offset_rows=1),
    # The same from the last row up: a negative pitch, packed.
    "long-rows-reversed": lambda s: slice_spec(23, 4400 // s, s, 3 * 4400 // s,
                                               reverse_rows=True),
    # 200-element rows, every fifth: packed.
    "short-rows": lambda s: slice_spec(61, 200, s, 1000, offset_rows=2),
    # Every third element of every other row: packed.
    "gather": lambda s: slice_spec(40, 300, s, 1900, col_step=3),
}


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("case", list(SPARSE))
@pytest.mark.parametrize("host", ["pageable", "pinned"])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_sparse_slices(direction, host, case, itemsize, stream):
    sparse = SPARSE[case](itemsize)
    dense = dense_spec(sparse.shape, itemsize)
    if direction == "h2d":
        run(direction, host, dense, sparse, itemsize, stream)
        # Gapped on the device too: a device temporary and a device plan.
        run(direction, host, klass("g", sparse.shape, itemsize), sparse, itemsize, stream)
    else:
        run(direction, host, sparse, dense, itemsize, stream)
        run(direction, host, sparse, klass("t", sparse.shape, itemsize), itemsize, stream)


@pytest.mark.parametrize("itemsize", [1, 8, 16])
@pytest.mark.parametrize("host", ["pageable", "pinned"])
def test_broadcast_sources(host, itemsize, stream):
    """A row, a column and one element broadcast over large destinations."""
    shape = (700, 513)
    cases = [Spec(513 * itemsize, 0, (513,), (itemsize,)),
             Spec(700 * itemsize, 0, (700, 1), (itemsize, itemsize)),
             Spec(itemsize, 0, (), ())]
    for src in cases:
        for dst in ("c", "t", "g"):
            run("h2d", host, klass(dst, shape, itemsize), src, itemsize, stream)


def test_small_staging_chunks():
    """Staging in pieces of 4096 bytes (STRIDED_STAGING_CHUNK_BYTES, read
    when the first staged copy runs): pieces cut rows, planes and elements'
    runs at every offset; byte-exact both ways."""
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, %r)
        import numpy as np
        import cupy
        from test_copy_gpu import Mem, check, klass

        stream = cupy.cuda.Stream(non_blocking=True)
        n = 0
        for itemsize in (1, 2, 4, 8, 16):
            for shape in ((31, 33), (5, 7, 9), (6, 1031), (3, 5, 700)):
                for dst, src in (("c", "c"), ("c", "t"), ("t", "c"), ("c", "g"), ("g", "c"),
                                 ("g", "n"), ("n", "g"), ("c", "b"), ("g", "b1")):
                    for host in ("pageable", "pinned"):
                        how = {"pageable": "dlpack", "pinned": "cai", "device": "dlpack"}
                        for kinds in (("device", host), (host, "device")):
                            check(kinds, klass(dst, shape, itemsize), klass(src, shape, itemsize),
                                  itemsize, stream, how=(how[kinds[0]], how[kinds[1]]), seed=n)
                            n += 1
        print("checked", n)
        """
        % os.path.dirname(os.path.abspath(__file__))
    )
    env = dict(os.environ, STRIDED_STAGING_CHUNK_BYTES="4096")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "checked 720" in out.stdout


def test_bad_staging_chunk_size_is_reported():
    script = textwrap.dedent(
        """
        import numpy as np
        import cupy
        from strided import StridedMemoryView
        a = np.arange(100, dtype=np.float32)
        d = cupy.zeros(100, cupy.float32)
        try:
            StridedMemoryView.from_dlpack(d, stream_ptr=-1).copy_from(
                StridedMemoryView.from_dlpack(a, stream_ptr=-1), stream=1)
        except ValueError as e:
            print("ValueError:", e)
        """
    )
    env = dict(os.environ, STRIDED_STAGING_CHUNK_BYTES="12kb")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert 'STRIDED_STAGING_CHUNK_BYTES="12kb" is not a decimal byte count' in out.stdout


@pytest.mark.parametrize("case", ["contiguous", "transpose", "gather", "broadcast"])
@pytest.mark.parametrize("host", ["pageable", "pinned"])
def test_large(case, host, stream):
    """64 MiB and more: several pieces of the default 32 MiB staging chunk."""
    n = 4096
    if case == "contiguous":
        dst, src = dense_spec((2 * n + 3, n), 4), dense_spec((2 * n + 3, n), 4)
    elif case == "transpose":
        dst, src = dense_spec((n, n), 4), klass("t", (n, n), 4)
    elif case == "gather":
        dst, src = dense_spec((n, n // 3), 4), slice_spec(n, n // 3, 4, n, col_step=3)
    else:
        dst, src = dense_spec((n, n), 4), Spec(n * 4, 0, (n,), (4,))
    run("h2d", host, dst, src, 4, stream)
    if case != "broadcast":
        run("d2h", host, src, dst, 4, stream)


@pytest.mark.parametrize("case", ["dma", "footprint", "broadcast", "dense", "2d"])
def test_non_blocking_pinned(case, stream):
    """Between pinned memory and the device, blocking=False returns with
    the copy queued behind earlier work (a busy kernel), and the data is in
    place once the stream is done."""
    shape = (300, 1100)
    c, t = dense_spec(shape, 4), klass("t", shape, 4)
    sparse = slice_spec(300, 1100, 4, 3300)
    direction, dst, src = {
        "dma": ("h2d", c, c),
        "footprint": ("h2d", c, t),
        "broadcast": ("h2d", c, Spec(1100 * 4, 0, (1100,), (4,))),
        "dense": ("d2h", t, c),
        "2d": ("d2h", sparse, c),
    }[case]
    kinds = kinds_of(direction, "pinned")
    d, s = Mem(kinds[0], dst.nbytes), Mem(kinds[1], src.nbytes, 1)
    dv, sv = d.view(dst, 4, HOW[kinds[0]], stream_ptr=stream.ptr), s.view(
        src, 4, HOW[kinds[1]], stream_ptr=stream.ptr)
    # Once first (kernels loaded, the memory pool grown), then from the
    # initial bytes again.
    dv.copy_from(sv, stream=stream.ptr, blocking=True)
    if d.kind == "device":
        d.raw[: d.nbytes].set(d.initial)
    else:
        d.host[: d.nbytes] = d.initial
    cupy.cuda.runtime.deviceSynchronize()
    spin(stream)
    dv.copy_from(sv, stream=stream.ptr, blocking=False)
    assert not stream.done
    stream.synchronize()
    assert_bytes(d.bytes(), expected_bytes(d, dst, s, src, 4))


class Counting:
    """A memory resource that counts allocate calls and hands them to a
    built-in resource."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = []

    def allocate(self, size, stream=None):
        self.calls.append((size, stream))
        return self.inner.allocate(size, stream=stream)

    def deallocate(self, ptr, size, stream=None):
        self.inner.deallocate(ptr, size, stream=stream)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.mark.parametrize("case", ["footprint", "pack", "dense", "scatter"])
def test_allocator(case, stream):
    """Temporaries from allocator=: each resource is called once per
    temporary, with the copy's stream."""
    shape = (123, 77)
    c, t, g = dense_spec(shape, 8), klass("t", shape, 8), klass("g", shape, 8)
    direction, dst, src, host_calls, device_calls = {
        "footprint": ("h2d", c, t, 1, 1),   # staging, footprint temporary
        "pack": ("h2d", t, g, 1, 0),        # staging only: t is dense
        "dense": ("d2h", t, c, 1, 1),       # dense temporary, staging
        "scatter": ("d2h", g, t, 1, 1),     # packed temporary, staging
    }[case]
    host = Counting(strided.PinnedMemoryResource())
    device = Counting(strided.DeviceMemoryResource(0))
    kinds = kinds_of(direction, "pageable")
    d, s = Mem(kinds[0], dst.nbytes), Mem(kinds[1], src.nbytes, 1)
    dv, sv = d.view(dst, 8, HOW[kinds[0]]), s.view(src, 8, HOW[kinds[1]])
    try:
        dv.copy_from(sv, stream=stream.ptr,
                     allocator=strided.CopyAllocatorOptions(host=host, device=device))
    except NotImplementedError as e:
        pytest.skip(f"allocator= is not available in this build: {e}")
    stream.synchronize()
    assert_bytes(d.bytes(), expected_bytes(d, dst, s, src, 8))
    assert len(host.calls) == host_calls
    assert len(device.calls) == device_calls
    assert all(stream_arg is not None for _, stream_arg in host.calls + device.calls)
    if device_calls:
        assert device.calls[0][0] == 123 * 77 * 8
