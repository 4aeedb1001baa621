"""Leak check: many create/forward/release cycles of each context; resident memory must stay flat.

    python tools/leakcheck.py [CYCLES]

Prints, per context class, the resident set size after a warm-up and after the cycles; exits 1 if any grew by
more than 4 MiB (one context's buffers are far smaller; a leak of one per cycle is far larger).
"""

from __future__ import annotations

import gc
import sys

import numpy as np

import simdbind
from simdbind import activation as act


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def inner_product(rng):
    a, w = rng.random((7, 33), np.float32), rng.random((65, 33), np.float32)
    with simdbind.InnerProduct32f(7, 65, 33, trans_b=True, bias=np.ones(65, np.float32),
                                  activation=act.elu(), weight=w) as ip:
        ip.forward(a)


def convolution(rng):
    x, w = rng.random((2, 16, 9, 9), np.float32), rng.random((16, 16, 3, 3), np.float32)
    conv = simdbind.Convolution32f((16, 9, 9), 16, 3, pad=1, batch=2, weight=w, activation="relu")
    conv.forward(x)
    conv.close()


def convolution_gc_only(rng):
    x, w = rng.random((16, 9, 9), np.float32), rng.random((16, 1, 3, 3), np.float32)
    simdbind.Convolution32f((16, 9, 9), 16, 3, pad=1, group=16, weight=w).forward(x)  # released by ffi.gc


def gather(rng):
    data, idx = rng.random((4, 9, 5), np.float32), rng.integers(-9, 9, (4, 3, 5))
    with simdbind.GatherElements(np.float32, np.int64, data.shape, idx.shape, axis=1, index=idx) as g:
        g(data)


def main() -> int:
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = np.random.default_rng(0)
    failed = False
    for run in (inner_product, convolution, convolution_gc_only, gather):
        for _ in range(200):
            run(rng)
        gc.collect()
        before = rss_kib()
        for _ in range(cycles):
            run(rng)
        gc.collect()
        grown = rss_kib() - before
        failed |= grown > 4096
        print(f"{run.__name__:22s} {cycles} cycles: RSS {before} KiB -> {before + grown} KiB ({grown:+d} KiB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
