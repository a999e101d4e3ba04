"""strided.Buffer and the memory resources, with cuda.core's Buffer and
MemoryResource interface and error messages (docs/memory.md): construction,
ownership and lifetime, the closed-state contract, and the built-in
resources. Host memory throughout; the tests that need a GPU
skip without one, and the no-driver test runs only where no CUDA driver can
be loaded."""

import ctypes
import gc
import re
import subprocess
import sys
import textwrap
import threading
import weakref

import numpy as np
import pytest

import strided
from strided import (
    Buffer,
    DeviceMemoryResource,
    HostMemoryResource,
    ManagedMemoryResource,
    MemoryResource,
    PinnedMemoryResource,
)

CLOSED = "^Buffer has been closed$"


def _cuda_state():
    """'device' when device 0 is usable, 'no-driver' when no CUDA driver can
    be loaded, else 'no-device' (a driver without a usable device)."""
    try:
        DeviceMemoryResource(0)
    except RuntimeError as e:
        return "no-driver" if "no CUDA driver" in str(e) else "no-device"
    except (ValueError, NotImplementedError):
        return "no-device"
    return "device"


CUDA = _cuda_state()


@pytest.fixture
def gpu():
    if CUDA != "device":
        pytest.skip("skipped: no CUDA device")


def host_bytes(address, size):
    """A NumPy view of size bytes at address."""
    return np.frombuffer((ctypes.c_uint8 * size).from_address(address), dtype=np.uint8)


class Stream:
    """A stream-like object speaking the __cuda_stream__ protocol."""

    def __init__(self, handle, version=0):
        self.info = (version, handle)

    def __cuda_stream__(self):
        return self.info


class TrackingMR(MemoryResource):
    """A host resource in Python, backed by NumPy arrays, that records every
    deallocate call (arguments and thread)."""

    def __init__(self, device_accessible=False, device_id=-1, managed=False):
        self.arrays = {}
        self.calls = []
        self.threads = []
        self._device_accessible = device_accessible
        self._device_id = device_id
        self._managed = managed

    def allocate(self, size, stream=None):
        a = np.zeros(max(size, 1), dtype=np.uint8)
        self.arrays[a.ctypes.data] = a
        return Buffer.from_handle(a.ctypes.data, size, mr=self, stream=stream)

    def deallocate(self, ptr, size, *, stream):
        self.calls.append((ptr, size, stream))
        self.threads.append(threading.get_ident())
        self.arrays.pop(ptr, None)

    @property
    def is_host_accessible(self):
        return True

    @property
    def is_device_accessible(self):
        return self._device_accessible

    @property
    def device_id(self):
        return self._device_id

    @property
    def is_managed(self):
        return self._managed


class DummyHostMemoryResource(MemoryResource):
    """cuda.core's test resource: ctypes memory, device_id raises."""

    def __init__(self):
        self.live = {}

    def allocate(self, size, stream=None):
        block = ctypes.create_string_buffer(size)
        ptr = ctypes.addressof(block)
        self.live[ptr] = block
        return Buffer.from_handle(ptr=ptr, size=size, mr=self)

    def deallocate(self, ptr, size, stream=None):
        del self.live[ptr]

    @property
    def is_device_accessible(self):
        return False

    @property
    def is_host_accessible(self):
        return True

    @property
    def device_id(self):
        raise RuntimeError("the host resource is not bound to any GPU")


class NullMemoryResource(DummyHostMemoryResource):
    @property
    def is_host_accessible(self):
        return False


# ---- Package and construction ---------------------------------------------


def test_package_exports():
    for name in (
        "Buffer",
        "MemoryResource",
        "HostMemoryResource",
        "PinnedMemoryResource",
        "DeviceMemoryResource",
        "ManagedMemoryResource",
    ):
        assert name in strided.__all__
        assert getattr(strided, name) is getattr(strided._strided, name)
    for cls in (HostMemoryResource, PinnedMemoryResource, DeviceMemoryResource, ManagedMemoryResource):
        assert issubclass(cls, MemoryResource)


