"""pytest options and parametrization shared by every test module.

Conformance modules declare ``pytestmark = pytest.mark.conformance("name", ...)`` and a test taking
``implementation``, ``function``, ``case`` and ``seed``; this file expands them over implementations x cases of the
chosen profile. The options mirror ``simdbind conformance``:

    python -m pytest tests/conformance --profile full --isa avx2 --impl torch --case-filter 'max*size=17' \\
        --report-json reports/pytest.json --report-md reports/pytest.md --report-html reports/pytest.html

(JUnit XML: pytest's own ``--junitxml``). A case the deviation catalogue lists for an implementation is an xfail
whose reason is the catalogue id; when it passes, pytest reports XPASS. The hypothesis profile follows
``--profile`` (see ``simdbind/conformance/strategies.py``); its seed is printed in the header.
"""

from __future__ import annotations

import os
import random

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("simdbind conformance")
    group.addoption("--library", action="append", default=None,
                    help="'bundled' or a libSimd path; repeatable (default: bundled, plus $SIMD_LIBRARY)")
    group.addoption("--isa", default="all", help="ISA of the bundled library or 'all' (default)")
    group.addoption("--mode", default=None, choices=("api", "abi"), help="load the bundled library in this mode")
    group.addoption("--impl", action="append", default=None, choices=("torch", "onnxruntime"),
                    help="also run the conformance cases on this adapter (repeatable)")
    group.addoption("--profile", default=os.environ.get("SIMDBIND_PROFILE", "ci"), choices=("smoke", "ci", "full"))
    group.addoption("--seed", type=int, default=None, help="base seed of the case inputs")
    group.addoption("--case-filter", action="append", default=None, metavar="PATTERN",
                    help="only cases whose 'function dtype layout descriptor' matches *PATTERN* (the CLI's -k)")
    group.addoption("--case", default=None, metavar="DESCRIPTOR", help="only the case with this descriptor")
    group.addoption("--report-json", default=None, metavar="FILE", help="conformance JSON report")
    group.addoption("--report-md", default=None, metavar="FILE", help="conformance Markdown report")
    group.addoption("--report-html", default=None, metavar="FILE", help="conformance HTML matrix")


def _seed(config: pytest.Config) -> int:
    from simdbind.conformance.runner import DEFAULT_SEED

    seed = config.getoption("--seed")
    return DEFAULT_SEED if seed is None else seed


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance(*functions): parametrize over implementations x cases")
    config._conformance_results = []  # type: ignore[attr-defined]
    try:
        from hypothesis import core

        from simdbind.conformance import strategies
    except ImportError:  # hypothesis is a test extra; without it the hypothesis tests are not collected anyway
        return
    profile = config.getoption("--profile")
    strategies.load_profile(profile)
    seed = config.getoption("--hypothesis-seed", default=None)
    if seed is None:
        # ci/smoke: the run's seed (reproducible); full: a fresh one, shared with xdist workers through the env.
        if profile == "full" and config.getoption("--seed") is None:
            seed = os.environ.setdefault("SIMDBIND_HYPOTHESIS_SEED", str(random.randrange(2**32)))
        else:
            seed = _seed(config)
        core.global_force_seed = int(seed)
    config._hypothesis_seed = seed  # type: ignore[attr-defined]


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [f"simdbind conformance: profile={config.getoption('--profile')} seed={_seed(config)} "
             f"isa={config.getoption('--isa')} library={config.getoption('--library') or 'default'}"
             + (f" impl={','.join(config.getoption('--impl'))}" if config.getoption("--impl") else "")]
    seed = getattr(config, "_hypothesis_seed", None)
    if seed is not None:
        from simdbind.conformance import strategies

        lines.append(f"hypothesis: profile={config.getoption('--profile')} seed={seed} (reproduce with "
                     f"--hypothesis-seed={seed}) database={strategies.database_path()}")
    return lines


