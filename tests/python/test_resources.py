"""The memory resources as cuda.core 1.2 has them, in this process: the
options classes (fields, conversions, reprs, errors), the options a resource
takes in their place, the rules libstrided checks before it needs a CUDA
driver, the classes themselves, and cuda.core's own resources behind mr= and
allocator= (a cuda.core-like package stands in for cuda.core, with its rule
that streams are cuda.core Streams). What needs a driver runs against the
fake one: test_resources_fake_cuda.py."""

import dataclasses
import inspect
import re
import sys
import types

import numpy as np
import pytest

import strided
from strided import (
    Buffer,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    HostMemoryResource,
    LegacyPinnedMemoryResource,
    ManagedMemoryResource,
    ManagedMemoryResourceOptions,
    MemoryResource,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
)

OPTIONS = (DeviceMemoryResourceOptions, PinnedMemoryResourceOptions, ManagedMemoryResourceOptions)


# ---- The options classes ----------------------------------------------------------------


def test_options_defaults_and_reprs():
    assert repr(DeviceMemoryResourceOptions()) == "DeviceMemoryResourceOptions(ipc_enabled=False, max_size=0)"
    assert repr(PinnedMemoryResourceOptions()) == (
        "PinnedMemoryResourceOptions(ipc_enabled=False, max_size=0, numa_id=None)")
    assert repr(ManagedMemoryResourceOptions()) == (
        "ManagedMemoryResourceOptions(preferred_location=None, preferred_location_type=None)")


