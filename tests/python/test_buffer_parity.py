"""strided.Buffer as a drop-in for cuda.core 1.2's Buffer (docs/memory.md):
fill, copy_to and copy_from, the DLPack export (__dlpack__,
__dlpack_device__), Buffer-like objects (a cuda.core Buffer) wherever a
Buffer is taken, and the other members (hash, equality, repr, the context
manager, construction). Values, orders of checks and messages are
cuda.core's; NumPy is the oracle for the bytes.

Host memory runs in this process (no CUDA driver is loaded here: host
memory is filled and copied by the host). The device paths run against the
fake CUDA driver of the C tests in fresh interpreters (test_view_fake_cuda's
run_fake), which record each cuMemsetD*Async, cuMemcpyAsync and
cuMemcpyPeerAsync with its arguments and, for memory the test owns, move
the bytes.
"""

import ctypes
import dataclasses
import gc
import re
import textwrap
import weakref

import numpy as np
import pytest

import strided
from strided import Buffer, HostMemoryResource, MemoryResource, StridedMemoryView
from test_buffer import CUDA
from test_view_fake_cuda import DEV0, DEV1, MANAGED, PINNED, needs_fake, run_fake

NONE_STREAM = ("stream is required and must not be None; pass device.default_stream explicitly "
               "to use the default stream.")
CLOSED = "^Buffer has been closed$"

# Memory a resource only claims a device reaches fails for want of a driver
# only where there is none.
needs_no_driver = pytest.mark.skipif(CUDA != "no-driver", reason="skipped: a CUDA driver is loaded")


def exact(text):
    return "^" + re.escape(text) + "$"


def over(a):
    """A Buffer over the bytes of array a (kept alive as its owner)."""
    return Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)


def host_bytes(buf):
    """The bytes of a host Buffer, as a copy."""
    return bytes((ctypes.c_uint8 * buf.size).from_address(buf.handle))


class ClaimsMR(MemoryResource):
    """A resource over NumPy memory that claims whatever it is told and
    records the streams allocate is given."""

    def __init__(self, host=True, device=False, managed=False, device_id=-1):
        self.arrays = {}
        self.streams = []
        self.claims = (host, device, managed, device_id)

    def allocate(self, size, stream=None):
        self.streams.append(stream)
        a = np.zeros(max(size, 1), np.uint8)
        self.arrays[a.ctypes.data] = a
        return Buffer.from_handle(a.ctypes.data, size, mr=self)

    def deallocate(self, ptr, size, *, stream):
        self.arrays.pop(ptr, None)

    is_host_accessible = property(lambda self: self.claims[0])
    is_device_accessible = property(lambda self: self.claims[1])
    is_managed = property(lambda self: self.claims[2])
    device_id = property(lambda self: self.claims[3])


class Stream:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


class LikeCoreBuffer:
    """What strided reads of a cuda.core Buffer: handle, size and the two
    accessibility properties (which raise once it is closed), is_closed."""

    def __init__(self, a, device=False):
        self.a = a
        self.device = device
        self.is_closed = False

    handle = property(lambda self: 0 if self.is_closed else self.a.ctypes.data)
    size = property(lambda self: 0 if self.is_closed else self.a.nbytes)

    @property
    def is_host_accessible(self):
        if self.is_closed:
            raise RuntimeError("Buffer has been closed")
        return not self.device

    @property
    def is_device_accessible(self):
        if self.is_closed:
            raise RuntimeError("Buffer has been closed")
        return self.device


# ---- fill ------------------------------------------------------------------------------


def pattern_of(value):
    """The pattern bytes cuda.core makes of value."""
    if isinstance(value, int):
        return bytes([value])
    return memoryview(value).tobytes()


FILL_VALUES = [
    0, 7, 255, True, False,
    b"\x01", b"\x01\x02", b"\x01\x02\x03\x04", bytearray(b"\xfe\xff"), memoryview(b"\x09"),
    np.uint8(5), np.int8(-1), np.uint16(258), np.int16(-2), np.int32(-1), np.uint32(0xDEADBEEF),
    np.float32(1.0), np.float16(-2.5),
    np.array([1, 2], np.uint16), np.array(7, np.uint8), np.arange(8, dtype=np.uint8)[::4],
    np.array([[1], [2]], np.int16),
]


