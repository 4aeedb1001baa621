"""The conformance test modules, one per simdbind family, run by the pytest plugin (:mod:`simdbind.conformance.plugin`)
over the implementations and cases its ``--simd-`` options choose; in another project:
``python -m pytest --pyargs simdbind.conformance.tests --simd-impl mypkg.engine:impl``."""
