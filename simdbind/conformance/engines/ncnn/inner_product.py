"""ncnn peers of the inner-product family.

* inner_product_32f: ``InnerProduct(num_output=N, bias_term)`` with the weights as (N, K) rows (B itself when
  transposed, else B^T) on A as a (M, K) blob, then the activation (``_graph.activation``); prelu's slopes run
  along ncnn's outer axis, so the (M, N) result is turned to (N, M) with ``Permute`` around the ``PReLU``.
* inner_product_layer: ``InnerProduct`` on the vector or the batch of vectors.
* inner_product_8i: the same float32 ``InnerProduct`` on the integer values, exact while every partial sum is an
  integer below 2^24 (K * 255 * 128 < 2^24, K <= 513); ncnn's int8 path quantizes float inputs to int8 with scales,
  which cannot hold uint8 sources, so larger K is skipped. Only the precise compatibility (or data that cannot
  saturate): ncnn has no pairwise int16 saturation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.ncnn import implementation
from simdbind.conformance.engines.ncnn._graph import Graph, activation

#: float32 holds every integer below this exactly.
EXACT_INTEGERS = 2 ** 24


def _inner_product(a: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, kind: str = "identity",
                   params: Any = None) -> np.ndarray:
    """act(a @ weight.T + bias) through ncnn; `a` is (M, K), `weight` (N, K)."""
    n, k = weight.shape
    graph = Graph()
    source = graph.input()
    weights = [(weight, True)] + ([(bias, False)] if bias is not None else [])
    y = graph.layer("InnerProduct", [source], {0: n, 1: int(bias is not None), 2: n * k}, weights)
    if kind == "prelu":  # slopes per column: ncnn's PReLU takes them along the outer (row) axis
        y = graph.layer("Permute", [activation(graph, graph.layer("Permute", [y], {0: 1}), kind, params)], {0: 1})
    else:
        y = activation(graph, y, kind, params)
    out = graph.run({source: np.asarray(a, np.float32)}, [y])[0]
    return out.reshape(a.shape[0], n)


@implementation.function("inner_product_32f")
def inner_product_32f(case: Case, inputs: dict[str, Any]) -> Any:
    p = case.params
    results = []
    for call in range(p.get("calls", 1)):
        b = np.asarray(inputs["B"][0 if p["const_b"] else call], np.float32)
        results.append(_inner_product(inputs["A"][call], b if p["trans_b"] else b.T, inputs["bias"],
                                      p["activation"], inputs["params"]))
    return results[0] if len(results) == 1 else tuple(results)


@implementation.function("inner_product_layer")
def inner_product_layer(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    x = np.asarray(inputs["x"], np.float32)
    y = _inner_product(x.reshape(-1, x.shape[-1]), np.asarray(inputs["weight"], np.float32), inputs["bias"])
    return y.reshape(x.shape[:-1] + (inputs["weight"].shape[0],))


@implementation.function("inner_product_8i")
def inner_product_8i(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    p = case.params
    if p["compatibility"] != "precise" and p.get("data") != "narrowed":
        raise Unsupported("pairwise int16 saturation (8iOverflow/8iNarrowed): ncnn has no such arithmetic")
    src, weight = np.asarray(inputs["src"]), np.asarray(inputs["weight"])
    if p["K"] * 255 * 128 >= EXACT_INTEGERS:
        raise Unsupported(f"K = {p['K']}: ncnn's float32 InnerProduct is exact on integers only for K <= 513, and "
                          "its int8 path quantizes inputs to int8 (no uint8 sources)")
    y = _inner_product(src.astype(np.float32), weight.astype(np.float32), None)
    return y.astype(np.int32)
