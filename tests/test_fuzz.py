"""Hypothesis fuzzing of the public API with valid and invalid argument mixes.

Every call must either return the reference result or raise a SimdBindError (a typed, named error). Any other
exception, a crash, or a partly written `out` is a failure. Bounded by the hypothesis profile (see conftest).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdbind
from simdbind.conformance.families.elementwise import reference

DTYPES = st.sampled_from([np.float32, np.float32, np.float32, np.float64, np.int32, np.uint8])
SHAPES = st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple)


@st.composite
def arrays(draw, shape=None):
    shape = draw(SHAPES) if shape is None else shape
    dtype = draw(DTYPES)
    array = np.asarray(draw(st.lists(st.floats(-4, 4, width=32), min_size=int(np.prod(shape)),
                                     max_size=int(np.prod(shape)))), dtype=np.float64).astype(dtype).reshape(shape)
    if draw(st.booleans()) and array.ndim >= 1 and array.shape[-1] > 1:
        array = array[..., ::-1]  # a negative-stride view
    return array


VALID_OPS = {"sum": "sum", "product": "product", "max": "max", "min": "min", "SUM": "sum", 1: "sum", 3: "min"}


@st.composite
def eltwise_arguments(draw):
    shape = draw(SHAPES)
    count = draw(st.integers(0, 4))
    same = draw(st.booleans())
    inputs = [draw(arrays(shape if same else None)) for _ in range(count)]
    op = draw(st.sampled_from(["sum", "product", "max", "min", "SUM", 1, 3, 9, -1, "mean", None, 2.0]))
    weights = draw(st.one_of(st.none(), st.lists(st.floats(-2, 2, width=32), max_size=5)))
    out_kind = draw(st.sampled_from(["none", "fresh", "wrong", "alias0", "alias_last"]))
    return inputs, op, weights, out_kind


def make_out(kind, inputs):
    if kind == "none" or not inputs:
        return None
    if kind == "fresh":
        return np.full(inputs[0].shape, 7.0, np.float32)
    if kind == "wrong":
        return np.full((3, 3, 3), 7.0, np.float32)
    return inputs[0] if kind == "alias0" else inputs[-1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eltwise_arguments())
def test_eltwise_never_fails_untyped(arguments):
    inputs, op, weights, out_kind = arguments
    out = make_out(out_kind, inputs)
    before = None if out is None else out.copy()
    try:
        result = simdbind.eltwise(inputs, op, weights, out=out)
    except simdbind.SimdBindError:
        if out is not None:  # nothing was written
            np.testing.assert_array_equal(out, before)
        return
    name = VALID_OPS[op]  # the call succeeded, so op was one of the valid spellings
    w = np.ones(len(inputs), np.float32) if weights is None else np.asarray(weights, np.float32)
    expected = reference.eltwise([np.asarray(x, np.float32) for x in (before_inputs(inputs, out, before))], name, w)
    assert result.shape == expected.shape
    if name == "sum":
        np.testing.assert_allclose(result, expected, rtol=0, atol=2 * len(inputs) ** 2 * 2.0 ** -24 * 16)
    else:
        np.testing.assert_array_equal(result, expected)


def before_inputs(inputs, out, before):
    """The inputs as they were before the call (an in-place call overwrote inputs[0])."""
    return [before if (out is not None and x is out) else x for x in inputs]
