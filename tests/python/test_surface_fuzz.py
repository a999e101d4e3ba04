"""Hypothesis fuzz of every public callable of strided with arguments of
every type (surface_cases.py makes them).

For each call it asserts:
  (a) only the exception types documented for that callable escape (never
      SystemError, AttributeError, KeyError, AssertionError or a crash); an
      exception raised by a generated object's own hook (__index__,
      __bool__, __cuda_stream__, an interface property, a producer's
      methods) may come through unchanged;
  (b) the objects involved are unchanged after the call fails (a layout's
      shape, strides, itemsize and slice offset; a buffer's size, handle
      and closed state; a view's shape, strides, address, dtype and
      read-only flag; the bytes of every array in play), and after it
      succeeds for those that are immutable; and nothing keeps a new
      reference to an argument of a failed call;
and that a copy never succeeds into a read-only view nor writes past the
end of the Buffer a Python allocator gave it.

test_every_public_callable_is_fuzzed enumerates the surface from
strided.__all__ and dir(), so that a new method cannot go unfuzzed.

STRIDED_FUZZ_TRACE=FILE appends each call (target, arguments) to FILE,
flushed, before it is made: the last line names the call of a crash.
"""

import dataclasses
import functools
import os
import sys
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strided
from strided import (
    Buffer,
    CopyAllocatorOptions,
    DeviceMemoryResource,
    HostMemoryResource,
    ManagedMemoryResource,
    MemoryResource,
    PinnedMemoryResource,
    StridedLayout,
    StridedMemoryView,
)
from surface_cases import (
    HOOK_ERRORS,
    Exporter,
    FakeDLPack,
    FreesNothing,
    IndexRaises,
    IndexReturns,
    Opaque,
    SmallAllocator,
    Stream,
    allocators,
    arrays,
    axes,
    axis_tuples,
    buffers,
    dtypes,
    exporters,
    flags,
    forget_hook_tracebacks,
    grid_layouts,
    index_keys,
    ints,
    interface_dicts,
    itemsizes,
    junk,
    layouts,
    memory_resources,
    orders,
    producer_may_assert,
    real_stream,
    shapes,
    sizes,
    stream_ptrs,
    stream_values,
    strides_values,
    views,
)

LAYOUT_ERRORS = (TypeError, ValueError, OverflowError)
# Absurd sizes are MemoryError; the CUDA resources raise RuntimeError
# without a driver.
RESOURCE_ERRORS = (TypeError, ValueError, OverflowError, MemoryError, RuntimeError)
# RuntimeError: "Buffer has been closed".
BUFFER_ERRORS = (TypeError, ValueError, OverflowError, RuntimeError)
# BufferError: what a producer's tensor or interface cannot give; RuntimeError:
# no CUDA driver (CUDA Array Interface), or a producer's own (numpy refuses a
# stream); NotImplementedError: dtypes strided cannot express.
VIEW_ERRORS = (TypeError, ValueError, OverflowError, BufferError, RuntimeError,
               NotImplementedError, MemoryError)
COPY_ERRORS = (TypeError, ValueError, OverflowError, BufferError, RuntimeError,
               NotImplementedError, MemoryError)
DLPACK_ERRORS = (TypeError, ValueError, OverflowError, BufferError)
PROPERTY_ERRORS = (TypeError, ValueError, OverflowError, NotImplementedError)


class Violation(Exception):
    """A broken promise found inside a case (never one of strided's own
    exceptions)."""


def require(condition, message):
    if not condition:
        raise Violation(message)


class Case(NamedTuple):
    call: Callable           # what to call, with args and kwargs
    args: tuple
    kwargs: dict
    watch: tuple             # objects whose state must not change
    changes_on_success: tuple = ()  # of watch: those a success may change


# ---- Drawing calls ---------------------------------------------------------------


@functools.cache
def below(n):
    return st.integers(0, n - 1)


BOOLEANS = st.booleans()


def value(draw, spec):
    """A value of spec: a strategy, or a tuple of alternatives (values or
    strategies), one of which is taken."""
    if isinstance(spec, tuple):
        spec = spec[draw(below(len(spec)))]
        if not isinstance(spec, st.SearchStrategy):
            return spec
    return draw(spec)


def plausible_or_junk(draw, spec, junk_one_in=6):
    """Mostly a value of spec, sometimes junk."""
    return draw(junk()) if draw(below(junk_one_in)) == 0 else value(draw, spec)


KW = "keyword-only"


def draw_args(draw, params, required):
    """Positional and keyword arguments for params [(name, spec) or (name,
    spec, KW)], of which the first `required` are required: mostly the
    right count, each value mostly plausible, sometimes junk, too few, too
    many or an unknown keyword."""
    npositional = sum(1 for p in params if KW not in p)
    choices = list(range(required, npositional + 1)) * 4 + [max(required - 1, 0), npositional + 1]
    npos = choices[draw(below(len(choices)))]
    args = [checked(params[i][0], plausible_or_junk(draw, params[i][1]))
            for i in range(min(npos, npositional))]
    if npos > npositional:
        # One too many: it lands on the callee's next parameter, which may
        # take a stream (copy_from's second).
        args.append(real_stream(draw(junk())))
    kwargs = {}
    for name, spec, *_ in params[len(args):]:
        if draw(BOOLEANS):
            kwargs[name] = checked(name, plausible_or_junk(draw, spec, 5))
    if draw(below(32)) == 0:
        kwargs["no_such_argument"] = draw(junk())
    return tuple(args), kwargs


def checked(name, value):
    """A drawn argument, with a made-up stream handle given where a stream
    goes replaced by None (surface_cases.made_up_stream)."""
    return real_stream(value) if name in ("stream", "stream_ptr") else value


def one_arg(draw, spec):
    """The single argument of a METH_O method: plausible or junk."""
    return plausible_or_junk(draw, spec)


def some_junk(draw, at_most):
    return tuple(draw(junk()) for _ in range(draw(below(at_most + 1))))


# ---- The targets -----------------------------------------------------------------------

TARGETS = {}


def target(name, errors, covers=None):
    """Register make(draw) -> Case as the fuzz target name, allowed to raise
    errors; covers lists the public names it exercises (default: name)."""

    def register(make):
        TARGETS[name] = (make, errors, tuple(covers or (name,)))
        return make

    return register


# StridedLayout: construction.

CTOR_PARAMS = [("shape", shapes()), ("strides", strides_values()), ("itemsize", itemsizes()),
               ("divide_strides", flags())]


@target("StridedLayout", LAYOUT_ERRORS, covers=["StridedLayout", "_StridedLayout"])
def _(draw):
    args, kwargs = draw_args(draw, CTOR_PARAMS, 3)
    cls = value(draw, (StridedLayout, strided._StridedLayout))
    via_type_call = draw(BOOLEANS)  # tp_new (type.__call__) or vectorcall
    call = (lambda *a, **k: type.__call__(cls, *a, **k)) if via_type_call else cls
    return Case(call, args, kwargs, ())


