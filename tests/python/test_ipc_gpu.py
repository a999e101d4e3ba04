"""Sharing a buffer and a view between two processes on one GPU (CUDA IPC, docs/ipc.md).

The producer (this process) fills device memory through a view; the consumer (a process
started with the spawn method, as CUDA requires) receives the view through a multiprocessing
Queue, checks its bytes, puts a view of another layout on top, copies into a layout of its own
with copy_from, and writes back, which the producer then sees. Variants: an IPC-enabled pool's
allocation (the memory resource travels first, as cuda.core's does), device memory allocated
elsewhere (legacy IPC, shared by offset in its allocation), a pickled view, and an
event-ordered handover where neither side synchronizes with the host before the consumer's
stream waits on the producer's event.

The module skips with "skipped: no CUDA device" where no CUDA device is usable. Streams come
from cuda.bindings where it is installed (the legacy default stream otherwise).
"""

import multiprocessing
import pickle

import numpy as np
import pytest

from gpu_util import cuda_device_count

pytestmark = pytest.mark.skipif(cuda_device_count() == 0, reason="skipped: no CUDA device")

SHAPE = (4, 6)
TIMEOUT = 120


def _stream():
    """A new CUDA stream's handle (an int), or 1 (the legacy default stream) without
    cuda.bindings."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return 1
    driver.cuInit(0)
    err, dev = driver.cuDeviceGet(0)
    err, ctx = driver.cuDevicePrimaryCtxRetain(dev)
    driver.cuCtxSetCurrent(ctx)
    err, s = driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value)
    assert err == driver.CUresult.CUDA_SUCCESS
    return int(s)


def _host_view(a):
    import strided
    return strided.StridedMemoryView.from_dlpack(a, stream_ptr=-1)


def _to_host(view, stream):
    """The view's elements as a C-ordered NumPy array (a blocking copy)."""
    out = np.empty(view.shape, dtype=view.dtype)
    _host_view(out).copy_from(view, stream=stream, blocking=True)
    return out


def _consumer(q_in, q_out, layout_name):
    """Receive (resource, view) or (None, view), check, copy, write back, report."""
    import strided
    from strided import StridedLayout, StridedMemoryView
    try:
        stream = _stream()
        mr, view = q_in.get(timeout=TIMEOUT)
        if isinstance(view, bytes):  # pickled with plain pickle: mr is registered by now
            view = pickle.loads(view)
        got = _to_host(view, stream)
        # A view of another layout on top of the imported one: its transpose.
        t = view.view(view.layout.permuted((1, 0)))
        got_t = _to_host(t, stream)
        # Into the consumer's own layout (F order, its own memory) with copy_from.
        own = strided.DeviceMemoryResource(0).allocate(view.size * 4, stream)
        f = StridedMemoryView.from_buffer(own, StridedLayout.dense(view.shape, 4, "F"),
                                          dtype=np.float32)
        f.copy_from(view, stream=stream, blocking=True)
        got_f = _to_host(f, stream)
        # Write back: the producer must see it.
        view.copy_from(_host_view(got * -1), stream=stream, blocking=True)
        q_out.put(["ok", layout_name, got.tolist(), got_t.tolist(), got_f.tolist(),
                   view.buffer.is_mapped, mr is None or mr.is_mapped])
        del view, t, f, own, mr
        q_in.get(timeout=TIMEOUT)  # the producer keeps its memory until this process is done
    except BaseException as e:  # reported to the parent, which fails the test
        q_out.put([type(e).__name__, str(e)])


def _run_consumer(objs, expected):
    ctx = multiprocessing.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_consumer, args=(q_in, q_out, "layout"))
    p.start()
    try:
        q_in.put(objs)
        r = q_out.get(timeout=TIMEOUT)
        assert r[0] == "ok", r
        _, _, got, got_t, got_f, mapped, mr_mapped = r
        assert np.array_equal(np.array(got, dtype=np.float32), expected)
        assert np.array_equal(np.array(got_t, dtype=np.float32), expected.T)
        assert np.array_equal(np.array(got_f, dtype=np.float32), expected)
        assert mapped and mr_mapped
    finally:
        q_in.put("done")
        p.join(TIMEOUT)
    assert p.exitcode == 0


