"""simdbind.Convolution32f / conv2d / convert_weight: values, algorithm choice, buffers, lifetime, threads and
every argument rule."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import simdbind
from simdbind.bench.harness import placed
from simdbind.conformance.families.convolution.reference import convolution as reference
from simdbind import ArgumentError, ContextClosedError, DTypeError, SimdBindError
from simdbind.library import Library


def rand(rng, *shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def make(library, layout="nchw", src_c=8, h=9, w=10, dst_c=16, kernel=(3, 3), group=1, batch=1, seed=0, **kwargs):
    rng = np.random.default_rng(seed)
    weight_shape = (dst_c, src_c // group, *kernel) if layout == "nchw" else (*kernel, src_c // group, dst_c)
    weight, bias = rand(rng, *weight_shape), rand(rng, dst_c)
    shape = (src_c, h, w) if layout == "nchw" else (h, w, src_c)
    conv = simdbind.Convolution32f(shape, dst_c, kernel, group=group, layout=layout, batch=batch, weight=weight,
                                   bias=bias, library=library, **kwargs)
    x = rand(rng, batch, *shape)
    return conv, x, weight, bias


def expected(conv, x, weight, bias, activation="identity", params=None):
    return reference(x, weight, bias, params, layout=conv.layout, stride=conv.stride, dilation=conv.dilation,
                     pad=conv.pad, group=conv.group, activation=activation)


# -- values -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("geometry", [
    dict(kernel=(3, 3), pad=1),
    dict(kernel=(1, 1)),
    dict(kernel=(3, 3), group=8, dst_c=8, pad=(1, 0, 2, 1)),
    dict(kernel=(2, 3), stride=(2, 1), dilation=(1, 2), pad=(0, 1, 1, 0), group=2, batch=2),
    dict(kernel=(5, 5), stride=2, pad=2, src_c=16, dst_c=32, group=16),
])
def test_values_match_the_float64_reference(library, layout, geometry):
    conv, x, weight, bias = make(library, layout, **geometry)
    out = conv.forward(x)
    assert out.shape == conv.out_shape
    np.testing.assert_allclose(out, expected(conv, x, weight, bias), rtol=1e-5, atol=1e-5)


def test_hand_checked_1x1_and_3x3():
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    ones = np.ones((1, 1, 3, 3), np.float32)
    # 3x3 sum with pad 1: corner (0,0) sees 1+2+4+5 = 12, the centre sees everything = 45.
    out = simdbind.conv2d(x, ones, np.array([0.5], np.float32), pad=1)
    assert out[0, 0, 0, 0] == 12.5 and out[0, 0, 1, 1] == 45.5
    # 1x1 with two outputs: 2*x and -x, relu keeps the first only.
    w = np.array([2.0, -1.0], np.float32).reshape(2, 1, 1, 1)
    out = simdbind.conv2d(x, w, activation="relu")
    np.testing.assert_array_equal(out[0, 0], 2 * x[0, 0])
    np.testing.assert_array_equal(out[0, 1], np.zeros((3, 3), np.float32))


@pytest.mark.parametrize("activation, params", [
    ("relu", None), ("leaky_relu", [0.1]), ("restrict_range", [-0.3, 0.4]), ("elu", [1.2]), ("hswish", None),
    ("mish", [0.5]), ("hard_sigmoid", None), ("swish", [1.3]), ("gelu", None),
    ("prelu", np.linspace(0, 2, 16).astype(np.float32)),
])
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_fused_activations(bundled, layout, activation, params):
    conv, x, weight, bias = make(bundled, layout, activation=activation, params=params, pad=1)
    resolved = None if params is None else np.asarray(params, np.float32)
    if resolved is None:
        from simdbind.activation import resolve
        resolved = resolve(activation, None, 16)[1]
    np.testing.assert_allclose(conv.forward(x), expected(conv, x, weight, bias, activation, resolved),
                               rtol=2e-5, atol=2e-5)


def test_single_image_without_batch_axis(bundled):
    conv, x, weight, bias = make(bundled, "nhwc", pad=1)
    out = conv.forward(x[0])
    assert out.shape == conv.dst_shape
    np.testing.assert_array_equal(out, conv.forward(x)[0])


def test_conv2d_matches_the_context_and_infers_shapes(bundled):
    conv, x, weight, bias = make(bundled, "nchw", batch=2, stride=2, pad=1)
    out = simdbind.conv2d(x, weight, bias, stride=2, pad=1, library=bundled)
    np.testing.assert_array_equal(out, conv.forward(x))


def test_convert_weight_round_trip_and_layout_equivalence(bundled):
    rng = np.random.default_rng(3)
    oihw = rand(rng, 12, 2, 3, 5)  # group 3, srcC 6
    hwio = simdbind.convert_weight(oihw, "oihw", "hwio")
    assert hwio.shape == (3, 5, 2, 12)
    np.testing.assert_array_equal(simdbind.convert_weight(hwio, "nhwc", "nchw"), oihw)
    x = rand(rng, 2, 6, 8, 9)
    nchw = simdbind.conv2d(x, oihw, group=3, pad=(1, 2), library=bundled)
    nhwc = simdbind.conv2d(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), hwio, group=3, pad=(1, 2), layout="nhwc",
                           library=bundled)
    np.testing.assert_allclose(nhwc, nchw.transpose(0, 2, 3, 1), rtol=1e-6, atol=1e-6)
    with pytest.raises(ArgumentError, match="target: must be"):
        simdbind.convert_weight(oihw, "nchw", "chwn")
    with pytest.raises(ArgumentError, match="weight: must have 4 dimensions"):
        simdbind.convert_weight(oihw[0], "nchw", "nhwc")


def test_depthwise_layouts_give_identical_bits(bundled):
    """Both depthwise kernels sum the taps inside the image in (ky, kx) order from zero on every path
    (conv_depthwise.h): NCHW and NHWC agree bit for bit whatever register block, border or general path each output
    takes. Random 3x3 geometries over y-strides 1-3, x-strides 1-2, pads 0-2 on each side, up to 23 x 69 pixels."""
    rng = np.random.default_rng(11)
    geometries = []
    while len(geometries) < 60:
        c, h, w = (int(v) for v in rng.integers((1, 1, 1), (20, 24, 70)))
        stride = tuple(int(v) for v in rng.integers((1, 1), (4, 3)))
        pad = tuple(int(v) for v in rng.integers(0, 3, 4))
        if h + pad[0] + pad[2] >= 3 and w + pad[1] + pad[3] >= 3:
            geometries.append((c, h, w, stride, pad))
    for isa in bundled.isas_supported:
        with bundled.use_isa(isa):
            for c, h, w, stride, pad in geometries:
                x, weight, bias = rand(rng, 1, c, h, w), rand(rng, c, 1, 3, 3), rand(rng, c)
                nchw = simdbind.conv2d(x, weight, bias, stride=stride, pad=pad, group=c, library=bundled)
                nhwc = simdbind.conv2d(np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
                                       simdbind.convert_weight(weight, "nchw", "nhwc"), bias, stride=stride, pad=pad,
                                       group=c, layout="nhwc", library=bundled)
                np.testing.assert_array_equal(nhwc.transpose(0, 3, 1, 2), nchw,
                                              err_msg=f"{isa} c{c} h{h} w{w} stride {stride} pad {pad}")


@pytest.mark.parametrize("channels", [128, 136, 144, 256])
def test_nhwc_depthwise_gives_the_same_bits_wherever_the_arrays_lie(bundled, channels):
    """The NHWC 3x3 block starts its channel vectors where the source's loads are aligned (AVX-512, channels a whole
    number of at least 8 vectors): a partial vector first, then whole ones, the last partial. Wherever the source and
    the output lie within a cache line, every ISA gives the bits of the NCHW kernel on the same data."""
    rng = np.random.default_rng(channels)
    for stride, pad in ((1, (1, 1, 1, 1)), (2, (1, 1, 1, 1)), (1, (0, 2, 1, 0))):
        x, weight, bias = rand(rng, 1, channels, 9, 21), rand(rng, channels, 1, 3, 3), rand(rng, channels)
        x_nhwc, w_hwio = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), simdbind.convert_weight(weight, "nchw", "nhwc")
        for isa in bundled.isas_supported:
            with bundled.use_isa(isa):
                nchw = simdbind.conv2d(x, weight, bias, stride=stride, pad=pad, group=channels, library=bundled)
                conv = simdbind.Convolution32f(x_nhwc.shape[1:], channels, 3, stride=stride, pad=pad, group=channels,
                                               layout="nhwc", weight=w_hwio, bias=bias, library=bundled)
                for offset in (0, 4, 16, 32, 48, 60):
                    out = placed(np.zeros((1, *nchw.shape[2:], channels), np.float32), (offset * 3) % 64)
                    conv.forward(placed(x_nhwc, offset), out=out)
                    np.testing.assert_array_equal(out.transpose(0, 3, 1, 2), nchw,
                                                  err_msg=f"{isa} stride {stride} pad {pad} offset {offset}")


@pytest.mark.parametrize("height, width, in_place", [
    (37, 150, True),  # a plane of 22,200 bytes: the 16 planes spread over the L1 sets, read in place
    (32, 64, False),  # 8 KiB planes: all in one L1 set, so the source is transposed to NHWC first
], ids=["planes", "nhwc-copy"])
@pytest.mark.parametrize("kernel, stride, dilation, pad", [
    (3, 1, 2, (2, 2, 2, 2)), (3, 2, 1, (1, 0, 2, 1)), (5, 2, 2, (4, 3, 0, 2)), (2, 3, 1, (0, 0, 0, 0)),
    ((1, 3), (2, 1), 1, (3, 1, 0, 1)),
])
def test_nchw_nhwc_direct_matches_nhwc_bit_for_bit(bundled, kernel, stride, dilation, pad, height, width, in_place):
    """NCHW NhwcDirect runs the NHWC kernel on the channel planes (the channel as the strided index) or, when the
    planes alias in L1, on an NHWC copy, and transposes each output row, which copies exactly: on wide images, a
    batch of two, strides, dilations and uneven pads, NCHW equals NHWC bit for bit. The scratch it asks for tells
    which source it read: the NHWC output alone, or the source's copy too."""
    rng = np.random.default_rng(5)
    x = rand(rng, 2, 16, height, width)
    weight = rand(rng, 24, 16, *((kernel, kernel) if isinstance(kernel, int) else kernel))
    bias = rand(rng, 24)
    args = dict(stride=stride, dilation=dilation, pad=pad, activation="relu", library=bundled)
    conv = simdbind.Convolution32f(x.shape, 24, weight.shape[2:], weight=weight, bias=bias, **args)
    assert conv.info.endswith("NhwcDirect")
    out_size = int(np.prod(conv.out_shape[1:]))
    assert conv.external_buffer_size == out_size + (0 if in_place else 16 * height * width)
    nhwc = simdbind.conv2d(np.ascontiguousarray(x.transpose(0, 2, 3, 1)),
                           simdbind.convert_weight(weight, "nchw", "nhwc"), bias, layout="nhwc", **args)
    np.testing.assert_array_equal(conv.forward(x), nhwc.transpose(0, 3, 1, 2))


