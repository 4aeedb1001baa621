"""Small ncnn networks for the ncnn peer, written as ncnn's param text and weight blob.

    graph = Graph()
    x = graph.input()
    y = graph.layer("Softmax", [x], {0: 1, 1: 1})
    (out,) = graph.run({x: array}, [y])

Blob names are generated; a blob that feeds several layers goes through a ``Split`` (ncnn's graph has one
consumer per blob). Weights are appended in load order: ``tagged`` arrays carry the 4-byte float32 tag that
ncnn's ``ModelBin.load(size, 0)`` reads (convolution and inner-product weights), the others are raw
(``load(size, 1)``: biases, PReLU slopes). The network runs with float32 storage and arithmetic (no fp16, bf16
or int8 paths, which would measure ncnn's precision policy instead of its kernels) on one thread. ncnn is imported
only when a network is loaded.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np

#: Winograd is left on: it is ncnn's default float32 path for 3x3 stride-1 convolutions (the convolution tolerance
#: already allows for Winograd transforms on exactly those shapes).
OPTIONS = {"num_threads": 1, "use_vulkan_compute": False, "use_fp16_storage": False, "use_fp16_packed": False,
           "use_fp16_arithmetic": False, "use_bf16_storage": False, "use_bf16_packed": False,
           "use_int8_inference": False}


#: ``run(feeds, outputs)``: the `outputs` blobs for one set of `feeds`, over one loaded network (Graph.runner).
Runner = Callable[[dict[str, np.ndarray], Sequence[str]], list[np.ndarray]]


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple, np.ndarray)):  # arrays: the key is written as -23300 - id by the caller
        return ",".join([str(len(v))] + [_value(x) for x in v])
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.9e}"
    return str(int(v))


class Graph:
    def __init__(self, **options: Any) -> None:
        """`options`: ncnn ``Option`` fields that differ from :data:`OPTIONS` for this network."""
        self.options = {**OPTIONS, **options}
        self.lines: list[str] = []
        self.weights: list[bytes] = []
        self.blobs = 0
        self.inputs: list[str] = []

    def _blob(self) -> str:
        self.blobs += 1
        return f"b{self.blobs}"

    def input(self) -> str:
        name = self._blob()
        self.lines.append(f"Input in{len(self.inputs)} 0 1 {name}")
        self.inputs.append(name)
        return name

    def layer(self, kind: str, bottoms: Sequence[str], params: dict[int, Any] | None = None,
              weights: Sequence[tuple[np.ndarray, bool]] = ()) -> str:
        """Add a layer of one top blob (see :meth:`layers`); returns that blob."""
        return self.layers(kind, bottoms, params, weights, tops=1)[0]

    def layers(self, kind: str, bottoms: Sequence[str], params: dict[int, Any] | None = None,
               weights: Sequence[tuple[np.ndarray, bool]] = (), *, tops: int) -> list[str]:
        """Add a layer; `params` maps ncnn param ids to values (lists become arrays); `weights` are
        (array, tagged) in the layer's load order. Returns its `tops` top blobs."""
        names = [self._blob() for _ in range(tops)]
        fields = []
        for key, value in (params or {}).items():
            is_array = isinstance(value, (list, tuple, np.ndarray))
            fields.append(f"{-23300 - key if is_array else key}={_value(value)}")
        self.lines.append(" ".join([kind, f"l{len(self.lines)}", str(len(bottoms)), str(tops), *bottoms, *names,
                                    *fields]))
        for array, tagged in weights:
            data = np.ascontiguousarray(array, np.float32).tobytes()
            self.weights.append((np.zeros(1, np.uint32).tobytes() if tagged else b"") + data)
        return names

    def split(self, blob: str, count: int) -> list[str]:
        return self.layers("Split", [blob], tops=count)

    def net(self) -> Any:
        import ncnn

        net = ncnn.Net()
        for name, value in self.options.items():
            setattr(net.opt, name, value)
        text = "\n".join(["7767517", f"{len(self.lines)} {self.blobs}", *self.lines]) + "\n"
        if net.load_param_mem(text) != 0:
            raise RuntimeError(f"ncnn rejected the network:\n{text}")
        net.load_model_mem(b"".join(self.weights) or b"\0")
        return net

    def run(self, feeds: dict[str, np.ndarray], outputs: Sequence[str]) -> list[np.ndarray]:
        """The `outputs` blobs for one set of `feeds` (blob -> float32 array of 1 to 4 dimensions, CHW order)."""
        return self.runner()(feeds, outputs)

    def runner(self) -> Runner:
        """A callable like :meth:`run` over one loaded network, for running several images through it."""
        import ncnn

        net = self.net()

        def run(feeds: dict[str, np.ndarray], outputs: Sequence[str]) -> list[np.ndarray]:
            recorded = getattr(_capture, "calls", None)
            if recorded is not None:
                recorded.append((extract, feeds, outputs))
            return extract(feeds, outputs)

        def extract(feeds: dict[str, np.ndarray], outputs: Sequence[str]) -> list[np.ndarray]:
            extractor = net.create_extractor()
            for blob, array in feeds.items():
                # ncnn.Mat(array) wraps the array's memory with no reference count, and a first layer that works
                # in place on it (UnaryOp, ReLU, Softmax, ...) kills the process (ncnn 1.0.20261020, docs/peers.md):
                # the clone is ncnn's own, counted memory.
                mat = ncnn.Mat(np.ascontiguousarray(array, np.float32)).clone()
                if extractor.input(blob, mat) != 0:
                    raise RuntimeError(f"ncnn rejected input {blob} of shape {np.shape(array)}")
            results = []
            for blob in outputs:
                status, mat = extractor.extract(blob)
                if status != 0:
                    raise RuntimeError(f"ncnn failed to compute {blob} (status {status})")
                results.append(np.array(mat, np.float32, copy=True))
            return results

        return run


