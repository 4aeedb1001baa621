"""Elementwise throughput in Gelem/s (output elements per second): the unary operations on 1 K, 64 K and 4 M
float32 elements, softmax (float32 and bf16 rows of 1000), eltwise sum and max of two inputs, LRN at 64x56x56 in
both layouts and the channel shuffle of 116+116 channels at 28x28. The memory-bound ones (abs, neg, zero, not,
sign, eltwise, shuffle) are measured beside memcpy of the same bytes."""

from __future__ import annotations

from simdbind.bench.cases import Work, elements, itemsize
from simdbind.conformance.model import Case

_UNARY = ("abs", "ceil", "cos", "erf", "exp", "floor", "log", "neg", "not", "rcp", "round", "rsqrt", "sign", "sin",
          "sqrt", "tanh", "zero")
#: Unary operations that do a few instructions per element: bound by memory, compared with memcpy.
MEMORY_BOUND = ("abs", "neg", "zero", "not", "sign")
_SIZES = (1 << 10, 1 << 16, 1 << 22)

DESCRIPTORS = (
    [f"unary op={op} size={n}" for op in _UNARY for n in _SIZES]
    + ["softmax outer=64 count=1000 inner=1 data=-", "softmax outer=4096 count=1000 inner=1 data=-",
       "softmax16b outer=64 count=1000 inner=1 data=-"]
    + [f"eltwise op={op} count=2 size={n}" for n in _SIZES for op in ("sum", "max")]
    + [f"lrn layout={layout} half=2 channels=64 height=56 width=56 k=onnx" for layout in ("nchw", "nhwc")]
    + ["shuffle layout=nchw type=0 channels=116x116 height=28 width=28"])
QUICK = ([f"unary op={op} size={n}" for op in _UNARY for n in _SIZES[1:]]
         + ["softmax outer=64 count=1000 inner=1 data=-", "softmax16b outer=64 count=1000 inner=1 data=-"]
         + [f"eltwise op={op} count=2 size={n}" for n in _SIZES[1:] for op in ("sum", "max")])


def work(case: Case) -> Work:
    """Output elements; bytes moved for the memory-bound functions."""
    p, size = case.params, itemsize(case)
    if case.function == "unary":
        n = p["size"]
        return Work("Gelem/s", n, 2 * size * n if p["op"] in MEMORY_BOUND else None)
    if case.function == "eltwise":
        return Work("Gelem/s", p["size"], (p["count"] + 1) * size * p["size"])
    if case.function in ("softmax", "softmax16b"):
        return Work("Gelem/s", p["outer"] * p["count"] * p["inner"])
    if case.function == "lrn":
        return Work("Gelem/s", p["batch"] * elements((p["channels"], p["height"], p["width"])))
    if case.function == "shuffle":
        n = p["batch"] * (p["channels0"] + p["channels1"]) * p["height"] * p["width"]
        return Work("Gelem/s", n, 2 * size * n)
    raise ValueError(f"no work rule for {case.function}")
