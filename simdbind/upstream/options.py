"""What a build is asked for (:class:`BuildOptions`, from which the cache key derives) and the errors a build
raises: each is one line that says what to do, with the exit code of its kind (2 usage, 1 build failure)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from simdbind.errors import SimdBindError

#: The release the conformance suite is validated against: what ``upstream`` names and what a build fetches.
DEFAULT_REF = "v7.1.162"

#: Where Simd's source lives when ``--source`` is not given (needs the network).
DEFAULT_SOURCE = "https://github.com/ermig1979/Simd.git"


class UpstreamError(SimdBindError):
    """A build cannot be made or finished. Its message is one line saying what to do."""

    exit_code = 1


class UsageError(UpstreamError):
    """An argument is wrong (unknown ref, missing source, a bad option): nothing was started."""

    exit_code = 2


@dataclass(frozen=True)
class BuildOptions:
    """The options of one build. Every field goes into the cache key (:meth:`key_data`), so two builds that differ
    in any of them are two cache entries. A new option is one field here plus its CMake definitions in
    :meth:`cmake_definitions` (and its command-line flag in :mod:`simdbind.upstream.cli`)."""

    build_type: str = "Release"
    #: SIMD backends to compile in (:data:`simdbind.upstream.toolchain.BACKENDS` names), after the compiler probe.
    backends: tuple[str, ...] = ()
    #: The highest backend asked for (``--max-isa``): a build without the backends above it, whose dispatch then runs
    #: the code of the lower ones (an AVX2 machine's path on an AVX-512 one). None: every backend the compiler makes.
    max_isa: str | None = None
    #: gcov instrumentation (``--coverage``): the build tree is kept beside the entry, where the library writes its
    #: counters, for ``simdbind conformance coverage``.
    coverage: bool = False

    @property
    def variant(self) -> str:
        """What sets this build apart from the standard one, as its name writes it (``upstream@REF:VARIANT``):
        "" (standard), "avx2", "coverage", "avx2+coverage"."""
        return "+".join([*([self.max_isa] if self.max_isa else []), *(["coverage"] if self.coverage else [])])

    def cmake_definitions(self, switches: dict[str, str]) -> dict[str, str]:
        """``-D`` definitions of upstream's prj/cmake project; `switches` maps a backend to its CMake option (the
        backends that have one): each is ON when the backend is built, OFF otherwise."""
        definitions = {
            "CMAKE_BUILD_TYPE": self.build_type,
            "SIMD_SHARED": "ON",
            "SIMD_TEST": "OFF",
            "SIMD_PYTHON": "OFF",
            "SIMD_INSTALL": "OFF",
            "SIMD_UNINSTALL": "OFF",
            "SIMD_INFO": "ON",
        }
        for backend, option in switches.items():
            definitions[option] = "ON" if backend in self.backends else "OFF"
        if self.coverage:
            # Upstream's CMake project adds CMAKE_CXX_FLAGS to every source's flags (COMMON_CXX_FLAGS). Its kernels
            # run on several threads: atomic counter updates, or counts come out torn (even negative).
            flags = "--coverage -fprofile-update=atomic"
            definitions.update({"CMAKE_CXX_FLAGS": flags, "CMAKE_C_FLAGS": flags,
                                "CMAKE_SHARED_LINKER_FLAGS": "--coverage"})
        return definitions

    def key_data(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
