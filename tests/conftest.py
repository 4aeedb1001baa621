"""This repository's fixtures, and its hypothesis settings.

The conformance options (``--simd-profile``, ``--simd-impl``, ...) and the parametrization of the conformance
modules (``simdbind/conformance/tests``) come from the suite's pytest plugin, ``simdbind.conformance.plugin``. Here,
the hypothesis tests follow ``--simd-profile`` (see ``simdbind/conformance/strategies.py``) with the run's seed (a
fresh one for the full profile, shared with xdist workers through the environment), printed in the header.
"""

from __future__ import annotations

import os
import random
import signal

import pytest

# A test run started in the background by a script inherits SIGINT ignored (a shell does that to its background
# jobs), and so would every process the tests start and then interrupt as Ctrl-C would: they would never see it.
# Python's own handler here makes exec give those processes the default back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    try:
        from hypothesis import core

        from simdbind.conformance import plugin, strategies
    except ImportError:  # hypothesis is a test extra; without it the hypothesis tests are not collected anyway
        return
    profile = config.getoption("simd_profile")
    strategies.load_profile(profile)
    seed = config.getoption("--hypothesis-seed", default=None)
    if seed is None:
        if profile == "full" and config.getoption("simd_seed") is None:
            seed = os.environ.setdefault("SIMDBIND_HYPOTHESIS_SEED", str(random.randrange(2**32)))
        else:
            seed = plugin.seed(config)
        core.global_force_seed = int(seed)
    config._hypothesis_seed = seed  # type: ignore[attr-defined]


def pytest_report_header(config: pytest.Config) -> list[str]:
    seed = getattr(config, "_hypothesis_seed", None)
    if seed is None:
        return []
    from simdbind.conformance import strategies

    profile = config.getoption("simd_profile")
    return [f"hypothesis: profile={profile} seed={seed} (reproduce with --hypothesis-seed={seed}) "
            f"database={strategies.database_path()}"]


@pytest.fixture(scope="session")
def bundled():
    import simdbind

    return simdbind.load("bundled")


@pytest.fixture(params=["api", "abi"])
def library(request, bundled):
    """The bundled library in both cffi modes: API (the compiled module) and ABI (its file through ffi.dlopen)."""
    import simdbind

    return bundled if request.param == "api" else simdbind.load(simdbind.bundled_path())


@pytest.fixture(scope="module", params=["bundled", "as-upstream", "SIMD_LIBRARY"])
def any_library(request):
    """The bundled library as it is, the bundled code presented as an upstream build (kind "external": the wrappers
    take their upstream paths on correct code), and the library SIMD_LIBRARY names (a skip when unset)."""
    import dataclasses

    import simdbind

    if request.param == "SIMD_LIBRARY":
        if not os.environ.get("SIMD_LIBRARY"):
            pytest.skip("SIMD_LIBRARY is not set: no external Simd library to test")
        return simdbind.load(os.environ["SIMD_LIBRARY"])
    bundled = simdbind.load("bundled")
    if request.param == "bundled":
        return bundled
    return dataclasses.replace(bundled, kind="external", version="7.1.162", _functions={}, _bindings=None)


@pytest.fixture(scope="session")
def external():
    """The library named by SIMD_LIBRARY (an upstream build), or a skip."""
    import simdbind

    path = os.environ.get("SIMD_LIBRARY")
    if not path:
        pytest.skip("SIMD_LIBRARY is not set: no external Simd library to test")
    return simdbind.load(path)
