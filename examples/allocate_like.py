"""Allocate a device tensor like this NumPy array.

Takes an array (sliced and transposed, so not contiguous), reads its layout,
makes the dense layout with the same shape and axis order, allocates
required_size_in_bytes() on the GPU (in host memory where there is no CUDA
device), and creates a StridedMemoryView over the new buffer.
"""

import numpy as np

import strided
from strided import HostMemoryResource, StridedLayout, StridedMemoryView

a = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)[1:, ::2].T
print(f"source: shape {a.shape}, byte strides {a.strides}, "
      f"C-contiguous {a.flags.c_contiguous}")

layout = StridedLayout(a.shape, a.strides, a.itemsize, divide_strides=True)
dense = layout.to_dense()  # the same axis order, no gaps
size = dense.required_size_in_bytes()
print(f"layout {layout.format()} -> dense {dense.format()}, {size} bytes")

try:
    mr = strided.DeviceMemoryResource(0)
    where = "device 0"
except RuntimeError as e:  # no CUDA driver or no device here
    mr = HostMemoryResource()
    where = f"host memory ({e})"
buffer = mr.allocate(size)
view = StridedMemoryView.from_buffer(buffer, dense, a.dtype)
print(f"allocated {buffer.size} bytes on {where}")
print(f"view: shape {view.shape}, strides {view.strides} (elements), dtype {view.dtype}, "
      f"device_id {view.device_id}, device-accessible {view.is_device_accessible}")
assert view.shape == a.shape and view.layout.is_dense
if not view.is_device_accessible:
    # Host memory: fill it through NumPy and read it back through the view.
    host = np.from_dlpack(view)
    host[...] = a
    assert np.array_equal(np.from_dlpack(view), a)
    print("filled through NumPy; values match the source")
buffer.close()  # the view still holds the memory until it goes
