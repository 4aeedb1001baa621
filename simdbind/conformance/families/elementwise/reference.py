"""References of the elementwise family."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray


def eltwise(inputs: Sequence[np.ndarray], op: str, weights: Sequence[float] | None = None) -> np.ndarray:
    """SimdSynetEltwiseLayerForward: combine the first two inputs, then fold in the rest; Max/Min with
    ``a > b ? a : b``.

    Sum: each weighted term is the float32 product the contract states (so a product past FLT_MAX is an infinity,
    and inf * 0 is NaN, whatever the order of the sum), the terms are accumulated in float64 and rounded once: at
    least as accurate as any float32 order. (A fused multiply-add rounds a later product only with the sum: the
    contract leaves that open, and it decides a non-finite result only where a product past FLT_MAX meets an
    infinity of the other sign, which the cases keep out.)
    """
    if op == "sum":
        total = np.zeros(inputs[0].shape, np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            for x, w in zip(inputs, [1.0] * len(inputs) if weights is None else weights):  # None: unit weights
                total += (np.float32(w) * x.astype(np.float32)).astype(np.float64)
            return total.astype(np.float32)
    acc = inputs[0]
    for x in inputs[1:]:
        if op == "product":
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # the float32 product: inf, 0, NaN
                acc = acc * x
        elif op == "max":
            acc = np.where(acc > x, acc, x)
        else:
            acc = np.where(acc < x, acc, x)
    return np.asarray(acc, np.float32)


# -- unary: the contract decisions of the unary table (docs/guide/tolerance.md) ------------------------------
def _erf64(x: np.ndarray) -> np.ndarray:
    import math

    flat = x.ravel()
    return np.fromiter((math.erf(v) for v in flat), np.float64, flat.size).reshape(x.shape)


def unary(x: NDArray[np.float32], op: str) -> np.ndarray:
    """The contract of each SimdSynetUnaryOperation32f operation, float32 in and out.

    Exact operations are computed in float32 exactly as the contract states them; transcendental ones in float64,
    rounded once. ``not`` returns the float32 whose bits are the bitwise NOT of x's bits.
    """
    x = np.asarray(x, np.float32)
    with np.errstate(all="ignore"):
        if op == "abs":
            return np.abs(x)  # IEEE abs: the sign bit cleared
        if op == "neg":
            return np.negative(x)  # IEEE negation: the sign bit flipped
        if op == "ceil":
            return np.ceil(x)
        if op == "floor":
            return np.floor(x)
        if op == "round":  # half away from zero (C round), the sign of x kept on zero results
            x64 = x.astype(np.float64)
            t = np.trunc(x64)
            r = np.where(np.abs(x64 - t) >= 0.5, t + np.sign(x64), t)
            return np.copysign(r, x64).astype(np.float32)
        if op == "not":
            return (~x.view(np.uint32)).view(np.float32)
        if op == "rcp":
            return np.float32(1) / x
        if op == "rsqrt":  # 1.0f / sqrtf(x): two IEEE float32 roundings
            return np.float32(1) / np.sqrt(x)
        if op == "sqrt":
            return np.sqrt(x)
        if op == "sign":  # x < 0 ? -1 : (x == 0 ? 0 : 1)
            return np.where(x < 0, np.float32(-1), np.where(x == 0, np.float32(0), np.float32(1))).astype(np.float32)
        if op == "zero":
            return np.zeros_like(x)
        x64 = x.astype(np.float64)
        if op == "exp":
            y = np.exp(x64)
        elif op == "log":
            y = np.log(x64)
        elif op == "sin":
            y = np.sin(x64)
        elif op == "cos":
            y = np.cos(x64)
        elif op == "tanh":
            y = np.tanh(x64)
        elif op == "erf":
            y = _erf64(x64)
        else:
            raise ValueError(f"unknown unary operation {op!r}")
        return y.astype(np.float32)


# -- softmax: non-finite inputs per the softmax contract (docs/guide/python-api.md) --------------------------
def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Max-subtracted softmax along `axis` in float64, rounded to float32.

    A NaN in a slice makes the slice NaN; otherwise +inf entries share the mass equally (the limit), the rest 0;
    -inf entries give 0; a slice of only -inf is NaN (no limit).
    """
    x64 = np.asarray(x, np.float32).astype(np.float64)
    with np.errstate(all="ignore"):
        posinf = x64 == np.inf
        inf_count = posinf.sum(axis=axis, keepdims=True)
        finite_part = np.where(posinf, -np.inf, x64)
        m = np.max(np.where(np.isnan(finite_part), -np.inf, finite_part), axis=axis, keepdims=True)
        e = np.exp(finite_part - m)  # all -inf: -inf - -inf = NaN
        y = e / e.sum(axis=axis, keepdims=True)
        y = np.where(inf_count > 0, posinf / np.maximum(inf_count, 1), y)
        y = np.where(np.isnan(x64).any(axis=axis, keepdims=True), np.nan, y)
    return y.astype(np.float32)


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bits with upstream's formula (Float32ToBFloat16, SimdBFloat16.h): RNE on the bit pattern,
    wrapping."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return (((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF) >> 16).astype(np.uint16)


