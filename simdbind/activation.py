"""Activations fused into the inner product and the convolution (``SimdConvolutionActivationType`` of upstream's
SimdLib.h).

An activation is an :class:`ActivationSpec`: its kind and its parameters, in the order the C side reads them.
Build one with a constructor (``leaky_relu(0.1)``, ``restrict_range(0, 6)``, ``prelu(slopes)`` ...) or name it by
string (``"relu"``), in which case parameters come from the ``params`` argument of the function that takes it, or
from the constructor's defaults where it has them.

Formulas (``x`` is the pre-activation value, bias already added; ``Max(a, b)`` is ``a > b ? a : b``):

============== ================================================ ==============================================
name           value                                            params (C order)
============== ================================================ ==============================================
identity       ``x``                                            none
relu           ``Max(0, x)``                                    none
leaky_relu     ``Max(0, x) + slope * Min(x, 0)``                slope
restrict_range ``Min(Max(lower, x), upper)``                    lower, upper
prelu          ``Max(0, x) + slope[c] * Min(x, 0)``             one slope per output channel / column
elu            ``x >= 0 ? x : alpha * (exp(x) - 1)``            alpha
hswish         ``Max(Min(x, shift) + shift, 0) * scale * x``    shift, scale
mish           ``x > threshold ? x : x * tanh(softplus(x))``    threshold
hard_sigmoid   ``Max(0, Min(x * scale + shift, 1))``            scale, shift (note: scale first)
swish          ``x / (1 + exp(-x * slope))``                    slope
gelu           ``x * (erf(x / sqrt(2)) + 1) / 2``               none
============== ================================================ ==============================================

Parameter rules (checked by :func:`resolve`, before any C code runs), those of every float parameter of simdbind
(the manual's Python API guide, "Arguments"): every parameter must be a finite real number within float32's range,
except that ``restrict_range`` bounds may be infinite (a one-sided clamp); ``prelu`` needs exactly one slope per
channel. NaN is refused everywhere: it would silently turn whole outputs into NaN (or not, depending on the
comparison order), which is never what a caller means. ``restrict_range`` with ``lower > upper`` is accepted: the C
formula defines it (``Min(Max(lower, x), upper)`` is ``upper`` everywhere, upstream and bundled alike, as ONNX
``Clip`` and ``torch.clamp`` give; a NaN input becomes ``upper``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from simdbind._checks import converted, finite_array, plain_array, real
from simdbind.enums import Activation, parse_enum
from simdbind.errors import ArgumentError, DTypeError

__all__ = [
    "ActivationSpec", "resolve", "identity", "relu", "leaky_relu", "restrict_range", "prelu", "elu", "hswish",
    "mish", "hard_sigmoid", "swish", "gelu", "PARAMETER_NAMES",
]

#: The parameters each activation reads, in C order (prelu: one slope per channel).
PARAMETER_NAMES: dict[Activation, tuple[str, ...]] = {
    Activation.IDENTITY: (),
    Activation.RELU: (),
    Activation.LEAKY_RELU: ("slope",),
    Activation.RESTRICT_RANGE: ("lower", "upper"),
    Activation.PRELU: ("slopes",),
    Activation.ELU: ("alpha",),
    Activation.HSWISH: ("shift", "scale"),
    Activation.MISH: ("threshold",),
    Activation.HARD_SIGMOID: ("scale", "shift"),
    Activation.SWISH: ("slope",),
    Activation.GELU: (),
}

#: Defaults used when an activation is named by string without params (None: the parameter is required).
_DEFAULTS: dict[Activation, tuple[float, ...] | None] = {
    Activation.IDENTITY: (),
    Activation.RELU: (),
    Activation.LEAKY_RELU: None,
    Activation.RESTRICT_RANGE: None,
    Activation.PRELU: None,
    Activation.ELU: (1.0,),
    Activation.HSWISH: (3.0, 1.0 / 6.0),
    Activation.MISH: (20.0,),
    Activation.HARD_SIGMOID: (1.0 / 6.0, 0.5),
    Activation.SWISH: (1.0,),
    Activation.GELU: (),
}


@dataclass(frozen=True, eq=False)
class ActivationSpec:
    """An activation kind with its parameters (C order). Prelu keeps its slopes as a read-only float32 array.

    Made by the constructors of this module; :class:`InnerProduct32f <simdbind.InnerProduct32f>`,
    :class:`Convolution32f <simdbind.Convolution32f>` and :func:`conv2d <simdbind.conv2d>` take one as `activation`
    (then without `params`). Two specs are equal when their kinds and float32 parameters are.

    Attributes
    ----------
    kind : Activation
        The C enum member.
    params : tuple of float or numpy.ndarray
        The parameters in the order the C side reads them (:data:`PARAMETER_NAMES`).

    Examples
    --------
    >>> from simdbind import activation as act
    >>> spec = act.hswish()
    >>> spec, spec.kind, spec.params == (3.0, 1.0 / 6.0)
    (hswish(shift=3.0, scale=0.16666666666666666), <Activation.HSWISH: 6>, True)
    >>> act.leaky_relu(0.1) == act.leaky_relu(0.1)
    True
    """

    kind: Activation
    params: tuple[float, ...] | np.ndarray = ()

    @property
    def name(self) -> str:
        """The activation's name in lower case, as functions accept it.

        Examples
        --------
        >>> simdbind.activation.restrict_range(0, 6).name
        'restrict_range'
        """
        return self.kind.name.lower()

    def __repr__(self) -> str:
        if self.kind == Activation.PRELU:
            return f"prelu(<{len(self.params)} slopes>)"
        names = PARAMETER_NAMES[self.kind]
        args = ", ".join(f"{n}={v!r}" for n, v in zip(names, self.params))
        return f"{self.name}({args})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ActivationSpec) or other.kind != self.kind:
            return NotImplemented if not isinstance(other, ActivationSpec) else False
        return bool(np.array_equal(np.asarray(self.params, np.float32), np.asarray(other.params, np.float32)))

    def __hash__(self) -> int:
        return hash((self.kind, np.asarray(self.params, np.float32).tobytes()))


_scalar = real  # the rule of every float parameter


def identity() -> ActivationSpec:
    """No activation: ``x``.

    Returns
    -------
    ActivationSpec

    Examples
    --------
    >>> from simdbind import activation as act
    >>> one = np.ones((1, 1, 1, 1), np.float32)             # a 1x1 convolution applies the activation alone
    >>> x = np.array([[[-2, 0.5]]], np.float32)
    >>> simdbind.conv2d(x, one, activation=act.identity())
    array([[[-2. ,  0.5]]], dtype=float32)
    """
    return ActivationSpec(Activation.IDENTITY)


def relu() -> ActivationSpec:
    """``Max(0, x)``.

    Returns
    -------
    ActivationSpec

    Examples
    --------
    >>> from simdbind import activation as act
    >>> one = np.ones((1, 1, 1, 1), np.float32)             # a 1x1 convolution applies the activation alone
    >>> x = np.array([[[-2, 0.5]]], np.float32)
    >>> simdbind.conv2d(x, one, activation=act.relu())
    array([[[0. , 0.5]]], dtype=float32)
    """
    return ActivationSpec(Activation.RELU)


def leaky_relu(slope: float) -> ActivationSpec:
    """``Max(0, x) + slope * Min(x, 0)`` (any finite slope, negative ones included).

    Parameters
    ----------
    slope : float
        A finite real within float32's range (PyTorch's ``negative_slope``, ONNX's ``alpha``; no default here).

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        `slope` is not a finite real within float32's range.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> one = np.ones((1, 1, 1, 1), np.float32)             # a 1x1 convolution applies the activation alone
    >>> x = np.array([[[-2, -0.5, 3]]], np.float32)
    >>> simdbind.conv2d(x, one, activation=act.leaky_relu(0.5))
    array([[[-1.  , -0.25,  3.  ]]], dtype=float32)
    """
    return ActivationSpec(Activation.LEAKY_RELU, (_scalar(slope, "slope"),))


def restrict_range(lower: float, upper: float) -> ActivationSpec:
    """``Min(Max(lower, x), upper)``: a clamp to ``[lower, upper]``; bounds may be infinite (a one-sided clamp).

    With ``lower > upper`` every output is ``upper``, as ONNX ``Clip`` and ``torch.clamp`` give; a NaN input
    becomes ``upper``.

    Parameters
    ----------
    lower, upper : float
        Real numbers within float32's range, or ±inf; NaN is refused.

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        A bound that is NaN or not a real number.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> one = np.ones((1, 1, 1, 1), np.float32)             # a 1x1 convolution applies the activation alone
    >>> x = np.array([[[-1, 3, 7]]], np.float32)
    >>> simdbind.conv2d(x, one, activation=act.restrict_range(0, 6))
    array([[[0., 3., 6.]]], dtype=float32)
    >>> act.restrict_range(0, float("inf"))
    restrict_range(lower=0.0, upper=inf)
    """
    lo, hi = _scalar(lower, "lower", allow_inf=True), _scalar(upper, "upper", allow_inf=True)
    return ActivationSpec(Activation.RESTRICT_RANGE, (lo, hi))


def prelu(slopes: Any) -> ActivationSpec:
    """``Max(0, x) + slopes[c] * Min(x, 0)``, one finite slope per output channel (inner product: column).

    Parameters
    ----------
    slopes : array_like
        A non-empty 1-d array of finite reals, kept as a private read-only float32 copy.

    Returns
    -------
    ActivationSpec

    Raises
    ------
    DTypeError
        `slopes` is not an array of real numbers.
    ArgumentError
        `slopes` is empty, not 1-d, or holds a value that is not finite. A function that takes the activation refuses
        a count other than its output channels.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> x = -np.ones((2, 1, 1), np.float32)
    >>> w = np.eye(2, dtype=np.float32).reshape(2, 2, 1, 1)
    >>> simdbind.conv2d(x, w, activation=act.prelu([0.5, 2.0])).ravel()
    array([-0.5, -2. ], dtype=float32)
    """
    array = _prelu_slopes(slopes, "slopes")
    return ActivationSpec(Activation.PRELU, array)


def elu(alpha: float = 1.0) -> ActivationSpec:
    """``x >= 0 ? x : alpha * (exp(x) - 1)``.

    Parameters
    ----------
    alpha : float, default 1.0
        PyTorch's and ONNX's ``alpha`` (default 1.0 in both).

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        A parameter that is not a finite real within float32's range.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> act.elu()
    elu(alpha=1.0)
    """
    return ActivationSpec(Activation.ELU, (_scalar(alpha, "alpha"),))


def hswish(shift: float = 3.0, scale: float = 1.0 / 6.0) -> ActivationSpec:
    """``Max(Min(x, shift) + shift, 0) * scale * x``.

    Parameters
    ----------
    shift : float, default 3.0
    scale : float, default 1/6
        The defaults are PyTorch's ``hardswish``.

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        A parameter that is not a finite real within float32's range.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> act.hswish(shift=3.0, scale=0.25)
    hswish(shift=3.0, scale=0.25)
    """
    return ActivationSpec(Activation.HSWISH, (_scalar(shift, "shift"), _scalar(scale, "scale")))


def mish(threshold: float = 20.0) -> ActivationSpec:
    """``x > threshold ? x : x * tanh(log(1 + exp(x)))``.

    Parameters
    ----------
    threshold : float, default 20.0
        Above it the result is ``x`` itself (PyTorch's softplus threshold).

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        A parameter that is not a finite real within float32's range.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> act.mish()
    mish(threshold=20.0)
    """
    return ActivationSpec(Activation.MISH, (_scalar(threshold, "threshold"),))


def hard_sigmoid(scale: float = 1.0 / 6.0, shift: float = 0.5) -> ActivationSpec:
    """``Max(0, Min(x * scale + shift, 1))`` (C order of params: scale, then shift).

    Parameters
    ----------
    scale : float, default 1/6
        PyTorch's ``hardsigmoid`` (ONNX's ``HardSigmoid`` defaults to alpha 0.2).
    shift : float, default 0.5
        ONNX's ``beta``.

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        A parameter that is not a finite real within float32's range.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> one = np.ones((1, 1, 1, 1), np.float32)
    >>> simdbind.conv2d(np.array([[[-6, 0, 3]]], np.float32), one, activation=act.hard_sigmoid())
    array([[[0. , 0.5, 1. ]]], dtype=float32)
    """
    return ActivationSpec(Activation.HARD_SIGMOID, (_scalar(scale, "scale"), _scalar(shift, "shift")))


def swish(slope: float = 1.0) -> ActivationSpec:
    """``x / (1 + exp(-x * slope))``.

    Parameters
    ----------
    slope : float, default 1.0
        1 gives SiLU (``torch.nn.functional.silu``).

    Returns
    -------
    ActivationSpec

    Raises
    ------
    ArgumentError
        A parameter that is not a finite real within float32's range.

    Examples
    --------
    >>> from simdbind import activation as act
    >>> act.swish()
    swish(slope=1.0)
    """
    return ActivationSpec(Activation.SWISH, (_scalar(slope, "slope"),))


def gelu() -> ActivationSpec:
    """``x * (erf(x / sqrt(2)) + 1) / 2`` (the exact Gelu, not the tanh approximation).

    PyTorch's ``gelu(approximate="none")``, ONNX's ``Gelu`` with its default ``approximate="none"``.

    Returns
    -------
    ActivationSpec

    Examples
    --------
    >>> from simdbind import activation as act
    >>> one = np.ones((1, 1, 1, 1), np.float32)
    >>> np.round(simdbind.conv2d(np.array([[[-1, 0, 1]]], np.float32), one, activation=act.gelu()), 4)
    array([[[-0.1587,  0.    ,  0.8413]]], dtype=float32)
    """
    return ActivationSpec(Activation.GELU)


_CONSTRUCTORS: dict[Activation, Callable[..., ActivationSpec]] = {
    Activation.IDENTITY: identity, Activation.RELU: relu, Activation.LEAKY_RELU: leaky_relu,
    Activation.RESTRICT_RANGE: restrict_range, Activation.PRELU: prelu, Activation.ELU: elu,
    Activation.HSWISH: hswish, Activation.MISH: mish, Activation.HARD_SIGMOID: hard_sigmoid,
    Activation.SWISH: swish, Activation.GELU: gelu,
}


def _prelu_slopes(value: Any, name: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        value = plain_array(value, name)
        if value.dtype.kind not in "fiu":
            raise DTypeError(f"{name}: must be a real array, got dtype {value.dtype}")
    array = np.array(converted(value, name, np.float32))  # always a private copy: the C side keeps a pointer to it
    if array.ndim != 1 or array.size == 0:
        raise ArgumentError(f"{name}: must be a non-empty 1-D array of slopes, got shape {array.shape}")
    finite_array(array, name)
    array.flags.writeable = False
    return array


def _from_params(kind: Activation, params: Any, argument: str) -> ActivationSpec:
    """`kind` with `params` given as a sequence in C order (or None: the constructor defaults)."""
    if kind == Activation.PRELU:
        if params is None:
            raise ArgumentError(f"params: {argument}='prelu' needs one slope per channel")
        return ActivationSpec(kind, _prelu_slopes(params, "params"))
    names = PARAMETER_NAMES[kind]
    if params is None:
        defaults = _DEFAULTS[kind]
        if defaults is None:
            raise ArgumentError(f"params: {argument}={kind.name.lower()!r} needs {', '.join(names)}")
        return _CONSTRUCTORS[kind](*defaults)
    if isinstance(params, np.ndarray):
        params = plain_array(params, "params")
        if params.dtype.kind not in "fiu":
            raise DTypeError(f"params: must be real numbers, got dtype {params.dtype}")
        values: list[Any] | None = [float(v) for v in params.ravel()] if params.ndim <= 1 else None
        if values is None:
            raise ArgumentError(f"params: must be 1-D, got shape {params.shape}")
    elif isinstance(params, (list, tuple)):
        values = list(params)
    elif isinstance(params, (int, float, np.integer, np.floating)) and not isinstance(params, bool):
        values = [params]
    else:
        raise ArgumentError(f"params: must be a sequence of numbers, got {type(params).__name__}")
    if len(values) != len(names):
        wanted = f"{len(names)} ({', '.join(names)})" if names else "none"
        raise ArgumentError(f"params: {argument}={kind.name.lower()!r} takes {wanted}, got {len(values)}")
    if not names:
        return _CONSTRUCTORS[kind]()
    return _CONSTRUCTORS[kind](*values)


def as_spec(activation: Any, params: Any = None, argument: str = "activation") -> ActivationSpec:
    """An :class:`ActivationSpec` from a spec, a name, an int or an :class:`Activation` (with `params`)."""
    if isinstance(activation, ActivationSpec):
        if params is not None:
            raise ArgumentError(f"params: must be None when {argument} is an ActivationSpec (it has its own)")
        return activation
    if activation is None:
        activation = Activation.IDENTITY
    kind = parse_enum(Activation, activation, argument)
    return _from_params(Activation(kind), params, argument)


def resolve(activation: Any, params: Any, channels: int, argument: str = "activation"
            ) -> tuple[int, np.ndarray | None]:
    """The C enum value and the float32 params array to pass (None: pass NULL) for `channels` output channels.

    Parameters
    ----------
    activation
        An :class:`ActivationSpec`, a name (any case), an int or an :class:`~simdbind.Activation`; None is identity.
    params
        With a name: the parameters in C order (None: the constructor's defaults, where it has them); with a spec:
        None.
    channels : int
        The output channels (prelu needs one slope for each).
    argument : str
        The argument name that errors use.

    Returns
    -------
    tuple
        ``(value, params)``: the ``SimdConvolutionActivationType`` value and a read-only float32 array, or None.

    Raises
    ------
    ArgumentError
        Naming `argument` or ``params`` when the activation or its parameters break a rule (unknown name, wrong
        count, NaN, prelu slopes not one per channel, params given with a spec).
    DTypeError
        Params that are not real numbers.

    Examples
    --------
    >>> from simdbind.activation import resolve
    >>> resolve("restrict_range", [0, 6], channels=8)
    (3, array([0., 6.], dtype=float32))
    >>> resolve("relu", None, channels=8)
    (1, None)
    >>> resolve("leaky_relu", None, channels=8)
    Traceback (most recent call last):
    ...
    simdbind.errors.ArgumentError: params: activation='leaky_relu' needs slope
    """
    spec = as_spec(activation, params, argument)
    if spec.kind == Activation.PRELU:  # checked again: an ActivationSpec can be made without prelu()'s checks
        slopes = _prelu_slopes(spec.params, f"{argument}.params")
        if slopes.shape != (channels,):
            raise ArgumentError(f"params: prelu needs one slope per output channel ({channels}), got {slopes.size}")
        return int(spec.kind), slopes
    if not spec.params:
        return int(spec.kind), None
    array = np.array(spec.params, np.float32)
    array.flags.writeable = False
    return int(spec.kind), array
