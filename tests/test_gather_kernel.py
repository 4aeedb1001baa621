"""The GatherElements kernel itself (bundled library, every ISA): the AVX-512 row permute (32-bit data, index along
the last axis, fewer than 64 source elements) against the plain loop's contract, through the C functions directly so
that what the wrapper refuses still reaches C: each in-range index (negative ones count from the end) copies the
element's bits, and every index outside [-n, n) writes 0 (int64 indices that only wrap into range when narrowed to
32 bits included)."""

from __future__ import annotations

import numpy as np
import pytest

# n around the one-, two- and four-register tables and past them (64: the plain loop); counts around the 16-lane
# block and its tail.
SOURCE_COUNTS = (1, 15, 16, 17, 33, 49, 63, 64, 65)
INDEX_COUNTS = (1, 15, 16, 17, 196)
OUTER = 3


def _expected(src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    n = src.shape[1]
    out = np.zeros(idx.shape, src.dtype)
    for o in range(idx.shape[0]):
        for c in range(idx.shape[1]):
            v = int(idx[o, c])
            v += n if v < 0 else 0
            if 0 <= v < n:
                out[o, c] = src[o, v]
    return out


def gather_forward(library, src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """SimdSynetGatherElementsForward directly (the wrapper refuses out-of-range indices), along axis 1 of a 2-D
    (outer, n) or 3-D (outer, n, inner) src of 4-byte elements; dst starts as 7.5 everywhere."""
    ffi = library.ffi
    index_type = {np.dtype(np.int32): 1, np.dtype(np.int64): 4}[idx.dtype]
    outer = ffi.new("size_t[]", [src.shape[0]])
    inner = src.shape[2] if src.ndim == 3 else 1
    context = library.function("SimdSynetGatherElementsInit")(0, index_type, 0, 1, outer, 1, src.shape[1], inner,
                                                               idx.shape[1])
    assert context != ffi.NULL
    try:
        dst = np.full(idx.shape, np.float32(7.5))
        library.function("SimdSynetGatherElementsForward")(
            context, ffi.from_buffer("uint8_t[]", src), ffi.from_buffer("uint8_t[]", idx),
            ffi.from_buffer("uint8_t[]", dst, require_writable=True))
        return dst
    finally:
        library.function("SimdRelease")(context)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_rows_match_the_contract_at_every_isa(bundled, index_dtype):
    rng = np.random.default_rng(19)
    for n in SOURCE_COUNTS:
        # Distinct bit patterns, a NaN payload among them: the copy is of bits, not of values.
        src = rng.integers(1, 2**31, (OUTER, n)).astype(np.uint32)
        src[0, 0] = 0x7FC01234
        src = src.view(np.float32)
        outside = [n, -n - 1, 2**31 - 1, -(2**31)]
        if index_dtype is np.int64:
            outside += [2**32 + 1, -(2**32) + 1, 2**63 - 1, -(2**63)]
        for count in INDEX_COUNTS:
            idx = rng.integers(-n, n, (OUTER, count)).astype(index_dtype)
            flat = idx.reshape(-1)
            flat[rng.integers(0, flat.size, min(len(outside), flat.size))] = outside[:min(len(outside), flat.size)]
            expected = _expected(src, idx)
            for isa in bundled.isas_supported:
                with bundled.use_isa(isa):
                    got = gather_forward(bundled, src, idx)
                np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32),
                                              err_msg=f"isa={isa} n={n} count={count} {np.dtype(index_dtype)}")
