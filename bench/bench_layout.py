"""Time the layout operations: C, strided.StridedLayout, NumPy and cuda.core.

Runs the C benchmark (bench_layout, given by --c-bench), then times from
Python, in the same run, each operation of strided.StridedLayout beside
NumPy's equivalent operation on an ndarray of the same shape and strides, and
beside cuda.core's _StridedLayout where `import cuda.core` works. Prints one
table and writes the results, with a description of the machine, as JSON.

Usage (from the repository root, after building with STRIDED_BUILD_BENCH=ON
and STRIDED_BUILD_PYTHON=ON):

    PYTHONPATH=build-bench/python python bench/bench_layout.py \
        --c-bench build-bench/bench/bench_layout

This is a benchmark, not a test: it never fails on a time. It does check,
once per input, that strided and NumPy produce the same shape and strides,
since comparing the times of two different results would mean nothing; a
disagreement is printed and recorded in the JSON.
"""

import argparse
import datetime
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

import numpy as np

from benchutil import c_strides, calibrate, cpu_model, render

import strided

ITEMSIZE = 4
BROADCAST_EXTENT = 7

# ndim -> (shape, legal reshape of a C-dense array of that shape). Keep in
# step with `specs` in bench_layout.c; the "# case" lines it prints are
# checked against these.
CASES = {
    2: ((48, 64), (12, 256)),
    4: ((8, 12, 16, 10), (96, 16, 2, 5)),
    8: ((4, 6, 2, 8, 3, 4, 6, 8), (24, 2, 8, 3, 4, 6, 4, 2)),
}

# Targets: ns per call in C at ndim 4 (a few multiply-adds and compares on a
# layout on the stack: 50 ns, reshape 100 ns); from Python, no slower than
# NumPy and at most 300 ns (what a cuda.core 1.2 layout call costs).
C_TARGET_NDIM = 4
C_TARGET_NS = {"reshape": 100.0}
C_TARGET_DEFAULT_NS = 50.0
PYTHON_TARGET_NS = 300.0

# What a NumPy form is, for judging the comparison:
#   view:   a NumPy operation implemented in C that makes the same view
#           metadata (the fair comparison);
#   python: NumPy's equivalent, but a pure-Python function;
#   other:  related but not equivalent (allocates memory, or makes a
#           different view); shown for context, not used for the target.
# Each op: name, what the input is, the statement timed for StridedLayout
# (and for cuda.core, with SL bound to its class), and its NumPy forms, the
# first of which is the one the target is judged against (None: NumPy has no
# equivalent).
OPS = [
    {
        "op": "construct",
        "input": "shape and C strides (explicit), itemsize 4",
        "stmt": "SL(shape, strides, 4)",
        "numpy": [
            ("np.ndarray(shape, f4, a, 0, bstrides)",
             "np.ndarray(shape, f4, a, 0, bstrides)", "view"),
            ("as_strided(a, shape, bstrides)",
             "as_strided(a, shape, bstrides)", "python"),
        ],
    },
    {
        "op": "dense",
        "input": "shape, itemsize 4, order C",
        "stmt": "SL.dense(shape, 4)",
        "numpy": [
            ("np.ndarray(shape, f4, a)", "np.ndarray(shape, f4, a)", "view"),
            ("np.empty(shape, f4) (allocates)", "np.empty(shape, f4)",
             "other"),
        ],
    },
    {
        "op": "permute",
        "input": "dense C, axes reversed",
        "stmt": "L.permuted(rev)",
        "numpy": [("a.transpose(rev)", "a.transpose(rev)", "view")],
    },
    {
        "op": "reshape",
        "input": "dense C, axes 0-1 merged and last split",
        "stmt": "L.reshaped(new)",
        "numpy": [("a.reshape(new)", "a.reshape(new)", "view")],
    },
    {
        "op": "slice",
        "input": "dense C, [1:, ::2, 1:, ::2, ...]",
        "stmt": "L[sl]",
        "numpy": [("a[sl]", "a[sl]", "view")],
    },
    {
        "op": "squeeze",
        "input": "dense C with every odd axis of extent 1",
        "stmt": "Lq.squeezed()",
        "numpy": [("q.squeeze()", "q.squeeze()", "view")],
    },
    {
        "op": "flatten",
        "input": "dense C, all axes",
        "stmt": "L.flattened()",
        "numpy": [
            ("a.reshape(-1)", "a.reshape(-1)", "view"),
            ("a.ravel()", "a.ravel()", "view"),
        ],
    },
    {
        "op": "broadcast",
        "input": "dense C, to (7,) + shape",
        "stmt": "L.broadcast_to(bshape)",
        "numpy": [
            ("np.broadcast_to(a, bshape) (pure Python)",
             "np.broadcast_to(a, bshape)", "python"),
            ("a[None] (adds the axis with extent 1)", "a[None]", "other"),
        ],
    },
    {
        "op": "to_dense",
        "input": "dense C with axes reversed, to order C",
        "stmt": "Lp.to_dense('C')",
        "numpy": [
            None,
            ("np.empty_like(at, order='C') (allocates)",
             "np.empty_like(at, order='C')", "other"),
        ],
    },
    {
        "op": "required_size",
        "input": "the slice [1:, ::2, ...] of dense C",
        "stmt": "Ls.required_size_in_bytes()",
        "numpy": [
            ("byte_bounds(as_) (pure Python)", "byte_bounds(as_)", "python"),
        ],
    },
]

