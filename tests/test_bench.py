"""The benchmark harness's mechanics, with fake cases and a fake clock: statistics, speedups, budgets,
interleaving, discovery, JSON / Markdown / plot output and the CLI. No assertion here depends on real timing."""

from __future__ import annotations

import json
import math
import sys
import textwrap

import numpy as np
import pytest

import simdbind
from simdbind.bench import harness
from simdbind.bench.harness import Case, Measurement, Report
from simdbind.cli import main


class FakeClock:
    """A timer that only moves when fake calls 'spend' time; `log` records what ran, in order."""

    def __init__(self) -> None:
        self.now = 0.0
        self.log: list[str] = []

    def __call__(self) -> float:
        return self.now

    def call(self, name: str, cost: float):
        def run() -> None:
            self.now += cost
            self.log.append(name)
        return run


def case_dict(**overrides):
    data = {"name": "fake add 1K", "family": "fake", "unit": "Gelem/s", "work": 1000,
            "simdbind": lambda library: (lambda: None), "peers": {"numpy": lambda: None}}
    data.update(overrides)
    return data


# -- cases -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("override, message", [
    ({"unit": "ops"}, "unit must be one of"),
    ({"work": 0}, "work must be a positive number"),
    ({"work": True}, "work must be a positive number"),
    ({"simdbind": None, "peers": {}}, "needs a 'simdbind' entry or peers"),
    ({"budget": {"baseline": "raw"}}, "budget baseline 'raw' is not one of its variants"),
    ({"versus": ["raw"]}, "versus 'raw' is not one of its variants"),
])
def test_case_from_dict_rejects_malformed_cases(override, message):
    with pytest.raises(ValueError, match=message):
        Case.from_dict(case_dict(**override), "fakemod")


def test_case_from_dict_requires_the_contract_keys():
    data = case_dict()
    del data["unit"]
    with pytest.raises(ValueError, match="fakemod 'fake add 1K': missing 'unit'"):
        Case.from_dict(data, "fakemod")


def test_case_matches_name_family_or_module_case_insensitively():
    case = Case.from_dict(case_dict(), "fakemod")
    assert case.matches(None) and case.matches([])
    assert case.matches(["ADD"]) and case.matches(["fake"]) and case.matches(["nope", "fakemod"])
    assert not case.matches(["conv"])


# -- statistics, speedups, budgets -----------------------------------------------------------------------------
def measurement(impl, kind, median=None, samples=None, case="c", threads=1, **kw):
    m = Measurement(case, "fam", "Gelem/s", 2e9, impl, kind, threads, **kw)
    m.samples = list(samples) if samples is not None else [median]
    m.finish()
    return m


def test_statistics_are_median_min_max_and_throughput_from_the_median():
    m = measurement("bundled-avx2", "simdbind", samples=[3.0, 1.0, 2.0, 10.0, 2.5])
    assert (m.median, m.min, m.max) == (2.5, 1.0, 10.0)
    assert m.throughput == pytest.approx(2e9 / 2.5 / 1e9)
    even = measurement("x", "peer", samples=[1.0, 2.0, 3.0, 4.0])
    assert even.median == 2.5
    assert Measurement("c", "f", "GB/s", 1, "x", "peer", 1).ok is False  # no samples


def test_speedup_is_peer_median_over_own_median_within_the_same_case_and_threads():
    ms = [measurement("bundled-avx2", "simdbind", 1.0), measurement("bundled-avx2 raw cffi", "variant", 0.5),
          measurement("numpy", "peer", 3.0), measurement("torch", "peer", 0.5),
          measurement("numpy", "peer", 100.0, threads=2), measurement("numpy", "peer", 7.0, case="other")]
    ms.append(measurement("external-avx2", "simdbind", 4.0))
    harness.speedups(ms, versus=["raw cffi"])
    assert ms[0].speedup == {"numpy": 3.0, "torch": 0.5, "external-avx2": 4.0, "raw cffi": 0.5}
    assert ms[-1].speedup == {"numpy": 0.75, "torch": 0.125}  # an external library against the peers only
    assert ms[1].speedup == {"numpy": 6.0, "torch": 1.0}  # variants get peers only
    assert ms[2].speedup == {}  # peers get none


