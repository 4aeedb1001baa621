"""``simdbind conformance explore``: a seeded random search over each function's parameter space.

Each drawn case (:meth:`Function.space`) runs in a crash-isolated worker process, under the runner's guard zones
and against the same reference, tolerance and deviation catalogue as the grid profiles
(:func:`simdbind.conformance.runner.run_case`). A process that dies (SIGSEGV, abort) or outlives the timeout is a
result of its case, and the search goes on in a fresh worker. Each finding -- a failure that the catalogue does not
explain -- is shrunk by hypothesis to a minimal case and printed as its descriptor, a repro line and a
catalogue-ready JSON entry; ``--keep FILE`` appends the minimal descriptors to a regression file (the files in
``simdbind/conformance/families/<family>/regressions.txt`` are part of the ``ci`` and ``full`` profiles).

The search runs in this process (hypothesis draws and shrinks); only the calls into the implementation run in the
worker. The wall-time budget is shared equally by every (implementation, function) pair; shrinking a finding may
take up to :data:`SHRINK_SHARE` of a pair's budget more.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence, TypedDict

from simdbind.conformance import options, runner
from simdbind.conformance.names import error as _error
from simdbind.conformance.model import REGISTRY, Case, Function

#: Seconds one case may take in the worker before it counts as a hang.
DEFAULT_TIMEOUT = 60.0
#: Shrinking a finding may overrun a pair's budget by this fraction of it (at least MIN_SHRINK_SECONDS).
SHRINK_SHARE = 0.5
MIN_SHRINK_SECONDS = 20.0
#: Errors that mean the drawn case broke an argument rule or cannot be made (its values do not go together): a
#: defect of the space or of a neighbour, counted, never a finding.
REJECTED = ("ArgumentError:", "DTypeError:", "case:")


# -- the worker process ------------------------------------------------------------------------------------------
if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    # The two ends of a worker's pipe: (function name, descriptor) goes to the worker, a CaseResult comes back.
    _ParentEnd = Connection[tuple[str, str], runner.CaseResult]
    _WorkerEnd = Connection[runner.CaseResult, tuple[str, str]]

def _serve(connection: _WorkerEnd, spec: tuple[str, ...], seed: int, modules: tuple[str, ...]) -> None:
    """Worker loop: (function name, descriptor) in, CaseResult out."""
    import importlib

    from simdbind.conformance.implementations import from_spec

    # Ctrl-C at a terminal reaches the whole process group: the search in the parent handles it and stops this
    # process (it sees its pipe close), which must not die first with a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in modules:
        importlib.import_module(module)
    implementation = from_spec(spec)
    while True:
        try:
            function_name, descriptor = connection.recv()
        except (EOFError, ConnectionError):  # the search is over (its end of the pipe closed, maybe unread)
            return
        function = REGISTRY[function_name]
        result = runner.run_case(implementation, function, function.parse(descriptor), seed)
        try:
            connection.send(result)
        except ConnectionError:  # the search stopped (Ctrl-C) while this case ran
            return


class Worker:
    """One implementation in a child process; a crash or hang ends the process, and the next call goes to a fresh
    one. A spare process is started beside the current one, so that a crash costs no start-up time."""

    def __init__(self, implementation: Any, seed: int, timeout: float = DEFAULT_TIMEOUT,
                 modules: Sequence[str] = ()):
        self.implementation, self.seed, self.timeout, self.modules = implementation, seed, timeout, tuple(modules)
        self.current: tuple[BaseProcess, _ParentEnd] | None = None
        self.spare: tuple[BaseProcess, _ParentEnd] | None = None
        self.restarts = 0

    def _spawn(self) -> tuple[BaseProcess, _ParentEnd]:
        context = multiprocessing.get_context("spawn")  # no forked copies of thread pools or library state
        connection, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, self.implementation.spec, self.seed, self.modules),
                                  daemon=True)
        process.start()
        child.close()
        return process, connection

    def stop(self) -> None:
        for slot in (self.current, self.spare):
            if slot is not None:
                process, connection = slot
                connection.close()
                process.join(timeout=5)
                if process.is_alive():
                    process.kill()
                    process.join()
        self.current = self.spare = None

    def run(self, function: Function, case: Case) -> runner.CaseResult:
        if self.current is None:
            self.current, self.spare = self.spare or self._spawn(), None
        if self.spare is None:
            self.spare = self._spawn()
        process, connection = self.current
        start = time.perf_counter()
        try:
            connection.send((function.name, case.descriptor))
            ready = connection.poll(self.timeout)
        except (BrokenPipeError, ConnectionResetError):  # the worker died before the case reached it
            process.join(timeout=10)
            ready = False
        if ready:
            try:
                return connection.recv()
            except EOFError:  # the process died: wait for its exit status
                process.join(timeout=10)
        if process.is_alive():
            process.kill()
            detail = f"hang: no result after {self.timeout:g} s (the worker was killed)"
        else:
            detail = f"crash: the worker process died with {_exit_reason(process.exitcode)}"
        process.join()
        connection.close()
        self.current = None
        self.restarts += 1
        result = runner.CaseResult(self.implementation.name, function.name, case.descriptor, case.group, case.dtype,
                                   case.layout, "error", detail, seconds=time.perf_counter() - start,
                                   family=function.family)
        return runner._classify(result, self.implementation, case, self.seed, None)


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


# -- classification ----------------------------------------------------------------------------------------------
def kind_of(result: runner.CaseResult) -> str:
    """pass, known (catalogued), skip, rejected (the case broke an argument rule), or a finding's kind: crash,
    hang, overrun (a guard byte after or before dst changed), wrong:nan (NaN where the reference has a number),
    wrong (other values outside tolerance), or error:<ExceptionType>. Each kind is shrunk separately."""
    if result.status in ("pass", "xpass"):
        return "pass"
    if result.status in ("known", "skip"):
        return result.status
    if result.status == "fail":
        if "bytes past dst" in result.detail or "bytes before dst" in result.detail:
            return "overrun"  # a write outside dst (the guard zones around the outputs)
        # NaN where the reference is a number: most often a read outside the inputs (their guard zones are NaN).
        return "wrong:nan" if re.search(r"got -?nan, expected [-+0-9]", result.detail) else "wrong"
    detail = re.sub(r"^[\w.]+\(\) raised ", "", result.detail)  # the guard names the adapter's method first
    if detail.startswith(REJECTED):
        return "rejected"
    if detail.startswith(("crash:", "hang:")):
        return detail.split(":", 1)[0]
    return "error:" + detail.split(":", 1)[0]


FINDING_KINDS = ("crash", "hang", "overrun", "wrong:nan", "wrong")


def is_finding(kind: str) -> bool:
    return kind in FINDING_KINDS or kind.startswith("error:")


@dataclass
class Finding:
    implementation: Any
    function: Function
    kind: str
    case: Case  # minimal
    result: runner.CaseResult  # of the minimal case
    first_case: Case
    seconds_to_find: float  # since the start of the pair's search
    cases_to_find: int
    shrink_runs: int = 0
    shrink_seconds: float = 0.0

    def repro(self, seed: int) -> str:
        return runner.repro_command(self.implementation, self.case, seed)

    def entry(self) -> dict[str, Any]:
        """A catalogue entry skeleton: ``when`` pins every parameter of the minimal case (widen it to what the
        behaviour really depends on before adding it, and fill in the TODOs)."""
        case, impl = self.case, self.implementation
        clauses = [f"{key} == {value!r}" for key, value in case.params.items()]
        clauses += [f"layout == {case.layout!r}"] if case.layout != "-" else []
        clauses.append(f"isa == {impl.isa!r}")
        version = getattr(impl, "version", "") or ""
        return {"id": f"{case.function}-{self.kind.replace(':', '-').lower()}-TODO", "function": case.function,
                "when": " and ".join(clauses), "versions": f"=={version}" if version else "all",
                "spec": "TODO: where the contract is written", "behaviour": self.result.detail.split("\n")[0][:300],
                "affects": getattr(impl, "kind", impl.name), "example": case.descriptor}


@dataclass
class Pair:
    """The search over one function on one implementation."""

    implementation: Any
    function: Function
    runs: int = 0
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C stopped the search (what it found so far is kept)
    corpus: int = 0  # guided: the cases that showed a new feature
    neighbours: int = 0  # guided: the neighbours made (one already run is not run again)


class _SearchState(TypedDict):
    """One round of the search: the kind of finding being shrunk (None until one is found) and how it went."""

    out_of_time: bool
    target: str | None
    failing: tuple[Case, runner.CaseResult] | None  # the smallest failing case so far, and its result
    first: Case | None  # the case that found the target
    found_at: float
    found_after: int
    shrink_start: float
    shrink_runs: int


class _OutOfTime(Exception):
    """Raised by the search's test body when the budget is spent (hypothesis then stops)."""


