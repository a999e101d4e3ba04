"""Time strided's copies against PyTorch, CuPy, torch.compile and NumPy: the
copy suite whose rows and targets bench/README.md lists.

One process, one GPU. Sections:

* D2D (rows M, T, B, P, S, L, X, N, D): device-to-device copies of large
  views into preallocated destinations, timed with CUDA events on one stream
  (a torch stream made current, whose handle strided and CuPy are given),
  median of --reps repetitions; GB/s counts unique bytes read plus bytes
  written (a broadcast source once) and "%" is the fraction of the same run's
  1 GiB device-to-device memcpy (the faster of torch's contiguous copy_ and
  cupy.cuda.runtime.memcpyAsync). Views are made once, outside the timing.
  With --cccl, NVIDIA CCCL's cuda::experimental::copy joins as the contender
  "cccl": bench/bench_cccl.cu (built by scripts/build-cccl-bench; CCCL is no
  dependency of strided), run once after the D2D rows on every row's layouts.
* Small (Z): host microseconds per call, pipelined (2000 calls, one sync) and
  with a stream sync after each call, and device time per copy inside a CUDA
  graph; "strided+views" also makes both views in every call (the Python
  call overhead of a copy from scratch).
* Transfers (H): host<->device copies, wall time until complete, GB/s of
  destination bytes.
* CPU (C): host copies in two child processes, OMP_NUM_THREADS=1 and unset
  (strided's host executor uses OpenMP), beside numpy and torch-CPU.

Every output is compared byte for byte with a reference; a mismatch shows in
the 'ok' column and makes the exit status 1 once everything is printed (so
does a row that cannot be set up). Contenders that are not installed, or that
raise, show 'n/a'; the reasons are listed under the table.

Usage (repository root; strided built with STRIDED_BUILD_PYTHON=ON):

    PYTHONPATH=build-bench/python python bench/bench_copy.py [--json PATH]
        [--rows T,P1,C] [--reps N] [--quick] [--compile] [--no-cpu] [--no-gpu]
        [--cccl PATH]
"""

import argparse
import ctypes
import datetime
import gc
import importlib
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from benchutil import cpu_model, render

try:
    import strided
except ImportError as e:
    sys.exit("bench_copy.py: %s; install strided (pip install .) or put its "
             "build on PYTHONPATH (PYTHONPATH=build-bench/python)" % e)

SMV = strided.StridedMemoryView
MIB = 1 << 20
N = 16384
BUDGET_S = 10.0  # timing time per contender and row: slower ones get fewer reps (at least 5)
CCCL_TIMEOUT_S = 1200  # the CCCL anchor's one run over every D2D row


class Unavailable(Exception):
    """A contender that does not apply to a row, or is not installed."""


def error_text(e, limit=120):
    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
    text = "%s: %s" % (type(e).__name__, first)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def import_optional(name):
    try:
        return importlib.import_module(name), None
    except Exception as e:  # not installed, or installed without a working CUDA
        return None, error_text(e)


# Views of a row's base array.
def same(b): return b
def tr(b): return b.T
def perm(*p): return lambda b: b.permute(*p)
def np_perm(*p): return lambda b: b.transpose(p)
def reverse_axes(b): return b.permute(*range(b.ndim - 1, -1, -1))
def cycle_axes(b): return b.permute(*range(1, b.ndim), 0)
def cols(w): return lambda b: b[:, :w]
def flip(*dims): return lambda torch, t: torch.flip(t, dims)


# A target is a list of conditions on strided's result, each a tuple:
#   ("pct", f)         at least the fraction f of the memcpy ceiling
#   ("x", other, f)    at least f times as fast as contender `other`
#   ("gbs", v)         at least v GB/s
#   ("us", what, v)    at most v microseconds (what: pipe, sync or graph)
#   ("note", text)     stated, not judged here
# CPU conditions name the thread count last: ("gbs", 40, "all").
def pct(v, *t): return ("pct", v) + t
def x(other, v): return ("x", other, v)
def gbs(v, *t): return ("gbs", v) + t


@dataclass
class Row:
    """A device-to-device row."""
    id: str
    case: str
    dtype: str
    shape: tuple
    quick: tuple          # the shape with --quick
    view: object          # base -> source view (torch; with lib="cupy", of a cupy alias)
    target: list
    lib: str = "torch"
    torch_alt: object = None  # (torch, base) -> new tensor, where torch cannot hold the view
    dst: str = "C"        # "T": the destination is the .T view of a C tensor (a scatter)
    compile: bool = False  # torch.compile is a baseline of this row (--compile)
    ceil: float = None    # adjusted ceiling of a stride-2 gather, as a fraction of memcpy
    memcpy: bool = False  # also time cudaMemcpyAsync of the same bytes


