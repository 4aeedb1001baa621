"""bfloat16 max pooling through an engine's float32 pooling: widen the bits, pool, narrow them back. Exact, because a
maximum is one of its inputs and every bf16 value is a float32 value."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np


def max_through_float32(pool: Callable[[np.ndarray], np.ndarray], x: Any) -> np.ndarray:
    bits = np.ascontiguousarray(x).view(np.uint16)
    y = pool((bits.astype(np.uint32) << 16).view(np.float32))
    return (np.ascontiguousarray(y).view(np.uint32) >> 16).astype(np.uint16)
