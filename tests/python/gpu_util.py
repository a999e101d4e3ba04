"""What the GPU test modules share: whether a CUDA device is usable, and
imports of the optional libraries (CuPy, PyTorch, cuda.core), each None
where it is missing or cannot work. Imported as a sibling module
(``from gpu_util import ...``): pytest puts this folder on sys.path."""

import ctypes
import importlib


def cuda_device_count():
    """The number of usable CUDA devices, asking the driver through
    cuda.bindings or, without it, through libcuda itself; 0 on any failure."""
    try:
        from cuda.bindings import driver
    except Exception:
        driver = None
    if driver is not None:
        try:
            (err,) = driver.cuInit(0)
            if err != driver.CUresult.CUDA_SUCCESS:
                return 0
            err, count = driver.cuDeviceGetCount()
            return count if err == driver.CUresult.CUDA_SUCCESS else 0
        except Exception:
            return 0
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def optional(name):
    """The module name, or None where it is not installed or is installed
    without a working CUDA."""
    try:
        return importlib.import_module(name)
    except Exception:  # not installed, or installed without a working CUDA
        return None


def optional_torch():
    """PyTorch where it is installed and sees CUDA, else None."""
    torch = optional("torch")
    if torch is not None and not torch.cuda.is_available():
        return None
    return torch
