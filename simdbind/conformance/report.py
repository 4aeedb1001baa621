"""Summaries and report files of a conformance run: text summary, JSON, JUnit XML, Markdown, one-file HTML matrix,
the progress display, and the diff of two JSON reports."""

from __future__ import annotations

import datetime
import html
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Sequence

from simdbind.conformance.runner import STATUSES, CaseResult, Run

FORMAT = "simdbind-conformance/1"
PACKAGES = ("simdbind", "numpy", "cffi", "hypothesis", "pytest", "ml_dtypes", "torch", "onnxruntime", "onnx")
BAD = ("fail", "error")


# -- environment ---------------------------------------------------------------------------------------------------
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


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
    libraries = {}
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
    return {"format": FORMAT, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": command, "profile": profile, "seed": seed, "filter": filter, "case": case,
            "functions": list(functions or []), "workers": workers, "environment": environment(implementations)}


# -- aggregation ---------------------------------------------------------------------------------------------------
@dataclass
class Cell:
    """The results of one group (e.g. function x dtype x layout x implementation)."""

    counts: Counter = field(default_factory=Counter)
    max_ulp: float = 0.0
    max_rel: float = 0.0
    max_abs: float = 0.0
    tolerances: set = field(default_factory=set)
    results: list = field(default_factory=list)  # the non-pass results

    def add(self, r: CaseResult) -> None:
        self.counts[r.status] += 1
        if r.status not in ("skip", "error"):
            self.max_ulp = max(self.max_ulp, r.max_ulp)
            self.max_rel = max(self.max_rel, r.max_rel)
            self.max_abs = max(self.max_abs, r.max_abs)
        if r.tolerance:
            self.tolerances.add(r.tolerance)
        if r.status != "pass":
            self.results.append(r)

    @property
    def status(self) -> str:
        """The cell's colour: fail > known > xpass > pass > skip (empty: "none")."""
        for status in ("fail", "error", "known", "xpass", "pass", "skip"):
            if self.counts[status]:
                return "fail" if status == "error" else status
        return "none"

    @property
    def ran(self) -> int:
        return sum(n for s, n in self.counts.items() if s != "skip")

    @property
    def bad(self) -> int:
        return self.counts["fail"] + self.counts["error"]


def _as_result(r: CaseResult | dict[str, Any]) -> CaseResult:
    if isinstance(r, CaseResult):
        return r
    names = {f.name for f in fields(CaseResult)}
    return CaseResult(**{k: v for k, v in r.items() if k in names})


def implementation_names(run: Run) -> list[str]:
    names = [impl["name"] for impl in run.meta.get("environment", {}).get("implementations", [])]
    for r in run.results:
        if r.implementation not in names:
            names.append(r.implementation)
    return names


#: The columns of a matrix row, i.e. the CaseResult fields that make it.
ROW_FIELDS = ("family", "function", "variant", "dtype", "layout", "group")


def matrix(run: Run) -> tuple[list[tuple[str, ...]], list[str], dict[tuple, Cell]]:
    """Rows (family, function, variant, dtype, layout, group) in run order, implementation columns, and cells."""
    rows: dict[tuple[str, ...], None] = {}
    cells: dict[tuple, Cell] = defaultdict(Cell)
    for r in run.results:
        row = (r.family, r.function, r.variant, r.dtype, r.layout, r.group)
        rows.setdefault(row, None)
        cells[row + (r.implementation,)].add(r)
    return list(rows), implementation_names(run), cells


def summary_rows(run: Run) -> list[tuple[str, str, Cell]]:
    """(function, implementation, cell) per pair, in run order."""
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    for r in run.results:
        cells[(r.function, r.implementation)].add(r)
    return [(fn, impl, cell) for (fn, impl), cell in cells.items()]


def totals(run: Run) -> Counter:
    return Counter(r.status for r in run.results)


