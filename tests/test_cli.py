"""The command line: info and a filtered conformance run, through `python -m simdbind`."""

from __future__ import annotations

import json
import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdbind", *args], capture_output=True, text=True)


def test_info_lists_isas_of_this_machine(bundled):
    out = run("info", "--library", "bundled")
    assert out.returncode == 0, out.stderr
    assert f"isas          {', '.join(bundled.isas_supported)}" in out.stdout
    assert "bundled (api mode)" in out.stdout


def test_conformance_prints_summary_and_writes_report(tmp_path):
    report = tmp_path / "r.json"
    out = run("conformance", "--isa", "base", "--function", "eltwise", "-k", "size=17", "--report-json", str(report))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "eltwise" in out.stdout and "bundled-base" in out.stdout and "0 failed" in out.stdout
    data = json.loads(report.read_text())
    assert data["results"] and all(r["status"] == "pass" for r in data["results"])
    assert data["meta"]["environment"]["libraries"][0]["kind"] == "bundled"


def test_conformance_rejects_unsupported_isa():
    out = run("conformance", "--isa", "avx1024")
    assert out.returncode == 2 and "not supported" in out.stderr
