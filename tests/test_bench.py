"""simdbind bench: the harness's timing mechanics (a fake clock), its statistics and reports, and whole runs of the
command line on conformance cases with the bundled library, third-party implementations and the peers."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import simdbind
from simdbind.bench import harness
from simdbind.bench.harness import Measurement, Report
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


def measurement(impl, kind, median=None, samples=None, case="eltwise op=max count=2 size=64", threads=1,
                family="elementwise", **kw):
    m = Measurement(case, family, "eltwise", "Gelem/s", 2e9, impl, kind, threads, **kw)
    m.samples = list(samples) if samples is not None else [median]
    m.finish()
    return m


# -- statistics, speedups, budgets -----------------------------------------------------------------------------
def test_statistics_are_median_min_max_and_throughput_from_the_median():
    m = measurement("bundled-avx2", "simdbind", samples=[3.0, 1.0, 2.0, 10.0, 2.5])
    assert (m.median, m.min, m.max) == (2.5, 1.0, 10.0)
    assert m.throughput == pytest.approx(2e9 / 2.5 / 1e9)
    even = measurement("x", "peer", samples=[1.0, 2.0, 3.0, 4.0])
    assert even.median == 2.5
    assert Measurement("c", "f", "eltwise", "GB/s", 1, "x", "peer", 1).ok is False  # no samples


def test_speedup_is_the_other_rows_median_over_own_median_within_the_same_case_and_threads():
    ms = [measurement("bundled-avx2", "simdbind", 1.0), measurement("bundled-avx2 raw cffi", "variant", 0.5),
          measurement("onnxruntime", "peer", 3.0), measurement("torch", "peer", 0.5),
          measurement("memcpy", "bound", 0.25),
          measurement("onnxruntime", "peer", 100.0, threads=2), measurement("onnxruntime", "peer", 7.0, case="other")]
    ms.append(measurement("external-avx2", "simdbind", 4.0))
    harness.speedups(ms, versus=["raw cffi"])
    assert ms[0].speedup == {"onnxruntime": 3.0, "torch": 0.5, "memcpy": 0.25, "external-avx2": 4.0, "raw cffi": 0.5}
    assert ms[-1].speedup == {"onnxruntime": 0.75, "torch": 0.125, "memcpy": 0.0625}  # external: peers only
    assert ms[1].speedup == {"onnxruntime": 6.0, "torch": 1.0, "memcpy": 0.5}  # variants get peers only
    assert ms[2].speedup == {} and ms[4].speedup == {}  # peers and bounds get none


def test_median_band_takes_the_sign_tests_order_statistics():
    assert harness.median_band(list(range(11, 0, -1))) == (2, 10)  # n = 11: P(B <= 1) = 12/2048 <= 2.5% < P(B <= 2)
    assert harness.median_band(list(range(1, 21))) == (6, 15)  # n = 20: P(B <= 5) = 2.07% <= 2.5% < P(B <= 6)
    assert harness.median_band([3.0, 1.0, 2.0, 5.0, 4.0, 6.0]) == (1.0, 6.0)
    assert harness.median_band([1.0, 2.0, 3.0, 4.0, 5.0]) is None  # 5 values reach 93.75% at best


@pytest.mark.parametrize("n", [6, 11, 20])
def test_median_band_covers_the_median_at_least_as_often_as_it_claims(n):
    # A skewed distribution (lognormal: median 1): the band holds 1 in at least 95% of many draws, and an interval
    # one order statistic narrower would not (it would claim 95% and reach 93.5% at n = 11).
    rng = np.random.default_rng(5)
    draws = rng.lognormal(0.0, 1.0, (20000, n))
    covered = [(band := harness.median_band(list(row))) is not None and band[0] <= 1.0 <= band[1] for row in draws]
    assert np.mean(covered) >= 0.95
    lo, hi = harness.median_band(list(range(n)))  # 0 .. n-1 are their own order statistics: the band's indices
    ordered = np.sort(draws, axis=1)
    assert np.mean((ordered[:, lo + 1] <= 1.0) & (1.0 <= ordered[:, hi - 1])) < 0.95


def test_speedup_band_pairs_samples_by_round_so_that_common_drift_cancels():
    own = measurement("bundled-avx2", "simdbind", samples=[1.0, 3.0, 2.0, 5.0, 4.0, 6.0, 9.0, 7.0, 8.0, 10.0, 11.0])
    other = measurement("external-avx2", "simdbind", samples=[1.1 * t for t in own.samples])
    bound = measurement("memcpy", "bound", samples=own.samples)
    noisy = measurement("torch", "peer", samples=[t * f for t, f in zip(own.samples, [0.9, 1.2] * 5 + [1.0])])
    harness.speedups([own, other, bound, noisy])
    assert own.band["external-avx2"] == pytest.approx([1.1, 1.1])  # each round 1.1x, whatever the round's drift
    assert "memcpy" not in own.band  # measured apart: no pairs
    assert own.band["torch"] == pytest.approx([0.9, 1.2])
    assert [harness.beyond_noise(own, name) for name in ("external-avx2", "torch", "memcpy")] == [1, 0, 0]
    assert harness.speedup_text(own, "external-avx2") == "1.10x (1.10-1.10)"
    assert harness.speedup_text(own, "memcpy") == f"{own.speedup['memcpy']:.2f}x"


def test_family_summary_counts_cases_beyond_the_runs_noise():
    rounds = [1.0, 1.5, 1.2, 1.1, 1.3, 1.4, 1.6, 1.0, 1.2, 1.1, 1.3]
    ms = []
    for case, factors in (("a", [1.2] * 11), ("b", [0.8] * 11), ("c", [0.9, 1.1] * 5 + [1.0])):
        ms.append(measurement("bundled-avx2", "simdbind", samples=rounds, case=case, isa="avx2"))
        ms.append(measurement("external-avx2", "simdbind", samples=[t * f for t, f in zip(rounds, factors)], case=case))
    harness.speedups(ms)
    assert harness.family_summary(ms) == ["- **elementwise**: bundled-avx2 0.99x external-avx2 (3 cases, 0.80-1.20x; "
                                          "beyond the noise 1 faster, 1 slower, 1 even)"]


def test_budget_compares_with_the_same_librarys_baseline_row():
    budget = {"baseline": "raw cffi", "factor": 1.5, "plus_us": 1.0}
    ok = [measurement("bundled-avx2", "simdbind", 1.4e-6), measurement("bundled-avx2 raw cffi", "variant", 0.3e-6)]
    over = [measurement("bundled-base", "simdbind", 1.5e-6), measurement("bundled-base raw cffi", "variant", 0.3e-6)]
    harness.budgets(budget, ok + over)
    assert ok[0].budget["met"] is True and ok[0].budget["limit_us"] == pytest.approx(1.45)
    assert ok[0].budget["ratio"] == pytest.approx(1.4 / 0.3)
    assert over[0].budget["met"] is False
    assert ok[1].budget is None  # only the library row carries it
    harness.budgets(None, over)  # a family without a budget changes nothing
    assert over[1].budget is None


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


def test_measure_blocked_takes_each_entrys_samples_in_a_row_after_an_untimed_one():
    clock = FakeClock()
    order: list[str] = []
    entries = [(name, clock.call(name, cost), (lambda n=name: order.append(n))) for name, cost in (("a", 1e-3),
                                                                                                  ("b", 2e-3))]
    result = harness.measure(entries, repeats=3, min_time=0.004, timer=clock, interleave=False)
    assert order == ["a", "b"] + ["a"] * 4 + ["b"] * 4  # calibration; then 1 untimed + 3 timed samples each
    assert result["a"][1] == pytest.approx([1e-3] * 3) and result["b"][1] == pytest.approx([2e-3] * 3)


def test_measure_times_call_r_mod_count_in_round_r_for_every_entry():
    clock = FakeClock()
    ran: list[str] = []

    def calls(name, costs):
        def call(i, cost):
            def run():
                ran.append(f"{name}{i}")
                clock.now += cost
            return run
        return [call(i, cost) for i, cost in enumerate(costs)]

    entries = [("a", calls("a", (1e-3, 2e-3, 3e-3)), None), ("b", calls("b", (2e-3, 2e-3, 6e-3)), None)]
    result = harness.measure(entries, repeats=4, min_time=0.004, timer=clock)
    # calibration on the first placement's call, one warm-up sample of each, then rounds 0..3 at placements 0, 1, 2, 0
    assert result["a"][1] == pytest.approx([1e-3, 2e-3, 3e-3, 1e-3])
    assert result["b"][1] == pytest.approx([2e-3, 2e-3, 6e-3, 2e-3])
    assert list(dict.fromkeys(ran)) == ["a0", "a1", "a2", "b0", "b1", "b2"]  # each placement's call warmed up
    blocked = harness.measure(entries, repeats=4, min_time=0.004, timer=clock, interleave=False)
    assert blocked["a"][1] == pytest.approx([1e-3, 2e-3, 3e-3, 1e-3])  # the untimed sample at placement 0 first


def test_placed_copies_start_at_the_offset_past_a_page_boundary():
    from simdbind.conformance.model import PAGE_BYTES

    x = np.arange(1000, dtype=np.float32).reshape(10, 100)
    strided = np.arange(20, dtype=np.float32)[::2]
    for offset in harness.PLACEMENTS:
        copy = harness.placed(x, offset)
        assert copy.ctypes.data % PAGE_BYTES == offset and copy.dtype == x.dtype and copy.shape == x.shape
        assert np.array_equal(copy, x) and not np.shares_memory(copy, x)
        pair = harness.placed([x, np.ones(3, np.int64)], offset)
        assert isinstance(pair, list) and [a.ctypes.data % PAGE_BYTES for a in pair] == [offset, offset]
        assert harness.placed(strided, offset) is strided and harness.placed(None, offset) is None
    assert harness.placed(np.zeros((0, 4), np.float32), 16).shape == (0, 4)


def test_a_run_hands_every_implementation_its_arrays_at_each_placement():
    """Per placement, the inputs and the outputs of a prepared call start that many bytes past a page boundary."""
    from simdbind.bench.cases import from_descriptor
    from simdbind.conformance import PythonImplementation
    from simdbind.conformance.model import OUTPUTS, PAGE_BYTES

    engine, seen = PythonImplementation("places"), []

    @engine.preparer("eltwise")
    def eltwise_call(case, inputs):
        arrays = inputs["arrays"]
        out = inputs[OUTPUTS].new(arrays[0].shape, arrays[0].dtype)
        seen.append([a.ctypes.data % PAGE_BYTES for a in (*arrays, out)])
        return lambda: np.maximum(arrays[0], arrays[1], out=out)

    engine.function("eltwise")(lambda case, inputs: np.maximum.reduce(inputs["arrays"]))
    ms = harness.run([from_descriptor("eltwise op=max count=2 size=256")], [], peers=[engine], repeats=2,
                     min_time=0.0002, family_peers=False)
    assert [m.implementation for m in ms if m.ok] == ["places", "memcpy"]
    assert seen == [[offset] * 3 for offset in harness.PLACEMENTS]


def test_measure_reports_which_entry_failed():
    clock = FakeClock()

    def broken():
        raise RuntimeError("boom")

    with pytest.raises(harness.EntryError, match="bad: RuntimeError: boom") as info:
        harness.measure([("good", clock.call("good", 1e-3), None), ("bad", broken, None)], 2, 0.001, clock)
    assert info.value.name == "bad"


# -- output ----------------------------------------------------------------------------------------------------
def sample_report():
    ms = [measurement("bundled-avx2", "simdbind", 1e-6), measurement("bundled-avx2 raw cffi", "variant", 0.25e-6),
          measurement("torch", "peer", 2e-6)]
    ms.append(Measurement(ms[0].case, "elementwise", "eltwise", "Gelem/s", 2e9, "bundled-base", "simdbind", 1,
                          error="unsupported: | no"))
    harness.speedups(ms)
    harness.budgets({"baseline": "raw cffi"}, ms)
    from simdbind.conformance.implementations import implementations

    meta = {"command": "simdbind bench --quick", "repeats": 5, "min_time": 0.005, "provisional": "noisy machine",
            "placements": [0, 16],
            "environment": harness.environment(implementations(["bundled"], "base")),
            "notes": {"elementwise": "a note"}}
    return Report(meta, ms, {"simdbind.bench.broken": "ImportError: x"})


def test_json_report_round_trips_every_measurement_with_its_descriptor():
    data = json.loads(json.dumps(sample_report().to_dict()))
    assert [m["implementation"] for m in data["measurements"]] == [
        "bundled-avx2", "bundled-avx2 raw cffi", "torch", "bundled-base"]
    first = data["measurements"][0]
    assert first["case"] == "eltwise op=max count=2 size=64" and first["function"] == "eltwise"
    assert first["median"] == 1e-6 and first["speedup"] == {"torch": 2.0}
    assert first["budget"]["met"] is True and first["budget"]["limit_us"] == pytest.approx(1.375)
    env = data["meta"]["environment"]
    assert env["cpu"] and "base" in env["isas"] and "numpy" in env["versions"]
    assert data["errors"] == {"simdbind.bench.broken": "ImportError: x"}


def test_markdown_has_machine_command_tables_budget_and_family_lines():
    md = harness.to_markdown(sample_report())
    case = "eltwise op=max count=2 size=64"
    assert "Command: `simdbind bench --quick`" in md and "**Provisional:** noisy machine" in md
    assert "with every array of the case 0/16 bytes (the r-th mod 2) past a page boundary" in md
    assert "past a page boundary" not in harness.to_markdown(Report({}, [], {}))  # a run from before placements
    assert "| case | implementation | median µs | min-max µs | throughput | vs torch |" in md
    assert f"| {case} | bundled-avx2 | 1 | 1-1 | 2,000,000 Gelem/s | 2.00x |" in md
    assert f"| {case} | bundled-base | - | - | unsupported: / no |" in md  # no stray table separator
    assert (f"{case}, bundled-avx2: 1.00 µs vs 0.25 µs raw (4.0x); budget 1.5 x raw + 1 µs = 1.38 µs: within "
            "budget (fastest") in md
    assert "- **elementwise**: bundled-avx2 2.00x torch (1 case)" in md
    assert "`simdbind.bench.broken`: ImportError: x" in md
    full = md[md.index("<details>"):]
    table = [line for line in full.splitlines() if line.startswith("|")]
    assert len({line.count("|") for line in table}) == 1  # every row has the header's columns
    assert "| case | unit | bundled-avx2 | torch | bundled-base |" in md  # the compact table, variants left out
    assert f"| {case} | Gelem/s | **2,000,000** | 1,000,000 | n/a |" in md


def test_a_row_names_its_bench_family_where_it_is_not_the_functions_own():
    assert measurement("x", "peer", 1.0).row == "eltwise op=max count=2 size=64"
    assert measurement("x", "peer", 1.0, family="overhead").row == "overhead: eltwise op=max count=2 size=64"


def test_family_summary_is_a_geometric_mean_with_range_at_the_best_isa():
    ms = [measurement("bundled-avx2", "simdbind", 1.0, case="a", isa="avx2"),
          measurement("bundled-sse41", "simdbind", 2.0, case="a", isa="sse41"),
          measurement("torch", "peer", 4.0, case="a"),
          measurement("bundled-avx2", "simdbind", 1.0, case="b", isa="avx2"),
          measurement("torch", "peer", 1.0, case="b")]
    harness.speedups(ms)
    assert harness.family_summary(ms) == ["- **elementwise**: bundled-avx2 2.00x torch (2 cases, 1.00-4.00x)"]
    assert harness.family_summary(ms, best_isa_only=False) == [
        "- **elementwise**: bundled-avx2 2.00x torch (2 cases, 1.00-4.00x); bundled-sse41 2.00x torch (1 case)"]


def test_thread_scaling_table_has_a_row_per_case_and_implementation_with_its_ratio():
    ms = [measurement("bundled-avx2", "simdbind", 2e-3, case="conv"),
          measurement("bundled-avx2", "simdbind", 1e-3, case="conv", threads=2),
          measurement("torch", "peer", 3e-3, case="conv"), measurement("torch", "peer", 4e-3, case="conv", threads=2),
          measurement("bundled-avx2 raw", "variant", 1e-3, case="conv"),  # one thread count only: no row
          measurement("bundled-avx2", "simdbind", None, samples=[], case="gemm", threads=2)]
    rows = harness.thread_scaling_rows(ms)
    assert [(case, impl, ratios[1]) for case, impl, _, ratios in rows] == [
        ("conv", "bundled-avx2", 2.0), ("conv", "torch", 0.75)]
    table = harness.thread_scaling_table(ms)
    assert table[0] == "| case | implementation | 1 thr µs | 2 thr µs | 2 vs 1 thr (ideal 2x) |"
    assert table[2:] == ["| conv | bundled-avx2 | 2,000 | 1,000 | 2.00x |", "| conv | torch | 3,000 | 4,000 | 0.75x |"]
    assert harness.thread_scaling(ms) == ["- **elementwise**, 2 vs 1 threads: bundled-avx2 2.00x; torch 0.75x"]


# -- whole runs on the bundled library ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bundled():
    from simdbind.conformance.implementations import implementations

    return implementations(["bundled"], "all")


def test_run_measures_libraries_at_each_isa_and_the_memcpy_bound_and_restores_the_library(bundled):
    from simdbind.bench.cases import from_descriptor

    library = bundled[0].library
    isa_before, threads_before = library.isa, library.threads
    listed = [from_descriptor("eltwise op=max count=2 size=4096"), from_descriptor("unary op=exp size=4096")]
    ms = harness.run(listed, bundled, threads=[1, 2], repeats=1, min_time=0.0005)
    assert (library.isa, library.threads) == (isa_before, threads_before)
    names = [lib.name for lib in bundled]
    for threads in (1, 2):
        eltwise = {m.implementation: m for m in ms if m.case == listed[0].descriptor and m.threads == threads}
        assert set(eltwise) == set(names) | {"memcpy"}  # memory-bound: the bound copies the same bytes
        assert all(m.ok and m.median > 0 for m in eltwise.values())
        assert eltwise[names[-1]].speedup["memcpy"] > 0
        exp = {m.implementation for m in ms if m.case == listed[1].descriptor and m.threads == threads}
        assert exp == set(names)  # compute-bound: no bound
    assert {m.isa for m in ms if m.kind == "simdbind"} == set(library.isas_supported)


def test_the_memcpy_bound_is_measured_apart_after_the_implementations(bundled, monkeypatch):
    # Interleaved with them, the copy's traffic slowed whichever implementation came next.
    from simdbind.bench.cases import from_descriptor

    batches: list[list[str]] = []
    real = harness.measure

    def recording(entries, *args, **kwargs):
        batches.append([name for name, _, _ in entries])
        return real(entries, *args, **kwargs)

    monkeypatch.setattr(harness, "measure", recording)
    harness.run([from_descriptor("eltwise op=max count=2 size=4096")], bundled[:2], threads=[1], repeats=1,
                min_time=0.0005)
    assert batches == [[lib.name for lib in bundled[:2]], ["memcpy"]]


def test_the_memcpy_bound_copies_written_memory():
    # numpy.zeros' untouched pages all map the zero page, which a copy reads from cache
    copy = harness.memcpy_bound(2 * 65536)
    copy()
    assert all(a.size == 65536 and a.all() for a in copy.args)  # target, source: written, nonzero


def test_run_times_the_prepared_call_at_the_isa_of_each_library(bundled, monkeypatch):
    from simdbind.bench.cases import from_descriptor
    from simdbind.conformance.model import REGISTRY

    seen = []
    function = REGISTRY["unary"]
    real = function.prepare

    def spy(library, case, inputs):
        call = real(library, case, inputs)
        return lambda: (seen.append(library.isa), call())[1]

    monkeypatch.setattr(function, "prepare", spy)
    harness.run([from_descriptor("unary op=abs size=64")], bundled, repeats=1, min_time=0.0)
    assert set(seen) == set(bundled[0].library.isas_supported)


# -- the command line ------------------------------------------------------------------------------------------
PLAIN = '''
from simdbind.conformance import PythonImplementation
import numpy as np

engine = PythonImplementation("{name}")
calls = {{"run": 0, "prepare": 0}}

@engine.function("eltwise")
def eltwise(case, inputs):
    calls["run"] += 1
    return np.maximum.reduce(inputs["arrays"])
'''

PREPARED = PLAIN + '''
@engine.preparer("eltwise")
def eltwise_call(case, inputs):
    calls["prepare"] += 1
    arrays, out = inputs["arrays"], np.empty_like(inputs["arrays"][0])
    return lambda: np.maximum(arrays[0], arrays[1], out=out)
'''


@pytest.mark.parametrize("source, module", [(PLAIN, "bench_impl_plain"), (PREPARED, "bench_impl_prepared")])
def test_a_third_party_implementation_is_benched_through_the_cli(tmp_path, monkeypatch, capsys, source, module):
    import sys

    (tmp_path / f"{module}.py").write_text(textwrap.dedent(source.format(name="mine")))
    monkeypatch.chdir(tmp_path)
    out_json = tmp_path / "b.json"
    case = "eltwise op=max count=2 size=256"
    assert main(["bench", "--isa", "base", "--case", case, "--impl", f"{module}:engine",
                 "--repeats", "2", "--min-time", "0.0002", "--json", str(out_json)]) == 0
    rows = {m["implementation"]: m for m in json.loads(out_json.read_text())["measurements"]}
    # the library as without --impl (so $SIMD_LIBRARY too, when set); --impl replaces the default peers
    assert {"bundled-base", "mine", "memcpy"} <= set(rows) and not {"torch", "onnxruntime"} & set(rows)
    assert rows["mine"]["kind"] == "peer" and rows["mine"]["median"] > 0 and rows["mine"]["case"] == case
    assert rows["bundled-base"]["speedup"]["mine"] > 0
    calls = sys.modules[module].calls
    if module == "bench_impl_prepared":
        assert calls == {"run": 0, "prepare": len(harness.PLACEMENTS)}  # set up once per placement, its call timed
    else:
        assert calls["prepare"] == 0 and calls["run"] > 3  # without prepare: run itself is timed


def test_cli_case_benches_a_case_no_family_lists(tmp_path, capsys):
    from simdbind.bench.cases import discover

    case = "pooling_max32f layout=nhwc channels=3 height=9 width=7 kernel=3x2 stride=2x1 ceil=true"
    assert all(item.descriptor != case for item in discover()[0])
    out_json = tmp_path / "b.json"
    assert main(["bench", "--library", "bundled", "--isa", "base", "--no-peers", "--case", case, "--repeats", "1",
                 "--min-time", "0.0002", "--json", str(out_json)]) == 0
    data = json.loads(out_json.read_text())
    assert {m["case"] for m in data["measurements"]} == {case}
    row = next(m for m in data["measurements"] if m["implementation"] == "bundled-base")
    assert row["family"] == "pooling" and row["unit"] == "GB/s" and row["median"] > 0
    assert f"--case '{case}'" in data["meta"]["command"]
    capsys.readouterr()
    assert main(["bench", "--case", "pooling_max32f layout=nhwc"]) == 2
    err = capsys.readouterr().err
    assert "--case:" in err and "channels= is required" in err


def test_cli_list_and_argument_errors(capsys):
    assert main(["bench", "--list", "--functions", "overhead"]) == 0
    out = capsys.readouterr().out
    assert "overhead       eltwise op=sum count=2 size=16" in out and "gil" not in out
    assert main(["bench", "--threads", "one"]) == 2
    assert "--threads" in capsys.readouterr().err
    assert main(["bench", "--impl", "no_such_engine_anywhere"]) == 2
    assert "no implementation of that name" in capsys.readouterr().err
    assert main(["bench", "--no-peers", "--impl", "torch"]) == 2
    assert main(["bench", "--functions", "no such case anywhere"]) == 2


def test_cli_progress_has_a_header_a_position_and_names_that_tell_cases_apart(capsys):
    from simdbind.bench.cases import discover

    listed = [item for item in discover(["unary op=exp"], quick=False)[0]]
    assert len(listed) >= 2
    assert main(["bench", "--library", "bundled", "--isa", "base", "--no-peers", "--functions", "unary op=exp",
                 "--threads", "1,2", "--repeats", "1", "--min-time", "0.0002"]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = 2 * len(listed)
    assert lines[0] == (f"simdbind bench: {len(listed)} case(s) of elementwise x threads 1,2; libraries bundled-base; "
                        "peers none; timer wall, order auto, 1 samples of >= 0.0002 s")
    rows = [line for line in lines if line.startswith("[")]
    width = len(str(steps))
    for index, item in enumerate(listed * 2, 1):
        mine = [line for line in rows if line.startswith(f"[{index:>{width}}/{steps}] ")]
        assert mine and all(f"] {item.descriptor} " in line for line in mine), (index, item.descriptor, rows)
    names = {line.split("] ", 1)[1][:max(len(item.descriptor) for item in listed)].rstrip() for line in rows}
    assert names == {item.descriptor for item in listed}  # every case under its own whole name


def test_run_interrupted_keeps_the_cases_finished_before(bundled, monkeypatch):
    from simdbind.bench.cases import from_descriptor

    threads_before = bundled[0].library.threads
    listed = [from_descriptor(f"unary op=abs size={size}") for size in (16, 32, 64)]
    real = harness._run_case
    calls = []

    def stop_at_the_third(item, *args):
        calls.append(item.descriptor)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(item, *args)

    monkeypatch.setattr(harness, "_run_case", stop_at_the_third)
    with pytest.raises(harness.Interrupted) as stopped:
        harness.run(listed, bundled[:1], repeats=1, min_time=0.0)
    assert isinstance(stopped.value, KeyboardInterrupt)
    assert [m.case for m in stopped.value.measurements if m.kind == "simdbind"] == [c.descriptor for c in listed[:2]]
    assert bundled[0].library.threads == threads_before  # the library's settings restored on the way out


def test_cli_overhead_rows_have_the_raw_cffi_floor_and_the_budget(tmp_path):
    out_json, out_md = tmp_path / "b.json", tmp_path / "b.md"
    assert main(["bench", "--library", "bundled", "--isa", "base", "--no-peers", "--functions",
                 "overhead: unary op=abs size=16", "--repeats", "1", "--min-time", "0.0002", "--json", str(out_json),
                 "--md", str(out_md)]) == 0
    rows = {m["implementation"]: m for m in json.loads(out_json.read_text())["measurements"]}
    assert set(rows) == {"bundled-base", "bundled-base raw cffi"}  # no memcpy bound at 16 elements
    assert rows["bundled-base"]["family"] == "overhead"
    assert rows["bundled-base"]["budget"]["baseline"] == "bundled-base raw cffi"
    assert "| overhead: unary op=abs size=16 | bundled-base |" in out_md.read_text()


def test_cli_order_option_reaches_the_report(tmp_path):
    out_json = tmp_path / "b.json"
    assert main(["bench", "--library", "bundled", "--case", "unary op=abs size=64", "--isa", "base", "--no-peers",
                 "--order", "blocked", "--threads", "1,2", "--repeats", "1", "--min-time", "0.0002", "--json",
                 str(out_json)]) == 0
    data = json.loads(out_json.read_text())
    assert data["meta"]["order"] == "blocked" and "--order blocked" in data["meta"]["command"]


# -- the GIL family --------------------------------------------------------------------------------------------
def test_two_threads_run_both_jobs_and_propagate_errors():
    import threading

    from simdbind.bench.gil import _two_threads

    pool = _two_threads()
    names = []
    name = lambda: names.append(threading.current_thread().name)  # noqa: E731
    pool.run(name, name)
    assert sorted(names) == ["simdbind-bench-gil-0", "simdbind-bench-gil-1"]

    def boom():
        raise KeyError("job")

    with pytest.raises(KeyError):
        pool.run(boom, lambda: None)
    pool.run(lambda: None, lambda: None)  # still usable


def test_gil_rows_compare_two_python_threads_with_one(bundled):
    from simdbind.bench import gil
    from simdbind.bench.cases import Listed, work
    from simdbind.conformance.model import case_from_descriptor

    case = case_from_descriptor("eltwise op=max count=2 size=4096")
    assert work(case, "gil").amount == 2 * gil.CALLS * 4096
    ms = harness.run([Listed("gil", case)], bundled[-1:], repeats=1, min_time=0.0)
    rows = {m.implementation: m for m in ms}
    name = bundled[-1].name
    assert set(rows) == {name, f"{name} 1 Python thread"}  # no peers, no bound: the GIL is the question
    assert rows[name].speedup[gil.ONE_THREAD] > 0


def test_python_progress_demo_reports_three_rates():
    from simdbind.bench.gil import python_progress

    rates = python_progress(size=1024, calls=2)  # a smoke test: the numbers are for reading, not asserting
    assert list(rates) == ["other thread sleeping", "other thread in simdbind C calls",
                           "other thread in a GIL-holding C call"]
    assert all(value >= 0 for value in rates.values())
