"""The memory resources of cuda.core 1.2 against the fake CUDA driver of the
C tests (tests/c/fake_cuda.c): the device, pinned and managed pools, with
and without options, the properties cuda.core's pool resources have (pool
handle, ownership, attributes, preferred location, NUMA node, closing, the
IPC ones), the legacy pinned resource, and which driver calls each makes
with which arguments. Each test runs a snippet in a fresh
interpreter (test_view_fake_cuda's run_fake), where the fake also describes
its pools (fake_cuda_pool_info); the assertions are made here."""

import textwrap

from test_view_fake_cuda import needs_fake, run_fake

pytestmark = needs_fake

# The fake's pool controls, and the resources' facts as JSON.
POOLS = """
from strided import (DeviceMemoryResource, DeviceMemoryResourceOptions, LegacyPinnedMemoryResource,
                     ManagedMemoryResource, ManagedMemoryResourceOptions, PinnedMemoryResource,
                     PinnedMemoryResourceOptions)


class Pool(ctypes.Structure):
    _fields_ = [("alloc_type", ctypes.c_int), ("handle_types", ctypes.c_int),
                ("location_type", ctypes.c_int), ("location_id", ctypes.c_int),
                ("max_size", ctypes.c_size_t), ("release_threshold", ctypes.c_uint64),
                ("used", ctypes.c_uint64), ("created", ctypes.c_int), ("destroyed", ctypes.c_int)]


fake.fake_cuda_pool_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(Pool)]
fake.fake_cuda_pool_info.restype = ctypes.c_int
fake.fake_cuda_live_pools.argtypes = []
fake.fake_cuda_live_pools.restype = ctypes.c_long
fake.fake_cuda_set_host_numa_id.argtypes = [ctypes.c_int]
fake.fake_cuda_set_host_numa_id.restype = None


def pool(handle):
    p = Pool()
    if not fake.fake_cuda_pool_info(handle, ctypes.byref(p)):
        return None
    return dict(alloc=p.alloc_type, handles=p.handle_types,
                location=[p.location_type, p.location_id], max_size=p.max_size,
                threshold=p.release_threshold, used=p.used, created=p.created,
                destroyed=p.destroyed)


def live_pools():
    return fake.fake_cuda_live_pools()


def facts(mr):
    d = dict(type=type(mr).__name__, device=mr.device_id, dev=mr.is_device_accessible,
             host=mr.is_host_accessible, managed=mr.is_managed, owned=mr.is_handle_owned,
             closed=mr.is_closed, handle=mr.handle, ipc=mr.is_ipc_enabled, mapped=mr.is_mapped,
             uuid=mr.uuid, allocation_handle=error(lambda: mr.allocation_handle),
             repr=repr(mr))
    if hasattr(mr, "numa_id"):
        d["numa_id"] = mr.numa_id
    if hasattr(mr, "preferred_location"):
        p = mr.preferred_location
        d["preferred"] = None if p is None else list(p)
    return d
"""

NOT_IPC = ["RuntimeError", "Memory resource is not IPC-enabled"]


def run(code):
    return run_fake(POOLS + textwrap.dedent(code))


def test_device_resource_on_the_current_pool():
    out = run("""
        mr = DeviceMemoryResource(0)
        out['facts'] = facts(mr)
        out['pool'] = pool(mr.handle)
        out['calls'] = [calls(n) for n in ("cuMemPoolCreate", "cuDeviceGetMemPool",
                                           "cuMemPoolGetAttribute", "cuMemPoolSetAttribute")]
        a = mr.attributes
        out['same_attributes'] = a is mr.attributes
        out['threshold'] = a.release_threshold
        buf = mr.allocate(4096, stream=0x55)
        out['alloc_stream'] = last_stream("cuMemAllocFromPoolAsync")
        out['used'] = [a.used_mem_current, a.used_mem_high, a.reserved_mem_current,
                       a.reserved_mem_high]
        out['reuse'] = [a.reuse_follow_event_dependencies, a.reuse_allow_opportunistic,
                        a.reuse_allow_internal_dependencies]
        out['attributes_repr'] = repr(a)
        out['buffer'] = [buf.device_id, buf.is_device_accessible, buf.is_host_accessible,
                         list(buf.__dlpack_device__())]
        buf.close()
        out['after_free'] = a.used_mem_current
        mr.close()
        out['closed'] = facts(mr)
        out['destroys'] = calls("cuMemPoolDestroy")
        out['allocate_closed'] = error(lambda: mr.allocate(8))
        out['attributes_closed'] = error(lambda: mr.attributes)
        out['attribute_closed'] = error(lambda: a.used_mem_current)
        mr.close()
        # A second resource finds the threshold raised and leaves it.
        sets = calls("cuMemPoolSetAttribute")
        DeviceMemoryResource(0)
        out['sets_again'] = calls("cuMemPoolSetAttribute") - sets
    """)
    f = out["facts"]
    assert (f["type"], f["device"], f["dev"], f["host"], f["managed"]) == ("DeviceMemoryResource", 0, True,
                                                                          False, False)
    assert (f["owned"], f["closed"], f["ipc"], f["mapped"], f["uuid"]) == (False, False, False, False, None)
    assert f["allocation_handle"] == NOT_IPC
    assert f["handle"] != 0 and f["repr"] == "<DeviceMemoryResource device_id=0>"
    assert "numa_id" not in f and "preferred" not in f
    assert out["pool"]["created"] == 0 and out["pool"]["location"] == [1, 0]
    assert out["calls"] == [0, 1, 1, 1]
    assert out["same_attributes"] is True
    assert out["threshold"] == 2**64 - 1
    assert out["alloc_stream"] == 0x55
    assert out["used"] == [4096, 4096, 4096, 4096]
    assert out["reuse"] == [True, True, True]
    assert out["attributes_repr"] == (
        "_MemPoolAttributes(release_threshold=18446744073709551615, reserved_mem_current=4096, "
        "reserved_mem_high=4096, reuse_allow_internal_dependencies=True, reuse_allow_opportunistic=True, "
        "reuse_follow_event_dependencies=True, used_mem_current=4096, used_mem_high=4096)")
    assert out["buffer"] == [0, True, False, [2, 0]]
    assert out["after_free"] == 0
    c = out["closed"]
    assert (c["closed"], c["owned"], c["handle"], c["device"]) == (True, False, 0, 0)
    assert out["destroys"] == 0  # not its pool
    closed = ["RuntimeError", "DeviceMemoryResource has been closed"]
    assert out["allocate_closed"] == closed
    assert out["attributes_closed"] == closed
    assert out["attribute_closed"] == closed
    assert out["sets_again"] == 0


