"""Builds by name: ``upstream`` (the newest cached build of the default ref) and ``upstream@REF`` (a tag, branch or
commit prefix), wherever a library is taken (``simdbind.load``, ``--library``, the pytest plugin, SIMD_LIBRARY).
A build made with ``--max-isa`` or ``--coverage`` is named with its variant after a colon, which no git ref
contains: ``upstream@v7.1.162:avx2``, ``upstream@v7.1.162:coverage``, ``upstream:avx2+coverage``; a name without
one means the standard build. :func:`simdbind.library.load` passes every library argument through :func:`resolve`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simdbind.errors import LibraryError
from simdbind.upstream.options import DEFAULT_REF

PREFIX = "upstream"

if TYPE_CHECKING:
    from simdbind.upstream import cache


def is_name(spec: str) -> bool:
    return spec == PREFIX or spec.startswith((PREFIX + "@", PREFIX + ":"))


def _split(spec: str) -> tuple[str, str]:
    name, _, variant = spec.partition(":")
    return name, variant.strip()


def ref_of(spec: str) -> str:
    """The ref a name asks for ("upstream" -> the default ref)."""
    name, _ = _split(spec)
    ref = name[len(PREFIX) + 1:] if name.startswith(PREFIX + "@") else DEFAULT_REF
    if not ref.strip():
        raise LibraryError(f"{spec}: names no ref: write upstream@TAG, upstream@BRANCH or upstream@COMMIT")
    return ref.strip()


def variant_of(spec: str) -> str:
    """The variant a name asks for ("" for the standard build)."""
    return _split(spec)[1]


def build_command(ref: str, variant: str = "") -> str:
    flags = "".join(" --coverage" if part == "coverage" else f" --max-isa {part}"
                    for part in variant.split("+") if part)
    return "simdbind upstream build" + ("" if ref == DEFAULT_REF else f" --ref {ref}") + flags


def entry_of(spec: str) -> "cache.Entry":
    """The newest cached build a name asks for; a LibraryError giving the command that makes it when there is none."""
    from simdbind.upstream import cache

    ref, variant = ref_of(spec), variant_of(spec)
    found = [entry for entry in cache.entries() if entry.matches(ref) and entry.variant == variant]
    if not found:
        what = f"{ref}:{variant}" if variant else ref
        raise LibraryError(f"{spec}: no build of {what} in the cache ({cache.root()}): build it with "
                           f"`{build_command(ref, variant)}` (add --source DIR to build from a local Simd checkout)")
    return found[-1]


def resolve(spec: str) -> str:
    """The library file of the newest cached build a name asks for; any other library argument unchanged. A name
    without a build is a LibraryError that gives the command that makes it."""
    if not is_name(spec):
        return spec
    return str(entry_of(spec).library)
