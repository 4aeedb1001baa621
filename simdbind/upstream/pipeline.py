"""One build, every step: check the arguments and tools, fetch, configure, compile, turn the header into cffi
declarations and compare it with ours, install into the cache atomically, then load the build, check its version
and run the conformance suite's ``smoke`` profile on it."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from simdbind.upstream import build as builder
from simdbind.upstream import cache, header, source
from simdbind.upstream.options import DEFAULT_REF, DEFAULT_SOURCE, BuildOptions, UpstreamError, UsageError
from simdbind.upstream.progress import Progress, duration
from simdbind.upstream.raw import CDEF_NAME
from simdbind.upstream.toolchain import BACKENDS, Toolchain, architecture, check_max_isa, require_program

#: Free space a build needs on the cache's disk: the source and object files of 700 units and the library.
REQUIRED_FREE_BYTES = 2 * 2**30
#: The smoke profile's report, written into the entry by the check.
SMOKE_REPORT = "smoke.json"


@dataclass
class Request:
    """What `simdbind upstream build` was asked for (see its --help)."""

    ref: str | None = None
    source: str | None = None
    jobs: int | None = None
    check: bool = True
    force: bool = False
    keep_build: bool = False
    cache_dir: Path | None = None
    max_isa: str | None = None
    coverage: bool = False


def compiled_backends(library: Path, family: str) -> list[str]:
    """The backends whose code the library holds (their C++ namespaces in its symbol table)."""
    data = library.read_bytes()
    return [backend.name for backend in BACKENDS[family] if backend.symbol in data]


def build(request: Request, out: TextIO | None = None, err: TextIO | None = None) -> cache.Entry:
    """Make (or find) the cache entry a request asks for; raises UpstreamError (one line) when it cannot. Steps are
    reported on `out` (default stdout), the compile's progress on `err` (default stderr)."""
    out = out or sys.stdout
    err = err or sys.stderr
    spec = request.source or DEFAULT_SOURCE
    source.check_spec(spec, request.ref)
    archive = Path(spec).is_file()
    ref = request.ref or (source.archive_label(Path(spec)) if archive else DEFAULT_REF)
    if request.jobs is not None and request.jobs < 1:
        raise UsageError(f"--jobs: must be >= 1, got {request.jobs}")
    jobs = request.jobs or builder.jobs()
    family = architecture()
    check_max_isa(family, request.max_isa)
    if not archive:
        require_program("git", "Simd's source is fetched with git; or pass --source ARCHIVE")
    tools = Toolchain.find()
    base = (request.cache_dir or cache.root()).resolve()
    cache.require_free_space(base, REQUIRED_FREE_BYTES)

    fetch_log: list[str] = []
    fetch_dir = base / ".work" / f".fetch-{os.getpid()}"
    shutil.rmtree(fetch_dir, ignore_errors=True)
    print(f"fetching {ref} from {spec}", file=out, flush=True)
    try:
        fetched = source.fetch(spec, ref, fetch_dir / "src", fetch_log.append)
        options = BuildOptions(backends=tuple(b.name for b in tools.backends(family, request.max_isa)),
                               max_isa=request.max_isa, coverage=request.coverage)
        entry_key = cache.key(ref, fetched.commit, tools.compiler, options)
        with cache.locked(base, entry_key, lambda message: print(message, file=out, flush=True)):
            existing = base / entry_key
            if existing.is_dir() and (existing / cache.MANIFEST).is_file() and not request.force:
                print(f"already built: {existing} (--force builds it again)", file=out)
                entry = next(e for e in cache.entries(base) if e.key == entry_key)
            else:
                entry = _make(request, fetched, fetch_dir, base, entry_key, tools, options, family, jobs, fetch_log,
                              out, err)
    except OSError as error:
        if builder.disk_full(error):
            raise UpstreamError(f"disk full ({error}): free some space at {base} and run again") from None
        raise
    finally:
        shutil.rmtree(fetch_dir, ignore_errors=True)
    if request.check:
        check(entry, out)
    print(f"ready: simdbind.load({entry.name!r}) -> {entry.library}", file=out)
    return entry


