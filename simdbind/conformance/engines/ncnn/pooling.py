"""ncnn peers of the pooling family.

``Pooling`` (MAX or AVG) with ``pad_mode = 1`` (the pads as given) and the four pads explicit, one image at a
time (NHWC transposed around it); 3D max pooling is ``Pooling3D`` on a (1, C, H, W) blob with the channels as
depth and the channel pads as front/behind pads. Ceil mode: Simd keeps a last window that starts inside the image
or its begin pad; the end pads are widened to cover it, which is exact because ncnn pads a maximum
with -FLT_MAX, an average excluding pads counts only image elements, and an average including pads divides by the
kernel area, as Simd does (ncnn's own ``pad_mode = 0`` "full" rule would keep a last window that starts in the end
pad). bf16 and uint8 maxima are taken in float32 (exact for both) and converted back.

Not expressible, so skipped: the direct calls with an explicit output size, and the edge group (Simd's NaN order
of the fold and its -FLT_MAX floor are implementation-defined).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines._bf16 import max_through_float32
from simdbind.conformance.engines.ncnn import implementation
from simdbind.conformance.engines.ncnn._graph import Graph
from simdbind.conformance.engines.ncnn.elementwise import per_image


def _count(size: int, kernel: int, stride: int, begin: int, end: int, ceil: bool) -> int:
    """Outputs along one axis; in ceil mode the last window starts inside the image or its begin pad."""
    total = size + begin + end - kernel
    if not ceil:
        return total // stride + 1
    count = -(-total // stride) + 1
    return count - 1 if count > 1 and (count - 1) * stride >= size + begin else count


def _end(size: int, kernel: int, stride: int, begin: int, end: int, ceil: bool) -> int:
    """The end pad that makes ncnn's floor rule give the case's output count."""
    return max(end, (_count(size, kernel, stride, begin, end, ceil) - 1) * stride + kernel - size - begin)


def _pool(case: Case, x: np.ndarray, average: bool) -> np.ndarray:
    p = case.params
    if case.group == "edge":
        raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
    if p.get("direct"):
        raise Unsupported("a direct call with an explicit output size (ncnn derives it)")
    ceil = p["ceil"]
    h, w = p["height"], p["width"]
    params: dict[int, Any] = {
        0: 1 if average else 0, 1: p["kx"], 11: p["ky"], 2: p["sx"], 12: p["sy"], 5: 1,
        3: p["pad_left"], 14: _end(w, p["kx"], p["sx"], p["pad_left"], p["pad_right"], ceil),
        13: p["pad_top"], 15: _end(h, p["ky"], p["sy"], p["pad_top"], p["pad_bottom"], ceil)}
    if average:
        params[6] = 0 if p["exclude"] else 1
    graph = Graph()
    source = graph.input()
    kc, sc, pcb, pce = p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0)
    three_d = (kc, sc, pcb, pce) != (1, 1, 0, 0)
    if three_d:
        params.update({21: kc, 22: sc, 23: pcb, 16: _end(p["channels"], kc, sc, pcb, pce, ceil)})
    y = graph.layer("Pooling3D" if three_d else "Pooling", [source], params)
    run = graph.runner()

    def one(image: np.ndarray) -> np.ndarray:
        if three_d:
            volume: np.ndarray = run({source: image[None]}, [y])[0][0]  # a (1, C, H, W) blob per image
            return volume
        return run({source: image}, [y])[0]

    return per_image(x, case.layout, one)


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
    return _pool(case, np.asarray(inputs["x"]).astype(np.float32), average=False).astype(np.uint8)
