"""Summaries and report files of a conformance run: text summary, JSON, JUnit XML, Markdown, one-file HTML matrix,
the progress display, and the diff of two JSON reports.

Strings in a run come from adapters and, through ``diff`` and ``merge``, from other machines' reports: every one
that reaches a terminal, a JUnit file or a Markdown page passes through `printable` (control characters, escape
sequences and bidi overrides shown as escapes), and every output is linear in the results it shows."""

from __future__ import annotations

import datetime
import html
import json
import math
import os
import platform
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, overload

from simdbind.conformance.aggregate import (BAD, Cell, fmt_rel, fmt_ulp, implementation_names, matrix, summary_rows,
                                           totals, totals_line)
from simdbind.conformance.printable import printable
from simdbind.conformance.runner import STATUSES, CaseResult, Run
from simdbind.conformance.schema import FORMAT, read_report, seed_problem
PACKAGES = ("simdbind", "numpy", "cffi", "hypothesis", "pytest", "ml_dtypes", "torch", "onnxruntime", "onnx")


# -- environment ---------------------------------------------------------------------------------------------------
def cpu_model() -> str:
    """The CPU's model name and, where the kernel tells, its family and model numbers: a VM may show only "AMD EPYC",
    and the numbers tell the microarchitecture (family 25 model 17: Zen 4; family 26: Zen 5), which speed depends
    on."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break  # the first processor's block is enough
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in fields and "model" in fields:
        return f"{name} (family {fields['cpu family']}, model {fields['model']})"
    return name


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    from importlib import metadata

    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def source_revision() -> str:
    """The git commit of the source tree (with "+dirty"), or "" outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True, timeout=5).stdout.strip()
        if commit:
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return ""


def environment(implementations: Sequence[Any]) -> dict[str, Any]:
    """Where the run happened: Python, platform, CPU, package versions, libraries and implementations."""
    libraries: dict[str, dict[str, Any]] = {}
    for impl in implementations:
        if getattr(impl, "library", None) is not None:
            libraries.setdefault(impl.library.path + ":" + impl.library.mode, impl.library.describe())
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "packages": package_versions(),
        "source": source_revision(),
        "libraries": list(libraries.values()),
        "implementations": [impl.describe() for impl in implementations],
    }


def make_meta(implementations: Sequence[Any], *, profile: str, seed: int, filter: Any = None, case: str | None = None,
              functions: Sequence[str] | None = None, workers: int = 1, command: str = "") -> dict[str, Any]:
    """The report's meta of a run; raises ValueError for a seed that a report cannot hold (the reader's rule)."""
    problem = seed_problem(seed)
    if problem:
        raise ValueError(f"seed {problem}")
    return {"format": FORMAT, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command, "profile": profile, "seed": seed, "filter": filter, "case": case,
            "functions": list(functions or []), "workers": workers, "environment": environment(implementations)}


# -- text summary --------------------------------------------------------------------------------------------------
def format_summary(run: Run, max_failures: int = 20) -> str:
    rows = [(printable(fn), printable(impl), cell) for fn, impl, cell in summary_rows(run)]
    width = max([len(r[0]) for r in rows] + [8])
    iwidth = max([len(r[1]) for r in rows] + [14])
    lines = [f"{'function':<{width}}  {'implementation':<{iwidth}}  passed  failed  known  skipped  worst ulp  worst rel"]
    for fn, impl, cell in rows:
        c = cell.counts
        mark = "   <-- FAIL" if cell.bad else ""
        worst = (fmt_ulp(cell.max_ulp), fmt_rel(cell.max_rel)) if cell.measured else ("-", "-")
        lines.append(f"{fn:<{width}}  {impl:<{iwidth}}  {c['pass'] + c['xpass']:>6}  {cell.bad:>6}  {c['known']:>5}  "
                     f"{c['skip']:>7}  {worst[0]:>9}  {worst[1]:>9}{mark}")
    failed = [r for r in run.results if r.status in BAD]
    for r in failed[:max_failures]:
        lines.append(printable(f"FAIL {r.implementation} {r.descriptor}: {_first_line(r.detail) or r.status}") +
                     f"\n     repro: {printable(r.repro)}")
    if len(failed) > max_failures:
        lines.append(f"... and {len(failed) - max_failures} more failures (see the reports)")
    known = Counter((r.deviation, r.implementation) for r in run.results if r.status == "known")
    for (ids, impl), n in sorted(known.items()):
        lines.append(printable(f"known deviation {ids} on {impl}") + f": {n} case{'s' * (n != 1)}")
    xpass = [r for r in run.results if r.status == "xpass"]
    for r in xpass[:10]:
        lines.append(printable(f"XPASS {r.implementation} {r.descriptor}: catalogued as {r.deviation} but passed"))
    if len(xpass) > 10:
        lines.append(f"... and {len(xpass) - 10} more catalogued cases that passed")
    skips = Counter((r.implementation, _first_line(r.detail)) for r in run.results if r.status == "skip")
    for (impl, reason), n in skips.most_common(8):
        lines.append(f"skipped {n} on " + printable(f"{impl}: {reason}"))
    if len(skips) > 8:
        lines.append(f"... and {len(skips) - 8} more skip reasons (see the reports)")
    lines.append(totals_line(run))
    return "\n".join(lines)


