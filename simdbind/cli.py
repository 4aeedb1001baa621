"""The ``simdbind`` command: ``info``, ``conformance``, ``bench`` and ``upstream``."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterator, NoReturn, Sequence, cast

import simdbind
from simdbind.conformance import coverage as conformance_coverage
from simdbind.conformance import explore as conformance_explore
from simdbind.conformance import merge as conformance_merge
from simdbind.conformance import names as conformance_names
from simdbind.conformance import options as conformance_options
from simdbind.conformance import values as conformance_values


def _info(args: argparse.Namespace) -> int:
    library = simdbind.load(args.library, mode=args.mode)
    d = library.describe()
    print(f"library       {d['path']}")
    print(f"kind          {d['kind']} ({d['mode']} mode)")
    print(f"version       {d['version']}")
    print(f"generation    v{d['generation']} API")
    print(f"cpu           {d['cpu_model']}")
    print(f"isas          {', '.join(d['isas_supported'])}")
    print(f"selected isa  {d['isa']}")
    print(f"threads       {d['threads']}")
    for name, value in d["capabilities"].items():
        print(f"capability    {name} = {value}")
    return 0


_error = conformance_names.error

def _diff(args: argparse.Namespace) -> int:
    """`simdbind conformance diff OLD.json NEW.json`: regressions and fixes; exit 1 if the new run failed."""
    from simdbind.conformance import report

    try:
        old, new = report.read_json(args.old), report.read_json(args.new)
        difference = report.diff(old, new)
        text = report.format_diff(difference, args.old, args.new)
    except Exception as error:  # reports come from other machines: any defect in one is a one-line refusal
        expected = isinstance(error, (OSError, ValueError))  # their messages name the file and the defect
        return _error(f"conformance diff: {error}" if expected else f"conformance diff: {type(error).__name__}: {error}")
    print(text)
    return 1 if difference.failed else 0


def _conformance(args: argparse.Namespace) -> int:
    import shlex

    from simdbind.conformance import options, report, runner
    from simdbind.conformance.implementations import implementations

    if args.conformance_command == "diff":
        return _diff(args)
    try:
        if args.case is not None and args.case_filter:
            raise ValueError("-k: cannot be combined with --case (a repro runs exactly the case it names)")
        paths, own_folder = options.report_paths(args)
        workers = runner.worker_count(args.workers, warn=lambda message: print(f"simdbind: {message}",
                                                                              file=sys.stderr))
        chosen = runner.functions(args.function or None)
        if args.case is not None:
            runner.check_descriptor(args.case, chosen)
            _check_case_domain(args.case)
        impls = implementations(args.library, args.isa, args.mode, args.impl)
        steps = runner.plan(impls, args.function or None, args.profile, args.case_filter, args.case, args.shard)
    except (KeyError, ValueError) as error:
        return _error(error.args[0] if isinstance(error, KeyError) and error.args else str(error))
    if args.list:
        for index, function, case in steps:
            print(f"{impls[index].name}  {case.descriptor}")
        return 0 if steps else 2
    for name, path in paths.items():
        problem = options.check_writable(path, _report_flag(args, name))
        if problem:
            return _error(problem)
    command = options.cli_command(args, ["simdbind", "conformance", "--profile", args.profile, "--seed",
                                         str(args.seed)], exclude=("profile", "seed"))
    meta = report.make_meta(impls, profile=args.profile, seed=args.seed,
                            filter=" ".join(args.case_filter or []) or None, case=args.case, functions=args.function,
                            workers=workers, command=shlex.join(command))
    if args.shard is not None:
        meta["shard"] = str(args.shard)
    print(report.format_header(meta, len(steps), impls), flush=True)
    if not steps:
        print("no cases selected", file=sys.stderr)
        return 2
    try:
        outcome, interrupted = _run_conformance(args, runner, report, impls, workers)
    except runner.WorkerError as error:
        return _error(str(error))
    outcome.meta = meta
    if interrupted:
        meta["interrupted"] = True
        print(f"interrupted: {len(outcome.results)} of {len(steps)} cases ran", file=sys.stderr)
    print(report.format_summary(outcome))
    failures = _write_reports(outcome, {name: (_report_flag(args, name), path) for name, path in paths.items()},
                              own_folder)
    for failure in failures:
        _error(failure)
    return 128 + 2 if interrupted else 2 if failures else 1 if outcome.failed else 0


def _report_flag(args: argparse.Namespace, name: str) -> str:
    """The option that chose where report `name` goes, for messages: its own, --reports, or none (the run's own
    folder)."""
    return f"--{name}" if getattr(args, name.replace("-", "_"), None) else "--reports" if args.reports else "report"


def _check_case_domain(descriptor: str) -> None:
    """ValueError naming the field of a --case descriptor that lies outside its function's case domain."""
    from simdbind.conformance.model import REGISTRY, DescriptorError, case_from_descriptor

    try:
        case = case_from_descriptor(descriptor)
        REGISTRY[case.function].check_domain(case)
    except DescriptorError as error:
        raise ValueError(f"--case: {error}") from None


