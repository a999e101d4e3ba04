"""CopyAllocatorOptions: where StridedMemoryView.copy_from's temporaries come from."""

from dataclasses import dataclass
from typing import Any

__all__ = ["CopyAllocatorOptions"]


@dataclass(frozen=True)
class CopyAllocatorOptions:
    """Memory resources for the temporaries of a copy (the name cuda.core gives them).

    ``StridedMemoryView.copy_from(allocator=...)`` and ``copy_to`` take one
    (or a dict with the keys ``"host"`` and ``"device"``). Each temporary is
    one ``allocate(nbytes, stream=stream)`` call on the copy's stream; the
    returned buffer is closed on that stream once the copy no longer needs
    it. The object is frozen.

    Parameters
    ----------
    host : MemoryResource, optional
        Gives the host staging buffers (pinned memory, for asynchronous
        transfers); None takes the default (pinned staging buffers the
        library keeps and reuses).
    device : MemoryResource, optional
        Gives the device temporaries (device memory of the device the copy
        runs on); None takes the default (the device's current memory
        pool).

    Examples
    --------
    >>> import numpy as np
    >>> import strided
    >>> options = strided.CopyAllocatorOptions(host=strided.HostMemoryResource())
    >>> a = np.arange(4.0)
    >>> dst = strided.StridedMemoryView.from_dlpack(np.zeros(4), stream_ptr=-1)
    >>> dst.copy_from(strided.StridedMemoryView.from_dlpack(a, stream_ptr=-1),
    ...               allocator=options)
    >>> np.from_dlpack(dst).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """

    host: Any = None
    device: Any = None
