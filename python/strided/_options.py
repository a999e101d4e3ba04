"""The options of the memory pool resources and of copies, as cuda.core has
them.

``DeviceMemoryResourceOptions``, ``PinnedMemoryResourceOptions`` and
``ManagedMemoryResourceOptions`` are mutable dataclasses whose fields are
converted when set, as cuda.core's are: ``ipc_enabled`` by truth value,
``max_size``, ``numa_id`` and ``preferred_location`` with ``int()``
(``None`` stays ``None`` where the field allows it; a string is refused
with ``TypeError("Expected int, got str")``); ``preferred_location_type``
is kept as given. Whether the values make sense is for the resource to say
when it is made (the rules live in libstrided: strided/resource.h).

Where options go, a resource also takes ``None`` or a dict of the fields
(``_options_of``), with cuda.core's messages for anything else.

``CopyOptions`` (with ``MemcpySrcAccessOrder`` and ``MemcpyOverlapMode``)
are the hints of ``Buffer.copy_to`` and ``copy_from``, a frozen dataclass
as cuda.core's; ``ManagedMemoryLocationType`` names the kinds of location
managed memory has (cuda.core.typing's).
"""

import dataclasses
import enum

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
    """Where managed memory may live, as cuda.core.typing names it.

    A str enumeration: each member equals its string, so ``"device"``,
    ``"host"`` and ``"host_numa"`` are taken wherever a member is
    (``ManagedMemoryResourceOptions.preferred_location_type``, the type of a
    ``(type, id)`` location), and a ``(type, id)`` pair strided answers
    compares equal to the same pair of strings.

    Examples
    --------
    >>> import strided
    >>> strided.ManagedMemoryLocationType("host_numa")
    <ManagedMemoryLocationType.HOST_NUMA: 'host_numa'>
    >>> strided.ManagedMemoryLocationType.DEVICE == "device"
    True
    """

    DEVICE = "device"
    HOST = "host"
    HOST_NUMA = "host_numa"


class MemcpySrcAccessOrder(enum.StrEnum):
    """When a copy may read its source (the driver's CUmemcpySrcAccessOrder).

    ``STREAM``: in stream order, so work queued before the copy may still
    use the source. ``DURING_API_CALL``: out of stream order, every read done
    when the call returns. ``ANY``: out of stream order, until the copy
    completes; the source must not change until then.

    Examples
    --------
    >>> import strided
    >>> strided.MemcpySrcAccessOrder("any")
    <MemcpySrcAccessOrder.ANY: 'any'>
    """

    STREAM = "stream"
    DURING_API_CALL = "during_api_call"
    ANY = "any"


class MemcpyOverlapMode(enum.StrEnum):
    """Whether a copy should overlap with computation (CUmemcpyFlags).

    ``DEFAULT``: the driver's choice. ``PREFER_OVERLAP_WITH_COMPUTE``: a hint
    that the copy overlap with concurrent kernels, where the device can.

    Examples
    --------
    >>> import strided
    >>> strided.MemcpyOverlapMode.DEFAULT.value
    'default'
    """

    DEFAULT = "default"
    PREFER_OVERLAP_WITH_COMPUTE = "prefer_overlap_with_compute"


@dataclasses.dataclass(frozen=True)
class CopyOptions:
    """Hints for one copy between buffers (``Buffer.copy_to``, ``copy_from``).

    A frozen dataclass, as cuda.core's: the two enumeration fields take
    their members or their strings, which are converted at construction.
    The hints change how the driver stages the copy, never the bytes it
    writes. They are honoured where the driver has
    ``cuMemcpyWithAttributesAsync`` (CUDA 13.2); elsewhere the copy reads
    its source in stream order, which honours ``STREAM`` and ``ANY`` and
    leaves the other hints unsaid, and ``DURING_API_CALL`` is refused.

    Parameters
    ----------
    src_access_order : MemcpySrcAccessOrder or str, optional
        When the source may be read; ``"stream"`` by default.
    src_location_hint : optional
        Where the source is likely to be: a location in any form
        ``ManagedBuffer.prefetch`` takes (a device ordinal, a Device or Host
        of cuda.core, ``"host"``, a ``(type, id)`` pair), or None for no
        hint. Honoured for managed memory (and pageable memory a device
        reads).
    dst_location_hint : optional
        The same for the destination.
    overlap_mode : MemcpyOverlapMode or str, optional
        ``"default"`` by default.

    Raises
    ------
    ValueError
        If src_access_order or overlap_mode is none of its enumeration's
        values ("invalid src_access_order: 'x'").

    Examples
    --------
    >>> import strided
    >>> strided.CopyOptions(src_access_order="any")
    CopyOptions(src_access_order=<MemcpySrcAccessOrder.ANY: 'any'>, src_location_hint=None, \
dst_location_hint=None, overlap_mode=<MemcpyOverlapMode.DEFAULT: 'default'>)
    """

    src_access_order: MemcpySrcAccessOrder | str = "stream"
    src_location_hint: object = None
    dst_location_hint: object = None
    overlap_mode: MemcpyOverlapMode | str = "default"

    def __post_init__(self):
        # Frozen: the conversions go through object.__setattr__.
        for name, kind in (("src_access_order", MemcpySrcAccessOrder),
                           ("overlap_mode", MemcpyOverlapMode)):
            value = getattr(self, name)
            if not isinstance(value, kind):
                try:
                    object.__setattr__(self, name, kind(value))
                except (ValueError, TypeError) as e:
                    raise ValueError(f"invalid {name}: {value!r}") from e