@target("StridedLayout.dense", LAYOUT_ERRORS)
def _(draw):
    args, kwargs = draw_args(draw, [("shape", shapes()), ("itemsize", itemsizes()),
                                    ("stride_order", orders())], 2)
    return Case(StridedLayout.dense, args, kwargs, ())


@target("StridedLayout.dense_like", LAYOUT_ERRORS)
def _(draw):
    lay = draw(layouts())
    args, kwargs = draw_args(draw, [("other", (lay, layouts())), ("stride_order", orders())], 1)
    return Case(StridedLayout.dense_like, args, kwargs, (lay, *args))


# StridedLayout: methods on a layout.

def layout_method(name, params=(), required=0, meth_o=None, subjects=None):
    """A target calling layout.<name>(...): with params as a fastcall method,
    with meth_o (a strategy) as a one-argument method, else without
    arguments (a few junk ones sometimes)."""

    @target(f"StridedLayout.{name}", LAYOUT_ERRORS)
    def make(draw):
        lay = draw(subjects if subjects is not None else layouts())
        method = getattr(lay, name)
        if meth_o is not None:
            args, kwargs = (one_arg(draw, meth_o),), {}
        elif params:
            args, kwargs = draw_args(draw, list(params), required)
        else:
            args, kwargs = (some_junk(draw, 1) if draw(below(4)) == 0 else ()), {}
        return Case(method, args, kwargs, (lay,))

    return make


layout_method("to_dense", [("stride_order", orders())])
layout_method("required_size_in_bytes")
layout_method("flattened_axis_mask")
layout_method("reshaped", meth_o=shapes())
layout_method("permuted", meth_o=axis_tuples())
layout_method("flattened", [("start_axis", axes()), ("end_axis", axes()),
                            ("mask", (None, st.integers(-1, 2**64), axes()))])
layout_method("squeezed")
layout_method("unsqueezed", meth_o=(axes(), axis_tuples()))
layout_method("broadcast_to", meth_o=shapes())
layout_method("repacked", [("itemsize", itemsizes()), ("data_ptr", (st.integers(0, 64), axes())),
                           ("axis", axes()), ("keep_dim", flags())], 1)
layout_method("max_compatible_itemsize", [("max_itemsize", itemsizes()),
                                          ("data_ptr", (st.integers(0, 64), axes())),
                                          ("axis", axes())])
layout_method("sliced", meth_o=index_keys())
layout_method("coalesced")
layout_method("format")
# format_grid walks every element: small layouts only.
layout_method("format_grid", subjects=grid_layouts())


@target("StridedLayout.__getitem__", LAYOUT_ERRORS)
def _(draw):
    lay = draw(layouts())
    return Case(lambda key: lay[key], (one_arg(draw, index_keys()),), {}, (lay,))


LAYOUT_PROPERTIES = ("ndim", "shape", "strides", "strides_in_bytes", "stride_order", "volume",
                     "is_unique", "is_contiguous_c", "is_contiguous_f", "is_contiguous_any",
                     "is_dense", "offset_bounds", "min_offset", "max_offset",
                     "slice_offset_in_bytes", "itemsize", "slice_offset")


@target("StridedLayout properties", LAYOUT_ERRORS,
        covers=[f"StridedLayout.{p}" for p in LAYOUT_PROPERTIES + ("__eq__", "__hash__", "__repr__")])
def _(draw):
    lay = draw(layouts())
    other = value(draw, (layouts(), junk()))

    def read_all():
        for p in LAYOUT_PROPERTIES:
            getattr(lay, p)
        hash(lay)
        repr(lay)
        require((lay == other) != (lay != other), "== and != disagree")
        require(lay == lay, "a layout differs from itself")

    return Case(read_all, (), {}, (lay,))


# Memory resources.

RESOURCE_CLASSES = {"HostMemoryResource": HostMemoryResource, "PinnedMemoryResource": PinnedMemoryResource,
                    "LegacyPinnedMemoryResource": strided.LegacyPinnedMemoryResource,
                    "DeviceMemoryResource": DeviceMemoryResource,
                    "ManagedMemoryResource": ManagedMemoryResource, "MemoryResource": MemoryResource}

# The fields of the pool options, plausible and not, and options where a
# pool resource takes them: None, an instance, a dict of fields, junk.
VALID_OPTION_FIELDS = {
    "ipc_enabled": (False, True, 0, 1, None, ""),
    "max_size": (0, 1, 4096, -1, 1.5, 2**64),
    "numa_id": (None, 0, 1, -1, -2, 2**31, 2**63),
    "preferred_location": (None, 0, 1, -1, -2, 2**31),
    "preferred_location_type": (None, "device", "host", "host_numa", "bogus", "", 5),
}
OPTION_FIELDS = {n: v + (float("nan"), "x", junk()) for n, v in VALID_OPTION_FIELDS.items()}
OPTION_CLASSES = (strided.DeviceMemoryResourceOptions, strided.PinnedMemoryResourceOptions,
                  strided.ManagedMemoryResourceOptions)


@st.composite
def pool_options(draw, cls):
    """None, an instance of cls (of fields it takes), or a dict of fields
    (any)."""
    fields = [f.name for f in dataclasses.fields(cls)]
    kind = draw(below(3))
    if kind == 0:
        return None
    if kind == 1:
        return cls(**{n: value(draw, VALID_OPTION_FIELDS[n]) for n in fields if draw(BOOLEANS)})
    chosen = {n: value(draw, OPTION_FIELDS[n]) for n in fields if draw(BOOLEANS)}
    if draw(below(8)) == 0:
        chosen["no_such_field"] = 1
    return chosen


RESOURCE_PARAMS = {"HostMemoryResource": [("alignment", (0, 1, 2, 64, 3, 4096, 2**20, sizes()))],
                   "PinnedMemoryResource": [("options", pool_options(strided.PinnedMemoryResourceOptions))],
                   "LegacyPinnedMemoryResource": [],
                   "DeviceMemoryResource": [("device_id", (-1, 0, 1, axes())),
                                            ("options", pool_options(strided.DeviceMemoryResourceOptions))],
                   "ManagedMemoryResource": [("options", (-1, 0, 1, axes(),
                                                          pool_options(strided.ManagedMemoryResourceOptions))),
                                             ("device_id", (-1, 0, 1, axes()), KW)],
                   "MemoryResource": []}
RESOURCE_MEMBERS = ("device_id", "is_device_accessible", "is_host_accessible", "is_managed")

