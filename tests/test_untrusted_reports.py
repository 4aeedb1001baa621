"""Reports from other machines are untrusted input: what `merge` and `diff` make of them stays in proportion to
them (pages linear in the results, nesting and sizes bounded with a one-line error), two reports never share a
column, and no character from a report acts on a terminal, a JUnit file, a Markdown or an HTML page. `diff` says
how two runs differ besides their results; the seed rule is one for the writer and the reader."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdbind import cli
from simdbind.conformance import merge, report, runner, schema
from simdbind.conformance.options import MAX_SEED
from simdbind.conformance.printable import printable
from simdbind.conformance.report_html import html_report


def result(implementation: str = "bundled-avx2", function: str = "eltwise", status: str = "pass", **fields: Any
           ) -> dict[str, Any]:
    return {"implementation": implementation, "function": function, "descriptor": f"{function} size=17",
            "group": "main", "dtype": "float32", "layout": "-", "status": status, "max_ulp": 1.0, "mismatches": 0,
            "total": 17, **fields}


def document(results: list[dict[str, Any]], cpu: str = "cpu", **meta: Any) -> dict[str, Any]:
    names = list(dict.fromkeys(r["implementation"] for r in results))
    return {"format": schema.FORMAT, "meta": {"seed": 1, "profile": "ci", **meta, "environment": {
        "cpu_model": cpu, "implementations": [{"name": name} for name in names]}}, "seconds": 1.0, "results": results}


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def diagonal(n: int) -> dict[str, Any]:
    """n results, each in its own row and its own column: the sparsest matrix n results can make."""
    return document([result(f"impl-{i}", f"fn{i}", "fail" if i % 7 == 0 else "pass") for i in range(n)])


# -- size: linear in the results -----------------------------------------------------------------------------------
class Table(HTMLParser):
    """The matrix's rows, each as the colspans of its result cells (an empty cell spans its columns)."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: list[list[tuple[str, int]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "tr" and values.get("class") == "row":
            self.rows.append([])
        elif tag == "td" and "cell" in (values.get("class") or ""):
            self.rows[-1].append((values["class"] or "", int(values.get("colspan") or 1)))


def test_merged_pages_grow_linearly_with_the_results(tmp_path):
    """A merge of reports that share no rows is a sparse matrix: 4 times the results make about 4 times the page
    (a full grid would be 16 times), and the table keeps one cell per result and every row's width."""
    sizes = {}
    for n in (200, 800):
        path = write(tmp_path / f"diagonal-{n}.json", diagonal(n))
        merged = merge.merge([str(path)], [schema.read_report(path)])
        page, markdown = html_report(merged), report.markdown(merged)
        sizes[n] = (len(page.encode()), len(markdown.encode()))
        table = Table(page)
        assert len(table.rows) == n
        assert all(sum(span for _, span in row) == n for row in table.rows)  # every row spans every column
        assert sum(cls != "cell none" for row in table.rows for cls, _ in row) == n
        assert markdown.count("| ✅ 1/1 · 1 ulp |") + markdown.count("| ❌ 0/1 · 1 ulp |") == n
    for kind in (0, 1):
        assert sizes[800][kind] < 4.5 * sizes[200][kind], sizes
        assert sizes[800][kind] < 2000 * 800, sizes  # bytes per result


def test_a_dense_matrix_is_drawn_as_before():
    """Full rows keep one cell per column (no colspan) and the Markdown keeps its grid."""
    results = [result(impl, fn) for fn in ("eltwise", "softmax") for impl in ("a", "b", "c")]
    run = schema.check_report(document(results))
    assert "colspan" not in html_report(run).split("<tbody>")[1]
    assert "| eltwise |  | float32 | - | main | ✅ 1/1 · 1 ulp | ✅ 1/1 · 1 ulp | ✅ 1/1 · 1 ulp |" in \
        report.markdown(run)
    gaps = schema.check_report(document(results[:2] + results[4:]))  # softmax on a missing: one empty cell
    assert html_report(gaps).count('<td class="cell none"><div>–</div></td>') == 2