def test_device_resource_with_options():
    out = run("""
        class Device:  # a cuda.core Device, as far as strided sees it
            device_id = 1

        mr = DeviceMemoryResource(Device(), DeviceMemoryResourceOptions(max_size=1 << 20))
        out['facts'] = facts(mr)
        handle = mr.handle
        out['pool'] = pool(handle)
        out['threshold'] = mr.attributes.release_threshold
        buf = mr.allocate(4096)
        out['used'] = pool(handle)['used']
        out['buffer_device'] = buf.device_id
        out['too_big'] = error(lambda: mr.allocate(1 << 20))
        mr.close()
        out['closed'] = facts(mr)
        out['pool_closed'] = pool(handle)
        out['live_after_close'] = live_pools()
        out['allocate_closed'] = error(lambda: mr.allocate(1))
        buf.close()  # memory of a closed resource is still freed
        out['used_after'] = pool(handle)['used']
        mr.deallocate(0, 0)  # deallocate works after close
        out['frees'] = calls("cuMemFreeAsync")
        # A dict of the fields, and the default options.
        a = DeviceMemoryResource(0, {"max_size": 4096})
        b = DeviceMemoryResource(device_id=0, options=DeviceMemoryResourceOptions())
        out['dict'] = [pool(a.handle)['max_size'], a.is_handle_owned, pool(b.handle)['max_size']]
        out['live'] = live_pools()
        del a, b
        gc.collect()
        out['live_after_del'] = live_pools()
    """)
    f = out["facts"]
    assert (f["device"], f["owned"], f["closed"], f["repr"]) == (1, True, False,
                                                                "<DeviceMemoryResource device_id=1>")
    p = out["pool"]
    assert (p["alloc"], p["handles"], p["location"], p["max_size"], p["created"]) == (1, 0, [1, 1], 1 << 20, 1)
    assert out["threshold"] == 0
    assert out["used"] == 4096 and out["buffer_device"] == 1
    assert out["too_big"][0] == "RuntimeError"
    assert "cuMemAllocFromPoolAsync failed: CUDA_ERROR_OUT_OF_MEMORY" in out["too_big"][1]
    c = out["closed"]
    assert (c["closed"], c["owned"], c["handle"]) == (True, False, 0)
    assert out["pool_closed"]["destroyed"] == 1 and out["live_after_close"] == 0
    assert out["allocate_closed"] == ["RuntimeError", "DeviceMemoryResource has been closed"]
    assert out["used_after"] == 0 and out["frees"] == 1
    assert out["dict"] == [4096, True, 0]
    assert out["live"] == 2 and out["live_after_del"] == 0


def test_device_options_checked_after_the_device():
    out = run("""
        out['bad_device'] = error(lambda: DeviceMemoryResource(5, {"ipc_enabled": True}))
        out['ipc'] = error(lambda: DeviceMemoryResource(0, {"ipc_enabled": True, "max_size": -1}))
        out['negative'] = error(lambda: DeviceMemoryResource(0, DeviceMemoryResourceOptions(max_size=-1)))
        out['huge'] = error(lambda: DeviceMemoryResource(0, {"max_size": 2**64}))
        out['creates'] = calls("cuMemPoolCreate")
        fake.fake_cuda_fail_next(b"cuMemPoolCreate", CUDA_ERROR_OUT_OF_MEMORY)
        out['driver'] = error(lambda: DeviceMemoryResource(0, {}))
        out['live'] = live_pools()
        fake.fake_cuda_reset(2, 0, 0)
        out['no_pools'] = error(lambda: DeviceMemoryResource(0, {}))
    """)
    assert out["bad_device"] == ["ValueError", "device 5 does not exist; there are 2 CUDA devices"]
    assert out["ipc"] == ["OverflowError", "can't convert negative value to size_t: max_size is -1"]
    assert out["negative"] == ["OverflowError", "can't convert negative value to size_t: max_size is -1"]
    assert out["huge"][0] == "OverflowError"
    assert out["creates"] == 0
    assert out["driver"] == ["RuntimeError",
                             "cuMemPoolCreate failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"]
    assert out["live"] == 0
    assert out["no_pools"] == ["NotImplementedError", "device 0 does not support memory pools"]


