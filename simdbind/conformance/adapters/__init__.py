"""Adapters: the same conformance cases run on other implementations of the operations (cross-validation).

An adapter maps one simdbind function name to a callable ``(case, inputs) -> outputs`` that computes the
function's outputs (NumPy arrays, the same shapes and dtypes as ``Function.run`` returns) with another library,
from the same ``inputs`` dict ``Function.inputs`` made. It must not modify ``inputs``. A case the other library
cannot express (a parameter it lacks, different NaN rules) raises :class:`Unsupported` with the reason; the case is
then reported as skipped for that implementation, with that reason.

Adding adapters for a family: create ``simdbind/conformance/adapters/torch_<name>.py`` (or ``onnxruntime_<name>.py``);
every such module is imported when that implementation is asked for (``--impl torch``), so it may import torch at
the top. In it::

    from simdbind.conformance.adapters import Unsupported, adapter

    @adapter("torch", "pooling_max")
    def pooling_max(case, inputs):
        import torch
        ...
        return result.numpy()

``adapter(..., tolerance=lambda case: Tolerance(...))`` replaces the function's tolerance for that adapter (only
where the other library is documented to be less accurate). The registration may also live in the family's cases
module, since importing this package does not import torch or onnxruntime. :mod:`simdbind.conformance.adapters.onnx_model`
builds and caches small ONNX models for the ``onnxruntime`` adapters.

When torch (or onnxruntime) is not installed, the implementation stays in the report and every case is skipped
with the reason "torch is not installed".
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable


class Unsupported(Exception):
    """The adapter's library cannot express this case; the message is the skip reason."""


@dataclass
class Adapter:
    implementation: str
    function: str
    fn: Callable[[Any, dict[str, Any]], Any]
    tolerance: Callable[[Any], Any] | None = None


@dataclass
class AdapterSet:
    """The adapters of one implementation (e.g. every torch adapter)."""

    name: str
    packages: tuple[str, ...]  # the Python packages it needs; the first gives the version
    adapters: dict[str, Adapter] = field(default_factory=dict)
    loaded: bool = False
    reason: str | None = None  # why nothing can run (a package is missing or failed to import)
    module_errors: dict[str, str] = field(default_factory=dict)

    def load(self) -> "AdapterSet":
        """Check the packages and import every ``<name>_*.py`` module of this package (once)."""
        if self.loaded:
            return self
        self.loaded = True
        missing = [p for p in self.packages if importlib.util.find_spec(p) is None]
        if missing:
            self.reason = f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed"
            return self
        try:
            for package in self.packages:
                importlib.import_module(package)
        except Exception as error:  # a broken install is a skip reason, not a crash of the run
            self.reason = f"importing {self.packages[0]} failed: {type(error).__name__}: {error}"
            return self
        for module in pkgutil.iter_modules(__path__):
            if module.name.startswith(self.name + "_"):
                try:
                    importlib.import_module(f"{__name__}.{module.name}")
                except Exception as error:
                    self.module_errors[module.name] = f"{type(error).__name__}: {error}"
        self._configure()
        return self

    def _configure(self) -> None:
        if self.name == "torch":
            import torch

            torch.set_num_threads(1)  # small cases; shared CPUs; deterministic reductions

    def get(self, function: str) -> Adapter:
        return self.adapters[function]

    def unavailable(self, function: str) -> str | None:
        self.load()
        if self.reason:
            return self.reason
        if function not in self.adapters:
            broken = "; ".join(f"{m}: {e}" for m, e in self.module_errors.items())
            return f"no {self.name} adapter for {function}" + (f" (adapter modules failed: {broken})" if broken else "")
        return None

    def version(self) -> str:
        self.load()
        if self.reason:
            return ""
        module = importlib.import_module(self.packages[0])
        return str(getattr(module, "__version__", ""))

    def package_versions(self) -> dict[str, str]:
        self.load()
        versions = {}
        for package in self.packages:
            try:
                versions[package] = str(getattr(importlib.import_module(package), "__version__", "?"))
            except Exception:
                versions[package] = "not installed"
        return versions

    def location(self) -> str:
        spec = importlib.util.find_spec(self.packages[0])
        return spec.origin if spec and spec.origin else ""


ADAPTER_SETS: dict[str, AdapterSet] = {
    "torch": AdapterSet("torch", ("torch",)),
    "onnxruntime": AdapterSet("onnxruntime", ("onnxruntime", "onnx")),
}


def adapter(implementation: str, function: str, tolerance: Callable[[Any], Any] | None = None
            ) -> Callable[[Callable], Callable]:
    """Register ``fn(case, inputs) -> outputs`` as `implementation`'s adapter for the simdbind `function`."""
    if implementation not in ADAPTER_SETS:
        raise KeyError(f"unknown adapter implementation {implementation!r}; known: {', '.join(ADAPTER_SETS)}")

    def decorate(fn: Callable) -> Callable:
        ADAPTER_SETS[implementation].adapters[function] = Adapter(implementation, function, fn, tolerance)
        return fn

    return decorate


def get_set(name: str) -> AdapterSet:
    """The adapter set `name`, loaded (its modules imported if its packages are installed)."""
    return ADAPTER_SETS[name].load()
