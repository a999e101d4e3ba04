# The types of strided._proxy (checked by scripts/check-typing).
from collections.abc import Callable
from typing import Any, TypeVar

from strided._strided import StridedMemoryView

__all__ = ["args_viewable_as_strided_memory"]

_R = TypeVar("_R")

class _StridedMemoryViewProxy:
    obj: Any
    has_dlpack: bool
    def __init__(self, obj: object) -> None: ...
    def view(self, stream_ptr: int | None = None) -> StridedMemoryView: ...

# The decorated function takes the arrays themselves where it receives proxies: its
# parameters are not the wrapper's.
def args_viewable_as_strided_memory(
    arg_indices: tuple[int, ...],
) -> Callable[[Callable[..., _R]], Callable[..., _R]]: ...