def test_pinned_pools():
    out = run("""
        mr = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=8192))
        out['facts'] = facts(mr)
        out['pool'] = pool(mr.handle)
        buf = mr.allocate(100, stream=0x66)
        out['buffer'] = [buf.device_id, buf.is_device_accessible, buf.is_host_accessible,
                         buf.is_managed, list(buf.__dlpack_device__())]
        ctypes.memset(buf.handle, 7, 100)
        out['calls'] = [calls("cuMemAllocFromPoolAsync"), calls("cuMemHostAlloc"),
                        last_stream("cuMemAllocFromPoolAsync")]
        buf.close()
        out['frees'] = [calls("cuMemFreeAsync"), calls("cuStreamSynchronize")]
        mr.close()
        out['allocate_closed'] = error(lambda: mr.allocate(1))
        out['live'] = live_pools()
        numa = PinnedMemoryResource({"numa_id": 1})
        out['numa'] = [numa.numa_id, pool(numa.handle)['location'], numa.device_id]
        out['far_node'] = error(lambda: PinnedMemoryResource({"numa_id": 7}))
    """)
    f = out["facts"]
    assert (f["type"], f["device"], f["dev"], f["host"], f["managed"]) == ("PinnedMemoryResource", -1, True,
                                                                          True, False)
    assert (f["owned"], f["numa_id"], f["ipc"], f["repr"]) == (True, -1, False,
                                                              "<PinnedMemoryResource device_id=-1>")
    p = out["pool"]
    assert (p["alloc"], p["handles"], p["location"], p["max_size"], p["threshold"]) == (1, 0, [2, -1], 8192, 0)
    assert out["buffer"] == [-1, True, True, False, [3, 0]]
    assert out["calls"] == [1, 0, 0x66]
    assert out["frees"] == [1, 0]
    assert out["allocate_closed"] == ["RuntimeError", "PinnedMemoryResource has been closed"]
    assert out["live"] == 0
    assert out["numa"] == [1, [3, 1], -1]
    assert out["far_node"] == ["RuntimeError",
                               "cuMemPoolCreate failed: CUDA_ERROR_INVALID_VALUE (invalid argument)"]


def test_pinned_pool_needs_device_0():
    # Its driver calls run in device 0's context.
    out = run("""
        fake.fake_cuda_reset(0, 0, 1)
        out['no_device'] = error(lambda: PinnedMemoryResource({}))
        out['legacy'] = error(LegacyPinnedMemoryResource)
    """)
    assert out["no_device"] == ["ValueError", "device 0 does not exist; there are 0 CUDA devices"]
    assert out["legacy"] == out["no_device"]


def test_pinned_without_options_is_not_a_pool():
    out = run("""
        mr = PinnedMemoryResource()
        out['facts'] = facts(mr)
        out['attributes'] = error(lambda: mr.attributes)
        buf = mr.allocate(64)
        out['calls'] = [calls("cuMemHostAlloc"), calls("cuMemPoolCreate")]
        mr.close()
        out['allocate_closed'] = error(lambda: mr.allocate(64))
        buf.close()
        out['frees'] = calls("cuMemFreeHost")
    """)
    f = out["facts"]
    assert (f["owned"], f["handle"], f["numa_id"], f["device"]) == (False, 0, -1, -1)
    assert out["attributes"] == ["NotImplementedError",
                                 "the memory resource allocates without a memory pool"]
    assert out["calls"] == [1, 0]
    assert out["allocate_closed"] == ["RuntimeError", "PinnedMemoryResource has been closed"]
    assert out["frees"] == 1


# cuda.core's table of managed pools that are made: options, device_id,
# preferred_location, and the location cuMemPoolCreate is given.
MANAGED_ROWS = [
    (None, 0, None, None),  # strided's own: cuMemAllocManaged on device 0
    ({}, -1, None, [0, -1]),
    ({"preferred_location": 0}, 0, ["device", 0], [1, 0]),
    ({"preferred_location": 1}, 1, ["device", 1], [1, 1]),
    ({"preferred_location": -1}, -1, ["host", None], [2, -1]),
    ({"preferred_location_type": "device", "preferred_location": 0}, 0, ["device", 0], [1, 0]),
    ({"preferred_location_type": "host"}, -1, ["host", None], [2, -1]),
    ({"preferred_location_type": "host_numa"}, -1, ["host_numa", 0], [3, 0]),
    ({"preferred_location_type": "host_numa", "preferred_location": 1}, -1, ["host_numa", 1], [3, 1]),
]


def test_managed_pools():
    out = run(f"""
        out['rows'] = []
        for options, *_ in {MANAGED_ROWS!r}:
            mr = ManagedMemoryResource(options)
            f = facts(mr)
            p = pool(mr.handle) if mr.handle else None
            buf = mr.allocate(256)
            ctypes.memset(buf.handle, 1, 256)
            out['rows'].append([f['device'], f['preferred'], p and p['location'], p and p['alloc'],
                                f['owned'], f['managed'], buf.is_managed,
                                list(buf.__dlpack_device__())])
            buf.close()
        out['allocs'] = [calls("cuMemAllocManaged"), calls("cuMemAllocFromPoolAsync")]
        typed = ManagedMemoryResource(ManagedMemoryResourceOptions(preferred_location=1))
        out['typed'] = [typed.device_id, list(typed.preferred_location), typed.is_handle_owned]
        out['repr'] = repr(typed)
        fake.fake_cuda_set_host_numa_id(1)
        out['numa_of_device'] = list(ManagedMemoryResource(
            {{"preferred_location_type": "host_numa"}}, device_id=1).preferred_location)
        fake.fake_cuda_set_host_numa_id(-1)
        out['no_numa'] = error(lambda: ManagedMemoryResource({{"preferred_location_type": "host_numa"}}))
        out['no_device'] = error(lambda: ManagedMemoryResource({{"preferred_location": 2}}))
        typed.close()
        out['closed'] = error(lambda: typed.allocate(1))
        out['preferred_after_close'] = list(typed.preferred_location)
    """)
    for (options, device, preferred, location), row in zip(MANAGED_ROWS, out["rows"]):
        pooled = options is not None
        assert row == [device, preferred, location, 2 if pooled else None, pooled, True, True, [13, 0]], options
    assert out["allocs"] == [1, len(MANAGED_ROWS) - 1]
    assert out["typed"] == [1, ["device", 1], True]
    assert out["repr"] == "<ManagedMemoryResource device_id=1>"
    assert out["numa_of_device"] == ["host_numa", 1]
    assert out["no_numa"] == [
        "NotImplementedError",
        "Cannot determine host NUMA ID for the current CUDA device. The system may not support NUMA, or no "
        "CUDA context is active. Set preferred_location to an explicit NUMA node ID or call "
        "Device.set_current() first.: device 0 has no host NUMA node"]
    assert out["no_device"] == ["ValueError", "device 2 does not exist; there are 2 CUDA devices"]
    assert out["closed"] == ["RuntimeError", "ManagedMemoryResource has been closed"]
    assert out["preferred_after_close"] == ["device", 1]


