"""The other engines' adapters of the gather family (gather_elements), one class per engine: :class:`Torch`,
:class:`OnnxRuntime`, :class:`OpenVINO` (ncnn has no gather). Each class's docstring gives its mapping; each adapter
is registered on its engine's implementation by :func:`~simdbind.conformance.engines.adapter` (prepared calls by
:func:`~simdbind.conformance.engines.preparer`) and imports its engine when it runs, so this module imports where no
engine is installed. The engines' shared plumbing is in ``simdbind/conformance/engines/<engine>/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from simdbind.conformance import Case
from simdbind.conformance.engines import adapter, preparer
from simdbind.conformance.engines.onnxruntime.model import model, node, session
from simdbind.conformance.engines.openvino._graph import run as openvino_run
from simdbind.conformance.engines.torch import as_numpy

if TYPE_CHECKING:
    import torch


# -- PyTorch ----------------------------------------------------------------------------------------------------------
class Torch:
    """PyTorch adapter of GatherElements: ``torch.gather(data, axis, index)`` with negative indices wrapped
    (``index + n`` where negative: ONNX semantics, torch rejects them); bf16 data is gathered as int16 bits, so every
    element is copied bit for bit. Prepared call (what ``simdbind bench`` times): the operands and the outputs are
    made once, and each call is ``torch.gather(..., out=)`` alone.
    """

    _BITS = {4: (np.int32, np.uint32), 2: (np.int16, np.uint16), 1: (np.uint8, np.uint8)}

    @staticmethod
    def gather_operands(case: Case, inputs: dict[str, Any]) -> tuple[int, torch.Tensor, list[torch.Tensor]]:
        """(axis, the indices made non-negative, each data array as a tensor of same-size integers): torch.gather
        copies those bits, so every dtype of the case goes through it exactly."""
        import torch

        axis = case.params["axis"]
        indices = np.asarray(inputs["indices"]).astype(np.int64)
        n = np.asarray(inputs["data"][0]).shape[axis]
        index = torch.from_numpy(np.where(indices < 0, indices + n, indices))
        data = [np.ascontiguousarray(d) for d in inputs["data"]]
        return axis, index, [torch.from_numpy(d.view(Torch._BITS[d.dtype.itemsize][0])) for d in data]

    @staticmethod
    @adapter("torch", "gather_elements")
    def gather_elements(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
        import torch

        axis, index, data = Torch.gather_operands(case, inputs)
        return tuple(as_numpy(torch.gather(bits, axis, index)).view(Torch._BITS[bits.element_size()][1])
                     for bits in data)

    @staticmethod
    @preparer("torch", "gather_elements")
    def prepare_gather_elements(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch

        axis, index, data = Torch.gather_operands(case, inputs)
        pairs = [(bits, torch.empty(index.shape, dtype=bits.dtype)) for bits in data]
        return lambda: tuple(torch.gather(d, axis, index, out=out) for d, out in pairs)


# -- ONNX Runtime -----------------------------------------------------------------------------------------------------
class OnnxRuntime:
    """ONNX Runtime adapter of GatherElements: ``GatherElements(axis)``, negative indices native; bf16 data as
    uint16 bits, so elements are copied bit for bit. No prepared call of its own: ``run`` is one ``session.run`` per
    data array on a cached session, which the benchmark rows time.
    """

    @staticmethod
    @adapter("onnxruntime", "gather_elements")
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


# -- OpenVINO ---------------------------------------------------------------------------------------------------------
class OpenVINO:
    """OpenVINO adapter of GatherElements: ``GatherElements(data, indices, axis)`` (opset 6; negative indices count
    from the end, as the contract says). Elements are moved as integer bit patterns of their width (float32 as int32,
    bf16 as int16, uint8 as uint8), so NaN payloads and bf16 values are compared bit for bit. Prepared call: made by
    ``engines/openvino/prepare.py``.
    """

    _BITS = {4: np.int32, 2: np.int16, 1: np.uint8}
    _OUT = {4: np.uint32, 2: np.uint16, 1: np.uint8}

    @staticmethod
    @adapter("openvino", "gather_elements")
    def gather_elements(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
        from openvino import opset15 as ops

        axis = case.params["axis"]
        indices = np.asarray(inputs["indices"])
        results = []
        for data in inputs["data"]:
            data = np.ascontiguousarray(data)
            bits = data.view(OpenVINO._BITS[data.dtype.itemsize])
            (y,) = openvino_run(("gather_elements", axis), lambda d, i: [ops.gather_elements(d, i, axis)], bits,
                                indices)
            results.append(y.view(OpenVINO._OUT[data.dtype.itemsize]))
        return tuple(results)
