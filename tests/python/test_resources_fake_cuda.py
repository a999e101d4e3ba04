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
    assert out["ipc"] == ["NotImplementedError", "IPC-enabled memory pools are not supported yet"]
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
