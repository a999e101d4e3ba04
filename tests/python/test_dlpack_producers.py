"""DLPack import from malformed producers: every field of a managed tensor
that can be wrong (version, ndim, shape, strides, extents and the offsets
they make, dtype, device, data, byte_offset) and the capsule's name, against
the rules of strided_view_import_dlpack (include/strided/view.h) and
DLPack's capsule protocol.

A test-only producer, written with ctypes, hands StridedMemoryView.from_dlpack a
managed tensor over memory the test owns, with one bad field per case. Every case
checks the error (type, and a message that names the field and its value), that the
capsule was marked consumed where the tensor reached the library, that the
producer's deleter ran exactly once (by the time from_dlpack raised, or once the
view and everything derived from it are gone) and that the producer object's
reference count is back to where it started."""

import ctypes
import gc
import sys
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

from strided import MAX_NDIM, StridedMemoryView

kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLCUDAManaged = 1, 2, 3, 10, 13
READ_ONLY, IS_COPIED = 1 << 0, 1 << 1
UINT64_MAX = 2**64 - 1
VERSIONED, LEGACY = b"dltensor_versioned", b"dltensor"
USED = {VERSIONED: b"used_dltensor_versioned", LEGACY: b"used_dltensor"}


# The DLPack 1.x ABI (dlpack.h), written out from the DLPack specification


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# Both deleters take the managed tensor's own address; void * keeps one type.
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


def test_struct_layout_is_lp64_dlpack():
    """The harness is only as good as its structs: sizes and offsets of LP64."""
    assert ctypes.sizeof(ctypes.c_void_p) == 8
    assert (ctypes.sizeof(DLDevice), ctypes.sizeof(DLDataType)) == (8, 4)
    assert ctypes.sizeof(DLTensor) == 48
    assert [getattr(DLTensor, f).offset for f in
            ("data", "device", "ndim", "dtype", "shape", "strides", "byte_offset")] == \
        [0, 8, 16, 20, 24, 32, 40]
    assert ctypes.sizeof(DLManagedTensor) == 64
    assert (DLManagedTensor.manager_ctx.offset, DLManagedTensor.deleter.offset) == (48, 56)
    assert ctypes.sizeof(DLPackVersion) == 8
    assert ctypes.sizeof(DLManagedTensorVersioned) == 80
    assert [getattr(DLManagedTensorVersioned, f).offset for f in
            ("version", "manager_ctx", "deleter", "flags", "dl_tensor")] == [0, 8, 16, 24, 32]


# Capsules

