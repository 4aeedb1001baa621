"""Summaries and report files of a conformance run."""

from __future__ import annotations

import json
import platform
import sys
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from conformance.implementations import Implementation
from conformance.runner import Run


def environment(implementations: list[Implementation]) -> dict[str, Any]:
    import cffi
    import numpy

    import simdbind

    libraries = {}
    for impl in implementations:
        libraries.setdefault(impl.library.path + ":" + impl.library.mode, impl.library.describe())
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {"simdbind": simdbind.__version__, "numpy": numpy.__version__, "cffi": cffi.__version__},
        "libraries": list(libraries.values()),
    }


def summary_rows(run: Run) -> list[tuple[str, str, int, int, int, int]]:
    """(function, implementation, passed, failed, errors, skipped) per pair, in run order."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in run.results:
        counts[(r.function, r.implementation)][("pass", "fail", "error", "skip").index(r.status)] += 1
    return [(fn, impl, *c) for (fn, impl), c in counts.items()]


def format_summary(run: Run) -> str:
    rows = summary_rows(run)
    width = max([len(r[0]) for r in rows] + [8])
    iwidth = max([len(r[1]) for r in rows] + [14])
    lines = [f"{'function':<{width}}  {'implementation':<{iwidth}}  passed  failed  errors  skipped"]
    for fn, impl, p, f, e, s in rows:
        mark = "" if f == e == 0 else "   <-- FAIL"
        lines.append(f"{fn:<{width}}  {impl:<{iwidth}}  {p:>6}  {f:>6}  {e:>6}  {s:>7}{mark}")
    total = len(run.results)
    bad = len(run.failed)
    skipped = sum(r.status == "skip" for r in run.results)
    lines.append(f"{total - bad - skipped} passed, {bad} failed, {skipped} skipped in {run.seconds:.1f} s")
    for r in run.failed[:20]:
        lines.append(f"FAIL {r.implementation} {r.descriptor}: {r.detail.splitlines()[0]}\n     repro: {r.repro}")
    if bad > 20:
        lines.append(f"... and {bad - 20} more failures (see the report)")
    return "\n".join(lines)


def write_json(run: Run, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"meta": run.meta, "seconds": run.seconds, "results": [asdict(r) for r in run.results]}
    path.write_text(json.dumps(payload, indent=1, default=str))
    return path