for _name, _cls in RESOURCE_CLASSES.items():

    def _register(name=_name, cls=_cls):
        required = 1 if name == "DeviceMemoryResource" else 0

        @target(name, RESOURCE_ERRORS,
                covers=[name] + [f"{name}.{m}" for m in RESOURCE_MEMBERS + ("__repr__",)])
        def make(draw):
            args, kwargs = draw_args(draw, RESOURCE_PARAMS[name], required)

            def construct_and_read(*a, **k):
                mr = cls(*a, **k)
                for m in RESOURCE_MEMBERS:
                    try:
                        getattr(mr, m)
                    except TypeError:  # the interface's: "must be implemented by subclasses"
                        require(cls is MemoryResource, f"{name}.{m} raised TypeError")
                repr(mr)
                return mr

            return Case(construct_and_read, args, kwargs, ())

    _register()


for _cls in OPTION_CLASSES:

    def _register_options(cls=_cls):
        fields = [f.name for f in dataclasses.fields(cls)]

        @target(cls.__name__, (TypeError, ValueError, OverflowError),
                covers=[cls.__name__] + [f"{cls.__name__}.{m}" for m in fields + ["__eq__", "__hash__",
                                                                                  "__repr__"]])
        def make(draw):
            args, kwargs = draw_args(draw, [(n, OPTION_FIELDS[n]) for n in fields], 0)

            def construct_and_read(*a, **k):
                o = cls(*a, **k)
                for n in fields:
                    getattr(o, n)
                    setattr(o, n, getattr(o, n))  # a field's value converts to itself
                repr(o)
                require(o == cls(**{n: getattr(o, n) for n in fields}), "options differ from their copy")
                require(type(o).__hash__ is None, "options are hashable")

            return Case(construct_and_read, args, kwargs, ())

    _register_options()


POOL_MEMBERS = ("close", "is_closed", "is_handle_owned", "handle", "attributes", "is_ipc_enabled", "is_mapped",
                "uuid", "allocation_handle")
POOL_CLASSES = {"DeviceMemoryResource": lambda o: DeviceMemoryResource(0, o),
                "PinnedMemoryResource": PinnedMemoryResource, "ManagedMemoryResource": ManagedMemoryResource}


@target("memory pool members", RESOURCE_ERRORS + (NotImplementedError,),
        covers=[f"{n}.{m}" for n in POOL_CLASSES for m in POOL_MEMBERS] +
        ["PinnedMemoryResource.numa_id", "ManagedMemoryResource.preferred_location"])
def _(draw):
    name = value(draw, tuple(POOL_CLASSES))
    options = value(draw, (None, {}))

    def read_pool(make, options):
        mr = make(options)  # RuntimeError without a CUDA driver
        for m in ("is_closed", "is_handle_owned", "handle", "is_ipc_enabled", "is_mapped", "uuid",
                  "numa_id", "preferred_location"):
            getattr(mr, m, None)
        for m in ("attributes", "allocation_handle"):
            try:
                getattr(mr, m)
            except (RuntimeError, NotImplementedError):
                pass
        mr.close()
        require(mr.is_closed and mr.handle == 0, "a closed resource still has its pool")

    return Case(read_pool, (POOL_CLASSES[name], options), {}, ())


ALLOCATING_RESOURCES = (HostMemoryResource(), HostMemoryResource(4096), MemoryResource())


@target("MemoryResource.allocate", RESOURCE_ERRORS,
        covers=[f"{n}.allocate" for n in RESOURCE_CLASSES])
def _(draw):
    mr = value(draw, ALLOCATING_RESOURCES)
    args, kwargs = draw_args(draw, [("size", sizes()), ("stream", stream_values())], 1)

    def allocate(*a, **k):
        buf = mr.allocate(*a, **k)
        require(isinstance(buf, Buffer) and buf.memory_resource is mr, "allocate() gave no Buffer of mr")
        buf.close()

    return Case(allocate, args, kwargs, ())


# The only pointers deallocate is given: 0 (nothing to free) and values that
# fail conversion before anything is freed. A built-in resource would free
# any other address.
DEALLOCATE_PTRS = (0, -1, 2**64, 2**100, -(2**63), None, 1.5, "0", True, b"", (0,), Opaque())


@target("MemoryResource.deallocate", RESOURCE_ERRORS,
        covers=[f"{n}.deallocate" for n in RESOURCE_CLASSES])
def _(draw):
    mr = value(draw, ALLOCATING_RESOURCES)
    ptr = value(draw, DEALLOCATE_PTRS)
    args, kwargs = draw_args(draw, [("size", sizes()), ("stream", stream_values())], 1)
    if draw(BOOLEANS) or args:
        args = (ptr, *args)
    else:  # as a keyword only when nothing positional would take its place
        kwargs["ptr"] = ptr
    return Case(mr.deallocate, args, kwargs, ())


# Buffers.

SMALL_ADDRESSES = st.integers(0, 2**16)


@target("Buffer.from_handle", BUFFER_ERRORS,
        covers=["Buffer.from_handle", "Buffer.close", "Buffer.memory_resource", "Buffer.owner"])
def _(draw):
    backing = np.zeros(16, np.uint8)
    ptrs = (backing.ctypes.data, SMALL_ADDRESSES, 2**63, 2**64 - 1, 2**64, -1, None, 1.5, "4096",
            True, b"1", axes())
    args, kwargs = draw_args(draw, [("ptr", ptrs), ("size", sizes()),
                                    ("mr", memory_resources()),
                                    ("owner", (None, None, backing, Opaque())),
                                    ("stream", stream_values(), KW)], 2)

    def from_handle(*a, **k):
        buf = Buffer.from_handle(*a, **k)
        require(isinstance(buf, Buffer) and not buf.is_closed, "from_handle() gave no open Buffer")
        buf.memory_resource, buf.owner
        buf.close()
        require(buf.is_closed, "close() left the Buffer open")

    return Case(from_handle, args, kwargs, (backing,))


@target("Buffer.__new__", BUFFER_ERRORS, covers=["Buffer"])
def _(draw):
    args, kwargs = draw_args(draw, [("a", junk()), ("b", junk())], 0)
    return Case(Buffer, args, kwargs, ())


@target("Buffer.close", BUFFER_ERRORS)
def _(draw):
    buf, keep = draw(buffers())
    args, kwargs = draw_args(draw, [("stream", stream_values())], 0)
    return Case(buf.close, args, kwargs, (buf,), changes_on_success=(buf,))


@target("Buffer.set_deallocation_stream", BUFFER_ERRORS)
def _(draw):
    buf, keep = draw(buffers())
    return Case(buf.set_deallocation_stream, (real_stream(one_arg(draw, stream_values())),), {},
                (buf,))


@target("Buffer context manager", BUFFER_ERRORS, covers=["Buffer.__enter__", "Buffer.__exit__"])
def _(draw):
    buf, keep = draw(buffers())
    exit_args = some_junk(draw, 3)

    def enter_exit():
        require(buf.__enter__() is buf, "__enter__() did not return the Buffer")
        buf.__exit__(*exit_args)
        require(buf.is_closed, "__exit__() left the Buffer open")

    return Case(enter_exit, (), {}, (buf,), changes_on_success=(buf,))


