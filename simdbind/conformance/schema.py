"""The JSON report format ("simdbind-conformance/1") and the one check that a report is well formed.

Reports come from other machines (``simdbind conformance merge``, ``diff``), so a report file is untrusted input:
`read_report` turns anything malformed into a one-line `ReportError` that names the file and what is wrong, and
returns only values of the types the report writers expect (strings that encode as UTF-8, bounded integers,
non-negative numbers that are never NaN). What one report may hold is bounded, so that reading, merging and
writing it again take time and memory in proportion to its size: at most `MAX_FILE_BYTES` bytes, JSON nested at
most `MAX_DEPTH` deep (checked before parsing, which recurses), strings of at most `MAX_STRING` characters and at
most `MAX_RESULTS` results. The writer's own output always passes (a test round-trips it).
"""

from __future__ import annotations

import json
import math
import re
import stat
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable, Mapping

from simdbind.conformance.options import MAX_SEED
from simdbind.conformance.printable import printable
from simdbind.conformance.runner import STATUSES, CaseResult, Run
from simdbind.errors import SimdBindError

FORMAT = "simdbind-conformance/1"
#: Larger files are refused before they are read: a full-profile report of every ISA is a few MiB.
MAX_FILE_BYTES = 256 << 20
#: Longest string field: error details with a traceback are a few KiB.
MAX_STRING = 1 << 20
#: Most results in one report: a full-profile run of every ISA of two libraries has about 100,000.
MAX_RESULTS = 1 << 20
#: Deepest nesting of arrays and objects: the writer's reports are 6 deep; merging re-encodes what it reads
#: recursively, which a deeper document would exhaust.
MAX_DEPTH = 32
MAX_INT = 1 << 63


class ReportError(SimdBindError, ValueError):
    """A report file that cannot be read, is not a conformance report, or breaks its format. The message is one
    printable line whatever the file holds (its name and its keys are quoted into it)."""

    def __init__(self, message: str):
        super().__init__(printable(message))


class _Invalid(Exception):
    """What is wrong, and where in the document (a JSON path such as results[3].status)."""

    def __init__(self, where: str, rule: str):
        super().__init__(f"{where}: {rule}" if where else rule)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- value checks: each returns the value or raises _Invalid ---------------------------------------------------------
