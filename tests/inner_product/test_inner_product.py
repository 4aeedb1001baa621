"""simdbind.InnerProduct32f, inner_product and inner_product_8i: values on hand-checked inputs, context behaviour
(lifetime, copies, threads, the ip32f-transb-m1-identity-uses-setparams-weight route) and every argument rule."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, ContextClosedError, DTypeError
from simdbind import activation as act


def f32(values):
    return np.array(values, np.float32)


A2 = f32([[1, 2, 3], [-1, 0, 2]])           # M = 2, K = 3
W = f32([[1, 0, -1], [2, 1, 0], [0, 0, 1], [1, 1, 1]])  # N = 4 rows of K (trans_b layout)
EXPECTED = f32([[-2, 4, 3, 6], [-3, -2, 2, 1]])          # A2 @ W.T


def test_hand_checked_values_every_layout(library):
    for trans_b in (False, True):
        B = W if trans_b else np.ascontiguousarray(W.T)
        with simdbind.InnerProduct32f(2, 4, 3, trans_b=trans_b, weight=B, library=library) as ip:
            np.testing.assert_array_equal(ip.forward(A2), EXPECTED)
        with simdbind.InnerProduct32f(2, 4, 3, trans_b=trans_b, const_b=False, library=library) as ip:
            np.testing.assert_array_equal(ip.forward(A2, B), EXPECTED)


def test_bias_and_activation(library):
    bias = f32([1, -5, 0, 0.5])
    with simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, bias=bias, activation="relu",
                                  library=library) as ip:
        np.testing.assert_array_equal(ip.forward(A2), np.maximum(EXPECTED + bias, 0))
    with simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, activation=act.prelu([0.5, 1, 2, -1]),
                                  library=library) as ip:
        np.testing.assert_array_equal(ip.forward(A2), f32([[-1, 4, 3, 6], [-1.5, -2, 2, 1]]))
    with simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, activation="restrict_range", params=[-2, 3],
                                  library=library) as ip:
        np.testing.assert_array_equal(ip.forward(A2), np.clip(EXPECTED, -2, 3))


def test_out_is_written_not_read_and_returned(library):
    out = np.full((2, 4), np.nan, np.float32)
    with simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, library=library) as ip:
        assert ip.forward(A2, out=out) is out
    np.testing.assert_array_equal(out, EXPECTED)


def test_non_constant_b_changes_between_calls_including_the_upstream_defect_route(library):
    # ip32f-transb-m1-identity-uses-setparams-weight: upstream's transB && M == 1 && Identity path would use SetParams' weight (NULL here) instead.
    rng = np.random.default_rng(5)
    for trans_b in (True, False):
        with simdbind.InnerProduct32f(1, 5, 7, trans_b=trans_b, const_b=False, library=library) as ip:
            for _ in range(3):
                a = rng.standard_normal((1, 7)).astype(np.float32)
                b = rng.standard_normal((5, 7) if trans_b else (7, 5)).astype(np.float32)
                np.testing.assert_allclose(ip.forward(a, b), a @ (b.T if trans_b else b), rtol=1e-5, atol=1e-5)


def test_context_keeps_private_copies_of_weight_bias_and_params(library):
    weight, bias, slopes = W.copy(), f32([0, 0, 0, 0]), f32([1, 1, 1, 1])
    ip = simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=weight, bias=bias, activation="prelu", params=slopes,
                                  library=library)
    weight[:] = 100
    bias[:] = 100
    slopes[:] = 100
    del weight, bias, slopes
    np.testing.assert_array_equal(ip.forward(A2), f32([[-2, 4, 3, 6], [-3, -2, 2, 1]]))
    assert not ip.weight.flags.writeable and not ip.bias.flags.writeable
    ip.close()


def test_reports_internal_buffers_and_isa(bundled):
    with simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, bias=f32([1, 2, 3, 4]), library=bundled) as ip:
        assert ip.internal is True  # the bundled library packs a constant B
        assert ip.internal_buffer_size >= 4 * 3
        assert ip.external_buffer_size == 0
        assert ip.isa == bundled.isa
    with simdbind.InnerProduct32f(2, 4, 3, const_b=False, library=bundled) as ip:
        assert ip.internal is False and ip.internal_buffer_size == 0


def test_context_isa_is_fixed_at_init(bundled):
    if len(bundled.isas_supported) < 2:
        pytest.skip("one ISA only")
    low = bundled.isas_supported[0]
    with bundled.use_isa(low):
        ip = simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, library=bundled)
    assert ip.isa == low
    np.testing.assert_array_equal(ip.forward(A2), EXPECTED)
    ip.close()


def test_close_and_context_manager(library):
    ip = simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, library=library)
    ip.close()
    ip.close()  # idempotent
    assert ip.closed and "closed" in repr(ip)
    with pytest.raises(ContextClosedError, match="closed"):
        ip.forward(A2)
    with simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, library=library) as ip2:
        pass
    assert ip2.closed


def test_thread_safe_forward(bundled):
    rng = np.random.default_rng(9)
    M, N, K = 16, 40, 50
    B = rng.standard_normal((K, N)).astype(np.float32)
    inputs = [rng.standard_normal((M, K)).astype(np.float32) for _ in range(8)]
    results = [None] * len(inputs)
    with simdbind.InnerProduct32f(M, N, K, weight=B, activation="gelu", library=bundled) as ip:
        expected = [ip.forward(a) for a in inputs]

        def work(i):
            for _ in range(20):
                results[i] = ip.forward(inputs[i])

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for got, want in zip(results, expected):
        np.testing.assert_array_equal(got, want)


def test_multithreaded_gemm_matches_single_thread(bundled):
    rng = np.random.default_rng(11)
    A = rng.uniform(-1, 1, (70, 300)).astype(np.float32)
    B = rng.uniform(-1, 1, (300, 200)).astype(np.float32)
    previous = bundled.threads
    try:
        results = []
        for threads in (1, 2):
            bundled.set_threads(threads)
            for const_b in (True, False):
                with simdbind.InnerProduct32f(70, 200, 300, const_b=const_b, weight=B if const_b else None,
                                              library=bundled) as ip:
                    results.append(ip.forward(A, None if const_b else B))
    finally:
        bundled.set_threads(previous)
    np.testing.assert_array_equal(results[0], results[2])  # summation order does not depend on threads
    np.testing.assert_array_equal(results[1], results[3])
    np.testing.assert_allclose(results[0], A.astype(np.float64) @ B, atol=1e-4)


@pytest.mark.parametrize("M", [1, 6, 7, 19, 64])
def test_a_column_does_not_depend_on_how_many_there_are(bundled, M):
    """Each output column is one chain of multiply-adds over K, however wide N is: the GEMM computes a last panel of
    at most one vector with one vector of accumulators (not its zero padding as well), and the columns of N = 1..40
    equal those of N = 64 bit for bit, at every ISA, with the bias and ReLU fused."""
    rng = np.random.default_rng(12)
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            for K in (3, 24, 300, 1100):
                A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
                B = rng.uniform(-1, 1, (K, 64)).astype(np.float32)
                bias = rng.uniform(-1, 1, 64).astype(np.float32)
                wide = simdbind.InnerProduct32f(M, 64, K, weight=B, bias=bias, activation="relu",
                                                library=bundled).forward(A)
                for N in (1, 5, 8, 9, 16, 17, 24, 31, 33, 40):
                    narrow = simdbind.InnerProduct32f(M, N, K, weight=np.ascontiguousarray(B[:, :N]), bias=bias[:N],
                                                      activation="relu", library=bundled).forward(A)
                    np.testing.assert_array_equal(narrow, wide[:, :N], err_msg=f"{isa} K={K} N={N}")


@pytest.mark.parametrize("M", [5, 7, 64])
def test_a_column_with_b_per_call_does_not_depend_on_how_many_there_are(bundled, M):
    """The transposed B given per call: dot products along K in blocks of rows of A and of B (AVX2 copies them to
    aligned rows first), or packed panels elsewhere. Each column equals the same column of N = 64 bit for bit at every
    ISA, however many columns the call has and wherever its block ends."""
    rng = np.random.default_rng(13)
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            for K in (3, 29, 1100):
                A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
                B = rng.uniform(-1, 1, (64, K)).astype(np.float32)
                with simdbind.InnerProduct32f(M, 64, K, trans_b=True, const_b=False, library=bundled) as ip:
                    wide = ip.forward(A, B)
                np.testing.assert_allclose(wide, A.astype(np.float64) @ B.T.astype(np.float64), atol=1e-4)
                for N in (1, 4, 5, 15, 16, 17, 40):
                    with simdbind.InnerProduct32f(M, N, K, trans_b=True, const_b=False, library=bundled) as ip:
                        narrow = ip.forward(A, np.ascontiguousarray(B[:N]))
                    np.testing.assert_array_equal(narrow, wide[:, :N], err_msg=f"{isa} K={K} N={N}")


def test_at_avx2_a_row_with_b_per_call_does_not_depend_on_how_many_rows_there_are(bundled):
    """AVX2 takes dot products along K for a transposed B given per call: up to 4 rows of A one at a time, more in
    blocks of 3 (K <= 2048); both reduce each row's four partial-sum vectors by the same hadd tree, so a row's
    outputs are the same bits whatever M is."""
    if "avx2" not in bundled.isas_supported:
        pytest.skip("this CPU has no AVX2")
    rng = np.random.default_rng(14)
    with bundled.use_isa("avx2"):
        for K in (5, 16, 300, 2048):
            A = rng.uniform(-1, 1, (7, K)).astype(np.float32)
            B = rng.uniform(-1, 1, (10, K)).astype(np.float32)
            with simdbind.InnerProduct32f(7, 10, K, trans_b=True, const_b=False, library=bundled) as ip:
                many = ip.forward(A, B)
            for M in (1, 2, 4):
                with simdbind.InnerProduct32f(M, 10, K, trans_b=True, const_b=False, library=bundled) as ip:
                    np.testing.assert_array_equal(ip.forward(A[:M], B), many[:M], err_msg=f"K={K} M={M}")


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((0, 4, 3), {"weight": np.zeros((3, 4), np.float32)}, ArgumentError, "M: must be >= 1"),
    ((2, 4.0, 3), {"weight": np.zeros((3, 4), np.float32)}, ArgumentError, "N: must be an integer"),
    ((2, 4, True), {"weight": np.zeros((3, 4), np.float32)}, ArgumentError, "K: must be an integer"),
    ((2, 4, 3), {"trans_b": 1, "weight": np.zeros((4, 3), np.float32)}, ArgumentError, "trans_b: must be a bool"),
    ((2, 4, 3), {"const_b": None}, ArgumentError, "const_b: must be a bool"),
    ((2, 4, 3), {}, ArgumentError, "weight: required when const_b=True"),
    ((2, 4, 3), {"const_b": False, "weight": np.zeros((3, 4), np.float32)}, ArgumentError, "weight: only with"),
    ((2, 4, 3), {"weight": np.zeros((4, 3), np.float32)}, ArgumentError, r"weight: must have shape \(3, 4\)"),
    ((2, 4, 3), {"trans_b": True, "weight": np.zeros((3, 4), np.float32)}, ArgumentError,
     r"weight: must have shape \(4, 3\)"),
    ((2, 4, 3), {"weight": np.zeros((3, 4))}, DTypeError, "weight: must have dtype float32"),
    ((2, 4, 3), {"weight": np.zeros((3, 4), np.float32), "bias": np.zeros(3, np.float32)}, ArgumentError,
     r"bias: must have shape \(4,\)"),
    ((2, 4, 3), {"weight": np.zeros((3, 4), np.float32), "bias": np.zeros(4, np.int32)}, DTypeError, "bias"),
    ((2, 4, 3), {"weight": np.zeros((3, 4), np.float32), "activation": "tanh"}, ArgumentError, "activation:"),
    ((2, 4, 3), {"weight": np.zeros((3, 4), np.float32), "activation": "prelu", "params": [1, 2]}, ArgumentError,
     r"one slope per output channel \(4\)"),
    ((2, 4, 3), {"weight": np.zeros((3, 4), np.float32), "activation": "leaky_relu"}, ArgumentError,
     "needs slope"),
    ((2, 4, 3), {"weight": np.zeros((3, 4), np.float32), "activation": act.elu(), "params": [1]}, ArgumentError,
     "must be None"),
])
def test_init_rules(library, args, kwargs, error, message):
    with pytest.raises(error, match=message):
        simdbind.InnerProduct32f(*args, library=library, **kwargs)


def test_forward_rules(library):
    const = simdbind.InnerProduct32f(2, 4, 3, trans_b=True, weight=W, library=library)
    varying = simdbind.InnerProduct32f(2, 4, 3, const_b=False, library=library)
    B = np.zeros((3, 4), np.float32)
    cases = [
        (const, (A2[:1],), {}, ArgumentError, r"A: must have shape \(2, 3\)"),
        (const, (A2.astype(np.float64),), {}, DTypeError, "A: must have dtype float32"),
        (const, (A2, W), {}, ArgumentError, "B: must be None"),
        (varying, (A2,), {}, ArgumentError, "B: required when const_b=False"),
        (varying, (A2, W), {}, ArgumentError, r"B: must have shape \(3, 4\)"),
        (varying, (A2, B.astype(np.float16)), {}, DTypeError, "B: must have dtype float32"),
        (const, (A2,), {"out": np.zeros((2, 4), np.float64)}, DTypeError, "out: must have dtype float32"),
        (const, (A2,), {"out": np.zeros((4, 2), np.float32)}, ArgumentError, r"out: must have shape \(2, 4\)"),
        (const, (A2,), {"out": np.zeros((4, 2), np.float32).T}, ArgumentError, "out: must be C-contiguous"),
    ]
    readonly = np.zeros((2, 4), np.float32)
    readonly.flags.writeable = False
    cases.append((const, (A2,), {"out": readonly}, ArgumentError, "out: must be writeable"))
    shared = np.zeros(8, np.float32)
    cases.append((varying, (shared[:6].reshape(2, 3), B), {"out": shared.reshape(2, 4)}, ArgumentError,
                  "out: must not overlap"))
    for ip, args, kwargs, error, message in cases:
        untouched = kwargs.get("out")
        before = None if untouched is None else untouched.copy()
        with pytest.raises(error, match=message):
            ip.forward(*args, **kwargs)
        if before is not None:
            np.testing.assert_array_equal(untouched, before)  # never partly written on error


# -- inner_product (SimdSynetInnerProductLayerForward) -------------------------------------------------------------
def test_inner_product_values(library):
    x = f32([1, 2, 3])
    np.testing.assert_array_equal(simdbind.inner_product(x, W, library=library), W @ x)
    bias = f32([1, 2, 3, 4])
    np.testing.assert_array_equal(simdbind.inner_product(x, W, bias, library=library), W @ x + bias)
    batch = np.stack([x, -x, 2 * x])
    out = np.full((3, 4), np.nan, np.float32)
    assert simdbind.inner_product(batch, W, bias, out=out, library=library) is out
    np.testing.assert_array_equal(out, batch @ W.T + bias)


@pytest.mark.parametrize("x, weight, bias, error, message", [
    (f32([1, 2]), W, None, ArgumentError, r"x: must have shape \(3,\)"),
    (f32([[[1, 2, 3]]]), W, None, ArgumentError, "x: must have shape"),
    (f32([1, 2, 3]), W[0], None, ArgumentError, "weight: must be a non-empty"),
    (f32([1, 2, 3]), np.zeros((0, 3), np.float32), None, ArgumentError, "weight: must be a non-empty"),
    (f32([1, 2, 3]), W, f32([1, 2]), ArgumentError, r"bias: must have shape \(4,\)"),
    (np.array([1, 2, 3]), W, None, DTypeError, "x: must have dtype float32"),
    (f32([1, 2, 3]), W.astype(np.float64), None, DTypeError, "weight: must have dtype float32"),
])
def test_inner_product_rules(library, x, weight, bias, error, message):
    with pytest.raises(error, match=message):
        simdbind.inner_product(x, weight, bias, library=library)


def test_inner_product_out_rules(library):
    with pytest.raises(ArgumentError, match=r"out: must have shape \(4,\)"):
        simdbind.inner_product(f32([1, 2, 3]), W, out=np.zeros(3, np.float32), library=library)
    x = np.zeros(7, np.float32)
    with pytest.raises(ArgumentError, match="out: must not overlap"):
        simdbind.inner_product(x[:3], W, out=x[2:6], library=library)


# -- inner_product_8i ----------------------------------------------------------------------------------------------
def test_8i_precise_and_saturating(library):
    src = np.array([[255, 255, 255], [1, 2, 3]], np.uint8)
    weight = np.array([[127, 127, 127], [-128, -128, 5]], np.int8)
    precise = simdbind.inner_product_8i(src, weight, "precise", library=library)
    np.testing.assert_array_equal(precise, src.astype(np.int64) @ weight.T.astype(np.int64))
    # pairs (0, 1) saturate to 32767 / -32768; the odd last product is added unclamped
    expected = np.array([[32767 + 255 * 127, -32768 + 255 * 5], [1 * 127 + 2 * 127 + 3 * 127, -128 * 3 + 15]])
    for compat in ("overflow", "narrowed"):
        np.testing.assert_array_equal(simdbind.inner_product_8i(src, weight, compat, library=library), expected)


def test_8i_vector_and_out(library):
    src = np.arange(10, dtype=np.uint8)
    weight = np.ones((3, 10), np.int8)
    out = np.full(3, -1, np.int32)
    assert simdbind.inner_product_8i(src, weight, out=out, library=library) is out
    np.testing.assert_array_equal(out, [45, 45, 45])


def test_8i_precise_emulation_on_a_saturating_library(bundled):
    # A library that always saturates (upstream's default build): precise results come from two exact calls.
    saturating = simdbind.load("bundled")
    saturating.capabilities["int8_precise"] = False
    rng = np.random.default_rng(4)
    src = rng.integers(200, 256, (3, 41), dtype=np.uint8)
    weight = np.where(rng.random((5, 41)) < 0.5, -128, 127).astype(np.int8)
    exact = src.astype(np.int64) @ weight.T.astype(np.int64)
    np.testing.assert_array_equal(simdbind.inner_product_8i(src, weight, library=saturating), exact)


@pytest.mark.parametrize("src, weight, kwargs, error, message", [
    (np.zeros(3, np.int8), np.zeros((2, 3), np.int8), {}, DTypeError, "src_u8: must have dtype uint8"),
    (np.zeros(3, np.uint8), np.zeros((2, 3), np.uint8), {}, DTypeError, "weight_i8: must have dtype int8"),
    (np.zeros(4, np.uint8), np.zeros((2, 3), np.int8), {}, ArgumentError, r"src_u8: must have shape \(3,\)"),
    (np.zeros(3, np.uint8), np.zeros(3, np.int8), {}, ArgumentError, "weight_i8: must be a non-empty"),
    (np.zeros(3, np.uint8), np.zeros((2, 3), np.int8), {"compatibility": 0}, ArgumentError, "compatibility:"),
    (np.zeros(3, np.uint8), np.zeros((2, 3), np.int8), {"compatibility": "fast"}, ArgumentError, "compatibility:"),
    (np.zeros(3, np.uint8), np.zeros((2, 3), np.int8), {"out": np.zeros(2, np.int64)}, DTypeError, "out:"),
    (np.zeros(3, np.uint8), np.zeros((2, 3), np.int8), {"out": np.zeros(3, np.int32)}, ArgumentError, "out:"),
    (np.zeros(3, np.uint8), np.zeros((2, 3), np.int8), {"emulate_precise": 1}, ArgumentError, "emulate_precise"),
])
def test_8i_rules(library, src, weight, kwargs, error, message):
    with pytest.raises(error, match=message):
        simdbind.inner_product_8i(src, weight, library=library, **kwargs)


# -- fuzzing: random shapes, layouts and activations against the reference ---------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from simdbind.conformance.families.inner_product.cases import ACTIVATION_PARAMS, _float_tolerance  # noqa: E402
from simdbind.conformance.families.inner_product import reference  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(M=st.integers(1, 20), N=st.integers(1, 40), K=st.integers(1, 70), trans_b=st.booleans(),
       const_b=st.booleans(), with_bias=st.booleans(), activation=st.sampled_from(sorted(ACTIVATION_PARAMS)),
       seed=st.integers(0, 2 ** 32 - 1))
def test_fuzz_context_matches_reference(bundled, M, N, K, trans_b, const_b, with_bias, activation, seed):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (N, K) if trans_b else (K, N)).astype(np.float32)
    bias = rng.uniform(-1, 1, N).astype(np.float32) if with_bias else None
    params = rng.uniform(-1, 1, N).astype(np.float32) if activation == "prelu" else \
        next(iter(ACTIVATION_PARAMS[activation].values()))
    expected = reference.inner_product_32f(A, B, trans_b, bias, activation, params)
    tolerance = _float_tolerance(K, activation, [1.0] if activation == "prelu" else params)
    with simdbind.InnerProduct32f(M, N, K, trans_b=trans_b, const_b=const_b, bias=bias, activation=activation,
                                  params=params, weight=B if const_b else None, library=bundled) as ip:
        got = ip.forward(A, None if const_b else B)
    np.testing.assert_allclose(got, expected, rtol=tolerance.rel, atol=tolerance.abs)


@settings(max_examples=60, deadline=None)
@given(M=st.integers(1, 5), N=st.integers(1, 9), K=st.integers(1, 140),
       compatibility=st.sampled_from(["precise", "overflow", "narrowed"]), seed=st.integers(0, 2 ** 32 - 1))
def test_fuzz_8i_matches_reference(bundled, M, N, K, compatibility, seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, (M, K), dtype=np.uint8)
    weight = rng.integers(-128, 128, (N, K), dtype=np.int8)
    expected = reference.inner_product_8i(src, weight, compatibility == "precise")
    np.testing.assert_array_equal(simdbind.inner_product_8i(src, weight, compatibility, library=bundled), expected)


# -- the bundled C functions directly: contract points the wrappers would hide -------------------------------------
def _raw_ip32f(library, M, N, K, trans_b, const_b, A, B, bias, activation=0, params=None, set_weight=True):
    ffi, lib = library.ffi, library.lib
    ctx = lib.SimdSynetInnerProduct32fInit(M, N, K, trans_b, const_b, bias is not None, activation)
    keep = [A, B, bias, params]
    weight = ffi.from_buffer("float[]", B) if set_weight else ffi.NULL
    lib.SimdSynetInnerProduct32fSetParams(ctx, weight, ffi.NULL,
                                          ffi.NULL if bias is None else ffi.from_buffer("float[]", bias),
                                          ffi.NULL if params is None else ffi.from_buffer("float[]", params))
    C = np.full((M, N), np.nan, np.float32)  # C is written, never read: NaN here must not leak into results
    lib.SimdSynetInnerProduct32fForward(ctx, ffi.from_buffer("float[]", A), ffi.from_buffer("float[]", B),
                                        ffi.NULL, ffi.from_buffer("float[]", C))
    lib.SimdRelease(ctx)
    del keep
    return C


@pytest.mark.parametrize("M", [1, 3, 6, 7, 40])
def test_c_never_reads_c_and_honours_forward_b(bundled, M):
    rng = np.random.default_rng(M)
    N, K = 37, 300  # K > one K block, N with a tail
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            for trans_b in (0, 1):
                for const_b in (0, 1):
                    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
                    B = rng.uniform(-1, 1, (N, K) if trans_b else (K, N)).astype(np.float32)
                    bias = rng.uniform(-1, 1, N).astype(np.float32)
                    # !const_b: SetParams gets NULL (upstream's own test does that); the ip32f-transb-m1-identity-uses-setparams-weight route
                    # (trans_b, M == 1, identity) must still use Forward's B.
                    C = _raw_ip32f(bundled, M, N, K, trans_b, const_b, A, B, bias, set_weight=bool(const_b))
                    expected = A.astype(np.float64) @ (B.T if trans_b else B).astype(np.float64) + bias
                    np.testing.assert_allclose(C, expected, atol=1e-4, err_msg=f"{isa} tb{trans_b} cb{const_b}")


def test_c_bias_flag_is_informational_like_upstream(bundled):
    # Upstream ignores Init's bias flag: the bias pointer given to SetParams decides.
    A, B, bias = np.ones((1, 2), np.float32), np.ones((2, 3), np.float32), np.full(3, 5, np.float32)
    ffi, lib = bundled.ffi, bundled.lib
    ctx = lib.SimdSynetInnerProduct32fInit(1, 3, 2, 0, 1, 0, 0)
    lib.SimdSynetInnerProduct32fSetParams(ctx, ffi.from_buffer("float[]", B), ffi.NULL,
                                          ffi.from_buffer("float[]", bias), ffi.NULL)
    C = np.zeros((1, 3), np.float32)
    lib.SimdSynetInnerProduct32fForward(ctx, ffi.from_buffer("float[]", A), ffi.NULL, ffi.NULL,
                                        ffi.from_buffer("float[]", C))
    lib.SimdRelease(ctx)
    np.testing.assert_array_equal(C, [[7, 7, 7]])


def test_c_rejects_out_of_range_activation(bundled):
    assert bundled.lib.SimdSynetInnerProduct32fInit(1, 1, 1, 0, 1, 0, 11) == bundled.ffi.NULL


def test_8i_int32_sum_wraps_like_c(bundled):
    K = 140_000  # 255 * 127 * K > 2**31
    src = np.full((1, K), 255, np.uint8)
    weight = np.full((1, K), 127, np.int8)
    wrapped = np.int64(255 * 127 * K)
    wrapped = (wrapped + 2 ** 31) % 2 ** 32 - 2 ** 31
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            assert simdbind.inner_product_8i(src, weight, library=bundled)[0, 0] == wrapped
            # saturating: each pair clamps to 32767, and the int32 sum wraps too
            saturated = (np.int64(32767 * (K // 2)) + 2 ** 31) % 2 ** 32 - 2 ** 31
            assert simdbind.inner_product_8i(src, weight, "overflow", library=bundled)[0, 0] == saturated


def test_behind_gemm_guard_keeps_b_and_puts_zeros_where_upstream_reads_before_it():
    from simdbind._routes import B_GUARD, behind_gemm_guard, upstream_reads_before_b

    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    routed = behind_gemm_guard(b)
    assert routed.shape == b.shape and np.array_equal(routed, b) and routed.flags.c_contiguous
    assert routed.base is not None and np.array_equal(routed.base[:B_GUARD], np.zeros(B_GUARD, np.float32))
    assert [K for K in range(1, 20) if upstream_reads_before_b(4, K, True)] == [1, 2, 3, 5, 6, 7]
    assert not upstream_reads_before_b(1, 3, True) and not upstream_reads_before_b(4, 3, False)


# -- inner_product_8i kernel paths at every ISA ---------------------------------------------------------------------
# Shapes that reach each block of the kernels (vectors of 16 / 32 / 64 bytes): K below one vector, with a tail, whole
# vectors, past the int16 accumulation groups of the M = 1 path (4 and 16 vectors) and past the 1024-long K blocks of
# the M >= 2 path (whose partial sums add up in dst); N in whole and partial groups (of 4, of 6, of 12 rows); M = 1,
# even and odd M (the rows left after blocks of 2 or 4), and M >= 12 (the AVX-512 panel path).
_8I_K = [1, 7, 16, 31, 33, 64, 100, 513, 1023, 1024, 1025, 2100]
_8I_MN = [(1, 1), (1, 3), (1, 4), (1, 9), (2, 6), (3, 5), (2, 12), (5, 13), (4, 18), (13, 25)]


def _wrapped_int32(values):
    return ((values + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


@pytest.mark.parametrize("K", _8I_K)
def test_8i_kernel_paths_every_isa(bundled, K):
    rng = np.random.default_rng(K)
    for M, N in _8I_MN:
        src = rng.integers(0, 256, (M, K), dtype=np.uint8)
        weight = rng.integers(-128, 128, (N, K), dtype=np.int8)
        exact = _wrapped_int32(src.astype(np.int64) @ weight.T.astype(np.int64))
        saturated = reference.inner_product_8i(src, weight, False)
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                np.testing.assert_array_equal(simdbind.inner_product_8i(src, weight, "precise", library=bundled),
                                              exact, err_msg=f"{isa} precise M={M} N={N} K={K}")
                np.testing.assert_array_equal(simdbind.inner_product_8i(src, weight, "overflow", library=bundled),
                                              saturated, err_msg=f"{isa} overflow M={M} N={N} K={K}")


@pytest.mark.parametrize("w", [-128, 127])
@pytest.mark.parametrize("M", [1, 2, 3])
def test_8i_precise_extremes_fill_every_partial_sum(bundled, M, w):
    # 255 * w everywhere: the largest partial sums each kernel keeps in int16 or int32 before adding them up (the
    # M = 1 path's int16 groups of the 5-bit and 3-bit parts of src are exactly full), over several groups and blocks.
    K = 2 * 1024 + 48
    src = np.full((M, K), 255, np.uint8)
    weight = np.full((7, K), w, np.int8)
    weight[1, ::3] = -w - 1  # mixed signs in one row
    exact = _wrapped_int32(src.astype(np.int64) @ weight.T.astype(np.int64))
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            np.testing.assert_array_equal(simdbind.inner_product_8i(src, weight, "precise", library=bundled), exact,
                                          err_msg=isa)


# -- the GEMM behind a transposed B: packing by SB_W x SB_W transposes (4, 8, 16 floats by ISA) with scalar tails
# along N and K, K blocks, the one-row kernel on packed weights; every activation with a bias, at every ISA ---------
@pytest.mark.parametrize("M, N, K", [
    (5, 16, 16),     # one whole transposed block (one ISA's), no tail; M > 4 takes the panel path, not dot products
    (13, 37, 45),    # tails along N (a 4-row group and a single row) and K, at every ISA's width
    (40, 67, 300),   # more than one K block (C accumulated across them), three panels, a row block with a tail
    (7, 33, 1030),   # K in four blocks and a tail of 6
    (1, 45, 301),    # one row: dot products (B given to forward) or the prefetching one-row kernel (constant B)
])
@pytest.mark.parametrize("activation", sorted(ACTIVATION_PARAMS))
def test_transposed_b_every_path_every_isa(bundled, M, N, K, activation):
    rng = np.random.default_rng(M * 1000 + N)
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (N, K)).astype(np.float32)
    bias = rng.uniform(-1, 1, N).astype(np.float32)
    params = rng.uniform(-1, 1, N).astype(np.float32) if activation == "prelu" else \
        next(iter(ACTIVATION_PARAMS[activation].values()))
    expected = reference.inner_product_32f(A, B, True, bias, activation, params)
    tolerance = _float_tolerance(K, activation, [1.0] if activation == "prelu" else params)
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            for const_b in (False, True):
                with simdbind.InnerProduct32f(M, N, K, trans_b=True, const_b=const_b, bias=bias,
                                              activation=activation, params=params,
                                              weight=B if const_b else None, library=bundled) as ip:
                    got = ip.forward(A, None if const_b else B)
                np.testing.assert_allclose(got, expected, rtol=tolerance.rel, atol=tolerance.abs,
                                           err_msg=f"{isa} const_b={const_b}")
