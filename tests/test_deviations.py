"""The deviation catalogue: format checks, matching, known/xpass statuses, pytest xfail, and the package's own
catalogue files (every family's simdbind/conformance/families/<family>/deviations.json) against the registered cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import tests.fake_cases  # noqa: F401  (registers fake_copy)
from simdbind.conformance import deviations, runner
from simdbind.conformance.implementations import implementations
from simdbind.conformance.model import REGISTRY
from tests.runner_doubles import Corrupting, Renamed

ENTRY = {"id": "TEST-MAX-17", "function": "eltwise", "when": "op == 'max' and size == 17 and isa in ('base', 'avx2')",
         "versions": ">=7.0.160", "spec": "the eltwise kernel", "behaviour": "wrong maximum in the tail", "affects": "bundled"}


def write(tmp_path, entries, name="elementwise.json"):
    (tmp_path / name).write_text(json.dumps(entries))
    return tmp_path


def catalogue(tmp_path, *entries):
    return deviations.load(write(tmp_path, [dict(ENTRY, **e) for e in entries]))


@pytest.fixture(scope="module")
def base():
    (impl,) = implementations(["bundled"], "base")
    return impl


def case(descriptor):
    (c,) = runner.select_cases(REGISTRY["eltwise"], "full", None, descriptor)
    return c


# -- the package's catalogue -----------------------------------------------------------------------------------
def test_package_catalogue_loads_and_every_entry_matches_its_cases():
    """Each family's deviations file: valid format, known function, 'when' evaluates on every case of the function
    and matches at least one, 'example' (if given) is a case it matches."""
    assert deviations.validate(deviations.load()) == []


def test_every_entry_has_an_example_that_parses_matches_its_when_and_names_a_function():
    for entry in deviations.load().entries:
        function = REGISTRY.get(entry.function)
        assert function is not None, f"{entry.id}: unknown function {entry.function!r}"
        assert entry.example, f"{entry.id}: no example"
        case = function.parse(entry.example)  # an example need not be a grid case (explore finds others)
        assert case.descriptor == entry.example, f"{entry.id}: example not in canonical form: {case.descriptor}"
        assert any(entry.matches(case, isa) for isa in deviations.ISAS), f"{entry.id}: 'when' misses its example"


#: Entries whose deviation the wrappers hide or that show only sometimes: their cases may pass (xpass).
MAY_NOT_SHOW = ("Hidden by the wrapper", "non-deterministic", "sporadic")


@pytest.mark.skipif(not os.environ.get("SIMD_LIBRARY"), reason="needs an upstream build in SIMD_LIBRARY")
def test_upstream_entries_hold_exactly_where_their_when_says():
    """Both ways, on the upstream build at its ISA: every example of an entry that applies shows the deviation
    (known, not xpass), and on the ci cases of every catalogued function nothing fails outside the entries' 'when'
    (a failure there is behaviour that a 'when' does not cover)."""
    from simdbind.conformance.explore import Worker

    (upstream,) = implementations([os.environ["SIMD_LIBRARY"]])
    catalogue = deviations.load()
    applying = [e for e in catalogue.entries if e.applies_to(upstream)]
    worker = Worker(upstream, runner.DEFAULT_SEED, timeout=60)  # an example may crash the process
    try:
        for entry in applying:
            function = REGISTRY[entry.function]
            case = function.parse(entry.example)
            if not entry.matches(case, upstream.isa):
                continue  # the example shows it at another ISA
            result = worker.run(function, case)
            if not any(word in entry.note + entry.behaviour for word in MAY_NOT_SHOW):
                assert result.status in ("known", "skip"), \
                    f"{entry.id}: its example {case.descriptor!r} gave {result.status}: {result.detail[:200]}"
    finally:
        worker.stop()
    names = sorted({e.function for e in applying})
    run = runner.run([upstream], names, "ci", catalogue=catalogue, workers=2)
    outside = [(r.descriptor, r.detail[:160]) for r in run.results if r.status in ("fail", "error")]
    assert outside == []


# -- format ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ({"id": None}, "missing id"),
    ({"colour": "red"}, "unknown key(s) colour"),
    ({"when": "op == "}, "when: not a Python expression"),
    ({"affects": "upstream"}, "affects: 'upstream' is not one of"),
    ({"affects": []}, "affects must be a string or a non-empty list"),
    ({"versions": "newest"}, "versions: cannot read version clause"),
    ({"versions": "7.0 .. soon"}, "versions: cannot read version 'soon'"),
    ({"behaviour": ""}, "behaviour must be a non-empty string"),
    ({"function": 3}, "function must be a non-empty string"),
])
def test_entries_breaking_the_format_are_refused_with_file_and_id(tmp_path, change, message):
    entry = {k: v for k, v in dict(ENTRY, **change).items() if v is not None}
    with pytest.raises(deviations.CatalogueError, match="elementwise.json: entry") as error:
        deviations.load(write(tmp_path, [entry]))
    assert message in str(error.value)


def test_file_level_errors(tmp_path):
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(deviations.CatalogueError, match="a.json: not valid JSON"):
        deviations.load(tmp_path)
    (tmp_path / "a.json").write_text(json.dumps(ENTRY))
    with pytest.raises(deviations.CatalogueError, match="a.json: must hold a JSON list"):
        deviations.load(tmp_path)
    (tmp_path / "a.json").write_text(json.dumps([ENTRY]))
    (tmp_path / "b.json").write_text(json.dumps([ENTRY]))
    with pytest.raises(deviations.CatalogueError, match="b.json: entry 'TEST-MAX-17': id already used in a.json"):
        deviations.load(tmp_path)


def test_missing_directory_is_an_empty_catalogue(tmp_path):
    assert len(deviations.load(tmp_path / "none")) == 0


@pytest.mark.parametrize("spec, version, expected", [
    ("all", "7.1.162", True), ("*", "", True),
    (">=7.0.160", "7.1.162 (upstream)", True), (">=7.0.160", "7.0.159", False),
    (">=7.0.160, <7.1.162", "7.1.162", False), (">=7.0.160, <7.1.162", "7.1.161", True),
    ("7.0.160 - 7.1.162", "7.1.162", True), ("7.0.160 - 7.1.162", "7.2.0", False),
    ("7.1.162", "7.1.162", True), ("7.1.162", "7.1.163", False),
    (["<=7.1.162", ">7.0"], "7.0.170", True),
    (">=7.0.160", "unknown", True),  # an unreadable version keeps the entry (conservative)
    ("v5.0.115 .. v7.1.162 and master (Base window rule)", "7.1.170", True),  # master: the newest and later
    ("v5.0.115 .. v7.1.162 and master", "5.0.100", False),
    ("v7.1.162 and master (earlier releases not checked)", "7.1.161", False),
    ("7.0.160 - 7.1.162 | 7.2.5", "7.2.5", True), ("7.0.160 - 7.1.162 or 7.2.5", "7.2.4", False),
])
def test_version_ranges(spec, version, expected):
    assert deviations.VersionRange.parse(spec).contains(version) is expected


# -- matching --------------------------------------------------------------------------------------------------
def test_when_sees_params_layout_dtype_and_isa(tmp_path, base):
    cat = catalogue(tmp_path, {})
    assert [e.id for e in cat.match(base, case("eltwise op=max count=2 size=17"))] == ["TEST-MAX-17"]
    assert cat.match(base, case("eltwise op=max count=2 size=16")) == []
    assert cat.match(base, case("eltwise op=min count=2 size=17")) == []
    sse = Renamed(base, "bundled-sse41", "bundled")
    sse.isa = "sse41"
    assert cat.match(sse, case("eltwise op=max count=2 size=17")) == []  # isa not in ('base', 'avx2')
    cat = catalogue(tmp_path, {"when": "layout == '-' and dtype == 'float32' and count == 3 and group == 'edge'"})
    assert cat.match(base, case("eltwise op=max count=3 size=67 special=nan_inf group=edge")) and not cat.match(base, case("eltwise op=max count=3 size=67"))


@pytest.mark.parametrize("affects, name, kind, version, expected", [
    ("bundled", "bundled-base", "bundled", "7.1.162", True),
    ("external", "bundled-base", "bundled", "7.1.162", False),
    ("external", "external-avx2", "external", "7.1.162", True),
    ("external", "external-avx2", "external", "7.0.100", False),  # versions ">=7.0.160"
    (["external", "torch"], "torch", "torch", "7.1.162", True),
    ("adapters", "onnxruntime", "onnxruntime", "7.1.162", True),
    ("all", "bundled-abi-base", "bundled", "7.1.162", True),
    ("bundled-avx2", "bundled-base", "bundled", "7.1.162", False),
    ("bundled-base", "bundled-base", "bundled", "7.1.162", True),
])
def test_affects_and_versions_select_implementations(tmp_path, base, affects, name, kind, version, expected):
    cat = catalogue(tmp_path, {"affects": affects})
    impl = Renamed(base, name, kind, version)
    assert bool(cat.match(impl, case("eltwise op=max count=2 size=17"))) is expected


def test_when_naming_an_unknown_parameter_is_a_catalogue_error_naming_the_entry(tmp_path, base):
    cat = catalogue(tmp_path, {"when": "channels < 8"})
    with pytest.raises(deviations.CatalogueError, match="entry 'TEST-MAX-17': 'when' failed on case .*NameError"):
        cat.match(base, case("eltwise op=max count=2 size=17"))
    result = runner.run_case(base, REGISTRY["eltwise"], case("eltwise op=max count=2 size=17"), 1, cat)
    assert result.status == "error" and "deviation catalogue" in result.detail
    assert "'when' failed" in deviations.validate(cat)[0]


def test_validate_reports_unknown_functions_unmatched_entries_and_bad_examples(tmp_path):
    cat = deviations.load(write(tmp_path, [
        dict(ENTRY, id="A", function="no_such_function"),
        dict(ENTRY, id="B", when="size == 99999"),
        dict(ENTRY, id="C", example="eltwise op=max count=2 size=16"),
        dict(ENTRY, id="D", example="not a case"),
        dict(ENTRY, id="E", example="eltwise op=max count=2 size=17"),
    ]))
    problems = deviations.validate(cat)
    assert len(problems) == 4
    assert "A: unknown function 'no_such_function'" in problems[0]
    assert "B: 'when' matches no case of eltwise" in problems[1]
    assert "C: 'when' does not match its example" in problems[2]
    assert "D: example does not parse: descriptor 'not a case': must start with the function name" in problems[3]


# -- statuses --------------------------------------------------------------------------------------------------
def test_failing_catalogued_case_is_known_and_passing_one_is_xpass(tmp_path, base):
    cat = catalogue(tmp_path, {"when": "op == 'max' and size == 17"})
    corrupting = Corrupting(base, {"eltwise op=max count=2 size=17", "eltwise op=min count=2 size=17"})
    run = runner.run([corrupting], ["eltwise"], "smoke", catalogue=cat)
    results = {r.descriptor: r for r in run.results}
    known = results["eltwise op=max count=2 size=17"]
    assert known.status == "known" and known.deviation == "TEST-MAX-17"
    assert known.detail.startswith("known deviation TEST-MAX-17 (the eltwise kernel): wrong maximum in the tail; observed: 1/17")
    assert known.repro and known.ok
    assert results["eltwise op=min count=2 size=17"].status == "fail"  # not catalogued
    xpass = results["eltwise op=max count=3 size=17"]
    assert xpass.status == "xpass" and xpass.deviation == "TEST-MAX-17" and "did not show" in xpass.detail
    assert [r.descriptor for r in run.failed] == ["eltwise op=min count=2 size=17"]


def test_catalogue_only_applies_to_affected_implementations(tmp_path, base):
    cat = catalogue(tmp_path, {"when": "op == 'max' and size == 17", "affects": "external"})
    run = runner.run([Corrupting(base, {"eltwise op=max count=2 size=17"})], ["eltwise"], "smoke", catalogue=cat)
    assert [(r.descriptor, r.status) for r in run.results if r.status != "pass"] == [("eltwise op=max count=2 size=17", "fail")]


def test_catalogue_travels_to_worker_processes(tmp_path, base):
    cat = catalogue(tmp_path, {"when": "op == 'max' and size == 17"})
    run = runner.run([base], ["eltwise"], "smoke", catalogue=cat, workers=2)
    assert sorted(r.descriptor for r in run.results if r.status == "xpass") == \
        ["eltwise op=max count=2 size=17", "eltwise op=max count=3 size=17"]


def test_env_directories_extend_the_default_catalogue(tmp_path, monkeypatch):
    write(tmp_path, [ENTRY], "private.json")
    monkeypatch.setattr(deviations, "_default", None)
    monkeypatch.setenv("SIMDBIND_DEVIATIONS", str(tmp_path))
    assert "TEST-MAX-17" in [e.id for e in deviations.default().entries]
    monkeypatch.setattr(deviations, "_default", None)
    monkeypatch.setenv("SIMDBIND_DEVIATIONS", str(tmp_path / "missing"))
    with pytest.raises(deviations.CatalogueError, match="not a directory"):
        deviations.default()
    monkeypatch.setattr(deviations, "_default", None)


# -- through pytest --------------------------------------------------------------------------------------------
def test_check_turns_a_known_deviation_into_an_xfail_with_the_id(tmp_path, base, monkeypatch):
    from simdbind.conformance.plugin import check, take_result

    monkeypatch.setattr(deviations, "_default", catalogue(tmp_path, {"when": "size == 17"}))
    caught = None
    try:  # (pytest.raises lets pytest's own outcome exceptions through)
        check(Corrupting(base, {"eltwise op=max count=2 size=17"}), REGISTRY["eltwise"], case("eltwise op=max count=2 size=17"), 1)
    except BaseException as error:  # noqa: B036
        caught = error
    assert isinstance(caught, pytest.xfail.Exception), caught
    assert str(caught).startswith("TEST-MAX-17: known deviation TEST-MAX-17 (the eltwise kernel)")
    assert take_result().status == "known" and take_result() is None
    check(base, REGISTRY["eltwise"], case("eltwise op=max count=2 size=17"), 1)  # xpass: passes (pytest says XPASS)
    with pytest.raises(AssertionError, match="repro: simdbind conformance"):
        check(Corrupting(base, {"eltwise op=min count=2 size=16"}), REGISTRY["eltwise"], case("eltwise op=min count=2 size=16"), 1)


def test_pytest_marks_catalogued_cases_xfail_and_reports_xpass(tmp_path):
    write(tmp_path, [dict(ENTRY, when="size == 17")])
    env = dict(os.environ, SIMDBIND_DEVIATIONS=str(tmp_path))
    env.pop("SIMD_LIBRARY", None)  # the counts below are for the bundled library alone
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-rX",
                          "simdbind/conformance/tests/test_families.py::test_elementwise", "--simd-profile", "smoke", "--simd-isa",
                          "base", "--simd-case-filter", "eltwise op=max", "--simd-report-json", str(tmp_path / "r.json")],
                         capture_output=True, text=True, env=env, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "XPASS simdbind/conformance/tests/test_families.py::test_elementwise[bundled-base:eltwise op=max count=2 size=17]" \
           " - TEST-MAX-17" in out.stdout
    assert "6 passed, 2 xpassed" in out.stdout
    data = json.loads((tmp_path / "r.json").read_text())
    assert sorted(r["status"] for r in data["results"]) == ["pass"] * 6 + ["xpass"] * 2