# The capsule destructor receives the dying capsule: as a raw address, so that
# ctypes does not touch the reference count of an object being deallocated.
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _capi(name, restype, *argtypes):
    """A C-API function with its own prototype (ctypes.pythonapi's shared
    function objects are left as they are for other users)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


PyCapsule_New = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                      DESTRUCTOR)
PyCapsule_SetContext = _capi("PyCapsule_SetContext", ctypes.c_int, ctypes.py_object,
                             ctypes.c_void_p)
PyCapsule_GetName = _capi("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
# These run in the destructor: the capsule by address.
PyCapsule_GetContext = _capi("PyCapsule_GetContext", ctypes.c_void_p, ctypes.c_void_p)
PyCapsule_IsValid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
PyCapsule_GetPointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_char_p)

# Every live tensor by token (its manager_ctx and its capsule's context) and
# by address. A tensor in a capsule stays alive until its deleter runs, as
# manager_ctx keeps a real producer's memory: the consumer need not keep the
# producer object alive that long. Calls the harness cannot attribute to a
# live, intact tensor are recorded as stray and fail the test.
_tensors = weakref.WeakValueDictionary()
_by_address = weakref.WeakValueDictionary()
_undeleted = {}
_next_token = [1]
_stray = []


@DELETER
def _deleter(address):
    tensor = _by_address.get(address)
    if tensor is None or tensor.struct.manager_ctx != tensor.token:
        _stray.append(("deleter", address))
        return
    tensor.deleter_calls += 1
    _undeleted.pop(tensor.token, None)


@DESTRUCTOR
def _capsule_destructor(capsule):
    """What real producers do: delete the tensor only if the capsule still has
    the name it was made with, that is, nobody consumed it."""
    tensor = _tensors.get(PyCapsule_GetContext(capsule))
    if tensor is None:
        _stray.append(("destructor", capsule))
        return
    tensor.destructor_calls += 1
    if PyCapsule_IsValid(capsule, tensor.capsule_name):
        managed = PyCapsule_GetPointer(capsule, tensor.capsule_name)
        tensor.struct.deleter(managed)


@pytest.fixture(autouse=True)
def no_stray_calls():
    del _stray[:]
    yield
    gc.collect()
    assert _stray == []


def capsule_name(capsule):
    return PyCapsule_GetName(capsule)


# The producer

FROM_ARRAY = object()


def dl_dtype(dtype):
    dtype = np.dtype(dtype)
    code = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}[dtype.kind]
    return (code, dtype.itemsize * 8, 1)


class Tensor:
    """One managed tensor over memory the test owns (a NumPy array), with one
    field or another set to anything at all. FROM_ARRAY takes the field from
    the array; None makes shape, strides or data NULL. The struct, the shape and
    strides arrays and the memory live as long as this object."""

    def __init__(self, array=None, *, versioned=True, version=(1, 3), flags=0,
                 ndim=None, shape=FROM_ARRAY, strides=FROM_ARRAY, dtype=FROM_ARRAY,
                 device=(kDLCPU, 0), data=FROM_ARRAY, byte_offset=0):
        self.array = np.arange(6, dtype=np.int32).reshape(2, 3) if array is None else array
        a = self.array
        shape = a.shape if shape is FROM_ARRAY else shape
        strides = tuple(s // a.itemsize for s in a.strides) if strides is FROM_ARRAY else strides
        dtype = dl_dtype(a.dtype) if dtype is FROM_ARRAY else dtype
        data = a.ctypes.data if data is FROM_ARRAY else data
        ndim = len(shape) if ndim is None else ndim
        self.versioned = versioned
        self.struct = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        self.address = ctypes.addressof(self.struct)
        self.token = _next_token[0]
        _next_token[0] += 1
        _tensors[self.token] = self
        _by_address[self.address] = self
        self.deleter_calls = 0
        self.destructor_calls = 0
        self.capsule_name = None

        self.shape = None if shape is None else (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides = (None if strides is None
                        else (ctypes.c_int64 * max(len(strides), 1))(*strides))
        t = self.struct.dl_tensor
        t.data = data or None
        t.device = DLDevice(*device)
        t.ndim = ndim
        t.dtype = DLDataType(*dtype)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.struct.manager_ctx = self.token
        self.struct.deleter = _deleter
        if versioned:
            self.struct.version = DLPackVersion(*version)
            self.struct.flags = flags

    def capsule(self, name=None):
        """The capsule that carries this tensor (made once), named name or the
        name of the struct's kind."""
        assert self.capsule_name is None, "a tensor goes into one capsule only"
        self.capsule_name = (VERSIONED if self.versioned else LEGACY) if name is None else name
        capsule = PyCapsule_New(self.address, self.capsule_name, _capsule_destructor)
        _undeleted[self.token] = self
        assert PyCapsule_SetContext(capsule, self.token) == 0
        return capsule


class Producer:
    """A DLPack producer of one tensor. It keeps the capsule it handed out:
    the test reads its name afterwards, then drops it. Holding it also means
    that an unconsumed capsule never dies inside from_dlpack while an error is
    pending there, which the Python destructor above could not run under (any
    C call it makes would raise that error)."""

    def __init__(self, tensor, device=None, capsule_name=None):
        self.tensor = tensor
        self.device = (tensor.struct.dl_tensor.device.device_type,
                       tensor.struct.dl_tensor.device.device_id) if device is None else device
        self.capsule_name = capsule_name
        self.calls = []
        self.capsule = None

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append((stream, max_version))
        self.capsule = self.tensor.capsule(self.capsule_name)
        return self.capsule

    def drop_capsule(self):
        """Let go of the capsule (the library holds none): an unconsumed one
        deletes its tensor now (a capsule is in no cycle)."""
        self.capsule = None


def from_dlpack(obj):
    return StridedMemoryView.from_dlpack(obj, stream_ptr=-1)


def check_rejected(producer, error, match):
    """from_dlpack(producer) raises error matching match; the tensor reached
    the library, which consumed the capsule and deleted the tensor once,
    before returning; nothing of the producer is kept."""
    tensor = producer.tensor
    baseline = sys.getrefcount(producer)
    with pytest.raises(error, match=match):
        from_dlpack(producer)
    assert len(producer.calls) == 1
    assert capsule_name(producer.capsule) == USED[tensor.capsule_name]
    assert tensor.deleter_calls == 1
    producer.drop_capsule()
    assert tensor.deleter_calls == 1
    assert sys.getrefcount(producer) == baseline


