"""strided.Buffer and the memory resources on a GPU, side by side with
cuda.core (docs/memory.md, "What kind of memory is it?").

Every memory kind is made with cuda.bindings, cuda.core, CuPy, PyTorch or
NumPy, wrapped both with strided.Buffer.from_handle and with cuda.core's
Buffer.from_handle on the same pointer, and the two answers for device_id,
is_device_accessible, is_host_accessible and is_managed are compared with
each other and with the expected classification (expect() below: what
cuda.core reports for each kind with no memory resource, with strided's
differences). Allocations from strided's resources
are used from CuPy, PyTorch and NumPy; owners are released exactly once;
stream-ordered allocations take CuPy, PyTorch and cuda.core streams.

The observed classification is printed as a table and, when the environment
variable STRIDED_GPU_REPORT names a file, written there (scripts/gpu-check
writes memory-kinds.txt).

Intended differences from cuda.core 1.2 (asserted as such, marked in the
table):
  HMM/ATS   pageable memory and NULL are device-accessible in strided where
            the device reads pageable memory (HMM/ATS,
            CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 1); cuda.core says
            never. None expected on an H200 in an x86 host (attribute 0).
  pool      a pinned-pool pointer wrapped with from_handle: cuda.core reports
            the driver's ordinal (0); strided may report -1, "not bound to a
            device", as PinnedMemoryResource.device_id does (cuda.core itself
            answers 0 for the pointer and -1 for its resource).
  resource  ManagedMemoryResource: strided's is bound to a device (it
            allocates with cuMemAllocManaged in that device's context,
            device_id 0 by default); cuda.core's default one has no
            preferred location (device_id -1).
  resource  HostMemoryResource has no cuda.core counterpart; it is checked
            against its own properties alone.

The whole module skips with "skipped: no CUDA device" where cuda.core,
cuda.bindings, CuPy or PyTorch is missing or no device is usable.
"""

import contextlib
import ctypes
import gc
import importlib.metadata
import os
import sys
import weakref

import numpy as np
import pytest


def _driver_with_a_device():
    """cuda.bindings' driver module when a CUDA device is usable, else None."""
    try:
        import cupy  # noqa: F401
        import torch  # noqa: F401

        import cuda.core  # noqa: F401

        try:
            from cuda.bindings import driver
        except ImportError:
            from cuda import cuda as driver
        (err,) = driver.cuInit(0)
        if err != driver.CUresult.CUDA_SUCCESS:
            return None
        err, count = driver.cuDeviceGetCount()
        if err != driver.CUresult.CUDA_SUCCESS or count == 0:
            return None
        return driver
    except Exception:  # an import error, or a driver that cannot be loaded
        return None


cu = _driver_with_a_device()
if cu is None:
    pytest.skip("skipped: no CUDA device", allow_module_level=True)

import cupy  # noqa: E402
import torch  # noqa: E402

import cuda.core  # noqa: E402
import strided  # noqa: E402

try:
    from cuda.core import Buffer as CoreBuffer
    from cuda.core import Device
except ImportError:  # cuda.core before 0.5
    from cuda.core.experimental import Buffer as CoreBuffer
    from cuda.core.experimental import Device

core = cuda.core if hasattr(cuda.core, "DeviceMemoryResource") else cuda.core.experimental

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
FIELDS = ("device_id", "is_device_accessible", "is_host_accessible", "is_managed")


def check(result):
    """The values of a cuda.bindings call after its CUresult, which must be
    CUDA_SUCCESS; None, one value or a tuple."""
    err, *values = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver call failed: {err!r}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def attribute(attr):
    return check(cu.cuDeviceGetAttribute(attr, check(cu.cuDeviceGet(0))))


DEVICE = Device(0)
DEVICE.set_current()
PAGEABLE = attribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)
POOLS = attribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)
MANAGED = attribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)

REPORT = []  # lines of the classification table

# The differences from cuda.core that the tests accept (see the docstring).
INTENDED = [
    "HMM/ATS: pageable memory and NULL device-accessible in strided where PAGEABLE_MEMORY_ACCESS=1 "
    f"(HMM/ATS; this device: {PAGEABLE})",
    "pinned pool: strided may report device_id -1 for a pinned-pool pointer (cuda.core: 0)",
    "ManagedMemoryResource: strided's is bound to device 0 (device_id 0); cuda.core's has no "
    "preferred location (-1)",
    "HostMemoryResource: no cuda.core counterpart; checked against its own properties alone",
]


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "?"


