"""Planned calls (see "plans" in simdbind/_fastpath.py): the per-library cache of what the checks derived from one
parameter tuple, and the C contexts that one-shot functions keep in it.

A plan must never change a result or skip a check: every call below is made once on the ordinary path (which
stores the plan) and then again on the planned one, and the arguments that must be refused are refused after a
plan for equal-looking arguments exists. The cache must be keyed on types as well as values, bounded, emptied in a
forked child, and safe to share between threads."""

from __future__ import annotations

import gc
import os
import threading

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError, SimdBindError
from simdbind._fastpath import bindings, plan_key
from simdbind.enums import TensorFormat
from simdbind.gather import GatherElements

pytestmark = pytest.mark.skipif(plan_key is None, reason="simdbind._fastcall is not built: no planned calls")


@pytest.fixture
def lib():
    library = simdbind.load("bundled")  # a fresh Library: its plan cache starts empty
    yield library
    bindings(library).plans.clear()


def plans(library):
    return bindings(library).plans


def img(shape=(2, 4, 5, 6), seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-4, 4, shape).astype(dtype)


# -- keys ---------------------------------------------------------------------------------------------------------
def test_keys_keep_types_apart():
    assert plan_key("p", 1, "nchw", (1, (2, 3))) == plan_key("p", 1, "nchw", (1, (2, 3)))
    assert plan_key("p", True) != plan_key("p", 1)  # True == 1 in Python: the key must not say so
    assert plan_key("p", False) != plan_key("p", 0)
    assert plan_key("p", False) != plan_key("p", True)
    for not_plain in (1.0, np.int64(1), np.bool_(True), TensorFormat.NCHW, [1, 1], (1, 2.0), ((1, (2,)),), b"x",
                      object()):
        assert plan_key("p", not_plain) is None, not_plain
    assert plan_key("p", None) == plan_key("p", None)


# -- a plan changes nothing ---------------------------------------------------------------------------------------
CALLS = {
    "pooling_max": lambda x, lib, out=None: simdbind.pooling_max(x, (3, 2), stride=(2, 1), pad=1, out=out,
                                                                 library=lib),
    "pooling_max nhwc ceil": lambda x, lib, out=None: simdbind.pooling_max(x, 2, stride=2, layout="nhwc",
                                                                           ceil_mode=True, out=out, library=lib),
    "pooling_max 3d": lambda x, lib, out=None: simdbind.pooling_max(x, 2, stride=1, kernel_c=2, stride_c=2,
                                                                    out=out, library=lib),
    "pooling_average": lambda x, lib, out=None: simdbind.pooling_average(x, 2, stride=2, exclude_pad=True, pad=1,
                                                                         out=out, library=lib),
    "softmax": lambda x, lib, out=None: simdbind.softmax(x, axis=1, out=out, library=lib),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_planned_call_gives_the_ordinary_result(lib, name):
    call, x = CALLS[name], img()
    first = call(x, lib)  # ordinary path: stores the plan
    assert len(plans(lib)) == 1
    second = call(x.copy(), lib)  # planned
    assert second.tobytes() == first.tobytes() and second.shape == first.shape
    out = np.full_like(first, np.nan)
    assert call(x, lib, out) is out and out.tobytes() == first.tobytes()
    assert len(plans(lib)) == 1


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "bfloat16"])
def test_planned_max_of_each_dtype_gives_the_ordinary_result(lib, dtype):
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        x = img().astype(ml_dtypes.bfloat16)
    else:
        x = np.random.default_rng(1).integers(0, 255, (2, 4, 5, 6)).astype(dtype)
    first = simdbind.pooling_max(x, 2, stride=2, library=lib)
    again = simdbind.pooling_max(x, 2, stride=2, library=lib)
    assert again.dtype == x.dtype and again.tobytes() == first.tobytes()
    expected = x[:, :, :4, :].reshape(2, 4, 2, 2, 3, 2).max(axis=(3, 5))  # uint16: positive bf16 bits, ordered
    assert first.tobytes() == np.ascontiguousarray(expected).tobytes()


