"""Elementwise and normalization functions: eltwise, unary, softmax, lrn (and lrn_onnx), shuffle."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from simdbind import _fastpath
from simdbind._checks import (LAYOUT_NAMES, FloatArray, any_array, finite_array, input_array, is_bf16,
                              layout as layout_arg, library_arg, output_array, real, size_arg)
from simdbind._fastpath import F32, bindings, fast_address, fast_key
from simdbind import _routes
from simdbind._routes import lrn_route
from simdbind.enums import EltwiseOperation, TensorFormat, UnaryOperation, parse_enum
from simdbind.errors import ArgumentError
from simdbind import library as _library_module
from simdbind.library import Library, check_memory, one_isa

__all__ = ["eltwise", "unary", "softmax", "lrn", "lrn_onnx", "shuffle"]

# Accepted spellings of each operation, for a dictionary lookup on the fast path (parse_enum explains failures).
_ELTWISE_OPS: dict[object, EltwiseOperation] = {
    **{m.name.lower(): m for m in EltwiseOperation}, **{int(m): m for m in EltwiseOperation}}
_ONES: dict[int, np.ndarray] = {}
# eltwise fast path: see "How to keep a wrapper fast" in _fastpath.py
_ELTWISE_NAMES: dict[str, EltwiseOperation] = {m.name.lower(): m for m in EltwiseOperation}
_ELTWISE_FN = "SimdSynetEltwiseLayerForward"
_ELTWISE_KEY = fast_key(_ELTWISE_FN)  # Bindings.cache key of its fast-call address
_ELTWISE_SIGNATURE = ("void(*)(float const * const *, const float *, size_t, size_t, SimdSynetEltwiseOperationType, "
                      "float *)")
_UNARY_FN = "SimdSynetUnaryOperation32f"
_UNARY_KEY = fast_key(_UNARY_FN)
_UNARY_SIGNATURE = "void(*)(const float *, size_t, SimdSynetUnaryOperation32fType, float *)"
_ndarray, _empty = np.ndarray, np.empty
_fast_eltwise: Any = getattr(_fastpath._fastcall, "eltwise", None)
_fast_unary: Any = getattr(_fastpath._fastcall, "unary", None)


def _ones(count: int) -> np.ndarray:
    """Read-only unit weights, cached per count (the C side only reads them)."""
    ones = _ONES.get(count)
    if ones is None:
        ones = _ONES.setdefault(count, np.ones(count, np.float32))
        ones.flags.writeable = False
    return ones


def eltwise(inputs: Sequence[ArrayLike], op: str | EltwiseOperation, weights: ArrayLike | None = None, *,
            out: FloatArray | None = None, library: Library | None = None) -> FloatArray:
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
        but must not overlap any later input or the weights (the C code reads them after writing `out`).
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new array.

    Raises
    ------
    DTypeError
        An input, the weights or `out` is not float32 (nothing is cast silently), or not in native byte order.
    ArgumentError
        Fewer than two inputs, inputs of different shapes, `weights` with another op or of the wrong length or
        not finite, an unknown `op`, or an `out` of the wrong shape, not writable, or overlapping an input other
        than ``inputs[0]`` or ``inputs[1]`` exactly.
    FunctionNotAvailableError
        The library lacks the C function.

    See Also
    --------
    unary : one operation on one array.

    Examples
    --------
    >>> a = np.array([1, 5, -2], np.float32)
    >>> b = np.array([3, 4, -1], np.float32)
    >>> simdbind.eltwise([a, b], "max")
    array([ 3.,  5., -1.], dtype=float32)
    >>> simdbind.eltwise([a, b, a], "sum", weights=[1, 2, -1])
    array([ 6.,  8., -2.], dtype=float32)
    >>> simdbind.eltwise([a, b], "product", out=a)  # in place: out may be inputs[0] or inputs[1] exactly
    array([ 3., 20.,  2.], dtype=float32)
    >>> simdbind.eltwise([a, b], "mx")
    Traceback (most recent call last):
    ...
    simdbind.errors.ArgumentError: op: must be one of 'product', 'sum', 'max', 'min', got 'mx' (did you mean 'max'?)
    """
    operation = _ELTWISE_NAMES.get(op) if type(op) is str else None  # fast: a str-only dict (no IntEnum __eq__)
    if operation is None:
        operation = _ELTWISE_OPS.get(op) if isinstance(op, (str, int)) else None
        if operation is None:
            operation = parse_enum(EltwiseOperation, op, "op")
    # Fast path (see "How to keep a wrapper fast" in _fastpath.py): simdbind._fastcall makes the call when every
    # argument is plainly right (exact float32 ndarrays, C-contiguous, equal shapes, weights of the right count,
    # out writable and exactly aliasing or apart) and returns None otherwise: the checks below then raise the
    # documented errors. It needs a library in hand (given, or the default already loaded), so that a library
    # that fails to load never hides an argument error.
    lib = library or _library_module._default
    try:
        c = lib._bindings or bindings(lib)  # type: ignore[union-attr]
    except AttributeError:  # no library loaded yet, or not a Library (a name, say): the checks below explain
        c = None
    if c is not None:
        address = c.cache.get(_ELTWISE_KEY)
        if address is None:
            address = fast_address(c, _ELTWISE_FN, _ELTWISE_SIGNATURE)
        if address:
            result = _fast_eltwise(address, inputs, weights, operation, out)
            if result is not None:
                return result  # type: ignore[no-any-return]
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
    # out may be inputs[0] or inputs[1] exactly (elementwise in place), never any other overlap.
    reads = [(f"inputs[{i}]", a) for i, a in enumerate(arrays) if i >= 2] + [("weights", weight)]
    out = output_array(out, "out", shape, np.float32, reads)

    library = library_arg(library)
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


