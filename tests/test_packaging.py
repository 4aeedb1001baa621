"""The sdist holds exactly the repository's files that the build needs, whatever else lies in the working tree.

The sdist is built by the project's own backend (``python -m build --sdist``; skipped where the ``build`` package is
not installed) from a copy of the tracked files into which the things a working tree collects are added: a virtual
environment with a ``csrc`` folder of its own (the unanchored ``csrc`` rule packed such folders), build folders,
object files, reports, an upstream build under vendor/, bytecode.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Top-level files the build reads (the backend's configuration, the readme and license of the metadata, CMake's
#: project, the cffi generator) and the folders it compiles and packages.
BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE", "CMakeLists.txt", "build_simd.py")
BUILD_FOLDERS = ("csrc", "simdbind", "simdbind_pytest")
#: What a working tree collects: none of it may reach the sdist.
DEBRIS = (".venv/lib/python3.11/site-packages/torch/csrc/api.h", ".venv/bin/python", "venv/lib/x.py",
          "build/cp311-abi3-linux_x86_64/CMakeCache.txt", "build/x/csrc/unit.c", "csrc/runtime/cpu.o",
          "csrc/libSimd.so", "simdbind/_bundled.abi3.so", "simdbind/_abi.py", "simdbind/_bundled.c",
          "simdbind/__pycache__/cli.cpython-311.pyc", "reports/conformance.json", "vendor/simd/libSimd.so",
          "simdbind/conformance/.hypothesis/examples/x", ".ci-venv/bin/python", "tests/__pycache__/x.pyc")


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout (the tracked files are the reference)")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def needed(tracked: list[str]) -> set[str]:
    """The tracked files the build needs: the top-level build files and everything under the built folders."""
    return {name for name in tracked if name in BUILD_FILES or name.split("/", 1)[0] in BUILD_FOLDERS}


def test_the_needed_set_is_what_the_build_rules_name():
    # One fact, one place: the files and folders above are the anchored include rules of pyproject.toml.
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        sdist = tomllib.load(f)["tool"]["scikit-build"]["sdist"]
    assert sdist["inclusion-mode"] == "explicit"  # opt-in only: nothing else of the working tree
    assert sorted(sdist["include"]) == sorted([f"/{name}" for name in BUILD_FILES]
                                              + [f"/{name}/" for name in BUILD_FOLDERS])


def test_every_package_of_the_wheel_is_in_the_sdist():
    # The include rules also select the wheel's files: a package the wheel names but the rules leave out would ship
    # empty (the pytest entry point's package once did).
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["scikit-build"]
    assert {f"/{package}/" for package in config["wheel"]["packages"]} <= set(config["sdist"]["include"])


def test_sdist_of_a_cluttered_working_tree_holds_exactly_the_tracked_build_files(tmp_path):
    if importlib.util.find_spec("build") is None:
        pytest.skip("needs the build package (pip install build)")
    tracked = _tracked()
    tree = tmp_path / "tree"
    for name in tracked:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    for name in DEBRIS:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("debris\n")
    # Without build isolation where the backend is installed (fast); else build fetches it as pip install does.
    isolation = [] if importlib.util.find_spec("scikit_build_core") is None else ["--no-isolation"]
    result = subprocess.run([sys.executable, "-m", "build", "--sdist", *isolation, "--outdir", str(tmp_path / "dist"),
                             str(tree)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (archive,) = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        members = [m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()]
    assert len(members) == len(set(members))
    expected = needed(tracked) | {"PKG-INFO"}
    assert set(members) == expected, (f"extra: {sorted(set(members) - expected)[:20]}, "
                                      f"missing: {sorted(expected - set(members))[:20]}")


#: The newest glibc symbol version the bundled library may need: manylinux_2_17 (manylinux2014), docs/packaging.md.
MANYLINUX_GLIBC = (2, 17)


def test_the_bundled_library_needs_no_glibc_newer_than_its_manylinux_tag():
    import platform
    import re

    import simdbind

    if platform.machine() != "x86_64" or platform.libc_ver()[0] != "glibc" or shutil.which("objdump") is None:
        pytest.skip("checks a glibc x86-64 build with objdump")
    path = simdbind.bundled_path()
    symbols = subprocess.run(["objdump", "-T", path], capture_output=True, text=True, check=True).stdout
    needed = {(tuple(int(v) for v in m.group(2).split(".")), m.group(3))
              for m in re.finditer(r"\(?(GLIBC_)([0-9.]+)\)?\s+(\S+)$", symbols, re.M)}
    assert needed, "no versioned glibc symbol found: is this a glibc build?"
    newer = sorted(f"{name}@GLIBC_{'.'.join(map(str, version))}" for version, name in needed
                   if version > MANYLINUX_GLIBC)
    assert not newer, f"{newer}: bind them to an older version in csrc/internal/glibc_versions.h"