class _Failed(Exception):
    """Raised by the search's test body on a case of the finding being shrunk."""


def search(worker: Worker, function: Function, budget: float, seed: int, log: Any = None,
           guided: bool = False) -> Pair:
    """Draw cases of `function` for `budget` seconds; shrink each new kind of finding to a minimal case. `guided`:
    also run a neighbour of a case that showed a new feature after each drawn case (:mod:`.guide`). Ctrl-C ends the
    search with what it found so far (`interrupted` set; a finding being shrunk is kept as shrunk so far)."""
    with _interrupt_flag() as interrupted:
        pair = _search(worker, function, budget, seed, log, interrupted, guided)
    return pair


class _Flag:
    """Set by Ctrl-C during a search."""

    def __init__(self) -> None:
        self.set = False


@contextmanager
def _interrupt_flag() -> Iterator[_Flag]:
    """A SIGINT handler for the search that records Ctrl-C before raising KeyboardInterrupt. hypothesis runs Python
    code in a garbage-collection callback, and an exception raised there is printed and dropped: the flag keeps the
    Ctrl-C, and the search's test body raises it again at the next case."""
    flag = _Flag()
    if threading.current_thread() is not threading.main_thread():
        yield flag  # signals reach the main thread only
        return

    def on_sigint(signum: int, frame: Any) -> None:
        flag.set = True
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


