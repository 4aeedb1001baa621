"""simdbind's pytest plugin costs other projects nothing: loaded in every pytest run where simdbind is installed, it
imports neither simdbind nor NumPy until a --simd- option is used or a marked module is collected, and brings no
warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TRIVIAL = (
    "import sys\n"
    "def test_trivial():\n"
    "    heavy = [m for m in ('numpy', 'simdbind', 'cffi') if m in sys.modules]\n"
    "    assert 'simdbind_pytest' in sys.modules and heavy == [], heavy\n"
)

MARKED = (
    "import pytest\n"
    "from simdbind.conformance.plugin import check\n"
    "pytestmark = pytest.mark.simd_conformance('eltwise')\n"
    "def test_conformance(implementation, function, case, simd_seed):\n"
    "    check(implementation, function, case, simd_seed)\n"
)


def pytest_in(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
                          capture_output=True, text=True, cwd=directory, timeout=300)


def test_a_plain_run_imports_neither_simdbind_nor_numpy_and_warns_nothing(tmp_path):
    (tmp_path / "test_trivial.py").write_text(TRIVIAL)
    out = pytest_in(tmp_path, "-q", "-W", "error::pytest.PytestUnknownMarkWarning")
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout + out.stderr
    # The one warning an editable install can bring names scikit-build-core's import redirect, which its .pth
    # imports at interpreter start (pytest exempts only setuptools' "__editable__" finders): none of simdbind's.
    warned = [line for line in out.stdout.splitlines() if "Warning:" in line]
    assert all("_editable_skbc_simdbind" in line for line in warned), warned
    assert "--simd-profile" in pytest_in(tmp_path, "--help").stdout  # the options are there all the same


def test_a_marked_module_is_parametrized_without_any_option(tmp_path):
    (tmp_path / "test_marked.py").write_text(MARKED)
    out = pytest_in(tmp_path, "-q", "--collect-only", "-p", "no:simdbind_conformance")
    assert "test_marked.py::test_conformance\n" in out.stdout, out.stdout + out.stderr  # not parametrized
    out = pytest_in(tmp_path, "-q", "--collect-only")
    assert out.returncode == 0, out.stdout + out.stderr
    ids = [line for line in out.stdout.splitlines() if line.startswith("test_marked.py::test_conformance[")]
    assert len(ids) > 10 and all("eltwise " in line for line in ids)
