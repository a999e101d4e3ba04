"""The CUDA paths of strided.StridedMemoryView (docs/views.md) against the
fake CUDA driver of the C tests (tests/c/fake_cuda.c), so
that they run without a GPU: CUDA Array Interface import and export, stream
ordering, from_any_interface, the deprecated constructor, the decorator and
lifetimes.

libstrided picks its driver once per process (STRIDED_CUDA_DRIVER, read at the
first driver use), so every test that needs the fake runs a snippet in a fresh
interpreter with STRIDED_CUDA_DRIVER set to $STRIDED_FAKE_CUDA. The snippet
opens the same path with ctypes, which gives it libstrided's copy of the fake,
registers fake address ranges (nothing is mapped there: only views and pointer
queries, never reads) and prints its results as JSON; the assertions are made
here. The parts that need no driver run in this process, and still run when
STRIDED_FAKE_CUDA is not set (the others are then skipped).
"""

import gc
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import strided
from strided import StridedMemoryView, args_viewable_as_strided_memory

FAKE = os.environ.get("STRIDED_FAKE_CUDA")
needs_fake = pytest.mark.skipif(
    not FAKE, reason="skipped: STRIDED_FAKE_CUDA not set (scripts/test sets it)")

# The directory holding the strided package this process imported, so that
# the subprocesses import the very same build.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(strided.__file__)))

kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 2, 3, 13

# Fake addresses of the ranges every fake snippet starts with (reset()).
DEV0 = 0x100000000     # device memory of device 0
DEV1 = 0x200000000     # device memory of device 1
MANAGED = 0x300000000  # managed memory, device 0
PINNED = 0x400000000   # pinned host memory, device 0
RANGE_SIZE = 1 << 20

# A producer that speaks only the CUDA Array Interface, and its maker.
PRODUCERS = """
class CAI:
    def __init__(self, **cai):
        self.cai = cai

    @property
    def __cuda_array_interface__(self):
        return self.cai


def cai(ptr, shape, typestr="<f4", strides=None, readonly=False, **extra):
    d = dict(version=3, data=(ptr, readonly), shape=tuple(shape), typestr=typestr)
    if strides is not None:
        d["strides"] = tuple(strides)
    d.update(extra)
    return CAI(**d)
"""

# What every snippet starts with: a CUDA Array Interface producer and helpers
# that turn views and exceptions into JSON. `out` is printed at the end.
COMMON = """
import ctypes, gc, json, os, sys, warnings, weakref
import numpy as np
import strided
from strided import StridedLayout, StridedMemoryView, args_viewable_as_strided_memory

DEV0, DEV1, MANAGED, PINNED, RANGE_SIZE = {DEV0}, {DEV1}, {MANAGED}, {PINNED}, {RANGE_SIZE}


{PRODUCERS}


def describe(v):
    return dict(
        ptr=v.ptr, device_ptr=v.device_ptr, shape=list(v.shape),
        strides=None if v.strides is None else list(v.strides),
        dtype=None if v.dtype is None else v.dtype.str, device_id=v.device_id,
        accessible=v.is_device_accessible, readonly=v.readonly,
        dlpack_device=list(v.__dlpack_device__()),
        exporter=type(v.exporting_obj).__name__)


def error(fn):
    try:
        fn()
    except BaseException as e:  # the parent checks the type
        return [type(e).__name__, str(e)]
    return None


def jsonable(d):
    return {{k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}}


out = {{}}
"""

# The fake's control functions and a ctypes mirror of fake_cuda_range.
FAKE_CONTROL = """
fake = ctypes.CDLL(os.environ["STRIDED_CUDA_DRIVER"])
fake.fake_cuda_reset.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
fake.fake_cuda_reset.restype = None
fake.fake_cuda_fail_next.argtypes = [ctypes.c_char_p, ctypes.c_int]
fake.fake_cuda_fail_next.restype = None
fake.fake_cuda_calls.argtypes = [ctypes.c_char_p]
fake.fake_cuda_calls.restype = ctypes.c_long
fake.fake_cuda_last_stream.argtypes = [ctypes.c_char_p]
fake.fake_cuda_last_stream.restype = ctypes.c_void_p
fake.fake_cuda_live_events.argtypes = []
fake.fake_cuda_live_events.restype = ctypes.c_long
fake.fake_cuda_current_context.argtypes = []
fake.fake_cuda_current_context.restype = ctypes.c_void_p
fake.fake_cuda_set_current_device.argtypes = [ctypes.c_int]
fake.fake_cuda_set_current_device.restype = None


class Range(ctypes.Structure):
    _fields_ = [
        ("begin", ctypes.c_size_t),
        ("size", ctypes.c_size_t),
        ("memory_type", ctypes.c_uint),
        ("is_managed", ctypes.c_int),
        ("device_ordinal", ctypes.c_int),
        ("device_pointer", ctypes.c_size_t),
        ("mempool", ctypes.c_void_p),
    ]


fake.fake_cuda_add_range.argtypes = [ctypes.POINTER(Range)]
fake.fake_cuda_add_range.restype = None

CUDA_ERROR_OUT_OF_MEMORY = 2
MEMORYTYPE_HOST, MEMORYTYPE_DEVICE = 1, 2
KINDS = {{"device": (MEMORYTYPE_DEVICE, 0), "managed": (MEMORYTYPE_DEVICE, 1),
         "pinned": (MEMORYTYPE_HOST, 0)}}


def add_range(begin, kind, device=0, size=RANGE_SIZE, device_pointer=None, pool=None):
    # The attributes the real driver reports for each kind (as measured on an
    # NVIDIA H200).
    memory_type, managed = KINDS[kind]
    dptr = begin if device_pointer is None else device_pointer
    fake.fake_cuda_add_range(ctypes.byref(
        Range(begin, size, memory_type, managed, device, dptr, pool)))


def reset(devices=2, pageable=0):
    fake.fake_cuda_reset(devices, pageable, 1)
    add_range(DEV0, "device", 0)
    add_range(DEV1, "device", 1)
    add_range(MANAGED, "managed", 0)
    add_range(PINNED, "pinned", 0)


def calls(name):
    return fake.fake_cuda_calls(name.encode())


def last_stream(name):
    return fake.fake_cuda_last_stream(name.encode()) or 0


def current_context():
    return fake.fake_cuda_current_context() or 0


reset()
"""


