"""PyTorch adapters of the elementwise family: eltwise, unary operations, softmax (float32 and bf16) and LRN.

Mappings:

* eltwise: product folds ``torch.mul``, max/min fold ``torch.maximum``/``torch.minimum`` from the first two inputs
  (the order of the fold does not matter for finite values), sum is ``sum_i w_i * x_i`` in float32 with torch's
  own rounding. NaN differs by definition: torch.maximum/minimum propagate NaN, Simd's ``a > b ? a : b`` keeps the
  later operand, so the cases with NaN are not expressible and are skipped.
* unary: abs/ceil/floor/neg/exp/log/erf/tanh/sin/cos/sqrt/rsqrt/sign with torch's functions of the same name,
  rcp -> reciprocal, round -> round (ties to even: the main cases have no ties), zero -> zeros_like,
  not -> bitwise_not of the int32 bits. The edge group (NaN, Inf, ties, signed zeros) pins Simd's own
  implementation-defined results and is skipped. torch's float32 ``sqrt`` on CPU is not correctly rounded (found
  by this adapter: 1 ulp off on about one element in six, torch 2.13 AVX2), so sqrt is held to 1 ulp here, not
  to the contract's exact IEEE result; every other operation keeps the function's tolerance.
* softmax: ``torch.softmax(x, dim=1)`` on (outer, count, inner). bf16: widened to float32 exactly, softmax in
  float32, rounded to bf16 by ``Tensor.to(torch.bfloat16)`` (round to nearest even).
* LRN: ``F.local_response_norm(x, size=2*half+1, alpha=k1*size, beta=-k2, k=k0)`` on NCHW (NHWC is permuted): torch
  divides the window sum by size and raises to -beta, Simd multiplies by (k0 + k1*sum)^k2 with no 1/size,
  so alpha = k1*size and beta = -k2 give the same function.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from simdbind.conformance import Case, Unsupported
from simdbind.conformance.engines.torch import as_numpy, implementation

_UNARY: dict[str, Callable[..., torch.Tensor]] = {  # each takes out= as well
    "abs": torch.abs, "ceil": torch.ceil, "floor": torch.floor, "neg": torch.neg, "exp": torch.exp, "log": torch.log,
    "erf": torch.erf, "tanh": torch.tanh, "sin": torch.sin, "cos": torch.cos, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "sign": torch.sign, "rcp": torch.reciprocal, "round": torch.round,
    "zero": torch.zeros_like}


def _edge(case: Case) -> None:
    if case.group == "edge":
        raise Unsupported("edge group: Simd's implementation-defined results (NaN, Inf, ties, signed zeros)")


def _unary_tolerance(case: Case) -> Any:
    from simdbind.conformance.model import REGISTRY
    from simdbind.conformance.tolerance import Tolerance

    if case.params["op"] == "sqrt":
        return Tolerance(max_ulp=1, why="torch's CPU float32 sqrt is not correctly rounded (1 ulp)")
    return REGISTRY["unary"].tolerance(case)


@implementation.function("unary", tolerance=_unary_tolerance)
def unary(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    op = case.params["op"]
    x = torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32))
    if op == "not":  # compared as bits by the case
        return as_numpy(torch.bitwise_not(x.view(torch.int32))).view(np.uint32)
    if op not in _UNARY:
        raise Unsupported(f"torch has no {op} operation")
    return as_numpy(_UNARY[op](x))


def _bf16_to_float(bits: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


@implementation.function("softmax")
def softmax(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    return as_numpy(torch.softmax(torch.from_numpy(np.ascontiguousarray(inputs["x"], np.float32)), dim=1))


@implementation.function("softmax16b")
def softmax16b(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    y = torch.softmax(torch.from_numpy(_bf16_to_float(inputs["x"])), dim=1).to(torch.bfloat16)
    return _bf16_to_float(as_numpy(y.view(torch.int16)).view(np.uint16))


@implementation.function("lrn")
def lrn(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    _edge(case)
    x = np.asarray(inputs["x"], np.float32)
    k0, k1, k2 = (float(v) for v in np.asarray(inputs["k"], np.float32))
    size = 2 * case.params["half"] + 1
    t = torch.from_numpy(np.ascontiguousarray(x))
    batched = t.dim() == 4
    if not batched:
        t = t.unsqueeze(0)
    if case.layout == "nhwc":
        t = t.permute(0, 3, 1, 2)
    y = F.local_response_norm(t.contiguous(), size, alpha=k1 * size, beta=-k2, k=k0)
    if case.layout == "nhwc":
        y = y.permute(0, 2, 3, 1)
    if not batched:
        y = y.squeeze(0)
    return as_numpy(y.contiguous())


@implementation.function("eltwise")
def eltwise(case: Case, inputs: dict[str, Any]) -> np.ndarray:
    op = case.params["op"]
    arrays = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs["arrays"]]
    if op in ("max", "min") and any(bool(torch.isnan(a).any()) for a in arrays):
        raise Unsupported("NaN: torch.maximum/minimum propagate NaN, Simd's a > b ? a : b fold keeps the later "
                          "operand")
    if op == "sum":
        weights = [float(w) for w in np.asarray(inputs["weights"], np.float32)]
        result = arrays[0] * weights[0]
        for a, w in zip(arrays[1:], weights[1:]):
            result = torch.add(result, a, alpha=w)
    else:
        step = {"product": torch.mul, "max": torch.maximum, "min": torch.minimum}[op]
        result = step(arrays[0], arrays[1])
        for a in arrays[2:]:
            result = step(result, a)
    return as_numpy(result).astype(np.float32, copy=False)
