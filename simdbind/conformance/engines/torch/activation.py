"""The Simd activations (SimdConvolutionActivationType) with PyTorch's own functions where they are the same function,
for the torch adapters of the convolution and inner-product families (imports torch when it runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch


def activate(x: torch.Tensor, kind: str, params: Any, channel_dim: int) -> torch.Tensor:
    """`kind` with Simd's parameters (C order); prelu slopes run along `channel_dim`."""
    import torch
    import torch.nn.functional as F

    p = [] if params is None else [float(v) for v in np.asarray(params, np.float32).ravel()]
    if kind == "identity":
        return x
    if kind == "relu":
        return F.relu(x)
    if kind == "leaky_relu":
        return F.leaky_relu(x, p[0])
    if kind == "restrict_range":
        return torch.clamp(x, p[0], p[1])
    if kind == "prelu":
        shape = [1] * x.dim()
        shape[channel_dim] = x.shape[channel_dim]
        slopes = torch.tensor(p, dtype=x.dtype).reshape(shape)
        return torch.where(x >= 0, x, x * slopes)
    if kind == "elu":
        return F.elu(x, alpha=p[0])
    if kind == "hswish":  # Simd: max(min(x, shift) + shift, 0) * scale * x; torch's hardswish is (3, 1/6)
        if np.isclose(p[0], 3.0) and np.isclose(p[1], 1 / 6):
            return F.hardswish(x)
        return torch.clamp(torch.clamp(x, max=p[0]) + p[0], min=0.0) * p[1] * x
    if kind == "mish":  # Simd: x above the threshold, else x * tanh(softplus(x))
        return torch.where(x > p[0], x, F.mish(x))
    if kind == "hard_sigmoid":  # Simd: clamp(x * scale + shift, 0, 1); torch's hardsigmoid is (1/6, 1/2)
        if np.isclose(p[0], 1 / 6) and np.isclose(p[1], 0.5):
            return F.hardsigmoid(x)
        return torch.clamp(x * p[0] + p[1], 0.0, 1.0)
    if kind == "swish":  # x * sigmoid(slope * x); torch's silu is slope 1
        return F.silu(x) if p[0] == 1.0 else x * torch.sigmoid(x * p[0])
    if kind == "gelu":
        return F.gelu(x)
    raise ValueError(f"no torch mapping for activation {kind!r}")
