"""The progress display of a conformance run: cases done of the total, failures so far, rate and time left.

On a terminal, one line redrawn as the cases finish; elsewhere (a CI log, a file), a plain line every
:data:`PLAIN_EVERY` seconds and one at the end.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from simdbind.conformance.runner import OK_STATUSES, CaseResult

#: Seconds between two lines off a terminal.
PLAIN_EVERY = 5.0
#: Seconds between two redraws on a terminal (a failure is shown at once).
REDRAW_EVERY = 0.08


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s`` or ``1 h 02 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Progress:
    """``progress(done, total, result)`` after each case (:data:`simdbind.conformance.runner.Progress`)."""

    def __init__(self, stream: Any = None, tty: bool | None = None, width: int = 28):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.width = width
        self.start = time.perf_counter()
        self.first: tuple[float, int] | None = None  # when the first case finished, and how many had then
        self.last_draw = self.start
        self.failed = 0
        self.known = 0
        self.active = False
        encoding = (getattr(self.stream, "encoding", None) or "utf-8").lower().replace("-", "")
        self.unicode = encoding in ("utf8", "utf16", "utf32")

    def rate(self, done: int, now: float) -> float | None:
        """Cases per second since the first case finished (the time workers take to start left out), or None
        before there is a measure."""
        if self.first is None or now <= self.first[0] or done <= self.first[1]:
            return None
        return (done - self.first[1]) / (now - self.first[0])

    def fields(self, done: int, total: int, now: float) -> str:
        """``1,234/48,640 cases (2%), 0 failed, 12.0 s, 310 cases/s, 2 min 33 s left``."""
        rate = self.rate(done, now)
        known = f", {self.known} known" if self.known else ""
        failed = f"{self.failed} failed"
        if self.tty and self.failed:
            failed = f"\x1b[31m{failed}\x1b[0m"
        speed = f", {rate:,.0f} cases/s" if rate else ""
        left = f", {duration((total - done) / rate)} left" if rate and done < total else ""
        return (f"{done:,}/{total:,} cases ({100 * done // max(total, 1)}%), {failed}{known}, "
                f"{now - self.start:.1f} s{speed}{left}")

    def __call__(self, done: int, total: int, result: CaseResult) -> None:
        bad = result.status not in OK_STATUSES
        self.failed += bad
        self.known += result.status == "known"
        now = time.perf_counter()
        if self.first is None:
            self.first = (now, done)
        if self.tty:
            if done < total and now - self.last_draw < REDRAW_EVERY and not bad:
                return
            self.last_draw = now
            filled = int(self.width * done / max(total, 1))
            full, empty = ("█", "░") if self.unicode else ("#", "-")
            bar = full * filled + empty * (self.width - filled)
            self.stream.write(f"\r\x1b[K  [{bar}] {self.fields(done, total, now)}  "
                              f"{result.function} {result.implementation}"[:220])
            self.active = done < total
            if done == total:
                self.stream.write("\n")
            self.stream.flush()
        elif now - self.last_draw >= PLAIN_EVERY or done == total:
            self.last_draw = now
            self.stream.write(f"progress: {self.fields(done, total, now)}\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty and self.active:
            self.stream.write("\n")
            self.stream.flush()
            self.active = False
