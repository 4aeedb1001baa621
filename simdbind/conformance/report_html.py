"""The one-file HTML page of a conformance run, or of several runs merged (one column group per machine).

What failed comes first: a failing run's page opens with its failures, each with its repro and a copy button, and
the matrix filter preset to the rows that failed. Every value taken from a report passes through `_e` (reports
from other machines are untrusted); the only links are to anchors the page itself makes. The page is linear in the
results: a row's run of empty cells is one cell spanning their columns (a merge of reports that share no rows is a
sparse matrix).
"""

from __future__ import annotations

import html
from itertools import groupby
from typing import Any, Sequence

from simdbind.conformance.printable import printable
from simdbind.conformance.aggregate import BAD, Cell, fmt_rel, fmt_ulp, matrix, totals
from simdbind.conformance.runner import CaseResult, Run
from simdbind.conformance.schema import FORMAT

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
table.matrix thead { position: sticky; top: 0; z-index: 1; }
table.matrix thead th { background: #eef1f5; font-weight: 600; }
table.matrix th.machine { text-align: center; background: #dde3ea; }
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
.controls input[type=search] { padding: 3px 8px; min-width: 220px; border: 1px solid var(--line); border-radius: 4px; }
.controls select { padding: 2px 4px; } #shown { color: #5b6572; }
section.failures { background: #fff; border: 1px solid var(--fail); border-left: 5px solid var(--fail);
                   border-radius: 6px; margin: 0 0 16px; padding: 8px 14px; }
section.failures h2 { margin: 4px 0 8px; font-size: 17px; color: var(--fail); }
section.failures .scroll { max-height: 360px; overflow-y: auto; }
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
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.row'));
  var text = document.getElementById('filter'), show = document.getElementById('show');
  var shown = document.getElementById('shown');
  function apply() {
    var words = text.value.toLowerCase().split(/\\s+/).filter(Boolean), mode = show.value, count = 0;
    rows.forEach(function (row) {
      var status = row.getAttribute('data-status'), haystack = row.getAttribute('data-text');
      var visible = (mode === 'all' || status === 'fail' || (mode === 'notpass' && status === 'deviation')) &&
        words.every(function (word) { return haystack.indexOf(word) >= 0; });
      row.hidden = !visible;
      if (visible) { count += 1; } });
    shown.textContent = count + ' of ' + rows.length + ' rows shown';
  }
  text.addEventListener('input', apply);
  show.addEventListener('change', apply);
  apply();
  function copyByHand(value) {  /* a page served over plain http has no clipboard API */
    var area = document.createElement('textarea');
    area.value = value; area.setAttribute('readonly', ''); area.style.position = 'fixed'; area.style.opacity = '0';
    document.body.appendChild(area); area.select();
    try { document.execCommand('copy'); } catch (e) { /* nothing more to try */ }
    document.body.removeChild(area);
  }
  document.querySelectorAll('button.copy').forEach(function (button) {
    button.addEventListener('click', function () {
      var value = button.parentNode.querySelector('code').textContent;
      function done() { button.textContent = 'copied'; setTimeout(function () { button.textContent = 'copy'; }, 1500); }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(value).then(done, function () { copyByHand(value); done(); });
      } else { copyByHand(value); done(); }
    }); });
})();
"""


def _e(text: Any) -> str:
    """Text for the page: printable (no bidi override reorders what the page shows) and escaped."""
    return html.escape(printable(str(text)), quote=True)


def _empty(columns: int) -> str:
    """`columns` adjacent cells without results, as one cell."""
    span = f" colspan={columns}" if columns > 1 else ""
    return f'<td class="cell none"{span}><div>–</div></td>'


def _cell(cell: Cell | None, anchor: str | None) -> str:
    if cell is None or not cell.counts:
        return _empty(1)
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
        notes = [f"{n} {label}" for n, label in ((cell.bad, "failed"), (c["known"], "known"), (c["xpass"], "xpass"),
                                                 (c["skip"], "skipped")) if n]
        worst = f"≤ {fmt_ulp(cell.max_ulp)} ulp · {fmt_rel(cell.max_rel)} rel" if cell.measured else "no output"
        body = (f"<b>{passed}/{cell.ran}</b>" + (f"<small class=note>{_e(', '.join(notes))}</small>" if notes else "")
                + f"<small class=worst>{_e(worst)}</small>")
    inner = f'<a href="#{anchor}">{body}</a>' if anchor else f"<div>{body}</div>"
    return f'<td class="cell {cell.status}" title="{_e(title)}">{inner}</td>'


def _row_status(cells: list[Cell]) -> str:
    """"fail" when a cell has failures, "deviation" when one has known or catalogued deviations, else "ok"."""
    statuses = {c.status for c in cells}
    return "fail" if "fail" in statuses else ("deviation" if statuses & {"known", "xpass"} else "ok")


def _header(run: Run, bad: int) -> list[str]:
    env = run.meta.get("environment", {})
    sources = run.meta.get("merged") or []
    where = (f"merged from {len(sources)} reports" if sources else f"{len(run.results)} case runs in "
             f"{run.seconds:.1f} s") + f" · {_e(run.meta.get('created', ''))} · {_e(env.get('cpu_model', ''))}"
    return ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
            '<meta name=viewport content="width=device-width, initial-scale=1">',
            f"<title>simdbind conformance: {'FAILED' if bad else 'passed'} ({_e(run.meta.get('profile') or '')})"
            "</title>", f"<style>{_CSS}</style></head><body>",
            "<header><h1>simdbind conformance</h1><div class=sub>"
            f"<span class='verdict {'bad' if bad else 'ok'}'>{'FAILED' if bad else 'PASSED'}</span>"
            f"profile <b>{_e(run.meta.get('profile') or '?')}</b> · seed <b>{_e(run.meta.get('seed', '?'))}</b>"
            + (f" · filter <b>{_e(run.meta.get('filter'))}</b>" if run.meta.get("filter") else "")
            + f" · {where}</div></header><main>"]


def _badges(run: Run) -> str:
    t = totals(run)
    badges = (("pass", "passed", t["pass"]), ("fail", "failed", t["fail"] + t["error"]),
              ("known", "known deviations", t["known"]), ("xpass", "catalogued, passed", t["xpass"]),
              ("skip", "skipped", t["skip"]))
    return ("<div class=badges>" + "".join(f"<div class='badge {status}'><b>{value}</b><span>{label}</span></div>"
                                           for status, label, value in badges) + "</div>")


def _repro(r: CaseResult) -> str:
    if not r.repro:
        return ""
    return f"<div class=repro><code>{_e(r.repro)}</code><button class=copy type=button>copy</button></div>"


def _failures(failed: list[tuple[CaseResult, str]], limit: int) -> str:
    """The failing cases first, each with its repro and a link to its cell's list."""
    parts = [f"<section class=failures id=failures><h2>What failed ({len(failed)})</h2>",
             "<div class=scroll><table class=list><tr><th>implementation</th><th>case and repro</th><th>detail</th>"
             "</tr>"]
    for r, anchor in failed[:limit]:
        detail = r.detail.splitlines()[0] if r.detail else r.status
        parts.append(f"<tr><td class='st {r.status}'>{_e(r.implementation)}</td><td><a href='#{anchor}'>"
                     f"<code class=desc>{_e(r.descriptor)}</code></a>{_repro(r)}</td>"
                     f"<td class=detail>{_e(detail[:400])}</td></tr>")
    parts.append("</table></div>")
    if len(failed) > limit:
        parts.append(f"<p class=more>... and {len(failed) - limit} more in the lists below and the JSON report</p>")
    return "\n".join(parts + ["</section>"])


