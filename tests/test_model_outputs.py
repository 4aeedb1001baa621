"""Guard zones around every output: a library that writes one element past (or before) dst fails its case with
"wrote N bytes past dst", although every element of dst is right."""

from __future__ import annotations

import numpy as np
import pytest

from simdbind.conformance import runner
from simdbind.conformance.implementations import implementations
from simdbind.conformance.deviations import Catalogue
from simdbind.conformance.model import REGISTRY, GuardedOutputs, case_from_descriptor
from tests.test_loader_doubles import CC, RUNTIME_V7_1, build

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the test double")

#: Correct eltwise (product only: the cases below use it) and unary abs, each writing one float outside dst.
OVERRUN = RUNTIME_V7_1 + """
void SimdSynetEltwiseLayerForward(const float* const* src, const float* weight, size_t count, size_t size, int op,
                                  float* dst)
{
    for (size_t i = 0; i < size; ++i) {
        float d = src[0][i];
        for (size_t j = 1; j < count; ++j)
            d *= src[j][i];
        dst[i] = d;
    }
    dst[size] = 0.0f;  /* one element past the end */
}
void SimdSynetUnaryOperation32f(const float* src, size_t size, int op, float* dst)
{
    for (size_t i = 0; i < size; ++i)
        dst[i] = src[i] < 0 ? -src[i] : src[i];
    dst[-1] = 0.0f;  /* one element before the start */
}
"""


@pytest.fixture(scope="module")
def overrunning(tmp_path_factory):
    path = build(tmp_path_factory.mktemp("overrun"), "overrun", OVERRUN)
    (impl,) = implementations([path])
    return impl


@pytest.mark.parametrize("descriptor, message", [
    ("eltwise op=product count=2 size=17", "wrote 4 bytes past dst"),
    ("unary op=abs size=17", "wrote 4 bytes before dst"),
])
def test_a_write_outside_dst_fails_the_case(overrunning, descriptor, message):
    case = case_from_descriptor(descriptor)
    result = runner.run_case(overrunning, REGISTRY[case.function], case, 5, Catalogue())
    assert result.status == "fail" and message in result.detail, result.detail
    assert result.mismatches == 0  # every element of dst itself is right


def test_the_bundled_library_writes_inside_dst():
    (impl,) = implementations(["bundled"], "base")
    for descriptor in ("eltwise op=product count=2 size=17", "unary op=abs size=17"):
        case = case_from_descriptor(descriptor)
        assert runner.run_case(impl, REGISTRY[case.function], case, 5, Catalogue()).status == "pass"


def test_guarded_outputs_start_as_nan_and_report_each_side():
    outputs = GuardedOutputs()
    a, b = outputs.new((2, 3), np.float32), outputs.new((4,), np.int32)
    assert np.isnan(a).all() and (b == -1).all() and outputs.violations() == []
    a.ravel()[:] = 1.0
    raw = outputs._storage[1][0]  # the second output's bytes with its guard zones
    raw[-1] = 0
    raw[0] = 0
    assert outputs.violations() == ["output 1: wrote 1 bytes past dst (in the 64-byte guard zone)",
                                    "output 1: wrote 1 bytes before dst (in the 64-byte guard zone)"]


def test_placed_guarded_outputs_start_at_the_offset_and_keep_their_guard_zones():
    from simdbind.conformance.model import PAGE_BYTES

    for offset in (0, 16, 48, 1040):
        outputs = GuardedOutputs(offset)
        a, b = outputs.new((5, 7), np.float32), outputs.new((3,), np.uint8)
        assert [x.ctypes.data % PAGE_BYTES for x in (a, b)] == [offset, offset]
        assert np.isnan(a).all() and outputs.violations() == []
        raw = outputs._storage[0][0]
        raw[-1] = 0
        assert outputs.violations() == ["output 0: wrote 1 bytes past dst (in the 64-byte guard zone)"]
