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
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, TypeVar

import numpy as np

from simdbind.conformance import registry as _registry  # noqa: F401  (registers every function)
from simdbind.conformance import deviations as _deviations
from simdbind.conformance import guard
from simdbind.conformance.api import Unsupported
from simdbind.conformance.options import Shard
from simdbind.conformance.implementations import as_subject
from simdbind.conformance.model import GUARD_BYTES, OUTPUTS, REGISTRY, Case, DescriptorError, Function, GuardedOutputs
from simdbind.conformance.tolerance import Tolerance, compare
from simdbind.errors import SimdBindError

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
    info: str = ""  # what the implementation reported of how it ran the case (a convolution context's algorithm)

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
    """Run one case on one implementation and compare with the reference. `catalogue`: the deviation catalogue
    (default: the package's).

    Every call into the implementation is guarded (:mod:`simdbind.conformance.guard`): whatever one of its methods
    raises, ``SystemExit`` included, is this case's ``error``, naming the method; only the user's Ctrl-C stops the
    case. Its inputs must come back unchanged, and the reference is computed from a private copy of them."""
    implementation = as_subject(implementation)
    result = new_result(implementation, function, case, "pass")
    with guard.watching_interrupts():
        try:
            _run_checked(implementation, function, case, seed, result)
        except guard.AdapterError as error:
            result.status, result.detail = "error", str(error)
            if not isinstance(error.error, (ValueError, TypeError, NotImplementedError, RuntimeError)):
                # Where an unexpected exception came from (the innermost frames: the implementation's code).
                result.detail += "\n" + "".join(traceback.format_exception(error.error, limit=-3)).rstrip()
        except _Skip as why:
            result.status, result.detail = "skip", str(why)
            return result
        except CaseError as error:
            result.status, result.detail = "error", f"case: {error}"
            return result
        except ReferenceFailure as error:
            result.status, result.detail = "error", f"reference: {error}"
    return _classify(result, implementation, case, seed, catalogue)


class _Skip(Exception):
    """The implementation cannot run this case (the message is the reason)."""


class CaseError(Exception):
    """The case's inputs cannot be made: its descriptor combines values outside the function's case domain (a
    descriptor written by hand, or a neighbour the guided search made). Reported as an error ``case: ...``."""


class ReferenceFailure(Exception):
    """The suite's reference raised on the case: a defect of the suite, reported as an error ``reference: ...``."""


def _run_checked(implementation: Any, function: Function, case: Case, seed: int, result: CaseResult) -> None:
    """Fill `result` (status, detail, errors): the steps of :func:`run_case`, raising :class:`_Skip` or
    :class:`guard.AdapterError`."""
    reason = guard.call("unsupported()", implementation.unsupported, function.name, case)
    if reason:
        raise _Skip(str(reason))
    try:
        inputs = guarded(function.inputs(case, case.rng(seed)))
    except Exception as error:  # the descriptor combines values the function's inputs cannot be made from
        raise CaseError(f"{type(error).__name__}: {error}") from None
    pristine = guard.snapshot(inputs)
    outputs = inputs[OUTPUTS] = GuardedOutputs()  # run() takes its out= arrays from here
    tolerance = guard.call("tolerance()", implementation.tolerance, function.name, case) or function.tolerance(case)
    if not isinstance(tolerance, Tolerance):
        raise guard.AdapterError("tolerance()", TypeError(f"returned {type(tolerance).__name__}, not a Tolerance"))
    result.tolerance = tolerance.describe()
    start = time.perf_counter()
    try:
        actual = guard.call("run()", implementation.run, function.name, case, inputs)
    except guard.AdapterError as error:
        result.seconds = time.perf_counter() - start
        if isinstance(error.error, Unsupported) or type(error.error).__name__ == "FunctionNotAvailableError":
            raise _Skip(str(error.error)) from None
        raise
    result.seconds = time.perf_counter() - start
    result.info = str(inputs.get("_info") or "")
    changed = guard.modified(pristine, inputs)
    # After the call, from the pristine inputs plus what run() recorded beside them (e.g. whether the library
    # honours a flag) for the reference to follow.
    try:
        expected = function.expected(case, {**inputs, **pristine})
    except Exception as error:  # the suite's own reference failed: its error, not the implementation's
        raise ReferenceFailure(f"{type(error).__name__}: {error}") from None
    actual_parts = guard.call("converting run()'s result", _arrays, actual)
    expected_parts = expected if isinstance(expected, tuple) else (expected,)
    details = [f"modified its input{'s' * (len(changed) > 1)} {', '.join(changed)} (inputs are read-only)"] \
        if changed else []
    details += outputs.violations()
    if len(actual_parts) != len(expected_parts):
        details.append(f"{len(actual_parts)} outputs, expected {len(expected_parts)}")
    for index, (a, e) in enumerate(zip(actual_parts, expected_parts)):
        comparison = guard.call("converting run()'s result", compare, a, np.asarray(e), tolerance)
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


