"""PyTorch adapter of GatherElements: ``torch.gather(data, axis, index)`` with negative indices wrapped
(``index + n`` where negative: ONNX semantics, torch rejects them); bf16 data is gathered as int16 bits, so every
element is copied bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from simdbind.conformance.peers.torch import as_numpy, implementation


@implementation.function("gather_elements")
def gather_elements(case: Any, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
    axis = case.params["axis"]
    indices = np.asarray(inputs["indices"]).astype(np.int64)
    n = np.asarray(inputs["data"][0]).shape[axis]
    index = torch.from_numpy(np.where(indices < 0, indices + n, indices))
    results = []
    for data in inputs["data"]:
        data = np.ascontiguousarray(data)
        bits = data.view({4: np.int32, 2: np.int16, 1: np.uint8}[data.dtype.itemsize])
        y = as_numpy(torch.gather(torch.from_numpy(bits), axis, index))
        results.append(y.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[data.dtype.itemsize]))
    return tuple(results)
