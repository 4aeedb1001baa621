"""Benchmarks of GatherElements against PyTorch's torch.gather (single thread). GB/s counts data read at the
gathered positions, indices read and output written."""

from __future__ import annotations

import numpy as np

import simdbind


def cases(quick: bool = False) -> list[dict]:
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    # (data shape, axis, idxCount): upstream's attention-like table entry, and a wide inner dimension.
    shapes = [((16, 196, 49), 2, 196), ((8, 512, 256), 1, 512)]
    if quick:
        shapes = shapes[:1]
    result = []
    for shape, axis, count in shapes:
        data = rng.uniform(-1, 1, shape).astype(np.float32)
        index_shape = list(shape)
        index_shape[axis] = count
        idx = rng.integers(0, shape[axis], index_shape).astype(np.int64)
        out = np.zeros(index_shape, np.float32)
        work = 2 * out.nbytes + idx.nbytes
        label = "x".join(map(str, shape))

        def constant(library, data=data, idx=idx, out=out, axis=axis):
            context = simdbind.GatherElements(data.dtype, idx.dtype, data.shape, idx.shape, axis, index=idx,
                                              library=library)
            return lambda: context(data, out=out)

        peers = {}
        if torch is not None:
            t, ti = torch.from_numpy(data), torch.from_numpy(idx)
            peers["torch"] = lambda t=t, ti=ti, axis=axis: torch.gather(t, axis, ti)
        peers["numpy"] = lambda data=data, idx=idx, axis=axis: np.take_along_axis(data, idx, axis)
        result.append({"name": f"gather f32/i64 {label} axis{axis} idx{count} const", "family": "gather",
                       "unit": "GB/s", "work": work, "simdbind": constant, "peers": peers})

        def per_call(library, data=data, idx=idx, out=out, axis=axis):
            return lambda: simdbind.gather_elements(data, idx, axis, out=out, library=library)

        result.append({"name": f"gather f32/i64 {label} axis{axis} idx{count} one-shot", "family": "gather",
                       "unit": "GB/s", "work": work, "simdbind": per_call, "peers": peers})
    return result
