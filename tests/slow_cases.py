"""A conformance function whose cases cost what their descriptor says (``sleep=MS``) on :data:`SLEEPING`, for the
runner's tests of progress: 300 cases that cost nothing, then 24 that take 0.25 s each (imported by the tests; never
by the suite)."""

from __future__ import annotations

import time
from typing import Any, Iterable

import numpy as np

from simdbind.conformance.model import F, Case, Function, register
from simdbind.conformance.tolerance import EXACT, Tolerance


@register
class SlowCopy(Function):
    name = "slow_copy"
    family = "fake"
    symbols = ("SimdVersion",)
    fields = (F("index", "int"), F("sleep", "int"))

    def grid(self) -> Iterable[Case]:
        for index in range(324):
            yield self.case({"index": index, "sleep": 0 if index < 300 else 250}, profiles=("smoke",))

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        return {"x": rng.standard_normal(4).astype(np.float32)}

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return np.array(inputs["x"], copy=True)

    def tolerance(self, case: Case) -> Tolerance:
        return EXACT


class Sleeping:
    """An implementation of slow_copy that takes the time its case says."""

    name = "sleeping"

    def unsupported(self, function: str, case: Case) -> str | None:
        return None if function == "slow_copy" else "only slow_copy"

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        time.sleep(case.params["sleep"] / 1000)
        return np.array(inputs["x"], copy=True)


SLEEPING = Sleeping()


class Swallowing(Sleeping):
    """Sleeping, but it catches everything its sleep raises (the user's KeyboardInterrupt too) and carries on."""

    name = "swallowing"

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        try:
            time.sleep(0.05)
        except BaseException:  # noqa: BLE001 - the adapter's bug under test
            pass
        return np.array(inputs["x"], copy=True)


SWALLOWING = Swallowing()