def test_buffer_cannot_be_instantiated():
    msg = "^Buffer objects cannot be instantiated directly. Please use MemoryResource APIs.$"
    with pytest.raises(RuntimeError, match=msg):
        Buffer()
    with pytest.raises(RuntimeError, match=msg):
        Buffer(0, 16)
    with pytest.raises(RuntimeError, match=msg):
        Buffer.__new__(Buffer)


def test_buffer_subclasses_are_made_by_nothing():
    # Buffer can be subclassed (cuda.core's ManagedBuffer is a subclass
    # written in Python), but nothing makes an instance of a subclass but
    # ManagedBuffer's own from_handle: from_handle is a static method that
    # makes Buffers, and the constructor refuses, as cuda.core's.
    class Sub(Buffer):
        pass

    a = np.zeros(4, np.uint8)
    assert type(Sub.from_handle(a.ctypes.data, 4, owner=a)) is Buffer
    with pytest.raises(RuntimeError, match="^Buffer objects cannot be instantiated directly"):
        Sub()
    assert issubclass(strided.ManagedBuffer, Buffer)
    with pytest.raises(TypeError):

        class SubManaged(strided.ManagedBuffer):  # noqa: F841
            pass


def test_from_handle_borrowed_host():
    a = np.arange(32, dtype=np.uint8)
    buf = Buffer.from_handle(a.ctypes.data, a.nbytes)
    assert buf.handle == a.ctypes.data
    assert buf.size == 32
    assert buf.owner is None
    assert buf.memory_resource is None
    assert buf.is_host_accessible
    assert buf.device_id == -1
    assert not buf.is_managed
    assert not buf.is_mapped
    assert not buf.is_closed
    if CUDA == "no-driver":
        assert not buf.is_device_accessible
    np.testing.assert_array_equal(host_bytes(buf.handle, buf.size), a)
    buf.close()


def test_buffer_external_host():
    # cuda.core's test_buffer_external_host.
    a = (ctypes.c_byte * 20)()
    buf = Buffer.from_handle(ctypes.addressof(a), ctypes.sizeof(a), owner=a)
    assert buf.is_host_accessible
    assert buf.device_id == -1
    assert buf.owner is a
    if CUDA == "no-driver":
        assert not buf.is_device_accessible
    buf.close()


def test_from_handle_null_and_zero_size():
    buf = Buffer.from_handle(0, 0)
    assert buf.handle == 0
    assert buf.size == 0
    assert buf.is_host_accessible
    assert buf.device_id == -1
    assert not buf.is_closed


def test_from_handle_ptr_takes_what_int_takes():
    class DevicePointer:
        def __int__(self):
            return 0x1000

    assert Buffer.from_handle(DevicePointer(), 16).handle == 0x1000
    assert Buffer.from_handle(np.uint64(0x2000), 16).handle == 0x2000
    with pytest.raises(OverflowError):
        Buffer.from_handle(-1, 16)
    with pytest.raises(TypeError):
        Buffer.from_handle(None, 16)


def test_from_handle_size_rules():
    with pytest.raises(TypeError):
        Buffer.from_handle(0x1000)
    with pytest.raises(TypeError, match="^an integer is required$"):
        Buffer.from_handle(0x1000, None)
    with pytest.raises(TypeError, match="^an integer is required$"):
        Buffer.from_handle(0x1000, 1.5)
    with pytest.raises(OverflowError, match="^can't convert negative value to size_t$"):
        Buffer.from_handle(0x1000, -1)
    with pytest.raises(OverflowError):
        Buffer.from_handle(0x1000, 2**64)
    assert Buffer.from_handle(0x1000, np.int64(7)).size == 7


