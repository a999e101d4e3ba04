"""Sharing with other processes (CUDA IPC, docs/ipc.md) against the fake CUDA driver of the C
tests (tests/c/fake_cuda.c): IPC-enabled pools, their allocation handles, mapped resources and
the registry, buffer and view descriptors, pickling, and multiprocessing.

Each test runs a snippet in a fresh interpreter (test_view_fake_cuda's run_fake). The importing
process is a child forked from it with multiprocessing: it inherits the fake's state (the
fake shares memory in one process, so a forked child sees the pools and allocations the parent
made before the fork) and is another process to libstrided (another pid). The parent sends it
resources, buffers and views through a multiprocessing Queue, which carries allocation handles
by duplicating their file descriptors, as it does for cuda.core's. The assertions are made
here."""

import textwrap

import pytest

import strided
from test_view_fake_cuda import needs_fake, run_fake

FORK = """
import multiprocessing, pickle
from strided import (Buffer, DeviceMemoryResource, DeviceMemoryResourceOptions, IPCAllocationHandle,
                     IPCBufferDescriptor, IPCViewDescriptor, PinnedMemoryResource,
                     PinnedMemoryResourceOptions, StridedLayout)

ctx = multiprocessing.get_context("fork")
IPC = DeviceMemoryResourceOptions(ipc_enabled=True)


def in_child(fn, *args):
    # Run fn(*args) in a forked child; what it returns (or raises) comes back as JSON-able.
    q = ctx.Queue()

    def main():
        try:
            q.put(["ok", fn(*args)])
        except BaseException as e:
            q.put([type(e).__name__, str(e)])

    p = ctx.Process(target=main)
    p.start()
    r = q.get(timeout=60)
    p.join(60)
    return r


def through_queue(objs, fn):
    # Send objs to a forked child through a Queue; the child returns fn(objs).
    q_in, q_out = ctx.Queue(), ctx.Queue()

    def main():
        try:
            q_out.put(["ok", fn(q_in.get(timeout=60))])
        except BaseException as e:
            q_out.put([type(e).__name__, str(e)])

    p = ctx.Process(target=main)
    p.start()
    q_in.put(objs)
    r = q_out.get(timeout=60)
    p.join(60)
    return r
"""


def run(code):
    return run_fake(FORK + textwrap.dedent(code))


def test_ipc_types_cannot_be_made_directly():
    for cls, name in [(strided.IPCBufferDescriptor, "IPCBufferDescriptor"),
                      (strided.IPCAllocationHandle, "IPCAllocationHandle")]:
        with pytest.raises(RuntimeError, match=f"^{name} objects cannot be instantiated directly"):
            cls()
    with pytest.raises(ValueError, match=r"Invalid allocation handle \(fd\) -1: must be non-negative"):
        strided.IPCAllocationHandle._init(-1, None)


def test_allocation_handle_state_tracks_close():
    import os
    r, w = os.pipe()
    h = strided.IPCAllocationHandle._init(r, None)
    try:
        assert not h.is_closed and int(h) == r and h.handle == r and h.uuid is None
        h.close()
        assert h.is_closed and h.handle == -1
        with pytest.raises(ValueError, match="is closed"):
            int(h)
        h.close()
    finally:
        os.close(w)


def test_descriptor_pickles_and_keeps_its_size():
    import pickle
    d = strided.IPCBufferDescriptor._init(b"x" * 192, 64)
    e = pickle.loads(pickle.dumps(d))
    assert type(e) is strided.IPCBufferDescriptor and e.size == 64 and e._payload == b"x" * 192