def test_managed_device_forms():
    out = run("""
        class Device:
            device_id = 1

        out['forms'] = [ManagedMemoryResource().device_id, ManagedMemoryResource(1).device_id,
                        ManagedMemoryResource(device_id=1).device_id,
                        ManagedMemoryResource(Device()).device_id,
                        ManagedMemoryResource(None, device_id=1).device_id]
        mr = ManagedMemoryResource(1)
        buf = mr.allocate(64)
        out['buffer_device'] = buf.device_id
        out['missing'] = error(lambda: ManagedMemoryResource(2))
        # The options' preferred device decides device_id; device_id the context.
        pooled = ManagedMemoryResource({"preferred_location": 0}, device_id=1)
        b = pooled.allocate(64)
        out['pooled'] = [pooled.device_id, b.device_id]
    """)
    assert out["forms"] == [0, 1, 1, 1, 1]
    assert out["buffer_device"] == 1
    assert out["missing"] == ["ValueError", "device 2 does not exist; there are 2 CUDA devices"]
    assert out["pooled"] == [0, 0]


def test_legacy_pinned_resource():
    out = run("""
        mr = LegacyPinnedMemoryResource()
        out['device_id'] = error(lambda: mr.device_id)
        out['props'] = [mr.is_device_accessible, mr.is_host_accessible, mr.is_managed]
        out['repr'] = repr(mr)
        buf = mr.allocate(300, stream=0x21)
        ctypes.memset(buf.handle, 3, 300)
        out['buffer'] = [buf.is_device_accessible, buf.is_host_accessible, list(buf.__dlpack_device__())]
        out['calls'] = [calls("cuMemAllocHost"), calls("cuMemHostAlloc")]
        buf.close()
        out['free'] = [calls("cuStreamSynchronize"), last_stream("cuStreamSynchronize"),
                       calls("cuMemFreeHost")]
        empty = mr.allocate(0)
        out['empty'] = [empty.handle, empty.size, calls("cuMemAllocHost")]
        out['has_close'] = hasattr(mr, "close")
        fake.fake_cuda_fail_next(b"cuMemAllocHost", CUDA_ERROR_OUT_OF_MEMORY)
        out['failure'] = error(lambda: mr.allocate(8))
    """)
    assert out["device_id"] == ["RuntimeError", "a pinned memory resource is not bound to any GPU"]
    assert out["props"] == [True, True, False]
    assert out["repr"] == "<LegacyPinnedMemoryResource device_id=-1>"
    assert out["buffer"] == [True, True, [3, 0]]
    assert out["calls"] == [1, 0]
    assert out["free"] == [1, 0x21, 1]
    assert out["empty"] == [0, 0, 1]
    assert out["has_close"] is False
    assert out["failure"] == ["RuntimeError", "cuMemAllocHost failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"]


def test_pool_attributes_read_the_driver_each_time():
    out = run("""
        mr = DeviceMemoryResource(0, {})
        a = mr.attributes
        before = calls("cuMemPoolGetAttribute")
        a.release_threshold
        out['per_read'] = calls("cuMemPoolGetAttribute") - before
        fake.fake_cuda_fail_next(b"cuMemPoolGetAttribute", 400)
        out['failure'] = error(lambda: a.used_mem_high)
        out['names'] = sorted(n for n in dir(a) if not n.startswith("_"))
    """)
    assert out["per_read"] == 8
    assert out["failure"][0] == "RuntimeError"
    assert "cuMemPoolGetAttribute failed: CUDA_ERROR_INVALID_HANDLE" in out["failure"][1]
    assert out["names"] == ["release_threshold", "reserved_mem_current", "reserved_mem_high",
                            "reuse_allow_internal_dependencies", "reuse_allow_opportunistic",
                            "reuse_follow_event_dependencies", "used_mem_current", "used_mem_high"]


def test_pools_go_with_their_last_buffer():
    out = run("""
        mr = DeviceMemoryResource(0, {})
        buf = mr.allocate(64)
        del mr
        gc.collect()
        out['while_buffer'] = [live_pools(), calls("cuMemPoolDestroy")]
        buf.close()
        out['after'] = [live_pools(), calls("cuMemPoolDestroy")]
    """)
    assert out["while_buffer"] == [1, 0]
    assert out["after"] == [0, 1]


