"""ONNX Runtime adapter of SimdSynetEltwiseLayerForward (spec 3.2), as one small model per (op, count).

Mapping: product is a chain of ``Mul``; max/min are the variadic ``Max``/``Min``; sum is ``Mul`` by each weight
(a float32 graph input) then the variadic ``Sum``. NaN differs by definition (ONNX Max/Min propagate NaN, Simd's
``a > b ? a : b`` keeps the later operand), so cases with NaN are skipped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance.adapters import Unsupported, adapter
from simdbind.conformance.adapters.onnx_model import model, node, session


def _build(op: str, count: int) -> bytes:
    xs = [f"x{i}" for i in range(count)]
    inputs = [(x, np.float32) for x in xs]
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


@adapter("onnxruntime", "eltwise")
def eltwise(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    op, arrays = case.params["op"], inputs["arrays"]
    if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
        raise Unsupported("NaN: ONNX Max/Min propagate NaN, Simd's a > b ? a : b fold keeps the later operand "
                          "(spec 3.2)")
    sess = session(("eltwise", op, len(arrays)), lambda: _build(op, len(arrays)))
    feeds = {f"x{i}": np.ascontiguousarray(a, np.float32) for i, a in enumerate(arrays)}
    if op == "sum":
        feeds.update({f"w{i}": np.asarray(w, np.float32) for i, w in enumerate(inputs["weights"])})
    (result,) = sess.run(None, feeds)
    return np.asarray(result, np.float32)
