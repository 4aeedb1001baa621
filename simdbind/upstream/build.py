"""Configure upstream's ``prj/cmake`` project and compile it, every line of output into the build log, the
build tool's progress into :class:`simdbind.upstream.progress.Progress`."""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import TextIO

from simdbind.upstream.options import BuildOptions, UpstreamError
from simdbind.upstream.progress import Progress
from simdbind.upstream.toolchain import Toolchain

DISK_FULL = "No space left on device"


def jobs() -> int:
    """Every CPU this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def configure_command(toolchain: Toolchain, source: Path, build: Path, options: BuildOptions,
                      switches: dict[str, str]) -> list[str]:
    definitions = options.cmake_definitions(switches)
    definitions.update({
        "CMAKE_C_COMPILER": toolchain.cc[0],
        "CMAKE_CXX_COMPILER": toolchain.cxx[0],
        "CMAKE_MAKE_PROGRAM": toolchain.make_program,
    })
    if toolchain.ccache:
        definitions["CMAKE_C_COMPILER_LAUNCHER"] = toolchain.ccache
        definitions["CMAKE_CXX_COMPILER_LAUNCHER"] = toolchain.ccache
    return [toolchain.cmake, "-S", str(source / "prj" / "cmake"), "-B", str(build), "-G", toolchain.generator,
            *(f"-D{name}={value}" for name, value in definitions.items())]


def build_command(toolchain: Toolchain, build: Path, job_count: int) -> list[str]:
    return [toolchain.cmake, "--build", str(build), "--parallel", str(job_count)]


def run(command: list[str], log: TextIO, log_path: Path, what: str, progress: Progress | None = None,
        cwd: Path | None = None) -> None:
    """Run `command`, its output into `log` (and `progress`); a failure is an :class:`UpstreamError` naming the
    first error line and the log."""
    log.write("$ " + " ".join(command) + "\n")
    log.flush()
    env = dict(os.environ, LC_ALL="C")
    if cwd is not None:
        env["CCACHE_BASEDIR"] = str(cwd)  # paths below it hash relative: a rebuild elsewhere still hits the cache
        # The version script asks git for the branch and revision: an archive's tree (no .git) inside another
        # repository (a simdbind checkout's vendor/) must not report that repository's.
        env["GIT_CEILING_DIRECTORIES"] = str(cwd)
    try:
        # A process group of its own, so that stopping the build stops the build tool's compilers too.
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", env=env, start_new_session=True)
    except OSError as error:
        raise UpstreamError(f"{what}: cannot run {command[0]}: {error}") from None
    assert process.stdout is not None
    try:
        for line in process.stdout:
            log.write(line)
            if progress is not None:
                progress.line(line)
        code = process.wait()
    except BaseException:  # Ctrl-C, or the log cannot be written: stop the build tool and its compilers
        _stop_group(process)
        raise
    finally:
        if progress is not None:
            progress.close()
        log.flush()
    if code != 0:
        raise failure(what, log_path)


def _stop_group(process: subprocess.Popen[str]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def failure(what: str, log_path: Path) -> UpstreamError:
    """The one-line error of a failed step: a full disk, else the first compiler error, else the log's last line."""
    lines = log_path.read_text(errors="replace").splitlines()[-400:]
    if any(DISK_FULL in line for line in lines):
        return UpstreamError(f"{what}: disk full ({DISK_FULL}); free some space and run again (log: {log_path})")
    errors = [line.strip() for line in lines if re.search(r"\berror\b", line, re.IGNORECASE)
              and not line.startswith(("$ ", "ninja: build stopped", "make"))]
    detail = errors[0] if errors else next((line.strip() for line in reversed(lines) if line.strip()), "no output")
    return UpstreamError(f"{what} failed: {detail[:400]} (log: {log_path})")


def disk_full(error: OSError) -> bool:
    return error.errno in (errno.ENOSPC, errno.EDQUOT)


def library_file(build: Path) -> Path:
    """The shared library the build made (libSimd.so, or libSimd.dylib)."""
    found = sorted(p for p in build.glob("libSimd*") if p.is_file() and not p.is_symlink()
                   and re.search(r"\.(so(\.\d+)*|dylib)$", p.name))
    if not found:
        raise UpstreamError(f"the build finished but made no libSimd shared library in {build}")
    return found[0]
