"""The one assertion every conformance test module makes."""

from __future__ import annotations

import pytest

from conformance.runner import run_case


def check(implementation, function, case, seed: int) -> None:
    result = run_case(implementation, function, case, seed)
    if result.status == "skip":
        pytest.skip(result.detail)
    assert result.status == "pass", f"{result.status}: {result.detail}\nrepro: {result.repro}"
