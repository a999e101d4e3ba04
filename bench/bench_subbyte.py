"""Time strided's copies of packed sub-byte elements (docs/subbyte.md)
against a memcpy of the same bytes: the packed transpose (an N x N packed
float4_e2m1fn matrix read transposed into a row-major one) and the
conversions packed -> padded and padded -> packed (PyTorch's fp4 weights
into an ml_dtypes array and back), on a GPU (the kernel subbyte) or, with
--host, on the host.

Each row reports the median time of --reps blocking copies, the bandwidth
(bytes read plus bytes written) and "%": that bandwidth as a fraction of the
same run's memcpy of the destination's bytes (a contiguous copy, which
strided runs as cuMemcpyAsync on a device, and as one memcpy on the host),
bandwidth counted the same way. Every output is compared with a NumPy
reference; a mismatch makes the exit status 1.

Memory and its views come from tests/python/subbyte_producer.py: packed
views from its test-only DLPack producer (a managed tensor over memory
strided allocated), padded ones from byte views re-typed with ml_dtypes'
types.

Usage (repository root; strided built with STRIDED_BUILD_PYTHON=ON):

    PYTHONPATH=build-bench/python python bench/bench_subbyte.py [--n 16384]
        [--reps 20] [--host] [--json bench/results/subbyte.json]
"""

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import strided

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from subbyte_producer import Memory  # noqa: E402

try:
    import ml_dtypes  # noqa: F401
except ImportError:
    sys.exit("bench_subbyte.py: needs ml_dtypes (the padded side of the conversions)")

FP4 = (17, 4, 1)
STREAM = 1


def pack(vals):
    flat = np.asarray(vals, np.uint8).ravel()
    return (flat[0::2] & 15) | (flat[1::2] << 4)


def timed(dst, src, reps):
    dst.copy_from(src, stream=STREAM, blocking=True)  # warm-up: loads, plans
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        dst.copy_from(src, stream=STREAM, blocking=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None, help="matrix side (even)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--host", action="store_true", help="host memory instead of device 0")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    n = a.n or (2048 if a.host else 16384)
    packed_bytes, padded_bytes = n * n // 2, n * n
    vals = np.random.default_rng(0).integers(0, 16, (n, n), dtype=np.uint8)

    src, dst = Memory(packed_bytes, a.host), Memory(packed_bytes, a.host)
    pad = Memory(padded_bytes, a.host)
    src.put(pack(vals))
    rows, ok = [], True

    def row(name, seconds, moved, reference_s, reference_moved, good):
        bw = moved / seconds / 1e9
        ref = reference_moved / reference_s / 1e9
        rows.append({"row": name, "ms": seconds * 1e3, "GB/s": bw, "%": 100 * bw / ref,
                     "ok": good})

    # The references: contiguous copies of the destinations' bytes.
    memcpy_packed = timed(dst.raw, src.raw, a.reps)
    memcpy_padded = timed(Memory(padded_bytes, a.host).raw, pad.raw, a.reps)

    s = src.packed(FP4, (n, n), (n, 1))
    t = s.view(s.layout.permuted((1, 0)))
    d = dst.packed(FP4, (n, n), (n, 1))
    seconds = timed(d, t, a.reps)
    good = np.array_equal(dst.get(), pack(vals.T))
    ok &= good
    row("packed fp4 transpose", seconds, 2 * packed_bytes, memcpy_packed, 2 * packed_bytes, good)

    q = pad.padded("float4_e2m1fn", (n, n))
    seconds = timed(q, s, a.reps)
    good = np.array_equal(pad.get().reshape(n, n), vals)
    ok &= good
    row("packed -> padded", seconds, packed_bytes + padded_bytes, memcpy_padded,
        2 * padded_bytes, good)

    dst.put(np.zeros(packed_bytes, np.uint8))
    seconds = timed(d, q, a.reps)
    good = np.array_equal(dst.get(), pack(vals))
    ok &= good
    row("padded -> packed", seconds, packed_bytes + padded_bytes, memcpy_packed,
        2 * packed_bytes, good)

    where = "host" if a.host else "device 0"
    print("sub-byte copies, %d x %d float4_e2m1fn, %s, median of %d" % (n, n, where, a.reps))
    print("%-24s %10s %10s %8s %4s" % ("row", "ms", "GB/s", "% memcpy", "ok"))
    for r in rows:
        print("%-24s %10.3f %10.1f %8.1f %4s" % (r["row"], r["ms"], r["GB/s"], r["%"],
                                                  "ok" if r["ok"] else "BAD"))
    if a.json:
        Path(a.json).write_text(json.dumps({
            "rows": rows, "n": n, "where": where, "reps": a.reps,
            "machine": platform.platform(), "strided": strided.__version__}, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
