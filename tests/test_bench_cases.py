"""The bench's cases are conformance cases: every listed descriptor parses back to the case it names, the work of
a call follows from the case's params (checked against counts made by hand), and a prepared call computes what the
implementation's run computes. And the plot: one PNG per family."""

from __future__ import annotations

import numpy as np
import pytest

from simdbind.bench import cases as bench_cases
from simdbind.bench.cases import Work, discover, work
from simdbind.conformance.model import REGISTRY, case_from_descriptor


def test_every_listed_descriptor_parses_back_to_the_case_it_names():
    listed, errors = discover()
    assert errors == {}
    assert {item.family for item in listed} == {"convolution", "elementwise", "gather", "inner_product", "pooling",
                                                "overhead", "gil"}
    for item in listed:
        again = case_from_descriptor(item.descriptor)
        assert again == item.case and again.descriptor == item.descriptor  # canonical: the text is the case
        assert again.params == item.case.params and again.layout == item.case.layout
    quick, _ = discover(quick=True)
    assert 0 < len(quick) < len(listed)
    assert {item.descriptor for item in quick} <= {item.descriptor for item in listed} | {
        item.descriptor for item in quick if item.family == "pooling"}  # pooling's quick shape is its own


def test_functions_patterns_select_a_family_by_name_and_cases_by_descriptor():
    listed, _ = discover()
    chosen = lambda *patterns: {(i.family, i.descriptor) for i in listed if i.matches(patterns)}  # noqa: E731
    pooling = chosen("pooling")
    assert {family for family, _ in pooling} == {"pooling"}  # not overhead's pooling cases
    assert chosen("overhead") == {(i.family, i.descriptor) for i in listed if i.family == "overhead"}
    assert chosen("unary op=exp") == {(i.family, i.descriptor) for i in listed
                                      if i.family == "elementwise" and "unary op=exp" in i.descriptor}
    assert chosen("overhead: unary op=abs") == {("overhead", "unary op=abs size=16")}
    assert chosen("convolution", "gil") == chosen("convolution") | chosen("gil")


def test_the_family_modules_list_descriptors_not_code():
    for name in bench_cases.family_modules():
        module = __import__(name, fromlist=["DESCRIPTORS"])
        assert module.DESCRIPTORS and all(isinstance(d, str) for d in module.DESCRIPTORS), name
        assert len(set(module.DESCRIPTORS)) == len(module.DESCRIPTORS), name