def _arrays(actual: Any) -> tuple[np.ndarray, ...]:
    """run()'s outputs as NumPy arrays of numbers (TypeError for anything else)."""
    parts = actual if isinstance(actual, tuple) else (actual,)
    arrays = tuple(np.asarray(part) for part in parts)
    for index, (part, array) in enumerate(zip(parts, arrays)):
        if array.dtype.kind in "OSUMm" or array.dtype.names is not None:
            label = f"output {index} " if len(parts) > 1 else ""
            raise TypeError(f"returned {label}{type(part).__name__}, not an array of numbers")
    return arrays


def new_result(implementation: Any, function: Function, case: Case, status: str, detail: str = "") -> CaseResult:
    """The result of `case` of `function` on `implementation`, before any measure."""
    variant = getattr(function, "variant", None)
    return CaseResult(implementation.name, function.name, case.descriptor, case.group, case.dtype, case.layout, status,
                      detail, family=getattr(function, "family", ""), variant=variant(case) if variant else "")


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
        routed = _routed(implementation, known, case)
        if result.status in ("fail", "error"):
            result.status, result.detail = "known", f"known deviation {behaviour}; observed: {result.detail}"
        elif result.status == "pass" and routed and len(routed) == len(known):
            result.detail = f"the wrapper routed around {', '.join(routed)} (simdbind/_routes.py)"
        elif result.status == "pass":
            result.status, result.detail = "xpass", f"catalogued deviation did not show: {behaviour}"
    if result.status != "pass":
        result.repro = repro_command(implementation, case, seed)
    return result


def _routed(implementation: Any, known: Sequence[_deviations.Deviation], case: Case) -> list[str]:
    """The ids of the matched entries whose route simdbind's wrappers take on the implementation's library: such a
    case passing is the route at work, not the entry's behaviour gone. A case that calls the C function directly
    (``direct``) takes no route."""
    library = getattr(implementation, "library", None)
    if library is None or case.params.get("direct"):
        return []
    from simdbind._routes import ROUTES

    routes = {route.entry: route for route in ROUTES}
    return [entry.id for entry in known if entry.id in routes and routes[entry.id].taken(library)]


@dataclass
class Run:
    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    #: The user pressed Ctrl-C: `results` holds the cases that completed before (in plan order).
    interrupted: bool = False

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.ok]

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)


T = TypeVar("T")


def sharded(items: Sequence[T], shard: Shard | None) -> list[T]:
    """Shard K/N of `items`: every N-th from the K-th (None: all). The N shards partition `items`."""
    return list(items) if shard is None else list(items[shard.number - 1::shard.total])


def plan(implementations: Sequence[Any], function_names: Iterable[str] | None = None, profile: str = "ci",
         pattern: str | Sequence[str] | None = None, descriptor: str | None = None, shard: Shard | None = None
         ) -> list[tuple[int, Function, Case]]:
    """(implementation index, function, case) in run order: function, case, then implementation. With `shard`
    K/N, the K-th of N parts: every N-th case from the K-th, with all its implementations (the N parts partition
    the plan, each with a balanced share of every function)."""
    cases = [(fn, case) for fn in functions(function_names) for case in select_cases(fn, profile, pattern, descriptor)]
    return [(index, fn, case) for fn, case in sharded(cases, shard)
            for index in range(len(implementations))]


def run(implementations: Sequence[Any], function_names: Iterable[str] | None = None, profile: str = "ci",
        seed: int = DEFAULT_SEED, pattern: str | Sequence[str] | None = None,
        progress: Progress | None = None, workers: int = 1,
        descriptor: str | None = None, catalogue: _deviations.Catalogue | None = None,
        modules: Sequence[str] = (), shard: Shard | None = None) -> Run:
    """Run the selected cases. `workers` > 1 runs them in that many processes (spawned, so that torch and
    ONNX Runtime thread pools are never forked); the results, in the same order, are identical. `modules`: extra
    modules that register functions (outside the families, ``simdbind.conformance.families``), imported by each worker. `shard`:
    only that part of the plan (:func:`plan`).

    The user's Ctrl-C does not raise: the workers are stopped at once and the run returns what completed, with
    ``interrupted`` set. WorkerError when the worker processes cannot be started."""
    start = time.perf_counter()
    implementations = [as_subject(impl) for impl in implementations]
    catalogue = catalogue if catalogue is not None else _deviations.default()
    steps = plan(implementations, function_names, profile, pattern, descriptor, shard)
    outcome = Run()
    with guard.watching_interrupts():
        if workers > 1 and len(steps) > 1:
            outcome.results, outcome.interrupted = _run_parallel(implementations, steps, seed, catalogue, progress,
                                                                 workers, tuple(modules))
        else:
            try:
                for done, (index, fn, case) in enumerate(steps, 1):
                    outcome.results.append(run_case(implementations[index], fn, case, seed, catalogue))
                    if progress:
                        progress(done, len(steps), outcome.results[-1])
                    if guard.interrupt_requested():  # an implementation caught the user's KeyboardInterrupt
                        raise KeyboardInterrupt
            except KeyboardInterrupt:
                outcome.interrupted = True
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
class WorkerError(SimdBindError, OSError):
    """The worker processes cannot be started (e.g. the process is out of file descriptors)."""


