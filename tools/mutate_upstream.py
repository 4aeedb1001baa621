#!/usr/bin/env python3
"""Measure the conformance suite's power on upstream Simd's own kernels: seeded single-token mutants of the source
files behind the suite's functions, on the lines the ``ci`` profile executes.

The mutants are those of ``tools/mutate.py`` (its tokenizer and operators read C++ as well), in the files the
coverage rule counts (:func:`simdbind.conformance.coverage.unit_of`: ``Simd<Isa><Component>.cpp``) at the ISAs
asked for, and only on lines that the ``ci`` profile of the file's functions executed on this build: a mutant on a
line no case reaches measures the profile's reach, which ``simdbind conformance coverage`` reports, not its
oracle. The executed lines come from gcovr's JSON report of a gcov build made by ``simdbind upstream build
--coverage`` (the tree it keeps), after one ``ci`` run.

Each mutant is compiled in that tree (Ninja recompiles the one unit and links; ccache does not cache these
compiles: it counts ``-fprofile-update=atomic`` as an unsupported option), then the ``ci`` profile of its file's functions (:data:`FUNCTIONS`) runs on the mutated library. A mutant is
killed when any case's status differs from the unmutated library's (a failure, an error, a catalogued deviation
that no longer shows, a crash or a timeout); it survives when every status is the same; one that does not compile
is discarded. The source is restored after each mutant, and the library rebuilt at the end.

    python tools/mutate_upstream.py --build upstream@v7.1.162:coverage --isa avx512bw --count 30 --json out.json
    python tools/mutate_upstream.py --build upstream@v7.1.162:coverage --isa avx512bw --count 30 --list
"""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutate import Mutation, mutated, mutations, read_source  # noqa: E402  (the tool beside this one)

from simdbind.conformance import coverage  # noqa: E402
from simdbind.upstream.build import library_file  # noqa: E402

#: Upstream components (the file name after ``Simd<Isa>``) -> the suite's functions whose ci cases reach them; the
#: first pattern that matches wins. GEMM and the activations serve the convolution and the float inner products.
FUNCTIONS: list[tuple[str, list[str]]] = [
    (r"SynetConvolution32f\w*|Winograd\d*", ["convolution32f"]),
    (r"Gemm32f\w*|SynetActivation|SynetAdd", ["convolution32f", "inner_product_32f", "inner_product_layer"]),
    (r"SynetInnerProduct32f\w*", ["inner_product_32f"]),
    (r"SynetInnerProduct8i", ["inner_product_8i"]),
    (r"SynetPooling\w*", ["pooling_average", "pooling_max32f", "pooling_max16b", "pooling_max8u"]),
    (r"SynetSoftmax32f", ["softmax"]),
    (r"SynetSoftmax16b", ["softmax16b"]),
    (r"SynetUnaryOperation", ["unary"]),
    (r"SynetGatherElements", ["gather_elements"]),
    (r"Synet", ["eltwise", "lrn", "shuffle", "inner_product_layer"]),
    (r"BFloat16", ["softmax16b", "pooling_max16b"]),
]


def functions_of(path: str) -> list[str]:
    component = Path(path).name
    for isa in coverage.UPSTREAM_ISAS:
        if component.startswith("Simd" + isa):
            component = component[len("Simd" + isa):].removesuffix(".cpp")
            break
    for pattern, names in FUNCTIONS:
        if re.fullmatch(pattern, component):
            return names
    raise KeyError(f"{path}: no functions known for component {component}")


@dataclass
class Tree:
    """A kept upstream build tree: the CMake build directory and the source it compiled."""

    build: Path
    library: Path
    source: Path

    @classmethod
    def open(cls, spec: str) -> "Tree":
        built, _ = coverage.open_build(spec)
        if built.kind != "upstream":
            raise SystemExit(f"--build {spec}: not a build of upstream Simd")
        home = re.search(r"^CMAKE_HOME_DIRECTORY:\w+=(.*)$", (built.directory / "CMakeCache.txt").read_text(),
                         re.MULTILINE)
        assert home is not None  # Build.open read it
        return cls(built.directory, library_file(built.directory), Path(home[1]).parent.parent)  # home: prj/cmake

    def simd_file(self, name: str) -> Path:
        return self.source / "src" / "Simd" / name


def conformance(library: Path, functions: list[str], report: Path, timeout: float) -> dict[str, str] | str:
    """{descriptor: status} of the ci profile of `functions` on `library`, or a string saying how the run died."""
    command = [sys.executable, "-m", "simdbind", "conformance", "--library", str(library), "--profile", "ci",
               "--no-progress", "--report-json", str(report), "--junit-xml", "", "--report-md", "",
               "--report-html", "", *[arg for name in functions for arg in ("--function", name)]]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout: no result after {timeout:.0f} s"
    if done.returncode not in (0, 1) or not report.is_file():
        return f"crash: exit {done.returncode}: {(done.stderr.strip().splitlines() or ['(no output)'])[-1]}"
    return {r["descriptor"]: r["status"] for r in json.loads(report.read_text())["results"]}


