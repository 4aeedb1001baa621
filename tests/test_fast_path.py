"""eltwise's fast path (two exact float32 arrays) gives the same results and the same errors as the full checks.

The full path is forced by passing explicit unit weights (the fast path only takes weights=None), so every
comparison below is fast path vs full path on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError
from simdbind._checks import bindings


@pytest.fixture(params=["api", "abi"])
def library(request, bundled):
    return bundled if request.param == "api" else simdbind.load(simdbind.bundled_path())


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
    (lambda buf: np.zeros(4, ">f4"), DTypeError, "out: must have dtype"),
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
    with pytest.raises(DTypeError, match=r"inputs\[1\]: must have dtype float32"):
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
