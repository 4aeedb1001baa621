"""Where the peers' adapters live: every engine's adapters of a family in that family's ``peers.py``, registered on
the engine with ``simdbind.conformance.engines.adapter``, and collected by each engine's implementation from every
family's ``peers`` module. The families import where no engine is installed (CI installs none), and an adapter in
one family's ``peers.py`` is for a function of that family."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import subprocess
import sys
import textwrap

import pytest

from simdbind.conformance import families
from simdbind.conformance.engines import implementation
from simdbind.conformance.model import REGISTRY

ENGINES = ("torch", "onnxruntime", "openvino", "ncnn")
ENGINE_PACKAGES = ("torch", "onnx", "onnxruntime", "openvino", "ncnn")


def _import_peers() -> None:
    families.register()
    for module in families.modules("peers"):
        importlib.import_module(module)


def test_the_peers_modules_import_with_no_engine_installed() -> None:
    script = textwrap.dedent(f"""
        import importlib, sys

        BLOCKED = {ENGINE_PACKAGES!r}
        sys.modules.update(dict.fromkeys(BLOCKED))  # None: "import torch" fails, find_spec finds nothing

        from simdbind.conformance import families
        from simdbind.conformance.engines import implementation
        for module in families.modules("peers"):
            importlib.import_module(module)
        for engine in {ENGINES!r}:
            assert implementation(engine).functions, engine
            assert "not installed" in implementation(engine).missing(), engine
        imported = sorted(m for m, v in sys.modules.items() if m.split(".")[0] in BLOCKED and v is not None)
        assert not imported, imported
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_an_engine_collects_its_adapters_from_every_family(engine: str) -> None:
    peers = families.modules("peers")
    assert implementation(engine).modules[:len(peers)] == peers
    _import_peers()
    covered = {fn.__module__ for fn, _ in implementation(engine).functions.values()}
    assert covered <= set(peers) and covered, covered


@pytest.mark.parametrize("engine", ENGINES)
def test_each_adapter_is_in_the_peers_module_of_its_function_family(engine: str) -> None:
    _import_peers()
    registered = implementation(engine)
    for function, (fn, _) in registered.functions.items():
        assert fn.__module__ == f"{families.__name__}.{REGISTRY[function].family}.peers", (engine, function)
    for function, prepare in registered.preparers.items():
        if inspect.isfunction(prepare) and prepare.__module__.startswith(families.__name__):
            assert prepare.__module__ == f"{families.__name__}.{REGISTRY[function].family}.peers", (engine, function)
        assert function in registered.functions, (engine, function)


def test_no_engine_package_keeps_a_module_named_after_a_family() -> None:
    for engine in ENGINES:
        folder = pathlib.Path(inspect.getfile(importlib.import_module(f"simdbind.conformance.engines.{engine}"))).parent
        named = [family for family in families.names() if (folder / f"{family}.py").exists()]
        assert not named, f"{engine}: the adapters of {named} belong in families/<family>/peers.py"
