"""Sharing memory and views with other processes (CUDA IPC), as cuda.core shares them.

The rules live in libstrided (``strided/ipc.h``, docs/ipc.md): which memory can be shared, what a
descriptor holds, every check an import makes. This module holds what is Python's own: the
objects that carry a pool's file descriptor and a buffer's or a view's descriptor bytes, the
registry of pools imported into this process (by the exporter's UUID), and how each crosses
``pickle`` and ``multiprocessing``.

- An ``IPCAllocationHandle`` owns a file descriptor of a pool and closes it when closed or
  collected. ``multiprocessing`` sends it by duplicating the descriptor into the receiving
  process (``multiprocessing.reduction.DupFd``, for the fork, spawn and forkserver start
  methods alike); plain ``pickle`` cannot send it.
- A memory resource sent through ``multiprocessing`` arrives as a mapped resource imported from
  its handle, and registered under its UUID; plain ``pickle`` sends only the UUID, and the
  receiving process must have imported (registered) the pool already.
- A Buffer pickles as its resource (by the rules above) and its descriptor; a
  ``StridedMemoryView`` as its resource and its view descriptor.
"""

from __future__ import annotations

import multiprocessing.reduction
import operator
import os
import weakref

__all__ = ["IPCAllocationHandle", "IPCBufferDescriptor", "IPCViewDescriptor"]

_registry: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class IPCAllocationHandle:
    """Shareable handle to an IPC-enabled memory pool: a POSIX file descriptor.

    Made by the ``allocation_handle`` property of an IPC-enabled DeviceMemoryResource or
    PinnedMemoryResource, which owns (and caches) it; one received through ``multiprocessing``
    owns its duplicated descriptor. ``close()`` closes the descriptor; so does collection.
    """

    __slots__ = ("__weakref__", "_handle", "_kind", "_uuid")

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "IPCAllocationHandle objects cannot be instantiated directly. Please use MemoryResource APIs."
        )

    @classmethod
    def _init(cls, handle, uuid, kind="DeviceMemoryResource"):
        handle = operator.index(handle)
        if handle < 0:
            raise ValueError(f"Invalid allocation handle (fd) {handle}: must be non-negative")
        self = object.__new__(cls)
        self._handle = handle
        self._uuid = uuid
        self._kind = kind
        return self

    def close(self):
        """Close the handle (its file descriptor); closing again does nothing."""
        handle, self._handle = self._handle, -1
        if handle >= 0:
            os.close(handle)

    def __del__(self):
        if getattr(self, "_handle", -1) >= 0:
            try:
                self.close()
            except Exception:  # at interpreter shutdown os may be gone; the OS closes it then
                pass

    @property
    def is_closed(self) -> bool:
        """Whether this allocation handle has been closed."""
        return self._handle < 0

    def __int__(self) -> int:
        if self._handle < 0:
            raise ValueError(f"Cannot convert IPCAllocationHandle to int: the handle (id={id(self)}) is closed.")
        return self._handle

    @property
    def handle(self) -> int:
        """The file descriptor; -1 once closed."""
        return self._handle

    @property
    def uuid(self):
        """The UUID of the pool's exporting resource, or None."""
        return self._uuid

    def __reduce__(self):
        raise TypeError(
            "an IPCAllocationHandle crosses to another process through multiprocessing, which "
            "duplicates its file descriptor; plain pickle cannot send it"
        )


def _reduce_allocation_handle(handle):
    return _reconstruct_allocation_handle, (
        type(handle),
        multiprocessing.reduction.DupFd(int(handle)),
        handle.uuid,
        handle._kind,
    )


def _reconstruct_allocation_handle(cls, dup, uuid, kind):
    return cls._init(dup.detach(), uuid, kind)


multiprocessing.reduction.register(IPCAllocationHandle, _reduce_allocation_handle)


