"""Convolution32f throughput (GFLOP/s = 2 x a direct convolution's multiply-adds / s; "effective GFLOP/s" on the
3x3 stride-1 rows, where a Winograd algorithm does fewer), NCHW and NHWC, bias and ReLU fused: ResNet 3x3
64->64 at 56x56, 1x1 256->64 at 56x56, depthwise 3x3 128 at 56x56, 3x3 stride 2 32->64 at 112x112, and
MobileNetV2-style blocks (1x1 expand 24->144, depthwise 3x3 144 at stride 1 and 2, 1x1 project 144->24 at 56x56).
The library's context is built once per case (Convolution32f.prepare), so a call is one Forward."""

from __future__ import annotations

from simdbind.bench.cases import EFFECTIVE, Work
from simdbind.conformance.cases.convolution import winograd_eligible
from simdbind.conformance.model import Case

_SHAPES = (
    "src_c=64 src_h=56 src_w=56 dst_c=64 kernel=3x3 pad=1.1.1.1",
    "src_c=256 src_h=56 src_w=56 dst_c=64 kernel=1x1",
    "src_c=128 src_h=56 src_w=56 dst_c=128 kernel=3x3 pad=1.1.1.1 groups=128",
    "src_c=32 src_h=112 src_w=112 dst_c=64 kernel=3x3 stride=2x2 pad=1.1.1.1",
    "src_c=24 src_h=56 src_w=56 dst_c=144 kernel=1x1",
    "src_c=144 src_h=56 src_w=56 dst_c=144 kernel=3x3 pad=1.1.1.1 groups=144",
    "src_c=144 src_h=56 src_w=56 dst_c=144 kernel=3x3 stride=2x2 pad=1.1.1.1 groups=144",
    "src_c=144 src_h=56 src_w=56 dst_c=24 kernel=1x1",
)
DESCRIPTORS = [f"convolution32f layout={layout} {shape} activation=relu" for shape in _SHAPES
               for layout in ("nchw", "nhwc")]
QUICK = DESCRIPTORS[:6]


def output_size(size: int, kernel: int, stride: int, dilation: int, pad_begin: int, pad_end: int) -> int:
    return (size + pad_begin + pad_end - (dilation * (kernel - 1) + 1)) // stride + 1


def work(case: Case) -> Work:
    """2 x batch x output pixels x dst_c x (src_c / groups) x kernel area: a direct convolution's operations. On
    the shapes a Winograd algorithm may take (the bundled library, upstream and ncnn do there) the rate is
    "effective" (EFFECTIVE): that algorithm does fewer multiply-adds than the count."""
    p = case.params
    top, left, bottom, right = p["pad"]
    dst_h = output_size(p["src_h"], p["kernel"][0], p["stride"][0], p["dilation"][0], top, bottom)
    dst_w = output_size(p["src_w"], p["kernel"][1], p["stride"][1], p["dilation"][1], left, right)
    taps = p["kernel"][0] * p["kernel"][1] * (p["src_c"] // p["groups"])
    unit = EFFECTIVE if winograd_eligible(p) else "GFLOP/s"
    return Work(unit, 2.0 * p["batch"] * dst_h * dst_w * p["dst_c"] * taps)
