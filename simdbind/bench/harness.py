"""The benchmark harness behind ``simdbind bench``.

For each case (found in the family modules of :mod:`simdbind.bench`) and each thread count, it measures every
implementation: the bundled library at each ISA, each external library, the case's library-bound variants (e.g.
the raw cffi call) and its peers (NumPy, PyTorch, ONNX Runtime). Per implementation: a calibrated number of calls
per sample (so that a sample lasts at least ``min_time``), one warm-up sample, then ``repeats`` samples taken
round-robin across implementations with a rotating start, so that drift (clock boost, other load) spreads over
all of them. Reported: median, min and max time per call, throughput (``work / median / 1e9`` in the case's unit)
and, for every simdbind implementation, the speedup against each peer of the same run (peer median / median).

Benchmarks are measurements, never assertions: nothing here fails because something is slow.
"""

from __future__ import annotations

import gc
import importlib
import math
import os
import pkgutil
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

from simdbind.conformance.implementations import LibraryImplementation as Target
from simdbind.conformance.implementations import implementations

UNITS = ("Gelem/s", "GFLOP/s", "GB/s")
#: Clocks: "wall" (time.perf_counter, the default) or "thread" (CPU time of the calling thread: ignores the time
#: the process waits for a core on a shared machine, but also misses work done by other threads, so it is only
#: right for single-threaded calls).
TIMERS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "thread": time.thread_time}
#: Sample orders of :func:`run`.
ORDERS = ("auto", "interleaved", "blocked")
#: Seconds of pause before each implementation's samples in blocked order: longer than thread pools spin after
#: their last work (OpenMP's default block time is 0.2 s), so that none is still taking a core.
SETTLE = 0.3
#: The usual peers (families may add others, e.g. "memcpy"); `--peers` selects among the ones cases list.
PEERS = ("numpy", "torch", "onnxruntime")
#: Modules of this package that are not family modules.
_NOT_FAMILIES = {"harness"}
_current_threads = 1


def current_threads() -> int:
    """The thread count being measured (for peers that fix it when built, e.g. an ONNX Runtime session)."""
    return _current_threads


# -- cases -----------------------------------------------------------------------------------------------------
@dataclass
class Case:
    """One benchmark case, normalized from a family module's dict (see :mod:`simdbind.bench`)."""

    name: str
    family: str
    unit: str
    work: float
    simdbind: Callable[[Any], Callable[[], Any]] | None
    peers: dict[str, Callable[[], Any]] = field(default_factory=dict)
    variants: dict[str, Callable[[Any], Callable[[], Any]]] = field(default_factory=dict)
    budget: dict[str, Any] | None = None
    versus: list[str] = field(default_factory=list)  # variant labels to report a speedup against, like peers
    note: str = ""
    module: str = ""

    @classmethod
    def from_dict(cls, data: dict[str, Any], module: str = "") -> "Case":
        where = f"{module or 'case'} {data.get('name', '?')!r}"
        for key in ("name", "family", "unit", "work"):
            if key not in data:
                raise ValueError(f"{where}: missing {key!r}")
        if data["unit"] not in UNITS:
            raise ValueError(f"{where}: unit must be one of {', '.join(UNITS)}, got {data['unit']!r}")
        work = data["work"]
        if isinstance(work, bool) or not isinstance(work, (int, float)) or not work > 0:
            raise ValueError(f"{where}: work must be a positive number, got {work!r}")
        if data.get("simdbind") is None and not data.get("peers"):
            raise ValueError(f"{where}: needs a 'simdbind' entry or peers")
        budget = data.get("budget")
        if budget is not None and budget.get("baseline") not in (data.get("variants") or {}):
            raise ValueError(f"{where}: budget baseline {budget.get('baseline')!r} is not one of its variants")
        versus = list(data.get("versus") or [])
        for label in versus:
            if label not in (data.get("variants") or {}):
                raise ValueError(f"{where}: versus {label!r} is not one of its variants")
        return cls(name=str(data["name"]), family=str(data["family"]), unit=data["unit"], work=float(work),
                   simdbind=data.get("simdbind"), peers=dict(data.get("peers") or {}),
                   variants=dict(data.get("variants") or {}), budget=budget, versus=versus,
                   note=str(data.get("note", "")), module=module)

    def matches(self, patterns: Sequence[str] | None) -> bool:
        """True without patterns, else when a pattern is a substring of the name, family or module (any case)."""
        if not patterns:
            return True
        text = f"{self.name}\n{self.family}\n{self.module}".lower()
        return any(p.lower() in text for p in patterns)


