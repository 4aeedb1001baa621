#!/usr/bin/env python3
"""Measure the conformance suite's power by mutation: seeded single-token mutants of the bundled C kernels.

Each mutant changes one token of one kernel source (csrc/<dir>/*.[ch]): a comparison flipped (`<` -> `<=`, ...), a loop
bound off by one (`n` -> `(n - 1)` / `(n + 1)` on the right of a `for` condition's comparison), a binary sign
swapped (`+` <-> `-`), an integer or float constant changed (value + 1), or `&&` <-> `||`. Comments, string and
character literals and preprocessor lines are never touched. The candidates are enumerated in a fixed order and
`--seed` picks `--count` of them, so one seed always names the same mutants.

Every mutant is built the project's own way in a scratch copy of HEAD (`build_library`) and the `ci` profile of the
functions its source implements (`FUNCTIONS`) is run on the bundled library at every ISA. The mutant is killed when
a case fails or errors, the run crashes or times out; it survives when every case passes; a mutant that does not
compile is discarded. Runs on the bundled library, so no deviation catalogue entry applies (they all target
external libraries).

    python tools/mutate.py --list --seed 1 --count 20         # the mutants, without building
    python tools/mutate.py --seed 1 --count 20 --json out.json # build and run them (needs ccache for speed)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import site
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent

# Kernel source (a file, or a directory for all its files; the longest match wins) -> the functions it implements.
FUNCTIONS = {
    "csrc/elementwise": ["eltwise", "unary", "softmax", "softmax16b", "lrn", "shuffle"],
    "csrc/elementwise/eltwise.dispatch.c": ["eltwise"],
    "csrc/elementwise/unary.dispatch.c": ["unary"],
    "csrc/elementwise/softmax.dispatch.c": ["softmax", "softmax16b"],
    "csrc/elementwise/lrn.dispatch.c": ["lrn"],
    "csrc/elementwise/shuffle.dispatch.c": ["shuffle"],
    "csrc/pooling": ["pooling_average", "pooling_max32f", "pooling_max16b", "pooling_max8u"],
    "csrc/pooling/average.dispatch.c": ["pooling_average"],
    "csrc/pooling/max32f.dispatch.c": ["pooling_max32f"],
    "csrc/pooling/max16b.dispatch.c": ["pooling_max16b"],
    "csrc/pooling/max8u.dispatch.c": ["pooling_max8u"],
    "csrc/gather": ["gather_elements"],
    "csrc/inner_product": ["inner_product_32f", "inner_product_layer", "inner_product_8i"],
    "csrc/inner_product/inner_product_8i.dispatch.c": ["inner_product_8i"],
    "csrc/convolution": ["convolution32f"],
    "csrc/gemm": ["convolution32f", "inner_product_32f", "inner_product_layer"],
}

# C tokens, longest first; comments and literals are matched so they can be skipped whole.
TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>0[xX][0-9a-fA-F]+[uUlL]*|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!~<>=]=?|[?:;,.(){}\[\]])
  | (?P<space>\s+)
  | (?P<other>.)
""", re.X | re.S)

COMPARISON = {"<": "<=", ">": ">=", "<=": "<", ">=": ">"}
LOGIC = {"&&": "||", "||": "&&"}
SIGN = {"+": "-", "-": "+"}
OPERAND_END = {"name", "number"}  # a +/- after these (or after ")" / "]") is binary
KEYWORDS_BEFORE_UNARY = {"return", "case", "sizeof"}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    offset: int


@dataclass(frozen=True)
class Mutation:
    path: str      # relative to the repository root
    line: int
    column: int
    offset: int    # of the token in the file's text
    original: str
    replacement: str
    operator: str  # comparison, bound, sign, constant, logic

    @property
    def label(self) -> str:
        return f"{self.path}:{self.line}:{self.column} {self.operator}: {self.original} -> {self.replacement}"

    def apply(self, text: str) -> str:
        if text[self.offset:self.offset + len(self.original)] != self.original:
            raise ValueError(f"{self.label}: the source does not have {self.original!r} there")
        return text[:self.offset] + self.replacement + text[self.offset + len(self.original):]


def read_source(path: Path) -> str:
    """The file's text exactly as stored: CRLF line ends kept (upstream's sources have them) and any byte that is
    not UTF-8 carried through, so that offsets and the text written back match the file byte for byte."""
    return path.read_bytes().decode("utf-8", "surrogateescape")


