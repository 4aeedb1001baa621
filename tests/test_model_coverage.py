"""The ci profile reaches every convolution algorithm the bundled library has, each past one register block, and
every inner-product GEMM mode (transposed or not, constant or per-call B) with more rows than one block."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import numpy as np
import pytest

import simdbind
import simdbind.conformance.registry  # noqa: F401  (registers every function)
from simdbind.conformance.model import REGISTRY

ALGORITHMS_SOURCE = Path(__file__).resolve().parent.parent / "csrc" / "convolution" / "api.c"
#: One register block of the GEMM micro-kernel at its widest (csrc/gemm: MR = 12 rows at AVX-512, NR = 2 vectors
#: of 16 columns): a case past it in both directions runs the kernel's full blocks and its edges.
BLOCK_ROWS, BLOCK_COLUMNS = 12, 32


def algorithm_names() -> set[str]:
    """The names the bundled library's Info reports, read from its table of algorithm names."""
    if not ALGORITHMS_SOURCE.is_file():
        pytest.skip("the C sources are not here (an installed wheel)")
    table = ALGORITHMS_SOURCE.read_text()
    return set(re.findall(r'\[CONV_ALGO_\w+\]\s*=\s*"(\w+)"', table))


def reached(isa: str) -> dict[str, list[tuple[int, int]]]:
    """Per algorithm, (output channels, output pixels) of the ci cases that the bundled library runs with it."""
    library = simdbind.load("bundled")
    result = collections.defaultdict(list)
    with library.use_isa(isa):
        for case in REGISTRY["convolution32f"].cases():
            if "ci" not in case.profiles:
                continue
            p = case.params
            nchw = case.layout == "nchw"
            src = (p["batch"], p["src_c"], p["src_h"], p["src_w"]) if nchw else \
                (p["batch"], p["src_h"], p["src_w"], p["src_c"])
            per_group = p["src_c"] // p["groups"]
            weight = np.zeros((p["dst_c"], per_group, *p["kernel"]) if nchw else (*p["kernel"], per_group, p["dst_c"]),
                              np.float32)
            with simdbind.Convolution32f(src, p["dst_c"], p["kernel"], stride=p["stride"], dilation=p["dilation"],
                                         pad=p["pad"], group=p["groups"], layout=case.layout, weight=weight,
                                         library=library) as conv:
                name = conv.info.split("::")[-1].split()[-1]
                out_h, out_w = conv.out_shape[2:] if nchw else conv.out_shape[1:3]
            result[name].append((p["dst_c"], out_h * out_w))
    return result


@pytest.mark.parametrize("isa", simdbind.load("bundled").isas_supported)
def test_ci_reaches_every_convolution_algorithm_past_one_block(isa):
    names = algorithm_names()
    assert len(names) >= 7
    by_algorithm = reached(isa)
    assert set(by_algorithm) == names, f"{isa}: the ci profile never reaches {sorted(names - set(by_algorithm))}"
    for name, shapes in by_algorithm.items():
        assert any(c > BLOCK_ROWS and pixels > BLOCK_COLUMNS for c, pixels in shapes), \
            f"{isa}: {name} only on shapes within one register block: {shapes[:5]}"


def test_ci_reaches_every_inner_product_gemm_mode_with_more_rows_than_one_block():
    """Constant B is packed once (prepacked mode), per-call B is packed per call or, transposed, read by dot
    products for a few rows: every combination with M past one block of rows, under several N and K."""
    modes = collections.defaultdict(set)
    for case in REGISTRY["inner_product_32f"].cases():
        p = case.params
        if "ci" in case.profiles and p["M"] > 2 * BLOCK_ROWS and p["N"] > BLOCK_COLUMNS:
            modes[(p["trans_b"], p["const_b"])].add(p["K"])
    assert sorted(modes) == [(False, False), (False, True), (True, False), (True, True)]
    assert all(len(ks) >= 2 for ks in modes.values()), dict(modes)
