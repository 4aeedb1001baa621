"""Cases of the convolution family: SimdSynetConvolution32f* through :class:`simdbind.Convolution32f`.

Four sources of cases, each in both layouts:

* an ONNX-style geometry grid around a small base shape, one axis varied at a time (kernels 1..7 and non-square,
  strides 1..3 and non-square, dilations 1..3, asymmetric pads, groups 1/2/4, depthwise and depthwise with a
  multiplier, channel counts on both sides of every vector width, H or W equal to 1, batch 1..3, threads 1 and 2);
* every activation with parameters, on a GEMM, a 1x1 and a depthwise geometry;
* upstream's enabled test shapes and its disabled (`#if 0`) tables (src/Test/TestSynetConvolution32f.cpp), the
  latter in ``full``.
  Upstream's ``Param`` takes ``Size(x, y)`` with X first, and its Size constructor sets ``strideX = s.y``
  (``TestSynetConvolutionParam.h:93``). :func:`_upstream` reads every Size as (x, y) and sets
  ``stride_x`` from ``s.x``: the geometry the table meant. (Every stride in those tables happens to be square, so
  the fix changes no shape there; the grid's non-square strides are where it would matter.)

Inputs: src, weight and bias U[-1, 1] (upstream's ranges); ``out`` is pre-filled with NaN so that any read of the
destination before it is written shows up (upstream's Base GEMM does read it: CONV32F-BASE-GEMM-READS-DST in the
deviation catalogue). Tolerance: the float32 sum of a K = kY*kX*srcC/group term reduction against the float64
reference (docs/guide/tolerance.md), times the activation's Lipschitz bound, 16 times larger for shapes that
Winograd may take.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

import simdbind
from simdbind.conformance.model import F, Case, Function, register
from simdbind.conformance import activation as reference_activation
from simdbind.conformance import values
from simdbind.conformance.families.convolution import reference
from simdbind.conformance.tolerance import Tolerance
from simdbind.conformance.work import EFFECTIVE, Work

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy
    from simdbind.library import Library

ALL = ("smoke", "ci", "full")
CI = ("ci", "full")
FULL = ("full",)
LAYOUTS = ("nchw", "nhwc")

#: Parameters per activation (C order), chosen so that each branch of each formula is exercised by U[-1, 1]-ish data
#: (upstream uses p0 = 0.1, p1 = 1.1 and the usual Hswish/Mish/HardSigmoid constants; these include those).
ACTIVATIONS: dict[str, tuple[float, ...] | str] = {
    "identity": (),
    "relu": (),
    "leaky_relu": (0.1,),
    "restrict_range": (-0.5, 1.1),
    "prelu": "per-channel",
    "elu": (1.1,),
    "hswish": (3.0, 1.0 / 6.0),
    "mish": (0.5,),
    "hard_sigmoid": (1.0 / 6.0, 0.5),
    "swish": (1.1,),
    "gelu": (),
}


def _geometry(src_c: int, src_h: int, src_w: int, dst_c: int, kernel: Any = 3, *, stride: Any = 1,
              dilation: Any = 1, pad: Any = 0, group: int = 1, batch: int = 1, activation: str = "identity",
              threads: int = 1, calls: int = 1) -> dict[str, Any]:
    def pair(v: Any) -> tuple[int, int]:
        return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))

    if isinstance(pad, int):
        pads = (pad, pad, pad, pad)
    elif len(pad) == 2:
        pads = (pad[0], pad[1], pad[0], pad[1])
    else:
        pads = tuple(pad)
    return {"batch": batch, "src_c": src_c, "src_h": src_h, "src_w": src_w, "dst_c": dst_c,
            "kernel": pair(kernel), "stride": pair(stride), "dilation": pair(dilation), "pad": pads,
            "groups": group, "activation": activation, "threads": threads, "calls": calls, "special": ""}


def _upstream(batch: int, src_c: int, src_h: int, src_w: int, dst_c: int, kernel: Any, dilation: Any = 1,
              stride: Any = 1, pad_begin: Any = 0, pad_end: Any = None, group: int = 1,
              activation: str = "identity") -> dict[str, Any]:
    """Upstream's ``Param(batch, srcC, srcH, srcW, dstC, kernel, dilation, stride, padBegin, padEnd, group, act)``
    where a tuple is ``Size(x, y)`` (X first), with ``strideX = s.x`` (the harness bug fixed, module docstring)."""
    def yx(v: Any) -> tuple[int, int]:
        return (v, v) if isinstance(v, int) else (v[1], v[0])

    pad_end = pad_begin if pad_end is None else pad_end
    (py, px), (ph, pw) = yx(pad_begin), yx(pad_end)
    return _geometry(src_c, src_h, src_w, dst_c, yx(kernel), stride=yx(stride), dilation=yx(dilation),
                     pad=(py, px, ph, pw), group=group, batch=batch, activation=activation)


def _grid() -> Iterable[tuple[dict[str, Any], tuple[str, ...]]]:
    """The ONNX-style grid: (geometry, profiles), one axis at a time around C=8, 9x10, D=16, 3x3, pad 1."""
    g = _geometry
    # Each axis is swept with plain ints, then with per-axis tuples: the loop variables take both forms.
    k: int | tuple[int, int]
    s: int | tuple[int, int]
    d: int | tuple[int, int]
    p: int | tuple[int, int] | tuple[int, int, int, int]
    yield g(8, 9, 10, 16, 3, pad=1), ALL
    for k in (1, 2, 4, 5, 6, 7):
        yield g(8, 9, 10, 16, k, pad=k // 2), CI if k in (1, 2, 5, 7) else FULL
        yield g(5, 11, 12, 6, k), CI if k in (4, 7) else FULL
    for k in ((1, 3), (3, 1), (2, 5), (7, 1), (1, 7), (3, 4)):
        yield g(8, 9, 10, 16, k, pad=(k[0] // 2, k[1] // 2)), CI if k in ((1, 3), (2, 5), (3, 4)) else FULL
    for s in ((2, 2), (3, 3), (1, 2), (2, 1), (3, 1), (2, 3)):
        yield g(8, 12, 13, 16, 3, stride=s, pad=1), CI if s in ((2, 2), (1, 2), (2, 3)) else FULL
        yield g(6, 12, 13, 10, 2, stride=s), CI if s in ((3, 3), (2, 1)) else FULL
        yield g(6, 13, 12, 10, 5, stride=s, pad=2), FULL
    for d in ((2, 2), (3, 3), (1, 2), (2, 3)):
        yield g(8, 12, 13, 16, 3, dilation=d, pad=d), CI if d in ((2, 2), (2, 3)) else FULL
        yield g(4, 14, 15, 6, (2, 3), dilation=d, stride=2), CI if d == (3, 3) else FULL
    for p in ((0, 0, 1, 1), (1, 0, 0, 1), (2, 1, 0, 3), (0, 2, 1, 0), (3, 3, 0, 0), (0, 0, 3, 2)):
        yield g(8, 9, 10, 16, 3, pad=p), CI if p in ((2, 1, 0, 3), (0, 0, 3, 2)) else FULL
        yield g(5, 9, 10, 7, (5, 4), pad=p, stride=(2, 1)), CI if p in ((1, 0, 0, 1), (3, 3, 0, 0)) else FULL
    # Groups: 2 and 4, depthwise (multiplier 1), depthwise with a multiplier (dstC = m * srcC, group = srcC).
    yield g(8, 9, 10, 16, 3, pad=1, group=2), CI
    yield g(8, 9, 10, 12, 3, pad=1, group=4, stride=2), CI
    yield g(12, 7, 9, 6, 1, group=3), CI
    yield g(6, 9, 8, 9, (1, 3), group=3, pad=(0, 1)), FULL
    for c in (1, 3, 8, 17, 33):
        yield g(c, 10, 11, c, 3, pad=1, group=c), CI if c in (3, 17, 33) else FULL
        yield g(c, 11, 10, c, 5, stride=2, pad=(2, 1, 1, 2), group=c), CI if c in (1, 17) else FULL
        yield g(c, 12, 12, c, 3, dilation=2, stride=(1, 2), pad=2, group=c), CI if c == 8 else FULL
    for c, k, s in ((16, 7, 1), (24, 3, 3), (9, 2, 2), (20, (1, 11), 1)):
        yield g(c, 13, 15, c, k, stride=s, group=c), CI if c in (16, 9) else FULL
    # Wide rows at stride 2: paired loads (stride 2, NCHW) up to the last vector that fits in the row.
    for w, k, d, p in ((45, 3, 1, 1), (50, 5, 2, (0, 3, 1, 2)), (67, 2, 1, 0)):
        yield g(5, 9, w, 5, k, stride=2, dilation=d, pad=p, group=5), CI
    # Wide rows at stride 3: whole vectors of outputs through the general strided path (20 outputs a row).
    yield g(5, 9, 60, 5, 3, stride=3, pad=1, group=5), CI
    # 3x3 depthwise register blocks (dilation 1, stride 1 or 2 along x): rows paired at stride 1, pairs of vectors
    # and a last vector moved back, border columns on either side, channel tails, strides that differ by axis.
    for c, h, w, s, p in ((5, 6, 37, 1, 1), (19, 7, 64, 2, 1), (6, 5, 70, (2, 1), (1, 0, 2, 1)),
                          (3, 9, 33, (1, 2), 0), (20, 8, 53, 2, (0, 1, 1, 0)), (16, 4, 130, 1, 2),
                          (9, 11, 21, (3, 1), (2, 2, 0, 1)), (40, 3, 18, 2, (1, 2, 1, 2))):
        yield g(c, h, w, c, 3, stride=s, pad=p, group=c), CI if c in (5, 19, 6, 9) else FULL
    yield g(8, 9, 10, 16, 3, pad=1, group=8), CI           # multiplier 2
    yield g(5, 9, 10, 15, (3, 2), pad=(1, 0), group=5), CI  # multiplier 3
    # Channel counts on both sides of 4, 8 and 16 lanes, on the GEMM, 1x1 and depthwise paths.
    for c, d in ((1, 1), (3, 5), (4, 4), (5, 9), (7, 15), (8, 16), (9, 17), (15, 31), (16, 32), (17, 33), (31, 1),
                 (33, 7)):
        wide = c in (5, 9, 17, 33) or d in (9, 17)
        yield g(c, 7, 8, d, 3, pad=1), CI if wide else FULL
        yield g(c, 6, 9, d, 1), CI if wide or c == 1 else FULL
    # H or W equal to 1.
    yield g(8, 1, 17, 16, (1, 3), pad=(0, 1)), CI
    yield g(8, 17, 1, 16, (3, 1), pad=(1, 0)), CI
    yield g(8, 1, 1, 16, 1), CI
    yield g(8, 1, 1, 16, 3, pad=1), CI
    yield g(8, 1, 9, 8, 3, pad=1, group=8), CI
    yield g(17, 9, 1, 17, 3, pad=1, group=17), CI
    # Batch and threads.
    for b in (2, 3):
        yield g(8, 9, 10, 16, 3, pad=1, batch=b), CI
        yield g(8, 9, 10, 16, 1, batch=b), CI
        yield g(16, 9, 10, 16, 3, pad=1, group=16, batch=b), CI
        yield g(16, 12, 12, 24, 3, pad=1, batch=b), CI
    for shape in (g(8, 20, 21, 16, 3, pad=1, threads=2), g(8, 20, 21, 16, 1, threads=2, batch=2),
                  g(24, 20, 21, 24, 3, pad=1, group=24, threads=2), g(32, 20, 22, 32, 3, pad=1, threads=2),
                  g(12, 20, 21, 8, 5, stride=2, pad=2, group=2, threads=2, batch=3)):
        yield shape, CI
    # GemmNN in chunks of output pixels (NCHW: im2col straight into compact GEMM panels, about 2^16 floats a chunk):
    # several chunks, a last chunk and a last panel narrower than the others, K over one GEMM K block (1600) and
    # within it (800, two groups, two threads), wide stride-2 rows (even-lane gathers up to the row's end).
    yield g(64, 20, 23, 24, 5, stride=2, pad=2), CI
    yield g(64, 20, 23, 24, 5, stride=2, pad=2, group=2, threads=2), CI
    yield g(8, 9, 70, 16, 3, stride=2, pad=1), CI
    yield g(7, 8, 71, 9, 3, stride=(1, 2), pad=(1, 0, 0, 1)), CI
    # NHWC direct (group 1, 16 to 32 input channels, more than one tap): borders on both sides, strides, dilation,
    # asymmetric pads, a row with no interior column, a 7x7 kernel, a per-channel epilogue and a fused Relu.
    yield g(16, 11, 13, 24, 3, stride=2, pad=1), CI
    yield g(32, 9, 10, 40, 5, stride=(1, 2), pad=(2, 1, 0, 2)), CI
    yield g(20, 12, 12, 17, 3, dilation=2, pad=2, batch=2, threads=2), CI
    yield g(24, 7, 30, 33, 3, stride=2, pad=(0, 1, 1, 0), activation="prelu"), CI
    yield g(32, 10, 17, 64, 3, stride=2, pad=1, activation="relu"), CI
    yield g(16, 5, 2, 8, 3, pad=1), CI
    yield g(16, 15, 15, 16, 7, stride=2, pad=3), CI
    # Winograd-eligible shapes (3x3, stride 1, dilation 1, group 1, >= 16 channels): odd and even sizes, so that
    # partial output tiles occur, with pad 1, pad 0 and asymmetric pads; outputs of 16 and more take F(4x4,3x3).
    for h, w, p in ((8, 8, 1), (9, 11, 1), (14, 13, 0), (7, 16, (1, 0, 0, 1)), (5, 6, (0, 1, 2, 0)), (17, 19, 1),
                    (18, 21, (0, 1, 2, 0))):
        yield g(16, h, w, 24, 3, pad=p), CI
        yield g(33, h, w, 17, 3, pad=p), CI if p == 1 else FULL
    yield g(64, 28, 28, 64, 3, pad=1), CI
    yield g(256, 13, 12, 256, 3, pad=(1, 1, 0, 2)), CI
    yield g(128, 23, 26, 128, 3, pad=1, threads=2), CI  # F4x4: 42 partial tiles, blocks of 32 cutting tile rows
    yield g(128, 22, 6, 128, 3, pad=1), CI               # F2x2: 33 tiles, blocks of 32 cutting tile rows (tW = 3)
    yield g(16, 18, 17, 16, 3, pad=1, batch=3), CI      # NCHW: transposed to NHWC and back for every image
    yield g(24, 16, 17, 20, 3, pad=1, activation="prelu"), CI  # F4x4 with a per-channel epilogue
    yield g(64, 56, 56, 64, 3, pad=1), FULL


def _activation_geometries() -> Iterable[tuple[dict[str, Any], tuple[str, ...]]]:
    for act in ACTIVATIONS:
        for geometry, profiles in ((_geometry(8, 9, 10, 19, 3, pad=1, activation=act), CI),
                                   (_geometry(9, 6, 7, 17, 1, activation=act), CI),
                                   (_geometry(17, 8, 9, 17, 3, pad=1, group=17, activation=act), CI),
                                   (_geometry(5, 7, 13, 5, 3, pad=1, group=5, activation=act), CI),
                                   (_geometry(12, 9, 40, 12, 3, stride=2, pad=1, group=12, activation=act), FULL),
                                   (_geometry(24, 10, 9, 20, 3, pad=1, activation=act), CI),
                                   (_geometry(6, 10, 9, 12, 2, stride=2, group=2, activation=act), FULL)):
            yield geometry, ("smoke",) + profiles if act in ("prelu", "gelu") and geometry["groups"] == 1 \
                and geometry["kernel"] == (3, 3) and geometry["src_c"] == 8 else profiles


def _upstream_enabled() -> Iterable[tuple[dict[str, Any], str, tuple[str, ...]]]:
    """Upstream's tests: the one NDEBUG shape and the Debug shape (both NHWC in upstream; both layouts here)."""
    yield _upstream(1, 1280, 32, 32, 256, 1, 1, 1, 0, 0, 1, "relu"), "nhwc", CI
    yield _upstream(1, 1280, 32, 32, 256, 1, 1, 1, 0, 0, 1, "relu"), "nchw", FULL
    yield _upstream(1, 20, 75, 75, 20, (1, 11), 1, 1, (0, 5), (0, 5), 20), "nhwc", CI
    yield _upstream(1, 20, 75, 75, 20, (1, 11), 1, 1, (0, 5), (0, 5), 20), "nchw", CI


