"""What the suite knows about one function under test, and one case of it.

A family's cases module defines a :class:`Function` subclass per C function and registers it with
:func:`register`. The runner and the pytest modules only talk to this interface.

Every case has a one-line descriptor in one grammar for every function (the benchdnn idea)::

    <function> key=value key=value ...

The keys and their value encodings are the function's :attr:`Function.fields`, in that order; a field whose value
is its default is left out. Encodings: integers as written (``17``), booleans ``true``/``false``, names as
written (the empty name is ``-``), floats in Python's shortest round-trip form, size tuples joined by ``x``
(``3x3``, a shape ``2x3x5``) and lists joined by ``.`` (pads ``1.1.0.0``). :meth:`Function.parse` (or
:func:`case_from_descriptor`) rebuilds the case -- params, dtype, layout, group -- from the text alone, so a case
that no grid lists (one found by ``simdbind conformance explore``) reruns from its descriptor.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable

import numpy as np

from simdbind.conformance import families
from simdbind.conformance.tolerance import Tolerance

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy
    from simdbind.library import Library

PROFILES = ("smoke", "ci", "full")

#: Case groups: "main" cases are inside the contract's exact domain; "edge" cases exercise documented
#: implementation-defined behaviour (NaN, Inf, ties) whose expectation is written down per case.
GROUPS = ("main", "edge")

#: Bytes of 0xFF placed before and after every input and output array of a case (one 512-bit vector each side): a
#: kernel that reads outside its inputs sees NaN (every float type) or all-ones integers, and one that writes
#: outside its outputs changes a guard byte.
GUARD_BYTES = 64
#: The page whose boundary placed arrays are measured from (:class:`GuardedOutputs`' `offset`, the benchmark's
#: placements): 4 KiB, also the span within which the CPU compares a load's address with older stores'.
PAGE_BYTES = 4096
#: The key of a case's inputs under which the runner hands ``run()`` its :class:`GuardedOutputs`.
OUTPUTS = "_outputs"

#: The profiles that run the regression cases kept by ``explore --keep`` (families/<family>/regressions.txt).
REGRESSION_PROFILES = ("ci", "full")


class DescriptorError(ValueError):
    """A descriptor that does not follow the grammar or names an unknown function, key or value."""


@dataclass(frozen=True)
class Case:
    """One case. ``descriptor`` names it in the grammar above and is the repro key; ``profiles`` says which
    profiles run it (a property of the grid, not of the case: it takes no part in equality).

    A descriptor is ``<function> key=value ...``: the keys, their order and defaults are the function's fields in
    ``simdbind/conformance/families/<family>/cases.py``, and a key at its default is left out. Cases are made by the
    functions' grids; :func:`case_from_descriptor` parses one back from its text.

    Attributes
    ----------
    function : str
        The simdbind function name (e.g. ``"eltwise"``).
    descriptor : str
        The case's name in the descriptor grammar.
    params : dict
        The case's parameters, by field name.
    dtype, layout, group : str
        The report's columns: data type, ``"nchw"``/``"nhwc"`` (``"-"`` where none applies), and ``"main"`` or
        ``"edge"`` (outside a contract's exact domain: NaN, Inf, ties, huge arguments).
    profiles : tuple of str
        The profiles (``smoke``, ``ci``, ``full``) that run the case.

    Examples
    --------
    >>> import simdbind.conformance.registry                   # registers every function's cases
    >>> from simdbind.conformance.model import case_from_descriptor
    >>> case = case_from_descriptor("eltwise op=max count=2 size=17")
    >>> case.function, case.params["op"], case.params["size"], case.group
    ('eltwise', 'max', 17, 'main')
    """

    function: str
    descriptor: str
    params: dict[str, Any] = field(hash=False)
    dtype: str = "float32"
    layout: str = "-"
    group: str = "main"
    profiles: tuple[str, ...] = field(default=PROFILES, compare=False)  # the profiles that run this case

    def seed(self, base_seed: int) -> int:
        """A seed from the descriptor and the run's seed: independent of case order and worker count.

        Parameters
        ----------
        base_seed : int
            The run's seed (``--seed``).

        Returns
        -------
        int
            A 64-bit seed.

        Examples
        --------
        >>> import simdbind.conformance.registry                   # registers every function's cases
        >>> from simdbind.conformance.model import case_from_descriptor
        >>> case = case_from_descriptor("eltwise op=max count=2 size=17")
        >>> case.seed(1) == case.seed(1) != case.seed(2)
        True
        """
        digest = hashlib.blake2b(f"{base_seed}:{self.descriptor}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "little")

    def rng(self, base_seed: int) -> np.random.Generator:
        """The random generator of this case's inputs in a run of seed `base_seed` (seeded by :meth:`seed`).

        Parameters
        ----------
        base_seed : int
            The run's seed.

        Returns
        -------
        numpy.random.Generator

        Examples
        --------
        >>> import simdbind.conformance.registry                   # registers every function's cases
        >>> from simdbind.conformance.model import case_from_descriptor
        >>> case = case_from_descriptor("unary op=exp size=5")
        >>> case.rng(7).random() == case.rng(7).random()
        True
        """
        return np.random.default_rng(self.seed(base_seed))


def page_placed_bytes(nbytes: int, offset: int, fill: int = 0) -> np.ndarray:
    """`nbytes` bytes of `fill` that start `offset` bytes past a page boundary (PAGE_BYTES; offset taken modulo it)."""
    room = np.full(nbytes + PAGE_BYTES, fill, np.uint8)
    start = (offset - room.ctypes.data) % PAGE_BYTES
    return room[start:start + nbytes]


class GuardedOutputs:
    """The output arrays of one call, each between guard zones and filled with 0xFF bytes (NaN for floats), so that
    an element the kernel leaves unwritten shows in the comparison and a write outside it in :meth:`violations`.
    With an `offset`, each array starts that many bytes past a page boundary (PAGE_BYTES); else where NumPy puts
    it."""

    def __init__(self, offset: int | None = None) -> None:
        self._storage: list[tuple[np.ndarray, int]] = []
        self._offset = offset

    def new(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if self._offset is None:
            storage = np.full(2 * GUARD_BYTES + nbytes, 0xFF, np.uint8)
        else:
            storage = page_placed_bytes(2 * GUARD_BYTES + nbytes, self._offset - GUARD_BYTES, 0xFF)
        self._storage.append((storage, nbytes))
        output: np.ndarray = storage[GUARD_BYTES:GUARD_BYTES + nbytes].view(dtype).reshape(shape)
        return output

    def violations(self) -> list[str]:
        """One message per output whose guard zones changed: "wrote N bytes past dst" (or before it)."""
        several = len(self._storage) > 1
        messages = []
        for index, (storage, nbytes) in enumerate(self._storage):
            label = f"output {index}: " if several else ""
            before = int((storage[:GUARD_BYTES] != 0xFF).sum())
            after = int((storage[GUARD_BYTES + nbytes:] != 0xFF).sum())
            if after:
                messages.append(f"{label}wrote {after} bytes past dst (in the {GUARD_BYTES}-byte guard zone)")
            if before:
                messages.append(f"{label}wrote {before} bytes before dst (in the {GUARD_BYTES}-byte guard zone)")
        return messages


class ReusedOutputs(GuardedOutputs):
    """Guarded outputs allocated by the first call and handed out again, in the same order, by the later ones (after
    :meth:`rewind`): a repeated call (a benchmark) writes into the same arrays instead of allocating new ones."""

    def __init__(self, offset: int | None = None) -> None:
        super().__init__(offset)
        self._arrays: list[np.ndarray] = []
        self._next = 0

    def rewind(self) -> None:
        self._next = 0

    def new(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        if self._next < len(self._arrays):
            array = self._arrays[self._next]
            if array.shape != tuple(shape) or array.dtype != np.dtype(dtype):
                raise ValueError(f"output {self._next}: {shape} {np.dtype(dtype)} asked after {array.shape} "
                                 f"{array.dtype}: a call whose outputs change cannot reuse them")
        else:
            array = super().new(shape, dtype)
            self._arrays.append(array)
        self._next += 1
        return array


# -- fields: the grammar's keys and value encodings ---------------------------------------------------------------
_REQUIRED = object()
#: Names of fields that are attributes of the Case rather than entries of its params.
CASE_ATTRIBUTES = ("dtype", "layout", "group")


@dataclass(frozen=True)
class Field:
    """One ``key=value`` of a descriptor: the value of param(s) `names` in encoding `kind`.

    kind: ``int``, ``bool``, ``name``, ``float``, ``dims`` (ints joined by ``x``), ``list`` (ints joined by
    ``.``). A field of several names (``names=("ky", "kx")``) joins their values as one ``dims`` or ``list``."""

    key: str
    kind: str
    names: tuple[str, ...] = ()
    default: Any = _REQUIRED

    def __post_init__(self) -> None:
        if not self.names:
            object.__setattr__(self, "names", (self.key,))
        if self.kind not in ("int", "bool", "name", "float", "dims", "list"):
            raise ValueError(f"Field {self.key}: unknown kind {self.kind!r}")

    def value(self, values: dict[str, Any]) -> Any:
        if len(self.names) == 1:
            return values[self.names[0]]
        return tuple(values[name] for name in self.names)

    def encode(self, value: Any) -> str:
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "int":
            return str(int(value))
        if self.kind == "float":
            return repr(float(value))
        if self.kind == "name":
            text = str(value)
            if any(c.isspace() or c == "=" for c in text):
                raise DescriptorError(f"{self.key}: a name may not hold spaces or '=': {text!r}")
            return text or "-"
        separator = "x" if self.kind == "dims" else "."
        return separator.join(str(int(v)) for v in value)

    def decode(self, text: str) -> Any:
        try:
            if self.kind == "bool":
                if text not in ("true", "false"):
                    raise ValueError
                return text == "true"
            if self.kind == "int":
                return int(text)
            if self.kind == "float":
                return float(text)
            if self.kind == "name":
                return "" if text == "-" else text
            return tuple(int(v) for v in text.split("x" if self.kind == "dims" else "."))
        except ValueError:
            raise DescriptorError(f"{self.key}={text}: not a {self.kind} value") from None

    def assign(self, value: Any, values: dict[str, Any]) -> None:
        if len(self.names) == 1:
            values[self.names[0]] = value
            return
        if len(value) != len(self.names):
            raise DescriptorError(f"{self.key}: {len(self.names)} values expected ({', '.join(self.names)}), "
                                  f"got {len(value)}")
        values.update(zip(self.names, value))


def F(key: str, kind: str, default: Any = _REQUIRED, names: tuple[str, ...] = ()) -> Field:
    """Shorthand for :class:`Field` in the families' field lists."""
    return Field(key, kind, names, default)


class Function:
    """A C function under test. Subclasses fill in every method.

    ``fields`` declares the grammar of its descriptors (and so every parameter a case of it has); ``grid()``
    yields the named cases of the profiles; ``space()`` is a hypothesis strategy over the whole documented
    parameter space (the grid's cases are points of it)."""

    name: ClassVar[str]  # the simdbind name, e.g. "eltwise"
    family: ClassVar[str]  # the simdbind module, e.g. "elementwise"
    symbols: ClassVar[tuple[str, ...]]  # C symbols it needs; an implementation lacking one skips the function
    fields: ClassVar[tuple[Field, ...]] = ()
    dtype: ClassVar[str] = "float32"  # the dtype of cases that do not set one

    # -- descriptors ---------------------------------------------------------------------------------------------
    def _defaults(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "layout": "-", "group": "main"}

    def describe(self, values: dict[str, Any]) -> str:
        """The descriptor of params + dtype/layout/group `values`."""
        defaults = self._defaults()
        tokens = [self.name]
        for f in self.fields:
            value = f.value(values)
            default = defaults.get(f.key, f.default) if f.key in CASE_ATTRIBUTES else f.default
            if default is not _REQUIRED and value == default:
                continue
            tokens.append(f"{f.key}={f.encode(value)}")
        return " ".join(tokens)

    def case(self, params: dict[str, Any], *, dtype: str | None = None, layout: str = "-", group: str = "main",
             profiles: tuple[str, ...] = PROFILES) -> Case:
        """A case of `params` (exactly the names the fields declare), its descriptor made by :meth:`describe`."""
        declared = {name for f in self.fields for name in f.names if name not in CASE_ATTRIBUTES}
        if set(params) != declared:
            raise ValueError(f"{self.name}: params {sorted(set(params) ^ declared)} differ from the fields")
        dtype = dtype or self.dtype
        text = self.describe({**params, "dtype": dtype, "layout": layout, "group": group})
        return Case(self.name, text, dict(params), dtype=dtype, layout=layout, group=group, profiles=profiles)

    def parse(self, descriptor: str) -> Case:
        """The case `descriptor` names (any key order; defaults for keys left out), built from the text alone (so
        in no profile). Raises DescriptorError."""
        tokens = descriptor.split()
        if not tokens or tokens[0] != self.name:
            raise DescriptorError(f"descriptor {descriptor!r}: must start with the function name {self.name!r}")
        by_key = {f.key: f for f in self.fields}
        values: dict[str, Any] = {}
        seen: set[str] = set()
        for token in tokens[1:]:
            key, sep, text = token.partition("=")
            if not sep or key not in by_key:
                raise DescriptorError(f"descriptor {descriptor!r}: {token!r} is not key=value with a key of "
                                      f"{self.name} ({', '.join(by_key)})")
            if key in seen:
                raise DescriptorError(f"descriptor {descriptor!r}: {key} given twice")
            seen.add(key)
            by_key[key].assign(by_key[key].decode(text), values)
        defaults = self._defaults()
        for f in self.fields:
            if f.key in seen:
                continue
            default = defaults.get(f.key, f.default) if f.key in CASE_ATTRIBUTES else f.default
            if default is _REQUIRED:
                raise DescriptorError(f"descriptor {descriptor!r}: {f.key}= is required")
            f.assign(default, values)
        attributes = {key: values.pop(key, defaults[key]) for key in CASE_ATTRIBUTES}
        if attributes["group"] not in GROUPS:
            raise DescriptorError(f"descriptor {descriptor!r}: group must be one of {', '.join(GROUPS)}")
        return self.case(values, **attributes, profiles=())

    def check_domain(self, case: Case) -> None:
        """DescriptorError naming the first field of `case` outside the function's case domain, as its cases (the
        grid and the kept regression cases) span it: a name none of them uses (an op, a layout, a data kind), a
        number below the least they use (a size of -5, or 0 where every case has 1 or more), a float that is not
        finite. The grammar alone accepts these; run, they would fail as if the implementation were wrong."""
        import math

        from simdbind.conformance.names import did_you_mean

        values = {**case.params, "dtype": case.dtype, "layout": case.layout, "group": case.group}
        for f, span in zip(self.fields, self._domain()):
            value = f.value(values)
            if f.kind == "name" and value not in span:
                known = sorted(f.encode(v) for v in span)
                raise DescriptorError(f"{f.key}={f.encode(value)}: {self.name} has no such {f.key} (one of "
                                      f"{', '.join(known)}){did_you_mean(f.encode(value), known)}")
            if f.kind == "float" and not math.isfinite(value):
                raise DescriptorError(f"{f.key}={f.encode(value)}: must be a finite number")
            if f.kind in ("int", "dims", "list") and min((value,) if f.kind == "int" else value) < span:
                each = "" if f.kind == "int" else "each value "
                raise DescriptorError(f"{f.key}={f.encode(value)}: {each}must be >= {span} for {self.name}")

    def _domain(self) -> list[Any]:
        """Per field, what its cases span: the set of values of a name (or bool, float) field, the least value of
        an int field or of any value of a dims or list field (at most 1). Cached."""
        cached = self.__dict__.get("_domain_spans")
        if cached is None:
            cases = self.cases()
            cached = []
            for f in self.fields:
                seen = [f.value({**c.params, "dtype": c.dtype, "layout": c.layout, "group": c.group}) for c in cases]
                if f.kind in ("int", "dims", "list"):
                    # The least its cases use, lowered to 1: the space explore searches reaches below the grid
                    # (one-row pools, a single softmax row), never below 1 where no case goes below 1.
                    cached.append(min(1, min(seen) if f.kind == "int" else min(min(v) for v in seen)))
                else:
                    cached.append(set(seen))
            self.__dict__["_domain_spans"] = cached
        return cached

    # -- cases ---------------------------------------------------------------------------------------------------
    def grid(self) -> Iterable[Case]:
        """The named cases (each with the profiles that run it)."""
        raise NotImplementedError

    def grid_cases(self) -> list[Case]:
        """grid() without repeats (a descriptor listed twice runs in the union of its profiles), cached."""
        cached = self.__dict__.get("_grid_cases")
        if cached is None:
            cached = self.__dict__["_grid_cases"] = unique(self.grid())
        return cached

    def cases(self) -> list[Case]:
        """Every case: the grid, then the kept regression cases of the family (families/<family>/regressions.txt)."""
        grid = self.grid_cases()
        names = {c.descriptor for c in grid}
        kept = [c for c in regression_cases(self) if c.descriptor not in names]
        return grid + kept

    def space(self) -> SearchStrategy[Case]:
        """A hypothesis strategy of valid cases over the function's documented parameter space."""
        raise NotImplementedError

    # -- running -------------------------------------------------------------------------------------------------
    def inputs(self, case: Case, rng: np.random.Generator) -> dict[str, Any]:
        raise NotImplementedError

    @staticmethod
    def output(inputs: dict[str, Any], shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
        """The array run() passes as ``out=``: from the runner's guarded outputs (a write outside it fails the
        case), or a fresh guarded one when run() is called outside the runner."""
        outputs = inputs.get(OUTPUTS)
        if outputs is None:
            outputs = inputs[OUTPUTS] = GuardedOutputs()
        return outputs.new(tuple(shape), dtype)

    def run(self, library: Library, case: Case, inputs: dict[str, Any]) -> Any:
        """Call simdbind on `library`; returns an array or a tuple of arrays."""
        raise NotImplementedError

    def prepare(self, library: Any, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        """A zero-argument call computing what :meth:`run` computes, for repeated calls (``simdbind bench``): what
        does not depend on the data is done once here. Default: :meth:`run` writing into the same output arrays at
        every call; a function overrides it with its wrapper call alone (contexts and outputs made once). Outputs
        come from :meth:`output`: a benchmark that hands every implementation the same :class:`ReusedOutputs` in
        ``inputs`` has them all write into the same arrays (the same placement relative to the inputs)."""
        outputs = inputs.get(OUTPUTS)
        if not isinstance(outputs, ReusedOutputs):
            outputs = ReusedOutputs()
        data = {**inputs, OUTPUTS: outputs}

        def call() -> Any:
            outputs.rewind()
            return self.run(library, case, data)

        return call

    def reference(self, case: Case, inputs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def expected(self, case: Case, inputs: dict[str, Any]) -> Any:
        """The reference's outputs, computed without NumPy's floating-point warnings: an edge case's NaN, Inf and
        overflow are what it checks, and a warning per case would bury a run's output."""
        with np.errstate(all="ignore"):
            return self.reference(case, inputs)

    def tolerance(self, case: Case) -> Tolerance:
        raise NotImplementedError

    def variant(self, case: Case) -> str:
        """The row of the report matrix this case belongs to within the function (e.g. the operation), or "".

        Default: the case's ``op`` parameter when it has one. Override to split the matrix differently."""
        op = case.params.get("op", "")
        return op if isinstance(op, str) else str(op)


def unique(cases: Iterable[Case]) -> list[Case]:
    """Cases in first-seen order, one per descriptor, each run in the union of its listings' profiles."""
    chosen: dict[str, Case] = {}
    for case in cases:
        first = chosen.get(case.descriptor)
        if first is None:
            chosen[case.descriptor] = case
        elif set(case.profiles) - set(first.profiles):
            profiles = tuple(p for p in PROFILES if p in first.profiles or p in case.profiles)
            chosen[case.descriptor] = Case(first.function, first.descriptor, first.params, first.dtype,
                                           first.layout, first.group, profiles)
    return list(chosen.values())


def regression_file(family: str, directory: Path | None = None) -> Path:
    """`family`'s regression file: ``<family>.txt`` of `directory`, by default the family folder's ``regressions.txt``."""
    if directory is not None:
        return directory / f"{family}.txt"
    return families.path(family, "regressions.txt")


def regression_cases(function: Function, directory: Path | None = None) -> list[Case]:
    """The function's descriptors in its family's regression file (one a line; ``#`` starts a comment)."""
    path = regression_file(function.family, directory)
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        text = line.split("#", 1)[0].strip()
        if text.split(" ", 1)[0] == function.name:
            case = function.parse(text)
            out.append(Case(case.function, case.descriptor, case.params, case.dtype, case.layout, case.group,
                            REGRESSION_PROFILES))
    return out


REGISTRY: dict[str, Function] = {}


def register(cls: type[Function]) -> type[Function]:
    REGISTRY[cls.name] = cls()
    return cls


def case_from_descriptor(descriptor: str) -> Case:
    """The case a descriptor names, whatever function it belongs to (the first word names it)."""
    name = descriptor.split(" ", 1)[0] if descriptor.strip() else ""
    function = REGISTRY.get(name)
    if function is None:
        raise DescriptorError(f"descriptor {descriptor!r}: unknown function {name!r}; known: {', '.join(REGISTRY)}")
    return function.parse(descriptor.strip())
