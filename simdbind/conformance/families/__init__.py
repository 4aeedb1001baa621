"""The conformance suite's families, one folder each (``families/<family>/``), every folder with the same files:

``__init__.py`` (the family's registry), ``cases.py`` (its functions' cases, tolerances and benchmark cases),
``reference.py`` (the NumPy references), ``peers.py`` (the other engines' adapters of its functions: one class per
engine, each adapter registered on its engine with :func:`simdbind.conformance.engines.adapter`; it imports no
engine until an adapter runs), ``deviations.json`` (its entries of the catalogue of known deviations) and, where
``explore --keep`` kept some, ``regressions.txt``.

:func:`names` lists the folders: it is the one list of the families, read by everything that needs it (the case
registry, the engines, which import every family's ``peers``, the benchmarks, the catalogue, the test module).
Importing this package imports no family.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path

DIRECTORY = Path(__file__).parent


@functools.cache
def names() -> tuple[str, ...]:
    """The families, sorted: the folders of this package that are packages."""
    return tuple(sorted(path.name for path in DIRECTORY.iterdir() if (path / "__init__.py").is_file()))


def path(family: str, name: str) -> Path:
    """The file `name` (``deviations.json``, ``regressions.txt``) of `family`'s folder, whether it exists or not."""
    return DIRECTORY / family / name


def modules(role: str) -> tuple[str, ...]:
    """The module `role` (``cases``, ``reference``, ``peers``) of every family, as importable names."""
    return tuple(f"{__name__}.{family}.{role}" for family in names())


def register() -> None:
    """Import every family, which registers its functions (:data:`simdbind.conformance.model.REGISTRY`)."""
    for family in names():
        importlib.import_module(f"{__name__}.{family}")


def functions(family: str) -> tuple[str, ...]:
    """The names of the registered functions of `family`, in registration order."""
    from simdbind.conformance.model import REGISTRY

    return tuple(name for name, function in REGISTRY.items() if function.family == family)
