"""Inner-product throughput (GFLOP/s, 2*M*N*K per call; the int8 product counts its integer multiply-adds alike)
for (M, N, K) in (1, 1000, 2048), (64, 1024, 1024), (256, 1024, 1024): the FP32 context as a Linear layer
(weights (N, K), constant: packed once), the same with B passed to every Forward, and the uint8 x int8 product in
saturating ("overflow") and exact ("precise") arithmetic."""

from __future__ import annotations

from simdbind.bench.cases import Work
from simdbind.conformance.model import Case

_SHAPES = ((1, 1000, 2048), (64, 1024, 1024), (256, 1024, 1024))
DESCRIPTORS = [line for M, N, K in _SHAPES for line in (
    f"inner_product_32f M={M} N={N} K={K} trans_b=true const_b=true bias=false",
    f"inner_product_32f M={M} N={N} K={K} trans_b=true const_b=false bias=false",
    f"inner_product_8i M={M} N={N} K={K} compatibility=overflow data=full",
    f"inner_product_8i M={M} N={N} K={K} compatibility=precise data=full")]
QUICK = DESCRIPTORS[:8]


def work(case: Case) -> Work:
    """2 x M x N x K per product (x calls); the layer: 2 x batch x count x size."""
    p = case.params
    if case.function == "inner_product_layer":
        return Work("GFLOP/s", 2.0 * p["batch"] * p["count"] * p["size"])
    return Work("GFLOP/s", 2.0 * p["M"] * p["N"] * p["K"] * p.get("calls", 1))