@pytest.fixture(scope="module", autouse=True)
def report():
    """Print the classification table at the end of the module and write it
    to $STRIDED_GPU_REPORT."""
    yield
    driver = check(cu.cuDriverGetVersion())
    head = [
        f"strided memory-kind classification vs cuda.core {_version('cuda-core')} "
        f"(device 0: {DEVICE.name}; driver API {driver // 1000}.{driver % 1000 // 10}; "
        f"PAGEABLE_MEMORY_ACCESS={PAGEABLE}; cupy {cupy.__version__}; torch {torch.__version__})",
        "intended differences from cuda.core:",
        *("  - " + d for d in INTENDED),
        "columns: device_id device_accessible host_accessible managed",
        f"{'memory':38} {'strided':16} {'cuda.core':16} {'expected':16} note",
    ]
    text = "\n".join(head + REPORT) + "\n"
    print("\n" + text)
    path = os.environ.get("STRIDED_GPU_REPORT")
    if path:
        with open(path, "w") as f:
            f.write(text)


def props(obj):
    return {f: getattr(obj, f) for f in FIELDS}


def show(p):
    if p is None:
        return "n/a"
    return "{:>2} {:d} {:d} {:d}".format(
        p["device_id"],
        p["is_device_accessible"],
        p["is_host_accessible"],
        p["is_managed"],
    )


# Memory kinds.
#
# Each maker is a context manager yielding (pointer, size) and freeing the
# memory afterwards; its expected classification is expect(kind).


def expect(kind):
    """What from_handle should report for a memory kind, as {field: set of
    accepted values}: cuda.core's answers with no memory resource, except
    that pageable memory is device-accessible where the device reads
    pageable memory (HMM/ATS) and a pinned-pool pointer may report -1."""
    if kind == "pageable":
        return {
            "device_id": {-1},
            "is_device_accessible": {bool(PAGEABLE)},
            "is_host_accessible": {True},
            "is_managed": {False},
        }
    if kind == "pinned":
        return {
            "device_id": {0},
            "is_device_accessible": {True},
            "is_host_accessible": {True},
            "is_managed": {False},
        }
    if kind == "pinned pool":
        return {**expect("pinned"), "device_id": {0, -1}}
    if kind == "device":
        return {
            "device_id": {0},
            "is_device_accessible": {True},
            "is_host_accessible": {False},
            "is_managed": {False},
        }
    if kind == "managed":
        return {
            "device_id": {0},
            "is_device_accessible": {True},
            "is_host_accessible": {True},
            "is_managed": {True},
        }
    raise AssertionError(kind)


def intended(kind, field, ours, theirs):
    """The decision that lets strided answer ours where cuda.core answers
    theirs, or None."""
    if kind == "pageable" and field == "is_device_accessible" and PAGEABLE and ours and not theirs:
        return "HMM/ATS"
    if kind == "pinned pool" and field == "device_id" and ours == -1 and theirs == 0:
        return "pinned pool"
    return None


@contextlib.contextmanager
def numpy_array():
    a = np.zeros(4096, np.uint8)
    yield a.ctypes.data, a.nbytes


@contextlib.contextmanager
def ctypes_array():
    a = (ctypes.c_uint8 * 20)()
    yield ctypes.addressof(a), 20


@contextlib.contextmanager
def null():
    yield 0, 16


@contextlib.contextmanager
def mem_host_alloc(flags):
    p = check(cu.cuMemHostAlloc(MiB, flags))
    try:
        yield int(p), MiB
    finally:
        check(cu.cuMemFreeHost(p))


@contextlib.contextmanager
def mem_alloc_host():
    p = check(cu.cuMemAllocHost(MiB))
    try:
        yield int(p), MiB
    finally:
        check(cu.cuMemFreeHost(p))


@contextlib.contextmanager
def registered(flags, offset):
    n = 64 * KiB
    a = np.zeros(n + 4096, np.uint8)
    base = (a.ctypes.data + 4095) & ~4095
    check(cu.cuMemHostRegister(base, n, flags))
    try:
        yield base + offset, n - offset
    finally:
        check(cu.cuMemHostUnregister(base))


@contextlib.contextmanager
def mem_alloc(offset):
    d = check(cu.cuMemAlloc(MiB))
    try:
        yield int(d) + offset, MiB - offset
    finally:
        check(cu.cuMemFree(d))


@contextlib.contextmanager
def mem_alloc_async():
    if not POOLS:
        pytest.skip("the device has no memory pools")
    s = check(cu.cuStreamCreate(1))
    d = check(cu.cuMemAllocAsync(MiB, s))
    check(cu.cuStreamSynchronize(s))
    try:
        yield int(d), MiB
    finally:
        check(cu.cuMemFreeAsync(d, s))
        check(cu.cuStreamSynchronize(s))
        check(cu.cuStreamDestroy(s))


