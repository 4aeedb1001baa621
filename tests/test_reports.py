"""Reports of a conformance run: summary, JSON, JUnit XML, Markdown, HTML matrix, progress, and the diff of two runs
(found by injecting a regression)."""

from __future__ import annotations

import io
import json
import math
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdbind.conformance import deviations, report, runner, schema
from simdbind.conformance.implementations import implementations
from simdbind.conformance.report_html import html_report
from tests.runner_doubles import Corrupting

@pytest.fixture(scope="module")
def impls():
    return implementations(["bundled"], "all")[:2]


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    directory = tmp_path_factory.mktemp("catalogue")
    (directory / "elementwise.json").write_text(json.dumps([{
        "id": "TEST-SUM", "function": "eltwise", "when": "op == 'sum' and size == 1", "versions": "all",
        "spec": "the eltwise kernel", "behaviour": "sum of one element is off", "affects": "bundled"}]))
    return deviations.load(directory)


def make_run(impls, catalogue, broken=frozenset(), profile="smoke") -> runner.Run:
    used = [Corrupting(impl, set(broken), ulps=100) if broken else impl for impl in impls]
    run = runner.run(used, ["eltwise"], profile, seed=5, catalogue=catalogue)
    run.meta = report.make_meta(impls, profile=profile, seed=5, command="test")
    return run


@pytest.fixture(scope="module")
def clean(impls, catalogue):
    return make_run(impls, catalogue)


def eltwise(run, op, count, size):
    """The descriptor of the eltwise case with these parameters (whatever the descriptor grammar spells them)."""
    for r in run.results:
        if r.variant == op and re.search(rf"\b(n|count=){count}\b", r.descriptor) \
                and re.search(rf"\bsize=?{size}\b", r.descriptor):
            return r.descriptor
    raise LookupError(f"no eltwise {op} case with {count} inputs of size {size}")


@pytest.fixture(scope="module")
def names(clean):
    """max_17: broken in the `broken` run; product_big: broken too; sum_1: broken and catalogued (TEST-SUM)."""
    return {"max_17": eltwise(clean, "max", 2, 17), "product_big": eltwise(clean, "product", 3, 12288),
            "sum_1": eltwise(clean, "sum", 2, 1), "min_17": eltwise(clean, "min", 3, 17)}


@pytest.fixture(scope="module")
def broken(impls, catalogue, names):
    return make_run(impls, catalogue, {names["max_17"], names["product_big"], names["sum_1"]})


def test_summary_names_failures_with_repro_and_totals(broken, impls, names):
    text = report.format_summary(broken)
    assert re.search(r"eltwise +bundled-base +29 +2 +1 +0 .*<-- FAIL", text), text
    assert f"FAIL {impls[0].name} {names['max_17']}: 1/17 outside exact" in text and "max ulp 100" in text
    assert f"repro: simdbind conformance --library bundled --isa {impls[0].isa} --function eltwise --seed 5 " \
           f"--case {shlex.quote(names['max_17'])}" in text
    assert f"known deviation TEST-SUM on {impls[0].name}: 1 case" in text
    assert "XPASS" in text  # the sum of three inputs of size 1 is catalogued but not broken
    assert text.splitlines()[-1].startswith("56 passed, 4 failed, 0 skipped, 2 known deviations, "
                                            "2 catalogued deviations did not show in ")


def test_json_round_trip(broken, tmp_path):
    path = report.write_json(broken, tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["format"] == report.FORMAT and data["summary"]["fail"] == 4 and data["summary"]["known"] == 2
    again = report.read_json(path)
    assert again.results == broken.results and again.meta["seed"] == 5
    env = again.meta["environment"]
    assert {"python", "platform", "cpu_model", "packages", "libraries", "implementations", "source"} <= set(env)
    assert env["implementations"][0]["path"] == env["libraries"][0]["path"]
    with pytest.raises(ValueError, match="not a conformance report"):
        (tmp_path / "x.json").write_text("{}")
        report.read_json(tmp_path / "x.json")


def test_the_cpu_model_names_family_and_model(monkeypatch):
    """A VM may call its CPU just "AMD EPYC": the family and model numbers (Zen 4 or Zen 5) go with the name, read
    from the first processor's block only."""
    cpuinfo = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
               "model name\t: AMD EPYC\n\nprocessor\t: 1\ncpu family\t: 99\nmodel\t\t: 9\n")
    monkeypatch.setattr(report.Path, "read_text", lambda self, *a, **k: cpuinfo)
    assert report.cpu_model() == "AMD EPYC (family 25, model 17)"
    monkeypatch.setattr(report.Path, "read_text", lambda self, *a, **k: "model name\t: Some CPU\n")
    assert report.cpu_model() == "Some CPU"


