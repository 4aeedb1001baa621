"""FP32 convolution: the ``SimdSynetConvolution32f*`` context as :class:`Convolution32f`, and :func:`conv2d`.

Layouts (the weight layout follows the tensor format): ``"nchw"`` takes src ``[N][C][H][W]`` and weights OIHW ``[dstC][srcC/group][kY][kX]``;
``"nhwc"`` takes src ``[N][H][W][C]`` and weights HWIO ``[kY][kX][srcC/group][dstC]`` (all output channels
innermost, whatever the group). :func:`convert_weight` converts between the two.

Upstream's GemmNT algorithm (``info`` ends in ``GemmNT``) can read up to 7 floats *before* src (found by the
suite's guard zones, docs/upstream.md: e.g. NHWC 1x1 with one output channel and fewer than 8 input channels); a
NaN there poisons outputs. On the upstream versions the catalogue names, such a context gets src behind a zeroed
guard. On v7.1.162 a convolution with one input and one output channel at stride 1 gets a second output channel of
zero weights (AVX-512 crashes on kernels wider than 5 and gets non-square ones wrong), and a strided or dilated NCHW
one whose taps would fall in the left or right pad inside a row gets its src copied between explicit zero columns
(the AVX-512 im2col reads outside the row there). Every route lives in :mod:`simdbind._routes`.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike

from simdbind import _routes
from simdbind._checks import (LAYOUT_NAMES, FloatArray, Pads, input_array, layout as layout_arg, library_arg, native,
                              output_array, pads as pads_arg, refuse_overlap, reported_size, size_arg, ndarray_arg,
                              yx_pair)
from simdbind._fastpath import (CALL, F32, c_address, pack_plan, plan_for, plan_key, planned_call, planned_output,
                                remember)
from simdbind._context import NativeContext
from simdbind.activation import resolve
from simdbind.errors import ArgumentError, DTypeError, SimdBindError
from simdbind.enums import Activation, TensorFormat
from simdbind.library import Library, check_memory, one_isa

__all__ = ["Convolution32f", "conv2d", "convert_weight"]

_WEIGHT_NAMES = {"nchw": "nchw", "oihw": "nchw", "nhwc": "nhwc", "hwio": "nhwc"}
_ndarray = np.ndarray


#: Largest weights + scratch (floats) of a context that conv2d keeps for its parameter tuple: the per-call overhead
#: matters on small convolutions, while up to PlanCache.limit large ones would hold gigabytes.
CACHED_CONV_FLOATS = 1 << 16

#: Floats of zeros before src for upstream's GemmNT (it was seen reading 7 before; one 512-bit vector covers it).
SRC_GUARD = 16


def _layout(value: Any) -> str:
    """The layout's name, "nchw" or "nhwc" (the vocabulary's :func:`~simdbind._checks.layout` decides)."""
    return LAYOUT_NAMES[layout_arg(value)]


def _pads(value: Any) -> tuple[int, int, int, int]:
    """pad as the C side takes it, (top, left, bottom, right), from any spelling :func:`~simdbind._checks.pads`
    accepts."""
    (top, bottom), (left, right) = pads_arg(value)
    return top, left, bottom, right


def _weight_shape(layout: str, dst_c: int, group_c: int, k_y: int, k_x: int) -> tuple[int, int, int, int]:
    """The weight shape of `layout`: OIHW for "nchw", HWIO for "nhwc"."""
    return (dst_c, group_c, k_y, k_x) if layout == "nchw" else (k_y, k_x, group_c, dst_c)


_WEIGHT_LAYOUTS = {"nchw": "OIHW (dstC, srcC/group, kY, kX)", "nhwc": "HWIO (kY, kX, srcC/group, dstC)"}


def _weight_mistake(layout: str, shape: tuple[int, ...], expected: tuple[int, int, int, int]) -> ArgumentError:
    """The error for weights of the wrong shape, naming the layout mistake when they have the other layout's."""
    other = "nhwc" if layout == "nchw" else "nchw"
    message = f"weight: must have shape {expected}, {_WEIGHT_LAYOUTS[layout]} for layout={layout!r}, got {shape}"
    swapped = (2, 3, 1, 0) if layout == "nchw" else (3, 2, 0, 1)  # expected's axes in the other layout's order
    if shape == tuple(expected[i] for i in swapped):
        message += (f": that is the {_WEIGHT_LAYOUTS[other].split()[0]} shape of layout={other!r}; pass "
                    f"layout={other!r}, or convert the weights with convert_weight(weight, {other!r}, {layout!r})")
    return ArgumentError(message)


