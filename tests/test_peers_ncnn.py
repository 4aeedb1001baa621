"""The ncnn peer (simdbind.conformance.engines.ncnn) agrees with the references on cases of every family it covers,
and skips what it cannot express with the reason. Skipped as a whole when ncnn is not installed."""

from __future__ import annotations

import pytest

pytest.importorskip("ncnn", reason="ncnn is not installed (pip install ncnn)")

from simdbind.conformance.implementations import resolve  # noqa: E402
from simdbind.conformance.engines.ncnn import implementation  # noqa: E402
from tests.peer_cases import pick, run  # noqa: E402

PASSING = {
    "eltwise sum of three": ("eltwise", lambda c, p: p["op"] == "sum" and p["count"] == 3),
    "eltwise min (BinaryOp fold)": ("eltwise", lambda c, p: p["op"] == "min" and p["count"] == 4),
    # UnaryOp works in place: on a Mat wrapping NumPy memory it killed the process (the peer clones its inputs).
    "unary exp": ("unary", lambda c, p: p["op"] == "exp"),
    "unary cos": ("unary", lambda c, p: p["op"] == "cos"),
    "unary rsqrt": ("unary", lambda c, p: p["op"] == "rsqrt"),
    "unary rcp (1 ulp)": ("unary", lambda c, p: p["op"] == "rcp" and p["size"] > 1000),
    "softmax over an inner axis": ("softmax", lambda c, p: p["inner"] > 1),
    "softmax16b": ("softmax16b", lambda c, p: True),
    "lrn nhwc batch": ("lrn", lambda c, p: c.layout == "nhwc" and p["batch"] > 1),
    "shuffle type 0 nhwc batch": ("shuffle", lambda c, p: p["type"] == 0 and p["batch"] > 1 and c.layout == "nhwc"),
    "average, ceil, pads included": ("pooling_average", lambda c, p: p["ceil"] and not p["exclude"]
                                     and (p["height"] - p["ky"]) % p["sy"] != 0),
    "average, ceil, pads excluded, batch": ("pooling_average", lambda c, p: p["ceil"] and p["exclude"]
                                            and p["batch"] > 1),
    "max 3D (channels as depth)": ("pooling_max32f", lambda c, p: p["kc"] > 1 and p["pc_begin"] != p["pc_end"]),
    "max bf16": ("pooling_max16b", lambda c, p: c.layout == "nhwc"),
    "max uint8": ("pooling_max8u", lambda c, p: p["ceil"]),
    "ip32f prelu (Permute around PReLU)": ("inner_product_32f", lambda c, p: p["activation"] == "prelu" and p["M"] > 1),
    "ip32f mish with a threshold": ("inner_product_32f", lambda c, p: p["activation"] == "mish" and p["pset"] == "low"),
    "ip32f swish, slope -0.7": ("inner_product_32f", lambda c, p: p["activation"] == "swish" and p["pset"] == "neg"),
    "ip32f restrict_range, lower > upper": ("inner_product_32f", lambda c, p: p["activation"] == "restrict_range"
                                           and p["pset"] == "inverted"),
    "ip layer, batch": ("inner_product_layer", lambda c, p: p["batch"] > 1),
    "ip8i, K 129 (exact in float32)": ("inner_product_8i", lambda c, p: p["compatibility"] == "precise"
                                       and p["K"] == 129),
    "conv 3x3 (Winograd-eligible)": ("convolution32f", lambda c, p: p["kernel"] == (3, 3) and p["groups"] == 1
                                     and p["src_c"] >= 16 and p["stride"] == (1, 1)),
    "conv depthwise, dilated, nhwc": ("convolution32f", lambda c, p: p["groups"] == p["src_c"] > 1
                                      and p["dilation"] != (1, 1) and c.layout == "nhwc"),
    "conv mish with a threshold": ("convolution32f", lambda c, p: p["activation"] == "mish"),
    "conv hswish": ("convolution32f", lambda c, p: p["activation"] == "hswish" and p["groups"] > 1),
}


@pytest.mark.parametrize("name", PASSING)
def test_case_passes(name: str) -> None:
    function, where = PASSING[name]
    result = run(implementation, pick(function, where))
    assert result.status == "pass", f"{result.descriptor}: {result.detail}"


def test_lone_infinity_on_a_winograd_shape_gives_the_reference_infinities() -> None:
    # With Winograd F(6x6,3x3) on, ncnn turns the whole tile around the +Inf into NaN (docs/peers.md).
    case = pick("convolution32f", lambda c, p: p["special"] == "pos_inf" and p["kernel"] == (3, 3)
                and p["groups"] == 1, group="edge")
    result = run(implementation, case)
    assert result.status == "pass", f"{result.descriptor}: {result.detail}"


def test_reciprocal_is_held_to_one_ulp_with_the_reason() -> None:
    result = run(implementation, pick("unary", lambda c, p: p["op"] == "rcp" and p["size"] > 1000))
    assert result.tolerance == "1 ulp" and result.max_ulp >= 1  # not correctly rounded: the exact rule would fail


@pytest.mark.parametrize("function, where, group, reason", [
    ("gather_elements", lambda c, p: True, "main", "ncnn has no gather_elements"),
    ("unary", lambda c, p: p["op"] == "erf", "main", "no layer for erf"),
    ("shuffle", lambda c, p: p["channels0"] == 0, "main", "zero-sized"),
    ("pooling_average", lambda c, p: p["direct"], "main", "explicit output size"),
    ("inner_product_8i", lambda c, p: p["compatibility"] == "precise" and p["K"] > 513, "main", "K <= 513"),
])
def test_unexpressible_case_is_a_skip_with_its_reason(function, where, group, reason) -> None:
    result = run(implementation, pick(function, where, group))
    assert result.status == "skip" and reason in result.detail, result.detail


def test_selected_by_module_path() -> None:
    (selected,) = resolve("simdbind.conformance.engines.ncnn:implementation")
    assert selected is implementation and selected.describe()["version"] == __import__("ncnn").__version__
