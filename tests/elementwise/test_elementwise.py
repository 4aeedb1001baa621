"""simdbind.eltwise: values on hand-checked inputs and every argument rule."""

from __future__ import annotations

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError


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
    # Upstream folds max as a > b ? a : b, so NaN in src[0] is replaced, NaN in the last input survives.
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


# =====================================================================================================================
# unary, softmax, lrn, shuffle (elementwise family)
# =====================================================================================================================
import dataclasses  # noqa: E402
import math  # noqa: E402

import ml_dtypes  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simdbind.conformance.families.elementwise import reference  # noqa: E402


def test_the_eltwise_reference_sums_with_unit_weights_when_none_are_given(library):
    """weights=None is a plain sum in the reference, as it is in simdbind.eltwise (two float32 terms: the float64
    sum is exact, so its one rounding gives the float32 sum bit for bit)."""
    rng = np.random.default_rng(18)
    a, b = (rng.uniform(-1, 1, 37).astype(np.float32) for _ in range(2))
    expected = reference.eltwise([a, b], "sum", [1.0, 1.0])
    np.testing.assert_array_equal(reference.eltwise([a, b], "sum"), expected)
    np.testing.assert_array_equal(simdbind.eltwise([a, b], "sum", library=library), expected)


@pytest.fixture(params=["base", "sse41", "avx2", "avx512bw"])
def isa_library(request, bundled):
    """The bundled library switched to each ISA this machine runs (others are skipped)."""
    if request.param not in bundled.isas_supported:
        pytest.skip(f"{request.param} is not supported on this machine")
    with bundled.use_isa(request.param):
        yield bundled


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


NAN, INF = float("nan"), float("inf")
UNARY_X = f32(2.5, -0.5, -0.3, 0.0, -0.0, 1.0, NAN, INF, -INF, 4.0, -2.5, 0.49999997, 3e9)
UNARY_EXPECTED = {  # written by hand from the contract (the unary table, docs/guide/tolerance.md)
    "abs": f32(2.5, 0.5, 0.3, 0.0, 0.0, 1.0, NAN, INF, INF, 4.0, 2.5, 0.49999997, 3e9),
    "neg": f32(-2.5, 0.5, 0.3, -0.0, 0.0, -1.0, NAN, -INF, INF, -4.0, 2.5, -0.49999997, -3e9),
    "ceil": f32(3, -0.0, -0.0, 0.0, -0.0, 1, NAN, INF, -INF, 4, -2, 1, 3e9),
    "floor": f32(2, -1, -1, 0.0, -0.0, 1, NAN, INF, -INF, 4, -3, 0, 3e9),
    "round": f32(3, -1, -0.0, 0.0, -0.0, 1, NAN, INF, -INF, 4, -3, 0, 3e9),
    "sign": f32(1, -1, -1, 0, 0, 1, 1, 1, -1, 1, -1, 1, 1),
    "zero": f32(*([0.0] * 13)),
    "sqrt": f32(math.sqrt(2.5), NAN, NAN, 0.0, -0.0, 1, NAN, INF, NAN, 2, NAN, math.sqrt(0.49999997), math.sqrt(3e9)),
    "rcp": f32(0.4, -2, 1 / -0.3, INF, -INF, 1, NAN, 0.0, -0.0, 0.25, -0.4, 1 / 0.49999997, 1 / 3e9),
}
with np.errstate(invalid="ignore", divide="ignore"):
    UNARY_EXPECTED["rsqrt"] = np.float32(1) / np.sqrt(UNARY_X)  # 1.0f / sqrtf(x), the contract's definition


@pytest.mark.parametrize("op", sorted(UNARY_EXPECTED))
def test_unary_exact_ops_hand_checked_bitwise(isa_library, op):
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = UNARY_EXPECTED[op]
        out = simdbind.unary(UNARY_X, op, library=isa_library)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(out), nan)
    np.testing.assert_array_equal(bits(out)[~nan], bits(expected)[~nan])  # signed zeros included


def test_unary_not_is_bitwise(isa_library):
    x = f32(1.0, -2.0, 0.0, NAN, 3.5)
    out = simdbind.unary(x, "not", library=isa_library)
    np.testing.assert_array_equal(bits(out), ~bits(x))
    assert out[0] == np.float32(-3.9999998)  # upstream's not is bitwise (~x), not logical


def test_unary_special_values_of_transcendental_ops(isa_library):
    x = f32(0.0, -0.0, INF, -INF, NAN, 1.0)
    u = lambda op: simdbind.unary(x, op, library=isa_library)  # noqa: E731
    exp = u("exp")
    np.testing.assert_array_equal(exp[:4], f32(1, 1, INF, 0))  # exp(0) == 1 exactly
    assert np.isnan(exp[4]) and abs(exp[5] - np.float32(math.e)) <= np.spacing(np.float32(math.e))
    np.testing.assert_array_equal(u("log")[[0, 1, 2, 5]], f32(-INF, -INF, INF, 0))
    assert np.isnan(u("log")[[3, 4]]).all() and np.isnan(simdbind.unary(f32(-1e-3), "log", library=isa_library))
    for op, at_inf in (("erf", 1.0), ("tanh", 1.0)):
        y = u(op)
        np.testing.assert_array_equal(bits(y[:2]), bits(f32(0.0, -0.0)))
        assert y[2] == at_inf and y[3] == -at_inf and np.isnan(y[4])
    np.testing.assert_array_equal(bits(u("sin")[:2]), bits(f32(0.0, -0.0)))
    assert np.isnan(u("sin")[2:5]).all() and np.isnan(u("cos")[2:5]).all() and u("cos")[0] == 1.0


def _ulp_error(actual, exact64):
    exact32 = exact64.astype(np.float32)
    spacing = np.spacing(np.abs(exact32)).astype(np.float64)
    return np.abs(actual.astype(np.float64) - exact64) / spacing


@pytest.mark.parametrize("op, low, high", [("exp", -87.0, 88.0), ("exp", -1.0, 1.0), ("log", 1e-30, 1e30),
                                           ("log", 0.5, 2.0), ("erf", -4.5, 4.5), ("tanh", -10.0, 10.0),
                                           ("tanh", -0.7, 0.7), ("sin", -6000.0, 6000.0), ("cos", -10.0, 10.0),
                                           ("sin", -1e7, 1e7)])
