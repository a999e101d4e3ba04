"""strided: n-dimensional strided layouts, buffers and views for host and CUDA memory.

``StridedLayout`` (also importable as ``_StridedLayout``) matches cuda.core's
``_StridedLayout``; see docs/layout.md for the documented differences.
"""

from strided._strided import MAX_NDIM, StridedLayout, _StridedLayout, __version__

__all__ = ["MAX_NDIM", "StridedLayout", "_StridedLayout", "__version__"]
