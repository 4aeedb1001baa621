"""The progress of a build of tens of minutes: units done of all, elapsed time and an estimate of what is left, read
from the build tool's output (Ninja's ``[n/N]``, make's ``[ p%]``). One updating line on a terminal; elsewhere a
plain line every few seconds."""

from __future__ import annotations

import collections
import re
import time
from typing import Callable, TextIO

_NINJA = re.compile(r"^\[(\d+)/(\d+)\]")
_MAKE = re.compile(r"^\[\s*(\d+)%\]")
#: Seconds of recent progress the estimate is made from: units that ccache serves come fast, the others slowly, so
#: the rate since the start would mislead for long.
WINDOW = 120.0


def parse(line: str) -> tuple[int, int] | None:
    """(done, total) of a build tool's progress line, or None (make reports percent: total 100)."""
    match = _NINJA.match(line)
    if match:
        return int(match.group(1)), int(match.group(2))
    match = _MAKE.match(line)
    return (int(match.group(1)), 100) if match else None


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60:02d}m" if hours else f"{rest // 60}m{rest % 60:02d}s"


class Progress:
    """Feed it the build tool's lines (:meth:`line`); it writes the progress to `stream`."""

    def __init__(self, stream: TextIO, *, interactive: bool | None = None, interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.interactive = stream.isatty() if interactive is None else interactive
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.recent: collections.deque[tuple[float, int]] = collections.deque()  # (time, units done), last WINDOW s
        self.last_print = float("-inf")
        self.done = self.total = 0
        self.width = 0

    def line(self, text: str) -> None:
        counts = parse(text)
        if counts is not None:
            self.update(*counts)

    def update(self, done: int, total: int) -> None:
        now = self.clock()
        self.recent.append((now, done))
        while len(self.recent) > 2 and now - self.recent[1][0] >= WINDOW:
            self.recent.popleft()
        self.done, self.total = done, total
        if self.interactive:
            self._write("\r" + self.text(now), end="")
        elif now - self.last_print >= self.interval or done == total:
            self.last_print = now
            self._write(self.text(now))

    def text(self, now: float) -> str:
        elapsed = now - self.start
        percent = 100 * self.done // self.total if self.total else 0
        words = f"build: {self.done}/{self.total} units ({percent}%), {duration(elapsed)} elapsed"
        left = self.remaining(now)
        return words + (f", about {duration(left)} left" if left is not None else "")

    def remaining(self, now: float) -> float | None:
        """Time left at the rate of the last WINDOW seconds (None until there is a rate, and at the end)."""
        if not self.recent or self.done >= self.total:
            return None
        since, units = now - self.recent[0][0], self.done - self.recent[0][1]
        if units < 2 or since <= 0:
            return None
        return since / units * (self.total - self.done)

    def _write(self, text: str, end: str = "\n") -> None:
        if self.interactive:
            pad = max(0, self.width - len(text))
            self.width = len(text)
            text += " " * pad
        self.stream.write(text + end)
        self.stream.flush()

    def close(self) -> None:
        if self.interactive and self.width:
            self.stream.write("\n")
            self.stream.flush()
