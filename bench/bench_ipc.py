"""Time sharing memory and views between two processes on one GPU (CUDA IPC, docs/ipc.md).

In the same run, for an IPC-enabled pool's allocation ("pool") and for legacy IPC of cuMemAlloc
memory ("legacy"):

  export     Buffer.ipc_descriptor and StridedMemoryView.get_ipc_descriptor() in the producer,
             us per call;
  import     the first Buffer.from_ipc_descriptor of an allocation in the consumer (the first
             mapping), then the mean of later imports and releases of the same descriptor, us;
             and StridedMemoryView.from_ipc_descriptor the same way;
  copy       copy_from into the consumer's own memory from the imported view and from a view of
             the consumer's own memory of the same layout, GB/s (bytes read + written per
             second), for a dense view and a transposed one.

Beside them, in the same run and the same table, the real alternatives, each imported by a
consumer process of its own:

  cuda.core pool  cuda.core's IPC-enabled pool (DeviceMemoryResource with ipc_enabled): export
                  of an allocation's descriptor (Buffer.ipc_descriptor, get_ipc_descriptor() on
                  older layouts), us per call; the pool travels to the consumer through
                  multiprocessing, as strided's does; import with Buffer.from_ipc_descriptor, the
                  first one and then later imports and closes of the same descriptor, us;
  torch           PyTorch's CUDA IPC, as torch.multiprocessing uses it: export is
                  _share_cuda_() of a CUDA tensor's storage, the first call (which also gets the
                  allocation's IPC handle, cached after it) and the median of later calls, us;
                  import is UntypedStorage._new_shared_cuda of the handle tuple, the first one
                  (the first mapping) and then later imports and releases, each of a tuple of its
                  own (every _share_cuda_() call hands out one reference for one import), us.

Both share buffers, not views, so their view columns are n/a, and their copies are not timed
(n/a). Each checks the bytes its consumer reads. A ratio line compares strided's pool with
cuda.core's pool and strided's legacy IPC with torch's: the alternative's time over strided's,
so above 1 means strided is faster. The alternatives are optional: where cuda.core or torch does
not import, one of their calls raises, or their consumer does not answer in ANCHOR_TIMEOUT
seconds, the row prints n/a and a note says why; the strided rows and the exit status are the
same as without them.

Prints one table and writes the results, with a description of the machine, as JSON.

Usage (from the repository root, with strided built with STRIDED_BUILD_PYTHON=ON and found
through PYTHONPATH, as scripts/gpu-check does with build-gpu):

    PYTHONPATH=build-bench/python python bench/bench_ipc.py [--quick] [--json PATH]
        [--markdown PATH] [--mib N]

Needs a CUDA device and cuda.bindings (for cuMemAlloc and a stream); exits with a message
otherwise. cuda.core (1.2; cuda.core.experimental on older layouts) and torch are optional.
This is a benchmark, not a test: it never fails on a time; it checks the bytes the consumer
reads once per case and reports a mismatch.
"""

import argparse
import datetime
import importlib
import importlib.metadata
import json
import multiprocessing
import multiprocessing.reduction
import pickle
import platform
import queue
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchutil import cpu_model, render


def _stream():
    from cuda.bindings import driver
    driver.cuInit(0)
    _, dev = driver.cuDeviceGet(0)
    _, ctx = driver.cuDevicePrimaryCtxRetain(dev)
    driver.cuCtxSetCurrent(ctx)
    err, s = driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING.value)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuStreamCreate failed: {err}")
    return int(s)


