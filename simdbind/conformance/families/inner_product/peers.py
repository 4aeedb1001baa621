"""The other engines' adapters of the inner-product family (inner_product_32f, inner_product_layer,
inner_product_8i), one class per engine: :class:`Torch`, :class:`OnnxRuntime`, :class:`OpenVINO`, :class:`Ncnn`.
Each class's docstring gives its mappings and what the engine cannot express; each adapter is registered on its
engine's implementation by :func:`~simdbind.conformance.engines.adapter` (prepared calls by
:func:`~simdbind.conformance.engines.preparer`) and imports its engine when it runs, so this module imports where no
engine is installed. The engines' shared plumbing, the activations included, is in
``simdbind/conformance/engines/<engine>/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines import adapter, fallback, preparer
from simdbind.conformance.engines.ncnn._graph import Graph
from simdbind.conformance.engines.ncnn._graph import activation as ncnn_activation
from simdbind.conformance.engines.onnxruntime.activation import activation_nodes
from simdbind.conformance.engines.onnxruntime.model import model, node, session
from simdbind.conformance.engines.openvino._graph import activation as openvino_activation
from simdbind.conformance.engines.openvino._graph import params_key
from simdbind.conformance.engines.openvino._graph import run as openvino_run
from simdbind.conformance.engines.torch import as_numpy
from simdbind.conformance.engines.torch.activation import activate

if TYPE_CHECKING:
    import torch

#: float32 holds every integer below this exactly (OpenVINO's and ncnn's int8 products run in float32).
EXACT_INTEGERS = 2 ** 24


# -- PyTorch ----------------------------------------------------------------------------------------------------------
class Torch:
    """PyTorch adapters of the inner-product family.

    * inner_product_32f: ``act(F.linear(A, B if transB else B.T, bias))`` for each call (constant B: the first),
      activations with torch's own functions (``engines/torch/activation.py``);
    * inner_product_layer: ``F.linear(x, weight, bias)``;
    * inner_product_8i: the exact int32 product ``src @ weight.T`` (int64 matmul, then int32). torch has no pairwise
      int16 saturation, so the saturating compatibilities are only run on data where no pair can saturate.

    Prepared calls (what ``simdbind bench`` times): the tensors are made once and each call is ``F.linear`` (and the
    activation) alone; several calls of a case run the adapter.
    """

    @staticmethod
    def _t(x: np.ndarray) -> torch.Tensor:
        import torch

        return torch.from_numpy(np.ascontiguousarray(x, np.float32))

    @staticmethod
    @adapter("torch", "inner_product_32f")
    def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
        import torch.nn.functional as F

        p = case.params
        bias = None if inputs["bias"] is None else Torch._t(inputs["bias"])
        results = []
        for call in range(p.get("calls", 1)):
            B = Torch._t(inputs["B"][0] if p["const_b"] else inputs["B"][call])
            weight = B if p["trans_b"] else B.T.contiguous()
            y = F.linear(Torch._t(inputs["A"][call]), weight, bias)
            results.append(as_numpy(activate(y, p["activation"], inputs["params"], channel_dim=1)))
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    @adapter("torch", "inner_product_layer")
    def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch.nn.functional as F

        bias = None if inputs["bias"] is None else Torch._t(inputs["bias"])
        return as_numpy(F.linear(Torch._t(inputs["x"]), Torch._t(inputs["weight"]), bias))

    @staticmethod
    @adapter("torch", "inner_product_8i")
    def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        import torch

        p = case.params
        if p["compatibility"] != "precise" and p.get("data") != "narrowed":
            raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): torch has no such arithmetic")
        src = torch.from_numpy(np.asarray(inputs["src"]).astype(np.int64))
        weight = torch.from_numpy(np.asarray(inputs["weight"]).astype(np.int64))
        return as_numpy(src @ weight.T).astype(np.int32)

    @staticmethod
    @preparer("torch", "inner_product_32f")
    def prepare_inner_product_32f(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch
        import torch.nn.functional as F

        p = case.params
        if p.get("calls", 1) != 1:
            return fallback("torch", case, inputs)
        a = torch.from_numpy(np.ascontiguousarray(inputs["A"][0], np.float32))
        b = torch.from_numpy(np.ascontiguousarray(inputs["B"][0], np.float32))
        weight = b if p["trans_b"] else b.T.contiguous()
        bias = None if inputs["bias"] is None else torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
        kind, params = p["activation"], inputs["params"]
        if kind == "identity":
            return lambda: F.linear(a, weight, bias)
        return lambda: activate(F.linear(a, weight, bias), kind, params, channel_dim=1)

    @staticmethod
    @preparer("torch", "inner_product_layer")
    def prepare_inner_product_layer(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        import torch
        import torch.nn.functional as F

        x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
        weight = torch.from_numpy(np.ascontiguousarray(inputs["weight"], np.float32))
        bias = None if inputs["bias"] is None else torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
        return lambda: F.linear(x, weight, bias)


# -- ONNX Runtime -----------------------------------------------------------------------------------------------------
class OnnxRuntime:
    """ONNX Runtime adapters of the inner-product family, small models.

    * inner_product_32f / inner_product_layer: ``Gemm(A, B, bias, transB)`` followed by the activation's operator
      where ONNX has the same function (Relu, LeakyRelu, Clip for restrict_range, PRelu, Elu, HardSigmoid(alpha,
      beta), HardSwish for (3, 1/6), Mish for threshold >= 20, Gelu, Sigmoid-gated Mul for swish); the others are
      skipped;
    * inner_product_8i: ``MatMulInteger(src, (weight + 128)^T, b_zero_point=128)``: uint8 x uint8 with a zero point
      is exact, while ONNX Runtime's uint8 x int8 kernel saturates int16 pair sums on AVX2; the saturating
      compatibilities only on data where no pair can saturate.

    Prepared call of inner_product_8i (what ``simdbind bench`` times): the session is built with the weights as its
    initializer and the feeds made once, and each call is ``session.run`` alone. The other functions' ``run`` is one
    ``session.run`` on a cached session, which their benchmark rows time.
    """

    @staticmethod
    def _gemm(key: Any, a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, trans_b: bool, kind: str,
              params: Any) -> np.ndarray:
        n = b.shape[0] if trans_b else b.shape[1]
        act, initializers = activation_nodes(kind, params, n, 2, 1)
        inputs = [("a", np.float32, 2), ("b", np.float32, 2)] + ([("c", np.float32, 1)] if bias is not None else [])
        build = lambda: model(  # noqa: E731
            [node("Gemm", [i[0] for i in inputs], ["pre"], transB=int(trans_b))] + act,
            inputs, [("y", np.float32, 2)], initializers=initializers, opset=20)
        feeds = {"a": np.ascontiguousarray(a, np.float32), "b": np.ascontiguousarray(b, np.float32)}
        if bias is not None:
            feeds["c"] = np.ascontiguousarray(bias, np.float32)
        y: np.ndarray
        (y,) = session(key, build).run(None, feeds)
        return y

    @staticmethod
    @adapter("onnxruntime", "inner_product_32f")
    def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
        p = case.params
        results = []
        key_params = None if inputs["params"] is None else tuple(np.asarray(inputs["params"]).ravel().tolist())
        for call in range(p.get("calls", 1)):
            b = inputs["B"][0] if p["const_b"] else inputs["B"][call]
            key = ("ip32f", p["trans_b"], inputs["bias"] is not None, p["activation"], key_params)
            results.append(OnnxRuntime._gemm(key, inputs["A"][call], b, inputs["bias"], p["trans_b"],
                                             p["activation"], inputs["params"]))
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    @adapter("onnxruntime", "inner_product_layer")
    def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        x = np.asarray(inputs["x"], np.float32)
        rows = x.reshape(-1, x.shape[-1])
        y = OnnxRuntime._gemm(("iplf", inputs["bias"] is not None), rows, inputs["weight"], inputs["bias"], True,
                              "identity", None)
        return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))

    @staticmethod
    @adapter("onnxruntime", "inner_product_8i")
    def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        if p["compatibility"] != "precise" and p.get("data") != "narrowed":
            raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): MatMulInteger accumulates exactly")
        # uint8 x int8 would run ONNX Runtime's u8s8 kernel, which on AVX2 saturates adjacent int16 pair sums (found
        # by this adapter); the same product as uint8 x uint8 with weights + 128 and b_zero_point 128 is exact.
        build = lambda: model([node("MatMulInteger", ["a", "b", "", "zero"], ["y"])],  # noqa: E731
                              [("a", np.uint8, 2), ("b", np.uint8, 2)], [("y", np.int32, 2)],
                              initializers={"zero": np.uint8(128)})
        shifted = (np.asarray(inputs["weight"]).astype(np.int16) + 128).astype(np.uint8)
        y: np.ndarray
        (y,) = session(("ip8i",), build).run(None, {"a": np.ascontiguousarray(inputs["src"], np.uint8),
                                                    "b": np.ascontiguousarray(shifted.T)})
        return y

    @staticmethod
    @preparer("onnxruntime", "inner_product_8i")
    def prepare_inner_product_8i(case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        p = case.params
        if p["compatibility"] != "precise" and p.get("data") != "narrowed":
            return fallback("onnxruntime", case, inputs)  # raises the adapter's Unsupported
        # The weights are an initializer, constant as an InnerProduct8i context's are, so that ONNX Runtime packs
        # them once when the session is made (as a graph input they were packed on every run: 4x the M = 1 call's
        # time).
        shifted = np.ascontiguousarray((np.asarray(inputs["weight"]).astype(np.int16) + 128).astype(np.uint8).T)
        build = lambda: model([node("MatMulInteger", ["a", "b", "", "zero"], ["y"])],  # noqa: E731
                              [("a", np.uint8, 2)], [("y", np.int32, 2)],
                              initializers={"b": shifted, "zero": np.uint8(128)})
        feeds = {"a": np.ascontiguousarray(inputs["src"], np.uint8)}
        run = session(("ip8i-prepared", case.descriptor, hash(shifted.tobytes())), build).run
        return lambda: run(None, feeds)[0]


# -- OpenVINO ---------------------------------------------------------------------------------------------------------
class OpenVINO:
    """OpenVINO adapters of the inner-product family.

    * inner_product_32f: ``MatMul(A, B, transpose_b)`` + bias (``Add``), then the activation
      (``engines/openvino/_graph.activation``: OpenVINO's op of the same function, or the formula composed of its
      ops); a constant B is the first call's B.
    * inner_product_layer: ``MatMul(x, weight, transpose_b=True)`` + bias.
    * inner_product_8i: ``MatMul`` on int32 tensors (uint8 source and int8 weights widened exactly). The CPU plugin
      computes it in float32 (K = 6912 products of 255 and 127 give 223842368, not 223845120), which is exact while
      every partial sum is an integer below 2^24: K * 255 * 128 < 2^24, K <= 513; larger K is skipped. OpenVINO has
      no pairwise int16 saturation, so the saturating compatibilities (8iOverflow, 8iNarrowed) only run on data where
      no pair can saturate.

    Prepared calls: every adapter's, made by ``engines/openvino/prepare.py``.
    """

    @staticmethod
    def _gemm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None, trans_b: bool, kind: str, params: Any
              ) -> np.ndarray:
        from openvino import opset15 as ops

        def build(x: Any, w: Any, *rest: Any) -> list[Any]:
            y = ops.matmul(x, w, False, trans_b)
            if rest:
                y = ops.add(y, rest[0])
            return [openvino_activation(y, kind, params, 1, 2)]

        feeds = [np.asarray(a, np.float32), np.asarray(b, np.float32)]
        if bias is not None:
            feeds.append(np.asarray(bias, np.float32))
        return openvino_run(("gemm", trans_b, kind, params_key(params)), build, *feeds)[0]

    @staticmethod
    @adapter("openvino", "inner_product_32f")
    def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
        p = case.params
        results = [OpenVINO._gemm(inputs["A"][call], inputs["B"][0 if p["const_b"] else call], inputs["bias"],
                                  p["trans_b"], p["activation"], inputs["params"]) for call in range(p.get("calls", 1))]
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    @adapter("openvino", "inner_product_layer")
    def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        x = np.asarray(inputs["x"], np.float32)
        rows = x.reshape(-1, x.shape[-1])
        y = OpenVINO._gemm(rows, inputs["weight"], inputs["bias"], True, "identity", None)
        return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))

    @staticmethod
    @adapter("openvino", "inner_product_8i")
    def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        from openvino import opset15 as ops

        p = case.params
        if p["compatibility"] != "precise" and p.get("data") != "narrowed":
            raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): OpenVINO has no such arithmetic")
        if p["K"] * 255 * 128 >= EXACT_INTEGERS:
            raise Unsupported(f"K = {p['K']}: OpenVINO's CPU plugin computes an int32 MatMul in float32, exact on "
                              "these integers only for K <= 513")
        src = np.asarray(inputs["src"]).astype(np.int32)
        weight = np.asarray(inputs["weight"]).astype(np.int32)
        return openvino_run(("ip8i",), lambda a, b: [ops.matmul(a, b, False, True)], src, weight)[0].astype(np.int32)


# -- ncnn -------------------------------------------------------------------------------------------------------------
class Ncnn:
    """ncnn adapters of the inner-product family.

    * inner_product_32f: ``InnerProduct(num_output=N, bias_term)`` with the weights as (N, K) rows (B itself when
      transposed, else B^T) on A as a (M, K) blob, then the activation (``engines/ncnn/_graph.activation``); prelu's
      slopes run along ncnn's outer axis, so the (M, N) result is turned to (N, M) with ``Permute`` around the
      ``PReLU``.
    * inner_product_layer: ``InnerProduct`` on the vector or the batch of vectors.
    * inner_product_8i: the same float32 ``InnerProduct`` on the integer values, exact while every partial sum is an
      integer below 2^24 (K * 255 * 128 < 2^24, K <= 513); ncnn's int8 path quantizes float inputs to int8 with
      scales, which cannot hold uint8 sources, so larger K is skipped. Only the precise compatibility (or data that
      cannot saturate): ncnn has no pairwise int16 saturation.

    Prepared calls: every adapter's, made by ``engines/ncnn/prepare.py``.
    """

    @staticmethod
    def _inner_product(a: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, kind: str = "identity",
                       params: Any = None) -> np.ndarray:
        """act(a @ weight.T + bias) through ncnn; `a` is (M, K), `weight` (N, K)."""
        n, k = weight.shape
        graph = Graph()
        source = graph.input()
        weights = [(weight, True)] + ([(bias, False)] if bias is not None else [])
        y = graph.layer("InnerProduct", [source], {0: n, 1: int(bias is not None), 2: n * k}, weights)
        if kind == "prelu":  # slopes per column: ncnn's PReLU takes them along the outer (row) axis
            y = graph.layer("Permute", [ncnn_activation(graph, graph.layer("Permute", [y], {0: 1}), kind, params)],
                            {0: 1})
        else:
            y = ncnn_activation(graph, y, kind, params)
        out = graph.run({source: np.asarray(a, np.float32)}, [y])[0]
        return out.reshape(a.shape[0], n)

    @staticmethod
    @adapter("ncnn", "inner_product_32f")
    def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
        p = case.params
        results = []
        for call in range(p.get("calls", 1)):
            b = np.asarray(inputs["B"][0 if p["const_b"] else call], np.float32)
            results.append(Ncnn._inner_product(inputs["A"][call], b if p["trans_b"] else b.T, inputs["bias"],
                                               p["activation"], inputs["params"]))
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    @adapter("ncnn", "inner_product_layer")
    def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        x = np.asarray(inputs["x"], np.float32)
        y = Ncnn._inner_product(x.reshape(-1, x.shape[-1]), np.asarray(inputs["weight"], np.float32),
                                inputs["bias"])
        return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))

    @staticmethod
    @adapter("ncnn", "inner_product_8i")
    def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        if p["compatibility"] != "precise" and p.get("data") != "narrowed":
            raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): ncnn has no such arithmetic")
        src, weight = np.asarray(inputs["src"]), np.asarray(inputs["weight"])
        if p["K"] * 255 * 128 >= EXACT_INTEGERS:
            raise Unsupported(f"K = {p['K']}: ncnn's float32 InnerProduct is exact on integers only for K <= 513, "
                              "and its int8 path quantizes inputs to int8 (no uint8 sources)")
        y = Ncnn._inner_product(src.astype(np.float32), weight.astype(np.float32), None)
        return y.astype(np.int32)
