"""The options of a conformance run, defined once: ``simdbind conformance`` builds its arguments from
:data:`OPTIONS` (``--profile``) and the pytest plugin its options (``--simd-profile``).

Importing this module imports nothing heavy: the pytest plugin reads it in every run of every project.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

PROFILES = ("smoke", "ci", "full")
#: The prefix of every option in pytest, where unprefixed names clash with other plugins'.
PYTEST_PREFIX = "--simd-"


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


#: The largest seed: seeds are integers 0 <= seed <= MAX_SEED, the range a report's integers have (schema.py), so
#: that every seed a command takes is one its reports, `diff` and `merge` take back, and every repro line it prints
#: is accepted by `simdbind conformance --seed`.
MAX_SEED = 2 ** 63 - 1


def seed(text: str) -> int:
    """argparse type: a seed, an integer 0 <= seed <= MAX_SEED."""
    rule = f"must be an integer from 0 to {MAX_SEED} (2**63-1)"
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{rule}, got {text[:40]!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{rule}, got {text[:40]!r}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 (NaN and infinity refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


class Shard(NamedTuple):
    """Part `number` (from 1) of `total` parts of a run's plan; written K/N."""

    number: int
    total: int

    def __str__(self) -> str:
        return f"{self.number}/{self.total}"


def shard(text: str) -> Shard:
    """argparse type: K/N with 1 <= K <= N."""
    index, slash, count = text.partition("/")
    try:
        value = Shard(int(index), int(count))
    except ValueError:
        value = None
    if not slash or value is None or not 1 <= value.number <= value.total:
        raise argparse.ArgumentTypeError(f"must be K/N with 1 <= K <= N (e.g. 2/3), got {text!r}")
    return value


@dataclass(frozen=True)
class Option:
    """One option: ``--NAME`` on the command line, ``--simd-NAME`` in pytest (where `pytest` is true)."""

    name: str
    help: str
    action: str = "store"  # "store", "append" or "store_true"
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    default: Any = None  # pytest's default (or a function giving it), and the command line's unless `cli_default`
    cli_default: Any = ...
    short: str | None = None  # the command line's short spelling
    pytest: bool = True
    cli: bool = True
    report: bool = False  # a path a report is written to: checked before the run

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def pytest_dest(self) -> str:
        return "simd_" + self.dest

    @property
    def cli_value_default(self) -> Any:
        return self.default if self.cli_default is ... else self.cli_default

    @property
    def cli_flags(self) -> list[str]:
        return ([self.short] if self.short else []) + [f"--{self.name}"]

    @property
    def pytest_flag(self) -> str:
        return PYTEST_PREFIX + self.name

    def _arguments(self, default: Any) -> dict[str, Any]:
        arguments: dict[str, Any] = {"action": self.action, "default": default, "help": self.help}
        if self.action != "store_true":
            arguments.update(type=self.type, choices=self.choices, metavar=self.metavar)
        return {key: value for key, value in arguments.items() if value is not None or key == "default"}


def _profile_default() -> str:
    return os.environ.get("SIMDBIND_PROFILE", "ci")


