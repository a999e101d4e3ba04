"""A DLPack producer of sub-byte tensors for the tests (test_subbyte.py,
test_subbyte_gpu.py) and bench/bench_subbyte.py: a managed tensor, versioned
or legacy, of any dtype (code, bits, lanes), shape, strides and flags over
the bytes of a NumPy array the test owns or of device memory, written from
the DLPack specification with ctypes; and Memory, bytes on the host or on
device 0 with packed and padded views of them. It needs no ml_dtypes until
a padded view is asked for."""

import ctypes

import numpy as np

import strided
from strided import StridedMemoryView


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                  ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))

# Producers by the address of their struct; a producer stays alive until its
# deleter has run (a real producer's manager_ctx keeps its memory so).
_live = {}


@DELETER
def _deleter(address):
    _live.pop(address).deleted += 1


class Producer:
    """A DLPack producer of one tensor of dtype (code, bits, lanes) over the
    bytes of mem (a NumPy array, or the address of memory on device), element
    (0,...,0) at byte `at`."""

    def __init__(self, mem, dtype, shape, strides, at=0, flags=0, versioned=True,
                 device=(1, 0)):
        self.mem = mem
        self.device = device
        self.versioned = versioned
        self.struct = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        n = max(len(shape), 1)
        self.shape = (ctypes.c_int64 * n)(*shape)
        self.strides = (ctypes.c_int64 * n)(*strides)
        t = self.struct.dl_tensor
        t.data = mem if isinstance(mem, int) else mem.ctypes.data
        t.byte_offset = at
        t.device = DLDevice(*device)
        t.ndim = len(shape)
        t.dtype = DLDataType(*dtype)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        self.struct.deleter = _deleter
        if versioned:
            self.struct.major, self.struct.minor = 1, 3
            self.struct.flags = flags
        self.deleted = 0

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        address = ctypes.addressof(self.struct)
        _live[address] = self
        return PyCapsule_New(address, b"dltensor_versioned" if self.versioned else b"dltensor",
                             None)


def import_packed(mem, dtype, shape, strides, at=0, stream_ptr=-1, **kw):
    """StridedMemoryView.from_dlpack of a Producer of these arguments."""
    return StridedMemoryView.from_dlpack(Producer(mem, dtype, shape, strides, at, **kw),
                                         stream_ptr=stream_ptr)


class Memory:
    """n bytes on device 0 (from strided.DeviceMemoryResource), or on the
    host (a NumPy array): their bytes in and out through a byte view, and
    packed (by this producer) and padded (ml_dtypes' types) views of them.
    Copies go on stream (the legacy default stream)."""

    def __init__(self, n, host=False, stream=1):
        self.n, self.host, self.stream = n, host, stream
        if host:
            self.array = np.zeros(n, np.uint8)
            self.raw = StridedMemoryView.from_array_interface(self.array)
            self.address, self.device = self.array.ctypes.data, (1, 0)
        else:
            self.buffer = strided.DeviceMemoryResource(0).allocate(n, stream=stream)
            self.raw = StridedMemoryView.from_buffer(self.buffer, (n,), dtype=np.uint8)
            self.address, self.device = int(self.buffer.handle), (2, 0)

    def put(self, data):
        self.raw.copy_from(StridedMemoryView.from_array_interface(np.ascontiguousarray(data)),
                           stream=self.stream)

    def get(self):
        out = np.empty(self.n, np.uint8)
        StridedMemoryView.from_array_interface(out).copy_from(self.raw, stream=self.stream)
        return out

    def packed(self, dtype, shape, strides):
        return import_packed(self.address, dtype, shape, strides, device=self.device,
                             stream_ptr=-1 if self.host else self.stream)

    def padded(self, name, shape):
        import ml_dtypes

        v = self.raw.view(dtype=np.dtype(getattr(ml_dtypes, name)))
        return v.view(v.layout.reshaped(shape))
