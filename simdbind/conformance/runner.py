"""Runs functions x implementations x cases and compares each result with the reference.

Statuses of a case on an implementation:

* ``pass``: within tolerance; ``fail``: outside it; ``error``: the call raised (or the worker process died);
  ``skip``: the implementation lacks the function or cannot express the case (the reason is the detail);
* ``known``: failed, and the deviation catalogue lists it for this implementation (the entry id is in
  ``deviation``); ``xpass``: the catalogue lists it but it passed (the deviation did not show).

Case inputs are seeded from the run's seed and the case descriptor, so results do not depend on order or on the
number of worker processes.
"""

from __future__ import annotations

import fnmatch
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from simdbind.conformance import cases as _cases  # noqa: F401  (registers every function)
from simdbind.conformance import deviations as _deviations
from simdbind.conformance.api import Unsupported
from simdbind.conformance.implementations import as_subject
from simdbind.conformance.model import GUARD_BYTES, OUTPUTS, REGISTRY, Case, DescriptorError, Function, GuardedOutputs
from simdbind.conformance.tolerance import compare

DEFAULT_SEED = 20261122
STATUSES = ("pass", "fail", "error", "skip", "known", "xpass")
#: Statuses that do not fail a run.
OK_STATUSES = ("pass", "skip", "known", "xpass")


@dataclass
class CaseResult:
    implementation: str
    function: str
    descriptor: str
    group: str
    dtype: str
    layout: str
    status: str  # one of STATUSES
    detail: str = ""
    tolerance: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    mismatches: int = 0
    total: int = 0
    seconds: float = 0.0
    repro: str = ""
    family: str = ""
    deviation: str = ""  # ids of the catalogue entries that match, comma-separated
    variant: str = ""  # Function.variant(case): the matrix row within the function (e.g. the operation)

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES


#: ``progress(done, total, result)``, called after each case.
Progress = Callable[[int, int, CaseResult], None]


def _matches(case: Case, patterns: Sequence[str]) -> bool:
    text = f"{case.function} {case.dtype} {case.layout} {case.descriptor}"
    return all(fnmatch.fnmatchcase(text, f"*{p}*") for p in patterns)


def select_cases(function: Function, profile: str, pattern: str | Sequence[str] | None = None,
                 descriptor: str | None = None) -> list[Case]:
    """The function's cases in `profile`, filtered by glob(s) over "function dtype layout descriptor" (all must
    match). With `descriptor`, the one case of that exact descriptor whatever the profile (a repro), or none when
    it names another function's case."""
    if descriptor is not None:
        found = find_case(function, descriptor)
        return [found] if found is not None else []
    chosen = [c for c in function.cases() if profile in c.profiles]
    patterns = [pattern] if isinstance(pattern, str) else [p for p in (pattern or ()) if p]
    if patterns:
        chosen = [c for c in chosen if _matches(c, patterns)]
    return chosen


def find_case(function: Function, descriptor: str) -> Case | None:
    """The case of `function` that `descriptor` names (the one place a descriptor is looked up): a grid case, or
    one that no grid lists (found by explore) built from the descriptor alone; None if it names neither."""
    found = next((c for c in function.cases() if c.descriptor == descriptor), None)
    if found is None and descriptor.split(" ", 1)[0] == function.name:
        try:
            return function.parse(descriptor)
        except DescriptorError:
            return None
    return found


def check_descriptor(descriptor: str, chosen: Sequence[Function]) -> None:
    """KeyError naming the closest descriptor when `descriptor` names no case of the `chosen` functions."""
    if any(find_case(fn, descriptor) is not None for fn in chosen):
        return
    from simdbind.conformance.names import did_you_mean

    known = [c.descriptor for fn in chosen for c in fn.cases()]
    raise KeyError(f"--case: no case is named {descriptor!r}{did_you_mean(descriptor, known)}")


def functions(names: Iterable[str] | None = None) -> list[Function]:
    if not names:
        return list(REGISTRY.values())
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        from simdbind.conformance.names import did_you_mean

        hints = "".join(did_you_mean(n, REGISTRY) for n in unknown)
        raise KeyError(f"unknown function(s) {', '.join(unknown)}{hints}; known: {', '.join(REGISTRY)}")
    return [REGISTRY[n] for n in names]




