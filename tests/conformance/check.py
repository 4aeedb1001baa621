"""The one assertion every conformance test module makes."""

from __future__ import annotations

import pytest

from simdbind.conformance.runner import CaseResult, run_case

_last: list[CaseResult] = []


def take_result() -> CaseResult | None:
    """The result recorded by the last check() of this process, once (tests/conftest.py puts it in the report)."""
    return _last.pop() if _last else None


def check(implementation, function, case, seed: int) -> None:
    result = run_case(implementation, function, case, seed)
    _last[:] = [result]
    if result.status == "skip":
        pytest.skip(result.detail)
    if result.status == "known":
        pytest.xfail(f"{result.deviation}: {result.detail}")
    assert result.status in ("pass", "xpass"), f"{result.status}: {result.detail}\nrepro: {result.repro}"