@needs_fake
def test_allocation_handle_and_registry():
    out = run("""
        mr = DeviceMemoryResource(1, IPC)
        h = mr.allocation_handle
        out['same'] = h is mr.allocation_handle
        out['handle'] = [type(h).__name__, h.handle >= 0, h.uuid == mr.uuid, h.is_closed]
        out['plain_pickle'] = error(lambda: pickle.dumps(h))
        plain = DeviceMemoryResource(0, DeviceMemoryResourceOptions())
        out['not_ipc'] = error(lambda: plain.allocation_handle)
        out['not_ipc_buffer'] = error(lambda: plain.allocate(64).ipc_descriptor)
        out['register_not_ipc'] = error(lambda: plain.register(mr.uuid))
        out['not_found'] = error(lambda: DeviceMemoryResource.from_registry(mr.uuid))
        # In the exporting process itself, as a test can: a mapped resource, registered.
        mapped = DeviceMemoryResource.from_allocation_handle(1, h)
        out['mapped'] = [mapped.is_mapped, mapped.is_ipc_enabled, mapped.device_id,
                         mapped.uuid == mr.uuid, mr.is_mapped]
        out['dedup'] = DeviceMemoryResource.from_allocation_handle(1, h) is mapped
        out['registry'] = DeviceMemoryResource.from_registry(mr.uuid) is mapped
        out['register_taken'] = mr.register(mr.uuid) is mapped
        out['mapped_alloc'] = error(lambda: mapped.allocate(64))
        out['mapped_export'] = error(lambda: mapped.allocation_handle)
        out['wrong_kind'] = error(lambda: PinnedMemoryResource.from_allocation_handle(h))
        buf = mr.allocate(256)
        d = buf.ipc_descriptor
        out['descriptor'] = [type(d).__name__, d.size, len(d._payload), d is buf.ipc_descriptor]
        out['get'] = buf.get_ipc_descriptor()._payload[:8].decode()
        out['same_process'] = error(lambda: Buffer.from_ipc_descriptor(mapped, d))
        out['bad_type'] = error(lambda: Buffer.from_ipc_descriptor(mapped, buf))
        out['truncated'] = error(lambda: Buffer.from_ipc_descriptor(
            mapped, IPCBufferDescriptor._init(d._payload[:100], 256)))
        out['oversized'] = error(lambda: Buffer.from_ipc_descriptor(
            mapped, IPCBufferDescriptor._init(d._payload, 256 * 100)))
        # A raw file descriptor: an unregistered mapped resource; the caller keeps its fd.
        fd = os.dup(h.handle)
        raw = DeviceMemoryResource.from_allocation_handle(1, fd)
        os.close(fd)
        out['raw'] = [raw.is_mapped, raw.uuid is None]
        h2 = IPCAllocationHandle._init(os.dup(h.handle), mr.uuid)
        h2.close()
        out['closed'] = error(lambda: DeviceMemoryResource.from_allocation_handle(1, h2))
        out['pickle_mr'] = pickle.loads(pickle.dumps(mr)) is mapped
        out['import_no_device'] = error(lambda: DeviceMemoryResource._import_pool(None, h.handle, None))
        out['import_pinned_device'] = error(lambda: PinnedMemoryResource._import_pool(0, h.handle, None))
        out['import_bad_id'] = error(lambda: DeviceMemoryResource._import_pool(1, h.handle, b"x"))
    """)
    assert out["same"] is True
    assert out["handle"] == ["IPCAllocationHandle", True, True, False]
    assert out["plain_pickle"][0] == "TypeError"
    assert out["not_ipc"] == ["RuntimeError", "Memory resource is not IPC-enabled"]
    assert out["not_ipc_buffer"] == ["RuntimeError", "Memory resource is not IPC-enabled"]
    assert out["register_not_ipc"] == ["RuntimeError", "Memory resource is not IPC-enabled"]
    assert out["not_found"][0] == "RuntimeError" and out["not_found"][1].endswith("was not found")
    assert out["mapped"] == [True, True, 1, True, False]
    assert out["dedup"] and out["registry"] and out["register_taken"]
    assert out["mapped_alloc"] == ["TypeError", "Cannot allocate from a mapped IPC-enabled memory resource"]
    assert out["mapped_export"] == ["RuntimeError", "Imported memory resource cannot be exported"]
    assert out["wrong_kind"][0] == "TypeError"
    assert out["descriptor"] == ["IPCBufferDescriptor", 256, 192, True]  # made once, kept
    assert out["get"] == "STRDIPCB"
    assert out["same_process"][0] == "ValueError"
    assert "the descriptor was written by this process" in out["same_process"][1]
    assert out["bad_type"] == ["TypeError", "Argument 'ipc_descriptor' has incorrect type (expected "
                                            "IPCBufferDescriptor, got strided.Buffer)"]
    assert out["truncated"] == ["ValueError", "a buffer IPC descriptor is 192 bytes, got 100"]
    assert out["oversized"] == ["ValueError", "the descriptor's size (25600 bytes) exceeds the mapped "
                                              "allocation extent (256 bytes)"]
    assert out["raw"] == [True, True]
    assert out["closed"] == ["RuntimeError", "IPCAllocationHandle has been closed"]
    assert out["pickle_mr"] is True
    assert out["import_no_device"][0] == "TypeError"
    assert out["import_pinned_device"] == ["TypeError", "a pinned pool has no device: device_id must be None"]
    assert out["import_bad_id"] == ["TypeError", "the pool's identity must be 16 bytes or None"]