@contextlib.contextmanager
def mem_alloc_managed(flags):
    if not MANAGED:
        pytest.skip("the device has no managed memory")
    d = check(cu.cuMemAllocManaged(MiB, flags))
    try:
        yield int(d), MiB
    finally:
        check(cu.cuMemFree(d))


@contextlib.contextmanager
def core_resource(name):
    """A buffer from one of cuda.core's resources (skips where this cuda.core
    cannot make that resource, e.g. pools that need a CUDA 13 build)."""
    try:
        mr = getattr(core, name)(0) if name == "DeviceMemoryResource" else getattr(core, name)()
    except Exception as e:
        pytest.skip(f"cuda.core {name}: {e}")
    stream = DEVICE.default_stream
    buf = mr.allocate(MiB, stream=stream)
    stream.sync()
    try:
        yield int(buf.handle), MiB
    finally:
        buf.close()


@contextlib.contextmanager
def cupy_array():
    a = cupy.zeros(MiB, cupy.uint8)
    yield a.data.ptr, a.nbytes


@contextlib.contextmanager
def torch_tensor():
    t = torch.zeros(MiB, dtype=torch.uint8, device="cuda:0")
    yield t.data_ptr(), t.numel()


DEVICEMAP, PORTABLE = 0x02, 0x01
ATTACH_GLOBAL, ATTACH_HOST = 0x1, 0x2

KINDS = [
    ("numpy array (pageable)", "pageable", numpy_array),
    ("ctypes array (pageable)", "pageable", ctypes_array),
    ("NULL, size 16", "pageable", null),
    ("cuMemHostAlloc(PORTABLE|DEVICEMAP)", "pinned", lambda: mem_host_alloc(PORTABLE | DEVICEMAP)),
    ("cuMemHostAlloc(0)", "pinned", lambda: mem_host_alloc(0)),
    ("cuMemAllocHost", "pinned", mem_alloc_host),
    ("cuMemHostRegister(0)", "pinned", lambda: registered(0, 0)),
    ("cuMemHostRegister(DEVICEMAP) +100", "pinned", lambda: registered(DEVICEMAP, 100)),
    ("LegacyPinnedMemoryResource", "pinned", lambda: core_resource("LegacyPinnedMemoryResource")),
    ("cuMemAlloc", "device", lambda: mem_alloc(0)),
    ("cuMemAlloc +4096", "device", lambda: mem_alloc(4096)),
    ("cuMemAllocAsync (device pool)", "device", mem_alloc_async),
    ("cuda.core DeviceMemoryResource", "device", lambda: core_resource("DeviceMemoryResource")),
    ("cupy array", "device", cupy_array),
    ("torch tensor", "device", torch_tensor),
    ("cuMemAllocManaged(GLOBAL)", "managed", lambda: mem_alloc_managed(ATTACH_GLOBAL)),
    ("cuMemAllocManaged(HOST)", "managed", lambda: mem_alloc_managed(ATTACH_HOST)),
    ("cuda.core PinnedMemoryResource (pool)", "pinned pool", lambda: core_resource("PinnedMemoryResource")),
    ("cuda.core ManagedMemoryResource (pool)", "managed", lambda: core_resource("ManagedMemoryResource")),
]


@pytest.mark.parametrize("name,kind,make", KINDS, ids=[k[0] for k in KINDS])
def test_classification_matches_cuda_core(name, kind, make):
    with make() as (ptr, size):
        ours = strided.Buffer.from_handle(ptr, size)
        theirs = CoreBuffer.from_handle(ptr, size)
        assert ours.handle == ptr and ours.size == size
        assert ours.memory_resource is None and ours.owner is None
        p, q = props(ours), props(theirs)
        want = expect(kind)
        notes, problems = [], []
        for f in FIELDS:
            if p[f] != q[f]:
                why = intended(kind, f, p[f], q[f])
                if why is None:
                    problems.append(f"{f}: strided {p[f]!r}, cuda.core {q[f]!r}")
                else:
                    notes.append(f"{f} differs: {why}")
            if p[f] not in want[f]:
                problems.append(f"{f}: strided {p[f]!r}, expected {sorted(want[f])}")
        want_show = show({f: sorted(want[f], reverse=True)[0] for f in FIELDS})
        REPORT.append(
            f"{name:38} {show(p):16} {show(q):16} {want_show:16} "
            + ("; ".join(notes + problems) or "same")
        )
        ours.close()
        theirs.close()
        assert not problems, f"{name}: " + "; ".join(problems)