def test_from_handle_argument_binding():
    assert Buffer.from_handle(ptr=0x1000, size=8).size == 8
    with pytest.raises(TypeError):
        Buffer.from_handle(0x1000, 8, None, None, None)  # stream is keyword-only
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        Buffer.from_handle(0x1000, 8, bogus=1)
    with pytest.raises(TypeError, match="multiple values"):
        Buffer.from_handle(0x1000, 8, size=8)
    # Keywords are matched by their whole text: not a prefix, not up to an
    # embedded NUL, not a non-ASCII look-alike; a name built at run time
    # (not interned) matches as a literal does.
    for bogus in ("siz", "sizes", "size\0", "size\0x", "s\u0131ze", "\u00e9", ""):
        with pytest.raises(TypeError, match="unexpected keyword argument"):
            Buffer.from_handle(0x1000, **{bogus: 8})
    assert Buffer.from_handle(0x1000, **{"".join(["si", "ze"]): 8}).size == 8


def test_memory_resource_and_owner_disallowed():
    with pytest.raises(ValueError, match="^owner and memory resource cannot be both specified together$"):
        Buffer.from_handle(0x1000, 8, mr=TrackingMR(), owner=object())


def test_stream_requires_mr():
    with pytest.raises(ValueError, match=re.escape("stream requires a memory resource (mr)")):
        Buffer.from_handle(0x1000, 8, stream=0)
    with pytest.raises(ValueError, match=re.escape("stream requires a memory resource (mr)")):
        Buffer.from_handle(0x1000, 8, owner=object(), stream=Stream(5))
    # stream=None is "not given".
    Buffer.from_handle(0x1000, 8, stream=None).close()


# ---- Owner lifetime ---------------------------------------------------------


def test_owner_close():
    # cuda.core's test_owner_close: the count rises while wrapped and comes
    # back after close().
    owner = np.zeros(64, dtype=np.uint8)
    before = sys.getrefcount(owner)
    buf = Buffer.from_handle(owner.ctypes.data, owner.nbytes, owner=owner)
    assert sys.getrefcount(owner) > before
    assert buf.owner is owner
    buf.close()
    assert sys.getrefcount(owner) == before
    # Unlike cuda.core (owner None after close), every use of a closed
    # Buffer but close() and is_closed raises.
    with pytest.raises(RuntimeError, match=CLOSED):
        buf.owner


def test_owner_released_on_gc():
    owner = np.zeros(64, dtype=np.uint8)
    before = sys.getrefcount(owner)
    buf = Buffer.from_handle(owner.ctypes.data, owner.nbytes, owner=owner)
    assert sys.getrefcount(owner) > before
    del buf
    assert sys.getrefcount(owner) == before


def test_owner_kept_alive_and_released():
    class Owner:
        pass

    owner = Owner()
    alive = weakref.ref(owner)
    buf = Buffer.from_handle(0x1000, 8, owner=owner)
    del owner
    gc.collect()
    assert alive() is not None
    buf.close()
    assert alive() is None


def test_owner_released_from_another_thread():
    owner = np.zeros(16, dtype=np.uint8)
    before = sys.getrefcount(owner)
    holder = [Buffer.from_handle(owner.ctypes.data, 16, owner=owner)]
    t = threading.Thread(target=holder.clear)
    t.start()
    t.join()
    assert sys.getrefcount(owner) == before


def test_owner_cycle_is_collected():
    class Owner:
        pass

    owner = Owner()
    alive = weakref.ref(owner)
    owner.buffer = Buffer.from_handle(0x1000, 8, owner=owner)
    del owner
    gc.collect()
    assert alive() is None


def test_borrowed_holds_nothing():
    a = np.zeros(8, dtype=np.uint8)
    before = sys.getrefcount(a)
    buf = Buffer.from_handle(a.ctypes.data, 8)
    assert sys.getrefcount(a) == before
    buf.close()


# ---- close(), the closed state and the context manager ----------------------


def test_close_is_idempotent_and_clears_state():
    mr = HostMemoryResource()
    buf = mr.allocate(64)
    assert buf.memory_resource is mr
    buf.close()
    buf.close()
    buf.close(stream=Stream(0x1234))
    # cuda.core answers handle 0, size 0 and None after close; strided
    # raises, so a closed Buffer never reads as a valid empty one at 0.
    for name in ("handle", "size", "owner", "memory_resource"):
        with pytest.raises(RuntimeError, match=CLOSED):
            getattr(buf, name)
    assert buf.is_closed
    assert bool(buf) is True