def test_options_positional_and_keyword_arguments():
    assert DeviceMemoryResourceOptions(True, 4096) == DeviceMemoryResourceOptions(ipc_enabled=True, max_size=4096)
    o = PinnedMemoryResourceOptions(False, 10, 1)
    assert (o.ipc_enabled, o.max_size, o.numa_id) == (False, 10, 1)
    m = ManagedMemoryResourceOptions(0, "device")
    assert (m.preferred_location, m.preferred_location_type) == (0, "device")
    assert repr(m) == "ManagedMemoryResourceOptions(preferred_location=0, preferred_location_type='device')"
    assert list(inspect.signature(PinnedMemoryResourceOptions).parameters) == ["ipc_enabled", "max_size", "numa_id"]
    with pytest.raises(TypeError):
        DeviceMemoryResourceOptions(False, 0, 1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        DeviceMemoryResourceOptions(foo=1)


@pytest.mark.parametrize("value, expected", [(1, True), (0, False), (None, False), ("", False),
                                             ("no", True), ([], False), (np.bool_(True), True)])
def test_ipc_enabled_is_a_truth_value(value, expected):
    for cls in (DeviceMemoryResourceOptions, PinnedMemoryResourceOptions):
        assert cls(ipc_enabled=value).ipc_enabled is expected


@pytest.mark.parametrize("value, expected", [(1.5, 1), (7, 7), (np.int64(9), 9), (True, 1), (-3, -3),
                                             (2**70, 2**70)])
def test_int_fields_convert_with_int(value, expected):
    assert DeviceMemoryResourceOptions(max_size=value).max_size == expected
    assert PinnedMemoryResourceOptions(max_size=value).max_size == expected
    assert PinnedMemoryResourceOptions(numa_id=value).numa_id == expected
    assert ManagedMemoryResourceOptions(preferred_location=value).preferred_location == expected
    assert type(DeviceMemoryResourceOptions(max_size=value).max_size) is int


@pytest.mark.parametrize("value, name", [("x", "str"), ("5", "str"), (b"5", "bytes"), (None, "NoneType"),
                                         (object(), "object"), ([1], "list")])
def test_int_fields_refuse_what_int_does_not_take(value, name):
    message = f"^Expected int, got {name}$"
    with pytest.raises(TypeError, match=message):
        DeviceMemoryResourceOptions(max_size=value)
    with pytest.raises(TypeError, match=message):
        PinnedMemoryResourceOptions(max_size=value)
    if value is not None:  # None is a valid numa_id and preferred_location
        with pytest.raises(TypeError, match=message):
            PinnedMemoryResourceOptions(numa_id=value)
        with pytest.raises(TypeError, match=message):
            ManagedMemoryResourceOptions(preferred_location=value)


def test_optional_fields_keep_none():
    assert PinnedMemoryResourceOptions(numa_id=None).numa_id is None
    assert ManagedMemoryResourceOptions(preferred_location=None).preferred_location is None


def test_preferred_location_type_is_kept_as_given():
    # cuda.core checks it when the resource is made, not in the options.
    for value in ("bogus", 5, None, "host"):
        assert ManagedMemoryResourceOptions(preferred_location_type=value).preferred_location_type == value


def test_options_are_mutable_converted_and_unhashable():
    o = DeviceMemoryResourceOptions()
    o.max_size = 2.9
    o.ipc_enabled = 1
    assert (o.max_size, o.ipc_enabled) == (2, True)
    with pytest.raises(TypeError, match="^Expected int, got str$"):
        o.max_size = "big"
    assert o.max_size == 2
    with pytest.raises(AttributeError):
        o.foo = 1
    for cls in OPTIONS:
        with pytest.raises(TypeError, match="unhashable"):
            hash(cls())
        assert cls() == cls()
        assert dataclasses.is_dataclass(cls)
    assert DeviceMemoryResourceOptions(max_size=1) != DeviceMemoryResourceOptions(max_size=2)


def test_options_are_exported():
    for cls in OPTIONS + (LegacyPinnedMemoryResource,):
        assert cls.__name__ in strided.__all__
        assert getattr(strided, cls.__name__) is cls


# ---- Options where a resource takes them ------------------------------------------------


def option_type_message(name, cls, obj):
    return re.escape(f"The {name} options must be provided as an object of type {cls.__name__} or as a "
                     f"dict with valid {name} options. The provided object is '{obj}'.")


@pytest.mark.parametrize("bad", [5, "x", 1.5, [("max_size", 1)], DeviceMemoryResourceOptions()])
def test_pinned_options_of_another_type(bad):
    # Another resource's options too.
    with pytest.raises(TypeError, match="^" + option_type_message("PinnedMemoryResource",
                                                                   PinnedMemoryResourceOptions, bad) + "$"):
        PinnedMemoryResource(bad)
    with pytest.raises(TypeError, match=option_type_message("PinnedMemoryResource",
                                                            PinnedMemoryResourceOptions, bad)):
        PinnedMemoryResource(options=bad)


@pytest.mark.parametrize("bad", [5, 1.5, PinnedMemoryResourceOptions()])
def test_device_options_of_another_type(bad):
    # The device is read first, and needs no driver here.
    with pytest.raises(TypeError, match="^" + option_type_message("DeviceMemoryResource",
                                                                   DeviceMemoryResourceOptions, bad) + "$"):
        DeviceMemoryResource(0, bad)
    with pytest.raises(TypeError, match=option_type_message("DeviceMemoryResource",
                                                            DeviceMemoryResourceOptions, bad)):
        DeviceMemoryResource(device_id=0, options=bad)


@pytest.mark.parametrize("bad", ["x", 1.5, [], DeviceMemoryResourceOptions()])
def test_managed_options_of_another_type(bad):
    with pytest.raises(TypeError, match="^" + option_type_message("ManagedMemoryResource",
                                                                   ManagedMemoryResourceOptions, bad) + "$"):
        ManagedMemoryResource(bad)
    with pytest.raises(TypeError, match=option_type_message("ManagedMemoryResource",
                                                            ManagedMemoryResourceOptions, 7)):
        ManagedMemoryResource(options=7)


def test_options_dicts_with_unknown_keys():
    message = r"^__init__\(\) got an unexpected keyword argument 'foo'$"
    with pytest.raises(TypeError, match=message):
        DeviceMemoryResource(0, {"foo": 1})
    with pytest.raises(TypeError, match=message):
        PinnedMemoryResource({"max_size": 0, "foo": 1})
    with pytest.raises(TypeError, match=message):
        ManagedMemoryResource({"foo": None})
    with pytest.raises(TypeError, match="keywords must be strings"):
        PinnedMemoryResource({1: 2})


def test_options_dicts_are_converted_like_the_classes():
    with pytest.raises(TypeError, match="^Expected int, got str$"):
        PinnedMemoryResource({"max_size": "x"})
    with pytest.raises(TypeError, match="^Expected int, got str$"):
        ManagedMemoryResource({"preferred_location": "x"})
    with pytest.raises(TypeError, match="^Expected int, got str$"):
        DeviceMemoryResource(0, {"max_size": "x"})


# ---- Rules checked before the driver ------------------------------------------------------


@pytest.mark.parametrize("options, exc, message", [
    ({"ipc_enabled": 1, "max_size": -1, "numa_id": -2}, OverflowError, "^can't convert negative value"),
    ({"max_size": -1}, OverflowError, r"^can't convert negative value to size_t: max_size is -1$"),
    ({"max_size": -1, "numa_id": -2}, OverflowError, "^can't convert negative value to size_t"),
    ({"numa_id": -2}, ValueError, "^numa_id must be >= 0, got -2$"),
    ({"numa_id": -1}, ValueError, "^numa_id must be >= 0, got -1$"),
    ({"numa_id": 2**31}, OverflowError, "^numa_id 2147483648 does not fit in a C int$"),
    ({"numa_id": 2**63}, OverflowError, "numa_id .* does not fit in int64"),
    ({"max_size": 2**64}, OverflowError, "max_size .* does not fit in int64"),
], ids=["ipc-size-first", "negative-max-size", "max-size-before-numa", "numa-minus-2", "numa-minus-1",
        "numa-beyond-int", "numa-beyond-int64", "max-size-beyond-int64"])
def test_pinned_option_rules(options, exc, message):
    with pytest.raises(exc, match=message):
        PinnedMemoryResource(options)
    with pytest.raises(exc, match=message):
        PinnedMemoryResource(PinnedMemoryResourceOptions(**options))


def test_ipc_pool_refusals_are_runtime_errors():
    # Without a driver, or where the pools cannot export file descriptors (NotImplementedError,
    # which derives from it), an IPC-enabled pool is refused with RuntimeError, cuda.core's type
    # for its IPC errors.
    with pytest.raises(RuntimeError):
        PinnedMemoryResource({"ipc_enabled": True})


MANAGED_REFUSED = [
    ({"preferred_location": -2}, ValueError,
     "preferred_location must be a device ordinal (>= 0), -1 for host, or None for no preference, got -2"),
    ({"preferred_location_type": "device"}, ValueError,
     "preferred_location must be a device ordinal (>= 0) when preferred_location_type is 'device', got None"),
    ({"preferred_location_type": "device", "preferred_location": -1}, ValueError,
     "preferred_location must be a device ordinal (>= 0) when preferred_location_type is 'device', got -1"),
    ({"preferred_location_type": "host", "preferred_location": 0}, ValueError,
     "preferred_location must be None when preferred_location_type is 'host', got 0"),
    ({"preferred_location_type": "host_numa", "preferred_location": -1}, ValueError,
     "preferred_location must be a NUMA node ID (>= 0) or None when preferred_location_type is "
     "'host_numa', got -1"),
    ({"preferred_location_type": "bogus"}, ValueError,
     "'bogus' is not a valid ManagedMemoryLocationType. Must be None, 'device', 'host' or 'host_numa'"),
    ({"preferred_location_type": "bogus", "preferred_location": -7}, ValueError, "'bogus' is not a valid"),
    ({"preferred_location_type": 5}, ValueError, "'5' is not a valid ManagedMemoryLocationType"),
    ({"preferred_location_type": "HOST"}, ValueError, "'HOST' is not a valid"),
    ({"preferred_location": 2**31}, OverflowError, "preferred_location 2147483648 does not fit in a C int"),
]


@pytest.mark.parametrize("options, exc, message", MANAGED_REFUSED,
                         ids=[f"row{i}" for i in range(len(MANAGED_REFUSED))])
def test_managed_option_rules(options, exc, message):
    with pytest.raises(exc, match="^" + re.escape(message)):
        ManagedMemoryResource(options)
    with pytest.raises(exc, match="^" + re.escape(message)):
        ManagedMemoryResource(ManagedMemoryResourceOptions(**options), device_id=0)


def test_managed_location_type_may_be_a_str_enum():
    import enum

    class LocationType(str, enum.Enum):  # as cuda.core.typing.ManagedMemoryLocationType
        DEVICE = "device"

    with pytest.raises(ValueError, match="^preferred_location must be a device ordinal .* got None$"):
        ManagedMemoryResource({"preferred_location_type": LocationType.DEVICE})


# ---- The classes ----------------------------------------------------------------------------


def test_resource_classes():
    for cls in (PinnedMemoryResource, LegacyPinnedMemoryResource, DeviceMemoryResource, ManagedMemoryResource):
        assert issubclass(cls, MemoryResource)
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})
    pool_members = ("close", "is_closed", "is_handle_owned", "handle", "attributes", "is_ipc_enabled",
                    "is_mapped", "uuid", "allocation_handle")
    for cls in (PinnedMemoryResource, DeviceMemoryResource, ManagedMemoryResource):
        for m in pool_members:
            assert hasattr(cls, m), (cls, m)
    assert hasattr(PinnedMemoryResource, "numa_id")
    assert hasattr(ManagedMemoryResource, "preferred_location")
    for m in pool_members:
        assert not hasattr(LegacyPinnedMemoryResource, m)
        assert not hasattr(HostMemoryResource, m)


