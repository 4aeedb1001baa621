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
    from conformance import report, runner
    from conformance.implementations import implementations

    impls = implementations(args.library, args.isa, args.mode)
    pattern = args.case or args.k
    tty = sys.stdout.isatty()

    def progress(done: int, total: int, result: runner.CaseResult) -> None:
        if tty:
            print(f"\r{done}/{total} cases", end="" if done < total else "\n", flush=True)

    outcome = runner.run(impls, args.function or None, args.profile, args.seed, pattern, progress)
    outcome.meta = {"profile": args.profile, "seed": args.seed, "filter": pattern,
                    "environment": report.environment(impls)}
    print(report.format_summary(outcome))
    if args.report_json:
        print(f"report: {report.write_json(outcome, args.report_json)}")
    if not outcome.results:
        print("no cases selected", file=sys.stderr)
        return 2
    return 1 if outcome.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="simdbind", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="print the loaded library, its version, ISAs and capabilities")
    info.add_argument("--library", default=None, help="'bundled' or a path (default: $SIMD_LIBRARY, else bundled)")
    info.add_argument("--mode", choices=("api", "abi"), default=None)
    info.set_defaults(handler=_info)

    conf = sub.add_parser("conformance", help="check an implementation against the references")
    conf.add_argument("--library", action="append", default=None,
                      help="'bundled' or a path; repeat for several (default: bundled, plus $SIMD_LIBRARY)")
    conf.add_argument("--isa", default="all", help="ISA of the bundled library, or 'all' (default)")
    conf.add_argument("--mode", choices=("api", "abi"), default=None, help="load the bundled library in this mode")
    conf.add_argument("--profile", choices=("smoke", "ci", "full"), default="smoke")
    conf.add_argument("--function", action="append", help="only this function (repeatable)")
    conf.add_argument("-k", default=None, help="only cases whose 'function dtype layout descriptor' matches")
    conf.add_argument("--case", default=None, help="only the case with this descriptor (a repro)")
    conf.add_argument("--seed", type=int, default=None)
    conf.add_argument("--report-json", default="reports/conformance.json",
                      help="where to write the JSON report (default: %(default)s; '' for none)")
    conf.set_defaults(handler=_conformance)

    args = parser.parse_args(argv)
    if getattr(args, "seed", 0) is None:
        from conformance.runner import DEFAULT_SEED

        args.seed = DEFAULT_SEED
    try:
        return args.handler(args)
    except simdbind.SimdBindError as error:
        print(f"simdbind: {error}", file=sys.stderr)
        return 2