def _make(request: Request, fetched: source.Source, fetch_dir: Path, base: Path, entry_key: str, tools: Toolchain,
          options: BuildOptions, family: str, jobs: int, fetch_log: list[str], out: TextIO,
          err: TextIO) -> cache.Entry:
    """Configure, compile and install one entry (holding its key's lock)."""
    cache.clean_leftovers(base, entry_key)
    # A coverage build's library writes its counters next to its objects, at the paths they were compiled at: its
    # tree is made where it stays (removed with the entry).
    work = cache.tree(base, entry_key) if options.coverage else base / ".work" / entry_key
    work.parent.mkdir(parents=True, exist_ok=True)
    os.rename(fetch_dir, work)
    fetched = dataclasses.replace(fetched, root=work / "src" / fetched.root.relative_to(fetch_dir / "src"))
    root = fetched.root
    build_dir = work / "build"
    logs = base / ".logs"
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{entry_key}.log"
    staged: Path | None = None
    succeeded = False
    started = time.monotonic()
    try:
        with open(log_path, "w", encoding="utf-8") as log:
            log.write("\n".join(fetch_log) + "\n")
            switches = {b.name: b.option for b in BACKENDS[family] if b.option}
            print(f"configuring {fetched.ref} ({fetched.commit[:12]}) with {tools.compiler}, backends "
                  f"{', '.join(options.backends)}; log: {log_path}", file=out, flush=True)
            builder.run(builder.configure_command(tools, root, build_dir, options, switches), log, log_path,
                        "configure (cmake)", cwd=work)
            print(f"compiling with {jobs} jobs ({tools.generator}{', ccache' if tools.ccache else ''})", file=out,
                  flush=True)
            builder.run(builder.build_command(tools, build_dir, jobs), log, log_path, "compile",
                        Progress(err), cwd=work)
        seconds = time.monotonic() - started
        library = builder.library_file(build_dir)
        cdef = header.preprocess(fetched.header.read_text(errors="replace"), tools.cc)
        header.ffi_of(cdef)  # cffi must parse it: refuse an entry whose bindings would not load
        differences = _compare_with_ours(cdef, out)
        staged = cache.staging(base, entry_key)
        shutil.copy2(library, staged / library.name)
        (staged / CDEF_NAME).write_text(f"/* cffi declarations of {fetched.header.name} at {fetched.commit}, made by "
                                        f"simdbind upstream build */\n{cdef}")
        shutil.copy2(log_path, staged / cache.LOG)
        version_file = root / "prj" / "txt" / "FullVersion.txt"  # what upstream's version script compiled in
        manifest: dict[str, Any] = {
            "schema": cache.SCHEMA, "key": entry_key, "ref": fetched.ref, "kind": fetched.kind,
            "commit": fetched.commit, "tags": fetched.tags, "source": fetched.origin,
            "version": version_file.read_text().strip() if version_file.is_file() else fetched.user_version,
            "backends": compiled_backends(library, family), "compiler": tools.compiler,
            "options": options.key_data(), "generator": tools.generator, "jobs": jobs,
            "ccache": bool(tools.ccache), "library": library.name, "build_seconds": round(seconds, 1),
            "variant": options.variant, "build_tree": str(build_dir) if options.coverage else None,
            "header_differences": differences, "date": cache.now(),
        }
        manifest["size"] = cache.directory_size(staged)
        cache.write_manifest(staged, manifest)
        entry = cache.install(staged, base, entry_key)
        staged = None
        succeeded = True
        print(f"built in {duration(seconds)}: backends {', '.join(manifest['backends'])}", file=out, flush=True)
        return entry
    finally:
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        if not (request.keep_build or (options.coverage and succeeded)):
            shutil.rmtree(work, ignore_errors=True)
        if succeeded:
            log_path.unlink(missing_ok=True)  # kept in the entry; a failed build's stays where the error said


def _compare_with_ours(cdef: str, out: TextIO) -> list[str] | None:
    """Differences between csrc/simd_synet.h and the fetched header, printed by name (None: ours is not here)."""
    ours = header.our_header()
    if ours is None:
        print("header comparison skipped: csrc/simd_synet.h is only in a checkout of simdbind", file=out)
        return None
    from simdbind.upstream.toolchain import _compiler

    differences = header.compare(header.preprocess(ours.read_text(), _compiler("CC", ("cc", "gcc", "clang"), "cc")),
                                 cdef)
    for line in differences:
        print(f"header difference: {line}", file=out)
    if not differences:
        print("header: every function and enum value simdbind declares matches Simd's header", file=out)
    return differences


def check(entry: cache.Entry, out: TextIO) -> None:
    """Load the build, compare its version with the one it was built with, count the functions its raw bindings
    can call, and run the smoke profile of the conformance suite on it."""
    import simdbind
    from simdbind.upstream.raw import raw

    try:
        library = simdbind.load(str(entry.library))
    except simdbind.LibraryError as error:
        raise UpstreamError(f"built, but it does not load: {error}") from None
    if library.version != entry.manifest["version"]:
        raise UpstreamError(f"{entry.library} reports version {library.version!r}, the build wrote "
                            f"{entry.manifest['version']!r}: remove it (simdbind upstream remove {entry.key})")
    counts = raw(library).counts()
    entry.manifest["functions"] = counts
    cache.write_manifest(entry.path, entry.manifest)
    print(f"version {library.version}; raw bindings: {counts['callable']} of {counts['declared']} declared functions "
          f"callable ({counts['numpy']} with arrays only)", file=out, flush=True)
    # In a process of its own: a defect of the build that kills the process (upstream has had such) is a failed
    # check, not a dead command, and the run sees only the suite's registered functions.
    command = [sys.executable, "-m", "simdbind", "conformance", "--library", str(entry.library), "--profile",
               "smoke", "--no-progress", "--report-json", str(entry.path / SMOKE_REPORT), "--junit-xml", "",
               "--report-md", "", "--report-html", ""]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    out.write(result.stdout + result.stderr)
    code = result.returncode
    if code != 0:
        raise UpstreamError(f"the smoke profile fails on {entry.library} (above); the build stays in the cache")
