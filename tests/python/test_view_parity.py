"""StridedMemoryView's DLPack producer side and the cuda.core behaviours it
adds (docs/views.md): the DLPack C exchange API (__dlpack_c_exchange_api__),
__dlpack__'s dl_device and copy (the array API's rules), the element type
every export carries, from_any_interface's fallback to the array interface,
and the hint after cuda.core's sentence when host memory is given no stream.

The exchange API is a table of C function pointers in a capsule; these tests
read it with ctypes, as a C consumer would. The entry points that take or
make Python objects are called as PYFUNCTYPE (with the GIL held, raising the
exception they set on failure); the allocator, which needs no Python, as
CFUNCTYPE, with a SetError callback that records what it is told. The device
paths run in a fresh interpreter against the fake CUDA driver, as in
test_view_fake_cuda.py; the rest needs no driver.
"""

import ctypes
import gc
import weakref

import numpy as np
import pytest

import strided
from strided import HostMemoryResource, StridedMemoryView
from test_dlpack_producers import (
    DELETER,
    DLDataType,
    DLDevice,
    DLManagedTensorVersioned,
    DLPackVersion,
    DLTensor,
)
from test_view_fake_cuda import needs_fake, run_fake

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
READ_ONLY, IS_COPIED = 1, 2

ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
ctypes.pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
ctypes.pythonapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
ctypes.pythonapi.Py_DecRef.argtypes = [ctypes.py_object]
ctypes.pythonapi.Py_DecRef.restype = None


TENSOR_P = ctypes.POINTER(DLManagedTensorVersioned)


class ExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("prev_api", ctypes.c_void_p),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
        ("current_work_stream", ctypes.c_void_p),
    ]


SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.POINTER(TENSOR_P),
                             ctypes.c_void_p, SET_ERROR)
FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(TENSOR_P))
TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, TENSOR_P, ctypes.POINTER(ctypes.c_void_p))
DLTENSOR_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
CURRENT_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                   ctypes.POINTER(ctypes.c_void_p))

# The table's entry points, typed.
_capsule = StridedMemoryView.__dlpack_c_exchange_api__
API = ExchangeAPI.from_address(
    ctypes.pythonapi.PyCapsule_GetPointer(_capsule, b"dlpack_exchange_api"))
allocate = ctypes.cast(API.managed_tensor_allocator, ALLOCATOR)
from_py = ctypes.cast(API.managed_tensor_from_py_object_no_sync, FROM_PY)
to_py = ctypes.cast(API.managed_tensor_to_py_object_no_sync, TO_PY)
dltensor_from_py = ctypes.cast(API.dltensor_from_py_object_no_sync, DLTENSOR_FROM_PY)
current_stream = ctypes.cast(API.current_work_stream, CURRENT_STREAM)


def host_view(a):
    return StridedMemoryView.from_dlpack(a, stream_ptr=-1)


def export(view):
    """managed_tensor_from_py_object_no_sync: the tensor (owned by the
    caller)."""
    out = TENSOR_P()
    assert from_py(view, ctypes.byref(out)) == 0
    return out


def import_tensor(tensor):
    """managed_tensor_to_py_object_no_sync: the new view, its stolen
    reference handed back to Python's count."""
    out = ctypes.c_void_p()
    assert to_py(tensor, ctypes.byref(out)) == 0
    obj = ctypes.cast(out, ctypes.py_object).value
    ctypes.pythonapi.Py_DecRef(obj)
    return obj


def dims(t, field):
    return [getattr(t, field)[i] for i in range(t.ndim)]


