"""The wrappers' fast paths: per-library lookups, the C extension simdbind._fastcall, and plans (what a wrapper's
checks derived from one tuple of scalar arguments, cached per library). The argument rules themselves are
simdbind._checks'; nothing here raises for a user error."""

# How to keep a wrapper fast (the overhead budget: a tiny call costs at most 1.5x the raw cffi call + 1 us; measure
# with `simdbind bench --functions overhead --timer thread`). Costs below are per operation on the 2-core EPYC
# these were measured on (Python 3.11, NumPy 2.4, cffi 2.1): every attribute, comparison or call is 25-90 ns, so
# count them.
# - The floor is not the C call but getting pointers: `ffi.from_buffer` is ~180 ns per array (with a ctype object
#   made once; ~300 ns with a string type; `ffi.cast('float *', a.ctypes.data)` ~3 us, `__array_interface__`
#   ~1 us), so three arrays through cffi cost 1.15 us before any check. eltwise and unary therefore hand their
#   arguments to the C extension simdbind._fastcall (simdbind/_fastcall.c): one call that exports the buffers
#   (PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, format "f", PyBUF_WRITABLE for out: ~60 ns each), checks exact type,
#   shapes and overlap by pointer ranges, and calls the C function by its address (`fast_address`, once per
#   library, API or ABI mode alike). Result, 16 floats, avx2, thread time: eltwise([x, y], 'sum', out=o)
#   7.2 us (the first wrapper) -> 2.4 us (Python fast path) -> 0.62 us (C fast path; raw cffi 0.30 us, np.add
#   0.55 us); unary(x, 'abs', out=o) 1.58 -> 0.43 us (raw 0.27 us); every unary op 0.43-0.48 us with out=,
#   0.72-0.80 us allocating; eltwise allocating 0.93 us, with list weights 0.66 us, three inputs 0.68 us.
# - A fast path only *accepts*: exact types (`type(x) is np.ndarray`, `Py_TYPE(x) == ndarray`), native dtypes,
#   equal shapes; it returns None ("not handled") for anything else or any doubt, and the ordinary checks then
#   raise the documented errors: no rule is weakened or reordered. Argument errors that come before the fast path
#   (the op's spelling) stay before it; the fast path needs a library in hand (given, or the default already
#   loaded), so a library that fails to load never hides an argument error.
# - Allocating the result is ~300 ns (`np.empty` called from C with a shape tuple; `np.empty_like` is ~340 ns
#   from Python). A fresh output needs no overlap or writeability check.
# - The GIL: _fastcall releases it only from 4096 elements on. Releasing costs ~0.1 us, and when another thread is
#   running Python, taking it back waits for that thread's switch interval (5 ms): a 16-float call averaged
#   308 us through raw cffi (which always releases) against 1.0 us through unary() with a Python thread spinning.
# - Without the extension (not built): look things up once per library (`library._bindings or
#   bindings(library)` gives from_buffer, NULL, the float[] ctype and cached C functions; constants in one tuple
#   in `Bindings.cache` under a str key: tuple keys hash on every call); pass `require_writable` positionally
#   (as a keyword it costs ~200 ns); one `out.flags` serves `writeable` and `owndata`; two distinct arrays that
#   both own their data cannot overlap (~80 ns per array), cdata pointer comparisons are ~60 ns each,
#   `np.may_share_memory` ~300 ns per pair; a Python list where C wants `float **` (no `ffi.new` per call).
#   softmax works this way when the extension is not built.
# - Every other wrapper (pooling, softmax, gather, the inner products, the convolution) runs a *plan* ("plans"
#   below): what its checks derived from one tuple of scalar arguments, cached per library, called through
#   `_fastcall.call` (a typed C call per function, arrays exported and checked there). Tiny inputs, thread time:
#   pooling_max 7.1 -> 1.0 us (PyTorch's max_pool2d 1.6), gather_elements 10.4 -> 1.15 (torch.gather 1.25),
#   conv2d 22.5 -> 2.0 (F.conv2d 2.3). Per hit: the typed key ~140 ns, the lookup ~110 ns (a tuple key hashes
#   on every call), the out checks ~100 ns, the C call with two arrays ~160 ns.
# - gather goes one step further (`_fastcall.gather`): the dtype and shape comparisons (30-50 ns each in Python),
#   the context's lock (`with lock`: ~100 ns) and the range check are in the one C call, and gather_elements
#   keys its cached context by a plain tuple of what it read from the arrays (plan_key's copy of the shapes is
#   not needed there). 4x4 float32 / int64 with out=: 1.12 -> 0.68 us (torch.gather 1.13 us); a context's
#   forward with a constant index 0.65 -> 0.35 us.
# - Mixed-type dict keys are slow: a dict holding both IntEnum and str keys makes `d.get("sum")` call
#   IntEnum.__eq__ on hash collisions (~110 ns vs ~50 ns for a str-only dict).

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from simdbind import library as _library
from simdbind._context import PlanCache
from simdbind.errors import FunctionNotAvailableError

