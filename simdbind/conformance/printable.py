"""Text from a report, made safe to show: reports come from other machines and adapters' messages, and a string
holding ESC sequences (clear the screen, set the title, write the clipboard), bidi overrides (text shown in another
order than it reads) or characters that XML 1.0 forbids must reach a terminal, a JUnit file or a page as visible
escapes, never as what they do.
"""

from __future__ import annotations


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, keep: str = "") -> str:
    """`text` with every character that `str.isprintable` refuses (C0 and C1 controls, DEL, format characters such
    as bidi overrides, line and paragraph separators, surrogates, private and unassigned code points, spaces other
    than " ") written as a Python escape (ESC as \\x1b, U+202E as \\u202e); the characters of `keep` (e.g. "\\n")
    stay as they are."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char in keep else _escape(char) for char in text)
