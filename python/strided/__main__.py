"""python -m strided: what a bug report needs.

Prints the versions of strided, Python, NumPy and the array libraries strided
works with, how libstrided was built (the CUDA copy kernels and the GPU
architectures of their fatbin, OpenMP, the compiler, the build type), the CUDA
driver it loads and the GPUs it sees, with the fatbin's code each GPU runs.
Without a driver it says why, and prints the rest. ``--json`` prints the same
as one JSON object.
"""

import argparse
import importlib.metadata
import json
import os
import platform
import sys

import numpy

import strided
from strided import _strided

# Distributions a report names when they are installed (strided exchanges
# memory with them); none is imported.
OTHER_DISTRIBUTIONS = ("ml_dtypes", "cuda-core", "cuda-bindings", "cupy-cuda13x", "cupy-cuda12x",
                       "cupy", "torch")

# Environment variables that change what strided finds.
ENVIRONMENT = ("STRIDED_CUDA_DRIVER", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
               "OMP_NUM_THREADS")


def distribution_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed_version():
    """The version of the installed distribution strided, when this process
    imported strided from it (not from a build tree on PYTHONPATH); else
    None."""
    try:
        dist = importlib.metadata.distribution("strided")
    except importlib.metadata.PackageNotFoundError:
        return None
    init = os.path.realpath(dist.locate_file("strided/__init__.py"))
    return dist.version if init == os.path.realpath(strided.__file__) else None


def architectures(text):
    return [int(a) for a in text.split()]


def fatbin_code_for(capability, build):
    """What the fatbin has for a GPU of compute capability (major, minor):
    "sm_XY" (machine code of its major version, at its minor or a lower one),
    "compute_XY" (PTX the driver compiles at load time), or None."""
    if not build["kernels"]:
        return None
    cc = capability[0] * 10 + capability[1]
    runs = [a for a in build["cuda_architectures"] if a // 10 == capability[0] and a <= cc]
    if runs:
        return f"sm_{max(runs)}"
    ptx = build["ptx_architecture"]
    if ptx is not None and ptx <= cc:
        return f"compute_{ptx}"
    return None


def build_report():
    b = _strided.build_info()
    b["cuda_architectures"] = architectures(b["cuda_architectures"])
    b["ptx_architecture"] = int(b["ptx_architecture"]) if b["ptx_architecture"] else None
    b["nvcc_version"] = b["nvcc_version"] or None
    b["header_version_info"] = list(b["header_version_info"])
    return b


def driver_report(build):
    try:
        d = _strided.driver_info()
    except RuntimeError as e:
        return {"error": str(e)}, []
    d["cuda_version"] = f"{d['version'] // 1000}.{d['version'] % 1000 // 10}"
    d["realpath"] = os.path.realpath(d["path"]) if d["path"] else None
    devices = []
    for i in range(d["device_count"]):
        try:
            v = _strided.device_info(i)
        except (RuntimeError, ValueError) as e:
            devices.append({"ordinal": i, "error": str(e)})
            continue
        v["compute_capability"] = list(v["compute_capability"])
        v["fatbin_code"] = fatbin_code_for(v["compute_capability"], build)
        devices.append(v)
    return d, devices


def report():
    build = build_report()
    driver, devices = driver_report(build)
    return {
        "strided": {
            "version": strided.__version__,
            "distribution_version": installed_version(),
            "path": os.path.dirname(strided.__file__),
        },
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
            "platform": platform.platform(),
        },
        "numpy": numpy.__version__,
        "other_packages": {n: v for n in OTHER_DISTRIBUTIONS
                           if (v := distribution_version(n)) is not None},
        "environment": {n: os.environ[n] for n in ENVIRONMENT if n in os.environ},
        "build": build,
        "cuda_driver": driver,
        "devices": devices,
    }


def kernels_text(b):
    if not b["kernels"]:
        return "not compiled in (no nvcc at build time): device copies are unsupported"
    code = " ".join(f"sm_{a}" for a in b["cuda_architectures"])
    if b["ptx_architecture"] is not None:
        code += f" + PTX compute_{b['ptx_architecture']}"
    notes = [f"nvcc {b['nvcc_version']}"] if b["nvcc_version"] else []
    if b["kernels_compressed"]:
        notes.append("compressed")
    return code + (f" ({', '.join(notes)})" if notes else "")


def device_text(v):
    if "error" in v:
        return v["error"]
    major, minor = v["compute_capability"]
    code = v["fatbin_code"]
    if code is None:
        runs = "the copy kernels have no code for it"
    elif code.startswith("sm_"):
        runs = f"runs {code}"
    else:
        runs = f"runs {code}, compiled by the driver at load time"
    return (f"{v['name']}, compute capability {major}.{minor}, "
            f"{v['multiprocessor_count']} multiprocessors; {runs}")


def text(r):
    rows = []

    def row(name, value, indent=0):
        rows.append(f"{' ' * indent}{name:<{22 - indent}}{value}")

    s, p, b, d = r["strided"], r["python"], r["build"], r["cuda_driver"]
    row(f"strided {s['version']}", s["path"])
    row(f"Python {p['version']}", f"{p['executable']} ({p['implementation']}, {p['platform']})")
    row(f"NumPy {r['numpy']}", "")
    others = ", ".join(f"{n} {v}" for n, v in r["other_packages"].items())
    row("other packages", others or "none of " + ", ".join(OTHER_DISTRIBUTIONS))
    for n, v in r["environment"].items():
        row(n, v)
    rows.append("")
    rows.append("build")
    row("compiler", b["compiler"], 2)
    row("build type", b["build_type"] or "(none)", 2)
    row("OpenMP", "on" if b["openmp"] else "off: host copies run on the calling thread", 2)
    row("CUDA copy kernels", kernels_text(b), 2)
    rows.append("")
    rows.append("CUDA driver")
    if "error" in d:
        row("not loaded", d["error"], 2)
    else:
        path = d["path"] or "(the loader cannot tell)"
        if d["realpath"] and d["realpath"] != d["path"]:
            path += f" -> {d['realpath']}"
        row("library", path, 2)
        row("version", f"CUDA {d['cuda_version']} ({d['version']})", 2)
        row("GPUs", str(d["device_count"]), 2)
        for v in r["devices"]:
            row(f"GPU {v['ordinal']}", device_text(v), 2)
    return "\n".join(line.rstrip() for line in rows)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m strided",
        description="Print what a bug report about strided needs: versions, how libstrided "
                    "was built, the CUDA driver and the GPUs it finds.")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    r = report()
    print(json.dumps(r, indent=2) if args.json else text(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
