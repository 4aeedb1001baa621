"""Argument checks shared by every wrapper. Each raises before any C code runs, naming the argument and the rule."""

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
