"""GatherElements throughput in GB/s: per data array, the gathered elements read, the indices read and the output
written (each case gathers from two data arrays, as the conformance case does). Upstream's attention-like shape
and a wide inner dimension, the index constant (a context made once) or passed to every call."""

from __future__ import annotations

from simdbind.bench.cases import ITEMSIZE, Work, elements, itemsize
from simdbind.conformance.model import Case

_SHAPES = ("shape=16x196x49 axis=2 idx_count=196", "shape=8x512x256 axis=1 idx_count=512")
DESCRIPTORS = [f"gather_elements dtype=float32 index=int64 {shape} const={const} negative=false"
               for shape in _SHAPES for const in ("true", "false")]
QUICK = DESCRIPTORS[:2]


def work(case: Case) -> Work:
    p = case.params
    shape = list(p["shape"])
    shape[p["axis"]] = p["idx_count"]
    count = elements(shape)
    return Work("GB/s", 2.0 * count * (2 * itemsize(case) + ITEMSIZE[p["index"]]))