def family_modules(package: str = "simdbind.bench") -> list[str]:
    """Names of the family modules of `package` (every module but this harness and private ones), sorted."""
    pkg = importlib.import_module(package)
    return sorted(f"{package}.{info.name}" for info in pkgutil.iter_modules(pkg.__path__)
                  if not info.name.startswith("_") and info.name not in _NOT_FAMILIES)


def discover(patterns: Sequence[str] | None = None, quick: bool = False, package: str = "simdbind.bench",
             modules: Iterable[str] | None = None) -> tuple[list[Case], dict[str, str]]:
    """Cases of every family module (or of `modules`) that match `patterns`, plus {module: error} for the modules
    that failed to import or to list their cases (one broken family does not stop the others)."""
    cases: list[Case] = []
    errors: dict[str, str] = {}
    names: set[str] = set()
    for module_name in (family_modules(package) if modules is None else modules):
        try:
            module = importlib.import_module(module_name)
            listed = module.cases(quick=quick)
            found = [Case.from_dict(d, module_name.rsplit(".", 1)[-1]) for d in listed]
        except Exception as error:  # noqa: BLE001 - reported, the other families still run
            errors[module_name] = f"{type(error).__name__}: {error}"
            continue
        for case in found:
            if case.name in names:
                errors[module_name] = f"duplicate case name {case.name!r} (skipped)"
                continue
            names.add(case.name)
            if case.matches(patterns):
                cases.append(case)
    return cases, errors


# -- implementations -------------------------------------------------------------------------------------------
def targets(libraries: Sequence[str] | None = None, isa: str = "all", mode: str | None = None) -> list[Target]:
    """Libraries to measure the cases' ``simdbind`` entries on, each at one ISA: the conformance suite's own
    expansion of `libraries` ("bundled" or paths; default: bundled plus $SIMD_LIBRARY) x `isa` ("all", a name or a
    comma-separated list; external libraries run at their own best ISA)."""
    return implementations(list(libraries or []), isa, mode)


def _activate(target: Target) -> None:
    """Switch the library to this target's ISA for the samples that follow (bundled libraries; external ones choose
    their own)."""
    if target.library.kind == "bundled" and target.library.isa != target.isa:
        target.library.set_isa(target.isa)


# -- measurements ----------------------------------------------------------------------------------------------
@dataclass
class Measurement:
    """One implementation on one case at one thread count. Times are seconds per call."""

    case: str
    family: str
    unit: str
    work: float
    implementation: str  # "bundled-avx2", "bundled-avx2 raw cffi", "numpy"
    kind: str  # "simdbind" (the Pythonic call), "variant" (a case's library-bound variant) or "peer"
    threads: int
    library: str = ""  # target name for simdbind/variant, "" for peers
    isa: str = ""
    number: int = 0  # calls per sample
    samples: list[float] = field(default_factory=list)
    median: float | None = None
    min: float | None = None
    max: float | None = None
    throughput: float | None = None  # in `unit`
    speedup: dict[str, float] = field(default_factory=dict)  # peer -> peer median / this median
    budget: dict[str, Any] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.median is not None

    def finish(self) -> None:
        """Statistics from `samples`."""
        if self.samples:
            self.median = statistics.median(self.samples)
            self.min = min(self.samples)
            self.max = max(self.samples)
            self.throughput = self.work / self.median / 1e9 if self.median > 0 else math.inf


@dataclass
class _Entry:
    measurement: Measurement
    call: Callable[[], Any] | None = None
    setup: Callable[[], None] | None = None


