"""strided.StridedMemoryView (docs/views.md): DLPack and array-interface
import, from_buffer in both forms (a StridedLayout, or shape and strides),
view(), DLPack export and lifetimes, with cuda.core's error types and
messages. Host memory only; NumPy is the producer and the oracle."""

import gc
import sys

import numpy as np
import pytest

from strided import Buffer, HostMemoryResource, StridedLayout, StridedMemoryView

kDLCPU = 1

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128,
          np.bool_]

try:
    import ml_dtypes

    DTYPES.append(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    ml_dtypes = None


def sample(dtype, shape=(4, 6)):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    return (a % 2).astype(dtype) if dtype is np.bool_ else a.astype(dtype)


def SHAPES():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    return {
        "c": base,
        "f": np.asfortranarray(base),
        "g": base[:, ::2],
        "t": base.T,
        "n": np.arange(7, dtype=np.float64)[::-1],
        "n2": base[::-1, ::-2],
        "0d": np.array(3.5),
        "empty": np.empty((0, 3)),
    }


def byte_strides(view):
    if view.strides is None:
        return None
    return tuple(s * view.dtype.itemsize for s in view.strides)


def check_matches(view, a):
    assert view.ptr == a.ctypes.data
    assert view.shape == a.shape
    assert view.size == a.size
    assert view.dtype == a.dtype
    assert view.device_id == -1
    assert not view.is_device_accessible
    assert view.readonly == (not a.flags.writeable)
    if view.strides is None:
        assert a.flags.c_contiguous
    elif a.size > 0:
        assert byte_strides(view) == a.strides


# ---- DLPack import and export ---------------------------------------------


@pytest.mark.parametrize("name", list(SHAPES()))
def test_dlpack_round_trip_layouts(name):
    a = SHAPES()[name]
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    check_matches(v, a)
    assert v.exporting_obj is a
    assert v.buffer is None
    b = np.from_dlpack(v)
    assert b.shape == a.shape
    np.testing.assert_array_equal(b, a)
    if a.size > 0:
        assert b.ctypes.data == a.ctypes.data
        assert b.strides == a.strides


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_dlpack_round_trip_dtypes(dtype):
    a = sample(dtype)[:, 1::2]
    if np.dtype(dtype).kind == "V":
        # NumPy does not export ml_dtypes' types by DLPack (and the array
        # interface spells them V2): go through a view of a Buffer, which
        # strided exports.
        start = a.ctypes.data - a.base.ctypes.data
        buf = Buffer.from_handle(a.ctypes.data, a.base.nbytes - start, owner=a)
        src = StridedMemoryView.from_buffer(buf, a.shape, tuple(x // a.itemsize for x in a.strides), dtype=a.dtype)
        v = StridedMemoryView.from_dlpack(src, stream_ptr=-1)
        check_matches(v, a)
        assert v.dtype == np.dtype(dtype)
        assert v.__dlpack_device__() == (kDLCPU, 0)
        # The array interface spells bfloat16 '<V2': reinterpret.
        np.testing.assert_array_equal(np.asarray(v).view(a.dtype), a)
        return
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    check_matches(v, a)
    assert v.dtype == np.dtype(dtype)
    b = np.from_dlpack(v)
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(b, a)


def test_readonly_array_gives_readonly_view():
    a = np.arange(6, dtype=np.int32)
    a.flags.writeable = False
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.readonly
    b = np.from_dlpack(v)
    assert not b.flags.writeable
    assert StridedMemoryView.from_array_interface(a).readonly


def test_writes_reach_the_producer():
    a = np.zeros((3, 4), dtype=np.int16)
    v = StridedMemoryView.from_dlpack(a[:, 1:], stream_ptr=-1)
    np.from_dlpack(v)[...] = 7
    assert (a[:, 1:] == 7).all() and (a[:, 0] == 0).all()


def test_dlpack_device():
    v = StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=-1)
    assert v.__dlpack_device__() == (kDLCPU, 0)


def test_capsule_names():
    v = StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=-1)
    assert '"dltensor"' in repr(v.__dlpack__())
    assert '"dltensor_versioned"' in repr(v.__dlpack__(max_version=(1, 0)))
    assert '"dltensor"' in repr(v.__dlpack__(max_version=(0, 8)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dl_device": ()}, r"^dl_device must be None or a \(device_type, device_id\) tuple"),
        ({"dl_device": (2, 0)}, r"^dl_device \(2, 0\) is not supported for a view on device"),
        ({"copy": False, "stream": 3}, "^stream=3 is not valid for a view of host memory"),
        ({"max_version": ()}, r"^Expected max_version tuple\[int, int\], got \(\)$"),
        ({"max_version": (9, 8, 7)}, r"^Expected max_version tuple\[int, int\], got \(9, 8, 7\)$"),
        ({"max_version": "1.0"}, r"^Expected max_version tuple\[int, int\]"),
    ],
)
def test_dunder_dlpack_errors(kwargs, message):
    v = StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=-1)
    with pytest.raises(BufferError, match=message):
        v.__dlpack__(**kwargs)


