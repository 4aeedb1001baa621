"""Classes of values: which kinds of numbers a function's cases give it and which its reference gives back.

Floating-point data (float32, bf16) falls into eleven classes: ``nan``, ``-inf``, ``-max`` (the largest finite
magnitude, negative), ``-normal``, ``-subnormal``, ``-0``, ``+0``, ``+subnormal``, ``+normal``, ``+max``, ``+inf``.
Signed integer data falls into ``min`` and ``max`` (the type's extremes), ``negative``, ``0`` and ``positive``
between them; unsigned data into ``min`` (0), ``positive`` and ``max``. :func:`reached` counts, over a list of cases, the classes of every input array and every reference output,
so that a profile can be checked to give each function every class it can take and to make it produce every class
the contract lets it produce (``simdbind conformance classes``).

:func:`specimens` holds one value of each class per data type: the values the ``classes`` edge cases put into their
inputs, mixed at body and tail lanes (:func:`holding_every_class`) or one per lane where sums must not meet two
(:func:`class_lanes`), so that which value stands for a class is decided here once.
A function may declare classes of an input outside its domain (``Function.outside_domain``, input name to
``{class: why}``): the command names them with the reason instead of counting them as missing.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Iterable

import numpy as np

FLOAT_CLASSES = ("nan", "-inf", "-max", "-normal", "-subnormal", "-0", "+0", "+subnormal", "+normal", "+max", "+inf")
INT_CLASSES = ("min", "negative", "0", "positive", "max")
#: Unsigned integers: 0 is their min, and nothing is negative.
UINT_CLASSES = ("min", "positive", "max")


#: One value of each float class: in float32, and (as bit patterns) in bf16. Normal values of magnitude 0.5 (exact in
#: both types), the subnormals 1e-40 (float32) and bf16's smallest, the largest finite values of each type.
_FLOAT32_SPECIMENS = {"nan": np.nan, "-inf": -np.inf, "-max": -np.finfo(np.float32).max, "-normal": -0.5,
                      "-subnormal": -1e-40, "-0": -0.0, "+0": 0.0, "+subnormal": 1e-40, "+normal": 0.5,
                      "+max": np.finfo(np.float32).max, "+inf": np.inf}
_BF16_SPECIMEN_BITS = {"nan": 0x7FC0, "-inf": 0xFF80, "-max": 0xFF7F, "-normal": 0xBF00, "-subnormal": 0x8001,
                       "-0": 0x8000, "+0": 0x0000, "+subnormal": 0x0001, "+normal": 0x3F00, "+max": 0x7F7F,
                       "+inf": 0x7F80}


def specimens(dtype: str) -> np.ndarray:
    """One value of each class of `dtype`, in the order of its class list (FLOAT_CLASSES, INT_CLASSES or
    UINT_CLASSES): float32 values; bf16 as uint16 bit patterns; integers as that integer type.

    >>> specimens("float32")[-2:]
    array([3.4028235e+38,           inf], dtype=float32)
    >>> [hex(b) for b in specimens("bf16")[:3]]
    ['0x7fc0', '0xff80', '0xff7f']
    >>> specimens("uint8")
    array([  0,   3, 255], dtype=uint8)
    """
    if dtype == "float32":
        return np.array([_FLOAT32_SPECIMENS[c] for c in FLOAT_CLASSES], np.float32)
    if dtype in ("bf16", "bfloat16"):
        return np.array([_BF16_SPECIMEN_BITS[c] for c in FLOAT_CLASSES], np.uint16)
    info = np.iinfo(dtype)
    if info.min == 0:
        return np.array([0, 3, info.max], dtype)
    return np.array([info.min, -3, 0, 3, info.max], dtype)


def holding_every_class(data: np.ndarray, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """A copy of `data` with one specimen of every class of `dtype` in its first elements (the vector body) and
    again, in a random order, in its last ones (the tail lanes of the innermost axis), in C order; as many as fit
    when `data` is smaller than twice the class count. `data` holds what :func:`specimens` gives for `dtype`
    (bf16 as uint16 bit patterns)."""
    values = specimens(dtype).astype(data.dtype)
    flat = np.array(data, copy=True).reshape(-1)
    head = min(len(values), flat.size)
    flat[:head] = values[:head]
    tail = min(len(values), flat.size - head)
    if tail:
        flat[flat.size - tail:] = rng.permutation(values)[:tail]
    return flat.reshape(data.shape)


#: Where :func:`class_lanes` puts its second set of classes: past a vector of 16 lanes (AVX-512 float32), so that over
#: CLASS_LANES = 27 lanes (16 + 11 = 3*8 + 3 = 6*4 + 3) those are tail lanes at every vector width.
SECOND_SET = 16
CLASS_LANES = SECOND_SET + len(FLOAT_CLASSES)


#: The float classes that are not finite numbers. Float parameters of the wrapper (activation parameters, prelu
#: slopes, LRN's k) are finite by its contract (docs/guide/python-api.md): they never hold these, restrict_range's
#: bounds excepted (they may be infinite).
NON_FINITE_CLASSES = ("nan", "-inf", "+inf")
#: Why a finite-only parameter's cases do not give it the non-finite classes (Function.outside_domain).
FINITE_PARAMETER = "the wrapper takes float parameters as finite numbers only (docs/guide/python-api.md) and refuses " \
                   "others: an argument check"


def finite_specimens(dtype: str) -> np.ndarray:
    """:func:`specimens` of the finite classes only (for float parameters)."""
    return np.array([v for c, v in zip(FLOAT_CLASSES, specimens(dtype)) if c not in NON_FINITE_CLASSES])


def class_lanes(dtype: str, rng: np.random.Generator, finite: bool = False) -> list[tuple[int, Any]]:
    """(lane, value) pairs for spreading the classes of `dtype` (the finite ones if `finite`) one per lane (a
    channel, a column, a row): lane c of the first set holds class c, lane SECOND_SET + c a class of a random order;
    for inputs where each lane is summed apart (a bias, a prelu slope, one row of a product), so no sum meets two
    classes and no order of summation matters."""
    chosen = finite_specimens(dtype) if finite else specimens(dtype)
    return list(enumerate(chosen)) + [(SECOND_SET + c, value) for c, value in enumerate(rng.permutation(chosen))]


def _is_bf16(array: np.ndarray) -> bool:
    return array.dtype.name == "bfloat16"


def classes(array: Any) -> set[str]:
    """The classes of the values of `array` (an empty set for data that is not numbers)."""
    data = np.asarray(array)
    if data.size == 0:
        return set()
    if data.dtype.kind == "f" or _is_bf16(data):
        return _float_classes(data)
    if data.dtype.kind in "iu":
        return _int_classes(data)
    return set()


def _float_classes(data: np.ndarray) -> set[str]:
    info = _finfo(data)
    with np.errstate(invalid="ignore"):
        values = data.astype(np.float64).ravel()
    found: set[str] = set()
    if np.isnan(values).any():
        found.add("nan")
    finite = values[np.isfinite(values)]
    if np.isposinf(values).any():
        found.add("+inf")
    if np.isneginf(values).any():
        found.add("-inf")
    magnitude = np.abs(finite)
    negative = np.signbit(finite)
    for sign, chosen in (("-", negative), ("+", ~negative)):
        part = magnitude[chosen]
        if part.size == 0:
            continue
        if (part == 0).any():
            found.add(f"{sign}0")
        if ((part > 0) & (part < info[0])).any():
            found.add(f"{sign}subnormal")
        if ((part >= info[0]) & (part < info[1])).any():
            found.add(f"{sign}normal")
        if (part == info[1]).any():
            found.add(f"{sign}max")
    return found


def _finfo(data: np.ndarray) -> tuple[float, float]:
    """(smallest normal, largest finite) of the array's float type."""
    if _is_bf16(data):
        return 2.0 ** -126, float(np.float32(np.frombuffer(np.uint32(0x7F7F0000).tobytes(), np.float32)[0]))
    info = np.finfo(data.dtype)
    return float(info.smallest_normal), float(info.max)


