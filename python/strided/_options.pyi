# The types of strided._options (checked by scripts/check-typing). The fields convert what
# is assigned to them (bool(), int()); the types are what they hold.
from dataclasses import dataclass
from typing import Literal, SupportsIndex, SupportsInt

__all__ = [
    "DeviceMemoryResourceOptions",
    "ManagedMemoryResourceOptions",
    "PinnedMemoryResourceOptions",
]

_IntLike = SupportsInt | SupportsIndex

@dataclass(slots=True)
class DeviceMemoryResourceOptions:
    ipc_enabled: bool = False
    max_size: int = 0
    def __init__(self, ipc_enabled: object = False, max_size: _IntLike = 0) -> None: ...

@dataclass(slots=True)
class PinnedMemoryResourceOptions:
    ipc_enabled: bool = False
    max_size: int = 0
    numa_id: int | None = None
    def __init__(
        self, ipc_enabled: object = False, max_size: _IntLike = 0, numa_id: _IntLike | None = None
    ) -> None: ...

@dataclass(slots=True)
class ManagedMemoryResourceOptions:
    preferred_location: int | None = None
    preferred_location_type: Literal["device", "host", "host_numa"] | str | None = None
    def __init__(
        self,
        preferred_location: _IntLike | None = None,
        preferred_location_type: Literal["device", "host", "host_numa"] | str | None = None,
    ) -> None: ...