SQ, SQQ, P3, P3Q = (N, N), (512, 512), (512,) * 3, (64,) * 3
ROWS = [
    Row("M1", "2^28 contiguous (1 GiB)", "float32", (1 << 28,), (1 << 22,), same, [pct(.98)],
        memcpy=True),
    Row("M2", "2^20 contiguous (L2)", "float32", (1 << 20,), (1 << 16,), same,
        [x("memcpy", 1)], memcpy=True),
    Row("M2", "2^24 contiguous (L2)", "float32", (1 << 24,), (1 << 18,), same,
        [x("memcpy", 1)], memcpy=True),
    Row("T1", "16384^2 .T -> C", "float32", SQ, SQQ, tr, [pct(.9), x("torch", 3)], compile=True),
    Row("T2", "16384^2 .T -> C", "float16", SQ, SQQ, tr, [pct(.85), x("torch", 5)], compile=True),
    Row("T2", "16384^2 .T -> C", "bfloat16", SQ, SQQ, tr, [pct(.85), x("torch", 5)],
        compile=True),
    Row("T3", "32768x16384 .T -> C", "int8", (2 * N, N), (1024, 512), tr,
        [pct(.7), x("torch", 8)], compile=True),
    Row("T4", "8192^2 .T -> C", "float64", (8192, 8192), (256, 256), tr, [pct(.9)]),
    Row("T5", "262144x256 .T -> C", "float32", (262144, 256), (8192, 64), tr, [pct(.85)],
        compile=True),
    Row("T5", "256x262144 .T -> C", "float32", (256, 262144), (64, 8192), tr, [pct(.85)],
        compile=True),
    Row("T6", "16383x16385 .T -> C", "float32", (N - 1, N + 1), (511, 513), tr, [pct(.85)]),
    Row("B1", "(64,2048,1024) (0,2,1)", "float32", (64, 2048, 1024), (4, 128, 64),
        perm(0, 2, 1), [pct(.92)]),
    Row("P1", "512^3 (1,0,2)", "float32", P3, P3Q, perm(1, 0, 2), [pct(.9)]),
    Row("P2", "512^3 (2,1,0)", "float32", P3, P3Q, perm(2, 1, 0), [pct(.85)], compile=True),
    Row("P3", "512^3 (1,2,0)", "float32", P3, P3Q, perm(1, 2, 0), [pct(.85)], compile=True),
    Row("P3", "512^3 (2,0,1)", "float32", P3, P3Q, perm(2, 0, 1), [pct(.85)], compile=True),
    Row("P4", "(64,256,56,56) NCHW->NHWC", "float16", (64, 256, 56, 56), (2, 32, 14, 14),
        perm(0, 2, 3, 1), [pct(.8)], compile=True),
    Row("P5", "(64,56,56,256) NHWC->NCHW", "float16", (64, 56, 56, 256), (2, 14, 14, 32),
        perm(0, 3, 1, 2), [pct(.8)]),
    Row("P6", "(8,4096,32,128) BSHD->BHSD", "bfloat16", (8, 4096, 32, 128), (2, 64, 8, 32),
        perm(0, 2, 1, 3), [pct(.9)]),
    Row("P7", "(16,16,32,32,32,32) (5,0,4,1,3,2)", "float32", (16, 16, 32, 32, 32, 32),
        (2, 2, 4, 4, 4, 4), perm(5, 0, 4, 1, 3, 2), [pct(.8), x("torch", 8)], compile=True),
    Row("P8", "2^24 as 24 axes of 2, reversed", "float64", (2,) * 24, (2,) * 12, reverse_axes,
        [pct(.7)]),
    Row("P8", "3^15, axes cycled", "float64", (3,) * 15, (3,) * 8, cycle_axes, [pct(.7)]),
    Row("S1", "(2^26,3) .T (AoS->SoA)", "float32", (1 << 26, 3), (1 << 14, 3), tr, [pct(.85)],
        compile=True),
    Row("S2", "(3,2^26) .T (SoA->AoS)", "float32", (3, 1 << 26), (3, 1 << 14), tr, [pct(.85)],
        compile=True),
    Row("S3", "(2^25,4) .T", "uint8", (1 << 25, 4), (1 << 14, 4), tr, [pct(.7)]),
    Row("S3", "(2^24,3) .T", "float16", (1 << 24, 3), (1 << 14, 3), tr, [pct(.7)]),
    Row("L1", "16384^2 [:, :8192]", "float32", SQ, SQQ, lambda b: b[:, :b.shape[1] // 2],
        [pct(.9)]),
    Row("L2", "16384^2 [:, 1:-1]", "float32", SQ, SQQ, lambda b: b[:, 1:-1], [pct(.85)]),
    Row("L3", "16384^2 [:, ::2]", "float32", SQ, SQQ, lambda b: b[:, ::2], [pct(.6)],
        ceil=2 / 3),
    Row("L4", "16384^2 [::2, ::2].T", "float32", SQ, SQQ, lambda b: b[::2, ::2].T, [pct(.5)],
        ceil=2 / 3),
    Row("X1", "(1,16384) expand (16384,16384)", "float32", (1, N), (1, 512),
        lambda b: b.expand(b.shape[1], b.shape[1]), [pct(.85)], compile=True),
    Row("X2", "(16384,1) expand (16384,16384)", "float32", (N, 1), (512, 1),
        lambda b: b.expand(b.shape[0], b.shape[0]), [pct(.85)]),
    Row("N1", "16384^2 [:, ::-1]", "float32", SQ, SQQ, lambda c: c[:, ::-1], [pct(.9)],
        lib="cupy", torch_alt=flip(1)),
    Row("N1", "16384^2 [::-1, :]", "float32", SQ, SQQ, lambda c: c[::-1, :], [pct(.9)],
        lib="cupy", torch_alt=flip(0)),
    Row("N2", "16384^2 [::-1, ::-1].T", "float32", SQ, SQQ, lambda c: c[::-1, ::-1].T,
        [pct(.85)], lib="cupy"),
    Row("D1", "8192^2 C -> .T view of dst (scatter)", "float32", (8192, 8192), (256, 256),
        same, [pct(.9)], dst="T"),
]


class ZRow(NamedTuple):
    """A small-copy row, float32."""
    id: str
    case: str
    shape: tuple
    view: object
    target: list


ZROWS = [
    ZRow("Z1", "32x32 .T -> C", (32, 32), tr, [("us", "graph", 2.0)]),
    ZRow("Z1", "256x256 .T -> C", (256, 256), tr, [("us", "graph", 2.0)]),
    ZRow("Z1", "1024^2 .T -> C", (1024, 1024), tr, [("us", "graph", 2.0)]),
    ZRow("Z2", "4 KiB contiguous", (1024,), same,
         [("note", "host <=2 us/call from C (not timed here)")]),
]


class HRow(NamedTuple):
    """A host<->device row (float32 unless dtype says otherwise)."""
    id: str
    case: str
    d2h: bool         # the view is of device memory, the destination in host memory
    shape: tuple
    quick: tuple
    view: object
    pinned: bool      # the host side is pinned (torch pin_memory=True), else pageable
    baseline: str     # "memcpy", "memcpy2D", "device-only" or None
    target: list
    dtype: str = "float32"


def h4(row_bytes, what, pinned):
    """Rows of row_bytes out of a 16384^2 fp32 host array -> dense device."""
    w = row_bytes // 4
    return HRow("H4", "16384^2 host [:, :%d] (%s rows), %s"
                % (w, what, "pinned" if pinned else "pageable"), False, SQ, (64, N), cols(w),
                pinned, "memcpy2D", [x("memcpy2D", 1)])


HROWS = [
    HRow("H1", "2^28 contiguous, pinned", False, (1 << 28,), (1 << 20,), same, True, "memcpy",
         [x("memcpy", .97)]),
    HRow("H2", "2^28 contiguous, pageable", False, (1 << 28,), (1 << 20,), same, False, "memcpy",
         [gbs(40)]),
    HRow("H3", "8192^2 host .T -> C, pageable", False, (8192, 8192), SQQ, tr, False, None,
         [gbs(45), x("torch", 50)]),
    HRow("H3", "8192^2 host .T -> C, pinned", False, (8192, 8192), SQQ, tr, True, None,
         [gbs(45), x("torch", 50)]),
    h4(64, "64 B", True), h4(512, "512 B", True), h4(4096, "4 KiB", True),
    h4(32768, "32 KiB", True), h4(4096, "4 KiB", False),
    HRow("H5", "8192^2 device .T -> C host, pageable", True, (8192, 8192), SQQ, tr, False, None,
         [gbs(30)]),
    HRow("H5", "8192^2 device .T -> C host, pinned", True, (8192, 8192), SQQ, tr, True, None,
         [gbs(45)]),
    HRow("H6", "(1,16384) host expand -> (16384,16384)", False, (1, N), (1, 512),
         lambda b: b.expand(b.shape[1], b.shape[1]), False, "device-only",
         [x("device-only", .8)]),
    # A batch of 256 RGB 224x224 images, NHWC in pageable host memory (as a
    # decoder leaves them), to NCHW on the device: the NHWC tensor's
    # (0, 3, 1, 2) permutation copied into a dense NCHW one.
    HRow("H7", "(256,224,224,3) u8 host NHWC -> NCHW, pageable", False, (256, 224, 224, 3),
         (4, 224, 224, 3), lambda b: b.permute(0, 3, 1, 2), False, None, [gbs(40)], "uint8"),
]


class CRow(NamedTuple):
    """A CPU row, float32 numpy arrays."""
    id: str
    case: str
    shape: tuple
    quick: tuple
    view: object
    target: list
    torch_alt: object = None


CROWS = [
    CRow("C0", "2^28 contiguous (host memcpy)", (1 << 28,), (1 << 22,), same, []),
    CRow("C1", "8192^2 .T -> C", (8192, 8192), (1024, 1024), tr, [gbs(40, "all"), gbs(4, "1")]),
    CRow("C2", "400^3 (2,1,0)", (400,) * 3, P3Q, np_perm(2, 1, 0), [pct(.5, "all")]),
    CRow("C2", "400^3 (0,2,1)", (400,) * 3, P3Q, np_perm(0, 2, 1), [pct(.5, "all")]),
    CRow("C2", "400^3 (1,0,2)", (400,) * 3, P3Q, np_perm(1, 0, 2), [pct(.5, "all")]),
    CRow("C3", "(2^24,3) .T (AoS->SoA)", (1 << 24, 3), (1 << 16, 3), tr, [gbs(20, "all")]),
    CRow("C4", "8192^2 [:, ::2]", (8192, 8192), (1024, 1024), lambda b: b[:, ::2],
         [gbs(50, "all")]),
    CRow("C4", "8192^2 [:, ::-1]", (8192, 8192), (1024, 1024), lambda b: b[:, ::-1],
         [gbs(50, "all")], flip(1)),
]


def target_text(conds):
    parts = []
    for c in conds:
        k, rest = c[0], c[1:]
        if k == "note":
            parts.append(rest[0])
        elif k in ("pct", "gbs"):
            t = ">=%g%%" % round(100 * rest[0], 1) if k == "pct" else ">=%g GB/s" % rest[0]
            parts.append(t + (" (%s thr)" % rest[1] if len(rest) > 1 else ""))
        elif k == "x":
            parts.append(">=%gx %s" % (rest[1], rest[0]))
        else:
            parts.append("%s <=%g us" % rest)
    return "; ".join(parts)


def judge(c, res):
    """Whether strided's result in res (contender -> result) meets condition c:
    True, False, or None when it cannot be judged."""
    s = res.get("strided") or {}
    if c[0] == "note":
        return None
    if s.get("status") != "ok":
        return False
    if c[0] == "pct":
        return s.get("pct") is not None and s["pct"] >= 100 * c[1]
    if c[0] == "gbs":
        return s["gbs"] >= c[1]
    if c[0] == "us":
        v = s.get(c[1] + "_us")
        return None if v is None else v <= c[2]
    other = res.get(c[1]) or {}
    return other["ms"] / s["ms"] >= c[2] if other.get("status") == "ok" else None


def verdict(conds, judged):
    v = [judged(c) for c in conds]
    if not v or False in v:
        return False if v else None
    return None if None in v else True


def yes_no(v):
    return "-" if v is None else ("yes" if v else "no")


def unique_bytes(shape, strides, itemsize):
    """Bytes of the distinct elements of a view: axes of stride 0 count once."""
    if 0 in shape:
        return 0
    return math.prod(e for e, s in zip(shape, strides) if s != 0) * itemsize


def plan_kernel(dst_view, src_view):
    try:
        return strided.copy_plan(dst_view, src_view)["kernel"]
    except Exception as e:
        return "n/a (%s)" % error_text(e, 60)


def na(e):
    return {"status": "n/a", "reason": str(e) if isinstance(e, Unavailable) else error_text(e)}


def selected(row_id, prefixes):
    return not prefixes or any(row_id.startswith(p) for p in prefixes)


def wall_median(fn, reps, warm=1):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3  # ms


def run_contenders(makers, out, ref, reset, same, sync, timer, nbytes, reps):
    """contender -> result. Each maker returns (fn, fresh): fresh means fn returns a
    new array to check, else fn writes into out. A maker or first call that raises
    makes the contender n/a; otherwise the first call's output is checked against
    ref and timer(fn, n) gives the ms of n reps (fewer than reps when slow)."""
    def once(fn):
        t0 = time.perf_counter()
        r = fn()
        sync()
        return r, time.perf_counter() - t0

    res = {}
    for name, make in makers.items():
        try:
            fn, fresh = make()
            if not fresh:
                reset(out)
            r, t = once(fn)
            ok = same(r if fresh else out, ref)
            del r
            if t > 1.0:  # slow, or the first call compiled: look at a second one
                t = min(t, once(fn)[1])
            n = min(reps, max(5, int(BUDGET_S / t)))
            ms = timer(fn, n)
        except Exception as e:
            res[name] = na(e)
            continue
        res[name] = {"status": "ok", "ms": ms, "gbs": nbytes / ms / 1e6, "ok": ok, "reps": n}
    return res


def finish(result, conds):
    """strided's speed-ups, the target and the verification summary of a row."""
    res = result["results"]
    s = res.get("strided", {})
    result["speedup"] = {n: (r["ms"] / s["ms"] if s.get("status") == "ok" else None)
                         for n, r in res.items() if n != "strided" and r["status"] == "ok"}
    result["target"] = target_text(conds)
    result["target_conditions"] = conds
    result["met"] = verdict(conds, lambda c: judge(c, res))
    result["mismatch"] = [n for n, r in res.items() if r.get("ok") is False]
    return result


def cuda_device_count():
    """CUDA devices the driver sees (0 without a driver), asked without torch."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


class Gpu:
    """torch, cupy, and the one stream every GPU contender runs on."""

    def __init__(self):
        torch, why = import_optional("torch")
        if torch is None:
            raise Unavailable("torch not importable (%s)" % why)
        if not torch.cuda.is_available():
            raise Unavailable("torch.cuda.is_available() is False")
        self.torch = torch
        self.stream = torch.cuda.Stream()
        torch.cuda.set_stream(self.stream)
        self.h = self.stream.cuda_stream
        self.cupy, self.cupy_why = import_optional("cupy")
        if self.cupy is not None:
            try:
                self.cupy.cuda.Device(torch.cuda.current_device()).use()
                self.cupy_stream = self.cupy.cuda.ExternalStream(self.h)
                self.cupy_stream.use()
            except Exception as e:
                self.cupy, self.cupy_why = None, error_text(e)

    def need_cupy(self):
        if self.cupy is None:
            raise Unavailable("cupy: %s" % self.cupy_why)
        return self.cupy

    def sync(self):
        self.stream.synchronize()

    def rand(self, shape, dtype):
        """Random bits; floating types keep the top exponent bit clear (finite)."""
        torch = self.torch
        n, isz = math.prod(shape), dtype.itemsize
        if dtype.is_floating_point:
            idt = {2: torch.int16, 4: torch.int32, 8: torch.int64}[isz]
            bits = torch.randint(0, 1 << (8 * isz - 2), (n,), dtype=idt, device="cuda")
        else:
            bits = torch.randint(0, 256, (n * isz,), dtype=torch.uint8, device="cuda")
        return bits.view(dtype).view(shape)

    def same(self, a, b):
        torch = self.torch
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype or a.device != b.device:
            return False
        return bool(torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)))

    def time_events(self, fn, reps, warm=2):
        """Median ms of fn between CUDA events on the stream."""
        E = self.torch.cuda.Event
        for _ in range(warm):
            fn()
        ev = [(E(enable_timing=True), E(enable_timing=True)) for _ in range(reps)]
        for a, b in ev:
            a.record()
            fn()
            b.record()
        self.sync()
        return statistics.median(a.elapsed_time(b) for a, b in ev)

    def free(self):
        gc.collect()
        self.torch.cuda.empty_cache()
        if self.cupy is not None:
            self.cupy.get_default_memory_pool().free_all_blocks()

    def info(self):
        torch = self.torch
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        info = {"gpu": p.name, "gpu_memory_gib": round(p.total_memory / 2**30, 1),
                "sm_count": p.multi_processor_count, "torch_cuda": torch.version.cuda,
                "driver": None}
        try:
            rt = self.need_cupy().cuda.runtime
            info["cuda_driver_api"], info["cuda_runtime"] = (rt.driverGetVersion(),
                                                             rt.runtimeGetVersion())
        except Exception:
            pass
        try:
            smi = subprocess.run(["nvidia-smi", "--format=csv,noheader", "--query-gpu="
                                  "driver_version,pcie.link.gen.max,pcie.link.width.max"],
                                 capture_output=True, text=True, timeout=20).stdout
            info["driver"], info["pcie_gen"], info["pcie_width"] = \
                [v.strip() for v in smi.splitlines()[0].split(",")]
        except Exception:
            pass
        return info


def warm_and_ceiling(g, args):
    """Warm the GPU for ~1.5 s, then time a contiguous copy of 1 GiB (64 MiB with
    --quick) with torch and with cudaMemcpyAsync; the faster is the ceiling."""
    torch = g.torch
    n = (64 if args.quick else 1024) * MIB
    a = torch.ones(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < (0.2 if args.quick else 1.5):
        for _ in range(10):
            b.copy_(a)
        g.sync()
    c = {"bytes": 2 * n, "cupy_memcpy_gbs": None,
         "torch_copy_gbs": 2 * n / g.time_events(lambda: b.copy_(a), args.reps) / 1e6}
    try:
        rt = g.need_cupy().cuda.runtime
        c["cupy_memcpy_gbs"] = 2 * n / g.time_events(lambda: rt.memcpyAsync(
            b.data_ptr(), a.data_ptr(), n, rt.memcpyDeviceToDevice, g.h), args.reps) / 1e6
    except Exception as e:
        c["cupy_memcpy_reason"] = error_text(e)
    c["gbs"] = max(c["torch_copy_gbs"], c["cupy_memcpy_gbs"] or 0)
    return c


def d2d_row(g, row, args, ceiling):
    torch, h = g.torch, g.h
    dt = getattr(torch, row.dtype)
    isz = dt.itemsize
    base = g.rand(row.quick if args.quick else row.shape, dt)
    if row.lib == "cupy":
        cupy = g.need_cupy()
        src = row.view(cupy.from_dlpack(base))
        ref = torch.from_dlpack(cupy.ascontiguousarray(src))
        src_bytes = unique_bytes(src.shape, src.strides, isz)
    else:
        src = row.view(base)
        ref = src.contiguous()
        src_bytes = unique_bytes(src.shape, src.stride(), isz)
    if row.dst == "T":
        out = torch.empty(tuple(reversed(ref.shape)), dtype=dt, device="cuda")
        dst, ref = out.T, ref.T.contiguous()
    else:
        out = dst = torch.empty(tuple(ref.shape), dtype=dt, device="cuda")
    nbytes = src_bytes + out.numel() * isz
    # The copy as the CCCL anchor is given it: the views' shape and strides, in elements.
    src_strides = ([s // isz for s in src.strides] if row.lib == "cupy"
                   else list(src.stride()))
    layout = {"itemsize": isz, "shape": list(dst.shape), "src_strides": src_strides,
              "dst_strides": list(dst.stride())}
    result = {"id": row.id, "case": row.case, "dtype": row.dtype, "shape": list(base.shape),
              "bytes": nbytes, "kernel": None, "layout": layout}

    def m_strided():
        # CuPy 14's DLPack export mangles negative strides: take cupy views through
        # the CUDA Array Interface.
        sv = (SMV.from_cuda_array_interface(src, stream_ptr=h) if row.lib == "cupy"
              else SMV.from_dlpack(src, stream_ptr=h))
        dv = SMV.from_dlpack(dst, stream_ptr=h)
        result["kernel"] = plan_kernel(dv, sv)
        return (lambda: dv.copy_from(sv, stream=h, blocking=False)), False

    def m_torch():
        if row.lib != "cupy":
            return (lambda: dst.copy_(src)), False
        if row.torch_alt is None:
            raise Unavailable("torch cannot hold negative strides")
        return (lambda: row.torch_alt(torch, base)), True

    def m_cupy():
        cupy = g.need_cupy()
        cs = src if row.lib == "cupy" else cupy.from_dlpack(src)
        cd = cupy.from_dlpack(dst)
        return (lambda: cupy.copyto(cd, cs)), False

    def m_compile():
        torch._dynamo.reset()  # a fresh cache per row: no recompile limit, no dynamic shapes
        fn = torch.compile(lambda v: v.clone(memory_format=torch.contiguous_format),
                           fullgraph=True, dynamic=False)
        return (lambda: fn(src)), True

    def m_memcpy():
        rt = g.need_cupy().cuda.runtime
        return (lambda: rt.memcpyAsync(out.data_ptr(), src.data_ptr(), out.numel() * isz,
                                       rt.memcpyDeviceToDevice, h)), False

    makers = {"strided": m_strided, "torch": m_torch, "cupy": m_cupy}
    if args.compile and row.compile:
        makers["compile"] = m_compile
    if row.memcpy:
        makers["memcpy"] = m_memcpy
    result["results"] = run_contenders(makers, out, ref, lambda t: t.zero_(), g.same, g.sync,
                                       g.time_events, nbytes, args.reps)
    for r in result["results"].values():
        d2d_pct(r, ceiling, row)
    return finish(result, row.target)


def d2d_pct(r, ceiling, row):
    """A D2D result's % of the ceiling (and of the adjusted one, on rows that have it)."""
    if r["status"] == "ok":
        r["pct"] = 100 * r["gbs"] / ceiling
        if row.ceil:
            r["pct_adj"] = r["pct"] / row.ceil


def cccl_cases(results):
    """bench_cccl's input: a line per D2D row that was set up, `id itemsize ndim shape
    src_strides dst_strides` (elements), the row's index in results as the id (row IDs
    repeat)."""
    lines = []
    for i, r in enumerate(results):
        c = r.get("layout")
        if c is None or "results" not in r:
            continue
        lines.append(" ".join(str(v) for v in [i, c["itemsize"], len(c["shape"])] + c["shape"]
                              + c["src_strides"] + c["dst_strides"]))
    return "".join(line + "\n" for line in lines)


def parse_cccl(text):
    """bench_cccl's output: (about, cases). about: its '#' lines (the CCCL version and
    commit); cases: id -> (median ms or None, status), status 'ok', 'BAD', or the reason
    it did not run ('unsupported: ...', 'error: ...'). A line it cannot read raises."""
    about, cases = [], {}
    for line in text.splitlines():
        if line.startswith("#"):
            about.append(line[1:].strip())
            continue
        if not line.strip():
            continue
        parts = line.split(None, 2)
        if len(parts) != 3:
            raise ValueError("bench_cccl printed %r" % line[:80])
        cid, ms, status = parts
        kind, colon, why = status.partition(":")
        if status not in ("ok", "BAD") and not colon:
            raise ValueError("bench_cccl printed %r" % line[:80])
        cases[cid] = (None if ms == "-" else float(ms),
                      status if not colon else "%s: %s" % (kind, why.strip()))
    return "; ".join(about), cases


def run_cccl(path, results, reps):
    """One run of bench_cccl over the D2D rows: (about, cases) as parse_cccl gives, and
    why the cases without a line have none (None when it exited normally)."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise Unavailable("%s is not an executable file" % path)
    with tempfile.TemporaryDirectory() as tmp:
        cases = Path(tmp) / "cases.txt"
        cases.write_text(cccl_cases(results))
        try:
            p = subprocess.run([path, str(cases), str(reps)], capture_output=True, text=True,
                               timeout=CCCL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Unavailable("bench_cccl ran past %d s" % CCCL_TIMEOUT_S) from None
    about, got = parse_cccl(p.stdout)
    stopped = None
    if p.returncode != 0:
        err = p.stderr.strip().splitlines()
        stopped = "bench_cccl exited with %d%s" % (p.returncode,
                                                   ": " + err[-1][:120] if err else "")
        if not got:
            raise Unavailable(stopped)
    return about, got, stopped


def cccl_anchor(args, rows, data, ceiling):
    """Adds the contender "cccl" to every D2D row that was set up (rows: the Row of each
    entry of data["d2d"]): one run of bench_cccl, --reps copies per row. A failure of
    the whole run makes the anchor n/a on every row, with the reason."""
    info = data["cccl"] = {"program": args.cccl, "reps": args.reps}
    t0 = time.perf_counter()
    try:
        about, got, stopped = run_cccl(args.cccl, data["d2d"], args.reps)
        info.update(status="ok", about=about, stopped=stopped)
    except Exception as e:
        got, stopped = {}, "anchor unavailable: %s" % na(e)["reason"]
        info.update(status="unavailable", reason=na(e)["reason"])
    info["wall_s"] = time.perf_counter() - t0
    for i, (result, row) in enumerate(zip(data["d2d"], rows)):
        if "results" not in result or "layout" not in result:
            continue
        ms, status = got.get(str(i), (None, stopped or "bench_cccl printed no line for it"))
        if status == "BAD":
            # An anchor that copies wrong bytes has no time to compare with;
            # reported, but not a failure of this benchmark.
            r = {"status": "n/a", "reason": "CCCL's copy wrote wrong bytes (checked against "
                 "bench_cccl's reference kernel)"}
        elif status != "ok":
            r = {"status": "n/a", "reason": status}
        elif not ms:
            r = {"status": "n/a", "reason": "bench_cccl printed no time"}
        else:
            r = {"status": "ok", "ms": ms, "gbs": result["bytes"] / ms / 1e6, "ok": True,
                 "reps": args.reps}
            d2d_pct(r, ceiling, row)
        result["results"]["cccl"] = r
        finish(result, row.target)
    print("  cccl anchor: %s, %.1f s" % (info["status"], info["wall_s"]), file=sys.stderr,
          flush=True)


def small_row(g, row, args):
    """Host us per call, pipelined and synced, and device us per copy in a graph."""
    torch, h = g.torch, g.h
    n_calls, k_graph = (200, 10) if args.quick else (2000, 100)
    base = g.rand(row.shape, torch.float32)
    src = row.view(base)
    ref = src.contiguous()
    out = torch.empty_like(ref)
    result = {"id": row.id, "case": row.case, "dtype": "float32", "shape": list(row.shape),
              "bytes": 2 * out.numel() * 4, "kernel": None}

    # Each maker returns (eager fn, fn(stream handle) for graph capture or None).
    def m_strided():
        sv, dv = SMV.from_dlpack(src, stream_ptr=h), SMV.from_dlpack(out, stream_ptr=h)
        result["kernel"] = plan_kernel(dv, sv)
        return (lambda: dv.copy_from(sv, stream=h, blocking=False),
                lambda hh: dv.copy_from(sv, stream=hh, blocking=False))

    def m_views():
        return (lambda: SMV.from_dlpack(out, stream_ptr=h).copy_from(
            SMV.from_dlpack(src, stream_ptr=h), stream=h, blocking=False)), None

    def m_torch():
        return (lambda: out.copy_(src)), (lambda hh: out.copy_(src))

    def m_cupy():
        cupy = g.need_cupy()
        cs, cd = cupy.from_dlpack(src), cupy.from_dlpack(out)

        def on(hh):
            with cupy.cuda.ExternalStream(hh):
                cupy.copyto(cd, cs)
        return (lambda: cupy.copyto(cd, cs)), on

    def host_us(fn, sync_each):
        rounds = []
        for _ in range(3):
            g.sync()
            t0 = time.perf_counter()
            for _ in range(n_calls):
                fn()
                if sync_each:
                    g.sync()
            g.sync()
            rounds.append((time.perf_counter() - t0) / n_calls * 1e6)
        return statistics.median(rounds)

    def graph_us(on):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            hh = torch.cuda.current_stream().cuda_stream
            for _ in range(k_graph):
                on(hh)
        out.zero_()
        graph.replay()
        g.sync()
        if not g.same(out, ref):
            raise RuntimeError("the graph's output differs from the reference")
        return g.time_events(graph.replay, args.reps) * 1e3 / k_graph

    res = result["results"] = {}
    for name, make in (("strided", m_strided), ("strided+views", m_views),
                       ("torch", m_torch), ("cupy", m_cupy)):
        try:
            eager, on = make()
            out.zero_()
            eager()
            g.sync()
            r = {"status": "ok", "ok": g.same(out, ref)}
            for _ in range(100):
                eager()
            r["pipe_us"], r["sync_us"] = host_us(eager, False), host_us(eager, True)
        except Exception as e:
            res[name] = na(e)
            continue
        r["ms"], r["graph_us"] = r["pipe_us"] / 1e3, None
        if on is None:
            r["graph_reason"] = "same kernel as strided"
        else:
            try:
                r["graph_us"] = graph_us(on)
            except Exception as e:
                # A failure inside the capture surfaces again when it ends: keep both.
                r["graph_reason"] = error_text(e) + ("; during capture: %s" % error_text(
                    e.__context__) if e.__context__ is not None else "")
                try:  # a failed capture leaves nothing queued; an error here would stick
                    torch.cuda.synchronize()
                except Exception as e2:
                    r["graph_reason"] += "; then %s" % error_text(e2)
        res[name] = r
    result["sync_alone_us"] = host_us(lambda: None, True)
    return finish(result, row.target)


def transfer_row(g, row, args):
    """Wall ms until complete; GB/s of destination bytes."""
    torch, h = g.torch, g.h
    shape = row.quick if args.quick else row.shape
    dtype = getattr(torch, row.dtype)
    dev = g.rand(shape, dtype)
    if row.d2h:
        src = row.view(dev)
        ref = src.contiguous().cpu()
        out = torch.empty(tuple(ref.shape), dtype=dtype, pin_memory=row.pinned)
    else:
        host = torch.empty(shape, dtype=dtype, pin_memory=row.pinned)
        host.copy_(dev)
        src, ref = row.view(host), row.view(dev).contiguous()
        out = torch.empty(tuple(ref.shape), dtype=dtype, device="cuda")
    g.sync()
    nbytes = out.numel() * out.element_size()
    result = {"id": row.id, "case": row.case, "dtype": row.dtype, "shape": list(shape),
              "bytes": nbytes, "pinned": row.pinned, "kernel": None}

    def view(t):
        return SMV.from_dlpack(t, stream_ptr=h if t.is_cuda else -1)

    def m_strided():
        sv, dv = view(src), view(out)
        result["kernel"] = plan_kernel(dv, sv)
        return (lambda: dv.copy_from(sv, stream=h, blocking=True)), False

    def m_torch():
        return (lambda: (out.copy_(src), g.sync())), False

    def m_baseline():
        if row.baseline == "device-only":  # the same broadcast with the source on the device
            sv, dv = view(row.view(dev)), view(out)
            return (lambda: (dv.copy_from(sv, stream=h, blocking=False), g.sync())), False
        rt = g.need_cupy().cuda.runtime
        if row.baseline == "memcpy":
            return (lambda: (rt.memcpyAsync(out.data_ptr(), src.data_ptr(), nbytes,
                                            rt.memcpyHostToDevice, h), g.sync())), False
        w, pitch = src.shape[1] * 4, src.stride(0) * 4
        return (lambda: (rt.memcpy2DAsync(out.data_ptr(), w, src.data_ptr(), pitch, w,
                                          src.shape[0], rt.memcpyHostToDevice, h),
                         g.sync())), False

    makers = {"strided": m_strided, "torch": m_torch}
    if row.baseline:
        makers[row.baseline] = m_baseline
    result["results"] = run_contenders(makers, out, ref, lambda t: t.zero_(), g.same, g.sync,
                                       wall_median, nbytes, args.reps)
    return finish(result, row.target)


def gpu_sections(args, prefixes, data):
    todo = [(key, [r for r in rows if selected(r.id, prefixes)], run)
            for key, rows, run in (("d2d", ROWS, d2d_row), ("small", ZROWS, small_row),
                                   ("transfer", HROWS, transfer_row))]
    if not any(rows for _, rows, _ in todo):
        return
    if args.no_gpu:
        data["gpu_skipped"] = "skipped: --no-gpu"
        return
    if cuda_device_count() == 0:
        data["gpu_skipped"] = "skipped: no CUDA device"
        return
    try:
        g = Gpu()
    except Unavailable as e:
        data["gpu_skipped"] = "skipped: %s" % e
        return
    data["machine"].update(g.info())
    c = data["ceiling"] = warm_and_ceiling(g, args)
    print("  ceiling %.0f GB/s" % c["gbs"], file=sys.stderr, flush=True)
    for key, rows, run in todo:
        data[key] = []
        for row in rows:
            t0 = time.perf_counter()
            try:
                data[key].append(run(g, row, args, c["gbs"]) if key == "d2d"
                                 else run(g, row, args))
            except Unavailable as e:  # a row that needs a library that is missing
                data[key].append({"id": row.id, "case": row.case, "skipped": str(e)})
            except Exception as e:
                data[key].append({"id": row.id, "case": row.case, "error": error_text(e, 300)})
            g.free()
            print("  %-3s %-42s %5.1f s" % (row.id, row.case, time.perf_counter() - t0),
                  file=sys.stderr, flush=True)
        if key == "d2d" and args.cccl and rows:
            cccl_anchor(args, rows, data, c["gbs"])


def host_pattern(shape):
    """Distinct-looking finite float32 values: a multiplicative hash of the index."""
    a = np.arange(math.prod(shape), dtype=np.uint32)
    a *= np.uint32(2654435761)
    a >>= np.uint32(2)
    return a.view(np.float32).reshape(shape)


def cpu_row(row, threads, torch, torch_why, args):
    base = host_pattern(row.quick if args.quick else row.shape)
    src = row.view(base)
    ref = np.ascontiguousarray(src)
    out = np.empty(ref.shape, np.float32)
    nbytes = unique_bytes(src.shape, src.strides, 4) + out.nbytes
    result = {"id": row.id, "case": row.case, "dtype": "float32", "shape": list(base.shape),
              "bytes": nbytes, "kernel": None}

    def m_strided():
        sv, dv = SMV.from_dlpack(src, stream_ptr=-1), SMV.from_dlpack(out, stream_ptr=-1)
        result["kernel"] = plan_kernel(dv, sv)
        return (lambda: dv.copy_from(sv)), False

    def m_torch():
        if torch is None:
            raise Unavailable("torch not importable (%s)" % torch_why)
        if row.torch_alt is not None:
            tb = torch.from_numpy(base)
            return (lambda: row.torch_alt(torch, tb).numpy()), True
        ts, td = torch.from_numpy(src), torch.from_numpy(out)
        return (lambda: td.copy_(ts)), False

    makers = {"strided": m_strided, "torch": m_torch}
    if threads == "1":  # numpy is single-threaded: timed once, in the 1-thread child
        makers["numpy"] = lambda: ((lambda: np.copyto(out, src)), False)
    result["results"] = run_contenders(
        makers, out, ref, lambda a: a.fill(0),
        lambda a, b: a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8)),
        lambda: None, lambda fn, n: wall_median(fn, n, warm=0), nbytes, max(5, args.reps // 3))
    return result


def cpu_rows(prefixes):
    return [r for r in CROWS if r.id == "C0" or selected(r.id, prefixes)]


def cpu_child(args, prefixes):
    """The CPU rows at one thread count; prints JSON on stdout."""
    threads = args.cpu_child
    torch, why = import_optional("torch")
    if torch is not None:
        torch.set_num_threads(1 if threads == "1" else len(os.sched_getaffinity(0)))
    rows = []
    for row in cpu_rows(prefixes):
        try:
            rows.append(cpu_row(row, threads, torch, why, args))
        except Exception as e:
            rows.append({"id": row.id, "case": row.case, "error": error_text(e, 300)})
        print("  %-3s %-42s %s thr" % (row.id, row.case, threads), file=sys.stderr, flush=True)
    json.dump({"omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
               "torch_threads": torch.get_num_threads() if torch is not None else None,
               "rows": rows}, sys.stdout)


def cpu_section(args, prefixes, data):
    if not any(selected(r.id, prefixes) for r in CROWS):
        return
    if args.no_cpu:
        data["cpu_skipped"] = "skipped: --no-cpu"
        return
    child = {}
    for t in ("1", "all"):
        env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
        if t == "1":
            env["OMP_NUM_THREADS"] = "1"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--cpu-child", t,
               "--reps", str(args.reps)] + ["--quick"] * args.quick
        p = subprocess.run(cmd + (["--rows", args.rows] if args.rows else []), env=env,
                           stdout=subprocess.PIPE, text=True)
        if p.returncode != 0:
            data["errors"].append("ERROR CPU rows: the %s-thread child exited with %d"
                                  % (t, p.returncode))
            return
        child[t] = json.loads(p.stdout)
    ceil = {}
    for t, who in (("1", "numpy"), ("all", "strided")):
        r = child[t]["rows"][0].get("results", {}).get(who, {})
        ceil[t] = r.get("gbs") if r.get("status") == "ok" else None
    data["cpu_ceiling"] = dict(ceil, what="1: numpy's C0 copy; all: strided's, all threads")
    data["cpu_threads"] = {t: {k: v for k, v in c.items() if k != "rows"}
                           for t, c in child.items()}
    data["cpu"] = []
    for r1, ra, spec in zip(child["1"]["rows"], child["all"]["rows"], cpu_rows(prefixes)):
        if "error" in r1 or "error" in ra:
            data["cpu"].append(r1 if "error" in r1 else ra)
            continue
        res = {"1": r1["results"], "all": ra["results"]}
        row = dict(r1, results=res, speedup_vs_numpy={}, target=target_text(spec.target),
                   target_conditions=spec.target)
        numpy_r = r1["results"].get("numpy", {})
        for t in res:
            for r in res[t].values():
                if r["status"] == "ok":
                    r["pct"] = 100 * r["gbs"] / ceil[t] if ceil[t] else None
            s = res[t].get("strided", {})
            row["speedup_vs_numpy"][t] = (numpy_r["ms"] / s["ms"] if s.get("status") == "ok"
                                          and numpy_r.get("status") == "ok" else None)
        row["met"] = verdict(spec.target, lambda c: judge(c[:-1], res[c[-1]]))
        row["mismatch"] = ["%s (%s thr)" % (n, t) for t in res for n, r in res[t].items()
                           if r.get("ok") is False]
        data["cpu"].append(row)


def f(v, spec):
    return "-" if v is None else spec % v


def ok_cell(row):
    if "results" not in row:
        return "ERROR" if "error" in row else "skipped"
    return "MISMATCH: " + ",".join(row["mismatch"]) if row["mismatch"] else "ok"


def table(rows, lead, groups, tail):
    """An aligned table: lead and tail are [(header, row -> text)]; each group is
    (name, row -> result or None, [(header, key, format)]): one result's columns,
    the first headed with the group's name."""
    head = [h for h, _ in lead]
    for name, _, cs in groups:
        head += [name + " " + cs[0][0]] + [c[0] for c in cs[1:]]
    out = [head + [h for h, _ in tail]]
    for row in rows:
        line = [fn(row) for _, fn in lead]
        for _, get, cs in groups:
            r = get(row) if "results" in row else None
            if r and r.get("status") == "ok":
                line += [f(r.get(key), spec) for _, key, spec in cs]
            else:
                line += ["n/a" if r else "-"] + ["-"] * (len(cs) - 1)
        out.append(line + [fn(row) for _, fn in tail])
    return render(out, False)


def notes(rows, results):
    """The n/a reasons and errors under a table, one line per distinct reason."""
    seen = {}
    for row in rows:
        if "results" not in row:
            why = "ERROR %s" % row["error"] if "error" in row else "skipped: %s" % row["skipped"]
            seen.setdefault(why, []).append(row["id"])
            continue
        for name, r in results(row):
            if r["status"] != "ok":
                why = "%s: n/a (%s)" % (name, r.get("reason"))
            elif r.get("graph_reason") and name != "strided+views":
                why = "%s: graph n/a (%s)" % (name, r["graph_reason"])
            else:
                continue
            ids = seen.setdefault(why, [])
            ids += [row["id"]] if row["id"] not in ids else []
    return ["  %s: %s" % (why, " ".join(ids)) for why, ids in seen.items()]


def contenders(rows, first):
    names = list(first)
    for row in rows:
        names += [n for n in row.get("results", {}) if n not in names]
    return names


def result_of(name):
    return lambda row: row["results"].get(name)


def speedup(name):
    return lambda r: f(r.get("speedup", {}).get(name), "%.2f")


LEAD = [("id", lambda r: r["id"]), ("case", lambda r: r["case"])]
MIB_COL = [("MiB", lambda r: f(r.get("bytes") and r["bytes"] / MIB, "%.0f"))]
TAIL = [("kernel", lambda r: r.get("kernel") or "-"), ("target", lambda r: r.get("target") or "-"),
        ("met", lambda r: yes_no(r.get("met"))), ("ok", ok_cell)]


def section_d2d(rows):
    cs = [("ms", "ms", "%.3f"), ("GB/s", "gbs", "%.0f"), ("%", "pct", "%.1f")]
    names = contenders(rows, ["strided", "torch", "cupy"])
    xs = [("x " + n, speedup(n)) for n in ("torch", "cupy", "cccl")
          if n != "cccl" or n in names]
    text = table(rows, LEAD + [("dtype", lambda r: r.get("dtype", "-"))] + MIB_COL,
                 [(n, result_of(n), cs) for n in names], xs + TAIL)
    adj = []
    for row in rows:
        pcts = ["%s %.1f" % (n, r["pct_adj"]) for n, r in row.get("results", {}).items()
                if "pct_adj" in r]
        if pcts:
            adj.append("  %s %s: %% of the adjusted 2/3 ceiling: %s"
                       % (row["id"], row["case"], ", ".join(pcts)))
    return text, adj + notes(rows, lambda r: r["results"].items())


def section_small(rows):
    cs = [("pipe us", "pipe_us", "%.2f"), ("sync us", "sync_us", "%.2f"),
          ("graph us", "graph_us", "%.2f")]
    names = contenders(rows, ["strided", "strided+views", "torch", "cupy"])
    text = table(rows, LEAD, [(n, result_of(n), cs) for n in names],
                 [("x torch (pipe)", speedup("torch")),
                  ("sync alone us", lambda r: f(r.get("sync_alone_us"), "%.2f"))] + TAIL)
    return text, notes(rows, lambda r: r["results"].items())


def section_transfer(rows):
    def x_baseline(r):
        return f(next((v for k, v in r.get("speedup", {}).items() if k != "torch"), None),
                 "%.2f")
    cs = [("ms", "ms", "%.3f"), ("GB/s", "gbs", "%.1f")]
    text = table(rows, LEAD + MIB_COL,
                 [(n, result_of(n), cs) for n in contenders(rows, ["strided", "torch"])],
                 [("x torch", speedup("torch")), ("x baseline", x_baseline)] + TAIL)
    return text, notes(rows, lambda r: r["results"].items())


def section_cpu(rows):
    def res(t, n):
        return lambda row: row["results"][t].get(n)
    gb, pc = ("GB/s", "gbs", "%.1f"), ("% memcpy", "pct", "%.1f")
    groups = [("numpy", res("1", "numpy"), [gb])]
    for t in ("1", "all"):
        groups += [("strided %s thr" % t, res(t, "strided"), [gb, pc]),
                   ("torch %s thr" % t, res(t, "torch"), [gb])]
    x_numpy = [("x numpy %s thr" % t, lambda r, t=t: f(r["speedup_vs_numpy"][t], "%.1f"))
               for t in ("1", "all")]
    text = table(rows, LEAD + MIB_COL, groups, x_numpy + TAIL)
    return text, notes(rows, lambda r: [("%s (%s thr)" % (n, t), v) for t in r["results"]
                                        for n, v in r["results"][t].items()])


SECTIONS = [
    ("d2d", "Device to device: ms, GB/s (unique bytes read + written), % of the ceiling; "
            "x: strided's speed-up", section_d2d),
    ("small", "Small copies: host us per call (pipelined; with a stream sync after each "
              "call), device us per copy in a CUDA graph; strided+views makes both views "
              "in every call", section_small),
    ("transfer", "Host <-> device: wall ms until complete, GB/s of destination bytes; "
                 "x baseline: strided's speed-up over the row's baseline", section_transfer),
    ("cpu", "CPU: GB/s (unique bytes read + written); numpy is single-threaded; % memcpy: "
            "of C0 (1 thr: numpy's, all thr: strided's)", section_cpu),
]


def report(data):
    m = data["machine"]
    parts = ["strided copy benchmark (the copy suite of bench/README.md), %s; CPU %s, %s cores; "
             "GPU %s, driver %s; Python %s; numpy %s, torch %s, cupy %s, cuda-core %s; "
             "%d reps%s" % (m["date"], m["cpu_model"], m["cpu_count"], m.get("gpu") or "none",
                            m.get("driver") or "-", m["python"], m["numpy"], m["torch"],
                            m["cupy"], m["cuda_core"], data["method"]["reps"],
                            "; QUICK (small sizes)" if data["method"]["quick"] else "")]
    if "gpu_skipped" in data:
        parts.append("GPU rows (D2D, Z, H): %s" % data["gpu_skipped"])
    c = data.get("ceiling")
    if c:
        parts.append("D2D ceiling (contiguous %d MiB, read + written): %.0f GB/s; torch copy_ "
                     "%.0f GB/s, cudaMemcpyAsync %s GB/s" % (
                         c["bytes"] // 2 // MIB, c["gbs"], c["torch_copy_gbs"],
                         f(c["cupy_memcpy_gbs"], "%.0f")))
    a = data.get("cccl")
    if a:
        parts.append("CCCL anchor (cuda::experimental::copy, %s): %s" % (
            a["program"], "%s; one run over the D2D rows, %.0f s%s" % (
                a["about"] or "version not printed", a["wall_s"],
                "; " + a["stopped"] if a["stopped"] else "")
            if a["status"] == "ok" else "unavailable (%s)" % a["reason"]))
    for key, title, section in SECTIONS:
        if data.get(key):
            text, lines = section(data[key])
            parts.append(title + "\n\n" + text + ("\n\n" + "\n".join(lines) if lines else ""))
    if "cpu_skipped" in data:
        parts.append("CPU rows: %s" % data["cpu_skipped"])
    bad = data["mismatches"] + data["errors"]
    if bad:
        parts.append("!!! " + "\n!!! ".join(bad))
    return "\n\n".join(parts) + "\n"


def machine_info():
    def version(*dists):
        for d in dists:
            try:
                return importlib.metadata.version(d)
            except Exception:
                pass
        return None
    return {"cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__,
            "strided": getattr(strided, "__version__", None), "strided_module": strided.__file__,
            "torch": version("torch"), "cupy": version("cupy", "cupy-cuda13x", "cupy-cuda12x"),
            "cuda_core": version("cuda-core"), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="PATH", help="write everything as JSON to PATH")
    p.add_argument("--rows", help="comma-separated row ID prefixes, e.g. T,P1,C (default: all)")
    p.add_argument("--reps", type=int, default=15,
                   help="timed repetitions per measurement (default 15); CPU rows use "
                        "max(5, reps // 3)")
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    p.add_argument("--compile", action="store_true",
                   help="add torch.compile on the rows that name it as a baseline")
    p.add_argument("--no-cpu", action="store_true", help="skip the CPU rows")
    p.add_argument("--no-gpu", action="store_true", help="skip the GPU rows")
    p.add_argument("--cccl", metavar="PATH",
                   help="bench_cccl (scripts/build-cccl-bench): add CCCL's "
                        "cuda::experimental::copy to the D2D rows as the contender cccl")
    p.add_argument("--cpu-child", choices=["1", "all"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.reps < 1:
        p.error("--reps must be at least 1")
    prefixes = [s.strip().upper() for s in (args.rows or "").split(",") if s.strip()]
    if args.cpu_child:
        cpu_child(args, prefixes)
        return 0
    data = {"benchmark": "copy", "machine": machine_info(),
            "method": {"reps": args.reps, "cpu_reps": max(5, args.reps // 3),
                       "quick": args.quick, "compile": args.compile, "rows": args.rows,
                       "d2d": "CUDA events on one torch stream (handle passed to strided, "
                              "cupy ExternalStream), 2 warm-up calls, median",
                       "small": "perf_counter over n calls, median of 3 rounds; graph: "
                                "CUDA events around a replay of 100 captured copies",
                       "transfer": "perf_counter wall time until complete, median",
                       "cpu": "perf_counter, median; one child process per thread count",
                       "bytes": "unique bytes read + bytes written; transfers: destination "
                                "bytes"},
            "mismatches": [], "errors": []}
    if args.cccl:
        data["method"]["cccl"] = ("bench_cccl: one process after the D2D rows, on their layouts "
                                  "and a stream of its own; 1 warm-up call, checked against a "
                                  "reference kernel, then CUDA events around each of --reps "
                                  "calls, median")
    gpu_sections(args, prefixes, data)
    cpu_section(args, prefixes, data)
    for key, _, _ in SECTIONS:
        for row in data.get(key, []):
            what = "%s %s" % (row["id"], row["case"])
            if "error" in row:
                data["errors"].append("ERROR %s: %s" % (what, row["error"]))
            elif row.get("mismatch"):
                data["mismatches"].append("MISMATCH %s: %s" % (what, ", ".join(row["mismatch"])))
    print(report(data))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n")
        print("wrote %s" % path)
    return 1 if data["mismatches"] or data["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
