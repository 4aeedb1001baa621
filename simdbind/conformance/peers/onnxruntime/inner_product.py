"""ONNX Runtime adapters of the inner-product family and Convolution32f, small models.

* inner_product_32f / inner_product_layer: ``Gemm(A, B, bias, transB)`` followed by the activation's operator
  where ONNX has the same function (Relu, LeakyRelu, Clip for restrict_range, PRelu, Elu, HardSigmoid(alpha,
  beta), HardSwish for (3, 1/6), Mish for threshold >= 20, Gelu, Sigmoid-gated Mul for swish); the others are
  skipped;
* inner_product_8i: ``MatMulInteger(src, (weight + 128)^T, b_zero_point=128)``: uint8 x uint8 with a zero point
  is exact, while ONNX Runtime's uint8 x int8 kernel saturates int16 pair sums on AVX2; the saturating
  compatibilities only on data where no pair can saturate;
* convolution32f: ``Conv(pads=[top, left, bottom, right], strides, dilations, group)`` on NCHW/OIHW (NHWC data and
  HWIO weights are transposed around it), then the activation as above.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance.adapters import Unsupported, adapter
from simdbind.conformance.adapters.onnx_model import model, node, session


def _groups(p: dict[str, Any]) -> int:
    """The convolution's group count (case parameter "groups"; "group" in early case modules)."""
    return int(p["groups"] if "groups" in p else p["group"])


def _activation_nodes(kind: str, params: Any, channels: int, rank: int, channel_axis: int
                      ) -> tuple[list[Any], dict[str, np.ndarray]]:
    """Nodes from "pre" to "y" computing the Simd activation, and the initializers they need."""
    p = [] if params is None else [float(v) for v in np.asarray(params, np.float32).ravel()]
    if kind == "identity":
        return [node("Identity", ["pre"], ["y"])], {}
    if kind == "relu":
        return [node("Relu", ["pre"], ["y"])], {}
    if kind == "leaky_relu":
        return [node("LeakyRelu", ["pre"], ["y"], alpha=p[0])], {}
    if kind == "restrict_range":
        return [node("Clip", ["pre", "lo", "hi"], ["y"])], {"lo": np.float32(p[0]), "hi": np.float32(p[1])}
    if kind == "prelu":
        shape = [1] * rank
        shape[channel_axis] = channels
        return [node("PRelu", ["pre", "slope"], ["y"])], {"slope": np.asarray(p, np.float32).reshape(shape)}
    if kind == "elu":
        return [node("Elu", ["pre"], ["y"], alpha=p[0])], {}
    if kind == "hard_sigmoid":
        return [node("HardSigmoid", ["pre"], ["y"], alpha=p[0], beta=p[1])], {}
    if kind == "mish" and p[0] >= 20.0:  # above 20, x * tanh(softplus(x)) == x in float32
        return [node("Mish", ["pre"], ["y"])], {}
    if kind == "hswish" and np.isclose(p[0], 3.0) and np.isclose(p[1], 1 / 6):  # x * clamp(x/6 + 1/2, 0, 1)
        return [node("HardSwish", ["pre"], ["y"])], {}
    if kind == "swish":  # x * sigmoid(slope * x)
        return [node("Mul", ["pre", "slope"], ["scaled"]), node("Sigmoid", ["scaled"], ["gate"]),
                node("Mul", ["pre", "gate"], ["y"])], {"slope": np.float32(p[0])}
    if kind == "gelu":
        return [node("Gelu", ["pre"], ["y"])], {}
    raise Unsupported(f"no ONNX operator computes Simd's {kind} with params {p}")


