"""Ctrl-C (SIGINT) in the middle of each command's work: it stops within seconds, prints what was done, writes its
outputs of what was done (marked interrupted) and exits 130. The explore search also keeps a Ctrl-C that
hypothesis's garbage-collection callback swallows."""

from __future__ import annotations

import gc
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simdbind.conformance import explore, runner
from simdbind.conformance.model import REGISTRY

#: Seconds a command may take to stop after SIGINT.
STOP_SECONDS = 10


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "simdbind", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)


def read_until(process: subprocess.Popen[str], marker: str, seconds: float = 240) -> str:
    """stdout up to (at least) the first line matching the regular expression `marker` (the process is killed and
    the test fails after `seconds`). Read unbuffered, so that select() sees every line as it comes."""
    assert process.stdout is not None
    descriptor = process.stdout.fileno()
    text, deadline = "", time.monotonic() + seconds
    while not re.search(marker, text):
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            pytest.fail(f"no {marker!r} in the output: {text[-2000:]}")
        ready, _, _ = select.select([descriptor], [], [], 1)
        if ready:
            text += os.read(descriptor, 1 << 16).decode()
    return text


def interrupt(process: subprocess.Popen[str]) -> tuple[int, str, str, float]:
    """SIGINT, then (exit status, the rest of stdout, stderr, seconds it took to stop)."""
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        stdout, stderr = process.communicate(timeout=STOP_SECONDS * 6)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate(timeout=30)
        pytest.fail(f"still running {STOP_SECONDS * 6} s after SIGINT: {stderr[-2000:]}")
    return process.returncode, stdout, stderr, time.monotonic() - sent


def test_conformance_interrupted_prints_the_summary_and_writes_reports_marked_interrupted(tmp_path):
    process = start("conformance", "--profile", "full", "--isa", "base", "--no-progress", "--reports", "out",
                    cwd=tmp_path)
    read_until(process, "case runs on")
    time.sleep(3)
    status, stdout, stderr, seconds = interrupt(process)
    assert status == 130, stdout[-2000:] + stderr[-2000:]
    assert seconds < STOP_SECONDS and "Traceback" not in stderr
    assert "interrupted:" in stderr and "passed  failed" in stdout  # the summary of what ran
    report = json.loads((tmp_path / "out" / "conformance.json").read_text())
    assert report["meta"]["interrupted"] is True
    total = int(stderr.split("interrupted: ", 1)[1].split(" of ", 1)[1].split()[0])
    assert 0 < len(report["results"]) < total
    assert (tmp_path / "out" / "conformance.html").is_file() and (tmp_path / "out" / "conformance.xml").is_file()
    partial = str(tmp_path / "out" / "conformance.json")
    readback = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "diff", partial, partial],
                              capture_output=True, text=True)
    assert readback.returncode == 0 and "Traceback" not in readback.stderr, readback.stderr  # diff reads it


def test_bench_interrupted_writes_the_cases_it_finished(tmp_path):
    process = start("bench", "--functions", "unary", "--isa", "base", "--no-peers", "--repeats", "3",
                    "--min-time", "0.01", "--json", "b.json", "--md", "b.md", cwd=tmp_path)
    text = read_until(process, r"\[ *3/")
    status, stdout, stderr, seconds = interrupt(process)
    assert status == 130, stdout[-2000:] + stderr[-2000:]
    assert seconds < STOP_SECONDS and "Traceback" not in stderr and "interrupted:" in stderr
    report = json.loads((tmp_path / "b.json").read_text())
    assert report["meta"]["interrupted"] is True
    cases = list(dict.fromkeys(m["case"] for m in report["measurements"]))
    assert len(cases) >= 2  # the two cases whose lines came before [3/N]
    assert all(case in text + stdout for case in cases)
    assert cases[0] in (tmp_path / "b.md").read_text()


def test_explore_interrupted_reports_what_it_found_so_far(tmp_path):
    process = start("conformance", "explore", "--function", "unary", "--isa", "base", "--budget", "300",
                    "--json", "e.json", cwd=tmp_path)
    read_until(process, "simdbind conformance explore:")
    time.sleep(15)  # the worker process starts (NumPy, the library) and runs cases
    status, stdout, stderr, seconds = interrupt(process)
    assert status == 130, stdout[-2000:] + stderr[-2000:]
    assert seconds < STOP_SECONDS and "Traceback" not in stderr
    assert "explore: interrupted" in stdout and "cases/s" in stdout
    report = json.loads((tmp_path / "e.json").read_text())
    assert report["interrupted"] is True and report["cases"] > 0


class _CountingWorker:
    """A worker whose cases pass; during its 5th case, SIGINT arrives while a garbage-collection callback runs,
    which prints and drops the KeyboardInterrupt raised there."""

    def __init__(self) -> None:
        from simdbind.conformance.implementations import implementations

        self.implementation = implementations(["bundled"], "base", None)[0]
        self.calls = 0

    def run(self, function, case):
        self.calls += 1
        if self.calls == 5:
            def callback(phase, info):
                if phase == "start":
                    os.kill(os.getpid(), signal.SIGINT)
            gc.callbacks.append(callback)
            try:
                gc.collect()
            finally:
                gc.callbacks.remove(callback)
        return runner.CaseResult(self.implementation.name, function.name, case.descriptor, case.group, case.dtype,
                                 case.layout, "pass", family=function.family)


def test_a_ctrl_c_swallowed_by_a_gc_callback_still_stops_the_search(monkeypatch):
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: dropped.append(unraisable.exc_type))
    worker = _CountingWorker()
    started = time.perf_counter()
    pair = explore.search(worker, REGISTRY["unary"], 60.0, 1)
    assert pair.interrupted and time.perf_counter() - started < 30
    assert worker.calls <= 6  # at most the case that was running when the flag was seen
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the search's handler is gone
    assert dropped == [KeyboardInterrupt]  # it was indeed dropped in the callback
