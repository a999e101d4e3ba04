"""StridedMemoryView.from_array_interface of a NumPy array reads it through
the buffer protocol where that carries the same facts (plain element types;
python/view_import.c), and through __array_interface__ otherwise. Both ways
must give the same view, or the same error: checked here against the dict
way itself (an object that offers only the array's __array_interface__),
over element types, layouts and read-only arrays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strided import StridedMemoryView

PLAIN = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]
# Types the buffer protocol does not carry as a plain element (or at all):
# the import goes by the dict and must answer as it always did.
OTHER = [">f4", ">i2", "<f4", "=i8", "g", "V4", "S3", "M8[s]", "m8[ms]", "O", "U2",
         [("a", "u1"), ("b", "f4")], "i4,i2"]


class DictOnly:
    """The array's __array_interface__ and nothing else."""

    def __init__(self, a):
        self.keep = a
        self.__array_interface__ = a.__array_interface__


def outcome(make):
    try:
        v = make()
    except Exception as e:  # the error is part of what must agree
        return ("error", type(e).__name__, str(e))
    return ("view", v.ptr, v.shape, v.strides, str(v.dtype), v.dtype.itemsize, v.readonly,
            v.device_id, v.is_device_accessible, v.size, v.layout.strides,
            v.layout.slice_offset, type(v.exporting_obj).__name__)


def both_ways(a):
    fast = outcome(lambda: StridedMemoryView.from_array_interface(a))
    slow = outcome(lambda: StridedMemoryView.from_array_interface(DictOnly(a)))
    if slow[0] == "view":  # the dict way's exporter is the stand-in
        slow = slow[:-1] + ("ndarray",)
    return fast, slow


@st.composite
def arrays(draw, dtypes):
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    a = np.zeros(shape, dtype)
    if ndim:
        # Slices with steps (negative too), then maybe a permutation.
        key = tuple(slice(draw(st.integers(0, 2)), None, draw(st.sampled_from([1, 2, -1, -2])))
                    for _ in range(ndim))
        a = a[key]
        if draw(st.booleans()):
            a = a.transpose(draw(st.permutations(range(ndim))))
    if draw(st.booleans()):
        a.flags.writeable = False
    return a


@settings(max_examples=300, deadline=None)
@given(arrays(PLAIN))
def test_plain_types_give_the_same_view_both_ways(a):
    fast, slow = both_ways(a)
    assert fast == slow