def _details(run: Run) -> str:
    env = run.meta.get("environment", {})
    out = ["<details class=env><summary>Run details: implementations, libraries, packages</summary><table class=kv>"]
    for key, value in (("command", run.meta.get("command", "")), ("source", env.get("source", "")),
                       ("python", env.get("python", "")), ("platform", env.get("platform", "")),
                       ("cpu", env.get("cpu_model", "")), ("workers", run.meta.get("workers", ""))):
        if value:
            out.append(f"<tr><td>{_e(key)}</td><td><code>{_e(value)}</code></td></tr>")
    for source in run.meta.get("merged") or []:
        summary = source.get("summary", {})
        text = " · ".join(str(x) for x in (
            source["machine"], f"profile {source.get('profile')}", f"seed {source.get('seed')}",
            "interrupted" if source.get("interrupted") else "",
            f"shard {source['shard']}" if source.get("shard") else "",
            source.get("created") or "", source.get("source") or "", source.get("command") or "",
            f"{summary.get('pass', 0)} passed, {summary.get('fail', 0) + summary.get('error', 0)} failed") if x)
        out.append(f"<tr><td>{_e(source['file'])}</td><td><code>{_e(text)}</code></td></tr>")
    for impl in env.get("implementations", []):
        text = f"{impl.get('kind') or ''} {impl.get('version') or ''} · isa {impl.get('isa') or ''} · " \
               f"{impl.get('path') or ''}"
        if impl.get("available") not in (None, "yes"):
            text += f" · {impl['available']}"
        out.append(f"<tr><td>{_e(impl['name'])}</td><td><code>{_e(text)}</code></td></tr>")
    packages = ", ".join(f"{k} {v}" for k, v in env.get("packages", {}).items())
    if packages:
        out.append(f"<tr><td>packages</td><td><code>{_e(packages)}</code></td></tr>")
    return "\n".join(out + ["</table></details>"])


