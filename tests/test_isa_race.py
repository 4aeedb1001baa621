"""A call runs at one ISA from start to end, whatever another thread selects meanwhile.

Several wrappers make one result from several C calls (a batch image by image or row by row, in Python or in the
planned C path), and contexts fix their ISA at Init. One thread flips the bundled library's ISA between the lowest
and the highest the machine runs while another repeats such calls: every output must equal, bit for bit, the
output of one ISA (both computed first), and a context created meanwhile reports the ISA it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import simdbind

ROUNDS = 150


@pytest.fixture
def two_isas(bundled) -> Iterator[tuple[str, str]]:
    supported = bundled.isas_supported
    if len(supported) < 2:
        pytest.skip("needs two ISAs")
    low, high = "base", ("avx512bw" if "avx512bw" in supported else supported[-1])
    previous = bundled.isa
    yield low, high
    bundled.set_isa(previous)


def reference(bundled, isa: str, call: Callable[[], np.ndarray]) -> np.ndarray:
    with bundled.use_isa(isa):
        return call().copy()


def run_while_flipping(bundled, isas: tuple[str, str], call: Callable[[], Any], check: Callable[[Any], None]) -> int:
    """Repeat `call` while another thread flips the ISA; `check` each result. Returns the flips made."""
    stop = threading.Event()
    flips = 0

    def flipper() -> None:
        nonlocal flips
        while not stop.is_set():
            bundled.set_isa(isas[flips % 2])
            flips += 1

    bundled.set_isa(isas[0])  # not the ISA the fixture found: every call runs at one of the two
    thread = threading.Thread(target=flipper)
    thread.start()
    try:
        for _ in range(ROUNDS):
            check(call())
    finally:
        stop.set()
        thread.join()
    return flips


def one_of(references: dict[str, np.ndarray]) -> Callable[[np.ndarray], None]:
    low, high = references.values()
    assert not np.array_equal(low, high), "the two ISAs agree here: the test could not see a mixed result"

    def check(result: np.ndarray) -> None:
        matches = [isa for isa, expected in references.items() if np.array_equal(result, expected)]
        assert matches, "the result matches no single ISA: its parts ran at different ISAs"
    return check


def _data(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_batched_inner_product_is_computed_at_one_isa(bundled, two_isas):
    """One row per C call: ordinary path first, then the planned C path (the plan is made by the first call)."""
    x, w, b = _data(1, 16, 1000), _data(2, 257, 1000), _data(3, 257)

    def call() -> np.ndarray:
        return simdbind.inner_product(x, w, b, library=bundled)
    references = {isa: reference(bundled, isa, call) for isa in two_isas}
    assert run_while_flipping(bundled, two_isas, call, one_of(references)) > 0


def test_batched_pooling_and_lrn_are_computed_at_one_isa(bundled, two_isas):
    x = _data(4, 8, 32, 40, 40) * 10

    def average() -> np.ndarray:
        return simdbind.pooling_average(x, 3, stride=2, exclude_pad=True, pad=1, library=bundled)

    def lrn() -> np.ndarray:
        return simdbind.lrn(x, 2, np.array([2.0, 1e-2, -0.75], np.float32), "nchw", library=bundled)
    for call in (average, lrn):
        references = {isa: reference(bundled, isa, call) for isa in two_isas}
        low, high = references.values()
        if np.array_equal(low, high):
            continue  # these ISAs agree bit for bit on this call: nothing to tell apart
        run_while_flipping(bundled, two_isas, call, one_of(references))


def test_convolution_contexts_run_and_report_one_isa(bundled, two_isas):
    """Contexts made while the ISA flips: each computes at one ISA, the one its repr and info name."""
    x, w, b = _data(5, 1, 64, 20, 20), _data(6, 48, 64, 3, 3), _data(7, 48)

    def make() -> simdbind.Convolution32f:
        return simdbind.Convolution32f((64, 20, 20), 48, 3, pad=1, weight=w, bias=b, library=bundled)

    references = {}
    for isa in two_isas:
        with bundled.use_isa(isa):
            references[isa] = make().forward(x)

    def call() -> tuple[str, str, np.ndarray]:
        with make() as conv:
            return conv.isa, conv.info, conv.forward(x)

    def check(made: tuple[str, str, np.ndarray]) -> None:
        isa, info, result = made
        assert info.startswith(isa + "::"), (isa, info)
        np.testing.assert_array_equal(result, references[isa])
    assert not np.array_equal(*references.values())
    run_while_flipping(bundled, two_isas, call, check)


class _InterruptedAfterPin:
    """The bundled library as one_isa sees it, with Ctrl-C's exception arriving just after the pin returns (where
    Python runs a signal handler): the place between the pin and the end of __enter__, which skips __exit__."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lib, name)

    def SimdBindPinIsa(self) -> int:  # noqa: N802 (the C name)
        self._lib.SimdBindPinIsa()
        raise KeyboardInterrupt


def test_a_pin_interrupted_on_entry_is_undone(bundled, two_isas):
    from simdbind.library import _IsaPin

    low, high = two_isas
    bundled.set_isa(high)
    with pytest.raises(KeyboardInterrupt):
        with _IsaPin(_InterruptedAfterPin(bundled.lib)):
            pass
    assert bundled.lib.SimdBindIsaPinDepth() == 0
    bundled.set_isa(low)  # this thread is not left pinned at `high`: its next context is made at `low`
    context = simdbind.Convolution32f((4, 8, 8), 4, 3, pad=1, weight=_data(1, 4, 4, 3, 3), library=bundled)
    assert context.info.startswith(f"{low}::")


def test_an_unpin_restores_the_depth_of_its_pin_and_is_idempotent(bundled):
    lib = bundled.lib
    outer = lib.SimdBindPinIsa()
    inner = lib.SimdBindPinIsa()
    assert (outer, inner, lib.SimdBindIsaPinDepth()) == (0, 1, 2)
    lib.SimdBindUnpinIsa(outer)  # undoes both
    assert lib.SimdBindIsaPinDepth() == 0
    lib.SimdBindUnpinIsa(inner)  # late: nothing left to undo
    lib.SimdBindUnpinIsa(outer)
    assert lib.SimdBindIsaPinDepth() == 0


def test_a_pin_whose_unpin_never_came_ends_when_its_thread_selects_an_isa(bundled, two_isas):
    low, high = two_isas
    bundled.set_isa(high)
    bundled.lib.SimdBindPinIsa()  # as if Ctrl-C's exception had skipped the unpin
    bundled.set_isa(low)
    assert bundled.lib.SimdBindIsaPinDepth() == 0 and bundled.isa == low
