"""The unary kernels' streaming path (non-temporal stores for calls that touch at least the streaming threshold:
csrc/simdbind_ext.h) at every ISA: the same bits as NumPy for the exact operations and as the cached path for the
others, at every alignment of dst (the floats before its first aligned vector take the partial store), nothing
written outside dst, and sizes below one vector. The threshold is lowered so that small arrays take the path."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import simdbind

#: Operations whose result NumPy computes bit for bit (IEEE), on inputs without NaN.
EXACT = {"abs": np.abs, "neg": np.negative, "sqrt": np.sqrt, "rcp": lambda x: np.float32(1) / x,
         "floor": np.floor, "ceil": np.ceil, "zero": np.zeros_like,
         "not": lambda x: (~x.view(np.uint32)).view(np.float32)}
INEXACT = ("exp", "log", "erf", "tanh", "sin", "cos", "rsqrt", "round", "sign")
SENTINEL = np.float32(-12345.5)


@pytest.fixture
def streaming(bundled) -> Iterator[simdbind.Library]:
    """The bundled library with the streaming threshold at 0 (every call streams), restored afterwards."""
    before = bundled.lib.SimdBindGetStreamingBytes()
    bundled.lib.SimdBindSetStreamingBytes(0)
    try:
        yield bundled
    finally:
        bundled.lib.SimdBindSetStreamingBytes(before)


def _unary_at(library: simdbind.Library, x: np.ndarray, op: str, offset: int) -> np.ndarray:
    """unary(x) written `offset` floats into a sentinel-filled buffer; checks that nothing around it changed."""
    buffer = np.full(x.size + offset + 40, SENTINEL, np.float32)
    out = buffer[offset:offset + x.size]
    simdbind.unary(x, op, out=out, library=library)
    assert (buffer[:offset] == SENTINEL).all() and (buffer[offset + x.size:] == SENTINEL).all(), \
        f"{op}: a write outside dst (offset {offset}, size {x.size})"
    return out.copy()


def _inputs(op: str, size: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(1e-3 if op in ("log", "sqrt", "rsqrt") else -30, 30, size).astype(np.float32)


def test_the_threshold_is_a_cache_size_and_settable(bundled):
    default = bundled.lib.SimdBindGetStreamingBytes()
    assert default >= 1 << 18, "the default is the last-level cache instance: at least 256 KiB on any x86 CPU"
    try:
        bundled.lib.SimdBindSetStreamingBytes(12345)
        assert bundled.lib.SimdBindGetStreamingBytes() == 12345
    finally:
        bundled.lib.SimdBindSetStreamingBytes(default)
    assert bundled.lib.SimdBindGetStreamingBytes() == default


@pytest.mark.parametrize("op", sorted(EXACT))
def test_streamed_exact_operations_equal_numpy(streaming, op):
    rng = np.random.default_rng(41)
    for size in (1, 3, 15, 16, 17, 33, 100, 1031):
        x = _inputs(op, size, rng)
        expected = EXACT[op](x).astype(np.float32)
        for isa in streaming.isas_supported:
            with streaming.use_isa(isa):
                for offset in range(16):  # every alignment of dst within a 64-byte vector
                    got = _unary_at(streaming, x, op, offset)
                    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32),
                                                  err_msg=f"{op} isa={isa} size={size} offset={offset}")


@pytest.mark.parametrize("op", INEXACT)
def test_streamed_results_equal_the_cached_path(bundled, op):
    """Lane-wise kernels: the streaming path gives the bits of the cached one (which the suite checks against the
    reference) at every alignment."""
    rng = np.random.default_rng(43)
    x = _inputs(op, 1031, rng)
    before = bundled.lib.SimdBindGetStreamingBytes()
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            bundled.lib.SimdBindSetStreamingBytes(1 << 40)
            try:
                cached = _unary_at(bundled, x, op, 0)
                bundled.lib.SimdBindSetStreamingBytes(0)
                for offset in range(16):
                    got = _unary_at(bundled, x, op, offset)
                    np.testing.assert_array_equal(got.view(np.uint32), cached.view(np.uint32),
                                                  err_msg=f"{op} isa={isa} offset={offset}")
            finally:
                bundled.lib.SimdBindSetStreamingBytes(before)