BUFFER_FLAGS = st.integers(0, 0x3FF)


@target("Buffer.__buffer__", BUFFER_ERRORS + (NotImplementedError,))
def _(draw):
    buf, keep = draw(buffers())
    args = tuple(value(draw, (BUFFER_FLAGS, junk())) for _ in range(draw(below(3))))
    return Case(buf.__buffer__, args, {}, (buf,))


BUFFER_PROPERTIES = ("handle", "size", "device_id", "is_device_accessible", "is_host_accessible",
                     "is_managed", "memory_resource", "owner", "is_closed", "is_mapped")


@target("Buffer properties", BUFFER_ERRORS,
        covers=[f"Buffer.{p}" for p in BUFFER_PROPERTIES + ("__eq__", "__hash__", "__repr__")])
def _(draw):
    buf, keep = draw(buffers())
    other = draw(buffers())[0] if draw(BOOLEANS) else draw(junk())

    def read_all():
        for p in BUFFER_PROPERTIES:
            try:
                getattr(buf, p)
            except RuntimeError:  # "Buffer has been closed"
                require(buf.is_closed, f"Buffer.{p} raised RuntimeError on an open Buffer")
        hash(buf)
        repr(buf)
        require(buf == buf and (buf == other) != (buf != other), "== and != disagree")

    return Case(read_all, (), {}, (buf,))


# Buffers: filling, copying and the DLPack export.

FILL_VALUES = (0, 255, 256, -1, 2**70, True, b"\x01", b"\x01\x02", b"\x01\x02\x03\x04", b"",
               b"abc", np.uint8(3), np.int16(-2), np.float32(1.5), np.int64(7),
               np.zeros(2, np.uint16), 1.5, "x", None, Opaque())


@target("Buffer.fill", BUFFER_ERRORS)
def _(draw):
    buf, keep = draw(buffers())
    args, kwargs = draw_args(draw, [("value", FILL_VALUES),
                                    ("stream", (None, stream_values()), KW)], 1)
    return Case(buf.fill, args, kwargs, (buf,))


def same_size_buffer(buf):
    """An open Buffer of buf's size over its own memory."""
    n = 0 if buf.is_closed else buf.size
    backing = np.zeros(max(n, 1), np.uint8)
    return Buffer.from_handle(backing.ctypes.data, n, owner=backing)


def buffer_copy_target(name, other_name):
    @target(f"Buffer.{name}", BUFFER_ERRORS + (NotImplementedError,))
    def make(draw):
        buf, keep = draw(buffers())
        other = same_size_buffer(buf) if draw(BOOLEANS) else draw(buffers())[0]
        params = [(other_name, (other, other, None, junk())),
                  ("stream", (None, stream_values()), KW),
                  ("options", (None, copy_options(), junk()), KW)]
        args, kwargs = draw_args(draw, params, 1 if name == "copy_from" else 0)
        return Case(getattr(buf, name), args, kwargs, (buf, other))

    return make


buffer_copy_target("copy_to", "dst")
buffer_copy_target("copy_from", "src")


# Managed buffers: their advice and page moves, over host memory (which they
# refuse: it is not managed) with plausible and junk locations and streams.

class DeviceLike:  # a cuda.core Device, as strided sees it
    def __init__(self, device_id):
        self.device_id = device_id


class HostLike:  # a cuda.core Host
    def __init__(self, numa_id=None, is_numa_current=False):
        self.numa_id, self.is_numa_current = numa_id, is_numa_current


LOCATIONS = (None, 0, 1, -1, -2, 2**40, "host", "device", "host_numa", "host_numa_current",
             "bogus", ("device", 0), ("host", None), ("host_numa", 1), ("device", None),
             ("host", 3), ("gpu", 0), (0,), strided.ManagedMemoryLocationType.HOST, 1.5, True,
             DeviceLike(0), DeviceLike("x"), HostLike(), HostLike(1), HostLike(None, True),
             HostLike(-1), Opaque())
MANAGED_MEMBERS = ("read_mostly", "preferred_location", "accessed_by", "prefetch", "discard",
                   "discard_prefetch")


def managed_buffer():
    backing = np.zeros(16, np.uint8)
    return strided.ManagedBuffer.from_handle(backing.ctypes.data, backing.nbytes, owner=backing)


@target("ManagedBuffer.from_handle", BUFFER_ERRORS,
        covers=["ManagedBuffer", "ManagedBuffer.from_handle"])
def _(draw):
    backing = np.zeros(16, np.uint8)
    args, kwargs = draw_args(draw, [("ptr", (backing.ctypes.data, SMALL_ADDRESSES, -1, None, 1.5)),
                                    ("size", sizes()), ("mr", memory_resources()),
                                    ("owner", (None, backing, Opaque())),
                                    ("stream", stream_values(), KW)], 2)

    def from_handle(*a, **k):
        buf = strided.ManagedBuffer.from_handle(*a, **k)
        require(type(buf) is strided.ManagedBuffer, "from_handle() gave no ManagedBuffer")
        buf.close()

    return Case(from_handle, args, kwargs, (backing,))


@target("ManagedBuffer members", BUFFER_ERRORS + (NotImplementedError, KeyError),
        covers=[f"ManagedBuffer.{m}" for m in MANAGED_MEMBERS])
def _(draw):
    buf = managed_buffer()
    if draw(below(4)) == 0:
        buf.close()
    member = value(draw, MANAGED_MEMBERS)
    location = value(draw, LOCATIONS)
    stream = real_stream(value(draw, (None, stream_values())))

    def use():
        if member in ("prefetch", "discard_prefetch"):
            getattr(buf, member)(location, stream=stream)
        elif member == "discard":
            buf.discard(stream=stream)
        elif member == "accessed_by":
            proxy = buf.accessed_by  # RuntimeError once closed
            require(location not in proxy, "host memory has advice")
            proxy.discard(location)
            proxy.add(location)  # ValueError: not managed memory
        elif draw(BOOLEANS):
            setattr(buf, member, location)
        else:
            getattr(buf, member)

    return Case(use, (), {}, (buf,))


@target("DeviceMemoryResource.peer_accessible_by", RESOURCE_ERRORS + (NotImplementedError,))
def _(draw):
    devices = tuple(value(draw, (0, 1, -1, 2**40, DeviceLike(0), None, "x", 1.5))
                    for _ in range(draw(below(4))))
    op = value(draw, ("set", "add", "discard", "update", "difference_update", "clear", "ior",
                      "contains"))

    def use(devices):
        mr = DeviceMemoryResource(0, {})  # RuntimeError without a CUDA driver
        try:
            p = mr.peer_accessible_by
            if op == "set":
                mr.peer_accessible_by = devices
            elif op in ("add", "discard"):
                for d in devices:
                    getattr(p, op)(d)
            elif op in ("update", "difference_update"):
                getattr(p, op)(devices)
            elif op == "clear":
                p.clear()
            elif op == "ior":
                p |= set(d for d in devices if isinstance(d, int))
            else:
                require(all(isinstance(d, int) or d not in p for d in devices), "junk in the set")
            require(0 not in p, "the pool's own device is listed")
        finally:
            mr.close()

    return Case(use, (devices,), {}, ())