def test_budget_compares_with_the_same_targets_baseline_variant():
    case = Case.from_dict(case_dict(name="c", variants={"raw cffi": lambda library: None},
                                    budget={"baseline": "raw cffi", "factor": 1.5, "plus_us": 1.0}))
    ok = [measurement("bundled-avx2", "simdbind", 1.4e-6), measurement("bundled-avx2 raw cffi", "variant", 0.3e-6)]
    over = [measurement("bundled-base", "simdbind", 1.5e-6), measurement("bundled-base raw cffi", "variant", 0.3e-6)]
    harness.budgets([case], ok + over)
    assert ok[0].budget["met"] is True and ok[0].budget["limit_us"] == pytest.approx(1.45)
    assert ok[0].budget["ratio"] == pytest.approx(1.4 / 0.3)
    assert over[0].budget["met"] is False
    assert ok[1].budget is None  # only the simdbind row carries it


# -- timing mechanics (fake clock) -----------------------------------------------------------------------------
def test_calibrate_picks_enough_calls_for_the_minimum_sample_time():
    clock = FakeClock()
    assert harness.calibrate(clock.call("a", 1e-3), 0.02, clock) == 20
    assert harness.calibrate(clock.call("b", 1.0), 0.02, clock) == 1
    assert harness.calibrate(clock.call("c", 0.0), 0.02, clock, max_number=64) == 64


def test_measure_interleaves_rounds_with_a_rotating_start_and_reports_per_call_times():
    clock = FakeClock()
    order: list[str] = []
    entries = [(name, clock.call(name, cost), (lambda n=name: order.append(n)))
               for name, cost in (("a", 1e-3), ("b", 2e-3), ("c", 4e-3))]
    result = harness.measure(entries, repeats=3, min_time=0.004, timer=clock)
    # setup runs once for calibration + warm-up of each entry, then once before every sample
    assert order == ["a", "b", "c"] + ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert {name: number for name, (number, _) in result.items()} == {"a": 4, "b": 2, "c": 1}
    for name, cost in (("a", 1e-3), ("b", 2e-3), ("c", 4e-3)):
        assert result[name][1] == pytest.approx([cost] * 3)


def test_measure_reports_which_entry_failed():
    clock = FakeClock()

    def broken():
        raise RuntimeError("boom")

    with pytest.raises(harness.EntryError, match="bad: RuntimeError: boom") as info:
        harness.measure([("good", clock.call("good", 1e-3), None), ("bad", broken, None)], 2, 0.001, clock)
    assert info.value.name == "bad"


def test_callable_from_accepts_factories_and_direct_calls():
    calls = []
    direct = lambda: calls.append("direct")  # noqa: E731 - returns None: it is the call itself
    assert harness._callable_from(direct) is direct and calls == ["direct"]
    inner = lambda: calls.append("inner")  # noqa: E731
    assert harness._callable_from(lambda: inner) is inner  # a factory: its result is the call
    seen = []
    bound = harness._callable_from(lambda library: seen.append(library), "LIB")  # a direct call taking the library
    bound()
    assert seen == ["LIB", "LIB"]


def test_peer_selection_uses_the_first_word():
    assert harness._peer_selected("numpy", ["numpy"])
    assert harness._peer_selected("numpy ufunc", ["numpy", "torch"])
    assert not harness._peer_selected("torch", ["numpy"])
    assert harness._peer_selected("memcpy", ["all"]) and not harness._peer_selected("memcpy", ["none"])


# -- a whole run on the bundled library with fake cases -------------------------------------------------------
@pytest.fixture(scope="module")
def bundled_targets():
    library = simdbind.load("bundled")
    return harness.targets(["bundled"], "all")


def test_targets_cover_every_supported_isa_and_refuse_unsupported_ones(bundled_targets):
    library = bundled_targets[0].library
    assert [t.name for t in bundled_targets] == [f"bundled-{isa}" for isa in library.isas_supported]
    with pytest.raises(simdbind.IsaError, match="not supported here|must be one of"):
        missing = next((i for i in simdbind.ISAS if i not in library.isas_supported), None)
        if missing is None:
            pytest.skip("this CPU supports every ISA")
        harness.targets(["bundled"], missing)
    assert [t.isa for t in harness.targets(["bundled"], "base,sse41")] == ["base", "sse41"]