# -- fast-path helpers (bench: the per-call overhead budget, see the comment at the top) ----------------------
#: Native-byte-order dtypes, compared with ``is`` on fast paths (``x.dtype is F32``); others take the full checks.
F32 = np.dtype(np.float32)


class Bindings:
    """What wrappers need from one library on every call, looked up once (see :func:`bindings`)."""

    __slots__ = ("library", "ffi", "from_buffer", "null", "f32", "functions", "cache", "plans", "plan_get")

    def __init__(self, library: Any) -> None:
        ffi = library.ffi
        self.library = library
        self.ffi = ffi
        self.from_buffer = ffi.from_buffer  # from_buffer(ctype, array[, require_writable]); positional args only
        self.null = ffi.NULL
        self.f32 = ffi.typeof("float[]")
        self.functions: dict[str, Any] = {}
        self.cache: dict[Any, Any] = {}  # wrapper-owned cdata of constant, read-only arrays
        self.plans = PlanCache()  # per parameter tuple: what the checks derived (see run_planned)
        self.plan_get = self.plans.get  # the hot path's lookup: one attribute (None keys are never stored)

    def function(self, name: str) -> Any:
        """The C function `name` (``library.function``'s errors when absent), cached."""
        fn = self.functions.get(name)
        if fn is None:
            fn = self.functions[name] = self.library.function(name)
        return fn


def bindings(library: Any) -> Bindings:
    """The :class:`Bindings` of `library`, made on first use and kept on it. Use ``library._bindings or
    bindings(library)`` on a hot path."""
    found: Bindings | None = library._bindings
    if found is None:
        found = library._bindings = Bindings(library)
        if _fastcall is not None and type(library) is _library.Library and library.has("SimdBindPinIsa"):
            _fastcall.pin_isa(c_address(library, "SimdBindPinIsa"), c_address(library, "SimdBindUnpinIsa"))
    return found


# -- C-side fast path: simdbind._fastcall, see "How to keep a wrapper fast" above ---------------------------------
def _load_fastcall() -> Any:
    try:
        from simdbind import _fastcall as module
    except ImportError:  # not built (e.g. an interpreter without C extensions): wrappers take their ordinary path
        return None
    module.init(np.ndarray, np.empty, F32)
    return module


_fastcall: Any = _load_fastcall()


def fast_address(c: Bindings, name: str, signature: str) -> int:
    """The address of C function `name` as an int for :mod:`simdbind._fastcall`, or 0 when there is no fast call
    (extension not built, function absent, or its cffi type is not `signature`). Kept in
    ``c.cache[fast_key(name)]``, so a hot path reads ``c.cache.get(KEY)`` and calls this only on a miss."""
    address = 0
    if _fastcall is not None:
        ffi = c.ffi
        try:
            fn = c.function(name)
            if not isinstance(fn, ffi.CData):  # API mode: a built-in function; ABI mode: already a pointer
                fn = ffi.addressof(c.library.lib, name)
            if ffi.typeof(fn) == ffi.typeof(signature):
                address = int(ffi.cast("uintptr_t", fn))
        except (FunctionNotAvailableError, AttributeError, TypeError, ffi.error):
            address = 0  # the ordinary path raises what applies
    c.cache[fast_key(name)] = address
    return address


def fast_key(name: str) -> str:
    """The `Bindings.cache` key of C function `name`'s fast-call address (apart from wrappers' own keys)."""
    return f"fastcall {name}"