def per_image(x: np.ndarray, layout: str, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """`fn` on each CHW image of `x` (3D, or 4D with a batch; NHWC transposed to CHW and back)."""
    images = x if x.ndim == 4 else x[None]
    if layout == "nhwc":
        images = images.transpose(0, 3, 1, 2)
    y = np.stack([fn(np.ascontiguousarray(image)) for image in images])
    if layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y if x.ndim == 4 else y[0])


#: While :func:`prepared` runs an adapter: the (network's run, feeds, outputs) of every extraction it makes.
_capture = threading.local()


def prepared(adapter: Callable[[Any, dict[str, Any]], Any], case: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
    """The prepared call of an adapter function (``prepare`` of the public API): the adapter runs once, recording
    the networks it loaded and the feeds it made (per image, in CHW order); the call extracts from them again and
    returns ncnn's outputs as they come (the adapter's conversions back are not repeated)."""
    _capture.calls = []
    try:
        adapter(case, inputs)
        calls: list[tuple[Any, dict[str, np.ndarray], Sequence[str]]] = _capture.calls
    finally:
        _capture.calls = None
    return lambda: [extract(feeds, outputs) for extract, feeds, outputs in calls]


def activation(graph: Graph, x: str, kind: str, params: Any) -> str:
    """Simd's activation `kind` on blob `x` (channels or rows on ncnn's outer axis), with ncnn's layer of
    the same function where there is one, else composed of BinaryOp (and, for mish's threshold, Threshold) layers
    as the formula reads."""
    p = [] if params is None else [float(v) for v in np.asarray(params, np.float32).ravel()]
    if kind == "identity":
        return x
    if kind == "relu":
        return graph.layer("ReLU", [x])
    if kind == "leaky_relu":
        return graph.layer("ReLU", [x], {0: p[0]})
    if kind == "restrict_range":  # min(max(lower, x), upper): upper when lower > upper (Clip gives lower below it)
        return _scalar(graph, _scalar(graph, x, "max", p[0]), "min", p[1])
    if kind == "prelu":
        return graph.layer("PReLU", [x], {0: len(p)}, [(np.asarray(p, np.float32), False)])
    if kind == "elu":
        return graph.layer("ELU", [x], {0: p[0]})
    if kind == "hard_sigmoid":  # clamp(alpha * x + beta, 0, 1)
        return graph.layer("HardSigmoid", [x], {0: p[0], 1: p[1]})
    if kind == "gelu":  # the erfc form, not the tanh approximation
        return graph.layer("GELU", [x], {0: 0})
    if kind == "swish":  # x * sigmoid(slope * x); ncnn's Swish is slope 1
        if p[0] == 1.0:
            return graph.layer("Swish", [x])
        a, b = graph.split(x, 2)
        gate = graph.layer("Sigmoid", [_scalar(graph, a, "mul", p[0])])
        return graph.layer("BinaryOp", [b, gate], {0: 2})
    if kind == "hswish":  # max(min(x, shift) + shift, 0) * scale * x
        a, b = graph.split(x, 2)
        gate = _scalar(graph, _scalar(graph, _scalar(graph, a, "min", p[0]), "add", p[0]), "max", 0.0)
        return graph.layer("BinaryOp", [_scalar(graph, gate, "mul", p[1]), b], {0: 2})
    if kind == "mish":  # x above the threshold, else x * tanh(softplus(x)): mish + (x > t) * (x - mish)
        a, b, c = graph.split(x, 3)
        m1, m2 = graph.split(graph.layer("Mish", [a]), 2)
        above = graph.layer("Threshold", [b], {0: p[0]})
        step = graph.layer("BinaryOp", [above, graph.layer("BinaryOp", [c, m1], {0: 1})], {0: 2})
        return graph.layer("BinaryOp", [m2, step], {0: 0})
    raise ValueError(f"no ncnn mapping for activation {kind!r}")


_BINARY = {"add": 0, "mul": 2, "max": 4, "min": 5}


def _scalar(graph: Graph, x: str, op: str, value: float) -> str:
    return graph.layer("BinaryOp", [x], {0: _BINARY[op], 1: 1, 2: float(value)})