def test_unary_bundled_transcendental_ops_within_2_ulp(isa_library, op, low, high):
    # vmath.h's documented accuracy (<= 1.5 ulp), checked on a dense sample at every ISA.
    rng = np.random.default_rng(7)
    if op == "log":
        x = (10.0 ** rng.uniform(np.log10(low), np.log10(high), 1 << 16)).astype(np.float32)
    else:
        x = rng.uniform(low, high, 1 << 16).astype(np.float32)
    exact = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
             "erf": lambda v: np.array([math.erf(t) for t in v])}[op](x.astype(np.float64))
    error = _ulp_error(simdbind.unary(x, op, library=isa_library), exact)
    assert error.max() <= 2.0, f"{op}: {error.max():.2f} ulp at x={x[np.argmax(error)]!r}"


def test_unary_log_keeps_its_relative_accuracy_next_to_one(isa_library):
    # Every float within 8192 ulps of 1 on either side, where log(x) ~ x - 1 is tiny: a reduction that rounds
    # anything at the scale of 1 there (vmath.h: e*ln2 against log(2) below 1, log(c) = 0 above) errs by thousands
    # of ulps; a random sample rarely comes this close.
    one = int(bits(f32(1.0))[0])
    x = np.r_[np.arange(one - 8192, one), np.arange(one + 1, one + 8193)].astype(np.uint32).view(np.float32)
    error = _ulp_error(simdbind.unary(x, "log", library=isa_library), np.log(x.astype(np.float64)))
    assert error.max() <= 1.5, f"{error.max():.2f} ulp at x={x[np.argmax(error)]!r}"


def test_unary_exp_at_multiples_of_ln2_over_16_reads_every_table_entry_right(isa_library):
    # x = k ln2/16 leaves r ~ 0, so exp(x) is the permuted table's 2^(j/S) (vmath.h, S = 8 at AVX2, 16 at AVX-512)
    # scaled: every entry at many scales. Measured maxima 0.85-0.95 ulp; an entry one ulp off lands above 1.
    x = (np.arange(-1600, 1400) * (math.log(2) / 16)).astype(np.float32)
    error = _ulp_error(simdbind.unary(x, "exp", library=isa_library), np.exp(x.astype(np.float64)))
    assert error.max() <= 1.0, f"{error.max():.3f} ulp at x={x[np.argmax(error)]!r}"


def test_unary_exp_on_every_float_where_the_fast_scaling_ends(isa_library):
    # exp's fast path adds floor(n/S) to the result's exponent for n in [-126 S + 1, 128 S - 1] (vmath.h); past that
    # a slower scaling takes over. Every float across both ends (normal results down to -87.25, the largest finite
    # ones up to 88.72, then overflow) must be within the contract: an exponent carried into the sign or the
    # infinity's bits would be wildly wrong there.
    def floats(a, b):
        return np.arange(np.float32(a).view(np.int32), np.float32(b).view(np.int32) + 1, dtype=np.int32).view(np.float32)

    low, high = -floats(86.5, 87.5), floats(86.5, 88.8)
    for x in (low, high):
        y = simdbind.unary(x, "exp", library=isa_library)
        exact = np.exp(x.astype(np.float64))
        with np.errstate(over="ignore"):
            finite = np.isfinite(exact.astype(np.float32))
        error = _ulp_error(y[finite], exact[finite])
        assert error.max() <= 1.5, f"{error.max():.3f} ulp at x={x[finite][np.argmax(error)]!r}"
        assert (y[~finite] == np.inf).all()


def test_unary_sin_cos_where_the_c_library_takes_over(isa_library):
    # vmath.h reduces |x| <= 6000 exactly and hands the larger lanes of a vector to sinf/cosf; sin decides whether a
    # vector has any from its rounded quotient n, not from |x|. Every float in [5990, 6010] and the floats nearest
    # n * pi/2 for n up to 6000 (|x| about 9400, r smallest there), both signs, NaN and inf among them, between small
    # arguments in the same vectors: each lane within the contract, and the small lanes' bits those they have alone
    # (a lane the C library took that it should not changes them).
    near = np.arange(np.float32(5990).view(np.int32), np.float32(6010).view(np.int32) + 1, dtype=np.int32)
    multiples = (np.arange(3800, 6001) * (math.pi / 2)).astype(np.float32).view(np.int32)
    large = np.r_[near, (multiples[:, None] + np.arange(-3, 4)).ravel()].view(np.float32)
    large = np.r_[large, -large]
    small = np.linspace(-3, 3, large.size, dtype=np.float32)
    x = np.stack([large, small, small, small], axis=1).ravel()
    x[1::97] = np.nan
    x[2::89] = np.inf
    for op, exact in (("sin", np.sin), ("cos", np.cos)):
        y = simdbind.unary(x, op, library=isa_library)
        finite = np.isfinite(x)
        error = _ulp_error(y[finite], exact(x[finite].astype(np.float64)))
        assert error.max() <= 1.5, f"{op}: {error.max():.3f} ulp at x={x[finite][np.argmax(error)]!r}"
        assert np.isnan(y[~finite]).all()
        alone = simdbind.unary(small, op, library=isa_library)
        in_vectors = y.reshape(-1, 4)[:, 1]
        keep = np.isfinite(x.reshape(-1, 4)[:, 1])
        np.testing.assert_array_equal(bits(in_vectors[keep]), bits(alone[keep]))


def test_unary_subnormal_exp_results_and_subnormal_log_inputs(isa_library):
    x = f32(-100.0, -103.0, -87.5)
    y = simdbind.unary(x, "exp", library=isa_library)
    expected = np.exp(x.astype(np.float64)).astype(np.float32)
    assert (np.abs(bits(y).astype(np.int64) - bits(expected).astype(np.int64)) <= 1).all()
    z = simdbind.unary(f32(1e-40, 1.4e-45), "log", library=isa_library)
    np.testing.assert_allclose(z, np.log(np.array([1e-40, 1.4e-45], np.float32).astype(np.float64)), rtol=1e-6)


