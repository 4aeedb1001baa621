"""The implementations under test, and how they are selected by name.

* :class:`LibraryImplementation`: a Simd library at one ISA (the bundled library at each ISA it supports, or an
  external libSimd at whatever it dispatches to), an implementation of :mod:`simdbind.conformance.api`'s protocol
  that calls ``Function.run(library, case, inputs)``.
* :class:`Selected`: any other implementation (a :class:`~simdbind.conformance.api.PythonImplementation`, or any
  object with the protocol's methods), with the selector that named it.

A selector (``--impl``) is ``package.module:object`` (the object is an implementation, or a callable returning one
or a list of them), or the name of an entry point of the group :data:`ENTRY_POINT_GROUP` (the built-in peers are
registered there too). Every implementation has a picklable :attr:`spec` from which :func:`from_spec` rebuilds it
in a worker process, and a :meth:`repro_args` that selects it again on the command line.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

import simdbind
from simdbind.conformance.api import REQUIRED, Implementation, PythonImplementation, prepared
from simdbind.conformance.names import did_you_mean
from simdbind.library import Library

if TYPE_CHECKING:
    from simdbind.conformance.model import Case
    from simdbind.conformance.tolerance import Tolerance

#: The entry-point group where installed packages register implementations (``--impl NAME``).
ENTRY_POINT_GROUP = "simdbind.conformance.implementations"

#: Kinds of the library implementations; a selected implementation's kind is its name.
LIBRARY_KINDS = ("bundled", "external")


class SelectionError(simdbind.ArgumentError):
    """An ``--impl`` selector that does not name an importable implementation."""


@dataclass
class LibraryImplementation:
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

    def unsupported(self, function: str, case: Case) -> str | None:
        """The first C symbol the function needs that this library lacks, as a skip reason. Cached per function."""
        if function not in self._unavailable:
            from simdbind.conformance.model import REGISTRY

            missing = next((s for s in REGISTRY[function].symbols if not self.library.has(s)), None)
            self._unavailable[function] = f"{missing} is not provided by this library" if missing else None
        return self._unavailable[function]

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        from simdbind.conformance.model import REGISTRY

        with self.active() as library:
            return REGISTRY[function].run(library, case, inputs)

    def prepare(self, function: str, case: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
        """The function's prepared call (:meth:`Function.prepare`), its contexts made at this implementation's ISA.
        The call runs at the ISA active when it is made: call it inside :meth:`active` (the bench harness switches
        before each sample rather than at every call)."""
        from simdbind.conformance.model import REGISTRY

        with self.active() as library:
            return REGISTRY[function].prepare(library, case, inputs)

    def tolerance(self, function: str, case: Case) -> None:
        return None  # the function's own

    def repro_args(self) -> str:
        if self.library.kind == "bundled":
            mode = " --mode abi" if self.library.mode == "abi" else ""
            return f"--library bundled{mode} --isa {self.isa}"
        return f"--library {shlex.quote(self.library.path)}"

    def describe(self) -> dict[str, Any]:
        d = self.library.describe()
        return {"name": self.name, "kind": self.kind, "path": d["path"], "mode": d["mode"], "version": d["version"],
                "generation": d["generation"], "isa": self.isa, "cpu_model": d["cpu_model"],
                "capabilities": d["capabilities"]}


class Selected:
    """An implementation of the public protocol, with the selector that names it (None: given as an object)."""

    isa = "-"
    library = None

    def __init__(self, implementation: Implementation, selector: str | None = None) -> None:
        self.implementation = implementation
        self.name: str = implementation.name
        self.selector = selector or _selector_of(implementation)

    def __repr__(self) -> str:
        return f"Selected({self.implementation!r}, {self.selector!r})"

    @property
    def kind(self) -> str:
        return self.name

    @property
    def version(self) -> str:
        return str(self._described().get("version", ""))

    @property
    def spec(self) -> tuple[str, ...]:
        return ("impl", self.selector, self.name)

    def unsupported(self, function: str, case: Case) -> str | None:
        return self.implementation.unsupported(function, case)

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        return self.implementation.run(function, case, inputs)

    def prepare(self, function: str, case: Any, inputs: dict[str, Any]) -> Callable[[], Any]:
        return prepared(self.implementation, function, case, inputs)

    def tolerance(self, function: str, case: Case) -> Tolerance | None:
        rule = getattr(self.implementation, "tolerance", None)
        return rule(function, case) if rule is not None else None

    def repro_args(self) -> str:
        return f"--impl {shlex.quote(self.selector)}"

    def _described(self) -> dict[str, Any]:
        """What the implementation's ``describe()`` says (when it raises, "available" says so)."""
        from simdbind.conformance import guard

        describe = getattr(self.implementation, "describe", None)
        if describe is None:
            return {}
        try:
            return dict(guard.call("describe()", lambda: dict(describe())))
        except guard.AdapterError as error:
            return {"available": str(error)}

    def describe(self) -> dict[str, Any]:
        d = self._described()
        return {"name": self.name, "kind": self.kind, "path": d.get("location", ""), "mode": "python",
                "version": d.get("version", ""), "isa": self.isa, "selector": self.selector,
                "available": d.get("available", "yes")}


