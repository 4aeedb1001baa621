"""The loader against small fake Simd libraries compiled here: old releases, missing symbols, saturating int8.

Each double is a few lines of C built with the same compiler that built the bundled library.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import simdbind

CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build the test doubles")


def build(tmp_path: Path, name: str, source: str) -> str:
    c_file = tmp_path / f"{name}.c"
    c_file.write_text("#include <stddef.h>\n#include <stdint.h>\n" + source)
    library = tmp_path / f"lib{name}.so"
    subprocess.run([CC, "-shared", "-fPIC", "-o", str(library), str(c_file)], check=True)
    return str(library)


#: What a v7.1.162 library needs beside its Synet functions for the suite to run on it.
RUNTIME_V7_1 = """
const char* SimdVersion(void) { return "v7.1.162"; }
void SimdRelease(void* c) {}
size_t SimdGetThreadNumber(void) { return 1; }
void SimdSetThreadNumber(size_t n) {}
"""

SOFTMAX = "void {name}(const float* s, size_t o, size_t c, size_t i, float* d) {{}}\n"


def test_pre_7_0_release_is_refused_by_version(tmp_path):
    path = build(tmp_path, "old", 'const char* SimdVersion(void) { return "6.2.159"; }\n'
                 + SOFTMAX.format(name="SimdSynetSoftmaxLayerForward"))
    with pytest.raises(simdbind.UnsupportedLibraryError, match=r"6\.2\.159 predates v7\.0\.160"):
        simdbind.load(path)


def test_pre_7_0_symbols_are_refused_even_with_unknown_version(tmp_path):
    path = build(tmp_path, "oldunknown", 'const char* SimdVersion(void) { return "unknown"; }\n'
                 + SOFTMAX.format(name="SimdSynetSoftmaxLayerForward"))
    with pytest.raises(simdbind.UnsupportedLibraryError, match="signatures"):
        simdbind.load(path)


def test_minimal_library_loads_and_missing_functions_name_themselves(tmp_path):
    path = build(tmp_path, "minimal", 'const char* SimdVersion(void) { return "unknown"; }\n'
                 + SOFTMAX.format(name="SimdSynetSoftmax32f"))
    library = simdbind.load(path)
    assert (library.kind, library.mode, library.generation) == ("external", "abi", "7.0")
    assert library.capabilities["int8_precise"] is None
    assert library.describe()["cpu_model"] == "unknown"
    with pytest.raises(simdbind.FunctionNotAvailableError, match=f"SimdSynetEltwiseLayerForward .*{path}"):
        simdbind.eltwise([np.ones(2, np.float32)] * 2, "sum", library=library)
    with pytest.raises(simdbind.IsaError, match="cannot be chosen"):
        library.set_isa("base")


def test_saturating_int8_build_is_detected(tmp_path):
    # A default upstream CMake build: pairs (2m, 2m+1) saturate to int16 whatever the compatibility flag says.
    path = build(tmp_path, "saturating", '''
const char* SimdVersion(void) { return "v7.1.162"; }
void SimdSynetPoolingMax16b(void) {}
void SimdSynetSoftmax32f(void) {}
void SimdSynetInnerProduct8i(size_t M, size_t N, size_t K, const uint8_t* s, const int8_t* w, int32_t* d, int c) {
    for (size_t i = 0; i < M; ++i) for (size_t j = 0; j < N; ++j) {
        int32_t sum = 0;
        for (size_t k = 0; k < K; k += 2) {
            int32_t p = s[i*K+k] * w[j*K+k] + (k + 1 < K ? s[i*K+k+1] * w[j*K+k+1] : 0);
            sum += p > 32767 ? 32767 : p < -32768 ? -32768 : p;
        }
        d[i*N+j] = sum;
    }
}
''')
    library = simdbind.load(path)
    assert library.generation == "7.1"
    assert library.capabilities["int8_precise"] is False


def test_bundled_library_honours_precise_int8(bundled):
    if not bundled.has("SimdSynetInnerProduct8i"):
        pytest.skip("the bundled library does not implement SimdSynetInnerProduct8i yet")
    assert bundled.capabilities["int8_precise"] is True
