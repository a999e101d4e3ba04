# The types of strided._options (checked by scripts/check-typing). The fields convert what
# is assigned to them (bool(), int()); the types are what they hold.
import enum
from dataclasses import dataclass
from typing import Literal, SupportsIndex, SupportsInt

__all__ = [
    "CopyOptions",
    "DeviceMemoryResourceOptions",
    "ManagedMemoryLocationType",
    "ManagedMemoryResourceOptions",
    "MemcpyOverlapMode",
    "MemcpySrcAccessOrder",
    "PinnedMemoryResourceOptions",
]

class ManagedMemoryLocationType(enum.StrEnum):
    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"

class MemcpySrcAccessOrder(enum.StrEnum):
    STREAM = "stream"
    DURING_API_CALL = "during_api_call"
    ANY = "any"

class MemcpyOverlapMode(enum.StrEnum):
    DEFAULT = "default"
    PREFER_OVERLAP_WITH_COMPUTE = "prefer_overlap_with_compute"

# The hints take any location form ManagedBuffer.prefetch takes (strided._strided._Location),
# or None.
@dataclass(frozen=True)
class CopyOptions:
    src_access_order: MemcpySrcAccessOrder | str = "stream"
    src_location_hint: object = None
    dst_location_hint: object = None
    overlap_mode: MemcpyOverlapMode | str = "default"
    def __post_init__(self) -> None: ...

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