def test_unary_rsqrt_is_exact_one_over_sqrt(isa_library):
    x = (10.0 ** np.random.default_rng(3).uniform(-40, 38, 4099)).astype(np.float32)
    np.testing.assert_array_equal(simdbind.unary(x, "rsqrt", library=isa_library), np.float32(1) / np.sqrt(x))


@pytest.mark.parametrize("op", [m.name.lower() for m in simdbind.UnaryOperation])
def test_unary_tail_lanes_follow_the_body_semantics(isa_library, op):
    # Every value alone (always a tail) and inside a long array (body lanes) gives the same bits.
    values = f32(2.5, -0.5, -0.3, 0.0, -0.0, NAN, INF, -INF, 3e9, 1e-40, -2.0, 7.25, 88.9, -1e5, 0.1, 1.0, -0.7)
    with np.errstate(all="ignore"):
        whole = simdbind.unary(np.tile(values, 5), op, library=isa_library)
        for i, v in enumerate(values):
            alone = simdbind.unary(f32(v), op, library=isa_library)
            assert bits(alone)[0] == bits(whole)[i] or (np.isnan(alone[0]) and np.isnan(whole[i])), (op, v)


@pytest.mark.parametrize("op", [m.name.lower() for m in simdbind.UnaryOperation])
def test_unary_pipelined_lengths_and_in_place_keep_each_value_s_bits(isa_library, op):
    # The long operations run through a software pipeline (unary.dispatch.c, UNARY_STAGES: a ring of 8 vectors'
    # states): lengths inside, at and past the ring (around 8 vectors of 8 and of 16 lanes, and many times round
    # it), in place or not, must give every value the bits it gets alone.
    rng = np.random.default_rng(61)
    values = rng.uniform(-40, 40, 397).astype(np.float32)
    values[::7] = f32(0.0, -0.0, NAN, INF, -INF, 1e-40, 7000.0, 0.625, -88.9, 1.0, 0.5, -3e9, 2.0, 0.3, -0.7,
                      1e30, 6.5, -1e-30, 0.1, 2.5, 9.5, -6001.0, 88.0, 1e-3, 0.9, -0.2, 3.25, -7.0, 4.0, 11.0,
                      -0.001, 0.01, 5e5, -50.0, 2e-38, 0.75, -1.5, 42.0, 0.2, -4.5, 8.0, 100.0, -0.05, 12.5, 0.6,
                      -9.0, 1.5, 30.0, 0.005, -2.0, 60.0, 0.45, -33.0, 5.5, 0.35, -1.25, 3.5)
    with np.errstate(all="ignore"):
        alone = np.concatenate([simdbind.unary(values[i:i + 1], op, library=isa_library) for i in range(values.size)])
        for n in (7, 8, 63, 64, 65, 127, 128, 129, 200, 397):
            whole = simdbind.unary(values[:n], op, library=isa_library)
            in_place = values[:n].copy()
            simdbind.unary(in_place, op, out=in_place, library=isa_library)
            for got, how in ((whole, "whole"), (in_place, "in place")):
                same = (bits(got) == bits(alone[:n])) | (np.isnan(got) & np.isnan(alone[:n]))
                assert same.all(), (op, n, how, values[:n][~same][:3])


def _aligned_floats(n: int) -> np.ndarray:
    """n + 64 floats whose first lies on a 64-byte boundary."""
    raw = np.empty(n + 80, np.float32)
    start = (-raw.ctypes.data % 64) // 4
    return raw[start:start + n + 64]


@pytest.mark.parametrize("op", [m.name.lower() for m in simdbind.UnaryOperation])
def test_unary_at_every_placement_keeps_each_value_s_bits(isa_library, op):
    # Where dst and src lie decides where the loops start (unary.dispatch.c: from dst's first vector-aligned float,
    # after overlapping vectors at 0 and there, and a last one). At every float offset of dst within 64 bytes, with
    # src at another offset, at the same one or in place, and lengths around that start (one vector of 16 lanes past
    # the furthest offset and less), every value gets the bits it gets alone, and nothing outside dst changes.
    rng = np.random.default_rng(71)
    values = rng.uniform(-40, 40, 64).astype(np.float32)
    values[::3] = f32(0.0, -0.0, NAN, INF, -INF, 1e-40, 0.5, -2.5, 3e9, 1.0, -0.7, 0.625, 88.9, 7000.0, 2.0, 1e-3,
                      -1e30, 0.1, 6.5, -9.0, 1.5, 42.0)
    with np.errstate(all="ignore"):
        alone = np.concatenate([simdbind.unary(values[i:i + 1], op, library=isa_library) for i in range(values.size)])
    sentinel = np.float32(-12345.5)
    for n in (1, 8, 9, 16, 17, 24, 31, 32, 33, 47, 64):
        expected = alone[:n]
        for offset in range(16):
            for how in ("apart", "apart, placed alike", "in place"):
                buffer = _aligned_floats(n)
                buffer[:] = sentinel
                out = buffer[offset:offset + n]
                if how == "in place":
                    out[:] = values[:n]
                    x = out
                else:
                    x = _aligned_floats(n)[(offset + (5 if how == "apart" else 0)) % 16:][:n]
                    x[:] = values[:n]
                with np.errstate(all="ignore"):
                    simdbind.unary(x, op, out=out, library=isa_library)
                same = (bits(out) == bits(expected)) | (np.isnan(out) & np.isnan(expected))
                assert same.all(), (op, n, offset, how, values[:n][~same][:3])
                outside = np.concatenate([buffer[:offset], buffer[offset + n:]])
                assert (bits(outside) == bits(np.full_like(outside, sentinel))).all(), (op, n, offset, how)


