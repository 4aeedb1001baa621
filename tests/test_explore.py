"""``simdbind conformance explore`` against a compiled test double with two planted defects: its eltwise is
wrong from 37 elements on and kills the process from 5 inputs on. The search must report both -- the crash as a
crash -- shrink each to the minimal descriptor, and print a repro line that reruns it."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from simdbind.conformance import explore, runner
from tests.test_loader_doubles import CC, RUNTIME_V7_1, build

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the test double")

#: Upstream's operation codes: product 0, sum 1, max 2, min 3; max/min fold as `a > b ? a : b`, as upstream's do.
PLANTED = RUNTIME_V7_1 + """
void SimdSynetEltwiseLayerForward(const float* const* src, const float* weight, size_t count, size_t size, int op,
                                  float* dst)
{
    if (count >= 5)
        *(volatile int*)0 = 1;  /* planted: SIGSEGV from five inputs on */
    for (size_t i = 0; i < size; ++i) {
        float d = op == 1 ? src[0][i] * weight[0] : src[0][i];
        for (size_t j = 1; j < count; ++j) {
            float s = src[j][i];
            d = op == 0 ? d * s : op == 1 ? d + s * weight[j] : op == 2 ? (d > s ? d : s) : (d < s ? d : s);
        }
        dst[i] = i >= 36 ? d + 1.0f : d;  /* planted: wrong from the 37th element on */
    }
}
"""


def test_explore_finds_shrinks_and_reports_both_planted_defects(tmp_path):
    library = build(tmp_path, "planted", PLANTED)
    report = tmp_path / "explore.json"
    keep = tmp_path / "regressions.txt"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "explore", "--library", library,
                          "--function", "eltwise", "--budget", "8", "--seed", "3", "--timeout", "20", "--guide", "none",
                          "--json", str(report), "--keep", str(keep)], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr  # findings fail the run
    (pair,) = json.loads(report.read_text())["pairs"]
    findings = {f["kind"]: f for f in pair["findings"]}
    assert sorted(findings) == ["crash", "wrong"], out.stdout
    assert findings["wrong"]["minimal"] == "eltwise op=product count=2 size=37"
    assert findings["crash"]["minimal"] == "eltwise op=product count=5 size=1"
    assert "SIGSEGV" in findings["crash"]["detail"]
    assert pair["counts"]["pass"] > 0 and pair["counts"]["crash"] >= 1  # the search went on after the crash
    assert "cases/s" in out.stdout and "FINDING 2" in out.stdout
    assert keep.read_text().splitlines()[0].startswith(findings["wrong"]["minimal"] + "  #")
    entry = findings["wrong"]["entry"]
    assert entry["example"] == findings["wrong"]["minimal"] and entry["function"] == "eltwise"
    assert "size == 37" in entry["when"] and entry["affects"] == "external"
    # The repro line reruns the minimal case (in no grid) from its descriptor alone.
    repro = shlex.split(findings["wrong"]["repro"])
    assert repro[:2] == ["simdbind", "conformance"]
    rerun = subprocess.run([sys.executable, "-m", "simdbind", *repro[1:], "--report-json", "", "--junit-xml", "",
                            "--report-md", "", "--report-html", "", "--no-progress"], capture_output=True, text=True)
    assert rerun.returncode == 1 and "1 failed" in rerun.stdout, rerun.stdout + rerun.stderr
    assert "eltwise op=product count=2 size=37" in rerun.stdout


def test_kinds_of_results():
    def result(status, detail=""):
        return runner.CaseResult("i", "f", "d", "main", "float32", "-", status, detail)

    assert explore.kind_of(result("pass")) == "pass" and explore.kind_of(result("xpass")) == "pass"
    assert explore.kind_of(result("known", "known deviation x")) == "known"
    assert explore.kind_of(result("fail", "1/3 outside exact; first at index 0: got 1.5, expected 0.5")) == "wrong"
    assert explore.kind_of(result("fail", "1/3 outside exact; first at index 0: got nan, expected 0.5")) == \
        "wrong:nan"
    assert explore.kind_of(result("fail", "wrote 4 bytes past dst (in the 64-byte guard zone)")) == "overrun"
    assert explore.kind_of(result("error", "crash: the worker process died with SIGSEGV")) == "crash"
    assert explore.kind_of(result("error", "hang: no result after 5 s")) == "hang"
    assert explore.kind_of(result("error", "ArgumentError: pad: must be ...")) == "rejected"
    # As the runner's guard reports them: the adapter's method first.
    assert explore.kind_of(result("error", "run() raised ArgumentError: groups: must divide ...")) == "rejected"
    assert explore.kind_of(result("error", "run() raised UpstreamDefectError: x")) == "error:UpstreamDefectError"
    assert explore.kind_of(result("error", "case: IndexError: tuple index out of range")) == "rejected"
    assert explore.kind_of(result("error", "reference: KeyError: 'x'")) == "error:reference"
    assert explore.kind_of(result("error", "UpstreamDefectError: wrote 4 bytes")) == "error:UpstreamDefectError"
    assert [explore.is_finding(k) for k in ("wrong", "wrong:nan", "overrun", "crash", "hang", "error:X", "known",
                                            "rejected", "pass")] == [True] * 6 + [False] * 3


def test_the_guided_search_finds_both_planted_defects_and_runs_neighbours(tmp_path):
    library = build(tmp_path, "planted", PLANTED)
    report = tmp_path / "explore.json"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "explore", "--library", library,
                          "--function", "eltwise", "--budget", "8", "--seed", "3", "--timeout", "20",
                          "--guide", "features", "--json", str(report)], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    (pair,) = json.loads(report.read_text())["pairs"]
    assert sorted(f["kind"] for f in pair["findings"]) == ["crash", "wrong"], out.stdout
    assert pair["corpus"] > 0 and pair["neighbours"] > 0 and "neighbours" in out.stdout


def test_the_guide_keeps_what_is_new_and_its_neighbours_stay_in_the_domain():
    import random

    from simdbind.conformance.guide import Guide, size_class
    from simdbind.conformance.model import REGISTRY, case_from_descriptor

    assert [size_class(v) for v in (0, 1, 2, 3, 4, 5, 8, 9, 17, -1)] == \
        ["0", "1", "2", "<=4", "<=4", "<=8", "<=8", "<=16", "<=32", "neg"]
    function = REGISTRY["eltwise"]
    guide = Guide(function, random.Random(1))
    assert guide.neighbour(case_from_descriptor("eltwise op=max count=2 size=17")) is None  # no corpus yet
    first = case_from_descriptor("eltwise op=max count=2 size=17")
    assert "size=<=32" in guide.features(first, "pass", "") and "outcome=pass" in guide.features(first, "pass", "")
    assert guide.observe(first, "pass", "") and not guide.observe(first, "pass", "")
    assert guide.observe(first, "wrong", "")  # a new outcome is new
    assert guide.observe(case_from_descriptor("eltwise op=max count=2 size=100"), "pass", "")  # a new size class
    drawn = case_from_descriptor("eltwise op=sum count=3 size=5")
    near = [guide.neighbour(drawn) for _ in range(200)]
    made = [case for case in near if case is not None]
    assert len(made) > 100
    for case in made:
        function.check_domain(case)  # never outside what the function's cases span
        assert case.params["size"] >= 1 and case.params["count"] >= 1
    assert {case.params["op"] for case in made} >= {"max", "sum"}  # crossed over from the drawn case too
    # An algorithm a context reports is a feature, and crossed with each name-valued field.
    conv = REGISTRY["convolution32f"]
    case = next(iter(conv.cases()))
    features = Guide(conv, random.Random(1)).features(case, "pass", "Avx512bw::NhwcDirect-r")
    assert "algorithm=NhwcDirect-r" in features and any(f.startswith("NhwcDirect-r|layout=") for f in features)


#: An eltwise that never returns for three inputs and is right otherwise (product only, as the cases below use).
HANGING = RUNTIME_V7_1 + """
void SimdSynetEltwiseLayerForward(const float* const* src, const float* weight, size_t count, size_t size, int op,
                                  float* dst)
{
    while (count == 3)  /* planted: a hang */
        ;
    for (size_t i = 0; i < size; ++i) {
        float d = src[0][i];
        for (size_t j = 1; j < count; ++j)
            d *= src[j][i];
        dst[i] = d;
    }
}
"""


def test_a_hang_past_the_timeout_is_a_result_and_the_next_case_runs_in_a_fresh_worker(tmp_path):
    from simdbind.conformance.implementations import implementations
    from simdbind.conformance.model import REGISTRY

    (impl,) = implementations([build(tmp_path, "hanging", HANGING)])
    eltwise = REGISTRY["eltwise"]
    worker = explore.Worker(impl, 1, timeout=2)
    try:
        hung = worker.run(eltwise, eltwise.parse("eltwise op=product count=3 size=5"))
        assert explore.kind_of(hung) == "hang" and "no result after 2 s" in hung.detail
        assert worker.run(eltwise, eltwise.parse("eltwise op=product count=2 size=5")).status == "pass"
        assert worker.restarts == 1
    finally:
        worker.stop()
