"""python -m strided: the bug report. It runs in a subprocess, once without
a CUDA driver (STRIDED_CUDA_DRIVER names no file) and once with the fake
driver of the C tests ($STRIDED_FAKE_CUDA, set by scripts/test), and in
process the functions of strided._strided behind it."""

import json
import os
import subprocess
import sys

import numpy
import pytest

import strided
from strided import _strided
from strided.__main__ import fatbin_code_for

FAKE = os.environ.get("STRIDED_FAKE_CUDA")
NO_DRIVER = "/nonexistent/libcuda.so.1"

# The directory holding the strided package this process imported, so that
# the subprocesses import the very same build.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(strided.__file__)))


def run(driver, *args):
    env = dict(os.environ)
    env["STRIDED_CUDA_DRIVER"] = driver
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    result = subprocess.run([sys.executable, "-m", "strided", *args], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f"python -m strided failed:\n{result.stdout}\n{result.stderr}"
    assert result.stderr == ""
    return result.stdout


def test_without_a_driver_the_report_says_why_and_has_the_rest():
    out = run(NO_DRIVER)
    assert out.startswith(f"strided {strided.__version__} ")
    assert f"NumPy {numpy.__version__}" in out
    assert f"Python {sys.version.split()[0]}" in out
    for name in ("compiler", "build type", "OpenMP", "CUDA copy kernels", "CUDA driver"):
        assert name in out
    assert f"not loaded          no CUDA driver: {NO_DRIVER}" in out
    assert "GPU 0" not in out


def test_without_a_driver_the_json_report_has_no_devices():
    r = json.loads(run(NO_DRIVER, "--json"))
    assert r["strided"]["version"] == strided.__version__
    assert r["numpy"] == numpy.__version__
    assert r["environment"]["STRIDED_CUDA_DRIVER"] == NO_DRIVER
    assert r["cuda_driver"]["error"].startswith(f"no CUDA driver: {NO_DRIVER}")
    assert r["devices"] == []
    b = r["build"]
    assert b["version"] == b["header_version"] == strided.__version__
    assert isinstance(b["openmp"], bool) and b["compiler"] and b["build_type"] is not None
    if b["kernels"]:
        assert b["cuda_architectures"] and b["ptx_architecture"] == b["cuda_architectures"][-1]
        assert b["nvcc_version"]
    else:
        assert b["cuda_architectures"] == [] and b["ptx_architecture"] is None


@pytest.mark.skipif(not FAKE, reason="skipped: STRIDED_FAKE_CUDA not set (scripts/test sets it)")
def test_with_the_fake_driver_the_report_lists_its_device():
    r = json.loads(run(FAKE, "--json"))
    d = r["cuda_driver"]
    assert d["version"] == 13000 and d["cuda_version"] == "13.0"
    assert d["device_count"] == 1
    assert os.path.realpath(d["path"]) == os.path.realpath(FAKE)
    [v] = r["devices"]
    assert v["ordinal"] == 0 and v["name"] == "Fake CUDA Device"
    assert v["compute_capability"] == [9, 0] and v["multiprocessor_count"] == 132
    assert v["fatbin_code"] == fatbin_code_for((9, 0), r["build"])
    out = run(FAKE)
    assert "version             CUDA 13.0 (13000)" in out
    assert ("GPU 0               Fake CUDA Device, compute capability 9.0, "
            "132 multiprocessors") in out


BUILD = {"kernels": True, "cuda_architectures": [75, 80, 86, 89, 90, 100, 120],
         "ptx_architecture": 120}


@pytest.mark.parametrize("capability, code", [
    ((7, 5), "sm_75"), ((8, 0), "sm_80"), ((8, 6), "sm_86"), ((8, 7), "sm_86"),
    ((8, 9), "sm_89"), ((9, 0), "sm_90"), ((10, 0), "sm_100"), ((10, 3), "sm_100"),
    ((12, 0), "sm_120"), ((12, 1), "sm_120"),
    # No machine code of their major version: the PTX where it is not newer.
    ((13, 0), "compute_120"), ((11, 0), None), ((7, 0), None),
])
def test_fatbin_code_is_the_machine_code_of_the_major_version_or_the_ptx(capability, code):
    assert fatbin_code_for(capability, BUILD) == code


def test_without_kernels_no_gpu_has_code():
    assert fatbin_code_for((9, 0), dict(BUILD, kernels=False)) is None


def test_build_info_is_what_the_library_was_built_with():
    b = _strided.build_info()
    assert set(b) == {"version", "header_version", "header_version_info", "kernels",
                      "cuda_architectures", "ptx_architecture", "nvcc_version",
                      "kernels_compressed", "openmp", "compiler", "build_type"}
    assert b["compiler"].split()[0] in ("GCC", "clang")
    if not b["kernels"]:
        assert (b["cuda_architectures"], b["ptx_architecture"], b["nvcc_version"]) == ("", "", "")
        assert b["kernels_compressed"] is False


def test_device_info_takes_an_int():
    with pytest.raises(TypeError):
        _strided.device_info("0")
    with pytest.raises(TypeError):
        _strided.device_info()


def test_device_info_refuses_a_device_that_does_not_exist():
    # RuntimeError where this process has no driver, ValueError where it has.
    with pytest.raises((RuntimeError, ValueError)):
        _strided.device_info(-1)
