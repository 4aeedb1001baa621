"""The simdbind conformance suite: NumPy references, named case grids and a runner that checks any implementation.

The public API (importable from here): :class:`Case`, :class:`Unsupported`, :class:`PythonImplementation`, the
:class:`Implementation` protocol and :class:`Tolerance` (see :mod:`simdbind.conformance.api`).

* ``simdbind.conformance.families``: one folder per family, mirroring ``simdbind``'s modules, each with the same files:
  ``reference.py`` (NumPy references written from the contract only), ``cases.py`` (each function a
  :class:`~simdbind.conformance.model.Function`: its cases, inputs, how to call it, its reference and its tolerance,
  registered by name; and its benchmark cases), ``deviations.json``; ``simdbind.conformance.registry`` registers them
  all.
* ``simdbind.conformance.runner``: runs functions x implementations x cases (in worker processes if asked) and returns
  results that the CLI prints and the pytest modules assert on; ``simdbind.conformance.report`` writes them (JSON, JUnit,
  Markdown, HTML matrix) and diffs two runs.
* ``simdbind.conformance.implementations``: what runs the cases (a library at one ISA, or any implementation of the
  API) and how ``--impl`` names them; ``simdbind.conformance.engines``: PyTorch, ONNX Runtime, OpenVINO and ncnn.
* ``simdbind.conformance.options``: the options of ``simdbind conformance`` and of the pytest plugin
  (``simdbind.conformance.plugin``), whose test modules are ``simdbind.conformance.tests``.
* ``simdbind.conformance.deviations``: the catalogue of known deviations (data in each family's
  ``deviations.json``).
* ``simdbind.conformance.strategies``: hypothesis settings profiles and common strategies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simdbind.conformance.api import Implementation, PythonImplementation, Unsupported
    from simdbind.conformance.model import Case
    from simdbind.conformance.tolerance import Tolerance

__all__ = ["Case", "Implementation", "PythonImplementation", "Tolerance", "Unsupported"]

# Imported on first use: the pytest plugin lives in this package and must not cost other projects' runs NumPy.
_HOMES = {"Case": "model", "Implementation": "api", "PythonImplementation": "api", "Tolerance": "tolerance",
          "Unsupported": "api"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