# The harness itself


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_harness_unconsumed_capsule_deletes_once(versioned):
    """A capsule nobody consumes deletes its tensor when it goes, once: the
    destructor below is the one the consumed cases rely on not to run."""
    tensor = Tensor(versioned=versioned)
    capsule = tensor.capsule()
    assert capsule_name(capsule) == (VERSIONED if versioned else LEGACY)
    assert tensor.deleter_calls == 0
    del capsule
    gc.collect()
    assert (tensor.destructor_calls, tensor.deleter_calls) == (1, 1)


# Rejected tensors: every malformed field


def row(fields, match, name, kinds=("versioned", "legacy")):
    """One malformed tensor as a case per kind of tensor (versioned, legacy)
    it applies to."""
    return [pytest.param(dict(fields, versioned=kind == "versioned"), match, id=f"{name}-{kind}")
            for kind in kinds]


V = ("versioned",)
L = ("legacy",)
FAKE_HIGH = 2**64 - 16  # never dereferenced: rejected before anything reads it
DEVICE_TYPES = r"\(only CPU, CUDA, CUDA host and CUDA managed\)"

REJECTED = [case for cases in [
    # A major version other than 1: the deleter runs and no other field may be read.
    row(dict(version=(2, 0)),
        r"^Unsupported DLPack major version: 2 \(only 1 is supported\)$",
        "major-version-2", V),
    row(dict(version=(0, 8)),
        r"^Unsupported DLPack major version: 0 \(only 1 is supported\)$",
        "major-version-0", V),
    row(dict(version=(2**32 - 1, 0)),
        r"^Unsupported DLPack major version: 4294967295 \(only 1 is supported\)$",
        "major-version-UINT32_MAX", V),
    row(dict(version=(2, 0), ndim=-7, shape=None, data=None, dtype=(99, 3, 0)),
        r"^Unsupported DLPack major version: 2 \(only 1 is supported\)$",
        "major-version-2-reads-no-other-field", V),
    # ndim outside 0..64.
    row(dict(ndim=-1), r"^dl_tensor\.ndim is -1, outside 0\.\.64$", "ndim-negative"),
    row(dict(ndim=-2**31), r"^dl_tensor\.ndim is -2147483648, outside 0\.\.64$",
        "ndim-INT32_MIN"),
    row(dict(array=np.zeros(1, np.int8), shape=(1,) * 65, strides=(1,) * 65),
        r"^dl_tensor\.ndim is 65, outside 0\.\.64$", "ndim-65"),
    # NULL shape with ndim > 0; NULL strides from DLPack 1.2 on (before, C order).
    row(dict(shape=None, ndim=2), r"^dl_tensor\.shape is NULL with ndim 2$", "shape-null"),
    row(dict(strides=None, version=(1, 2)),
        r"^dl_tensor\.strides is NULL with ndim 2; DLPack 1\.2 and later require explicit "
        r"strides$", "strides-null-v1.2", V),
    row(dict(strides=None, version=(1, 3)),
        r"^dl_tensor\.strides is NULL with ndim 2; DLPack 1\.2 and later require explicit "
        r"strides$", "strides-null-v1.3", V),
    # Negative extents.
    row(dict(shape=(2, -3), strides=(3, 1)),
        r"^dl_tensor\.shape\[1\] is -3; extents must be non-negative$", "extent-negative"),
    row(dict(shape=(0, -(2**63)), strides=(1, 1)),
        r"^dl_tensor\.shape\[1\] is -9223372036854775808; extents must be non-negative$",
        "extent-INT64_MIN-after-zero"),
    # Packed sub-byte types whose (2,3):(3,1) layout starts row 1 inside a byte;
    # bits that are not whole bytes and not a sub-byte type's, vector types, opaque
    # handles, unknown codes: rejected by name.
    row(dict(dtype=(0, 4, 1)),
        r"^element \(1,0\) of \(2,3\):\(3,1\), at element offset 3, starts inside a "
        r"byte: by the packed-layout rule every element of 4 bits starts on a byte boundary "
        r"\(an offset that is a multiple of 2\), except after the first along one axis of "
        r"stride 1$", "dtype-int4-split-byte"),
    row(dict(dtype=(17, 4, 1)), r"^element \(1,0\) of \(2,3\):\(3,1\).* multiple of 2\)",
        "dtype-float4_e2m1fn-split-byte"),
    row(dict(dtype=(15, 6, 1)), r"^element \(1,0\) of \(2,3\):\(3,1\).* multiple of 4\)",
        "dtype-float6_e2m3fn-split-byte"),
    row(dict(dtype=(17, 8, 1)),
        r"^float4_e2m1fn has 8 bits, DLPack gives it 4: padded or packed, an element is "
        r"declared with its own bits$", "dtype-float4_e2m1fn-8-bits"),
    row(dict(dtype=(0, 3, 1)),
        r"^dtype\(code=0, bits=3, lanes=1\) is not byte-addressable: bits must be a "
        r"multiple of 8$", "dtype-int3"),
    row(dict(dtype=(2, 0, 1)), r"^float0 is not supported$", "dtype-bits-0"),
    row(dict(dtype=(0, 24, 1)), r"^int24 is not supported$", "dtype-int24"),
    row(dict(dtype=(6, 16, 1)), r"^16-bit bool is not supported$", "dtype-bool16"),
    row(dict(dtype=(2, 32, 2)), r"^vector dtypes \(lanes=2\) are not supported$",
        "dtype-lanes-2"),
    row(dict(dtype=(2, 32, 0)), r"^vector dtypes \(lanes=0\) are not supported$",
        "dtype-lanes-0"),
    row(dict(dtype=(3, 64, 1)), r"^opaque handles \(dtype code 3, bits=64\) are not supported$",
        "dtype-opaque-handle"),
    row(dict(dtype=(99, 8, 1)), r"^unknown dtype code 99 \(bits=8, lanes=1\)$",
        "dtype-code-99"),
    # Device ids the tensor names that DLPack forbids (__dlpack_device__() says id 0).
    row(dict(device=(kDLCPU, 1), reported=(kDLCPU, 0)),
        r"^dl_tensor\.device\.device_id is 1; a CPU device must have id 0$",
        "tensor-cpu-device-id-1"),
    row(dict(device=(kDLCPU, -1), reported=(kDLCPU, 0)),
        r"^dl_tensor\.device\.device_id is -1; it must not be negative$",
        "tensor-cpu-device-id-negative"),
    row(dict(device=(kDLCUDAHost, -1), reported=(kDLCUDAHost, 0)),
        r"^dl_tensor\.device\.device_id is -1; it must not be negative$",
        "tensor-cuda-host-device-id-negative"),
    # NULL data with elements.
    row(dict(data=None),
        r"^dl_tensor\.data is NULL for a tensor of shape \(2,3\), which has elements$",
        "data-null-volume-6"),
    # byte_offset above INT64_MAX, past the address space or not a multiple of the
    # itemsize; overflow is checked before alignment.
    row(dict(byte_offset=2**63),
        r"^dl_tensor\.byte_offset 9223372036854775808 exceeds INT64_MAX$",
        "byte-offset-2**63"),
    row(dict(byte_offset=UINT64_MAX),
        r"^dl_tensor\.byte_offset 18446744073709551615 exceeds INT64_MAX$",
        "byte-offset-UINT64_MAX"),
    row(dict(data=FAKE_HIGH, byte_offset=32),
        r"^dl_tensor\.data 0xfffffffffffffff0 \+ byte_offset 32 overflows the address space$",
        "data-plus-byte-offset-overflows"),
    row(dict(data=FAKE_HIGH, byte_offset=33),
        r"^dl_tensor\.data 0xfffffffffffffff0 \+ byte_offset 33 overflows the address space$",
        "overflow-reported-before-misalignment"),
    row(dict(byte_offset=2), r"^dl_tensor\.byte_offset 2 is not a multiple of the itemsize 4$",
        "byte-offset-misaligned"),
    # Extent products that overflow int64, also past a zero extent.
    row(dict(shape=(2**32, 2**32), strides=(1, 1)),
        r"^the volume of shape \(4294967296,4294967296\) overflows int64$",
        "volume-overflows"),
    row(dict(shape=(0, 2**32, 2**32), strides=(1, 1, 1), data=None),
        r"^the volume of shape \(0,4294967296,4294967296\) overflows int64$",
        "volume-overflows-past-zero-extent"),
    row(dict(shape=(2**32, 2**32), strides=None),
        r"^the volume of shape \(4294967296,4294967296\) overflows int64$",
        "volume-overflows-implicit-strides", L),
    # Element offsets, byte offsets and addresses that overflow.
    row(dict(shape=(3,), strides=(2**62,)),
        r"^the element offsets of \(3,\):\(4611686018427387904,\) overflow int64$",
        "stride-times-extent-overflows"),
    row(dict(shape=(2, 2), strides=(2**62, 2**62)),
        r"^the element offsets of \(2,2\):\(4611686018427387904,4611686018427387904\) "
        r"overflow int64$", "sum-of-spans-overflows"),
    row(dict(array=np.zeros(2, np.int64), shape=(2,), strides=(2**62,)),
        r"^stride 4611686018427387904 of axis 0 times itemsize 8 overflows int64 in "
        r"\(2,\):\(4611686018427387904,\)$",
        "offset-times-itemsize-overflows"),
    row(dict(array=np.zeros(3, np.uint8), shape=(3,), strides=(-(2**62),)),
        r"^the byte offsets of \(3,\):\(-4611686018427387904,\) with itemsize 1 overflow "
        r"int64$",
        "lowest-byte-offset-INT64_MIN"),
    row(dict(array=np.zeros(2, np.uint8), shape=(2,), strides=(-(2**60),)),
        r"^the elements, bytes \[-1152921504606846976, 1\) from element \(0,\.\.\.,0\) at "
        r"0x[0-9a-f]+, leave the address space$", "elements-below-address-0"),
    row(dict(array=np.zeros(2, np.uint8), shape=(2,), strides=(2**40,), data=2**64 - 2**20),
        r"^the elements, bytes \[0, 1099511627777\) from element \(0,\.\.\.,0\) at "
        r"0xfffffffffff00000, leave the address space$", "elements-above-address-max"),
] for case in cases]


