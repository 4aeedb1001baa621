"""Helpers for family modules: optional peers (PyTorch, ONNX Runtime) without making them dependencies.

```python
from simdbind.bench._peers import torch_module, ort_callable
torch = torch_module()                      # None when PyTorch is not installed
peers = {"numpy": lambda: np.add(x, y, out=o)}
if torch is not None:
    tx, ty, to = (torch.from_numpy(a) for a in (x, y, o))     # share memory with the NumPy arrays
    peers["torch"] = lambda: torch.add(tx, ty, out=to)
if ort_available():
    peers["onnxruntime"] = lambda: ort_callable("Add", [x, y], o)   # a factory: built at each thread count
```
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

_ONNX_TYPES = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.int32): 6,
               np.dtype(np.int64): 7}


def torch_module() -> Any:
    """The ``torch`` module, or None when it is not installed."""
    try:
        import torch
    except Exception:  # noqa: BLE001 - ImportError, or a broken install
        return None
    return torch


def ort_available() -> bool:
    """True when onnxruntime and onnx (used to build the one-node models) are both importable."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


def ort_callable(op_type: str, inputs: Sequence[np.ndarray], output: np.ndarray, *,
                 initializers: dict[str, np.ndarray] | None = None, opset: int = 17,
                 **attributes: Any) -> Callable[[], Any]:
    """A zero-arg callable running a one-node ONNX model ``output = op_type(inputs..., **attributes)`` with ONNX
    Runtime's CPU provider, inputs and output bound in place (no copies per call). Its session uses the current
    benchmark thread count (:func:`simdbind.bench.harness.current_threads`), so call this inside the peer entry.

    `initializers` are constant inputs (e.g. weights) named after the data inputs ``x0, x1, ...``."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from simdbind.bench.harness import current_threads

    names = [f"x{i}" for i in range(len(inputs))]
    constants = dict(initializers or {})
    node = helper.make_node(op_type, names + list(constants), ["y"], **attributes)
    graph = helper.make_graph(
        [node], op_type,
        [helper.make_tensor_value_info(n, _ONNX_TYPES[a.dtype], list(a.shape)) for n, a in zip(names, inputs)],
        [helper.make_tensor_value_info("y", _ONNX_TYPES[output.dtype], list(output.shape))],
        initializer=[numpy_helper.from_array(a, name) for name, a in constants.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = current_threads()
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    for name, array in zip(names, inputs):
        binding.bind_cpu_input(name, np.ascontiguousarray(array))
    binding.bind_output("y", "cpu", 0, output.dtype, list(output.shape), output.ctypes.data)
    run = session.run_with_iobinding

    def call() -> None:
        run(binding)

    call.keep = (session, inputs, output)  # type: ignore[attr-defined]  # alive as long as the callable
    return call