# -- algorithm choice, ISA, buffers -------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("geometry, algorithm", [
    (dict(kernel=(3, 3), group=8, dst_c=8, pad=1), "Depthwise"),
    (dict(kernel=(1, 1)), "Direct1x1"),
    (dict(kernel=(3, 3), stride=2), "GemmNN"),
    (dict(kernel=(3, 3), group=2, pad=1), "GemmNN"),
    (dict(kernel=(3, 3), src_c=16, dst_c=24, pad=1), "WinogradF2x2"),   # output too small for 4x4 tiles to pay
    (dict(kernel=(3, 3), src_c=16, dst_c=24, pad=1, h=16, w=17), "WinogradF4x4"),
    (dict(kernel=(3, 3), src_c=8, dst_c=24, dilation=2, pad=2), "GemmNN"),
    (dict(kernel=(3, 3), src_c=16, dst_c=24, dilation=2, pad=2), "NhwcDirect"),  # NCHW through transposes
    (dict(kernel=(3, 3), src_c=33, dst_c=24, stride=2, pad=1), "GemmNN"),   # NhwcDirect takes 16 to 32 channels
])
def test_info_names_the_isa_and_the_algorithm(bundled, layout, geometry, algorithm):
    conv = make(bundled, layout, **geometry)[0]
    isa, name = conv.info.split("::")
    assert isa == bundled.isa
    expected_name = algorithm + layout.capitalize() if algorithm == "Depthwise" else algorithm
    assert name == expected_name


