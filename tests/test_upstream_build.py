"""`simdbind upstream build` end to end on a local fixture project (tests/upstream_fixture.py): arguments, cache key
and layout, version strings, names, the lock, the atomic install, and each error as one line with its exit code.
No network: every source is a local git repository or archive."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import simdbind
import simdbind.cli
from simdbind.upstream import build as builder
from simdbind.upstream import cache, cli, names, pipeline, source
from simdbind.upstream.options import BuildOptions, UpstreamError, UsageError
from simdbind.upstream.progress import Progress, parse
from tests.upstream_fixture import archive, make_fixture


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    directory = tmp_path_factory.mktemp("fixture") / "simd"
    return directory, make_fixture(directory)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv("SIMDBIND_UPSTREAM_CACHE", str(directory))
    return directory


def run_build(*args: str) -> tuple[int, str, str]:
    """`build_simd.py ARGS` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = cli.build_main(list(args))
    except SystemExit as exit_:  # argparse's usage errors
        code = int(exit_.code or 0)
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def only_entry(directory: Path) -> cache.Entry:
    found = cache.entries(directory)
    assert len(found) == 1, [e.key for e in found]
    return found[0]


@pytest.fixture(scope="module")
def shared(fixture_repo, tmp_path_factory) -> Path:
    """A cache with the fixture's release built and checked, and its master built: the tests that only read share it."""
    repo, _ = fixture_repo
    directory = tmp_path_factory.mktemp("shared") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SIMDBIND_UPSTREAM_CACHE", str(directory))
        code, out, err = run_build("--source", str(repo))  # the default ref: v7.1.162
        assert code == 0, err
        (directory / "release.out").write_text(out)
        code, _, err = run_build("--source", str(repo), "--ref", "master", "--no-check")
        assert code == 0, err
    return directory


@pytest.fixture
def shared_cache(shared, monkeypatch) -> Path:
    monkeypatch.setenv("SIMDBIND_UPSTREAM_CACHE", str(shared))
    return shared


def entry_of(directory: Path, ref: str) -> cache.Entry:
    return next(e for e in cache.entries(directory) if e.manifest["ref"] == ref)


def test_a_tag_builds_installs_and_loads_by_name(fixture_repo, shared_cache):
    _, commits = fixture_repo
    entry = entry_of(shared_cache, "v7.1.162")
    m = entry.manifest
    assert (m["ref"], m["kind"], m["commit"], m["tags"]) == ("v7.1.162", "tag", commits["release"], ["v7.1.162"])
    # Upstream's version script: USER_VERSION.BRANCH-REVISION; a tag is checked out detached, so the branch is HEAD.
    assert m["version"] == f"7.1.162.HEAD-{commits['release'][:7]}"
    assert m["backends"] == ["base", "sse41"]
    assert m["options"]["backends"] and m["options"]["build_type"] == "Release"
    assert m["compiler"].split()[0] in ("gcc", "clang")
    assert sorted(p.name for p in entry.path.iterdir()) == ["build.log", "cdef.h", "libSimd.so", "manifest.json",
                                                            "smoke.json"]
    assert m["size"] == sum((entry.path / name).stat().st_size for name in ("build.log", "cdef.h", "libSimd.so"))
    assert "-DSIMD_SHARED=ON" in (entry.path / "build.log").read_text()
    # Nothing is left beside the entries but the (empty) bookkeeping directories.
    assert sorted(p.name for p in shared_cache.iterdir() if p.name.startswith(".")) == [".locks", ".logs", ".work"]
    assert not list((shared_cache / ".work").iterdir()) and not list((shared_cache / ".logs").iterdir())
    out = (shared_cache / "release.out").read_text()
    assert f"ready: simdbind.load('upstream@v7.1.162') -> {entry.library}" in out

    for name in ("upstream", "upstream@v7.1.162", f"upstream@{commits['release'][:8]}"):
        library = simdbind.load(name)
        assert library.path == str(entry.library) and library.version == m["version"]
    assert entry.key.startswith(f"v7.1.162-{commits['release'][:10]}-")


