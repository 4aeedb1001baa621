"""The benchmark harness behind ``simdbind bench``.

For each case (a conformance case listed by a family module of :mod:`simdbind.bench`, or given by ``--case``) and
each thread count, it measures every implementation: the bundled library at each ISA and each external library
(:class:`~simdbind.conformance.implementations.LibraryImplementation`), what the family adds (the raw cffi call,
two Python threads), the peers (any implementation of the conformance API: the installed entry points or
``--impl`` selectors) and, for a memory-bound case, the memcpy bound (the same bytes copied, measured after the
others and apart from them: interleaved, the copy's traffic slowed whichever implementation followed it by 12-16%
on 4 M-float eltwise, and the rotation put the first listed library after it two rounds in three). Each one's inputs are
the case's, made once by its Function's ``inputs(case, rng)``, and so are the output arrays the libraries write
(one :class:`~simdbind.conformance.model.ReusedOutputs` per case and placement); what is timed is the
implementation's ``prepare`` call (:func:`simdbind.conformance.api.prepared`).

Placement: where the arrays lie moves the time of a call, and by different amounts in different libraries (a load or
store that straddles two cache lines costs two; a load whose address matches an older store's in its low 12 bits
waits for it). Left where the run's earlier allocations put them, they moved whole rows between runs: upstream's
abs, exp and log of 64 K floats took 7.8, 14.1 and 12.3 us in one run and 5.5, 10.0 and 8.5 in the next. So every
case is measured at each of PLACEMENTS, every input and output array of a call that many bytes past a page boundary
(the places within a cache line that NumPy's 16-byte alignment allows; a fresh large NumPy array lies 16 past),
sample round r at placement r mod len(PLACEMENTS), the same for every implementation in the round. The median then
covers them all, and a rerun measures the same placements.

Per implementation: a calibrated number of calls per sample (so that a sample lasts at least ``min_time``), one
warm-up sample, then ``repeats`` samples taken round-robin across implementations with a rotating start, so that
drift (clock boost, other load) spreads over all of them. Reported: median, min and max time per call, throughput
(``work / median / 1e9`` in the case's unit) and, for every library row, the speedup against each peer and bound of
the same run (their median / its median).

Benchmarks are measurements, never assertions: nothing here fails because something is slow.
"""

from __future__ import annotations

import functools
import gc
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from simdbind.bench.cases import Listed, family_module, row, work
from simdbind.conformance.api import Unsupported, prepared
from simdbind.conformance.implementations import LibraryImplementation, SelectionError, entry_point_names, resolve
from simdbind.conformance.model import OUTPUTS, REGISTRY, ReusedOutputs, page_placed_bytes
from simdbind.conformance.report import cpu_model
from simdbind.conformance.runner import DEFAULT_SEED
from simdbind.conformance.work import Work

#: Clocks: "wall" (time.perf_counter, the default) or "thread" (CPU time of the calling thread: ignores the time
#: the process waits for a core on a shared machine, but also misses work done by other threads, so it is only
#: right for single-threaded calls).
TIMERS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "thread": time.thread_time}
#: The clocks that see only the calling thread's work: :func:`check_timer` refuses them for multi-threaded calls.
CALLING_THREAD_ONLY = frozenset({time.thread_time})
#: Sample orders of :func:`run`.
ORDERS = ("auto", "interleaved", "blocked")
#: Seconds of pause before each implementation's samples in blocked order: longer than thread pools spin after
#: their last work (OpenMP's default block time is 0.2 s), so that none is still taking a core.
SETTLE = 0.3
#: The name of the memcpy bound's rows.
MEMCPY = "memcpy"
#: Bytes past a page boundary at which a case's arrays lie, one per sample round in turn (see the module's doc).
PLACEMENTS = (0, 16, 32, 48)


# -- what is measured -------------------------------------------------------------------------------------------
def installed_peers() -> list[Any]:
    """Every implementation registered under the suite's entry-point group whose packages import (the default
    peers); the others are left out silently."""
    found: list[Any] = []
    for name in entry_point_names():
        try:
            found.extend(resolve(name))
        except SelectionError:
            continue
    return found


def _library_of(implementation: Any) -> LibraryImplementation | None:
    """The library implementation an implementation runs on (itself, or the one a family's wrapper wraps)."""
    for candidate in (implementation, getattr(implementation, "base", None)):
        if isinstance(candidate, LibraryImplementation):
            return candidate
    return None


