"""simdbind.activation: constructors, resolve() and its rules; the reference on hand-checked values; the C
epilogue (through InnerProduct32f with K = 1, so C = act(x) exactly) against the reference at every ISA."""

from __future__ import annotations

import math

import numpy as np
import pytest

import simdbind
from simdbind.conformance.activation import activate, lipschitz
from simdbind import ArgumentError, DTypeError
from simdbind import activation as act


def test_enum_values_match_spec_2_4():
    names = ["identity", "relu", "leaky_relu", "restrict_range", "prelu", "elu", "hswish", "mish", "hard_sigmoid",
             "swish", "gelu"]
    for value, name in enumerate(names):
        params = [1.0, 2.0, 3.0] if name == "prelu" else None
        if name in ("leaky_relu",):
            params = [0.5]
        if name == "restrict_range":
            params = [0, 1]
        assert act.resolve(name, params, 3)[0] == value
        assert act.resolve(value, params, 3)[0] == value


def test_constructors_and_defaults_in_c_order():
    assert act.resolve(act.identity(), None, 4) == (0, None)
    assert act.resolve("relu", None, 4) == (1, None)
    assert act.resolve("gelu", None, 4) == (10, None)
    kind, p = act.resolve(act.leaky_relu(-0.25), None, 4)
    assert kind == 2 and p.tolist() == [-0.25]
    assert act.resolve(act.restrict_range(-1, 6), None, 4)[1].tolist() == [-1, 6]
    np.testing.assert_allclose(act.resolve("hswish", None, 4)[1], [3, 1 / 6])          # shift, scale
    np.testing.assert_allclose(act.resolve("hard_sigmoid", None, 4)[1], [1 / 6, 0.5])  # scale, shift
    np.testing.assert_allclose(act.resolve(act.hard_sigmoid(0.2, 0.4), None, 4)[1], [0.2, 0.4])
    assert act.resolve("mish", None, 4)[1].tolist() == [20]
    assert act.resolve("elu", None, 4)[1].tolist() == [1]
    assert act.resolve("swish", [2.5], 4)[1].tolist() == [2.5]
    kind, p = act.resolve(act.prelu([1, -2, 3]), None, 3)
    assert kind == 4 and p.dtype == np.float32 and p.tolist() == [1, -2, 3]
    assert act.resolve(simdbind.Activation.ELU, [0.5], 1)[1].tolist() == [0.5]
    assert act.restrict_range(-math.inf, 6.0).params == (-math.inf, 6.0)  # one-sided clamp allowed
    assert act.leaky_relu(0.1) == act.leaky_relu(0.1) and act.leaky_relu(0.1) != act.leaky_relu(0.2)


def test_resolved_params_are_read_only_copies():
    slopes = np.array([1.0, 2.0], np.float32)
    spec = act.prelu(slopes)
    slopes[0] = 99
    assert spec.params.tolist() == [1.0, 2.0] and not spec.params.flags.writeable


@pytest.mark.parametrize("activation, params, channels, message", [
    ("swish3", None, 2, "activation: must be one of"),
    (11, None, 2, "activation: must be one of"),
    (-1, None, 2, "activation: must be one of"),
    ("leaky_relu", None, 2, "params: activation='leaky_relu' needs slope"),
    ("restrict_range", None, 2, "needs lower, upper"),
    ("prelu", None, 2, "needs one slope per channel"),
    ("prelu", [1, 2, 3], 2, r"one slope per output channel \(2\), got 3"),
    ("prelu", [[1, 2]], 2, "1-D"),
    ("prelu", [1, np.nan], 2, "must be finite"),
    ("relu", [1], 2, "takes none, got 1"),
    ("hswish", [1], 2, r"takes 2 \(shift, scale\), got 1"),
    ("elu", [np.nan], 2, "alpha: must be finite"),
    ("leaky_relu", [np.inf], 2, "slope: must be finite"),
    ("restrict_range", [np.nan, 0], 2, "lower: must not be NaN"),
    ("mish", [1e39], 2, "must fit in float32"),
    ("swish", [True], 2, "slope: must be a real number"),
    ("swish", "fast", 2, "params: must be a sequence"),
    (act.relu(), [1], 2, "params: must be None when activation is an ActivationSpec"),
])
def test_rules(activation, params, channels, message):
    with pytest.raises(ArgumentError, match=message):
        act.resolve(activation, params, channels)


def test_dtype_rules():
    with pytest.raises(DTypeError, match="slopes"):
        act.prelu(np.array(["a"]))
    with pytest.raises(DTypeError, match="params"):
        act.resolve("elu", np.array([True]), 1)