class IPCBufferDescriptor:
    """Serializable description of a buffer that another process can import.

    Made by ``Buffer.ipc_descriptor``; imported with ``Buffer.from_ipc_descriptor``. Its payload
    is strided's 192-byte buffer descriptor (docs/ipc.md), which libstrided checks in full
    before it maps anything: a descriptor from an untrusted peer is refused, never mapped, when it
    is malformed, but a well-formed one maps what it names.
    """

    __slots__ = ("_payload", "_size")

    def __init__(self, *args, **kwargs):
        raise RuntimeError(
            "IPCBufferDescriptor objects cannot be instantiated directly. Please use MemoryResource APIs."
        )

    @classmethod
    def _init(cls, reserved, size):
        self = object.__new__(cls)
        self._payload = bytes(reserved)
        self._size = operator.index(size)
        return self

    def __reduce__(self):
        return IPCBufferDescriptor._init, (self._payload, self._size)

    @property
    def size(self) -> int:
        """The buffer's size in bytes."""
        return self._size


class IPCViewDescriptor:
    """Serializable description of a StridedMemoryView that another process can import.

    Made by ``StridedMemoryView.get_ipc_descriptor``; imported with
    ``StridedMemoryView.from_ipc_descriptor``. Its payload is strided's view descriptor
    (docs/ipc.md): the buffer's descriptor, the origin, layout, dtype, device and read-only flag,
    and, when it was made with a stream, the handle of an interprocess event recorded on that
    stream, which the importer's stream waits on. The exporting process's descriptor object keeps
    that event alive: keep it until every consumer has imported.
    """

    __slots__ = ("_event", "_payload")

    def __init__(self, *args, **kwargs):
        raise RuntimeError("IPCViewDescriptor objects cannot be instantiated directly. Please use StridedMemoryView APIs.")

    @classmethod
    def _init(cls, payload, event=None):
        self = object.__new__(cls)
        self._payload = bytes(payload)
        self._event = event
        return self

    def __reduce__(self):
        return IPCViewDescriptor._init, (self._payload,)

    @property
    def nbytes(self) -> int:
        """The descriptor's size in bytes."""
        return len(self._payload)


def _from_registry(uuid):
    try:
        return _registry[uuid]
    except KeyError:
        raise RuntimeError(f"Memory resource {uuid} was not found") from None


def _register(mr, uuid):
    if not mr.is_ipc_enabled:
        raise RuntimeError("Memory resource is not IPC-enabled")
    existing = _registry.get(uuid)
    if existing is not None:
        return existing
    _registry[uuid] = mr
    return mr


def _from_allocation_handle(cls, device_id, alloc_handle):
    uuid = None
    if isinstance(alloc_handle, IPCAllocationHandle):
        if alloc_handle.is_closed:
            raise RuntimeError("IPCAllocationHandle has been closed")
        if alloc_handle._kind != cls.__name__:
            raise TypeError(f"the allocation handle is of a {alloc_handle._kind}'s pool, not a {cls.__name__}'s")
        uuid = alloc_handle.uuid
        mr = _registry.get(uuid) if uuid is not None else None
        if mr is not None:
            return mr
        fd = alloc_handle.handle
    else:
        fd = operator.index(alloc_handle)
    mr = cls._import_pool(device_id, fd, None if uuid is None else uuid.bytes)
    return mr if uuid is None else _register(mr, uuid)


def _reduce_resource(mr):
    uuid = mr.uuid
    if uuid is None:
        raise RuntimeError("Memory resource is not IPC-enabled")
    return type(mr).from_registry, (uuid,)


def _deep_reduce_resource(mr):
    handle = mr.allocation_handle
    if type(mr).__name__ == "DeviceMemoryResource":
        return type(mr).from_allocation_handle, (mr.device_id, handle)
    return type(mr).from_allocation_handle, (handle,)


def _register_reducers(*types):
    for t in types:
        multiprocessing.reduction.register(t, _deep_reduce_resource)


def _buffer_from_descriptor(buffer_type, mr, descriptor):
    return buffer_type.from_ipc_descriptor(mr, descriptor)


def _view_from_descriptor(view_type, mr, descriptor):
    return view_type.from_ipc_descriptor(descriptor, mr)
