"""The routes around upstream defects: all in simdbind._routes, each taken exactly for the versions its catalogue
entry names, never for the bundled library; and no wrapper module decides by the library's kind itself."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import simdbind
from simdbind import _routes
from simdbind._versions import VersionRange

PACKAGE = Path(simdbind.__file__).parent
FAMILIES = PACKAGE / "conformance" / "families"
PROBES = ["5.0.0", "5.0.115", "7.0.159", "7.0.160", "7.0.161", "7.1.161", "7.1.162", "7.1.163", "7.2.0", "8.0.0"]


def entry(route: _routes.Route) -> dict:
    return next(e for e in json.loads((FAMILIES / route.family / "deviations.json").read_text()) if e["id"] == route.entry)


@pytest.mark.parametrize("route", _routes.ROUTES, ids=lambda r: r.entry)
def test_each_route_is_taken_exactly_for_its_entrys_versions(route):
    versions = VersionRange.parse(entry(route)["versions"])
    taken = [v for v in PROBES if route.taken(SimpleNamespace(kind="external", version=f"{v}.0 (upstream)"))]
    assert taken == [v for v in PROBES if versions.contains(v)]
    assert taken and len(taken) < len(PROBES)  # every entry names a bounded range: the probes see both sides
    assert not any(route.taken(SimpleNamespace(kind="bundled", version=v)) for v in PROBES)
    assert route.taken(SimpleNamespace(kind="external", version="unknown"))  # unreadable: the safe side


def _isas_named(when: str) -> set[str]:
    """The ISAs that `isa == '...'` and `isa in (...)` name in a catalogue condition."""
    named = set(re.findall(r"isa\s*==\s*'([a-z0-9]+)'", when))
    for group in re.findall(r"isa\s+in\s+\(([^)]*)\)", when):
        named |= set(re.findall(r"'([a-z0-9]+)'", group))
    return named


@pytest.mark.parametrize("route", [r for r in _routes.ROUTES if r.isas], ids=lambda r: r.entry)
def test_a_route_of_some_isas_names_the_isas_of_its_entry_and_is_taken_only_there(route):
    assert set(route.isas) == _isas_named(entry(route)["when"])
    version = "7.1.162.0 (upstream)"
    taken = {isa for isa in simdbind.library.ISAS
             if route.taken(SimpleNamespace(kind="external", version=version, isa=isa))}
    assert taken == set(route.isas)
    assert route.taken(SimpleNamespace(kind="external", version=version, isa="unknown"))  # the safe side
    assert not route.taken(SimpleNamespace(kind="bundled", version=version, isa=route.isas[0]))


def test_no_wrapper_module_compares_the_library_kind():
    pattern = re.compile(r"""kind\s*[!=]=\s*["']bundled["']|["']bundled["']\s*[!=]=\s*kind""")
    found = [f"{path.name}:{number}" for path in sorted(PACKAGE.glob("*.py"))
             if path.name not in ("_routes.py", "library.py")  # library.py defines kinds (ISA selection)
             for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []


CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

#: An upstream-like library of one version whose LRN and Max32f record the format and channels they were called with.
FAKE = r"""
#include <stddef.h>
#include <string.h>
const char* SimdVersion(void) { return VERSION; }
void SimdSynetSoftmax32f(const float* s, size_t o, size_t c, size_t i, float* d) {}
int last_format = -1; size_t last_channels = 0;
void SimdSynetLrnLayerCrossChannels(const float* src, size_t half, size_t channels, size_t spatial, const float* k,
                                    float* dst, int format) {
    last_format = format; last_channels = channels; memcpy(dst, src, channels * spatial * sizeof(float));
}
void SimdSynetPoolingMax32f(const float* src, size_t srcC, size_t srcH, size_t srcW, size_t kernelC,
    size_t kernelY, size_t kernelX, size_t strideC, size_t strideY, size_t strideX, size_t padC, size_t padY,
    size_t padX, float* dst, size_t dstC, size_t dstH, size_t dstW, int format) {
    last_format = format; last_channels = srcC; memset(dst, 0, dstC * dstH * dstW * sizeof(float));
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler to build the test doubles")
@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
def test_a_library_of_each_version_is_routed_as_its_entries_say(tmp_path, version):
    source = tmp_path / "fake.c"
    source.write_text(FAKE)
    path = tmp_path / f"libfake{version}.so"
    subprocess.run([CC, "-shared", "-fPIC", f'-DVERSION="{version}"', "-o", str(path), str(source)], check=True)
    library = simdbind.load(str(path))
    import ctypes

    record = ctypes.CDLL(str(path))
    last_format = ctypes.c_int.in_dll(record, "last_format")
    last_channels = ctypes.c_size_t.in_dll(record, "last_channels")

    simdbind.lrn(np.ones((3, 5, 4), np.float32), 2, [1, 1e-4, -0.75], "nhwc", library=library)  # 4 < 2*2 + 1
    lrn_routed = last_format.value == 0
    assert lrn_routed == _routes.LRN_NHWC_SMALL_CHANNELS.taken(library) == VersionRange.parse(
        entry(_routes.LRN_NHWC_SMALL_CHANNELS)["versions"]).contains(version)

    simdbind.pooling_max(np.ones((6, 7, 3), np.float32), 3, stride=1, pad=1, layout="nhwc", library=library)  # 3 channels
    assert (last_channels.value == 16) == _routes.MAX32F_NHWC_SMALL_CHANNELS.taken(library)
    assert (last_channels.value == 16) == VersionRange.parse(
        entry(_routes.MAX32F_NHWC_SMALL_CHANNELS)["versions"]).contains(version)


class _RecordingLibrary:
    """`library` recording the arguments of every call of the C functions named in `names`."""

    def __init__(self, library: simdbind.Library, *names: str) -> None:
        self._library, self._names, self.calls = library, names, []

    def __getattr__(self, name: str):
        return getattr(self._library, name)

    def function(self, name: str):
        inner = self._library.function(name)
        if name not in self._names:
            return inner

        def recorded(*args):
            self.calls.append((name, args))
            return inner(*args)
        return recorded


def as_upstream(version: str) -> simdbind.Library:
    """The bundled code presented as an upstream build of `version` (so every route for that version is taken)."""
    import dataclasses

    return dataclasses.replace(simdbind.load("bundled"), kind="external", version=version, _functions={},
                               _bindings=None)


@pytest.mark.parametrize("version, routed", [("7.0.160", True), ("7.1.162", False)])
def test_inner_product_n1_constant_transposed_b_with_bias_is_created_without_trans_b_on_7_0(version, routed):
    rng = np.random.default_rng(3)
    a, b, bias = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((5, 9), (1, 9), (1,)))
    library = _RecordingLibrary(as_upstream(version), "SimdSynetInnerProduct32fInit")
    with simdbind.InnerProduct32f(5, 1, 9, trans_b=True, bias=bias, weight=b, library=library) as ip:
        got = ip.forward(a)
    [(_, (M, N, K, trans_b, const_b, has_bias, activation))] = library.calls
    assert (M, N, K, const_b, has_bias) == (5, 1, 9, 1, 1) and trans_b == (0 if routed else 1)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.T.astype(np.float64) + bias, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["bundled", "upstream"])
def test_the_m1_identity_route_hands_b_to_set_params_only_on_upstream(kind):
    rng = np.random.default_rng(4)
    base = simdbind.load("bundled") if kind == "bundled" else as_upstream("7.1.162")
    library = _RecordingLibrary(base, "SimdSynetInnerProduct32fSetParams")
    ip = simdbind.InnerProduct32f(1, 6, 10, trans_b=True, const_b=False, library=library)
    for _ in range(3):
        a, b = rng.uniform(-1, 1, (1, 10)).astype(np.float32), rng.uniform(-1, 1, (6, 10)).astype(np.float32)
        np.testing.assert_allclose(ip.forward(a, b), a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-6,
                                   atol=1e-6)
    assert len(library.calls) == (1 if kind == "bundled" else 1 + 3 * 2)  # creation, then B and NULL per call
    ip.close()


class _InitRecorder(_RecordingLibrary):
    """Records the SimdConvolutionParameters fields each convolution Init is given (the struct dies after Init)."""

    FIELDS = ("srcC", "srcH", "srcW", "dstC", "strideY", "strideX", "padY", "padX", "padH", "padW")

    def function(self, name: str):
        inner = self._library.function(name)
        if name != "SimdSynetConvolution32fInit":
            return inner

        def recorded(batch, conv):
            self.calls.append({field: getattr(conv, field) for field in self.FIELDS})
            return inner(batch, conv)
        return recorded


def _convolve(version: str, layout: str, src_shape, dst_c: int, kernel, **geometry):
    """(fields of the Init call, result, reference) of one convolution on the bundled code presented as `version`."""
    from simdbind.conformance.families.convolution.reference import convolution

    rng = np.random.default_rng(5)
    src_c = src_shape[0] if layout == "nchw" else src_shape[2]
    group = geometry.get("group", 1)
    weight_shape = (dst_c, src_c // group, *kernel) if layout == "nchw" else (*kernel, src_c // group, dst_c)
    src, weight, bias = (rng.uniform(-1, 1, s).astype(np.float32) for s in ((1, *src_shape), weight_shape, (dst_c,)))
    slopes = rng.uniform(0, 2, dst_c).astype(np.float32)
    library = _InitRecorder(as_upstream(version))
    with simdbind.Convolution32f(src.shape, dst_c, kernel, layout=layout, weight=weight, bias=bias,
                                 activation="prelu", params=slopes, library=library, **geometry) as conv:
        got = conv.forward(src[0])  # a single image: the route keeps the caller's shapes
    expected = convolution(src, weight, bias, slopes, layout=layout, group=group, activation="prelu",
                           stride=geometry.get("stride", (1, 1)), dilation=geometry.get("dilation", (1, 1)),
                           pad=geometry.get("pad", (0, 0, 0, 0)))[0]
    [fields] = library.calls
    return fields, got, expected


def _taken_on(route: _routes.Route, version: str) -> bool:
    return VersionRange.parse(entry(route)["versions"]).contains(version)


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("layout, src_shape, kernel, pad, route", [
    ("nhwc", (1, 6, 1), (1, 6), (0, 0, 0, 0), _routes.CONV32F_ONE_CHANNEL_WIDE_KERNEL),  # the catalogue's example
    ("nchw", (1, 9, 12), (3, 7), (1, 2, 1, 3), _routes.CONV32F_ONE_CHANNEL_WIDE_KERNEL),
    ("nhwc", (3, 1, 1), (1, 5), (0, 4, 0, 3), _routes.CONV32F_ONE_CHANNEL_NON_SQUARE),  # the catalogue's example
    ("nchw", (1, 7, 9), (4, 2), (1, 1, 2, 0), _routes.CONV32F_ONE_CHANNEL_NON_SQUARE),
])
def test_one_channel_convolutions_get_a_zero_second_output_channel_on_the_entries_versions(
        version, layout, src_shape, kernel, pad, route):
    fields, got, expected = _convolve(version, layout, src_shape, 1, kernel, pad=pad)
    assert fields["dstC"] == (2 if _taken_on(route, version) else 1)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_the_one_channel_routes_leave_other_convolutions_alone():
    for layout, src_shape, dst_c, kernel, geometry in [
            ("nchw", (1, 8, 8), 1, (3, 3), {}),  # square and at most 5 wide: upstream gets it right
            ("nchw", (2, 8, 8), 1, (1, 6), {}),  # two input channels
            ("nhwc", (8, 8, 1), 2, (2, 6), {}),  # two output channels
            ("nchw", (1, 8, 12), 1, (1, 6), {"stride": (1, 2)})]:  # strided (and no x pad: no gather route)
        fields, got, expected = _convolve("7.1.162", layout, src_shape, dst_c, kernel, **geometry)
        assert fields["dstC"] == dst_c and fields["srcW"] == src_shape[2 if layout == "nchw" else 1]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
def test_strided_or_dilated_nchw_taps_in_the_x_pads_of_a_middle_vector_get_explicit_pads(version):
    # the catalogue's example: 34 columns, kernel 1x10 dilated 2 along x, 17 columns of left pad
    fields, got, expected = _convolve(version, "nchw", (1, 1, 34), 1, (1, 10), dilation=(1, 2), pad=(0, 17, 0, 0))
    routed = _taken_on(_routes.CONV32F_IM2COL_MIDDLE_GATHER, version)
    assert (fields["srcW"], fields["padX"], fields["padW"]) == ((51, 0, 0) if routed else (34, 17, 0))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride, dilation, pad, width, routed", [
    ((1, 2), (1, 1), (0, 17, 0, 0), 34, False),  # taps of the middle vectors stay inside the row
    ((1, 1), (1, 2), (0, 17, 0, 0), 34, True),
    ((1, 1), (1, 2), (0, 17, 0, 0), 16, False),  # one vector (17 outputs): no middle vector
    ((2, 1), (1, 1), (2, 0, 1, 9), 70, True),  # a right pad reached from a middle vector
    ((1, 1), (1, 1), (0, 17, 0, 0), 34, False),  # neither strided nor dilated: no im2col gather
])
def test_the_gather_route_is_taken_exactly_where_a_middle_vector_tap_leaves_the_row(stride, dilation, pad, width,
                                                                                  routed):
    kernel = (1, 10)
    route = _routes.upstream_conv32f_route("nchw", 1, 1, 9, width, kernel, stride, dilation, pad, 1)
    assert route.explicit_x_pad == routed and not route.explicit_y_pad
    assert not _routes.upstream_conv32f_route("nhwc", 1, 1, 9, width, kernel, stride, dilation, pad, 1).explicit_x_pad


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("src_shape, pad, stride", [
    ((1, 1, 1), (1, 0, 0, 0), (1, 1)),  # the catalogue's example
    ((4, 2, 3), (1, 1, 1, 1), (1, 1)),
    ((17, 5, 5), (0, 0, 0, 2), (2, 2)),
])
def test_a_padded_1x1_nchw_convolution_of_a_small_image_gets_its_pads_in_src_on_the_entries_versions(
        version, src_shape, pad, stride):
    fields, got, expected = _convolve(version, "nchw", src_shape, 3, (1, 1), pad=pad, stride=stride)
    top, left, bottom, right = pad
    routed = _taken_on(_routes.CONV32F_GEMMNT_NCHW_1X1_PAD, version)
    context = (fields["srcH"], fields["srcW"], fields["padY"], fields["padX"], fields["padH"], fields["padW"])
    _, h, w = src_shape
    assert context == ((h + top + bottom, w + left + right, 0, 0, 0, 0) if routed else (h, w, *pad))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout, src_c, src_hw, kernel, pad, group", [
    ("nchw", 4, (6, 5), (1, 1), (1, 1, 1, 1), 1),  # six rows: not GemmNT
    ("nchw", 4, (5, 6), (1, 1), (1, 1, 1, 1), 1),  # six columns
    ("nchw", 4, (5, 5), (1, 1), (0, 0, 0, 0), 1),  # no pad
    ("nchw", 4, (5, 5), (3, 3), (3, 3, 3, 3), 1),  # a wider kernel: GemmNT pads it right
    ("nchw", 4, (5, 5), (1, 1), (1, 1, 1, 1), 2),  # grouped: not GemmNT
    ("nhwc", 4, (5, 5), (1, 1), (1, 1, 1, 1), 1),
])
def test_the_gemmnt_pad_route_is_taken_only_for_padded_1x1_nchw_group_1_images_under_6x6(layout, src_c, src_hw,
                                                                                         kernel, pad, group):
    route = _routes.upstream_conv32f_route(layout, src_c, 4, *src_hw, kernel, (1, 1), (1, 1), pad, group)
    assert not route.explicit_y_pad and not route.explicit_x_pad
    assert _routes.upstream_conv32f_route("nchw", 4, 4, 5, 5, (1, 1), (1, 1), (1, 1), (1, 0, 0, 0), 1).explicit_y_pad


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("src_shape, dst_c, kernel, group", [
    ((1, 4, 52), 1, (4, 4), 1),  # the catalogue's example: 17 output columns
    ((3, 6, 60), 6, (5, 5), 3),  # depthwise with a multiplier of 2
])
def test_one_input_channel_per_group_at_stride_3_gets_a_zero_second_channel_on_the_entries_versions(
        version, src_shape, dst_c, kernel, group):
    fields, got, expected = _convolve(version, "nchw", src_shape, dst_c, kernel, stride=(3, 3), group=group)
    routed = _taken_on(_routes.CONV32F_STRIDE3_ONE_INPUT_CHANNEL, version)
    assert fields["srcC"] == (2 if routed else 1) * src_shape[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("src_w, kernel, stride, routed", [
    (52, (4, 4), (3, 3), True), (49, (4, 4), (3, 3), False),  # 17 output columns, then 16: one vector
    (53, (5, 5), (3, 3), True), (52, (5, 5), (3, 3), False),
    (80, (3, 3), (3, 3), False), (80, (4, 4), (2, 2), False), (80, (4, 5), (3, 3), False),
])
def test_the_stride_3_route_is_taken_exactly_past_one_vector_of_outputs(src_w, kernel, stride, routed):
    route = _routes.upstream_conv32f_route("nchw", 1, 1, 7, src_w, kernel, stride, (1, 1), (0, 0, 0, 0), 1)
    assert route.zero_input_channel == routed
    two_channels = _routes.upstream_conv32f_route("nchw", 2, 1, 7, src_w, kernel, stride, (1, 1), (0, 0, 0, 0), 1)
    assert not two_channels.zero_input_channel


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("src_shape, dst_c, group", [
    ((1, 2, 2), 6, 2),  # the catalogue's example (h, w, c): one input and three output channels per group
    ((4, 9, 12), 8, 4),
])
def test_a_grouped_nhwc_kernel_covering_the_whole_image_gets_stride_2_on_the_entries_versions(
        version, src_shape, dst_c, group):
    kernel = src_shape[:2]
    fields, got, expected = _convolve(version, "nhwc", src_shape, dst_c, kernel, group=group)
    routed = _taken_on(_routes.CONV32F_NHWC_GROUPED_WHOLE_IMAGE, version)
    assert (fields["strideY"], fields["strideX"]) == ((2, 2) if routed else (1, 1))
    assert got.shape == (1, 1, dst_c)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("src_c, dst_c, group, size, kernel, pad", [
    (4, 8, 1, (3, 3), (3, 3), (0, 0, 0, 0)),  # one group
    (4, 4, 4, (3, 3), (3, 3), (0, 0, 0, 0)),  # depthwise
    (4, 8, 2, (1, 1), (1, 1), (0, 0, 0, 0)),  # a 1x1 image
    (4, 8, 2, (3, 3), (3, 3), (1, 1, 1, 1)),  # padded
    (4, 8, 2, (3, 4), (3, 3), (0, 0, 0, 0)),  # the kernel narrower than the image
])
def test_the_whole_image_route_leaves_other_nhwc_convolutions_alone(src_c, dst_c, group, size, kernel, pad):
    route = _routes.upstream_conv32f_route("nhwc", src_c, dst_c, *size, kernel, (1, 1), (1, 1), pad, group)
    assert route.context_stride is None


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("M, K, activation, guarded_upstream", [
    (1, 1, "relu", True), (1, 7, "gelu", True), (1, 4, "relu", False), (1, 9, "relu", False),
    (1, 3, "identity", False),  # the SetParams route's path: it reads no float before B
    (2, 3, "identity", True), (2, 3, "relu", True),
])
def test_a_per_call_transposed_b_reaches_upstream_behind_zeros_where_the_entries_say(version, M, K, activation,
                                                                                    guarded_upstream):
    rng = np.random.default_rng(6)
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float32), rng.uniform(-1, 1, (3, K)).astype(np.float32)
    library = _RecordingLibrary(as_upstream(version), "SimdSynetInnerProduct32fForward")
    with simdbind.InnerProduct32f(M, 3, K, trans_b=True, const_b=False, activation=activation,
                                  library=library) as ip:
        got = ip.forward(a, b)
    [(_, (_, _, b_pointer, _, _))] = library.calls
    address = int(library.ffi.cast("uintptr_t", b_pointer))
    assert (address != b.ctypes.data) == (guarded_upstream and version in ("7.0.160", "7.1.162"))
    product = a.astype(np.float64) @ b.T.astype(np.float64)
    erf = np.vectorize(math.erf)
    expected = {"identity": product, "relu": np.maximum(product, 0),
                "gelu": 0.5 * product * (1 + erf(product / math.sqrt(2)))}[activation]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


UPSTREAM = os.environ.get("SIMD_LIBRARY")
ROUTED_EXAMPLES = [_routes.CONV32F_ONE_CHANNEL_WIDE_KERNEL, _routes.CONV32F_ONE_CHANNEL_NON_SQUARE,
                   _routes.CONV32F_IM2COL_MIDDLE_GATHER, _routes.IP32F_TRANSB_M1_ACTIVATION_READS_BEFORE_B,
                   _routes.CONV32F_GEMMNT_NCHW_1X1_PAD, _routes.CONV32F_STRIDE3_ONE_INPUT_CHANNEL,
                   _routes.CONV32F_NHWC_GROUPED_WHOLE_IMAGE, _routes.SOFTMAX32F_SINGLE_ELEMENT,
                   _routes.SOFTMAX16B_SINGLE_ELEMENT]


@pytest.mark.skipif(not UPSTREAM, reason="needs an upstream build in SIMD_LIBRARY")
@pytest.mark.parametrize("route", ROUTED_EXAMPLES, ids=lambda r: r.entry)
def test_the_catalogue_example_of_a_routed_entry_passes_through_the_wrapper_on_upstream(route):
    """The example's case calls the wrapper with the suite's NaN guard zones: on an affected build it crashes or
    deviates without the route, and matches the reference with it: a pass that names the route."""
    from simdbind.conformance import deviations as _deviations
    from simdbind.conformance import runner
    from simdbind.conformance.explore import Worker
    from simdbind.conformance.implementations import implementations
    from simdbind.conformance.model import REGISTRY

    (upstream,) = implementations([UPSTREAM])
    if not route.taken(upstream.library):
        pytest.skip(f"{upstream.library.version} is outside the versions of {route.entry}")
    found = entry(route)
    case = REGISTRY[found["function"]].parse(found["example"])
    if route.entry not in {e.id for e in _deviations.default().match(upstream, case)}:
        pytest.skip(f"{route.entry} does not name the ISA {upstream.library.version} dispatches to ({upstream.isa})")
    worker = Worker(upstream, runner.DEFAULT_SEED, timeout=60)  # a crash stays in the worker
    try:
        result = worker.run(REGISTRY[found["function"]], case)
    finally:
        worker.stop()
    assert result.status == "pass" and route.entry in result.deviation.split(", "), result.detail[:300]
    assert "routed around" in result.detail


def _preceded_by_zeros(ffi, pointer, floats: int) -> bool:
    before = ffi.cast("float *", pointer) - floats
    return all(before[i] == 0.0 for i in range(floats))


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("M, K, activation, guarded_upstream", [
    (2, 1, "identity", True), (1, 1, "relu", True), (1, 5, "gelu", True),
    (2, 4, "identity", False), (1, 3, "identity", False), (2, 9, "relu", False),
])
def test_a_and_a_constant_transposed_b_reach_upstream_behind_zeros_where_the_entries_say(version, M, K, activation,
                                                                                        guarded_upstream):
    rng = np.random.default_rng(8)
    a, b = rng.uniform(-1, 1, (M, K)).astype(np.float32), rng.uniform(-1, 1, (2, K)).astype(np.float32)
    library = _RecordingLibrary(as_upstream(version), "SimdSynetInnerProduct32fForward",
                                "SimdSynetInnerProduct32fSetParams")
    with simdbind.InnerProduct32f(M, 2, K, trans_b=True, weight=b, activation=activation, library=library) as ip:
        got = ip.forward(a)
    calls = dict(library.calls)
    (_, a_pointer, _, _, _), (_, weight_pointer, *_) = calls["SimdSynetInnerProduct32fForward"], \
        calls["SimdSynetInnerProduct32fSetParams"]
    ffi = library.ffi
    routed = guarded_upstream and version in ("7.0.160", "7.1.162")
    assert (int(ffi.cast("uintptr_t", a_pointer)) != a.ctypes.data) == routed
    if routed:
        assert _preceded_by_zeros(ffi, a_pointer, _routes.B_GUARD)
        assert _preceded_by_zeros(ffi, weight_pointer, _routes.B_GUARD)
    product = a.astype(np.float64) @ b.T.astype(np.float64)
    erf = np.vectorize(math.erf)
    expected = {"identity": product, "relu": np.maximum(product, 0),
                "gelu": 0.5 * product * (1 + erf(product / math.sqrt(2)))}[activation]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("isa", ["sse41", "avx2", "avx512bw"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape, axis, routed_shape", [
    ((4, 1), 1, (1, 1, 4)),  # the catalogue's example: four one-element slices
    ((2, 3, 1, 1), 2, (1, 1, 6)),
    ((3, 1), 1, None),  # three slices: upstream gets them right
    ((4, 1, 2), 1, None),  # inner > 1
    ((4, 2), 1, None),  # count > 1
])
def test_one_element_softmax_slices_reach_upstream_as_one_slice_on_the_entries_versions_and_isas(
        version, isa, dtype, shape, axis, routed_shape):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays need ml_dtypes")
    name = "SimdSynetSoftmax16b" if dtype == "bfloat16" else "SimdSynetSoftmax32f"
    route = _routes.SOFTMAX16B_SINGLE_ELEMENT if dtype == "bfloat16" else _routes.SOFTMAX32F_SINGLE_ELEMENT
    x = np.random.default_rng(9).uniform(-2, 2, shape).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32)
    library = _RecordingLibrary(as_upstream(version), name)
    library.isa = isa  # the ISA upstream dispatches to
    got = simdbind.softmax(x, axis=axis, library=library)
    [(_, (_, outer, count, inner, _))] = library.calls
    outer_all = int(np.prod(shape[:axis]))
    inner_all = int(np.prod(shape[axis + 1:]))
    natural = (outer_all, shape[axis], inner_all)
    routed = routed_shape and _taken_on(route, version) and isa in ("sse41", "avx2")
    assert (outer, count, inner) == (routed_shape if routed else natural)
    exponent = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=axis, keepdims=True))
    np.testing.assert_allclose(np.asarray(got, np.float64), exponent / exponent.sum(axis=axis, keepdims=True),
                               rtol=1e-2 if dtype == "bfloat16" else 1e-6)


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("isa", ["avx2", "avx512bw"])
@pytest.mark.parametrize("outer, calls", [
    (29, [(0, 24), (24, 5)]),  # the catalogue's example: 13 left over, 8 in the first call, 5 in the second
    (9, [(0, 8), (8, 1)]),
    (31, [(0, 24), (24, 7)]),
    (24, [(0, 24)]),  # 8 left over: upstream writes them
    (16, [(0, 16)]),
])
def test_two_element_bf16_softmax_slices_go_in_two_calls_on_the_entries_versions_at_avx512(version, isa, outer,
                                                                                          calls):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays need ml_dtypes")
    x = np.random.default_rng(5).uniform(-2, 2, (outer, 2)).astype(ml_dtypes.bfloat16)
    library = _RecordingLibrary(as_upstream(version), "SimdSynetSoftmax16b")
    library.isa = isa  # the ISA upstream dispatches to
    got = simdbind.softmax(x, axis=1, library=library)
    routed = _taken_on(_routes.SOFTMAX16B_PAIR_TAIL, version) and isa == "avx512bw"
    expected_calls = calls if routed else [(0, outer)]
    ffi, base = library.ffi, x.ctypes.data
    made = [((int(ffi.cast("uintptr_t", src)) - base) // 4, slices) for _, (src, slices, count, inner, _)
            in library.calls]
    assert made == expected_calls and all(args[2:4] == (2, 1) for _, args in library.calls)
    exponent = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(got, np.float64), exponent / exponent.sum(axis=1, keepdims=True), rtol=1e-2)


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("layout, src_shape, kernel", [
    ("nchw", (1, 5, 6), (4, 4)),  # the AVX2 crash explore found (a 4x4 kernel on 4x6 there)
    ("nhwc", (5, 20, 1), (5, 5)),
])
def test_one_channel_4x4_and_5x5_kernels_get_a_zero_second_output_channel_too(version, layout, src_shape, kernel):
    fields, got, expected = _convolve(version, layout, src_shape, 1, kernel)
    assert fields["dstC"] == (2 if _taken_on(_routes.CONV32F_ONE_CHANNEL_WIDE_KERNEL, version) else 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("version", ["7.0.160", "7.1.162", "7.1.163"])
@pytest.mark.parametrize("bounds", [(0.7, -1.5), (-1.5, 0.7)])
def test_inverted_restrict_range_bounds_reach_upstream_as_upper_twice_on_the_entrys_versions(version, bounds):
    rng = np.random.default_rng(10)
    a, b = rng.uniform(-2, 2, (3, 29)).astype(np.float32), rng.uniform(-1, 1, (37, 29)).astype(np.float32)
    library = _RecordingLibrary(as_upstream(version), "SimdSynetInnerProduct32fSetParams")
    with simdbind.InnerProduct32f(3, 37, 29, trans_b=True, weight=b, activation="restrict_range", params=list(bounds),
                                  library=library) as ip:
        got = ip.forward(a)
    [(_, (_, _, _, _, params))] = library.calls
    lower, upper = bounds
    routed = lower > upper and _taken_on(_routes.IP32F_AVX2_RESTRICT_RANGE_INVERTED, version)
    given = tuple(float(library.ffi.cast("float *", params)[i]) for i in range(2))
    assert given == pytest.approx((upper, upper) if routed else bounds)
    product = a.astype(np.float64) @ b.T.astype(np.float64)
    np.testing.assert_allclose(got, np.minimum(np.maximum(lower, product), upper), rtol=1e-5, atol=1e-5)


def test_a_pass_that_a_taken_route_explains_is_a_pass_and_a_direct_call_that_passes_is_an_xpass():
    """The catalogue describes the C function's defect; through the wrapper, which routes around it, the case
    passes, and that is the route at work (pass, naming the entry), not the defect gone (xpass). A case that calls
    the C function directly takes no route, so its pass is an xpass."""
    from types import SimpleNamespace

    from simdbind.conformance import runner
    from simdbind.conformance.model import REGISTRY

    found = entry(_routes.MAX32F_NCHW_SPECIAL_KERNELS)
    function = REGISTRY[found["function"]]
    library = SimpleNamespace(kind="external", version="7.1.162.HEAD-4615122", isa="avx512bw", path="libSimd.so")
    upstream = SimpleNamespace(name="upstream", kind="external", version=library.version, isa="avx512bw",
                               library=library, repro_args=lambda: "--library libSimd.so")
    assert _routes.MAX32F_NCHW_SPECIAL_KERNELS.taken(library)

    def classify(descriptor: str) -> runner.CaseResult:
        case = function.parse(descriptor)
        result = runner.new_result(upstream, function, case, "pass")
        return runner._classify(result, upstream, case, 1, None)

    routed = classify(found["example"].replace(" direct=true", ""))
    assert routed.status == "pass" and found["id"] in routed.deviation.split(", ")
    assert "routed around" in routed.detail and found["id"] in routed.detail
    direct = classify(found["example"] + ("" if "direct=true" in found["example"] else " direct=true"))
    assert direct.status == "xpass" and "did not show" in direct.detail