def test_every_report_the_writer_makes_passes_the_schema(broken, clean, tmp_path):
    """The writer's output, including infinite errors and an empty meta, reads back as the same run."""
    infinite = runner.Run([runner.CaseResult(**{**r.__dict__}) for r in broken.results], 1.5, dict(broken.meta))
    infinite.results[0].max_ulp = infinite.results[0].max_rel = float("inf")  # a NaN output where a number was due
    for run in (broken, clean, infinite, runner.Run([runner.CaseResult("x", "f", "d", "g", "float32", "-", "skip")])):
        again = schema.check_report(json.loads(json.dumps(report.to_json(run), default=str)))
        assert again.results == run.results and again.seconds == run.seconds
        assert {k: again.meta[k] for k in run.meta} == run.meta
        assert report.read_json(report.write_json(run, tmp_path / "r.json")).results == run.results


any_text = st.text(st.characters(blacklist_categories=()), max_size=30)  # lone surrogates included
measure = st.floats(min_value=0, allow_infinity=True) | st.just(float("nan"))
count = st.integers(0, 2 ** 63 - 1)


@given(st.lists(st.builds(runner.CaseResult, any_text, any_text, any_text, any_text, any_text, any_text,
                          st.sampled_from(runner.STATUSES), any_text, any_text, measure, measure, measure, count,
                          count, st.floats(0, 1e6), any_text, any_text, any_text, any_text), max_size=5),
       st.dictionaries(st.sampled_from(["profile", "command", "created", "filter"]), any_text),
       st.floats(0, 1e6))
@settings(max_examples=150, deadline=None)
def test_the_writer_never_writes_what_the_schema_refuses(results, meta, seconds):
    """Whatever a run holds (surrogates from a mis-decoded path, NaN errors), its JSON report reads back."""
    run = runner.Run(results, seconds, meta)
    again = schema.check_report(json.loads(json.dumps(report.to_json(run))))
    assert len(again.results) == len(results) and again.seconds == seconds
    for before, after in zip(results, again.results):
        assert after.status == before.status and after.mismatches == before.mismatches
        assert after.descriptor == before.descriptor.encode("utf-8", "replace").decode("utf-8")
        assert after.max_ulp == before.max_ulp or (math.isnan(before.max_ulp) and after.max_ulp == math.inf)