# The resources of strided.


def host_view(address, size):
    return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(address))


def use_memory(buf):
    """Write and read buf's first and last bytes from CuPy, PyTorch and NumPy,
    wherever the memory is reachable from them."""
    size = buf.size
    if size == 0:
        return
    last = 9
    first = last if size == 1 else 7
    if buf.is_device_accessible:
        mem = cupy.cuda.UnownedMemory(buf.handle, size, buf, 0)
        arr = cupy.ndarray((size,), cupy.uint8, cupy.cuda.MemoryPointer(mem, 0))
        arr.fill(7)
        arr[-1] = last
        assert int(arr[0].get()) == first
        assert int(arr[-1].get()) == last
        if not buf.is_host_accessible:
            t = torch.from_dlpack(arr)
            assert t.device.type == "cuda"
            assert int(t[-1].item()) == last
            t[0] = 11
            torch.cuda.synchronize()
            assert int(arr[0].get()) == 11
        cupy.cuda.runtime.deviceSynchronize()
    if buf.is_host_accessible:
        h = host_view(buf.handle, size)
        if buf.is_device_accessible:
            assert h[0] == first and h[-1] == last
        h[0] = 1
        h[-1] = 2
        assert h[-1] == 2 and h[0] == (2 if size == 1 else 1)


def strided_resource(name):
    cls = getattr(strided, name)
    return cls(0) if name == "DeviceMemoryResource" else cls()


RESOURCES = [
    # name, sizes, the resource's properties (device_id, device, host, managed)
    ("DeviceMemoryResource", [0, 1, MiB, GiB + 1], (0, True, False, False)),
    ("PinnedMemoryResource", [0, 1, MiB, 64 * MiB], (-1, True, True, False)),
    ("ManagedMemoryResource", [0, 1, MiB], (0, True, True, True)),
    ("HostMemoryResource", [0, 1, MiB], (-1, False, True, False)),
]


@pytest.mark.parametrize(
    "name,size,expected",
    [(n, s, e) for n, sizes, e in RESOURCES for s in sizes],
    ids=[f"{n}-{s}" for n, sizes, _ in RESOURCES for s in sizes],
)
def test_resource_allocations(name, size, expected):
    if name == "ManagedMemoryResource" and not MANAGED:
        pytest.skip("the device has no managed memory")
    mr = strided_resource(name)
    device_id, dev, host, managed = expected
    if name == "HostMemoryResource" and PAGEABLE:
        dev = mr.is_device_accessible  # pageable memory may be device-accessible on HMM/ATS; not required
    assert props(mr) == {
        "device_id": device_id,
        "is_device_accessible": dev,
        "is_host_accessible": host,
        "is_managed": managed,
    }
    buf = mr.allocate(size)
    assert buf.size == size
    assert buf.memory_resource is mr
    assert props(buf) == props(mr)
    if size > 0:
        assert buf.handle != 0
    use_memory(buf)
    buf.close()
    assert buf.is_closed
    for name in ("handle", "size"):
        with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
            getattr(buf, name)


@pytest.mark.parametrize(
    "name,core_name",
    [
        ("DeviceMemoryResource", "DeviceMemoryResource"),
        ("PinnedMemoryResource", "PinnedMemoryResource"),
        ("ManagedMemoryResource", "ManagedMemoryResource"),
        ("HostMemoryResource", None),
    ],
)
def test_resource_properties_match_cuda_core(name, core_name):
    if name == "ManagedMemoryResource" and not MANAGED:
        pytest.skip("the device has no managed memory")
    ours = strided_resource(name)
    theirs = None
    if core_name is not None:
        try:
            theirs = getattr(core, core_name)(0) if core_name == "DeviceMemoryResource" else getattr(core, core_name)()
        except Exception as e:  # pools that need a CUDA 13 build of cuda.core
            REPORT.append(f"{'resource ' + name:38} {show(props(ours)):16} cuda.core: {e}")
            pytest.skip(f"cuda.core {core_name}: {e}")
    p = props(ours)
    q = props(theirs) if theirs is not None else None
    b = ours.allocate(KiB)
    bp = props(b)
    b.close()
    note = "same"
    if q is None:
        note = "no cuda.core counterpart (checked against its own properties)"
    elif p != q:
        if name == "ManagedMemoryResource" and {f: v for f, v in p.items() if f != "device_id"} == {
            f: v for f, v in q.items() if f != "device_id"
        }:
            note = "device_id differs: strided's managed resource is bound to a device"
        else:
            note = "UNEXPECTED difference"
    REPORT.append(f"{'resource ' + name:38} {show(p):16} {show(q):16} {'':16} {note}")
    assert bp == p
    assert note != "UNEXPECTED difference", f"{name}: strided {p}, cuda.core {q}"


