"""The benchmark figures: one PNG per family (``<stem>-<family>.png``), readable at 100% zoom.

Each figure has one unit on its axis (the family's throughput unit, higher is better; time per call for the
overhead family, or where a family's cases mix units), one group of horizontal bars per case labelled with its
descriptor, and the same colour for an implementation in every group: the bundled library's ISAs in shades of blue,
external libraries in oranges, the library's variants (raw cffi, one Python thread) in purples, each peer in a hue of
its own (green, red, brown, ...) and the memcpy bound in grey. A family with many cases is drawn in two or three
columns of panels sharing the axis.
"""

from __future__ import annotations

import importlib
import math
import textwrap
from pathlib import Path
from typing import Any, Sequence

from simdbind.conformance.work import EFFECTIVE
from simdbind.bench.harness import Measurement, Report

#: Families whose figure shows time per call (their point is the cost of a call, not throughput).
TIME_FAMILIES = ("overhead",)
#: Inches per bar, per line of a case's label and between case groups; a label's wrap width in characters.
BAR = 0.13
LINE = 0.12
GAP = 0.2
WRAP = 64
#: The peers' colours (tab10's green, red, brown, pink, olive, cyan).
PEER_COLORS = ("#2ca02c", "#d62728", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
#: Cases per panel before a figure gets another column (at most three).
PER_PANEL = 18
#: Pixels per inch of the figures; inches kept free at the left and right edges and for the title.
DPI = 100
EDGE = 0.1
TITLE = 0.3


def _palette(implementations: Sequence[str], kinds: dict[str, str]) -> dict[str, Any]:
    """A colour per implementation: a colour family per kind, shades within it."""
    matplotlib = importlib.import_module("matplotlib")
    families = {"bundled": "Blues", "external": "Oranges", "variant": "Purples"}
    groups: dict[str, list[str]] = {}
    for name in implementations:
        kind = kinds[name]
        group = "bound" if kind == "bound" else "variant" if kind == "variant" else "peer" if kind == "peer" else \
            "external" if name.startswith("external") else "bundled"
        groups.setdefault(group, []).append(name)
    colors: dict[str, Any] = {}
    for group, names in groups.items():
        if group in ("bound", "peer"):  # peers: distinct hues, none of the libraries' colour families
            for i, name in enumerate(names):
                colors[name] = "0.55" if group == "bound" else PEER_COLORS[i % len(PEER_COLORS)]
            continue
        cmap = matplotlib.colormaps[families[group]]
        for i, name in enumerate(names):
            colors[name] = cmap(0.45 + 0.5 * (i + 1) / (len(names) + 1))
    return colors


def _value(m: Measurement, per_call: bool) -> float | None:
    if not m.ok or m.median is None:
        return None
    return m.median * 1e6 if per_call else m.throughput


def family_figure(measurements: Sequence[Measurement], family: str, title: str, path: str) -> str:
    """Draw one family's measurements into `path` (PNG)."""
    plt = importlib.import_module("matplotlib.pyplot")
    fig = draw_family(measurements, family, title)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def draw_family(measurements: Sequence[Measurement], family: str, title: str) -> Any:
    """The figure of one family's measurements (a matplotlib Figure, open: close it with pyplot.close)."""
    plt = importlib.import_module("matplotlib.pyplot")
    ms = [m for m in measurements if m.family == family and m.ok]
    units = {m.unit for m in ms}
    rates = {_rate_of(unit) for unit in units}  # an effective rate shares the axis of its unit
    per_call = family in TIME_FAMILIES or len(rates) > 1
    axis = "µs per call (lower is better)" if per_call else f"{rates.pop()} (higher is better)"
    if not per_call and EFFECTIVE in units:
        axis += "; effective: a direct algorithm's operations / time"
    effective = {(m.case, m.threads) for m in ms if m.unit == EFFECTIVE and not per_call}
    rows = list(dict.fromkeys((m.case, m.threads) for m in ms))
    functions = {m.function for m in ms}
    common = f"{functions.pop()} " if len(functions) == 1 else ""  # said once, in the title
    multi = len({t for _, t in rows}) > 1
    impls = list(dict.fromkeys(m.implementation for m in ms))
    kinds = {m.implementation: m.kind for m in ms}
    colors = _palette(impls, kinds)
    value = {(m.case, m.threads, m.implementation): _value(m, per_call) for m in ms}
    present = {row: [i for i in impls if value.get((*row, i))] for row in rows}

    columns = min(3, max(1, math.ceil(len(rows) / PER_PANEL)))
    per = math.ceil(len(rows) / columns)
    panels = [rows[k * per:(k + 1) * per] for k in range(columns)]
    def label(row: tuple[str, int]) -> list[str]:
        case, threads = row
        text = case[len(common):] if common and case.startswith(common) else case
        return textwrap.wrap(text + (f" ({threads} threads)" if multi else "")
                             + (f" [{EFFECTIVE}]" if row in effective else ""), WRAP)

    def extent(row: tuple[str, int]) -> float:
        """A case group's height: its bars, or its label's lines where those are taller."""
        return max(len(present[row]) * BAR, len(label(row)) * LINE)

    heights = [sum(extent(r) + GAP for r in panel) for panel in panels]
    body = max(heights) + 0.5  # inches for the panels and the axis below them
    fig, axes = plt.subplots(1, columns, figsize=(7.5 * columns, body), squeeze=False, sharex=True, dpi=DPI)
    values = [v for v in value.values() if v]
    log = bool(values) and max(values) / min(values) > 30
    for ax, panel, height in zip(axes[0], panels, heights):
        y, ticks, labels = 0.0, [], []
        for row in panel:
            names = present[row]
            top = y + (extent(row) - len(names) * BAR) / 2
            for k, name in enumerate(names):
                ax.barh(top + (k + 0.5) * BAR, value[(*row, name)], height=BAR * 0.9, color=colors[name])
            ticks.append(y + extent(row) / 2)
            labels.append("\n".join(label(row)))
            y += extent(row) + GAP
        ax.set_yticks(ticks)
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_ylim(max(heights) - GAP / 2, -GAP / 2)  # the same scale of inches per bar in every panel
        if log:
            ax.set_xscale("log")
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.set_xlabel(axis, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[name]) for name in impls]
    legend = _fitted_legend(fig, handles, impls)
    head = TITLE + legend.get_window_extent().height / DPI  # inches above the panels: the title, then the legend
    fig_height = body + head
    fig.set_size_inches(fig.get_figwidth(), fig_height)
    legend.set_bbox_to_anchor((0.5, 1 - TITLE / fig_height), transform=fig.transFigure)
    fig.suptitle(title + (f" ({common.strip()})" if common else ""), fontsize=9, y=1 - 0.05 / fig_height)
    fig.tight_layout(rect=(0, 0, 1, 1 - head / fig_height), pad=0.4)
    return fig


