"""pytest options and parametrization shared by every test module.

Conformance modules declare ``pytestmark = pytest.mark.conformance("name", ...)`` and a test taking
``implementation`` and ``case``; this file expands them over implementations x cases of the chosen profile.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("simdbind conformance")
    group.addoption("--library", action="append", default=None,
                    help="'bundled' or a libSimd path; repeatable (default: bundled, plus $SIMD_LIBRARY)")
    group.addoption("--isa", default="all", help="ISA of the bundled library or 'all' (default)")
    group.addoption("--mode", default=None, choices=("api", "abi"), help="load the bundled library in this mode")
    group.addoption("--profile", default=os.environ.get("SIMDBIND_PROFILE", "ci"), choices=("smoke", "ci", "full"))
    group.addoption("--seed", type=int, default=None, help="base seed of the case inputs")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance(*functions): parametrize over implementations x cases")


def pytest_report_header(config: pytest.Config) -> list[str]:
    from conformance.runner import DEFAULT_SEED

    seed = config.getoption("--seed") or DEFAULT_SEED
    return [f"simdbind conformance: profile={config.getoption('--profile')} seed={seed} "
            f"isa={config.getoption('--isa')} library={config.getoption('--library') or 'default'}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("conformance")
    if marker is None or "case" not in metafunc.fixturenames:
        return
    from conformance.implementations import implementations
    from conformance.runner import functions, select_cases

    config = metafunc.config
    impls = implementations(config.getoption("--library"), config.getoption("--isa"), config.getoption("--mode"))
    params, ids = [], []
    for function in functions(marker.args):
        for case in select_cases(function, config.getoption("--profile")):
            for impl in impls:
                params.append((impl, function, case))
                ids.append(f"{impl.name}:{case.descriptor}")
    metafunc.parametrize(("implementation", "function", "case"), params, ids=ids)


@pytest.fixture
def seed(request: pytest.FixtureRequest) -> int:
    from conformance.runner import DEFAULT_SEED

    return request.config.getoption("--seed") or DEFAULT_SEED


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