def _produce(buf, stream):
    """Fill buf through a C-ordered (4, 6) float32 view; return the view and the values."""
    from strided import StridedLayout, StridedMemoryView
    expected = np.arange(24, dtype=np.float32).reshape(SHAPE)
    view = StridedMemoryView.from_buffer(buf, StridedLayout.dense(SHAPE, 4), dtype=np.float32)
    view.copy_from(_host_view(expected), stream=stream, blocking=True)
    return view, expected


def test_pool_view_between_processes():
    import strided
    stream = _stream()
    mr = strided.DeviceMemoryResource(0, strided.DeviceMemoryResourceOptions(ipc_enabled=True))
    buf = mr.allocate(24 * 4, stream)
    view, expected = _produce(buf, stream)
    _run_consumer((mr, view), expected)
    assert np.array_equal(_to_host(view, stream), -expected)


def test_legacy_view_between_processes():
    # Device memory no pool gave (cuMemAlloc), as PyTorch's and CuPy's allocators make it.
    driver = pytest.importorskip("cuda.bindings.driver", reason="needs cuda.bindings (cuMemAlloc)")
    import strided
    stream = _stream()
    err, ptr = driver.cuMemAlloc(4096)
    assert err == driver.CUresult.CUDA_SUCCESS
    try:
        buf = strided.Buffer.from_handle(int(ptr) + 512, 24 * 4)
        view, expected = _produce(buf, stream)
        _run_consumer((None, view), expected)
        assert np.array_equal(_to_host(view, stream), -expected)
        del view, buf
    finally:
        driver.cuMemFree(ptr)


def test_pickled_view_between_processes():
    import strided
    stream = _stream()
    mr = strided.DeviceMemoryResource(0, strided.DeviceMemoryResourceOptions(ipc_enabled=True))
    buf = mr.allocate(24 * 4, stream)
    view, expected = _produce(buf, stream)
    # The resource through multiprocessing (its handle), the view by plain pickle (the UUID of
    # its resource, found in the consumer's registry, and the view descriptor).
    _run_consumer((mr, pickle.dumps(view)), expected)
    assert np.array_equal(_to_host(view, stream), -expected)


def _event_consumer(q_in, q_out):
    import strided
    from strided import StridedMemoryView
    try:
        stream = _stream()
        mr, descriptor = q_in.get(timeout=TIMEOUT)
        # No host synchronization before this: the stream waits on the producer's event.
        view = StridedMemoryView.from_ipc_descriptor(descriptor, mr, stream=stream)
        own = strided.DeviceMemoryResource(0).allocate(view.size * 4, stream)
        copy = StridedMemoryView.from_buffer(own, view.layout, dtype=np.float32)
        copy.copy_from(view, stream=stream, blocking=False)
        got = _to_host(copy, stream)
        expected = np.arange(got.size, dtype=np.float32)
        wrong = np.flatnonzero(got != expected)
        q_out.put(["ok", got.size, int(wrong[0]) if wrong.size else -1])
        del view, copy, own
        q_in.get(timeout=TIMEOUT)
    except BaseException as e:
        q_out.put([type(e).__name__, str(e)])


def test_event_ordered_view_between_processes():
    import strided
    from strided import StridedLayout, StridedMemoryView
    stream = _stream()
    mr = strided.DeviceMemoryResource(0, strided.DeviceMemoryResourceOptions(ipc_enabled=True))
    n = 1 << 22
    src = mr.allocate(n * 4, stream)
    dst = mr.allocate(n * 4, stream)
    expected = np.arange(n, dtype=np.float32)
    sv = StridedMemoryView.from_buffer(src, StridedLayout.dense((n,), 4), dtype=np.float32)
    sv.copy_from(_host_view(expected), stream=stream, blocking=True)
    dv = StridedMemoryView.from_buffer(dst, StridedLayout.dense((n,), 4), dtype=np.float32)
    # Queued, not waited for: the descriptor's event is recorded after it.
    dv.copy_from(sv, stream=stream, blocking=False)
    descriptor = dv.get_ipc_descriptor(stream=stream)
    ctx = multiprocessing.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_event_consumer, args=(q_in, q_out))
    p.start()
    try:
        q_in.put((mr, descriptor))
        r = q_out.get(timeout=TIMEOUT)
        assert r[0] == "ok", r
        assert r[1] == n and r[2] == -1, f"the consumer read a wrong value at {r[2]}"
    finally:
        q_in.put("done")
        p.join(TIMEOUT)
    assert p.exitcode == 0
    del descriptor
