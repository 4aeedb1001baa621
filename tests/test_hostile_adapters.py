"""No implementation can break or fool a run: whatever one of its methods does (raise, exit, raise
KeyboardInterrupt itself, write to its inputs, return something that is not an array), that case is an error or a
failure naming it, and the run goes on to its report; in this process and in worker processes alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simdbind.conformance import api, deviations, runner
from simdbind.conformance.guard import AdapterError
from tests import fake_cases  # noqa: F401  (registers fake_copy)
from tests import hostile_doubles as hostile

EMPTY = deviations.Catalogue()
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("workers", [1, 2])
def test_each_hostile_adapter_gets_its_verdict_and_the_run_goes_on(workers):
    impls = hostile.RUN_BY_THE_RUNNER
    run = runner.run(impls, ["fake_copy"], "ci", catalogue=EMPTY, workers=workers, modules=["tests.fake_cases"])
    assert not run.interrupted
    planned = runner.plan(impls, ["fake_copy"], "ci")
    assert [(r.implementation, r.descriptor) for r in run.results] == \
        [(impls[i].name, case.descriptor) for i, _, case in planned]
    assert len(run.results) == 5 * len(impls)
    for result in run.results:
        status, fragment = hostile.EXPECTED[result.implementation]
        assert result.status == status, (result.implementation, result.detail)
        assert fragment in result.detail, (result.implementation, result.detail)
        if status != "pass":
            assert result.repro.startswith("simdbind conformance --impl tests.hostile_doubles:")


def test_the_reference_comes_from_the_inputs_as_they_were_before_the_call():
    run = runner.run([hostile.ZEROING], ["fake_copy"], "smoke", catalogue=EMPTY)
    assert len(run.results) == 4
    for result in run.results:  # zeros returned for zeroed inputs: every element differs from the true copy
        assert result.status == "fail" and result.mismatches == result.total > 0 and result.max_abs > 0


def test_an_input_changed_in_place_is_found_to_the_byte():
    from simdbind.conformance.guard import modified, snapshot

    inputs = {"x": np.array([1.0, np.nan, -0.0], np.float32), "shape": (2, 3), "params": [np.ones(2)], "k": 3}
    before = snapshot(inputs)
    assert modified(before, inputs) == []
    inputs["x"][2] = 0.0  # -0.0 -> +0.0: equal values, other bytes
    inputs["params"][0][1] = 5
    inputs["shape"] = (2, 4)
    assert modified(before, inputs) == ["x", "shape", "params"]
    del inputs["k"]
    assert modified(before, inputs)[-1] == "k"


def test_a_hostile_prepare_is_an_error_naming_it_and_unsupported_passes_through():
    case = runner.select_cases(runner.REGISTRY["fake_copy"], "smoke")[0]
    with pytest.raises(AdapterError, match=r"^prepare\(\) raised ValueError: hostile adapter$"):
        api.prepared(hostile.RAISING_PREPARE, "fake_copy", case, {"x": np.ones(3)})
    with pytest.raises(AdapterError, match=r"^prepare\(\) raised SystemExit: 0$"):
        api.prepared(hostile.EXITING_PREPARE, "fake_copy", case, {"x": np.ones(3)})

    class Refusing(hostile.Hostile):
        def prepare(self, function, case, inputs):
            raise api.Unsupported("no such layout")

    with pytest.raises(api.Unsupported, match="no such layout"):
        api.prepared(Refusing("refusing", "", hostile._none), "fake_copy", case, {"x": np.ones(3)})
    call = api.prepared(hostile.HONEST, "fake_copy", case, {"x": np.arange(3.0)})
    assert call().tolist() == [0.0, 1.0, 2.0]


def test_a_describe_that_raises_leaves_the_implementation_usable():
    from simdbind.conformance.implementations import Selected

    class Undescribable(hostile.Hostile):
        def describe(self):
            raise SystemExit(3)

    selected = Selected(Undescribable("undescribable", "", hostile._none), "x:y")
    assert selected.version == ""
    assert selected.describe()["available"] == "describe() raised SystemExit: 3"


CLI_DOUBLES = ["RAISING_UNSUPPORTED", "RAISING_TOLERANCE", "EXITING", "INTERRUPTING", "GENERATOR_EXIT", "ZEROING",
               "NOT_AN_ARRAY", "RETURNS_NONE"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_command_reports_every_case_of_hostile_adapters(tmp_path, workers):
    report = tmp_path / "r.json"
    command = [sys.executable, "-m", "simdbind", "conformance", "--function", "eltwise", "--profile", "smoke",
               "--no-progress", "-n", workers, "--report-json", str(report), "--junit-xml", "", "--report-md", "",
               "--report-html", ""]
    for name in CLI_DOUBLES:
        command += ["--impl", f"tests.hostile_doubles:{name}"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "reports:" in out.stdout
    results = json.loads(report.read_text())["results"]
    cases = len(runner.select_cases(runner.REGISTRY["eltwise"], "smoke"))
    assert len(results) == cases * len(CLI_DOUBLES)
    for result in results:
        name = result["implementation"]
        status, fragment = hostile.EXPECTED[name]
        if name == "zeroing":  # eltwise's inputs have other names than fake_copy's
            fragment = "modified its input"
        assert result["status"] == status and fragment in result["detail"], result
