"""The pytest plugin from another project's point of view: its options are prefixed and read from the same table as
the command line's, bad values are usage errors before collection, and a run that does not use it stays free of it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from simdbind.conformance import options


def pytest_in(directory: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], capture_output=True,
                          text=True, cwd=directory)


def test_cli_and_plugin_options_come_from_one_table():
    parser = argparse.ArgumentParser()
    options.add_cli_arguments(parser)
    cli = {action.dest: action for action in parser._actions}

    class Group:
        def __init__(self):
            self.added = {}

        def addoption(self, flag, **arguments):
            self.added[flag] = arguments

    group = Group()
    options.add_pytest_options(group)
    for option in options.OPTIONS:
        assert (option.dest in cli) == option.cli
        assert (option.pytest_flag in group.added) == option.pytest
        if option.cli and option.pytest:
            assert group.added[option.pytest_flag]["help"] == option.help
            assert cli[option.dest].choices == (list(option.choices) if option.choices else None) or \
                tuple(cli[option.dest].choices or ()) == (option.choices or ())
    assert set(group.added) == {"--simd-library", "--simd-isa", "--simd-mode", "--simd-impl", "--simd-profile",
                                "--simd-case-filter", "--simd-case", "--simd-seed", "--simd-report-json",
                                "--simd-report-md", "--simd-report-html"}
    assert all(flag.startswith("--simd-") for flag in group.added)


def test_plugin_is_inert_in_a_run_that_does_not_use_it(tmp_path):
    (tmp_path / "test_other.py").write_text(
        "import sys\n"
        "def test_suite_not_loaded():\n"
        "    assert 'simdbind.conformance.plugin' in sys.modules\n"
        "    assert not [m for m in ('simdbind.conformance.runner', 'simdbind.conformance.model',\n"
        "                            'simdbind.conformance.cases') if m in sys.modules]\n"
        "def test_profile_option_is_free(pytestconfig):\n"
        "    assert pytestconfig.getoption('simd_profile') in ('smoke', 'ci', 'full')\n")
    out = pytest_in(tmp_path, "-p", "no:xdist")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout and "simdbind conformance" not in out.stdout


def test_bad_plugin_options_are_usage_errors_before_collection(tmp_path):
    out = pytest_in(tmp_path, "--pyargs", "simdbind.conformance.tests", "--simd-impl", "torhc")
    assert out.returncode == 4 and "--simd-impl torhc: no implementation of that name" in out.stderr
    assert "did you mean 'torch'" in out.stderr and "Traceback" not in out.stderr
    out = pytest_in(tmp_path, "--pyargs", "simdbind.conformance.tests", "--simd-report-json", str(tmp_path))
    assert out.returncode == 4 and f"--simd-report-json {tmp_path}: is a directory" in out.stderr
    out = pytest_in(tmp_path, "--pyargs", "simdbind.conformance.tests", "--simd-seed", "-3")
    assert out.returncode == 4 and "--simd-seed" in out.stderr
    out = pytest_in(tmp_path, "--pyargs", "simdbind.conformance.tests", "--simd-isa", "avx3")
    assert out.returncode == 4 and "--simd-isa: avx3 is not supported here (did you mean 'avx2'?)" in out.stderr
    out = pytest_in(tmp_path, "--pyargs", "simdbind.conformance.tests", "--simd-case", "eltwise op=max count=2 sise=17")
    assert out.returncode == 4 and "--simd-case: no case is named" in out.stderr
    assert "did you mean 'eltwise op=max count=2 size=17'" in out.stderr


def test_plugin_runs_the_shipped_modules_on_a_library_and_writes_its_report(tmp_path):
    report = tmp_path / "r.json"
    out = pytest_in(tmp_path, "--pyargs", "simdbind.conformance.tests", "--simd-library", "bundled", "--simd-isa",
                    "base", "--simd-profile",
                    "smoke", "--simd-case-filter", "eltwise op=max", "--simd-seed", "5", "--simd-report-json",
                    str(report), "-p", "no:xdist")
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads(report.read_text())
    eltwise = [r for r in results["results"] if r["function"] == "eltwise"]
    assert len(eltwise) >= 4 and all(r["descriptor"].startswith("eltwise op=max ") for r in eltwise)
    assert results["meta"]["seed"] == 5 and {r["status"] for r in eltwise} == {"pass"}
    assert {r["implementation"] for r in results["results"]} == {"bundled-base"}
