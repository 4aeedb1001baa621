"""The case model: one descriptor grammar for every function, printed and parsed back into the same case, and
each function's parameter space drawing valid cases in that grammar."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdbind.conformance.registry  # noqa: F401  (registers every function)
from simdbind.conformance import runner
from simdbind.conformance.model import REGISTRY, Case, DescriptorError, case_from_descriptor

FUNCTIONS = sorted(name for name in REGISTRY if not name.startswith("fake"))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_case_of_every_profile_parses_back_into_itself(name):
    cases = REGISTRY[name].cases()
    assert cases
    for case in cases:
        parsed = case_from_descriptor(case.descriptor)
        assert parsed == case, case.descriptor
        assert parsed.params == case.params and (parsed.dtype, parsed.layout, parsed.group) == \
            (case.dtype, case.layout, case.group)
        assert parsed.descriptor == case.descriptor


def test_descriptors_follow_the_grammar():
    conv = REGISTRY["convolution32f"]
    case = conv.parse("convolution32f layout=nhwc src_c=3 src_h=5 src_w=7 dst_c=2 kernel=1x3 pad=0.1.0.2 groups=1")
    assert case.params["kernel"] == (1, 3) and case.params["pad"] == (0, 1, 0, 2) and case.layout == "nhwc"
    assert case.params["stride"] == (1, 1) and case.params["activation"] == "identity"  # defaults
    # Any key order parses; the printed form is canonical (defaults left out).
    same = conv.parse("convolution32f dst_c=2 kernel=1x3 src_w=7 src_h=5 src_c=3 pad=0.1.0.2 layout=nhwc")
    assert same == case and case.descriptor == \
        "convolution32f layout=nhwc src_c=3 src_h=5 src_w=7 dst_c=2 kernel=1x3 pad=0.1.0.2"
    gather = case_from_descriptor("gather_elements dtype=bf16 index=int32 shape=37 axis=0 idx_count=5 const=true "
                                  "negative=false")
    assert gather.dtype == "bf16" and gather.params["shape"] == (37,) and gather.params["replicated"] is False
    edge = case_from_descriptor("unary op=sin size=90 special=specials group=edge")
    assert edge.group == "edge" and edge.params == {"op": "sin", "size": 90, "special": "specials"}


@pytest.mark.parametrize("text, message", [
    ("nothing size=3", "unknown function 'nothing'"),
    ("eltwise op=max count=2", "size= is required"),
    ("eltwise op=max count=2 size=x", "size=x: not a int value"),
    ("eltwise op=max count=2 size=3 colour=red", "'colour=red' is not key=value with a key of eltwise"),
    ("eltwise op=max count=2 size=3 size=4", "size given twice"),
    ("eltwise op=max count=2 size=3 group=odd", "group must be one of main, edge"),
    ("pooling_max8u layout=nchw channels=1 height=3 width=3 kernel=2x2x2 stride=1x1 ceil=false",
     "kernel: 2 values expected (ky, kx), got 3"),
    ("", "unknown function ''"),
])
def test_malformed_descriptors_are_refused_with_the_reason(text, message):
    with pytest.raises(DescriptorError) as error:
        case_from_descriptor(text)
    assert message in str(error.value)


def test_a_case_in_no_grid_is_selected_by_its_descriptor():
    text = "eltwise op=max count=7 size=201"
    eltwise = REGISTRY["eltwise"]
    assert all(c.descriptor != text for c in eltwise.cases())
    (case,) = runner.select_cases(eltwise, "ci", None, text)
    assert case.params == {"op": "max", "count": 7, "size": 201, "special": "", "weight0": ""} \
        and case.profiles == ()
    assert runner.select_cases(REGISTRY["unary"], "ci", None, text) == []  # another function's descriptor


def test_case_equality_includes_params_but_not_profiles():
    a = Case("f", "f x=1", {"x": 1}, profiles=("ci",))
    assert a == Case("f", "f x=1", {"x": 1}, profiles=()) and a != Case("f", "f x=1", {"x": 2})


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_drawn_case_of_the_space_is_valid_and_parses_back(name):
    function = REGISTRY[name]

    @settings(max_examples=30, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data):
        case = data.draw(function.space())
        assert case_from_descriptor(case.descriptor) == case
        function.inputs(case, case.rng(1))  # the inputs of every drawn case can be made

    check()


def test_kept_regression_cases_join_the_ci_and_full_profiles(tmp_path):
    from simdbind.conformance.model import regression_cases

    (tmp_path / "elementwise.txt").write_text("# kept by explore\n"
                                             "eltwise op=min count=7 size=201  # a comment\n\n"
                                             "unary op=exp size=3\n")
    kept = regression_cases(REGISTRY["eltwise"], tmp_path)
    assert [(c.descriptor, c.profiles) for c in kept] == [("eltwise op=min count=7 size=201", ("ci", "full"))]
    # The package's own files: every line parses, and the grid profiles run it.
    for function in REGISTRY.values():
        for case in regression_cases(function):
            assert case in function.cases() and "ci" in next(c for c in function.cases() if c == case).profiles
