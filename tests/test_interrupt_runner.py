"""The user's Ctrl-C stops a run at once, at any worker count: the workers are terminated (none outlives the run,
no semaphore leaks) and the run returns what completed, marked interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Runs the full profile (minutes) and prints its worker pids once the first case is done, then the outcome.
RUNNER_SCRIPT = """
import json, multiprocessing, sys
from simdbind.conformance import runner
from simdbind.conformance.implementations import implementations

impls = implementations(["bundled"], "all")
announced = []

def progress(done, total, result):
    if not announced:
        announced.append(True)
        print(json.dumps({"workers": [p.pid for p in multiprocessing.active_children()]}), flush=True)

planned = [(impls[i].name, case.descriptor) for i, _, case in runner.plan(impls, None, "full")]
outcome = runner.run(impls, None, "full", progress=progress, workers=int(sys.argv[1]))
done = [(r.implementation, r.descriptor) for r in outcome.results]
position = {key: n for n, key in enumerate(planned)}
print(json.dumps({"interrupted": outcome.interrupted, "done": len(done), "planned": len(planned),
                  "in_plan_order": [position[k] for k in done] == sorted(position[k] for k in done)}), flush=True)
"""


def alive(pid: int) -> bool:
    """Is `pid` a live (not zombie) process?"""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                pass
    return found


def interrupt(process: subprocess.Popen[str], pause: float) -> tuple[str, str, float]:
    """SIGINT to `process` after `pause` seconds: its stdout, its stderr and the seconds it took to end after it."""
    try:
        time.sleep(pause)
        process.send_signal(signal.SIGINT)
        sent = time.perf_counter()
        stdout, stderr = process.communicate(timeout=30)
        return stdout, stderr, time.perf_counter() - sent
    finally:
        if process.poll() is None:
            # The whole session: a worker left behind would hold the pipes open, and communicate() wait forever.
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate(timeout=30)


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_returns_the_partial_run_at_once_and_leaves_no_worker(workers):
    process = subprocess.Popen([sys.executable, "-c", RUNNER_SCRIPT, str(workers)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
    assert process.stdout is not None
    pids = json.loads(process.stdout.readline())["workers"]
    stdout, stderr, took = interrupt(process, 1.5)
    assert len(pids) == (workers if workers > 1 else 0)
    assert process.returncode == 0, stderr
    assert took < 2.5, f"{took:.1f} s from SIGINT to the end of the run"
    outcome = json.loads(stdout.strip().splitlines()[-1])
    assert outcome["interrupted"] is True and 0 < outcome["done"] < outcome["planned"]
    assert outcome["in_plan_order"]
    assert not [pid for pid in pids if alive(pid)]
    assert "Traceback" not in stderr and "leaked" not in stderr, stderr


def test_a_run_that_is_not_interrupted_says_so(bundled):
    from simdbind.conformance import deviations, runner
    from simdbind.conformance.implementations import LibraryImplementation

    impl = LibraryImplementation("bundled-base", bundled, "base")
    run = runner.run([impl], ["eltwise"], "smoke", catalogue=deviations.Catalogue(), workers=2)
    assert run.interrupted is False and len(run.results) == len(runner.plan([impl], ["eltwise"], "smoke"))


def test_command_ctrl_c_with_workers_ends_at_once_with_summary_and_interrupted_report(tmp_path):
    report = tmp_path / "r.json"
    process = subprocess.Popen([sys.executable, "-m", "simdbind", "conformance", "--profile", "ci", "-n", "2",
                                "--report-json", str(report), "--junit-xml", "", "--report-md", "",
                                "--report-html", ""], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True,
                               cwd=tmp_path)
    deadline = time.perf_counter() + 60
    while len(children(process.pid)) < 3 and time.perf_counter() < deadline:  # 2 workers, the resource tracker
        time.sleep(0.1)
    workers = children(process.pid)
    stdout, stderr, took = interrupt(process, 3)
    assert len(workers) == 3, "the workers did not start"
    assert took < 3, f"{took:.1f} s from SIGINT to exit"
    # The workers are terminated before the command ends; the resource tracker leaves when it sees the command's
    # end, a moment later.
    deadline = time.perf_counter() + 2
    while [pid for pid in workers if alive(pid)] and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if alive(pid)]
    assert "Traceback" not in stderr and "leaked" not in stderr, stderr
    assert process.returncode == 130
    assert json.loads(report.read_text())["meta"]["interrupted"] is True
    from simdbind.conformance.schema import read_report

    run = read_report(report)
    assert run.results and "interrupted" in stdout.lower() + stderr.lower()


SWALLOWED_SCRIPT = """
import json
from simdbind.conformance import deviations, runner
from tests import slow_cases

print("started", flush=True)
outcome = runner.run([slow_cases.SWALLOWING], ["slow_copy"], "smoke", catalogue=deviations.Catalogue())
print(json.dumps({"interrupted": outcome.interrupted, "done": len(outcome.results),
                  "statuses": sorted({r.status for r in outcome.results})}), flush=True)
"""


def test_ctrl_c_that_an_implementation_swallows_still_stops_the_run():
    """The user's SIGINT is seen even when the implementation's code catches the KeyboardInterrupt it raised."""
    process = subprocess.Popen([sys.executable, "-c", SWALLOWED_SCRIPT], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "started"
    stdout, stderr, took = interrupt(process, 1.0)
    assert process.returncode == 0 and took < 2.5, stderr
    outcome = json.loads(stdout.strip().splitlines()[-1])
    assert outcome["interrupted"] is True and 0 < outcome["done"] < 324 and outcome["statuses"] == ["pass"]
