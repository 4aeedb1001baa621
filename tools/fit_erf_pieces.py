"""Fit the piecewise erf table of csrc/internal/vmath.h (the AVX-512 erf) and print it as C.

    python tools/fit_erf_pieces.py     # prints each piece's error, then the initializer of sb_vm_erf_pieces

For a = |x| clamped to 3.93 (erf rounds to 1 from 3.9192 on), piece k = round(8a) covers [k/8 - 1/16, k/8 + 1/16]
and holds a degree-4 polynomial P_k in t = a - k/8:
    k < 8:   erf(a) = a + a * P_k(t),  P_k ~ erf(a)/a - 1  (relative accuracy down to the subnormals, erf(0) = 0)
    k >= 8:  erf(a) = 1 - P_k(t),      P_k ~ erfc(a)       (erfc <= 0.18: its rounding is well below 1's ulp)
Each piece is a least-squares fit on Chebyshev nodes, close to minimax for functions this smooth. The coefficients
are rounded to float32 one at a time from the constant term up, the higher ones refitted after each rounding so that
they absorb it. The error printed is that of the kernel's float32 evaluation (Horner with fused multiply-adds)
against glibc's double erf on 40,001 points per piece; tools/ulp_exhaustive.py checks the kernel itself on all 2^32
inputs.
"""

from __future__ import annotations

import math

import numpy as np

DEGREE = 4
PIECES = 32
SMALL = 8  # pieces below use the a + a * P form
HIGH = 3.93
erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


def target(k: int, a: np.ndarray) -> np.ndarray:
    """What piece k's polynomial approximates."""
    if k < SMALL:
        return np.where(a == 0, 2 / math.sqrt(math.pi), erf(a) / np.where(a == 0, 1, a)) - 1
    return erfc(a)


def interval(k: int) -> tuple[float, float]:
    return max(k / 8 - 1 / 16, 0.0), min(k / 8 + 1 / 16, HIGH)


def fit(k: int) -> list[float]:
    """Piece k's float32 coefficients, constant term first."""
    lo, hi = interval(k)
    nodes = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(200) + 0.5) / 200)
    t, y = nodes - k / 8, target(k, nodes)
    basis = np.vander(t, DEGREE + 1, increasing=True)
    coefficients = list(np.linalg.lstsq(basis, y, rcond=None)[0])
    rounded: list[float] = []
    for j in range(DEGREE + 1):
        rounded.append(float(np.float32(coefficients[j])))
        if j < DEGREE:
            rest = y - basis[:, : j + 1] @ np.array(rounded)
            coefficients[j + 1 :] = np.linalg.lstsq(basis[:, j + 1 :], rest, rcond=None)[0]
    return rounded


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 a * b + c with one rounding (the float64 product of two floats is exact)."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def max_ulp(k: int, c: list[float]) -> float:
    """The largest error of the kernel's evaluation of erf on piece k, in ulps of the exact result."""
    lo, hi = interval(k)
    a = np.linspace(lo, hi, 40001).astype(np.float32)
    a = a[(a > 0) & (a < hi)]
    t = (a.astype(np.float64) - k / 8).astype(np.float32)  # exact, as in the kernel
    p = np.full_like(t, np.float32(c[DEGREE]))
    for j in range(DEGREE - 1, -1, -1):
        p = fma32(p, t, np.full_like(t, np.float32(c[j])))
    y = fma32(p, a, a) if k < SMALL else fma32(p, np.full_like(a, -1), np.ones_like(a))
    exact = erf(a.astype(np.float64))
    ulp = 2.0 ** (np.floor(np.log2(exact)) - 23)
    return float(np.max(np.abs(y - exact) / ulp))


def main() -> None:
    table = np.zeros((DEGREE + 1, PIECES), dtype=np.float32)
    for k in range(PIECES):
        table[:, k] = fit(k)
        lo, hi = interval(k)
        print(f"/* piece {k:2}: [{lo:.6f}, {hi:.6f}] max {max_ulp(k, list(table[:, k])):.3f} ulp */")
    for row in table:
        print("    {" + ", ".join(f"{float(v):.9g}f" for v in row) + "},")


if __name__ == "__main__":
    main()
