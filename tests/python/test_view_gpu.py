"""strided.StridedMemoryView on a GPU, with PyTorch, CuPy and cuda.core 1.2 as
producers, consumers and reference (docs/views.md).

What is checked:

- Round trips, both directions, for every dtype strided shares with each
  library and for contiguous (c), gapped [:, ::2] (g), transposed (t),
  negative-stride (n, CuPy), 0-d and empty tensors: the producer's tensor
  becomes a view by DLPack on the producer's current stream, with the
  producer's pointer, shape, strides, dtype and device; the view goes back
  by the producer's from_dlpack (and into CuPy by cupy.asarray through the
  view's __cuda_array_interface__) with the same bytes at the same address,
  and writes through either side show in the other. cuda.core's
  StridedMemoryView imports strided's view and strided imports cuda.core's,
  with every property equal.
- Views over strided's device, managed and pinned buffers export as
  kDLCUDA (2), kDLCUDAManaged (13) and kDLCUDAHost (3); PyTorch, CuPy
  and NumPy read what one another wrote through them; the CUDA Array
  Interface export of device-accessible views, and its absence on host-only
  views.
- cuda.core's own GPU tests of StridedMemoryView (TestViewGPU, TestViewCudaArrayInterfaceGPU,
  test_view_zero_size_array, test_struct_array, test_view_sliced_external,
  bfloat16 through CuPy and PyTorch), with device_id 0 (the current device)
  and objects that offer only the CUDA Array Interface standing in for
  Numba's device arrays.
- strided and cuda.core 1.2 make the same view of the same object, by
  DLPack and by the CUDA Array Interface.
- Stream ordering, both protocols, without a host synchronisation: work
  pending on the producer's stream is seen by a consumer stream; controls
  show that the same read without ordering sees stale values.
- Lifetimes: a view keeps its producer alive exactly as long as needed;
  unconsumed exported capsules release the memory.
- Errors on GPU inputs.

The module skips with "skipped: no CUDA device" where no CUDA device is
usable. Each test skips by itself where a library it needs (PyTorch with
CUDA, CuPy, cuda.core 1.2, ml_dtypes) is missing or cannot handle the dtype
at hand; the skip reason names the library and its version.
"""

import ctypes
import functools
import gc
import math
import os
import re
import sys
import weakref

import numpy as np
import pytest

from gpu_util import cuda_device_count, optional, optional_torch


if cuda_device_count() == 0:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

import strided  # noqa: E402
from strided import StridedMemoryView  # noqa: E402


cupy = optional("cupy")
torch = optional_torch()
ml_dtypes = optional("ml_dtypes")

CoreSMV = CoreDevice = None
for _package in ("cuda.core", "cuda.core.experimental"):
    _core, _utils = optional(_package), optional(_package + ".utils")
    if _core is not None and _utils is not None and hasattr(
        getattr(_utils, "StridedMemoryView", None), "from_dlpack"
    ):
        CoreSMV, CoreDevice = _utils.StridedMemoryView, _core.Device
        break

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch with CUDA")
needs_cupy = pytest.mark.skipif(cupy is None, reason="needs CuPy")
needs_core = pytest.mark.skipif(
    CoreSMV is None, reason="needs cuda.core 1.2 (StridedMemoryView.from_dlpack)"
)
LIB_MARKS = {"torch": [needs_torch], "cupy": [needs_cupy], "numpy": []}

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
MiB = 1 << 20

# Element types by name. STANDARD are NumPy's own; ML_TYPES come from
# ml_dtypes and travel by DLPack as kDLBfloat and the float8 codes.
STANDARD = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]
ML_TYPES = [
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu",
]
TORCH_NAMES = STANDARD + ML_TYPES
CUPY_NAMES = STANDARD + ["bfloat16"]
TORCH_LAYOUTS = ["c", "g", "t", "0d", "empty"]
CUPY_LAYOUTS = ["c", "g", "t", "n", "0d", "empty"]


# ---- fixtures ----------------------------------------------------------------


def sync():
    """Wait for all work on the device (between steps of different libraries)."""
    if torch is not None:
        torch.cuda.synchronize()
    if cupy is not None:
        cupy.cuda.runtime.deviceSynchronize()


@pytest.fixture(autouse=True)
def device_zero():
    """Device 0 is the current device of every library, and the device is
    idle when a test ends."""
    if cupy is not None:
        cupy.cuda.Device(0).use()
    if torch is not None:
        torch.cuda.set_device(0)
    yield
    sync()


@pytest.fixture
def consumer_stream():
    """A non-blocking CuPy stream for the consumer side of upstream's tests."""
    return cupy.cuda.Stream(non_blocking=True)


@pytest.fixture
def stream_pair():
    """make(lib) -> (s1, s2): the handles of two new non-blocking streams of
    torch or CuPy, for the producer (s1) and the consumer (s2); the stream
    objects live until the test ends."""
    kept = []

    def make(lib):
        if lib == "torch":
            pair = (torch.cuda.Stream(), torch.cuda.Stream())
            kept.append(pair)
            return pair[0].cuda_stream, pair[1].cuda_stream
        pair = (cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True))
        kept.append(pair)
        return pair[0].ptr, pair[1].ptr

    yield make
    sync()


# ---- helpers -----------------------------------------------------------------


def np_dtype(name):
    """The NumPy dtype strided reports for an element type; the test skips
    where ml_dtypes cannot supply it."""
    if name in STANDARD:
        return np.dtype(name)
    if ml_dtypes is None or not hasattr(ml_dtypes, name):
        version = getattr(ml_dtypes, "__version__", "(not installed)")
        pytest.skip(f"ml_dtypes {version} has no {name}")
    return np.dtype(getattr(ml_dtypes, name))


def random_bytes(count, seed, name):
    """count random bytes; only 0 and 1 for bool, whose other bytes are not
    valid values."""
    high = 2 if name == "bool" else 256
    return np.random.default_rng(seed).integers(0, high, size=count, dtype=np.uint8)


def flipped(data, name):
    """Bytes that differ from data at every position (and stay valid bools)."""
    return ((1 - data) if name == "bool" else (255 - data)).astype(np.uint8)


def c_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def element_strides(view):
    """The view's strides in elements, implicit C strides spelled out."""
    return c_strides(view.shape) if view.strides is None else tuple(view.strides)


def without_unit_axes(strides, shape):
    """The strides of the axes with more than one element: torch's DLPack
    export sets the stride of every axis of extent < 2 to 1 (gh-83069), and
    such a stride never moves the pointer."""
    return tuple(s for s, n in zip(strides, shape) if n > 1)


def check_strides(view, shape, strides, *, unit_axes_free=False):
    """The view's strides equal the producer's (in elements). A 0-d view may
    have None or (); the strides of an empty view are not compared."""
    shape = tuple(shape)
    if len(shape) == 0:
        assert view.strides in (None, ())
        return
    if math.prod(shape) == 0:
        return
    got, want = element_strides(view), tuple(strides)
    if unit_axes_free:
        got, want = without_unit_axes(got, shape), without_unit_axes(want, shape)
    assert got == want, f"view strides {view.strides}, producer strides {tuple(strides)}"


class CAIOnly:
    """An object that offers only an array's CUDA Array Interface, as Numba's
    device arrays do, with entries of the dict replaced by `changes`."""

    def __init__(self, array, **changes):
        self.array = array
        self.__cuda_array_interface__ = {**array.__cuda_array_interface__, **changes}


