"""ncnn (the ``ncnn`` package, CPU) as a conformance peer: each case becomes a small ncnn network written as a
param text and a weight blob (:mod:`._graph`), with float16/bfloat16 storage and arithmetic turned off and one
thread. ncnn's tensors are CHW without a batch, so batches run image by image and NHWC data is transposed around
the network. One module per simdbind family; the mappings and what each cannot express are in each module's
docstring and in docs/peers.md."""

from simdbind.conformance import PythonImplementation

FAMILIES = ("elementwise", "pooling", "inner_product", "convolution")

implementation = PythonImplementation("ncnn", requires=("ncnn",),
                                      modules=tuple(f"{__name__}.{module}" for module in FAMILIES + ("prepare",)))