@contextlib.contextmanager
def mutated(path: Path, mutation: Mutation) -> Iterator[None]:
    """The source with `mutation` in place, then restored byte for byte: a restored file that differed (line ends
    normalised, say) would recompile into objects, and coverage notes, that no longer match the built library's."""
    original = path.read_bytes()
    path.write_bytes(mutation.apply(original.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"))
    try:
        yield
    finally:
        path.write_bytes(original)


def tokens(text: str) -> list[Token]:
    """The code tokens of a C source: no comments, literals strings, whitespace or preprocessor lines."""
    result: list[Token] = []
    line_start = True  # only whitespace since the last newline (a "#" here starts a directive)
    position = 0
    while position < len(text):
        if line_start and text[position] == "#":
            position = _directive_end(text, position)
            continue
        match = TOKEN.match(text, position)
        assert match is not None and match.lastgroup is not None
        kind, value = match.lastgroup, match.group()
        if kind == "space":
            if "\n" in value:
                line_start = True
        else:
            line_start = False
            if kind not in ("comment", "string"):
                result.append(Token(kind, value, position))
        position = match.end()
    return result


def _directive_end(text: str, position: int) -> int:
    """Offset of the newline that ends the directive starting at `position` (backslash continuations included)."""
    while True:
        end = text.find("\n", position)
        if end < 0:
            return len(text)
        if not text[:end].rstrip("\r").endswith("\\"):
            return end
        position = end + 1


def _constant(text: str) -> str | None:
    """The literal `text` with its value plus one, suffix and base kept; None for forms not handled."""
    match = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)", text)
    if match:
        digits, suffix = match.groups()
        if digits[:2].lower() == "0x":
            return f"0x{int(digits, 16) + 1:X}{suffix}"
        if len(digits) > 1 and digits.startswith("0"):
            return None  # octal
        return f"{int(digits) + 1}{suffix}"
    match = re.fullmatch(r"([\d.]+(?:[eE][+-]?\d+)?)([fFlL]?)", text)
    if match:
        value, suffix = match.groups()
        return f"{float(value) + 1!r}{suffix}"
    return None


def _for_conditions(code: list[Token]) -> set[int]:
    """Indexes of the tokens in the condition (between the two top-level ";") of every `for (...)`."""
    inside: set[int] = set()
    for index, token in enumerate(code):
        if token.text != "for" or index + 1 >= len(code) or code[index + 1].text != "(":
            continue
        depth, semicolons = 0, 0
        for inner in range(index + 1, len(code)):
            text = code[inner].text
            depth += text in "([{"
            depth -= text in ")]}"
            if depth == 0:
                break
            if depth == 1 and text == ";":
                semicolons += 1
            elif semicolons == 1:
                inside.add(inner)
    return inside


def mutations(path: str, text: str) -> list[Mutation]:
    """Every candidate mutation of one source, in file order."""
    code = tokens(text)
    conditions = _for_conditions(code)
    found: list[Mutation] = []

    def add(token: Token, replacement: str, operator: str) -> None:
        line_start = text.rfind("\n", 0, token.offset) + 1
        found.append(Mutation(path, text.count("\n", 0, token.offset) + 1, token.offset - line_start + 1,
                              token.offset, token.text, replacement, operator))

    for index, token in enumerate(code):
        previous = code[index - 1] if index else None
        if token.text in COMPARISON:
            add(token, COMPARISON[token.text], "comparison")
            following = code[index + 1] if index + 1 < len(code) else None
            if index in conditions and following is not None and following.kind in OPERAND_END:
                add(following, f"({following.text} - 1)", "bound")
                add(following, f"({following.text} + 1)", "bound")
        elif token.text in LOGIC:
            add(token, LOGIC[token.text], "logic")
        elif token.text in SIGN and previous is not None and previous.text not in KEYWORDS_BEFORE_UNARY and (
                previous.kind in OPERAND_END or previous.text in (")", "]")):
            add(token, SIGN[token.text], "sign")
        elif token.kind == "number":
            changed = _constant(token.text)
            if changed is not None:
                add(token, changed, "constant")
    return found


def kernel_sources(root: Path = ROOT) -> list[Path]:
    """The kernel sources mutated: every .c and .h file under a directory that FUNCTIONS maps (the pooling and
    convolution kernels live mostly in their directory's headers; csrc/internal is shared by all and left out)."""
    directories = sorted({key for key in FUNCTIONS if not key.endswith(".c")})
    return sorted(p for d in directories for p in (root / d).rglob("*.[ch]"))


def functions_of(path: str) -> list[str]:
    key = max((k for k in FUNCTIONS if path == k or path.startswith(k + "/")), key=len)
    return FUNCTIONS[key]


def choose(seed: int, count: int, root: Path = ROOT) -> list[Mutation]:
    """`count` mutations picked by `seed` among every candidate of every kernel source (in file order)."""
    candidates = [m for p in kernel_sources(root)
                  for m in mutations(p.relative_to(root).as_posix(), read_source(p))]
    picked = random.Random(seed).sample(range(len(candidates)), min(count, len(candidates)))
    return [candidates[i] for i in sorted(picked)]


# --- building and running -------------------------------------------------------------------------------------

def build_library(workdir: Path, log: Path) -> bool:
    """Build the bundled library in `workdir` the project's way (CMakeLists.txt) and install its modules into
    `workdir`/simdbind, where the run imports them. The one place that knows how the project builds; True if it
    compiled. One build directory serves every mutant of the scratch copy, so Ninja recompiles only the units that
    include the mutated file (the mutation is reverted in place after each run)."""
    build = workdir / "build" / "mutate"
    configure = ["cmake", "-S", str(workdir), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DPython_EXECUTABLE={sys.executable}"]
    if shutil.which("ccache"):
        configure.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
    if os.environ.get("SIMDBIND_C_FLAGS"):  # e.g. -O1: quicker builds on a busy machine
        configure.append(f"-DSIMDBIND_C_FLAGS={os.environ['SIMDBIND_C_FLAGS']}")
    steps = [configure, ["cmake", "--build", str(build)], ["cmake", "--install", str(build), "--prefix", str(workdir)]]
    with open(log, "w") as out:
        for step in steps:
            if subprocess.run(step, cwd=workdir, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
                return False
    return True


@dataclass
class Outcome:
    mutation: Mutation
    result: str          # killed, survived, discarded (did not compile)
    how: str = ""        # fail, error, crash, timeout
    detail: str = ""     # the first failing case, or the run's last line
    build_seconds: float = 0.0
    run_seconds: float = 0.0


def run_suite(workdir: Path, functions: list[str], timeout: float, report: Path) -> tuple[str, str, str]:
    """(result, how, detail) of the ci profile of `functions` on the bundled library built in `workdir`."""
    command = [sys.executable, "-S", "-m", "simdbind", "conformance", "--profile", "ci", "--no-progress",
               "--report-json", str(report), "--junit-xml", "", "--report-md", "", "--report-html", ""]
    for name in functions:
        command += ["--function", name]
    # -S skips the site module, and so the .pth hooks of an editable install of simdbind, which would import the
    # repository's own package before PYTHONPATH's; the site directories are put back by hand, after the mutant.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(workdir), *site.getsitepackages()]))
    env.pop("SIMD_LIBRARY", None)  # the bundled library only
    try:
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "killed", "timeout", f"no result after {timeout:.0f} s"
    if done.returncode < 0 or not report.exists():
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return "killed", "crash", f"exit {done.returncode}: {last}"
    data = json.loads(report.read_text())
    paths = {lib["path"] for lib in data["meta"]["environment"]["libraries"]}
    if not all(Path(p).is_relative_to(workdir) for p in paths):
        raise RuntimeError(f"the run loaded {paths}, not the mutant in {workdir}")
    bad = [r for r in data["results"] if r["status"] in ("fail", "error", "known", "xpass")]
    if bad:
        first = bad[0]
        return "killed", first["status"], (f"{len(bad)} of {len(data['results'])} cases; first: "
                                            f"{first['implementation']} {first['descriptor']}: {first['detail'][:160]}")
    return "survived", "", f"{data['summary']['pass']} cases pass"


def scratch_copy(workdir: Path) -> None:
    """HEAD of the repository (committed files only) extracted into `workdir`."""
    workdir.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(workdir)], input=archive, check=True)


def run(mutants: list[Mutation], workdir: Path, timeout: float, echo=print) -> list[Outcome]:
    scratch_copy(workdir)
    logs = workdir / "mutate-logs"
    logs.mkdir(exist_ok=True)
    start = time.perf_counter()
    if not build_library(workdir, logs / "original.log"):
        raise RuntimeError(f"the unmutated copy does not build: see {logs / 'original.log'}")
    echo(f"original built in {time.perf_counter() - start:.0f} s")
    outcomes = []
    for number, mutation in enumerate(mutants, 1):
        outcome = Outcome(mutation, "discarded")
        with mutated(workdir / mutation.path, mutation):
            start = time.perf_counter()
            built = build_library(workdir, logs / f"mutant{number}.log")
            outcome.build_seconds = time.perf_counter() - start
            if built:
                start = time.perf_counter()
                report = logs / f"mutant{number}.json"
                report.unlink(missing_ok=True)
                outcome.result, outcome.how, outcome.detail = run_suite(
                    workdir, functions_of(mutation.path), timeout, report)
                outcome.run_seconds = time.perf_counter() - start
            else:
                outcome.detail = "does not compile"
        outcomes.append(outcome)
        echo(f"[{number}/{len(mutants)}] {mutation.label}: {outcome.result} {outcome.how} "
             f"(build {outcome.build_seconds:.0f} s, run {outcome.run_seconds:.0f} s) {outcome.detail}")
    return outcomes


def score(outcomes: list[Outcome]) -> tuple[int, int]:
    killed = sum(o.result == "killed" for o in outcomes)
    survived = sum(o.result == "survived" for o in outcomes)
    return killed, survived


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="picks the mutants (default: 1)")
    parser.add_argument("--count", type=int, default=20, help="how many mutants (default: 20)")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument("--workdir", type=Path, help="scratch copy to build in (default: a new temporary dir)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mutant run (default: 600)")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    args = parser.parse_args(argv)
    mutants = choose(args.seed, args.count)
    if args.list:
        for mutation in mutants:
            print(f"{mutation.label}  [{', '.join(functions_of(mutation.path))}]")
        return 0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="simdbind-mutate-"))
    outcomes = run(mutants, workdir, args.timeout, echo=lambda line: print(line, flush=True))
    killed, survived = score(outcomes)
    total = killed + survived
    print(f"score: {killed}/{total} killed" + (f" ({killed / total:.0%})" if total else "")
          + f"; {len(outcomes) - total} discarded")
    if args.json:
        args.json.write_text(json.dumps([dict(asdict(o), label=o.mutation.label) for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
