"""The lifetime of the context classes: copies, signals at any instruction, fork, concurrent reads of info, repr.

Every check runs on the bundled library as it is (calls without a lock where it allows them), on the bundled code
presented as an upstream build (``kind="external"``: calls serialised by a lock, the upstream routes taken), so both
lifetime paths are exercised, and on the library that ``SIMD_LIBRARY`` names when it is set.
"""

from __future__ import annotations

import copy
import os
import pickle
import re
import signal
import threading
import time
from typing import Any, Callable

import numpy as np
import pytest

import simdbind

RNG = np.random.default_rng(18)


def f32(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float32)


X_CONV, X_IP, X_GATHER, INDEX = f32(1, 3, 9, 8), f32(3, 20), f32(4, 6), RNG.integers(-6, 6, (4, 5)).astype(np.int32)
W_CONV, W_IP = f32(5, 3, 3, 3), f32(20, 7)


def make(kind: str, library: simdbind.Library) -> tuple[Any, Callable[[Any], np.ndarray]]:
    """A context of `kind` and a call of it on fixed inputs."""
    if kind == "Convolution32f":
        conv = simdbind.Convolution32f((3, 9, 8), 5, 3, pad=1, weight=W_CONV, library=library)
        return conv, lambda c: c.forward(X_CONV)
    if kind == "InnerProduct32f":
        ip = simdbind.InnerProduct32f(3, 7, 20, weight=W_IP, library=library)
        return ip, lambda c: c.forward(X_IP)
    gather = simdbind.GatherElements(np.float32, np.int32, (4, 6), (4, 5), 1, library=library)
    return gather, lambda c: c.forward(X_GATHER, INDEX)


KINDS = ["Convolution32f", "InnerProduct32f", "GatherElements"]


def in_thread(call: Callable[[], Any], timeout: float = 10.0) -> Any:
    """`call()` on another thread; a hang fails the test instead of hanging the suite."""
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"blocked for {timeout} s: the context is deadlocked"
    assert result, "the call raised (see the thread's traceback above)"
    return result[0]


# -- copies --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy, lambda c: pickle.loads(pickle.dumps(c))],
                         ids=["copy", "deepcopy", "pickle"])
def test_a_context_cannot_be_duplicated_and_stays_usable(any_library, kind, duplicate):
    context, call = make(kind, any_library)
    expected = call(context)
    with pytest.raises(simdbind.ContextCopyError, match=f"{kind}: a context cannot be copied or pickled.*"
                       f"calling {kind}\\(\\.\\.\\.\\) again"):
        duplicate(context)
    assert isinstance(simdbind.ContextCopyError("x"), TypeError)  # what pickle and copy users catch
    np.testing.assert_array_equal(call(context), expected)
    context.close()


# -- signals -------------------------------------------------------------------------------------------------------
class _Interrupt(BaseException):
    """Raised by the test's SIGALRM handler, as KeyboardInterrupt is by SIGINT's."""


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise _Interrupt


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timers on this platform")
# The signal can land in a weakref callback or a finalizer, where Python reports the handler's exception as ignored:
# the test's own exception, as the docstring says, not a finding.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("operation", ["call", "close"])
def test_a_signal_at_any_moment_leaves_the_context_usable(any_library, kind, operation):
    """A signal whose handler raises, timed to land anywhere in a call (or in close()), 400 times: afterwards the
    context still gives the same result (or, after close, raises ContextClosedError) and closes, never blocking.

    The operation repeats until the signal lands, so a signal lands inside one however short a call is; one that
    lands in a finalizer (a context released by the garbage collector) is reported by Python as ignored instead."""
    reference, call = make(kind, any_library)
    expected = call(reference)
    started = time.perf_counter()
    for _ in range(20):
        call(reference) if operation == "call" else make(kind, any_library)[0].close()
    span = (time.perf_counter() - started) / 20
    reference.close()
    delays = np.random.default_rng(1).uniform(0, 1.5 * span, 400)
    previous = signal.signal(signal.SIGALRM, _raise_interrupt)
    landed = 0
    try:
        for delay in delays:
            context, call = make(kind, any_library)
            try:
                signal.setitimer(signal.ITIMER_REAL, max(float(delay), 1e-6))
                try:
                    deadline = time.perf_counter() + float(delay) + 0.05
                    while time.perf_counter() < deadline:
                        if operation == "call":
                            call(context)
                        else:  # a landing in make() leaves `context` the closed one
                            context.close()
                            context, call = make(kind, any_library)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except _Interrupt:
                landed += 1
            if operation == "call":
                np.testing.assert_array_equal(in_thread(lambda: call(context)), expected)
            in_thread(lambda: context.close() or True)
            with pytest.raises(simdbind.ContextClosedError):
                call(context)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert landed > 0.9 * len(delays)


