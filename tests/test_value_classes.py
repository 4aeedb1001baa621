"""simdbind.conformance.values: the class of every kind of number, and `simdbind conformance classes`."""

from __future__ import annotations

import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

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
    # ci gives the first weight of a sum two of its classes (NaN and +max), full all eleven
    assert "nan" not in data["eltwise"]["inputs"]["weights:float"]["missing"]
    assert "-inf" in data["eltwise"]["inputs"]["weights:float"]["missing"]
    assert out.returncode == 1 and "eltwise input weights:float: missing -inf" in out.stdout, out.stdout
    bad = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "classes", "--function", "sofmax"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "softmax" in bad.stderr


SPECIMEN_DTYPES = ("float32", "bf16", "int8", "uint8", "int32", "int64", "uint16")


@pytest.mark.parametrize("dtype", SPECIMEN_DTYPES)
def test_each_specimen_is_of_its_own_class(dtype):
    chosen = values.specimens(dtype)
    every = {"f": values.FLOAT_CLASSES, "i": values.INT_CLASSES, "u": values.UINT_CLASSES}
    names = values.FLOAT_CLASSES if dtype in ("float32", "bf16") else every[chosen.dtype.kind]
    assert len(chosen) == len(names)
    for name, value in zip(names, chosen):
        assert values.classes(values.as_values(np.array([value]), dtype)) == {name}, (dtype, name, value)


def test_bf16_specimens_are_the_float32_specimens_where_bf16_holds_them():
    as_float = values.as_values(values.specimens("bf16"), "bf16").astype(np.float32)
    same = [c for c in values.FLOAT_CLASSES if c not in ("-max", "+max", "-subnormal", "+subnormal", "nan")]
    f32 = dict(zip(values.FLOAT_CLASSES, values.specimens("float32")))
    for name, value in zip(values.FLOAT_CLASSES, as_float):
        if name in same:
            assert value == f32[name] and np.signbit(value) == np.signbit(f32[name]), name
    assert as_float[values.FLOAT_CLASSES.index("+max")] == ml_dtypes.finfo(ml_dtypes.bfloat16).max


def test_holding_every_class_fills_the_first_and_the_last_lanes():
    rng = np.random.default_rng(3)
    data = np.full((3, 17), 2.0, np.float32)
    held = values.holding_every_class(data, "float32", rng)
    count = len(values.FLOAT_CLASSES)
    flat = held.reshape(-1)
    assert values.classes(flat[:count]) == set(values.FLOAT_CLASSES)
    assert values.classes(flat[-count:]) == set(values.FLOAT_CLASSES)  # the tail of the last row
    assert (flat[count:-count] == 2.0).all() and (data == 2.0).all()  # the rest kept; the argument untouched
    short = values.holding_every_class(np.zeros(5, np.uint8), "uint8", rng)
    assert list(short[:3]) == [0, 3, 255] and values.classes(short) == set(values.UINT_CLASSES)


def test_class_lanes_put_one_class_on_each_lane_and_finite_ones_leave_out_nan_and_infinities():
    rng = np.random.default_rng(4)
    lanes = values.class_lanes("float32", rng)
    assert len({lane for lane, _ in lanes}) == len(lanes) == 2 * len(values.FLOAT_CLASSES)
    assert max(lane for lane, _ in lanes) == values.CLASS_LANES - 1
    for first in (lanes[:len(values.FLOAT_CLASSES)], lanes[len(values.FLOAT_CLASSES):]):
        assert values.classes(np.array([v for _, v in first], np.float32)) == set(values.FLOAT_CLASSES)
    finite = values.class_lanes("float32", rng, finite=True)
    held = values.classes(np.array([v for _, v in finite], np.float32))
    assert held == set(values.FLOAT_CLASSES) - set(values.NON_FINITE_CLASSES)


def test_missing_leaves_out_the_classes_a_function_declares_outside_its_domain():
    found = {"indices:int": {"negative", "0", "positive"}, "data:float": set(values.FLOAT_CLASSES) - {"nan"}}
    assert values.missing(found) == {"indices:int": ["min", "max"], "data:float": ["nan"]}
    outside = {"indices": {"min": "why", "max": "why"}}
    assert values.missing(found, outside) == {"data:float": ["nan"]}


#: The package's functions (a test module may register fakes of its own in the same registry).
PACKAGE_FUNCTIONS = sorted(name for name, function in REGISTRY.items()
                           if type(function).__module__.startswith("simdbind.conformance.families."))


@pytest.mark.parametrize("name", PACKAGE_FUNCTIONS)
def test_the_full_profile_gives_every_input_every_class_of_its_domain(name):
    """Each class of each input the function's domain holds, from the full profile's cases (the edge groups put
    them there; restrict_range's infinite bounds are main cases); the classes declared outside name real inputs."""
    function = REGISTRY[name]
    found = values.reached(function, [case for case in function.cases() if "full" in case.profiles], seed=1)
    outside = getattr(function, "outside_domain", {})
    assert values.missing(found["inputs"], outside) == {}, name
    for array in outside:
        assert any(key.startswith(f"{array}:") for key in found["inputs"]), (name, array)  # names a real input


def test_the_package_functions_are_the_families_ones():
    assert {"eltwise", "unary", "convolution32f", "gather_elements", "pooling_max8u", "inner_product_8i"} \
        <= set(PACKAGE_FUNCTIONS) and not any(name.startswith("fake") for name in PACKAGE_FUNCTIONS)


def test_the_command_names_the_classes_outside_a_domain_and_does_not_count_them(tmp_path):
    report = tmp_path / "classes.json"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "classes", "--profile", "ci",
                          "--function", "gather_elements", "--json", str(report)], capture_output=True, text=True)
    data = json.loads(report.read_text())["gather_elements"]
    assert out.returncode == 0, out.stdout
    assert "gather_elements input indices: min, max outside the domain (" in out.stdout
    assert set(data["outside_domain"]["indices"]) == {"min", "max"}
    assert data["inputs"]["indices:int"]["missing"] == []  # reported neither as missing
    assert {"min", "max"}.isdisjoint(data["inputs"]["indices:int"]["reached"])