def _search(worker: Worker, function: Function, budget: float, seed: int, log: Any, interrupted: _Flag,
            guided: bool = False) -> Pair:
    import random

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    from simdbind.conformance.guide import Guide

    pair = Pair(worker.implementation, function)
    guide = Guide(function, random.Random(f"{seed}:{function.name}")) if guided else None
    start = time.perf_counter()
    deadline = start + budget
    shrink_deadline = deadline + max(MIN_SHRINK_SECONDS, SHRINK_SHARE * budget)
    known_kinds: set[str] = set()
    outcomes: dict[str, tuple[str, runner.CaseResult]] = {}  # descriptor -> (kind, result): no case runs twice
    round_number = 0
    while time.perf_counter() < deadline:
        state: _SearchState = {"out_of_time": False, "target": None, "failing": None, "first": None, "found_at": 0.0,
                               "found_after": 0, "shrink_start": 0.0, "shrink_runs": 0}

        def execute(case: Case) -> tuple[str, runner.CaseResult]:
            if case.descriptor not in outcomes:
                result = worker.run(function, case)
                kind = kind_of(result)
                outcomes[case.descriptor] = (kind, result)
                pair.runs += 1
                pair.counts[kind] = pair.counts.get(kind, 0) + 1
                if state["target"] is not None:
                    state["shrink_runs"] += 1
            return outcomes[case.descriptor]

        def explore_around(drawn: Case) -> None:
            """Run a neighbour of the corpus; a new kind of finding there is kept as found (hypothesis shrinks
            only what it drew)."""
            assert guide is not None
            near = guide.neighbour(drawn)
            if near is None or near.descriptor in outcomes:
                return
            kind, result = execute(near)
            guide.observe(near, kind, result.info)
            if is_finding(kind) and kind not in known_kinds:
                finding = Finding(worker.implementation, function, kind, near, result, near,
                                  time.perf_counter() - start, pair.runs)
                pair.findings.append(finding)
                known_kinds.add(kind)
                if log:
                    log(finding)

        def body(case: Case) -> None:
            if interrupted.set:
                raise KeyboardInterrupt  # hypothesis stops at once on it, without shrinking
            now = time.perf_counter()
            target = state["target"]
            if target is None and now >= deadline:
                state["out_of_time"] = True
                raise _OutOfTime
            if target is not None and now >= shrink_deadline and case.descriptor not in outcomes:
                return  # out of shrinking time: untried candidates count as passing, so the shrinker stops
            kind, result = execute(case)
            if guide is not None and target is None:
                guide.observe(case, kind, result.info)
                explore_around(case)
            if target is None and is_finding(kind) and kind not in known_kinds:
                state.update({"target": kind, "first": case, "found_at": time.perf_counter() - start,
                              "found_after": pair.runs, "shrink_start": time.perf_counter()})
                target = kind
            if target is not None and kind == target:
                state["failing"] = (case, result)
                raise _Failed(kind)

        test = settings(max_examples=10 ** 9, deadline=None, database=None, derandomize=False,
                        phases=[Phase.generate, Phase.shrink], report_multiple_bugs=False, print_blob=False,
                        suppress_health_check=list(HealthCheck))(given(function.space())(body))
        test = hypothesis_seed(seed + round_number)(test)
        round_number += 1
        try:
            test()
        except BaseException as error:  # _Failed or _OutOfTime, possibly in hypothesis's Flaky group; Ctrl-C
            if isinstance(error, KeyboardInterrupt):
                interrupted.set = True
            if state["failing"] is None:
                if state["out_of_time"] or interrupted.set:
                    break
                raise
            case, result = state["failing"]
            assert state["target"] is not None and state["first"] is not None  # set together, before any failing
            finding = Finding(worker.implementation, function, state["target"], case, result, state["first"],
                              state["found_at"], state["found_after"], state["shrink_runs"],
                              time.perf_counter() - state["shrink_start"])
            pair.findings.append(finding)
            known_kinds.add(state["target"])
            if log:
                log(finding)
            if interrupted.set:
                break
        else:
            break  # every example drawn (a tiny space): nothing more to find
        if interrupted.set:  # a Ctrl-C that hypothesis's garbage-collection callback swallowed
            break
    pair.interrupted = interrupted.set
    pair.seconds = time.perf_counter() - start
    if guide is not None:
        pair.corpus, pair.neighbours = len(guide.corpus), guide.neighbours_made
    return pair