# Owners.


class Owner:
    """An owner whose release is observable."""


def test_owner_released_once_after_close():
    for make in (numpy_array, lambda: mem_alloc(0), mem_alloc_host):
        with make() as (ptr, size):
            owner = Owner()
            released = []
            weakref.finalize(owner, released.append, True)
            base = sys.getrefcount(owner)
            buf = strided.Buffer.from_handle(ptr, size, owner=owner)
            assert buf.owner is owner
            assert sys.getrefcount(owner) > base
            buf.close()
            assert buf.is_closed
            assert sys.getrefcount(owner) == base
            buf.close()
            del owner
            gc.collect()
            assert released == [True]


def test_owner_released_once_on_gc():
    a = cupy.zeros(4096, cupy.uint8)
    base = sys.getrefcount(a)
    buf = strided.Buffer.from_handle(a.data.ptr, a.nbytes, owner=a)
    assert sys.getrefcount(a) > base
    assert buf.is_device_accessible and not buf.is_host_accessible
    del buf
    gc.collect()
    assert sys.getrefcount(a) == base


def test_owner_kept_by_a_view_after_close():
    """A view is a second holder: closing the Buffer keeps the owner until
    the view goes, then releases it once."""
    view_type = getattr(strided, "StridedMemoryView", None)
    if view_type is None or not hasattr(view_type, "from_buffer"):
        pytest.skip("strided has no StridedMemoryView.from_buffer yet")
    with mem_alloc(0) as (ptr, size):
        owner = Owner()
        released = []
        weakref.finalize(owner, released.append, True)
        buf = strided.Buffer.from_handle(ptr, size, owner=owner)
        view = view_type.from_buffer(buf, (size,), dtype=np.uint8)
        buf.close()
        del owner
        gc.collect()
        assert released == []
        assert view.ptr == ptr and view.device_id == 0
        del view
        gc.collect()
        assert released == [True]


# Stream-ordered allocation.


class StreamProtocol:
    """A stream-like object speaking the __cuda_stream__ protocol."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def _stream(how):
    """(the argument for allocate's stream, the raw handle, keep-alive)."""
    if how.startswith("torch"):
        s = torch.cuda.Stream(device=0)
        handle = s.cuda_stream
        if how == "torch object":
            if not hasattr(s, "__cuda_stream__"):
                pytest.skip("this torch Stream has no __cuda_stream__")
            return s, handle, s
    elif how.startswith("cupy"):
        s = cupy.cuda.Stream(non_blocking=True)
        handle = s.ptr
    else:
        s = DEVICE.create_stream()
        return s, int(s.handle), s
    if how.endswith("int"):
        return handle, handle, s
    return StreamProtocol(handle), handle, s


@pytest.mark.parametrize(
    "how", ["torch int", "torch __cuda_stream__", "torch object", "cupy int", "cupy __cuda_stream__", "cuda.core Stream"]
)
@pytest.mark.parametrize("handoff", ["close", "set_deallocation_stream"])
def test_stream_ordered_allocation(how, handoff):
    arg, handle, keep = _stream(how)
    size = 4 * MiB
    mr = strided.DeviceMemoryResource(0)
    buf = mr.allocate(size, stream=arg)
    on_stream = cupy.cuda.ExternalStream(handle)
    with on_stream:
        mem = cupy.cuda.UnownedMemory(buf.handle, size, buf, 0)
        arr = cupy.ndarray((size,), cupy.uint8, cupy.cuda.MemoryPointer(mem, 0))
        arr.fill(3)
        arr[-1] = 5
        host = arr.get(stream=on_stream)
    assert host[0] == 3 and host[-1] == 5 and int(host.sum()) == 3 * (size - 1) + 5
    del arr, mem
    other = None
    if handoff == "set_deallocation_stream":
        # Free on another stream, once this stream's work is done.
        other = torch.cuda.Stream(device=0)
        on_stream.synchronize()
        h = other.cuda_stream
        buf.set_deallocation_stream(h if how.endswith("int") else StreamProtocol(h))
    buf.close()
    if other is not None:
        other.synchronize()
    on_stream.synchronize()
    cupy.cuda.runtime.deviceSynchronize()
    assert buf.is_closed
    del keep
