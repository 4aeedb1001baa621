"""The catalogue of known deviations (data: each family's ``simdbind/conformance/families/<family>/deviations.json``;
format in ``simdbind/conformance/families/README.md``).

A case that an entry matches (same function, ``when`` true for the case, the implementation among ``affects`` and
its version within ``versions``) is reported as ``known`` (a known deviation, with the entry's id) when it fails,
and as ``xpass`` (the catalogued deviation did not show) when it passes. Neither is a plain pass or failure.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from simdbind._versions import VersionRange
from simdbind.conformance import families
from simdbind.library import ISAS

if TYPE_CHECKING:
    from simdbind.conformance.model import Case, Function

REQUIRED = ("id", "function", "when", "versions", "spec", "behaviour", "affects")
OPTIONAL = ("example", "note")
#: Values of "affects": implementation kinds, "adapters" (torch and onnxruntime), "all", or an implementation name.
AFFECTS_KINDS = ("external", "bundled", "torch", "onnxruntime", "adapters", "all")

_SAFE_BUILTINS = {name: getattr(builtins, name)
                  for name in ("abs", "all", "any", "bool", "float", "int", "len", "max", "min", "range", "round",
                               "set", "sorted", "str", "sum", "tuple", "list", "isinstance")}


class CatalogueError(ValueError):
    """A catalogue file or entry breaks the format (the message names the file and the entry)."""


@dataclass
class Deviation:
    id: str
    function: str
    when: str
    versions: VersionRange
    spec: str
    behaviour: str
    affects: tuple[str, ...]
    source: str  # the file it came from
    example: str = ""
    note: str = ""
    code: Any = field(default=None, repr=False)

    def applies_to(self, implementation: Any) -> bool:
        """Is `implementation` (kind, name, version) among the affected ones?"""
        kind, name = implementation.kind, implementation.name
        for value in self.affects:
            if value in ("all", kind, name) or (value == "adapters" and kind in ("torch", "onnxruntime")):
                return self.versions.contains(implementation.version or "")
        return False

    def matches(self, case: Case, isa: str = "-", implementation: str = "") -> bool:
        """Evaluate ``when`` over the case; a NameError or other error names the entry (a catalogue defect)."""
        namespace = dict(case.params)
        namespace.update(layout=case.layout, dtype=case.dtype, isa=isa, group=case.group, function=case.function,
                         descriptor=case.descriptor, implementation=implementation)
        try:
            # The names are globals of the expression so that comprehensions and lambdas in it see them too.
            return bool(eval(self.code, {**namespace, "__builtins__": _SAFE_BUILTINS}))
        except Exception as error:
            raise CatalogueError(f"{self.source}: entry {self.id!r}: 'when' failed on case {case.descriptor!r}: "
                                 f"{type(error).__name__}: {error}") from None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "function": self.function, "when": self.when, "versions": self.versions.text,
                "spec": self.spec, "behaviour": self.behaviour, "affects": list(self.affects), "source": self.source}


def parse_entry(raw: Any, source: str, index: int) -> Deviation:
    where = f"{source}: entry {index}"
    if not isinstance(raw, dict):
        raise CatalogueError(f"{where}: must be an object, got {type(raw).__name__}")
    if isinstance(raw.get("id"), str):
        where = f"{source}: entry {raw['id']!r}"
    missing = [key for key in REQUIRED if key not in raw]
    if missing:
        raise CatalogueError(f"{where}: missing {', '.join(missing)} (required: {', '.join(REQUIRED)})")
    unknown = [key for key in raw if key not in REQUIRED + OPTIONAL]
    if unknown:
        raise CatalogueError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for key in ("id", "function", "when", "spec", "behaviour") + tuple(k for k in OPTIONAL if k in raw):
        if not isinstance(raw[key], str) or (key in ("id", "function", "behaviour") and not raw[key].strip()):
            raise CatalogueError(f"{where}: {key} must be a non-empty string, got {raw[key]!r}")
    affects = raw["affects"]
    affects = (affects,) if isinstance(affects, str) else tuple(affects) if isinstance(affects, list) else None
    if not affects or not all(isinstance(a, str) and a for a in affects):
        raise CatalogueError(f"{where}: affects must be a string or a non-empty list of strings, got {raw['affects']!r}")
    for value in affects:
        if value not in AFFECTS_KINDS and not re.match(r"^(bundled|bundled-abi|external\d*)-\w+$", value):
            raise CatalogueError(f"{where}: affects: {value!r} is not one of {', '.join(AFFECTS_KINDS)} "
                                 "or an implementation name such as 'bundled-avx2'")
    try:
        versions = VersionRange.parse(raw["versions"])
    except ValueError as error:
        raise CatalogueError(f"{where}: versions: {error}") from None
    when = raw["when"].strip() or "True"
    try:
        code = compile(when, f"<deviation {raw['id']}>", "eval")
    except SyntaxError as error:
        raise CatalogueError(f"{where}: when: not a Python expression: {error.msg}: {when!r}") from None
    return Deviation(raw["id"], raw["function"], when, versions, raw["spec"], raw["behaviour"], affects, source,
                     raw.get("example", ""), raw.get("note", ""), code)


class Catalogue:
    """Entries indexed by function; :meth:`match` is cheap for functions without entries."""

    def __init__(self, entries: Iterable[Deviation] = ()):
        self.entries: list[Deviation] = []
        self.by_function: dict[str, list[Deviation]] = {}
        self._applicable: dict[tuple[str, str], list[Deviation]] = {}
        for entry in entries:
            self.add(entry)

    def add(self, entry: Deviation) -> None:
        if any(e.id == entry.id for e in self.entries):
            other = next(e for e in self.entries if e.id == entry.id)
            raise CatalogueError(f"{entry.source}: entry {entry.id!r}: id already used in {other.source}")
        self.entries.append(entry)
        self.by_function.setdefault(entry.function, []).append(entry)
        self._applicable.clear()

    def __len__(self) -> int:
        return len(self.entries)

    def match(self, implementation: Any, case: Case) -> list[Deviation]:
        """The entries that apply to this implementation and case."""
        candidates = self.by_function.get(case.function)
        if not candidates:
            return []
        key = (case.function, implementation.name)
        applicable = self._applicable.get(key)
        if applicable is None:
            applicable = self._applicable[key] = [e for e in candidates if e.applies_to(implementation)]
        return [e for e in applicable if e.matches(case, implementation.isa, implementation.name)]

    def raw(self) -> list[dict[str, Any]]:
        return [e.as_dict() for e in self.entries]


def _entries(path: Path, source: str) -> list[Deviation]:
    """The entries of one catalogue file, validated; `source` names the file in them and in errors."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise CatalogueError(f"{source}: not valid JSON: {error}") from None
    if not isinstance(data, list):
        raise CatalogueError(f"{source}: must hold a JSON list of entries, got {type(data).__name__}")
    return [parse_entry(raw, source, index) for index, raw in enumerate(data)]


