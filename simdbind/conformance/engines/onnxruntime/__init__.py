"""ONNX Runtime as a conformance peer: small ONNX models (:mod:`.model`) on the CPU provider, one thread. Its adapters (one
module per family it covers); the mappings, and what ONNX cannot express, are in each module's docstring."""

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import adapter_modules

implementation = PythonImplementation("onnxruntime", requires=("onnxruntime", "onnx"),
                                      modules=adapter_modules(__name__, __file__))
