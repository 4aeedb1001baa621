"""Python enums of the C API, read from the cffi declarations (the header is their only source).

Member names are the C names without the common prefix, in snake case: ``SimdSynetEltwiseOperationSum`` becomes
``EltwiseOperation.SUM`` and is accepted as the string ``"sum"`` wherever an operation is asked for.
"""

from __future__ import annotations

import enum
import re

from simdbind._abi import ffi as _ffi


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _from_header(enum_name: str, c_type: str, prefix: str, *, skip: tuple[str, ...] = ()) -> type[enum.IntEnum]:
    members = {
        _snake(name[len(prefix):]).upper(): value
        for name, value in sorted(_ffi.typeof(c_type).relements.items(), key=lambda item: item[1])
        if name.startswith(prefix) and name[len(prefix):] not in skip
    }
    return enum.IntEnum(enum_name, members)


EltwiseOperation = _from_header("EltwiseOperation", "SimdSynetEltwiseOperationType", "SimdSynetEltwiseOperation")
UnaryOperation = _from_header("UnaryOperation", "SimdSynetUnaryOperation32fType", "SimdSynetUnaryOperation32f")
Activation = _from_header("Activation", "SimdConvolutionActivationType", "SimdConvolutionActivation")
TensorFormat = _from_header("TensorFormat", "SimdTensorFormatType", "SimdTensorFormat", skip=("Unknown",))
TensorData = _from_header("TensorData", "SimdTensorDataType", "SimdTensorData", skip=("Unknown",))


def parse_enum(kind: type[enum.IntEnum], value: object, argument: str) -> enum.IntEnum:
    """`value` as a member of `kind`: a member, its value, or its name in any case ("sum", "SUM")."""
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
    names = ", ".join(repr(name.lower()) for name in kind.__members__)
    raise ArgumentError(f"{argument}: must be one of {names}, got {value!r}")