def test_the_grid_rule():
    assert report.dense_enough(2, 3, 6) and report.dense_enough(64, 64, 1)  # small grids are always drawn
    assert report.dense_enough(1000, 10, 2500) and not report.dense_enough(1000, 10, 2499)


# -- nesting depth and sizes ---------------------------------------------------------------------------------------
def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text("[]{}\"\\ab,:\n\u2028"),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("[]{}\"\\k"), inner,
                                                                                       max_size=3), max_leaves=30)


@given(json_values, st.booleans())
@settings(max_examples=300, deadline=None)
def test_the_nesting_depth_is_counted_without_parsing(value, ascii_only):
    """Brackets inside strings (escaped quotes and backslashes included) do not count."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert schema.nesting_depth(text.encode()) == depth_of(value)


def test_the_depth_is_counted_across_chunks():
    deep = b"[" * 5_000_000 + b"]" * 5_000_000  # more brackets than one chunk of the count
    assert schema.nesting_depth(deep) == 5_000_000
    assert schema.nesting_depth(b"[]" * 3_000_000 + b"[[[1]]]") == 3


def test_a_deeply_nested_report_is_one_line_for_merge_and_diff(tmp_path, capsys):
    """600 levels inside a field that reports keep as they are: the merged JSON would recurse past Python's limit."""
    data = document([result()])
    nested: Any = 1
    for _ in range(600):
        nested = {"x": nested}
    data["meta"]["environment"]["implementations"][0]["extra"] = nested
    bad, good = write(tmp_path / "deep.json", data), write(tmp_path / "good.json", document([result()]))
    out = tmp_path / "merged.json"
    for command in (["merge", str(bad), str(good), "--report-json", str(out)], ["diff", str(good), str(bad)]):
        assert cli.main(["conformance", *command]) == 2
        err = capsys.readouterr().err
        # the document, meta, environment, implementations and the implementation, then 600 more
        assert err == f"simdbind: conformance {command[0]}: {bad}: not a conformance report (JSON nested 605 " \
                      f"deep, at most {schema.MAX_DEPTH})\n"
    assert not out.exists()


def test_the_writers_reports_nest_well_within_the_bound(tmp_path):
    from simdbind.conformance.implementations import implementations

    impls = implementations(["bundled"], "all")[:1]
    run = runner.run(impls, ["eltwise"], "smoke", seed=1)
    run.meta = report.make_meta(impls, profile="smoke", seed=1)
    depth = schema.nesting_depth(report.write_json(run, tmp_path / "r.json").read_bytes())
    merged = report.write_json(merge.merge(["r.json"], [schema.read_report(tmp_path / "r.json")]), tmp_path / "m.json")
    assert depth <= schema.nesting_depth(merged.read_bytes()) <= schema.MAX_DEPTH // 4


def test_too_many_results(tmp_path, capsys, monkeypatch):
    path = write(tmp_path / "many.json", document([result(descriptor=f"eltwise size={i}") for i in range(6)]))
    monkeypatch.setattr(schema, "MAX_RESULTS", 5)
    assert cli.main(["conformance", "diff", str(path), str(path)]) == 2
    assert capsys.readouterr().err == f"simdbind: conformance diff: {path}: results: 6 results (at most 5)\n"
    monkeypatch.setattr(schema, "MAX_RESULTS", 6)  # each report is within the bound, the two together are not
    copy = write(tmp_path / "copy.json", json.loads(path.read_text()))
    assert cli.main(["conformance", "merge", str(path), str(copy)]) == 2
    assert capsys.readouterr().err == "simdbind: conformance merge: the reports hold 12 results together, more " \
                                      "than one report can (6)\n"


