"""GatherElements (ONNX semantics) through the ``SimdSynetGatherElements*`` context.

``out[..., j, ...] = data[..., indices[..., j, ...], ...]`` along `axis`, every other dimension equal between
data and indices. The C side sees ``outer = data.shape[:axis]``, ``srcCount = data.shape[axis]``,
``inner = prod(data.shape[axis + 1:])`` and ``idxCount = indices.shape[axis]``.

Upstream reads out of bounds for indices outside ``[-srcCount, srcCount)`` and needs the index pointer on every
Forward even after SetIndex; both are handled here: indices are range-checked before C runs, and a constant index
is copied once (read-only), kept alive by the context and passed to every Forward.
"""

from __future__ import annotations

import math

from typing import Any, Sequence, cast

import numpy as np

from simdbind import library as _library
from simdbind._checks import input_array, is_bf16, library_arg, native, ndarray_arg, output_array, size_arg
from simdbind._fastpath import c_address, pack_plan, planned_gather, remember
from simdbind._context import NativeContext
from simdbind.enums import TensorData
from simdbind.errors import ArgumentError, DTypeError, SimdBindError
from simdbind.library import Library, check_memory

__all__ = ["GatherElements", "gather_elements"]

_INDEX_TYPES = {np.dtype(np.int32): TensorData.INT32, np.dtype(np.int64): TensorData.INT64}
_ndarray, _Library = np.ndarray, _library.Library
#: First item of gather_elements' plan cache keys: no other wrapper's key can equal one of them.
_KEY = object()