@pytest.mark.parametrize("op", ["sum", "max", "min", "product"])
def test_eltwise_at_every_placement_keeps_each_value_s_bits(isa_library, op):
    # As for unary (eltwise.dispatch.c: blocks from dst's first vector-aligned float, the first and last vectors
    # folded ahead, where the inputs lie as dst does): at every float offset of dst within 64 bytes, with the inputs
    # at other offsets, at the same one or dst being one of them, two or three inputs, every value gets the bits it
    # gets alone and nothing outside dst changes.
    rng = np.random.default_rng(73)
    columns = rng.uniform(-8, 8, (3, 64)).astype(np.float32)
    columns[:, ::4] = f32(NAN, -0.0, INF, 0.0, 1e-40, -3.5, 2.0, -INF, 0.5, 1e30, -1.0, 7.0, 0.25, -2.0, 3.0, 1.0)
    weights = [1.5, -2.0, 0.75]
    sentinel = np.float32(-12345.5)
    for count in (2, 3):
        w = weights[:count] if op == "sum" else None
        with np.errstate(all="ignore"):
            alone = np.concatenate([simdbind.eltwise(list(columns[:count, i:i + 1]), op, w, library=isa_library)
                                    for i in range(columns.shape[1])])
        for n in (1, 8, 9, 17, 24, 31, 33, 47, 64):
            expected = alone[:n]
            for offset in range(16):
                for how in ("apart", "apart, placed alike", "out=inputs[0]", "out=inputs[1]"):
                    buffer = _aligned_floats(n)
                    buffer[:] = sentinel
                    out = buffer[offset:offset + n]
                    inputs = []
                    for k in range(count):
                        shift = 5 * k + 3 if how == "apart" else 0
                        x = _aligned_floats(n)[(offset + shift) % 16:][:n]
                        x[:] = columns[k, :n]
                        inputs.append(x)
                    if how.startswith("out="):
                        k = int(how[-2])
                        out[:] = columns[k, :n]
                        inputs[k] = out
                    with np.errstate(all="ignore"):
                        simdbind.eltwise(inputs, op, w, out=out, library=isa_library)
                    same = (bits(out) == bits(expected)) | (np.isnan(out) & np.isnan(expected))
                    assert same.all(), (op, count, n, offset, how, np.flatnonzero(~same)[:3])
                    outside = np.concatenate([buffer[:offset], buffer[offset + n:]])
                    assert (bits(outside) == bits(np.full_like(outside, sentinel))).all(), (op, n, offset, how)


def test_unary_matches_reference_on_every_op_and_shape(library):
    x = np.random.default_rng(5).uniform(1e-3, 5, (3, 4, 5)).astype(np.float32)
    for op in simdbind.UnaryOperation:
        out = simdbind.unary(x, op, library=library)
        assert out.shape == x.shape
        expected = reference.unary(x, op.name.lower())
        np.testing.assert_allclose(out.view(np.float32), expected, rtol=2.5e-7, atol=0)


def test_unary_in_place_and_enum_spellings(library):
    x = f32(1, -2, 3)
    assert simdbind.unary(x, "ABS", out=x, library=library) is x
    np.testing.assert_array_equal(x, f32(1, 2, 3))
    np.testing.assert_array_equal(simdbind.unary(x, simdbind.UnaryOperation.NEG, library=library), f32(-1, -2, -3))
    np.testing.assert_array_equal(simdbind.unary(x, 7, library=library), f32(-1, -2, -3))  # 7 == Neg
    assert simdbind.unary(np.zeros((0, 3), np.float32), "exp", library=library).shape == (0, 3)
    strided = np.arange(10, dtype=np.float32)[::2]
    np.testing.assert_array_equal(simdbind.unary(strided, "neg", library=library), -strided)


@pytest.mark.parametrize("x, op, kwargs, error, message", [
    (f32(1), "cube", {}, ArgumentError, "op: must be one of"),
    (f32(1), 17, {}, ArgumentError, "op: must be one of"),
    (f32(1), True, {}, ArgumentError, "op: must be one of"),
    (f32(1), 1.0, {}, ArgumentError, "op: must be one of"),
    (np.ones(2), "abs", {}, DTypeError, "x: must have dtype float32"),
    (f32(1, 2), "abs", {"out": np.zeros(3, np.float32)}, ArgumentError, "out: must have shape"),
    (f32(1, 2), "abs", {"out": np.zeros(2, np.float64)}, DTypeError, "out: must have dtype"),
    (f32(1, 2), "abs", {"out": [0, 0]}, ArgumentError, "out: must be a numpy.ndarray"),
])
def test_unary_bad_arguments(library, x, op, kwargs, error, message):
    with pytest.raises(error, match=message):
        simdbind.unary(x, op, library=library, **kwargs)


def test_unary_partial_overlap_refused_and_out_untouched(library):
    buf = np.arange(5, dtype=np.float32)
    with pytest.raises(ArgumentError, match="overlaps x"):
        simdbind.unary(buf[:4], "neg", out=buf[1:], library=library)
    np.testing.assert_array_equal(buf, np.arange(5, dtype=np.float32))


# -- softmax --------------------------------------------------------------------------------------------------
def test_softmax_values_and_axes(isa_library):
    out = simdbind.softmax(f32(1, 2, 3), library=isa_library)
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(out, e / e.sum(), atol=2.5e-7, rtol=0)
    x = np.random.default_rng(1).uniform(-20, 20, (3, 5, 4, 6)).astype(np.float32)
    for axis in (0, 1, 2, 3, -1, -3):
        np.testing.assert_allclose(simdbind.softmax(x, axis, library=isa_library), reference.softmax(x, axis),
                                   atol=2.5e-7, rtol=0)
    np.testing.assert_array_equal(simdbind.softmax(f32(-5, 7).reshape(2, 1), axis=1, library=isa_library),
                                  f32(1, 1).reshape(2, 1))  # count 1 gives exactly 1


def test_softmax_non_finite_limits(isa_library):
    x = np.array([[3, INF, 2, 0], [INF, INF, 1, -INF], [NAN, 1, 1, 1], [-INF] * 4, [-INF, 0, 0, -INF]], np.float32)
    for axis, data in ((1, x), (0, np.ascontiguousarray(x.T))):
        out = simdbind.softmax(data, axis=axis, library=isa_library)
        out = out if axis == 1 else out.T
        np.testing.assert_array_equal(out[0], f32(0, 1, 0, 0))
        np.testing.assert_array_equal(out[1], f32(0.5, 0.5, 0, 0))
        assert np.isnan(out[2]).all() and np.isnan(out[3]).all()
        np.testing.assert_array_equal(out[4], f32(0, 0.5, 0.5, 0))


