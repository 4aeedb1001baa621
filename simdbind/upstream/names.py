"""Builds by name: ``upstream`` (the newest cached build of the default ref) and ``upstream@REF`` (a tag, branch or
commit prefix), wherever a library is taken (``simdbind.load``, ``--library``, the pytest plugin, SIMD_LIBRARY).
:func:`simdbind.library.load` passes every library argument through :func:`resolve`."""

from __future__ import annotations

from simdbind.errors import LibraryError
from simdbind.upstream.options import DEFAULT_REF

PREFIX = "upstream"


def is_name(spec: str) -> bool:
    return spec == PREFIX or spec.startswith(PREFIX + "@")


def ref_of(spec: str) -> str:
    """The ref a name asks for ("upstream" -> the default ref)."""
    ref = spec[len(PREFIX) + 1:] if spec.startswith(PREFIX + "@") else DEFAULT_REF
    if not ref.strip():
        raise LibraryError(f"{spec}: names no ref: write upstream@TAG, upstream@BRANCH or upstream@COMMIT")
    return ref.strip()


def build_command(ref: str) -> str:
    return "simdbind upstream build" + ("" if ref == DEFAULT_REF else f" --ref {ref}")


def resolve(spec: str) -> str:
    """The library file of the newest cached build a name asks for; any other library argument unchanged. A name
    without a build is a LibraryError that gives the command that makes it."""
    if not is_name(spec):
        return spec
    from simdbind.upstream import cache

    ref = ref_of(spec)
    found = [entry for entry in cache.entries() if entry.matches(ref)]
    if not found:
        raise LibraryError(f"{spec}: no build of {ref} in the cache ({cache.root()}): build it with "
                           f"`{build_command(ref)}` (add --source DIR to build from a local Simd checkout)")
    return str(found[-1].library)
