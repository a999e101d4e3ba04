"""The public API of strided as a type checker sees it, through python/strided/*.pyi.

scripts/check-typing runs mypy --strict on this file, so every assert_type below is checked
against the stubs, and then runs it, so every call is also one the extension accepts (host
memory only; what needs a CUDA device is in functions that are checked and not called).
"""

import sys
import uuid
from typing import Any, Literal

import numpy as np

import strided
from strided import (
    Buffer,
    CopyAllocatorOptions,
    DeviceMemoryResource,
    DeviceMemoryResourceOptions,
    HostMemoryResource,
    IPCAllocationHandle,
    IPCBufferDescriptor,
    IPCViewDescriptor,
    LegacyPinnedMemoryResource,
    ManagedMemoryResource,
    ManagedMemoryResourceOptions,
    MemoryResource,
    PinnedMemoryResource,
    PinnedMemoryResourceOptions,
    CopyOptions,
    ManagedBuffer,
    ManagedMemoryLocationType,
    MemcpyOverlapMode,
    MemcpySrcAccessOrder,
    StridedLayout,
    StridedMemoryView,
    TensorMapDataType,
    TensorMapDescriptor,
    TensorMapDescriptorOptions,
    TensorMapSwizzle,
    args_viewable_as_strided_memory,
    copy_plan,
)

if sys.version_info >= (3, 11):
    from typing import assert_type
else:
    from typing_extensions import assert_type


def layouts() -> None:
    layout = StridedLayout((4, 6), None, 4)
    assert_type(layout, StridedLayout)
    assert_type(strided._StridedLayout((4,), [8], 8, divide_strides=True), StridedLayout)
    assert_type(layout.ndim, int)
    assert_type(layout.shape, tuple[int, ...])
    assert_type(layout.strides, tuple[int, ...] | Any)
    assert_type(layout.strides_in_bytes, tuple[int, ...] | Any)
    assert_type(layout.stride_order, tuple[int, ...])
    assert_type(layout.itemsize, int)
    assert_type(layout.slice_offset, int)
    assert_type(layout.slice_offset_in_bytes, int)
    assert_type(layout.volume, int)
    assert_type(layout.offset_bounds, tuple[int, int])
    assert_type(layout.min_offset, int)
    assert_type(layout.max_offset, int)
    for flag in (layout.is_unique, layout.is_contiguous_c, layout.is_contiguous_f,
                 layout.is_contiguous_any, layout.is_dense):
        assert_type(flag, bool)

    assert_type(StridedLayout.dense((2, 3), 4), StridedLayout)
    assert_type(StridedLayout.dense([2, 3], 4, stride_order="F"), StridedLayout)
    assert_type(StridedLayout.dense((2, 3, 4), 4, (2, 0, 1)), StridedLayout)
    assert_type(StridedLayout.dense_like(layout, "K"), StridedLayout)
    assert_type(layout.to_dense(), StridedLayout)
    assert_type(layout.required_size_in_bytes(), int)
    assert_type(layout.flattened_axis_mask(), int)
    assert_type(layout.reshaped((2, -1)), StridedLayout)
    assert_type(layout.permuted((1, 0)), StridedLayout)
    assert_type(layout.flattened(), StridedLayout)
    assert_type(layout.flattened(0, -1), StridedLayout)
    assert_type(layout.flattened(mask=layout.flattened_axis_mask()), StridedLayout)
    assert_type(layout.squeezed(), StridedLayout)
    assert_type(layout.unsqueezed(0), StridedLayout)
    assert_type(layout.unsqueezed((0, -1)), StridedLayout)
    assert_type(layout.broadcast_to((3, 4, 6)), StridedLayout)
    assert_type(layout.repacked(8), StridedLayout)
    assert_type(layout.repacked(8, data_ptr=0, axis=-1, keep_dim=False), StridedLayout)
    assert_type(layout.max_compatible_itemsize(), int)
    assert_type(layout.max_compatible_itemsize(16, 0, -1), int)
    assert_type(layout.coalesced(), StridedLayout)
    assert_type(layout.format(), str)
    assert_type(layout.format_grid(), str)

    # Indexing: integers (anything with __index__), slices, or a tuple of them.
    assert_type(layout[1], StridedLayout)
    assert_type(layout[np.int64(1)], StridedLayout)
    assert_type(layout[::-1], StridedLayout)
    assert_type(layout[1:3, ::2], StridedLayout)
    assert_type(layout[:, 0], StridedLayout)
    assert_type(layout.sliced((slice(1, 3), 2)), StridedLayout)
    assert_type(layout == layout.to_dense("C"), bool)
    assert_type(hash(layout), int)
    assert_type(strided.MAX_NDIM, Literal[64])
    assert_type(strided.__version__, str)

    plan = copy_plan(layout, layout.permuted((1, 0)).to_dense().permuted((1, 0)))
    assert_type(plan["kernel"],
                Literal["nothing", "contiguous", "rows", "transpose", "broadcast", "gather"])
    assert_type(plan["shape"], tuple[int, ...])
    assert_type(plan["src_unit_axis"], int)