def _fitted_legend(fig: Any, handles: list[Any], labels: list[str]) -> Any:
    """The figure's legend, at the top, in as many columns (at most 4) as fit the figure's width: one wider than
    the figure would be cut at both sides when saved."""
    columns = min(4, len(labels))
    while True:
        legend = fig.legend(handles, labels, loc="upper center", ncol=columns, fontsize=8, frameon=False)
        fig.canvas.draw()
        if columns == 1 or legend.get_window_extent().width <= fig.bbox.width - 2 * DPI * EDGE:
            return legend
        legend.remove()
        columns -= 1


def _rate_of(unit: str) -> str:
    """The unit an effective rate is counted in (its axis)."""
    return "GFLOP/s" if unit == EFFECTIVE else unit


def plot(report: Report, stem: str) -> list[str]:
    """One PNG per family with a successful measurement: ``<stem>-<family>.png`` (`stem` may end in ``.png``).
    Needs matplotlib."""
    try:
        importlib.import_module("matplotlib").use("Agg")
    except ImportError:
        raise RuntimeError("--plot needs matplotlib (pip install matplotlib)") from None
    families = list(dict.fromkeys(m.family for m in report.measurements if m.ok))
    if not families:
        raise RuntimeError("--plot: no successful measurement to plot")
    base = stem[:-4] if stem.endswith(".png") else stem
    Path(base).parent.mkdir(parents=True, exist_ok=True)
    env = report.meta.get("environment", {})
    written = []
    for family in families:
        title = f"simdbind bench, {family}: {env.get('cpu', '')}, {env.get('date', '')}"
        written.append(family_figure(report.measurements, family, title, f"{base}-{family}.png"))
    return written
