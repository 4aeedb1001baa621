"""simdbind's pytest plugin as pytest loads it (entry point ``pytest11`` ``simdbind_conformance``): in every run of
every project where simdbind is installed, so it costs nothing there. It adds the ``--simd-*`` options and the
``simd_conformance`` marker, and imports the conformance suite (simdbind, NumPy) only when a ``--simd-*`` option is
used or a marked test is collected: then :mod:`simdbind.conformance.plugin` is registered and does the work.

It lives outside the ``simdbind`` package, whose ``__init__`` loads the library and NumPy, and reads the option
table (:mod:`simdbind.conformance.options`, which imports nothing heavy) from its file for the same reason.

PYTEST_DONT_REWRITE (pytest has imported this module before it could rewrite it: it has no asserts)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

MARKER = "simd_conformance"
_OPTIONS = "simdbind.conformance.options"


def _options() -> ModuleType:
    """The option table: the suite's module when it is imported, else the same file loaded on its own."""
    module = sys.modules.get(_OPTIONS) or sys.modules.get(__name__ + "._options")
    if module is not None:
        return module
    package = importlib.util.find_spec("simdbind")  # where the package is, without running its __init__
    # (An editable install's package spans the source tree and the installed compiled modules.)
    locations = (package.submodule_search_locations if package else None) or []
    found = [path for location in locations for path in [Path(location) / "conformance" / "options.py"]
             if path.is_file()]
    if not found:
        raise ImportError("simdbind_pytest: simdbind.conformance.options is not installed")
    spec = importlib.util.spec_from_file_location(__name__ + "._options", found[0])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def _suite(config: pytest.Config) -> ModuleType:
    """The suite's plugin, registered with `config` the first time."""
    from simdbind.conformance import plugin

    if not config.pluginmanager.is_registered(plugin):
        config.pluginmanager.register(plugin, "simdbind_conformance_suite")
    return plugin


def used(config: pytest.Config) -> bool:
    """Was any --simd- option given (other than at its default)?"""
    return any(config.getoption(o.pytest_dest) != (o.default() if callable(o.default) else o.default)
               for o in _options().OPTIONS if o.pytest)


def pytest_addoption(parser: pytest.Parser) -> None:
    _options().add_pytest_options(parser.getgroup("simdbind conformance", "simdbind conformance suite"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(*functions, family=None): run the test over implementations x "
                                       "cases of these simdbind functions (see simdbind.conformance.plugin)")
    if used(config):
        _suite(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is not None and "case" in metafunc.fixturenames:
        _suite(metafunc.config).parametrize(metafunc, marker)


@pytest.fixture
def simd_seed(request: pytest.FixtureRequest) -> Any:
    """The base seed of the case inputs."""
    return _suite(request.config).seed(request.config)
