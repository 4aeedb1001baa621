"""simdbind.conformance.values: the class of every kind of number, and `simdbind conformance classes`."""

from __future__ import annotations

import json
import subprocess
import sys

import ml_dtypes
import numpy as np

from simdbind.conformance import values
from simdbind.conformance.registry import REGISTRY

F32 = np.finfo(np.float32)


def test_each_float32_value_falls_in_its_one_class():
    specimens = {
        "nan": np.nan, "-inf": -np.inf, "+inf": np.inf, "-max": -F32.max, "+max": F32.max, "-0": -0.0, "+0": 0.0,
        "-subnormal": -F32.smallest_subnormal, "+subnormal": np.float32(1e-40), "-normal": -F32.smallest_normal,
        "+normal": 1.5,
    }
    assert set(specimens) == set(values.FLOAT_CLASSES)
    for name, value in specimens.items():
        assert values.classes(np.array([value], np.float32)) == {name}, name
    assert values.classes(np.nextafter(F32.max, 0, dtype=np.float32)[None]) == {"+normal"}  # below the max
    assert values.classes(np.array(list(specimens.values()), np.float32)) == set(values.FLOAT_CLASSES)
    assert values.classes(np.array([], np.float32)) == set()


def test_bf16_has_its_own_largest_finite_and_its_bit_patterns_are_read_as_numbers():
    bf16_max = np.array([ml_dtypes.finfo(ml_dtypes.bfloat16).max], ml_dtypes.bfloat16)
    assert values.classes(bf16_max) == {"+max"}
    assert values.classes(np.array([F32.max], np.float32).astype(ml_dtypes.bfloat16)) == {"+inf"}  # rounds up
    bits = np.array([0x7F7F, 0x8001, 0x7FC0, 0x0000], np.uint16)  # max, -subnormal, NaN, +0
    assert values.classes(bits) == {"positive", "min"}  # as integers: positive numbers, and uint16's min, 0
    assert values.classes(values.as_values(bits, "bf16")) == {"+max", "-subnormal", "nan", "+0"}


def test_integer_extremes_and_the_values_between():
    assert values.classes(np.array([-128, -1, 0, 5, 127], np.int8)) == set(values.INT_CLASSES)
    assert values.classes(np.array([0, 255], np.uint8)) == {"min", "max"}  # 0 is uint8's min
    assert values.classes(np.array([1, 2], np.uint8)) == {"positive"}


def test_reached_reads_the_inputs_and_the_references_outputs_of_cases():
    function = REGISTRY["unary"]
    edge = [c for c in function.cases() if c.group == "edge" and c.params["op"] == "abs"]
    found = values.reached(function, edge, seed=1)
    assert found["inputs"]["x:float"] == set(values.FLOAT_CLASSES)  # the unary specials hold every class
    # abs makes every class non-negative: no "-" class, NaN stays
    assert found["outputs"]["out:float"] == {c for c in values.FLOAT_CLASSES if not c.startswith("-")}
    assert values.missing(found["outputs"]) == {"out:float": [c for c in values.FLOAT_CLASSES if c[0] == "-"]}


def test_the_command_lists_what_each_input_misses_and_exits_1(tmp_path):
    report = tmp_path / "classes.json"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "classes", "--profile", "ci",
                          "--function", "unary", "--function", "eltwise", "--json", str(report)],
                         capture_output=True, text=True)
    data = json.loads(report.read_text())
    assert data["unary"]["inputs"]["x:float"]["missing"] == []
    assert "nan" in data["eltwise"]["inputs"]["weights:float"]["missing"]
    assert out.returncode == 1 and "eltwise input weights:float: missing nan" in out.stdout, out.stdout
    bad = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "classes", "--function", "sofmax"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "softmax" in bad.stderr
