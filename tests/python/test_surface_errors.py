"""The exception types a Python user expects from the surface of strided.

Bools are not integers here: True and False passed as an extent, a stride,
an itemsize, an axis, an index, a size, an address or a stream raise
TypeError naming the argument instead of reading as 1 and 0 (NumPy rejects
them in shapes and axes too). A malformed array interface raises ValueError
for a missing key and TypeError for a value of the wrong type, both naming
the key. A memory resource or an exporter of the wrong kind is a TypeError,
not an AttributeError leaking from inside.
"""

import enum
import re

import numpy as np
import pytest

from strided import (
    Buffer,
    DeviceMemoryResource,
    HostMemoryResource,
    ManagedMemoryResource,
    StridedLayout,
    StridedMemoryView,
)


def layout():
    return StridedLayout((3, 4), None, 4)


def host_view(a=None):
    a = np.arange(12, dtype=np.int32) if a is None else a
    return StridedMemoryView.from_array_interface(a)


class Color(enum.IntEnum):
    TWO = 2


def empty_cai():
    return Exporter({"version": 3, "data": (0, False), "shape": (0,), "typestr": "<f4"},
                    attr="__cuda_array_interface__")


# ---- bools where an integer is meant ---------------------------------------------

L = layout()

BOOL_CASES = [
    ("itemsize", lambda b: StridedLayout((2,), None, b)),
    (r"shape\[0\]", lambda b: StridedLayout((b,), None, 4)),
    (r"shape\[1\]", lambda b: StridedLayout((2, b), None, 4)),
    (r"strides\[0\]", lambda b: StridedLayout((2,), (b,), 4)),
    ("itemsize", lambda b: StridedLayout.dense((2,), b)),
    (r"shape\[0\]", lambda b: StridedLayout.dense((b,), 4)),
    (r"stride_order\[1\]", lambda b: StridedLayout.dense((2, 3), 4, (0, b))),
    (r"stride_order\[0\]", lambda b: L.to_dense((b, 0))),
    ("index", lambda b: L[b]),
    (r"index\[1\]", lambda b: L[0, b]),
    ("index", lambda b: L.sliced(b)),
    ("slice start", lambda b: L[b:]),
    ("slice stop", lambda b: L[:b]),
    ("slice step", lambda b: L[::b]),
    (r"axis_order\[0\]", lambda b: L.permuted((b, 0))),
    (r"shape\[0\]", lambda b: L.reshaped((b, 12))),
    ("start_axis", lambda b: L.flattened(b, 1)),
    ("end_axis", lambda b: L.flattened(0, b)),
    ("mask", lambda b: L.flattened(mask=b)),
    ("axis", lambda b: L.unsqueezed(b)),
    (r"axis\[0\]", lambda b: L.unsqueezed((b,))),
    (r"shape\[0\]", lambda b: L.broadcast_to((b, 3, 4))),
    ("itemsize", lambda b: L.repacked(b)),
    ("data_ptr", lambda b: L.repacked(8, data_ptr=b)),
    ("axis", lambda b: L.repacked(8, axis=b)),
    ("max_itemsize", lambda b: L.max_compatible_itemsize(b)),
    ("data_ptr", lambda b: L.max_compatible_itemsize(16, data_ptr=b)),
    ("axis", lambda b: L.max_compatible_itemsize(16, axis=b)),
    ("size", lambda b: HostMemoryResource().allocate(b)),
    ("alignment", lambda b: HostMemoryResource(b)),
    ("device_id", lambda b: DeviceMemoryResource(b)),
    ("device_id", lambda b: ManagedMemoryResource(b)),
    ("ptr", lambda b: Buffer.from_handle(b, 0)),
    ("size", lambda b: Buffer.from_handle(0x1000, b)),
    ("stream", lambda b: HostMemoryResource().allocate(8, stream=b)),
    ("stream_ptr", lambda b: StridedMemoryView.from_dlpack(np.zeros(3), b)),
    ("stream_ptr", lambda b: StridedMemoryView.from_cuda_array_interface(empty_cai(), b)),
]


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("name,call", BOOL_CASES, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BOOL_CASES)])
def test_bool_is_not_an_int(name, call, value):
    with pytest.raises(TypeError, match=f"^{name} must be an int(, | or None, )?not bool|^{name} must be None, an int handle"):
        call(value)
    assert L == layout()