def _per_call_us(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


# Seconds a queue waits for the other process before the run gives up.
TIMEOUT = 300


def _gbps(nbytes, seconds):
    return 2 * nbytes / seconds / 1e9  # read and written


def _consumer(q_in, q_out, repeat):
    """Import what the producer sends and time it; send the numbers back."""
    import strided
    from strided import Buffer, StridedLayout, StridedMemoryView
    try:
        stream = _stream()
        results = {}
        while True:
            item = q_in.get(timeout=TIMEOUT)
            if item is None:
                break
            name, mr, buf_desc, view_desc, shape, checksum = item
            t = time.perf_counter()
            # The first import stays mapped while the later ones are timed.
            first = Buffer.from_ipc_descriptor(mr, buf_desc, stream=stream)  # noqa: F841
            first_us = (time.perf_counter() - t) * 1e6

            def again_buffer():
                Buffer.from_ipc_descriptor(mr, buf_desc, stream=stream).close()

            again_us = _per_call_us(again_buffer, repeat)

            def again_view():
                StridedMemoryView.from_ipc_descriptor(view_desc, mr, stream=stream)

            view_us = _per_call_us(again_view, repeat)
            view = StridedMemoryView.from_ipc_descriptor(view_desc, mr, stream=stream)
            own_mr = strided.DeviceMemoryResource(0)
            nbytes = view.size * 4
            local_src = own_mr.allocate(nbytes, stream)
            local_dst = own_mr.allocate(nbytes, stream)
            rows = {}
            for kind, layout in [("dense", StridedLayout.dense(shape, 4)),
                                 ("transposed", StridedLayout.dense(shape, 4).permuted((1, 0)))]:
                imported = view.view(layout)
                local = StridedMemoryView.from_buffer(local_src, layout, dtype=np.float32)
                dst = StridedMemoryView.from_buffer(
                    local_dst, StridedLayout.dense(imported.shape, 4), dtype=np.float32)
                for src_name, src in [("imported", imported), ("local", local)]:
                    dst.copy_from(src, stream=stream, blocking=True)  # warm up
                    t = time.perf_counter()
                    for _ in range(repeat):
                        dst.copy_from(src, stream=stream, blocking=False)
                    dst.copy_from(src, stream=stream, blocking=True)
                    rows[f"{kind}/{src_name}"] = _gbps(
                        nbytes, (time.perf_counter() - t) / (repeat + 1))
            host = np.empty(view.shape, dtype=np.float32)
            StridedMemoryView.from_dlpack(host, stream_ptr=-1).copy_from(
                view, stream=stream, blocking=True)
            results[name] = dict(first_import_us=first_us, import_us=again_us,
                                 view_import_us=view_us, copy_gbps=rows,
                                 bytes_ok=float(host.sum(dtype=np.float64)) == checksum)
            del first, view, imported, local, dst, local_src, local_dst
            q_out.put("next")
        q_out.put(["ok", results])
    except BaseException as e:
        q_out.put([type(e).__name__, str(e)])


# Seconds the producer waits for an alternative's consumer before its row is n/a.
ANCHOR_TIMEOUT = 60

CUDA_CORE_NAMES = ("Device", "DeviceMemoryResource", "DeviceMemoryResourceOptions", "Buffer")


def _why(e):
    """An exception as one short line for a note."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}"[:300]


def _cuda_core():
    """cuda.core's module with Device, DeviceMemoryResource, DeviceMemoryResourceOptions and
    Buffer: cuda.core (1.x), else cuda.core.experimental (older layouts)."""
    why = []
    for path in ("cuda.core", "cuda.core.experimental"):
        try:
            module = importlib.import_module(path)
        except Exception as e:  # ImportError, or a broken CUDA install
            why.append(f"{path}: {_why(e)}")
            continue
        if all(hasattr(module, n) for n in CUDA_CORE_NAMES):
            return module
        missing = ", ".join(n for n in CUDA_CORE_NAMES if not hasattr(module, n))
        why.append(f"{path} has no {missing}")
    raise ImportError("; ".join(why))


def _cc_allocation_handle(mr):
    """A cuda.core pool's IPCAllocationHandle (a property in 1.x, a method before)."""
    if hasattr(type(mr), "allocation_handle"):
        return mr.allocation_handle
    return mr.get_allocation_handle()


def _cc_descriptor_call(buf):
    """The call that exports a cuda.core Buffer's IPC descriptor (a property in 1.x, a method
    before)."""
    if hasattr(type(buf), "ipc_descriptor"):
        return lambda: buf.ipc_descriptor
    return buf.get_ipc_descriptor


def _check_cu(result, what):
    """Raise RuntimeError unless a cuda.bindings call's result is CUDA_SUCCESS."""
    err = result[0] if isinstance(result, tuple) else result
    from cuda.bindings import driver
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what} failed: {err}")


