# The types of strided._tensor_map (checked by scripts/check-typing).
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy
from numpy.typing import DTypeLike

from strided._strided import StridedMemoryView, _AnyProducer

__all__ = [
    "TensorMapDataType",
    "TensorMapDescriptor",
    "TensorMapDescriptorOptions",
    "TensorMapInterleave",
    "TensorMapL2Promotion",
    "TensorMapOOBFill",
    "TensorMapSwizzle",
]

class TensorMapDataType(enum.IntEnum):
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12

class TensorMapInterleave(enum.IntEnum):
    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2

class TensorMapSwizzle(enum.IntEnum):
    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3

class TensorMapL2Promotion(enum.IntEnum):
    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3

class TensorMapOOBFill(enum.IntEnum):
    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1

# The fields hold what __post_init__ makes of the arguments: tuples of ints, a
# TensorMapDataType or a numpy dtype.
@dataclass
class TensorMapDescriptorOptions:
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...] | None = None
    data_type: TensorMapDataType | numpy.dtype[Any] | None = None
    interleave: TensorMapInterleave = ...
    swizzle: TensorMapSwizzle = ...
    l2_promotion: TensorMapL2Promotion = ...
    oob_fill: TensorMapOOBFill = ...
    def __init__(
        self,
        box_dim: Iterable[int],
        element_strides: Iterable[int] | None = None,
        data_type: TensorMapDataType | DTypeLike | None = None,
        interleave: TensorMapInterleave = ...,
        swizzle: TensorMapSwizzle = ...,
        l2_promotion: TensorMapL2Promotion = ...,
        oob_fill: TensorMapOOBFill = ...,
    ) -> None: ...
    def __post_init__(self) -> None: ...

class TensorMapDescriptor:
    def __init__(self) -> None: ...
    @property
    def handle(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def rank(self) -> int: ...
    @property
    def data_type(self) -> TensorMapDataType: ...
    @property
    def interleave(self) -> TensorMapInterleave: ...
    @property
    def swizzle(self) -> TensorMapSwizzle: ...
    @property
    def l2_promotion(self) -> TensorMapL2Promotion: ...
    @property
    def oob_fill(self) -> TensorMapOOBFill: ...
    @property
    def global_address(self) -> int: ...
    @property
    def global_dim(self) -> tuple[int, ...]: ...
    @property
    def global_strides(self) -> tuple[int, ...]: ...
    @property
    def box_dim(self) -> tuple[int, ...]: ...
    @property
    def element_strides(self) -> tuple[int, ...]: ...
    def __bytes__(self) -> bytes: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def replace_address(self, tensor: StridedMemoryView | _AnyProducer) -> None: ...