def copy_options():
    return st.builds(strided.CopyOptions,
                     st.sampled_from(["stream", "during_api_call", "any"]),
                     st.sampled_from([None, 0, "host", ("host_numa", 0)]),
                     st.sampled_from([None, 1, HostLike(None, True)]),
                     st.sampled_from(["default", "prefer_overlap_with_compute"]))


COPY_OPTION_FIELDS = {"src_access_order": ("stream", "during_api_call", "any", "soon", None, 1,
                                           strided.MemcpySrcAccessOrder.ANY),
                      "src_location_hint": LOCATIONS, "dst_location_hint": LOCATIONS,
                      "overlap_mode": ("default", "prefer_overlap_with_compute", "", None,
                                       strided.MemcpyOverlapMode.DEFAULT)}


@target("CopyOptions", (TypeError, ValueError),
        covers=["CopyOptions"] + [f"CopyOptions.{m}" for m in list(COPY_OPTION_FIELDS) +
                                  ["__eq__", "__hash__", "__repr__"]])
def _(draw):
    args, kwargs = draw_args(draw, [(n, v) for n, v in COPY_OPTION_FIELDS.items()], 0)

    def construct_and_read(*a, **k):
        o = strided.CopyOptions(*a, **k)
        require(isinstance(o.src_access_order, strided.MemcpySrcAccessOrder) and
                isinstance(o.overlap_mode, strided.MemcpyOverlapMode), "a field was not converted")
        repr(o)
        copy = strided.CopyOptions(**{f: getattr(o, f) for f in COPY_OPTION_FIELDS})
        require(o == copy, "options differ from their copy")
        hash(o)  # TypeError for a hint that cannot be hashed

    return Case(construct_and_read, args, kwargs, ())


STR_ENUMS = (strided.ManagedMemoryLocationType, strided.MemcpySrcAccessOrder,
             strided.MemcpyOverlapMode)


@target("str enumerations", (ValueError, TypeError),
        covers=[e.__name__ for e in STR_ENUMS] +
        [f"{e.__name__}.{m.name}" for e in STR_ENUMS for m in e])
def _(draw):
    enum = value(draw, STR_ENUMS)
    x = value(draw, (st.sampled_from([m.value for e in STR_ENUMS for m in e]), junk()))

    def look_up(x):
        member = enum(x)
        require(member is enum[member.name] and member == x, "an enumeration member differs")

    return Case(look_up, (x,), {}, ())

MAX_VERSIONS = (None, (1, 0), (0, 8), (2, 1), (1,), (1, 0, 0), [1, 0], ("a", 0))


@target("Buffer.__dlpack__", BUFFER_ERRORS + (BufferError,),
        covers=["Buffer.__dlpack__", "Buffer.__dlpack_device__"])
def _(draw):
    buf, keep = draw(buffers())
    args, kwargs = draw_args(draw, [("stream", (None, stream_values()), KW),
                                    ("max_version", MAX_VERSIONS, KW),
                                    ("dl_device", (None, (1, 0), junk()), KW),
                                    ("copy", (None, False, True, junk()), KW)], 0)

    def export(*a, **k):
        device = buf.__dlpack_device__()
        require(device == (1, 0), f"a Buffer of host memory exported to {device}")
        capsule = buf.__dlpack__(*a, **k)
        require(type(capsule).__name__ == "PyCapsule", "__dlpack__() gave no capsule")
        require(np.from_dlpack(buf).size == buf.size, "the exported tensor has another size")

    return Case(export, args, kwargs, (buf,))


# StridedMemoryView: construction.

def may_assert(args, kwargs):
    return any(producer_may_assert(x) for x in (*args, *kwargs.values()))


@target("StridedMemoryView.from_dlpack", VIEW_ERRORS)
def _(draw):
    args, kwargs = draw_args(draw, [("obj", exporters()), ("stream_ptr", stream_ptrs())], 1)
    return Case(StridedMemoryView.from_dlpack, args, kwargs, tuple(a for a in args if isinstance(a, np.ndarray)))


@target("StridedMemoryView.from_array_interface", VIEW_ERRORS)
def _(draw):
    obj = one_arg(draw, exporters())
    return Case(StridedMemoryView.from_array_interface, (obj,), {}, (obj,) if isinstance(obj, np.ndarray) else ())


@target("StridedMemoryView.from_array_interface (broken interfaces)", VIEW_ERRORS,
        covers=["StridedMemoryView.from_array_interface"])
def _(draw):
    d, keep = draw(interface_dicts())
    return Case(StridedMemoryView.from_array_interface, (Exporter(d, base=keep),), {}, (keep,))


@target("StridedMemoryView.from_cuda_array_interface (broken interfaces)", VIEW_ERRORS,
        covers=["StridedMemoryView.from_cuda_array_interface"])
def _(draw):
    d, _ = draw(interface_dicts(cuda=True))
    stream_ptr = real_stream(plausible_or_junk(draw, stream_ptrs(), 8))
    return Case(StridedMemoryView.from_cuda_array_interface,
                (Exporter(d, "__cuda_array_interface__"), stream_ptr), {}, ())


@target("StridedMemoryView.from_cuda_array_interface", VIEW_ERRORS)
def _(draw):
    args, kwargs = draw_args(draw, [("obj", exporters(cuda=True)), ("stream_ptr", stream_ptrs())], 1)
    return Case(StridedMemoryView.from_cuda_array_interface, args, kwargs, ())


@target("StridedMemoryView.from_any_interface", VIEW_ERRORS)
def _(draw):
    args, kwargs = draw_args(draw, [("obj", (exporters(), exporters(cuda=True))),
                                    ("stream_ptr", stream_ptrs())], 1)
    return Case(StridedMemoryView.from_any_interface, args, kwargs, ())


@target("StridedMemoryView (deprecated constructor)", VIEW_ERRORS, covers=["StridedMemoryView"])
def _(draw):
    args, kwargs = draw_args(draw, [("obj", exporters()), ("stream_ptr", stream_ptrs())], 0)
    return Case(StridedMemoryView, args, kwargs, ())


LAYOUT_FORM = [("layout", layouts()), ("dtype", dtypes()), ("is_readonly", flags())]
SHAPE_FORM = [("shape", shapes()), ("strides", strides_values()), ("itemsize", itemsizes(), KW),
              ("dtype", dtypes(), KW), ("is_readonly", flags(), KW)]
BUFFER_OBJECTS = buffers().map(lambda bk: bk[0])