# -- command line ------------------------------------------------------------------------------------------------
def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "explore", help="random search over each function's parameter space; shrinks and prints each finding",
        description=__doc__.split("\n\n")[0],
        epilog="Exit codes: 0 nothing found, 1 a finding, 2 a usage error or an output that could not be written, "
               "130 interrupted (what was found so far is printed, kept and written).")
    # The implementations, functions and seed are chosen as a conformance run chooses them.
    options.add_cli_arguments(parser, ("library", "isa", "mode", "impl", "function", "seed"))
    parser.add_argument("--budget", type=options.positive_seconds, default=60.0, metavar="SECONDS",
                        help="wall time of the search, shared by every implementation x function (default 60)")
    parser.add_argument("--timeout", type=options.positive_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"a case running longer is a hang (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--keep", default=None, metavar="FILE",
                        help="append each finding's minimal descriptor to FILE (a regression file)")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the findings and counts as JSON")
    parser.add_argument("--guide", choices=("none", "features"), default="features",
                        help="features (default): after each drawn case also run a neighbour of a case that showed "
                             "something new (an algorithm, a size class, an outcome); none: the random search alone "
                             "(docs/coverage.md compares them)")
    parser.set_defaults(handler=main)
    return parser


def main(args: argparse.Namespace) -> int:
    """Exit status: 0 nothing found, 1 a finding, 2 a usage error (before any work) or an output that could not be
    written, 130 Ctrl-C (after reporting what was found)."""
    from simdbind.conformance.implementations import implementations

    seed = args.seed if args.seed is not None else runner.DEFAULT_SEED
    try:
        chosen = runner.functions(args.function)
        impls = implementations(args.library, args.isa, args.mode, args.impl)
    except (KeyError, ValueError) as error:
        return _error(error.args[0] if isinstance(error, KeyError) and error.args else str(error))
    for flag, path in (("--keep", args.keep), ("--json", args.json)):
        problem = options.check_writable(path, flag) if path else None
        if problem:
            return _error(problem)
    pairs_total = len(impls) * len(chosen)
    budget = args.budget / max(1, pairs_total)
    print(f"simdbind conformance explore: {len(chosen)} function(s) x {len(impls)} implementation(s), "
          f"{args.budget:g} s ({budget:.1f} s each), seed {seed}", flush=True)
    pairs: list[Pair] = []
    findings = 0

    def log(finding: Finding) -> None:
        nonlocal findings
        findings += 1
        print(_describe(finding, findings, seed), flush=True)

    start = time.perf_counter()
    interrupted = False
    try:
        for impl in impls:
            worker = Worker(impl, seed, args.timeout)
            try:
                for function in chosen:
                    try:  # a whole function the implementation lacks (a library without the symbols) is skipped once
                        reason = impl.unsupported(function.name, None)
                    except Exception:  # an implementation that only answers per case
                        reason = None
                    if reason:
                        print(f"  {impl.name} {function.name}: skipped ({reason})")
                        continue
                    pair = search(worker, function, budget, seed, log, args.guide == "features")
                    pairs.append(pair)
                    counts = ", ".join(f"{k} {v}" for k, v in sorted(pair.counts.items()))
                    guided = f"; corpus {pair.corpus}, {pair.neighbours} neighbours" if args.guide != "none" else ""
                    print(f"  {impl.name} {function.name}: {pair.runs} cases in {pair.seconds:.1f} s "
                          f"({pair.runs / max(pair.seconds, 1e-9):.1f}/s): {counts}{guided}", flush=True)
                    if pair.interrupted:
                        raise KeyboardInterrupt
            finally:
                worker.stop()
    except KeyboardInterrupt:
        interrupted = True
        print("explore: interrupted; what was found so far follows", flush=True)
    seconds = time.perf_counter() - start
    runs = sum(p.runs for p in pairs)
    print(f"explore: {runs} cases in {seconds:.1f} s = {runs / max(seconds, 1e-9):.1f} cases/s; "
          f"{findings} finding(s)")
    status = _write_outputs(args, pairs, seed, seconds, interrupted)
    return 128 + 2 if interrupted else status or (1 if findings else 0)