def run_python(script, driver):
    env = dict(os.environ)
    env["STRIDED_CUDA_DRIVER"] = driver
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, f"snippet failed:\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def prelude(with_fake):
    text = COMMON + (FAKE_CONTROL if with_fake else "")
    return text.format(DEV0=DEV0, DEV1=DEV1, MANAGED=MANAGED, PINNED=PINNED,
                       RANGE_SIZE=RANGE_SIZE, PRODUCERS=PRODUCERS)


def run_fake(code):
    """Run code in a fresh interpreter whose CUDA driver is the fake, after
    the preludes (two devices; the DEV0, DEV1, MANAGED and PINNED ranges);
    return its `out` dict."""
    script = prelude(True) + textwrap.dedent(code) + "\nprint(json.dumps(out))\n"
    return run_python(script, os.path.abspath(FAKE))


def run_no_driver(code):
    """Run code in a fresh interpreter whose CUDA driver cannot be loaded."""
    script = prelude(False) + textwrap.dedent(code) + "\nprint(json.dumps(out))\n"
    return run_python(script, "/nonexistent/strided-test/libcuda.so.1")


# The producers, here and in every snippet.
exec(PRODUCERS)


class DLPackAndCAI:
    """NumPy's DLPack plus a CUDA Array Interface that must not be read."""

    def __init__(self, a):
        self.a = a
        self.cai_reads = 0

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        self.cai_reads += 1
        raise RuntimeError("the CUDA Array Interface was read")


# ---- from_cuda_array_interface: checks made before any driver use ----------------------


@pytest.mark.parametrize("obj, stream_ptr, exc, match", [
    (cai(DEV0, (4,), version=2), 0, BufferError,
     r"^only CUDA Array Interface v3 or above is supported$"),
    (cai(DEV0, (4,), mask=(DEV0 + 64, False)), 0, BufferError, r"^mask is not supported$"),
    (cai(DEV0, (4,), version=2, mask=(DEV0, False)), 0, BufferError, r"v3 or above"),
    (cai(DEV0, (4,)), None, BufferError, r"^stream=None is ambiguous with view\(\)$"),
    (cai(DEV0, (4, 6), strides=(26, 4)), 0, ValueError,
     r"^strides must be divisible by itemsize$"),
    (cai(DEV0, (4,), stream=0), 7, AssertionError, r"stream"),
    (cai(DEV0, (4,), stream=-3), 7, AssertionError, r"stream"),
    (cai(DEV0, (4,)), -5, ValueError, r"stream_ptr"),
    (cai(DEV0, (4,)), "0", TypeError, None),
    (cai(DEV0, (4,)), 1.0, TypeError, None),
], ids=["version-2", "mask", "version-before-mask", "stream-none", "strides-not-divisible",
        "producer-stream-0", "producer-stream-negative", "stream-ptr-minus-5",
        "stream-ptr-str", "stream-ptr-float"])
def test_cai_rejected_before_driver_use(obj, stream_ptr, exc, match):
    with pytest.raises(exc, match=match):
        StridedMemoryView.from_cuda_array_interface(obj, stream_ptr)


def test_cai_stream_ptr_defaults_to_none():
    with pytest.raises(BufferError, match=r"^stream=None is ambiguous with view\(\)$"):
        StridedMemoryView.from_cuda_array_interface(cai(DEV0, (4,)))


def test_cai_checks_without_any_driver():
    # No driver can be loaded: the dictionary checks give their own errors; a
    # non-NULL pointer is then host memory, which no device can access; an
    # empty array needs the driver for the current device.
    out = run_no_driver("""
        f = StridedMemoryView.from_cuda_array_interface
        out["version"] = error(lambda: f(cai(DEV0, (4,), version=2), 0))
        out["mask"] = error(lambda: f(cai(DEV0, (4,), mask=(DEV0, False)), 0))
        out["stream_none"] = error(lambda: f(cai(DEV0, (4,)), None))
        out["strides"] = error(lambda: f(cai(DEV0, (4,), strides=(6,)), 0))
        out["producer_stream_0"] = error(lambda: f(cai(DEV0, (4,), stream=0), 5))
        out["device"] = error(lambda: f(cai(DEV0, (4,)), 0))
        out["empty"] = error(lambda: f(cai(0, (0,)), 0))
    """)
    assert out["version"] == ["BufferError", "only CUDA Array Interface v3 or above is supported"]
    assert out["mask"] == ["BufferError", "mask is not supported"]
    assert out["stream_none"] == ["BufferError", "stream=None is ambiguous with view()"]
    assert out["strides"] == ["ValueError", "strides must be divisible by itemsize"]
    assert out["producer_stream_0"][0] == "AssertionError"
    assert out["device"][0] == "BufferError" and hex(DEV0) in out["device"][1]
    assert out["empty"][0] == "RuntimeError" and "no CUDA driver" in out["empty"][1]


