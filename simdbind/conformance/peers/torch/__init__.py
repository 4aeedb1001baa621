"""PyTorch as a conformance peer. One module per simdbind family; the mappings, and what torch cannot express, are
in each module's docstring."""

from simdbind.conformance import PythonImplementation

FAMILIES = ("elementwise", "pooling", "gather", "inner_product", "convolution")


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)  # small cases; shared CPUs; deterministic reductions


implementation = PythonImplementation("torch", requires=("torch",), setup=_one_thread,
                                      modules=tuple(f"{__name__}.{module}" for module in FAMILIES + ("prepare",)))
