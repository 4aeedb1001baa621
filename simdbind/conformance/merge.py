"""``simdbind conformance merge``: JSON reports of several machines or builds as one matrix.

Each report's implementations become columns labelled "machine / implementation", grouped under their machine
(its CPU model), the way a CI matrix of runners publishes one conformance page; when two reports from one
machine name the same implementation (two builds), their columns add the report's file name, and no two reports'
columns ever share a label (see `column_texts`). The shards of one run (``--shard K/N``) share their run's columns,
so merging all of them gives that run. Report files are untrusted input, read through
`simdbind.conformance.schema`: a bad one stops the merge with a one-line error naming it (exit 2).
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # the command line registers this module's parser; the suite loads only when it runs
    from simdbind.conformance.runner import Run


def machines(runs: Sequence[Run]) -> list[str]:
    """Each report's machine: its CPU model."""
    return [run.meta.get("environment", {}).get("cpu_model") or "unknown CPU" for run in runs]


def runs_of(runs: Sequence[Run], cpus: Sequence[str]) -> list[int]:
    """For each report, the first report of the run it is a part of: itself, or, for a shard, the first of the
    shards of its run (one machine, source revision, profile, seed, shard count and implementations, each part
    once), whose columns it shares."""
    parts: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i, run in enumerate(runs):
        if run.meta.get("shard"):
            env = run.meta.get("environment", {})
            described = tuple((impl["name"], impl.get("version")) for impl in env.get("implementations", []))
            parts[(cpus[i], env.get("source"), run.meta.get("profile"), run.meta.get("seed"),
                   run.meta["shard"].split("/")[1], described)].append(i)
    first = list(range(len(runs)))
    for members in parts.values():
        if len({runs[i].meta["shard"] for i in members}) == len(members):  # else: two runs' shards, not one's
            for i in members:
                first[i] = members[0]
    return first


def column_texts(files: Sequence[str], runs: Sequence[Run], cpus: Sequence[str], first: Sequence[int]
                 ) -> dict[tuple[int, str], str]:
    """The column of each (run, implementation), as the text after "machine / ": the implementation's name; with
    the report's file name when another run of the same machine names the same implementation (two builds); and
    with the report's position on the command line, [k], when the whole label would still be another column's
    (names that hold " / ", or file names that do). No two columns get one label."""
    from simdbind.conformance.aggregate import implementation_names

    names = [Path(file).name for file in files]
    names = names if len(set(names)) == len(names) else list(files)
    keys = dict.fromkeys((first[i], impl) for i, run in enumerate(runs) for impl in implementation_names(run))
    claims = Counter((cpus[index], impl) for index, impl in keys)
    texts: dict[tuple[int, str], str] = {}
    for i, run in enumerate(runs):
        shared = any(claims[(cpus[i], impl)] > 1 for impl in implementation_names(run))
        for impl in implementation_names(run):
            texts.setdefault((first[i], impl), impl + (f" ({names[first[i]]})" if shared else ""))
    wanted = Counter(f"{cpus[index]} / {text}" for (index, _), text in texts.items())
    taken = set(wanted)
    for (index, impl), text in texts.items():
        if wanted[f"{cpus[index]} / {text}"] > 1:
            while f"{cpus[index]} / {text}" in taken:
                text += f" [{index + 1}]"
            texts[(index, impl)] = text
            taken.add(f"{cpus[index]} / {text}")
    return texts


def _common(values: Sequence[Any]) -> Any:
    distinct = list(dict.fromkeys(v for v in values if v is not None))
    return distinct[0] if len(distinct) == 1 else None


