"""Argument values of every kind for the fuzz of strided's Python surface
(test_surface_fuzz.py), and the objects the calls are made on.

Values come in two families: plausible ones for a parameter (an axis, a
shape, a stream, ...) that reach deep into a call, and junk, which is
anything at all: ints at the int64 edges, bools, floats, None, strings,
bytes, containers of the wrong length or nesting, dicts, and objects whose
hooks misbehave (__index__ raising, or returning a non-int; __bool__,
__cuda_stream__ and __array_interface__ raising). Hooks raise either a
built-in exception or Boom, a type of their own: a user's exception that
strided may let through unchanged.

Every object here lives in host memory: numpy arrays, Buffers over them
(owner= the array) or from HostMemoryResource, and views of those. Nothing
touches a GPU, and no generated pointer is ever read or written: the calls
that take a raw address (Buffer.from_handle, the array interfaces) are
given memory resources that free nothing, and what they make is never
copied from or to.
"""

import functools
import os

import numpy as np
from hypothesis import strategies as st

from gpu_util import cuda_device_count

import strided
from strided import Buffer, HostMemoryResource, StridedLayout, StridedMemoryView

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

INT_EDGES = (0, 1, -1, 2, 3, INT64_MAX, INT64_MAX + 1, INT64_MAX + 2, INT64_MIN,
             INT64_MIN + 1, INT64_MIN - 1, 2**64 - 1, 2**64, -(2**64), 2**31 - 1, 2**31,
             -(2**31) - 1, 2**32, 2**100, 63, 64, 65)


class Boom(Exception):
    """An exception of the user's own, raised by a generated object's hook."""


# A CUDA stream handle cannot be checked by anyone: the driver dereferences
# whatever it is handed, and a made-up handle crashes the process (the
# documented contract of every stream parameter is "a handle the caller
# owns"). So made-up handles are generated only where no real driver runs
# (CI, the fake driver); on a GPU machine streams are the special handles 0,
# 1 and 2 (and values strided refuses before the driver sees them).
REAL_CUDA = cuda_device_count() > 0 and "STRIDED_CUDA_DRIVER" not in os.environ
MADE_UP_HANDLES = () if REAL_CUDA else (7, INT64_MAX, 2**64 - 1)



def made_up_stream(value):
    """Whether value, given where a stream goes, would hand a real driver a
    stream handle nobody made (only ever True where a real driver runs):
    an int, an __index__ object or a __cuda_stream__ object whose handle is
    in range but not one of the special handles 0, 1 and 2."""
    if not REAL_CUDA:
        return False
    if isinstance(value, IndexReturns):
        value = value.value
    elif isinstance(value, Stream):
        info = value.info
        value = info[1] if isinstance(info, tuple) and len(info) == 2 else None
    return type(value) is int and 2 < value < 2**64


def real_stream(value):
    """value, or None where it is a made-up stream handle (made_up_stream)."""
    return None if made_up_stream(value) else value


HOOK_ERRORS = set()


def hook_error(exc):
    """exc, remembered as one that a generated object's hook raises: strided
    may let it through unchanged."""
    HOOK_ERRORS.add(id(exc))
    _kept.append(exc)
    return exc


_kept = []  # the hook errors stay alive, so that their ids stay theirs


def forget_hook_tracebacks():
    """Drop what the hook errors hold since they were raised last (their
    tracebacks' frames hold the call's arguments)."""
    for exc in _kept:
        exc.__traceback__ = exc.__context__ = exc.__cause__ = None


class IndexRaises:
    """An object whose __index__ raises exc."""

    def __init__(self, exc):
        self.exc = exc

    def __index__(self):
        raise self.exc

    def __repr__(self):
        return f"IndexRaises({self.exc!r})"