def convert_weight(weight: Any, source: str, target: str) -> np.ndarray:
    """Convolution weights converted between the layouts of the two tensor formats.

    ``source``/``target``: ``"nchw"`` (or ``"oihw"``): ``[dstC][srcC/group][kY][kX]``; ``"nhwc"`` (or ``"hwio"``):
    ``[kY][kX][srcC/group][dstC]``. The group needs no special handling: in both layouts the input axis holds the
    ``srcC/group`` channels of the output channel's group. Returns a new C-contiguous float32 array.

    Parameters
    ----------
    weight : array_like
        A 4-d float32 array in the `source` layout.
    source, target : str
        ``"nchw"``/``"oihw"`` or ``"nhwc"``/``"hwio"``, any case.

    Returns
    -------
    numpy.ndarray
        A new array (a copy also when `source` and `target` are the same layout).

    Raises
    ------
    ArgumentError
        An unknown layout name, or `weight` not 4-d.
    DTypeError
        `weight` not float32.

    Examples
    --------
    >>> w = np.zeros((64, 3, 5, 7), np.float32)                  # OIHW: 64 outputs, 3 inputs, 5x7 kernel
    >>> simdbind.convert_weight(w, "nchw", "nhwc").shape         # HWIO
    (5, 7, 3, 64)
    """
    def name(value: Any, argument: str) -> str:
        key = value.strip().lower() if isinstance(value, str) else None
        if key not in _WEIGHT_NAMES:
            raise ArgumentError(f"{argument}: must be 'nchw'/'oihw' or 'nhwc'/'hwio', got {value!r}")
        return _WEIGHT_NAMES[key]

    source, target = name(source, "source"), name(target, "target")
    array = input_array(weight, "weight", np.float32)
    if array.ndim != 4:
        raise ArgumentError(f"weight: must have 4 dimensions, got shape {array.shape}")
    if source == target:
        return array.copy()
    axes = (2, 3, 1, 0) if source == "nchw" else (3, 2, 0, 1)
    return np.ascontiguousarray(array.transpose(axes))


