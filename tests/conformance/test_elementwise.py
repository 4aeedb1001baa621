"""Conformance of the elementwise family on every implementation and ISA under test."""

import pytest

from tests.conformance.check import check

pytestmark = pytest.mark.conformance("eltwise", "unary", "softmax", "softmax16b", "lrn", "shuffle")


def test_conformance(implementation, function, case, seed):
    check(implementation, function, case, seed)
