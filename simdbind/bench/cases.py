"""Benchmark cases: conformance cases listed by the family modules, and the work one call of each does."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType
from typing import NamedTuple, Sequence

import numpy as np

from simdbind.conformance import cases as _registered  # noqa: F401  (registers every function)
from simdbind.conformance.model import REGISTRY, Case, case_from_descriptor

#: Throughput units: the work of a call counted in elements, floating-point operations (or integer multiply-adds
#: counted as two operations), the operations of the direct algorithm where an implementation may take one that
#: does fewer (EFFECTIVE: a Winograd convolution's rate exceeds what the machine computes), or bytes.
EFFECTIVE = "effective GFLOP/s"
UNITS = ("Gelem/s", "GFLOP/s", EFFECTIVE, "GB/s")
#: Modules of this package that are not family modules.
NOT_FAMILIES = frozenset({"cases", "harness", "plot", "raw", "bounds"})
#: Bytes per element of the dtypes of conformance cases.
ITEMSIZE = {"float32": 4, "bfloat16": 2, "bf16": 2, "uint16": 2, "uint8": 1, "int8": 1, "int32": 4, "int64": 8}


@dataclass(frozen=True)
class Work:
    """What one call does: `amount` of `unit` (times 1e9 per second is the throughput) and, for a memory-bound
    call, the bytes it reads and writes (`moved`: the memcpy bound copies as many)."""

    unit: str
    amount: float
    moved: int | None = None

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"Work: unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if not self.amount > 0:
            raise ValueError(f"Work: amount must be > 0, got {self.amount!r}")


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


def family_modules(package: str = "simdbind.bench") -> list[str]:
    """Names of the family modules of `package`, sorted."""
    pkg = importlib.import_module(package)
    return sorted(f"{package}.{info.name}" for info in pkgutil.iter_modules(pkg.__path__)
                  if not info.name.startswith("_") and info.name not in NOT_FAMILIES)


def family_module(family: str) -> ModuleType:
    return importlib.import_module(f"simdbind.bench.{family}")


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


def discover(patterns: Sequence[str] | None = None, quick: bool = False, package: str = "simdbind.bench",
             modules: Sequence[str] | None = None) -> tuple[list[Listed], dict[str, str]]:
    """The cases of every family module (or of `modules`) that match `patterns`, plus {module: error} for the
    modules that failed to import or list a descriptor that does not parse (the other families still run)."""
    listed: list[Listed] = []
    errors: dict[str, str] = {}
    for module_name in (family_modules(package) if modules is None else modules):
        family = module_name.rsplit(".", 1)[-1]
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
    """The first paragraph of a family module's docstring, on one line (the report's note on the family)."""
    doc = (family_module(family).__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())


def itemsize(case: Case) -> int:
    return ITEMSIZE[case.dtype]


def elements(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))