class Convolution32f(NativeContext):
    """An FP32 convolution context (``SimdSynetConvolution32fInit`` ... ``Forward``), ready to run.

    Parameters
    ----------
    src_shape
        One image: ``(C, H, W)`` for ``"nchw"``, ``(H, W, C)`` for ``"nhwc"``; or with the batch first (then
        ``batch`` must be left at 1 or agree).
    out_channels
        dstC.
    kernel, stride, dilation
        An int or a ``(y, x)`` pair, each >= 1. Defaults: stride 1, dilation 1.
    pad
        Default 0. An int ``p``, a ``(py, px)`` pair, ``((top, bottom), (left, right))``, or ONNX's
        ``(top, left, bottom, right)`` (the spellings of the pooling functions). The output size is the floor-mode
        one, ``(H + top + bottom - (dilation*(kernel-1) + 1)) // stride + 1``, and must be >= 1.
    group
        Divides both srcC and dstC. ``group == srcC == dstC`` is depthwise.
    activation, params
        An activation name, enum value or spec from :mod:`simdbind.activation`, with its parameters (Prelu: one
        slope per output channel).
    layout
        ``"nchw"`` or ``"nhwc"``: the format of source, destination and weights.
    batch
        Images per :meth:`forward` call, >= 1.
    weight
        float32, OIHW ``(dstC, srcC/group, kY, kX)`` for ``"nchw"``, HWIO ``(kY, kX, srcC/group, dstC)`` for
        ``"nhwc"`` (see :func:`convert_weight`).
    bias
        None or float32 ``(dstC,)``.
    library
        The Simd library (default: :func:`simdbind.default_library`).

    Raises
    ------
    ArgumentError
        A shape, kernel, stride, dilation, pad, group or batch out of range (zero, a group that does not divide
        the channels, an empty output), an unknown `layout` or activation, params that do not fit the activation,
        or a `weight` of the wrong shape (OIHW given with ``"nhwc"`` or HWIO with ``"nchw"`` is named as that
        mistake, with the :func:`convert_weight` call that fixes it) or a `bias` that is not dstC values.
    DTypeError
        `weight` or `bias` that is not float32.
    FunctionNotAvailableError
        The library lacks the ``SimdSynetConvolution32f*`` functions.
    SimdBindError
        The library's Init returned NULL for parameters that pass every check.

    See Also
    --------
    conv2d : the one-shot function.

    Notes
    -----
    The context keeps private read-only copies of weight, bias and params for its whole life, so later changes to
    the caller's arrays never reach it. :meth:`forward` may be called from several threads at once: on the bundled
    library every call gets its own scratch (the C context is then only read); on an external library the calls
    are serialized by a lock, because upstream mutates the context during Forward (it grows its lazy buffer and GEMM statistics, and Info rewrites its string). A context
    cannot be copied or pickled (:class:`~simdbind.errors.ContextCopyError`): create another one instead.

    Every field is checked before Init (upstream dies with SIGFPE on stride 0 or kernel 0, and accepts a group that
    does not divide the channels or an activation >= 11); an Init that still returns NULL becomes an error naming
    the rule. The bundled library chooses its algorithm per shape and names it in :attr:`info`: ``DepthwiseNchw``,
    ``DepthwiseNhwc``, ``Direct1x1``, ``WinogradF4x4``, ``WinogradF2x2``, ``NhwcDirect`` or ``GemmNN``; bias and
    activation are fused into the GEMM epilogue, and the work is split over ``library.set_threads`` threads.

    Examples
    --------
    >>> w = np.ones((1, 1, 3, 3), np.float32)                   # OIHW: a 3x3 box filter
    >>> conv = simdbind.Convolution32f((1, 3, 3), 1, 3, pad=1, weight=w, bias=np.zeros(1, np.float32))
    >>> conv.forward(np.ones((1, 3, 3), np.float32))            # a single image: (C, H, W) -> (dstC, H, W)
    array([[[4., 6., 4.],
            [6., 9., 6.],
            [4., 6., 4.]]], dtype=float32)
    >>> conv.out_shape, "::" in conv.info
    ((1, 1, 3, 3), True)
    >>> simdbind.Convolution32f((1, 3, 3), 1, 3, stride=0, weight=w)
    Traceback (most recent call last):
    ...
    simdbind.errors.ArgumentError: stride...
    """

    def __init__(self, src_shape: Sequence[int], out_channels: int, kernel: int | Sequence[int], *,
                 stride: int | Sequence[int] = 1, dilation: int | Sequence[int] = 1,
                 pad: Pads = 0, group: int = 1, activation: Any = "identity", params: Any = None,
                 layout: str | TensorFormat = "nchw", batch: int = 1, weight: ArrayLike,
                 bias: ArrayLike | None = None, library: Library | None = None) -> None:
        layout = _layout(layout)
        batch = size_arg(batch, "batch", minimum=1)
        if not isinstance(src_shape, (tuple, list)) or len(src_shape) not in (3, 4):
            raise ArgumentError(f"src_shape: must be a 3-tuple ({'C, H, W' if layout == 'nchw' else 'H, W, C'}) "
                                f"or a 4-tuple with the batch first, got {src_shape!r}")
        dims = [size_arg(v, f"src_shape[{i}]", minimum=1) for i, v in enumerate(src_shape)]
        if len(dims) == 4:
            if batch not in (1, dims[0]):
                raise ArgumentError(f"batch: must agree with src_shape[0] = {dims[0]}, got {batch}")
            batch, dims = dims[0], dims[1:]
        src_c, src_h, src_w = dims if layout == "nchw" else (dims[2], dims[0], dims[1])
        dst_c = size_arg(out_channels, "out_channels", minimum=1)
        k_y, k_x = yx_pair(kernel, "kernel", 1)
        s_y, s_x = yx_pair(stride, "stride", 1)
        d_y, d_x = yx_pair(dilation, "dilation", 1)
        top, left, bottom, right = _pads(pad)
        group = size_arg(group, "group", minimum=1)
        if src_c % group:
            raise ArgumentError(f"group: must divide the input channels {src_c}, got {group}")
        if dst_c % group:
            raise ArgumentError(f"group: must divide out_channels {dst_c}, got {group}")
        dst_h = self._output_size("y", src_h, k_y, s_y, d_y, top, bottom)
        dst_w = self._output_size("x", src_w, k_x, s_x, d_x, left, right)
        act_value, act_params = resolve(activation, params, dst_c, argument="activation")

        weight_shape = _weight_shape(layout, dst_c, src_c // group, k_y, k_x)
        weight_array = input_array(weight, "weight", np.float32)
        if weight_array.shape != weight_shape:
            raise _weight_mistake(layout, weight_array.shape, weight_shape)
        bias_array = None
        if bias is not None:
            bias_array = input_array(bias, "bias", np.float32)
            if bias_array.shape != (dst_c,):
                raise ArgumentError(f"bias: must have shape ({dst_c},) (one value per output channel), "
                                    f"got {bias_array.shape}")

        self.layout = layout
        self.batch = batch
        self.group = group
        self.kernel, self.stride, self.dilation = (k_y, k_x), (s_y, s_x), (d_y, d_x)
        self.pad = (top, left, bottom, right)
        self.activation = act_value
        self.src_shape = (src_c, src_h, src_w) if layout == "nchw" else (src_h, src_w, src_c)
        self.dst_shape = (dst_c, dst_h, dst_w) if layout == "nchw" else (dst_h, dst_w, dst_c)
        self.in_channels, self.out_channels = src_c, dst_c

        self.library = library = library_arg(library)
        # The context upstream gets may differ from the caller's: forward() turns one into the other.
        self._route = route = _routes.conv32f_route(library, layout, src_c, dst_c, src_h, src_w, self.kernel,
                                                    self.stride, self.dilation, self.pad, group)
        c_dst_c, c_src_h, c_src_w, c_top, c_left, c_bottom, c_right = dst_c, src_h, src_w, top, left, bottom, right
        c_src_c, (c_s_y, c_s_x) = src_c, route.context_stride or (s_y, s_x)
        if route.zero_input_channel:
            c_src_c = 2 * src_c
            weight_array = _routes.with_zero_input_channels(weight_array, 1)
        if route.zero_channel:
            c_dst_c = dst_c + 1
            channel_axis = 0 if layout == "nchw" else 3
            weight_array = _routes.with_zero_channel(weight_array, channel_axis)
            bias_array = _routes.with_zero_channel(bias_array, 0)
            if act_value == int(Activation.PRELU):  # one slope per channel; the others' params are not
                act_params = _routes.with_zero_channel(act_params, 0)
        if route.explicit_x_pad:
            c_src_w, c_left, c_right = src_w + left + right, 0, 0
        if route.explicit_y_pad:
            c_src_h, c_top, c_bottom = src_h + top + bottom, 0, 0
        self._c_dst_shape = (c_dst_c, dst_h, dst_w) if layout == "nchw" else (dst_h, dst_w, c_dst_c)
        ffi = library.ffi
        conv = ffi.new("SimdConvolutionParameters *")
        fmt = int(TensorFormat[layout.upper()])
        fields = dict(srcC=c_src_c, srcH=c_src_h, srcW=c_src_w, srcT=0, srcF=fmt, dstC=c_dst_c, dstH=dst_h,
                      dstW=dst_w, dstT=0, dstF=fmt, kernelY=k_y, kernelX=k_x, dilationY=d_y,
                      dilationX=d_x, strideY=c_s_y, strideX=c_s_x, padY=c_top, padX=c_left, padH=c_bottom,
                      padW=c_right,
                      group=group, activation=act_value)
        for key, value in fields.items():
            setattr(conv, key, value)
        with one_isa(library):  # the ISA Init fixes for the context (bundled) is the one recorded
            isa = library.isa
            ctx = library.function("SimdSynetConvolution32fInit")(batch, conv)
        if ctx == ffi.NULL:
            check_memory(library, "SimdSynetConvolution32fInit")
            raise SimdBindError(
                f"SimdSynetConvolution32fInit returned NULL for {self._describe()}: the library refused parameters "
                "that pass every simdbind rule (floor-mode output size, srcF == dstF in nchw/nhwc, float32 "
                "tensors, positive kernel/stride/dilation, group dividing the channels, activation in range)")
        handle = ffi.gc(ctx, library.function("SimdRelease"))
        # Private read-only copies: the C side keeps pointers to them. Upstream's GemmNT reads before its operands,
        # the weights as well as src: both reach it behind zeros (a NaN or Inf there would poison the sums).
        guarded = _routes.CONV32F_GEMMNT_READS_BEFORE_SRC.taken(library)
        self._weight = self._frozen(weight_array, SRC_GUARD if guarded else 0)
        self._bias = None if bias_array is None else self._frozen(bias_array)
        self._params = None if act_params is None else self._frozen(np.asarray(act_params, np.float32))
        internal = ffi.new("SimdBool *")
        library.function("SimdSynetConvolution32fSetParams")(
            handle, ffi.from_buffer("float[]", self._weight), internal,
            ffi.NULL if self._bias is None else ffi.from_buffer("float[]", self._bias),
            ffi.NULL if self._params is None else ffi.from_buffer("float[]", self._params))
        check_memory(library, "SimdSynetConvolution32fSetParams")  # transformed or packed weights
        self.internal = bool(internal[0])
        name = "SimdSynetConvolution32fExternalBufferSize"
        self._external = reported_size(library.function(name)(handle), name, library)
        # Info rewrites a string buffer inside the context on every call (upstream): read once, before any thread
        # can share the context, and kept as a Python string.
        text = library.function("SimdSynetConvolution32fInfo")(handle)
        self._info = "" if text == ffi.NULL else ffi.string(text).decode(errors="replace")
        self._zero_out = _routes.CONV32F_GEMM_READS_DST.taken(library)
        self._guard_src = guarded and self._info.endswith("GemmNT")
        self._scratch = threading.local()
        # Upstream contexts mutate themselves in Forward; ours only when Forward gets no buffer, which forward()
        # never lets happen (every call brings a scratch of its thread).
        # The planned forward (see "plans" in _fastpath.py): a context that no route changes, called as it is.
        self._batch_shapes = ((self.batch, *self.src_shape), (self.batch, *self.dst_shape))
        plain = route == _routes.ConvolutionRoute() and not self._guard_src
        address = c_address(library, "SimdSynetConvolution32fForward")
        self._fast_plan = None if not (plain and address) else (
            CALL["CALL_CONV32F"], address, pack_plan(
                int(ffi.cast("uintptr_t", ctx)), 4 * batch * src_c * src_h * src_w, 4 * self._external,
                4 * batch * dst_c * dst_h * dst_w, int(self._zero_out)))
        # conv2d may reuse the context with its caller's weights where they need no guard of zeros before them.
        self._reloadable = self._fast_plan is not None and not guarded
        self._reload_lock = threading.Lock()  # conv2d's SetParams + Forward on a cached context (see _reloaded)
        self._internal_flag = internal
        self._own(handle, isa=isa, serialised=_routes.serialises_context_calls(library))

    @staticmethod
    def _frozen(array: np.ndarray, behind: int = 0) -> np.ndarray:
        """A read-only float32 copy of `array`, preceded by `behind` zero floats."""
        copy = _routes.behind_zeros(array, behind)
        copy.flags.writeable = False
        return copy

    @staticmethod
    def _output_size(axis: str, size: int, kernel: int, stride: int, dilation: int, begin: int, end: int) -> int:
        span = dilation * (kernel - 1) + 1
        if size + begin + end < span:
            raise ArgumentError(
                f"kernel: the dilated kernel spans {span} along {axis}, more than the padded input "
                f"{size} + {begin} + {end} = {size + begin + end}: the output would be empty")
        return (size + begin + end - span) // stride + 1

    def _describe(self) -> str:
        return (f"{self.layout} src {self.src_shape} batch {self.batch} -> {self.dst_shape}, kernel {self.kernel}, "
                f"stride {self.stride}, dilation {self.dilation}, pad {self.pad}, group {self.group}")

    # -- properties --------------------------------------------------------------------------------------------
    @property
    def info(self) -> str:
        """The implementation's description of the algorithm it chose, e.g. ``"avx2::GemmNN"`` (read at creation).

        Raises
        ------
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> conv = simdbind.Convolution32f((16, 8, 8), 16, 1, weight=np.ones((16, 16, 1, 1), np.float32))
        >>> conv.info.split("::")[1]                                # the bundled 1x1 stride 1 pad 0 algorithm
        'Direct1x1'
        """
        self._live()
        return self._info

    @property
    def external_buffer_size(self) -> int:
        """Floats of scratch one Forward needs (``buffer=`` must hold at least this many).

        Raises
        ------
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> conv = simdbind.Convolution32f((1, 4, 4), 1, 3, weight=np.ones((1, 1, 3, 3), np.float32))
        >>> conv.external_buffer_size >= 0
        True
        """
        self._live()
        return self._external

    @property
    def internal_buffer_size(self) -> int:
        """Floats the C context holds itself (transformed weights, scratch it allocated).

        Raises
        ------
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> conv = simdbind.Convolution32f((1, 4, 4), 1, 3, weight=np.ones((1, 1, 3, 3), np.float32))
        >>> conv.internal_buffer_size >= 0
        True
        """
        handle = self._live()
        size = self.library.function("SimdSynetConvolution32fInternalBufferSize")
        if self._lock is None:
            return int(size(handle))
        with self._lock:
            return int(size(handle))

    @property
    def out_shape(self) -> tuple[int, ...]:
        """Shape of :meth:`forward`'s result for a batched input: ``(batch, *dst_shape)``.

        Examples
        --------
        >>> conv = simdbind.Convolution32f((3, 32, 32), 8, 3, stride=2, pad=1, batch=4,
        ...                                weight=np.ones((8, 3, 3, 3), np.float32))
        >>> conv.out_shape
        (4, 8, 16, 16)
        """
        return (self.batch, *self.dst_shape)

    # -- running -----------------------------------------------------------------------------------------------
    def forward(self, x: ArrayLike, *, out: FloatArray | None = None,
                buffer: FloatArray | None = None) -> FloatArray:
        """Convolve a batch (``SimdSynetConvolution32fForward``).

        Parameters
        ----------
        x
            float32 ``(batch, *src_shape)``; a single image ``src_shape`` when ``batch == 1``.
        out
            Optional float32 output, ``(batch, *dst_shape)`` (or ``dst_shape`` for a single image); must not overlap
            ``x`` or ``buffer``.
        buffer
            Optional scratch: a writeable C-contiguous float32 array of at least :attr:`external_buffer_size`
            elements, overwritten. Without it each thread uses a scratch of its own.

        Returns
        -------
        numpy.ndarray
            `out`, or a new float32 array of the output's shape.

        Raises
        ------
        DTypeError
            `x`, `out` or `buffer` that is not float32.
        ArgumentError
            `x` of another shape, a bad `out` (shape, writability, overlap) or a `buffer` that is too small, not
            writeable or overlapping.
        ContextClosedError
            The context was closed.

        Examples
        --------
        >>> conv = simdbind.Convolution32f((2, 3, 3), 1, 1, batch=2, weight=np.array([[[[1]], [[-1]]]], np.float32))
        >>> x = np.stack([np.full((2, 3, 3), 5, np.float32), np.zeros((2, 3, 3), np.float32)])
        >>> x[:, 1] = 2
        >>> conv.forward(x)[:, 0, 0]                               # channel 0 - channel 1, per image
        array([[ 3.,  3.,  3.],
               [-2., -2., -2.]], dtype=float32)
        >>> scratch = np.empty(max(conv.external_buffer_size, 1), np.float32)
        >>> out = np.empty(conv.out_shape, np.float32)
        >>> conv.forward(x, out=out, buffer=scratch) is out
        True
        """
        if buffer is None:
            found = self._fast_forward(x, out)
            if found is not None:
                return found  # type: ignore[no-any-return]
        handle = self._live()  # a closed context raises before any argument is looked at
        src = input_array(x, "x", np.float32)
        full = (self.batch, *self.src_shape)
        out_shape: tuple[int, ...]
        if src.shape == full:
            out_shape = (self.batch, *self.dst_shape)
        elif self.batch == 1 and src.shape == self.src_shape:
            out_shape = self.dst_shape
        else:
            single = f" or {self.src_shape}" if self.batch == 1 else ""
            raise ArgumentError(f"x: must have shape {full}{single} ({self.layout}), got {src.shape}")
        scratch = None
        if buffer is not None:
            buffer = ndarray_arg(buffer, "buffer")
            native(buffer.dtype, "buffer")
            if buffer.dtype != np.float32:
                raise DTypeError(f"buffer: must have dtype float32, got {buffer.dtype}")
            if not buffer.flags.c_contiguous or not buffer.flags.writeable:
                raise ArgumentError("buffer: must be C-contiguous and writeable")
            if buffer.size < self._external:
                raise ArgumentError(f"buffer: must hold at least {self._external} float32 elements "
                                    f"(external_buffer_size), got {buffer.size}")
            if np.may_share_memory(buffer, src):
                raise ArgumentError("buffer: must not overlap x")
            # Upstream's GemmNT reads before its im2col matrix too: it gets the context's own, behind zeros.
            scratch = None if self._guard_src else buffer
        out = output_array(out, "out", out_shape, np.float32, [("x", src)])
        if scratch is not None and np.may_share_memory(scratch, out):
            raise ArgumentError("buffer: must not overlap out")
        if scratch is None:
            scratch = self._thread_scratch()
        route = self._route
        if route.explicit_x_pad or route.explicit_y_pad:
            top, left, bottom, right = self.pad
            y, x = int(route.explicit_y_pad), int(route.explicit_x_pad)
            src = _routes.with_pad(src, top * y, left * x, bottom * y, right * x)
        if route.zero_input_channel:
            src = _routes.with_zero_input_channels(src, src.ndim - 3)
        c_out = np.zeros((self.batch, *self._c_dst_shape), np.float32) if self._route.zero_channel else out
        if self._zero_out:
            c_out.fill(0.0)  # CONV32F-BASE-GEMM-READS-DST: upstream's Base GEMM folds old dst in
        if self._guard_src:
            src = _routes.behind_zeros(src, SRC_GUARD)
        ffi = self.library.ffi
        run = self.library.function("SimdSynetConvolution32fForward")
        args = (ffi.from_buffer("float[]", src), ffi.from_buffer("float[]", scratch, require_writable=True),
                ffi.from_buffer("float[]", c_out, require_writable=True))
        if self._lock is None:
            run(handle, *args)
        else:
            with self._lock:
                run(handle, *args)
        if self._route.zero_channel:  # the caller's one channel is the first of the context's two
            out.reshape(self.batch, *self.dst_shape)[...] = c_out[:, :1] if self.layout == "nchw" else c_out[..., :1]
        return out

    __call__ = forward

    def _fast_forward(self, x: Any, out: Any) -> Any:
        """:meth:`forward` without `buffer` as one planned call, or None when an argument is not what it takes."""
        plan, handle = self._fast_plan, self._handle
        if plan is None or handle is None or type(x) is not _ndarray or x.dtype is not F32:
            return None
        shape = x.shape
        full, full_out = self._batch_shapes
        out_shape: tuple[int, ...]
        if shape == full:
            out_shape = full_out
        elif shape == self.src_shape and self.batch == 1:
            out_shape = self.dst_shape
        else:
            return None
        result = planned_output(out, out_shape, F32)
        if result is None:
            return None
        scratch = getattr(self._scratch, "array", None)
        if scratch is None:
            scratch = self._thread_scratch()
        lock = self._lock
        if lock is None:
            done = planned_call(plan[0], plan[1], plan[2], x, scratch, result)
        else:
            with lock:
                done = planned_call(plan[0], plan[1], plan[2], x, scratch, result)
        return result if done else None

    def _reloaded(self, weight: np.ndarray, bias: np.ndarray | None, x: Any, out: Any) -> Any:
        """conv2d on a cached context: SetParams with the caller's `weight` and `bias` (float32, C-contiguous, of
        this context's shapes) and the context's own activation params, then the planned forward, both under one lock (other conv2d calls use the same
        context with their own weights); None when an argument is not what the plan takes."""
        if not self._reloadable:
            return None
        c = self.library._bindings
        if c is None:
            return None
        from_buffer, f32 = c.from_buffer, c.f32
        try:  # from_buffer refuses non-contiguous arrays (ValueError)
            pw = from_buffer(f32, weight)
            pb = c.null if bias is None else from_buffer(f32, bias)
            pp = c.null if self._params is None else from_buffer(f32, self._params)
        except ValueError:
            return None
        set_params = c.cache.get("conv2d SetParams")
        if set_params is None:
            set_params = c.cache["conv2d SetParams"] = c.function("SimdSynetConvolution32fSetParams")
        with self._reload_lock:
            handle = self._handle
            if handle is None:
                return None
            set_params(handle, pw, self._internal_flag, pb, pp)
            check_memory(self.library, "SimdSynetConvolution32fSetParams")  # else Forward would write nothing
            return self._fast_forward(x, out)

    def _thread_scratch(self) -> np.ndarray:
        scratch = getattr(self._scratch, "array", None)
        if scratch is None:
            zeros = np.zeros(max(self._external, 1), np.float32)
            scratch = self._scratch.array = _routes.behind_zeros(zeros, SRC_GUARD) if self._guard_src else zeros
        return scratch

    def _key(self) -> str:
        return f"{self._describe()}, {self._info}"


def conv2d(x: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None, *, stride: int | Sequence[int] = 1,
           dilation: int | Sequence[int] = 1, pad: Pads = 0, group: int = 1, activation: Any = "identity",
           params: Any = None, layout: str | TensorFormat = "nchw", out: FloatArray | None = None,
           library: Library | None = None) -> FloatArray:
    """One-shot convolution: builds a :class:`Convolution32f` from the shapes of ``x`` and ``weight``, runs it once.

    ``x`` is ``(N, C, H, W)`` / ``(C, H, W)`` for ``"nchw"`` or ``(N, H, W, C)`` / ``(H, W, C)`` for ``"nhwc"``;
    ``weight`` is OIHW for ``"nchw"``, HWIO for ``"nhwc"``; the kernel size and out_channels come from it.

    The context is kept in the library's plan cache for the next call with the same shapes and parameters, which
    sets this call's weights on it (SetParams, then Forward).

    Parameters
    ----------
    x : array_like
        float32 image(s).
    weight : array_like
        float32 OIHW ``(dstC, srcC/group, kY, kX)`` for ``"nchw"``, HWIO ``(kY, kX, srcC/group, dstC)`` for
        ``"nhwc"``.
    bias : array_like, optional
        float32 ``(dstC,)``.
    stride, dilation : int or (int, int), optional
        Default 1 (PyTorch's and ONNX's defaults too).
    pad : int or tuple, optional
        Default 0. ``p``, ``(py, px)``, ``((top, bottom), (left, right))`` or ONNX's
        ``(top, left, bottom, right)``. There is no ``"same"``: compute the pads.
    group : int, optional
        Default 1; divides srcC and dstC (``group == srcC == dstC``: depthwise).
    activation, params : optional
        The fused activation (default ``"identity"``): a name with its params in C order, or a spec from
        :mod:`simdbind.activation`.
    layout : str, optional
        ``"nchw"`` (default) or ``"nhwc"``: the format of x, the weights and the result.
    out : numpy.ndarray, optional
        float32 output of the result's shape, overlapping no input.
    library : Library, optional
        The Simd library to call (default: :func:`simdbind.default_library`).

    Returns
    -------
    numpy.ndarray
        `out`, or a new float32 array: ``(N, dstC, OH, OW)`` / ``(dstC, OH, OW)`` for ``"nchw"``,
        ``(N, OH, OW, dstC)`` / ``(OH, OW, dstC)`` for ``"nhwc"``.

    Raises
    ------
    DTypeError
        An input or `out` that is not float32.
    ArgumentError
        `x` not 3-d or 4-d, a `weight` that does not match x's channels and the group (weights in the other
        layout's shape are named as that mistake), or any error of :class:`Convolution32f`.
    FunctionNotAvailableError
        The library lacks the convolution functions.

    See Also
    --------
    Convolution32f : a context for repeated calls with the same weights.

    Examples
    --------
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> w = np.ones((1, 1, 2, 2), np.float32)
    >>> simdbind.conv2d(x, w, stride=2)                        # sums of 2x2 blocks
    array([[[[10., 18.],
             [42., 50.]]]], dtype=float32)
    >>> simdbind.conv2d(x, w, stride=2, pad=(0, 0, 1, 1), activation="restrict_range", params=[0, 20]).shape
    (1, 1, 2, 2)
    >>> simdbind.conv2d(x, w, dilation=3)[0, 0]                # taps 3 apart: x[0,0] + x[0,3] + x[3,0] + x[3,3]
    array([[30.]], dtype=float32)
    """
    key = None
    if type(x) is _ndarray and type(weight) is _ndarray and x.dtype is F32 and weight.dtype is F32 and (
            bias is None or (type(bias) is _ndarray and bias.dtype is F32)) and plan_key is not None:
        # one context per parameter tuple (see "plans" in _fastpath.py), its weights set from this call's
        key = plan_key(None if bias is None else bias.shape, "conv2d", x.shape, weight.shape, stride, dilation, pad,
                       group, activation, params, layout)
        cached = plan_for(library, key)
        if cached is not None and (out is None or _apart(out, x, weight, bias)):
            found = cached._reloaded(weight, bias, x, out)
            if found is not None:
                return found  # type: ignore[no-any-return]
    layout = _layout(layout)
    src = input_array(x, "x", np.float32)
    if src.ndim not in (3, 4):
        raise ArgumentError(f"x: must have 3 or 4 dimensions ({layout}), got shape {src.shape}")
    w = input_array(weight, "weight", np.float32)
    if isinstance(out, np.ndarray):  # the context copies weight and bias, but the rule is the same everywhere
        refuse_overlap(out, "out", [("x", src), ("weight", w), ("bias", bias)])
    if w.ndim != 4:
        raise ArgumentError(f"weight: must have 4 dimensions, got shape {w.shape}")
    out_channels, kernel = (w.shape[0], w.shape[2:]) if layout == "nchw" else (w.shape[3], w.shape[:2])
    if min(w.shape) < 1:
        raise ArgumentError(f"weight: every dimension must be >= 1, got shape {w.shape}")
    groups = size_arg(group, "group", minimum=1)
    src_c = src.shape[-3] if layout == "nchw" else src.shape[-1]
    if w.shape[1 if layout == "nchw" else 2] * groups != src_c:  # the kernel and dstC read from w are not real
        other = "nhwc" if layout == "nchw" else "nchw"
        message = (f"weight: must be {_WEIGHT_LAYOUTS[layout]} for layout={layout!r}, with srcC/group = "
                   f"{src_c}/{groups} on axis {1 if layout == 'nchw' else 2}, got shape {w.shape}")
        if w.shape[2 if layout == "nchw" else 1] * groups == src_c:
            message += (f": that is the {_WEIGHT_LAYOUTS[other].split()[0]} shape of layout={other!r}; pass "
                        f"layout={other!r}, or convert the weights with convert_weight(weight, {other!r}, {layout!r})")
        raise ArgumentError(message)
    context = Convolution32f(src.shape, out_channels, tuple(kernel), stride=stride, dilation=dilation, pad=pad,
                             group=group, activation=activation, params=params, layout=layout, weight=w, bias=bias,
                             library=library)
    try:
        result: FloatArray = context.forward(src, out=out)
    except BaseException:
        context.close()
        raise
    if key is None or not context._reloadable or w.size + context._external > CACHED_CONV_FLOATS:
        context.close()
    else:
        remember(context.library, key, context)
    return result


def _apart(out: Any, *arrays: Any) -> bool:
    """`out` overlaps none of `arrays` (exact ndarrays or None), by the cheap test when every array owns its
    memory; otherwise by np.may_share_memory."""
    if type(out) is not _ndarray:
        return False
    owner = out.base is None
    for array in arrays:
        if array is None:
            continue
        if array is out or not (owner and array.base is None) and np.may_share_memory(out, array):
            return False
    return True
