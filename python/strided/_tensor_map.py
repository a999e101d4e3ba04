"""Tensor maps: StridedMemoryView.as_tensor_map's descriptor, its options and
the driver's enumerations, as cuda.core names them.

The arguments' forms and types are checked here (cuda.core's TypeErrors);
every rule about the values (ranks, boxes, strides, alignment, element
types, devices) is libstrided's (include/strided/tensor_map.h), which the
extension calls.
"""

import enum
from dataclasses import dataclass

import numpy

from strided._strided import StridedMemoryView

try:  # NumPy then knows bfloat16 by name, as cuda.core does.
    import ml_dtypes  # noqa: F401
except ImportError:
    pass

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
    """The element types a tensor map reads (the driver's CUtensorMapDataType)."""

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
    """Interleaved layouts (CUtensorMapInterleave)."""

    NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2


class TensorMapSwizzle(enum.IntEnum):
    """Shared-memory bank swizzling (CUtensorMapSwizzle)."""

    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3


class TensorMapL2Promotion(enum.IntEnum):
    """The granularity of L2 fills (CUtensorMapL2promotion)."""

    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class TensorMapOOBFill(enum.IntEnum):
    """What out-of-bounds elements read as (CUtensorMapFloatOOBfill)."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


def _normalize_data_type(data_type):
    if data_type is None or isinstance(data_type, TensorMapDataType):
        return data_type
    try:
        return numpy.dtype(data_type)
    except TypeError as e:
        raise TypeError(
            "data_type must be a TensorMapDataType or a numpy/ml_dtypes dtype, "
            f"got {type(data_type)}") from e


def _normalize_sequence(name, values):
    try:
        values = tuple(values)
    except TypeError as e:
        raise TypeError(f"{name} must be a tuple of ints, got {type(values)}") from e
    for i, value in enumerate(values):
        if not isinstance(value, int):
            raise TypeError(f"{name}[{i}] must be an int, got {type(value)}")
    return values


def _require_enum(name, value, enum_type):
    if not isinstance(value, enum_type):
        raise TypeError(f"{name} must be a {enum_type.__name__}, got {type(value)}")
    return value


@dataclass
class TensorMapDescriptorOptions:
    """Options of StridedMemoryView.as_tensor_map.

    A dataclass: the arguments are checked and converted when it is made
    (sequences become tuples, a dtype-like data_type a numpy.dtype); their
    values are checked when the map is made. as_tensor_map also takes a dict
    of these fields.

    Parameters
    ----------
    box_dim : sequence of int
        The tile's extent along each axis of the view, in the view's order
        (outermost first), 1 to 256 each.
    element_strides : sequence of int, optional
        The step along each axis, 1 to 8 (None: 1 on every axis).
    data_type : TensorMapDataType or dtype-like, optional
        A TensorMapDataType, or anything numpy.dtype() takes (bfloat16
        through ml_dtypes); None: the view's dtype.
    interleave : TensorMapInterleave, optional
    swizzle : TensorMapSwizzle, optional
    l2_promotion : TensorMapL2Promotion, optional
    oob_fill : TensorMapOOBFill, optional
        The driver's enumerations (NONE by default).

    Raises
    ------
    TypeError
        If box_dim or element_strides is not a sequence of ints, data_type
        is neither form, or an enumeration is given as anything but its
        member (an int too).

    Examples
    --------
    >>> import strided
    >>> options = strided.TensorMapDescriptorOptions(
    ...     box_dim=[64, 32], data_type="float32",
    ...     swizzle=strided.TensorMapSwizzle.SWIZZLE_128B)
    >>> options.box_dim, options.data_type
    ((64, 32), dtype('float32'))
    """

    box_dim: tuple
    element_strides: tuple = None
    data_type: object = None
    interleave: TensorMapInterleave = TensorMapInterleave.NONE
    swizzle: TensorMapSwizzle = TensorMapSwizzle.NONE
    l2_promotion: TensorMapL2Promotion = TensorMapL2Promotion.NONE
    oob_fill: TensorMapOOBFill = TensorMapOOBFill.NONE

    def __post_init__(self):
        self.box_dim = _normalize_sequence("box_dim", self.box_dim)
        if self.element_strides is not None:
            self.element_strides = _normalize_sequence("element_strides", self.element_strides)
        self.data_type = _normalize_data_type(self.data_type)
        self.interleave = _require_enum("interleave", self.interleave, TensorMapInterleave)
        self.swizzle = _require_enum("swizzle", self.swizzle, TensorMapSwizzle)
        self.l2_promotion = _require_enum("l2_promotion", self.l2_promotion,
                                          TensorMapL2Promotion)
        self.oob_fill = _require_enum("oob_fill", self.oob_fill, TensorMapOOBFill)


def _check_or_create_options(options):
    if isinstance(options, TensorMapDescriptorOptions):
        return options
    if isinstance(options, dict):
        return TensorMapDescriptorOptions(**options)
    what = "Tensor map descriptor options"
    raise TypeError(
        f"The {what} must be provided as an object of type TensorMapDescriptorOptions "
        f"or as a dict with valid {what}. The provided object is '{options}'.")


def _coerce_options(box_dim, options, element_strides, data_type, interleave, swizzle,
                    l2_promotion, oob_fill):
    """The TensorMapDescriptorOptions of as_tensor_map's arguments (None: not
    given; an enumeration given as its NONE counts as not given)."""
    if options is not None:
        given = (box_dim is not None or element_strides is not None or data_type is not None
                 or any(v is not None and v != 0
                        for v in (interleave, swizzle, l2_promotion, oob_fill)))
        if given:
            raise TypeError(
                "Specify either options or the individual tensor map arguments, not both")
        return _check_or_create_options(options)
    if box_dim is None:
        raise TypeError("box_dim is required unless options is provided")
    return TensorMapDescriptorOptions(
        box_dim=box_dim,
        element_strides=element_strides,
        data_type=data_type,
        interleave=TensorMapInterleave.NONE if interleave is None else interleave,
        swizzle=TensorMapSwizzle.NONE if swizzle is None else swizzle,
        l2_promotion=TensorMapL2Promotion.NONE if l2_promotion is None else l2_promotion,
        oob_fill=TensorMapOOBFill.NONE if oob_fill is None else oob_fill,
    )


def _member(name, convert=None, doc=None):
    """A read-only property of TensorMapDescriptor: the map's member name,
    through convert."""
    if convert is None:
        return property(lambda self: getattr(self._map, name), doc=doc)
    return property(lambda self: convert(getattr(self._map, name)),
                    doc=doc or f"The {convert.__name__}.")


class TensorMapDescriptor:
    """A tiled tensor map (CUtensorMap) of a StridedMemoryView.

    Made by ``StridedMemoryView.as_tensor_map``, never directly (the
    constructor raises RuntimeError), for the GPU's tensor memory
    accelerator (compute capability 9.0 and later). The 128 descriptor
    bytes are ``bytes(desc)`` (and, from Python 3.12, ``memoryview(desc)``);
    ``handle`` is their host address, fixed for the descriptor's life and
    128-byte aligned, to pass as a kernel argument (a ``__grid_constant__
    CUtensorMap`` parameter). The descriptor keeps the view, and so its
    memory, alive. ``device`` is the ordinal of the CUDA device it was made
    for (cuda.core gives a Device there; strided has no Device type). What
    it was encoded from is readable, in the driver's order (innermost
    dimension first).

    Examples
    --------
    On a GPU of compute capability 9.0 or later::

        view = StridedMemoryView.from_dlpack(device_array, stream_ptr=0)
        desc = view.as_tensor_map((64, 32), swizzle=TensorMapSwizzle.SWIZZLE_128B)
        kernel_argument = desc.handle
    """

    __slots__ = ("_map", "__weakref__")

    def __init__(self):
        """Raise RuntimeError: use StridedMemoryView.as_tensor_map()."""
        raise RuntimeError(
            "TensorMapDescriptor cannot be instantiated directly. "
            "Use StridedMemoryView.as_tensor_map() instead.")

    handle = _member("address", doc="The host address of the 128 descriptor bytes.")
    device = _member("device", doc="The ordinal of the CUDA device the map was made for.")
    rank = _member("rank", doc="The number of dimensions, 1 to 5.")
    data_type = _member("data_type", TensorMapDataType,
                        doc="The element type the map reads, a TensorMapDataType.")
    interleave = _member("interleave", TensorMapInterleave,
                         doc="The interleaved layout, a TensorMapInterleave.")
    swizzle = _member("swizzle", TensorMapSwizzle,
                      doc="The shared-memory bank swizzling, a TensorMapSwizzle.")
    l2_promotion = _member("l2_promotion", TensorMapL2Promotion,
                           doc="The granularity of L2 fills, a TensorMapL2Promotion.")
    oob_fill = _member("oob_fill", TensorMapOOBFill,
                       doc="What out-of-bounds elements read as, a TensorMapOOBFill.")
    global_address = _member("global_address",
                             doc="The device address of the view's element (0,...,0).")
    global_dim = _member("global_dim", doc="The extents, innermost first.")
    global_strides = _member("global_strides",
                             doc="The strides in bytes of dimensions 1 to rank - 1, innermost "
                                 "first.")
    box_dim = _member("box_dim", doc="The box, innermost first.")
    element_strides = _member("element_strides", doc="The element strides, innermost first.")

    def __bytes__(self):
        """The 128 descriptor bytes."""
        return bytes(self._map)

    def __buffer__(self, flags):
        """The 128 descriptor bytes, read-only, in place (Python 3.12 and later)."""
        return memoryview(self._map)

    def replace_address(self, tensor):
        """Point the map at the memory of another tensor, keeping everything else.

        The shape, strides and box stay the map's; only the global address
        changes, in place (handle stays the same). The descriptor keeps the
        new tensor's view alive instead of the old one.

        Parameters
        ----------
        tensor : StridedMemoryView or object
            A view, or any object StridedMemoryView.from_any_interface
            takes (imported with stream_ptr=-1).

        Raises
        ------
        ValueError
            If the memory is not device-accessible, not aligned as the map
            needs, or device memory of another device.
        BufferError
            If the object cannot be imported.
        """
        if not isinstance(tensor, StridedMemoryView):
            tensor = StridedMemoryView.from_any_interface(tensor, stream_ptr=-1)
        self._map._replace_address(tensor)

    def __repr__(self):
        return (f"TensorMapDescriptor(tiled, rank={self.rank}, dtype={self.data_type.name}, "
                f"swizzle={self.swizzle.name})")


def _descriptor(tensor_map):
    """The TensorMapDescriptor of a strided._TensorMap (the extension's)."""
    desc = object.__new__(TensorMapDescriptor)
    desc._map = tensor_map
    return desc