def test_softmax_bf16_kinds_round_trip(isa_library):
    x = np.random.default_rng(2).uniform(-3, 3, (4, 37)).astype(np.float32)
    as_bf16 = x.astype(ml_dtypes.bfloat16)
    out = simdbind.softmax(as_bf16, library=isa_library)
    assert out.dtype == as_bf16.dtype
    raw = simdbind.softmax(as_bf16.view(np.uint16), library=isa_library)
    assert raw.dtype == np.uint16
    np.testing.assert_array_equal(out.view(np.uint16), raw)
    expected = reference.softmax16b(as_bf16.view(np.uint16))
    assert np.abs(raw.astype(np.int32) - expected.astype(np.int32)).max() <= 1


def _public_fields(library):
    """A Library's constructor arguments without its per-instance caches (functions, bindings)."""
    return {f.name: getattr(library, f.name) for f in dataclasses.fields(library) if not f.name.startswith("_")}


def test_softmax_uses_the_old_symbol_when_the_new_one_is_missing(bundled):
    calls = []

    class OldLibrary(simdbind.Library):
        def function(self, name):
            if name == "SimdSynetSoftmax32f":
                raise simdbind.FunctionNotAvailableError(name)
            calls.append(name)
            return super().function(name)

    old = OldLibrary(**_public_fields(bundled))
    x = f32(1, 2, 3)
    np.testing.assert_array_equal(simdbind.softmax(x, library=old), simdbind.softmax(x, library=bundled))
    assert calls == ["SimdSynetSoftmaxLayerForward"]


@pytest.mark.parametrize("x, kwargs, error, message", [
    (f32(1, 2), {"axis": 1}, ArgumentError, r"axis: must be in \[-1, 0\]"),
    (f32(1, 2), {"axis": -2}, ArgumentError, "axis: must be in"),
    (f32(1, 2), {"axis": 0.5}, ArgumentError, "axis: must be an integer"),
    (f32(1, 2), {"axis": True}, ArgumentError, "axis: must be an integer"),
    (np.float32(3), {}, ArgumentError, "at least one dimension"),
    (np.ones(2), {}, DTypeError, "x: must have dtype float32"),
    (f32(1, 2), {"out": np.zeros(2, np.uint16)}, DTypeError, "out: must have dtype float32"),
    (np.ones(2, np.uint16), {"out": np.zeros(2, np.float32)}, DTypeError, "out: must have dtype uint16"),
])
def test_softmax_bad_arguments(library, x, kwargs, error, message):
    with pytest.raises(error, match=message):
        simdbind.softmax(x, library=library, **kwargs)


def test_softmax_refuses_out_overlapping_x(library):
    x = f32(1, 2, 3)
    with pytest.raises(ArgumentError, match="must not overlap"):
        simdbind.softmax(x, out=x, library=library)
    np.testing.assert_array_equal(x, f32(1, 2, 3))


# -- LRN ------------------------------------------------------------------------------------------------------
def test_lrn_hand_checked(isa_library):
    x = f32(1, 2, 3).reshape(3, 1, 1)
    k = (1.0, 0.1, -0.75)
    out = simdbind.lrn(x, 1, k, library=isa_library).ravel()
    sums = [1 + 4, 1 + 4 + 9, 4 + 9]  # windows clipped at the edges, no division by the size
    expected = [v * (1 + 0.1 * s) ** -0.75 for v, s in zip((1, 2, 3), sums)]
    np.testing.assert_allclose(out, expected, rtol=2e-6)


@pytest.mark.parametrize("half, channels", [(0, 5), (2, 4), (3, 3), (2, 1), (5, 2), (2, 5), (1, 67)])
def test_lrn_nhwc_and_nchw_agree_with_the_reference_for_any_channel_count(isa_library, half, channels):
    x = np.random.default_rng(half * 100 + channels).uniform(-10, 10, (2, channels, 3, 5)).astype(np.float32)
    k = f32(1.0, 0.1, -0.75)
    nchw = simdbind.lrn(x, half, k, library=isa_library)
    nhwc = simdbind.lrn(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), half, k, "nhwc", library=isa_library)
    np.testing.assert_allclose(nchw, reference.lrn(x, half, k), rtol=2e-6)
    np.testing.assert_allclose(nhwc.transpose(0, 3, 1, 2), nchw, rtol=2e-6)
    np.testing.assert_allclose(simdbind.lrn(x[1], half, k, library=isa_library), nchw[1], rtol=0)  # 3-d = batch 1


def test_lrn_onnx_parameters(library):
    x = np.random.default_rng(9).uniform(-3, 3, (1, 7, 2, 3)).astype(np.float32)
    size, alpha, beta, bias = 5, 1e-2, 0.6, 2.0
    out = simdbind.lrn_onnx(x, size, alpha, beta, bias, library=library)
    x64 = x.astype(np.float64)
    square_sum = np.zeros_like(x64)
    for c in range(7):  # ONNX LRN / torch.nn.LocalResponseNorm definition
        square_sum[:, c] = (x64[:, max(0, c - 2):min(7, c + 3)] ** 2).sum(axis=1)
    np.testing.assert_allclose(out, x64 / (bias + alpha / size * square_sum) ** beta, rtol=3e-6)
    with pytest.raises(ArgumentError, match="size: must be odd"):
        simdbind.lrn_onnx(x, 4, library=library)
    with pytest.raises(ArgumentError, match="alpha: must be a real number"):
        simdbind.lrn_onnx(x, 3, "0.1", library=library)


