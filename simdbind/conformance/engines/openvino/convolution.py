"""OpenVINO peer of Convolution32f: ``Convolution`` (group 1) or ``GroupConvolution`` (weights reshaped to
(group, dstC/group, srcC/group, kY, kX)) with ``pads_begin = [top, left]``, ``pads_end = [bottom, right]``,
``strides`` and ``dilations``, then bias (``Add``) and the activation (``_graph.activation``), on NCHW/OIHW (NHWC
sources and HWIO weights are transposed around it). Weights are a model input, not a constant, so one compiled
model serves every case of a geometry."""

from __future__ import annotations

from typing import Any

import numpy as np
from openvino import opset15 as ops

from simdbind.conformance import Case
from simdbind.conformance.engines.openvino import implementation
from simdbind.conformance.engines.openvino._graph import activation, params_key, run


@implementation.function("convolution32f")
def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    src = np.asarray(inputs["src"], np.float32)
    weight = np.asarray(inputs["weight"], np.float32)
    if case.layout == "nhwc":
        src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
    groups, (top, left, bottom, right) = int(p["groups"]), p["pad"]
    if groups > 1:
        weight = weight.reshape((groups, weight.shape[0] // groups) + weight.shape[1:])
    stride, dilation = list(p["stride"]), list(p["dilation"])

    def build(x: Any, w: Any, b: Any) -> list[Any]:
        if groups > 1:
            y = ops.group_convolution(x, w, stride, [top, left], [bottom, right], dilation)
        else:
            y = ops.convolution(x, w, stride, [top, left], [bottom, right], dilation)
        y = ops.add(y, ops.reshape(b, [1, -1, 1, 1], False))
        return [activation(y, p["activation"], inputs["params"], 1, 4)]

    key = ("conv", groups, tuple(stride), tuple(dilation), (top, left, bottom, right), p["activation"],
           params_key(inputs["params"]))
    y = run(key, build, src, weight, np.asarray(inputs["bias"], np.float32))[0]
    if case.layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y)