def totals_line(run: Run) -> str:
    t = totals(run)
    line = f"{t['pass']} passed, {t['fail'] + t['error']} failed, {t['skip']} skipped"
    extra = [f"{t['error']} errors" if t["error"] else "", f"{t['known']} known deviations" if t["known"] else "",
             f"{t['xpass']} catalogued deviations did not show" if t["xpass"] else ""]
    return line + "".join(f", {e}" for e in extra if e) + f" in {run.seconds:.1f} s"


def fmt_ulp(value: float) -> str:
    if value == float("inf"):
        return "inf"
    return f"{value:.0f}" if value < 1e6 else f"{value:.2g}"


def fmt_rel(value: float) -> str:
    if value == 0:
        return "0"
    return "inf" if value == float("inf") else f"{value:.2g}"


# -- text summary --------------------------------------------------------------------------------------------------
def format_summary(run: Run, max_failures: int = 20) -> str:
    rows = summary_rows(run)
    width = max([len(r[0]) for r in rows] + [8])
    iwidth = max([len(r[1]) for r in rows] + [14])
    lines = [f"{'function':<{width}}  {'implementation':<{iwidth}}  passed  failed  known  skipped  worst ulp  worst rel"]
    for fn, impl, cell in rows:
        c = cell.counts
        mark = "   <-- FAIL" if cell.bad else ""
        worst = (fmt_ulp(cell.max_ulp), fmt_rel(cell.max_rel)) if cell.ran else ("-", "-")
        lines.append(f"{fn:<{width}}  {impl:<{iwidth}}  {c['pass'] + c['xpass']:>6}  {cell.bad:>6}  {c['known']:>5}  "
                     f"{c['skip']:>7}  {worst[0]:>9}  {worst[1]:>9}{mark}")
    failed = [r for r in run.results if r.status in BAD]
    for r in failed[:max_failures]:
        lines.append(f"FAIL {r.implementation} {r.descriptor}: {r.detail.splitlines()[0] if r.detail else r.status}\n"
                     f"     repro: {r.repro}")
    if len(failed) > max_failures:
        lines.append(f"... and {len(failed) - max_failures} more failures (see the reports)")
    known = Counter((r.deviation, r.implementation) for r in run.results if r.status == "known")
    for (ids, impl), n in sorted(known.items()):
        lines.append(f"known deviation {ids} on {impl}: {n} case{'s' * (n != 1)}")
    xpass = [r for r in run.results if r.status == "xpass"]
    for r in xpass[:10]:
        lines.append(f"XPASS {r.implementation} {r.descriptor}: catalogued as {r.deviation} but passed")
    if len(xpass) > 10:
        lines.append(f"... and {len(xpass) - 10} more catalogued cases that passed")
    skips = Counter((r.implementation, r.detail.splitlines()[0] if r.detail else "") for r in run.results
                    if r.status == "skip")
    for (impl, reason), n in skips.most_common(8):
        lines.append(f"skipped {n} on {impl}: {reason}")
    if len(skips) > 8:
        lines.append(f"... and {len(skips) - 8} more skip reasons (see the reports)")
    lines.append(totals_line(run))
    return "\n".join(lines)


def format_header(run_meta: dict[str, Any], cases: int, implementations: Sequence[Any]) -> str:
    env = run_meta.get("environment", {})
    lines = [f"simdbind conformance: profile {run_meta.get('profile')}, seed {run_meta.get('seed')}, "
             f"{cases} case runs on {len(implementations)} implementation{'s' * (len(implementations) != 1)}, "
             f"{run_meta.get('workers', 1)} worker{'s' * (run_meta.get('workers', 1) != 1)}"]
    for impl in env.get("implementations", []):
        where = impl.get("path", "")
        lines.append(f"  {impl['name']:<20} {impl.get('kind', '')} {impl.get('version', '')} {where}".rstrip())
    lines.append(f"  cpu: {env.get('cpu_model', '?')}")
    return "\n".join(lines)