def merge(files: Sequence[str], runs: Sequence[Run], command: str = "") -> Run:
    """One run whose columns are every report's implementations, labelled by machine; the shards of one run
    share their columns (merged, they are that run)."""
    from simdbind.conformance.aggregate import implementation_names
    from simdbind.conformance.runner import STATUSES, Run
    from simdbind.conformance.schema import FORMAT

    cpus = machines(runs)
    first = runs_of(runs, cpus)
    texts = column_texts(files, runs, cpus, first)
    order = list(dict.fromkeys(cpus))
    inputs = sorted(range(len(runs)), key=lambda i: (order.index(cpus[i]), i))  # a machine's columns side by side
    results, implementations, sources, columns = [], [], [], set()
    for i in inputs:
        run, machine = runs[i], cpus[i]
        env = run.meta.get("environment", {})
        described = {impl["name"]: impl for impl in env.get("implementations", [])}
        label = {name: f"{machine} / {texts[(first[i], name)]}" for name in implementation_names(run)}
        for name in implementation_names(run):
            if label[name] not in columns:  # a shard's columns are its run's
                columns.add(label[name])
                implementations.append({**described.get(name, {}), "name": label[name],
                                        "implementation": texts[(first[i], name)], "machine": machine})
        results += [replace(r, implementation=label[r.implementation]) for r in run.results]
        source = {"file": files[i], "machine": machine, "cpu_model": env.get("cpu_model") or "",
                  "profile": run.meta.get("profile"), "seed": run.meta.get("seed"),
                  "created": run.meta.get("created"), "command": run.meta.get("command"),
                  "source": env.get("source"),
                  "summary": {s: sum(r.status == s for r in run.results) for s in STATUSES}}
        sources.append(source | {key: run.meta[key] for key in ("interrupted", "shard") if key in run.meta})
    profiles = list(dict.fromkeys(str(run.meta["profile"]) for run in runs if run.meta.get("profile")))
    meta = {"format": FORMAT, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command, "profile": ", ".join(profiles) or None,
            "seed": _common([run.meta.get("seed") for run in runs]),
            "environment": {"cpu_model": "; ".join(order), "implementations": implementations},
            "merged": sources}
    if any(run.meta.get("interrupted") for run in runs):
        meta["interrupted"] = True
    return Run(results, sum(run.seconds for run in runs), meta)


def partial_notes(files: Sequence[str], runs: Sequence[Run]) -> list[str]:
    """What the merge lacks: each interrupted report, and each run merged from fewer shards than it has."""
    from simdbind.conformance.printable import printable

    first = runs_of(runs, machines(runs))
    notes = [f"{printable(file)}: partial, interrupted" for file, run in zip(files, runs)
             if run.meta.get("interrupted")]
    for run in dict.fromkeys(first[i] for i, r in enumerate(runs) if r.meta.get("shard")):
        parts = [i for i in range(len(runs)) if first[i] == run]
        count = int(runs[run].meta["shard"].split("/")[1])
        if len(parts) < count:
            notes.append(f"{printable(files[run])}: partial, {len(parts)} of the {count} shards of its run")
    return notes


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
    from simdbind.conformance import aggregate, report
    from simdbind.conformance.printable import printable
    from simdbind.conformance.schema import MAX_RESULTS, ReportError, read_report

    if len(set(args.reports)) != len(args.reports):
        twice = next(f for f in args.reports if args.reports.count(f) > 1)
        print(f"simdbind: conformance merge: {printable(twice)}: given twice", file=sys.stderr)
        return 2
    try:
        runs = [read_report(path) for path in args.reports]
    except ReportError as error:
        print(f"simdbind: conformance merge: {error}", file=sys.stderr)
        return 2
    total = sum(len(run.results) for run in runs)
    if total > MAX_RESULTS:  # the merged report must read back
        print(f"simdbind: conformance merge: the reports hold {total} results together, more than one report can "
              f"({MAX_RESULTS})", file=sys.stderr)
        return 2
    command = shlex.join(["simdbind", "conformance", "merge", *args.reports])
    merged = merge(args.reports, runs, command)
    writers = ((args.report_json, report.write_json), (args.report_md, report.write_markdown),
               (args.report_html, report.write_html))
    try:
        written = [str(write(merged, path)) for path, write in writers if path]
    except OSError as error:
        print(printable(f"simdbind: conformance merge: {error.filename}: cannot write it: {error.strerror}"),
              file=sys.stderr)
        return 2
    columns = merged.meta["environment"]["implementations"]
    machines_count = len({c["machine"] for c in columns})
    print(f"merged {len(runs)} report{'s' * (len(runs) != 1)}: {len(columns)} column{'s' * (len(columns) != 1)} on "
          f"{machines_count} machine{'s' * (machines_count != 1)}, {aggregate.totals_line(merged)}")
    for note in partial_notes(args.reports, runs):
        print(note)
    if written:
        print(printable(f"reports: {', '.join(written)}"))
    return 0