def family(name: str) -> Catalogue:
    """The package's catalogue file of family `name` (``families/<name>/deviations.json``), validated."""
    return Catalogue(_entries(families.path(name, "deviations.json"), f"{name}/deviations.json"))


def load(directory: str | Path | None = None) -> Catalogue:
    """Every ``*.json`` file of `directory`, validated; by default the package's catalogue, every family's
    ``deviations.json``."""
    catalogue = Catalogue()
    if directory is None:
        for name in families.names():
            for entry in family(name).entries:
                catalogue.add(entry)
        return catalogue
    directory = Path(directory)
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        for entry in _entries(path, path.name):
            catalogue.add(entry)
    return catalogue


_default: Catalogue | None = None


def default() -> Catalogue:
    """The package's catalogue plus the directories in ``$SIMDBIND_DEVIATIONS`` (``os.pathsep``-separated; e.g.
    a catalogue for a private build), loaded once per process."""
    global _default
    if _default is None:
        catalogue = load()
        for directory in filter(None, os.environ.get("SIMDBIND_DEVIATIONS", "").split(os.pathsep)):
            if not Path(directory).is_dir():
                raise CatalogueError(f"SIMDBIND_DEVIATIONS: {directory} is not a directory")
            for entry in load(directory).entries:
                catalogue.add(entry)
        _default = catalogue
    return _default


def validate(catalogue: Catalogue, registry: Mapping[str, Function] | None = None) -> list[str]:
    """Problems of a catalogue against the registered functions: unknown function, an ``example`` that does not
    parse (a descriptor need not be a grid case: explore finds cases in no grid) or that ``when`` does not match,
    a ``when`` that fails or matches no case (the function's cases and the example).
    Empty when the catalogue is sound. Every ISA name is tried for ``isa``."""
    if registry is None:
        from simdbind.conformance import registry as _registry  # noqa: F401  (registers every function)
        from simdbind.conformance.model import REGISTRY

        registry = REGISTRY
    from simdbind.conformance.model import DescriptorError

    problems = []
    for entry in catalogue.entries:
        function = registry.get(entry.function)
        if function is None:
            problems.append(f"{entry.source}: {entry.id}: unknown function {entry.function!r}")
            continue
        all_cases = list(function.cases())
        example = None
        if entry.example:
            try:
                example = function.parse(entry.example)
            except DescriptorError as error:
                problems.append(f"{entry.source}: {entry.id}: example does not parse: {error}")
        matched = False
        try:
            for case in all_cases + ([example] if example is not None else []):
                # every case is evaluated (an expression may fail on some only); isa only until one matches
                matched = any(entry.matches(case, isa) for isa in ISAS) or matched
        except CatalogueError as error:
            problems.append(str(error))
            continue
        if not matched:
            problems.append(f"{entry.source}: {entry.id}: 'when' matches no case of {entry.function}")
        if example is not None and not any(entry.matches(example, isa) for isa in ISAS):
            problems.append(f"{entry.source}: {entry.id}: 'when' does not match its example {entry.example!r}")
    return problems