# ---- from_cuda_array_interface: fields --------------------------------------------------


@pytest.fixture(scope="module")
def cai_fields():
    return run_fake("""
        cases = {
            "c-no-strides": cai(DEV1, (4, 6)),
            "explicit-c-strides": cai(DEV1, (4, 6), strides=(24, 4)),
            "gapped": cai(DEV1 + 8, (4, 3), "<i2", strides=(24, 4)),
            "f-order": cai(DEV1, (4, 6), "<f8", strides=(8, 32)),
            "negative": cai(DEV1 + 20 * 8, (6,), "<c16", strides=(-32,)),
            "broadcast": cai(DEV1, (3, 5), "|u1", strides=(0, 1)),
            "readonly": cai(DEV1, (7,), "|b1", readonly=True),
            "0-d": cai(DEV1, (), "<i8"),
            "empty": cai(DEV1, (0, 3), "<f2"),
            "struct": cai(DEV1, (5,), "|V16"),
        }
        for name, obj in cases.items():
            v = StridedMemoryView.from_cuda_array_interface(obj, 0)
            d = describe(v)
            d["exporting_obj_is_producer"] = v.exporting_obj is obj
            d["size"] = v.size
            d["itemsize"] = v.layout.itemsize
            out[name] = d
    """)


@pytest.mark.parametrize("name, ptr, shape, strides, dtype, readonly", [
    ("c-no-strides", DEV1, [4, 6], None, "<f4", False),
    ("explicit-c-strides", DEV1, [4, 6], [6, 1], "<f4", False),
    ("gapped", DEV1 + 8, [4, 3], [12, 2], "<i2", False),
    ("f-order", DEV1, [4, 6], [1, 4], "<f8", False),
    ("negative", DEV1 + 160, [6], [-2], "<c16", False),
    ("broadcast", DEV1, [3, 5], [0, 1], "|u1", False),
    ("readonly", DEV1, [7], None, "|b1", True),
    ("0-d", DEV1, [], None, "<i8", False),
    ("empty", DEV1, [0, 3], None, "<f2", False),
    ("struct", DEV1, [5], None, "|V16", False),
])
@needs_fake
def test_cai_import_fields(cai_fields, name, ptr, shape, strides, dtype, readonly):
    v = cai_fields[name]
    assert v["ptr"] == ptr
    assert v["device_ptr"] == ptr
    assert v["shape"] == shape
    assert v["strides"] == strides  # elements; None when the producer gave none
    assert v["dtype"] == dtype
    assert v["itemsize"] == np.dtype(dtype).itemsize
    assert v["size"] == int(np.prod(shape))
    assert v["readonly"] is readonly
    assert v["device_id"] == 1  # the range's device ordinal
    assert v["accessible"] is True
    assert v["dlpack_device"] == [kDLCUDA, 1]
    assert v["exporting_obj_is_producer"]


@pytest.fixture(scope="module")
def cai_kinds():
    return run_fake("""
        add_range(0x500000000, "device", 1, pool=0x1234)
        add_range(0x600000000, "managed", 1)
        add_range(0x700000000, "pinned", 1)
        add_range(0x800000000, "pinned", 0, device_pointer=0)
        for name, ptr in [("device0", DEV0), ("device1", DEV1), ("pool1", 0x500000000),
                          ("managed0", MANAGED), ("managed1", 0x600000000),
                          ("pinned0", PINNED), ("pinned1", 0x700000000),
                          ("pinned-pool", 0x800000000), ("interior", DEV1 + 4096)]:
            out[name] = describe(StridedMemoryView.from_cuda_array_interface(
                cai(ptr, (16,)), -1))
    """)


@pytest.mark.parametrize("name, ptr, device_id, dlpack_device", [
    ("device0", DEV0, 0, [kDLCUDA, 0]),
    ("device1", DEV1, 1, [kDLCUDA, 1]),
    ("pool1", 0x500000000, 1, [kDLCUDA, 1]),
    ("managed0", MANAGED, 0, [kDLCUDAManaged, 0]),
    ("managed1", 0x600000000, 1, [kDLCUDAManaged, 0]),
    ("pinned0", PINNED, 0, [kDLCUDAHost, 0]),
    ("pinned1", 0x700000000, 1, [kDLCUDAHost, 0]),
    ("pinned-pool", 0x800000000, 0, [kDLCUDAHost, 0]),
    ("interior", DEV1 + 4096, 1, [kDLCUDA, 1]),
])
@needs_fake
def test_cai_device_of_each_memory_kind(cai_kinds, name, ptr, device_id, dlpack_device):
    v = cai_kinds[name]
    assert v["ptr"] == ptr
    assert v["device_id"] == device_id
    assert v["accessible"] is True
    assert v["dlpack_device"] == dlpack_device