@pytest.mark.parametrize("name", ["device_id", "is_device_accessible", "is_host_accessible", "is_managed",
                                  "handle", "size", "owner", "memory_resource", "is_mapped"])
def test_closed_attribute_queries_raise(name):
    buf = Buffer.from_handle(0x1000, 8)
    buf.close()
    with pytest.raises(RuntimeError, match=CLOSED):
        getattr(buf, name)


def test_closed_buffer_stays_safe_to_inspect():
    buf = Buffer.from_handle(0x1000, 16)
    buf.close()
    assert repr(buf) == "<Buffer ptr=0x0 size=0>"
    assert buf == buf
    hash(buf)
    with pytest.raises(RuntimeError, match=CLOSED):
        buf.set_deallocation_stream(0)


def test_context_manager():
    a = np.zeros(16, dtype=np.uint8)
    before = sys.getrefcount(a)
    with Buffer.from_handle(a.ctypes.data, 16, owner=a) as buf:
        assert isinstance(buf, Buffer)
        assert not buf.is_closed
        assert sys.getrefcount(a) > before
    assert buf.is_closed
    assert sys.getrefcount(a) == before


def test_context_manager_does_not_swallow():
    mr = TrackingMR()
    with pytest.raises(KeyError):
        with mr.allocate(8) as buf:
            raise KeyError("inside")
    assert buf.is_closed
    assert len(mr.calls) == 1


# ---- Equality, hash, repr ----------------------------------------------------


def test_eq_hash_repr():
    a = Buffer.from_handle(0x1000, 16)
    b = Buffer.from_handle(0x1000, 16)
    c = Buffer.from_handle(0x1000, 32)
    d = Buffer.from_handle(0x2000, 16)
    assert a == b and not (a != b)
    assert a != c and a != d
    assert hash(a) == hash(b)
    assert len({a, b, c, d}) == 3
    assert repr(a) == "<Buffer ptr=0x1000 size=16>"
    assert a.__eq__(1) is NotImplemented
    assert a != 1 and not (a == "x")
    with pytest.raises(TypeError):
        a < b  # noqa: B015


def test_buffer_protocol_not_implemented():
    buf = Buffer.from_handle(0x1000, 16)
    with pytest.raises(NotImplementedError, match=re.escape("WIP: Buffer.__buffer__ hasn't been implemented yet.")):
        buf.__buffer__(0)
    with pytest.raises(TypeError):
        memoryview(buf)


def test_weakref():
    buf = Buffer.from_handle(0x1000, 16)
    r = weakref.ref(buf)
    assert r() is buf
    del buf
    assert r() is None


# ---- Deallocation streams -----------------------------------------------------


def test_set_deallocation_stream_none():
    msg = (
        "stream is required and must not be None; pass device.default_stream explicitly to use the default stream."
    )
    buf = TrackingMR().allocate(8)
    with pytest.raises(TypeError, match=re.escape(msg)):
        buf.set_deallocation_stream(None)


def test_set_deallocation_stream_without_resource():
    buf = Buffer.from_handle(0x1000, 8)
    with pytest.raises(ValueError, match="not owned by a memory resource"):
        buf.set_deallocation_stream(0)


def test_deallocation_stream_reaches_deallocate():
    mr = TrackingMR()
    buf = mr.allocate(8, stream=Stream(0x10))
    ptr = buf.handle
    buf.close()
    assert mr.calls == [(ptr, 8, 0x10)]

    buf = mr.allocate(8)
    ptr = buf.handle
    buf.set_deallocation_stream(Stream(0x20))
    buf.set_deallocation_stream(0x30)
    del buf
    assert mr.calls[-1] == (ptr, 8, 0x30)

    buf = mr.allocate(8, stream=0x40)
    ptr = buf.handle
    buf.close(stream=Stream(0x50))
    assert mr.calls[-1] == (ptr, 8, 0x50)

    buf = mr.allocate(8)
    ptr = buf.handle
    buf.close()
    assert mr.calls[-1] == (ptr, 8, None)


