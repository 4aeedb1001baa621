"""Hypothesis settings profiles and common strategies for the conformance and fuzz tests.

Profiles (loaded by ``tests/conftest.py`` from ``--profile``; also ``settings.load_profile(name)``):

* ``smoke``: 25 examples, 2 s deadline;  ``ci``: 100 examples, 5 s deadline (bounded, what ``.ci/run`` runs);
* ``full``: 2000 examples, no deadline.

Every profile stores examples in one fixed database, ``<repo>/.hypothesis/examples`` (gitignored; override with
``SIMDBIND_HYPOTHESIS_DB``), so a failure found once is replayed first on the next run, and prints the
``@reproduce_failure`` blob of a failure. The seed is fixed per run and printed in pytest's header (see conftest).

Use in a test::

    from hypothesis import given
    from simdbind.conformance import strategies as sbst

    @given(x=sbst.float32_arrays(sbst.shapes(max_dims=2)), layout=sbst.layouts())
    def test_something(x, layout): ...

(tests that pass their own ``@settings(max_examples=...)`` override the profile's count only).
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {"max_examples": 25, "deadline": timedelta(seconds=2)},
    "ci": {"max_examples": 100, "deadline": timedelta(seconds=5)},
    "full": {"max_examples": 2000, "deadline": None},
}

#: Sizes that cross every vector width (4, 8, 16 float lanes) and leave every tail length.
VECTOR_SIZES = tuple(range(1, 18)) + (31, 32, 33, 47, 48, 49, 63, 64, 65)


def database_path() -> Path:
    """``$SIMDBIND_HYPOTHESIS_DB``, else ``.hypothesis/examples`` at the repository root (next to pyproject.toml),
    else under the current directory."""
    if os.environ.get("SIMDBIND_HYPOTHESIS_DB"):
        return Path(os.environ["SIMDBIND_HYPOTHESIS_DB"])
    root = Path(__file__).resolve().parent.parent
    if not (root / "pyproject.toml").exists():
        root = Path.cwd()
    return root / ".hypothesis" / "examples"


def register_profiles() -> None:
    from hypothesis.database import DirectoryBasedExampleDatabase

    database = DirectoryBasedExampleDatabase(str(database_path()))
    for name, values in PROFILES.items():
        settings.register_profile(name, database=database, print_blob=True,
                                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                                  **values)


def load_profile(name: str) -> None:
    """Register the profiles (idempotent) and load `name` ("smoke", "ci" or "full")."""
    if name not in PROFILES:
        raise ValueError(f"hypothesis profile: must be one of {', '.join(PROFILES)}, got {name!r}")
    register_profiles()
    settings.load_profile(name)


# -- strategies --------------------------------------------------------------------------------------------------
def float32(min_value: float | None = -1e3, max_value: float | None = 1e3, allow_nan: bool = False,
            allow_infinity: bool = False, allow_subnormal: bool = True) -> st.SearchStrategy[float]:
    """Float32-representable floats (finite and bounded by default)."""
    return st.floats(min_value, max_value, width=32, allow_nan=allow_nan, allow_infinity=allow_infinity,
                     allow_subnormal=allow_subnormal)


def special_float32() -> st.SearchStrategy[float]:
    """The values outside the exact domain: NaN, +-Inf, +-0, the extremes and a subnormal."""
    return st.sampled_from([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, float(np.finfo(np.float32).max),
                            -float(np.finfo(np.float32).max), float(np.finfo(np.float32).tiny),
                            float(np.finfo(np.float32).smallest_subnormal)])


def shapes(min_dims: int = 1, max_dims: int = 4, min_side: int = 1, max_side: int = 9) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def vector_sizes() -> st.SearchStrategy[int]:
    """Lengths that exercise every SIMD body/tail split."""
    return st.sampled_from(VECTOR_SIZES)


def float32_arrays(shape: Any, elements: st.SearchStrategy | None = None, specials: bool = False
                   ) -> st.SearchStrategy[np.ndarray]:
    """Float32 arrays of `shape` (a tuple or a strategy); with `specials`, some elements are special values."""
    values = elements if elements is not None else float32()
    if specials:
        values = st.one_of(values, special_float32())
    return hnp.arrays(np.float32, shape, elements=values)


def int_arrays(dtype: Any, shape: Any) -> st.SearchStrategy[np.ndarray]:
    """Integer arrays over the dtype's whole range (uint8, int8, int32, ...)."""
    return hnp.arrays(np.dtype(dtype), shape)


def layouts() -> st.SearchStrategy[str]:
    return st.sampled_from(("nchw", "nhwc"))


def seeds() -> st.SearchStrategy[int]:
    return st.integers(0, 2**32 - 1)
