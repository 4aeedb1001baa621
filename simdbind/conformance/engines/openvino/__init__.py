"""OpenVINO (the ``openvino`` package, CPU plugin) as a conformance peer: one small model per case shape, built
from opset ops (:mod:`._graph`), compiled for float32 on one thread. The adapters are in each family's
``families/<family>/peers.py`` (class ``OpenVINO``), with the mappings and what each cannot express in its docstring
and in docs/peers.md; the implementation collects them by importing those modules, then makes every adapter's
prepared call (:mod:`.prepare`)."""

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import peer_modules

implementation = PythonImplementation("openvino", requires=("openvino",), modules=peer_modules(f"{__name__}.prepare"))
