"""OpenVINO peers of the elementwise family.

* eltwise: product and max/min fold ``Multiply``/``Maximum``/``Minimum`` over the inputs in order; sum is
  ``Multiply`` by each weight (a scalar parameter) then an ``Add`` chain. NaN differs by definition (OpenVINO's
  Maximum/Minimum propagate NaN, Simd's ``a > b ? a : b`` keeps the later operand), so cases with NaN are skipped.
* unary: the op of the same meaning (neg -> Negative, rcp -> Divide(1, x), rsqrt -> Divide(1, Sqrt(x)),
  round -> Round(half_away_from_zero), C's round as Simd's, not -> BitwiseNot of the int32 bits); zero has no
  operation to check. The edge group (Simd's NaN/Inf/tie/signed-zero results) is skipped.
* softmax: ``SoftMax(axis=1)`` on (outer, count, inner); softmax16b: bf16 widened to float32 exactly, SoftMax,
  then OpenVINO's own ``Convert`` to bf16.
* lrn: ``LRN(axes=[1], size=2*half+1, alpha=k1*size, beta=-k2, bias=k0)`` on NCHW (NHWC transposed around it):
  OpenVINO divides alpha by size, Simd does not.
* shuffle: ``Concat`` then ``ShuffleChannels`` and ``Split`` (type 0: group C/2, halves; type 1: group 2, split at
  the first input's channel count).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from openvino import opset15 as ops

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.openvino import implementation
from simdbind.conformance.engines.openvino._graph import constant, run

_UNARY = {"abs": ops.absolute, "ceil": ops.ceiling, "floor": ops.floor, "neg": ops.negative, "exp": ops.exp,
          "log": ops.log, "erf": ops.erf, "tanh": ops.tanh, "sin": ops.sin, "cos": ops.cos, "sqrt": ops.sqrt,
          "sign": ops.sign, "rcp": lambda x: ops.divide(constant(1.0), x),
          "rsqrt": lambda x: ops.divide(constant(1.0), ops.sqrt(x)),
          "round": lambda x: ops.round(x, "half_away_from_zero")}


def _edge(case: Case) -> None:
    if case.group == "edge":
        raise Unsupported("edge group: Simd's implementation-defined results (NaN, Inf, ties, signed zeros)")


@implementation.function("eltwise")
def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    op, arrays = case.params["op"], [np.asarray(a, np.float32) for a in inputs["arrays"]]
    if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
        raise Unsupported("NaN: OpenVINO Maximum/Minimum propagate NaN, Simd's a > b ? a : b fold keeps the later "
                          "operand")
    count = len(arrays)

    def build(*xs: Any) -> list[Any]:
        if op == "sum":
            terms = [ops.multiply(x, w) for x, w in zip(xs[:count], xs[count:])]
            step, values = ops.add, terms
        else:
            step, values = {"product": ops.multiply, "max": ops.maximum, "min": ops.minimum}[op], list(xs)
        result = values[0]
        for value in values[1:]:
            result = step(result, value)
        return [result]

    weights = [np.asarray(w, np.float32) for w in inputs["weights"]] if op == "sum" else []
    return run(("eltwise", op), build, *arrays, *weights)[0]


@implementation.function("unary")
def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    op = case.params["op"]
    x = np.asarray(inputs["x"], np.float32)
    if op == "not":  # compared as bits by the case
        return run(("unary", op), lambda t: [ops.bitwise_not(t)], x.view(np.int32))[0].view(np.uint32)
    if op not in _UNARY:
        raise Unsupported(f"OpenVINO has no operation for {op} (a constant output checks nothing of the engine)")
    return run(("unary", op), lambda t: [_UNARY[op](t)], x)[0]


@implementation.function("softmax")
def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    return run(("softmax",), lambda x: [ops.softmax(x, 1)], np.asarray(inputs["x"], np.float32))[0]


def _bf16_to_float(bits: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


@implementation.function("softmax16b")
def softmax16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    (y,) = run(("softmax16b",), lambda x: [ops.convert(ops.softmax(x, 1), "bf16")], _bf16_to_float(inputs["x"]))
    return _bf16_to_float(y.view(np.uint16))


@implementation.function("lrn")
def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    x = np.asarray(inputs["x"], np.float32)
    k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
    size = 2 * case.params["half"] + 1
    batched = x.ndim == 4
    t = x if batched else x[None]
    if case.layout == "nhwc":
        t = t.transpose(0, 3, 1, 2)
    build = lambda v: [ops.lrn(v, constant([1], np.int64), alpha=k1 * size, beta=-k2, bias=k0, size=size)]  # noqa
    y = run(("lrn", size, k0, k1, k2), build, t)[0]
    if case.layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y if batched else y[0])


@implementation.function("shuffle")
def shuffle(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    x0, x1 = (np.asarray(inputs[k], np.float32) for k in ("x0", "x1"))
    axis = x0.ndim - 3 if case.layout == "nchw" else x0.ndim - 1
    total = x0.shape[axis] + x1.shape[axis]
    if case.params["type"] == 0:
        group, split = total // 2, [total // 2, total // 2]
    else:
        group, split = 2, [case.params["channels0"], total - case.params["channels0"]]

    def build(a: Any, b: Any) -> list[Any]:
        mixed = ops.shuffle_channels(ops.concat([a, b], axis), axis, group)
        parts = ops.variadic_split(mixed, constant(axis, np.int64), constant(split, np.int64))
        return [parts.output(0), parts.output(1)]

    y0, y1 = run(("shuffle", axis, group, tuple(split)), build, x0, x1)
    return y0, y1
