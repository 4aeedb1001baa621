"""Fake conformance functions for the runner's own tests (imported by them; never by the suite).

* ``fake_copy``: the reference is the input; ``run`` returns it, except for the descriptors named in
  ``CORRUPT`` (one element off by 1.0), ``RAISE`` (raises) and ``CRASH``
  (kills the process, like a segfault in C).
* ``fake_missing``: needs a symbol no library has.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

import numpy as np

from simdbind.conformance.model import Case, Function, register
from simdbind.conformance.tolerance import EXACT, Tolerance

CRASH = "fake copy size5 crash"
RAISE = "fake copy size6 raise"
CORRUPT = "fake copy size7 corrupt"


@register
class FakeCopy(Function):
    name = "fake_copy"
    family = "fake"
    symbols = ("SimdVersion",)

    def cases(self) -> Iterable[Case]:
        for size in range(1, 5):
            yield Case(self.name, f"fake copy size{size}", {"size": size, "op": "copy"}, layout="nchw",
                       profiles=("smoke", "ci", "full"))
        for descriptor in (CRASH, RAISE, CORRUPT):
            size = int(descriptor.split()[2][4:])
            yield Case(self.name, descriptor, {"size": size, "op": "copy"}, layout="nchw", profiles=("full",))
        yield Case(self.name, "fake copy size8 nan", {"size": 8, "op": "copy"}, layout="nhwc", group="edge",
                   profiles=("ci", "full"))

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        x = rng.standard_normal(case.params["size"]).astype(np.float32)
        if case.group == "edge":
            x[0] = np.nan
        return {"x": x}

    def run(self, library: Any, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        if case.descriptor == CRASH:
            os.abort()
        if case.descriptor == RAISE:
            raise RuntimeError("fake kernel refused")
        y = inputs["x"].copy()
        if case.descriptor == CORRUPT:
            y[3] += 1.0
        return y

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return inputs["x"].copy()

    def tolerance(self, case: Case) -> Tolerance:
        return EXACT


@register
class FakeMissing(FakeCopy):
    name = "fake_missing"
    symbols = ("SimdNoSuchFunctionAnywhere",)

    def cases(self) -> Iterable[Case]:
        yield Case(self.name, "fake missing size3", {"size": 3}, profiles=("smoke", "ci", "full"))