def test_stream_arguments():
    mr = TrackingMR()
    with pytest.raises(TypeError, match="__cuda_stream__"):
        mr.allocate(8, stream="abc")
    with pytest.raises(ValueError, match="protocol version 1"):
        mr.allocate(8, stream=Stream(5, version=1))
    with pytest.raises(OverflowError):
        mr.allocate(8, stream=-1)

    class BadStream:
        def __cuda_stream__(self):
            return 5

    with pytest.raises(TypeError, match="tuple"):
        mr.allocate(8, stream=BadStream())

    class RaisingStream:
        def __cuda_stream__(self):
            raise KeyError("broken")

    with pytest.raises(KeyError):
        mr.allocate(8, stream=RaisingStream())
    assert mr.calls == []  # nothing was adopted


def test_close_with_stream_ignored_without_resource():
    a = np.zeros(8, dtype=np.uint8)
    buf = Buffer.from_handle(a.ctypes.data, 8, owner=a)
    buf.close(stream=0x10)
    assert buf.is_closed


def test_close_with_bad_stream_keeps_buffer_open():
    mr = TrackingMR()
    buf = mr.allocate(8)
    with pytest.raises(TypeError):
        buf.close(stream="abc")
    assert not buf.is_closed
    buf.close()
    assert len(mr.calls) == 1


# ---- Python memory resources ------------------------------------------------------


def test_mr_deallocate_called_on_close():
    mr = TrackingMR()
    buf = mr.allocate(32)
    ptr = buf.handle
    assert buf.memory_resource is mr
    assert buf.size == 32
    assert mr.calls == []
    buf.close()
    assert mr.calls == [(ptr, 32, None)]
    buf.close()
    assert len(mr.calls) == 1
    assert buf.is_closed


def test_mr_deallocate_called_on_gc():
    mr = TrackingMR()
    buf = mr.allocate(32)
    ptr = buf.handle
    del buf
    assert mr.calls == [(ptr, 32, None)]


def test_mr_deallocate_called_from_the_thread_that_drops_it():
    mr = TrackingMR()
    holder = [mr.allocate(32)]
    ptr = holder[0].handle
    t = threading.Thread(target=holder.clear)
    t.start()
    t.join()
    assert mr.calls == [(ptr, 32, None)]
    assert mr.threads == [t.ident]


