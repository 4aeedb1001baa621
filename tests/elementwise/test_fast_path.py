"""eltwise's and unary's fast path (simdbind._fastcall) gives the same results and the same errors as the full checks.

The first tests compare spellings that give the same call (default vs explicit unit weights, two inputs vs a third
neutral one) and check the rules through the public API; from "the C-side fast path" on, every scenario runs both
with the fast path and with it declining every call (the ordinary path), on the API-mode, ABI-mode and an external
test-double library, and the extension itself is checked to take the common calls and decline the rest."""

from __future__ import annotations

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError
from simdbind._fastpath import bindings


def pair(n=37, shape=None, seed=3):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    return (a.reshape(shape), b.reshape(shape)) if shape else (a, b)


@pytest.mark.parametrize("shape", [None, (37,), (1, 37), ()])
@pytest.mark.parametrize("op", ["sum", "product", "max", "min"])
def test_fast_path_matches_the_full_path(library, op, shape):
    n = 1 if shape == () else 37
    a, b = pair(n, shape)
    fast = simdbind.eltwise([a, b], op, library=library)
    full = (simdbind.eltwise([a, b], op, weights=[1, 1], library=library) if op == "sum"
            else simdbind.eltwise((a, b, np.full_like(a, np.inf if op == "min" else -np.inf if op == "max"
                                                      else 1)), op, library=library))
    np.testing.assert_array_equal(fast, full)
    assert fast.shape == a.shape and fast.dtype == np.float32
    out = np.empty_like(a)
    assert simdbind.eltwise((a, b), op, out=out, library=library) is out
    np.testing.assert_array_equal(out, fast)


def test_in_place_on_either_input_and_empty_arrays(library):
    a, b = pair()
    expected = a + b
    assert simdbind.eltwise([a, b], "sum", out=b, library=library) is b
    np.testing.assert_array_equal(b, expected)
    a, b = pair()
    simdbind.eltwise([a, b], "max", out=a, library=library)
    np.testing.assert_array_equal(a, np.maximum(*pair()))
    empty = np.empty(0, np.float32)
    assert simdbind.eltwise([empty, empty.copy()], "sum", library=library).shape == (0,)


def test_default_library_is_used_when_none_is_given(bundled):
    a, b = pair()
    np.testing.assert_array_equal(simdbind.eltwise([a, b], "min"), np.minimum(a, b))


def test_non_contiguous_inputs_fall_back_and_are_copied(library):
    base = np.arange(20, dtype=np.float32)
    a, b = base[::2], base[1::2]
    np.testing.assert_array_equal(simdbind.eltwise([a, b], "sum", library=library), a + b)
    np.testing.assert_array_equal(base, np.arange(20, dtype=np.float32))  # inputs untouched


@pytest.mark.parametrize("make_out, error, message", [
    (lambda buf: buf[1:5], ArgumentError, "partially"),        # overlaps inputs[0] = buf[:4] partially
    (lambda buf: buf[3:7], ArgumentError, "partially"),        # overlaps only the last element of inputs[0]
    (lambda buf: buf[::2][:4], ArgumentError, "C-contiguous"),
    (lambda buf: np.zeros(4, ">f4"), DTypeError, "out: must be in native byte order"),
    (lambda buf: np.zeros(5, np.float32)[:4].reshape(2, 2), ArgumentError, "out: must have shape"),
])
def test_bad_out_raises_the_full_paths_error_and_writes_nothing(library, make_out, error, message):
    buf = np.arange(10, dtype=np.float32)
    before = buf.copy()
    with pytest.raises(error, match=message):
        simdbind.eltwise([buf[:4], np.ones(4, np.float32)], "sum", out=make_out(buf), library=library)
    np.testing.assert_array_equal(buf, before)


def test_adjacent_out_is_not_an_overlap(library):
    buf = np.arange(8, dtype=np.float32)
    simdbind.eltwise([buf[:4], np.ones(4, np.float32)], "sum", out=buf[4:], library=library)
    np.testing.assert_array_equal(buf, np.array([0, 1, 2, 3, 1, 2, 3, 4], np.float32))