def bf16_to_float(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def softmax16b(bits: np.ndarray, axis: int = -1) -> np.ndarray:
    """SimdSynetSoftmax16b: bf16 widened exactly, the float32 softmax (here float64), narrowed with RNE. Returns bf16
    bits."""
    y = softmax(bf16_to_float(bits), axis)
    return bf16_round(y)


# -- LRN ----------------------------------------------------------------------------------------------------
def lrn(x: np.ndarray, half: int, k: np.ndarray, layout: str = "nchw") -> np.ndarray:
    """``x[c] * exp(log(k0 + k1 * sum_{|i-c| <= half} x[i]^2) * k2)`` over the channel axis; x is (C,H,W)/(N,C,H,W)
    or (H,W,C)/(N,H,W,C). Windows are clipped to the channels; no division by the size.

    Each quantity the formula names (the window sum, k1 * sum, the base, the scale) is a float32 value, as in the
    contract's C: computed in float64 and rounded once. So a window sum of squares past FLT_MAX is +inf (squares
    are never negative: whether the sum overflows does not depend on its order) and a scale below float32's
    smallest subnormal is 0.
    """
    x64 = np.asarray(x, np.float32).astype(np.float64)
    axis = x64.ndim - 3 if layout == "nchw" else x64.ndim - 1
    channels = x64.shape[axis]
    k0, k1, k2 = (np.float64(np.float32(v)) for v in k)
    squares = np.moveaxis(x64 * x64, axis, 0)
    padded = np.concatenate([np.zeros((half,) + squares.shape[1:]), squares, np.zeros((half,) + squares.shape[1:])])
    window = sum((padded[i:i + channels] for i in range(1, 2 * half + 1)), padded[:channels])
    with np.errstate(all="ignore"):
        total = _float32(np.moveaxis(window, 0, axis))
        base = _float32(k0 + _float32(k1 * total))
        scale = _float32(np.exp(np.log(base) * k2))
        result: np.ndarray = (x64 * scale).astype(np.float32)
        return result


def _float32(values: np.ndarray) -> np.ndarray:
    """float64 values rounded to float32 (past FLT_MAX: an infinity), kept as float64."""
    return np.asarray(values).astype(np.float32).astype(np.float64)


# -- shuffle ------------------------------------------------------------------------------------------------
def shuffle(x0: np.ndarray, x1: np.ndarray, shuffle_type: int, layout: str = "nchw",
            channels: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Type 0: cat = concat(x0, x1) on channels, (cat[0::2], cat[1::2]). Type 1: interleave x0 and x1 channel by
    channel, then split at channels[0]."""
    axis = x0.ndim - 3 if layout == "nchw" else x0.ndim - 1
    if shuffle_type == 0:
        cat = np.concatenate([x0, x1], axis=axis)
        take = [slice(None)] * cat.ndim
        take[axis] = slice(0, None, 2)
        even = cat[tuple(take)]
        take[axis] = slice(1, None, 2)
        return np.ascontiguousarray(even), np.ascontiguousarray(cat[tuple(take)])
    inter = np.stack([x0, x1], axis=axis + 1)
    shape = list(x0.shape)
    shape[axis] *= 2
    inter = inter.reshape(shape)
    c0 = channels[0] if channels is not None else x0.shape[axis]
    return (np.ascontiguousarray(np.take(inter, range(0, c0), axis=axis)),
            np.ascontiguousarray(np.take(inter, range(c0, shape[axis]), axis=axis)))