def test_reference_hand_checked_values():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 3.0])
    np.testing.assert_array_equal(activate(x, "relu"), [0, 0, 0, 1, 3])
    np.testing.assert_allclose(activate(x, "leaky_relu", [0.1]), [-0.2, -0.1, 0, 1, 3])
    np.testing.assert_array_equal(activate(x, "restrict_range", [-1.5, 2]), [-1.5, -1, 0, 1, 2])
    np.testing.assert_allclose(activate(x, "elu", [1.0])[:2], [math.exp(-2) - 1, math.exp(-1) - 1])
    np.testing.assert_allclose(activate(x, "hswish", [3, 1 / 6]), [-2 / 6, -2 / 6, 0, 4 / 6, 3])
    np.testing.assert_allclose(activate(x, "hard_sigmoid", [0.2, 0.5]), [0.1, 0.3, 0.5, 0.7, 1.0])
    np.testing.assert_allclose(activate(x, "swish", [1.0])[3], 1 / (1 + math.exp(-1)))
    np.testing.assert_allclose(activate(x, "gelu")[3], 0.5 * (1 + math.erf(1 / math.sqrt(2))))
    np.testing.assert_allclose(activate(x, "mish", [20])[3], math.tanh(math.log1p(math.e)))
    np.testing.assert_array_equal(activate(np.array([25.0]), "mish", [20]), [25.0])  # above threshold: x
    np.testing.assert_allclose(activate(np.array([[-1.0, -1.0]]), "prelu", [0.5, 2.0], channel_axis=1), [[-0.5, -2]])
    assert lipschitz("leaky_relu", [-3.0]) == 3.0 and lipschitz("identity") == 1.0


def test_reference_nan_follows_upstream_max():
    assert math.isnan(activate(np.array([np.nan]), "relu")[0])  # Max(0, NaN) = 0 > NaN ? 0 : NaN = NaN


ALL = [("identity", None), ("relu", None), ("leaky_relu", [-0.3]), ("restrict_range", [-0.5, 0.25]),
       ("prelu", "slopes"), ("elu", [0.7]), ("hswish", [3, 1 / 6]), ("mish", [20]), ("mish", [0.5]),
       ("hard_sigmoid", [0.2, 0.5]), ("swish", [1.0]), ("swish", [-2.0]), ("gelu", None)]


@pytest.mark.parametrize("name, params", ALL, ids=[f"{n}-{p}" for n, p in ALL])
def test_c_epilogue_matches_reference_at_every_isa(bundled, name, params):
    # K = 1 and B = 1: the sum is exact, so C = act(x + bias) tests the epilogue alone, over a wide range of x
    # (exp overflow and underflow included).
    x = np.concatenate([np.linspace(-30, 30, 241), [-100.0, -88.5, 88.5, 100.0, -0.0, 1e-30]]).astype(np.float32)
    N = x.size
    bias = np.linspace(-0.5, 0.5, N).astype(np.float32)
    slopes = np.linspace(-2, 2, N).astype(np.float32)
    p = slopes if params == "slopes" else params
    expected = activate(x.astype(np.float64)[None, :] + bias, name, p, channel_axis=1).astype(np.float32)
    A = np.ones((1, 1), np.float32)
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            with simdbind.InnerProduct32f(1, N, 1, bias=bias, activation=name, params=p, weight=x[None, :],
                                          library=bundled) as ip:
                got = ip.forward(A)
        np.testing.assert_allclose(got, expected, rtol=4e-6, atol=4e-7 * max(1, np.abs(p).max() if p is not None
                                                                            else 1), err_msg=f"{name} at {isa}")


def test_at_mish_s_jump_either_branch_is_accepted_and_still_checked():
    from simdbind.conformance.activation import activate, either_side_of_the_jump

    pre = np.array([0.49999, 0.50001, 0.2, 0.9])  # exact pre-activations; threshold 0.5, kernel rounding 1e-3
    expected = activate(pre, "mish", [0.5]).astype(np.float32)
    curve = activate(pre, "mish", [np.inf]).astype(np.float32)
    kernel = expected.copy()
    kernel[0], kernel[1] = pre[0], curve[1]  # a kernel that rounded both near-threshold values across the jump
    settled = either_side_of_the_jump(expected, pre, kernel, "mish", [0.5], 1e-3)
    np.testing.assert_array_equal(settled, kernel)
    far = expected.copy()
    far[2] = pre[2]  # the identity branch far from the threshold: still wrong
    assert either_side_of_the_jump(expected, pre, far, "mish", [0.5], 1e-3)[2] == expected[2]
    assert either_side_of_the_jump(expected, pre, kernel, "relu", None, 1e-3) is expected
