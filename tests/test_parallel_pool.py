"""sb_parallel_for, the library's thread pool (csrc/runtime/parallel.c), on its own: tests/parallel_stress.c calls
it from several threads with random sizes, nested calls, pauses that put the workers to sleep and forks, and
checks that every index is visited exactly once. Built with the C compiler, plainly and under ThreadSanitizer."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the pool's stress test")


def build(tmp_path: Path, *flags: str) -> Path:
    binary = tmp_path / "parallel_stress"
    subprocess.run([CC, "-O2", "-pthread", *flags, f"-I{ROOT / 'csrc'}", str(ROOT / "tests" / "parallel_stress.c"),
                    str(ROOT / "csrc" / "runtime" / "parallel.c"), "-o", str(binary)], check=True)
    return binary


def run(binary: Path, threads: int, callers: int, rounds: int, env: dict[str, str] | None = None) -> None:
    # A lost wake-up or a miscounted part shows as a hang: the timeout turns it into a failure.
    done = subprocess.run([str(binary), str(threads), str(callers), str(rounds)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stdout + done.stderr[-3000:]


@pytest.mark.parametrize("threads, callers", [(2, 1), (2, 2), (4, 3)])
def test_every_index_once_across_callers_nesting_sleep_and_fork(tmp_path, threads, callers):
    run(build(tmp_path), threads, callers, 20000)


def test_no_data_race_under_thread_sanitizer(tmp_path):
    try:
        binary = build(tmp_path, "-g", "-fsanitize=thread")
    except subprocess.CalledProcessError:
        pytest.skip("the C compiler cannot build with -fsanitize=thread here")
    # die_after_fork=0: the child only runs its own calls, which ThreadSanitizer cannot follow after a fork.
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66 die_after_fork=0")
    run(binary, 3, 3, 3000, env)
