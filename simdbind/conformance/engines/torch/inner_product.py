"""PyTorch adapters of the inner-product family.

* inner_product_32f: ``act(F.linear(A, B if transB else B.T, bias))`` for each call (constant B: the first),
  activations with torch's own functions (activation_torch.py);
* inner_product_layer: ``F.linear(x, weight, bias)``;
* inner_product_8i: the exact int32 product ``src @ weight.T`` (int64 matmul, then int32). torch has no pairwise
  int16 saturation, so the saturating compatibilities are only run on data where no pair can saturate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.torch import as_numpy, implementation
from simdbind.conformance.engines.torch.activation import activate


def _t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x, np.float32))


@implementation.function("inner_product_32f")
def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
    p = case.params
    bias = None if inputs["bias"] is None else _t(inputs["bias"])
    results = []
    for call in range(p.get("calls", 1)):
        B = _t(inputs["B"][0] if p["const_b"] else inputs["B"][call])
        weight = B if p["trans_b"] else B.T.contiguous()
        y = F.linear(_t(inputs["A"][call]), weight, bias)
        results.append(as_numpy(activate(y, p["activation"], inputs["params"], channel_dim=1)))
    return results[0] if len(results) == 1 else tuple(results)


@implementation.function("inner_product_layer")
def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    bias = None if inputs["bias"] is None else _t(inputs["bias"])
    return as_numpy(F.linear(_t(inputs["x"]), _t(inputs["weight"]), bias))


@implementation.function("inner_product_8i")
def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    if p["compatibility"] != "precise" and p.get("data") != "narrowed":
        raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): torch has no such arithmetic")
    src = torch.from_numpy(np.asarray(inputs["src"]).astype(np.int64))
    weight = torch.from_numpy(np.asarray(inputs["weight"]).astype(np.int64))
    return as_numpy(src @ weight.T).astype(np.int32)