def build_and_driver() -> None:
    from strided import _strided

    build = _strided.build_info()
    assert_type(build["version"], str)
    assert_type(build["header_version_info"], tuple[int, int, int])
    assert_type(build["kernels"], bool)
    try:
        driver = _strided.driver_info()
    except RuntimeError:  # no usable CUDA driver here
        return
    assert_type(driver["device_count"], int)
    assert_type(driver["path"], str)
    if driver["device_count"] > 0:
        device = _strided.device_info(0)
        assert_type(device["compute_capability"], tuple[int, int])
        assert_type(device["name"], str)


def buffers_and_resources() -> None:
    mr = HostMemoryResource(alignment=64)
    assert_type(mr, HostMemoryResource)
    buf = mr.allocate(64)
    assert_type(buf, Buffer)
    assert_type(mr.allocate(8, stream=None), Buffer)
    assert_type(buf.handle, int)
    assert_type(buf.size, int)
    assert_type(buf.device_id, int)
    assert_type(buf.is_host_accessible, bool)
    assert_type(buf.is_device_accessible, bool)
    assert_type(buf.is_managed, bool)
    assert_type(buf.is_mapped, bool)
    assert_type(buf.memory_resource, Any)
    assert_type(buf.owner, Any)
    assert_type(buf.__dlpack_device__(), tuple[int, int])

    buf.fill(0x5A, stream=None)
    buf.fill(np.uint16(7), stream=None)
    buf.fill(b"\x01\x02\x03\x04", stream=None)
    copy = buf.copy_to(stream=None)
    assert_type(copy, Buffer)
    other = mr.allocate(64)
    assert_type(buf.copy_to(other, stream=None), Buffer)
    other.copy_from(buf, stream=None)
    assert np.from_dlpack(buf).size == 64
    copy_options = CopyOptions("any", overlap_mode=MemcpyOverlapMode.DEFAULT)
    assert_type(copy_options.src_access_order, MemcpySrcAccessOrder | str)
    other.copy_from(buf, stream=None, options=copy_options)
    assert_type(buf.copy_to(other, stream=None, options=CopyOptions()), Buffer)

    a = np.zeros(16, np.uint8)
    wrapped = Buffer.from_handle(a.ctypes.data, a.nbytes, owner=a)
    assert_type(wrapped, Buffer)
    with wrapped as entered:
        assert_type(entered, Buffer)
    assert_type(wrapped.is_closed, bool)
    copy.close()
    other.close(stream=None)

    # A memory resource written in Python: allocate hands the memory to from_handle.
    class ArrayResource(MemoryResource):
        def __init__(self) -> None:
            self.arrays: dict[int, np.ndarray[Any, Any]] = {}

        @property
        def is_host_accessible(self) -> bool:
            return True

        @property
        def is_device_accessible(self) -> bool:
            return False

        @property
        def device_id(self) -> int:
            return -1

        def allocate(self, size: int, stream: Any = None) -> Buffer:
            array = np.empty(size, np.uint8)
            self.arrays[array.ctypes.data] = array
            return Buffer.from_handle(array.ctypes.data, size, mr=self)

        def deallocate(self, ptr: int, size: int, stream: Any = None) -> None:
            del self.arrays[ptr]

    own = ArrayResource()
    held = own.allocate(32)
    assert_type(held, Buffer)
    held.close()
    assert not own.arrays


    options = DeviceMemoryResourceOptions(max_size=1 << 20)
    assert_type(options.max_size, int)
    assert_type(options.ipc_enabled, bool)
    assert_type(PinnedMemoryResourceOptions(numa_id=0).numa_id, int | None)
    managed = ManagedMemoryResourceOptions(preferred_location_type="host")
    assert_type(managed.preferred_location, int | None)