def _run_conformance(args: argparse.Namespace, runner: Any, report: Any, impls: Sequence[Any],
                     workers: int) -> tuple[Any, bool]:
    """The run and whether Ctrl-C stopped it: the runner returns what ran, marked interrupted."""
    from simdbind.conformance.progress import Progress

    display = None if args.no_progress else Progress(sys.stderr)
    try:
        outcome = runner.run(impls, args.function or None, args.profile, args.seed, args.case_filter, display,
                             workers, args.case, shard=args.shard)
    finally:
        if display:
            display.close()
    return outcome, bool(outcome.interrupted)


def _write_reports(outcome: Any, reports: dict[str, tuple[str, str]], own_folder: str | None) -> list[str]:
    """Write each report of `reports` ({report option name: (the flag that chose it, path)}); a report that cannot
    be written is a line of the list returned, and the others are still written. A second Ctrl-C waits until they
    are written: none is left half-written."""
    from simdbind.conformance import report

    writers = {"report-json": report.write_json, "junit-xml": report.write_junit, "report-md": report.write_markdown,
               "report-html": report.write_html}
    written, failures = [], []
    with _sigint_deferred():
        try:
            folder = _new_folder(own_folder) if own_folder is not None else None
        except OSError as error:
            return [f"report folder {own_folder}: cannot be created ({error.strerror or error})"]
        for name, (flag, path) in reports.items():
            path = os.path.join(folder, os.path.basename(path)) if folder else path
            try:
                written.append(str(writers[name](outcome, path)))
            except OSError as error:
                failures.append(f"{flag} {path}: cannot be written ({error.strerror or error})")
    if written:
        print(f"reports: {', '.join(written)}")
    return failures


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Ctrl-C inside the block is raised when it ends (outputs are written whole or not at all)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


def _new_folder(wanted: str) -> str:
    """Create a run's own report folder: `wanted`, or another new name when that one exists (never reused)."""
    from simdbind.conformance import options

    folder = wanted
    os.makedirs(os.path.dirname(folder) or ".", exist_ok=True)
    while True:
        try:
            os.mkdir(folder)
            return folder
        except FileExistsError:
            folder = options.run_folder()


def _bench_command(args: argparse.Namespace) -> str:
    """The command line that reproduces this run (its options, spelled out)."""
    import shlex

    words = conformance_options.cli_command(args, ["simdbind", "bench"])
    if args.no_peers:
        words.append("--no-peers")
    if args.threads != "1":
        words += ["--threads", args.threads]
    for item in args.functions or []:
        words += ["--functions", item]
    if args.quick:
        words.append("--quick")
    if args.repeats:
        words += ["--repeats", str(args.repeats)]
    if args.min_time is not None:
        words += ["--min-time", str(args.min_time)]
    if args.timer != "wall":
        words += ["--timer", args.timer]
    if args.order != "auto":
        words += ["--order", args.order]
    for option in ("json", "md", "plot"):
        if getattr(args, option):
            words += [f"--{option}", getattr(args, option)]
    return " ".join(shlex.quote(w) for w in words)