def test_lrn_routes_small_nhwc_channels_through_nchw_on_external_libraries(bundled):
    formats = []
    inner = bundled.function("SimdSynetLrnLayerCrossChannels")

    def spy(src, half, channels, spatial, k, dst, fmt):
        formats.append((int(fmt), half))
        inner(src, half, channels, spatial, k, dst, fmt)

    class External(simdbind.Library):
        def function(self, name):
            return spy if name == "SimdSynetLrnLayerCrossChannels" else super().function(name)

    external = External(**_public_fields(bundled))
    external.kind = "external"
    x = np.random.default_rng(4).uniform(-10, 10, (2, 3, 4, 4)).astype(np.float32)  # NHWC, 4 channels
    out = simdbind.lrn(x, 2, (1, 0.1, -0.75), "nhwc", library=external)
    assert formats == [(0, 2), (0, 2)]  # NCHW per image, never NHWC
    np.testing.assert_allclose(out, reference.lrn(x, 2, (1, 0.1, -0.75), "nhwc"), rtol=2e-6)
    formats.clear()
    simdbind.lrn(np.ascontiguousarray(x.transpose(0, 3, 1, 2)), 9, (1, 0.1, -0.75), library=external)
    assert formats == [(0, 3), (0, 3)]  # half clamped to channels - 1 (upstream NCHW reads past otherwise)
    # half 2 with F + 3 channels (F = 4, 8, 16): upstream's channel 1 reads the float before the pixel.
    for channels, route in ((6, False), (7, True), (10, False), (11, True), (12, False), (19, True), (20, False),
                            (35, False)):
        formats.clear()
        y = np.random.default_rng(channels).uniform(-10, 10, (1, 2, 3, channels)).astype(np.float32)
        out = simdbind.lrn(y, 2, (1, 0.1, -0.75), "nhwc", library=external)
        assert formats == ([(0, 2)] if route else [(1, 2)]), channels
        np.testing.assert_allclose(out, reference.lrn(y, 2, (1, 0.1, -0.75), "nhwc"), rtol=2e-6)


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((np.ones((2, 3), np.float32), 1, (1, 1, 1)), {}, ArgumentError, r"x: must be \(C, H, W\)"),
    ((np.ones((2, 3, 4), np.float32), -1, (1, 1, 1)), {}, ArgumentError, "half: must be >= 0"),
    ((np.ones((2, 3, 4), np.float32), 1.0, (1, 1, 1)), {}, ArgumentError, "half: must be an integer"),
    ((np.ones((2, 3, 4), np.float32), 1, (1, 1)), {}, ArgumentError, "k: must hold exactly 3"),
    ((np.ones((2, 3, 4), np.float32), 1, np.ones(3)), {}, DTypeError, "k: must have dtype float32"),
    ((np.ones((2, 3, 4), np.float32), 1, (1, 1, 1)), {"layout": "nchwc"}, ArgumentError, "layout: must be"),
    ((np.ones((2, 3, 4)), 1, (1, 1, 1)), {}, DTypeError, "x: must have dtype float32"),
    ((np.ones((2, 3, 4), np.float32), 1, (1, 1, 1)), {"out": np.ones((2, 3, 5), np.float32)}, ArgumentError,
     "out: must have shape"),
])
def test_lrn_bad_arguments(library, args, kwargs, error, message):
    with pytest.raises(error, match=message):
        simdbind.lrn(*args, library=library, **kwargs)


def test_lrn_huge_half_is_a_window_over_every_channel(library):
    x = np.random.default_rng(8).uniform(-10, 10, (5, 2, 3)).astype(np.float32)
    np.testing.assert_array_equal(simdbind.lrn(x, 10 ** 30, (1, 0.1, -0.75), library=library),
                                  simdbind.lrn(x, 4, (1, 0.1, -0.75), library=library))


def test_lrn_refuses_in_place(library):
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(ArgumentError, match="must not overlap"):
        simdbind.lrn(x, 1, (1, 1, 1), out=x, library=library)


# -- shuffle --------------------------------------------------------------------------------------------------
def test_shuffle_hand_checked_and_inverse(isa_library):
    x0 = np.arange(4, dtype=np.float32).reshape(4, 1, 1)       # channels a0 a1 a2 a3
    x1 = np.arange(10, 12, dtype=np.float32).reshape(2, 1, 1)  # channels b0 b1
    y0, y1 = simdbind.shuffle(x0, x1, 0, library=isa_library)
    np.testing.assert_array_equal(y0.ravel(), f32(0, 2, 10))
    np.testing.assert_array_equal(y1.ravel(), f32(1, 3, 11))
    z0, z1 = simdbind.shuffle(y0, y1, 1, channels=(4, 2), library=isa_library)
    np.testing.assert_array_equal(z0, x0)
    np.testing.assert_array_equal(z1, x1)


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_shuffle_batches_and_layouts_match_the_reference(isa_library, layout):
    rng = np.random.default_rng(11)
    shape = (lambda c: (3, c, 2, 5)) if layout == "nchw" else (lambda c: (3, 2, 5, c))
    x0, x1 = rng.random(shape(6), np.float32), rng.random(shape(4), np.float32)
    for got, want in zip(simdbind.shuffle(x0, x1, 0, layout, library=isa_library),
                         reference.shuffle(x0, x1, 0, layout)):
        np.testing.assert_array_equal(got, want)
    y0, y1 = rng.random(shape(5), np.float32), rng.random(shape(5), np.float32)
    for got, want in zip(simdbind.shuffle(y0, y1, 1, layout, channels=(6, 4), library=isa_library),
                         reference.shuffle(y0, y1, 1, layout, (6, 4))):
        np.testing.assert_array_equal(got, want)


def test_shuffle_out_pair(library):
    x = np.ones((2, 1, 3), np.float32)
    out = (np.zeros((2, 1, 3), np.float32), np.zeros((2, 1, 3), np.float32))
    y0, y1 = simdbind.shuffle(x, x * 2, 0, out=out, library=library)
    assert y0 is out[0] and y1 is out[1]
    np.testing.assert_array_equal(y0, f32(1, 2).repeat(3).reshape(2, 1, 3))


