"""PyTorch's prepared calls (``prepare`` of the public API, what ``simdbind bench`` times): the tensors are made from
the case's arrays once (NHWC as ``channels_last`` tensors, as a PyTorch user holds them), outputs preallocated where
torch takes ``out=``, and each call is the torch function alone. They compute what the adapters' ``run`` computes
(same mappings, see each family module); cases those mappings need extra steps for (asymmetric pads, 3D or ceil-mode
pooling, bf16/uint8 data, the edge groups) fall back to ``run``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from simdbind.conformance.engines.torch import implementation
from simdbind.conformance.engines.torch.activation import activate
from simdbind.conformance.engines.torch.elementwise import _UNARY
from simdbind.conformance.engines.torch.gather import gather_operands
from simdbind.conformance.engines.torch.pooling import _symmetric

Call = Callable[[], Any]


def _tensor(x: np.ndarray, layout: str = "nchw") -> torch.Tensor:
    """A tensor of `x` (NCHW order; an NHWC array becomes a channels_last NCHW view of the same memory)."""
    t = torch.from_numpy(np.ascontiguousarray(x))
    if layout == "nhwc":
        t = t.permute(0, 3, 1, 2) if t.dim() == 4 else t.permute(2, 0, 1)
    return t


def _fallback(case: Any, inputs: dict[str, Any]) -> Call:
    run = implementation.functions[case.function][0]
    return lambda: run(case, inputs)


@implementation.preparer("unary")
def unary(case: Any, inputs: dict[str, Any]) -> Call:
    op = case.params["op"]
    if case.group == "edge" or op not in _UNARY:
        return _fallback(case, inputs)
    x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
    out = torch.empty_like(x)
    if op == "zero":
        return lambda: out.zero_()
    fn = _UNARY[op]
    return lambda: fn(x, out=out)


@implementation.preparer("softmax")
def softmax(case: Any, inputs: dict[str, Any]) -> Call:
    x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
    out = torch.empty_like(x)
    return lambda: torch.softmax(x, dim=1, out=out)


@implementation.preparer("eltwise")
def eltwise(case: Any, inputs: dict[str, Any]) -> Call:
    op = case.params["op"]
    if case.params["special"]:
        return _fallback(case, inputs)
    a = [torch.from_numpy(np.ascontiguousarray(x)) for x in inputs["arrays"]]
    out = torch.empty_like(a[0])
    if op == "sum":
        w = [float(v) for v in np.asarray(inputs["weights"], np.float32)]

        def weighted_sum() -> torch.Tensor:
            torch.mul(a[0], w[0], out=out)
            for x, weight in zip(a[1:], w[1:]):
                torch.add(out, x, alpha=weight, out=out)
            return out

        return weighted_sum
    step = {"product": torch.mul, "max": torch.maximum, "min": torch.minimum}[op]

    def fold() -> torch.Tensor:
        step(a[0], a[1], out=out)
        for x in a[2:]:
            step(out, x, out=out)
        return out

    return fold


@implementation.preparer("lrn")
def lrn(case: Any, inputs: dict[str, Any]) -> Call:
    k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
    size = 2 * case.params["half"] + 1
    t = _tensor(np.asarray(inputs["x"], np.float32), case.layout)
    t = t if t.dim() == 4 else t.unsqueeze(0)
    return lambda: F.local_response_norm(t, size, alpha=k1 * size, beta=-k2, k=k0)


def _pooling_geometry(case: Any) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]] | None:
    """kernel, stride and torch's padding, or None where the adapter needs more than one torch call."""
    p = case.params
    if case.group == "edge" or p["direct"] or p["ceil"] or (p.get("kc", 1), p.get("sc", 1)) != (1, 1):
        return None
    kernel = (p["ky"], p["kx"])
    padding = _symmetric((p["pad_left"], p["pad_right"], p["pad_top"], p["pad_bottom"]), kernel)
    return None if padding is None else (kernel, (p["sy"], p["sx"]), padding)


@implementation.preparer("pooling_max32f")
def pooling_max32f(case: Any, inputs: dict[str, Any]) -> Call:
    geometry = _pooling_geometry(case)
    if geometry is None or case.params.get("pc_begin", 0) or case.params.get("pc_end", 0):
        return _fallback(case, inputs)
    kernel, stride, padding = geometry
    t = _tensor(inputs["x"], case.layout)
    return lambda: F.max_pool2d(t, kernel, stride, padding)


@implementation.preparer("pooling_average")
def pooling_average(case: Any, inputs: dict[str, Any]) -> Call:
    geometry = _pooling_geometry(case)
    if geometry is None:
        return _fallback(case, inputs)
    kernel, stride, padding = geometry
    t = _tensor(inputs["x"], case.layout)
    if case.params["exclude"]:
        return lambda: F.avg_pool2d(t, kernel, stride, padding, count_include_pad=False)
    area = kernel[0] * kernel[1]
    return lambda: F.avg_pool2d(t, kernel, stride, padding, divisor_override=area)


@implementation.preparer("gather_elements")
def gather_elements(case: Any, inputs: dict[str, Any]) -> Call:
    axis, index, data = gather_operands(case, inputs)
    pairs = [(bits, torch.empty(index.shape, dtype=bits.dtype)) for bits in data]
    return lambda: tuple(torch.gather(d, axis, index, out=out) for d, out in pairs)


@implementation.preparer("convolution32f")
def convolution32f(case: Any, inputs: dict[str, Any]) -> Call:
    p = case.params
    src = _tensor(np.asarray(inputs["src"], np.float32), case.layout)
    weight = torch.from_numpy(np.ascontiguousarray(inputs["weight"], np.float32))
    if case.layout == "nhwc":  # HWIO -> OIHW, channels_last like the source
        weight = weight.permute(3, 2, 0, 1).contiguous(memory_format=torch.channels_last)
    bias = torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
    top, left, bottom, right = p["pad"]
    stride, dilation, groups, kind, params = tuple(p["stride"]), tuple(p["dilation"]), p["groups"], \
        p["activation"], inputs["params"]
    if (top, left) != (bottom, right):
        pads = (left, right, top, bottom)
        return lambda: activate(F.conv2d(F.pad(src, pads), weight, bias, stride, 0, dilation, groups), kind,
                                params, channel_dim=1)
    padding = (top, left)
    return lambda: activate(F.conv2d(src, weight, bias, stride, padding, dilation, groups), kind, params,
                            channel_dim=1)


@implementation.preparer("inner_product_32f")
def inner_product_32f(case: Any, inputs: dict[str, Any]) -> Call:
    p = case.params
    if p.get("calls", 1) != 1:
        return _fallback(case, inputs)
    a = torch.from_numpy(np.ascontiguousarray(inputs["A"][0], np.float32))
    b = torch.from_numpy(np.ascontiguousarray(inputs["B"][0], np.float32))
    weight = b if p["trans_b"] else b.T.contiguous()
    bias = None if inputs["bias"] is None else torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
    kind, params = p["activation"], inputs["params"]
    if kind == "identity":
        return lambda: F.linear(a, weight, bias)
    return lambda: activate(F.linear(a, weight, bias), kind, params, channel_dim=1)


@implementation.preparer("inner_product_layer")
def inner_product_layer(case: Any, inputs: dict[str, Any]) -> Call:
    x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
    weight = torch.from_numpy(np.ascontiguousarray(inputs["weight"], np.float32))
    bias = None if inputs["bias"] is None else torch.from_numpy(np.ascontiguousarray(inputs["bias"], np.float32))
    return lambda: F.linear(x, weight, bias)
