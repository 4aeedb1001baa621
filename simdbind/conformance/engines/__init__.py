"""Other engines as implementations under test (cross-validation), one package per engine, written to the public
API (:mod:`simdbind.conformance.api`) and registered in the entry-point group ``simdbind.conformance.implementations``
(``--impl torch``). An engine's package holds its implementation object and the plumbing its adapters share (graph
building, sessions); the adapters themselves live with their family, every engine's in the family's one
``families/<family>/peers.py``, each registered with :func:`adapter` (and :func:`preparer`). An engine's
implementation imports every family's ``peers`` module when it is first used (:func:`peer_modules`), which is how
it collects its adapters. A ``peers`` module imports no engine (each adapter imports its engine when it runs), so
the families import where none is installed. An engine that is not installed is refused when it is asked for by
name; in a report it appears with every case skipped and the reason."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

from simdbind.conformance import families

if TYPE_CHECKING:
    from simdbind.conformance.api import CaseFunction, Preparer, PythonImplementation, ToleranceRule


def peer_modules(*after: str) -> tuple[str, ...]:
    """The modules an engine's implementation imports when it is first used: every family's ``peers`` module (their
    :func:`adapter` decorators register the engine's adapters on it), then `after`, modules of the engine's own that
    work on what was registered (OpenVINO's and ncnn's ``prepare``)."""
    return families.modules("peers") + after


def implementation(engine: str) -> PythonImplementation:
    """The implementation object of `engine` (``simdbind.conformance.engines.<engine>``); importing its package
    imports no engine."""
    found: PythonImplementation = importlib.import_module(f"{__name__}.{engine}").implementation
    return found


def adapter(engine: str, function: str, *, tolerance: ToleranceRule | None = None
            ) -> Callable[[CaseFunction], CaseFunction]:
    """Register the decorated ``fn(case, inputs)`` as `engine`'s adapter of the simdbind function `function`
    (:meth:`PythonImplementation.function <simdbind.conformance.api.PythonImplementation.function>`; `tolerance`
    only where the engine is documented to be less accurate)."""
    return implementation(engine).function(function, tolerance=tolerance)


def preparer(engine: str, function: str) -> Callable[[Preparer], Preparer]:
    """Register the decorated ``fn(case, inputs) -> call`` as `engine`'s prepared call of `function` (what
    ``simdbind bench`` times; :meth:`PythonImplementation.preparer
    <simdbind.conformance.api.PythonImplementation.preparer>`)."""
    return implementation(engine).preparer(function)


def fallback(engine: str, case: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
    """A prepared call that is `engine`'s adapter of the case's function run again (for the cases a preparer does not
    set up itself; an adapter's :class:`~simdbind.conformance.Unsupported` is raised by the call)."""
    run = implementation(engine).functions[case.function][0]
    return lambda: run(case, inputs)