def _controls(bad: int) -> str:
    options = (("all", "all rows"), ("fail", "rows with failures"), ("notpass", "rows with failures or deviations"))
    preset = "fail" if bad else "all"
    select = "".join(f"<option value={value}{' selected' if value == preset else ''}>{label}</option>"
                     for value, label in options)
    return ("<div class=controls><label>show <select id=show>" + select + "</select></label>"
            "<input type=search id=filter placeholder='filter: function, dtype, layout…' aria-label=filter>"
            "<span id=shown></span><span class=legend>"
            "<span style='background:var(--pass-bg)'>all pass</span><span style='background:var(--fail-bg)'>"
            "failures</span><span style='background:var(--known-bg)'>known deviation</span>"
            "<span style='background:var(--xpass-bg)'>catalogued, passed</span>"
            "<span style='background:var(--skip-bg)'>skipped</span></span>"
            "<span>cell: passed/run · worst error (ULP, relative); click a coloured cell for its cases</span></div>")


_DIMENSIONS = "<th{span}>function</th><th{span}>variant</th><th{span}>dtype</th><th{span}>layout</th>" \
              "<th{span}>group</th><th{span}>tolerance</th>"


def _column_heads(impls: list[str], info: dict[str, dict[str, Any]]) -> str:
    """One header row of implementations; for a merged run, a row of machines above it."""
    def head(impl: str) -> str:
        d = info.get(impl, {})
        name = d.get("implementation") or impl
        sub = ((d.get("version") or d.get("available") or "").split(" (")[0])
        if d.get("isa") and d["isa"] not in name:
            sub = f"isa {d['isa']} · {sub}" if sub else f"isa {d['isa']}"
        return f"<th class=impl>{_e(name)}<small>{_e(sub)}</small></th>"

    machines = [(machine, len(list(group)))
                for machine, group in groupby(info.get(impl, {}).get("machine") for impl in impls)]
    if not any(machine for machine, _ in machines):
        return "<tr>" + _DIMENSIONS.format(span="") + "".join(map(head, impls)) + "</tr>"
    return ("<tr>" + _DIMENSIONS.format(span=" rowspan=2") + "".join(
        f"<th class=machine colspan={n}>{_e(machine or '')}</th>" for machine, n in machines) + "</tr><tr>"
        + "".join(map(head, impls)) + "</tr>")


def _sparse(rows: list[tuple[str, ...]], impls: list[str], cells: dict[tuple[str, ...], Cell]
            ) -> list[list[tuple[int, Cell]]]:
    """Each row's cells that hold results, as (column, cell) in column order: the matrix without its empty cells."""
    number = {row: i for i, row in enumerate(rows)}
    column = {impl: i for i, impl in enumerate(impls)}
    filled: list[list[tuple[int, Cell]]] = [[] for _ in rows]
    for key, cell in cells.items():
        filled[number[key[:-1]]].append((column[key[-1]], cell))
    for row_cells in filled:
        row_cells.sort(key=lambda item: item[0])
    return filled


#: Where a report's added sections go: before this (see :func:`with_sections`).
FOOTER = "<footer>Generated by simdbind conformance"


