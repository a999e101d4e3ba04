"""CopyAllocatorOptions: where StridedMemoryView.copy_from's temporaries come from."""

from dataclasses import dataclass
from typing import Any

__all__ = ["CopyAllocatorOptions"]


@dataclass(frozen=True)
class CopyAllocatorOptions:
    """Memory resources for the temporaries of a copy (the name cuda.core gives them).

    ``host`` gives the host staging buffers (pinned memory, for asynchronous
    transfers), ``device`` the device temporaries (device memory of the
    device the copy runs on). ``None`` takes the default for that side. Each
    temporary is one ``allocate(nbytes, stream=stream)`` call on the copy's
    stream; the returned buffer is closed on that stream once the copy no
    longer needs it. ``copy_from(allocator=...)`` also takes a dict with the
    keys ``"host"`` and ``"device"``.
    """

    host: Any = None
    device: Any = None
