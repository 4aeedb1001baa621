"""PyTorch adapter of Convolution32f: ``act(F.conv2d(F.pad(src, pads), weight, bias, stride, 0, dilation,
groups))`` on NCHW.

Mapping: NHWC sources (N, H, W, C) are permuted to NCHW and HWIO weights (kY, kX, C/group, dstC) to OIHW; the pads
(top, left, bottom, right) are applied with ``F.pad`` (zeros, asymmetric allowed), so torch's own padding is 0;
prelu slopes run along the channel dimension; the other activations use torch's functions (activation_torch.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from simdbind.conformance import Case
from simdbind.conformance.engines.torch import as_numpy, implementation
from simdbind.conformance.engines.torch.activation import activate


def _groups(p: dict[str, Any]) -> int:
    """The convolution's group count (case parameter "groups"; "group" in early case modules)."""
    return int(p["groups"] if "groups" in p else p["group"])


@implementation.function("convolution32f")
def convolution32f(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    src = torch.from_numpy(np.ascontiguousarray(inputs["src"], np.float32))
    weight = torch.from_numpy(np.ascontiguousarray(inputs["weight"], np.float32))
    if case.layout == "nhwc":
        src = src.permute(0, 3, 1, 2)
        weight = weight.permute(3, 2, 0, 1)
    top, left, bottom, right = p["pad"]
    src = F.pad(src.contiguous(), (left, right, top, bottom))
    bias = torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
    y = F.conv2d(src, weight.contiguous(), bias, tuple(p["stride"]), 0, tuple(p["dilation"]), _groups(p))
    y = activate(y, p["activation"], inputs["params"], channel_dim=1)
    if case.layout == "nhwc":
        y = y.permute(0, 2, 3, 1)
    return as_numpy(y.contiguous())
