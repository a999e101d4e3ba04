"""Managed buffers, peer access and copy options on a GPU (docs/memory.md):
the advice a ManagedBuffer gives read back from the real driver
(cuMemRangeGetAttribute), prefetches and discards of real managed memory
with the bytes checked, the peer access of a device pool on the devices
there are, and copies with CopyOptions (cuMemcpyWithAttributesAsync where
the driver is of CUDA 13.2, the plain copy and the refusal of
DURING_API_CALL before).

The module skips with "skipped: no CUDA device" where no device is usable.
strided alone is used: the stream is the per-thread default stream (2),
and bytes are read back by a blocking view copy into NumPy memory.
"""

import ctypes

import numpy as np
import pytest

import strided
from gpu_util import cuda_device_count

DEVICES = cuda_device_count()
pytestmark = pytest.mark.skipif(DEVICES == 0, reason="skipped: no CUDA device")

PER_THREAD = 2


def driver_version():
    return strided._strided.driver_info()["version"]


def host_bytes(buf, stream=PER_THREAD):
    """buf's bytes, read after the work queued on stream: a blocking view
    copy into NumPy memory, complete on return."""
    host = np.zeros(buf.size, np.uint8)
    src = strided.StridedMemoryView.from_buffer(buf, (buf.size,), dtype=np.dtype(np.uint8))
    dst = strided.StridedMemoryView.from_dlpack(host, stream_ptr=-1)
    src.copy_to(dst, stream=stream, blocking=True)
    return host


def new_managed_buffer(kind):
    """A fresh ManagedBuffer of cuMemAllocManaged or of a managed pool."""
    if kind == "cuMemAllocManaged":
        return strided.ManagedMemoryResource().allocate(1 << 20, stream=PER_THREAD)
    pool = strided.ManagedMemoryResource({"preferred_location": 0})
    return pool.allocate(1 << 20, stream=PER_THREAD)


def managed_buffers():
    """A ManagedBuffer of cuMemAllocManaged and one of a managed pool."""
    yield new_managed_buffer("cuMemAllocManaged")
    yield new_managed_buffer("managed pool")


def advise_or_skip(buf, kind):
    """buf.read_mostly = True, or a skip where the driver gives no advice on
    memory of a managed pool (CUDA 13.0 drivers: CUDA_ERROR_NOT_SUPPORTED,
    which cuda.core 1.2 meets too)."""
    try:
        buf.read_mostly = True
    except RuntimeError as e:
        if kind == "managed pool" and "CUDA_ERROR_NOT_SUPPORTED" in str(e):
            buf.close()
            pytest.skip(f"the driver gives no advice on managed pool memory: {e}")
        raise


@pytest.mark.parametrize("kind", ["cuMemAllocManaged", "managed pool"])
def test_advice_round_trips_through_the_driver(kind):
    buf = list(managed_buffers())[kind == "managed pool"]
    assert type(buf) is strided.ManagedBuffer and buf.is_managed
    assert buf.read_mostly is False
    advise_or_skip(buf, kind)
    assert buf.read_mostly is True
    buf.read_mostly = False
    assert buf.read_mostly is False
    for location, expected in [(0, ("device", 0)), ("host", ("host", None)),
                               (("device", DEVICES - 1), ("device", DEVICES - 1)), (None, None)]:
        buf.preferred_location = location
        assert buf.preferred_location == expected
    assert len(buf.accessed_by) == 0
    buf.accessed_by.add(0)
    buf.accessed_by.add("host")
    assert set(buf.accessed_by) == {("device", 0), ("host", None)}
    assert 0 in buf.accessed_by and "host" in buf.accessed_by
    buf.accessed_by.discard("host")
    assert list(buf.accessed_by) == [("device", 0)]
    buf.accessed_by = list(range(DEVICES))
    assert sorted(buf.accessed_by) == [("device", d) for d in range(DEVICES)]
    buf.accessed_by = []
    assert len(buf.accessed_by) == 0
    buf.close()