class IndexReturns:
    """An object whose __index__ returns value (an int, or not)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value

    def __repr__(self):
        return f"IndexReturns({self.value!r})"


class BoolRaises:
    """An object whose truth value cannot be taken."""

    def __bool__(self):
        raise BOOL_ERROR

    def __repr__(self):
        return "BoolRaises()"


class Stream:
    """An object with __cuda_stream__ returning (or raising) info."""

    def __init__(self, info):
        self.info = info

    def __cuda_stream__(self):
        if isinstance(self.info, BaseException):
            raise self.info
        return self.info

    def __repr__(self):
        return f"Stream({self.info!r})"


class Opaque:
    """A plain object with nothing to offer."""

    def __repr__(self):
        return "Opaque()"


class Int(int):
    """An int subclass (not bool): accepted where an int is."""


BOOL_ERROR = hook_error(Boom("__bool__"))


@functools.cache
def index_objects():
    return st.one_of(
        st.sampled_from([IndexRaises(hook_error(ValueError("bad index"))), IndexRaises(hook_error(Boom("index"))),
                         IndexRaises(hook_error(OverflowError("index overflow"))),
                         IndexRaises(hook_error(TypeError("index type")))]),
        st.builds(IndexReturns, st.sampled_from([1.5, "3", None, b"3", (), 2**70, -(2**70), 0, 7])),
    )


@functools.cache
def ints():
    """Small ints and the edges of int64, uint64 and C int."""
    return st.one_of(st.integers(-4, 8), st.sampled_from(INT_EDGES))


ATOMS = (None, True, False, 0.0, -0.0, 1.5, float("nan"), float("inf"), "", "C", "F", "K", "abc",
         b"", b"\x00", Ellipsis, slice(None), slice(1, 2, 0), 1j, np.True_, np.int64(2),
         np.float32(1.0), np.uint64(2**64 - 1), object(), Opaque(), BoolRaises(), Int(2), {},
         frozenset(), range(3), np.zeros(2))


@functools.cache
def atoms():
    return st.one_of(ints(), st.sampled_from(ATOMS), index_objects())


@functools.cache
def junk():
    """Anything at all, containers included (wrong lengths, nesting, huge ndim)."""
    leaf = atoms()
    return st.one_of(
        leaf,
        st.lists(leaf, max_size=4).map(tuple),
        st.lists(leaf, max_size=4),
        st.tuples(st.tuples(ints(), ints()), ints()),
        st.dictionaries(st.sampled_from(["host", "device", "a", 1]), leaf, max_size=2),
        st.sampled_from([(1,) * 65, (0,) * 65, (1,) * 1000, [1] * 65, tuple(range(65))]),
    )


# ---- Plausible values of each kind of parameter -------------------------------------

@functools.cache
def extents():
    return st.one_of(st.integers(0, 4), st.integers(-2, 6), st.sampled_from(INT_EDGES), index_objects())


@functools.cache
def shapes(max_ndim=4):
    return st.one_of(st.lists(extents(), max_size=max_ndim).map(tuple),
                     st.lists(st.integers(0, 4), max_size=max_ndim),
                     st.sampled_from([(1,) * 64, (1,) * 65, (2,) * 64, (2**62, 2, 2), (0, 2**63 - 1)]))


@functools.cache
def strides_values(max_ndim=4):
    elt = st.one_of(st.integers(-8, 8), st.sampled_from(INT_EDGES), index_objects())
    return st.one_of(st.none(), st.lists(elt, max_size=max_ndim).map(tuple))


@functools.cache
def itemsizes():
    return st.one_of(st.sampled_from([1, 2, 4, 8, 16, 3, 5, 0, -1, -4, 32, 2**31 - 1, 2**31]),
                     st.sampled_from(INT_EDGES), index_objects())


@functools.cache
def axes():
    return st.one_of(st.integers(-5, 5), st.sampled_from(INT_EDGES), index_objects())


@functools.cache
def axis_tuples():
    return st.one_of(st.lists(axes(), max_size=5).map(tuple), st.lists(st.integers(-4, 4), max_size=5))


@functools.cache
def orders():
    return st.one_of(st.sampled_from(["C", "F", "K", "A", "c", ""]), axis_tuples())


@functools.cache
def index_keys():
    bound = st.one_of(st.none(), st.integers(-6, 6), st.sampled_from(INT_EDGES), index_objects(),
                      st.sampled_from([True, 1.5, "1"]))
    position = st.one_of(st.integers(-5, 5), st.sampled_from(INT_EDGES),
                         st.builds(slice, bound, bound, bound), st.just(Ellipsis), st.none(),
                         index_objects())
    return st.one_of(position, st.lists(position, max_size=5).map(tuple))


@functools.cache
def sizes():
    """Byte counts: small, or far too big (never a size malloc would grant
    lazily and then make slow)."""
    return st.one_of(st.integers(0, 256),
                     st.sampled_from([-1, INT64_MIN, 2**62, INT64_MAX, INT64_MAX + 1, 2**64 - 1,
                                      2**64, 2**100]),
                     index_objects())


@functools.cache
def stream_values():
    # Made-up stream handles (MADE_UP_HANDLES) only where no real driver
    # would be handed them.
    return st.one_of(
        st.sampled_from([None, 0, 1, 2, -1, 2**64, -(2**63) - 1, True, 1.5, "0"]),
        st.builds(Stream, st.sampled_from([(0, 0), *((0, h) for h in MADE_UP_HANDLES), (1, 0),
                                           (0,), (0, 0, 0), 5, None,
                                           (0, -1), (0, 2**64), (0, True), (True, 0), ("0", 0),
                                           (0, 1.5), hook_error(Boom("stream")), hook_error(ValueError("stream"))])),
    )


@functools.cache
def stream_ptrs():
    return st.one_of(st.sampled_from([-1, None, 0, 1, -2, INT64_MIN, *MADE_UP_HANDLES, 2**64,
                                      True, False, 1.5, "1"]),
                     index_objects().filter(lambda x: not REAL_CUDA
                                            or getattr(x, "value", None) != 7))


@functools.cache
def dtypes():
    return st.one_of(
        st.sampled_from([None, np.int8, np.uint8, np.int16, np.int32, np.float32, np.float64,
                         np.complex64, np.bool_, "int32", "<f4", ">i4", "u2", "V3", "V4", "S4",
                         "i4,i4", np.dtype([("a", "u1"), ("b", "u1")]), "M8[s]", "float16"]),
        st.sampled_from(["not a dtype", 5, 1.5, b"i4", ("i4", 2), object()]),
    )


@functools.cache
def flags():
    return st.one_of(st.booleans(), st.sampled_from([0, 1, 2, None, "", "no", BoolRaises(), np.True_]))


# ---- Objects to call methods on ---------------------------------------------------------

# The composite strategies below draw from these cached ones: a strategy
# made anew at each draw is validated anew, which costs more than the call
# it feeds.

@functools.cache
def between(lo, hi):
    return st.integers(lo, hi)


def choice(draw, options):
    return options[draw(between(0, len(options) - 1))]


def draw_ints(draw, n, lo, hi):
    return tuple(draw(between(lo, hi)) for _ in range(n))


@st.composite
def _layouts(draw, max_extent=4, max_ndim=4, edges=True):
    """Valid StridedLayouts: small ones of any strides (negative, zero,
    sliced), the dims at the edge (0 and 64) and strides and extents near
    the int64 limits."""
    if edges and draw(between(0, 3)) == 0:
        return choice(draw, EDGE_LAYOUTS)
    ndim = draw(between(0, max_ndim))
    shape = draw_ints(draw, ndim, 0, max_extent)
    itemsize = choice(draw, (1, 2, 4, 8, 3))
    if draw(between(0, 1)):
        layout = StridedLayout(shape, None, itemsize)
    else:
        layout = StridedLayout(shape, draw_ints(draw, ndim, -6, 6), itemsize)
    if ndim and draw(between(0, 1)):
        stops = draw_ints(draw, ndim, 0, max_extent)
        layout = layout[tuple(slice(1, s) for s in stops)]
    return layout


@functools.cache
def layouts(max_extent=4, max_ndim=4, edges=True):
    return _layouts(max_extent, max_ndim, edges)


EDGE_LAYOUTS = [
    StridedLayout((), None, 1),
    StridedLayout((1,) * 64, None, 1),
    StridedLayout((2,) * 62, None, 1),
    StridedLayout((1,), (INT64_MAX,), 1),
    StridedLayout((2,), (2**62,), 1),
    StridedLayout((2**61, 2), (0, 1), 1),
    StridedLayout((INT64_MAX,), (0,), 1),
    StridedLayout((0, INT64_MAX), None, 1),
    StridedLayout((3, 0, 5), (5, 0, -1), 8),
    StridedLayout((2,), (-(2**61),), 2),
]


@functools.cache
def grid_layouts():
    """Layouts format_grid can draw quickly: at most 3 axes of at most 6."""
    return layouts(max_extent=6, max_ndim=3, edges=False)


class FreesNothing:
    """A memory resource written in Python that records and frees nothing:
    safe to hand any address."""

    is_host_accessible = True
    is_device_accessible = False
    device_id = -1

    def __init__(self):
        self.freed = []

    def allocate(self, size, stream=None):
        backing = np.zeros(max(int(size), 1), np.uint8)
        return Buffer.from_handle(backing.ctypes.data, int(size), owner=backing)

    def deallocate(self, ptr, size, stream=None):
        self.freed.append((ptr, size))


class SmallAllocator(FreesNothing):
    """allocate(size) gives a Buffer of fewer bytes than asked for, over
    memory that goes on with canary bytes: overrun() says whether anything
    wrote past the Buffer's end."""

    CANARY = 0xAB

    def __init__(self):
        super().__init__()
        self.given = []

    def allocate(self, size, stream=None):
        backing = np.full(int(size) + 64, self.CANARY, np.uint8)
        small = int(size) // 2
        self.given.append((backing, small))
        return Buffer.from_handle(backing.ctypes.data, small, owner=backing)

    def overrun(self):
        return any((backing[small:] != self.CANARY).any() for backing, small in self.given)


