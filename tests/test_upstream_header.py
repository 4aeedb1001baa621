"""Bindings generated from a header (simdbind.upstream.header and .raw): our csrc/simd_synet.h against the bundled
library in ABI mode, the NumPy-aware caller's checks, and the comparison of two headers on doctored text. With
SIMD_SOURCE naming a local Simd source, our header is compared with its src/Simd/SimdLib.h."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import simdbind
from simdbind.upstream import header
from simdbind.upstream.raw import RawLibrary, raw

ROOT = Path(__file__).resolve().parent.parent
OURS = ROOT / "csrc" / "simd_synet.h"


@pytest.fixture(scope="module")
def cc() -> list[str]:
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) to preprocess headers with")
    return [compiler]


@pytest.fixture(scope="module")
def ours(cc: list[str]) -> str:
    return header.preprocess(OURS.read_text(), cc)


@pytest.fixture(scope="module")
def bundled_raw(ours: str) -> RawLibrary:
    return raw(simdbind.load("bundled", mode="abi"), header=OURS)


def test_our_header_becomes_declarations_of_every_function_it_declares(ours):
    declared = set(re.findall(r"SIMD_API\b[^;(]*?\b(Simd\w+)\s*\(", OURS.read_text()))
    prototypes = header.prototypes(ours)
    assert set(prototypes) == declared and len(declared) > 30
    softmax = prototypes["SimdSynetSoftmax32f"]
    assert softmax.text == "void SimdSynetSoftmax32f(const float * src, size_t outer, size_t count, size_t inner, " \
                           "float * dst)"
    assert [p.type for p in prototypes["SimdSynetEltwiseLayerForward"].parameters][:1] == ["float const * const *"]


def test_every_function_of_our_header_is_callable_on_the_bundled_library(bundled_raw):
    counts = bundled_raw.counts()
    # The bundled library exports every function of simd_synet.h (it is its own header).
    assert counts["declared"] == counts["callable"] == len(bundled_raw.prototypes)
    # Those needing a cffi object: a pointer table (eltwise), a struct (convolution), a SimdBool * out-parameter.
    needs_cdata = {name for name in bundled_raw.available() if not bundled_raw.function(name).numpy_ready}
    assert needs_cdata and all(any(k.how == "cdata" for k in bundled_raw.function(n).kinds) for n in needs_cdata)
    assert counts["numpy"] == counts["callable"] - len(needs_cdata)


def test_the_header_enums_are_int_enums_with_the_header_values(bundled_raw):
    from simdbind._abi import ffi as package_ffi  # made from the same header by csrc/cffi_modules.py

    assert len(bundled_raw.enums) >= 8
    for enum_type in bundled_raw.enums.values():
        for member in enum_type.__members__.values():
            assert int(member) == package_ffi.integer_const(member.name)
    unary = bundled_raw.SimdSynetUnaryOperation32fType
    assert {int(m) for m in unary} == {int(m) for m in simdbind.UnaryOperation}
    assert bundled_raw.SimdBool.SimdTrue == 1


def test_a_raw_call_on_arrays_matches_the_wrapper(bundled_raw):
    rng = np.random.default_rng(1)
    src = rng.standard_normal((3, 5, 2)).astype(np.float32)
    dst = np.empty_like(src)
    bundled_raw.SimdSynetSoftmax32f(src, 3, 5, 2, dst)
    np.testing.assert_array_equal(dst, simdbind.softmax(src, axis=1, library=simdbind.load("bundled")))
    dst[:] = 0
    bundled_raw.SimdSynetUnaryOperation32f(src, src.size, bundled_raw.SimdSynetUnaryOperation32fType.
                                           SimdSynetUnaryOperation32fAbs, dst)
    np.testing.assert_array_equal(dst, np.abs(src))
    version = bundled_raw.SimdVersion()
    assert bundled_raw.ffi.string(version).decode() == simdbind.load("bundled").version


def test_the_caller_checks_types_constness_and_count_but_not_sizes(bundled_raw):
    softmax = bundled_raw.SimdSynetSoftmax32f
    src = np.ones(4, np.float32)
    with pytest.raises(simdbind.DTypeError, match=r"SimdSynetSoftmax32f: src \(const float \*\): needs a float32 "
                                                  r"array, got float64"):
        softmax(np.ones(4), 1, 4, 1, np.empty(4, np.float32))
    read_only = np.empty(4, np.float32)
    read_only.flags.writeable = False
    with pytest.raises(simdbind.ArgumentError, match=r"dst \(float \*\): the function writes through this pointer"):
        softmax(src, 1, 4, 1, read_only)
    src.flags.writeable = False
    softmax(src, 1, 4, 1, np.empty(4, np.float32))  # a const pointer takes a read-only array
    with pytest.raises(simdbind.ArgumentError, match=r"takes 5 arguments \(void SimdSynetSoftmax32f\("):
        softmax(src, 1, 4, 1)
    with pytest.raises(simdbind.ArgumentError, match=r"outer \(size_t\): needs an integer, got 1.5"):
        softmax(src, 1.5, 4, 1, np.empty(4, np.float32))
    with pytest.raises(simdbind.ArgumentError, match=r"outer \(size_t\): needs a number, got bool"):
        softmax(src, True, 4, 1, np.empty(4, np.float32))
    with pytest.raises(simdbind.ArgumentError, match=r"needs a contiguous array"):
        softmax(np.ones(8, np.float32)[::2], 1, 4, 1, np.empty(4, np.float32))
    with pytest.raises(simdbind.ArgumentError, match=r"SimdSynetEltwiseLayerForward: src \(float const \* const \*\): "
                                                     r"needs a cffi"):
        bundled_raw.SimdSynetEltwiseLayerForward(np.ones(4, np.float32), None, 1, 4, 0, None)
    assert "Sizes are NOT checked" in softmax.__doc__ and "dst: a float32 array, writeable" in softmax.__doc__


def test_a_library_without_declarations_says_how_to_get_them():
    with pytest.raises(simdbind.LibraryError, match="builds made by `simdbind upstream build` have them"):
        _ = simdbind.load("bundled").raw


# -- the comparison of two headers ------------------------------------------------------------------------------------
def test_a_header_compared_with_itself_has_no_difference(ours):
    assert header.compare(ours, ours) == []


SOFTMAX = "void SimdSynetSoftmax32f(const float * src, size_t outer, size_t count, size_t inner, float * dst);"


@pytest.mark.parametrize("old, new, expected", [
    ("void SimdSynetSoftmax32f(const float * src, size_t outer,", "void SimdSynetSoftmax32f(const float * src, int outer,",
     "SimdSynetSoftmax32f: parameter 2 (outer) is size_t here, int in Simd's header"),
    (SOFTMAX, SOFTMAX.replace("float * dst)", "float * dst, int extra)"),
     "SimdSynetSoftmax32f: 5 parameters here, 6 in Simd's header (void SimdSynetSoftmax32f(const float * src, "
     "size_t outer, size_t count, size_t inner, float * dst, int extra))"),
    ("size_t SimdGetThreadNumber(void)", "int SimdGetThreadNumber(void)",
     "SimdGetThreadNumber: returns size_t here, int in Simd's header"),
    (SOFTMAX, SOFTMAX.replace("(const float * src", "(float * src"), "SimdSynetSoftmax32f: parameter 1 (src) is const float * here, float * in Simd's header"),
    ("SimdSynetUnaryOperation32fCeil = 1", "SimdSynetUnaryOperation32fCeil = 7",
     "SimdSynetUnaryOperation32fType: SimdSynetUnaryOperation32fCeil = 1 here, 7 in Simd's header"),
])
def test_each_kind_of_difference_is_reported_by_name(ours, old, new, expected):
    assert ours.count(old) == 1, f"the preprocessed header no longer has {old!r}"
    assert header.compare(ours, ours.replace(old, new)) == [expected]


def test_functions_only_one_header_declares_are_not_differences(ours):
    doctored = re.sub(r"void SimdSetThreadNumber\(size_t threadNumber\);", "", ours)
    assert doctored != ours and header.compare(ours, doctored) == []


def test_our_header_matches_simd_sources_header(ours, cc):
    """Opt-in: SIMD_SOURCE names a local Simd source (a checkout or an unpacked archive)."""
    simd_source = os.environ.get("SIMD_SOURCE")
    if not simd_source:
        pytest.skip("SIMD_SOURCE is not set: it names a local Simd source to compare csrc/simd_synet.h with")
    theirs = Path(simd_source) / "src" / "Simd" / "SimdLib.h"
    if not theirs.is_file():
        pytest.skip(f"SIMD_SOURCE={simd_source} has no src/Simd/SimdLib.h (a bare mirror has no work tree)")
    upstream = header.preprocess(theirs.read_text(errors="replace"), cc)
    assert header.compare(ours, upstream) == []
    # Every function of ours is Simd's, but the pre-v7.0.160 softmax that the loader probes to refuse old builds.
    assert set(header.prototypes(ours)) - set(header.prototypes(upstream)) <= {"SimdSynetSoftmaxLayerForward"}
