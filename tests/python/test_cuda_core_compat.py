"""The compatibility suite: cuda.core 1.2's Buffer, memory resources and
StridedMemoryView, one test body for both implementations.

STRIDED_COMPAT_IMPL selects what the bodies run against: "strided" (the
default) or "cuda.core" (where cuda.core 1.2 is installed). The bodies state
cuda.core's behaviour; where strided differs on purpose, the body says so
with `differs(...)`, whose reason is the difference docs/cuda-core.md lists.
Host memory needs no driver in strided; cuda.core asks the driver about
pointers it did not allocate, so those bodies skip with "needs a CUDA
driver" where it has none. The device bodies run on a GPU machine against
both (they skip with "skipped: no CUDA device" elsewhere).
"""

import dataclasses
import os
import pickle

import numpy as np
import pytest

from gpu_util import cuda_device_count

IMPL = os.environ.get("STRIDED_COMPAT_IMPL", "strided")
STRIDED = IMPL == "strided"

if STRIDED:
    import strided as api
    from strided import IPCAllocationHandle, IPCBufferDescriptor
    from strided import StridedMemoryView, args_viewable_as_strided_memory
    from strided import (TensorMapInterleave, TensorMapL2Promotion, TensorMapOOBFill,
                         TensorMapSwizzle)
    from strided import (CopyOptions, ManagedMemoryLocationType, MemcpyOverlapMode,
                         MemcpySrcAccessOrder)
elif IMPL == "cuda.core":
    cc = pytest.importorskip("cuda.core")
    import cuda.core as api
    from cuda.core.utils import StridedMemoryView, args_viewable_as_strided_memory
    from cuda.core._tensor_map import (TensorMapInterleave, TensorMapL2Promotion,
                                       TensorMapOOBFill, TensorMapSwizzle)
    from cuda.core.utils import CopyOptions, MemcpyOverlapMode, MemcpySrcAccessOrder
    from cuda.core.typing import ManagedMemoryLocationType
    from cuda.core._memory._ipc import IPCAllocationHandle, IPCBufferDescriptor
else:
    raise RuntimeError(f"STRIDED_COMPAT_IMPL must be strided or cuda.core, not {IMPL!r}")

Buffer = api.Buffer
MemoryResource = api.MemoryResource

needs_gpu = pytest.mark.skipif(cuda_device_count() == 0, reason="skipped: no CUDA device")

if not STRIDED and cuda_device_count() > 0:
    # As a cuda.core program starts: with device 0's context current on
    # this thread (cuda.core's calls on host memory need one too).
    cc.Device(0).set_current()


def differs(reason):
    """Where strided does otherwise on purpose (docs/cuda-core.md)."""
    return pytest.mark.skipif(STRIDED, reason=f"strided differs: {reason}")