class JunkAllocator(FreesNothing):
    """allocate(size) returns something that is not a Buffer, or raises."""

    def __init__(self, result):
        super().__init__()
        self.result = result

    def allocate(self, size, stream=None):
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


class NotAResource:
    """Half a memory resource: no is_device_accessible."""

    is_host_accessible = True

    def deallocate(self, ptr, size, stream=None):
        pass


@functools.cache
def memory_resources():
    """Resources that free nothing (any address is safe), and objects that
    are not memory resources. Never a built-in resource: it would free the
    generated address."""
    return st.one_of(
        st.builds(FreesNothing),
        st.sampled_from([None, NotAResource(), strided.MemoryResource(), HostMemoryResource,
                         FreesNothing, object(), 5, "mr"]),
    )


@functools.cache
def allocators():
    return st.one_of(
        st.none(),
        st.builds(lambda h, d: {"host": h, "device": d}, st.none() | st.builds(FreesNothing), st.none()),
        st.builds(strided.CopyAllocatorOptions, st.sampled_from([None, HostMemoryResource()]), st.none()),
        st.builds(lambda r: {"host": JunkAllocator(r)},
                  st.sampled_from([None, 5, object(), hook_error(Boom("allocate")), hook_error(MemoryError()),
                                   Buffer.from_handle(0, 0)])),
        st.builds(lambda: {"host": SmallAllocator()}),
        st.sampled_from([{"host": object()}, {"hots": None}, {1: None}, {"device": 5}, object(), 3,
                         "host", strided.CopyAllocatorOptions(host=object())]),
    )


