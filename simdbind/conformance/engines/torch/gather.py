"""PyTorch adapter of GatherElements: ``torch.gather(data, axis, index)`` with negative indices wrapped
(``index + n`` where negative: ONNX semantics, torch rejects them); bf16 data is gathered as int16 bits, so every
element is copied bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from simdbind.conformance import Case
from simdbind.conformance.engines.torch import as_numpy, implementation


_BITS = {4: (np.int32, np.uint32), 2: (np.int16, np.uint16), 1: (np.uint8, np.uint8)}


def gather_operands(case: Case, inputs: dict[str, Any]) -> tuple[int, torch.Tensor, list[torch.Tensor]]:
    """(axis, the indices made non-negative, each data array as a tensor of same-size integers): torch.gather
    copies those bits, so every dtype of the case goes through it exactly."""
    axis = case.params["axis"]
    indices = np.asarray(inputs["indices"]).astype(np.int64)
    n = np.asarray(inputs["data"][0]).shape[axis]
    index = torch.from_numpy(np.where(indices < 0, indices + n, indices))
    data = [np.ascontiguousarray(d) for d in inputs["data"]]
    return axis, index, [torch.from_numpy(d.view(_BITS[d.dtype.itemsize][0])) for d in data]


@implementation.function("gather_elements")
def gather_elements(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
    axis, index, data = gather_operands(case, inputs)
    return tuple(as_numpy(torch.gather(bits, axis, index)).view(_BITS[bits.element_size()][1]) for bits in data)
