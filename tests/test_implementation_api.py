"""The public implementation API from the outside: the README's third-party adapter, copied into a directory of its
own as a module, runs through the command line and through pytest; a failing third-party implementation's repro
line reruns exactly as printed; selection refuses what does not import."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
QUIET = ("--junit-xml", "", "--report-md", "", "--report-html", "", "--no-progress")


def readme_adapter() -> str:
    """The README's Python block that defines the third-party adapter (the one that builds a PythonImplementation)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    (block,) = [b for b in blocks if "PythonImplementation(" in b]
    return block


@pytest.fixture
def engine_dir(tmp_path: Path) -> Path:
    (tmp_path / "myengine.py").write_text(readme_adapter())
    return tmp_path


def simdbind(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdbind", *args], capture_output=True, text=True, cwd=cwd)


def test_readme_adapter_is_about_thirty_lines():
    lines = [line for line in readme_adapter().splitlines() if line.strip()]
    assert 20 <= len(lines) <= 40, len(lines)


def test_readme_adapter_runs_through_the_command_line(engine_dir):
    out = simdbind("conformance", "--impl", "myengine:engine", "--profile", "ci", "-n", "2",
                   "--report-json", "r.json", *QUIET, cwd=engine_dir)
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((engine_dir / "r.json").read_text())["results"]
    assert {r["implementation"] for r in results} == {"myengine"}
    by_function: dict[str, set[str]] = {}
    for r in results:
        by_function.setdefault(r["function"], set()).add(r["status"])
    assert by_function["eltwise"] == {"pass", "skip"} and by_function["softmax"] == {"pass", "skip"}
    assert all(statuses == {"skip"} for f, statuses in by_function.items() if f not in ("eltwise", "softmax"))
    assert all(r["detail"] for r in results if r["status"] == "skip")


def test_readme_adapter_runs_through_pytest(engine_dir):
    out = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "simdbind.conformance.tests",
                          "--simd-impl", "myengine:engine", "--simd-profile", "smoke", "-q", "-p", "no:cacheprovider",
                          "--simd-report-json", "pytest.json"], capture_output=True, text=True, cwd=engine_dir)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert re.search(r"\d+ passed", out.stdout)
    results = json.loads((engine_dir / "pytest.json").read_text())["results"]
    assert {r["implementation"] for r in results} == {"myengine"}
    assert any(r["function"] == "eltwise" and r["status"] == "pass" for r in results)


def test_failing_third_party_repro_reruns_exactly_as_printed(engine_dir):
    # The README's adapter with a planted defect: max is off by one on the cases of 17 elements.
    planted = readme_adapter().replace("    return fold.reduce(arrays)",
                                       "    wrong = op == 'max' and arrays[0].size == 17\n"
                                       "    return fold.reduce(arrays) + (1 if wrong else 0)")
    assert planted != readme_adapter()
    (engine_dir / "broken.py").write_text(planted)
    out = simdbind("conformance", "--impl", "broken:engine", "--function", "eltwise", "-n", "2",
                   "--report-json", "first.json", *QUIET, cwd=engine_dir)
    assert out.returncode == 1, out.stdout + out.stderr
    first = [r for r in json.loads((engine_dir / "first.json").read_text())["results"] if r["status"] == "fail"]
    assert first and all("size=17" in r["descriptor"] and "op=max" in r["descriptor"] for r in first)
    repro = first[0]["repro"]
    assert repro.startswith("simdbind conformance --impl broken:engine ") and repro in out.stdout
    words = shlex.split(repro)
    again = simdbind(*words[1:], "--report-json", "again.json", *QUIET, cwd=engine_dir)
    assert again.returncode == 1, again.stdout + again.stderr
    (result,) = json.loads((engine_dir / "again.json").read_text())["results"]
    keys = ("implementation", "function", "descriptor", "status", "detail", "max_abs", "mismatches", "repro")
    assert {k: result[k] for k in keys} == {k: first[0][k] for k in keys}


def test_selection_refuses_what_is_not_an_implementation(tmp_path):
    (tmp_path / "engines.py").write_text(
        "from simdbind.conformance import PythonImplementation\n"
        "missing = PythonImplementation('missing', requires=('simdbind_no_such_package',))\n"
        "class Plain:\n"
        "    def __init__(self, name): self.name = name\n"
        "    def unsupported(self, function, case): return None if function == 'eltwise' else 'eltwise only'\n"
        "    def run(self, function, case, inputs): raise RuntimeError('not really')\n"
        "def two(): return [Plain('one'), Plain('two')]\n"
        "def same(): return [Plain('one'), Plain('one')]\n"
        "def empty(): return []\n"
        "def broken(): raise OSError('no device')\n")
    cases = {
        "engines:missing": "--impl engines:missing: simdbind_no_such_package is not installed",
        "engines:same": "--impl engines:same: two implementations named ['one', 'one']",
        "engines:empty": "--impl engines:empty: returned no implementation",
        "engines:broken": "--impl engines:broken: calling it raised OSError: no device",
        "engines:Plain": "--impl engines:Plain: calling it raised TypeError",
        "engines": "--impl engines: no implementation of that name is installed",
        "nosuchmodule_xyz:impl": "--impl nosuchmodule_xyz:impl: module nosuchmodule_xyz does not import",
    }
    for selector, message in cases.items():
        out = simdbind("conformance", "--impl", selector, "--list", cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.startswith("simdbind: " + message), (selector, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    out = simdbind("conformance", "--impl", "engines:two", "--function", "eltwise", "--report-json", "r.json", *QUIET,
                   "-n", "2", cwd=tmp_path)
    assert out.returncode == 1  # both raise: errors, each named
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert {r["implementation"] for r in results} == {"one", "two"}
    assert {r["status"] for r in results} == {"error"} and "RuntimeError: not really" in results[0]["detail"]
