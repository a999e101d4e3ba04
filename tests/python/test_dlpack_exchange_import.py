"""StridedMemoryView.from_dlpack through a producer's DLPack C exchange API
(type(obj).__dlpack_c_exchange_api__; python/view_import.c), against a
ctypes producer over NumPy arrays (exchange_producer.py): the same views and
errors as the __dlpack__ protocol, no __dlpack__ call, the stream rules, the
table's version, lifetimes. The in-place route of torch tensors
(dltensor_from_py_object_no_sync) is in test_view_torch_path.py; real
PyTorch in test_view_gpu.py."""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exchange_producer import CALLS, ByProtocol, Producer, exchange_capsule, facts
from strided import StridedMemoryView as SMV

DTYPES = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16"]


@st.composite
def arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).astype(dtype).reshape(shape)
    if ndim:
        a = a[tuple(slice(None, None, draw(st.sampled_from([1, 2, -1]))) for _ in range(ndim))]
        if draw(st.booleans()):
            a = a.transpose(draw(st.permutations(range(ndim))))
    if draw(st.booleans()):
        a.flags.writeable = False
    return a


@settings(max_examples=200, deadline=None)
@given(arrays())
def test_the_exchange_api_gives_the_views_of_the_protocol(a):
    before = CALLS["managed"]
    v = SMV.from_dlpack(Producer(a), stream_ptr=-1)
    assert CALLS["managed"] == before + 1
    assert facts(v) == facts(SMV.from_dlpack(ByProtocol(a), stream_ptr=-1))
    assert type(v.exporting_obj) is Producer
    assert np.array_equal(np.from_dlpack(v), a)


def test_errors_are_the_protocols():
    a = np.zeros(3, np.float32)
    for obj in (Producer(a), ByProtocol(a)):
        with pytest.raises(BufferError, match="stream=None is ambiguous"):
            SMV.from_dlpack(obj, None)
    # Streams are checked as every import checks them (a producer's
    # __dlpack__ would answer for itself: NumPy refuses any).
    with pytest.raises(ValueError, match="stream_ptr"):
        SMV.from_dlpack(Producer(a), -2)
    with pytest.raises(OverflowError):
        SMV.from_dlpack(Producer(a), 2**64)
    with pytest.raises(TypeError):
        SMV.from_dlpack(Producer(a), 1.5)


def test_the_producers_failures_come_through():
    with pytest.raises(BufferError, match="failed in managed_tensor_from_py_object_no_sync"):
        SMV.from_dlpack(Producer(np.zeros(2), fail=True), -1)
    with pytest.raises(BufferError, match="gave no tensor"):
        SMV.from_dlpack(Producer(np.zeros(2), give_none=True), -1)
    with pytest.raises(BufferError, match="major version"):
        SMV.from_dlpack(Producer(np.zeros(2), major=2), -1)


def test_no_stream_is_asked_for_host_memory():
    before = CALLS["stream"]
    SMV.from_dlpack(Producer(np.zeros(2)), 0)
    SMV.from_dlpack(Producer(np.zeros(2)), -1)
    assert CALLS["stream"] == before


def test_the_tables_version_decides():
    a = np.arange(4.0)
    newer = exchange_capsule(minor=5)
    older = exchange_capsule(minor=2)
    major_2_over_1_3 = exchange_capsule(major=2, prev=exchange_capsule(minor=3))
    major_2_alone = exchange_capsule(major=2)
    for capsule, route in ((newer, "exchange"), (older, "protocol"),
                           (major_2_over_1_3, "exchange"), (major_2_alone, "protocol"),
                           ("not a capsule", "protocol")):
        cls = type("P", (ByProtocol,), {"__dlpack_c_exchange_api__": capsule})
        before = CALLS["managed"]
        v = SMV.from_dlpack(cls(a), -1)
        assert (CALLS["managed"] == before + 1) == (route == "exchange"), capsule
        assert facts(v) == facts(SMV.from_dlpack(a, -1))


def test_a_subclass_of_a_producer_uses_its_table():
    class Sub(Producer):
        pass

    before = CALLS["managed"]
    SMV.from_dlpack(Sub(np.zeros(3)), -1)
    assert CALLS["managed"] == before + 1


def test_the_view_keeps_the_producer_and_lets_it_go():
    a = np.arange(6, dtype=np.int32)
    p = Producer(a)
    ref = weakref.ref(p)
    v = SMV.from_dlpack(p, -1)
    del p, a
    gc.collect()
    assert ref() is not None
    assert np.from_dlpack(v).tolist() == list(range(6))
    del v
    gc.collect()
    assert ref() is None


def test_types_alternate():
    # The remembered table belongs to the last type: alternating producers
    # each take their own route.
    a = np.arange(3.0)
    for obj in (Producer(a), a, ByProtocol(a), Producer(a), a):
        assert facts(SMV.from_dlpack(obj, -1)) == facts(SMV.from_dlpack(a, -1))