@pytest.mark.parametrize("fields, match", REJECTED)
def test_malformed_tensor_rejected(fields, match):
    fields = dict(fields)
    reported = fields.pop("reported", None)
    producer = Producer(Tensor(**fields), device=reported)
    check_rejected(producer, BufferError, match)


# Devices: what __dlpack_device__() says, and whether the tensor agrees


@pytest.mark.parametrize("device_type", [0, kDLROCM, 11, 14, 18, -1],
                         ids=lambda t: f"dlpack-device-type-{t}")
def test_unsupported_dlpack_device_rejected_before_export(device_type):
    """An unsupported device type from __dlpack_device__() ends the import
    before __dlpack__ is called, so no tensor is ever handed out."""
    producer = Producer(Tensor(), device=(device_type, 0))
    baseline = sys.getrefcount(producer)
    with pytest.raises(BufferError, match=r"^device not supported$"):
        from_dlpack(producer)
    assert producer.calls == []
    assert producer.capsule is None
    assert producer.tensor.deleter_calls == 0
    assert sys.getrefcount(producer) == baseline


@pytest.mark.parametrize("device, message", [
    pytest.param(["a"], r"^__dlpack_device__\(\) must return a \(device_type, device_id\) "
                 r"tuple, got \['a'\]$", id="list"),
    pytest.param((kDLCPU,), r"^__dlpack_device__\(\) must return a \(device_type, device_id\) "
                 r"tuple, got \(1,\)$", id="1-tuple"),
])
def test_malformed_dlpack_device_rejected_before_export(device, message):
    producer = Producer(Tensor(), device=device)
    with pytest.raises(TypeError, match=message):
        from_dlpack(producer)
    assert producer.calls == []
    assert producer.tensor.deleter_calls == 0