class Holder:
    """A DLPack producer that hands out a capsule already made (NumPy asks
    for a versioned one)."""

    def __init__(self, capsule, device=(kDLCPU, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def capsule_tensor(capsule):
    """The versioned tensor in a capsule (before a consumer takes it)."""
    assert ctypes.pythonapi.PyCapsule_IsValid(capsule, b"dltensor_versioned")
    ptr = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    return DLManagedTensorVersioned.from_address(ptr)


# ---- the exchange API table ---------------------------------------------------------------


def test_exchange_api_is_a_class_attribute_under_both_names():
    cls = StridedMemoryView
    assert cls.__dict__["__dlpack_c_exchange_api__"] is cls.__dict__["__c_dlpack_exchange_api__"]
    assert ctypes.pythonapi.PyCapsule_IsValid(cls.__c_dlpack_exchange_api__,
                                              b"dlpack_exchange_api")
    v = host_view(np.arange(3))
    assert v.__dlpack_c_exchange_api__ is cls.__dlpack_c_exchange_api__
    assert (API.version.major, API.version.minor) == (1, 3)
    assert API.prev_api is None
    for name, _ in ExchangeAPI._fields_[2:]:
        assert getattr(API, name), name


def test_from_py_object_exports_the_view():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = host_view(a[1:, ::2])
    m = export(v)
    t = m.contents
    assert (t.version.major, t.version.minor) == (1, 3)
    assert t.flags == 0
    d = t.dl_tensor
    assert d.data == v.ptr
    assert (d.device.device_type, d.device.device_id) == (kDLCPU, 0)
    assert (d.dtype.code, d.dtype.bits, d.dtype.lanes) == (2, 32, 1)
    assert dims(d, "shape") == [3, 3] and dims(d, "strides") == [6, 2]
    assert d.byte_offset == 0
    # The tensor keeps the memory: a view made of it reads the same bytes.
    w = import_tensor(m)
    assert w.exporting_obj is None
    np.testing.assert_array_equal(np.from_dlpack(w), a[1:, ::2])
    assert np.from_dlpack(w).ctypes.data == v.ptr


def test_from_py_object_of_a_readonly_view():
    a = np.arange(4.0)
    a.flags.writeable = False
    m = export(host_view(a))
    assert m.contents.flags == READ_ONLY
    m.contents.deleter(ctypes.addressof(m.contents))


def test_from_py_object_refusals():
    out = TENSOR_P()
    with pytest.raises(TypeError, match="^py_object must be a StridedMemoryView$"):
        from_py(np.arange(3), ctypes.byref(out))
    with pytest.raises(RuntimeError, match="^out cannot be NULL$"):
        from_py(host_view(np.arange(3)), None)
    bare = StridedMemoryView.from_buffer(HostMemoryResource().allocate(16), (16,), itemsize=1)
    with pytest.raises(BufferError, match="^Cannot export StridedMemoryView via DLPack without "
                                          "dtype information"):
        from_py(bare, ctypes.byref(out))
    retyped = host_view(np.arange(4, dtype=np.float32)).view(dtype=np.dtype("V4"))
    with pytest.raises(BufferError, match=r"^Unsupported dtype for DLPack export: \|V4$"):
        from_py(retyped, ctypes.byref(out))
    assert not out


class Owned:
    """A managed tensor made here, over a NumPy array, whose deleter counts
    its calls."""

    def __init__(self, array, major=1):
        self.array = array
        self.deleted = 0
        self.shape = (ctypes.c_int64 * array.ndim)(*array.shape)
        self.strides = (ctypes.c_int64 * array.ndim)(
            *(s // array.itemsize for s in array.strides))
        self.deleter = DELETER(self._delete)
        self.m = DLManagedTensorVersioned()
        self.m.version = DLPackVersion(major, 3)
        self.m.deleter = self.deleter
        self.m.dl_tensor = DLTensor(array.ctypes.data, DLDevice(kDLCPU, 0), array.ndim,
                                    DLDataType(2, 64, 1), self.shape, self.strides, 0)

    def _delete(self, _):
        self.deleted += 1

    def pointer(self):
        return ctypes.pointer(self.m)


def test_to_py_object_takes_the_tensor_over():
    a = np.arange(6.0).reshape(2, 3)
    owned = Owned(a)
    v = import_tensor(owned.pointer())
    assert (v.ptr, v.shape, v.strides, v.dtype) == (a.ctypes.data, (2, 3), (3, 1), a.dtype)
    assert v.device_id == -1 and not v.is_device_accessible
    assert owned.deleted == 0
    derived = v.view(v.layout[1:])
    del v
    gc.collect()
    assert owned.deleted == 0
    del derived
    gc.collect()
    assert owned.deleted == 1


def test_to_py_object_refusals_delete_the_tensor():
    out = ctypes.c_void_p()
    owned = Owned(np.arange(3.0), major=2)
    with pytest.raises(BufferError, match="^Unsupported DLPack major version: 2"):
        to_py(owned.pointer(), ctypes.byref(out))
    assert owned.deleted == 1 and not out
    owned = Owned(np.arange(3.0))
    with pytest.raises(RuntimeError, match="^out_py_object cannot be NULL$"):
        to_py(owned.pointer(), None)
    assert owned.deleted == 1
    with pytest.raises(RuntimeError, match="^tensor cannot be NULL$"):
        to_py(None, ctypes.byref(out))


def test_dltensor_from_py_object_borrows_the_view():
    a = np.arange(24, dtype=np.int16).reshape(2, 3, 4)[:, ::-1, 1:]
    v = host_view(a)
    t = DLTensor()
    assert dltensor_from_py(v, ctypes.byref(t)) == 0
    assert t.data == v.ptr
    assert (t.device.device_type, t.device.device_id) == (kDLCPU, 0)
    assert t.ndim == 3
    assert (t.dtype.code, t.dtype.bits) == (0, 16)
    assert dims(t, "shape") == list(v.shape) and dims(t, "strides") == list(v.strides)
    # Borrowed: the view's own arrays, nothing to free.
    assert dltensor_from_py(v, ctypes.byref(DLTensor())) == 0


def test_dltensor_from_py_object_refusals():
    t = DLTensor()
    with pytest.raises(TypeError, match="^py_object must be a StridedMemoryView$"):
        dltensor_from_py(object(), ctypes.byref(t))
    with pytest.raises(RuntimeError, match="^out cannot be NULL$"):
        dltensor_from_py(host_view(np.arange(3)), None)
    retyped = host_view(np.arange(4, dtype=np.int32)).view(dtype=np.dtype("S4"))
    with pytest.raises(BufferError, match=r"^Unsupported dtype for DLPack export: \|S4$"):
        dltensor_from_py(retyped, ctypes.byref(t))
    assert not t.data


def test_current_work_stream_is_the_legacy_default_stream():
    out = ctypes.c_void_p(0x5A5A)
    for device in ((kDLCPU, 0), (kDLCUDA, 0), (kDLCUDA, 3)):
        assert current_stream(*device, ctypes.byref(out)) == 0
        assert out.value is None
    with pytest.raises(RuntimeError, match="^out_current_stream cannot be NULL$"):
        current_stream(kDLCUDA, 0, None)


class Errors:
    """A SetError callback and what it was told."""

    def __init__(self):
        self.calls = []
        self.callback = SET_ERROR(self._record)

    def _record(self, ctx, kind, message):
        self.calls.append((ctx, kind.decode(), message.decode()))


def prototype(shape, device=(kDLCPU, 0), dtype=(2, 64, 1)):
    shape = (ctypes.c_int64 * len(shape))(*shape)
    t = DLTensor(None, DLDevice(*device), len(shape), DLDataType(*dtype), shape, None, 0)
    t._keep = shape
    return t


def test_allocator_makes_a_dense_host_tensor():
    errors = Errors()
    out = TENSOR_P()
    proto = prototype((2, 3))
    assert allocate(ctypes.byref(proto), ctypes.byref(out), None, errors.callback) == 0
    assert errors.calls == []
    t = out.contents
    assert (t.version.major, t.version.minor, t.flags) == (1, 3, 0)
    d = t.dl_tensor
    assert (d.device.device_type, d.device.device_id) == (kDLCPU, 0)
    assert dims(d, "shape") == [2, 3] and dims(d, "strides") == [3, 1]
    assert d.data % 256 == 0 and d.byte_offset == 0
    # The consumer fills it and hands it back as a view.
    ctypes.memmove(d.data, np.arange(6.0).ctypes.data, 48)
    v = import_tensor(out)
    np.testing.assert_array_equal(np.from_dlpack(v), np.arange(6.0).reshape(2, 3))
    assert not v.readonly


@pytest.mark.parametrize(
    "proto, kind, message",
    [
        (prototype((3,), dtype=(2, 32, 4)), "BufferError", "lanes"),
        (prototype((3, -1)), "BufferError", "xtent"),
        (prototype((3,), device=(kDLCPU, 1)),
         "BufferError", "prototype->device.device_id is 1; a CPU device must have id 0"),
        (prototype((3,), device=(4, 0)), "BufferError",
         "device type 4 is not supported (only CPU, CUDA, CUDA host and CUDA managed)"),
        (prototype((2**62, 16)), "BufferError", "overflow"),
    ],
)
def test_allocator_reports_through_set_error(proto, kind, message):
    errors = Errors()
    sentinel = TENSOR_P(DLManagedTensorVersioned())
    out = TENSOR_P(sentinel.contents)
    assert allocate(ctypes.byref(proto), ctypes.byref(out), 0x1234, errors.callback) == -1
    assert ctypes.addressof(out.contents) == ctypes.addressof(sentinel.contents)
    assert len(errors.calls) == 1
    ctx, got_kind, got_message = errors.calls[0]
    assert ctx == 0x1234 and got_kind == kind
    assert message in got_message
    # Without a SetError, only the status.
    assert allocate(ctypes.byref(proto), ctypes.byref(out), None, SET_ERROR()) == -1


# ---- __dlpack__(dl_device=..., copy=...) -----------------------------------------------------


def test_copy_true_exports_a_dense_copy():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    a.flags.writeable = False
    v = host_view(a[::-1, 1::2])
    for max_version in ((1, 3), None):
        capsule = v.__dlpack__(copy=True, max_version=max_version)
        if max_version is not None:
            t = capsule_tensor(capsule)
            assert t.flags == IS_COPIED  # writable, the consumer's alone
            assert t.dl_tensor.data != v.ptr
            assert dims(t.dl_tensor, "strides") == [3, 1]
        else:
            assert ctypes.pythonapi.PyCapsule_IsValid(capsule, b"dltensor")
    b = np.from_dlpack(v, copy=True)
    np.testing.assert_array_equal(b, a[::-1, 1::2])
    assert b.flags.c_contiguous and b.flags.writeable
    assert not np.shares_memory(b, a)
    b[...] = -1
    assert a[0, 1] == 1


def test_copy_false_and_none_share_the_memory():
    a = np.arange(6.0)
    v = host_view(a)
    for copy in (False, None):
        t = capsule_tensor(v.__dlpack__(copy=copy, max_version=(1, 0)))
        assert t.dl_tensor.data == v.ptr and t.flags == 0
    assert np.shares_memory(np.from_dlpack(v, copy=False), a)


def test_dl_device_of_the_view_or_the_cpu():
    a = np.arange(6.0)
    v = host_view(a)
    t = capsule_tensor(v.__dlpack__(dl_device=(kDLCPU, 0), copy=False, max_version=(1, 0)))
    assert t.dl_tensor.data == v.ptr
    assert np.shares_memory(np.from_dlpack(v, device="cpu"), a)
    c = capsule_tensor(v.__dlpack__(dl_device=(kDLCPU, 0), copy=True, max_version=(1, 0)))
    assert c.dl_tensor.data != v.ptr and c.flags == IS_COPIED


@pytest.mark.parametrize("device", [(kDLCUDA, 0), (kDLCPU, 1), (kDLCUDAHost, 0), (99, 0),
                                    (2**70, 0)])
def test_dl_device_elsewhere_is_refused(device):
    v = host_view(np.arange(3.0))
    with pytest.raises(BufferError, match=rf"^dl_device \({device[0]}, {device[1]}\) is not "
                                          r"supported for a view on device \(1, 0\): a view "
                                          r"exports to its own device or to the CPU \(1, 0\)$"
                       if device[0] < 2**63 else "is not supported"):
        v.__dlpack__(dl_device=device)


@pytest.mark.parametrize("device", [(), (1,), (1, 0, 0), [1, 0], "cpu", (True, 0), (1.0, 0),
                                    (1, None)])
def test_dl_device_must_be_a_tuple_of_two_ints(device):
    v = host_view(np.arange(3.0))
    with pytest.raises(BufferError, match=r"^dl_device must be None or a \(device_type, "
                                          r"device_id\) tuple of ints, got "):
        v.__dlpack__(dl_device=device)


def test_copy_checks_the_stream_and_the_dtype_first():
    v = host_view(np.arange(3.0))
    with pytest.raises(BufferError, match="^stream=5 is not valid for a view of host memory"):
        v.__dlpack__(copy=True, stream=5)
    bare = StridedMemoryView.from_buffer(HostMemoryResource().allocate(16), (16,), itemsize=1)
    with pytest.raises(BufferError, match="without dtype information"):
        bare.__dlpack__(copy=True)


def test_copy_of_an_empty_and_a_0d_view():
    e = np.from_dlpack(host_view(np.zeros((0, 3))), copy=True)
    assert e.shape == (0, 3)
    s = np.from_dlpack(host_view(np.array(2.5)), copy=True)
    assert s.shape == () and s == 2.5


# ---- the element type of every export ------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"copy": True}, {"dl_device": (kDLCPU, 0)},
                                    {"max_version": (1, 0)}])
def test_a_view_retyped_without_a_dlpack_type_is_not_exported(kwargs):
    v = host_view(np.arange(4, dtype=np.float32)).view(dtype=np.dtype("V4"))
    assert v.dtype == np.dtype("V4")
    with pytest.raises(BufferError, match=r"^Unsupported dtype for DLPack export: \|V4$"):
        v.__dlpack__(**kwargs)


def test_a_view_retyped_with_a_dlpack_type_exports_that_type():
    a = np.arange(4, dtype=np.float32)
    v = host_view(a).view(dtype=np.dtype(np.int32))
    t = capsule_tensor(v.__dlpack__(max_version=(1, 0)))
    assert (t.dl_tensor.dtype.code, t.dl_tensor.dtype.bits) == (0, 32)
    for copy in (None, True):
        b = np.from_dlpack(v, copy=copy)
        assert b.dtype == np.int32
        np.testing.assert_array_equal(b, a.view(np.int32))
    m = export(v)
    assert m.contents.dl_tensor.dtype.code == 0
    m.contents.deleter(ctypes.addressof(m.contents))


# ---- from_any_interface: DLPack, the CUDA Array Interface, then the array interface --------


class ArrayInterfaceOnly:
    """A host producer with only __array_interface__, whose dict owns the
    memory (as a NumPy scalar's does, under '__ref')."""

    def __init__(self, values):
        self.values = values
        self.made = []

    @property
    def __array_interface__(self):
        owner = np.array(self.values, dtype=np.float64)
        self.made.append(weakref.ref(owner))
        d = dict(owner.__array_interface__)
        d["__ref"] = owner
        return d


def test_numpy_scalars_go_by_the_array_interface():
    s = np.float32(1.5)
    assert StridedMemoryView._exchange_protocol(s) == "array"
    for v in (StridedMemoryView.from_any_interface(s),
              StridedMemoryView.from_any_interface(s, stream_ptr=-1)):
        assert v.shape == () and v.dtype == np.float32 and v.exporting_obj is s
        assert v.device_id == -1 and not v.is_device_accessible
        assert np.from_dlpack(v) == np.float32(1.5)
    with pytest.warns(DeprecationWarning):
        v = StridedMemoryView(np.int16(7), stream_ptr=None)
    assert np.from_dlpack(v) == 7


def test_the_array_interface_dict_lives_as_long_as_the_memory():
    p = ArrayInterfaceOnly([1.0, 2.0, 3.0])
    v = StridedMemoryView.from_any_interface(p)
    gc.collect()
    owner = p.made[-1]
    assert owner() is not None
    np.testing.assert_array_equal(np.from_dlpack(v), [1.0, 2.0, 3.0])
    derived = v.view(v.layout[1:])
    del v
    gc.collect()
    assert owner() is not None
    del derived
    gc.collect()
    assert owner() is None


def test_host_producers_with_only_the_array_interface():
    p = ArrayInterfaceOnly([4.0, 5.0])
    assert StridedMemoryView._exchange_protocol(p) == "array"
    v = StridedMemoryView.from_any_interface(p, 0x1234)  # orders nothing on the host
    assert v.exporting_obj is p and v.shape == (2,)
    with pytest.raises(ValueError, match="stream_ptr must be -1"):
        StridedMemoryView.from_any_interface(p, -2)
    with pytest.raises(TypeError):
        StridedMemoryView.from_any_interface(p, "0")


def test_the_decorator_takes_the_array_interface_too():
    @strided.args_viewable_as_strided_memory((0,))
    def take(x):
        assert not x.has_dlpack
        assert "via array interface" in repr(x)
        return x.view()

    v = take(np.float64(3.0))
    assert np.from_dlpack(v) == 3.0


class CAIAndArray:
    __cuda_array_interface__ = {"version": 3, "data": (0, False), "shape": (0,),
                                "typestr": "<f4"}
    __array_interface__ = {"version": 3, "data": (0, False), "shape": (0,), "typestr": "<f4"}


class Nothing:
    @property
    def __array_interface__(self):
        raise AttributeError("not for this object")


def test_the_order_of_the_protocols():
    assert StridedMemoryView._exchange_protocol(np.arange(3)) == "dlpack"
    assert StridedMemoryView._exchange_protocol(CAIAndArray()) == "cai"
    with pytest.raises(BufferError, match="^stream=None is ambiguous with view\\(\\)$"):
        StridedMemoryView.from_any_interface(CAIAndArray())
    for obj in (Nothing(), object(), 3):
        with pytest.raises(BufferError, match="^the input object does not support any data "
                                              "exchange protocol$"):
            StridedMemoryView.from_any_interface(obj)
        with pytest.raises(BufferError, match="does not support any data exchange protocol"):
            StridedMemoryView._exchange_protocol(obj)


# ---- stream=None on host memory ------------------------------------------------------------

HOST_STREAM_NONE = r"^stream=None is ambiguous with view\(\); for host memory pass stream_ptr=-1$"


class CUDAProducer:
    """A producer that says its tensor is on a CUDA device; the request is
    refused before __dlpack__ is called."""

    def __dlpack__(self, **kwargs):
        raise AssertionError("not called")

    def __dlpack_device__(self):
        return (kDLCUDA, 0)


def test_stream_none_on_host_memory_says_what_to_pass():
    for call in (StridedMemoryView.from_dlpack, StridedMemoryView.from_any_interface):
        with pytest.raises(BufferError, match=HOST_STREAM_NONE):
            call(np.arange(3))
    with pytest.raises(BufferError, match="^stream=None is ambiguous with view\\(\\)$"):
        StridedMemoryView.from_dlpack(CUDAProducer())


# ---- device memory, against the fake driver ------------------------------------------------

FAKE_PRELUDE = """
import numpy as np
from strided import DeviceMemoryResource, ManagedMemoryResource, PinnedMemoryResource
fake.fake_cuda_move_bytes.argtypes = [ctypes.c_int]
fake.fake_cuda_move_bytes.restype = None
fake.fake_cuda_move_bytes(1)
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def tensor(capsule):
    p = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
    # version (8), manager_ctx, deleter, flags, then the DLTensor: data, device.
    words = (ctypes.c_uint64 * 5).from_address(p)
    device = (ctypes.c_int32 * 2).from_address(p + 40)
    return dict(flags=words[3], data=words[4], device=list(device))


def filled(mr, n=12):
    buf = mr.allocate(4 * n)
    src = np.arange(n, dtype=np.float32)
    ctypes.memmove(int(buf.handle), src.ctypes.data, src.nbytes)
    return buf, StridedMemoryView.from_buffer(buf, (n // 4, 4), dtype=np.dtype(np.float32))


def values(t, n=12):
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(t["data"])).tolist()
"""


@pytest.fixture(scope="module")
def fake_device():
    return run_fake(FAKE_PRELUDE + """
buf, v = filled(DeviceMemoryResource(0))
out["device"] = list(v.__dlpack_device__())
c = v.__dlpack__(dl_device=(1, 0), stream=-1, max_version=(1, 3))
t = tensor(c)
out["to_host"] = t
out["to_host_values"] = values(t)
out["to_host_is_new"] = t["data"] != v.ptr
out["numpy"] = np.from_dlpack(v, device="cpu").tolist()
out["copy_false"] = error(lambda: v.__dlpack__(dl_device=(1, 0), copy=False, stream=-1))
out["same"] = tensor(v.__dlpack__(stream=-1, max_version=(1, 0)))
out["same"]["is_view"] = out["same"]["data"] == v.ptr
big_buf, big = filled(DeviceMemoryResource(0), 1 << 21)  # 8 MiB: one cuMemcpyAsync
allocs = calls("cuMemAllocFromPoolAsync")
try:
    c = big.__dlpack__(copy=True, stream=0x5678, max_version=(1, 0))
    t = tensor(c)
    out["on_device"] = t
    out["on_device_is_new"] = t["data"] != big.ptr
    out["on_device_stream"] = last_stream("cuMemcpyAsync")
    out["on_device_allocs"] = calls("cuMemAllocFromPoolAsync") - allocs
    out["on_device_head"] = values(t, 4)
except BufferError as e:  # a build without the CUDA kernels
    out["on_device"] = str(e)
out["elsewhere"] = error(lambda: v.__dlpack__(dl_device=(2, 1), stream=-1))

pbuf, p = filled(PinnedMemoryResource())
out["pinned"] = tensor(p.__dlpack__(dl_device=(1, 0), copy=False, max_version=(1, 0)))
out["pinned"]["is_view"] = out["pinned"]["data"] == p.ptr
mbuf, m = filled(ManagedMemoryResource(0))
managed_allocs = calls("cuMemAllocManaged")
c = m.__dlpack__(copy=True, max_version=(1, 0))
t = tensor(c)
out["managed_copy"] = t
out["managed_copy_values"] = values(t)
out["managed_allocs"] = calls("cuMemAllocManaged") - managed_allocs
""")


@needs_fake
def test_device_memory_to_the_cpu_is_a_host_copy(fake_device):
    assert fake_device["device"] == [kDLCUDA, 0]
    t = fake_device["to_host"]
    assert t["device"] == [kDLCPU, 0] and t["flags"] == IS_COPIED
    assert fake_device["to_host_is_new"]
    assert fake_device["to_host_values"] == list(range(12))
    assert fake_device["numpy"] == np.arange(12.0).reshape(3, 4).tolist()
    assert fake_device["copy_false"] == [
        "BufferError", "copy=False, but exporting a view of device memory on (2, 0) to the CPU "
                       "(1, 0) needs a copy"]
    assert fake_device["same"]["device"] == [kDLCUDA, 0] and fake_device["same"]["is_view"]
    assert fake_device["elsewhere"][0] == "BufferError"
    assert fake_device["elsewhere"][1].startswith("dl_device (2, 1) is not supported")


@needs_fake
def test_device_memory_copied_on_its_device(fake_device):
    t = fake_device["on_device"]
    if isinstance(t, str):
        assert "without its CUDA kernels" in t
        return
    assert t["device"] == [kDLCUDA, 0] and t["flags"] == IS_COPIED
    assert fake_device["on_device_is_new"]
    assert fake_device["on_device_allocs"] == 1
    assert fake_device["on_device_stream"] == 0x5678
    assert fake_device["on_device_head"] == [0.0, 1.0, 2.0, 3.0]


@needs_fake
def test_pinned_and_managed_memory(fake_device):
    p = fake_device["pinned"]
    assert p["device"] == [kDLCPU, 0] and p["is_view"] and p["flags"] == 0
    m = fake_device["managed_copy"]
    assert m["device"] == [kDLCUDAManaged, 0] and m["flags"] == IS_COPIED
    assert fake_device["managed_allocs"] == 1
    assert fake_device["managed_copy_values"] == list(range(12))


@needs_fake
def test_allocator_of_device_memory():
    out = run_fake(FAKE_PRELUDE + """
API = StridedMemoryView.__dlpack_c_exchange_api__
table = (ctypes.c_void_p * 7).from_address(
    ctypes.pythonapi.PyCapsule_GetPointer(API, b"dlpack_exchange_api"))
SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                         ctypes.c_void_p, SET_ERROR)
allocate = ctypes.cast(table[2], ALLOC)
told = []
set_error = SET_ERROR(lambda ctx, kind, message: told.append([kind.decode(), message.decode()]))
shape = (ctypes.c_int64 * 1)(16)


def proto(device_type, device_id):
    # DLTensor: data, device (2 x int32), ndim, dtype (code, bits, lanes), shape, strides.
    raw = (ctypes.c_uint8 * 48)()
    ctypes.c_int32.from_buffer(raw, 8).value = device_type
    ctypes.c_int32.from_buffer(raw, 12).value = device_id
    ctypes.c_int32.from_buffer(raw, 16).value = 1
    ctypes.c_uint8.from_buffer(raw, 20).value = 2
    ctypes.c_uint8.from_buffer(raw, 21).value = 32
    ctypes.c_uint16.from_buffer(raw, 22).value = 1
    ctypes.c_void_p.from_buffer(raw, 24).value = ctypes.addressof(shape)
    return raw


for name, device, entry in (("device", (2, 1), "cuMemAllocFromPoolAsync"),
                            ("pinned", (3, 0), "cuMemHostAlloc"),
                            ("managed", (13, 0), "cuMemAllocManaged")):
    before = calls(entry)
    m = ctypes.c_void_p()
    p = proto(*device)
    rc = allocate(ctypes.addressof(p), ctypes.byref(m), None, set_error)
    assert rc == 0, told
    device_of = (ctypes.c_int32 * 2).from_address(m.value + 40)
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        ctypes.c_void_p.from_address(m.value + 16).value)
    out[name] = [rc, list(device_of), calls(entry) - before]
    deleter(m.value)
p = proto(2, 7)
out["missing"] = [allocate(ctypes.addressof(p), ctypes.byref(ctypes.c_void_p()), None,
                           set_error), told[-1][0]]
""")
    assert out["device"] == [0, [kDLCUDA, 1], 1]
    assert out["pinned"] == [0, [kDLCUDAHost, 0], 1]
    assert out["managed"] == [0, [kDLCUDAManaged, 0], 1]
    assert out["missing"] == [-1, "BufferError"]
