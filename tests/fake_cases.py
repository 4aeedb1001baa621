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

from simdbind.conformance.model import F, Case, Function, register
from simdbind.conformance.tolerance import EXACT, Tolerance

CRASH = "fake_copy layout=nchw size=5 mode=crash"
RAISE = "fake_copy layout=nchw size=6 mode=raise"
CORRUPT = "fake_copy layout=nchw size=7 mode=corrupt"


@register
class FakeCopy(Function):
    name = "fake_copy"
    family = "fake"
    symbols = ("SimdVersion",)
    fields = (F("layout", "name"), F("op", "name", "copy"), F("size", "int"), F("mode", "name", ""),
              F("group", "name"))

    def grid(self) -> Iterable[Case]:
        for size in range(1, 5):
            yield self.case({"size": size, "op": "copy", "mode": ""}, layout="nchw", profiles=("smoke", "ci", "full"))
        for mode, size in (("crash", 5), ("raise", 6), ("corrupt", 7)):
            yield self.case({"size": size, "op": "copy", "mode": mode}, layout="nchw", profiles=("full",))
        yield self.case({"size": 8, "op": "copy", "mode": ""}, layout="nhwc", group="edge", profiles=("ci", "full"))

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
    fields = (F("size", "int"),)

    def grid(self) -> Iterable[Case]:
        yield self.case({"size": 3}, profiles=("smoke", "ci", "full"))
