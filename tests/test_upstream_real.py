"""Opt-in: a real Simd build, and image functions of Simd called through the bindings generated from its header,
checked against NumPy references written from the header's documentation.

Enabled by SIMD_SOURCE (a local Simd checkout or mirror: the build is made, or found in the cache, by
`simdbind upstream build --source $SIMD_SOURCE`), or by SIMD_LIBRARY naming a build that has generated
declarations beside it (`upstream`, `upstream@REF`, or the path of a cached libSimd.so). CI sets neither."""

from __future__ import annotations

import os

import numpy as np
import pytest

import simdbind
from simdbind.upstream import header
from simdbind.upstream.raw import declarations_for


@pytest.fixture(scope="module")
def upstream() -> simdbind.Library:
    named = os.environ.get("SIMD_LIBRARY")
    if named:
        library = simdbind.load(named)
        if declarations_for(library.path) is not None:
            return library
    simd_source = os.environ.get("SIMD_SOURCE")
    if not simd_source:
        pytest.skip("neither SIMD_SOURCE (a local Simd source to build) nor SIMD_LIBRARY naming a build made by "
                    "`simdbind upstream build` is set")
    from simdbind.upstream.pipeline import Request, build

    entry = build(Request(source=simd_source, check=False))
    return simdbind.load(str(entry.library))


def test_the_build_has_its_declarations_backends_and_version(upstream):
    from simdbind.upstream import cache

    counts = upstream.raw.counts()
    # A full build exports every function its header declares.
    assert counts["declared"] > 400 and counts["callable"] == counts["declared"]
    version = upstream.raw.ffi.string(upstream.raw.SimdVersion()).decode()
    assert version == upstream.version
    entry = next((e for e in cache.entries() if str(e.library) == upstream.path), None)
    if entry is not None:  # a build of the cache: what its manifest says is what the library holds
        assert entry.manifest["version"] == upstream.version
        assert {"base", "sse41", "avx2"} <= set(entry.manifest["backends"])


def test_bgr_to_gray_matches_the_documented_formula(upstream):
    rng = np.random.default_rng(7)
    height, width = 37, 101  # odd sizes: the vector loops' tails run
    bgr = rng.integers(0, 256, (height, width, 3), dtype=np.uint8)
    gray = np.full((height, width), 7, np.uint8)
    upstream.raw.SimdBgrToGray(bgr, width, height, bgr.strides[0], gray, gray.strides[0])
    # SimdLib.h: gray = round(0.114*blue + 0.587*green + 0.299*red), computed in 14-bit fixed point.
    expected = np.rint(bgr[..., 0] * 0.114 + bgr[..., 1] * 0.587 + bgr[..., 2] * 0.299)
    assert np.abs(gray.astype(np.int32) - expected.astype(np.int32)).max() <= 1
    assert np.mean(gray == expected) > 0.95


def test_gray_to_bgr_copies_each_pixel_to_three_channels(upstream):
    gray = np.random.default_rng(8).integers(0, 256, (19, 45), dtype=np.uint8)
    bgr = np.zeros((19, 45, 3), np.uint8)
    upstream.raw.SimdGrayToBgr(gray, 45, 19, gray.strides[0], bgr, bgr.strides[0])
    np.testing.assert_array_equal(bgr, np.repeat(gray[..., None], 3, axis=2))


def test_the_raw_caller_refuses_a_wrong_element_type(upstream):
    with pytest.raises(simdbind.DTypeError, match=r"SimdBgrToGray: bgr \(const uint8_t \*\): needs a uint8 array"):
        upstream.raw.SimdBgrToGray(np.zeros((2, 2, 3), np.float32), 2, 2, 6, np.zeros((2, 2), np.uint8), 2)


def test_header_enums_are_int_enums(upstream):
    cpu_info = upstream.raw.SimdCpuInfoType
    assert upstream.raw.SimdCpuInfo(cpu_info.SimdCpuInfoSse41) in (0, 1)
    assert header.enums(upstream.raw.ffi)["SimdCpuInfoType"]["SimdCpuInfoAvx2"] == int(cpu_info.SimdCpuInfoAvx2)
