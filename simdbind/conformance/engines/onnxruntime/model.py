"""Small ONNX models for the onnxruntime adapters: build once per key, keep the session for the process.

    from simdbind.conformance.engines.onnxruntime.model import node, session

    sess = session(("eltwise", "max", 3), lambda: model(
        [node("Max", ["x0", "x1", "x2"], ["y"])], inputs=[("x0", np.float32), ...], outputs=[("y", np.float32)]))
    (y,) = sess.run(None, {"x0": a, ...})

Dimensions are symbolic ("d0", "d1", ...) unless given, so one session serves every shape of a case grid.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

OPSET = 17

_sessions: dict[Any, Any] = {}


#: A graph input or output: (name, dtype[, shape or rank]); rank 1 symbolic when neither is given.
ValueSpec = tuple[str, DTypeLike] | tuple[str, DTypeLike, int | Sequence[int | str]]


def node(op_type: str, inputs: Sequence[str], outputs: Sequence[str], **attributes: Any) -> Any:
    from onnx import helper

    return helper.make_node(op_type, list(inputs), list(outputs), **attributes)


def _value_info(name: str, dtype: DTypeLike, shape: Sequence[int | str] | None, rank: int) -> Any:
    from onnx import helper

    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    dims = list(shape) if shape is not None else [f"{name}_d{i}" for i in range(rank)]
    return helper.make_tensor_value_info(name, element, dims)


def model(nodes: Sequence[Any], inputs: Sequence[ValueSpec], outputs: Sequence[ValueSpec],
          initializers: dict[str, ArrayLike] | None = None, opset: int = OPSET) -> bytes:
    """A serialized model. `inputs`/`outputs`: (name, dtype[, shape or rank]); rank 1 symbolic by default."""
    from onnx import checker, helper, numpy_helper

    def infos(items: Sequence[ValueSpec]) -> list[Any]:
        result = []
        for item in items:
            name, dtype = item[0], item[1]
            spec = item[2] if len(item) > 2 else 1
            shape = None if isinstance(spec, int) else spec
            result.append(_value_info(name, dtype, shape, spec if isinstance(spec, int) else len(spec)))
        return result

    graph = helper.make_graph(list(nodes), "simdbind_case", infos(inputs), infos(outputs),
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx_model.ir_version = min(onnx_model.ir_version, 8)
    checker.check_model(onnx_model)
    serialized: bytes = onnx_model.SerializeToString()
    return serialized


def session(key: Any, build: Callable[[], bytes]) -> Any:
    """The InferenceSession for `key`, building the model with `build()` the first time (one thread, CPU)."""
    sess = _sessions.get(key)
    if sess is None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        sess = ort.InferenceSession(build(), options, providers=["CPUExecutionProvider"])
        _sessions[key] = sess
    return sess
