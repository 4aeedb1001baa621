"""simdbind's pytest plugin costs other projects nothing: loaded in every pytest run where simdbind is installed, it
imports neither simdbind nor NumPy until a --simd- option is used or a marked module is collected, and brings no
warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
    # An editable install included: its import redirect carries pytest's opt-out (csrc/build_backend.py).
    warned = [line for line in out.stdout.splitlines() if "Warning" in line]
    assert warned == [], warned
    assert "--simd-profile" in pytest_in(tmp_path, "--help").stdout  # the options are there all the same


def test_a_marked_module_is_parametrized_without_any_option(tmp_path):
    (tmp_path / "test_marked.py").write_text(MARKED)
    out = pytest_in(tmp_path, "-q", "--collect-only", "-p", "no:simdbind_conformance")
    assert "test_marked.py::test_conformance\n" in out.stdout, out.stdout + out.stderr  # not parametrized
    out = pytest_in(tmp_path, "-q", "--collect-only")
    assert out.returncode == 0, out.stdout + out.stderr
    ids = [line for line in out.stdout.splitlines() if line.startswith("test_marked.py::test_conformance[")]
    assert len(ids) > 10 and all("eltwise " in line for line in ids)


def test_the_backend_gives_the_editable_redirect_the_docstring_pytest_reads_and_keeps_the_record_true(tmp_path):
    import base64
    import hashlib
    import importlib.util
    import zipfile

    spec = importlib.util.spec_from_file_location("build_backend", ROOT / "csrc" / "build_backend.py")
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    redirect = b"from __future__ import annotations\nimport os\n"
    wheel = tmp_path / "simdbind-0.1.0-cp311-abi3-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("_editable_skbc_simdbind.py", redirect)
        archive.writestr("_editable_skbc_simdbind.pth", b"import _editable_skbc_simdbind\n")
        archive.writestr("simdbind-0.1.0.dist-info/RECORD",
                         "_editable_skbc_simdbind.py,sha256=old,45\n_editable_skbc_simdbind.pth,sha256=x,31\n"
                         "simdbind-0.1.0.dist-info/RECORD,,\n")
    assert backend.mark_redirect_dont_rewrite(wheel)
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read("_editable_skbc_simdbind.py")
        record = archive.read("simdbind-0.1.0.dist-info/RECORD").decode().splitlines()
    module = compile(source, "redirect", "exec")  # the docstring may precede the __future__ import
    assert "PYTEST_DONT_REWRITE" in module.co_consts[0] and source.endswith(redirect)
    digest = base64.urlsafe_b64encode(hashlib.sha256(source).digest()).rstrip(b"=").decode()
    assert record == [f"_editable_skbc_simdbind.py,sha256={digest},{len(source)}",
                      "_editable_skbc_simdbind.pth,sha256=x,31", "simdbind-0.1.0.dist-info/RECORD,,"]
    assert backend.mark_redirect_dont_rewrite(wheel)  # idempotent
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("_editable_skbc_simdbind.py") == source
    plain = tmp_path / "plain.whl"
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("simdbind/__init__.py", b"")
    assert not backend.mark_redirect_dont_rewrite(plain)  # a wheel without a redirect is left as it is
