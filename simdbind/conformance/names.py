"""Close matches for a misspelt name, for error messages."""

from __future__ import annotations

import difflib
from typing import Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """" (did you mean 'x'?)" for the closest of `known`, or "" when nothing is close."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
