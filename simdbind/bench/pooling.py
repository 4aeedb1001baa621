"""Benchmarks of the pooling family: typical CNN pooling layers, NCHW and NHWC, against PyTorch (single thread).

Work is counted in bytes moved (input read once + output written once), reported as GB/s. Each case also lists
``memcpy``: ``np.copyto`` between two buffers of half that many bytes each, so that it moves the same bytes: the
memory bound of a layer that reads its input once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import simdbind

# (C, H, W, kernel, stride, pad): a ResNet stem max pooling and a 2x2/s2 reduction.
SHAPES = [(64, 112, 112, 3, 2, 1), (256, 56, 56, 2, 2, 0)]
QUICK_SHAPES = [(64, 56, 56, 3, 2, 1)]


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def cases(quick: bool = False) -> list[dict]:
    torch = _torch()
    rng = np.random.default_rng(0)
    result = []
    for c, h, w, k, s, p in (QUICK_SHAPES if quick else SHAPES):
        out_h, out_w = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        nchw = rng.uniform(-1, 1, (1, c, h, w)).astype(np.float32)
        nhwc = np.ascontiguousarray(nchw.transpose(0, 2, 3, 1))
        u8 = rng.integers(0, 256, (1, h, w, c), dtype=np.uint8)
        bf16 = (nhwc.view(np.uint32) >> 16).astype(np.uint16)
        for op in ("max", "average"):
            for layout, x in (("nchw", nchw), ("nhwc", nhwc)):
                out = np.zeros((1, c, out_h, out_w) if layout == "nchw" else (1, out_h, out_w, c), np.float32)
                work = x.nbytes + out.nbytes

                def run(library, x=x, out=out, layout=layout, op=op, k=k, s=s, p=p):
                    if op == "max":
                        return lambda: simdbind.pooling_max(x, k, stride=s, pad=p, layout=layout, out=out,
                                                            library=library)
                    return lambda: simdbind.pooling_average(x, k, stride=s, pad=p, layout=layout, exclude_pad=False,
                                                            out=out, library=library)

                half = np.zeros(work // 2, np.uint8)
                peers = {"memcpy": lambda a=half, b=half.copy(): np.copyto(b, a)}
                if torch is not None:
                    t = torch.from_numpy(nchw)
                    if layout == "nhwc":
                        t = t.contiguous(memory_format=torch.channels_last)
                    fn = torch.nn.functional.max_pool2d if op == "max" else torch.nn.functional.avg_pool2d
                    peers["torch"] = (lambda fn=fn, t=t, k=k, s=s, p=p: fn(t, k, s, p))
                result.append({"name": f"pooling {op} f32 {layout} {c}x{h}x{w} k{k}s{s}p{p}", "family": "pooling",
                               "unit": "GB/s", "work": work, "simdbind": run, "peers": peers})
        for name, x in (("u8", u8), ("bf16", bf16)):
            out = np.zeros((1, out_h, out_w, c), x.dtype)
            peers = {}
            if torch is not None and name == "u8":
                pass  # torch has no uint8 max_pool2d on CPU
            result.append({"name": f"pooling max {name} nhwc {c}x{h}x{w} k{k}s{s}p{p}", "family": "pooling",
                           "unit": "GB/s", "work": x.nbytes + out.nbytes,
                           "simdbind": (lambda library, x=x, out=out, k=k, s=s, p=p:
                                        lambda: simdbind.pooling_max(x, k, stride=s, pad=p, layout="nhwc", out=out,
                                                                     library=library)),
                           "peers": peers})
    return result
