"""Where `simdbind conformance` writes its reports (options.REPORT_RULE): exactly the files asked for; all four in
a --reports folder that holds none yet; else in a new folder of the run's own under reports/; none with
--no-reports. No run writes over an earlier run's reports: a failure's repro leaves them byte for byte."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from simdbind.conformance import options

CASE = "eltwise op=max count=2 size=17"
QUICK = ("conformance", "--isa", "base", "--no-progress")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdbind", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_run_told_nowhere_writes_a_folder_of_its_own_and_a_repro_leaves_it_as_it_was(tmp_path):
    first = run(tmp_path, *QUICK, "--function", "eltwise", "-k", "size=17")
    assert first.returncode == 0, first.stderr
    (folder,) = (tmp_path / "reports").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == sorted(options.REPORT_FILES.values())
    assert f"reports: {folder.relative_to(tmp_path).as_posix()}/conformance.json" in first.stdout
    before = tree(tmp_path)
    repro = run(tmp_path, *QUICK, "--case", CASE)
    assert repro.returncode == 0, repro.stderr
    after = tree(tmp_path)
    assert {name: after[name] for name in before} == before  # the earlier reports, byte for byte
    folders = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert len(folders) == 2 and folder.name in folders
    repro_report = json.loads((tmp_path / "reports" / (set(folders) - {folder.name}).pop() /
                               "conformance.json").read_text())
    assert [r["descriptor"] for r in repro_report["results"]] == [CASE]


def test_named_reports_are_the_only_ones_written(tmp_path):
    out = run(tmp_path, *QUICK, "--case", CASE, "--report-json", "mine.json")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json"]


def test_no_reports_writes_nothing_and_refuses_a_report_option(tmp_path):
    out = run(tmp_path, *QUICK, "--case", CASE, "--no-reports")
    assert out.returncode == 0, out.stderr
    assert not any(tmp_path.iterdir()) and "reports:" not in out.stdout
    out = run(tmp_path, *QUICK, "--case", CASE, "--no-reports", "--report-md", "x.md")
    assert out.returncode == 2 and "--no-reports: cannot be combined with --report-md" in out.stderr
    assert not any(tmp_path.iterdir())


def test_a_reports_folder_gets_all_four_once_and_is_never_written_over(tmp_path):
    out = run(tmp_path, *QUICK, "--case", CASE, "--reports", "ci")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "ci").iterdir()) == sorted(options.REPORT_FILES.values())
    kept = tree(tmp_path)
    again = run(tmp_path, *QUICK, "--case", CASE, "--reports", "ci")
    assert again.returncode == 2, again.stdout + again.stderr
    assert again.stderr.strip() == ("simdbind: --reports ci: already holds conformance.json; a run never writes "
                                    "over earlier reports: name a new folder, or remove them")
    assert tree(tmp_path) == kept


def test_a_named_report_beside_a_reports_folder_goes_where_it_is_named(tmp_path):
    out = run(tmp_path, *QUICK, "--case", CASE, "--reports", "ci", "--report-json", "one.json")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "one.json").is_file() and not (tmp_path / "ci" / "conformance.json").exists()
    assert (tmp_path / "ci" / "conformance.html").is_file()


def test_the_rule_is_in_the_help():
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "--help"], capture_output=True, text=True)
    text = " ".join(out.stdout.split())
    assert " ".join(options.REPORT_RULE.split()) in text and "--no-reports" in text


def test_run_folders_are_named_by_utc_time_and_differ():
    import datetime

    now = datetime.datetime(2026, 11, 29, 1, 2, 3, tzinfo=datetime.timezone.utc)
    names = {options.run_folder(now) for _ in range(50)}
    assert len(names) == 50
    assert all(name.startswith(str(Path("reports") / "20261129T010203Z-")) for name in names)


def test_an_output_written_whole_gets_the_mode_a_plain_open_gives(tmp_path):
    # The temporary file beside it is private (mkstemp); the output must not stay so.
    mask = os.umask(0o027)
    try:
        new = tmp_path / "new.json"
        options.write_text(str(new), "{}")
        assert stat.S_IMODE(new.stat().st_mode) == 0o640 and new.read_text() == "{}"
        kept = tmp_path / "kept.md"
        kept.write_text("old")
        kept.chmod(0o604)
        options.write_text(str(kept), "new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o604 and kept.read_text() == "new"
    finally:
        os.umask(mask)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.md", "new.json"]  # no temporary left behind
