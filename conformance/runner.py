"""Runs functions x implementations x cases and compares each result with the reference."""

from __future__ import annotations

import fnmatch
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from conformance import cases as _cases  # noqa: F401  (registers every function)
from conformance.implementations import Implementation
from conformance.model import REGISTRY, Case, Function
from conformance.tolerance import compare

DEFAULT_SEED = 20261122


@dataclass
class CaseResult:
    implementation: str
    function: str
    descriptor: str
    group: str
    dtype: str
    layout: str
    status: str  # "pass", "fail", "error", "skip"
    detail: str = ""
    tolerance: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    mismatches: int = 0
    total: int = 0
    seconds: float = 0.0
    repro: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("pass", "skip")


def select_cases(function: Function, profile: str, pattern: str | None = None) -> list[Case]:
    """The function's cases in `profile`, optionally filtered by a glob over "function dtype layout descriptor"."""
    chosen = [c for c in function.cases() if profile in c.profiles]
    if pattern:
        chosen = [c for c in chosen if fnmatch.fnmatch(f"{c.function} {c.dtype} {c.layout} {c.descriptor}",
                                                       f"*{pattern}*")]
    return chosen


def functions(names: Iterable[str] | None = None) -> list[Function]:
    if not names:
        return list(REGISTRY.values())
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise KeyError(f"unknown function(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
    return [REGISTRY[n] for n in names]


def repro_command(implementation: Implementation, case: Case, seed: int) -> str:
    library = "bundled" if implementation.library.kind == "bundled" else implementation.library.path
    return (f"simdbind conformance --library {library} --isa {implementation.isa} --profile full "
            f"--seed {seed} --case '{case.descriptor}'")


def run_case(implementation: Implementation, function: Function, case: Case, seed: int = DEFAULT_SEED) -> CaseResult:
    result = CaseResult(implementation.name, function.name, case.descriptor, case.group, case.dtype, case.layout,
                        "pass", repro=repro_command(implementation, case, seed))
    missing = implementation.has(function.symbols)
    if missing:
        result.status, result.detail = "skip", f"{missing} is not provided by this library"
        return result
    inputs = function.inputs(case, case.rng(seed))
    tolerance = function.tolerance(case)
    result.tolerance = tolerance.describe()
    start = time.perf_counter()
    try:
        with implementation.active() as library:
            actual = function.run(library, case, inputs)
    except Exception as error:  # an implementation error is a finding, not a crash of the run
        result.status = "error"
        result.detail = f"{type(error).__name__}: {error}"
        result.seconds = time.perf_counter() - start
        if not isinstance(error, (ValueError, TypeError, NotImplementedError, RuntimeError)):
            result.detail += "\n" + traceback.format_exc(limit=3)
        return result
    result.seconds = time.perf_counter() - start
    expected = function.reference(case, inputs)
    actual_parts = actual if isinstance(actual, tuple) else (actual,)
    expected_parts = expected if isinstance(expected, tuple) else (expected,)
    details = []
    for index, (a, e) in enumerate(zip(actual_parts, expected_parts)):
        comparison = compare(np.asarray(a), np.asarray(e), tolerance)
        result.max_abs = max(result.max_abs, comparison.max_abs)
        result.max_rel = max(result.max_rel, comparison.max_rel)
        result.max_ulp = max(result.max_ulp, comparison.max_ulp)
        result.mismatches += comparison.mismatches
        result.total += comparison.total
        if not comparison.passed:
            label = f"output {index}: " if len(actual_parts) > 1 else ""
            details.append(f"{label}{comparison.mismatches}/{comparison.total} outside {tolerance.describe()}; "
                           f"first at {comparison.first_mismatch}; max abs {comparison.max_abs:.3g}, "
                           f"max ulp {comparison.max_ulp:.0f}")
    if details:
        result.status, result.detail = "fail", "; ".join(details)
    return result


@dataclass
class Run:
    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.ok]


def run(implementations: list[Implementation], function_names: Iterable[str] | None = None, profile: str = "ci",
        seed: int = DEFAULT_SEED, pattern: str | None = None, progress: Any = None) -> Run:
    start = time.perf_counter()
    plan = [(impl, fn, case) for fn in functions(function_names) for case in select_cases(fn, profile, pattern)
            for impl in implementations]
    outcome = Run()
    for index, (impl, fn, case) in enumerate(plan):
        outcome.results.append(run_case(impl, fn, case, seed))
        if progress:
            progress(index + 1, len(plan), outcome.results[-1])
    outcome.seconds = time.perf_counter() - start
    return outcome
