"""The ``simdbind`` command: ``info`` and ``conformance``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

import simdbind
from simdbind.conformance import coverage as conformance_coverage
from simdbind.conformance import explore as conformance_explore
from simdbind.conformance import merge as conformance_merge
from simdbind.conformance import options as conformance_options


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


def _error(message: str) -> int:
    """Print a one-line error (control characters shown escaped: messages may quote untrusted files) and return 2."""
    line = " ".join(str(message).split("\n")[0:1]) or "error"
    print("simdbind: " + "".join(c if c.isprintable() else repr(c)[1:-1] for c in line[:2000]), file=sys.stderr)
    return 2


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
    problems = options.report_problems(lambda o: getattr(args, o.dest, None) if o.cli else None,
                                       lambda o: o.cli_flags[-1])
    if problems:
        return _error(problems[0])
    try:
        workers = runner.worker_count(args.workers, warn=lambda message: print(f"simdbind: {message}",
                                                                              file=sys.stderr))
        chosen = runner.functions(args.function or None)
        if args.case is not None:
            runner.check_descriptor(args.case, chosen)
        impls = implementations(args.library, args.isa, args.mode, args.impl)
        steps = runner.plan(impls, args.function or None, args.profile, args.case_filter, args.case)
    except (KeyError, ValueError) as error:
        return _error(error.args[0] if isinstance(error, KeyError) and error.args else str(error))
    if args.list:
        for index, function, case in steps:
            print(f"{impls[index].name}  {case.descriptor}")
        return 0 if steps else 2
    command = options.cli_command(args, ["simdbind", "conformance", "--profile", args.profile, "--seed",
                                         str(args.seed)], exclude=("profile", "seed"))
    meta = report.make_meta(impls, profile=args.profile, seed=args.seed,
                            filter=" ".join(args.case_filter or []) or None, case=args.case, functions=args.function,
                            workers=workers, command=shlex.join(command))
    print(report.format_header(meta, len(steps), impls), flush=True)
    if not steps:
        print("no cases selected", file=sys.stderr)
        return 2
    progress = None if args.no_progress else report.Progress(sys.stderr)
    try:
        outcome = runner.run(impls, args.function or None, args.profile, args.seed, args.case_filter, progress,
                             workers, args.case)
    finally:
        if progress:
            progress.close()
    outcome.meta = meta
    print(report.format_summary(outcome))
    writers = ((args.report_json, report.write_json), (args.junit_xml, report.write_junit),
               (args.report_md, report.write_markdown), (args.report_html, report.write_html))
    written = [str(write(outcome, path)) for path, write in writers if path]
    if written:
        print(f"reports: {', '.join(written)}")
    return 1 if outcome.failed else 0


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
            bench_cases.work(listed[0].case)
        except (DescriptorError, AttributeError, ValueError) as error:
            return _error(f"--case: {error}")
    else:
        patterns = [p.strip() for item in (args.functions or []) for p in item.split(",") if p.strip()]
        listed, errors = bench_cases.discover(patterns, quick=args.quick)
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
    if args.timer == "thread" and (max(threads) > 1 or any(item.family == "gil" for item in listed)):
        print("warning: --timer thread does not see work done by other threads: multithreaded and gil rows "
              "will look faster than they are", file=sys.stderr)
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

    def progress(m: harness.Measurement) -> None:
        if m.ok and m.median is not None:
            vs = "  ".join(f"{harness.speedup_text(m, k)} vs {k}" for k in m.speedup)
            print(f"{m.row:60.60s} {m.threads:>2} {m.implementation:28.28s} {m.median * 1e6:12.3f} us "
                  f"{m.throughput:10.4g} {m.unit:8s} {vs}", flush=True)
        else:
            print(f"{m.row:60.60s} {m.threads:>2} {m.implementation:28.28s} {m.error}", flush=True)

    measurements = harness.run(listed, libraries, peers, threads, repeats, min_time,
                               timer=harness.TIMERS[args.timer], progress=progress, order=args.order, seed=args.seed,
                               family_peers=not args.impl)
    families = dict.fromkeys(item.family for item in listed)
    report = harness.Report(
        meta={"command": _bench_command(args), "repeats": repeats, "min_time": min_time, "threads": threads,
              "timer": args.timer, "order": args.order, "seed": args.seed, "quick": args.quick,
              "placements": list(harness.PLACEMENTS),
              "environment": harness.environment(libraries, peers),
              "notes": {family: bench_cases.summary(family) for family in families}},
        measurements=measurements, errors=errors)
    if args.provisional:
        report.meta["provisional"] = args.provisional
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
    for path in (args.json, args.md):
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report.to_dict(), f, indent=1)
        print(f"json: {args.json}")
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(harness.to_markdown(report))
        print(f"markdown: {args.md}")
    if args.plot:
        from simdbind.bench import plot

        try:
            print(f"plots: {', '.join(plot.plot(report, args.plot))}")
        except RuntimeError as error:
            return _error(str(error))
    return 0


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


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="simdbind", description=__doc__)
    parser.add_argument("--version", action="version", version=f"simdbind {simdbind.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="print the loaded library, its version, ISAs and capabilities")
    info.add_argument("--library", default=None, help="'bundled' or a path (default: $SIMD_LIBRARY, else bundled)")
    info.add_argument("--mode", choices=("api", "abi"), default=None)
    info.set_defaults(handler=_info)

    conf = sub.add_parser("conformance", help="check implementations against the references and write reports",
                          description="Run the conformance cases on the implementations under test, print a summary "
                                      "and write reports. 'simdbind conformance diff OLD.json NEW.json' compares "
                                      "two JSON reports.")
    conformance_options.add_cli_arguments(conf)
    conf.set_defaults(handler=_conformance, conformance_command=None)
    conf_sub = conf.add_subparsers(dest="conformance_command",
                                   metavar="[diff OLD.json NEW.json | merge A.json B.json ... | explore | coverage]")
    conf_diff = conf_sub.add_parser("diff", help="list regressions and fixes between two JSON reports")
    conf_diff.add_argument("old", metavar="OLD.json")
    conf_diff.add_argument("new", metavar="NEW.json")
    conformance_merge.add_parser(conf_sub)
    conformance_explore.add_parser(conf_sub)
    conformance_coverage.add_parser(conf_sub)

    bench = sub.add_parser(
        "bench", help="benchmark the libraries (bundled per ISA, external) against the peers",
        description="Time the family modules' cases (conformance descriptors, simdbind/bench/<family>.py) or one "
        "--case on every library at every ISA, the peers (implementations of the conformance API: every installed "
        "one by default) and, for memory-bound cases, memcpy of the same bytes.")
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
