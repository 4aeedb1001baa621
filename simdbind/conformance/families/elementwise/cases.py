"""Cases of the elementwise family."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

import simdbind
from simdbind.conformance import values
from simdbind.conformance.api import Unsupported
from simdbind.conformance.model import F, Case, Function, register
from simdbind.conformance.families.elementwise import reference
from simdbind.conformance.tolerance import EXACT, Tolerance
from simdbind.conformance.work import Work, elements, itemsize

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy
    from simdbind.library import Library

#: Sizes that cross every vector width (4, 8, 16 lanes) and tail, plus upstream's H*W sizes (src/Test/TestSynet.cpp).
TAIL_SIZES = tuple(range(1, 68))
LARGE_SIZES = (12288, 12297)
ELTWISE_OPS = ("product", "sum", "max", "min")


@register
class Eltwise(Function):
    name = "eltwise"
    family = "elementwise"
    symbols = ("SimdSynetEltwiseLayerForward",)
    fields = (F("op", "name"), F("count", "int"), F("size", "int"), F("special", "name", ""),
              F("weight0", "name", ""), F("group", "name"))

    def space(self) -> SearchStrategy[Case]:
        return _eltwise_space(self)

    def grid(self) -> Iterable[Case]:
        for op in ELTWISE_OPS:
            for count in (2, 3, 4, 5):
                for size in TAIL_SIZES:
                    profiles: tuple[str, ...] = ("ci", "full") \
                        if size in (1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 67) or count == 3 else ("full",)
                    if size in (1, 17) and count in (2, 3):
                        profiles = ("smoke",) + profiles
                    yield self._case(op, count, size, "main", profiles)
                for size in LARGE_SIZES:
                    yield self._case(op, count, size, "main", ("smoke", "ci", "full") if count <= 3 else ("ci", "full"))
            if op in ("max", "min"):
                # Max is a > b ? a : b and Min a < b ? a : b: with a NaN in either operand the later one wins; -inf
                # stays -inf (no -FLT_MAX start).
                for count in (2, 3):
                    yield self._case(op, count, 67, "edge", ("ci", "full"), special="nan_inf")
            # Edge: every input holds every class (values.holding_every_class), at body and tail lanes. Sum takes
            # two inputs: a third product added to a partial sum past FLT_MAX would make the float32 order matter.
            for count in (2,) if op == "sum" else (2, 3):
                yield self._case(op, count, 67, "edge", ("ci", "full") if count == 2 else ("full",),
                                 special="classes")
        # Edge: each class as the first weight of a sum (weight0), over inputs of every class. The second weight is
        # 0.5: its products are exact and never past FLT_MAX, so whether a kernel fuses them with the sum (FMA,
        # AVX2 and AVX-512) changes no result, as the contract leaves fusing open.
        for name in values.FLOAT_CLASSES:
            yield self._case("sum", 2, 67, "edge", ("ci", "full") if name in ("nan", "+max") else ("full",),
                             special="classes", weight0=name)

    def _case(self, op: str, count: int, size: int, group: str, profiles: tuple[str, ...],
              special: str = "", weight0: str = "") -> Case:
        return self.case({"op": op, "count": count, "size": size, "special": special, "weight0": weight0},
                         group=group, profiles=profiles)

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        arrays = [rng.uniform(-1, 1, p["size"]).astype(np.float32) for _ in range(p["count"])]
        if p["special"] == "nan_inf":
            specials = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0], np.float32)
            for a in arrays:
                mask = rng.random(a.size) < 0.3
                a[mask] = rng.choice(specials, int(mask.sum()))
        weights = rng.uniform(-1, 1, p["count"]).astype(np.float32) if p["op"] == "sum" else None
        if p["special"] == "classes":
            arrays = [values.holding_every_class(a, "float32", rng) for a in arrays]
        if p["weight0"]:
            chosen = values.FLOAT_CLASSES.index(p["weight0"])
            weights = np.array([values.specimens("float32")[chosen], 0.5], np.float32)
        return {"arrays": arrays, "weights": weights}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        out = self.output(inputs, (case.params["size"],))
        actual = simdbind.eltwise(inputs["arrays"], case.params["op"], inputs["weights"], out=out, library=library)
        inputs["_actual"] = actual  # for the edge rule of fused products (fused_sum_expectation)
        return actual

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        """The wrapper call alone (its arguments and output made once): what a benchmark of the call times."""
        arrays, op, weights = inputs["arrays"], case.params["op"], inputs["weights"]
        out = self.output(inputs, (case.params["size"],))
        return lambda: simdbind.eltwise(arrays, op, weights, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        expected = reference.eltwise(inputs["arrays"], case.params["op"], inputs["weights"])
        if case.params["op"] == "sum" and case.params["special"] and "_actual" in inputs:
            expected = fused_sum_expectation(expected, inputs["_actual"], inputs["arrays"], inputs["weights"])
        return expected

    def tolerance(self, case: Case) -> Tolerance:
        if case.params["op"] != "sum":
            return EXACT
        # Each of the count terms is rounded once (twice without FMA) in float32, the sum again per step:
        # at most ~2*count roundings of values bounded by sum|w_i x_i| <= count. Terms of every class (edge
        # inputs up to FLT_MAX, weights 0.5 or one class) reach far past that bound: the same roundings, relative.
        count = case.params["count"]
        relative = 2 * count * 2.0 ** -24 if case.params["special"] else 0.0
        return Tolerance(abs=2 * count * count * 2.0 ** -24, rel=relative,
                         why="float32 rounding of each weighted term and step")


def fused_sum_expectation(expected: np.ndarray, actual: np.ndarray, arrays: list[np.ndarray],
                          weights: np.ndarray) -> np.ndarray:
    """The edge rule of a two-input sum whose terms may be fused: a kernel may round a product only with the sum
    (a fused multiply-add, as upstream's and the bundled AVX2 and AVX-512 code do for the second term), which the
    contract leaves open. Where one product is past FLT_MAX (an infinity once rounded alone, a huge finite value
    inside the fused operation) and the other term is an infinity of the other sign, the sum is NaN unfused and
    that infinity fused: either is expected there if the kernel gave it. Elsewhere fusing changes only roundings,
    within the tolerance."""
    with np.errstate(over="ignore", invalid="ignore"):
        exact = [x.astype(np.float64) * np.float64(np.float32(w)) for x, w in zip(arrays, weights)]
    result = expected.copy()
    for one, other in ((0, 1), (1, 0)):
        past = np.isfinite(exact[one]) & (np.abs(exact[one]) > np.finfo(np.float32).max)
        infinite = np.isinf(exact[other]) & (np.sign(exact[one]) != np.sign(exact[other]))  # an infinite operand
        fused = past & infinite & (actual == exact[other])
        result[fused] = actual[fused]
    return result


# -- unary ----------------------------------------------------------------------------------------------------
UNARY_OPS = tuple(m.name.lower() for m in simdbind.UnaryOperation)
EXACT_UNARY = ("abs", "ceil", "floor", "neg", "not", "rcp", "round", "sign", "sqrt", "zero")
#: Tolerance of each inexact operation (admitting upstream's documented numerics); the bundled library
#: is within 2 ulp of the exact result on these (vmath.h), which tests/elementwise/test_elementwise.py checks.
UNARY_TOLERANCE = {
    "exp": Tolerance(rel=1e-5, max_ulp=2, why="polynomial exp: upstream rel ~1e-7, bundled <= 1.5 ulp"),
    "log": Tolerance(abs=3e-5, rel=1e-5, max_ulp=2,
                     why="upstream v7.1.162's polynomial log: abs error up to 1.1e-5 near x = 1 (where log ~ 0)"),
    "erf": Tolerance(abs=4e-6, rel=1e-5, max_ulp=2, why="upstream v7.1.162's polynomial erf: abs error up to 1.3e-6"),
    "tanh": Tolerance(abs=2e-7, rel=1e-5, max_ulp=2, why="exp-based tanh: upstream tanh(0) = -2.98e-8"),
    "sin": Tolerance(abs=3e-5, rel=1e-5, max_ulp=2,
                     why="upstream v7.1.162's range reduction + polynomial: abs error up to 1.4e-5 for |x| <= 200"),
    "cos": Tolerance(abs=3e-5, rel=1e-5, max_ulp=2,
                     why="upstream v7.1.162's range reduction + polynomial: abs error up to 1.4e-5 for |x| <= 200"),
    "rsqrt": Tolerance(rel=4e-4, why="upstream SSE/AVX2 rsqrtps (rel <= 1.5*2^-12); bundled is exact 1/sqrtf"),
}
#: The edge group "wide": sin and cos of arguments up to this magnitude (the contract holds for every finite x).
WIDE_OPS, WIDE_ARGUMENT = ("sin", "cos"), 1e5
UNARY_CI_SIZES = (7, 17, 67, 12297)
UNARY_SMOKE_SIZES = (17,)


def unary_main_inputs(op: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """Inputs inside the op's exact domain (the unary contract, docs/guide/tolerance.md); upstream's U[-200, 10]
    where it fits."""
    def mix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(rng.random(size) < 0.5, a, b)

    base = rng.uniform(-200, 10, size)
    if op == "exp":
        x = mix(rng.uniform(-87, 88, size), rng.uniform(-5, 5, size))
    elif op in ("log", "sqrt", "rsqrt"):
        x = mix(rng.uniform(1e-6, 10, size), 10.0 ** rng.uniform(-37, 37, size))
    elif op == "rcp":
        x = mix(rng.uniform(1e-6, 10, size), -(10.0 ** rng.uniform(-37, 37, size)))
    elif op in ("erf", "tanh"):
        x = mix(base, rng.uniform(-5, 5, size))
    elif op == "sign":
        x = np.where(rng.random(size) < 0.1, 0.0, base)
    else:
        x = base
    x = x.astype(np.float32)
    # Keep out of the sign-of-zero and tie cases (they are in the edge group), and away from exact zeros where
    # the result's sign differs between upstream's Base and SIMD code (abs, neg).
    if op == "ceil":
        x = np.where((x > -1) & (x <= 0), x - np.float32(1.5), x)
    elif op == "round":
        frac = np.abs(x - np.trunc(x))
        x = np.where(frac == 0.5, x + np.float32(0.25), x)
        x = np.where((x > -0.5) & (x <= 0), x - np.float32(1.25), x)
    elif op in ("abs", "neg", "floor"):
        x = np.where(x == 0, np.float32(1), x)
    return x.astype(np.float32)


_CLASS = dict(zip(values.FLOAT_CLASSES, values.specimens("float32")))
#: Inputs of the edge group: one value of every class (values.specimens), ties, values past int32, huge ones, the
#: smallest subnormal, negatives, arguments near the ops' own limits.
UNARY_SPECIALS = np.array([
    _CLASS["+0"], _CLASS["-0"], _CLASS["+inf"], _CLASS["-inf"], _CLASS["nan"], _CLASS["+normal"], _CLASS["-normal"],
    1.5, -1.5, 2.5, -2.5, -0.3, -0.7, 0.3, 2.0 ** 31, -(2.0 ** 31), 3e9, -3e9, 1e30, -1e30, 8388609.0,
    _CLASS["+subnormal"], _CLASS["-subnormal"], 1.4e-45, _CLASS["+max"], _CLASS["-max"], -1.0, -2.5e-3, 88.8, -100.0,
    -104.5, 1e4, -1e5, 0.49999997, -0.49999997, 4.0, 1e-3], np.float32)


#: Per op, one value whose result differs between upstream's Base and SIMD code (the catalogue's unary-*
#: entries), for tail-mix cases.
UNARY_TAIL_MIX = {
    "abs": (0.0, 0.0), "ceil": (-0.5, -0.5), "cos": (3e9, 3e9), "erf": (np.nan, np.nan), "exp": (np.inf, np.inf),
    "floor": (3e9, 3e9), "log": (-2.5, -2.5), "neg": (0.0, 0.0), "not": (1.0, 1.0), "rcp": (3.0, 3.0),
    "round": (2.5, 2.5), "rsqrt": (3.0, 3.0), "sign": (np.nan, np.nan), "sin": (3e9, 3e9), "sqrt": (2.0, 2.0),
    "tanh": (np.nan, np.nan), "zero": (np.nan, np.nan),
}


@register
class Unary(Function):
    name = "unary"
    family = "elementwise"
    symbols = ("SimdSynetUnaryOperation32f",)
    fields = (F("op", "name"), F("size", "int"), F("special", "name", ""), F("group", "name"))

    def space(self) -> SearchStrategy[Case]:
        return _unary_space(self)

    def grid(self) -> Iterable[Case]:
        for op in UNARY_OPS:
            for size in TAIL_SIZES + LARGE_SIZES + (100003,):
                profiles: tuple[str, ...] = ("full",)
                if size in UNARY_CI_SIZES:
                    profiles = ("ci", "full")
                if size in UNARY_SMOKE_SIZES:
                    profiles = ("smoke", "ci", "full")
                yield self.case({"op": op, "size": size, "special": ""}, profiles=profiles)
            # Edge: the documented behaviour outside the exact domain, at body and tail lane positions.
            yield self.case({"op": op, "size": len(UNARY_SPECIALS) * 2 + 3, "special": "specials"}, group="edge",
                            profiles=("ci", "full"))
            # Edge: the same special values in the first lanes (vector body) and the last ones (the tail at every
            # vector width: 13 = 8 + 5 = 3*4 + 1), so an implementation whose tail follows other semantics shows.
            yield self.case({"op": op, "size": 13, "special": "tail-mix"}, group="edge", profiles=("full",))
            if op in WIDE_OPS:
                yield self.case({"op": op, "size": 67, "special": "wide"}, group="edge", profiles=("ci", "full"))

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        if p["special"] == "tail-mix":
            values = UNARY_TAIL_MIX[p["op"]]
            x = np.concatenate([[values[0]], rng.uniform(1, 2, 11), [values[1]]])
        elif p["special"] == "specials":
            x = np.concatenate([UNARY_SPECIALS, rng.permutation(UNARY_SPECIALS),
                                rng.uniform(-10, 10, p["size"] - 2 * len(UNARY_SPECIALS)).astype(np.float32)])
        elif p["special"] == "wide":  # periodic ops: arguments far past the main group's |x| <= 200
            x = rng.uniform(-WIDE_ARGUMENT, WIDE_ARGUMENT, p["size"])
        else:
            x = unary_main_inputs(p["op"], p["size"], rng)
        return {"x": x.astype(np.float32)}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        y = simdbind.unary(inputs["x"], case.params["op"], out=self.output(inputs, inputs["x"].shape), library=library)
        return y.view(np.uint32) if case.params["op"] == "not" else y  # bitwise: compare the bits

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        """The wrapper call alone (the output made once; "not" gives float32 bits, not the uint32 view)."""
        x, op = inputs["x"], case.params["op"]
        out = self.output(inputs, x.shape)
        return lambda: simdbind.unary(x, op, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        y = reference.unary(inputs["x"], case.params["op"])
        return y.view(np.uint32) if case.params["op"] == "not" else y

    def tolerance(self, case: Case) -> Tolerance:
        op = case.params["op"]
        return EXACT if op in EXACT_UNARY else UNARY_TOLERANCE[op]


# -- softmax --------------------------------------------------------------------------------------------------
#: (outer, count, inner) of upstream's tests (TestSynetSoftmax.cpp) and shapes crossing every lane count and tail.
SOFTMAX_UPSTREAM = ((392, 49, 1), (21825, 2, 1), (50, 10, 100), (13666, 3, 1), (749, 49, 1), (3136, 196, 1))
#: Tails of count and inner, and of outer for short slices (the kernels for 1 to 4 elements take several slices per
#: vector: 16 slices of two bf16 values fill an AVX-512 register).
SOFTMAX_TAILS = tuple((3, count, 1) for count in range(1, 68)) + tuple((2, 5, inner) for inner in range(2, 34)) \
    + tuple((outer, count, 1) for count in (1, 2, 3, 4) for outer in range(4, 34))
SOFTMAX_CI = {(392, 49, 1), (50, 10, 100), (21825, 2, 1), (3, 1, 1), (3, 7, 1), (3, 17, 1), (3, 67, 1), (2, 5, 3),
              (2, 5, 17), (2, 5, 33), (29, 2, 1), (13, 1, 1), (27, 3, 1)}
SOFTMAX_SMOKE = {(3, 17, 1), (2, 5, 17)}
SOFTMAX_NONFINITE = ("nan", "posinf", "neginf", "all_neginf")


SOFTMAX_FIELDS = (F("outer", "int"), F("count", "int"), F("inner", "int"), F("data", "name"),
                  F("direct", "bool", False), F("special", "name", ""), F("group", "name"))


def _softmax_cases(function: Function) -> Iterable[Case]:
    for shape in SOFTMAX_UPSTREAM + SOFTMAX_TAILS:
        for data in ("wide", "unit"):
            profiles: tuple[str, ...] = ("full",)
            if shape in SOFTMAX_CI and (data == "unit" or shape in SOFTMAX_UPSTREAM):
                profiles = ("ci", "full")
            if shape in SOFTMAX_SMOKE and data == "unit":
                profiles = ("smoke", "ci", "full")
            o, c, i = shape
            yield function.case({"outer": o, "count": c, "inner": i, "data": data, "direct": False, "special": ""},
                                profiles=profiles)
    # The C function itself (no route) where simdbind.softmax routes around upstream: one-element slices past a
    # vector of them (SSE4.1, AVX2), two-element bf16 slices 9 to 15 past a whole 16 (AVX-512).
    for o, c in ((12, 1), (29, 2)):
        yield function.case({"outer": o, "count": c, "inner": 1, "data": "unit", "direct": True, "special": ""},
                            profiles=("ci", "full"))
    for special in SOFTMAX_NONFINITE:
        for o, c, i in ((8, 13, 1), (3, 5, 19)):
            yield function.case({"outer": o, "count": c, "inner": i, "data": "unit", "direct": False,
                                 "special": special},
                                group="edge", profiles=("ci", "full"))
    # The finite slices beside a +inf one, over upstream's wide data: only exp(x - max) keeps them from underflowing
    # (a shift the unit data would forgive).
    yield function.case({"outer": 3, "count": 5, "inner": 19, "data": "wide", "direct": False, "special": "posinf"},
                        group="edge", profiles=("ci", "full"))
    # Every class of value, one per slice (so each class shows its own effect on a slice), at a body lane of the
    # first 11 slices and at the last lane (the tail of count or inner) of the next 11; a last slice whose results
    # are subnormal.
    for o, c, i in ((23, 13, 1), (23, 5, 19)):
        yield function.case({"outer": o, "count": c, "inner": i, "data": "unit", "direct": False, "special": "classes"},
                            group="edge", profiles=("ci", "full") if i == 1 else ("full",))


def _softmax_direct(library: Library, name: str, ctype: str, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """One call of the C function over the (outer, count, inner) array, as a C caller makes it: no route."""
    outer, count, inner = x.shape
    ffi = library.ffi
    library.function(name)(ffi.from_buffer(ctype, x), outer, count, inner, ffi.from_buffer(ctype, out))
    return out


def _softmax_inputs(case: Case, rng: np.random.Generator) -> np.ndarray:
    p = case.params
    shape = (p["outer"], p["count"], p["inner"])
    if p["data"] == "wide":  # upstream's data: U[-1000, 0] (float32) or U[-1, 1] (bf16)
        x = rng.uniform(-1000, 0, shape) if case.dtype == "float32" else rng.uniform(-1, 1, shape)
    else:
        x = rng.uniform(-10, 10, shape)
    x = x.astype(np.float32)
    special = p["special"]
    if special == "classes":
        return _one_class_per_slice(x, case.dtype, rng)
    if special:
        # Every other slice gets non-finite values, at random positions of the slice.
        chosen = rng.random(shape) < 0.25
        chosen[1::2] = False
        if special == "nan":
            x[chosen] = np.nan
        elif special == "posinf":
            x[chosen] = np.inf
        elif special == "neginf":
            chosen[:, 0] = False  # never a whole slice (that is all_neginf): each keeps its first value
            x[chosen] = -np.inf
        else:
            x[0::2] = -np.inf
    return x


#: The gap to the largest value that makes a softmax result subnormal in float32 and bf16: exp(-90) = 8.2e-40.
SUBNORMAL_GAP = 90.0


def _one_class_per_slice(x: np.ndarray, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """x (outer, count, inner) with slice (o, :, 0) of o < 11 holding class o at count position o % count, and slice
    (11 + o, :, inner - 1) a class (in a random order) at its last count position; float32 values that bf16 holds
    exactly when `dtype` is bf16. The slices (22, :, i) are 0 but for one SUBNORMAL_GAP, so the others' results are
    subnormal."""
    specimens = values.specimens(dtype)
    if dtype != "float32":
        specimens = reference.bf16_to_float(specimens)
    classes = len(specimens)
    _, count, inner = x.shape
    for o, value in enumerate(specimens):
        x[o, o % count, 0] = value
    for o, value in enumerate(rng.permutation(specimens)):
        x[classes + o, count - 1, inner - 1] = value
    x[2 * classes] = 0.0
    x[2 * classes, 0] = SUBNORMAL_GAP
    return x


@register
class Softmax(Function):
    name = "softmax"
    family = "elementwise"
    symbols = ("SimdSynetSoftmax32f",)
    fields = SOFTMAX_FIELDS

    def space(self) -> SearchStrategy[Case]:
        return _softmax_space(self)

    def grid(self) -> Iterable[Case]:
        return _softmax_cases(self)

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        return {"x": _softmax_inputs(case, rng)}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        out = self.output(inputs, inputs["x"].shape)
        if case.params["direct"]:
            return _softmax_direct(library, "SimdSynetSoftmax32f", "float[]", inputs["x"], out)
        return simdbind.softmax(inputs["x"], axis=1, out=out, library=library)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        x = inputs["x"]
        out = self.output(inputs, x.shape)
        return lambda: simdbind.softmax(x, axis=1, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return reference.softmax(inputs["x"], axis=1)

    def tolerance(self, case: Case) -> Tolerance:
        return Tolerance(abs=1e-6, why="abs 1e-6 for outputs in [0, 1] (polynomial exp, float32 sums)")


@register
class Softmax16b(Function):
    name = "softmax16b"
    family = "elementwise"
    symbols = ("SimdSynetSoftmax16b",)
    fields = SOFTMAX_FIELDS
    dtype = "bfloat16"

    def space(self) -> SearchStrategy[Case]:
        return _softmax_space(self)

    def grid(self) -> Iterable[Case]:
        return _softmax_cases(self)

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        return {"x": reference.bf16_round(_softmax_inputs(case, rng))}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        # Raw uint16 bits in and out; compared as the float32 values they encode.
        x = inputs["x"]
        out = self.output(inputs, x.shape, x.dtype)
        if case.params["direct"]:
            return reference.bf16_to_float(_softmax_direct(library, "SimdSynetSoftmax16b", "uint16_t[]", x, out))
        return reference.bf16_to_float(simdbind.softmax(x, axis=1, out=out, library=library))

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        """The wrapper call alone: bf16 bits out (run's widening to float32 for the comparison is left out)."""
        x = inputs["x"]
        out = self.output(inputs, x.shape, x.dtype)
        return lambda: simdbind.softmax(x, axis=1, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return reference.bf16_to_float(reference.softmax16b(inputs["x"], axis=1))

    def tolerance(self, case: Case) -> Tolerance:
        return Tolerance(max_ulp=1 << 16, why="1 bf16 ulp (= 2^16 float32 ulps) of bf16(softmax64(x))")


# -- LRN ------------------------------------------------------------------------------------------------------
#: (batch, half, channels, height, width): upstream's (2, 96, 128) and (2, 87, 137) as HxW 8x16 and 1x137,
#: small channel counts around 2*half + 1 (NHWC upstream defect, lrn-nhwc-small-channels), half 2 with 7, 11 and
#: 19 channels (the NHWC kernels' F + 3 defect), batch > 1, every tail.
LRN_SHAPES = ((1, 2, 96, 8, 16), (1, 2, 87, 1, 137), (1, 2, 4, 3, 5), (1, 2, 5, 3, 5), (1, 3, 3, 2, 7),
              (1, 0, 7, 3, 3), (1, 1, 1, 1, 17), (2, 2, 19, 5, 3), (3, 1, 33, 1, 9), (1, 5, 17, 2, 2),
              (1, 2, 8, 1, 1), (2, 4, 67, 1, 5), (1, 7, 6, 3, 3), (1, 2, 7, 2, 3), (2, 2, 11, 3, 2))
LRN_CI = {(1, 2, 96, 8, 16), (1, 2, 87, 1, 137), (1, 2, 4, 3, 5), (1, 3, 3, 2, 7), (2, 2, 19, 5, 3),
          (1, 5, 17, 2, 2), (2, 4, 67, 1, 5), (1, 2, 7, 2, 3), (2, 2, 11, 3, 2)}
LRN_K = {"caffe": (1.0, 0.1, -0.75), "onnx": (2.0, 1e-4 / 5, -0.75)}
#: The edge group's k of every finite class (the wrapper takes k finite only: values.FINITE_PARAMETER): in
#: k=classes<i>, k0, k1 and k2 are the finite classes i, i + 3 and i + 6 (mod 8), so that over the eight each class
#: stands once in each place.
_FINITE = values.finite_specimens("float32")
LRN_K_CLASSES = {f"classes{i}": tuple(float(_FINITE[(i + shift) % len(_FINITE)]) for shift in (0, 3, 6))
                 for i in range(len(_FINITE))}


@register
class Lrn(Function):
    name = "lrn"
    family = "elementwise"
    symbols = ("SimdSynetLrnLayerCrossChannels",)
    outside_domain = {"k": dict.fromkeys(values.NON_FINITE_CLASSES, values.FINITE_PARAMETER)}
    fields = (F("layout", "name"), F("batch", "int", 1), F("half", "int"), F("channels", "int"), F("height", "int"),
              F("width", "int"), F("k", "name"), F("direct", "bool", False), F("special", "name", ""),
              F("group", "name"))

    def space(self) -> SearchStrategy[Case]:
        return _lrn_space(self)

    def grid(self) -> Iterable[Case]:
        for shape in LRN_SHAPES:
            n, half, c, h, w = shape
            for layout in ("nchw", "nhwc"):
                for kname in LRN_K:
                    profiles: tuple[str, ...] = ("ci", "full") if shape in LRN_CI and kname == "caffe" else ("full",)
                    if shape == (1, 2, 4, 3, 5) and kname == "caffe":
                        profiles = ("smoke",) + profiles
                    yield self.case({"batch": n, "half": half, "channels": c, "height": h, "width": w, "k": kname,
                                     "direct": False, "special": ""}, layout=layout, profiles=profiles)
        # Edge: x of every class (at body and tail lanes, values.holding_every_class) with Caffe's k, and the caffe
        # x with k of every class; both layouts, channels across a vector (21 = 16 + 5 = 2*8 + 5 = 5*4 + 1) so NHWC
        # has tail lanes (and not 7, 11 or 19, which simdbind.lrn routes through NCHW on upstream builds).
        for layout in ("nchw", "nhwc"):
            yield self.case({"batch": 1, "half": 2, "channels": 21, "height": 3, "width": 5, "k": "caffe",
                             "direct": False, "special": "classes"}, layout=layout, group="edge",
                            profiles=("ci", "full"))
            for kname in LRN_K_CLASSES:
                yield self.case({"batch": 1, "half": 2, "channels": 21, "height": 3, "width": 5, "k": kname,
                                 "direct": False, "special": ""}, layout=layout, group="edge",
                                profiles=("ci", "full") if kname == "classes0" else ("full",))
        # Edge: the C function itself with NHWC channels < 2*half + 1 (the wrapper routes such calls through NCHW
        # on other libraries; upstream's NHWC code reads neighbouring pixels there), and with half 2 and
        # 7, 11 or 19 channels (routed too: upstream's channel 1 window takes in the float before the pixel).
        for n, half, c, h, w in ((1, 2, 4, 3, 5), (1, 3, 3, 2, 7), (1, 2, 1, 4, 4), (1, 2, 7, 2, 3),
                                 (2, 2, 11, 3, 2), (2, 2, 19, 5, 3)):
            yield self.case({"batch": n, "half": half, "channels": c, "height": h, "width": w, "k": "caffe",
                             "direct": True, "special": ""}, layout="nhwc", group="edge", profiles=("ci", "full"))

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        shape: tuple[int, ...] = (p["channels"], p["height"], p["width"]) if case.layout == "nchw" else \
            (p["height"], p["width"], p["channels"])
        if p["batch"] > 1:
            shape = (p["batch"],) + shape
        x = rng.uniform(-10, 10, shape).astype(np.float32)
        if p["special"] == "classes":
            x = values.holding_every_class(x, "float32", rng)
        return {"x": x, "k": np.array({**LRN_K, **LRN_K_CLASSES}[p["k"]], np.float32)}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        p = case.params
        if not p["direct"]:
            return simdbind.lrn(inputs["x"], p["half"], inputs["k"], case.layout,
                                out=self.output(inputs, inputs["x"].shape), library=library)
        if library.kind != "bundled" and case.layout == "nhwc" and p["channels"] < 2 * p["half"] + 1:
            # Upstream's NHWC index arithmetic wraps for channels < 2*half+1: the read can land anywhere,
            # and did crash the process against v7.1.162. Catalogued as lrn-nhwc-small-channels; simdbind.lrn
            # routes such calls through NCHW, so users never reach it. (The F + 3 cases read one float before src:
            # the guard zone, so they run.)
            raise Unsupported("direct LRN NHWC call with channels < 2*half+1 reads outside src on upstream builds "
                              "(lrn-nhwc-small-channels); not run in process")
        x = inputs["x"]
        out = self.output(inputs, x.shape)
        ffi = library.ffi
        lrn = library.function("SimdSynetLrnLayerCrossChannels")
        k = ffi.from_buffer("float[]", inputs["k"])
        if case.layout == "nhwc":  # the batch's pixels are one run of channel vectors
            lrn(ffi.from_buffer("float[]", x), p["half"], p["channels"], x.size // p["channels"], k,
                ffi.from_buffer("float[]", out), simdbind.TensorFormat.NHWC)
            return out
        images, image_out = x.reshape(-1, *x.shape[-3:]), out.reshape(-1, *out.shape[-3:])
        for image, result in zip(images, image_out):  # NCHW: one image per call
            lrn(ffi.from_buffer("float[]", image), p["half"], p["channels"], image.size // p["channels"], k,
                ffi.from_buffer("float[]", result), simdbind.TensorFormat.NCHW)
        return out

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], np.ndarray]:
        if case.params["direct"]:
            return super().prepare(library, case, inputs)
        x, half, k, layout = inputs["x"], case.params["half"], inputs["k"], case.layout
        out = self.output(inputs, x.shape)
        return lambda: simdbind.lrn(x, half, k, layout, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> np.ndarray:
        return reference.lrn(inputs["x"], case.params["half"], inputs["k"], case.layout)

    def tolerance(self, case: Case) -> Tolerance:
        return Tolerance(abs=2.0 ** -149, rel=2e-5,
                         why="Pow = exp(log(b) * k2) with polynomial exp/log; float32 window sums (and one step of "
                             "the subnormals for the edge group's tiny results)")


# -- shuffle --------------------------------------------------------------------------------------------------
#: (batch, channels0, channels1, height, width): upstream's (42, 54, 128) and (52, 46, 137), small and tails.
SHUFFLE_SHAPES = ((1, 42, 54, 8, 16), (1, 52, 46, 1, 137), (1, 2, 2, 1, 1), (1, 2, 4, 3, 5), (2, 6, 2, 2, 3),
                  (3, 4, 8, 1, 7), (1, 0, 4, 2, 2), (1, 18, 34, 1, 17))
SHUFFLE_CI = {(1, 42, 54, 8, 16), (1, 2, 4, 3, 5), (2, 6, 2, 2, 3), (1, 0, 4, 2, 2)}


@register
class Shuffle(Function):
    name = "shuffle"
    family = "elementwise"
    symbols = ("SimdSynetShuffleLayerForward",)
    fields = (F("layout", "name"), F("type", "int"), F("batch", "int", 1),
              F("channels", "dims", names=("channels0", "channels1")), F("height", "int"), F("width", "int"),
              F("special", "name", ""), F("group", "name"))

    def space(self) -> SearchStrategy[Case]:
        return _shuffle_space(self)

    def grid(self) -> Iterable[Case]:
        for shape in SHUFFLE_SHAPES:
            n, c0, c1, h, w = shape
            for layout in ("nchw", "nhwc"):
                for shuffle_type in (0, 1):
                    profiles: tuple[str, ...] = ("ci", "full") if shape in SHUFFLE_CI else ("full",)
                    if shape == (2, 6, 2, 2, 3):
                        profiles = ("smoke",) + profiles
                    yield self.case({"type": shuffle_type, "batch": n, "channels0": c0, "channels1": c1,
                                     "height": h, "width": w, "special": ""}, layout=layout, profiles=profiles)
        # Edge: both inputs of every class (body and tail lanes): a shuffle copies bits, NaN and -0 included.
        for layout in ("nchw", "nhwc"):
            for shuffle_type in (0, 1):
                yield self.case({"type": shuffle_type, "batch": 1, "channels0": 18, "channels1": 34, "height": 1,
                                 "width": 17, "special": "classes"}, layout=layout, group="edge",
                                profiles=("ci", "full") if shuffle_type == 0 else ("full",))

    def _shape(self, case: Case, channels: int) -> tuple[int, ...]:
        p = case.params
        shape = (channels, p["height"], p["width"]) if case.layout == "nchw" else (p["height"], p["width"], channels)
        return ((p["batch"],) + shape) if p["batch"] > 1 else shape

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        if p["type"] == 0:
            c0, c1 = p["channels0"], p["channels1"]
        else:
            if (p["channels0"] + p["channels1"]) % 2:
                raise ValueError(f"type 1: channels {p['channels0']}x{p['channels1']} do not sum to an even count")
            c0 = c1 = (p["channels0"] + p["channels1"]) // 2
        arrays = {"x0": rng.uniform(-10, 10, self._shape(case, c0)).astype(np.float32),
                  "x1": rng.uniform(-10, 10, self._shape(case, c1)).astype(np.float32)}
        if p["special"] == "classes":
            arrays = {name: values.holding_every_class(x, "float32", rng) for name, x in arrays.items()}
        return arrays

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        p = case.params
        channels = (p["channels0"], p["channels1"]) if p["type"] == 1 else None
        shapes = [y.shape for y in self.reference(case, inputs)]
        out = (self.output(inputs, shapes[0]), self.output(inputs, shapes[1]))
        return simdbind.shuffle(inputs["x0"], inputs["x1"], p["type"], case.layout, channels=channels, out=out,
                                library=library)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        """The wrapper call alone: the output shapes (run takes them from the reference) found once."""
        p = case.params
        channels = (p["channels0"], p["channels1"]) if p["type"] == 1 else None
        first, second = self.reference(case, inputs)
        out = (self.output(inputs, first.shape), self.output(inputs, second.shape))
        x0, x1, kind, layout = inputs["x0"], inputs["x1"], p["type"], case.layout
        return lambda: simdbind.shuffle(x0, x1, kind, layout, channels=channels, out=out, library=library)

    def reference(self, case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        p = case.params
        return reference.shuffle(inputs["x0"], inputs["x1"], p["type"], case.layout,
                                 (p["channels0"], p["channels1"]))

    def tolerance(self, case: Case) -> Tolerance:
        return EXACT


# -- parameter spaces (the grids above are named points of them) ----------------------------------------------
def _sizes(st: Any, largest: int = 300) -> SearchStrategy[int]:
    """Every length up to `largest` (bodies and tails at every vector width), one time in ten past 12288 (the size
    of upstream's tests). Drawn as (length, large?) so that shrinking goes to short lengths."""
    sizes: SearchStrategy[int] = st.tuples(st.integers(1, largest), st.integers(0, 9)).map(
        lambda t: t[0] + (LARGE_SIZES[0] if t[1] == 9 else 0))
    return sizes


def _eltwise_space(self: Eltwise) -> SearchStrategy[Case]:
    from hypothesis import strategies as st

    @st.composite
    def draw(draw: DrawFn) -> Case:
        op = draw(st.sampled_from(ELTWISE_OPS))
        # NaN/Inf order is part of the contract for max and min only (a > b ? a : b keeps the later NaN); sums of
        # infinities have none.
        special = draw(st.sampled_from(("", "nan_inf"))) if op in ("max", "min") else ""
        return self.case({"op": op, "count": draw(st.integers(2, 8)), "size": draw(_sizes(st)), "special": special,
                          "weight0": ""}, group="edge" if special else "main")
    return draw()


def _unary_space(self: Unary) -> SearchStrategy[Case]:
    from hypothesis import strategies as st

    @st.composite
    def draw(draw: DrawFn) -> Case:
        op = draw(st.sampled_from(UNARY_OPS))
        special = draw(st.sampled_from(("", "specials", "tail-mix") + (("wide",) if op in WIDE_OPS else ())))
        if special == "specials":  # every special value twice, then any number of ordinary ones
            size = 2 * len(UNARY_SPECIALS) + draw(st.integers(0, 40))
        elif special == "tail-mix":
            size = 13
        else:
            size = draw(_sizes(st))
        return self.case({"op": op, "size": size, "special": special}, group="edge" if special else "main")
    return draw()


def _softmax_space(self: Function) -> SearchStrategy[Case]:
    from hypothesis import strategies as st

    @st.composite
    def draw(draw: DrawFn) -> Case:
        outer, count, inner = draw(st.integers(1, 40)), draw(st.integers(1, 80)), draw(st.integers(1, 40))
        special = draw(st.sampled_from(("",) + SOFTMAX_NONFINITE))
        return self.case({"outer": outer, "count": count, "inner": inner,
                          "data": draw(st.sampled_from(("unit", "wide"))), "direct": False, "special": special},
                         group="edge" if special else "main")
    return draw()


def _lrn_space(self: Lrn) -> SearchStrategy[Case]:
    from hypothesis import strategies as st

    @st.composite
    def draw(draw: DrawFn) -> Case:
        layout = draw(st.sampled_from(("nchw", "nhwc")))
        # A direct call (no routing) is the C function's own contract, outside the wrapper's, in either layout.
        direct = draw(st.booleans())
        params = {"batch": draw(st.integers(1, 3)), "half": draw(st.integers(0, 6)),
                  "channels": draw(st.integers(1, 70)), "height": draw(st.integers(1, 9)),
                  "width": draw(st.integers(1, 20)), "k": draw(st.sampled_from(tuple(LRN_K))), "direct": direct,
                  "special": ""}
        return self.case(params, layout=layout, group="edge" if direct else "main")
    return draw()


def _shuffle_space(self: Shuffle) -> SearchStrategy[Case]:
    from hypothesis import strategies as st

    @st.composite
    def draw(draw: DrawFn) -> Case:
        shuffle_type = draw(st.integers(0, 1))
        c0, c1 = draw(st.integers(0, 40)), draw(st.integers(0, 40))
        c0, c1 = 2 * (c0 // 2), 2 * (c1 // 2)  # both types pair channels: even counts (the wrapper's rule)
        return self.case({"type": shuffle_type, "batch": draw(st.integers(1, 3)), "channels0": c0,
                          "channels1": c1, "height": draw(st.integers(1, 9)), "width": draw(st.integers(1, 20)),
                          "special": ""},
                         layout=draw(st.sampled_from(("nchw", "nhwc"))))
    return draw()


# -- benchmark cases: what `simdbind bench` times, and the work of a call of every case of the family ------------------
BENCH_NOTE = """Elementwise throughput in Gelem/s (output elements per second): the unary operations on 1 K, 64 K and 4 M
float32 elements, softmax (float32 and bf16 rows of 1000), eltwise sum and max of two inputs, LRN at 64x56x56 in
both layouts and the channel shuffle of 116+116 channels at 28x28. The memory-bound ones (abs, neg, zero, not,
sign, eltwise, shuffle) are measured beside memcpy of the same bytes."""

_UNARY = ("abs", "ceil", "cos", "erf", "exp", "floor", "log", "neg", "not", "rcp", "round", "rsqrt", "sign", "sin",
          "sqrt", "tanh", "zero")
#: Unary operations that do a few instructions per element: bound by memory, compared with memcpy.
MEMORY_BOUND = ("abs", "neg", "zero", "not", "sign")
_SIZES = (1 << 10, 1 << 16, 1 << 22)

DESCRIPTORS = (
    [f"unary op={op} size={n}" for op in _UNARY for n in _SIZES]
    + ["softmax outer=64 count=1000 inner=1 data=-", "softmax outer=4096 count=1000 inner=1 data=-",
       "softmax16b outer=64 count=1000 inner=1 data=-"]
    + [f"eltwise op={op} count=2 size={n}" for n in _SIZES for op in ("sum", "max")]
    + [f"lrn layout={layout} half=2 channels=64 height=56 width=56 k=onnx" for layout in ("nchw", "nhwc")]
    + ["shuffle layout=nchw type=0 channels=116x116 height=28 width=28"])
QUICK = ([f"unary op={op} size={n}" for op in _UNARY for n in _SIZES[1:]]
         + ["softmax outer=64 count=1000 inner=1 data=-", "softmax16b outer=64 count=1000 inner=1 data=-"]
         + [f"eltwise op={op} count=2 size={n}" for n in _SIZES[1:] for op in ("sum", "max")])


def work(case: Case) -> Work:
    """Output elements; bytes moved for the memory-bound functions."""
    p, size = case.params, itemsize(case)
    if case.function == "unary":
        n = p["size"]
        return Work("Gelem/s", n, 2 * size * n if p["op"] in MEMORY_BOUND else None)
    if case.function == "eltwise":
        return Work("Gelem/s", p["size"], (p["count"] + 1) * size * p["size"])
    if case.function in ("softmax", "softmax16b"):
        return Work("Gelem/s", p["outer"] * p["count"] * p["inner"])
    if case.function == "lrn":
        return Work("Gelem/s", p["batch"] * elements((p["channels"], p["height"], p["width"])))
    if case.function == "shuffle":
        n = p["batch"] * (p["channels0"] + p["channels1"]) * p["height"] * p["width"]
        return Work("Gelem/s", n, 2 * size * n)
    raise ValueError(f"no work rule for {case.function}")
