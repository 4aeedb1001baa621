"""Per-call overhead of the Pythonic layer on tiny inputs.

eltwise and unary on 16 floats: the simdbind call (the row with the budget), ``raw cffi`` (the C function called
with cdata built once: the floor), ``raw cffi from arrays`` (``ffi.from_buffer`` per array on each call), NumPy's
ufunc and PyTorch. The budget: simdbind <= 1.5 x raw cffi + 1 us.

Pooling, softmax, gather, the inner products and the convolution (:func:`tiny_cases`): the simdbind call beside its
raw cffi call and PyTorch's equivalent; the target is at or below PyTorch's time per call.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import simdbind
from simdbind.bench._peers import torch_module
from simdbind.errors import FunctionNotAvailableError

SIZE = 16
BUDGET = {"baseline": "raw cffi", "factor": 1.5, "plus_us": 1.0}


def _require(library: Any, name: str) -> Any:
    if not library.has(name):
        raise FunctionNotAvailableError(f"{name} is not provided by the {library.kind} library {library.path}")
    return library.function(name)


def _eltwise_raw(x: np.ndarray, y: np.ndarray, ones: np.ndarray, o: np.ndarray, op: int = 1, count: int = 2,
                 weighted: bool = True) -> Callable[[Any], Callable[[], Any]]:
    """The C call with prebuilt cdata: `count` sources (x, y, x, ...), `op`, weights `ones` or NULL."""
    def factory(library: Any) -> Callable[[], Any]:
        fn = _require(library, "SimdSynetEltwiseLayerForward")
        ffi = library.ffi
        t = ffi.typeof("float[]")
        keep = [ffi.from_buffer(t, x), ffi.from_buffer(t, y), ffi.from_buffer(t, ones), ffi.from_buffer(t, o, True)]
        srcs = ffi.new("float *[]", [keep[i % 2] for i in range(count)])  # does not own keep[:2]: the closure does
        weight, dst = (keep[2] if weighted else ffi.NULL), keep[3]

        def call() -> None:
            fn(srcs, weight, count, SIZE, op, dst)

        call.keep = keep  # type: ignore[attr-defined]
        return call

    return factory


def _eltwise_raw_from_arrays(x: np.ndarray, y: np.ndarray, ones: np.ndarray, o: np.ndarray
                             ) -> Callable[[Any], Callable[[], Any]]:
    def factory(library: Any) -> Callable[[], Any]:
        fn = _require(library, "SimdSynetEltwiseLayerForward")
        ffi = library.ffi
        t = ffi.typeof("float[]")
        fb = ffi.from_buffer
        weight = fb(t, ones)

        def call() -> None:
            fn([fb(t, x), fb(t, y)], weight, 2, x.size, 1, fb(t, o, True))

        call.keep = weight  # type: ignore[attr-defined]
        return call

    return factory


def _unary_raw(x: np.ndarray, o: np.ndarray, op: str = "abs") -> Callable[[Any], Callable[[], Any]]:
    def factory(library: Any) -> Callable[[], Any]:
        fn = _require(library, "SimdSynetUnaryOperation32f")
        ffi = library.ffi
        t = ffi.typeof("float[]")
        keep = [ffi.from_buffer(t, x), ffi.from_buffer(t, o, True)]
        src, dst = keep
        code = int(simdbind.UnaryOperation[op.upper()])

        def call() -> None:
            fn(src, SIZE, code, dst)

        call.keep = keep  # type: ignore[attr-defined]
        return call

    return factory


def cases(quick: bool = False) -> list[dict[str, Any]]:
    rng = np.random.default_rng(8)
    x, y = (rng.standard_normal(SIZE).astype(np.float32) for _ in range(2))
    o = np.empty(SIZE, np.float32)
    ones = np.ones(2, np.float32)
    torch = torch_module()
    eltwise_peers: dict[str, Callable[[], Any]] = {"numpy": lambda: np.add(x, y, out=o)}
    new_peers: dict[str, Callable[[], Any]] = {"numpy": lambda: np.add(x, y)}
    if torch is not None:
        tx, ty, to = (torch.from_numpy(a) for a in (x, y, o))
        eltwise_peers["torch"] = lambda: torch.add(tx, ty, out=to)
        new_peers["torch"] = lambda: torch.add(tx, ty)
    variants = {"raw cffi": _eltwise_raw(x, y, ones, o), "raw cffi from arrays": _eltwise_raw_from_arrays(x, y, ones, o)}
    result = [
        {"name": "overhead eltwise sum 16 out=", "family": "overhead", "unit": "Gelem/s", "work": SIZE,
         "simdbind": lambda library: (lambda: simdbind.eltwise([x, y], "sum", out=o, library=library)),
         "variants": variants, "peers": eltwise_peers, "budget": BUDGET,
         "note": "simdbind.eltwise([x, y], 'sum', out=o) on 16 floats; peers: np.add(x, y, out=o), torch.add"},
        {"name": "overhead eltwise sum 16 new", "family": "overhead", "unit": "Gelem/s", "work": SIZE,
         "simdbind": lambda library: (lambda: simdbind.eltwise([x, y], "sum", library=library)),
         "variants": variants, "peers": new_peers, "budget": BUDGET,
         "note": "the same, allocating the result (np.add(x, y))"},
    ]
    weights = [0.5, 2.0]
    weighted_peers: dict[str, Callable[[], Any]] = {"numpy": lambda: np.add(x, np.multiply(y, 2.0, out=o), out=o)}
    three_peers: dict[str, Callable[[], Any]] = {"numpy": lambda: np.maximum(np.maximum(x, y, out=o), x, out=o)}
    result += [
        {"name": "overhead eltwise sum 16 weights out=", "family": "overhead", "unit": "Gelem/s", "work": SIZE,
         "simdbind": lambda library: (lambda: simdbind.eltwise([x, y], "sum", weights, out=o, library=library)),
         "variants": {"raw cffi": _eltwise_raw(x, y, ones, o)}, "peers": weighted_peers, "budget": BUDGET,
         "note": "simdbind.eltwise([x, y], 'sum', [0.5, 2.0], out=o): weights as a list; numpy: 2 ufunc calls"},
        {"name": "overhead eltwise max 16 x3 out=", "family": "overhead", "unit": "Gelem/s", "work": SIZE,
         "simdbind": lambda library: (lambda: simdbind.eltwise([x, y, x], "max", out=o, library=library)),
         "variants": {"raw cffi": _eltwise_raw(x, y, ones, o, op=2, count=3, weighted=False)},
         "peers": three_peers, "budget": BUDGET,
         "note": "three inputs: simdbind.eltwise([x, y, x], 'max', out=o); numpy: 2 ufunc calls"},
    ]
    if hasattr(simdbind, "unary"):  # lands with the elementwise family
        unary = getattr(simdbind, "unary")
        z = np.abs(x) + np.float32(0.5)  # positive, for the ops with a domain

        def unary_case(op: str, numpy_fn: Callable[..., Any], new: bool = False) -> dict[str, Any]:
            peers: dict[str, Callable[[], Any]] = {"numpy": (lambda: numpy_fn(z)) if new
                                                   else (lambda: numpy_fn(z, out=o))}
            if torch is not None and hasattr(torch, op):
                tz, to, tfn = torch.from_numpy(z), torch.from_numpy(o), getattr(torch, op)
                peers["torch"] = (lambda: tfn(tz)) if new else (lambda: tfn(tz, out=to))

            def simdbind_call(library: Any) -> Callable[[], Any]:
                _require(library, "SimdSynetUnaryOperation32f")
                call = ((lambda: unary(z, op, library=library)) if new  # noqa: E731
                        else (lambda: unary(z, op, out=o, library=library)))
                call()  # a signature mismatch shows here, as this case's error
                return call

            return {"name": f"overhead unary {op} 16 {'new' if new else 'out='}", "family": "overhead",
                    "unit": "Gelem/s", "work": SIZE, "simdbind": simdbind_call,
                    "variants": {"raw cffi": _unary_raw(z, o, op)}, "peers": peers, "budget": BUDGET,
                    "note": f"simdbind.unary(x, {op!r}{'' if new else ', out=o'}) on 16 floats"}

        result += [unary_case("abs", np.abs), unary_case("abs", np.abs, new=True), unary_case("exp", np.exp)]
    return result + tiny_cases()


def _tiny_case(name: str, call: Callable[[Any], Callable[[], Any]], peers: dict[str, Callable[[], Any]],
               note: str, raw: Callable[[Any], Callable[[], Any]] | None = None) -> dict[str, Any]:
    """A tiny-input call of a wrapper: its cost is almost all argument checking. `raw` (the C call with cdata
    built once) is the floor; the budget is PyTorch's equivalent call where there is one."""
    def simdbind_call(library: Any) -> Callable[[], Any]:
        fn = call(library)
        fn()  # a signature mismatch shows here, as this case's error
        return fn

    return {"name": f"overhead {name}", "family": "overhead", "unit": "Gelem/s", "work": SIZE,
            "simdbind": simdbind_call, "variants": {} if raw is None else {"raw cffi": raw}, "peers": peers,
            "note": note}


