"""PyTorch adapters of the pooling family.

Pooling mappings, on NCHW tensors (NHWC is permuted): ``F.avg_pool2d(x, kernel, stride, padding, ceil_mode,
count_include_pad=False)`` for the exclude-pad average; with the pads included, ``divisor_override=kY*kX`` (Simd
divides by the whole kernel area even where a ceil-mode window runs past the padded image; torch's
count_include_pad would divide by the clipped area); ``F.max_pool2d`` (``F.max_pool3d`` with the channels as depth
for 3D max pooling). Pads torch's own argument cannot take (asymmetric, or more than half the kernel) are applied
with ``F.pad``: zeros for the average (window sums with ``divisor_override=1``, divided by the kernel area or, pads
excluded, by the count of real elements), -inf for the maximum, floored at -FLT_MAX as Simd's maximum is; torch's
ceil-mode rule (the last window starts inside the image or its begin pad) is then applied to the real geometry
again, since after explicit padding torch sees the end pads as image. bf16 and
uint8 maxima are taken in float32 (exact for both) and converted back. Skipped: the direct calls with an explicit
output size, and the edge group (Simd's NaN order and -inf under the -FLT_MAX floor).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.torch import as_numpy, implementation


def _to_nchw(x: np.ndarray, layout: str) -> tuple[torch.Tensor, bool]:
    t = torch.from_numpy(np.ascontiguousarray(x))
    batched = t.dim() == 4
    if not batched:
        t = t.unsqueeze(0)
    if layout == "nhwc":
        t = t.permute(0, 3, 1, 2)
    return t.contiguous(), batched


def _from_nchw(t: torch.Tensor, layout: str, batched: bool) -> torch.Tensor:
    if layout == "nhwc":
        t = t.permute(0, 2, 3, 1)
    if not batched:
        t = t.squeeze(0)
    return t.contiguous()


def _geometry(case: Case) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int]]:
    """kernel, stride and the pads as F.pad takes them: (left, right, top, bottom)."""
    p = case.params
    if case.group == "edge":
        raise Unsupported("edge group: Simd's NaN order and -FLT_MAX floor are implementation-defined")
    if p.get("direct"):
        raise Unsupported("a direct call with an explicit output size (torch derives it)")
    return (p["ky"], p["kx"]), (p["sy"], p["sx"]), (p["pad_left"], p["pad_right"], p["pad_top"], p["pad_bottom"])


def _crop(y: torch.Tensor, image: Sequence[int], stride: tuple[int, int], pads: tuple[int, int, int, int],
          ceil: bool) -> torch.Tensor:
    """After explicit padding, torch's ceil-mode rule (the last window starts inside the image or its begin pad)
    sees the end pads as image: apply it to the real geometry again."""
    if not ceil:
        return y
    (h, w), (sy, sx), (left, _, top, _) = image, stride, pads
    out_h, out_w = y.shape[-2], y.shape[-1]
    if out_h > 1 and (out_h - 1) * sy >= h + top:
        out_h -= 1
    if out_w > 1 and (out_w - 1) * sx >= w + left:
        out_w -= 1
    return y[..., :out_h, :out_w]


def _symmetric(pads: tuple[int, int, int, int], kernel: tuple[int, int]) -> tuple[int, int] | None:
    """torch's own padding argument when the pads allow it (both sides alike, at most half the kernel)."""
    left, right, top, bottom = pads
    if left == right and top == bottom and top <= kernel[0] // 2 and left <= kernel[1] // 2:
        return top, left
    return None


@implementation.function("pooling_average")
def pooling_average(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    kernel, stride, pads = _geometry(case)
    t, batched = _to_nchw(np.asarray(inputs["x"], np.float32), case.layout)
    ceil, exclude = case.params["ceil"], case.params["exclude"]
    padding = _symmetric(pads, kernel)
    if padding is not None and exclude:
        y = F.avg_pool2d(t, kernel, stride, padding, ceil_mode=ceil, count_include_pad=False)
    elif padding is not None:
        y = F.avg_pool2d(t, kernel, stride, padding, ceil_mode=ceil, divisor_override=kernel[0] * kernel[1])
    else:
        total = F.avg_pool2d(F.pad(t, pads), kernel, stride, 0, ceil_mode=ceil, divisor_override=1)
        if exclude:
            ones = F.pad(torch.ones_like(t[:1, :1]), pads)
            y = total / F.avg_pool2d(ones, kernel, stride, 0, ceil_mode=ceil, divisor_override=1)
        else:
            y = total / float(kernel[0] * kernel[1])
        y = _crop(y, tuple(t.shape[-2:]), stride, pads, ceil)
    return as_numpy(_from_nchw(y, case.layout, batched))


def _max(case: Case, x32: np.ndarray) -> torch.Tensor:
    p = case.params
    kernel, stride, pads = _geometry(case)
    t, batched = _to_nchw(x32, case.layout)
    padding = _symmetric(pads, kernel)
    channel = (p.get("kc", 1), p.get("sc", 1), p.get("pc_begin", 0), p.get("pc_end", 0))
    explicit = padding is None
    image = tuple(t.shape[-2:])
    if padding is None:
        t, padding = F.pad(t, pads, value=float("-inf")), (0, 0)
    if channel == (1, 1, 0, 0):
        y = F.max_pool2d(t, kernel, stride, padding, ceil_mode=p["ceil"])
    else:
        kc, sc, pcb, pce = channel
        if pcb != pce or pcb > kc // 2:
            raise Unsupported("asymmetric or large channel pads: torch pads both sides alike, at most half")
        y = F.max_pool3d(t.unsqueeze(1), (kc, *kernel), (sc, *stride), (pcb, *padding), ceil_mode=p["ceil"])
        y = y.squeeze(1)
    if explicit:
        y = _crop(y, image, stride, pads, p["ceil"])
    # Simd's maximum starts at -FLT_MAX: a window of padding only gives -FLT_MAX, not -inf.
    y = torch.clamp(y, min=-float(np.finfo(np.float32).max))
    return _from_nchw(y, case.layout, batched)


@implementation.function("pooling_max32f")
def pooling_max32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return as_numpy(_max(case, np.asarray(inputs["x"], np.float32)))


@implementation.function("pooling_max16b")
def pooling_max16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    bits = np.ascontiguousarray(inputs["x"]).view(np.uint16)
    y = as_numpy(_max(case, (bits.astype(np.uint32) << 16).view(np.float32)))
    return (y.view(np.uint32) >> 16).astype(np.uint16)  # the maxima are bf16 values: exact


@implementation.function("pooling_max8u")
def pooling_max8u(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    return as_numpy(_max(case, np.asarray(inputs["x"]).astype(np.float32))).astype(np.uint8)
