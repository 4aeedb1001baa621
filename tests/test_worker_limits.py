"""Workers that cannot be started (the process is out of file descriptors) end the command with one line, exit 2."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

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