def _selector_of(implementation: Implementation) -> str:
    """``module:attribute`` where `implementation` is a module-level object, else its name (an entry point)."""
    module_name = getattr(implementation, "module", None) or type(implementation).__module__
    module = sys.modules.get(module_name)
    for attribute, value in vars(module).items() if module else ():
        if value is implementation:
            return f"{module_name}:{attribute}"
    return implementation.name


def as_subject(implementation: Any) -> Any:
    """`implementation` with what the runner needs beyond the protocol (kind, isa, version, spec, repro_args)."""
    if hasattr(implementation, "repro_args"):
        return implementation
    return Selected(implementation, None)


# -- selection by name ----------------------------------------------------------------------------------------
def entry_point_names() -> list[str]:
    from importlib.metadata import entry_points

    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def _entry_point(name: str) -> Any:
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not found:
        known = entry_point_names()
        raise SelectionError(f"--impl {name}: no implementation of that name is installed{did_you_mean(name, known)}"
                             f"; installed: {', '.join(known) or 'none'}; or give package.module:object")
    try:
        return found[0].load()
    except Exception as error:
        raise SelectionError(f"--impl {name}: entry point {found[0].value} does not import: "
                             f"{type(error).__name__}: {error}") from None


def _import_object(selector: str) -> Any:
    module_name, _, path = selector.partition(":")
    if not module_name or not path:
        raise SelectionError(f"--impl {selector}: must be package.module:object or an installed name")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # module:object names a module of the current directory too
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as error:
        raise SelectionError(f"--impl {selector}: module {module_name} does not import: "
                             f"{type(error).__name__}: {error}") from None
    for attribute in path.split("."):
        if not hasattr(target, attribute):
            known = [n for n in vars(target) if not n.startswith("_")] if hasattr(target, "__dict__") else []
            raise SelectionError(f"--impl {selector}: {module_name} has no {path}{did_you_mean(attribute, known)}")
        target = getattr(target, attribute)
    return target


def _is_implementation(value: Any) -> bool:
    return isinstance(getattr(value, "name", None), str) and all(callable(getattr(value, m, None)) for m in REQUIRED)