def _reach() -> Iterable[tuple[dict[str, Any], str, tuple[str, ...]]]:
    """Upstream's algorithms crossed with what selects their code (docs/coverage.md): each algorithm instantiates
    its kernels once per activation and per kernel size, stride, image width or micro-block, so a shape reaches one
    instantiation of many. Every case makes two Forward calls: upstream times two candidate kernels of a context
    over its first calls (the NHWC direct ``2r``/``3r`` micro-kernels, the GEMM kernels of NHWC Winograd) and the
    second call runs the other one. ``ci`` takes each algorithm once (ReLU), ``full`` every activation and the
    micro-kernel tails."""
    g = functools.partial(_geometry, calls=2)
    shapes: list[tuple[str, Callable[[str], dict[str, Any]]]] = [
        # NHWC direct (group 1, dstW >= 6 + pads): a 3x3 stride-2 block with an output-channel tail, a 1x1 block, a
        # 5x5 with a narrow image; more than 8 output channels, else the AVX2 code runs.
        ("nhwc", lambda a: g(24, 14, 30, 40, 3, stride=2, pad=1, activation=a)),
        ("nhwc", lambda a: g(40, 9, 20, 72, 1, activation=a)),
        ("nhwc", lambda a: g(16, 12, 17, 17, 5, pad=2, activation=a)),
        # The older NHWC direct kernels (``2f``): at most 3 input channels.
        ("nhwc", lambda a: g(3, 15, 30, 40, 3, stride=2, pad=1, activation=a)),
        ("nhwc", lambda a: g(1, 12, 24, 17, 3, pad=1, activation=a)),
        # NCHW direct (few input channels per group): a kernel of 1 to 5 at the strides each has a copy for, rows
        # wider than a vector (kernels 4 and 5 need them) and at most half a vector (the AVX2 copies).
        ("nchw", lambda a: g(4, 11, 40, 4, 3, pad=1, group=4, activation=a)),
        ("nchw", lambda a: g(4, 11, 40, 4, 3, stride=2, pad=1, group=4, activation=a)),
        ("nchw", lambda a: g(4, 11, 40, 4, 5, pad=2, group=4, activation=a)),
        ("nchw", lambda a: g(4, 11, 40, 4, 5, stride=2, pad=2, group=4, activation=a)),
        ("nchw", lambda a: g(2, 10, 44, 2, 4, group=2, activation=a)),
        ("nchw", lambda a: g(2, 10, 44, 2, 4, stride=2, group=2, activation=a)),
        ("nchw", lambda a: g(4, 9, 8, 4, 3, pad=1, group=4, activation=a)),
        ("nchw", lambda a: g(1, 9, 9, 1, 2, activation=a)),
        ("nchw", lambda a: g(1, 12, 37, 1, 1, activation=a)),
        # NHWC depthwise (more than 8 channels, not 24): 3x3, a general kernel, and 7x7 pad 3 on rows of a multiple
        # of 8, of 6, and neither.
        ("nhwc", lambda a: g(20, 10, 19, 20, 3, stride=2, pad=1, group=20, activation=a)),
        ("nhwc", lambda a: g(20, 9, 13, 20, (5, 7), pad=(2, 3), group=20, activation=a)),
        ("nhwc", lambda a: g(20, 9, 16, 20, 7, pad=3, group=20, activation=a)),
        ("nhwc", lambda a: g(20, 9, 18, 20, 7, pad=3, group=20, activation=a)),
        ("nhwc", lambda a: g(20, 9, 13, 20, 7, pad=3, group=20, activation=a)),
        # 3x3 stride 2 with no pad: the image's last output is an interior one, whose kernel ends at dst's end.
        ("nhwc", lambda a: g(20, 8, 12, 20, 3, stride=2, group=20, activation=a)),
        # NHWC grouped, two outputs per channel: channels in blocks of 4, 2 and 1 vectors and a tail, and fewer
        # channels than an AVX-512 vector (the AVX2 copy).
        ("nhwc", lambda a: g(117, 6, 9, 234, 3, pad=1, group=117, activation=a)),
        ("nhwc", lambda a: g(12, 9, 14, 24, 3, pad=1, group=12, activation=a)),
        # Winograd's other kernels (NHWC only, more than 16 input channels): 1x3 (more than 32), 1x5, 2x2.
        ("nhwc", lambda a: g(40, 6, 21, 24, (1, 3), pad=(0, 1), activation=a)),
        ("nhwc", lambda a: g(24, 7, 18, 40, (1, 5), activation=a)),
        ("nhwc", lambda a: g(24, 9, 13, 24, 2, pad=(0, 0, 1, 1), activation=a)),
        ("nhwc", lambda a: g(32, 24, 26, 20, 2, activation=a)),
        # Winograd 3x3 in 3x3 blocks: NHWC images of 144 to 255 pixels (or under 8 rows) whose outputs are a
        # multiple of 3 each way.
        ("nhwc", lambda a: g(24, 12, 12, 20, 3, pad=1, activation=a)),
        ("nhwc", lambda a: g(24, 6, 24, 20, 3, pad=1, activation=a)),
    ]
    for layout, shape in shapes:
        for activation in ACTIVATIONS:
            yield shape(activation), layout, CI if activation == "relu" else FULL
    # NHWC direct micro-kernel tails: a row's body runs in blocks of 14 output pixels (``2r``) or 9 (``3r``), and
    # the rest through a kernel instantiated for each count 1..13; a 1x1 convolution blocks all the pixels of its
    # rows. Each count at each activation: 1x1 and 3x3 (16 input channels: direct, not Winograd), and both again
    # with 3 input channels (the ``2f`` kernels).
    # ``ci`` takes the count 4 at ReLU (a 4-pixel remainder of 40 channels: the one-vector block's stores).
    for activation in ACTIVATIONS:
        for m in range(1, 14):
            profiles = CI if activation == "relu" and m == 4 else FULL
            for src_c in (40, 3):
                yield g(src_c, 1, 14 + m, 40, 1, activation=activation), "nhwc", profiles
            for src_c in (16, 3):
                yield g(src_c, 3, 16 + m, 40, 3, pad=1, activation=activation), "nhwc", profiles