def _gemm(key: Any, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, trans_b: bool, kind: str, params: Any
          ) -> np.ndarray:
    n = b.shape[0] if trans_b else b.shape[1]
    act, initializers = _activation_nodes(kind, params, n, 2, 1)
    inputs = [("a", np.float32, 2), ("b", np.float32, 2)] + ([("c", np.float32, 1)] if bias is not None else [])
    build = lambda: model([node("Gemm", [i[0] for i in inputs], ["pre"], transB=int(trans_b))] + act,  # noqa: E731
                          inputs, [("y", np.float32, 2)], initializers=initializers, opset=20)
    feeds = {"a": np.ascontiguousarray(a, np.float32), "b": np.ascontiguousarray(b, np.float32)}
    if bias is not None:
        feeds["c"] = np.ascontiguousarray(bias, np.float32)
    (y,) = session(key, build).run(None, feeds)
    return y


@adapter("onnxruntime", "inner_product_32f")
def inner_product_32f(case: Any, inputs: dict[str, Any]) -> Any:
    p = case.params
    results = []
    key_params = None if inputs["params"] is None else tuple(np.asarray(inputs["params"]).ravel().tolist())
    for call in range(p.get("calls", 1)):
        b = inputs["B"][0] if p["const_b"] else inputs["B"][call]
        key = ("ip32f", p["trans_b"], inputs["bias"] is not None, p["activation"], key_params)
        results.append(_gemm(key, inputs["A"][call], b, inputs["bias"], p["trans_b"], p["activation"],
                             inputs["params"]))
    return results[0] if len(results) == 1 else tuple(results)


@adapter("onnxruntime", "inner_product_layer")
def inner_product_layer(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    x = np.asarray(inputs["x"], np.float32)
    rows = x.reshape(-1, x.shape[-1])
    y = _gemm(("iplf", inputs["bias"] is not None), rows, inputs["weight"], inputs["bias"], True, "identity", None)
    return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))


@adapter("onnxruntime", "inner_product_8i")
def inner_product_8i(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    if p["compatibility"] != "precise" and p.get("data") != "narrowed":
        raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): MatMulInteger accumulates exactly")
    # uint8 x int8 would run ONNX Runtime's u8s8 kernel, which on AVX2 saturates adjacent int16 pair sums (found
    # by this adapter); the same product as uint8 x uint8 with weights + 128 and b_zero_point 128 is exact.
    build = lambda: model([node("MatMulInteger", ["a", "b", "", "zero"], ["y"])],  # noqa: E731
                          [("a", np.uint8, 2), ("b", np.uint8, 2)], [("y", np.int32, 2)],
                          initializers={"zero": np.uint8(128)})
    shifted = (np.asarray(inputs["weight"]).astype(np.int16) + 128).astype(np.uint8)
    (y,) = session(("ip8i",), build).run(None, {"a": np.ascontiguousarray(inputs["src"], np.uint8),
                                                "b": np.ascontiguousarray(shifted.T)})
    return y


@adapter("onnxruntime", "convolution32f")
def convolution32f(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    src = np.asarray(inputs["src"], np.float32)
    weight = np.asarray(inputs["weight"], np.float32)
    if case.layout == "nhwc":
        src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
    top, left, bottom, right = p["pad"]
    act, initializers = _activation_nodes(p["activation"], inputs["params"], p["dst_c"], 4, 1)
    attributes = dict(kernel_shape=list(p["kernel"]), strides=list(p["stride"]), dilations=list(p["dilation"]),
                      pads=[top, left, bottom, right], group=_groups(p))
    key = ("conv", tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(attributes.items())),
           p["activation"], None if inputs["params"] is None else tuple(np.asarray(inputs["params"]).ravel()))
    build = lambda: model([node("Conv", ["x", "w", "b"], ["pre"], **attributes)] + act,  # noqa: E731
                          [("x", np.float32, 4), ("w", np.float32, 4), ("b", np.float32, 1)],
                          [("y", np.float32, 4)], initializers=initializers, opset=20)
    (y,) = session(key, build).run(None, {"x": np.ascontiguousarray(src), "w": np.ascontiguousarray(weight),
                                          "b": np.ascontiguousarray(inputs["bias"], np.float32)})
    if case.layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y)
