"""Cases of the elementwise family."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

import simdbind
from conformance.model import Case, Function, register
from conformance.reference import elementwise as reference
from conformance.tolerance import EXACT, Tolerance

#: Sizes that cross every vector width (4, 8, 16 lanes) and tail, plus upstream's H*W sizes (spec 5.2).
TAIL_SIZES = tuple(range(1, 68))
LARGE_SIZES = (12288, 12297)
ELTWISE_OPS = ("product", "sum", "max", "min")


@register
class Eltwise(Function):
    name = "eltwise"
    family = "elementwise"
    symbols = ("SimdSynetEltwiseLayerForward",)

    def cases(self) -> Iterable[Case]:
        for op in ELTWISE_OPS:
            for count in (2, 3, 4, 5):
                for size in TAIL_SIZES:
                    profiles = ("ci", "full") if size in (1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 67) or count == 3 \
                        else ("full",)
                    if size in (1, 17) and count in (2, 3):
                        profiles = ("smoke",) + profiles
                    yield self._case(op, count, size, "main", profiles)
                for size in LARGE_SIZES:
                    yield self._case(op, count, size, "main", ("smoke", "ci", "full") if count <= 3 else ("ci", "full"))
            if op in ("max", "min"):
                # Spec 3.2: with a NaN in either operand the later one wins; -inf stays -inf (no -FLT_MAX start).
                for count in (2, 3):
                    yield self._case(op, count, 67, "edge", ("ci", "full"), special="nan_inf")

    def _case(self, op: str, count: int, size: int, group: str, profiles: tuple[str, ...],
              special: str = "") -> Case:
        descriptor = f"eltwise {op} n{count} size{size}" + (f" {special}" if special else "")
        return Case(self.name, descriptor, {"op": op, "count": count, "size": size, "special": special},
                    group=group, profiles=profiles)

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        arrays = [rng.uniform(-1, 1, p["size"]).astype(np.float32) for _ in range(p["count"])]
        if p["special"] == "nan_inf":
            specials = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0], np.float32)
            for a in arrays:
                mask = rng.random(a.size) < 0.3
                a[mask] = rng.choice(specials, int(mask.sum()))
        weights = rng.uniform(-1, 1, p["count"]).astype(np.float32) if p["op"] == "sum" else None
        return {"arrays": arrays, "weights": weights}

    def run(self, library: Any, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return simdbind.eltwise(inputs["arrays"], case.params["op"], inputs["weights"], library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return reference.eltwise(inputs["arrays"], case.params["op"], inputs["weights"])

    def tolerance(self, case: Case) -> Tolerance:
        if case.params["op"] != "sum":
            return EXACT
        # Each of the count terms is rounded once (twice without FMA) in float32, the sum again per step:
        # at most ~2*count roundings of values bounded by sum|w_i x_i| <= count.
        count = case.params["count"]
        return Tolerance(abs=2 * count * count * 2.0 ** -24, why="float32 rounding of each weighted term and step")
