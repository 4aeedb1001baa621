"""Pooling throughput in GB/s of the bytes a call must move (its input read once, its output written once): a
ResNet stem max pooling 3x3/2 and a 2x2/2 reduction, NCHW and NHWC, max and average in float32, and the bf16 and
uint8 maxima. Memory-bound: each case is measured beside memcpy of the same bytes."""

from __future__ import annotations

import simdbind
from simdbind.bench.cases import Work, elements, itemsize
from simdbind.conformance.model import Case

_SHAPES = ("channels=64 height=112 width=112 kernel=3x3 stride=2x2 pad=1.1.1.1",
           "channels=256 height=56 width=56 kernel=2x2 stride=2x2")
_QUICK_SHAPE = "channels=64 height=56 width=56 kernel=3x3 stride=2x2 pad=1.1.1.1"


def _family(shape: str) -> list[str]:
    return ([f"pooling_max32f layout={layout} {shape} ceil=false" for layout in ("nchw", "nhwc")]
            + [f"pooling_average layout={layout} {shape} ceil=false exclude=false" for layout in ("nchw", "nhwc")]
            + [f"pooling_max16b layout=nhwc {shape} ceil=false", f"pooling_max8u layout=nhwc {shape} ceil=false"])


DESCRIPTORS = [line for shape in _SHAPES for line in _family(shape)]
QUICK = _family(_QUICK_SHAPE)


def work(case: Case) -> Work:
    """Input bytes + output bytes (output size by the library's own rule)."""
    p, size = case.params, simdbind.pooling_output_size
    if p["direct"]:
        out_h, out_w = p["out_h"], p["out_w"]
    else:
        out_h = size(p["height"], p["ky"], p["sy"], p["pad_top"], p["pad_bottom"], p["ceil"])
        out_w = size(p["width"], p["kx"], p["sx"], p["pad_left"], p["pad_right"], p["ceil"])
    channels = p["channels"]
    if "kc" in p:
        channels = size(channels, p["kc"], p["sc"], p["pc_begin"], p["pc_end"], p["ceil"])
    moved = itemsize(case) * p["batch"] * (elements((p["channels"], p["height"], p["width"]))
                                           + elements((channels, out_h, out_w)))
    return Work("GB/s", moved, moved)
