"""``simdbind conformance merge``: JSON reports of several machines or builds as one matrix.

Each report's implementations become columns labelled "machine / implementation", grouped under their machine
(its CPU model), the way a CI matrix of runners publishes one conformance page; when two reports from one
machine name the same implementation (two builds), their columns add the report's file name. Report files are untrusted input, read through
`simdbind.conformance.schema`: a bad one stops the merge with a one-line error naming it (exit 2).
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # the command line registers this module's parser; the suite loads only when it runs
    from simdbind.conformance.runner import Run


def _implementation_names(run: Run) -> list[str]:
    names = [impl["name"] for impl in run.meta.get("environment", {}).get("implementations", [])]
    return list(dict.fromkeys(names + [r.implementation for r in run.results]))


def machines(runs: Sequence[Run]) -> list[str]:
    """Each report's machine: its CPU model."""
    return [run.meta.get("environment", {}).get("cpu_model") or "unknown CPU" for run in runs]


def builds(files: Sequence[str], runs: Sequence[Run]) -> list[str]:
    """What tells each report's columns apart from another report's of the same machine and implementation (two
    builds on one machine): its file name, or "" when nothing needs telling apart."""
    names = [Path(file).name for file in files]
    names = names if len(set(names)) == len(names) else list(files)
    seen: Counter[tuple[str, str]] = Counter()
    for machine, run in zip(machines(runs), runs):
        seen.update((machine, name) for name in _implementation_names(run))
    return [name if any(seen[(machine, impl)] > 1 for impl in _implementation_names(run)) else ""
            for name, machine, run in zip(names, machines(runs), runs)]


def _common(values: Sequence[Any]) -> Any:
    distinct = list(dict.fromkeys(v for v in values if v is not None))
    return distinct[0] if len(distinct) == 1 else None


def merge(files: Sequence[str], runs: Sequence[Run], command: str = "") -> Run:
    """One run whose columns are every report's implementations, labelled by machine."""
    from simdbind.conformance.runner import STATUSES, Run
    from simdbind.conformance.schema import FORMAT

    cpus, labels = machines(runs), builds(files, runs)
    order = list(dict.fromkeys(cpus))
    inputs = sorted(range(len(runs)), key=lambda i: (order.index(cpus[i]), i))  # a machine's columns side by side
    results, implementations, sources = [], [], []
    for i in inputs:
        run, machine = runs[i], cpus[i]
        env = run.meta.get("environment", {})
        described = {impl["name"]: impl for impl in env.get("implementations", [])}
        shown = {name: name + (f" ({labels[i]})" if labels[i] else "") for name in _implementation_names(run)}
        for name, text in shown.items():
            implementations.append({**described.get(name, {}), "name": f"{machine} / {text}", "implementation": text,
                                    "machine": machine})
        results += [replace(r, implementation=f"{machine} / {shown[r.implementation]}") for r in run.results]
        sources.append({"file": files[i], "machine": machine, "cpu_model": env.get("cpu_model") or "",
                        "profile": run.meta.get("profile"), "seed": run.meta.get("seed"),
                        "created": run.meta.get("created"), "command": run.meta.get("command"),
                        "source": env.get("source"),
                        "summary": {s: sum(r.status == s for r in run.results) for s in STATUSES}})
    profiles = list(dict.fromkeys(str(run.meta["profile"]) for run in runs if run.meta.get("profile")))
    meta = {"format": FORMAT, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command, "profile": ", ".join(profiles) or None,
            "seed": _common([run.meta.get("seed") for run in runs]),
            "environment": {"cpu_model": "; ".join(order), "implementations": implementations},
            "merged": sources}
    return Run(results, sum(run.seconds for run in runs), meta)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "merge", help="combine JSON reports of several machines or builds into one matrix",
        description="Combine JSON reports (e.g. one per CI runner) into one matrix whose columns are each machine's "
                    "implementations, and write it as HTML, Markdown or JSON.")
    parser.add_argument("reports", nargs="+", metavar="REPORT.json")
    parser.add_argument("--report-html", default=None, metavar="FILE", help="write the merged HTML matrix")
    parser.add_argument("--report-md", default=None, metavar="FILE", help="write the merged Markdown page")
    parser.add_argument("--report-json", default=None, metavar="FILE", help="write the merged JSON report")
    parser.set_defaults(handler=main)
    return parser


def main(args: argparse.Namespace) -> int:
    from simdbind.conformance import report
    from simdbind.conformance.schema import ReportError, read_report

    if len(set(args.reports)) != len(args.reports):
        twice = next(f for f in args.reports if args.reports.count(f) > 1)
        print(f"simdbind: conformance merge: {twice}: given twice", file=sys.stderr)
        return 2
    try:
        runs = [read_report(path) for path in args.reports]
    except ReportError as error:
        print(f"simdbind: conformance merge: {error}", file=sys.stderr)
        return 2
    command = shlex.join(["simdbind", "conformance", "merge", *args.reports])
    merged = merge(args.reports, runs, command)
    writers = ((args.report_json, report.write_json), (args.report_md, report.write_markdown),
               (args.report_html, report.write_html))
    try:
        written = [str(write(merged, path)) for path, write in writers if path]
    except OSError as error:
        print(f"simdbind: conformance merge: {error.filename}: cannot write it: {error.strerror}", file=sys.stderr)
        return 2
    columns = merged.meta["environment"]["implementations"]
    machines_count = len({c["machine"] for c in columns})
    print(f"merged {len(runs)} report{'s' * (len(runs) != 1)}: {len(columns)} column{'s' * (len(columns) != 1)} on "
          f"{machines_count} machine{'s' * (machines_count != 1)}, {report.totals_line(merged)}")
    if written:
        print(f"reports: {', '.join(written)}")
    return 0
