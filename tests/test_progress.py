"""Progress comes per case, whatever the cases cost, with the rate and the time left; off a terminal, a plain line
every few seconds."""

from __future__ import annotations

import io
import time

from simdbind.conformance import deviations, progress, runner
from simdbind.conformance.runner import CaseResult
from tests import slow_cases


def result(status: str = "pass") -> CaseResult:
    return CaseResult("impl", "eltwise", "eltwise op=max", "", "f32", "nchw", status)


def test_plain_lines_every_few_seconds_with_rate_and_time_left(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    stream = io.StringIO()
    shown = progress.Progress(stream, tty=False)
    now[0] = 102.0  # the workers took 2 s to start
    shown(1, 1001, result())
    for done in range(2, 1001):
        now[0] = 102.0 + (done - 1) * 0.01  # 100 cases/s
        shown(done, 1001, result("fail" if done == 500 else "pass"))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2  # at 5 s after the start, then at 10 s
    assert lines[0].startswith("progress: 301/1,001 cases (30%), 0 failed, 5.0 s, 100 cases/s, 7 s left")
    assert lines[1].startswith("progress: 801/1,001 cases (80%), 1 failed, 10.0 s, 100 cases/s, 2 s left")
    now[0] = 112.0
    shown(1001, 1001, result())
    assert stream.getvalue().splitlines()[-1] == "progress: 1,001/1,001 cases (100%), 1 failed, 12.0 s, 100 cases/s"


def test_terminal_bar_shows_rate_and_time_left(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    stream = io.StringIO()
    shown = progress.Progress(stream, tty=True)
    for done in range(1, 201):
        now[0] += 0.5
        shown(done, 400, result())
    assert "200/400 cases (50%), 0 failed, 100.0 s, 2 cases/s, 1 min 40 s left" in stream.getvalue().split("\r")[-1]
    assert progress.duration(3725) == "1 h 02 min" and progress.duration(59.6) == "1 min 00 s"


def test_workers_report_cases_as_they_finish_even_where_the_cost_jumps():
    """300 cases that cost nothing then 24 of 0.25 s: no wait between two progress calls is much longer than a
    case (a chunk sized from the cheap cases is cut at its time budget)."""
    impl = slow_cases.SLEEPING
    seen: list[float] = []
    start = time.perf_counter()
    run = runner.run([impl], ["slow_copy"], "smoke", catalogue=deviations.Catalogue(), workers=2,
                     modules=["tests.slow_cases"], progress=lambda done, total, r: seen.append(time.perf_counter()))
    assert len(run.results) == len(seen) == 324 and {r.status for r in run.results} == {"pass"}
    gaps = [b - a for a, b in zip(seen, seen[1:])]
    assert max(gaps) < 1.0, f"{max(gaps):.2f} s without progress (run {time.perf_counter() - start:.1f} s)"


def test_chunks_start_at_one_case_and_grow_to_the_time_budget():
    items = [(n, 0, "f", str(n)) for n in range(10_000)]
    chunks = runner._Chunks(items, workers=2)
    taken = chunks.take()
    assert len(taken) == 1
    chunks.observe(1, 0.001)  # 1 ms a case
    second = chunks.take()
    assert len(second) == int(runner.CHUNK_SECONDS / 0.001)
    chunks.give_back(second[10:])  # a worker stopped after 10 cases
    assert chunks.take() == second[10:]  # the cases it left go first
    taken += second
    while chunks:
        taken += chunks.take()
    assert sorted(taken) == items  # every case once
