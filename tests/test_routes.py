"""The routes around upstream defects: all in simdbind._routes, each taken exactly for the versions its catalogue
entry names, never for the bundled library; and no wrapper module decides by the library's kind itself."""

from __future__ import annotations

import json
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
CATALOGUE = PACKAGE / "conformance" / "deviations"
PROBES = ["5.0.0", "5.0.115", "7.0.159", "7.0.160", "7.0.161", "7.1.161", "7.1.162", "7.1.163", "7.2.0", "8.0.0"]


def entry(route: _routes.Route) -> dict:
    return next(e for e in json.loads((CATALOGUE / f"{route.family}.json").read_text()) if e["id"] == route.entry)


@pytest.mark.parametrize("route", _routes.ROUTES, ids=lambda r: r.entry)
def test_each_route_is_taken_exactly_for_its_entrys_versions(route):
    versions = VersionRange.parse(entry(route)["versions"])
    taken = [v for v in PROBES if route.taken(SimpleNamespace(kind="external", version=f"{v}.0 (upstream)"))]
    assert taken == [v for v in PROBES if versions.contains(v)]
    assert taken and len(taken) < len(PROBES)  # every entry names a bounded range: the probes see both sides
    assert not any(route.taken(SimpleNamespace(kind="bundled", version=v)) for v in PROBES)
    assert route.taken(SimpleNamespace(kind="external", version="unknown"))  # unreadable: the safe side


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
