"""Live sets over what the driver says, as cuda.core has them.

``ManagedBuffer.accessed_by`` is an ``AccessedBySetProxy``: the locations
advised to keep a mapping to a managed buffer's memory.
``DeviceMemoryResource.peer_accessible_by`` is a ``PeerAccessibleBySetProxy``:
the devices that may access a device pool's memory. Neither keeps a copy:
every read asks the driver, every change is made at once. They only turn
set operations into calls of their owner's private methods; the rules (which
locations and devices, what is refused, one driver call per change) are
libstrided's (strided/buffer.h, strided/resource.h).
"""

from collections.abc import Iterable, Iterator, MutableSet
import operator

from strided._strided import driver_info

__all__ = ["AccessedBySetProxy", "PeerAccessibleBySetProxy"]


class AccessedBySetProxy(MutableSet):
    """The locations advised to keep a mapping to a managed buffer's memory.

    A live set (``ManagedBuffer.accessed_by``): iterating, ``len`` and
    ``in`` ask the driver (cuMemRangeGetAttribute), ``add`` and ``discard``
    advise it (cuMemAdvise). Its items are ``(ManagedMemoryLocationType,
    id)`` pairs, ``("device", 0)`` or ``("host", None)`` (cuda.core's are
    Devices and Hosts); it takes a location in every form
    ``ManagedBuffer.prefetch`` does. Set operators (``|``, ``&``, ...) give
    plain sets.

    Parameters
    ----------
    buffer : ManagedBuffer
        The buffer whose advice the set reads and changes.

    Examples
    --------
    >>> import strided
    >>> try:
    ...     buf = strided.ManagedMemoryResource().allocate(4096)
    ...     buf.accessed_by.add(0)
    ...     print(("device", 0) in buf.accessed_by)
    ... except RuntimeError:  # no CUDA driver here
    ...     print(True)
    True
    """

    __slots__ = ("_buffer",)

    def __init__(self, buffer):
        self._buffer = buffer

    @classmethod
    def _from_iterable(cls, it):
        return set(it)

    def _key(self, location):
        """location as an item, or None when it cannot be one."""
        try:
            return self._buffer._location(location)
        except (TypeError, ValueError, OverflowError):
            return None

    def __contains__(self, location):
        key = self._key(location)
        return key is not None and key in self._buffer._accessed_by()

    def __iter__(self) -> Iterator:
        return iter(self._buffer._accessed_by())

    def __len__(self) -> int:
        return len(self._buffer._accessed_by())

    def add(self, location):
        """Advise location (a device or the host) to keep a mapping.

        Parameters
        ----------
        location : int, Device, Host, str or tuple
            A device or the host, in a form ``ManagedBuffer.prefetch``
            takes.

        Raises
        ------
        TypeError
            If location is of none of those forms.
        ValueError
            If it is a host NUMA node, or a device that does not exist.
        """
        self._buffer._advise_accessed_by(location, True)

    def discard(self, location):
        """Take the advice for location back, if it is given.

        Anything that is not an item (another form, a host NUMA node) is
        ignored, as a set ignores what it does not hold.

        Parameters
        ----------
        location : int, Device, Host, str or tuple
            A device or the host.
        """
        key = self._key(location)
        if key is not None and key in self._buffer._accessed_by():
            self._buffer._advise_accessed_by(key, False)

    def __repr__(self):
        return f"AccessedBySetProxy({set(self)!r})"


def _ordinal(device):
    """device's ordinal (an int, or an object with an int device_id), or
    None for anything else."""
    if isinstance(device, bool):
        return None
    try:
        return operator.index(device)
    except TypeError:
        pass
    ordinal = getattr(device, "device_id", None)
    return None if isinstance(ordinal, bool) or not isinstance(ordinal, int) else ordinal