def _int_classes(data: np.ndarray) -> set[str]:
    info = np.iinfo(data.dtype)
    found: set[str] = set()
    if (data == info.min).any():
        found.add("min")
    if (data == info.max).any():
        found.add("max")
    between = data[(data != info.min) & (data != info.max)]
    if (between < 0).any():
        found.add("negative")
    if (between == 0).any():
        found.add("0")
    if (between > 0).any():
        found.add("positive")
    return found


def as_values(array: np.ndarray, dtype: str) -> np.ndarray:
    """The array as the numbers it holds: bf16 data kept as its uint16 bit patterns (a case of dtype bf16) viewed as
    bfloat16."""
    if array.dtype == np.uint16 and dtype in ("bf16", "bfloat16"):
        import ml_dtypes

        return array.view(ml_dtypes.bfloat16)
    return array


def kind(array: Any) -> str:
    """"float", "int" or "uint" (the class list that applies), "" for other data."""
    data = np.asarray(array)
    if data.dtype.kind == "f" or _is_bf16(data):
        return "float"
    return {"i": "int", "u": "uint"}.get(data.dtype.kind, "")


def reached(function: Any, cases: Iterable[Any], seed: int) -> dict[str, dict[str, set[str]]]:
    """For the inputs (by name) and the outputs (``out``, ``out1``, ...) of `function` over `cases`, the classes
    their values fell into. The outputs are the reference's (what the contract makes of the inputs), so no
    implementation is called."""
    found: dict[str, dict[str, set[str]]] = {"inputs": {}, "outputs": {}}
    for case in cases:
        inputs = function.inputs(case, case.rng(seed))
        for name, value in inputs.items():
            # an input of several arrays (eltwise's inputs, one per call of a context) counts as one
            for array in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(array, np.ndarray) and kind(array) and not name.startswith("_"):
                    array = as_values(array, case.dtype)
                    found["inputs"].setdefault(f"{name}:{kind(array)}", set()).update(classes(array))
        try:
            expected = function.reference(case, dict(inputs))
        except (KeyError, TypeError):  # a reference that follows what run() recorded: no output classes here
            continue
        parts = expected if isinstance(expected, tuple) else (expected,)
        for index, part in enumerate(parts):
            array = as_values(np.asarray(part), case.dtype)
            if kind(array):
                label = "out" if index == 0 else f"out{index}"
                found["outputs"].setdefault(f"{label}:{kind(array)}", set()).update(classes(array))
    return found


