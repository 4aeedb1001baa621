"""The bundled library runs its own code whatever else the process has loaded.

A library that exports the same Simd names and sits in the global symbol scope first (a host application linked
to upstream's libSimd, or ``ctypes.CDLL(path, RTLD_GLOBAL)``) would win every call that the bundled library makes
to those names through its PLT: its version string and its kernels would answer for ours. The bundled library is
linked with -Bsymbolic (CMakeLists.txt), so its references bind to its own definitions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

import simdbind

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol interposition (Linux)")

#: A stand-in for upstream: the same names, recognisably wrong answers.
FAKE_SOURCE = r"""
#include <stddef.h>
const char * SimdVersion(void) { return "7.1.162 (fake)"; }
void SimdSynetUnaryOperation32f(const float * src, size_t size, int type, float * dst)
{
    (void)src; (void)type;
    for (size_t i = 0; i < size; ++i)
        dst[i] = 12345.0f;
}
void SimdSynetEltwiseLayerForward(float const * const * src, const float * weight, size_t count, size_t size,
    int type, float * dst)
{
    (void)src; (void)weight; (void)count; (void)type;
    for (size_t i = 0; i < size; ++i)
        dst[i] = -777.0f;
}
"""

#: Loads argv[1] globally (if given), then the bundled library in both modes; prints what each answered.
PROBE = """
import ctypes, json, sys
import numpy as np
if len(sys.argv) > 1:
    ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
import simdbind
answers = {}
for mode in ("api", "abi"):
    lib = simdbind.load("bundled", mode=mode)
    x = np.array([-0.5, 2.5, 0.0], np.float32)
    answers[mode] = {
        "version": lib.version,
        "round": simdbind.unary(x, "round", library=lib).tolist(),
        "exp": simdbind.unary(np.zeros(3, np.float32), "exp", library=lib).tolist(),
        "sum": simdbind.eltwise([x, x], "sum", library=lib).tolist(),
    }
print(json.dumps(answers))
"""


def probe(*preload: str) -> dict[str, dict[str, object]]:
    run = subprocess.run([sys.executable, "-c", PROBE, *preload], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def own_answers() -> dict[str, object]:
    """What the bundled library answers by the contract (README: round half away from zero, exp exact at 0)."""
    return {"version": simdbind.load("bundled").version, "round": [-1.0, 3.0, 0.0], "exp": [1.0, 1.0, 1.0],
            "sum": [-1.0, 5.0, 0.0]}


def compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "")) or shutil.which("cc") or shutil.which("gcc")


@pytest.fixture(scope="module")
def fake_library(tmp_path_factory):
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler to build the stand-in library")
    folder = tmp_path_factory.mktemp("fake")
    source, library = folder / "fake.c", folder / "libSimd.so"
    source.write_text(FAKE_SOURCE)
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(library), str(source)], check=True, timeout=120)
    return str(library)


def test_the_stand_in_does_answer_wrongly_when_called(fake_library):
    """The probe can fail: called directly, the stand-in gives its own answers."""
    import ctypes

    fake = ctypes.CDLL(fake_library)
    fake.SimdVersion.restype = ctypes.c_char_p
    assert fake.SimdVersion() == b"7.1.162 (fake)"


def test_bundled_library_answers_for_itself_with_another_in_the_global_scope(fake_library):
    expected = own_answers()
    answers = probe(fake_library)
    assert answers == {"api": expected, "abi": expected}


def test_bundled_library_binds_its_own_symbols_locally():
    """No dynamic relocation of the bundled library names one of its own Simd functions: every call and address
    of them is resolved inside the library at link time, so nothing loaded before it can take them over."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("needs readelf (binutils)")
    relocations = subprocess.run([readelf, "-rW", simdbind.bundled_path()], capture_output=True, text=True,
                                 check=True, timeout=60).stdout
    preemptible = [line for line in relocations.splitlines()
                   if ("JUMP_SLOT" in line or "GLOB_DAT" in line or "R_X86_64_64" in line) and " Simd" in line]
    assert preemptible == []


@pytest.mark.skipif(not os.environ.get("SIMD_LIBRARY"), reason="SIMD_LIBRARY names no upstream build")
def test_bundled_library_answers_for_itself_with_upstream_in_the_global_scope():
    """The real case, opt-in: the upstream build that SIMD_LIBRARY names, loaded globally first."""
    upstream = simdbind.load(os.environ["SIMD_LIBRARY"]).path  # a path, or a name such as "upstream"
    if os.path.realpath(upstream) == os.path.realpath(simdbind.bundled_path()):
        pytest.skip("SIMD_LIBRARY names the bundled library itself")
    expected = own_answers()
    assert probe(upstream) == {"api": expected, "abi": expected}


def test_probe_without_preload_gives_the_contract():
    """The reference the interposition tests compare with is the contract, also without anything preloaded."""
    expected = own_answers()
    assert probe() == {"api": expected, "abi": expected}
