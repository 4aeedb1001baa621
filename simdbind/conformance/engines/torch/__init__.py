"""PyTorch as a conformance peer: its implementation object and the helpers its adapters share. The adapters are in
each family's ``families/<family>/peers.py`` (class ``Torch``), with the mappings and what torch cannot express in
its docstring; the implementation collects them by importing those modules
(:func:`~simdbind.conformance.engines.peer_modules`). torch is imported only where an adapter runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import peer_modules

if TYPE_CHECKING:
    import torch


def as_numpy(tensor: torch.Tensor) -> np.ndarray:
    """The NumPy array that shares the tensor's memory, typed as one also where torch is absent (CI's mypy run)."""
    array: np.ndarray = tensor.numpy()
    return array


def tensor(x: np.ndarray, layout: str = "nchw") -> torch.Tensor:
    """A tensor of `x` (NCHW order; an NHWC array becomes a channels_last NCHW view of the same memory), as the
    prepared calls hold their inputs."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(x))
    if layout == "nhwc":
        t = t.permute(0, 3, 1, 2) if t.dim() == 4 else t.permute(2, 0, 1)
    return t


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)  # small cases; shared CPUs; deterministic reductions


implementation = PythonImplementation("torch", requires=("torch",), setup=_one_thread, modules=peer_modules())