@pytest.mark.parametrize("device_type", [kDLROCM, 14],
                         ids=lambda t: f"cpu-reported-tensor-device-type-{t}")
def test_tensor_on_unsupported_device_rejected(device_type):
    """__dlpack_device__() says CPU, the tensor itself names a device
    libstrided does not support: the tensor's field is checked too."""
    producer = Producer(Tensor(device=(device_type, 0)), device=(kDLCPU, 0))
    check_rejected(producer, BufferError,
                   rf"^dl_tensor\.device\.device_type {device_type} is not supported "
                   rf"{DEVICE_TYPES}$")


def check_rejected_anywhere(producer, errors):
    """from_dlpack(producer) raises one of errors, either before the export
    (then no tensor was handed out) or after it (then the capsule was
    consumed and the tensor deleted once); returns the error's type and
    message (not the error: its traceback holds the producer)."""
    baseline = sys.getrefcount(producer)
    with pytest.raises(errors) as info:
        from_dlpack(producer)
    error = (info.type, str(info.value))
    del info
    if producer.calls:
        assert capsule_name(producer.capsule) == USED[producer.tensor.capsule_name]
        assert producer.tensor.deleter_calls == 1
    else:
        assert producer.tensor.deleter_calls == 0
    producer.drop_capsule()
    assert producer.tensor.deleter_calls == (1 if producer.calls else 0)
    assert sys.getrefcount(producer) == baseline
    return error


