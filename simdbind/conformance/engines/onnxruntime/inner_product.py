"""ONNX Runtime adapters of the inner-product family, small models.

* inner_product_32f / inner_product_layer: ``Gemm(A, B, bias, transB)`` followed by the activation's operator
  where ONNX has the same function (Relu, LeakyRelu, Clip for restrict_range, PRelu, Elu, HardSigmoid(alpha,
  beta), HardSwish for (3, 1/6), Mish for threshold >= 20, Gelu, Sigmoid-gated Mul for swish); the others are
  skipped;
* inner_product_8i: ``MatMulInteger(src, (weight + 128)^T, b_zero_point=128)``: uint8 x uint8 with a zero point
  is exact, while ONNX Runtime's uint8 x int8 kernel saturates int16 pair sums on AVX2; the saturating
  compatibilities only on data where no pair can saturate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.onnxruntime import implementation
from simdbind.conformance.engines.onnxruntime.activation import activation_nodes
from simdbind.conformance.engines.onnxruntime.model import model, node, session


def _gemm(key: Any, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, trans_b: bool, kind: str, params: Any
          ) -> np.ndarray:
    n = b.shape[0] if trans_b else b.shape[1]
    act, initializers = activation_nodes(kind, params, n, 2, 1)
    inputs = [("a", np.float32, 2), ("b", np.float32, 2)] + ([("c", np.float32, 1)] if bias is not None else [])
    build = lambda: model([node("Gemm", [i[0] for i in inputs], ["pre"], transB=int(trans_b))] + act,  # noqa: E731
                          inputs, [("y", np.float32, 2)], initializers=initializers, opset=20)
    feeds = {"a": np.ascontiguousarray(a, np.float32), "b": np.ascontiguousarray(b, np.float32)}
    if bias is not None:
        feeds["c"] = np.ascontiguousarray(bias, np.float32)
    y: np.ndarray
    (y,) = session(key, build).run(None, feeds)
    return y


@implementation.function("inner_product_32f")
def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
    p = case.params
    results = []
    key_params = None if inputs["params"] is None else tuple(np.asarray(inputs["params"]).ravel().tolist())
    for call in range(p.get("calls", 1)):
        b = inputs["B"][0] if p["const_b"] else inputs["B"][call]
        key = ("ip32f", p["trans_b"], inputs["bias"] is not None, p["activation"], key_params)
        results.append(_gemm(key, inputs["A"][call], b, inputs["bias"], p["trans_b"], p["activation"],
                             inputs["params"]))
    return results[0] if len(results) == 1 else tuple(results)


@implementation.function("inner_product_layer")
def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    x = np.asarray(inputs["x"], np.float32)
    rows = x.reshape(-1, x.shape[-1])
    y = _gemm(("iplf", inputs["bias"] is not None), rows, inputs["weight"], inputs["bias"], True, "identity", None)
    return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))


@implementation.function("inner_product_8i")
def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    if p["compatibility"] != "precise" and p.get("data") != "narrowed":
        raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): MatMulInteger accumulates exactly")
    # uint8 x int8 would run ONNX Runtime's u8s8 kernel, which on AVX2 saturates adjacent int16 pair sums (found
    # by this adapter); the same product as uint8 x uint8 with weights + 128 and b_zero_point 128 is exact.
    build = lambda: model([node("MatMulInteger", ["a", "b", "", "zero"], ["y"])],  # noqa: E731
                          [("a", np.uint8, 2), ("b", np.uint8, 2)], [("y", np.int32, 2)],
                          initializers={"zero": np.uint8(128)})
    shifted = (np.asarray(inputs["weight"]).astype(np.int16) + 128).astype(np.uint8)
    y: np.ndarray
    (y,) = session(("ip8i",), build).run(None, {"a": np.ascontiguousarray(inputs["src"], np.uint8),
                                                "b": np.ascontiguousarray(shifted.T)})
    return y
