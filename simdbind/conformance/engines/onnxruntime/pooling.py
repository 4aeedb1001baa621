"""ONNX Runtime adapters of the pooling family, one-node models.

Pooling: ``AveragePool``/``MaxPool`` with ``pads = [top, left, bottom, right]`` (asymmetric pads are native to
ONNX), ``strides``, ``ceil_mode`` and, for the average, ``count_include_pad = not exclude_pad``; NCHW (NHWC is
transposed around the node); bf16 and uint8 maxima are taken in float32 (exact) and converted back. Not
expressible, so skipped: ceil-mode averages with the pads included (ONNX Runtime divides a window that runs past the
padded image by its clipped area, Simd by the kernel area), 3D (channel) max pooling, the direct calls with an
explicit output size, and the edge group (Simd's NaN order and -FLT_MAX floor).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.onnxruntime import implementation
from simdbind.conformance.engines.onnxruntime.model import model, node, session


def _pool(case: Case, op: str, x: np.ndarray, **extra: Any) -> np.ndarray:
    p = case.params
    if case.group == "edge":
        raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
    if p.get("direct"):
        raise Unsupported("a direct call with an explicit output size (ONNX derives it)")
    if (p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0)) != (1, 1, 0, 0):
        raise Unsupported("pooling across channels (3D): ONNX MaxPool pools the spatial axes only")
    attributes = dict(kernel_shape=[p["ky"], p["kx"]], strides=[p["sy"], p["sx"]],
                      pads=[p["pad_top"], p["pad_left"], p["pad_bottom"], p["pad_right"]],
                      ceil_mode=int(p["ceil"]), **extra)
    batched = x.ndim == 4
    t = x if batched else x[None]
    if case.layout == "nhwc":
        t = t.transpose(0, 3, 1, 2)
    key = (op, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attributes.items())))
    build = lambda: model([node(op, ["x"], ["y"], **attributes)], [("x", np.float32, 4)],  # noqa: E731
                          [("y", np.float32, 4)], opset=19)
    (y,) = session(key, build).run(None, {"x": np.ascontiguousarray(t, np.float32)})
    if case.layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y if batched else y[0])


@implementation.function("pooling_average")
def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    if case.params["ceil"] and not case.params["exclude"]:
        raise Unsupported("ceil mode with the pads included: ONNX Runtime divides a window that runs past the "
                          "padded image by its clipped area, Simd by the kernel area (no divisor override in ONNX)")
    return _pool(case, "AveragePool", np.asarray(inputs["x"], np.float32),
                 count_include_pad=int(not case.params["exclude"]))


@implementation.function("pooling_max32f")
def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return _pool(case, "MaxPool", np.asarray(inputs["x"], np.float32))


@implementation.function("pooling_max16b")
def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    bits = np.ascontiguousarray(inputs["x"]).view(np.uint16)
    y = _pool(case, "MaxPool", (bits.astype(np.uint32) << 16).view(np.float32))
    return (y.view(np.uint32) >> 16).astype(np.uint16)


@implementation.function("pooling_max8u")
def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return _pool(case, "MaxPool", np.asarray(inputs["x"]).astype(np.float32)).astype(np.uint8)
