"""Reference activations (the Base formulas of SimdConvolutionActivationType) in float64.

Written from the formulas upstream documents for each activation type (SimdLib.h), not from any C kernel. ``Max(a, b)``
is ``a > b ? a : b`` and ``Min(a, b)`` is ``a < b ? a : b``, so NaN handling follows upstream's comparisons. Mish uses
the identity ``tanh(softplus(x)) = n / (n + 2)`` with ``n = e^x (e^x + 2)``, exact in float64 and free of cancellation.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

KINDS = ("identity", "relu", "leaky_relu", "restrict_range", "prelu", "elu", "hswish", "mish", "hard_sigmoid",
         "swish", "gelu")

_erf = np.frompyfunc(math.erf, 1, 1)


def _max(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return np.where(a > b, a, b)


def _min(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return np.where(a < b, a, b)


def erf(x: np.ndarray) -> NDArray[np.float64]:
    """erf in float64 (math.erf, elementwise)."""
    x = np.asarray(x, np.float64)
    return np.asarray(_erf(x), np.float64).reshape(x.shape)


def activate(x: NDArray[np.float64], kind: str, params: Sequence[float] | np.ndarray | None = None,
             channel_axis: int = -1) -> np.ndarray:
    """``kind`` applied to float64 `x`; `params` in C order; prelu slopes index `channel_axis` of `x`."""
    x = np.asarray(x, np.float64)
    p = [float(v) for v in np.asarray(() if params is None else params, np.float64).ravel()]
    if kind == "identity":
        return x.copy()
    if kind == "relu":
        return _max(0.0, x)
    if kind == "leaky_relu":
        return _max(0.0, x) + p[0] * _min(x, 0.0)
    if kind == "restrict_range":
        return _min(_max(p[0], x), p[1])  # upstream's Activate<RestrictRange>: upper when lower > upper; NaN -> upper
    if kind == "prelu":
        shape = [1] * x.ndim
        shape[channel_axis] = x.shape[channel_axis]
        slopes = np.asarray(p, np.float64).reshape(shape)
        return _max(0.0, x) + slopes * _min(x, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if kind == "elu":
            return np.where(x >= 0, x, p[0] * np.expm1(x))
        if kind == "hswish":
            return _max(_min(x, p[0]) + p[0], 0.0) * p[1] * x
        if kind == "mish":
            e = np.exp(np.minimum(x, 40.0))
            n = e * (e + 2.0)
            return np.where(x > p[0], x, x * (n / (n + 2.0)))
        if kind == "hard_sigmoid":
            return _max(0.0, _min(x * p[0] + p[1], 1.0))
        if kind == "swish":
            return x / (1.0 + np.exp(-x * p[0]))
        if kind == "gelu":
            return x * (erf(x / math.sqrt(2.0)) + 1.0) * 0.5
    raise ValueError(f"unknown activation {kind!r}")


def either_side_of_the_jump(expected: np.ndarray, pre: np.ndarray, actual: np.ndarray, kind: str, params: Any,
                            margin: float) -> np.ndarray:
    """`expected`, with the other branch's value where the activation jumps and the kernel may take either branch.

    Mish with a threshold is discontinuous at x = threshold (x above, x * tanh(softplus(x)) at or below; a jump of
    ~0.125 at 0.5). Where the exact pre-activation lies within `margin` (the bound on the kernel's own rounding of
    it) of the threshold, a correct float32 kernel can land on either side. There the branch the kernel took is
    accepted, and its value is still checked against that branch's formula. Other activations are continuous:
    `expected` is returned as is.
    """
    if kind != "mish":
        return expected
    threshold = float(np.asarray(params, np.float64).ravel()[0])
    pre = np.asarray(pre, np.float64)
    near = np.abs(pre - threshold) <= margin
    if not near.any():
        return expected
    upper = activate(pre, "mish", [-np.inf])  # every x on the identity branch
    lower = activate(pre, "mish", [np.inf])  # every x on the curve
    other = np.where(pre > threshold, lower, upper).astype(expected.dtype)
    got = np.asarray(actual, np.float64)
    take = near & (np.abs(got - other) < np.abs(got - np.asarray(expected, np.float64)))
    return np.where(take, other, expected)


def lipschitz(kind: str, params: Sequence[float] | np.ndarray | None = None) -> float:
    """A bound on |d act / dx| over the real line: how much an input error can grow through the activation."""
    p = [] if params is None else [abs(float(v)) for v in np.asarray(params, np.float64).ravel()]
    if kind in ("identity", "relu", "restrict_range"):
        return 1.0
    if kind in ("leaky_relu", "prelu"):
        return max([1.0] + p)
    if kind == "elu":
        return max(1.0, p[0])
    if kind == "hswish":
        # d/dx of (x + shift) * scale * x on [-shift, shift] is scale * (2x + shift): at most 3*shift*scale.
        return max(1.0, 3.0 * p[0] * p[1])
    if kind == "hard_sigmoid":
        return max(1.0, p[0])
    if kind == "swish":
        return 1.1  # d/dx x*sigmoid(sx) = g(sx) with g(u) = sigmoid(u) + u*sigmoid(u)(1 - sigmoid(u)) in [-0.1, 1.1]
    if kind in ("mish", "gelu"):
        return 1.2
    raise ValueError(f"unknown activation {kind!r}")