def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(where, f"must be a string, not {type(value).__name__}")
    if len(value) > MAX_STRING:
        raise _Invalid(where, f"string of {len(value)} characters (at most {MAX_STRING})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid(where, "string with a lone surrogate (not encodable as UTF-8)") from None
    return value


def _optional_string(value: Any, where: str) -> str | None:
    return None if value is None else _string(value, where)


def _integer(value: Any, where: str) -> int:
    if type(value) is not int:
        raise _Invalid(where, f"must be an integer, not {type(value).__name__}")
    if not 0 <= value < MAX_INT:
        raise _Invalid(where, f"integer {_shown(value)} outside 0 .. 2**63-1")
    return value


def _optional_integer(value: Any, where: str) -> int | None:
    return None if value is None else _integer(value, where)


def seed_problem(seed: Any) -> str | None:
    """What is wrong with `seed` as a run's seed (None: nothing): the one rule of the writer and the reader."""
    if type(seed) is not int:
        return f"must be an integer, not {type(seed).__name__}"
    return None if 0 <= seed <= MAX_SEED else f"{_shown(seed)} outside 0 .. {MAX_SEED} (the seeds a run takes)"


def _seed(value: Any, where: str) -> int | None:
    problem = None if value is None else seed_problem(value)
    if problem:
        raise _Invalid(where, problem)
    return None if value is None else int(value)


def _boolean(value: Any, where: str) -> bool:
    if type(value) is not bool:
        raise _Invalid(where, f"must be true or false, not {type(value).__name__}")
    return value


_SHARD = re.compile(r"([1-9][0-9]{0,8})/([1-9][0-9]{0,8})")


def _shard(value: Any, where: str) -> str:
    """Part K of N of a run's cases, written "K/N" with 1 <= K <= N."""
    match = _SHARD.fullmatch(_string(value, where))
    if match is None or int(match[1]) > int(match[2]):
        raise _Invalid(where, f"{_shown(value)} is not K/N with 1 <= K <= N")
    return match[0]


def _number(value: Any, where: str, infinite: bool) -> float:
    if type(value) not in (int, float):
        raise _Invalid(where, f"must be a number, not {type(value).__name__}")
    if math.isnan(value) or value < 0 or (math.isinf(value) and not infinite):
        raise _Invalid(where, f"{_shown(value)} is not a {'' if infinite else 'finite '}number >= 0")
    return float(value)


def _duration(value: Any, where: str) -> float:
    return _number(value, where, infinite=False)


def _error_measure(value: Any, where: str) -> float:
    """max_abs, max_rel, max_ulp: infinite when an output was NaN or infinite where the reference was not."""
    return _number(value, where, infinite=True)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(where, f"must be an object, not {type(value).__name__}")
    return value


def _array(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Invalid(where, f"must be an array, not {type(value).__name__}")
    return value


def _strings(value: Any, where: str) -> list[str]:
    return [_string(item, f"{where}[{i}]") for i, item in enumerate(_array(value, where))]


def _string_map(value: Any, where: str) -> dict[str, str]:
    return {_string(k, where): _string(v, f"{where}.{k}") for k, v in _object(value, where).items()}


Check = Callable[[Any, str], Any]


def _fields(value: Any, where: str, required: Mapping[str, Check], optional: Mapping[str, Check]) -> dict[str, Any]:
    """The object's known fields, checked; fields it does not know are dropped (later writers may add some)."""
    data = _object(value, where)
    for key in required:
        if key not in data:
            raise _Invalid(where, f"missing key {key!r}")
    known = {**required, **optional}
    return {key: known[key](item, f"{where}.{key}" if where else key) for key, item in data.items() if key in known}


# -- the format ----------------------------------------------------------------------------------------------------
def _status(value: Any, where: str) -> str:
    if not isinstance(value, str) or value not in STATUSES:
        raise _Invalid(where, f"{_shown(value)} is not one of {', '.join(STATUSES)}")
    return value


_RESULT_TYPES: dict[str, Check] = {
    "status": _status, "max_abs": _error_measure, "max_rel": _error_measure, "max_ulp": _error_measure,
    "mismatches": _integer, "total": _integer, "seconds": _duration}
_RESULT_REQUIRED = ("implementation", "function", "descriptor", "group", "dtype", "layout", "status")
_RESULT_REQUIRED_CHECKS = {name: _RESULT_TYPES.get(name, _string) for name in _RESULT_REQUIRED}
_RESULT_OPTIONAL_CHECKS = {f.name: _RESULT_TYPES.get(f.name, _string) for f in fields(CaseResult)
                           if f.name not in _RESULT_REQUIRED}


def _implementation(value: Any, where: str) -> dict[str, Any]:
    """An implementation's description: the fields the reports show are strings; other fields are kept as they are
    (no report shows them)."""
    shown = dict.fromkeys(("kind", "version", "isa", "path", "mode", "available", "cpu_model", "implementation",
                           "machine"), _optional_string)
    data = _object(value, where)
    return {**data, **_fields(data, where, {"name": _string}, shown)}


def _implementations(value: Any, where: str) -> list[dict[str, Any]]:
    return [_implementation(item, f"{where}[{i}]") for i, item in enumerate(_array(value, where))]


def _libraries(value: Any, where: str) -> list[dict[str, Any]]:
    return [_object(item, f"{where}[{i}]") for i, item in enumerate(_array(value, where))]


_ENVIRONMENT: dict[str, Check] = {
    "python": _string, "platform": _string, "cpu_model": _string, "cpus": _optional_integer,
    "packages": _string_map, "source": _string, "libraries": _libraries, "implementations": _implementations}


def _environment(value: Any, where: str) -> dict[str, Any]:
    return _fields(value, where, {}, _ENVIRONMENT)


def _filter(value: Any, where: str) -> str | None:
    return None if value is None else _string(value, where)


def _source(value: Any, where: str) -> dict[str, Any]:
    """One input of a merged report: where it came from."""
    return _fields(value, where, {"file": _string, "machine": _string}, {
        "cpu_model": _string, "profile": _optional_string, "seed": _seed, "created": _optional_string,
        "command": _optional_string, "source": _optional_string, "summary": _summary, "interrupted": _boolean,
        "shard": _shard})


def _sources(value: Any, where: str) -> list[dict[str, Any]]:
    return [_source(item, f"{where}[{i}]") for i, item in enumerate(_array(value, where))]


_META: dict[str, Check] = {
    "format": _string, "created": _string, "command": _string, "profile": _optional_string,
    "seed": _seed, "filter": _filter, "case": _optional_string, "functions": _strings,
    "workers": _optional_integer, "environment": _environment, "merged": _sources,
    "interrupted": _boolean,  # Ctrl-C ended the run: its results are the cases that ran before
    "shard": _shard}  # the run's part of its cases (--shard K/N)


def _summary(value: Any, where: str) -> dict[str, int]:
    return _fields(value, where, {}, dict.fromkeys(STATUSES, _integer))


def _results(value: Any, where: str) -> list[CaseResult]:
    if len(_array(value, where)) > MAX_RESULTS:
        raise _Invalid(where, f"{len(value)} results (at most {MAX_RESULTS})")
    return [CaseResult(**_fields(item, f"{where}[{i}]", _RESULT_REQUIRED_CHECKS, _RESULT_OPTIONAL_CHECKS))
            for i, item in enumerate(_array(value, where))]


def check_report(data: Any) -> Run:
    """The run a parsed report document describes; raises `ReportError` (without a file name) when it breaks the
    format."""
    try:
        if not isinstance(data, dict):
            raise _Invalid("", f"not a conformance report (a JSON {type(data).__name__}, not an object)")
        if "format" not in data or "results" not in data:
            raise _Invalid("", "not a conformance report (no 'format' or no 'results')")
        if data["format"] != FORMAT:
            raise _Invalid("format", f"{_shown(data['format'])} is not {FORMAT!r}")
        results = _results(data["results"], "results")
        meta = _fields(data.get("meta", {}), "meta", {}, _META)
        seconds = _duration(data.get("seconds", 0.0), "seconds")
        if "summary" in data:
            summary = _summary(data["summary"], "summary")
            counted = {status: sum(r.status == status for r in results) for status in STATUSES}
            for status, n in summary.items():
                if n != counted[status]:
                    raise _Invalid(f"summary.{status}", f"{n} but the results have {counted[status]}")
    except _Invalid as error:
        raise ReportError(str(error)) from None
    return Run(results, seconds, meta)


def read_report(path: str | Path) -> Run:
    """Read and check one JSON report file; every problem is a one-line `ReportError` starting with the path."""
    path = Path(path)
    try:
        status = path.stat()
        if stat.S_ISDIR(status.st_mode):
            raise ReportError(f"{path}: is a directory, not a report file")
        if not stat.S_ISREG(status.st_mode):  # a pipe or a device could block or never end
            raise ReportError(f"{path}: not a regular file")
        if status.st_size > MAX_FILE_BYTES:
            raise ReportError(f"{path}: {status.st_size} bytes, larger than a report can be ({MAX_FILE_BYTES} bytes)")
        raw = path.read_bytes()
    except OSError as error:
        raise ReportError(f"{path}: cannot read it: {error.strerror or error}") from None
    except MemoryError:
        raise ReportError(f"{path}: {status.st_size} bytes, too large to read in the memory left") from None
    try:
        return check_report(_parse(raw))
    except ReportError as error:
        raise ReportError(f"{path}: {error}") from None
    except MemoryError:
        raise ReportError(f"{path}: {len(raw)} bytes, too large to read in the memory left") from None


def _parse(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(f"not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start})") from None
    depth = nesting_depth(raw)
    if depth > MAX_DEPTH:
        raise ReportError(f"not a conformance report (JSON nested {depth} deep, at most {MAX_DEPTH})")
    try:
        return json.loads(text, parse_constant=_constant)
    except _Invalid as error:
        raise ReportError(f"not valid report JSON: {error}") from None
    except ValueError as error:  # json.JSONDecodeError, or an integer with too many digits
        raise ReportError(f"not valid JSON: {str(error).splitlines()[0][:200]}") from None


_BRACKET_STEP = bytes(1 if b in b"[{" else 255 if b in b"]}" else 0 for b in range(256))  # +1, -1 as int8
_QUOTE = ord('"')


def nesting_depth(document: bytes) -> int:
    """How deep the arrays and objects of a JSON document nest, counted without parsing it (Python's parser
    recurses once per level), in time and memory proportional to the document: a bracket counts when an even
    number of quotes precede it, once escaped backslashes and escaped quotes are taken out."""
    import numpy as np

    text = np.frombuffer(document.replace(b"\\\\", b"").replace(b'\\"', b""), np.uint8)
    steps = np.frombuffer(_BRACKET_STEP, np.int8)
    depth = deepest = quotes = 0
    for start in range(0, len(text), 1 << 22):  # a chunk at a time: a few arrays of 8 bytes a character
        chunk = text[start:start + (1 << 22)]
        is_quote = chunk == _QUOTE
        outside = (np.cumsum(is_quote, dtype=np.int64) + quotes) % 2 == 0
        levels = np.cumsum(steps[chunk] * outside, dtype=np.int64) + depth
        deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        quotes += int(np.count_nonzero(is_quote))
    return deepest


def _constant(name: str) -> float:
    """JSON's non-standard constants: Infinity is how the writer spells an unbounded error; NaN never appears."""
    if name == "Infinity":
        return math.inf
    raise _Invalid("", f"{name} is not allowed in a report")
