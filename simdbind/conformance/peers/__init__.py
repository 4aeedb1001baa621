"""Other engines as implementations under test (cross-validation), one package per engine and one module per
simdbind family, each written to the public API (:mod:`simdbind.conformance.api`) and registered in the entry-point
group ``simdbind.conformance.implementations`` (``--impl torch``). An engine that is not installed is refused when
it is asked for by name; in a report it appears with every case skipped and the reason."""