def _as_int(value):
    """int(value), except that text is no int here; what int() refuses by
    type is refused in cuda.core's words."""
    if not isinstance(value, (str, bytes, bytearray)):
        try:
            return int(value)
        except TypeError:
            pass
    raise TypeError(f"Expected int, got {type(value).__name__}")


def _as_optional_int(value):
    return None if value is None else _as_int(value)


def _options_class(converters):
    """A slotted dataclass whose fields named in converters are converted
    whenever they are set, at construction too."""

    def make(cls):
        def __setattr__(self, name, value):
            convert = converters.get(name)
            object.__setattr__(self, name, value if convert is None else convert(value))

        cls.__setattr__ = __setattr__
        return dataclasses.dataclass(slots=True)(cls)

    return make


@_options_class({"ipc_enabled": bool, "max_size": _as_int})
class DeviceMemoryResourceOptions:
    """Options of ``DeviceMemoryResource``: a new memory pool, owned by the
    resource.

    A mutable dataclass; each field is converted when it is set, at
    construction too. A dict of the fields is taken wherever the options
    are.

    Parameters
    ----------
    ipc_enabled : bool, optional
        Whether the pool's memory may be shared with other processes
        (converted with ``bool()``): the pool is created with POSIX
        file-descriptor export handles (Linux only).
    max_size : int, optional
        The most bytes the pool reserves (converted with ``int()``); 0, the
        default, leaves it to the driver.

    Raises
    ------
    TypeError
        If max_size is text, or anything ``int()`` refuses by its type.

    Examples
    --------
    >>> import strided
    >>> strided.DeviceMemoryResourceOptions(max_size=2.0**30)
    DeviceMemoryResourceOptions(ipc_enabled=False, max_size=1073741824)
    """

    ipc_enabled: bool = False
    max_size: int = 0


@_options_class({"ipc_enabled": bool, "max_size": _as_int, "numa_id": _as_optional_int})
class PinnedMemoryResourceOptions:
    """Options of ``PinnedMemoryResource``: a new pinned host memory pool,
    owned by the resource.

    A mutable dataclass whose fields are converted when they are set, as
    those of DeviceMemoryResourceOptions.

    Parameters
    ----------
    ipc_enabled : bool, optional
        As in DeviceMemoryResourceOptions.
    max_size : int, optional
        As in DeviceMemoryResourceOptions.
    numa_id : int, optional
        The host NUMA node to place the memory on (>= 0), or None (the
        default) to leave the placement to the operating system.

    Raises
    ------
    TypeError
        If max_size or numa_id is text, or anything ``int()`` refuses by
        its type.

    Examples
    --------
    >>> import strided
    >>> strided.PinnedMemoryResourceOptions(numa_id=0)
    PinnedMemoryResourceOptions(ipc_enabled=False, max_size=0, numa_id=0)
    """

    ipc_enabled: bool = False
    max_size: int = 0
    numa_id: int | None = None


@_options_class({"preferred_location": _as_optional_int})
class ManagedMemoryResourceOptions:
    """Options of ``ManagedMemoryResource``: a new managed memory pool,
    owned by the resource, and where its memory prefers to live.

    A mutable dataclass; preferred_location is converted with ``int()``
    when it is set (None stays None), preferred_location_type is kept as
    given. Whether the two agree is for the resource to say when it is
    made (ValueError).

    Parameters
    ----------
    preferred_location : int, optional
        With no type, a device ordinal (>= 0), -1 for the host, or None
        (the default) for no preference; with ``"device"`` a device
        ordinal; with ``"host"`` None; with ``"host_numa"`` a NUMA node
        (>= 0), or None for the node closest to the resource's device.
    preferred_location_type : str, optional
        None (the default), ``"device"``, ``"host"`` or ``"host_numa"``; it
        says how preferred_location is read.

    Raises
    ------
    TypeError
        If preferred_location is text, or anything ``int()`` refuses by its
        type.

    Examples
    --------
    >>> import strided
    >>> strided.ManagedMemoryResourceOptions(preferred_location=-1)
    ManagedMemoryResourceOptions(preferred_location=-1, preferred_location_type=None)
    """

    preferred_location: int | None = None
    preferred_location_type: str | None = None


def _options_of(cls, options, description):
    """options as an instance of cls: None stays None, an instance is taken
    as it is, a dict gives cls(**options); anything else is a TypeError, in
    cuda.core's words."""
    if options is None or isinstance(options, cls):
        return options
    if isinstance(options, dict):
        fields = {f.name for f in dataclasses.fields(cls)}
        for key in options:
            if isinstance(key, str) and key not in fields:
                raise TypeError(f"__init__() got an unexpected keyword argument '{key}'")
        return cls(**options)
    raise TypeError(
        f"The {description} must be provided as an object of type {cls.__name__} "
        f"or as a dict with valid {description}. The provided object is '{options}'.")