# -- JSON ----------------------------------------------------------------------------------------------------------
def _prepare(path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def to_json(run: Run) -> dict[str, Any]:
    t = totals(run)
    return {"format": FORMAT, "meta": run.meta, "seconds": run.seconds,
            "summary": {status: t[status] for status in STATUSES},
            "results": [asdict(r) for r in run.results]}


def write_json(run: Run, path: str | Path) -> Path:
    path = _prepare(path)
    path.write_text(json.dumps(to_json(run), indent=None, separators=(",", ":"), default=str))
    return path


def read_json(path: str | Path) -> Run:
    data = json.loads(Path(path).read_text())
    if "results" not in data:
        raise ValueError(f"{path}: not a conformance report (no 'results')")
    return Run([_as_result(r) for r in data["results"]], data.get("seconds", 0.0), data.get("meta", {}))


# -- JUnit XML -----------------------------------------------------------------------------------------------------
def write_junit(run: Run, path: str | Path) -> Path:
    """One <testsuite> per implementation; known deviations are <skipped> with the catalogue id (as pytest does
    for xfail); a catalogued case that passed is a pass with a property saying so."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="simdbind conformance")
    by_impl: dict[str, list[CaseResult]] = defaultdict(list)
    for r in run.results:
        by_impl[r.implementation].append(r)
    for impl, results in by_impl.items():
        c = Counter(r.status for r in results)
        suite = ET.SubElement(root, "testsuite", name=f"conformance.{impl}", tests=str(len(results)),
                              failures=str(c["fail"]), errors=str(c["error"]), skipped=str(c["skip"] + c["known"]),
                              time=f"{sum(r.seconds for r in results):.3f}",
                              timestamp=str(run.meta.get("created", "")))
        props = ET.SubElement(suite, "properties")
        for key in ("profile", "seed", "filter", "command"):
            ET.SubElement(props, "property", name=key, value=str(run.meta.get(key, "")))
        for r in results:
            case = ET.SubElement(suite, "testcase", classname=f"conformance.{impl}.{r.function}", name=r.descriptor,
                                 time=f"{r.seconds:.6f}")
            message = r.detail.splitlines()[0] if r.detail else r.status
            body = f"{r.detail}\nrepro: {r.repro}" if r.repro else r.detail
            if r.status == "fail":
                ET.SubElement(case, "failure", message=message, type="mismatch").text = body
            elif r.status == "error":
                ET.SubElement(case, "error", message=message, type="error").text = body
            elif r.status == "skip":
                ET.SubElement(case, "skipped", message=message)
            elif r.status == "known":
                ET.SubElement(case, "skipped", type="pytest.xfail", message=f"known deviation {r.deviation}").text = body
            elif r.status == "xpass":
                p = ET.SubElement(case, "properties")
                ET.SubElement(p, "property", name="xpass", value=r.deviation)
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
    return text + f" · {fmt_ulp(cell.max_ulp)} ulp"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(run: Run, max_failures: int = 50) -> str:
    env = run.meta.get("environment", {})
    t = totals(run)
    verdict = "❌ FAILED" if t["fail"] + t["error"] else "✅ passed"
    lines = [f"## simdbind conformance: {verdict}", "",
             f"**{totals_line(run)}** · profile `{run.meta.get('profile')}` · seed `{run.meta.get('seed')}`"
             + (f" · filter `{run.meta.get('filter')}`" if run.meta.get("filter") else ""), "",
             "| implementation | kind | version | ISA | library |", "|---|---|---|---|---|"]
    for impl in env.get("implementations", []):
        lines.append(f"| {impl['name']} | {impl.get('kind', '')} | {impl.get('version', '')} | {impl.get('isa', '')} "
                     f"| `{impl.get('path', '')}` |")
    packages = ", ".join(f"{k} {v}" for k, v in env.get("packages", {}).items() if v != "not installed")
    lines += ["", f"CPU: {env.get('cpu_model', '?')} · Python {env.get('python', '?')} · {packages}"
              + (f" · source {env['source']}" if env.get("source") else ""), ""]
    rows, impls, cells = matrix(run)
    lines.append("| function | variant | dtype | layout | group | " + " | ".join(impls) + " |")
    lines.append("|---|---|---|---|---|" + "---|" * len(impls))
    for row in rows:
        lines.append(f"| {row[1]} | {row[2]} | {row[3]} | {row[4]} | {row[5]} | "
                     + " | ".join(_md_cell(cells.get(row + (impl,))) for impl in impls) + " |")
    lines += ["", "Cells: passed/run · worst error in ULP. ✅ pass · ❌ failures · ⚠️ known deviations (catalogue) · "
              "🔷 catalogued deviation did not show · ⏭️ skipped.", ""]
    failed = [r for r in run.results if r.status in BAD]
    if failed:
        lines += [f"### Failures ({len(failed)})", "", "| implementation | case | detail | repro |", "|---|---|---|---|"]
        for r in failed[:max_failures]:
            detail = r.detail.splitlines()[0] if r.detail else r.status
            lines.append(f"| {r.implementation} | `{_md_escape(r.descriptor)}` | {_md_escape(detail[:200])} "
                         f"| `{_md_escape(r.repro)}` |")
        if len(failed) > max_failures:
            lines.append(f"\n... and {len(failed) - max_failures} more (see the JSON report)")
        lines.append("")
    known = Counter((r.deviation, r.implementation) for r in run.results if r.status == "known")
    xpass = Counter((r.deviation, r.implementation) for r in run.results if r.status == "xpass")
    if known or xpass:
        lines += ["### Known deviations", "", "| catalogue id | implementation | cases still deviating | cases that passed |",
                  "|---|---|---|---|"]
        for key in sorted(set(known) | set(xpass)):
            lines.append(f"| {key[0]} | {key[1]} | {known[key]} | {xpass[key]} |")
        lines.append("")
    return "\n".join(lines)


def write_markdown(run: Run, path: str | Path) -> Path:
    path = _prepare(path)
    path.write_text(markdown(run))
    return path


# -- HTML ----------------------------------------------------------------------------------------------------------
_CSS = """
:root { --pass:#1f9d55; --pass-bg:#e3f6ea; --fail:#c62828; --fail-bg:#fde4e4; --known:#b26a00; --known-bg:#fff1d6;
        --xpass:#1565c0; --xpass-bg:#e1ecfb; --skip:#777; --skip-bg:#f0f0f0; --line:#d8dbe0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d232b;
       background: #fafbfc; }
header { background: #1d2733; color: #fff; padding: 18px 28px 14px; }
header h1 { margin: 0 0 4px; font-size: 21px; font-weight: 600; }
header .sub { color: #b8c4d2; font-size: 13px; }
main { padding: 18px 28px 40px; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; margin-right: 8px; }
.verdict.ok { background: var(--pass); } .verdict.bad { background: var(--fail); }
.badges { display: flex; gap: 10px; flex-wrap: wrap; margin: 0 0 14px; }
.badge { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 110px; }
.badge b { display: block; font-size: 20px; } .badge span { color: #5b6572; font-size: 12px; }
.badge.pass b { color: var(--pass); } .badge.fail b { color: var(--fail); } .badge.known b { color: var(--known); }
.badge.xpass b { color: var(--xpass); } .badge.skip b { color: var(--skip); }
details.env { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; margin-bottom: 14px; }
details.env summary { cursor: pointer; font-weight: 600; }
table { border-collapse: collapse; }
table.kv td { padding: 2px 14px 2px 0; vertical-align: top; } table.kv td:first-child { color: #5b6572; }
.controls { margin: 6px 0 10px; color: #39424e; display: flex; gap: 18px; align-items: center; flex-wrap: wrap; }
.legend span { display: inline-block; padding: 1px 8px; border-radius: 4px; margin-right: 4px; font-size: 12px; }
table.matrix { background: #fff; border: 1px solid var(--line); }
table.matrix th, table.matrix td { border: 1px solid var(--line); padding: 5px 9px; text-align: left; }
table.matrix thead th { background: #eef1f5; position: sticky; top: 0; z-index: 1; font-weight: 600; }
table.matrix th.impl { text-align: center; min-width: 112px; }
table.matrix th.impl small { display: block; font-weight: 400; color: #5b6572; }
table.matrix td.fn { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-weight: 600; }
table.matrix td.fn small { display: block; font-weight: 400; color: #5b6572; font-size: 11px; }
table.matrix td.dim { color: #39424e; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
table.matrix td.tol { color: #5b6572; font-size: 12px; max-width: 120px; }
td.cell { text-align: center; padding: 0 !important; min-width: 112px; }
td.cell a, td.cell div { display: block; padding: 5px 8px; color: inherit; text-decoration: none; }
td.cell b { font-size: 14px; } td.cell small { display: block; font-size: 11px; opacity: .85; }
td.cell small.note { display: inline; margin-left: 4px; }
td.cell small.worst { white-space: nowrap; font-size: 10.5px; }
td.cell.skip small { max-width: 170px; margin: 0 auto; }
td.cell.pass { background: var(--pass-bg); color: #145a32; } td.cell.fail { background: var(--fail-bg); color: #8e1b1b; }
td.cell.known { background: var(--known-bg); color: #7a4a00; } td.cell.xpass { background: var(--xpass-bg); color: #0d3c78; }
td.cell.skip { background: var(--skip-bg); color: #666; } td.cell.none { background: #fff; color: #bbb; }
td.cell.fail a:hover, td.cell.known a:hover, td.cell.xpass a:hover { outline: 2px solid #1d2733; outline-offset: -2px; }
body.onlybad tr.row.good { display: none; }
section.cases { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--fail); border-radius: 6px;
                margin: 14px 0; padding: 8px 14px; scroll-margin-top: 10px; }
section.cases.known { border-left-color: var(--known); } section.cases.xpass { border-left-color: var(--xpass); }
section.cases:target { box-shadow: 0 0 0 3px #ffcc33; }
section.cases h3 { margin: 4px 0 8px; font-size: 15px; }
table.list { width: 100%; } table.list td, table.list th { border-bottom: 1px solid #eceef1; padding: 4px 8px;
           text-align: left; vertical-align: top; font-size: 13px; }
table.list td.st { font-weight: 600; white-space: nowrap; }
.st.fail, .st.error { color: var(--fail); } .st.known { color: var(--known); } .st.xpass { color: var(--xpass); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
code.desc { font-weight: 600; font-size: 13px; }
.repro { display: flex; gap: 6px; align-items: flex-start; margin-top: 3px; }
.repro code { background: #f3f4f6; padding: 2px 6px; border-radius: 4px; overflow-wrap: anywhere; }
table.list th:nth-child(1) { width: 16%; } table.list th:nth-child(2) { width: 50%; }
button.copy { font-size: 11px; padding: 1px 7px; cursor: pointer; border: 1px solid var(--line); background: #fff;
              border-radius: 4px; }
.detail { color: #39424e; } .more { color: #5b6572; font-style: italic; }
footer { color: #5b6572; font-size: 12px; margin-top: 30px; }
"""

_JS = """
document.getElementById('onlybad').addEventListener('change', function (e) {
  document.body.classList.toggle('onlybad', e.target.checked); });
document.querySelectorAll('button.copy').forEach(function (b) {
  b.addEventListener('click', function () {
    var text = b.parentNode.querySelector('code').textContent;
    if (navigator.clipboard) { navigator.clipboard.writeText(text); }
    b.textContent = 'copied'; setTimeout(function () { b.textContent = 'copy'; }, 1200); }); });
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _html_cell(cell: Cell | None, anchor: str | None) -> str:
    if cell is None or not cell.counts:
        return '<td class="cell none"><div>–</div></td>'
    c = cell.counts
    title = ", ".join(f"{n} {s}" for s, n in c.items() if n)
    if cell.tolerances:
        title += " · tolerance " + "; ".join(sorted(cell.tolerances))
    skip_reasons = sorted({r.detail.splitlines()[0] for r in cell.results if r.status == "skip" and r.detail})
    if skip_reasons:
        title += " · skipped: " + "; ".join(skip_reasons[:3])
    if cell.status == "skip":
        reason = skip_reasons[0] if skip_reasons else ""
        reason = reason if len(reason) <= 60 else reason[:57].rstrip() + "…"
        body = "<b>skipped</b><small>" + _e(reason) + "</small>"
    else:
        passed = c["pass"] + c["xpass"]
        main = f"{passed}/{cell.ran}"
        notes = []
        if cell.bad:
            notes.append(f"{cell.bad} failed")
        if c["known"]:
            notes.append(f"{c['known']} known")
        if c["xpass"]:
            notes.append(f"{c['xpass']} xpass")
        if c["skip"]:
            notes.append(f"{c['skip']} skipped")
        body = (f"<b>{_e(main)}</b>" + (f"<small class=note>{_e(', '.join(notes))}</small>" if notes else "")
                + f"<small class=worst>≤ {_e(fmt_ulp(cell.max_ulp))} ulp · {_e(fmt_rel(cell.max_rel))} rel</small>")
    inner = f'<a href="#{anchor}">{body}</a>' if anchor else f"<div>{body}</div>"
    return f'<td class="cell {cell.status}" title="{_e(title)}">{inner}</td>'


def html_report(run: Run, max_cases_per_cell: int = 200) -> str:
    env = run.meta.get("environment", {})
    t = totals(run)
    rows, impls, cells = matrix(run)
    impl_info = {i["name"]: i for i in env.get("implementations", [])}
    bad = t["fail"] + t["error"]
    out = ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
           '<meta name=viewport content="width=device-width, initial-scale=1">',
           f"<title>simdbind conformance: {'FAILED' if bad else 'passed'} ({_e(run.meta.get('profile', ''))})</title>",
           f"<style>{_CSS}</style></head><body>",
           "<header><h1>simdbind conformance</h1><div class=sub>"
           f"<span class='verdict {'bad' if bad else 'ok'}'>{'FAILED' if bad else 'PASSED'}</span>"
           f"profile <b>{_e(run.meta.get('profile', '?'))}</b> · seed <b>{_e(run.meta.get('seed', '?'))}</b>"
           + (f" · filter <b>{_e(run.meta.get('filter'))}</b>" if run.meta.get("filter") else "")
           + f" · {len(run.results)} case runs in {run.seconds:.1f} s · {_e(run.meta.get('created', ''))}"
           + f" · {_e(env.get('cpu_model', ''))}</div></header><main>"]
    out.append("<div class=badges>")
    for status, label, value in (("pass", "passed", t["pass"]), ("fail", "failed", bad),
                                 ("known", "known deviations", t["known"]),
                                 ("xpass", "catalogued, passed", t["xpass"]), ("skip", "skipped", t["skip"])):
        out.append(f"<div class='badge {status}'><b>{value}</b><span>{label}</span></div>")
    out.append("</div>")
    # environment
    out.append("<details class=env><summary>Run details: implementations, libraries, packages</summary>"
               "<table class=kv>")
    for key, value in (("command", run.meta.get("command", "")), ("source", env.get("source", "")),
                       ("python", env.get("python", "")), ("platform", env.get("platform", "")),
                       ("cpu", env.get("cpu_model", "")), ("workers", run.meta.get("workers", ""))):
        if value:
            out.append(f"<tr><td>{_e(key)}</td><td><code>{_e(value)}</code></td></tr>")
    for impl in env.get("implementations", []):
        text = (f"{impl.get('kind', '')} {impl.get('version', '')} · isa {impl.get('isa', '')} · "
                f"{impl.get('path', '')}")
        if impl.get("available") not in (None, "yes"):
            text += f" · {impl['available']}"
        out.append(f"<tr><td>{_e(impl['name'])}</td><td><code>{_e(text)}</code></td></tr>")
    packages = ", ".join(f"{k} {v}" for k, v in env.get("packages", {}).items())
    out.append(f"<tr><td>packages</td><td><code>{_e(packages)}</code></td></tr></table></details>")
    # matrix
    out.append("<div class=controls><label><input type=checkbox id=onlybad> only rows with failures or deviations"
               "</label><span class=legend>"
               "<span style='background:var(--pass-bg)'>all pass</span><span style='background:var(--fail-bg)'>"
               "failures</span><span style='background:var(--known-bg)'>known deviation</span>"
               "<span style='background:var(--xpass-bg)'>catalogued, passed</span>"
               "<span style='background:var(--skip-bg)'>skipped</span></span>"
               "<span>cell: passed/run · worst error (ULP, relative); click a coloured cell for its cases</span></div>")
    out.append("<table class=matrix><thead><tr><th>function</th><th>variant</th><th>dtype</th>"
               "<th>layout</th><th>group</th><th>tolerance</th>")
    for impl in impls:
        info = impl_info.get(impl, {})
        sub = (info.get("version", "") or info.get("available", "")).split(" (")[0]
        out.append(f"<th class=impl>{_e(impl)}<small>{_e(sub)}</small></th>")
    out.append("</tr></thead><tbody>")
    sections = []
    for number, row in enumerate(rows):
        row_cells = [cells.get(row + (impl,)) for impl in impls]
        good = all(c is None or c.status in ("pass", "skip", "none") for c in row_cells)
        tolerances = sorted(set().union(*[c.tolerances for c in row_cells if c is not None]))
        tol = tolerances[0] if len(tolerances) == 1 else (f"{len(tolerances)} tolerances" if tolerances else "")
        out.append(f"<tr class='row {'good' if good else 'bad'}'><td class=fn><small>{_e(row[0])}</small>"
                   f"{_e(row[1])}</td>" + "".join(f"<td class=dim>{_e(x)}</td>" for x in row[2:])
                   + f"<td class=tol title='{_e('; '.join(tolerances))}'>{_e(tol)}</td>")
        for column, (impl, cell) in enumerate(zip(impls, row_cells)):
            listed = [r for r in (cell.results if cell else []) if r.status != "skip"]
            anchor = f"cases-{number}-{column}" if listed else None
            out.append(_html_cell(cell, anchor))
            if anchor:
                severity = 0 if cell.bad else (1 if cell.counts["known"] else 2)
                sections.append((severity, len(sections), _html_section(anchor, row, impl, cell, listed,
                                                                         max_cases_per_cell)))
        out.append("</tr>")
    out.append("</tbody></table>")
    if sections:
        out.append("<h2>Cases that did not pass</h2>")
        out.extend(text for _, _, text in sorted(sections))  # failures first, then known, then xpass
    out.append(f"<footer>Generated by simdbind conformance ({FORMAT}). Each case reproduces alone with its repro "
               "command; inputs are seeded from the run's seed and the case descriptor.</footer>")
    out.append(f"</main><script>{_JS}</script></body></html>")
    return "\n".join(out)


def _html_section(anchor: str, row: tuple, impl: str, cell: Cell, listed: list[CaseResult], limit: int) -> str:
    kind = "fail" if cell.bad else ("known" if cell.counts["known"] else "xpass")
    title = " · ".join(x for x in row[1:] if x and x != "-") + f" on {impl}"
    counts = ", ".join(f"{n} {s}" for s, n in cell.counts.items() if n)
    parts = [f"<section class='cases {kind}' id='{anchor}'><h3>{_e(title)} <small>({_e(counts)})</small></h3>",
             "<table class=list><tr><th>status</th><th>case and repro</th><th>detail</th></tr>"]
    order = {"fail": 0, "error": 1, "known": 2, "xpass": 3}
    for r in sorted(listed, key=lambda r: order.get(r.status, 9))[:limit]:
        detail = r.detail.splitlines()[0] if r.detail else ""
        deviation = f" <code>{_e(r.deviation)}</code>" if r.deviation else ""
        parts.append(f"<tr><td class='st {r.status}'>{_e(r.status)}{deviation}</td><td><code class=desc>"
                     f"{_e(r.descriptor)}</code><div class=repro><code>{_e(r.repro)}</code>"
                     f"<button class=copy type=button>copy</button></div></td>"
                     f"<td class=detail>{_e(detail[:400])}</td></tr>")
    parts.append("</table>")
    if len(listed) > limit:
        parts.append(f"<p class=more>... and {len(listed) - limit} more in the JSON report</p>")
    parts.append("</section>")
    return "\n".join(parts)


def write_html(run: Run, path: str | Path) -> Path:
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

    @property
    def failed(self) -> bool:
        return bool(self.regressions or self.new_failures)


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
    return result


def format_diff(d: Diff, old_name: str = "OLD", new_name: str = "NEW", limit: int = 100) -> str:
    lines = [f"conformance diff {old_name} -> {new_name}: {len(d.regressions)} regressions, {len(d.fixes)} fixes, "
             f"{len(d.new_failures)} new failures, {len(d.changes)} other status changes, "
             f"{len(d.worse)} larger errors; {d.unchanged} unchanged, {d.added} added, {d.removed} removed"]

    def block(title: str, pairs: list[tuple[CaseResult, CaseResult]]) -> None:
        if not pairs:
            return
        lines.append(f"{title} ({len(pairs)}):")
        for o, r in pairs[:limit]:
            detail = r.detail.splitlines()[0] if r.detail else ""
            lines.append(f"  {r.implementation}  {r.descriptor}: {o.status} -> {r.status}"
                         + (f"  ({detail[:160]})" if detail and r.status not in GOOD else ""))
            if r.repro and r.status in BAD:
                lines.append(f"      repro: {r.repro}")
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
            lines.append(f"  {r.implementation}  {r.descriptor}: {fmt_ulp(o.max_ulp)} -> {fmt_ulp(r.max_ulp)} ulp")
    return "\n".join(lines)


# -- progress ------------------------------------------------------------------------------------------------------
class Progress:
    """Cases done / total and failures so far: a redrawn bar on a terminal, a plain line every 10 % (or 15 s)
    otherwise."""

    def __init__(self, stream: Any = None, tty: bool | None = None, width: int = 28):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.width = width
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.last_step = -1
        self.failed = 0
        self.known = 0
        self.active = False
        encoding = (getattr(self.stream, "encoding", None) or "utf-8").lower().replace("-", "")
        self.unicode = encoding in ("utf8", "utf16", "utf32")

    def __call__(self, done: int, total: int, result: CaseResult) -> None:
        if result.status in BAD:
            self.failed += 1
        elif result.status == "known":
            self.known += 1
        now = time.perf_counter()
        elapsed = now - self.start
        if self.tty:
            if done < total and now - self.last_draw < 0.08 and result.status not in BAD:
                return
            self.last_draw = now
            filled = int(self.width * done / max(total, 1))
            full, empty = ("█", "░") if self.unicode else ("#", "-")
            bar = full * filled + empty * (self.width - filled)
            fails = f"\x1b[31m{self.failed} failed\x1b[0m" if self.failed else "0 failed"
            known = f", {self.known} known" if self.known else ""
            self.stream.write(f"\r\x1b[K  [{bar}] {done}/{total} cases, {fails}{known}, {elapsed:.1f} s  "
                              f"{result.function} {result.implementation}"[:220])
            self.active = done < total
            if done == total:
                self.stream.write("\n")
            self.stream.flush()
        else:
            step = 10 * done // max(total, 1)
            if (step != self.last_step and now - self.last_draw >= 1.0) or now - self.last_draw > 15 \
                    or done == total:
                self.last_step, self.last_draw = step, now
                self.stream.write(f"progress: {done}/{total} cases ({100 * done // max(total, 1)}%), "
                                  f"{self.failed} failed, {self.known} known, {elapsed:.1f} s\n")
                self.stream.flush()

    def close(self) -> None:
        if self.tty and self.active:
            self.stream.write("\n")
            self.stream.flush()
            self.active = False