@pytest.mark.parametrize("x0, x1, args, kwargs, message", [
    (np.ones((3, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (0,), {}, "x0: channel count must be even"),
    (np.ones((2, 2, 2), np.float32), np.ones((5, 2, 2), np.float32), (0,), {}, "x1: channel count must be even"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (2,), {}, "type: must be 0"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (True,), {}, "type: must be 0"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (0.0,), {}, "type: must be 0"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 3), np.float32), (0,), {}, "x1: must have the batch"),
    (np.ones((2, 2, 2), np.float32), np.ones((4, 2, 2), np.float32), (1,), {}, "x1: must have the channel count"),
    (np.ones((3, 2, 2), np.float32), np.ones((3, 2, 2), np.float32), (1,), {}, "channels: both counts must be even"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (1,), {"channels": (2, 4)}, "must sum to"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (0,), {"channels": (2, 2)}, "only used with"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (0,), {"out": np.ones(3)}, "out: must be a pair"),
    (np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), (0,), {}, r"x0: must be \(C, H, W\)"),
    (np.ones((2, 2, 2), np.float32), np.ones((2, 2, 2), np.float32), (0, "chw"), {}, "layout: must be"),
])
def test_shuffle_bad_arguments(library, x0, x1, args, kwargs, message):
    with pytest.raises(ArgumentError, match=message):
        simdbind.shuffle(x0, x1, *args, library=library, **kwargs)


# -- hypothesis: any valid call equals the reference (the bundled library's own accuracy, hence library=bundled:
# with SIMD_LIBRARY set the default library is upstream, whose polynomials have the wider contract tolerances) ----
FLOATS = st.floats(-50, 50, width=32)


@settings(max_examples=40, deadline=None)
@given(st.lists(FLOATS, min_size=0, max_size=70), st.sampled_from([m.name.lower() for m in simdbind.UnaryOperation]))
def test_hypothesis_unary(bundled, values, op):
    x = np.array(values, np.float32)
    with np.errstate(all="ignore"):
        out, expected = simdbind.unary(x, op, library=bundled), reference.unary(x, op)
    if op == "not":
        np.testing.assert_array_equal(bits(out), bits(expected))
    else:
        np.testing.assert_allclose(out, expected, rtol=2.5e-7, atol=1e-37)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=4), st.integers(0, 3), st.randoms(use_true_random=False))
def test_hypothesis_softmax(bundled, shape, axis, random):
    x = np.random.default_rng(random.getrandbits(32)).uniform(-30, 30, shape).astype(np.float32)
    axis = axis % len(shape)
    np.testing.assert_allclose(simdbind.softmax(x, axis, library=bundled), reference.softmax(x, axis), atol=2.5e-7,
                               rtol=0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(0, 4), st.integers(1, 12), st.integers(1, 6), st.sampled_from(["nchw", "nhwc"]),
       st.randoms(use_true_random=False))
def test_hypothesis_lrn(bundled, batch, half, channels, spatial, layout, random):
    shape = (batch, channels, 1, spatial) if layout == "nchw" else (batch, 1, spatial, channels)
    x = np.random.default_rng(random.getrandbits(32)).uniform(-10, 10, shape).astype(np.float32)
    np.testing.assert_allclose(simdbind.lrn(x, half, (1.0, 0.1, -0.75), layout, library=bundled),
                               reference.lrn(x, half, (1.0, 0.1, -0.75), layout), rtol=2e-6)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3), st.integers(0, 3), st.integers(1, 2), st.integers(1, 5), st.integers(0, 1),
       st.sampled_from(["nchw", "nhwc"]))
def test_hypothesis_shuffle(bundled, half0, half1, batch, spatial, shuffle_type, layout):
    c0, c1 = 2 * half0, 2 * half1
    if shuffle_type == 1:
        c0 = c1 = half0 + half1
        channels = (2 * half0, 2 * half1)
    else:
        channels = None
    make = (lambda c: (batch, c, 1, spatial)) if layout == "nchw" else (lambda c: (batch, 1, spatial, c))
    x0 = np.arange(np.prod(make(c0)), dtype=np.float32).reshape(make(c0))
    x1 = -np.arange(np.prod(make(c1)), dtype=np.float32).reshape(make(c1)) - 1
    got = simdbind.shuffle(x0, x1, shuffle_type, layout, channels=channels, library=bundled)
    want = reference.shuffle(x0, x1, shuffle_type, layout, channels)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# -- fuzz: any argument mix returns or raises a typed error (SimdBindError), with `out` untouched on error ---------
ANY = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.floats(allow_nan=False, width=32), st.text(max_size=4),
                st.sampled_from(["abs", "exp", "round", "nchw", "nhwc", "NHWC"]))


@st.composite
def any_array(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=4)))
    dtype = draw(st.sampled_from([np.float32, np.float32, np.float64, np.int32, np.uint16]))
    return (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 7 - 3).astype(dtype)


@settings(max_examples=150, deadline=None)
@given(any_array(), ANY, ANY, st.booleans())
def test_fuzz_elementwise_family_never_fails_untyped(x, a, b, with_out):
    out = np.full(x.shape, 7, x.dtype) if with_out else None
    calls = [lambda: simdbind.unary(x, a, out=out), lambda: simdbind.softmax(x, a, out=out),
             lambda: simdbind.lrn(x, a, (1, 0.1, -0.75), b, out=out), lambda: simdbind.shuffle(x, x, a, b),
             lambda: simdbind.lrn_onnx(x, a, layout=b)]
    for call in calls:
        before = None if out is None else out.copy()
        try:
            with np.errstate(all="ignore"):
                call()
        except simdbind.SimdBindError:
            if out is not None:
                np.testing.assert_array_equal(out, before)


@pytest.mark.parametrize("shape, axis", [((1, (1 << 20) + 3), 1), ((1025, 1024), 0)])
def test_softmax_bf16_huge_slices_recompute_without_a_buffer(isa_library, shape, axis):
    # Slices above 2^20 floats take the bf16 kernels that recompute exp (no float32 buffer).
    x = reference.bf16_round(np.random.default_rng(6).uniform(-3, 3, shape).astype(np.float32))
    got = simdbind.softmax(x, axis, library=isa_library)
    want = reference.softmax16b(x, axis)
    assert np.abs(got.astype(np.int32) - want.astype(np.int32)).max() <= 1