def test_resource_signatures():
    assert list(inspect.signature(DeviceMemoryResource).parameters) == ["device_id", "options"]
    assert list(inspect.signature(PinnedMemoryResource).parameters) == ["options"]
    assert list(inspect.signature(ManagedMemoryResource).parameters) == ["options", "device_id"]
    assert list(inspect.signature(LegacyPinnedMemoryResource).parameters) == []


def test_legacy_pinned_takes_no_arguments():
    with pytest.raises(TypeError):
        LegacyPinnedMemoryResource(0)
    with pytest.raises(TypeError):
        LegacyPinnedMemoryResource(options=None)


def test_managed_device_argument_forms():
    # strided's device_id: first in place of options (an int or a Device), or by name.
    with pytest.raises(TypeError, match="^device_id must be an int, not bool$"):
        ManagedMemoryResource(True)
    with pytest.raises(TypeError, match="^device_id must be an int or a Device, got str$"):
        ManagedMemoryResource(device_id="0")

    class Device:
        device_id = True

    with pytest.raises(TypeError, match="^device_id must be an int, not bool$"):
        ManagedMemoryResource(Device())
    with pytest.raises(TypeError, match="ManagedMemoryResource options must be provided"):
        ManagedMemoryResource(0, device_id=1)  # options 0 once device_id is given
    with pytest.raises(TypeError):
        ManagedMemoryResource(None, 0)  # device_id is keyword-only