@needs_fake
def test_buffer_through_multiprocessing():
    out = run("""
        mr = DeviceMemoryResource(1, IPC)
        buf = mr.allocate(64)
        ctypes.memset(buf.handle, 0x5a, 64)

        def child(objs):
            mr2, b = objs
            return dict(mapped=[mr2.is_mapped, b.is_mapped, b.memory_resource is mr2],
                        registry=DeviceMemoryResource.from_registry(mr2.uuid) is mr2,
                        size=b.size, device=b.device_id, same_address=b.handle == objs_ptr,
                        bytes=ctypes.string_at(b.handle, 64).hex()[:8],
                        again=b.ipc_descriptor.size)

        objs_ptr = buf.handle
        out['child'] = through_queue((mr, buf), child)
        out['parent_mapped'] = buf.is_mapped
        # Plain pickle, once the child has the pool registered: the buffer alone.
        data = pickle.dumps(buf)

        def child2(objs):
            mr2 = objs
            b = pickle.loads(data)
            return [b.is_mapped, b.memory_resource is mr2, b.size]

        out['pickled'] = through_queue(mr, child2)
        out['unregistered'] = in_child(lambda: pickle.loads(data).size)
        out['legacy_parent'] = error(lambda: pickle.dumps(Buffer.from_handle(0, 16)))
    """)
    assert out["child"] == ["ok", dict(mapped=[True, True, True], registry=True, size=64, device=1,
                                       same_address=True, bytes="5a5a5a5a", again=64)]
    assert out["parent_mapped"] is False
    assert out["pickled"] == ["ok", [True, True, 64]]
    assert out["unregistered"][0] == "RuntimeError" and "was not found" in out["unregistered"][1]
    assert out["legacy_parent"][0] == "RuntimeError"


@needs_fake
def test_pinned_pool_through_multiprocessing():
    out = run("""
        mr = PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True))
        buf = mr.allocate(32)
        ctypes.memset(buf.handle, 7, 32)

        def child(objs):
            mr2, b = objs
            return [type(mr2).__name__, mr2.is_mapped, b.is_mapped, b.is_host_accessible,
                    ctypes.string_at(b.handle, 4).hex()]

        out['child'] = through_queue((mr, buf), child)
        out['wrong_kind'] = error(lambda: DeviceMemoryResource.from_allocation_handle(0, mr.allocation_handle))
    """)
    assert out["child"] == ["ok", ["PinnedMemoryResource", True, True, True, "07070707"]]
    assert out["wrong_kind"][0] == "TypeError"