def test_dunder_dlpack_copy_false_and_stream_accepted():
    v = StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=-1)
    assert "dltensor" in repr(v.__dlpack__(copy=False, stream=None))


def test_dunder_dlpack_is_keyword_only():
    v = StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=-1)
    with pytest.raises(TypeError):
        v.__dlpack__(None)


def test_export_requires_dtype():
    buf = HostMemoryResource().allocate(16)
    v = StridedMemoryView.from_buffer(buf, shape=(16,), itemsize=1, dtype=None)
    assert v.dtype is None
    with pytest.raises(BufferError, match="dtype"):
        v.__dlpack__()


def test_export_rejects_structured_and_non_native():
    buf = HostMemoryResource().allocate(64)
    v = StridedMemoryView.from_buffer(buf, (4,), dtype=np.dtype(">i4"))
    with pytest.raises(BufferError, match="^Non-native-endian dtypes are not supported"):
        v.__dlpack__()
    s = StridedMemoryView.from_buffer(buf, (4,), dtype=np.dtype([("a", "i4"), ("b", "i4")]))
    with pytest.raises(BufferError, match="^Structured dtypes are not supported"):
        s.__dlpack__()


def test_from_dlpack_stream_none_for_cpu():
    with pytest.raises(BufferError, match="^stream=None is ambiguous with view\\(\\); for host "
                                          "memory pass stream_ptr=-1$"):
        StridedMemoryView.from_dlpack(np.arange(3))
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=None)


class Producer:
    """A DLPack producer that hands out NumPy's capsule and records calls."""

    def __init__(self, array, device=(kDLCPU, 0), versioned=True):
        self.array = array
        self.device = device
        self.versioned = versioned
        self.calls = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None):
        self.calls.append((stream, max_version))
        if not self.versioned:
            return self.array.__dlpack__(stream=stream)
        return self.array.__dlpack__(stream=stream, max_version=max_version)


class OldProducer(Producer):
    def __dlpack__(self, stream=None):
        self.calls.append((stream,))
        return self.array.__dlpack__(stream=stream)


def test_unsupported_device_type():
    p = Producer(np.arange(3), device=(10, 0))  # ROCm
    with pytest.raises(BufferError, match="^device not supported$"):
        StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert p.calls == []


def test_producer_gets_stream_none_and_max_version():
    p = Producer(np.arange(3))
    StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert p.calls == [(None, (1, 3))]
    StridedMemoryView.from_dlpack(p, stream_ptr=0)
    assert p.calls[-1] == (None, (1, 3))


def test_old_producer_retried_without_max_version():
    a = np.arange(5, dtype=np.int16)
    p = OldProducer(a)
    v = StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert v.exporting_obj is p
    assert v.ptr == a.ctypes.data
    np.testing.assert_array_equal(np.from_dlpack(v), a)