@pytest.mark.parametrize("reported, actual", [
    pytest.param((kDLCPU, 0), (kDLCUDA, 0), id="reported-cpu-tensor-cuda"),
    pytest.param((kDLCPU, 0), (kDLCUDAManaged, 0), id="reported-cpu-tensor-managed"),
    pytest.param((kDLCUDA, 0), (kDLCPU, 0), id="reported-cuda-tensor-cpu"),
    pytest.param((kDLCUDAHost, 0), (kDLCPU, 0), id="reported-cuda-host-tensor-cpu"),
    pytest.param((kDLCUDA, 1), (kDLCUDA, 0), id="reported-cuda-1-tensor-cuda-0"),
])
def test_device_mismatch_rejected(reported, actual):
    producer = Producer(Tensor(device=actual), device=reported)
    _, message = check_rejected_anywhere(producer, BufferError)
    assert "device" in message


@pytest.mark.parametrize("device", [
    pytest.param((kDLCPU, 1), id="cpu-device-id-1"),
    pytest.param((kDLCPU, -1), id="cpu-device-id-negative"),
])
def test_device_id_out_of_range_everywhere_rejected(device):
    """__dlpack_device__() and the tensor agree on an impossible device id:
    rejected, by the check of the one or of the other."""
    producer = Producer(Tensor(device=device))
    _, message = check_rejected_anywhere(producer, (AssertionError, BufferError))
    assert f"device id {device[1]}" in message or f"device_id is {device[1]}" in message


@pytest.mark.parametrize("reported, actual", [
    pytest.param((kDLCPU, 1), (kDLCPU, 0), id="dlpack-device-cpu-id-1"),
    pytest.param((kDLCUDA, -1), (kDLCUDA, 0), id="dlpack-device-cuda-id-negative"),
])
def test_dlpack_device_id_out_of_range_rejected(reported, actual):
    producer = Producer(Tensor(device=actual), device=reported)
    kind, message = check_rejected_anywhere(producer, (AssertionError, BufferError))
    assert kind is AssertionError or "device" in message


# Accepted tensors: the deleter runs once, when the last holder goes


def accept(producer):
    """from_dlpack(producer): the capsule is consumed and the tensor kept."""
    view = from_dlpack(producer)
    assert view.exporting_obj is producer
    assert capsule_name(producer.capsule) == USED[producer.tensor.capsule_name]
    producer.drop_capsule()
    assert producer.tensor.deleter_calls == 0
    return view


def refcount(producer):
    """The reference count as check_released sees it (one frame down)."""
    return sys.getrefcount(producer)


def check_released(producer, baseline):
    """Once every view is gone: deleted once, and the producer let go
    (baseline: refcount(producer) before the import)."""
    gc.collect()
    assert producer.tensor.deleter_calls == 1
    assert sys.getrefcount(producer) == baseline