def _data_kind(dtype: Any, name: str) -> tuple[str, TensorData]:
    """'float32' | 'uint8' | 'bf16' and its SimdTensorDataType, from a dtype (bf16: ml_dtypes.bfloat16 or uint16)."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        if isinstance(dtype, str) and dtype.lower() in ("bf16", "bfloat16"):
            return "bf16", TensorData.BFLOAT16
        raise DTypeError(f"{name}: must be float32, uint8 or bf16 (ml_dtypes.bfloat16 or uint16), "
                         f"got {dtype!r}") from None
    native(dtype, name)
    if dtype == np.float32:
        return "float32", TensorData.FLOAT32
    if dtype == np.uint8:
        return "uint8", TensorData.UINT8
    if is_bf16(dtype):
        return "bf16", TensorData.BFLOAT16
    raise DTypeError(f"{name}: must be float32, uint8 or bf16 (ml_dtypes.bfloat16 or uint16), got {dtype}")


def _index_type(value: Any, name: str) -> np.dtype[Any]:
    try:
        dtype: np.dtype[Any] = np.dtype(value)
    except TypeError:
        raise DTypeError(f"{name}: must be int32 or int64, got {value!r}") from None
    native(dtype, name)
    if dtype not in _INDEX_TYPES:
        raise DTypeError(f"{name}: must be int32 or int64, got {dtype}")
    return dtype


def _shape(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)):
        raise ArgumentError(f"{name}: must be a tuple of ints, got {value!r}")
    return tuple(size_arg(v, f"{name}[{i}]") for i, v in enumerate(value))


class GatherElements(NativeContext):
    """A GatherElements context for fixed dtypes and shapes (``SimdSynetGatherElementsInit``).

    Parameters
    ----------
    data_dtype
        float32, uint8, or bf16 (``ml_dtypes.bfloat16``, ``uint16`` or the string ``"bf16"``).
    index_dtype
        int32 or int64.
    data_shape, index_shape
        Shapes of data and indices; equal except along `axis` (rank >= 1).
    axis
        The gather axis (negative counts from the end).
    index
        Optional constant index of `index_shape`: validated, copied (read-only) and analysed once
        (``SetIndex``); every call then uses it, and Forward still receives it, as upstream's interface requires.
    library
        The Simd library (default: :func:`simdbind.default_library`).

    Raises
    ------
    DTypeError
        An unsupported data or index dtype, or a constant `index` of another dtype.
    ArgumentError
        Shapes of different ranks or that differ outside `axis`, an `axis` out of range, or a constant `index` of
        the wrong shape or with an index outside ``[-n, n)``.
    FunctionNotAvailableError
        The library lacks GatherElements (it appeared in v7.0.160).
    SimdBindError
        The library's Init refused the dtype pair (returned NULL).

    See Also
    --------
    gather_elements : the one-shot function.

    Notes
    -----
    Calls are serialised by a lock, so one context may be shared by threads. Use ``close()`` or ``with`` to
    release the C context early; otherwise it is released when the object is collected. A context cannot be
    copied or pickled (:class:`~simdbind.errors.ContextCopyError`): create another one instead.

    A constant index is read once: the bundled library keeps it as positions along the axis (1, 2 or 4 bytes each,
    by the axis's size; :attr:`internal_buffer_size`), so a call reads a quarter or an eighth of the index bytes and
    checks nothing again.

    Examples
    --------
    >>> data = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    >>> index = np.array([[2, 0], [-1, 1]], np.int64)
    >>> with simdbind.GatherElements(np.float32, np.int64, data.shape, index.shape, axis=1, index=index) as gather:
    ...     gather(data)                                     # the constant index, reused by every call
    array([[3., 1.],
           [6., 5.]], dtype=float32)
    """

    def __init__(self, data_dtype: Any, index_dtype: Any, data_shape: Sequence[int], index_shape: Sequence[int],
                 axis: int, *, index: Any = None, library: Library | None = None) -> None:
        self.data_kind, data_type = _data_kind(data_dtype, "data_dtype")
        self.index_dtype = _index_type(index_dtype, "index_dtype")
        self.data_shape = _shape(data_shape, "data_shape")
        self.index_shape = _shape(index_shape, "index_shape")
        rank = len(self.data_shape)
        if rank < 1:
            raise ArgumentError("data_shape: must have at least one dimension")
        if len(self.index_shape) != rank:
            raise ArgumentError(f"index_shape: must have the rank of data_shape ({rank}), got {self.index_shape}")
        axis = size_arg(axis, "axis", minimum=-rank)
        if axis >= rank:
            raise ArgumentError(f"axis: must be in [{-rank}, {rank}), got {axis}")
        self.axis = axis % rank
        for d, (a, b) in enumerate(zip(self.data_shape, self.index_shape)):
            if d != self.axis and a != b:
                raise ArgumentError(f"index_shape: must equal data_shape {self.data_shape} except along axis "
                                    f"{self.axis}, got {self.index_shape}")
        self.outer = self.data_shape[:self.axis]
        self.src_count = self.data_shape[self.axis]
        self.inner = math.prod(self.data_shape[self.axis + 1:])
        self.idx_count = self.index_shape[self.axis]
        self._index = None if index is None else self._checked_index(index, "index", copy=True)
        self.library = library_arg(library)
        ffi = self.library.ffi
        context = self.library.function("SimdSynetGatherElementsInit")(
            int(data_type), int(_INDEX_TYPES[self.index_dtype]), self._index is not None, 1,
            ffi.new("size_t[]", list(self.outer) or [1]), len(self.outer), self.src_count, self.inner,
            self.idx_count)
        if context == ffi.NULL:
            check_memory(self.library, "SimdSynetGatherElementsInit")
            raise SimdBindError(f"SimdSynetGatherElementsInit returned NULL for data {self.data_kind}, index "
                                f"{self.index_dtype} (the library does not support this pair)")
        handle = ffi.gc(context, self.library.function("SimdRelease"))
        if self._index is not None and self._index.size:
            self.library.function("SimdSynetGatherElementsSetIndex")(handle, ffi.from_buffer("uint8_t[]", self._index))
        # The planned call (simdbind._fastcall.gather, see its comment): data of exactly this dtype object (a "bf16"
        # string names two dtypes: no plan), every array checked there on each call, under the lock. The plan
        # names the C context; forward passes the handle that keeps it alive. With a constant index the plan is for
        # that index alone (self._index, read-only, checked when copied): the per-call range check of the indices
        # (0.45 ms for 614,656 int64 ones) is left out.
        address = c_address(self.library, "SimdSynetGatherElementsForward") if planned_gather is not None else 0
        self._gather_plan = None if not address or isinstance(data_dtype, str) else (
            address, pack_plan(int(ffi.cast("uintptr_t", context)), rank, self.src_count, self.index_dtype.itemsize,
                               *self.data_shape, *self.index_shape),
            np.dtype(data_dtype), self.index_dtype, self.index_shape, self._index)
        self._own(handle, isa=self.library.isa, serialised=True)

    # -- checks ----------------------------------------------------------------------------------------------
    def _checked_index(self, value: Any, name: str, copy: bool = False) -> np.ndarray:
        value = input_array(value, name, self.index_dtype)
        if value.shape != self.index_shape:
            raise ArgumentError(f"{name}: must have shape {self.index_shape}, got {value.shape}")
        value = np.array(value, order="C", copy=True) if copy else np.ascontiguousarray(value)
        if value.size:
            low, high = int(value.min()), int(value.max())
            if low < -self.src_count or high >= self.src_count:
                bad = low if low < -self.src_count else high
                raise ArgumentError(f"{name}: every index must be in [-{self.src_count}, {self.src_count}) "
                                    f"(axis {self.axis} has {self.src_count} elements), got {bad}")
        if copy:
            value.flags.writeable = False
        return cast(np.ndarray, value)

    def _checked_data(self, data: Any) -> np.ndarray:
        data = ndarray_arg(data, "data")
        kind, _ = _data_kind(data.dtype, "data")  # refuses a swapped byte order too
        if kind != self.data_kind:
            raise DTypeError(f"data: must have a {self.data_kind} dtype, got {data.dtype}")
        if data.shape != self.data_shape:
            raise ArgumentError(f"data: must have shape {self.data_shape}, got {data.shape}")
        return np.ascontiguousarray(data)

    # -- use -------------------------------------------------------------------------------------------------
    def forward(self, data: Any, indices: Any = None, *, out: np.ndarray | None = None) -> np.ndarray:
        """Gather from `data` (also the context's ``__call__``).

        Parameters
        ----------
        data : numpy.ndarray
            An array of the context's data dtype and ``data_shape``.
        indices : array_like, optional
            Required unless the context has a constant index (then it must be omitted): the index dtype and
            ``index_shape``, each index in ``[-n, n)`` for ``n = data_shape[axis]``.
        out : numpy.ndarray, optional
            Output of ``index_shape`` and the dtype of `data`, overlapping neither input.

        Returns
        -------
        numpy.ndarray
            `out`, or a new array of ``index_shape`` with the dtype of `data`.

        Raises
        ------
        DTypeError
            `data`, `indices` or `out` of another dtype.
        ArgumentError
            Another shape, an index out of range, `indices` given to (or missing from) a context with (without) a
            constant index, or a bad `out`.
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> data = np.array([10, 20, 30], np.float32)
        >>> gather = simdbind.GatherElements(np.float32, np.int32, (3,), (4,), axis=0)
        >>> gather.forward(data, np.array([2, -1, 0, 1], np.int32))
        array([30., 30., 10., 20.], dtype=float32)
        >>> gather(data, np.array([3, 0, 0, 0], np.int32))
        Traceback (most recent call last):
        ...
        simdbind.errors.ArgumentError: indices: every index must be in [-3, 3) (axis 0 has 3 elements), got 3
        """
        plan = self._gather_plan
        if plan is not None:  # one C call; None: an argument it does not take, which the checks below judge
            result: np.ndarray | None = planned_gather(plan, self._handle, self._lock, data, indices, out)
            if result is not None:
                return result
        return self._ordinary_forward(data, indices, out)

    def _ordinary_forward(self, data: Any, indices: Any, out: np.ndarray | None) -> np.ndarray:
        data = self._checked_data(data)
        if self._index is not None:
            if indices is not None:
                raise ArgumentError("indices: this context has a constant index; call it without indices")
            index = self._index
        elif indices is None:
            raise ArgumentError("indices: required (the context was created without a constant index)")
        else:
            index = self._checked_index(indices, "indices")
        if out is None:
            out = np.zeros(self.index_shape, data.dtype)
        else:
            out = output_array(out, "out", self.index_shape, data.dtype, [("data", data), ("indices", index)])
        if out.size == 0:
            return out
        ffi = self.library.ffi
        assert self._lock is not None  # a GatherElements context always serialises its calls
        with self._lock:
            self.library.function("SimdSynetGatherElementsForward")(
                self._live(), ffi.from_buffer("uint8_t[]", data), ffi.from_buffer("uint8_t[]", index),
                ffi.from_buffer("uint8_t[]", out, require_writable=True))
        return out

    __call__ = forward

    @property
    def internal_buffer_size(self) -> int:
        """``SimdSynetGatherElementsInternalBufferSize`` in bytes.

        0 upstream; in the bundled library, with a constant index, the positions it keeps of it (1, 2 or 4 bytes
        an index by the size of the axis).

        Raises
        ------
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> index = np.zeros((1000,), np.int64)
        >>> gather = simdbind.GatherElements(np.float32, np.int64, (100,), (1000,), axis=0, index=index)
        >>> gather.internal_buffer_size     # one byte for each of the 1000 positions along an axis of 100
        1000
        """
        assert self._lock is not None
        with self._lock:
            return int(self.library.function("SimdSynetGatherElementsInternalBufferSize")(self._live()))

    def _key(self) -> str:
        return (f"{self.data_kind} {self.index_dtype} data {self.data_shape} index {self.index_shape} "
                f"axis={self.axis} constant={self._index is not None}")


def gather_elements(data: Any, indices: Any, axis: int = 0, *, out: np.ndarray | None = None,
                    library: Library | None = None) -> np.ndarray:
    """ONNX GatherElements: ``out[i][j][k] = data[indices[i][j][k]][j][k]`` for ``axis=0`` and so on.

    `data` is float32, uint8 or bf16 (``ml_dtypes.bfloat16`` or ``uint16``); `indices` int32 or int64 of the rank of
    `data`, equal to it except along `axis`, each in ``[-n, n)`` for ``n = data.shape[axis]`` (negative counts
    from the end). Returns an array of ``indices.shape`` with the dtype of `data`.

    Parameters
    ----------
    data : numpy.ndarray
        float32, uint8 or bf16.
    indices : numpy.ndarray
        int32 or int64, of the rank of `data`; every index in ``[-n, n)``, checked before C runs.
    axis : int
        The gather axis (negative counts from the end).
    out : numpy.ndarray, optional
        Output of ``indices.shape`` and the dtype of `data`, overlapping neither input.
    library : Library, optional
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new array.

    Raises
    ------
    DTypeError
        An unsupported data or index dtype, or an `out` of another dtype.
    ArgumentError
        `data` or `indices` not an ndarray, shapes that differ outside `axis`, an `axis` out of range, an index
        outside ``[-n, n)``, or a bad `out`.
    FunctionNotAvailableError
        The library lacks GatherElements.

    See Also
    --------
    GatherElements : a context for repeated calls, optionally with a constant index.

    Examples
    --------
    >>> data = np.array([[1, 2], [3, 4]], np.float32)
    >>> simdbind.gather_elements(data, np.array([[0, 0], [1, 0]]), axis=1)  # ONNX's example
    array([[1., 1.],
           [4., 3.]], dtype=float32)
    """
    key = None
    if type(data) is _ndarray and type(indices) is _ndarray and type(axis) is int and planned_gather is not None:
        # One context per parameter tuple, kept in the library's plan cache (see "plans" in _fastpath.py). The key is
        # what the checks derive the context from; plan_key's conversions are not needed: dtypes and shapes come
        # from exact ndarrays, and an axis of exact type int is never a bool.
        key = (_KEY, data.dtype, indices.dtype, data.shape, indices.shape, axis)
        lib = _library._default if library is None else library
        if type(lib) is _Library and (c := lib._bindings) is not None:
            context: GatherElements | None = c.plan_get(key)
            if context is not None:
                found: np.ndarray | None = planned_gather(context._gather_plan, context._handle, context._lock,
                                                          data, indices, out)
                if found is not None:
                    return found
                if context._handle is not None:  # e.g. strided arrays: the same context, checked the long way
                    return context._ordinary_forward(data, indices, out)
    data, indices = ndarray_arg(data, "data"), ndarray_arg(indices, "indices")
    native(data.dtype, "data")
    _index_type(indices.dtype, "indices")
    context = GatherElements(data.dtype, indices.dtype, data.shape, indices.shape, axis, library=library)
    try:
        result: np.ndarray = context.forward(data, indices, out=out)
    except BaseException:
        context.close()
        raise
    if key is None:
        context.close()
    else:
        remember(context.library, key, context)
    return result