def buf_address(buf: Buffer) -> int:
    return buf.handle


def cuda_resources(device: int) -> None:
    """Checked, not run: these need a CUDA driver and device."""
    dev = DeviceMemoryResource(device)
    assert_type(dev, DeviceMemoryResource)
    assert_type(DeviceMemoryResource(device, {"max_size": 1 << 30}), DeviceMemoryResource)
    assert_type(dev.handle, int)
    assert_type(dev.is_handle_owned, bool)
    assert_type(dev.attributes.used_mem_current, int)
    assert_type(dev.attributes.reuse_allow_opportunistic, bool)
    assert_type(dev.uuid, uuid.UUID | None)
    ipc = DeviceMemoryResource(device, {"ipc_enabled": True})
    assert_type(ipc.allocation_handle, IPCAllocationHandle)
    assert_type(ipc.allocation_handle.handle, int)
    mapped = DeviceMemoryResource.from_allocation_handle(device, ipc.allocation_handle)
    assert_type(mapped, DeviceMemoryResource)
    assert_type(DeviceMemoryResource.from_registry(uuid.uuid4()), DeviceMemoryResource)
    shared = ipc.allocate(64)
    descriptor = shared.ipc_descriptor
    assert_type(descriptor, IPCBufferDescriptor)
    assert_type(descriptor.size, int)
    assert_type(Buffer.from_ipc_descriptor(mapped, descriptor, stream=None), Buffer)
    view = StridedMemoryView.from_buffer(shared, (16,), dtype="f4")
    view_descriptor = view.get_ipc_descriptor(stream=0)
    assert_type(view_descriptor, IPCViewDescriptor)
    assert_type(StridedMemoryView.from_ipc_descriptor(view_descriptor, mapped), StridedMemoryView)
    dev.close()
    pinned = PinnedMemoryResource(PinnedMemoryResourceOptions(max_size=1 << 20))
    assert_type(pinned.numa_id, int)
    assert_type(LegacyPinnedMemoryResource().allocate(8), Buffer)
    managed = ManagedMemoryResource(device_id=device)
    assert_type(ManagedMemoryResource(device), ManagedMemoryResource)
    assert_type(ManagedMemoryResource({"preferred_location": -1}), ManagedMemoryResource)
    location = managed.preferred_location
    if location is not None and location[0] is ManagedMemoryLocationType.DEVICE:
        assert_type(location[1], int)
    mbuf = managed.allocate(1 << 20, stream=0)
    assert_type(mbuf, ManagedBuffer)
    mbuf.read_mostly = True
    assert_type(mbuf.read_mostly, bool)
    mbuf.preferred_location = ("host_numa", 0)
    mbuf.preferred_location = device
    preferred = mbuf.preferred_location
    if preferred is not None and preferred[0] is ManagedMemoryLocationType.HOST:
        assert_type(preferred[1], None)
    mbuf.accessed_by.add(0)
    mbuf.accessed_by = ["host", ("device", device)]
    assert_type(len(mbuf.accessed_by), int)
    mbuf.prefetch(device, stream=2)
    mbuf.discard_prefetch("host", stream=2)
    mbuf.discard(stream=2)
    assert_type(ManagedBuffer.from_handle(buf_address(mbuf), 8, owner=mbuf), ManagedBuffer)
    dev.peer_accessible_by = [device]
    peers = dev.peer_accessible_by
    peers |= {1}
    assert_type(sorted(peers), list[int])
    other = dev.allocate(1 << 20, stream=2)
    other.copy_from(mbuf, stream=2, options=CopyOptions(MemcpySrcAccessOrder.ANY,
                                                        dst_location_hint=device))
    buf = dev.allocate(1 << 20, stream=0)
    buf.set_deallocation_stream(0)
    buf.fill(0, stream=0)

    view = StridedMemoryView.from_buffer(buf, (512, 512), dtype=np.float32)
    desc = view.as_tensor_map((64, 32), swizzle=TensorMapSwizzle.SWIZZLE_128B)
    assert_type(desc, TensorMapDescriptor)
    assert_type(desc.handle, int)
    assert_type(desc.data_type, TensorMapDataType)
    assert_type(desc.box_dim, tuple[int, ...])
    assert_type(bytes(desc), bytes)
    opts = TensorMapDescriptorOptions(box_dim=(64, 32), data_type=np.float32)
    assert_type(opts.box_dim, tuple[int, ...])
    assert_type(view.as_tensor_map(options=opts), TensorMapDescriptor)
    desc.replace_address(view)
    view.copy_from(view, stream=0, allocator=CopyAllocatorOptions(device=dev), blocking=True)