def test_run_measures_every_target_variant_and_peer_and_records_failures(bundled_targets):
    clock = FakeClock()
    seen_isas = []

    def simdbind_entry(library):
        seen_isas.append(library.isa)  # built while the target's ISA is selected
        return clock.call(f"simdbind-{library.isa}", {"base": 4e-3}.get(library.isa, 1e-3))

    def unavailable(library):
        raise simdbind.FunctionNotAvailableError("SimdMissing is not provided")

    def fails_when_timed(library):
        state = {"n": 0}

        def call():
            state["n"] += 1
            if state["n"] > 3:
                raise ValueError("fails later")
            clock.now += 1e-3
        return call

    cases = [
        Case.from_dict(case_dict(name="fake add", simdbind=simdbind_entry,
                                 variants={"raw": lambda library: clock.call("raw", 0.5e-3)},
                                 peers={"numpy": clock.call("numpy", 2e-3), "torch": clock.call("torch", 1e-3)},
                                 budget={"baseline": "raw", "factor": 1.5, "plus_us": 1.0}, versus=["raw"])),
        Case.from_dict(case_dict(name="fake missing", simdbind=unavailable, peers={"numpy": clock.call("n", 1e-3)})),
        Case.from_dict(case_dict(name="fake flaky", simdbind=fails_when_timed,
                                 peers={"numpy": clock.call("n", 1e-3)})),
    ]
    library = bundled_targets[0].library
    isa_before, threads_before = library.isa, library.threads
    ms = harness.run(cases, bundled_targets, peers=["numpy"], threads=[1], repeats=3, min_time=0.002, timer=clock)
    assert (library.isa, library.threads) == (isa_before, threads_before)  # restored
    isas = library.isas_supported
    assert seen_isas == list(isas)
    add = {m.implementation: m for m in ms if m.case == "fake add"}
    assert set(add) == {f"bundled-{i}" for i in isas} | {f"bundled-{i} raw" for i in isas} | {"numpy"}  # no torch
    for isa in isas:
        m = add[f"bundled-{isa}"]
        cost = 4e-3 if isa == "base" else 1e-3
        assert m.ok and m.isa == isa and m.median == pytest.approx(cost)
        assert m.speedup["numpy"] == pytest.approx(2e-3 / cost)
        assert m.speedup["raw"] == pytest.approx(0.5e-3 / cost)
        assert m.budget is not None and m.budget["met"] is False
    missing = [m for m in ms if m.case == "fake missing" and m.kind == "simdbind"]
    assert missing and all(m.error.startswith("unavailable:") for m in missing)
    assert all(m.ok for m in ms if m.case == "fake missing" and m.kind == "peer")  # peers still measured
    flaky = [m for m in ms if m.case == "fake flaky"]
    assert any(m.error and "fails later" in m.error for m in flaky)
    assert any(m.ok for m in flaky if m.kind == "peer")


def test_run_sets_and_restores_library_threads(bundled_targets):
    library = bundled_targets[0].library
    seen = []
    case = Case.from_dict(case_dict(name="threads", simdbind=lambda lib: (lambda: seen.append(lib.threads)),
                                    peers={}))
    before = library.threads
    ms = harness.run([case], bundled_targets[:1], threads=[1, 2], repeats=1, min_time=0.0)
    assert {m.threads for m in ms} == {1, 2}
    assert 1 in seen and min(2, harness.os.cpu_count() or 1) in seen
    assert library.threads == before