# ManagedBuffer: the advice and page moves of managed memory, and what the
# fake records of them (fake_cuda_managed_info, fake_cuda_last_managed_op).
MANAGED_CONTROL = """
from strided import ManagedBuffer


class Managed(ctypes.Structure):
    _fields_ = [("read_mostly", ctypes.c_int), ("preferred_type", ctypes.c_int),
                ("preferred_id", ctypes.c_int), ("accessed", ctypes.c_int * 65),
                ("n_accessed", ctypes.c_int), ("prefetch_type", ctypes.c_int),
                ("prefetch_id", ctypes.c_int), ("discards", ctypes.c_int)]


class ManagedOp(ctypes.Structure):
    _fields_ = [("function", ctypes.c_char * 40), ("address", ctypes.c_size_t),
                ("size", ctypes.c_size_t), ("advice", ctypes.c_int),
                ("location_type", ctypes.c_int), ("location_id", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("device", ctypes.c_int)]


fake.fake_cuda_managed_info.argtypes = [ctypes.c_size_t, ctypes.POINTER(Managed)]
fake.fake_cuda_managed_info.restype = ctypes.c_int
fake.fake_cuda_last_managed_op.argtypes = [ctypes.POINTER(ManagedOp)]
fake.fake_cuda_last_managed_op.restype = ctypes.c_int
fake.fake_cuda_pool_access.argtypes = [ctypes.c_void_p, ctypes.c_int]
fake.fake_cuda_pool_access.restype = ctypes.c_int


def managed_info(buf):
    m = Managed()
    assert fake.fake_cuda_managed_info(buf.handle, ctypes.byref(m))
    return dict(read_mostly=m.read_mostly, preferred=[m.preferred_type, m.preferred_id],
                accessed=list(m.accessed[:m.n_accessed]),
                prefetch=[m.prefetch_type, m.prefetch_id], discards=m.discards)


def managed_op():
    m = ManagedOp()
    if not fake.fake_cuda_last_managed_op(ctypes.byref(m)):
        return None
    return [m.function.decode(), m.advice, m.location_type, m.location_id, m.stream or 0,
            m.device]


class Device:  # a cuda.core Device, as strided sees it
    def __init__(self, device_id):
        self.device_id = device_id


class Host:  # a cuda.core Host
    def __init__(self, numa_id=None, is_numa_current=False):
        self.numa_id, self.is_numa_current = numa_id, is_numa_current
"""

NOT_MANAGED = "requires a managed-memory allocation"


def run_managed(code):
    return run_fake(POOLS + MANAGED_CONTROL + textwrap.dedent(code))


def test_managed_resources_hand_out_managed_buffers():
    out = run_managed("""
        mr = ManagedMemoryResource()
        buf = mr.allocate(4096, stream=0x55)
        pooled = ManagedMemoryResource({"preferred_location": 1}).allocate(64)
        out['types'] = [type(buf).__name__, isinstance(buf, strided.Buffer),
                        type(pooled).__name__, repr(buf).startswith("<Buffer ptr=")]
        out['facts'] = [buf.is_managed, buf.size, list(buf.__dlpack_device__()),
                        buf.memory_resource is mr]
        out['copy'] = type(buf.copy_to(stream=0x55)).__name__
        out['other'] = [type(DeviceMemoryResource(0).allocate(8)).__name__,
                        type(PinnedMemoryResource().allocate(8)).__name__]
        # from_handle is a class method: ManagedBuffer's makes ManagedBuffers,
        # Buffer's Buffers, with the rules of Buffer.from_handle.
        wrapped = ManagedBuffer.from_handle(MANAGED, 256)
        out['from_handle'] = [type(wrapped).__name__, wrapped.is_managed,
                              type(strided.Buffer.from_handle(MANAGED, 256)).__name__,
                              type(ManagedBuffer.from_handle(MANAGED, 8, owner=mr)).__name__]
        out['from_handle_rules'] = error(lambda: ManagedBuffer.from_handle(MANAGED, 8, mr=mr,
                                                                            owner=mr))
        out['direct'] = error(lambda: ManagedBuffer())
        out['subclass'] = error(lambda: type("Sub", (ManagedBuffer,), {}))
        out['preferred'] = [mr.preferred_location,
                            type(ManagedMemoryResource({"preferred_location": 1})
                                 .preferred_location[0]).__name__]
    """)
    assert out["types"] == ["ManagedBuffer", True, "ManagedBuffer", True]
    assert out["facts"] == [True, 4096, [13, 0], True]
    assert out["copy"] == "ManagedBuffer"
    assert out["other"] == ["Buffer", "Buffer"]
    assert out["from_handle"] == ["ManagedBuffer", True, "Buffer", "ManagedBuffer"]
    assert out["from_handle_rules"] == [
        "ValueError", "owner and memory resource cannot be both specified together"]
    assert out["direct"] == [
        "RuntimeError", "Buffer objects cannot be instantiated directly. Please use MemoryResource APIs."]
    assert out["subclass"][0] == "TypeError"
    assert out["preferred"] == [None, "ManagedMemoryLocationType"]


def test_managed_buffer_read_mostly_and_preferred_location():
    out = run_managed("""
        buf = ManagedMemoryResource(device_id=1).allocate(4096)
        out['read_mostly'] = [buf.read_mostly]
        buf.read_mostly = 1
        out['read_mostly'] += [buf.read_mostly, managed_info(buf)['read_mostly'], managed_op()]
        buf.read_mostly = []
        out['read_mostly'].append(buf.read_mostly)
        seen = []
        for loc in [None, 0, Device(1), -1, "host", Host(), ("host_numa", 1), Host(numa_id=0),
                    Host(is_numa_current=True), ("device", 1), strided.ManagedMemoryLocationType.HOST,
                    ("host", None), None]:
            buf.preferred_location = loc
            p = buf.preferred_location
            seen.append(None if p is None else [p[0], p[1], type(p[0]).__name__])
        out['seen'] = seen
        out['op'] = managed_op()
        buf.preferred_location = ("host_numa", 1)
        out['info'] = managed_info(buf)['preferred']
        errors = []
        for loc in [1.5, 5, -3, ("device", None), ("host", 2), "device", "bogus", ("gpu", 0), True,
                    Host(numa_id=-1)]:
            errors.append(error(lambda: setattr(buf, "preferred_location", loc)))
        out['errors'] = errors
        out['delete'] = error(lambda: delattr(buf, "preferred_location"))
        out['unchanged'] = list(buf.preferred_location)
    """)
    rm = out["read_mostly"]
    assert rm[:3] == [False, True, 1]
    assert rm[3][:2] == ["cuMemAdvise_v2", 1] and rm[3][5] == 1  # in device 1's context
    assert rm[4] is False
    E = "ManagedMemoryLocationType"
    assert out["seen"] == [
        None, ["device", 0, E], ["device", 1, E], ["host", None, E], ["host", None, E],
        ["host", None, E], ["host_numa", 1, E], ["host_numa", 0, E],
        # the calling thread's node, which the fake resolves to node 0
        ["host_numa", 0, E], ["device", 1, E], ["host", None, E], ["host", None, E], None]
    assert out["op"][:2] == ["cuMemAdvise_v2", 4]  # unset the preferred location
    assert out["info"] == [3, 1]
    errors = out["errors"]
    assert errors[0] == ["TypeError", "preferred_location must be a device ordinal, a Device, a "
                                      "Host, 'host', a (type, id) pair or None; got float"]
    assert errors[1] == ["ValueError", "device 5 does not exist; there are 2 CUDA devices"]
    assert errors[2] == ["ValueError", "a device location needs a device ordinal (>= 0), got -3"]
    assert errors[3] == ["ValueError", "preferred_location: a 'device' location needs its device "
                                       "ordinal, as ('device', 0)"]
    assert errors[4] == ["ValueError", "preferred_location: a 'host' location has no id, got "
                                       "('host', 2)"]
    assert errors[5] == ["ValueError", "preferred_location: a 'device' location needs its device "
                                       "ordinal, as ('device', 0)"]
    assert errors[6][0] == errors[7][0] == "ValueError" and "is not a location type" in errors[6][1]
    assert errors[8] == ["TypeError", "preferred_location must be an int, not bool"]
    assert errors[9] == ["ValueError", "a host_numa location needs a NUMA node (>= 0), got -1"]
    assert out["delete"] == ["AttributeError", "cannot delete preferred_location"]
    assert out["unchanged"] == ["host_numa", 1]


