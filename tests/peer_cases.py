"""Case picking for the peer tests (tests/test_peers_*.py): the first ci case of a function whose parameters
satisfy a predicate, run through the runner, so the tests follow the grids instead of spelling descriptors."""

from __future__ import annotations

from typing import Any, Callable

from simdbind.conformance import runner
from simdbind.conformance.model import REGISTRY, Case


def pick(function: str, where: Callable[[Case, dict[str, Any]], bool], group: str = "main") -> Case:
    for case in REGISTRY[function].cases():
        if "ci" in case.profiles and case.group == group and where(case, case.params):
            return case
    raise LookupError(f"no ci case of {function} matches")


def run(implementation: Any, case: Case) -> runner.CaseResult:
    return runner.run_case(implementation, REGISTRY[case.function], case)
