"""The pytest plugin of the conformance suite: what :mod:`simdbind_pytest` (the ``pytest11`` entry point, loaded
wherever simdbind is installed) registers once a ``--simd-`` option is used or a marked module is collected.

A test module marked ``pytest.mark.simd_conformance(family="pooling")`` (or with function names as arguments) whose
test takes ``implementation``, ``function``, ``case`` and ``simd_seed`` runs over implementations x cases of the
chosen profile; the shipped modules are :mod:`simdbind.conformance.tests`::

    python -m pytest --pyargs simdbind.conformance.tests --simd-impl mypkg.engine:impl --simd-profile ci \\
        --simd-report-html reports/conformance.html

The options are those of ``simdbind conformance``, prefixed ``--simd-`` (:mod:`simdbind.conformance.options`). A
case the deviation catalogue lists for an implementation is an xfail whose reason is the catalogue id. The reports
(``--simd-report-json/md/html``) hold one result per conformance test of the session, with the outcome pytest shows
for it (a test that fails in setup, or after its check, is an ``error``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from simdbind.conformance import options as _options
from simdbind_pytest import MARKER, used

if TYPE_CHECKING:
    from simdbind.conformance.api import Implementation
    from simdbind.conformance.model import Case, Function
    from simdbind.conformance.runner import CaseResult, Run

#: The parameters of a conformance test.
PARAMETERS = ("implementation", "function", "case")
_LAST: list[CaseResult] = []  # the result of the last check() in this process
#: What a session keeps on its config (so that a second session in one process starts from nothing): the selected
#: implementations, when it started, the results by test id in the order they came, the run and its report files.
_IMPLEMENTATIONS = pytest.StashKey[list[Any]]()
_START = pytest.StashKey[float]()
_RESULTS = pytest.StashKey[dict[str, dict[str, Any]]]()
_RUN = pytest.StashKey["Run"]()
_WRITTEN = pytest.StashKey[list[str]]()
_CONFIG: list[pytest.Config] = []  # the session's config (pytest_runtest_logreport is not given it)


def _get(config: pytest.Config, name: str) -> Any:
    return config.getoption("simd_" + name.replace("-", "_"))


def pytest_configure(config: pytest.Config) -> None:
    """(Also when the plugin is registered during collection: pytest calls it then.)"""
    _CONFIG[:] = [config]
    config.stash[_START] = time.perf_counter()
    config.stash[_RESULTS] = {}
    problems = _options.report_problems(lambda o: config.getoption(o.pytest_dest) if o.pytest else None,
                                        lambda o: o.pytest_flag)
    if problems:
        raise pytest.UsageError(problems[0])
    if used(config):
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
    if not used(config):
        return []
    impls = ",".join(_get(config, "impl") or [])
    shard = _get(config, "shard")
    return [f"simdbind conformance: profile={_get(config, 'profile')} seed={seed(config)} isa={_get(config, 'isa')} "
            f"library={','.join(_get(config, 'library') or []) or 'default'}" + (f" impl={impls}" if impls else "")
            + (f" shard={shard}" if shard else "")]


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


def parametrize(metafunc: pytest.Metafunc, marker: pytest.Mark) -> None:
    """Parametrize a marked test over implementations x the chosen cases (of --simd-shard, its part)."""
    from simdbind.conformance import deviations
    from simdbind.conformance.runner import select_cases, sharded

    config = metafunc.config
    impls = _implementations(config)
    catalogue = deviations.default()
    params, ids = [], []
    chosen = [(function, case) for function in _functions(marker)
              for case in select_cases(function, _get(config, "profile"), _get(config, "case-filter"),
                                       _get(config, "case"))]
    for function, case in sharded(chosen, _get(config, "shard")):
        for impl in impls:
            try:
                known = catalogue.match(impl, case)
            except deviations.CatalogueError:  # run_case reports it as an error of this case, naming the entry
                known = []
            marks = [pytest.mark.xfail(reason=", ".join(e.id for e in known), strict=False)] if known else []
            params.append(pytest.param(impl, function, case, marks=marks))
            ids.append(f"{impl.name}:{case.descriptor}")
    metafunc.parametrize(PARAMETERS, params, ids=ids)


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


def _as_shown(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport,
              result: CaseResult | None) -> CaseResult | None:
    """The conformance result of `item` as this report of it shows it: the check's own result where pytest shows
    what the check decided, else one made from the test's parameters and pytest's outcome (a failure in setup or
    teardown, or in the test after its check, is an error; a skip in setup, a skip). None: nothing to record."""
    from dataclasses import replace

    from simdbind.conformance.runner import new_result, repro_command

    from simdbind.conformance.model import Case

    callspec = getattr(item, "callspec", None)
    if callspec is None or not isinstance(callspec.params.get("case"), Case):  # (an empty parameter set: NOTSET)
        return None
    if report.passed and report.when != "call":
        return None
    if result is not None and (report.failed == (result.status in ("fail", "error"))) \
            and (report.skipped == (result.status in ("skip", "known"))):
        return result
    impl, function, case = (callspec.params[name] for name in PARAMETERS)
    if report.skipped:
        status = "known" if hasattr(report, "wasxfail") else "skip"
    elif report.passed:
        status = "xpass" if hasattr(report, "wasxfail") else "pass"
    else:
        status = "error"
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
        detail = str(report.longrepr[2])
    else:  # the exception's first line
        detail = (call.excinfo.exconly().strip() if call.excinfo is not None else report.longreprtext.strip())
        detail = detail.splitlines()[0] if detail else ""
    shown = new_result(impl, function, case, status, f"{report.when}: {detail}" if status == "error" else detail)
    if result is not None:  # the check ran: keep what it measured
        shown = replace(result, status=shown.status, detail=shown.detail)
    if shown.status != "pass" and not shown.repro:
        shown.repro = repro_command(impl, case, seed(item.config))
    return shown


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Attach the conformance result of the test, as pytest shows it, to its report (in every phase that decides
    the test's outcome), so that the controller gets it with or without xdist."""
    outcome = yield
    report = outcome.get_result()
    shown = _as_shown(item, call, report, take_result() if call.when == "call" else None)
    if shown is not None:
        from dataclasses import asdict

        report.user_properties.append(("simd_conformance_result", asdict(shown)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "simd_conformance_result" and isinstance(value, dict):
            _record(report, value)


def _record(report: pytest.TestReport, value: dict[str, Any]) -> None:
    """Keep a test's result; a later phase that fails (teardown) overrides an earlier one, as pytest counts it."""
    config = _CONFIG[0] if _CONFIG else None
    if config is None:
        return
    results = config.stash[_RESULTS]
    earlier = results.get(report.nodeid)
    if earlier is None or report.when == "call" or value["status"] == "error":
        results[report.nodeid] = value


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    wanted = [(kind, _get(config, f"report-{kind}")) for kind in ("json", "md", "html")
              if _get(config, f"report-{kind}")]
    results = config.stash.get(_RESULTS, {})
    if hasattr(config, "workerinput") or not results or not wanted:
        return
    from simdbind.conformance import report
    from simdbind.conformance.runner import CaseResult, Run

    run = Run([CaseResult(**r) for r in results.values()],
              time.perf_counter() - config.stash.get(_START, time.perf_counter()))
    run.meta = report.make_meta(_implementations(config), profile=_get(config, "profile"), seed=seed(config),
                                filter=" ".join(_get(config, "case-filter") or []) or None, case=_get(config, "case"),
                                workers=getattr(config.option, "numprocesses", 1) or 1,
                                command="python -m pytest (simdbind conformance modules)")
    if _get(config, "shard") is not None:
        run.meta["shard"] = str(_get(config, "shard"))
    writers = {"json": report.write_json, "md": report.write_markdown, "html": report.write_html}
    config.stash[_WRITTEN] = [str(writers[kind](run, path)) for kind, path in wanted]
    config.stash[_RUN] = run


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is None:
        return
    from simdbind.conformance import aggregate

    terminalreporter.write_sep("-", "simdbind conformance")
    terminalreporter.write_line(f"conformance: {aggregate.totals_line(run)}")
    for path in config.stash.get(_WRITTEN, []):
        terminalreporter.write_line(f"report: {path}")
