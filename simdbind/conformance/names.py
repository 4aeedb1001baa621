"""Error messages of the commands: close matches for a misspelt name, and the one-line error of a usage error."""

from __future__ import annotations

import difflib
import sys
from typing import Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """" (did you mean 'x'?)" for the closest of `known`, or "" when nothing is close."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def error(message: str) -> int:
    """Print a one-line error (control characters shown escaped: messages may quote untrusted files) and return 2,
    the exit status of a usage error."""
    line = " ".join(str(message).split("\n")[0:1]) or "error"
    print("simdbind: " + "".join(c if c.isprintable() else repr(c)[1:-1] for c in line[:2000]), file=sys.stderr)
    return 2
