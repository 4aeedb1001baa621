"""simdbind.GatherElements / gather_elements: values, every argument rule, context lifetime and threads, the C
Init's NULL for unsupported type pairs, and a hypothesis sweep against the reference."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdbind
from simdbind._fastpath import planned_gather
from simdbind.conformance.families.gather.reference import gather_elements as reference
from simdbind import ArgumentError, ContextClosedError, DTypeError


def test_onnx_examples(library):
    # The two examples of the ONNX GatherElements documentation.
    data = np.array([[1, 2], [3, 4]], np.float32)
    out = simdbind.gather_elements(data, np.array([[0, 0], [1, 0]], np.int64), axis=1, library=library)
    np.testing.assert_array_equal(out, [[1, 1], [4, 3]])
    data = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    out = simdbind.gather_elements(data, np.array([[1, 2, 0], [2, 0, 0]], np.int32), axis=0, library=library)
    np.testing.assert_array_equal(out, [[4, 8, 3], [7, 2, 3]])


def test_negative_indices_count_from_the_end(library):
    data = np.array([10, 20, 30], np.uint8)
    out = simdbind.gather_elements(data, np.array([-1, -3, 0, 2], np.int32), library=library)
    np.testing.assert_array_equal(out, [30, 10, 10, 30])


def test_float_bits_and_bf16_dtype_are_kept(library):
    payload = np.array([0x7FC01234, 0x3F800000], np.uint32).view(np.float32)
    out = simdbind.gather_elements(payload, np.array([0, 1, 0], np.int64), library=library)
    np.testing.assert_array_equal(out.view(np.uint32), [0x7FC01234, 0x3F800000, 0x7FC01234])
    ml_dtypes = pytest.importorskip("ml_dtypes")
    data = np.array([[1.5, -2.0]], ml_dtypes.bfloat16)
    out = simdbind.gather_elements(data, np.array([[1, 1, 0]], np.int32), axis=-1, library=library)
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out.astype(np.float32), [[-2.0, -2.0, 1.5]])


def test_constant_index_context_is_reused_and_keeps_its_own_copy(library):
    idx = np.array([[2, 0], [1, -1]], np.int32)
    idx_size = idx.size
    with simdbind.GatherElements(np.float32, np.int32, (2, 3), (2, 2), 1, index=idx, library=library) as ctx:
        idx[:] = 0  # the context validated and copied the index: later changes by the caller do not leak in
        del idx
        gc.collect()
        a = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
        np.testing.assert_array_equal(ctx(a), [[3, 1], [5, 6]])
        np.testing.assert_array_equal(ctx(a * 10), [[30, 10], [50, 60]])
        # the bundled library keeps the index as positions, a byte each here; upstream copies nothing
        assert ctx.internal_buffer_size == (idx_size if library.kind == "bundled" else 0)
        with pytest.raises(ArgumentError, match="constant index"):
            ctx(a, np.zeros((2, 2), np.int32))
    assert ctx.closed
    with pytest.raises(ContextClosedError):
        ctx(a)
    ctx.close()  # idempotent


def test_per_call_context_needs_indices_and_writes_out(library):
    ctx = simdbind.GatherElements("uint8", "int64", (4,), (3,), 0, library=library)
    with pytest.raises(ArgumentError, match="indices: required"):
        ctx(np.zeros(4, np.uint8))
    out = np.full(3, 9, np.uint8)
    assert ctx(np.array([5, 6, 7, 8], np.uint8), np.array([3, 0, -2], np.int64), out=out) is out
    np.testing.assert_array_equal(out, [8, 5, 7])
    ctx.close()


def test_context_is_safe_across_threads(library):
    rng = np.random.default_rng(5)
    idx = rng.integers(-50, 50, (8, 200)).astype(np.int64)
    ctx = simdbind.GatherElements(np.float32, np.int64, (8, 50), (8, 200), 1, index=idx, library=library)
    datas = [rng.uniform(-1, 1, (8, 50)).astype(np.float32) for _ in range(8)]
    results: dict[int, np.ndarray] = {}

    def work(i):
        for _ in range(50):
            results[i] = ctx(datas[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, d in enumerate(datas):
        np.testing.assert_array_equal(results[i], reference(d, idx, 1))
    ctx.close()


def test_empty_shapes_do_not_call_c(library):
    out = simdbind.gather_elements(np.zeros((0, 3), np.float32), np.zeros((0, 5), np.int32), axis=1,
                                   library=library)
    assert out.shape == (0, 5)


# -- the planned call: one C call does the checks, the lock and the kernel -------------------------------------------
def _data_types():
    types = [np.float32, np.uint8, np.uint16]
    try:
        import ml_dtypes
    except ImportError:
        return types
    return types + [ml_dtypes.bfloat16]


@pytest.mark.skipif(planned_gather is None, reason="simdbind._fastcall is not built: no planned call")
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
@pytest.mark.parametrize("data_type", _data_types(), ids=lambda t: np.dtype(t).name)
def test_valid_calls_never_reach_the_ordinary_path(library, monkeypatch, data_type, index_type):
    """Every valid call of a context or of gather_elements on the default library's types is served by the one C
    call (the Python checks in front of it cost more than torch.gather's whole call); bf16 included."""
    def ordinary(*args, **kwargs):
        raise AssertionError("the ordinary path ran")

    monkeypatch.setattr(simdbind.GatherElements, "_ordinary_forward", ordinary)
    rng = np.random.default_rng(3)
    data = rng.integers(0, 250, (3, 5)).astype(np.uint16).astype(data_type)
    idx = rng.integers(-5, 5, (3, 4)).astype(index_type)
    expected = reference(data, idx, 1)
    with simdbind.GatherElements(data.dtype, idx.dtype, data.shape, idx.shape, 1, library=library) as ctx:
        assert _bits(ctx(data, idx)) == _bits(expected) and ctx(data, idx).dtype == data.dtype
        out = np.zeros(idx.shape, data.dtype)
        assert ctx(data, idx, out=out) is out and _bits(out) == _bits(expected)
    with simdbind.GatherElements(data.dtype, idx.dtype, data.shape, idx.shape, -1, index=idx,
                                 library=library) as ctx:
        assert _bits(ctx(data)) == _bits(expected)
        assert ctx(data, out=out) is out and _bits(out) == _bits(expected)
    for _ in range(2):  # the first call makes and keeps the context, the second finds it
        assert _bits(simdbind.gather_elements(data, idx, 1, library=library)) == _bits(expected)
        assert simdbind.gather_elements(data, idx, 1, out=out, library=library) is out
        assert _bits(out) == _bits(expected)


def _bits(array):
    return array.view(f"u{array.dtype.itemsize}").tolist()


def test_planned_forward_checks_every_argument_and_writes_nothing_on_error(library):
    data = np.arange(15, dtype=np.float32).reshape(3, 5)
    idx = np.array([[0, 4, -5, 2]] * 3, np.int64)
    ctx = simdbind.GatherElements(np.float32, np.int64, (3, 5), (3, 4), 1, library=library)
    expected = reference(data, idx, 1)
    np.testing.assert_array_equal(ctx(data, idx), expected)
    out = np.full((3, 4), 7, np.float32)
    for bad in (5, -6, 2**40, -2**63):
        wrong = idx.copy()
        wrong[1, 2] = bad
        with pytest.raises(ArgumentError, match=r"indices: every index must be in \[-5, 5\)"):
            ctx(data, wrong, out=out)
        assert (out == 7).all()
    inside_indices = idx.view(np.uint8).reshape(-1)[:48].view(np.float32).reshape(3, 4)  # out over the indices
    rejected = [(inside_indices, ArgumentError, "out: must not overlap indices"),
                (data.reshape(-1)[:12].reshape(3, 4), ArgumentError, "out: must not overlap data"),
                (np.zeros((4, 3), np.float32).T, ArgumentError, "out: must be C-contiguous"),
                (np.zeros((3, 4), ">f4"), DTypeError, "out: must be in native byte order"),
                (np.zeros((3, 4), np.uint32), DTypeError, "out: must have dtype float32"),
                (np.zeros((3, 5), np.float32), ArgumentError, r"out: must have shape \(3, 4\)")]
    readonly = np.zeros((3, 4), np.float32)
    readonly.flags.writeable = False
    rejected.append((readonly, ArgumentError, "out: must be writeable"))
    for bad_out, error, message in rejected:
        with pytest.raises(error, match=message):
            ctx(data, idx, out=bad_out)
        np.testing.assert_array_equal(data, np.arange(15, dtype=np.float32).reshape(3, 5))  # out's memory too
        np.testing.assert_array_equal(idx, [[0, 4, -5, 2]] * 3)
    with pytest.raises(DTypeError, match="indices: must have dtype int64"):
        ctx(data, idx.astype(np.int32))
    with pytest.raises(DTypeError, match="data: must be in native byte order"):
        ctx(data.astype(">f4"), idx)
    np.testing.assert_array_equal(ctx(np.asfortranarray(data), idx[:, ::-1].copy()[:, ::-1]), expected)
    ctx.close()
    with pytest.raises(ContextClosedError):
        ctx(data, idx)


@pytest.mark.skipif(planned_gather is None, reason="simdbind._fastcall is not built: no planned call")
def test_planned_calls_wait_for_the_context_lock(library):
    """The C call takes the context's lock as `with` does: a call started while another thread holds it (here the
    test itself) returns only after it is released."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    idx = np.array([[2, 1], [0, -1]], np.int32)
    for make in (lambda: simdbind.GatherElements(np.float32, np.int32, (2, 3), (2, 2), 1, library=library),
                 lambda: simdbind.GatherElements(np.float32, np.int32, (2, 3), (2, 2), 1, index=idx,
                                                 library=library)):
        ctx = make()
        args = (data,) if ctx._index is not None else (data, idx)
        done = threading.Event()
        results = []
        thread = threading.Thread(target=lambda: (results.append(ctx(*args)), done.set()))
        with ctx._lock:
            thread.start()
            assert not done.wait(0.3) and results == []
        thread.join(10)
        assert done.is_set()
        np.testing.assert_array_equal(results[0], [[2, 1], [3, 5]])
        ctx.close()


@pytest.mark.parametrize("data_type, index_type, expect_null", [
    (0, 1, False), (0, 4, False), (3, 1, False), (3, 4, False), (7, 1, False), (7, 4, False),
    (1, 1, True), (2, 1, True), (4, 4, True), (8, 1, True), (0, 0, True), (0, 3, True), (7, 5, True), (0, 7, True),
])
def test_c_init_returns_null_for_unsupported_pairs(library, data_type, index_type, expect_null):
    ffi = library.ffi
    outer = ffi.new("size_t[]", [2])
    ctx = library.function("SimdSynetGatherElementsInit")(data_type, index_type, 0, 1, outer, 1, 3, 1, 2)
    assert (ctx == ffi.NULL) == expect_null
    library.function("SimdRelease")(ctx)


@pytest.mark.parametrize("call, error, message", [
    (lambda lib: simdbind.gather_elements(np.zeros(3, np.float32), np.array([3], np.int32), library=lib),
     ArgumentError, r"indices: every index must be in \[-3, 3\).*got 3"),
    (lambda lib: simdbind.gather_elements(np.zeros(3, np.float32), np.array([-4], np.int32), library=lib),
     ArgumentError, "got -4"),
    (lambda lib: simdbind.gather_elements(np.zeros(3, np.float64), np.array([0], np.int32), library=lib),
     DTypeError, "data_dtype: must be float32, uint8 or bf16"),
    (lambda lib: simdbind.gather_elements(np.zeros(3, np.float32), np.array([0], np.int16), library=lib),
     DTypeError, "indices: must be int32 or int64"),
    (lambda lib: simdbind.gather_elements(np.zeros((2, 3), np.float32), np.zeros((3, 3), np.int32), 1,
                                          library=lib), ArgumentError, "must equal data_shape"),
    (lambda lib: simdbind.gather_elements(np.zeros((2, 3), np.float32), np.zeros(3, np.int32), library=lib),
     ArgumentError, "index_shape: must have the rank"),
    (lambda lib: simdbind.gather_elements(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int32), 2,
                                          library=lib), ArgumentError, r"axis: must be in \[-2, 2\)"),
    (lambda lib: simdbind.gather_elements(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int32), -3,
                                          library=lib), ArgumentError, "axis: must be >= -2"),
    (lambda lib: simdbind.gather_elements([1.0], np.zeros(1, np.int32), library=lib), ArgumentError,
     "data: must be a numpy.ndarray"),
    (lambda lib: simdbind.gather_elements(np.zeros(3, np.float32), np.zeros(2, np.int32),
                                          out=np.zeros(2, np.uint8), library=lib), DTypeError, "out: must have dtype"),
    (lambda lib: simdbind.GatherElements(np.float32, np.int32, (3,), (2,), 0, index=np.array([0, 5], np.int32),
                                         library=lib), ArgumentError, r"index: every index must be in"),
    (lambda lib: simdbind.GatherElements(np.float32, np.int32, (3,), (2,), 0, library=lib)(
        np.zeros(4, np.float32), np.zeros(2, np.int32)), ArgumentError, r"data: must have shape \(3,\)"),
    (lambda lib: simdbind.GatherElements(np.float32, np.int32, (3,), (2,), 0, library=lib)(
        np.zeros(3, np.uint8), np.zeros(2, np.int32)), DTypeError, "data: must have a float32 dtype"),
    (lambda lib: simdbind.GatherElements(np.float32, np.int32, (3,), (2,), 0, library=lib)(
        np.zeros(3, np.float32), np.zeros(2, np.int64)), DTypeError, "indices: must have dtype int32"),
    (lambda lib: simdbind.GatherElements(np.float32, np.int32, (), (), 0, library=lib), ArgumentError,
     "data_shape: must have at least one dimension"),
    (lambda lib: simdbind.GatherElements(np.float32, np.int32, 3, (2,), 0, library=lib), ArgumentError,
     "data_shape: must be a tuple"),
])
def test_bad_arguments_raise_named_errors(library, call, error, message):
    with pytest.raises(error, match=message):
        call(library)


def test_out_is_untouched_when_indices_are_out_of_range(library):
    out = np.full(2, 7, np.float32)
    with pytest.raises(ArgumentError):
        simdbind.gather_elements(np.zeros(3, np.float32), np.array([0, 9], np.int32), out=out, library=library)
    np.testing.assert_array_equal(out, [7, 7])


@st.composite
def gather_problems(draw):
    rank = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    axis = draw(st.integers(-rank, rank - 1))
    index_shape = list(shape)
    index_shape[axis] = draw(st.integers(1, 7))
    return shape, index_shape, axis, draw(st.sampled_from(["float32", "uint8", "uint16"])), \
        draw(st.sampled_from(["int32", "int64"])), draw(st.booleans()), draw(st.integers(0, 2**31))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=gather_problems())
def test_hypothesis_matches_reference(bundled, problem):
    shape, index_shape, axis, data_type, index_type, constant, seed = problem
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 250, shape).astype(data_type)
    n = shape[axis]
    idx = rng.integers(-n, n, index_shape).astype(index_type)
    if constant:
        with simdbind.GatherElements(data.dtype, idx.dtype, data.shape, idx.shape, axis, index=idx,
                                     library=bundled) as ctx:
            got = ctx(data)
    else:
        got = simdbind.gather_elements(data, idx, axis, library=bundled)
    np.testing.assert_array_equal(got, np.take_along_axis(data, np.where(idx < 0, idx + n, idx), axis))
    np.testing.assert_array_equal(got, reference(data, idx, axis))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_the_index_types_extremes_are_refused(library, index_dtype):
    """The int32/int64 extremes are outside every case's domain (values.py: gather's outside_domain): valid only
    for an axis of 2^31 (2^63) elements. The wrapper refuses them before C reads anything."""
    info = np.iinfo(index_dtype)
    for extreme in (info.min, info.max):
        out = np.full(2, 7, np.float32)
        with pytest.raises(ArgumentError, match="index"):
            simdbind.gather_elements(np.zeros(3, np.float32), np.array([0, extreme], index_dtype), out=out,
                                     library=library)
        np.testing.assert_array_equal(out, [7, 7])