def test_bool_rejected_but_int_like_accepted():
    # The same calls with ints, numpy ints and int subclasses other than bool work.
    for one in (1, np.int64(1), np.uint8(1)):
        assert StridedLayout((2,), (one,), 4).strides == (1,)
        assert L[one].shape == (4,)
    assert StridedLayout((Color.TWO,), None, 4).shape == (2,)
    assert L.permuted((1, 0)).shape == (4, 3)
    with pytest.raises(TypeError, match="itemsize must be an int, not numpy.bool"):
        StridedLayout((2,), None, np.True_)


def test_bool_in_array_interface_shape_and_strides():
    a = np.arange(4, dtype=np.int32)
    for key, value, label in [
        ("shape", (True,), r"__array_interface__\['shape'\]\[0\]"),
        ("strides", (False,), r"__array_interface__\['strides'\]\[0\]"),
        ("version", True, r"__array_interface__\['version'\]"),
    ]:
        d = dict(a.__array_interface__, shape=(1,), strides=None)
        d[key] = value
        with pytest.raises(TypeError, match=f"^{label} must be an int, not bool$"):
            StridedMemoryView.from_array_interface(Exporter(d, a))


def test_bool_as_cuda_stream_handle():
    class Stream:
        def __init__(self, info):
            self.info = info

        def __cuda_stream__(self):
            return self.info

    mr = HostMemoryResource()
    with pytest.raises(TypeError, match=r"^__cuda_stream__\(\) handle must be an int, not bool$"):
        mr.allocate(8, stream=Stream((0, True)))
    with pytest.raises(TypeError, match=r"^__cuda_stream__\(\) version must be an int, not bool$"):
        mr.allocate(8, stream=Stream((False, 0)))
    mr.allocate(8, stream=Stream((0, 0))).close()


# ---- array interfaces --------------------------------------------------------------


class Exporter:
    """An object exposing the array interface dict d (and keeping base alive)."""

    def __init__(self, d, base=None, attr="__array_interface__"):
        setattr(self, attr, d)
        self.base = base


def complete(a):
    d = dict(a.__array_interface__)
    d.setdefault("version", 3)
    return d


@pytest.mark.parametrize("key", ["version", "data", "shape", "typestr"])
def test_array_interface_missing_key(key):
    a = np.arange(6, dtype=np.int16)
    d = complete(a)
    del d[key]
    with pytest.raises(ValueError, match=f"^__array_interface__ is missing the required key '{key}'$"):
        StridedMemoryView.from_array_interface(Exporter(d, a))


@pytest.mark.parametrize("key", ["version", "data", "shape", "typestr"])
def test_cuda_array_interface_missing_key(key):
    d = {"version": 3, "data": (0, False), "shape": (0,), "typestr": "<f4"}
    del d[key]
    with pytest.raises(ValueError, match=f"^__cuda_array_interface__ is missing the required key '{key}'$"):
        StridedMemoryView.from_cuda_array_interface(Exporter(d, attr="__cuda_array_interface__"), -1)


@pytest.mark.parametrize("key,value,message", [
    ("shape", 6, r"^__array_interface__\['shape'\] must be a tuple of ints, got int$"),
    ("shape", "6", r"^__array_interface__\['shape'\] must be a tuple of ints, got str$"),
    ("shape", {6: 1}, r"^__array_interface__\['shape'\] must be a tuple of ints, got dict$"),
    ("shape", (6.0,), r"^__array_interface__\['shape'\]\[0\] must be an int, not float$"),
    ("shape", (None,), r"^__array_interface__\['shape'\]\[0\] must be an int, not NoneType$"),
    ("strides", 2, r"^__array_interface__\['strides'\] must be a tuple of ints, got int$"),
    ("strides", ("2",), r"^__array_interface__\['strides'\]\[0\] must be an int, not str$"),
    ("data", 5, r"^__array_interface__\['data'\] must be a \(ptr, readonly\) tuple$"),
    ("data", (5,), r"^__array_interface__\['data'\] must be a \(ptr, readonly\) tuple$"),
    ("data", [5, False], r"^__array_interface__\['data'\] must be a \(ptr, readonly\) tuple$"),
    ("data", (True, False), r"^__array_interface__\['data'\]\[0\] must be an int, not bool$"),
    ("typestr", 5, r"^__array_interface__\['typestr'\] must be a str, got int$"),
    ("typestr", b"<i2", r"^__array_interface__\['typestr'\] must be a str, got bytes$"),
    ("version", "3", r"^__array_interface__\['version'\] must be an int, not str$"),
    ("version", None, r"^__array_interface__\['version'\] must be an int, not NoneType$"),
])
def test_array_interface_wrong_value_type(key, value, message):
    a = np.arange(6, dtype=np.int16)
    d = complete(a)
    d["strides"] = (2,)
    d[key] = value
    with pytest.raises(TypeError, match=message):
        StridedMemoryView.from_array_interface(Exporter(d, a))


