"""Conformance of GatherElements on every implementation under test."""

import pytest

from simdbind.conformance.plugin import check

pytestmark = pytest.mark.simd_conformance(family="gather")


def test_conformance(implementation, function, case, simd_seed):
    check(implementation, function, case, simd_seed)