@needs_fake
def test_legacy_buffer_of_memory_allocated_elsewhere():
    out = run("""
        # Device memory no pool gave (the prelude's DEV0 range), wrapped as a torch tensor's is.
        buf = Buffer.from_handle(DEV0 + 4096, 1024)
        d = buf.ipc_descriptor

        def child():
            b = Buffer.from_ipc_descriptor(None, d)
            return [b.is_mapped, b.handle == DEV0 + 4096, b.size, b.memory_resource is None,
                    b.device_id, fake.fake_cuda_calls(b"cuIpcOpenMemHandle")]

        out['child'] = in_child(child)
        out['calls'] = [fake.fake_cuda_calls(b"cuMemGetAddressRange"),
                        fake.fake_cuda_calls(b"cuIpcGetMemHandle")]
        out['host'] = error(lambda: Buffer.from_handle(PINNED, 16).ipc_descriptor)
    """)
    assert out["child"] == ["ok", [True, True, 1024, True, 0, 1]]
    assert out["calls"] == [1, 1]
    assert out["host"] == ["RuntimeError", "only device memory and the memory of IPC-enabled pools "
                                           "can be shared with another process, not pinned memory"]


@needs_fake
def test_view_through_multiprocessing():
    out = run("""
        mr = DeviceMemoryResource(0, IPC)
        buf = mr.allocate(3 * 8 * 4)
        a = np.arange(24, dtype=np.float32)
        ctypes.memmove(buf.handle, a.ctypes.data, a.nbytes)
        layout = StridedLayout((3, 4), (8, 2), 4)
        v = StridedMemoryView.from_buffer(buf, layout[:, :], dtype=np.float32, is_readonly=True)

        def child(objs):
            mr2, w = objs
            b = w.buffer
            host = np.frombuffer(ctypes.string_at(b.handle, b.size), dtype=np.float32)
            got = np.lib.stride_tricks.as_strided(host, shape=w.shape,
                                                  strides=[s * 4 for s in w.strides])
            return dict(shape=list(w.shape), strides=list(w.strides), dtype=w.dtype.str,
                        readonly=w.readonly, device=w.device_id, mapped=b.is_mapped,
                        resource=b.memory_resource is mr2, values=got.tolist())

        out['child'] = through_queue((mr, v), child)
        out['expected'] = a.reshape(3, 8)[:, ::2].tolist()

        # With an event: the child's stream waits on it, without a host synchronization.
        desc = v.get_ipc_descriptor(stream=0x51)
        out['event'] = [type(desc).__name__, desc._event is not None, desc.nbytes,
                        fake.fake_cuda_last_stream(b"cuEventRecord") == 0x51]

        def child_event(objs):
            mr2, d = objs
            w = StridedMemoryView.from_ipc_descriptor(d, mr2, stream=0x77)
            return [w.shape[0], fake.fake_cuda_calls(b"cuIpcOpenEventHandle"),
                    fake.fake_cuda_last_stream(b"cuStreamWaitEvent") == 0x77]

        out['child_event'] = through_queue((mr, desc), child_event)
        out['pickled_has_no_event'] = pickle.loads(pickle.dumps(desc))._event is None
        out['same_process'] = error(lambda: StridedMemoryView.from_ipc_descriptor(desc, mr))
        out['bad_type'] = error(lambda: StridedMemoryView.from_ipc_descriptor(b"x", mr))
        out['host_view'] = error(lambda: pickle.dumps(StridedMemoryView.from_dlpack(a, stream_ptr=-1)))
        del desc
        gc.collect()
    """)
    assert out["child"] == ["ok", dict(shape=[3, 4], strides=[8, 2], dtype="<f4", readonly=True,
                                       device=0, mapped=True, resource=True, values=out["expected"])]
    assert out["event"] == ["IPCViewDescriptor", True, 328 + 32, True]
    assert out["child_event"] == ["ok", [3, 1, True]]
    assert out["pickled_has_no_event"] is True
    assert out["same_process"][0] == "ValueError"
    assert out["bad_type"][0] == "TypeError"
    assert out["host_view"][0] == "RuntimeError"
