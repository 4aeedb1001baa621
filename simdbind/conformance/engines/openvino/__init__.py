"""OpenVINO (the ``openvino`` package, CPU plugin) as a conformance peer: one small model per case shape, built
from opset ops (:mod:`._graph`), compiled for float32 on one thread. Its adapters (one module per family it covers); the mappings
and what each cannot express are in each module's docstring and in docs/peers.md."""

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import adapter_modules

implementation = PythonImplementation("openvino", requires=("openvino",),
                                      modules=adapter_modules(__name__, __file__))
