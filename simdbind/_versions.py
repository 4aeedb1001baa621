"""Version ranges as the catalogue of known deviations writes them (``"versions"`` of an entry), and what a
library's version string stands for.

The library reads them too (:mod:`simdbind._routes` takes a route only for the versions its entry names), so the
parser lives here, in the library, and the conformance suite imports it.

Version strings (``SimdVersion()``; docs/upstream-build.md, "Version strings"). Upstream's build writes
``USER_VERSION.BRANCH-REVISION`` when it is made from git (prj/sh/GetVersion.sh), and the release commit sets
USER_VERSION: a tag's build says ``7.1.162.HEAD-4615122``, a build of master after it ``7.1.162.master-c6ef3bd``
(``7.1.162.HEAD-c6ef3bd`` when checked out detached), ``git describe`` would say ``7.1.162.148-c6ef3bd``; a build
from an archive says ``7.1.162``. So:

* the first three numbers are the release;
* nothing after them (or only a comment in parentheses): exactly that release;
* anything else after them (``.HEAD-…``, ``.master-…``, ``.148-…``): a git build of that release or of a later
  commit before the next release. It lies in a range when the release itself does or when a version after the
  release and before the next one does: ``7.0.160 - 7.1.162`` and ``7.1.162`` include it (the release's known
  behaviour is assumed until a later release is catalogued), ``>7.1.162``, ``>=7.1.162`` and ``master`` do too,
  ``<7.1.162`` and ``7.1.163`` do not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["VersionRange", "version_numbers", "version_points"]

_VERSION = re.compile(r"^\s*(<=|>=|==|<|>|=)?\s*v?(\d+(?:\.\d+)*)\s*$")
_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)(\S*)")
#: A number past every commit of a release line: (7, 1, 162, LATER) is "after 7.1.162, before 7.1.163".
LATER = 2**63


def version_numbers(text: str) -> tuple[int, ...] | None:
    """The first dotted number in `text` (``"7.1.162.3"`` of ``"v7.1.162.3 (git)"``), or None."""
    match = re.search(r"\d+(?:\.\d+)*", text or "")
    return tuple(int(x) for x in match.group().split(".")) if match else None


def version_points(text: str) -> list[tuple[int, ...]] | None:
    """The versions a version string may stand for: ``[(7, 1, 162)]`` for the release ``"7.1.162"``,
    ``[(7, 1, 162), (7, 1, 162, LATER)]`` for a git build ``"7.1.162.master-c6ef3bd"`` (the release, or a commit
    after it); None when it has no number."""
    match = _RELEASE.search(text or "")
    if match is None:
        numbers = version_numbers(text)
        return None if numbers is None else [numbers]
    release = tuple(int(match.group(i)) for i in (1, 2, 3))
    return [release, release + (LATER,)] if match.group(4) else [release]


def _compare(left: tuple[int, ...], op: str, right: tuple[int, ...]) -> bool:
    width = max(len(left), len(right))
    a, b = left + (0,) * (width - len(left)), right + (0,) * (width - len(right))
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "=": a == b}[op]


@dataclass
class VersionRange:
    """Which versions an entry affects. Forms (a list of strings: all must hold):

    * ``"all"`` / ``"*"``: every version;
    * comparison clauses joined by commas, all of which must hold: ``">=7.0.160, <7.2"``; a bare version is exact;
    * an inclusive range: ``"7.0.160 - 7.1.162"`` or ``"v7.0.160 .. v7.1.162"``;
    * alternatives joined by ``" and "``, ``" or "``, ``";"`` or ``"|"``, any of which may hold; the words
      ``master``/``head``/``later`` stand for "the newest version named here and every later one", so
      ``"v5.0.115 .. v7.1.162 and master"`` is ``>=5.0.115``;
    * text in parentheses is a comment.
    """

    text: str
    alternatives: list[list[tuple[str, tuple[int, ...]]]] = field(default_factory=list)  # OR of ANDs; [] = all

    @classmethod
    def parse(cls, value: Any) -> "VersionRange":
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = ", ".join(value)
        if not isinstance(value, str):
            raise ValueError(f"must be a string or a list of strings, got {value!r}")
        text = value.strip()
        result = cls(text)
        bare = re.sub(r"\([^)]*\)", " ", text).strip()
        if bare.lower() in ("", "*", "all", "any"):
            return result
        newest = max((tuple(int(x) for x in m.split(".")) for m in re.findall(r"\d+(?:\.\d+)+", bare)), default=None)
        for alternative in re.split(r"\s+(?:and|or)\s+|;|\|", bare, flags=re.IGNORECASE):
            alternative = alternative.strip()
            if not alternative:
                continue
            if alternative.lower() in ("master", "head", "main", "later", "newer", "later releases"):
                result.alternatives.append([(">=", newest)] if newest else [])
                continue
            clauses: list[tuple[str, tuple[int, ...]]] = []
            for part in alternative.split(","):
                bounds = re.split(r"\s+-\s+|\s*\.\.\s*", part.strip())
                if len(bounds) == 2:
                    clauses += [(">=", cls._number(bounds[0], text)), ("<=", cls._number(bounds[1], text))]
                    continue
                match = _VERSION.match(part)
                if not match:
                    raise ValueError(f"cannot read version clause {part.strip()!r} in {text!r}")
                clauses.append((match.group(1) or "==", tuple(int(x) for x in match.group(2).split("."))))
            result.alternatives.append(clauses)
        if not result.alternatives:
            raise ValueError(f"cannot read versions {text!r}")
        return result

    @staticmethod
    def _number(part: str, text: str) -> tuple[int, ...]:
        match = re.fullmatch(r"\s*v?(\d+(?:\.\d+)*)\s*", part)
        if match is None:
            raise ValueError(f"cannot read version {part.strip()!r} in {text!r}")
        return tuple(int(x) for x in match.group(1).split("."))

    def contains(self, version: str) -> bool:
        """True for versions in range (a git build: where any version it may stand for is, :func:`version_points`),
        and for versions that cannot be read (then the entry applies)."""
        points = version_points(version)
        if points is None or not self.alternatives or any(not clauses for clauses in self.alternatives):
            return True
        return any(all(_compare(point, op, bound) for op, bound in clauses)
                   for clauses in self.alternatives for point in points)
