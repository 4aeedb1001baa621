"""Hostile implementations for the runner's tests: each misbehaves in one method, the way an adapter's bug (or a
hostile adapter) would. Module-level, so that worker processes and repro lines select them as
``tests.hostile_doubles:NAME``.

Each runs any function: its ``run`` returns a copy of the first input (right for ``fake_copy``), unless it is the
method that misbehaves.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np


def _raise_value_error(inputs: Any = None) -> Any:
    raise ValueError("hostile adapter")


def _exit(inputs: Any = None) -> Any:
    sys.exit(0)


def _interrupt(inputs: Any = None) -> Any:
    raise KeyboardInterrupt


def _generator_exit(inputs: Any = None) -> Any:
    raise GeneratorExit


def _arrays(value: Any) -> list[np.ndarray]:
    """The arrays in `value` (a dict's values and lists walked)."""
    if isinstance(value, np.ndarray):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return [array for item in items for array in _arrays(item)]


def _zero_inputs(inputs: dict[str, Any]) -> Any:
    arrays = _arrays(inputs)
    for array in arrays:
        array[...] = 0
    return np.zeros_like(arrays[0])


def _not_an_array(inputs: Any = None) -> Any:
    return "not an array"


def _none(inputs: Any = None) -> Any:
    return None


class _Unconvertible:
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("cannot be converted")


def _unconvertible(inputs: Any = None) -> Any:
    return _Unconvertible()


class Hostile:
    """An implementation whose `method` does `act` (the others behave)."""

    def __init__(self, name: str, method: str, act: Callable[..., Any]) -> None:
        self.name, self.method, self.act = name, method, act

    def _misbehave(self, method: str) -> None:
        if self.method == method:
            self.act()

    def unsupported(self, function: str, case: Any) -> str | None:
        self._misbehave("unsupported")
        return None

    def tolerance(self, function: str, case: Any) -> None:
        self._misbehave("tolerance")
        return None

    def run(self, function: str, case: Any, inputs: dict[str, Any]) -> Any:
        if self.method == "run":
            return self.act(inputs)
        return np.array(_arrays(inputs)[0], copy=True)

    def prepare(self, function: str, case: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
        self._misbehave("prepare")
        return lambda: self.run(function, case, inputs)


HONEST = Hostile("honest", "", _none)
RAISING_UNSUPPORTED = Hostile("raising-unsupported", "unsupported", _raise_value_error)
RAISING_TOLERANCE = Hostile("raising-tolerance", "tolerance", _raise_value_error)
RAISING_PREPARE = Hostile("raising-prepare", "prepare", _raise_value_error)
EXITING_PREPARE = Hostile("exiting-prepare", "prepare", _exit)
EXITING = Hostile("exiting", "run", _exit)
INTERRUPTING = Hostile("interrupting", "run", _interrupt)
GENERATOR_EXIT = Hostile("generator-exit", "run", _generator_exit)
ZEROING = Hostile("zeroing", "run", _zero_inputs)
NOT_AN_ARRAY = Hostile("not-an-array", "run", _not_an_array)
RETURNS_NONE = Hostile("returns-none", "run", _none)
UNCONVERTIBLE = Hostile("unconvertible", "run", _unconvertible)

#: name -> (the status of every case, a fragment of its detail), for the doubles the runner runs.
EXPECTED = {
    "honest": ("pass", ""),
    "raising-unsupported": ("error", "unsupported() raised ValueError: hostile adapter"),
    "raising-tolerance": ("error", "tolerance() raised ValueError: hostile adapter"),
    "exiting": ("error", "run() raised SystemExit: 0"),
    "interrupting": ("error", "run() raised KeyboardInterrupt"),
    "generator-exit": ("error", "run() raised GeneratorExit"),
    "zeroing": ("fail", "modified its input x (inputs are read-only)"),
    "not-an-array": ("error", "converting run()'s result raised TypeError: returned str, not an array of numbers"),
    "returns-none": ("error", "converting run()'s result raised TypeError: returned NoneType, not an array of numbers"),
    "unconvertible": ("error", "converting run()'s result raised RuntimeError: cannot be converted"),
}
RUN_BY_THE_RUNNER = [HONEST, RAISING_UNSUPPORTED, RAISING_TOLERANCE, EXITING, INTERRUPTING, GENERATOR_EXIT, ZEROING,
                     NOT_AN_ARRAY, RETURNS_NONE, UNCONVERTIBLE]