@needs_fake
def test_cai_pinned_with_distinct_device_address():
    # Registered memory mapped at another device address: the view keeps the
    # host address as ptr and the device address for the device; the CUDA
    # Array Interface gives the device address.
    out = run_fake("""
        add_range(0x900000000, "pinned", 0, device_pointer=0xa00000000)
        v = StridedMemoryView.from_cuda_array_interface(cai(0x900000000 + 64, (4, 6)), 0)
        out["view"] = describe(v)
        out["cai"] = jsonable(v.__cuda_array_interface__)
        w = v.view(v.layout[1:, 2:])
        out["derived"] = describe(w)
        out["derived_cai"] = jsonable(w.__cuda_array_interface__)
    """)
    assert out["view"]["ptr"] == 0x900000000 + 64
    assert out["view"]["device_ptr"] == 0xa00000000 + 64
    assert out["cai"]["data"] == [0xa00000000 + 64, False]
    moved = (1 * 6 + 2) * 4
    assert out["derived"]["ptr"] == 0x900000000 + 64 + moved
    assert out["derived"]["device_ptr"] == 0xa00000000 + 64 + moved
    assert out["derived_cai"]["data"] == [0xa00000000 + 64 + moved, False]


@needs_fake
def test_cai_null_pointer_takes_the_current_device():
    out = run_fake("""
        f = StridedMemoryView.from_cuda_array_interface
        fake.fake_cuda_set_current_device(1)
        out["current1"] = describe(f(cai(0, (0,)), 0))
        out["current1_2d"] = describe(f(cai(0, (0, 0), "<i8"), -1))
        out["context_kept"] = current_context() != 0
        fake.fake_cuda_set_current_device(0)
        out["current0"] = describe(f(cai(0, (0,)), 0))
        fake.fake_cuda_set_current_device(-1)
        out["none"] = describe(f(cai(0, (0,)), 0))
        out["cai"] = jsonable(f(cai(0, (0,)), 0).__cuda_array_interface__)
        out["with_elements"] = error(lambda: f(cai(0, (3,)), 0))
    """)
    assert out["current1"]["device_id"] == 1
    assert out["current1"]["dlpack_device"] == [kDLCUDA, 1]
    assert out["current1_2d"]["device_id"] == 1
    assert out["current1_2d"]["shape"] == [0, 0]
    assert out["context_kept"]
    assert out["current0"]["device_id"] == 0
    assert out["none"]["device_id"] == 0  # no context: device 0
    for v in (out["current1"], out["current0"], out["none"]):
        assert v["ptr"] == 0
        assert v["accessible"] is True
        assert v["shape"] == [0]
        assert v["dtype"] == "<f4"
    assert out["cai"]["data"] == [0, False]
    assert out["cai"]["shape"] == [0]
    assert out["with_elements"][0] == "ValueError"
    assert "NULL" in out["with_elements"][1]


@needs_fake
def test_cai_unknown_pointer_is_rejected():
    # Pageable host memory (a NumPy array) on a device without pageable
    # memory access: no device can reach it.
    out = run_fake("""
        a = np.zeros(8)
        obj = cai(a.ctypes.data, (8,), "<f8")
        gc.collect()
        base = sys.getrefcount(obj)
        out["ptr"] = a.ctypes.data
        out["error"] = error(lambda: StridedMemoryView.from_cuda_array_interface(obj, 0))
        gc.collect()
        out["refs"] = sys.getrefcount(obj) - base
    """)
    assert out["error"][0] == "BufferError"
    assert hex(out["ptr"]) in out["error"][1]
    assert out["refs"] == 0


@needs_fake
def test_cai_pageable_memory_with_pageable_access():
    # On a device with pageable memory access (HMM/ATS), host memory is
    # device-accessible; it belongs to no device, so the view reports the
    # current one.
    out = run_fake("""
        reset(pageable=1)
        a = np.zeros(8)
        out["ptr"] = a.ctypes.data
        out["none"] = describe(StridedMemoryView.from_cuda_array_interface(
            cai(a.ctypes.data, (8,), "<f8"), 0))
        fake.fake_cuda_set_current_device(1)
        out["current1"] = describe(StridedMemoryView.from_cuda_array_interface(
            cai(a.ctypes.data, (8,), "<f8"), 0))
    """)
    for name, device in (("none", 0), ("current1", 1)):
        v = out[name]
        assert v["ptr"] == out["ptr"]
        assert v["accessible"] is True
        assert v["device_id"] == device
        assert v["dlpack_device"] == [kDLCUDAHost, 0]


@needs_fake
def test_cai_pointer_query_failure_raises_and_releases():
    out = run_fake("""
        obj = cai(DEV1, (4,))
        gc.collect()
        base = sys.getrefcount(obj)
        fake.fake_cuda_fail_next(b"cuPointerGetAttributes", CUDA_ERROR_OUT_OF_MEMORY)
        out["error"] = error(lambda: StridedMemoryView.from_cuda_array_interface(obj, 0))
        gc.collect()
        out["refs"] = sys.getrefcount(obj) - base
        out["after"] = describe(StridedMemoryView.from_cuda_array_interface(obj, 0))
    """)
    assert out["error"][0] == "RuntimeError"
    assert "cuPointerGetAttributes" in out["error"][1]
    assert out["refs"] == 0
    assert out["after"]["device_id"] == 1


# ---- stream ordering --------------------------------------------------------------------

STREAM_CASES = {
    # name: (CAI "stream" (absent when missing), stream_ptr, producer recorded, consumer)
    "producer-to-consumer": (0x1234, 0x5678, 0x1234, 0x5678),
    "producer-to-legacy-default": (0x1234, 0, 0x1234, 0),
    "per-thread-to-legacy-default": (2, 0, 2, 0),
    "legacy-to-stream": (1, 0x5678, 1, 0x5678),
    "large-consumer-handle": (0x1234, 2**64 - 16, 0x1234, 2**64 - 16),
    "no-sync": (0x1234, -1, None, None),
    "same-stream": (0x1234, 0x1234, None, None),
    "legacy-default-both-names": (1, 0, None, None),
    "producer-stream-none": ("none", 0x5678, None, None),
    "no-stream-key": ("absent", 0x5678, None, None),
    "no-sync-ignores-producer-0": (0, -1, None, None),
}


