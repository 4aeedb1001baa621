"""The ``simdbind`` command: ``info`` and ``conformance``."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import simdbind


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


def _conformance(args: argparse.Namespace) -> int:
    import shlex

    from conformance import report, runner
    from conformance.implementations import implementations

    if args.conformance_command == "diff":
        try:
            old, new = report.read_json(args.old), report.read_json(args.new)
        except (OSError, ValueError) as error:
            print(f"simdbind: conformance diff: {error}", file=sys.stderr)
            return 2
        difference = report.diff(old, new)
        print(report.format_diff(difference, args.old, args.new))
        return 1 if difference.failed else 0

    try:
        workers = runner.worker_count(args.workers)
        impls = implementations(args.library, args.isa, args.mode, args.impl)
        steps = runner.plan(impls, args.function or None, args.profile, args.k, args.case)
    except (KeyError, ValueError) as error:
        if isinstance(error, simdbind.SimdBindError):
            raise
        print(f"simdbind: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2
    if args.list:
        for index, function, case in steps:
            print(f"{impls[index].name}  {case.descriptor}")
        return 0 if steps else 2
    command = ["simdbind", "conformance", "--profile", args.profile, "--seed", str(args.seed)]
    for flag, values in (("--library", args.library), ("--impl", args.impl), ("--function", args.function),
                         ("-k", args.k)):
        for value in values or ():
            command += [flag, value]
    command += (["--isa", args.isa] if args.isa != "all" else []) + (["--mode", args.mode] if args.mode else [])
    command += ["--case", args.case] if args.case else []
    meta = report.make_meta(impls, profile=args.profile, seed=args.seed, filter=" ".join(args.k or []) or None,
                            case=args.case, functions=args.function, workers=workers, command=shlex.join(command))
    print(report.format_header(meta, len(steps), impls), flush=True)
    if not steps:
        print("no cases selected", file=sys.stderr)
        return 2
    progress = None if args.no_progress else report.Progress(sys.stderr)
    try:
        outcome = runner.run(impls, args.function or None, args.profile, args.seed, args.k, progress, workers,
                             args.case)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="simdbind", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="print the loaded library, its version, ISAs and capabilities")
    info.add_argument("--library", default=None, help="'bundled' or a path (default: $SIMD_LIBRARY, else bundled)")
    info.add_argument("--mode", choices=("api", "abi"), default=None)
    info.set_defaults(handler=_info)

    conf = sub.add_parser("conformance", help="check implementations against the references and write reports",
                          description="Run the conformance cases on the implementations under test, print a summary "
                                      "and write reports. 'simdbind conformance diff OLD.json NEW.json' compares "
                                      "two JSON reports.")
    conf.add_argument("--library", action="append", default=None,
                      help="'bundled' or a path; repeat for several (default: bundled, plus $SIMD_LIBRARY, "
                           "unless only --impl is given)")
    conf.add_argument("--isa", default="all", help="ISA of the bundled library, or 'all' (default)")
    conf.add_argument("--mode", choices=("api", "abi"), default=None, help="load the bundled library in this mode")
    conf.add_argument("--impl", action="append", choices=("torch", "onnxruntime"), default=None,
                      help="also run the cases on this adapter (repeatable); skipped with a reason if not installed")
    conf.add_argument("--profile", choices=("smoke", "ci", "full"), default="smoke")
    conf.add_argument("--function", action="append", help="only this function (repeatable)")
    conf.add_argument("-k", action="append", default=None, metavar="PATTERN",
                      help="only cases whose 'function dtype layout descriptor' matches the glob *PATTERN* "
                           "(repeatable: all must match)")
    conf.add_argument("--case", default=None, metavar="DESCRIPTOR",
                      help="only the case with exactly this descriptor, whatever the profile (a repro)")
    conf.add_argument("--seed", type=int, default=None, help="base seed of the case inputs")
    conf.add_argument("-n", "--workers", default="1", metavar="N",
                      help="worker processes, or 'auto' (default 1: in this process); results do not depend on it")
    conf.add_argument("--list", action="store_true", help="list the selected cases and exit")
    conf.add_argument("--no-progress", action="store_true", help="no progress display")
    conf.add_argument("--report-json", default="reports/conformance.json", metavar="FILE",
                      help="JSON report (default: %(default)s; '' for none)")
    conf.add_argument("--junit-xml", default="reports/conformance.xml", metavar="FILE",
                      help="JUnit XML report (default: %(default)s; '' for none)")
    conf.add_argument("--report-md", default="reports/conformance.md", metavar="FILE",
                      help="Markdown summary for a CI page (default: %(default)s; '' for none)")
    conf.add_argument("--report-html", default="reports/conformance.html", metavar="FILE",
                      help="self-contained HTML matrix (default: %(default)s; '' for none)")
    conf.set_defaults(handler=_conformance, conformance_command=None)
    conf_sub = conf.add_subparsers(dest="conformance_command", metavar="[diff OLD.json NEW.json]")
    conf_diff = conf_sub.add_parser("diff", help="list regressions and fixes between two JSON reports")
    conf_diff.add_argument("old", metavar="OLD.json")
    conf_diff.add_argument("new", metavar="NEW.json")

    args = parser.parse_args(argv)
    if getattr(args, "seed", 0) is None:
        from conformance.runner import DEFAULT_SEED

        args.seed = DEFAULT_SEED
    try:
        return args.handler(args)
    except simdbind.SimdBindError as error:
        print(f"simdbind: {error}", file=sys.stderr)
        return 2
