"""The GatherElements kernel itself (bundled library, every ISA), through the C functions directly so that what the
wrapper refuses still reaches C: each in-range index (negative ones count from the end) copies the element's bits,
and every index outside [-n, n) writes 0 (int64 indices that only wrap into range when narrowed to 32 bits
included). The vector paths take rows of at least 16 outputs (shorter ones, the scalar loop): for 32-bit data at
AVX-512 the register permute (index along the last axis, fewer than 64 source elements); at AVX2 and above the offset
copy, blocks of 16 indices all inside [0, n) copied unchecked and every other block, and the partial last one,
through the checked loop. A constant index (indexConst, SetIndex) takes the same paths from the positions SetIndex
made of it, 1, 2 or 4 bytes each by n, with and without out-of-range entries."""

from __future__ import annotations

import numpy as np
import pytest

# n around the one-, two- and four-register tables and past them (64: the plain loop); counts around the 16-lane
# block and its tail, where rows also pass from the scalar loop to the vector paths.
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


# SimdTensorDataType of each data dtype (uint16 carries bf16 bits: the kernel copies 16-bit words).
DATA_TYPES = {np.dtype(np.float32): 0, np.dtype(np.uint8): 3, np.dtype(np.uint16): 7}


def position_bytes(n: int) -> int:
    """The size of one of SetIndex's positions: the fewest bytes that hold n (the mark of an index out of range)."""
    return 1 if n < 2**8 - 1 else 2 if n < 2**16 - 1 else 4


def gather_forward(library, src: np.ndarray, idx: np.ndarray, const: bool = False) -> np.ndarray:
    """SimdSynetGatherElementsForward directly (the wrapper refuses out-of-range indices), along axis 1 of a 2-D
    (outer, n) or 3-D (outer, n, inner) src of float32, uint8 or uint16 (bf16) elements; dst starts as a value no
    source element has (7.5, or all bits set). const: the context is made for a constant index, given to SetIndex
    (whose positions InternalBufferSize then counts) before Forward."""
    ffi = library.ffi
    index_type = {np.dtype(np.int32): 1, np.dtype(np.int64): 4}[idx.dtype]
    outer = ffi.new("size_t[]", [src.shape[0]])
    inner = src.shape[2] if src.ndim == 3 else 1
    context = library.function("SimdSynetGatherElementsInit")(DATA_TYPES[src.dtype], index_type, int(const), 1,
                                                               outer, 1, src.shape[1], inner, idx.shape[1])
    assert context != ffi.NULL
    try:
        if const:
            library.function("SimdSynetGatherElementsSetIndex")(context, ffi.from_buffer("uint8_t[]", idx))
            assert library.function("SimdSynetGatherElementsInternalBufferSize")(context) == (
                idx.size * position_bytes(src.shape[1]))
        fill = np.float32(7.5) if src.dtype == np.float32 else np.iinfo(src.dtype).max
        dst = np.full(idx.shape, fill, src.dtype)
        library.function("SimdSynetGatherElementsForward")(
            context, ffi.from_buffer("uint8_t[]", src), ffi.from_buffer("uint8_t[]", idx),
            ffi.from_buffer("uint8_t[]", dst, require_writable=True))
        return dst
    finally:
        library.function("SimdRelease")(context)


@pytest.mark.parametrize("const", [False, True], ids=["per-call", "constant"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_rows_match_the_contract_at_every_isa(bundled, index_dtype, const):
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
                    got = gather_forward(bundled, src, idx, const)
                np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32),
                                              err_msg=f"isa={isa} n={n} count={count} {np.dtype(index_dtype)}")


