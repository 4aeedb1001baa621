"""Fit the tables of csrc/internal/vmath.h (piecewise erf and tanh, the log reduction) and print them as C.

    python tools/fit_pieces.py erf       # each piece's error, then the initializer of the AVX-512 sb_vm_erf_pieces
    python tools/fit_pieces.py tanh      # the same for the AVX-512 sb_vm_tanh_pieces
    python tools/fit_pieces.py erf-avx2  # the AVX2 sb_vm_erf_pieces (8 pieces: one vpermps per coefficient)
    python tools/fit_pieces.py log       # vlog's AVX-512 table (32 entries), its polynomial and its error
    python tools/fit_pieces.py log-avx2  # the same for AVX2 (8 entries)

For a = |x| clamped to `high` (where f rounds to 1), piece k = min(round(a / width), pieces - 1) covers
[(k - 1/2) width, (k + 1/2) width] (the last one up to `high`) and holds a polynomial P_k of `degree` in
t = a - k * width:
    k < small:   f(a) = a + a * P_k(t),  P_k ~ f(a)/a - 1  (relative accuracy down to the subnormals, f(0) = 0)
    k >= small:  f(a) = c + c * P_k(t),  P_k ~ f(a)/c - 1  (c = (small - 1/2) width, where the small pieces end;
                                                            P_k is small enough that its rounding stays below f's ulp)
(so the kernel computes m + m * P_k with m = min(a, c): one instruction, where choosing between a and 1 took two)
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
    def c(self) -> float:
        """m of the large pieces: min(a, c) is a on the small ones."""
        return (self.small - 0.5) * self.width

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
        return ((1 - spec.c) - np.vectorize(spec.one_minus_f)(a)) / spec.c
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
    # only where the kernel's k is this piece: round(a * float32(1/width)), the product exact, ties to even
    chosen = np.minimum(np.rint(a.astype(np.float64) * float(np.float32(1 / spec.width))), pieces(spec)[-1])
    a = a[chosen == k]
    t = (a.astype(np.float64) - k * spec.width).astype(np.float32)  # exact, as in the kernel
    p = np.full_like(t, np.float32(c[spec.degree]))
    for j in range(spec.degree - 1, -1, -1):
        p = fma32(p, t, np.full_like(t, np.float32(c[j])))
    m = np.minimum(a, np.float32(spec.c))
    y = fma32(p, m, m)
    exact = np.vectorize(spec.f)(a.astype(np.float64))
    ulp = 2.0 ** (np.floor(np.log2(exact)) - 23)
    return float(np.max(np.abs(y - exact) / ulp))


def c_float(v: np.float32) -> str:
    """A C float literal that reads back as v exactly (9 significant digits)."""
    text = f"{float(v):.9g}"
    return text + ("f" if any(c in text for c in ".e") else ".0f")


# vlog's table (AVX-512 and AVX2): x = 2^e * m, m in [1, 2); entry i of `entries` covers m in [1 + i w, 1 + (i+1) w),
# w = 1 / entries, and holds invc ~ 1/c for c near its middle, a float32, and log(c) = -log(invc) rounded to the grid
# 2^-17 (log(c)_hi). Then log(x) = e*ln2 + log(c) + log1p(r), r = m * invc - 1 (one fused rounding), log1p(r) =
# r + r^2 P(r). The end entries (`ones` at each end) take c = 1 and c = 2 exactly (r = m - 1 and m/2 - 1, both
# exact), so that near x = 1, from above (e = 0, log c = 0) and from below (e = -1, log c = ln2: the two cancel
# exactly), the result keeps its relative accuracy. ln2 is split on the same grid, so hi = e * ln2_hi + log(c)_hi is
# exact for every e of a float (|hi| < 2^7). The low parts need no table: each middle entry's invc is the float
# nearest 1/c (of 2^15 on each side) whose log(c) lies within min(log(c), ln2 - log(c)) * 2^-31 of a multiple of the
# grid stretched by (1 + alpha), alpha = ln2_lo / ln2_hi, so that every low part, e * ln2_lo + log(c)_lo, is
# hi * alpha. `bias` is the exponent's bias folded into the table (127 where e is read from the raw exponent field).
@dataclass(frozen=True)
class LogSpec:
    entries: int  # 32 at AVX-512 (two-table vpermt2ps), 8 at AVX2 (vpermps)
    ones: int
    bias: int
    degree: int  # of P: r + r^2 P(r) reaches r^(degree + 2)


LOG_SPECS = {"log": LogSpec(entries=32, ones=1, bias=0, degree=2),
             "log-avx2": LogSpec(entries=8, ones=1, bias=127, degree=4)}
LOG_GRID = 2.0**-17
LOG_SEARCH = 1 << 15  # float32 neighbours of 1/c tried on each side
LOG_RESIDUAL = 2.0**-31  # relative to min(log(c), ln2 - log(c)): how close log(c) must lie to the stretched grid


def log_tables(spec: LogSpec) -> tuple[float, float, np.ndarray]:
    """ln2_hi, alpha and the table rows invc, log(c)_hi - bias ln2_hi."""
    ln2 = math.log(2)  # float64 is ample: the search below needs about 2^-36 of it
    ln2_hi = round(ln2 / LOG_GRID) * LOG_GRID
    alpha = float(np.float32((ln2 - ln2_hi) / ln2_hi))
    grid = LOG_GRID * (1 + alpha)
    table = np.zeros((2, spec.entries), dtype=np.float32)
    for i in range(spec.entries):
        if i < spec.ones:
            invc, log_c_hi = 1.0, 0.0
        elif i >= spec.entries - spec.ones:
            invc, log_c_hi = 0.5, ln2_hi
        else:
            middle = np.float32(1 / (1 + (i + 0.5) / spec.entries))
            steps = np.arange(-LOG_SEARCH, LOG_SEARCH + 1, dtype=np.int32)
            candidates = (middle.view(np.int32) + steps).view(np.float32).astype(np.float64)
            log_c = -np.log(candidates)
            residual = np.abs(log_c - np.round(log_c / grid) * grid)
            close = np.flatnonzero(residual <= LOG_RESIDUAL * np.minimum(log_c, ln2 - log_c))
            best = int(close[np.argmin(np.abs(steps[close]))]) if close.size else int(np.argmin(residual))
            invc = float(candidates[best])
            log_c_hi = round(log_c[best] / grid) * LOG_GRID
        hi = log_c_hi - spec.bias * ln2_hi
        assert float(np.float32(hi)) == hi, "e * ln2_hi + log(c)_hi must be exact"
        table[:, i] = invc, hi
    return ln2_hi, alpha, table


def log_fit(r_low: float, r_high: float, degree: int) -> list[float]:
    """float32 P, constant term first, with r + r^2 P(r) ~ log1p(r) in relative error on [r_low, r_high]
    (Lawson's iteration towards the weighted minimax, then rounded to float32 a coefficient at a time, as in fit)."""
    n = 400
    r = (r_low + r_high) / 2 + (r_high - r_low) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    y = sum((-1.0) ** (k + 1) * r ** (k - 2) / k for k in range(40, 1, -1))  # (log1p(r) - r) / r^2, |r| <= 1/8
    basis = np.vander(r, degree + 1, increasing=True)
    weight = np.abs(r)  # an error d in P is an error r * d relative to log1p(r) ~ r
    lawson = np.full(n, 1.0 / n)
    for _ in range(60):
        w = weight * lawson
        coefficients = np.linalg.lstsq(basis * w[:, None], y * w, rcond=None)[0]
        lawson *= np.abs(weight * (basis @ coefficients - y))
        lawson /= lawson.sum()
    rounded: list[float] = []
    for j in range(degree + 1):
        rounded.append(float(np.float32(coefficients[j])))
        if j < degree:
            rest = y - basis[:, : j + 1] @ np.array(rounded)
            coefficients[j + 1 :] = np.linalg.lstsq(basis[:, j + 1 :] * w[:, None], rest * w, rcond=None)[0]
    return rounded


def log_kernel(m: np.ndarray, e: int, spec: LogSpec, ln2_hi: float, alpha: float, table: np.ndarray,
               p: list[float]) -> np.ndarray:
    """The kernel's float32 steps (vmath.h, sb_vm_log_table) for x = 2^(e - bias) * m."""
    i = (m.view(np.uint32) >> (23 - spec.entries.bit_length() + 1)) & (spec.entries - 1)
    invc, hi_c = table[:, i]
    r = fma32(m, invc, np.float32(-1))
    r2 = r * r
    c = [np.full_like(r, np.float32(v)) for v in p]
    high = c[2]
    if spec.degree >= 3:
        high = fma32(c[3], r, high)
    if spec.degree == 4:
        high = fma32(c[4], r2, high)
    poly = fma32(high, r2, fma32(c[1], r, c[0]))  # Estrin, as the kernel
    hi = fma32(np.full_like(r, np.float32(e)), np.float32(ln2_hi), hi_c)
    return hi + (r + fma32(poly, r2, hi * np.float32(alpha)))


def log_main(spec: LogSpec) -> None:
    ln2_hi, alpha, table = log_tables(spec)
    edges = 1 + np.arange(spec.entries + 1) / spec.entries
    r_low = float(np.min(edges[:-1] * table[0] - 1))
    r_high = float(np.max(edges[1:] * table[0] - 1))
    p = log_fit(r_low, r_high, spec.degree)
    m = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(0x3F800000)).view(np.float32)
    print(f"/* r in [{r_low:.6f}, {r_high:.6f}]; every m in [1, 2), error against the exact log in ulps:")
    for e in (-149, -126, -2, -1, 0, 1, 2, 127):
        y = log_kernel(m, e + spec.bias, spec, ln2_hi, alpha, table, p).astype(np.float64)
        exact = np.log(m.astype(np.float64)) + e * math.log(2)
        nonzero = exact != 0
        ulp = 2.0 ** (np.floor(np.log2(np.abs(exact[nonzero]))) - 23)
        error = np.abs(y[nonzero] - exact[nonzero]) / ulp
        print(f"   e = {e:4}: max {np.max(error):.3f} ulp at x = {float(m[nonzero][np.argmax(error)]) * 2.0**e:.9g}")
    print(f"   ln2_hi {c_float(np.float32(ln2_hi))}, alpha {c_float(np.float32(alpha))} */")
    print("P: " + ", ".join(c_float(np.float32(v)) for v in p))
    for row in table:
        print("    {" + ", ".join(c_float(v) for v in row) + "},")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("function", choices=sorted(SPECS) + sorted(LOG_SPECS))
    function = parser.parse_args().function
    if function in LOG_SPECS:
        log_main(LOG_SPECS[function])
        return
    spec = SPECS[function]
    table = np.zeros((spec.degree + 1, spec.pieces), dtype=np.float32)
    for k in pieces(spec):
        table[:, k] = fit(spec, k)
        lo, hi = interval(spec, k)
        print(f"/* piece {k:2}: [{lo:.6f}, {hi:.6f}] max {max_ulp(spec, k, list(table[:, k])):.3f} ulp */")
    for row in table:
        print("    {" + ", ".join(c_float(v) for v in row) + "},")


if __name__ == "__main__":
    main()