def test_a_branch_build_says_its_branch_in_the_version(fixture_repo, shared_cache, monkeypatch):
    _, commits = fixture_repo
    m = entry_of(shared_cache, "master").manifest
    assert (m["kind"], m["commit"], m["version"]) == ("branch", commits["master"],
                                                      f"7.1.162.master-{commits['master'][:7]}")
    assert simdbind.load("upstream@master").version == m["version"]
    monkeypatch.setenv("SIMD_LIBRARY", "upstream@master")  # names work wherever a library is taken
    assert simdbind.load().version == m["version"]


def test_names_work_in_the_command_line_and_the_suites_implementations(shared_cache, capsys):
    from simdbind.conformance.implementations import implementations

    master = entry_of(shared_cache, "master")
    assert simdbind.cli.main(["info", "--library", "upstream@master"]) == 0
    out = capsys.readouterr().out
    assert f"library       {master.library}" in out and f"version       {master.manifest['version']}" in out
    chosen = implementations(["upstream", "upstream@master"], "all", None)
    assert [impl.library.path for impl in chosen] == [str(entry_of(shared_cache, "v7.1.162").library),
                                                      str(master.library)]


def test_a_commit_abbreviated_or_full_builds_detached(fixture_repo, cache_dir):
    repo, commits = fixture_repo
    code, _, err = run_build("--source", repo.as_uri(), "--ref", commits["master"][:9], "--no-check")
    assert code == 0, err
    m = only_entry(cache_dir).manifest
    assert (m["kind"], m["commit"], m["version"]) == ("commit", commits["master"],
                                                      f"7.1.162.HEAD-{commits['master'][:7]}")


def test_the_same_build_is_found_not_made_again_and_force_rebuilds(fixture_repo, shared_cache):
    repo, _ = fixture_repo
    entry = entry_of(shared_cache, "master")
    built = entry.library.stat().st_mtime_ns
    code, out, _ = run_build("--source", str(repo), "--ref", "master", "--no-check")
    assert code == 0 and "already built" in out and entry.library.stat().st_mtime_ns == built
    code, out, _ = run_build("--source", str(repo), "--ref", "master", "--no-check", "--force")
    assert code == 0 and "already built" not in out
    assert entry_of(shared_cache, "master").key == entry.key and entry.library.stat().st_mtime_ns != built


def test_an_archive_builds_with_the_commit_it_records_and_no_git_version(fixture_repo, cache_dir, tmp_path):
    repo, commits = fixture_repo
    tarball = archive(repo, "v7.1.162", tmp_path / "Simd-7.1.162.tar.gz")
    code, _, err = run_build("--source", str(tarball), "--no-check")
    assert code == 0, err
    m = only_entry(cache_dir).manifest
    # No .git in an archive: the version is the bare USER_VERSION, even inside another repository.
    assert (m["ref"], m["kind"], m["commit"], m["version"]) == ("Simd-7.1.162", "archive", commits["release"],
                                                                "7.1.162")
    assert simdbind.load("upstream@Simd-7.1.162").version == "7.1.162"


def test_the_check_loads_counts_and_runs_the_smoke_profile(shared_cache):
    entry = entry_of(shared_cache, "v7.1.162")
    out = (shared_cache / "release.out").read_text()
    # SimdVersion, SimdFixtureScale and SimdFixtureColor are exported; SimdFixtureNotExported is only declared.
    assert entry.manifest["functions"] == {"declared": 4, "callable": 3, "numpy": 3}
    assert "raw bindings: 3 of 4 declared functions callable" in out
    # The fixture has none of the Synet functions: the smoke profile skips every case, and fails none.
    assert re.search(r"^0 passed, 0 failed, \d+ skipped", out, re.M), out
    report = json.loads((entry.path / "smoke.json").read_text())
    assert report["meta"]["profile"] == "smoke"