class PeerAccessibleBySetProxy(MutableSet):
    """The devices that may access a device memory pool's memory.

    A live set (``DeviceMemoryResource.peer_accessible_by``) of device
    ordinals (cuda.core's holds Devices): reading asks the driver
    (cuMemPoolGetAccess), and every change (``add``, ``discard``, ``clear``,
    ``update``, ``|=``, ``&=``, ``-=``, ``^=`` and the other in-place
    operations) is one cuMemPoolSetAccess, made only when something changes.
    It takes ints and objects with a device_id (a cuda.core Device); the
    pool's own device is never in it and is ignored where given. Set
    operators (``|``, ``&``, ...) give plain sets.

    Parameters
    ----------
    resource : DeviceMemoryResource
        The resource whose pool's access the set reads and changes.

    Examples
    --------
    >>> import strided
    >>> try:
    ...     mr = strided.DeviceMemoryResource(0)
    ...     print(sorted(mr.peer_accessible_by))
    ... except (RuntimeError, ValueError):  # no CUDA driver or device here
    ...     print([])
    []
    """

    __slots__ = ("_resource",)

    def __init__(self, resource):
        self._resource = resource

    @classmethod
    def _from_iterable(cls, it):
        return set(it)

    def __contains__(self, device):
        ordinal = _ordinal(device)
        return ordinal is not None and ordinal in self._resource._peer_access()

    def __iter__(self) -> Iterator[int]:
        return iter(self._resource._peer_access())

    def __len__(self) -> int:
        return len(self._resource._peer_access())

    def add(self, device):
        """Grant device access to the pool.

        Parameters
        ----------
        device : int or Device
            The device; its own device changes nothing.

        Raises
        ------
        TypeError
            If device is neither.
        ValueError
            If it does not exist, or cannot reach the pool's device
            ("Device 0 cannot access peer: 1").
        """
        self._resource._grant_peer_access(device)

    def discard(self, device):
        """Revoke device's access to the pool, if it has any.

        Parameters
        ----------
        device : int or Device
            The device; anything else is ignored.
        """
        self._resource._update_peer_access((), (device,))

    def clear(self):
        """Revoke every device's access, in one driver call."""
        self._resource._update_peer_access((), self._resource._peer_access())

    def update(self, *others: Iterable):
        """Grant every device of others access, in one driver call.

        Parameters
        ----------
        *others : iterables of int or Device
            The devices.

        Raises
        ------
        TypeError, ValueError
            As add, for any of them (then nothing changes).
        """
        self._resource._update_peer_access([d for other in others for d in other], ())

    def difference_update(self, *others: Iterable):
        """Revoke the access of every device of others, in one driver call.

        Parameters
        ----------
        *others : iterables of int or Device
            The devices; what is not one is ignored.
        """
        self._resource._update_peer_access((), [d for other in others for d in other])

    def intersection_update(self, *others: Iterable):
        """Keep only the access of the devices in every one of others.

        Parameters
        ----------
        *others : iterables of int or Device
            The devices; none at all changes nothing.
        """
        if not others:
            return
        keep = set(self._resource._peer_access())
        for other in others:
            keep &= {_ordinal(d) for d in other}
        revoke = [d for d in self._resource._peer_access() if d not in keep]
        self._resource._update_peer_access((), revoke)

    def symmetric_difference_update(self, other: Iterable):
        """Grant the devices of other without access and revoke the others.

        Parameters
        ----------
        other : iterable of int or Device
            The devices to toggle.
        """
        now = set(self._resource._peer_access())
        # A device that does not exist is ignored, as one of another form.
        count = driver_info()["device_count"]
        toggled = {d for d in (_ordinal(x) for x in other) if d is not None and 0 <= d < count}
        self._resource._update_peer_access(sorted(toggled - now), sorted(toggled & now))

    def __ior__(self, other):
        self.update(other)
        return self

    def __iand__(self, other):
        self.intersection_update(other)
        return self

    def __isub__(self, other):
        if other is self:
            self.clear()
        else:
            self.difference_update(other)
        return self

    def __ixor__(self, other):
        if other is self:
            self.clear()
        else:
            self.symmetric_difference_update(other)
        return self

    def __repr__(self):
        return f"PeerAccessibleBySetProxy({set(self)!r})"