def _callable_from(entry: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """A zero-arg callable from a case entry: the entry's result when it is callable (a factory), otherwise the
    entry itself, bound to `args` (it did one call; that call served as a first warm-up)."""
    result = entry(*args)
    if callable(result):
        return result
    return (lambda: entry(*args)) if args else entry


def calibrate(call: Callable[[], Any], min_time: float, timer: Callable[[], float] = time.perf_counter,
              max_number: int = 1 << 24) -> int:
    """Calls per sample so that a sample lasts at least `min_time`: doubling batches until one lasts a tenth of
    it, then extrapolated (like ``timeit``'s autorange)."""
    number = 1
    while True:
        start = timer()
        for _ in range(number):
            call()
        elapsed = timer() - start
        if elapsed >= min_time / 10 or number >= max_number:
            break
        number *= 2
    per_call = elapsed / number
    if per_call <= 0:
        return max_number
    return max(1, min(max_number, math.ceil(min_time / per_call)))


class EntryError(Exception):
    """An entry raised while being measured (its name and the error)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name, self.message = name, message


def measure(entries: Sequence[tuple[str, Callable[[], Any], Callable[[], None] | None]], repeats: int,
            min_time: float, timer: Callable[[], float] = time.perf_counter,
            interleave: bool = True, settle: float = 0.0) -> dict[str, tuple[int, list[float]]]:
    """{name: (calls per sample, per-call times)} of every entry (name, call, setup run before each sample):
    calibration, one warm-up sample, then `repeats` rounds; round r runs the entries in their order rotated by r
    (interleaved, so that drift spreads over all of them). With ``interleave=False`` (blocked), each entry's
    samples are taken one after the other instead, after a pause of `settle` seconds and a second warm-up sample
    right before them, so that what the previous entry left running (thread pools still spinning) has stopped or
    falls on untimed calls. An entry that raises stops the measurement with :class:`EntryError`."""
    numbers: dict[str, int] = {}
    samples: dict[str, list[float]] = {name: [] for name, _, _ in entries}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name, call, setup in entries:
            try:
                if setup:
                    setup()
                numbers[name] = calibrate(call, min_time, timer)
                _sample(call, numbers[name], timer)  # warm-up at the measured size
            except Exception as error:  # noqa: BLE001
                raise EntryError(name, f"{type(error).__name__}: {error}") from error
        count = len(entries)
        if interleave:
            order = [(entries[(k + r) % count], True) for r in range(repeats) for k in range(count)]
        else:  # (entry, timed): one untimed sample, then its `repeats` timed ones
            order = [(entry, i > 0) for entry in entries for i in range(repeats + 1)]
        for (name, call, setup), timed in order:
            if not interleave and not timed and settle > 0:
                time.sleep(settle)
            try:
                if setup:
                    setup()
                per_call = _sample(call, numbers[name], timer)
            except Exception as error:  # noqa: BLE001
                raise EntryError(name, f"{type(error).__name__}: {error}") from error
            if timed:
                samples[name].append(per_call)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: (numbers[name], samples[name]) for name, _, _ in entries}


def _sample(call: Callable[[], Any], number: int, timer: Callable[[], float]) -> float:
    start = timer()
    for _ in range(number):
        call()
    return (timer() - start) / number


def speedups(measurements: Sequence[Measurement], versus: Sequence[str] = ()) -> None:
    """Fill `speedup` of every simdbind/variant measurement against each peer of the same case and threads, of
    each bundled-library measurement against each external library's, and of every simdbind measurement against
    its own target's variants named in `versus`."""
    peers = {(m.case, m.threads, m.implementation): m for m in measurements if m.kind == "peer" and m.ok}
    index = {(m.case, m.threads, m.implementation): m for m in measurements if m.ok}
    for m in measurements:
        if m.kind == "peer" or not m.ok:
            continue
        for (case, threads, peer), p in peers.items():
            if case == m.case and threads == m.threads:
                m.speedup[peer] = p.median / m.median
        if m.kind == "simdbind" and m.implementation.startswith("bundled"):
            for e in measurements:  # external libraries (upstream builds) are compared like peers
                if (e.kind == "simdbind" and e.ok and e.implementation.startswith("external")
                        and e.case == m.case and e.threads == m.threads):
                    m.speedup[e.implementation] = e.median / m.median
        if m.kind == "simdbind":
            for label in versus:
                base = index.get((m.case, m.threads, f"{m.implementation} {label}"))
                if base is not None:
                    m.speedup[label] = base.median / m.median


def budgets(cases: Sequence[Case], measurements: Sequence[Measurement]) -> None:
    """For cases with a budget: is the simdbind call within factor x baseline variant + plus_us (same library,
    ISA and threads)? Recorded on the simdbind measurement; a number, never an assertion."""
    by_name = {c.name: c for c in cases}
    index = {(m.case, m.threads, m.implementation): m for m in measurements}
    for m in measurements:
        case = by_name.get(m.case)
        if case is None or case.budget is None or m.kind != "simdbind" or not m.ok:
            continue
        base = index.get((m.case, m.threads, f"{m.implementation} {case.budget['baseline']}"))
        if base is None or not base.ok:
            continue
        factor, plus = float(case.budget.get("factor", 1.5)), float(case.budget.get("plus_us", 1.0)) * 1e-6
        limit = factor * base.median + plus
        m.budget = {"baseline": base.implementation, "baseline_us": base.median * 1e6, "factor": factor,
                    "plus_us": plus * 1e6, "limit_us": limit * 1e6, "median_us": m.median * 1e6,
                    "ratio": m.median / base.median, "met": m.median <= limit,
                    # the same on the fastest samples: less sensitive to other load on a shared machine
                    "min_us": m.min * 1e6, "baseline_min_us": base.min * 1e6,
                    "met_by_min": m.min <= factor * base.min + plus}


# -- the run ---------------------------------------------------------------------------------------------------
@dataclass
class Report:
    meta: dict[str, Any]
    measurements: list[Measurement]
    errors: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"meta": self.meta, "errors": self.errors,
                "measurements": [asdict(m) for m in self.measurements]}


