"""Benchmarks: ``simdbind bench`` (see :mod:`simdbind.bench.harness`).

A benchmark case is a conformance case (:mod:`simdbind.conformance.model`): a one-line descriptor in the suite's
grammar, its inputs made by its Function's ``inputs(case, rng)``, and every measured thing an implementation of the
suite's public API (:mod:`simdbind.conformance.api`), timed through its ``prepare`` call. Every other module of this
package is a *family module*, discovered automatically::

    DESCRIPTORS = ["unary op=exp size=4194304", ...]      # the cases, in the suite's grammar
    QUICK = DESCRIPTORS[:3]                               # optional: the subset `--quick` runs

    def work(case: Case) -> Work: ...                     # what one call does, from the case's params alone

A family module named after a conformance family (convolution, elementwise, gather, inner_product, pooling) gives
the work of every case of that family's functions, wherever it is listed. A module for another kind of
measurement (overhead, gil) lists descriptors of any function and may define ``work`` (else the function family's
is used), ``measured(libraries) -> [(kind, implementation)]`` (what it measures instead of the libraries: kind
"simdbind" for a library's own row, "variant" for a row on a library such as the raw cffi call), ``VERSUS`` (labels
of variant rows to compare each library row with), ``BUDGET`` (an overhead budget against a variant), ``PEERS``
(the names of the default peers it compares with, or False for none) and ``BOUND = False`` (no memcpy bound).
"""

from simdbind.bench.cases import Listed, discover, work
from simdbind.bench.harness import Measurement, Report, run
from simdbind.conformance.work import Work

__all__ = ["Listed", "Measurement", "Report", "Work", "discover", "run", "work"]
