"""The bundled library's fast paths against their contracts at every ISA, on the inputs where a shortcut could
differ from the general formula: GatherElements with inner > 1 (index blocks cleared by vector comparisons, blocks
with a negative or out-of-range index on the checked loop), 2x2 stride-2 NCHW average pooling (bit-exact scan-order
fold: signed zeros, cancellation to zero, underflow to -0, every row tail) and LRN with k2 = -0.75 (the reciprocal
square root form, bases outside its range on exp(log()))."""

from __future__ import annotations

import numpy as np
import pytest

import simdbind
from tests.gather.test_gather_kernel import gather_forward


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_inner_blocks_match_the_contract(bundled, index_dtype):
    rng = np.random.default_rng(23)
    n = 37
    outside = [n, -n - 1, 2**31 - 1, -(2**31)] + ([2**32 + 1, 2**63 - 1, -(2**63)] if index_dtype is np.int64 else [])
    for inner in (2, 15, 16, 63, 64, 65, 130):
        src = rng.integers(1, 2**31, (2, n, inner)).astype(np.uint32)
        src[0, 0, 0] = 0x7FC01234  # a NaN payload: the copy is of bits
        src = src.view(np.float32)
        idx = rng.integers(0, n, (2, 5, inner)).astype(index_dtype)  # row 0 of each outer: all in range
        flat = idx[:, 1:].reshape(-1)
        flat[rng.integers(0, flat.size, 9)] = rng.integers(-n, 0, 9)  # negative: count from the end
        flat[rng.integers(0, flat.size, len(outside))] = outside
        idx[:, 1:] = flat.reshape(idx[:, 1:].shape)
        v = idx.astype(np.int64) if index_dtype is np.int32 else idx.copy()
        with np.errstate(over="ignore"):
            v = np.where(v < 0, v + n, v)
        inside = (v >= 0) & (v < n)
        expected = np.where(inside, np.take_along_axis(src.view(np.uint32), np.where(inside, v, 0), 1), 0)
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                got = gather_forward(bundled, src, idx)
            np.testing.assert_array_equal(got.view(np.uint32), expected.astype(np.uint32),
                                          err_msg=f"isa={isa} inner={inner} {np.dtype(index_dtype)}")


def _scan_order_average_2x2(x: np.ndarray) -> np.ndarray:
    """The kernel's semantics (upstream's Base average pooling), float32 step by step: 0 + the window in row-major
    order, then / 4."""
    c, h, w = x.shape
    out = np.empty((c, h // 2, w // 2), np.float32)
    with np.errstate(over="ignore"):
        for y in range(h // 2):
            for j in range(w // 2):
                acc = np.zeros(c, np.float32)
                for dy in (0, 1):
                    for dx in (0, 1):
                        acc = acc + x[:, 2 * y + dy, 2 * j + dx]
                out[:, y, j] = acc / np.float32(4)
    return out


def test_average_2x2_stride2_is_the_scan_order_fold(bundled):
    rng = np.random.default_rng(29)
    values = np.array([-0.0, 0.0, 1e-45, -1e-45, 1e-40, 1.5, -2.25, 0.1, 3e38, -3e38], np.float32)
    for width in list(range(2, 20)) + [33, 56, 57]:
        x = rng.choice(values, (3, 6, width)).astype(np.float32)
        # Windows whose scan order matters: -3e38 + 3e38 cancels to +0, then -1e-45 / 4 underflows to -0 (an add of
        # +0 after the scaling would make it +0); four -0 give +0 (0 + -0).
        x[0, :2, :2] = [[-3e38, 3e38], [-0.0, -1e-45]]
        x[1, :2, :2] = -0.0
        for exclude in (False, True):
            expected = _scan_order_average_2x2(x)  # no padding: every window is whole, so exclude_pad is moot
            for isa in bundled.isas_supported:
                with bundled.use_isa(isa):
                    got = simdbind.pooling_average(x, 2, stride=2, exclude_pad=exclude, library=bundled)
                assert got.tobytes() == expected.tobytes(), (isa, width, exclude)


def test_lrn_three_quarters_keeps_the_special_values(bundled):
    # Bases 0 (x = 0 with k0 = 0), tiny and huge (outside [2^-100, 2^100]: exp(log()) there), negative (NaN) and
    # ordinary ones in one tensor, k2 = -0.75.
    x = np.array([0.0, 1e-20, 1e-16, 3e-3, 1.0, 7.0, 1e15, 1e18, 3e19], np.float32).reshape(9, 1, 1)
    for k in ((0.0, 1.0, -0.75), (0.0, 1e-30, -0.75), (1.0, -1.0, -0.75), (1e30, 1.0, -0.75)):
        kk = np.array(k, np.float32)
        sums = np.zeros_like(x)
        with np.errstate(over="ignore"):  # 3e19 squared overflows float32 to inf, as the kernel's sum does
            for c in range(x.shape[0]):  # half 1: the window sum of squares in float32, in channel order
                for i in range(max(0, c - 1), min(x.shape[0], c + 2)):
                    sums[c] = sums[c] + x[i] * x[i]
        with np.errstate(all="ignore"):
            base = kk[0] + kk[1] * sums
            expected = x.astype(np.float64) * np.exp(np.log(base.astype(np.float64)) * -0.75)
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                got = simdbind.lrn(x, 1, kk, "nchw", library=bundled).astype(np.float64)
            assert np.array_equal(np.isnan(got), np.isnan(expected)), (isa, k)
            finite = np.isfinite(expected) & (np.abs(expected) < 3e38) & (np.abs(expected) > 1e-37)
            assert np.array_equal(np.isinf(got), ~np.isnan(expected) & (np.abs(expected) >= 3.5e38)), (isa, k)
            np.testing.assert_allclose(got[finite], expected[finite], rtol=2e-5, err_msg=f"{isa} {k}")