@pytest.fixture(scope="module")
def stream_results():
    cases = {name: list(case[:2]) for name, case in STREAM_CASES.items()}
    return run_fake(f"""
        cases = {cases!r}
        for name, (stream, consumer) in cases.items():
            reset()
            fake.fake_cuda_set_current_device(0)
            ctx_before = current_context()
            extra = {{}}
            if stream != "absent":
                extra["stream"] = None if stream == "none" else stream
            obj = cai(DEV1, (4, 6), **extra)
            v = StridedMemoryView.from_cuda_array_interface(obj, consumer)
            out[name] = dict(
                view=describe(v),
                created=calls("cuEventCreate"), recorded=calls("cuEventRecord"),
                waited=calls("cuStreamWaitEvent"), destroyed=calls("cuEventDestroy"),
                synchronized=calls("cuStreamSynchronize"),
                record_stream=last_stream("cuEventRecord"),
                wait_stream=last_stream("cuStreamWaitEvent"),
                live_events=fake.fake_cuda_live_events(),
                context_restored=current_context() == ctx_before)
    """)


@pytest.mark.parametrize("name", list(STREAM_CASES))
@needs_fake
def test_cai_stream_ordering(stream_results, name):
    _, _, producer, consumer = STREAM_CASES[name]
    r = stream_results[name]
    assert r["view"]["ptr"] == DEV1
    assert r["view"]["device_id"] == 1
    if producer is None:
        assert (r["created"], r["recorded"], r["waited"]) == (0, 0, 0)
    else:
        # One event, recorded on the producer and waited on by the consumer,
        # then released; the host never blocks.
        assert (r["created"], r["recorded"], r["waited"], r["destroyed"]) == (1, 1, 1, 1)
        assert r["record_stream"] == producer
        assert r["wait_stream"] == consumer
    assert r["live_events"] == 0
    assert r["synchronized"] == 0
    assert r["context_restored"]


@pytest.mark.parametrize("entry_point", ["cuEventCreate", "cuEventRecord", "cuStreamWaitEvent"])
@needs_fake
def test_cai_stream_ordering_failure(entry_point):
    out = run_fake(f"""
        obj = cai(DEV1, (4, 6), stream=0x1234)
        v = StridedMemoryView.from_cuda_array_interface(obj, 0x5678)  # warm-up
        del v
        gc.collect()
        base = sys.getrefcount(obj)
        ctx_before = current_context()
        fake.fake_cuda_fail_next({entry_point.encode()!r}, CUDA_ERROR_OUT_OF_MEMORY)
        out["error"] = error(lambda: StridedMemoryView.from_cuda_array_interface(obj, 0x5678))
        gc.collect()
        out["refs"] = sys.getrefcount(obj) - base
        out["live_events"] = fake.fake_cuda_live_events()
        out["context_restored"] = current_context() == ctx_before
        out["retry"] = describe(StridedMemoryView.from_cuda_array_interface(obj, 0x5678))
    """)
    assert out["error"][0] == "RuntimeError"
    assert entry_point in out["error"][1]
    assert out["refs"] == 0  # nothing leaked
    assert out["live_events"] == 0
    assert out["context_restored"]
    assert out["retry"]["ptr"] == DEV1


# ---- __cuda_array_interface__ export ----------------------------------------------------


@pytest.fixture(scope="module")
def cai_export():
    return run_fake("""
        f = StridedMemoryView.from_cuda_array_interface
        src = {
            "c": cai(DEV1, (4, 6)),
            "strided": cai(DEV1 + 8, (4, 3), "<i2", strides=(24, 4), readonly=True),
            "negative": cai(DEV1 + 5 * 8, (6,), "<f8", strides=(-8,)),
            "managed": cai(MANAGED, (10,), "<u8"),
        }
        for name, obj in src.items():
            v = f(obj, 0)
            e = jsonable(v.__cuda_array_interface__)
            back = f(v, 0)
            out[name] = dict(view=describe(v), cai=e, back=describe(back),
                             back_is_view=back.exporting_obj is v)
        v = f(src["c"], 0)
        w = v.view(v.layout[1:, 2:])
        out["sliced"] = dict(view=describe(w), cai=jsonable(w.__cuda_array_interface__))
        v = f(src["negative"], 0)
        w = v.view(v.layout[3:])
        out["negative-sliced"] = dict(view=describe(w), cai=jsonable(w.__cuda_array_interface__))
        out["outside"] = error(lambda: f(src["c"], 0).view(StridedLayout((25,), (1,), 4)))
    """)


