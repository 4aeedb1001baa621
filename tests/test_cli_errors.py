"""Usage errors of every command: exit 2 and one line that names the argument and its rule, before any work (no
case run, no file written), with "did you mean" where a name is unknown; and an output that cannot be written when
the work is done is one such line after the summary, the other outputs still written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from simdbind.conformance.options import MAX_SEED

CASE = "eltwise op=max count=2 size=17"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdbind", *args], capture_output=True, text=True, timeout=300)


def refused(out: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2, one line on stderr naming every word, no traceback, and nothing run."""
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert "case runs on" not in out.stdout and "cases in" not in out.stdout, out.stdout


# -- explore ----------------------------------------------------------------------------------------------------
def test_explore_unknown_function_is_a_usage_error_with_the_closest_name():
    refused(run("conformance", "explore", "--function", "sofmax"), "unknown function(s) sofmax",
            "did you mean 'softmax'")
    refused(run("conformance", "explore", "--isa", "avx3"), "--isa", "did you mean 'avx2'")


@pytest.mark.parametrize("option, value", [
    ("--budget", "-1"), ("--budget", "0"), ("--budget", "nan"), ("--budget", "inf"), ("--budget", "x"),
    ("--timeout", "0"), ("--timeout", "-3"), ("--timeout", "nan"), ("--timeout", "inf"),
])
def test_explore_budget_and_timeout_must_be_finite_positive_seconds(option, value):
    refused(run("conformance", "explore", "--function", "eltwise", option, value), option,
            "must be a finite number of seconds > 0")


def test_explore_output_paths_are_checked_before_the_search(tmp_path):
    (tmp_path / "file").write_text("")
    explore = ("conformance", "explore", "--function", "eltwise", "--budget", "30")
    refused(run(*explore, "--json", str(tmp_path)), "--json", "is a directory")
    refused(run(*explore, "--keep", str(tmp_path / "file" / "kept.txt")), "--keep", "not a directory")
    refused(run(*explore, "--json", "/proc/simdbind-explore.json"), "--json", "cannot create files in /proc")


# -- seeds: one rule, read back by every command -----------------------------------------------------------------
@pytest.mark.parametrize("value", ["-7", str(MAX_SEED + 1), "9" * 5000, "7.5"])
@pytest.mark.parametrize("command", [("conformance", "--list"), ("conformance", "explore", "--function", "eltwise"),
                                     ("bench", "--list")])
def test_seeds_outside_the_range_are_refused_by_every_command(command, value):
    refused(run(*command, "--seed", value), "--seed", f"from 0 to {MAX_SEED}")


def test_the_largest_seed_is_taken_and_its_report_is_read_back(tmp_path):
    report = tmp_path / "r.json"
    out = run("conformance", "--isa", "base", "--case", CASE, "--seed", str(MAX_SEED), "--report-json", str(report))
    assert out.returncode == 0, out.stderr
    assert json.loads(report.read_text())["meta"]["seed"] == MAX_SEED
    assert run("conformance", "diff", str(report), str(report)).returncode == 0


# -- --case: each field in its function's domain, and no -k beside it -------------------------------------------
@pytest.mark.parametrize("descriptor, words", [
    ("eltwise op=maxx count=2 size=17", ("--case", "op=maxx", "eltwise has no such op", "did you mean 'max'")),
    ("unary op=exp size=-5", ("--case", "size=-5", "must be >= 1 for unary")),
    ("unary op=exp size=0", ("--case", "size=0", "must be >= 1 for unary")),
    ("eltwise op=max count=2 size=17 special=bogus", ("--case", "special=bogus", "eltwise has no such special")),
    ("pooling_max32f layout=nchw channels=3 height=5 width=5 kernel=0x2 stride=1x1 ceil=false",
     ("--case", "kernel=0x2", "each value must be >= 1")),
    ("unary op=exp size=17 group=odd", ("--case", "no case is named", "did you mean 'unary op=exp size=17'")),
])
def test_case_values_outside_the_domain_are_refused_before_the_run(descriptor, words):
    refused(run("conformance", "--isa", "base", "--no-reports", "--case", descriptor), *words)


def test_bench_case_values_outside_the_domain_are_refused():
    refused(run("bench", "--case", "eltwise op=maxx count=2 size=17"), "--case", "op=maxx", "did you mean 'max'")


def test_bench_functions_that_select_nothing_are_refused_with_the_closest_name():
    refused(run("bench", "--list", "--functions", "elementwise,poling"), "--functions 'poling'", "selects no case",
            "did you mean 'pooling'")


def test_plot_without_matplotlib_is_refused_before_the_work():
    import importlib.util

    if importlib.util.find_spec("matplotlib") is not None:
        pytest.skip("matplotlib is installed")
    refused(run("bench", "--case", CASE, "--isa", "base", "--no-peers", "--plot", "fig"), "--plot",
            "needs matplotlib")


def test_case_filter_beside_case_is_refused():
    refused(run("conformance", "--list", "--case", CASE, "-k", "size=17"), "-k", "cannot be combined with --case")


# -- output paths ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("option", ["--json", "--md", "--plot"])
def test_bench_output_paths_are_checked_before_the_work(tmp_path, option):
    (tmp_path / "file").write_text("")
    bench = ("bench", "--case", CASE, "--isa", "base", "--no-peers", "--repeats", "1", "--min-time", "0.001")
    if option == "--plot":
        pytest.importorskip("matplotlib")
        (tmp_path / "fig-elementwise.png").mkdir()
        refused(run(*bench, option, str(tmp_path / "fig")), "--plot", "fig-elementwise.png", "is a directory")
    else:
        refused(run(*bench, option, str(tmp_path)), option, "is a directory")
    refused(run(*bench, option, str(tmp_path / "file" / "out")), option, "not a directory")
    refused(run(*bench, option, "/proc/simdbind-bench-out"), option, "cannot create files in /proc")


def test_a_pipe_without_a_reader_is_refused_not_waited_on(tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    refused(run("conformance", "--isa", "base", "--case", CASE, "--report-json", str(pipe)), "--report-json",
            "cannot be written (No such device or address)")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_report_that_cannot_be_written_is_one_line_after_the_summary_and_the_others_are_written(tmp_path):
    out = run("conformance", "--isa", "base", "--no-progress", "--case", CASE, "--report-json", "/dev/full",
              "--report-md", str(tmp_path / "r.md"))
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "--report-json /dev/full: cannot be written (No space left on device)" in line
    assert "passed" in out.stdout  # the summary was printed
    assert "bundled-base" in (tmp_path / "r.md").read_text()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_bench_output_that_cannot_be_written_is_one_line_and_the_others_are_written(tmp_path):
    out = run("bench", "--case", CASE, "--isa", "base", "--no-peers", "--repeats", "1", "--min-time", "0.001",
              "--json", "/dev/full", "--md", str(tmp_path / "b.md"))
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "--json /dev/full: cannot be written (No space left on device)" in line
    assert CASE in (tmp_path / "b.md").read_text()


def test_explore_json_that_cannot_be_written_is_one_line(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    out = run("conformance", "explore", "--function", "eltwise", "--isa", "base", "--budget", "1", "--json",
              "/dev/full")
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert "--json /dev/full: cannot be written" in line and "cases in" in out.stdout
