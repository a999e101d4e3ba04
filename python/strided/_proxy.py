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
    """An argument of a function decorated with args_viewable_as_strided_memory.

    It stands for an object that speaks DLPack, the CUDA Array Interface or
    the array interface (checked when the proxy is made); view(stream_ptr)
    makes the StridedMemoryView.

    Parameters
    ----------
    obj : object
        The argument.

    Attributes
    ----------
    obj : object
        The argument.
    has_dlpack : bool
        Whether view() goes through DLPack.

    Raises
    ------
    BufferError
        If obj speaks none of the protocols.
    """

    __slots__ = ("obj", "has_dlpack", "_protocol")

    def __init__(self, obj):
        # The protocol from_any_interface takes (BufferError for none).
        self._protocol = StridedMemoryView._exchange_protocol(obj)
        self.has_dlpack = self._protocol == "dlpack"
        self.obj = obj

    def view(self, stream_ptr=None):
        """The StridedMemoryView of the argument.

        By the protocol StridedMemoryView.from_any_interface takes: DLPack,
        else the CUDA Array Interface, else the array interface.

        Parameters
        ----------
        stream_ptr : int, optional
            The stream on which the memory will be used: -1 for no ordering,
            0 for the legacy default stream, or a stream handle (see
            StridedMemoryView.from_dlpack).

        Returns
        -------
        StridedMemoryView
            A new view at every call.

        Raises
        ------
        BufferError
            If the producer's memory is refused.
        """
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
    """A decorator that hands a function views of its array arguments, on request.

    The positional arguments at arg_indices reach the decorated function as
    proxies whose ``view(stream_ptr)`` is a StridedMemoryView; the other
    arguments, and every keyword argument, are passed unchanged. The
    decorator of cuda.core's name.

    Parameters
    ----------
    arg_indices : tuple of int
        The positions of the array arguments (negative positions count
        from the end of the call's arguments).

    Returns
    -------
    callable
        The decorator, which keeps the function's name and docstring.

    Raises
    ------
    TypeError
        If arg_indices is not a tuple of ints. At a call, BufferError if an
        argument at those positions speaks no exchange protocol, IndexError
        if there is no argument at a position.

    Examples
    --------
    >>> import numpy as np
    >>> import strided
    >>> @strided.args_viewable_as_strided_memory((0,))
    ... def shape_of(arr):
    ...     return arr.view(-1).shape
    >>> shape_of(np.zeros((2, 3)))
    (2, 3)
    """
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