@pytest.mark.parametrize("name, ptr, shape, byte_strides, typestr, readonly", [
    ("c", DEV1, [4, 6], None, "<f4", False),
    ("strided", DEV1 + 8, [4, 3], [24, 4], "<i2", True),
    ("negative", DEV1 + 40, [6], [-8], "<f8", False),
    ("managed", MANAGED, [10], None, "<u8", False),
])
@needs_fake
def test_cai_export_of_imported_view(cai_export, name, ptr, shape, byte_strides, typestr,
                                     readonly):
    r = cai_export[name]
    e = r["cai"]
    assert e["version"] == 3
    assert e["shape"] == shape
    assert e["strides"] == byte_strides
    assert e["typestr"] == typestr
    assert e["data"] == [ptr, readonly]
    assert e["stream"] is None
    assert "mask" not in e or e["mask"] is None
    # Round trip: the view is itself a CUDA Array Interface producer.
    back = r["back"]
    assert r["back_is_view"]
    assert back["ptr"] == ptr
    assert back["shape"] == shape
    assert back["strides"] == r["view"]["strides"]
    assert back["dtype"] == typestr
    assert back["readonly"] is readonly
    assert back["device_id"] == r["view"]["device_id"]
    assert back["dlpack_device"] == r["view"]["dlpack_device"]


@needs_fake
def test_cai_export_of_derived_views(cai_export):
    sliced = cai_export["sliced"]
    moved = DEV1 + (1 * 6 + 2) * 4
    assert sliced["view"]["ptr"] == moved
    assert sliced["view"]["exporter"] == "Buffer"
    assert sliced["view"]["device_id"] == 1
    assert sliced["cai"]["data"] == [moved, False]
    assert sliced["cai"]["shape"] == [3, 4]
    assert sliced["cai"]["strides"] == [24, 4]
    # layout[3:] of a reversed array moves the pointer back by 3 elements,
    # still inside the producer's footprint.
    neg = cai_export["negative-sliced"]
    assert neg["view"]["ptr"] == DEV1 + 40 - 3 * 8
    assert neg["cai"]["data"] == [DEV1 + 40 - 3 * 8, False]
    assert neg["cai"]["shape"] == [3]
    assert neg["cai"]["strides"] == [-8]
    # The producer's footprint bounds view(), as a buffer's size does.
    assert cai_export["outside"][0] == "ValueError"
    assert "Buffer size is too small for the layout" in cai_export["outside"][1]


def test_host_view_has_no_cuda_array_interface():
    a = np.arange(6, dtype=np.float32)
    v = StridedMemoryView.from_dlpack(a, -1)
    assert not hasattr(v, "__cuda_array_interface__")
    assert not hasattr(v.view(v.layout[1:]), "__cuda_array_interface__")
    assert not hasattr(StridedMemoryView.from_array_interface(a), "__cuda_array_interface__")


# ---- from_any_interface, the deprecated constructor -------------------------------------


def test_from_any_interface_numpy_takes_dlpack():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    v = StridedMemoryView.from_any_interface(a, -1)
    d = StridedMemoryView.from_dlpack(a, -1)
    assert v.exporting_obj is a
    assert (v.ptr, v.shape, v.strides, v.dtype) == (d.ptr, d.shape, d.strides, d.dtype)
    assert v.device_id == -1 and not v.is_device_accessible
    with pytest.raises(BufferError, match=r"^stream=None is ambiguous with view\(\); for host "
                                          r"memory pass stream_ptr=-1$"):
        StridedMemoryView.from_any_interface(a)


def test_from_any_interface_prefers_dlpack_over_cai():
    p = DLPackAndCAI(np.arange(5.0))
    v = StridedMemoryView.from_any_interface(p, -1)
    assert v.exporting_obj is p
    assert v.ptr == p.a.ctypes.data
    assert p.cai_reads == 0


def test_from_any_interface_cai_only_needs_a_stream():
    with pytest.raises(BufferError, match=r"^stream=None is ambiguous with view\(\)$"):
        StridedMemoryView.from_any_interface(cai(DEV0, (4,)))


class OnlyDLPack:
    def __dlpack__(self, **kwargs):
        raise AssertionError("not to be called")


class CAIProperty:
    @property
    def __cuda_array_interface__(self):
        raise AttributeError("not for this object")


@pytest.mark.parametrize("obj", [object(), 3, "text", OnlyDLPack(), CAIProperty()],
                         ids=["object", "int", "str", "dlpack-without-device", "cai-raises"])
def test_from_any_interface_no_protocol(obj):
    with pytest.raises(BufferError,
                       match=r"^the input object does not support any data exchange protocol$"):
        StridedMemoryView.from_any_interface(obj, -1)


def test_deprecated_constructor_numpy():
    a = np.arange(10, dtype=np.float64)[::3]
    with pytest.warns(DeprecationWarning, match="from_any_interface"):
        v = StridedMemoryView(a, -1)
    d = StridedMemoryView.from_dlpack(a, -1)
    assert v.exporting_obj is a
    assert (v.ptr, v.shape, v.strides, v.dtype) == (d.ptr, d.shape, d.strides, d.dtype)
    with pytest.warns(DeprecationWarning):
        v = StridedMemoryView(obj=a, stream_ptr=-1)
    assert v.ptr == a.ctypes.data


def test_deprecated_constructor_empty():
    with pytest.warns(DeprecationWarning):
        v = StridedMemoryView()
    assert v.shape == (0,)
    assert v.size == 0
    assert v.ptr == 0
    assert v.dtype is None
    assert v.device_id == -1
    assert not v.is_device_accessible
    assert not v.readonly


@pytest.mark.parametrize("obj", [object(), OnlyDLPack()], ids=["object", "dlpack-only"])
def test_deprecated_constructor_no_protocol(obj):
    with pytest.warns(DeprecationWarning):
        with pytest.raises(BufferError, match="does not support any data exchange protocol"):
            StridedMemoryView(obj, -1)


