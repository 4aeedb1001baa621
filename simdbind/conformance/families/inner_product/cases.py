"""Cases of the inner-product family: InnerProduct32f (context), InnerProductLayerForward, InnerProduct8i.

Float tolerance (scaled with K, documented in docs/guide/tolerance.md): with inputs bounded by ``amax`` and ``bmax``
and a bias bounded by 1,

    abs = L * (2 * K * eps * amax * bmax + 2 * eps) + 8 * eps * P * (1 + sqrt(K) * amax * bmax)
    rel = 8 * eps                                                     (eps = 2**-24, float32's unit roundoff)

where ``L`` bounds the activation's slope (1 for identity, relu, restrict_range; max(1, |slope|) for leaky/prelu,
...; :func:`simdbind.conformance.activation.lipschitz`) and ``P = max(1, |params|)``. The first term bounds the
float32 rounding of a K-term sum accumulated in any blocked order (its RMS is about ``K * eps / 4`` for unit data,
so the bound has a wide margin and still shrinks with K); the second covers the activation's own float32
evaluation (polynomial exp/erf, a few ulp of values of magnitude up to ``sqrt(K)``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

import simdbind
from simdbind.conformance import values
from simdbind.conformance.model import F, Case, Function, register
from simdbind.conformance.families.inner_product import reference
from simdbind.conformance.activation import either_side_of_the_jump, lipschitz
from simdbind.conformance.tolerance import EXACT, Tolerance
from simdbind.conformance.work import Work

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy
    from simdbind.library import Library

EPS = 2.0 ** -24

#: Parameter sets per activation (C order); "prelu" slopes are drawn per case (one per column, U[-1, 1]).
ACTIVATION_PARAMS: dict[str, dict[str, list[float] | None]] = {
    "identity": {"-": None},
    "relu": {"-": None},
    "leaky_relu": {"neg": [-0.3], "small": [0.1], "steep": [2.0]},
    "restrict_range": {"upstream": [0.1, 1.1], "tight": [-0.05, 0.05], "wide": [-1.5, 0.7], "inverted": [0.7, -1.5],
                       "unbounded": [-math.inf, math.inf]},  # the one parameter that may be infinite
    "prelu": {"random": None},
    "elu": {"unit": [1.0], "half": [0.5]},
    "hswish": {"default": [3.0, 1.0 / 6.0], "other": [1.5, 0.5]},
    "mish": {"default": [20.0], "low": [0.5]},
    "hard_sigmoid": {"default": [1.0 / 6.0, 0.5], "steep": [0.5, 0.2]},
    "swish": {"unit": [1.0], "neg": [-0.7]},
    "gelu": {"-": None},
}

#: Upstream's shape table (src/Test/TestSynetInnerProduct.cpp): (M, N, K, transB, constB, bias, activation).
UPSTREAM_32F = [
    (128, 128, 128, False, True, True, "identity"), (128, 133, 144, False, True, True, "relu"),
    (128, 133, 144, False, False, True, "relu"), (1, 512, 8192, False, True, True, "identity"),
    (1, 512, 8192, False, True, True, "restrict_range"), (1, 512, 128, False, True, True, "identity"),
    (1, 512, 128, False, True, True, "restrict_range"), (1, 512, 128, True, True, True, "identity"),
    (1, 512, 128, True, True, True, "restrict_range"), (49, 32, 49, False, True, True, "identity"),
]


def _float_tolerance(K: int, activation: str, params: Any, amax: float = 1.0, bmax: float = 1.0) -> Tolerance:
    # An infinite bound (restrict_range) clamps nothing: it scales no rounding.
    big = max([1.0] + [abs(float(v)) for v in np.ravel(params if params is not None else []) if math.isfinite(v)])
    lip = lipschitz(activation, params)
    absolute = lip * (2 * K * EPS * amax * bmax + 2 * EPS) + 8 * EPS * big * (1 + math.sqrt(K) * amax * bmax)
    return Tolerance(abs=absolute, rel=8 * EPS,
                     why="float32 K-term sum in any blocked/fused order (2*K*eps*|a||b|, times the activation's "
                         "slope bound) plus a few ulp for the activation's exp/erf")


@register
class InnerProduct32f(Function):
    name = "inner_product_32f"
    family = "inner_product"
    symbols = ("SimdSynetInnerProduct32fInit", "SimdSynetInnerProduct32fSetParams", "SimdSynetInnerProduct32fForward",
               "SimdSynetInnerProduct32fInternalBufferSize", "SimdSynetInnerProduct32fExternalBufferSize",
               "SimdRelease")
    fields = (F("M", "int"), F("N", "int"), F("K", "int"), F("trans_b", "bool"), F("const_b", "bool"),
              F("bias", "bool"), F("activation", "name", "identity"), F("pset", "name", "-"), F("calls", "int", 1),
              F("guard", "name", ""), F("special", "name", ""), F("group", "name"))
    #: restrict_range's bounds are the one place params may be infinite (the "unbounded" pset); NaN never.
    outside_domain = {"params": {"nan": values.FINITE_PARAMETER}}

    def grid(self) -> Iterable[Case]:
        def make(M: int, N: int, K: int, tb: bool, cb: bool, bias: bool, act: str, pset: str = "-", calls: int = 1,
                 profiles: tuple[str, ...] = ("ci", "full"), guard: str = "", special: str = "") -> Case:
            if pset == "-" and act in ACTIVATION_PARAMS and "-" not in ACTIVATION_PARAMS[act]:
                pset = next(iter(ACTIVATION_PARAMS[act]))
            return self.case({"M": M, "N": N, "K": K, "trans_b": tb, "const_b": cb, "bias": bias, "activation": act,
                              "pset": pset, "calls": calls, "guard": guard, "special": special},
                             group="edge" if special else "main", profiles=profiles)

        out = []
        # Upstream's own table (TestSynetInnerProduct.cpp); its RestrictRange params are p0 = 0.1, p1 = 1.1.
        for i, (M, N, K, tb, cb, bias, act) in enumerate(UPSTREAM_32F):
            out.append(make(M, N, K, tb, cb, bias, act, "upstream" if act == "restrict_range" else "-",
                            profiles=("smoke", "ci", "full") if K <= 1000 else ("ci", "full")))
        # Shapes: M x N x K tails x transB x constB, identity, bias on every other case.
        n_values, k_values = (1, 3, 4, 8, 9, 16, 17, 31, 33, 48, 67), (1, 2, 5, 7, 16, 31, 67)
        index = 0
        for M in (1, 2, 7, 64, 257):
            for N in n_values:
                for K in k_values:
                    for tb in (False, True):
                        for cb in (False, True):
                            index += 1
                            ci = (N in (1, 9, 17, 67) and K in (1, 7, 67)) or (index % 7 == 0)
                            smoke = M in (1, 7) and N == 17 and K == 31
                            profiles = ("smoke", "ci", "full") if smoke else ("ci", "full") if ci else ("full",)
                            out.append(make(M, N, K, tb, cb, index % 2 == 0, "identity", profiles=profiles))
        # Large N and K: vector bodies, K blocking, GEMV paths, threads; (29, 200, 1024): A packed (K a multiple of
        # 512 floats) in short row panels (29 = 2*12 + 5), over several K blocks, N not a multiple of the panels.
        for M, N, K in ((1, 1000, 2048), (1, 67, 4096), (2, 1000, 67), (7, 67, 4096), (64, 1000, 67),
                        (257, 67, 1000), (64, 256, 512), (29, 200, 1024)):
            for tb in (False, True):
                for cb in (False, True):
                    out.append(make(M, N, K, tb, cb, True, "identity"))
        # Every activation with every parameter set, with and without bias, all transB x constB combinations.
        for act, sets in ACTIVATION_PARAMS.items():
            for pset in sets:
                for tb in (False, True):
                    for cb in (False, True):
                        for bias in (False, True):
                            for shape, (M, N, K) in enumerate(((1, 37, 29), (7, 67, 130), (64, 33, 17))):
                                smoke = M == 7 and tb == cb and bias
                                ci = shape == (int(tb) + 2 * int(cb) + int(bias)) % 3
                                profiles = ("smoke", "ci", "full") if smoke else ("ci", "full") if ci else ("full",)
                                out.append(make(M, N, K, tb, cb, bias, act, pset, profiles=profiles))
        # Non-constant B changing between calls (three Forward calls, three different B), including upstream's
        # transB && M == 1 && Identity route (catalogue: ip32f-transb-m1-identity-uses-setparams-weight), which must
        # use each call's B.
        for M in (1, 2, 64):
            for tb in (False, True):
                for act in ("identity", "relu", "prelu"):
                    out.append(make(M, 19, 23, tb, False, True, act, calls=3, profiles=("smoke", "ci", "full")))
        # NaN just before a non-constant transposed B, which upstream reads for small K (docs/upstream.md): through
        # the wrapper, which routes external calls around it, and in a direct C call that shows the defect.
        for K in (1, 2, 3, 5, 6, 7):
            for guard in ("nan-before-B", "nan-before-B-direct"):
                out.append(make(4, 67, K, True, False, False, "identity", guard=guard, profiles=("ci", "full")))
        # Edge: A, B, the bias or the prelu slopes of every class, one class per row of A, per output column of B,
        # per bias entry and slope (values.class_lanes), so that no sum meets two of them.
        lanes = values.CLASS_LANES
        for special, act in (("a-classes", "identity"), ("b-classes", "identity"), ("bias-classes", "identity"),
                             ("params-classes", "prelu")):
            for tb in (False, True):
                out.append(make(lanes, lanes, 17, tb, True, True, act, special=special,
                                profiles=("full",) if tb else ("ci", "full")))
        return out

    def space(self) -> SearchStrategy[Case]:
        """M past several register blocks, N and K across every vector tail, sometimes K over a cache block;
        transposed/constant B, bias, every activation with each of its parameter sets, B changing between calls.
        (The NaN-before-B probes are grid cases of a known defect.)"""
        from hypothesis import strategies as st

        @st.composite
        def draw(draw: DrawFn) -> Case:
            activation = draw(st.sampled_from(tuple(ACTIVATION_PARAMS)))
            const_b = draw(st.booleans())
            return self.case({"M": draw(st.integers(1, 70)), "N": draw(st.integers(1, 80)),
                              "K": draw(st.integers(1, 200)) + (1000 if draw(st.integers(0, 4)) == 4 else 0),
                              "trans_b": draw(st.booleans()), "const_b": const_b, "bias": draw(st.booleans()),
                              "activation": activation,
                              "pset": draw(st.sampled_from(tuple(ACTIVATION_PARAMS[activation]))),
                              "calls": 1 if const_b else draw(st.integers(1, 3)), "guard": "", "special": ""})
        return draw()

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        M, N, K = p["M"], p["N"], p["K"]
        b_shape = (N, K) if p["trans_b"] else (K, N)
        A = [rng.uniform(-1, 1, (M, K)).astype(np.float32) for _ in range(p["calls"])]
        B = [rng.uniform(-1, 1, b_shape).astype(np.float32) for _ in range(p["calls"])]
        bias = rng.uniform(-1, 1, N).astype(np.float32) if p["bias"] else None
        if p["activation"] == "prelu":
            params = rng.uniform(-1, 1, N).astype(np.float32)
        else:
            values = ACTIVATION_PARAMS[p["activation"]][p["pset"]]
            params = None if values is None else np.array(values, np.float32)
        if p["activation"] in ("mish", "elu", "swish", "gelu", "hswish", "hard_sigmoid"):
            # Spread pre-activations over the interesting range of the curve (several units), not just +-sqrt(K)/3.
            scale = np.float32(3.0 / max(1.0, math.sqrt(K) / 3.0))
            A = [(a * scale).astype(np.float32) for a in A]
        inputs = {"A": A, "B": B, "bias": bias, "params": params}
        if p["special"] == "params-classes":
            # Slopes up to FLT_MAX scale the pre-activation's rounding by as much: small integers make every sum
            # exact in any order, so the slope's product is the output's one rounding.
            inputs.update(A=[rng.integers(-2, 3, a.shape).astype(np.float32) for a in A],
                          B=[rng.integers(-2, 3, b.shape).astype(np.float32) for b in B],
                          bias=rng.integers(-2, 3, N).astype(np.float32))
        if p["special"]:
            self._hold_classes(p["special"].split("-")[0], inputs, p["trans_b"], rng)
        return inputs

    @staticmethod
    def _hold_classes(name: str, inputs: dict[str, Any], trans_b: bool, rng: np.random.Generator) -> None:
        """Every class one per lane (values.class_lanes) in input `name`: per row of A, per output column of B (one
        k each: the lane's own in the first set, the last k, a tail lane, in the second), per bias entry or
        slope."""
        for lane, value in values.class_lanes("float32", rng, finite=name == "params"):
            if name in ("bias", "params"):
                inputs[name][lane] = value
                continue
            matrix = inputs[name.upper()][0]
            k = lane % matrix.shape[1 if name == "a" or trans_b else 0] if lane < values.SECOND_SET else -1
            if name == "a" or trans_b:
                matrix[lane, k] = value
            else:
                matrix[k, lane] = value

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> Any:
        p = case.params
        M, N, K = p["M"], p["N"], p["K"]
        act = p["activation"]
        if p["guard"]:
            return self._run_nan_before_b(library, case, inputs)
        with simdbind.InnerProduct32f(M, N, K, trans_b=p["trans_b"], const_b=p["const_b"], bias=inputs["bias"],
                                      activation=act, params=inputs["params"],
                                      weight=inputs["B"][0] if p["const_b"] else None, library=library) as ip:
            results = []
            for call in range(p["calls"]):
                B = None if p["const_b"] else inputs["B"][call]
                results.append(ip.forward(inputs["A"][call], B, out=self.output(inputs, (M, N))))
        inputs["_actual"] = results  # for the reference's choice at mish's jump
        return results[0] if len(results) == 1 else tuple(results)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        """The context (constant B packed) and outputs made once; each call is the case's Forward calls."""
        p = case.params
        if p["guard"]:
            return super().prepare(library, case, inputs)
        M, N, K = p["M"], p["N"], p["K"]
        ip = simdbind.InnerProduct32f(M, N, K, trans_b=p["trans_b"], const_b=p["const_b"], bias=inputs["bias"],
                                      activation=p["activation"], params=inputs["params"],
                                      weight=inputs["B"][0] if p["const_b"] else None, library=library)
        calls = [(inputs["A"][i], None if p["const_b"] else inputs["B"][i], self.output(inputs, (M, N)))
                 for i in range(p["calls"])]
        if len(calls) == 1:
            (a, b, out), = calls
            return lambda: ip.forward(a, b, out=out)
        return lambda: tuple(ip.forward(a, b, out=out) for a, b, out in calls)

    @staticmethod
    def _run_nan_before_b(library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        """One Forward with B placed right after NaNs (made here, in the process that calls the library)."""
        p = case.params
        M, N, K = p["M"], p["N"], p["K"]
        b = inputs["B"][0]
        buffer = np.full(b.size + 16, np.nan, np.float32)
        guarded = buffer[16:].reshape(b.shape)
        guarded[...] = b
        if p["guard"] == "nan-before-B":
            with simdbind.InnerProduct32f(M, N, K, trans_b=True, const_b=False, library=library) as ip:
                return ip.forward(inputs["A"][0], guarded, out=Function.output(inputs, (M, N)))
        # Direct: Init, SetParams(NULL weight), Forward, exactly as a C user would call it (no route).
        ffi, function = library.ffi, library.function
        context = function("SimdSynetInnerProduct32fInit")(M, N, K, 1, 0, 0, 0)
        if context == ffi.NULL:
            raise RuntimeError("SimdSynetInnerProduct32fInit returned NULL")
        try:
            internal = ffi.new("SimdBool *")
            function("SimdSynetInnerProduct32fSetParams")(context, ffi.NULL, internal, ffi.NULL, ffi.NULL)
            scratch = np.zeros(max(1, int(function("SimdSynetInnerProduct32fExternalBufferSize")(context))),
                               np.float32)
            C = np.zeros((M, N), np.float32)
            function("SimdSynetInnerProduct32fForward")(
                context, ffi.from_buffer("float[]", inputs["A"][0]), ffi.from_buffer("float[]", guarded),
                ffi.from_buffer("float[]", scratch), ffi.from_buffer("float[]", C, True))
        finally:
            function("SimdRelease")(context)
        return C

    def reference(self, case: Case, inputs: dict[str, Any]) -> Any:
        p = case.params
        results = []
        for call in range(p["calls"]):
            B = inputs["B"][0] if p["const_b"] else inputs["B"][call]
            expected = reference.inner_product_32f(inputs["A"][call], B, p["trans_b"], inputs["bias"],
                                                   p["activation"], inputs["params"])
            if p["activation"] == "mish" and "_actual" in inputs:
                pre = reference.inner_product_32f(inputs["A"][call], B, p["trans_b"], inputs["bias"], "identity",
                                                  None)
                expected = either_side_of_the_jump(expected, pre, inputs["_actual"][call], "mish", inputs["params"],
                                                   self.tolerance(case).abs)
            results.append(expected)
        return results[0] if len(results) == 1 else tuple(results)

    def tolerance(self, case: Case) -> Tolerance:
        p = case.params
        act = p["activation"]
        if act == "prelu":
            params: Any = [1.0]
        else:
            params = ACTIVATION_PARAMS[act][p["pset"]]
        amax = 3.0 / max(1.0, math.sqrt(p["K"]) / 3.0) if act in (
            "mish", "elu", "swish", "gelu", "hswish", "hard_sigmoid") else 1.0
        return _float_tolerance(p["K"], act, params, amax=max(amax, 1.0))


@register
class InnerProductLayerForward(Function):
    name = "inner_product_layer"
    family = "inner_product"
    symbols = ("SimdSynetInnerProductLayerForward",)
    fields = (F("count", "int"), F("size", "int"), F("bias", "bool"), F("batch", "int", 1), F("special", "name", ""),
              F("group", "name"))

    def grid(self) -> Iterable[Case]:
        out = []
        for count, size in ((96, 128), (87, 137)):  # upstream's table (TestSynetInnerProduct.cpp)
            for bias in (False, True):
                out.append(self._case(count, size, bias, 1, ("smoke", "ci", "full")))
        for count in (1, 3, 4, 8, 17, 67, 1000):
            for size in (1, 2, 5, 8, 16, 31, 67, 1000, 4096):
                ci = count in (1, 17, 1000) or size in (5, 67)
                out.append(self._case(count, size, (count + size) % 2 == 0, 1, ("ci", "full") if ci else ("full",)))
        out.append(self._case(33, 45, True, 5, ("ci", "full")))  # a batch of 5 vectors
        # Edge: x, weight or bias of every class, one class per vector of the batch, per row of the weight, per
        # bias entry (values.class_lanes): no dot product meets two of them. The bias's second set sits on rows of
        # zeros, so that those outputs are the classes themselves (subnormal, +-max).
        lanes = values.CLASS_LANES
        for special in ("x-classes", "weight-classes", "bias-classes"):
            out.append(self._case(lanes, 19, True, lanes if special == "x-classes" else 1, ("ci", "full"), special))
        return out

    def _case(self, count: int, size: int, bias: bool, batch: int, profiles: tuple[str, ...],
              special: str = "") -> Case:
        return self.case({"count": count, "size": size, "bias": bias, "batch": batch, "special": special},
                         group="edge" if special else "main", profiles=profiles)

    def space(self) -> SearchStrategy[Case]:
        from hypothesis import strategies as st

        return st.builds(lambda count, size, bias, batch: self._case(count, size, bias, batch, ()),
                         st.integers(1, 100), st.integers(1, 300), st.booleans(), st.integers(1, 4))

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        shape = (p["size"],) if p["batch"] == 1 else (p["batch"], p["size"])
        inputs: dict[str, Any] = {
            "x": rng.uniform(-1, 1, shape).astype(np.float32),
            "weight": rng.uniform(-1, 1, (p["count"], p["size"])).astype(np.float32),
            "bias": rng.uniform(-1, 1, p["count"]).astype(np.float32) if p["bias"] else None}
        if p["special"] == "bias-classes":  # the second set's rows of zeros: those outputs are the bias itself
            inputs["weight"][values.SECOND_SET:] = 0.0
        if p["special"]:
            chosen: np.ndarray = inputs[p["special"].split("-")[0]]
            for lane, value in values.class_lanes("float32", rng):
                if chosen.ndim == 1:
                    chosen[lane] = value
                else:  # a row of x or of the weight: at the lane's own column, or the last (a tail lane)
                    chosen[lane, lane % chosen.shape[1] if lane < values.SECOND_SET else -1] = value
        return inputs

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        x = inputs["x"]
        out = self.output(inputs, x.shape[:-1] + (inputs["weight"].shape[0],))
        return simdbind.inner_product(x, inputs["weight"], inputs["bias"], out=out, library=library)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        x, weight, bias = inputs["x"], inputs["weight"], inputs["bias"]
        out = self.output(inputs, x.shape[:-1] + (weight.shape[0],))
        return lambda: simdbind.inner_product(x, weight, bias, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        x = inputs["x"]
        rows = [reference.inner_product_layer(r, inputs["weight"], inputs["bias"]) for r in x.reshape(-1, x.shape[-1])]
        return np.stack(rows).reshape(x.shape[:-1] + (inputs["weight"].shape[0],))

    def tolerance(self, case: Case) -> Tolerance:
        return _float_tolerance(case.params["size"], "identity", None)


@register
class InnerProduct8i(Function):
    name = "inner_product_8i"
    family = "inner_product"
    symbols = ("SimdSynetInnerProduct8i",)
    fields = (F("M", "int"), F("N", "int"), F("K", "int"), F("compatibility", "name"), F("data", "name"))
    dtype = "uint8"

    def grid(self) -> Iterable[Case]:
        out = []
        for M, N, K in ((1, 256, 6912), (10, 256, 6912), (15, 65, 255)):  # upstream's table (TestSynetInnerProduct.cpp)
            for compat in ("precise", "overflow", "narrowed"):
                for data in ("full", "narrowed"):
                    profiles = ("smoke", "ci", "full") if K == 255 else ("ci", "full")
                    out.append(self._case(M, N, K, compat, data, profiles))
        for M in (1, 2, 7):
            for N in (1, 3, 5, 17, 65):
                for K in (1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129):
                    for compat in ("precise", "overflow", "narrowed"):
                        ci = K in (1, 3, 17, 33, 65, 129) and N in (1, 5, 17)
                        out.append(self._case(M, N, K, compat, "extreme" if (M + N + K) % 3 == 0 else "full",
                                              ("ci", "full") if ci else ("full",)))
        for compat in ("precise", "overflow", "narrowed"):  # every pair saturates, both signs
            out.append(self._case(3, 9, 1001, compat, "extreme", ("smoke", "ci", "full")))
        return out

    def _case(self, M: int, N: int, K: int, compat: str, data: str, profiles: tuple[str, ...]) -> Case:
        return self.case({"M": M, "N": N, "K": K, "compatibility": compat, "data": data}, profiles=profiles)

    def space(self) -> SearchStrategy[Case]:
        from hypothesis import strategies as st

        return st.builds(lambda M, N, K, compat, data: self._case(M, N, K, compat, data, ()),
                         st.integers(1, 12), st.integers(1, 70), st.integers(1, 300),
                         st.sampled_from(("precise", "overflow", "narrowed")),
                         st.sampled_from(("full", "narrowed", "extreme")))

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        M, N, K = p["M"], p["N"], p["K"]
        if p["data"] == "narrowed":  # the 8iNarrowed ranges: no pair can saturate
            src = rng.integers(0, 181, (M, K), dtype=np.uint8)
            weight = rng.integers(-90, 91, (N, K), dtype=np.int8)
        elif p["data"] == "full":
            src = rng.integers(0, 256, (M, K), dtype=np.uint8)
            weight = rng.integers(-128, 128, (N, K), dtype=np.int8)
        else:  # extreme: large src, weights at +-127/-128 in runs, so many pairs exceed the int16 range
            src = rng.integers(200, 256, (M, K), dtype=np.uint8)
            weight = np.where(rng.random((N, K)) < 0.5, -128, 127).astype(np.int8)
            weight[:, ::7] = rng.integers(-128, 128, weight[:, ::7].shape, dtype=np.int8)
        return {"src": src, "weight": weight}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        # Which arithmetic the library really applies to a precise request (upstream's default build always saturates:
        # simdbind/conformance/families/README.md); the reference follows it, and the emulation in the wrapper is
        # switched off so the C function itself is checked.
        inputs["precise_honoured"] = library.capabilities.get("int8_precise") is not False
        out = self.output(inputs, (inputs["src"].shape[0], inputs["weight"].shape[0]), np.int32)
        return simdbind.inner_product_8i(inputs["src"], inputs["weight"], case.params["compatibility"], out=out,
                                         emulate_precise=False, library=library)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        src, weight, compatibility = inputs["src"], inputs["weight"], case.params["compatibility"]
        out = self.output(inputs, (src.shape[0], weight.shape[0]), np.int32)
        return lambda: simdbind.inner_product_8i(src, weight, compatibility, out=out, emulate_precise=False,
                                                 library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        precise = case.params["compatibility"] == "precise" and inputs.get("precise_honoured", True)
        return reference.inner_product_8i(inputs["src"], inputs["weight"], precise)

    def tolerance(self, case: Case) -> Tolerance:
        return EXACT


# -- benchmark cases: what `simdbind bench` times, and the work of a call of every case of the family ------------------
BENCH_NOTE = """Inner-product throughput (GFLOP/s, 2*M*N*K per call; the int8 product counts its integer multiply-adds alike)
for (M, N, K) in (1, 1000, 2048), (64, 1024, 1024), (256, 1024, 1024): the FP32 context as a Linear layer
(weights (N, K), constant: packed once), the same with B passed to every Forward, and the uint8 x int8 product in
saturating ("overflow") and exact ("precise") arithmetic."""

_SHAPES = ((1, 1000, 2048), (64, 1024, 1024), (256, 1024, 1024))
DESCRIPTORS = [line for M, N, K in _SHAPES for line in (
    f"inner_product_32f M={M} N={N} K={K} trans_b=true const_b=true bias=false",
    f"inner_product_32f M={M} N={N} K={K} trans_b=true const_b=false bias=false",
    f"inner_product_8i M={M} N={N} K={K} compatibility=overflow data=full",
    f"inner_product_8i M={M} N={N} K={K} compatibility=precise data=full")]
QUICK = DESCRIPTORS[:8]


def work(case: Case) -> Work:
    """2 x M x N x K per product (x calls); the layer: 2 x batch x count x size."""
    p = case.params
    if case.function == "inner_product_layer":
        return Work("GFLOP/s", 2.0 * p["batch"] * p["count"] * p["size"])
    return Work("GFLOP/s", 2.0 * p["M"] * p["N"] * p["K"] * p.get("calls", 1))
