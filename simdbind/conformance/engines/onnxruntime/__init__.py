"""ONNX Runtime as a conformance peer: small ONNX models (:mod:`.model`) on the CPU provider, one thread, and the
activations as ONNX nodes (:mod:`.activation`). The adapters are in each family's ``families/<family>/peers.py``
(class ``OnnxRuntime``), with the mappings and what ONNX cannot express in its docstring; the implementation
collects them by importing those modules (:func:`~simdbind.conformance.engines.peer_modules`)."""

from simdbind.conformance import PythonImplementation
from simdbind.conformance.engines import peer_modules

implementation = PythonImplementation("onnxruntime", requires=("onnxruntime", "onnx"), modules=peer_modules())