def missing(found: dict[str, set[str]], outside: dict[str, dict[str, str]] | None = None) -> dict[str, list[str]]:
    """Per array, the classes of its kind that `found` lacks, leaving out those `outside` (input name, without its
    ``:kind``, to ``{class: why}``) declares outside the domain."""
    result = {}
    for name, seen in found.items():
        every = {"float": FLOAT_CLASSES, "int": INT_CLASSES, "uint": UINT_CLASSES}[name.rsplit(":", 1)[1]]
        excluded = (outside or {}).get(name.rsplit(":", 1)[0], {})
        lacking = [c for c in every if c not in seen and c not in excluded]
        if lacking:
            result[name] = lacking
    return result


# -- command line -------------------------------------------------------------------------------------------------
def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    from simdbind.conformance import options

    parser = subparsers.add_parser(
        "classes", help="the classes of values (NaN, infinities, zeros, subnormals, extremes) a profile's cases give "
                        "each function and make its reference produce",
        description=__doc__.split("\n\n")[0],
        epilog="Exit codes: 0 every input array reached every class of its kind, 1 one did not, 2 a usage error.")
    options.add_cli_arguments(parser, ("profile", "function", "seed"))
    parser.add_argument("--json", default=None, metavar="FILE", help="write the classes reached and missing as JSON")
    parser.set_defaults(handler=main)
    return parser


def main(args: argparse.Namespace) -> int:
    from simdbind.conformance import options, runner
    from simdbind.conformance.names import error as _error

    seed = args.seed if args.seed is not None else runner.DEFAULT_SEED
    try:
        chosen = runner.functions(args.function)
    except (KeyError, ValueError) as error:
        return _error(error.args[0] if isinstance(error, KeyError) and error.args else str(error))
    if args.json:
        problem = options.check_writable(args.json, "--json")
        if problem:
            return _error(problem)
    report: dict[str, Any] = {}
    lacking = 0
    for function in chosen:
        cases = [case for case in function.cases() if args.profile in case.profiles]
        found = reached(function, cases, seed)
        outside: dict[str, dict[str, str]] = getattr(function, "outside_domain", {})
        report[function.name] = {side: {name: {"reached": sorted(seen),
                                               "missing": missing({name: seen}, outside).get(name, [])}
                                        for name, seen in found[side].items()} for side in ("inputs", "outputs")}
        if outside:
            report[function.name]["outside_domain"] = outside
        for name, gaps in missing(found["inputs"], outside).items():
            lacking += 1
            print(f"{function.name} input {name}: missing {', '.join(gaps)}")
        for name, reasons in outside.items():
            for why in dict.fromkeys(reasons.values()):  # one line per reason, naming its classes
                named = [c for c, reason in reasons.items() if reason == why]
                print(f"{function.name} input {name}: {', '.join(named)} outside the domain ({why})")
        for name, seen in found["outputs"].items():  # what the contract can produce differs by function: shown
            order = {"float": FLOAT_CLASSES, "int": INT_CLASSES, "uint": UINT_CLASSES}[name.rsplit(":", 1)[1]]
            print(f"{function.name} output {name}: reached {', '.join(c for c in order if c in seen)}")
    print(f"classes: {len(chosen)} function(s), profile {args.profile}: "
          + ("every input reached every class" if not lacking else f"{lacking} input(s) miss a class"))
    if args.json:
        try:
            options.write_text(args.json, json.dumps(report, indent=1) + "\n")
        except OSError as error:
            return _error(f"--json {args.json}: cannot be written ({error.strerror or error})")
    return 1 if lacking else 0
