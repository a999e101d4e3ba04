"""A DLPack C exchange API producer written with ctypes, for the tests of
strided's consumer side (python/view_import.c): Producer(array) objects
whose type carries __dlpack_c_exchange_api__, a table whose functions
describe the NumPy array they hold (through NumPy's own DLPack export) and
count their calls. Their __dlpack__ raises: an import that calls it did not
take the exchange route."""

import ctypes
from ctypes import CFUNCTYPE, POINTER, Structure, c_int, c_int32, c_int64, c_uint8, c_uint16
from ctypes import c_uint32, c_uint64, c_void_p, py_object

import numpy as np


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


class Header(Structure):
    pass


Header._fields_ = [("version", DLPackVersion), ("prev_api", POINTER(Header))]

FROM_PY = CFUNCTYPE(c_int, py_object, POINTER(POINTER(DLManagedTensorVersioned)))
DLTENSOR_FROM_PY = CFUNCTYPE(c_int, py_object, POINTER(DLTensor))
CURRENT_STREAM = CFUNCTYPE(c_int, c_int32, c_int32, POINTER(c_void_p))


class ExchangeAPI(Structure):
    _fields_ = [("header", Header), ("managed_tensor_allocator", c_void_p),
                ("managed_tensor_from_py_object_no_sync", FROM_PY),
                ("managed_tensor_to_py_object_no_sync", c_void_p),
                ("dltensor_from_py_object_no_sync", DLTENSOR_FROM_PY),
                ("current_work_stream", CURRENT_STREAM)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = py_object
_capsule_new.argtypes = [c_void_p, ctypes.c_char_p, c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = c_void_p
_capsule_pointer.argtypes = [py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.argtypes = [py_object, ctypes.c_char_p]

CALLS = {"managed": 0, "dltensor": 0, "stream": 0}


def _managed(obj, out):
    CALLS["managed"] += 1
    if obj.fail:
        return -1  # without an exception (ctypes cannot leave one set)
    if obj.give_none:
        out[0] = None
        return 0
    capsule = obj.array.__dlpack__(max_version=(1, 3))
    ptr = _capsule_pointer(capsule, b"dltensor_versioned")
    # Taken: NumPy's capsule no longer deletes it; the importer does.
    _capsule_rename(capsule, b"used_dltensor_versioned")
    m = ctypes.cast(ptr, POINTER(DLManagedTensorVersioned))
    if obj.major is not None:
        m.contents.version.major = obj.major
    if obj.device is not None:  # another device's memory, at obj.data
        m.contents.dl_tensor.device.device_type, m.contents.dl_tensor.device.device_id = obj.device
        m.contents.dl_tensor.data = obj.data
    out[0] = m
    return 0


def _dltensor(obj, out):
    CALLS["dltensor"] += 1
    if obj.fail:
        return -1
    # NumPy's tensor, kept by the object while it may be read.
    obj.kept = obj.array.__dlpack__(max_version=(1, 3))
    ptr = _capsule_pointer(obj.kept, b"dltensor_versioned")
    m = ctypes.cast(ptr, POINTER(DLManagedTensorVersioned)).contents
    ctypes.memmove(ctypes.addressof(out.contents), ctypes.addressof(m.dl_tensor),
                   ctypes.sizeof(DLTensor))
    return 0


WORK_STREAM = [None]  # what current_work_stream reports (a handle, or None)


def _stream(device_type, device_id, out):
    CALLS["stream"] += 1
    out[0] = WORK_STREAM[0]
    return 0


_keep = [FROM_PY(_managed), DLTENSOR_FROM_PY(_dltensor), CURRENT_STREAM(_stream)]


def exchange_capsule(minor=3, major=1, with_dltensor=True, prev=None):
    """A capsule of a table of DLPack version (major, minor) whose
    prev_api is the table of capsule prev."""
    api = ExchangeAPI()
    api.header.version.major, api.header.version.minor = major, minor
    if prev is not None:
        api.header.prev_api = ctypes.cast(_capsule_pointer(prev, b"dlpack_exchange_api"),
                                          POINTER(Header))
    api.managed_tensor_from_py_object_no_sync = _keep[0]
    if with_dltensor:
        api.dltensor_from_py_object_no_sync = _keep[1]
    api.current_work_stream = _keep[2]
    _keep.append(api)
    return _capsule_new(ctypes.addressof(api), b"dlpack_exchange_api", None)


class Producer:
    """A NumPy array behind the exchange API only."""

    __dlpack_c_exchange_api__ = exchange_capsule()

    def __init__(self, array, fail=False, give_none=False, major=None, device=None, data=None):
        self.array, self.fail, self.give_none, self.major = array, fail, give_none, major
        self.device, self.data = device, data

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        raise AssertionError("__dlpack__ called: the exchange API was not used")


class ByProtocol:
    """The same array by the Python protocol only (or, in a subclass given
    a table, by both)."""

    fail = give_none = False
    major = device = data = None

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)


def facts(v):
    return (v.ptr, v.shape, v.strides, str(v.dtype), v.readonly, v.device_id,
            v.is_device_accessible, v.size)


__all__ = ["ByProtocol", "CALLS", "Producer", "WORK_STREAM", "exchange_capsule", "facts", "np"]