def test_mempool_attributes_cannot_be_made_directly():
    with pytest.raises(RuntimeError, match=r"^_MemPoolAttributes cannot be instantiated directly\. "
                                           r"Please use MemoryResource APIs\.$"):
        strided._strided._MemPoolAttributes()


# ---- cuda.core's resources behind mr= and allocator= ------------------------------------------


class FakeCoreStream:
    """cuda.core's Stream, as far as strided sees it."""

    def __init__(self, handle):
        self.handle = handle

    @classmethod
    def from_handle(cls, handle):
        if not isinstance(handle, int):
            raise TypeError("from_handle takes an int")
        return cls(handle)

    def __cuda_stream__(self):
        return (0, self.handle)


def accept(stream):
    """cuda.core's Stream_accept: only its Streams."""
    if stream is None:
        raise TypeError("stream is required and must not be None; pass device.default_stream explicitly "
                        "to use the default stream.")
    if not isinstance(stream, FakeCoreStream):
        raise TypeError(f"Stream or GraphBuilder expected, got {type(stream).__name__}")
    return stream


class FakeCoreBuffer:
    """A cuda.core Buffer over numpy memory: close() takes a Stream or nothing."""

    def __init__(self, mr, size):
        self.mr, self.backing = mr, np.full(max(size, 1), 0xAB, np.uint8)
        self.handle, self.size, self.is_closed = self.backing.ctypes.data, size, False

    def close(self, stream=None):
        if stream is not None:
            accept(stream)
        self.mr.log.append(("close", self.size, stream))
        self.is_closed = True


