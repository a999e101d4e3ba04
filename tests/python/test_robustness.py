"""Inputs that must never corrupt memory or hang: object element types,
other-order bytes from the array interfaces, layouts whose byte offsets do
not fit, grids too large to draw, impossible memory ranges, closed Buffers,
DLPack streams a host producer cannot take, and allocators whose Buffers are
too small, closed or of the wrong kind. Each case is refused with a clear
error and changes nothing."""

import numpy as np
import pytest

import strided
from gpu_util import cuda_device_count
from strided import Buffer, StridedLayout, StridedMemoryView

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FOREIGN = ">" if np.little_endian else "<"


def host_view(a):
    return StridedMemoryView.from_dlpack(a, stream_ptr=-1)


class Interface:
    """An object exposing a given __array_interface__ dict."""

    def __init__(self, **fields):
        self.__array_interface__ = fields


class CudaInterface:
    def __init__(self, **fields):
        self.__cuda_array_interface__ = fields


# ---- element types that are not plain data ----------------------------------


def test_object_arrays_are_refused_by_the_array_interface():
    a = np.array([1, "x", None], dtype=object)
    with pytest.raises(BufferError, match=r"\|O holds Python object references"):
        StridedMemoryView.from_array_interface(a)
    # numpy's own DLPack export refuses them first.
    with pytest.raises(BufferError):
        StridedMemoryView.from_any_interface(a, stream_ptr=-1)


def test_structured_types_holding_objects_are_refused():
    """Their typestr is "|V16"; the fields in descr show the object."""
    a = np.zeros(3, [("a", "O"), ("b", "f8")])
    assert a.__array_interface__["typestr"] == "|V16"
    with pytest.raises(BufferError, match="holds Python object references"):
        StridedMemoryView.from_array_interface(a)
    # Plain structured types are views like any other (of raw bytes, from
    # the typestr, as cuda.core's).
    p = np.zeros(3, [("a", "<i4"), ("b", "<f8")])
    assert StridedMemoryView.from_array_interface(p).dtype == np.dtype("V12")


def test_object_typestr_in_a_cuda_interface_is_refused():
    """Refused from the typestr alone, before any memory is looked at."""
    cai = CudaInterface(version=3, shape=(0,), typestr="|O", data=(0, False), strides=None)
    with pytest.raises(BufferError, match="holds Python object references"):
        StridedMemoryView.from_cuda_array_interface(cai, stream_ptr=-1)


