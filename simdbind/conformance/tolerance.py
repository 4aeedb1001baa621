"""How an actual array is compared with the reference, and the error figures a report shows.

An element passes when it is bitwise equal to the expected one, when both are NaN, or when both are finite and
``|actual - expected| <= abs + rel * |expected|``. ``exact=True`` leaves only the first two (NaN payloads are not
compared). ``ulp`` is reported for every float comparison; a bound on it can replace abs/rel (``max_ulp``).
An infinity matches only itself under abs/rel (``rel * inf`` would admit any finite value); under ``max_ulp`` the
largest finite value is one ulp from infinity, as in the bit patterns.
The reported ULP and relative figures leave out passing elements whose expected value is tiny next to the
output's largest (:data:`SIGNIFICANT`): there an absolute tolerance governs and the ratios only measure
cancellation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    """How close an output element must be to the reference.

    An element passes when it is bitwise equal to the expected one, when both are NaN, or when both are finite and
    ``|actual - expected| <= abs + rel * |expected|`` (or within `max_ulp` units in the last place, where given).
    ``exact=True`` leaves only the first two.

    Parameters
    ----------
    abs, rel : float
        The absolute and relative bounds.
    max_ulp : int, optional
        A bound in units in the last place that replaces abs/rel.
    exact : bool
        Bitwise equality (or both NaN) only.
    why : str
        Where the bound comes from, shown in reports.

    Examples
    --------
    >>> from simdbind.conformance import Tolerance
    >>> Tolerance(rel=1e-6, abs=1e-7, why="float64 softmax rounded once").describe()
    'abs 1e-07 + rel 1e-06'
    >>> from simdbind.conformance.tolerance import compare
    >>> compare(np.float32([1.0, 2.0]), np.float32([1.0, 2.0000002]), Tolerance(rel=1e-6)).passed
    True
    """

    abs: float = 0.0
    rel: float = 0.0
    max_ulp: int | None = None
    exact: bool = False
    why: str = ""

    def describe(self) -> str:
        """The tolerance as reports print it.

        Returns
        -------
        str
            ``"exact"``, or the bounds joined by ``" + "``.

        Examples
        --------
        >>> from simdbind.conformance import Tolerance
        >>> Tolerance(exact=True).describe(), Tolerance(max_ulp=2).describe()
        ('exact', '2 ulp')
        """
        if self.exact:
            return "exact"
        parts = [f"abs {self.abs:g}" if self.abs else "", f"rel {self.rel:g}" if self.rel else "",
                 f"{self.max_ulp} ulp" if self.max_ulp is not None else ""]
        return " + ".join(p for p in parts if p) or "exact"


EXACT = Tolerance(exact=True, why="the contract fixes every bit")

#: Passing elements whose |expected| is below this fraction of the output's largest |expected| do not count in the
#: ULP and relative figures (they still count in the absolute one, and failing elements always count).
SIGNIFICANT = 2.0 ** -12


@dataclass
class Comparison:
    passed: bool
    mismatches: int
    total: int
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float = 0.0
    first_mismatch: str = ""


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between float arrays of one dtype, via ordered integer bit patterns."""
    int_type = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = a.view(int_type).astype(np.int64), b.view(int_type).astype(np.int64)
    sign = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia & (sign - 1)), ia)
    ib = np.where(ib < 0, -(ib & (sign - 1)), ib)
    distance: np.ndarray = np.abs(ia - ib).astype(np.float64)
    return distance


def compare(actual: np.ndarray, expected: np.ndarray, tolerance: Tolerance) -> Comparison:
    """Compare element by element; shapes and dtypes must already agree (a mismatch there is a failure)."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return Comparison(False, actual.size or 1, max(actual.size, 1),
                          first_mismatch=f"shape/dtype {actual.shape}/{actual.dtype} != {expected.shape}/{expected.dtype}")
    total = actual.size
    if total == 0:
        return Comparison(True, 0, 0)
    a, e = actual.ravel(), expected.ravel()
    if a.dtype.kind != "f":
        bad = a != e
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        return _result(bad, diff, diff, diff, a, e)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}.get(a.dtype.itemsize)
    if bits is not None:
        differ = a.view(bits) != e.view(bits)
    else:
        differ = ~(a.view(np.uint8).reshape(total, -1) == e.view(np.uint8).reshape(total, -1)).all(axis=1)
    if not differ.any():  # the common case, and cheap: every error figure is 0
        return Comparison(True, 0, total)
    # Only the elements whose bits differ need the numeric figures (the others contribute 0 to every maximum).
    index = np.flatnonzero(differ)
    a_sub, e_sub = a[index], e[index]
    ok = np.isnan(a_sub) & np.isnan(e_sub)
    with np.errstate(invalid="ignore", over="ignore"):
        a64, e64 = a_sub.astype(np.float64), e_sub.astype(np.float64)
        diff = np.where(ok, 0.0, np.abs(a64 - e64))
        rel = np.where(ok, 0.0, diff / np.maximum(np.abs(e64), np.finfo(a.dtype).tiny))
        ulp = np.where(ok, 0.0, _ulp_distance(a_sub, e_sub))
        # Values that are equal but differ in the sign of zero are a bit mismatch, not a numeric one.
        if not tolerance.exact:
            within = (diff <= tolerance.abs + tolerance.rel * np.abs(e64)) & np.isfinite(a64) & np.isfinite(e64)
            if tolerance.max_ulp is not None:
                within |= (ulp <= tolerance.max_ulp) & ~np.isnan(a64) & ~np.isnan(e64)
            ok |= within
    # ULP and relative figures of elements that pass although their expected value is tiny next to the output's
    # largest (cancellation noise, which the absolute figure covers) would swamp the ones that mean something.
    magnitudes = np.abs(e.astype(np.float64))
    scale = float(magnitudes[np.isfinite(magnitudes)].max(initial=0.0))
    noise = ok & (np.abs(e64) < scale * SIGNIFICANT)
    rel = np.where(noise, 0.0, rel)
    ulp = np.where(noise, 0.0, ulp)
    result = _result(~ok, np.nan_to_num(diff, nan=np.inf), np.nan_to_num(rel, nan=np.inf), ulp, a_sub, e_sub,
                     index)
    result.total = total
    return result


def _result(bad: np.ndarray, diff: np.ndarray, rel: np.ndarray, ulp: np.ndarray, a: np.ndarray,
            e: np.ndarray, index: np.ndarray | None = None) -> Comparison:
    """`a`, `e` (and the figures) may be a subset of the elements; `index` maps them to flat indices."""
    mismatches = int(bad.sum())
    first = ""
    if mismatches:
        i = int(np.argmax(bad))
        first = f"index {i if index is None else int(index[i])}: got {a[i]!s}, expected {e[i]!s}"
    return Comparison(mismatches == 0, mismatches, a.size, float(diff.max(initial=0.0)),
                      float(rel.max(initial=0.0)), float(ulp.max(initial=0.0)), first)