@pytest.mark.parametrize("versioned, version", [
    pytest.param(True, (1, 0), id="strides-null-v1.0"),
    pytest.param(True, (1, 1), id="strides-null-v1.1"),
    pytest.param(False, None, id="strides-null-legacy"),
])
def test_null_strides_before_v1_2_mean_c_contiguous(versioned, version):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    producer = Producer(Tensor(a, versioned=versioned, version=version, strides=None))
    baseline = refcount(producer)
    view = accept(producer)
    assert (view.shape, view.strides, view.ptr) == ((2, 3, 4), None, a.ctypes.data)
    assert view.dtype == a.dtype
    b = np.from_dlpack(view)
    assert b.strides == a.strides
    np.testing.assert_array_equal(b, a)
    del b
    del view
    check_released(producer, baseline)


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_explicit_strides_honoured(versioned):
    base = np.arange(24, dtype=np.int16).reshape(4, 6)
    a = base[::-1, ::2].T  # transposed, gapped and negative
    producer = Producer(Tensor(a, versioned=versioned))
    baseline = refcount(producer)
    view = accept(producer)
    assert view.ptr == a.ctypes.data
    assert view.strides == tuple(s // 2 for s in a.strides)
    np.testing.assert_array_equal(np.from_dlpack(view), a)
    del view
    check_released(producer, baseline)


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_scalar_with_null_shape_and_strides_accepted(versioned):
    a = np.array(7.5)
    producer = Producer(Tensor(a, versioned=versioned, shape=None, strides=None, ndim=0))
    baseline = refcount(producer)
    view = accept(producer)
    assert (view.shape, view.size, view.ptr) == ((), 1, a.ctypes.data)
    assert np.from_dlpack(view)[()] == 7.5
    del view
    check_released(producer, baseline)


def test_ndim_64_accepted():
    a = np.zeros((1,) * MAX_NDIM, np.uint8)
    producer = Producer(Tensor(a))
    baseline = refcount(producer)
    view = accept(producer)
    assert view.shape == (1,) * 64
    del view
    check_released(producer, baseline)


@pytest.mark.parametrize("shape, strides", [
    pytest.param((2, 0), (0, 1), id="data-null-shape-2x0"),
    pytest.param((0,), None, id="data-null-shape-0-no-strides"),
    pytest.param((0, 2**40), (2**40, 1), id="data-null-huge-empty"),
])
@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_null_data_without_elements_accepted(shape, strides, versioned):
    producer = Producer(Tensor(versioned=versioned, version=(1, 1), shape=shape, strides=strides,
                               data=None))
    baseline = refcount(producer)
    view = accept(producer)
    assert (view.shape, view.size, view.ptr) == (shape, 0, 0)
    del view
    check_released(producer, baseline)


@pytest.mark.parametrize("offset, shape, strides, expect", [
    pytest.param(8, (3,), (2,), lambda a: a[2::2], id="byte-offset-8-gapped"),
    pytest.param(28, (8,), (-1,), lambda a: a[::-1], id="byte-offset-28-negative-stride"),
    pytest.param(16, (2, 2), (1, 2), lambda a: a[4:].reshape(2, 2).T, id="byte-offset-16-2d"),
    pytest.param(32, (0,), (1,), lambda a: a[8:], id="byte-offset-at-end-empty"),
])
@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_valid_byte_offset_honoured(offset, shape, strides, expect, versioned):
    """byte_offset is honoured: ptr is data + byte_offset, and the elements
    are read from there."""
    a = np.arange(8, dtype=np.int32)
    producer = Producer(Tensor(a, versioned=versioned, shape=shape, strides=strides,
                               byte_offset=offset))
    baseline = refcount(producer)
    view = accept(producer)
    assert view.ptr == a.ctypes.data + offset
    assert view.shape == shape
    np.testing.assert_array_equal(np.from_dlpack(view), expect(a))
    del view
    check_released(producer, baseline)


@pytest.mark.parametrize("versioned, flags, readonly", [
    pytest.param(True, READ_ONLY, True, id="versioned-read-only"),
    pytest.param(True, READ_ONLY | IS_COPIED, True, id="versioned-read-only-copied"),
    pytest.param(True, IS_COPIED, False, id="versioned-copied"),
    pytest.param(True, 0, False, id="versioned-no-flags"),
    pytest.param(False, 0, False, id="legacy"),
])
def test_readonly_flag(versioned, flags, readonly):
    producer = Producer(Tensor(versioned=versioned, flags=flags))
    baseline = refcount(producer)
    view = accept(producer)
    assert view.readonly is readonly
    assert np.from_dlpack(view).flags.writeable is not readonly
    del view
    check_released(producer, baseline)


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_deleter_waits_for_everything_derived(versioned):
    """The tensor outlives the view while a derived view, an exported NumPy
    array, an exported capsule or a re-import of the view still holds it."""
    producer = Producer(Tensor(versioned=versioned))
    baseline = refcount(producer)
    view = accept(producer)
    holders = [
        view.view(dtype=np.uint32),
        np.from_dlpack(view),
        view.__dlpack__(max_version=(1, 0)),
        view.__dlpack__(),
        StridedMemoryView.from_dlpack(view, stream_ptr=-1),
    ]
    del view
    while holders:
        gc.collect()
        assert producer.tensor.deleter_calls == 0
        holders.pop()
    check_released(producer, baseline)


@st.composite
def valid_tensors(draw):
    """A tensor over a NumPy array: random shape (extents 0, 1, n), element
    strides (negative and zero too), byte_offset to element (0,...,0) and
    slack before and after, so that every element lies inside the array."""
    itemsize = draw(st.sampled_from([1, 2, 4, 8]))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3, 5]), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(-7, 7), min_size=ndim, max_size=ndim)))
    empty = 0 in shape
    low = 0 if empty else sum(min(0, s * (n - 1)) for n, s in zip(shape, strides))
    high = 0 if empty else sum(max(0, s * (n - 1)) for n, s in zip(shape, strides))
    start = -low + draw(st.integers(0, 3))
    array = np.arange(start + high + 1 + draw(st.integers(0, 3)), dtype=f"u{itemsize}")
    versioned = draw(st.booleans())
    return dict(array=array, shape=shape, strides=strides, byte_offset=start * itemsize,
                versioned=versioned)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=valid_tensors())
