"""The argument vocabulary, one section per class of defect, each test parametrized over every wrapper that takes
such an argument. The wrappers and their arguments come from one table, WRAPPERS: a wrapper is called with valid
defaults for everything a test does not override, and lists its array, size, float, layout and pad arguments.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import ml_dtypes
import numpy as np
import pytest

import simdbind
from simdbind import ArgumentError, DTypeError, SimdBindError, TensorFormat
from simdbind import activation as act
from simdbind.conformance import activation as reference_activation

BF16 = np.dtype(ml_dtypes.bfloat16)

class _Random:
    """The inputs' generator, restarted by :func:`made` so that every call of a wrapper sees the same values."""

    generator = np.random.default_rng(18)

    def __getattr__(self, name: str) -> Any:
        return getattr(_Random.generator, name)


RNG = _Random()


def f32(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float32)


@dataclass
class Wrapper:
    """One wrapper: `make(library)` gives the callable and its valid keyword arguments."""

    name: str
    make: Callable[[Any], tuple[Callable[..., Any], dict[str, Any]]]
    arrays: tuple[str, ...] = ()  # array arguments that C reads
    sizes: tuple[str, ...] = ()  # integer arguments
    floats: tuple[str, ...] = ()  # float parameters
    layout: bool = False
    pad: bool = False
    out: bool = True  # takes out= (a single array)
    function: Any = None  # the public function or method whose signature is checked
    extra: dict[str, Any] = field(default_factory=dict)


