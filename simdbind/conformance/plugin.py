"""The pytest plugin of the conformance suite (entry point ``pytest11``: loaded wherever simdbind is installed).

A test module marked ``pytest.mark.simd_conformance(family="pooling")`` (or with function names as arguments) whose
test takes ``implementation``, ``function``, ``case`` and ``simd_seed`` runs over implementations x cases of the
chosen profile; the shipped modules are :mod:`simdbind.conformance.tests`::

    python -m pytest --pyargs simdbind.conformance.tests --simd-impl mypkg.engine:impl --simd-profile ci \\
        --simd-report-html reports/conformance.html

The options are those of ``simdbind conformance``, prefixed ``--simd-`` (:mod:`simdbind.conformance.options`). A
case the deviation catalogue lists for an implementation is an xfail whose reason is the catalogue id. Until a
``--simd-`` option is given or a marked module is collected, the plugin only adds its options: it imports the
suite (and NumPy) when it has work to do.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from simdbind.conformance import options as _options

if TYPE_CHECKING:
    from simdbind.conformance.api import Implementation
    from simdbind.conformance.model import Case, Function
    from simdbind.conformance.runner import CaseResult, Run

MARKER = "simd_conformance"
_RESULTS: list[dict[str, Any]] = []  # the conformance results of this pytest run (on the controller)
_LAST: list[CaseResult] = []  # the result of the last check() in this process
_START: list[float] = []
#: What a session keeps on its config: the selected implementations, and the run and report files of the session.
_IMPLEMENTATIONS = pytest.StashKey[list[Any]]()
_RUN = pytest.StashKey["Run"]()
_WRITTEN = pytest.StashKey[list[str]]()


def _value(config: pytest.Config, option: _options.Option) -> Any:
    return config.getoption(option.pytest_dest)


def _get(config: pytest.Config, name: str) -> Any:
    return config.getoption("simd_" + name.replace("-", "_"))


def _used(config: pytest.Config) -> bool:
    """Was any --simd- option given (other than at its default)?"""
    return any(_value(config, o) != (o.default() if callable(o.default) else o.default)
               for o in _options.OPTIONS if o.pytest)


def pytest_addoption(parser: pytest.Parser) -> None:
    _options.add_pytest_options(parser.getgroup("simdbind conformance", "simdbind conformance suite"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(*functions, family=None): run the test over implementations x "
                                       "cases of these simdbind functions (see simdbind.conformance.plugin)")
    problems = _options.report_problems(lambda o: _value(config, o) if o.pytest else None, lambda o: o.pytest_flag)
    if problems:
        raise pytest.UsageError(problems[0])
    if _used(config):
        _implementations(config)  # a selection that does not resolve is a usage error, before collection
    if _get(config, "case") is not None:
        from simdbind.conformance.runner import check_descriptor, functions

        try:
            check_descriptor(_get(config, "case"), functions())
        except KeyError as error:
            raise pytest.UsageError(str(error.args[0]).replace("--case", "--simd-case")) from None


def seed(config: pytest.Config) -> int:
    """The run's base seed (--simd-seed, else the suite's default)."""
    value = _get(config, "seed")
    if value is None:
        from simdbind.conformance.runner import DEFAULT_SEED

        return DEFAULT_SEED
    return int(value)


def pytest_report_header(config: pytest.Config) -> list[str]:
    if not _used(config):
        return []
    impls = ",".join(_get(config, "impl") or [])
    return [f"simdbind conformance: profile={_get(config, 'profile')} seed={seed(config)} isa={_get(config, 'isa')} "
            f"library={','.join(_get(config, 'library') or []) or 'default'}" + (f" impl={impls}" if impls else "")]


def _implementations(config: pytest.Config) -> list[Any]:
    cached = config.stash.get(_IMPLEMENTATIONS, None)
    if cached is None:
        from simdbind.errors import SimdBindError
        from simdbind.conformance.implementations import implementations

        try:
            cached = implementations(_get(config, "library"), _get(config, "isa"), _get(config, "mode"),
                                     _get(config, "impl"))
        except SimdBindError as error:
            raise pytest.UsageError(str(error).replace("--impl", "--simd-impl").replace("--isa", "--simd-isa"))
        config.stash[_IMPLEMENTATIONS] = cached
    return cached


def _functions(marker: pytest.Mark) -> list[Any]:
    from simdbind.conformance.runner import functions

    family = marker.kwargs.get("family")
    chosen = functions(marker.args or None)
    return [f for f in chosen if f.family == family] if family else chosen


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or "case" not in metafunc.fixturenames:
        return
    from simdbind.conformance import deviations
    from simdbind.conformance.runner import select_cases

    config = metafunc.config
    impls = _implementations(config)
    catalogue = deviations.default()
    params, ids = [], []
    for function in _functions(marker):
        for case in select_cases(function, _get(config, "profile"), _get(config, "case-filter"),
                                 _get(config, "case")):
            for impl in impls:
                try:
                    known = catalogue.match(impl, case)
                except deviations.CatalogueError:  # run_case reports it as an error of this case, naming the entry
                    known = []
                marks = [pytest.mark.xfail(reason=", ".join(e.id for e in known), strict=False)] if known else []
                params.append(pytest.param(impl, function, case, marks=marks))
                ids.append(f"{impl.name}:{case.descriptor}")
    metafunc.parametrize(("implementation", "function", "case"), params, ids=ids)


@pytest.fixture
def simd_seed(request: pytest.FixtureRequest) -> int:
    """The base seed of the case inputs."""
    return seed(request.config)


def check(implementation: Implementation, function: Function, case: Case, seed: int) -> None:
    """The one assertion of a conformance test: run the case, skip or xfail with the reason, or fail with the
    detail and the repro line."""
    from simdbind.conformance.runner import run_case

    result = run_case(implementation, function, case, seed)
    _LAST[:] = [result]
    if result.status == "skip":
        pytest.skip(result.detail)
    if result.status == "known":
        pytest.xfail(f"{result.deviation}: {result.detail}")
    assert result.status in ("pass", "xpass"), f"{result.status}: {result.detail}\nrepro: {result.repro}"


def take_result() -> CaseResult | None:
    """The result recorded by the last check() of this process, once (None if there is none)."""
    return _LAST.pop() if _LAST else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Attach the conformance result of the test to its report, so that the controller gets it with or without
    xdist."""
    outcome = yield
    result = take_result() if call.when == "call" else None
    if result is not None:
        from dataclasses import asdict

        outcome.get_result().user_properties.append(("simd_conformance_result", asdict(result)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == "simd_conformance_result" and isinstance(value, dict):
            _RESULTS.append(value)


def pytest_sessionstart(session: pytest.Session) -> None:
    _START[:] = [time.perf_counter()]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    wanted = [(kind, _get(config, f"report-{kind}")) for kind in ("json", "md", "html")
              if _get(config, f"report-{kind}")]
    if hasattr(config, "workerinput") or not _RESULTS or not wanted:
        return
    from simdbind.conformance import report
    from simdbind.conformance.runner import CaseResult, Run

    run = Run([CaseResult(**r) for r in _RESULTS], time.perf_counter() - (_START[0] if _START else 0.0))
    run.meta = report.make_meta(_implementations(config), profile=_get(config, "profile"), seed=seed(config),
                                filter=" ".join(_get(config, "case-filter") or []) or None, case=_get(config, "case"),
                                workers=getattr(config.option, "numprocesses", 1) or 1,
                                command="python -m pytest (simdbind conformance modules)")
    writers = {"json": report.write_json, "md": report.write_markdown, "html": report.write_html}
    config.stash[_WRITTEN] = [str(writers[kind](run, path)) for kind, path in wanted]
    config.stash[_RUN] = run


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is None:
        return
    from simdbind.conformance import report

    terminalreporter.write_sep("-", "simdbind conformance")
    terminalreporter.write_line(f"conformance: {report.totals_line(run)}")
    for path in config.stash.get(_WRITTEN, []):
        terminalreporter.write_line(f"report: {path}")