# -- unary ------------------------------------------------------------------------------------------------------
_UNARY_CODES: dict[object, int] = {  # accepted spellings -> the C value (plain ints: the fastest for cffi)
    **{m.name.lower(): int(m) for m in UnaryOperation}, **{int(m): int(m) for m in UnaryOperation}}
_UNARY_NAMES: dict[str, int] = {m.name.lower(): int(m) for m in UnaryOperation}
_SOFTMAX_KEY = "softmax32f"
_FLOAT32 = np.dtype(np.float32)


def _overlap_check(out: np.ndarray, array: np.ndarray, out_name: str, array_name: str, allow_exact: bool) -> None:
    """Refuse partial overlap of `out` and an input; exact aliasing only where `allow_exact`."""
    if not np.may_share_memory(out, array):
        return
    exact = (out.__array_interface__["data"][0] == array.__array_interface__["data"][0]
             and out.nbytes == array.nbytes)
    if not (allow_exact and exact):
        rule = "(only exact in-place use is allowed)" if allow_exact else "(in-place use is not allowed)"
        raise ArgumentError(f"{out_name}: overlaps {array_name} {rule}")


def unary(x: ArrayLike, op: str | UnaryOperation, *, out: FloatArray | None = None,
          library: Library | None = None) -> FloatArray:
    """Apply one elementwise operation to a float32 array (``SimdSynetUnaryOperation32f``).

    Parameters
    ----------
    x
        float32 array of any shape.
    op
        ``"abs" "ceil" "cos" "erf" "exp" "floor" "log" "neg" "not" "rcp" "round" "rsqrt" "sign" "sin" "sqrt"
        "tanh" "zero"`` (or :class:`UnaryOperation`, or its value). ``"not"`` is the bitwise NOT of the float's
        bits, ``"round"`` rounds half away from zero, ``"sign"`` gives -1, 0 or 1 (1 for NaN), ``"zero"`` gives +0.
        The unary contract of the manual's tolerance model states each operation's exact domain and tolerance.
    out
        Optional float32 output of x's shape; may be `x` itself (in place), but must not overlap it partially.
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new array.

    Raises
    ------
    DTypeError
        `x` or `out` is not float32, or not in native byte order.
    ArgumentError
        An unknown `op`, or an `out` of the wrong shape, not writable or overlapping `x` partially.
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> x = np.array([-1.5, 0.0, 2.5, 4.0], np.float32)
    >>> simdbind.unary(x, "abs")
    array([1.5, 0. , 2.5, 4. ], dtype=float32)
    >>> simdbind.unary(x, "round")                   # half away from zero
    array([-2.,  0.,  3.,  4.], dtype=float32)
    >>> simdbind.unary(x, simdbind.UnaryOperation.SIGN, out=x)  # in place
    array([-1.,  0.,  1.,  1.], dtype=float32)
    """
    operation = _UNARY_NAMES.get(op) if type(op) is str else None  # a str-only dict (see _fastpath.py)
    if operation is None:
        operation = _UNARY_CODES.get(op) if type(op) is int else None
    if operation is None:
        operation = int(parse_enum(UnaryOperation, op, "op"))
    # Fast path (see eltwise): simdbind._fastcall takes an exact float32 ndarray, C-contiguous, and no `out` or a
    # writable one of its shape that is x exactly or apart from it; None otherwise, and the checks below run.
    lib = library or _library_module._default
    try:
        c = lib._bindings or bindings(lib)  # type: ignore[union-attr]
    except AttributeError:  # no library loaded yet, or not a Library (a name, say): the checks below explain
        c = None
    if c is not None:
        address = c.cache.get(_UNARY_KEY)
        if address is None:
            address = fast_address(c, _UNARY_FN, _UNARY_SIGNATURE)
        if address:
            result = _fast_unary(address, x, operation, out)
            if result is not None:
                return result  # type: ignore[no-any-return]
    if type(x) is np.ndarray and x.dtype == _FLOAT32 and x.flags.c_contiguous:
        array = x  # the common case, without the general checks' overhead
    else:
        array = input_array(x, "x", np.float32)
    if out is None:
        out = np.empty(array.shape, np.float32)
    else:
        if np.may_share_memory(out, array):
            _overlap_check(out, array, "out", "x", allow_exact=True)
            out = output_array(out, "out", array.shape, np.float32)
        else:
            out = output_array(out, "out", array.shape, np.float32, [("x", array)])
    library = library_arg(library)
    if array.size:
        ffi = library.ffi
        library.function("SimdSynetUnaryOperation32f")(
            ffi.from_buffer("float[]", array), array.size, operation,
            ffi.from_buffer("float[]", out, require_writable=True))
    return out


