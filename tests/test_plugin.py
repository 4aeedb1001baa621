"""The pytest plugin from another project's point of view: its options are prefixed and read from the same table as
the command line's, bad values are usage errors before collection, and a run that does not use it stays free of it."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from simdbind.conformance import options


def pytest_in(directory: Path, *args: str, env_path: Path | None = None) -> subprocess.CompletedProcess:
    """pytest in `directory`; `env_path`: a directory the tests import from (PYTHONPATH)."""
    env = {**os.environ, "PYTHONPATH": str(env_path)} if env_path else None
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], capture_output=True,
                          text=True, cwd=directory, env=env)


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
                                "--simd-case-filter", "--simd-case", "--simd-seed", "--simd-shard",
                                "--simd-report-json", "--simd-report-md", "--simd-report-html"}
    assert all(flag.startswith("--simd-") for flag in group.added)


def test_plugin_is_inert_in_a_run_that_does_not_use_it(tmp_path):
    (tmp_path / "test_other.py").write_text(
        "import sys\n"
        "def test_suite_not_loaded():\n"
        "    assert 'simdbind_pytest' in sys.modules\n"
        "    assert not [m for m in ('simdbind.conformance.runner', 'simdbind.conformance.model',\n"
        "                            'simdbind.conformance.registry') if m in sys.modules]\n"
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


HOSTILE_MODULE = (
    "import pytest\n"
    "from simdbind.conformance.plugin import check\n"
    "pytestmark = pytest.mark.simd_conformance('eltwise')\n"
    "@pytest.fixture\n"
    "def fragile(case):\n"
    "    if 'count=3' in case.descriptor:\n"
    "        raise RuntimeError('setup broke')\n"
    "def test_conformance(implementation, function, case, simd_seed, fragile):\n"
    "    check(implementation, function, case, simd_seed)\n"
    "    assert 'size=1 ' not in case.descriptor + ' ', 'the test failed after its check'\n"
)


def test_plugin_reports_hold_exactly_the_outcomes_pytest_shows(tmp_path):
    """Cases failing in setup, in an adapter method or after the check are in the report, with pytest's verdict."""
    import xml.etree.ElementTree as ElementTree

    (tmp_path / "test_hostile.py").write_text(HOSTILE_MODULE)
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    out = pytest_in(tmp_path, "test_hostile.py", "--simd-profile", "smoke", "--simd-library", "bundled",
                    "--simd-isa", "base", "--simd-impl", "tests.hostile_doubles:RAISING_TOLERANCE", "--simd-impl",
                    "tests.hostile_doubles:EXITING", "--simd-report-json", str(report), f"--junitxml={junit}",
                    "-p", "no:xdist", env_path=Path(__file__).resolve().parent.parent)
    assert out.returncode == 1, out.stdout + out.stderr
    shown = {}
    for testcase in ElementTree.parse(junit).getroot().iter("testcase"):
        name = testcase.get("name").split("[", 1)[1][:-1]
        tags = {child.tag for child in testcase}
        shown[name] = ("error" if "error" in tags else "failed" if "failure" in tags
                       else "skipped" if "skipped" in tags else "passed")
    results = json.loads(report.read_text())["results"]
    recorded = {f"{r['implementation']}:{r['descriptor']}": r for r in results}
    assert len(results) == len(recorded) == len(shown) > 0
    verdicts = {"passed": ("pass", "xpass"), "failed": ("fail", "error"), "error": ("error",),
                "skipped": ("skip", "known")}
    for name, outcome in shown.items():
        assert recorded[name]["status"] in verdicts[outcome], (name, outcome, recorded[name])
    setup = [r for r in results if "count=3" in r["descriptor"]]
    assert setup and all(r["status"] == "error" and "setup" in r["detail"] for r in setup)
    after = [r for r in results if "size=1 " in r["descriptor"] + " " and "count=3" not in r["descriptor"]
             and r["implementation"] == "bundled-base"]
    assert all(r["status"] == "error" and "failed after its check" in r["detail"] for r in after)
    named = [r for r in results if "count=3" not in r["descriptor"] and r["implementation"] != "bundled-base"]
    assert {r["detail"].split(":")[0] for r in named} == {"tolerance() raised ValueError", "run() raised SystemExit"}
    page = json.loads(report.read_text())["summary"]
    assert page["error"] == sum(r["status"] == "error" for r in results) > 0


SECOND_SESSION = """
import json, sys, pytest
for n, pattern in enumerate(("eltwise op=max", "eltwise op=min")):
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--pyargs", "simdbind.conformance.tests",
                        "--simd-library", "bundled", "--simd-isa", "base", "--simd-profile", "smoke",
                        "--simd-case-filter", pattern, "--simd-report-json", sys.argv[1] + f"/{n}.json"])
    assert code == 0, code
"""


def test_a_second_session_in_one_process_reports_only_its_own_results(tmp_path):
    out = subprocess.run([sys.executable, "-c", SECOND_SESSION, str(tmp_path)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    first, second = (json.loads((tmp_path / f"{n}.json").read_text())["results"] for n in range(2))
    assert first and all(r["descriptor"].startswith("eltwise op=max ") for r in first)
    assert second and all(r["descriptor"].startswith("eltwise op=min ") for r in second)


def test_simd_shard_parts_partition_the_session(tmp_path):
    common = ("--pyargs", "simdbind.conformance.tests", "--simd-library", "bundled", "--simd-isa", "base",
              "--simd-profile", "smoke", "--simd-case-filter", "eltwise", "-p", "no:xdist")
    ids = []
    for part in ("", "1/2", "2/2"):
        out = pytest_in(tmp_path, "--collect-only", *common, *(("--simd-shard", part) if part else ()))
        assert out.returncode == 0, out.stdout + out.stderr
        ids.append(sorted(line for line in out.stdout.splitlines() if "::test_elementwise[bundled" in line))
    whole, one, two = ids
    assert one and two and not set(one) & set(two) and sorted(one + two) == whole
