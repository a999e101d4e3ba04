"""args_viewable_as_strided_memory: a decorator that hands a function proxies
of its array arguments, which become StridedMemoryView objects on request
(cuda.core's decorator of the same name). A proxy takes the protocol
StridedMemoryView.from_any_interface would: DLPack, else the CUDA Array
Interface, else the array interface."""

import functools

from strided._strided import StridedMemoryView

__all__ = ["args_viewable_as_strided_memory"]

_KINDS = {"dlpack": "DLPack", "cai": "CUDA Array Interface", "array": "array interface"}


class _StridedMemoryViewProxy:
    """An object that speaks DLPack, the CUDA Array Interface or the array
    interface, checked when the proxy is made; view(stream_ptr) makes the
    StridedMemoryView."""

    __slots__ = ("obj", "has_dlpack", "_protocol")

    def __init__(self, obj):
        # The protocol from_any_interface takes (BufferError for none).
        self._protocol = StridedMemoryView._exchange_protocol(obj)
        self.has_dlpack = self._protocol == "dlpack"
        self.obj = obj

    def view(self, stream_ptr=None):
        if self.has_dlpack:
            return StridedMemoryView.from_dlpack(self.obj, stream_ptr)
        if self._protocol == "cai":
            return StridedMemoryView.from_cuda_array_interface(self.obj, stream_ptr)
        # Host memory orders nothing; from_any_interface checks stream_ptr
        # all the same.
        return StridedMemoryView.from_any_interface(self.obj, stream_ptr)

    def __repr__(self):
        kind = _KINDS[self._protocol]
        return f"<_StridedMemoryViewProxy of {type(self.obj).__name__} via {kind}>"


def args_viewable_as_strided_memory(arg_indices: tuple):
    """Decorate a function so that the positional arguments at arg_indices
    arrive as proxies whose .view(stream_ptr) is a StridedMemoryView; keyword
    arguments are passed unchanged. arg_indices must be a tuple of ints."""
    if not isinstance(arg_indices, tuple):
        raise TypeError(
            f"arg_indices must be a tuple of argument positions, got {type(arg_indices).__name__}")
    for i in arg_indices:
        if not isinstance(i, int):
            raise TypeError(f"arg_indices must hold ints, got {type(i).__name__}")

    def wrapped_func_with_indices(func):
        @functools.wraps(func)
        def wrapped_func(*args, **kwargs):
            args = list(args)
            for idx in arg_indices:
                args[idx] = _StridedMemoryViewProxy(args[idx])
            return func(*args, **kwargs)

        return wrapped_func

    return wrapped_func_with_indices
