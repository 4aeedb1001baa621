"""The tools a build runs: git, CMake, Ninja (or make), the C and C++ compilers and ccache; and which of Simd's SIMD
backends the compiler can build for this machine's architecture (a probe compile per backend)."""

from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from simdbind.upstream.options import UpstreamError, UsageError


@dataclass(frozen=True)
class Backend:
    """One of Simd's SIMD backends: its CMake switch (None: always built on its architecture), the flags a probe
    compiles with (upstream's x86.cmake / arm.cmake flags for its sources) and the C++ namespace its code lives in,
    which the built library's symbol table shows."""

    name: str
    option: str | None
    flags: tuple[str, ...]
    namespace: str

    @property
    def symbol(self) -> bytes:
        """The mangled prefix of the backend's functions (``_ZN4Simd4Avx2``)."""
        return f"_ZN4Simd{len(self.namespace)}{self.namespace}".encode()


_AVX512 = ("-mavx512f", "-mavx512cd", "-mavx512bw", "-mavx512vl", "-mavx512dq")
#: Backends per architecture family, lowest first. Upstream leaves SIMD_AMXBF16 off by default; it is switched on here
#: wherever the compiler accepts its flags (the code is only run where the CPU has AMX, upstream dispatches at run
#: time). SVE (aarch64) stays off, as upstream leaves it: its code is written for a fixed vector length.
BACKENDS: dict[str, tuple[Backend, ...]] = {
    "x86": (
        Backend("base", None, (), "Base"),
        Backend("sse41", None, ("-msse4.1", "-msse4.2"), "Sse41"),
        Backend("avx2", None, ("-mavx2", "-mfma", "-mf16c", "-mbmi", "-mbmi2", "-mlzcnt"), "Avx2"),
        Backend("avx512bw", "SIMD_AVX512", _AVX512, "Avx512bw"),
        Backend("avx512vnni", "SIMD_AVX512VNNI", (*_AVX512, "-mavx512vnni"), "Avx512vnni"),
        Backend("amxbf16", "SIMD_AMXBF16",
                (*_AVX512, "-mavx512vnni", "-mavx512vbmi", "-mavx512bf16", "-mamx-tile", "-mamx-int8", "-mamx-bf16"),
                "AmxBf16"),
    ),
    "arm": (
        Backend("base", None, (), "Base"),
        Backend("neon", None, (), "Neon"),
    ),
}

#: What installs each tool, said in the error when it is missing.
_PACKAGES = {
    "git": "Debian/Ubuntu: apt-get install git",
    "cmake": "Debian/Ubuntu: apt-get install cmake, or pip install cmake",
    "c++": "Debian/Ubuntu: apt-get install g++ (or clang), or set CXX",
    "cc": "Debian/Ubuntu: apt-get install gcc (or clang), or set CC",
}


def architecture(machine: str | None = None) -> str:
    """The family of Simd's CMake project for this machine: "x86" or "arm"; others are refused (upstream's CMake
    project knows x86, arm and hexagon, the last only for cross builds)."""
    machine = (machine or platform.machine()).lower()
    if machine in ("x86_64", "amd64", "i686", "i386", "x86"):
        return "x86"
    if machine.startswith(("arm", "aarch64")):
        return "arm"
    raise UpstreamError(f"architecture {machine}: Simd's CMake project builds for x86 and arm only; build it by hand "
                        "(upstream's prj/cmake) and load the library by path")


def find_program(name: str) -> str | None:
    """A program on PATH, or in this interpreter's scripts directory (where pip puts the cmake and ninja packages'
    commands when the environment is not activated)."""
    found = shutil.which(name)
    if found:
        return found
    scripts = sysconfig.get_path("scripts")
    candidate = os.path.join(scripts, name) if scripts else ""
    if candidate and os.access(candidate, os.X_OK):
        return candidate
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    return candidate if os.access(candidate, os.X_OK) else None


def require_program(name: str, purpose: str) -> str:
    found = find_program(name)
    if found is None:
        raise UpstreamError(f"{name} not found ({purpose}): install it ({_PACKAGES[name]})")
    return found