def test_managed_buffer_accessed_by():
    out = run_managed("""
        fake.fake_cuda_reset(3, 0, 1)
        buf = ManagedMemoryResource().allocate(4096)
        s = buf.accessed_by
        out['empty'] = [len(s), list(s), repr(s), 0 in s, "x" in s]
        s.add(2)
        s.add("host")
        s.add(Device(0))
        s.add(2)
        out['items'] = [list(x) for x in s]
        out['fake'] = managed_info(buf)['accessed']
        out['in'] = [0 in s, Device(2) in s, ("device", 1) in s, -1 in s, Host() in s,
                     ("host_numa", 0) in s, 1.5 in s, len(s)]
        out['repr'] = repr(s)
        s.discard(0)
        s.discard(1)              # not advised: no call
        s.discard(Host(numa_id=1))  # never an item: ignored
        s.discard(1.5)
        out['after_discard'] = [list(x) for x in buf.accessed_by]
        s |= {1}
        out['union'] = sorted(tuple(x) for x in buf.accessed_by if x[1] is not None)
        out['plain_set'] = type(s | {7}).__name__
        s.remove(1)
        out['remove_missing'] = error(lambda: s.remove(1))
        buf.accessed_by = [1, Device(0), "host", 1]
        out['set'] = [list(x) for x in buf.accessed_by]
        advice = calls("cuMemAdvise_v2")
        buf.accessed_by = [Device(0), 1, -1]
        out['set_again_calls'] = calls("cuMemAdvise_v2") - advice
        out['bad_entry'] = error(lambda: setattr(buf, "accessed_by", [0, 1.5]))
        out['numa_entry'] = error(lambda: setattr(buf, "accessed_by", [0, ("host_numa", 0)]))
        out['missing_device'] = error(lambda: setattr(buf, "accessed_by", [7]))
        out['not_iterable'] = error(lambda: setattr(buf, "accessed_by", 3))
        out['add_numa'] = error(lambda: s.add(Host(numa_id=0)))
        out['unchanged'] = [list(x) for x in buf.accessed_by]
        buf.accessed_by = set()
        out['cleared'] = len(buf.accessed_by)
        buf.close()
        out['closed'] = [error(lambda: buf.accessed_by), error(lambda: len(s))]
    """)
    assert out["empty"] == [0, [], "AccessedBySetProxy(set())", False, False]
    assert out["items"] == [["device", 0], ["device", 2], ["host", None]]
    assert out["fake"] == [2, -1, 0]  # the order advised
    assert out["in"] == [True, True, False, True, True, False, False, 3]
    assert out["repr"].startswith("AccessedBySetProxy({") and "'host'" in out["repr"]
    assert out["after_discard"] == [["device", 2], ["host", None]]
    assert out["union"] == [["device", 1], ["device", 2]]
    assert out["plain_set"] == "set"
    assert out["remove_missing"][0] == "KeyError"
    assert out["set"] == [["device", 0], ["device", 1], ["host", None]]
    assert out["set_again_calls"] == 0
    assert out["bad_entry"] == ["TypeError", "accessed_by entries must be a device ordinal, a "
                                             "Device, a Host, 'host', a (type, id) pair or None; "
                                             "got float"]
    assert out["numa_entry"] == ["ValueError", "advise CU_MEM_ADVISE_SET_ACCESSED_BY does not "
                                               "support location_type='host_numa'"]
    assert out["missing_device"] == ["ValueError", "device 7 does not exist; there are 3 CUDA devices"]
    assert out["not_iterable"] == ["TypeError", "accessed_by must be an iterable of locations"]
    assert out["add_numa"] == ["ValueError", "advise CU_MEM_ADVISE_SET_ACCESSED_BY does not support "
                                             "location_type='host_numa'"]
    assert out["unchanged"] == out["set"]
    assert out["cleared"] == 0
    assert out["closed"] == [["RuntimeError", "Buffer has been closed"]] * 2