def test_planned_inner_products_give_the_ordinary_result(lib):
    rng = np.random.default_rng(2)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((3, 16), (5, 16), (5,)))
    first = simdbind.inner_product(x, w, b, library=lib)
    assert simdbind.inner_product(x, w, b, library=lib).tobytes() == first.tobytes()
    np.testing.assert_allclose(first, x @ w.T + b, rtol=1e-5, atol=1e-5)
    no_bias = simdbind.inner_product(x, w, library=lib)
    assert simdbind.inner_product(x, w, library=lib).tobytes() == no_bias.tobytes()
    src = rng.integers(0, 256, (3, 16)).astype(np.uint8)
    wi8 = rng.integers(-128, 128, (5, 16)).astype(np.int8)
    exact = src.astype(np.int64) @ wi8.T.astype(np.int64)
    for _ in range(2):
        np.testing.assert_array_equal(simdbind.inner_product_8i(src, wi8, "precise", library=lib), exact)
    assert len(plans(lib)) == 3


# -- every check stays ------------------------------------------------------------------------------------------
def test_arguments_equal_to_planned_ones_are_still_refused(lib):
    x = img()
    simdbind.pooling_max(x, 2, stride=2, library=lib)
    simdbind.pooling_average(x, 2, stride=2, exclude_pad=True, library=lib)
    with pytest.raises(ArgumentError, match="kernel"):
        simdbind.pooling_max(x, 2.0, stride=2, library=lib)
    with pytest.raises(ArgumentError, match="kernel"):
        simdbind.pooling_max(x, True, stride=2, library=lib)
    with pytest.raises(ArgumentError, match="ceil_mode"):
        simdbind.pooling_max(x, 2, stride=2, ceil_mode=0, library=lib)
    with pytest.raises(ArgumentError, match="exclude_pad"):
        simdbind.pooling_average(x, 2, stride=2, exclude_pad=1, library=lib)
    with pytest.raises(ArgumentError, match="layout"):
        simdbind.pooling_max(x, 2, stride=2, layout=0, library=lib)
    with pytest.raises(ArgumentError, match="library"):
        simdbind.pooling_max(x, 2, stride=2, library="bundled")


def test_arrays_are_checked_on_every_planned_call(lib):
    x = img()
    result = simdbind.pooling_max(x, 2, stride=2, library=lib)
    for bad_out, error in ((np.empty(result.shape, np.float64), DTypeError),
                           (np.empty(result.shape, ">f4"), DTypeError),
                           (np.empty((2, 4, 2, 4), np.float32), ArgumentError),
                           (np.empty(result.shape[::-1], np.float32).T, ArgumentError),
                           (result.reshape(-1)[:result.size].reshape(result.shape).copy().view(np.int32), DTypeError)):
        with pytest.raises(error):
            simdbind.pooling_max(x, 2, stride=2, out=bad_out, library=lib)
    readonly = np.empty_like(result)
    readonly.flags.writeable = False
    with pytest.raises(ArgumentError, match="writeable"):
        simdbind.pooling_max(x, 2, stride=2, out=readonly, library=lib)
    inside = np.zeros(x.size + result.size, np.float32)
    src, dst = inside[:x.size].reshape(x.shape), inside[x.size - 4:x.size - 4 + result.size].reshape(result.shape)
    src[...] = x
    with pytest.raises(ArgumentError, match="overlap"):
        simdbind.pooling_max(src, 2, stride=2, out=dst, library=lib)
    with pytest.raises(DTypeError, match="byte order"):
        simdbind.pooling_max(x.astype(">f4"), 2, stride=2, library=lib)
    strided = np.asfortranarray(x)  # not C-contiguous: copied by the ordinary path, same result
    assert simdbind.pooling_max(strided, 2, stride=2, library=lib).tobytes() == result.tobytes()


def planned_gather(lib):
    """data, index and their result after two calls, the second one planned."""
    data = img((4, 5))
    index = np.array([[0, 4, -5, 2, 1]] * 4, np.int64)
    expected = np.take_along_axis(data, index % 5, axis=1)
    for _ in range(2):
        np.testing.assert_array_equal(simdbind.gather_elements(data, index, 1, library=lib), expected)
    return data, index, expected


def test_gather_indices_are_range_checked_on_every_planned_call(lib):
    data, index, _ = planned_gather(lib)
    for bad in (5, -6):
        wrong = index.copy()
        wrong[2, 3] = bad
        out = np.full((4, 5), 7, np.float32)
        with pytest.raises(ArgumentError, match="index"):
            simdbind.gather_elements(data, wrong, 1, out=out, library=lib)
        assert (out == 7).all()  # nothing written
    with pytest.raises(ArgumentError, match="overlap"):
        simdbind.gather_elements(data, index, 1, out=data, library=lib)