class Driver:
    """libcuda itself, through ctypes, with device 0's primary context
    pushed around each call: the control the tests compare strided with."""

    class Location(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.ctx = ctypes.c_void_p()
        assert self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), 0) == 0

    def call(self, name, *args):
        assert self.lib.cuCtxPushCurrent_v2(self.ctx) == 0
        try:
            return getattr(self.lib, name)(*args)
        finally:
            popped = ctypes.c_void_p()
            self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))

    def range_int(self, buf, attribute):
        v = ctypes.c_int(-99)
        rc = self.call("cuMemRangeGetAttribute", ctypes.byref(v), ctypes.c_size_t(4),
                       attribute, ctypes.c_uint64(buf.handle), ctypes.c_size_t(buf.size))
        assert rc == 0, f"cuMemRangeGetAttribute({attribute}) failed: CUresult {rc}"
        return v.value

    def preferred_location(self, buf):
        """The driver's answer (CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE
        and _ID) in strided's spelling."""
        kind, ident = self.range_int(buf, 5), self.range_int(buf, 6)
        return {0: None, 1: ("device", ident), 2: ("host", None), 3: ("host_numa", ident),
                4: ("host_numa_current", None)}[kind]

    def fill(self, buf, value, stream=PER_THREAD):
        rc = self.call("cuMemsetD8Async", ctypes.c_uint64(buf.handle), ctypes.c_ubyte(value),
                       ctypes.c_size_t(buf.size), ctypes.c_void_p(stream))
        assert rc == 0, f"cuMemsetD8Async failed: CUresult {rc}"

    def discard(self, buf, stream=PER_THREAD):
        ptrs = (ctypes.c_uint64 * 1)(buf.handle)
        sizes = (ctypes.c_size_t * 1)(buf.size)
        rc = self.call("cuMemDiscardBatchAsync", ptrs, sizes, ctypes.c_size_t(1),
                       ctypes.c_ulonglong(0), ctypes.c_void_p(stream))
        assert rc == 0, f"cuMemDiscardBatchAsync failed: CUresult {rc}"


def test_host_numa_preferred_location():
    """Host NUMA node 0 as the preferred location reads back as the driver
    reports it. Where the system has no NUMA configuration the driver folds
    the node into the host (an H200 VM with driver 580 answers HOST), so the
    test compares strided's answer with libcuda's own, read beside it."""
    if driver_version() < 12020:
        pytest.skip("a host NUMA location needs a driver for CUDA 12.2 or later")
    buf = strided.ManagedMemoryResource().allocate(1 << 20)
    try:
        buf.preferred_location = ("host_numa", 0)
    except RuntimeError as e:  # a system without NUMA nodes
        pytest.skip(f"the driver refuses host NUMA node 0: {e}")
    assert buf.preferred_location == Driver().preferred_location(buf)
    buf.preferred_location = None
    assert buf.preferred_location is None and Driver().preferred_location(buf) is None
    buf.close()


