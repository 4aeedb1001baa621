"""Small OpenVINO models for the openvino peer: built from opset ops, compiled once per key on "CPU", and run.

    y, = run(("softmax",), lambda x: [ops.softmax(x, 1)], x)

``run`` makes one ``Parameter`` per feed (static shape and element type of that feed), so the key only names what
the feeds' shapes do not. Every model is compiled for float32 inference on one thread: OpenVINO's CPU plugin
otherwise infers in bf16 on CPUs with AVX-512 BF16 (its INFERENCE_PRECISION_HINT default), which would measure
the plugin's precision policy instead of its kernels. openvino is imported only when a model is built.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:
    import openvino as ov

CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
#: Compiled models kept per process (a ci run compiles a few hundred; each holds its own buffers).
CACHE_SIZE = 128

_core: ov.Core | None = None
_requests: OrderedDict[Any, Any] = OrderedDict()


def _request(key: Any, build: Callable[..., Sequence[Any]], feeds: Sequence[np.ndarray]) -> Any:
    import openvino as ov
    from openvino import opset15 as ops

    global _core
    request = _requests.get(key)
    if request is not None:
        _requests.move_to_end(key)
        return request
    if _core is None:
        _core = ov.Core()
    parameters = [ops.parameter(list(f.shape), f.dtype, name=f"x{i}") for i, f in enumerate(feeds)]
    model = ov.Model([ops.result(out) for out in build(*parameters)], parameters, "simdbind_case")
    request = _core.compile_model(model, "CPU", CONFIG).create_infer_request()
    _requests[key] = request
    if len(_requests) > CACHE_SIZE:
        _requests.popitem(last=False)
    return request


#: While :func:`prepared` runs an adapter: the (request, feeds) of every inference it makes.
_capture = threading.local()


def run(key: Any, build: Callable[..., Sequence[Any]], *feeds: np.ndarray) -> list[np.ndarray]:
    """The outputs of the model `build(*parameters)` (a list of nodes) on `feeds`, as fresh NumPy arrays."""
    feeds = tuple(np.ascontiguousarray(f) for f in feeds)
    full_key = (key, tuple((f.shape, f.dtype.str) for f in feeds))
    request = _request(full_key, build, feeds)
    recorded = getattr(_capture, "calls", None)
    if recorded is not None:
        recorded.append((request, list(feeds)))
    request.infer(list(feeds))
    return [np.array(request.get_output_tensor(i).data, copy=True) for i in range(len(request.model_outputs))]


def prepared(adapter: Callable[[Any, dict[str, Any]], Any], case: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
    """The prepared call of an adapter function (``prepare`` of the public API): the adapter runs once, recording
    the compiled models and the feeds it made (transposed, converted); the call infers on them again and returns
    the models' outputs, in OpenVINO's layout (the adapter's conversions back are not repeated)."""
    _capture.calls = []
    try:
        adapter(case, inputs)
        calls: list[tuple[Any, list[np.ndarray]]] = _capture.calls
    finally:
        _capture.calls = None

    def call() -> list[Any]:
        for request, feeds in calls:
            request.infer(feeds)
        return [request.get_output_tensor(0).data for request, _ in calls]

    return call


def constant(values: Any, dtype: Any = np.float32) -> Any:
    from openvino import opset15 as ops

    return ops.constant(np.asarray(values, dtype))


def activation(x: Any, kind: str, params: Any, channel_axis: int, rank: int) -> Any:
    """Simd's activation `kind` (C-order `params`) on node `x`, with OpenVINO's op of the same function
    where there is one (Relu, PRelu, Elu, HardSigmoid, Swish, Gelu(erf), Mish, HSwish), else composed from
    Minimum/Maximum/Multiply/Add/Select exactly as the formula reads."""
    from openvino import opset15 as ops

    p = [] if params is None else [float(v) for v in np.asarray(params, np.float32).ravel()]
    if kind == "identity":
        return x
    if kind == "relu":
        return ops.relu(x)
    if kind == "leaky_relu":
        return ops.prelu(x, constant([p[0]]))
    if kind == "restrict_range":  # min(max(lower, x), upper): upper when lower > upper (Clamp refuses that)
        return ops.minimum(ops.maximum(x, constant(p[0])), constant(p[1]))
    if kind == "prelu":
        shape = [1] * rank
        shape[channel_axis] = len(p)
        return ops.prelu(x, constant(np.reshape(p, shape)))
    if kind == "elu":
        return ops.elu(x, p[0])
    if kind == "hard_sigmoid":  # max(0, min(1, alpha * x + beta))
        return ops.hard_sigmoid(x, constant(p[0]), constant(p[1]))
    if kind == "swish":  # x * sigmoid(beta * x)
        return ops.swish(x, constant(p[0]))
    if kind == "gelu":
        return ops.gelu(x, "erf")
    if kind == "mish":  # x above the threshold, else x * tanh(softplus(x))
        return ops.select(ops.greater(x, constant(p[0])), x, ops.mish(x))
    if kind == "hswish":  # max(min(x, shift) + shift, 0) * scale * x; OpenVINO's HSwish is (3, 1/6)
        if np.isclose(p[0], 3.0) and np.isclose(p[1], 1 / 6):
            return ops.hswish(x)
        gate = ops.maximum(ops.add(ops.minimum(x, constant(p[0])), constant(p[0])), constant(0.0))
        return ops.multiply(ops.multiply(gate, constant(p[1])), x)
    raise ValueError(f"no OpenVINO mapping for activation {kind!r}")


def params_key(params: Any) -> Any:
    return None if params is None else tuple(np.asarray(params, np.float32).ravel().tolist())
