"""The work model of a call: what one call of a case does (elements, floating-point operations or bytes), from the
case's params alone. Each family's ``work(case)`` (in its ``cases.py``) counts with it; ``simdbind bench`` turns it
into throughputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from simdbind.conformance.model import Case

#: Throughput units: the work of a call counted in elements, floating-point operations (or integer multiply-adds
#: counted as two operations), the operations of the direct algorithm where an implementation may take one that
#: does fewer (EFFECTIVE: a Winograd convolution's rate exceeds what the machine computes), or bytes.
EFFECTIVE = "effective GFLOP/s"
UNITS = ("Gelem/s", "GFLOP/s", EFFECTIVE, "GB/s")
#: Bytes per element of the dtypes of conformance cases.
ITEMSIZE = {"float32": 4, "bfloat16": 2, "bf16": 2, "uint16": 2, "uint8": 1, "int8": 1, "int32": 4, "int64": 8}


@dataclass(frozen=True)
class Work:
    """What one call does: `amount` of `unit` (times 1e9 per second is the throughput) and, for a memory-bound
    call, the bytes it reads and writes (`moved`: the memcpy bound copies as many)."""

    unit: str
    amount: float
    moved: int | None = None

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"Work: unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if not self.amount > 0:
            raise ValueError(f"Work: amount must be > 0, got {self.amount!r}")


def itemsize(case: Case) -> int:
    return ITEMSIZE[case.dtype]


def elements(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))
