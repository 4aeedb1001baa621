"""simdbind.pooling_average / pooling_max: values on hand-checked inputs, every argument rule, the upstream-defect
routes, and a hypothesis sweep against the reference."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdbind
from simdbind.conformance.families.pooling import reference
from simdbind import ArgumentError, DTypeError
from simdbind._routes import upstream_max32f_route
from simdbind.pooling import _Axis

FLT_MAX = np.finfo(np.float32).max


@pytest.fixture
def as_external(bundled):
    """The bundled library presented as an upstream build, so the Max32f defect routes run (on correct code)."""
    return dataclasses.replace(simdbind.load(simdbind.bundled_path()), kind="external")


def f32(values):
    return np.array(values, np.float32)


# -- values ------------------------------------------------------------------------------------------------------
def test_average_hand_checked(library):
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    np.testing.assert_array_equal(simdbind.pooling_average(x, 2, stride=2, exclude_pad=True, library=library),
                                  f32([[[2.5, 4.5], [10.5, 12.5]]]))
    # pad 1, 2x2 stride 2: corner windows hold one element; exclude_pad divides by 1, else by 4.
    out = simdbind.pooling_average(x, 2, stride=2, pad=1, exclude_pad=True, library=library)
    assert out.shape == (1, 3, 3)
    assert out[0, 0, 0] == 0 and out[0, 2, 2] == 15 and out[0, 0, 1] == 1.5
    out = simdbind.pooling_average(x, 2, stride=2, pad=1, exclude_pad=False, library=library)
    assert out[0, 0, 0] == 0 and out[0, 2, 2] == 15 / 4 and out[0, 0, 1] == 3 / 4


def test_max_hand_checked_both_layouts_and_batch(library):
    x = np.array([[[1, 5, 2], [0, 3, 9], [4, 4, 4]], [[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]], np.float32)
    expected = f32([[[5, 9], [4, 9]], [[-1, -2], [-4, -5]]])
    np.testing.assert_array_equal(simdbind.pooling_max(x, 2, stride=1, library=library), expected)
    nhwc = simdbind.pooling_max(np.ascontiguousarray(x.transpose(1, 2, 0)), 2, stride=1, layout="nhwc", library=library)
    np.testing.assert_array_equal(nhwc, expected.transpose(1, 2, 0))
    batch = simdbind.pooling_max(np.stack([x, x + 10]), (2, 2), stride=1, library=library)
    np.testing.assert_array_equal(batch, np.stack([expected, expected + 10]))


def test_max_nan_survives_only_as_the_last_element_of_the_window(library):
    nan = np.nan
    # The fold m = m > x ? m : x: [NaN, 1, 2, NaN] -> NaN; [NaN, 1, 2, 0.5] -> 2 (row-major 2x2 windows).
    x = f32([[[nan, 1, nan, 1], [2, nan, 2, 0.5]]])
    out = simdbind.pooling_max(x, 2, stride=2, library=library)
    assert np.isnan(out[0, 0, 0]) and out[0, 0, 1] == 2


def test_max_floor_is_minus_flt_max_and_bf16_rounds_it_to_minus_inf(library):
    x = np.full((2, 3, 3), -np.inf, np.float32)
    np.testing.assert_array_equal(simdbind.pooling_max(x, 3, stride=1, library=library), np.full((2, 1, 1), -FLT_MAX))
    bits = np.full((2, 3, 3), 0xFF80, np.uint16)  # bf16 -inf
    out = simdbind.pooling_max(bits, 3, stride=1, library=library)
    assert out.dtype == np.uint16 and (out == 0xFF80).all()


def test_bf16_dtype_is_kept_and_values_are_exact(library):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([[[0.5, -1.25], [3.0, 2.0]]], ml_dtypes.bfloat16)
    out = simdbind.pooling_max(x, 2, stride=1, library=library)
    assert out.dtype == ml_dtypes.bfloat16 and float(out[0, 0, 0]) == 3.0


def test_uint8_starts_from_zero(library):
    x = np.array([[[0, 7], [255, 3]]], np.uint8)
    out = simdbind.pooling_max(x, 2, stride=1, pad=1, library=library)
    np.testing.assert_array_equal(out, np.array([[[0, 7, 7], [255, 255, 7], [255, 255, 3]]], np.uint8))


def test_channel_pooling_3d(library):
    x = np.arange(4 * 2 * 2, dtype=np.float32).reshape(4, 2, 2)
    out = simdbind.pooling_max(x, 1, stride=1, kernel_c=2, stride_c=2, library=library)
    np.testing.assert_array_equal(out, x[1::2])
    out = simdbind.pooling_max(x, 2, stride=1, kernel_c=3, stride_c=1, pad_c=1, library=library)
    np.testing.assert_array_equal(out.ravel(), f32([7, 11, 15, 15]))


def test_output_size_rule():
    assert simdbind.pooling_output_size(7, 2, 2, 0, 0) == 3
    assert simdbind.pooling_output_size(7, 2, 2, 0, 0, ceil_mode=True) == 4
    # ceil mode drops a last window that would start in the end pad (PyTorch/ONNX rule).
    assert simdbind.pooling_output_size(4, 2, 4, 0, 1, ceil_mode=True) == 1
    assert simdbind.pooling_output_size(2, 3, 1, 0, 0) == 0


def test_pad_forms_agree(library):
    x = np.random.default_rng(1).uniform(-1, 1, (3, 7, 8)).astype(np.float32)
    a = simdbind.pooling_max(x, (3, 2), stride=(2, 1), pad=((1, 2), (0, 1)), library=library)
    b = simdbind.pooling_max(x, (3, 2), stride=(2, 1), pad=(1, 0, 2, 1), library=library)  # ONNX order
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, reference.pooling_max(x, (3, 2), (2, 1), ((1, 2), (0, 1)), "nchw", False))


def test_out_argument_is_filled_and_returned(library):
    x = np.ones((2, 4, 4), np.float32)
    out = np.full((2, 2, 2), 7, np.float32)
    assert simdbind.pooling_average(x, 2, stride=2, exclude_pad=True, out=out, library=library) is out
    np.testing.assert_array_equal(out, np.ones((2, 2, 2)))


def test_non_contiguous_input_is_copied(library):
    x = np.arange(2 * 6 * 6, dtype=np.float32).reshape(2, 6, 6)[:, ::2, :]
    np.testing.assert_array_equal(simdbind.pooling_max(x, 1, stride=1, library=library), x)


# -- validation --------------------------------------------------------------------------------------------------
X = np.zeros((2, 5, 5), np.float32)


@pytest.mark.parametrize("call, error, message", [
    (lambda lib: simdbind.pooling_max(X, 0, stride=1, library=lib), ArgumentError, "kernel: must be >= 1, got 0"),
    (lambda lib: simdbind.pooling_max(X, (2, 0), stride=1, library=lib), ArgumentError, r"kernel\[1\]: must be >= 1"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=0, library=lib), ArgumentError, "stride: must be >= 1, got 0"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, pad=2, library=lib), ArgumentError, "pad: the y begin pad must be < the kernel"),
    (lambda lib: simdbind.pooling_max(X, 3, stride=1, pad=((0, 0), (1, 3)), library=lib), ArgumentError, "x end pad must be <"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, pad=-1, library=lib), ArgumentError, "pad: must be >= 0"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, pad=(1, 2, 3), library=lib), ArgumentError, "pad: must be an int"),
    (lambda lib: simdbind.pooling_max(X, 6, stride=1, library=lib), ArgumentError, "output size: the y axis gives 0"),
    (lambda lib: simdbind.pooling_max(X, 2.0, stride=1, library=lib), ArgumentError, "kernel: must be an integer"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, layout="nchwc", library=lib), ArgumentError, "layout: must be .nchw., .nhwc."),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, ceil_mode=1, library=lib), ArgumentError, "ceil_mode: must be a bool"),
    (lambda lib: simdbind.pooling_max(X[0], 2, stride=1, library=lib), ArgumentError, "x: must be 3-D or 4-D"),
    (lambda lib: simdbind.pooling_max(np.zeros((2, 0, 5), np.float32), 1, stride=1, library=lib), ArgumentError,
     "height and width must be >= 1"),
    (lambda lib: simdbind.pooling_max(X.astype(np.float64), 2, stride=1, library=lib), DTypeError, "x: must have dtype"),
    (lambda lib: simdbind.pooling_average(X.astype(np.uint8), 2, stride=1, exclude_pad=True, library=lib), DTypeError,
     "x: must have dtype float32"),
    (lambda lib: simdbind.pooling_average(X, 2, stride=1, exclude_pad=None, library=lib), ArgumentError, "exclude_pad"),
    (lambda lib: simdbind.pooling_max(X.astype(np.uint8), 2, stride=1, kernel_c=2, library=lib), ArgumentError,
     "channel pooling is only available for float32"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, kernel_c=2, pad_c=2, library=lib), ArgumentError,
     "pad_c: the channel begin pad must be <"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, kernel_c=0, library=lib), ArgumentError, "kernel_c: must be >= 1"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, out=np.zeros((2, 4, 4), np.float64), library=lib), DTypeError,
     "out: must have dtype"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, out=np.zeros((2, 3, 4), np.float32), library=lib), ArgumentError,
     "out: must have shape"),
    (lambda lib: simdbind.pooling_max(X, 2, stride=1, out=np.zeros((2, 4, 8), np.float32)[:, :, ::2], library=lib),
     ArgumentError, "C-contiguous"),
])
def test_bad_arguments_raise_named_errors(library, call, error, message):
    with pytest.raises(error, match=message):
        call(library)


def test_out_overlapping_x_is_refused_and_untouched():
    buf = np.arange(2 * 5 * 5 + 100, dtype=np.float32)
    x = buf[:50].reshape(2, 5, 5)
    before = buf.copy()
    with pytest.raises(ArgumentError, match="must not overlap"):
        simdbind.pooling_max(x, 1, stride=1, out=buf[10:60].reshape(2, 5, 5))
    np.testing.assert_array_equal(buf, before)


# -- upstream defect routes (Max32f's SIMD defects, docs/upstream.md) ------------------------------------------
def _axes(c, h, w, k, s, p, out_hw):
    return (_Axis(1, 1, 0, 0, c, c), _Axis(k[0], s[0], p[0], 0, h, out_hw[0]), _Axis(k[1], s[1], p[1], 0, w, out_hw[1]))


@pytest.mark.parametrize("args, fmt, route", [
    ((3, 8, 9, (3, 3), (1, 1), (1, 1), (8, 9)), 1, ("pad_channels", 16)),          # small-channel NHWC no-op
    ((16, 8, 9, (3, 3), (1, 1), (1, 1), (8, 9)), 1, ("direct", 16)),
    ((12, 5, 7, (2, 2), (1, 1), (0, 0), (4, 6)), 1, ("pad_channels", 16)),         # Solid2x2: 12*6 % 16 != 0
    ((8, 5, 9, (2, 2), (1, 1), (0, 0), (4, 8)), 1, ("direct", 8)),                 # 8*8 % 16 == 0
    ((2, 9, 40, (2, 2), (2, 2), (0, 0), (4, 20)), 0, ("via_nhwc", 0)),             # floor-mode 2x2/s2
    ((2, 10, 40, (2, 2), (2, 2), (0, 0), (5, 20)), 0, ("via_nhwc", 0)),            # every 2D NCHW call: see route
    ((2, 6, 40, (3, 3), (2, 2), (0, 0), (2, 19)), 0, ("via_nhwc", 0)),             # floor-mode 3x3/s2
    ((2, 10, 40, (3, 3), (1, 1), (0, 0), (10, 40)), 0, ("via_nhwc", 0)),           # 3x3/s1 with pad 0
    ((2, 10, 40, (3, 3), (1, 1), (1, 1), (10, 40)), 0, ("via_nhwc", 0)),
    ((2, 1, 40, (3, 3), (1, 1), (1, 1), (1, 40)), 0, ("via_nhwc", 0)),             # srcH == 1 overflow
    ((2, 9, 3, (2, 2), (2, 2), (0, 0), (4, 1)), 0, ("via_nhwc", 0)),
    ((2, 4, 7, (2, 2), (2, 2), (0, 0), (2, 4)), 0, ("via_nhwc", 0)),               # wrong values on v7.1.162
])
def test_upstream_route_decisions(args, fmt, route):
    c, h, w, k, s, p, out_hw = args
    assert upstream_max32f_route(c, *_axes(c, h, w, k, s, p, out_hw), fmt) == route


@pytest.mark.parametrize("shape, layout, kernel, stride, pad", [
    ((3, 8, 9), "nhwc", 3, 1, 1),
    ((3, 5, 7), "nhwc", 2, 1, 0),
    ((5, 6, 9), "nhwc", 2, 1, 0),
    ((2, 9, 40), "nchw", 2, 2, 0),
    ((2, 6, 40), "nchw", 3, 2, 0),
    ((2, 10, 40), "nchw", 3, 1, ((0, 2), (0, 2))),
    ((2, 1, 40), "nchw", 3, 1, 1),
    ((1, 2, 9, 40), "nchw", 2, 2, 0),
])
def test_routed_calls_give_the_contract_result(as_external, shape, layout, kernel, stride, pad):
    x = np.random.default_rng(3).uniform(-1, 1, shape).astype(np.float32)
    x.ravel()[::7] = np.nan  # the routes must keep the NaN order too
    image = shape if len(shape) == 3 else shape[1:]
    if layout == "nhwc":
        x = np.ascontiguousarray(np.moveaxis(x, -3, -1))
    pads = simdbind._checks.pads(pad)
    got = simdbind.pooling_max(x, kernel, stride=stride, pad=pad, layout=layout, library=as_external)
    expected = reference.pooling_max(x, (kernel, kernel), (stride, stride), pads, layout, False)
    assert image and got.shape == expected.shape
    assert (got.view(np.uint32) == expected.view(np.uint32)).all()


# -- hypothesis sweep --------------------------------------------------------------------------------------------
@st.composite
def pooling_problems(draw):
    ky, kx = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    pads = ((draw(st.integers(0, ky - 1)), draw(st.integers(0, ky - 1))),
            (draw(st.integers(0, kx - 1)), draw(st.integers(0, kx - 1))))
    h = draw(st.integers(max(1, ky - pads[0][0] - pads[0][1]), 9))
    w = draw(st.integers(max(1, kx - pads[1][0] - pads[1][1]), 40))
    return {"c": draw(st.integers(1, 20)), "h": h, "w": w, "kernel": (ky, kx),
            "stride": (draw(st.integers(1, 3)), draw(st.integers(1, 3))), "pads": pads,
            "layout": draw(st.sampled_from(["nchw", "nhwc"])), "ceil": draw(st.booleans()),
            "dtype": draw(st.sampled_from(["float32", "uint16", "uint8"])), "seed": draw(st.integers(0, 2**31))}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=pooling_problems())
def test_hypothesis_matches_reference(bundled, problem):
    p = problem
    rng = np.random.default_rng(p["seed"])
    shape = (p["c"], p["h"], p["w"]) if p["layout"] == "nchw" else (p["h"], p["w"], p["c"])
    if p["dtype"] == "float32":
        x = rng.uniform(-1, 1, shape).astype(np.float32)
    else:
        x = rng.integers(0, 2**16 if p["dtype"] == "uint16" else 256, shape).astype(p["dtype"])
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            got = simdbind.pooling_max(x, p["kernel"], stride=p["stride"], pad=p["pads"], layout=p["layout"],
                                       ceil_mode=p["ceil"], library=bundled)
            expected = reference.pooling_max(x, p["kernel"], p["stride"], p["pads"], p["layout"], p["ceil"])
            assert got.tobytes() == expected.tobytes(), isa
            if p["dtype"] == "float32":
                got = simdbind.pooling_average(x, p["kernel"], stride=p["stride"], pad=p["pads"], exclude_pad=True,
                                               layout=p["layout"], ceil_mode=p["ceil"], library=bundled)
                expected = reference.pooling_average(x, p["kernel"], p["stride"], p["pads"], p["layout"],
                                                     p["ceil"], True)
                np.testing.assert_allclose(got, expected, rtol=0, atol=(p["kernel"][0] * p["kernel"][1] + 4) * 2**-24)


class _DefectTrap:
    """An "external" library whose Max32f refuses every parameter set that reaches an upstream defect (the
    conditions of upstream's Max32f defects, taken for any SIMD width F in {4, 8, 16}); everything else runs on the
    bundled code."""

    kind = "external"

    def __init__(self, bundled):
        self._bundled = bundled
        self.ffi = bundled.ffi
        self.reached: list[str] = []

    def function(self, name):
        inner = self._bundled.function(name)
        if name != "SimdSynetPoolingMax32f":
            return inner

        def trapped(src, c, h, w, kc, ky, kx, sc, sy, sx, pc, py, px, dst, dc, dh, dw, fmt):
            defect = None
            if (kc, sc, pc, dc) == (1, 1, 0, c):
                if fmt == 1 and c < 8:
                    defect = "nhwc small channels"
                elif fmt == 1 and (ky, kx, sy, sx, py, px) == (2, 2, 1, 1, 0, 0) and dh == h - 1 and dw == w - 1 \
                        and (c * dw) % 16:
                    defect = "solid2x2 tail"
                elif fmt == 0 and dw >= 4:
                    if (ky, kx, sy, sx) == (3, 3, 1, 1) and (dh, dw) == (h, w) and ((py, px) != (1, 1) or h < 2):
                        defect = "3x3/s1 geometry"
                    if (ky, kx, sy, sx, py, px) == (2, 2, 2, 2, 0, 0) and (dh, dw) != ((h + 1) // 2, (w + 1) // 2):
                        defect = "2x2/s2 geometry"
                    if (ky, kx, sy, sx, py, px) == (3, 3, 2, 2, 0, 0) and (h < 3 or w < 3 or (dh, dw) != (
                            (h - 3 + 1) // 2 + 1, (w - 3 + 1) // 2 + 1)):
                        defect = "3x3/s2 geometry"
            if defect:
                self.reached.append(defect)
            return inner(src, c, h, w, kc, ky, kx, sc, sy, sx, pc, py, px, dst, dc, dh, dw, fmt)

        return trapped


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(c=st.integers(1, 20), h=st.integers(1, 12), w=st.integers(1, 45), k=st.sampled_from([2, 3]),
       s=st.sampled_from([1, 2]), pad=st.sampled_from([0, 1, ((0, 1), (0, 1)), ((0, 2), (0, 2)), ((1, 0), (1, 0))]),
       layout=st.sampled_from(["nchw", "nhwc"]), ceil=st.booleans())
def test_routes_never_reach_a_defect_and_keep_results(bundled, c, h, w, k, s, pad, layout, ceil):
    pads = simdbind._checks.pads(pad)
    if any(p >= k for axis in pads for p in axis) or h + sum(pads[0]) < k or w + sum(pads[1]) < k:
        return
    trap = _DefectTrap(bundled)
    shape = (2, c, h, w) if layout == "nchw" else (2, h, w, c)
    x = np.random.default_rng(c * 1000 + h * 50 + w).uniform(-1, 1, shape).astype(np.float32)
    got = simdbind.pooling_max(x, k, stride=s, pad=pad, layout=layout, ceil_mode=ceil, library=trap)
    assert trap.reached == []
    expected = reference.pooling_max(x, (k, k), (s, s), pads, layout, ceil)
    assert got.tobytes() == expected.tobytes()


def test_the_trap_sees_defects_when_called_directly(bundled):
    # The trap itself must be able to fail: a bundled (unrouted) call with a defect parameter set is seen.
    trap = _DefectTrap(bundled)
    x = np.zeros((8, 9, 3), np.float32)
    simdbind.pooling_max(x, 3, stride=1, pad=1, layout="nhwc", library=bundled)  # bundled: direct, no trap involved
    f = trap.function("SimdSynetPoolingMax32f")
    out = np.zeros((8, 9, 3), np.float32)
    f(trap.ffi.from_buffer("float[]", x), 3, 8, 9, 1, 3, 3, 1, 1, 1, 0, 1, 1,
      trap.ffi.from_buffer("float[]", out), 3, 8, 9, 1)
    assert trap.reached == ["nhwc small channels"]


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_external_library_matches_bundled_on_a_shape_sweep(external, bundled, layout):
    """Every small geometry through pooling_max on an upstream build gives the bundled library's bits.

    A geometry-based NCHW route let v7.1.162 corrupt the heap (double free) and return wrong values for shapes like
    (2, 4, 7) k2 s2 end-pad 1; this sweep is what found it.
    """
    rng = np.random.default_rng(7)
    differ = []
    for c in (1, 3, 8, 9):
        for h in range(1, 7):
            for w in range(1, 13):
                for kernel, stride, pad in (((2, 2), 2, 0), ((3, 3), 2, 0), ((3, 3), 1, 1), ((3, 3), 1, 0),
                                            ((2, 2), 1, 0), ((2, 3), 3, 1)):
                    for ceil in (False, True):
                        x = rng.standard_normal((c, h, w) if layout == "nchw" else (h, w, c)).astype(np.float32)
                        try:
                            expected = simdbind.pooling_max(x, kernel, stride=stride, pad=pad, layout=layout,
                                                            ceil_mode=ceil, library=bundled)
                        except simdbind.SimdBindError:
                            continue
                        got = simdbind.pooling_max(x, kernel, stride=stride, pad=pad, layout=layout, ceil_mode=ceil,
                                                   library=external)
                        if not np.array_equal(got, expected):
                            differ.append((c, h, w, kernel, stride, pad, ceil))
    assert differ == []


# -- kernel paths: NHWC channel blocks and border columns, the 2x2/2 NCHW average's rows, at every ISA --------------
def _scan_order_average(x, kernel, stride, pads, layout, ceil, exclude):
    """The documented float32 average: per window, 0 + taps in row-major order, then one division (not the
    conformance reference, which sums in float64 and so admits a tolerance)."""
    chw = x if layout == "nchw" else x.transpose(2, 0, 1)
    (ky, kx), (sy, sx), ((top, bottom), (left, right)) = kernel, stride, pads
    _, h, w = chw.shape
    out_h = simdbind.pooling_output_size(h, ky, sy, top, bottom, ceil)
    out_w = simdbind.pooling_output_size(w, kx, sx, left, right, ceil)
    out = np.empty((chw.shape[0], out_h, out_w), np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for dy in range(out_h):
            y0, y1 = max(0, dy * sy - top), min(h, dy * sy - top + ky)
            for dx in range(out_w):
                x0, x1 = max(0, dx * sx - left), min(w, dx * sx - left + kx)
                acc = np.zeros(chw.shape[0], np.float32)
                for y in range(y0, y1):
                    for xx in range(x0, x1):
                        acc = acc + chw[:, y, xx]
                divisor = max(0, y1 - y0) * max(0, x1 - x0) if exclude else ky * kx
                out[:, dy, dx] = acc / np.float32(divisor)
    return out if layout == "nchw" else np.ascontiguousarray(out.transpose(1, 2, 0))


def _assert_same_bits_or_both_nan(got, expected, where):
    """Bit for bit, except that a NaN sum's sign and payload depend on which NaN operand the hardware keeps."""
    same = (got.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(got) & np.isnan(expected))
    assert same.all(), (where, np.argwhere(~same)[:5])


def _special_values(rng, shape, dtype):
    """Inputs where the fold order shows: NaNs, both zeros, infinities, subnormals (bf16: their bit patterns)."""
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(np.uint8)
    if dtype == "uint16":
        specials = np.array([0x0000, 0x8000, 0xFF80, 0x7F80, 0x7FC0, 0xFFC1, 0xFF7F, 0x0001], np.uint16)
        values = rng.integers(0, 2**16, shape).astype(np.uint16)
    else:
        specials = f32([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, -FLT_MAX, 1e-45, -3e-39])
        values = rng.uniform(-1, 1, shape).astype(np.float32)
    pick = rng.random(shape) < 0.3
    values[pick] = rng.choice(specials, size=int(pick.sum()))
    return values


# Chunk sizes are 4-16 floats, 8-16 bf16 (pairs at base/sse41/avx2) and 16-32 bytes, in blocks of 1, 2 or 4 chunks
# with an overlapping or partial last one: these counts land on every boundary at every ISA.
_CHANNELS = (1, 3, 5, 8, 12, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 127, 128, 129, 192, 257)
# (height, width, kernel, stride, pad, ceil): interior columns with borders on both sides, clipped right windows
# (ceil), asymmetric pads, a kernel wider than the image (no interior column), a generic window shape.
_NHWC_GEOMETRIES = [
    (7, 9, (3, 3), (2, 2), 1, False),
    (6, 7, (2, 2), (2, 2), 0, True),
    (5, 6, (3, 3), (1, 1), ((0, 2), (1, 0)), False),
    (3, 4, (3, 5), (1, 2), ((1, 1), (2, 2)), True),
    (5, 8, (2, 3), (3, 1), ((1, 0), (0, 2)), False),
]


@pytest.mark.parametrize("dtype", ["float32", "uint16", "uint8"])
@pytest.mark.parametrize("geometry", _NHWC_GEOMETRIES, ids=lambda g: f"{g[0]}x{g[1]} k{g[2]} s{g[3]} p{g[4]} c{g[5]}")
def test_nhwc_kernels_fold_in_scan_order_at_every_isa(bundled, dtype, geometry):
    h, w, kernel, stride, pad, ceil = geometry
    pads = simdbind._checks.pads(pad)
    rng = np.random.default_rng(hash((h, w, kernel, stride, dtype)) % 2**32)
    for c in _CHANNELS:
        x = _special_values(rng, (h, w, c), dtype)
        expected = reference.pooling_max(x, kernel, stride, pads, "nhwc", ceil)
        averages = {e: _scan_order_average(x, kernel, stride, pads, "nhwc", ceil, e) for e in (False, True)} \
            if dtype == "float32" else {}
        floor = np.full((h, w, c), {"float32": -np.inf, "uint16": 0xFF80, "uint8": 0}[dtype], dtype)
        floor_expected = reference.pooling_max(floor, kernel, stride, pads, "nhwc", ceil)  # -FLT_MAX, bf16 -inf, 0
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                got = simdbind.pooling_max(x, kernel, stride=stride, pad=pad, layout="nhwc", ceil_mode=ceil,
                                           library=bundled)
                assert got.tobytes() == expected.tobytes(), (isa, c)
                got = simdbind.pooling_max(floor, kernel, stride=stride, pad=pad, layout="nhwc", ceil_mode=ceil,
                                           library=bundled)
                assert got.tobytes() == floor_expected.tobytes(), (isa, c)
                for exclude, average in averages.items():
                    got = simdbind.pooling_average(x, kernel, stride=stride, pad=pad, exclude_pad=exclude,
                                                   layout="nhwc", ceil_mode=ceil, library=bundled)
                    _assert_same_bits_or_both_nan(got, average, (isa, c, exclude))


@pytest.mark.parametrize("width", [16, 17, 26, 30, 33, 56, 70])
def test_nchw_average_2x2_stride_2_rows_at_every_isa(bundled, width):
    # Rows of 8 or more outputs end with an overlapping 8-step; widths 16..70 give 8..35 outputs, odd widths a
    # column no window covers. Bits as the scan-order fold, including an all -0 window's +0.
    rng = np.random.default_rng(width)
    x = _special_values(rng, (3, 5, width), "float32")
    x[0, :2, :2] = -0.0
    for exclude in (False, True):
        expected = _scan_order_average(x, (2, 2), (2, 2), ((0, 0), (0, 0)), "nchw", False, exclude)
        assert expected[0, 0, 0] == 0 and not np.signbit(expected[0, 0, 0])
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                got = simdbind.pooling_average(x, 2, stride=2, exclude_pad=exclude, library=bundled)
                _assert_same_bits_or_both_nan(got, expected, (isa, exclude))