# Calls with nothing in them, so the table can be read against the cost of
# any Python call.
FLOORS = [("pass", "pass"), ("len(shape)", "len(shape)")]



def make_inputs(ndim):
    """The NumPy arrays and call arguments for one ndim (no layouts)."""
    shape, new = CASES[ndim]
    strides = c_strides(shape)
    qshape = tuple(1 if k % 2 else e for k, e in enumerate(shape))
    rev = tuple(range(ndim - 1, -1, -1))
    sl = tuple(slice(1, None) if k % 2 == 0 else slice(None, None, 2)
               for k in range(ndim))
    a = np.zeros(shape, np.float32)
    g = {
        "np": np,
        "f4": np.dtype(np.float32),
        "as_strided": np.lib.stride_tricks.as_strided,
        "byte_bounds": np.lib.array_utils.byte_bounds,
        "shape": shape,
        "strides": strides,
        "bstrides": tuple(s * ITEMSIZE for s in strides),
        "qshape": qshape,
        "qstrides": c_strides(qshape),
        "new": new,
        "rev": rev,
        "sl": sl,
        "bshape": (BROADCAST_EXTENT,) + shape,
        "a": a,
        "q": np.zeros(qshape, np.float32),
        "at": a.transpose(rev),
        "as_": a[sl],
    }
    return g


def add_layouts(g, cls):
    """Bind SL to the layout class and build its input layouts into g."""
    g = dict(g)
    g["SL"] = cls
    g["L"] = cls(g["shape"], g["strides"], ITEMSIZE)
    g["Lq"] = cls(g["qshape"], g["qstrides"], ITEMSIZE)
    g["Lp"] = g["L"].permuted(g["rev"])
    g["Ls"] = g["L"][g["sl"]]
    return g


def check(g):
    """Compare each strided result with NumPy's; return the disagreements."""
    def as_numpy(layout):
        return (tuple(layout.shape), tuple(layout.strides_in_bytes))

    def of(arr):
        return (arr.shape, arr.strides)

    SL, L, a = g["SL"], g["L"], g["a"]
    base = a.ctypes.data
    pairs = {
        "construct": (as_numpy(L), of(a)),
        "dense": (as_numpy(SL.dense(g["shape"], ITEMSIZE)), of(a)),
        "permute": (as_numpy(L.permuted(g["rev"])), of(g["at"])),
        "reshape": (as_numpy(L.reshaped(g["new"])), of(a.reshape(g["new"]))),
        "slice": (as_numpy(g["Ls"]) + (g["Ls"].slice_offset_in_bytes,),
                  of(g["as_"]) + (g["as_"].ctypes.data - base,)),
        "squeeze": (as_numpy(g["Lq"].squeezed()), of(g["q"].squeeze())),
        "flatten": (as_numpy(L.flattened()), of(a.reshape(-1))),
        "broadcast": (as_numpy(L.broadcast_to(g["bshape"])),
                      of(np.broadcast_to(a, g["bshape"]))),
        "to_dense": (as_numpy(g["Lp"].to_dense("C")),
                     of(np.empty_like(g["at"], order="C"))),
        "required_size": (g["Ls"].required_size_in_bytes(),
                          g["byte_bounds"](g["as_"])[1] - base),
    }
    return {op: {"strided": x, "numpy": y}
            for op, (x, y) in pairs.items() if x != y}



