"""tools/ulp_exhaustive.py: it finds planted errors where it should, and the bundled library keeps its unary contract.

The full run over all 2^32 inputs at every ISA takes minutes per operation; it runs only with SIMDBIND_EXHAUSTIVE=1
(`SIMDBIND_EXHAUSTIVE=1 python -m pytest tests/test_ulp_exhaustive.py -q`). The other tests visit a sample.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simdbind.library import load

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="needs a C compiler to build tools/ulp_exhaustive.c")


def _tool():
    spec = importlib.util.spec_from_file_location("ulp_exhaustive", ROOT / "tools" / "ulp_exhaustive.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# A stand-in library: exact results from the double functions, except three planted errors.
FAKE = r"""
#include <math.h>
#include <stddef.h>
#include <string.h>
void SimdSynetUnaryOperation32f(const float * src, size_t size, int type, float * dst)
{
    for (size_t i = 0; i < size; ++i) {
        float x = src[i], y;
        switch (type) {
        case 4: y = (float)exp(x); if (x == 1.0f) y = nextafterf(nextafterf(y, INFINITY), INFINITY); break;
        case 13: y = (float)sin(x); if (x == 0.0f) y = 0.0f; break;  /* sin(-0) must be -0 */
        case 11: y = 1.0f / sqrtf(x); if (x == 4.0f) y = nextafterf(y, 0.0f); break;
        default: y = x; break;
        }
        dst[i] = y;
    }
}
"""


def test_planted_errors_are_found_where_they_are(tmp_path):
    source = tmp_path / "fake.c"
    source.write_text(FAKE)
    library = tmp_path / "libfake.so"
    subprocess.run([shutil.which("cc") or "gcc", "-O1", "-fPIC", "-shared", "-o", str(library), str(source), "-lm"],
                   check=True)
    tool = _tool()
    # Every 2^20th bit pattern: 1.0f (0x3f800000), 4.0f (0x40800000) and -0.0f (0x80000000) are among them.
    rows = {r.op: r for r in tool.run(str(library), ["exp", "sin", "rsqrt"], [("native", "native")], 1 << 20)}
    exp, sin, rsqrt = rows["exp"], rows["sin"], rows["rsqrt"]
    assert exp.count == sin.count == rsqrt.count == 4096
    assert exp.max_x == 1.0 and 1.5 < exp.max_ulp < 2.5 and exp.over_1_5 == 1 and exp.special == 0
    assert not exp.ok
    assert sin.special == 1 and sin.special_x == 0.0 and math.copysign(1, sin.special_x) == -1
    assert sin.max_ulp <= 0.5 and not sin.ok
    assert rsqrt.mismatches == 1 and rsqrt.mismatch_x == 4.0 and rsqrt.mismatch_expected == 0.5
    assert rsqrt.mismatch_y == 0.5 - 2.0**-25 and not rsqrt.ok  # the float below 0.5


def _check_bundled(step: int) -> None:
    tool = _tool()
    lib = load("bundled")
    previous = lib.isa
    from simdbind.library import ISAS, bundled_path

    isas = [(str(ISAS.index(i)), i) for i in lib.isas_supported]
    try:
        rows = tool.run(bundled_path(), list(tool.TRANSCENDENTAL + tool.EXACT), isas, step)
    finally:
        lib.set_isa(previous)
    assert len(rows) == len(isas) * len(tool.TRANSCENDENTAL + tool.EXACT)
    bad = [r for r in rows if not r.ok]
    assert not bad, tool.format_rows(bad)
    for r in rows:
        if r.max_ulp is not None:
            assert r.max_ulp <= 1.5, (r.op, r.isa, r.max_ulp, r.max_x)


def test_bundled_keeps_the_contract_on_a_sample():
    # 65,537 is odd and prime: the sample crosses every exponent, both signs, NaNs and subnormals.
    _check_bundled(65537)


@pytest.mark.skipif(os.environ.get("SIMDBIND_EXHAUSTIVE") != "1", reason="set SIMDBIND_EXHAUSTIVE=1: all 2^32 inputs")
def test_bundled_keeps_the_contract_on_every_input():
    _check_bundled(1)
