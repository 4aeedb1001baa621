"""The GIL is released during C calls: two Python threads calling simdbind in parallel scale.

simdbind releases the GIL around every C call on 4096 elements or more (simdbind._fastcall; cffi, on the ordinary
path, around every call), so the C work of two Python threads overlaps; only the Python part of each call (under a
microsecond) is serialized. Each case runs 2 x `calls` calls on L2-resident arrays: split over two Python threads
(the simdbind row) or in one thread (variant ``1 Python thread``). ``vs 1 Python thread`` is the scaling (ideal:
2.0 with two free cores; less when other processes share them). The ``unary exp 64K`` row is compute-bound, so it
shows the scaling itself; the ``eltwise max 32K`` row moves 12 bytes per compare and is bound by cache bandwidth.
NumPy, which also releases the GIL in its loops, is the peer.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

import simdbind

SIZE = 1 << 15  # 32 K floats: three arrays stay in L2
EXP_SIZE = 1 << 16  # 64 K floats for the compute-bound row


class _TwoThreads:
    """Two persistent worker threads; ``run(a, b)`` runs a() and b() concurrently and waits for both."""

    def __init__(self) -> None:
        self._jobs: list[Callable[[], Any] | None] = [None, None]
        self._errors: list[BaseException] = []
        self._start = threading.Barrier(3)
        self._done = threading.Barrier(3)
        for i in range(2):
            threading.Thread(target=self._work, args=(i,), daemon=True, name=f"simdbind-bench-gil-{i}").start()

    def _work(self, i: int) -> None:
        while True:
            self._start.wait()
            job = self._jobs[i]
            try:
                if job is not None:
                    job()
            except BaseException as error:  # noqa: BLE001 - re-raised in the caller
                self._errors.append(error)
            self._done.wait()

    def run(self, a: Callable[[], Any], b: Callable[[], Any]) -> None:
        self._jobs[:] = [a, b]
        self._start.wait()
        self._done.wait()
        if self._errors:
            raise self._errors.pop()


_pool: _TwoThreads | None = None


def _two_threads() -> _TwoThreads:
    global _pool
    if _pool is None:
        _pool = _TwoThreads()
    return _pool


def _scaling_case(name: str, calls: int, size: int, call: Callable[[Any, np.ndarray], Any],
                  numpy_call: Callable[[np.ndarray], Any], note: str) -> dict[str, Any]:
    """2 x `calls` calls of `call(library, out)`: split over two Python threads (the simdbind row) or made by one
    (variant ``1 Python thread``); each thread writes its own output."""
    outs = [np.empty(size, np.float32) for _ in range(2)]

    def loop(fn: Callable[[np.ndarray], Any]) -> tuple[Callable[[], None], Callable[[], None]]:
        def make(o: np.ndarray) -> Callable[[], None]:
            def body() -> None:
                for _ in range(calls):
                    fn(o)
            return body
        return make(outs[0]), make(outs[1])

    def parallel(library: Any) -> Callable[[], None]:
        a, b = loop(lambda o: call(library, o))
        pool = _two_threads()
        return lambda: pool.run(a, b)

    def sequential(library: Any) -> Callable[[], None]:
        a, b = loop(lambda o: call(library, o))

        def both() -> None:
            a()
            b()
        return both

    def numpy_parallel() -> Callable[[], None]:
        a, b = loop(numpy_call)
        pool = _two_threads()
        return lambda: pool.run(a, b)

    return {"name": name, "family": "gil", "unit": "Gelem/s", "work": 2 * calls * size, "simdbind": parallel,
            "variants": {"1 Python thread": sequential}, "versus": ["1 Python thread"],
            "peers": {"numpy": numpy_parallel}, "note": note}


def cases(quick: bool = False) -> list[dict[str, Any]]:
    calls = 16 if quick else 64
    rng = np.random.default_rng(8)
    x, y = (rng.standard_normal(SIZE).astype(np.float32) for _ in range(2))
    # exp: ~10 flops per element, so the C part dominates each call and the arrays (2 x 256 KiB per thread) stay in
    # the core's L2: the case that shows the GIL-free scaling itself
    z = rng.uniform(-10, 10, EXP_SIZE).astype(np.float32)
    return [
        _scaling_case(f"gil 2 Python threads x {calls} unary exp 64K", calls, EXP_SIZE,
                      lambda library, o: simdbind.unary(z, "exp", out=o, library=library),
                      lambda o: np.exp(z, out=o),
                      "compute-bound: two Python threads each making the calls vs one thread making all of them"),
        _scaling_case(f"gil 2 Python threads x {calls} eltwise max 32K", calls, SIZE,
                      lambda library, o: simdbind.eltwise([x, y], "max", out=o, library=library),
                      lambda o: np.maximum(x, y, out=o),
                      "one compare per 12 bytes moved: bound by cache bandwidth, so it scales less"),
    ]


def python_progress(library: Any = None, size: int = 1 << 24, calls: int = 20) -> dict[str, float]:
    """Iterations per second of a Python loop in the calling thread while another thread (a) sleeps, (b) makes
    `calls` long simdbind calls, (c) runs one C call of about as long that holds the GIL (``sum(range(n))``).
    With the GIL released during simdbind's C calls, (b) keeps a large share of (a) (all of it with a free core),
    while (c) leaves the loop almost nothing. Unlike the scaling row, this needs no idle core.
    Run it with ``python -m simdbind.bench.gil``."""
    import time

    library = library or simdbind.default_library()
    rng = np.random.default_rng(8)
    x, y = (rng.standard_normal(size).astype(np.float32) for _ in range(2))
    o = np.empty(size, np.float32)

    def c_calls() -> None:
        for _ in range(calls):
            simdbind.eltwise([x, y], "max", out=o, library=library)

    start = time.perf_counter()
    c_calls()
    duration = time.perf_counter() - start
    start = time.perf_counter()
    sum(range(1 << 20))
    n = max(1, int((1 << 20) * duration / max(time.perf_counter() - start, 1e-9)))

    def rate(work: Callable[[], Any]) -> float:
        done = threading.Event()
        count = 0

        def worker() -> None:
            work()
            done.set()

        thread = threading.Thread(target=worker)
        begin = time.perf_counter()
        thread.start()
        while not done.is_set():
            count += 1
        thread.join()
        return count / (time.perf_counter() - begin)

    return {"other thread sleeping": rate(lambda: time.sleep(duration)),
            "other thread in simdbind C calls": rate(c_calls),
            "other thread in a GIL-holding C call": rate(lambda: sum(range(n)))}


if __name__ == "__main__":
    for label, value in python_progress().items():
        print(f"{label:38s} {value:14,.0f} Python loop iterations/s in the main thread")