def test_gather_arguments_equal_to_planned_ones_are_still_refused(lib):
    data, index, expected = planned_gather(lib)
    assert len(plans(lib)) == 1
    for axis in (True, 1.0):  # equal to 1 in Python; refused by the ordinary checks
        with pytest.raises(ArgumentError, match="axis: must be an integer"):
            simdbind.gather_elements(data, index, axis, library=lib)
    np.testing.assert_array_equal(simdbind.gather_elements(data, index, np.int64(1), library=lib), expected)
    np.testing.assert_array_equal(simdbind.gather_elements(data, index, -1, library=lib), expected)
    with pytest.raises(DTypeError, match="data: must be in native byte order"):
        simdbind.gather_elements(data.astype(">f4"), index, 1, library=lib)
    with pytest.raises(DTypeError, match="indices: must be in native byte order"):
        simdbind.gather_elements(data, index.astype(">i8"), 1, library=lib)
    with pytest.raises(DTypeError, match="out: must have dtype float32"):
        simdbind.gather_elements(data, index, 1, out=np.zeros((4, 5), np.int32), library=lib)
    small = np.arange(20, dtype=np.uint8).reshape(4, 5)  # same shapes, another dtype: a context of its own
    np.testing.assert_array_equal(simdbind.gather_elements(small, index, 1, library=lib),
                                  np.take_along_axis(small, index % 5, axis=1))
    contexts = [plan for plan in plans(lib)._entries.values() if isinstance(plan, GatherElements)]
    assert sorted((c.data_kind, c.axis) for c in contexts) == [("float32", 1), ("float32", 1), ("uint8", 1)]


def test_gather_arrays_the_planned_call_declines_reuse_the_cached_context(lib):
    """Strided arrays are valid but not what the one C call takes: the cached context checks and copies them on
    its ordinary path, instead of a new context (Init and all) being made and cached on every such call."""
    data, index = img((4, 5)), np.array([[0, 4, -5, 2, 1]] * 4, np.int64)
    expected = np.take_along_axis(data, index % 5, axis=1)
    simdbind.gather_elements(data, index, 1, library=lib)
    [context] = plans(lib)._entries.values()
    strided_data, strided_index = np.asfortranarray(data), np.asfortranarray(index)
    for _ in range(3):
        np.testing.assert_array_equal(simdbind.gather_elements(strided_data, index, 1, library=lib), expected)
        np.testing.assert_array_equal(simdbind.gather_elements(data, strided_index, 1, library=lib), expected)
    assert list(plans(lib)._entries.values()) == [context]
    out = np.full((4, 5), 7, np.float32)
    wrong = strided_index.copy(order="F")
    wrong[0, 0] = 5
    with pytest.raises(ArgumentError, match=r"indices: every index must be in \[-5, 5\)"):
        simdbind.gather_elements(data, wrong, 1, out=out, library=lib)
    with pytest.raises(ArgumentError, match="out: must be C-contiguous"):
        simdbind.gather_elements(data, index, 1, out=np.asfortranarray(out), library=lib)
    assert (out == 7).all()


def test_a_cached_gather_context_serialises_threads_that_release_the_gil(lib):
    """Calls of 2 x 8 KB arrays release the GIL inside the C call; threads sharing gather_elements' cached context
    (one parameter tuple) wait for its lock and each get its own result."""
    rng = np.random.default_rng(8)
    datas = [rng.uniform(-1, 1, (16, 128)).astype(np.float32) for _ in range(4)]
    indices = [rng.integers(-128, 128, (16, 128)).astype(np.int64) for _ in range(4)]
    expected = [np.take_along_axis(d, i % 128, axis=1) for d, i in zip(datas, indices)]
    failures: list[int] = []

    def worker(t):
        out = np.empty((16, 128), np.float32)
        for _ in range(200):
            if simdbind.gather_elements(datas[t], indices[t], 1, out=out, library=lib) is not out or \
                    not np.array_equal(out, expected[t]):
                failures.append(t)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and len(plans(lib)) == 1


