"""Pooling: average and max over 2D windows (max also over channels), NCHW or NHWC, with batch and begin/end pads.

``pooling_average`` calls ``SimdSynetPoolingAverage``; ``pooling_max`` calls ``SimdSynetPoolingMax32f`` (float32,
2D or 3D), ``SimdSynetPoolingMax16b`` (bf16) or ``SimdSynetPoolingMax8u`` (uint8) by the input's dtype.

The C functions take one image, the begin pads and the output size; the end pads act only through the output
size. These wrappers loop over the batch, compute the output size from the pads and the floor/ceil
rule, and refuse arguments that upstream mishandles (``pad >= kernel``: the window's unsigned start wraps around and covers the whole image).

On an external (upstream) library, ``SimdSynetPoolingMax32f`` has three defects (the catalogue's ``max32f-*`` entries): small-channel NHWC
writes nothing (SSE4.1/AVX2), the AVX-512 NHWC 2x2/s1 "Solid2x2" kernel leaves row tails unwritten, and the NCHW
3x3/s1, 2x2/s2 and 3x3/s2 special kernels ignore the pads and the output size (wrong values, or writes past the end
of ``dst``). Calls that could reach them are routed around: NHWC channels are padded with zeros to a safe count
(pooling is per channel, so the extra channels are sliced off unchanged), and every 2D NCHW call is computed in
NHWC (same scan order per channel, so the same bits; a transpose each way is the price on upstream builds). The bundled library has none of these defects and is called
directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from numpy.typing import ArrayLike, NDArray

import numpy as np

from simdbind._checks import (Pads, any_array, begin_end, flag, is_bf16, layout as layout_arg, library_arg,
                              output_array, pads, size_arg, yx_pair)
from simdbind._fastpath import make_plan, plan_key, remember, run_planned
from simdbind._routes import max32f_route
from simdbind.enums import TensorFormat
from simdbind.errors import ArgumentError, DTypeError
from simdbind.library import Library, one_isa

__all__ = ["pooling_average", "pooling_max", "pooling_output_size"]

_NCHW, _NHWC = int(TensorFormat.NCHW), int(TensorFormat.NHWC)
_ndarray = np.ndarray


# -- geometry ----------------------------------------------------------------------------------------------------
def pooling_output_size(size: int, kernel: int, stride: int, pad_begin: int, pad_end: int,
                        ceil_mode: bool = False) -> int:
    """Output length of one axis: ``floor_or_ceil((size + pad_begin + pad_end - kernel) / stride) + 1``.

    In ceil mode a last window that would start past the input and the begin pad (entirely in the end pad) is
    dropped, as PyTorch and ONNX do, so that no window is empty. Returns 0 when the padded input is shorter than
    the kernel (the wrappers refuse that). Sizes and pads are ints >= 0, kernel and stride >= 1.

    Parameters
    ----------
    size : int
        The input length along the axis.
    kernel, stride : int
        The window's length and step, >= 1.
    pad_begin, pad_end : int
        The pads before and after the input, >= 0.
    ceil_mode : bool
        Round up instead of down.

    Returns
    -------
    int
        The number of output positions along the axis.

    Raises
    ------
    ArgumentError
        A size, pad, kernel or stride that is not an int in its range.

    Examples
    --------
    >>> simdbind.pooling_output_size(56, kernel=3, stride=2, pad_begin=1, pad_end=1)
    28
    >>> simdbind.pooling_output_size(6, 3, 2, 0, 0), simdbind.pooling_output_size(6, 3, 2, 0, 0, ceil_mode=True)
    (2, 3)
    """
    size, pad_begin, pad_end = size_arg(size, "size"), size_arg(pad_begin, "pad_begin"), size_arg(pad_end, "pad_end")
    kernel, stride = size_arg(kernel, "kernel", minimum=1), size_arg(stride, "stride", minimum=1)
    return _output_size(size, kernel, stride, pad_begin, pad_end, flag(ceil_mode, "ceil_mode"))


def _output_size(size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, ceil_mode: bool) -> int:
    """:func:`pooling_output_size` of arguments already checked."""
    span = size + pad_begin + pad_end - kernel
    if span < 0:
        return 0
    if not ceil_mode:
        return span // stride + 1
    count = -(-span // stride) + 1
    if (count - 1) * stride >= size + pad_begin:
        count -= 1
    return count


@dataclass(frozen=True)
class _Axis:
    """One pooled axis: kernel, stride, begin/end pads, input and output length."""
    kernel: int
    stride: int
    pad: int
    pad_end: int
    size: int
    out: int


def _axis(axis: str, size: int, kernel: int, stride: int, pads: tuple[int, int], ceil_mode: bool,
          pad_name: str) -> _Axis:
    for side, pad in zip(("begin", "end"), pads):
        if pad >= kernel:
            raise ArgumentError(
                f"{pad_name}: the {axis} {side} pad must be < the kernel ({kernel}), got {pad} (upstream wraps "
                "windows that lie entirely in the padding to the whole axis; manual, \"Pooling and GatherElements\")")
    out = _output_size(size, kernel, stride, pads[0], pads[1], ceil_mode)
    if out < 1:
        raise ArgumentError(f"output size: the {axis} axis gives {out} outputs (input {size} + pads {pads[0]}+"
                            f"{pads[1]} is shorter than the kernel {kernel}); must be >= 1")
    return _Axis(kernel, stride, pads[0], pads[1], size, out)


# -- arrays ------------------------------------------------------------------------------------------------------
def _layout(layout: Any) -> int:
    return int(layout_arg(layout))


def _image_dims(x: np.ndarray, fmt: int) -> tuple[int, int, int, int]:
    """(N, C, H, W) of a 3-D or 4-D input in `fmt`."""
    if x.ndim not in (3, 4):
        names = "(C, H, W) or (N, C, H, W)" if fmt == _NCHW else "(H, W, C) or (N, H, W, C)"
        raise ArgumentError(f"x: must be 3-D or 4-D, {names}, got shape {x.shape}")
    shape = x.shape if x.ndim == 4 else (1,) + x.shape
    n, c, h, w = shape if fmt == _NCHW else (shape[0], shape[3], shape[1], shape[2])
    if h < 1 or w < 1:
        raise ArgumentError(f"x: height and width must be >= 1, got {h}x{w}")
    return n, c, h, w


def _out_shape(x: np.ndarray, fmt: int, c: int, h: int, w: int) -> tuple[int, ...]:
    image = (c, h, w) if fmt == _NCHW else (h, w, c)
    return image if x.ndim == 3 else (x.shape[0],) + image


def _new_or_checked_out(out: Any, shape: tuple[int, ...], dtype: np.dtype[Any], x: np.ndarray) -> np.ndarray:
    if out is None:
        return np.zeros(shape, dtype)  # never np.empty: an external library may leave elements unwritten
    return output_array(out, "out", shape, dtype, [("x", x)])


# -- public functions --------------------------------------------------------------------------------------------
def pooling_average(x: ArrayLike, kernel: int | tuple[int, int], *, stride: int | tuple[int, int], exclude_pad: bool,
                    pad: Pads = 0, layout: str | TensorFormat = "nchw", ceil_mode: bool = False,
                    out: NDArray[np.float32] | None = None, library: Library | None = None) -> NDArray[np.float32]:
    """2D average pooling of a float32 tensor (``SimdSynetPoolingAverage``).

    Parameters
    ----------
    x
        float32, ``(C, H, W)`` or ``(N, C, H, W)`` for ``layout="nchw"``; ``(H, W, C)`` or ``(N, H, W, C)`` for
        ``"nhwc"``.
    kernel, stride
        An int or a ``(y, x)`` pair, each >= 1. `stride` is required (PyTorch defaults it to the kernel, the C
        function has no default).
    pad
        An int, ``(py, px)``, ``((top, bottom), (left, right))`` or ONNX-ordered ``(top, left, bottom, right)``;
        every pad must be < the kernel along its axis.
    exclude_pad
        Required. True: divide by the number of input elements in the (clipped) window (ONNX's
        ``count_include_pad=0``); False: by ``kernel_y * kernel_x`` (PyTorch's default ``count_include_pad=True``).
    ceil_mode
        Round the output size up (a last window starting in the end pad is dropped).
    layout
        ``"nchw"`` or ``"nhwc"`` (any case), or :class:`simdbind.TensorFormat`.
    out
        Optional float32 output of the result's shape (contiguous, not overlapping `x`).
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        ``sum(window) / divisor`` per channel and output position, summed in float32 in row-major window order. Its
        spatial sizes are :func:`pooling_output_size` of each axis.

    Raises
    ------
    DTypeError
        `x` or `out` is not float32.
    ArgumentError
        `x` not 3-d or 4-d, a kernel, stride or pad out of range (a pad as large as its kernel: upstream wraps
        such pads), an output that would be empty, a missing or non-bool `exclude_pad`, an unknown `layout`, or a
        bad `out`.
    FunctionNotAvailableError
        The library lacks the C function.

    Examples
    --------
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    >>> simdbind.pooling_average(x, 2, stride=2, exclude_pad=True)
    array([[[ 2.5,  4.5],
            [10.5, 12.5]]], dtype=float32)
    >>> y = np.arange(9, dtype=np.float32).reshape(1, 3, 3)    # the last windows reach into the end pad:
    >>> simdbind.pooling_average(y, 2, stride=2, pad=((0, 1), (0, 1)), exclude_pad=True)   # ONNX's default divisor
    array([[[2. , 3.5],
            [6.5, 8. ]]], dtype=float32)
    >>> simdbind.pooling_average(y, 2, stride=2, pad=((0, 1), (0, 1)), exclude_pad=False)  # PyTorch's default
    array([[[2.  , 1.75],
            [3.25, 2.  ]]], dtype=float32)
    """
    key = None
    if type(x) is _ndarray and plan_key is not None:  # a planned call: see "plans" in _fastpath.py
        key = plan_key(x.dtype, "pooling_average", x.shape, kernel, stride, exclude_pad, pad, layout, ceil_mode)
        result = run_planned(library, key, out, x)
        if result is not None:
            return result  # type: ignore[no-any-return]
    fmt = _layout(layout)
    x = any_array(x, "x")
    if x.dtype != np.float32:
        raise DTypeError(f"x: must have dtype float32, got {x.dtype}")
    exclude = flag(exclude_pad, "exclude_pad")
    n, c, h, w = _image_dims(x, fmt)
    ay, ax = _geometry(h, w, kernel, stride, pad, ceil_mode)
    result = _new_or_checked_out(out, _out_shape(x, fmt, c, ay.out, ax.out), np.dtype(np.float32), x)
    library = library_arg(library)
    if result.size == 0:
        return result
    ffi = library.ffi
    function = library.function("SimdSynetPoolingAverage")
    src, dst = ffi.from_buffer("float[]", x), ffi.from_buffer("float[]", result, require_writable=True)
    in_step, out_step = c * h * w, c * ay.out * ax.out
    with one_isa(library):  # one image per call: every image at the same ISA
        for i in range(n):
            function(src + i * in_step, c, h, w, ay.kernel, ax.kernel, ay.stride, ax.stride, ay.pad, ax.pad,
                     dst + i * out_step, ay.out, ax.out, exclude, fmt)
    _plan(library, key, "CALL_POOL_AVERAGE", "SimdSynetPoolingAverage", result, n, 4 * in_step, 4 * out_step,
          c, h, w, ay.kernel, ax.kernel, ay.stride, ax.stride, ay.pad, ax.pad, ay.out, ax.out, int(exclude), fmt)
    return result


def pooling_max(x: ArrayLike, kernel: int | tuple[int, int], *, stride: int | tuple[int, int], pad: Pads = 0,
                layout: str | TensorFormat = "nchw", ceil_mode: bool = False, kernel_c: int = 1, stride_c: int = 1,
                pad_c: int | tuple[int, int] = 0, out: NDArray[Any] | None = None,
                library: Library | None = None) -> NDArray[Any]:
    """Max pooling; the C function follows the dtype of `x`.

    * float32: ``SimdSynetPoolingMax32f``. With ``kernel_c``, ``stride_c``, ``pad_c`` (int or (begin, end)) other
      than 1, 1, 0 it also pools across channels (3D), the channel axis following the same size rule.
    * bf16 (``ml_dtypes.bfloat16``, or raw ``uint16`` bit patterns): ``SimdSynetPoolingMax16b``; the result has
      the dtype of `x`.
    * uint8: ``SimdSynetPoolingMax8u``.

    Parameters are those of :func:`pooling_average` (`stride` required here too: PyTorch's ``max_pool2d``
    strides by the kernel by default, ONNX's ``MaxPool`` by 1).

    The maximum is the fold ``m = m > v ? m : v`` over the window
    in row-major order (per channel), starting from ``-FLT_MAX`` (float32, bf16) or 0 (uint8): a NaN survives only
    as the last element of its window, and an all ``-inf`` window gives ``-FLT_MAX`` (bf16: ``-inf``, 0xFF80).

    Parameters
    ----------
    x
        float32, bf16 or uint8, ``(C, H, W)`` or ``(N, C, H, W)`` for ``"nchw"``; ``(H, W, C)`` or
        ``(N, H, W, C)`` for ``"nhwc"``.
    kernel, stride
        An int or a ``(y, x)`` pair, each >= 1; `stride` is required.
    pad
        Any pad spelling of :func:`pooling_average`; every pad must be < the kernel along its axis.
    layout
        ``"nchw"`` or ``"nhwc"``, or :class:`simdbind.TensorFormat`.
    ceil_mode
        Round the output size up (a last window starting in the end pad is dropped).
    kernel_c, stride_c, pad_c
        Pooling across channels (float32 only): the channel window, its step and its pads (an int or
        ``(begin, end)``).
    out
        Optional output of the result's shape and x's dtype.
    library
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new array of x's dtype.

    Raises
    ------
    DTypeError
        `x` is not float32, bf16 or uint8, or `out` has another dtype.
    ArgumentError
        As :func:`pooling_average`; channel pooling of a dtype other than float32.
    FunctionNotAvailableError
        The library lacks the C function.
    UpstreamDefectError
        On an upstream library, a call that would hit one of its catalogued defects and has no safe route.

    Examples
    --------
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    >>> simdbind.pooling_max(x, 2, stride=2)
    array([[[ 5.,  7.],
            [13., 15.]]], dtype=float32)
    >>> simdbind.pooling_max(x.astype(np.uint8), 3, stride=1, pad=1)[0, 0]
    array([5, 6, 7, 7], dtype=uint8)
    >>> simdbind.pooling_max(x, 2, stride=2, pad=2)
    Traceback (most recent call last):
    ...
    simdbind.errors.ArgumentError: pad: ...
    """
    key = None
    if type(x) is _ndarray and plan_key is not None:  # a planned call: see "plans" in _fastpath.py
        key = plan_key(x.dtype, "pooling_max", x.shape, kernel, stride, pad, layout, ceil_mode, kernel_c, stride_c,
                       pad_c)
        result = run_planned(library, key, out, x)
        if result is not None:
            return result  # type: ignore[no-any-return]
    fmt = _layout(layout)
    x = any_array(x, "x")
    dtype = x.dtype
    if dtype == np.float32:
        kind = "32f"
    elif is_bf16(dtype):
        kind = "16b"
    elif dtype == np.uint8:
        kind = "8u"
    else:
        raise DTypeError(f"x: must have dtype float32, bfloat16 (or uint16 bf16 bits) or uint8, got {dtype}")
    n, c, h, w = _image_dims(x, fmt)
    ay, ax = _geometry(h, w, kernel, stride, pad, ceil_mode)
    kc = size_arg(kernel_c, "kernel_c", minimum=1)
    sc = size_arg(stride_c, "stride_c", minimum=1)
    pcs = begin_end(pad_c, "pad_c")
    three_d = (kc, sc, pcs) != (1, 1, (0, 0))
    if three_d:
        if kind != "32f":
            raise ArgumentError(f"kernel_c/stride_c/pad_c: channel pooling is only available for float32, "
                                f"not {dtype}")
        if c < 1:
            raise ArgumentError("x: channel pooling needs at least 1 channel, got 0")
        ac = _axis("channel", c, kc, sc, pcs, ceil_mode, "pad_c")
    else:
        ac = _Axis(1, 1, 0, 0, c, c)
    result = _new_or_checked_out(out, _out_shape(x, fmt, ac.out, ay.out, ax.out), dtype, x)
    library = library_arg(library)
    if result.size == 0:
        return result
    if kind == "32f":
        with one_isa(library):
            direct = _max32f(library, x, result, n, ac, ay, ax, fmt)
        if direct:
            _plan(library, key, "CALL_POOL_MAX32F", "SimdSynetPoolingMax32f", result, n, 4 * c * h * w,
                  4 * ac.out * ay.out * ax.out, c, h, w, ac.kernel, ay.kernel, ax.kernel, ac.stride, ay.stride,
                  ax.stride, ac.pad, ay.pad, ax.pad, ac.out, ay.out, ax.out, fmt)
        return result
    ffi = library.ffi
    ctype = "uint16_t[]" if kind == "16b" else "uint8_t[]"
    bits = np.uint16 if kind == "16b" else np.uint8  # bf16 as its bit patterns
    function = library.function("SimdSynetPoolingMax16b" if kind == "16b" else "SimdSynetPoolingMax8u")
    src, dst = ffi.from_buffer(ctype, x.view(bits)), ffi.from_buffer(ctype, result.view(bits), require_writable=True)
    in_step, out_step = c * h * w, c * ay.out * ax.out
    with one_isa(library):
        for i in range(n):
            function(src + i * in_step, c, h, w, ay.kernel, ax.kernel, ay.stride, ax.stride, ay.pad, ax.pad,
                     dst + i * out_step, ay.out, ax.out, fmt)
    item = dtype.itemsize
    _plan(library, key, "CALL_POOL_MAX16B" if kind == "16b" else "CALL_POOL_MAX8U",
          "SimdSynetPoolingMax16b" if kind == "16b" else "SimdSynetPoolingMax8u", result, n, item * in_step,
          item * out_step, c, h, w, ay.kernel, ax.kernel, ay.stride, ax.stride, ay.pad, ax.pad, ay.out, ax.out, fmt)
    return result


# -- plans (see "plans" in _fastpath.py) ------------------------------------------------------------------------------
def _plan(library: Any, key: Any, kind: str, function: str, result: np.ndarray, *values: int) -> None:
    """Remember the C call just made (its size_t arguments `values`) for the parameters of `key`."""
    if key is not None:
        remember(library, key, make_plan(library, kind, function, result, *values))

def _geometry(h: int, w: int, kernel: Any, stride: Any, pad: Any, ceil_mode: Any) -> tuple[_Axis, _Axis]:
    ceil = flag(ceil_mode, "ceil_mode")
    ky, kx = yx_pair(kernel, "kernel", 1)
    sy, sx = yx_pair(stride, "stride", 1)
    pad_y, pad_x = pads(pad)
    return _axis("y", h, ky, sy, pad_y, ceil, "pad"), _axis("x", w, kx, sx, pad_x, ceil, "pad")


# -- Max32f and the upstream defects -------------------------------------------------------------------------------
def _call_max32f(library: Library, src: Any, c: int, ac: _Axis, ay: _Axis, ax: _Axis, dst: Any, fmt: int) -> None:
    library.function("SimdSynetPoolingMax32f")(
        src, ac.size, ay.size, ax.size, ac.kernel, ay.kernel, ax.kernel, ac.stride, ay.stride, ax.stride,
        ac.pad, ay.pad, ax.pad, dst, ac.out, ay.out, ax.out, fmt)


def _max32f(library: Library, x: np.ndarray, result: np.ndarray, n: int, ac: _Axis, ay: _Axis, ax: _Axis,
            fmt: int) -> bool:
    """Max32f of the batch around the library's defects; True when it was one direct call per image."""
    ffi = library.ffi
    c = ac.size
    route, padded = max32f_route(library, c, ac, ay, ax, fmt)
    if route == "direct":
        src, dst = ffi.from_buffer("float[]", x), ffi.from_buffer("float[]", result, require_writable=True)
        in_step, out_step = c * ay.size * ax.size, ac.out * ay.out * ax.out
        for i in range(n):
            _call_max32f(library, src + i * in_step, c, ac, ay, ax, dst + i * out_step, fmt)
        return True
    batch_in = x.reshape((n,) + x.shape[-3:])
    batch_out = result.reshape((n,) + result.shape[-3:])
    if route == "via_nhwc":
        nhwc = np.ascontiguousarray(batch_in.transpose(0, 2, 3, 1))
        pooled = np.zeros((n, ay.out, ax.out, c), np.float32)
        _max32f(library, nhwc, pooled, n, ac, ay, ax, _NHWC)
        batch_out[...] = pooled.transpose(0, 3, 1, 2)
        return False
    # pad_channels (NHWC, 2D): extra zero channels are pooled independently and sliced off.
    wide = np.zeros((n, ay.size, ax.size, padded), np.float32)
    wide[..., :c] = batch_in
    pooled = np.zeros((n, ay.out, ax.out, padded), np.float32)
    wide_c = _Axis(1, 1, 0, 0, padded, padded)
    src, dst = ffi.from_buffer("float[]", wide), ffi.from_buffer("float[]", pooled, require_writable=True)
    in_step, out_step = padded * ay.size * ax.size, padded * ay.out * ax.out
    for i in range(n):
        _call_max32f(library, src + i * in_step, padded, wide_c, ay, ax, dst + i * out_step, _NHWC)
    batch_out[...] = pooled[..., :c]
    return False