# -- fork ----------------------------------------------------------------------------------------------------------
def _child_status(child: Callable[[], int], timeout: float = 30.0) -> int:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # never return into pytest
        status = 1
        try:
            status = child()
        finally:
            os.write(write, bytes([status]))
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + timeout
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child blocked on a context it inherited")
        time.sleep(0.02)
    answer = os.read(read, 1)
    os.close(read)
    return answer[0] if answer else 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is not available on this platform")
@pytest.mark.parametrize("kind", KINDS)
def test_a_child_forked_while_a_thread_is_inside_a_call_uses_and_closes_the_context(any_library, kind):
    context, call = make(kind, any_library)
    expected = call(context)
    # A second context of the same kind, slow enough that the fork lands inside one of its calls.
    if kind == "Convolution32f":
        slow = simdbind.Convolution32f((64, 96, 96), 64, 3, pad=1, weight=f32(64, 64, 3, 3), library=any_library)
        slow_call = (lambda x: lambda: slow.forward(x))(f32(1, 64, 96, 96))
    elif kind == "InnerProduct32f":
        slow = simdbind.InnerProduct32f(512, 512, 2048, weight=f32(2048, 512), library=any_library)
        slow_call = (lambda a: lambda: slow.forward(a))(f32(512, 2048))
    else:
        slow = simdbind.GatherElements(np.float32, np.int64, (4000, 4000), (4000, 4000), 1, library=any_library)
        data, index = f32(4000, 4000), RNG.integers(0, 4000, (4000, 4000))
        slow_call = lambda: slow.forward(data, index)  # noqa: E731
    previous = any_library.set_threads(1)
    inside = threading.Event()
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            inside.set()
            slow_call()

    worker = threading.Thread(target=busy, daemon=True)
    worker.start()
    try:
        inside.wait(10)
        time.sleep(0.05)

        def child() -> int:
            ok = np.array_equal(call(context), expected)
            slow_call()
            slow.close()
            context.close()
            return 0 if ok else 2

        status = _child_status(child)
    finally:
        stop.set()
        worker.join(60)
        any_library.set_threads(previous)
    assert status == 0, f"child status {status} (1: raised, 2: different values)"
    slow.close()
    context.close()


# -- info ----------------------------------------------------------------------------------------------------------
class _CountingLibrary:
    """`library` whose C function SimdSynetConvolution32fInfo counts its calls."""

    def __init__(self, library: simdbind.Library) -> None:
        self._library = library
        self.info_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._library, name)

    def function(self, name: str) -> Any:
        inner = self._library.function(name)
        if name != "SimdSynetConvolution32fInfo":
            return inner

        def counted(context: Any) -> Any:
            self.info_calls += 1
            return inner(context)
        return counted


def test_info_is_read_once_and_every_thread_sees_the_same_text(any_library):
    counting = _CountingLibrary(any_library)
    conv = simdbind.Convolution32f((3, 9, 8), 5, 3, pad=1, weight=W_CONV, library=counting)
    first, calls_at_creation = conv.info, counting.info_calls
    assert re.fullmatch(r"\w+::\w+", first), first
    seen: set[str] = set()

    def read() -> None:
        for _ in range(300):
            seen.add(conv.info)
            conv.forward(X_CONV)

    threads = [threading.Thread(target=read) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {first}
    assert counting.info_calls == calls_at_creation <= 1  # the C buffer is never read while threads share it
    conv.close()
    with pytest.raises(simdbind.ContextClosedError):
        conv.info


# -- repr ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, key", [
    ("Convolution32f", r"nchw src \(3, 9, 8\) batch 1 -> \(5, 9, 8\), .*, \w+::\w+"),
    ("InnerProduct32f", r"M=3 N=7 K=20 trans_b=False const_b=True bias=False activation=.*"),
    ("GatherElements", r"float32 int32 data \(4, 6\) index \(4, 5\) axis=1 constant=False"),
])
def test_every_context_has_one_repr_style(any_library, kind, key):
    context, _ = make(kind, any_library)
    isa = any_library.isa
    assert re.fullmatch(f"<{kind} {key} isa={isa} open>", repr(context)), repr(context)
    context.close()
    assert re.fullmatch(f"<{kind} {key} isa={isa} closed>", repr(context)), repr(context)
