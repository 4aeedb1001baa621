"""Test doubles of implementations for the runner and report tests."""

from __future__ import annotations

from typing import Any

import numpy as np


class Corrupting:
    """Wraps an implementation (same name, kind, ISA) and moves one output element of the chosen cases by
    `ulps` units in the last place: an injected regression."""

    def __init__(self, inner: Any, descriptors: set[str], ulps: int = 1):
        self.inner, self.descriptors, self.ulps = inner, set(descriptors), ulps

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, function: str, case: Any, inputs: dict[str, Any]) -> Any:
        out = self.inner.run(function, case, inputs)
        if case.descriptor in self.descriptors:
            out = np.array(out, copy=True)
            flat = out.reshape(-1)
            for _ in range(self.ulps):
                flat[0] = np.nextafter(flat[0], np.float32(np.inf))
        return out


class Renamed:
    """An implementation under another name and kind (e.g. to play an external library)."""

    def __init__(self, inner: Any, name: str, kind: str, version: str = "7.1.162"):
        self.inner, self.name, self.kind, self.version = inner, name, kind, version

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
