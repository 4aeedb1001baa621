"""What every object that owns a C context shares: its lifetime, its lock, fork, copies and its repr.

How the lifetime stays safe without bookkeeping that a signal could break:

* The C context is a cffi pointer made with ``ffi.gc(pointer, SimdRelease)`` held in ``_handle``. A call reads it
  into a local variable before it runs C; :meth:`NativeContext.close` only drops the object's own reference. The
  context is released when its last reference goes, so a call in flight on another thread keeps it alive until it
  returns, and there is no counter of calls in flight that an exception could leave wrong.
* ``_lock`` (a plain ``threading.Lock``, None where calls may run at once) is only ever taken with ``with``: the
  acquire is one C call and since CPython 3.11 no instruction separates it from the region whose exit releases it,
  so a KeyboardInterrupt either arrives before the lock is held or is handled with it released.
* A child made by ``fork`` has one thread; a lock that another thread of the parent held at the fork would stay held
  there for ever, so every live context gets a fresh lock in the child (``os.register_at_fork``).
* A copy would share the C context (closing either frees it under the other), so copy, deepcopy and pickle raise
  :class:`~simdbind.errors.ContextCopyError`.

:class:`PlanCache` keeps what a wrapper derived from one parameter tuple (checked geometry, C arguments, and for
the one-shot functions a whole context) so that repeated calls skip the derivation, never the checks of the
arrays. Its entries follow the same rules: a cached context is released when its entry is evicted or the cache is
cleared and the last call using it has returned; a forked child starts with empty caches (a context the parent
was using at the fork is not reused), and every cache is cleared at exit, while the libraries are still loaded.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any

from simdbind.errors import ContextClosedError, ContextCopyError

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["NativeContext", "PlanCache"]

#: Contexts that have a lock: the ones whose lock the child of a fork must replace.
_LOCKED: "weakref.WeakSet[NativeContext]" = weakref.WeakSet()


#: Every plan cache: the ones a fork, the exit or a change of the bundled library's ISA clears.
_CACHES: "weakref.WeakSet[PlanCache]" = weakref.WeakSet()


def _fresh_locks_in_child() -> None:
    for context in list(_LOCKED):
        context._lock = threading.Lock()
    for cache in list(_CACHES):
        cache._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks_in_child)


class PlanCache:
    """A bounded map from a plan key (``simdbind._fastcall.key``, or a tuple led by a wrapper's private sentinel as
    ``gather_elements`` makes: plain arguments only, so that equal keys mean arguments the checks treat alike) to a
    wrapper's plan. ``get`` is a plain dict lookup (atomic under the GIL,
    no lock on the hot path); ``put`` evicts the oldest entries beyond `limit` under a lock."""

    __slots__ = ("limit", "_entries", "_lock", "get", "__weakref__")

    def __init__(self, limit: int = 128) -> None:
        self.limit = limit
        self._entries: dict[Any, Any] = {}
        self._lock = threading.Lock()
        self.get = self._entries.get
        _CACHES.add(self)

    def put(self, key: Any, plan: Any) -> None:
        if key is None:
            return
        with self._lock:
            entries = self._entries
            while len(entries) >= self.limit:
                del entries[next(iter(entries))]  # the oldest entry (dicts keep insertion order)
            entries[key] = plan

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _after_fork(self) -> None:
        self._lock = threading.Lock()  # another thread of the parent may have held it
        self._entries.clear()


def clear_plan_caches() -> None:
    """Forget every plan of every library. A plan may hold a C context, which keeps the ISA selected when it was
    made: when the bundled library's ISA changes (process-wide, whichever Library object changed it), plans made
    before would go on running the old one."""
    for cache in list(_CACHES):
        cache.clear()


atexit.register(clear_plan_caches)


class NativeContext:
    """Base class of the context classes: owns one C context (see the module's text for why it is built this way).

    A subclass calls :meth:`_own` once its C context exists, reads the context for each C call with
    :meth:`_live` (under ``_lock`` when it has one) and names itself in :meth:`_key` for the repr.
    """

    _handle: Any = None
    _lock: threading.Lock | None = None
    isa: str = ""

    def _own(self, handle: Any, *, isa: str, serialised: bool) -> None:
        """Take ownership of `handle` (an ``ffi.gc`` pointer); `serialised`: calls must not overlap."""
        self.isa = isa
        if serialised:
            self._lock = threading.Lock()
            _LOCKED.add(self)
        self._handle = handle

    def _live(self) -> Any:
        """The C context for one call (keep it in a local variable for the call), or ContextClosedError."""
        handle = self._handle
        if handle is None:
            raise ContextClosedError(f"{type(self).__name__}: the context is closed")
        return handle

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called.

        Examples
        --------
        >>> gather = simdbind.GatherElements(np.float32, np.int32, (3,), (2,), axis=0)
        >>> gather.closed
        False
        >>> gather.close()
        >>> gather.closed
        True
        """
        return self._handle is None

    def close(self) -> None:
        """Release the C context (idempotent).

        Calls that other threads have in flight finish first: the context is released when the last of them
        returns. Later calls raise :class:`~simdbind.ContextClosedError`. A ``with`` block closes the context at
        its end; a context never closed is released when it is garbage-collected.

        Returns
        -------
        None

        Examples
        --------
        >>> data = np.array([10, 20, 30], np.float32)
        >>> with simdbind.GatherElements(np.float32, np.int32, (3,), (2,), axis=0) as gather:
        ...     gather(data, np.array([2, 0], np.int32))
        array([30., 10.], dtype=float32)
        >>> gather.close()                                     # again: nothing happens
        >>> gather(data, np.array([2, 0], np.int32))
        Traceback (most recent call last):
        ...
        simdbind.errors.ContextClosedError: GatherElements: the context is closed
        """
        self._handle = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce_ex__(self, protocol: Any) -> Any:
        name = type(self).__name__
        raise ContextCopyError(
            f"{name}: a context cannot be copied or pickled: the copy would share its C context, and closing one "
            f"would free it under the other; make a second context by calling {name}(...) again with the same "
            "arguments (in another process, create it there)")

    def _key(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._key()} isa={self.isa} {'closed' if self.closed else 'open'}>"
