"""The options of a conformance run, defined once: ``simdbind conformance`` builds its arguments from
:data:`OPTIONS` (``--profile``) and the pytest plugin its options (``--simd-profile``).

Importing this module imports nothing heavy: the pytest plugin reads it in every run of every project.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

PROFILES = ("smoke", "ci", "full")
#: The prefix of every option in pytest, where unprefixed names clash with other plugins'.
PYTEST_PREFIX = "--simd-"
#: The largest seed: every command takes seeds 0 .. MAX_SEED, and a report holding another is refused.
MAX_SEED = 2**63 - 1


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (a seed)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 (NaN and infinity refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
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
    Option("seed", "base seed of the case inputs", type=non_negative_int, metavar="N"),
    Option("workers", "worker processes, or 'auto' (default 1: in this process; at most the CPUs available); "
           "results do not depend on it", default="1", metavar="N", short="-n", pytest=False),
    Option("list", "list the selected cases and exit", action="store_true", default=False, pytest=False),
    Option("no-progress", "no progress display", action="store_true", default=False, pytest=False),
    Option("report-json", "JSON report ('' for none)", metavar="FILE", cli_default="reports/conformance.json",
           report=True),
    Option("junit-xml", "JUnit XML report ('' for none; in pytest: --junitxml)", metavar="FILE",
           cli_default="reports/conformance.xml", pytest=False, report=True),
    Option("report-md", "Markdown summary for a CI page ('' for none)", metavar="FILE",
           cli_default="reports/conformance.md", report=True),
    Option("report-html", "self-contained HTML matrix ('' for none)", metavar="FILE",
           cli_default="reports/conformance.html", report=True),
)


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
        if not option.cli or option.name in ("list", "no-progress", "workers", *exclude) or option.report:
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