DTYPES = ("u1", "i2", "<u4", ">i4", "f4", "f8", "c8", "?", "V3", "i4,i2")


@st.composite
def _arrays(draw):
    """A small numpy array: any dtype above, up to 3 axes, maybe sliced,
    transposed, reversed or read-only."""
    dtype = np.dtype(choice(draw, DTYPES))
    shape = draw_ints(draw, draw(between(0, 3)), 0, 4)
    a = np.frombuffer(np.random.default_rng(0).bytes(max(int(np.prod(shape)), 1) * dtype.itemsize),
                      dtype)[: int(np.prod(shape))].reshape(shape).copy()
    how = choice(draw, ("plain", "transposed", "reversed", "sliced", "readonly"))
    if how == "transposed":
        a = a.T
    elif how == "reversed" and a.ndim:
        a = a[::-1]
    elif how == "sliced" and a.ndim:
        a = a[::2]
    elif how == "readonly":
        a.flags.writeable = False
    return a


@functools.cache
def arrays():
    return _arrays()


@st.composite
def _buffers(draw):
    """(buffer, keep): an open or closed Buffer over host memory, and what
    keeps that memory alive."""
    kind = choice(draw, ("owner", "host", "python-mr", "borrowed", "closed", "empty"))
    n = draw(between(0, 64))
    backing = np.zeros(max(n, 1), np.uint8)
    if kind == "owner":
        return Buffer.from_handle(backing.ctypes.data, n, owner=backing), backing
    if kind == "host":
        return HostMemoryResource().allocate(n), None
    if kind == "python-mr":
        return Buffer.from_handle(backing.ctypes.data, n, mr=FreesNothing()), backing
    if kind == "borrowed":
        return Buffer.from_handle(backing.ctypes.data, n), backing
    if kind == "empty":
        return Buffer.from_handle(0, 0), None
    b = Buffer.from_handle(backing.ctypes.data, n, owner=backing)
    b.close()
    return b, backing


