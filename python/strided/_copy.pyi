# The types of strided._copy (checked by scripts/check-typing).
from dataclasses import dataclass

from strided._strided import _AllocatingResource

__all__ = ["CopyAllocatorOptions"]

@dataclass(frozen=True)
class CopyAllocatorOptions:
    host: _AllocatingResource | None = None
    device: _AllocatingResource | None = None