@pytest.mark.parametrize("descriptor, expected", [
    # 56x56 output (pad 1), 64 x 64 channels, 3x3 taps: 2 * 56*56 * 64 * 64 * 9 flops
    ("convolution32f layout=nchw src_c=64 src_h=56 src_w=56 dst_c=64 kernel=3x3 pad=1.1.1.1 activation=relu",
     Work("effective GFLOP/s", 2 * 56 * 56 * 64 * 64 * 9)),  # Winograd-eligible: direct FLOPs, an effective rate
    # depthwise stride 2: 28x28 output, one input channel per output channel
    ("convolution32f layout=nhwc src_c=144 src_h=56 src_w=56 dst_c=144 kernel=3x3 stride=2x2 pad=1.1.1.1 "
     "groups=144 activation=relu", Work("GFLOP/s", 2 * 28 * 28 * 144 * 1 * 9)),
    # dilation 2 makes a 5x5 window: (10 + 0 - 5) // 1 + 1 = 6 rows, (9 + 1 + 2 - 5) // 2 + 1 = 4 columns
    ("convolution32f layout=nchw src_c=3 src_h=10 src_w=9 dst_c=5 kernel=3x3 stride=1x2 dilation=2x2 pad=0.1.0.2",
     Work("GFLOP/s", 2 * 6 * 4 * 5 * 3 * 9)),
    ("inner_product_32f M=64 N=1024 K=1024 trans_b=true const_b=true bias=false",
     Work("GFLOP/s", 2 * 64 * 1024 * 1024)),
    ("inner_product_32f M=2 N=3 K=5 trans_b=false const_b=false bias=true calls=3", Work("GFLOP/s", 2 * 2 * 3 * 5 * 3)),
    ("inner_product_8i M=1 N=1000 K=2048 compatibility=overflow data=full", Work("GFLOP/s", 2 * 1000 * 2048)),
    ("inner_product_layer count=4 size=16 bias=false", Work("GFLOP/s", 2 * 4 * 16)),
    # 64x112x112 float32 in, 64x56x56 out (3x3/2, pad 1)
    ("pooling_max32f layout=nchw channels=64 height=112 width=112 kernel=3x3 stride=2x2 pad=1.1.1.1 ceil=false",
     Work("GB/s", 4 * 64 * (112 * 112 + 56 * 56), 4 * 64 * (112 * 112 + 56 * 56))),
    # ceil mode: (7 - 3) / 2 rounded up + 1 = 3 rows, (9 - 3) / 2 + 1 = 4 columns; bf16 is 2 bytes
    ("pooling_max16b layout=nhwc channels=5 height=7 width=9 kernel=3x3 stride=2x2 ceil=true",
     Work("GB/s", 2 * 5 * (7 * 9 + 3 * 4), 2 * 5 * (7 * 9 + 3 * 4))),
    ("pooling_max8u layout=nhwc channels=8 height=4 width=4 kernel=2x2 stride=2x2 ceil=false",
     Work("GB/s", 8 * (16 + 4), 8 * (16 + 4))),
    # two data arrays; each: 16*196*196 float32 gathered and written, as many int64 indices read
    ("gather_elements dtype=float32 index=int64 shape=16x196x49 axis=2 idx_count=196 const=true negative=false",
     Work("GB/s", 2 * 16 * 196 * 196 * (4 + 4 + 8))),
    ("unary op=exp size=1024", Work("Gelem/s", 1024)),
    ("unary op=abs size=1024", Work("Gelem/s", 1024, 2 * 4 * 1024)),  # memory-bound: 4 KiB read, 4 KiB written
    ("eltwise op=sum count=3 size=100", Work("Gelem/s", 100, 4 * 4 * 100)),  # three inputs and the output
    ("softmax outer=64 count=1000 inner=1 data=-", Work("Gelem/s", 64000)),
    ("softmax16b outer=2 count=5 inner=3 data=-", Work("Gelem/s", 30)),
    ("lrn layout=nhwc half=2 channels=64 height=56 width=56 k=onnx", Work("Gelem/s", 64 * 56 * 56)),
    ("shuffle layout=nchw type=0 channels=116x116 height=28 width=28",
     Work("Gelem/s", 232 * 28 * 28, 2 * 4 * 232 * 28 * 28)),
])
def test_the_work_of_a_call_follows_from_the_case(descriptor, expected):
    assert work(case_from_descriptor(descriptor)) == expected


def test_every_function_of_the_suite_has_a_work_rule():
    for name, function in REGISTRY.items():
        if not type(function).__module__.startswith("simdbind.conformance.families."):
            continue  # a test double another test registered
        case = next(iter(function.grid_cases()))
        assert work(case).amount > 0, name


#: Peers whose prepared call returns the engine's outputs as it computes them (layout not converted back).
ENGINE_LAYOUT = ("openvino", "ncnn")