def test_internal_flag_says_whether_weights_were_transformed(bundled):
    assert make(bundled, "nhwc", src_c=16, dst_c=16, pad=1)[0].internal is True   # Winograd keeps U = G g Gt
    assert make(bundled, "nchw", stride=2)[0].internal is False                    # GemmNN reads the weights


def test_context_keeps_the_isa_of_init(bundled):
    isas = bundled.isas_supported
    if len(isas) < 2:
        pytest.skip("needs two ISAs")
    with bundled.use_isa(isas[0]):
        conv, x, weight, bias = make(bundled, "nhwc", pad=1)
        first = conv.forward(x)
    with bundled.use_isa(isas[-1]):
        assert conv.info.startswith(isas[0] + "::")
        np.testing.assert_array_equal(conv.forward(x), first)


def test_buffer_sizes(bundled):
    conv = make(bundled, "nchw", kernel=(3, 3), stride=2, src_c=8, h=9, w=10)[0]
    assert conv.external_buffer_size == 8 * 3 * 3 * conv.dst_shape[1] * conv.dst_shape[2]
    assert make(bundled, "nhwc", kernel=(1, 1))[0].external_buffer_size == 1
    assert make(bundled, "nhwc", group=8, dst_c=8)[0].external_buffer_size == 1
    conv, x, _, _ = make(bundled, "nhwc", stride=2)
    before = conv.internal_buffer_size
    conv.forward(x)
    assert conv.internal_buffer_size == before  # forward always brings scratch: the context never grows


