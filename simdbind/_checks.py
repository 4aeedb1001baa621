"""Argument checks shared by every wrapper. Each raises before any C code runs, naming the argument and the rule."""

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

import math
import operator
import os
import struct
from typing import Any, Iterable, cast

import numpy as np
import numpy.typing as npt

from simdbind import library as _library
from simdbind._context import PlanCache
from simdbind.enums import TensorFormat, did_you_mean
from simdbind.errors import ArgumentError, DTypeError, FunctionNotAvailableError, LibraryError

# -- the argument vocabulary ------------------------------------------------------------------------------------
# Every wrapper checks its arguments with these functions, so that each rule lives here once: sizes, flags, float
# parameters, layouts, pads, dtypes (with byte order), input arrays, `out` and its overlap with every array that is
# read, and the library argument. Each raises a SimdBindError naming the argument and the rule.

#: A float32 array, as the wrappers take and return it.
FloatArray = npt.NDArray[np.float32]

#: Largest size, count or geometry value accepted: the largest ssize_t, so that no arithmetic on it overflows
#: size_t in C and NumPy never raises OverflowError.
MAX_SIZE = 2 ** 63 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def size_arg(value: Any, name: str, *, minimum: int = 0, maximum: int | None = MAX_SIZE) -> int:
    """An integer argument (Python or NumPy int, not bool or float) in ``[minimum, maximum]`` (``maximum=None``:
    unbounded, for a value the wrapper clamps before C sees it)."""
    if type(value) is int and minimum <= value and (maximum is None or value <= maximum):
        return value  # the common case, at a third of the cost (a bool's type is not int)
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name}: must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise ArgumentError(f"{name}: must be an integer, got {value!r}") from None
    if number < minimum:
        raise ArgumentError(f"{name}: must be >= {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ArgumentError(f"{name}: must be <= {maximum}, got {number}")
    return number


def flag(value: Any, name: str) -> bool:
    """A bool argument (Python or NumPy bool; not an int, which usually means a misplaced positional argument)."""
    if value is True or value is False:
        return value
    if not isinstance(value, np.bool_):
        raise ArgumentError(f"{name}: must be a bool, got {value!r}")
    return bool(value)


def real(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """A float parameter: a real number (not bool), finite (infinities only where `allow_inf`), NaN never, and
    within float32's range, since the C side reads it as a float (docs/guide/python-api.md, "Arguments")."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ArgumentError(f"{name}: must be a real number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ArgumentError(f"{name}: must fit in float32 (|value| <= {_FLOAT32_MAX:.6g}), got {value!r}") from None
    if math.isnan(number) or (math.isinf(number) and not allow_inf):
        rule = "must not be NaN" if allow_inf else "must be finite"
        raise ArgumentError(f"{name}: {rule}, got {number!r}")
    if math.isfinite(number) and abs(number) > _FLOAT32_MAX:
        raise ArgumentError(f"{name}: must fit in float32 (|value| <= {_FLOAT32_MAX:.6g}), got {number!r}")
    return number


def finite_array(array: np.ndarray, name: str) -> np.ndarray:
    """`array` (float parameters, e.g. lrn's k or prelu slopes) when every value is finite (:func:`real`'s rule)."""
    if array.size <= 8:  # a few coefficients: Python's isfinite is cheaper than two ufunc calls
        finite = all(map(math.isfinite, (array if array.ndim == 1 else array.reshape(-1)).tolist()))
    else:
        finite = bool(np.isfinite(array).all())
    if not finite:
        raise ArgumentError(f"{name}: every value must be finite, got {array[~np.isfinite(array)].flat[0]!r}")
    return array


_LAYOUTS = {"nchw": TensorFormat.NCHW, "nhwc": TensorFormat.NHWC}
#: The name of each layout, as the wrappers that work with strings use it.
LAYOUT_NAMES = {TensorFormat.NCHW: "nchw", TensorFormat.NHWC: "nhwc"}


def layout(value: Any, name: str = "layout") -> TensorFormat:
    """A tensor layout: :class:`TensorFormat` or the string ``"nchw"``/``"nhwc"`` in any case."""
    found = _LAYOUTS.get(value) if type(value) is str else None  # the common spelling, in one lookup
    if found is not None:
        return found
    if isinstance(value, TensorFormat):
        return value
    if isinstance(value, str):
        found = _LAYOUTS.get(value.strip().lower())
        if found is not None:
            return found
    raise ArgumentError(f"{name}: must be 'nchw', 'nhwc' or a TensorFormat, got {value!r}"
                        f"{did_you_mean(value, list(_LAYOUTS))}")


def yx_pair(value: Any, name: str, minimum: int) -> tuple[int, int]:
    """A geometry argument (kernel, stride, ...): an int for both axes, or a (y, x) pair of ints, each >= minimum."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ArgumentError(f"{name}: must be an int or a (y, x) pair, got {value!r}")
        return (size_arg(value[0], f"{name}[0]", minimum=minimum), size_arg(value[1], f"{name}[1]", minimum=minimum))
    number = size_arg(value, name, minimum=minimum)
    return number, number


def begin_end(value: Any, name: str) -> tuple[int, int]:
    """The pads of one axis: an int (both sides) or a (begin, end) pair of ints >= 0."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ArgumentError(f"{name}: must be an int or a (begin, end) pair, got {value!r}")
        return (size_arg(value[0], f"{name}[0]"), size_arg(value[1], f"{name}[1]"))
    number = size_arg(value, name)
    return number, number


#: Every accepted spelling of 2D pads (see :func:`pads`).
Pads = int | tuple[int, int] | tuple[tuple[int, int], tuple[int, int]] | tuple[int, int, int, int]


def pads(value: Any, name: str = "pad") -> tuple[tuple[int, int], tuple[int, int]]:
    """``((top, bottom), (left, right))`` from any accepted spelling of 2D pads: ``p``; ``(py, px)``;
    ``((top, bottom), (left, right))``; or ONNX's ``(top, left, bottom, right)``. Every pad is an int >= 0."""
    if isinstance(value, (tuple, list)):
        if len(value) == 4 and not any(isinstance(v, (tuple, list)) for v in value):
            top, left, bottom, right = (size_arg(v, f"{name}[{i}]") for i, v in enumerate(value))
            return (top, bottom), (left, right)
        if len(value) == 2:
            return begin_end(value[0], f"{name}[0]"), begin_end(value[1], f"{name}[1]")
        raise ArgumentError(f"{name}: must be an int, (y, x), ((top, bottom), (left, right)) or "
                            f"(top, left, bottom, right), got {value!r}")
    number = size_arg(value, name)
    return (number, number), (number, number)


def native(dtype: np.dtype, name: str) -> np.dtype:
    """`dtype` when its byte order is the machine's: C reads the bytes as they lie, so a swapped array would be
    computed on garbage."""
    if not dtype.isnative:
        raise DTypeError(f"{name}: must be in native byte order, got {dtype.str} (use array.astype(array.dtype."
                         "newbyteorder('=')))")
    return dtype


def is_bf16(dtype: np.dtype) -> bool:
    """Whether `dtype` carries bfloat16: ``ml_dtypes.bfloat16`` or raw ``uint16`` bit patterns (any byte order:
    :func:`native` refuses the swapped ones)."""
    return dtype.itemsize == 2 and (dtype.name == "bfloat16" or dtype.kind == "u")


def plain_array(value: np.ndarray, name: str) -> np.ndarray:
    """`value`, an ndarray, as an exact numpy.ndarray viewing the same memory: the C functions read the buffer, so an
    ndarray subclass is taken only where its buffer is all of its data. A masked array (the buffer holds the masked
    elements too, and the mask would be ignored) and a subclass with its own ``__array__`` (its data is what that
    returns, not the buffer) are refused with a DTypeError naming the argument."""
    if type(value) is np.ndarray:
        return value
    if isinstance(value, np.ma.MaskedArray):
        raise DTypeError(f"{name}: must be a numpy.ndarray, not a masked array (C would use the data under the mask "
                         f"and ignore the mask): pass np.ma.filled({name}, value) if that is what is meant")
    if type(value).__array__ is not np.ndarray.__array__:
        raise DTypeError(f"{name}: must be a numpy.ndarray, got {type(value).__name__}, an ndarray subclass with "
                         f"its own __array__ (C would read its buffer, not that): pass np.array({name}.__array__())")
    return value.view(np.ndarray)


def ndarray_arg(value: Any, name: str) -> np.ndarray:
    """`value` when it is a numpy.ndarray (an argument that C writes, or that must already be an array; lists are
    refused with an ArgumentError), as :func:`plain_array` takes it."""
    if not isinstance(value, np.ndarray):
        raise ArgumentError(f"{name}: must be a numpy.ndarray, got {type(value).__name__}")
    return plain_array(value, name)


def converted(value: Any, name: str, dtype: npt.DTypeLike | None = None) -> np.ndarray:
    """`value` (a list, a scalar, an object with ``__array__``, or a plain ndarray that the caller lets be cast) as an
    ndarray (of `dtype`). A value that `dtype` cannot hold is a DTypeError naming the argument, not NumPy's "overflow
    encountered in cast" warning and an infinity in its place; so are ragged and non-numeric lists."""
    target = None if dtype is None else np.dtype(dtype)
    try:
        with np.errstate(over="raise", invalid="raise"):
            array = np.asarray(value, dtype=target)
    except FloatingPointError:
        limit = f" (|value| <= {np.finfo(target).max:.6g})" if target is not None and target.kind == "f" else ""
        raise DTypeError(f"{name}: every value must fit in {target}{limit}, and one of the {type(value).__name__}'s "
                         "does not") from None
    except (TypeError, ValueError, OverflowError) as error:
        wanted = "an array" if target is None else f"an array of {target}"
        raise DTypeError(f"{name}: must be {wanted}, got {type(value).__name__} ({error})") from None
    return array


def any_array(value: Any, name: str) -> np.ndarray:
    """`value` as a C-contiguous ndarray of native byte order, any dtype (the caller checks which)."""
    if isinstance(value, np.ndarray):
        value = plain_array(value, name)
    else:
        value = converted(value, name)
        if value.dtype == object:
            raise DTypeError(f"{name}: must be an array of numbers, got {type(value).__name__} of objects")
    native(value.dtype, name)
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return cast(np.ndarray, value)


def input_array(value: Any, name: str, dtype: npt.DTypeLike) -> np.ndarray:
    """`value` as a C-contiguous array of exactly `dtype` (native byte order).

    Non-array values (lists, scalars) are converted to `dtype` (:func:`converted`: a value that does not fit is an
    error); arrays of another dtype are refused rather than cast, because a silent cast changes results, and so are
    the ndarray subclasses of :func:`plain_array`. Non-contiguous arrays are copied (inputs are only read).
    """
    if type(value) is np.ndarray and value.dtype == dtype and value.flags.c_contiguous:
        return value
    dtype = np.dtype(dtype)
    if not isinstance(value, np.ndarray):
        value = converted(value, name, dtype)
    else:
        value = plain_array(value, name)
        native(value.dtype, name)
        if value.dtype != dtype:
            raise DTypeError(f"{name}: must have dtype {dtype}, got {value.dtype}")
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return cast(np.ndarray, value)


def output_array(out: Any, name: str, shape: tuple[int, ...], dtype: npt.DTypeLike,
                 reads: Iterable[tuple[str, np.ndarray | None]] = ()) -> np.ndarray:
    """A ready output: a new array, or `out` checked for dtype, shape, contiguity, writability and overlap.

    `reads` names every array the call reads (data inputs, weights, bias, coefficients, indices...): `out` must
    overlap none of them, since C would read what it already wrote. Exact in-place use, where a function allows
    it, is checked by the caller before.
    """
    if out is None:
        return np.empty(shape, dtype)
    dtype = np.dtype(dtype)
    ndarray_arg(out, name)  # refuses a masked `out` too: its mask would not follow what C writes
    native(out.dtype, name)
    if out.dtype != dtype:
        raise DTypeError(f"{name}: must have dtype {dtype}, got {out.dtype}")
    if out.shape != tuple(shape):
        raise ArgumentError(f"{name}: must have shape {tuple(shape)}, got {out.shape}")
    if not out.flags.c_contiguous:
        raise ArgumentError(f"{name}: must be C-contiguous (results are written in place)")
    if not out.flags.writeable:
        raise ArgumentError(f"{name}: must be writeable")
    refuse_overlap(out, name, reads)
    return cast(np.ndarray, out)  # the caller's object (a plain subclass stays what it is)


def refuse_overlap(out: np.ndarray, name: str, reads: Iterable[tuple[str, Any]]) -> None:
    """Refuse `out` when it overlaps one of the named arrays of `reads` (others, e.g. None or lists, cannot)."""
    owner = out.base is None
    for other_name, other in reads:
        if owner and other is not out and type(other) is np.ndarray and other.base is None:
            continue  # two distinct arrays that own their memory cannot overlap (a third of may_share_memory's cost)
        if isinstance(other, np.ndarray) and np.may_share_memory(out, other):
            raise ArgumentError(f"{name}: must not overlap {other_name}, which is read while {name} is written")


def library_arg(library: Any) -> Any:
    """The library to call: `library`, or the default one when None. A name or path (``"bundled"``,
    ``"libSimd.so"``) is refused rather than loaded again on every call: load it once with :func:`simdbind.load`."""
    if library is None:
        return _library._default or _library.default_library()
    if type(library) is _library.Library:
        return library
    if isinstance(library, (str, bytes, os.PathLike)) or not hasattr(library, "function"):
        raise ArgumentError(f"library: must be a simdbind.Library or None, got {type(library).__name__} "
                            f"{library!r} (load it once: simdbind.load({library!r}), and pass the result)")
    return library


#: Elements above which a buffer size reported by a library is taken as a defect, not allocated: 2**40 floats
#: (4 TiB). No real Synet buffer comes near it; a broken library's size_t garbage does.
ABSURD_BUFFER = 1 << 40


def reported_size(value: int, function: str, library: Any) -> int:
    """A buffer size that `function` of `library` reported, refused (LibraryError) when absurd."""
    value = int(value)
    if value >= ABSURD_BUFFER:
        raise LibraryError(f"{function} of {getattr(library, 'path', library)} reported {value} elements: not a "
                           f"real buffer size (limit {ABSURD_BUFFER}); the library misbehaves")
    return value


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
