"""Fetching Simd's source: a ref of a git repository (a URL, a local checkout, a bare mirror, a ``file://`` URL),
shallowly where the ref allows it, or a source archive (.tar.gz, .tar.xz, .tar.bz2, .tar, .zip)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from simdbind.upstream.options import UpstreamError, UsageError
from simdbind.upstream.toolchain import require_program

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar", ".zip")
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")
_NETWORK = re.compile(r"could not resolve host|unable to access|failed to connect|connection (timed out|refused)|"
                      r"network is unreachable|could not read from remote|temporary failure in name resolution",
                      re.IGNORECASE)


@dataclass
class Source:
    """A fetched source tree, ready to configure (``root/prj/cmake``)."""

    root: Path
    ref: str  # what was asked for (a tag, branch, commit or the archive's name)
    kind: str  # "tag", "branch", "commit" or "archive"
    commit: str  # the full commit id, or "sha256-<digest>" of an archive without one
    origin: str
    tags: list[str] = field(default_factory=list)

    @property
    def header(self) -> Path:
        return self.root / "src" / "Simd" / "SimdLib.h"

    @property
    def user_version(self) -> str:
        path = self.root / "prj" / "txt" / "UserVersion.txt"
        return path.read_text().strip() if path.exists() else ""


def is_archive(spec: str) -> bool:
    return spec.lower().endswith(ARCHIVE_SUFFIXES)


def check_spec(spec: str, ref: str | None) -> None:
    """Refuse a source that cannot work, before anything is fetched (a usage error)."""
    if "://" in spec or re.match(r"^[\w.-]+@[\w.-]+:", spec):  # a URL, or scp-like git@host:path
        if spec.startswith("file://") and not Path(spec[len("file://"):]).exists():
            raise UsageError(f"--source {spec}: no such directory")
        return
    path = Path(spec)
    if not path.exists():
        raise UsageError(f"--source {spec}: no such file or directory (a Simd checkout, a bare mirror, a URL or a "
                         f"source archive: {', '.join(ARCHIVE_SUFFIXES)})")
    if path.is_file() and not is_archive(spec):
        raise UsageError(f"--source {spec}: a file that is not a source archive ({', '.join(ARCHIVE_SUFFIXES)})")
    if path.is_file() and ref is not None and not re.fullmatch(r"[\w.+-]+", ref):
        raise UsageError(f"--ref {ref}: with an archive, --ref only names the build (letters, digits, . _ + -)")


def fetch(spec: str, ref: str, dest: Path, log: Callable[[str], None]) -> Source:
    """Fetch `ref` of `spec` into `dest` (which must not exist) and return what was fetched."""
    if Path(spec).is_file():
        return _extract(Path(spec), ref, dest, log)
    path = Path(spec)
    if path.is_dir() and not (path / ".git").exists() and not _is_git_dir(path) and (path / "prj" / "cmake").is_dir():
        raise UsageError(f"--source {spec}: a source tree without git history: pass an archive of it, or a checkout")
    url = path.resolve().as_uri() if path.is_dir() else spec  # file:// so that --depth is honoured locally
    return _git_fetch(url, spec, ref, dest, log)


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


# -- git ------------------------------------------------------------------------------------------------------------
def _git(args: list[str], log: Callable[[str], None], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    git = require_program("git", "Simd's source is fetched with git; or pass --source ARCHIVE")
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    log("$ git " + " ".join(args))
    result = subprocess.run([git, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)
    if result.stderr.strip():
        log(result.stderr.rstrip())
    return result


def _remote_refs(url: str, spec: str, log: Callable[[str], None]) -> dict[str, str]:
    """refname -> commit id (annotated tags peeled), from ``git ls-remote``."""
    result = _git(["ls-remote", url], log)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["git ls-remote failed"])[-1]
        if _NETWORK.search(result.stderr):
            raise UpstreamError(f"no network to reach {spec} ({message}): pass --source with a local Simd checkout, "
                                "mirror or source archive")
        raise UsageError(f"--source {spec}: not a git repository git can read ({message})")
    refs: dict[str, str] = {}
    for line in result.stdout.splitlines():
        commit, _, name = line.partition("\t")
        if name.endswith("^{}"):
            refs[name[:-3]] = commit  # the peeled commit of an annotated tag wins over the tag object
        else:
            refs.setdefault(name, commit)
    return refs


def _git_fetch(url: str, spec: str, ref: str, dest: Path, log: Callable[[str], None]) -> Source:
    refs = _remote_refs(url, spec, log)
    kind, refname, commit = _classify(ref, refs)
    if kind == "unknown":
        raise UsageError(f"--ref {ref}: no tag, branch or commit of that name in {spec} (list them: git ls-remote "
                         f"{spec})")
    dest.mkdir(parents=True)
    _checked(_git(["init", "-q", str(dest)], log), "git init")
    fetched = False
    if refname is not None or (commit is not None and len(commit) == 40):
        # One commit, no history: enough to build, and the version script's `git rev-parse` works on it.
        fetched = _git(["-C", str(dest), "fetch", "-q", "--depth", "1", "--no-tags", url, refname or commit or ""],
                       log).returncode == 0
    if not fetched:  # an abbreviated commit, or a server that refuses to send a bare commit id: the whole history
        _checked(_git(["-C", str(dest), "fetch", "-q", "--no-tags", url, "+refs/heads/*:refs/remotes/origin/*",
                       "+refs/tags/*:refs/tags/*"], log), f"git fetch {spec}")
        resolved = _git(["-C", str(dest), "rev-parse", "--verify", "-q", f"{commit or ref}^{{commit}}"], log)
        if resolved.returncode != 0:
            raise UsageError(f"--ref {ref}: no commit of that id in {spec} (list tags and branches: git ls-remote "
                             f"{spec})")
        commit = resolved.stdout.strip()
        checkout = ["checkout", "-q", "--detach", commit]
    elif kind == "branch":
        # On a local branch of the same name, so that upstream's version string says "<version>.<branch>-<rev>".
        checkout = ["checkout", "-q", "-B", ref, "FETCH_HEAD"]
    else:
        checkout = ["checkout", "-q", "--detach", "FETCH_HEAD"]
    _checked(_git(["-C", str(dest), *checkout], log), "git checkout")
    head = _checked(_git(["-C", str(dest), "rev-parse", "HEAD"], log), "git rev-parse").stdout.strip()
    tags = sorted(name[len("refs/tags/"):] for name, target in refs.items()
                  if name.startswith("refs/tags/") and target == head)
    _require_project(dest, spec)
    return Source(dest, ref, kind, head, spec, tags)


def _classify(ref: str, refs: dict[str, str]) -> tuple[str, str | None, str | None]:
    """(kind, refname to fetch or None, commit id or prefix or None) of `ref` among the remote's refs."""
    for kind, name in (("tag", f"refs/tags/{ref}"), ("branch", f"refs/heads/{ref}"), ("ref", ref)):
        if name in refs:
            return ("tag" if name.startswith("refs/tags/") else "branch" if name.startswith("refs/heads/") else kind,
                    name, refs[name])
    if _HEX.fullmatch(ref):
        lowered = ref.lower()
        tips = {commit for commit in refs.values() if commit.startswith(lowered)}
        return "commit", None, tips.pop() if len(tips) == 1 else lowered
    return "unknown", None, None