class FakeCoreResource:
    """A host resource with cuda.core's calling rules: stream keyword-only,
    required, a cuda.core Stream."""

    is_host_accessible = True
    is_device_accessible = False
    is_managed = False
    device_id = -1

    def __init__(self):
        self.log = []

    def allocate(self, size, *, stream):
        self.log.append(("allocate", size, accept(stream)))
        return FakeCoreBuffer(self, size)

    def deallocate(self, ptr, size, *, stream):
        self.log.append(("deallocate", size, accept(stream)))


# Its class comes from the cuda.core package, as cuda.core's own do.
FakeCoreResource.__module__ = "cuda.core._memory._fake"


@pytest.fixture
def cuda_core(monkeypatch):
    """A cuda.core package for this test, in place of any real one."""
    cuda = types.ModuleType("cuda")
    core = types.ModuleType("cuda.core")
    core.Stream = FakeCoreStream
    core.LEGACY_DEFAULT_STREAM = FakeCoreStream(1)
    core.PER_THREAD_DEFAULT_STREAM = FakeCoreStream(2)
    cuda.core = core
    monkeypatch.setitem(sys.modules, "cuda", cuda)
    monkeypatch.setitem(sys.modules, "cuda.core", core)
    return core


class StreamObject:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def test_cuda_core_resource_as_mr_gets_cuda_core_streams(cuda_core):
    mr = FakeCoreResource()
    backing = np.zeros(64, np.uint8)
    Buffer.from_handle(backing.ctypes.data, 8, mr=mr).close()
    Buffer.from_handle(backing.ctypes.data, 16, mr=mr, stream=0x1234).close()
    Buffer.from_handle(backing.ctypes.data, 24, mr=mr, stream=2).close()
    Buffer.from_handle(backing.ctypes.data, 32, mr=mr).close(stream=StreamObject(0x99))
    Buffer.from_handle(backing.ctypes.data, 40, mr=mr, stream=1).close()
    logged = [(size, s.handle) for _, size, s in mr.log]
    assert logged == [(8, 1), (16, 0x1234), (24, 2), (32, 0x99), (40, 1)]
    assert mr.log[0][2] is cuda_core.LEGACY_DEFAULT_STREAM
    assert mr.log[2][2] is cuda_core.PER_THREAD_DEFAULT_STREAM
    assert mr.log[4][2] is cuda_core.LEGACY_DEFAULT_STREAM


def test_subclass_of_a_cuda_core_resource_gets_cuda_core_streams(cuda_core):
    class Mine(FakeCoreResource):  # defined here, derived from cuda.core's
        pass

    mr = Mine()
    backing = np.zeros(8, np.uint8)
    Buffer.from_handle(backing.ctypes.data, 8, mr=mr, stream=0x77).close()
    assert [(k, s.handle) for k, _, s in mr.log] == [("deallocate", 0x77)]