def _write_outputs(args: argparse.Namespace, pairs: list[Pair], seed: int, seconds: float, interrupted: bool) -> int:
    """Append the findings to --keep and write --json; 2 (after a one-line error each) when one cannot be written."""

    status = 0
    every = [f for p in pairs for f in p.findings]
    if args.keep and every:
        path = Path(args.keep)
        lines = "".join(f"{finding.case.descriptor}  # {finding.kind} on {finding.implementation.name}\n"
                        for finding in every)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as handle:
                handle.write(lines)
            print(f"kept {len(every)} minimal case(s) in {path}")
        except OSError as error:
            status = _error(f"--keep {path}: cannot be written ({error.strerror or error})")
    if args.json:
        try:
            options.write_text(args.json, json.dumps(_as_json(pairs, seed, seconds, interrupted), indent=1))
        except OSError as error:
            status = _error(f"--json {args.json}: cannot be written ({error.strerror or error})")
    return status


def _describe(finding: Finding, number: int, seed: int) -> str:
    entry = json.dumps(finding.entry(), indent=2)
    return "\n".join([
        f"FINDING {number}: {finding.function.name} {finding.kind} on {finding.implementation.name}, found after "
        f"{finding.seconds_to_find:.1f} s ({finding.cases_to_find} cases), shrunk in {finding.shrink_seconds:.1f} s "
        f"({finding.shrink_runs} runs)",
        f"  first:   {finding.first_case.descriptor}",
        f"  minimal: {finding.case.descriptor}",
        f"  detail:  {finding.result.detail.splitlines()[0] if finding.result.detail else ''}",
        f"  repro:   {finding.repro(seed)}",
        "  catalogue entry:", "    " + entry.replace("\n", "\n    ")])


def _as_json(pairs: list[Pair], seed: int, seconds: float, interrupted: bool = False) -> dict[str, Any]:
    return {"seed": seed, "seconds": seconds, "interrupted": interrupted, "cases": sum(p.runs for p in pairs),
            "pairs": [{"implementation": p.implementation.name, "function": p.function.name, "cases": p.runs,
                       "seconds": p.seconds, "counts": p.counts, "corpus": p.corpus, "neighbours": p.neighbours,
                       "findings": [{"kind": f.kind, "minimal": f.case.descriptor, "first": f.first_case.descriptor,
                                     "detail": f.result.detail, "seconds_to_find": f.seconds_to_find,
                                     "cases_to_find": f.cases_to_find, "shrink_runs": f.shrink_runs,
                                     "shrink_seconds": f.shrink_seconds, "repro": f.repro(seed),
                                     "entry": f.entry()} for f in p.findings]} for p in pairs]}