def resolve(selector: str) -> list[Any]:
    """The implementations `selector` names, checked: each has the protocol's name and methods, and a
    :class:`PythonImplementation`'s required packages import."""
    if not isinstance(selector, str) or not selector.strip():
        raise SelectionError(f"--impl: must name an implementation, got {selector!r}")
    value = _import_object(selector) if ":" in selector else _entry_point(selector)
    if not _is_implementation(value) and callable(value):
        try:
            value = value()
        except Exception as error:
            raise SelectionError(f"--impl {selector}: calling it raised {type(error).__name__}: {error}") from None
    found = list(value) if isinstance(value, (list, tuple)) else [value]
    if not found:
        raise SelectionError(f"--impl {selector}: returned no implementation")
    for item in found:
        if not _is_implementation(item):
            raise SelectionError(f"--impl {selector}: {type(item).__name__} is not an implementation (needs a "
                                 f"'name' and the methods {', '.join(REQUIRED)}; see simdbind.conformance.api)")
        reason = item.missing() if isinstance(item, PythonImplementation) else None
        if reason:
            raise SelectionError(f"--impl {selector}: {reason}")
    names = [item.name for item in found]
    if len(set(names)) != len(names):
        raise SelectionError(f"--impl {selector}: two implementations named {names}")
    return found


_loaded: dict[tuple[str, str], Library] = {}


def _load(spec: str, mode: str | None) -> Library:
    key = (spec, mode or "")
    if key not in _loaded:
        _loaded[key] = simdbind.load(spec, mode=mode)
    return _loaded[key]


def implementations(libraries: list[str] | None = None, isa: str = "all", mode: str | None = None,
                    impls: list[str] | None = None) -> list[Any]:
    """The implementations under test.

    `libraries`: "bundled" or paths (default: bundled, plus $SIMD_LIBRARY if set, unless only `impls` are asked
    for); `isa`: "all" (every ISA the bundled library supports here), one name or a comma-separated list (external
    libraries always run at their own); `impls`: selectors (see :func:`resolve`), added after the libraries.
    """
    impls = list(dict.fromkeys(impls or []))
    if not libraries and not impls:
        libraries = ["bundled"] + ([os.environ["SIMD_LIBRARY"]] if os.environ.get("SIMD_LIBRARY") else [])
    result: list[Any] = []
    loaded = [_load(spec, mode if spec == "bundled" else None) for spec in dict.fromkeys(libraries or [])]
    # A library's name says how it was loaded: "bundled" (the package's own, API mode), "bundled-abi" (a bundled
    # build given by path) or "external"; where several share one, they are numbered in --library order
    # (external1-avx2, external2-avx2), so that no two rows of a run carry the same name.
    kinds = ["bundled" if lib.kind == "bundled" and lib.mode == "api" else "bundled-abi" if lib.kind == "bundled"
             else "external" for lib in loaded]
    for index, (library, kind) in enumerate(zip(loaded, kinds)):
        prefix = kind + (str(kinds[: index + 1].count(kind)) if kinds.count(kind) > 1 else "")
        if library.kind == "bundled":
            supported = library.isas_supported
            names = supported if isa == "all" else tuple(n.strip() for n in isa.split(",") if n.strip())
            for name in names:
                if name not in supported:
                    raise simdbind.IsaError(f"--isa: {name} is not supported here{did_you_mean(name, supported)} "
                                            f"(supported: {', '.join(supported)})")
                result.append(LibraryImplementation(f"{prefix}-{name}", library, name))
        else:
            result.append(LibraryImplementation(f"{prefix}-{library.isa}", library, library.isa))
    taken = {impl.name for impl in result}
    for selector in impls:
        for item in resolve(selector):
            if item.name in taken:
                raise SelectionError(f"--impl {selector}: the name {item.name!r} is already taken")
            taken.add(item.name)
            result.append(Selected(item, selector))
    return result


def from_spec(spec: tuple[str, ...]) -> Any:
    """Rebuild an implementation from its :attr:`spec` (in a worker process)."""
    if spec[0] == "library":
        _, source, mode, isa, name = spec
        library = _load(source, mode if source == "bundled" else None)
        return LibraryImplementation(name, library, isa)
    _, selector, name = spec
    return Selected(next(item for item in resolve(selector) if item.name == name), selector)