@target("StridedMemoryView.from_buffer", VIEW_ERRORS)
def _(draw):
    buf, keep = draw(buffers())
    params = [("buffer", (buf, BUFFER_OBJECTS))] + (LAYOUT_FORM if draw(BOOLEANS) else SHAPE_FORM)
    args, kwargs = draw_args(draw, params, 2)
    return Case(StridedMemoryView.from_buffer, args, kwargs, (buf,))


# StridedMemoryView: methods and properties.

@target("StridedMemoryView.view", VIEW_ERRORS)
def _(draw):
    v, a = draw(views())
    args, kwargs = draw_args(draw, [("layout", (None, layouts(), v.layout)), ("dtype", dtypes())], 0)
    return Case(v.view, args, kwargs, (v, a))


@target("StridedMemoryView.relaned", VIEW_ERRORS)
def _(draw):
    v, a = draw(views())
    args, kwargs = draw_args(draw, [("lanes", ints())], 1)
    return Case(v.relaned, args, kwargs, (v, a))


VIEW_OBJECTS = views().map(lambda va: va[0])


def small_allocators(args, kwargs):
    """The SmallAllocators among a copy's allocator arguments."""
    for a in (*args, *kwargs.values()):
        sides = a.values() if isinstance(a, dict) else (getattr(a, "host", None), getattr(a, "device", None))
        yield from (s for s in sides if isinstance(s, SmallAllocator))


def twin(v, a):
    """(view, array) like v over a copy of a, its memory; or v and a
    themselves when no such view can be made."""
    b = np.array(a, copy=True)
    for make in (lambda: StridedMemoryView.from_buffer(Buffer.from_handle(b.ctypes.data, b.nbytes, owner=b),
                                                        v.layout, dtype=v.dtype),
                 lambda: StridedMemoryView.from_array_interface(b)):
        try:
            return make(), b
        except (BufferError, TypeError, ValueError):
            pass
    return v, a


def copy_target(name):
    @target(f"StridedMemoryView.{name}", COPY_ERRORS)
    def make(draw):
        v, a = draw(views())
        w, b = draw(views())
        # Mostly views that can be copied (a twin of v, v itself, two
        # overlapping views of one array), so that the other arguments are
        # read; sometimes any view.
        how = value(draw, ("twin", "twin", "self", "overlap", "other"))
        if how == "twin":
            w, b = twin(v, a)
        elif how == "self":
            w, b = v, a
        elif how == "overlap" and v.shape and v.shape[0] > 1:
            w = v.view(v.layout[1:])
            v = v.view(v.layout[:-1])
            b = a
        params = [("other", (w, VIEW_OBJECTS)), ("stream", (None, stream_values())),
                  ("allocator", allocators()), ("blocking", flags())]
        args, kwargs = draw_args(draw, params, 1)
        dst = v if name == "copy_from" else (args[0] if args else kwargs.get("other"))
        readonly_dst = isinstance(dst, StridedMemoryView) and dst.readonly

        def copy(*x, **k):
            try:
                getattr(v, name)(*x, **k)
            finally:
                require(not any(small.overrun() for small in small_allocators(x, k)),
                        "the copy wrote past the end of an allocator's Buffer")
            require(not readonly_dst, "a copy into a read-only view succeeded")

        return Case(copy, args, kwargs, (v, w, a, b), changes_on_success=(a, b))

    return make


copy_target("copy_from")
copy_target("copy_to")


@target("StridedMemoryView.copy_from (overlapping, with an allocator)", COPY_ERRORS,
        covers=["StridedMemoryView.copy_from"])
def _(draw):
    """An overlapping copy, which takes a temporary from the allocator."""
    n = draw(below(6)) + 2
    a = np.arange(n * 3, dtype=value(draw, (np.uint8, np.int32, np.float64))).reshape(n, 3)
    whole = StridedMemoryView.from_array_interface(a)
    dst, src = whole.view(whole.layout[1:]), whole.view(whole.layout[:-1])
    args, kwargs = draw_args(draw, [("other", (src,)), ("stream", (None, stream_values()), KW),
                                    ("allocator", allocators(), KW), ("blocking", flags(), KW)], 1)

    def copy(*x, **k):
        try:
            dst.copy_from(*x, **k)
        finally:
            require(not any(small.overrun() for small in small_allocators(x, k)),
                    "the copy wrote past the end of an allocator's Buffer")

    return Case(copy, args, kwargs, (dst, src, a), changes_on_success=(a,))


DLPACK_PARAMS = [
    ("stream", (None, stream_ptrs()), KW),
    ("max_version", (None, (1, 0), (1, 3), (0, 8), (2, 0), (1,), [1, 0], (1, 0, 0), ("1", 0),
                     (2**64, 0), (-(2**64), 0), (True, 0), 1), KW),
    ("dl_device", (None, (1, 0), (2, 0), "cpu"), KW),
    ("copy", (None, False, True, flags()), KW),
]


@target("StridedMemoryView.__dlpack__", DLPACK_ERRORS)
def _(draw):
    v, a = draw(views())
    args, kwargs = draw_args(draw, DLPACK_PARAMS, 0)
    return Case(v.__dlpack__, args, kwargs, (v, a))


VIEW_PROPERTIES = ("ptr", "device_ptr", "shape", "strides", "size", "dtype", "element_bits",
                   "padded", "device_id", "is_device_accessible", "readonly", "exporting_obj",
                   "layout", "_layout", "buffer", "__array_interface__")


@target("StridedMemoryView properties", PROPERTY_ERRORS,
        covers=[f"StridedMemoryView.{p}" for p in VIEW_PROPERTIES +
                ("__cuda_array_interface__", "__dlpack_device__", "__repr__")])
def _(draw):
    v, a = draw(views())

    def read_all():
        for p in VIEW_PROPERTIES:
            getattr(v, p)
        v.__dlpack_device__()
        repr(v)
        # Host memory has no CUDA Array Interface: hasattr says so.
        require(not hasattr(v, "__cuda_array_interface__"), "a host view has __cuda_array_interface__")

    return Case(read_all, (), {}, (v, a))


# Tensor maps. The views drawn are of host memory, which as_tensor_map
# refuses once it has read its arguments ("The tensor must be
# device-accessible"); where a device reaches host memory a map is made and
# its members are read. test_tensor_map.py reads them through the fake
# driver.

TENSOR_MAP_ENUMS = (strided.TensorMapDataType, strided.TensorMapInterleave,
                    strided.TensorMapSwizzle, strided.TensorMapL2Promotion, strided.TensorMapOOBFill)
TENSOR_MAP_ERRORS = (TypeError, ValueError, OverflowError, RuntimeError)
BOXES = st.lists(st.integers(-2, 300), max_size=6).map(tuple)


def tensor_map_enum(enum):
    return (None, st.sampled_from(list(enum)), st.integers(-1, 4))


