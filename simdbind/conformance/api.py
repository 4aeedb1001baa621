"""The public implementation API: what the suite needs from anything it checks.

An implementation is any object with

* ``name: str`` (the column of the report);
* ``unsupported(function: str, case: Case) -> str | None``: why it cannot run this case (the skip reason), or None;
* ``run(function: str, case: Case, inputs: dict) -> array | tuple of arrays``: the function's outputs for the
  case's ``inputs`` (the dict the case's function built; never modified). ``run`` may raise :class:`Unsupported`
  for a case it finds it cannot express only once it sees the inputs;

and optionally ``tolerance(function, case) -> Tolerance | None`` (None: the function's own),
``describe() -> dict[str, str]`` (``version``, ``location``) and ``prepare(function, case, inputs) -> Callable[[],
Any]``: a zero-argument call computing what ``run`` computes, with what does not depend on the data done once
(contexts or sessions created, weights converted, outputs allocated); ``simdbind bench`` times that call, and
without ``prepare`` it times ``run`` itself (:func:`prepared`). ``function`` is the simdbind function name (the keys
of :data:`simdbind.conformance.model.REGISTRY`, e.g. ``"eltwise"``).

:class:`PythonImplementation` builds one from plain functions::

    engine = PythonImplementation("myengine", requires=("numpy",))

    @engine.function("eltwise")
    def eltwise(case, inputs):
        ...

    @engine.preparer("eltwise")           # optional: for benchmarks
    def eltwise_call(case, inputs):
        ...                               # set up once
        return lambda: ...                # one call

The Simd libraries the suite checks (the bundled one at each ISA, external builds) implement the same protocol
(:mod:`simdbind.conformance.implementations`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, runtime_checkable

if TYPE_CHECKING:
    from simdbind.conformance.model import Case
    from simdbind.conformance.tolerance import Tolerance


class Unsupported(Exception):
    """The implementation cannot express this case; the message is the skip reason."""


@runtime_checkable
class Implementation(Protocol):
    """What the suite calls. ``tolerance`` and ``describe`` are optional (see the module docstring)."""

    name: str

    def unsupported(self, function: str, case: Case) -> str | None: ...

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any: ...


#: The methods an object must have to be an implementation (checked when it is selected).
REQUIRED = ("unsupported", "run")

CaseFunction = Callable[["Case", "dict[str, Any]"], Any]
Preparer = Callable[["Case", "dict[str, Any]"], Callable[[], Any]]


def prepared(implementation: Any, function: str, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
    """`implementation`'s zero-argument call of `function` on `case` and `inputs`: its ``prepare`` when it has one,
    else a call of its ``run``. Whatever ``prepare`` raises but :class:`Unsupported` and the user's Ctrl-C
    (``SystemExit`` included) is a :class:`simdbind.conformance.guard.AdapterError` naming it."""
    from simdbind.conformance import guard

    prepare = getattr(implementation, "prepare", None)
    if prepare is not None:
        try:
            call: Callable[[], Any] = guard.call("prepare()", prepare, function, case, inputs)
        except guard.AdapterError as error:
            if isinstance(error.error, Unsupported):
                raise error.error from None
            raise
        return call
    run = implementation.run
    return lambda: run(function, case, inputs)
ToleranceRule = Callable[["Case"], "Tolerance | None"]


class PythonImplementation:
    """An implementation made of one Python function per simdbind function.

    `requires`: the Python packages it needs (the first one's version is the implementation's version); while one
    is missing or fails to import, every case is skipped with that reason. `modules`: modules that register more
    functions on this object, imported (once) when it is first used, after `requires` imported; a family-per-module
    package lists its modules here. `setup`: called once after that (e.g. to pin a thread count).
    """

    def __init__(self, name: str, requires: Iterable[str] = (), *, modules: Iterable[str] = (),
                 setup: Callable[[], None] | None = None) -> None:
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise ValueError(f"PythonImplementation: name must be a non-empty word, got {name!r}")
        self.name = name
        self.module = sys._getframe(1).f_globals.get("__name__", "")  # where --impl module:object finds it
        self.requires = tuple(requires)
        self.modules = tuple(modules)
        self.setup = setup
        self.functions: dict[str, tuple[CaseFunction, ToleranceRule | None]] = {}
        self.preparers: dict[str, Preparer] = {}
        self._reason: str | None = None
        self._loaded = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PythonImplementation({self.name!r}, requires={self.requires!r})"

    def function(self, name: str, *, tolerance: ToleranceRule | None = None) -> Callable[[CaseFunction], CaseFunction]:
        """Register ``fn(case, inputs) -> outputs`` for the simdbind function `name`. `tolerance(case)` replaces
        the function's tolerance for this implementation (only where it is documented to be less accurate)."""

        def decorate(fn: CaseFunction) -> CaseFunction:
            self.functions[name] = (fn, tolerance)
            return fn

        return decorate

    def preparer(self, name: str) -> Callable[[Preparer], Preparer]:
        """Register ``fn(case, inputs) -> call`` for the simdbind function `name`: what :meth:`prepare` returns
        (set up once, then ``call()`` computes the outputs, as ``run`` does)."""

        def decorate(fn: Preparer) -> Preparer:
            self.preparers[name] = fn
            return fn

        return decorate

    def missing(self) -> str | None:
        """Why nothing can run (a required package is not installed or does not import), or None. Imports the
        packages and `modules` the first time."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self._reason = self._load()
        return self._reason

    def _load(self) -> str | None:
        absent = [p for p in self.requires if importlib.util.find_spec(p) is None]
        if absent:
            return f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed"
        for package in self.requires:
            try:
                importlib.import_module(package)
            except Exception as error:  # a broken install is a skip reason, not a crash of the run
                return f"importing {package} failed: {type(error).__name__}: {error}"
        for module in self.modules:
            try:
                importlib.import_module(module)
            except Exception as error:
                return f"importing {module} failed: {type(error).__name__}: {error}"
        if self.setup is not None:
            self.setup()
        return None

    def unsupported(self, function: str, case: Case) -> str | None:
        reason = self.missing()
        if reason:
            return reason
        if function not in self.functions:
            return f"{self.name} has no {function}"
        return None

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        return self.functions[function][0](case, inputs)

    def prepare(self, function: str, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        preparer = self.preparers.get(function)
        if preparer is not None:
            return preparer(case, inputs)
        run = self.functions[function][0]
        return lambda: run(case, inputs)

    def tolerance(self, function: str, case: Case) -> Tolerance | None:
        rule = self.functions.get(function, (None, None))[1]
        return rule(case) if rule is not None else None

    def describe(self) -> dict[str, str]:
        reason = self.missing()
        if not self.requires:
            return {"version": "", "location": "", "available": reason or "yes"}
        package = self.requires[0]
        version, location = "", ""
        if reason is None:
            module = importlib.import_module(package)
            version = str(getattr(module, "__version__", ""))
            location = str(getattr(module, "__file__", "") or "")
        return {"version": version, "location": location, "available": reason or "yes"}