def _bench(args: argparse.Namespace) -> int:
    """`simdbind bench`: measure, print a table, write JSON / Markdown / plots (see simdbind.bench.harness)."""
    import json

    from simdbind.bench import cases as bench_cases
    from simdbind.bench import harness
    from simdbind.conformance.implementations import LibraryImplementation, implementations
    from simdbind.conformance.model import DescriptorError

    errors: dict[str, str] = {}
    if args.case:
        try:
            listed = [bench_cases.from_descriptor(args.case)]
            _check_case_domain(args.case)
            bench_cases.work(listed[0].case)
        except (DescriptorError, AttributeError, ValueError) as error:
            return _error(str(error) if str(error).startswith("--case") else f"--case: {error}")
    else:
        patterns = [p.strip() for item in (args.functions or []) for p in item.split(",") if p.strip()]
        every, errors = bench_cases.discover(quick=args.quick)
        for pattern in patterns:
            if not any(item.matches([pattern]) for item in every):
                names = dict.fromkeys([item.family for item in every] + [item.case.function for item in every])
                return _error(f"--functions {pattern!r}: selects no case (a family, or part of a descriptor)"
                              f"{conformance_names.did_you_mean(pattern, names)}")
        listed = [item for item in every if item.matches(patterns)]
    for module, message in errors.items():
        print(f"warning: {module}: {message}", file=sys.stderr)
    if args.list:
        for item in listed:
            print(f"{item.family:14s} {item.descriptor}")
        return 0 if listed else 2
    if not listed:
        print("no benchmark cases selected", file=sys.stderr)
        return 2
    try:
        threads = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        return _error(f"--threads: must be comma-separated integers, got {args.threads!r}")
    if not threads or min(threads) < 1:
        return _error(f"--threads: every count must be >= 1, got {args.threads!r}")
    if args.no_peers and args.impl:
        return _error("--no-peers: measures no peer, but --impl names one")
    families = list(dict.fromkeys(item.family for item in listed))
    problem = _bench_output_problem(args, families)
    if problem:
        return _error(problem)
    try:
        harness.check_timer(listed, threads, harness.TIMERS[args.timer])
    except harness.TimerError as error:
        return _error(f"--{error} (--timer wall)")
    # The libraries are always measured (bundled, plus $SIMD_LIBRARY, by default): --impl adds peers beside them.
    libraries = [impl for impl in implementations(args.library, args.isa, args.mode)
                 if isinstance(impl, LibraryImplementation)]
    if args.no_peers:
        peers: list[object] = []
    elif args.impl:
        peers = implementations([], args.isa, args.mode, args.impl)
    else:
        peers = harness.installed_peers()
    repeats = args.repeats or (5 if args.quick else 11)
    min_time = args.min_time if args.min_time is not None else (0.005 if args.quick else 0.02)
    print(f"simdbind bench: {len(listed)} case(s) of {', '.join(families)} x threads {args.threads}; "
          f"libraries {', '.join(lib.name for lib in libraries)}; peers "
          f"{', '.join(getattr(p, 'name', str(p)) for p in peers) or 'none'}; timer {args.timer}, order {args.order}, "
          f"{repeats} samples of >= {min_time:g} s", flush=True)
    name_width = max(len(item.row) for item in listed)
    impl_width = max([len(lib.name) for lib in libraries] + [len(getattr(p, "name", "")) for p in peers] + [14])
    position = ""

    def starting(index: int, total: int, item: bench_cases.Listed, count: int) -> None:
        nonlocal position
        position = f"[{index:>{len(str(total))}}/{total}]"

    def progress(m: harness.Measurement) -> None:
        head = f"{position} {m.row:<{name_width}} {m.threads:>2} {m.implementation:<{impl_width}}"
        if m.ok and m.median is not None:
            vs = "  ".join(f"{harness.speedup_text(m, k)} vs {k}" for k in m.speedup)
            print(f"{head} {m.median * 1e6:12.3f} us {m.throughput:10.4g} {m.unit:8s} {vs}", flush=True)
        else:
            print(f"{head} {m.error}", flush=True)

    interrupted = False
    try:
        measurements = harness.run(listed, libraries, peers, threads, repeats, min_time,
                                   timer=harness.TIMERS[args.timer], progress=progress, order=args.order,
                                   seed=args.seed, family_peers=not args.impl, starting=starting)
    except harness.Interrupted as stop:
        measurements, interrupted = stop.measurements, True
        done = len(dict.fromkeys((m.case, m.family, m.threads) for m in measurements))
        print(f"interrupted: {done} of {len(listed) * len(threads)} case(s) measured; writing those", file=sys.stderr)
    measured = list(dict.fromkeys(m.family for m in measurements))
    report = harness.Report(
        meta={"command": _bench_command(args), "repeats": repeats, "min_time": min_time, "threads": threads,
              "timer": args.timer, "order": args.order, "seed": args.seed, "quick": args.quick,
              "placements": list(harness.PLACEMENTS),
              "environment": harness.environment(libraries, peers),
              "notes": {family: bench_cases.summary(family) for family in measured}},
        measurements=measurements, errors=errors)
    if args.provisional:
        report.meta["provisional"] = args.provisional
    if interrupted:
        report.meta["interrupted"] = True
    for m in measurements:
        if m.budget:
            b = m.budget
            print(f"overhead {m.case} {m.implementation}: {b['median_us']:.2f} us vs raw {b['baseline_us']:.2f} us, "
                  f"budget {b['limit_us']:.2f} us: {'met' if b['met'] else 'NOT met'}")
    for case_name, impl, _, ratios in harness.thread_scaling_rows(measurements):
        print(f"threads {case_name} {impl}: " + ", ".join(
            f"{n} vs {threads[0]}: {r:.2f}x" for n, r in zip(sorted(set(threads))[1:], ratios[1:]) if r))
    for line in harness.family_summary(measurements):
        print(line.replace("**", ""))
    status = 0
    outputs: tuple[tuple[str, str | None, Callable[[], str], str], ...] = (
        ("--json", args.json, lambda: json.dumps(report.to_dict(), indent=1), "json"),
        ("--md", args.md, lambda: harness.to_markdown(report), "markdown"))
    for flag, path, text, label in outputs:
        if path:
            try:
                conformance_options.write_text(path, text())
                print(f"{label}: {path}")
            except OSError as error:
                status = _error(f"{flag} {path}: cannot be written ({error.strerror or error})")
    if args.plot and measurements:
        from simdbind.bench import plot

        try:
            print(f"plots: {', '.join(plot.plot(report, args.plot))}")
        except (RuntimeError, OSError) as error:
            status = _error(f"--plot {args.plot}: {error.strerror or error}" if isinstance(error, OSError)
                            else str(error))
    return 128 + 2 if interrupted else status


