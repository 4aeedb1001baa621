"""Every function a library's header declares, callable from Python: ``library.raw.SimdBgrToGray(...)``.

The caller of each function is derived from its prototype. A pointer parameter to a number type takes a contiguous
NumPy array whose element type is that type (``uint8_t *`` a uint8 array, ``float *`` float32, ``void *`` any); a
pointer without ``const`` needs a writeable array; ``const char *`` also takes bytes or str; every pointer takes a
cffi pointer or None (NULL) too. A scalar parameter takes a Python or NumPy number, an enum parameter an
:class:`enum.IntEnum` member of the header's enum (``library.raw.SimdCpuInfoType.SimdCpuInfoAvx2``) or an int.

Sizes are NOT checked at this level: the header does not say how many elements a pointer must reach, so an array
shorter than the sizes and strides passed with it lets the C function read or write outside it. The wrappers of
:mod:`simdbind` (``simdbind.softmax`` and the rest) check everything; use the raw functions where none exists.
"""

from __future__ import annotations

import enum
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simdbind.errors import ArgumentError, DTypeError, FunctionNotAvailableError, LibraryError
from simdbind.upstream import header as headers

#: The name of the cffi declarations beside a cached library (simdbind.upstream.cache writes it).
CDEF_NAME = "cdef.h"

_SIZE_NOTE = ("Sizes are NOT checked at this level: arrays must be large enough for the sizes and strides passed "
              "with them, or the C function reads or writes outside them.")


@dataclass(frozen=True)
class _Kind:
    """How one parameter is converted: "scalar", "array" (dtype None: any), or "cdata" (a cffi object only)."""

    how: str
    ctype: Any
    dtype: np.dtype[Any] | None = None
    writes: bool = False
    text: bool = False  # const char *: bytes and str too
    buffer: Any = None  # the cffi array type an array is passed as (its element type, or char for void *)


def _number_dtype(ffi: Any, ctype: Any) -> np.dtype[Any] | None:
    """The NumPy element type of a cffi primitive number type, or None for other types."""
    if ctype.kind == "enum":
        return np.dtype(f"i{ffi.sizeof(ctype)}")
    if ctype.kind != "primitive":
        return None
    size = ffi.sizeof(ctype)
    if ctype.cname in ("float", "double", "long double"):
        return np.dtype(f"f{size}") if size in (4, 8) else None
    if ctype.cname == "_Bool":
        return np.dtype(np.bool_)
    try:
        signed = int(ffi.cast(ctype, -1)) < 0
    except (TypeError, OverflowError):
        return None
    return np.dtype(f"{'i' if signed else 'u'}{size}")


def _kind(ffi: Any, parameter: headers.Parameter, ctype: Any) -> _Kind:
    if ctype.kind in ("primitive", "enum"):
        return _Kind("scalar", ctype)
    if ctype.kind != "pointer" or parameter.type.count("*") != 1:
        return _Kind("cdata", ctype)
    writes = not parameter.type.split("*")[0].split().count("const")
    item = ctype.item
    if item.kind == "void":
        return _Kind("array", ctype, None, writes, buffer=ffi.typeof("char[]"))
    dtype = _number_dtype(ffi, item)
    if dtype is None:
        return _Kind("cdata", ctype)
    return _Kind("array", ctype, dtype, writes, text=item.cname == "char" and not writes,
                 buffer=ffi.typeof(ffi.getctype(item, "[]")))


class RawFunction:
    """One declared C function with NumPy-aware argument conversion (see the module's docs)."""

    def __init__(self, ffi: Any, function: Any, prototype: headers.Prototype) -> None:
        self.ffi = ffi
        self.function = function
        self.prototype = prototype
        ctype = ffi.typeof(function)
        self.kinds = tuple(_kind(ffi, p, t) for p, t in zip(prototype.parameters, ctype.args))
        self.__name__ = prototype.name
        self.__doc__ = self._doc()

    @property
    def numpy_ready(self) -> bool:
        """Does every pointer parameter take an array (no cffi object needed to call it)?"""
        return all(k.how != "cdata" for k in self.kinds)

    def _doc(self) -> str:
        lines = [self.prototype.text, ""]
        for parameter, kind in zip(self.prototype.parameters, self.kinds):
            if kind.how == "scalar":
                what = "a number" if kind.ctype.kind == "primitive" else f"a {kind.ctype.cname} member or an int"
            elif kind.how == "array":
                element = f"a {kind.dtype} array" if kind.dtype is not None else "an array of any element type"
                what = f"{element}{', writeable' if kind.writes else ''} (or a cffi pointer, or None)"
            else:
                what = f"a cffi {kind.ctype.cname} (or None for a pointer)"
            lines.append(f"{parameter.name}: {what}")
        lines += ["", _SIZE_NOTE]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<raw {self.prototype.text}>"

    def __call__(self, *args: Any) -> Any:
        parameters = self.prototype.parameters
        if len(args) != len(parameters):
            raise ArgumentError(f"{self.__name__}: takes {len(parameters)} arguments ({self.prototype.text}), got "
                                f"{len(args)}")
        converted = [self._convert(value, p, k) for value, p, k in zip(args, parameters, self.kinds)]
        try:
            return self.function(*converted)
        except (TypeError, OverflowError) as error:  # what cffi itself refuses (a scalar out of its type's range)
            raise ArgumentError(f"{self.__name__}: {error}") from None

    def _convert(self, value: Any, parameter: headers.Parameter, kind: _Kind) -> Any:
        where = f"{self.__name__}: {parameter.name} ({parameter.type})"
        if kind.how == "scalar":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ArgumentError(f"{where}: needs a number, got {type(value).__name__}")
            if kind.ctype.kind != "primitive" or kind.ctype.cname not in ("float", "double"):
                if isinstance(value, (float, np.floating)):
                    raise ArgumentError(f"{where}: needs an integer, got {value!r}")
            return int(value) if isinstance(value, (int, np.integer)) else float(value)
        if value is None and kind.ctype.kind == "pointer":
            return self.ffi.NULL
        if isinstance(value, self.ffi.CData):
            return value
        if kind.how == "cdata":
            raise ArgumentError(f"{where}: needs a cffi {kind.ctype.cname} (made with library.raw.ffi)")
        if kind.text and isinstance(value, (bytes, str)):
            return value.encode() if isinstance(value, str) else value
        if not isinstance(value, np.ndarray):
            raise ArgumentError(f"{where}: needs a NumPy array, got {type(value).__name__}")
        if kind.dtype is not None and value.dtype != kind.dtype:
            raise DTypeError(f"{where}: needs a {kind.dtype} array, got {value.dtype}")
        if not (value.flags.c_contiguous or value.flags.f_contiguous):
            raise ArgumentError(f"{where}: needs a contiguous array (pass the base array and a stride instead of a "
                                "strided view)")
        if kind.writes and not value.flags.writeable:
            raise ArgumentError(f"{where}: the function writes through this pointer: the array is read-only")
        return self.ffi.from_buffer(kind.buffer, value, require_writable=kind.writes)


