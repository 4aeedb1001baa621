"""OpenVINO peers of the inner-product family.

* inner_product_32f: ``MatMul(A, B, transpose_b)`` + bias (``Add``), then the activation (``_graph.activation``:
  OpenVINO's op of the same function, or the formula composed of its ops); a constant B is the first call's B.
* inner_product_layer: ``MatMul(x, weight, transpose_b=True)`` + bias.
* inner_product_8i: ``MatMul`` on int32 tensors (uint8 source and int8 weights widened exactly). The CPU plugin
  computes it in float32 (K = 6912 products of 255 and 127 give 223842368, not 223845120), which is exact while
  every partial sum is an integer below 2^24: K * 255 * 128 < 2^24, K <= 513; larger K is skipped. OpenVINO has no
  pairwise int16 saturation, so the saturating compatibilities (8iOverflow, 8iNarrowed) only run on data where no
  pair can saturate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from openvino import opset15 as ops

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.openvino import implementation
from simdbind.conformance.engines.openvino._graph import activation, params_key, run

#: float32 holds every integer below this exactly.
EXACT_INTEGERS = 2 ** 24


def _gemm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, trans_b: bool, kind: str, params: Any
          ) -> np.ndarray:
    def build(x: Any, w: Any, *rest: Any) -> list[Any]:
        y = ops.matmul(x, w, False, trans_b)
        if rest:
            y = ops.add(y, rest[0])
        return [activation(y, kind, params, 1, 2)]

    feeds = [np.asarray(a, np.float32), np.asarray(b, np.float32)]
    if bias is not None:
        feeds.append(np.asarray(bias, np.float32))
    return run(("gemm", trans_b, kind, params_key(params)), build, *feeds)[0]


@implementation.function("inner_product_32f")
def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
    p = case.params
    results = [_gemm(inputs["A"][call], inputs["B"][0 if p["const_b"] else call], inputs["bias"], p["trans_b"],
                     p["activation"], inputs["params"]) for call in range(p.get("calls", 1))]
    return results[0] if len(results) == 1 else tuple(results)


@implementation.function("inner_product_layer")
def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    x = np.asarray(inputs["x"], np.float32)
    rows = x.reshape(-1, x.shape[-1])
    y = _gemm(rows, inputs["weight"], inputs["bias"], True, "identity", None)
    return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))


@implementation.function("inner_product_8i")
def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    if p["compatibility"] != "precise" and p.get("data") != "narrowed":
        raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): OpenVINO has no such arithmetic")
    if p["K"] * 255 * 128 >= EXACT_INTEGERS:
        raise Unsupported(f"K = {p['K']}: OpenVINO's CPU plugin computes an int32 MatMul in float32, exact on these "
                          "integers only for K <= 513")
    src = np.asarray(inputs["src"]).astype(np.int32)
    weight = np.asarray(inputs["weight"]).astype(np.int32)
    return run(("ip8i",), lambda a, b: [ops.matmul(a, b, False, True)], src, weight)[0].astype(np.int32)
