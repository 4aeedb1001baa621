"""SimdSynetEltwiseLayerForward throughput: sum and max of two float32 arrays, 1 K / 64 K / 4 M elements.

GB/s counts the bytes the call must move: two inputs read, one output written (12 bytes per element).
(Written by the bench engineer before the elementwise family's own bench module; fold into
``simdbind/bench/elementwise.py`` when that exists.)
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import simdbind
from simdbind.bench._peers import ort_available, ort_callable, torch_module


def cases(quick: bool = False) -> list[dict[str, Any]]:
    sizes = {"64K": 1 << 16, "4M": 1 << 22} if quick else {"1K": 1 << 10, "64K": 1 << 16, "4M": 1 << 22}
    torch = torch_module()
    ort = ort_available()
    rng = np.random.default_rng(8)
    result = []
    for label, n in sizes.items():
        x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
        o = np.empty(n, np.float32)
        for op, np_fn, torch_name, onnx_op in (("sum", np.add, "add", "Add"), ("max", np.maximum, "maximum", "Max")):
            peers: dict[str, Callable[[], Any]] = {
                "numpy": (lambda f=np_fn, x=x, y=y, o=o: f(x, y, out=o))}
            if torch is not None:
                tx, ty, to = (torch.from_numpy(a) for a in (x, y, o))
                fn = getattr(torch, torch_name)
                peers["torch"] = lambda fn=fn, tx=tx, ty=ty, to=to: fn(tx, ty, out=to)
            if ort:
                peers["onnxruntime"] = lambda onnx_op=onnx_op, x=x, y=y, o=o: ort_callable(onnx_op, [x, y], o)
            result.append({
                "name": f"eltwise {op} {label}", "family": "elementwise", "unit": "GB/s", "work": 12 * n,
                "simdbind": (lambda library, op=op, x=x, y=y, o=o:
                             (lambda: simdbind.eltwise([x, y], op, out=o, library=library))),
                "peers": peers,
            })
    return result
