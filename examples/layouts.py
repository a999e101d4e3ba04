"""Strided layouts at work, from Python, checked against NumPy.

Builds a NumPy array, describes it with strided.StridedLayout, applies the same
view operations to both, and shows that the layout reaches exactly the
elements NumPy's view does.
"""

import numpy as np

import strided
from strided import StridedLayout

print(f"strided {strided.__version__}, numpy {np.__version__}\n")

a = np.arange(24, dtype=np.float32).reshape(4, 6)
layout = StridedLayout(a.shape, a.strides, a.itemsize, divide_strides=True)
print("a = np.arange(24, dtype=np.float32).reshape(4, 6)")
print(layout.format_grid(), "\n")

views = {
    "a.T": (a.T, layout.permuted((1, 0))),
    "a[::-1, 1:5:2]": (a[::-1, 1:5:2], layout[::-1, 1:5:2]),
    "a.reshape(2, 12)": (a.reshape(2, 12), layout.reshaped((2, 12))),
    "a[2]": (a[2], layout[2]),
}
base = a.ctypes.data
for name, (view, lay) in views.items():
    offset = (view.ctypes.data - base) // a.itemsize
    assert lay.shape == view.shape
    assert lay.strides_in_bytes == view.strides
    assert lay.slice_offset == offset
    # Every element of the view, read through the layout's offsets.
    values = a.reshape(-1)[[lay.slice_offset + sum(i * s for i, s in zip(idx, lay.strides))
                            for idx in np.ndindex(*lay.shape)]]
    assert np.array_equal(values, view.reshape(-1))
    print(f"{name:18} {lay.format():22} matches numpy: shape {view.shape}, "
          f"byte strides {view.strides}, offset {offset}")

try:
    layout.permuted((1, 0)).reshaped((2, 12))
except ValueError as e:
    print(f"\na.T.reshape(2, 12) needs a copy: {e}")

dense = layout[::-1, 1:5:2].to_dense()
print(f"\nallocate a[::-1, 1:5:2] densely: {dense.format()}, "
      f"{dense.required_size_in_bytes()} bytes")