class _BlasThreads:
    """The thread count of the OpenBLAS builds loaded in this process (NumPy's, PyTorch's), set through their own
    ``openblas_set_num_threads``, so that a peer row at "1 thread" runs NumPy's matmul on one thread too (without
    this, OpenBLAS uses every core at every row). Linux only (it finds the libraries in /proc/self/maps); elsewhere,
    or when none is loaded, :attr:`found` is empty and nothing is changed."""

    _SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
                "openblas_set_num_threads")

    def __init__(self) -> None:
        import ctypes

        self.found: list[tuple[str, Any, Any]] = []  # (path, setter, getter or None)
        paths: list[str] = []
        try:
            with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
                for line in maps:
                    parts = line.split(maxsplit=5)
                    path = parts[5].strip() if len(parts) == 6 else ""
                    if "openblas" in os.path.basename(path).lower() and path not in paths:
                        paths.append(path)
        except OSError:
            return
        for path in paths:
            try:
                dll = ctypes.CDLL(path)  # already loaded: the same handle
            except OSError:
                continue
            for name in self._SETTERS:
                setter = getattr(dll, name, None)
                if setter is not None:
                    getter = getattr(dll, name.replace("set_num_threads", "get_num_threads"), None)
                    if getter is not None:
                        getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    self.found.append((path, setter, getter))
                    break

    def get(self) -> list[int | None]:
        return [getter() if getter is not None else None for _, _, getter in self.found]

    def set(self, counts: int | Sequence[int | None]) -> None:
        values = [counts] * len(self.found) if isinstance(counts, int) else list(counts)
        for (_, setter, _), count in zip(self.found, values):
            if count is not None and count >= 1:
                setter(count)


def _set_threads(libraries: Iterable[Any], count: int, blas: _BlasThreads | None = None) -> None:
    global _current_threads
    _current_threads = count
    for library in libraries:
        library.set_threads(count)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(count)
    if blas is not None:
        blas.set(count)


def run(cases: Sequence[Case], target_list: Sequence[Target], peers: Sequence[str] = ("all",),
        threads: Sequence[int] = (1,), repeats: int = 11, min_time: float = 0.02,
        timer: Callable[[], float] = time.perf_counter,
        progress: Callable[[Measurement], None] | None = None, order: str = "auto") -> list[Measurement]:
    """Measure `cases` on every target, variant and selected peer, at each thread count. See the module doc.

    `order`: "interleaved" (round-robin samples, see :func:`measure`), "blocked" (each implementation's samples in
    a row) or "auto": interleaved at one thread, blocked at more. Thread pools keep spinning for a while after
    their work (OpenBLAS ~0.1 s, OpenMP runtimes up to 0.2 s), so interleaved at two threads the previous
    implementation's spinning threads take the cores from the one being timed: inner_product M256 measured 1.83x
    its one-thread speed alone and 1.10x interleaved with NumPy's matmul. Blocked, each implementation's samples
    start after a pause of SETTLE seconds, longer than those spins: without it, an OpenMP pool left spinning by
    PyTorch's block made the next block's 2-thread calls up to twice as slow (0.57x "scaling" for a case that
    scales 1.9x alone)."""
    if order not in ORDERS:
        raise ValueError(f"order: must be one of {', '.join(ORDERS)}, got {order!r}")
    global _current_threads
    libraries = list({id(t.library): t.library for t in target_list}.values())
    saved_isa = {id(lib): lib.isa for lib in libraries if lib.kind == "bundled"}
    saved_threads = {id(lib): lib.threads for lib in libraries}
    torch = sys.modules.get("torch")
    saved_torch = torch.get_num_threads() if torch is not None else None
    blas = _BlasThreads()
    saved_blas = blas.get()
    results: list[Measurement] = []
    try:
        for count in threads:
            _set_threads(libraries, count, blas)
            for case in cases:
                interleave = order == "interleaved" or (order == "auto" and count == 1)
                case_results = _run_case(case, target_list, peers, count, repeats, min_time, timer, interleave)
                speedups(case_results, case.versus)
                budgets([case], case_results)
                results.extend(case_results)
                if progress:
                    for m in case_results:
                        progress(m)
    finally:
        for lib in libraries:
            if id(lib) in saved_isa:
                lib.set_isa(saved_isa[id(lib)])
            lib.set_threads(saved_threads[id(lib)])
        if torch is not None and saved_torch is not None:
            torch.set_num_threads(saved_torch)
        blas.set(saved_blas)
        _current_threads = 1
    return results


