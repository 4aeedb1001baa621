"""Simd's documented header (``src/Simd/SimdLib.h``, or our ``csrc/simd_synet.h``) as cffi declarations: the C
preprocessor resolves its conditionals and macros (its ``#include`` lines dropped: cffi knows the standard types),
what is left is plain C that cffi parses. From the same text: each declared function's prototype (return type,
parameter types and names, ``const`` kept) and each enum's values, and the comparison of two headers."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import cffi

from simdbind.upstream.options import UpstreamError

_INCLUDE = re.compile(r"^\s*#\s*include\b.*$", re.M)
_FUNCTION = re.compile(r"^(?P<result>[\w\s*]+?)\s*\b(?P<name>[A-Za-z_]\w*)\s*\((?P<params>.*)\)$", re.S)


def preprocess(text: str, cc: list[str]) -> str:
    """The header's declarations as the C compiler sees them (C11, this machine's predefined macros), without the
    compiler extensions cffi does not parse (attributes such as SIMD_API's visibility when SIMD_HIDE_INTERNAL)."""
    try:
        result = subprocess.run([*cc, "-E", "-P", "-x", "c", "-std=c11", "-D__attribute__(x)=", "-"],
                                input=_INCLUDE.sub("", text),
                                capture_output=True, text=True, check=False)
    except OSError as error:
        raise UpstreamError(f"header: cannot run the C preprocessor {cc[0]}: {error}") from None
    if result.returncode != 0:
        first = (result.stderr.strip().splitlines() or ["failed"])[0]
        raise UpstreamError(f"header: the C preprocessor rejects it: {first}")
    return result.stdout


def ffi_of(cdef: str) -> cffi.FFI:
    """A cffi FFI with these declarations (ABI mode); an unparsable text is an UpstreamError."""
    ffi = cffi.FFI()
    try:
        ffi.cdef(cdef)
    except (cffi.CDefError, cffi.FFIError) as error:
        raise UpstreamError(f"header: cffi cannot parse the preprocessed header: {error}") from None
    return ffi


@dataclass(frozen=True)
class Parameter:
    type: str  # normalized: "const uint8_t *"
    name: str


@dataclass(frozen=True)
class Prototype:
    name: str
    result: str
    parameters: tuple[Parameter, ...]

    @property
    def text(self) -> str:
        params = ", ".join(f"{p.type} {p.name}" for p in self.parameters) or "void"
        return f"{self.result} {self.name}({params})"

    def pointer_type(self) -> str:
        """The C function-pointer type of the prototype, as cffi's typeof takes it."""
        params = ", ".join(p.type for p in self.parameters) or "void"
        return f"{self.result} (*)({params})"


def normalize(type_text: str) -> str:
    """One spelling of a C type: single spaces, " *" before each star, no space inside "**"."""
    text = " ".join(type_text.replace("*", " * ").split())
    return text.replace("* *", "**").replace("* *", "**")


def _split(text: str, separator: str, opening: str, closing: str) -> list[str]:
    """`text` split at `separator` outside brackets (`opening`/`closing`), each part stripped, empty ones dropped."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _parameter(text: str, index: int) -> Parameter:
    pointer = re.fullmatch(r"(.*\(\s*\*\s*)(\w+)(\s*\).*)", text, re.S)  # a function pointer: void (*name)(...)
    if pointer:
        return Parameter(normalize(pointer.group(1) + pointer.group(3)), pointer.group(2))
    match = re.fullmatch(r"(.*?[\s*])(\w+)\s*(\[[^\]]*\])?", text, re.S)
    if match is None or match.group(1).strip() in ("", "const", "unsigned", "signed", "struct", "enum"):
        return Parameter(normalize(text), f"arg{index}")  # a parameter without a name
    suffix = " *" if match.group(3) else ""  # an array parameter is a pointer
    return Parameter(normalize(match.group(1)) + suffix, match.group(2))


def prototypes(cdef: str) -> dict[str, Prototype]:
    """Every function the preprocessed header declares, by name."""
    found: dict[str, Prototype] = {}
    for statement in _split(cdef, ";", "{", "}"):
        if statement.startswith(("typedef", "struct", "enum", "union")) or "(" not in statement:
            continue
        match = _FUNCTION.match(statement)
        if match is None:
            continue
        params = _split(match.group("params"), ",", "(", ")")
        if params == ["void"]:
            params = []
        found[match.group("name")] = Prototype(match.group("name"), normalize(match.group("result")),
                                               tuple(_parameter(p, i) for i, p in enumerate(params)))
    return found


def enums(ffi: cffi.FFI) -> dict[str, dict[str, int]]:
    """Each typedef'd enum of the declarations: type name -> {member: value}."""
    result = {}
    for name in ffi.list_types()[0]:
        ctype = ffi.typeof(name)
        if ctype.kind == "enum":
            result[name] = dict(sorted(ctype.relements.items(), key=lambda item: (item[1], item[0])))
    return result


def compare(ours: str, theirs: str) -> list[str]:
    """Differences of two preprocessed headers, one line each, by name: for every function both declare its return
    type, parameter count and each parameter's type; for every enum member both define, its value."""
    differences = []
    mine, upstream = prototypes(ours), prototypes(theirs)
    for name in sorted(mine.keys() & upstream.keys()):
        a, b = mine[name], upstream[name]
        if a.result != b.result:
            differences.append(f"{name}: returns {a.result} here, {b.result} in Simd's header")
        if len(a.parameters) != len(b.parameters):
            differences.append(f"{name}: {len(a.parameters)} parameters here, {len(b.parameters)} in Simd's header "
                               f"({b.text})")
            continue
        for index, (p, q) in enumerate(zip(a.parameters, b.parameters), 1):
            if p.type != q.type:
                differences.append(f"{name}: parameter {index} ({q.name}) is {p.type} here, {q.type} in Simd's "
                                   "header")
    our_enums, their_enums = enums(ffi_of(ours)), enums(ffi_of(theirs))
    their_values = {member: (enum, value) for enum, members in their_enums.items() for member, value in members.items()}
    for enum, members in sorted(our_enums.items()):
        for member, value in members.items():
            if member in their_values and their_values[member][1] != value:
                differences.append(f"{enum}: {member} = {value} here, {their_values[member][1]} in Simd's header")
    return differences


def our_header() -> Path | None:
    """csrc/simd_synet.h of the checkout simdbind runs from (an installed wheel has no C sources: None)."""
    import simdbind

    path = Path(simdbind.__file__).resolve().parent.parent / "csrc" / "simd_synet.h"
    return path if path.is_file() else None