class RawLibrary:
    """The functions and enums one header declares, bound to one library file."""

    def __init__(self, path: str, cdef: str, origin: str) -> None:
        self.path = path
        self.origin = origin
        self.ffi = headers.ffi_of(cdef)
        try:
            self.lib = self.ffi.dlopen(path)
        except OSError as error:
            raise LibraryError(f"raw: cannot load {path}: {error}") from None
        self.prototypes = headers.prototypes(cdef)
        self.enums: dict[str, type[enum.IntEnum]] = {
            name: enum.IntEnum(name, members) for name, members in headers.enums(self.ffi).items()  # type: ignore[misc]
        }
        self._functions: dict[str, RawFunction] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("prototypes", "enums", "_functions", "ffi", "lib"):
            raise AttributeError(name)
        if name in self.enums:
            return self.enums[name]
        return self.function(name)

    def function(self, name: str) -> RawFunction:
        found = self._functions.get(name)
        if found is not None:
            return found
        prototype = self.prototypes.get(name)
        if prototype is None:
            raise AttributeError(f"{name} is not declared by {self.origin}")
        try:
            function = getattr(self.lib, name)
        except AttributeError:  # ABI mode: the symbol is not in the library
            raise FunctionNotAvailableError(f"{name} is declared by {self.origin} but not exported by "
                                            f"{self.path}") from None
        found = self._functions[name] = RawFunction(self.ffi, function, prototype)
        return found

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.prototypes) | set(self.enums))

    def available(self) -> list[str]:
        """The declared functions this library exports (each callable through the raw caller)."""
        names = []
        for name in sorted(self.prototypes):
            try:
                self.function(name)
            except FunctionNotAvailableError:
                continue
            names.append(name)
        return names

    def counts(self) -> dict[str, int]:
        """declared: functions the header declares; callable: those the library exports; numpy: those of them whose
        every pointer parameter takes an array (the others need a cffi object for a struct or a pointer table)."""
        callable_ = self.available()
        return {"declared": len(self.prototypes), "callable": len(callable_),
                "numpy": sum(self.function(name).numpy_ready for name in callable_)}


_cache: dict[tuple[str, str], RawLibrary] = {}
_lock = threading.Lock()


def declarations_for(library_path: str) -> Path | None:
    """The cffi declarations kept beside a library built by ``simdbind upstream build``, or None."""
    candidate = Path(library_path).resolve().parent / CDEF_NAME
    return candidate if candidate.is_file() else None


def raw(library: Any, header: str | os.PathLike[str] | None = None) -> RawLibrary:
    """The raw functions of `library` (a :class:`simdbind.Library`), declared by `header` (a C header, preprocessed
    with the C compiler), or by default by the declarations its cached build keeps beside it."""
    if header is not None:
        from simdbind.upstream.toolchain import _compiler

        path = Path(header)
        if not path.is_file():
            raise LibraryError(f"header: no such file: {header}")
        cdef, origin = headers.preprocess(path.read_text(errors="replace"), _compiler("CC", ("cc", "gcc", "clang"),
                                                                                       "cc")), str(path)
    else:
        found = declarations_for(library.path)
        if found is None:
            raise LibraryError(f"raw: {library.path} has no declarations beside it ({CDEF_NAME}): builds made by "
                               "`simdbind upstream build` have them; for another library pass "
                               "simdbind.upstream.raw.raw(library, header=PATH_OF_ITS_SimdLib.h)")
        cdef, origin = found.read_text(), str(found)
    key = (library.path, cdef)
    with _lock:
        if key not in _cache:
            _cache[key] = RawLibrary(library.path, cdef, origin)
        return _cache[key]