def _bench_output_problem(args: argparse.Namespace, families: Sequence[str]) -> str | None:
    """Why an output of `simdbind bench` could not be written (one line naming the option), checked before the
    work: --json, --md, and --plot's STEM-<family>.png for every family selected (and matplotlib to draw them)."""
    import importlib.util

    paths = [("--json", args.json), ("--md", args.md)]
    if args.plot:
        if importlib.util.find_spec("matplotlib") is None:
            return "--plot: needs matplotlib (pip install matplotlib)"
        stem = args.plot[:-4] if args.plot.endswith(".png") else args.plot
        paths += [("--plot", f"{stem}-{family}.png") for family in families]
    for flag, path in paths:
        problem = conformance_options.check_writable(path, flag) if path else None
        if problem:
            return problem
    return None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`simdbind ... | head`): stop quietly, as a tool killed by SIGPIPE would, and point
        # stdout at /dev/null so that the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    except KeyboardInterrupt:
        print("simdbind: interrupted", file=sys.stderr)
        return 128 + 2


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line (the usage is in --help), as every other usage error is."""

    def error(self, message: str) -> NoReturn:
        _error(f"{self.prog}: {message} (see {self.prog} --help)")
        sys.exit(2)


def _main(argv: Sequence[str] | None) -> int:
    parser = _Parser(prog="simdbind", description=__doc__)
    parser.add_argument("--version", action="version", version=f"simdbind {simdbind.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="print the loaded library, its version, ISAs and capabilities")
    info.add_argument("--library", default=None, help="'bundled' or a path (default: $SIMD_LIBRARY, else bundled)")
    info.add_argument("--mode", choices=("api", "abi"), default=None)
    info.set_defaults(handler=_info)

    conf = sub.add_parser("conformance", help="check implementations against the references and write reports",
                          description="Run the conformance cases on the implementations under test, print a summary "
                                      "and write reports. 'simdbind conformance diff OLD.json NEW.json' compares "
                                      "two JSON reports.", epilog=conformance_options.REPORT_RULE)
    conformance_options.add_cli_arguments(conf)
    conf.set_defaults(handler=_conformance, conformance_command=None)
    conf_sub = conf.add_subparsers(dest="conformance_command",
                                   metavar="[diff OLD.json NEW.json | merge A.json B.json ... | explore | coverage | classes]")
    conf_diff = conf_sub.add_parser("diff", help="list regressions and fixes between two JSON reports")
    conf_diff.add_argument("old", metavar="OLD.json")
    conf_diff.add_argument("new", metavar="NEW.json")
    subcommands = cast("argparse._SubParsersAction[argparse.ArgumentParser]", conf_sub)
    conformance_merge.add_parser(subcommands)
    conformance_explore.add_parser(subcommands)
    conformance_coverage.add_parser(subcommands)
    conformance_values.add_parser(subcommands)

    bench = sub.add_parser(
        "bench", help="benchmark the libraries (bundled per ISA, external) against the peers",
        description="Time the family modules' cases (conformance descriptors, simdbind/conformance/families/<family>/cases.py) or one "
        "--case on every library at every ISA, the peers (implementations of the conformance API: every installed "
        "one by default) and, for memory-bound cases, memcpy of the same bytes.",
        epilog="Every output path is checked before the work. Ctrl-C writes what was measured (the cases finished) "
               "to --json/--md/--plot, marked interrupted, and exits 130. Exit codes: 0 done, 2 a usage error or an "
               "output that could not be written, 130 interrupted.")
    conformance_options.add_cli_arguments(bench, ("library", "isa", "mode", "impl", "case", "seed"))
    for action in bench._actions:  # the same options as the conformance run's; these two mean something else here
        if action.dest == "case":
            action.help = "bench only this case (a descriptor, as `simdbind conformance --case` takes), listed or not"
        elif action.dest == "impl":
            action.help = ("a peer to measure on every case: an installed name (torch, onnxruntime, openvino, ncnn) "
                           "or package.module:object; repeatable (default: every installed one that the case's "
                           "family compares with; the overhead family: torch)")
    bench.add_argument("--no-peers", action="store_true",
                       help="measure no peer, only the libraries (and memcpy where a case is memory-bound)")
    bench.add_argument("--threads", default="1", help="library thread counts, e.g. 1,2 (default: 1)")
    bench.add_argument("--functions", action="append", help="only cases whose family or descriptor contains "
                       "this (repeatable, comma-separated), e.g. convolution, overhead, 'unary op=exp'")
    bench.add_argument("--quick", action="store_true", help="fewer cases, samples and shorter samples")
    bench.add_argument("--repeats", type=conformance_options.positive_int, default=None,
                       help="samples per implementation (default 11, quick 5)")
    bench.add_argument("--min-time", type=conformance_options.positive_seconds, default=None,
                       help="seconds per sample (default 0.02, quick 0.005)")
    bench.add_argument("--order", choices=("auto", "interleaved", "blocked"), default="auto",
                       help="samples round-robin across implementations (interleaved: cancels drift) or each "
                            "implementation's in a row (blocked: other libraries' spinning thread pools stay out of "
                            "the timing); auto (default): interleaved at 1 thread, blocked at more")
    bench.add_argument("--timer", choices=("wall", "thread"), default="wall",
                       help="wall clock (default), or the calling thread's CPU time: steadier on a shared machine "
                       "but blind to other threads (not for --threads > 1 or the gil family)")
    bench.add_argument("--json", default=None, help="write all measurements and the environment as JSON")
    bench.add_argument("--md", default=None, help="write the Markdown tables")
    bench.add_argument("--plot", default=None, metavar="STEM",
                       help="write one PNG per family, STEM-<family>.png (needs matplotlib)")
    bench.add_argument("--provisional", default=None, help="a caveat printed at the top of the Markdown")
    bench.add_argument("--list", action="store_true", help="list the selected cases and exit")
    bench.set_defaults(handler=_bench)

    from simdbind.upstream.cli import add_parser as add_upstream_parser

    add_upstream_parser(sub)  # `simdbind upstream build|list|remove`

    args = parser.parse_args(argv)
    if getattr(args, "seed", 0) is None:
        from simdbind.conformance.runner import DEFAULT_SEED

        args.seed = DEFAULT_SEED
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except simdbind.SimdBindError as error:
        print(f"simdbind: {error}", file=sys.stderr)
        return 2
