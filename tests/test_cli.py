"""The command line, through `python -m simdbind`: info, a filtered conformance run, and every argument checked
before any work (exit 2, one line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import simdbind


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdbind", *args], capture_output=True, text=True)


def test_info_lists_isas_of_this_machine(bundled):
    out = run("info", "--library", "bundled")
    assert out.returncode == 0, out.stderr
    assert f"isas          {', '.join(bundled.isas_supported)}" in out.stdout
    assert "bundled (api mode)" in out.stdout


def test_conformance_prints_summary_and_writes_report(tmp_path):
    report = tmp_path / "r.json"
    out = run("conformance", "--isa", "base", "--function", "eltwise", "-k", "size=17", "--report-json", str(report))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "eltwise" in out.stdout and "bundled-base" in out.stdout and "0 failed" in out.stdout
    data = json.loads(report.read_text())
    assert data["results"] and all(r["status"] == "pass" for r in data["results"])
    assert data["meta"]["environment"]["libraries"][0]["kind"] == "bundled"


def test_conformance_rejects_unsupported_isa():
    out = run("conformance", "--isa", "avx1024")
    assert out.returncode == 2 and "not supported" in out.stderr


# -- arguments are checked before any work, with a one-line reason and exit 2 ----------------------------------
def refused(out: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2, no traceback, nothing run, and the last stderr line names every word."""
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "case runs on" not in out.stdout, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert all(word in last for word in words), last


def test_unwritable_report_paths_are_refused_before_the_run(tmp_path):
    (tmp_path / "file").write_text("")
    quick = ("conformance", "--isa", "base", "--case", "eltwise op=max count=2 size=17")
    refused(run(*quick, "--report-json", str(tmp_path)), "--report-json", "is a directory")
    refused(run(*quick, "--report-md", str(tmp_path / "file" / "r.md")), "--report-md", "not a directory")
    refused(run(*quick, "--junit-xml", "/proc/simdbind-report.xml"), "--junit-xml", "cannot create files in /proc")
    refused(run(*quick, "--report-html", "/proc/version"), "--report-html", "cannot be written")
    assert not any(tmp_path.rglob("*.md"))


@pytest.mark.parametrize("content", [
    b"{", b"", b"[]", b"null", b'{"results": 5}', b'{"results": [{"status": "pass"}]}', b'{"results": [1, 2]}',
    b"[" * 100000 + b"]" * 100000, b'{"results": [], "meta": "\x1b[2J"}', b"\xff\xfe\x00garbage",
    b'{"results": [{"implementation": "x", "function": "f", "descriptor": "d", "group": "main", "dtype": "f",'
    b' "layout": "-", "status": "fail", "max_abs": "NaN-string"}]}',
])
def test_diff_of_malformed_or_hostile_json_is_one_line_and_exit_2(tmp_path, content):
    good = tmp_path / "good.json"
    out = run("conformance", "--isa", "base", "--case", "eltwise op=max count=2 size=17", "--report-json", str(good),
              "--junit-xml", "", "--report-md", "", "--report-html", "")
    assert out.returncode == 0, out.stderr
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    for pair in ((good, bad), (bad, good)):
        out = run("conformance", "diff", *map(str, pair))
        refused(out, "conformance diff")
        assert len(out.stderr.strip().splitlines()) == 1 and "\x1b" not in out.stderr
    refused(run("conformance", "diff", str(good), str(tmp_path / "missing.json")), "missing.json")


@pytest.mark.parametrize("option, value", [
    ("--min-time", "nan"), ("--min-time", "inf"), ("--min-time", "-1"), ("--min-time", "0"), ("--repeats", "-2"),
    ("--repeats", "0"), ("--repeats", "x"),
])
def test_bench_refuses_non_positive_or_non_finite_numbers(option, value):
    refused(run("bench", "--list", option, value), option, "must be")


def test_conformance_refuses_a_bad_seed_and_worker_count():
    refused(run("conformance", "--list", "--seed", "-1"), "--seed", "from 0 to")
    refused(run("conformance", "--list", "-n", "zero"), "-n")
    refused(run("conformance", "--list", "-n", "-3"), "-n")


def test_workers_are_capped_at_the_cpus_available():
    out = run("conformance", "--list", "-n", "500", "--case", "eltwise op=max count=2 size=17", "--isa", "base")
    assert out.returncode == 0, out.stderr
    cpus = len(os.sched_getaffinity(0))
    assert f"-n 500: capped at {cpus}, the CPUs this process may use" in out.stderr


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"simdbind {simdbind.__version__}"


def test_output_piped_into_a_reader_that_stops_is_no_traceback():
    process = subprocess.Popen([sys.executable, "-m", "simdbind", "conformance", "--list", "--profile", "full"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()  # `| head -1`
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141 and stderr == ""


def test_unknown_names_get_the_closest_known_one():
    refused(run("conformance", "--function", "eltwse"), "unknown function(s) eltwse", "did you mean 'eltwise'")
    refused(run("conformance", "--case", "eltwise op=max count=2 sise=17"),
            "--case", "did you mean 'eltwise op=max count=2 size=17'")
    refused(run("conformance", "--impl", "torhc"), "--impl torhc", "did you mean 'torch'")
    refused(run("conformance", "--isa", "avx3"), "--isa", "did you mean 'avx2'")
    refused(run("bench", "--functions", "eltwise", "--impl", "tourch"), "--impl tourch", "did you mean 'torch'")
    refused(run("bench", "--functions", "eltwise", "--isa", "avx3"), "--isa", "did you mean 'avx2'")


def test_impl_that_does_not_import_is_an_error_not_a_run_of_skips():
    refused(run("conformance", "--impl", "simdbind_no_such_package.engine:impl"),
            "--impl simdbind_no_such_package.engine:impl", "does not import", "ModuleNotFoundError")
    refused(run("conformance", "--impl", "simdbind.conformance.api:nothing_here"), "has no nothing_here")
    refused(run("conformance", "--impl", "simdbind.conformance.api:REQUIRED"), "is not an implementation")
