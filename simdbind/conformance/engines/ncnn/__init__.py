"""ncnn (the ``ncnn`` package, CPU) as a conformance peer: each case becomes a small ncnn network written as a
param text and a weight blob (:mod:`._graph`), with float16/bfloat16 storage and arithmetic turned off and one
thread. ncnn's tensors are CHW without a batch, so batches run image by image and NHWC data is transposed around
the network. The adapters are in each family's ``families/<family>/peers.py`` (class ``Ncnn``), with the mappings
and what each cannot express in its docstring and in docs/peers.md; the implementation collects them by importing
those modules, then makes every adapter's prepared call (:mod:`.prepare`)."""

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import peer_modules

implementation = PythonImplementation("ncnn", requires=("ncnn",), modules=peer_modules(f"{__name__}.prepare"))
