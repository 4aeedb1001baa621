"""Conformance of the inner-product family on every implementation under test."""

import pytest

from simdbind.conformance.plugin import check

pytestmark = pytest.mark.simd_conformance(family="inner_product")


def test_conformance(implementation, function, case, simd_seed):
    check(implementation, function, case, simd_seed)
