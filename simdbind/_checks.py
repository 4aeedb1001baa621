"""Argument checks shared by every wrapper. Each raises before any C code runs, naming the argument and the rule."""

from __future__ import annotations

import math
import operator
import os
from typing import Any, Iterable, cast

import numpy as np
import numpy.typing as npt

from simdbind import library as _library
from simdbind.enums import TensorFormat, did_you_mean
from simdbind.errors import ArgumentError, DTypeError, LibraryError

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
