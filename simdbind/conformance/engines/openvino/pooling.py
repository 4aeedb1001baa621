"""OpenVINO peers of the pooling family.

``AvgPool``/``MaxPool`` (opset 14) with ``pads_begin = [top, left]``, ``pads_end = [bottom, right]``
(asymmetric pads are native), ``strides``, ``exclude_pad``, and ``rounding_type = ceil_torch`` in ceil mode: the
last window must start inside the image or its begin pad, Simd's rule; plain ``ceil`` keeps a last
window that starts in the end pad. A ceil-mode average with the pads included divides by the kernel area in Simd,
also where the last window runs past the end pad; OpenVINO divides such a window by the part inside the padded
image, so there the end pads are widened to cover the last window and rounding is ``floor`` (the same windows,
each with its zeros counted). NHWC is transposed around the node. 3D max pooling runs ``MaxPool`` on
(N, 1, C, H, W) with the channels as depth and the channel pads as depth pads (asymmetric too). bf16 maxima are
taken in float32 (exact) and converted back; uint8 maxima run on u8 tensors.

Not expressible, so skipped: the direct calls with an explicit output size (OpenVINO derives it); the edge group
(Simd's NaN order of the fold and its -FLT_MAX floor under -inf are implementation-defined, OpenVINO's window
starts at -inf).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from openvino import opset15 as ops

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines._bf16 import max_through_float32
from simdbind.conformance.engines.openvino import implementation
from simdbind.conformance.engines.openvino._graph import run


def _ceil_count(size: int, kernel: int, stride: int, begin: int, end: int) -> int:
    """Outputs along one axis in ceil mode: the last window starts inside the image or its begin pad."""
    count = -(-(size + begin + end - kernel) // stride) + 1
    return count - 1 if count > 1 and (count - 1) * stride >= size + begin else count


def _pool(case: Case, x: np.ndarray, average: bool) -> np.ndarray:
    p = case.params
    if case.group == "edge":
        raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
    if p.get("direct"):
        raise Unsupported("a direct call with an explicit output size (OpenVINO derives it)")
    kernel, stride = [p["ky"], p["kx"]], [p["sy"], p["sx"]]
    begin, end = [p["pad_top"], p["pad_left"]], [p["pad_bottom"], p["pad_right"]]
    channel = (p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0))
    rounding = "ceil_torch" if p["ceil"] else "floor"
    if average and p["ceil"] and not p["exclude"]:
        size = (p["height"], p["width"])
        end = [max(e, (_ceil_count(n, k, s, b, e) - 1) * s + k - n - b)
               for n, k, s, b, e in zip(size, kernel, stride, begin, end)]
        rounding = "floor"
    batched = x.ndim == 4
    t = x if batched else x[None]
    if case.layout == "nhwc":
        t = t.transpose(0, 3, 1, 2)
    three_d = channel != (1, 1, 0, 0)
    if three_d:
        kc, sc, pcb, pce = channel
        t = t[:, None]
        kernel, stride, begin, end = [kc] + kernel, [sc] + stride, [pcb] + begin, [pce] + end
    dilations = [1] * len(kernel)

    def build(v: Any) -> list[Any]:
        if average:
            return [ops.avg_pool(v, stride, begin, end, kernel, bool(p["exclude"]), rounding)]
        return [ops.max_pool(v, stride, dilations, begin, end, kernel, rounding).output(0)]

    key = ("avg" if average else "max", p["exclude"] if average else None, tuple(kernel), tuple(stride),
           tuple(begin), tuple(end), rounding)
    y = run(key, build, t)[0]
    if three_d:
        y = y[:, 0]
    if case.layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y if batched else y[0])


@implementation.function("pooling_average")
def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return _pool(case, np.asarray(inputs["x"], np.float32), average=True)


@implementation.function("pooling_max32f")
def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return _pool(case, np.asarray(inputs["x"], np.float32), average=False)


@implementation.function("pooling_max16b")
def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return max_through_float32(lambda x: _pool(case, x, average=False), inputs["x"])


@implementation.function("pooling_max8u")
def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return _pool(case, np.asarray(inputs["x"], np.uint8), average=False)
