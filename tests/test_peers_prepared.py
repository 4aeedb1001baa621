"""Every installed peer's prepared calls (what `simdbind bench` times) compute what its adapter's `run` computes, on
the first ci case of each function it prepares: a preparer that caches the wrong thing (a session of another case,
weights of other data) would make its benchmark rows time another computation. ONNX Runtime's and PyTorch's prepared
calls return what `run` returns; ncnn's and OpenVINO's return the engine's outputs as they come (the adapter's
conversions back to Simd's layout, dtype and replication are not timed), which no element-wise comparison can match
to `run`'s. Peers that are not installed are skipped with the reason."""

from __future__ import annotations

import numpy as np
import pytest

from simdbind.bench.harness import installed_peers
from simdbind.conformance import Unsupported
from simdbind.conformance.api import prepared
from simdbind.conformance.model import OUTPUTS, REGISTRY, ReusedOutputs

PEERS = ("onnxruntime", "torch")


def _prepared_functions(name: str) -> list[tuple[object, str]]:
    peers = [peer for peer in installed_peers() if peer.name == name]
    if not peers or peers[0].missing():
        return []
    return [(peers[0], function) for function in sorted(peers[0].preparers)]


def _first_case_run_supports(peer: object, function: str) -> tuple[object, dict, object]:
    for case in REGISTRY[function].cases():
        if "ci" not in case.profiles or case.group != "main" or peer.unsupported(function, case):
            continue
        inputs = REGISTRY[function].inputs(case, case.rng(0))
        try:
            expected = peer.run(function, case, inputs)
        except Unsupported:
            continue
        return case, inputs, expected
    pytest.skip(f"{peer.name} supports no ci case of {function}")


@pytest.mark.parametrize("name", PEERS)
def test_prepared_call_computes_what_run_computes(name):
    pairs = _prepared_functions(name)
    if not pairs:
        pytest.skip(f"{name} is not installed (or has no prepared calls)")
    for peer, function in pairs:
        case, inputs, expected = _first_case_run_supports(peer, function)
        call = prepared(peer, function, case, {**inputs, OUTPUTS: ReusedOutputs()})
        for _ in range(2):  # the second call reuses what the first one cached
            actual = call()
            for a, e in zip(actual if isinstance(actual, tuple) else (actual,),
                            expected if isinstance(expected, tuple) else (expected,), strict=True):
                _assert_same_bits(a, e, f"{name} {case.descriptor}")


def _assert_same_bits(actual: object, expected: object, what: str) -> None:
    """The same bits in the same order (a gather's bit copies may come back as int32 where the adapter gives uint32,
    an engine's output may carry a batch axis of 1 the adapter drops)."""
    a, e = np.ascontiguousarray(actual), np.ascontiguousarray(expected)
    assert a.size == e.size and a.itemsize == e.itemsize, f"{what}: {a.dtype}{a.shape} against {e.dtype}{e.shape}"
    np.testing.assert_array_equal(a.reshape(e.shape).view(f"u{a.itemsize}"), e.view(f"u{e.itemsize}"), err_msg=what)