def driver_call(fn, *args, **kwargs):
    """fn(...), skipping where cuda.core needs a driver this machine lacks."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # cuda.pathfinder's DynamicLibNotFoundError, cuInit failures
        if not STRIDED and ("driver" in str(e).lower() or "CUDA_ERROR" in str(e)):
            pytest.skip(f"needs a CUDA driver: {e}")
        raise


def host_array(n=6, dtype=np.float32):
    return np.arange(n, dtype=dtype)


# ---- StridedMemoryView from host producers ----

def test_from_dlpack_numpy():
    a = host_array(12).reshape(3, 4)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.ptr == a.ctypes.data
    assert v.shape == (3, 4)
    assert v.strides == (4, 1)
    assert v.size == 12
    assert v.dtype == np.float32
    assert v.device_id == -1
    assert v.is_device_accessible is False
    assert v.readonly is False
    assert v.exporting_obj is a


def test_from_dlpack_readonly_numpy():
    a = host_array()
    a.flags.writeable = False
    assert StridedMemoryView.from_dlpack(a, stream_ptr=-1).readonly is True


def test_from_dlpack_transposed_slice():
    a = host_array(24).reshape(4, 6)[::2, 1:5].T
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.shape == a.shape
    assert v.strides == tuple(s // a.itemsize for s in a.strides)
    assert v.ptr == a.ctypes.data


def test_from_dlpack_host_needs_a_stream():
    with pytest.raises(BufferError, match=r"^stream=None is ambiguous with view\(\)"):
        StridedMemoryView.from_dlpack(host_array(), stream_ptr=None)


def test_from_dlpack_without_protocol():
    with pytest.raises((AttributeError, TypeError)):
        StridedMemoryView.from_dlpack([1, 2, 3], stream_ptr=-1)


def test_from_any_interface_numpy():
    a = host_array()
    v = StridedMemoryView.from_any_interface(a, stream_ptr=-1)
    assert v.shape == (6,) and v.exporting_obj is a


def test_from_any_interface_without_protocol():
    with pytest.raises(BufferError, match="does not support any data exchange protocol"):
        StridedMemoryView.from_any_interface(object(), stream_ptr=-1)


def test_from_array_interface_numpy():
    a = host_array(12).reshape(3, 4)
    v = driver_call(StridedMemoryView.from_array_interface, a)
    assert v.shape == (3, 4)
    assert v.strides is None
    assert v.dtype == np.float32
    assert v.is_device_accessible is False


@differs("from_array_interface reports -1 for host memory bound to no device, "
         "not the current device")
def test_from_array_interface_reports_the_current_device():
    v = driver_call(StridedMemoryView.from_array_interface, host_array())
    assert v.device_id >= 0


def test_from_array_interface_version_and_mask():
    class Old:
        __array_interface__ = dict(version=2, data=(0, False), shape=(0,), typestr="<f4")

    class Masked:
        __array_interface__ = dict(version=3, data=(0, False), shape=(0,), typestr="<f4",
                                   mask=np.zeros(0))

    with pytest.raises(BufferError, match="^only NumPy Array Interface v3 or above is supported$"):
        StridedMemoryView.from_array_interface(Old())
    with pytest.raises(BufferError, match="^mask is not supported$"):
        StridedMemoryView.from_array_interface(Masked())


# ---- view() ----

def test_view_without_arguments_is_self():
    v = StridedMemoryView.from_dlpack(host_array(), stream_ptr=-1)
    assert v.view() is v


def test_view_dtype():
    v = StridedMemoryView.from_dlpack(host_array(), stream_ptr=-1)
    w = driver_call(v.view, dtype=np.dtype(np.int32))
    assert w.dtype == np.int32 and w.shape == (6,)


def test_view_layout():
    v = StridedMemoryView.from_dlpack(host_array(16), stream_ptr=-1)
    w = driver_call(v.view, v._layout.reshaped((4, 4)))
    assert w.shape == (4, 4)


def test_view_itemsize_mismatch():
    v = StridedMemoryView.from_dlpack(host_array(), stream_ptr=-1)
    with pytest.raises(ValueError, match=r"The dtype's itemsize \(8\) does not match the "
                                         r"layout's itemsize \(4\)\."):
        driver_call(v.view, dtype=np.dtype(np.float64))


# ---- DLPack export ----

def test_dlpack_round_trip_numpy():
    a = host_array(12).reshape(3, 4)[:, ::2]
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    b = np.from_dlpack(v)
    assert b.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(a, b)
    assert v.__dlpack_device__() == (1, 0)


def test_dlpack_max_version_length():
    v = StridedMemoryView.from_dlpack(host_array(), stream_ptr=-1)
    with pytest.raises(BufferError, match=r"Expected max_version tuple\[int, int\], got"):
        v.__dlpack__(max_version=(1,))


@differs("__dlpack__ takes dl_device=(kDLCPU, 0) and copy=True (the array API's rules)")
def test_dlpack_dl_device_and_copy_refused():
    v = StridedMemoryView.from_dlpack(host_array(), stream_ptr=-1)
    with pytest.raises(BufferError, match="^Sorry, not supported: dl_device other than None$"):
        v.__dlpack__(dl_device=(1, 0))
    with pytest.raises(BufferError, match=r"^Sorry, not supported: copy=True$"):
        v.__dlpack__(copy=True)


def test_dlpack_structured_dtype_refused():
    a = np.zeros(4, dtype=[("x", "<i4"), ("y", "<f4")])
    b = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    v = driver_call(StridedMemoryView.from_buffer, b, (4,), dtype=a.dtype)
    with pytest.raises(BufferError, match="^Structured dtypes are not supported for DLPack export"):
        v.__dlpack__()


def test_dlpack_exchange_api_capsule():
    api_capsule = StridedMemoryView.__dlpack_c_exchange_api__
    assert type(api_capsule).__name__ == "PyCapsule"
    assert "dlpack_exchange_api" in repr(api_capsule)


def test_repr_layout():
    a = host_array(3).astype(np.int32)
    text = repr(StridedMemoryView.from_dlpack(a, stream_ptr=-1))
    assert text.startswith(f"StridedMemoryView(ptr={a.ctypes.data},\n" + " " * 18 + "shape=(3,),\n")
    assert text.endswith("exporting_obj=numpy.ndarray)")


# ---- from_buffer ----

def test_from_buffer():
    a = host_array(12)
    b = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    v = driver_call(StridedMemoryView.from_buffer, b, (3, 4), dtype=np.dtype(np.float32))
    assert v.ptr == a.ctypes.data and v.shape == (3, 4)
    assert v.exporting_obj is b
    assert v.dtype == np.float32


def test_from_buffer_needs_itemsize_or_dtype():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    with pytest.raises(ValueError, match="^Either itemsize or dtype must be specified$"):
        StridedMemoryView.from_buffer(b, (6,))


def test_from_buffer_itemsize_and_dtype_disagree():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    with pytest.raises(ValueError, match=r"itemsize \(8\) does not match dtype.itemsize \(4\)"):
        StridedMemoryView.from_buffer(b, (6,), itemsize=8, dtype=np.dtype(np.float32))


# ---- Buffer ----

def test_buffer_cannot_be_made_directly():
    with pytest.raises(RuntimeError, match="^Buffer objects cannot be instantiated directly"):
        Buffer()


def test_buffer_from_handle_owner_and_mr():
    a = host_array()

    class Mr(MemoryResource):
        pass

    with pytest.raises(ValueError, match="^owner and memory resource cannot be both specified "
                                         "together$"):
        Buffer.from_handle(a.ctypes.data, a.nbytes, mr=Mr(), owner=a)


def test_buffer_repr_eq_hash():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    c = Buffer.from_handle(a.ctypes.data, a.nbytes)
    assert repr(b) == f"<Buffer ptr={a.ctypes.data:#x} size={a.nbytes}>"
    assert b == c and hash(b) == hash(c) == hash((a.ctypes.data, a.nbytes))
    assert b != 5
    assert b.owner is a and c.owner is None


def test_buffer_close_twice():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes)
    assert b.is_closed is False
    b.close()
    b.close()
    assert b.is_closed is True


def test_buffer_context_manager():
    a = host_array()
    with Buffer.from_handle(a.ctypes.data, a.nbytes) as b:
        assert b.is_closed is False
    assert b.is_closed is True


@differs("a closed Buffer raises on handle and size instead of answering 0")
def test_buffer_closed_size_and_handle_are_zero():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes)
    b.close()
    assert b.size == 0 and b.handle == 0


def test_buffer_closed_device_id_raises():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes)
    b.close()
    with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
        b.device_id


def test_buffer_buffer_protocol_not_implemented():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes)
    with pytest.raises((NotImplementedError, TypeError)):
        memoryview(b)


def test_buffer_host_dlpack_export():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    assert driver_call(b.__dlpack_device__) == (1, 0)
    t = np.from_dlpack(b)
    assert t.dtype == np.int8 and t.shape == (a.nbytes,)
    assert t.ctypes.data == a.ctypes.data


def test_buffer_not_picklable_without_ipc():
    a = host_array()
    b = Buffer.from_handle(a.ctypes.data, a.nbytes)
    # cuda.core 1.2 raises AttributeError for a Buffer without a memory
    # resource (it asks None whether it is IPC-enabled); strided RuntimeError
    # (host memory cannot be shared).
    with pytest.raises((RuntimeError, AttributeError)):
        pickle.dumps(b)


# ---- IPC: what needs no GPU ----

def test_ipc_types_cannot_be_instantiated_directly():
    with pytest.raises(RuntimeError, match=r"^IPCBufferDescriptor objects cannot be instantiated "
                                           r"directly\. Please use MemoryResource APIs\.$"):
        IPCBufferDescriptor()
    with pytest.raises(RuntimeError, match=r"^IPCAllocationHandle objects cannot be instantiated "
                                           r"directly\. Please use MemoryResource APIs\.$"):
        IPCAllocationHandle()


def test_ipc_allocation_handle_rejects_negative_fd():
    with pytest.raises(ValueError, match=r"Invalid allocation handle \(fd\) -1: must be non-negative"):
        IPCAllocationHandle._init(-1, None)


def test_ipc_allocation_handle_close():
    r, w = os.pipe()
    h = IPCAllocationHandle._init(r, None)
    try:
        assert not h.is_closed and int(h) == r and h.handle == r and h.uuid is None
        h.close()
        assert h.is_closed
        with pytest.raises(ValueError, match="^Cannot convert IPCAllocationHandle to int: the handle "
                                             r"\(id=\d+\) is closed\.$"):
            int(h)
        h.close()
    finally:
        os.close(w)


def test_ipc_buffer_descriptor_pickles():
    d = IPCBufferDescriptor._init(b"\x01" * 64, 64)
    e = pickle.loads(pickle.dumps(d))
    assert type(e) is IPCBufferDescriptor and e.size == 64


@needs_gpu
def test_ipc_pool_properties():
    mr = api.DeviceMemoryResource(0, api.DeviceMemoryResourceOptions(ipc_enabled=True))
    try:
        assert mr.is_ipc_enabled and not mr.is_mapped and mr.uuid is not None
        h = mr.allocation_handle
        assert h is mr.allocation_handle and h.uuid == mr.uuid and int(h) >= 0
        mapped = api.DeviceMemoryResource.from_allocation_handle(0, h)
        assert mapped.is_mapped and mapped.is_ipc_enabled
        with pytest.raises(TypeError, match="^Cannot allocate from a mapped IPC-enabled memory "
                                            "resource$"):
            mapped.allocate(64, stream=None if STRIDED else api.Device(0).default_stream)
        if STRIDED:
            # strided differs (docs/cuda-core.md): cuda.core 1.2 answers with the
            # handle the pool was imported from, closed by the import.
            with pytest.raises(RuntimeError,
                               match="^Imported memory resource cannot be exported$"):
                mapped.allocation_handle
        else:
            mapped.allocation_handle
    finally:
        mr.close()


@needs_gpu
def test_ipc_not_enabled():
    mr = api.DeviceMemoryResource(0, api.DeviceMemoryResourceOptions())
    try:
        with pytest.raises(RuntimeError, match="^Memory resource is not IPC-enabled$"):
            mr.allocation_handle
    finally:
        mr.close()


# ---- MemoryResource and options ----

def test_memory_resource_base():
    mr = MemoryResource()
    with pytest.raises(TypeError, match="^MemoryResource.allocate must be implemented by "
                                        "subclasses.$"):
        mr.allocate(8, stream=None)
    with pytest.raises(TypeError, match="^MemoryResource.is_device_accessible must be "
                                        "implemented by subclasses.$"):
        mr.is_device_accessible
    assert mr.is_managed is False


def test_options_reprs():
    assert repr(api.DeviceMemoryResourceOptions()) == \
        "DeviceMemoryResourceOptions(ipc_enabled=False, max_size=0)"
    assert repr(api.PinnedMemoryResourceOptions()) == \
        "PinnedMemoryResourceOptions(ipc_enabled=False, max_size=0, numa_id=None)"
    assert repr(api.DeviceMemoryResourceOptions(True, 1 << 20)) == \
        "DeviceMemoryResourceOptions(ipc_enabled=True, max_size=1048576)"


def test_options_coercions():
    o = api.DeviceMemoryResourceOptions(ipc_enabled=1, max_size=1.5)
    assert o.ipc_enabled is True and o.max_size == 1
    with pytest.raises(TypeError, match="^Expected int, got str$"):
        api.ManagedMemoryResourceOptions(preferred_location="x")


def test_options_bad_type():
    with pytest.raises(TypeError, match="The DeviceMemoryResource options must be provided as an "
                                        "object of type DeviceMemoryResourceOptions"):
        driver_call(api.DeviceMemoryResource, 0, options=5)


# ---- copy options, managed buffers ----

def test_copy_options_dataclass():
    assert repr(CopyOptions()) == (
        "CopyOptions(src_access_order=<MemcpySrcAccessOrder.STREAM: 'stream'>, "
        "src_location_hint=None, dst_location_hint=None, "
        "overlap_mode=<MemcpyOverlapMode.DEFAULT: 'default'>)")
    o = CopyOptions(src_access_order="any", overlap_mode="prefer_overlap_with_compute")
    assert o.src_access_order is MemcpySrcAccessOrder.ANY
    assert o.overlap_mode is MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE
    assert o == CopyOptions(MemcpySrcAccessOrder.ANY, None, None,
                            MemcpyOverlapMode.PREFER_OVERLAP_WITH_COMPUTE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.overlap_mode = "default"
    with pytest.raises(ValueError, match=r"^invalid src_access_order: 'x'$"):
        CopyOptions(src_access_order="x")
    with pytest.raises(ValueError, match=r"^invalid overlap_mode: 'x'$"):
        CopyOptions(overlap_mode="x")
    assert [m.value for m in MemcpySrcAccessOrder] == ["stream", "during_api_call", "any"]
    assert [m.value for m in MemcpyOverlapMode] == ["default", "prefer_overlap_with_compute"]


def test_managed_memory_location_type():
    assert [(m.name, m.value) for m in ManagedMemoryLocationType] == [
        ("DEVICE", "device"), ("HOST", "host"), ("HOST_NUMA", "host_numa")]
    assert ManagedMemoryLocationType("host") == "host"


def test_copy_options_must_be_copy_options():
    a, b = host_array(), host_array()
    src = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    dst = Buffer.from_handle(b.ctypes.data, b.nbytes, owner=b)
    stream = driver_call(cuda_stream)
    with pytest.raises(TypeError, match="^copy_to: options must be CopyOptions, got int$"):
        driver_call(src.copy_to, dst, stream=stream, options=1)
    with pytest.raises(TypeError, match="^copy_from: options must be CopyOptions, got str$"):
        driver_call(dst.copy_from, src, stream=stream, options="any")


def test_managed_buffer_from_handle():
    a = host_array()
    b = api.ManagedBuffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    assert type(b) is api.ManagedBuffer and isinstance(b, Buffer)
    assert b.owner is a and b.size == a.nbytes
    assert type(Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)) is Buffer


def test_managed_buffer_refuses_memory_that_is_not_managed():
    a = host_array()
    b = api.ManagedBuffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    stream = driver_call(cuda_stream)
    with pytest.raises(ValueError, match="^prefetch requires a managed-memory allocation$"):
        driver_call(b.prefetch, host_location(), stream=stream)
    with pytest.raises(ValueError, match="^discard requires a managed-memory allocation$"):
        driver_call(b.discard, stream=stream)


def test_managed_buffer_closed():
    a = host_array()
    b = api.ManagedBuffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    b.close()
    with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
        b.read_mostly
    with pytest.raises(RuntimeError, match="^Buffer has been closed$"):
        b.accessed_by


# ---- tensor maps ----

def test_tensor_map_options():
    o = api.TensorMapDescriptorOptions(box_dim=[8, 8])
    assert o.box_dim == (8, 8)
    assert o.swizzle == TensorMapSwizzle.NONE and o.interleave == TensorMapInterleave.NONE
    assert o.l2_promotion == TensorMapL2Promotion.NONE and o.oob_fill == TensorMapOOBFill.NONE
    with pytest.raises(TypeError, match=r"^box_dim must be a tuple of ints, got <class 'int'>$"):
        api.TensorMapDescriptorOptions(box_dim=8)
    with pytest.raises(TypeError, match=r"^swizzle must be a TensorMapSwizzle, got <class 'int'>$"):
        api.TensorMapDescriptorOptions(box_dim=(8,), swizzle=1)


def test_tensor_map_needs_device_memory():
    v = StridedMemoryView.from_dlpack(host_array(64), stream_ptr=-1)
    with pytest.raises((ValueError, RuntimeError, TypeError)):
        driver_call(v.as_tensor_map, (8,))


# ---- the decorator ----

def test_args_viewable_as_strided_memory():
    @args_viewable_as_strided_memory((0,))
    def shapes(x, y):
        return x.view(-1).shape, y

    assert shapes(host_array(5), 7) == ((5,), 7)
    with pytest.raises(TypeError):
        args_viewable_as_strided_memory([0])


# ---- device memory (a GPU machine, both implementations) ----

def cuda_stream():
    """A stream argument both take for the legacy default stream: strided's
    handle 0 (it takes None only for host memory), cuda.core's Stream."""
    if STRIDED:
        return 0
    return api.Device(0).default_stream