def test_caller_buffer_gives_the_same_result_and_is_checked(bundled):
    conv, x, _, _ = make(bundled, "nchw", stride=2)
    size = conv.external_buffer_size
    buffer = np.full(size + 3, np.nan, np.float32)
    np.testing.assert_array_equal(conv.forward(x, buffer=buffer), conv.forward(x))
    with pytest.raises(ArgumentError, match=f"buffer: must hold at least {size}"):
        conv.forward(x, buffer=np.zeros(size - 1, np.float32))
    with pytest.raises(DTypeError, match="buffer: must have dtype float32"):
        conv.forward(x, buffer=np.zeros(size, np.float64))
    with pytest.raises(ArgumentError, match="buffer: must be C-contiguous"):
        conv.forward(x, buffer=np.zeros(2 * size, np.float32)[::2])
    with pytest.raises(ArgumentError, match="buffer: must be a numpy.ndarray"):
        conv.forward(x, buffer=[0.0] * size)
    big = np.zeros(x.size + size, np.float32)
    with pytest.raises(ArgumentError, match="buffer: must not overlap x"):
        conv.forward(big[:x.size].reshape(x.shape), buffer=big)
    out_size = int(np.prod(conv.out_shape))
    shared = np.zeros(out_size + size, np.float32)
    with pytest.raises(ArgumentError, match="buffer: must not overlap out"):
        conv.forward(x, out=shared[:out_size].reshape(conv.out_shape), buffer=shared)


def test_out_is_written_never_read_and_untouched_on_error(bundled):
    for layout in ("nchw", "nhwc"):
        for geometry in (dict(pad=1), dict(kernel=(1, 1)), dict(group=8, dst_c=8, pad=1), dict(stride=2)):
            conv, x, weight, bias = make(bundled, layout, **geometry)
            out = np.full(conv.out_shape, np.nan, np.float32)
            assert conv.forward(x, out=out) is out
            assert np.isfinite(out).all()
            np.testing.assert_allclose(out, expected(conv, x, weight, bias), rtol=1e-5, atol=1e-5)
    conv, x, _, _ = make(bundled)
    out = np.full(conv.out_shape, 7.0, np.float32)
    with pytest.raises(ArgumentError):
        conv.forward(x[..., :-1], out=out)
    assert (out == 7.0).all()


