"""Time StridedMemoryView creation and export from Python, beside cuda.core.

Creating a view from a NumPy array, a CuPy array and a torch tensor, and
exporting one, in ns per call, for strided.StridedMemoryView and, in the
same run, for cuda.core's StridedMemoryView where it imports
(cuda.core 1.2: about 1.9 us from CuPy, 5.5 us from torch). Target: at most
1 us for each. Prints one table and writes the results, with a description of
the machine, as JSON.

Usage (from the repository root, with strided installed in the Python that
runs it, or built with STRIDED_BUILD_PYTHON=ON and found through PYTHONPATH,
as scripts/gpu-check does with build-gpu):

    PYTHONPATH=build-bench/python python bench/bench_view.py [--quick]
        [--json PATH] [--markdown PATH] [--stream new|current]

CuPy, torch and cuda.core are optional: a row whose library, GPU or method is
missing shows '-' and is marked skipped (or missing) in the JSON; a row that
raises shows 'error' and the message is printed under the table and kept in
the JSON. Neither stops the run.

This is a benchmark, not a test: it never fails on a time. It checks once per
view that strided and cuda.core see the pointer, shape, strides and dtype of
the source; a disagreement is printed and recorded in the JSON.
"""

import argparse
import datetime
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

from benchutil import c_strides, calibrate, cpu_model, render

try:
    import strided
except ImportError as e:
    sys.exit("bench_view.py: %s; install strided (pip install .) or put its "
             "build on PYTHONPATH (PYTHONPATH=build-bench/python)" % e)

TARGET_NS = 1000.0
SHAPE = (64, 48)
DLPACK_MAX_VERSION = (1, 3)  # what strided's from_dlpack asks producers for

# Where cuda.core keeps StridedMemoryView, newest first (1.2: cuda.core.utils).
CUDA_CORE_PATHS = ["cuda.core.utils", "cuda.core",
                   "cuda.core.experimental.utils", "cuda.core.experimental"]
IMPLS = ["strided", "cuda.core"]



def import_optional(name):
    """(module, None), or (None, why it did not import)."""
    try:
        return importlib.import_module(name), None
    except Exception as e:  # ImportError, or a broken CUDA install
        return None, "%s: %s" % (type(e).__name__, e)


def import_cuda_core():
    """(StridedMemoryView class, module path), or (None, why not)."""
    why = []
    for path in CUDA_CORE_PATHS:
        module, err = import_optional(path)
        if module is None:
            why.append("%s: %s" % (path, err))
            continue
        cls = getattr(module, "StridedMemoryView", None)
        if cls is not None:
            return cls, path
        why.append("%s has no StridedMemoryView" % path)
    return None, "; ".join(why)


def version_of(module, dist):
    v = getattr(module, "__version__", None) if module else None
    if v is None:
        try:
            v = importlib.metadata.version(dist)
        except Exception:
            pass
    return v


