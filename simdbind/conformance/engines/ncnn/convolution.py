"""ncnn peer of Convolution32f: ``Convolution`` (group 1) or ``ConvolutionDepthWise`` (any other group count),
with OIHW weights (ncnn's order for both), the four pads, strides, dilations and the bias, then the activation
(``_graph.activation``), one image at a time on CHW (NHWC sources and HWIO weights are transposed around it).
The edge group's non-finite inputs run with Winograd off (see below and docs/peers.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case
from simdbind.conformance.engines.ncnn import implementation
from simdbind.conformance.engines.ncnn._graph import Graph, activation
from simdbind.conformance.engines.ncnn.elementwise import per_image


@implementation.function("convolution32f")
def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    weight = np.asarray(inputs["weight"], np.float32)
    if case.layout == "nhwc":
        weight = weight.transpose(3, 2, 0, 1)
    groups, (top, left, bottom, right) = int(p["groups"]), p["pad"]
    (ky, kx), (sy, sx), (dy, dx) = p["kernel"], p["stride"], p["dilation"]
    params: dict[int, Any] = {0: p["dst_c"], 1: kx, 11: ky, 2: dx, 12: dy, 3: sx, 13: sy, 4: left, 15: right,
                              14: top, 16: bottom, 5: 1, 6: weight.size}
    if groups > 1:
        params[7] = groups
    # A lone non-finite input: Winograd F(6x6,3x3) turns its whole tile NaN (Inf - Inf), which the case's rule admits
    # only for an algorithm a Simd library names in its info string; ncnn's direct and GEMM paths run instead.
    graph = Graph(use_winograd_convolution=not p.get("special"))
    source = graph.input()
    y = graph.layer("ConvolutionDepthWise" if groups > 1 else "Convolution", [source], params,
                    [(weight, True), (np.asarray(inputs["bias"], np.float32), False)])
    y = activation(graph, y, p["activation"], inputs["params"])
    run = graph.runner()
    return per_image(np.asarray(inputs["src"], np.float32), case.layout, lambda image: run({source: image}, [y])[0])