def time_stmts(stmts, min_time, repeat):
    """Median and best ns per call of each (stmt, globals) pair over repeat
    timed loops of at least min_time seconds each. The loops of the
    statements alternate, so that a slow spell of a noisy machine falls on
    all of them alike rather than on one. timeit turns the GC off while
    timing. A statement that raises gives None."""
    timers, numbers = [], []
    for stmt, g in stmts:
        timer = timeit.Timer(stmt, globals=g)
        try:
            numbers.append(calibrate(timer, min_time))
        except Exception as e:  # e.g. an op cuda.core lacks or refuses
            print("warning: %s: %s: %s" % (stmt, type(e).__name__, e),
                  file=sys.stderr)
            numbers.append(None)
        timers.append(timer)
    per_call = [[] for _ in stmts]
    for _ in range(repeat):
        for i, (timer, number) in enumerate(zip(timers, numbers)):
            if number is not None:
                per_call[i].append(timer.timeit(number) / number * 1e9)
    return [(statistics.median(p), min(p)) if p else None for p in per_call]


def import_cuda_core():
    """cuda.core's _StridedLayout class and the module's version, or None."""
    for name in ("cuda.core._layout", "cuda.core.experimental._layout"):
        try:
            module = importlib.import_module(name)
            cls = module._StridedLayout
        except Exception:
            continue
        try:
            version = importlib.import_module("cuda.core").__version__
        except Exception:
            version = "unknown"
        return cls, version
    return None


def run_c(path, min_time, repeat):
    """Run bench_layout; return ({(op, ndim): (median ns, best ns)},
    {key: value}, [cases])."""
    out = subprocess.run(
        [path, "-t", str(max(1, round(min_time * 1000))), "-r", str(repeat)],
        check=True, capture_output=True, text=True).stdout
    median, best, meta, cases = {}, {}, {}, []
    for line in out.splitlines():
        if line.startswith("# case: "):
            cases.append(line[len("# case: "):])
        elif line.startswith("# "):
            key, _, value = line[2:].partition(": ")
            meta[key] = value
        elif line.startswith(("c,", "c_min,")):
            kind, op, ndim, ns = line.split(",")
            (median if kind == "c" else best)[(op, int(ndim))] = float(ns)
    times = {k: (v, best.get(k)) for k, v in median.items()}
    return times, meta, cases


def check_c_cases(cases):
    """Warn when the C inputs are not the shapes this driver times."""
    for text in cases:
        fields = dict(f.split("=", 1) for f in text.split())
        ndim = int(fields["ndim"])
        if ndim not in CASES:
            continue
        shape, new = CASES[ndim]
        want = "(%s):(%s)" % (",".join(map(str, shape)),
                              ",".join(map(str, c_strides(shape))))
        want_new = "(%s):" % ",".join(map(str, new))
        if fields["dense"] != want or not fields["reshaped"].startswith(
                want_new):
            print("warning: C input at ndim %d is %s reshaped to %s; this "
                  "driver uses %s reshaped to %s"
                  % (ndim, fields["dense"], fields["reshaped"], want, new),
                  file=sys.stderr)