def test_prefetches_keep_the_bytes():
    for buf in managed_buffers():
        buf.fill(np.uint32(0x0A0B0C0D), stream=PER_THREAD)
        for location in [0, "host", ("device", 0), -1]:
            buf.prefetch(location, stream=PER_THREAD)
            assert host_bytes(buf).view("<u4").tolist() == [0x0A0B0C0D] * (buf.size // 4)
        buf.close()


@pytest.mark.parametrize("kind", ["cuMemAllocManaged", "managed pool"])
def test_discards(kind):
    if driver_version() < 13000:
        buf = strided.ManagedMemoryResource().allocate(4096)
        with pytest.raises(NotImplementedError, match="needs a driver for CUDA 13.0"):
            buf.discard(stream=PER_THREAD)
        return

    def strided_steps(buf, synced=False):
        buf.fill(1, stream=PER_THREAD)
        if synced:  # each step complete before the next is queued
            host_bytes(buf)
        buf.discard(stream=PER_THREAD)
        if synced:
            host_bytes(buf)
        buf.fill(2, stream=PER_THREAD)
        return int((host_bytes(buf) != 2).sum())

    def driver_steps(buf):
        driver = Driver()
        driver.fill(buf, 1)
        driver.discard(buf)
        driver.fill(buf, 2)
        return int((host_bytes(buf) != 2).sum())

    def tries(steps, count, busy=None):
        """Bytes left unwritten by steps on fresh memory, count times; with
        busy, the stream first given about a millisecond of work, so that the
        first fill is still queued when the discard comes."""
        lost = []
        for _ in range(count):
            fresh = new_managed_buffer(kind)
            if busy is not None:
                for _ in range(4):
                    busy.fill(7, stream=PER_THREAD)
            lost.append(steps(fresh))
            fresh.close()
        return lost

    # Each step complete before the next is queued, the write after a
    # discard, or a discard with a prefetch to a device or to the host,
    # always reads back.
    assert tries(lambda b: strided_steps(b, synced=True), 4) == [0] * 4
    buf = new_managed_buffer(kind)
    for value, location in [(3, 0), (4, "host"), (5, ("device", 0))]:
        buf.discard_prefetch(location, stream=PER_THREAD)
        host_bytes(buf)
        buf.fill(value, stream=PER_THREAD)
        assert (host_bytes(buf) == value).all(), location
    buf.close()

    # Queued back to back, discarded contents are undefined until written
    # again, and the driver then loses such writes now and then (CUDA 13.0
    # drivers: the second fill, where the discard is queued while the first
    # is still pending). strided's calls are compared with libcuda's same
    # calls, made through ctypes, both with the stream kept busy first so
    # that the two queue the discard behind pending work alike.
    if sum(tries(strided_steps, 3)) == 0:
        return
    busy = strided.DeviceMemoryResource(0).allocate(1 << 30, stream=PER_THREAD)
    ours, theirs = [], []
    for _ in range(6):
        ours += tries(strided_steps, 1, busy)
        theirs += tries(driver_steps, 1, busy)
    busy.close()
    lost_ours, lost_theirs = sum(1 for n in ours if n), sum(1 for n in theirs if n)
    assert lost_theirs or not lost_ours, (
        f"strided's fill, discard, fill behind a busy stream left bytes unwritten in "
        f"{lost_ours} of {len(ours)} tries; libcuda's same calls never did in {len(theirs)}")
    pytest.skip(f"the driver loses writes queued after a discard of {kind} memory that "
                f"follows pending work: libcuda's own cuMemsetD8Async after "
                f"cuMemDiscardBatchAsync behind a busy stream left bytes unwritten in "
                f"{lost_theirs} of {len(theirs)} tries, strided's calls in {lost_ours} of "
                f"{len(ours)}")


def test_memory_that_is_not_managed_is_refused():
    buf = strided.DeviceMemoryResource(0).allocate(4096)
    managed = strided.ManagedBuffer.from_handle(buf.handle, buf.size, owner=buf)
    with pytest.raises(ValueError, match="^prefetch requires a managed-memory allocation$"):
        managed.prefetch(0, stream=PER_THREAD)
    with pytest.raises(ValueError, match="^read_mostly requires a managed-memory allocation$"):
        managed.read_mostly


@pytest.mark.parametrize("options", [None, {}], ids=["current pool", "owned pool"])
def test_peer_access(options):
    mr = strided.DeviceMemoryResource(0, options)
    peers = mr.peer_accessible_by
    assert len(peers) == 0 and list(peers) == [] and 0 not in peers
    mr.peer_accessible_by = [0]  # the pool's own device is left out
    peers.add(0)
    assert len(peers) == 0
    with pytest.raises(ValueError, match=f"^device {DEVICES} does not exist; there are "
                                         f"{DEVICES} CUDA devices$"):
        peers.add(DEVICES)
    able = list(range(1, DEVICES))
    if able:
        # Devices that reach device 0 are granted and revoked in one call each.
        try:
            mr.peer_accessible_by = able
        except ValueError as e:  # no peer access between these devices
            assert str(e).startswith("Device 0 cannot access peer(s): ")
        else:
            assert sorted(peers) == able
            buf = mr.allocate(4096, stream=PER_THREAD)
            buf.fill(6, stream=PER_THREAD)
            assert (host_bytes(buf) == 6).all()
            peers.clear()
            assert len(peers) == 0
            buf.close()
    mr.close()


def test_copy_with_options():
    mr = strided.DeviceMemoryResource(0)
    a, b = mr.allocate(1 << 16, stream=PER_THREAD), mr.allocate(1 << 16, stream=PER_THREAD)
    a.fill(7, stream=PER_THREAD)
    a.copy_to(b, stream=PER_THREAD, options=strided.CopyOptions(
        "any", src_location_hint=0, dst_location_hint=("device", 0),
        overlap_mode="prefer_overlap_with_compute"))
    assert (host_bytes(b) == 7).all()
    with pytest.raises(TypeError, match="^copy_from does not accept LEGACY_DEFAULT_STREAM"):
        b.copy_from(a, stream=0, options=strided.CopyOptions())
    a.fill(8, stream=PER_THREAD)
    during = strided.CopyOptions("during_api_call")
    if driver_version() >= 13020:
        b.copy_from(a, stream=PER_THREAD, options=during)
        assert (host_bytes(b) == 8).all()
    else:
        with pytest.raises(NotImplementedError, match="^src_access_order=DURING_API_CALL "
                                                      "requires a driver that reports CUDA 13.2"):
            b.copy_from(a, stream=PER_THREAD, options=during)
    # Managed memory with location hints.
    m = strided.ManagedMemoryResource().allocate(1 << 16, stream=PER_THREAD)
    m.copy_from(a, stream=PER_THREAD, options=strided.CopyOptions(dst_location_hint="host"))
    assert (host_bytes(m) == 8).all()
    # Host memory: the host copies, complete on return, whatever the options.
    host = np.zeros(1 << 16, np.uint8)
    h = strided.Buffer.from_handle(host.ctypes.data, host.size, owner=host)
    h.copy_from(m, stream=PER_THREAD, options=strided.CopyOptions("any"))
    assert (host == 8).all()
    for x in (a, b, m):
        x.close()


def test_copy_with_options_on_the_c_stream_of_a_library():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("skipped: no CUDA device for PyTorch")
    stream = torch.cuda.Stream()
    mr = strided.DeviceMemoryResource(0)
    a, b = mr.allocate(4096, stream=stream), mr.allocate(4096, stream=stream)
    a.fill(9, stream=stream)
    a.copy_to(b, stream=stream, options=strided.CopyOptions("stream"))
    assert (host_bytes(b, stream) == 9).all()
