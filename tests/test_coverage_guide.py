"""The guided search's coverage signal (simdbind.conformance.coverage_guide) and its hook in explore."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from simdbind.conformance import coverage_guide, explore, runner
from simdbind.conformance.implementations import implementations
from simdbind.conformance.model import REGISTRY

FLT_TRUE_MIN = 1.401298464324817e-45


@pytest.mark.parametrize("value, name", [
    (0.0, "+0"), (-0.0, "-0"), (FLT_TRUE_MIN, "+subnormal"), (-1e-39, "-subnormal"), (1.0, "+finite"),
    (-3.4028234663852886e38, "-finite"), (float("inf"), "+inf"), (float("-inf"), "-inf"), (float("nan"), "nan"),
])
def test_float_classes(value: float, name: str) -> None:
    assert coverage_guide.float_class(value) == name


def test_value_features() -> None:
    assert coverage_guide.value_features("size", 3) == {("size", "value", 3), ("size", "bits", 2),
                                                         ("size", "mod16", 3)}
    assert coverage_guide.value_features("size", 37) == {("size", "value", "large"), ("size", "bits", 6),
                                                          ("size", "mod16", 5)}
    assert coverage_guide.value_features("op", "sum") == {("op", "sum")}
    assert coverage_guide.value_features("flag", True) == {("flag", True)}


def test_a_case_is_kept_once_and_only_for_what_it_adds() -> None:
    eltwise = REGISTRY["eltwise"]
    guide = coverage_guide.Guide(None, eltwise, 1)
    first = eltwise.parse("eltwise op=sum count=2 size=37")
    added = guide.observe(first, "pass")
    assert added == len(guide.seen) > 0 and guide.corpus == [(first.descriptor, added)]
    assert guide.observe(first, "pass") == added and len(guide.corpus) == 1  # the same case: counted once
    # 38 differs from 37 only in its remainder modulo 16: one new feature.
    second = eltwise.parse("eltwise op=sum count=2 size=38")
    assert guide.observe(second, "pass") == 1
    assert ("size", "mod16", 6) in guide.seen
    # A case with nothing new is not kept.
    assert guide.observe(eltwise.parse("eltwise op=sum count=2 size=53"), "pass") == 0
    assert [d for d, _ in guide.corpus] == [first.descriptor, second.descriptor]


def test_the_convolution_algorithm_is_part_of_the_signal() -> None:
    impl = implementations(["bundled"], "base")[0]
    convolution = REGISTRY["convolution32f"]
    depthwise = convolution.parse("convolution32f layout=nhwc src_c=8 src_h=6 src_w=6 dst_c=8 kernel=3x3 groups=8 "
                                  "group=main")
    plain = convolution.parse("convolution32f layout=nhwc src_c=8 src_h=6 src_w=6 dst_c=4 kernel=3x3 group=main")
    infos = [coverage_guide.algorithm(impl, convolution, case, 1) for case in (depthwise, plain)]
    assert all(info and info.startswith("base") for info in infos), infos
    assert infos[0] != infos[1]  # a depthwise and a plain convolution take different algorithms
    guide = coverage_guide.Guide(impl, convolution, 1)
    assert ("algorithm", infos[0]) in guide.features(depthwise, "pass")
    # Functions without a context report no algorithm.
    eltwise = REGISTRY["eltwise"]
    assert coverage_guide.algorithm(impl, eltwise, eltwise.parse("eltwise op=sum count=2 size=3"), 1) is None


class InProcessWorker:
    """explore.Worker's interface, running each case in this process (no start-up time)."""

    def __init__(self, implementation: object):
        self.implementation = implementation

    def run(self, function: object, case: object) -> runner.CaseResult:
        return runner.run_case(self.implementation, function, case, 5)


def test_a_guided_search_keeps_what_added_features() -> None:
    impl = implementations(["bundled"], "base")[0]
    guide = coverage_guide.Guide(impl, REGISTRY["softmax"], 5)
    pair = explore.search(InProcessWorker(impl), REGISTRY["softmax"], 4.0, 5, guide=guide)  # type: ignore[arg-type]
    # Every case the search ran was observed once; the kept ones are those that added features, and together they
    # added every feature seen.
    assert pair.runs == len(guide.scores) >= 2 and not pair.findings
    kept = [descriptor for descriptor, _ in guide.corpus]
    assert kept == [d for d, score in guide.scores.items() if score > 0]
    assert sum(n for _, n in guide.corpus) == len(guide.seen) > 0


def test_explore_guided_writes_its_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "explore", "--function", "softmax",
                          "--isa", "base", "--budget", "4", "--seed", "5", "--guided", "--corpus", str(corpus)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    kept = corpus.read_text().splitlines()
    assert kept and all(REGISTRY["softmax"].parse(line).descriptor == line for line in kept)
    assert f"kept {len(kept)} case(s)" in out.stdout
