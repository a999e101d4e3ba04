"""The options of the memory pool resources, as cuda.core has them.

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
"""

import dataclasses

__all__ = [
    "DeviceMemoryResourceOptions",
    "ManagedMemoryResourceOptions",
    "PinnedMemoryResourceOptions",
]


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
        (converted with ``bool()``). IPC-enabled pools are not supported
        yet: the resource refuses True with NotImplementedError.
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
        As in DeviceMemoryResourceOptions (True is not supported yet).
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
