"""ONNX Runtime adapters of the elementwise family (eltwise, unary, softmax, LRN), small models.

Mappings: eltwise product is a chain of ``Mul``, max/min the variadic ``Max``/``Min``, sum ``Mul`` by each weight
(a float32 graph input) then the variadic ``Sum`` (NaN differs by definition: ONNX Max/Min propagate NaN, Simd's
``a > b ? a : b`` keeps the later operand, so cases with NaN are skipped); unary ops to the ONNX operator of the
same meaning (rcp -> Reciprocal; round -> Round, ties to even, the main cases have no ties; rsqrt, zero and the
bitwise not have no single operator and are skipped);
softmax -> ``Softmax(axis=1)`` (opset 13: one axis) on (outer, count, inner); LRN -> ``LRN(size=2*half+1,
alpha=k1*size, beta=-k2, bias=k0)`` on NCHW (NHWC is transposed around it; ONNX divides the window sum by size,
Simd does not). The edge group (Simd's implementation-defined NaN/Inf/tie results) is skipped.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.onnxruntime import implementation
from simdbind.conformance.engines.onnxruntime.model import ValueSpec, model, node, session

_UNARY = {"abs": "Abs", "ceil": "Ceil", "floor": "Floor", "neg": "Neg", "exp": "Exp", "log": "Log", "erf": "Erf",
          "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "sqrt": "Sqrt", "rcp": "Reciprocal", "round": "Round",
          "sign": "Sign"}


def _edge(case: Case) -> None:
    if case.group == "edge":
        raise Unsupported("edge group: Simd's implementation-defined results (NaN, Inf, ties, signed zeros)")


def _run(key: Hashable, build: Callable[[], bytes], **feeds: np.ndarray) -> np.ndarray:
    y: np.ndarray
    (y,) = session(key, build).run(None, feeds)
    return y


@implementation.function("unary")
def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    op = case.params["op"]
    if op not in _UNARY:
        raise Unsupported(f"ONNX has no single operator for {op}")
    build = lambda: model([node(_UNARY[op], ["x"], ["y"])], [("x", np.float32)], [("y", np.float32)])  # noqa: E731
    return _run(("unary", op), build, x=np.ascontiguousarray(inputs["x"], np.float32))


@implementation.function("softmax")
def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    build = lambda: model([node("Softmax", ["x"], ["y"], axis=1)], [("x", np.float32, 3)],  # noqa: E731
                          [("y", np.float32, 3)])
    return _run(("softmax",), build, x=np.ascontiguousarray(inputs["x"], np.float32))


@implementation.function("lrn")
def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    x = np.asarray(inputs["x"], np.float32)
    k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
    size = 2 * case.params["half"] + 1
    batched = x.ndim == 4
    t = x if batched else x[None]
    if case.layout == "nhwc":
        t = t.transpose(0, 3, 1, 2)
    build = lambda: model([node("LRN", ["x"], ["y"], size=size, alpha=k1 * size, beta=-k2, bias=k0)],  # noqa: E731
                          [("x", np.float32, 4)], [("y", np.float32, 4)])
    y = _run(("lrn", size, k0, k1, k2), build, x=np.ascontiguousarray(t))
    if case.layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y if batched else y[0])


def _build(op: str, count: int) -> bytes:
    xs = [f"x{i}" for i in range(count)]
    inputs: list[ValueSpec] = [(x, np.float32) for x in xs]
    if op == "product":
        nodes, previous = [], xs[0]
        for i, x in enumerate(xs[1:], 1):
            out = "y" if i == count - 1 else f"p{i}"
            nodes.append(node("Mul", [previous, x], [out]))
            previous = out
    elif op == "sum":
        inputs += [(f"w{i}", np.float32, []) for i in range(count)]
        nodes = [node("Mul", [x, f"w{i}"], [f"t{i}"]) for i, x in enumerate(xs)]
        nodes.append(node("Sum", [f"t{i}" for i in range(count)], ["y"]))
    else:
        nodes = [node({"max": "Max", "min": "Min"}[op], xs, ["y"])]
    return model(nodes, inputs, [("y", np.float32)])


@implementation.function("eltwise")
def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    op, arrays = case.params["op"], inputs["arrays"]
    if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
        raise Unsupported("NaN: ONNX Max/Min propagate NaN, Simd's a > b ? a : b fold keeps the later operand")
    sess = session(("eltwise", op, len(arrays)), lambda: _build(op, len(arrays)))
    feeds = {f"x{i}": np.ascontiguousarray(a, np.float32) for i, a in enumerate(arrays)}
    if op == "sum":
        feeds.update({f"w{i}": np.asarray(w, np.float32) for i, w in enumerate(inputs["weights"])})
    (result,) = sess.run(None, feeds)
    return np.asarray(result, np.float32)