def per_thread_stream():
    """The per-thread default stream, which copies with options take."""
    return 2 if STRIDED else api.PER_THREAD_DEFAULT_STREAM


def device_location(device_id):
    """A device as a location: strided's ordinal, cuda.core's Device."""
    return device_id if STRIDED else api.Device(device_id)


def host_location():
    """The host as a location: strided's "host", cuda.core's Host()."""
    return "host" if STRIDED else api.Host()


def location_key(location):
    """A location read back, as (kind, id): strided answers such a pair,
    cuda.core a Device or Host."""
    if location is None or isinstance(location, tuple):
        return location and (str(location[0]), location[1])
    if hasattr(location, "device_id"):
        return ("device", location.device_id)
    if location.is_numa_current:
        return ("host_numa_current", None)
    return ("host", None) if location.numa_id is None else ("host_numa", location.numa_id)


def synchronize():
    """Wait for the device (strided has no Device object of its own)."""
    if not STRIDED:
        api.Device(0).sync()
        return
    torch = pytest.importorskip("torch")
    torch.cuda.synchronize()


@needs_gpu
def test_device_resource_buffer():
    if not STRIDED:
        api.Device(0).set_current()
    mr = api.DeviceMemoryResource(0)
    assert mr.device_id == 0 and mr.is_device_accessible and not mr.is_host_accessible
    b = mr.allocate(64, stream=cuda_stream())
    assert b.size == 64 and b.device_id == 0
    assert b.__dlpack_device__() == (2, 0)
    b.fill(7, stream=cuda_stream())
    h = api.PinnedMemoryResource().allocate(64, stream=cuda_stream())
    b.copy_to(h, stream=cuda_stream())
    synchronize()
    assert h.__dlpack_device__() == (3, 0)
    np.testing.assert_array_equal(np.from_dlpack(h), np.full(64, 7, np.int8))
    b.close()
    h.close()