def _upstream_disabled() -> Iterable[tuple[dict[str, Any], str | None]]:
    """Upstream's tests, every `#if 0` table (layout None: upstream's default, run here in both layouts)."""
    u = _upstream
    # Block 1.
    yield u(1, 16, 112, 96, 32, 3, 1, 3, (1, 0), (1, 0), 1), None
    yield u(1, 16, 114, 96, 32, 3, 1, 3, 0, 0, 1), None
    yield u(1, 64, 19, 16, 64, 3, 1, 3, 1, 1, 64), None
    yield u(1, 32, 19, 16, 64, 1, 1, 1, 0, 0, 1), None
    yield u(1, 128, 7, 7, 128, 7, 1, 1, 0, 0, 128), None
    yield u(1, 16, 56, 56, 32, 1, 1, 1, 0, 0, 1), None
    yield u(1, 3, 112, 112, 16, 3, 1, 2, 1, 1, 1), None
    yield u(1, 128, 7, 6, 128, 3, 1, 2, (0, 1), (1, 1), 128), None
    yield u(1, 128, 4, 3, 256, 1, 1, 1, 0, 0, 1), None
    yield u(1, 32, 38, 32, 32, 3, 1, 2, 0, 1, 32), None
    # Block 2: pyramids, dstC = srcC, group 1.
    for c, s in ((48, 256), (96, 128), (192, 64), (384, 32), (768, 16), (1536, 8), (3072, 4)):
        yield u(1, c, s, s, c, 1), None
    for c, s in ((16, 256), (32, 128), (64, 64), (128, 32), (256, 16), (512, 8), (1024, 4)):
        yield u(1, c, s, s, c, 3, 1, 1, 1, 1), None
    for c, s in ((10, 256), (20, 128), (40, 64), (80, 32), (160, 16), (320, 8), (640, 4)):
        yield u(1, c, s, s, c, 5, 1, 1, 2, 2), None
    # Block 3: grouped, dstC = 2*srcC, group = srcC.
    for c, s, k, st, p in ((384, 7, 3, 1, 1), (192, 14, 7, 2, 3), (96, 28, 7, 2, 3), (48, 56, 7, 2, 3),
                           (512, 7, 3, 1, 1), (256, 14, 7, 2, 3), (128, 28, 7, 2, 3), (64, 56, 7, 2, 3),
                           (49, 29, 7, 2, 3)):
        yield u(1, c, s, s, 2 * c, k, 1, st, p, p, c), None
    # Block 4: activation coverage (upstream's layouts).
    yield u(1, 48, 24, 24, 96, 1, 1, 2, 0, 0, 1, "gelu"), "nhwc"
    yield u(1, 128, 14, 14, 128, 5, 1, 1, 2, 2, 1, "elu"), "nhwc"
    yield u(1, 160, 28, 28, 160, 3, 1, 2, 1, 1, 10, "relu"), "nhwc"
    yield u(1, 384, 7, 7, 768, 3, 1, 1, 1, 1, 384), "nhwc"
    yield u(1, 256, 28, 28, 256, 3, 1, 1, 1, 1, 1, "leaky_relu"), "nhwc"
    yield u(1, 512, 24, 24, 512, 1, 1, 1, 0, 0, 1, "hswish"), "nhwc"
    yield u(1, 256, 24, 24, 256, 5, 1, 1, 2, 2, 256, "prelu"), "nhwc"
    yield u(1, 128, 5, 5, 128, 1, 1, 1, 0, 0, 1, "mish"), "nchw"
    yield u(1, 64, 24, 24, 64, 24, 1, 1, 0, 0, 64, "hard_sigmoid"), "nchw"
    yield u(1, 256, 24, 24, 256, 3, 1, 1, 1, 1, 1, "mish"), "nchw"
    yield u(1, 3, 64, 64, 16, 3, 1, 1, 1, 1, 1, "prelu"), "nchw"
    yield u(1, 256, 24, 24, 256, 1, 1, 1, 0, 0, 1, "hard_sigmoid"), "nhwc"
    yield u(1, 128, 24, 24, 128, 3, 1, 1, 2, 2, 1, "gelu"), "nhwc"
    # Block 5: NHWC identity.
    for shape in (u(1, 512, 32, 32, 128, 1), u(1, 256, 32, 32, 128, 3, 1, 1, 1, 1), u(1, 91, 33, 33, 65, 3, 1, 1, 1, 1),
                  u(25, 67, 15, 15, 35, 1), u(1, 3000, 15, 15, 35, 1), u(1, 3001, 5, 5, 1201, 1),
                  u(1, 93, 115, 115, 31, 1), u(1, 64, 2, 33, 32, 2), u(1, 512, 32, 32, 256, 3, 1, 1, 1, 1, 1, "relu"),
                  u(1, 512, 32, 32, 256, 1, 1, 1, 0, 0, 1, "relu")):
        yield shape, "nhwc"
    # Block 6.
    yield u(1, 3072, 64, 64, 768, 1), None
    yield u(1, 768, 64, 64, 768, 1), None
    for k in (1, 3, 5, 7):
        yield u(1, 256, 64, 64, 256, k, 1, 1, k // 2, k // 2), None
    yield u(1, 64, 128, 128, 256, 3, 1, 1, 1, 1), None
    yield u(1, 32, 16, 16, 256, 5, 1, 1, 2, 2), None
    yield u(1, 768, 16, 16, 256, 1), None
    yield u(1, 64, 16, 16, 256, (3, 4), 1, 1, 1, (1, 2)), None
    yield u(1, 48, 24, 24, 64, 3, 1, 1, 1, 1), None
    yield u(1, 3072, 24, 24, 256, 1), None
    yield u(1, 600, 24, 24, 64, 1), None
    yield u(12, 2000, 5, 5, 255, 1), None
    yield u(24, 2048, 6, 6, 255, 3), None
    # Block 7: depthwise.
    for c, s, k, p, act in ((816, 14, 5, 2, "relu"), (304, 16, 3, 1, "relu"), (304, 16, 7, 3, "prelu"),
                            (608, 8, 7, 0, "relu"), (608, 7, 7, 0, "relu"), (152, 32, 7, 0, "relu"),
                            (76, 64, 7, 0, "relu")):
        yield u(1, c, s, s, c, k, 1, 1, p, p, c, act), None
    # Block 8.
    yield u(1, 1, 80, 240, 1, 3, 1, 1, 1, 1, 1, "relu"), None
    yield u(1, 1, 80, 240, 32, 1, 1, 1, 1, 1, 1, "relu"), None
    yield u(1, 32, 80, 240, 32, 3, 1, 2, 1, 1, 32, "relu"), None
    yield u(1, 128, 10, 60, 128, 3, 1, 1, 1, 1, 128, "relu"), None


# -- the edge group: one non-finite input pixel ----------------------------------------------------------------------
#: Values of the ``special`` parameter: the value of the one non-finite input.
NON_FINITE = {"pos_inf": np.inf, "neg_inf": -np.inf, "nan": np.nan}


def _non_finite_geometries() -> Iterable[dict[str, Any]]:
    """Each special value on a Winograd shape (3x3 stride 1, 32 -> 16 channels), a 1x1 (GEMM), a 5x5 (direct) and
    a depthwise 3x3 shape."""
    shapes = (_geometry(32, 20, 22, 16, 3, pad=1), _geometry(24, 9, 11, 16, 1), _geometry(8, 12, 13, 8, 5, pad=2),
              _geometry(16, 11, 12, 16, 3, pad=1, group=16))
    for shape in shapes:
        for special in NON_FINITE:
            yield {**shape, "special": special}


def _non_finite_pixel(p: dict[str, Any], layout: str) -> tuple[int, int, int, int]:
    """Where the non-finite value goes: the middle of image 0, channel src_c // 2."""
    y, x, c = p["src_h"] // 2, p["src_w"] // 2, p["src_c"] // 2
    return (0, c, y, x) if layout == "nchw" else (0, y, x, c)


def non_finite_expectation(expected: np.ndarray, actual: np.ndarray, info: str, p: dict[str, Any],
                           layout: str) -> np.ndarray:
    """The rule for a non-finite input, per algorithm (docs/guide/tolerance.md).

    Every algorithm that sums the products of each window (direct, GEMM, depthwise) gives the reference's Inf and
    NaN exactly: the reference is the expectation. A Winograd algorithm F(m x m, r x r) mixes the values of each
    (m + r - 1)^2 input tile in its transforms (Inf - Inf is NaN), so every output of a tile whose input tile holds
    the non-finite value may be NaN, in every output channel of that image: those outputs are expected NaN if they
    are NaN. An output is in such a tile only if it is within m + r - 2 of the value (in output coordinates, per
    axis); m is read from the algorithm's name (``WinogradF4x4``, upstream's ``Winograd F(2x2,3x3)``), 6 (the
    largest upstream tile) when it is not given there. Every other output must still match the reference.
    """
    if "winograd" not in info.lower():
        return expected
    import re

    match = re.search(r"F\(?(\d+)x(\d+)", info)
    tile = (int(match.group(1)), int(match.group(2))) if match else (6, 6)
    pixel = _non_finite_pixel(p, layout)
    y, x = (pixel[2], pixel[3]) if layout == "nchw" else (pixel[1], pixel[2])
    centre = (y + p["pad"][0], x + p["pad"][1])
    spatial = (2, 3) if layout == "nchw" else (1, 2)
    oy = np.arange(expected.shape[spatial[0]])
    ox = np.arange(expected.shape[spatial[1]])
    near_y = np.abs(oy - centre[0]) <= tile[0] + p["kernel"][0] - 2
    near_x = np.abs(ox - centre[1]) <= tile[1] + p["kernel"][1] - 2
    near = near_y[:, None] & near_x[None, :]
    reach = np.zeros(expected.shape, bool)
    if layout == "nchw":
        reach[0] = near[None, :, :]
    else:
        reach[0] = near[:, :, None]
    result = expected.copy()
    result[reach & np.isnan(actual)] = np.nan
    return result


# -- the edge group: every class of value in each input ---------------------------------------------------------------
#: The input of each ``special`` of the classes cases, and its activation (prelu takes the slopes).
CLASS_INPUTS = {"src-classes": ("src", "identity"), "weight-classes": ("weight", "identity"),
                "bias-classes": ("bias", "identity"), "params-classes": ("params", "prelu"),
                "params-unbounded": ("params", "restrict_range")}
#: The activation parameters' classes: prelu slopes take the finite ones (the wrapper's float parameters are finite,
#: values.FINITE_PARAMETER), restrict_range's bounds alone the infinities: [-inf, +inf].
UNBOUNDED = (-np.inf, np.inf)
#: Where a class of the source goes: lane (= channel) c of values.class_lanes at row 3 * (c // 6) and column
#: 3 * (c % 6) (first set), or row 6 + 3 * (c // 6) and column width - 1 - 3 * (c % 6) (second set, from the last
#: column: a tail lane): three apart, so that no 3x3 window holds two of them.
CLASS_SOURCE_WIDTH = 18


def _class_geometries() -> Iterable[dict[str, Any]]:
    """3x3 stride 2 (no Winograd algorithm takes it): the source classes over 27 input channels in a 12x18 image
    padded by 1; the other inputs' classes one per output channel (27) of a 9x17 image with no padding, so every
    tap of every window reads the image (a tap in the padding reads a zero, and whether a kernel multiplies a NaN
    or infinite weight by it is not the contract's to say)."""
    lanes = values.CLASS_LANES
    for special, (_, act) in CLASS_INPUTS.items():
        if special == "src-classes":
            shape = _geometry(lanes, 12, CLASS_SOURCE_WIDTH, 8, 3, stride=2, pad=1)
        else:
            shape = _geometry(8, 9, 17, lanes, 3, stride=2)  # 8 output columns: upstream's NhwcDirect takes it
        yield {**shape, "activation": act, "special": special}


def _hold_classes(inputs: dict[str, Any], special: str, layout: str, rng: np.random.Generator) -> None:
    """Every class one per lane (values.class_lanes) in the input `special` names: a source channel (at its own
    pixel, see CLASS_SOURCE_WIDTH), one tap of an output channel's weights (the lane's own input channel at the
    first tap, or the last tap of the last input channel), a bias entry or a prelu slope."""
    name = CLASS_INPUTS[special][0]
    array = inputs[name]
    if special == "params-unbounded":
        array[:] = UNBOUNDED
        return
    for lane, value in values.class_lanes("float32", rng, finite=name == "params"):
        first = lane < values.SECOND_SET
        c = lane % values.SECOND_SET
        if name == "src":
            y, x = (3 * (c // 6), 3 * (c % 6)) if first else (6 + 3 * (c // 6), CLASS_SOURCE_WIDTH - 1 - 3 * (c % 6))
            array[(0, lane, y, x) if layout == "nchw" else (0, y, x, lane)] = value
        elif name == "weight":
            channels = array.shape[1] if layout == "nchw" else array.shape[2]
            ci, tap = (lane % channels, 0) if first else (channels - 1, -1)
            array[(lane, ci, tap, tap) if layout == "nchw" else (tap, tap, ci, lane)] = value
        else:
            array[lane] = value


def winograd_eligible(p: dict[str, Any]) -> bool:
    """Shapes an implementation may run through Winograd transforms: group 1, stride 1, dilation 1 and a kernel
    upstream has a Winograd variant for (3x3, 1x3, 1x5, 2x2; its Info string names the one taken)."""
    return p["kernel"] in ((3, 3), (1, 3), (1, 5), (2, 2)) and p["stride"] == (1, 1) and p["dilation"] == (1, 1) \
        and p["groups"] == 1


@register
class Convolution32f(Function):
    name = "convolution32f"
    family = "convolution"
    symbols = ("SimdSynetConvolution32fInit", "SimdSynetConvolution32fSetParams",
               "SimdSynetConvolution32fForward", "SimdSynetConvolution32fExternalBufferSize",
               "SimdSynetConvolution32fInfo")
    outside_domain = {"params": {"nan": values.FINITE_PARAMETER}}
    fields = (F("layout", "name"), F("batch", "int", 1), F("src_c", "int"), F("src_h", "int"), F("src_w", "int"),
              F("dst_c", "int"), F("kernel", "dims"), F("stride", "dims", (1, 1)), F("dilation", "dims", (1, 1)),
              F("pad", "list", (0, 0, 0, 0)), F("groups", "int", 1), F("activation", "name", "identity"),
              F("threads", "int", 1), F("calls", "int", 1), F("special", "name", ""), F("group", "name"))

    def grid(self) -> Iterable[Case]:
        for p, profiles in _grid():
            for layout in LAYOUTS:
                yield self.case(p, layout=layout, profiles=profiles)
        for p, profiles in _activation_geometries():
            for layout in LAYOUTS:
                yield self.case(p, layout=layout, profiles=profiles)
        for p, layout, profiles in _upstream_enabled():
            yield self.case(p, layout=layout, profiles=profiles)
        # NCHW Winograd F(2x2,3x3) rows wider than three 32-column input blocks: the input loop's column step is
        # taken more than once (a gap the mutation of upstream's kernels showed, docs/mutation.md).
        yield self.case(_upstream(1, 32, 20, 130, 32, 3, 1, 1, 1, 1), layout="nchw", profiles=CI)
        for p, layout, profiles in _reach():
            yield self.case(p, layout=layout, profiles=profiles)
        for p, default_layout in _upstream_disabled():
            for one in (default_layout,) if default_layout else LAYOUTS:
                yield self.case(p, layout=one, profiles=FULL)
        for p in _non_finite_geometries():
            for layout in LAYOUTS:
                yield self.case(p, layout=layout, group="edge", profiles=CI)
        for p in _class_geometries():
            for layout in LAYOUTS:
                yield self.case(p, layout=layout, group="edge", profiles=CI)

    def space(self) -> SearchStrategy[Case]:
        """Group 1, grouped and depthwise (with a multiplier) geometries; channel counts from 1; kernels 1..11
        per axis (non-square); strides and dilations 1..3 per axis; each of the four pads up to the dilated
        kernel; images down to one pixel and outputs past every vector width; batch 1..2; every activation;
        1 or 2 threads; 1 or 2 Forward calls; both layouts. Work is bounded so that the float64 reference stays
        quick."""
        from hypothesis import assume
        from hypothesis import strategies as st

        @st.composite
        def draw(draw: DrawFn) -> Case:
            kind = draw(st.sampled_from(("plain", "depthwise", "grouped")))
            if kind == "plain":
                groups, src_c, dst_c = 1, draw(st.integers(1, 48)), draw(st.integers(1, 48))
            elif kind == "depthwise":
                groups = src_c = draw(st.integers(1, 48))
                dst_c = src_c * draw(st.integers(1, 3))
            else:
                groups = draw(st.integers(2, 4))
                src_c, dst_c = groups * draw(st.integers(1, 12)), groups * draw(st.integers(1, 12))
            kernel = (draw(st.integers(1, 11)), draw(st.integers(1, 11)))
            dilation = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
            extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
            pad = tuple(draw(st.integers(0, extent[axis])) for axis in (0, 1, 0, 1))  # top, left, bottom, right
            src_h = max(draw(st.integers(1, 40)), extent[0] - pad[0] - pad[2])
            src_w = max(draw(st.integers(1, 70)), extent[1] - pad[1] - pad[3])
            params = _geometry(src_c, src_h, src_w, dst_c, kernel, stride=(draw(st.integers(1, 3)),
                               draw(st.integers(1, 3))), dilation=dilation, pad=pad, group=groups,
                               batch=draw(st.integers(1, 2)), activation=draw(st.sampled_from(tuple(ACTIVATIONS))),
                               threads=draw(st.integers(1, 2)), calls=draw(st.integers(1, 2)))
            work = params["batch"] * src_h * src_w * dst_c * kernel[0] * kernel[1] * (src_c // groups)
            assume(work <= 4_000_000)
            return self.case(params, layout=draw(st.sampled_from(LAYOUTS)))
        return draw()

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        src_c, h, w, dst_c, g = p["src_c"], p["src_h"], p["src_w"], p["dst_c"], p["groups"]
        k_y, k_x = p["kernel"]
        src_shape = (p["batch"], src_c, h, w) if case.layout == "nchw" else (p["batch"], h, w, src_c)
        weight_shape = (dst_c, src_c // g, k_y, k_x) if case.layout == "nchw" else (k_y, k_x, src_c // g, dst_c)
        act = ACTIVATIONS[p["activation"]]
        params = rng.uniform(0.0, 2.0, dst_c).astype(np.float32) if act == "per-channel" \
            else (np.array(act, np.float32) if act else None)
        src = rng.uniform(-1, 1, src_shape).astype(np.float32)
        if p.get("special") in NON_FINITE:
            src[_non_finite_pixel(p, case.layout)] = NON_FINITE[p["special"]]
        inputs = {
            "src": src,
            "weight": rng.uniform(-1, 1, weight_shape).astype(np.float32),
            "bias": rng.uniform(-1, 1, dst_c).astype(np.float32),
            "params": params,
        }
        if p.get("special") == "params-classes":
            # Slopes up to FLT_MAX scale the pre-activation's rounding by as much: small integers make every sum
            # exact in any order, so the slope's product is the output's one rounding.
            for name in ("src", "weight", "bias"):
                inputs[name] = rng.integers(-2, 3, inputs[name].shape).astype(np.float32)
        if p.get("special") in CLASS_INPUTS:
            _hold_classes(inputs, p["special"], case.layout, rng)
        return inputs

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> Any:
        """``calls`` Forward calls on one context, each result checked: upstream times the candidate kernels of a
        context over its first calls (two NHWC direct micro-kernels, two GEMM kernels) and keeps the fastest, so
        its second call runs other code than its first."""
        p = case.params
        threads = library.threads if p["threads"] > 1 else None
        if threads is not None:
            library.set_threads(p["threads"])
        try:
            src = inputs["src"]
            with self.context(library, case, inputs) as conv:
                inputs["_info"] = conv.info  # the algorithm: the non-finite rule depends on it
                # 0xFF bytes: a read of dst before writing it shows as NaN
                results = [conv.forward(src, out=self.output(inputs, conv.out_shape)) for _ in range(p["calls"])]
            inputs["_actual"] = results  # for the reference's choices at non-finite inputs and mish's jump
            return results[0] if len(results) == 1 else tuple(results)
        finally:
            if threads is not None:
                library.set_threads(threads)

    def context(self, library: Any, case: Case, inputs: dict[str, Any]) -> simdbind.Convolution32f:
        """The case's context, its weights set (the library's choice of algorithm: its ``info``)."""
        p = case.params
        return simdbind.Convolution32f(
            inputs["src"].shape, p["dst_c"], p["kernel"], stride=p["stride"], dilation=p["dilation"], pad=p["pad"],
            group=p["groups"], activation=p["activation"], params=inputs["params"], layout=case.layout,
            weight=inputs["weight"], bias=inputs["bias"], library=library)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        """The context (weights converted), output and scratch buffer made once; each call is one Forward."""
        src = inputs["src"]
        conv = self.context(library, case, inputs)
        out = self.output(inputs, conv.out_shape)
        buffer = np.empty(max(conv.external_buffer_size, 1), np.float32)
        return lambda: conv.forward(src, out=out, buffer=buffer)

    def reference(self, case: Case, inputs: dict[str, Any]) -> Any:
        p = case.params

        def convolve(activation: str) -> np.ndarray:
            return reference.convolution(inputs["src"], inputs["weight"], inputs["bias"], inputs["params"],
                                         layout=case.layout, stride=p["stride"], dilation=p["dilation"],
                                         pad=p["pad"], group=p["groups"], activation=activation)

        expected = convolve(p["activation"])
        identity = convolve("identity") if p["activation"] == "mish" else None
        results = []
        for actual in inputs.get("_actual", [None] * p["calls"]):
            result = expected
            if p.get("special") and actual is not None:
                result = non_finite_expectation(result, actual, inputs.get("_info", ""), p, case.layout)
            if identity is not None and actual is not None:
                result = reference_activation.either_side_of_the_jump(
                    result, identity, actual, "mish", inputs["params"], self.tolerance(case).abs)
            results.append(result)
        return results[0] if len(results) == 1 else tuple(results)

    def tolerance(self, case: Case) -> Tolerance:
        return tolerance(case.params, ACTIVATIONS, winograd_eligible(case.params))

    def variant(self, case: Case) -> str:
        """Report rows by geometry class: depthwise, grouped, 1x1, 3x3/s1 (Winograd-eligible), general."""
        p = case.params
        if p["groups"] == p["src_c"] == p["dst_c"] and p["groups"] > 1:
            return "depthwise"
        if p["groups"] > 1:
            return "grouped"
        if p["kernel"] == (1, 1) and p["stride"] == (1, 1) and p["pad"] == (0, 0, 0, 0):
            return "1x1"
        if winograd_eligible(p) and p["kernel"] == (3, 3):
            return "3x3 s1"
        return "general"


def tolerance(p: dict[str, Any], activations: dict[str, Any], winograd: bool) -> Tolerance:
    """abs = L * w * K * 2^-22 + 1e-6 and rel = 2e-6, K = kY*kX*srcC/group.

    The data are U[-1, 1], so a float32 reduction of K products (any order, blocked, fused or not) differs from the
    float64 one by a few units of 2^-24 times the partial sums, which grow like sqrt(K) for random signs: K * 2^-22
    bounds that with a margin of about 3 (the worst case of the full profile at sse41, no FMA, uses 0.34 of it) while
    still catching a wrong tap (an error of order 0.1 or more). w = 16 for geometries a Winograd algorithm may take: its transforms amplify rounding,
    about 2x for the bundled F(2x2,3x3) and an order of magnitude for upstream's F(4x4,3x3) (about 6e-5
    relative).
    L is the activation's Lipschitz bound (how far an input error can move the output); rel covers the activation's
    own polynomial exp/erf/tanh (a few ulp).
    """
    k = p["kernel"][0] * p["kernel"][1] * (p["src_c"] // p["groups"])
    params = activations[p["activation"]]
    slope = 2.0 if params == "per-channel" else None  # prelu slopes are drawn from U[0, 2]
    lipschitz = max(slope or 1.0, reference_activation.lipschitz(
        p["activation"], None if params == "per-channel" else (list(params) or None)))
    factor = 16.0 if winograd else 1.0
    why = f"float32 reduction of K={k} terms" + (" through Winograd transforms" if winograd else "")
    return Tolerance(abs=lipschitz * factor * k * 2.0 ** -22 + 1e-6, rel=2e-6, why=why)


# -- benchmark cases: what `simdbind bench` times, and the work of a call of every case of the family ------------------
BENCH_NOTE = """Convolution32f throughput (GFLOP/s = 2 x a direct convolution's multiply-adds / s; "effective GFLOP/s" on the
3x3 stride-1 rows, where a Winograd algorithm does fewer), NCHW and NHWC, bias and ReLU fused: ResNet 3x3
64->64 at 56x56, 1x1 256->64 at 56x56, depthwise 3x3 128 at 56x56, 3x3 stride 2 32->64 at 112x112, and
MobileNetV2-style blocks (1x1 expand 24->144, depthwise 3x3 144 at stride 1 and 2, 1x1 project 144->24 at 56x56).
The library's context is built once per case (Convolution32f.prepare), so a call is one Forward."""

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