def _expected_3d(src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """dst[o, c, i] = src[o, idx[o, c, i] (+n if negative), i], 0 where the index lies outside [-n, n)."""
    n = src.shape[1]
    wide = idx.astype(np.int64)
    wide = np.where(wide < 0, wide + n, wide)
    inside = (wide >= 0) & (wide < n)
    return np.where(inside, np.take_along_axis(src, np.where(inside, wide, 0), axis=1), src.dtype.type(0))


def _bits(array: np.ndarray) -> np.ndarray:
    """Floats as their bit patterns (NaN payloads compare), integers as they are."""
    return array.view(np.uint32) if array.dtype == np.float32 else array


# Row widths around the 16-index block (inner == 1: the row is `count` long; inner > 1: `inner` long).
INNERS = (1, 2, 15, 16, 17, 40)
BLOCK_COUNTS = (1, 15, 16, 17, 50)


@pytest.mark.parametrize("const", [False, True], ids=["per-call", "constant"])
@pytest.mark.parametrize("data_dtype", [np.float32, np.uint8, np.uint16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("inner", INNERS)
def test_offset_copy_blocks_match_the_contract_at_every_isa(bundled, data_dtype, index_dtype, inner, const):
    """Mostly non-negative in-range indices, so most blocks take the unchecked offset copy; a few single entries
    (a negative in range, one past the end, one before -n, for int64 one that is in range only modulo 2^32) send
    their block through the checked loop. Sizes put them in full blocks, in the partial last one and at block
    edges; outer 0 stays clean, so every one of its full blocks is copied unchecked."""
    rng = np.random.default_rng(1019 + inner)
    specials = [-1, "n", "-n-1", 2**31 - 1, -(2**31)]
    if index_dtype is np.int64:
        specials += [2**32, 2**32 + 1, -(2**32) + 1, 2**63 - 1, -(2**63)]
    for n in (1, 7, 64, 300):
        bits = rng.integers(1, 2**31, (OUTER, n, inner)).astype(np.uint32)
        if data_dtype is np.float32:
            bits[0, 0, 0] = 0x7FC01234  # a NaN payload: the copy is of bits, not of values
            src = bits.view(np.float32)
        else:  # never the fill value (all bits set) nor 0
            src = (bits % (np.iinfo(data_dtype).max - 1) + 1).astype(data_dtype)
        for count in BLOCK_COUNTS:
            idx = rng.integers(0, n, (OUTER, count, inner)).astype(index_dtype)
            flat = idx.reshape(-1)
            where = rng.choice(np.arange(flat.size // OUTER, flat.size), min(len(specials), flat.size // 2),
                               replace=False)
            for position, special in zip(where, specials):
                flat[position] = {"n": n, "-n-1": -n - 1}.get(special, special)
            expected = _expected_3d(src, idx)
            for isa in bundled.isas_supported:
                with bundled.use_isa(isa):
                    got = gather_forward(bundled, src if inner > 1 else src[:, :, 0].copy(),
                                         idx if inner > 1 else idx[:, :, 0].copy(), const)
                np.testing.assert_array_equal(
                    _bits(got.reshape(expected.shape)), _bits(expected), err_msg=f"isa={isa} n={n} count={count} inner={inner} {np.dtype(data_dtype)} "
                            f"{np.dtype(index_dtype)}")


@pytest.mark.parametrize("n", [254, 255, 65534, 65535, 70000])
@pytest.mark.parametrize("inner", [1, 3])
@pytest.mark.parametrize("data_dtype", [np.float32, np.uint8, np.uint16])
def test_constant_index_positions_of_every_width(bundled, n, inner, data_dtype):
    """n on both sides of the limits of one- and two-byte positions (n itself marks an index out of range): indices
    from -n to n - 1, the ends among them, all inside (the copy without a range check), then with one kind of
    out-of-range index at a time in the first outer position, where reading position n would read the second's first
    element."""
    rng = np.random.default_rng(n + inner)
    src = rng.integers(1, 2**31, (2, n, inner)).astype(np.uint32)
    src = src.view(np.float32) if data_dtype is np.float32 else (src % 250 + 1).astype(data_dtype)
    for index_dtype in (np.int32, np.int64):
        idx = rng.integers(-n, n, (2, 40, inner)).astype(index_dtype)
        idx[0, :4, 0] = [0, n - 1, -n, -1]
        marked = []
        for mark in (n, -n - 1, np.iinfo(index_dtype).max):  # one kind of mark at a time
            marked.append(idx.copy())
            marked[-1][0, :3, 0] = mark
        for index in [idx] + marked:
            expected = _expected_3d(src, index)
            for isa in bundled.isas_supported:
                with bundled.use_isa(isa):
                    got = gather_forward(bundled, src if inner > 1 else src[:, :, 0].copy(),
                                         index if inner > 1 else index[:, :, 0].copy(), const=True)
                np.testing.assert_array_equal(_bits(got.reshape(expected.shape)), _bits(expected),
                                              err_msg=f"isa={isa} n={n} inner={inner} {np.dtype(index_dtype)}")