class Libs:
    """The optional libraries, the GPU and the consumer streams."""

    def __init__(self, stream_mode):
        self.cupy, self.cupy_why = import_optional("cupy")
        self.torch, self.torch_why = import_optional("torch")
        self.cc_cls, self.cc_where = import_cuda_core()
        self.stream_mode = stream_mode
        self.notes = []
        self.mismatches = []
        self.gpu_name = None
        self.cupy_gpu = self.torch_gpu = False
        self.cupy_stream = self.torch_stream = None
        if self.cupy is not None:
            try:
                self.cupy_gpu = self.cupy.cuda.runtime.getDeviceCount() > 0
                if not self.cupy_gpu:
                    self.cupy_why = "no CUDA device"
            except Exception as e:
                self.cupy_why = "no CUDA device (%s: %s)" % (
                    type(e).__name__, e)
        if self.torch is not None:
            try:
                self.torch_gpu = bool(self.torch.cuda.is_available())
            except Exception as e:
                self.notes.append("torch.cuda: %s: %s" % (type(e).__name__, e))
        if self.cupy_gpu:
            try:
                props = self.cupy.cuda.runtime.getDeviceProperties(0)
                name = props["name"]
                self.gpu_name = (name.decode() if isinstance(name, bytes)
                                 else str(name))
            except Exception:
                pass
        if self.gpu_name is None and self.torch_gpu:
            try:
                self.gpu_name = self.torch.cuda.get_device_name(0)
            except Exception:
                pass
        # A current stream of our own (default) makes each producer's stream
        # the consumer's, so no protocol has synchronisation work to do and
        # the figures are the cost of the calls. Keep references: the
        # streams must outlive the run.
        if stream_mode == "new":
            if self.cupy_gpu:
                try:
                    self.cupy_stream = self.cupy.cuda.Stream(non_blocking=True)
                    self.cupy_stream.use()
                except Exception as e:
                    self.notes.append("cupy stream: %s: %s"
                                      % (type(e).__name__, e))
            if self.torch_gpu:
                try:
                    self.torch_stream = self.torch.cuda.Stream()
                    self.torch.cuda.set_stream(self.torch_stream)
                except Exception as e:
                    self.notes.append("torch stream: %s: %s"
                                      % (type(e).__name__, e))
        if self.cc_cls is not None and (self.cupy_gpu or self.torch_gpu):
            # cuda.core's CUDA-array-interface import asks the driver for the
            # pointer's device, which needs a current context.
            for path in ("cuda.core", "cuda.core.experimental"):
                module, _ = import_optional(path)
                if module is not None and hasattr(module, "Device"):
                    try:
                        module.Device(0).set_current()
                    except Exception as e:
                        self.notes.append("cuda.core Device(0).set_current(): "
                                          "%s: %s" % (type(e).__name__, e))
                    break

    def versions(self):
        cuda_bindings, _ = import_optional("cuda.bindings")
        return {
            "numpy": np.__version__,
            "strided": getattr(strided, "__version__", None),
            "cupy": version_of(self.cupy, "cupy"),
            "torch": version_of(self.torch, "torch"),
            "torch_cuda": (getattr(self.torch.version, "cuda", None)
                           if self.torch else None),
            "cuda_core": version_of(sys.modules.get("cuda.core"),
                                    "cuda-core"),
            "cuda_bindings": version_of(cuda_bindings, "cuda-bindings"),
        }