_worker: dict[str, Any] = {}
#: How long a chunk of cases should take in a worker: short enough that progress and Ctrl-C are prompt, long enough
#: that handing chunks to workers costs nothing measurable.
CHUNK_SECONDS = 0.1
MAX_CHUNK = 256

_Item = tuple[int, int, str, str]  # position in the plan, implementation index, function name, descriptor


def _worker_init(specs: list[tuple[str, ...]], seed: int, raw_catalogue: list[dict[str, Any]],
                 modules: tuple[str, ...] = ()) -> None:
    import importlib
    import signal

    from simdbind.conformance.implementations import from_spec

    # The parent stops the workers on the user's Ctrl-C (which a terminal sends to all of them): here, any
    # KeyboardInterrupt comes from an implementation's code.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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


def _worker_chunk(chunk: list[_Item], budget: float) -> tuple[list[tuple[int, CaseResult]], list[_Item], float]:
    """The results of the chunk's first cases, run until `budget` seconds have passed (at least one), the cases
    left, and the seconds the results took."""
    start = time.perf_counter()
    results: list[tuple[int, CaseResult]] = []
    for position, impl_index, function_name, descriptor in chunk:
        if results and time.perf_counter() - start >= budget:
            break
        function = REGISTRY[function_name]
        case = _worker_case(function, descriptor)
        results.append((position, run_case(_worker["implementations"][impl_index], function, case, _worker["seed"],
                                           _worker["catalogue"])))
    return results, chunk[len(results):], time.perf_counter() - start


class _Chunks:
    """Consecutive slices of the plan for the workers, each sized from the time recent cases took to last about
    CHUNK_SECONDS: the first cases go one at a time (results come as soon as a worker is up), later ones in chunks
    that keep every worker busy to the end. A worker stops a chunk at CHUNK_SECONDS whatever its size (cases can
    cost 1,000 times more than the ones before) and the cases it left come back here, to go first."""

    def __init__(self, items: list[_Item], workers: int) -> None:
        self.items, self.workers, self.next = items, workers, 0
        self.returned: list[list[_Item]] = []
        self.per_case: float | None = None

    def __bool__(self) -> bool:
        return bool(self.returned) or self.next < len(self.items)

    def take(self) -> list[_Item]:
        if self.returned:
            return self.returned.pop()
        remaining = len(self.items) - self.next
        if self.per_case is None:
            size = 1
        else:
            size = int(CHUNK_SECONDS / max(self.per_case, 1e-7))
            size = min(size, MAX_CHUNK, -(-remaining // (2 * self.workers)))  # the tail shared between workers
        chunk = self.items[self.next:self.next + max(1, size)]
        self.next += len(chunk)
        return chunk

    def give_back(self, chunk: list[_Item]) -> None:
        if chunk:
            self.returned.append(chunk)

    def observe(self, cases: int, seconds: float) -> None:
        latest = seconds / max(cases, 1)
        self.per_case = latest if self.per_case is None else (self.per_case + latest) / 2


def _start(workers: int, init: tuple[Any, ...]) -> Any:
    """A pool of `workers` spawned processes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init, initargs=init)


def _worker_ready() -> None:
    """Nothing: a task that only a worker that started can finish."""


def _check_started(pool: Any, workers: int) -> None:
    """WorkerError when `pool`'s workers die while they start (an implementation or module that does not import
    there): not a crash of every case."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        pool.submit(_worker_ready).result()
    except BrokenProcessPool:
        raise WorkerError(f"-n {workers}: the worker processes died while starting (their error is above)") from None


def _stop(pool: Any, terminate: bool) -> None:
    """Shut `pool` down; with `terminate`, at once: queued chunks cancelled and the worker processes killed (a
    second Ctrl-C meanwhile is ignored, so that no worker outlives the run)."""
    import signal

    if not terminate:
        pool.shutdown(wait=True)
        return
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        # The pool's processes and thread, taken before shutdown() lets go of them.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join()
        if manager is not None:
            manager.join(2.0)  # it closes the pool's queues once its processes are gone
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)