def guarded(value: Any) -> Any:
    """`value` with every non-empty array replaced by an equal, C-contiguous copy that lies between guard zones
    (lists, tuples and dict values are walked). Same values, so the reference is unaffected."""
    if isinstance(value, np.ndarray) and value.size:
        storage = np.full(GUARD_BYTES * 2 + value.nbytes, 0xFF, np.uint8)
        copy = storage[GUARD_BYTES:GUARD_BYTES + value.nbytes].view(value.dtype).reshape(value.shape)
        copy[...] = value
        return copy
    if isinstance(value, dict):
        return {key: guarded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(guarded(item) for item in value)
    return value


def repro_command(implementation: Any, case: Case, seed: int) -> str:
    """One command that runs exactly this case on this implementation."""
    descriptor = case.descriptor.replace("'", "'\\''")
    return (f"simdbind conformance {implementation.repro_args()} --function {case.function} --seed {seed} "
            f"--case '{descriptor}'")


def run_case(implementation: Any, function: Function, case: Case, seed: int = DEFAULT_SEED,
             catalogue: _deviations.Catalogue | None = None) -> CaseResult:
    """Run one case on one implementation and compare with the reference (computed after the call, from the same
    inputs dict). `catalogue`: the deviation catalogue (default: the package's)."""
    implementation = as_subject(implementation)
    result = CaseResult(implementation.name, function.name, case.descriptor, case.group, case.dtype, case.layout,
                        "pass", family=getattr(function, "family", ""), variant=_variant(function, case))
    reason = implementation.unsupported(function.name, case)
    if reason:
        result.status, result.detail = "skip", reason
        return result
    inputs = guarded(function.inputs(case, case.rng(seed)))
    outputs = inputs[OUTPUTS] = GuardedOutputs()  # run() takes its out= arrays from here
    tolerance = implementation.tolerance(function.name, case) or function.tolerance(case)
    result.tolerance = tolerance.describe()
    start = time.perf_counter()
    try:
        actual = implementation.run(function.name, case, inputs)
    except Unsupported as why:
        result.status, result.detail = "skip", str(why)
        return result
    except Exception as error:  # an implementation error is a finding, not a crash of the run
        result.seconds = time.perf_counter() - start
        if type(error).__name__ == "FunctionNotAvailableError":
            result.status, result.detail = "skip", str(error)
            return result
        result.status = "error"
        result.detail = f"{type(error).__name__}: {error}"
        if not isinstance(error, (ValueError, TypeError, NotImplementedError, RuntimeError)):
            result.detail += "\n" + traceback.format_exc(limit=3)
    else:
        result.seconds = time.perf_counter() - start
        # After the call: a case's run() may record in `inputs` what the library did (e.g. whether it honours a
        # flag) for its reference to follow.
        expected = function.reference(case, inputs)
        actual_parts = actual if isinstance(actual, tuple) else (actual,)
        expected_parts = expected if isinstance(expected, tuple) else (expected,)
        details = outputs.violations()
        if len(actual_parts) != len(expected_parts):
            details.append(f"{len(actual_parts)} outputs, expected {len(expected_parts)}")
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
    return _classify(result, implementation, case, seed, catalogue)


def _variant(function: Function, case: Case) -> str:
    variant = getattr(function, "variant", None)
    return variant(case) if variant is not None else ""


def _classify(result: CaseResult, implementation: Any, case: Case, seed: int,
              catalogue: _deviations.Catalogue | None) -> CaseResult:
    """Apply the deviation catalogue (fail/error -> known, pass -> xpass) and add the repro of non-passes."""
    try:
        known = (catalogue if catalogue is not None else _deviations.default()).match(implementation, case)
    except _deviations.CatalogueError as error:
        result.status, result.detail = "error", f"deviation catalogue: {error}"
        known = []
    if known:
        result.deviation = ", ".join(e.id for e in known)
        behaviour = "; ".join(f"{e.id} ({e.spec}): {e.behaviour}" for e in known)
        if result.status in ("fail", "error"):
            result.status, result.detail = "known", f"known deviation {behaviour}; observed: {result.detail}"
        elif result.status == "pass":
            result.status, result.detail = "xpass", f"catalogued deviation did not show: {behaviour}"
    if result.status != "pass":
        result.repro = repro_command(implementation, case, seed)
    return result


@dataclass
class Run:
    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.ok]

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)


def plan(implementations: Sequence[Any], function_names: Iterable[str] | None = None, profile: str = "ci",
         pattern: str | Sequence[str] | None = None, descriptor: str | None = None
         ) -> list[tuple[int, Function, Case]]:
    """(implementation index, function, case) in run order: function, case, then implementation."""
    return [(index, fn, case) for fn in functions(function_names)
            for case in select_cases(fn, profile, pattern, descriptor)
            for index in range(len(implementations))]


def run(implementations: Sequence[Any], function_names: Iterable[str] | None = None, profile: str = "ci",
        seed: int = DEFAULT_SEED, pattern: str | Sequence[str] | None = None,
        progress: Progress | None = None, workers: int = 1,
        descriptor: str | None = None, catalogue: _deviations.Catalogue | None = None,
        modules: Sequence[str] = ()) -> Run:
    """Run the selected cases. `workers` > 1 runs them in that many processes (spawned, so that torch and
    ONNX Runtime thread pools are never forked); the results, in the same order, are identical. `modules`: extra
    modules that register functions (outside ``simdbind.conformance.cases``), imported by each worker."""
    start = time.perf_counter()
    implementations = [as_subject(impl) for impl in implementations]
    catalogue = catalogue if catalogue is not None else _deviations.default()
    steps = plan(implementations, function_names, profile, pattern, descriptor)
    outcome = Run()
    if workers > 1 and len(steps) > 1:
        outcome.results = _run_parallel(implementations, steps, seed, catalogue, progress, workers, tuple(modules))
    else:
        for done, (index, fn, case) in enumerate(steps, 1):
            outcome.results.append(run_case(implementations[index], fn, case, seed, catalogue))
            if progress:
                progress(done, len(steps), outcome.results[-1])
    outcome.seconds = time.perf_counter() - start
    return outcome