OPTIONS: tuple[Option, ...] = (
    Option("library", "'bundled' or a libSimd path; repeatable (default: bundled, plus $SIMD_LIBRARY, unless only "
           "implementations are given)", action="append", metavar="LIBRARY"),
    Option("isa", "ISA of the bundled library: a name, a comma-separated list or 'all'", default="all"),
    Option("mode", "load the bundled library in this mode", choices=("api", "abi")),
    Option("impl", "also check this implementation: an installed name (torch, onnxruntime, ...) or "
           "package.module:object; repeatable", action="append", metavar="NAME|MODULE:OBJECT"),
    Option("profile", "case profile (in pytest, $SIMDBIND_PROFILE or ci by default)", choices=PROFILES,
           default=_profile_default, cli_default="smoke"),
    Option("function", "only this function; repeatable", action="append", metavar="FUNCTION", pytest=False),
    Option("case-filter", "only cases whose 'function dtype layout descriptor' matches the glob *PATTERN* "
           "(repeatable: all must match)", action="append", metavar="PATTERN", short="-k"),
    Option("case", "only the case with exactly this descriptor, whatever the profile (a repro)",
           metavar="DESCRIPTOR"),
    Option("seed", "base seed of the case inputs", type=seed, metavar="N"),
    Option("shard", "run only part K of N of the selected cases (1 <= K <= N): the N parts split any selection "
           "exactly, for a CI matrix whose JSON reports `simdbind conformance merge` joins", type=shard,
           metavar="K/N"),
    Option("workers", "worker processes, or 'auto' (default 1: in this process; at most the CPUs available); "
           "results do not depend on it", default="1", metavar="N", short="-n", pytest=False),
    Option("list", "list the selected cases and exit", action="store_true", default=False, pytest=False),
    Option("no-progress", "no progress display", action="store_true", default=False, pytest=False),
    Option("report-json", "write the JSON report to FILE", metavar="FILE", report=True),
    Option("junit-xml", "write the JUnit XML report to FILE (in pytest: --junitxml)", metavar="FILE", pytest=False,
           report=True),
    Option("report-md", "write the Markdown summary for a CI page to FILE", metavar="FILE", report=True),
    Option("report-html", "write the self-contained HTML matrix to FILE", metavar="FILE", report=True),
    Option("reports", "write the four reports as DIR/conformance.{json,xml,md,html}; refused when DIR holds one "
           "already", metavar="DIR", pytest=False),
    Option("no-reports", "write no report", action="store_true", default=False, pytest=False),
)


#: The file name of each report in a folder of reports (``--reports DIR``, or a run's own folder).
REPORT_FILES = {"report-json": "conformance.json", "junit-xml": "conformance.xml", "report-md": "conformance.md",
                "report-html": "conformance.html"}
#: A run told nowhere writes its reports in a new folder of its own under this one, named by its UTC start time and
#: a random id (:func:`run_folder`): it never writes over the reports of an earlier run.
RUNS_FOLDER = "reports"
#: Where the reports of a conformance run go, and its exit codes: its --help prints this; docs/commands.md says more.
REPORT_RULE = (
    "Reports: --report-json/--junit-xml/--report-md/--report-html FILE write exactly those files; --reports DIR "
    "writes all four into DIR (refused when DIR holds one already); with neither, a run writes all four into a new "
    f"folder of its own, {RUNS_FOLDER}/<UTC time>-<id>/, so no run writes over another's reports; --no-reports "
    "writes none. Exit codes: 0 all passed, 1 a case failed, 2 a usage error or a report that could not be "
    "written, 130 interrupted (the reports of what ran are written and marked interrupted).")


def run_folder(now: Any = None) -> str:
    """A new run's own report folder: ``reports/<UTC time>-<6 hex digits>`` (not created here)."""
    import datetime
    import secrets

    now = now or datetime.datetime.now(datetime.timezone.utc)
    return os.path.join(RUNS_FOLDER, f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}")


def report_paths(args: argparse.Namespace) -> tuple[dict[str, str], str | None]:
    """({report option name: path}, the run's own folder or None) by the rule of :data:`REPORT_RULE`. Raises
    ValueError (one line naming the option) for contradictory options or a --reports folder that holds a report."""
    named = {o.name: value for o in OPTIONS if o.report and o.cli and (value := getattr(args, o.dest, None))}
    folder = getattr(args, "reports", None)
    if getattr(args, "no_reports", False):
        if named or folder:
            given = next(f"--{name}" for name in named) if named else "--reports"
            raise ValueError(f"--no-reports: cannot be combined with {given}")
        return {}, None
    if folder:
        kept = [name for name in REPORT_FILES.values() if os.path.lexists(os.path.join(folder, name))]
        if kept:
            raise ValueError(f"--reports {folder}: already holds {kept[0]}; a run never writes over earlier "
                             "reports: name a new folder, or remove them")
        return {name: os.path.join(folder, file) for name, file in REPORT_FILES.items()} | named, None
    if named:
        return named, None
    own = run_folder()
    return {name: os.path.join(own, file) for name, file in REPORT_FILES.items()}, own