def test_deprecated_constructor_prefers_dlpack():
    p = DLPackAndCAI(np.arange(4, dtype=np.int8))
    with pytest.warns(DeprecationWarning):
        v = StridedMemoryView(p, -1)
    assert v.exporting_obj is p
    assert p.cai_reads == 0


@needs_fake
def test_cai_only_through_any_interface_and_constructor():
    out = run_fake("""
        obj = cai(DEV1 + 16, (3, 4), "<i4", strides=(32, 4), stream=0x1234)
        v = StridedMemoryView.from_any_interface(obj, 0x5678)
        out["any"] = describe(v)
        out["any_is_obj"] = v.exporting_obj is obj
        out["any_recorded"] = calls("cuEventRecord")
        out["any_wait_stream"] = last_stream("cuStreamWaitEvent")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = StridedMemoryView(obj, -1)
        out["ctor"] = describe(c)
        out["ctor_is_obj"] = c.exporting_obj is obj
        out["ctor_warnings"] = [w.category.__name__ for w in caught]
        out["ctor_recorded"] = calls("cuEventRecord")
        out["any_none"] = error(lambda: StridedMemoryView.from_any_interface(obj))
        # A view exports both protocols: from_any_interface takes DLPack.
        out["of_view"] = describe(StridedMemoryView.from_any_interface(v, 0))
        out["of_view_pointer_queries"] = calls("cuPointerGetAttributes")
    """)
    for name in ("any", "ctor"):
        v = out[name]
        assert v["ptr"] == DEV1 + 16
        assert v["shape"] == [3, 4]
        assert v["strides"] == [8, 1]
        assert v["dtype"] == "<i4"
        assert v["device_id"] == 1
        assert v["accessible"] is True
        assert v["dlpack_device"] == [kDLCUDA, 1]
    assert out["any_is_obj"] and out["ctor_is_obj"]
    assert out["any_recorded"] == 1
    assert out["any_wait_stream"] == 0x5678
    assert out["ctor_warnings"] == ["DeprecationWarning"]
    assert out["ctor_recorded"] == 1  # stream_ptr -1: no further event
    assert out["any_none"] == ["BufferError", "stream=None is ambiguous with view()"]
    of_view = out["of_view"]
    assert of_view["exporter"] == "StridedMemoryView"
    assert (of_view["ptr"], of_view["shape"], of_view["strides"]) == (DEV1 + 16, [3, 4], [8, 1])
    assert of_view["dlpack_device"] == [kDLCUDA, 1]
    assert of_view["device_id"] == 1


# ---- args_viewable_as_strided_memory ----------------------------------------------------


def test_decorator_numpy():
    @args_viewable_as_strided_memory((0, 2))
    def f(x, y, z, *, w=None):
        return x, y, z, w

    a, b, c, d = np.arange(4.0), np.arange(3), np.zeros((2, 2), np.int8), np.ones(2)
    x, y, z, w = f(a, b, c, w=d)
    assert x.obj is a and z.obj is c
    assert x.has_dlpack and z.has_dlpack
    assert y is b  # not listed
    assert w is d  # keyword arguments are passed unchanged
    v = x.view(-1)
    assert isinstance(v, StridedMemoryView)
    assert v.exporting_obj is a
    assert v.ptr == a.ctypes.data and v.shape == (4,)
    assert z.view(stream_ptr=-1).dtype == np.int8
    with pytest.raises(BufferError, match="ambiguous"):
        x.view()


def test_decorator_keeps_the_function():
    def g(x):
        """doc of g"""
        return x

    wrapped = args_viewable_as_strided_memory((0,))(g)
    assert wrapped.__name__ == "g"
    assert wrapped.__doc__ == "doc of g"


def test_decorator_non_array_fails_at_call_time():
    @args_viewable_as_strided_memory((0,))
    def f(x):
        return x

    with pytest.raises(BufferError,
                       match=r"^the input object does not support any data exchange protocol$"):
        f([1, 2, 3])
    with pytest.raises(BufferError):
        f(OnlyDLPack())


def test_decorator_prefers_dlpack():
    @args_viewable_as_strided_memory((0,))
    def f(x):
        return x

    p = DLPackAndCAI(np.arange(3.0))
    proxy = f(p)
    assert proxy.has_dlpack
    assert proxy.view(-1).exporting_obj is p
    assert p.cai_reads == 0


@pytest.mark.parametrize("indices", [[0], 0, (0, "1"), None], ids=["list", "int", "str", "none"])
def test_decorator_arg_indices_must_be_tuple_of_ints(indices):
    with pytest.raises(TypeError):
        args_viewable_as_strided_memory(indices)


@needs_fake
def test_decorator_cai_only():
    out = run_fake("""
        @args_viewable_as_strided_memory((1,))
        def f(n, x, *, y):
            return n, x, y

        obj = cai(MANAGED, (8,), "<f8")
        other = cai(DEV0, (2,))
        n, x, y = f(5, obj, y=other)
        out["n"] = n
        out["y_untouched"] = y is other
        out["proxy_obj"] = x.obj is obj
        out["has_dlpack"] = x.has_dlpack
        v = x.view(0)
        out["view"] = describe(v)
        out["view_is_obj"] = v.exporting_obj is obj
        out["no_stream"] = error(lambda: x.view())
    """)
    assert out["n"] == 5
    assert out["y_untouched"]
    assert out["proxy_obj"]
    assert out["has_dlpack"] is False
    assert out["view"]["ptr"] == MANAGED
    assert out["view"]["dlpack_device"] == [kDLCUDAManaged, 0]
    assert out["view_is_obj"]
    assert out["no_stream"] == ["BufferError", "stream=None is ambiguous with view()"]