def _start_failure(error: OSError, workers: int) -> WorkerError | None:
    """The one-line error when `error` says the system refused the resources of a worker (None otherwise)."""
    import errno
    import resource

    if error.errno in (errno.EMFILE, errno.ENFILE):
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        limit = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
        return WorkerError(f"-n {workers}: cannot start the worker processes: out of file descriptors (the limit "
                           f"is {limit}: raise it with `ulimit -n`, or run with -n 1)")
    if error.errno in (errno.EAGAIN, errno.ENOMEM):
        return WorkerError(f"-n {workers}: cannot start the worker processes: {error.strerror} (run with fewer "
                           f"workers)")
    return None


def _run_parallel(implementations: Sequence[Any], steps: list[tuple[int, Function, Case]], seed: int,
                  catalogue: _deviations.Catalogue, progress: Progress | None, workers: int,
                  modules: tuple[str, ...] = ()) -> tuple[list[CaseResult], bool]:
    """The results in plan order, and whether the user interrupted the run (then only those that completed)."""
    from concurrent.futures import FIRST_COMPLETED, Future, wait
    from concurrent.futures.process import BrokenProcessPool

    items = [(position, index, fn.name, case.descriptor) for position, (index, fn, case) in enumerate(steps)]
    init = ([impl.spec for impl in implementations], seed, catalogue.raw(), modules)
    results: list[CaseResult | None] = [None] * len(items)
    done = 0

    def collect(chunk_results: list[tuple[int, CaseResult]]) -> None:
        nonlocal done
        for position, result in chunk_results:
            results[position] = result
            done += 1
            if progress:
                progress(done, len(items), result)

    chunks = _Chunks(items, workers)
    unfinished: list[list[_Item]] = []  # chunks whose worker died: their cases are run again one at a time
    pool: Any = None
    interrupted = False
    try:
        in_flight: dict[Future[Any], list[_Item]] = {}
        broken = False  # a worker died: the pool takes no more chunks
        while True:
            if pool is None:
                pool = _start(workers, init)
                _check_started(pool, workers)
            while not broken and len(in_flight) < 2 * workers and chunks:
                chunk = chunks.take()
                try:
                    in_flight[pool.submit(_worker_chunk, chunk, CHUNK_SECONDS)] = chunk
                except BrokenProcessPool:
                    chunks.give_back(chunk)  # not started: it goes to the next pool
                    broken = True
            if not in_flight:
                if not broken:
                    break
                _stop(pool, terminate=True)  # a fresh pool takes the rest
                pool, broken = None, False
                continue
            finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in finished:
                chunk = in_flight.pop(future)
                try:
                    chunk_results, rest, seconds = future.result()
                except BrokenProcessPool:
                    unfinished.append(chunk)
                    broken = True
                    continue
                chunks.observe(len(chunk_results), seconds)
                chunks.give_back(rest)
                collect(chunk_results)
        _stop(pool, terminate=False)
        pool = None
        # A worker died (a crash in C is a finding): rerun the cases it may have held one at a time, each crash
        # recorded as an error of its case, in a fresh single worker.
        for item in (item for chunk in unfinished for item in chunk if results[item[0]] is None):
            if pool is None:
                pool = _start(1, init)
                _check_started(pool, 1)
            try:
                collect(pool.submit(_worker_chunk, [item], CHUNK_SECONDS).result()[0])
            except BrokenProcessPool:
                _stop(pool, terminate=True)
                pool = None
                collect([(item[0], _crashed(implementations[item[1]], item[2], item[3], seed, catalogue))])
    except KeyboardInterrupt:
        interrupted = True
    except WorkerError:
        raise
    except OSError as error:
        failure = _start_failure(error, workers)
        if failure is None:
            raise
        raise failure from None
    finally:
        if pool is not None:
            _stop(pool, terminate=True)
    return [r for r in results if r is not None], interrupted


def _crashed(implementation: Any, function_name: str, descriptor: str, seed: int,
             catalogue: _deviations.Catalogue) -> CaseResult:
    """The result of a case whose process died."""
    function = REGISTRY[function_name]
    case = find_case(function, descriptor)
    assert case is not None, descriptor
    crashed = new_result(implementation, function, case, "error",
                         "the process running this case died (a crash in the implementation)")
    return _classify(crashed, implementation, case, seed, catalogue)
