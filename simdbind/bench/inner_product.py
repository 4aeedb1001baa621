"""Inner-product throughput: the FP32 context (GFLOP/s, 2*M*N*K per call) and the uint8 x int8 product (GOP/s,
same count), for (M, N, K) in (1, 1000, 2048), (64, 1024, 1024), (256, 1024, 1024).

FP32: ``InnerProduct32f(trans_b=True, const_b=True)`` (a Linear layer: weights (N, K), packed once) against
NumPy's ``A @ W.T`` (OpenBLAS) and ``torch.matmul(A, W.T)``. A non-constant-B variant (B passed to every
Forward) is reported too. INT8: ``inner_product_8i`` in saturating ("overflow") and precise mode against NumPy's
int32 matmul of the same data, and ONNX Runtime's MatMulInteger when onnxruntime and onnx are installed.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import simdbind

SHAPES = ((1, 1000, 2048), (64, 1024, 1024), (256, 1024, 1024))


def _torch() -> Any:
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed, or a broken install
        return None
    return torch


def _ort() -> Any:
    try:
        from simdbind.bench._peers import ort_available, ort_callable
    except Exception:  # noqa: BLE001
        return None
    return ort_callable if ort_available() else None


def cases(quick: bool = False) -> list[dict[str, Any]]:
    torch = _torch()
    ort_callable = _ort()
    rng = np.random.default_rng(17)
    shapes = SHAPES[:2] if quick else SHAPES
    result: list[dict[str, Any]] = []
    for M, N, K in shapes:
        label = f"M{M} N{N} K{K}"
        work = 2 * M * N * K
        a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
        w = rng.uniform(-1, 1, (N, K)).astype(np.float32)
        o = np.zeros((M, N), np.float32)
        wt = w.T
        peers: dict[str, Callable[[], Any]] = {"numpy": lambda a=a, wt=wt, o=o: np.matmul(a, wt, out=o)}
        if torch is not None:
            ta, tw, to = torch.from_numpy(a), torch.from_numpy(w), torch.from_numpy(o)
            peers["torch"] = lambda ta=ta, tw=tw, to=to: torch.matmul(ta, tw.T, out=to)

        def constant(library: Any, M=M, N=N, K=K, a=a, w=w, o=o) -> Callable[[], Any]:
            ip = simdbind.InnerProduct32f(M, N, K, trans_b=True, const_b=True, weight=w, library=library)
            call = lambda: ip.forward(a, out=o)  # noqa: E731
            call.keep = ip  # type: ignore[attr-defined]
            return call

        def varying(library: Any, M=M, N=N, K=K, a=a, w=w, o=o) -> Callable[[], Any]:
            ip = simdbind.InnerProduct32f(M, N, K, trans_b=True, const_b=False, library=library)
            call = lambda: ip.forward(a, w, out=o)  # noqa: E731
            call.keep = ip  # type: ignore[attr-defined]
            return call

        result.append({
            "name": f"inner_product_32f {label}", "family": "inner_product", "unit": "GFLOP/s", "work": work,
            "simdbind": constant, "peers": peers, "variants": {"B per call (const_b=False)": varying},
            "note": "trans_b, const_b (weights packed at SetParams), no bias, identity",
        })

        src = rng.integers(0, 256, (M, K), dtype=np.uint8)
        w8 = rng.integers(-128, 128, (N, K), dtype=np.int8)
        o8 = np.zeros((M, N), np.int32)
        src32, w32t = src.astype(np.int32), w8.T.astype(np.int32)
        peers8: dict[str, Callable[[], Any]] = {
            "numpy int32 matmul": lambda s=src32, w=w32t, o=o8: np.matmul(s, w, out=o)}
        if ort_callable is not None:
            w8t = np.ascontiguousarray(w8.T)
            peers8["onnxruntime MatMulInteger"] = (
                lambda s=src, w=w8t, o=o8: ort_callable("MatMulInteger", [s, w], o))
        result.append({
            "name": f"inner_product_8i {label}", "family": "inner_product", "unit": "GFLOP/s", "work": work,
            "simdbind": (lambda library, s=src, w=w8, o=o8:
                         (lambda: simdbind.inner_product_8i(s, w, "overflow", out=o, library=library))),
            "variants": {"precise": (lambda library, s=src, w=w8, o=o8:
                                     (lambda: simdbind.inner_product_8i(s, w, "precise", out=o,
                                                                       emulate_precise=False, library=library)))},
            "peers": peers8,
            "note": "GOP/s (2*M*N*K integer ops); saturating pairs; 'precise' variant exact",
        })
    return result
