"""What the suite knows about one function under test, and one case of it.

A family's cases module defines a :class:`Function` subclass per C function and registers it with
:func:`register`. The runner and the pytest modules only talk to this interface.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

import numpy as np

from simdbind.conformance.tolerance import Tolerance

PROFILES = ("smoke", "ci", "full")

#: Case groups: "main" cases are inside the contract's exact domain; "edge" cases exercise documented
#: implementation-defined behaviour (NaN, Inf, ties) whose expectation is written down per case.
GROUPS = ("main", "edge")


@dataclass(frozen=True)
class Case:
    """One named, seeded case. ``descriptor`` is a one-line, benchdnn-style name that is also the repro key."""

    function: str
    descriptor: str
    params: dict[str, Any] = field(hash=False, compare=False)
    dtype: str = "float32"
    layout: str = "-"
    group: str = "main"
    profiles: tuple[str, ...] = PROFILES  # the profiles that run this case

    def seed(self, base_seed: int) -> int:
        """A seed from the descriptor and the run's seed: independent of case order and worker count."""
        digest = hashlib.blake2b(f"{base_seed}:{self.descriptor}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "little")

    def rng(self, base_seed: int) -> np.random.Generator:
        return np.random.default_rng(self.seed(base_seed))


class Function:
    """A C function under test. Subclasses fill in every method."""

    name: ClassVar[str]  # the simdbind name, e.g. "eltwise"
    family: ClassVar[str]  # the simdbind module, e.g. "elementwise"
    symbols: ClassVar[tuple[str, ...]]  # C symbols it needs; an implementation lacking one skips the function

    def cases(self) -> Iterable[Case]:
        raise NotImplementedError

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        raise NotImplementedError

    def run(self, library: Any, case: Case, inputs: dict[str, Any]) -> Any:
        """Call simdbind on `library`; returns an array or a tuple of arrays."""
        raise NotImplementedError

    def reference(self, case: Case, inputs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def tolerance(self, case: Case) -> Tolerance:
        raise NotImplementedError

    def variant(self, case: Case) -> str:
        """The row of the report matrix this case belongs to within the function (e.g. the operation), or "".

        Default: the case's ``op`` parameter when it has one. Override to split the matrix differently."""
        op = case.params.get("op", "")
        return op if isinstance(op, str) else str(op)


REGISTRY: dict[str, Function] = {}


def register(cls: type[Function]) -> type[Function]:
    REGISTRY[cls.name] = cls()
    return cls