def test_out_overlapping_the_second_input_partially_is_refused(library):
    buf = np.arange(10, dtype=np.float32)
    with pytest.raises(ArgumentError, match=r"overlaps inputs\[1\] partially"):
        simdbind.eltwise([np.ones(4, np.float32), buf[2:6]], "sum", out=buf[:4], library=library)
    np.testing.assert_array_equal(buf, np.arange(10, dtype=np.float32))


def test_read_only_out_and_non_native_or_other_dtypes_raise_typed_errors(library):
    a, b = pair(4)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ArgumentError, match="out: must be writeable"):
        simdbind.eltwise([a, b], "sum", out=ro, library=library)
    with pytest.raises(DTypeError, match=r"inputs\[1\]: must be in native byte order"):
        simdbind.eltwise([a, b.astype(">f4")], "sum", library=library)
    with pytest.raises(DTypeError, match=r"inputs\[0\]: must have dtype float32"):
        simdbind.eltwise([a.astype(np.float64), b], "sum", library=library)
    with pytest.raises(ArgumentError, match=r"inputs\[1\]: must have the shape"):
        simdbind.eltwise([a, b.reshape(2, 2)], "sum", library=library)


def test_array_subclasses_and_lists_take_the_full_path(library):
    a, b = pair(4)
    view = a.view(type("Sub", (np.ndarray,), {}))
    np.testing.assert_array_equal(simdbind.eltwise([view, b], "sum", library=library), a + b)
    np.testing.assert_array_equal(simdbind.eltwise([[1, 2], [3, 4]], "product", library=library),
                                  np.array([3, 8], np.float32))


def test_bindings_are_made_once_per_library_and_cache_functions(library):
    first = bindings(library)
    assert bindings(library) is first and library._bindings is first
    assert first.function("SimdSynetEltwiseLayerForward") is first.function("SimdSynetEltwiseLayerForward")
    with pytest.raises(simdbind.FunctionNotAvailableError):
        first.function("SimdNoSuchFunction")


# -- the C-side fast path (simdbind._fastcall) ------------------------------------------------------------------
# eltwise() and unary() hand their arguments to simdbind._fastcall, which makes the call only when every argument
# is plainly right and otherwise returns None ("not handled"), so that the ordinary checks raise. The tests below
# check both halves: what it accepts it computes exactly like the ordinary path (forced by declining every call),
# and what it declines ends in the ordinary path's error, on the API-mode, ABI-mode and an external library.
import gc  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from simdbind import elementwise as _elementwise  # noqa: E402
from simdbind._fastpath import _fastcall, fast_address, fast_key  # noqa: E402

needs_fastcall = pytest.mark.skipif(_fastcall is None, reason="simdbind._fastcall is not built")
ELTWISE, UNARY = "SimdSynetEltwiseLayerForward", "SimdSynetUnaryOperation32f"


@pytest.fixture(params=["fast", "slow"])
def route(request, monkeypatch):
    """'fast': the wrappers as shipped; 'slow': the C fast path declines every call (the ordinary path runs)."""
    if request.param == "slow":
        monkeypatch.setattr(_elementwise, "_fast_eltwise", lambda *args: None)
        monkeypatch.setattr(_elementwise, "_fast_unary", lambda *args: None)
    return request.param


def outcome(call):
    """('ok', result copy) or (error type, message) of call()."""
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - compared between the routes
        return type(error), str(error)
    return "ok", (tuple(np.array(r, copy=True) for r in result) if isinstance(result, tuple)
                  else np.array(result, copy=True))


def read_only(n=8):
    a = np.arange(n, dtype=np.float32)
    a.flags.writeable = False
    return a


class Sub(np.ndarray):
    pass


def _buf():
    return np.arange(24, dtype=np.float32)


