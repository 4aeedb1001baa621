"""Loading libraries: bundled (API and ABI mode), ISA selection, refusal of bad and old libraries."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import simdbind
from simdbind.library import ISAS


def test_bundled_identifies_itself(bundled):
    assert bundled.kind == "bundled" and bundled.mode == "api"
    assert bundled.version.startswith("7.1.162")
    assert bundled.generation in ("7.0", "7.1")
    assert "base" in bundled.isas_supported
    assert bundled.isa in bundled.isas_supported


def test_abi_path_loads_the_same_file(bundled):
    abi = simdbind.load(simdbind.bundled_path())
    assert abi.mode == "abi" and abi.kind == "bundled"
    assert abi.version == bundled.version
    a, b = np.arange(5, dtype=np.float32), np.full(5, 2, np.float32)
    np.testing.assert_array_equal(simdbind.eltwise([a, b], "product", library=abi), a * b)


@pytest.fixture
def bundled_copy(tmp_path):
    """A copy of the bundled file, loaded by path as an upstream build would be (the api-mode module, which the
    suite has loaded, would keep the original mapped)."""
    copy = tmp_path / "libcopy.so"
    copy.write_bytes(open(simdbind.bundled_path(), "rb").read())
    return str(copy)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps to see what is mapped")
def test_a_library_loaded_by_path_stays_mapped_when_dropped(bundled_copy):
    """cffi unmaps a library when its lib object is collected; contexts' finalizers and the library's worker
    threads may still run its code after that, so simdbind keeps it mapped until the process ends."""
    code = (
        "import gc, simdbind\n"
        f"simdbind.load({bundled_copy!r})\n"
        "gc.collect()\n"
        f"print({bundled_copy!r} in open('/proc/self/maps').read())\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "True"), run.stderr[-2000:]


def test_contexts_left_open_at_exit_do_not_crash_it(bundled_copy):
    """The crash the mapping prevents: the context's finalizer ran SimdRelease after the interpreter had dropped
    the library (SIGSEGV at exit, every run, before the fix)."""
    code = (
        "import numpy as np, simdbind\n"
        f"lib = simdbind.load({bundled_copy!r})\n"
        "ip = simdbind.InnerProduct32f(64, 256, 256, trans_b=True, weight=np.ones((256, 256), np.float32),\n"
        "                              library=lib)\n"
        "x = np.ones((64, 256), np.float32)\n"
        "lib.set_threads(2)\n"
        "ip.forward(x)\n"
        "print('done')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "done"), run.stderr[-2000:]


def test_isa_selection_round_trips(bundled):
    before = bundled.isa
    for name in bundled.isas_supported:
        with bundled.use_isa(name):
            assert bundled.isa == name
    assert bundled.isa == before


def test_unknown_and_unsupported_isas_raise(bundled):
    with pytest.raises(simdbind.IsaError, match="must be one of"):
        bundled.set_isa("avx1024")
    unsupported = [name for name in ISAS if name not in bundled.isas_supported]
    for name in unsupported:
        with pytest.raises(simdbind.IsaError, match="not supported"):
            bundled.set_isa(name)


def test_isa_environment_override():
    code = "import simdbind; print(simdbind.load('bundled').isa)"
    env = dict(os.environ, SIMDBIND_ISA="base")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "base"
    env["SIMDBIND_ISA"] = "no-such-isa"
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "SIMDBIND_ISA=no-such-isa" in bad.stderr


def test_missing_file_and_non_simd_library_are_refused(tmp_path):
    with pytest.raises(simdbind.LibraryError, match="no such file"):
        simdbind.load(tmp_path / "libSimd.so")
    libm = "/lib/x86_64-linux-gnu/libm.so.6"
    if os.path.exists(libm):
        with pytest.raises(simdbind.LibraryError, match="not a Simd library"):
            simdbind.load(libm)


def test_missing_function_names_itself(bundled):
    with pytest.raises(simdbind.FunctionNotAvailableError, match="SimdNoSuchFunction"):
        bundled.function("SimdNoSuchFunction")


def test_threads_clamp(bundled):
    assert bundled.set_threads(10_000) == os.cpu_count()
    assert bundled.set_threads(1) == 1
    with pytest.raises(simdbind.ArgumentError):
        bundled.set_threads(0)


def test_external_library_when_given(external):
    assert external.kind in ("external", "bundled")
    assert external.generation in ("7.0", "7.1")


def test_a_bare_name_is_found_the_way_the_dynamic_loader_finds_it(tmp_path):
    from tests.test_loader_doubles import CC, build

    if CC is None:
        pytest.skip("no C compiler to build a test library")
    path = build(tmp_path, "SimdFake", 'const char* SimdVersion(void) { return "v7.1.162"; }\n'
                 "void SimdSynetSoftmax32f(const float* s, size_t o, size_t c, size_t i, float* d) {}\n")
    script = ("import simdbind\n"
              "for name in ('libSimdFake.so', 'SimdFake'):\n"
              "    print(simdbind.load(name).path)\n"
              "try:\n"
              "    simdbind.load('libSimdNoSuchName.so')\n"
              "except simdbind.LibraryError as error:\n"
              "    print(error)\n")
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path)}
    lines = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert lines[:2] == [path, path]
    assert "no such file: libSimdNoSuchName.so, and the dynamic loader finds no library of that name" in lines[2]
