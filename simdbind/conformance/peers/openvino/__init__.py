"""OpenVINO (the ``openvino`` package, CPU plugin) as a conformance peer: one small model per case shape, built
from opset ops (:mod:`._graph`), compiled for float32 on one thread. One module per simdbind family; the mappings
and what each cannot express are in each module's docstring and in docs/peers.md."""

from simdbind.conformance import PythonImplementation

FAMILIES = ("elementwise", "pooling", "gather", "inner_product", "convolution")

implementation = PythonImplementation("openvino", requires=("openvino",),
                                      modules=tuple(f"{__name__}.{module}" for module in FAMILIES + ("prepare",)))