TENSOR_MAP_OPTIONS = [("element_strides", (None, BOXES)),
                      ("data_type", (None, st.sampled_from(list(strided.TensorMapDataType)), dtypes())),
                      ("interleave", tensor_map_enum(strided.TensorMapInterleave)),
                      ("swizzle", tensor_map_enum(strided.TensorMapSwizzle)),
                      ("l2_promotion", tensor_map_enum(strided.TensorMapL2Promotion)),
                      ("oob_fill", tensor_map_enum(strided.TensorMapOOBFill))]
DESCRIPTOR_MEMBERS = ("handle", "device", "rank", "data_type", "interleave", "swizzle", "l2_promotion",
                      "oob_fill", "global_address", "global_dim", "global_strides", "box_dim",
                      "element_strides")


@target("StridedMemoryView.as_tensor_map", TENSOR_MAP_ERRORS,
        covers=["StridedMemoryView.as_tensor_map"] +
        [f"TensorMapDescriptor.{m}" for m in DESCRIPTOR_MEMBERS + ("__repr__", "__buffer__", "replace_address")])
def _(draw):
    v, a = draw(views())
    options = (None, None, {"box_dim": (16,)}, BOXES.map(lambda b: {"box_dim": b}),
               BOXES.map(strided.TensorMapDescriptorOptions))
    args, kwargs = draw_args(draw, [("box_dim", (None, BOXES, [16])), ("options", options, KW)] +
                             [(n, spec, KW) for n, spec in TENSOR_MAP_OPTIONS], 0)
    other = value(draw, (VIEW_OBJECTS, junk()))

    def make(*x, **k):
        d = v.as_tensor_map(*x, **k)
        require(isinstance(d, strided.TensorMapDescriptor) and v.is_device_accessible,
                "a tensor map of memory no device reaches")
        for m in DESCRIPTOR_MEMBERS:
            getattr(d, m)
        require(len(bytes(d)) == 128 and repr(d).startswith("TensorMapDescriptor(tiled, "),
                "a descriptor that is not 128 bytes")
        try:
            d.replace_address(other)
        except (TypeError, ValueError, BufferError, RuntimeError):
            pass

    return Case(make, args, kwargs, (v, a))


@target("TensorMapDescriptor", (RuntimeError, TypeError))
def _(draw):
    return Case(strided.TensorMapDescriptor, some_junk(draw, 2), {}, ())


@target("TensorMapDescriptorOptions", (TypeError, ValueError),
        covers=["TensorMapDescriptorOptions"] +
        [f"TensorMapDescriptorOptions.{m}" for m, _ in TENSOR_MAP_OPTIONS] +
        [f"TensorMapDescriptorOptions.{m}" for m in ("__eq__", "__hash__", "__repr__")])
def _(draw):
    args, kwargs = draw_args(draw, [("box_dim", (BOXES, [16]))] + TENSOR_MAP_OPTIONS, 1)

    def construct_and_read(*x, **k):
        o = strided.TensorMapDescriptorOptions(*x, **k)
        require(type(o.box_dim) is tuple, "box_dim is not a tuple")
        repr(o)
        require(o == dataclasses.replace(o), "options differ from their copy")
        require(type(o).__hash__ is None, "options are hashable")

    return Case(construct_and_read, args, kwargs, ())


@target("TensorMap enumerations", (ValueError, TypeError),
        covers=[e.__name__ for e in TENSOR_MAP_ENUMS] +
        [f"{e.__name__}.{m.name}" for e in TENSOR_MAP_ENUMS for m in e])
def _(draw):
    enum = value(draw, TENSOR_MAP_ENUMS)
    x = value(draw, (st.integers(-2, 14), junk()))

    def look_up(x):
        member = enum(x)
        require(member is enum[member.name] and int(member) == x, "an enumeration member differs")

    return Case(look_up, (x,), {}, ())


# Module functions.

@target("copy_plan", LAYOUT_ERRORS)
def _(draw):
    args = tuple(value(draw, (layouts(), VIEW_OBJECTS, junk())) for _ in range(draw(below(4))))
    return Case(strided.copy_plan, args, {}, tuple(x for x in args if isinstance(x, StridedLayout)))


@target("CopyAllocatorOptions", (TypeError,))
def _(draw):
    args, kwargs = draw_args(draw, [("host", memory_resources()), ("device", memory_resources())], 0)
    return Case(CopyAllocatorOptions, args, kwargs, ())


ARG_INDICES = st.lists(st.integers(-3, 3), max_size=3).map(tuple)


@target("args_viewable_as_strided_memory", (TypeError, BufferError, IndexError) + VIEW_ERRORS)
def _(draw):
    indices = value(draw, (ARG_INDICES, junk()))
    objs = tuple(value(draw, (arrays(), exporters())) for _ in range(draw(below(4))))
    stream_ptr = real_stream(draw(stream_ptrs()))

    def decorate_and_call(*objs):
        @strided.args_viewable_as_strided_memory(indices)
        def f(*xs):
            return [x.view(stream_ptr) if hasattr(x, "view") else x for x in xs]

        f(*objs)

    return Case(decorate_and_call, objs, {}, ())


# Sharing with other processes (CUDA IPC): without a driver nothing is shared, and every
# descriptor the fuzz makes is refused by its format or its driver.

IPC_ERRORS = (TypeError, ValueError, OverflowError, RuntimeError, MemoryError)
IPC_PAYLOADS = (b"", b"STRDIPCB", b"STRDIPCB" + bytes(184), bytes(192), b"\xff" * 192,
                b"STRDIPCV" + bytes(320), bytes(360))


def ipc_descriptors(draw):
    payload = value(draw, IPC_PAYLOADS)
    if draw(BOOLEANS):
        return strided.IPCBufferDescriptor._init(payload, value(draw, (0, 1, 64, 2**40)))
    return strided.IPCViewDescriptor._init(payload)


@target("IPC descriptors", IPC_ERRORS,
        covers=["Buffer.ipc_descriptor", "Buffer.get_ipc_descriptor", "Buffer.from_ipc_descriptor",
                "StridedMemoryView.get_ipc_descriptor", "StridedMemoryView.from_ipc_descriptor",
                "IPCBufferDescriptor.size", "IPCViewDescriptor.nbytes"])
def _(draw):
    buf, keep = draw(buffers())
    v, a = draw(views())
    descriptor = ipc_descriptors(draw) if draw(BOOLEANS) else draw(junk())
    mr = value(draw, (None, HostMemoryResource(), MemoryResource())) if draw(BOOLEANS) else draw(junk())
    stream = draw(stream_values())
    which = value(draw, ("buffer", "get", "from_buffer", "view", "from_view"))

    def share():
        if isinstance(descriptor, strided.IPCBufferDescriptor):
            descriptor.size
        if isinstance(descriptor, strided.IPCViewDescriptor):
            descriptor.nbytes
        if which == "buffer":
            buf.ipc_descriptor
        elif which == "get":
            buf.get_ipc_descriptor()
        elif which == "from_buffer":
            Buffer.from_ipc_descriptor(mr, descriptor, stream=stream)
        elif which == "view":
            v.get_ipc_descriptor(stream=stream)
        else:
            StridedMemoryView.from_ipc_descriptor(descriptor, mr, stream=stream)

    return Case(share, (), {}, (buf, v))