def test_raw_bindings_of_a_cached_build(shared_cache):
    raw = simdbind.load("upstream").raw
    src = np.arange(5, dtype=np.float32)
    dst = np.zeros(5, np.float32)
    raw.SimdFixtureScale(src, src.size, 2.5, dst)
    np.testing.assert_array_equal(dst, src * np.float32(2.5))
    assert raw.SimdFixtureColor(raw.SimdFixtureColorType.SimdFixtureGreen) == 20
    assert int(raw.SimdFixtureColorType.SimdFixtureRed) == 1
    assert "Sizes are NOT checked" in raw.SimdFixtureScale.__doc__
    with pytest.raises(simdbind.FunctionNotAvailableError, match="SimdFixtureNotExported is declared"):
        raw.SimdFixtureNotExported()


# -- errors: one line each, exit code 2 for usage, 1 for a failed build ------------------------------------------------
def test_an_unknown_ref_is_a_usage_error(fixture_repo, cache_dir):
    repo, _ = fixture_repo
    code, _, err = run_build("--source", str(repo), "--ref", "v9.9.999", "--no-check")
    assert code == 2
    assert err.strip().count("\n") == 0
    assert f"--ref v9.9.999: no tag, branch or commit of that name in {repo}" in err
    assert not cache.entries(cache_dir)


@pytest.mark.parametrize("args, message", [
    (["--source", "/nonexistent/simd"], "--source /nonexistent/simd: no such file or directory"),
    (["--jobs", "0"], "argument -j/--jobs: must be an integer >= 1, got '0'"),
    (["--source", __file__], "a file that is not a source archive"),
])
def test_bad_arguments_are_usage_errors_before_any_work(cache_dir, args, message):
    code, _, err = run_build(*args, "--no-check")
    assert code == 2 and message in err, err
    assert not cache_dir.exists()


def test_a_compile_error_names_the_error_and_the_log_and_installs_nothing(fixture_repo, cache_dir):
    repo, _ = fixture_repo
    code, _, err = run_build("--source", str(repo), "--ref", "broken", "--no-check")
    assert code == 1
    line = err.strip().splitlines()[-1]  # after the progress lines
    assert line.startswith("simdbind upstream: compile failed:") and "SimdLib.c" in line and "error" in line
    assert "compile failed:" in line and "SimdLib.c" in line and "error" in line
    log = Path(line.rsplit("(log: ", 1)[1].rstrip(")"))
    assert log.is_file() and "SimdFixtureBroken" in log.read_text()
    assert not cache.entries(cache_dir)
    assert not list((cache_dir / ".work").iterdir()) and not list(cache_dir.glob(".staging-*"))


def test_an_interrupted_build_leaves_no_entry(fixture_repo, cache_dir, monkeypatch):
    repo, _ = fixture_repo
    real_run = builder.run

    def interrupted(command, log, log_path, what, progress=None, cwd=None):
        if what == "compile":
            raise KeyboardInterrupt
        real_run(command, log, log_path, what, progress, cwd)

    monkeypatch.setattr(builder, "run", interrupted)
    code, _, err = run_build("--source", str(repo), "--no-check")
    assert code == 130 and "interrupted: nothing was installed" in err
    assert not cache.entries(cache_dir)
    assert not list((cache_dir / ".work").iterdir()) and not list(cache_dir.glob(".staging-*"))


def test_missing_tools_are_named_with_their_packages(fixture_repo, cache_dir, monkeypatch):
    repo, _ = fixture_repo
    from simdbind.upstream import toolchain

    real = toolchain.find_program
    for missing, words in (("git", "git not found"), ("cmake", "pip install cmake")):
        monkeypatch.setattr(toolchain, "find_program", lambda name, m=missing: None if name == m else real(name))
        code, _, err = run_build("--source", str(repo), "--no-check")
        assert code == 1 and words in err and "apt-get install" in err, err
    monkeypatch.setattr(toolchain, "find_program", real)
    monkeypatch.setenv("CXX", "no-such-compiler++")
    code, _, err = run_build("--source", str(repo), "--no-check")
    assert code == 1 and "CXX=no-such-compiler++: no such compiler" in err


