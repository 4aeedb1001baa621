"""Elementwise family throughput: unary operations, softmax, eltwise, LRN and shuffle vs NumPy / PyTorch.

* ``unary <op> <size>``: ``SimdSynetUnaryOperation32f`` on 1 K, 64 K and 4 M float32 elements (Gelem/s), against
  NumPy's ufunc (where NumPy has the operation) and PyTorch's (if importable). Memory-bound operations (abs, neg,
  zero and the eltwise cases) also list ``memcpy``: ``np.copyto`` of the same bytes, the bound they should approach.
* ``softmax 64x1000``, ``softmax 4096x1000``: float32 rows, against a NumPy max-subtracted softmax and
  ``torch.softmax``. ``softmax16b 64x1000``: bf16 rows.
* ``eltwise sum|max <size>``: two inputs, one output (Gelem/s), against ``np.add``/``np.maximum`` and memcpy.
* ``lrn 64x56x56 nchw|nhwc``, ``shuffle 116x28x28``: model-sized tensors (Gelem/s of the output).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import simdbind

SIZES = {"1K": 1 << 10, "64K": 1 << 16, "4M": 1 << 22}
#: simdbind op -> NumPy ufunc name and PyTorch function name (None where the library has no such op).
UNARY = {
    "abs": ("abs", "abs"), "ceil": ("ceil", "ceil"), "cos": ("cos", "cos"), "erf": (None, "erf"),
    "exp": ("exp", "exp"), "floor": ("floor", "floor"), "log": ("log", "log"), "neg": ("negative", "neg"),
    "not": (None, None), "rcp": ("reciprocal", "reciprocal"), "round": (None, "round"), "rsqrt": (None, "rsqrt"),
    "sign": ("sign", "sign"), "sin": ("sin", "sin"), "sqrt": ("sqrt", "sqrt"), "tanh": ("tanh", "tanh"),
    "zero": (None, "zero_"),
}
MEMORY_BOUND = ("abs", "neg", "zero", "not", "sign")


def _torch() -> Any:
    try:
        import torch
    except Exception:  # noqa: BLE001 - not installed, or a broken install
        return None
    return torch


def _unary_inputs(op: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if op in ("log", "sqrt", "rsqrt", "rcp"):
        return rng.uniform(0.01, 100, n).astype(np.float32)
    if op == "exp":
        return rng.uniform(-80, 80, n).astype(np.float32)
    return rng.uniform(-100, 100, n).astype(np.float32)


def _numpy_softmax(x: np.ndarray, o: np.ndarray, m: np.ndarray, s: np.ndarray) -> None:
    np.max(x, axis=1, keepdims=True, out=m)
    np.subtract(x, m, out=o)
    np.exp(o, out=o)
    np.sum(o, axis=1, keepdims=True, out=s)
    np.divide(o, s, out=o)


def cases(quick: bool = False) -> list[dict[str, Any]]:
    torch = _torch()
    rng = np.random.default_rng(20261122)
    sizes = {"64K": SIZES["64K"], "4M": SIZES["4M"]} if quick else SIZES
    result: list[dict[str, Any]] = []

    for op, (np_name, torch_name) in UNARY.items():
        for label, n in sizes.items():
            x = _unary_inputs(op, n, rng)
            o = np.empty_like(x)
            peers: dict[str, Callable[[], Any]] = {}
            if np_name is not None:
                peers["numpy"] = lambda f=getattr(np, np_name), x=x, o=o: f(x, out=o)
            if torch is not None and torch_name is not None:
                tx, to = torch.from_numpy(x), torch.from_numpy(o)
                if torch_name == "zero_":
                    peers["torch"] = lambda to=to: to.zero_()
                else:
                    peers["torch"] = lambda f=getattr(torch, torch_name), tx=tx, to=to: f(tx, out=to)
            if op in MEMORY_BOUND:
                peers["memcpy"] = lambda x=x, o=o: np.copyto(o, x)
            result.append({
                "name": f"unary {op} {label}", "family": "elementwise", "unit": "Gelem/s", "work": n,
                "simdbind": (lambda library, op=op, x=x, o=o:
                             (lambda: simdbind.unary(x, op, out=o, library=library))),
                "peers": peers,
                "note": "memory-bound: compare with memcpy" if op in MEMORY_BOUND else "",
            })

    for rows in ((64,) if quick else (64, 4096)):
        x = rng.uniform(-10, 10, (rows, 1000)).astype(np.float32)
        o = np.empty_like(x)
        m, s = np.empty((rows, 1), np.float32), np.empty((rows, 1), np.float32)
        peers = {"numpy": lambda x=x, o=o, m=m, s=s: _numpy_softmax(x, o, m, s)}
        if torch is not None:
            tx, to = torch.from_numpy(x), torch.from_numpy(o)
            peers["torch"] = lambda tx=tx, to=to: torch.softmax(tx, dim=1, out=to)
        result.append({
            "name": f"softmax {rows}x1000", "family": "elementwise", "unit": "Gelem/s", "work": x.size,
            "simdbind": (lambda library, x=x, o=o: (lambda: simdbind.softmax(x, axis=1, out=o, library=library))),
            "peers": peers,
        })
    xb = rng.uniform(-10, 10, (64, 1000)).astype(np.float32)
    bits = ((xb.view(np.uint32) + 0x7FFF + ((xb.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
    ob = np.empty_like(bits)
    bf16_peers: dict[str, Callable[[], Any]] = {}
    if torch is not None:
        tb = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
        bf16_peers["torch"] = lambda tb=tb: torch.softmax(tb, dim=1)
    result.append({
        "name": "softmax16b 64x1000", "family": "elementwise", "unit": "Gelem/s", "work": bits.size,
        "simdbind": (lambda library: (lambda: simdbind.softmax(bits, axis=1, out=ob, library=library))),
        "peers": bf16_peers,
    })

    for label, n in sizes.items():
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        o = np.empty(n, np.float32)
        for op, np_fn, torch_name in (("sum", np.add, "add"), ("max", np.maximum, "maximum")):
            peers = {"numpy": lambda f=np_fn, a=a, b=b, o=o: f(a, b, out=o),
                     # the same bytes as the call moves (2 reads + 1 write): two copies of n floats ~ 4n moves
                     "memcpy": lambda a=a, o=o: np.copyto(o, a)}
            if torch is not None:
                ta, tb_, to = (torch.from_numpy(v) for v in (a, b, o))
                peers["torch"] = lambda f=getattr(torch, torch_name), ta=ta, tb_=tb_, to=to: f(ta, tb_, out=to)
            result.append({
                "name": f"eltwise {op} {label}", "family": "elementwise", "unit": "Gelem/s", "work": n,
                "simdbind": (lambda library, op=op, a=a, b=b, o=o:
                             (lambda: simdbind.eltwise([a, b], op, out=o, library=library))),
                "peers": peers,
                "note": "memcpy moves 2/3 of the bytes of the call",
            })

    if not quick:
        k = (1.0, 1e-4 / 5, -0.75)
        x = rng.uniform(-1, 1, (64, 56, 56)).astype(np.float32)
        for layout, data in (("nchw", x), ("nhwc", np.ascontiguousarray(x.transpose(1, 2, 0)))):
            o = np.empty_like(data)
            peers = {}
            if torch is not None and layout == "nchw":
                lrn_module = torch.nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
                tx = torch.from_numpy(data[None])
                peers["torch"] = lambda m=lrn_module, tx=tx: m(tx)
            result.append({
                "name": f"lrn 64x56x56 {layout}", "family": "elementwise", "unit": "Gelem/s", "work": data.size,
                "simdbind": (lambda library, data=data, o=o, layout=layout:
                             (lambda: simdbind.lrn(data, 2, k, layout, out=o, library=library))),
                "peers": peers,
            })
        x0 = rng.standard_normal((116, 28, 28)).astype(np.float32)
        x1 = rng.standard_normal((116, 28, 28)).astype(np.float32)
        y = (np.empty_like(x0), np.empty_like(x1))
        cat = np.empty((232, 28, 28), np.float32)

        def numpy_shuffle() -> None:
            np.concatenate([x0, x1], out=cat)
            np.copyto(y[0], cat[0::2])
            np.copyto(y[1], cat[1::2])

        result.append({
            "name": "shuffle 116+116x28x28", "family": "elementwise", "unit": "Gelem/s", "work": 2 * x0.size,
            "simdbind": (lambda library: (lambda: simdbind.shuffle(x0, x1, 0, out=y, library=library))),
            "peers": {"numpy": numpy_shuffle, "memcpy": lambda: (np.copyto(y[0], x0), np.copyto(y[1], x1))},
        })
    return result
