"""The guide of ``explore --guide features``: keep the cases that showed something no earlier case showed, and
search around them.

A case's features are what it tells about the code it reached without instrumenting that code: the algorithm the
implementation reports for it (a convolution context's ``Info``), that algorithm crossed with the layout and with
each name-valued parameter (activation, op, data kind), the class of each parameter's value (0, 1, 2, 3-4, 5-8, ...:
the sizes where vector bodies, tails and special kernels change) and the outcome. A case with a feature not seen
before joins the corpus. For each drawn case the search then also runs a neighbour of a corpus case: one field
replaced by the drawn case's value (a crossover), or one integer moved by a step that crosses a vector width (1,
4, 8, 16). Neighbours that break a rule of the function's case domain are not run; the ones the implementation
refuses count as ``rejected``, as drawn cases do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from simdbind.conformance.model import CASE_ATTRIBUTES, Case, DescriptorError, Function

#: Steps of an integer move: one element, and the float counts of an SSE, AVX and AVX-512 vector.
STEPS = (1, 4, 8, 16)
#: The share of neighbours that move an integer (the others cross a field over from the drawn case).
MOVE_SHARE = 0.5
#: How many of the newest corpus cases a neighbour is taken from (newer ones are nearer what was just found).
RECENT = 32


def size_class(value: int) -> str:
    """0, 1, 2, then one class per power of two (3-4, 5-8, 9-16, ...), negative values as one class."""
    if value < 0:
        return "neg"
    if value <= 2:
        return str(value)
    return f"<={1 << (value - 1).bit_length()}"


@dataclass
class Guide:
    function: Function
    rng: random.Random
    seen: set[str] = field(default_factory=set)
    corpus: list[Case] = field(default_factory=list)
    neighbours_made: int = 0  # the neighbours made (inside the case domain)

    def features(self, case: Case, kind: str, info: str) -> set[str]:
        values = {**case.params, "dtype": case.dtype, "layout": case.layout, "group": case.group}
        found = {f"outcome={kind}"}
        algorithm = info.split("::", 1)[-1] if info else ""
        for f in self.function.fields:
            value = f.value(values)
            if f.kind in ("int", "dims", "list"):
                parts = (value,) if f.kind == "int" else value
                found.add(f"{f.key}=" + "x".join(size_class(int(v)) for v in parts))
            else:
                found.add(f"{f.key}={f.encode(value)}")
                if algorithm and f.kind in ("name", "bool"):
                    found.add(f"{algorithm}|{f.key}={f.encode(value)}")
        if algorithm:
            found.add(f"algorithm={algorithm}")
        return found

    def observe(self, case: Case, kind: str, info: str) -> bool:
        """Record a case's features; True (and the case joins the corpus) when one is new."""
        new = self.features(case, kind, info) - self.seen
        if not new:
            return False
        self.seen |= new
        self.corpus.append(case)
        return True

    def neighbour(self, drawn: Case) -> Case | None:
        """A case next to a recent corpus case (None: the corpus is empty or the neighbour left the domain)."""
        if not self.corpus:
            return None
        base = self.rng.choice(self.corpus[-RECENT:])
        values = {**base.params, "dtype": base.dtype, "layout": base.layout, "group": base.group}
        numeric = [f for f in self.function.fields if f.kind in ("int", "dims", "list")]
        if numeric and self.rng.random() < MOVE_SHARE:
            chosen = self.rng.choice(numeric)
            current = chosen.value(values)
            step = self.rng.choice(STEPS) * self.rng.choice((-1, 1))
            if chosen.kind == "int":
                moved: Any = int(current) + step
            else:
                index = self.rng.randrange(len(current))
                moved = tuple(int(v) + step if i == index else v for i, v in enumerate(current))
            chosen.assign(moved, values)
        else:
            drawn_values = {**drawn.params, "dtype": drawn.dtype, "layout": drawn.layout, "group": drawn.group}
            chosen = self.rng.choice(self.function.fields)
            chosen.assign(chosen.value(drawn_values), values)
        attributes = {key: values.pop(key) for key in CASE_ATTRIBUTES}
        try:
            case = self.function.case(values, **attributes, profiles=())
            self.function.check_domain(case)
        except (DescriptorError, ValueError):
            return None
        self.neighbours_made += 1
        return case
