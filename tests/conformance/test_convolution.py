"""Conformance of the convolution family on every implementation and ISA under test."""

import pytest

from tests.conformance.check import check

pytestmark = pytest.mark.conformance("convolution32f")


def test_conformance(implementation, function, case, seed):
    check(implementation, function, case, seed)