def _export_cuda_core(values, repeat):
    """Fill an allocation of a new IPC-enabled cuda.core pool with values and time its descriptor
    export; returns (numbers, the bytes to send the consumer, a function that frees both)."""
    from cuda.bindings import driver
    cc = _cuda_core()
    device = cc.Device(0)
    device.set_current()
    stream = device.create_stream()
    nbytes = values.nbytes
    mr = cc.DeviceMemoryResource(device, cc.DeviceMemoryResourceOptions(
        ipc_enabled=True, max_size=max(2 * nbytes, 64 << 20)))
    # The pool is exported before its first allocation is: the driver refuses to export an
    # allocation of a pool that was never exported itself.
    handle = _cc_allocation_handle(mr)
    buf = mr.allocate(nbytes, stream=stream)
    stream.sync()
    _check_cu(driver.cuMemcpyHtoD(int(buf.handle), values.ctypes.data, nbytes), "cuMemcpyHtoD")
    _check_cu(driver.cuCtxSynchronize(), "cuCtxSynchronize")
    export_descriptor = _cc_descriptor_call(buf)
    export = dict(buffer_us=_per_call_us(export_descriptor, repeat))
    descriptor = export_descriptor()
    # The pool travels as multiprocessing sends it (its file descriptor duplicated into the
    # consumer), as strided's does; where it does not pickle, its allocation handle travels and
    # the consumer imports it with DeviceMemoryResource.from_allocation_handle. Pickling here,
    # not in the queue's feeder thread, makes a failure an exception of this row.
    dumps = multiprocessing.reduction.ForkingPickler.dumps
    try:
        payload = bytes(dumps(("mr", mr, descriptor)))
    except Exception:
        payload = bytes(dumps(("handle", handle, descriptor)))

    def close():
        buf.close()
        stream.sync()
        mr.close()

    return export, payload, close


