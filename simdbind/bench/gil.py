"""The GIL is released during C calls: two Python threads calling simdbind in parallel scale.

simdbind releases the GIL around every C call on 4096 elements or more (simdbind._fastcall; cffi, on the ordinary
path, around every call), so the C work of two Python threads overlaps; only the Python part of each call (under a
microsecond) is serialized. Each case makes 2 x CALLS prepared calls of the library on L2-resident arrays: split
over two Python threads (the library's row) or in one thread (``<library> 1 Python thread``); ``vs 1 Python
thread`` is the scaling (ideal: 2.0 with two free cores; less when other processes share them). The ``unary exp``
row is compute-bound, so it shows the scaling itself; the ``eltwise max`` row moves 12 bytes per compare and is bound
by cache bandwidth. No peers: what is measured is simdbind's own release of the GIL. The clock is the wall clock: a
call's work runs on two threads, which the calling thread's CPU time cannot see (``--timer thread`` counted one
thread's share as the whole and showed 16-17x from two threads on two cores), so the harness refuses that timer
here (PYTHON_THREADS).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

import simdbind
from simdbind.bench import cases
from simdbind.conformance.work import Work
from simdbind.conformance.implementations import LibraryImplementation
from simdbind.conformance.model import Case

CALLS = 32
#: Python threads that a call of this family runs on (the harness's check_timer reads it).
PYTHON_THREADS = 2
DESCRIPTORS = ["unary op=exp size=65536", "eltwise op=max count=2 size=32768"]
ONE_THREAD = "1 Python thread"
VERSUS = [ONE_THREAD]
PEERS = False
BOUND = False


def work(case: Case) -> Work:
    """2 x CALLS calls of the function."""
    one = cases.work(case)
    return Work(one.unit, 2 * CALLS * one.amount)


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


class Threads:
    """`library`'s prepared call made 2 x CALLS times: by two Python threads (each with its own outputs) or, with
    ``parallel=False``, by the calling thread alone."""

    def __init__(self, library: LibraryImplementation, parallel: bool) -> None:
        self.base, self.parallel = library, parallel
        self.name = library.name if parallel else f"{library.name} {ONE_THREAD}"
        self.isa = library.isa

    def unsupported(self, function: str, case: Case) -> str | None:
        return self.base.unsupported(function, case)

    def run(self, function: str, case: Case, inputs: dict[str, Any]) -> Any:
        return self.prepare(function, case, inputs)()

    def prepare(self, function: str, case: Case, inputs: dict[str, Any]) -> Callable[[], Any]:
        def loop(call: Callable[[], Any]) -> Callable[[], None]:
            def body() -> None:
                for _ in range(CALLS):
                    call()
            return body

        a, b = (loop(self.base.prepare(function, case, inputs)) for _ in range(2))
        if self.parallel:
            pool = _two_threads()
            return lambda: pool.run(a, b)

        def both() -> None:
            a()
            b()

        return both


def measured(libraries: list[LibraryImplementation]) -> list[tuple[str, Any]]:
    return [("simdbind", Threads(lib, True)) for lib in libraries] + [
        ("variant", Threads(lib, False)) for lib in libraries]


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
