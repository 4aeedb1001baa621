"""ONNX Runtime's prepared calls (``prepare`` of the public API, what ``simdbind bench`` times) for the int8 product
and the convolution: the session is built (the int8 product's weights its initializer) and the feeds made once, and
each call is ``session.run`` alone. The other functions' ``run`` is one ``session.run`` on a cached session, inside
the adapter's layout and dtype conversions where it has them (NHWC pooling, bf16 and uint8 pooling), which their
benchmark rows time too."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from simdbind.conformance.engines.onnxruntime import implementation
from simdbind.conformance.engines.onnxruntime.activation import activation_nodes
from simdbind.conformance.engines.onnxruntime.model import model, node, session

Call = Callable[[], Any]


def _fallback(case: Any, inputs: dict[str, Any]) -> Call:
    run = implementation.functions[case.function][0]
    return lambda: run(case, inputs)


@implementation.preparer("inner_product_8i")
def inner_product_8i(case: Any, inputs: dict[str, Any]) -> Call:
    p = case.params
    if p["compatibility"] != "precise" and p.get("data") != "narrowed":
        return _fallback(case, inputs)  # raises the adapter's Unsupported
    # The weights are an initializer, constant as an InnerProduct8i context's are, so that ONNX Runtime packs them
    # once when the session is made (as a graph input they were packed on every run: 4x the M = 1 call's time).
    shifted = np.ascontiguousarray((np.asarray(inputs["weight"]).astype(np.int16) + 128).astype(np.uint8).T)
    build = lambda: model([node("MatMulInteger", ["a", "b", "", "zero"], ["y"])],  # noqa: E731
                          [("a", np.uint8, 2)], [("y", np.int32, 2)],
                          initializers={"b": shifted, "zero": np.uint8(128)})
    feeds = {"a": np.ascontiguousarray(inputs["src"], np.uint8)}
    run = session(("ip8i-prepared", case.descriptor, hash(shifted.tobytes())), build).run
    return lambda: run(None, feeds)[0]


@implementation.preparer("convolution32f")
def convolution32f(case: Any, inputs: dict[str, Any]) -> Call:
    p = case.params
    src = np.asarray(inputs["src"], np.float32)
    weight = np.asarray(inputs["weight"], np.float32)
    if case.layout == "nhwc":
        src, weight = src.transpose(0, 3, 1, 2), weight.transpose(3, 2, 0, 1)
    act, initializers = activation_nodes(p["activation"], inputs["params"], p["dst_c"], 4, 1)
    attributes = dict(kernel_shape=list(p["kernel"]), strides=list(p["stride"]), dilations=list(p["dilation"]),
                      pads=list(p["pad"]), group=int(p["groups"]))
    feeds = {"x": np.ascontiguousarray(src), "w": np.ascontiguousarray(weight),
             "b": np.ascontiguousarray(inputs["bias"], np.float32)}
    key = ("conv-prepared", case.descriptor)
    build = lambda: model([node("Conv", ["x", "w", "b"], ["pre"], **attributes)] + act,  # noqa: E731
                          [("x", np.float32, 4), ("w", np.float32, 4), ("b", np.float32, 1)],
                          [("y", np.float32, 4)], initializers=initializers, opset=20)
    run = session(key, build).run
    return lambda: run(None, feeds)[0]