def _implementations(config: pytest.Config) -> list:
    from simdbind.conformance.implementations import implementations

    cached = getattr(config, "_conformance_impls", None)
    if cached is None:
        cached = implementations(config.getoption("--library"), config.getoption("--isa"),
                                 config.getoption("--mode"), config.getoption("--impl"))
        config._conformance_impls = cached  # type: ignore[attr-defined]
    return cached


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("conformance")
    if marker is None or "case" not in metafunc.fixturenames:
        return
    from simdbind.conformance import deviations
    from simdbind.conformance.runner import functions, select_cases

    config = metafunc.config
    impls = _implementations(config)
    catalogue = deviations.default()
    params, ids = [], []
    for function in functions(marker.args):
        for case in select_cases(function, config.getoption("--profile"), config.getoption("--case-filter"),
                                 config.getoption("--case")):
            for impl in impls:
                try:
                    known = catalogue.match(impl, case)
                except deviations.CatalogueError:  # run_case reports it as an error of this case, naming the entry
                    known = []
                marks = [pytest.mark.xfail(reason=", ".join(e.id for e in known), strict=False)] if known else []
                params.append(pytest.param(impl, function, case, marks=marks))
                ids.append(f"{impl.name}:{case.descriptor}")
    metafunc.parametrize(("implementation", "function", "case"), params, ids=ids)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Attach the conformance result of the test (recorded by tests/conformance/check.py) to its report, so that
    the controller gets it with or without xdist."""
    outcome = yield
    if call.when != "call":
        return
    from tests.conformance import check

    result = check.take_result()
    if result is not None:
        from dataclasses import asdict

        outcome.get_result().user_properties.append(("conformance_result", asdict(result)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, value in report.user_properties:
        if name == "conformance_result":
            _RESULTS.append(value)


_RESULTS: list[dict] = []  # the conformance results of this session (on the controller)
_START: list[float] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    import time

    _START[:] = [time.perf_counter()]


def _wanted_reports(config: pytest.Config) -> list[tuple[str, str]]:
    return [(kind, config.getoption(f"--report-{kind}")) for kind in ("json", "md", "html")
            if config.getoption(f"--report-{kind}")]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if hasattr(config, "workerinput") or not _RESULTS or not _wanted_reports(config):
        return
    from simdbind.conformance import report
    from simdbind.conformance.runner import CaseResult, Run

    import time

    run = Run([CaseResult(**r) for r in _RESULTS], time.perf_counter() - (_START[0] if _START else 0.0))
    run.meta = report.make_meta(_implementations(config), profile=config.getoption("--profile"),
                                seed=_seed(config), filter=" ".join(config.getoption("--case-filter") or []) or None,
                                case=config.getoption("--case"), workers=getattr(config.option, "numprocesses", 1) or 1,
                                command="python -m pytest (conformance modules)")
    writers = {"json": report.write_json, "md": report.write_markdown, "html": report.write_html}
    config._conformance_written = [str(writers[kind](run, path))  # type: ignore[attr-defined]
                                   for kind, path in _wanted_reports(config)]
    config._conformance_run = run  # type: ignore[attr-defined]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    run = getattr(config, "_conformance_run", None)
    if run is None:
        return
    from simdbind.conformance import report

    terminalreporter.write_sep("-", "simdbind conformance")
    terminalreporter.write_line(f"conformance: {report.totals_line(run)}")
    for path in getattr(config, "_conformance_written", []):
        terminalreporter.write_line(f"report: {path}")


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    return _seed(request.config)


@pytest.fixture(scope="session")
def bundled():
    import simdbind

    return simdbind.load("bundled")


@pytest.fixture(scope="session")
def external():
    """The library named by SIMD_LIBRARY (an upstream build), or a skip."""
    import simdbind

    path = os.environ.get("SIMD_LIBRARY")
    if not path:
        pytest.skip("SIMD_LIBRARY is not set: no external Simd library to test")
    return simdbind.load(path)