def add_cli_arguments(parser: argparse.ArgumentParser, names: Sequence[str] | None = None) -> None:
    """The command-line arguments of every option (or of those `names`: another subcommand that selects
    implementations the same way)."""
    for option in OPTIONS:
        if option.cli and (names is None or option.name in names):
            default = option.cli_value_default
            help_text = option.help + (f" (default: {default})" if default not in (None, False, "") and
                                       option.action != "append" else "")
            arguments = option._arguments(default)
            arguments["help"] = help_text
            parser.add_argument(*option.cli_flags, dest=option.dest, **arguments)


def add_pytest_options(group: Any) -> None:
    """``group.addoption`` for every option pytest has (`group`: ``parser.getgroup(...)``)."""
    for option in OPTIONS:
        if option.pytest:
            default = option.default() if callable(option.default) else option.default
            group.addoption(option.pytest_flag, dest=option.pytest_dest, **option._arguments(default))


def cli_command(args: argparse.Namespace, prefix: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """The words of a command line that selects what `args` did (the selecting options that differ from their
    defaults, after `prefix`; not `exclude`, the reports or the display)."""
    words = list(prefix)
    for option in OPTIONS:
        if (not option.cli or option.name in ("list", "no-progress", "workers", "reports", "no-reports", *exclude)
                or option.report):
            continue
        value = getattr(args, option.dest, None)
        if value is None or value == option.cli_value_default or value is False:
            continue
        flag = option.cli_flags[-1]
        if option.action == "append":
            for item in value:
                words += [flag, str(item)]
        elif option.action == "store_true":
            words.append(flag)
        else:
            words += [flag, str(value)]
    return words


def check_writable(path: str, flag: str) -> str | None:
    """Why a report cannot be written to `path` (a one-line reason naming `flag`), or None. Nothing is created:
    a file that exists is opened for appending, else a probe file is made and removed in the nearest directory
    that exists."""
    import tempfile
    from pathlib import Path

    target = Path(path)
    if target.is_dir():
        return f"{flag} {path}: is a directory"
    if target.exists():
        try:
            if stat.S_ISFIFO(target.stat().st_mode):  # opened without waiting: a pipe with no reader is refused
                os.close(os.open(target, os.O_WRONLY | os.O_NONBLOCK))
            else:
                with open(target, "a", encoding="utf-8"):
                    pass
        except OSError as error:
            return f"{flag} {path}: cannot be written ({error.strerror or error})"
        return None
    parent = target.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{flag} {path}: {parent} is not a directory"
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as error:
        return f"{flag} {path}: cannot create files in {parent} ({error.strerror or error})"
    return None


def _umask() -> int:
    """The process's umask (read by setting it and back: the only way os offers)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(path: str, text: str) -> None:
    """Write `text` to `path` whole or not at all (missing parent folders made): a regular file through a temporary
    file beside it, renamed over it only when complete, so that a failure (a full disk) leaves what was there;
    what is not a regular file (a device, a pipe, a symbolic link) is written directly."""
    import tempfile
    from pathlib import Path

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or (target.exists() and not target.is_file()):
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    # mkstemp makes the file private (0600); the output gets the mode a plain open() would give it: the file's own
    # when it replaces one, else 0666 less the umask.
    os.chmod(temporary, stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~_umask())
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def report_problems(value: Callable[[Option], Any], flag: Callable[[Option], str]) -> list[str]:
    """Why the report paths chosen (`value(option)`) cannot be written, one line each."""
    reasons = []
    for option in OPTIONS:
        path = value(option) if option.report else None
        if path:
            reason = check_writable(path, flag(option))
            if reason:
                reasons.append(reason)
    return reasons
