"""Python enums of the C API. Member names are written out so that type checkers see them; every value is read
from the cffi declarations (the header is the only source of the numbers).

``SimdSynetEltwiseOperationSum`` is ``EltwiseOperation.SUM``, accepted as the string ``"sum"`` (any case)
wherever an operation is asked for. ``SimdTensorData32f`` is ``TensorData.FLOAT32`` (NumPy's dtype names).
"""

from __future__ import annotations

import difflib
import enum
from typing import TypeVar

from simdbind._abi import ffi as _ffi

__all__ = ["EltwiseOperation", "UnaryOperation", "Activation", "TensorFormat", "TensorData", "parse_enum",
           "did_you_mean"]


def _c(name: str) -> int:
    """The value of the C enumerator `name`."""
    return int(_ffi.integer_const(name))


class EltwiseOperation(enum.IntEnum):
    """``SimdSynetEltwiseOperationType``: the `op` of :func:`~simdbind.eltwise`.

    Functions accept a member, its value, or its name in any case.

    Examples
    --------
    >>> simdbind.EltwiseOperation.SUM.name.lower(), int(simdbind.EltwiseOperation.SUM)
    ('sum', 1)
    >>> a = np.array([1, 2], np.float32)
    >>> simdbind.eltwise([a, a], simdbind.EltwiseOperation.PRODUCT)
    array([1., 4.], dtype=float32)
    """
    PRODUCT = _c("SimdSynetEltwiseOperationProduct")
    SUM = _c("SimdSynetEltwiseOperationSum")
    MAX = _c("SimdSynetEltwiseOperationMax")
    MIN = _c("SimdSynetEltwiseOperationMin")


class UnaryOperation(enum.IntEnum):
    """``SimdSynetUnaryOperation32fType``: the `op` of :func:`~simdbind.unary` (17 operations).

    Examples
    --------
    >>> [op.name.lower() for op in simdbind.UnaryOperation][:5]
    ['abs', 'ceil', 'cos', 'erf', 'exp']
    >>> simdbind.unary(np.array([-1.5], np.float32), simdbind.UnaryOperation.NEG)
    array([1.5], dtype=float32)
    """
    ABS = _c("SimdSynetUnaryOperation32fAbs")
    CEIL = _c("SimdSynetUnaryOperation32fCeil")
    COS = _c("SimdSynetUnaryOperation32fCos")
    ERF = _c("SimdSynetUnaryOperation32fErf")
    EXP = _c("SimdSynetUnaryOperation32fExp")
    FLOOR = _c("SimdSynetUnaryOperation32fFloor")
    LOG = _c("SimdSynetUnaryOperation32fLog")
    NEG = _c("SimdSynetUnaryOperation32fNeg")
    NOT = _c("SimdSynetUnaryOperation32fNot")
    RCP = _c("SimdSynetUnaryOperation32fRcp")
    ROUND = _c("SimdSynetUnaryOperation32fRound")
    RSQRT = _c("SimdSynetUnaryOperation32fRsqrt")
    SIGN = _c("SimdSynetUnaryOperation32fSign")
    SIN = _c("SimdSynetUnaryOperation32fSin")
    SQRT = _c("SimdSynetUnaryOperation32fSqrt")
    TANH = _c("SimdSynetUnaryOperation32fTanh")
    ZERO = _c("SimdSynetUnaryOperation32fZero")


class Activation(enum.IntEnum):
    """``SimdConvolutionActivationType``: the kinds of :mod:`simdbind.activation`.

    Examples
    --------
    >>> simdbind.Activation.RESTRICT_RANGE, simdbind.Activation(1)
    (<Activation.RESTRICT_RANGE: 3>, <Activation.RELU: 1>)
    """
    IDENTITY = _c("SimdConvolutionActivationIdentity")
    RELU = _c("SimdConvolutionActivationRelu")
    LEAKY_RELU = _c("SimdConvolutionActivationLeakyRelu")
    RESTRICT_RANGE = _c("SimdConvolutionActivationRestrictRange")
    PRELU = _c("SimdConvolutionActivationPrelu")
    ELU = _c("SimdConvolutionActivationElu")
    HSWISH = _c("SimdConvolutionActivationHswish")
    MISH = _c("SimdConvolutionActivationMish")
    HARD_SIGMOID = _c("SimdConvolutionActivationHardSigmoid")
    SWISH = _c("SimdConvolutionActivationSwish")
    GELU = _c("SimdConvolutionActivationGelu")


class TensorFormat(enum.IntEnum):
    """``SimdTensorFormatType`` without ``Unknown``: the ``layout`` of every function (also ``"nchw"``/``"nhwc"``).

    Examples
    --------
    >>> x = np.ones((4, 4, 2), np.float32)                     # (H, W, C)
    >>> simdbind.pooling_max(x, 2, stride=2, layout=simdbind.TensorFormat.NHWC).shape
    (2, 2, 2)
    """
    NCHW = _c("SimdTensorFormatNchw")
    NHWC = _c("SimdTensorFormatNhwc")


class TensorData(enum.IntEnum):
    """``SimdTensorDataType`` without ``Unknown`` (NumPy's dtype names; ``BFLOAT16`` is ``SimdTensorData16b``).

    Examples
    --------
    >>> simdbind.TensorData.FLOAT32, simdbind.TensorData.BFLOAT16
    (<TensorData.FLOAT32: 0>, <TensorData.BFLOAT16: 7>)
    """
    FLOAT32 = _c("SimdTensorData32f")
    INT32 = _c("SimdTensorData32i")
    INT8 = _c("SimdTensorData8i")
    UINT8 = _c("SimdTensorData8u")
    INT64 = _c("SimdTensorData64i")
    UINT64 = _c("SimdTensorData64u")
    BOOL = _c("SimdTensorDataBool")
    BFLOAT16 = _c("SimdTensorData16b")
    FLOAT16 = _c("SimdTensorData16f")


#: The C enum type and enumerator prefix of each class (the test that the classes cover the header reads it).
C_TYPES: dict[type[enum.IntEnum], tuple[str, str]] = {
    EltwiseOperation: ("SimdSynetEltwiseOperationType", "SimdSynetEltwiseOperation"),
    UnaryOperation: ("SimdSynetUnaryOperation32fType", "SimdSynetUnaryOperation32f"),
    Activation: ("SimdConvolutionActivationType", "SimdConvolutionActivation"),
    TensorFormat: ("SimdTensorFormatType", "SimdTensorFormat"),
    TensorData: ("SimdTensorDataType", "SimdTensorData"),
}

E = TypeVar("E", bound=enum.IntEnum)


def did_you_mean(value: object, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` when `value` is a string close to one of `choices`, else ``""``."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value.strip().lower(), choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def parse_enum(kind: type[E], value: object, argument: str) -> E:
    """`value` as a member of `kind`: a member, its value (an int, not a bool), or its name in any case."""
    from simdbind.errors import ArgumentError

    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        member = kind.__members__.get(value.strip().upper())
        if member is not None:
            return member
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            return kind(value)
        except ValueError:
            pass
    names = [name.lower() for name in kind.__members__]
    listed = ", ".join(repr(name) for name in names)
    raise ArgumentError(f"{argument}: must be one of {listed}, got {value!r}{did_you_mean(value, names)}")
