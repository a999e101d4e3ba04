"""Layouts and byte checks the copy tests share (test_copy.py on the host,
test_copy_gpu.py, test_copy_transfer_gpu.py and test_copy_multi_gpu.py on
devices).

Arrays are plain data (Spec: a buffer of nbytes, element 0 at a byte offset,
shape and strides in bytes) made from NumPy views, so one description serves
host memory, device memory and any interface that exports it. Layout
classes (BLIS storage schemes): c C-contiguous, f F-contiguous, t the last
two axes swapped, g gapped (padding around every axis, every other element
on the last one), n every axis reversed, and for sources only b (the first
axis missing), b1 (extent 1 on the last axis), b0 (stride 0 on the first).
"""

from typing import NamedTuple

import numpy as np

STRUCT12 = np.dtype([("a", "<i4"), ("b", "<f4"), ("c", "<i4")])
DTYPES = {
    1: np.dtype(np.int8),
    2: np.dtype(np.int16),
    3: np.dtype("V3"),
    4: np.dtype(np.float32),
    8: np.dtype(np.float64),
    12: STRUCT12,
    16: np.dtype(np.complex128),
}


def dtype_of(itemsize):
    """The dtype the tests use for itemsize: DTYPES, else a void dtype."""
    return DTYPES.get(itemsize, np.dtype(f"V{itemsize}"))


class Spec(NamedTuple):
    """An array as plain data: a buffer of nbytes bytes, element 0 at byte
    offset, and shape and strides in bytes."""

    nbytes: int
    offset: int
    shape: tuple
    strides: tuple


def spec_of(a, base):
    """The Spec of NumPy view a of array base (which owns its buffer)."""
    return Spec(base.nbytes, a.__array_interface__["data"][0] - base.ctypes.data, a.shape, a.strides)


def klass(name, shape, itemsize):
    """The Spec of layout class `name` with the destination shape `shape`
    (a source of a b class has its own, broadcastable shape)."""
    dtype = dtype_of(itemsize)
    shape = tuple(shape)
    nd = len(shape)
    if name == "c" or (nd == 0 and name in ("f", "t", "g", "n")):
        base = np.empty(shape, dtype)
        return spec_of(base, base)
    if name == "f":
        base = np.empty(shape[::-1], dtype)
        return spec_of(base.T, base)
    if name == "t":
        if nd == 1:
            return klass("c", shape, itemsize)
        base = np.empty(shape[:-2] + (shape[-1], shape[-2]), dtype)
        return spec_of(base.swapaxes(-1, -2), base)
    if name == "g":
        # Padding before and after every outer axis (but the extent-1 axes of
        # many-dimensional shapes), every other element on the last axis.
        pad = [2 if n > 1 or nd <= 6 else 0 for n in shape[:-1]]
        base = np.empty(tuple(n + p for n, p in zip(shape, pad)) + (2 * shape[-1] + 2,), dtype)
        key = tuple(slice(p // 2, p // 2 + n) for n, p in zip(shape, pad))
        key += (slice(1, 1 + 2 * shape[-1], 2),)
        return spec_of(base[key], base)
    if name == "n":
        base = np.empty(shape, dtype)
        return spec_of(base[(slice(None, None, -1),) * nd], base)
    if name == "b":
        base = np.empty(shape[1:], dtype)
        return spec_of(base, base)
    if name == "b1":
        base = np.empty(shape[:-1] + (1,), dtype)
        return spec_of(base, base)
    if name == "b0":
        base = np.empty(shape[1:], dtype)
        a = np.lib.stride_tricks.as_strided(base, shape, (0,) + base.strides)
        return spec_of(a, base)
    raise AssertionError(name)


def random_bytes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=n, dtype=np.uint8)


def assert_bytes(got, want, what="bytes"):
    """Two uint8 buffers are equal; on failure, name the first differing
    bytes."""
    if not np.array_equal(got, want):
        bad = np.flatnonzero(got != want)
        raise AssertionError(
            f"{what}: {bad.size} of {got.size} bytes differ, first at {bad[:8].tolist()}: "
            f"got {got[bad[:8]].tolist()}, want {want[bad[:8]].tolist()}"
        )