@pytest.mark.parametrize("name, content, rule", [
    ("missing", None, "cannot read it: No such file or directory"),
    ("invalid JSON", b'{"format": ', "not valid JSON: Expecting value: line 1 column 12 (char 11)"),
    ("wrong schema", json.dumps({"format": schema.FORMAT, "results": [{"status": "pass"}]}).encode(),
     "results[0]: missing key 'implementation'"),
    ("too deep", b"[" * 40 + b"]" * 40, f"not a conformance report (JSON nested 40 deep, at most {schema.MAX_DEPTH})"),
    ("too big", b" " * 2000, "2000 bytes, larger than a report can be (1000 bytes)"),
    ("seed out of range", json.dumps(document([result()], seed=MAX_SEED + 1)).encode(),
     f"meta.seed: {MAX_SEED + 1} outside 0 .. {MAX_SEED} (the seeds a run takes)"),
])
@pytest.mark.parametrize("command", ["merge", "diff"])
def test_loading_errors_are_one_line_naming_the_file_and_the_rule(tmp_path, capsys, monkeypatch, command, name,
                                                                   content, rule):
    monkeypatch.setattr(schema, "MAX_FILE_BYTES", 1000)
    good, bad = write(tmp_path / "good.json", document([result()])), tmp_path / "bad.json"
    if content is not None:
        bad.write_bytes(content)
    assert cli.main(["conformance", command, str(good), str(bad)]) == 2
    assert capsys.readouterr().err == f"simdbind: conformance {command}: {bad}: {rule}\n"


def test_a_report_too_large_for_the_memory_left_is_one_line(tmp_path, capsys, monkeypatch):
    path = write(tmp_path / "r.json", document([result()]))

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(schema.json, "loads", exhausted)
    assert cli.main(["conformance", "merge", str(path)]) == 2
    assert capsys.readouterr().err == f"simdbind: conformance merge: {path}: {path.stat().st_size} bytes, too large " \
                                      "to read in the memory left\n"


# -- columns -------------------------------------------------------------------------------------------------------
def test_labels_that_would_read_alike_stay_apart(tmp_path):
    """Machine "A / B" with implementation "C", and machine "A" with implementation "B / C", both read "A / B / C"."""
    first = write(tmp_path / "one.json", document([result("C", status="fail")], cpu="A / B"))
    second = write(tmp_path / "two.json", document([result("B / C")], cpu="A"))
    merged = merge.merge([str(first), str(second)], [schema.read_report(first), schema.read_report(second)])
    columns = [c["name"] for c in merged.meta["environment"]["implementations"]]
    assert columns == ["A / B / C [1]", "A / B / C [2]"]
    assert [(r.implementation, r.status) for r in merged.results] == [("A / B / C [1]", "fail"),
                                                                      ("A / B / C [2]", "pass")]
    _, names, cells = report.matrix(merged)
    assert names == columns and sorted(cell.counts["fail"] for cell in cells.values()) == [0, 1]


names = st.lists(st.sampled_from(["a", "b", " / ", " (", ")", " [", "]", "1", "2", ".json"]), max_size=5).map("".join)


@given(st.lists(st.tuples(st.sampled_from(["x.json", "y.json", "d/x.json", "a (b).json", "1]"]), names,
                          st.lists(names, min_size=1, max_size=3, unique=True),
                          st.none() | st.sampled_from(["1/2", "2/2"])), min_size=1, max_size=5,
                unique_by=lambda report: report[0]))
@settings(max_examples=300, deadline=None)
def test_no_two_reports_share_a_column(reports):
    """Whatever the machines, implementations and file names, each column of a merge holds one report's results
    of one implementation, or, for the shards of one run, that run's."""
    files = [file for file, *_ in reports]
    runs = []
    for i, (file, cpu, impls, shard) in enumerate(reports):
        results = [result(impl, descriptor=f"{file}\n{impl}") for impl in impls]
        runs.append(schema.check_report(document(results, cpu=cpu or "unknown CPU",
                                                 **({"shard": shard} if shard else {}))))
    merged = merge.merge(files, runs)
    columns = [c["name"] for c in merged.meta["environment"]["implementations"]]
    assert len(columns) == len(set(columns))
    owners: dict[str, set[tuple[str, ...]]] = {}
    first = merge.runs_of(runs, merge.machines(runs))
    for r in merged.results:
        file, impl = r.descriptor.split("\n", 1)  # the result's own report and implementation
        index = files.index(file)
        owner = ("run", str(first[index])) if runs[index].meta.get("shard") else ("report", file)
        owners.setdefault(r.implementation, set()).add(owner + (impl,))
        assert r.implementation in columns
    assert all(len(owner) == 1 for owner in owners.values()), owners