def test_weights_bias_and_params_are_private_copies(bundled):
    slopes = np.full(16, 0.25, np.float32)
    conv, x, weight, bias = make(bundled, "nhwc", pad=1, activation="prelu", params=slopes)
    before = conv.forward(x)
    weight[...] = 0
    bias[...] = 0
    slopes[...] = 0
    import gc
    gc.collect()
    np.testing.assert_array_equal(conv.forward(x), before)


def test_close_and_context_manager(bundled):
    conv, x, _, _ = make(bundled)
    with conv as same:
        assert same is conv
        conv.forward(x)
    with pytest.raises(ContextClosedError):
        conv.forward(x)
    with pytest.raises(ContextClosedError):
        conv.info
    conv.close()  # twice is fine
    assert "closed" in repr(conv)


def test_one_context_shared_by_threads_matches_the_single_threaded_run(bundled, library):
    rng = np.random.default_rng(11)
    weight = rand(rng, 3, 3, 16, 24)
    conv = simdbind.Convolution32f((15, 17, 16), 24, 3, pad=1, stride=(1, 2), layout="nhwc", batch=2,
                                   weight=weight, bias=rand(rng, 24), activation="relu", library=library)
    inputs = [rand(rng, 2, 15, 17, 16) for _ in range(8)]
    serial = [conv.forward(x) for x in inputs]
    results: dict[tuple[int, int], np.ndarray] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def worker(t: int) -> None:
        try:
            start.wait()
            for round_ in range(6):
                for i in range(t, len(inputs), 2):
                    results[(t, round_ * 100 + i)] = conv.forward(inputs[i])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(t % 2,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 2 * 6 * 4
    for (t, key), out in results.items():
        np.testing.assert_array_equal(out, serial[key % 100])


def test_internal_threads_give_the_same_values(bundled):
    conv, x, _, _ = make(bundled, "nchw", src_c=16, h=30, w=31, dst_c=32, pad=1, batch=2)
    one = conv.forward(x)
    previous = bundled.threads
    try:
        bundled.set_threads(2)
        two = conv.forward(x)
    finally:
        bundled.set_threads(previous)
    np.testing.assert_allclose(two, one, rtol=1e-6, atol=1e-6)


# -- argument rules -----------------------------------------------------------------------------------------------
GOOD = dict(src_shape=(8, 9, 10), out_channels=16, kernel=3)


def build(library, **changes):
    """A context from GOOD with `changes`; the default weight fits GOOD (rules on other fields fail before it)."""
    args = {**GOOD, "weight": np.zeros((16, 8, 3, 3), np.float32), **changes}
    src_shape, out_channels, kernel = args.pop("src_shape"), args.pop("out_channels"), args.pop("kernel")
    return simdbind.Convolution32f(src_shape, out_channels, kernel, library=library, **args)


@pytest.mark.parametrize("changes, error, message", [
    (dict(layout="nchwc"), ArgumentError, "layout: must be 'nchw', 'nhwc' or a TensorFormat, got 'nchwc' \\(did you mean"),
    (dict(batch=0), ArgumentError, "batch: must be >= 1, got 0"),
    (dict(batch=1.0), ArgumentError, "batch: must be an integer"),
    (dict(src_shape=(2, 8, 9, 10), batch=3), ArgumentError, "batch: must agree with src_shape"),
    (dict(src_shape=(8, 9)), ArgumentError, "src_shape: must be a 3-tuple"),
    (dict(src_shape=(8, 0, 10)), ArgumentError, r"src_shape\[1\]: must be >= 1, got 0"),
    (dict(out_channels=0), ArgumentError, "out_channels: must be >= 1, got 0"),
    (dict(kernel=0), ArgumentError, "kernel: must be >= 1, got 0"),            # upstream: SIGFPE in Init
    (dict(kernel=(3, 0)), ArgumentError, r"kernel\[1\]: must be >= 1, got 0"),
    (dict(kernel=(3, 3, 3)), ArgumentError, "kernel: must be an int or a"),
    (dict(stride=0), ArgumentError, "stride: must be >= 1, got 0"),            # upstream: SIGFPE in Init
    (dict(stride=(1, 0)), ArgumentError, r"stride\[1\]: must be >= 1, got 0"),
    (dict(dilation=0), ArgumentError, "dilation: must be >= 1, got 0"),        # upstream accepts it
    (dict(pad=-1), ArgumentError, "pad: must be >= 0, got -1"),
    (dict(pad=(1, 1, 1)), ArgumentError, "pad: must be an int, \\(y, x\\), \\(\\(top, bottom\\)"),
    (dict(pad=(0, 0, 0, -2)), ArgumentError, r"pad\[3\]: must be >= 0, got -2"),
    (dict(group=0), ArgumentError, "group: must be >= 1, got 0"),
    (dict(group=3), ArgumentError, "group: must divide the input channels 8, got 3"),  # upstream accepts it
    (dict(group=8, out_channels=12), ArgumentError, "group: must divide out_channels 12, got 8"),
    (dict(kernel=11), ArgumentError, "kernel: the dilated kernel spans 11 along y"),
    (dict(kernel=(3, 5), dilation=(1, 3)), ArgumentError, "kernel: the dilated kernel spans 13 along x"),
    (dict(activation=11), ArgumentError, "activation: must be one of"),       # upstream accepts, crashes later
    (dict(activation="softplus"), ArgumentError, "activation: must be one of"),
    (dict(activation="leaky_relu"), ArgumentError, "params"),
    (dict(activation="restrict_range", params=[1.0]), ArgumentError, "params"),
    (dict(activation="prelu", params=np.ones(3, np.float32)), ArgumentError, "params: prelu needs one slope"),
    (dict(weight=np.zeros((16, 8, 3, 3))), DTypeError, "weight: must have dtype float32"),
    (dict(weight=np.zeros((16, 8, 3, 2), np.float32)), ArgumentError, r"weight: must have shape \(16, 8, 3, 3\)"),
    (dict(layout="nhwc", src_shape=(9, 10, 8), weight=np.zeros((16, 8, 3, 3), np.float32)), ArgumentError,
     r"weight: must have shape \(3, 3, 8, 16\), HWIO"),
    (dict(bias=np.zeros(15, np.float32)), ArgumentError, r"bias: must have shape \(16,\)"),
    (dict(bias=np.zeros(16, np.int32)), DTypeError, "bias: must have dtype float32"),
])
def test_constructor_rules(bundled, changes, error, message):
    with pytest.raises(error, match=message):
        build(bundled, **changes)


def test_forward_rules(bundled):
    conv, x, _, _ = make(bundled, batch=2, pad=1)
    with pytest.raises(ArgumentError, match=r"x: must have shape \(2, 8, 9, 10\)"):
        conv.forward(x[0])  # a single image is only accepted when batch == 1
    with pytest.raises(DTypeError, match="x: must have dtype float32"):
        conv.forward(x.astype(np.float64))
    with pytest.raises(DTypeError, match="out: must have dtype float32"):
        conv.forward(x, out=np.zeros(conv.out_shape, np.float64))
    with pytest.raises(ArgumentError, match="out: must have shape"):
        conv.forward(x, out=np.zeros(conv.dst_shape, np.float32))
    with pytest.raises(ArgumentError, match="out: must be C-contiguous"):
        conv.forward(x, out=np.zeros(conv.out_shape[::-1], np.float32).T)
    readonly = np.zeros(conv.out_shape, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ArgumentError, match="out: must be writeable"):
        conv.forward(x, out=readonly)
    same = make(bundled, kernel=(1, 1), src_c=8, dst_c=8)[0]
    y = np.zeros((1, 8, 9, 10), np.float32)
    with pytest.raises(ArgumentError, match="out: must not overlap"):
        same.forward(y, out=y)


def test_conv2d_rules(bundled):
    x = np.zeros((1, 8, 9, 10), np.float32)
    with pytest.raises(ArgumentError, match="x: must have 3 or 4 dimensions"):
        simdbind.conv2d(x[0, 0], np.zeros((4, 8, 3, 3), np.float32), library=bundled)
    with pytest.raises(ArgumentError, match="weight: must have 4 dimensions"):
        simdbind.conv2d(x, np.zeros((4, 8, 3), np.float32), library=bundled)
    with pytest.raises(ArgumentError, match=r"weight: must be OIHW .* srcC/group = 8/2 on axis 1"):
        simdbind.conv2d(x, np.zeros((4, 8, 3, 3), np.float32), group=2, library=bundled)


class _RefusingLib:
    """The bundled library, except that Init returns NULL (as upstream does for parameters it rejects)."""

    def __init__(self, library: Library):
        self._lib, self._ffi = library.lib, library.ffi

    def __getattr__(self, name):
        if name == "SimdSynetConvolution32fInit":
            return lambda batch, conv: self._ffi.NULL
        return getattr(self._lib, name)


def test_init_returning_null_is_an_error_naming_the_rules(bundled):
    refusing = Library(bundled.path, "external", "api", bundled.ffi, _RefusingLib(bundled))
    with pytest.raises(SimdBindError, match="SimdSynetConvolution32fInit returned NULL .*floor-mode output size"):
        build(refusing)


def test_bundled_init_rejects_what_upstream_crashes_on(bundled):
    """The C Init itself refuses stride 0, kernel 0, a group not dividing the channels, activation 11, empty
    dimensions and a batch of 0 (NULL), so even a caller bypassing the wrapper cannot reach a division by zero."""
    ffi, lib = bundled.ffi, bundled.lib
    good = dict(srcC=8, srcH=9, srcW=10, srcT=0, srcF=0, dstC=16, dstH=7, dstW=8, dstT=0, dstF=0, kernelY=3,
                kernelX=3, dilationY=1, dilationX=1, strideY=1, strideX=1, padY=0, padX=0, padH=0, padW=0, group=1,
                activation=0)

    def init(batch=1, **changes):
        conv = ffi.new("SimdConvolutionParameters *")
        for key, value in {**good, **changes}.items():
            setattr(conv, key, value)
        ctx = lib.SimdSynetConvolution32fInit(batch, conv)
        if ctx != ffi.NULL:
            lib.SimdRelease(ctx)
            return True
        return False

    assert init()
    for changes in (dict(strideY=0), dict(kernelX=0), dict(dilationY=0), dict(group=3), dict(group=0),
                    dict(activation=11), dict(dstH=8), dict(dstW=0), dict(dstF=1), dict(srcF=2, dstF=2),
                    dict(srcT=7), dict(dstT=1), dict(srcC=0), dict(srcH=0), dict(srcW=0), dict(dstC=0),
                    dict(batch=0)):
        assert not init(**changes), changes


# -- fuzzing ------------------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def geometries(draw):
    """Mostly valid geometries (sizes and pads around the edges, kernels as wide as the padded input; about half
    of the examples reach Forward), and in about a quarter of them one field broken (zero, negative, not dividing,
    out of range)."""
    group = draw(st.integers(1, 3))
    g = dict(layout=draw(st.sampled_from(["nchw", "nhwc"])), src_c=group * draw(st.integers(1, 4)),
             h=draw(st.integers(1, 7)), w=draw(st.integers(1, 7)), dst_c=group * draw(st.integers(1, 4)),
             kernel=(draw(st.integers(1, 4)), draw(st.integers(1, 4))),
             stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
             dilation=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
             pad=tuple(draw(st.integers(0, 4)) for _ in range(4)), group=group, batch=draw(st.integers(1, 3)),
             activation=draw(st.sampled_from(["identity", "relu", "prelu", "hswish", "elu", "gelu"])))
    if draw(st.integers(0, 3)) == 0:
        field = draw(st.sampled_from(["src_c", "h", "dst_c", "kernel", "stride", "dilation", "pad", "group",
                                      "batch", "activation"]))
        bad = draw(st.sampled_from([0, -1]))
        if field in ("kernel", "stride", "dilation"):
            g[field] = (g[field][0], bad)
        elif field == "pad":
            g[field] = (0, 0, -1, 0)
        elif field == "group":
            g[field] = draw(st.sampled_from([0, 5]))
        elif field == "activation":
            g[field] = draw(st.sampled_from([11, -1, "softplus"]))
        else:
            g[field] = bad
    return g


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(geometries(), st.integers(0, 2**32 - 1))
def test_fuzz_any_geometry_gives_the_reference_or_a_typed_error(bundled, g, seed):
    rng = np.random.default_rng(seed)
    src_c, dst_c, group = g["src_c"], g["dst_c"], g["group"]
    k_y, k_x = g["kernel"]
    shape_ok = min(src_c, dst_c, group, k_y, k_x) > 0 and src_c % group == 0 and dst_c % group == 0
    weight_shape = ((dst_c, src_c // group, k_y, k_x) if g["layout"] == "nchw" else (k_y, k_x, src_c // group, dst_c)) \
        if shape_ok else (1, 1, 1, 1)
    weight = rand(rng, *weight_shape)
    bias = rand(rng, dst_c) if dst_c > 0 else None
    params = rng.uniform(0, 2, max(dst_c, 1)).astype(np.float32) if g["activation"] == "prelu" else None
    shape = (src_c, g["h"], g["w"]) if g["layout"] == "nchw" else (g["h"], g["w"], src_c)
    try:
        conv = simdbind.Convolution32f(shape, dst_c, g["kernel"], stride=g["stride"], dilation=g["dilation"],
                                       pad=g["pad"], group=group, activation=g["activation"], params=params,
                                       layout=g["layout"], batch=g["batch"], weight=weight, bias=bias, library=bundled)
    except SimdBindError:
        return
    except (OverflowError, ValueError) as error:  # a typed error is required: these would be a defect
        raise AssertionError(f"untyped error {error!r}") from error
    x = rand(rng, g["batch"], *shape)
    out = np.full(conv.out_shape, np.nan, np.float32)
    conv.forward(x, out=out)
    from simdbind.activation import resolve
    np.testing.assert_allclose(out, expected(conv, x, weight, bias, g["activation"],
                                             resolve(g["activation"], params, dst_c)[1]), rtol=1e-5, atol=1e-5)


def test_conformance_tolerance_rejects_a_window_shifted_by_one_column():
    """The K-scaled tolerance must still see the smallest geometry mistake (an off-by-one pad) on the largest
    reductions of the ci profile, Winograd factor included."""
    from simdbind.conformance.families.convolution.cases import ACTIVATIONS, _geometry, tolerance
    from simdbind.conformance.tolerance import compare

    rng = np.random.default_rng(5)
    for src_c in (8, 64):
        x, w, b = rand(rng, 1, src_c, 12, 12), rand(rng, 16, src_c, 3, 3), rand(rng, 16)
        common = dict(layout="nchw", stride=(1, 1), dilation=(1, 1), group=1, activation="identity")
        right = reference(x, w, b, None, pad=(1, 1, 1, 1), **common)
        shifted = reference(x, w, b, None, pad=(1, 2, 1, 0), **common)
        tol = tolerance(_geometry(src_c, 12, 12, 16, 3, pad=1), ACTIVATIONS, winograd=True)
        assert compare(right, right, tol).passed
        assert not compare(shifted, right, tol).passed


@pytest.mark.parametrize("calls, status", [(1, "pass"), (2, "fail"), (3, "fail")])
def test_every_forward_call_of_a_case_is_checked(monkeypatch, calls, status):
    # Upstream times two candidate kernels over a context's first calls, so a context's second Forward runs other
    # code than its first: a case of N calls checks each result. Here every call after the first is off by 1.
    from simdbind.conformance import deviations, runner
    from simdbind.conformance.implementations import implementations
    from simdbind.conformance.model import REGISTRY, case_from_descriptor

    forward = simdbind.Convolution32f.forward
    made: dict[int, int] = {}

    def later_calls_wrong(self, *args, **kwargs):
        made[id(self)] = made.get(id(self), 0) + 1
        out = forward(self, *args, **kwargs)
        if made[id(self)] > 1:
            out += 1.0
        return out

    monkeypatch.setattr(simdbind.Convolution32f, "forward", later_calls_wrong)
    (impl,) = implementations(["bundled"], "base")
    case = case_from_descriptor(f"convolution32f layout=nhwc src_c=8 src_h=9 src_w=10 dst_c=16 kernel=3x3 "
                                f"pad=1.1.1.1 calls={calls}")
    result = runner.run_case(impl, REGISTRY["convolution32f"], case, 1, deviations.Catalogue())
    assert result.status == status, result.detail
    if calls > 1:
        assert result.detail.startswith("output 1: ") and "output 0" not in result.detail