# Each scenario: (id, function of (buffer, library) -> result). The buffer is shared by inputs and outputs so that
# overlaps can be built; it is compared after the call too (nothing written on error).
SCENARIOS = [
    ("eltwise-new", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", library=lib)),
    ("eltwise-out-apart", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "max", out=b[16:], library=lib)),
    ("eltwise-out-is-first", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "product", out=b[:8], library=lib)),
    ("eltwise-out-is-second", lambda b, lib: simdbind.eltwise((b[:8], b[8:16]), "min", out=b[8:16], library=lib)),
    ("eltwise-3-inputs", lambda b, lib: simdbind.eltwise([b[:8], b[8:16], b[16:]], "sum", library=lib)),
    ("eltwise-3-out-is-first", lambda b, lib: simdbind.eltwise([b[:8], b[8:16], b[16:]], "max", out=b[:8],
                                                               library=lib)),
    ("eltwise-out-is-third", lambda b, lib: simdbind.eltwise([b[:8], b[8:16], b[16:]], "sum", out=b[16:],
                                                             library=lib)),
    ("eltwise-weights-array", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum",
                                                              np.array([0.5, -2], np.float32), library=lib)),
    ("eltwise-weights-list", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", [0.1, 3], library=lib)),
    ("eltwise-weights-tuple-3", lambda b, lib: simdbind.eltwise([b[:8], b[8:16], b[16:]], "sum", (1, -1, 0.25),
                                                                library=lib)),
    ("eltwise-weights-big-int", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", [2 ** 24 + 1, 1],
                                                                library=lib)),
    ("eltwise-weights-huge-float", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", [1e300, 1],
                                                                   library=lib)),
    ("eltwise-weights-inf-nan", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", [np.inf, float("nan")],
                                                                library=lib)),
    ("eltwise-weights-count", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", [1.0], library=lib)),
    ("eltwise-weights-2d", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", np.ones((1, 2), np.float32),
                                                           library=lib)),
    ("eltwise-weights-f64", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", np.ones(2), library=lib)),
    ("eltwise-weights-str", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", ["a", 1], library=lib)),
    ("eltwise-weights-not-sum", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "max", [1.0, 1.0], library=lib)),
    ("eltwise-one-input", lambda b, lib: simdbind.eltwise([b[:8]], "sum", library=lib)),
    ("eltwise-17-inputs", lambda b, lib: simdbind.eltwise([b[:8]] * 17, "max", library=lib)),
    ("eltwise-generator", lambda b, lib: simdbind.eltwise((x for x in (b[:8], b[8:16])), "sum", library=lib)),
    ("eltwise-non-contiguous", lambda b, lib: simdbind.eltwise([b[::3], b[1::3]], "sum", library=lib)),
    ("eltwise-non-contiguous-out", lambda b, lib: simdbind.eltwise([b[:4], b[4:8]], "sum", out=b[8::2][:4],
                                                                   library=lib)),
    ("eltwise-f64", lambda b, lib: simdbind.eltwise([b[:8].astype(np.float64), b[8:16]], "sum", library=lib)),
    ("eltwise-big-endian", lambda b, lib: simdbind.eltwise([b[:8], b[8:16].astype(">f4")], "sum", library=lib)),
    ("eltwise-out-big-endian", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=np.zeros(8, ">f4"),
                                                               library=lib)),
    ("eltwise-out-f64", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=np.zeros(8), library=lib)),
    ("eltwise-subclass", lambda b, lib: simdbind.eltwise([b[:8].view(Sub), b[8:16]], "sum", library=lib)),
    ("eltwise-out-subclass", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=b[16:].view(Sub),
                                                             library=lib)),
    ("eltwise-list-input", lambda b, lib: simdbind.eltwise([[1, 2], b[:2]], "sum", library=lib)),
    ("eltwise-shape", lambda b, lib: simdbind.eltwise([b[:8], b[8:16].reshape(2, 4)], "sum", library=lib)),
    ("eltwise-shape-3rd", lambda b, lib: simdbind.eltwise([b[:8], b[8:16], b[16:].reshape(4, 2)], "sum",
                                                          library=lib)),
    ("eltwise-out-shape", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=b[16:].reshape(2, 4),
                                                          library=lib)),
    ("eltwise-overlap-first", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=b[1:9], library=lib)),
    ("eltwise-overlap-second", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=b[4:12], library=lib)),
    ("eltwise-overlap-third-exact", lambda b, lib: simdbind.eltwise([b[:8], b[8:16], b[16:]], "sum", out=b[16:],
                                                                    library=lib)),
    ("eltwise-read-only-out", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "sum", out=read_only(),
                                                              library=lib)),
    ("eltwise-read-only-inputs", lambda b, lib: simdbind.eltwise([read_only(), read_only()], "sum", library=lib)),
    ("eltwise-0d", lambda b, lib: simdbind.eltwise([b[3].copy().reshape(()), np.float32(2).reshape(())], "sum",
                                                   library=lib)),
    ("eltwise-0d-out", lambda b, lib: simdbind.eltwise([b[3:4].reshape(()), b[4:5].reshape(())], "max",
                                                       out=b[5:6].reshape(()), library=lib)),
    ("eltwise-empty", lambda b, lib: simdbind.eltwise([b[:0], b[5:5]], "sum", library=lib)),
    ("eltwise-empty-2d-out", lambda b, lib: simdbind.eltwise([b[:0].reshape(0, 3), b[:0].reshape(0, 3)], "sum",
                                                             out=b[:0].reshape(0, 3), library=lib)),
    ("eltwise-empty-shapes", lambda b, lib: simdbind.eltwise([b[:0].reshape(0, 3), b[:0].reshape(3, 0)], "sum",
                                                             library=lib)),
    ("eltwise-out-list", lambda b, lib: simdbind.eltwise([b[:2], b[2:4]], "sum", out=[0.0, 0.0], library=lib)),
    ("eltwise-bad-op", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], "avg", library=lib)),
    ("eltwise-int-op", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], 2, library=lib)),
    ("eltwise-enum-op", lambda b, lib: simdbind.eltwise([b[:8], b[8:16]], simdbind.EltwiseOperation.MIN,
                                                        library=lib)),
    ("unary-new", lambda b, lib: simdbind.unary(b[:8], "exp", library=lib)),
    ("unary-out-apart", lambda b, lib: simdbind.unary(b[:8], "sqrt", out=b[8:16], library=lib)),
    ("unary-in-place", lambda b, lib: simdbind.unary(b[:8], "neg", out=b[:8], library=lib)),
    ("unary-in-place-2d", lambda b, lib: simdbind.unary(b.reshape(4, 6), "tanh", out=b.reshape(4, 6),
                                                        library=lib)),
    ("unary-overlap", lambda b, lib: simdbind.unary(b[:8], "abs", out=b[4:12], library=lib)),
    ("unary-same-start-other-shape", lambda b, lib: simdbind.unary(b[:8], "abs", out=b[:8].reshape(2, 4),
                                                                   library=lib)),
    ("unary-non-contiguous", lambda b, lib: simdbind.unary(b[::2], "log", library=lib)),
    ("unary-non-contiguous-out", lambda b, lib: simdbind.unary(b[:4], "log", out=b[8::2][:4], library=lib)),
    ("unary-f64", lambda b, lib: simdbind.unary(b.astype(np.float64), "abs", library=lib)),
    ("unary-big-endian", lambda b, lib: simdbind.unary(b.astype(">f4"), "abs", library=lib)),
    ("unary-subclass", lambda b, lib: simdbind.unary(b.view(Sub), "abs", library=lib)),
    ("unary-out-subclass", lambda b, lib: simdbind.unary(b[:8], "abs", out=np.zeros(8, np.float32).view(Sub),
                                                         library=lib)),
    ("unary-read-only-out", lambda b, lib: simdbind.unary(b[:8], "abs", out=read_only(), library=lib)),
    ("unary-read-only-in-place", lambda b, lib: simdbind.unary(read_only(), "abs", out=None, library=lib)),
    ("unary-0d", lambda b, lib: simdbind.unary(b[2:3].reshape(()), "rsqrt", library=lib)),
    ("unary-empty", lambda b, lib: simdbind.unary(b[:0], "cos", library=lib)),
    ("unary-empty-out", lambda b, lib: simdbind.unary(b[:0].reshape(2, 0), "cos", out=b[3:3].reshape(2, 0),
                                                      library=lib)),
    ("unary-list", lambda b, lib: simdbind.unary([1, 4, 9], "sqrt", library=lib)),
    ("unary-out-shape", lambda b, lib: simdbind.unary(b[:8], "abs", out=b[8:16].reshape(2, 4), library=lib)),
    ("unary-out-f64", lambda b, lib: simdbind.unary(b[:8], "abs", out=np.zeros(8), library=lib)),
    ("unary-int-op", lambda b, lib: simdbind.unary(b[:8], int(simdbind.UnaryOperation.FLOOR), library=lib)),
    ("unary-enum-op", lambda b, lib: simdbind.unary(b[:8], simdbind.UnaryOperation.SIGN, library=lib)),
    ("unary-bad-op", lambda b, lib: simdbind.unary(b[:8], "cube", library=lib)),
    ("unary-bad-int-op", lambda b, lib: simdbind.unary(b[:8], 99, library=lib)),
]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # numpy's, on 1e300 weights
@pytest.mark.parametrize("scenario", [s[1] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_fast_and_slow_paths_give_identical_results_and_errors(library, scenario, monkeypatch):
    results = {}
    for name in ("fast", "slow"):
        with monkeypatch.context() as patch:
            if name == "slow":
                patch.setattr(_elementwise, "_fast_eltwise", lambda *args: None)
                patch.setattr(_elementwise, "_fast_unary", lambda *args: None)
            buf = _buf()
            results[name] = outcome(lambda: scenario(buf, library)), buf.copy()
    (fast, fast_buf), (slow, slow_buf) = results["fast"], results["slow"]
    assert fast[0] == slow[0]
    if fast[0] == "ok":
        assert fast[1].dtype == slow[1].dtype and fast[1].shape == slow[1].shape
        np.testing.assert_array_equal(fast[1], slow[1])
    else:
        assert fast[1] == slow[1]
        np.testing.assert_array_equal(fast_buf, _buf())  # nothing written on error
    np.testing.assert_array_equal(fast_buf, slow_buf)


@needs_fastcall
def test_the_c_fast_path_takes_the_common_calls(library):
    """It must actually make these calls (a fast path that always declined would pass every test above)."""
    c = bindings(library)
    e = c.cache.get(fast_key(ELTWISE)) or fast_address(c, ELTWISE, _elementwise._ELTWISE_SIGNATURE)
    u = c.cache.get(fast_key(UNARY)) or fast_address(c, UNARY, _elementwise._UNARY_SIGNATURE)
    assert e and u
    buf = _buf()
    a, b, o = buf[:8], buf[8:16], buf[16:]
    assert _fastcall.eltwise(e, [a, b], None, 1, o) is o
    np.testing.assert_array_equal(o, a + b)
    assert _fastcall.eltwise(e, (a, b), np.array([2, 3], np.float32), 1, a) is a
    np.testing.assert_array_equal(a, 2 * np.arange(8) + 3 * np.arange(8, 16))
    new = _fastcall.eltwise(e, [a, b, o], [1, 1, -1.0], 1, None)
    assert type(new) is np.ndarray and new.dtype == np.float32 and new.shape == (8,) and new.flags.c_contiguous
    assert _fastcall.eltwise(e, [a.reshape(2, 4), b.reshape(2, 4)], None, 2, None).shape == (2, 4)
    x = np.linspace(0.5, 4, 6000, dtype=np.float32).reshape(60, 100)  # above the GIL-release threshold
    assert x.size >= _fastcall.RELEASE_THRESHOLD
    np.testing.assert_array_equal(_fastcall.unary(u, x, int(simdbind.UnaryOperation.SQRT), None),
                                  simdbind.unary(x.copy(), "sqrt", out=np.empty_like(x), library=library))
    assert _fastcall.unary(u, x, 0, x) is x
    zero_d = np.array(4, np.float32)
    assert _fastcall.unary(u, zero_d, int(simdbind.UnaryOperation.SQRT), None) == 2
    assert _fastcall.unary(u, buf[:0], 0, None).shape == (0,)


@needs_fastcall
def test_the_c_fast_path_declines_what_it_does_not_plainly_accept(library):
    c = bindings(library)
    e = c.cache.get(fast_key(ELTWISE)) or fast_address(c, ELTWISE, _elementwise._ELTWISE_SIGNATURE)
    u = c.cache.get(fast_key(UNARY)) or fast_address(c, UNARY, _elementwise._UNARY_SIGNATURE)
    buf = _buf()
    before = buf.copy()
    a, b, o = buf[:8], buf[8:16], buf[16:]
    declined = [
        _fastcall.eltwise(e, [a, b], None, 1, buf[1:9]),  # partial overlap
        _fastcall.eltwise(e, [a, b, o], None, 1, o),  # out is a later input
        _fastcall.eltwise(e, [a, b], None, 1, read_only()),
        _fastcall.eltwise(e, [a, b], None, 1, buf[::3]),
        _fastcall.eltwise(e, [a, b.astype(">f4")], None, 1, None),
        _fastcall.eltwise(e, [a.view(Sub), b], None, 1, None),
        _fastcall.eltwise(e, [a, b], None, 1, o.view(Sub)),
        _fastcall.eltwise(e, [a, b.reshape(2, 4)], None, 1, None),
        _fastcall.eltwise(e, [a], None, 1, None),
        _fastcall.eltwise(e, [a] * 17, None, 1, None),
        _fastcall.eltwise(e, iter([a, b]), None, 1, None),
        _fastcall.eltwise(e, [a, b], [1.0], 1, None),
        _fastcall.eltwise(e, [a, b], [1.0, 1.0], 2, None),  # weights with max
        _fastcall.eltwise(e, [a, b], [1e39, 1.0], 1, None),
        _fastcall.eltwise(e, [a, b], [True, 1.0], 1, None),
        _fastcall.eltwise(e, [a, b], np.ones(2), 1, None),
        _fastcall.eltwise(e, [a, b], None, 4, None),  # no such op
        _fastcall.eltwise(e, [a, b], None, -1, None),
        _fastcall.eltwise(e, [a, b], None, 1.0, None),
        _fastcall.eltwise(0, [a, b], None, 1, None),
        _fastcall.eltwise(float(e), [a, b], None, 1, None),
        _fastcall.eltwise(e, [a, b], None, 1),  # wrong argument count
        _fastcall.unary(u, a, 0, buf[4:12]),
        _fastcall.unary(u, a, 0, buf[:8].reshape(2, 4)),
        _fastcall.unary(u, buf[::2], 0, None),
        _fastcall.unary(u, a.astype(np.float64), 0, None),
        _fastcall.unary(u, [1.0, 2.0], 0, None),
        _fastcall.unary(u, a, 0, read_only()),
        _fastcall.unary(u, a, 2 ** 70, None),
        _fastcall.unary(u, a, "abs", None),
        _fastcall.unary(None, a, 0, None),
    ]
    assert declined == [None] * len(declined)
    np.testing.assert_array_equal(buf, before)


@needs_fastcall
def test_the_c_fast_path_keeps_no_references(library):
    """Every exported buffer is released and every temporary dropped, on the taken and the declined calls."""
    c = bindings(library)
    e = c.cache.get(fast_key(ELTWISE)) or fast_address(c, ELTWISE, _elementwise._ELTWISE_SIGNATURE)
    u = c.cache.get(fast_key(UNARY)) or fast_address(c, UNARY, _elementwise._UNARY_SIGNATURE)
    a, b, o, w = (np.ones(8, np.float32) for _ in range(4))
    weights = [1.0, 2.0]
    objects = (a, b, o, w, weights)
    gc.collect()
    before = [sys.getrefcount(x) for x in objects]
    for _ in range(200):
        _fastcall.eltwise(e, [a, b], None, 1, o)
        _fastcall.eltwise(e, [a, b], weights, 1, None)
        _fastcall.eltwise(e, [a, b], w[:2], 1, a)
        _fastcall.eltwise(e, [a, b, o], None, 1, o)  # declined after exporting every buffer
        _fastcall.eltwise(e, [a, b], w, 1, None)  # declined: weights of the wrong count
        _fastcall.unary(u, a, 0, o)
        _fastcall.unary(u, a, 0, None)
        _fastcall.unary(u, a, 0, a.reshape(2, 4))  # declined
    gc.collect()
    assert [sys.getrefcount(x) for x in objects] == before


def test_fast_address_is_zero_for_a_signature_other_than_the_header_s(library):
    c = bindings(library)
    assert fast_address(c, UNARY, "void(*)(const float *, size_t, int, float *)") == 0
    assert fast_address(c, "SimdNoSuchFunction", "void(*)(void)") == 0
    try:  # with the address cache saying "no fast call", the ordinary path gives the same result
        np.testing.assert_array_equal(simdbind.unary(np.float32([4, 9]), "sqrt", library=library), [2, 3])
    finally:
        c.cache.pop(fast_key(UNARY), None)


CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
DOUBLE = r"""
#include <stddef.h>
const char * SimdVersion(void) { return "7.1.999"; }
void SimdSynetSoftmax32f(const float * s, size_t o, size_t c, size_t i, float * d) {}
void SimdSynetPoolingMax16b(void) {}
/* Recognizably not the bundled kernels: every result carries the count, the op and the size. */
void SimdSynetEltwiseLayerForward(float const * const * src, const float * w, size_t count, size_t size, int op,
                                  float * dst)
{
    for (size_t i = 0; i < size; i++) {
        float v = 1000.0f * count + 100.0f * op + size;
        for (size_t k = 0; k < count; k++)
            v += (w ? w[k] : -1.0f) * src[k][i];
        dst[i] = v;
    }
}
void SimdSynetUnaryOperation32f(const float * src, size_t size, int op, float * dst)
{
    for (size_t i = 0; i < size; i++)
        dst[i] = src[i] * 10.0f + op;
}
"""


@pytest.fixture(scope="module")
def double_library(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler to build the test double")
    directory = tmp_path_factory.mktemp("fastcall")
    (directory / "double.c").write_text(DOUBLE)
    path = directory / "libdouble.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(path), str(directory / "double.c")], check=True)
    return simdbind.load(str(path))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("scenario", [s[1] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_an_external_library_gets_the_same_calls_on_both_paths(double_library, scenario, monkeypatch):
    test_fast_and_slow_paths_give_identical_results_and_errors(double_library, scenario, monkeypatch)


def test_an_external_library_is_called_through_the_fast_path(double_library):
    assert double_library.kind == "external" and double_library.mode == "abi"
    a, b = np.float32([1, 2]), np.float32([3, 4])
    # count 2, op 1 (sum), size 2: 2000 + 100 + 2 + w0 * a + w1 * b
    np.testing.assert_array_equal(simdbind.eltwise([a, b], "sum", [1, 2], library=double_library),
                                  2102 + a + 2 * b)
    np.testing.assert_array_equal(simdbind.unary(a, "neg", library=double_library),
                                  a * 10 + int(simdbind.UnaryOperation.NEG))
    if _fastcall is not None:
        assert bindings(double_library).cache[fast_key(ELTWISE)] and bindings(double_library).cache[fast_key(UNARY)]


def test_without_the_extension_there_is_no_fast_call_and_the_wrappers_still_work(monkeypatch):
    import simdbind._fastpath as fastpath

    library = simdbind.load(simdbind.bundled_path())  # a fresh library: nothing cached yet
    monkeypatch.setattr(fastpath, "_fastcall", None)
    assert fast_address(bindings(library), UNARY, _elementwise._UNARY_SIGNATURE) == 0
    assert fast_address(bindings(library), ELTWISE, _elementwise._ELTWISE_SIGNATURE) == 0
    a = np.float32([1, 4])
    np.testing.assert_array_equal(simdbind.unary(a, "sqrt", library=library), [1, 2])
    np.testing.assert_array_equal(simdbind.eltwise([a, a], "sum", library=library), [2, 8])
