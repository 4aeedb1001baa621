"""Each function's case domain (Function.check_domain): what its cases span. The cases explore draws lie inside it,
so that every repro line explore prints is accepted by `simdbind conformance --case`; values outside it are refused
with the field named."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from simdbind.conformance import registry as _registry  # noqa: F401  (registers every function)
from simdbind.conformance.model import REGISTRY, DescriptorError


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_case_explore_draws_is_inside_the_domain(name):
    function = REGISTRY[name]

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(function.space())
    def inside(case):
        function.check_domain(function.parse(case.descriptor))

    inside()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_listed_case_is_inside_the_domain(name):
    function = REGISTRY[name]
    for case in function.cases():
        function.check_domain(case)


@pytest.mark.parametrize("descriptor, message", [
    ("eltwise op=maxx count=2 size=17",
     "op=maxx: eltwise has no such op (one of max, min, product, sum) (did you mean 'max'?)"),
    ("eltwise op=max count=-1 size=17", "count=-1: must be >= 1 for eltwise"),
    ("eltwise op=max count=2 size=17 special=zero",
     "special=zero: eltwise has no such special (one of -, classes, nan_inf)"),
    ("unary op=exp size=0", "size=0: must be >= 1 for unary"),
    ("pooling_max32f layout=nchw channels=3 height=5 width=5 kernel=3x-2 stride=1x1 ceil=false",
     "kernel=3x-2: each value must be >= 1 for pooling_max32f"),
])
def test_a_value_outside_is_refused_with_its_field(descriptor, message):
    function = REGISTRY[descriptor.split()[0]]
    with pytest.raises(DescriptorError) as refused:
        function.check_domain(function.parse(descriptor))
    assert str(refused.value) == message
