"""PyTorch as a conformance peer. Its adapters (one module per family it covers); the mappings, and what torch cannot express, are
in each module's docstring."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import adapter_modules

if TYPE_CHECKING:
    import torch



def as_numpy(tensor: torch.Tensor) -> np.ndarray:
    """The NumPy array that shares the tensor's memory, typed as one also where torch is absent (CI's mypy run)."""
    array: np.ndarray = tensor.numpy()
    return array


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)  # small cases; shared CPUs; deterministic reductions


implementation = PythonImplementation("torch", requires=("torch",), setup=_one_thread,
                                      modules=adapter_modules(__name__, __file__))
