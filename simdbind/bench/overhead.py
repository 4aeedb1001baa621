"""Per-call overhead of the Pythonic layer: tiny calls through simdbind, beside the raw cffi call to the same C
function (:class:`simdbind.bench.raw.RawCffi`, the floor, where the function is one C call) and the peers' equivalent
calls (PyTorch's: its tensors made once, see the torch adapter's prepare), measured in the same run.

Each case is a descriptor at a tiny size; to cover another wrapper, add its descriptor here. A row times the
case's call as the conformance case defines it: gather_elements gathers from two data arrays (two calls per row,
on every implementation alike). The budget, reported
on the rows that have a raw cffi call: simdbind <= 1.5 x raw cffi + 1 us. Measure with ``--timer thread``.
"""

from __future__ import annotations

from typing import Any

from simdbind.bench.raw import RawCffi
from simdbind.conformance.implementations import LibraryImplementation

DESCRIPTORS = [
    "eltwise op=sum count=2 size=16",
    "eltwise op=max count=3 size=16",
    "unary op=abs size=16",
    "unary op=exp size=16",
    "pooling_max32f layout=nchw channels=4 height=4 width=4 kernel=2x2 stride=2x2 ceil=false",
    "pooling_average layout=nchw channels=4 height=4 width=4 kernel=2x2 stride=2x2 ceil=false exclude=false",
    "pooling_max16b layout=nhwc channels=4 height=4 width=4 kernel=2x2 stride=2x2 ceil=false",
    "pooling_max8u layout=nhwc channels=4 height=4 width=4 kernel=2x2 stride=2x2 ceil=false",
    "softmax outer=1 count=16 inner=1 data=-",
    "gather_elements dtype=float32 index=int64 shape=4x4 axis=1 idx_count=4 const=false negative=false",
    "inner_product_layer count=4 size=16 bias=false",
    "inner_product_32f M=1 N=4 K=16 trans_b=true const_b=true bias=false",
    "inner_product_8i M=1 N=4 K=16 compatibility=overflow data=full",
    "convolution32f layout=nchw src_c=4 src_h=4 src_w=4 dst_c=4 kernel=1x1",
]
#: The default peers of this family: PyTorch's call is the yardstick of a tiny call's cost. The graph runtimes'
#: prepared calls take 7.5-15 us (ncnn) and 54-150 us (OpenVINO) on these cases, against PyTorch's 0.8-4 us
#: (one run, AVX-512 EPYC, thread time); `--impl ncnn --impl openvino` measures them too.
PEERS = ("torch",)
#: No memcpy bound: at 16 elements a copy measures the call, not the bytes.
BOUND = False
#: simdbind's row against its library's raw cffi row: within factor x raw + plus_us.
BUDGET = {"baseline": RawCffi.LABEL, "factor": 1.5, "plus_us": 1.0}


def measured(libraries: list[LibraryImplementation]) -> list[tuple[str, Any]]:
    """Each library's Pythonic call, and its raw cffi call where the function has one."""
    return [("simdbind", lib) for lib in libraries] + [("variant", RawCffi(lib)) for lib in libraries]
