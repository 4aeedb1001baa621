"""Published benchmark figures: timed with a clock that sees every thread of a call, drawn without clipping, and
Winograd convolution rates labelled effective.

The gil family's calls run on two Python threads; timed by the calling thread's CPU time they showed 16-17.6x from
two threads on two CPUs (the calling thread only waits while the two work). The harness refuses that clock for any
call whose work runs on more than one thread (the gil family, or library threads above one).
"""

from __future__ import annotations

import time

import pytest

from simdbind import cli
from simdbind.bench import harness
from simdbind.bench.cases import Listed, work
from simdbind.conformance.work import EFFECTIVE
from simdbind.conformance.model import case_from_descriptor

GIL = Listed("gil", case_from_descriptor("eltwise op=max count=2 size=4096"))
ONE_THREAD = Listed("elementwise", case_from_descriptor("eltwise op=max count=2 size=4096"))


@pytest.mark.parametrize("listed,threads", [([GIL], [1]), ([ONE_THREAD], [1, 2]), ([ONE_THREAD, GIL], [1])],
                         ids=["gil", "library threads", "mixed"])
def test_the_thread_cpu_timer_is_refused_for_multithreaded_calls(listed, threads):
    with pytest.raises(harness.TimerError, match="timer: the calling thread's CPU time cannot measure"):
        harness.check_timer(listed, threads, time.thread_time)
    harness.check_timer(listed, threads, time.perf_counter)  # the wall clock sees every thread


def test_the_thread_cpu_timer_stays_available_for_single_threaded_calls():
    harness.check_timer([ONE_THREAD], [1], time.thread_time)


def test_run_refuses_before_measuring_anything(bundled):
    from simdbind.conformance.implementations import implementations

    seen = []
    with pytest.raises(harness.TimerError, match="gil calls at 1 library thread: their work runs on 2 threads"):
        harness.run([ONE_THREAD, GIL], implementations(["bundled"], "base"), repeats=1, min_time=0.0,
                    timer=time.thread_time, progress=seen.append)
    assert seen == []  # not the single-threaded case first, then the error


def test_bench_command_says_so_in_one_line_and_exits_2(capsys):
    assert cli.main(["bench", "--functions", "gil", "--timer", "thread", "--no-peers"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--timer: the calling thread's CPU time cannot measure gil calls" in err


# -- figures ---------------------------------------------------------------------------------------------------
def _measurement(family: str, case: str, unit: str, implementation: str, kind: str, median: float
                 ) -> harness.Measurement:
    m = harness.Measurement(case, family, case.split()[0], unit, 1e6, implementation, kind, 1, samples=[median])
    m.finish()
    return m


def _figure(measurements: list[harness.Measurement], family: str):  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (an optional dependency)")
    import matplotlib

    matplotlib.use("Agg")
    from simdbind.bench import plot

    return plot.draw_family(measurements, family, "simdbind bench, test: AMD EPYC 9R14 96-Core Processor, date")


# The published gil figure's implementations (long names: four columns did not fit 7.5 inches), and a family with
# a peer per colour.
LEGENDS = {
    "gil": ["bundled-avx512vnni", "external-avx512bw", "bundled-avx512vnni 1 Python thread",
            "external-avx512bw 1 Python thread"],
    "many": ["bundled-avx512vnni", "external-avx512bw", "ncnn", "onnxruntime", "openvino", "torch", "memcpy",
             "bundled-avx512vnni raw cffi"],
}


@pytest.mark.parametrize("names", LEGENDS.values(), ids=LEGENDS)
def test_the_legend_and_everything_else_lie_inside_the_figure(names):
    plt = pytest.importorskip("matplotlib.pyplot", reason="the plot needs matplotlib (an optional dependency)")

    kinds = {"memcpy": "bound"}
    ms = [_measurement("elementwise", f"eltwise op=max count=2 size={n}", "Gelem/s", name,
                      kinds.get(name, "variant" if "thread" in name or "raw" in name else "simdbind"), 1e-6 * (i + 1))
          for n in (4096, 65536) for i, name in enumerate(names)]
    fig = _figure(ms, "elementwise")
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (legend,) = fig.legends
        box, page = legend.get_window_extent(renderer), fig.bbox
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, (box, page)
        drawn = fig.get_tightbbox(renderer)  # inches: every artist, the title and tick labels included
        assert drawn.x0 >= -0.01 and drawn.y0 >= -0.01
        assert drawn.x1 <= fig.get_figwidth() + 0.01 and drawn.y1 <= fig.get_figheight() + 0.01
        texts = [t.get_text() for t in legend.get_texts()]
        assert texts == names
    finally:
        plt.close(fig)


def test_winograd_rows_are_effective_gflops_on_the_common_axis():
    plt = pytest.importorskip("matplotlib.pyplot", reason="the plot needs matplotlib (an optional dependency)")

    winograd = "convolution32f layout=nchw src_c=64 src_h=56 src_w=56 dst_c=64 kernel=3x3 pad=1.1.1.1 activation=relu"
    direct = "convolution32f layout=nchw src_c=256 src_h=56 src_w=56 dst_c=64 kernel=1x1 activation=relu"
    assert work(case_from_descriptor(winograd)).unit == EFFECTIVE
    assert work(case_from_descriptor(direct)).unit == "GFLOP/s"
    ms = [_measurement("convolution", case, work(case_from_descriptor(case)).unit, "bundled-avx2", "simdbind", 1e-3)
          for case in (winograd, direct)]
    fig = _figure(ms, "convolution")
    try:
        (ax,) = fig.axes
        assert ax.get_xlabel().startswith("GFLOP/s (higher is better); effective")  # not µs per call
        labels = [t.get_text().replace("\n", " ") for t in ax.get_yticklabels()]
        assert [f"[{EFFECTIVE}]" in label for label in labels] == [True, False]
    finally:
        plt.close(fig)


def test_the_markdown_tables_carry_the_effective_unit():
    winograd = "convolution32f layout=nhwc src_c=64 src_h=56 src_w=56 dst_c=64 kernel=3x3 pad=1.1.1.1 activation=relu"
    m = _measurement("convolution", winograd, work(case_from_descriptor(winograd)).unit, "bundled-avx2", "simdbind",
                     1e-3)
    text = harness.to_markdown(harness.Report({"environment": {}}, [m]))
    assert f"| {winograd} | {EFFECTIVE} |" in text and f"{EFFECTIVE} |" in text.split("<details>")[1]
