"""PyTorch adapter of SimdSynetEltwiseLayerForward (spec 3.2).

Mapping: product folds ``torch.mul``, max/min fold ``torch.maximum``/``torch.minimum`` from the first two inputs
(the order of the fold does not matter for finite values), sum is ``sum_i w_i * x_i`` in float32 with torch's own
rounding. NaN differs by definition: torch.maximum/minimum propagate NaN, Simd's ``a > b ? a : b`` keeps the later
operand, so the cases with NaN are not expressible and are skipped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from simdbind.conformance.adapters import Unsupported, adapter


@adapter("torch", "eltwise")
def eltwise(case: Any, inputs: dict[str, Any]) -> np.ndarray:
    op = case.params["op"]
    arrays = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs["arrays"]]
    if op in ("max", "min") and any(bool(torch.isnan(a).any()) for a in arrays):
        raise Unsupported("NaN: torch.maximum/minimum propagate NaN, Simd's a > b ? a : b fold keeps the later "
                          "operand (spec 3.2)")
    if op == "sum":
        weights = [float(w) for w in np.asarray(inputs["weights"], np.float32)]
        result = arrays[0] * weights[0]
        for a, w in zip(arrays[1:], weights[1:]):
            result = torch.add(result, a, alpha=w)
    else:
        step = {"product": torch.mul, "max": torch.maximum, "min": torch.minimum}[op]
        result = step(arrays[0], arrays[1])
        for a in arrays[2:]:
            result = step(result, a)
    return result.numpy().astype(np.float32, copy=False)
