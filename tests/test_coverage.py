"""simdbind.conformance.coverage: the rule of which files count, and gcovr's numbers grouped per ISA, on tiny builds
compiled here with --coverage (a bundled-style one: one kernel source compiled per ISA; an upstream-style one: one
file per ISA and component)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simdbind import cli
from simdbind.conformance import coverage

pytest.importorskip("gcovr")
needs_gcc = pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("gcov")), reason="needs gcc and gcov")


@pytest.mark.parametrize("kind, source, isa, in_scope", [
    ("upstream", "src/Simd/SimdAvx512bwSynetConvolution32fNhwcDirect.cpp", "avx512bw", True),
    ("upstream", "CMakeFiles/Simd.dir/src/Simd/SimdBaseSynet.cpp", "base", True),
    ("upstream", "SimdSse41SynetPoolingMax8u.cpp", "sse41", True),
    ("upstream", "SimdAvx2Gemm32fNN.cpp", "avx2", True),
    ("upstream", "SimdAvx512bwWinograd3.cpp", "avx512bw", True),
    ("upstream", "SimdAvx512vnniSynetInnerProduct8i.cpp", "avx512vnni", True),
    ("upstream", "SimdAmxBf16SynetSoftmax16b.cpp", "amxbf16", True),
    ("upstream", "SimdAmxBf16BFloat16.cpp", "amxbf16", True),
    ("upstream", "SimdAvx512bwSynetActivation.cpp", "avx512bw", True),
    ("upstream", "SimdAvx512bwSynetAdd16b.cpp", "avx512bw", False),
    ("upstream", "SimdAvx512bwNeural.cpp", "avx512bw", False),
    ("upstream", "SimdSse41SynetConvolution16bNhwcGemmV1.cpp", "sse41", False),
    ("upstream", "SimdAvx2SynetMergedConvolution32f.cpp", "avx2", False),
    ("upstream", "SimdBaseSynetConvolution8i.cpp", "base", False),
    ("bundled", "CMakeFiles/_bundled.dir/units/convolution_conv_gemm_avx512bw.c", "avx512bw", True),
    ("bundled", "CMakeFiles/_bundled.dir/units/inner_product_inner_product_8i_avx512vnni.c", "avx512vnni", True),
    ("bundled", "CMakeFiles/_bundled.dir/csrc/runtime/dispatch.c", "common", True),
])
def test_the_rule_names_the_isa_and_the_scope(kind: str, source: str, isa: str, in_scope: bool) -> None:
    assert coverage.unit_of(kind, source) == coverage.Unit(isa, in_scope)
    assert coverage.isa_of(kind, source) == isa


@pytest.mark.parametrize("kind, source", [
    ("upstream", "SimdLib.cpp"), ("upstream", "SimdSynetConvolution32f.h"), ("upstream", "SimdFooBar.cpp"),
    ("bundled", "CMakeFiles/_bundled.dir/generated/_bundled.c"),
    ("bundled", "CMakeFiles/_fastcall.dir/simdbind/_fastcall.c"),
])
def test_what_is_no_unit_of_the_library(kind: str, source: str) -> None:
    assert coverage.unit_of(kind, source) is None


KERNEL = """\
int NAME(int x)
{
    if (x > 0)
        return x * 2;
    return kern_negate(x);
}
"""


def _compile(source: Path, objects: Path, extra: tuple[str, ...] = ()) -> Path:
    """One object, built the way CMake names it (objects/<relative source>.o), with its notes beside it."""
    target = objects / (source.name + ".o")
    target.parent.mkdir(parents=True, exist_ok=True)
    compiler = "g++" if source.suffix == ".cpp" else "gcc"
    subprocess.run([compiler, "--coverage", "-O0", "-c", str(source), "-o", str(target), *extra], check=True)
    return target


def _cache(build: Path, project: str, home: Path) -> None:
    build.mkdir(parents=True, exist_ok=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_PROJECT_NAME:STATIC={project}\n"
                                          f"CMAKE_HOME_DIRECTORY:INTERNAL={home}\n")


@pytest.fixture
def bundled_build(tmp_path: Path) -> tuple[Path, Path]:
    """A kernel source compiled for base and avx2 (as CMakeLists.txt makes units), plus a source compiled once, and
    a program that calls the base variant with a positive argument only."""
    checkout = tmp_path / "checkout"
    (checkout / "csrc" / "fam").mkdir(parents=True)
    (checkout / "csrc" / "fam" / "kern.h").write_text("static int kern_negate(int x)\n{\n    return -x;\n}\n")
    (checkout / "csrc" / "fam" / "kern.dispatch.c").write_text('#include "fam/kern.h"\n' + KERNEL)
    (checkout / "csrc" / "fam" / "api.c").write_text("int kern_base(int);\nint api(int x)\n{\n    return kern_base(x);\n}\n")
    build = checkout / "build" / "cov"
    _cache(build, "simdbind", checkout)
    units = build / "units"
    units.mkdir(parents=True)
    objects = []
    for isa in ("base", "avx2"):
        unit = units / f"fam_kern_{isa}.c"
        unit.write_text(f'#define NAME kern_{isa}\n#include "fam/kern.dispatch.c"\n')
        objects.append(_compile(unit, build / "CMakeFiles" / "_bundled.dir" / "units", ("-I", str(checkout / "csrc"))))
    objects.append(_compile(checkout / "csrc" / "fam" / "api.c", build / "CMakeFiles" / "_bundled.dir" / "csrc" / "fam"))
    main = checkout / "main.c"
    main.write_text("int api(int);\nint main(void) { return api(3) != 6; }\n")
    program = build / "program"
    subprocess.run(["gcc", "--coverage", str(main), *map(str, objects), "-o", str(program)], check=True)
    return build, program


@needs_gcc
def test_bundled_lines_and_branches_per_isa(bundled_build: tuple[Path, Path]) -> None:
    build_dir, program = bundled_build
    build = coverage.Build.open(build_dir)
    assert build.kind == "bundled"
    run = coverage.measure(build, [str(program)], label="tiny")
    assert run.exit_code == 0
    files = {(f.isa, f.file): (f.lines_covered, f.lines_total, f.branches_covered, f.branches_total)
             for f in run.files}
    # x = 3 takes the if: 3 of the kernel's 4 lines (the header, the test, the first return) and 1 of its 2 branches
    # at base, none of the header's function; nothing at avx2; the source compiled once ran whole.
    assert files == {("base", "csrc/fam/kern.dispatch.c"): (3, 4, 1, 2),
                     ("base", "csrc/fam/kern.h"): (0, 2, 0, 0),
                     ("avx2", "csrc/fam/kern.dispatch.c"): (0, 4, 0, 2),
                     ("avx2", "csrc/fam/kern.h"): (0, 2, 0, 0),
                     ("common", "csrc/fam/api.c"): (2, 2, 0, 0)}
    totals = run.by_isa()
    assert list(totals) == ["common", "base", "avx2"]
    assert (run.total().lines_covered, run.total().lines_total) == (5, 14)
    assert (run.total().branches_covered, run.total().branches_total) == (1, 4)

    # Reset: the counters are gone, and a run that writes none is an error, not a zero.
    assert build.reset() >= 1
    assert coverage.collect(build).total().lines_covered == 0
    with pytest.raises(coverage.CoverageError, match="wrote no counters"):
        coverage.measure(build, ["true"])


@needs_gcc
def test_counts_merge_across_processes(bundled_build: tuple[Path, Path]) -> None:
    build_dir, program = bundled_build
    build = coverage.Build.open(build_dir)
    first = coverage.measure(build, [str(program)])
    # Two runs of the program in one measured command: the same lines (merged counters, not doubled totals).
    twice = coverage.measure(build, ["sh", "-c", f"{program} && {program}"])
    assert twice.total().lines_covered == first.total().lines_covered == 5
    assert twice.total().lines_total == first.total().lines_total


@needs_gcc
def test_upstream_files_count_by_name_headers_do_not(tmp_path: Path) -> None:
    source = tmp_path / "simd" / "src" / "Simd"
    source.mkdir(parents=True)
    (source / "SimdKernel.h").write_text("inline int twice(int x)\n{\n    return 2 * x;\n}\n")
    negate = "static int kern_negate(int x) { return -x; }\n"
    (source / "SimdBaseSynetPooling.cpp").write_text('#include "SimdKernel.h"\n#define NAME pool\n' + negate + KERNEL)
    (source / "SimdAvx2SynetPooling.cpp").write_text("#define NAME pool_avx2\n" + negate + KERNEL)
    (source / "SimdBaseSynetConvolution16b.cpp").write_text(
        '#include "SimdKernel.h"\nint conv16b(int x)\n{\n    return twice(x);\n}\n')
    build = tmp_path / "build"
    _cache(build, "Simd", tmp_path / "simd" / "prj" / "cmake")
    objects = build / "CMakeFiles" / "Simd.dir" / "src" / "Simd"
    compiled = [_compile(source / name, objects) for name in
                ("SimdBaseSynetPooling.cpp", "SimdAvx2SynetPooling.cpp", "SimdBaseSynetConvolution16b.cpp")]
    main = tmp_path / "main.cpp"
    main.write_text("int pool(int); int conv16b(int);\nint main() { return pool(-1) + conv16b(1) != 3; }\n")
    program = build / "program"
    subprocess.run(["g++", "--coverage", str(main), *map(str, compiled), "-o", str(program)], check=True)

    opened = coverage.Build.open(build)
    assert opened.kind == "upstream" and opened.root == tmp_path
    run = coverage.measure(opened, [str(program)], check_scope=True)
    files = {(f.isa, Path(f.file).name): (f.lines_covered, f.lines_total, f.branches_covered, f.branches_total)
             for f in run.files}
    # pool(-1) skips the if (4 of 5 lines: kern_negate's, the header, the test, the second return); the header
    # file and the out-of-scope file are not counted.
    assert files == {("base", "SimdBaseSynetPooling.cpp"): (4, 5, 1, 2),
                     ("avx2", "SimdAvx2SynetPooling.cpp"): (0, 5, 0, 2)}
    assert [(Path(f.file).name, f.isa, f.lines_covered) for f in run.outside] == [
        ("SimdBaseSynetConvolution16b.cpp", "base", 2)]


def _run(cover: coverage.Coverage) -> dict[str, object]:
    return cover.to_json()


def test_json_round_trip_and_tables(tmp_path: Path) -> None:
    # Instances and source lines differ where a template is instantiated several times (upstream's C++).
    run = coverage.Coverage("bundled", "ci", ["simdbind", "conformance"], 0, 12.5, [
        coverage.FileCoverage(30, 40, 5, 10, 3, 4, 1, 2, file="csrc/a.dispatch.c", isa="avx2"),
        coverage.FileCoverage(10, 10, 2, 2, 10, 10, 2, 2, file="csrc/api.c", isa="common"),
        coverage.FileCoverage(0, 50, 0, 8, 0, 5, 0, 2, file="csrc/a.dispatch.c", isa="base")])
    data = run.to_json()
    assert data["isas"] == {"common": {"lines": [10, 10], "branches": [2, 2], "lines_percent": 100.0,
                                       "branches_percent": 100.0, "source_lines": [10, 10],
                                       "source_branches": [2, 2]},
                            "base": {"lines": [0, 50], "branches": [0, 8], "lines_percent": 0.0,
                                     "branches_percent": 0.0, "source_lines": [0, 5], "source_branches": [0, 2]},
                            "avx2": {"lines": [30, 40], "branches": [5, 10], "lines_percent": 75.0,
                                     "branches_percent": 50.0, "source_lines": [3, 4], "source_branches": [1, 2]}}
    assert data["total"]["lines"] == [40, 100] and data["total"]["branches"] == [7, 20]
    assert data["total"]["source_lines"] == [13, 19] and data["total"]["source_branches"] == [3, 6]
    assert coverage.Coverage.from_json(json.loads(json.dumps(data))) == run
    table = coverage.markdown([run])
    assert "| ci | avx2 | 1 | 75.0% (3/4) | 50.0% (1/2) | 75.0% (30/40) | 50.0% (5/10) |" in table
    assert "| ci | **all** | 3 | 68.4% (13/19) | 50.0% (3/6) | 40.0% (40/100) | 35.0% (7/20) |" in table
    page = coverage.html_page([run])
    assert "75.0% (30/40)" in page and page.startswith("<!DOCTYPE html>")

    path = tmp_path / "ci.json"
    path.write_text(json.dumps(data))
    md, html_path = tmp_path / "t.md", tmp_path / "t.html"
    assert cli.main(["conformance", "coverage", "--from-json", str(path), "--from-json", str(path),
                     "--md", str(md), "--html", str(html_path)]) == 0
    assert md.read_text().count("| ci | avx2 |") == 2
    assert "csrc/a.dispatch.c" in html_path.read_text()


def test_command_line_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["conformance", "coverage"]) == 2
    assert "--build: required" in capsys.readouterr().err
    assert cli.main(["conformance", "coverage", "--build", str(tmp_path)]) == 2
    assert "no CMakeCache.txt" in capsys.readouterr().err
    _cache(tmp_path, "simdbind", tmp_path)
    assert cli.main(["conformance", "coverage", "--build", str(tmp_path)]) == 2
    assert "no .gcno files" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    assert cli.main(["conformance", "coverage", "--from-json", str(bad)]) == 2
    assert "not a coverage report" in capsys.readouterr().err
    assert cli.main(["conformance", "coverage", "--from-json", str(bad), "--build", str(tmp_path)]) == 2
    assert "cannot go with it" in capsys.readouterr().err


def test_the_run_after_the_separator_reaches_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_measure(build: coverage.Build, command: list[str], *args: object) -> coverage.Coverage:
        seen.append(command)
        return coverage.Coverage(build.kind)

    monkeypatch.setattr(coverage.Build, "open", classmethod(lambda cls, d: cls(Path(d), "bundled", Path(d))))
    monkeypatch.setattr(coverage, "measure", fake_measure)
    assert cli.main(["conformance", "coverage", "--build", str(tmp_path), "--", "explore", "--budget", "5"]) == 0
    assert cli.main(["conformance", "coverage", "--build", str(tmp_path)]) == 0
    assert seen == [[sys.executable, "-m", "simdbind", "conformance", "explore", "--budget", "5"],
                    [sys.executable, "-m", "simdbind", "conformance", "--profile", "smoke"]]


def test_output_paths_are_checked_before_the_run_and_a_failed_write_is_one_line(tmp_path, capsys):
    from simdbind.cli import main

    folder = tmp_path / "a-folder"
    folder.mkdir()
    # A directory where the JSON should go: refused before the (missing) build is even looked at.
    assert main(["conformance", "coverage", "--build", str(tmp_path / "nowhere"), "--json", str(folder)]) == 2
    assert "--json" in capsys.readouterr().err
    # Reports read back and written: /dev/full fails the Markdown, the JSON is still written.
    good = tmp_path / "runs.json"
    good.write_text(json.dumps(coverage.Coverage("bundled", "ci", ["simdbind"], 0, 1.0, [
        coverage.FileCoverage(1, 2, 0, 0, 1, 2, 0, 0, file="csrc/api.c", isa="common")]).to_json()))
    out = tmp_path / "out.json"
    assert main(["conformance", "coverage", "--from-json", str(good), "--json", str(out), "--md", "/dev/full"]) == 2
    assert "--md /dev/full: cannot be written" in capsys.readouterr().err and json.loads(out.read_text())


@needs_gcc
def test_the_run_html_report_gets_the_coverage_section(bundled_build: tuple[Path, Path], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from simdbind.conformance import report_html

    build_dir, program = bundled_build
    report = tmp_path / "run.html"
    page = f"<html><main><table></table>{report_html.FOOTER} (x).</footer></main></html>"
    report.write_text(page)
    measured = coverage.measure(coverage.Build.open(build_dir), [str(program)], label="tiny")
    monkeypatch.setattr(coverage, "measure", lambda *args, **kwargs: measured)
    assert cli.main(["conformance", "coverage", "--build", str(build_dir), "--",
                     "--profile", "smoke", "--report-html", str(report)]) == 0
    text = report.read_text()
    section = text[text.index('<section class="coverage">'):text.index(report_html.FOOTER)]
    assert "Coverage: tiny (bundled)" in section and "<code>csrc/fam/kern.dispatch.c</code>" in section
    # base: the kernel's 3 of 4 lines and none of the header's 2; all: 5 of 14 (test_bundled_lines_and_branches_per_isa)
    assert "<td>base</td><td>50.0% (3/6)</td>" in section and "<td>all</td><td>35.7% (5/14)</td>" in section
    assert text.startswith("<html><main><table></table>") and text.endswith("(x).</footer></main></html>")
    # A page that is not a report of the suite's is left alone, and said to be.
    report.write_text("<html>someone else's</html>")
    assert cli.main(["conformance", "coverage", "--build", str(build_dir), "--",
                     "--report-html=" + str(report)]) == 2
    assert report.read_text() == "<html>someone else's</html>"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_measurement_kills_its_run_and_the_run_workers(tmp_path: Path, stop: int) -> None:
    # The measured run starts a worker that would write a file (as a worker writes its counters when it exits) a
    # second after it starts; the measurement is stopped before then. Neither may live on to write it.
    marker = tmp_path / "written-after-the-stop"
    ready = tmp_path / "worker-started"
    worker = (f"import pathlib, time; pathlib.Path({str(ready)!r}).touch(); time.sleep(1.5); "
              f"pathlib.Path({str(marker)!r}).touch()")
    run = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {worker!r}]); time.sleep(30)"
    measuring = (f"import sys; from simdbind.conformance import coverage; "
                 f"coverage._run_whole_or_not_at_all([sys.executable, '-c', {run!r}])")
    process = subprocess.Popen([sys.executable, "-c", measuring], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    started = time.monotonic()
    process.send_signal(stop)
    _, err = process.communicate(timeout=10)
    assert time.monotonic() - started < 1.0, "the measurement waited for its run instead of killing it"
    assert process.returncode != 0 and ("_Terminated" in err or "KeyboardInterrupt" in err)
    time.sleep(2.0)
    assert not marker.exists()


@needs_gcc
def test_template_instances_count_apart_and_as_source_lines(tmp_path: Path) -> None:
    # One template, instantiated for two activations as upstream's kernels are; only one instance runs.
    source = tmp_path / "simd" / "src" / "Simd"
    source.mkdir(parents=True)
    (source / "SimdAvx2SynetPooling.cpp").write_text(
        "template <int A> int act(int x)\n{\n    if (x < 0)\n        return A * x;\n    return x;\n}\n"
        "int pool(int x, int a)\n{\n    return a ? act<1>(x) : act<2>(x);\n}\n")
    build = tmp_path / "build"
    _cache(build, "Simd", tmp_path / "simd" / "prj" / "cmake")
    compiled = _compile(source / "SimdAvx2SynetPooling.cpp", build / "CMakeFiles" / "Simd.dir" / "src" / "Simd")
    main = tmp_path / "main.cpp"
    main.write_text("int pool(int, int);\nint main() { return pool(-3, 1) != -3; }\n")
    program = build / "program"
    subprocess.run(["g++", "--coverage", str(main), str(compiled), "-o", str(program)], check=True)
    (file,) = coverage.measure(coverage.Build.open(build), [str(program)]).files
    # Instances: pool's 2 lines, act<1>'s 3 of 4 (x < 0: not the last return), act<2>'s 0 of 4. Source lines: the
    # same line of both instances counts once: 5 of 6. Branches: pool's 2 and each instance's 2; as source, 4.
    assert (file.lines_covered, file.lines_total, file.branches_covered, file.branches_total) == (5, 10, 2, 6)
    assert (file.source_lines_covered, file.source_lines_total) == (5, 6)
    assert (file.source_branches_covered, file.source_branches_total) == (2, 4)