def _conv_forward(lib: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    conv = simdbind.Convolution32f((4, 6, 6), 4, 3, pad=1, weight=f32(4, 4, 3, 3), library=lib)
    return conv.forward, {"x": f32(4, 6, 6)}


def _ip_forward(lib: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    ip = simdbind.InnerProduct32f(3, 4, 5, const_b=False, library=lib)
    return ip.forward, {"A": f32(3, 5), "B": f32(5, 4)}


def _gather_forward(lib: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    context = simdbind.GatherElements(np.float32, np.int64, (4, 6), (4, 6), 1, library=lib)
    return context.forward, {"data": f32(4, 6), "indices": RNG.integers(-6, 6, (4, 6))}


WRAPPERS = [
    Wrapper("eltwise", lambda lib: (simdbind.eltwise, {"inputs": [f32(16), f32(16), f32(16)], "op": "sum",
                                                        "weights": f32(3)}),
            arrays=("weights",), function=simdbind.eltwise),
    Wrapper("unary", lambda lib: (simdbind.unary, {"x": f32(16), "op": "exp"}), function=simdbind.unary),
    Wrapper("softmax", lambda lib: (simdbind.softmax, {"x": f32(4, 8), "axis": 1}), arrays=("x",),
            sizes=("axis",), function=simdbind.softmax),
    Wrapper("softmax bf16", lambda lib: (simdbind.softmax, {"x": f32(4, 8).astype(BF16)}), arrays=("x",),
            function=simdbind.softmax),
    Wrapper("lrn", lambda lib: (simdbind.lrn, {"x": f32(2, 5, 3, 3), "half": 1, "k": np.float32([1, 0.1, -0.75])}),
            arrays=("x", "k"), sizes=("half",), floats=("k",), layout=True, function=simdbind.lrn),
    Wrapper("lrn_onnx", lambda lib: (simdbind.lrn_onnx, {"x": f32(2, 5, 3, 3), "size": 3}), arrays=("x",),
            sizes=("size",), floats=("alpha", "beta", "bias"), layout=True, function=simdbind.lrn_onnx),
    Wrapper("shuffle", lambda lib: (simdbind.shuffle, {"x0": f32(2, 3, 3), "x1": f32(4, 3, 3)}),
            arrays=("x0", "x1"), sizes=("type",), layout=True, out=False, function=simdbind.shuffle),
    Wrapper("pooling_max", lambda lib: (simdbind.pooling_max, {"x": f32(2, 3, 6, 6), "kernel": 3, "stride": 2,
                                                                "pad": 1}),
            arrays=("x",), sizes=("kernel", "stride", "kernel_c", "stride_c"), layout=True, pad=True,
            function=simdbind.pooling_max),
    Wrapper("pooling_max bf16", lambda lib: (simdbind.pooling_max, {"x": f32(2, 3, 6, 6).astype(BF16), "kernel": 2,
                                                                     "stride": 2}),
            arrays=("x",), function=simdbind.pooling_max),
    Wrapper("pooling_average", lambda lib: (simdbind.pooling_average, {"x": f32(2, 3, 6, 6), "kernel": 3,
                                                                        "stride": 2, "pad": 1, "exclude_pad": True}),
            arrays=("x",), sizes=("kernel", "stride"), layout=True, pad=True, function=simdbind.pooling_average),
    Wrapper("gather_elements", lambda lib: (simdbind.gather_elements, {
        "data": f32(4, 6), "indices": RNG.integers(-6, 6, (4, 6)), "axis": 1}),
            arrays=("data", "indices"), sizes=("axis",), function=simdbind.gather_elements),
    Wrapper("gather_elements bf16", lambda lib: (simdbind.gather_elements, {
        "data": f32(4, 6).astype(BF16), "indices": RNG.integers(-6, 6, (4, 6)), "axis": 1}),
            arrays=("data",), function=simdbind.gather_elements),
    Wrapper("GatherElements.forward", _gather_forward, arrays=("data", "indices"),
            function=simdbind.GatherElements.forward),
    Wrapper("inner_product", lambda lib: (simdbind.inner_product, {"x": f32(2, 5), "weight": f32(4, 5),
                                                                    "bias": f32(4)}),
            arrays=("x", "weight", "bias"), function=simdbind.inner_product),
    Wrapper("inner_product_8i", lambda lib: (simdbind.inner_product_8i, {
        "src_u8": RNG.integers(0, 256, (2, 6)).astype(np.uint8),
        "weight_i8": RNG.integers(-128, 128, (3, 6)).astype(np.int8)}),
            arrays=("src_u8", "weight_i8"), function=simdbind.inner_product_8i),
    Wrapper("InnerProduct32f.forward", _ip_forward, arrays=("A", "B"), function=simdbind.InnerProduct32f.forward),
    Wrapper("conv2d", lambda lib: (simdbind.conv2d, {"x": f32(1, 4, 6, 6), "weight": f32(4, 4, 3, 3),
                                                      "bias": f32(4), "pad": 1}),
            arrays=("x", "weight", "bias"), sizes=("stride", "dilation", "group"), layout=True, pad=True,
            function=simdbind.conv2d),
    Wrapper("Convolution32f.forward", _conv_forward, arrays=("x",), function=simdbind.Convolution32f.forward),
]
OUT = [w for w in WRAPPERS if w.out]
ARRAYS = [(w, a) for w in WRAPPERS for a in w.arrays]
SIZES = [(w, s) for w in WRAPPERS for s in w.sizes]
FLOATS = [(w, f) for w in WRAPPERS for f in w.floats]
LAYOUTS = [w for w in WRAPPERS if w.layout]
PADS = [w for w in WRAPPERS if w.pad]


def ids(value: Any) -> str:
    if isinstance(value, Wrapper):
        return value.name
    return str(value)


def made(wrapper: Wrapper, library: Any) -> tuple[Callable[..., Any], dict[str, Any]]:
    """`wrapper`'s callable and valid arguments, the same values on every call."""
    _Random.generator = np.random.default_rng(18)
    return wrapper.make(library)


def call(wrapper: Wrapper, library: Any, **overrides: Any) -> Any:
    fn, kwargs = made(wrapper, library)
    if "forward" not in wrapper.name:
        kwargs["library"] = library
    return fn(**{**kwargs, **overrides})


def _in(out: np.ndarray, value: np.ndarray) -> np.ndarray:
    """`value`'s contents placed at the start of `out`'s memory (a view of out)."""
    raw = out.reshape(-1).view(np.uint8)
    assert raw.size >= value.nbytes, "the test's out is too small to hold the argument"
    view = raw[:value.nbytes].view(value.dtype).reshape(value.shape)
    view[...] = value
    return view


# -- out: keyword-only everywhere, and never overlapping an array that is read ---------------------------------
@pytest.mark.parametrize("wrapper", WRAPPERS, ids=ids)
def test_out_is_keyword_only(wrapper):
    parameter = inspect.signature(wrapper.function).parameters["out"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("wrapper,argument", ARRAYS, ids=ids)
def test_out_overlapping_any_array_argument_is_refused_and_out_is_untouched(bundled, wrapper, argument):
    if not wrapper.out:
        pytest.skip("out is a pair here: tested below")
    fn, kwargs = made(wrapper, bundled)
    expected = call(wrapper, bundled)
    value = np.array(kwargs[argument])
    if value.nbytes <= expected.nbytes:  # the argument inside out
        out = np.zeros_like(expected)
        argument_value, memory = _in(out, value), out
    else:  # out inside the argument
        argument_value = memory = value
        out = value.reshape(-1).view(np.uint8)[:expected.nbytes].view(expected.dtype).reshape(expected.shape)
    before = memory.copy()
    with pytest.raises(ArgumentError, match=rf"out: must not overlap {argument}"):
        call(wrapper, bundled, **{argument: argument_value}, out=out)
    np.testing.assert_array_equal(memory.view(np.uint8), before.view(np.uint8))


def test_eltwise_weights_inside_out_were_read_after_being_written(bundled):
    """The example of this class: eltwise's weights a view of out gave silently wrong sums (the fast path)."""
    x, y, z = np.arange(16, dtype=np.float32), np.ones(16, np.float32), np.full(16, 2, np.float32)
    out = np.zeros(16, np.float32)
    out[:3] = 1
    before = out.copy()
    for _ in range(2):  # the second call finds the default library loaded: the C fast path
        with pytest.raises(ArgumentError, match="out: must not overlap weights"):
            simdbind.eltwise([x, y, z], "sum", out[:3], out=out)
        simdbind.default_library()
    np.testing.assert_array_equal(out, before)


def test_lrn_k_inside_out_is_refused(bundled):
    x = f32(1, 4, 2, 2)
    out = np.zeros_like(x)
    k = _in(out, np.float32([1, 0.1, -0.75]))
    with pytest.raises(ArgumentError, match="out: must not overlap k"):
        simdbind.lrn(x, 1, k, out=out, library=bundled)


def test_shuffle_outputs_overlapping_an_input_or_each_other_are_refused(bundled):
    x0, x1 = f32(4, 3, 3), f32(2, 3, 3)
    y0, y1 = simdbind.shuffle(x0, x1, library=bundled)
    with pytest.raises(ArgumentError, match="out\\[1\\]: must not overlap out\\[0\\]"):
        simdbind.shuffle(x0, x1, out=(y0, y0), library=bundled)
    with pytest.raises(ArgumentError, match="out\\[0\\]: must not overlap x0"):
        simdbind.shuffle(x0, x1, out=(x0.reshape(-1)[:y0.size].reshape(y0.shape), y1), library=bundled)


def test_eltwise_readme_example_reading_out_after_writing_it_is_refused(bundled):
    a, b = f32(1000), f32(1000)
    before = a.copy()
    with pytest.raises(ArgumentError, match=r"out: must not overlap inputs\[2\]"):
        simdbind.eltwise([a, b, a], "sum", weights=[1, 2, -1], out=a, library=bundled)
    np.testing.assert_array_equal(a, before)


# -- byte order and dtype of every array argument ----------------------------------------------------------------
@pytest.mark.parametrize("wrapper,argument", ARRAYS, ids=ids)
def test_every_array_argument_refuses_a_swapped_byte_order(bundled, wrapper, argument):
    _, kwargs = made(wrapper, bundled)
    value = np.asarray(kwargs[argument])
    if value.dtype.itemsize == 1:
        pytest.skip("one-byte elements have no byte order")
    swapped = value.astype(value.dtype.newbyteorder(">" if value.dtype.byteorder in "=<" else "<"))
    with pytest.raises(DTypeError, match=f"{argument}: must be in native byte order"):
        call(wrapper, bundled, **{argument: swapped})


def test_big_endian_bfloat16_was_computed_on_swapped_bytes(bundled):
    x = f32(4, 8).astype(BF16)
    with pytest.raises(DTypeError, match="x: must be in native byte order"):
        simdbind.softmax(x.astype(BF16.newbyteorder(">")), library=bundled)


@pytest.mark.parametrize("wrapper", [w for w in OUT if w.name not in ("softmax bf16",)], ids=ids)
def test_out_of_swapped_byte_order_is_refused(bundled, wrapper):
    expected = call(wrapper, bundled)
    out = np.zeros(expected.shape, expected.dtype.newbyteorder(">"))
    with pytest.raises(DTypeError, match="out: must be in native byte order"):
        call(wrapper, bundled, out=out)


# -- untyped errors: ragged lists, huge numbers, zero strides, library names -------------------------------------
@pytest.mark.parametrize("wrapper,argument", ARRAYS, ids=ids)
@pytest.mark.parametrize("bad", [[[1.0, 2.0], [3.0]], [10 ** 400] * 3, ["a", "b"]], ids=["ragged", "huge", "strings"])
def test_array_arguments_of_ragged_or_huge_lists_raise_typed_errors(bundled, wrapper, argument, bad):
    with pytest.raises(SimdBindError, match=argument):
        call(wrapper, bundled, **{argument: bad})


@pytest.mark.parametrize("wrapper,argument", SIZES, ids=ids)
@pytest.mark.parametrize("bad", [2 ** 64, -(2 ** 64), 10 ** 30, True, 1.5, "2"],
                         ids=["2**64", "-2**64", "10**30", "bool", "float", "str"])
def test_size_arguments_out_of_range_or_not_ints_raise_argument_errors(bundled, wrapper, argument, bad):
    if argument == "half" and bad in (2 ** 64, 10 ** 30):
        pytest.skip("a huge half is a window over every channel (clamped before C)")
    with pytest.raises(ArgumentError, match=argument):
        call(wrapper, bundled, **{argument: bad})


@pytest.mark.parametrize("position", range(5))
@pytest.mark.parametrize("bad", [2 ** 64, -1, True, 0.5])
def test_pooling_output_size_checks_every_argument(position, bad):
    args = [6, 3, 2, 1, 1]
    args[position] = bad
    with pytest.raises(ArgumentError):
        simdbind.pooling_output_size(*args)


def test_pooling_output_size_zero_stride_is_an_argument_error():
    with pytest.raises(ArgumentError, match="stride: must be >= 1"):
        simdbind.pooling_output_size(6, 3, 0, 0, 0)
    assert simdbind.pooling_output_size(6, 3, 2, 1, 1) == 3
    assert simdbind.pooling_output_size(6, 3, 2, 1, 1, ceil_mode=True) == 4
    assert simdbind.pooling_output_size(4, 2, 2, 0, 1, ceil_mode=True) == 2  # a third window would lie in the pad


@pytest.mark.parametrize("wrapper", [w for w in WRAPPERS if "forward" not in w.name], ids=ids)
@pytest.mark.parametrize("name", ["bundled", "/no/such/libSimd.so"])
def test_library_given_as_a_name_is_a_typed_error(wrapper, name):
    fn, kwargs = made(wrapper, None)
    with pytest.raises(ArgumentError, match=r"library: must be a simdbind.Library .*simdbind.load"):
        fn(**kwargs, library=name)


@pytest.mark.parametrize("cls,kwargs", [
    (simdbind.Convolution32f, {"src_shape": (4, 6, 6), "out_channels": 4, "kernel": 3, "weight": f32(4, 4, 3, 3)}),
    (simdbind.InnerProduct32f, {"M": 2, "N": 3, "K": 4, "weight": f32(4, 3)}),
    (simdbind.GatherElements, {"data_dtype": np.float32, "index_dtype": np.int64, "data_shape": (2, 3),
                               "index_shape": (2, 3), "axis": 1}),
], ids=["Convolution32f", "InnerProduct32f", "GatherElements"])
def test_contexts_refuse_a_library_name_too(cls, kwargs):
    with pytest.raises(ArgumentError, match="library: must be a simdbind.Library"):
        cls(**kwargs, library="bundled")


# -- finite parameters: one rule everywhere ------------------------------------------------------------------------
@pytest.mark.parametrize("wrapper,argument", FLOATS, ids=ids)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e39, 10 ** 400, True, "1"],
                         ids=["nan", "inf", "-inf", "1e39", "10**400", "bool", "str"])
def test_float_parameters_must_be_finite_float32_numbers(bundled, wrapper, argument, bad):
    _, kwargs = made(wrapper, bundled)
    if argument in kwargs:  # an array of parameters (lrn's k): one bad value in it (NumPy converts what it can)
        if isinstance(bad, (bool, str)):
            pytest.skip("an array is converted by NumPy's rules")
        values: list[Any] = list(np.asarray(kwargs[argument], np.float64))
        values[1] = bad
        bad = values
    with pytest.raises(SimdBindError, match=argument):
        call(wrapper, bundled, **{argument: bad})


@pytest.mark.parametrize("make", [
    lambda v: act.leaky_relu(v), lambda v: act.elu(v), lambda v: act.hswish(v, 1.0), lambda v: act.mish(v),
    lambda v: act.swish(v), lambda v: act.hard_sigmoid(v, 0.5), lambda v: act.prelu([1.0, v]),
], ids=["leaky_relu", "elu", "hswish", "mish", "swish", "hard_sigmoid", "prelu"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e39, 10 ** 400])
def test_activation_parameters_follow_the_same_rule(make, bad):
    with pytest.raises(SimdBindError):
        make(bad)


# -- valid calls that were refused: restrict_range with lower > upper -------------------------------------------
def test_restrict_range_with_lower_above_upper_gives_upper_like_upstream_onnx_and_torch(bundled):
    # Upstream's Activate<RestrictRange> is Min(Max(lower, x), upper) in Base and every SIMD variant: `upper`
    # everywhere when lower > upper, as ONNX's Clip and torch.clamp.
    x = f32(3, 5) * 10
    spec = act.restrict_range(2.0, -1.0)
    expected = reference_activation.activate(x.astype(np.float64), "restrict_range", [2.0, -1.0])
    np.testing.assert_array_equal(expected, np.full(x.shape, -1.0))
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            ip = simdbind.InnerProduct32f(3, 4, 5, const_b=False, activation=spec, library=bundled)
            np.testing.assert_array_equal(ip.forward(x, f32(5, 4)), np.full((3, 4), -1.0, np.float32))
            conv = simdbind.conv2d(f32(1, 4, 5, 5), f32(4, 4, 3, 3), activation="restrict_range",
                                   params=[2.0, -1.0], library=bundled)
            np.testing.assert_array_equal(conv, np.full(conv.shape, -1.0, np.float32))


def test_restrict_range_maps_nan_to_upper_like_upstream(bundled):
    x = np.full((1, 5), np.nan, np.float32)
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            ip = simdbind.InnerProduct32f(1, 3, 5, const_b=False, activation=act.restrict_range(-1.0, 0.5),
                                          library=bundled)
            np.testing.assert_array_equal(ip.forward(x, f32(5, 3)), np.full((1, 3), 0.5, np.float32))


def _flat(result: Any) -> np.ndarray:
    return np.concatenate([np.ravel(a) for a in (result if isinstance(result, tuple) else (result,))])


# -- layouts: the same values everywhere -------------------------------------------------------------------------
@pytest.mark.parametrize("wrapper", LAYOUTS, ids=ids)
def test_every_layout_spelling_works_everywhere(bundled, wrapper):
    results = [call(wrapper, bundled, layout=value) for value in ("nchw", "NCHW", " Nchw ", TensorFormat.NCHW)]
    for result in results[1:]:
        np.testing.assert_array_equal(_flat(result), _flat(results[0]))


@pytest.mark.parametrize("wrapper", LAYOUTS, ids=ids)
@pytest.mark.parametrize("bad", ["nchwc", "nwhc", 0, None])
def test_unknown_layouts_are_refused_with_a_suggestion(bundled, wrapper, bad):
    suggestion = r" \(did you mean" if isinstance(bad, str) else ""
    with pytest.raises(ArgumentError, match=rf"layout: must be 'nchw', 'nhwc' or a TensorFormat, got .*{suggestion}"):
        call(wrapper, bundled, layout=bad)


# -- pads: every spelling everywhere ------------------------------------------------------------------------------
@pytest.mark.parametrize("wrapper", PADS, ids=ids)
def test_every_pad_spelling_works_everywhere(bundled, wrapper):
    symmetric = [1, (1, 1), ((1, 1), (1, 1)), (1, 1, 1, 1), [1, 1]]
    results = [call(wrapper, bundled, pad=p) for p in symmetric]
    for result in results[1:]:
        np.testing.assert_array_equal(result, results[0])
    # asymmetric: nested ((top, bottom), (left, right)) is ONNX's (top, left, bottom, right) reordered
    np.testing.assert_array_equal(call(wrapper, bundled, pad=((0, 1), (1, 0))),
                                  call(wrapper, bundled, pad=(0, 1, 1, 0)))


@pytest.mark.parametrize("wrapper", PADS, ids=ids)
@pytest.mark.parametrize("bad", [(1, 1, 1), ((1, 1, 1), (1, 1)), -1, 2 ** 64, 1.0])
def test_bad_pads_are_argument_errors(bundled, wrapper, bad):
    with pytest.raises(ArgumentError, match="pad"):
        call(wrapper, bundled, pad=bad)


# -- no silent traps for PyTorch and ONNX users ---------------------------------------------------------------------
@pytest.mark.parametrize("function,required", [(simdbind.pooling_max, ("stride",)),
                                               (simdbind.pooling_average, ("stride", "exclude_pad"))],
                         ids=["pooling_max", "pooling_average"])
def test_pooling_stride_and_exclude_pad_are_required_keywords(function, required):
    parameters = inspect.signature(function).parameters
    for name in required:
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default is inspect.Parameter.empty
    with pytest.raises(TypeError, match="stride"):
        function(f32(1, 4, 4), 2)
    with pytest.raises(TypeError):
        function(f32(1, 4, 4), 2, 2)  # stride cannot be passed by position


@pytest.mark.parametrize("function", ["conv2d", "Convolution32f"])
def test_oihw_weights_with_layout_nhwc_name_the_layout_mistake(bundled, function):
    oihw = f32(8, 4, 3, 3)
    x = f32(1, 6, 6, 4)  # NHWC, 4 channels
    with pytest.raises(ArgumentError, match=r"OIHW shape of layout='nchw'; pass layout='nchw', or convert"):
        if function == "conv2d":
            simdbind.conv2d(x, oihw, layout="nhwc", library=bundled)
        else:
            simdbind.Convolution32f((6, 6, 4), 8, 3, weight=oihw, layout="nhwc", library=bundled)
    hwio = simdbind.convert_weight(oihw, "oihw", "hwio")
    with pytest.raises(ArgumentError, match=r"HWIO shape of layout='nhwc'"):
        simdbind.conv2d(f32(1, 4, 6, 6), hwio, library=bundled)


# -- did you mean, and messages that point into the repository --------------------------------------------------
@pytest.mark.parametrize("call_it,suggestion", [
    (lambda lib: simdbind.eltwise([f32(2), f32(2)], "summ", library=lib), "sum"),
    (lambda lib: simdbind.unary(f32(2), "sqr", library=lib), "sqrt"),
    (lambda lib: simdbind.inner_product_8i(np.zeros(2, np.uint8), np.zeros((1, 2), np.int8), "precis",
                                           library=lib), "precise"),
    (lambda lib: act.resolve("leaky_rel", [0.1], 2), "leaky_relu"),
    (lambda lib: simdbind.pooling_max(f32(1, 4, 4), 2, stride=2, layout="nhcw", library=lib), "nhwc"),
])
def test_unknown_names_get_a_did_you_mean(bundled, call_it, suggestion):
    with pytest.raises(ArgumentError, match=f"did you mean '{suggestion}'"):
        call_it(bundled)


def test_error_messages_point_at_no_document_outside_the_repository():
    import pathlib
    import re

    root = pathlib.Path(simdbind.__file__).parent
    messages = []
    for path in root.glob("*.py"):
        source = path.read_text()
        for match in re.finditer(r"(?:Error|raise)\((?:[^()]|\([^()]*\))*\)", source, re.S):
            messages.append((path.name, match.group(0)))
    bad = [(name, text[:80]) for name, text in messages if re.search(r"\bspec\b|issue|SIMD_SYNET_ABI", text)]
    assert not bad
