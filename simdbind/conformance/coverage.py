"""``simdbind conformance coverage``: line and branch coverage, per file and per ISA, of the code behind the
conformance functions in a gcov-instrumented build of the library under test, for any run of the suite.

A run is measured in three steps: the build's counters are reset (its ``.gcda`` files deleted), the run is made in a
child process (``python -m simdbind ...``: gcov writes the counters when a process exits, and the processes of a run
with workers merge theirs into the same files), and gcovr reads them (its JSON summary), once per ISA.

Which files count (:func:`unit_of`, the one place of the rule):

* upstream Simd keeps one file per ISA and algorithm, ``Simd<Isa><Component>.cpp``. A file counts when its component
  is one of :data:`UPSTREAM_COMPONENTS`: the files that define the in-scope API functions (``SimdLib.cpp`` dispatches
  to them) and the algorithm classes their contexts create. Headers do not count (their inline code is shared by
  every ISA's file that includes it). The ISA is the file name's.
* the bundled library compiles each kernel source once per ISA (``units/<stem>_<isa>.c``, CMakeLists.txt): every
  kernel unit counts, its lines being those of the ``csrc/`` files it compiles (the ``*.dispatch.c`` file and the
  headers it includes) at the unit's ISA; the sources compiled once (the exported functions and the runtime) count
  as ISA ``common``.

``--check-scope`` also lists the files outside the rule whose code the run executed, so that the rule can be checked
against what the functions really reach.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from simdbind.conformance import options
from simdbind.library import ISAS

FORMAT = "simdbind-coverage/1"
#: ISAs in display order (the bundled library's, then upstream's beyond them, lower case); "common": compiled once.
ISA_ORDER = ("common", *ISAS, "amxbf16")
#: Upstream's ISA file-name prefixes (namespaces), longest first where one is a prefix of another.
UPSTREAM_ISAS = ("Base", "Sse41", "Avx2", "Avx512bw", "Avx512vnni", "Avx512bf16", "Avx512fp16", "AmxBf16", "AmxInt8",
                 "Amx", "Neon", "Sve2", "Sve", "Hvx")
#: Upstream components behind the conformance functions: ``Synet`` (Eltwise, LRN, Shuffle, the inner-product layer,
#: the int8 inner product), the convolution, inner-product, pooling, softmax, unary and gather-elements files, and
#: the code they call: GEMM, Winograd, ``SynetActivation`` (the activations after a convolution), ``SynetAdd`` (its
#: bias), ``BFloat16`` (the conversions of the bf16 functions). ``Neural`` (the old Neural API, whose 2x2 and 3x3
#: max pooling PoolingMax32f calls) is left out: almost all of that file is other functions.
UPSTREAM_COMPONENTS = re.compile(
    r"Synet|SynetConvolution32f\w*|SynetInnerProduct(32f|8i)|SynetPooling\w*|SynetSoftmax(32f|16b)"
    r"|SynetUnaryOperation|SynetGatherElements|Gemm32f\w*|Winograd\d*|SynetActivation|SynetAdd|BFloat16")
_UPSTREAM_FILE = re.compile(r"Simd(?P<isa>" + "|".join(UPSTREAM_ISAS) + r")(?P<component>[A-Z]\w*)\.cpp")
#: A bundled kernel unit (CMakeLists.txt: units/<stem>_<isa>.c).
_BUNDLED_UNIT = re.compile(r"units/(?P<stem>\w+)_(?P<isa>" + "|".join(ISAS) + r")\.c")


class CoverageError(Exception):
    """A build without coverage data, a run that wrote none, or gcovr missing or failing."""


@dataclass(frozen=True)
class Unit:
    """An instrumented object file: its ISA, and whether its code counts."""

    isa: str
    in_scope: bool


def unit_of(kind: str, source: str) -> Unit | None:
    """The unit compiled from `source` (a path, as the build names it) in a build of `kind` ("upstream" or
    "bundled"); None when it is not code of the library (an upstream file outside the ISA naming, cffi's glue)."""
    name = source.replace("\\", "/")
    if kind == "upstream":
        match = _UPSTREAM_FILE.fullmatch(name.rsplit("/", 1)[-1])
        if match is None:
            return None
        return Unit(match["isa"].lower(), UPSTREAM_COMPONENTS.fullmatch(match["component"]) is not None)
    match = _BUNDLED_UNIT.search(name)
    if match is not None:
        return Unit(match["isa"], True)
    if "csrc/" in name and name.endswith(".c"):
        return Unit("common", True)
    return None


def isa_of(kind: str, source: str) -> str | None:
    """The ISA whose code `source` is (:func:`unit_of`)."""
    unit = unit_of(kind, source)
    return unit.isa if unit else None


def counts_in_report(kind: str, isa: str, filename: str) -> bool:
    """Whether gcovr's entry `filename` (relative to the root, from the objects of one ISA) is code of an in-scope
    unit of that ISA: upstream, the unit's own file (not a header); bundled, any file of ``csrc/`` the ISA's units
    compile (the kernel source, and the headers where most pooling and convolution kernels live)."""
    name = filename.replace("\\", "/")
    if kind == "upstream":
        unit = unit_of(kind, name)
        return unit is not None and unit.in_scope and unit.isa == isa
    return name.startswith("csrc/")


# -- results ------------------------------------------------------------------------------------------------------
@dataclass
class Counts:
    """gcovr's counts of lines and branches, twice: of each template instance (``lines_*``, ``branches_*``: gcov
    reports every instantiation of a C++ template on its own, so a line instantiated for 11 activations counts 11
    times) and of the source lines (``source_*``: instances merged, ``gcovr --merge-lines``; a line counts once, as
    covered when any instance ran it). The bundled library is C: the two differ only where a header's static
    functions are compiled into several units of one ISA."""

    lines_covered: int = 0
    lines_total: int = 0
    branches_covered: int = 0
    branches_total: int = 0
    source_lines_covered: int = 0
    source_lines_total: int = 0
    source_branches_covered: int = 0
    source_branches_total: int = 0

    def add(self, other: Counts) -> None:
        for name in COUNT_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def lines_percent(self) -> float:
        return 100.0 * self.lines_covered / self.lines_total if self.lines_total else 0.0

    @property
    def branches_percent(self) -> float:
        return 100.0 * self.branches_covered / self.branches_total if self.branches_total else 0.0


COUNT_FIELDS = ("lines_covered", "lines_total", "branches_covered", "branches_total", "source_lines_covered",
                "source_lines_total", "source_branches_covered", "source_branches_total")


@dataclass
class FileCoverage(Counts):
    file: str = ""
    isa: str = ""


@dataclass
class Coverage:
    """The coverage of one run: every in-scope file at every ISA, and what ran outside the rule."""

    kind: str  # "upstream" or "bundled"
    label: str = ""
    command: list[str] = field(default_factory=list)
    exit_code: int | None = None
    seconds: float = 0.0
    files: list[FileCoverage] = field(default_factory=list)
    outside: list[FileCoverage] = field(default_factory=list)  # executed, not in the rule (--check-scope)

    def by_isa(self) -> dict[str, Counts]:
        result: dict[str, Counts] = {}
        for item in self.files:
            result.setdefault(item.isa, Counts()).add(item)
        return dict(sorted(result.items(), key=lambda pair: _isa_rank(pair[0])))

    def total(self) -> Counts:
        total = Counts()
        for item in self.files:
            total.add(item)
        return total

    def to_json(self) -> dict[str, Any]:
        def counts(c: Counts) -> dict[str, Any]:
            return {"lines": [c.lines_covered, c.lines_total], "branches": [c.branches_covered, c.branches_total],
                    "lines_percent": round(c.lines_percent, 2), "branches_percent": round(c.branches_percent, 2),
                    "source_lines": [c.source_lines_covered, c.source_lines_total],
                    "source_branches": [c.source_branches_covered, c.source_branches_total]}

        return {"format": FORMAT, "kind": self.kind, "label": self.label, "command": self.command,
                "exit_code": self.exit_code, "seconds": round(self.seconds, 1), "rule": rule_text(self.kind),
                "total": counts(self.total()), "isas": {isa: counts(c) for isa, c in self.by_isa().items()},
                "files": [asdict(f) for f in self.files], "outside": [asdict(f) for f in self.outside]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Coverage:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CoverageError(f"not a coverage report (format {FORMAT!r} expected)")
        try:
            return cls(data["kind"], data.get("label", ""), list(data.get("command", [])), data.get("exit_code"),
                       float(data.get("seconds", 0.0)), [FileCoverage(**f) for f in data["files"]],
                       [FileCoverage(**f) for f in data.get("outside", [])])
        except (KeyError, TypeError, ValueError) as error:
            raise CoverageError(f"malformed coverage report: {error}") from None


def _isa_rank(isa: str) -> tuple[int, str]:
    return (ISA_ORDER.index(isa) if isa in ISA_ORDER else len(ISA_ORDER), isa)


def rule_text(kind: str) -> str:
    if kind == "upstream":
        return f"Simd<Isa><Component>.cpp with Component matching {UPSTREAM_COMPONENTS.pattern}"
    return "every csrc/ file compiled into a kernel unit units/<stem>_<isa>.c (per ISA) or compiled once (common)"


# -- the build ----------------------------------------------------------------------------------------------------
@dataclass
class Build:
    """A CMake build directory with gcov notes (.gcno): the library's, or upstream Simd's."""

    directory: Path
    kind: str
    root: Path  # gcovr's --root: holds the sources and the build

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> Build:
        path = Path(directory).resolve()
        cache = path / "CMakeCache.txt"
        if not cache.is_file():
            raise CoverageError(f"--build {directory}: no CMakeCache.txt there (not a CMake build directory)")
        values = dict(re.findall(r"^(CMAKE_PROJECT_NAME|CMAKE_HOME_DIRECTORY):\w+=(.*)$",
                                 cache.read_text(errors="replace"), re.MULTILINE))
        project, home = values.get("CMAKE_PROJECT_NAME", ""), Path(values.get("CMAKE_HOME_DIRECTORY", str(path)))
        if project == "Simd":
            kind, home = "upstream", home.parent.parent if home.parts[-2:] == ("prj", "cmake") else home
        elif project == "simdbind":
            kind = "bundled"
        else:
            raise CoverageError(f"--build {directory}: a build of {project or 'an unknown project'!r}, "
                                "not of Simd or simdbind")
        root = Path(os.path.commonpath([path, home]))
        if root == Path(root.anchor):
            raise CoverageError(f"--build {directory}: the build and its sources ({home}) share no directory "
                                "but the file system's root")
        build = cls(path, kind, root)
        if not build.notes():
            raise CoverageError(f"--build {directory}: no .gcno files (not built with --coverage)")
        return build

    def notes(self) -> list[Path]:
        return sorted(self.directory.rglob("*.gcno"))

    def reset(self) -> int:
        """Delete the counters; the number deleted."""
        counters = list(self.directory.rglob("*.gcda"))
        for path in counters:
            path.unlink()
        return len(counters)

    def counters(self) -> list[Path]:
        return list(self.directory.rglob("*.gcda"))

    def units(self) -> dict[Path, Unit]:
        """Each object's notes file and its unit (objects that are not code of the library left out)."""
        result = {}
        for note in self.notes():
            unit = unit_of(self.kind, str(note.relative_to(self.directory)).removesuffix(".gcno").removesuffix(".o"))
            if unit is not None:
                result[note] = unit
        return result


# -- gcovr --------------------------------------------------------------------------------------------------------
def gcovr_summary(root: Path, notes: Sequence[Path], gcov_executable: str | None = None, throw_branches: bool = False,
                  headers: bool = True, merge_lines: bool = False) -> list[dict[str, Any]]:
    """gcovr's JSON summary entries (filename relative to `root`, line_* and branch_* counts) of the objects whose
    notes files are `notes`; an object whose code never ran counts with zero executions. `merge_lines`: the
    instances of a template counted as their source lines."""
    if not notes:
        return []
    with tempfile.TemporaryDirectory(prefix="simdbind-gcovr-") as scratch:
        output = Path(scratch) / "summary.json"
        command = [sys.executable, "-m", "gcovr", "--root", str(root), "--json-summary", str(output),
                   "-j", str(max(1, os.cpu_count() or 1)),
                   # A hot loop of a long run executes billions of times: real counts, not gcov's bug 68080 that
                   # the check of gcovr (off: 0) looks for.
                   "--gcov-suspicious-hits-threshold", "0"]
        if gcov_executable:
            command += ["--gcov-executable", gcov_executable]
        if throw_branches:  # C++: the branches the compiler adds for exceptions are no code of the algorithm
            command.append("--exclude-throw-branches")
        if not headers:  # gcov's reports of the headers each object includes: most of gcovr's time, none counted
            command += ["--gcov-exclude", r".*\.h(pp)?##.*"]
        if merge_lines:
            command.append("--merge-lines")
        command += [str(path) for path in notes]
        # gcov writes its intermediate files into the working directory: a scratch one, removed afterwards.
        done = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        if done.returncode != 0 or not output.is_file():
            if "No module named gcovr" in done.stderr:
                raise CoverageError("gcovr is not installed (pip install gcovr)")
            raise CoverageError(f"gcovr failed (exit code {done.returncode}): {done.stderr.strip()[-2000:]}")
        entries: list[dict[str, Any]] = json.loads(output.read_text())["files"]
        return entries


def _file_coverage(entry: dict[str, Any], merged: dict[str, Any], isa: str) -> FileCoverage:
    """A file's counts from gcovr's summary entries: per instance (`entry`) and merged into source lines."""
    return FileCoverage(int(entry["line_covered"]), int(entry["line_total"]), int(entry["branch_covered"]),
                        int(entry["branch_total"]), int(merged["line_covered"]), int(merged["line_total"]),
                        int(merged["branch_covered"]), int(merged["branch_total"]),
                        str(entry["filename"]).replace("\\", "/"), isa)


def collect(build: Build, gcov_executable: str | None = None, check_scope: bool = False) -> Coverage:
    """The coverage the build's counters hold now (one gcovr run per ISA: the bundled library's kernel sources are
    compiled once per ISA, and each ISA's counts are its own)."""
    coverage = Coverage(build.kind)
    units = build.units()
    by_isa: dict[str, list[Path]] = {}
    for note, unit in units.items():
        if unit.in_scope:
            by_isa.setdefault(unit.isa, []).append(note)
    throw = build.kind == "upstream"
    headers = build.kind != "upstream"  # upstream's headers are not counted (counts_in_report)

    def summaries(notes: list[Path]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Each file's entry per instance and merged into source lines (two gcovr runs over the same counters)."""
        merged = {entry["filename"]: entry
                  for entry in gcovr_summary(build.root, notes, gcov_executable, throw, headers, merge_lines=True)}
        return [(entry, merged[entry["filename"]])
                for entry in gcovr_summary(build.root, notes, gcov_executable, throw, headers)]

    for isa in sorted(by_isa, key=_isa_rank):
        for entry, merged in summaries(by_isa[isa]):
            if counts_in_report(build.kind, isa, entry["filename"]):
                coverage.files.append(_file_coverage(entry, merged, isa))
    if check_scope:
        # Only objects whose counters exist can have run; a file outside the rule that ran is listed.
        outside = [note for note, unit in units.items()
                   if not unit.in_scope and note.with_suffix(".gcda").exists()]
        for entry, merged in summaries(outside):
            found = unit_of(build.kind, entry["filename"])
            if found is not None and not found.in_scope and int(entry["line_covered"]):
                coverage.outside.append(_file_coverage(entry, merged, found.isa))
    coverage.files.sort(key=lambda f: (_isa_rank(f.isa), f.file))
    coverage.outside.sort(key=lambda f: -f.lines_covered)
    return coverage


class _Terminated(Exception):
    pass


def _raise_terminated(signum: int, frame: Any) -> None:
    raise _Terminated()


def _run_whole_or_not_at_all(command: Sequence[str]) -> int:
    """Run the measured command in a process group of its own; if this process is stopped first (Ctrl-C, SIGTERM),
    kill that group at once. A run cut short, or its worker processes left behind, would otherwise go on and write
    counters into the build when they exit, into the next measurement's."""
    process = subprocess.Popen(command, start_new_session=True)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        return process.wait()
    except BaseException:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # SIGKILL: no exit handlers, so no counters written
        except ProcessLookupError:
            pass
        process.wait()
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def measure(build: Build, command: Sequence[str], label: str = "", gcov_executable: str | None = None,
            check_scope: bool = False) -> Coverage:
    """Reset the counters, run `command` in a child process (``python -m simdbind conformance ...``: a profile, an
    ``explore`` run, one ``--case``), and collect. The run's exit code is recorded (the failures a run finds do not
    stop the measurement)."""
    build.reset()
    start = time.perf_counter()
    code = _run_whole_or_not_at_all(command)
    seconds = time.perf_counter() - start
    if code < 0:
        raise CoverageError(f"the run was killed by signal {-code}: its counters are incomplete")
    if not build.counters():
        raise CoverageError(f"the run wrote no counters into {build.directory}: the library it loaded is not this "
                            "build's (pass it with --library, or run the installed copy of this build)")
    coverage = collect(build, gcov_executable, check_scope)
    coverage.label, coverage.command, coverage.exit_code, coverage.seconds = label, list(command), code, seconds
    return coverage


# -- reports ------------------------------------------------------------------------------------------------------
def _cell(covered: int, total: int) -> str:
    return f"{100.0 * covered / total:.1f}% ({covered}/{total})" if total else "-"


def _cells(c: Counts, separator: str) -> str:
    """Source lines, source branches, lines and branches of instances, joined by `separator`."""
    return separator.join(_cell(covered, total) for covered, total in (
        (c.source_lines_covered, c.source_lines_total), (c.source_branches_covered, c.source_branches_total),
        (c.lines_covered, c.lines_total), (c.branches_covered, c.branches_total)))


def markdown(runs: Iterable[Coverage]) -> str:
    """One table: a row per run and ISA (and the run's total), line and branch coverage."""
    lines = ["| run | ISA | files | source lines | source branches | lines (instances) | branches (instances) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for run in runs:
        label = run.label or " ".join(run.command)
        files: dict[str, int] = {}
        for item in run.files:
            files[item.isa] = files.get(item.isa, 0) + 1
        for isa, counts in [*run.by_isa().items(), ("all", run.total())]:
            count = len(run.files) if isa == "all" else files[isa]
            name = "**all**" if isa == "all" else isa
            lines.append(f"| {label} | {name} | {count} | {_cells(counts, ' | ')} |")
    return "\n".join(lines) + "\n"


def html_section(run: Coverage) -> str:
    """An HTML section (no page around it): the per-ISA totals, then every file."""
    e = html.escape
    rows = "".join(f"<tr><td>{e(isa)}</td><td>{_cells(c, '</td><td>')}</td></tr>"
                   for isa, c in [*run.by_isa().items(), ("all", run.total())])
    files = "".join(f"<tr><td>{e(f.isa)}</td><td><code>{e(f.file)}</code></td><td>{_cells(f, '</td><td>')}</td></tr>"
                    for f in run.files)
    heads = "<th>source lines</th><th>source branches</th><th>lines (instances)</th><th>branches (instances)</th>"
    outside = "".join(f"<li><code>{e(f.file)}</code>: {f.lines_covered} lines ran</li>" for f in run.outside)
    return (f'<section class="coverage"><h2>Coverage: {e(run.label or " ".join(run.command))} ({e(run.kind)})</h2>'
            f"<p>Rule: <code>{e(rule_text(run.kind))}</code></p>"
            f"<table><thead><tr><th>ISA</th>{heads}</tr></thead><tbody>{rows}</tbody>"
            f"</table><details><summary>{len(run.files)} files</summary><table><thead><tr><th>ISA</th><th>file</th>"
            f"{heads}</tr></thead><tbody>{files}</tbody></table></details>"
            + (f"<p>Ran outside the rule:</p><ul>{outside}</ul>" if outside else "") + "</section>")


def html_page(runs: Sequence[Coverage]) -> str:
    style = ("body{font:14px/1.45 system-ui,sans-serif;margin:24px}table{border-collapse:collapse;margin:6px 0}"
             "td,th{border:1px solid #d8dbe0;padding:3px 9px;text-align:left}code{font-size:12px}")
    body = "".join(html_section(run) for run in runs)
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>simdbind coverage</title>'
            f"<style>{style}</style></head><body><h1>simdbind: coverage of the implementation under test</h1>"
            f"{body}</body></html>\n")


# -- command line -------------------------------------------------------------------------------------------------
def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "coverage", help="line and branch coverage of a run, per file and ISA, on a --coverage build",
        description=__doc__.split("\n\n")[0],
        epilog="Example: simdbind conformance coverage --build BUILD --json ci.json -- --profile ci "
               "--library BUILD/libSimd.so; the words after -- are a 'simdbind conformance' command line "
               "(an 'explore ...' one too)")
    parser.add_argument("--build", default=None,
                        help="the instrumented CMake build directory (its .gcno files), or a cached upstream "
                             "coverage build's name (upstream@REF:coverage), whose library the run then loads")
    parser.add_argument("--label", default="", help="the run's name in the tables (default: its command line)")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the coverage as JSON")
    parser.add_argument("--md", default=None, metavar="FILE", help="write a Markdown table")
    parser.add_argument("--html", default=None, metavar="FILE",
                        help="write a one-file HTML page (a run given --report-html FILE also gets the tables as a "
                             "section of that report)")
    parser.add_argument("--from-json", action="append", default=None, metavar="FILE",
                        help="no run: read coverage JSON files (repeatable) and write their tables together")
    parser.add_argument("--gcov-executable", default=None, help="the gcov of the compiler that made the build")
    parser.add_argument("--check-scope", action="store_true",
                        help="also list files outside the rule whose code the run executed")
    parser.add_argument("run", nargs=argparse.REMAINDER,
                        help="-- then the conformance arguments (default: --profile smoke)")
    parser.set_defaults(handler=main)
    return parser


def main(args: argparse.Namespace) -> int:
    arguments = list(args.run)
    if arguments[:1] == ["--"]:
        arguments = arguments[1:]
    outputs = {flag: path for flag, path in (("--json", args.json), ("--md", args.md), ("--html", args.html)) if path}
    try:
        for flag, path in outputs.items():  # before the run, which can take long
            problem = options.check_writable(path, flag)
            if problem:
                raise CoverageError(problem)
        if args.from_json:
            if args.build or arguments:
                raise CoverageError("--from-json: reads reports; --build and a run cannot go with it")
            runs = [run for path in args.from_json for run in read_json(path)]
        else:
            if not args.build:
                raise CoverageError("--build: required (the instrumented build directory), or --from-json")
            build, library = open_build(args.build)
            if not shutil.which(args.gcov_executable.split()[0] if args.gcov_executable else "gcov"):
                raise CoverageError(f"--gcov-executable: {args.gcov_executable or 'gcov'} is not on PATH")
            arguments = arguments or ["--profile", "smoke"]
            if library is not None and not any(a == "--library" or a.startswith("--library=") for a in arguments):
                arguments = [*arguments, "--library", library]
            command = [sys.executable, "-m", "simdbind", "conformance", *arguments]
            runs = [measure(build, command, args.label, args.gcov_executable, args.check_scope)]
    except CoverageError as error:
        print(f"simdbind: conformance coverage: {error}", file=sys.stderr)
        return 2
    except _Terminated:
        print("simdbind: conformance coverage: terminated: the run was killed with its workers, no coverage written",
              file=sys.stderr)
        return 128 + signal.SIGTERM
    text = markdown(runs)
    print(text, end="")
    for run in runs:
        for item in run.outside:
            print(f"outside the rule, ran: {item.file} ({item.lines_covered} lines)")
    contents = {"--json": lambda: json.dumps(runs[0].to_json() if len(runs) == 1 else [r.to_json() for r in runs],
                                             indent=1) + "\n",
                "--md": lambda: text, "--html": lambda: html_page(runs)}
    status = 0
    if not args.from_json:
        try:
            add_to_report(runs[0], _option(arguments, "--report-html"))
        except CoverageError as error:  # the tables are still printed and written
            print(f"simdbind: conformance coverage: {error}", file=sys.stderr)
            status = 2
    for flag, path in outputs.items():
        try:
            options.write_text(path, contents[flag]())
        except OSError as error:  # the others are still written
            print(f"simdbind: conformance coverage: {flag} {path}: cannot be written ({error.strerror or error})",
                  file=sys.stderr)
            status = 2
    return status


def _option(arguments: Sequence[str], flag: str) -> str | None:
    """The value of `flag` in a command line (``--flag VALUE`` or ``--flag=VALUE``; the last one given)."""
    value = None
    for index, word in enumerate(arguments):
        if word == flag and index + 1 < len(arguments):
            value = arguments[index + 1]
        elif word.startswith(flag + "="):
            value = word.split("=", 1)[1]
    return value


def add_to_report(run: Coverage, report_html: str | None) -> None:
    """The coverage as a section of the run's HTML report (``--report-html FILE`` among the run's arguments)."""
    if not report_html or not Path(report_html).is_file():
        return
    from simdbind.conformance.report_html import with_sections

    try:
        page = with_sections(Path(report_html).read_text(encoding="utf-8"), [html_section(run)])
        options.write_text(report_html, page)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise CoverageError(f"--report-html {report_html}: the coverage section cannot be added ({error})") from None


def open_build(spec: str) -> tuple[Build, str | None]:
    """``--build``: a build directory, or the name of a cached upstream coverage build (``upstream@REF:coverage``),
    whose tree's library the run then loads unless it names another."""
    from simdbind.errors import LibraryError
    from simdbind.upstream import names

    if not names.is_name(spec):
        return Build.open(spec), None
    try:
        entry = names.entry_of(spec)
    except LibraryError as error:  # no such build: the message gives the command that makes it
        raise CoverageError(f"--build {error}") from None
    if entry.build_tree is None:
        raise CoverageError(f"--build {spec}: not a coverage build (make one with `simdbind upstream build "
                            f"--coverage`, named upstream@REF:coverage)")
    # The tree's own library, not the cache's copy of it: a rebuild in the tree (a mutant's, then the restore) makes
    # new notes whose stamps only the tree's relinked library writes counters for (gcov: "stamp mismatch").
    built = Path(entry.build_tree) / Path(entry.library).name
    return Build.open(entry.build_tree), str(built if built.is_file() else entry.library)


def read_json(path: str) -> list[Coverage]:
    """The runs of a file that ``--json`` wrote (one run, or a list of them)."""
    try:
        data = json.loads(Path(path).read_text())
        return [Coverage.from_json(item) for item in (data if isinstance(data, list) else [data])]
    except (OSError, ValueError, CoverageError) as error:
        raise CoverageError(f"--from-json {path}: {error}") from None