def _activate(library: LibraryImplementation) -> None:
    """Switch the library to this implementation's ISA for the samples that follow (bundled libraries; external
    ones choose their own)."""
    if library.library.kind == "bundled" and library.library.isa != library.isa:
        library.library.set_isa(library.isa)


def memcpy_bound(moved: int) -> Callable[[], Any]:
    """A copy of moved / 2 bytes from one buffer to another: `moved` bytes read and written, as the case's call.
    The source is written first: numpy.zeros' untouched pages all map the one zero page, which a copy reads from
    cache (24 MB in 530 us where written ones take 885-915)."""
    source = np.ones(max(1, moved // 2), np.uint8)
    return functools.partial(np.copyto, np.ones_like(source), source)


def threads_of_a_call(family: str, threads: int) -> int:
    """Threads that do the work of one call of a `family` case at `threads` library threads: the library's, times
    the Python threads the family's calls run on (its module's ``PYTHON_THREADS``, 1 where it has none)."""
    return threads * int(getattr(family_module(family), "PYTHON_THREADS", 1))


class TimerError(ValueError):
    """The timer cannot measure the calls asked for."""


def check_timer(listed: Sequence[Listed], threads: Sequence[int], timer: Callable[[], float]) -> None:
    """Refuse (TimerError) a clock that sees only the calling thread when a call of `listed` at one of the `threads`
    counts works on more than one thread: two threads' work would be timed as one's (the gil family's two Python
    threads "scaled" 16x on 2 CPUs that way)."""
    if timer not in CALLING_THREAD_ONLY:
        return
    for family in dict.fromkeys(item.family for item in listed):
        for count in threads:
            working = threads_of_a_call(family, count)
            if working > 1:
                raise TimerError(f"timer: the calling thread's CPU time cannot measure {family} calls at {count} "
                                 f"library thread{'s' * (count > 1)}: their work runs on {working} threads; use "
                                 "the wall clock")


# -- measurements ----------------------------------------------------------------------------------------------
@dataclass
class Measurement:
    """One implementation on one case at one thread count. Times are seconds per call."""

    case: str  # the case's descriptor
    family: str  # the bench family that listed it
    function: str
    unit: str
    work: float
    implementation: str  # "bundled-avx2", "bundled-avx2 raw cffi", "torch", "memcpy"
    kind: str  # "simdbind" (a library), "variant" (a family's row on a library), "peer" or "bound"
    threads: int
    library: str = ""  # the library implementation's name for simdbind/variant rows, "" for the others
    isa: str = ""
    number: int = 0  # calls per sample
    samples: list[float] = field(default_factory=list)
    median: float | None = None
    min: float | None = None
    max: float | None = None
    throughput: float | None = None  # in `unit`
    speedup: dict[str, float] = field(default_factory=dict)  # other row -> its median / this median
    band: dict[str, list[float]] = field(default_factory=dict)  # other row -> [low, high]: see speedup_band
    budget: dict[str, Any] | None = None
    error: str | None = None

    @property
    def row(self) -> str:
        """The case's name in tables and plots (see :func:`simdbind.bench.cases.row`)."""
        return row(self.family, self.function, self.case)

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
    calls: list[Callable[[], Any]] = field(default_factory=list)  # one per placement
    setup: Callable[[], None] | None = None


def placed(array: Any, offset: int) -> Any:
    """A copy of a C-contiguous `array` that starts `offset` bytes past a page boundary (of each one in a list or
    tuple); anything else as it is (a strided view keeps its layout, which is what its case is about)."""
    if isinstance(array, (list, tuple)):
        return type(array)(placed(item, offset) for item in array)
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        return array
    copy = page_placed_bytes(array.nbytes, offset).view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


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


Calls = Callable[[], Any] | Sequence[Callable[[], Any]]


def measure(entries: Sequence[tuple[str, Calls, Callable[[], None] | None]], repeats: int,
            min_time: float, timer: Callable[[], float] = time.perf_counter,
            interleave: bool = True, settle: float = 0.0) -> dict[str, tuple[int, list[float]]]:
    """{name: (calls per sample, per-call times)} of every entry (name, calls, setup run before each sample):
    calibration, one warm-up sample per call, then `repeats` rounds; round r runs the entries in their order
    rotated by r (interleaved, so that drift spreads over all of them). An entry's calls are one call, or one per
    placement (the same count for every entry): round r times call r mod count of each. With
    ``interleave=False`` (blocked), each entry's samples are taken one after the other instead, after a pause of
    `settle` seconds and a second warm-up sample right before them, so that what the previous entry left running
    (thread pools still spinning) has stopped or falls on untimed calls. An entry that raises stops the
    measurement with :class:`EntryError`."""
    numbers: dict[str, int] = {}
    samples: dict[str, list[float]] = {name: [] for name, _, _ in entries}
    rounds = [(name, [calls] if callable(calls) else list(calls), setup) for name, calls, setup in entries]
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name, calls, setup in rounds:
            try:
                if setup:
                    setup()
                numbers[name] = calibrate(calls[0], min_time, timer)
                for call in calls:
                    _sample(call, numbers[name], timer)  # warm-up at the measured size
            except Exception as error:  # noqa: BLE001
                raise EntryError(name, f"{type(error).__name__}: {error}") from error
        count = len(rounds)
        if interleave:  # (entry, round, timed)
            order = [(rounds[(k + r) % count], r, True) for r in range(repeats) for k in range(count)]
        else:  # one untimed sample, then its `repeats` timed ones
            order = [(entry, max(i - 1, 0), i > 0) for entry in rounds for i in range(repeats + 1)]
        for (name, calls, setup), r, timed in order:
            if not interleave and not timed and settle > 0:
                time.sleep(settle)
            try:
                if setup:
                    setup()
                per_call = _sample(calls[r % len(calls)], numbers[name], timer)
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


#: Confidence of a speedup's band (:func:`speedup_band`).
BAND_CONFIDENCE = 0.95


def median_band(values: Sequence[float], confidence: float = BAND_CONFIDENCE) -> tuple[float, float] | None:
    """Order statistics (x_(k), x_(n+1-k)) of `values` that cover the median of whatever distribution they were
    drawn from with at least `confidence` (the sign test's interval: how many values fall below the median is
    Binomial(n, 1/2)); None when n values cannot reach that confidence (fewer than 6 at 95%)."""
    n, k, below = len(values), 0, 0.0
    while below + math.comb(n, k) / 2**n <= (1 - confidence) / 2:  # P(fewer than k + 1 values below the median)
        below += math.comb(n, k) / 2**n
        k += 1
    if k == 0:
        return None
    ordered = sorted(values)
    return ordered[k - 1], ordered[n - k]


def speedup_band(other: Measurement, own: Measurement) -> list[float] | None:
    """The run's noise around other's speedup over own: :func:`median_band` of the ratios of their samples taken
    in the same round (other's time / own's), so that drift common to a round cancels (in blocked order, of the
    samples with the same index: independent pairs, a wider band). A speedup whose band lies above 1 is faster
    beyond the noise, below 1 slower; one whose band holds 1 is even within it. None for the memcpy bound (measured
    apart, after the others) and for rows without paired samples."""
    if other.kind == "bound" or not own.samples or len(other.samples) != len(own.samples):
        return None
    band = median_band([o / m for o, m in zip(other.samples, own.samples)])
    return list(band) if band else None


def speedups(measurements: Sequence[Measurement], versus: Sequence[str] = ()) -> None:
    """Fill `speedup` of every library and variant row against each peer and bound of the same case and threads,
    of each bundled-library row against each external library's, and of every library row against its own
    library's variants named in `versus`."""
    others = {(m.case, m.threads, m.implementation): m for m in measurements
              if m.kind in ("peer", "bound") and m.ok}
    index = {(m.case, m.threads, m.implementation): m for m in measurements if m.ok}
    for m in measurements:
        if m.kind in ("peer", "bound") or not m.ok or m.median is None:
            continue
        for (case, threads, name), p in others.items():
            if case == m.case and threads == m.threads and p.median is not None:
                m.speedup[name] = p.median / m.median
                _set_band(m, name, p)
        if m.kind == "simdbind" and m.implementation.startswith("bundled"):
            for e in measurements:  # external libraries (upstream builds) are compared like peers
                if (e.kind == "simdbind" and e.ok and e.implementation.startswith("external")
                        and e.case == m.case and e.threads == m.threads and e.median is not None):
                    m.speedup[e.implementation] = e.median / m.median
                    _set_band(m, e.implementation, e)
        if m.kind == "simdbind":
            for label in versus:
                base = index.get((m.case, m.threads, f"{m.implementation} {label}"))
                if base is not None and base.median is not None:
                    m.speedup[label] = base.median / m.median
                    _set_band(m, label, base)


def _set_band(m: Measurement, name: str, other: Measurement) -> None:
    band = speedup_band(other, m)
    if band is not None:
        m.band[name] = band


def beyond_noise(m: Measurement, other: str) -> int:
    """+1 where m is faster than `other` beyond the run's noise (its speedup band above 1), -1 slower (below 1),
    0 even within it or without a band."""
    low, high = m.band.get(other, (0.0, math.inf))
    return 1 if low > 1 else -1 if high < 1 else 0


def budgets(budget: dict[str, Any] | None, measurements: Sequence[Measurement]) -> None:
    """With a family budget: is each library row within factor x its library's baseline row + plus_us (same
    threads)? Recorded on the library row; a number, never an assertion."""
    if budget is None:
        return
    index = {(m.case, m.threads, m.implementation): m for m in measurements}
    for m in measurements:
        if m.kind != "simdbind" or not m.ok or m.median is None or m.min is None:
            continue
        base = index.get((m.case, m.threads, f"{m.implementation} {budget['baseline']}"))
        if base is None or not base.ok or base.median is None or base.min is None:
            continue
        factor, plus = float(budget.get("factor", 1.5)), float(budget.get("plus_us", 1.0)) * 1e-6
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


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`: `measurements` holds those of the cases measured to the end before it."""

    def __init__(self, measurements: list[Measurement]) -> None:
        super().__init__()
        self.measurements = measurements


def _set_threads(libraries: Sequence[Any], count: int) -> None:
    for library in libraries:
        library.set_threads(count)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(count)


def run(listed: Sequence[Listed], libraries: Sequence[LibraryImplementation], peers: Sequence[Any] = (),
        threads: Sequence[int] = (1,), repeats: int = 11, min_time: float = 0.02,
        timer: Callable[[], float] = time.perf_counter,
        progress: Callable[[Measurement], None] | None = None, order: str = "auto",
        seed: int = DEFAULT_SEED, family_peers: bool = True,
        starting: Callable[[int, int, Listed, int], None] | None = None) -> list[Measurement]:
    """Measure `listed` cases on every library, family row and peer, at each thread count. See the module doc.

    `order`: "interleaved" (round-robin samples, see :func:`measure`), "blocked" (each implementation's samples in
    a row) or "auto": interleaved at one thread, blocked at more. Thread pools keep spinning for a while after
    their work (OpenBLAS ~0.1 s, OpenMP runtimes up to 0.2 s), so interleaved at two threads the previous
    implementation's spinning threads take the cores from the one being timed: inner_product M256 measured 1.83x
    its one-thread speed alone and 1.10x interleaved with NumPy's matmul. Blocked, each implementation's samples
    start after a pause of SETTLE seconds, longer than those spins: without it, an OpenMP pool left spinning by
    PyTorch's block made the next block's 2-thread calls up to twice as slow (0.57x "scaling" for a case that
    scales 1.9x alone). `seed`: the base seed of the cases' inputs (the conformance runner's by default).
    `family_peers`: a family's ``PEERS`` (the names of the peers it compares with, or False for none) narrows
    `peers` (the default peers); False measures every one of `peers` on every case (peers chosen by name).
    `starting(i, n, item, threads)`: called before the i-th of the n (case, thread count) steps. Ctrl-C raises
    :class:`Interrupted` holding the measurements of the cases finished before it."""
    if order not in ORDERS:
        raise ValueError(f"order: must be one of {', '.join(ORDERS)}, got {order!r}")
    check_timer(listed, threads, timer)
    loaded = list({id(lib.library): lib.library for lib in libraries}.values())
    saved_isa = {id(lib): lib.isa for lib in loaded if lib.kind == "bundled"}
    saved_threads = {id(lib): lib.threads for lib in loaded}
    torch = sys.modules.get("torch")
    saved_torch = torch.get_num_threads() if torch is not None else None
    results: list[Measurement] = []
    step, steps = 0, len(threads) * len(listed)
    try:
        for count in threads:
            _set_threads(loaded, count)
            for item in listed:
                step += 1
                if starting:
                    starting(step, steps, item, count)
                interleave = order == "interleaved" or (order == "auto" and count == 1)
                module = family_module(item.family)
                wanted = getattr(module, "PEERS", True) if family_peers else True
                chosen = [] if wanted is False else list(peers) if wanted is True else [
                    peer for peer in peers if peer.name in wanted]
                case_results = _run_case(item, module, libraries, chosen, count, repeats, min_time, timer,
                                         interleave, seed)
                speedups(case_results, getattr(module, "VERSUS", ()))
                budgets(getattr(module, "BUDGET", None), case_results)
                results.extend(case_results)
                if progress:
                    for m in case_results:
                        progress(m)
    except KeyboardInterrupt:
        raise Interrupted(results) from None
    finally:
        for lib in loaded:
            if id(lib) in saved_isa:
                lib.set_isa(saved_isa[id(lib)])
            lib.set_threads(saved_threads[id(lib)])
        torch = sys.modules.get("torch")
        if torch is not None and saved_torch is not None:
            torch.set_num_threads(saved_torch)
    return results


def _run_case(item: Listed, module: Any, libraries: Sequence[LibraryImplementation], peers: Sequence[Any],
              threads: int, repeats: int, min_time: float, timer: Callable[[], float], interleave: bool,
              seed: int) -> list[Measurement]:
    case, function = item.case, item.case.function
    amount: Work = work(case, item.family)
    inputs = REGISTRY[function].inputs(case, case.rng(seed))
    # Per placement, one set of inputs and one of output arrays for every library: each reads and writes where the
    # others do, so no library's time carries the luck of its own arrays' places (dst against src modulo 4 KiB
    # moved eltwise at 64 K floats by 10%).
    placements = [({name: placed(value, offset) for name, value in inputs.items()}, ReusedOutputs(offset))
                  for offset in PLACEMENTS]

    def new(implementation: str, kind: str, library: LibraryImplementation | None = None) -> Measurement:
        return Measurement(case.descriptor, item.family, function, amount.unit, amount.amount, implementation, kind,
                           threads, library=library.name if library else "", isa=library.isa if library else "")

    measured: list[tuple[str, Any]] = (module.measured(list(libraries)) if hasattr(module, "measured")
                                       else [("simdbind", lib) for lib in libraries])
    measured += [("peer", peer) for peer in peers]
    entries: list[_Entry] = []
    for kind, implementation in measured:
        library = _library_of(implementation)
        entry = _Entry(new(implementation.name, kind, library))
        entries.append(entry)
        try:
            reason = implementation.unsupported(function, case)
            if reason:
                entry.measurement.error = f"unsupported: {reason}"
                continue
            if library is not None:
                entry.setup = lambda library=library: _activate(library)
                _activate(library)
            calls = []
            for placed_inputs, outputs in placements:
                outputs.rewind()
                call = prepared(implementation, function, case, {**placed_inputs, OUTPUTS: outputs})
                call()  # an Unsupported found from the inputs shows here; and the first touch of the outputs
                calls.append(call)
            entry.calls = calls
        except Unsupported as error:
            entry.measurement.error = f"unsupported: {error}"
        except Exception as error:  # noqa: BLE001 - a broken implementation is reported, not fatal
            entry.measurement.error = f"{type(error).__name__}: {error}"
    runnable = [e for e in entries if e.calls]
    while runnable:  # an entry failing while timed is reported; the others are measured again without it
        try:
            timed = measure([(e.measurement.implementation, e.calls, e.setup) for e in runnable],
                            repeats, min_time, timer, interleave, 0.0 if interleave else SETTLE)
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
    if amount.moved and getattr(module, "BOUND", True):  # apart, after the others (see the module's docstring)
        copy = memcpy_bound(amount.moved)
        bound = _Entry(new(MEMCPY, "bound"), calls=[copy])
        bound.measurement.number, bound.measurement.samples = measure(
            [(MEMCPY, copy, None)], repeats, min_time, timer)[MEMCPY]
        bound.measurement.finish()
        entries.append(bound)
    return [e.measurement for e in entries]


# -- environment -----------------------------------------------------------------------------------------------
def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001 - not installed
        return None


def environment(libraries: Sequence[LibraryImplementation] = (), peers: Sequence[Any] = ()) -> dict[str, Any]:
    """The machine and versions a run was measured on."""
    described: dict[str, Any] = {}
    isas: list[str] = []
    for impl in libraries:
        lib = impl.library
        if lib.path not in described:
            described[lib.path] = {"kind": lib.kind, "mode": lib.mode, "version": lib.version,
                                   "generation": lib.generation}
            if lib.kind == "bundled":
                isas = list(lib.isas_supported)
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "isas": isas,
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": {name: v for name in ("simdbind", "numpy", "cffi", "torch", "onnxruntime", "openvino", "ncnn",
                                          "matplotlib") if (v := _version(name))},
        "libraries": described,
        "peers": [peer.name for peer in peers],
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
                banded = [beyond_noise(m, peer) for m in mine if peer in m.band]
                if banded:
                    spread += (f"; beyond the noise {banded.count(1)} faster, {banded.count(-1)} slower, "
                               f"{banded.count(0)} even")
                parts.append(f"{impl} {geo:.2f}x {peer} ({len(values)} case{'s' * (len(values) > 1)}{spread})")
        suffix = f", {threads} threads" if threads != 1 else ""
        lines.append(f"- **{family}**{suffix}: " + "; ".join(parts))
    return lines


def _ratio(a: float | None, b: float | None) -> float:
    """a / b of two medians of successful measurements (never None there)."""
    assert a is not None and b is not None
    return a / b


def thread_scaling(measurements: Sequence[Measurement]) -> list[str]:
    """One line per family and thread count above the lowest: each implementation's geometric-mean speedup over
    its own time at the lowest thread count (ideal: the thread ratio)."""
    ms = [m for m in measurements if m.ok and m.kind != "variant"]
    counts = sorted({m.threads for m in ms})
    if len(counts) < 2:
        return []
    base = {(m.row, m.implementation): m for m in ms if m.threads == counts[0]}
    lines = []
    for family in sorted({m.family for m in ms}):
        for count in counts[1:]:
            parts = []
            for impl in dict.fromkeys(m.implementation for m in ms if m.family == family):
                ratios = [_ratio(base[(m.row, impl)].median, m.median) for m in ms
                          if m.family == family and m.threads == count and m.implementation == impl
                          and (m.row, impl) in base]
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
    index = {(m.row, m.implementation, m.threads): m.median for m in ms}
    rows = []
    for case, impl in dict.fromkeys((m.row, m.implementation) for m in ms):
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
    rows = list(dict.fromkeys((m.row, m.threads) for m in ms))
    multi_threads = len({t for _, t in rows}) > 1
    cell = {(m.row, m.threads, m.implementation): m for m in ms}
    head = ["case"] + (["threads"] if multi_threads else []) + ["unit"] + impls
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, threads in rows:
        found = [cell.get((case, threads, i)) for i in impls]
        unit = next((m.unit for m in found if m is not None), "")
        best = max((m.throughput for m in found if m is not None and m.throughput is not None), default=None)
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


def speedup_text(m: Measurement, other: str) -> str:
    """``1.07x`` and, where the run gives one, its band: ``1.07x (1.03-1.10)``; empty without a speedup."""
    if other not in m.speedup:
        return ""
    band = m.band.get(other)
    return f"{m.speedup[other]:.2f}x" + (f" ({band[0]:.2f}-{band[1]:.2f})" if band else "")


def _placement_text(meta: dict[str, Any]) -> str:
    """How the run placed its arrays, where its meta says (runs from before placements say nothing)."""
    offsets = meta.get("placements")
    if not offsets:
        return ""
    return (f"; sample r of each with every array of the case {'/'.join(str(o) for o in offsets)} bytes (the "
            f"r-th mod {len(offsets)}) past a page boundary, the same arrays for every implementation")


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
        f"after warm-up, {_order_text(meta.get('order', 'interleaved'), ms)}{_placement_text(meta)}. "
        "`speedup vs X` = X's median time / "
        "this one's (> 1: faster than X); in parentheses, the run's noise around it: the interval that holds "
        f"the median of the ratios of samples taken in the same round with {BAND_CONFIDENCE:.0%} confidence "
        "(a speedup is beyond the noise where that interval excludes 1).",
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
            row = [m.row] + ([str(m.threads)] if multi_threads else []) + [
                m.implementation, _us(m.median), f"{_us(m.min)}-{_us(m.max)}", f"{_rate(m.throughput)} {m.unit}"
            ] + [speedup_text(m, p) for p in peers]
        else:
            row = [m.row] + ([str(m.threads)] if multi_threads else []) + [
                m.implementation, "-", "-", (m.error or "no samples").replace("|", "/")[:80]] + [""] * len(peers)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "</details>"]
    over = [m for m in ms if m.budget]
    if over:
        lines += ["", "Per-call overhead of the Pythonic layer (budget: factor x raw cffi call + constant):", ""]
        for m in over:
            b = m.budget or {}
            verdict = "within budget" if b["met"] else "OVER budget"
            by_min = ""
            if "min_us" in b:
                by_min = (f" (fastest samples: {b['min_us']:.2f} µs vs {b['baseline_min_us']:.2f} µs: "
                          f"{'within' if b['met_by_min'] else 'over'})")
            lines.append(f"- {m.row}, {m.implementation}: {b['median_us']:.2f} µs vs {b['baseline_us']:.2f} µs "
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