@pytest.mark.parametrize("descriptor", __import__("simdbind.bench.overhead", fromlist=["x"]).DESCRIPTORS)
def test_a_prepared_call_computes_what_run_computes(descriptor):
    """The library's prepared call (contexts made once, outputs reused) and the peers' give run's outputs."""
    from simdbind.bench.harness import installed_peers
    from simdbind.conformance.api import Unsupported, prepared
    from simdbind.conformance.implementations import implementations

    case = case_from_descriptor(descriptor)
    function = REGISTRY[case.function]
    inputs = function.inputs(case, case.rng(1))
    for impl in implementations(["bundled"], "base") + installed_peers():
        if impl.unsupported(case.function, case):
            continue
        try:
            expected = impl.run(case.function, case, dict(inputs))
        except Unsupported:  # found out from the inputs (torch: int8 saturation)
            continue
        call = prepared(impl, case.function, case, dict(inputs))
        if impl.name in ENGINE_LAYOUT:  # the engine's own outputs: their values, in its layout
            outputs = call()
            expected_list = expected if isinstance(expected, tuple) else [expected]
            if any(np.asarray(b).dtype.kind != "f" for b in expected_list):
                continue  # compared as bit patterns by the case; the engine gives values
            flat = np.sort(np.concatenate([np.asarray(a, np.float64).ravel() for a in outputs]))
            want = np.sort(np.concatenate([np.asarray(b, np.float64).ravel() for b in expected_list]))
            np.testing.assert_allclose(flat, want, rtol=1e-5, atol=1e-5, err_msg=f"{impl.name}: {descriptor}")
            continue
        for _ in range(2):  # a second call into the same outputs gives the same values
            got = call()
            pairs = zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]
            for a, b in pairs:
                a = np.asarray(a.numpy() if hasattr(a, "numpy") else a)
                if case.function == "unary" and case.params["op"] == "not":
                    a = a.view(np.uint32)
                if case.function in ("gather_elements", "pooling_max16b"):
                    a = a.view(np.asarray(b).dtype)
                np.testing.assert_allclose(a.astype(np.float64), np.asarray(b, np.float64), rtol=1e-5,
                                           atol=1e-5, err_msg=f"{impl.name}: {descriptor}")


def _arrays(result):
    """The output arrays a prepared call returns (an array, or a tuple of them)."""
    return list(result) if isinstance(result, tuple) else [result]


@pytest.mark.parametrize("descriptor", __import__("simdbind.bench.overhead", fromlist=["x"]).DESCRIPTORS)
def test_every_library_of_a_case_writes_into_the_same_output_arrays(descriptor):
    """The harness hands each library one ReusedOutputs, rewound: so every prepared call, whichever Function builds
    it, takes its outputs from there (the same arrays, the same placement against the inputs)."""
    from simdbind.conformance.api import prepared
    from simdbind.conformance.implementations import implementations
    from simdbind.conformance.model import OUTPUTS, ReusedOutputs

    case = case_from_descriptor(descriptor)
    inputs = REGISTRY[case.function].inputs(case, case.rng(1))
    shared = ReusedOutputs()
    results = []
    for impl in implementations(["bundled"], "base,sse41"):
        shared.rewind()
        results.append(_arrays(prepared(impl, case.function, case, {**inputs, OUTPUTS: shared})()))
    first, second = results
    assert len(first) == len(second) > 0
    assert all(a is b or np.shares_memory(a, b) for a, b in zip(first, second)), descriptor


def test_the_plot_writes_one_png_per_family(tmp_path):
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (an optional dependency)")
    from simdbind.bench import plot
    from simdbind.bench.harness import Measurement, Report

    ms = []
    for family, function, unit, case in (("elementwise", "eltwise", "Gelem/s", "eltwise op=max count=2 size=64"),
                                         ("pooling", "pooling_max8u", "GB/s", "pooling_max8u layout=nhwc ..."),
                                         ("overhead", "unary", "Gelem/s", "unary op=abs size=16")):
        for impl, kind, median in (("bundled-avx2", "simdbind", 1e-6), ("bundled-avx2 raw cffi", "variant", 5e-7),
                                   ("torch", "peer", 2e-6), ("memcpy", "bound", 4e-7)):
            m = Measurement(case, family, function, unit, 1e3, impl, kind, 1, samples=[median])
            m.finish()
            ms.append(m)
    written = plot.plot(Report({"environment": {"cpu": "test"}}, ms), str(tmp_path / "bench.png"))
    assert written == [str(tmp_path / f"bench-{family}.png") for family in ("elementwise", "pooling", "overhead")]
    for path in written:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
