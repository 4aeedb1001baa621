"""`simdbind conformance merge`: reports of real runs become one matrix (machine and ISA as columns); report files
are untrusted input (each malformed or hostile file gives one line naming it and exit 2); nothing from a report
reaches the HTML or the Markdown unescaped."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from simdbind import cli
from simdbind.conformance import report, schema
from simdbind.conformance.report_html import html_report

ISAS = ("sse41", "avx2")


def conformance_run(tmp_path: Path, isa: str, name: str) -> Path:
    """A real run of the smoke profile at one ISA of the bundled library, as a CI runner would make it."""
    path = tmp_path / name
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "--library", "bundled", "--profile",
                          "smoke", "--isa", isa, "--no-progress", "--report-json", str(path), "--junit-xml", "", "--report-md", "",
                          "--report-html", ""], capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1) and path.exists(), out.stderr
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("runs")
    return {isa: conformance_run(directory, isa, f"{isa}.json") for isa in ISAS}


def merged_of(tmp_path, *paths, fmt="json"):
    out_file = tmp_path / f"merged.{fmt}"
    assert cli.main(["conformance", "merge", *map(str, paths), f"--report-{fmt}", str(out_file)]) == 0
    return out_file


def cell_counts(run) -> Counter:
    return Counter((r.implementation, r.function, r.variant, r.dtype, r.layout, r.group, r.status)
                   for r in run.results)


def test_two_isas_of_one_machine_become_two_columns_under_it(runs, tmp_path, capsys):
    single = {isa: report.read_json(path) for isa, path in runs.items()}
    cpu = single["sse41"].meta["environment"]["cpu_model"]
    merged = report.read_json(merged_of(tmp_path, *runs.values()))  # the merged JSON passes the schema too
    columns = merged.meta["environment"]["implementations"]
    assert [c["name"] for c in columns] == [f"{cpu} / bundled-sse41", f"{cpu} / bundled-avx2"]
    assert [(c["machine"], c["implementation"], c["isa"]) for c in columns] == \
        [(cpu, "bundled-sse41", "sse41"), (cpu, "bundled-avx2", "avx2")]
    # every cell holds exactly the results of its report, relabelled
    expected = Counter()
    for run in single.values():
        expected.update({(f"{cpu} / {k[0]}",) + k[1:]: n for k, n in cell_counts(run).items()})
    assert cell_counts(merged) == expected
    assert len(merged.results) == sum(len(run.results) for run in single.values()) > 100
    assert [s["file"] for s in merged.meta["merged"]] == [str(p) for p in runs.values()]
    assert [s["summary"]["pass"] for s in merged.meta["merged"]] == \
        [sum(r.status == "pass" for r in run.results) for run in single.values()]
    assert capsys.readouterr().out.startswith("merged 2 reports: 2 columns on 1 machine, ")


def test_another_machine_gets_its_own_column_group_and_same_cpu_builds_their_file_names(runs, tmp_path):
    other = json.loads(runs["avx2"].read_text())
    other["meta"]["environment"]["cpu_model"] = "Intel(R) Xeon(R) Platinum 8480+"
    (tmp_path / "xeon.json").write_text(json.dumps(other))
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    (rebuilt / "sse41-debug.json").write_text(runs["sse41"].read_text())  # the same CPU and ISA, another build
    paths = [runs["sse41"], tmp_path / "xeon.json", runs["avx2"], rebuilt / "sse41-debug.json"]
    merged = report.read_json(merged_of(tmp_path, *paths))
    cpu = json.loads(runs["sse41"].read_text())["meta"]["environment"]["cpu_model"]
    assert [c["name"] for c in merged.meta["environment"]["implementations"]] == [
        f"{cpu} / bundled-sse41 (sse41.json)", f"{cpu} / bundled-avx2", f"{cpu} / bundled-sse41 (sse41-debug.json)",
        "Intel(R) Xeon(R) Platinum 8480+ / bundled-avx2"]
    rows, columns, cells = report.matrix(merged)
    assert len(columns) == 4 and len(rows) == len(report.matrix(report.read_json(runs["sse41"]))[0])
    text = html_report(merged)
    heads = re.findall(r"<th class=machine colspan=(\d+)>([^<]*)</th>", text)
    assert heads == [("3", cpu), ("1", "Intel(R) Xeon(R) Platinum 8480+")]
    assert re.findall(r"<th class=impl>([^<]*)<small>", text) == [
        "bundled-sse41 (sse41.json)", "bundled-avx2", "bundled-sse41 (sse41-debug.json)", "bundled-avx2"]


def test_columns_of_one_machine_stay_side_by_side(runs, tmp_path):
    other = json.loads(runs["avx2"].read_text())
    other["meta"]["environment"]["cpu_model"] = "Ampere Altra"
    (tmp_path / "arm.json").write_text(json.dumps(other))
    merged = report.read_json(merged_of(tmp_path, runs["sse41"], tmp_path / "arm.json", runs["avx2"]))
    cpu = merged.meta["environment"]["implementations"][0]["machine"]
    assert [c["machine"] for c in merged.meta["environment"]["implementations"]] == [cpu, cpu, "Ampere Altra"]
    assert "<th class=machine colspan=2>" in html_report(merged)


def test_merged_markdown_and_html_start_with_what_failed(runs, tmp_path):
    failing = json.loads(runs["avx2"].read_text())
    victim = next(r for r in failing["results"] if r["status"] == "pass")
    victim.update(status="fail", detail="1/17 outside exact, max ulp 100", repro="simdbind conformance --case 'x y'")
    failing["summary"] = dict(Counter(r["status"] for r in failing["results"]))
    (tmp_path / "failing.json").write_text(json.dumps(failing))
    markdown = merged_of(tmp_path, runs["sse41"], tmp_path / "failing.json", fmt="md").read_text()
    assert markdown.startswith("## simdbind conformance: ❌ FAILED")
    assert markdown.index("### Failures") < markdown.index("| report | machine |") < markdown.index("| function |")
    assert f"/ bundled-avx2 | `{victim['descriptor']}` | 1/17 outside exact, max ulp 100 | " \
           "`simdbind conformance --case 'x y'` |" in markdown
    page = merged_of(tmp_path, runs["sse41"], tmp_path / "failing.json", fmt="html").read_text()
    assert page.index("<section class=failures") < page.index("<table class=matrix>")
    assert "<option value=fail selected>" in page


# -- untrusted input ---------------------------------------------------------------------------------------------
def valid() -> dict:
    result = {"implementation": "bundled-avx2", "function": "eltwise", "descriptor": "eltwise op=sum", "group": "main",
              "dtype": "float32", "layout": "-", "status": "pass", "max_ulp": 1.0, "mismatches": 0, "total": 17}
    return {"format": schema.FORMAT, "meta": {"environment": {"cpu_model": "x", "implementations": [
        {"name": "bundled-avx2", "isa": "avx2"}]}}, "seconds": 0.5, "summary": {"pass": 1}, "results": [result]}


def edited(change) -> bytes:
    data = valid()
    change(data)
    return json.dumps(data).encode()


def setitem(path: str, value):
    def change(data):
        *keys, last = path.split(".")
        for key in keys:
            data = data[int(key)] if isinstance(data, list) else data[key]
        if value is KeyError:
            del data[last]
        else:
            data[int(last) if isinstance(data, list) else last] = value
    return change


HOSTILE = [  # (name, file content, expected fragment of the one-line message)
    ("not UTF-8", b'\xff\xfe{"format": 1}', "not UTF-8 text (byte 0xff at offset 0)"),
    ("not JSON", b"<html>this is a web page</html>", "not valid JSON: Expecting value: line 1 column 1"),
    ("empty", b"", "not valid JSON: Expecting value"),
    ("truncated", json.dumps(valid()).encode()[:-5], "not valid JSON: "),
    ("a list", b"[1, 2]", "not a conformance report (a JSON list, not an object)"),
    ("no results", b'{"format": "simdbind-conformance/1"}', "not a conformance report (no 'format' or no 'results')"),
    ("wrong format tag", edited(setitem("format", "simdbind-conformance/9")),
     "format: 'simdbind-conformance/9' is not 'simdbind-conformance/1'"),
    ("format tag of another type", edited(setitem("format", ["<script>"])), "format: ['<script>'] is not"),
    ("results not a list", edited(setitem("results", {"a": 1})), "results: must be an array, not dict"),
    ("result not an object", edited(setitem("results", ["pass"])), "results[0]: must be an object, not str"),
    ("missing key", edited(setitem("results.0.status", KeyError)), "results[0]: missing key 'status'"),
    ("wrong type", edited(setitem("results.0.descriptor", 12)), "results[0].descriptor: must be a string, not int"),
    ("unknown status", edited(setitem("results.0.status", "exploded")),
     "results[0].status: 'exploded' is not one of pass, fail, error, skip, known, xpass"),
    ("NaN", json.dumps(valid()).replace('"max_ulp": 1.0', '"max_ulp": NaN').encode(),
     "NaN is not allowed in a report"),
    ("huge float", json.dumps(valid()).replace('"seconds": 0.5', '"seconds": 1e999').encode(),
     "seconds: inf is not a finite number >= 0"),
    ("negative", edited(setitem("results.0.max_ulp", -3)), "results[0].max_ulp: -3 is not a number >= 0"),
    ("huge integer", edited(setitem("results.0.total", 10 ** 30)),
     "results[0].total: integer 1000000000000000000000000000000 outside 0 .. 2**63-1"),
    ("integer of 5000 digits", json.dumps(valid()).replace('"total": 17', '"total": ' + "9" * 5000).encode(),
     "not valid JSON: Exceeds the limit (4300 digits) for integer string conversion"),
    ("boolean for a count", edited(setitem("results.0.mismatches", True)),
     "results[0].mismatches: must be an integer, not bool"),
    ("deeply nested", b'{"format": "simdbind-conformance/1", "results": ' + b"[" * 200000 + b"]" * 200000 + b"}",
     f"not a conformance report (JSON nested 200001 deep, at most {schema.MAX_DEPTH})"),
    ("gigantic string", edited(setitem("results.0.detail", "<script>" * 140000)),
     "results[0].detail: string of 1120000 characters (at most 1048576)"),
    ("lone surrogate", json.dumps(valid()).replace("op=sum", "\\ud800").encode(),
     "results[0].descriptor: string with a lone surrogate"),
    ("summary that lies", edited(setitem("summary", {"pass": 0, "fail": 1})), "summary.pass: 0 but the results have 1"),
    ("environment of the wrong type", edited(setitem("meta.environment", "<script>")),
     "meta.environment: must be an object, not str"),
    ("implementation without a name", edited(setitem("meta.environment.implementations.0.name", KeyError)),
     "meta.environment.implementations[0]: missing key 'name'"),
    ("implementation field of the wrong type", edited(setitem("meta.environment.implementations.0.version", {})),
     "meta.environment.implementations[0].version: must be a string, not dict"),
    ("packages of the wrong type", edited(setitem("meta.environment", {"packages": {"numpy": 2}})),
     "meta.environment.packages.numpy: must be a string, not int"),
    ("seed of the wrong type", edited(setitem("meta.seed", "1; rm -rf /")), "meta.seed: must be an integer, not str"),
]


@pytest.mark.parametrize("name, content, message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_malformed_or_hostile_report_is_one_line_naming_the_file(tmp_path, capsys, runs, name, content, message):
    bad = tmp_path / "from-runner-3.json"
    bad.write_bytes(content)
    out = tmp_path / "merged.html"
    assert cli.main(["conformance", "merge", str(runs["sse41"]), str(bad), "--report-html", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"simdbind: conformance merge: {bad}: ")
    assert message in err, err
    assert not out.exists()  # nothing is written from a merge that failed


def test_files_that_cannot_be_read(tmp_path, capsys, runs, monkeypatch):
    cases = [(tmp_path / "missing.json", "cannot read it: No such file or directory"),
             (tmp_path, "is a directory, not a report file")]
    os.mkfifo(tmp_path / "pipe.json")  # opening it to read would wait for a writer
    cases.append((tmp_path / "pipe.json", "not a regular file"))
    monkeypatch.setattr(schema, "MAX_FILE_BYTES", 1000)
    cases.append((runs["sse41"], "larger than a report can be (1000 bytes)"))
    for path, message in cases:
        assert cli.main(["conformance", "merge", str(path)]) == 2
        err = capsys.readouterr().err
        assert err == f"simdbind: conformance merge: {path}: {err.split(': ', 3)[3]}" and message in err, err
    assert cli.main(["conformance", "merge", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
    assert capsys.readouterr().err == f"simdbind: conformance merge: {tmp_path / 'a.json'}: given twice\n"


def test_diff_reads_reports_through_the_same_check(runs, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(edited(setitem("results.0.status", "exploded")))
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "diff", str(runs["sse41"]), str(bad)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr == f"simdbind: conformance diff: {bad}: results[0].status: 'exploded' is not one of pass, " \
                         "fail, error, skip, known, xpass\n"


# -- escaping ------------------------------------------------------------------------------------------------------
def payload(field: str) -> str:
    """A value that breaks out of every context the page has, tagged with the field it was put in."""
    return (f"F-{field}</style></script><script>window.pwned=1</script>\"onmouseover=\"window.pwned=2\" "
            f"'onclick='window.pwned=3' <img src=x onerror=window.pwned=4> <a href=\"javascript:window.pwned=5\">"
            f"[link](javascript:window.pwned=6) `code` | cell")


STRING_FIELDS = ("implementation", "function", "descriptor", "group", "dtype", "layout", "detail", "tolerance",
                 "repro", "family", "deviation", "variant")
META_FIELDS = ("command", "profile", "filter", "created")
ENV_FIELDS = ("python", "platform", "cpu_model", "source")
IMPL_FIELDS = ("kind", "version", "isa", "path", "available")


def hostile_report() -> dict:
    """A well-formed report whose every string field that a page shows is hostile: a failure (listed first, with
    its repro), a known deviation and a skip, so that every section of the page shows them."""
    results = []
    for status in ("fail", "known", "skip"):
        result = {name: payload(name) for name in STRING_FIELDS}
        result.update(status=status, max_ulp=float("inf"), implementation=payload("implementation"))
        results.append(result)
    env = {name: payload(name) for name in ENV_FIELDS}
    env["packages"] = {payload("package-name"): payload("package-version")}
    env["implementations"] = [{"name": payload("implementation"), **{f: payload(f) for f in IMPL_FIELDS}}]
    meta = {name: payload(name) for name in META_FIELDS}
    meta.update(seed=1, environment=env)
    return {"format": schema.FORMAT, "meta": meta, "seconds": 1.0, "results": results}


class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.tags, self.handlers, self.hrefs, self.text, self.values = Counter(), [], [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.hrefs += [value for name, value in attrs if name in ("href", "src")]
        self.values += [value or "" for _, value in attrs]

    def handle_data(self, data):
        self.text.append(data)


def check_page(text: str, fields: list[str]) -> None:
    page = Page(text)
    assert page.tags["script"] == 1 and page.tags["style"] == 1  # the page's own
    assert page.tags["img"] == 0 and page.handlers == []
    assert page.hrefs and all(h.startswith("#") for h in page.hrefs)
    script = text[text.rindex("<script>"):]
    assert "pwned" not in script and "pwned" not in text[text.index("<style>"):text.index("</style>")]
    shown = "\n".join(page.text + page.values)
    missing = [f for f in fields if f"F-{f}</style></script><script>window.pwned=1</script>" not in shown]
    assert missing == []  # every field reached the page, as text


def test_nothing_from_a_report_reaches_the_html_unescaped(tmp_path, runs):
    hostile = tmp_path / "<script>alert(1)<\\script>.json"
    hostile.write_text(json.dumps(hostile_report()))
    single = report.read_json(hostile)
    fields = [f for f in STRING_FIELDS if f != "implementation"] + list(META_FIELDS) + list(ENV_FIELDS) + \
        list(IMPL_FIELDS) + ["implementation", "package-name", "package-version"]
    check_page(html_report(single), fields)
    merged = merged_of(tmp_path, runs["sse41"], hostile, fmt="html").read_text()
    # a merged page shows each input's command, profile and date among the run details, not in the header
    check_page(merged, [f for f in fields if f not in ("filter", "python", "platform", "package-name",
                                                        "package-version")])
    assert "&lt;script&gt;alert(1)&lt;\\script&gt;.json" in merged


def test_nothing_from_a_report_reaches_the_markdown_as_markup(tmp_path, runs):
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(hostile_report()))
    for text in (report.markdown(report.read_json(hostile)),
                 merged_of(tmp_path, runs["sse41"], hostile, fmt="md").read_text()):
        # code spans show their text as it is (Markdown reads no markup inside them); outside them, no markup
        prose = re.sub(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", text)
        assert "F-descriptor" not in prose and "F-detail" in prose
        assert "<" not in prose and ">" not in prose.replace("->", "")
        assert re.search(r"(?<!\\)\]\(", prose) is None  # no link syntax survives
        tables = re.findall(r"(?:^\|.*\n?)+", text, flags=re.M)
        for table in tables:  # every row of a table keeps its header's columns: each | inside a field is escaped
            widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
            assert len(widths) == 1, table
        assert any("F-detail" in table for table in tables)
        assert "F-descriptor" in text and "F-repro" in text and "F-detail" in text
