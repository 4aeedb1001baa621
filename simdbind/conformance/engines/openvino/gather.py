"""OpenVINO peer of GatherElements: ``GatherElements(data, indices, axis)`` (opset 6; negative indices count from
the end, as the contract says). Elements are moved as integer bit patterns of their width (float32 as int32, bf16
as int16, uint8 as uint8), so NaN payloads and bf16 values are compared bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
from openvino import opset15 as ops

from simdbind.conformance import Case
from simdbind.conformance.engines.openvino import implementation
from simdbind.conformance.engines.openvino._graph import run

_BITS = {4: np.int32, 2: np.int16, 1: np.uint8}
_OUT = {4: np.uint32, 2: np.uint16, 1: np.uint8}


@implementation.function("gather_elements")
def gather_elements(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
    axis = case.params["axis"]
    indices = np.asarray(inputs["indices"])
    results = []
    for data in inputs["data"]:
        data = np.ascontiguousarray(data)
        bits = data.view(_BITS[data.dtype.itemsize])
        (y,) = run(("gather_elements", axis), lambda d, i: [ops.gather_elements(d, i, axis)], bits, indices)
        results.append(y.view(_OUT[data.dtype.itemsize]))
    return tuple(results)