@pytest.mark.parametrize("versioned", [True, False])
def test_deleter_runs_once_and_refcounts_return(versioned):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    p = Producer(a, versioned=versioned)
    gc.collect()
    a_base, p_base = sys.getrefcount(a), sys.getrefcount(p)
    v = StridedMemoryView.from_dlpack(p, stream_ptr=-1)
    assert sys.getrefcount(p) > p_base
    assert sys.getrefcount(a) > a_base  # NumPy's tensor holds the array
    w = v.view(v.layout[1:, ::2])
    cap = w.__dlpack__(max_version=(1, 0))
    b = np.from_dlpack(v)
    arr_iface = np.asarray(w)
    del v, w
    gc.collect()
    assert sys.getrefcount(a) > a_base  # still held by the exported tensors
    del cap, b, arr_iface
    gc.collect()
    # NumPy's deleter drops its reference to the array exactly once.
    assert sys.getrefcount(a) == a_base
    assert sys.getrefcount(p) == p_base


def test_view_leak_numpy():
    a = np.arange(10)
    base = sys.getrefcount(a)
    for _ in range(10):
        StridedMemoryView.from_dlpack(a, stream_ptr=-1)
        StridedMemoryView.from_array_interface(a)
    gc.collect()
    assert sys.getrefcount(a) == base


def test_unconsumed_export_capsule_frees():
    a = np.arange(4)
    base = sys.getrefcount(a)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    caps = [v.__dlpack__(), v.__dlpack__(max_version=(1, 2))]
    del v, caps
    gc.collect()
    assert sys.getrefcount(a) == base


def test_refcount_tuples_not_over_released():
    a = np.empty((64, 4), dtype=np.uint8, order="F")
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.shape[0] == 64
    assert v.strides == (1, 64)
    s = v.shape
    assert sys.getrefcount(s) >= 2


# ---- array interface -------------------------------------------------------


@pytest.mark.parametrize("name", list(SHAPES()))
def test_from_array_interface(name):
    a = SHAPES()[name]
    v = StridedMemoryView.from_array_interface(a)
    check_matches(v, a)
    assert v.exporting_obj is a
    if a.flags.c_contiguous and a.ndim > 0:
        assert v.strides is None
    np.testing.assert_array_equal(np.asarray(v), a)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if np.dtype(d).kind != "V"], ids=lambda d: np.dtype(d).name)
def test_array_interface_round_trip_dtypes(dtype):
    a = sample(dtype).T
    v = StridedMemoryView.from_array_interface(a)
    check_matches(v, a)
    b = np.asarray(v)
    assert b.dtype == a.dtype
    assert b.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(b, a)


def test_array_interface_of_dlpack_view():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::2]
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    ai = v.__array_interface__
    assert ai["version"] == 3
    assert ai["typestr"] == "<i4"
    assert ai["data"] == (a.ctypes.data, False)
    assert ai["shape"] == (4, 3)
    assert ai["strides"] == (24, 8)
    b = np.asarray(v)
    np.testing.assert_array_equal(b, a)


def test_array_interface_errors():
    class AI:
        def __init__(self, **d):
            self.__array_interface__ = d

    a = np.arange(4, dtype=np.int32)
    good = dict(a.__array_interface__)
    with pytest.raises(BufferError, match="^only NumPy Array Interface v3 or above"):
        StridedMemoryView.from_array_interface(AI(**{**good, "version": 2}))
    with pytest.raises(BufferError, match="^mask is not supported$"):
        StridedMemoryView.from_array_interface(AI(**{**good, "mask": a}))
    with pytest.raises(ValueError, match="divisible"):
        StridedMemoryView.from_array_interface(AI(**{**good, "strides": (2,)}))