def test_no_network_says_to_use_a_local_source(monkeypatch, tmp_path):
    def offline(args, log, cwd=None):
        return subprocess.CompletedProcess(args, 128, "", "fatal: unable to access 'https://github.com/x/y.git/': "
                                                          "Could not resolve host: github.com\n")

    monkeypatch.setattr(source, "_git", offline)
    with pytest.raises(UpstreamError, match="no network to reach https://github.com/x/y.git .*pass --source") as info:
        source.fetch("https://github.com/x/y.git", "v7.1.162", tmp_path / "src", lambda line: None)
    assert info.value.exit_code == 1


def test_a_full_disk_is_refused_before_work_and_recognized_in_a_log(fixture_repo, cache_dir, monkeypatch, tmp_path):
    repo, _ = fixture_repo
    monkeypatch.setattr(pipeline, "REQUIRED_FREE_BYTES", 2**62)
    code, _, err = run_build("--source", str(repo), "--no-check")
    assert code == 1 and "disk full:" in err and "SIMDBIND_UPSTREAM_CACHE" in err
    log = tmp_path / "x.log"
    log.write_text("[3/9] Building CXX object a.o\nfatal error: cannot write a.o: No space left on device\n")
    assert "disk full" in str(builder.failure("compile", log))


# -- the cache: key, lock, atomic install, list, remove ---------------------------------------------------------------
def test_the_key_changes_with_commit_compiler_and_each_option():
    base = cache.key("v7.1.162", "a" * 40, "gcc 12.2.0", BuildOptions(backends=("base", "avx2")))
    assert base == cache.key("v7.1.162", "a" * 40, "gcc 12.2.0", BuildOptions(backends=("base", "avx2")))
    others = {cache.key("v7.1.162", "b" * 40, "gcc 12.2.0", BuildOptions(backends=("base", "avx2"))),
              cache.key("v7.1.162", "a" * 40, "clang 16.0.6", BuildOptions(backends=("base", "avx2"))),
              cache.key("v7.1.162", "a" * 40, "gcc 12.2.0", BuildOptions(backends=("base",))),
              cache.key("v7.1.162", "a" * 40, "gcc 12.2.0", BuildOptions("Debug", ("base", "avx2")))}
    assert base not in others and len(others) == 4


def test_the_lock_makes_a_second_build_of_a_key_wait(tmp_path):
    order: list[str] = []
    waited = threading.Event()

    def second() -> None:
        with cache.locked(tmp_path, "k", lambda message: (order.append("waiting"), waited.set())):
            order.append("second")

    with cache.locked(tmp_path, "k", order.append):
        thread = threading.Thread(target=second)
        thread.start()
        assert waited.wait(10)
        time.sleep(0.1)
        order.append("first done")
    thread.join(10)
    assert order == ["waiting", "first done", "second"]


def test_two_builds_of_one_key_at_once_make_one_entry(fixture_repo, tmp_path):
    repo, _ = fixture_repo
    env = dict(os.environ, SIMDBIND_UPSTREAM_CACHE=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "simdbind", "upstream", "build", "--source", str(repo), "--no-check"]
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    results = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], results
    assert sum("already built" in out for out, _ in results) == 1
    entry = only_entry(tmp_path / "cache")
    assert json.loads((entry.path / "manifest.json").read_text())["key"] == entry.key


def test_install_replaces_in_one_rename_and_listing_ignores_work_in_progress(tmp_path):
    for version in ("1", "2"):
        staged = cache.staging(tmp_path, "key")
        (staged / "libSimd.so").write_text(version)
        cache.write_manifest(staged, {"ref": "r", "library": "libSimd.so", "date": version})
        entry = cache.install(staged, tmp_path, "key")
        assert entry.library.read_text() == version
    (tmp_path / ".staging-other-1").mkdir()
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "manifest.json").write_text("{not json")
    assert [e.key for e in cache.entries(tmp_path)] == ["key"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".staging-other-1", "damaged", "key"]