# -- softmax ----------------------------------------------------------------------------------------------------
def _axis(axis: Any, ndim: int, name: str = "axis") -> int:
    value = size_arg(axis, name, minimum=-(2 ** 63))
    if not -ndim <= value < ndim:
        raise ArgumentError(f"{name}: must be in [{-ndim}, {ndim - 1}] for a {ndim}-d array, got {value}")
    return value % ndim


def softmax(x: ArrayLike, axis: int = -1, *, out: NDArray[Any] | None = None,
            library: Library | None = None) -> NDArray[Any]:
    """Softmax along one axis: ``exp(x - max) / sum(exp(x - max))`` (``SimdSynetSoftmax32f`` / ``...Softmax16b``).

    Parameters
    ----------
    x
        An array of at least one dimension: float32, or bfloat16 as ``ml_dtypes.bfloat16`` or raw ``uint16``
        bit patterns. The result has the same dtype (bf16 results are rounded to nearest even).
    axis
        The softmax axis (negative counts from the end). The array is viewed as ``(outer, count, inner)`` around it.
    out
        Optional output of x's shape and dtype; must not overlap `x`.
    library
        The Simd library to call (default: :func:`simdbind.default_library`). Float32 uses
        ``SimdSynetSoftmax32f``, or the pre-v7.0.160 name ``SimdSynetSoftmaxLayerForward`` on a library that has
        only that.

    Notes
    -----
    On the bundled library a NaN in a slice makes the slice NaN; +inf entries share the slice's mass equally
    (``[3, inf, 2] -> [0, 1, 0]``); a slice of only -inf is NaN. Other libraries differ there (the manual's tolerance
    model).

    Returns
    -------
    numpy.ndarray
        `out`, or a new array of x's shape and dtype.

    Raises
    ------
    DTypeError
        `x` is neither float32 nor bf16, or `out` has another dtype.
    ArgumentError
        A 0-d `x`, an `axis` out of range or not an int, or a bad `out` (shape, writability, overlap).
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> logits = np.log(np.array([[1, 3], [2, 2]], np.float32))
    >>> np.round(simdbind.softmax(logits, axis=1), 6)
    array([[0.25, 0.75],
           [0.5 , 0.5 ]], dtype=float32)
    >>> simdbind.softmax(np.array([3, np.inf, 2], np.float32))
    array([0., 1., 0.], dtype=float32)
    """
    key = None
    if type(x) is _ndarray and _fastpath.plan_key is not None:  # a planned call: see "plans" in _fastpath.py
        key = _fastpath.plan_key(x.dtype, "softmax", x.shape, axis)
        found = _fastpath.run_planned(library, key, out, x)
        if found is not None:
            return found  # type: ignore[no-any-return]
    # Fast path without the extension (see "How to keep a wrapper fast" in _fastpath.py): an exact float32 array, an
    # int axis, no `out` or a distinct owning one of its shape. It only accepts; anything else takes the full checks.
    if _fastpath.plan_key is None and type(x) is _ndarray and x.dtype is F32 and type(axis) is int and (
            out is None or (type(out) is _ndarray and out.dtype is F32 and out.shape == x.shape)) and (
            library is None or type(library) is Library):
        shape = x.shape
        ndim = len(shape)
        if ndim and -ndim <= axis < ndim:
            lib = library or _library_module._default or library_arg(None)
            c = lib._bindings or bindings(lib)
            fn = c.cache.get(_SOFTMAX_KEY)
            if fn is None:
                fn = c.cache[_SOFTMAX_KEY] = c.function(
                    "SimdSynetSoftmax32f" if lib.has("SimdSynetSoftmax32f") else "SimdSynetSoftmaxLayerForward")
            from_buffer, f32 = c.from_buffer, c.f32
            try:  # from_buffer refuses non-C-contiguous arrays (ValueError)
                px = from_buffer(f32, x)
                if out is None:
                    result = _empty(shape, F32)
                    ok = True
                else:
                    flags = out.flags  # distinct arrays that own their data cannot overlap
                    ok = flags.writeable and flags.owndata and x.flags.owndata and out is not x
                    result = out
                if ok:
                    pd = from_buffer(f32, result)
            except ValueError:
                ok = False
            if ok:
                axis %= ndim
                count = shape[axis]
                if count and len(px):
                    inner = math.prod(shape[axis + 1:]) if axis + 1 < ndim else 1
                    outer = len(px) // (count * inner)
                    if count == 1 and inner == 1:
                        outer, count, inner = _routes.softmax_dims(lib, False, outer, count, inner)
                    fn(px, outer, count, inner, pd)
                return result
    if isinstance(x, np.ndarray) and is_bf16(x.dtype):
        bf16_kind: np.dtype[Any] | None = x.dtype
        array = any_array(x, "x")
    else:
        bf16_kind = None
        array = input_array(x, "x", np.float32)
    if array.ndim == 0:
        raise ArgumentError("x: must have at least one dimension, got a 0-d array")
    axis = _axis(axis, array.ndim)
    shape = array.shape
    outer = math.prod(shape[:axis])
    count = shape[axis]
    inner = math.prod(shape[axis + 1:])
    out = output_array(out, "out", shape, array.dtype, [("x", array)])
    library = library_arg(library)
    outer, count, inner = _routes.softmax_dims(library, bf16_kind is not None, outer, count, inner)
    ffi = library.ffi
    if bf16_kind is not None:
        function = library.function("SimdSynetSoftmax16b")
        if array.size:
            src, dst = array.view(np.uint16).reshape(-1), out.view(np.uint16).reshape(-1)
            for first, slices in _routes.softmax16b_parts(library, outer, count, inner):
                begin, end = first * count * inner, (first + slices) * count * inner
                function(ffi.from_buffer("uint16_t[]", src[begin:end]), slices, count, inner,
                         ffi.from_buffer("uint16_t[]", dst[begin:end], require_writable=True))
        return out
    name = "SimdSynetSoftmax32f" if library.has("SimdSynetSoftmax32f") else "SimdSynetSoftmaxLayerForward"
    function = library.function(name)
    if array.size:
        function(ffi.from_buffer("float[]", array), outer, count, inner,
                 ffi.from_buffer("float[]", out, require_writable=True))
        if key is not None:  # both names have the same signature
            _fastpath.remember(library, key, _fastpath.make_plan(library, "CALL_SOFTMAX32F", name, out, outer, count,
                                                             inner))
    return out