@needs_gpu
def test_device_resource_options_make_a_pool():
    if not STRIDED:
        api.Device(0).set_current()
    mr = api.DeviceMemoryResource(0, options=api.DeviceMemoryResourceOptions(max_size=1 << 24))
    assert mr.is_handle_owned is True and mr.is_ipc_enabled is False
    b = mr.allocate(1 << 20, stream=cuda_stream())
    assert mr.attributes.used_mem_current >= 1 << 20
    b.close()
    mr.close()
    assert mr.is_closed is True


@needs_gpu
def test_managed_resource_preferred_location():
    if not STRIDED:
        api.Device(0).set_current()
    mr = api.ManagedMemoryResource(options=api.ManagedMemoryResourceOptions(preferred_location=0))
    assert mr.is_managed and mr.device_id == 0
    b = mr.allocate(256, stream=cuda_stream())
    assert b.__dlpack_device__() == (13, 0)
    b.close()


@needs_gpu
def test_torch_round_trip():
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4).T
    v = StridedMemoryView.from_dlpack(t, stream_ptr=-1)
    assert v.shape == (4, 3) and v.strides == (1, 4) and v.device_id == 0
    u = torch.from_dlpack(v)
    assert u.data_ptr() == t.data_ptr() and torch.equal(u, t)