@functools.cache
def buffers():
    return _buffers()


@st.composite
def _views(draw):
    """(view, array): a host StridedMemoryView made by one of the import
    paths, and the numpy array holding its memory. An array strided will
    not import (a byte order or dtype it refuses) gives a view of bytes."""
    a = draw(arrays())
    how = choice(draw, ("dlpack", "array_interface", "any", "from_buffer", "view"))
    try:
        return view_of(a, how)
    except (BufferError, TypeError, ValueError, NotImplementedError):
        return view_of(np.arange(a.size, dtype=np.uint8).reshape(a.shape), how)


def view_of(a, how):
    """(view, the array whose memory it is) of a, made the way how says."""
    if how == "dlpack" and a.dtype.kind not in "V" and a.flags.writeable:
        return StridedMemoryView.from_dlpack(a, -1), a
    if how == "any" and a.dtype.kind not in "V" and a.flags.writeable:
        return StridedMemoryView.from_any_interface(a, -1), a
    if how in ("from_buffer", "view"):
        base = np.ascontiguousarray(a)
        buf = Buffer.from_handle(base.ctypes.data, base.nbytes, owner=base)
        v = StridedMemoryView.from_buffer(buf, base.shape, None, dtype=base.dtype,
                                          is_readonly=not a.flags.writeable)
        if how == "view" and base.ndim:
            v = v.view(v.layout[::-1])
        return v, base
    return StridedMemoryView.from_array_interface(a), a


@functools.cache
def views():
    return _views()


# ---- Exporters: objects that (try to) speak the array protocols --------------------------

class Exporter:
    """An object with the array interface dict d under attr (and base kept)."""

    def __init__(self, d, attr="__array_interface__", base=None):
        setattr(self, attr, d)
        self.base = base

    def __repr__(self):
        return f"Exporter({self.__dict__!r})"


class RaisingExporter:
    """__array_interface__ and __cuda_array_interface__ raise exc."""

    def __init__(self, exc):
        self.exc = exc

    @property
    def __array_interface__(self):
        raise self.exc

    @property
    def __cuda_array_interface__(self):
        raise self.exc

    def __repr__(self):
        return f"RaisingExporter({self.exc!r})"