@pytest.mark.parametrize("dtype", [object, np.dtype([("a", "O")]), np.dtype([("a", "i8"), ("b", "O")])])
def test_object_dtypes_are_refused_by_from_buffer_and_view(dtype):
    backing = np.zeros(64, np.uint8)
    buf = Buffer.from_handle(backing.ctypes.data, backing.nbytes, owner=backing)
    itemsize = np.dtype(dtype).itemsize
    with pytest.raises(TypeError, match="holds Python object references"):
        StridedMemoryView.from_buffer(buf, (64 // itemsize,), dtype=dtype)
    v = host_view(backing)
    layout = StridedLayout((64 // itemsize,), None, itemsize)
    with pytest.raises(TypeError, match="holds Python object references"):
        v.view(layout, dtype=dtype)
    assert v.dtype == np.uint8 and v.shape == (64,)


def test_copies_never_duplicate_object_references():
    """No view of object elements can be made, so no copy can run on one."""
    a = np.array([object() for _ in range(4)], dtype=object)
    b = np.empty(4, dtype=object)
    for arr in (a, b):
        with pytest.raises(BufferError):
            StridedMemoryView.from_array_interface(arr)


# ---- byte order -----------------------------------------------------------------


@pytest.mark.parametrize("typestr", [FOREIGN + "i4", FOREIGN + "f8", FOREIGN + "c16", FOREIGN + "U2"])
def test_other_byte_order_is_refused_by_the_array_interface(typestr):
    a = np.zeros(4, np.dtype(typestr))
    with pytest.raises(BufferError, match="is not in the machine's byte order"):
        StridedMemoryView.from_array_interface(a)


def test_other_byte_order_of_single_bytes_is_fine():
    a = np.arange(4, dtype=np.uint8)
    fields = dict(a.__array_interface__, typestr=FOREIGN + "u1")
    v = StridedMemoryView.from_array_interface(Interface(**fields))
    assert v.shape == (4,)


@pytest.mark.parametrize("typestr,why", [
    ("f4", "must start with a byte order"),
    ("<f", "a decimal size must follow"),
    ("<f4x", "unexpected characters"),
    ("<i3", "signed integer has no 3-byte type"),
    ("|t8", "element kind 't' is not supported"),
    ("|V0", "an element of 0 bytes"),
])
def test_malformed_typestrs_are_refused(typestr, why):
    a = np.zeros(8, np.uint8)
    fields = dict(a.__array_interface__, typestr=typestr, shape=(1,))
    with pytest.raises(BufferError, match=why):
        StridedMemoryView.from_array_interface(Interface(**fields))


# ---- layouts whose byte offsets do not fit in int64 ---------------------------


@pytest.mark.parametrize("shape,strides,itemsize", [
    ((2, 3), (2**62, 1), 4),
    ((2,), (INT64_MIN,), 1),
    ((1, 3), (INT64_MIN, 1), 1),
    ((0, 3), (INT64_MIN, 1), 1),
    ((3,), (2**60,), 4),
    ((3,), (-(2**62),), 4),
])
def test_layouts_beyond_int64_bytes_are_refused_where_made(shape, strides, itemsize):
    with pytest.raises(OverflowError):
        StridedLayout(shape, strides, itemsize)


def test_operations_never_make_such_layouts():
    with pytest.raises(OverflowError):
        StridedLayout.dense((5,), 4)[:: 2**63 - 1]
    with pytest.raises(OverflowError):
        StridedLayout((2,), (2**61,), 4).unsqueezed(0)
    with pytest.raises(OverflowError):
        StridedLayout.dense((2**61,), 8)
    # The largest that fit are fine, and byte strides are exact.
    layout = StridedLayout((2,), (INT64_MAX // 4,), 4)
    assert layout.strides_in_bytes == ((INT64_MAX // 4) * 4,)


# ---- bounded formatting -----------------------------------------------------------


@pytest.mark.parametrize("shape", [(2**40, 0), (10**7, 0), (0, 2**40), (2**62, 0)])
def test_format_grid_of_a_huge_empty_layout_is_refused_at_once(shape):
    # Before the bound counted rows and columns, (2**40, 0) looped 2**40
    # times: this test would not end.
    layout = StridedLayout.dense(shape, 4)
    with pytest.raises(ValueError, match="too large to draw"):
        layout.format_grid()


def test_format_grid_of_a_small_empty_layout():
    text = StridedLayout.dense((3, 0), 4).format_grid()
    assert text.count("|") == 3


# ---- memory ranges ------------------------------------------------------------------


@pytest.mark.parametrize("ptr,size", [(0, 2**63), (0, 2**64 - 1), (2**64 - 16, 64), (2**63, 2**63)])
def test_from_handle_refuses_impossible_ranges(ptr, size):
    with pytest.raises(ValueError, match="2\\*\\*63 - 1 bytes|wrap past the top"):
        Buffer.from_handle(ptr, size)


def test_from_handle_up_to_the_top_of_the_address_space():
    b = Buffer.from_handle(2**64 - 64, 64)
    assert b.handle == 2**64 - 64 and b.size == 64
    b.close()


# ---- closed Buffers -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["handle", "size", "device_id", "is_device_accessible",
                                  "is_host_accessible", "is_managed", "memory_resource",
                                  "owner", "is_mapped"])
def test_a_closed_buffer_answers_nothing(name):
    backing = np.zeros(16, np.uint8)
    b = Buffer.from_handle(backing.ctypes.data, 16, owner=backing)
    getattr(b, name)
    b.close()
    with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
        getattr(b, name)
    assert b.is_closed
    b.close()  # closing again is allowed
    with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
        StridedMemoryView.from_buffer(b, (16,), dtype=np.uint8)


# ---- DLPack streams of a host producer ----------------------------------------------


@pytest.mark.parametrize("stream", [5, 0, 1, 2, -2, 2**63 - 1])
def test_host_dlpack_refuses_streams(stream):
    v = host_view(np.arange(4, dtype=np.float32))
    with pytest.raises(BufferError, match="a host producer takes stream=None or -1"):
        v.__dlpack__(stream=stream)


@pytest.mark.parametrize("stream", ["x", 1.0, True, False, 2**64, -(2**64), object()])
def test_dlpack_refuses_streams_that_are_not_ints(stream):
    v = host_view(np.arange(4, dtype=np.float32))
    with pytest.raises(BufferError, match="stream"):
        v.__dlpack__(stream=stream)


@pytest.mark.parametrize("stream", [None, -1])
def test_host_dlpack_takes_none_and_minus_one(stream):
    a = np.arange(4, dtype=np.float32)
    capsule = host_view(a).__dlpack__(stream=stream)
    assert type(capsule).__name__ == "PyCapsule"


# ---- allocators whose Buffers are wrong ------------------------------------------


class LyingHostResource:
    """A Python memory resource whose allocate() returns a Buffer of its
    choosing; records what happens to it."""

    is_host_accessible = True
    is_device_accessible = False
    device_id = -1

    def __init__(self, make):
        self.make, self.closed, self.calls = make, 0, []

    def allocate(self, size, stream=None):
        self.calls.append(size)
        return self.make(self, size)


def short_buffer(res, size):
    backing = np.full(max(size // 2, 1), 0xEE, np.uint8)

    class Held:
        handle = backing.ctypes.data
        nbytes = backing.nbytes

        @property
        def size(self):
            return self.nbytes

        def close(self, stream=None):
            res.closed += 1
            assert (backing == 0xEE).all(), "the short buffer was written"

    return Held()


def closed_buffer(res, size):
    backing = np.zeros(size, np.uint8)
    b = Buffer.from_handle(backing.ctypes.data, size, owner=backing)
    b.close()
    return b


def sizeless(res, size):
    backing = np.zeros(size, np.uint8)

    class Held:
        handle = backing.ctypes.data

    return Held()


def overlapping(n=6):
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    return a, host_view(a[1:]), host_view(a[:-1])


@pytest.mark.parametrize("make,exc,message", [
    (short_buffer, ValueError, "returned fewer bytes than asked for"),
    (closed_buffer, ValueError, "returned a closed strided.Buffer"),
    (sizeless, TypeError, "must return a Buffer \\(an object with handle and size\\)"),
])
def test_copy_temporaries_are_checked_before_use(make, exc, message):
    mr = LyingHostResource(make)
    a, dv, sv = overlapping()
    before = a.copy()
    with pytest.raises(exc, match=message):
        dv.copy_from(sv, allocator={"host": mr})
    np.testing.assert_array_equal(a, before)
    assert mr.calls == [5 * 6 * 4]
    if make is short_buffer:
        assert mr.closed == 1  # given back once, unused


def test_a_buffer_larger_than_asked_is_fine():
    def larger(res, size):
        backing = np.zeros(size + 64, np.uint8)
        return Buffer.from_handle(backing.ctypes.data, backing.nbytes, owner=backing)

    mr = LyingHostResource(larger)
    a, dv, sv = overlapping()
    want = a.copy()
    want[1:] = a[:-1]
    dv.copy_from(sv, allocator={"host": mr})
    np.testing.assert_array_equal(a, want)


@pytest.mark.skipif(cuda_device_count() == 0, reason="skipped: no CUDA device")
def test_device_memory_claimed_as_host_memory_is_refused():
    """A resource that says host memory but hands out device memory would
    make the host write to a device address: the driver says what it is."""
    device_mr = strided.DeviceMemoryResource(0)

    def device_buffer(res, size):
        return device_mr.allocate(size)

    mr = LyingHostResource(device_buffer)
    a, dv, sv = overlapping()
    before = a.copy()
    with pytest.raises(ValueError, match="the host allocator gave memory the host cannot reach"):
        dv.copy_from(sv, allocator={"host": mr})
    np.testing.assert_array_equal(a, before)