def test_junit_counts_and_messages(broken, tmp_path, impls, names):
    root = ET.parse(report.write_junit(broken, tmp_path / "r.xml")).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"conformance.{i.name}" for i in impls]
    suite = suites[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == \
        ("32", "2", "0", "1")
    failure = suite.find(f"testcase[@name='{names['max_17']}']/failure")
    assert failure.get("message").startswith("1/17 outside exact") and "repro: simdbind conformance" in failure.text
    known = suite.find(f"testcase[@name='{names['sum_1']}']/skipped")
    assert known.get("type") == "pytest.xfail" and known.get("message") == "known deviation TEST-SUM"


def test_markdown_matrix_and_failures(broken, impls, names):
    text = report.markdown(broken)
    assert text.startswith("## simdbind conformance: ❌ FAILED")
    # what failed comes right after the totals, before the implementations and the matrix
    assert text.index("### Failures (4)") < text.index("| implementation | kind |") < text.index("| function |")
    assert f"| {impls[0].name} | `{names['max_17']}` | 1/17 outside exact" in text
    assert f"`simdbind conformance --library bundled --isa {impls[0].isa} --function eltwise --seed 5 --case " \
           f"{shlex.quote(names['max_17'])}` |" in text
    assert f"| function | variant | dtype | layout | group | {impls[0].name} | {impls[1].name} |" in text
    assert "| eltwise | max | float32 | - | main | ❌ 7/8 · 100 ulp | ❌ 7/8 · 100 ulp |" in text
    assert "| eltwise | sum | float32 | - | main | ⚠️ 7/8, 1 known" in text
    assert "`simdbind conformance --library bundled" in text and "### Known deviations" in text


class Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.external, self.cells = set(), [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        for key in ("src", "href"):
            if attrs.get(key, "").startswith(("http:", "https:", "//")):
                self.external.append(attrs[key])
        if tag == "link":
            self.external.append(attrs.get("href", "link"))
        if tag == "td" and "cell" in attrs.get("class", ""):
            self.cells.append(attrs["class"])


def test_html_is_self_contained_and_every_coloured_cell_links_to_its_cases(broken, clean, tmp_path, names):
    text = report.write_html(broken, tmp_path / "r.html").read_text()
    parser = Anchors()
    parser.feed(text)
    assert parser.external == []
    assert parser.hrefs and all(h.startswith("#") and h[1:] in parser.ids for h in parser.hrefs)
    assert parser.cells.count("cell fail") == 4 and parser.cells.count("cell known") == 2
    assert parser.cells.count("cell pass") == 2
    assert names["max_17"] in text and f"--case &#x27;{names['max_17']}&#x27;" in text
    assert "&lt;" not in re.sub(r"<[^>]+>", "", text.split("<main>")[0])  # nothing double-escaped in the header
    quiet = Anchors()
    quiet.feed(html_report(clean))
    assert set(quiet.cells) == {"cell pass", "cell xpass"} and "FAILED" not in html_report(clean)[:600]


def test_html_of_a_failing_run_opens_on_its_failures(broken, clean, names):
    text = html_report(broken)
    failures, matrix_at = text.index("<section class=failures id=failures>"), text.index("<table class=matrix>")
    assert text.index("<div class=badges>") < failures < matrix_at  # right under the totals, before the matrix
    listed = text[failures:text.index("</section>", failures)]
    assert listed.count("<button class=copy") == 4 and listed.count(f"<code class=desc>{names['max_17']}</code>") == 2
    assert f"--case &#x27;{names['max_17']}&#x27;" in listed and names["sum_1"] not in listed  # known is not failed
    assert "<option value=fail selected>" in text  # the matrix filter starts on the failing rows
    rows = re.findall(r"<tr class=row data-status=(\w+)", text)
    assert rows.count("fail") == 2 and rows.count("deviation") == 1 and rows.count("ok") == 1
    quiet = html_report(clean)
    assert "class=failures" not in quiet and "<option value=all selected>" in quiet


def test_diff_finds_an_injected_regression_and_its_fix(impls, catalogue, clean, tmp_path, names):
    regressed = make_run(impls, catalogue, {names["min_17"]})
    d = report.diff(clean, regressed)
    assert [(o.status, r.status, r.implementation, r.descriptor) for o, r in d.regressions] == \
        [("pass", "fail", impls[0].name, names["min_17"]), ("pass", "fail", impls[1].name, names["min_17"])]
    assert d.fixes == [] and d.new_failures == [] and d.failed
    back = report.diff(regressed, clean)
    assert len(back.fixes) == 2 and not back.regressions and not back.failed
    text = report.format_diff(d, "old.json", "new.json")
    assert text.startswith("conformance diff old.json -> new.json: 2 regressions, 0 fixes")
    assert f"  {impls[0].name}  {names['min_17']}: pass -> fail" in text and "repro:" in text
    # the same through the command line
    report.write_json(clean, tmp_path / "old.json")
    report.write_json(regressed, tmp_path / "new.json")
    cmd = [sys.executable, "-m", "simdbind", "conformance", "diff"]
    out = subprocess.run(cmd + [str(tmp_path / "old.json"), str(tmp_path / "new.json")], capture_output=True, text=True)
    assert out.returncode == 1 and "REGRESSIONS (2):" in out.stdout and names["min_17"] in out.stdout
    out = subprocess.run(cmd + [str(tmp_path / "new.json"), str(tmp_path / "old.json")], capture_output=True, text=True)
    assert out.returncode == 0 and "FIXES (2):" in out.stdout
    out = subprocess.run(cmd + [str(tmp_path / "old.json"), str(tmp_path / "missing.json")], capture_output=True,
                         text=True)
    assert out.returncode == 2 and "missing.json" in out.stderr


def test_diff_new_failures_removed_cases_and_larger_errors(clean):
    new = runner.Run([runner.CaseResult(**{**r.__dict__}) for r in clean.results[1:]])
    first = new.results[0]
    first.max_ulp = 1000.0  # still a pass, but a much larger error
    extra = runner.CaseResult("bundled-new", "eltwise", "eltwise new case", "main", "float32", "-", "error", "boom")
    new.results.append(extra)
    d = report.diff(clean, new)
    assert d.removed == 1 and d.added == 1 and d.new_failures == [extra] and d.failed
    assert [r.descriptor for _, r in d.worse] == [first.descriptor]
    assert "NEW FAILURES (1):" in report.format_diff(d) and "LARGER ERRORS" in report.format_diff(d)


def test_a_cell_of_errors_only_shows_no_error_measure():
    """An error gives no output to compare: its cell says so instead of a worst error of 0 ulp."""
    errors = runner.Run([runner.CaseResult("impl", "f", "d", "main", "float32", "-", "error", "boom")])
    assert "| f |  | float32 | - | main | ❌ 0/1 |" in report.markdown(errors)
    assert re.search(r"f +impl +0 +1 +0 +0 +- +- +<-- FAIL", report.format_summary(errors))
    assert "<small class=worst>no output</small>" in html_report(errors) and "≤ 0 ulp" not in html_report(errors)