def executed_lines(tree: Tree, files: list[str], gcov: str | None) -> dict[str, set[int]]:
    """Per file name, the lines with a nonzero count in the tree's counters (gcovr's JSON report)."""
    by_name = {Path(f).name: f for f in files}
    notes = [note for note, unit in coverage.Build.open(tree.build).units().items()
             if Path(str(note).removesuffix(".gcno").removesuffix(".o")).name in by_name]
    with tempfile.TemporaryDirectory(prefix="simdbind-mutate-") as scratch:
        output = Path(scratch) / "lines.json"
        command = [sys.executable, "-m", "gcovr", "--root", str(coverage.Build.open(tree.build).root), "--json",
                   str(output), "--gcov-suspicious-hits-threshold", "0", "--gcov-exclude", r".*\.h(pp)?##.*",
                   *(["--gcov-executable", gcov] if gcov else []), *map(str, notes)]
        subprocess.run(command, cwd=scratch, check=True, capture_output=True)
        data = json.loads(output.read_text())
    lines: dict[str, set[int]] = {}
    for entry in data["files"]:
        name = Path(entry["file"]).name
        if name in by_name:
            lines[name] = {int(line["line_number"]) for line in entry["lines"] if int(line.get("count", 0)) > 0}
    return lines


@dataclass
class Outcome:
    label: str
    functions: list[str]
    result: str  # killed, survived, discarded
    how: str = ""  # changed statuses, crash, timeout
    detail: str = ""
    build_seconds: float = 0.0
    run_seconds: float = 0.0


def ninja(tree: Tree, log: Path) -> bool:
    with open(log, "w") as out:
        return subprocess.run(["cmake", "--build", str(tree.build)], stdout=out, stderr=subprocess.STDOUT).returncode == 0


def run_mutants(tree: Tree, mutants: list[Mutation], baseline: dict[str, str], work: Path, timeout: float,
                outcomes: list[Outcome]) -> None:
    """Build and run each mutant in turn, appending its outcome (the source restored after each)."""
    for number, mutation in enumerate(mutants, 1):
        names = functions_of(mutation.path)
        outcome = Outcome(mutation.label, names, "discarded")
        with mutated(tree.simd_file(mutation.path), mutation):
            start = time.perf_counter()
            built = ninja(tree, work / f"mutant{number}.log")
            outcome.build_seconds = time.perf_counter() - start
            if not built:
                outcome.detail = "does not compile"
            else:
                start = time.perf_counter()
                statuses = conformance(tree.build / "libSimd.so", names, work / f"mutant{number}.json", timeout)
                outcome.run_seconds = time.perf_counter() - start
                if isinstance(statuses, str):
                    outcome.result, outcome.how, outcome.detail = "killed", statuses.split(":")[0], statuses
                else:
                    if statuses.keys() != {d for d in baseline if d.split(" ", 1)[0] in names}:
                        # The suite's cases changed under the run: a new case is no kill.
                        raise SystemExit(f"the ci cases of {', '.join(names)} differ from the baseline run's: the "
                                         "suite changed during the run; start it again")
                    changed = [(d, baseline.get(d), s) for d, s in statuses.items() if baseline.get(d) != s]
                    if changed:
                        d, before, after = changed[0]
                        outcome.result, outcome.how = "killed", "statuses"
                        outcome.detail = f"{len(changed)} cases changed; first: {d}: {before} -> {after}"
                    else:
                        outcome.result, outcome.detail = "survived", f"{len(statuses)} cases as before"
        outcomes.append(outcome)
        print(f"[{number}/{len(mutants)}] {outcome.label}: {outcome.result} {outcome.how} (build "
              f"{outcome.build_seconds:.0f} s, run {outcome.run_seconds:.0f} s) {outcome.detail}", flush=True)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="upstream@REF:coverage, or a kept gcov build directory")
    parser.add_argument("--isa", action="append", required=True, help="ISA whose files are mutated (repeatable)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--gcov-executable", default=None)
    parser.add_argument("--list", action="store_true", help="print the mutants and exit (after the ci run)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    # SIGTERM as Ctrl-C: the mutated source is restored on the way out (a background job started from a script
    # ignores SIGINT, so SIGTERM is how it is stopped).
    signal.signal(signal.SIGTERM, _interrupt)
    tree = Tree.open(args.build)
    files = sorted(path.name for path in (tree.source / "src" / "Simd").glob("Simd*.cpp")
                   if (unit := coverage.unit_of("upstream", path.name)) and unit.in_scope and unit.isa in args.isa)
    functions = sorted({name for f in files for name in functions_of(f)})
    work = Path(tempfile.mkdtemp(prefix="simdbind-mutate-upstream-"))
    print(f"{len(files)} files at {', '.join(args.isa)}; baseline ci run of {len(functions)} functions", flush=True)
    coverage.Build.open(tree.build).reset()
    baseline = conformance(tree.library, functions, work / "baseline.json", args.timeout)
    if isinstance(baseline, str):
        raise SystemExit(f"the unmutated library: {baseline}")
    executed = executed_lines(tree, files, args.gcov_executable)
    candidates: list[Mutation] = []
    for name in files:
        path = tree.simd_file(name)
        reached = executed.get(name, set())
        candidates += [m for m in mutations(name, read_source(path)) if m.line in reached]
    picked = sorted(random.Random(args.seed).sample(range(len(candidates)), min(args.count, len(candidates))))
    mutants = [candidates[i] for i in picked]
    print(f"{len(candidates)} mutants on executed lines; {len(mutants)} picked (seed {args.seed})", flush=True)
    if args.list:
        for m in mutants:
            print(f"{m.label}  [{', '.join(functions_of(m.path))}]")
        return 0
    outcomes: list[Outcome] = []
    try:
        run_mutants(tree, mutants, baseline, work, args.timeout, outcomes)
    finally:  # the sources are restored by then: the library is rebuilt from them, whatever stopped the run
        ninja(tree, work / "restored.log")
    killed = sum(o.result == "killed" for o in outcomes)
    survived = sum(o.result == "survived" for o in outcomes)
    total = killed + survived
    print(f"score: {killed}/{total} killed" + (f" ({killed / total:.0%})" if total else "")
          + f"; {len(outcomes) - total} discarded; logs in {work}")
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