# -- LRN --------------------------------------------------------------------------------------------------------
def _layout(value: Any) -> str:
    """The layout's name, "nchw" or "nhwc" (the vocabulary's :func:`~simdbind._checks.layout` decides)."""
    return LAYOUT_NAMES[layout_arg(value)]


def _split_image(shape: tuple[int, ...], layout: str, name: str) -> tuple[int, int, int]:
    """(batch, channels, spatial) of a (C,H,W)/(N,C,H,W) or (H,W,C)/(N,H,W,C) array."""
    if len(shape) not in (3, 4):
        axes = "(C, H, W) or (N, C, H, W)" if layout == "nchw" else "(H, W, C) or (N, H, W, C)"
        raise ArgumentError(f"{name}: must be {axes} for layout={layout!r}, got {len(shape)} dimensions {shape}")
    batch = shape[0] if len(shape) == 4 else 1
    image = shape[-3:]
    if layout == "nchw":
        return batch, image[0], image[1] * image[2]
    return batch, image[2], image[0] * image[1]


def lrn(x: ArrayLike, half: int, k: ArrayLike, layout: str | TensorFormat = "nchw", *,
        out: FloatArray | None = None, library: Library | None = None) -> FloatArray:
    """Local response normalization across channels (``SimdSynetLrnLayerCrossChannels``).

    ``y[c] = x[c] * (k[0] + k[1] * sum(x[i]**2 for i in [c - half, c + half] within the channels)) ** k[2]``,
    with the power computed as ``exp(log(base) * k[2])`` (a negative base gives NaN) and no division by the
    window size. For the ONNX / PyTorch parameters use :func:`lrn_onnx`.

    Parameters
    ----------
    x
        float32 image(s): ``(C, H, W)`` or ``(N, C, H, W)`` for ``layout="nchw"``, ``(H, W, C)`` or
        ``(N, H, W, C)`` for ``"nhwc"``.
    half
        Half window size, >= 0 (window ``2*half + 1`` channels, clipped at the edges).
    k
        Three finite coefficients ``(k0, k1, k2)``.
    layout
        ``"nchw"`` or ``"nhwc"``.
    out
        Optional float32 output of x's shape; must not overlap `x` (the computation is not in-place safe).
    library
        The Simd library to call. Upstream builds compute NHWC wrongly when ``channels < 2*half + 1`` (``lrn-nhwc-small-channels``),
        and, with ``half == 2``, for 7, 11 and 19 channels (:func:`simdbind._routes.upstream_lrn_is_wrong`); for
        such calls on the upstream versions that the catalogue names, simdbind computes through NCHW instead
        (transposing in NumPy), which upstream gets right.

    Returns
    -------
    numpy.ndarray
        `out`, or a new float32 array of x's shape.

    Raises
    ------
    DTypeError
        `x`, `k` or `out` is not float32 (or convertible, for `k`).
    ArgumentError
        `x` not 3-d or 4-d, a negative `half`, `k` not three finite coefficients, an unknown `layout`, or a bad
        `out` (shape, writability, overlap with `x` or `k`).
    FunctionNotAvailableError
        The library lacks the C function.

    See Also
    --------
    lrn_onnx : the same with ONNX's and PyTorch's parameters.

    Examples
    --------
    >>> x = np.ones((3, 1, 1), np.float32)             # 3 channels of one pixel
    >>> np.round(simdbind.lrn(x, 1, (1.0, 1.0, -0.5))[:, 0, 0], 6)  # x / sqrt(1 + window sum of x**2)
    array([0.57735, 0.5    , 0.57735], dtype=float32)
    """
    layout = _layout(layout)
    array = input_array(x, "x", np.float32)
    batch, channels, spatial = _split_image(array.shape, layout, "x")
    half = size_arg(half, "half", maximum=None)  # clamped to the channels below
    coefficients = finite_array(input_array(k, "k", np.float32), "k")
    if coefficients.shape != (3,):
        raise ArgumentError(f"k: must hold exactly 3 coefficients (k0, k1, k2), got shape {coefficients.shape}")
    out = output_array(out, "out", array.shape, np.float32, [("x", array), ("k", coefficients)])
    library = library_arg(library)
    if array.size == 0:
        return out
    # A window of channels - 1 already covers every channel, so clamping changes no result; it keeps huge values
    # within size_t, and upstream's NCHW code reads past the channels when half > channels.
    half = min(half, channels - 1)
    if lrn_route(library, layout, channels, half):
        image = array if array.ndim == 4 else array[None]
        nchw = np.ascontiguousarray(image.transpose(0, 3, 1, 2))
        result = lrn(nchw, half, coefficients, "nchw", library=library)
        out[...] = result.transpose(0, 2, 3, 1).reshape(array.shape)
        return out
    c = library._bindings or bindings(library)
    function = c.function("SimdSynetLrnLayerCrossChannels")
    src = c.from_buffer(c.f32, array)
    dst = c.from_buffer(c.f32, out, True)
    kptr = c.from_buffer(c.f32, coefficients)
    if layout == "nhwc":  # windows never cross pixels, so the batch is just more pixels
        function(src, half, channels, batch * spatial, kptr, dst, TensorFormat.NHWC)
        check_memory(library, "SimdSynetLrnLayerCrossChannels")  # its row buffer: dst is unwritten without it
    else:
        step = channels * spatial
        with one_isa(library):  # one image per call: every image at the same ISA
            for n in range(batch):
                function(src + n * step, half, channels, spatial, kptr, dst + n * step, TensorFormat.NCHW)
    return out