class RawCAI:
    """An object whose CUDA Array Interface is the given dict; keep holds
    the memory it describes."""

    def __init__(self, desc, keep=None):
        self.keep = keep
        self.__cuda_array_interface__ = desc


class Owner:
    """An owner whose release is observable with weakref.finalize."""

    def __init__(self, payload):
        self.payload = payload


def strided_resource(kind):
    if kind == "device":
        return strided.DeviceMemoryResource(0)
    if kind == "managed":
        return strided.ManagedMemoryResource(0)
    if kind == "pinned":
        return strided.PinnedMemoryResource()
    raise AssertionError(kind)


def core_device_buffer(nbytes):
    """A cuda.core Buffer of at least one byte from device 0's default
    memory resource."""
    device = CoreDevice(0)
    device.set_current()
    stream = device.default_stream
    buf = device.memory_resource.allocate(max(nbytes, 1), stream=stream)
    stream.sync()
    return buf


def assert_same_view(ours, theirs, *, unit_axes_free=False):
    """strided's view and cuda.core's view describe the same tensor: every
    public property is equal. Implicit (None) and explicit C strides count
    as equal; the pointer and strides of an empty view are not compared
    (DLPack exports NULL data for it)."""
    assert ours.shape == theirs.shape
    assert ours.size == theirs.size
    if ours.size > 0:
        assert ours.ptr == theirs.ptr
    if len(ours.shape) == 0:
        assert ours.strides in (None, ()) and theirs.strides in (None, ())
    elif ours.size > 0:
        a, b = element_strides(ours), element_strides(theirs)
        if unit_axes_free:
            a, b = without_unit_axes(a, ours.shape), without_unit_axes(b, ours.shape)
        assert a == b, f"strided {ours.strides}, cuda.core {theirs.strides}"
    assert ours.device_id == theirs.device_id
    assert ours.is_device_accessible == theirs.is_device_accessible
    assert ours.readonly == theirs.readonly
    try:
        their_dtype = theirs.dtype
    except (TypeError, NotImplementedError) as e:
        # cuda.core maps DLPack's float8 codes to no NumPy dtype.
        assert ours.dtype.name in ML_TYPES, e
    else:
        assert ours.dtype == their_dtype


# PyTorch.


def torch_stream_ptr():
    """torch's current stream as a DLPack consumer stream (1 names the legacy
    default stream, which torch's current_stream reports as 0)."""
    return torch.cuda.current_stream().cuda_stream or 1


def torch_from_bytes(data, name, shape):
    if math.prod(shape) == 0:  # torch cannot view 0 bytes as a wider type
        return torch.empty(shape, dtype=getattr(torch, name), device="cuda")
    t = torch.from_numpy(np.ascontiguousarray(data)).to("cuda")
    return t.view(getattr(torch, name)).reshape(shape)


def torch_sample(name, shape, seed=0):
    itemsize = torch.empty((), dtype=getattr(torch, name)).element_size()
    return torch_from_bytes(random_bytes(math.prod(shape) * itemsize, seed, name), name, shape)


def torch_layout(name, layout, seed=0):
    if layout == "c":
        return torch_sample(name, (4, 6), seed)
    if layout == "g":
        return torch_sample(name, (4, 12), seed)[:, ::2]
    if layout == "t":
        return torch_sample(name, (6, 4), seed).t()
    if layout == "0d":
        return torch_sample(name, (), seed)
    if layout == "empty":
        return torch_sample(name, (0, 3), seed)
    raise AssertionError(layout)


def torch_bytes(t):
    """The bytes of t's elements in C order, on the host."""
    return t.contiguous().reshape(-1).view(torch.uint8).cpu().numpy()


@functools.cache
def torch_refusal(name):
    """Why this torch cannot pass `name` through DLPack (or copy it), or None."""
    dt = getattr(torch, name, None)
    if dt is None:
        return f"torch {torch.__version__} has no {name}"
    try:
        t = torch.zeros(4, dtype=dt, device="cuda")
        back = torch.from_dlpack(t.__dlpack__())
        back.copy_(torch_from_bytes(np.zeros(4 * t.element_size(), np.uint8), name, (4,)))
        torch_bytes(back[::2])
    except Exception as e:
        return (
            f"torch {torch.__version__} cannot pass {name} through DLPack or copy it "
            f"({type(e).__name__}: {e})"
        )
    if back.dtype != dt:
        return f"torch {torch.__version__} turns {name} into {back.dtype} through DLPack"
    return None


def check_shared_torch(a, b, name):
    """a and b are the same memory: what is written through either reads
    back through the other."""
    for src, dst in ((a, b), (b, a)):
        new = torch_from_bytes(flipped(torch_bytes(dst), name), name, tuple(dst.shape))
        src.copy_(new)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(torch_bytes(dst), torch_bytes(new))


# CuPy.


def cupy_stream_ptr():
    """CuPy's current stream as a DLPack consumer stream (1: legacy default)."""
    return cupy.cuda.get_current_stream().ptr or 1


def cupy_from_bytes(data, name, shape):
    return cupy.asarray(np.ascontiguousarray(data)).view(np_dtype(name)).reshape(shape)


def cupy_sample(name, shape, seed=0):
    count = math.prod(shape) * np_dtype(name).itemsize
    return cupy_from_bytes(random_bytes(count, seed, name), name, shape)


def cupy_layout(name, layout, seed=0):
    if layout == "c":
        return cupy_sample(name, (4, 6), seed)
    if layout == "g":
        return cupy_sample(name, (4, 12), seed)[:, ::2]
    if layout == "t":
        return cupy_sample(name, (6, 4), seed).T
    if layout == "n":
        return cupy_sample(name, (4, 6), seed)[::-1, ::-2]
    if layout == "0d":
        return cupy_sample(name, (), seed)
    if layout == "empty":
        return cupy_sample(name, (0, 3), seed)
    raise AssertionError(layout)


_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def dlpack_strides(obj):
    """The strides (in elements) in obj's versioned DLPack capsule, read
    straight from the struct (DLManagedTensorVersioned: version, manager_ctx,
    deleter, flags, then DLTensor with ndim at +16 and strides at +32)."""
    capsule = obj.__dlpack__(max_version=(1, 0))
    m = _PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    tensor = m + 32
    ndim = ctypes.c_int32.from_address(tensor + 16).value
    strides = ctypes.c_void_p.from_address(tensor + 32).value
    return tuple((ctypes.c_int64 * ndim).from_address(strides)) if strides else None


