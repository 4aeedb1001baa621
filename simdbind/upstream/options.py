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
        return definitions

    def key_data(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