# -- cached contexts ----------------------------------------------------------------------------------------------
def test_a_cached_context_is_never_shared_across_parameters(lib):
    data = img((4, 6))
    rows = np.array([[3, 0, 1, 2, 0, 1]] * 2, np.int32)
    columns = np.array([[5, 0, 1], [2, 2, 2], [0, 0, 0], [1, 4, 3]], np.int32)
    for _ in range(2):
        np.testing.assert_array_equal(simdbind.gather_elements(data, rows, 0, library=lib),
                                      np.take_along_axis(data, rows, axis=0))
        np.testing.assert_array_equal(simdbind.gather_elements(data, columns, 1, library=lib),
                                      np.take_along_axis(data, columns, axis=1))
        np.testing.assert_array_equal(simdbind.gather_elements(data, columns.astype(np.int64), 1, library=lib),
                                      np.take_along_axis(data, columns, axis=1))
    contexts = [plan for plan in bindings(lib).plans._entries.values() if isinstance(plan, GatherElements)]
    assert len(contexts) == 3 and len({id(c) for c in contexts}) == 3
    assert {(c.axis, c.index_shape, c.index_dtype.name) for c in contexts} == {
        (0, (2, 6), "int32"), (1, (4, 3), "int32"), (1, (4, 3), "int64")}


def test_conv2d_on_a_cached_context_uses_each_calls_weights(lib):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    results = []
    for seed in range(3):
        w = np.random.default_rng(seed).standard_normal((4, 3, 3, 3)).astype(np.float32)
        b = np.random.default_rng(seed + 10).standard_normal(4).astype(np.float32)
        got = simdbind.conv2d(x, w, b, pad=1, activation="relu", library=lib)
        fresh = simdbind.Convolution32f(x.shape, 4, 3, pad=1, activation="relu", weight=w, bias=b, library=lib)
        assert got.tobytes() == fresh.forward(x).tobytes()
        fresh.close()
        results.append(got)
    assert len(plans(lib)) == 1  # one context served the three weight sets
    assert results[0].tobytes() != results[1].tobytes()
    memory = np.ones(200, np.float32)
    w, out = memory[:108].reshape(4, 3, 3, 3), memory[50:194].reshape(1, 4, 6, 6)
    simdbind.conv2d(x, w, pad=1, library=lib)  # planned from here on
    with pytest.raises(ArgumentError, match="overlap"):
        simdbind.conv2d(x, w, pad=1, out=out, library=lib)
    assert (memory == 1).all()


def test_one_shot_calls_follow_an_isa_change(lib):
    """A plan may hold a C context, which keeps the ISA of its creation: a change of the bundled library's ISA drops
    every plan, also one made through another Library object of the same library (the ISA is process-wide). conv2d's
    last bits differ between ISAs with and without fused multiply-adds, so a stale context shows."""
    isas = [isa for isa in ("base", "avx2") if isa in lib.isas_supported]
    if len(isas) < 2:
        pytest.skip("needs base and avx2")
    rng = np.random.default_rng(9)
    x, w = rng.uniform(-1, 1, (1, 16, 9, 21)).astype(np.float32), rng.uniform(-1, 1, (16, 1, 3, 3)).astype(np.float32)
    data, index = img((4, 6)), np.array([[5, 0, 1], [2, 2, 2], [0, 0, 0], [1, 4, 3]], np.int64)
    other = simdbind.load(simdbind.bundled_path(), mode="abi")
    fresh = {}
    for isa in isas:
        with lib.use_isa(isa):
            context = simdbind.Convolution32f((16, 9, 21), 16, 3, pad=1, group=16, weight=w, library=lib)
            fresh[isa] = context.forward(x)
            context.close()
    assert fresh["base"].tobytes() != fresh["avx2"].tobytes()
    for switch in (lib, other):
        for isa in isas + isas[::-1]:
            with switch.use_isa(isa):
                assert simdbind.conv2d(x, w, pad=1, group=16, library=lib).tobytes() == fresh[isa].tobytes(), isa
                gather = [p for p in plans(lib)._entries.values() if isinstance(p, GatherElements)]
                assert all(g.isa == isa for g in gather)
                np.testing.assert_array_equal(simdbind.gather_elements(data, index, 1, library=lib),
                                              np.take_along_axis(data, index, axis=1))
    with lib.use_isa(isas[0]):
        simdbind.conv2d(x, w, pad=1, group=16, library=lib)
        planned = len(plans(lib))
        lib.set_isa(isas[0])  # no change: the plans stay
        assert len(plans(lib)) == planned > 0