def test_mr_deallocate_called_from_many_threads():
    mr = TrackingMR()
    buffers = [mr.allocate(16) for _ in range(64)]
    ptrs = sorted(b.handle for b in buffers)
    barrier = threading.Barrier(8)

    def drop(mine):
        barrier.wait()
        for b in mine:
            b.close()

    threads = [threading.Thread(target=drop, args=(buffers[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(c[0] for c in mr.calls) == ptrs


def test_mr_refcount_returns_after_release():
    mr = TrackingMR()
    before = sys.getrefcount(mr)
    buf = mr.allocate(8)
    assert sys.getrefcount(mr) > before
    buf.close()
    assert sys.getrefcount(mr) == before


def test_mr_cycle_is_collected():
    # A resource that keeps its buffers: the cycle goes, and deallocate runs
    # once while the resource is still intact.
    class KeepingMR(TrackingMR):
        def allocate(self, size, stream=None):
            buf = super().allocate(size, stream)
            self.buffers = getattr(self, "buffers", []) + [buf]
            return buf

    mr = KeepingMR()
    calls = mr.calls
    alive = weakref.ref(mr)
    mr.allocate(8)
    mr.allocate(16)
    del mr
    gc.collect()
    assert alive() is None
    assert sorted(c[1] for c in calls) == [8, 16]


def test_mr_properties_answer_buffer_properties():
    mr = TrackingMR(device_accessible=True, device_id=3, managed=True)
    buf = mr.allocate(8)
    assert buf.is_host_accessible
    assert buf.is_device_accessible
    assert buf.device_id == 3
    assert buf.is_managed


def test_mr_properties_are_read_once():
    mr = TrackingMR(device_id=1)
    buf = mr.allocate(8)
    mr._device_id = 2
    assert buf.device_id == 1
    assert mr.allocate(8).device_id == 2


def test_buffer_initialization_with_dummy_resources():
    # cuda.core's test_buffer_initialization, for the host-side dummies.
    for mr in (DummyHostMemoryResource(), NullMemoryResource()):
        buf = mr.allocate(1024)
        assert buf.handle != 0
        assert buf.size == 1024
        assert buf.memory_resource is mr
        assert buf.is_device_accessible == mr.is_device_accessible
        assert buf.is_host_accessible == mr.is_host_accessible
        assert buf.device_id == -1  # mr.device_id raises: not bound to a device
        assert not buf.is_mapped
        buf.close()
        assert mr.live == {}


def test_duck_typed_resource():
    class Plain:
        is_host_accessible = True
        is_device_accessible = False
        device_id = -1

        def __init__(self):
            self.freed = []

        def deallocate(self, ptr, size, stream=None):
            self.freed.append(ptr)

    mr = Plain()
    buf = Buffer.from_handle(0x1000, 8, mr=mr)
    assert not buf.is_managed  # is_managed missing: False
    buf.close()
    assert mr.freed == [0x1000]


def test_resource_property_errors_propagate():
    with pytest.raises(TypeError, match=re.escape("MemoryResource.is_host_accessible must be implemented")):
        Buffer.from_handle(0x1000, 8, mr=MemoryResource())
    with pytest.raises(TypeError, match="^mr must be a memory resource .*got object$"):
        Buffer.from_handle(0x1000, 8, mr=object())


def test_mr_deallocate_error_becomes_warning():
    class FailingMR(TrackingMR):
        def deallocate(self, ptr, size, *, stream):
            raise OSError("cannot free")

    buf = FailingMR().allocate(8)
    address = buf.handle
    pattern = re.escape(f"mr.deallocate({address:#x}) failed during Buffer destruction") + ".*cannot free"
    with pytest.warns(RuntimeWarning, match=pattern):
        buf.close()
    assert buf.is_closed


def test_mr_deallocate_error_as_warning_error_is_unraisable():
    class FailingMR(TrackingMR):
        def deallocate(self, ptr, size, *, stream):
            raise OSError("cannot free")

    buf = FailingMR().allocate(8)
    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            buf.close()
    finally:
        sys.unraisablehook = old
    assert len(seen) == 1
    assert isinstance(seen[0].exc_value, RuntimeWarning)


def test_memory_resource_base_class():
    mr = MemoryResource()
    with pytest.raises(TypeError, match="^MemoryResource.allocate must be implemented by subclasses.$"):
        mr.allocate(8)
    with pytest.raises(TypeError, match="^MemoryResource.deallocate must be implemented by subclasses.$"):
        mr.deallocate(0, 8)
    for name in ("device_id", "is_device_accessible", "is_host_accessible"):
        with pytest.raises(TypeError, match=f"^MemoryResource.{name} must be implemented by subclasses.$"):
            getattr(mr, name)
    assert mr.is_managed is False


# ---- HostMemoryResource -------------------------------------------------------


def test_host_memory_resource():
    mr = HostMemoryResource()
    assert mr.device_id == -1
    assert mr.is_host_accessible
    assert not mr.is_device_accessible
    assert not mr.is_managed
    assert repr(mr) == "<HostMemoryResource device_id=-1>"
    buf = mr.allocate(100)
    assert buf.memory_resource is mr
    assert buf.size == 100
    assert buf.handle != 0 and buf.handle % 64 == 0
    assert buf.is_host_accessible and not buf.is_device_accessible
    assert buf.device_id == -1
    assert not buf.is_managed
    assert buf.owner is None
    buf.close()


def test_host_memory_is_writable_through_numpy():
    mr = HostMemoryResource()
    with mr.allocate(256) as buf:
        view = host_bytes(buf.handle, buf.size)
        view[:] = np.arange(256, dtype=np.uint8)
        assert bytes((ctypes.c_uint8 * 256).from_address(buf.handle)) == bytes(range(256))
        view[::2] = 7
        assert host_bytes(buf.handle, buf.size)[::2].tolist() == [7] * 128


def test_host_memory_resource_alignment():
    buf = HostMemoryResource(alignment=4096).allocate(10)
    assert buf.handle % 4096 == 0
    buf.close()
    buf = HostMemoryResource(alignment=1).allocate(3)
    assert buf.size == 3
    with pytest.raises(ValueError, match="power of two"):
        HostMemoryResource(alignment=3)
    with pytest.raises(OverflowError):
        HostMemoryResource(alignment=-1)


def test_host_memory_resource_allocate_arguments():
    mr = HostMemoryResource()
    buf = mr.allocate(0)
    assert buf.size == 0
    buf.close()
    # Host memory ignores the stream and never touches CUDA.
    mr.allocate(8, stream=Stream(0x1234)).close()
    mr.allocate(size=8, stream=0).close()
    with pytest.raises(TypeError):
        mr.allocate()
    with pytest.raises(OverflowError, match="negative"):
        mr.allocate(-1)
    with pytest.raises(TypeError, match="^an integer is required$"):
        mr.allocate(None)


def test_host_memory_resource_outlives_its_buffers():
    buf = HostMemoryResource().allocate(64)
    gc.collect()
    host_bytes(buf.handle, 64)[:] = 1  # the C resource is still alive
    assert buf.memory_resource.device_id == -1
    buf.close()


def test_host_memory_resource_deallocate_arguments():
    mr = HostMemoryResource()
    mr.deallocate(0, 0)  # free(NULL)
    with pytest.raises(TypeError):
        mr.deallocate(0)


def test_builtin_resource_in_from_handle():
    # Memory adopted by a built-in resource is freed by it.
    mr = HostMemoryResource()
    before = sys.getrefcount(mr)
    buf = Buffer.from_handle(0, 0, mr=mr)
    assert buf.memory_resource is mr
    assert sys.getrefcount(mr) == before + 1  # only the attribute
    buf.close()


def test_builtin_resources_are_final():
    for cls in (HostMemoryResource, PinnedMemoryResource, DeviceMemoryResource, ManagedMemoryResource):
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})


# ---- CUDA resources ----------------------------------------------------------------


def test_cuda_resources_without_driver():
    if CUDA != "no-driver":
        pytest.skip("a CUDA driver is loadable")
    for make in (lambda: DeviceMemoryResource(0), PinnedMemoryResource, ManagedMemoryResource):
        with pytest.raises(RuntimeError, match="no CUDA driver"):
            make()


def test_cuda_resource_arguments():
    with pytest.raises(TypeError):
        DeviceMemoryResource()
    with pytest.raises(TypeError):
        DeviceMemoryResource("0")
    with pytest.raises(TypeError):
        PinnedMemoryResource(0)


def test_device_memory_resource(gpu):
    mr = DeviceMemoryResource(0)
    assert mr.device_id == 0
    assert mr.is_device_accessible and not mr.is_host_accessible
    assert not mr.is_managed
    buf = mr.allocate(1024)
    assert buf.handle != 0 and buf.size == 1024
    assert buf.memory_resource is mr
    assert buf.device_id == 0
    assert buf.is_device_accessible and not buf.is_host_accessible
    wrapped = Buffer.from_handle(buf.handle, 1024)
    assert wrapped.device_id == 0
    assert wrapped.is_device_accessible and not wrapped.is_host_accessible
    wrapped.close()
    buf.close(stream=0)
    assert buf.is_closed


def test_device_memory_resource_bad_device(gpu):
    with pytest.raises(ValueError):
        DeviceMemoryResource(10**6)


def test_pinned_memory_resource(gpu):
    mr = PinnedMemoryResource()
    assert mr.device_id == -1
    assert mr.is_device_accessible and mr.is_host_accessible
    buf = mr.allocate(64)
    assert buf.device_id == -1
    host_bytes(buf.handle, 64)[:] = 5
    assert host_bytes(buf.handle, 64).tolist() == [5] * 64
    wrapped = Buffer.from_handle(buf.handle, 64)
    assert wrapped.is_host_accessible and wrapped.is_device_accessible
    buf.close()


def test_managed_memory_resource(gpu):
    mr = ManagedMemoryResource()
    assert mr.is_managed and mr.is_device_accessible and mr.is_host_accessible
    assert mr.device_id == 0
    buf = mr.allocate(64)
    assert buf.is_managed
    host_bytes(buf.handle, 64)[:] = 9
    wrapped = Buffer.from_handle(buf.handle, 64)
    assert wrapped.is_managed and wrapped.device_id == 0
    buf.close()


@pytest.fixture
def cuda_stream(gpu):
    """A non-blocking stream made through the driver with ctypes, and the
    driver library."""
    cu = ctypes.CDLL("libcuda.so.1")
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    stream = ctypes.c_void_p()
    assert cu.cuInit(0) == 0
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    assert cu.cuStreamCreate(ctypes.byref(stream), 1) == 0
    yield cu, stream.value
    assert cu.cuStreamSynchronize(ctypes.c_void_p(stream.value)) == 0
    assert cu.cuStreamDestroy_v2(ctypes.c_void_p(stream.value)) == 0


def test_stream_ordered_device_allocation(cuda_stream):
    cu, stream = cuda_stream
    mr = DeviceMemoryResource(0)
    buffers = [mr.allocate(1 << 20, stream=Stream(stream)) for _ in range(4)]
    assert len({b.handle for b in buffers}) == 4
    buffers[0].close()
    buffers[1].close(stream=stream)
    buffers[2].set_deallocation_stream(0)
    del buffers[2:]
    assert cu.cuStreamSynchronize(ctypes.c_void_p(stream)) == 0


def test_pinned_and_managed_with_stream(cuda_stream):
    cu, stream = cuda_stream
    for mr in (PinnedMemoryResource(), ManagedMemoryResource(0)):
        buf = mr.allocate(4096, stream=stream)
        host_bytes(buf.handle, 4096)[:] = 3
        buf.close(stream=stream)  # frees after synchronizing the stream


def test_device_memory_released_on_another_thread(gpu):
    mr = DeviceMemoryResource(0)
    holder = [mr.allocate(1 << 16) for _ in range(16)]
    t = threading.Thread(target=holder.clear)
    t.start()
    t.join()
    assert holder == []
    with mr.allocate(1 << 16) as buf:
        assert buf.device_id == 0


def test_external_device_memory_with_owner(gpu):
    mr = DeviceMemoryResource(0)
    source = mr.allocate(256)
    before = sys.getrefcount(source)
    wrapped = Buffer.from_handle(source.handle, 256, owner=source)
    assert sys.getrefcount(source) > before
    assert wrapped.device_id == 0
    assert wrapped.is_device_accessible and not wrapped.is_host_accessible
    wrapped.close()
    assert sys.getrefcount(source) == before
    source.close()


# ---- Interpreter shutdown -----------------------------------------------------------


def _run(code):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_owner_and_resource_released_at_shutdown():
    # Buffers alive at exit are released while the interpreter finalizes:
    # the owner's finalizer and the resource's deallocate both run.
    result = _run(
        """
        import os
        import strided

        write = os.write

        class Owner:
            def __del__(self):
                write(1, b"owner released\\n")

        class MR(strided.MemoryResource):
            is_host_accessible = True
            is_device_accessible = False
            device_id = -1

            def deallocate(self, ptr, size, stream=None):
                write(1, b"deallocated %d\\n" % size)

        buf = strided.Buffer.from_handle(0x1000, 8, owner=Owner())
        adopted = strided.Buffer.from_handle(0x2000, 24, mr=MR())
        host = strided.HostMemoryResource().allocate(16)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "owner released" in result.stdout
    assert "deallocated 24" in result.stdout