class FakeDLPack:
    """A DLPack producer whose __dlpack_device__ returns device and whose
    __dlpack__ returns (or raises) result, never a real capsule."""

    def __init__(self, device, result):
        self.device = device
        self.result = result

    def __dlpack_device__(self):
        if isinstance(self.device, BaseException):
            raise self.device
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    def __repr__(self):
        return f"FakeDLPack({self.device!r}, {self.result!r})"


def producer_may_assert(obj):
    """Whether an import may refuse obj with AssertionError: cuda.core
    asserts (and strided keeps its AssertionErrors) on a DLPack CPU device
    id other than 0, a negative CUDA device id, a __dlpack__ result that is
    not a DLPack capsule, and a CUDA Array Interface stream <= 0."""
    if isinstance(obj, Exporter):
        cai = getattr(obj, "__cuda_array_interface__", None)
        stream = cai.get("stream") if isinstance(cai, dict) else None
        try:
            return stream is not None and not isinstance(stream, bool) and int(stream) <= 0
        except Exception:
            return False
    if not isinstance(obj, FakeDLPack):
        return False
    d = obj.device
    wrong_id = (isinstance(d, tuple) and len(d) == 2 and all(isinstance(x, int) for x in d)
                and ((d[0] == 1 and d[1] != 0) or (d[0] == 2 and d[1] < 0)))
    return wrong_id or not isinstance(obj.result, BaseException)


INTERFACE_KEYS = ("version", "data", "shape", "strides", "typestr", "mask", "descr", "stream")


@st.composite
def _interface_dicts(draw, cuda=False):
    """A valid array interface of a small array (its data address real, or
    0 for an empty CUDA one), then broken in a few places: keys dropped,
    values replaced with junk."""
    a = draw(arrays())
    if cuda:
        d = {"version": 3, "data": (0, False), "shape": (0,), "typestr": "<f4", "strides": None}
        keep = None
    else:
        d = dict(a.__array_interface__)
        keep = a
    for _ in range(draw(between(0, 3))):
        key = choice(draw, INTERFACE_KEYS)
        if draw(between(0, 1)):
            d.pop(key, None)
        else:
            d[key] = draw(interface_values())
    stream = d.get("stream")
    if REAL_CUDA and type(stream) is int and stream > 2:
        d["stream"] = 2  # a made-up producer stream: see MADE_UP_HANDLES
    return d, keep


@functools.cache
def interface_values():
    return st.one_of(
        junk(),
        st.sampled_from([(0, False), (1, True), (2**64, False), (-1, False), (True, False), "<f4",
                         ">i8", "|V0", "<i16", "xyz", "|b1", 2, 4, 1, 0, (0,), (2, 2), (2**62, 4),
                         (-1,), (INT64_MAX,)]),
        shapes(), strides_values())


@functools.cache
def interface_dicts(cuda=False):
    return _interface_dicts(cuda)


@functools.cache
def exporters(cuda=False):
    """Objects given to the from_* import functions: arrays, views, broken
    interfaces, fake producers and plain junk."""
    return st.one_of(
        arrays(),
        views().map(lambda va: va[0]),
        interface_dicts(cuda=cuda).map(
            lambda dk: Exporter(dk[0], "__cuda_array_interface__" if cuda else "__array_interface__",
                                dk[1])),
        st.sampled_from([RaisingExporter(hook_error(Boom("interface"))), RaisingExporter(hook_error(AttributeError("nope"))),
                         RaisingExporter(hook_error(KeyError("k")))]),
        st.builds(FakeDLPack,
                  st.sampled_from([(1, 0), (2, 0), (1, 5), (2, -1), (99, 0), (1,), None, "cpu",
                                   (1.5, 0), ("1", 0), hook_error(Boom("device")), hook_error(AttributeError("device"))]),
                  st.sampled_from([None, 5, object(), hook_error(Boom("dlpack")), hook_error(BufferError("producer")),
                                   hook_error(AttributeError("inside"))])),
        junk(),
    )