def test_managed_buffer_prefetch_and_discard():
    out = run_managed("""
        fake.fake_cuda_move_bytes(1)
        buf = ManagedMemoryResource().allocate(256)
        buf.fill(7, stream=0x55)
        buf.prefetch(1, stream=0x55)
        out['prefetch'] = [managed_op(), managed_info(buf)['prefetch']]
        buf.prefetch(Host(is_numa_current=True), stream=2)
        out['numa_current'] = managed_op()
        buf.prefetch(("host_numa", 1), stream=0x66)
        out['numa'] = managed_info(buf)['prefetch']
        buf.discard(stream=0x77)
        out['discard'] = [managed_op(), managed_info(buf)['discards'],
                          np.frombuffer((ctypes.c_uint8 * 4).from_address(buf.handle),
                                        np.uint8).tolist()]
        buf.discard_prefetch("host", stream=0x78)
        out['discard_prefetch'] = [managed_op(), managed_info(buf)['prefetch']]
        out['errors'] = [
            error(lambda: buf.prefetch(0)),
            error(lambda: buf.prefetch(0, stream=None)),
            error(lambda: buf.prefetch(None, stream=0)),
            error(lambda: buf.prefetch(0, 0)),
            error(lambda: buf.prefetch(stream=0)),
            error(lambda: buf.discard(0)),
            error(lambda: buf.discard()),
            error(lambda: buf.discard_prefetch(5, stream=0)),
            error(lambda: buf.prefetch(0, stream=1.5)),
        ]
        dev = ManagedBuffer.from_handle(DEV0, 64)
        out['not_managed'] = [error(lambda: dev.prefetch(0, stream=0)),
                              error(lambda: dev.discard(stream=0)),
                              error(lambda: dev.read_mostly),
                              error(lambda: setattr(dev, "read_mostly", True)),
                              error(lambda: dev.preferred_location),
                              error(lambda: list(dev.accessed_by))]
        empty = ManagedMemoryResource().allocate(0)
        before = calls("cuMemPrefetchAsync_v2")
        empty.prefetch(0, stream=0)
        out['empty'] = [calls("cuMemPrefetchAsync_v2") - before, empty.read_mostly,
                        empty.preferred_location, len(empty.accessed_by)]
        fake.fake_cuda_fail_next(b"cuMemPrefetchAsync_v2", CUDA_ERROR_OUT_OF_MEMORY)
        out['driver'] = error(lambda: buf.prefetch(0, stream=0))
    """)
    assert out["prefetch"] == [["cuMemPrefetchAsync_v2", 0, 1, 1, 0x55, 0], [1, 1]]
    assert out["numa_current"][2:5] == [4, 0, 2]
    assert out["numa"] == [3, 1]
    assert out["discard"] == [["cuMemDiscardBatchAsync", 0, 0, 0, 0x77, 0], 1, [0xdd] * 4]
    assert out["discard_prefetch"][0] == ["cuMemDiscardAndPrefetchBatchAsync", 0, 2, 0, 0x78, 0]
    assert out["discard_prefetch"][1] == [2, 0]
    none_stream = ("stream is required and must not be None; pass device.default_stream "
                   "explicitly to use the default stream.")
    assert out["errors"] == [
        ["TypeError", "prefetch() needs keyword-only argument stream"],
        ["TypeError", none_stream],
        ["ValueError", "location is required"],
        ["TypeError", "prefetch() takes 1 positional argument (2 given)"],
        ["TypeError", out["errors"][4][1]],
        ["TypeError", "discard() takes 0 positional arguments (1 given)"],
        ["TypeError", "discard() needs keyword-only argument stream"],
        ["ValueError", "device 5 does not exist; there are 2 CUDA devices"],
        ["TypeError", out["errors"][8][1]],
    ]
    assert "location" in out["errors"][4][1]
    nm = out["not_managed"]
    assert nm[0] == ["ValueError", "prefetch " + NOT_MANAGED]
    assert nm[1] == ["ValueError", "discard " + NOT_MANAGED]
    assert nm[2] == ["ValueError", "read_mostly " + NOT_MANAGED]
    assert nm[3] == ["ValueError", "advise " + NOT_MANAGED]
    assert nm[4] == ["ValueError", "preferred_location " + NOT_MANAGED]
    assert nm[5] == ["ValueError", "accessed_by " + NOT_MANAGED]
    assert out["empty"] == [0, False, None, 0]
    assert out["driver"][0] == "RuntimeError"
    assert "cuMemPrefetchAsync_v2 failed: CUDA_ERROR_OUT_OF_MEMORY" in out["driver"][1]


def test_managed_buffer_on_a_cuda_12_0_driver():
    out = run_fake('os.environ["FAKE_CUDA_DRIVER_VERSION"] = "12000"\n' + POOLS + MANAGED_CONTROL +
                   textwrap.dedent("""
        buf = ManagedMemoryResource().allocate(4096)
        buf.preferred_location = 1
        buf.prefetch("host", stream=0x55)
        out['ops'] = [managed_op(), list(buf.preferred_location)]
        out['numa'] = error(lambda: buf.prefetch(("host_numa", 0), stream=0))
        out['discard'] = error(lambda: buf.discard(stream=0))
    """))
    assert out["ops"] == [["cuMemPrefetchAsync", 0, 2, 0, 0x55, 0], ["device", 1]]
    assert out["numa"] == ["NotImplementedError",
                           "a host_numa location needs a driver for CUDA 12.2 or later "
                           "(cuMemPrefetchAsync with a CUmemLocation); this driver supports CUDA 12.0"]
    assert out["discard"] == ["NotImplementedError",
                              "discard needs a driver for CUDA 13.0 or later "
                              "(cuMemDiscardBatchAsync); this driver supports CUDA 12.0"]