# -- discovery -------------------------------------------------------------------------------------------------
def test_discover_collects_cases_and_reports_broken_modules(tmp_path, monkeypatch):
    pkg = tmp_path / "fakebench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "harness.py").write_text("raise RuntimeError('the harness is not a family')\n")
    (pkg / "_private.py").write_text("raise RuntimeError('private modules are helpers')\n")
    (pkg / "good.py").write_text(textwrap.dedent("""
        def cases(quick=False):
            sizes = [1] if quick else [1, 2]
            return [{"name": f"good {n}", "family": "good", "unit": "GB/s", "work": n,
                     "simdbind": lambda library: (lambda: None)} for n in sizes]
    """))
    (pkg / "broken.py").write_text("import no_such_module_anywhere\n")
    (pkg / "bad_case.py").write_text("def cases(quick=False):\n    return [{'name': 'bad'}]\n")
    (pkg / "zdupe.py").write_text(textwrap.dedent("""
        def cases(quick=False):
            return [{"name": "good 1", "family": "dupe", "unit": "GB/s", "work": 1, "peers": {"numpy": print}}]
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert harness.family_modules("fakebench") == [f"fakebench.{m}" for m in ("bad_case", "broken", "good", "zdupe")]
    cases, errors = harness.discover(None, quick=False, package="fakebench")
    assert [c.name for c in cases] == ["good 1", "good 2"]
    assert cases[0].module == "good"
    assert set(errors) == {"fakebench.broken", "fakebench.bad_case", "fakebench.zdupe"}
    assert "ModuleNotFoundError" in errors["fakebench.broken"] and "missing 'family'" in errors["fakebench.bad_case"]
    assert "duplicate case name 'good 1'" in errors["fakebench.zdupe"]
    quick, _ = harness.discover(["good"], quick=True, package="fakebench")
    assert [c.name for c in quick] == ["good 1"]


def test_every_family_module_follows_the_case_contract():
    modules = harness.family_modules()
    assert "simdbind.bench.overhead" in modules and "simdbind.bench.gil" in modules
    assert not any(m.endswith((".harness", "._peers")) for m in modules)
    cases, errors = harness.discover(None, quick=True)
    assert errors == {}
    assert {c.family for c in cases} >= {"overhead", "gil"}
    for case in cases:
        assert case.simdbind is not None or case.peers, case.name


# -- output ----------------------------------------------------------------------------------------------------
def sample_report():
    ms = [measurement("bundled-avx2", "simdbind", 1e-6, case="x add"),
          measurement("bundled-avx2 raw cffi", "variant", 0.25e-6, case="x add"),
          measurement("numpy", "peer", 2e-6, case="x add")]
    ms.append(Measurement("x add", "fam", "Gelem/s", 2e9, "bundled-base", "simdbind", 1, error="unavailable: | no"))
    harness.speedups(ms)
    case = Case.from_dict(case_dict(name="x add", variants={"raw cffi": lambda library: None},
                                    budget={"baseline": "raw cffi"}))
    harness.budgets([case], ms)
    meta = {"command": "simdbind bench --quick", "repeats": 5, "min_time": 0.005, "provisional": "noisy machine",
            "environment": harness.environment(harness.targets(["bundled"], "base")), "notes": {"x add": "a note"}}
    return Report(meta, ms, {"simdbind.bench.broken": "ImportError: x"})


def test_json_report_round_trips_every_measurement():
    data = json.loads(json.dumps(sample_report().to_dict()))
    assert [m["implementation"] for m in data["measurements"]] == [
        "bundled-avx2", "bundled-avx2 raw cffi", "numpy", "bundled-base"]
    first = data["measurements"][0]
    assert first["median"] == 1e-6 and first["speedup"] == {"numpy": 2.0}
    assert first["budget"]["met"] is True and first["budget"]["limit_us"] == pytest.approx(1.375)
    env = data["meta"]["environment"]
    assert env["cpu"] and "base" in env["isas"] and "numpy" in env["versions"]
    assert data["errors"] == {"simdbind.bench.broken": "ImportError: x"}


def test_markdown_has_machine_command_table_budget_and_family_lines():
    md = harness.to_markdown(sample_report())
    assert "Command: `simdbind bench --quick`" in md and "**Provisional:** noisy machine" in md
    assert "| case | implementation | median µs | min-max µs | throughput | vs numpy |" in md
    assert "| x add | bundled-avx2 | 1 | 1-1 | 2,000,000 Gelem/s | 2.00x |" in md
    assert "| x add | bundled-base | - | - | unavailable: / no |" in md  # no stray table separator
    assert "x add, bundled-avx2: 1.00 µs vs 0.25 µs raw (4.0x); budget 1.5 x raw + 1 µs = 1.38 µs: within budget (fastest" in md
    assert "- **fam**: bundled-avx2 2.00x numpy (1 case)" in md
    assert "`simdbind.bench.broken`: ImportError: x" in md
    full = md[md.index("<details>"):]
    table = [line for line in full.splitlines() if line.startswith("|")]
    assert len({line.count("|") for line in table}) == 1  # every row has the header's columns
    assert "| case | unit | bundled-avx2 | numpy | bundled-base |" in md  # the compact table, variants left out
    assert "| x add | Gelem/s | **2,000,000** | 1,000,000 | n/a |" in md


def test_family_summary_is_a_geometric_mean_with_range_at_the_best_isa():
    ms = [measurement("bundled-avx2", "simdbind", 1.0, case="a", isa="avx2"),
          measurement("bundled-sse41", "simdbind", 2.0, case="a", isa="sse41"),
          measurement("numpy", "peer", 4.0, case="a"),
          measurement("bundled-avx2", "simdbind", 1.0, case="b", isa="avx2"), measurement("numpy", "peer", 1.0, case="b")]
    harness.speedups(ms)
    assert harness.family_summary(ms) == ["- **fam**: bundled-avx2 2.00x numpy (2 cases, 1.00-4.00x)"]
    assert harness.family_summary(ms, best_isa_only=False) == [
        "- **fam**: bundled-avx2 2.00x numpy (2 cases, 1.00-4.00x); bundled-sse41 2.00x numpy (1 case)"]


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = harness.plot(sample_report(), str(tmp_path / "bench.png"))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


# -- the GIL helper and the command line ----------------------------------------------------------------------
def test_two_threads_run_both_jobs_and_propagate_errors():
    from simdbind.bench.gil import _two_threads

    import threading

    pool = _two_threads()
    names = []
    pool.run(lambda: names.append(threading.current_thread().name), lambda: names.append(threading.current_thread().name))
    assert sorted(names) == ["simdbind-bench-gil-0", "simdbind-bench-gil-1"]

    def boom():
        raise KeyError("job")

    with pytest.raises(KeyError):
        pool.run(boom, lambda: None)
    pool.run(lambda: None, lambda: None)  # still usable


def test_cli_list_and_argument_errors(capsys):
    assert main(["bench", "--list", "--functions", "overhead"]) == 0
    out = capsys.readouterr().out
    assert "overhead eltwise sum 16 out=" in out and "gil" not in out
    assert main(["bench", "--threads", "one"]) == 2
    assert "--threads" in capsys.readouterr().err
    assert main(["bench", "--peers", "numpy,jax"]) == 2
    assert "no case has jax" in capsys.readouterr().err
    assert main(["bench", "--functions", "no such case anywhere"]) == 2


def test_cli_runs_a_tiny_benchmark_and_writes_json_and_markdown(tmp_path, capsys):
    out_json, out_md = tmp_path / "b.json", tmp_path / "b.md"
    code = main(["bench", "--library", "bundled", "--functions", "overhead eltwise sum 16 out=", "--isa", "base",
                 "--peers", "numpy",
                 "--repeats", "1", "--min-time", "0.0002", "--json", str(out_json), "--md", str(out_md)])
    assert code == 0
    data = json.loads(out_json.read_text())
    impls = {m["implementation"] for m in data["measurements"]}
    assert impls == {"bundled-base", "bundled-base raw cffi", "bundled-base raw cffi from arrays", "numpy"}
    main_row = next(m for m in data["measurements"] if m["implementation"] == "bundled-base")
    assert main_row["budget"]["baseline"] == "bundled-base raw cffi" and main_row["median"] > 0
    assert "--isa base" in data["meta"]["command"]
    assert "| overhead eltwise sum 16 out= | bundled-base |" in out_md.read_text()


def test_ort_callable_runs_a_one_node_model_in_place():
    from simdbind.bench._peers import ort_available, ort_callable

    if not ort_available():
        pytest.skip("onnxruntime and onnx are not installed (optional peers)")
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.full((2, 3), 2, np.float32)
    out = np.zeros((2, 3), np.float32)
    call = ort_callable("Max", [x, y], out)
    assert call() is None
    np.testing.assert_array_equal(out, np.maximum(x, y))


def test_thread_scaling_compares_each_implementation_with_itself():
    ms = [measurement("bundled-avx2", "simdbind", 2.0, case="a"), measurement("bundled-avx2", "simdbind", 1.0,
                                                                             case="a", threads=2),
          measurement("torch", "peer", 1.0, case="a"), measurement("torch", "peer", 4.0, case="a", threads=2),
          measurement("bundled-avx2 raw", "variant", 1.0, case="a", threads=2)]
    assert harness.thread_scaling(ms) == ["- **fam**, 2 vs 1 threads: bundled-avx2 2.00x; torch 0.25x"]
    assert harness.thread_scaling(ms[:1]) == []


def test_python_progress_demo_reports_three_rates():
    from simdbind.bench.gil import python_progress

    rates = python_progress(size=1024, calls=2)  # a smoke test: the numbers are for reading, not asserting
    assert list(rates) == ["other thread sleeping", "other thread in simdbind C calls",
                           "other thread in a GIL-holding C call"]
    assert all(value >= 0 for value in rates.values())


def test_thread_scaling_table_has_a_row_per_case_and_implementation_with_its_ratio():
    ms = [measurement("bundled-avx2", "simdbind", 2e-3, case="conv"),
          measurement("bundled-avx2", "simdbind", 1e-3, case="conv", threads=2),
          measurement("numpy", "peer", 3e-3, case="conv"), measurement("numpy", "peer", 4e-3, case="conv", threads=2),
          measurement("bundled-avx2 raw", "variant", 1e-3, case="conv"),  # one thread count only: no row
          measurement("bundled-avx2", "simdbind", None, samples=[], case="gemm", threads=2)]
    rows = harness.thread_scaling_rows(ms)
    assert [(case, impl, ratios[1]) for case, impl, _, ratios in rows] == [
        ("conv", "bundled-avx2", 2.0), ("conv", "numpy", 0.75)]
    table = harness.thread_scaling_table(ms)
    assert table[0] == "| case | implementation | 1 thr µs | 2 thr µs | 2 vs 1 thr (ideal 2x) |"
    assert table[2:] == ["| conv | bundled-avx2 | 2,000 | 1,000 | 2.00x |", "| conv | numpy | 3,000 | 4,000 | 0.75x |"]
    assert harness.thread_scaling_table(ms[:1]) == []
    report = Report(meta={"command": "simdbind bench --threads 1,2"}, measurements=ms)
    text = harness.to_markdown(report)
    assert "| conv | bundled-avx2 | 2,000 | 1,000 | 2.00x |" in text and "- **fam**, 2 vs 1 threads" in text


def test_blas_threads_follow_the_run_and_are_restored(bundled_targets):
    blas = harness._BlasThreads()
    if not blas.found:
        pytest.skip("no OpenBLAS loaded in this process (or no /proc/self/maps)")
    before = blas.get()
    seen = []
    case = Case.from_dict(case_dict(simdbind=None, peers={"numpy": lambda: seen.append(harness._BlasThreads().get())}))
    harness.run([case], bundled_targets[:1], threads=(1, 2), repeats=1, min_time=0.0)
    assert [1] * len(before) in seen and len(seen) >= 2  # one thread at the 1-thread row (OpenBLAS may clamp 2)
    assert blas.get() == before
    assert harness.environment()["blas_threads"]


def test_measure_blocked_takes_each_entrys_samples_in_a_row_after_an_untimed_one():
    clock = FakeClock()
    order: list[str] = []
    costs = {"a": [1e-3], "b": [2e-3]}

    def call(name):
        def run() -> None:
            clock.now += costs[name][0]
            clock.log.append(name)
        return run

    entries = [(name, call(name), (lambda n=name: order.append(n))) for name in ("a", "b")]
    result = harness.measure(entries, repeats=3, min_time=0.004, timer=clock, interleave=False)
    assert order == ["a", "b"] + ["a"] * 4 + ["b"] * 4  # calibration; then 1 untimed + 3 timed samples each
    assert result["a"][1] == pytest.approx([1e-3] * 3) and result["b"][1] == pytest.approx([2e-3] * 3)


def test_run_orders_samples_blocked_above_one_thread_by_default(bundled_targets, monkeypatch):
    seen = []
    real = harness.measure

    def spy(entries, repeats, min_time, timer=harness.time.perf_counter, interleave=True, settle=0.0):
        seen.append(interleave)
        assert settle == (0.0 if interleave else harness.SETTLE)  # blocked samples wait for spinning pools
        return real(entries, repeats, min_time, timer, interleave)  # without the pause: a fast test

    monkeypatch.setattr(harness, "measure", spy)
    case = Case.from_dict(case_dict(simdbind=None))
    for order, expected in (("auto", [True, False]), ("interleaved", [True, True]), ("blocked", [False, False])):
        seen.clear()
        harness.run([case], bundled_targets[:1], threads=(1, 2), repeats=1, min_time=0.0, order=order)
        assert seen == expected
    with pytest.raises(ValueError, match="order: must be one of"):
        harness.run([case], bundled_targets[:1], order="random")
    report = Report(meta={"order": "auto"}, measurements=[measurement("numpy", "peer", 1.0, threads=2)])
    assert "at more threads each implementation's samples in a row" in harness.to_markdown(report)


def test_cli_order_option_reaches_the_report(tmp_path, capsys):
    out_json = tmp_path / "b.json"
    assert main(["bench", "--library", "bundled", "--functions", "overhead unary abs 16 out=", "--isa", "base",
                 "--peers", "none", "--order", "blocked", "--threads", "1,2", "--repeats", "1", "--min-time",
                 "0.0002", "--json", str(out_json)]) == 0
    data = json.loads(out_json.read_text())
    assert data["meta"]["order"] == "blocked" and "--order blocked" in data["meta"]["command"]
    assert "threads overhead unary abs 16 out= bundled-base: 2 vs 1:" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["bench", "--order", "random"])
