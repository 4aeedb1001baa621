"""Benchmarks: ``simdbind bench`` (see :mod:`simdbind.bench.harness`).

Every other module in this package is a *family module*, discovered automatically. It defines

```python
def cases(quick: bool = False) -> list[dict]:
    return [{
        "name": "unary exp 4M",              # unique, short; --functions matches it (and the family) by substring
        "family": "elementwise",
        "unit": "Gelem/s",                   # or "GFLOP/s", "GB/s": throughput = work / median time / 1e9
        "work": 4 * 2**20,                   # units of `unit` (times 1e9) done by one call
        "simdbind": lambda library: (lambda: simdbind.unary(x, "exp", out=o, library=library)),
        "peers": {"numpy": lambda: np.exp(x, out=o), "torch": lambda: torch.exp(tx, out=to)},
        # optional:
        "variants": {"raw cffi": lambda library: <zero-arg callable>},   # more library-bound implementations
        "budget": {"baseline": "raw cffi", "factor": 1.5, "plus_us": 1.0},  # overhead budget, reported
        "note": "one line for the report",
    }]
```

Rules: build inputs once, outside the callables; import optional peers (torch, onnxruntime) inside ``try`` and
list them only when importable; make ``cases`` cheap (no timing, no large work at import). The ``simdbind``
entry receives a :class:`simdbind.Library` already switched to the ISA being measured and returns a zero-arg
callable doing one call. A peer entry is a zero-arg callable doing one call (or returning such a callable).
A case whose library lacks the function raises :class:`simdbind.FunctionNotAvailableError` from its ``simdbind``
entry; the harness records it as unavailable for that library.
"""

from simdbind.bench.harness import Case, Measurement, Report, discover, run

__all__ = ["Case", "Measurement", "Report", "discover", "run"]
