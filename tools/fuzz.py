"""Coverage-guided fuzzing (atheris) of every bundled C entry point through the public API, checked against the
conformance references.

Each input picks a function and one of its ordinary conformance cases (group "main", every profile), then mutates
the case's parameters from the fuzz bytes: integers (sizes, kernels, strides, pads, axes, counts) within about twice
their value, booleans flipped, strings and enum names replaced by another value that function's cases use. The
case's own `inputs`, `run` (the public Python API) and `reference` then run on the bundled library at an ISA chosen
from the bytes. A finding is:

* a result outside the case's tolerance (a wrong answer), or
* an exception raised inside simdbind that is not a SimdBindError (argument checks must name the rule), or
* a crash (the process dies; with the ASan build, a memory error report).

A mutated case that the wrapper refuses with a SimdBindError is a pass: the rule caught it. Exceptions raised by the
case code itself (conformance/, for parameter mixes it was not written for) are ignored.

    pip install atheris
    python tools/fuzz.py -max_total_time=100 -rss_limit_mb=8000   # bounded run; prints inputs executed per second
    python tools/fuzz.py -runs=20000 -seed=1                 # reproducible count

With coverage on, the process grows by about 60 KB per input (5.7 GB after 81,535 inputs, where an uninstrumented
run stays at 660 MB): hence the raised -rss_limit_mb.
    python tools/fuzz.py crash-<sha>                         # replay a finding

Under ASan+UBSan (after `tools/sanitize.sh` has built build/asan-venv; atheris must be installed there too):
`tools/sanitize.sh` documents the LD_PRELOAD and ASAN_OPTIONS it uses; export the same and run this file with
build/asan-venv/bin/python. Python coverage guides the search (the C is compiled by gcc, which atheris cannot
instrument); the C is reached through the wrappers.
"""

from __future__ import annotations

import inspect
import sys
import traceback
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

with atheris.instrument_imports(include=["simdbind"]):
    import numpy as np

    import simdbind
    from simdbind.conformance.model import REGISTRY
    from simdbind.conformance.runner import guarded
    from simdbind.conformance.tolerance import compare
    from simdbind.errors import SimdBindError

#: Case parameters that select how a case calls the library (a direct C call without the wrapper, a guard layout):
#: never mutated, and cases that set them are not seeds.
HARNESS_KEYS = ("direct", "defect", "guard")
LIBRARY = simdbind.load("bundled")
ISAS = list(LIBRARY.isas_supported)
#: function name -> (function, its ordinary cases, every value each parameter takes across them)
TARGETS = {}
for _name, _function in sorted(REGISTRY.items()):
    _cases = [c for c in _function.cases() if c.group == "main" and not any(
        c.params.get(key) for key in HARNESS_KEYS)]
    if _cases:
        _values: dict[str, list] = {}
        for _case in _cases:
            for _key, _value in _case.params.items():
                if isinstance(_value, str) and _value not in _values.setdefault(_key, []):
                    _values[_key].append(_value)
        TARGETS[_name] = (_function, _cases, _values)
NAMES = sorted(TARGETS)
MAX_ELEMENTS = 1 << 22  # skip inputs above 4M elements: the fuzzer wants many small calls, not a few big ones


def _mutate(fdp: atheris.FuzzedDataProvider, params: dict, values: dict[str, list]) -> dict:
    out = dict(params)
    for key in sorted(out):
        if key in HARNESS_KEYS or not fdp.ConsumeBool():
            continue
        value = out[key]
        if isinstance(value, bool):
            out[key] = not value
        elif isinstance(value, int):
            out[key] = fdp.ConsumeIntInRange(0, max(4, 2 * value + 1))
        elif isinstance(value, str) and values.get(key):
            out[key] = values[key][fdp.ConsumeIntInRange(0, len(values[key]) - 1)]
        elif isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            out[key] = tuple(fdp.ConsumeIntInRange(0, max(4, 2 * v + 1)) for v in value)
    return out


def _raised_in_simdbind(error: BaseException) -> bool:
    """Whether the library raised it (not the case code, simdbind/conformance/, which the fuzzer feeds mixes that
    it was not written for)."""
    frames = traceback.extract_tb(error.__traceback__)
    where = frames[-1].filename.replace("\\", "/") if frames else ""
    return "/simdbind/" in where and "/simdbind/conformance/" not in where


def _size(value) -> int:
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, dict):
        return sum(_size(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_size(v) for v in value)
    return 0


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    function, cases, values = TARGETS[NAMES[fdp.ConsumeIntInRange(0, len(NAMES) - 1)]]
    base = cases[fdp.ConsumeIntInRange(0, len(cases) - 1)]
    case = type(base)(base.function, base.descriptor + " fuzzed", _mutate(fdp, base.params, values), base.dtype,
                      base.layout, base.group, base.profiles)
    isa = ISAS[fdp.ConsumeIntInRange(0, len(ISAS) - 1)]
    seed = fdp.ConsumeIntInRange(0, 2 ** 32 - 1)
    try:
        inputs = function.inputs(case, np.random.default_rng(seed))
    except Exception:  # noqa: BLE001 - the case code cannot build inputs for this mix: not a target
        return
    if _size(inputs) > MAX_ELEMENTS:
        return
    inputs = guarded(inputs)
    try:
        with LIBRARY.use_isa(isa):
            actual = function.run(LIBRARY, case, inputs)
    except SimdBindError:
        return  # a rule refused the mix: what the wrappers are for
    except Exception as error:  # noqa: BLE001 - classified below
        if _raised_in_simdbind(error):
            raise AssertionError(f"{case.function} {case.params} at {isa}: untyped error from simdbind") from error
        return
    try:
        expected = function.expected(case, inputs)
    except Exception:  # noqa: BLE001 - the reference has no answer for this mix
        return
    actual_parts = actual if isinstance(actual, tuple) else (actual,)
    expected_parts = expected if isinstance(expected, tuple) else (expected,)
    for a, e in zip(actual_parts, expected_parts):
        result = compare(np.asarray(a), np.asarray(e), function.tolerance(case))
        if not result.passed:
            raise AssertionError(f"{case.function} {case.params} at {isa} (seed {seed}): {result.mismatches}/"
                                 f"{result.total} outside tolerance; {result.first_mismatch}")


def main() -> None:
    print(f"simdbind fuzz: {len(NAMES)} functions, {sum(len(t[1]) for t in TARGETS.values())} seed cases, "
          f"ISAs {ISAS}", flush=True)
    # An editable install loads simdbind through its own import hook, which instrument_imports does not see: the
    # package's functions are instrumented here instead, so that coverage guides the search either way.
    for name, module in list(sys.modules.items()):
        if name == "simdbind" or name.startswith("simdbind."):
            for value in vars(module).values():
                if getattr(value, "__module__", None) != name:
                    continue
                members = vars(value).values() if isinstance(value, type) else [value]
                for member in members:
                    if inspect.isfunction(member):
                        atheris.instrument_func(member)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