def cupy_negative_strides_broken(a):
    """True when CuPy's DLPack export of a (which has negative strides)
    gives strides that are not a's: CuPy 14.2 divides the negative byte
    strides as unsigned numbers, so a[::-1] of int16 exports 2**63 - 1
    instead of -1. strided refuses such a tensor (its offsets overflow
    int64); cuda.core 1.2 takes the wrong strides."""
    expected = tuple(s // a.itemsize for s in a.strides)
    return dlpack_strides(a) != expected


def cupy_bytes(a):
    """The bytes of a's elements in C order, on the host."""
    return cupy.ascontiguousarray(a).reshape(-1).view(cupy.uint8).get()


@functools.cache
def cupy_refusal(name):
    """Why this CuPy cannot pass `name` through DLPack (or copy it), or None."""
    dtype = np_dtype(name)
    try:
        a = cupy.zeros(4, dtype=dtype)
        b = cupy.from_dlpack(a)
        b[::2] = a[1::2]
        cupy_bytes(b[::2])
    except Exception as e:
        return (
            f"CuPy {cupy.__version__} cannot pass {name} through DLPack or copy it "
            f"({type(e).__name__}: {e})"
        )
    return None


def check_shared_cupy(a, b, name):
    """a and b are the same memory: what is written through either reads
    back through the other."""
    for src, dst in ((a, b), (b, a)):
        new = cupy_from_bytes(flipped(cupy_bytes(dst), name), name, dst.shape)
        src[...] = new
        cupy.cuda.runtime.deviceSynchronize()
        np.testing.assert_array_equal(cupy_bytes(dst), cupy_bytes(new))


def check_cupy_alias(b, a, name):
    """b is a CuPy array over a's memory, with a's dtype, shape, strides and
    bytes, and writes through either show in the other."""
    assert b.dtype == a.dtype
    assert b.shape == a.shape
    np.testing.assert_array_equal(cupy_bytes(b), cupy_bytes(a))
    if a.size > 0:
        assert b.data.ptr == a.data.ptr
        assert b.strides == a.strides
        check_shared_cupy(a, b, name)


# ---- 1. round trips ------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("layout", TORCH_LAYOUTS)
@pytest.mark.parametrize("name", TORCH_NAMES)
def test_torch_round_trip(name, layout):
    dtype = np_dtype(name)
    if why := torch_refusal(name):
        pytest.skip(why)
    t = torch_layout(name, layout)
    view = StridedMemoryView.from_dlpack(t, stream_ptr=torch_stream_ptr())
    assert view.exporting_obj is t
    assert view.ptr == t.data_ptr()
    assert view.shape == tuple(t.shape)
    assert view.size == t.numel()
    assert view.dtype == dtype
    assert view.device_id == t.device.index == 0
    assert view.is_device_accessible
    assert not view.readonly
    assert view.__dlpack_device__() == (kDLCUDA, 0)
    check_strides(view, t.shape, t.stride(), unit_axes_free=True)

    back = torch.from_dlpack(view)
    assert back.dtype == t.dtype
    assert back.shape == t.shape
    assert back.device == t.device
    np.testing.assert_array_equal(torch_bytes(back), torch_bytes(t))
    if t.numel() > 0:
        assert back.data_ptr() == t.data_ptr()
        assert without_unit_axes(back.stride(), t.shape) == without_unit_axes(t.stride(), t.shape)
        check_shared_torch(t, back, name)

    # The view's CUDA Array Interface takes torch's memory into CuPy (not
    # for ml_dtypes' types, whose typestr NumPy cannot parse, nor for empty
    # tensors: CuPy refuses a null pointer without a device id).
    if cupy is not None and name in STANDARD and t.numel() > 0:
        c = cupy.asarray(CAIOnly(view))
        assert c.dtype == dtype
        assert c.shape == tuple(t.shape)
        np.testing.assert_array_equal(cupy_bytes(c), torch_bytes(t))
        if t.numel() > 0:
            assert c.data.ptr == t.data_ptr()


@needs_cupy
@pytest.mark.parametrize("layout", CUPY_LAYOUTS)
@pytest.mark.parametrize("name", CUPY_NAMES)
def test_cupy_round_trip(name, layout):
    dtype = np_dtype(name)
    if why := cupy_refusal(name):
        pytest.skip(why)
    a = cupy_layout(name, layout)
    if layout == "n" and cupy_negative_strides_broken(a):
        with pytest.raises(BufferError, match="overflows? int64"):
            StridedMemoryView.from_dlpack(a, stream_ptr=cupy_stream_ptr())
        return
    view = StridedMemoryView.from_dlpack(a, stream_ptr=cupy_stream_ptr())
    assert view.exporting_obj is a
    assert view.ptr == a.data.ptr
    assert view.shape == a.shape
    assert view.size == a.size
    assert view.dtype == dtype
    assert view.device_id == a.device.id == 0
    assert view.is_device_accessible
    assert not view.readonly
    assert view.__dlpack_device__() == (kDLCUDA, 0)
    check_strides(view, a.shape, [s // dtype.itemsize for s in a.strides])

    check_cupy_alias(cupy.from_dlpack(view), a, name)
    # ml_dtypes' typestrs mean nothing to NumPy; CuPy refuses a null pointer
    # (an empty array) through the interface without a device id.
    if name in STANDARD and a.size > 0:
        check_cupy_alias(cupy.asarray(CAIOnly(view)), a, name)


CORE_LAYOUTS = {  # shape, strides in elements (None: implicit C), elements allocated
    "c": ((4, 6), None, 24),
    "g": ((4, 6), (12, 2), 48),
    "t": ((4, 6), (1, 4), 24),
    "0d": ((), None, 1),
    "empty": ((0, 3), None, 0),
}


@needs_core
@pytest.mark.parametrize("direction", ["strided-to-cuda.core", "cuda.core-to-strided"])
@pytest.mark.parametrize("layout", list(CORE_LAYOUTS))
@pytest.mark.parametrize("name", STANDARD + ML_TYPES)
def test_cuda_core_round_trip(name, layout, direction):
    dtype = np_dtype(name)
    shape, strides, count = CORE_LAYOUTS[layout]
    nbytes = count * dtype.itemsize
    if direction == "strided-to-cuda.core":
        buf = strided.DeviceMemoryResource(0).allocate(max(nbytes, 1))
        ours = StridedMemoryView.from_buffer(buf, shape, strides, dtype=dtype)
        theirs = CoreSMV.from_dlpack(ours, stream_ptr=-1)
        assert theirs.exporting_obj is ours
    else:
        buf = core_device_buffer(nbytes)
        theirs = CoreSMV.from_buffer(buf, shape, strides, dtype=dtype)
        try:
            ours = StridedMemoryView.from_dlpack(theirs, stream_ptr=-1)
        except BufferError as e:
            # cuda.core 1.2 exports only NumPy's own types through DLPack.
            if name in ML_TYPES:
                pytest.skip(f"cuda.core does not export {name} by DLPack: {e}")
            raise
        assert ours.exporting_obj is theirs
    assert ours.dtype == dtype
    assert_same_view(ours, theirs)


@needs_core
def test_cuda_core_round_trip_keeps_readonly():
    dtype = np.dtype(np.float32)
    buf = strided.DeviceMemoryResource(0).allocate(96)
    ours = StridedMemoryView.from_buffer(buf, (4, 6), dtype=dtype, is_readonly=True)
    theirs = CoreSMV.from_dlpack(ours, stream_ptr=-1)
    assert theirs.readonly
    assert_same_view(ours, theirs)

    theirs = CoreSMV.from_buffer(core_device_buffer(96), (4, 6), dtype=dtype, is_readonly=True)
    ours = StridedMemoryView.from_dlpack(theirs, stream_ptr=-1)
    assert ours.readonly
    assert_same_view(ours, theirs)


# ---- 2. memory kinds and the CUDA Array Interface export -----------------------

KINDS = [
    pytest.param("device", kDLCUDA, id="device"),
    pytest.param("managed", kDLCUDAManaged, id="managed"),
    pytest.param("pinned", kDLCUDAHost, id="pinned"),
]


@pytest.mark.parametrize("kind,dl_type", KINDS)
def test_memory_kind_view(kind, dl_type):
    buf = strided_resource(kind).allocate(96)
    view = StridedMemoryView.from_buffer(buf, (4, 6), dtype=np.dtype(np.float32))
    assert view.__dlpack_device__() == (dl_type, 0)
    assert view.ptr == buf.handle
    # Pinned memory: the device reaches it at its host address on this GPU.
    assert view.device_ptr == view.ptr
    assert view.device_id == buf.device_id
    assert view.is_device_accessible
    assert view.exporting_obj is buf
    assert view.buffer is buf
    assert view.__cuda_array_interface__["data"] == (view.device_ptr, False)
    assert hasattr(view, "__array_interface__") == (kind != "device")

    # strided reads its own export: CUDA host and managed memory need no
    # consumer stream, device memory does.
    if kind == "device":
        with pytest.raises(BufferError, match=r"^stream=None is ambiguous with view\(\)$"):
            StridedMemoryView.from_dlpack(view)
    again = StridedMemoryView.from_dlpack(view, stream_ptr=-1 if kind == "device" else None)
    assert again.ptr == view.ptr
    assert again.shape == view.shape
    assert again.dtype == view.dtype
    assert again.device_id == 0
    assert again.is_device_accessible
    assert again.__dlpack_device__() == (dl_type, 0)


def torch_consumer(view, kind):
    """A torch tensor over the view's memory: by DLPack where torch takes the
    device type, else (torch.from_dlpack knows kDLCPU and kDLCUDA only) by
    the view's CUDA Array Interface."""
    try:
        t = torch.from_dlpack(view)
    except (RuntimeError, BufferError, TypeError, ValueError) as e:
        assert kind != "device", e
        assert re.search(r"(?i)device", str(e)), f"torch refused with {e!r}"
        t = torch.as_tensor(view, device="cuda")
        assert t.device.type == "cuda"
    assert t.data_ptr() in (view.ptr, view.device_ptr)
    return t


def cupy_consumer(view, kind):
    """A CuPy array over the view's memory: by DLPack where CuPy takes the
    device type (kDLCUDA and kDLCUDAManaged), else by the CUDA Array
    Interface."""
    try:
        c = cupy.from_dlpack(view)
    except (TypeError, RuntimeError, BufferError, ValueError) as e:
        assert kind == "pinned", e
        assert re.search(r"(?i)type|device", str(e)), f"CuPy refused with {e!r}"
        c = cupy.asarray(CAIOnly(view))
    assert c.data.ptr == view.device_ptr
    return c


def consumer(lib, view, kind):
    if lib == "torch":
        return torch_consumer(view, kind)
    if lib == "cupy":
        return cupy_consumer(view, kind)
    h = np.asarray(view)
    assert h.ctypes.data == view.ptr
    return h


def write(lib, array, value, row=None):
    """Set the array (or one row of it) to value and wait until it is done."""
    target = array if row is None else array[row]
    if lib == "torch":
        target.fill_(value)
        torch.cuda.synchronize()
    elif lib == "cupy":
        target.fill(value)
        cupy.cuda.runtime.deviceSynchronize()
    else:
        target[...] = value


def to_host(lib, array):
    if lib == "torch":
        return array.cpu().numpy()
    if lib == "cupy":
        return array.get()
    return np.array(array)


EXCHANGES = [
    pytest.param(w, r, marks=LIB_MARKS[w] + LIB_MARKS[r], id=f"{w}-to-{r}")
    for w in ("torch", "cupy", "numpy")
    for r in ("torch", "cupy", "numpy")
    if w != r
]


@pytest.mark.parametrize("writer,reader", EXCHANGES)
@pytest.mark.parametrize("kind,dl_type", KINDS)
def test_memory_kind_exchange(kind, dl_type, writer, reader):
    if kind == "device" and "numpy" in (writer, reader):
        pytest.skip("device memory is not host-accessible")
    buf = strided_resource(kind).allocate(96)
    view = StridedMemoryView.from_buffer(buf, (4, 6), dtype=np.dtype(np.float32))
    assert view.__dlpack_device__() == (dl_type, 0)
    w = consumer(writer, view, kind)
    r = consumer(reader, view, kind)
    expected = np.full((4, 6), 3, np.float32)
    write(writer, w, 3)
    np.testing.assert_array_equal(to_host(reader, r), expected)
    write(writer, w, 5, row=1)
    expected[1] = 5
    np.testing.assert_array_equal(to_host(reader, r), expected)
    del w, r, view
    buf.close()


CAI_LAYOUTS = {  # shape, strides in elements (None: implicit C), elements allocated
    "implicit-c": ((4, 6), None, 24),
    "explicit-c": ((4, 6), (6, 1), 24),
    "f": ((4, 6), (1, 4), 24),
    "gapped": ((4, 6), (12, 2), 48),
    "0d": ((), None, 1),
    "empty": ((0, 3), None, 0),
}


@pytest.mark.parametrize("readonly", [False, True], ids=["writable", "readonly"])
@pytest.mark.parametrize("layout", list(CAI_LAYOUTS))
@pytest.mark.parametrize("kind", ["device", "managed", "pinned"])
def test_cuda_array_interface_export(kind, layout, readonly):
    shape, strides, count = CAI_LAYOUTS[layout]
    dtype = np.dtype(np.float32)
    buf = strided_resource(kind).allocate(max(count * dtype.itemsize, 1))
    view = StridedMemoryView.from_buffer(buf, shape, strides, dtype=dtype, is_readonly=readonly)
    cai = view.__cuda_array_interface__
    assert cai["version"] == 3
    assert tuple(cai["shape"]) == shape
    assert cai["typestr"] == dtype.str == view.dtype.str
    assert cai["descr"] == view.dtype.descr
    ptr, ro = cai["data"]
    assert ro == readonly
    if view.size > 0:
        assert ptr == view.device_ptr
    assert cai["stream"] is None
    assert cai.get("mask") is None
    if view.strides is None:
        assert cai["strides"] is None
    else:
        assert tuple(cai["strides"]) == tuple(s * dtype.itemsize for s in view.strides)
    if strides is None and shape:
        assert view.strides is None

    # strided reads its own export back.
    again = StridedMemoryView.from_cuda_array_interface(view, stream_ptr=-1)
    assert again.exporting_obj is view
    assert again.shape == shape
    if shape:
        assert again.strides == view.strides
    else:
        assert again.strides in (None, ())
    assert again.dtype == dtype
    assert again.readonly == readonly
    assert again.is_device_accessible
    if view.size > 0:
        assert again.ptr == view.device_ptr
        assert again.device_id == 0


def test_cuda_array_interface_only_on_device_accessible_views():
    views = [
        StridedMemoryView.from_dlpack(np.arange(6.0), stream_ptr=-1),
        StridedMemoryView.from_array_interface(np.arange(3)),
        StridedMemoryView.from_buffer(
            strided.HostMemoryResource().allocate(16), (4,), dtype=np.dtype(np.int32)
        ),
    ]
    for view in views:
        if view.is_device_accessible:
            continue  # host memory a device reads (an HMM/ATS system)
        assert not hasattr(view, "__cuda_array_interface__")
        with pytest.raises(AttributeError):
            view.__cuda_array_interface__


# ---- 3. upstream's GPU tests ----------------------------------------------------

UPSTREAM_SAMPLES = [
    pytest.param(lambda: cupy.empty(3, dtype=cupy.complex64), False, id="cupy-complex64-3"),
    pytest.param(
        lambda: cupy.empty((6, 6), dtype=cupy.float64)[::2, ::2], True, id="cupy-float64-6x6-step2"
    ),
    pytest.param(lambda: cupy.empty((3, 4), order="F"), True, id="cupy-float64-3x4-F"),
    pytest.param(lambda: CAIOnly(cupy.empty((2,), dtype=cupy.int8)), False, id="cai-only-int8-2"),
    pytest.param(
        lambda: CAIOnly(cupy.empty((4, 2), dtype=cupy.float32)), True, id="cai-only-float32-4x2"
    ),
]


def check_upstream_view(view, obj, *, cai):
    """upstream's _check_view: the view describes the array behind obj."""
    a = obj.array if isinstance(obj, CAIOnly) else obj
    assert isinstance(view, StridedMemoryView)
    assert view.ptr == a.data.ptr
    assert view.shape == a.shape
    assert view.size == a.size
    counts = tuple(s // a.itemsize for s in a.strides)
    if a.flags.c_contiguous:
        if cai:
            assert view.strides is None
        else:
            assert view.strides in (None, counts)
    else:
        assert view.strides == counts
    assert view.dtype == a.dtype
    assert view.device_id == 0
    assert view.is_device_accessible is True
    assert view.exporting_obj is obj


@needs_cupy
@pytest.mark.parametrize(
    "entry", ["decorator", "from_any_interface", "deprecated-constructor", "from_cuda_array_interface"]
)
@pytest.mark.parametrize("make,use_stream", UPSTREAM_SAMPLES)
def test_view_gpu(make, use_stream, entry, consumer_stream):
    obj = make()
    stream_ptr = consumer_stream.ptr if use_stream else -1
    if entry == "decorator":
        seen = []

        @strided.args_viewable_as_strided_memory((0,))
        def consume(arr):
            seen.append(arr.view(stream_ptr))

        consume(obj)
        (view,) = seen
    elif entry == "from_any_interface":
        view = StridedMemoryView.from_any_interface(obj, stream_ptr=stream_ptr)
    elif entry == "deprecated-constructor":
        with pytest.deprecated_call(match="deprecated"):
            view = StridedMemoryView(obj, stream_ptr=stream_ptr)
    else:
        view = StridedMemoryView.from_cuda_array_interface(obj, stream_ptr=stream_ptr)
    cai = entry == "from_cuda_array_interface" or isinstance(obj, CAIOnly)
    check_upstream_view(view, obj, cai=cai)


@needs_cupy
@pytest.mark.parametrize("shape", [(0,), (0, 0), (0, 0, 0)], ids=["0", "0x0", "0x0x0"])
@pytest.mark.parametrize("name", ["int64", "uint8", "float64"])
@pytest.mark.parametrize("entry", ["from_dlpack", "from_cuda_array_interface"])
def test_view_zero_size_array(entry, name, shape):
    a = cupy.empty(shape, dtype=name)
    view = getattr(StridedMemoryView, entry)(a, stream_ptr=0)
    assert view.size == 0
    assert view.shape == shape
    assert view.dtype == np.dtype(name)
    assert view.device_id == 0
    assert view.is_device_accessible


@needs_cupy
@pytest.mark.parametrize("source", ["cupy", "handmade"])
def test_struct_array(source):
    dt = np.dtype([("a", "<f8"), ("b", "<i4"), ("c", "<f4")])
    assert dt.itemsize == 16
    if source == "cupy":
        try:
            obj = cupy.zeros(3, dtype=dt)
        except Exception as e:
            pytest.skip(f"CuPy {cupy.__version__} has no structured arrays: {e}")
        nbytes = obj.nbytes
    else:
        raw = cupy.zeros(3 * dt.itemsize, dtype=cupy.uint8)
        obj = RawCAI(
            {
                "version": 3,
                "shape": (3,),
                "typestr": dt.str,
                "descr": dt.descr,
                "data": (raw.data.ptr, False),
                "strides": None,
                "stream": None,
            },
            keep=raw,
        )
        nbytes = raw.nbytes
    view = StridedMemoryView.from_cuda_array_interface(obj, stream_ptr=-1)
    assert view.size * view.dtype.itemsize == nbytes
    assert view.dtype == np.dtype("V16")
    assert view.device_id == 0


SLICE_CASES = [
    pytest.param((5, 6), (2, slice(1, -1)), id="5x6-row2-inner"),
    pytest.param(
        (10, 13, 11),
        (slice(None, None, 2), slice(None, None, -1), slice(2, -3)),
        id="10x13x11-step2-reversed-trimmed",
    ),
]


def external_view(a, view_as):
    if view_as == "cai":
        return StridedMemoryView.from_cuda_array_interface(CAIOnly(a), stream_ptr=-1)
    return StridedMemoryView.from_dlpack(a, stream_ptr=-1)


@needs_cupy
@pytest.mark.parametrize("view_as", ["cai", "dlpack"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape,key", SLICE_CASES)
def test_view_sliced_external(shape, key, order, view_as):
    a = cupy.arange(math.prod(shape), dtype=cupy.int32).reshape(shape, order=order)
    view = external_view(a, view_as)
    layout = view.layout
    assert layout.is_dense
    assert layout.required_size_in_bytes() == a.nbytes
    assert view.ptr == a.data.ptr

    sliced_layout = layout[key]
    sliced = view.view(sliced_layout)
    expected = a[key]
    assert sliced.ptr == expected.data.ptr
    assert sliced.ptr != view.ptr
    assert 0 <= sliced_layout.required_size_in_bytes() <= a.nbytes
    assert not sliced_layout.is_dense
    assert sliced.layout is sliced_layout
    assert sliced.dtype == view.dtype
    assert sliced.layout.itemsize == expected.itemsize == layout.itemsize
    assert sliced.shape == expected.shape
    assert sliced.layout.strides_in_bytes == expected.strides
    assert sliced.device_id == 0
    assert sliced.is_device_accessible
    np.testing.assert_array_equal(cupy.from_dlpack(sliced).get(), expected.get())


@needs_cupy
@pytest.mark.parametrize("view_as", ["cai", "dlpack"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_view_sliced_external_negative_offset(order, view_as):
    a = cupy.arange(5, dtype=cupy.int32).reshape((5,), order=order)[::-1]
    if view_as == "dlpack" and cupy_negative_strides_broken(a):
        with pytest.raises(BufferError, match="overflows? int64"):
            external_view(a, view_as)
        return
    view = external_view(a, view_as)
    layout = view.layout
    assert not layout.is_dense
    assert layout.strides == (-1,)
    assert view.ptr == a.data.ptr

    sliced_layout = layout[3:]
    sliced = view.view(sliced_layout)
    expected = a[3:]
    assert sliced.ptr == expected.data.ptr == view.ptr - 3 * a.itemsize
    assert not sliced_layout.is_dense
    assert sliced.layout is sliced_layout
    assert sliced.dtype == view.dtype
    assert sliced.shape == expected.shape
    assert sliced.layout.strides_in_bytes == expected.strides
    np.testing.assert_array_equal(cupy.from_dlpack(sliced).get(), expected.get())


@needs_cupy
@pytest.mark.parametrize("strided_", [False, True], ids=["contiguous", "strided"])
def test_ml_dtypes_bfloat16_cupy(strided_):
    bfloat16 = np_dtype("bfloat16")
    if why := cupy_refusal("bfloat16"):
        pytest.skip(why)
    a = cupy_sample("bfloat16", (4, 6))
    if strided_:
        a = a[:, ::2]
    view = StridedMemoryView.from_dlpack(a, stream_ptr=cupy_stream_ptr())
    assert view.dtype == bfloat16
    assert view.ptr == a.data.ptr
    assert view.device_id == 0
    assert view.is_device_accessible
    assert view.readonly == a.__cuda_array_interface__["data"][1]
    counts = tuple(s // a.itemsize for s in a.strides)
    if a.flags.c_contiguous:
        assert view.strides in (None, counts)
    else:
        assert view.strides == counts
    np.testing.assert_array_equal(cupy_bytes(cupy.from_dlpack(view)), cupy_bytes(a))


@needs_torch
@pytest.mark.parametrize("strided_", [False, True], ids=["contiguous", "strided"])
def test_ml_dtypes_bfloat16_torch(strided_):
    bfloat16 = np_dtype("bfloat16")
    t = torch.arange(24, dtype=torch.bfloat16, device="cuda").reshape(4, 6)
    if strided_:
        t = t[:, ::2]
    view = StridedMemoryView.from_dlpack(t, stream_ptr=torch_stream_ptr())
    assert view.dtype == bfloat16
    assert view.ptr == t.data_ptr()
    assert view.device_id == 0
    assert view.is_device_accessible
    assert not view.readonly
    check_strides(view, t.shape, t.stride(), unit_axes_free=True)
    assert torch.equal(torch.from_dlpack(view), t)


# ---- 4. the same view as cuda.core's --------------------------------------------

PRODUCERS = {
    "cupy-float32-c": lambda: cupy.arange(24, dtype=cupy.float32).reshape(4, 6),
    "cupy-float64-f": lambda: cupy.asfortranarray(cupy.arange(24, dtype=cupy.float64).reshape(4, 6)),
    "cupy-int16-gapped": lambda: cupy.arange(72, dtype=cupy.int16).reshape(6, 12)[::2, 1::3],
    "cupy-int32-negative": lambda: cupy.arange(24, dtype=cupy.int32).reshape(4, 6)[::-1, ::-2],
    "cupy-complex128-t": lambda: (cupy.arange(24) * (1 + 1j)).reshape(4, 6).T,
    "cupy-bool-3d": lambda: (cupy.arange(60).reshape(3, 4, 5) % 3 == 0)[:, 1:, ::2],
    "cupy-uint8-0d": lambda: cupy.array(7, dtype=cupy.uint8),
    "cupy-float16-empty": lambda: cupy.empty((0, 5), dtype=cupy.float16),
    "cupy-float32-unit-axes": lambda: cupy.arange(6, dtype=cupy.float32).reshape(1, 6, 1),
    "torch-float32-c": lambda: torch.arange(24, dtype=torch.float32, device="cuda").reshape(4, 6),
    "torch-int64-t": lambda: torch.arange(24, device="cuda").reshape(4, 6).t(),
    "torch-float16-gapped": lambda: (
        torch.arange(48, dtype=torch.float16, device="cuda").reshape(4, 12)[:, ::2]
    ),
    "torch-bfloat16-c": lambda: torch.arange(24, dtype=torch.bfloat16, device="cuda").reshape(4, 6),
    "torch-bool-3d": lambda: (torch.arange(60, device="cuda").reshape(3, 4, 5) % 3 == 0)[:, 1:, ::2],
    "torch-uint8-0d": lambda: torch.tensor(5, dtype=torch.uint8, device="cuda"),
    "torch-float32-empty": lambda: torch.empty((0, 3), device="cuda"),
}

DIFFERENTIAL = [
    pytest.param(name, protocol, marks=LIB_MARKS[name.split("-")[0]], id=f"{name}-{protocol}")
    for name in PRODUCERS
    for protocol in ("dlpack", "cai")
    # torch's own interface is version 2 (strided refuses it, cuda.core reads
    # torch through its C ABI): one case shows it.
    if not (name.startswith("torch") and protocol == "cai" and name != "torch-float32-c")
]


def _attempt(method, obj, stream_ptr):
    try:
        return method(obj, stream_ptr=stream_ptr), None
    except Exception as e:
        return None, e


@needs_core
@pytest.mark.parametrize("name,protocol", DIFFERENTIAL)
def test_same_view_as_cuda_core(name, protocol):
    lib = name.split("-")[0]
    if "bfloat16" in name:
        np_dtype("bfloat16")
    obj = PRODUCERS[name]()
    if lib == "torch":
        stream = torch.cuda.Stream()
        stream_ptr = stream.cuda_stream
    else:
        stream = cupy.cuda.Stream(non_blocking=True)
        stream_ptr = stream.ptr
    CoreDevice(0).set_current()
    method = "from_dlpack" if protocol == "dlpack" else "from_cuda_array_interface"
    ours, our_error = _attempt(getattr(StridedMemoryView, method), obj, stream_ptr)
    theirs, their_error = _attempt(getattr(CoreSMV, method), obj, stream_ptr)
    if lib == "torch" and protocol == "cai":
        # torch's interface is version 2: strided refuses it (version 3 or
        # later only); cuda.core 1.2 reads torch tensors through torch's C ABI
        # instead.
        assert isinstance(our_error, BufferError) and "v3" in str(our_error)
        assert their_error is None
        return
    if protocol == "dlpack" and lib == "cupy" and any(s < 0 for s in obj.strides) \
            and cupy_negative_strides_broken(obj):
        # CuPy's export is wrong (see cupy_negative_strides_broken): strided
        # refuses it, cuda.core takes the wrong strides.
        assert isinstance(our_error, BufferError) and "int64" in str(our_error)
        assert their_error is None and theirs.strides == dlpack_strides(obj)
        return
    if our_error is not None or their_error is not None:
        assert type(our_error) is type(their_error), f"strided: {our_error!r}; cuda.core: {their_error!r}"
        assert str(our_error) == str(their_error)
        return
    assert ours.exporting_obj is obj
    assert theirs.exporting_obj is obj
    # cuda.core 1.2 reads torch tensors through torch's C ABI with
    # torch's own strides; torch's DLPack export sets those of unit axes to 1.
    assert_same_view(ours, theirs, unit_axes_free=lib == "torch")
    if lib == "cupy" and ours.size > 0 and len(ours.shape) > 0:
        assert ours.strides == theirs.strides  # the same tuple, or both None
    del stream


# ---- 5. stream ordering --------------------------------------------------------

STREAM_N = 1 << 22  # int32 elements: 16 MiB, copied in microseconds
SLEEP_CYCLES = int(5e8)  # about 0.25 s at the H200's 1.98 GHz


def _pending_fill(protocol, lib, s1, s2, mode):
    """Queue "sleep, then fill the producer with 7" on stream s1; make a view
    of the producer for consumer stream s2 (mode "ordered"), with
    stream_ptr=-1 (mode "unordered"), or through a CUDA Array Interface
    that names no producer stream (mode "no producer stream"); copy the
    view's memory on s2 and wait for s2 only.

    Returns the copied values, whether s1 was still busy right after the
    view was made (it is unless the import waited on the host), and how
    many ms the copy ended before the sleep did."""
    if lib == "torch":
        producer = torch.zeros(STREAM_N, dtype=torch.int32, device="cuda")
        alias = producer
    else:
        producer = cupy.zeros(STREAM_N, dtype=cupy.int32)
        alias = torch.from_dlpack(producer)
    copy = cupy.empty(STREAM_N, dtype=cupy.int32)
    nbytes = STREAM_N * 4
    d2d = cupy.cuda.runtime.memcpyDeviceToDevice
    producer_stream = torch.cuda.ExternalStream(s1)
    consumer_stream = torch.cuda.ExternalStream(s2)
    # Run every call once beforehand, so that no first use (module loading,
    # pool growth) synchronises inside the part that counts.
    with torch.cuda.stream(producer_stream):
        torch.cuda._sleep(1)
        alias.fill_(0)
    cupy.cuda.runtime.memcpyAsync(copy.data.ptr, alias.data_ptr(), nbytes, d2d, s2)
    sync()

    sleep_done = torch.cuda.Event(enable_timing=True)
    copy_done = torch.cuda.Event(enable_timing=True)
    consumer = -1 if mode == "unordered" else s2
    with torch.cuda.stream(producer_stream):
        torch.cuda._sleep(SLEEP_CYCLES)
        sleep_done.record(producer_stream)
        alias.fill_(7)
        if protocol == "dlpack" and lib == "torch":
            # torch's __dlpack__ orders its current stream (s1) before s2.
            view = StridedMemoryView.from_dlpack(producer, stream_ptr=consumer)
        elif protocol == "dlpack":
            # CuPy's __dlpack__ orders its current stream (s1) before s2.
            with cupy.cuda.ExternalStream(s1):
                view = StridedMemoryView.from_dlpack(producer, stream_ptr=consumer)
        else:
            stream = None if mode == "no producer stream" else s1
            view = StridedMemoryView.from_cuda_array_interface(
                CAIOnly(producer, stream=stream), stream_ptr=consumer
            )
    busy = not producer_stream.query()
    cupy.cuda.runtime.memcpyAsync(copy.data.ptr, view.device_ptr, nbytes, d2d, s2)
    copy_done.record(consumer_stream)
    cupy.cuda.runtime.streamSynchronize(s2)
    values = copy.get()
    sync()
    return values, busy, copy_done.elapsed_time(sleep_done)


ORDERED = [
    pytest.param("dlpack", "torch", id="dlpack-torch"),
    pytest.param("dlpack", "cupy", id="dlpack-cupy"),
    pytest.param("cai", "cupy", id="cai-cupy"),
]


@needs_torch
@needs_cupy
@pytest.mark.parametrize("protocol,lib", ORDERED)
def test_consumer_stream_waits_for_producer(protocol, lib, stream_pair):
    s1, s2 = stream_pair(lib)
    values, busy, _ = _pending_fill(protocol, lib, s1, s2, "ordered")
    assert busy, "the producer's stream was idle right after the import: did it wait on the host?"
    stale = np.count_nonzero(values != 7)
    assert stale == 0, f"{stale} of {values.size} values read before the producer wrote them"


UNORDERED = [
    pytest.param("dlpack", "torch", "unordered", id="dlpack-torch-stream_ptr=-1"),
    pytest.param("dlpack", "cupy", "unordered", id="dlpack-cupy-stream_ptr=-1"),
    pytest.param("cai", "cupy", "unordered", id="cai-cupy-stream_ptr=-1"),
    pytest.param("cai", "cupy", "no producer stream", id="cai-cupy-stream=None"),
]


@needs_torch
@needs_cupy
@pytest.mark.parametrize("protocol,lib,mode", UNORDERED)
def test_control_without_ordering_reads_stale_values(protocol, lib, mode, stream_pair):
    """The control for the test above: without ordering the consumer's copy
    runs while the producer still sleeps and reads the old zeros. Asserted
    only where the events show that the copy ended before the sleep did."""
    s1, s2 = stream_pair(lib)
    values, busy, lead_ms = _pending_fill(protocol, lib, s1, s2, mode)
    assert busy, "the producer's stream was idle right after the import: did it wait on the host?"
    if lead_ms < 1.0:
        pytest.skip(f"the copy did not end well before the producer's sleep (lead {lead_ms:.3f} ms)")
    assert np.count_nonzero(values) == 0


# ---- 6. lifetimes ----------------------------------------------------------------

LIFETIMES = [
    pytest.param("cupy", "dlpack", marks=needs_cupy, id="cupy-dlpack"),
    pytest.param("cupy", "cai", marks=needs_cupy, id="cupy-cai"),
    pytest.param("torch", "dlpack", marks=needs_torch, id="torch-dlpack"),
]


def _producer(lib, n, value=None):
    if lib == "cupy":
        return cupy.arange(n, dtype=cupy.int64) if value is None else cupy.full(n, value, dtype=cupy.int64)
    if value is None:
        return torch.arange(n, dtype=torch.int64, device="cuda")
    return torch.full((n,), value, dtype=torch.int64, device="cuda")


def _import(obj, protocol):
    if protocol == "cai":
        return StridedMemoryView.from_cuda_array_interface(obj, stream_ptr=-1)
    return StridedMemoryView.from_dlpack(obj, stream_ptr=-1)


def _read_back(lib, view):
    if lib == "cupy":
        return cupy.from_dlpack(view).get()
    return torch.from_dlpack(view).cpu().numpy()


@pytest.mark.parametrize("lib,protocol", LIFETIMES)
def test_view_keeps_producer_alive(lib, protocol):
    n = MiB
    p = _producer(lib, n)
    sync()
    gone = []
    weakref.finalize(p, gone.append, True)
    obj = CAIOnly(p) if protocol == "cai" else p
    view = _import(obj, protocol)
    del p, obj
    gc.collect()
    assert gone == []
    # Allocations of the same size would reuse the producer's memory had it
    # been freed.
    junk = [_producer(lib, n, -1) for _ in range(4)]
    sync()
    np.testing.assert_array_equal(_read_back(lib, view), np.arange(n, dtype=np.int64))
    del junk, view
    gc.collect()
    assert gone == [True]


@pytest.mark.parametrize("lib,protocol", LIFETIMES)
def test_producer_refcount_back_to_baseline(lib, protocol):
    p = _producer(lib, 16)
    obj = CAIOnly(p) if protocol == "cai" else p
    sync()
    gc.collect()
    base = sys.getrefcount(obj), sys.getrefcount(p)
    for _ in range(10):
        view = _import(obj, protocol)
        derived = view.view(view.layout[1:])
        back = (cupy.from_dlpack if lib == "cupy" else torch.from_dlpack)(derived)
        capsule = view.__dlpack__(max_version=(1, 0))
        assert sys.getrefcount(obj) > base[0]
        del view, derived, back, capsule
    gc.collect()
    assert (sys.getrefcount(obj), sys.getrefcount(p)) == base


def _allocated(lib):
    if lib == "torch":
        return torch.cuda.memory_allocated()
    return cupy.get_default_memory_pool().used_bytes()


@pytest.mark.parametrize(
    "lib", [pytest.param("torch", marks=needs_torch), pytest.param("cupy", marks=needs_cupy)]
)
def test_unconsumed_capsules_release_producer_memory(lib):
    if lib == "torch" and os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1":
        pytest.skip("torch counts no allocated memory without its caching allocator "
                    "(PYTORCH_NO_CUDA_MEMORY_CACHING=1, as under compute-sanitizer)")
    size = 64 * MiB
    sync()
    gc.collect()
    base = _allocated(lib)
    if lib == "torch":
        p = torch.empty(size, dtype=torch.uint8, device="cuda")
        view = StridedMemoryView.from_dlpack(p, stream_ptr=torch_stream_ptr())
    else:
        p = cupy.empty(size, dtype=cupy.uint8)
        view = StridedMemoryView.from_dlpack(p, stream_ptr=cupy_stream_ptr())
    derived = view.view(view.layout[1:])
    capsules = [
        view.__dlpack__(),
        view.__dlpack__(max_version=(1, 0)),
        derived.__dlpack__(max_version=(1, 3)),
    ]
    del p, view, derived
    gc.collect()
    assert _allocated(lib) >= base + size
    del capsules
    gc.collect()
    assert _allocated(lib) == base


@needs_cupy
def test_unconsumed_capsules_release_buffer_owner():
    a = cupy.zeros(MiB, dtype=cupy.uint8)
    owner = Owner(a)
    released = []
    weakref.finalize(owner, released.append, True)
    buf = strided.Buffer.from_handle(a.data.ptr, a.nbytes, owner=owner)
    view = StridedMemoryView.from_buffer(buf, (a.nbytes,), dtype=np.dtype(np.uint8))
    assert view.__dlpack_device__() == (kDLCUDA, 0)
    capsules = [view.__dlpack__(), view.__dlpack__(max_version=(1, 0))]
    buf.close()
    del owner, a, view
    gc.collect()
    assert released == []
    del capsules
    gc.collect()
    assert released == [True]


@needs_torch
def test_closed_buffer_kept_by_view_and_export():
    """On device memory: closing the Buffer while a view and a torch tensor
    made from it live keeps the memory until the last one goes."""
    n = MiB
    mr = strided.DeviceMemoryResource(0)
    buf = mr.allocate(n * 4)
    view = StridedMemoryView.from_buffer(buf, (n,), dtype=np.dtype(np.int32))
    t = torch.from_dlpack(view)
    t.copy_(torch.arange(n, dtype=torch.int32, device="cuda"))
    torch.cuda.synchronize()
    buf.close()
    del view
    gc.collect()
    others = [mr.allocate(n * 4) for _ in range(4)]
    for other in others:
        other_view = StridedMemoryView.from_buffer(other, (n,), dtype=np.dtype(np.int32))
        torch.from_dlpack(other_view).fill_(-1)
    torch.cuda.synchronize()
    assert torch.equal(t.cpu(), torch.arange(n, dtype=torch.int32))


# ---- 7. errors on GPU inputs ----------------------------------------------------

STREAM_NONE = r"^stream=None is ambiguous with view\(\)$"


def _small_gpu_array(lib):
    if lib == "cupy":
        return cupy.arange(6, dtype=cupy.float32)
    return torch.arange(6, dtype=torch.float32, device="cuda")


@pytest.mark.parametrize("entry", ["from_dlpack", "from_any_interface", "decorator"])
@pytest.mark.parametrize(
    "lib", [pytest.param("cupy", marks=needs_cupy), pytest.param("torch", marks=needs_torch)]
)
def test_cuda_producer_needs_a_consumer_stream(lib, entry):
    x = _small_gpu_array(lib)
    with pytest.raises(BufferError, match=STREAM_NONE):
        if entry == "decorator":

            @strided.args_viewable_as_strided_memory((0,))
            def consume(arr):
                return arr.view()

            consume(x)
        else:
            getattr(StridedMemoryView, entry)(x)
    with pytest.raises(BufferError, match=STREAM_NONE):
        StridedMemoryView.from_dlpack(x, stream_ptr=None)


@needs_cupy
def test_cai_needs_a_consumer_stream():
    with pytest.raises(BufferError, match=STREAM_NONE):
        StridedMemoryView.from_cuda_array_interface(cupy.arange(6, dtype=cupy.float32))


@needs_cupy
def test_cai_version_2_refused():
    a = cupy.arange(6, dtype=cupy.float32)
    with pytest.raises(BufferError, match="^only CUDA Array Interface v3 or above is supported$"):
        StridedMemoryView.from_cuda_array_interface(CAIOnly(a, version=2), stream_ptr=-1)


@needs_torch
def test_cai_of_torch_refused_as_version_2():
    t = torch.arange(6, dtype=torch.float32, device="cuda")
    if t.__cuda_array_interface__["version"] >= 3:
        pytest.skip(f"torch {torch.__version__} exports CUDA Array Interface v3")
    with pytest.raises(BufferError, match="^only CUDA Array Interface v3 or above is supported$"):
        StridedMemoryView.from_cuda_array_interface(t, stream_ptr=-1)


@needs_cupy
def test_cai_mask_refused():
    a = cupy.arange(6, dtype=cupy.float32)
    mask = cupy.ones(6, dtype=cupy.bool_)
    with pytest.raises(BufferError, match="^mask is not supported$"):
        StridedMemoryView.from_cuda_array_interface(CAIOnly(a, mask=mask), stream_ptr=-1)


@needs_cupy
def test_cai_strides_not_divisible_by_itemsize():
    a = cupy.arange(12, dtype=cupy.float32)
    with pytest.raises(ValueError, match="strides must be divisible by itemsize"):
        StridedMemoryView.from_cuda_array_interface(CAIOnly(a, shape=(5,), strides=(6,)), stream_ptr=-1)


@needs_cupy
def test_cai_producer_stream_zero_refused(consumer_stream):
    """The CUDA Array Interface forbids stream 0 (upstream asserts > 0)."""
    a = cupy.arange(6, dtype=cupy.float32)
    with pytest.raises((AssertionError, BufferError, ValueError)):
        StridedMemoryView.from_cuda_array_interface(CAIOnly(a, stream=0), stream_ptr=consumer_stream.ptr)


def test_cai_of_a_host_pointer_refused():
    h = np.zeros(16, dtype=np.float32)
    obj = RawCAI(
        {
            "version": 3,
            "shape": (16,),
            "typestr": "<f4",
            "descr": [("", "<f4")],
            "data": (h.ctypes.data, False),
            "strides": None,
            "stream": None,
        },
        keep=h,
    )
    with pytest.raises((BufferError, RuntimeError, ValueError)) as info:
        StridedMemoryView.from_cuda_array_interface(obj, stream_ptr=-1)
    text = str(info.value)
    address = h.ctypes.data
    assert re.search(r"(?i)cuda|pointer", text) or f"{address:x}" in text or str(address) in text, text


@needs_torch
def test_readme_example():
    """The README's StridedMemoryView example, as written there."""
    t = torch.arange(24, device="cuda", dtype=torch.float32).reshape(4, 6).T
    v = StridedMemoryView.from_dlpack(t, stream_ptr=torch.cuda.current_stream().cuda_stream)
    assert (v.shape, v.strides, v.device_id) == ((6, 4), (1, 6), 0)
    w = v.view(v.layout[::2])
    back = torch.from_dlpack(w)
    assert torch.equal(back, t[::2])
    assert back.data_ptr() == t.data_ptr()


class _TorchByProtocol:
    """A torch tensor offered by __dlpack__ alone (no exchange table)."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8", "bool",
                                   "complex64"])
def test_torch_by_the_exchange_api_and_by_the_protocol_agree(device, dtype):
    if torch is None or not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("PyTorch with the DLPack C exchange API is needed")
    base = torch.arange(60, device=device).reshape(3, 4, 5).to(getattr(torch, dtype))
    for t in (base, base[:, ::2], base.transpose(0, 2), base[1], base[0, 0, 0], base[:, :0]):
        a = StridedMemoryView.from_dlpack(t, stream_ptr=-1)
        b = StridedMemoryView.from_dlpack(_TorchByProtocol(t), stream_ptr=-1)
        assert (a.ptr, a.shape, a.strides, str(a.dtype), a.readonly, a.device_id,
                a.is_device_accessible) == (b.ptr, b.shape, b.strides, str(b.dtype), b.readonly,
                                            b.device_id, b.is_device_accessible)
        assert a.exporting_obj is t