def _compiler(variable: str, candidates: tuple[str, ...], kind: str) -> list[str]:
    if os.environ.get(variable):
        command = shlex.split(os.environ[variable])
        if find_program(command[0]) is None:
            raise UpstreamError(f"{variable}={os.environ[variable]}: no such compiler; set {variable} to an installed "
                                f"one or unset it ({_PACKAGES[kind]})")
        return command
    for candidate in candidates:
        if find_program(candidate):
            return [candidate]
    raise UpstreamError(f"no {'C++' if kind == 'c++' else 'C'} compiler found: install one ({_PACKAGES[kind]})")


@dataclass(frozen=True)
class Toolchain:
    cmake: str
    cxx: list[str]
    cc: list[str]
    generator: str  # "Ninja" or "Unix Makefiles"
    make_program: str
    ccache: str | None
    compiler: str  # "gcc 12.2.0", "clang 16.0.6": part of the cache key

    @classmethod
    def find(cls) -> "Toolchain":
        cmake = require_program("cmake", "Simd is built with CMake")
        cxx = _compiler("CXX", ("c++", "g++", "clang++"), "c++")
        cc = _compiler("CC", ("cc", "gcc", "clang"), "cc")
        ninja = find_program("ninja")
        make = ninja or find_program("make")
        if make is None:
            raise UpstreamError("neither ninja nor make found: install one (pip install ninja, or Debian/Ubuntu: "
                                "apt-get install ninja-build)")
        return cls(cmake, cxx, cc, "Ninja" if ninja else "Unix Makefiles", make, find_program("ccache"),
                   compiler_id(cxx))

    def accepts(self, flags: tuple[str, ...]) -> bool:
        """Does the C++ compiler compile code with these flags (and their intrinsics header)?"""
        source = "#include <immintrin.h>\nint probe(void) { return 0; }\n" if any(
            f.startswith(("-msse", "-mavx", "-mamx")) for f in flags) else "int probe(void) { return 0; }\n"
        with tempfile.TemporaryDirectory(prefix="simdbind-probe-") as tmp:
            unit = Path(tmp) / "probe.cpp"
            unit.write_text(source)
            result = subprocess.run([*self.cxx, *flags, "-c", str(unit), "-o", str(Path(tmp) / "probe.o")],
                                    capture_output=True, text=True, check=False)
        return result.returncode == 0

    def backends(self, family: str, max_isa: str | None = None) -> tuple[Backend, ...]:
        """The backends of `family` this compiler can build: those upstream always builds, and each switchable one
        whose flags a probe compile accepts; with `max_isa`, none above it (those upstream always builds included:
        it cannot leave them out, :func:`check_max_isa` refuses such a limit)."""
        listed = BACKENDS[family]
        if max_isa is not None:
            listed = listed[:[b.name for b in listed].index(max_isa) + 1]
        return tuple(b for b in listed if b.option is None or self.accepts(b.flags))


def check_max_isa(family: str, max_isa: str | None) -> None:
    """`--max-isa` names a backend of this architecture that has a CMake switch above it to turn off."""
    if max_isa is None:
        return
    listed = BACKENDS[family]
    names = [b.name for b in listed]
    if max_isa not in names:
        raise UsageError(f"--max-isa {max_isa}: not a backend of {family} ({', '.join(names)})")
    above = listed[names.index(max_isa) + 1:]
    if any(b.option is None for b in above):
        lowest = next(b.name for b in reversed(listed) if b.option is None)
        raise UsageError(f"--max-isa {max_isa}: upstream always builds {lowest}; the lowest limit is {lowest}")


def compiler_id(command: list[str]) -> str:
    """ "gcc 12.2.0" / "clang 16.0.6" (family and full version) of a compiler command, from its predefined macros."""
    try:
        macros = subprocess.run([*command, "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True,
                                check=False).stdout
    except OSError as error:
        raise UpstreamError(f"{shlex.join(command)}: cannot run the compiler: {error}") from None
    defined = dict(re.findall(r"^#define (\w+) (.*)$", macros, re.M))
    if "__clang__" in defined:
        parts = ("__clang_major__", "__clang_minor__", "__clang_patchlevel__")
        name = "clang"
    elif "__GNUC__" in defined:
        parts = ("__GNUC__", "__GNUC_MINOR__", "__GNUC_PATCHLEVEL__")
        name = "gcc"
    else:
        return os.path.basename(command[0])
    return f"{name} {'.'.join(defined.get(part, '0') for part in parts)}"
