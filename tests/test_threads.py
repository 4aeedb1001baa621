"""Many Python threads at once: one shared context of each kind, a context per thread, every stateless family, and
contexts closed while other threads use them. Every result is bit-identical to the single-threaded run of the same
call, whatever the library's own thread count (SimdSetThreadNumber 1 or 2); a closed context raises
ContextClosedError and never crashes.

`--profile full` runs 16 threads x 20 rounds instead of 8 x 3 (CI).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable

import numpy as np
import pytest

import simdbind

INPUTS = 6  # distinct inputs per job; each thread visits all of them in its own order, every round


@pytest.fixture(scope="module")
def load(request):
    full = request.config.getoption("simd_profile") == "full"
    return (16, 20) if full else (8, 3)


def _jobs(library: Any, rng: np.random.Generator) -> dict[str, tuple[Callable[[Any], Any], list[Any], Any]]:
    """name -> (call(input) -> result, inputs, context to close or None). Contexts are shared by every thread."""
    f32 = lambda *shape: rng.uniform(-1, 1, shape).astype(np.float32)  # noqa: E731
    conv_nchw = simdbind.Convolution32f((16, 23, 21), 24, 3, pad=1, weight=f32(24, 16, 3, 3), bias=f32(24),
                                        activation="relu", library=library)
    conv_nhwc = simdbind.Convolution32f((19, 17, 16), 16, 3, pad=1, group=16, layout="nhwc", batch=2,
                                        weight=f32(3, 3, 1, 16), activation=simdbind.activation.hswish(),
                                        library=library)
    conv_1x1 = simdbind.Convolution32f((9, 11, 32), 40, 1, layout="nhwc", weight=f32(1, 1, 32, 40),
                                       library=library)
    ip = simdbind.InnerProduct32f(37, 70, 129, trans_b=True, bias=f32(70), activation="gelu",
                                  weight=f32(70, 129), library=library)
    ip_b = simdbind.InnerProduct32f(65, 33, 40, const_b=False, library=library)
    gather = simdbind.GatherElements(np.float32, np.int32, (6, 40), (6, 50), 1,
                                     index=rng.integers(-40, 40, (6, 50)).astype(np.int32), library=library)
    u8 = lambda *shape: rng.integers(0, 256, shape).astype(np.uint8)  # noqa: E731
    weight_i8 = rng.integers(-128, 128, (48, 70)).astype(np.int8)
    return {
        "Convolution32f nchw 3x3": (conv_nchw.forward, [f32(1, 16, 23, 21) for _ in range(INPUTS)], conv_nchw),
        "Convolution32f nhwc depthwise batch 2": (conv_nhwc.forward, [f32(2, 19, 17, 16) for _ in range(INPUTS)],
                                                  conv_nhwc),
        "Convolution32f nhwc 1x1": (conv_1x1.forward, [f32(1, 9, 11, 32) for _ in range(INPUTS)], conv_1x1),
        "InnerProduct32f const B": (ip.forward, [f32(37, 129) for _ in range(INPUTS)], ip),
        "InnerProduct32f B per call": (lambda ab: ip_b.forward(*ab),
                                       [(f32(65, 40), f32(40, 33)) for _ in range(INPUTS)], ip_b),
        "GatherElements": (gather.forward, [f32(6, 40) for _ in range(INPUTS)], gather),
        "inner_product_8i precise": (lambda s: simdbind.inner_product_8i(s, weight_i8, library=library),
                                     [u8(9, 70) for _ in range(INPUTS)], None),
        "inner_product_8i saturating": (
            lambda s: simdbind.inner_product_8i(s, weight_i8, "overflow", library=library),
            [u8(9, 70) for _ in range(INPUTS)], None),
        "inner_product": (lambda x: simdbind.inner_product(x, ip.weight, library=library),
                          [f32(3, 129) for _ in range(INPUTS)], None),
        "unary exp": (lambda x: simdbind.unary(x, "exp", library=library), [f32(5000) for _ in range(INPUTS)], None),
        "eltwise sum": (lambda x: simdbind.eltwise([x, x[::-1].copy()], "sum", [0.5, 2.0], library=library),
                        [f32(6001) for _ in range(INPUTS)], None),
        "softmax": (lambda x: simdbind.softmax(x, axis=1, library=library), [f32(7, 33, 5) for _ in range(INPUTS)],
                    None),
        "lrn": (lambda x: simdbind.lrn(x, 2, [1.0, 1e-2, -0.75], library=library),
                [f32(12, 9, 10) for _ in range(INPUTS)], None),
        "pooling_max": (lambda x: simdbind.pooling_max(x, 3, stride=2, pad=1, library=library),
                        [f32(8, 17, 19) for _ in range(INPUTS)], None),
        "pooling_average": (lambda x: simdbind.pooling_average(x, 3, stride=2, pad=1, exclude_pad=True, layout="nhwc",
                                                               library=library),
                            [f32(17, 19, 8) for _ in range(INPUTS)], None),
        "pooling_max uint8": (lambda x: simdbind.pooling_max(x, 2, stride=2, library=library),
                              [u8(5, 16, 16) for _ in range(INPUTS)], None),
    }


def _same(a: Any, b: Any) -> bool:
    return np.array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


def _hammer(threads: int, work: Callable[[int], None]) -> list[BaseException]:
    """Run work(t) on `threads` threads released together; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def run(t: int) -> None:
        try:
            start.wait()
            work(t)
        except BaseException as error:  # noqa: BLE001 - returned to the test
            errors.append(error)

    pool = [threading.Thread(target=run, args=(t,), name=f"simdbind-stress-{t}") for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return errors


@pytest.mark.parametrize("library_threads", [1, 2])
def test_threads_sharing_every_context_and_function_match_the_serial_run(bundled, load, library_threads):
    threads, rounds = load
    previous = bundled.threads
    bundled.set_threads(library_threads)
    try:
        jobs = _jobs(bundled, np.random.default_rng(2026))
        serial = {name: [call(x) for x in inputs] for name, (call, inputs, _) in jobs.items()}
        wrong: list[str] = []

        def work(t: int) -> None:
            order = np.random.default_rng(t).permutation(len(jobs) * INPUTS)
            names = list(jobs)
            for _ in range(rounds):
                for k in order:
                    name, i = names[k // INPUTS], k % INPUTS
                    call, inputs, _ = jobs[name]
                    if not _same(call(inputs[i]), serial[name][i]):
                        wrong.append(f"{name} input {i} thread {t}")

        errors = _hammer(threads, work)
        assert not errors, errors[:3]
        assert not wrong, wrong[:10]
    finally:
        bundled.set_threads(previous)


def test_library_thread_count_does_not_change_any_bit(bundled):
    previous = bundled.threads
    try:
        results = {}
        for count in (1, 2):
            bundled.set_threads(count)
            jobs = _jobs(bundled, np.random.default_rng(7))
            results[count] = {name: [call(x) for x in inputs] for name, (call, inputs, _) in jobs.items()}
        for name, values in results[1].items():
            assert all(_same(a, b) for a, b in zip(values, results[2][name])), name
    finally:
        bundled.set_threads(previous)


def test_a_context_per_thread_matches_the_serial_run(bundled, load):
    threads, rounds = load
    rng = np.random.default_rng(5)
    weight, x = rng.uniform(-1, 1, (32, 8, 3, 3)).astype(np.float32), rng.uniform(-1, 1, (8, 20, 20)).astype(
        np.float32)
    a = x.reshape(-1)[:216].reshape(3, 72)

    def conv() -> simdbind.Convolution32f:
        return simdbind.Convolution32f((8, 20, 20), 32, 3, pad=1, weight=weight, library=bundled)

    def ip() -> simdbind.InnerProduct32f:
        return simdbind.InnerProduct32f(3, 32, 72, trans_b=True, weight=weight.reshape(32, 72), library=bundled)

    expected_conv, expected_ip = conv().forward(x), ip().forward(a)

    def work(t: int) -> None:
        for _ in range(rounds):
            with conv() as c, ip() as p:
                assert _same(c.forward(x), expected_conv)
                assert _same(p.forward(a), expected_ip)

    errors = _hammer(threads, work)
    assert not errors, errors[:3]


def test_closing_contexts_under_other_threads_raises_cleanly(bundled, load):
    threads, rounds = load
    jobs = {name: job for name, job in _jobs(bundled, np.random.default_rng(9)).items() if job[2] is not None}
    closed = threading.Event()
    unexpected: list[BaseException] = []

    def work(t: int) -> None:
        if t == 0:
            for _, _, context in jobs.values():
                context.close()
                context.close()  # idempotent
            closed.set()
            return
        while True:
            finished = closed.is_set()
            for call, inputs, _ in jobs.values():
                try:
                    call(inputs[t % INPUTS])
                except simdbind.ContextClosedError:
                    pass
                except BaseException as error:  # noqa: BLE001 - anything else is a defect
                    unexpected.append(error)
            if finished:
                return

    errors = _hammer(max(threads, 2), work)
    assert not errors and not unexpected, (errors + unexpected)[:3]
    for call, inputs, _ in jobs.values():
        with pytest.raises(simdbind.ContextClosedError):
            call(inputs[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available on this platform")
def test_a_forked_child_gets_working_library_threads(bundled):
    """The library keeps its worker threads between calls; a child forked after they started has none of them, and
    its own 2-thread calls must still run (not wait forever for the parent's workers) and give the same bits."""
    rng = np.random.default_rng(7)
    ip = simdbind.InnerProduct32f(64, 256, 256, weight=rng.uniform(-1, 1, (256, 256)).astype(np.float32),
                                  library=bundled)  # 4M multiply-adds: split over the library's threads
    x = rng.uniform(-1, 1, (64, 256)).astype(np.float32)
    previous = bundled.set_threads(2)
    try:
        expected = ip.forward(x)  # starts the workers in this process
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, never return into pytest
            status = 1
            try:
                status = 0 if np.array_equal(ip.forward(x), expected) else 2
            finally:
                os.write(write, bytes([status]))
                os._exit(0)
        os.close(write)
        deadline = time.monotonic() + 30
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail("the forked child hung in a 2-thread call")
            time.sleep(0.05)
        answer = os.read(read, 1)
        os.close(read)
        assert answer == b"\x00", f"child status {answer!r} (1: raised, 2: different bits)"
    finally:
        bundled.set_threads(previous)


def test_library_threads_compute_under_the_callers_fast_mode(bundled):
    """SimdSetFastMode sets the calling thread's flush-to-zero and denormals-are-zero bits; parts of a 2-thread call
    that run on a worker must honour them too (they did not: half the columns kept their denormal sums)."""
    rng = np.random.default_rng(7)
    ip = simdbind.InnerProduct32f(64, 256, 256, trans_b=True, weight=rng.uniform(0.5, 1, (256, 256)).astype(np.float32),
                                  library=bundled)  # columns split over the library's threads
    x = np.full((64, 256), 1e-39, np.float32)  # denormal: each product and sum is denormal too
    set_fast_mode = bundled.function("SimdSetFastMode")
    previous = bundled.set_threads(2)
    try:
        assert np.count_nonzero(ip.forward(x)) == x.shape[0] * 256, "without fast mode every sum is a denormal"
        set_fast_mode(1)
        try:
            flushed = [ip.forward(x) for _ in range(5)]  # workers take parts from the first call on
        finally:
            set_fast_mode(0)
        assert [np.count_nonzero(y) for y in flushed] == [0] * 5
    finally:
        bundled.set_threads(previous)