def _import_cuda_core(payload, repeat, nbytes, checksum):
    """Map the cuda.core pool and time Buffer.from_ipc_descriptor: the first import, then later
    imports and closes of the same descriptor; check the bytes."""
    from cuda.bindings import driver
    cc = _cuda_core()
    device = cc.Device(0)
    device.set_current()
    stream = device.create_stream()
    how, mr, descriptor = pickle.loads(payload)
    if how == "handle":
        mr = cc.DeviceMemoryResource.from_allocation_handle(device, mr)
    t = time.perf_counter()
    first = cc.Buffer.from_ipc_descriptor(mr, descriptor, stream=stream)
    first_us = (time.perf_counter() - t) * 1e6

    def again():
        cc.Buffer.from_ipc_descriptor(mr, descriptor, stream=stream).close()

    again_us = _per_call_us(again, repeat)
    stream.sync()
    host = np.empty(nbytes // 4, dtype=np.float32)
    _check_cu(driver.cuMemcpyDtoH(host.ctypes.data, int(first.handle), nbytes), "cuMemcpyDtoH")
    bytes_ok = float(host.sum(dtype=np.float64)) == checksum
    first.close()
    stream.sync()
    return dict(first_import_us=first_us, import_us=again_us, bytes_ok=bytes_ok)


def _export_torch(values, repeat):
    """Copy values into a CUDA tensor and time _share_cuda_() of its storage, the first call and
    later ones; returns (numbers, the bytes to send the consumer, a function that frees the
    tensor)."""
    import torch
    tensor = torch.from_numpy(values).to("cuda")
    torch.cuda.synchronize()
    storage = tensor.untyped_storage()
    t = time.perf_counter()
    handles = [storage._share_cuda_()]
    first_us = (time.perf_counter() - t) * 1e6
    later = []
    for _ in range(repeat):
        t = time.perf_counter()
        handles.append(storage._share_cuda_())
        later.append(time.perf_counter() - t)
    export = dict(buffer_us=statistics.median(later) * 1e6, first_buffer_us=first_us)
    payload = pickle.dumps(handles)
    keep = [tensor, storage]

    def close():
        keep.clear()
        torch.cuda.synchronize()

    return export, payload, close


def _import_torch(payload, repeat, nbytes, checksum):
    """Time UntypedStorage._new_shared_cuda: the first import (the first mapping), then later
    imports and releases, each of a handle tuple of its own while the first stays mapped, as
    torch.multiprocessing's rebuild_cuda_tensor does; check the bytes."""
    import torch
    torch.cuda.init()
    handles = pickle.loads(payload)
    t = time.perf_counter()
    first = torch.UntypedStorage._new_shared_cuda(*handles[0])
    first_us = (time.perf_counter() - t) * 1e6
    later = []
    for h in handles[1:]:
        t = time.perf_counter()
        storage = torch.UntypedStorage._new_shared_cuda(*h)
        del storage
        later.append(time.perf_counter() - t)
    tensor = torch.empty((0,), dtype=torch.float32, device=first.device).set_(
        first, 0, (nbytes // 4,), (1,))
    bytes_ok = float(tensor.sum(dtype=torch.float64).item()) == checksum
    del tensor, first
    torch.cuda.synchronize()
    return dict(first_import_us=first_us, import_us=statistics.median(later) * 1e6,
                bytes_ok=bytes_ok)


# The alternatives: row name -> (export in the producer, import in the consumer).
ANCHORS = {
    "cuda.core pool": (_export_cuda_core, _import_cuda_core),
    "torch": (_export_torch, _import_torch),
}


def _anchor_consumer(name, payload, repeat, nbytes, checksum, q_out):
    """Import an alternative's allocation and time it; send the numbers, or the error, back."""
    try:
        q_out.put(["ok", ANCHORS[name][1](payload, repeat, nbytes, checksum)])
    except BaseException as e:
        q_out.put([type(e).__name__, " ".join(str(e).split())[:300]])


def _receive(q, p, timeout):
    """The next item of q; TimeoutError when process p exits without sending one or timeout
    seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return q.get(timeout=1)
        except queue.Empty:
            if not p.is_alive():
                try:
                    return q.get(timeout=1)
                except queue.Empty:
                    raise TimeoutError(f"the consumer exited ({p.exitcode}) without an answer")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the consumer did not answer in {timeout} s")


def _run_anchor(ctx, name, values, checksum, repeat):
    """One alternative's row: export here, import in a consumer process of its own. Its numbers
    with skipped None, or a dict whose skipped says why the row is n/a; never raises."""
    try:
        export, payload, close = ANCHORS[name][0](values, repeat)
    except Exception as e:
        return dict(skipped=f"export: {_why(e)}")
    q_out = ctx.Queue()
    p = ctx.Process(target=_anchor_consumer,
                    args=(name, payload, repeat, values.nbytes, checksum, q_out))
    try:
        p.start()
        result = _receive(q_out, p, ANCHOR_TIMEOUT)
    except Exception as e:
        result = ["no result", _why(e)]
    finally:
        # The consumer has closed what it imported, or is stopped, before the producer frees
        # the memory.
        if p.pid is not None:
            p.join(30)
            if p.is_alive():
                p.terminate()
                p.join(10)
        try:
            close()
        except Exception as e:
            export["close"] = _why(e)
    if result[0] != "ok":
        return dict(export, skipped=f"import: {result[0]}: {result[1]}")
    return dict(export, **result[1], skipped=None)


def _version(module, dist):
    """The version of an imported module, or None."""
    if module not in sys.modules:
        return None
    try:
        return importlib.metadata.version(dist)
    except Exception:
        return getattr(sys.modules[module], "__version__", None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, 16 MiB")
    parser.add_argument("--mib", type=int, default=256, help="size of the shared view, MiB")
    parser.add_argument("--json", default="bench/results/ipc.json")
    parser.add_argument("--markdown", default=None)
    args = parser.parse_args()
    try:
        import strided
        from cuda.bindings import driver
        from strided import Buffer, StridedLayout, StridedMemoryView
        stream = _stream()
    except Exception as e:
        sys.exit(f"bench_ipc.py: needs strided, cuda.bindings and a CUDA device: {e}")
    mib = 16 if args.quick else args.mib
    repeat = 5 if args.quick else 50
    rows_n = 1024
    cols = mib * (1 << 20) // 4 // rows_n
    shape = (rows_n, cols)
    nbytes = rows_n * cols * 4
    values = np.arange(rows_n * cols, dtype=np.float32).reshape(shape) % 1024
    checksum = float(values.sum(dtype=np.float64))

    pool = strided.DeviceMemoryResource(0, strided.DeviceMemoryResourceOptions(ipc_enabled=True))
    err, raw = driver.cuMemAlloc(nbytes + 4096)
    buffers = {
        "pool": pool.allocate(nbytes, stream),
        "legacy": Buffer.from_handle(int(raw) + 4096, nbytes),
    }
    ctx = multiprocessing.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_consumer, args=(q_in, q_out, repeat))
    p.start()
    export = {}
    result = ["no result", "the producer failed before the consumer answered"]
    try:
        for name, buf in buffers.items():
            view = StridedMemoryView.from_buffer(buf, StridedLayout.dense(shape, 4),
                                                 dtype=np.float32)
            view.copy_from(StridedMemoryView.from_dlpack(values, stream_ptr=-1), stream=stream,
                           blocking=True)
            export[name] = dict(
                buffer_us=_per_call_us(lambda: buf.ipc_descriptor, repeat),
                view_us=_per_call_us(lambda: view.get_ipc_descriptor(), repeat))
            q_in.put((name, pool if name == "pool" else None, buf.ipc_descriptor,
                      view.get_ipc_descriptor(), shape, checksum))
            r = q_out.get(timeout=TIMEOUT)
            if r != "next":
                break
        q_in.put(None)
        result = r if r != "next" else q_out.get(timeout=TIMEOUT)
    finally:
        # Whatever failed, the consumer is told to stop and is not waited for
        # beyond a minute.
        q_in.put(None)
        p.join(60)
        if p.is_alive():
            p.terminate()
        buffers.clear()
        driver.cuMemFree(raw)
    if result[0] != "ok":
        sys.exit(f"bench_ipc.py: the consumer failed: {result}")
    consumer = result[1]
    # The alternatives run after strided's rows, each with a consumer of its own, so that
    # nothing of theirs can change or stop strided's.
    anchors = {name: _run_anchor(ctx, name, values, checksum, repeat) for name in ANCHORS}
    table = [["sharing", "export buffer us", "export view us", "first import us", "import us",
              "view import us", "dense imported GB/s", "dense local GB/s",
              "transposed imported GB/s", "transposed local GB/s", "bytes"]]
    for name in export:
        e, c = export[name], consumer[name]
        g = c["copy_gbps"]
        table.append([name, f"{e['buffer_us']:.1f}", f"{e['view_us']:.1f}",
                      f"{c['first_import_us']:.0f}", f"{c['import_us']:.0f}",
                      f"{c['view_import_us']:.0f}", f"{g['dense/imported']:.0f}",
                      f"{g['dense/local']:.0f}", f"{g['transposed/imported']:.0f}",
                      f"{g['transposed/local']:.0f}", "ok" if c["bytes_ok"] else "MISMATCH"])
    notes = []
    for name, a in anchors.items():
        if a["skipped"] is not None:
            table.append([name] + ["n/a"] * (len(table[0]) - 1))
            notes.append(f"{name}: n/a: {a['skipped']}")
            continue
        exported = f"{a['buffer_us']:.1f}"
        if "first_buffer_us" in a:
            exported += f" (first {a['first_buffer_us']:.0f})"
        table.append([name, exported, "n/a", f"{a['first_import_us']:.0f}",
                      f"{a['import_us']:.0f}", "n/a", "n/a", "n/a", "n/a", "n/a",
                      "ok" if a["bytes_ok"] else "MISMATCH"])
        if "close" in a:
            notes.append(f"{name}: freeing the producer's memory raised {a['close']}")
    if anchors["torch"]["skipped"] is None:
        notes.append("torch: export is the median of later _share_cuda_() calls, the first call "
                     "in parentheses; each import uses a handle tuple of its own")
    notes.append("cuda.core and torch share buffers, not views (view columns n/a); their copies "
                 "are not timed")
    ratios = {}
    for label, ours, theirs in [("strided pool vs cuda.core pool", "pool", "cuda.core pool"),
                                ("strided legacy vs torch", "legacy", "torch")]:
        a = anchors[theirs]
        if a["skipped"] is not None:
            continue
        mine = dict(export[ours], **consumer[ours])
        ratios[label] = {what: a[key] / mine[key]
                         for what, key in [("export", "buffer_us"),
                                           ("first import", "first_import_us"),
                                           ("import", "import_us")]
                         if mine[key] > 0}
    ratio_lines = [f"{label} (their time / strided's, >1: strided faster): "
                   + ", ".join(f"{what} {v:.2f}x" for what, v in r.items())
                   for label, r in ratios.items()]
    print(f"{mib} MiB float32 view of shape {shape}, {repeat} repetitions")
    print(render(table, False))
    for line in ratio_lines + notes:
        print(line)
    if args.markdown:
        extra = "".join(f"\n{line}\n" for line in ratio_lines + notes)
        Path(args.markdown).write_text(render(table, True) + "\n" + extra)
    out = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
               machine=dict(cpu=cpu_model(), python=platform.python_version(),
                            strided=strided.__version__,
                            cuda_core=_version("cuda.core", "cuda-core"),
                            torch=_version("torch", "torch")),
               shape=list(shape), mib=mib, repeat=repeat, export=export, consumer=consumer,
               anchors=anchors, ratios=ratios, notes=notes)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