# ---- lifetimes --------------------------------------------------------------------------


def test_any_interface_and_proxy_views_release_numpy():
    @args_viewable_as_strided_memory((0,))
    def f(x):
        return x.view(-1)

    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    gc.collect()
    base = sys.getrefcount(a)
    v = StridedMemoryView.from_any_interface(a, -1)
    p = f(a)
    with pytest.warns(DeprecationWarning):
        c = StridedMemoryView(a, -1)
    w = v.view(v.layout[1:, ::2])
    cap = w.__dlpack__(max_version=(1, 0))
    del v, p, c
    gc.collect()
    assert sys.getrefcount(a) > base  # the derived view and the capsule
    del w
    gc.collect()
    assert sys.getrefcount(a) > base  # the capsule
    del cap
    gc.collect()
    assert sys.getrefcount(a) == base


@needs_fake
def test_cai_exporter_lives_as_long_as_its_views():
    out = run_fake("""
        obj = cai(DEV1, (4, 6), stream=0x1234)
        gc.collect()
        base = sys.getrefcount(obj)
        steps = {}
        v = StridedMemoryView.from_cuda_array_interface(obj, 0x5678)
        steps["view"] = sys.getrefcount(obj) - base
        w = v.view(v.layout[1:, ::2])
        out["derived_owner_is_obj"] = w.exporting_obj.owner is obj
        cap = v.__dlpack__(max_version=(1, 0))
        legacy = w.__dlpack__()
        del v
        gc.collect()
        steps["without_view"] = sys.getrefcount(obj) - base
        del w
        gc.collect()
        steps["without_derived"] = sys.getrefcount(obj) - base
        del cap
        gc.collect()
        steps["without_capsule"] = sys.getrefcount(obj) - base
        del legacy
        gc.collect()
        steps["none_left"] = sys.getrefcount(obj) - base
        for _ in range(20):
            StridedMemoryView.from_cuda_array_interface(obj, 0x5678).view(
                StridedLayout((6,), (1,), 4)).__dlpack__()
        gc.collect()
        steps["after_loop"] = sys.getrefcount(obj) - base
        out["steps"] = steps
        out["live_events"] = fake.fake_cuda_live_events()
    """)
    steps = out["steps"]
    assert steps["view"] > 0
    assert steps["without_view"] > 0  # the derived view and the capsules hold it
    assert steps["without_derived"] > 0  # the capsules hold it
    assert steps["without_capsule"] > 0  # the legacy capsule of the derived view
    assert steps["none_left"] == 0
    assert steps["after_loop"] == 0
    assert out["derived_owner_is_obj"]
    assert out["live_events"] == 0


@needs_fake
def test_cai_exporter_freed_with_its_views():
    out = run_fake("""
        obj = cai(DEV0, (16,))
        ref = weakref.ref(obj)
        v = StridedMemoryView.from_cuda_array_interface(obj, -1)
        w = v.view(v.layout[2:])
        del obj
        gc.collect()
        out["alive_with_views"] = ref() is not None
        del v, w
        gc.collect()
        out["freed"] = ref() is None
    """)
    assert out["alive_with_views"]
    assert out["freed"]


# The C buffer's reference to the exporter is reported to the collector by
# the view while that view is the memory's only holder (view_traverse).
@needs_fake
def test_cai_exporter_holding_its_view_is_collected():
    out = run_fake("""
        obj = cai(DEV0, (16,))
        obj.view = StridedMemoryView.from_cuda_array_interface(obj, -1)
        ref = weakref.ref(obj)
        del obj
        gc.collect()
        out["freed"] = ref() is None
    """)
    assert out["freed"]


@needs_fake
def test_exchange_api_orders_the_consumer_stream():
    # A producer with the DLPack C exchange API whose tensor is device
    # memory and whose work runs on stream 7: each consumer stream but -1
    # waits for it on the device (0, the legacy default stream, too), with
    # no __dlpack__ call and no host synchronisation.
    tests = os.path.dirname(os.path.abspath(__file__))
    out = run_fake(f"""
        sys.path.insert(0, {tests!r})
        import exchange_producer as ep
        ep.WORK_STREAM[0] = 7
        for consumer in (0, 5, -1):
            reset()
            before = ep.CALLS["stream"]
            obj = ep.Producer(np.zeros((4, 6), np.float32), device=(2, 0), data=DEV0)
            v = StridedMemoryView.from_dlpack(obj, consumer)
            out[str(consumer)] = dict(
                view=describe(v), asked=ep.CALLS["stream"] - before,
                recorded=calls("cuEventRecord"), waited=calls("cuStreamWaitEvent"),
                record_stream=last_stream("cuEventRecord"),
                wait_stream=last_stream("cuStreamWaitEvent"),
                synchronized=calls("cuStreamSynchronize"),
                live_events=fake.fake_cuda_live_events())
    """)
    for consumer, r in out.items():
        assert r["view"]["ptr"] == DEV0 and r["view"]["device_id"] == 0
        assert r["view"]["dlpack_device"] == [kDLCUDA, 0]
        assert r["synchronized"] == 0 and r["live_events"] == 0
        if consumer == "-1":
            assert (r["asked"], r["recorded"], r["waited"]) == (0, 0, 0)
        else:
            assert (r["asked"], r["recorded"], r["waited"]) == (1, 1, 1)
            assert r["record_stream"] == 7
            assert r["wait_stream"] == int(consumer)
