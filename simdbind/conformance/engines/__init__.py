"""Other engines as implementations under test (cross-validation), one package per engine, written to the public
API (:mod:`simdbind.conformance.api`) and registered in the entry-point group ``simdbind.conformance.implementations``
(``--impl torch``). An engine's package holds its implementation object and the plumbing its adapters share; the
adapters come from the families (:func:`adapter_modules`). An engine that is not installed is refused when it is asked
for by name; in a report it appears with every case skipped and the reason."""

from __future__ import annotations

from pathlib import Path

from simdbind.conformance import families


def adapter_modules(engine_module: str, engine_file: str) -> tuple[str, ...]:
    """The modules of the engine package `engine_module` (its ``__init__``'s ``__file__``: `engine_file`) holding
    adapters of a family, one per family it covers, then its ``prepare`` module."""
    folder = Path(engine_file).parent
    covered = tuple(family for family in families.names() if (folder / f"{family}.py").is_file())
    return tuple(f"{engine_module}.{module}" for module in covered + ("prepare",))
