"""Implementations under test: a library at one ISA (the bundled library at each ISA it supports, or an external
libSimd at whatever it dispatches to)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Iterator

import simdbind
from simdbind.library import Library


@dataclass
class Implementation:
    name: str  # e.g. "bundled-avx2", "external-avx512bw"
    library: Library
    isa: str

    @contextlib.contextmanager
    def active(self) -> Iterator[Library]:
        """The library, switched to this implementation's ISA for the duration (bundled only)."""
        if self.library.kind == "bundled":
            with self.library.use_isa(self.isa):
                yield self.library
        else:
            yield self.library

    def has(self, symbols: tuple[str, ...]) -> str | None:
        """None if every symbol is present, else the first missing one."""
        for symbol in symbols:
            if not self.library.has(symbol):
                return symbol
        return None


_loaded: dict[tuple[str, str], Library] = {}


def _load(spec: str, mode: str | None) -> Library:
    key = (spec, mode or "")
    if key not in _loaded:
        _loaded[key] = simdbind.load(spec, mode=mode)
    return _loaded[key]


def implementations(libraries: list[str] | None = None, isa: str = "all", mode: str | None = None
                    ) -> list[Implementation]:
    """The implementations named by `libraries` ("bundled" or paths; default: bundled, plus $SIMD_LIBRARY if set)
    at `isa` ("all": every ISA the bundled library supports here; external libraries always run at their own)."""
    if not libraries:
        libraries = ["bundled"] + ([os.environ["SIMD_LIBRARY"]] if os.environ.get("SIMD_LIBRARY") else [])
    result = []
    for spec in libraries:
        library = _load(spec, mode)
        if library.kind == "bundled":
            names = library.isas_supported if isa == "all" else (isa,)
            for name in names:
                if name not in library.isas_supported:
                    raise simdbind.IsaError(f"--isa: {name} is not supported here "
                                            f"(supported: {', '.join(library.isas_supported)})")
                prefix = "bundled" if library.mode == "api" else "bundled-abi"
                result.append(Implementation(f"{prefix}-{name}", library, name))
        else:
            result.append(Implementation(f"external-{library.isa}", library, library.isa))
    return result
