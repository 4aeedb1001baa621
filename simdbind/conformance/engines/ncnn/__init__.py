"""ncnn (the ``ncnn`` package, CPU) as a conformance peer: each case becomes a small ncnn network written as a
param text and a weight blob (:mod:`._graph`), with float16/bfloat16 storage and arithmetic turned off and one
thread. ncnn's tensors are CHW without a batch, so batches run image by image and NHWC data is transposed around
the network. Its adapters (one module per family it covers); the mappings and what each cannot express are in each module's
docstring and in docs/peers.md."""

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import adapter_modules

implementation = PythonImplementation("ncnn", requires=("ncnn",),
                                      modules=adapter_modules(__name__, __file__))
