"""Fit the piecewise tables of csrc/internal/vmath.h (the AVX-512 erf and tanh) and print them as C.

    python tools/fit_pieces.py erf       # each piece's error, then the initializer of the AVX-512 sb_vm_erf_pieces
    python tools/fit_pieces.py tanh      # the same for the AVX-512 sb_vm_tanh_pieces
    python tools/fit_pieces.py erf-avx2  # the AVX2 sb_vm_erf_pieces (8 pieces: one vpermps per coefficient)

For a = |x| clamped to `high` (where f rounds to 1), piece k = min(round(a / width), pieces - 1) covers
[(k - 1/2) width, (k + 1/2) width] (the last one up to `high`) and holds a polynomial P_k of `degree` in
t = a - k * width:
    k < small:   f(a) = a + a * P_k(t),  P_k ~ f(a)/a - 1  (relative accuracy down to the subnormals, f(0) = 0)
    k >= small:  f(a) = 1 + P_k(t),      P_k ~ f(a) - 1    (small enough that its rounding stays below 1's ulp)
(so the kernel computes m + m * P_k with m = a or 1)
Where 1/width is not a float the kernel's k can be a neighbour's at a piece's end, so pieces are then fitted a little
beyond their ends. Each piece is a least-squares fit on Chebyshev nodes, close to minimax for functions this smooth.
The coefficients are rounded to float32 one at a time from the constant term up, the higher ones refitted after each
rounding so that they absorb it. The error printed is that of the kernel's float32 evaluation (Horner with fused
multiply-adds) against glibc's double function on 40,001 points per piece; tools/ulp_exhaustive.py checks the kernel
itself on all 2^32 inputs.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

@dataclass(frozen=True)
class Spec:
    f: Callable[[float], float]
    one_minus_f: Callable[[float], float]  # 1 - f without the cancellation
    width: float
    degree: int
    small: int
    high: float
    pieces: int  # the table's row length: 32 at AVX-512 (vpermt2ps), 8 at AVX2 (vpermps)

    @property
    def margin(self) -> float:
        return 0.0 if float(np.float32(1 / self.width)) == 1 / self.width else 1e-5


SPECS = {
    "erf": Spec(math.erf, math.erfc, width=1 / 8, degree=4, small=8, high=3.93, pieces=32),
    "tanh": Spec(math.tanh, lambda a: 2 / (math.exp(2 * a) + 1), width=5 / 16, degree=5, small=4, high=9.1,
                 pieces=32),
    "erf-avx2": Spec(math.erf, math.erfc, width=1 / 2, degree=6, small=3, high=3.93, pieces=8),
}


def pieces(spec: Spec) -> range:
    return range(min(int(round(spec.high / spec.width)) + 1, spec.pieces))


def interval(spec: Spec, k: int) -> tuple[float, float]:
    half = spec.width / 2 + spec.margin
    last = k == pieces(spec)[-1]
    return max(k * spec.width - half, 0.0), spec.high if last else min(k * spec.width + half, spec.high)


def target(spec: Spec, k: int, a: np.ndarray) -> np.ndarray:
    """What piece k's polynomial approximates."""
    if k >= spec.small:
        return -np.vectorize(spec.one_minus_f)(a)
    safe = np.where(a == 0, 1.0, a)
    return np.where(a == 0, 0.0, np.vectorize(spec.f)(safe) / safe - 1)  # f'(0) = 1 + P(0)


def fit(spec: Spec, k: int) -> list[float]:
    """Piece k's float32 coefficients, constant term first."""
    lo, hi = interval(spec, k)
    nodes = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(300) + 0.5) / 300)
    t, y = nodes - k * spec.width, target(spec, k, nodes)
    basis = np.vander(t, spec.degree + 1, increasing=True)
    coefficients = list(np.linalg.lstsq(basis, y, rcond=None)[0])
    rounded: list[float] = []
    for j in range(spec.degree + 1):
        rounded.append(float(np.float32(coefficients[j])))
        if j < spec.degree:
            rest = y - basis[:, : j + 1] @ np.array(rounded)
            coefficients[j + 1 :] = np.linalg.lstsq(basis[:, j + 1 :], rest, rcond=None)[0]
    return rounded


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 a * b + c with one rounding (the float64 product of two floats is exact)."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def max_ulp(spec: Spec, k: int, c: list[float]) -> float:
    """The largest error of the kernel's evaluation of f on piece k, in ulps of the exact result."""
    lo, hi = interval(spec, k)
    a = np.linspace(lo, hi, 40001).astype(np.float32)
    a = a[(a > 0) & (a <= hi)]
    t = (a.astype(np.float64) - k * spec.width).astype(np.float32)  # exact, as in the kernel
    p = np.full_like(t, np.float32(c[spec.degree]))
    for j in range(spec.degree - 1, -1, -1):
        p = fma32(p, t, np.full_like(t, np.float32(c[j])))
    m = a if k < spec.small else np.ones_like(a)
    y = fma32(p, m, m)
    exact = np.vectorize(spec.f)(a.astype(np.float64))
    ulp = 2.0 ** (np.floor(np.log2(exact)) - 23)
    return float(np.max(np.abs(y - exact) / ulp))


def c_float(v: np.float32) -> str:
    """A C float literal that reads back as v exactly (9 significant digits)."""
    text = f"{float(v):.9g}"
    return text + ("f" if any(c in text for c in ".e") else ".0f")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("function", choices=sorted(SPECS))
    spec = SPECS[parser.parse_args().function]
    table = np.zeros((spec.degree + 1, spec.pieces), dtype=np.float32)
    for k in pieces(spec):
        table[:, k] = fit(spec, k)
        lo, hi = interval(spec, k)
        print(f"/* piece {k:2}: [{lo:.6f}, {hi:.6f}] max {max_ulp(spec, k, list(table[:, k])):.3f} ulp */")
    for row in table:
        print("    {" + ", ".join(c_float(v) for v in row) + "},")


if __name__ == "__main__":
    main()