# -- plans: checks derived from the scalar arguments, done once per parameter tuple -------------------------------
# A wrapper with a planned fast path builds `plan_key(...)` from its scalar arguments (and what it read from its
# arrays: dtype, shape) and runs the plan cached under it with `run_planned` (one-shot functions that cache a
# whole context look it up with `plan_for`; gather_elements, whose arguments are all read from exact ndarrays but
# the axis, builds its key itself: see gather.py). On a hit the plan holds everything its ordinary checks
# derived from those arguments (output shape and dtype, the C function's address, its size_t arguments packed);
# the arrays are still checked on every call (exact ndarray, dtype identity and shapes here, contiguity, planned
# byte lengths, writability and overlap in `planned_call`, i.e. simdbind._fastcall.call). Anything unplanned or
# in doubt takes the ordinary path, which raises the documented errors and, when the call was valid, stores the
# plan (`remember`). Results are the same either way: the plan is the ordinary path's own decision.

#: ``plan_key(prefix, *scalars)``: a key of plain arguments, or None (see _fastcall.c). None without the extension.
plan_key: Any = getattr(_fastcall, "key", None)
#: ``planned_call(kind, address, plan, *arrays)``: True when the C function ran, else None (nothing written).
planned_call: Any = getattr(_fastcall, "call", None)
#: ``planned_gather(plan, handle, lock, data, indices, out)``: GatherElements' whole planned call, checks and lock
#: included (see _fastcall.c); the result, else None (nothing written). None without the extension.
planned_gather: Any = getattr(_fastcall, "gather", None)
CALL = {name: getattr(_fastcall, name) for name in dir(_fastcall) if name.startswith("CALL_")}
_Library, _ndarray, _zeros = _library.Library, np.ndarray, np.zeros


def plan_for(library: Any, key: Any) -> Any:
    """The plan cached under `key` for `library` (None: the default library, if loaded), else None."""
    lib = _library._default if library is None else library
    if type(lib) is not _Library or lib._bindings is None:
        return None
    return lib._bindings.plan_get(key)


def run_planned(library: Any, key: Any, out: Any, *arrays: Any) -> Any:
    """The result of the plan (kind, address, C arguments, result shape, result dtype) cached under `key` for
    `library` (None: the default library) on the read `arrays`, written to `out` or to new zeros (an external
    library may leave elements unwritten); None when there is no plan or it does not take these arrays."""
    lib = _library._default if library is None else library
    if type(lib) is not _Library:
        return None
    c = lib._bindings
    plan = None if c is None else c.plan_get(key)
    if plan is None:
        return None
    kind, address, data, shape, dtype = plan
    result = planned_output(out, shape, dtype)
    if result is None:
        return None
    return result if planned_call(kind, address, data, *arrays, result) else None


def planned_output(out: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """The array a planned call writes: a new one, or `out` when it is an exact ndarray of the planned dtype and
    shape (anything else: None, and the ordinary path checks it)."""
    if out is None:
        return _zeros(shape, dtype)
    if type(out) is _ndarray and out.dtype is dtype and out.shape == shape:
        return out
    return None


def make_plan(library: Any, kind: str, function: str, result: np.ndarray, *values: int) -> Any:
    """The plan of a C call just made on `library` with size_t arguments `values`, for :func:`run_planned`; None
    when there is no planned call (extension not built, or a library object that is not a Library)."""
    address = c_address(library, function)
    return (CALL[kind], address, pack_plan(*values), result.shape, result.dtype) if address else None


def remember(library: Any, key: Any, plan: Any) -> None:
    """Store `plan` under `key` for `library` (a resolved Library); nothing when the key or the plan is None."""
    if key is not None and plan is not None and type(library) is _library.Library:
        (library._bindings or bindings(library)).plans.put(key, plan)


def c_address(library: Any, name: str) -> int:
    """The address of C function `name` of `library` as an int for ``planned_call`` (its type is the header's:
    both cffi modules are generated from csrc/simd_synet.h), or 0 without the extension or for an object that is
    not a Library (test doubles wrap a library's functions: they must be called through the object)."""
    if planned_call is None or type(library) is not _library.Library:
        return 0
    c = library._bindings or bindings(library)
    found = c.cache.get(name)  # keyed by the C name itself: wrappers' own keys are not C names
    if found is None:
        ffi = c.ffi
        fn = c.function(name)
        if not isinstance(fn, ffi.CData):  # API mode: a built-in function; ABI mode: already a pointer
            fn = ffi.addressof(library.lib, name)
        found = c.cache[name] = int(ffi.cast("uintptr_t", fn))
    return int(found)


def pack_plan(*values: int) -> bytes:
    """C arguments of a plan as ``planned_call`` reads them (native size_t)."""
    return struct.pack(f"{len(values)}N", *values)
