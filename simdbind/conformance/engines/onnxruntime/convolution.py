"""ONNX Runtime adapter of Convolution32f: ``Conv(pads=[top, left, bottom, right], strides, dilations, group)`` on
NCHW/OIHW (NHWC data and HWIO weights are transposed around it), then the activation where ONNX has the same
function (activation.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case
from simdbind.conformance.engines.onnxruntime import implementation
from simdbind.conformance.engines.onnxruntime.activation import activation_nodes
from simdbind.conformance.engines.onnxruntime.model import model, node, session


def _groups(p: dict[str, Any]) -> int:
    """The convolution's group count (case parameter "groups"; "group" in early case modules)."""
    return int(p["groups"] if "groups" in p else p["group"])


@implementation.function("convolution32f")
def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    src = np.asarray(inputs["src"], np.float32)
    weight = np.asarray(inputs["weight"], np.float32)
    if case.layout == "nhwc":
        src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
    top, left, bottom, right = p["pad"]
    act, initializers = activation_nodes(p["activation"], inputs["params"], p["dst_c"], 4, 1)
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