def test_random_valid_tensor_matches_numpy(fields):
    """Oracle: NumPy's as_strided view of the same array from data +
    byte_offset; the deleter runs once, as soon as the view and the NumPy
    array exported from it go (no cycle keeps them)."""
    a, offset = fields["array"], fields["byte_offset"]
    producer = Producer(Tensor(**fields))
    view = accept(producer)
    assert view.ptr == a.ctypes.data + offset
    assert view.shape == fields["shape"]
    expect = as_strided(a[offset // a.itemsize:], fields["shape"],
                        tuple(s * a.itemsize for s in fields["strides"]))
    b = np.from_dlpack(view)
    np.testing.assert_array_equal(b, expect)
    if b.size > 0:
        assert [s for s, n in zip(b.strides, b.shape) if n > 1] == \
            [s for s, n in zip(expect.strides, expect.shape) if n > 1]
    del view, b
    assert producer.tensor.deleter_calls == 1


# Capsule protocol: names, non-capsules, failing and old producers


@pytest.mark.parametrize("name", [b"dltensor_v2", b"used_dltensor_versioned", b"used_dltensor",
                                  b""],
                         ids=lambda n: f"capsule-named-{n.decode() or 'empty'}")
def test_capsule_with_wrong_name_left_to_producer(name):
    """A capsule that is not an unconsumed DLPack capsule is not touched: not
    renamed and not deleted; its producer deletes the tensor, once."""
    producer = Producer(Tensor(), capsule_name=name)
    baseline = sys.getrefcount(producer)
    with pytest.raises(AssertionError, match=r'^__dlpack__\(\) returned PyCapsule, not an '
                                             r'unconsumed "dltensor" or "dltensor_versioned" '
                                             r'capsule$'):
        from_dlpack(producer)
    assert capsule_name(producer.capsule) == name
    assert producer.tensor.deleter_calls == 0
    producer.drop_capsule()
    assert producer.tensor.deleter_calls == 1
    assert sys.getrefcount(producer) == baseline


@pytest.mark.parametrize("result, type_name", [
    pytest.param(42, "int", id="int"),
    pytest.param(None, "NoneType", id="None"),
    pytest.param(b"dltensor_versioned", "bytes", id="bytes"),
])
def test_dlpack_returning_non_capsule(result, type_name):
    class NotCapsule(Producer):
        def __dlpack__(self, stream=None, max_version=None):
            self.calls.append((stream, max_version))
            return result

    producer = NotCapsule(Tensor())
    with pytest.raises(AssertionError, match=rf'^__dlpack__\(\) returned {type_name}, not an '
                                             r'unconsumed "dltensor" or "dltensor_versioned" '
                                             r'capsule$'):
        from_dlpack(producer)
    assert producer.calls == [(None, (1, 3))]


@pytest.mark.parametrize("error", [RuntimeError("producer failed"), BufferError("copy required")],
                         ids=["RuntimeError", "BufferError"])
def test_dlpack_raising_propagates(error):
    class Failing(Producer):
        def __dlpack__(self, stream=None, max_version=None):
            self.calls.append((stream, max_version))
            raise error

    producer = Failing(Tensor())
    with pytest.raises(type(error)) as info:
        from_dlpack(producer)
    assert info.value is error
    assert producer.calls == [(None, (1, 3))]
    assert producer.tensor.deleter_calls == 0


def test_dlpack_raising_type_error_twice_propagates_the_second():
    """A TypeError is taken for an old producer that does not know
    max_version: retried once without it, and the retry's error stands."""
    errors = [TypeError("first"), TypeError("second")]

    class Failing(Producer):
        def __dlpack__(self, **kwargs):
            self.calls.append(kwargs)
            raise errors[len(self.calls) - 1]

    producer = Failing(Tensor())
    with pytest.raises(TypeError) as info:
        from_dlpack(producer)
    assert info.value is errors[1]
    assert producer.calls == [{"stream": None, "max_version": (1, 3)}, {"stream": None}]


@pytest.mark.parametrize("style", ["no-parameter", "raises"])
def test_producer_rejecting_max_version_retried_without_it(style):
    """Old producers (no max_version, or a TypeError for it) get a second
    call without it and hand out a legacy capsule."""

    class OldSignature(Producer):
        def __dlpack__(self, stream=None):
            return super().__dlpack__(stream=stream)

    class Refusing(Producer):
        def __dlpack__(self, stream=None, max_version=None):
            if max_version is not None:
                self.calls.append(("refused", max_version))
                raise TypeError("max_version is not supported")
            return super().__dlpack__(stream=stream)

    cls = OldSignature if style == "no-parameter" else Refusing
    producer = cls(Tensor(versioned=False))
    baseline = refcount(producer)
    view = accept(producer)
    expected = [(None, None)] if style == "no-parameter" else [("refused", (1, 3)), (None, None)]
    assert producer.calls == expected
    assert view.readonly is False
    np.testing.assert_array_equal(np.from_dlpack(view), producer.tensor.array)
    del view
    check_released(producer, baseline)
