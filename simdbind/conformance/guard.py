"""Calls into an implementation, guarded: whatever the implementation's code does, the run goes on.

* :func:`call` runs one protocol method; anything it raises, ``BaseException`` included (``SystemExit``,
  ``GeneratorExit``, a ``KeyboardInterrupt`` raised by the adapter itself), comes back as an :class:`AdapterError`
  naming the method, which the runner records as the case's ``error``.
* The user's own Ctrl-C is told apart from a ``KeyboardInterrupt`` that adapter code raises: while
  :func:`watching_interrupts` is active (on the main thread), a SIGINT sets a flag before the usual handler runs, and
  only an interrupt with the flag set passes through :func:`call`.
* :func:`snapshot` and :func:`modified` find the inputs a call changed: an implementation must not write to them,
  and the reference is computed from the snapshot.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

T = TypeVar("T")


class AdapterError(Exception):
    """An implementation's method raised (`method`: its name with parentheses, e.g. ``"run()"``)."""

    def __init__(self, method: str, error: BaseException) -> None:
        self.method, self.error = method, error
        text = str(error)
        super().__init__(f"{method} raised {type(error).__name__}" + (f": {text}" if text else ""))


class _Interrupts:
    """The SIGINT flag, and how many :func:`watching_interrupts` are active (the handler is installed once)."""

    def __init__(self) -> None:
        self.requested = False
        self.depth = 0
        self.previous: Any = None


_interrupts = _Interrupts()


def _on_sigint(signum: int, frame: Any) -> None:
    _interrupts.requested = True
    previous = _interrupts.previous
    if callable(previous) and previous is not _on_sigint:
        previous(signum, frame)
    else:
        raise KeyboardInterrupt


def interrupt_requested() -> bool:
    """Has the user pressed Ctrl-C (a SIGINT reached this process) since the outermost watch began?"""
    return _interrupts.requested


@contextlib.contextmanager
def watching_interrupts() -> Iterator[None]:
    """Tell the user's SIGINT apart from a KeyboardInterrupt raised by code, for the duration. Off the main thread
    (where no signal handler can be set, and where no SIGINT is ever raised) it does nothing. A SIGINT that was
    ignored stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    outermost = _interrupts.depth == 0
    if outermost:
        previous = signal.getsignal(signal.SIGINT)
        if not callable(previous):  # SIG_IGN or SIG_DFL: Ctrl-C does not raise here anyway
            yield
            return
        _interrupts.previous, _interrupts.requested = previous, False
        signal.signal(signal.SIGINT, _on_sigint)
    _interrupts.depth += 1
    try:
        yield
    finally:
        _interrupts.depth -= 1
        if outermost:
            signal.signal(signal.SIGINT, _interrupts.previous)
            _interrupts.previous = None


def call(method: str, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``; anything it raises but the user's Ctrl-C becomes an :class:`AdapterError`."""
    try:
        return function(*args)
    except AdapterError:  # a nested call's, already named
        raise
    except KeyboardInterrupt as error:
        if _interrupts.requested:
            raise
        raise AdapterError(method, error) from error
    except BaseException as error:  # SystemExit, GeneratorExit, ...: adapter code does not end the run
        raise AdapterError(method, error) from error


# -- inputs -------------------------------------------------------------------------------------------------------
def snapshot(value: Any) -> Any:
    """A private copy of every array (and container of arrays) in `value`; other values as they are."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: snapshot(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(item) for item in value)
    return value


def _same(before: Any, after: Any) -> bool:
    if isinstance(before, np.ndarray):
        if not isinstance(after, np.ndarray) or after.shape != before.shape or after.dtype != before.dtype:
            return False
        # Bytes, not values: NaN payloads and -0.0 count, and NaN equals itself. Small arrays as bytes (a copy and
        # a memcmp: fastest there), large ones as unsigned integers of their item size (no copy).
        if before.nbytes <= 1 << 16:
            return before.tobytes() == after.tobytes()
        size = before.dtype.itemsize
        unit = np.dtype(f"u{size}") if size in (1, 2, 4, 8) else np.dtype(np.uint8)
        return bool((np.ascontiguousarray(before).reshape(-1).view(unit)
                     == np.ascontiguousarray(after).reshape(-1).view(unit)).all())
    if isinstance(before, dict):
        return (isinstance(after, dict) and before.keys() == after.keys()
                and all(_same(item, after[key]) for key, item in before.items()))
    if isinstance(before, (list, tuple)):
        return (type(after) is type(before) and len(after) == len(before)
                and all(_same(b, a) for b, a in zip(before, after)))
    return after is before


def modified(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The names of the inputs in `before` (a :func:`snapshot`) that differ in `after` or are gone from it."""
    return [name for name, value in before.items() if name not in after or not _same(value, after[name])]
