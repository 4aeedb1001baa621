"""bf16 max pooling on the special values where a fast maximum can part from the float fold of the reference.

A kernel may fold bf16 bit patterns as integers and hand the windows it cannot get exactly right back to the float
fold: windows holding a NaN (of either sign, from the smallest payload to the largest) and windows whose maximum is a
zero of either sign among negatives. Each input here is built from one family of such values, so that every window
lands on one side or the other of those checks, with the special values at every position of the window (the fold
keeps a NaN only as the window's last element, and the later of two equal zeros). Channel counts cover one, two and
four 32-lane chunks and an overlapping last one. Expected values: the conformance suite's NumPy reference.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import simdbind
from simdbind.conformance.families.pooling import reference

# bf16 bit patterns
POS_NAN = (0x7F81, 0x7FC0, 0x7FFF)  # smallest, quiet, largest payload
NEG_NAN = (0xFF81, 0xFFC1, 0xFFFF)
ZEROS = (0x0000, 0x8000)
NEGATIVES = (0x8001, 0xBF80, 0xFF7F, 0xFF80)  # -subnormal, -1, bf16 -FLT_MAX, -inf
POSITIVES = (0x0001, 0x3F80, 0x7F7F, 0x7F80)  # +subnormal, 1, bf16 FLT_MAX, +inf


def _family(rng, shape, family):
    """Bits of one family: `common` values, and `rare` ones so sparse (one in 400) that many blocks of chunks hold
    exactly one: a kernel that checks whole blocks at once would hide a missed value behind any other one."""
    common, rare = {
        "zeros among negatives": (ZEROS + NEGATIVES, ()),
        "zeros only": (ZEROS, ()),
        "positive NaNs among positives": (POSITIVES + ZEROS, POS_NAN),
        "negative NaNs among positives": (POSITIVES + ZEROS + NEGATIVES, NEG_NAN),
        "NaNs among negatives": (NEGATIVES + (0x8000,), POS_NAN + NEG_NAN),
        "infinities": ((0xFF80, 0xFF7F, 0x7F80), ()),
    }[family]
    bits = rng.choice(np.array(common, np.uint16), shape)
    if rare:
        flat = bits.reshape(-1)
        at = rng.choice(flat.size, max(1, flat.size // 400), replace=False)
        flat[at] = rng.choice(np.array(rare, np.uint16), at.size)
    return bits


FAMILIES = ["zeros among negatives", "zeros only", "positive NaNs among positives", "negative NaNs among positives",
            "NaNs among negatives", "infinities"]
# (height, width, kernel, stride, pad): the unrolled 3x3 and 2x2 windows, and a generic one with clipped borders
GEOMETRIES = [(9, 11, (3, 3), (2, 2), 1), (8, 10, (2, 2), (2, 2), 0), (6, 7, (2, 3), (1, 2), ((1, 0), (0, 1)))]
CHANNELS = (32, 48, 64, 96, 128, 160, 300)


@pytest.mark.parametrize("family", FAMILIES)
def test_bf16_max_keeps_the_float_fold_on_special_values_at_every_isa(bundled, family):
    rng = np.random.default_rng(FAMILIES.index(family))
    for (h, w, kernel, stride, pad), c, _ in itertools.product(GEOMETRIES, CHANNELS, range(4)):
        x = _family(rng, (h, w, c), family)
        expected = reference.pooling_max(x, kernel, stride, simdbind._checks.pads(pad), "nhwc", False)
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                got = simdbind.pooling_max(x, kernel, stride=stride, pad=pad, layout="nhwc", library=bundled)
            assert got.tobytes() == expected.tobytes(), (isa, kernel, c)