def _raw(name: str, *arrays: tuple[str, np.ndarray], args: Callable[[list[Any]], tuple[Any, ...]],
         context: Callable[[Any], Any] | None = None) -> Callable[[Any], Callable[[], Any]]:
    """The raw cffi call of C function `name`: `arrays` as (ctype, array) made into cdata once (an array whose
    ctype ends in '!' is written), `args(cdata)` the call's arguments (None: NULL); `context(library)` makes a C
    context first (it is then args' cdata[0])."""
    def factory(library: Any) -> Callable[[], Any]:
        fn = _require(library, name)
        ffi = library.ffi
        keep: list[Any] = [] if context is None else [context(library)]
        for ctype, array in arrays:
            writable = ctype.endswith("!")
            keep.append(ffi.from_buffer(ctype.rstrip("!"), array, writable))
        values = tuple(ffi.NULL if v is None else v for v in args(keep))

        def call() -> None:
            fn(*values)

        call.keep = keep  # type: ignore[attr-defined]
        return call

    return factory


def tiny_cases() -> list[dict[str, Any]]:
    """Pooling (float32 average and max, bf16 and uint8 max), softmax, gather, the inner products (the layer, the
    FP32 context, int8) and the convolution (context forward and one-shot conv2d) on inputs of about 16 elements,
    each beside the raw cffi call (the floor) and the equivalent PyTorch call when torch is installed (the
    budget: at or below it)."""
    rng = np.random.default_rng(18)
    torch = torch_module()
    img = rng.standard_normal((1, 4, 4, 4)).astype(np.float32)  # N, C, H, W
    pooled = np.empty((1, 4, 2, 2), np.float32)
    img_u8 = rng.integers(0, 256, img.shape).astype(np.uint8)
    pooled_u8 = np.empty(pooled.shape, np.uint8)
    img_bf16 = (img.view(np.uint32) >> 16).astype(np.uint16)  # bf16 bit patterns (truncated float32)
    pooled_bf16 = np.empty(pooled.shape, np.uint16)
    vec = rng.standard_normal((1, SIZE)).astype(np.float32)
    vec_out = np.empty_like(vec)
    data = rng.standard_normal((4, 4)).astype(np.float32)
    index = rng.integers(0, 4, (4, 4)).astype(np.int64)
    gathered = np.empty((4, 4), np.float32)
    a = rng.standard_normal((1, SIZE)).astype(np.float32)
    w = rng.standard_normal((4, SIZE)).astype(np.float32)
    ip_out = np.empty((1, 4), np.float32)
    su8 = rng.integers(0, 256, (1, SIZE)).astype(np.uint8)
    wi8 = rng.integers(-128, 128, (4, SIZE)).astype(np.int8)
    i8_out = np.empty((1, 4), np.int32)
    cw = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
    conv_out = np.empty((1, 4, 4, 4), np.float32)
    kinds = ("max", "avg", "max_bf16", "max_u8", "softmax", "gather", "ip", "ip_ctx", "ip8i", "conv")
    peers: dict[str, dict[str, Callable[[], Any]]] = {k: {} for k in kinds}
    if torch is not None:
        functional = torch.nn.functional
        t_img, t_vec, t_data, t_idx = (torch.from_numpy(v) for v in (img, vec, data, index))
        t_a, t_w, t_cw = torch.from_numpy(a), torch.from_numpy(w), torch.from_numpy(cw)
        t_bf16 = t_img.to(torch.bfloat16)
        t_u8 = torch.from_numpy(img_u8)
        t_su8, t_wi8 = torch.from_numpy(su8.astype(np.int32)), torch.from_numpy(wi8.astype(np.int32))
        peers["max"]["torch"] = lambda: functional.max_pool2d(t_img, 2, 2)
        peers["avg"]["torch"] = lambda: functional.avg_pool2d(t_img, 2, 2)
        peers["max_bf16"]["torch"] = lambda: functional.max_pool2d(t_bf16, 2, 2)
        peers["max_u8"]["torch"] = lambda: functional.max_pool2d(t_u8, 2, 2)
        peers["softmax"]["torch"] = lambda: torch.softmax(t_vec, dim=1)
        peers["gather"]["torch"] = lambda: torch.gather(t_data, 1, t_idx)
        peers["ip"]["torch"] = lambda: functional.linear(t_a, t_w)
        peers["ip_ctx"]["torch"] = lambda: functional.linear(t_a, t_w)
        peers["ip8i"]["torch"] = lambda: torch.matmul(t_su8, t_wi8.T)  # no u8 x s8 product: int32 matmul
        peers["conv"]["torch"] = lambda: functional.conv2d(t_img, t_cw)
    contexts: list[Any] = []  # kept open for the whole run

    def conv_forward(library: Any) -> Callable[[], Any]:
        conv = simdbind.Convolution32f(img.shape, 4, 1, weight=cw, library=library)
        contexts.append(conv)
        return lambda: conv.forward(img, out=conv_out)

    def ip_forward(library: Any) -> Callable[[], Any]:
        ip = simdbind.InnerProduct32f(1, 4, SIZE, trans_b=True, weight=w, library=library)
        contexts.append(ip)
        return lambda: ip.forward(a, out=ip_out)

    def conv_context(library: Any) -> Any:
        conv = simdbind.Convolution32f(img.shape, 4, 1, weight=cw, library=library)
        contexts.append(conv)
        scratch = np.zeros(max(conv.external_buffer_size, 1), np.float32)
        contexts.append(scratch)
        return conv._live(), library.ffi.from_buffer("float[]", scratch)

    def gather_context(library: Any) -> Any:
        gather = simdbind.GatherElements(np.float32, np.int64, data.shape, index.shape, 1, library=library)
        contexts.append(gather)
        return gather._live()

    def ip_context(library: Any) -> Any:
        ip = simdbind.InnerProduct32f(1, 4, SIZE, trans_b=True, weight=w, library=library)
        contexts.append(ip)
        return ip._live()

    def pooling(kind: str, dtype: str) -> Callable[[list[Any]], tuple[Any, ...]]:
        if kind == "max32f":
            return lambda p: (p[0], 4, 4, 4, 1, 2, 2, 1, 2, 2, 0, 0, 0, p[1], 4, 2, 2, 0)
        if kind == "avg":
            return lambda p: (p[0], 4, 4, 4, 2, 2, 2, 2, 0, 0, p[1], 2, 2, 0, 0)
        return lambda p: (p[0], 4, 4, 4, 2, 2, 2, 2, 0, 0, p[1], 2, 2, 0)

    return [
        _tiny_case("pooling_max 4x4x4 2x2/s2", lambda lib: (lambda: simdbind.pooling_max(
            img, 2, stride=2, out=pooled, library=lib)), peers["max"], "pooling_max(x, 2, stride=2, out=o)",
            _raw("SimdSynetPoolingMax32f", ("float[]", img), ("float[]!", pooled), args=pooling("max32f", "f"))),
        _tiny_case("pooling_average 4x4x4 2x2/s2", lambda lib: (lambda: simdbind.pooling_average(
            img, 2, stride=2, exclude_pad=False, out=pooled, library=lib)), peers["avg"],
            "pooling_average(x, 2, stride=2, exclude_pad=False, out=o)",
            _raw("SimdSynetPoolingAverage", ("float[]", img), ("float[]!", pooled), args=pooling("avg", "f"))),
        _tiny_case("pooling_max bf16 4x4x4 2x2/s2", lambda lib: (lambda: simdbind.pooling_max(
            img_bf16, 2, stride=2, out=pooled_bf16, library=lib)), peers["max_bf16"],
            "pooling_max(x_bf16_bits, 2, stride=2, out=o); torch: bfloat16 tensor",
            _raw("SimdSynetPoolingMax16b", ("uint16_t[]", img_bf16), ("uint16_t[]!", pooled_bf16),
                 args=pooling("max16b", "u16"))),
        _tiny_case("pooling_max u8 4x4x4 2x2/s2", lambda lib: (lambda: simdbind.pooling_max(
            img_u8, 2, stride=2, out=pooled_u8, library=lib)), peers["max_u8"],
            "pooling_max(x_u8, 2, stride=2, out=o)",
            _raw("SimdSynetPoolingMax8u", ("uint8_t[]", img_u8), ("uint8_t[]!", pooled_u8),
                 args=pooling("max8u", "u8"))),
        _tiny_case("softmax 1x16", lambda lib: (lambda: simdbind.softmax(vec, axis=1, out=vec_out, library=lib)),
                   peers["softmax"], "softmax(x, axis=1, out=o)",
                   _raw("SimdSynetSoftmax32f", ("float[]", vec), ("float[]!", vec_out),
                        args=lambda p: (p[0], 1, SIZE, 1, p[1]))),
        _tiny_case("gather_elements 4x4", lambda lib: (lambda: simdbind.gather_elements(
            data, index, 1, out=gathered, library=lib)), peers["gather"], "gather_elements(d, i, 1, out=o)",
            _raw("SimdSynetGatherElementsForward", ("uint8_t[]", data), ("uint8_t[]", index),
                 ("uint8_t[]!", gathered), args=lambda p: tuple(p), context=gather_context)),
        _tiny_case("inner_product 1x16 -> 4", lambda lib: (lambda: simdbind.inner_product(
            a, w, out=ip_out, library=lib)), peers["ip"], "inner_product(x, w, out=o)",
            _raw("SimdSynetInnerProductLayerForward", ("float[]", a), ("float[]", w), ("float[]!", ip_out),
                 args=lambda p: (p[0], p[1], None, 4, SIZE, p[2]))),
        _tiny_case("InnerProduct32f.forward 1x16 -> 4", ip_forward, peers["ip_ctx"], "ip.forward(a, out=o)",
                   _raw("SimdSynetInnerProduct32fForward", ("float[]", a), ("float[]!", ip_out),
                        args=lambda p: (p[0], p[1], None, None, p[2]), context=ip_context)),
        _tiny_case("inner_product_8i 1x16 -> 4", lambda lib: (lambda: simdbind.inner_product_8i(
            su8, wi8, "overflow", out=i8_out, library=lib)), peers["ip8i"],
            "inner_product_8i(s, w, 'overflow', out=o); torch: int32 matmul (it has no u8 x s8 product)",
            _raw("SimdSynetInnerProduct8i", ("uint8_t[]", su8), ("int8_t[]", wi8), ("int32_t[]!", i8_out),
                 args=lambda p: (1, 4, SIZE, p[0], p[1], p[2], 4))),
        _tiny_case("Convolution32f.forward 4x4x4 1x1", conv_forward, peers["conv"], "conv.forward(x, out=o)",
                   _raw("SimdSynetConvolution32fForward", ("float[]", img), ("float[]!", conv_out),
                        args=lambda p: (p[0][0], p[1], p[0][1], p[2]), context=conv_context)),
        _tiny_case("conv2d 4x4x4 1x1", lambda lib: (lambda: simdbind.conv2d(img, cw, out=conv_out, library=lib)),
                   peers["conv"], "conv2d(x, w, out=o): weights set (and packed) on every call, as torch's"),
    ]
