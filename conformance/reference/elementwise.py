"""References of the elementwise family."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def eltwise(inputs: Sequence[np.ndarray], op: str, weights: Sequence[float] | None = None) -> np.ndarray:
    """Spec 3.2: combine the first two inputs, then fold in the rest; Max/Min with ``a > b ? a : b``.

    Sum is accumulated in float64 and rounded once, so it is at least as accurate as any float32 order.
    """
    if op == "sum":
        total = np.zeros(inputs[0].shape, np.float64)
        for x, w in zip(inputs, weights):
            total += np.float64(np.float32(w)) * x.astype(np.float64)
        return total.astype(np.float32)
    acc = inputs[0]
    for x in inputs[1:]:
        if op == "product":
            acc = acc * x
        elif op == "max":
            acc = np.where(acc > x, acc, x)
        else:
            acc = np.where(acc < x, acc, x)
    return np.asarray(acc, np.float32)
