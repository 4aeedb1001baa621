"""Implementations under test.

* :class:`Implementation`: a Simd library at one ISA (the bundled library at each ISA it supports, or an external
  libSimd at whatever it dispatches to). Cases call it through ``Function.run(library, case, inputs)``.
* :class:`AdapterImplementation`: another Python implementation of the same operations (PyTorch, ONNX Runtime),
  called through the adapters of :mod:`simdbind.conformance.adapters`. Their results go in the same matrix.

Each implementation has a picklable :attr:`spec` from which :func:`from_spec` rebuilds it in a worker process.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import simdbind
from simdbind.library import Library

#: Implementation kinds. "bundled" and "external" are libraries; the others are adapters.
LIBRARY_KINDS = ("bundled", "external")
ADAPTER_KINDS = ("torch", "onnxruntime")


@dataclass
class Implementation:
    """A library at one ISA."""

    name: str  # e.g. "bundled-avx2", "bundled-abi-sse41", "external-avx512bw"
    library: Library
    isa: str
    _unavailable: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return self.library.kind

    @property
    def version(self) -> str:
        return self.library.version

    @property
    def spec(self) -> tuple[str, ...]:
        source = "bundled" if self.library.kind == "bundled" else self.library.path
        return ("library", source, self.library.mode, self.isa, self.name)

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

    def unavailable(self, function: Any) -> str | None:
        """Why `function` cannot run here (a skip reason), or None. Cached per function."""
        name = function.name
        if name not in self._unavailable:
            missing = self.has(tuple(function.symbols))
            self._unavailable[name] = f"{missing} is not provided by this library" if missing else None
        return self._unavailable[name]

    def execute(self, function: Any, case: Any, inputs: dict[str, Any]) -> Any:
        with self.active() as library:
            return function.run(library, case, inputs)

    def tolerance(self, function: Any, case: Any) -> Any:
        return function.tolerance(case)

    def repro_args(self) -> str:
        if self.library.kind == "bundled":
            mode = " --mode abi" if self.library.mode == "abi" else ""
            return f"--library bundled{mode} --isa {self.isa}"
        return f"--library {_quote(self.library.path)}"

    def describe(self) -> dict[str, Any]:
        d = self.library.describe()
        return {"name": self.name, "kind": self.kind, "path": d["path"], "mode": d["mode"], "version": d["version"],
                "generation": d["generation"], "isa": self.isa, "cpu_model": d["cpu_model"],
                "capabilities": d["capabilities"]}


@dataclass
class AdapterImplementation:
    """Another implementation of the operations (see :mod:`simdbind.conformance.adapters`)."""

    name: str  # "torch" or "onnxruntime"
    adapters: Any  # simdbind.conformance.adapters.AdapterSet
    isa: str = "-"

    @property
    def kind(self) -> str:
        return self.name

    @property
    def library(self) -> None:
        return None

    @property
    def version(self) -> str:
        return self.adapters.version()

    @property
    def spec(self) -> tuple[str, ...]:
        return ("adapter", self.name)

    def unavailable(self, function: Any) -> str | None:
        return self.adapters.unavailable(function.name)

    def execute(self, function: Any, case: Any, inputs: dict[str, Any]) -> Any:
        return self.adapters.get(function.name).fn(case, inputs)

    def tolerance(self, function: Any, case: Any) -> Any:
        adapter = self.adapters.get(function.name)
        return adapter.tolerance(case) if adapter.tolerance else function.tolerance(case)

    def repro_args(self) -> str:
        return f"--impl {self.name}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "path": self.adapters.location(), "mode": "adapter",
                "version": self.version, "isa": self.isa, "packages": self.adapters.package_versions(),
                "available": self.adapters.reason or "yes"}


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


_loaded: dict[tuple[str, str], Library] = {}


def _load(spec: str, mode: str | None) -> Library:
    key = (spec, mode or "")
    if key not in _loaded:
        _loaded[key] = simdbind.load(spec, mode=mode)
    return _loaded[key]


def implementations(libraries: list[str] | None = None, isa: str = "all", mode: str | None = None,
                    impls: list[str] | None = None) -> list[Implementation | AdapterImplementation]:
    """The implementations under test.

    `libraries`: "bundled" or paths (default: bundled, plus $SIMD_LIBRARY if set, unless only adapters are asked
    for); `isa`: "all" (every ISA the bundled library supports here) or one name (external libraries always run at
    their own); `impls`: adapter names ("torch", "onnxruntime"), added after the libraries.
    """
    from simdbind.conformance import adapters

    impls = list(impls or [])
    unknown = [name for name in impls if name not in adapters.ADAPTER_SETS]
    if unknown:
        raise simdbind.ArgumentError(f"--impl: must be one of {', '.join(adapters.ADAPTER_SETS)}, "
                                     f"got {', '.join(unknown)}")
    if not libraries and not impls:
        libraries = ["bundled"] + ([os.environ["SIMD_LIBRARY"]] if os.environ.get("SIMD_LIBRARY") else [])
    result: list[Implementation | AdapterImplementation] = []
    libraries = list(dict.fromkeys(libraries or []))
    externals = 0
    for spec in libraries:
        library = _load(spec, mode if spec == "bundled" else None)
        if library.kind == "bundled":
            names = library.isas_supported if isa == "all" else (isa,)
            for name in names:
                if name not in library.isas_supported:
                    raise simdbind.IsaError(f"--isa: {name} is not supported here "
                                            f"(supported: {', '.join(library.isas_supported)})")
                prefix = "bundled" if library.mode == "api" else "bundled-abi"
                result.append(Implementation(f"{prefix}-{name}", library, name))
        else:
            # Several external libraries get numbered names (external1-avx2, external2-avx2), in --library order.
            several = sum(1 for other in libraries if other != "bundled") > 1
            externals += 1
            prefix = f"external{externals}" if several else "external"
            result.append(Implementation(f"{prefix}-{library.isa}", library, library.isa))
    for name in dict.fromkeys(impls):
        result.append(AdapterImplementation(name, adapters.get_set(name)))
    return result


def from_spec(spec: tuple[str, ...]) -> Implementation | AdapterImplementation:
    """Rebuild an implementation from its :attr:`spec` (in a worker process)."""
    if spec[0] == "library":
        _, source, mode, isa, name = spec
        library = _load(source, mode if source == "bundled" else None)
        return Implementation(name, library, isa)
    from simdbind.conformance import adapters

    return AdapterImplementation(spec[1], adapters.get_set(spec[1]))
