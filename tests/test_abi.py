"""The header's struct layout and enum values against upstream's (v7.1.162).

The expected values below are transcribed from upstream's src/Simd/SimdLib.h (the enumerations and
SimdConvolutionParameters: 160 bytes on LP64); when the ABI notes the bindings were written from lie beside the
project (../shared/spec, not part of this repository), the struct table is also read from them directly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simdbind import _bundled
from simdbind._abi import ffi as abi_ffi

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "SIMD_SYNET_ABI.md"

STRUCT_FIELDS = [  # (field, offset, size) of SimdConvolutionParameters, SimdLib.h
    ("srcC", 0, 8), ("srcH", 8, 8), ("srcW", 16, 8), ("srcT", 24, 4), ("srcF", 28, 4),
    ("dstC", 32, 8), ("dstH", 40, 8), ("dstW", 48, 8), ("dstT", 56, 4), ("dstF", 60, 4),
    ("kernelY", 64, 8), ("kernelX", 72, 8), ("dilationY", 80, 8), ("dilationX", 88, 8),
    ("strideY", 96, 8), ("strideX", 104, 8), ("padY", 112, 8), ("padX", 120, 8), ("padH", 128, 8),
    ("padW", 136, 8), ("group", 144, 8), ("activation", 152, 4),
]

ENUMS = {
    "SimdBool": {"SimdFalse": 0, "SimdTrue": 1},
    "SimdTensorFormatType": {"SimdTensorFormatUnknown": -1, "SimdTensorFormatNchw": 0, "SimdTensorFormatNhwc": 1},
    "SimdTensorDataType": {
        "SimdTensorDataUnknown": -1, "SimdTensorData32f": 0, "SimdTensorData32i": 1, "SimdTensorData8i": 2,
        "SimdTensorData8u": 3, "SimdTensorData64i": 4, "SimdTensorData64u": 5, "SimdTensorDataBool": 6,
        "SimdTensorData16b": 7, "SimdTensorData16f": 8},
    "SimdConvolutionActivationType": {f"SimdConvolutionActivation{n}": i for i, n in enumerate(
        "Identity Relu LeakyRelu RestrictRange Prelu Elu Hswish Mish HardSigmoid Swish Gelu".split())},
    "SimdSynetEltwiseOperationType": {f"SimdSynetEltwiseOperation{n}": i for i, n in enumerate(
        "Product Sum Max Min".split())},
    "SimdSynetUnaryOperation32fType": {f"SimdSynetUnaryOperation32f{n}": i for i, n in enumerate(
        "Abs Ceil Cos Erf Exp Floor Log Neg Not Rcp Round Rsqrt Sign Sin Sqrt Tanh Zero".split())},
    "SimdSynetCompatibilityType": {
        "SimdSynetCompatibilityDefault": 0, "SimdSynetCompatibilityFmaUse": 0, "SimdSynetCompatibilityFmaNoTail": 1,
        "SimdSynetCompatibilityFmaAvoid": 2, "SimdSynetCompatibilityFmaMask": 3,
        "SimdSynetCompatibility8iPrecise": 0, "SimdSynetCompatibility8iOverflow": 4,
        "SimdSynetCompatibility8iNarrowed": 8, "SimdSynetCompatibility8iMask": 12,
        "SimdSynetCompatibility16bfAvoid": 0, "SimdSynetCompatibility16bfHard": 16,
        "SimdSynetCompatibility16bfSoft": 32, "SimdSynetCompatibility16bfMask": 48,
        "SimdSynetCompatibility16fpAvoid": 0, "SimdSynetCompatibility16fpHard": 64,
        "SimdSynetCompatibility16fpSoft": 128, "SimdSynetCompatibility16fpMask": 192},
    "SimdCpuDescType": {"SimdCpuDescModel": 0},
    "SimdCpuInfoType": {f"SimdCpuInfo{n}": i for i, n in enumerate(
        "Sockets Cores Threads CacheL1 CacheL2 CacheL3 Ram Sse41 Avx2 Avx512bw Avx512vnni AmxBf16 Neon Sve SveSize "
        "Hvx CurrentFrequency".split())},
}


@pytest.mark.parametrize("ffi", [_bundled.ffi, abi_ffi], ids=["api-compiled", "abi-declared"])
def test_struct_layout(ffi):
    # In API mode cffi checked these declarations against the C compiler's layout when the module was built.
    assert ffi.sizeof("SimdConvolutionParameters") == 160
    assert ffi.alignof("SimdConvolutionParameters") == 8
    for name, offset, size in STRUCT_FIELDS:
        assert ffi.offsetof("SimdConvolutionParameters", name) == offset, name
        assert ffi.sizeof(ffi.typeof("SimdConvolutionParameters").fields[[f[0] for f in STRUCT_FIELDS].index(name)][1].type) == size, name


@pytest.mark.parametrize("ffi", [_bundled.ffi, abi_ffi], ids=["api-compiled", "abi-declared"])
@pytest.mark.parametrize("enum_type", sorted(ENUMS))
def test_enum_values(ffi, enum_type):
    assert ffi.sizeof(enum_type) == 4
    declared = ffi.typeof(enum_type).relements
    assert declared == ENUMS[enum_type]


def test_compiled_enum_values_match_the_c_compiler():
    # API-mode integer constants are read from the compiled C code, not from our parse of the header.
    for values in ENUMS.values():
        for name, value in values.items():
            assert getattr(_bundled.lib, name) == value, name


@pytest.mark.skipif(not SPEC.exists(), reason=f"spec not found at {SPEC}")
def test_struct_table_of_the_spec_itself():
    text = SPEC.read_text()
    section = text[text.index("### 2.8"):text.index("### 2.9")]
    rows = re.findall(r"^\| (\d+) \| (\w+)[^|]*\| [^|]+\| (\d+) \| (\d+)", section, re.M)
    assert [(name, int(offset), int(size)) for _, name, offset, size in rows] == STRUCT_FIELDS
