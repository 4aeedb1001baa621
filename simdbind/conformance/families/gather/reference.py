"""Reference of GatherElements, from upstream's documented pseudo-code (SimdLib.h) in ONNX form.

``out[o, c, i] = data[o, idx[o, c, i] (+ n if negative), i]`` with o over the dimensions before `axis`, i over
those after it and ``n = data.shape[axis]``. Elements are copied as bit patterns (float32 NaN payloads survive).
"""

from __future__ import annotations

import numpy as np


def gather_elements(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    axis %= data.ndim
    n = data.shape[axis]
    bits = data.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[data.dtype.itemsize])
    moved_data = np.moveaxis(bits, axis, -1)
    moved_index = np.moveaxis(indices.astype(np.int64), axis, -1)
    corrected = np.where(moved_index < 0, moved_index + n, moved_index)
    out = np.empty(moved_index.shape, bits.dtype)
    for position in np.ndindex(*moved_index.shape[:-1]):
        out[position] = moved_data[position][corrected[position]]
    return np.ascontiguousarray(np.moveaxis(out, -1, axis)).view(data.dtype)
