"""The aggregation of a run's results that every report shows: cells (function x variant x dtype x layout x group x
implementation) with their counts and largest errors, the totals, and the number formats of the summaries. The
text, JSON, Markdown and HTML reports (:mod:`simdbind.conformance.report`, :mod:`simdbind.conformance.report_html`)
read it; it reads none of them."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from simdbind.conformance.runner import CaseResult, Run

#: The statuses of a case that did not pass and was not expected to fail.
BAD = ("fail", "error")


@dataclass
class Cell:
    """The results of one group (e.g. function x dtype x layout x implementation)."""

    counts: Counter[str] = field(default_factory=Counter)
    max_ulp: float = 0.0
    max_rel: float = 0.0
    max_abs: float = 0.0
    tolerances: set[str] = field(default_factory=set)
    results: list[CaseResult] = field(default_factory=list)  # the non-pass results

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
    def measured(self) -> int:
        """Cases whose error was measured (an error gave no output to compare)."""
        return self.ran - self.counts["error"]

    @property
    def bad(self) -> int:
        return self.counts["fail"] + self.counts["error"]


def implementation_names(run: Run) -> list[str]:
    """The implementations the run describes, then any other that its results name, each once."""
    names = [impl["name"] for impl in run.meta.get("environment", {}).get("implementations", [])]
    return list(dict.fromkeys(names + [r.implementation for r in run.results]))


#: The columns of a matrix row, i.e. the CaseResult fields that make it.
ROW_FIELDS = ("family", "function", "variant", "dtype", "layout", "group")


def matrix(run: Run) -> tuple[list[tuple[str, ...]], list[str], dict[tuple[str, ...], Cell]]:
    """Rows (family, function, variant, dtype, layout, group) in run order, implementation columns, and cells."""
    rows: dict[tuple[str, ...], None] = {}
    cells: dict[tuple[str, ...], Cell] = defaultdict(Cell)
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


def totals(run: Run) -> Counter[str]:
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
