"""--shard K/N splits any selection into N parts that partition it, deterministically: the N parts' reports merged
are the unsharded run, case by case."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from simdbind.conformance import options, runner

ROOT = Path(__file__).resolve().parent.parent


def test_shard_values_are_k_of_n():
    assert options.shard("2/3") == (2, 3) and str(options.shard("2/3")) == "2/3"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2/3", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="must be K/N with 1 <= K <= N"):
            options.shard(bad)


FUNCTIONS = ["eltwise", "convolution32f", "pooling_max32f", "unary"]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_partition_the_plan_in_its_order(count):
    impls = ["a", "b"]  # plan() needs only their number
    whole = [(i, fn.name, case.descriptor) for i, fn, case in runner.plan(impls, FUNCTIONS, "ci")]
    parts = [[(i, fn.name, case.descriptor) for i, fn, case in runner.plan(impls, FUNCTIONS, "ci",
                                                                            shard=options.Shard(k, count))]
             for k in range(1, count + 1)]
    assert sorted(step for part in parts for step in part) == sorted(whole)
    assert sum(len(part) for part in parts) == len(whole)
    assert max(len(p) for p in parts) - min(len(p) for p in parts) <= len(impls)  # balanced
    for part in parts:
        members = set(part)
        assert part == [step for step in whole if step in members]  # plan order kept
        # a case's implementations stay together
        assert all(part[n][1:] == part[n + 1][1:] for n in range(0, len(part), 2))


def conformance(tmp_path: Path, name: str, *args: str) -> Path:
    report = tmp_path / f"{name}.json"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "--profile", "ci", "--isa", "base,avx2",
                          "--function", "eltwise", "--function", "pooling_max32f", "--function", "softmax",
                          "--no-progress", "--report-json", str(report), "--junit-xml", "", "--report-md", "",
                          "--report-html", "", *args], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode in (0, 1) and report.exists(), out.stdout + out.stderr
    return report


def test_shards_merged_equal_the_unsharded_run(tmp_path):
    whole = json.loads(conformance(tmp_path, "whole").read_text())
    shards = [conformance(tmp_path, f"shard{k}", "--shard", f"{k}/3", "-n", "2" if k == 2 else "1")
              for k in (1, 2, 3)]
    for k, path in enumerate(shards, 1):
        meta = json.loads(path.read_text())["meta"]
        assert meta["shard"] == f"{k}/3" and "--shard" in meta["command"]
    merged_path = tmp_path / "merged.json"
    out = subprocess.run([sys.executable, "-m", "simdbind", "conformance", "merge", *map(str, shards),
                          "--report-json", str(merged_path)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    merged = json.loads(merged_path.read_text())["results"]

    def implementation(label: str) -> str:  # "machine / name (file)" in a merge
        name = label.split(" / ", 1)[-1]
        return name.split(" (", 1)[0]

    fields = ("status", "detail", "max_abs", "max_rel", "max_ulp", "mismatches", "total", "tolerance", "deviation")
    expected = {(r["implementation"], r["descriptor"]): [r.get(f) for f in fields] for r in whole["results"]}
    got = {(implementation(r["implementation"]), r["descriptor"]): [r.get(f) for f in fields] for r in merged}
    assert len(merged) == len(whole["results"]) == len(got)
    assert got == expected
