"""Conformance of GatherElements on every implementation and ISA under test."""

import pytest

from tests.conformance.check import check

pytestmark = pytest.mark.conformance("gather_elements")


def test_conformance(implementation, function, case, seed):
    check(implementation, function, case, seed)
