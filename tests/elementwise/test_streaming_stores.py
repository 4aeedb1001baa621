"""The streaming paths (non-temporal stores for calls that touch at least the streaming threshold: csrc/simdbind_ext.h)
of the unary and eltwise kernels at every ISA: the same bits as NumPy for the exact operations and as the cached path
for the others, at every alignment of dst (the floats before its first aligned vector take the partial store) and of
the inputs, nothing written outside dst, and sizes below one vector. The threshold is lowered so that small arrays
take the path."""

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



# -- eltwise ---------------------------------------------------------------------------------------------------
#: NumPy's fold of each exact operation (float32 throughout): max/min as the contract's a > b ? a : b, a < b ? a : b.
ELTWISE_EXACT = {"max": lambda a, b: np.where(a > b, a, b), "min": lambda a, b: np.where(a < b, a, b),
                 "product": np.multiply}
#: Sizes around one vector, past one 2048-float block and past a block boundary shifted by dst's head.
ELTWISE_SIZES = (1, 15, 16, 17, 33, 100, 2048 + 37, 2 * 2048 + 5)


def _eltwise_at(library: simdbind.Library, arrays: list[np.ndarray], op: str, weights: np.ndarray | None,
                offset: int) -> np.ndarray:
    """eltwise(arrays) written `offset` floats into a sentinel-filled buffer; checks that nothing around it changed."""
    size = arrays[0].size
    buffer = np.full(size + offset + 40, SENTINEL, np.float32)
    out = buffer[offset:offset + size]
    simdbind.eltwise(arrays, op, weights, out=out, library=library)
    assert (buffer[:offset] == SENTINEL).all() and (buffer[offset + size:] == SENTINEL).all(), \
        f"{op}: a write outside dst (offset {offset}, size {size})"
    return out.copy()


def _inputs_at(rng: np.random.Generator, count: int, size: int, offset: int) -> list[np.ndarray]:
    """`count` inputs, the i-th starting (offset + 5 * i) % 16 floats past a 64-byte boundary, so that the inputs
    lie at alignments other than dst's."""
    arrays = []
    for i in range(count):
        shift = (offset + 5 * i) % 16
        storage = np.empty(size + 32, np.float32)
        start = (-storage.ctypes.data % 64) // 4 + shift
        array = storage[start:start + size]
        array[:] = rng.uniform(-30, 30, size).astype(np.float32)
        arrays.append(array)
    return arrays


@pytest.mark.parametrize("count", (2, 3, 4))
@pytest.mark.parametrize("op", sorted(ELTWISE_EXACT))
def test_streamed_exact_eltwise_equals_numpy(streaming, op, count):
    rng = np.random.default_rng(47)
    for size in ELTWISE_SIZES:
        for offset in range(16):  # every alignment of dst within a 64-byte vector
            arrays = _inputs_at(rng, count, size, offset)
            expected = arrays[0]
            for array in arrays[1:]:
                expected = ELTWISE_EXACT[op](expected, array).astype(np.float32)
            for isa in streaming.isas_supported:
                with streaming.use_isa(isa):
                    got = _eltwise_at(streaming, arrays, op, None, offset)
                np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32),
                                              err_msg=f"{op} count={count} isa={isa} size={size} offset={offset}")


@pytest.mark.parametrize("count", (2, 3))
def test_streamed_eltwise_sum_equals_the_cached_path(bundled, count):
    """Weighted sums round per ISA (fused or not); streamed, each ISA gives the bits of its own cached path."""
    rng = np.random.default_rng(53)
    weights = rng.uniform(-2, 2, count).astype(np.float32)
    before = bundled.lib.SimdBindGetStreamingBytes()
    try:
        for size in ELTWISE_SIZES:
            for offset in range(16):
                arrays = _inputs_at(rng, count, size, offset)
                for isa in bundled.isas_supported:
                    with bundled.use_isa(isa):
                        bundled.lib.SimdBindSetStreamingBytes(1 << 40)
                        cached = _eltwise_at(bundled, arrays, "sum", weights, offset)
                        bundled.lib.SimdBindSetStreamingBytes(0)
                        got = _eltwise_at(bundled, arrays, "sum", weights, offset)
                    np.testing.assert_array_equal(got.view(np.uint32), cached.view(np.uint32),
                                                  err_msg=f"count={count} isa={isa} size={size} offset={offset}")
    finally:
        bundled.lib.SimdBindSetStreamingBytes(before)


@pytest.mark.parametrize("which", (0, 1))
def test_streamed_eltwise_in_place(streaming, which):
    """out may be inputs[0] or inputs[1] itself: the streamed stores land where the loads were made."""
    rng = np.random.default_rng(59)
    for size in (17, 2048 + 37):
        for offset in range(16):
            for isa in streaming.isas_supported:
                arrays = _inputs_at(rng, 3, size, offset)
                expected = np.maximum(np.maximum(arrays[0], arrays[1]), arrays[2])
                with streaming.use_isa(isa):
                    simdbind.eltwise(arrays, "max", out=arrays[which], library=streaming)
                np.testing.assert_array_equal(arrays[which], expected, err_msg=f"isa={isa} size={size}")