@target("IPC pools", IPC_ERRORS,
        covers=[f"{n}.{m}" for n in ("DeviceMemoryResource", "PinnedMemoryResource")
                for m in ("from_allocation_handle", "from_registry", "register")])
def _(draw):
    cls = value(draw, (DeviceMemoryResource, PinnedMemoryResource))
    args = some_junk(draw, 3)
    which = value(draw, ("from_allocation_handle", "from_registry", "register"))

    def call():
        if which == "register":
            cls.register(*args)  # not an instance: TypeError
        else:
            getattr(cls, which)(*args)

    return Case(call, (), {}, ())


@target("IPC handles", IPC_ERRORS,
        covers=["IPCAllocationHandle", "IPCAllocationHandle.close", "IPCAllocationHandle.handle",
                "IPCAllocationHandle.is_closed", "IPCAllocationHandle.uuid", "IPCBufferDescriptor",
                "IPCViewDescriptor"])
def _(draw):
    args = some_junk(draw, 2)
    cls = value(draw, (strided.IPCAllocationHandle, strided.IPCBufferDescriptor,
                       strided.IPCViewDescriptor))
    fd = value(draw, (-1, 2**40, "x", None, 1.5)) if draw(BOOLEANS) else None

    def make():
        if fd is None:
            cls(*args)  # RuntimeError: made by the library only
            return
        h = strided.IPCAllocationHandle._init(fd, None)  # refused before it owns anything
        h.handle, h.is_closed, h.uuid
        h.close()

    def pipe_handle():
        r, w = os.pipe()
        os.close(w)
        h = strided.IPCAllocationHandle._init(r, None)
        require(not h.is_closed and h.handle == r and h.uuid is None, "a new handle is not open")
        h.close()
        require(h.is_closed and h.handle == -1, "a closed handle is open")

    return Case(make if draw(BOOLEANS) else pipe_handle, (), {}, ())


# ---- The test -------------------------------------------------------------------------------


def state(obj):
    """What must not change about obj."""

    def attempt(f):
        try:
            return ("ok", f())
        except Exception as e:  # a closed Buffer may refuse
            return ("raises", type(e))

    if isinstance(obj, StridedLayout):
        return ("layout", obj.shape, obj.strides, obj.itemsize, obj.slice_offset, obj.format())
    if isinstance(obj, Buffer):
        return ("buffer", attempt(lambda: obj.size), attempt(lambda: obj.handle), obj.is_closed)
    if isinstance(obj, StridedMemoryView):
        return ("view", obj.shape, obj.strides, obj.ptr, obj.readonly, str(obj.dtype), obj.size,
                state(obj.layout))
    if isinstance(obj, np.ndarray):
        return ("array", obj.shape, obj.strides, obj.flags.writeable, obj.tobytes())
    return ("other", id(obj))


def check_error(e, errors, case):
    if id(e) in HOOK_ERRORS:
        return  # a generated object's own exception, come through unchanged
    if isinstance(e, AssertionError) and may_assert(case.args, case.kwargs):
        return  # cuda.core's asserts on a malformed DLPack producer, kept
    never = (SystemError, AttributeError, KeyError, AssertionError)
    assert isinstance(e, errors) and not isinstance(e, never), (
        f"{type(e).__name__}: {e} escaped (allowed: {', '.join(t.__name__ for t in errors)})")


# Arguments whose references are counted: objects of these types made for
# the case (ints, strings and other shared values are referenced from all
# over the interpreter).
COUNTED = (np.ndarray, StridedLayout, Buffer, StridedMemoryView, dict, list, Exporter, FakeDLPack,
           FreesNothing, Opaque, IndexRaises, IndexReturns, Stream)


def counted(case):
    return [x for x in (*case.args, *case.kwargs.values()) if isinstance(x, COUNTED)]


TRACE = os.environ.get("STRIDED_FUZZ_TRACE")


def trace(name, case):
    if TRACE:
        with open(TRACE, "a") as f:
            f.write(f"{name}: {case.args!r} {case.kwargs!r}\n")


@pytest.mark.parametrize("name", sorted(TARGETS))
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_surface(name, data):
    make, errors, _ = TARGETS[name]
    case = make(data.draw)
    before = [state(o) for o in case.watch]
    refs = [sys.getrefcount(x) for x in counted(case)]
    failed = None
    trace(name, case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            case.call(*case.args, **case.kwargs)
        except Violation:
            raise
        except Exception as e:
            failed = e
    if failed is not None:
        check_error(failed, errors, case)
        failed = type(failed)  # drop the traceback and what its frames hold
        forget_hook_tracebacks()
    after = [state(o) for o in case.watch]
    may_change = {id(c) for c in case.changes_on_success} if failed is None else set()
    for i, (b, a) in enumerate(zip(before, after)):
        if id(case.watch[i]) not in may_change:
            assert a == b, (f"{type(case.watch[i]).__name__} changed by a "
                            f"{'failed' if failed else 'successful'} call")
    # Nothing keeps a reference to an argument of a failed call.
    if failed is not None:
        assert refs == [sys.getrefcount(x) for x in counted(case)], "a failed call kept a reference"


# ---- Coverage of the surface --------------------------------------------------------------


def public_surface():
    """Every public callable of strided: the module's functions and classes,
    each class's public methods and properties, and the dunders that take
    arguments or describe the object."""
    names = set()
    dunders = {"__dlpack__", "__dlpack_device__", "__array_interface__", "__cuda_array_interface__",
               "__getitem__", "__buffer__", "__enter__", "__exit__", "__eq__", "__hash__", "__repr__"}
    for n in strided.__all__:
        obj = getattr(strided, n)
        if n in ("MAX_NDIM", "__version__"):
            continue
        names.add(n)
        if isinstance(obj, type) and obj.__module__.startswith("strided"):
            if obj is strided._StridedLayout:
                continue  # the same class as StridedLayout
            for m in vars(obj):
                if not m.startswith("_") or m in dunders or m == "_layout":
                    if obj is CopyAllocatorOptions:
                        continue  # a dataclass: its fields are its constructor's arguments
                    names.add(f"{n}.{m}")
    return names


def test_every_public_callable_is_fuzzed():
    covered = {c for _, _, covers in TARGETS.values() for c in covers}
    covered |= {"StridedLayout.__getitem__"}
    missing = public_surface() - covered
    assert not missing, f"not fuzzed: {sorted(missing)}"