@pytest.mark.parametrize("value", FILL_VALUES, ids=lambda v: f"{type(v).__name__}:{v!r}"[:40])
@pytest.mark.parametrize("size", [0, 4, 8, 60])
def test_fill_values(value, size):
    a = np.full(size, 0xA5, np.uint8)
    pattern = pattern_of(value)
    buf = over(a)
    assert buf.fill(value, stream=None) is None
    assert a.tobytes() == pattern * (size // len(pattern))


def test_fill_reads_the_native_endian_unsigned_integer():
    # The values cuda.core's parser gives, as the bytes the fill writes.
    cases = [(b"\x01\x02", 513), (b"\x01\x02\x03\x04", 0x04030201), (np.uint16(258), 258),
             (np.int32(-1), 0xFFFFFFFF), (np.float32(1.0), 0x3F800000), (np.int8(-1), 255),
             (np.array([1, 2], np.uint16), 0x00020001), (np.array(7, np.uint8), 7)]
    for value, expected in cases:
        n = len(pattern_of(value))
        a = np.zeros(4 * n, np.uint8)
        over(a).fill(value, stream=None)
        assert (a.view(f"=u{n}") == expected).all(), value


def test_fill_streams_are_taken_for_host_memory():
    a = np.zeros(8, np.uint8)
    buf = over(a)
    # Streams a real driver knows (the host waits for them on a GPU machine:
    # a made-up handle would be dereferenced there).
    for i, stream in enumerate([None, 0, 1, 2, Stream(0), Stream(2)]):
        buf.fill(i + 1, stream=stream)
        assert (a == i + 1).all()


def test_fill_allocated_host_memory():
    buf = HostMemoryResource().allocate(64)
    buf.fill(b"\xff\x00", stream=None)
    assert host_bytes(buf) == b"\xff\x00" * 32


@pytest.mark.parametrize("value, exc, message", [
    (256, OverflowError, "value too large to convert to uint8_t"),
    (2**70, OverflowError, "value too large to convert to uint8_t"),
    (-1, OverflowError, "can't convert negative value to uint8_t"),
    (-(2**70), OverflowError, "can't convert negative value to uint8_t"),
    (1.5, TypeError, "a bytes-like object is required, not 'float'"),
    ("x", TypeError, "a bytes-like object is required, not 'str'"),
    (None, TypeError, "a bytes-like object is required, not 'NoneType'"),
    ([1], TypeError, "a bytes-like object is required, not 'list'"),
    (b"", ValueError, "value must be 1, 2, or 4 bytes, got 0"),
    (b"abc", ValueError, "value must be 1, 2, or 4 bytes, got 3"),
    (np.int64(1), ValueError, "value must be 1, 2, or 4 bytes, got 8"),
    (np.float64(1), ValueError, "value must be 1, 2, or 4 bytes, got 8"),
    (np.zeros(3, np.uint8), ValueError, "value must be 1, 2, or 4 bytes, got 3"),
])
def test_fill_value_errors(value, exc, message):
    a = np.full(8, 0xA5, np.uint8)
    with pytest.raises(exc, match=exact(message)):
        over(a).fill(value, stream=None)
    assert (a == 0xA5).all()


@pytest.mark.parametrize("size, value, n", [(3, b"\x01\x02", 2), (3, b"\x01\x02\x03\x04", 4),
                                            (6, np.float32(0), 4), (1, np.uint16(1), 2)])
def test_fill_size_must_be_a_multiple_of_the_pattern(size, value, n):
    a = np.full(size, 0xA5, np.uint8)
    with pytest.raises(ValueError, match=exact(f"buffer size ({size}) must be divisible by {n}")):
        over(a).fill(value, stream=None)
    assert (a == 0xA5).all()


def test_fill_checks_in_cuda_core_order():
    a = np.zeros(3, np.uint8)
    buf = over(a)
    # The stream before the value, the value before the size.
    with pytest.raises(TypeError, match="stream"):
        buf.fill(1.5, stream=1.5)
    with pytest.raises(ValueError, match=exact("value must be 1, 2, or 4 bytes, got 8")):
        buf.fill(np.int64(1), stream=None)
    buf.close()
    with pytest.raises(RuntimeError, match=CLOSED):
        buf.fill(1.5, stream=1.5)


def test_fill_stream_is_keyword_only_and_required():
    buf = over(np.zeros(4, np.uint8))
    with pytest.raises(TypeError, match=exact("fill() needs keyword-only argument stream")):
        buf.fill(1)
    with pytest.raises(TypeError, match=re.escape("fill() takes exactly 1 positional argument (2 given)")):
        buf.fill(1, None)
    with pytest.raises(TypeError, match=re.escape("fill() takes exactly 1 positional argument (0 given)")):
        buf.fill(stream=None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        buf.fill(1, stream=None, nope=1)
    buf.fill(value=1, stream=None)


def test_fill_without_a_stream_needs_host_only_memory():
    # None is allowed where the host does the work; memory a device reaches
    # needs a stream, as cuda.core says, before the value is looked at.
    for claims in [dict(device=True), dict(host=False, device=True, device_id=0),
                   dict(device=True, managed=True, device_id=0)]:
        buf = ClaimsMR(**claims).allocate(8)
        with pytest.raises(TypeError, match=exact(NONE_STREAM)):
            buf.fill(1.5, stream=None)


@needs_no_driver
def test_fill_memory_a_device_reaches_needs_a_driver():
    buf = ClaimsMR(device=True, device_id=0).allocate(8)
    with pytest.raises(RuntimeError, match="no CUDA driver"):
        buf.fill(1, stream=0)


# ---- copy_to and copy_from --------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 17, 256])
def test_copy_to_and_copy_from(size):
    src = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    dst = np.zeros(size, np.uint8)
    a, b = over(src), over(dst)
    assert a.copy_to(b, stream=None) is b
    assert (dst == src).all()
    dst[:] = 0
    assert b.copy_from(a, stream=0) is None
    assert (dst == src).all()
    dst[:] = 0
    assert a.copy_to(dst=b, stream=Stream(0)) is b
    assert (dst == src).all()
    dst[:] = 0
    b.copy_from(src=a, stream=2)
    assert (dst == src).all()


def test_copy_to_allocates_from_the_memory_resource():
    mr = ClaimsMR()
    a = mr.allocate(12)
    a.fill(b"\x01\x02\x03\x04", stream=None)
    stream = Stream(0)
    b = a.copy_to(stream=stream)
    assert isinstance(b, Buffer) and b is not a
    assert b.memory_resource is mr and b.size == 12 and b.handle != a.handle
    assert mr.streams == [None, stream]  # allocate() was given the copy's stream
    assert host_bytes(b) == b"\x01\x02\x03\x04" * 3
    c = HostMemoryResource().allocate(5)
    assert c.copy_to(None, stream=None).memory_resource is c.memory_resource


def test_copy_to_without_a_memory_resource():
    buf = over(np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match=exact(
            "a destination buffer must be provided (this buffer does not have a memory_resource)")):
        buf.copy_to(stream=None)


def test_copy_to_from_a_resource_without_allocate():
    class DeallocateOnly:
        is_host_accessible, is_device_accessible, device_id = True, False, -1

        def deallocate(self, ptr, size, stream=None):
            pass

    a = np.zeros(4, np.uint8)
    buf = Buffer.from_handle(a.ctypes.data, 4, mr=DeallocateOnly())
    with pytest.raises(TypeError, match="has no allocate"):
        buf.copy_to(stream=None)


def test_copy_size_mismatch():
    small, large = over(np.zeros(4, np.uint8)), over(np.zeros(8, np.uint8))
    with pytest.raises(ValueError, match=exact(
            "buffer sizes mismatch between src and dst (sizes are: src=8, dst=4)")):
        large.copy_to(small, stream=None)
    with pytest.raises(ValueError, match=exact(
            "buffer sizes mismatch between src and dst (sizes are: src=4, dst=8)")):
        large.copy_from(small, stream=None)


def test_copy_onto_itself_and_overlapping():
    a = np.arange(16, dtype=np.uint8)
    buf = over(a)
    buf.copy_to(buf, stream=None)
    assert (a == np.arange(16)).all()
    # Overlapping host memory is copied as if the source were read first.
    low = Buffer.from_handle(a.ctypes.data, 12)
    high = Buffer.from_handle(a.ctypes.data + 4, 12)
    expected = a.copy()
    expected[4:] = a[:12]
    high.copy_from(low, stream=None)
    assert (a == expected).all()


@pytest.mark.parametrize("method, name", [("copy_to", "dst"), ("copy_from", "src")])
@pytest.mark.parametrize("other", [5, "x", np.zeros(4, np.uint8), object()])
def test_copy_other_must_be_a_buffer(method, name, other):
    buf = over(np.zeros(4, np.uint8))
    with pytest.raises(TypeError, match=re.escape(f"Argument '{name}' has incorrect type")):
        getattr(buf, method)(other, stream=None)


def test_copy_of_closed_buffers():
    a, b = over(np.zeros(4, np.uint8)), over(np.zeros(4, np.uint8))
    b.close()
    for call in (lambda: a.copy_to(b, stream=None), lambda: a.copy_from(b, stream=None),
                 lambda: b.copy_to(a, stream=None), lambda: b.copy_from(a, stream=None),
                 lambda: b.copy_to(stream=None)):
        with pytest.raises(RuntimeError, match=CLOSED):
            call()


def test_copy_stream_is_keyword_only_and_required():
    a, b = over(np.zeros(4, np.uint8)), over(np.zeros(4, np.uint8))
    with pytest.raises(TypeError, match=exact("copy_to() needs keyword-only argument stream")):
        a.copy_to(b)
    with pytest.raises(TypeError, match=exact("copy_from() needs keyword-only argument stream")):
        a.copy_from(b)
    with pytest.raises(TypeError, match=re.escape("copy_to() takes at most 1 positional argument (2 given)")):
        a.copy_to(b, None)
    with pytest.raises(TypeError, match=re.escape("copy_from() takes exactly 1 positional argument (0 given)")):
        a.copy_from(stream=None)
    with pytest.raises(TypeError, match="stream"):
        a.copy_to(b, stream=True)


def test_copy_options():
    a, b = over(np.zeros(4, np.uint8)), over(np.zeros(4, np.uint8))
    a.copy_to(b, stream=None, options=None)
    a.copy_from(b, stream=None, options=None)
    with pytest.raises(TypeError, match=exact("copy_to: options must be CopyOptions, got int")):
        a.copy_to(b, stream=None, options=1)
    with pytest.raises(TypeError, match=exact("copy_from: options must be CopyOptions, got dict")):
        a.copy_from(b, stream=None, options={})

    class CopyOptions:  # named so, but without the fields
        pass

    with pytest.raises(TypeError, match=exact("copy_to: options must be CopyOptions, got CopyOptions")):
        a.copy_to(b, stream=None, options=CopyOptions())


@pytest.mark.parametrize("order", ["stream", "during_api_call", "any"])
def test_host_copies_honour_every_option(order):
    # The host copies host-only memory, complete on return: every option
    # holds, DURING_API_CALL and the legacy default stream included.
    src = np.arange(16, dtype=np.uint8)
    dst = np.zeros(16, np.uint8)
    options = strided.CopyOptions(src_access_order=order, dst_location_hint=("host_numa", 1),
                                  overlap_mode="prefer_overlap_with_compute")
    over(src).copy_to(over(dst), stream=None, options=options)
    np.testing.assert_array_equal(dst, src)
    dst[:] = 0
    over(dst).copy_from(over(src), stream=0, options=options)
    np.testing.assert_array_equal(dst, src)


def test_copy_options_of_cuda_core_by_their_fields():
    # cuda.core's CopyOptions (cuda.core.utils) is read by its fields: its
    # enumerations are str enumerations, its hints Devices and Hosts.
    class Device:
        device_id = 0

    class Host:
        numa_id, is_numa_current = None, False

    class CopyOptions:
        def __init__(self, **fields):
            self.src_access_order, self.overlap_mode = "any", "default"
            self.src_location_hint = self.dst_location_hint = None
            self.__dict__.update(fields)

    src, dst = np.arange(8, dtype=np.uint8), np.zeros(8, np.uint8)
    over(src).copy_to(over(dst), stream=None,
                      options=CopyOptions(src_location_hint=Device(), dst_location_hint=Host()))
    np.testing.assert_array_equal(dst, src)
    with pytest.raises(ValueError, match=exact("invalid src_access_order: 'soon'")):
        over(src).copy_to(over(dst), stream=None, options=CopyOptions(src_access_order="soon"))
    with pytest.raises(ValueError, match=exact("invalid overlap_mode: 3")):
        over(src).copy_to(over(dst), stream=None, options=CopyOptions(overlap_mode=3))
    with pytest.raises(TypeError, match="^src_location_hint must be a device ordinal"):
        over(src).copy_to(over(dst), stream=None, options=CopyOptions(src_location_hint=1.5))
    # Hint values libstrided refuses, whatever the memory.
    with pytest.raises(ValueError, match=exact("a device location needs a device ordinal (>= 0), "
                                               "got -4")):
        over(src).copy_to(over(dst), stream=None,
                          options=strided.CopyOptions(src_location_hint=-4))
    with pytest.raises(ValueError, match="'device' location needs its device ordinal"):
        over(src).copy_to(over(dst), stream=None,
                          options=strided.CopyOptions(dst_location_hint="device"))


def test_copy_options_dataclass():
    o = strided.CopyOptions()
    assert o.src_access_order is strided.MemcpySrcAccessOrder.STREAM
    assert o.overlap_mode is strided.MemcpyOverlapMode.DEFAULT
    assert o.src_location_hint is None and o.dst_location_hint is None
    o = strided.CopyOptions("during_api_call", 0, "host", "prefer_overlap_with_compute")
    assert o.src_access_order == "during_api_call"
    assert o.overlap_mode is strided.MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE
    assert (o.src_location_hint, o.dst_location_hint) == (0, "host")
    assert o == strided.CopyOptions(strided.MemcpySrcAccessOrder.DURING_API_CALL, 0, "host",
                                    strided.MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE)
    assert hash(o) == hash(strided.CopyOptions("during_api_call", 0, "host",
                                               "prefer_overlap_with_compute"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.src_access_order = "any"
    with pytest.raises(ValueError, match=exact("invalid src_access_order: 'x'")):
        strided.CopyOptions(src_access_order="x")
    with pytest.raises(ValueError, match=exact("invalid overlap_mode: None")):
        strided.CopyOptions(overlap_mode=None)
    assert [m.value for m in strided.MemcpySrcAccessOrder] == ["stream", "during_api_call", "any"]
    assert [m.value for m in strided.MemcpyOverlapMode] == ["default",
                                                            "prefer_overlap_with_compute"]


def test_copy_without_a_stream_needs_host_only_memory():
    host = over(np.zeros(8, np.uint8))
    device = ClaimsMR(host=False, device=True, device_id=0).allocate(8)
    pinned = ClaimsMR(device=True).allocate(8)
    for call in (lambda: host.copy_to(device, stream=None),
                 lambda: device.copy_to(host, stream=None),
                 lambda: pinned.copy_to(stream=None),
                 lambda: host.copy_from(pinned, stream=None),
                 lambda: pinned.copy_from(host, stream=None)):
        with pytest.raises(TypeError, match=exact(NONE_STREAM)):
            call()
    if CUDA == "no-driver":
        with pytest.raises(RuntimeError, match="no CUDA driver"):
            host.copy_to(device, stream=0)


# ---- Buffer-like objects (a cuda.core Buffer) ----------------------------------------------


def test_copy_with_a_buffer_like_object():
    src = np.arange(16, dtype=np.uint8)
    dst = np.zeros(16, np.uint8)
    like = LikeCoreBuffer(dst)
    assert over(src).copy_to(like, stream=None) is like
    assert (dst == src).all()
    other = np.zeros(16, np.uint8)
    over(other).copy_from(LikeCoreBuffer(src), stream=None)
    assert (other == src).all()


def test_a_buffer_like_object_is_kept_while_used_and_never_freed():
    a = np.arange(8, dtype=np.uint8)
    like = LikeCoreBuffer(a)
    alive = weakref.ref(like)
    v = StridedMemoryView.from_buffer(like, (2,), dtype=np.int32)
    assert v.exporting_obj is like
    assert v.ptr == a.ctypes.data and v.shape == (2,)
    assert (np.from_dlpack(v) == a.view(np.int32)).all()
    del like
    gc.collect()
    assert alive() is not None  # the view's memory keeps it
    del v
    gc.collect()
    assert alive() is None
    assert (a == np.arange(8)).all()  # nothing freed or written


def test_a_buffer_like_object_in_a_cycle_is_collected():
    # The object keeps a view of its own memory: the garbage collector is
    # told of the reference the view's memory holds to it.
    like = LikeCoreBuffer(np.zeros(8, np.uint8))
    like.view = StridedMemoryView.from_buffer(like, (8,), dtype=np.uint8)
    alive = weakref.ref(like)
    del like
    gc.collect()
    assert alive() is None


def test_buffer_like_objects_refused():
    buf = over(np.zeros(4, np.uint8))
    closed = LikeCoreBuffer(np.zeros(4, np.uint8))
    closed.is_closed = True
    with pytest.raises(RuntimeError, match=CLOSED):
        buf.copy_to(closed, stream=None)

    class ClosedFlag(LikeCoreBuffer):
        is_closed = True

        def __init__(self, a):
            self.a, self.device = a, False

    with pytest.raises(RuntimeError, match=CLOSED):
        buf.copy_from(ClosedFlag(np.zeros(4, np.uint8)), stream=None)

    class NoSize:
        handle, is_host_accessible, is_device_accessible = 0, True, False

    with pytest.raises(TypeError, match=re.escape("Argument 'src' has incorrect type")):
        buf.copy_from(NoSize(), stream=None)

    class Raises(LikeCoreBuffer):
        @property
        def is_host_accessible(self):
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        buf.copy_from(Raises(np.zeros(4, np.uint8)), stream=None)
    with pytest.raises(TypeError, match=re.escape("Argument 'buffer' has incorrect type")):
        StridedMemoryView.from_buffer(NoSize(), (1,), dtype=np.uint8)


def test_buffer_like_copy_needs_a_stream_when_the_driver_says_so():
    # Memory is classified by the driver (here: none, so host memory), not
    # by the object's own word.
    dst = np.zeros(4, np.uint8)
    over(np.ones(4, np.uint8)).copy_to(LikeCoreBuffer(dst, device=True), stream=None)
    assert (dst == 1).all()


# ---- The DLPack export ----------------------------------------------------------------


def capsule_name(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    return get_name(capsule).decode()


def test_dlpack_export_is_an_int8_vector_of_the_bytes():
    a = np.arange(24, dtype=np.uint8)
    buf = over(a)
    assert buf.__dlpack_device__() == (1, 0)
    x = np.from_dlpack(buf)
    assert x.dtype == np.int8 and x.shape == (24,) and x.strides == (1,)
    assert x.ctypes.data == buf.handle
    x[3] = -1
    assert a[3] == 255  # the same memory, writable
    v = StridedMemoryView.from_any_interface(buf, -1)
    assert (v.ptr, v.shape, v.strides, v.dtype) == (buf.handle, (24,), (1,), np.dtype(np.int8))
    assert v.exporting_obj is buf


@pytest.mark.parametrize("max_version, name", [
    (None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"),
    ((1, 3), "dltensor_versioned"), ((2, 0), "dltensor_versioned")])
def test_dlpack_capsule_versions(max_version, name):
    buf = over(np.zeros(4, np.uint8))
    assert capsule_name(buf.__dlpack__(max_version=max_version)) == name


def test_dlpack_of_an_empty_buffer():
    buf = HostMemoryResource().allocate(0)
    x = np.from_dlpack(buf)
    assert x.shape == (0,) and x.dtype == np.int8


def test_dlpack_ignores_the_stream():
    buf = over(np.zeros(4, np.uint8))
    for stream in (None, -1, 0, 1, 5, "junk"):
        buf.__dlpack__(stream=stream, max_version=(1, 0))
    buf.__dlpack__(copy=False)
    buf.__dlpack__(dl_device=None, copy=None)


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(dl_device=(1, 0)), BufferError, "Sorry, not supported: dl_device other than None"),
    (dict(dl_device=()), BufferError, "Sorry, not supported: dl_device other than None"),
    (dict(copy=True), BufferError, "Sorry, not supported: copy=True"),
    (dict(max_version=[1, 0]), TypeError,
     "Argument 'max_version' has incorrect type (expected tuple, got list)"),
    (dict(max_version=(1,)), BufferError, "Expected max_version tuple[int, int], got (1,)"),
    (dict(max_version=(1, 0, 0)), BufferError,
     "Expected max_version tuple[int, int], got (1, 0, 0)"),
])
def test_dlpack_errors(kwargs, exc, message):
    buf = over(np.zeros(4, np.uint8))
    with pytest.raises(exc, match=exact(message)):
        buf.__dlpack__(**kwargs)


def test_dlpack_arguments_are_keyword_only():
    buf = over(np.zeros(4, np.uint8))
    with pytest.raises(TypeError, match="positional"):
        buf.__dlpack__(None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        buf.__dlpack__(nope=1)


def test_dlpack_of_a_closed_buffer():
    buf = over(np.zeros(4, np.uint8))
    buf.close()
    with pytest.raises(RuntimeError, match=CLOSED):
        buf.__dlpack__()
    with pytest.raises(RuntimeError, match=CLOSED):
        buf.__dlpack_device__()


@pytest.mark.parametrize("claims, device", [
    (dict(), (1, 0)),
    (dict(device=True, device_id=1), (3, 0)),
    (dict(host=False, device=True, device_id=1), (2, 1)),
    (dict(device=True, managed=True, device_id=1), (13, 0)),
    (dict(host=False, device=True, managed=True, device_id=1), (13, 0)),
    (dict(managed=True), (1, 0)),
])
def test_dlpack_device_by_what_reaches_the_memory(claims, device):
    buf = ClaimsMR(**claims).allocate(8)
    assert buf.__dlpack_device__() == device
    capsule = buf.__dlpack__(max_version=(1, 0))
    assert capsule_name(capsule) == "dltensor_versioned"


def test_dlpack_device_of_memory_nothing_reaches():
    buf = ClaimsMR(host=False).allocate(8)
    message = exact("buffer is neither device-accessible nor host-accessible")
    with pytest.raises(BufferError, match=message):
        buf.__dlpack_device__()
    with pytest.raises(BufferError, match=message):
        buf.__dlpack__()


def test_dlpack_tensor_holds_the_memory():
    mr = ClaimsMR()
    buf = mr.allocate(16)
    buf.fill(3, stream=None)
    x = np.from_dlpack(buf)
    capsule = buf.__dlpack__(max_version=(1, 0))
    buf.close()
    assert len(mr.arrays) == 1  # the array and the capsule hold the memory
    assert (x == 3).all()
    del x
    gc.collect()
    assert len(mr.arrays) == 1
    del capsule
    gc.collect()
    assert len(mr.arrays) == 0


# ---- The other members -------------------------------------------------------------------


def test_hash_is_that_of_ptr_and_size():
    a = np.zeros(8, np.uint8)
    buf = over(a)
    assert hash(buf) == hash((a.ctypes.data, 8))
    assert hash(Buffer.from_handle(0x1000, 16)) == hash((0x1000, 16))
    buf.close()
    assert hash(buf) == hash((0, 0))


def test_equality_repr_and_state():
    a = np.zeros(8, np.uint8)
    x, y = over(a), Buffer.from_handle(a.ctypes.data, 8)
    assert x == y and x != Buffer.from_handle(a.ctypes.data, 4)
    assert x.__eq__(LikeCoreBuffer(a)) is NotImplemented
    assert repr(x) == f"<Buffer ptr={a.ctypes.data:#x} size=8>"
    assert not x.is_mapped and not x.is_managed and not x.is_closed
    with x as entered:
        assert entered is x
    assert x.is_closed
    assert repr(x) == "<Buffer ptr=0x0 size=0>"


def test_construction_and_from_handle_rules():
    with pytest.raises(RuntimeError, match=exact(
            "Buffer objects cannot be instantiated directly. Please use MemoryResource APIs.")):
        Buffer()
    with pytest.raises(ValueError, match=exact(
            "owner and memory resource cannot be both specified together")):
        Buffer.from_handle(0, 0, mr=ClaimsMR(), owner=object(), stream=0)
    with pytest.raises(ValueError, match=exact("stream requires a memory resource (mr)")):
        Buffer.from_handle(0, 0, stream=0)
    buf = Buffer.from_handle(0, 8, None, None, stream=None)
    assert buf.handle == 0 and buf.size == 8


# ---- Device memory, against the fake CUDA driver ------------------------------------------

# The fake's record of the last memset or copy (tests/c/fake_cuda.h), and
# Buffers over NumPy memory the fake calls device memory.
MEMOP = """
class Memop(ctypes.Structure):
    _fields_ = [("function", ctypes.c_char * 32), ("dst", ctypes.c_size_t),
                ("src", ctypes.c_size_t), ("value", ctypes.c_uint), ("count", ctypes.c_size_t),
                ("stream", ctypes.c_void_p), ("device", ctypes.c_int)]


fake.fake_cuda_last_memop.argtypes = [ctypes.POINTER(Memop)]
fake.fake_cuda_last_memop.restype = ctypes.c_int
fake.fake_cuda_move_bytes.argtypes = [ctypes.c_int]
fake.fake_cuda_move_bytes.restype = None
from strided import Buffer, DeviceMemoryResource


def memop():
    m = Memop()
    if not fake.fake_cuda_last_memop(ctypes.byref(m)):
        return None
    return [m.function.decode(), m.dst, m.src, m.value, m.count, m.stream or 0, m.device]


keep = []


def device_array(n, kind="device", device=0):
    a = np.zeros(n, np.uint8)
    keep.append(a)
    add_range(a.ctypes.data, kind, device, size=n)
    return a


class StreamObject:
    def __cuda_stream__(self):
        return (0, 0x77)
"""


def run(code):
    """run_fake with the memop helpers."""
    return run_fake(MEMOP + textwrap.dedent(code))


@needs_fake
def test_fake_fill_device_memory():
    out = run("""
    for name, addr, value in [("dev1", DEV1, b"\\x01\\x02\\x03\\x04"), ("dev0", DEV0, 7),
                              ("managed", MANAGED, np.uint16(0x0102)),
                              ("pinned", PINNED, np.float32(1.0))]:
        buf = Buffer.from_handle(addr, 64)
        buf.fill(value, stream=0x55)
        out[name] = memop()
        out[name + "-device"] = list(buf.__dlpack_device__())
    buf = Buffer.from_handle(DEV0, 64)
    before = memop()
    out["none"] = error(lambda: buf.fill(1.5, stream=None))
    out["none-made-no-call"] = memop() == before
    out["odd"] = error(lambda: Buffer.from_handle(DEV0 + 1, 4).fill(b"\\x01\\x02", stream=0))
    buf.fill(1, stream=StreamObject())
    out["stream-object"] = memop()[5]
    out["context-left"] = current_context()
    """)
    assert out["dev1"] == ["cuMemsetD32Async", DEV1, 0, 0x04030201, 16, 0x55, 1]
    assert out["dev0"] == ["cuMemsetD8Async", DEV0, 0, 7, 64, 0x55, 0]
    assert out["managed"] == ["cuMemsetD16Async", MANAGED, 0, 0x0102, 32, 0x55, 0]
    assert out["pinned"] == ["cuMemsetD32Async", PINNED, 0, 0x3F800000, 16, 0x55, 0]
    assert out["dev1-device"] == [2, 1] and out["dev0-device"] == [2, 0]
    assert out["managed-device"] == [13, 0] and out["pinned-device"] == [3, 0]
    assert out["none"] == ["TypeError", NONE_STREAM]
    assert out["none-made-no-call"]
    assert out["odd"][0] == "ValueError" and "aligned to 2 bytes" in out["odd"][1]
    assert out["stream-object"] == 0x77
    assert out["context-left"] == 0


@needs_fake
def test_fake_fill_and_copy_move_the_bytes():
    out = run("""
    fake.fake_cuda_move_bytes(1)
    d0, d1 = device_array(64, device=0), device_array(64, device=1)
    host = np.zeros(64, np.uint8)
    a, b = Buffer.from_handle(d0.ctypes.data, 64), Buffer.from_handle(d1.ctypes.data, 64)
    h = Buffer.from_handle(host.ctypes.data, 64, owner=host)
    a.fill(b"\\x0a\\x0b", stream=3)
    out["filled"] = d0.tolist()
    b.copy_from(a, stream=4)
    out["peer"] = [calls("cuMemcpyPeerAsync"), last_stream("cuMemcpyPeerAsync"),
                   d1.tolist() == d0.tolist()]
    h.copy_from(b, stream=5)
    out["to-host"] = memop()
    out["host"] = host.tolist()
    host[:] = 9
    out["returned"] = h.copy_to(a, stream=6) is a
    out["from-host"] = memop()
    out["bytes"] = d0.tolist() == [9] * 64
    # From a device resource: copy_to() allocates on the stream given.
    mr = DeviceMemoryResource(0)
    c = mr.allocate(64, stream=0)
    c.fill(np.uint32(0x01020304), stream=0)
    e = c.copy_to(stream=8)
    out["allocated"] = [e.memory_resource is mr, e.size, last_stream("cuMemAllocFromPoolAsync")]
    h.copy_from(e, stream=0)
    out["round-trip"] = host.view("<u4").tolist() == [0x01020304] * 16
    """)
    assert out["filled"] == [10, 11] * 32
    assert out["peer"] == [1, 4, True]
    to_host = out["to-host"]
    assert to_host[0] == "cuMemcpyAsync" and to_host[3:] == [0, 64, 5, 1]
    assert out["host"] == [10, 11] * 32
    assert out["returned"] and out["bytes"]
    assert out["from-host"][0] == "cuMemcpyAsync" and out["from-host"][5:] == [6, 0]
    assert out["allocated"] == [True, 64, 8]
    assert out["round-trip"]


@needs_fake
def test_fake_copy_needs_a_stream_for_device_memory():
    out = run("""
    dev = Buffer.from_handle(DEV0, 16)
    host = np.zeros(16, np.uint8)
    h = Buffer.from_handle(host.ctypes.data, 16, owner=host)
    out["to"] = error(lambda: h.copy_to(dev, stream=None))
    out["from"] = error(lambda: h.copy_from(dev, stream=None))
    out["alloc"] = error(lambda: dev.copy_to(stream=None))
    out["calls"] = calls("cuMemcpyAsync")
    out["overlap"] = error(lambda: Buffer.from_handle(DEV0 + 8, 16).copy_from(dev, stream=0))
    """)
    assert out["to"] == out["from"] == ["TypeError", NONE_STREAM]
    assert out["alloc"] == ["TypeError", NONE_STREAM]
    assert out["calls"] == 0
    assert out["overlap"][0] == "ValueError" and "overlap" in out["overlap"][1]


@needs_fake
def test_fake_host_memory_waits_for_the_stream():
    out = run("""
    a, b = np.zeros(8, np.uint8), np.ones(8, np.uint8)
    x, y = Buffer.from_handle(a.ctypes.data, 8, owner=a), Buffer.from_handle(b.ctypes.data, 8, owner=b)
    x.fill(2, stream=0x31)
    out["fill"] = [calls("cuStreamSynchronize"), last_stream("cuStreamSynchronize")]
    x.fill(3, stream=None)
    x.copy_from(y, stream=None)
    out["none"] = calls("cuStreamSynchronize")
    x.copy_to(y, stream=0x32)
    out["copy"] = [calls("cuStreamSynchronize"), last_stream("cuStreamSynchronize")]
    out["memops"] = memop()
    out["bytes"] = b.tolist()
    """)
    assert out["fill"] == [1, 0x31]
    assert out["none"] == 1
    assert out["copy"] == [2, 0x32]
    assert out["memops"] is None
    assert out["bytes"] == [1] * 8


@needs_fake
def test_fake_device_buffers_export_and_import():
    out = run("""
    for name, addr in [("dev1", DEV1), ("managed", MANAGED), ("pinned", PINNED)]:
        v = StridedMemoryView.from_dlpack(Buffer.from_handle(addr, 32), -1)
        out[name] = [v.ptr, v.shape[0], v.dtype.str, v.device_id, v.is_device_accessible,
                     list(v.__dlpack_device__())]


    class CoreLike:
        handle, size = DEV1, 32
        is_host_accessible, is_device_accessible = False, True


    like = CoreLike()
    host = np.zeros(32, np.uint8)
    Buffer.from_handle(host.ctypes.data, 32, owner=host).copy_from(like, stream=9)
    out["like"] = memop()
    out["like-view"] = StridedMemoryView.from_buffer(like, (32,), dtype=np.uint8).device_id
    """)
    assert out["dev1"] == [DEV1, 32, "|i1", 1, True, [2, 1]]
    assert out["managed"] == [MANAGED, 32, "|i1", 0, True, [13, 0]]
    assert out["pinned"] == [PINNED, 32, "|i1", 0, True, [3, 0]]
    assert out["like"][:3] == ["cuMemcpyAsync", out["like"][1], DEV1]
    assert out["like"][5:] == [9, 1]
    assert out["like-view"] == 1


# The fake's capture switch and its record of the last copy with attributes.
COPY_OPTIONS = """
class CopyAttributes(ctypes.Structure):
    _fields_ = [("order", ctypes.c_int), ("src_type", ctypes.c_int), ("src_id", ctypes.c_int),
                ("dst_type", ctypes.c_int), ("dst_id", ctypes.c_int), ("flags", ctypes.c_uint)]


fake.fake_cuda_last_copy_attributes.argtypes = [ctypes.POINTER(CopyAttributes)]
fake.fake_cuda_last_copy_attributes.restype = ctypes.c_int
fake.fake_cuda_set_capturing.argtypes = [ctypes.c_void_p, ctypes.c_int]
fake.fake_cuda_set_capturing.restype = None


def copy_attributes():
    a = CopyAttributes()
    if not fake.fake_cuda_last_copy_attributes(ctypes.byref(a)):
        return None
    return [a.order, a.src_type, a.src_id, a.dst_type, a.dst_id, a.flags]


fake.fake_cuda_move_bytes(1)
d0, d1, e0 = device_array(64, device=0), device_array(64, device=0), device_array(64, device=1)
d0[:] = 5
a, b = Buffer.from_handle(d0.ctypes.data, 64), Buffer.from_handle(d1.ctypes.data, 64)
c = Buffer.from_handle(e0.ctypes.data, 64)
"""



def run_options(code, driver_version=None):
    """run with COPY_OPTIONS first, after the fake is made a driver of
    driver_version (libstrided loads it in COPY_OPTIONS)."""
    before = "" if driver_version is None else (
        f"os.environ['FAKE_CUDA_DRIVER_VERSION'] = '{driver_version}'\n")
    return run_fake(MEMOP + before + COPY_OPTIONS + textwrap.dedent(code))


LEGACY = ("does not accept LEGACY_DEFAULT_STREAM with options (matches copy_batch); "
          "cuMemcpyWithAttributesAsync rejects it outright, unlike PER_THREAD_DEFAULT_STREAM, "
          "which is a real stream to the driver and is accepted. Pass an explicit stream, "
          "PER_THREAD_DEFAULT_STREAM, or options=None.")
CAPTURE = ("does not support graph capture with options (matches copy_batch); the driver has no "
           "graph-node form of cuMemcpyWithAttributesAsync, so options cannot be honored in a "
           "graph. Use GraphNode.memcpy for a plain (non-attributed) copy node, or pass "
           "options=None.")
DURING_API_CALL = ("src_access_order=DURING_API_CALL requires a driver that reports CUDA 13.2 or "
                   "newer (cuMemcpyWithAttributesAsync is unavailable here). A plain "
                   "cuMemcpyAsync fallback reads the source in stream order only, which would "
                   "silently violate the guarantee that all source reads complete before the "
                   "call returns, letting the caller reuse the source buffer before the real "
                   "(stream-ordered) read happens. Use src_access_order=STREAM or ANY, or omit "
                   "options, if that works for your use case.")


@needs_fake
def test_fake_copy_options_stream_rules():
    out = run_options("""
    from strided import CopyOptions
    o = CopyOptions(src_access_order="any")
    out["legacy-to"] = error(lambda: a.copy_to(b, stream=0, options=o))
    out["legacy-from"] = error(lambda: b.copy_from(a, stream=1, options=o))
    class Legacy:  # cuda.core's LEGACY_DEFAULT_STREAM
        def __cuda_stream__(self):
            return (0, 1)
    out["legacy-object"] = error(lambda: a.copy_to(b, stream=Legacy(), options=o))
    out["legacy-calls"] = calls("cuMemcpyAsync")
    # The sizes are checked first, as cuda.core checks them.
    out["sizes-first"] = error(lambda: a.copy_to(Buffer.from_handle(DEV0, 8), stream=0, options=o))
    fake.fake_cuda_set_capturing(0x55, 1)
    out["capture"] = error(lambda: b.copy_from(a, stream=0x55, options=o))
    out["capture-plain"] = error(lambda: b.copy_from(a, stream=0x55))
    fake.fake_cuda_set_capturing(0x55, 0)
    out["per-thread"] = error(lambda: a.copy_to(b, stream=2, options=o))
    out["copied"] = [memop()[0], memop()[5], d1.tolist() == [5] * 64]
    # A CUDA 13.0 driver: DURING_API_CALL cannot be honoured; nothing is copied.
    d1[:] = 0
    n = calls("cuMemcpyAsync")
    out["during"] = error(lambda: a.copy_to(b, stream=0x55,
                                            options=CopyOptions("during_api_call")))
    out["during-calls"] = calls("cuMemcpyAsync") - n
    out["hint-device"] = error(lambda: a.copy_to(b, stream=0x55,
                                                 options=CopyOptions(src_location_hint=7)))
    # copy_to(dst=None) allocates, then refuses the stream, as cuda.core.
    mr = DeviceMemoryResource(0)
    m = mr.allocate(64, stream=0x55)
    out["allocated-then-refused"] = error(lambda: m.copy_to(stream=0, options=o))
    out["allocations"] = calls("cuMemAllocFromPoolAsync")
    """)
    assert out["legacy-to"] == ["TypeError", "copy_to " + LEGACY]
    assert out["legacy-from"] == ["TypeError", "copy_from " + LEGACY]
    assert out["legacy-object"] == ["TypeError", "copy_to " + LEGACY]
    assert out["legacy-calls"] == 0
    assert out["sizes-first"] == ["ValueError", "buffer sizes mismatch between src and dst "
                                                "(sizes are: src=64, dst=8)"]
    assert out["capture"] == ["TypeError", "copy_from " + CAPTURE]
    assert out["capture-plain"] is None
    assert out["per-thread"] is None
    assert out["copied"] == ["cuMemcpyAsync", 2, True]
    assert out["during"] == ["NotImplementedError", DURING_API_CALL]
    assert out["during-calls"] == 0
    assert out["hint-device"] == ["ValueError", "device 7 does not exist; there are 2 CUDA devices"]
    assert out["allocated-then-refused"] == ["TypeError", "copy_to " + LEGACY]
    assert out["allocations"] == 2


@needs_fake
def test_fake_copy_options_through_the_attributes_of_cuda_13_2():
    out = run_options("""
    from strided import CopyOptions

    class Host:  # a cuda.core Host of the calling thread's node
        numa_id, is_numa_current = None, True

    o = CopyOptions("during_api_call", src_location_hint=("host_numa", 1),
                    dst_location_hint=Host(), overlap_mode="prefer_overlap_with_compute")
    a.copy_to(b, stream=0x55, options=o)
    out["copy"] = memop()
    out["attributes"] = copy_attributes()
    out["bytes"] = d1.tolist() == [5] * 64
    b.copy_from(a, stream=0x55, options=CopyOptions(src_location_hint=1))
    out["plain-hint"] = copy_attributes()
    b.copy_from(a, stream=0x55)
    out["without"] = memop()[0]
    # Between two devices the copy is cuMemcpyPeerAsync, which takes none.
    out["peer-during"] = error(lambda: c.copy_from(a, stream=0x55, options=o))
    c.copy_from(a, stream=0x55, options=CopyOptions("any"))
    out["peer"] = [calls("cuMemcpyPeerAsync"), e0.tolist() == [5] * 64]
    """, driver_version=13020)
    assert out["copy"][0] == "cuMemcpyWithAttributesAsync" and out["copy"][4:] == [64, 0x55, 0]
    # DURING_API_CALL, a NUMA node 1 hint, the calling thread's node, overlap.
    assert out["attributes"] == [2, 3, 1, 4, 0, 1]
    assert out["bytes"]
    assert out["plain-hint"] == [1, 1, 1, 0, 0, 0]
    assert out["without"] == "cuMemcpyAsync"
    assert out["peer-during"][0] == "NotImplementedError"
    assert out["peer-during"][1].startswith(
        "src_access_order=DURING_API_CALL requires a copy cuMemcpyWithAttributesAsync makes")
    assert out["peer"] == [1, True]
