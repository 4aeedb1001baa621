"""Workers that cannot be started (the process is out of file descriptors, or they die while starting) end the run
with one typed error (the command: one line, exit 2), not a traceback or an error for every case."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from simdbind.conformance import deviations, runner
from tests import slow_cases

ROOT = Path(__file__).resolve().parent.parent


def test_out_of_file_descriptors_is_one_line_and_exit_2(tmp_path):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))

    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "--function", "eltwise", "--profile",
                          "smoke", "--isa", "base", "-n", "2", "--no-progress", "--report-json", "", "--junit-xml",
                          "", "--report-md", "", "--report-html", ""], capture_output=True, text=True, cwd=tmp_path,
                         preexec_fn=limit, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert lines == ["simdbind: -n 2: cannot start the worker processes: out of file descriptors (the limit is 16: "
                     "raise it with `ulimit -n`, or run with -n 1)"], out.stderr


def test_workers_that_die_while_starting_are_one_error_not_a_crash_of_every_case():
    with pytest.raises(runner.WorkerError, match=r"^-n 2: the worker processes died while starting"):
        runner.run([slow_cases.SLEEPING], ["slow_copy"], "smoke", catalogue=deviations.Catalogue(), workers=2,
                   modules=["tests.no_such_module_anywhere"])