def _checked(result: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["failed"])[-1]
        if _NETWORK.search(result.stderr):
            raise UpstreamError(f"{what}: no network ({message}): pass --source with a local Simd checkout, mirror "
                                "or source archive")
        if "No space left on device" in result.stderr:
            raise UpstreamError(f"{what}: disk full ({message}): free some space and run again")
        raise UpstreamError(f"{what} failed: {message}")
    return result


def _require_project(root: Path, spec: str) -> None:
    if not (root / "prj" / "cmake" / "CMakeLists.txt").is_file():
        raise UsageError(f"--source {spec}: not Simd's source (it has no prj/cmake/CMakeLists.txt)")


# -- archives -------------------------------------------------------------------------------------------------------
def _extract(archive: Path, ref: str, dest: Path, log: Callable[[str], None]) -> Source:
    log(f"extracting {archive}")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    dest.mkdir(parents=True)
    commit = ""
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zipped:
                _check_members(archive, zipped.namelist(), dest)
                zipped.extractall(dest)
                commit = zipped.comment.decode(errors="replace").strip()
        else:
            with tarfile.open(archive) as tarred:
                members = tarred.getmembers()
                _check_members(archive, [m.name for m in members], dest)
                unsafe = [m.name for m in members if not (m.isfile() or m.isdir() or m.issym() or m.islnk())]
                if unsafe:
                    raise UsageError(f"--source {archive}: holds special files ({unsafe[0]}): not a source archive")
                if hasattr(tarfile, "data_filter"):  # refuses links that point outside, devices, odd modes
                    tarred.extractall(dest, filter="data")
                else:
                    links = [m.name for m in members if m.issym() or m.islnk()]
                    if links:
                        raise UsageError(f"--source {archive}: holds links ({links[0]}), which this Python cannot "
                                         "extract safely: use a checkout, or Python >= 3.11.4")
                    tarred.extractall(dest)
                commit = str(tarred.pax_headers.get("comment", "")).strip()  # `git archive` writes the commit here
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as error:
        raise UsageError(f"--source {archive}: cannot read the archive ({error})") from None
    roots = sorted(p.parents[2] for p in dest.glob("**/prj/cmake/CMakeLists.txt"))
    if not roots:
        raise UsageError(f"--source {archive}: not Simd's source (no prj/cmake/CMakeLists.txt inside)")
    kind_commit = commit.lower() if re.fullmatch(r"[0-9a-fA-F]{40}", commit) else f"sha256-{digest}"
    return Source(roots[0], ref, "archive", kind_commit, str(archive))


def _check_members(archive: Path, names: list[str], dest: Path) -> None:
    """No member may land outside `dest` (absolute names, ..)."""
    base = dest.resolve()
    for name in names:
        target = (dest / name).resolve()
        if target != base and base not in target.parents:
            raise UsageError(f"--source {archive}: member {name!r} would be written outside the build directory")


def archive_label(archive: Path) -> str:
    """A name for a build of an archive without --ref: the file name without its suffix."""
    name = archive.name
    for suffix in ARCHIVE_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