def test_fast_paths_agree_with_the_full_checks(library):
    # The unary/softmax fast paths only accept exact, owning, distinct arrays; views, read-only and overlapping
    # outputs take the full checks (same results, same errors).
    base = np.arange(12, dtype=np.float32) - 5
    x = base.copy()
    view_out = np.zeros(24, np.float32)[:12]  # a non-owning view that does not overlap x
    np.testing.assert_array_equal(simdbind.unary(x, "abs", out=view_out, library=library), np.abs(base))
    ro = np.zeros(12, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ArgumentError, match="writeable"):
        simdbind.unary(x, "abs", out=ro, library=library)
    with pytest.raises(ArgumentError, match="writeable"):
        simdbind.softmax(x, out=ro, library=library)
    y = x.reshape(3, 4)
    got = simdbind.softmax(y, 0, out=np.zeros(24, np.float32)[:12].reshape(3, 4), library=library)
    np.testing.assert_allclose(got, reference.softmax(y, 0), atol=2.5e-7)
    np.testing.assert_allclose(simdbind.softmax(y, -2, library=library), got, atol=0)
    for bad_axis in (2, -3):
        with pytest.raises(ArgumentError, match="axis: must be in"):
            simdbind.softmax(y, bad_axis, library=library)
    empty = np.zeros((3, 0), np.float32)
    assert simdbind.softmax(empty, library=library).shape == (3, 0)
    assert simdbind.unary(np.zeros(0, np.float32), "exp", library=library).shape == (0,)


# -- every class of value (the classes edge groups, simdbind/conformance/values.py) ---------------------------------
FLT_MAX = np.finfo(np.float32).max


def test_eltwise_sum_takes_each_product_in_float32(isa_library):
    """The contract's products are float32: FLT_MAX * FLT_MAX is +inf and FLT_MAX * -FLT_MAX -inf, so their sum is
    NaN, where float64 products would cancel to 0; products within range keep their values however large, and a
    subnormal times FLT_MAX is an ordinary number (0.034), not lost."""
    a, b = f32(FLT_MAX, 0.5, 1e-40, 0.0), f32(-FLT_MAX, -0.25, 1e-40, np.inf)
    weights = [FLT_MAX, FLT_MAX]
    expected = reference.eltwise([a, b], "sum", weights)
    tiny = np.float32(np.float32(1e-40) * FLT_MAX)
    assert np.isnan(expected[0]) and expected[1] == np.float32(FLT_MAX * 0.25) and expected[3] == np.inf
    assert expected[2] == tiny + tiny and 0.03 < expected[2] < 0.07
    got = simdbind.eltwise([a, b], "sum", weights, library=isa_library)
    np.testing.assert_array_equal(bits(got[1:]), bits(expected[1:]))
    # A fused multiply-add (AVX2, AVX-512) rounds -FLT_MAX * FLT_MAX only with the sum: +inf + that is +inf. The
    # contract leaves fusing open, so the edge cases keep such products out (eltwise's weight0 cases).
    assert np.isnan(got[0]) or got[0] == np.inf


def test_lrn_sum_of_squares_past_flt_max_is_infinite_and_scales_to_zero(isa_library):
    """Each quantity of the LRN formula is float32: every window holding 2e19 or +inf has a sum of squares past
    FLT_MAX, +inf, so its scale (k2 < 0) is 0 and its output +-0, or inf * 0 = NaN for the infinity itself. A
    float64 sum would give 2e19 * (0.1 * 4e38) ** -0.75, about 1e-10, for the first."""
    x = f32(2e19, -3.0, 5.0, np.inf, 1.0, 2.0).reshape(6, 1, 1)
    k = f32(1.0, 0.1, -0.75)
    expected = reference.lrn(x, 1, k)
    zeros = [0, 1, 2, 4]
    np.testing.assert_array_equal(bits(expected.ravel()[zeros]), bits(f32(0.0, -0.0, 0.0, 0.0)))
    assert np.isnan(expected[3, 0, 0])
    assert expected[5, 0, 0] == np.float32(2.0 * (1.0 + 0.1 * (1.0 + 4.0)) ** -0.75)
    got = simdbind.lrn(x, 1, k, library=isa_library)
    np.testing.assert_array_equal(bits(got.ravel()[zeros]), bits(expected.ravel()[zeros]))
    assert np.isnan(got[3, 0, 0])
    np.testing.assert_allclose(got[5], expected[5], rtol=2e-6)


def test_lrn_k_that_makes_the_base_negative_or_infinite(isa_library):
    """Pow = exp(log(b) * k2) (Base's formula, the contract): a negative base is NaN, an infinite one (k1 =
    FLT_MAX) gives exp(-inf) = 0 for k2 < 0; the bundled kernels follow it at every ISA."""
    x = f32(1.5, -2.0, 0.5, 3.0).reshape(4, 1, 1)
    negative = simdbind.lrn(x, 1, f32(0.5, -0.5, 2.0), library=isa_library)
    assert np.isnan(negative).all() and np.isnan(reference.lrn(x, 1, f32(0.5, -0.5, 2.0))).all()
    infinite = simdbind.lrn(x, 1, f32(0.0, FLT_MAX, -1e-40), library=isa_library)
    np.testing.assert_array_equal(bits(infinite), bits(f32(0.0, -0.0, 0.0, 0.0).reshape(4, 1, 1)))


def test_fused_sum_expectation_accepts_the_fused_infinity_only_where_fusing_decides():
    from simdbind.conformance.families.elementwise.cases import fused_sum_expectation

    a, b = f32(FLT_MAX, FLT_MAX, 0.5, FLT_MAX), f32(-np.inf, -np.inf, -np.inf, np.inf)
    weights = f32(FLT_MAX, 0.5)
    expected = reference.eltwise([a, b], "sum", weights)
    # FLT_MAX**2 rounded alone is +inf: with -inf that is NaN, with +inf +inf
    assert np.isnan(expected[[0, 1]]).all() and expected[2] == -np.inf and expected[3] == np.inf
    actual = f32(-np.inf, np.inf, 5.0, np.nan)
    result = fused_sum_expectation(expected, actual, [a, b], weights)
    # lane 0: the fused -inf accepted; lane 1: +inf is neither rounding's result; lanes 2 and 3: no latitude
    assert result[0] == -np.inf and np.isnan(result[1]) and result[2] == -np.inf and result[3] == np.inf
