"""Conformance of the convolution family on every implementation under test."""

import pytest

from simdbind.conformance.api import Implementation
from simdbind.conformance.model import Case, Function
from simdbind.conformance.plugin import check

pytestmark = pytest.mark.simd_conformance(family="convolution")


def test_conformance(implementation: Implementation, function: Function, case: Case, simd_seed: int) -> None:
    check(implementation, function, case, simd_seed)
