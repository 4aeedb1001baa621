"""Typed for its users: mypy in strict mode passes on the package (pyproject.toml's [tool.mypy]: the library modules,
the command line and the conformance suite) and on the README's examples, and it catches the mistakes the types
are there for."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

from tests.test_readme import ROOT, readme_python

pytest.importorskip("mypy", reason="mypy is not installed (it is in the 'test' extra)")


def mypy(tmp_path: pathlib.Path, *files: str) -> tuple[int, str]:
    """mypy with the project's configuration, from the repository root, its cache kept out of the tree."""
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                             "--cache-dir", str(tmp_path / "cache"), *files], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    return result.returncode, result.stdout + result.stderr


def test_the_package_passes_mypy_strict(tmp_path):
    status, output = mypy(tmp_path)
    assert status == 0, output


#: Modules mypy does not check yet.
UNCHECKED = ("simdbind/bench/",)


def test_mypy_checks_every_module_of_the_package():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "simdbind").rglob("*.py"))
    unchecked = [m for m in modules if not m.startswith(UNCHECKED)
                 and not any(m == f or m.startswith(f.rstrip("/") + "/") for f in listed)]
    assert not unchecked, f"add these to [tool.mypy] files in pyproject.toml: {unchecked}"


def test_the_readme_examples_pass_mypy_strict(tmp_path):
    examples = tmp_path / "readme_examples.py"
    examples.write_text(readme_python())
    status, output = mypy(tmp_path, str(examples))
    assert status == 0, output


MISTAKES = {
    "unary(x, 3.5)": "simdbind.unary(x, 3.5)",
    "pooling_max without stride": "simdbind.pooling_max(x, 2)",
    "out by position": "simdbind.softmax(x, 1, x)",
    "unknown enum member": "simdbind.UnaryOperation.SQUARE",
    "library by name": 'simdbind.eltwise([x, x], "sum", library="bundled")',
}


def test_mypy_accepts_the_enums_and_refuses_the_mistakes(tmp_path):
    header = "import numpy as np\nimport simdbind\n\nx = np.zeros(4, np.float32)\n"
    good = tmp_path / "good.py"
    good.write_text(header + textwrap.dedent("""
        y = simdbind.unary(x, simdbind.UnaryOperation.ROUND)
        z = simdbind.eltwise([x, y], simdbind.EltwiseOperation.SUM, out=x)
        w = simdbind.pooling_average(x.reshape(1, 2, 2), 2, stride=1, exclude_pad=False,
                                     layout=simdbind.TensorFormat.NCHW)
        """))
    status, output = mypy(tmp_path, str(good))
    assert status == 0, output
    bad = tmp_path / "bad.py"
    bad.write_text(header + "".join(f"{line}  # {name}\n" for name, line in MISTAKES.items()))
    status, output = mypy(tmp_path, str(bad))
    assert status == 1
    flagged = {int(n) for n in re.findall(r"bad\.py:(\d+): error", output)}
    first = header.count("\n") + 1
    assert flagged == set(range(first, first + len(MISTAKES))), output
