"""Cases of GatherElements: upstream's table (src/Test/TestSynetGatherElements.cpp), every data x index type pair,
constant and per-call indices, negative indices, index slices repeated across the outer dimensions (the broadcast that
upstream's SetIndex detects), and outer ranks 0..3 (the gather axis at every position of a rank-4 tensor)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

import simdbind
from simdbind.conformance.model import F, Case, Function, register
from simdbind.conformance.families.gather import reference
from simdbind.conformance.tolerance import Tolerance
from simdbind.conformance.work import ITEMSIZE, Work, elements, itemsize

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy
    from simdbind.library import Library

DATA_TYPES = ("float32", "uint8", "bf16")
INDEX_TYPES = ("int32", "int64")
# Upstream's NDEBUG table: (data, index, constant, negative, batch, outer); srcCount 49, inner 1, idxCount 196.
UPSTREAM_TABLE = [("float32", "int64", False, True, 16, 196), ("float32", "int32", False, True, 16, 196),
                  ("bf16", "int32", False, True, 16, 196), ("bf16", "int32", False, False, 16, 196),
                  ("bf16", "int32", True, True, 16, 196), ("bf16", "int32", True, False, 16, 196),
                  ("bf16", "int32", True, False, 1, 3136)]
# (data shape, axis, idxCount): outer rank = axis.
SHAPES = [((37,), 0, 50), ((5, 9), 1, 4), ((6, 3, 4), 1, 7), ((2, 3, 5, 4), 2, 6), ((2, 3, 2, 11), 3, 13),
          ((7, 2, 3), 0, 3), ((3, 1, 5), 1, 2), ((2, 2, 3, 17), 3, 1)]


@register
class GatherElementsCases(Function):
    name = "gather_elements"
    family = "gather"
    symbols = ("SimdSynetGatherElementsInit", "SimdSynetGatherElementsSetIndex",
               "SimdSynetGatherElementsForward")

    fields = (F("dtype", "name"), F("index", "name"), F("shape", "dims"), F("axis", "int"), F("idx_count", "int"),
              F("const", "bool"), F("negative", "bool"), F("replicated", "bool", False))
    #: An index is inside the domain only in [-n, n) for an axis of n elements: the int32 extremes need an axis of
    #: 2^31 elements (the int64 ones 2^63), more than a case can allocate, and elsewhere the contract leaves the read
    #: undefined. The wrapper refuses them (tests/gather/test_gather.py), the bundled kernel writes 0 there
    #: (tests/gather/test_gather_kernel.py): argument checks, not conformance cases.
    outside_domain = {"indices": dict.fromkeys(
        ("min", "max"), "an index out of [-n, n) for every axis a case can allocate; refused by the wrapper, tested "
                        "in tests/gather")}

    def grid(self) -> Iterable[Case]:
        for i, (data, index, const, negative, batch, outer) in enumerate(UPSTREAM_TABLE):
            profiles = ("smoke", "ci", "full") if i == 4 else (("ci", "full") if i in (0, 3, 6) else ("full",))
            yield self._case(data, index, (batch, outer, 49), 2, 196, const, negative, True, profiles)
        for s, (shape, axis, count) in enumerate(SHAPES):
            for data in DATA_TYPES:
                for index in INDEX_TYPES:
                    for const in (False, True):
                        for negative in (False, True):
                            on_ci = (s + DATA_TYPES.index(data) + INDEX_TYPES.index(index) + const + negative) % 3 == 0
                            yield self._case(data, index, shape, axis, count, const, negative, False,
                                             ("ci", "full") if on_ci else ("full",))
        for data in DATA_TYPES:  # a constant index repeated across the outer dimensions
            yield self._case(data, "int32", (4, 3, 10, 2), 2, 5, True, False, True, ("ci", "full"))
            yield self._case(data, "int64", (4, 3, 10, 2), 2, 5, True, True, True, ("ci", "full"))

    def space(self) -> SearchStrategy[Case]:
        """Every data x index type, ranks 1..4 with the axis anywhere, any index count, constant or per-call,
        negative indices, a slice repeated over the outer dimensions."""
        from hypothesis import strategies as st

        @st.composite
        def draw(draw: DrawFn) -> Case:
            shape = tuple(draw(st.lists(st.integers(1, 12), min_size=1, max_size=4)))
            return self._case(draw(st.sampled_from(DATA_TYPES)), draw(st.sampled_from(INDEX_TYPES)), shape,
                              draw(st.integers(0, len(shape) - 1)), draw(st.integers(1, 24)), draw(st.booleans()),
                              draw(st.booleans()), draw(st.booleans()), ())
        return draw()

    def _case(self, data: str, index: str, shape: Iterable[int], axis: int, count: int, const: bool, negative: bool,
              replicated: bool, profiles: tuple[str, ...]) -> Case:
        params = {"index": index, "shape": tuple(shape), "axis": axis, "idx_count": count, "const": const,
                  "negative": negative, "replicated": replicated}
        return self.case(params, dtype=data, profiles=profiles)

    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        p = case.params
        shape, axis = p["shape"], p["axis"]
        n = shape[axis]
        index_shape = list(shape)
        index_shape[axis] = p["idx_count"]
        low = -n if p["negative"] else 0
        if p["replicated"]:  # one slice over the last axes, repeated over the first
            one = rng.integers(low, n, index_shape[1:])
            idx = np.broadcast_to(one, index_shape).copy()
        else:
            idx = rng.integers(low, n, index_shape)
        datas = []
        for _ in range(2):
            if case.dtype == "float32":
                values = rng.uniform(-10, 10, shape).astype(np.float32)
                values.ravel()[::11] = np.array([0x7FC01234], np.uint32).view(np.float32)[0]  # NaN payload
            elif case.dtype == "uint8":
                values = rng.integers(0, 256, shape).astype(np.uint8)
            else:
                values = rng.integers(0, 2**16, shape).astype(np.uint16)
                if sum(shape) % 2:
                    try:
                        import ml_dtypes

                        values = values.view(ml_dtypes.bfloat16)
                    except ImportError:
                        pass
            datas.append(values)
        return {"data": datas, "indices": idx.astype(p["index"])}

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
        p = case.params
        data, idx = inputs["data"], inputs["indices"]
        if p["const"]:
            with simdbind.GatherElements(data[0].dtype, idx.dtype, data[0].shape, idx.shape, p["axis"], index=idx,
                                         library=library) as context:
                return tuple(self._bits(context.forward(d, out=self.output(inputs, idx.shape, d.dtype)))
                             for d in data)
        return tuple(self._bits(simdbind.gather_elements(d, idx, p["axis"], out=self.output(inputs, idx.shape, d.dtype),
                                                         library=library)) for d in data)

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        """The outputs (and a constant index's context) made once; each call gathers from both data arrays."""
        data, idx, axis = inputs["data"], inputs["indices"], case.params["axis"]
        pairs = [(d, self.output(inputs, idx.shape, d.dtype)) for d in data]
        if not case.params["const"]:
            return lambda: tuple(simdbind.gather_elements(d, idx, axis, out=out, library=library) for d, out in pairs)
        context = simdbind.GatherElements(data[0].dtype, idx.dtype, data[0].shape, idx.shape, axis, index=idx,
                                          library=library)
        return lambda: tuple(context.forward(d, out=out) for d, out in pairs)

    def reference(self, case: Case, inputs: dict[str, Any]) -> tuple[np.ndarray, ...]:
        return tuple(self._bits(reference.gather_elements(d, inputs["indices"], case.params["axis"]))
                     for d in inputs["data"])

    @staticmethod
    def _bits(array: np.ndarray) -> np.ndarray:
        """Compare bit patterns (NaN payloads and bf16 included)."""
        return array.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[array.dtype.itemsize])

    def tolerance(self, case: Case) -> Tolerance:
        return Tolerance(exact=True, why="elements are copied bit for bit")


# -- benchmark cases: what `simdbind bench` times, and the work of a call of every case of the family ------------------
BENCH_NOTE = """GatherElements throughput in GB/s: per data array, the gathered elements read, the indices read and the output
written (each case gathers from two data arrays, as the conformance case does). Upstream's attention-like shape
and a wide inner dimension, the index constant (a context made once) or passed to every call."""

_SHAPES = ("shape=16x196x49 axis=2 idx_count=196", "shape=8x512x256 axis=1 idx_count=512")
DESCRIPTORS = [f"gather_elements dtype=float32 index=int64 {shape} const={const} negative=false"
               for shape in _SHAPES for const in ("true", "false")]
QUICK = DESCRIPTORS[:2]


def work(case: Case) -> Work:
    p = case.params
    shape = list(p["shape"])
    shape[p["axis"]] = p["idx_count"]
    count = elements(shape)
    return Work("GB/s", 2.0 * count * (2 * itemsize(case) + ITEMSIZE[p["index"]]))