def _run_case(case: Case, target_list: Sequence[Target], peers: Sequence[str], threads: int, repeats: int,
              min_time: float, timer: Callable[[], float], interleave: bool = True) -> list[Measurement]:
    from simdbind.errors import FunctionNotAvailableError

    def new(implementation: str, kind: str, target: Target | None = None) -> Measurement:
        return Measurement(case.name, case.family, case.unit, case.work, implementation, kind, threads,
                           library=target.name if target else "", isa=target.isa if target else "")

    entries: list[_Entry] = []
    for target in target_list:
        bound = ([(target.name, "simdbind", case.simdbind)] if case.simdbind is not None else []) + [
            (f"{target.name} {label}", "variant", factory) for label, factory in case.variants.items()]
        for name, kind, factory in bound:
            entry = _Entry(new(name, kind, target), setup=lambda target=target: _activate(target))
            try:
                _activate(target)
                entry.call = _callable_from(factory, target.library)
            except FunctionNotAvailableError as error:
                entry.measurement.error = f"unavailable: {error}"
            except Exception as error:  # noqa: BLE001 - a broken case is reported, not fatal
                entry.measurement.error = f"{type(error).__name__}: {error}"
            entries.append(entry)
    for peer, factory in case.peers.items():
        if not _peer_selected(peer, peers):
            continue
        entry = _Entry(new(peer, "peer"))
        try:
            entry.call = _callable_from(factory)
        except Exception as error:  # noqa: BLE001
            entry.measurement.error = f"{type(error).__name__}: {error}"
        entries.append(entry)

    runnable = [e for e in entries if e.call is not None]
    while runnable:  # an entry failing while timed is reported; the others are measured again without it
        try:
            timed = measure([(e.measurement.implementation, e.call, e.setup) for e in runnable], repeats,
                            min_time, timer, interleave, 0.0 if interleave else SETTLE)
        except EntryError as failure:
            for e in runnable:
                if e.measurement.implementation == failure.name:
                    e.measurement.error = failure.message
            runnable = [e for e in runnable if e.measurement.error is None]
            continue
        for e in runnable:
            e.measurement.number, e.measurement.samples = timed[e.measurement.implementation]
            e.measurement.finish()
        break
    return [e.measurement for e in entries]


def peer_family(peer: str) -> str:
    """The name a peer is selected by: its first word ("numpy" of "numpy ufunc")."""
    return peer.split()[0] if peer.split() else peer


def _peer_selected(peer: str, selected: Sequence[str]) -> bool:
    """A peer key is selected by 'all', by itself, or by its first word; never by 'none'."""
    return "all" in selected or peer in selected or peer_family(peer) in selected


# -- environment -----------------------------------------------------------------------------------------------
def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(target_list: Sequence[Target] = ()) -> dict[str, Any]:
    """The machine and versions a run was measured on."""
    libraries = {}
    isas: list[str] = []
    for t in target_list:
        lib = t.library
        if lib.path not in libraries:
            libraries[lib.path] = {"kind": lib.kind, "mode": lib.mode, "version": lib.version,
                                   "generation": lib.generation}
            if lib.kind == "bundled":
                isas = list(lib.isas_supported)
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "isas": isas,
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": {name: v for name in ("simdbind", "numpy", "cffi", "torch", "onnxruntime", "matplotlib")
                     if (v := _version(name))},
        "libraries": libraries,
        # OpenBLAS builds whose thread count follows --threads (NumPy's matmul peers); none: they use every core
        "blas_threads": [os.path.basename(path) for path, _, _ in _BlasThreads().found],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