@needs_gpu
def test_cupy_round_trip():
    cupy = pytest.importorskip("cupy")
    a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)[:, ::2]
    v = StridedMemoryView.from_cuda_array_interface(a, stream_ptr=-1)
    assert v.shape == (3, 2) and v.strides == (4, 2) and v.is_device_accessible
    b = cupy.from_dlpack(v)
    assert int(b.data.ptr) == int(a.data.ptr) and bool((b == a).all())


@needs_gpu
def test_managed_buffer_advice_and_moves():
    if not STRIDED:
        api.Device(0).set_current()
    mr = api.ManagedMemoryResource(options=api.ManagedMemoryResourceOptions(preferred_location=0))
    b = mr.allocate(1 << 16, stream=cuda_stream())
    assert type(b) is api.ManagedBuffer and b.is_managed
    assert b.read_mostly is False
    try:
        b.read_mostly = True
    except Exception as e:  # cuda.core's CUDAError, strided's RuntimeError
        if "CUDA_ERROR_NOT_SUPPORTED" not in str(e):
            raise
        # CUDA 13.0 drivers give no advice on memory of a managed pool, to
        # either implementation.
        b.close()
        pytest.skip(f"the driver gives no advice on managed pool memory: {e}")
    assert b.read_mostly is True
    b.read_mostly = False
    b.preferred_location = device_location(0)
    assert location_key(b.preferred_location) == ("device", 0)
    b.preferred_location = host_location()
    assert location_key(b.preferred_location) == ("host", None)
    b.preferred_location = None
    assert b.preferred_location is None
    b.accessed_by.add(device_location(0))
    assert device_location(0) in b.accessed_by and len(b.accessed_by) == 1
    assert [location_key(x) for x in b.accessed_by] == [("device", 0)]
    b.accessed_by = [host_location()]
    assert [location_key(x) for x in b.accessed_by] == [("host", None)]
    b.accessed_by = []
    assert len(b.accessed_by) == 0
    b.fill(9, stream=cuda_stream())
    b.prefetch(device_location(0), stream=cuda_stream())
    b.prefetch(host_location(), stream=cuda_stream())
    synchronize()
    h = api.PinnedMemoryResource().allocate(1 << 16, stream=cuda_stream())
    b.copy_to(h, stream=cuda_stream())
    synchronize()
    np.testing.assert_array_equal(np.from_dlpack(h), np.full(1 << 16, 9, np.int8))
    b.discard_prefetch(device_location(0), stream=cuda_stream())
    b.discard(stream=cuda_stream())
    synchronize()
    b.close()
    h.close()


