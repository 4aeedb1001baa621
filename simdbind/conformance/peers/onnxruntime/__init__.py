"""ONNX Runtime as a conformance peer: small ONNX models (:mod:`.model`) on the CPU provider, one thread. One module
per simdbind family; the mappings, and what ONNX cannot express, are in each module's docstring."""

from simdbind.conformance import PythonImplementation

FAMILIES = ("elementwise", "pooling", "gather", "inner_product", "convolution")

implementation = PythonImplementation("onnxruntime", requires=("onnxruntime", "onnx"),
                                      modules=tuple(f"{__name__}.{module}" for module in FAMILIES + ("prepare",)))
