"""References of the inner-product family, written from upstream's documentation of the functions (SimdLib.h).

Float products are computed in float64 and rounded once to float32; the int8 product in int64, then wrapped to
int32 as C's int32 accumulator does.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from simdbind.conformance.activation import activate


def inner_product_32f(A: np.ndarray, B: np.ndarray, trans_b: bool, bias: np.ndarray | None, activation: str,
                      params: Sequence[float] | np.ndarray | None) -> np.ndarray:
    """``C[i, j] = act(sum_k A[i, k] * (B[j, k] if trans_b else B[k, j]) + bias[j])`` (SimdSynetInnerProduct32f)."""
    b = B.astype(np.float64)
    # Infinite and NaN inputs (the edge group) make inf - inf and 0 * inf: NaN, as in float32, without a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        total = A.astype(np.float64) @ (b.T if trans_b else b)
        if bias is not None:
            total = total + bias.astype(np.float64)
        return activate(total, activation, params, channel_axis=-1).astype(np.float32)


def inner_product_layer(src: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """``dst[i] = (bias[i] if bias else 0) + sum_j src[j] * weight[i, j]`` (SimdSynetInnerProductLayerForward)."""
    with np.errstate(over="ignore", invalid="ignore"):  # as inner_product_32f
        total = weight.astype(np.float64) @ src.astype(np.float64)
        if bias is not None:
            total = total + bias.astype(np.float64)
        return total.astype(np.float32)


def _wrap32(values: np.ndarray) -> np.ndarray:
    return ((values.astype(np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


def inner_product_8i(src: np.ndarray, weight: np.ndarray, precise: bool) -> np.ndarray:
    """uint8 (M, K) x int8 (N, K) -> int32 (M, N) (SimdSynetInnerProduct8i).

    precise: ``sum_k s*w``. Otherwise the products of pairs (2m, 2m+1) are summed and clamped to [-32768, 32767]
    before the int32 sum; an odd last product is added unclamped.
    """
    p = src[:, None, :].astype(np.int64) * weight[None, :, :].astype(np.int64)
    if precise:
        return _wrap32(p.sum(-1))
    K = src.shape[1]
    K2 = K - K % 2
    pairs = np.clip(p[..., 0:K2:2] + p[..., 1:K2:2], -32768, 32767).sum(-1)
    if K % 2:
        pairs = pairs + p[..., K - 1]
    return _wrap32(pairs)