def make_sources(libs):
    """name -> source dict: the object, the stream_ptr to pass, what the
    views of it must show (ptr, shape, strides in elements, dtype), and its
    device ("host" or "cuda"); or name -> {"skip": why}."""
    f4 = np.dtype(np.float32)
    sources = {}

    def host(a):
        return {"obj": a, "s": -1, "device": "host",
                "expect": (a.ctypes.data, a.shape,
                           tuple(x // a.itemsize for x in a.strides),
                           str(a.dtype))}

    sources["numpy C"] = host(np.arange(np.prod(SHAPE), dtype=f4)
                              .reshape(SHAPE))
    base = np.arange(2 * SHAPE[0] * SHAPE[1], dtype=f4).reshape(
        2 * SHAPE[0], SHAPE[1])
    sources["numpy T[1:, ::2]"] = host(base.T[1:, ::2])

    def cuda_skip(lib, name, why, gpu):
        if lib is None:
            return {"skip": "%s not importable (%s)" % (name, why)}
        if not gpu:
            return {"skip": "%s: %s" % (name, why or "no CUDA device")}
        return None

    skip = cuda_skip(libs.cupy, "cupy", libs.cupy_why, libs.cupy_gpu)
    if skip:
        sources["cupy C"] = skip
    else:
        try:
            cp = libs.cupy
            x = cp.arange(np.prod(SHAPE), dtype=f4).reshape(SHAPE)
            sources["cupy C"] = {
                "obj": x, "s": cp.cuda.get_current_stream().ptr,
                "device": "cuda",
                "expect": (x.data.ptr, x.shape,
                           tuple(v // x.itemsize for v in x.strides),
                           str(x.dtype))}
        except Exception as e:
            sources["cupy C"] = {"skip": "cupy: %s: %s"
                                 % (type(e).__name__, e)}

    torch = libs.torch

    def tensor_source(t, s, device):
        return {"obj": t, "s": s, "device": device,
                "expect": (t.data_ptr(), tuple(t.shape), tuple(t.stride()),
                           str(np.dtype(np.float32)))}

    skip = cuda_skip(torch, "torch", libs.torch_why, libs.torch_gpu)
    if skip:
        sources["torch CUDA C"] = skip
    else:
        try:
            t = torch.arange(int(np.prod(SHAPE)), dtype=torch.float32,
                             device="cuda").reshape(SHAPE)
            sources["torch CUDA C"] = tensor_source(
                t, torch.cuda.current_stream().cuda_stream, "cuda")
        except Exception as e:
            sources["torch CUDA C"] = {"skip": "torch: %s: %s"
                                       % (type(e).__name__, e)}
    if torch is None:
        sources["torch CPU C"] = {"skip": "torch not importable (%s)"
                                  % libs.torch_why}
    else:
        try:
            t = torch.arange(int(np.prod(SHAPE)),
                             dtype=torch.float32).reshape(SHAPE)
            sources["torch CPU C"] = tensor_source(t, -1, "host")
        except Exception as e:
            sources["torch CPU C"] = {"skip": "torch: %s: %s"
                                      % (type(e).__name__, e)}
    return sources


# The rows, per source. Each: label, statement timed (SMV: the view class;
# obj: the source; s: its stream_ptr; v: a view of obj made by `make`), the
# SMV methods it needs, and the consumer module it needs, if any.
DLPACK = "SMV.from_dlpack(obj, stream_ptr=s)"
CREATE = {
    "from_dlpack": (DLPACK, ["from_dlpack"]),
    "from_array_interface": ("SMV.from_array_interface(obj)",
                             ["from_array_interface"]),
    "from_cuda_array_interface": (
        "SMV.from_cuda_array_interface(obj, stream_ptr=s)",
        ["from_cuda_array_interface"]),
    "from_any_interface": ("SMV.from_any_interface(obj, stream_ptr=s)",
                           ["from_any_interface"]),
}
PROPS = ("v = %s; v.shape; v.strides; v.dtype" % DLPACK,
         ["from_dlpack"])
EXPORT = {
    "v.__dlpack__()": ("v.__dlpack__()", None),
    "v.__dlpack__(max_version=(1, 0))":
        ("v.__dlpack__(max_version=(1, 0))", None),
    "np.from_dlpack(v)": ("np.from_dlpack(v)", "numpy"),
    "cupy.from_dlpack(v)": ("cupy.from_dlpack(v)", "cupy"),
    "torch.from_dlpack(v)": ("torch.from_dlpack(v)", "torch"),
}
SOURCE_ROWS = {
    "numpy C": (["from_dlpack", "from_array_interface",
                 "from_any_interface"],
                ["v.__dlpack__()", "v.__dlpack__(max_version=(1, 0))",
                 "np.from_dlpack(v)"]),
    "numpy T[1:, ::2]": (["from_dlpack", "from_array_interface",
                          "from_any_interface"],
                         ["v.__dlpack__()", "np.from_dlpack(v)"]),
    "cupy C": (["from_dlpack", "from_cuda_array_interface",
                "from_any_interface"],
               ["v.__dlpack__()", "v.__dlpack__(max_version=(1, 0))",
                "cupy.from_dlpack(v)", "torch.from_dlpack(v)"]),
    "torch CUDA C": (["from_dlpack", "from_any_interface"],
                     ["v.__dlpack__()", "torch.from_dlpack(v)",
                      "cupy.from_dlpack(v)"]),
    "torch CPU C": (["from_dlpack", "from_any_interface"],
                    ["v.__dlpack__()", "np.from_dlpack(v)",
                     "torch.from_dlpack(v)"]),
}

# The producers' own calls: what a view import cannot go below.
REFERENCE_ROWS = {
    "numpy C": [("a[...]", "obj[...]"),
                ("np.asarray(a)", "np.asarray(obj)"),
                ("a.__dlpack__(max_version=(1, 3))",
                 "obj.__dlpack__(stream=None, max_version=mv)"),
                ("a.__array_interface__", "obj.__array_interface__")],
    "cupy C": [("x[...]", "obj[...]"),
               ("x.__dlpack__(stream=s, max_version=(1, 3))",
                "obj.__dlpack__(stream=sd, max_version=mv)"),
               ("x.__cuda_array_interface__",
                "obj.__cuda_array_interface__")],
    "torch CUDA C": [("t[...]", "obj[...]"),
                     ("t.__dlpack__(stream=s, max_version=(1, 3))",
                      "obj.__dlpack__(stream=sd, max_version=mv)")],
    "torch CPU C": [("t.__dlpack__(max_version=(1, 3))",
                     "obj.__dlpack__(stream=None, max_version=mv)")],
}
FLOORS = [("pass", "pass")]


def error_text(e):
    return "%s: %s" % (type(e).__name__, e)


def view_facts(v):
    """(ptr, shape, strides in elements, dtype) of a view; cuda.core may
    leave the strides of a C-contiguous view as None."""
    shape = tuple(v.shape)
    strides = v.strides
    strides = c_strides(shape) if strides is None else tuple(strides)
    return (int(v.ptr), shape, strides, str(np.dtype(v.dtype)))


class Cell:
    """One statement timed for one implementation."""

    def __init__(self, stmt, g):
        self.stmt, self.g = stmt, g
        self.status, self.why = "ok", None
        self.timer = self.number = None
        self.rounds = []

    def fail(self, e):
        self.status, self.why = "error", error_text(e)

    def result(self):
        if self.status != "ok":
            return {"status": self.status, "reason": self.why,
                    "stmt": self.stmt}
        return {"status": "ok", "stmt": self.stmt,
                "ns": statistics.median(self.rounds),
                "min_ns": min(self.rounds), "number": self.number,
                "rounds_ns": self.rounds}


def skipped(status, why, stmt=None):
    c = Cell(stmt, None)
    c.status, c.why = status, why
    return c



def time_cells(cells, min_time, repeat):
    """Fill each live cell with `repeat` rounds of ns per call. The rounds of
    the cells alternate, so that a slow spell of a noisy machine falls on
    all of them alike. timeit turns the GC off while timing. A statement
    that raises marks its cell as an error and stops being timed."""
    live = [c for c in cells if c.status == "ok"]
    for c in live:
        try:
            c.timer = timeit.Timer(c.stmt, globals=c.g)
            c.number = calibrate(c.timer, min_time)
            c.timer.timeit(c.number)  # warm-up round
        except Exception as e:
            c.fail(e)
    for _ in range(repeat):
        for c in cells:
            if c.status != "ok" or c.timer is None:
                continue
            try:
                c.rounds.append(c.timer.timeit(c.number) / c.number * 1e9)
            except Exception as e:
                c.fail(e)


def impl_class(impl, libs):
    if impl == "strided":
        return strided.StridedMemoryView, None
    if libs.cc_cls is None:
        return None, "cuda.core not importable (%s)" % libs.cc_where
    return libs.cc_cls, None


def base_globals(src, libs):
    g = {"np": np, "cupy": libs.cupy, "torch": libs.torch,
         "obj": src["obj"], "s": src["s"], "mv": DLPACK_MAX_VERSION,
         # The stream the views pass on to __dlpack__: 0 and -1 mean none.
         "sd": src["s"] if src["s"] not in (0, -1) else None}
    return g


def row_cells(src, spec, libs):
    """The strided and cuda.core cells of one row."""
    cells = []
    for impl in IMPLS:
        cls, why = impl_class(impl, libs)
        if cls is None:
            cells.append(skipped("skipped", why, spec["stmt"]))
            continue
        missing = [m for m in spec["needs"] if not hasattr(cls, m)]
        if missing:
            cells.append(skipped("missing", "%s has no %s"
                                 % (impl, ", ".join(missing)), spec["stmt"]))
            continue
        consumer = spec["consumer"]
        if consumer is not None and getattr(libs, consumer, np) is None:
            cells.append(skipped("skipped", "%s not importable" % consumer,
                                 spec["stmt"]))
            continue
        g = base_globals(src, libs)
        g["SMV"] = cls
        cell = Cell(spec["stmt"], g)
        try:
            # One call outside the timing: the view the export rows use, and
            # for the import rows a check of what the view sees.
            v = g["v"] = eval(spec["make"], g)
            if spec["check"]:
                facts = view_facts(v)
                if facts != src["expect"]:
                    libs.mismatches.append({"row": spec["label"],
                                            "impl": impl, "view": facts,
                                            "source": src["expect"]})
                    print("warning: %s, %s: the view sees %s, the source is "
                          "%s" % (spec["label"], impl, facts, src["expect"]),
                          file=sys.stderr)
        except Exception as e:
            cell.fail(e)
        cells.append(cell)
    return cells


def row_specs(name):
    """The rows of one source: label, group, the statement timed, the
    expression that makes a view (once, untimed), the SMV methods needed,
    the consumer module needed and whether to check the view."""
    creates, exports = SOURCE_ROWS[name]
    specs = []
    for m in creates:
        stmt, needs = CREATE[m]
        specs.append(("create", m, stmt, stmt, needs, None, True))
    specs.append(("create", "create + shape/strides/dtype", PROPS[0], DLPACK,
                  PROPS[1], None, False))
    for e in exports:
        stmt, consumer = EXPORT[e]
        specs.append(("export", e, stmt, DLPACK, ["from_dlpack"], consumer,
                      False))
    keys = ("group", "what", "stmt", "make", "needs", "consumer", "check")
    out = []
    for spec in specs:
        d = dict(zip(keys, spec))
        d["label"] = "%s: %s" % (name, d["what"])
        out.append(d)
    return out


def build_rows(sources, libs):
    """[(row dict, [cells])] for every row, in table order."""
    rows = []
    for name in SOURCE_ROWS:
        src = sources[name]
        for spec in row_specs(name):
            row = {"row": spec["label"], "source": name,
                   "group": spec["group"], "what": spec["what"]}
            if "skip" in src:
                cells = [skipped("skipped", src["skip"], spec["stmt"])
                         for _ in IMPLS]
            else:
                cells = row_cells(src, spec, libs)
            rows.append((row, cells))
    return rows


def build_references(sources, libs):
    refs = []
    g0 = {"np": np}
    for label, stmt in FLOORS:
        refs.append(({"row": label, "source": None}, Cell(stmt, g0)))
    for name, items in REFERENCE_ROWS.items():
        src = sources[name]
        for what, stmt in items:
            row = {"row": "%s: %s" % (name, what), "source": name}
            if "skip" in src:
                refs.append((row, skipped("skipped", src["skip"], stmt)))
                continue
            g = base_globals(src, libs)
            if "max_version" in stmt:
                # Producers that predate max_version get the call strided
                # falls back to.
                try:
                    eval(stmt, g)
                except TypeError:
                    stmt = stmt.replace(", max_version=mv", "")
                    row["row"] += " [no max_version: TypeError]"
                except Exception:
                    pass  # reported when timed
            refs.append((row, Cell(stmt, g)))
    return refs



def machine_info(libs):
    info = {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "gpu": libs.gpu_name,
        "strided_module": strided.__file__,
        "cuda_core_import": libs.cc_where if libs.cc_cls else None,
        "date": datetime.datetime.now(datetime.timezone.utc)
                .isoformat(timespec="seconds"),
    }
    info.update(libs.versions())
    return info


def bench(args):
    libs = Libs(args.stream)
    for note in libs.notes:
        print("warning: %s" % note, file=sys.stderr)
    sources = make_sources(libs)
    for name, src in sources.items():
        if "skip" in src:
            print("note: %s rows skipped: %s" % (name, src["skip"]),
                  file=sys.stderr)
    if libs.cc_cls is None:
        print("note: cuda.core column empty: %s" % libs.cc_where,
              file=sys.stderr)

    results = []
    for row, cells in build_rows(sources, libs):
        time_cells(cells, args.min_time, args.repeat)
        st, cc = (c.result() for c in cells)
        ratio = (cc["ns"] / st["ns"]
                 if st["status"] == "ok" and cc["status"] == "ok" else None)
        row.update({
            "strided": st,
            "cuda_core": cc,
            "ratio_cuda_core_over_strided": ratio,
            "target_ns": TARGET_NS,
            "target_met": (st["ns"] <= TARGET_NS
                           if st["status"] == "ok" else None),
        })
        results.append(row)
        timed = any(c.timer is not None for c in cells)
        print("  %-60s %s" % (row["row"], "done" if timed else "skipped"),
              file=sys.stderr, flush=True)

    references = []
    refs = build_references(sources, libs)
    time_cells([c for _, c in refs], args.min_time, args.repeat)
    for row, cell in refs:
        row.update(cell.result())
        references.append(row)

    return {
        "benchmark": "view",
        "machine": machine_info(libs),
        "method": {
            "python": "timeit, GC off; after calibration and one warm-up "
                      "round, %d rounds of >= %g s each, ns per call; "
                      "median and minimum over the rounds; the rounds of "
                      "strided and cuda.core alternate"
                      % (args.repeat, args.min_time),
            "quick": args.quick,
            "stream": args.stream,
            "stream_ptr": {n: s.get("s") for n, s in sources.items()},
            "sources": {n: (None if "skip" in s else
                            {"shape": s["expect"][1],
                             "strides": s["expect"][2],
                             "dtype": s["expect"][3],
                             "device": s["device"]})
                        for n, s in sources.items()},
            "skipped_sources": {n: s["skip"] for n, s in sources.items()
                                if "skip" in s},
            "notes": libs.notes,
        },
        "targets": {"max_ns": TARGET_NS,
                    "cuda_core_1.2_reference_ns": {"cupy": 1900,
                                                   "torch": 5500}},
        "mismatches": libs.mismatches,
        "results": results,
        "references": references,
    }


def fmt_cell(c):
    if c["status"] == "ok":
        return "%.0f" % c["ns"], "%.0f" % c["min_ns"]
    if c["status"] == "error":
        return "error", "-"
    return "-", "-"


def tables(data):
    main = [["row", "strided ns", "min", "cuda.core ns", "min",
             "cuda.core/strided", "<= 1000 ns"]]
    for r in data["results"]:
        st, st_min = fmt_cell(r["strided"])
        cc, cc_min = fmt_cell(r["cuda_core"])
        ratio = r["ratio_cuda_core_over_strided"]
        met = r["target_met"]
        main.append([r["row"], st, st_min, cc, cc_min,
                     "-" if ratio is None else "%.2f" % ratio,
                     "-" if met is None else ("yes" if met else "NO")])
    ref = [["reference", "ns", "min"]]
    for r in data["references"]:
        ref.append([r["row"], *fmt_cell(r)])
    return main, ref



def report(data, markdown):
    main, ref = tables(data)
    m = data["machine"]
    versions = ", ".join("%s %s" % (k, m[k]) for k in
                         ("numpy", "cupy", "torch", "cuda_core") if m[k])
    parts = [
        "StridedMemoryView creation and export, ns per call (%s, %s CPUs; "
        "GPU %s; Python %s, %s; %s)"
        % (m["cpu_model"], m["cpu_count"], m["gpu"] or "none", m["python"],
           versions, m["date"]),
        render(main, markdown),
        "ns: median of the rounds; min: the fastest round. Views are of a "
        "float32 array of shape %s (numpy T[1:, ::2]: a transposed, gapped "
        "view). create + shape/strides/dtype: from_dlpack and the first "
        "access of the three properties. Export rows time the call on a "
        "view made by from_dlpack; the result is dropped. '-': library, "
        "GPU or method missing. Target: <= %g ns per call."
        % (SHAPE, TARGET_NS),
        "Producer calls, for reference (what an import cannot go below):",
        render(ref, markdown),
    ]
    errors = ["%s, %s: %s" % (r["row"], impl, r[key]["reason"])
              for r in data["results"]
              for impl, key in (("strided", "strided"),
                                ("cuda.core", "cuda_core"))
              if r[key]["status"] == "error"]
    errors += ["%s: %s" % (r["row"], r["reason"])
               for r in data["references"] if r["status"] == "error"]
    if errors:
        parts.append("Errors:\n" + "\n".join("  " + e for e in errors))
    skips = data["method"]["skipped_sources"]
    if skips:
        parts.append("Skipped:\n" + "\n".join(
            "  %s: %s" % kv for kv in skips.items()))
    return "\n\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH",
                        default=str(Path(__file__).resolve().parent
                                    / "results" / "view.json"),
                        help="where to write the JSON results "
                             "(default: bench/results/view.json)")
    parser.add_argument("--markdown", metavar="PATH",
                        help="also write the tables as Markdown")
    parser.add_argument("--quick", action="store_true",
                        help="short rounds, few of them: a smoke test "
                             "(same as --min-time 0.002 --repeat 3)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="minimum seconds of one timed round "
                             "(default 0.02)")
    parser.add_argument("--repeat", type=int, default=7,
                        help="timed rounds per measurement (default 7)")
    parser.add_argument("--stream", choices=["new", "current"],
                        default="new",
                        help="consumer stream for the CUDA rows: 'new' makes "
                             "a fresh non-blocking stream current in CuPy "
                             "and torch, so no producer has to synchronise "
                             "(default); 'current' keeps whatever is current "
                             "(normally the legacy default stream)")
    args = parser.parse_args()
    if args.quick:
        args.min_time, args.repeat = 0.002, 3

    data = bench(args)
    print(report(data, markdown=False))
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    print("wrote %s" % path)
    if args.markdown:
        Path(args.markdown).write_text(report(data, markdown=True))
        print("wrote %s" % args.markdown)


if __name__ == "__main__":
    main()
