"""strided: n-dimensional strided layouts, buffers and views for host and CUDA memory.

``StridedLayout`` (also importable as ``_StridedLayout``) matches cuda.core's
``_StridedLayout``; see docs/layout.md for the documented differences.

``Buffer`` and the memory resources (``MemoryResource``, the interface, and
the built-in ``HostMemoryResource``, ``PinnedMemoryResource``,
``LegacyPinnedMemoryResource``, ``DeviceMemoryResource`` and
``ManagedMemoryResource``, with ``DeviceMemoryResourceOptions``,
``PinnedMemoryResourceOptions`` and ``ManagedMemoryResourceOptions``) match
cuda.core's ``Buffer`` and memory resources, ``ManagedBuffer`` (with
``ManagedMemoryLocationType``) its managed buffers, and ``CopyOptions``
(with ``MemcpySrcAccessOrder`` and ``MemcpyOverlapMode``) its copy hints.

Sharing with other processes (CUDA IPC, Linux): IPC-enabled pools'
``allocation_handle`` (an ``IPCAllocationHandle``), ``from_allocation_handle``,
``Buffer.ipc_descriptor`` (an ``IPCBufferDescriptor``) and
``Buffer.from_ipc_descriptor`` are cuda.core's; resources and buffers cross
``multiprocessing`` and ``pickle`` as cuda.core's do, and a
``StridedMemoryView`` crosses too (``get_ipc_descriptor``, an
``IPCViewDescriptor``, and ``from_ipc_descriptor``); see docs/ipc.md.

``StridedMemoryView`` matches cuda.core's ``StridedMemoryView`` (DLPack,
CUDA Array Interface and array-interface import, ``from_buffer`` in both of
its forms, ``view``, DLPack and CUDA Array Interface export), and
``args_viewable_as_strided_memory`` its decorator. ``as_tensor_map`` makes a
``TensorMapDescriptor`` of a view (``TensorMapDescriptorOptions`` and the
``TensorMap*`` enumerations are cuda.core's).

Examples
--------
>>> import numpy as np
>>> import strided
>>> a = np.arange(12, dtype=np.float32).reshape(3, 4)
>>> view = strided.StridedMemoryView.from_dlpack(a, stream_ptr=-1)
>>> view.layout[:, ::2].format()
'(3,2):(4,2)'
"""

from strided._strided import (
    MAX_NDIM,
    Buffer,
    DeviceMemoryResource,
    HostMemoryResource,
    LegacyPinnedMemoryResource,
    ManagedBuffer,
    ManagedMemoryResource,
    MemoryResource,
    PinnedMemoryResource,
    StridedLayout,
    StridedMemoryView,
    _StridedLayout,
    __version__,
    copy_plan,
)
from strided._copy import CopyAllocatorOptions
from strided._ipc import IPCAllocationHandle, IPCBufferDescriptor, IPCViewDescriptor, _register_reducers
from strided._options import (
    CopyOptions,
    DeviceMemoryResourceOptions,
    ManagedMemoryLocationType,
    ManagedMemoryResourceOptions,
    MemcpyOverlapMode,
    MemcpySrcAccessOrder,
    PinnedMemoryResourceOptions,
)
from strided._proxy import args_viewable_as_strided_memory
from strided._tensor_map import (
    TensorMapDataType,
    TensorMapDescriptor,
    TensorMapDescriptorOptions,
    TensorMapInterleave,
    TensorMapL2Promotion,
    TensorMapOOBFill,
    TensorMapSwizzle,
)

__all__ = [
    "MAX_NDIM",
    "Buffer",
    "CopyAllocatorOptions",
    "CopyOptions",
    "DeviceMemoryResource",
    "DeviceMemoryResourceOptions",
    "HostMemoryResource",
    "IPCAllocationHandle",
    "IPCBufferDescriptor",
    "IPCViewDescriptor",
    "LegacyPinnedMemoryResource",
    "ManagedBuffer",
    "ManagedMemoryLocationType",
    "ManagedMemoryResource",
    "ManagedMemoryResourceOptions",
    "MemcpyOverlapMode",
    "MemcpySrcAccessOrder",
    "MemoryResource",
    "PinnedMemoryResource",
    "PinnedMemoryResourceOptions",
    "StridedLayout",
    "StridedMemoryView",
    "TensorMapDataType",
    "TensorMapDescriptor",
    "TensorMapDescriptorOptions",
    "TensorMapInterleave",
    "TensorMapL2Promotion",
    "TensorMapOOBFill",
    "TensorMapSwizzle",
    "args_viewable_as_strided_memory",
    "copy_plan",
    "_StridedLayout",
    "__version__",
]

_register_reducers(DeviceMemoryResource, PinnedMemoryResource)
del _register_reducers
