"""Time sharing memory and views between two processes on one GPU (CUDA IPC, docs/ipc.md).

In the same run, for an IPC-enabled pool's allocation and for legacy IPC of cuMemAlloc memory:

  export     Buffer.ipc_descriptor and StridedMemoryView.get_ipc_descriptor() in the producer,
             us per call;
  import     the first Buffer.from_ipc_descriptor of an allocation in the consumer (the first
             mapping), then the mean of later imports and releases of the same descriptor, us;
             and StridedMemoryView.from_ipc_descriptor the same way;
  copy       copy_from into the consumer's own memory from the imported view and from a view of
             the consumer's own memory of the same layout, GB/s (bytes read + written per
             second), for a dense view and a transposed one.

Prints one table and writes the results, with a description of the machine, as JSON.

Usage (from the repository root, with strided built with STRIDED_BUILD_PYTHON=ON and found
through PYTHONPATH, as scripts/gpu-check does with build-gpu):

    PYTHONPATH=build-bench/python python bench/bench_ipc.py [--quick] [--json PATH]
        [--markdown PATH] [--mib N]

Needs a CUDA device and cuda.bindings (for cuMemAlloc and a stream); exits with a message
otherwise. This is a benchmark, not a test: it never fails on a time; it checks the bytes the
consumer reads once per case and reports a mismatch.
"""

import argparse
import datetime
import json
import multiprocessing
import platform
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
            first = Buffer.from_ipc_descriptor(mr, buf_desc, stream=stream)
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
                dst = StridedMemoryView.from_buffer(local_dst, StridedLayout.dense(imported.shape, 4),
                                                    dtype=np.float32)
                for src_name, src in [("imported", imported), ("local", local)]:
                    dst.copy_from(src, stream=stream, blocking=True)  # warm up
                    t = time.perf_counter()
                    for _ in range(repeat):
                        dst.copy_from(src, stream=stream, blocking=False)
                    dst.copy_from(src, stream=stream, blocking=True)
                    rows[f"{kind}/{src_name}"] = _gbps(nbytes, (time.perf_counter() - t) / (repeat + 1))
            host = np.empty(view.shape, dtype=np.float32)
            StridedMemoryView.from_dlpack(host, stream_ptr=-1).copy_from(view, stream=stream,
                                                                        blocking=True)
            results[name] = dict(first_import_us=first_us, import_us=again_us, view_import_us=view_us,
                                 copy_gbps=rows, bytes_ok=float(host.sum(dtype=np.float64)) == checksum)
            del first, view, imported, local, dst, local_src, local_dst
            q_out.put("next")
        q_out.put(["ok", results])
    except BaseException as e:
        q_out.put([type(e).__name__, str(e)])


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
            view = StridedMemoryView.from_buffer(buf, StridedLayout.dense(shape, 4), dtype=np.float32)
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
    print(f"{mib} MiB float32 view of shape {shape}, {repeat} repetitions")
    print(render(table, False))
    if args.markdown:
        Path(args.markdown).write_text(render(table, True) + "\n")
    out = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
               machine=dict(cpu=cpu_model(), python=platform.python_version(),
                            strided=strided.__version__),
               shape=list(shape), mib=mib, repeat=repeat, export=export, consumer=consumer)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