def test_the_shards_of_one_run_share_its_columns(tmp_path, capsys):
    whole = [result(impl, descriptor=f"eltwise size={size}", status="fail" if size == 3 else "pass")
             for size in range(1, 8) for impl in ("bundled-base", "bundled-avx2")]
    paths = []
    for k in (1, 2, 3):
        part = [r for i, r in enumerate(whole) if i // 2 % 3 == k - 1]
        paths.append(write(tmp_path / f"shard{k}.json", document(part, shard=f"{k}/3")))
    merged_path = tmp_path / "merged.json"
    assert cli.main(["conformance", "merge", *map(str, paths), "--report-json", str(merged_path)]) == 0
    merged = schema.read_report(merged_path)
    assert [c["name"] for c in merged.meta["environment"]["implementations"]] == ["cpu / bundled-base",
                                                                                   "cpu / bundled-avx2"]
    got = Counter((r.implementation.split(" / ")[1], r.descriptor, r.status) for r in merged.results)
    assert got == Counter((r["implementation"], r["descriptor"], r["status"]) for r in whole)
    assert [s["shard"] for s in merged.meta["merged"]] == ["1/3", "2/3", "3/3"]
    assert "partial" not in capsys.readouterr().out
    assert cli.main(["conformance", "merge", str(paths[0]), str(paths[2])]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"{paths[0]}: partial, 2 of the 3 shards of its run"


def test_shards_of_two_builds_keep_their_own_columns(tmp_path):
    """Shard 1/2 of one source revision and shard 2/2 of another are not one run."""
    paths = []
    for k, source in ((1, "abc123"), (2, "def456")):
        data = document([result(descriptor=f"eltwise size={k}")], shard=f"{k}/2")
        data["meta"]["environment"]["source"] = source
        paths.append(write(tmp_path / f"{source}.json", data))
    merged = merge.merge(list(map(str, paths)), [schema.read_report(p) for p in paths])
    assert [c["name"] for c in merged.meta["environment"]["implementations"]] == [
        "cpu / bundled-avx2 (abc123.json)", "cpu / bundled-avx2 (def456.json)"]


# -- control characters --------------------------------------------------------------------------------------------
HOSTILE_TEXT = ("\x1b[2J\x1b]0;title\x07\x1b]52;c;cm0gLXJmIH4=\x07\x9b31m\u202eevil\u2066\x00\x08\r\x7f"
                "\u2028\ufffe\x0bend")


def shown_safely(text: str, keep: str = "\n") -> bool:
    """No character that acts on a terminal or page: nothing str.isprintable() refuses but the kept ones."""
    return all(char.isprintable() or char in keep for char in text)


def hostile_run(tag: str) -> dict[str, Any]:
    fields = {name: f"{tag}-{name} {HOSTILE_TEXT}" for name in ("descriptor", "detail", "repro", "deviation",
                                                                "variant", "dtype", "layout", "group", "tolerance")}
    results = [result(f"impl {HOSTILE_TEXT}", status=status, **fields) for status in ("pass", "fail", "known", "skip")]
    for i, r in enumerate(results):
        r["descriptor"] += f" #{i}"
    data = document(results, cpu=f"cpu {HOSTILE_TEXT}", profile=f"profile {HOSTILE_TEXT}",
                    command=f"cmd {HOSTILE_TEXT}", filter=f"filter {HOSTILE_TEXT}")
    data["meta"]["environment"]["implementations"][0].update(version=HOSTILE_TEXT, path=HOSTILE_TEXT)
    return data


def test_printable_escapes_what_acts_and_keeps_what_reads():
    assert printable("plain text: é, 漢字, ✅ (ok)") == "plain text: é, 漢字, ✅ (ok)"
    assert printable("\x1b[2J\x9b\u202e\U000e0001\x00 x") == "\\x1b[2J\\x9b\\u202e\\U000e0001\\x00 x"
    assert printable("a\nb\tc", keep="\n") == "a\nb\\x09c"
    for code in list(range(0x20)) + list(range(0x7f, 0xa0)) + [0x200e, 0x202a, 0x202e, 0x2066, 0x2069, 0x2028]:
        assert shown_safely(printable(chr(code)), keep="") and unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl")


def test_diff_prints_nothing_from_reports_raw(tmp_path):
    old = write(tmp_path / f"old{HOSTILE_TEXT[:4]}.json", hostile_run("old"))
    flipped = hostile_run("old")
    for r in flipped["results"]:
        r["status"] = {"pass": "fail", "fail": "pass"}.get(r["status"], r["status"])
    flipped["meta"]["seed"] = 2
    new = write(tmp_path / "new.json", flipped)
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "diff", str(old), str(new)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and out.stderr == ""
    assert "REGRESSIONS (1):" in out.stdout and "FIXES (1):" in out.stdout and "\\x1b[2J" in out.stdout
    assert shown_safely(out.stdout), out.stdout


def test_merge_and_the_run_summary_print_nothing_from_reports_raw(tmp_path, capsys):
    hostile = write(tmp_path / f"h{HOSTILE_TEXT[:4]}.json", hostile_run("h") | {"meta": {
        **hostile_run("h")["meta"], "interrupted": True}})
    assert cli.main(["conformance", "merge", str(hostile), "--report-md", str(tmp_path / "m.md")]) == 0
    captured = capsys.readouterr()
    assert "partial, interrupted" in captured.out and shown_safely(captured.out + captured.err)
    run = schema.read_report(hostile)
    summary = report.format_summary(run)
    assert "\\x1b[2J" in summary and shown_safely(summary)
    bad_key = json.loads(hostile.read_text())
    bad_key["meta"]["environment"]["packages"] = {HOSTILE_TEXT: 1}
    write(hostile, bad_key)
    assert cli.main(["conformance", "merge", str(hostile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and shown_safely(err) and "must be a string, not int" in err


def test_junit_xml_always_parses_and_shows_control_characters_escaped(tmp_path):
    everything = "".join(chr(c) for c in range(0x100)) + "\ud800\ufffe\uffff\U0010ffff"
    results = [runner.CaseResult(f"impl{everything}", f"fn{everything}", f"d{i}{everything}", "g", "f32", "-", status,
                                 detail=f"first{everything}\nsecond", repro=f"repro{everything}",
                                 deviation=f"dev{everything}") for i, status in enumerate(runner.STATUSES)]
    run = runner.Run(results, 1.0, {"profile": everything, "seed": 1, "command": everything})
    root = ET.parse(report.write_junit(run, tmp_path / "r.xml")).getroot()
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and failure.get("message", "").startswith("first\\x00\\x01")
    assert failure.text and "\nsecond\nrepro: repro\\x00" in failure.text and "\\x1b" in failure.text
    assert "\\ud800" in failure.text and "\\ufffe" in failure.text
    for element in root.iter():
        assert shown_safely(element.text or "", keep="\n\t"), element.tag
        assert all(shown_safely(value, keep="") for value in element.attrib.values()), element.tag


def test_markdown_and_html_show_control_characters_escaped(tmp_path):
    run = schema.check_report(hostile_run("h"))
    markdown = report.markdown(run)
    assert "\\x1b[2J" in markdown and shown_safely(markdown)
    page = html_report(run)
    assert "\\u202eevil" in page and shown_safely(page)


# -- diff: what else differs ---------------------------------------------------------------------------------------
def test_diff_says_how_the_runs_differ_besides_their_results(tmp_path):
    old = schema.check_report(document([result("a"), result("b")], seed=5, profile="ci"))
    new = schema.check_report(document([result("a"), result("c")], seed=7, profile="full", shard="2/3",
                                       interrupted=True))
    text = report.format_diff(report.diff(old, new), "old.json", "new.json").splitlines()
    assert text[1] == "the runs differ in seed (5 -> 7); profile (ci -> full); shard (the whole run -> 2/3); " \
                      "implementations (only in old.json: b; only in new.json: c): results may change for that " \
                      "reason too"
    assert text[2] == "new.json is a partial run (interrupted, shard 2/3): the cases it did not run count as removed"
    assert len(text) == 3  # nothing changed in the cases both ran
    same = report.format_diff(report.diff(old, old), "old.json", "old.json")
    assert len(same.splitlines()) == 1


def test_diff_reads_an_interrupted_report_and_says_it_is_partial(tmp_path):
    whole = write(tmp_path / "whole.json", document([result(descriptor=f"eltwise size={i}") for i in range(3)]))
    cut = write(tmp_path / "cut.json", document([result(descriptor="eltwise size=0")], interrupted=True))
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "diff", str(whole), str(cut)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1] == f"{cut} is a partial run (interrupted): the cases it did not run count " \
                                         "as removed"
    assert "1 unchanged, 0 added, 2 removed" in out.stdout


# -- schema: partial runs and seeds --------------------------------------------------------------------------------
@pytest.mark.parametrize("meta, problem", [
    ({"interrupted": True}, None), ({"interrupted": False}, None), ({"shard": "3/3"}, None),
    ({"shard": "12/40"}, None),
    ({"interrupted": 1}, "meta.interrupted: must be true or false, not int"),
    ({"interrupted": "yes"}, "meta.interrupted: must be true or false, not str"),
    ({"shard": "4/3"}, "meta.shard: '4/3' is not K/N with 1 <= K <= N"),
    ({"shard": "0/3"}, "meta.shard: '0/3' is not K/N with 1 <= K <= N"),
    ({"shard": "1/3 "}, "meta.shard: '1/3 ' is not K/N with 1 <= K <= N"),
    ({"shard": 1}, "meta.shard: must be a string, not int"),
    ({"seed": 0}, None), ({"seed": MAX_SEED}, None),
    ({"seed": MAX_SEED + 1}, f"meta.seed: {MAX_SEED + 1} outside 0 .. {MAX_SEED} (the seeds a run takes)"),
    ({"seed": -1}, f"meta.seed: -1 outside 0 .. {MAX_SEED} (the seeds a run takes)"),
    ({"seed": True}, "meta.seed: must be an integer, not bool"),
])
def test_the_schema_reads_partial_runs_and_seeds_by_one_rule(meta, problem):
    data = document([result()], **meta)
    if problem is None:
        assert {k: schema.check_report(data).meta[k] for k in meta} == meta
    else:
        with pytest.raises(schema.ReportError) as error:
            schema.check_report(data)
        assert str(error.value) == problem


@pytest.mark.parametrize("seed", [0, 1, MAX_SEED, MAX_SEED + 1, 2 ** 64, -7])
def test_the_writer_writes_only_seeds_the_reader_reads(tmp_path, seed):
    """make_meta refuses what a report cannot hold, so a report written is a report that diff and merge read."""
    try:
        meta = report.make_meta([], profile="ci", seed=seed)
    except ValueError as error:
        assert not 0 <= seed <= MAX_SEED and str(error).startswith(f"seed {seed} outside 0 .. {MAX_SEED}")
        return
    path = report.write_json(runner.Run([runner.CaseResult(**result())], 1.0, meta), tmp_path / "r.json")
    assert schema.read_report(path).meta["seed"] == seed and 0 <= seed <= MAX_SEED


def test_merged_reports_keep_which_inputs_were_partial(tmp_path):
    paths = [write(tmp_path / "a.json", document([result()], interrupted=True)),
             write(tmp_path / "b.json", document([result()], cpu="other", shard="1/2"))]
    merged = merge.merge(list(map(str, paths)), [schema.read_report(p) for p in paths])
    again = schema.read_report(report.write_json(merged, tmp_path / "m.json"))
    assert again.meta["interrupted"] is True
    assert [(s.get("interrupted"), s.get("shard")) for s in again.meta["merged"]] == [(True, None), (None, "1/2")]
    assert merge.partial_notes(list(map(str, paths)), [schema.read_report(p) for p in paths]) == [
        f"{paths[0]}: partial, interrupted", f"{paths[1]}: partial, 1 of the 2 shards of its run"]
