"""The coverage signal of ``simdbind conformance explore --guided``: which cases reach something no earlier case
reached, so that the search keeps them and searches around them.

Reading a coverage build's counters after every case would cost a process exit and a gcov run per case; the signal
here is read in microseconds instead, and is available on any build:

* the algorithm the implementation chose, as its context reports it (``SimdSynetConvolution32fInfo``: GemmNN,
  Winograd, NhwcDirect, DirectNchw, depthwise... at each ISA), crossed with the layout and the activation, which
  select separate code inside each algorithm;
* the class of every parameter: small values one by one, the bit length, and the remainder modulo 16 (the vector
  tails of the 4-, 8- and 16-lane loops); floats by class (zero, subnormal, finite, infinite, NaN, and the sign);
* the outcome (pass, known, a finding's kind).

A case that adds features is kept (the corpus) and scores the number it added; the search passes the score to
hypothesis's ``target()``, whose targeting phase mutates the highest-scoring cases. ``coverage.py`` measures what
the guided and the random search reach in lines and branches of a coverage build.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, Iterator

from simdbind.conformance.model import Case, Function

Feature = tuple[Hashable, ...]


def _scalars(name: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from _scalars(f"{name}[{index}]", item)
    else:
        yield name, value


def float_class(value: float) -> str:
    if math.isnan(value):
        return "nan"
    sign = "-" if math.copysign(1.0, value) < 0 else "+"
    if math.isinf(value):
        return sign + "inf"
    if value == 0:
        return sign + "0"
    if abs(value) < 1.1754943508222875e-38:  # below float32's smallest normal
        return sign + "subnormal"
    return sign + "finite"


def value_features(name: str, value: Any) -> set[Feature]:
    """The classes of one parameter's value."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return {(name, value)}
    if isinstance(value, int):
        return {(name, "value", value if value <= 4 else "large"), (name, "bits", value.bit_length()),
                (name, "mod16", value % 16)}
    if isinstance(value, float):
        return {(name, float_class(value))}
    return set()


def parameter_features(function: Function, case: Case) -> set[Feature]:
    features: set[Feature] = {("dtype", case.dtype), ("layout", case.layout), ("group", case.group)}
    for name, value in case.params.items():
        for key, item in _scalars(name, value):
            features |= value_features(key, item)
    variant = getattr(function, "variant", None)
    if variant is not None:
        features.add(("variant", variant(case)))
    return features


def algorithm(implementation: Any, function: Function, case: Case, seed: int) -> str | None:
    """The algorithm the implementation's context chooses for `case` (its ``info``), or None where the function
    has no context that reports one or the implementation is no library. The context is made in this process (its
    initialisation only: no Forward runs)."""
    context = getattr(function, "context", None)
    active = getattr(implementation, "active", None)
    if context is None or active is None:
        return None
    try:
        with active() as library, context(library, case, function.inputs(case, case.rng(seed))) as made:
            return str(made.info)
    except Exception as error:  # a case the context refuses: its own feature, and the worker reports the error
        return f"refused: {type(error).__name__}"


class Guide:
    """The features seen so far in one (implementation, function) search, and the cases that added some."""

    def __init__(self, implementation: Any, function: Function, seed: int):
        self.implementation, self.function, self.seed = implementation, function, seed
        self.seen: set[Feature] = set()
        self.corpus: list[tuple[str, int]] = []  # (descriptor, features it added), in the order found
        self.scores: dict[str, int] = {}

    def features(self, case: Case, kind: str) -> set[Feature]:
        features = parameter_features(self.function, case) | {("outcome", kind)}
        info = algorithm(self.implementation, self.function, case, self.seed)
        if info is not None:
            features |= {("algorithm", info), ("algorithm", info, "layout", case.layout)}
            features |= {("algorithm", info, key, value) for key, value in case.params.items()
                         if isinstance(value, str)}  # the activation, and any other named mode
        return features

    def observe(self, case: Case, kind: str) -> int:
        """Record a case's outcome `kind` (once per case); the number of features it added."""
        if case.descriptor not in self.scores:
            new = self.features(case, kind) - self.seen
            self.seen |= new
            self.scores[case.descriptor] = len(new)
            if new:
                self.corpus.append((case.descriptor, len(new)))
        return self.scores[case.descriptor]