# -- output ----------------------------------------------------------------------------------------------------
def _us(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    us = seconds * 1e6
    return f"{us:.3g}" if us < 100 else f"{us:,.0f}"


def _rate(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def _best_isa_only(measurements: Sequence[Measurement]) -> list[Measurement]:
    """The measurements of each library at the best ISA measured (what it dispatches to by default)."""
    from simdbind.library import ISAS

    def rank(m: Measurement) -> int:
        return ISAS.index(m.isa) if m.isa in ISAS else -1

    def library_of(m: Measurement) -> str:
        suffix = f"-{m.isa}"
        return m.implementation[: -len(suffix)] if m.implementation.endswith(suffix) else m.implementation

    best: dict[str, int] = {}
    for m in measurements:
        best[library_of(m)] = max(best.get(library_of(m), -1), rank(m))
    return [m for m in measurements if rank(m) == best[library_of(m)]]


def family_summary(measurements: Sequence[Measurement], best_isa_only: bool = True) -> list[str]:
    """One line per family and thread count: each simdbind implementation's geometric-mean speedup against each
    peer over the family's cases (and the range); by default only each library's best ISA."""
    lines = []
    groups: dict[tuple[str, int], list[Measurement]] = {}
    mine = [m for m in measurements if m.kind == "simdbind" and m.ok and m.speedup]
    for m in (_best_isa_only(mine) if best_isa_only else mine):
        groups.setdefault((m.family, m.threads), []).append(m)
    for (family, threads), ms in sorted(groups.items()):
        parts = []
        for impl in sorted({m.implementation for m in ms}):
            mine = [m for m in ms if m.implementation == impl]
            for peer in sorted({p for m in mine for p in m.speedup}):
                values = [m.speedup[peer] for m in mine if peer in m.speedup]
                geo = math.exp(sum(math.log(v) for v in values) / len(values))
                spread = f", {min(values):.2f}-{max(values):.2f}x" if len(values) > 1 else ""
                parts.append(f"{impl} {geo:.2f}x {peer} ({len(values)} case{'s' * (len(values) > 1)}{spread})")
        suffix = f", {threads} threads" if threads != 1 else ""
        lines.append(f"- **{family}**{suffix}: " + "; ".join(parts))
    return lines


def thread_scaling(measurements: Sequence[Measurement]) -> list[str]:
    """One line per family and thread count above the lowest: each implementation's geometric-mean speedup over
    its own time at the lowest thread count (ideal: the thread ratio)."""
    ms = [m for m in measurements if m.ok and m.kind != "variant"]
    counts = sorted({m.threads for m in ms})
    if len(counts) < 2:
        return []
    base = {(m.case, m.implementation): m for m in ms if m.threads == counts[0]}
    lines = []
    for family in sorted({m.family for m in ms}):
        for count in counts[1:]:
            parts = []
            for impl in dict.fromkeys(m.implementation for m in ms if m.family == family):
                ratios = [base[(m.case, impl)].median / m.median for m in ms
                          if m.family == family and m.threads == count and m.implementation == impl
                          and (m.case, impl) in base]
                if ratios:
                    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
                    parts.append(f"{impl} {geo:.2f}x")
            if parts:
                lines.append(f"- **{family}**, {count} vs {counts[0]} threads: " + "; ".join(parts))
    return lines


def thread_scaling_rows(measurements: Sequence[Measurement]
                        ) -> list[tuple[str, str, list[float | None], list[float | None]]]:
    """Per case and implementation measured at two or more thread counts: (case, implementation, median seconds
    per count, scaling per count = median at the fewest threads / median at this count; None where missing)."""
    ms = [m for m in measurements if m.ok]
    counts = sorted({m.threads for m in ms})
    if len(counts) < 2:
        return []
    index = {(m.case, m.implementation, m.threads): m.median for m in ms}
    rows = []
    for case, impl in dict.fromkeys((m.case, m.implementation) for m in ms):
        medians = [index.get((case, impl, n)) for n in counts]
        if sum(x is not None for x in medians) < 2 or medians[0] is None:
            continue
        rows.append((case, impl, medians, [medians[0] / x if x else None for x in medians]))
    return rows


def thread_scaling_table(measurements: Sequence[Measurement]) -> list[str]:
    """A Markdown table of :func:`thread_scaling_rows`: time per call at each thread count and the scaling (ideal:
    the thread ratio)."""
    rows = thread_scaling_rows(measurements)
    if not rows:
        return []
    counts = sorted({m.threads for m in measurements if m.ok})
    head = (["case", "implementation"] + [f"{n} thr µs" for n in counts]
            + [f"{n} vs {counts[0]} thr (ideal {n / counts[0]:g}x)" for n in counts[1:]])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, impl, medians, ratios in rows:
        lines.append("| " + " | ".join([case, impl] + [_us(x) for x in medians]
                                       + [f"{r:.2f}x" if r else "-" for r in ratios[1:]]) + " |")
    return lines


def summary_table(measurements: Sequence[Measurement]) -> list[str]:
    """A compact Markdown table: one row per case (and thread count), one throughput column per implementation
    (variants left out), the fastest of each row in bold; "n/a" where an implementation could not run."""
    ms = [m for m in measurements if m.kind != "variant"]
    impls = list(dict.fromkeys(m.implementation for m in ms))
    rows = list(dict.fromkeys((m.case, m.threads) for m in ms))
    multi_threads = len({t for _, t in rows}) > 1
    cell = {(m.case, m.threads, m.implementation): m for m in ms}
    head = ["case"] + (["threads"] if multi_threads else []) + ["unit"] + impls
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, threads in rows:
        found = [cell.get((case, threads, i)) for i in impls]
        unit = next((m.unit for m in found if m is not None), "")
        best = max((m.throughput for m in found if m is not None and m.ok), default=None)
        values = []
        for m in found:
            if m is None:
                values.append("")
            elif not m.ok:
                values.append("n/a")
            else:
                text = _rate(m.throughput)
                values.append(f"**{text}**" if m.throughput == best and len(found) > 1 else text)
        lines.append("| " + " | ".join([case] + ([str(threads)] if multi_threads else []) + [unit] + values) + " |")
    return lines


def _order_text(order: str, measurements: Sequence[Measurement]) -> str:
    multi = any(m.threads > 1 for m in measurements)
    if order == "blocked":
        return "each implementation's samples in a row"
    if order == "auto" and multi:
        return ("implementations interleaved at 1 thread; at more threads each implementation's samples in a row "
                "(so that another library's spinning thread pool stays out of the timing)")
    return "implementations interleaved"


def to_markdown(report: Report) -> str:
    meta, ms = report.meta, report.measurements
    env = meta.get("environment", {})
    versions = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items())
    libs = "; ".join(f"{v['kind']} {v['version']} ({v['mode']})" for v in env.get("libraries", {}).values())
    lines = [
        "### Benchmarks",
        "",
        f"Measured {env.get('date', '?')} on {env.get('cpu', '?')} ({env.get('cores', '?')} logical cores; "
        f"ISAs {', '.join(env.get('isas', [])) or '?'}), {env.get('os', '')}, Python {env.get('python', '?')}; "
        f"{versions}. Libraries: {libs or '-'}.",
        "",
        f"Command: `{meta.get('command', 'simdbind bench')}`",
        "",
        f"Median of {meta.get('repeats', '?')} samples (each >= {meta.get('min_time', 0) * 1e3:g} ms of calls, "
        f"{'thread CPU time' if meta.get('timer') == 'thread' else 'wall clock'}) "
        f"after warm-up, {_order_text(meta.get('order', 'interleaved'), ms)}. `speedup vs X` = X's median time / "
        "this one's (> 1: faster than X).",
    ]
    if meta.get("provisional"):
        lines += ["", f"**Provisional:** {meta['provisional']}"]
    multi_threads = len({m.threads for m in ms}) > 1
    lines += ["", "Throughput (higher is better; **bold**: the fastest of the row):", ""] + summary_table(ms)
    peers = sorted({p for m in ms for p in m.speedup})
    head = ["case"] + (["threads"] if multi_threads else []) + ["implementation", "median µs", "min-max µs",
                                                                 "throughput"] + [f"vs {p}" for p in peers]
    lines += ["", "<details><summary>Every measurement (median, min-max, speedups)</summary>", "",
              "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in ms:
        if m.ok:
            row = [m.case] + ([str(m.threads)] if multi_threads else []) + [
                m.implementation, _us(m.median), f"{_us(m.min)}-{_us(m.max)}", f"{_rate(m.throughput)} {m.unit}"
            ] + [f"{m.speedup[p]:.2f}x" if p in m.speedup else "" for p in peers]
        else:
            row = [m.case] + ([str(m.threads)] if multi_threads else []) + [
                m.implementation, "-", "-", (m.error or "no samples").replace("|", "/")[:80]] + [""] * len(peers)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "</details>"]
    over = [m for m in ms if m.budget]
    if over:
        lines += ["", "Per-call overhead of the Pythonic layer (budget: factor x raw cffi call + constant):", ""]
        for m in over:
            b = m.budget
            verdict = "within budget" if b["met"] else "OVER budget"
            by_min = ""
            if "min_us" in b:
                by_min = (f" (fastest samples: {b['min_us']:.2f} µs vs {b['baseline_min_us']:.2f} µs: "
                          f"{'within' if b['met_by_min'] else 'over'})")
            lines.append(f"- {m.case}, {m.implementation}: {b['median_us']:.2f} µs vs {b['baseline_us']:.2f} µs "
                         f"raw ({b['ratio']:.1f}x); budget {b['factor']:g} x raw + {b['plus_us']:g} µs = "
                         f"{b['limit_us']:.2f} µs: {verdict}{by_min}")
    scaling = thread_scaling(ms)
    if scaling:
        lines += ["", "Thread scaling (time at the fewest threads / time at more; library threads set by "
                  "SimdSetThreadNumber, PyTorch's and the loaded OpenBLAS builds' (NumPy matmul) set alike):", ""]
        lines += thread_scaling_table(ms)
        lines += ["", "Geometric mean per family:", ""] + scaling
    summary = family_summary(ms)
    if summary:
        lines += ["", "Where the bundled library stands, at its best ISA here (geometric mean of the speedups over "
                  "each family's cases, and their range):", ""]
        lines += summary
    notes = [f"- {name}: {text}" for name, text in meta.get("notes", {}).items()]
    if notes:
        lines += ["", "Notes:", ""] + notes
    if report.errors:
        lines += ["", "Family modules that could not be loaded:", ""]
        lines += [f"- `{name}`: {text}" for name, text in sorted(report.errors.items())]
    return "\n".join(lines) + "\n"


def plot(report: Report, path: str) -> str:
    """Throughput per case and implementation, one bar group per case (log scale), and, for cases with an
    overhead budget, a second panel of time per call including the variants (the raw cffi call). Needs
    matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("--plot needs matplotlib (pip install matplotlib)") from None
    budgeted = {m.case for m in report.measurements if m.budget}
    thru = [m for m in report.measurements if m.ok and m.kind != "variant" and m.case not in budgeted]
    over = [m for m in report.measurements if m.ok and m.case in budgeted]
    panels = [(ms, kind) for ms, kind in ((thru, "throughput"), (over, "time")) if ms]
    if not panels:
        raise RuntimeError("--plot: no successful measurement to plot")
    sizes = [len({(m.case, m.threads) for m in ms}) * (1 + len({m.implementation for m in ms})) for ms, _ in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 1.5 + 0.2 * sum(sizes)),
                             gridspec_kw={"height_ratios": sizes}, squeeze=False)
    for ax, (ms, kind) in zip(axes[:, 0], panels):
        rows = list(dict.fromkeys((m.case, m.threads) for m in ms))
        impls = list(dict.fromkeys(m.implementation for m in ms))
        colors = (plt.rcParams["axes.prop_cycle"].by_key()["color"] if len(impls) <= 10
                  else [plt.get_cmap("tab20")(i % 20) for i in range(len(impls))])
        value = {(m.case, m.threads, m.implementation): (m.throughput if kind == "throughput" else m.median * 1e6)
                 for m in ms}
        units = {(m.case, m.threads): m.unit for m in ms}
        height = 0.8 / max(1, len(impls))
        for k, impl in enumerate(impls):
            ys, xs = [], []
            for i, row in enumerate(rows):
                v = value.get((*row, impl))
                if v:
                    ys.append(i + (k - (len(impls) - 1) / 2) * height)
                    xs.append(v)
            ax.barh(ys, xs, height=height, label=impl, color=colors[k % len(colors)])
        multi = len({t for _, t in rows}) > 1
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{c}{f' ({t} thr)' if multi else ''}"
                            + (f" [{units[(c, t)]}]" if kind == "throughput" else "") for c, t in rows], fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("throughput, higher is better (unit per case)" if kind == "throughput"
                      else "µs per call, lower is better")
        ax.legend(fontsize=7, loc="best")
        ax.grid(axis="x", which="both", alpha=0.3)
    env = report.meta.get("environment", {})
    axes[0, 0].set_title(f"simdbind bench: {env.get('cpu', '')}, {env.get('date', '')}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
