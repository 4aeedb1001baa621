"""The raw cffi call as an implementation: the C function called with cdata built once from the case's arrays, the
floor under a Pythonic call's time (``simdbind bench --functions overhead``). Only the functions that are one C
call with arrays and scalars (eltwise, unary) have one."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import simdbind
from simdbind.conformance.implementations import LibraryImplementation
from simdbind.conformance.model import Case


class RawCffi:
    """`library`'s C function called directly, its cdata made once (the row ``<library> raw cffi``)."""

    LABEL = "raw cffi"

    def __init__(self, library: LibraryImplementation) -> None:
        self.base = library
        self.name = f"{library.name} {self.LABEL}"
        self.isa = library.isa

    def unsupported(self, function: str, case: Case) -> str | None:
        if function not in ("eltwise", "unary"):
            return f"no raw cffi call for {function}"
        return self.base.unsupported(function, case)

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        return self.prepare(function, case, inputs)()

    def prepare(self, function: str, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        library = self.base.library
        ffi = library.ffi
        floats = ffi.typeof("float[]")
        if function == "unary":
            unary = library.function("SimdSynetUnaryOperation32f")
            x = inputs["x"]
            out: np.ndarray = np.empty_like(x)
            src, dst = ffi.from_buffer(floats, x), ffi.from_buffer(floats, out, True)
            size, code = x.size, int(simdbind.UnaryOperation[case.params["op"].upper()])

            def call_unary() -> np.ndarray:
                unary(src, size, code, dst)
                return out

            return call_unary
        eltwise = library.function("SimdSynetEltwiseLayerForward")
        arrays = inputs["arrays"]
        result: np.ndarray = np.empty_like(arrays[0])
        keep = [ffi.from_buffer(floats, a) for a in arrays]
        sources = ffi.new("float *[]", keep)
        weights = ffi.NULL if inputs["weights"] is None else ffi.from_buffer(floats, inputs["weights"])
        dst = ffi.from_buffer(floats, result, True)
        count, size, op = len(arrays), result.size, int(simdbind.EltwiseOperation[case.params["op"].upper()])

        def call_eltwise() -> np.ndarray:
            eltwise(sources, weights, count, size, op, dst)
            return result

        call_eltwise.keep = keep  # type: ignore[attr-defined]  # the sources' cdata live as long as the call
        return call_eltwise