@needs_gpu
def test_peer_accessible_by_on_one_device():
    if not STRIDED:
        api.Device(0).set_current()
    mr = api.DeviceMemoryResource(0, options=api.DeviceMemoryResourceOptions())
    assert set(mr.peer_accessible_by) == set()
    assert len(mr.peer_accessible_by) == 0 and 0 not in mr.peer_accessible_by
    mr.peer_accessible_by = [0]  # the pool's own device is left out
    mr.peer_accessible_by.add(0)
    assert len(mr.peer_accessible_by) == 0
    mr.peer_accessible_by.clear()
    if cuda_device_count() == 1:
        with pytest.raises(ValueError):
            mr.peer_accessible_by.add(1)
    mr.close()


@needs_gpu
def test_copy_with_options():
    if not STRIDED:
        api.Device(0).set_current()
    mr = api.DeviceMemoryResource(0)
    a = mr.allocate(4096, stream=cuda_stream())
    b = mr.allocate(4096, stream=cuda_stream())
    a.fill(5, stream=cuda_stream())
    synchronize()
    stream = per_thread_stream()
    a.copy_to(b, stream=stream, options=CopyOptions(src_access_order="any",
                                                    dst_location_hint=device_location(0)))
    with pytest.raises(TypeError, match="^copy_to does not accept LEGACY_DEFAULT_STREAM with options"):
        a.copy_to(b, stream=cuda_stream(), options=CopyOptions())
    try:
        b.copy_from(a, stream=stream, options=CopyOptions("during_api_call"))
    except RuntimeError as e:  # a driver older than CUDA 13.2
        assert str(e).startswith("src_access_order=DURING_API_CALL requires ")
    synchronize()
    h = api.PinnedMemoryResource().allocate(4096, stream=cuda_stream())
    b.copy_to(h, stream=cuda_stream())
    synchronize()
    np.testing.assert_array_equal(np.from_dlpack(h), np.full(4096, 5, np.int8))
    for x in (a, b, h):
        x.close()
