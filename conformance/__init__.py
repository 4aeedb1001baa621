"""The simdbind conformance suite: NumPy references, named case grids and a runner that checks any implementation.

* ``conformance.reference``: one module per family, mirroring ``simdbind``'s, written from the contract only.
* ``conformance.cases``: one module per family; each function there is a :class:`~conformance.model.Function`
  (its cases, inputs, how to call it, its reference and its tolerance), registered by name.
* ``conformance.runner``: runs functions x implementations x cases and returns results that the CLI prints and
  the pytest modules assert on.
"""