def test_array_interface_device_id_is_minus_one():
    v = StridedMemoryView.from_array_interface(np.arange(3))
    assert v.device_id == -1
    assert v.__dlpack_device__() == (kDLCPU, 0)


# ---- from_buffer -----------------------------------------------------------


@pytest.fixture
def mr():
    return HostMemoryResource()


@pytest.mark.parametrize("shape", [(), (2, 3), (10, 10), (10, 13, 11)])
@pytest.mark.parametrize("dtype", [np.int8, np.uint32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("readonly", [False, True])
def test_from_buffer_shape_form(mr, shape, dtype, order, readonly):
    dtype = np.dtype(dtype)
    layout = StridedLayout.dense(shape, dtype.itemsize, order)
    buf = mr.allocate(layout.required_size_in_bytes())
    strides = layout.strides
    v = StridedMemoryView.from_buffer(buf, shape, strides, dtype=dtype, is_readonly=readonly)
    assert v.exporting_obj is buf
    assert v.buffer is buf
    assert v.layout == layout
    assert v._layout == layout
    assert v.ptr == buf.handle
    assert v.shape == shape
    assert v.strides == strides
    assert v.dtype == dtype
    assert v.device_id == buf.device_id
    assert v.is_device_accessible == buf.is_device_accessible
    assert v.readonly == readonly
    a = np.from_dlpack(v)
    assert a.ctypes.data == buf.handle
    assert a.flags.writeable == (not readonly)


@pytest.mark.parametrize("readonly", [False, True])
def test_from_buffer_layout_form(mr, readonly):
    layout = StridedLayout((5, 7), None, 2)
    buf = mr.allocate(70)
    v = StridedMemoryView.from_buffer(buf, layout, is_readonly=readonly)
    assert v.layout is layout
    assert v.dtype is None
    assert v.strides is None
    assert v.readonly == readonly
    w = StridedMemoryView.from_buffer(buf, layout, np.int16)
    assert w.layout is layout and w.dtype == np.int16
    k = StridedMemoryView.from_buffer(buffer=buf, layout=layout, dtype=np.float16)
    assert k.layout is layout and k.dtype == np.float16
    with pytest.raises(TypeError):
        StridedMemoryView.from_buffer(buf, layout, itemsize=2)
    with pytest.raises(TypeError):
        StridedMemoryView.from_buffer(buf, layout, strides=(7, 1))
    with pytest.raises(ValueError, match=r"^The dtype's itemsize \(4\) does not match the layout's itemsize \(2\)\.$"):
        StridedMemoryView.from_buffer(buf, layout, np.int32)


def test_from_buffer_itemsize_only(mr):
    buf = mr.allocate(16)
    v = StridedMemoryView.from_buffer(buf, (4, 4), itemsize=1)
    assert v.dtype is None and v.layout.itemsize == 1 and v.size == 16


def test_from_buffer_incompatible_dtype_and_itemsize(mr):
    buf = mr.allocate(16)
    with pytest.raises(ValueError, match=r"^itemsize \(1\) does not match dtype.itemsize \(2\)$"):
        StridedMemoryView.from_buffer(buf, (4,), itemsize=1, dtype=np.dtype(np.int16))
    with pytest.raises(ValueError, match="^Either itemsize or dtype must be specified$"):
        StridedMemoryView.from_buffer(buf, (4,))


def test_from_buffer_too_small(mr):
    buf = mr.allocate(20)
    with pytest.raises(ValueError, match=r"^Buffer size is too small for the layout\. Expected at least 40 bytes, got 20 bytes\.$"):
        StridedMemoryView.from_buffer(buf, (5, 4), itemsize=2)


def test_from_buffer_disallowed_negative_offset(mr):
    buf = mr.allocate(20)
    with pytest.raises(ValueError, match="negative memory offsets is ambiguous. The layout's min_offset is -16."):
        StridedMemoryView.from_buffer(buf, (5, 4), (-4, 1), itemsize=1)


def test_from_buffer_wrapped_too_small():
    a = np.zeros(8, dtype=np.uint8)
    buf = Buffer.from_handle(a.ctypes.data, 8, owner=a)
    with pytest.raises(ValueError, match="Expected at least 16 bytes, got 8 bytes"):
        StridedMemoryView.from_buffer(buf, (16,), itemsize=1)
    empty = Buffer.from_handle(a.ctypes.data, 0, owner=a)
    assert StridedMemoryView.from_buffer(empty, (0, 3), itemsize=1).size == 0


def test_from_buffer_closed(mr):
    buf = mr.allocate(8)
    buf.close()
    with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
        StridedMemoryView.from_buffer(buf, (8,), itemsize=1)


def test_view_outlives_closed_buffer(mr):
    buf = mr.allocate(16)
    v = StridedMemoryView.from_buffer(buf, (4,), dtype=np.int32)
    np.from_dlpack(v)[...] = [1, 2, 3, 4]
    buf.close()
    np.testing.assert_array_equal(np.from_dlpack(v), [1, 2, 3, 4])


def test_from_buffer_non_power_of_two_itemsize(mr):
    dt = np.dtype([("a", "i1"), ("b", "i4")], align=False)
    assert dt.itemsize == 5
    buf = mr.allocate(50)
    v = StridedMemoryView.from_buffer(buf, (10,), dtype=dt)
    assert v.dtype == dt
    assert np.asarray(v).dtype == dt


@pytest.mark.parametrize("order, offset", [("C", 3), ("F", 15)])
def test_from_buffer_sliced(mr, order, offset):
    layout = StridedLayout.dense((5, 7), 2, order)
    buf = mr.allocate(layout.required_size_in_bytes())
    v = StridedMemoryView.from_buffer(buf, layout, np.int16)
    sliced = layout[:-2, 3:]
    w = v.view(sliced)
    assert w.shape == (3, 4)
    assert w.layout is sliced
    assert sliced.slice_offset == offset
    assert w.ptr == v.ptr + offset * 2
    assert w.exporting_obj is buf
    assert w.dtype == np.int16


# ---- view() ----------------------------------------------------------------


def test_view_both_none_is_self():
    v = StridedMemoryView.from_dlpack(np.arange(3), stream_ptr=-1)
    assert v.view() is v
    assert v.view(None, None) is v


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(
    "shape, key",
    [((5, 6), (2, slice(1, -1))), ((10, 13, 11), (slice(None, None, 2), slice(None, None, -1), slice(2, -3)))],
)
def test_view_sliced_external(order, shape, key):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape, order=order)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    layout = v.layout
    assert layout.is_dense
    assert layout.required_size_in_bytes() == a.nbytes
    w = v.view(layout[key])
    expected = a[key]
    assert w.ptr == expected.ctypes.data
    assert not w.layout.is_dense
    assert w.dtype == a.dtype
    assert w.layout.itemsize == a.itemsize
    assert w.shape == expected.shape
    assert tuple(s * a.itemsize for s in w.layout.strides) == expected.strides
    assert isinstance(w.exporting_obj, Buffer)
    assert w.exporting_obj.owner is a
    assert w.buffer is w.exporting_obj
    assert w.device_id == -1
    np.testing.assert_array_equal(np.from_dlpack(w), expected)


@pytest.mark.parametrize("source", ["dlpack", "array_interface"])
def test_view_sliced_external_negative_offset(source):
    a = np.arange(5, dtype=np.float64)[::-1]
    if source == "dlpack":
        v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    else:
        v = StridedMemoryView.from_array_interface(a)
    assert v.strides == (-1,)
    w = v.view(v.layout[3:])
    assert w.ptr == v.ptr - 3 * a.itemsize
    np.testing.assert_array_equal(np.from_dlpack(w), a[3:])


def test_view_outside_footprint():
    a = np.arange(5, dtype=np.float64)[::-1]
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    with pytest.raises(ValueError, match=r"^The layout addresses bytes \[32, 72\) of the buffer, outside its range \[0, 40\)\.$"):
        v.view(StridedLayout((5,), (1,), 8))


def test_view_reinterpret_repacked():
    a = np.arange(12, dtype=np.float32)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    w = v.view(v.layout.repacked(8), np.complex64)
    assert w.dtype == np.complex64
    assert w.shape == (6,)
    np.testing.assert_array_equal(np.from_dlpack(w), a.view(np.complex64))
    with pytest.raises(ValueError, match=r"The dtype's itemsize \(4\) does not match the layout's itemsize \(8\)"):
        v.view(v.layout.repacked(8))


def test_view_dtype_only():
    a = np.arange(4, dtype=np.int32)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    w = v.view(dtype=np.float32)
    assert w.dtype == np.float32 and w.ptr == v.ptr
    np.testing.assert_array_equal(np.from_dlpack(w), a.view(np.float32))
    with pytest.raises(ValueError, match="itemsize"):
        v.view(dtype=np.int64)


def test_view_inherits_readonly():
    a = np.arange(4, dtype=np.int32)
    a.flags.writeable = False
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.view(v.layout[1:]).readonly


def test_view_wrapper_buffer_memoised():
    a = np.arange(10, dtype=np.int8)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    w1, w2 = v.view(v.layout[1:]), v.view(v.layout[2:])
    assert w1.exporting_obj is w2.exporting_obj
    assert w1.exporting_obj.size == a.nbytes
    assert v.buffer is None


def test_zero_size_views():
    for shape in [(0,), (0, 0), (0, 0, 0)]:
        for dtype in [np.int64, np.uint8, np.float64]:
            a = np.empty(shape, dtype=dtype)
            v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
            assert v.size == 0 and v.shape == shape and v.dtype == dtype
            assert np.from_dlpack(v).shape == shape


def test_repr():
    a = np.arange(3, dtype=np.int32)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    text = repr(v)
    assert text.startswith(f"StridedMemoryView(ptr={a.ctypes.data},\n" + " " * 18 + "shape=(3,),\n")
    assert "dtype=numpy.dtypes.Int32DType" in text
    assert "device_id=-1" in text
    assert text.endswith("exporting_obj=numpy.ndarray)")


def test_class_is_final():
    with pytest.raises(TypeError):
        type("Sub", (StridedMemoryView,), {})


class _SelfViewing:
    """A producer that keeps a view of itself: a reference cycle through the
    C buffer's hidden reference to the exporter."""

    a = np.zeros(3)

    @property
    def __array_interface__(self):
        return self.a.__array_interface__


def test_array_interface_producer_holding_its_view_is_collected():
    import weakref

    o = _SelfViewing()
    o.v = StridedMemoryView.from_array_interface(o)
    ref = weakref.ref(o)
    del o
    gc.collect()
    assert ref() is None


ML_NAMES = ["bfloat16", "float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz",
            "float8_e8m0fnu", "float8_e3m4", "float8_e4m3"]


@pytest.mark.skipif(ml_dtypes is None, reason="needs ml_dtypes")
@pytest.mark.parametrize("name", ML_NAMES)
def test_ml_dtypes_export_and_import(name):
    # float8_e5m2 says kind "f" like numpy's floats; the others say "V".
    if not hasattr(ml_dtypes, name):
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} has no {name}")
    dtype = np.dtype(getattr(ml_dtypes, name))
    a = np.arange(6).astype(dtype)
    buf = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    view = StridedMemoryView.from_buffer(buf, (2, 3), dtype=dtype)
    again = StridedMemoryView.from_dlpack(view, stream_ptr=-1)
    assert again.dtype == dtype
    assert again.ptr == a.ctypes.data
    assert again.shape == (2, 3)
    assert again.strides in (None, (3, 1))