def test_cuda_array_interface_wrong_stream_type():
    d = {"version": 3, "data": (0, False), "shape": (0,), "typestr": "<f4", "stream": "1"}
    with pytest.raises(TypeError, match=r"^__cuda_array_interface__\['stream'\] must be an int, not str$"):
        StridedMemoryView.from_cuda_array_interface(Exporter(d, attr="__cuda_array_interface__"), 7)


def test_array_interface_keys_still_work():
    a = np.arange(6, dtype=np.int16)
    d = complete(a)
    d["shape"] = [6]
    d["strides"] = [2]
    v = StridedMemoryView.from_array_interface(Exporter(d, a))
    assert v.shape == (6,) and v.strides == (1,) and v.ptr == a.ctypes.data


# ---- memory resources ------------------------------------------------------------------


class NoDeallocate:
    is_host_accessible = True
    is_device_accessible = False


class NoHostFlag:
    is_device_accessible = False

    def deallocate(self, ptr, size, stream=None):
        pass


@pytest.mark.parametrize("mr", [object(), 5, "host", NoDeallocate(), NoHostFlag()])
def test_bad_mr_is_a_type_error(mr):
    a = np.zeros(8, np.uint8)
    with pytest.raises(TypeError, match=f"^mr must be a memory resource .*got {type(mr).__name__}$") as e:
        Buffer.from_handle(a.ctypes.data, 8, mr=mr)
    assert isinstance(e.value.__cause__, AttributeError)


def test_memory_resource_class_is_not_a_memory_resource():
    a = np.zeros(8, np.uint8)
    with pytest.raises(TypeError, match=r"^mr must be a memory resource, got the class strided.HostMemoryResource \(pass an instance\)$"):
        Buffer.from_handle(a.ctypes.data, 8, mr=HostMemoryResource)


@pytest.mark.parametrize("form", ["dict", "options"])
@pytest.mark.parametrize("side", ["host", "device"])
def test_bad_allocator_resource_is_a_type_error(form, side):
    from strided import CopyAllocatorOptions

    a = np.zeros((2, 5), np.int32)
    b = np.ones((2, 5), np.int32)
    dst, src = host_view(a), host_view(b)
    allocator = {side: object()} if form == "dict" else CopyAllocatorOptions(**{side: object()})
    label = f"allocator['{side}']" if form == "dict" else f"allocator.{side}"
    with pytest.raises(TypeError, match=f"^{re.escape(label)} must be a memory resource .*allocate"):
        dst.copy_from(src, allocator=allocator)
    assert (a == 0).all()


# ---- objects that are not exporters ----------------------------------------------------


@pytest.mark.parametrize("obj", [[1, 2], (1,), 3, None, "abc", {"a": 1}])
def test_from_dlpack_of_a_non_exporter(obj):
    with pytest.raises(TypeError, match=rf"^StridedMemoryView.from_dlpack\(\) expects an object with __dlpack__ and __dlpack_device__, got {type(obj).__name__}$"):
        StridedMemoryView.from_dlpack(obj, -1)


def test_from_dlpack_without_dunder_dlpack():
    class DeviceOnly:
        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match="got DeviceOnly$"):
        StridedMemoryView.from_dlpack(DeviceOnly(), -1)


def test_attribute_error_inside_dlpack_propagates():
    class Broken:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None, max_version=None):
            raise AttributeError("inside the producer")

    with pytest.raises(AttributeError, match="^inside the producer$"):
        StridedMemoryView.from_dlpack(Broken(), -1)


@pytest.mark.parametrize("obj", [[1], 3, None, b"x"])
def test_from_array_interfaces_of_a_non_exporter(obj):
    name = type(obj).__name__
    with pytest.raises(TypeError, match=rf"^StridedMemoryView.from_array_interface\(\) expects an object with __array_interface__, got {name}$"):
        StridedMemoryView.from_array_interface(obj)
    with pytest.raises(TypeError, match=rf"^StridedMemoryView.from_cuda_array_interface\(\) expects an object with __cuda_array_interface__, got {name}$"):
        StridedMemoryView.from_cuda_array_interface(obj, -1)