def lrn_onnx(x: ArrayLike, size: int, alpha: float = 1e-4, beta: float = 0.75, bias: float = 1.0,
             layout: str | TensorFormat = "nchw", *, out: FloatArray | None = None,
             library: Library | None = None) -> FloatArray:
    """LRN with the ONNX ``LRN`` / ``torch.nn.LocalResponseNorm`` parameters.

    ``y[c] = x[c] / (bias + alpha / size * sum(x[i]**2 over the size-channel window)) ** beta``, i.e.
    :func:`lrn` with ``half = (size - 1) / 2`` and ``k = (bias, alpha / size, -beta)``. `size` must be odd
    (the C function has a symmetric window only).

    Parameters
    ----------
    x
        float32 image(s), as :func:`lrn` takes them.
    size
        The window in channels, odd (ONNX ``size``, PyTorch ``size``).
    alpha, beta, bias
        ONNX's ``alpha``, ``beta`` and ``bias`` (PyTorch's ``alpha``, ``beta`` and ``k``), finite reals within
        float32's range. Defaults are ONNX's and PyTorch's: 1e-4, 0.75 and 1.0.
    layout
        ``"nchw"`` or ``"nhwc"``.
    out
        Optional float32 output of x's shape; must not overlap `x`.
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new float32 array of x's shape.

    Raises
    ------
    ArgumentError
        An even or non-positive `size`, a parameter that is not a finite real, or any error of :func:`lrn`.
    DTypeError
        As :func:`lrn`.
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> x = np.ones((3, 1, 1), np.float32)
    >>> np.round(simdbind.lrn_onnx(x, size=3, alpha=3.0, beta=0.5, bias=1.0)[:, 0, 0], 6)
    array([0.57735, 0.5    , 0.57735], dtype=float32)
    """
    size = size_arg(size, "size", minimum=1)
    if size % 2 == 0:
        raise ArgumentError(f"size: must be odd (a symmetric window of 2*half + 1 channels), got {size}")
    alpha, beta, bias = real(alpha, "alpha"), real(beta, "beta"), real(bias, "bias")
    k = np.array([bias, alpha / size, -beta], np.float32)
    return lrn(x, (size - 1) // 2, k, layout, out=out, library=library)


# -- shuffle ----------------------------------------------------------------------------------------------------
def shuffle(x0: ArrayLike, x1: ArrayLike, type: int = 0, layout: str | TensorFormat = "nchw", *,
            channels: tuple[int, int] | None = None, out: tuple[FloatArray, FloatArray] | None = None,
            library: Library | None = None) -> tuple[FloatArray, FloatArray]:
    """Channel shuffle of two tensors (``SimdSynetShuffleLayerForward``); returns ``(y0, y1)``.

    type 0 (split): ``cat = concatenate([x0, x1], channel axis)``; ``y0 = cat[even channels]``,
    ``y1 = cat[odd channels]``; x0 and x1 need even channel counts, and y0, y1 get ``(C0 + C1) / 2`` each.
    type 1 (interleave, the inverse): x0 and x1 have the same C channels; ``inter[2i] = x0[i]``,
    ``inter[2i + 1] = x1[i]``; ``y0 = inter[:channels[0]]``, ``y1 = inter[channels[0]:]``. `channels` defaults
    to ``(C, C)`` and must be two even counts summing to ``2*C``.

    Arrays are float32 ``(C, H, W)`` / ``(N, C, H, W)`` (``"nchw"``) or ``(H, W, C)`` / ``(N, H, W, C)``
    (``"nhwc"``), with equal batch and spatial sizes. `out` may be a pair of float32 outputs of the result shapes
    (not overlapping the inputs or each other).

    Parameters
    ----------
    x0, x1
        The two float32 tensors.
    type
        0 (split) or 1 (interleave).
    layout
        ``"nchw"`` or ``"nhwc"``.
    channels
        Type 1 only: the channel counts ``(C0, C1)`` of the two results.
    out
        Optional pair of float32 outputs.
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    tuple of numpy.ndarray
        ``(y0, y1)``: `out`, or two new arrays.

    Raises
    ------
    DTypeError
        An input or output that is not float32.
    ArgumentError
        A `type` other than 0 or 1, odd channel counts (upstream reads past the input), shapes that do not
        match, `channels` that do not sum to ``2*C``, or a bad `out`.
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> p = np.arange(4, dtype=np.float32).reshape(4, 1, 1)
    >>> q = np.arange(10, 12, dtype=np.float32).reshape(2, 1, 1)
    >>> y0, y1 = simdbind.shuffle(p, q, 0)       # even and odd channels of concat(p, q)
    >>> y0.ravel(), y1.ravel()
    (array([ 0.,  2., 10.], dtype=float32), array([ 1.,  3., 11.], dtype=float32))
    >>> p2, q2 = simdbind.shuffle(y0, y1, 1, channels=(4, 2))  # the inverse
    >>> p2.ravel(), q2.ravel()
    (array([0., 1., 2., 3.], dtype=float32), array([10., 11.], dtype=float32))
    """
    layout = _layout(layout)
    if isinstance(type, (bool, np.bool_)) or not isinstance(type, (int, np.integer)) or type not in (0, 1):
        raise ArgumentError(f"type: must be 0 (split) or 1 (interleave), got {type!r}")
    type = int(type)
    a0 = input_array(x0, "x0", np.float32)
    a1 = input_array(x1, "x1", np.float32)
    b0, c0, s0 = _split_image(a0.shape, layout, "x0")
    b1, c1, s1 = _split_image(a1.shape, layout, "x1")
    if a0.ndim != a1.ndim or b0 != b1 or s0 != s1 or _spatial_shape(a0.shape, layout) != _spatial_shape(a1.shape, layout):
        raise ArgumentError(f"x1: must have the batch and spatial shape of x0, got {a1.shape} and {a0.shape}")
    if type == 0:
        if channels is not None:
            raise ArgumentError("channels: only used with type=1 (the input channel counts fix type 0)")
        for name, count in (("x0", c0), ("x1", c1)):
            if count % 2:
                raise ArgumentError(f"{name}: channel count must be even for type=0, got {count}")
        channels0, channels1 = c0, c1
        out_channels = ((c0 + c1) // 2, (c0 + c1) // 2)
    else:
        if c0 != c1:
            raise ArgumentError(f"x1: must have the channel count of x0 for type=1, got {c1} and {c0}")
        if channels is None:
            channels = (c0, c0)
        if not isinstance(channels, (tuple, list)) or len(channels) != 2:
            raise ArgumentError(f"channels: must be a pair (channels0, channels1), got {channels!r}")
        channels0 = size_arg(channels[0], "channels[0]", minimum=0)
        channels1 = size_arg(channels[1], "channels[1]", minimum=0)
        if channels0 % 2 or channels1 % 2:
            raise ArgumentError(f"channels: both counts must be even, got ({channels0}, {channels1})")
        if channels0 + channels1 != 2 * c0:
            raise ArgumentError(f"channels: must sum to 2 * {c0} = {2 * c0} (the channels of x0 and x1), "
                                f"got ({channels0}, {channels1})")
        out_channels = (channels0, channels1)
    shapes = tuple(_with_channels(a0.shape, layout, oc) for oc in out_channels)
    if out is None:
        y0, y1 = np.empty(shapes[0], np.float32), np.empty(shapes[1], np.float32)
    else:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise ArgumentError(f"out: must be a pair of arrays (y0, y1), got {type_name(out)}")
        y0 = output_array(out[0], "out[0]", shapes[0], np.float32, [("x0", a0), ("x1", a1)])
        y1 = output_array(out[1], "out[1]", shapes[1], np.float32, [("x0", a0), ("x1", a1), ("out[0]", y0)])
    library = library_arg(library)
    if a0.size + a1.size == 0 or s0 == 0 or b0 == 0:
        return y0, y1
    ffi = library.ffi
    function = library.function("SimdSynetShuffleLayerForward")
    p0, p1 = ffi.from_buffer("float[]", a0), ffi.from_buffer("float[]", a1)
    q0 = ffi.from_buffer("float[]", y0, require_writable=True)
    q1 = ffi.from_buffer("float[]", y1, require_writable=True)
    # Empty channel runs still need valid pointers; cffi gives one for a zero-size buffer.
    if layout == "nhwc":
        function(p0, p1, channels0, channels1, b0 * s0, q0, q1, TensorFormat.NHWC, type)
    else:
        in0, in1, out0, out1 = a0.size // b0, a1.size // b0, y0.size // b0, y1.size // b0
        with one_isa(library):
            for n in range(b0):
                function(p0 + n * in0, p1 + n * in1, channels0, channels1, s0, q0 + n * out0, q1 + n * out1,
                         TensorFormat.NCHW, type)
    return y0, y1


def type_name(value: Any) -> str:
    return type(value).__name__


def _spatial_shape(shape: tuple[int, ...], layout: str) -> tuple[int, ...]:
    image = shape[-3:]
    return tuple(image[1:]) if layout == "nchw" else tuple(image[:2])


def _with_channels(shape: tuple[int, ...], layout: str, channels: int) -> tuple[int, ...]:
    dims = list(shape)
    dims[-3 if layout == "nchw" else -1] = channels
    return tuple(dims)