def overlapping_pair(n=6):
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    want = a.copy()
    want[1:] = a[:-1]
    return a, strided.StridedMemoryView.from_any_interface(a[1:], stream_ptr=-1), \
        strided.StridedMemoryView.from_any_interface(a[:-1], stream_ptr=-1), want


# Streams a real driver knows too (a made-up handle would be dereferenced by
# the wait a host copy makes on a machine with a GPU).
@pytest.mark.parametrize("stream, handle", [(None, 1), (1, 1), (2, 2)])
def test_cuda_core_resource_as_allocator(cuda_core, stream, handle):
    mr = FakeCoreResource()
    a, dv, sv, want = overlapping_pair()
    dv.copy_from(sv, stream=stream, allocator={"host": mr})
    np.testing.assert_array_equal(a, want)
    assert [(k, n) for k, n, _ in mr.log] == [("allocate", 5 * 6 * 4), ("close", 5 * 6 * 4)]
    assert all(isinstance(s, FakeCoreStream) and s.handle == handle for _, _, s in mr.log)


def test_cuda_core_stream_reaches_the_allocator_as_it_is(cuda_core):
    mr = FakeCoreResource()
    mine = cuda_core.Stream.from_handle(2)
    a, dv, sv, want = overlapping_pair()
    dv.copy_from(sv, stream=mine, allocator=strided.CopyAllocatorOptions(host=mr))
    np.testing.assert_array_equal(a, want)
    assert mr.log[0][2] is mine
    assert mr.log[1][2].handle == 2


def test_other_resources_still_get_ints_and_none(cuda_core):
    calls = []

    class Plain:  # cuda.core's interface, from another package
        is_host_accessible = True
        is_device_accessible = False

        def deallocate(self, ptr, size, *, stream):
            calls.append(stream)

    backing = np.zeros(8, np.uint8)
    Buffer.from_handle(backing.ctypes.data, 8, mr=Plain()).close()
    Buffer.from_handle(backing.ctypes.data, 8, mr=Plain(), stream=0x10).close()
    assert calls == [None, 0x10]


def test_cuda_core_resource_without_cuda_core(monkeypatch):
    # A class that claims cuda.core while cuda.core cannot be imported: the
    # deallocation fails into a warning, the allocator into the copy's error.
    monkeypatch.setitem(sys.modules, "cuda.core", None)
    mr = FakeCoreResource()
    backing = np.zeros(8, np.uint8)
    buf = Buffer.from_handle(backing.ctypes.data, 8, mr=mr)
    with pytest.warns(RuntimeWarning, match="failed during Buffer destruction"):
        buf.close()
    assert mr.log == []
    a, dv, sv, _ = overlapping_pair()
    with pytest.raises(ImportError):
        dv.copy_from(sv, allocator={"host": mr})
    assert mr.log == []


def test_copy_to_allocates_from_a_cuda_core_resource_with_its_stream(cuda_core):
    class HostBuffer(FakeCoreBuffer):
        is_host_accessible = True
        is_device_accessible = False

    class Mr(FakeCoreResource):
        def allocate(self, size, *, stream):
            self.log.append(("allocate", size, accept(stream)))
            return HostBuffer(self, size)

    mr = Mr()
    src = np.arange(16, dtype=np.uint8)
    b = Buffer.from_handle(src.ctypes.data, 16, mr=mr)
    # Host memory takes no stream; cuda.core's allocate still gets a Stream.
    dst = b.copy_to(stream=None)
    assert mr.log[0][:2] == ("allocate", 16)
    assert mr.log[0][2] is cuda_core.LEGACY_DEFAULT_STREAM
    np.testing.assert_array_equal(dst.backing[:16], src)
