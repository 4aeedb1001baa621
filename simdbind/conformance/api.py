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
    """The implementation cannot express this case; the message is the skip reason.

    Raised by an implementation's ``run`` (or a :class:`PythonImplementation` function) for a case it finds it
    cannot express once it sees the inputs; the case is reported as ``skip`` with the message, not as an error.

    Examples
    --------
    >>> from simdbind.conformance import PythonImplementation, Unsupported
    >>> engine = PythonImplementation("nanless")
    >>> @engine.function("unary")
    ... def unary(case, inputs):
    ...     raise Unsupported("no unary operations")
    >>> from simdbind.conformance.runner import run
    >>> result = run([engine], ["unary"], profile="smoke").results[0]
    >>> result.status, result.detail
    ('skip', 'no unary operations')
    """


@runtime_checkable
class Implementation(Protocol):
    """What the suite calls: any object with a ``name``, :meth:`unsupported` and :meth:`run`.

    Optional methods, used where present: ``tolerance(function, case) -> Tolerance | None`` (None: the function's
    own), ``describe() -> dict[str, str]`` (``version``, ``location``) and ``prepare(function, case, inputs) ->
    Callable[[], Any]`` (a zero-argument call with the set-up done once; ``simdbind bench`` times it). The protocol
    is runtime-checkable: ``isinstance(obj, Implementation)`` tests the required members.

    Attributes
    ----------
    name : str
        The implementation's column in the reports (one word).

    See Also
    --------
    PythonImplementation : builds one from one Python function per simdbind function.

    Examples
    --------
    >>> from simdbind.conformance import Implementation
    >>> class Copy:
    ...     name = "copy"
    ...     def unsupported(self, function, case):
    ...         return None if function == "shuffle" else "shuffle only"
    ...     def run(self, function, case, inputs):
    ...         raise NotImplementedError
    >>> isinstance(Copy(), Implementation)
    True
    """

    name: str

    def unsupported(self, function: str, case: Case) -> str | None:
        """Why this implementation cannot run `case` of `function`, or None when it can.

        Parameters
        ----------
        function : str
            The simdbind function name (a key of :data:`simdbind.conformance.model.REGISTRY`, e.g. ``"eltwise"``).
        case : Case
            The case.

        Returns
        -------
        str or None
            The skip reason, or None.

        Examples
        --------
        >>> import simdbind.conformance.registry                   # registers every function's cases
        >>> from simdbind.conformance.model import case_from_descriptor
        >>> from simdbind.conformance.implementations import implementations
        >>> bundled = implementations(["bundled"], isa="base")[0]
        >>> bundled.unsupported("eltwise", case_from_descriptor("eltwise op=max count=2 size=17")) is None
        True
        """
        ...

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        """The outputs of `function` for `case` and its `inputs`.

        Parameters
        ----------
        function : str
            The simdbind function name.
        case : Case
            The case; ``case.params`` holds its parameters (see the function's cases module,
            ``simdbind/conformance/families/<family>/cases.py``).
        inputs : dict
            The arrays and values the function's ``inputs()`` built for the case; never modify them.

        Returns
        -------
        numpy.ndarray or tuple of numpy.ndarray
            What the simdbind function returns for these inputs.

        Raises
        ------
        Unsupported
            The case cannot be expressed (a skip, with the message as reason).

        Examples
        --------
        >>> import simdbind.conformance.registry               # registers every function's cases
        >>> from simdbind.conformance.model import REGISTRY, case_from_descriptor
        >>> from simdbind.conformance.implementations import implementations
        >>> bundled = implementations(["bundled"], isa="base")[0]
        >>> case = case_from_descriptor("eltwise op=max count=2 size=17")
        >>> inputs = REGISTRY["eltwise"].inputs(case, case.rng(0))
        >>> bundled.run("eltwise", case, inputs).shape
        (17,)
        """
        ...


#: The methods an object must have to be an implementation (checked when it is selected).
REQUIRED = ("unsupported", "run")

CaseFunction = Callable[["Case", "dict[str, Any]"], Any]
Preparer = Callable[["Case", "dict[str, Any]"], Callable[[], Any]]


