"""Conformance of the pooling family on every implementation and ISA under test."""

import pytest

from tests.conformance.check import check

pytestmark = pytest.mark.conformance("pooling_average", "pooling_max32f", "pooling_max16b", "pooling_max8u")


def test_conformance(implementation, function, case, seed):
    check(implementation, function, case, seed)
