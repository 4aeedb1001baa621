"""ncnn peers of the elementwise family.

* eltwise: ``Eltwise`` PROD, SUM (coefficients = the weights) and MAX; min folds ``BinaryOp`` MIN. NaN differs by
  definition (ncnn's max/min keep whichever operand its comparison picks, Simd's ``a > b ? a : b`` the later one),
  so cases with NaN are skipped.
* unary: ``UnaryOp`` ABS, NEG, FLOOR, CEIL, SQRT, RSQ, EXP, LOG, SIN, COS, RECIPROCAL, TANH, ROUND; ncnn has no
  erf, sign, bitwise not or zero layer. RECIPROCAL is held to 1 ulp instead of the exact quotient (it is not
  correctly rounded on x86). The edge group (Simd's NaN/Inf/tie/signed-zero results) is skipped.
* softmax: ``Softmax(axis=1, fixbug0=1)`` on (outer, count, inner) as ncnn's (c, h, w); softmax16b: bf16 widened to
  float32 exactly, Softmax, then ncnn's own ``cast_float32_to_bfloat16``.
* lrn: ``LRN(ACROSS_CHANNELS, local_size=2*half+1, alpha=k1*size, beta=-k2, bias=k0)`` (ncnn divides alpha by the
  size, Simd does not); one image at a time, NHWC transposed around it.
* shuffle: ``Concat`` then ``ShuffleChannel`` and ``Slice`` (type 0: group C/2, halves; type 1: group 2, split at
  the first input's channel count), one image at a time.
"""

from __future__ import annotations

from typing import Any, Callable

import ncnn
import numpy as np

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.ncnn import implementation
from simdbind.conformance.engines.ncnn._graph import Graph
from simdbind.conformance.tolerance import Tolerance

_UNARY = {"abs": 0, "neg": 1, "floor": 2, "ceil": 3, "sqrt": 5, "rsqrt": 6, "exp": 7, "log": 8, "sin": 9, "cos": 10,
          "rcp": 15, "tanh": 16, "round": 18}


def _edge(case: Case) -> None:
    if case.group == "edge":
        raise Unsupported("edge group: Simd's implementation-defined results (NaN, Inf, ties, signed zeros)")


def per_image(x: np.ndarray, layout: str, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """`fn` on each CHW image of `x` (3D, or 4D with a batch; NHWC transposed to CHW and back)."""
    images = x if x.ndim == 4 else x[None]
    if layout == "nhwc":
        images = images.transpose(0, 3, 1, 2)
    y = np.stack([fn(np.ascontiguousarray(image)) for image in images])
    if layout == "nhwc":
        y = y.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(y if x.ndim == 4 else y[0])


@implementation.function("eltwise")
def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    op, arrays = case.params["op"], [np.asarray(a, np.float32) for a in inputs["arrays"]]
    if op in ("max", "min") and any(np.isnan(a).any() for a in arrays):
        raise Unsupported("NaN: ncnn's max/min keep the operand its comparison picks, Simd's a > b ? a : b fold "
                          "keeps the later operand")
    graph = Graph()
    xs = [graph.input() for _ in arrays]
    if op == "min":
        y = xs[0]
        for x in xs[1:]:
            y = graph.layer("BinaryOp", [y, x], {0: 5})
    else:
        params: dict[int, Any] = {0: {"product": 0, "sum": 1, "max": 2}[op]}
        if op == "sum":
            params[1] = [float(w) for w in np.asarray(inputs["weights"], np.float32)]
        y = graph.layer("Eltwise", xs, params)
    return graph.run(dict(zip(xs, arrays)), [y])[0].reshape(arrays[0].shape)


def _unary_tolerance(case: Case) -> Tolerance | None:
    if case.params["op"] == "rcp":
        return Tolerance(max_ulp=1, why="ncnn's x86 RECIPROCAL is not correctly rounded: 1 ulp on about a third of "
                                        "the elements (measured, ncnn 1.0.20261020)")
    return None


@implementation.function("unary", tolerance=_unary_tolerance)
def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    op = case.params["op"]
    if op not in _UNARY:
        raise Unsupported(f"ncnn has no layer for {op}")
    x = np.asarray(inputs["x"], np.float32)
    graph = Graph()
    source = graph.input()
    return graph.run({source: x}, [graph.layer("UnaryOp", [source], {0: _UNARY[op]})])[0].reshape(x.shape)


def _softmax(x: np.ndarray) -> np.ndarray:
    graph = Graph()
    source = graph.input()
    return graph.run({source: x}, [graph.layer("Softmax", [source], {0: 1, 1: 1})])[0].reshape(x.shape)


@implementation.function("softmax")
def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    return _softmax(np.asarray(inputs["x"], np.float32))


@implementation.function("softmax16b")
def softmax16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    bits = np.ascontiguousarray(inputs["x"]).view(np.uint16)
    y = _softmax((bits.astype(np.uint32) << 16).view(np.float32))
    rounded = np.array(ncnn.cast_float32_to_bfloat16(ncnn.Mat(y)), copy=True).view(np.uint16).reshape(y.shape)
    return (rounded.astype(np.uint32) << 16).view(np.float32)


@implementation.function("lrn")
def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
    size = 2 * case.params["half"] + 1
    graph = Graph()
    source = graph.input()
    y = graph.layer("LRN", [source], {0: 0, 1: size, 2: k1 * size, 3: -k2, 4: k0})
    run = graph.runner()
    return per_image(np.asarray(inputs["x"], np.float32), case.layout, lambda image: run({source: image}, [y])[0])


@implementation.function("shuffle")
def shuffle(case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    x0, x1 = (np.asarray(inputs[k], np.float32) for k in ("x0", "x1"))
    axis = x0.ndim - 3 if case.layout == "nchw" else x0.ndim - 1
    c0, c1 = x0.shape[axis], x1.shape[axis]
    if case.params["type"] == 0:
        group, first = (c0 + c1) // 2, (c0 + c1) // 2
    else:
        group, first = 2, case.params["channels0"]
    if 0 in (c0, c1, first, c0 + c1 - first):
        raise Unsupported("an empty channel block: ncnn's Slice refuses a zero-sized slice, and a zero-sized input "
                          "Mat kills the process")
    graph = Graph()
    a, b = graph.input(), graph.input()
    mixed = graph.layer("ShuffleChannel", [graph.layer("Concat", [a, b], {0: 0})], {0: group})
    top0, top1 = graph.layers("Slice", [mixed], {0: [first, -233], 1: 0}, tops=2)
    run = graph.runner()
    to_chw: Callable[[np.ndarray], np.ndarray] = (lambda t: t) if case.layout == "nchw" else \
        (lambda t: np.moveaxis(t, -1, -3))
    from_chw: Callable[[np.ndarray], np.ndarray] = (lambda t: t) if case.layout == "nchw" else \
        (lambda t: np.moveaxis(t, -3, -1))
    images0, images1 = to_chw(x0), to_chw(x1)
    if x0.ndim == 3:
        images0, images1 = images0[None], images1[None]
    outs = [run({a: np.ascontiguousarray(i0), b: np.ascontiguousarray(i1)}, [top0, top1])
            for i0, i1 in zip(images0, images1)]
    y0, y1 = (np.stack([o[k] for o in outs]) for k in (0, 1))
    if x0.ndim == 3:
        y0, y1 = y0[0], y1[0]
    return np.ascontiguousarray(from_chw(y0)), np.ascontiguousarray(from_chw(y1))