def machine_info(c_meta, cuda):
    return {
        "cpu_model": cpu_model(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "platform": platform.platform(),
        "compiler": c_meta.get("compiler"),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "strided": getattr(strided, "__version__", None),
        "cuda_core": cuda[1] if cuda else None,
        "date": datetime.datetime.now(datetime.timezone.utc)
                .isoformat(timespec="seconds"),
    }


def c_target(op):
    return C_TARGET_NS.get(op, C_TARGET_DEFAULT_NS)


def bench(args):
    c_times, c_meta, c_cases = {}, {}, []
    if args.c_bench:
        c_times, c_meta, c_cases = run_c(args.c_bench, args.min_time,
                                         args.repeat)
        check_c_cases(c_cases)
    else:
        print("warning: no --c-bench given; the C column is empty",
              file=sys.stderr)
    cuda = import_cuda_core()

    results, floors, mismatches = [], {}, {}
    for ndim in args.ndim:
        base = make_inputs(ndim)
        g = add_layouts(base, strided.StridedLayout)
        gc = None
        if cuda:
            try:
                gc = add_layouts(base, cuda[0])
            except Exception as e:
                print("warning: cuda.core layouts at ndim %d: %s"
                      % (ndim, e), file=sys.stderr)
        bad = check(g)
        for op, pair in bad.items():
            print("warning: ndim %d %s: strided gives %s, NumPy %s"
                  % (ndim, op, pair["strided"], pair["numpy"]),
                  file=sys.stderr)
        if bad:
            mismatches[ndim] = bad
        floor_times = time_stmts([(stmt, g) for _, stmt in FLOORS],
                                 args.min_time, args.repeat)
        floors[ndim] = {label: t[0]
                        for (label, _), t in zip(FLOORS, floor_times)}
        for spec in OPS:
            numpy_forms = [f for f in spec["numpy"] if f is not None]
            stmts = [(spec["stmt"], g)]
            stmts += [(stmt, g) for _, stmt, _ in numpy_forms]
            if gc is not None:
                stmts.append((spec["stmt"], gc))
            times = time_stmts(stmts, args.min_time, args.repeat)
            if None in times[:1 + len(numpy_forms)]:
                sys.exit("bench_layout.py: %s at ndim %d raised; see above"
                         % (spec["op"], ndim))
            py, py_min = times[0]
            numpy_times = iter(times[1:1 + len(numpy_forms)])
            forms = []
            for form in spec["numpy"]:
                if form is None:
                    forms.append(None)
                    continue
                label, _, kind = form
                ns, ns_min = next(numpy_times)
                forms.append({"form": label, "kind": kind, "ns": ns,
                              "min_ns": ns_min, "ratio": py / ns})
            cuda_ns = None
            if gc is not None and times[-1] is not None:
                cuda_ns = times[-1][0]
            primary = forms[0]
            c_ns, c_min_ns = c_times.get((spec["op"], ndim), (None, None))
            target = c_target(spec["op"]) if ndim == C_TARGET_NDIM else None
            results.append({
                "op": spec["op"],
                "ndim": ndim,
                "input": spec["input"],
                "c_ns": c_ns,
                "c_min_ns": c_min_ns,
                "python_stmt": spec["stmt"],
                "python_ns": py,
                "python_min_ns": py_min,
                "numpy": primary,
                "numpy_alternates": [f for f in forms[1:] if f],
                "cuda_core_ns": cuda_ns,
                "targets": {
                    "c_max_ns": target,
                    "c_met": (c_ns <= target
                              if target is not None and c_ns is not None
                              else None),
                    "python_le_numpy": (py <= primary["ns"]
                                        if primary else None),
                    "python_max_ns": PYTHON_TARGET_NS,
                    "python_le_300ns": py <= PYTHON_TARGET_NS,
                },
            })
            print("  %-13s ndim %d done" % (spec["op"], ndim),
                  file=sys.stderr, flush=True)

    return {
        "benchmark": "layout",
        "machine": machine_info(c_meta, cuda),
        "method": {
            "c": c_meta.get("method"),
            "python": "timeit, GC off; median of %d loops of >= %g s each, "
                      "ns per call; the loops of strided, NumPy and "
                      "cuda.core alternate" % (args.repeat, args.min_time),
            "itemsize": ITEMSIZE,
            "cases": {str(n): {"shape": CASES[n][0], "reshape": CASES[n][1]}
                      for n in args.ndim},
            "c_cases": c_cases,
        },
        "targets": {
            "c_ns_at_ndim_4": {op["op"]: c_target(op["op"]) for op in OPS},
            "python": "<= the NumPy form, and <= %g ns" % PYTHON_TARGET_NS,
        },
        "python_floor_ns": {str(k): v for k, v in floors.items()},
        "mismatches": {str(k): v for k, v in mismatches.items()},
        "results": results,
    }


def fmt_ns(x):
    return "-" if x is None else "%.1f" % x


def yes_no(x):
    return "-" if x is None else ("yes" if x else "NO")


def tables(data):
    """The main table, the NumPy forms and the alternates, as rows."""
    cuda = any(r["cuda_core_ns"] is not None for r in data["results"])
    head = ["op", "ndim", "C ns", "C best", "C target", "Python ns", "NumPy ns",
            "Py/NumPy", "Py <= NumPy", "Py <= 300 ns"]
    if cuda:
        head.append("cuda.core ns")
    main = [head]
    for r in data["results"]:
        t = r["targets"]
        np_form = r["numpy"]
        c_tgt = "-"
        if t["c_max_ns"] is not None:
            c_tgt = "%s (<= %g)" % (yes_no(t["c_met"]), t["c_max_ns"])
        row = [r["op"], str(r["ndim"]), fmt_ns(r["c_ns"]),
               fmt_ns(r["c_min_ns"]), c_tgt,
               fmt_ns(r["python_ns"]),
               fmt_ns(np_form["ns"]) if np_form else "n/a",
               "%.2f" % np_form["ratio"] if np_form else "n/a",
               yes_no(t["python_le_numpy"]), yes_no(t["python_le_300ns"])]
        if cuda:
            row.append(fmt_ns(r["cuda_core_ns"]))
        main.append(row)

    forms = [["op", "StridedLayout call", "NumPy form", "kind"]]
    alts = [["op", "ndim", "NumPy form", "kind", "NumPy ns", "Py/NumPy"]]
    seen = set()
    for r in data["results"]:
        if r["op"] not in seen:
            seen.add(r["op"])
            f = r["numpy"]
            forms.append([r["op"], r["python_stmt"],
                          f["form"] if f else "n/a (no NumPy equivalent)",
                          f["kind"] if f else "-"])
        for f in r["numpy_alternates"]:
            alts.append([r["op"], str(r["ndim"]), f["form"], f["kind"],
                         fmt_ns(f["ns"]), "%.2f" % f["ratio"]])
    return main, forms, alts



def report(data, markdown):
    main, forms, alts = tables(data)
    m = data["machine"]
    parts = [
        "Layout operations, ns per call (%s, %s CPUs; %s; Python %s, "
        "NumPy %s; %s)" % (m["cpu_model"], m["cpu_count"], m["compiler"],
                           m["python"], m["numpy"], m["date"]),
        render(main, markdown),
        "C ns, Python ns, NumPy ns: median of the timed loops; C best: the "
        "fastest loop. C target (ndim %d only): <= %g ns, reshape <= %g ns. "
        "Py <= 300 ns: at most what a cuda.core 1.2 layout call costs."
        % (C_TARGET_NDIM, C_TARGET_DEFAULT_NS, C_TARGET_NS["reshape"]),
        "NumPy form timed for each op (kind: view = C-level NumPy view "
        "operation, python = pure-Python NumPy function):",
        render(forms, markdown),
        "Other NumPy forms:",
        render(alts, markdown),
        "Python floor: " + "; ".join(
            "ndim %s: %s" % (n, ", ".join("%s %.1f ns" % kv
                                          for kv in f.items()))
            for n, f in data["python_floor_ns"].items()),
    ]
    return "\n\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--c-bench", metavar="PATH",
                        help="the bench_layout executable (C timings)")
    parser.add_argument("--json", metavar="PATH",
                        default=str(Path(__file__).resolve().parent
                                    / "results" / "layout.json"),
                        help="where to write the JSON results "
                             "(default: bench/results/layout.json)")
    parser.add_argument("--markdown", metavar="PATH",
                        help="also write the tables as Markdown")
    parser.add_argument("--ndim", type=int, nargs="+", default=sorted(CASES),
                        choices=sorted(CASES), help="which ndims to time")
    parser.add_argument("--min-time", type=float, default=0.05,
                        help="minimum seconds of one timed loop (C and "
                             "Python; default 0.05)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed loops per measurement; the median is "
                             "reported (default 5)")
    args = parser.parse_args()

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