@pytest.mark.parametrize("method", ["copy_from", "copy_to"])
def test_copy_with_a_list(method):
    v = host_view()
    with pytest.raises(TypeError, match=f"^{method}: other must be a StridedMemoryView, got list$"):
        getattr(v, method)([1, 2])


# ---- flattened ---------------------------------------------------------------------


@pytest.mark.parametrize("start,end", [(1, 0), (2, 0), (-1, 0), (2, -2), (-1, -3)])
def test_flattened_start_after_end(start, end):
    lay = StridedLayout.dense((2, 3, 4), 4)
    with pytest.raises(ValueError, match="start axis .* comes after end axis"):
        lay.flattened(start, end)


@pytest.mark.parametrize("start,end", [(0, 0), (1, 1), (-1, 2), (2, -1)])
def test_flattened_start_equal_end_is_a_no_op(start, end):
    lay = StridedLayout.dense((2, 3, 4), 4)
    assert lay.flattened(start, end) == lay


# ---- addresses -----------------------------------------------------------------------------


@pytest.mark.parametrize("ptr", [1.5, 4096.0, np.float32(16), "4096", b"16"])
def test_address_is_not_a_float_or_a_string(ptr):
    # int() would truncate or parse these into an address; deallocate would
    # then free it.
    with pytest.raises(TypeError, match=f"^ptr must be an int, not .*{re.escape(type(ptr).__name__)}$"):
        Buffer.from_handle(ptr, 0)
    with pytest.raises(TypeError, match="^ptr must be an int, not"):
        HostMemoryResource().deallocate(ptr, 8)


def test_address_objects_with_int_still_work():
    class DevicePointer:
        def __int__(self):
            return 0x1000

    assert Buffer.from_handle(DevicePointer(), 0).handle == 0x1000
    assert Buffer.from_handle(np.uint64(0x2000), 0).handle == 0x2000


@pytest.mark.parametrize("ptr,message", [(-1, "^ptr -1 is negative$"),
                                         (2**64, f"^ptr {2**64} does not fit in a pointer$")])
def test_address_out_of_range(ptr, message):
    with pytest.raises(OverflowError, match=message):
        Buffer.from_handle(ptr, 0)


def test_stream_ptr_is_an_int():
    with pytest.raises(TypeError, match="^stream_ptr must be an int, not float$"):
        StridedMemoryView.from_dlpack(np.zeros(3), 1.5)
    with pytest.raises(TypeError, match="^stream_ptr must be an int, not str$"):
        StridedMemoryView.from_dlpack(np.zeros(3), "-1")
    assert StridedMemoryView.from_dlpack(np.zeros(3), -1).shape == (3,)


# ---- copy allocators -----------------------------------------------------------------------


class Allocator:
    is_host_accessible = True
    is_device_accessible = False

    def __init__(self, make):
        self.make = make

    def allocate(self, size, stream=None):
        return self.make(size)

    def deallocate(self, ptr, size, stream=None):
        pass


def overlapping(n=6):
    """dst = a[1:], src = a[:-1]: an overlapping copy, which needs a temporary."""
    a = np.arange(n * n, dtype=np.int32).reshape(n, n)
    whole = StridedMemoryView.from_array_interface(a)
    return a, whole.view(whole.layout[1:]), whole.view(whole.layout[:-1])


def test_allocator_buffer_too_small_is_refused():
    kept = []

    def small(size):
        backing = np.full(size + 64, 0xAB, np.uint8)
        kept.append(backing)
        return Buffer.from_handle(backing.ctypes.data, 8, owner=backing)

    a, dst, src = overlapping()
    before = a.copy()
    with pytest.raises(ValueError, match="fewer bytes than asked for"):
        dst.copy_from(src, allocator={"host": Allocator(small)})
    assert (kept[0][8:] == 0xAB).all()  # nothing written past its end
    assert (a == before).all()


@pytest.mark.parametrize("result", [None, 5, object()])
def test_allocator_result_without_handle(result):
    a, dst, src = overlapping()
    with pytest.raises(TypeError, match=r"^allocator.allocate\(\) must return a Buffer \(an object with handle"):
        dst.copy_from(src, allocator={"host": Allocator(lambda size: result)})


def test_allocator_handle_negative():
    class Held:
        handle = -8
        size = 1 << 20

    a, dst, src = overlapping()
    with pytest.raises(OverflowError, match=r"^allocator.allocate\(\).handle -8 is negative$"):
        dst.copy_from(src, allocator={"host": Allocator(lambda size: Held())})