def prepared(implementation: Any, function: str, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
    """`implementation`'s zero-argument call of `function` on `case` and `inputs`: its ``prepare`` when it has one,
    else a call of its ``run``. Whatever ``prepare`` raises but :class:`Unsupported` and the user's Ctrl-C
    (``SystemExit`` included) is a :class:`simdbind.conformance.guard.AdapterError` naming it.

    Parameters
    ----------
    implementation : Implementation
        Any implementation.
    function : str
        The simdbind function name.
    case : Case
        The case.
    inputs : dict
        The case's inputs.

    Returns
    -------
    callable
        A zero-argument call returning the outputs.

    Examples
    --------
    >>> from simdbind.conformance import PythonImplementation
    >>> from simdbind.conformance.api import prepared
    >>> engine = PythonImplementation("twice")
    >>> @engine.function("unary")
    ... def unary(case, inputs):
    ...     return 2 * inputs["x"]
    >>> prepared(engine, "unary", None, {"x": np.ones(2, np.float32)})()
    array([2., 2.], dtype=float32)
    """
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

    Select one on the command line as ``--impl module:object`` (or by name, once registered in a package's
    ``simdbind.conformance.implementations`` entry points); a function it has no entry for is skipped with the
    reason ``"<name> has no <function>"``.

    Parameters
    ----------
    name : str
        One word: the implementation's column in the reports.
    requires : iterable of str
        Packages it needs.
    modules : iterable of str
        Modules that register more functions on this object.
    setup : callable, optional
        Called once, after the imports.

    Raises
    ------
    ValueError
        `name` is empty or not one word.

    Examples
    --------
    >>> from simdbind.conformance import PythonImplementation
    >>> from simdbind.conformance.runner import run
    >>> engine = PythonImplementation("numpy-max", requires=("numpy",))
    >>> @engine.function("eltwise")
    ... def eltwise(case, inputs):
    ...     if case.params["op"] != "max" or any(np.isnan(a).any() for a in inputs["arrays"]):
    ...         raise simdbind.conformance.Unsupported("max of NaN-free arrays only")
    ...     return np.maximum.reduce(inputs["arrays"])
    >>> outcome = run([engine], ["eltwise"], profile="smoke")
    >>> outcome.count("pass") > 0, outcome.failed
    (True, [])
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
        """Register ``fn(case, inputs) -> outputs`` for the simdbind function `name` (a decorator).

        Parameters
        ----------
        name : str
            The simdbind function name, e.g. ``"softmax"``.
        tolerance : callable, optional
            ``tolerance(case) -> Tolerance | None`` replaces the function's tolerance for this implementation (only
            where it is documented to be less accurate).

        Returns
        -------
        callable
            A decorator that registers its function and returns it unchanged.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation, Tolerance
        >>> engine = PythonImplementation("loose")
        >>> @engine.function("softmax", tolerance=lambda case: Tolerance(abs=1e-5, why="float32 sums"))
        ... def softmax(case, inputs):
        ...     e = np.exp(inputs["x"] - inputs["x"].max(axis=1, keepdims=True))
        ...     return e / e.sum(axis=1, keepdims=True)
        >>> engine.tolerance("softmax", None).describe()
        'abs 1e-05'
        """

        def decorate(fn: CaseFunction) -> CaseFunction:
            self.functions[name] = (fn, tolerance)
            return fn

        return decorate

    def preparer(self, name: str) -> Callable[[Preparer], Preparer]:
        """Register ``fn(case, inputs) -> call`` for the simdbind function `name` (a decorator): what :meth:`prepare`
        returns (set up once, then ``call()`` computes the outputs, as ``run`` does).

        Parameters
        ----------
        name : str
            The simdbind function name.

        Returns
        -------
        callable
            A decorator that registers its function and returns it unchanged.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> engine = PythonImplementation("prepared")
        >>> @engine.function("unary")
        ... def unary(case, inputs):
        ...     return np.abs(inputs["x"])
        >>> @engine.preparer("unary")
        ... def unary_call(case, inputs):
        ...     x, out = inputs["x"], np.empty_like(inputs["x"])  # set up once
        ...     return lambda: np.abs(x, out=out)                 # then one call
        >>> engine.prepare("unary", None, {"x": np.array([-1.0], np.float32)})()
        array([1.], dtype=float32)
        """

        def decorate(fn: Preparer) -> Preparer:
            self.preparers[name] = fn
            return fn

        return decorate

    def missing(self) -> str | None:
        """Why nothing can run (a required package is not installed or does not import), or None.

        Imports the packages and `modules`, and calls `setup`, the first time.

        Returns
        -------
        str or None
            The reason, or None.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> PythonImplementation("ghost", requires=("no_such_package_here",)).missing()
        'no_such_package_here is not installed'
        >>> PythonImplementation("fine", requires=("numpy",)).missing() is None
        True
        """
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
        """Why `case` of `function` cannot run: a missing package, or no function registered under that name.

        Parameters
        ----------
        function : str
            The simdbind function name.
        case : Case
            The case (not looked at: a registered function decides per case by raising :class:`Unsupported`).

        Returns
        -------
        str or None
            The skip reason, or None.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> PythonImplementation("empty").unsupported("softmax", None)
        'empty has no softmax'
        """
        reason = self.missing()
        if reason:
            return reason
        if function not in self.functions:
            return f"{self.name} has no {function}"
        return None

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        """Call the function registered for `function` with `case` and `inputs`.

        Parameters
        ----------
        function : str
            The simdbind function name.
        case : Case
            The case.
        inputs : dict
            The case's inputs.

        Returns
        -------
        object
            What the registered function returns.

        Raises
        ------
        KeyError
            No function is registered under `function` (the runner asks :meth:`unsupported` first).
        Unsupported
            Raised by the registered function.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> engine = PythonImplementation("neg")
        >>> @engine.function("unary")
        ... def unary(case, inputs):
        ...     return -inputs["x"]
        >>> engine.run("unary", None, {"x": np.array([1.5], np.float32)})
        array([-1.5], dtype=float32)
        """
        return self.functions[function][0](case, inputs)

    def prepare(self, function: str, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        """A zero-argument call computing the outputs: the registered preparer's, else a call of the function.

        Parameters
        ----------
        function : str
            The simdbind function name.
        case : Case
            The case.
        inputs : dict
            The case's inputs.

        Returns
        -------
        callable
            ``call()`` returns the outputs.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> engine = PythonImplementation("neg")
        >>> @engine.function("unary")
        ... def unary(case, inputs):
        ...     return -inputs["x"]
        >>> call = engine.prepare("unary", None, {"x": np.array([2.0], np.float32)})
        >>> call()
        array([-2.], dtype=float32)
        """
        preparer = self.preparers.get(function)
        if preparer is not None:
            return preparer(case, inputs)
        run = self.functions[function][0]
        return lambda: run(case, inputs)

    def tolerance(self, function: str, case: Case) -> Tolerance | None:
        """The tolerance this implementation claims for `case`, or None for the function's own.

        Parameters
        ----------
        function : str
            The simdbind function name.
        case : Case
            The case, passed to the rule registered with :meth:`function`.

        Returns
        -------
        Tolerance or None

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> engine = PythonImplementation("strict")
        >>> @engine.function("unary")
        ... def unary(case, inputs):
        ...     return inputs["x"]
        >>> engine.tolerance("unary", None) is None
        True
        """
        rule = self.functions.get(function, (None, None))[1]
        return rule(case) if rule is not None else None

    def describe(self) -> dict[str, str]:
        """What the reports record of this implementation.

        Returns
        -------
        dict
            ``version`` and ``location`` of the first required package (empty without one), and ``available``:
            ``"yes"`` or the reason nothing can run.

        Examples
        --------
        >>> from simdbind.conformance import PythonImplementation
        >>> info = PythonImplementation("np", requires=("numpy",)).describe()
        >>> info["version"] == np.__version__, info["available"]
        (True, 'yes')
        """
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
