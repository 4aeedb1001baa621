"""Benchmark cases: conformance cases listed by the family modules, and the work one call of each does.

The family modules are every conformance family's ``cases.py`` (:mod:`simdbind.conformance.families`) and this
package's modules of other measurements (overhead, gil)."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import NamedTuple, Sequence

from simdbind.conformance import families
from simdbind.conformance.model import REGISTRY, Case, case_from_descriptor
from simdbind.conformance.work import Work

#: Modules of this package that are not family modules.
NOT_FAMILIES = frozenset({"cases", "harness", "plot", "raw"})


class Listed(NamedTuple):
    """A case as a family module lists it: the bench family (the module) and the conformance case."""

    family: str
    case: Case

    @property
    def descriptor(self) -> str:
        return self.case.descriptor

    @property
    def row(self) -> str:
        return row(self.family, self.case.function, self.case.descriptor)

    def matches(self, patterns: Sequence[str] | None) -> bool:
        """True without patterns, else when a pattern (any case) is the family's name or a substring of the
        descriptor; a family measuring other families' functions (overhead, gil) is only selected by its name, or
        by ``family: substring`` (``overhead: unary``), so that ``pooling`` does not select its cases."""
        if not patterns:
            return True
        own = REGISTRY[self.case.function].family == self.family
        descriptor = self.case.descriptor.lower()
        for pattern in (p.lower().strip() for p in patterns):
            if pattern == self.family or (own and pattern in descriptor):
                return True
            family, colon, rest = pattern.partition(":")
            if colon and family.strip() == self.family and rest.strip() in descriptor:
                return True
        return False


def row(family: str, function: str, descriptor: str) -> str:
    """A case's name in progress lines, tables and plots: its whole descriptor (which tells every case apart),
    after the bench family where that is not the function's own (``overhead: unary op=abs size=16``)."""
    own = REGISTRY[function].family if function in REGISTRY else family
    return descriptor if family == own else f"{family}: {descriptor}"


def family_names() -> dict[str, str]:
    """{family: module name} of every family module: the conformance families' cases modules, then the other
    measurements of this package, sorted by family."""
    own = sorted(info.name for info in pkgutil.iter_modules(importlib.import_module(__package__ or "").__path__)
                 if not info.name.startswith("_") and info.name not in NOT_FAMILIES)
    found = {**{family: f"{families.__name__}.{family}.cases" for family in families.names()},
             **{name: f"{__package__}.{name}" for name in own}}
    return dict(sorted(found.items()))


def family_modules() -> list[str]:
    """Names of the family modules (see :func:`family_names`)."""
    return list(family_names().values())


def family_module(family: str) -> ModuleType:
    return importlib.import_module(family_names()[family])


def work(case: Case, family: str | None = None) -> Work:
    """The work of one call of `case`: the bench `family` module's ``work`` when it has one, else that of the
    module named after the case function's family."""
    if family is not None:
        module = family_module(family)
        if hasattr(module, "work"):
            result: Work = module.work(case)
            return result
    result = family_module(REGISTRY[case.function].family).work(case)
    return result


def discover(patterns: Sequence[str] | None = None, quick: bool = False,
             modules: Sequence[str] | None = None) -> tuple[list[Listed], dict[str, str]]:
    """The cases of every family module (or of `modules`) that match `patterns`, plus {module: error} for the
    modules that failed to import or list a descriptor that does not parse (the other families still run)."""
    listed: list[Listed] = []
    errors: dict[str, str] = {}
    named = {module: family for family, module in family_names().items()}
    for module_name in (list(named) if modules is None else modules):
        family = named.get(module_name) or module_name.rsplit(".", 1)[-1]
        try:
            module = importlib.import_module(module_name)
            descriptors = list(getattr(module, "QUICK", module.DESCRIPTORS) if quick else module.DESCRIPTORS)
            found = [Listed(family, case_from_descriptor(d)) for d in descriptors]
            for item in found:
                work(item.case, family)  # a case whose work cannot be computed is this module's error
        except Exception as error:  # noqa: BLE001 - reported, the other families still run
            errors[module_name] = f"{type(error).__name__}: {error}"
            continue
        listed.extend(item for item in found if item.matches(patterns))
    return listed, errors


def from_descriptor(descriptor: str) -> Listed:
    """A case no family lists (``--case``): benched as a case of its function's family."""
    case = case_from_descriptor(descriptor)
    return Listed(REGISTRY[case.function].family, case)


def summary(family: str) -> str:
    """The first paragraph of a family module's ``BENCH_NOTE`` (a conformance family's) or docstring, on one line
    (the report's note on the family)."""
    module = family_module(family)
    doc = (getattr(module, "BENCH_NOTE", None) or module.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())
