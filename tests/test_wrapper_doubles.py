"""The family wrappers against compiled fake Simd libraries that refuse, lie about sizes, lack a family or compute
wrong values: every case ends in a typed simdbind error naming the cause (or in a conformance failure for wrong
values), never in a crash, a NumPy MemoryError or a partly written `out`.
"""

from __future__ import annotations

import numpy as np
import pytest

import simdbind
from simdbind.conformance import runner
from simdbind.conformance.implementations import LibraryImplementation
from tests.test_loader_doubles import CC, build

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the test doubles")

HEADER = 'const char* SimdVersion(void) { return "v7.1.162"; }\nvoid SimdSynetSoftmax32f(void) {}\n' \
         "void SimdRelease(void* c) {}\nsize_t SimdGetThreadNumber(void) { return 1; }\n" \
         "void SimdSetThreadNumber(size_t n) {}\n"

#: Every context function; Init returns {context}, the buffer sizes {size}, Info {info}.
CONTEXTS = """
static char context_storage[64];
void* SimdSynetInnerProduct32fInit(size_t M, size_t N, size_t K, int tb, int cb, int b, int a) {{ return {context}; }}
size_t SimdSynetInnerProduct32fInternalBufferSize(const void* c) {{ return {size}; }}
size_t SimdSynetInnerProduct32fExternalBufferSize(const void* c) {{ return {size}; }}
void SimdSynetInnerProduct32fSetParams(void* c, const float* w, int* internal, const float* b, const float* p)
    {{ *internal = 0; }}
void SimdSynetInnerProduct32fForward(void* c, const float* A, const float* B, float* buf, float* C) {{}}
void* SimdSynetConvolution32fInit(size_t batch, const void* conv) {{ return {context}; }}
size_t SimdSynetConvolution32fExternalBufferSize(const void* c) {{ return {size}; }}
size_t SimdSynetConvolution32fInternalBufferSize(const void* c) {{ return {size}; }}
const char* SimdSynetConvolution32fInfo(const void* c) {{ return {info}; }}
void SimdSynetConvolution32fSetParams(void* c, const float* w, int* internal, const float* b, const float* p)
    {{ *internal = 0; }}
void SimdSynetConvolution32fForward(void* c, const float* src, float* buf, float* dst) {{}}
void* SimdSynetGatherElementsInit(int d, int i, int c, size_t u, const size_t* o, size_t os, size_t s, size_t in,
                                  size_t ic) {{ return {context}; }}
void SimdSynetGatherElementsSetIndex(const void* c, const unsigned char* idx) {{}}
size_t SimdSynetGatherElementsInternalBufferSize(const void* c) {{ return {size}; }}
void SimdSynetGatherElementsForward(void* c, const unsigned char* s, const unsigned char* i, unsigned char* d) {{}}
"""
REFUSING = HEADER + CONTEXTS.format(context="0", size="0", info='"x"')
LYING = HEADER + CONTEXTS.format(context="context_storage", size="(size_t)-1 / 3", info='"x"')
SILENT = HEADER + CONTEXTS.format(context="context_storage", size="0", info="0")

#: Elementwise only, and wrong: eltwise writes zeros, unary copies its input.
WRONG = HEADER + """
void SimdSynetEltwiseLayerForward(const float* const* s, const float* w, size_t n, size_t size, int op, float* d)
    { for (size_t i = 0; i < size; ++i) d[i] = 0.0f; }
void SimdSynetUnaryOperation32f(const float* s, size_t size, int op, float* d)
    { for (size_t i = 0; i < size; ++i) d[i] = s[i]; }
"""


@pytest.fixture(scope="module")
def doubles(tmp_path_factory):
    where = tmp_path_factory.mktemp("doubles")
    return {name: simdbind.load(build(where, name, source))
            for name, source in (("refusing", REFUSING), ("lying", LYING), ("silent", SILENT), ("wrong", WRONG))}


def test_refused_inits_raise_typed_errors_that_name_the_function(doubles):
    library = doubles["refusing"]
    with pytest.raises(simdbind.SimdBindError, match="SimdSynetInnerProduct32fInit"):
        simdbind.InnerProduct32f(2, 3, 4, weight=np.ones((4, 3), np.float32), library=library)
    with pytest.raises(simdbind.SimdBindError, match="SimdSynetConvolution32fInit returned NULL"):
        simdbind.Convolution32f((1, 4, 4), 2, 1, weight=np.ones((2, 1, 1, 1), np.float32), library=library)
    with pytest.raises(simdbind.SimdBindError, match="SimdSynetGatherElementsInit returned NULL"):
        simdbind.GatherElements(np.float32, np.int32, (2, 3), (2, 3), axis=1, library=library)


def test_absurd_buffer_sizes_are_refused_before_anything_is_allocated(doubles):
    library = doubles["lying"]
    with pytest.raises(simdbind.LibraryError, match=r"SimdSynetInnerProduct32f\w*BufferSize of .* misbehaves"):
        simdbind.InnerProduct32f(2, 3, 4, weight=np.ones((4, 3), np.float32), library=library)
    with pytest.raises(simdbind.LibraryError, match="SimdSynetConvolution32fExternalBufferSize"):
        simdbind.Convolution32f((1, 4, 4), 2, 1, weight=np.ones((2, 1, 1, 1), np.float32), library=library)


def test_no_algorithm_name_is_an_empty_info_and_forward_still_runs(doubles):
    conv = simdbind.Convolution32f((1, 4, 4), 2, 1, weight=np.ones((2, 1, 1, 1), np.float32),
                                   library=doubles["silent"])
    assert conv.info == "" and conv.external_buffer_size == 0
    assert conv.forward(np.ones((1, 4, 4), np.float32)).shape == (2, 4, 4)


def test_a_missing_family_fails_only_that_family(doubles):
    library = doubles["wrong"]
    x = np.ones(5, np.float32)
    out = np.full(5, 7.0, np.float32)
    with pytest.raises(simdbind.FunctionNotAvailableError, match="SimdSynetConvolution32fInit"):
        simdbind.Convolution32f((1, 4, 4), 2, 1, weight=np.ones((2, 1, 1, 1), np.float32), library=library)
    with pytest.raises(simdbind.FunctionNotAvailableError, match="SimdSynetPoolingAverage"):
        simdbind.pooling_average(np.ones((1, 4, 4), np.float32), 2, stride=1, exclude_pad=True, library=library)
    with pytest.raises(simdbind.FunctionNotAvailableError, match="SimdSynetLrnLayerCrossChannels"):
        simdbind.lrn(np.ones((1, 5, 1), np.float32).reshape(5, 1, 1), 1, [1.0, 1e-4, -0.75], out=out.reshape(5, 1, 1),
                     library=library)
    assert (out == 7.0).all()  # refused before anything ran
    assert (simdbind.unary(x * 2, "abs", library=library) == 2.0).all()  # this family is there (and wrong)


def test_wrong_values_are_conformance_failures_not_passes_or_crashes(doubles):
    implementation = LibraryImplementation("external-wrong", doubles["wrong"], "-")
    result = runner.run([implementation], ["eltwise", "unary", "convolution32f"], "smoke", workers=1)
    by_function: dict[str, set[str]] = {}
    for case in result.results:
        by_function.setdefault(case.function, set()).add(case.status)
    assert by_function["eltwise"] == {"fail"}  # zeros everywhere: no smoke case expects all zeros
    assert "fail" in by_function["unary"]  # a copy: right only where the op is the identity on that input
    assert by_function["convolution32f"] == {"skip"}  # missing symbols: a reasoned skip, not an error
    assert not any(case.status == "error" for case in result.results)
