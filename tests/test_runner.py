"""The conformance runner: case selection, statuses, peers and other implementations, worker processes, the command
line."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given

import tests.fake_cases as fake
from simdbind.conformance import PythonImplementation, Unsupported, deviations, runner
from simdbind.conformance import strategies as sbst
from simdbind.conformance.implementations import as_subject, implementations
from simdbind.conformance.model import GROUPS, PROFILES, REGISTRY
from tests.runner_doubles import Corrupting

EMPTY = deviations.Catalogue()


@pytest.fixture(scope="module")
def base():
    (impl,) = implementations(["bundled"], "base")
    return impl


def by_descriptor(run: runner.Run) -> dict[str, runner.CaseResult]:
    return {r.descriptor: r for r in run.results}


# -- selection -------------------------------------------------------------------------------------------------
def test_filter_is_a_glob_over_function_dtype_layout_descriptor_and_patterns_combine():
    eltwise = REGISTRY["eltwise"]
    chosen = runner.select_cases(eltwise, "full", "op=max count=2 size=1[0-9]")
    assert {c.descriptor for c in chosen} == {f"eltwise op=max count=2 size={n}" for n in (*range(10, 20), 12288, 12297)}
    assert runner.select_cases(eltwise, "full", ["float32", "min", "size=67 special=nan"]) == \
        [c for c in eltwise.cases() if c.descriptor == "eltwise op=min count=2 size=67 special=nan_inf group=edge"] + \
        [c for c in eltwise.cases() if c.descriptor == "eltwise op=min count=3 size=67 special=nan_inf group=edge"]
    assert runner.select_cases(eltwise, "full", "float64") == []


def test_case_descriptor_selects_exactly_one_case_whatever_the_profile():
    eltwise = REGISTRY["eltwise"]
    full_only = next(c for c in eltwise.cases() if c.profiles == ("full",))
    assert runner.select_cases(eltwise, "smoke", None, full_only.descriptor) == [full_only]
    assert runner.select_cases(eltwise, "smoke", None, "eltwise op=max count=2 size=1") != \
        runner.select_cases(eltwise, "smoke", "eltwise op=max count=2 size=1")  # the glob also matches size10..size19


def test_every_registered_function_has_unique_descriptors_and_valid_profiles_and_groups():
    for function in REGISTRY.values():
        cases = list(function.cases())
        descriptors = [c.descriptor for c in cases]
        duplicates = {d for d in descriptors if descriptors.count(d) > 1}
        assert not duplicates, f"{function.name}: duplicate descriptors {sorted(duplicates)[:5]}"
        for case in cases:
            assert case.function == function.name, case.descriptor
            assert case.group in GROUPS and set(case.profiles) <= set(PROFILES), case.descriptor
            assert "\n" not in case.descriptor and case.descriptor.strip() == case.descriptor


def test_unknown_function_is_named():
    with pytest.raises(KeyError, match="nope"):
        runner.functions(["nope"])


# -- statuses --------------------------------------------------------------------------------------------------
def test_statuses_pass_fail_error_skip_with_repro_lines(base):
    results = {}  # (not runner.run over the full profile: its CRASH case would kill this process)
    for descriptor in ("fake_copy layout=nchw size=2", fake.RAISE, fake.CORRUPT, "fake_copy layout=nhwc size=8 group=edge"):
        (case,) = runner.select_cases(REGISTRY["fake_copy"], "full", None, descriptor)
        results[descriptor] = runner.run_case(base, REGISTRY["fake_copy"], case, 7, EMPTY)
    (missing,) = REGISTRY["fake_missing"].cases()
    results["missing"] = runner.run_case(base, REGISTRY["fake_missing"], missing, 7, EMPTY)
    ok, raised, corrupt, nan = (results[d] for d in ("fake_copy layout=nchw size=2", fake.RAISE, fake.CORRUPT,
                                                     "fake_copy layout=nhwc size=8 group=edge"))
    assert ok.status == "pass" and ok.repro == "" and ok.total == 2 and ok.max_ulp == 0
    assert nan.status == "pass"  # NaN == NaN in the comparison
    assert raised.status == "error" and "RuntimeError: fake kernel refused" in raised.detail
    assert corrupt.status == "fail" and corrupt.mismatches == 1 and "index 3" in corrupt.detail
    assert corrupt.max_abs == pytest.approx(1.0, rel=1e-6)
    assert corrupt.repro == (f"simdbind conformance --library bundled --isa base --function fake_copy --seed 7 "
                             f"--case '{fake.CORRUPT}'")
    assert results["missing"].status == "skip" and "SimdNoSuchFunctionAnywhere" in results["missing"].detail
    assert ok.family == "fake" and ok.variant == "copy" and ok.layout == "nchw"


def test_reference_sees_what_run_recorded_in_the_inputs(base):
    """Cases may record in `inputs` what the library did (e.g. whether it honours a flag) for the reference."""

    class Recording(Corrupting):
        def run(self, function, case, inputs):
            inputs["recorded"] = True
            return self.inner.run(function, case, inputs)

    seen = []
    eltwise = REGISTRY["eltwise"]
    original = eltwise.reference
    try:
        eltwise.reference = lambda case, inputs: seen.append(inputs.get("recorded")) or original(case, inputs)
        (case,) = runner.select_cases(eltwise, "full", None, "eltwise op=sum count=2 size=17")
        assert runner.run_case(Recording(base, set()), eltwise, case, 1, EMPTY).status == "pass"
    finally:
        del eltwise.reference
    assert seen == [True]


def test_a_reference_computes_non_finite_values_without_warnings(base):
    # The edge cases' NaN and Inf are the point: Inf * 0 and Inf - Inf in a reference are no reason for a warning.
    unary = REGISTRY["unary"]
    original = unary.reference

    def noisy(case, inputs):
        np.float32(np.inf) - np.float32(np.inf)  # warns outside np.errstate
        return original(case, inputs)

    try:
        unary.reference = noisy
        (case,) = runner.select_cases(unary, "ci", None, "unary op=abs size=25")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert runner.run_case(base, unary, case, 1, EMPTY).status == "pass"
    finally:
        del unary.reference
    with pytest.warns(RuntimeWarning):
        noisy(case, unary.inputs(case, case.rng(1)))


def test_injected_one_ulp_error_fails_an_exact_function(base):
    impl = Corrupting(base, {"eltwise op=max count=2 size=17"})
    run = runner.run([impl], ["eltwise"], "smoke", catalogue=EMPTY)
    failed = [r for r in run.results if r.status != "pass"]
    assert [r.descriptor for r in failed] == ["eltwise op=max count=2 size=17"]
    assert failed[0].max_ulp == 1 and failed[0].status == "fail"


def test_seeded_inputs_do_not_depend_on_order_or_workers(base):
    one = runner.run([base], ["eltwise"], "smoke", seed=3, catalogue=EMPTY)
    two = runner.run([base], ["eltwise"], "smoke", seed=3, catalogue=EMPTY, workers=2)
    key = lambda r: (r.implementation, r.descriptor, r.status, r.max_abs, r.max_ulp, r.total)  # noqa: E731
    assert [key(r) for r in one.results] == [key(r) for r in two.results]
    other_seed = runner.run([base], ["eltwise"], "smoke", seed=4, catalogue=EMPTY)
    sums = [(a.max_abs, b.max_abs) for a, b in zip(one.results, other_seed.results) if "sum" in a.descriptor]
    assert any(a != b for a, b in sums)  # the seed does change the inputs


def test_a_crashing_case_in_a_worker_is_an_error_of_that_case_only(base):
    run = runner.run([base], ["fake_copy"], "full", workers=2, catalogue=EMPTY, modules=["tests.fake_cases"])
    results = by_descriptor(run)
    assert len(run.results) == 8
    assert results[fake.CRASH].status == "error" and "died" in results[fake.CRASH].detail
    assert results[fake.CRASH].repro.endswith(f"--case '{fake.CRASH}'")
    assert results[fake.RAISE].status == "error" and results[fake.CORRUPT].status == "fail"
    assert all(results[f"fake_copy layout=nchw size={n}"].status == "pass" for n in range(1, 5))


def test_worker_count_parsing_and_cap():
    cpus = runner.available_cpus()
    assert runner.worker_count("auto") == cpus and runner.worker_count(None) == 1 and runner.worker_count("1") == 1
    warnings = []
    assert runner.worker_count(str(cpus + 498), warnings.append) == cpus
    assert warnings == [f"-n {cpus + 498}: capped at {cpus}, the CPUs this process may use"]
    for bad in ("-2", "x", "1.5"):
        with pytest.raises(ValueError, match="-n"):
            runner.worker_count(bad)


# -- peers and other implementations ----------------------------------------------------------------------------
#: A module-level implementation: selectable as tests.test_runner:FAKE, so its repro lines rerun it.
FAKE = PythonImplementation("fakeimpl", requires=("numpy",))


@FAKE.function("fake_copy")
def _fake_copy(case, inputs):
    if case.group == "edge":
        raise Unsupported("fakeimpl has no NaN")
    return inputs["x"].copy()


def test_missing_required_package_is_a_skip_with_the_reason():
    impl = PythonImplementation("nopkg", requires=("simdbind_no_such_package",))
    run = runner.run([impl], ["eltwise"], "smoke", catalogue=EMPTY)
    assert run.results and all(r.status == "skip" for r in run.results)
    assert run.results[0].detail == "simdbind_no_such_package is not installed"
    assert as_subject(impl).describe()["available"] == "simdbind_no_such_package is not installed"


def test_function_without_implementation_is_skipped_and_unsupported_cases_name_the_reason():
    run = runner.run([FAKE], ["fake_copy", "eltwise"], "ci", catalogue=EMPTY)
    results = by_descriptor(run)
    assert results["fake_copy layout=nchw size=1"].status == "pass"
    assert results["fake_copy layout=nhwc size=8 group=edge"].status == "skip"
    assert results["fake_copy layout=nhwc size=8 group=edge"].detail == "fakeimpl has no NaN"
    assert results["eltwise op=max count=2 size=17"].status == "skip"
    assert results["eltwise op=max count=2 size=17"].detail == "fakeimpl has no eltwise"
    assert as_subject(FAKE).repro_args() == "--impl tests.test_runner:FAKE"


def test_any_object_with_the_protocol_is_an_implementation_and_keeps_its_tolerance():
    from simdbind.conformance.tolerance import Tolerance

    class Halving:  # not a PythonImplementation: the bare protocol, with the optional tolerance
        name = "halving"

        def unsupported(self, function, case):
            return None if function == "fake_copy" else "only fake_copy"

        def run(self, function, case, inputs):
            return inputs["x"] * np.float32(1.25)

        def tolerance(self, function, case):
            return Tolerance(rel=0.5, why="halving")

    run = runner.run([Halving()], ["fake_copy", "eltwise"], "smoke", catalogue=EMPTY)
    assert {r.status for r in run.results if r.function == "fake_copy" and r.group == "main"} == {"pass"}
    assert {(r.status, r.detail) for r in run.results if r.function == "eltwise"} == {("skip", "only fake_copy")}
    assert run.results[0].tolerance == Tolerance(rel=0.5, why="halving").describe()


@pytest.mark.parametrize("name", ["torch", "onnxruntime"])
def test_peer_agrees_with_the_references_on_every_function_it_has(name):
    """Cross-validation: every function a peer implements passes the ci profile (skips name their reason)."""
    pytest.importorskip(name)
    (impl,) = implementations(None, impls=[name])
    names = [f for f in REGISTRY if f in impl.implementation.functions]
    assert "eltwise" in names
    run = runner.run([impl], names, "ci", catalogue=EMPTY)
    bad = [(r.descriptor, r.detail[:200]) for r in run.results if r.status not in ("pass", "skip")]
    assert not bad, bad[:5]
    for function in names:
        assert any(r.status == "pass" for r in run.results if r.function == function), function
    skipped = [r for r in run.results if r.status == "skip"]
    assert all(r.detail for r in skipped)
    eltwise_skips = [r for r in skipped if r.function == "eltwise"]
    assert eltwise_skips and all(r.group == "edge" and "NaN" in r.detail for r in eltwise_skips)


@pytest.mark.parametrize("name", ["torch", "onnxruntime"])
def test_peer_is_really_checked(name):
    """A wrong mapping would be caught: the torch/onnxruntime product of the inputs is not their sum."""
    pytest.importorskip(name)
    (impl,) = implementations(None, impls=[name])
    eltwise = REGISTRY["eltwise"]
    (case,) = runner.select_cases(eltwise, "full", None, "eltwise op=sum count=3 size=33")
    inputs = eltwise.inputs(case, case.rng(1))
    actual = impl.run("eltwise", case, inputs)
    assert actual.dtype == np.float32 and actual.shape == (33,)
    product = impl.run("eltwise", runner.select_cases(eltwise, "full", None, "eltwise op=product count=3 size=33")[0],
                       inputs)
    assert not np.allclose(actual, product)


# -- command line ----------------------------------------------------------------------------------------------
def cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdbind", "conformance", *args], capture_output=True, text=True,
                          cwd=cwd)


def test_cli_writes_every_report_and_prints_a_summary(tmp_path):
    out = cli("--library", "bundled", "--isa", "base", "-k", "max", "-k", "size=17", "--report-json", str(tmp_path / "r.json"),
              "--junit-xml", str(tmp_path / "r.xml"), "--report-md", str(tmp_path / "r.md"),
              "--report-html", str(tmp_path / "r.html"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "profile smoke, seed 20261122, 2 case runs on 1 implementation" in out.stdout
    assert "2 passed, 0 failed, 0 skipped" in out.stdout and "worst ulp" in out.stdout
    assert "progress: 2/2 cases (100%), 0 failed" in out.stderr  # not a TTY: plain lines
    data = json.loads((tmp_path / "r.json").read_text())
    assert [r["descriptor"] for r in data["results"]] == ["eltwise op=max count=2 size=17", "eltwise op=max count=3 size=17"]
    meta = data["meta"]
    assert meta["seed"] == 20261122 and meta["profile"] == "smoke" and meta["filter"] == "max size=17"
    env = meta["environment"]
    assert env["implementations"][0]["isa"] == "base" and env["implementations"][0]["version"]
    assert env["cpu_model"] and env["packages"]["numpy"] == np.__version__
    assert env["libraries"][0]["path"].endswith(".so")
    for suffix in ("xml", "md", "html"):
        assert (tmp_path / f"r.{suffix}").stat().st_size > 200


def test_cli_default_reports_go_under_reports(tmp_path):
    out = cli("--isa", "base", "--case", "eltwise op=min count=2 size=1", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    (folder,) = (tmp_path / "reports").iterdir()  # the run's own folder (tests/test_report_destinations.py)
    assert sorted(p.name for p in folder.iterdir()) == \
        ["conformance.html", "conformance.json", "conformance.md", "conformance.xml"]


def test_cli_list_and_empty_selection(tmp_path):
    out = cli("--isa", "base", "--list", "-k", "product count=2 size=1[0-9]")
    assert out.returncode == 0 and out.stdout.split("\n")[0] == "bundled-base  eltwise op=product count=2 size=17"
    out = cli("--list", "--case", "eltwise op=product count=2 size=1")
    assert out.returncode == 0 and out.stdout.split("\n")[0] == "bundled-base  eltwise op=product count=2 size=1"
    out = cli("--isa", "base", "-k", "no such case", "--report-json", "")
    assert out.returncode == 2 and "no cases selected" in out.stderr
    out = cli("--function", "nope")
    assert out.returncode == 2 and "unknown function(s) nope" in out.stderr


def test_cli_peer_runs_or_is_refused_with_the_reason(tmp_path):
    import importlib.util

    out = cli("--impl", "onnxruntime", "-k", "max count=3 size=1", "--report-json", str(tmp_path / "r.json"),
              "--junit-xml", "", "--report-md", "", "--report-html", "")
    if importlib.util.find_spec("onnxruntime") is None:
        assert out.returncode == 2
        assert out.stderr.strip() == "simdbind: --impl onnxruntime: onnxruntime, onnx are not installed"
        return
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert {r["implementation"] for r in data["results"]} == {"onnxruntime"}
    assert all(r["status"] == "pass" for r in data["results"])


# -- hypothesis helpers ----------------------------------------------------------------------------------------
def test_hypothesis_profile_follows_the_suite_profile_and_uses_the_repo_database(request):
    from pathlib import Path

    from hypothesis import settings

    from simdbind.conformance import strategies

    assert settings.get_current_profile_name() == request.config.getoption("simd_profile")
    assert settings.default.print_blob
    assert strategies.database_path() == Path(__file__).resolve().parent.parent / ".hypothesis" / "examples"
    assert Path(settings.default.database.path) == strategies.database_path()
    with pytest.raises(ValueError, match="must be one of smoke, ci, full"):
        strategies.load_profile("nightly")


@given(x=sbst.float32_arrays(sbst.shapes(max_dims=2)), n=sbst.vector_sizes(), layout=sbst.layouts(),
       y=sbst.float32_arrays((5,), specials=True), q=sbst.int_arrays("int8", (3,)))
def test_strategies_draw_what_they_say(x, n, layout, y, q):
    assert x.dtype == np.float32 and 1 <= x.ndim <= 2 and np.isfinite(x).all() and np.abs(x).max() <= 1e3
    assert n in sbst.VECTOR_SIZES and layout in ("nchw", "nhwc")
    assert y.dtype == np.float32 and y.shape == (5,) and q.dtype == np.int8


# -- comparison figures ----------------------------------------------------------------------------------------
def test_figures_leave_out_passing_cancellation_noise_but_never_a_failing_element():
    from simdbind.conformance.tolerance import EXACT, Tolerance, compare

    expected = np.array([1.0, 1e-6, 0.5, np.nan, 3.0], np.float32)
    actual = expected.copy()
    actual[1] = 2e-6  # within abs 1e-5, but 10**6 ulp and 100 % relative
    actual[2] = np.nextafter(np.float32(0.5), np.float32(1))
    loose = compare(actual, expected, Tolerance(abs=1e-5))
    assert loose.passed and loose.max_ulp == 1 and loose.max_rel == pytest.approx(2**-23)
    assert loose.max_abs == pytest.approx(1e-6, rel=1e-3)
    exact = compare(actual, expected, EXACT)
    assert not exact.passed and exact.mismatches == 2 and exact.max_ulp > 1e6 and exact.max_rel == pytest.approx(1)
    assert exact.first_mismatch == "index 1: got 2e-06, expected 1e-06" and exact.total == 5
    assert compare(expected, expected.copy(), EXACT) == compare(expected[:0], expected[:0], EXACT).__class__(
        True, 0, 5)


def test_an_infinity_matches_only_itself_under_a_relative_tolerance():
    # rel * |inf| is inf: without the finiteness rule, a clamped 2**127 passed for an expected +inf (found on
    # upstream's exp, whose catalogued clamp then showed as a catalogued case that 'passed').
    from simdbind.conformance.tolerance import Tolerance, compare

    expected = np.array([np.inf, -np.inf, 1.0, np.inf], np.float32)
    clamped = np.array([2.0 ** 127, -np.inf, 1.0, np.inf], np.float32)
    result = compare(clamped, expected, Tolerance(rel=1e-5, abs=1e-6))
    assert (result.passed, result.mismatches) == (False, 1)
    assert result.first_mismatch.startswith("index 0:")
    assert not compare(expected, clamped, Tolerance(rel=1e-5)).passed  # inf where a finite value is expected
    assert not compare(-expected, expected, Tolerance(rel=1.0)).passed  # -inf for +inf
    largest = np.array([np.finfo(np.float32).max], np.float32)
    assert compare(largest, np.array([np.inf], np.float32), Tolerance(max_ulp=1)).passed  # 1 ulp apart in bits
    assert not compare(largest, np.array([np.inf], np.float32), Tolerance(max_ulp=0, rel=1.0)).passed


def test_repeated_libraries_are_one_implementation_each():
    names = [i.name for i in implementations(["bundled", "bundled"], "base")]
    assert names == ["bundled-base"]


def test_libraries_loaded_alike_get_numbered_names_so_no_two_rows_share_one(tmp_path):
    # Two bundled builds given by path (an A/B of two versions) were both "bundled-abi-base": the bench keyed their
    # samples by name and reported one library's times twice.
    import shutil

    from simdbind.library import bundled_path

    first, second = tmp_path / "a.so", tmp_path / "b.so"
    shutil.copy(bundled_path(), first)
    shutil.copy(bundled_path(), second)
    names = [i.name for i in implementations(["bundled", str(first), str(second)], "base")]
    assert names == ["bundled-base", "bundled-abi1-base", "bundled-abi2-base"]
    assert [i.name for i in implementations([str(first)], "base")] == ["bundled-abi-base"]


def test_inputs_reach_the_implementation_between_guard_zones_of_nan():
    # A kernel reading outside its inputs then sees NaN or all-ones integers; upstream's InnerProduct32f and
    # GemmNT convolution were caught this way (docs/upstream.md).
    from simdbind.conformance.runner import GUARD_BYTES, guarded

    inputs = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "pair": [np.ones(3, np.int8), 7],
              "empty": np.zeros(0, np.float32)}
    out = guarded(inputs)
    assert np.array_equal(out["x"], inputs["x"]) and out["x"] is not inputs["x"] and out["x"].flags.c_contiguous
    assert out["pair"][1] == 7 and np.array_equal(out["pair"][0], inputs["pair"][0])
    storage = out["x"].base
    while storage.base is not None:
        storage = storage.base
    assert storage.nbytes == 2 * GUARD_BYTES + 24
    assert (storage[:GUARD_BYTES] == 0xFF).all() and (storage[-GUARD_BYTES:] == 0xFF).all()
    assert np.isnan(storage[:GUARD_BYTES].view(np.float32)).all()


def test_a_case_whose_inputs_cannot_be_made_is_an_error_of_the_case_not_a_dead_process():
    """A descriptor can combine values that parse one by one but not together (a specials input longer than its
    size): the run reports it as an error naming the case, instead of raising out of the runner (which killed
    explore's worker, reported as a crash of the implementation)."""
    function = REGISTRY["unary"]
    case = function.parse("unary op=rcp size=68 special=specials group=edge")
    (bundled,) = implementations(["bundled"], "base")
    result = runner.run_case(bundled, function, case)
    assert result.status == "error" and result.detail.startswith("case: ValueError: negative dimensions"), \
        result.detail
