"""The Simd activations (SimdConvolutionActivationType) as ONNX nodes, where ONNX has the same function, for the
onnxruntime adapters of the convolution and inner-product families."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from simdbind.conformance.api import Unsupported
from simdbind.conformance.engines.onnxruntime.model import node


def activation_nodes(kind: str, params: Any, channels: int, rank: int, channel_axis: int
                      ) -> tuple[list[Any], dict[str, ArrayLike]]:
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
