"""ONNX Runtime adapters of the elementwise family (unary, softmax, LRN), one-node models.

Mappings: unary ops to the ONNX operator of the same meaning (rcp -> Reciprocal; round -> Round, ties to even,
the main cases have no ties; rsqrt, zero and the bitwise not have no single operator and are skipped);
softmax -> ``Softmax(axis=1)`` (opset 13: one axis) on (outer, count, inner); LRN -> ``LRN(size=2*half+1,
alpha=k1*size, beta=-k2, bias=k0)`` on NCHW (NHWC is transposed around it; ONNX divides the window sum by size,
Simd does not). The edge group (Simd's implementation-defined NaN/Inf/tie results) is skipped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance.adapters import Unsupported, adapter
from simdbind.conformance.adapters.onnx_model import model, node, session

_UNARY = {"abs": "Abs", "ceil": "Ceil", "floor": "Floor", "neg": "Neg", "exp": "Exp", "log": "Log", "erf": "Erf",
          "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "sqrt": "Sqrt", "rcp": "Reciprocal", "round": "Round",
          "sign": "Sign"}


def _edge(case: Any) -> None:
    if case.group == "edge":
        raise Unsupported("edge group: Simd's implementation-defined results (NaN, Inf, ties, signed zeros)")


def _run(key: Any, build: Any, **feeds: np.ndarray) -> np.ndarray:
    (y,) = session(key, build).run(None, feeds)
    return y


@adapter("onnxruntime", "unary")
def unary(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    op = case.params["op"]
    if op not in _UNARY:
        raise Unsupported(f"ONNX has no single operator for {op}")
    build = lambda: model([node(_UNARY[op], ["x"], ["y"])], [("x", np.float32)], [("y", np.float32)])  # noqa: E731
    return _run(("unary", op), build, x=np.ascontiguousarray(inputs["x"], np.float32))


@adapter("onnxruntime", "softmax")
def softmax(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    build = lambda: model([node("Softmax", ["x"], ["y"], axis=1)], [("x", np.float32, 3)],  # noqa: E731
                          [("y", np.float32, 3)])
    return _run(("softmax",), build, x=np.ascontiguousarray(inputs["x"], np.float32))


@adapter("onnxruntime", "lrn")
def lrn(case: Any, inputs: dict[str, Any]) -> np.ndarray:
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