def test_peer_accessible_by():
    out = run_managed("""
        fake.fake_cuda_reset(10, 0, 1)
        mr = DeviceMemoryResource(0)
        p = mr.peer_accessible_by
        out['empty'] = [len(p), list(p), repr(p)]
        def step(name, fn):
            n = calls("cuMemPoolSetAccess")
            fn()
            out.setdefault('steps', []).append([name, sorted(mr.peer_accessible_by),
                                                calls("cuMemPoolSetAccess") - n])
        step("add", lambda: p.add(1))
        step("add-again", lambda: p.add(Device(1)))
        step("add-owner", lambda: p.add(0))
        step("update", lambda: p.update([2, 3], {Device(4)}))
        step("discard", lambda: p.discard(2))
        step("discard-missing", lambda: p.discard(5))
        step("discard-other", lambda: p.discard("x"))
        step("difference", lambda: p.difference_update([3, 99, None]))
        step("ior", lambda: p.__ior__({5, 6}))
        step("isub", lambda: p.__isub__({6}))
        step("iand", lambda: p.__iand__({1, 5, 7}))
        step("ixor", lambda: p.__ixor__({5, 7, 0, 42}))
        step("set", lambda: setattr(mr, "peer_accessible_by", [2, Device(3), 0, 3]))
        step("set-same", lambda: setattr(mr, "peer_accessible_by", {3, 2}))
        step("clear", lambda: p.clear())
        out['in'] = [2 in p, Device(3) in p, 0 in p, "x" in p, None in p]
        mr.peer_accessible_by = [1, 2]
        out['in'] = [1 in p, Device(2) in p, 0 in p, "x" in p, None in p, True in p]
        out['flags'] = [fake.fake_cuda_pool_access(mr.handle, d) for d in range(4)]
        out['plain'] = type(p & {1}).__name__
        out['errors'] = [
            error(lambda: p.add(9)),
            error(lambda: p.update([1, 8, 9])),
            error(lambda: setattr(mr, "peer_accessible_by", [8])),
            error(lambda: p.add(12)),
            error(lambda: setattr(mr, "peer_accessible_by", [12])),
            error(lambda: p.add("x")),
            error(lambda: setattr(mr, "peer_accessible_by", None)),
            error(lambda: delattr(mr, "peer_accessible_by")),
        ]
        out['unchanged'] = sorted(p)
        owned = DeviceMemoryResource(1, {})
        owned.peer_accessible_by = [0, 1]
        out['owned'] = [sorted(owned.peer_accessible_by),
                        fake.fake_cuda_pool_access(owned.handle, 0)]
        owned.close()
        out['closed'] = [error(lambda: owned.peer_accessible_by),
                         error(lambda: setattr(owned, "peer_accessible_by", []))]
        out['others'] = [hasattr(r, "peer_accessible_by") for r in
                         (PinnedMemoryResource(), ManagedMemoryResource(), LegacyPinnedMemoryResource())]
    """)
    assert out["empty"] == [0, [], "PeerAccessibleBySetProxy(set())"]
    assert out["steps"] == [
        ["add", [1], 1], ["add-again", [1], 0], ["add-owner", [1], 0],
        ["update", [1, 2, 3, 4], 1], ["discard", [1, 3, 4], 1], ["discard-missing", [1, 3, 4], 0],
        ["discard-other", [1, 3, 4], 0], ["difference", [1, 4], 1], ["ior", [1, 4, 5, 6], 1],
        ["isub", [1, 4, 5], 1], ["iand", [1, 5], 1], ["ixor", [1, 7], 1],
        ["set", [2, 3], 1], ["set-same", [2, 3], 0], ["clear", [], 1]]
    assert out["in"] == [True, True, False, False, False, False]
    assert out["flags"] == [3, 3, 3, 0]
    assert out["plain"] == "set"
    assert out["errors"] == [
        ["ValueError", "Device 0 cannot access peer: 9"],
        ["ValueError", "Device 0 cannot access peer(s): 8, 9"],
        ["ValueError", "Device 0 cannot access peer(s): 8"],
        ["ValueError", "device 12 does not exist; there are 10 CUDA devices"],
        ["ValueError", "device 12 does not exist; there are 10 CUDA devices"],
        ["TypeError", "device_id must be an int or a Device, got str"],
        ["TypeError", "expected an iterable of devices"],
        ["AttributeError", "cannot delete peer_accessible_by"],
    ]
    assert out["unchanged"] == [1, 2]
    assert out["owned"] == [[0], 3]
    closed = ["RuntimeError", "DeviceMemoryResource has been closed"]
    assert out["closed"] == [closed, closed]
    assert out["others"] == [False, False, False]


def test_ipc_enabled_pools():
    out = run("""
        import uuid
        mr = DeviceMemoryResource(1, DeviceMemoryResourceOptions(ipc_enabled=True))
        out['facts'] = dict(facts(mr), uuid=str(mr.uuid))
        out['pool'] = pool(mr.handle)
        out['uuid_type'] = type(mr.uuid) is uuid.UUID
        out['uuid_stable'] = mr.uuid == mr.uuid
        other = DeviceMemoryResource(1, {"ipc_enabled": True})
        out['distinct'] = other.uuid != mr.uuid
        pinned = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
        out['pinned'] = dict(facts(pinned), uuid=str(pinned.uuid))
        out['pinned_pool'] = pool(pinned.handle)
        fake.fake_cuda_set_ipc_handle_types(0)
        out['no_fd'] = error(lambda: DeviceMemoryResource(0, {"ipc_enabled": True}))
    """)
    f = out["facts"]
    assert (f["ipc"], f["mapped"], f["owned"]) == (True, False, True)
    assert out["uuid_type"] and out["uuid_stable"] and out["distinct"]
    assert out["pool"]["handles"] == 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    assert f["allocation_handle"] is None  # made (tests/python/test_ipc_fake_cuda.py tests it)
    assert (out["pinned"]["ipc"], out["pinned"]["mapped"]) == (True, False)
    assert out["pinned_pool"]["handles"] == 1
    assert out["no_fd"] == ["NotImplementedError",
                            "IPC-enabled memory pools need POSIX file descriptor handles, which the "
                            "memory pools of device 0 do not support"]