@pytest.mark.parametrize("make", [
    lambda: np.zeros((2, 2, 2), "?")[::2].T,  # F-contiguous; the extent-1 axis strided 8
    lambda: np.zeros((4, 3), "f4")[::4],  # C-contiguous; the extent-1 axis strided 2 rows
    lambda: np.zeros((3, 4), "i2")[:, 4:],  # empty
], ids=["F, extent 1", "C, extent 1", "empty"])
def test_axes_of_extent_0_or_1_keep_the_arrays_own_strides(make):
    """NumPy's buffer export gives a contiguous array the strides of a
    dense one along axes of extent 0 or 1 too; the view has the array's
    own, as its dict gives them."""
    a = make()
    fast, slow = both_ways(a)
    assert fast == slow
    v = StridedMemoryView.from_array_interface(a)
    if a.size:
        assert v.strides in (None, tuple(s // a.itemsize for s in a.strides))


@settings(max_examples=150, deadline=None)
@given(arrays(OTHER))
def test_other_types_answer_as_the_dict_does(a):
    fast, slow = both_ways(a)
    assert fast == slow


@pytest.mark.parametrize("a", [np.zeros((1, 3)), np.zeros((3, 1, 2)), np.zeros((0, 4)),
                               np.array(7, np.int32), np.zeros((4, 4))[:, :1],
                               np.zeros((2, 3), np.float16).T])
def test_contiguity_is_numpys(a):
    # NumPy's dict says strides None for what it calls C-contiguous
    # (extent-1 axes have any stride); the buffer way must say the same.
    fast, slow = both_ways(a)
    assert fast == slow
    assert (fast[3] is None) == (a.__array_interface__["strides"] is None)


def test_a_subclass_goes_by_its_own_interface():
    class Shifted(np.ndarray):
        @property
        def __array_interface__(self):
            d = dict(super().__array_interface__)
            d["shape"] = (1,)
            d["strides"] = None
            return d

    s = np.arange(6, dtype=np.float32).view(Shifted)
    v = StridedMemoryView.from_array_interface(s)
    assert v.shape == (1,)


@pytest.mark.parametrize("make", [
    StridedMemoryView.from_array_interface,
    lambda a: StridedMemoryView.from_any_interface(a, stream_ptr=-1),
], ids=["from_array_interface", "from_any_interface"])
def test_the_view_keeps_the_array_alive(make):
    import gc
    import weakref

    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    ref = weakref.ref(a)
    v = make(a)
    assert v.exporting_obj is a
    del a
    gc.collect()
    assert ref() is not None
    assert np.from_dlpack(v).sum() == 66
    del v
    gc.collect()
    assert ref() is None


class WithDtype(DictOnly):
    """The array's __array_interface__ and its dtype, as CuPy's arrays show
    theirs beside their dicts."""

    def __init__(self, a):
        super().__init__(a)
        self.dtype = a.dtype


def test_a_dtype_beside_the_dict_names_only_raw_bytes():
    """The producer's dtype is read where its name can tell more than the
    type string (ml_dtypes' types, raw bytes or 1-byte floats in the dict),
    and remembered between imports: types that take turns, and one dtype
    object whose str differs from the dict's, must each keep their own
    answer."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    cases = [
        (np.zeros((4, 6), ml_dtypes.bfloat16), "bfloat16"),
        (np.zeros((4, 6), "V2"), "|V2"),
        (np.zeros((4, 6), ml_dtypes.float8_e4m3fn), "float8_e4m3fn"),
        (np.zeros((4, 6), np.float32), "float32"),
        (np.zeros((4, 6), ml_dtypes.int4), "int4"),
    ]
    for _ in range(3):
        for a, want in cases:
            v = StridedMemoryView.from_array_interface(WithDtype(a))
            assert str(v.dtype) == want
    # A dtype that is not the dict's element type says nothing.
    odd = WithDtype(np.zeros((4, 6), "V2"))
    odd.dtype = np.dtype(ml_dtypes.bfloat16)
    odd.__array_interface__ = dict(odd.__array_interface__, typestr="|V2")
    for _ in range(2):
        StridedMemoryView.from_array_interface(WithDtype(cases[0][0]))
        assert str(StridedMemoryView.from_array_interface(odd).dtype) == "|V2"


# ---- from_any_interface of a NumPy array -----------------------------------------------------


class DLPackOnly:
    """The array's DLPack export and nothing else: from_any_interface of it
    goes by __dlpack__."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def any_both_ways(a, stream_ptr=-1):
    """from_any_interface of an array (which reads it through the buffer
    protocol where it can) and of its DLPack export alone."""
    fast = outcome(lambda: StridedMemoryView.from_any_interface(a, stream_ptr=stream_ptr))
    slow = outcome(lambda: StridedMemoryView.from_any_interface(DLPackOnly(a),
                                                                stream_ptr=stream_ptr))
    if slow[0] == "view":
        slow = slow[:-1] + ("ndarray",)
    return fast, slow


@settings(max_examples=300, deadline=None)
@given(arrays(PLAIN), st.sampled_from([-1, 0]))
def test_from_any_of_an_array_is_its_dlpack_view(a, stream_ptr):
    fast, slow = any_both_ways(a, stream_ptr)
    assert fast == slow


@settings(max_examples=100, deadline=None)
@given(arrays(OTHER))
def test_from_any_of_other_types_answers_as_dlpack_does(a):
    fast, slow = any_both_ways(a)
    assert fast == slow


@pytest.mark.parametrize("stream_ptr", [1, 7, -2, 2**64, -2**70, True, 1.0, "1"])
def test_from_any_of_an_array_checks_the_stream_as_dlpack_does(stream_ptr):
    """Only -1 and 0 pass NumPy no stream: any other is refused, with the
    error the DLPack route gives."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    fast, slow = any_both_ways(a, stream_ptr)
    assert fast[0] == "error"
    assert fast == slow


# ---- which protocol an object speaks ---------------------------------------------------------


class MethodOnType:
    def __dlpack__(self, **kwargs):
        raise AssertionError("not called")

    def __dlpack_device__(self):
        return (1, 0)


class MethodOnInstance:
    def __init__(self):
        self.__dlpack__ = lambda **kwargs: None
        self.__dlpack_device__ = lambda: (1, 0)
        self.__array_interface__ = {}


class ByGetattr:
    """Every attribute comes from __getattr__."""

    def __getattr__(self, name):
        if name in ("__dlpack__", "__dlpack_device__"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


class HiddenByGetattribute(MethodOnType):
    """The type has the methods, but reading them says no."""

    def __getattribute__(self, name):
        if name in ("__dlpack__", "__dlpack_device__"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    __array_interface__ = {}


class DLPackByProperty:
    """__dlpack__ is a property that says "not for this object"."""

    @property
    def __dlpack__(self):
        raise AttributeError("not for this object")

    def __dlpack_device__(self):
        return (1, 0)

    __array_interface__ = {}


class StaticMethods:
    __dlpack__ = staticmethod(lambda **kwargs: None)
    __dlpack_device__ = staticmethod(lambda: (1, 0))


@pytest.mark.parametrize("obj, protocol", [
    (MethodOnType(), "dlpack"),
    (MethodOnInstance(), "dlpack"),
    (ByGetattr(), "dlpack"),
    (HiddenByGetattribute(), "array"),
    (DLPackByProperty(), "array"),
    (StaticMethods(), "dlpack"),
    (np.arange(3), "dlpack"),
    (np.float32(1), "array"),
])
def test_the_protocol_is_what_reading_the_attributes_finds(obj, protocol):
    """The probe skips reading methods it finds on the type; every other
    way of having or hiding an attribute is read as Python reads it."""
    assert StridedMemoryView._exchange_protocol(obj) == protocol
