"""Elementwise and normalization functions: eltwise (and, with their family, unary, softmax, lrn, shuffle)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from simdbind._checks import F32, bindings, input_array, output_array
from simdbind.enums import EltwiseOperation, parse_enum
from simdbind.errors import ArgumentError
from simdbind import library as _library_module
from simdbind.library import Library, default_library

__all__ = ["eltwise"]

# Accepted spellings of each operation, for a dictionary lookup on the fast path (parse_enum explains failures).
_ELTWISE_OPS: dict[object, EltwiseOperation] = {
    **{m.name.lower(): m for m in EltwiseOperation}, **{int(m): m for m in EltwiseOperation}}
_ONES: dict[int, np.ndarray] = {}
# eltwise fast path (bench engineer): see "How to keep a wrapper fast" in _checks.py
_ELTWISE_NAMES: dict[str, EltwiseOperation] = {m.name.lower(): m for m in EltwiseOperation}
_ELTWISE_KEY = "eltwise"  # Bindings.cache key of the fast path's constants
_ELTWISE_FN = "SimdSynetEltwiseLayerForward"
_ndarray, _empty = np.ndarray, np.empty


def _ones(count: int) -> np.ndarray:
    """Read-only unit weights, cached per count (the C side only reads them)."""
    ones = _ONES.get(count)
    if ones is None:
        ones = _ONES.setdefault(count, np.ones(count, np.float32))
        ones.flags.writeable = False
    return ones


def eltwise(inputs: Sequence[Any], op: str | int | EltwiseOperation, weights: Any = None, out: np.ndarray | None = None,
            *, library: Library | None = None) -> np.ndarray:
    """Combine two or more float32 arrays elementwise (``SimdSynetEltwiseLayerForward``).

    Parameters
    ----------
    inputs
        Two or more float32 arrays of one shape.
    op
        ``"product"``, ``"sum"``, ``"max"`` or ``"min"`` (or :class:`EltwiseOperation`). Max and min fold from the
        first two inputs with ``a > b ? a : b`` / ``a < b ? a : b``, so a NaN in the later operand wins.
    weights
        For ``"sum"`` only: one coefficient per input (default all ones). ``dst = sum(w[i] * inputs[i])``.
    out
        Optional float32 output of the inputs' shape. It may be ``inputs[0]`` or ``inputs[1]`` itself (in place),
        but must not overlap any later input.
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new array.
    """
    operation = _ELTWISE_NAMES.get(op) if type(op) is str else None  # fast: a str-only dict (no IntEnum __eq__)
    if operation is None:
        operation = _ELTWISE_OPS.get(op) if isinstance(op, (str, int)) else None
        if operation is None:
            operation = parse_enum(EltwiseOperation, op, "op")
    # Fast path (see "How to keep a wrapper fast" in _checks.py): two exact float32 arrays of one shape, default
    # weights, no `out` or an exact one. It only accepts; anything else, or any doubt, takes the full checks below.
    if weights is None and (type(inputs) is list or type(inputs) is tuple) and len(inputs) == 2:
        a, b = inputs
        if type(a) is _ndarray and type(b) is _ndarray and a.dtype is F32 and b.dtype is F32:
            shape = a.shape
            if shape == b.shape and (out is None or (type(out) is _ndarray and out.dtype is F32
                                                     and out.shape == shape)):
                lib = library or _library_module._default or default_library()
                c = lib._bindings or bindings(lib)
                from_buffer, f32 = c.from_buffer, c.f32
                try:  # from_buffer refuses non-C-contiguous arrays (ValueError)
                    pa, pb = from_buffer(f32, a), from_buffer(f32, b)
                    if out is None:
                        result = _empty(shape, F32)
                        pd = from_buffer(f32, result)  # fresh, so writeable and apart from the inputs
                        ok = True
                    else:
                        flags = out.flags
                        ok = flags.writeable
                        if ok:
                            result, pd, n = out, from_buffer(f32, out), len(pa)
                            # out may be a or b exactly, never overlap either partially. Two distinct arrays that
                            # own their data are apart (flags, cheap); otherwise compare the equal-size ranges.
                            if not (flags.owndata and (out is a or a.flags.owndata) and (out is b or b.flags.owndata)):
                                end = pd + n
                                ok = ((pd == pa or not (pa < end and pd < pa + n))
                                      and (pd == pb or not (pb < end and pd < pb + n)))
                except ValueError:
                    ok = False
                if ok:
                    cached = c.cache.get(_ELTWISE_KEY)  # (C function, unit weights of two inputs as cdata)
                    if cached is None:
                        cached = c.cache[_ELTWISE_KEY] = (c.function(_ELTWISE_FN), from_buffer(f32, _ones(2)))
                    fn, ones = cached
                    fn([pa, pb], ones if operation == 1 else c.null, 2, len(pa), operation, pd)  # 1: SUM
                    return result
    if not isinstance(inputs, (list, tuple)):
        raise ArgumentError(f"inputs: must be a list or tuple of arrays, got {type(inputs).__name__}")
    count = len(inputs)
    if count < 2:
        raise ArgumentError(f"inputs: needs at least 2 arrays, got {count}")
    arrays = [input_array(x, f"inputs[{i}]", np.float32) for i, x in enumerate(inputs)]
    shape = arrays[0].shape
    for i, array in enumerate(arrays[1:], 1):
        if array.shape != shape:
            raise ArgumentError(f"inputs[{i}]: must have the shape of inputs[0] {shape}, got {array.shape}")
    if operation == EltwiseOperation.SUM:
        weight = _ones(count) if weights is None else input_array(weights, "weights", np.float32)
        if weight.shape != (count,):
            raise ArgumentError(f"weights: must have one value per input, shape ({count},), got {weight.shape}")
    elif weights is not None:
        raise ArgumentError(f"weights: only allowed with op='sum', not op={operation.name.lower()!r}")
    else:
        weight = None
    # out may be inputs[0] or inputs[1] exactly (elementwise in place is safe), never any other overlap.
    out = output_array(out, "out", shape, np.float32, arrays[2:])

    library = library or default_library()
    ffi = library.ffi
    buffers = [ffi.from_buffer("float[]", a) for a in arrays]
    dst = ffi.from_buffer("float[]", out, require_writable=True)
    for i in (0, 1):
        if buffers[i] != dst and np.may_share_memory(out, arrays[i]):
            raise ArgumentError(f"out: overlaps inputs[{i}] partially (only exact in-place use is allowed)")
    weight_ptr = ffi.NULL if weight is None else ffi.from_buffer("float[]", weight)
    library.function("SimdSynetEltwiseLayerForward")(
        ffi.new("float *[]", buffers), weight_ptr, count, out.size, operation, dst)
    return out
