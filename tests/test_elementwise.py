"""simdbind.eltwise: values on hand-checked inputs and every argument rule."""

from __future__ import annotations

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError


@pytest.fixture(params=["api", "abi"])
def library(request, bundled):
    return bundled if request.param == "api" else simdbind.load(simdbind.bundled_path())


def f32(*values):
    return np.array(values, np.float32)


def test_hand_checked_values(library):
    a, b, c = f32(1, -2, 3), f32(4, 5, -6), f32(0.5, 0.5, 2)
    np.testing.assert_array_equal(simdbind.eltwise([a, b, c], "product", library=library), f32(2, -5, -36))
    np.testing.assert_array_equal(simdbind.eltwise([a, b, c], "sum", [1, 2, -2], library=library), f32(8, 7, -13))
    np.testing.assert_array_equal(simdbind.eltwise([a, b, c], "max", library=library), f32(4, 5, 3))
    np.testing.assert_array_equal(simdbind.eltwise([a, b, c], simdbind.EltwiseOperation.MIN, library=library),
                                  f32(0.5, -2, -6))
    np.testing.assert_array_equal(simdbind.eltwise([a, b], 1, library=library), a + b)  # sum, default weights 1


def test_max_nan_rule_follows_the_later_operand(library):
    # Spec 3.2: a > b ? a : b, so NaN in src[0] is replaced, NaN in the last input survives.
    nan = np.float32("nan")
    out = simdbind.eltwise([f32(nan, 1), f32(2, nan)], "max", library=library)
    assert out[0] == 2 and np.isnan(out[1])


def test_multidimensional_and_noncontiguous_inputs(library):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.ones((4, 3, 2), np.float32).T  # non-contiguous view, same shape as x
    out = simdbind.eltwise([x, y], "sum", library=library)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, x + 1)


def test_in_place_on_first_input(library):
    a, b = f32(1, 2, 3), f32(3, 2, 1)
    result = simdbind.eltwise([a, b], "max", out=a, library=library)
    assert result is a
    np.testing.assert_array_equal(a, f32(3, 2, 3))


@pytest.mark.parametrize("inputs, op, kwargs, error, message", [
    ([f32(1)], "sum", {}, ArgumentError, "at least 2"),
    ([f32(1), f32(1, 2)], "sum", {}, ArgumentError, r"inputs\[1\]: must have the shape"),
    ([f32(1), np.array([1.0])], "sum", {}, DTypeError, r"inputs\[1\]: must have dtype float32"),
    ([f32(1), f32(1)], "average", {}, ArgumentError, "op: must be one of"),
    ([f32(1), f32(1)], 7, {}, ArgumentError, "op: must be one of"),
    ([f32(1), f32(1)], "max", {"weights": [1, 1]}, ArgumentError, "weights: only allowed"),
    ([f32(1), f32(1)], "sum", {"weights": [1, 1, 1]}, ArgumentError, "weights: must have one value per input"),
    ([f32(1), f32(1)], "sum", {"out": np.zeros(1, np.float64)}, DTypeError, "out: must have dtype"),
    ([f32(1), f32(1)], "sum", {"out": np.zeros(2, np.float32)}, ArgumentError, "out: must have shape"),
    ("ab", "sum", {}, ArgumentError, "inputs: must be a list or tuple"),
])
def test_bad_arguments_raise_named_errors(library, inputs, op, kwargs, error, message):
    with pytest.raises(error, match=message):
        simdbind.eltwise(inputs, op, library=library, **kwargs)


def test_out_must_not_overlap_later_inputs_and_is_untouched_on_error(library):
    a, b = f32(1, 2), f32(3, 4)
    c = np.array([5, 6, 7], np.float32)
    out = c[:2]
    with pytest.raises(ArgumentError, match="must not overlap"):
        simdbind.eltwise([a, b, c[:2]], "sum", out=out, library=library)
    np.testing.assert_array_equal(c, f32(5, 6, 7))


def test_out_partially_overlapping_first_input_is_refused(library):
    buf = np.arange(5, dtype=np.float32)
    with pytest.raises(ArgumentError, match="partially"):
        simdbind.eltwise([buf[:4], f32(1, 1, 1, 1)], "sum", out=buf[1:], library=library)
    np.testing.assert_array_equal(buf, np.arange(5, dtype=np.float32))


def test_read_only_and_strided_out_are_refused(library):
    ro = np.zeros(2, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ArgumentError, match="writeable"):
        simdbind.eltwise([f32(1, 2), f32(1, 2)], "sum", out=ro, library=library)
    with pytest.raises(ArgumentError, match="C-contiguous"):
        simdbind.eltwise([f32(1, 2), f32(1, 2)], "sum", out=np.zeros(4, np.float32)[::2], library=library)