def available_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def worker_count(text: str | int | None, warn: Callable[[str], None] | None = None) -> int:
    """`-n` value: a count >= 1, or "auto" (the CPUs this process may use). More workers than CPUs only add
    interpreters that compete for them: the count is capped there, and `warn` is told so."""
    if text in (None, "", 0, "0"):
        return 1
    cpus = available_cpus()
    if text == "auto":
        return cpus
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise ValueError(f"-n: must be a count >= 1 or 'auto', got {text!r}") from None
    if value < 1:
        raise ValueError(f"-n: must be >= 1 or 'auto', got {text!r}")
    if value > cpus:
        if warn is not None:
            warn(f"-n {value}: capped at {cpus}, the CPUs this process may use")
        return cpus
    return value


# -- worker processes -------------------------------------------------------------------------------------------
_worker: dict[str, Any] = {}


def _worker_init(specs: list[tuple[str, ...]], seed: int, raw_catalogue: list[dict[str, Any]],
                 modules: tuple[str, ...] = ()) -> None:
    import importlib

    from simdbind.conformance.implementations import from_spec

    for module in modules:
        importlib.import_module(module)
    _worker["implementations"] = [from_spec(spec) for spec in specs]
    _worker["seed"] = seed
    catalogue = _deviations.Catalogue()
    for index, raw in enumerate(raw_catalogue):
        source = raw.pop("source", "catalogue")
        catalogue.add(_deviations.parse_entry(raw, source, index))
    _worker["catalogue"] = catalogue
    _worker["cases"] = {}


def _worker_case(function: Function, descriptor: str) -> Case:
    """find_case, through a per-function index of the grid (a worker looks up many cases of one function)."""
    index = _worker["cases"].get(function.name)
    if index is None:
        index = _worker["cases"][function.name] = {c.descriptor: c for c in function.cases()}
    case = index.get(descriptor) or find_case(function, descriptor)
    assert case is not None, descriptor
    return case


def _worker_chunk(chunk: list[tuple[int, int, str, str]]) -> list[tuple[int, CaseResult]]:
    results = []
    for position, impl_index, function_name, descriptor in chunk:
        function = REGISTRY[function_name]
        case = _worker_case(function, descriptor)
        results.append((position, run_case(_worker["implementations"][impl_index], function, case, _worker["seed"],
                                           _worker["catalogue"])))
    return results


def _run_parallel(implementations: Sequence[Any], steps: list[tuple[int, Function, Case]], seed: int,
                  catalogue: _deviations.Catalogue, progress: Progress | None, workers: int,
                  modules: tuple[str, ...] = ()) -> list[CaseResult]:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    items = [(position, index, fn.name, case.descriptor) for position, (index, fn, case) in enumerate(steps)]
    size = max(1, min(256, len(items) // (workers * 8) or 1))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    init = ([impl.spec for impl in implementations], seed, catalogue.raw(), modules)
    context = multiprocessing.get_context("spawn")
    results: list[CaseResult | None] = [None] * len(items)
    done = 0

    def collect(chunk_results: list[tuple[int, CaseResult]]) -> None:
        nonlocal done
        for position, result in chunk_results:
            results[position] = result
            done += 1
            if progress:
                progress(done, len(items), result)

    unfinished: list[list[tuple[int, int, str, str]]] = []
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init, initargs=init) as pool:
        futures = {pool.submit(_worker_chunk, chunk): chunk for chunk in chunks}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    collect(future.result())
                except BrokenProcessPool:
                    unfinished.append(futures[future])
    # A worker died (a crash in C is a finding): rerun the cases it may have held one at a time, each crash
    # recorded as an error of its case, in a fresh single worker.
    rest = [item for chunk in unfinished for item in chunk if results[item[0]] is None]
    retry: ProcessPoolExecutor | None = None
    for item in rest:
        if retry is None:
            retry = ProcessPoolExecutor(1, mp_context=context, initializer=_worker_init, initargs=init)
        try:
            collect(retry.submit(_worker_chunk, [item]).result())
        except BrokenProcessPool:
            retry.shutdown(wait=False)
            retry = None
            position, index, function_name, descriptor = item
            case = _worker_case_in_parent(function_name, descriptor)
            impl = implementations[index]
            crashed = CaseResult(impl.name, function_name, descriptor, case.group, case.dtype, case.layout, "error",
                                 "the process running this case died (a crash in the implementation)",
                                 family=getattr(REGISTRY[function_name], "family", ""),
                                 variant=_variant(REGISTRY[function_name], case))
            collect([(position, _classify(crashed, impl, case, seed, catalogue))])
    if retry is not None:
        retry.shutdown()
    return [r for r in results if r is not None]


def _worker_case_in_parent(function_name: str, descriptor: str) -> Case:
    case = find_case(REGISTRY[function_name], descriptor)
    assert case is not None, descriptor
    return case