def views() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert_type(v, StridedMemoryView)
    assert_type(StridedMemoryView.from_any_interface(a, -1), StridedMemoryView)
    assert_type(StridedMemoryView.from_array_interface(a), StridedMemoryView)
    assert_type(v.ptr, int)
    assert_type(v.device_ptr, int)
    assert_type(v.shape, tuple[int, ...])
    assert_type(v.strides, tuple[int, ...] | Any)
    assert_type(v.size, int)
    assert_type(v.dtype, np.dtype[Any] | None)
    assert_type(v.device_id, int)
    assert_type(v.is_device_accessible, bool)
    assert_type(v.readonly, bool)
    assert_type(v.exporting_obj, Any)
    assert_type(v.layout, StridedLayout)
    assert_type(v._layout, StridedLayout)
    assert_type(v.buffer, Buffer | None)
    assert_type(v.__array_interface__, dict[str, Any])
    assert_type(v.__dlpack_device__(), tuple[int, int])
    assert_type(v.view(v.layout[::-1]), StridedMemoryView)
    assert_type(v.view(dtype=np.int32), StridedMemoryView)
    assert np.from_dlpack(v).shape == v.shape

    # from_buffer in both forms: a shape (and strides, itemsize or dtype), or a layout.
    buf = HostMemoryResource().allocate(96)
    by_shape = StridedMemoryView.from_buffer(buf, (4, 6), dtype="float32")
    assert_type(by_shape, StridedMemoryView)
    assert_type(StridedMemoryView.from_buffer(buf, (4, 6), (1, 4), itemsize=4), StridedMemoryView)
    layout = StridedLayout.dense((6, 4), 4, "F")
    by_layout = StridedMemoryView.from_buffer(buf, layout, np.float32, is_readonly=True)
    assert_type(by_layout, StridedMemoryView)
    assert by_layout.layout is layout

    by_shape.copy_from(v)
    v.copy_to(by_shape, allocator={"host": HostMemoryResource(), "device": None})
    by_shape.copy_from(v, stream=None, allocator=CopyAllocatorOptions(host=HostMemoryResource()))

    @args_viewable_as_strided_memory((0,))
    def total(x: Any, scale: float) -> float:
        view = x.view(-1)
        assert isinstance(view, StridedMemoryView)
        return float(np.from_dlpack(view).sum()) * scale

    assert_type(total(a, 2.0), float)


if __name__ == "__main__":
    layouts()
    build_and_driver()
    buffers_and_resources()
    views()
    print("check_api: every call ran")
