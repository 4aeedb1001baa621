"""ONNX Runtime adapter of GatherElements: ``GatherElements(axis)``, negative indices native; bf16 data as
uint16 bits, so elements are copied bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case
from simdbind.conformance.engines.onnxruntime import implementation
from simdbind.conformance.engines.onnxruntime.model import model, node, session


@implementation.function("gather_elements")
def gather_elements(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
    axis = case.params["axis"]
    indices = np.ascontiguousarray(inputs["indices"])
    results = []
    for data in inputs["data"]:
        data = np.ascontiguousarray(data)
        bits = data.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[data.dtype.itemsize])
        key = ("gather_elements", bits.dtype.str, indices.dtype.str, bits.ndim, axis)
        build = lambda: model([node("GatherElements", ["x", "i"], ["y"], axis=axis)],  # noqa: E731
                              [("x", bits.dtype, bits.ndim), ("i", indices.dtype, indices.ndim)],
                              [("y", bits.dtype, bits.ndim)])
        (y,) = session(key, build).run(None, {"x": bits, "i": indices})
        results.append(y)
    return tuple(results)
