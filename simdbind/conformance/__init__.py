"""The simdbind conformance suite: NumPy references, named case grids and a runner that checks any implementation.

* ``simdbind.conformance.reference``: one module per family, mirroring ``simdbind``'s, written from the contract only.
* ``simdbind.conformance.cases``: one module per family; each function there is a :class:`~simdbind.conformance.model.Function`
  (its cases, inputs, how to call it, its reference and its tolerance), registered by name.
* ``simdbind.conformance.runner``: runs functions x implementations x cases (in worker processes if asked) and returns
  results that the CLI prints and the pytest modules assert on; ``simdbind.conformance.report`` writes them (JSON, JUnit,
  Markdown, HTML matrix) and diffs two runs.
* ``simdbind.conformance.implementations``: what runs the cases: a library at one ISA, or an adapter
  (``simdbind.conformance.adapters``: PyTorch and ONNX Runtime, for cross-validation).
* ``simdbind.conformance.deviations``: the catalogue of known deviations (data in ``simdbind/conformance/deviations/*.json``).
* ``simdbind.conformance.strategies``: hypothesis settings profiles and common strategies.
"""
