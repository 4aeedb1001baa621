"""The cache of builds: where it is, one directory per build key, its manifest, the lock that lets two builds of
one key run at once, the atomic install, listing and removal.

Layout (``root`` is :func:`root`)::

    root/<key>/libSimd.so       the library
    root/<key>/cdef.h           its header as cffi declarations (simdbind.upstream.raw)
    root/<key>/build.log        configure and compile output
    root/<key>/manifest.json    ref, commit, version, backends, compiler, options, size, date, ...
    root/.locks/<key>.lock      held while a build of <key> runs (fcntl)
    root/.work/<key>/           source and build tree of the running build (removed after it)
    root/.trees/<key>/          source and build tree of a coverage build (kept: its library writes counters there)
    root/.staging-<key>-<pid>/  the entry being assembled, renamed to <key> in one step
    root/.logs/<key>.log        the log of the running (or last failed) build

A directory appears under its key only when complete (rename is atomic), so an interrupted or failed build leaves
no entry; anything starting with "." is work in progress or bookkeeping, never listed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from simdbind.upstream.options import BuildOptions, UpstreamError

MANIFEST = "manifest.json"
LOG = "build.log"
#: The version of the manifest's layout.
SCHEMA = 1


def checkout_root() -> Path | None:
    """The checkout simdbind runs from (an editable install), or None for an installed package."""
    import simdbind

    top = Path(simdbind.__file__).resolve().parent.parent
    return top if (top / "build_simd.py").is_file() and (top / "pyproject.toml").is_file() else None


def root() -> Path:
    """The cache directory: $SIMDBIND_UPSTREAM_CACHE if set; in a checkout its vendor/upstream (git ignores it);
    else $XDG_CACHE_HOME/simdbind/upstream (default ~/.cache/simdbind/upstream)."""
    override = os.environ.get("SIMDBIND_UPSTREAM_CACHE")
    if override:
        return Path(override).expanduser().resolve()
    checkout = checkout_root()
    if checkout is not None:
        return checkout / "vendor" / "upstream"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base).resolve() / "simdbind" / "upstream"


def key(label: str, commit: str, compiler: str, options: BuildOptions) -> str:
    """The entry's directory name: readable (ref, short commit) and unique for commit + compiler + options."""
    data = json.dumps({"commit": commit, "compiler": compiler, "options": options.key_data()}, sort_keys=True)
    digest = hashlib.sha256(data.encode()).hexdigest()[:12]
    safe = re.sub(r"[^\w.+-]+", "_", label)[:40] or "build"
    short = commit.removeprefix("sha256-")[:10]
    return f"{safe}-{short}-{digest}"


@dataclass
class Entry:
    path: Path
    manifest: dict[str, Any]

    @property
    def key(self) -> str:
        return self.path.name

    @property
    def library(self) -> Path:
        return self.path / str(self.manifest["library"])

    @property
    def variant(self) -> str:
        """"" for a standard build, else what sets it apart (:attr:`BuildOptions.variant`)."""
        return str(self.manifest.get("variant") or "")

    @property
    def name(self) -> str:
        return f"upstream@{self.manifest['ref']}" + (f":{self.variant}" if self.variant else "")

    @property
    def build_tree(self) -> Path | None:
        """The CMake build directory a coverage build keeps (its .gcno and .gcda files)."""
        tree = self.manifest.get("build_tree")
        return Path(tree) if tree else None

    def matches(self, ref: str) -> bool:
        """Is this a build of `ref` (its ref, a tag at its commit, or a prefix of 4+ digits of its commit)?"""
        lowered = ref.lower()
        return (ref == self.manifest.get("ref") or ref in self.manifest.get("tags", [])
                or (len(ref) >= 4 and re.fullmatch(r"[0-9a-f]+", lowered) is not None
                    and str(self.manifest.get("commit", "")).startswith(lowered)))


def entries(directory: Path | None = None) -> list[Entry]:
    """Complete entries, oldest first (by build date)."""
    base = directory or root()
    found = []
    if base.is_dir():
        for path in base.iterdir():
            if path.name.startswith(".") or not (path / MANIFEST).is_file():
                continue
            try:
                manifest = json.loads((path / MANIFEST).read_text())
            except (OSError, ValueError):
                continue  # not ours, or damaged: never loaded, `remove` can still delete it by key
            if isinstance(manifest, dict) and "library" in manifest and "ref" in manifest:
                found.append(Entry(path, manifest))
    return sorted(found, key=lambda e: (str(e.manifest.get("date", "")), e.key))


@contextlib.contextmanager
def locked(base: Path, entry_key: str, waiting: Callable[[str], None]) -> Iterator[None]:
    """Hold the lock of one key: a second build of the same key waits, then finds the entry made."""
    locks = base / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{entry_key}.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting(f"another build of {entry_key} is running: waiting for it to finish")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def staging(base: Path, entry_key: str) -> Path:
    """A fresh directory to assemble an entry in (on the cache's file system, so that install is a rename)."""
    path = base / f".staging-{entry_key}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    """Write manifest.json whole or not at all (a temporary file renamed over it)."""
    temporary = directory / f".{MANIFEST}.{os.getpid()}"
    temporary.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, directory / MANIFEST)


def install(staged: Path, base: Path, entry_key: str) -> Entry:
    """Move a complete staged entry into place in one rename (replacing an older entry of the key, if any). Call it
    holding the key's lock."""
    final = base / entry_key
    old = None
    if final.exists():
        old = base / f".old-{entry_key}-{os.getpid()}"
        os.rename(final, old)
    os.rename(staged, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return Entry(final, json.loads((final / MANIFEST).read_text()))


def tree(base: Path, entry_key: str) -> Path:
    """Where a coverage build's source and build tree stay."""
    return base / ".trees" / entry_key


def remove(entry: Entry) -> None:
    """Delete an entry (and a coverage build's tree): renamed away first, so that it vanishes from the cache at once
    even if deletion stops."""
    trash = entry.path.parent / f".removing-{entry.key}-{os.getpid()}"
    os.rename(entry.path, trash)
    shutil.rmtree(trash, ignore_errors=True)
    shutil.rmtree(tree(entry.path.parent, entry.key), ignore_errors=True)


def clean_leftovers(base: Path, entry_key: str) -> None:
    """What an interrupted build of this key left (its work tree, staging and renamed-away directories). Call it
    holding the key's lock."""
    for path in [base / ".work" / entry_key, tree(base, entry_key), *base.glob(f".staging-{entry_key}-*"), *base.glob(f".old-{entry_key}-*")]:
        shutil.rmtree(path, ignore_errors=True)


def directory_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def require_free_space(base: Path, needed: int) -> None:
    """Refuse to start when the cache's file system has less than `needed` bytes free."""
    probe = base
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < needed:
        raise UpstreamError(f"disk full: {free / 2**30:.1f} GiB free at {probe}, a build needs about "
                            f"{needed / 2**30:.1f} GiB: free some space, or set SIMDBIND_UPSTREAM_CACHE to a "
                            "directory on another disk")


def format_size(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


def print_table(rows: list[list[str]], out: Any = None) -> None:
    out = out or sys.stdout
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip(), file=out)