def with_sections(page: str, sections: Sequence[str]) -> str:
    """A report page with more sections (``simdbind conformance coverage``'s tables of the run) before its footer;
    ValueError for a page that is not a report of this module's."""
    at = page.rfind(FOOTER)
    if at < 0:
        raise ValueError("not an HTML report of simdbind conformance")
    return page[:at] + "".join(sections) + "\n" + page[at:]


def html_report(run: Run, max_cases_per_cell: int = 200, max_failures: int = 100) -> str:
    rows, impls, cells = matrix(run)
    info = {i["name"]: i for i in run.meta.get("environment", {}).get("implementations", [])}
    t = totals(run)
    bad = t["fail"] + t["error"]
    body: list[str] = []
    sections: list[tuple[int, int, str]] = []
    failed: list[tuple[CaseResult, str]] = []
    for number, (row, row_cells) in enumerate(zip(rows, _sparse(rows, impls, cells))):
        tolerances = sorted(set().union(*[c.tolerances for _, c in row_cells]))
        tol = tolerances[0] if len(tolerances) == 1 else (f"{len(tolerances)} tolerances" if tolerances else "")
        text = " ".join(row).lower()
        body.append(f"<tr class=row data-status={_row_status([c for _, c in row_cells])} data-text='{_e(text)}'>"
                    f"<td class=fn><small>{_e(row[0])}</small>{_e(row[1])}</td>"
                    + "".join(f"<td class=dim>{_e(x)}</td>" for x in row[2:])
                    + f"<td class=tol title='{_e('; '.join(tolerances))}'>{_e(tol)}</td>")
        next_column = 0
        for column, cell in row_cells:
            if column > next_column:
                body.append(_empty(column - next_column))
            next_column = column + 1
            listed = [r for r in cell.results if r.status != "skip"]
            anchor = f"cases-{number}-{column}" if listed else None
            body.append(_cell(cell, anchor))
            if anchor:
                severity = 0 if cell.bad else (1 if cell.counts["known"] else 2)
                sections.append((severity, len(sections), _section(anchor, row, impls[column], cell, listed,
                                                                   max_cases_per_cell)))
                failed += [(r, anchor) for r in listed if r.status in BAD]
        if len(impls) > next_column:
            body.append(_empty(len(impls) - next_column))
        body.append("</tr>")
    out = _header(run, bad) + [_badges(run)]
    if failed:
        out.append(_failures(failed, max_failures))
    out += [_details(run), _controls(bad), "<table class=matrix><thead>" + _column_heads(impls, info) + "</thead>"
            "<tbody>"] + body + ["</tbody></table>"]
    if sections:
        out.append("<h2>Cases that did not pass</h2>")
        out.extend(text for _, _, text in sorted(sections))  # failures first, then known, then xpass
    out.append(f"{FOOTER} ({FORMAT}). Each case reproduces alone with its repro command; inputs are seeded from the "
               "run's seed and the case descriptor.</footer>")
    out.append(f"</main><script>{_JS}</script></body></html>")
    return "\n".join(out)


def _section(anchor: str, row: tuple[str, ...], impl: str, cell: Cell, listed: list[CaseResult], limit: int) -> str:
    kind = "fail" if cell.bad else ("known" if cell.counts["known"] else "xpass")
    title = " · ".join(x for x in row[1:] if x and x != "-") + f" on {impl}"
    counts = ", ".join(f"{n} {s}" for s, n in cell.counts.items() if n)
    parts = [f"<section class='cases {kind}' id='{anchor}'><h3>{_e(title)} <small>({_e(counts)})</small></h3>",
             "<table class=list><tr><th>status</th><th>case and repro</th><th>detail</th></tr>"]
    order = {"fail": 0, "error": 1, "known": 2, "xpass": 3}
    for r in sorted(listed, key=lambda r: order.get(r.status, 9))[:limit]:
        detail = r.detail.splitlines()[0] if r.detail else ""
        deviation = f" <code>{_e(r.deviation)}</code>" if r.deviation else ""
        parts.append(f"<tr><td class='st {_e(r.status)}'>{_e(r.status)}{deviation}</td><td><code class=desc>"
                     f"{_e(r.descriptor)}</code>{_repro(r)}</td><td class=detail>{_e(detail[:400])}</td></tr>")
    parts.append("</table>")
    if len(listed) > limit:
        parts.append(f"<p class=more>... and {len(listed) - limit} more in the JSON report</p>")
    parts.append("</section>")
    return "\n".join(parts)