def _first_line(text: str) -> str:
    """A message's first line (str.splitlines also ends a line at \\x1c-\\x1e, \\x85 and U+2028)."""
    return text.splitlines()[0] if text else ""


def format_header(run_meta: dict[str, Any], cases: int, implementations: Sequence[Any]) -> str:
    env = run_meta.get("environment", {})
    profile = printable(str(run_meta.get("profile")))
    lines = [f"simdbind conformance: profile {profile}, seed {run_meta.get('seed')}, "
             f"{cases} case runs on {len(implementations)} implementation{'s' * (len(implementations) != 1)}, "
             f"{run_meta.get('workers', 1)} worker{'s' * (run_meta.get('workers', 1) != 1)}"]
    for impl in env.get("implementations", []):
        where = impl.get("path", "")
        line = f"  {impl['name']:<20} {impl.get('kind', '')} {impl.get('version', '')} {where}"
        lines.append(printable(line.rstrip()))
    lines.append(printable(f"  cpu: {env.get('cpu_model', '?')}"))
    return "\n".join(lines)


# -- JSON ----------------------------------------------------------------------------------------------------------
def _prepare(path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@overload
def _storable(value: dict[str, Any]) -> dict[str, Any]: ...
@overload
def _storable(value: object) -> Any: ...
def _storable(value: Any) -> Any:
    """`value` as the report format allows it (see `simdbind.conformance.schema`): strings that encode as UTF-8 (an
    exception message or a library path may carry a lone surrogate: it becomes "?"), and an error measure that
    came out NaN stored as unbounded."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, float) and math.isnan(value):
        return math.inf
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_storable(v) for v in value]
    return value


def to_json(run: Run) -> dict[str, Any]:
    t = totals(run)
    return _storable({"format": FORMAT, "meta": run.meta, "seconds": run.seconds,
                      "summary": {status: t[status] for status in STATUSES},
                      "results": [asdict(r) for r in run.results]})


def write_json(run: Run, path: str | Path) -> Path:
    path = _prepare(path)
    path.write_text(json.dumps(to_json(run), indent=None, separators=(",", ":"), default=str))
    return path


#: A report file, checked (see `simdbind.conformance.schema`): raises `ReportError` naming the file.
read_json = read_report


# -- JUnit XML -----------------------------------------------------------------------------------------------------
def write_junit(run: Run, path: str | Path) -> Path:
    """One <testsuite> per implementation; known deviations are <skipped> with the catalogue id (as pytest does
    for xfail); a catalogued case that passed is a pass with a property saying so. Every string passes through
    `printable` (bodies keep their line breaks and tabs): XML 1.0 has no way to write most control characters, and
    CI systems show these messages in terminals and pages."""
    import xml.etree.ElementTree as ET

    def text(value: Any) -> str:
        return printable(str(value))

    root = ET.Element("testsuites", name="simdbind conformance")
    by_impl: dict[str, list[CaseResult]] = defaultdict(list)
    for r in run.results:
        by_impl[r.implementation].append(r)
    for impl, results in by_impl.items():
        c = Counter(r.status for r in results)
        suite = ET.SubElement(root, "testsuite", name=text(f"conformance.{impl}"), tests=str(len(results)),
                              failures=str(c["fail"]), errors=str(c["error"]), skipped=str(c["skip"] + c["known"]),
                              time=f"{sum(r.seconds for r in results):.3f}",
                              timestamp=text(run.meta.get("created", "")))
        props = ET.SubElement(suite, "properties")
        for key in ("profile", "seed", "filter", "command"):
            ET.SubElement(props, "property", name=key, value=text(run.meta.get(key, "")))
        for r in results:
            case = ET.SubElement(suite, "testcase", classname=text(f"conformance.{impl}.{r.function}"),
                                 name=text(r.descriptor), time=f"{r.seconds:.6f}")
            message = text(_first_line(r.detail) or r.status)
            body = printable(f"{r.detail}\nrepro: {r.repro}" if r.repro else r.detail, keep="\n\t")
            if r.status == "fail":
                ET.SubElement(case, "failure", message=message, type="mismatch").text = body
            elif r.status == "error":
                ET.SubElement(case, "error", message=message, type="error").text = body
            elif r.status == "skip":
                ET.SubElement(case, "skipped", message=message)
            elif r.status == "known":
                ET.SubElement(case, "skipped", type="pytest.xfail",
                              message=text(f"known deviation {r.deviation}")).text = body
            elif r.status == "xpass":
                p = ET.SubElement(case, "properties")
                ET.SubElement(p, "property", name="xpass", value=text(r.deviation))
    path = _prepare(path)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


# -- Markdown ------------------------------------------------------------------------------------------------------
_MD_MARK = {"pass": "✅", "fail": "❌", "known": "⚠️", "xpass": "🔷", "skip": "⏭️", "none": ""}


def _md_cell(cell: Cell | None) -> str:
    if cell is None or not cell.counts:
        return ""
    if cell.status == "skip":
        return "⏭️ skipped"
    text = f"{_MD_MARK[cell.status]} {cell.counts['pass'] + cell.counts['xpass']}/{cell.ran}"
    if cell.counts["known"]:
        text += f", {cell.counts['known']} known"
    return text + (f" · {fmt_ulp(cell.max_ulp)} ulp" if cell.measured else "")


_MD_SPECIAL = str.maketrans({"|": "\\|", "[": "\\[", "]": "\\]", "`": "\\`", "\\": "\\\\"})


def _md_text(value: Any) -> str:
    """Text for a Markdown table cell: one printable line, no HTML (report fields may come from another machine's
    file), no link syntax, no cell break."""
    line = printable(" ".join(str(value).split()))
    return html.escape(line, quote=False).translate(_MD_SPECIAL)


def _md_code(value: Any) -> str:
    """A code span for a table cell: fenced with more backticks than the text holds, so nothing ends it early."""
    line = printable(" ".join(str(value).split())).replace("|", "\\|")
    if not line:
        return ""
    fence = "`" * (max(map(len, re.findall("`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def _md_failures(run: Run, limit: int) -> list[str]:
    failed = [r for r in run.results if r.status in BAD]
    if not failed:
        return []
    lines = [f"### Failures ({len(failed)})", "", "| implementation | case | detail | repro |", "|---|---|---|---|"]
    for r in failed[:limit]:
        detail = _first_line(r.detail) or r.status
        lines.append(f"| {_md_text(r.implementation)} | {_md_code(r.descriptor)} | {_md_text(detail[:200])} "
                     f"| {_md_code(r.repro)} |")
    if len(failed) > limit:
        lines.append(f"\n... and {len(failed) - limit} more (see the JSON report)")
    return lines + [""]


def _md_sources(run: Run) -> list[str]:
    """The reports a merged run was made from."""
    sources = run.meta.get("merged") or []
    if not sources:
        return []
    lines = ["| report | machine | profile | seed | created | source | passed | failed |",
             "|---|---|---|---|---|---|---|---|"]
    for s in sources:
        summary = s.get("summary", {})
        lines.append(" | ".join(["", _md_code(s["file"]), _md_text(s["machine"])] + [
            _md_text(s.get(k) if s.get(k) is not None else "") for k in ("profile", "seed", "created", "source")]
            + [str(summary.get("pass", 0)), str(summary.get("fail", 0) + summary.get("error", 0)), ""]).strip())
    return lines + [""]


def markdown(run: Run, max_failures: int = 50) -> str:
    """A Markdown page: the verdict, then what failed with repros, then the matrix and the known deviations."""
    env = run.meta.get("environment", {})
    t = totals(run)
    verdict = "❌ FAILED" if t["fail"] + t["error"] else "✅ passed"
    filter_ = run.meta.get("filter")
    lines = [f"## simdbind conformance: {verdict}", "",
             f"**{totals_line(run)}** · profile {_md_code(run.meta.get('profile'))} · seed "
             f"{_md_code(run.meta.get('seed'))}" + (f" · filter {_md_code(filter_)}" if filter_ else ""), ""]
    lines += _md_failures(run, max_failures)
    lines += _md_sources(run)
    lines += ["| implementation | kind | version | ISA | library |", "|---|---|---|---|---|"]
    for impl in env.get("implementations", []):
        lines.append(f"| {_md_text(impl['name'])} | {_md_text(impl.get('kind') or '')} | "
                     f"{_md_text(impl.get('version') or '')} | {_md_text(impl.get('isa') or '')} "
                     f"| {_md_code(impl.get('path') or '')} |")
    packages = ", ".join(f"{k} {v}" for k, v in env.get("packages", {}).items() if v != "not installed")
    where = [f"CPU: {env.get('cpu_model') or '?'}", f"Python {env['python']}" if env.get("python") else "", packages,
             f"source {env['source']}" if env.get("source") else ""]
    lines += ["", _md_text(" · ".join(part for part in where if part)), ""]
    lines += _md_matrix(run)
    lines += ["", "Cells: passed/run · worst error in ULP. ✅ pass · ❌ failures · ⚠️ known deviations (catalogue) · "
              "🔷 catalogued deviation did not show · ⏭️ skipped.", ""]
    known = Counter((r.deviation, r.implementation) for r in run.results if r.status == "known")
    xpass = Counter((r.deviation, r.implementation) for r in run.results if r.status == "xpass")
    if known or xpass:
        lines += ["### Known deviations", "", "| catalogue id | implementation | cases still deviating | cases that passed |",
                  "|---|---|---|---|"]
        for key in sorted(set(known) | set(xpass)):
            lines.append(f"| {_md_text(key[0])} | {_md_text(key[1])} | {known[key]} | {xpass[key]} |")
        lines.append("")
    return "\n".join(lines)


#: A Markdown table has a cell for every row and column: a matrix that many cells would not hold results in is
#: written as one line per (row, implementation) instead, so that the page stays in proportion to the results.
MATRIX_SPARSENESS = 4
MATRIX_ALWAYS = 4096


def dense_enough(rows: int, columns: int, cells: int) -> bool:
    """Whether a rows x columns grid of which `cells` hold results is worth drawing as a grid."""
    return rows * columns <= max(MATRIX_SPARSENESS * cells, MATRIX_ALWAYS)


def _md_matrix(run: Run) -> list[str]:
    rows, impls, cells = matrix(run)
    if not dense_enough(len(rows), len(impls), len(cells)):
        lines = ["| function | variant | dtype | layout | group | implementation | result |",
                 "|---|---|---|---|---|---|---|"]
        for key, cell in cells.items():  # (family, function, variant, dtype, layout, group, implementation)
            lines.append("| " + " | ".join(map(_md_text, key[1:])) + f" | {_md_cell(cell)} |")
        return lines
    lines = ["| function | variant | dtype | layout | group | " + " | ".join(map(_md_text, impls)) + " |",
             "|---|---|---|---|---|" + "---|" * len(impls)]
    for row in rows:
        lines.append("| " + " | ".join(map(_md_text, row[1:])) + " | "
                     + " | ".join(_md_cell(cells.get(row + (impl,))) for impl in impls) + " |")
    return lines


def write_markdown(run: Run, path: str | Path) -> Path:
    path = _prepare(path)
    path.write_text(markdown(run))
    return path


# -- HTML ----------------------------------------------------------------------------------------------------------
def write_html(run: Run, path: str | Path) -> Path:
    """The one-file HTML page of the run (see `simdbind.conformance.report_html`, imported here on use)."""
    from simdbind.conformance.report_html import html_report

    path = _prepare(path)
    path.write_text(html_report(run), encoding="utf-8")
    return path


# -- diff ----------------------------------------------------------------------------------------------------------
@dataclass
class Diff:
    regressions: list[tuple[CaseResult, CaseResult]] = field(default_factory=list)  # passed before, fails now
    fixes: list[tuple[CaseResult, CaseResult]] = field(default_factory=list)  # failed before, passes now
    new_failures: list[CaseResult] = field(default_factory=list)  # not run (or skipped) before, fails now
    changes: list[tuple[CaseResult, CaseResult]] = field(default_factory=list)  # other status changes
    worse: list[tuple[CaseResult, CaseResult]] = field(default_factory=list)  # still pass, much larger error
    added: int = 0
    removed: int = 0
    unchanged: int = 0
    #: What the two runs did not have in common (seed, profile, implementations, shard): (what, old, new).
    settings: list[tuple[str, str, str]] = field(default_factory=list)
    #: Why each run holds only part of its cases ("" when it holds them all): (old, new).
    partial: tuple[str, str] = ("", "")

    @property
    def failed(self) -> bool:
        return bool(self.regressions or self.new_failures)


def _listed(names: Iterable[str], limit: int = 6) -> str:
    names = list(names)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _settings(old: Run, new: Run) -> list[tuple[str, str, str]]:
    """The settings in which two runs differ, each as (what, old, new), in words."""
    differ = []
    for key in ("seed", "profile", "shard"):
        before, after = old.meta.get(key), new.meta.get(key)
        if before != after:
            none = "the whole run" if key == "shard" else "none"
            differ.append((key, none if before is None else str(before), none if after is None else str(after)))
    before, after = implementation_names(old), implementation_names(new)
    only_before, only_after = set(before) - set(after), set(after) - set(before)
    if only_before or only_after:
        differ.append(("implementations", _listed(n for n in before if n in only_before) or "none",
                       _listed(n for n in after if n in only_after) or "none"))
    return differ


def _partial(run: Run) -> str:
    """Why a run holds only part of its cases, or ""."""
    reasons = ["interrupted" if run.meta.get("interrupted") else "",
               f"shard {run.meta['shard']}" if run.meta.get("shard") else ""]
    return ", ".join(reason for reason in reasons if reason)


GOOD = ("pass", "xpass")


def diff(old: Run, new: Run) -> Diff:
    """Compare two runs case by case (key: implementation, function, descriptor)."""
    def key(r: CaseResult) -> tuple[str, str, str]:
        return (r.implementation, r.function, r.descriptor)

    before = {key(r): r for r in old.results}
    result = Diff()
    seen = set()
    for r in new.results:
        k = key(r)
        seen.add(k)
        o = before.get(k)
        if o is None:
            result.added += 1
            if r.status in BAD:
                result.new_failures.append(r)
            continue
        if o.status == r.status:
            result.unchanged += 1
            if r.status == "pass" and r.max_ulp > max(4.0, 4 * o.max_ulp):
                result.worse.append((o, r))
        elif o.status in GOOD and r.status in BAD + ("known",):
            result.regressions.append((o, r))
        elif o.status in BAD + ("known",) and r.status in GOOD:
            result.fixes.append((o, r))
        elif o.status == "skip" and r.status in BAD:
            result.new_failures.append(r)
        else:
            result.changes.append((o, r))
    result.removed = sum(1 for k in before if k not in seen)
    result.settings = _settings(old, new)
    result.partial = (_partial(old), _partial(new))
    return result


def format_diff(d: Diff, old_name: str = "OLD", new_name: str = "NEW", limit: int = 100) -> str:
    """The diff as text for a terminal: first the counts and how the runs differ besides their results, then each
    changed case (every string from the reports made printable)."""
    old_name, new_name = printable(old_name), printable(new_name)
    lines = [f"conformance diff {old_name} -> {new_name}: {len(d.regressions)} regressions, {len(d.fixes)} fixes, "
             f"{len(d.new_failures)} new failures, {len(d.changes)} other status changes, "
             f"{len(d.worse)} larger errors; {d.unchanged} unchanged, {d.added} added, {d.removed} removed"]
    if d.settings:
        lines.append(printable("the runs differ in " + "; ".join(
            f"{what} ({before} -> {after})" if what != "implementations" else
            f"implementations (only in {old_name}: {before}; only in {new_name}: {after})"
            for what, before, after in d.settings)) + ": results may change for that reason too")
    for name, why, counted in zip((old_name, new_name), d.partial, ("added", "removed")):
        if why:
            lines.append(f"{name} is a partial run ({why}): the cases it did not run count as {counted}")

    def block(title: str, pairs: list[tuple[CaseResult, CaseResult]]) -> None:
        if not pairs:
            return
        lines.append(f"{title} ({len(pairs)}):")
        for o, r in pairs[:limit]:
            detail = _first_line(r.detail)
            lines.append(printable(f"  {r.implementation}  {r.descriptor}: {o.status} -> {r.status}"
                                   + (f"  ({detail[:160]})" if detail and r.status not in GOOD else "")))
            if r.repro and r.status in BAD:
                lines.append(f"      repro: {printable(r.repro)}")
        if len(pairs) > limit:
            lines.append(f"  ... and {len(pairs) - limit} more")

    block("REGRESSIONS", d.regressions)
    block("NEW FAILURES", [(CaseResult(r.implementation, r.function, r.descriptor, r.group, r.dtype, r.layout,
                                       "absent"), r) for r in d.new_failures])
    block("FIXES", d.fixes)
    block("OTHER CHANGES", d.changes)
    if d.worse:
        lines.append(f"LARGER ERRORS, still within tolerance ({len(d.worse)}):")
        for o, r in d.worse[:limit]:
            lines.append(printable(f"  {r.implementation}  {r.descriptor}") +
                         f": {fmt_ulp(o.max_ulp)} -> {fmt_ulp(r.max_ulp)} ulp")
    return "\n".join(lines)

