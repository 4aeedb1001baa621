"""Conformance of every family on every implementation under test: one test per family (``test_<family>``, so that
``-k pooling`` selects one), over the families :func:`simdbind.conformance.families.names` lists."""

from __future__ import annotations

from typing import Callable

import pytest

from simdbind.conformance.api import Implementation
from simdbind.conformance.families import names
from simdbind.conformance.model import Case, Function
from simdbind.conformance.plugin import check

Test = Callable[[Implementation, Function, Case, int], None]


def _conformance(family: str) -> Test:
    @pytest.mark.simd_conformance(family=family)
    def test(implementation: Implementation, function: Function, case: Case, simd_seed: int) -> None:
        check(implementation, function, case, simd_seed)

    test.__name__ = test.__qualname__ = f"test_{family}"
    test.__doc__ = f"The {family} family's cases."
    return test


for _family in names():
    globals()[f"test_{_family}"] = _conformance(_family)