def test_the_cache_is_bounded_and_frees_what_it_drops(lib):
    cache = plans(lib)
    data = img((3, 40))
    gc.collect()
    before = sum(isinstance(o, GatherElements) for o in gc.get_objects())
    for i in range(100_000):
        count = 1 + i % 300  # 300 parameter tuples: more than the cache holds, so entries keep being dropped
        index = np.zeros((3, count), np.int32)
        simdbind.gather_elements(data, index, 1, library=lib)
        assert len(cache) <= cache.limit
    gc.collect()
    alive = sum(isinstance(o, GatherElements) for o in gc.get_objects()) - before
    assert alive <= cache.limit
    cache.clear()
    gc.collect()
    assert sum(isinstance(o, GatherElements) for o in gc.get_objects()) == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_with_empty_caches_and_rebuilds_them(lib):
    x, data = img(), img((4, 5))
    index = np.zeros((4, 5), np.int64)
    simdbind.pooling_max(x, 2, stride=2, library=lib)
    simdbind.gather_elements(data, index, 1, library=lib)
    assert len(plans(lib)) == 2
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        status = 1
        try:
            empty = len(plans(lib)) == 0
            ok = simdbind.pooling_max(x, 2, stride=2, library=lib).tobytes() == simdbind.pooling_max(
                x, 2, stride=2, library=lib).tobytes()
            ok = ok and (simdbind.gather_elements(data, index, 1, library=lib) == data[:, :1]).all()
            os.write(write, b"%d %d %d" % (empty, ok, len(plans(lib))))
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    report = os.read(read, 100).decode()
    os.close(read)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and report == "1 1 2"
    assert len(plans(lib)) == 2  # the parent keeps its own


def test_planned_calls_and_cached_contexts_are_safe_under_threads(lib):
    x = np.random.default_rng(5).standard_normal((1, 2, 5, 5)).astype(np.float32)
    weights = [np.random.default_rng(s).standard_normal((3, 2, 3, 3)).astype(np.float32) for s in range(4)]
    expected = []
    for w in weights:
        with simdbind.Convolution32f(x.shape, 3, 3, weight=w, library=lib) as conv:
            expected.append(conv.forward(x))
    data = img((6, 7))
    indices = [np.random.default_rng(s).integers(-7, 7, (6, 7)).astype(np.int64) for s in range(4)]
    failures: list[str] = []

    def worker(t):
        try:
            for _ in range(300):
                got = simdbind.conv2d(x, weights[t], library=lib)
                if got.tobytes() != expected[t].tobytes():
                    failures.append(f"conv2d thread {t}")
                gathered = simdbind.gather_elements(data, indices[t], 1, library=lib)
                if not np.array_equal(gathered, np.take_along_axis(data, indices[t] % 7, axis=1)):
                    failures.append(f"gather thread {t}")
                pooled = simdbind.pooling_max(data[None], 2, stride=1, library=lib)
                if not np.array_equal(pooled[0], np.maximum.reduce(
                        [data[:-1, :-1], data[1:, :-1], data[:-1, 1:], data[1:, 1:]])):
                    failures.append(f"pooling thread {t}")
        except SimdBindError as error:  # pragma: no cover - reported below
            failures.append(repr(error))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(plans(lib)) == 3


def test_inner_product_context_forward_keeps_its_b_rules(lib):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 16)).astype(np.float32), rng.standard_normal((5, 16)).astype(np.float32)
    with simdbind.InnerProduct32f(3, 5, 16, trans_b=True, const_b=False, library=lib) as ip:
        first = ip.forward(a, b)
        assert ip.forward(a, b).tobytes() == first.tobytes()
        np.testing.assert_allclose(first, a @ b.T, rtol=1e-5, atol=1e-5)
        with pytest.raises(ArgumentError, match="B: required"):
            ip.forward(a)
        with pytest.raises(ArgumentError, match="overlap"):
            ip.forward(a, b, out=b.reshape(-1)[:15].reshape(3, 5))
    with simdbind.InnerProduct32f(3, 5, 16, trans_b=True, weight=b, library=lib) as ip:
        np.testing.assert_allclose(ip.forward(a), first, rtol=1e-5, atol=1e-6)  # packed B: other summation order
        with pytest.raises(ArgumentError, match="B: must be None"):
            ip.forward(a, b)


def test_conv2d_keeps_only_small_contexts(lib):
    from simdbind.convolution import CACHED_CONV_FLOATS

    x = img((1, 64, 8, 8))
    small = np.ones((4, 64, 1, 1), np.float32)
    large = np.ones((CACHED_CONV_FLOATS // 9 + 64, 64, 3, 3), np.float32) / 576
    simdbind.conv2d(x, small, library=lib)
    assert len(plans(lib)) == 1
    got = simdbind.conv2d(x, large, pad=1, library=lib)
    assert len(plans(lib)) == 1  # closed after its call, not kept
    np.testing.assert_allclose(got[0, :, 4, 4], x[0, :, 3:6, 3:6].sum() / 576, rtol=1e-4)
