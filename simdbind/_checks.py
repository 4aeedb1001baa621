"""Argument checks shared by every wrapper. Each raises before any C code runs, naming the argument and the rule."""

# How to keep a wrapper fast (the budget: a tiny call costs at most 1.5x the raw cffi call + 1 us; measured by
# `simdbind bench --functions overhead`). Numbers are for 16 floats on this project's CI-class CPU.
# - Add a fast path for the common case and fall back to the full checks for everything else. The fast path
#   only *accepts*: it tests exact types (`type(x) is np.ndarray`, `x.dtype is F32`, shapes equal) and, on any
#   doubt, runs the ordinary code, which raises the documented errors. So no rule is weakened or reordered.
# - Let cffi check what it already checks: `from_buffer(ctype, a)` raises ValueError for a non-C-contiguous
#   array, `from_buffer(ctype, out, True)` also for a read-only one; catch that and take the ordinary path.
#   This saves the `.flags` lookups (~70 ns each).
# - Pointers: `ffi.from_buffer` with a ctype object made once (`bindings(library).f32`), ~200 ns. Never
#   `ffi.cast('float *', a.ctypes.data)` (~3 us: `.ctypes` builds an object) or `__array_interface__`.
#   Pass `require_writable` positionally: as a keyword it costs ~200 ns more in cffi.
# - Pass a Python list where C wants `float **` (cffi builds the array on the stack); no `ffi.new` per call.
# - Overlap of equally sized contiguous buffers: compare the cdata pointers (`p != q`, `q < p + n`), ~60 ns,
#   instead of `np.may_share_memory` (~300 ns each); skip the check when `out` is a fresh array.
# - Look up per library once: `bindings(library)` caches from_buffer, NULL, ctypes and C functions on the
#   Library object; `library.function(name)` is a method call + dict lookup each time.
# - Read-only constant arguments (default weights) become cdata once and are reused (`bindings(...).cache`).
# - Pass plain ints for enums when you have them; avoid f-strings, `np.dtype(...)` and `isinstance` chains on the
#   hot path (build error messages only when raising).

from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from simdbind.errors import ArgumentError, DTypeError


def input_array(value: Any, name: str, dtype: np.dtype | type) -> np.ndarray:
    """`value` as a C-contiguous array of exactly `dtype`.

    Non-array values (lists, scalars) are converted to `dtype`; arrays of another dtype are refused rather than
    cast, because a silent cast changes results. Non-contiguous arrays are copied (inputs are only read).
    """
    if type(value) is np.ndarray and value.dtype == dtype and value.flags.c_contiguous:
        return value
    dtype = np.dtype(dtype)
    if not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value, dtype=dtype)
        except (TypeError, ValueError) as error:
            raise DTypeError(f"{name}: must be an array of {dtype}, got {type(value).__name__} ({error})") from None
    elif value.dtype != dtype:
        raise DTypeError(f"{name}: must have dtype {dtype}, got {value.dtype}")
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return value


def output_array(out: Any, name: str, shape: tuple[int, ...], dtype: np.dtype | type,
                 inputs: Sequence[np.ndarray] = ()) -> np.ndarray:
    """A ready output: a new array, or `out` checked for dtype, shape, contiguity, writability and overlap.

    `inputs` lists arrays that `out` must not overlap (the C code would read what it already wrote).
    """
    if out is None:
        return np.empty(shape, dtype)
    dtype = np.dtype(dtype)
    if not isinstance(out, np.ndarray):
        raise ArgumentError(f"{name}: must be a numpy.ndarray, got {type(out).__name__}")
    if out.dtype != dtype:
        raise DTypeError(f"{name}: must have dtype {dtype}, got {out.dtype}")
    if out.shape != tuple(shape):
        raise ArgumentError(f"{name}: must have shape {tuple(shape)}, got {out.shape}")
    if not out.flags.c_contiguous:
        raise ArgumentError(f"{name}: must be C-contiguous (results are written in place)")
    if not out.flags.writeable:
        raise ArgumentError(f"{name}: must be writeable")
    for other in inputs:
        if np.may_share_memory(out, other):
            raise ArgumentError(f"{name}: must not overlap an input that is read after {name} is written")
    return out


def size_arg(value: Any, name: str, *, minimum: int = 0) -> int:
    """An integer argument (Python or NumPy int, not bool or float) that is at least `minimum`."""
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name}: must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ArgumentError(f"{name}: must be an integer, got {value!r}") from None
    if number < minimum:
        raise ArgumentError(f"{name}: must be >= {minimum}, got {number}")
    return number


# -- fast-path helpers (bench: the per-call overhead budget, see the comment at the top) ----------------------
#: Native-byte-order dtypes, compared with ``is`` on fast paths (``x.dtype is F32``); others take the full checks.
F32 = np.dtype(np.float32)


class Bindings:
    """What wrappers need from one library on every call, looked up once (see :func:`bindings`)."""

    __slots__ = ("library", "ffi", "from_buffer", "null", "f32", "functions", "cache")

    def __init__(self, library: Any) -> None:
        ffi = library.ffi
        self.library = library
        self.ffi = ffi
        self.from_buffer = ffi.from_buffer  # from_buffer(ctype, array[, require_writable]); positional args only
        self.null = ffi.NULL
        self.f32 = ffi.typeof("float[]")
        self.functions: dict[str, Any] = {}
        self.cache: dict[Any, Any] = {}  # wrapper-owned cdata of constant, read-only arrays

    def function(self, name: str) -> Any:
        """The C function `name` (``library.function``'s errors when absent), cached."""
        fn = self.functions.get(name)
        if fn is None:
            fn = self.functions[name] = self.library.function(name)
        return fn


def bindings(library: Any) -> Bindings:
    """The :class:`Bindings` of `library`, made on first use and kept on it. Use ``library._bindings or
    bindings(library)`` on a hot path."""
    found = library._bindings
    if found is None:
        found = library._bindings = Bindings(library)
    return found
