"""Conformance of the inner-product family on every implementation and ISA under test."""

import pytest

from tests.conformance.check import check

pytestmark = pytest.mark.conformance("inner_product_32f", "inner_product_layer", "inner_product_8i")


def test_conformance(implementation, function, case, seed):
    check(implementation, function, case, seed)