def test_list_shows_each_build(fixture_repo, shared_cache, capsys):
    _, commits = fixture_repo
    assert simdbind.cli.main(["upstream", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "commit", "version", "backends", "compiler", "size", "built", "key"]
    rows = {line.split()[0]: line for line in lines[1:3]}
    assert commits["release"][:10] in rows["upstream@v7.1.162"] and "base,sse41" in rows["upstream@master"]
    assert lines[3] == f"cache: {shared_cache}"


def test_remove_by_name_by_key_and_all(cache_dir, capsys):
    for ref, date in (("v7.1.162", "1"), ("master", "2"), ("master", "3")):
        staged = cache.staging(cache_dir, f"{ref}-{date}")
        cache.write_manifest(staged, {"ref": ref, "library": "libSimd.so", "date": date})
        cache.install(staged, cache_dir, f"{ref}-{date}")
    assert simdbind.cli.main(["upstream", "remove", "master-2"]) == 0
    assert [e.key for e in cache.entries(cache_dir)] == ["v7.1.162-1", "master-3"]
    assert simdbind.cli.main(["upstream", "remove", "upstream@master"]) == 0
    assert [e.name for e in cache.entries(cache_dir)] == ["upstream@v7.1.162"]
    assert simdbind.cli.main(["upstream", "remove", "upstream@master"]) == 2
    assert "no cached build named upstream@master" in capsys.readouterr().err
    assert simdbind.cli.main(["upstream", "remove"]) == 2
    assert simdbind.cli.main(["upstream", "remove", "--all"]) == 0
    assert cache.entries(cache_dir) == [] and not list(cache_dir.glob(".removing-*"))


# -- names and progress -------------------------------------------------------------------------------------------------
def test_names_resolve_only_names_and_a_missing_build_gives_the_command(cache_dir):
    assert names.resolve("bundled") == "bundled" and names.resolve("/x/libSimd.so") == "/x/libSimd.so"
    assert names.ref_of("upstream") == "v7.1.162" and names.ref_of("upstream@master") == "master"
    with pytest.raises(simdbind.LibraryError, match=r"`simdbind upstream build --ref v7\.0\.160`"):
        simdbind.load("upstream@v7.0.160")
    with pytest.raises(simdbind.LibraryError, match="names no ref"):
        simdbind.load("upstream@")


def test_progress_counts_units_and_estimates_what_is_left():
    assert parse("[12/734] Building CXX object x.o") == (12, 734) and parse("[ 45%] Building") == (45, 100)
    assert parse("-- Configuring done") is None
    now = [100.0]
    stream = io.StringIO()
    progress = Progress(stream, interactive=False, interval=10, clock=lambda: now[0])
    for done, at in ((1, 101), (2, 103), (11, 111), (12, 112), (734, 800)):
        now[0] = at
        progress.update(done, 734)
    lines = stream.getvalue().splitlines()
    # Plain lines, at most one per 10 s (and the last): the first unit, then at 111 s, then the end.
    assert lines == ["build: 1/734 units (0%), 0m01s elapsed",
                     "build: 11/734 units (1%), 0m11s elapsed, about 12m03s left",  # 1 s a unit since the first
                     "build: 734/734 units (100%), 11m40s elapsed"]
    tty = io.StringIO()
    progress = Progress(tty, interactive=True, clock=lambda: 0.0)
    progress.update(1, 2)
    progress.close()
    assert tty.getvalue().startswith("\rbuild: 1/2 units (50%)") and tty.getvalue().endswith("\n")


def test_the_estimate_follows_the_recent_rate_not_the_ccache_hits_of_the_start():
    now = [0.0]
    progress = Progress(io.StringIO(), interactive=False, clock=lambda: now[0])
    for at, done in ((0, 1), (10, 500), (300, 510), (400, 520)):  # 499 units from ccache in 10 s, then 20 s a unit
        now[0] = at
        progress.update(done, 734)
    # From the last point at least WINDOW old, (10, 500): 20 units in 390 s, 214 left: 4173 s.
    assert progress.remaining(400) == pytest.approx(214 * 390 / 20)


def test_build_simd_py_is_the_same_command(fixture_repo, tmp_path):
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, str(root / "build_simd.py"), "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "--source DIR|URL|ARCHIVE" in result.stdout and "--no-check" in result.stdout
    result = subprocess.run([sys.executable, "-m", "simdbind", "upstream", "build", "--ref"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "expected one argument" in result.stderr


def test_max_isa_leaves_out_the_backends_above_and_names_the_build(fixture_repo, cache_dir):
    repo, _ = fixture_repo
    code, out, err = run_build("--source", str(repo), "--max-isa", "avx512bw", "--no-check")
    assert code == 0, err
    entry = only_entry(cache_dir)
    assert entry.name == "upstream@v7.1.162:avx512bw" and entry.variant == "avx512bw"
    assert entry.manifest["options"]["max_isa"] == "avx512bw"
    assert "avx512vnni" not in entry.manifest["options"]["backends"]
    log = (entry.path / "build.log").read_text()
    assert "-DSIMD_AVX512VNNI=OFF" in log and "-DSIMD_AMXBF16=OFF" in log
    # The standard name does not pick a variant, and the variant's name does.
    with pytest.raises(simdbind.LibraryError, match="simdbind upstream build`"):
        names.resolve("upstream@v7.1.162")
    assert names.resolve("upstream@v7.1.162:avx512bw") == str(entry.library)
    with pytest.raises(simdbind.LibraryError, match="build --max-isa avx2`"):
        names.resolve("upstream:avx2")


@pytest.mark.parametrize("limit, message", [("avx9", "--max-isa avx9: not a backend of x86"),
                                            ("sse41", "upstream always builds avx2; the lowest limit is avx2")])
def test_a_max_isa_upstream_cannot_build_is_a_usage_error(fixture_repo, cache_dir, limit, message):
    repo, _ = fixture_repo
    code, _, err = run_build("--source", str(repo), "--max-isa", limit)
    assert code == 2 and message in err, err
    assert not cache_dir.exists() or not cache.entries(cache_dir)


def test_a_coverage_build_keeps_its_tree_where_the_library_writes_counters(fixture_repo, cache_dir):
    from simdbind.conformance import coverage

    repo, _ = fixture_repo
    code, out, err = run_build("--source", str(repo), "--coverage", "--no-check")
    assert code == 0, err
    entry = only_entry(cache_dir)
    assert entry.name == "upstream@v7.1.162:coverage"
    assert "--coverage -fprofile-update=atomic" in (entry.path / "build.log").read_text()  # threads: atomic counts
    tree = entry.build_tree
    assert tree is not None and tree == cache.tree(cache_dir, entry.key) / "build"
    build, library = coverage.open_build("upstream@v7.1.162:coverage")
    # The run loads the tree's own library: after a rebuild in the tree (a mutant and its restore) only that one
    # writes counters that match the tree's notes.
    assert (build.directory, build.kind, library) == (tree, "upstream", str(tree / entry.library.name))
    assert build.notes() and not build.counters()
    # Loading the entry's copy of the library and exiting writes the counters into the kept tree; so does the tree's.
    for path in (entry.library, library):
        build.reset()
        subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({str(path)!r}).SimdVersion()"],
                       check=True)
        assert build.counters()
    with pytest.raises(coverage.CoverageError, match="no build of v7.1.161:coverage"):
        coverage.open_build("upstream@v7.1.161:coverage")
    # Removing the entry removes its tree.
    assert simdbind.cli.main(["upstream", "remove", "upstream@v7.1.162:coverage"]) == 0
    assert not cache.entries(cache_dir) and not cache.tree(cache_dir, entry.key).exists()
